//! PLY (Stanford polygon file format) reader and writer.
//!
//! # Reading
//! [`read_ply`] and [`parse_ply`] accept the `ascii 1.0`,
//! `binary_little_endian 1.0` and `binary_big_endian 1.0` formats:
//!
//! * element `vertex` with any scalar properties (`char`, `uchar`, `short`,
//!   `ushort`, `int`, `uint`, `float`, `double` and the `int8` … `float64`
//!   aliases); `x`, `y` and `z` are required. Every scalar property becomes a
//!   channel of [`MeshData::vertices`] (named in [`MeshData::channels`]), in
//!   file order except that `x`, `y`, `z` come first. List properties of
//!   vertices are skipped;
//! * element `face` with a list property `vertex_indices` (or
//!   `vertex_index`) of an integer type, with any integer count type.
//!   Indices are 0-based. A face list property `texcoord` (or `texcoords`)
//!   of reals, two per corner (u, v), becomes the texture coordinates
//!   ([`MeshData::texcoords`]): the corners of a vertex with the same
//!   coordinates share a value, so seams run where they differ. Where a
//!   face has not two finite reals per corner, the property is skipped
//!   (and named with the face in [`MeshData::skipped`]). Other face
//!   properties are skipped;
//! * other elements (`edge`, `material`, …) are skipped; `comment` and
//!   `obj_info` lines are ignored.
//!
//! In ASCII files each element instance is one line (blank lines are
//! ignored). Errors name the file line (ASCII and header) or the byte offset
//! (binary data). The reader never allocates more than the input can hold,
//! whatever counts the header announces.
//!
//! Input is read as it is parsed ([`read_ply_from`] takes any reader: a
//! pipe or a FIFO works) and reading stops at the first bad byte or line: a
//! magic line that is not `ply`, a header line over 1 MiB, a control byte
//! or an endless token in an ASCII body, a value out of range in a binary
//! one. The body must match the header's counts: fewer instances is
//! [`MeshError::Truncated`]; a line more (ASCII) or anything but whitespace
//! after the data (binary) is [`MeshError::MoreThanDeclared`].
//!
//! # Writing
//! [`write_ply`] and [`write_ply_file`] write a `vertex` element with one
//! `double` property per channel, named from [`MeshData::channels`], and a
//! `face` element with `property list uchar uint vertex_indices` (`uint`
//! counts when a face has more than 255 vertices). ASCII floats use the
//! shortest representation that reads back to the same `f64`, so both
//! encodings round-trip exactly. Texture coordinates are written per
//! corner as `property list uchar double texcoord` (two entries per
//! corner). Tags (creases, corners, holes), options, normals (`vn`) and
//! groups have no PLY representation and are not written.

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use subla_algebra::Par;

use crate::data::{FaceVarying, FacesData, MeshData, Skipped, check_corner_values, default_channel_name};
use crate::error::{Location, MeshError, Result, excerpt};
use crate::mesh::{MeshBuilder, Validation};

/// Encoding of a written PLY file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum PlyEncoding {
    /// `format ascii 1.0`: human-readable, floats in shortest round-trip
    /// form.
    #[default]
    Ascii,
    /// `format binary_little_endian 1.0`: compact and fast.
    BinaryLittleEndian,
}

/// Reads a PLY file (see the [module docs](self) for what is supported).
///
/// # Errors
/// [`MeshError::Io`] if the file cannot be read, otherwise as
/// [`parse_ply`] (empty-mesh errors name the file).
pub fn read_ply(path: impl AsRef<Path>, validation: Validation) -> Result<MeshData> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| MeshError::Io { path: path.to_path_buf(), source })?;
    read_ply_from(file, validation, path)
}

/// Reads PLY data from `reader` (a file, a pipe, a FIFO) as it comes:
/// reading stops at the first byte or line that is wrong, and at the end of
/// the announced data (after which only whitespace may follow). `path`
/// names the input in errors.
///
/// # Errors
/// [`MeshError::Io`] naming `path`, otherwise as [`parse_ply`].
pub fn read_ply_from(reader: impl Read, validation: Validation, path: impl AsRef<Path>) -> Result<MeshData> {
    let path = path.as_ref();
    parse_named(Source::new(reader, path), validation, &path.display().to_string())
}

/// Parses PLY data held in memory (see the [module docs](self)).
///
/// # Errors
/// * [`MeshError::NotText`] or [`MeshError::MalformedStatement`] when the
///   input does not start with the `ply` magic line;
/// * [`MeshError::MalformedStatement`] (statement `"ply header"`) for a
///   malformed header line, an unsupported format or type, or a missing
///   `x`/`y`/`z` or `vertex_indices` property; statement `"vertex"`,
///   `"face"`, … for an ASCII data line with missing or extra values or a
///   negative list count;
/// * [`MeshError::MalformedNumber`] for a malformed ASCII number;
/// * [`MeshError::Truncated`] when the data ends before the announced
///   elements; [`MeshError::MoreThanDeclared`] when an ASCII body has a
///   line more, or a binary body anything but whitespace after them;
/// * [`MeshError::IndexOutOfRange`] (0-based index as written, negative
///   included), [`MeshError::FaceTooSmall`],
///   [`MeshError::NonFiniteCoordinate`] (any channel);
/// * [`MeshError::TooLarge`] for counts over `u32`;
/// * [`MeshError::Empty`] without a `vertex` element or without faces;
/// * whatever [`MeshBuilder::build`] rejects under `validation`.
pub fn parse_ply(bytes: &[u8], validation: Validation) -> Result<MeshData> {
    parse_named(Source::new(bytes, Path::new("PLY data")), validation, "PLY data")
}

/// Writes `data` as PLY to `w` (buffered internally; see the
/// [module docs](self) for the layout).
///
/// Channel names are taken from `data.channels` when it names every channel
/// (whitespace in a name is replaced by `_`); otherwise `x`, `y`, `z`, `w`,
/// `c4`, … are used.
///
/// # Errors
/// Errors of `w`, and [`io::ErrorKind::InvalidInput`] when `data.vertices`
/// does not have one row per vertex of the mesh, or the texture
/// coordinates not one index (in range) per face corner.
pub fn write_ply(data: &MeshData, w: impl Write, encoding: PlyEncoding) -> io::Result<()> {
    let topo = data.mesh.topology();
    let nv = data.vertices.nrows();
    if nv != topo.num_vertices() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("vertex data has {nv} rows but the mesh has {} vertices", topo.num_vertices()),
        ));
    }
    let faces = (0..topo.num_faces()).map(|f| topo.face(f));
    let uv = match &data.texcoords {
        // One channel is no texture coordinate a PLY reader knows: left out
        // (`MeshData::dropped_by` names it).
        Some(fv) if fv.values.ncols() < 2 => None,
        Some(fv) => {
            check_corner_values(fv, topo.num_corners())?;
            Some(fv)
        }
        None => None,
    };
    write_body(&data.vertices, &data.channels, topo.num_faces(), faces, uv, w, encoding)
}

