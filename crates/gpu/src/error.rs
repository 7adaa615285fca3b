//! The crate's error type.

use std::fmt;

use thiserror::Error;

/// Everything in this crate that can fail because of the device, the driver,
/// the environment or the data (as opposed to a caller contract violation,
/// such as buffers of mismatched lengths, which panics).
///
/// Every wgpu error is turned into one of these: nothing in this crate lets
/// wgpu panic on an error it reports.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter matched the request (backends, adapter name).
    #[error("no GPU adapter matches {request}; adapters seen: {}", list_or_none(seen))]
    NoAdapter {
        /// What was asked for (backends and name filter).
        request: String,
        /// Every adapter the instance enumerated, as `"name (backend, type)"`.
        seen: Vec<String>,
    },
    /// An environment variable has a value this crate does not understand.
    #[error("environment variable {var}={value:?} is invalid: expected {expected}")]
    InvalidEnv {
        /// The variable (`SUBLA_GPU_BACKEND`).
        var: &'static str,
        /// Its value.
        value: String,
        /// What it may hold.
        expected: &'static str,
    },
    /// The adapter refused to create a device.
    #[error("requesting a device from adapter {adapter:?} failed: {message}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's message.
        message: String,
    },
    /// The device was lost (driver reset, device removed, context dropped).
    #[error("the GPU device was lost: {reason}")]
    DeviceLost {
        /// The reason given by the driver.
        reason: String,
    },
    /// wgpu reported a validation error during `operation`.
    #[error("wgpu validation error in {operation}: {message}")]
    Validation {
        /// What this crate was doing (for example `"scan"`).
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// The device ran out of memory during `operation`.
    #[error("the GPU ran out of memory in {operation}: {message}")]
    OutOfMemory {
        /// What this crate was doing.
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// wgpu reported an internal error (driver or implementation limits).
    #[error("wgpu internal error in {operation}: {message}")]
    Internal {
        /// What this crate was doing.
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// A WGSL shader (a kernel specialised with a user snippet) does not
    /// parse or validate; `message` is naga's diagnostic.
    #[error("invalid WGSL shader: {message}")]
    Shader {
        /// naga's (or wgpu's) message, with the offending line.
        message: String,
    },
    /// A buffer or a binding would exceed a device limit; nothing was
    /// allocated.
    #[error("{what} needs {bytes} bytes, over the device limit {limit} = {limit_value}")]
    TooLarge {
        /// What was being created (for example `"scan input binding"`).
        what: &'static str,
        /// The size asked for, in bytes (or workgroups / invocations for the
        /// dispatch limits).
        bytes: u64,
        /// The name of the limit (a field of `wgpu::Limits`, or
        /// `"u32 index"` for counts over `u32::MAX`).
        limit: &'static str,
        /// The limit's value in force.
        limit_value: u64,
    },
    /// An integer result does not fit in `u32` (a scan total, for example).
    #[error("{what} overflows u32")]
    Overflow {
        /// What overflowed.
        what: &'static str,
    },
    /// Reading a buffer back (mapping it) failed.
    #[error("mapping a buffer for readback failed: {message}")]
    Map {
        /// wgpu's message.
        message: String,
    },
    /// Waiting for the device failed.
    #[error("waiting for the GPU failed: {message}")]
    Poll {
        /// wgpu's message.
        message: String,
    },
    /// Malformed faces (the pointer array, a face's order or a vertex
    /// index), refused before anything was uploaded; the CPU
    /// `Topology::build` rejects them too, with a `MeshError`.
    #[error("{operation} cannot take these faces: {defect} (fix the face list: the CPU refuses such faces too)")]
    InvalidFaces {
        /// The operation (for example `"the GPU topology build"`).
        operation: &'static str,
        /// What is wrong, naming the face where there is one.
        defect: FaceDefect,
    },
    /// The faces describe a non-manifold mesh, found by the device build
    /// (as `Topology::is_manifold` defines it); nothing was returned. Build
    /// its topology on the CPU (`Topology::build`), whose edge rules cover
    /// such meshes.
    #[error(
        "{operation} takes manifold meshes only, and this one is not (found {defects}; \
         the lowest vertex involved is {lowest_vertex}): refine it on the CPU, whose rules cover such meshes"
    )]
    NotManifold {
        /// The operation (for example `"the GPU topology build"`).
        operation: &'static str,
        /// Every kind of non-manifold configuration found (never empty).
        defects: ManifoldDefects,
        /// The lowest vertex involved in any of them: the low end of an
        /// offending edge, a repeated vertex, or a bow-tie vertex.
        lowest_vertex: u32,
    },
    /// A vertex has more corners than the device build handles on this
    /// device: its driver ends the loops of one shader invocation after
    /// 65535 iterations in all (as software drivers such as llvmpipe do),
    /// and the build loops over a vertex's corners about three times in one
    /// invocation. Refused before anything is uploaded; nothing is wrong
    /// with the mesh.
    #[error(
        "{operation}: vertex {vertex} has {corners} corners, more than the {max} this device handles (its driver \
         ends a shader's loops after 65535 iterations, as software drivers do): build this mesh's topology on the CPU"
    )]
    ValenceOverDriverLimit {
        /// The operation (for example `"the GPU topology build"`).
        operation: &'static str,
        /// The first vertex over the limit.
        vertex: u32,
        /// Its number of corners (faces around it, counted with
        /// repetition).
        corners: u32,
        /// The most this device takes.
        max: u32,
    },
    /// An operation that takes manifold topologies only was handed one
    /// that is not ([`GpuTopology::is_manifold`](crate::topology::GpuTopology::is_manifold)
    /// is false); nothing ran. Refine such levels on the CPU.
    #[error("{operation} takes manifold meshes only, and this level is not manifold: refine such meshes on the CPU")]
    ManifoldRequired {
        /// The operation (for example `"the GPU quad split"`).
        operation: &'static str,
    },
    /// Data read back from the device is not a valid matrix (a bug in a
    /// kernel or a device fault).
    #[error("matrix read back from the GPU is invalid: {0}")]
    Algebra(#[from] subla_algebra::AlgebraError),
}

