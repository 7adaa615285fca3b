//! Wavefront OBJ reading and writing, with OpenSubdiv's shape tags.
//!
//! # Reading
//! * `v x y z [more…]` (every `v` line must carry the same number of
//!   values; they all become channels of [`MeshData::vertices`]), `vt`, `vn`;
//! * `f` (and `fo`) in every index form: `v`, `v/t`, `v//n`, `v/t/n`;
//!   positive (1-based) and negative (relative) indices; texture coordinates
//!   and normals are kept only when every corner of every face has them;
//! * `g` and `o`: flattened into one mesh, their face ranges kept in
//!   [`MeshData::groups`]; `s`, `usemtl`, `mtllib`, `l`, `p` and the
//!   free-form geometry statements are skipped;
//! * comments (`#`); the comment `# osd_ref: lefthanded` sets
//!   [`MeshData::left_handed`];
//! * `\` line continuation, CRLF line ends;
//! * shape tags `t <name> <nint>/<nfloat>/<nstring> ints… floats… strings…`:
//!   `crease` (vertex pairs; one sharpness for all, or one per pair),
//!   `corner`, `hole`, `interpolateboundary`,
//!   `facevaryinginterpolateboundary`, `creasemethod`, `smoothtriangles`.
//!   Hierarchical edits (`vertexedit`, `edgeedit`, `faceedit`) are ignored,
//!   as OpenSubdiv's Far ignores them, and so are unknown tag names.
//!   Unlike OpenSubdiv, a negative sharpness is an error, not clamped to 0.
//!
//! The channels of `v` lines are named by [`obj_channel_names`].
//!
//! Input is read as it is parsed ([`read_obj_from`] takes any reader: a
//! pipe or a FIFO works): the text is cut at line ends into blocks that are
//! parsed in parallel, a batch at a time, and joined; relative indices are
//! resolved after the join. Reading stops at a NUL byte and after the first
//! batch with an error, so binary or endless input is refused after a few
//! megabytes at most. Errors name the file line.
//!
//! A first line `# written by subla: N vertices, M faces` (what
//! [`write_obj`] writes) is checked against the body: fewer is
//! [`MeshError::Truncated`] (an interrupted write), more is
//! [`MeshError::MoreThanDeclared`].
//!
//! # Writing
//! Floats use the shortest representation that reads back to the same bits,
//! so `f64` data survive a round trip exactly; every channel is written on
//! the `v` lines, groups as `g`/`o` before their first face, tags as shape
//! tags (non-default options only). Channel names are not written (see
//! [`MeshData::dropped_by`]).

use std::io::{Read, Write};
use std::path::Path;

use ndarray::Array2;
use rayon::prelude::*;
use subla_algebra::Par;

use crate::data::{FaceVarying, FacesData, Group, GroupKind, MeshData, Skipped, default_channel_name};
use crate::error::{Location, MeshError, Result, excerpt, to_u32};
use crate::mesh::{MeshBuilder, Validation};
use crate::tags::{BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, Options, TriangleSubdivision};

/// Reads an OBJ file.
///
/// # Errors
/// [`MeshError::Io`], or any parse or validation error (with its line).
pub fn read_obj(path: impl AsRef<Path>, validation: Validation) -> Result<MeshData> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| MeshError::Io { path: path.to_path_buf(), source })?;
    read_obj_from(file, validation, path)
}

/// Reads OBJ text from `reader` (a file, a pipe, a FIFO) as it comes, in
/// blocks parsed in parallel; reading stops at the first block holding an
/// error, so that binary data or an endless stream is refused after a few
/// megabytes (a NUL byte at once). `path` names the input in errors.
///
/// # Errors
/// [`MeshError::Io`] naming `path`, or any parse or validation error (with
/// its line).
pub fn read_obj_from(reader: impl Read, validation: Validation, path: impl AsRef<Path>) -> Result<MeshData> {
    let path = path.as_ref();
    let chunks = read_chunks(reader, path)?;
    from_chunks(chunks, validation, &path.display().to_string())
}

/// Bytes asked of the reader at a time: a NUL byte stops the reading
/// within this much.
const READ: usize = 1 << 16;
/// Bytes per parsed piece.
const BLOCK: usize = 1 << 22;

/// Reads `r` into at least `want` more bytes of `buf` (fewer at the end of
/// the input); returns the position of the first NUL byte read, if any,
/// and whether the input ended.
fn fill(r: &mut impl Read, buf: &mut Vec<u8>, want: usize, path: &Path) -> Result<(Option<usize>, bool)> {
    let target = buf.len() + want;
    while buf.len() < target {
        let start = buf.len();
        buf.resize(start + READ, 0);
        let n = loop {
            match r.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => return Err(MeshError::Io { path: path.to_path_buf(), source }),
            }
        };
        buf.truncate(start + n);
        if n == 0 {
            return Ok((None, true));
        }
        if let Some(p) = memchr::memchr(0, &buf[start..]) {
            return Ok((Some(start + p), false));
        }
    }
    Ok((None, false))
}

/// The end of the last complete logical line in `buf` (after a `\n` that
/// does not continue the line), looking only at newlines from `from` on.
fn last_cut(buf: &[u8], from: usize) -> Option<usize> {
    let mut end = buf.len();
    while let Some(p) = memchr::memrchr(b'\n', &buf[from..end]) {
        let nl = from + p;
        if continued(&buf[..nl]).is_none() {
            return Some(nl + 1);
        }
        end = nl;
    }
    None
}

/// Why a line that runs on for more than a block cannot be OBJ: its first
/// token is not a statement keyword (or never ends).
fn long_line_error(line: &[u8]) -> Option<MeshError> {
    let mut tok = Tokens { s: line, i: 0 };
    let Some(key) = tok.next() else {
        return Some(MeshError::NotText {
            at: Location::line(1),
            reason: format!("a line of more than {BLOCK} bytes of spaces is not an OBJ statement"),
        });
    };
    if key.len() == line.len() - (key.as_ptr() as usize - line.as_ptr() as usize) && key[0] != b'#' {
        return Some(MeshError::NotText {
            at: Location::line(1),
            reason: format!(
                "a line of more than {} bytes without a space or line end ({:?}…) is not an OBJ statement",
                BLOCK,
                excerpt(key)
            ),
        });
    }
    match key {
        b"v" | b"vt" | b"vn" | b"f" | b"fo" | b"g" | b"o" | b"t" => None,
        _ if key[0] == b'#' => None,
        _ => skip_statement(key, 1).err(),
    }
}

