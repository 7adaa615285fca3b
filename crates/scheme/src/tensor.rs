//! Rows of a composed refinement matrix in tensor-product form, stored and
//! evaluated without their weights.
//!
//! Inside a regular patch, a tensor-product spline scheme (Catmull-Clark is
//! bicubic B-spline subdivision there) maps the patch's 4 × 4 control
//! points to every refined point on it with weights `w_x(r) · w_y(s)`,
//! where `w_x` and `w_y` come from one short table of one-dimensional
//! weights indexed by the point's grid position. [`TensorRows`] stores
//! exactly that: the table, each patch's sixteen control points, and for
//! each output row its patch and its two positions — 8 bytes a row instead
//! of the 12 bytes per nonzero (about 16 a row) of the composed matrix.
//!
//! It is a [`ClosedForm`]: [`Refinement::compose_with`] and
//! [`Refinement::composed_of`] write its rows into the composed matrix, and
//! keep it; [`Refinement::tensor_of`] keeps it without writing them. Then [`Evaluation::Tensor`] (and [`Evaluation::Auto`])
//! evaluate those rows from the table, reading the control points and the
//! 8 bytes of each row, and only the other rows from the matrix.
//!
//! # Exactness
//! Row `i` of patch `p` at positions `(x, y)` has, for each of the patch's
//! points `k` in ascending column order, the weight `w[x][g_k / 4] ·
//! w[y][g_k % 4]` (`g_k` the point's grid index), computed in `f64`; zero
//! weights are not stored. The evaluator sums all sixteen terms in that
//! order, starting from `+0`, with each weight computed the same way and
//! then converted to the evaluation type: a zero-weight term adds `±0`,
//! which changes nothing, so for finite data the result is, bit for bit,
//! that of evaluating the composed matrix ([`PaddedCsr`] sums in stored
//! order too).
//!
//! [`ClosedForm`]: crate::refinement::ClosedForm
//! [`Refinement::compose_with`]: crate::refinement::Refinement::compose_with
//! [`Refinement::composed_of`]: crate::refinement::Refinement::composed_of
//! [`Refinement::tensor_of`]: crate::refinement::Refinement::tensor_of
//! [`Evaluation::Tensor`]: crate::refinement::Evaluation::Tensor
//! [`Evaluation::Auto`]: crate::refinement::Evaluation::Auto
//! [`PaddedCsr`]: subla_algebra::PaddedCsr

use std::ops::Range;

use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::par::split_by_ranges;
use subla_algebra::scan::compact;
use subla_algebra::{CsrMat, PaddedCsr, Par};

use crate::refinement::ClosedForm;
use crate::{Result, SchemeError};

/// Marks a row without a tensor-product form.
const OPEN: u32 = u32::MAX;

/// The sixteen control points of a patch, in ascending column order, each
/// with its grid index `4 r + s` (`r` the position along the first
/// direction, `s` along the second, both `0..4`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensorPatch {
    /// Columns (control points), strictly ascending.
    pub ids: [u32; 16],
    /// Grid index of each column: a permutation of `0..16`.
    pub grid: [u8; 16],
}

/// Where an output row lies: its patch and its positions in the weight
/// table along the two directions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensorRow {
    /// Index into the patches, or `u32::MAX` for a row without a tensor
    /// form ([`TensorRow::OPEN`]).
    pub patch: u32,
    /// Position along the first direction (index into the weight table).
    pub x: u16,
    /// Position along the second direction.
    pub y: u16,
}

impl TensorRow {
    /// A row without a tensor-product form.
    pub const OPEN: TensorRow = TensorRow { patch: OPEN, x: 0, y: 0 };
}

/// Rows of a composed refinement matrix in tensor-product form (see the
/// [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorRows {
    ncols: usize,
    weights: Vec<[f64; 4]>,
    nonzeros: Vec<u8>,
    patches: Vec<TensorPatch>,
    rows: Vec<TensorRow>,
    closed: usize,
    /// Nonzeros of the rows with a tensor form.
    nnz: u64,
}

