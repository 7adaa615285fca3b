//! Mapped sparse matrix × multi-channel vector products.
//!
//! Mlakar et al. 2020, Eq. 1 (after Zayer et al. 2017):
//!
//! ```text
//! y = map(A) · x,        y(i, :) = Σ_j μ(A(i, j), i, j) · x(j, :)
//! ```
//!
//! The action map `μ` sees each stored value with its row and column and
//! returns the value to multiply with; the matrix is never changed or
//! copied. `x` is an `n × d` array (positions, normals, colours … any number
//! of channels `d`) and `y` is `m × d`.
//!
//! Two forms:
//!
//! * [`spmv_csr`] — **row gather**: each output row is computed by one task,
//!   summing its entries in increasing column order.
//! * [`spmv_csc`] — **column scatter**: columns push their contribution into
//!   the rows they touch. Tasks own disjoint *row ranges* and visit columns in
//!   increasing order, so every `y(i, :)` is again summed in increasing column
//!   order. Each task walks the whole column structure to find its rows, so
//!   the scatter scales less well than the gather: for repeated products of a
//!   fixed matrix, convert it once to CSR ([`CscRef::to_csr`]).
//!
//! # Determinism
//! Both forms compute `y(i, c) = ((0 + w₀x₀) + w₁x₁) + …` over the entries of
//! row `i` in increasing column order, whatever [`Par`] or the pool size: the
//! results are bitwise identical for any thread count, and the CSR and CSC
//! forms agree bitwise with each other on the same matrix. With
//! [`Update::Add`], the finished sum is added to the old `y` once.
//!
//! # Panics
//! If the shapes disagree (`x.nrows() != A.ncols()`, `y` not
//! `A.nrows() × x.ncols()`); the message names the operands.

use std::ops::Range;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use crate::par::{Par, balanced_ranges, even_ranges, split_by_ranges};
use crate::storage::{Layout, SparseRef};
use crate::{CscRef, CsrRef, Scalar};

/// What to do with the old contents of `y`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Update {
    /// `y = map(A) x`.
    #[default]
    Set,
    /// `y = y + map(A) x` (the product is summed first, then added once).
    Add,
}

/// `y = map(A) x` for a matrix in either layout (dispatches to
/// [`spmv_csr`] or [`spmv_csc`]).
#[track_caller]
pub fn spmv<T, S, F, L>(a: SparseRef<'_, T, L>, x: ArrayView2<'_, S>, map: F, par: Par) -> Array2<S>
where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
    L: Layout,
{
    let mut y = Array2::zeros((a.nrows(), x.ncols()));
    spmv_into(a, x, y.view_mut(), Update::Set, map, par);
    y
}

/// `y = map(A) x` or `y += map(A) x` into caller storage, for either layout.
#[track_caller]
pub fn spmv_into<T, S, F, L>(
    a: SparseRef<'_, T, L>,
    x: ArrayView2<'_, S>,
    y: ArrayViewMut2<'_, S>,
    update: Update,
    map: F,
    par: Par,
) where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
    L: Layout,
{
    check_shapes(a.shape(), &x, &y);
    if L::COLUMN_MAJOR {
        // The CSC storage of A is the CSR storage of Aᵀ: view it as such and
        // scatter with row/column swapped back for the map.
        let at: CsrRef<'_, T> = a.transpose().relabel();
        with_contiguous(x, y, update, |xs, ys, d| scatter(at, xs, ys, d, &map, par));
    } else {
        let ar: CsrRef<'_, T> = a.relabel();
        with_contiguous(x, y, update, |xs, ys, d| gather(ar, xs, ys, d, &map, par));
    }
}