/// Reads and parses `r` block by block (each batch of blocks in parallel),
/// up to the end or to the first batch with an error.
fn read_chunks(mut r: impl Read, path: &Path) -> Result<Vec<Chunk>> {
    let batch = 2 * rayon::current_num_threads();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut first = true;
    let mut done = false;
    while !done {
        let mut pieces: Vec<Vec<u8>> = Vec::with_capacity(batch);
        let mut stop: Option<MeshError> = None;
        while pieces.len() < batch && !done {
            let mut buf = std::mem::take(&mut carry);
            let from = buf.len();
            let (nul, end) = fill(&mut r, &mut buf, BLOCK, path)?;
            if let Some(p) = nul {
                // Parse up to the NUL byte: its line (or an earlier one) is
                // the error.
                buf.truncate(p + 1);
                done = true;
            }
            if std::mem::take(&mut first) && buf.starts_with(b"\xEF\xBB\xBF") {
                buf.drain(..3);
            }
            done |= end;
            if done {
                pieces.push(buf);
                break;
            }
            match last_cut(&buf, from.saturating_sub(1)) {
                Some(cut) => {
                    carry = buf.split_off(cut);
                    pieces.push(buf);
                }
                None => {
                    // One line so far, longer than a block: refuse it early
                    // if it cannot be a statement.
                    if let Some(e) = long_line_error(&buf) {
                        stop = Some(e);
                        done = true;
                    }
                    carry = buf;
                }
            }
        }
        let parsed: Vec<Chunk> = if pieces.len() > 1 {
            pieces.par_iter().map(|p| parse_chunk(p)).collect()
        } else {
            pieces.iter().map(|p| parse_chunk(p)).collect()
        };
        drop(pieces);
        done |= parsed.iter().any(|c| c.error.is_some());
        chunks.extend(parsed);
        if let Some(e) = stop {
            chunks.push(Chunk { error: Some(e), ..Chunk::default() });
        }
    }
    Ok(chunks)
}

/// Parses OBJ text.
///
/// # Errors
/// Any parse or validation error, naming the line.
pub fn parse_obj(bytes: &[u8], validation: Validation) -> Result<MeshData> {
    parse_obj_named(bytes, validation, "OBJ input")
}

const NONE: i64 = i64::MIN;

/// A parsed `t` statement.
#[derive(Debug)]
struct Tag {
    line: usize,
    name: String,
    ints: Vec<i64>,
    floats: Vec<f32>,
    strings: Vec<String>,
}

/// What one chunk of lines yields. Indices are chunk-local: a relative
/// index is stored as `local count before the line + r` and listed in
/// `rel_*` with that count, to be shifted by the chunk's offset.
#[derive(Default, Debug)]
struct Chunk {
    lines: usize,
    v: Vec<f64>,
    v_dim: usize,
    v_dim_line: usize,
    nv: usize,
    vt: Vec<f64>,
    vt_dim: usize,
    nvt: usize,
    vn: Vec<f64>,
    nvn: usize,
    face_ptr: Vec<u32>,
    fv: Vec<i64>,
    ft: Vec<i64>,
    fn_: Vec<i64>,
    rel_v: Vec<(u32, u32)>,
    rel_t: Vec<(u32, u32)>,
    rel_n: Vec<(u32, u32)>,
    face_line: Vec<u32>,
    groups: Vec<(GroupKind, String, u32)>,
    tags: Vec<Tag>,
    left_handed: bool,
    error: Option<MeshError>,
    /// Line (chunk-local, 1-based), vertex, channel, value and text of the
    /// first vertex value that is not finite.
    nonfinite: Option<(usize, usize, usize, f64, String)>,
    /// Vertex and face counts of a counts comment on (chunk-local) line 1.
    declared: Option<(usize, usize)>,
    /// Statements skipped: keyword (its first 40 bytes) to count and first
    /// (chunk-local) line.
    skipped: std::collections::BTreeMap<Vec<u8>, (u64, usize)>,
}

/// Distinct skipped keywords listed one by one, in the order the file
/// first uses them; the others are counted together.
const MAX_SKIPPED_KINDS: usize = 16;

#[inline]
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r' || b == 0x0c || b == 0x0b
}

/// Splits a logical line into whitespace-separated tokens.
#[derive(Clone)]
struct Tokens<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        while self.i < self.s.len() && is_space(self.s[self.i]) {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return None;
        }
        let start = self.i;
        while self.i < self.s.len() && !is_space(self.s[self.i]) {
            self.i += 1;
        }
        Some(&self.s[start..self.i])
    }
}

#[inline]
fn parse_f64(t: &[u8], what: &'static str, line: usize) -> Result<f64> {
    fast_float2::parse::<f64, _>(t).map_err(|_| MeshError::MalformedNumber {
        at: Location::line(line),
        what,
        text: excerpt(t),
    })
}

#[inline]
fn parse_i64(t: &[u8], what: &'static str, line: usize) -> Result<i64> {
    let err = || MeshError::MalformedNumber { at: Location::line(line), what, text: excerpt(t) };
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() {
        return Err(err());
    }
    let mut v: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(err());
        }
        v = v.checked_mul(10).and_then(|v| v.checked_add(i64::from(d))).ok_or_else(err)?;
    }
    Ok(if neg { -v } else { v })
}

const KNOWN_SKIPPED: &[&[u8]] = &[
    b"s",
    b"usemtl",
    b"mtllib",
    b"l",
    b"p",
    b"vp",
    b"cstype",
    b"deg",
    b"bmat",
    b"step",
    b"curv",
    b"curv2",
    b"surf",
    b"parm",
    b"trim",
    b"hole",
    b"scrv",
    b"sp",
    b"end",
    b"con",
    b"mg",
    b"bevel",
    b"c_interp",
    b"d_interp",
    b"lod",
    b"maplib",
    b"usemap",
    b"shadow_obj",
    b"trace_obj",
    b"ctech",
    b"stech",
    b"call",
    b"csh",
];

/// A malformed statement on `line`.
fn malformed(line: usize, statement: &str, reason: String) -> MeshError {
    MeshError::MalformedStatement { at: Location::line(line), statement: statement.into(), reason }
}

/// Parses every token left on the line as a float into `out`; returns how
/// many there were.
#[inline]
fn push_floats(out: &mut Vec<f64>, tok: Tokens<'_>, what: &'static str, line: usize) -> Result<usize> {
    let start = out.len();
    for t in tok {
        out.push(parse_f64(t, what, line)?);
    }
    Ok(out.len() - start)
}

/// A statement this reader does not use: skipped if its keyword is one,
/// else the line is not OBJ text.
fn skip_statement(key: &[u8], line: usize) -> Result<()> {
    // An unknown but well-formed keyword is skipped too.
    if KNOWN_SKIPPED.contains(&key) || key.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_') {
        return Ok(());
    }
    Err(MeshError::NotText {
        at: Location::line(line),
        reason: format!("unexpected bytes {:?} at the start of a line", excerpt(key)),
    })
}

