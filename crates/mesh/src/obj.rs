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
//! Large files are parsed in parallel: the text is cut at line ends into
//! chunks that are parsed independently and joined; relative indices are
//! resolved after the join. Errors name the file line.
//!
//! # Writing
//! Floats use the shortest representation that reads back to the same bits,
//! so `f64` data survive a round trip exactly; tags are written back as
//! shape tags (non-default options only).

use std::io::Write;
use std::path::Path;

use ndarray::Array2;
use rayon::prelude::*;
use subla_algebra::Par;

use crate::data::{FaceVarying, Group, GroupKind, MeshData, default_channel_name};
use crate::error::{Location, MeshError, Result, to_u32};
use crate::mesh::{MeshBuilder, Validation};
use crate::tags::{BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, Options, TriangleSubdivision};

/// Reads an OBJ file.
///
/// # Errors
/// [`MeshError::Io`], or any parse or validation error (with its line).
pub fn read_obj(path: impl AsRef<Path>, validation: Validation) -> Result<MeshData> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| MeshError::Io { path: path.to_path_buf(), source })?;
    parse_obj_named(&bytes, validation, &path.display().to_string())
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
    /// Line (chunk-local, 1-based) of the first vertex that is not finite.
    nonfinite: Option<(usize, usize, usize, f64)>,
}

#[inline]
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r' || b == 0x0c || b == 0x0b
}

/// Splits a logical line into whitespace-separated tokens.
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

fn text_of(t: &[u8]) -> String {
    let mut s = String::from_utf8_lossy(&t[..t.len().min(40)]).into_owned();
    if t.len() > 40 {
        s.push('…');
    }
    s
}

#[inline]
fn parse_f64(t: &[u8], what: &'static str, line: usize) -> Result<f64> {
    fast_float2::parse::<f64, _>(t).map_err(|_| MeshError::MalformedNumber {
        at: Location::line(line),
        what,
        text: text_of(t),
    })
}

