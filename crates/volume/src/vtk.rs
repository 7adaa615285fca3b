//! VTK legacy unstructured grids (`.vtk` files, which ParaView and VisIt
//! open).
//!
//! # Reading
//! [`read_vtk`] reads files of versions 2.0 to 5.x, `ASCII` or `BINARY`
//! (big-endian, as VTK writes them), holding `DATASET UNSTRUCTURED_GRID`:
//!
//! * `POINTS n type`, `type` any numeric VTK type (`float`, `double`,
//!   `int`, `unsigned_char`, `vtktypeint64`, ...);
//! * the cells, in the classic layout of versions 2.0 to 4.2 (`CELLS n
//!   size`, then each cell's number of points and their ids; a
//!   `VTK_POLYHEDRON` as its face stream `count nfaces npts0 id… npts1 id…`,
//!   `count` the number of values after it) or in the layout of versions
//!   5.x (`CELLS n+1 m`, then `OFFSETS type` and `CONNECTIVITY type`
//!   arrays), and `CELL_TYPES n`. Tetrahedra (10), hexahedra (12), wedges
//!   (13), pyramids (14) and polyhedra (42) become [`Cell`]s, in VTK's
//!   vertex order (pyramids are then refused by [`VolMesh::from_cells`]);
//! * `POINT_DATA n` and `CELL_DATA n` with `SCALARS name type [ncomp]`
//!   (and its `LOOKUP_TABLE` line, whose table name is not kept), `VECTORS
//!   name type`, `NORMALS name type` and `FIELD name narrays` blocks of
//!   `arrayname ncomp ntuples type` arrays: each becomes a [`Field`] of the
//!   matching [`FieldKind`], its values converted to `f64`. Names are
//!   decoded as VTK encodes them (`%20` for a space, `%XX` for any byte);
//! * `METADATA` blocks (the ranges and component names VTK 9 writes after
//!   an array, ended by a blank line) are skipped, and the title line (free
//!   text) is not kept.
//!
//! In ASCII files values are separated by any whitespace, so a cell or a
//! tuple may span lines; keywords are case-insensitive. ASCII `float`
//! values are read as `f64` (no rounding to single precision). `long` and
//! `unsigned_long` binary values are read as 64 bits, as VTK wrote them on
//! 64-bit Unix; integers beyond 2⁵³ lose precision in `f64` fields.
//!
//! Nothing is dropped silently; these are refused with an error naming
//! them:
//! * other cell types (vertices, lines, triangles, quads, voxels,
//!   quadratic and higher-order cells, ...):
//!   [`VolumeError::UnsupportedCellType`], naming the cell;
//! * polyhedra in version 5.x files (their faces are kept in sections this
//!   reader does not read; save such a file as version 4.2), other datasets
//!   (`POLYDATA`, `STRUCTURED_GRID`, ...), other attributes (`TENSORS`,
//!   `TEXTURE_COORDINATES`, `COLOR_SCALARS`, `LOOKUP_TABLE` data,
//!   `GLOBAL_IDS`, ...), dataset-level `FIELD` data and string arrays:
//!   [`VolumeError::Parse`].
//!
//! A truncated or malformed file is a [`VolumeError::Parse`] naming the
//! line and what was expected (for binary data, the line of its section's
//! header). The reader never allocates more than the input can hold,
//! whatever counts the file announces.
//!
//! # Writing
//! [`write_vtk`] writes version 3.0 with the classic cell layout, which VTK
//! readers old and new open: `POINTS V double`, `CELLS` (polyhedra as their
//! face stream), `CELL_TYPES`, then `POINT_DATA` and `CELL_DATA` with each
//! field as its kind says: `SCALARS name double ncomp` with `LOOKUP_TABLE
//! default`, `VECTORS name double`, `NORMALS name double`, and
//! [`FieldKind::Array`] fields in a `FIELD FieldData k` block (one block
//! per run of consecutive array fields, so that fields read back in their
//! order). Names are encoded as VTK encodes them (`%20` for a space, `%XX`
//! for `%`, `"`, control and non-ASCII bytes). ASCII floats are the
//! shortest text that reads back to the same `f64`, so ASCII round trips
//! are bit-exact, as binary ones are (NaN payloads aside). Binary files
//! hold big-endian `int` cell data and big-endian `double` values, each
//! block followed by a newline, as VTK writes them.
//!
//! ```
//! use ndarray::array;
//! use subla_volume::vtk::{VtkEncoding, read_vtk, write_vtk};
//! use subla_volume::{Cell, VolMesh, VolumeData};
//!
//! let mesh = VolMesh::from_cells(4, &[Cell::Tetra([0, 1, 2, 3])])?;
//! let positions = array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.1, 0.2, 1.0]];
//! let data = VolumeData::new(mesh, positions)?;
//! let mut file = Vec::new();
//! write_vtk(&data, &mut file, VtkEncoding::Ascii).expect("writing to memory");
//! assert_eq!(read_vtk(&file)?, data);
//! # Ok::<(), subla_volume::VolumeError>(())
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use ndarray::Array2;

use crate::cell::{Cell, CellKind};
use crate::data::{Field, FieldKind, VolumeData};
use crate::error::{Result, VolumeError};
use crate::mesh::VolMesh;

/// Encoding of a written VTK file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum VtkEncoding {
    /// `ASCII`: readable text, floats in shortest round-trip form.
    #[default]
    Ascii,
    /// `BINARY`: big-endian values, compact and fast.
    Binary,
}

// ---------------------------------------------------------------------------
// Tokens, shared with the Medit reader.

/// A parse error at `line`.
pub(crate) fn parse_error(line: usize, detail: impl Into<String>) -> VolumeError {
    VolumeError::Parse { line, detail: detail.into() }
}

/// A cursor over a text file, or a text file with binary blocks, that
/// splits it into whitespace-separated tokens and counts lines.
#[derive(Clone, Copy)]
pub(crate) struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    /// Whether `#` at the start of a token opens a comment running to the
    /// end of the line (Medit files).
    comments: bool,
}

/// A token and the line it is on.
#[derive(Clone, Copy)]
pub(crate) struct Token<'a> {
    pub(crate) text: &'a [u8],
    pub(crate) line: usize,
}