impl TensorRows {
    /// Tensor rows over `ncols` columns: one-dimensional `weights` (entry
    /// `t` holds the weights of position `t` over a patch's four points
    /// along one direction), the `patches`, and one [`TensorRow`] per
    /// output row.
    ///
    /// # Errors
    /// [`SchemeError::Unsupported`] naming the first patch whose columns
    /// are not strictly ascending and below `ncols` or whose grid is not a
    /// permutation of `0..16`, or the first row whose patch or positions
    /// are out of range.
    pub fn new(ncols: usize, weights: Vec<[f64; 4]>, patches: Vec<TensorPatch>, rows: Vec<TensorRow>) -> Result<Self> {
        let bad = |reason: String| Err(SchemeError::Unsupported { scheme: "tensor rows", reason });
        for (p, patch) in patches.iter().enumerate() {
            let ascending = patch.ids.windows(2).all(|w| w[0] < w[1]) && (patch.ids[15] as usize) < ncols;
            let mut seen = 0u16;
            for &g in &patch.grid {
                seen |= 1u16.checked_shl(u32::from(g)).unwrap_or(0);
            }
            if !ascending || seen != u16::MAX {
                return bad(format!(
                    "patch {p}: columns must be strictly ascending and below {ncols}, the grid a permutation of 0..16"
                ));
            }
        }
        let (np, nt) = (patches.len(), weights.len());
        let nonzeros: Vec<u8> = weights.iter().map(|w| w.iter().filter(|&&v| v != 0.0).count() as u8).collect();
        // One pass in chunks: the first row out of range, the rows with a
        // tensor form and their nonzeros.
        const CHUNK: usize = 1 << 15;
        let (first_bad, closed, nnz) = rows
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let (mut first_bad, mut closed, mut nnz) = (usize::MAX, 0usize, 0u64);
                for (i, r) in chunk.iter().enumerate() {
                    if r.patch == OPEN {
                        continue;
                    }
                    closed += 1;
                    let (x, y) = (usize::from(r.x), usize::from(r.y));
                    if r.patch as usize >= np || x >= nt || y >= nt {
                        first_bad = first_bad.min(c * CHUNK + i);
                    } else {
                        nnz += u64::from(nonzeros[x]) * u64::from(nonzeros[y]);
                    }
                }
                (first_bad, closed, nnz)
            })
            .reduce(|| (usize::MAX, 0, 0), |a, b| (a.0.min(b.0), a.1 + b.1, a.2 + b.2));
        if first_bad != usize::MAX {
            let i = first_bad;
            return bad(format!("row {i}: its patch or positions are out of range ({np} patches, {nt} positions)"));
        }
        Ok(TensorRows { ncols, weights, nonzeros, patches, rows, closed, nnz })
    }

    /// Output rows (with and without a tensor form).
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// Columns (control points).
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Rows with a tensor form.
    pub fn closed_rows(&self) -> usize {
        self.closed
    }

    /// Nonzeros of the rows with a tensor form (as the composed matrix
    /// stores them: zero weights left out).
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The patches.
    pub fn patches(&self) -> &[TensorPatch] {
        &self.patches
    }

    /// Where each output row lies.
    pub fn rows(&self) -> &[TensorRow] {
        &self.rows
    }

    /// Bytes held (table, patches, rows).
    pub fn bytes(&self) -> u64 {
        (self.weights.len() * 33 + self.patches.len() * std::mem::size_of::<TensorPatch>() + self.rows.len() * 8) as u64
    }

    /// The rows without a tensor form, ascending.
    pub(crate) fn open_rows(&self, par: Par) -> Result<Vec<u32>> {
        Ok(compact(self.rows.len(), |i| self.rows[i].patch == OPEN, par)?)
    }

    /// The weight of grid index `g` at positions `(x, y)`.
    #[inline]
    fn weight(&self, x: u16, y: u16, g: u8) -> f64 {
        self.weights[usize::from(x)][usize::from(g >> 2)] * self.weights[usize::from(y)][usize::from(g & 3)]
    }
}

impl ClosedForm for TensorRows {
    fn row_len(&self, row: usize) -> Option<usize> {
        let r = self.rows[row];
        (r.patch != OPEN)
            .then(|| usize::from(self.nonzeros[usize::from(r.x)]) * usize::from(self.nonzeros[usize::from(r.y)]))
    }