/// Writes faces and vertex data without a mesh's connectivity as PLY: the
/// bytes [`write_ply`] writes for a mesh of these faces (and texture
/// coordinates).
///
/// # Errors
/// Errors of `w`, and [`io::ErrorKind::InvalidInput`] when a face names a
/// vertex past `data.vertices`, or the texture coordinates have not one
/// index (in range) per face corner.
pub fn write_ply_faces(data: &FacesData<'_>, w: impl Write, encoding: PlyEncoding) -> io::Result<()> {
    let nv = data.vertices.nrows();
    if let Some(&v) = data.face_verts.iter().find(|&&v| v as usize >= nv) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a face names vertex {v} but the vertex data has {nv} rows"),
        ));
    }
    // One channel is no texture coordinate a PLY reader knows: left out
    // (`FacesData::dropped_by` names it), as `write_ply` does.
    let uv = data.checked_texcoords()?.filter(|fv| fv.values.ncols() >= 2);
    let faces = (0..data.num_faces()).map(|f| data.face(f));
    write_body(data.vertices, data.channels, data.num_faces(), faces, uv, w, encoding)
}

/// The header and body of a PLY file of `vertices` and `faces`.
fn write_body<'f>(
    vertices: &Array2<f64>,
    channels: &[String],
    nf: usize,
    faces: impl Iterator<Item = &'f [u32]> + Clone,
    uv: Option<&FaceVarying>,
    w: impl Write,
    encoding: PlyEncoding,
) -> io::Result<()> {
    // With texture coordinates a face's second list has two entries per
    // corner: its count must fit too.
    let per_corner = if uv.is_some() { 2 } else { 1 };
    let big_faces = faces.clone().any(|face| per_corner * face.len() > usize::from(u8::MAX));
    let mut w = BufWriter::with_capacity(1 << 16, w);
    write_header(&mut w, vertices, channels, nf, encoding, big_faces, uv.is_some())?;
    match encoding {
        PlyEncoding::Ascii => write_ascii_body(&mut w, vertices, faces, uv)?,
        PlyEncoding::BinaryLittleEndian => write_binary_body(&mut w, vertices, faces, big_faces, uv)?,
    }
    w.flush()
}

/// The header: one `double` property per channel, and the face list with
/// `uint` counts when a face has more than 255 corners.
fn write_header(
    w: &mut impl Write,
    vertices: &Array2<f64>,
    channels: &[String],
    nf: usize,
    encoding: PlyEncoding,
    big_faces: bool,
    texcoords: bool,
) -> io::Result<()> {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
    };
    let nv = vertices.nrows();
    writeln!(w, "ply\nformat {format} 1.0\ncomment generated by subla\nelement vertex {nv}")?;
    let nch = vertices.ncols();
    for k in 0..nch {
        writeln!(w, "property double {}", written_channel_name(channels, nch, k))?;
    }
    let count_type = if big_faces { "uint" } else { "uchar" };
    writeln!(w, "element face {nf}\nproperty list {count_type} uint vertex_indices")?;
    if texcoords {
        writeln!(w, "property list {count_type} double texcoord")?;
    }
    writeln!(w, "end_header")
}

fn write_ascii_body<'f>(
    w: &mut impl Write,
    vertices: &Array2<f64>,
    faces: impl Iterator<Item = &'f [u32]>,
    uv: Option<&FaceVarying>,
) -> io::Result<()> {
    let mut buf = ryu::Buffer::new();
    for row in vertices.rows() {
        for (k, &x) in row.iter().enumerate() {
            if k > 0 {
                w.write_all(b" ")?;
            }
            w.write_all(format_f64(&mut buf, x).as_bytes())?;
        }
        w.write_all(b"\n")?;
    }
    let mut corner = 0;
    for face in faces {
        write!(w, "{}", face.len())?;
        for &v in face {
            write!(w, " {v}")?;
        }
        if let Some(fv) = uv {
            write!(w, " {}", 2 * face.len())?;
            for c in corner..corner + face.len() {
                let r = fv.indices[c] as usize;
                for k in 0..2 {
                    w.write_all(b" ")?;
                    w.write_all(format_f64(&mut buf, fv.values[(r, k)]).as_bytes())?;
                }
            }
        }
        corner += face.len();
        w.write_all(b"\n")?;
    }
    Ok(())
}

fn write_binary_body<'f>(
    w: &mut impl Write,
    vertices: &Array2<f64>,
    faces: impl Iterator<Item = &'f [u32]>,
    big_faces: bool,
    uv: Option<&FaceVarying>,
) -> io::Result<()> {
    for row in vertices.rows() {
        for &x in row {
            w.write_all(&x.to_le_bytes())?;
        }
    }
    let count = |w: &mut dyn Write, n: usize| {
        if big_faces { w.write_all(&(n as u32).to_le_bytes()) } else { w.write_all(&[n as u8]) }
    };
    let mut corner = 0;
    for face in faces {
        count(w, face.len())?;
        for &v in face {
            w.write_all(&v.to_le_bytes())?;
        }
        if let Some(fv) = uv {
            count(w, 2 * face.len())?;
            for c in corner..corner + face.len() {
                let r = fv.indices[c] as usize;
                w.write_all(&fv.values[(r, 0)].to_le_bytes())?;
                w.write_all(&fv.values[(r, 1)].to_le_bytes())?;
            }
        }
        corner += face.len();
    }
    Ok(())
}

/// Writes `data` as a PLY file at `path` (see [`write_ply`]).
///
/// # Errors
/// [`MeshError::Io`] naming the file.
pub fn write_ply_file(data: &MeshData, path: impl AsRef<Path>, encoding: PlyEncoding) -> Result<()> {
    let path = path.as_ref();
    let io_err = |source| MeshError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::create(path).map_err(io_err)?;
    write_ply(data, file, encoding).map_err(io_err)
}