/// A corner's index as written (1-based, or negative: relative to the
/// `count` elements before the line) as a chunk-local 0-based one. A
/// relative index is listed in `rel` with its corner `pos` and `count`, for
/// the join to shift by the chunk's offset.
#[inline]
fn local_index(
    text: &[u8],
    count: usize,
    rel: &mut Vec<(u32, u32)>,
    pos: usize,
    at: FaceAt,
    what: &'static str,
) -> Result<i64> {
    let r = parse_i64(text, what, at.line)?;
    if r > 0 {
        Ok(r - 1)
    } else if r < 0 {
        rel.push((pos as u32, count as u32));
        Ok(count as i64 + r)
    } else {
        Err(MeshError::IndexOutOfRange { at: Location::line(at.line), face: at.face, index: 0, num_vertices: count })
    }
}

/// A face and its line, for errors.
#[derive(Clone, Copy)]
struct FaceAt {
    line: usize,
    face: usize,
}

impl Chunk {
    fn fail(&mut self, e: MeshError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Parses one logical line (`line` is chunk-local, 1-based): hands it to
    /// the handler of its statement.
    fn line(&mut self, text: &[u8], line: usize) -> Result<()> {
        if memchr::memchr(0, text).is_some() {
            return Err(MeshError::NotText { at: Location::line(line), reason: "NUL byte (binary data?)".into() });
        }
        let mut tok = Tokens { s: text, i: 0 };
        let Some(key) = tok.next() else { return Ok(()) };
        match key {
            b"v" => self.vertex(tok, line),
            b"vt" => self.texcoord(tok, line),
            b"vn" => self.normal(tok, line),
            b"f" | b"fo" => self.face(tok, line),
            b"g" => self.group(GroupKind::Group, tok),
            b"o" => self.group(GroupKind::Object, tok),
            b"t" => self.tag(tok, line),
            _ if key[0] == b'#' => self.comment(text, line),
            _ => {
                skip_statement(key, line)?;
                self.note_skipped(key, line);
                Ok(())
            }
        }
    }

    /// Counts a skipped statement of keyword `key` on `line`.
    fn note_skipped(&mut self, key: &[u8], line: usize) {
        let key = &key[..key.len().min(40)];
        match self.skipped.get_mut(key) {
            Some(s) => s.0 += 1,
            None => {
                self.skipped.insert(key.to_vec(), (1, line));
            }
        }
    }

    /// `v x y z [more…]`: at least 3 values, as many as on the first `v`
    /// line. The first value that is not finite is noted, not an error
    /// yet: an earlier chunk may hold an earlier error.
    fn vertex(&mut self, tok: Tokens<'_>, line: usize) -> Result<()> {
        let start = self.v.len();
        let d = push_floats(&mut self.v, tok.clone(), "vertex coordinate", line)?;
        if self.nonfinite.is_none()
            && let Some(channel) = self.v[start..].iter().position(|x| !x.is_finite())
        {
            let text = tok.clone().nth(channel).map(excerpt).unwrap_or_default();
            self.nonfinite = Some((line, self.nv, channel, self.v[start + channel], text));
        }
        if d < 3 {
            return Err(malformed(line, "v", format!("{d} coordinates, at least 3 required")));
        }
        if self.v_dim == 0 {
            self.v_dim = d;
            self.v_dim_line = line;
        } else if d != self.v_dim {
            return Err(malformed(line, "v", format!("{d} values, but line {} has {}", self.v_dim_line, self.v_dim)));
        }
        self.nv += 1;
        Ok(())
    }

    /// `vt u [v [w]]`: the same number of values on every `vt` line.
    fn texcoord(&mut self, tok: Tokens<'_>, line: usize) -> Result<()> {
        let d = push_floats(&mut self.vt, tok, "texture coordinate", line)?;
        if !(1..=3).contains(&d) || (self.vt_dim != 0 && d != self.vt_dim) {
            return Err(malformed(line, "vt", format!("{d} values (1 to 3, the same on every vt line, expected)")));
        }
        self.vt_dim = d;
        self.nvt += 1;
        Ok(())
    }

    /// `vn x y z`.
    fn normal(&mut self, tok: Tokens<'_>, line: usize) -> Result<()> {
        let d = push_floats(&mut self.vn, tok, "normal component", line)?;
        if d != 3 {
            return Err(malformed(line, "vn", format!("{d} values, 3 expected")));
        }
        self.nvn += 1;
        Ok(())
    }

    /// `f` / `fo`: corners `v`, `v/t`, `v//n` or `v/t/n`; a missing `t` or
    /// `n` is stored as [`NONE`].
    fn face(&mut self, tok: Tokens<'_>, line: usize) -> Result<()> {
        if self.face_ptr.is_empty() {
            self.face_ptr.push(0);
        }
        let at = FaceAt { line, face: self.face_ptr.len() - 1 };
        let start = self.fv.len();
        for t in tok {
            let mut parts = t.splitn(3, |&b| b == b'/');
            let pos = self.fv.len();
            let vi = local_index(parts.next().unwrap_or(b""), self.nv, &mut self.rel_v, pos, at, "vertex index")?;
            self.fv.push(vi);
            let ti = match parts.next() {
                Some(x) if !x.is_empty() => local_index(x, self.nvt, &mut self.rel_t, pos, at, "texture index")?,
                _ => NONE,
            };
            self.ft.push(ti);
            let ni = match parts.next() {
                Some(x) if !x.is_empty() => local_index(x, self.nvn, &mut self.rel_n, pos, at, "normal index")?,
                _ => NONE,
            };
            self.fn_.push(ni);
        }
        let n = self.fv.len() - start;
        if n < 3 {
            return Err(MeshError::FaceTooSmall { at: Location::line(line), face: at.face, order: n });
        }
        self.face_ptr.push(to_u32(self.fv.len(), "number of corners")?);
        self.face_line.push(line as u32);
        Ok(())
    }

    /// `g` / `o` with its names (joined by a space): a group starting at
    /// the next face.
    fn group(&mut self, kind: GroupKind, tok: Tokens<'_>) -> Result<()> {
        let names: Vec<String> = tok.map(|t| String::from_utf8_lossy(t).into_owned()).collect();
        self.groups.push((kind, names.join(" "), self.face_ptr.len().saturating_sub(1) as u32));
        Ok(())
    }

    /// A comment: only `# osd_ref: lefthanded` means something, and the
    /// counts comment of [`write_obj`] on line 1.
    fn comment(&mut self, text: &[u8], line: usize) -> Result<()> {
        let rest = &text[text.iter().position(|&b| b == b'#').unwrap_or(0) + 1..];
        let mut t = Tokens { s: rest, i: 0 };
        if t.next() == Some(b"osd_ref:") && t.next() == Some(b"lefthanded") {
            self.left_handed = true;
        }
        if line == 1
            && let Some(counts) = rest.trim_ascii_start().strip_prefix(COUNTS_COMMENT.as_bytes())
        {
            self.declared = parse_counts(counts);
        }
        Ok(())
    }

    /// `t <name> <nint>/<nfloat>/<nstring> ints… floats… strings…`: kept
    /// as read; what it means is applied to the mesh after the join.
    fn tag(&mut self, mut tok: Tokens<'_>, line: usize) -> Result<()> {
        let bad = |reason: String| malformed(line, "t", reason);
        let raw_name = tok.next().ok_or_else(|| bad("missing tag name".into()))?;
        let name = String::from_utf8_lossy(raw_name).into_owned();
        // In messages, a name from the file is shortened.
        let shown = excerpt(raw_name);
        let counts = tok.next().ok_or_else(|| bad(format!("{shown}: missing <nint>/<nfloat>/<nstring> counts")))?;
        let n = tag_counts(counts, &shown, line)?;
        let args: Vec<&[u8]> = tok.collect();
        if args.len() != n[0] + n[1] + n[2] {
            return Err(bad(format!(
                "{shown}: counts {}/{}/{} announce {} arguments, found {}",
                n[0],
                n[1],
                n[2],
                n[0] + n[1] + n[2],
                args.len()
            )));
        }
        let ints = args[..n[0]].iter().map(|t| parse_i64(t, "tag integer", line)).collect::<Result<Vec<_>>>()?;
        let floats = args[n[0]..n[0] + n[1]]
            .iter()
            .map(|t| parse_f64(t, "tag float", line).map(|x| x as f32))
            .collect::<Result<Vec<_>>>()?;
        let strings = args[n[0] + n[1]..].iter().map(|t| String::from_utf8_lossy(t).into_owned()).collect();
        self.tags.push(Tag { line, name, ints, floats, strings });
        Ok(())
    }
}

/// The `<nint>/<nfloat>/<nstring>` argument counts of tag `name`.
fn tag_counts(counts: &[u8], name: &str, line: usize) -> Result<[usize; 3]> {
    let c: Vec<&[u8]> = counts.split(|&b| b == b'/').collect();
    if c.len() != 3 {
        return Err(malformed(
            line,
            "t",
            format!("{name}: counts must be <nint>/<nfloat>/<nstring>, found {:?}", excerpt(counts)),
        ));
    }
    let mut n = [0usize; 3];
    for (k, x) in c.iter().enumerate() {
        let v = parse_i64(x, "tag argument count", line)?;
        if !(0..=1 << 24).contains(&v) {
            return Err(malformed(line, "t", format!("{name}: argument count {v} out of range")));
        }
        n[k] = v as usize;
    }
    Ok(n)
}

/// Cuts `bytes` into about `n` pieces at line ends that do not continue
/// the line (`\` before the newline).
fn cut_points(bytes: &[u8], n: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    for k in 1..n {
        let mut at = (bytes.len() * k / n).max(*cuts.last().unwrap_or(&0));
        loop {
            match memchr::memchr(b'\n', &bytes[at..]) {
                None => {
                    at = bytes.len();
                    break;
                }
                Some(p) => {
                    let nl = at + p;
                    at = nl + 1;
                    if continued(&bytes[..nl]).is_none() {
                        break;
                    }
                }
            }
        }
        if at > *cuts.last().unwrap_or(&0) && at < bytes.len() {
            cuts.push(at);
        }
    }
    cuts.push(bytes.len());
    cuts
}

/// Where the text of a physical line ends before its continuation mark
/// (`\`, then an optional `\r`), or `None` if the line does not continue.
#[inline]
fn continued(t: &[u8]) -> Option<usize> {
    let t = t.strip_suffix(b"\r").unwrap_or(t);
    t.strip_suffix(b"\\").map(<[u8]>::len)
}

/// The logical lines of a chunk: its physical lines, those ending in `\`
/// joined with the next.
struct LogicalLines<'a> {
    bytes: &'a [u8],
    i: usize,
    /// Physical lines read so far.
    line: usize,
    /// The current continued line, joined (rare: copies only then).
    joined: Vec<u8>,
}

