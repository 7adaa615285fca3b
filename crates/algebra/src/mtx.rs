//! Matrix Market coordinate files: the exchange format of the SuiteSparse
//! collection, scipy (`mmread`/`mmwrite`), MATLAB and Julia, handy to hand a
//! refinement or mesh matrix to another tool or to keep one as a test oracle.
//!
//! The 3 x 4 CSR matrix
//!
//! ```text
//!         c0   c1   c2   c3
//!   r0 [  1.5   .    .   -2  ]
//!   r1 [  .     .    .    .  ]
//!   r2 [  .    1/3   .    .  ]
//! ```
//!
//! is written as (1-based indices, entries in storage order)
//!
//! ```text
//! %%MatrixMarket matrix coordinate real general
//! % written by subla
//! 3 4 3
//! 1 1 1.5
//! 1 4 -2.0
//! 3 2 0.3333333333333333
//! ```
//!
//! # Exactness
//! Values are written in the shortest form that reads back to the same
//! `f64` ([`ryu`]); `f32` (and integer) values are written as their exact
//! `f64` value. Reading what [`write_matrix_market`] wrote gives back the
//! same pattern, explicit zeros included, and bitwise the same values (as
//! `f64`), `-0.0`, subnormals and infinities included; a NaN reads back as
//! the canonical NaN (the format has no payloads).
//!
//! # What is read
//! [`read_matrix_market`] reads `coordinate` matrices with `real` (or
//! `double`), `integer` or `pattern` values (pattern entries read as `1.0`)
//! and `general`, `symmetric` or `skew-symmetric` symmetry. Symmetric files
//! are expanded: an off-diagonal entry `(i, j, v)` stands for `(i, j, v)` and
//! `(j, i, v)` (`(j, i, -v)` when skew-symmetric), whichever triangle it was
//! stored in. Duplicate entries are summed in file order. Comment lines
//! (`%`) and blank lines may appear anywhere after the header line.
//!
//! # Errors
//! Malformed or unsupported input is an
//! [`AlgebraError::MatrixMarket`] naming the 1-based line and what is wrong
//! (missing or unknown header, `array`/`complex`/`hermitian` files, a bad
//! size line, sizes over `u32`, an index that is 0, out of range or not a
//! number, a value that is not a number, too few or too many entries, a
//! diagonal entry in a skew-symmetric file). Nothing in the input can make
//! the reader panic. The `_file` functions name the file in their errors
//! and report failures to open, create, read or write it as
//! [`AlgebraError::Io`].

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::ops::Range;
use std::path::Path;

use crate::CsrMat;
use crate::error::{AlgebraError, Result, to_u32};
use crate::storage::{Layout, SparseMat, SparseRef};

/// Capacity of the write and read buffers.
const BUFFER: usize = 1 << 20;