/// Mapped row-gather SpMV, Eq. 1: `y(i, :) = Σ_j map(A(i, j), i, j) x(j, :)`.
///
/// ```
/// use ndarray::array;
/// use subla_algebra::{CsrMat, Par, spmv::spmv_csr};
/// // Row sums of a 0/1 pattern, mapping every stored entry to one (Eq. 2).
/// let a = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![7u32, 8, 9])?;
/// let ones = ndarray::Array2::<f64>::ones((3, 1));
/// let y = spmv_csr(a.as_ref(), ones.view(), |_, _, _| 1.0, Par::Seq);
/// assert_eq!(y, array![[2.0], [1.0]]);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
#[track_caller]
pub fn spmv_csr<T, S, F>(a: CsrRef<'_, T>, x: ArrayView2<'_, S>, map: F, par: Par) -> Array2<S>
where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
{
    spmv(a, x, map, par)
}

/// [`spmv_csr`] into caller storage.
#[track_caller]
pub fn spmv_csr_into<T, S, F>(
    a: CsrRef<'_, T>,
    x: ArrayView2<'_, S>,
    y: ArrayViewMut2<'_, S>,
    update: Update,
    map: F,
    par: Par,
) where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
{
    spmv_into(a, x, y, update, map, par);
}

/// Mapped column-scatter SpMV, Eq. 1, for a CSC matrix; bitwise equal to
/// [`spmv_csr`] on the same matrix.
///
/// ```
/// use ndarray::array;
/// use subla_algebra::{CscMat, Par, spmv::spmv_csc};
/// // Vertex valences n = M 1 (Eq. 10) of two triangles sharing an edge.
/// let m = CscMat::try_new(4, 2, vec![0, 3, 6], vec![0, 1, 2, 1, 2, 3], vec![1u8, 2, 3, 2, 1, 3])?;
/// let ones = ndarray::Array2::<u32>::ones((2, 1));
/// let n = spmv_csc(m.as_ref(), ones.view(), |_, _, _| 1, Par::Seq);
/// assert_eq!(n, array![[1], [2], [2], [1]]);
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
#[track_caller]
pub fn spmv_csc<T, S, F>(a: CscRef<'_, T>, x: ArrayView2<'_, S>, map: F, par: Par) -> Array2<S>
where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
{
    spmv(a, x, map, par)
}

/// [`spmv_csc`] into caller storage.
#[track_caller]
pub fn spmv_csc_into<T, S, F>(
    a: CscRef<'_, T>,
    x: ArrayView2<'_, S>,
    y: ArrayViewMut2<'_, S>,
    update: Update,
    map: F,
    par: Par,
) where
    T: Sync,
    S: Scalar,
    F: Fn(&T, u32, u32) -> S + Sync,
{
    spmv_into(a, x, y, update, map, par);
}

#[track_caller]
fn check_shapes<S>(shape: (usize, usize), x: &ArrayView2<'_, S>, y: &ArrayViewMut2<'_, S>) {
    assert_eq!(
        x.nrows(),
        shape.1,
        "spmv: x has {} rows but A is {} x {} (x must have A.ncols() rows)",
        x.nrows(),
        shape.0,
        shape.1
    );
    assert_eq!(
        y.dim(),
        (shape.0, x.ncols()),
        "spmv: y is {:?} but A is {} x {} and x has {} channels (y must be A.nrows() x x.ncols())",
        y.dim(),
        shape.0,
        shape.1,
        x.ncols()
    );
}

/// Runs `kernel(x, y, d)` on contiguous row-major slices, copying only when
/// the caller's arrays are not in standard layout, and applies `update`.
fn with_contiguous<S: Scalar>(
    x: ArrayView2<'_, S>,
    mut y: ArrayViewMut2<'_, S>,
    update: Update,
    kernel: impl FnOnce(&[S], &mut [S], usize),
) {
    let d = x.ncols();
    let x = x.as_standard_layout();
    let Some(xs) = x.as_slice() else { unreachable!("standard layout arrays are contiguous") };
    if update == Update::Set {
        if let Some(ys) = y.as_slice_mut() {
            kernel(xs, ys, d);
            return;
        }
    }
    let mut tmp = Array2::zeros(y.dim());
    let Some(ts) = tmp.as_slice_mut() else { unreachable!("fresh arrays are contiguous") };
    kernel(xs, ts, d);
    match update {
        Update::Set => y.assign(&tmp),
        Update::Add => y.zip_mut_with(&tmp, |a, &b| *a = *a + b),
    }
}