/// Shortest round-trip text of `x`; non-finite values as `nan`, `inf`,
/// `-inf` (which the reader rejects, as it should).
fn format_f64(buf: &mut ryu::Buffer, x: f64) -> &str {
    if x.is_finite() {
        buf.format_finite(x)
    } else if x.is_nan() {
        "nan"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// The written name of channel `k`: from `channels` if it names all `nch`
/// channels, with whitespace and control characters replaced.
pub(crate) fn written_channel_name(channels: &[String], nch: usize, k: usize) -> String {
    match channels.get(k) {
        Some(name) if channels.len() == nch && !name.is_empty() => {
            name.chars().map(|c| if c.is_whitespace() || c.is_control() { '_' } else { c }).collect()
        }
        _ => default_channel_name(k),
    }
}

// ---------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------

/// A scalar type of the PLY format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "char" | "int8" => Scalar::I8,
            "uchar" | "uint8" => Scalar::U8,
            "short" | "int16" => Scalar::I16,
            "ushort" | "uint16" => Scalar::U16,
            "int" | "int32" => Scalar::I32,
            "uint" | "uint32" => Scalar::U32,
            "float" | "float32" => Scalar::F32,
            "double" | "float64" => Scalar::F64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    fn is_int(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PropKind {
    Scalar(Scalar),
    List { count: Scalar, item: Scalar },
}

#[derive(Clone, Debug)]
struct PropDef {
    name: String,
    kind: PropKind,
}

#[derive(Clone, Debug)]
struct ElementDef {
    name: String,
    count: u64,
    /// Header line of the `element` statement.
    line: usize,
    props: Vec<PropDef>,
}

impl ElementDef {
    /// Fewest bytes one instance takes in binary (at least 1 when the
    /// element has properties).
    fn min_binary_size(&self) -> usize {
        self.props
            .iter()
            .map(|p| match p.kind {
                PropKind::Scalar(s) => s.size(),
                PropKind::List { count, .. } => count.size(),
            })
            .sum()
    }

    fn has_lists(&self) -> bool {
        self.props.iter().any(|p| matches!(p.kind, PropKind::List { .. }))
    }

    /// "12 vertices", "1 face", "3 `edge` elements".
    fn amount(&self, n: u64) -> String {
        match (self.name.as_str(), n) {
            ("vertex", 1) => "1 vertex".into(),
            ("vertex", _) => format!("{n} vertices"),
            ("face", 1) => "1 face".into(),
            ("face", _) => format!("{n} faces"),
            (name, 1) => format!("1 `{name}` element"),
            (name, _) => format!("{n} `{name}` elements"),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Format {
    Ascii,
    Binary { big_endian: bool },
}

#[derive(Debug)]
struct Header {
    format: Format,
    elements: Vec<ElementDef>,
    /// Number of header lines (the body starts on the next line).
    lines: usize,
}

fn header_error(line: usize, reason: impl Into<String>) -> MeshError {
    MeshError::MalformedStatement { at: Location::line(line), statement: "ply header".into(), reason: reason.into() }
}

/// True for bytes that do not occur in text (NUL and control characters
/// other than whitespace).
fn is_binary_byte(b: u8) -> bool {
    b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)
}

/// Checks the `ply` magic line (`first`, without its line end; `empty`:
/// the input is empty).
fn check_magic(first: &[u8], empty: bool) -> Result<()> {
    if first.trim_ascii_end() == b"ply" {
        return Ok(());
    }
    let head = &first[..first.len().min(64)];
    if head.iter().any(|&b| is_binary_byte(b)) || std::str::from_utf8(head).is_err() {
        return Err(MeshError::NotText {
            at: Location::line(1),
            reason: format!("missing `ply` magic line, found binary data {:?}", excerpt(head)),
        });
    }
    let reason = if empty {
        "empty input, expected the `ply` magic line".to_string()
    } else {
        format!("missing `ply` magic line, found {:?}", excerpt(first))
    };
    Err(header_error(1, reason))
}

/// The text of header line `line_no`, or `None` for a comment.
fn header_text(raw: &[u8], line_no: usize) -> Result<Option<&str>> {
    // Comments may be in any encoding.
    if raw.starts_with(b"comment") || raw.starts_with(b"obj_info") {
        let kw_len = if raw.starts_with(b"comment") { 7 } else { 8 };
        if raw.get(kw_len).is_none_or(u8::is_ascii_whitespace) {
            return Ok(None);
        }
    }
    match std::str::from_utf8(raw) {
        Ok(t) if !t.bytes().any(is_binary_byte) => Ok(Some(t)),
        _ => Err(MeshError::NotText {
            at: Location::line(line_no),
            reason: format!("header line is not text: {:?}", excerpt(raw)),
        }),
    }
}

/// `format <kind> <version>`.
fn parse_format(kind: &str, version: &str, line_no: usize) -> Result<Format> {
    if version != "1.0" && version != "1" {
        return Err(header_error(line_no, format!("unsupported version {:?} (only 1.0)", excerpt(version.as_bytes()))));
    }
    Ok(match kind {
        "ascii" => Format::Ascii,
        "binary_little_endian" => Format::Binary { big_endian: false },
        "binary_big_endian" => Format::Binary { big_endian: true },
        _ => return Err(header_error(line_no, format!("unsupported format {:?}", excerpt(kind.as_bytes())))),
    })
}

/// `element <name> <count>` (a name longer than 100 characters is
/// shortened: it only appears in messages).
fn parse_element(name: &str, count: &str, line_no: usize) -> Result<ElementDef> {
    let count = count.parse::<u64>().map_err(|_| {
        header_error(line_no, format!("element count {:?} is not a non-negative integer", excerpt(count.as_bytes())))
    })?;
    let name = if name.chars().nth(100).is_some() {
        format!("{}…", name.chars().take(100).collect::<String>())
    } else {
        name.into()
    };
    Ok(ElementDef { name, count, line: line_no, props: Vec::new() })
}

/// `property <type> <name>` or `property list <count type> <type> <name>`
/// (`rest` is what follows `property`).
fn parse_property(rest: &[&str], line_no: usize) -> Result<PropDef> {
    let scalar = |t: &str| {
        Scalar::parse(t)
            .ok_or_else(|| header_error(line_no, format!("unsupported property type {:?}", excerpt(t.as_bytes()))))
    };
    let (kind, name) = match rest {
        ["list", count, item, name] => {
            let count = scalar(count)?;
            if !count.is_int() {
                return Err(header_error(line_no, "list count type must be an integer type"));
            }
            (PropKind::List { count, item: scalar(item)? }, name)
        }
        [ty, name] if *ty != "list" => (PropKind::Scalar(scalar(ty)?), name),
        _ => {
            return Err(header_error(
                line_no,
                "expected `property <type> <name>` or `property list <count type> <type> <name>`",
            ));
        }
    };
    Ok(PropDef { name: (*name).into(), kind })
}

/// Longest header line read (a comment included).
const MAX_HEADER_LINE: usize = 1 << 20;

fn parse_header<R: Read>(src: &mut Source<R>) -> Result<Header> {
    // The magic line: a few bytes are enough to tell.
    let first = match src.line(64)? {
        Line::Text(r) | Line::TooLong(r) => src.buf[r].to_vec(),
        Line::End => Vec::new(),
    };
    check_magic(&first, src.offset() == 0 && first.is_empty())?;
    let mut line_no = 1;
    let mut format = None;
    let mut elements: Vec<ElementDef> = Vec::new();
    let mut names = std::collections::HashSet::new();
    loop {
        line_no += 1;
        let raw = match src.line(MAX_HEADER_LINE)? {
            Line::Text(r) => &src.buf[r],
            Line::End => {
                return Err(MeshError::Truncated {
                    at: Location::line(line_no),
                    expected: "`end_header`".into(),
                    found: "end of input".into(),
                });
            }
            Line::TooLong(r) => {
                return Err(MeshError::NotText {
                    at: Location::line(line_no),
                    reason: format!("header line longer than {MAX_HEADER_LINE} bytes: {:?}", excerpt(&src.buf[r])),
                });
            }
        };
        let Some(text) = header_text(raw, line_no)? else { continue };
        let toks: Vec<&str> = text.split_ascii_whitespace().collect();
        match toks.as_slice() {
            [] => {}
            ["end_header"] => break,
            ["format", kind, version] => {
                if format.is_some() {
                    return Err(header_error(line_no, "second `format` line"));
                }
                format = Some(parse_format(kind, version, line_no)?);
            }
            ["format", ..] => return Err(header_error(line_no, "expected `format <encoding> 1.0`")),
            ["element", name, count] => {
                let el = parse_element(name, count, line_no)?;
                if !names.insert(el.name.clone()) {
                    return Err(header_error(line_no, format!("second element `{}`", el.name)));
                }
                elements.push(el);
            }
            ["element", ..] => return Err(header_error(line_no, "expected `element <name> <count>`")),
            ["property", rest @ ..] => {
                let Some(element) = elements.last_mut() else {
                    return Err(header_error(line_no, "`property` before any `element`"));
                };
                element.props.push(parse_property(rest, line_no)?);
            }
            [kw, ..] => return Err(header_error(line_no, format!("unknown keyword {:?}", excerpt(kw.as_bytes())))),
        }
    }
    let Some(format) = format else {
        return Err(header_error(line_no, "no `format` line before `end_header`"));
    };
    Ok(Header { format, elements, lines: line_no })
}

/// What the body reader needs to know about the vertex and face elements.
struct Layout {
    vertex: usize,
    nv: usize,
    /// Output column of each vertex property (`None` for lists).
    columns: Vec<Option<usize>>,
    channels: Vec<String>,
    /// Face element and the index of its `vertex_indices` property.
    face: Option<(usize, usize)>,
    /// The face element's per-corner texture coordinates (`texcoord`: two
    /// reals per corner), if it has them.
    texcoord: Option<usize>,
}

fn layout(header: &Header, name: &str) -> Result<Layout> {
    let els = &header.elements;
    let Some(vertex) = els.iter().position(|e| e.name == "vertex") else {
        return Err(MeshError::Empty { what: name.into(), reason: "no vertex element" });
    };
    let vel = &els[vertex];
    let nv = u32::try_from(vel.count)
        .map_err(|_| MeshError::TooLarge { what: "number of vertices", value: u128::from(vel.count) })?
        as usize;
    let (columns, channels) = vertex_columns(vel)?;
    let face = match els.iter().position(|e| e.name == "face") {
        None => None,
        Some(fi) => Some((fi, face_indices_property(&els[fi])?)),
    };
    let texcoord = face.and_then(|(fi, _)| {
        els[fi].props.iter().position(|p| {
            TEXCOORD_NAMES.contains(&p.name.as_str()) && matches!(p.kind, PropKind::List { item, .. } if !item.is_int())
        })
    });
    Ok(Layout { vertex, nv, columns, channels, face, texcoord })
}

/// The output column of each property of the vertex element `vel` and the
/// channel names: `x`, `y`, `z` first, then the other scalars in file order.
fn vertex_columns(vel: &ElementDef) -> Result<(Vec<Option<usize>>, Vec<String>)> {
    let scalar_pos = |n: &str| vel.props.iter().position(|p| p.name == n && matches!(p.kind, PropKind::Scalar(_)));
    let mut xyz = [0usize; 3];
    for (k, n) in ["x", "y", "z"].into_iter().enumerate() {
        xyz[k] = scalar_pos(n).ok_or_else(|| {
            header_error(vel.line, format!("the vertex element has no scalar property `{n}` (x, y and z are required)"))
        })?;
    }
    let mut columns = vec![None; vel.props.len()];
    let mut channels = Vec::with_capacity(vel.props.len());
    for (k, &p) in xyz.iter().enumerate() {
        columns[p] = Some(k);
        channels.push(vel.props[p].name.clone());
    }
    for (p, prop) in vel.props.iter().enumerate() {
        if columns[p].is_none() && matches!(prop.kind, PropKind::Scalar(_)) {
            columns[p] = Some(channels.len());
            channels.push(prop.name.clone());
        }
    }
    Ok((columns, channels))
}

/// Names of a face list property holding two reals per corner (u, v).
const TEXCOORD_NAMES: [&str; 2] = ["texcoord", "texcoords"];

/// The `vertex_indices` property of the face element `fel`, checked.
fn face_indices_property(fel: &ElementDef) -> Result<usize> {
    if fel.count > u64::from(u32::MAX) {
        return Err(MeshError::TooLarge { what: "number of faces", value: u128::from(fel.count) });
    }
    let Some(p) = fel.props.iter().position(|p| p.name == "vertex_indices" || p.name == "vertex_index") else {
        return Err(header_error(fel.line, "the face element has no `vertex_indices` property"));
    };
    match fel.props[p].kind {
        PropKind::List { item, .. } if item.is_int() => Ok(p),
        PropKind::List { .. } => Err(header_error(fel.line, "face vertex indices must have an integer type")),
        PropKind::Scalar(_) => Err(header_error(fel.line, "face vertex indices must be a list property")),
    }
}

/// The decoded body: vertex values (row-major) and faces.
struct Body {
    values: Vec<f64>,
    face_ptr: Vec<u32>,
    face_verts: Vec<u32>,
    /// Two reals per face corner, when the faces have `texcoord`.
    corner_uv: Vec<f64>,
    /// Why the `texcoord` lists are not a channel (the first face that
    /// has not two finite reals per corner), if they are not.
    uv_problem: Option<String>,
}

fn parse_named<R: Read>(mut src: Source<R>, validation: Validation, name: &str) -> Result<MeshData> {
    let header = parse_header(&mut src)?;
    let layout = layout(&header, name)?;
    let body = match header.format {
        Format::Ascii => read_ascii(&mut src, &header, &layout)?,
        Format::Binary { big_endian } => read_binary(&mut src, &header, &layout, big_endian)?,
    };
    let texcoords = match (layout.texcoord, &body.uv_problem) {
        (Some(_), None) => Some(welded_texcoords(&body.face_verts, &body.corner_uv)),
        _ => None,
    };
    let nch = layout.channels.len();
    let vertices =
        Array2::from_shape_vec((layout.nv, nch), body.values).map_err(|e| MeshError::MalformedStatement {
            at: Location::none(),
            statement: "vertex".into(),
            reason: format!("internal error: {e}"),
        })?;
    let mesh = MeshBuilder::new(layout.nv, body.face_ptr, body.face_verts)
        .validation(validation)
        .name(name)
        .build(Par::Rayon)?;
    let skipped = skipped(&header, &layout, body.uv_problem.as_deref());
    Ok(MeshData {
        mesh,
        vertices,
        channels: layout.channels,
        texcoords,
        normals: None,
        groups: Vec::new(),
        left_handed: false,
        skipped,
    })
}

/// The corners' texture coordinates (two per corner) as a channel: corners
/// of one vertex with the same coordinates (bit for bit) share a value, so
/// that seams are where the coordinates differ, as in an OBJ's `vt`.
fn welded_texcoords(face_verts: &[u32], corner_uv: &[f64]) -> FaceVarying {
    let mut index: HashMap<(u32, u64, u64), u32> = HashMap::new();
    let mut values: Vec<f64> = Vec::new();
    let mut indices = Vec::with_capacity(face_verts.len());
    for (c, &v) in face_verts.iter().enumerate() {
        let (u, w) = (corner_uv[2 * c], corner_uv[2 * c + 1]);
        let next = (values.len() / 2) as u32;
        let i = *index.entry((v, u.to_bits(), w.to_bits())).or_insert_with(|| {
            values.extend([u, w]);
            next
        });
        indices.push(i);
    }
    let n = values.len() / 2;
    let Ok(values) = Array2::from_shape_vec((n, 2), values) else { unreachable!("two values a row") };
    FaceVarying { values, indices }
}

/// What the header declares and the reader does not keep: elements other
/// than `vertex` and `face`, vertex list properties, face properties other
/// than the indices.
fn skipped(header: &Header, layout: &Layout, uv_problem: Option<&str>) -> Vec<Skipped> {
    let mut out = Vec::new();
    for (i, el) in header.elements.iter().enumerate() {
        let skip = |what: String| Skipped { what, count: el.count, line: el.line };
        if i == layout.vertex {
            for p in el.props.iter().filter(|p| matches!(p.kind, PropKind::List { .. })) {
                out.push(skip(format!("PLY vertex list property `{}`", excerpt(p.name.as_bytes()))));
            }
        } else if let Some((_, ip)) = layout.face.filter(|&(fi, _)| fi == i) {
            let kept = |k: usize| k == ip || (Some(k) == layout.texcoord && uv_problem.is_none());
            for (k, p) in el.props.iter().enumerate().filter(|&(k, _)| !kept(k)) {
                let why = match uv_problem {
                    Some(why) if Some(k) == layout.texcoord => format!(" (not texture coordinates: {why})"),
                    _ => String::new(),
                };
                out.push(skip(format!("PLY face property `{}`{why}", excerpt(p.name.as_bytes()))));
            }
        } else if el.count > 0 {
            out.push(skip(format!("PLY element `{}`", excerpt(el.name.as_bytes()))));
        }
    }
    out
}

/// Initial capacity for `count` items: what the header announces, up to
/// a bound (the vectors grow with the data actually read, so a lying
/// header costs nothing).
fn capped(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX).min(1 << 16)
}

fn finite(
    value: f64,
    at: impl FnOnce() -> Location,
    vertex: usize,
    channel: usize,
    text: Option<&[u8]>,
) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MeshError::NonFiniteCoordinate { at: at(), vertex, channel, value, written: text.map(excerpt) })
    }
}

fn check_index(index: i64, nv: usize, face: usize, at: impl FnOnce() -> Location) -> Result<u32> {
    if index < 0 || index as u64 >= nv as u64 {
        return Err(MeshError::IndexOutOfRange { at: at(), face, index, num_vertices: nv });
    }
    Ok(index as u32)
}

fn push_face_end(face_ptr: &mut Vec<u32>, corners: usize) -> Result<()> {
    let end = u32::try_from(corners)
        .map_err(|_| MeshError::TooLarge { what: "number of corners", value: corners as u128 })?;
    face_ptr.push(end);
    Ok(())
}

// ---------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------

/// Bytes asked of the reader at a time.
const READ: usize = 1 << 16;

/// The input, read as the parser needs it (a buffer ahead at most).
struct Source<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes dropped from the front of `buf` so far.
    dropped: u64,
    eof: bool,
    path: PathBuf,
    /// The last line read ended with a line end.
    newline: bool,
}