/// Writes `m` as a Matrix Market `coordinate real general` file: the header,
/// a `% written by subla` comment, the size line `nrows ncols nnz`, then one
/// `row col value` line per stored entry (1-based) in storage order — row by
/// row for CSR, column by column for CSC. Explicit zeros are written.
///
/// Values are formatted in their shortest round-trip form (see the
/// [module docs](self#exactness)); the output is formatted into a large
/// buffer that is handed to `w` a megabyte at a time, so pass a plain
/// [`File`] (no `BufWriter` needed) or any other writer.
///
/// ```
/// use subla_algebra::{CsrMat, mtx};
/// let a = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 0.5, -2.0])?;
/// let mut out = Vec::new();
/// mtx::write_matrix_market(a.as_ref(), &mut out)?;
/// assert_eq!(
///     String::from_utf8(out.clone())?,
///     "%%MatrixMarket matrix coordinate real general\n% written by subla\n2 3 3\n1 1 1.0\n1 3 0.5\n2 2 -2.0\n"
/// );
/// assert_eq!(mtx::read_matrix_market(&out[..])?, a);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Whatever the writer returns.
pub fn write_matrix_market<T, L>(m: SparseRef<'_, T, L>, w: impl Write) -> io::Result<()>
where
    T: Copy + Into<f64>,
    L: Layout,
{
    let mut w = w;
    // One large buffer, filled line by line and handed to the writer when
    // full (a `BufWriter` with the formatting done in place).
    let mut out = Vec::with_capacity(BUFFER + 128);
    write!(
        out,
        "%%MatrixMarket matrix coordinate real general\n% written by subla\n{} {} {}\n",
        m.nrows(),
        m.ncols(),
        m.nnz()
    )?;
    let (ptr, idx, vals) = (m.ptr(), m.indices(), m.values());
    let mut ints = itoa::Buffer::new();
    let mut floats = ryu::Buffer::new();
    let mut major_text = Vec::with_capacity(16);
    for major in 0..m.major_dim() {
        let range = ptr[major] as usize..ptr[major + 1] as usize;
        if range.is_empty() {
            continue;
        }
        major_text.clear();
        major_text.extend_from_slice(ints.format(major as u64 + 1).as_bytes());
        major_text.push(b' ');
        for (&minor, &v) in idx[range.clone()].iter().zip(&vals[range]) {
            if L::COLUMN_MAJOR {
                out.extend_from_slice(ints.format(u64::from(minor) + 1).as_bytes());
                out.push(b' ');
                out.extend_from_slice(&major_text);
            } else {
                out.extend_from_slice(&major_text);
                out.extend_from_slice(ints.format(u64::from(minor) + 1).as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice(floats.format(v.into()).as_bytes());
            out.push(b'\n');
            if out.len() >= BUFFER {
                w.write_all(&out)?;
                out.clear();
            }
        }
    }
    w.write_all(&out)?;
    w.flush()
}

/// [`write_matrix_market`] into a new file (created or truncated) at `path`.
///
/// # Errors
/// [`AlgebraError::Io`] naming `path` if the file cannot be created or
/// written.
pub fn write_matrix_market_file<T, L>(m: SparseRef<'_, T, L>, path: impl AsRef<Path>) -> Result<()>
where
    T: Copy + Into<f64>,
    L: Layout,
{
    let path = path.as_ref();
    let file = File::create(path).map_err(|e| io_error("create", path, &e))?;
    write_matrix_market(m, file).map_err(|e| io_error("write", path, &e))
}

/// Reads a Matrix Market `coordinate` matrix (see the
/// [module docs](self#what-is-read) for what is accepted) into CSR,
/// expanding symmetric storage and summing duplicate entries in file order.
///
/// ```
/// use subla_algebra::mtx;
/// let text = "%%MatrixMarket matrix coordinate real symmetric\n\
///             % a comment\n\
///             2 2 2\n\
///             1 1 4\n\
///             2 1 -1.5\n";
/// let a = mtx::read_matrix_market(text.as_bytes())?;
/// assert_eq!(a.as_ref().to_dense(), ndarray::array![[4.0, -1.5], [-1.5, 0.0]]);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
///
/// # Errors
/// [`AlgebraError::MatrixMarket`] naming the first bad line (see the
/// [module docs](self#errors)), also for read errors of `r` (read in
/// megabyte chunks, whatever its own buffering);
/// [`AlgebraError::TooLarge`] if the expanded matrix has more than
/// `u32::MAX` entries.
pub fn read_matrix_market(r: impl BufRead) -> Result<CsrMat<f64>> {
    read(r, None, None)
}

/// [`read_matrix_market`] from the file at `path`.
///
/// # Errors
/// [`AlgebraError::Io`] naming `path` if it cannot be opened or read;
/// [`AlgebraError::MatrixMarket`] naming `path` and the line for malformed
/// content.
pub fn read_matrix_market_file(path: impl AsRef<Path>) -> Result<CsrMat<f64>> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| io_error("open", path, &e))?;
    let len = file.metadata().ok().map(|m| m.len());
    read(file, Some(path), len)
}

fn io_error(action: &'static str, path: &Path, e: &io::Error) -> AlgebraError {
    AlgebraError::Io { action, path: path.to_path_buf(), kind: e.kind(), message: e.to_string() }
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

#[derive(Copy, Clone, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

/// Line reader over large chunks of the input (no copy per line) that
/// counts lines and knows how to name them in errors.
struct Lines<'p, R> {
    r: R,
    buf: Vec<u8>,
    /// Unread input is `buf[start..end]`.
    start: usize,
    end: usize,
    /// How many unread bytes are known to hold no newline (so a long line
    /// arriving in small reads is scanned once, not once per read).
    searched: usize,
    eof: bool,
    /// The current line, without its terminator.
    current: Range<usize>,
    /// Number of lines read so far (the 1-based number of the current one).
    line: usize,
    path: Option<&'p Path>,
}

impl<'p, R: Read> Lines<'p, R> {
    fn new(r: R, path: Option<&'p Path>) -> Self {
        Lines { r, buf: vec![0; BUFFER], start: 0, end: 0, searched: 0, eof: false, current: 0..0, line: 0, path }
    }

    /// Moves to the next line; false at the end of the input.
    fn advance(&mut self) -> Result<bool> {
        loop {
            let unread = &self.buf[self.start..self.end];
            let newline = unread[self.searched..].iter().position(|&b| b == b'\n').map(|n| self.searched + n);
            self.searched = unread.len();
            if newline.is_some() || (self.eof && !unread.is_empty()) {
                self.searched = 0;
                let len = newline.unwrap_or(unread.len());
                let mut line = self.start..self.start + len;
                self.start += newline.map_or(len, |n| n + 1);
                if line.end > line.start && self.buf[line.end - 1] == b'\r' {
                    line.end -= 1;
                }
                self.current = line;
                self.line += 1;
                return Ok(true);
            }
            if self.eof {
                self.current = 0..0;
                return Ok(false);
            }
            // Keep the partial line, make room (grow only for a line longer
            // than the buffer), and read more.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                self.buf.resize(2 * self.buf.len(), 0);
            }
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(match self.path {
                        Some(path) => io_error("read", path, &e),
                        None => self.error_at(self.line + 1, format!("read error: {e}")),
                    });
                }
            }
        }
    }

    /// Moves to the next line that is neither blank nor a comment; false at
    /// the end of the input.
    fn advance_to_data(&mut self) -> Result<bool> {
        while self.advance()? {
            match self.text().iter().find(|b| !b.is_ascii_whitespace()) {
                None | Some(b'%') => {}
                Some(_) => return Ok(true),
            }
        }
        Ok(false)
    }

    /// The current line without its terminator.
    fn text(&self) -> &[u8] {
        &self.buf[self.current.clone()]
    }

    fn error_at(&self, line: usize, reason: impl Into<String>) -> AlgebraError {
        AlgebraError::MatrixMarket { path: self.path.map(Path::to_path_buf), line, reason: reason.into() }
    }

    fn error(&self, reason: impl Into<String>) -> AlgebraError {
        self.error_at(self.line, reason)
    }
}