// ---------------------------------------------------------------------------
// Row gather
// ---------------------------------------------------------------------------

fn gather<T: Sync, S: Scalar, F: Fn(&T, u32, u32) -> S + Sync>(
    a: CsrRef<'_, T>,
    x: &[S],
    y: &mut [S],
    d: usize,
    map: &F,
    par: Par,
) {
    let blocks = balanced_ranges(a.ptr(), par.blocks(a.nnz() + a.nrows(), 1 << 13));
    let run = |rows: Range<usize>, ys: &mut [S]| match d {
        1 => gather_fixed::<T, S, F, 1>(a, rows, x, ys, map),
        2 => gather_fixed::<T, S, F, 2>(a, rows, x, ys, map),
        3 => gather_fixed::<T, S, F, 3>(a, rows, x, ys, map),
        4 => gather_fixed::<T, S, F, 4>(a, rows, x, ys, map),
        _ => gather_dyn(a, rows, x, ys, d, map),
    };
    if blocks.len() <= 1 {
        run(0..a.nrows(), y);
    } else {
        let pieces = split_by_ranges(y, &blocks, d);
        blocks.into_par_iter().zip(pieces).for_each(|(r, ys)| run(r, ys));
    }
}

#[inline(always)]
fn gather_fixed<T, S: Scalar, F: Fn(&T, u32, u32) -> S, const D: usize>(
    a: CsrRef<'_, T>,
    rows: Range<usize>,
    x: &[S],
    y: &mut [S],
    map: &F,
) {
    let ptr = a.ptr();
    let idx = a.indices();
    let vals = a.values();
    debug_assert_eq!(x.len(), a.ncols() * D);
    for (yi, i) in y.chunks_exact_mut(D).zip(rows) {
        let mut acc = [S::zero(); D];
        for p in ptr[i] as usize..ptr[i + 1] as usize {
            // SAFETY: p < ptr[nrows] == nnz, and idx[p] < ncols, so the row
            // j of x (ncols rows of D channels) is in bounds (invariants of
            // the matrix, shapes checked at entry).
            let (j, v) = unsafe { (*idx.get_unchecked(p) as usize, vals.get_unchecked(p)) };
            let w = map(v, i as u32, j as u32);
            // SAFETY: see above.
            let xj = unsafe { x.get_unchecked(j * D..j * D + D) };
            for c in 0..D {
                acc[c] = acc[c] + w * xj[c];
            }
        }
        yi.copy_from_slice(&acc);
    }
}