impl<'a> LogicalLines<'a> {
    /// The next physical line, without its `\n`.
    #[inline]
    fn physical(&mut self) -> &'a [u8] {
        self.line += 1;
        let end = memchr::memchr(b'\n', &self.bytes[self.i..]).map_or(self.bytes.len(), |p| self.i + p);
        let text = &self.bytes[self.i..end];
        self.i = end + 1;
        text
    }

    /// The next logical line and the number of its first physical line.
    #[inline]
    fn next_line(&mut self) -> Option<(&[u8], usize)> {
        if self.i >= self.bytes.len() {
            return None;
        }
        let first = self.line + 1;
        let text = self.physical();
        let Some(end) = continued(text) else { return Some((text, first)) };
        self.joined.clear();
        self.joined.extend_from_slice(&text[..end]);
        self.joined.push(b' ');
        while self.i < self.bytes.len() {
            let t = self.physical();
            let end = continued(t);
            self.joined.extend_from_slice(&t[..end.unwrap_or(t.len())]);
            self.joined.push(b' ');
            if end.is_none() {
                break;
            }
        }
        Some((&self.joined, first))
    }
}

/// Parses one piece of the text, up to its first error.
fn parse_chunk(bytes: &[u8]) -> Chunk {
    let mut c = Chunk::default();
    let mut lines = LogicalLines { bytes, i: 0, line: 0, joined: Vec::new() };
    while let Some((text, line)) = lines.next_line() {
        if let Err(e) = c.line(text, line) {
            c.fail(e);
            break;
        }
    }
    c.lines = lines.line;
    c
}

/// Cuts the text at line ends and parses the pieces (in parallel when
/// there are several).
fn parse_chunks(bytes: &[u8]) -> Vec<Chunk> {
    let nchunks = (bytes.len() / (1 << 20)).clamp(1, 4 * rayon::current_num_threads());
    let cuts = cut_points(bytes, nchunks);
    let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
    if pieces.len() > 1 {
        pieces.par_iter().map(|p| parse_chunk(p)).collect()
    } else {
        pieces.iter().map(|p| parse_chunk(p)).collect()
    }
}

/// Shifts a chunk-local location by the lines before the chunk.
fn shift_error(e: MeshError, lines_before: usize, faces_before: usize) -> MeshError {
    let fix = |at: Location| Location { line: at.line.map(|l| l + lines_before), offset: at.offset };
    match e {
        MeshError::MalformedNumber { at, what, text } => MeshError::MalformedNumber { at: fix(at), what, text },
        MeshError::MalformedStatement { at, statement, reason } => {
            MeshError::MalformedStatement { at: fix(at), statement, reason }
        }
        MeshError::NotText { at, reason } => MeshError::NotText { at: fix(at), reason },
        MeshError::FaceTooSmall { at, face, order } => {
            MeshError::FaceTooSmall { at: fix(at), face: face + faces_before, order }
        }
        MeshError::IndexOutOfRange { at, face, index, num_vertices } => {
            MeshError::IndexOutOfRange { at: fix(at), face: face + faces_before, index, num_vertices }
        }
        other => other,
    }
}