/// Whitespace-separated fields of a line.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

/// A field quoted for an error message (cut short if long).
fn quote(token: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&token[..token.len().min(MAX)]);
    if token.len() > MAX { format!("`{text}…`") } else { format!("`{text}`") }
}

/// Parses a decimal unsigned integer (ASCII digits only, optional `+`).
fn parse_u64(token: &[u8]) -> Option<u64> {
    let digits = token.strip_prefix(b"+").unwrap_or(token);
    if digits.is_empty() {
        return None;
    }
    if digits.len() <= 19 {
        // Cannot overflow: 10^19 - 1 < 2^64.
        let mut acc = 0u64;
        for &b in digits {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            acc = acc * 10 + u64::from(digit);
        }
        return Some(acc);
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() { acc.checked_mul(10)?.checked_add(u64::from(b - b'0')) } else { None }
    })
}

/// A size from the size line: a non-negative integer that fits in `u32`.
fn parse_size<R: Read>(lines: &Lines<'_, R>, token: &[u8], what: &str) -> Result<u32> {
    let value = parse_u64(token)
        .ok_or_else(|| lines.error(format!("{what} {} is not a non-negative integer", quote(token))))?;
    u32::try_from(value)
        .map_err(|_| lines.error(format!("{what} = {value} does not fit in a u32 index (max {})", u32::MAX)))
}

/// A 1-based index in `1..=bound`, returned 0-based.
fn parse_index<R: Read>(lines: &Lines<'_, R>, token: &[u8], what: &str, bound: u32) -> Result<u32> {
    match parse_u64(token) {
        None => Err(lines.error(format!("{what} index {} is not a positive integer", quote(token)))),
        Some(0) => Err(lines.error(format!("{what} index 0: indices are 1-based"))),
        Some(i) if i > u64::from(bound) => {
            Err(lines.error(format!("{what} index {i} out of range (the matrix has {bound} {what}s)")))
        }
        Some(i) => Ok((i - 1) as u32),
    }
}

fn parse_value<R: Read>(lines: &Lines<'_, R>, token: &[u8], field: Field) -> Result<f64> {
    let text = std::str::from_utf8(token).ok();
    match field {
        Field::Pattern => Ok(1.0),
        Field::Real => text
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| lines.error(format!("value {} is not a real number", quote(token)))),
        Field::Integer => text.and_then(|t| t.parse::<i64>().ok()).map(|v| v as f64).ok_or_else(|| {
            lines.error(format!("value {} is not an integer (the header says `integer`)", quote(token)))
        }),
    }
}