fn gather_dyn<T, S: Scalar, F: Fn(&T, u32, u32) -> S>(
    a: CsrRef<'_, T>,
    rows: Range<usize>,
    x: &[S],
    y: &mut [S],
    d: usize,
    map: &F,
) {
    if d == 0 {
        return;
    }
    let ptr = a.ptr();
    let idx = a.indices();
    let vals = a.values();
    for (yi, i) in y.chunks_exact_mut(d).zip(rows) {
        yi.fill(S::zero());
        for p in ptr[i] as usize..ptr[i + 1] as usize {
            let j = idx[p] as usize;
            let w = map(&vals[p], i as u32, j as u32);
            for (acc, &xv) in yi.iter_mut().zip(&x[j * d..j * d + d]) {
                *acc = *acc + w * xv;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Column scatter
// ---------------------------------------------------------------------------

/// `at` is the CSR storage of Aᵀ, i.e. the CSC storage of A: its "rows" are
/// the columns of A. Tasks own ranges of output rows of A.
fn scatter<T: Sync, S: Scalar, F: Fn(&T, u32, u32) -> S + Sync>(
    at: CsrRef<'_, T>,
    x: &[S],
    y: &mut [S],
    d: usize,
    map: &F,
    par: Par,
) {
    let nrows = at.ncols();
    y.fill(S::zero());
    if d == 0 || nrows == 0 {
        return;
    }
    // Every task walks all columns to find its rows, so use one task per
    // thread (more would re-read the column structure for nothing).
    let tasks = if at.nnz() + nrows < (1 << 15) { 1 } else { par.threads() };
    let ranges = even_ranges(nrows, tasks);
    let run = |rows: Range<usize>, ys: &mut [S]| match d {
        1 => scatter_fixed::<T, S, F, 1>(at, rows, x, ys, map),
        2 => scatter_fixed::<T, S, F, 2>(at, rows, x, ys, map),
        3 => scatter_fixed::<T, S, F, 3>(at, rows, x, ys, map),
        4 => scatter_fixed::<T, S, F, 4>(at, rows, x, ys, map),
        _ => scatter_dyn(at, rows, x, ys, d, map),
    };
    if ranges.len() <= 1 {
        run(0..nrows, y);
    } else {
        let pieces = split_by_ranges(y, &ranges, d);
        ranges.into_par_iter().zip(pieces).for_each(|(r, ys)| run(r, ys));
    }
}

/// Storage positions of column `j` of A whose rows fall in `rows`.
#[inline(always)]
fn clip(rows_of_col: &[u32], start: usize, rows: &Range<usize>, full: bool) -> Range<usize> {
    if full {
        return start..start + rows_of_col.len();
    }
    let (lo, hi) = (rows.start as u32, rows.end as u32);
    match (rows_of_col.first(), rows_of_col.last()) {
        (Some(&first), Some(&last)) if last >= lo && first < hi => {
            let a = if first >= lo { 0 } else { rows_of_col.partition_point(|&r| r < lo) };
            let b = if last < hi { rows_of_col.len() } else { rows_of_col.partition_point(|&r| r < hi) };
            start + a..start + b
        }
        _ => start..start,
    }
}

fn scatter_fixed<T, S: Scalar, F: Fn(&T, u32, u32) -> S, const D: usize>(
    at: CsrRef<'_, T>,
    rows: Range<usize>,
    x: &[S],
    y: &mut [S],
    map: &F,
) {
    let ptr = at.ptr();
    let idx = at.indices();
    let vals = at.values();
    let full = rows.start == 0 && rows.end == at.ncols();
    let base = rows.start;
    for j in 0..at.nrows() {
        let start = ptr[j] as usize;
        let col = &idx[start..ptr[j + 1] as usize];
        let span = clip(col, start, &rows, full);
        if span.is_empty() {
            continue;
        }
        let xj: [S; D] = std::array::from_fn(|c| x[j * D + c]);
        for p in span {
            // SAFETY: p is inside column j's storage range; idx[p] is a row
            // in `rows` (clipped above), so the offset lies inside `y`.
            let (i, v) = unsafe { (*idx.get_unchecked(p) as usize, vals.get_unchecked(p)) };
            let w = map(v, i as u32, j as u32);
            // SAFETY: see above.
            let yi = unsafe { y.get_unchecked_mut((i - base) * D..(i - base) * D + D) };
            for c in 0..D {
                yi[c] = yi[c] + w * xj[c];
            }
        }
    }
}

fn scatter_dyn<T, S: Scalar, F: Fn(&T, u32, u32) -> S>(
    at: CsrRef<'_, T>,
    rows: Range<usize>,
    x: &[S],
    y: &mut [S],
    d: usize,
    map: &F,
) {
    let ptr = at.ptr();
    let idx = at.indices();
    let vals = at.values();
    let full = rows.start == 0 && rows.end == at.ncols();
    for j in 0..at.nrows() {
        let start = ptr[j] as usize;
        let col = &idx[start..ptr[j + 1] as usize];
        for p in clip(col, start, &rows, full) {
            let i = idx[p] as usize;
            let w = map(&vals[p], i as u32, j as u32);
            let local = i - rows.start;
            for (acc, &xv) in y[local * d..local * d + d].iter_mut().zip(&x[j * d..j * d + d]) {
                *acc = *acc + w * xv;
            }
        }
    }
}