/// How many lines, faces, `v`, `vt`, `vn` and corners come before a chunk
/// (its offsets), or are in the whole file.
#[derive(Clone, Copy, Default, Debug)]
struct Counts {
    lines: usize,
    faces: usize,
    v: usize,
    vt: usize,
    vn: usize,
    corners: usize,
}

impl Counts {
    /// These counts followed by chunk `c`'s.
    fn plus(self, c: &Chunk) -> Counts {
        Counts {
            lines: self.lines + c.lines,
            faces: self.faces + c.face_ptr.len().saturating_sub(1),
            v: self.v + c.nv,
            vt: self.vt + c.nvt,
            vn: self.vn + c.nvn,
            corners: self.corners + c.fv.len(),
        }
    }
}

/// The row widths of `v` and `vt` data, the same in every chunk.
#[derive(Default, Debug)]
struct Widths {
    v: usize,
    /// The first `v` line (file line).
    v_line: usize,
    vt: usize,
}

impl Widths {
    /// Takes chunk `c`'s widths, checked against the chunks before it.
    fn join(&mut self, c: &Chunk, lines_before: usize) -> Result<()> {
        if c.nv > 0 {
            if self.v == 0 {
                self.v = c.v_dim;
                self.v_line = c.v_dim_line + lines_before;
            } else if c.v_dim != self.v {
                return Err(malformed(
                    c.v_dim_line + lines_before,
                    "v",
                    format!("{} values, but line {} has {}", c.v_dim, self.v_line, self.v),
                ));
            }
        }
        if c.nvt > 0 {
            if self.vt != 0 && c.vt_dim != self.vt {
                return Err(MeshError::MalformedStatement {
                    at: Location::none(),
                    statement: "vt".into(),
                    reason: "texture coordinates of different sizes".into(),
                });
            }
            self.vt = c.vt_dim;
        }
        Ok(())
    }
}

/// Checks the chunks against each other in file order, so that the file's
/// first error wins, and places them: the offsets of each, the file's
/// totals and its row widths.
fn place_chunks(chunks: &mut [Chunk]) -> Result<(Vec<Counts>, Counts, Widths)> {
    let mut before = Counts::default();
    let mut widths = Widths::default();
    let mut offsets = Vec::with_capacity(chunks.len());
    for c in chunks.iter_mut() {
        if let Some(e) = c.error.take() {
            return Err(shift_error(e, before.lines, before.faces));
        }
        widths.join(c, before.lines)?;
        if let Some((line, vertex, channel, value, text)) = c.nonfinite.take() {
            return Err(MeshError::NonFiniteCoordinate {
                at: Location::line(line + before.lines),
                vertex: vertex + before.v,
                channel,
                value,
                written: Some(text),
            });
        }
        offsets.push(before);
        before = before.plus(c);
    }
    to_u32(before.v, "number of vertices")?;
    to_u32(before.corners, "number of corners")?;
    to_u32(before.faces, "number of faces")?;
    Ok((offsets, before, widths))
}

/// One kind of index (`v`, `vt` or `vn`) of a chunk, as the join checks it.
struct IndexKind<'a> {
    /// The chunk's relative indices: corner and count before its line.
    rel: &'a [(u32, u32)],
    /// Elements of this kind before the chunk.
    before: usize,
    /// Elements of this kind in the file.
    count: usize,
}

impl IndexKind<'_> {
    /// Adds the chunk's offset to its relative indices in `indices`.
    fn shift(&self, indices: &mut [i64]) {
        for &(pos, _) in self.rel {
            indices[pos as usize] += self.before as i64;
        }
    }

    /// Index `x` (shifted) of corner `p`, checked against the file; out of
    /// range, the error gives the index as written.
    #[inline]
    fn check(&self, x: i64, p: usize, at: FaceAt) -> Result<u32> {
        if x >= 0 && (x as u64) < self.count as u64 {
            return Ok(x as u32);
        }
        let written = match self.rel.iter().find(|r| r.0 as usize == p) {
            Some(&(_, before_line)) => x - (before_line as i64 + self.before as i64),
            None => x + 1,
        };
        Err(MeshError::IndexOutOfRange {
            at: Location::line(at.line),
            face: at.face,
            index: written,
            num_vertices: self.count,
        })
    }
}

/// Appends corner `p`'s optional index to `list`, or drops the list for
/// good when the corner has none (face-varying data is kept only when
/// every corner has it).
#[inline]
fn push_optional(list: &mut Option<Vec<u32>>, kind: &IndexKind<'_>, x: i64, p: usize, at: FaceAt) -> Result<()> {
    if let Some(l) = list {
        if x == NONE {
            *list = None;
        } else {
            l.push(kind.check(x, p, at)?);
        }
    }
    Ok(())
}

/// The file's data, its chunks joined.
struct Joined {
    vertices: Vec<f64>,
    vt: Vec<f64>,
    vn: Vec<f64>,
    face_ptr: Vec<u32>,
    fv: Vec<u32>,
    /// `None` once a corner has no texture index.
    ft: Option<Vec<u32>>,
    /// `None` once a corner has no normal index.
    fn_: Option<Vec<u32>>,
    groups: Vec<(GroupKind, String, u32)>,
    tags: Vec<Tag>,
    left_handed: bool,
}

impl Joined {
    /// Joins the chunks placed by [`place_chunks`]; each is dropped once
    /// joined, releasing its memory as the join goes.
    fn new(chunks: Vec<Chunk>, offsets: &[Counts], total: &Counts, widths: &Widths) -> Result<Self> {
        let mut face_ptr = Vec::with_capacity(total.faces + 1);
        face_ptr.push(0);
        let mut out = Joined {
            vertices: Vec::with_capacity(total.v * widths.v),
            vt: Vec::with_capacity(total.vt * widths.vt.max(1)),
            vn: Vec::with_capacity(total.vn * 3),
            face_ptr,
            fv: Vec::with_capacity(total.corners),
            ft: Some(Vec::new()),
            fn_: Some(Vec::new()),
            groups: Vec::new(),
            tags: Vec::new(),
            left_handed: false,
        };
        for (c, before) in chunks.into_iter().zip(offsets) {
            out.append(c, before, total)?;
        }
        Ok(out)
    }

