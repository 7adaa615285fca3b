//! The crate's error type: every variant names the offending element.

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

/// Where in an input file something was found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number in a text file (OBJ, ASCII PLY).
    pub line: Option<usize>,
    /// Byte offset in a binary file.
    pub offset: Option<u64>,
}

impl Location {
    /// At `line` (1-based).
    pub fn line(line: usize) -> Self {
        Location { line: Some(line), offset: None }
    }
    /// Nowhere in particular (the mesh was built in memory).
    pub fn none() -> Self {
        Location::default()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.offset) {
            (Some(l), _) => write!(f, "line {l}: "),
            (None, Some(o)) => write!(f, "byte {o}: "),
            (None, None) => Ok(()),
        }
    }
}

/// A bad mesh or a bad file. Each variant names what is wrong and where:
/// face index, edge as a vertex pair, vertex index, file line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MeshError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", shown(&path.display().to_string()))]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A number could not be parsed.
    #[error("{at}malformed {what} {text:?}")]
    MalformedNumber {
        /// Where.
        at: Location,
        /// What was expected (for example `"vertex coordinate"`).
        what: &'static str,
        /// The offending text (truncated).
        text: String,
    },
    /// A statement has the wrong shape.
    #[error("{at}malformed {statement} statement: {reason}")]
    MalformedStatement {
        /// Where.
        at: Location,
        /// The keyword (`"v"`, `"f"`, `"t crease"`, PLY header line, ...).
        statement: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Binary data, or bytes that are not text, where text was expected.
    #[error("{at}not a text mesh file: {reason}")]
    NotText {
        /// Where.
        at: Location,
        /// What was found.
        reason: String,
    },
    /// The file ends before the data its header announced.
    #[error("{at}truncated file: expected {expected}, found {found}")]
    Truncated {
        /// Where the data ran out.
        at: Location,
        /// What was announced.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A face refers to a vertex that does not exist.
    #[error("{at}face {face}: vertex index {index} out of range ({num_vertices} vertices{relative})", relative = if *index < 0 { ", relative index" } else { "" })]
    IndexOutOfRange {
        /// Where.
        at: Location,
        /// The face (0-based).
        face: usize,
        /// The index as written (1-based, or negative for relative OBJ
        /// indices; 0-based for in-memory meshes and PLY).
        index: i64,
        /// Number of vertices at that point.
        num_vertices: usize,
    },
    /// A face with fewer than three vertices.
    #[error("{at}face {face} has {order} vertices (at least 3 required)")]
    FaceTooSmall {
        /// Where.
        at: Location,
        /// The face.
        face: usize,
        /// Its number of vertices.
        order: usize,
    },
    /// A vertex appears more than once in a face (rejected by strict
    /// validation; OpenSubdiv accepts it as a degenerate, non-manifold edge).
    #[error("{at}face {face} uses vertex {vertex} more than once")]
    RepeatedVertex {
        /// Where.
        at: Location,
        /// The face.
        face: usize,
        /// The repeated vertex.
        vertex: u32,
    },
    /// An edge used by more than two faces (rejected by strict validation).
    #[error("edge ({v0}, {v1}) is non-manifold: used by {faces} faces ({first}, {second}, {third}, ...)")]
    NonManifoldEdge {
        /// First endpoint.
        v0: u32,
        /// Second endpoint.
        v1: u32,
        /// Number of faces using it.
        faces: usize,
        /// First face using it.
        first: u32,
        /// Second face using it.
        second: u32,
        /// Third face using it.
        third: u32,
    },
    /// Two faces traverse an edge in the same direction (inconsistent
    /// orientation; rejected by strict validation).
    #[error(
        "edge ({v0}, {v1}) is used in the same direction by faces {face_a} and {face_b} (inconsistent orientation)"
    )]
    InconsistentOrientation {
        /// Start of the directed edge.
        v0: u32,
        /// End of the directed edge.
        v1: u32,
        /// First face.
        face_a: u32,
        /// Second face.
        face_b: u32,
    },
    /// The faces around a vertex form more than one fan (a "bow-tie";
    /// rejected by strict validation).
    #[error("vertex {vertex} is non-manifold: its faces form {fans} separate fans")]
    NonManifoldVertex {
        /// The vertex.
        vertex: u32,
        /// Number of fans.
        fans: usize,
    },
    /// A coordinate is NaN or infinite (as written, or because the value
    /// written overflows `f64`).
    #[error("{at}vertex {vertex}: coordinate {channel} is {} (must be finite)", nonfinite(*value, written.as_deref()))]
    NonFiniteCoordinate {
        /// Where.
        at: Location,
        /// The vertex (0-based).
        vertex: usize,
        /// Which channel (0 = x).
        channel: usize,
        /// The value.
        value: f64,
        /// The text the file has there (truncated), when it came from a
        /// text file.
        written: Option<String>,
    },
    /// A sharpness is negative or NaN.
    #[error("{at}{target}: sharpness {value} is invalid (must be >= 0 and not NaN)")]
    InvalidSharpness {
        /// Where.
        at: Location,
        /// What carries it.
        target: SharpnessTarget,
        /// The value.
        value: f32,
    },
    /// A crease names two vertices that share no edge.
    #[error("{at}crease ({v0}, {v1}) is not an edge of the mesh")]
    CreaseNotAnEdge {
        /// Where.
        at: Location,
        /// First vertex.
        v0: u32,
        /// Second vertex.
        v1: u32,
    },
    /// A tag refers to an element that does not exist.
    #[error("{at}{tag} tag refers to {element} {index}, but the mesh has {count}")]
    TagOutOfRange {
        /// Where.
        at: Location,
        /// The tag name.
        tag: String,
        /// `"vertex"` or `"face"`.
        element: &'static str,
        /// The index.
        index: i64,
        /// Number of such elements.
        count: usize,
    },
    /// The data go on past the counts the header announces (a PLY element
    /// count, the counts comment of a subla OBJ file).
    #[error(
        "{at}the header announces {declared}, but the data hold {found}; correct the count or remove the extra data"
    )]
    MoreThanDeclared {
        /// The first data past the announced counts, or the header line.
        at: Location,
        /// What the header announces.
        declared: String,
        /// What is there.
        found: String,
    },
    /// Every face of the mesh is a hole: nothing to refine or draw.
    #[error("{}: all {faces} faces are holes (tag `t hole`); nothing is left to refine or draw", shown(what))]
    AllHoles {
        /// The input.
        what: String,
        /// Number of faces.
        faces: usize,
    },
    /// The mesh has no faces (or no vertices).
    #[error("{}: the mesh is empty ({reason})", shown(what))]
    Empty {
        /// The input.
        what: String,
        /// What is missing.
        reason: &'static str,
    },
    /// An operation that needs triangles met another face.
    #[error("face {face} has {order} vertices; a triangle split needs triangles only")]
    NotTriangle {
        /// The face.
        face: usize,
        /// Its number of vertices.
        order: usize,
    },
    /// A count does not fit in the `u32` indices used throughout.
    #[error("{what} = {value} does not fit in a u32 index")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// Its value.
        value: u128,
    },
    /// Per-vertex data has the wrong number of rows.
    #[error("{what} has {found} rows but the mesh has {expected} vertices")]
    DataLength {
        /// Which data.
        what: &'static str,
        /// Mesh vertex count.
        expected: usize,
        /// Rows given.
        found: usize,
    },
    /// A published test shape ([`crate::shapes`]) was asked for with a size
    /// it does not have (a bipyramid of two sides, a torus of two rings).
    #[error("{what} must be at least {min}, got {value}")]
    ShapeParameter {
        /// The parameter.
        what: &'static str,
        /// The value given.
        value: usize,
        /// The smallest it may be.
        min: usize,
    },
    /// An algebra error (size overflow of a derived matrix).
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
}