fn parse_header<R: Read>(lines: &mut Lines<'_, R>) -> Result<(Field, Symmetry)> {
    const EXPECTED: &str =
        "expected `%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>`";
    if !lines.advance()? {
        return Err(lines.error_at(1, format!("empty input: {EXPECTED}")));
    }
    let tokens: Vec<Vec<u8>> = fields(lines.text()).take(6).map(|t| t.to_ascii_lowercase()).collect();
    let token = |k: usize| tokens.get(k).map(Vec::as_slice);
    if token(0) != Some(b"%%matrixmarket") {
        return Err(lines.error(format!("missing header: {EXPECTED}")));
    }
    match token(1) {
        Some(b"matrix") => {}
        Some(other) => return Err(lines.error(format!("unsupported object {}: only `matrix` is read", quote(other)))),
        None => return Err(lines.error(format!("incomplete header: {EXPECTED}"))),
    }
    match token(2) {
        Some(b"coordinate") => {}
        Some(b"array") => {
            return Err(lines.error("unsupported format `array` (dense): only `coordinate` (sparse) is read"));
        }
        Some(other) => return Err(lines.error(format!("unknown format {}: {EXPECTED}", quote(other)))),
        None => return Err(lines.error(format!("incomplete header: {EXPECTED}"))),
    }
    let field = match token(3) {
        Some(b"real" | b"double") => Field::Real,
        Some(b"integer") => Field::Integer,
        Some(b"pattern") => Field::Pattern,
        Some(b"complex") => {
            return Err(lines.error("unsupported field `complex`: only real, integer and pattern values"));
        }
        Some(other) => return Err(lines.error(format!("unknown field {}: {EXPECTED}", quote(other)))),
        None => return Err(lines.error(format!("incomplete header: {EXPECTED}"))),
    };
    let symmetry = match token(4) {
        Some(b"general") => Symmetry::General,
        Some(b"symmetric") => Symmetry::Symmetric,
        Some(b"skew-symmetric") => Symmetry::SkewSymmetric,
        Some(b"hermitian") => return Err(lines.error("unsupported symmetry `hermitian` (complex matrices)")),
        Some(other) => return Err(lines.error(format!("unknown symmetry {}: {EXPECTED}", quote(other)))),
        None => return Err(lines.error(format!("incomplete header: {EXPECTED}"))),
    };
    if let Some(extra) = token(5) {
        return Err(lines.error(format!("unexpected {} after the symmetry: {EXPECTED}", quote(extra))));
    }
    if field == Field::Pattern && symmetry == Symmetry::SkewSymmetric {
        return Err(lines.error("`pattern skew-symmetric` is not a valid combination (a pattern has no signs)"));
    }
    Ok((field, symmetry))
}