/// What is wrong with a face list given as a pointer array `face_ptr` and
/// the vertices of every face, `face_verts` (face `f` is
/// `face_verts[face_ptr[f]..face_ptr[f + 1]]`): the defect of
/// [`GpuError::InvalidFaces`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaceDefect {
    /// The pointer array itself is malformed.
    Pointers(FacePointerDefect),
    /// A face has fewer than 3 vertices.
    TooFewVertices {
        /// The face.
        face: usize,
        /// Its number of vertices.
        order: usize,
    },
    /// A face refers to a vertex that does not exist.
    VertexOutOfRange {
        /// The face (the first one with such a vertex).
        face: usize,
        /// The vertex index found in it.
        vertex: u32,
        /// The number of vertices.
        num_vertices: usize,
    },
}

impl FaceDefect {
    /// The face named, if the defect is in one face.
    pub fn face(&self) -> Option<usize> {
        match *self {
            FaceDefect::Pointers(FacePointerDefect::Decreases { face, .. })
            | FaceDefect::TooFewVertices { face, .. }
            | FaceDefect::VertexOutOfRange { face, .. } => Some(face),
            FaceDefect::Pointers(_) => None,
        }
    }
}

impl From<FacePointerDefect> for FaceDefect {
    fn from(defect: FacePointerDefect) -> Self {
        FaceDefect::Pointers(defect)
    }
}

impl fmt::Display for FaceDefect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaceDefect::Pointers(defect) => defect.fmt(f),
            FaceDefect::TooFewVertices { face, order } => write!(f, "face {face} has {order} vertices, fewer than 3"),
            FaceDefect::VertexOutOfRange { face, vertex, num_vertices } => {
                write!(f, "face {face} refers to vertex {vertex}, but there are only {num_vertices} vertices")
            }
        }
    }
}

/// What is wrong with a face pointer array `face_ptr` (offsets into the
/// face vertices, `face_verts`: one more than there are faces, from 0 to
/// the number of corners, nondecreasing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FacePointerDefect {
    /// The array is empty: it needs at least its first entry, 0.
    Empty {
        /// The number of corners (`face_verts.len()`).
        corners: usize,
    },
    /// The first entry is not 0.
    Start {
        /// The first entry.
        first: u32,
    },
    /// The last entry is not the number of corners.
    End {
        /// The last entry.
        last: u32,
        /// The number of corners (`face_verts.len()`).
        corners: usize,
    },
    /// The array decreases: face `face` would end before it starts.
    Decreases {
        /// The face (the first one).
        face: usize,
        /// `face_ptr[face]`.
        start: u32,
        /// `face_ptr[face + 1]`.
        end: u32,
    },
}