    fn write_row(&self, row: usize, idx: &mut [u32], vals: &mut [f64]) {
        let r = self.rows[row];
        let p = &self.patches[r.patch as usize];
        // Compacted without branches into a local row, then copied out.
        let (mut ri, mut rv) = ([0u32; 16], [0f64; 16]);
        let mut n = 0;
        for (&id, &g) in p.ids.iter().zip(&p.grid) {
            let w = self.weight(r.x, r.y, g);
            ri[n] = id;
            rv[n] = w;
            n += usize::from(w != 0.0);
        }
        debug_assert_eq!(n, idx.len(), "row {row}: the tensor form's length");
        idx.copy_from_slice(&ri[..idx.len()]);
        vals.copy_from_slice(&rv[..vals.len()]);
    }

    fn tensor_rows(&self) -> Option<&TensorRows> {
        Some(self)
    }

    fn into_tensor_rows(self: Box<Self>) -> Option<TensorRows> {
        Some(*self)
    }
}

/// The evaluation form of [`TensorRows`] in precision `T`, with the other
/// rows of the composed matrix.
#[derive(Clone, Debug)]
pub(crate) struct TensorEval<T> {
    /// Per pair of positions `(x, y)` (index `x · positions + y`), the
    /// weight of each grid index, converted to `T`.
    table: Vec<[T; 16]>,
    positions: usize,
    ncols: usize,
    patches: Vec<TensorPatch>,
    rows: Vec<TensorRow>,
    /// The rows without a tensor form (ascending) and their rows of the
    /// composed matrix.
    open: Vec<u32>,
    open_mat: PaddedCsr<T>,
    /// Nonzeros of the composed matrix.
    nnz: u64,
}

impl<T: Float + Send + Sync> TensorEval<T> {
    /// `tensor`'s rows from the table, the others from `open_mat`: its row
    /// `k` is the `k`-th row without a tensor form, in ascending order.
    /// `nnz` is the composed matrix's.
    pub(crate) fn new(tensor: &TensorRows, open_mat: &CsrMat<f64>, nnz: u64, par: Par) -> Result<Self> {
        let nt = tensor.weights.len();
        let table = (0..nt * nt)
            .map(|xy| std::array::from_fn(|g| cast::<T>(tensor.weight((xy / nt) as u16, (xy % nt) as u16, g as u8))))
            .collect();
        let open = tensor.open_rows(par)?;
        debug_assert_eq!(open.len(), open_mat.nrows(), "one matrix row per open row");
        let open_mat = PaddedCsr::from_csr(open_mat.as_ref())?;
        Ok(TensorEval {
            table,
            positions: nt,
            ncols: tensor.ncols,
            patches: tensor.patches.clone(),
            rows: tensor.rows.clone(),
            open,
            open_mat,
            nnz,
        })
    }