impl Token<'_> {
    /// Whether the token is `keyword`, ignoring ASCII case.
    pub(crate) fn is(&self, keyword: &str) -> bool {
        self.text.eq_ignore_ascii_case(keyword.as_bytes())
    }

    /// The token in lower case, for matching keywords.
    pub(crate) fn lower(&self) -> String {
        String::from_utf8_lossy(self.text).to_ascii_lowercase()
    }

    /// The token for a message, cut short if long (binary garbage read as
    /// text can be).
    pub(crate) fn show(&self) -> String {
        const MAX: usize = 40;
        let s = String::from_utf8_lossy(&self.text[..self.text.len().min(MAX)]);
        if self.text.len() > MAX { format!("{s}…") } else { s.into_owned() }
    }

    /// The token as an integer.
    pub(crate) fn int(&self) -> Option<i64> {
        std::str::from_utf8(self.text).ok()?.parse().ok()
    }

    /// The token as a float.
    pub(crate) fn float(&self) -> Option<f64> {
        std::str::from_utf8(self.text).ok()?.parse().ok()
    }
}

impl<'a> Lexer<'a> {
    /// A cursor at the start of `bytes`.
    pub(crate) fn new(bytes: &'a [u8], comments: bool) -> Lexer<'a> {
        Lexer { bytes, pos: 0, line: 1, comments }
    }

    /// The current line (1-based).
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// Bytes left; no count in a file can ask for more values than this
    /// (in ASCII, each takes at least one byte).
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'\n' => self.line += 1,
                b'#' if self.comments => {
                    while self.bytes.get(self.pos).is_some_and(|&b| b != b'\n') {
                        self.pos += 1;
                    }
                    continue;
                }
                _ if b.is_ascii_whitespace() => {}
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// The next token, or `None` at the end of the file.
    pub(crate) fn token(&mut self) -> Option<Token<'a>> {
        self.skip_space();
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(|b| !b.is_ascii_whitespace()) {
            self.pos += 1;
        }
        (self.pos > start).then(|| Token { text: &self.bytes[start..self.pos], line: self.line })
    }

    /// The next token, without moving.
    pub(crate) fn peek(&self) -> Option<Token<'a>> {
        let mut ahead = *self;
        ahead.token()
    }

    /// The next token, or an error saying `what` was expected.
    pub(crate) fn expect(&mut self, what: &str) -> Result<Token<'a>> {
        self.token().ok_or_else(|| parse_error(self.line, format!("expected {what}, found the end of the file")))
    }

    /// The next token as a count, and its line.
    pub(crate) fn count(&mut self, what: &str) -> Result<(usize, usize)> {
        let t = self.expect(what)?;
        let n = t.int().and_then(|n| usize::try_from(n).ok());
        let n = n.ok_or_else(|| parse_error(t.line, format!("expected {what}, found `{}`", t.show())))?;
        Ok((n, t.line))
    }

    /// The rest of the current line, without its line break, moving past
    /// it; `None` at the end of the file.
    fn rest_of_line(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.pos..).filter(|r| !r.is_empty())?;
        match rest.iter().position(|&b| b == b'\n') {
            Some(k) => {
                self.pos += k + 1;
                self.line += 1;
                Some(rest[..k].strip_suffix(b"\r").unwrap_or(&rest[..k]))
            }
            None => {
                self.pos = self.bytes.len();
                Some(rest)
            }
        }
    }

    /// Moves past the line break that ends a binary block's header (VTK's
    /// reader discards the rest of that line); false if something other
    /// than blanks comes first.
    fn begin_binary(&mut self) -> bool {
        while let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            match b {
                b' ' | b'\t' | b'\r' => {}
                b'\n' => {
                    self.line += 1;
                    return true;
                }
                _ => {
                    self.pos -= 1;
                    return false;
                }
            }
        }
        true
    }

    /// The next `n` raw bytes.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