/// A non-finite value, with the file's text for it when there is one.
fn nonfinite(value: f64, written: Option<&str>) -> String {
    match written {
        // A number too large for `f64`: say what the file has.
        Some(t) if t.trim_start_matches(['+', '-']).chars().next().is_some_and(|c| c.is_ascii_digit() || c == '.') => {
            format!("{value}, written {t:?}: too large for a 64-bit float")
        }
        _ => format!("{value}"),
    }
}

/// At most 40 characters of `bytes` (text from a file), with `…` when
/// there is more, for messages.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    // 40 characters take at most 160 bytes: a long token is not converted
    // whole.
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(161)]);
    let mut out: String = s.chars().take(40).collect();
    if s.chars().nth(40).is_some() {
        out.push('…');
    }
    out
}

/// `text` with control characters escaped (file names in messages).
pub(crate) fn shown(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// The element a sharpness is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharpnessTarget {
    /// An edge, as its vertex pair.
    Edge(u32, u32),
    /// A vertex (corner sharpness).
    Vertex(u32),
}

impl fmt::Display for SharpnessTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharpnessTarget::Edge(a, b) => write!(f, "edge ({a}, {b})"),
            SharpnessTarget::Vertex(v) => write!(f, "vertex {v}"),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = MeshError> = std::result::Result<T, E>;

/// `value` as `u32`, the index type of every mesh array (the counting of
/// a split, [`crate::split`]).
///
/// # Errors
/// [`MeshError::TooLarge`] naming `what` if it does not fit.
pub fn to_u32(value: usize, what: &'static str) -> Result<u32> {
    u32::try_from(value).map_err(|_| MeshError::TooLarge { what, value: value as u128 })
}