    /// Appends chunk `c`, which has `before` elements before it.
    fn append(&mut self, mut c: Chunk, before: &Counts, total: &Counts) -> Result<()> {
        self.vertices.extend_from_slice(&c.v);
        self.vt.extend_from_slice(&c.vt);
        self.vn.extend_from_slice(&c.vn);
        let v = IndexKind { rel: &c.rel_v, before: before.v, count: total.v };
        let t = IndexKind { rel: &c.rel_t, before: before.vt, count: total.vt };
        let n = IndexKind { rel: &c.rel_n, before: before.vn, count: total.vn };
        v.shift(&mut c.fv);
        t.shift(&mut c.ft);
        n.shift(&mut c.fn_);
        // Ranges are checked face by face, with the face's line.
        for f in 0..c.face_ptr.len().saturating_sub(1) {
            let (s, e) = (c.face_ptr[f] as usize, c.face_ptr[f + 1] as usize);
            let at = FaceAt { line: c.face_line[f] as usize + before.lines, face: before.faces + f };
            for p in s..e {
                self.fv.push(v.check(c.fv[p], p, at)?);
                push_optional(&mut self.ft, &t, c.ft[p], p, at)?;
                push_optional(&mut self.fn_, &n, c.fn_[p], p, at)?;
            }
            self.face_ptr.push((before.corners + e) as u32);
        }
        self.groups.extend(c.groups.drain(..).map(|(k, name, f)| (k, name, f + before.faces as u32)));
        self.tags.extend(c.tags.drain(..).map(|t| Tag { line: t.line + before.lines, ..t }));
        self.left_handed |= c.left_handed;
        Ok(())
    }
}

impl Tag {
    fn error(&self, reason: String) -> MeshError {
        MeshError::MalformedStatement {
            at: Location::line(self.line),
            statement: format!("t {}", excerpt(self.name.as_bytes())),
            reason,
        }
    }

    /// The sharpness of item `k`: one value for all, or one each.
    fn sharpness(&self, k: usize) -> f32 {
        if self.floats.len() == 1 { self.floats[0] } else { self.floats[k] }
    }

    /// The value of an option tag with one integer: `from_tag` of it.
    fn int_option<T>(&self, from_tag: impl FnOnce(i64) -> Option<T>, values: &str) -> Result<T> {
        let k = *self.ints.first().ok_or_else(|| self.error("one integer expected".into()))?;
        from_tag(k).ok_or_else(|| self.error(format!("unknown value {k} ({values})")))
    }

    /// The value of an option tag with one string (a `what`): `from_tag`
    /// of it.
    fn string_option<T>(&self, from_tag: impl FnOnce(&str) -> Option<T>, what: &str, values: &str) -> Result<T> {
        let s = self.strings.first().ok_or_else(|| self.error("one string expected".into()))?;
        from_tag(s).ok_or_else(|| self.error(format!("unknown {what} {s:?} ({values})")))
    }

    /// `t crease`: vertex pairs, one sharpness for all or one each.
    fn creases(&self, mut b: MeshBuilder) -> Result<MeshBuilder> {
        if self.ints.len() % 2 != 0 || self.ints.is_empty() {
            return Err(self.error(format!("{} vertex indices, an even number > 0 expected", self.ints.len())));
        }
        let pairs = self.ints.len() / 2;
        if self.floats.len() != 1 && self.floats.len() != pairs {
            return Err(
                self.error(format!("{} sharpness values for {pairs} edges (1 or {pairs} expected)", self.floats.len()))
            );
        }
        for k in 0..pairs {
            b = b.crease_at(self.ints[2 * k], self.ints[2 * k + 1], self.sharpness(k), Location::line(self.line));
        }
        Ok(b)
    }

    /// `t corner`: vertices, one sharpness for all or one each.
    fn corners(&self, mut b: MeshBuilder) -> Result<MeshBuilder> {
        let (n, ns) = (self.ints.len(), self.floats.len());
        if n == 0 || (ns != 1 && ns != n) {
            return Err(self.error(format!("{n} vertices and {ns} sharpness values")));
        }
        for (k, &v) in self.ints.iter().enumerate() {
            b = b.corner_at(v, self.sharpness(k), Location::line(self.line));
        }
        Ok(b)
    }

    /// Adds this tag's creases, corners or holes to `b`, or sets the option
    /// it names; hierarchical edits and unknown tags are ignored.
    fn apply(&self, b: MeshBuilder, options: &mut Options) -> Result<MeshBuilder> {
        match self.name.as_str() {
            "crease" => return self.creases(b),
            "corner" => return self.corners(b),
            "hole" => return Ok(self.ints.iter().fold(b, |b, &f| b.hole_at(f, Location::line(self.line)))),
            "interpolateboundary" => {
                options.boundary = self.int_option(BoundaryInterpolation::from_tag, "0, 1 or 2")?;
            }
            "facevaryinginterpolateboundary" => {
                options.fvar_boundary = self.int_option(FVarLinearInterpolation::from_tag, "0 to 5")?;
            }
            "creasemethod" => {
                options.crease_method = self.string_option(CreaseMethod::from_tag, "method", "normal or chaikin")?;
            }
            "smoothtriangles" => {
                options.triangle_subdivision =
                    self.string_option(TriangleSubdivision::from_tag, "rule", "catmark or smooth")?;
            }
            _ => {}
        }
        Ok(b)
    }
}

/// Face-varying values with one index per corner, or `None` where a corner
/// had no index (or there are no values).
fn face_varying(
    values: Vec<f64>,
    count: usize,
    width: usize,
    indices: Option<Vec<u32>>,
    corners: usize,
) -> Option<FaceVarying> {
    let indices = indices.filter(|i| count > 0 && i.len() == corners)?;
    Some(FaceVarying {
        values: Array2::from_shape_vec((count, width), values).unwrap_or_else(|e| unreachable!("{e}")),
        indices,
    })
}

fn parse_obj_named(bytes: &[u8], validation: Validation, name: &str) -> Result<MeshData> {
    // Skip a UTF-8 byte order mark.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    from_chunks(parse_chunks(bytes), validation, name)
}

/// The mesh from the parsed pieces of a file, in file order.
fn from_chunks(mut chunks: Vec<Chunk>, validation: Validation, name: &str) -> Result<MeshData> {
    let declared = chunks.first().and_then(|c| c.declared);
    let skipped = merge_skipped(&mut chunks);
    let (offsets, total, widths) = place_chunks(&mut chunks)?;
    if let Some(d) = declared {
        check_declared(d, &total)?;
    }
    if total.v == 0 {
        return Err(MeshError::Empty { what: name.into(), reason: "no vertices" });
    }
    if total.faces == 0 {
        return Err(MeshError::Empty { what: name.into(), reason: "no faces" });
    }
    let j = Joined::new(chunks, &offsets, &total, &widths)?;

    let mut b = MeshBuilder::new(total.v, j.face_ptr, j.fv).validation(validation).name(name);
    let mut options = Options::default();
    for t in &j.tags {
        b = t.apply(b, &mut options)?;
    }
    let mesh = b.options(options).build(Par::Rayon)?;
    let vertices = match Array2::from_shape_vec((total.v, widths.v), j.vertices) {
        Ok(a) => a,
        Err(e) => unreachable!("vertex rows have the checked width: {e}"),
    };
    Ok(MeshData {
        mesh,
        vertices,
        channels: obj_channel_names(widths.v),
        texcoords: face_varying(j.vt, total.vt, widths.vt, j.ft, total.corners),
        normals: face_varying(j.vn, total.vn, 3, j.fn_, total.corners),
        groups: close_groups(j.groups, total.faces as u32),
        left_handed: j.left_handed,
        skipped,
    })
}