    pub(crate) fn nrows(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Bytes read per evaluation besides the data: rows, patches, table and
    /// the open rows' padded matrix.
    pub(crate) fn bytes(&self) -> u64 {
        (self.rows.len() * 8
            + self.patches.len() * std::mem::size_of::<TensorPatch>()
            + self.table.len() * 16 * std::mem::size_of::<T>()) as u64
            + self.open_mat.bytes() as u64
    }

    /// `y = R x` for row-major `x` (`ncols × d`) and `y` (`nrows × d`).
    pub(crate) fn apply(&self, x: &[T], y: &mut [T], d: usize, par: Par) {
        assert!(
            x.len() == self.ncols * d && y.len() == self.rows.len() * d,
            "tensor eval: x has {} values, y {} (expected {} x {d} and {} x {d})",
            x.len(),
            y.len(),
            self.ncols,
            self.rows.len()
        );
        if d == 0 || self.rows.is_empty() {
            return;
        }
        let mut open_y = vec![T::zero(); self.open.len() * d];
        self.open_mat.apply_slices(x, &mut open_y, d, par);
        // Blocks of equally many rows (the open rows, already computed, are
        // only copied).
        let n = self.rows.len();
        let nb = par.blocks(n * d * 16, 1 << 14);
        let blocks: Vec<Range<usize>> = (0..nb).map(|b| b * n / nb..(b + 1) * n / nb).collect();
        let run = |rows: Range<usize>, ys: &mut [T]| {
            let mut k = self.open.partition_point(|&o| (o as usize) < rows.start);
            match d {
                1 => self.block::<1>(rows, x, ys, &open_y, &mut k),
                2 => self.block::<2>(rows, x, ys, &open_y, &mut k),
                3 => self.block::<3>(rows, x, ys, &open_y, &mut k),
                4 => self.block::<4>(rows, x, ys, &open_y, &mut k),
                _ => self.block_wide(rows, x, ys, d, &open_y, &mut k),
            }
        };
        if blocks.len() <= 1 {
            run(0..self.rows.len(), y);
        } else {
            let pieces = split_by_ranges(y, &blocks, d);
            blocks.into_par_iter().zip(pieces).for_each(|(r, ys)| run(r, ys));
        }
    }

    /// Rows `rows` for exactly `D` channels; `k` is the index of the first
    /// open row at or after `rows.start`. Four tensor rows in a row are
    /// summed together, their sums interleaved (each sum still in its own
    /// order), so that the additions of one row do not wait on each other.
    fn block<const D: usize>(&self, rows: Range<usize>, x: &[T], y: &mut [T], open_y: &[T], k: &mut usize) {
        let mut i = rows.start;
        let mut out = y.chunks_exact_mut(D);
        while i < rows.end {
            if i + 4 <= rows.end {
                let q: [TensorRow; 4] = std::array::from_fn(|j| self.rows[i + j]);
                if q.iter().all(|r| r.patch != OPEN) {
                    let acc = self.rows4::<D>(q, x);
                    for a in &acc {
                        if let Some(yi) = out.next() {
                            yi.copy_from_slice(a);
                        }
                    }
                    i += 4;
                    continue;
                }
            }
            let r = self.rows[i];
            let Some(yi) = out.next() else { unreachable!("one output row per row") };
            if r.patch == OPEN {
                yi.copy_from_slice(&open_y[*k * D..(*k + 1) * D]);
                *k += 1;
            } else {
                yi.copy_from_slice(&self.row::<D>(r, x, D, 0));
            }
            i += 1;
        }
    }

    /// Four tensor rows at once, `D` channels each (data of stride `D`).
    #[inline(always)]
    fn rows4<const D: usize>(&self, q: [TensorRow; 4], x: &[T]) -> [[T; D]; 4] {
        let p: [&TensorPatch; 4] = std::array::from_fn(|j| &self.patches[q[j].patch as usize]);
        let w: [&[T; 16]; 4] =
            std::array::from_fn(|j| &self.table[usize::from(q[j].x) * self.positions + usize::from(q[j].y)]);
        let mut acc = [[T::zero(); D]; 4];
        for t in 0..16 {
            for j in 0..4 {
                let base = p[j].ids[t] as usize * D;
                // SAFETY: `ids < ncols` (checked by `TensorRows::new`) and
                // `x.len() == ncols * D` (checked in `apply`).
                let xj = unsafe { x.get_unchecked(base..base + D) };
                let wg = w[j][usize::from(p[j].grid[t] & 15)];
                for c in 0..D {
                    acc[j][c] = acc[j][c] + wg * xj[c];
                }
            }
        }
        acc
    }

    /// Rows `rows` for `d > 4` channels, four at a time.
    fn block_wide(&self, rows: Range<usize>, x: &[T], y: &mut [T], d: usize, open_y: &[T], k: &mut usize) {
        for (i, yi) in rows.zip(y.chunks_exact_mut(d)) {
            let r = self.rows[i];
            if r.patch == OPEN {
                yi.copy_from_slice(&open_y[*k * d..(*k + 1) * d]);
                *k += 1;
                continue;
            }
            let mut c = 0;
            while c + 4 <= d {
                yi[c..c + 4].copy_from_slice(&self.row::<4>(r, x, d, c));
                c += 4;
            }
            for (c, v) in yi.iter_mut().enumerate().skip(c) {
                *v = self.row::<1>(r, x, d, c)[0];
            }
        }
    }

    /// Channels `offset..offset + D` of tensor row `r`, the sixteen terms in
    /// ascending column order.
    #[inline(always)]
    fn row<const D: usize>(&self, r: TensorRow, x: &[T], stride: usize, offset: usize) -> [T; D] {
        let p = &self.patches[r.patch as usize];
        let w = &self.table[usize::from(r.x) * self.positions + usize::from(r.y)];
        let mut acc = [T::zero(); D];
        for (&j, &g) in p.ids.iter().zip(&p.grid) {
            let base = j as usize * stride + offset;
            // SAFETY: `j < ncols` (checked by `TensorRows::new`), `x.len()
            // == ncols * stride` (checked in `apply`), `offset + D <=
            // stride` (how the callers cut the channels).
            let xj = unsafe { x.get_unchecked(base..base + D) };
            let wg = w[usize::from(g & 15)];
            for c in 0..D {
                acc[c] = acc[c] + wg * xj[c];
            }
        }
        acc
    }
}

/// `v` in `T` (rounded to nearest).
fn cast<T: Float>(v: f64) -> T {
    T::from(v).unwrap_or_else(T::nan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch() -> TensorPatch {
        TensorPatch { ids: std::array::from_fn(|k| 2 * k as u32), grid: std::array::from_fn(|k| (15 - k) as u8) }
    }

    #[test]
    fn rows_are_the_products_of_the_one_dimensional_weights() {
        let w = vec![[0.25, 0.5, 0.25, 0.0], [0.0, 0.5, 0.5, 0.0]];
        let rows = vec![TensorRow { patch: 0, x: 0, y: 1 }, TensorRow::OPEN];
        let t = TensorRows::new(32, w, vec![patch()], rows).unwrap();
        assert_eq!((t.nrows(), t.ncols(), t.closed_rows()), (2, 32, 1));
        assert_eq!(t.row_len(1), None);
        // Nonzero where r ∈ {0, 1, 2} and s ∈ {1, 2}: 6 entries.
        assert_eq!(t.row_len(0), Some(6));
        let (mut idx, mut vals) = ([0u32; 6], [0f64; 6]);
        t.write_row(0, &mut idx, &mut vals);
        // Column 2k has grid index 15 - k = 4r + s.
        let want: Vec<(u32, f64)> = (0..16u32)
            .filter_map(|k| {
                let g = 15 - k as usize;
                let v = [0.25, 0.5, 0.25, 0.0][g / 4] * [0.0, 0.5, 0.5, 0.0][g % 4];
                (v != 0.0).then_some((2 * k, v))
            })
            .collect();
        assert_eq!(idx.iter().copied().zip(vals).collect::<Vec<_>>(), want);
    }

    #[test]
    fn bad_patches_and_rows_are_refused_by_name() {
        let w = vec![[1.0, 0.0, 0.0, 0.0]];
        let err = |p: TensorPatch, r: TensorRow| match TensorRows::new(32, w.clone(), vec![patch(), p], vec![r]) {
            Err(SchemeError::Unsupported { reason, .. }) => reason,
            other => panic!("expected an error, got {other:?}"),
        };
        let ok_row = TensorRow { patch: 0, x: 0, y: 0 };
        let mut p = patch();
        p.ids.swap(3, 4);
        assert!(err(p, ok_row).starts_with("patch 1:"), "columns out of order");
        let mut p = patch();
        p.ids[15] = 32;
        assert!(err(p, ok_row).starts_with("patch 1:"), "column out of range");
        let mut p = patch();
        p.grid[0] = p.grid[1];
        assert!(err(p, ok_row).starts_with("patch 1:"), "grid not a permutation");
        let mut p = patch();
        p.grid[0] = 16;
        assert!(err(p, ok_row).starts_with("patch 1:"), "grid index out of range");
        assert!(err(patch(), TensorRow { patch: 2, x: 0, y: 0 }).starts_with("row 0:"), "patch out of range");
        assert!(err(patch(), TensorRow { patch: 0, x: 1, y: 0 }).starts_with("row 0:"), "position out of range");
    }
}