impl fmt::Display for FacePointerDefect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FacePointerDefect::Empty { corners } => write!(
                f,
                "the face pointer array is empty; it needs a first entry, 0, and one more per face ({corners} corners)"
            ),
            FacePointerDefect::Start { first } => write!(f, "the face pointer array starts at {first}, not 0"),
            FacePointerDefect::End { last, corners } => {
                write!(f, "the face pointer array ends at {last}, not at the number of corners ({corners})")
            }
            FacePointerDefect::Decreases { face, start, end } => {
                write!(f, "the face pointer array decreases at face {face} ({start} then {end})")
            }
        }
    }
}

/// One kind of non-manifold configuration, as `Topology::is_manifold`
/// counts them (the members of a [`ManifoldDefects`] set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ManifoldDefect {
    /// An edge from a vertex to itself (a corner followed by the same
    /// vertex).
    DegenerateEdge,
    /// An edge used by more than two faces.
    EdgeOfManyFaces,
    /// An edge used twice in the same direction (inconsistent orientation).
    InconsistentOrientation,
    /// An edge used twice by one face.
    EdgeTwiceInFace,
    /// A vertex repeated in a face.
    RepeatedVertex,
    /// A vertex whose faces form more than one fan (a bow tie).
    BowTieVertex,
}

impl ManifoldDefect {
    /// Every kind, in the order a [`ManifoldDefects`] set lists them.
    pub const ALL: [ManifoldDefect; 6] = [
        ManifoldDefect::DegenerateEdge,
        ManifoldDefect::EdgeOfManyFaces,
        ManifoldDefect::InconsistentOrientation,
        ManifoldDefect::EdgeTwiceInFace,
        ManifoldDefect::RepeatedVertex,
        ManifoldDefect::BowTieVertex,
    ];

    /// The kind's bit in a [`ManifoldDefects`] set.
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for ManifoldDefect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ManifoldDefect::DegenerateEdge => "a degenerate edge (a corner followed by the same vertex)",
            ManifoldDefect::EdgeOfManyFaces => "an edge used by more than two faces",
            ManifoldDefect::InconsistentOrientation => {
                "an edge used twice in the same direction (inconsistent orientation)"
            }
            ManifoldDefect::EdgeTwiceInFace => "an edge used twice by one face",
            ManifoldDefect::RepeatedVertex => "a vertex repeated in a face",
            ManifoldDefect::BowTieVertex => "a vertex whose faces form more than one fan",
        })
    }
}

/// A set of [`ManifoldDefect`]s: the kinds of non-manifold configuration a
/// mesh has. Iterates (and prints, comma-separated) in the order of
/// [`ManifoldDefect::ALL`].
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ManifoldDefects {
    bits: u8,
}

impl ManifoldDefects {
    /// The empty set.
    pub const fn new() -> Self {
        ManifoldDefects { bits: 0 }
    }
    /// Whether `kind` is in the set.
    pub const fn contains(self, kind: ManifoldDefect) -> bool {
        self.bits & kind.bit() != 0
    }
    /// Adds `kind`.
    pub fn insert(&mut self, kind: ManifoldDefect) {
        self.bits |= kind.bit();
    }
    /// The set with `kind` added.
    #[must_use]
    pub const fn with(self, kind: ManifoldDefect) -> Self {
        ManifoldDefects { bits: self.bits | kind.bit() }
    }
    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.bits == 0
    }
    /// The number of kinds in the set.
    pub const fn len(self) -> usize {
        self.bits.count_ones() as usize
    }
    /// The kinds in the set, in the order of [`ManifoldDefect::ALL`].
    pub fn iter(self) -> impl Iterator<Item = ManifoldDefect> {
        ManifoldDefect::ALL.into_iter().filter(move |&k| self.contains(k))
    }
}