/// The chunks' skipped statements, one entry per keyword in the order the
/// file first uses them (the first `MAX_SKIPPED_KINDS`; the others
/// together): the same for any cut of the file into chunks.
fn merge_skipped(chunks: &mut [Chunk]) -> Vec<Skipped> {
    let mut all = std::collections::BTreeMap::<Vec<u8>, (u64, usize)>::new();
    let mut before = 0;
    for c in chunks.iter_mut() {
        for (key, (n, line)) in std::mem::take(&mut c.skipped) {
            let e = all.entry(key).or_insert((0, line + before));
            e.0 += n;
        }
        before += c.lines;
    }
    let mut kinds: Vec<(Vec<u8>, (u64, usize))> = all.into_iter().collect();
    kinds.sort_by_key(|(_, (_, line))| *line);
    let rest = kinds.split_off(kinds.len().min(MAX_SKIPPED_KINDS));
    let mut out: Vec<Skipped> = kinds
        .into_iter()
        .map(|(k, (count, line))| Skipped { what: format!("`{}` statements", excerpt(&k)), count, line })
        .collect();
    if let Some(line) = rest.iter().map(|(_, (_, l))| *l).min() {
        let count = rest.iter().map(|(_, (n, _))| n).sum();
        out.push(Skipped { what: format!("statements of {} other keywords", rest.len()), count, line });
    }
    out
}

/// The names of `width` channels of `v` lines: `x y z`, then `w` for a
/// fourth value, or `red green blue` for the common `v x y z r g b` (the
/// names a PLY file gives colours) when there are exactly six; otherwise
/// `w`, `c4`, `c5`, ….
pub fn obj_channel_names(width: usize) -> Vec<String> {
    (0..width)
        .map(|k| match (width, k) {
            (6, 3) => "red".into(),
            (6, 4) => "green".into(),
            (6, 5) => "blue".into(),
            _ => default_channel_name(k),
        })
        .collect()
}

/// The counts comment the writer puts on line 1.
const COUNTS_COMMENT: &str = "written by subla:";

/// `N vertices, M faces` after [`COUNTS_COMMENT`].
fn parse_counts(rest: &[u8]) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(rest).ok()?;
    let mut t = text.split_ascii_whitespace();
    let nv = t.next()?.parse().ok()?;
    (t.next()? == "vertices,").then_some(())?;
    let nf = t.next()?.parse().ok()?;
    (t.next()? == "faces" && t.next().is_none()).then_some((nv, nf))
}

/// Checks the file's counts against those of its line-1 counts comment
/// (files written by [`write_obj`]): fewer is a truncated file (an
/// interrupted write), more is a file whose comment no longer describes it.
fn check_declared((nv, nf): (usize, usize), total: &Counts) -> Result<()> {
    let amount = |v: usize, f: usize| format!("{v} vertices and {f} faces");
    if total.v < nv || total.faces < nf {
        return Err(MeshError::Truncated {
            at: Location::line(total.lines.max(1)),
            expected: format!("{} (line 1 says so)", amount(nv, nf)),
            found: format!("{}: the file looks cut short (an interrupted write?)", amount(total.v, total.faces)),
        });
    }
    if total.v > nv || total.faces > nf {
        return Err(MeshError::MoreThanDeclared {
            at: Location::line(1),
            declared: amount(nv, nf),
            found: amount(total.v, total.faces),
        });
    }
    Ok(())
}

/// Turns group starts into ranges: each runs to the next start of its kind.
fn close_groups(starts: Vec<(GroupKind, String, u32)>, nf: u32) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::with_capacity(starts.len());
    // The last group of each kind, in `out`.
    let mut last: [Option<usize>; 2] = [None, None];
    for (kind, name, start) in starts {
        let k = usize::from(kind == GroupKind::Object);
        if let Some(prev) = last[k] {
            out[prev].faces.end = start;
        }
        last[k] = Some(out.len());
        out.push(Group { kind, name, faces: start..nf });
    }
    out
}

/// Writes `data` as OBJ text.
///
/// # Errors
/// Errors of the writer.
pub fn write_obj(data: &MeshData, w: impl Write) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
    let topo = data.mesh.topology();
    writeln!(w, "# written by subla: {} vertices, {} faces", topo.num_vertices(), topo.num_faces())?;
    if data.left_handed {
        writeln!(w, "# osd_ref: lefthanded")?;
    }
    write_rows(&mut w, b"v", &data.vertices)?;
    if let Some(t) = &data.texcoords {
        write_rows(&mut w, b"vt", &t.values)?;
    }
    if let Some(n) = &data.normals {
        write_rows(&mut w, b"vn", &n.values)?;
    }
    let corners = FaceCorners {
        face_ptr: topo.face_ptr(),
        face_verts: topo.face_verts(),
        texcoords: data.texcoords.as_ref().map(|t| &t.indices[..]),
        normals: data.normals.as_ref().map(|n| &n.indices[..]),
    };
    write_faces(&mut w, &corners, &data.groups)?;
    write_tags(data, &mut w)?;
    w.flush()
}

/// Writes faces and vertex data without a mesh's connectivity as OBJ
/// text: the text [`write_obj`] writes for a mesh of these faces (and
/// texture coordinates) without sharpness or holes.
///
/// # Errors
/// Errors of the writer; [`std::io::ErrorKind::InvalidInput`] when the
/// texture coordinates have not one index (in range) per face corner.
pub fn write_obj_faces(data: &FacesData<'_>, w: impl Write) -> std::io::Result<()> {
    let uv = data.checked_texcoords()?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
    writeln!(w, "# written by subla: {} vertices, {} faces", data.vertices.nrows(), data.num_faces())?;
    write_rows(&mut w, b"v", data.vertices)?;
    if let Some(t) = uv {
        write_rows(&mut w, b"vt", &t.values)?;
    }
    let corners = FaceCorners {
        face_ptr: data.face_ptr,
        face_verts: data.face_verts,
        texcoords: uv.map(|t| &t.indices[..]),
        normals: None,
    };
    write_faces(&mut w, &corners, data.groups)?;
    write_option_tags(data.options, &mut w)?;
    w.flush()
}