#[inline]
fn parse_i64(t: &[u8], what: &'static str, line: usize) -> Result<i64> {
    let err = || MeshError::MalformedNumber { at: Location::line(line), what, text: text_of(t) };
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

impl Chunk {
    fn fail(&mut self, e: MeshError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Parses one logical line (`line` is chunk-local, 1-based).
    fn line(&mut self, text: &[u8], line: usize) -> Result<()> {
        if memchr::memchr(0, text).is_some() {
            return Err(MeshError::NotText { at: Location::line(line), reason: "NUL byte (binary data?)".into() });
        }
        let mut tok = Tokens { s: text, i: 0 };
        let Some(key) = tok.next() else { return Ok(()) };
        match key {
            b"v" => {
                let start = self.v.len();
                for t in tok.by_ref() {
                    let x = parse_f64(t, "vertex coordinate", line)?;
                    if !x.is_finite() && self.nonfinite.is_none() {
                        let channel = self.v.len() - start;
                        self.nonfinite = Some((line, self.nv, channel, x));
                    }
                    self.v.push(x);
                }
                let d = self.v.len() - start;
                if d < 3 {
                    return Err(MeshError::MalformedStatement {
                        at: Location::line(line),
                        statement: "v".into(),
                        reason: format!("{d} coordinates, at least 3 required"),
                    });
                }
                if self.v_dim == 0 {
                    self.v_dim = d;
                    self.v_dim_line = line;
                } else if d != self.v_dim {
                    return Err(MeshError::MalformedStatement {
                        at: Location::line(line),
                        statement: "v".into(),
                        reason: format!("{d} values, but line {} has {}", self.v_dim_line, self.v_dim),
                    });
                }
                self.nv += 1;
            }
            b"vt" => {
                let start = self.vt.len();
                for t in tok.by_ref() {
                    self.vt.push(parse_f64(t, "texture coordinate", line)?);
                }
                let d = self.vt.len() - start;
                if !(1..=3).contains(&d) || (self.vt_dim != 0 && d != self.vt_dim) {
                    return Err(MeshError::MalformedStatement {
                        at: Location::line(line),
                        statement: "vt".into(),
                        reason: format!("{d} values (1 to 3, the same on every vt line, expected)"),
                    });
                }
                self.vt_dim = d;
                self.nvt += 1;
            }
            b"vn" => {
                let start = self.vn.len();
                for t in tok.by_ref() {
                    self.vn.push(parse_f64(t, "normal component", line)?);
                }
                if self.vn.len() - start != 3 {
                    return Err(MeshError::MalformedStatement {
                        at: Location::line(line),
                        statement: "vn".into(),
                        reason: format!("{} values, 3 expected", self.vn.len() - start),
                    });
                }
                self.nvn += 1;
            }
            b"f" | b"fo" => self.face(tok, line)?,
            b"g" | b"o" => {
                let kind = if key == b"g" { GroupKind::Group } else { GroupKind::Object };
                let names: Vec<String> = tok.map(|t| String::from_utf8_lossy(t).into_owned()).collect();
                self.groups.push((kind, names.join(" "), self.face_ptr.len().saturating_sub(1) as u32));
            }
            b"t" => self.tag(tok, line)?,
            _ if key[0] == b'#' => {
                let rest = &text[text.iter().position(|&b| b == b'#').unwrap_or(0) + 1..];
                let mut t = Tokens { s: rest, i: 0 };
                if t.next() == Some(b"osd_ref:") && t.next() == Some(b"lefthanded") {
                    self.left_handed = true;
                }
            }
            _ => {
                if KNOWN_SKIPPED.contains(&key) {
                    return Ok(());
                }
                if key.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                    // An unknown but well-formed statement: skipped.
                    return Ok(());
                }
                return Err(MeshError::NotText {
                    at: Location::line(line),
                    reason: format!("unexpected bytes {:?} at the start of a line", text_of(key)),
                });
            }
        }
        Ok(())
    }

    fn face(&mut self, tok: Tokens<'_>, line: usize) -> Result<()> {
        if self.face_ptr.is_empty() {
            self.face_ptr.push(0);
        }
        let start = self.fv.len();
        for t in tok {
            let mut parts = t.splitn(3, |&b| b == b'/');
            let v = parts.next().unwrap_or(b"");
            let vt = parts.next();
            let vn = parts.next();
            let resolve =
                |x: &[u8], count: usize, rel: &mut Vec<(u32, u32)>, pos: usize, what: &'static str| -> Result<i64> {
                    let r = parse_i64(x, what, line)?;
                    if r > 0 {
                        Ok(r - 1)
                    } else if r < 0 {
                        rel.push((pos as u32, count as u32));
                        Ok(count as i64 + r)
                    } else {
                        Err(MeshError::IndexOutOfRange {
                            at: Location::line(line),
                            face: self.face_ptr.len() - 1,
                            index: 0,
                            num_vertices: count,
                        })
                    }
                };
            let pos = self.fv.len();
            let vi = resolve(v, self.nv, &mut self.rel_v, pos, "vertex index")?;
            self.fv.push(vi);
            let ti = match vt {
                Some(x) if !x.is_empty() => resolve(x, self.nvt, &mut self.rel_t, pos, "texture index")?,
                _ => NONE,
            };
            self.ft.push(ti);
            let ni = match vn {
                Some(x) if !x.is_empty() => resolve(x, self.nvn, &mut self.rel_n, pos, "normal index")?,
                _ => NONE,
            };
            self.fn_.push(ni);
        }
        let n = self.fv.len() - start;
        if n < 3 {
            return Err(MeshError::FaceTooSmall { at: Location::line(line), face: self.face_ptr.len() - 1, order: n });
        }
        self.face_ptr.push(to_u32(self.fv.len(), "number of corners")?);
        self.face_line.push(line as u32);
        Ok(())
    }

    fn tag(&mut self, mut tok: Tokens<'_>, line: usize) -> Result<()> {
        let bad =
            |reason: String| MeshError::MalformedStatement { at: Location::line(line), statement: "t".into(), reason };
        let name = tok.next().ok_or_else(|| bad("missing tag name".into()))?;
        let name = String::from_utf8_lossy(name).into_owned();
        let counts = tok.next().ok_or_else(|| bad(format!("{name}: missing <nint>/<nfloat>/<nstring> counts")))?;
        let c: Vec<&[u8]> = counts.split(|&b| b == b'/').collect();
        if c.len() != 3 {
            return Err(bad(format!("{name}: counts must be <nint>/<nfloat>/<nstring>, found {:?}", text_of(counts))));
        }
        let mut n = [0usize; 3];
        for (k, x) in c.iter().enumerate() {
            let v = parse_i64(x, "tag argument count", line)?;
            if !(0..=1 << 24).contains(&v) {
                return Err(bad(format!("{name}: argument count {v} out of range")));
            }
            n[k] = v as usize;
        }
        let mut args = Vec::new();
        for t in tok {
            args.push(t);
        }
        if args.len() != n[0] + n[1] + n[2] {
            return Err(bad(format!(
                "{name}: counts {}/{}/{} announce {} arguments, found {}",
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
                    let mut q = nl;
                    if q > 0 && bytes[q - 1] == b'\r' {
                        q -= 1;
                    }
                    at = nl + 1;
                    if q == 0 || bytes[q - 1] != b'\\' {
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

fn parse_chunk(bytes: &[u8]) -> Chunk {
    let mut c = Chunk::default();
    let mut i = 0usize;
    let mut line = 0usize;
    let mut joined: Vec<u8> = Vec::new();
    while i < bytes.len() {
        line += 1;
        let first_line = line;
        let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
        let text = &bytes[i..end];
        i = end + 1;
        // `\` continuation: join physical lines (rare; copies only then).
        let strip = |t: &[u8]| -> (usize, bool) {
            let mut e = t.len();
            if e > 0 && t[e - 1] == b'\r' {
                e -= 1;
            }
            if e > 0 && t[e - 1] == b'\\' { (e - 1, true) } else { (t.len(), false) }
        };
        let (e, cont) = strip(text);
        if cont {
            joined.clear();
            joined.extend_from_slice(&text[..e]);
            joined.push(b' ');
            while i < bytes.len() {
                line += 1;
                let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
                let t = &bytes[i..end];
                i = end + 1;
                let (e, cont) = strip(t);
                joined.extend_from_slice(&t[..e]);
                joined.push(b' ');
                if !cont {
                    break;
                }
            }
            let owned = std::mem::take(&mut joined);
            if let Err(e) = c.line(&owned, first_line) {
                c.fail(e);
                c.lines = line;
                return c;
            }
            joined = owned;
            continue;
        }
        if let Err(e) = c.line(text, line) {
            c.fail(e);
            c.lines = line;
            return c;
        }
    }
    c.lines = line;
    c
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

fn parse_obj_named(bytes: &[u8], validation: Validation, name: &str) -> Result<MeshData> {
    // Skip a UTF-8 byte order mark.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let nchunks = (bytes.len() / (1 << 20)).clamp(1, 4 * rayon::current_num_threads());
    let cuts = cut_points(bytes, nchunks);
    let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
    let mut chunks: Vec<Chunk> = if pieces.len() > 1 {
        pieces.par_iter().map(|p| parse_chunk(p)).collect()
    } else {
        pieces.iter().map(|p| parse_chunk(p)).collect()
    };

    // Offsets of each chunk: lines, faces, v, vt, vn, corners.
    let mut lines_before = 0usize;
    let mut faces_before = 0usize;
    let (mut nv, mut nvt, mut nvn, mut nc) = (0usize, 0usize, 0usize, 0usize);
    let mut offs = Vec::with_capacity(chunks.len());
    let mut v_dim = 0usize;
    let mut v_dim_line = 0usize;
    let mut vt_dim = 0usize;
    for c in chunks.iter_mut() {
        if let Some(e) = c.error.take() {
            return Err(shift_error(e, lines_before, faces_before));
        }
        if c.nv > 0 {
            if v_dim == 0 {
                v_dim = c.v_dim;
                v_dim_line = c.v_dim_line + lines_before;
            } else if c.v_dim != v_dim {
                return Err(MeshError::MalformedStatement {
                    at: Location::line(c.v_dim_line + lines_before),
                    statement: "v".into(),
                    reason: format!("{} values, but line {v_dim_line} has {v_dim}", c.v_dim),
                });
            }
        }
        if c.nvt > 0 {
            if vt_dim != 0 && c.vt_dim != vt_dim {
                return Err(MeshError::MalformedStatement {
                    at: Location::none(),
                    statement: "vt".into(),
                    reason: "texture coordinates of different sizes".into(),
                });
            }
            vt_dim = c.vt_dim;
        }
        if let Some((line, vertex, channel, value)) = c.nonfinite {
            return Err(MeshError::NonFiniteCoordinate {
                at: Location::line(line + lines_before),
                vertex: vertex + nv,
                channel,
                value,
            });
        }
        offs.push((lines_before, faces_before, nv, nvt, nvn, nc));
        lines_before += c.lines;
        faces_before += c.face_ptr.len().saturating_sub(1);
        nv += c.nv;
        nvt += c.nvt;
        nvn += c.nvn;
        nc += c.fv.len();
    }
    to_u32(nv, "number of vertices")?;
    to_u32(nc, "number of corners")?;
    to_u32(faces_before, "number of faces")?;
    let nf = faces_before;
    if nv == 0 {
        return Err(MeshError::Empty { what: name.into(), reason: "no vertices" });
    }
    if nf == 0 {
        return Err(MeshError::Empty { what: name.into(), reason: "no faces" });
    }

    // Join. Relative indices get their chunk's offset; then ranges are
    // checked face by face (with the face's line).
    let mut vertices = Vec::with_capacity(nv * v_dim);
    let mut vt = Vec::with_capacity(nvt * vt_dim.max(1));
    let mut vn = Vec::with_capacity(nvn * 3);
    let mut face_ptr = Vec::with_capacity(nf + 1);
    face_ptr.push(0u32);
    let mut fv = Vec::with_capacity(nc);
    let mut ft: Vec<u32> = Vec::new();
    let mut fnn: Vec<u32> = Vec::new();
    let mut all_t = true;
    let mut all_n = true;
    let mut groups: Vec<(GroupKind, String, u32)> = Vec::new();
    let mut tags = Vec::new();
    let mut left_handed = false;
    for (c, &(lines0, faces0, v0, t0, n0, c0)) in chunks.iter_mut().zip(&offs) {
        vertices.extend_from_slice(&c.v);
        vt.extend_from_slice(&c.vt);
        vn.extend_from_slice(&c.vn);
        for &(pos, _) in &c.rel_v {
            c.fv[pos as usize] += v0 as i64;
        }
        for &(pos, _) in &c.rel_t {
            c.ft[pos as usize] += t0 as i64;
        }
        for &(pos, _) in &c.rel_n {
            c.fn_[pos as usize] += n0 as i64;
        }
        let nfaces = c.face_ptr.len().saturating_sub(1);
        for f in 0..nfaces {
            let (s, e) = (c.face_ptr[f] as usize, c.face_ptr[f + 1] as usize);
            let line = c.face_line[f] as usize + lines0;
            for p in s..e {
                let check = |x: i64, count: usize, rel: &[(u32, u32)], what: &'static str| -> Result<u32> {
                    if x >= 0 && (x as u64) < count as u64 {
                        return Ok(x as u32);
                    }
                    // Report the index as written.
                    let written = match rel.iter().find(|r| r.0 as usize == p) {
                        Some(&(_, before)) => {
                            x - (before as i64
                                + if what == "vertex" {
                                    v0
                                } else if what == "texture" {
                                    t0
                                } else {
                                    n0
                                } as i64)
                        }
                        None => x + 1,
                    };
                    Err(MeshError::IndexOutOfRange {
                        at: Location::line(line),
                        face: faces0 + f,
                        index: written,
                        num_vertices: count,
                    })
                };
                fv.push(check(c.fv[p], nv, &c.rel_v, "vertex")?);
                if all_t {
                    if c.ft[p] == NONE {
                        all_t = false;
                    } else {
                        ft.push(check(c.ft[p], nvt, &c.rel_t, "texture")?);
                    }
                }
                if all_n {
                    if c.fn_[p] == NONE {
                        all_n = false;
                    } else {
                        fnn.push(check(c.fn_[p], nvn, &c.rel_n, "normal")?);
                    }
                }
            }
            face_ptr.push((c0 + e) as u32);
        }
        for (k, n, f) in c.groups.drain(..) {
            groups.push((k, n, f + faces0 as u32));
        }
        for mut t in c.tags.drain(..) {
            t.line += lines0;
            tags.push(t);
        }
        left_handed |= c.left_handed;
        // Release chunk memory as we go.
        *c = Chunk::default();
    }
    drop(chunks);

    let mut b = MeshBuilder::new(nv, face_ptr, fv).validation(validation).name(name);
    let mut options = Options::default();
    for t in &tags {
        let at = Location::line(t.line);
        let bad = |reason: String| MeshError::MalformedStatement {
            at: at.clone(),
            statement: format!("t {}", t.name),
            reason,
        };
        match t.name.as_str() {
            "crease" => {
                if t.ints.len() % 2 != 0 || t.ints.is_empty() {
                    return Err(bad(format!("{} vertex indices, an even number > 0 expected", t.ints.len())));
                }
                let pairs = t.ints.len() / 2;
                if t.floats.len() != 1 && t.floats.len() != pairs {
                    return Err(bad(format!(
                        "{} sharpness values for {pairs} edges (1 or {pairs} expected)",
                        t.floats.len()
                    )));
                }
                for k in 0..pairs {
                    let s = if t.floats.len() == 1 { t.floats[0] } else { t.floats[k] };
                    b = b.crease_at(t.ints[2 * k], t.ints[2 * k + 1], s, at.clone());
                }
            }
            "corner" => {
                if t.ints.is_empty() || (t.floats.len() != 1 && t.floats.len() != t.ints.len()) {
                    return Err(bad(format!("{} vertices and {} sharpness values", t.ints.len(), t.floats.len())));
                }
                for (k, &v) in t.ints.iter().enumerate() {
                    let s = if t.floats.len() == 1 { t.floats[0] } else { t.floats[k] };
                    b = b.corner_at(v, s, at.clone());
                }
            }
            "hole" => {
                for &f in &t.ints {
                    b = b.hole_at(f, at.clone());
                }
            }
            "interpolateboundary" => {
                let k = *t.ints.first().ok_or_else(|| bad("one integer expected".into()))?;
                options.boundary =
                    BoundaryInterpolation::from_tag(k).ok_or_else(|| bad(format!("unknown value {k} (0, 1 or 2)")))?;
            }
            "facevaryinginterpolateboundary" => {
                let k = *t.ints.first().ok_or_else(|| bad("one integer expected".into()))?;
                options.fvar_boundary =
                    FVarLinearInterpolation::from_tag(k).ok_or_else(|| bad(format!("unknown value {k} (0 to 5)")))?;
            }
            "creasemethod" => {
                let s = t.strings.first().ok_or_else(|| bad("one string expected".into()))?;
                options.crease_method = CreaseMethod::from_tag(s)
                    .ok_or_else(|| bad(format!("unknown method {s:?} (normal or chaikin)")))?;
            }
            "smoothtriangles" => {
                let s = t.strings.first().ok_or_else(|| bad("one string expected".into()))?;
                options.triangle_subdivision = TriangleSubdivision::from_tag(s)
                    .ok_or_else(|| bad(format!("unknown rule {s:?} (catmark or smooth)")))?;
            }
            _ => {}
        }
    }
    let mesh = b.options(options).build(Par::Rayon)?;
    let vertices = match Array2::from_shape_vec((nv, v_dim), vertices) {
        Ok(a) => a,
        Err(e) => unreachable!("vertex rows have the checked width: {e}"),
    };
    let texcoords = (all_t && nvt > 0 && ft.len() == nc).then(|| FaceVarying {
        values: Array2::from_shape_vec((nvt, vt_dim), vt).unwrap_or_else(|e| unreachable!("{e}")),
        indices: ft,
    });
    let normals = (all_n && nvn > 0 && fnn.len() == nc).then(|| FaceVarying {
        values: Array2::from_shape_vec((nvn, 3), vn).unwrap_or_else(|e| unreachable!("{e}")),
        indices: fnn,
    });
    Ok(MeshData {
        mesh,
        vertices,
        channels: (0..v_dim).map(default_channel_name).collect(),
        texcoords,
        normals,
        groups: close_groups(groups, nf as u32),
        left_handed,
    })
}

/// Turns group starts into ranges: each runs to the next start of its kind.
fn close_groups(starts: Vec<(GroupKind, String, u32)>, nf: u32) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::with_capacity(starts.len());
    for (kind, name, start) in starts {
        if let Some(prev) = out.iter_mut().rev().find(|g| g.kind == kind) {
            prev.faces.end = start;
        }
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
    let mut fbuf = ryu::Buffer::new();
    let mut ibuf = itoa::Buffer::new();
    let mesh = &data.mesh;
    let topo = mesh.topology();
    writeln!(w, "# written by subla: {} vertices, {} faces", topo.num_vertices(), topo.num_faces())?;
    if data.left_handed {
        writeln!(w, "# osd_ref: lefthanded")?;
    }
    let mut line = Vec::with_capacity(256);
    let mut put_row =
        |w: &mut std::io::BufWriter<_>, key: &[u8], row: ndarray::ArrayView1<'_, f64>| -> std::io::Result<()> {
            line.clear();
            line.extend_from_slice(key);
            for &x in row {
                line.push(b' ');
                line.extend_from_slice(fbuf.format(x).as_bytes());
            }
            line.push(b'\n');
            w.write_all(&line)
        };
    for row in data.vertices.rows() {
        put_row(&mut w, b"v", row)?;
    }
    if let Some(t) = &data.texcoords {
        for row in t.values.rows() {
            put_row(&mut w, b"vt", row)?;
        }
    }
    if let Some(n) = &data.normals {
        for row in n.values.rows() {
            put_row(&mut w, b"vn", row)?;
        }
    }
    let mut group_starts: Vec<&Group> = data.groups.iter().collect();
    // Stable: statements at the same face keep their order.
    group_starts.sort_by_key(|g| g.faces.start);
    let mut next_group = 0;
    let mut buf = Vec::with_capacity(256);
    for f in 0..topo.num_faces() {
        while next_group < group_starts.len() && group_starts[next_group].faces.start as usize <= f {
            let g = group_starts[next_group];
            write_group(&mut w, g)?;
            next_group += 1;
        }
        buf.clear();
        buf.push(b'f');
        let base = topo.face_ptr()[f] as usize;
        for (k, &v) in topo.face(f).iter().enumerate() {
            buf.push(b' ');
            buf.extend_from_slice(ibuf.format(v + 1).as_bytes());
            let t = data.texcoords.as_ref().map(|t| t.indices[base + k]);
            let n = data.normals.as_ref().map(|n| n.indices[base + k]);
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
        w.write_all(&buf)?;
    }
    for g in &group_starts[next_group..] {
        write_group(&mut w, g)?;
    }
    write_tags(data, &mut w)?;
    w.flush()
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
    let o = mesh.options();
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