/// `input_len`: the size of the input in bytes, when known.
fn read<R: Read>(r: R, path: Option<&Path>, input_len: Option<u64>) -> Result<CsrMat<f64>> {
    let mut lines = Lines::new(r, path);
    let (field, symmetry) = parse_header(&mut lines)?;

    if !lines.advance_to_data()? {
        return Err(lines.error_at(lines.line + 1, "missing size line `nrows ncols nnz`"));
    }
    let size: Vec<&[u8]> = fields(lines.text()).collect();
    let [tr, tc, tn] = size[..] else {
        return Err(lines.error(format!("expected the size line `nrows ncols nnz`, found {} fields", size.len())));
    };
    let nrows = parse_size(&lines, tr, "nrows")?;
    let ncols = parse_size(&lines, tc, "ncols")?;
    let declared = parse_size(&lines, tn, "number of entries")?;
    let size_line = lines.line;
    if symmetry != Symmetry::General && nrows != ncols {
        return Err(lines.error(format!("a symmetric or skew-symmetric matrix must be square, not {nrows} x {ncols}")));
    }

    // Reserve for what the size line claims, but no more than the input can
    // hold (an entry takes at least 4 bytes, `1 1\n`): a lying size line
    // must not allocate more than the input can fill.
    let per_entry: u64 = if symmetry == Symmetry::General { 1 } else { 2 };
    let plausible = input_len.map_or(1 << 22, |len| len / 4);
    let reserve = usize::try_from(u64::from(declared).min(plausible) * per_entry).unwrap_or(0);
    let (mut rows, mut cols, mut vals) =
        (Vec::with_capacity(reserve), Vec::with_capacity(reserve), Vec::with_capacity(reserve));
    let arity = if field == Field::Pattern { 2 } else { 3 };
    let layout = if field == Field::Pattern { "`row col`" } else { "`row col value`" };
    for read in 0..declared {
        if !lines.advance_to_data()? {
            return Err(lines.error_at(
                lines.line + 1,
                format!("input ends after {read} of the {declared} entries declared on line {size_line}"),
            ));
        }
        let line = lines.text();
        let mut it = fields(line);
        let (ti, tj, tv) = (it.next(), it.next(), if arity == 3 { it.next() } else { None });
        let wrong_count = |lines: &Lines<'_, R>| {
            let n = fields(lines.text()).count();
            lines.error(format!("expected {layout}, found {n} field{}", if n == 1 { "" } else { "s" }))
        };
        let (Some(ti), Some(tj)) = (ti, tj) else { return Err(wrong_count(&lines)) };
        if (arity == 3 && tv.is_none()) || it.next().is_some() {
            return Err(wrong_count(&lines));
        }
        let i = parse_index(&lines, ti, "row", nrows)?;
        let j = parse_index(&lines, tj, "column", ncols)?;
        let v = match tv {
            Some(tv) => parse_value(&lines, tv, field)?,
            None => 1.0,
        };
        rows.push(i);
        cols.push(j);
        vals.push(v);
        if i != j {
            match symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => {
                    rows.push(j);
                    cols.push(i);
                    vals.push(v);
                }
                Symmetry::SkewSymmetric => {
                    rows.push(j);
                    cols.push(i);
                    vals.push(-v);
                }
            }
        } else if symmetry == Symmetry::SkewSymmetric {
            return Err(lines.error(format!(
                "diagonal entry ({}, {}) in a skew-symmetric matrix (its diagonal is zero and not stored)",
                i + 1,
                j + 1
            )));
        }
    }
    if lines.advance_to_data()? {
        return Err(lines.error(format!("more entries than the {declared} declared on line {size_line}")));
    }
    assemble(nrows, ncols, &rows, &cols, &vals)
}

/// CSR from coordinate lists (indices in range): a counting sort by row,
/// then a stable sort by column inside each row, so duplicates are summed
/// in input order.
fn assemble(nrows: u32, ncols: u32, rows: &[u32], cols: &[u32], vals: &[f64]) -> Result<CsrMat<f64>> {
    let n = nrows as usize;
    to_u32(rows.len(), "number of Matrix Market entries after symmetric expansion")?;
    // Counting sort: `end[r]` ends as one past the last slot of row `r`
    // (and so is where row `r + 1` starts).
    let mut end = vec![0u32; n + 1];
    for &r in rows {
        end[r as usize + 1] += 1;
    }
    for r in 0..n {
        end[r + 1] += end[r];
    }
    let mut bucket = vec![(0u32, 0.0f64); rows.len()];
    for ((&r, &c), &v) in rows.iter().zip(cols).zip(vals) {
        let slot = &mut end[r as usize];
        bucket[*slot as usize] = (c, v);
        *slot += 1;
    }
    let mut ptr = Vec::with_capacity(n + 1);
    let mut idx: Vec<u32> = Vec::with_capacity(rows.len());
    let mut values: Vec<f64> = Vec::with_capacity(rows.len());
    ptr.push(0u32);
    for r in 0..n {
        let row_begin = if r == 0 { 0 } else { end[r - 1] as usize };
        let row = &mut bucket[row_begin..end[r] as usize];
        if !row.is_sorted_by_key(|e| e.0) {
            row.sort_by_key(|e| e.0);
        }
        let row_start = idx.len();
        for &(c, v) in row.iter() {
            match (idx.last(), values.last_mut()) {
                (Some(&last), Some(acc)) if idx.len() > row_start && last == c => *acc += v,
                _ => {
                    idx.push(c);
                    values.push(v);
                }
            }
        }
        ptr.push(to_u32(idx.len(), "nnz of the Matrix Market matrix")?);
    }
    // SAFETY: rows are sorted by column with duplicates merged, every
    // index was checked against its bound while parsing, the dimensions are
    // u32 and nnz was checked against u32 with each pointer.
    Ok(unsafe { SparseMat::new_unchecked(nrows, ncols, ptr, idx, values) })
}