/// Lines formatted per block in parallel.
const LINES_PER_BLOCK: usize = 1 << 14;
/// Blocks formatted before they are written (bounds the text held).
const BLOCKS_PER_BATCH: usize = 64;

/// Lines `range` of a file, each appended to a buffer by `line(i, buf)`:
/// formatted in parallel blocks, written in order (the same bytes as one
/// line after the other).
fn write_lines(
    w: &mut impl Write,
    range: std::ops::Range<usize>,
    line: impl Fn(usize, &mut Vec<u8>) + Sync,
) -> std::io::Result<()> {
    let batch = LINES_PER_BLOCK * BLOCKS_PER_BATCH;
    let mut start = range.start;
    while start < range.end {
        let end = (start + batch).min(range.end);
        let blocks: Vec<Vec<u8>> = (start..end)
            .step_by(LINES_PER_BLOCK)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|b| {
                let mut buf = Vec::with_capacity(64 * LINES_PER_BLOCK);
                for i in b..(b + LINES_PER_BLOCK).min(end) {
                    line(i, &mut buf);
                }
                buf
            })
            .collect();
        for b in &blocks {
            w.write_all(b)?;
        }
        start = end;
    }
    Ok(())
}

/// One `key x y …` line per row of `values`.
fn write_rows(w: &mut impl Write, key: &[u8], values: &Array2<f64>) -> std::io::Result<()> {
    write_lines(w, 0..values.nrows(), |i, buf| {
        let mut fbuf = ryu::Buffer::new();
        buf.extend_from_slice(key);
        for &x in values.row(i) {
            buf.push(b' ');
            buf.extend_from_slice(fbuf.format(x).as_bytes());
        }
        buf.push(b'\n');
    })
}

/// The faces to write and their per-corner indices, if any.
struct FaceCorners<'a> {
    face_ptr: &'a [u32],
    face_verts: &'a [u32],
    texcoords: Option<&'a [u32]>,
    normals: Option<&'a [u32]>,
}

/// The `f` lines, each group statement before the first face of its range.
fn write_faces(w: &mut impl Write, faces: &FaceCorners<'_>, groups: &[Group]) -> std::io::Result<()> {
    let mut group_starts: Vec<&Group> = groups.iter().collect();
    // Stable: statements at the same face keep their order.
    group_starts.sort_by_key(|g| g.faces.start);
    let nf = faces.face_ptr.len().saturating_sub(1);
    let mut next_group = 0;
    let mut f = 0;
    // The faces between group statements, each run in parallel blocks.
    while f < nf {
        while next_group < group_starts.len() && group_starts[next_group].faces.start as usize <= f {
            write_group(w, group_starts[next_group])?;
            next_group += 1;
        }
        let end = group_starts.get(next_group).map_or(nf, |g| (g.faces.start as usize).clamp(f + 1, nf));
        write_lines(w, f..end, |i, buf| face_line(buf, &mut itoa::Buffer::new(), faces, i))?;
        f = end;
    }
    for g in &group_starts[next_group..] {
        write_group(w, g)?;
    }
    Ok(())
}

/// Face `f` as an `f` line, its corners `v`, `v/t`, `v//n` or `v/t/n`
/// (1-based).
fn face_line(buf: &mut Vec<u8>, ibuf: &mut itoa::Buffer, faces: &FaceCorners<'_>, f: usize) {
    buf.push(b'f');
    let (base, end) = (faces.face_ptr[f] as usize, faces.face_ptr[f + 1] as usize);
    for (k, &v) in faces.face_verts[base..end].iter().enumerate() {
        buf.push(b' ');
        buf.extend_from_slice(ibuf.format(v + 1).as_bytes());
        let t = faces.texcoords.map(|t| t[base + k]);
        let n = faces.normals.map(|n| n[base + k]);
        if t.is_some() || n.is_some() {
            buf.push(b'/');
            if let Some(t) = t {
                buf.extend_from_slice(ibuf.format(t + 1).as_bytes());
            }
            if let Some(n) = n {
                buf.push(b'/');
                buf.extend_from_slice(ibuf.format(n + 1).as_bytes());
            }
        }
    }
    buf.push(b'\n');
}

fn write_group(w: &mut impl Write, g: &Group) -> std::io::Result<()> {
    let key = if g.kind == GroupKind::Group { "g" } else { "o" };
    // A name ending in `\` would continue onto the next line: a trailing
    // space (dropped on reading) keeps it a name.
    let pad = if g.name.ends_with('\\') { " " } else { "" };
    if g.name.is_empty() { writeln!(w, "{key}") } else { writeln!(w, "{key} {}{pad}", g.name) }
}

fn write_tags(data: &MeshData, w: &mut impl Write) -> std::io::Result<()> {
    let mesh = &data.mesh;
    let topo = mesh.topology();
    let mut fbuf = ryu::Buffer::new();
    for (e, &s) in mesh.edge_sharpness().iter().enumerate() {
        if s > 0.0 {
            let [a, b] = topo.edge(e);
            writeln!(w, "t crease 2/1/0 {a} {b} {}", fbuf.format(s))?;
        }
    }
    for (v, &s) in mesh.vertex_sharpness().iter().enumerate() {
        if s > 0.0 {
            writeln!(w, "t corner 1/1/0 {v} {}", fbuf.format(s))?;
        }
    }
    let holes: Vec<usize> = mesh.holes().iter().enumerate().filter(|(_, h)| **h).map(|(f, _)| f).collect();
    if !holes.is_empty() {
        let list: Vec<String> = holes.iter().map(|f| f.to_string()).collect();
        writeln!(w, "t hole {}/0/0 {}", holes.len(), list.join(" "))?;
    }
    write_option_tags(mesh.options(), w)
}

/// The `t` lines of the options that differ from the defaults.
fn write_option_tags(o: Options, w: &mut impl Write) -> std::io::Result<()> {
    let d = Options::default();
    if o.boundary != d.boundary {
        writeln!(w, "t interpolateboundary 1/0/0 {}", o.boundary.tag())?;
    }
    if o.fvar_boundary != d.fvar_boundary {
        writeln!(w, "t facevaryinginterpolateboundary 1/0/0 {}", o.fvar_boundary.tag())?;
    }
    if o.crease_method != d.crease_method {
        writeln!(w, "t creasemethod 0/0/1 {}", o.crease_method.tag())?;
    }
    if o.triangle_subdivision != d.triangle_subdivision {
        writeln!(w, "t smoothtriangles 0/0/1 {}", o.triangle_subdivision.tag())?;
    }
    Ok(())
}

/// Writes `data` to an OBJ file.
///
/// # Errors
/// [`MeshError::Io`].
pub fn write_obj_file(data: &MeshData, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let io = |source| MeshError::Io { path: path.to_path_buf(), source };
    let f = std::fs::File::create(path).map_err(io)?;
    write_obj(data, f).map_err(io)
}