/// A line of the input, as a range of [`Source::buf`].
enum Line {
    /// Without its `\n` (or `\r\n`).
    Text(Range<usize>),
    /// Longer than allowed: its first bytes.
    TooLong(Range<usize>),
    /// The input ended.
    End,
}

impl<R: Read> Source<R> {
    fn new(r: R, path: &Path) -> Self {
        Source { r, buf: Vec::new(), pos: 0, dropped: 0, eof: false, path: path.to_path_buf(), newline: false }
    }

    /// Offset of the next byte.
    fn offset(&self) -> u64 {
        self.dropped + self.pos as u64
    }

    /// Offset of the end of what was read (the end of the input once it
    /// ended).
    fn end_offset(&self) -> u64 {
        self.dropped + self.buf.len() as u64
    }

    /// Reads more; false at the end of the input.
    fn more(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        // Drop what was consumed once it is most of the buffer (a long
        // partial line is not copied again and again).
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.dropped += self.pos as u64;
            self.pos = 0;
        }
        let start = self.buf.len();
        self.buf.resize(start + READ, 0);
        let n = loop {
            match self.r.read(&mut self.buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.buf.truncate(start);
                    return Err(MeshError::Io { path: self.path.clone(), source });
                }
            }
        };
        self.buf.truncate(start + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// True once `n` bytes are available; false if the input ends first.
    fn ensure(&mut self, n: usize) -> Result<bool> {
        while self.buf.len() - self.pos < n {
            if !self.more()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The next line, at most `max` bytes (valid until the next read).
    fn line(&mut self, max: usize) -> Result<Line> {
        let mut scanned = 0;
        let text = |buf: &[u8], start: usize, end: usize| {
            let end = if end > start && buf[end - 1] == b'\r' { end - 1 } else { end };
            Line::Text(start..end)
        };
        loop {
            let avail = &self.buf[self.pos + scanned..];
            if let Some(i) = memchr::memchr(b'\n', avail) {
                let start = self.pos;
                let end = start + scanned + i;
                self.pos = end + 1;
                self.newline = true;
                return Ok(text(&self.buf, start, end));
            }
            scanned += avail.len();
            // No number or keyword is that long: a piece without a space is
            // not text of this format (an endless stream, say).
            if scanned > READ && avail.len() >= READ / 2 && !avail.iter().any(u8::is_ascii_whitespace) {
                return Ok(Line::TooLong(self.pos..self.pos + 64));
            }
            if scanned > max {
                return Ok(Line::TooLong(self.pos..self.pos + max.min(64)));
            }
            if !self.more()? {
                let start = self.pos;
                if start == self.buf.len() {
                    return Ok(Line::End);
                }
                self.pos = self.buf.len();
                self.newline = false;
                return Ok(text(&self.buf, start, self.pos));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// ASCII body
// ---------------------------------------------------------------------------

struct AsciiLines<'s, R> {
    src: &'s mut Source<R>,
    /// Number of the last line read.
    line: usize,
}

impl<R: Read> AsciiLines<'_, R> {
    /// The next non-blank line and its number; an error at a byte that is
    /// not text (binary data where text should be: reading stops there).
    fn next_line(&mut self) -> Result<Option<(usize, &[u8])>> {
        let range = loop {
            // A body line can be long (a face of millions of vertices), so
            // no length limit; a byte that is not text stops it.
            let r = match self.src.line(usize::MAX)? {
                Line::Text(r) => r,
                Line::End => return Ok(None),
                Line::TooLong(r) => {
                    return Err(MeshError::NotText {
                        at: Location::line(self.line + 1),
                        reason: format!(
                            "more than {} bytes without a space or line end ({:?}…)",
                            READ / 2,
                            excerpt(&self.src.buf[r])
                        ),
                    });
                }
            };
            self.line += 1;
            let l = &self.src.buf[r.clone()];
            if let Some(&b) = l.iter().find(|&&b| is_binary_byte(b)) {
                return Err(MeshError::NotText {
                    at: Location::line(self.line),
                    reason: format!("byte 0x{b:02x} in an ASCII PLY body (binary data?)"),
                });
            }
            if l.iter().any(|b| !b.is_ascii_whitespace()) {
                break r;
            }
        };
        Ok(Some((self.line, &self.src.buf[range])))
    }

    /// The line where the input ends.
    fn eof_line(&self) -> usize {
        if self.src.newline { self.line + 1 } else { self.line.max(1) }
    }

    fn truncated(&self, el: &ElementDef, found: usize) -> MeshError {
        MeshError::Truncated {
            at: Location::line(self.eof_line()),
            expected: el.amount(el.count),
            found: el.amount(found as u64),
        }
    }
}

fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace).filter(|t| !t.is_empty())
}

fn parse_int(tok: &[u8]) -> Option<i64> {
    std::str::from_utf8(tok).ok()?.parse().ok()
}

/// Reads one ASCII data line of `el` (instance `i`, on line `ln`): calls
/// `scalar(prop, token)` for each scalar and `list(prop, count, tokens)`
/// for each list, then checks that nothing is left.
fn ascii_instance<'t>(
    el: &ElementDef,
    i: usize,
    ln: usize,
    line: &'t [u8],
    mut scalar: impl FnMut(usize, &'t [u8]) -> Result<()>,
    mut list: impl FnMut(usize, u64, &mut dyn Iterator<Item = &'t [u8]>) -> Result<()>,
) -> Result<()> {
    let mut toks = tokens(line);
    let malformed =
        |reason: String| MeshError::MalformedStatement { at: Location::line(ln), statement: el.name.clone(), reason };
    let missing = |prop: &PropDef| {
        malformed(format!("{} {i}: missing value for property `{}`", el.name, excerpt(prop.name.as_bytes())))
    };
    for (p, prop) in el.props.iter().enumerate() {
        match prop.kind {
            PropKind::Scalar(_) => {
                let t = toks.next().ok_or_else(|| missing(prop))?;
                scalar(p, t)?;
            }
            PropKind::List { .. } => {
                let t = toks.next().ok_or_else(|| missing(prop))?;
                let n = parse_int(t).ok_or_else(|| MeshError::MalformedNumber {
                    at: Location::line(ln),
                    what: "list count",
                    text: excerpt(t),
                })?;
                let n = u64::try_from(n).map_err(|_| {
                    malformed(format!(
                        "{} {i}: negative list count {n} for `{}`",
                        el.name,
                        excerpt(prop.name.as_bytes())
                    ))
                })?;
                let mut counted = 0u64;
                let mut items = toks.by_ref().take(usize::try_from(n).unwrap_or(usize::MAX)).inspect(|_| counted += 1);
                list(p, n, &mut items)?;
                items.for_each(drop);
                if counted < n {
                    return Err(malformed(format!(
                        "{} {i}: list `{}` announces {n} values, found {counted}",
                        el.name,
                        excerpt(prop.name.as_bytes())
                    )));
                }
            }
        }
    }
    if let Some(t) = toks.next() {
        return Err(malformed(format!(
            "{} {i}: unexpected value {:?} after the {} properties",
            el.name,
            excerpt(t),
            el.props.len()
        )));
    }
    Ok(())
}

fn read_ascii<R: Read>(src: &mut Source<R>, header: &Header, layout: &Layout) -> Result<Body> {
    let mut lines = AsciiLines { src, line: header.lines };
    let mut body = Body::new();
    for (e, el) in header.elements.iter().enumerate() {
        if el.props.is_empty() {
            // Nothing to read, whatever the count.
            continue;
        }
        if e == layout.vertex {
            body.ascii_vertices(&mut lines, el, layout)?;
        } else if let Some((_, ip)) = layout.face.filter(|&(fi, _)| fi == e) {
            body.ascii_faces(&mut lines, el, ip, layout.texcoord, layout.nv)?;
        } else {
            for i in 0..el.count {
                let Some((ln, line)) = lines.next_line()? else {
                    return Err(lines.truncated(el, i as usize));
                };
                ascii_instance(el, i as usize, ln, line, |_, _| Ok(()), |_, _, _| Ok(()))?;
            }
        }
    }
    // A line more than announced: the header's counts are wrong (its data
    // would be lost).
    if let Some(last) = header.elements.iter().rev().find(|e| !e.props.is_empty())
        && let Some((ln, _)) = lines.next_line()?
    {
        return Err(MeshError::MoreThanDeclared {
            at: Location::line(ln),
            declared: last.amount(last.count) + " as the last data",
            found: "a line more".into(),
        });
    }
    Ok(body)
}

impl Body {
    /// Nothing read yet.
    fn new() -> Self {
        Body { values: Vec::new(), face_ptr: vec![0], face_verts: Vec::new(), corner_uv: Vec::new(), uv_problem: None }
    }

    /// The lines of the vertex element `el`, one row of `values` each.
    fn ascii_vertices<R: Read>(
        &mut self,
        lines: &mut AsciiLines<'_, R>,
        el: &ElementDef,
        layout: &Layout,
    ) -> Result<()> {
        let nch = layout.channels.len();
        self.values.reserve(capped(el.count) * nch);
        for i in 0..layout.nv {
            let Some((ln, line)) = lines.next_line()? else { return Err(lines.truncated(el, i)) };
            let row = self.values.len();
            self.values.resize(row + nch, 0.0);
            let values = &mut self.values;
            ascii_instance(
                el,
                i,
                ln,
                line,
                |p, t| {
                    let Some(c) = layout.columns[p] else { return Ok(()) };
                    let v = fast_float2::parse::<f64, _>(t).map_err(|_| MeshError::MalformedNumber {
                        at: Location::line(ln),
                        what: if c < 3 { "vertex coordinate" } else { "vertex property" },
                        text: excerpt(t),
                    })?;
                    values[row + c] = finite(v, || Location::line(ln), i, c, Some(t))?;
                    Ok(())
                },
                |_, _, _| Ok(()),
            )?;
        }
        Ok(())
    }

    /// The lines of the face element `el`, whose property `ip` holds the
    /// vertex indices (checked against `nv` vertices) and `tp` the corners'
    /// texture coordinates.
    fn ascii_faces<R: Read>(
        &mut self,
        lines: &mut AsciiLines<'_, R>,
        el: &ElementDef,
        ip: usize,
        tp: Option<usize>,
        nv: usize,
    ) -> Result<()> {
        let nf = capped(el.count);
        self.face_ptr.reserve(nf);
        self.face_verts.reserve(nf * 4);
        for f in 0..el.count as usize {
            let Some((ln, line)) = lines.next_line()? else { return Err(lines.truncated(el, f)) };
            let face_verts = &mut self.face_verts;
            let corner_uv = &mut self.corner_uv;
            let keep_uv = self.uv_problem.is_none();
            ascii_instance(
                el,
                f,
                ln,
                line,
                |_, _| Ok(()),
                |p, n, items| {
                    if Some(p) == tp {
                        for t in items {
                            let v = fast_float2::parse::<f64, _>(t).map_err(|_| MeshError::MalformedNumber {
                                at: Location::line(ln),
                                what: "texture coordinate",
                                text: excerpt(t),
                            })?;
                            if keep_uv {
                                corner_uv.push(v);
                            }
                        }
                        let _ = n;
                        return Ok(());
                    }
                    if p != ip {
                        return Ok(());
                    }
                    if n < 3 {
                        return Err(MeshError::FaceTooSmall { at: Location::line(ln), face: f, order: n as usize });
                    }
                    for t in items {
                        let index = parse_int(t).ok_or_else(|| MeshError::MalformedNumber {
                            at: Location::line(ln),
                            what: "vertex index",
                            text: excerpt(t),
                        })?;
                        face_verts.push(check_index(index, nv, f, || Location::line(ln))?);
                    }
                    Ok(())
                },
            )?;
            push_face_end(&mut self.face_ptr, self.face_verts.len())?;
            if tp.is_some() {
                self.check_texcoords(f);
            }
        }
        Ok(())
    }

    /// Face `f` read `corner_uv[uv_before..]`: unless those are two finite
    /// reals per corner, the lists are not texture coordinates (the first
    /// such face is kept as the reason, and no more is stored).
    fn check_texcoords(&mut self, f: usize) {
        if self.uv_problem.is_some() {
            return;
        }
        let corners = (self.face_ptr[f + 1] - self.face_ptr[f]) as usize;
        let uv_before = 2 * self.face_ptr[f] as usize;
        let read = self.corner_uv.len() - uv_before;
        if read != 2 * corners {
            self.uv_problem = Some(format!("face {f} has {corners} corners and {read} values, not two per corner"));
        } else if let Some(k) = self.corner_uv[uv_before..].iter().position(|v| !v.is_finite()) {
            self.uv_problem = Some(format!("face {f}: corner {} has a non-finite value", k / 2));
        }
        if self.uv_problem.is_some() {
            self.corner_uv = Vec::new();
        }
    }
}

// ---------------------------------------------------------------------------
// Binary body
// ---------------------------------------------------------------------------

fn at_offset(offset: u64) -> Location {
    Location { line: None, offset: Some(offset) }
}

struct Cursor<'s, R> {
    src: &'s mut Source<R>,
    big_endian: bool,
}

impl<R: Read> Cursor<'_, R> {
    fn pos(&self) -> u64 {
        self.src.offset()
    }

    fn take<const N: usize>(&mut self) -> std::result::Result<[u8; N], Stop> {
        if !self.src.ensure(N)? {
            return Err(Stop::Truncated);
        }
        let p = self.src.pos;
        let mut b: [u8; N] = self.src.buf[p..p + N].try_into().unwrap_or_else(|_| unreachable!("N bytes ensured"));
        self.src.pos += N;
        if self.big_endian {
            b.reverse();
        }
        Ok(b)
    }

    /// Skips `n` bytes, reading them (a pipe cannot seek).
    fn skip(&mut self, mut n: u128) -> std::result::Result<(), Stop> {
        loop {
            let avail = (self.src.buf.len() - self.src.pos) as u128;
            let k = avail.min(n);
            self.src.pos += k as usize;
            n -= k;
            if n == 0 {
                return Ok(());
            }
            if !self.src.more()? {
                return Err(Stop::Truncated);
            }
        }
    }

    fn float(&mut self, s: Scalar) -> std::result::Result<f64, Stop> {
        Ok(match s {
            Scalar::F32 => f64::from(f32::from_le_bytes(self.take()?)),
            Scalar::F64 => f64::from_le_bytes(self.take()?),
            _ => self.int(s)? as f64,
        })
    }

    /// An integer (floats are truncated; they are only read for properties
    /// that are skipped or converted).
    fn int(&mut self, s: Scalar) -> std::result::Result<i64, Stop> {
        Ok(match s {
            Scalar::I8 => i64::from(i8::from_le_bytes(self.take()?)),
            Scalar::U8 => i64::from(u8::from_le_bytes(self.take()?)),
            Scalar::I16 => i64::from(i16::from_le_bytes(self.take()?)),
            Scalar::U16 => i64::from(u16::from_le_bytes(self.take()?)),
            Scalar::I32 => i64::from(i32::from_le_bytes(self.take()?)),
            Scalar::U32 => i64::from(u32::from_le_bytes(self.take()?)),
            Scalar::F32 => f32::from_le_bytes(self.take()?) as i64,
            Scalar::F64 => f64::from_le_bytes(self.take()?) as i64,
        })
    }

    /// The data ended after `found` instances of `el`.
    fn truncated(&self, el: &ElementDef, found: usize) -> MeshError {
        MeshError::Truncated {
            at: at_offset(self.src.end_offset()),
            expected: el.amount(el.count),
            found: el.amount(found as u64),
        }
    }

    /// The error that stopped instance `i` of `el`.
    fn stopped(&self, stop: Stop, el: &ElementDef, i: usize) -> MeshError {
        match stop {
            Stop::Truncated => self.truncated(el, i),
            Stop::Error(e) => e,
        }
    }
}

/// Why reading an instance stopped.
enum Stop {
    /// The data ran out.
    Truncated,
    /// A real error.
    Error(MeshError),
}

impl From<MeshError> for Stop {
    fn from(e: MeshError) -> Self {
        Stop::Error(e)
    }
}

type Step = std::result::Result<(), Stop>;

/// Reads one binary instance of `el` (number `i`): calls `scalar` for each
/// scalar property and `list(prop, count, count_offset, cursor)` for each
/// list property, which must consume the items (`skip_list` does).
fn binary_instance<R: Read>(
    el: &ElementDef,
    i: usize,
    cur: &mut Cursor<'_, R>,
    mut scalar: impl FnMut(usize, Scalar, &mut Cursor<'_, R>) -> Step,
    mut list: impl FnMut(usize, u64, u64, &mut Cursor<'_, R>) -> Step,
) -> Step {
    for (p, prop) in el.props.iter().enumerate() {
        match prop.kind {
            PropKind::Scalar(s) => scalar(p, s, cur)?,
            PropKind::List { count, .. } => {
                let at = cur.pos();
                let n = cur.int(count)?;
                let n = u64::try_from(n).map_err(|_| MeshError::MalformedStatement {
                    at: at_offset(at),
                    statement: el.name.clone(),
                    reason: format!("{} {i}: negative list count {n} for `{}`", el.name, excerpt(prop.name.as_bytes())),
                })?;
                list(p, n, at, cur)?;
            }
        }
    }
    Ok(())
}

fn skip_list<R: Read>(el: &ElementDef, p: usize, n: u64, cur: &mut Cursor<'_, R>) -> Step {
    let PropKind::List { item, .. } = el.props[p].kind else { return Ok(()) };
    cur.skip(u128::from(n) * item.size() as u128)
}

/// Bytes after the data that are read to tell trailing whitespace (some
/// writers end binary files with a line end) from data the header does
/// not announce.
const TRAILER: usize = 4096;

fn read_binary<R: Read>(src: &mut Source<R>, header: &Header, layout: &Layout, big_endian: bool) -> Result<Body> {
    let mut cur = Cursor { src, big_endian };
    let mut body = Body::new();
    for (e, el) in header.elements.iter().enumerate() {
        if e == layout.vertex {
            body.binary_vertices(&mut cur, el, layout)?;
        } else if let Some((_, ip)) = layout.face.filter(|&(fi, _)| fi == e) {
            body.binary_faces(&mut cur, el, ip, layout.texcoord, layout.nv)?;
        } else {
            skip_binary(&mut cur, el)?;
        }
    }
    // Anything but whitespace after the data: the header's counts are wrong.
    let end = cur.pos();
    let src = cur.src;
    src.ensure(TRAILER + 1)?;
    let rest = &src.buf[src.pos..];
    if let Some(k) = rest.iter().position(|b| !b.is_ascii_whitespace()).or((rest.len() > TRAILER).then_some(TRAILER)) {
        let last = header.elements.iter().rev().find(|e| e.count > 0 && !e.props.is_empty());
        return Err(MeshError::MoreThanDeclared {
            at: at_offset(end + k as u64),
            declared: last.map_or("no data".into(), |e| e.amount(e.count) + " as the last data"),
            found: "more bytes".into(),
        });
    }
    Ok(body)
}

impl Body {
    /// The instances of the vertex element `el`, one row of `values` each.
    fn binary_vertices<R: Read>(&mut self, cur: &mut Cursor<'_, R>, el: &ElementDef, layout: &Layout) -> Result<()> {
        let nch = layout.channels.len();
        self.values.reserve(capped(el.count) * nch);
        for i in 0..layout.nv {
            let row = self.values.len();
            self.values.resize(row + nch, 0.0);
            let values = &mut self.values;
            binary_instance(
                el,
                i,
                cur,
                |p, s, cur| {
                    let at = cur.pos();
                    let v = cur.float(s)?;
                    if let Some(c) = layout.columns[p] {
                        values[row + c] = finite(v, || at_offset(at), i, c, None)?;
                    }
                    Ok(())
                },
                |p, n, _, cur| skip_list(el, p, n, cur),
            )
            .map_err(|s| cur.stopped(s, el, i))?;
        }
        Ok(())
    }

    /// The instances of the face element `el`, whose property `ip` holds
    /// the vertex indices (checked against `nv` vertices).
    fn binary_faces<R: Read>(
        &mut self,
        cur: &mut Cursor<'_, R>,
        el: &ElementDef,
        ip: usize,
        tp: Option<usize>,
        nv: usize,
    ) -> Result<()> {
        let item = match el.props[ip].kind {
            PropKind::List { item, .. } | PropKind::Scalar(item) => item,
        };
        let uv_item = tp.map(|t| match el.props[t].kind {
            PropKind::List { item, .. } | PropKind::Scalar(item) => item,
        });
        let nf = capped(el.count);
        self.face_ptr.reserve(nf);
        self.face_verts.reserve(nf * 4);
        for f in 0..el.count as usize {
            let face_verts = &mut self.face_verts;
            let corner_uv = &mut self.corner_uv;
            let keep_uv = self.uv_problem.is_none();
            binary_instance(
                el,
                f,
                cur,
                |_, s, cur| cur.skip(s.size() as u128),
                |p, n, at, cur| {
                    if let (Some(t), Some(s)) = (tp, uv_item)
                        && p == t
                    {
                        for _ in 0..n {
                            let v = cur.float(s)?;
                            if keep_uv {
                                corner_uv.push(v);
                            }
                        }
                        return Ok(());
                    }
                    if p != ip {
                        return skip_list(el, p, n, cur);
                    }
                    if n < 3 {
                        return Err(MeshError::FaceTooSmall { at: at_offset(at), face: f, order: n as usize }.into());
                    }
                    for _ in 0..n {
                        let at = cur.pos();
                        let index = cur.int(item)?;
                        face_verts.push(check_index(index, nv, f, || at_offset(at))?);
                    }
                    Ok(())
                },
            )
            .map_err(|s| cur.stopped(s, el, f))?;
            push_face_end(&mut self.face_ptr, self.face_verts.len())?;
            if tp.is_some() {
                self.check_texcoords(f);
            }
        }
        Ok(())
    }
}

/// Skips every instance of an element this reader does not use.
fn skip_binary<R: Read>(cur: &mut Cursor<'_, R>, el: &ElementDef) -> Result<()> {
    let min_size = el.min_binary_size();
    if !el.has_lists() {
        let total = u128::from(el.count) * min_size as u128;
        let start = cur.pos();
        return match cur.skip(total) {
            Ok(()) => Ok(()),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::Truncated) => {
                let found = ((cur.src.end_offset() - start) as usize).checked_div(min_size).unwrap_or(0);
                Err(cur.truncated(el, found))
            }
        };
    }
    // Every instance takes at least one byte: the loop ends with the data.
    for i in 0..el.count {
        binary_instance(
            el,
            i as usize,
            cur,
            |_, s, cur| cur.skip(s.size() as u128),
            |p, n, _, cur| skip_list(el, p, n, cur),
        )
        .map_err(|s| cur.stopped(s, el, i as usize))?;
    }
    Ok(())
}