impl From<ManifoldDefect> for ManifoldDefects {
    fn from(kind: ManifoldDefect) -> Self {
        ManifoldDefects::new().with(kind)
    }
}

impl FromIterator<ManifoldDefect> for ManifoldDefects {
    fn from_iter<I: IntoIterator<Item = ManifoldDefect>>(kinds: I) -> Self {
        kinds.into_iter().fold(ManifoldDefects::new(), ManifoldDefects::with)
    }
}

impl fmt::Debug for ManifoldDefects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl fmt::Display for ManifoldDefects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, kind) in self.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{kind}")?;
        }
        Ok(())
    }
}

/// The first few of `seen`, comma separated, then how many more (one
/// line, however many adapters a machine has).
fn list_or_none(seen: &[String]) -> String {
    const SHOWN: usize = 4;
    match seen.len() {
        0 => "none".to_owned(),
        n if n <= SHOWN => seen.join(", "),
        n => format!("{} … and {} more", seen[..SHOWN].join(", "), n - SHOWN),
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::{FaceDefect, FacePointerDefect, GpuError, ManifoldDefect, ManifoldDefects};

    #[test]
    fn manifold_defects_are_a_set_in_a_fixed_order() {
        let set: ManifoldDefects =
            [ManifoldDefect::BowTieVertex, ManifoldDefect::DegenerateEdge, ManifoldDefect::BowTieVertex]
                .into_iter()
                .collect();
        assert_eq!(set.len(), 2);
        assert!(set.contains(ManifoldDefect::DegenerateEdge) && set.contains(ManifoldDefect::BowTieVertex));
        assert!(!set.contains(ManifoldDefect::RepeatedVertex));
        assert_eq!(set.iter().collect::<Vec<_>>(), [ManifoldDefect::DegenerateEdge, ManifoldDefect::BowTieVertex]);
        assert_eq!(set, ManifoldDefects::from(ManifoldDefect::DegenerateEdge).with(ManifoldDefect::BowTieVertex));
        assert!(ManifoldDefects::new().is_empty());
        let all: ManifoldDefects = ManifoldDefect::ALL.into_iter().collect();
        assert_eq!(all.iter().collect::<Vec<_>>(), ManifoldDefect::ALL);
    }

    #[test]
    fn messages_name_the_element_and_the_way_out() {
        // One line each, naming no function of the library (a tool user
        // was pointed at `Topology::build`).
        let manifold = GpuError::ManifoldRequired { operation: "the GPU quad split" }.to_string();
        assert!(!manifold.contains("::") && !manifold.contains('\n'), "{manifold}");
        let e = GpuError::NotManifold {
            operation: "the GPU topology build",
            defects: ManifoldDefects::from(ManifoldDefect::EdgeOfManyFaces).with(ManifoldDefect::BowTieVertex),
            lowest_vertex: 7,
        };
        assert_eq!(
            e.to_string(),
            "the GPU topology build takes manifold meshes only, and this one is not (found an edge used by more \
             than two faces, a vertex whose faces form more than one fan; the lowest vertex involved is 7): refine \
             it on the CPU, whose rules cover such meshes"
        );
        let e = GpuError::InvalidFaces {
            operation: "the GPU topology build",
            defect: FaceDefect::VertexOutOfRange { face: 1, vertex: 4, num_vertices: 4 },
        };
        assert_eq!(
            e.to_string(),
            "the GPU topology build cannot take these faces: face 1 refers to vertex 4, but there are only 4 \
             vertices (fix the face list: the CPU refuses such faces too)"
        );
        let seen: Vec<String> = (0..10).map(|i| format!("adapter {i}")).collect();
        let e = GpuError::NoAdapter { request: "any adapter".into(), seen };
        assert!(e.to_string().ends_with("adapter 0, adapter 1, adapter 2, adapter 3 … and 6 more"), "{e}");
        let pointers = FaceDefect::from(FacePointerDefect::Decreases { face: 2, start: 8, end: 7 });
        assert_eq!(pointers.to_string(), "the face pointer array decreases at face 2 (8 then 7)");
        assert_eq!(pointers.face(), Some(2));
        assert_eq!(FaceDefect::from(FacePointerDefect::Start { first: 1 }).face(), None);
    }
}