/// Shortest round-trip text of `x`; non-finite values as `nan`, `inf`,
/// `-inf`, which both readers parse back.
pub(crate) fn format_f64(buf: &mut ryu::Buffer, x: f64) -> &str {
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

// ---------------------------------------------------------------------------
// Values.

/// A VTK data type, as a `POINTS`, attribute or array header names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Scalar {
    Bit,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

/// A value as read, before conversion to what its block holds.
#[derive(Copy, Clone, Debug)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Scalar {
    fn parse(t: &Token<'_>) -> Option<Scalar> {
        Some(match t.lower().as_str() {
            "bit" => Scalar::Bit,
            "char" | "signed_char" => Scalar::I8,
            "unsigned_char" => Scalar::U8,
            "short" => Scalar::I16,
            "unsigned_short" => Scalar::U16,
            "int" | "vtkidtype" | "vtktypeint32" => Scalar::I32,
            "unsigned_int" | "vtktypeuint32" => Scalar::U32,
            "long" | "vtktypeint64" => Scalar::I64,
            "unsigned_long" | "vtktypeuint64" => Scalar::U64,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    }

    /// Bytes per binary value (`bit` values are packed eight to a byte).
    fn width(self) -> usize {
        match self {
            Scalar::Bit | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// The type's VTK name, for messages.
    fn name(self) -> &'static str {
        match self {
            Scalar::Bit => "bit",
            Scalar::I8 => "char",
            Scalar::U8 => "unsigned_char",
            Scalar::I16 => "short",
            Scalar::U16 => "unsigned_short",
            Scalar::I32 => "int",
            Scalar::U32 => "unsigned_int",
            Scalar::I64 => "vtktypeint64",
            Scalar::U64 => "vtktypeuint64",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// The values of an integer type.
    fn range(self) -> (i128, i128) {
        match self {
            Scalar::Bit => (0, 1),
            Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
            Scalar::U8 => (0, u8::MAX.into()),
            Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
            Scalar::U16 => (0, u16::MAX.into()),
            Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
            Scalar::U32 => (0, u32::MAX.into()),
            Scalar::I64 | Scalar::F32 | Scalar::F64 => (i64::MIN.into(), i64::MAX.into()),
            Scalar::U64 => (0, u64::MAX.into()),
        }
    }

    /// An ASCII value of this type.
    fn parse_value(self, t: &Token<'_>) -> Option<Num> {
        if self.is_float() {
            return t.float().map(Num::Float);
        }
        let v: i128 = std::str::from_utf8(t.text).ok()?.parse().ok()?;
        let (lo, hi) = self.range();
        (lo..=hi).contains(&v).then_some(Num::Int(v))
    }

    /// A big-endian binary value of this type, `b` of [`Scalar::width`]
    /// bytes (bits are unpacked by the caller).
    fn decode(self, b: &[u8]) -> Num {
        fn be<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        match self {
            Scalar::Bit | Scalar::U8 => Num::Int(b[0].into()),
            Scalar::I8 => Num::Int(i8::from_be_bytes(be(b)).into()),
            Scalar::I16 => Num::Int(i16::from_be_bytes(be(b)).into()),
            Scalar::U16 => Num::Int(u16::from_be_bytes(be(b)).into()),
            Scalar::I32 => Num::Int(i32::from_be_bytes(be(b)).into()),
            Scalar::U32 => Num::Int(u32::from_be_bytes(be(b)).into()),
            Scalar::I64 => Num::Int(i64::from_be_bytes(be(b)).into()),
            Scalar::U64 => Num::Int(u64::from_be_bytes(be(b)).into()),
            Scalar::F32 => Num::Float(f32::from_be_bytes(be(b)).into()),
            Scalar::F64 => Num::Float(f64::from_be_bytes(be(b))),
        }
    }
}

impl Num {
    fn to_f64(self) -> std::result::Result<f64, String> {
        Ok(match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        })
    }

    fn to_int(self) -> std::result::Result<i64, String> {
        match self {
            Num::Int(i) => i64::try_from(i).map_err(|_| format!("{i} is out of range")),
            Num::Float(x) => Err(format!("expected an integer, found {x}")),
        }
    }
}

/// A block of values: its encoding, type, header line and name (for
/// messages).
struct Block<'s> {
    binary: bool,
    ty: Scalar,
    line: usize,
    what: &'s str,
}

/// Reads `n` values of a block, converting each.
fn read_values<T>(
    lx: &mut Lexer<'_>,
    b: &Block<'_>,
    n: usize,
    convert: impl FnMut(Num) -> std::result::Result<T, String>,
) -> Result<Vec<T>> {
    if b.binary { read_binary(lx, b, n, convert) } else { read_ascii(lx, b, n, convert) }
}

fn read_ascii<T>(
    lx: &mut Lexer<'_>,
    b: &Block<'_>,
    n: usize,
    mut convert: impl FnMut(Num) -> std::result::Result<T, String>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(n.min(lx.remaining()));
    for i in 0..n {
        let t = lx
            .token()
            .ok_or_else(|| parse_error(lx.line, format!("{}: expected {n} values, the file ends after {i}", b.what)))?;
        let num = b.ty.parse_value(&t).ok_or_else(|| {
            parse_error(t.line, format!("{}: expected a value of type {}, found `{}`", b.what, b.ty.name(), t.show()))
        })?;
        out.push(convert(num).map_err(|d| parse_error(t.line, format!("{}: {d}", b.what)))?);
    }
    Ok(out)
}

fn read_binary<T>(
    lx: &mut Lexer<'_>,
    b: &Block<'_>,
    n: usize,
    mut convert: impl FnMut(Num) -> std::result::Result<T, String>,
) -> Result<Vec<T>> {
    let err = |d: String| parse_error(b.line, format!("{}: {d}", b.what));
    if !lx.begin_binary() {
        return Err(err("binary data must start on the line after its header".into()));
    }
    let needed = if b.ty == Scalar::Bit { Some(n.div_ceil(8)) } else { n.checked_mul(b.ty.width()) };
    let needed = needed.ok_or_else(|| err(format!("{n} values cannot fit in memory")))?;
    let available = lx.remaining();
    let data = lx.take(needed).ok_or_else(|| {
        err(format!("expected {needed} bytes of binary data, {available} remain (is the file truncated?)"))
    })?;
    let mut out = Vec::with_capacity(n);
    if b.ty == Scalar::Bit {
        // VTK packs bits from the most significant down.
        for i in 0..n {
            out.push(convert(Num::Int(((data[i / 8] >> (7 - i % 8)) & 1).into())).map_err(err)?);
        }
    } else {
        for chunk in data.chunks_exact(b.ty.width()) {
            out.push(convert(b.ty.decode(chunk)).map_err(err)?);
        }
    }
    Ok(out)
}

/// Reads a type name; `integer` requires an integer type (offsets,
/// connectivity).
fn read_type(lx: &mut Lexer<'_>, what: &str, integer: bool) -> Result<Scalar> {
    let t = lx.expect(&format!("the data type of {what}"))?;
    match Scalar::parse(&t) {
        Some(ty) if integer && ty.is_float() => {
            Err(parse_error(t.line, format!("{what}: expected an integer type, found `{}`", t.show())))
        }
        Some(ty) => Ok(ty),
        None => Err(parse_error(
            t.line,
            format!("{what}: data type `{}` is not read (numeric types only: float, double, int, ...)", t.show()),
        )),
    }
}

/// A name as VTK encodes it: `%XX` is the byte `XX`.
fn decode_name(t: &Token<'_>) -> Result<String> {
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(t.text.len());
    let mut i = 0;
    while i < t.text.len() {
        let escaped = t.text.get(i + 1..i + 3).and_then(|h| Some(hex(h[0])? * 16 + hex(h[1])?));
        match (t.text[i], escaped) {
            (b'%', Some(byte)) => {
                out.push(byte as u8);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| parse_error(t.line, format!("name `{}` is not UTF-8", t.show())))
}

/// A name as VTK encodes it, one token: `%XX` for blanks, `%`, `"`,
/// control and non-ASCII bytes.
fn encode_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for &b in name.as_bytes() {
        if b.is_ascii_graphic() && b != b'%' && b != b'"' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Reading.

/// Reads a VTK legacy unstructured grid file (see the [module docs](self)).
///
/// # Errors
/// [`VolumeError::Io`] naming the file if it cannot be read, otherwise as
/// [`read_vtk`].
pub fn read_vtk_file(path: impl AsRef<Path>) -> Result<VolumeData> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| VolumeError::Io { path: path.to_path_buf(), source })?;
    read_vtk(&bytes)
}

/// Reads a VTK legacy unstructured grid held in memory (see the
/// [module docs](self) for what is read and what is refused).
///
/// # Errors
/// * [`VolumeError::Parse`], naming the line, for a file that is not a VTK
///   legacy unstructured grid, is truncated or malformed, or holds data
///   this reader does not read (other attributes, string arrays,
///   dataset-level field data, polyhedra in a version 5.x file);
/// * [`VolumeError::UnsupportedCellType`] for a cell of another type;
/// * whatever [`VolMesh::from_cells`], [`VolumeData::new`] and
///   [`VolumeData::with_fields`] refuse (pyramids, inverted cells, a field
///   of the wrong length, ...).
pub fn read_vtk(bytes: &[u8]) -> Result<VolumeData> {
    let mut lx = Lexer::new(bytes, false);
    let (binary, modern) = read_header(&mut lx)?;
    let mut grid = Grid { binary, modern, ..Grid::default() };
    while let Some(t) = lx.token() {
        grid.section(&mut lx, t)?;
    }
    grid.finish(lx.line)
}

/// Reads the four header lines; returns whether the file is binary and
/// whether it is version 5 or later (cells as offsets and connectivity).
fn read_header(lx: &mut Lexer<'_>) -> Result<(bool, bool)> {
    let first = String::from_utf8_lossy(lx.rest_of_line().unwrap_or_default()).to_ascii_lowercase();
    let words: Vec<&str> = first.split_ascii_whitespace().collect();
    let major = match words.as_slice() {
        ["#", "vtk", "datafile", "version", v] => v.split('.').next().and_then(|m| m.parse::<u32>().ok()),
        _ => None,
    };
    let major = major.ok_or_else(|| parse_error(1, "expected `# vtk DataFile Version X.Y`: not a VTK legacy file"))?;
    // The title is a free-text comment, which `VolumeData` has no place for.
    lx.rest_of_line().ok_or_else(|| parse_error(2, "expected a title line, found the end of the file"))?;
    let enc = lx.expect("ASCII or BINARY")?;
    let binary = enc.is("BINARY");
    if !binary && !enc.is("ASCII") {
        return Err(parse_error(enc.line, format!("expected ASCII or BINARY, found `{}`", enc.show())));
    }
    let kw = lx.expect("DATASET UNSTRUCTURED_GRID")?;
    if !kw.is("DATASET") {
        return Err(parse_error(kw.line, format!("expected DATASET UNSTRUCTURED_GRID, found `{}`", kw.show())));
    }
    let ty = lx.expect("a dataset type")?;
    if !ty.is("UNSTRUCTURED_GRID") {
        return Err(parse_error(
            ty.line,
            format!("DATASET {} is not read: only UNSTRUCTURED_GRID files hold volume cells", ty.show()),
        ));
    }
    Ok((binary, major >= 5))
}

/// Cells as a file lists them: cell `c`'s values are
/// `values[ranges[c].clone()]`.
struct RawCells {
    values: Vec<i64>,
    ranges: Vec<Range<usize>>,
    /// The line of the `CELLS` header.
    line: usize,
}

/// A field's header: its name, kind, data type, line and number of
/// components.
struct FieldHead {
    name: String,
    kind: FieldKind,
    ty: Scalar,
    line: usize,
    ncomp: usize,
}

/// What the sections read so far hold.
#[derive(Default)]
struct Grid {
    binary: bool,
    /// Version 5 or later: cells as offsets and connectivity.
    modern: bool,
    points: Option<Array2<f64>>,
    cells: Option<RawCells>,
    types: Option<(Vec<u32>, usize)>,
    /// The open `POINT_DATA` (true) or `CELL_DATA` (false) section and its
    /// count.
    attributes: Option<(bool, usize)>,
    point_fields: Vec<Field>,
    cell_fields: Vec<Field>,
}

impl Grid {
    fn block<'s>(&self, ty: Scalar, line: usize, what: &'s str) -> Block<'s> {
        Block { binary: self.binary, ty, line, what }
    }

    /// Reads the section that keyword `t` opens.
    fn section(&mut self, lx: &mut Lexer<'_>, t: Token<'_>) -> Result<()> {
        let twice = |what: &str| Err(parse_error(t.line, format!("a second {what} section")));
        match t.lower().as_str() {
            "points" if self.points.is_some() => twice("POINTS"),
            "points" => {
                self.points = Some(self.read_points(lx)?);
                Ok(())
            }
            "cells" if self.cells.is_some() => twice("CELLS"),
            "cells" => {
                let cells = if self.modern { self.read_offsets(lx)? } else { self.read_classic(lx)? };
                self.cells = Some(cells);
                Ok(())
            }
            "cell_types" if self.types.is_some() => twice("CELL_TYPES"),
            "cell_types" => {
                let (n, line) = lx.count("the number of cell types")?;
                let block = self.block(Scalar::I32, line, "CELL_TYPES");
                let types = read_values(lx, &block, n, |x| {
                    let t = x.to_int()?;
                    u32::try_from(t).map_err(|_| format!("{t} is not a cell type"))
                })?;
                self.types = Some((types, line));
                Ok(())
            }
            "point_data" | "cell_data" => {
                let (n, _) = lx.count("the number of tuples")?;
                self.attributes = Some((t.is("point_data"), n));
                Ok(())
            }
            "scalars" | "vectors" | "normals" | "field" => self.attribute(lx, t),
            "metadata" => {
                skip_metadata(lx);
                Ok(())
            }
            _ if lx.peek().is_none() => {
                Err(parse_error(t.line, format!("unexpected `{}` at the end of the file (is it truncated?)", t.show())))
            }
            _ => Err(parse_error(
                t.line,
                format!(
                    "`{}` sections are not read (only POINTS, CELLS, CELL_TYPES, and POINT_DATA and CELL_DATA \
                     with SCALARS, VECTORS, NORMALS and FIELD arrays)",
                    t.show()
                ),
            )),
        }
    }

    fn read_points(&self, lx: &mut Lexer<'_>) -> Result<Array2<f64>> {
        let (n, line) = lx.count("the number of points")?;
        let ty = read_type(lx, "POINTS", false)?;
        let len = n.checked_mul(3).ok_or_else(|| parse_error(line, format!("{n} points cannot fit in memory")))?;
        let values = read_values(lx, &self.block(ty, line, "POINTS"), len, Num::to_f64)?;
        Array2::from_shape_vec((n, 3), values).map_err(|e| parse_error(line, format!("POINTS: {e}")))
    }

    /// `CELLS n size`, then each cell's count and values.
    fn read_classic(&self, lx: &mut Lexer<'_>) -> Result<RawCells> {
        let (n, line) = lx.count("the number of cells")?;
        let (size, _) = lx.count("the size of the cell list")?;
        let values = read_values(lx, &self.block(Scalar::I32, line, "CELLS"), size, Num::to_int)?;
        let mut ranges = Vec::with_capacity(n.min(size));
        let mut pos = 0;
        for c in 0..n {
            let count = values.get(pos).and_then(|&k| usize::try_from(k).ok());
            let range = count.and_then(|k| Some(pos + 1..(pos + 1).checked_add(k)?)).filter(|r| r.end <= size);
            let range = range.ok_or_else(|| {
                parse_error(line, format!("CELLS: cell {c} runs past the list's size {size} ({n} cells announced)"))
            })?;
            pos = range.end;
            ranges.push(range);
        }
        if pos != size {
            return Err(parse_error(line, format!("CELLS: the {n} cells use {pos} values, the header says {size}")));
        }
        Ok(RawCells { values, ranges, line })
    }

    /// `CELLS n+1 m`, then `OFFSETS type` and `CONNECTIVITY type`.
    fn read_offsets(&self, lx: &mut Lexer<'_>) -> Result<RawCells> {
        let (n_offsets, line) = lx.count("the number of cell offsets")?;
        let (n_conn, _) = lx.count("the size of the connectivity")?;
        if n_offsets == 0 {
            // What VTK writes for no cells: no arrays follow.
            return Ok(RawCells { values: Vec::new(), ranges: Vec::new(), line });
        }
        let offsets = self.read_array(lx, "OFFSETS", n_offsets)?;
        let values = self.read_array(lx, "CONNECTIVITY", n_conn)?;
        let bad = |detail: String| parse_error(line, format!("OFFSETS: {detail}"));
        if offsets[0] != 0 {
            return Err(bad(format!("the first offset is {}, not 0", offsets[0])));
        }
        let mut ranges = Vec::with_capacity(n_offsets - 1);
        for (c, w) in offsets.windows(2).enumerate() {
            let (Ok(a), Ok(b)) = (usize::try_from(w[0]), usize::try_from(w[1])) else {
                return Err(bad(format!("cell {c}: offsets {} and {} are not in range", w[0], w[1])));
            };
            if a > b || b > n_conn {
                return Err(bad(format!("cell {c}: offsets {a} to {b} do not fit a connectivity of {n_conn} values")));
            }
            ranges.push(a..b);
        }
        if ranges.last().map_or(0, |r| r.end) != n_conn {
            return Err(bad(format!("the last offset is not the connectivity size {n_conn}")));
        }
        Ok(RawCells { values, ranges, line })
    }

    /// An `OFFSETS` or `CONNECTIVITY` array of `n` integers.
    fn read_array(&self, lx: &mut Lexer<'_>, keyword: &str, n: usize) -> Result<Vec<i64>> {
        let t = lx.expect(keyword)?;
        if !t.is(keyword) {
            return Err(parse_error(t.line, format!("expected {keyword}, found `{}`", t.show())));
        }
        let ty = read_type(lx, keyword, true)?;
        read_values(lx, &self.block(ty, t.line, keyword), n, Num::to_int)
    }

    /// A `SCALARS`, `VECTORS`, `NORMALS` or `FIELD` attribute of the open
    /// data section.
    fn attribute(&mut self, lx: &mut Lexer<'_>, t: Token<'_>) -> Result<()> {
        let Some((points, n)) = self.attributes else {
            let detail = if t.is("field") {
                "dataset-level FIELD data (outside POINT_DATA and CELL_DATA) is not read".to_string()
            } else {
                format!("{} outside POINT_DATA and CELL_DATA", t.show())
            };
            return Err(parse_error(t.line, detail));
        };
        let fields = if t.is("field") {
            self.read_field_block(lx, n)?
        } else if t.is("scalars") {
            vec![self.read_scalars(lx, t.line, n)?]
        } else {
            let kind = if t.is("vectors") { FieldKind::Vectors } else { FieldKind::Normals };
            let name = decode_name(&lx.expect("a name")?)?;
            let ty = read_type(lx, &name, false)?;
            vec![self.read_field(lx, FieldHead { name, kind, ty, line: t.line, ncomp: 3 }, n)?]
        };
        let target = if points { &mut self.point_fields } else { &mut self.cell_fields };
        target.extend(fields);
        Ok(())
    }

    /// `SCALARS name type [ncomp]`, `LOOKUP_TABLE name`, values; the
    /// keyword is on `line`.
    fn read_scalars(&self, lx: &mut Lexer<'_>, line: usize, n: usize) -> Result<Field> {
        let name = decode_name(&lx.expect("a name")?)?;
        let ty = read_type(lx, &name, false)?;
        let mut next = lx.expect("LOOKUP_TABLE")?;
        let mut ncomp = 1;
        if !next.is("LOOKUP_TABLE") {
            ncomp = next.int().and_then(|k| usize::try_from(k).ok()).filter(|&k| k > 0).ok_or_else(|| {
                parse_error(next.line, format!("SCALARS {name}: expected LOOKUP_TABLE, found `{}`", next.show()))
            })?;
            next = lx.expect("LOOKUP_TABLE")?;
            if !next.is("LOOKUP_TABLE") {
                return Err(parse_error(
                    next.line,
                    format!("SCALARS {name}: expected LOOKUP_TABLE, found `{}`", next.show()),
                ));
            }
        }
        // The colour table's name only matters to a renderer.
        lx.expect("a lookup table name")?;
        self.read_field(lx, FieldHead { name, kind: FieldKind::Scalars, ty, line, ncomp }, n)
    }

    /// `FIELD name narrays`, then each array `name ncomp ntuples type` and
    /// its values.
    fn read_field_block(&self, lx: &mut Lexer<'_>, n: usize) -> Result<Vec<Field>> {
        lx.expect("a FIELD name")?;
        let (count, _) = lx.count("the number of FIELD arrays")?;
        let mut fields = Vec::new();
        for _ in 0..count {
            if lx.peek().is_some_and(|t| t.is("METADATA")) {
                lx.token();
                skip_metadata(lx);
            }
            let name = decode_name(&lx.expect("a FIELD array name")?)?;
            let (ncomp, _) = lx.count("a number of components")?;
            let (ntuples, line) = lx.count("a number of tuples")?;
            if ntuples != n {
                return Err(parse_error(
                    line,
                    format!("FIELD array {name}: {ntuples} tuples where its data section has {n}"),
                ));
            }
            let ty = read_type(lx, &name, false)?;
            fields.push(self.read_field(lx, FieldHead { name, kind: FieldKind::Array, ty, line, ncomp }, n)?);
        }
        Ok(fields)
    }

    /// The `n` tuples of a field.
    fn read_field(&self, lx: &mut Lexer<'_>, head: FieldHead, n: usize) -> Result<Field> {
        let FieldHead { name, kind, ty, line, ncomp } = head;
        let len = n.checked_mul(ncomp).ok_or_else(|| parse_error(line, format!("{name}: too many values")))?;
        let values = read_values(lx, &self.block(ty, line, &name), len, Num::to_f64)?;
        let values =
            Array2::from_shape_vec((n, ncomp), values).map_err(|e| parse_error(line, format!("{name}: {e}")))?;
        Ok(Field { name, kind, values })
    }

    fn finish(self, last_line: usize) -> Result<VolumeData> {
        let positions = self.points.ok_or_else(|| parse_error(last_line, "the file has no POINTS section"))?;
        let cells = match (self.cells, self.types) {
            (Some(raw), Some((types, line))) => build_cells(&raw, &types, line, self.modern)?,
            (None, None) => Vec::new(),
            (Some(raw), None) => return Err(parse_error(raw.line, "CELLS without CELL_TYPES")),
            (None, Some((_, line))) => return Err(parse_error(line, "CELL_TYPES without CELLS")),
        };
        let mesh = VolMesh::from_cells(positions.nrows(), &cells)?;
        VolumeData::new(mesh, positions)?.with_fields(self.point_fields, self.cell_fields)
    }
}

/// Skips a `METADATA` block, whose keyword was just read: lines up to the
/// first blank one.
fn skip_metadata(lx: &mut Lexer<'_>) {
    lx.rest_of_line();
    while let Some(line) = lx.rest_of_line() {
        if line.trim_ascii().is_empty() {
            break;
        }
    }
}

/// The cells of `raw`, typed by `types` (read on line `types_line`).
fn build_cells(raw: &RawCells, types: &[u32], types_line: usize, modern: bool) -> Result<Vec<Cell>> {
    if raw.ranges.len() != types.len() {
        return Err(parse_error(
            types_line,
            format!("CELL_TYPES lists {} cells, CELLS {}", types.len(), raw.ranges.len()),
        ));
    }
    let mut cells = Vec::with_capacity(types.len());
    for (c, (range, &t)) in raw.ranges.iter().zip(types).enumerate() {
        let kind = CellKind::from_vtk_type(t).ok_or_else(|| VolumeError::UnsupportedCellType {
            cell: c,
            what: format!("VTK type {t} ({})", type_name(t)),
        })?;
        let values = &raw.values[range.clone()];
        cells.push(match kind {
            CellKind::Polyhedron if modern => {
                return Err(parse_error(
                    raw.line,
                    format!(
                        "cell {c} is a polyhedron in a version 5 file, whose faces this reader does not read \
                         (save the file as version 4.2)"
                    ),
                ));
            }
            CellKind::Polyhedron => Cell::Polyhedron(polyhedron_faces(c, values, raw.line)?),
            _ => fixed_cell(c, kind, values, raw.line)?,
        });
    }
    Ok(cells)
}

/// A vertex id of cell `c`.
fn vertex_id(c: usize, id: i64, line: usize) -> Result<u32> {
    u32::try_from(id).map_err(|_| parse_error(line, format!("CELLS: cell {c}: {id} is not a vertex id")))
}

/// A cell of a fixed kind from its point ids.
fn fixed_cell(c: usize, kind: CellKind, values: &[i64], line: usize) -> Result<Cell> {
    let ids = values.iter().map(|&v| vertex_id(c, v, line)).collect::<Result<Vec<u32>>>()?;
    let wrong = || {
        let n = kind.num_vertices().unwrap_or(0);
        parse_error(
            line,
            format!("CELLS: cell {c}: a VTK {} has {n} points, the file gives {}", kind.name(), ids.len()),
        )
    };
    Ok(match kind {
        CellKind::Tetra => Cell::Tetra(ids.as_slice().try_into().map_err(|_| wrong())?),
        CellKind::Hexahedron => Cell::Hexahedron(ids.as_slice().try_into().map_err(|_| wrong())?),
        CellKind::Wedge => Cell::Wedge(ids.as_slice().try_into().map_err(|_| wrong())?),
        CellKind::Pyramid => Cell::Pyramid(ids.as_slice().try_into().map_err(|_| wrong())?),
        CellKind::Polyhedron => return Err(wrong()),
    })
}

/// The faces of a classic polyhedron entry: `nfaces`, then each face's
/// count and ids, filling the entry exactly.
fn polyhedron_faces(c: usize, values: &[i64], line: usize) -> Result<Vec<Vec<u32>>> {
    let bad = |detail: &str| parse_error(line, format!("CELLS: polyhedron {c}: {detail}"));
    let (&nf, mut rest) = values.split_first().ok_or_else(|| bad("empty face stream"))?;
    let nf = usize::try_from(nf).map_err(|_| bad("negative number of faces"))?;
    let mut faces = Vec::with_capacity(nf.min(rest.len()));
    for f in 0..nf {
        let (&k, tail) = rest.split_first().ok_or_else(|| bad(&format!("the stream ends at face {f} of {nf}")))?;
        let k = usize::try_from(k).ok().filter(|&k| k <= tail.len());
        let k = k.ok_or_else(|| bad(&format!("face {f}'s vertex count runs past the stream")))?;
        faces.push(tail[..k].iter().map(|&v| vertex_id(c, v, line)).collect::<Result<Vec<u32>>>()?);
        rest = &tail[k..];
    }
    if !rest.is_empty() {
        return Err(bad(&format!("{} values left after its {nf} faces", rest.len())));
    }
    Ok(faces)
}

/// The name of a VTK cell type, for messages.
fn type_name(t: u32) -> &'static str {
    match t {
        0 => "empty cell",
        1 => "vertex",
        2 => "poly-vertex",
        3 => "line",
        4 => "poly-line",
        5 => "triangle",
        6 => "triangle strip",
        7 => "polygon",
        8 => "pixel",
        9 => "quad",
        11 => "voxel",
        15 => "pentagonal prism",
        16 => "hexagonal prism",
        21 => "quadratic edge",
        22 => "quadratic triangle",
        23 => "quadratic quad",
        24 => "quadratic tetra",
        25 => "quadratic hexahedron",
        26 => "quadratic wedge",
        27 => "quadratic pyramid",
        28 => "biquadratic quad",
        29 => "triquadratic hexahedron",
        30 => "quadratic-linear quad",
        31 => "quadratic-linear wedge",
        32 => "biquadratic-quadratic wedge",
        33 => "biquadratic-quadratic hexahedron",
        34 => "biquadratic triangle",
        35 => "cubic line",
        36 => "quadratic polygon",
        37 => "triquadratic pyramid",
        41 => "convex point set",
        51..=59 => "parametric cell",
        60..=67 => "higher-order cell",
        68..=74 => "Lagrange cell",
        75..=81 => "Bézier cell",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------------------
// Writing.

/// Writes `data` as a VTK legacy unstructured grid file at `path` (see
/// [`write_vtk`]).
///
/// # Errors
/// [`VolumeError::Io`] naming the file: it cannot be created or written, or
/// `data` cannot be written (see [`write_vtk`]; then no file is created).
pub fn write_vtk_file(data: &VolumeData, path: impl AsRef<Path>, encoding: VtkEncoding) -> Result<()> {
    let path = path.as_ref();
    let io_err = |source| VolumeError::Io { path: path.to_path_buf(), source };
    check_writable(data).map_err(io_err)?;
    let file = File::create(path).map_err(io_err)?;
    write_vtk(data, file, encoding).map_err(io_err)
}

/// Writes `data` as a VTK legacy unstructured grid, version 3.0, to `w`
/// (buffered internally; see the [module docs](self) for the layout).
///
/// # Errors
/// Errors of `w`, and [`io::ErrorKind::InvalidInput`], before anything is
/// written, when `data` does not fit the format: more vertices or cell
/// values than 32-bit `int`s hold, a field without components or with an
/// empty name, `VECTORS` or `NORMALS` of other than three components, or
/// positions or fields whose lengths do not match the mesh.
pub fn write_vtk(data: &VolumeData, w: impl Write, encoding: VtkEncoding) -> io::Result<()> {
    let size = check_writable(data)?;
    let mesh = &data.mesh;
    let (nv, nc) = (mesh.num_vertices(), mesh.num_cells());
    let binary = encoding == VtkEncoding::Binary;
    let mut out =
        Writer { w: BufWriter::new(w), binary, row: Vec::new(), ryu: ryu::Buffer::new(), itoa: itoa::Buffer::new() };
    writeln!(
        out.w,
        "# vtk DataFile Version 3.0\nwritten by subla: {nv} vertices, {nc} cells\n{}\nDATASET UNSTRUCTURED_GRID",
        if binary { "BINARY" } else { "ASCII" }
    )?;
    writeln!(out.w, "POINTS {nv} double")?;
    out.floats(data.vertices.iter().copied(), 3)?;
    out.cells(mesh, size)?;
    out.fields("POINT_DATA", nv, &data.point_fields)?;
    out.fields("CELL_DATA", nc, &data.cell_fields)?;
    out.w.flush()
}

/// Writes a point cloud — `points` (`n × 3`) with per-point `fields` —
/// as a VTK legacy unstructured grid of `VTK_VERTEX` cells (one per point),
/// version 3.0: how samples of a limit volume are written for ParaView.
/// The readers of this module read volumes only and refuse it.
///
/// # Errors
/// Errors of `w`; [`io::ErrorKind::InvalidInput`], before anything is
/// written, for more points than 32-bit `int`s count, `points` without
/// three columns, or a field that does not fit (as [`write_vtk`]).
pub fn write_vtk_points(
    points: ndarray::ArrayView2<'_, f64>,
    fields: &[Field],
    w: impl Write,
    encoding: VtkEncoding,
) -> io::Result<()> {
    let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
    let n = points.nrows();
    if points.ncols() != 3 {
        return Err(invalid(format!("points have {} columns, not 3", points.ncols())));
    }
    if 2 * n > i32::MAX as usize {
        return Err(invalid(format!("{n} points: VTK cell lists hold 32-bit ints")));
    }
    for f in fields {
        let (r, cols) = f.values.dim();
        if f.name.is_empty()
            || r != n
            || cols == 0
            || (matches!(f.kind, FieldKind::Vectors | FieldKind::Normals) && cols != 3)
        {
            return Err(invalid(format!("point field {:?}: {r} × {cols} for {n} points", f.name)));
        }
    }
    let binary = encoding == VtkEncoding::Binary;
    let mut out =
        Writer { w: BufWriter::new(w), binary, row: Vec::new(), ryu: ryu::Buffer::new(), itoa: itoa::Buffer::new() };
    writeln!(
        out.w,
        "# vtk DataFile Version 3.0\nwritten by subla: {n} points\n{}\nDATASET UNSTRUCTURED_GRID",
        if binary { "BINARY" } else { "ASCII" }
    )?;
    writeln!(out.w, "POINTS {n} double")?;
    out.floats(points.iter().copied(), 3)?;
    writeln!(out.w, "CELLS {n} {}", 2 * n)?;
    for i in 0..n {
        out.row.clear();
        out.row.extend([1, i as i32]);
        out.int_row()?;
    }
    out.end_ints()?;
    writeln!(out.w, "CELL_TYPES {n}")?;
    for _ in 0..n {
        out.row.clear();
        out.row.push(1);
        out.int_row()?;
    }
    out.end_ints()?;
    out.fields("POINT_DATA", n, fields)?;
    out.w.flush()
}

/// Number of values cell `c` takes in a classic `CELLS` list.
fn cell_size(mesh: &VolMesh, c: usize) -> usize {
    if mesh.kind(c) == CellKind::Polyhedron {
        let mut size = 2;
        mesh.for_each_cell_face(c, |f| size += 1 + f.len());
        size
    } else {
        1 + mesh.cell_vertices(c).len()
    }
}

/// Checks that `data` fits the format; returns the size of the `CELLS`
/// list.
fn check_writable(data: &VolumeData) -> io::Result<usize> {
    let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
    let mesh = &data.mesh;
    let limit = i32::MAX as usize;
    if mesh.num_vertices() > limit + 1 {
        return Err(invalid(format!("{} vertices: VTK cell lists hold 32-bit ids", mesh.num_vertices())));
    }
    if data.vertices.dim() != (mesh.num_vertices(), 3) {
        return Err(invalid(format!("positions are {:?} for {} vertices", data.vertices.dim(), mesh.num_vertices())));
    }
    let size = (0..mesh.num_cells()).try_fold(0usize, |s, c| s.checked_add(cell_size(mesh, c)).filter(|&s| s <= limit));
    let size = size.ok_or_else(|| invalid("the cell list is longer than 32-bit VTK files hold".into()))?;
    for (fields, rows, of) in
        [(&data.point_fields, mesh.num_vertices(), "point"), (&data.cell_fields, mesh.num_cells(), "cell")]
    {
        for f in fields {
            let (r, cols) = f.values.dim();
            let problem = if f.name.is_empty() {
                "an empty name".to_string()
            } else if r != rows {
                format!("{r} rows for {rows} {of}s")
            } else if cols == 0 {
                "no components".to_string()
            } else if matches!(f.kind, FieldKind::Vectors | FieldKind::Normals) && cols != 3 {
                format!("{cols} components; VECTORS and NORMALS have 3")
            } else {
                continue;
            };
            return Err(invalid(format!("{of} field {:?}: {problem}", f.name)));
        }
    }
    Ok(size)
}

/// The writing state: the output, its encoding, and scratch buffers.
struct Writer<W: Write> {
    w: BufWriter<W>,
    binary: bool,
    row: Vec<i32>,
    ryu: ryu::Buffer,
    itoa: itoa::Buffer,
}

impl<W: Write> Writer<W> {
    /// Writes doubles, `per_line` to a line in ASCII; a binary block ends
    /// with a line break, as VTK writes it.
    fn floats(&mut self, values: impl Iterator<Item = f64>, per_line: usize) -> io::Result<()> {
        if self.binary {
            for x in values {
                self.w.write_all(&x.to_be_bytes())?;
            }
            return self.w.write_all(b"\n");
        }
        for (i, x) in values.enumerate() {
            self.w.write_all(format_f64(&mut self.ryu, x).as_bytes())?;
            self.w.write_all(if (i + 1) % per_line == 0 { b"\n" } else { b" " })?;
        }
        Ok(())
    }

    /// Writes `self.row` as `int`s, one line in ASCII.
    fn int_row(&mut self) -> io::Result<()> {
        for (i, &v) in self.row.iter().enumerate() {
            if self.binary {
                self.w.write_all(&v.to_be_bytes())?;
            } else {
                self.w.write_all(if i == 0 { b"" } else { b" " })?;
                self.w.write_all(self.itoa.format(v).as_bytes())?;
            }
        }
        if self.binary { Ok(()) } else { self.w.write_all(b"\n") }
    }

    /// Ends a block of `int`s (binary blocks end with a line break).
    fn end_ints(&mut self) -> io::Result<()> {
        if self.binary { self.w.write_all(b"\n") } else { Ok(()) }
    }

    /// `CELLS` (polyhedra as their face stream) and `CELL_TYPES`; ids fit
    /// `i32` ([`check_writable`]).
    fn cells(&mut self, mesh: &VolMesh, size: usize) -> io::Result<()> {
        let nc = mesh.num_cells();
        writeln!(self.w, "CELLS {nc} {size}")?;
        for c in 0..nc {
            self.row.clear();
            if mesh.kind(c) == CellKind::Polyhedron {
                self.row.extend([0, 0]);
                mesh.for_each_cell_face(c, |f| {
                    self.row.push(f.len() as i32);
                    self.row.extend(f.iter().map(|&v| v as i32));
                });
                self.row[0] = self.row.len() as i32 - 1;
                self.row[1] = mesh.cell_faces(c).len() as i32;
            } else {
                let v = mesh.cell_vertices(c);
                self.row.push(v.len() as i32);
                self.row.extend(v.iter().map(|&v| v as i32));
            }
            self.int_row()?;
        }
        self.end_ints()?;
        writeln!(self.w, "CELL_TYPES {nc}")?;
        for c in 0..nc {
            self.row.clear();
            self.row.push(mesh.kind(c).vtk_type().into());
            self.int_row()?;
        }
        self.end_ints()
    }

    /// A `POINT_DATA` or `CELL_DATA` section of `rows` tuples.
    fn fields(&mut self, section: &str, rows: usize, fields: &[Field]) -> io::Result<()> {
        if fields.is_empty() {
            return Ok(());
        }
        writeln!(self.w, "{section} {rows}")?;
        let arrays = |a: &Field, b: &Field| a.kind == FieldKind::Array && b.kind == FieldKind::Array;
        for run in fields.chunk_by(arrays) {
            let f = &run[0];
            let (name, ncomp) = (encode_name(&f.name), f.values.ncols());
            match f.kind {
                FieldKind::Scalars => writeln!(self.w, "SCALARS {name} double {ncomp}\nLOOKUP_TABLE default")?,
                FieldKind::Vectors => writeln!(self.w, "VECTORS {name} double")?,
                FieldKind::Normals => writeln!(self.w, "NORMALS {name} double")?,
                FieldKind::Array => {
                    writeln!(self.w, "FIELD FieldData {}", run.len())?;
                    for a in run {
                        writeln!(self.w, "{} {} {rows} double", encode_name(&a.name), a.values.ncols())?;
                        self.floats(a.values.iter().copied(), a.values.ncols())?;
                    }
                    continue;
                }
            }
            self.floats(f.values.iter().copied(), ncomp)?;
        }
        Ok(())
    }
}
