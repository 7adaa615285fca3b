//! Padded CSR evaluation of refinement matrices: `P_{i+1} = R_i P_i`
//! (Mlakar et al. 2020, §6.3, Eq. 21–22).
//!
//! A (possibly composed) refinement matrix `R` is applied once per frame to
//! fresh vertex data, so it pays to store it for speed. As in the paper's
//! evaluation kernel, every row's column indices and values are padded to a
//! multiple of [`PaddedCsr::GROUP`] = 4 entries, so the inner loop always
//! handles four entries at once with no remainder. A padding entry has
//! weight zero and repeats the row's last column index, so its load stays in
//! bounds and touches a row of `x` the row already reads; empty rows stay
//! empty. The 4 x 3 matrix of [`crate::csr`]
//!
//! ```text
//!         c0  c1  c2
//!   r0 [  1   .   4 ]
//!   r1 [  .   3   . ]
//!   r2 [  2   .   5 ]
//!   r3 [  .   .   6 ]
//! ```
//!
//! is stored as (`*` marks padding)
//!
//! ```text
//!   ptr  = [0,           4,           8,          12,          16]
//!   idx  = [0  2  2* 2*, 1  1* 1* 1*, 0  2  2* 2*, 2  2* 2* 2*]
//!   vals = [1  4  0* 0*, 3  0* 0* 0*, 2  5  0* 0*, 6  0* 0* 0*]
//! ```
//!
//! Values are converted once to the evaluation type `T` (`f32` or `f64`).
//!
//! # Evaluation
//! [`PaddedCsr::apply`] computes `y = A x` for `n × d` vertex data (rows are
//! vertices, `d` channels: positions, normals, colours …). Up to four
//! channels are accumulated in registers; wider data is done four channels
//! at a time, row by row. Rows are cut into blocks holding about the same
//! number of stored entries, one task per block.
//!
//! # Allocation
//! [`PaddedCsr::apply_slices`] allocates nothing, so a frame loop can call
//! it without touching the allocator: its blocks are found as they run
//! ([`for_each_block`]), not collected first.
//! Rayon itself allocates nothing when the call comes from inside its pool
//! (`ThreadPool::install`); from a thread outside the pool, each parallel
//! call goes through rayon's injector queue, which allocates one block of
//! 63 slots (about 1.5 KB) per 63 jobs injected. [`PaddedCsr::apply`]
//! copies data not in standard layout into fresh arrays.
//!
//! # Determinism and exactness
//! Every output row is written by exactly one task, which sums its entries
//! in stored order: `y(i, c) = ((0 + w₀x₀) + w₁x₁) + …`. The results are
//! therefore bitwise identical for every [`Par`] and pool size. The padding
//! adds `0 · x`, an exact zero, to a sum that started at `+0`, which changes
//! nothing, so for finite `x` the result equals, bit for bit, a plain
//! sequential CSR SpMV over the same (converted) entries in the same order,
//! such as [`spmv_csr`](crate::spmv::spmv_csr) with the identity map. (If a
//! padded row's last column of `x` holds an infinity, `0 · ∞` turns that
//! row's `±∞` into NaN.)
//!
//! # Invariants
//! `ptr` has `nrows + 1` entries from 0, each row's length is a multiple of
//! 4, every index is `< ncols`, and the stored count fits in `u32`. The
//! fields are private and only [`PaddedCsr::from_csr`] builds the matrix,
//! which is what lets the kernel load `x` without bounds checks.
//!
//! # Panics
//! [`PaddedCsr::apply`] and [`PaddedCsr::apply_slices`] panic, naming the
//! operands, if `x` does not have `ncols` rows or `y` is not `nrows × d`.
//!
//! ```
//! use ndarray::array;
//! use subla_algebra::{CsrMat, PaddedCsr, Par};
//! let a = CsrMat::try_new(4, 3, vec![0, 2, 3, 5, 6], vec![0, 2, 1, 0, 2, 2], vec![1.0, 4.0, 3.0, 2.0, 5.0, 6.0])?;
//! let r = PaddedCsr::<f32>::from_csr(a.as_ref())?;
//! assert_eq!((r.nnz(), r.stored()), (6, 16));
//! let x = array![[1.0f32, 10.0], [2.0, 20.0], [3.0, 30.0]];
//! let mut y = ndarray::Array2::zeros((4, 2));
//! r.apply(x.view(), y.view_mut(), Par::Rayon);
//! assert_eq!(y, array![[13.0, 130.0], [6.0, 60.0], [17.0, 170.0], [18.0, 180.0]]);
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```

use std::ops::Range;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;

use crate::CsrRef;
use crate::error::{AlgebraError, Result, to_u32};
use crate::par::{Par, balanced_start, for_each_block};

/// `y = A x` for an `shape` matrix `A` applied by `apply(x, y, d)` to
/// contiguous row-major slices of `d` channels: `x` and `y` in any layout
/// (standard-layout data used in place, the rest copied). `what` names the
/// caller in the panics.
///
/// # Panics
/// If `x` does not have `shape.1` rows or `y` is not `shape.0 × x.ncols()`.
#[track_caller]
pub(crate) fn apply_in_layout<T: Float>(
    what: &str,
    shape: (usize, usize),
    x: ArrayView2<'_, T>,
    mut y: ArrayViewMut2<'_, T>,
    apply: impl FnOnce(&[T], &mut [T], usize),
) {
    let (nrows, ncols) = shape;
    assert_eq!(
        x.nrows(),
        ncols,
        "{what}: x has {} rows but A is {nrows} x {ncols} (x must have A.ncols() rows)",
        x.nrows()
    );
    assert_eq!(
        y.dim(),
        (nrows, x.ncols()),
        "{what}: y is {:?} but A is {nrows} x {ncols} and x has {} channels (y must be A.nrows() x x.ncols())",
        y.dim(),
        x.ncols()
    );
    let d = x.ncols();
    let x = x.as_standard_layout();
    let Some(xs) = x.as_slice() else { unreachable!("standard layout arrays are contiguous") };
    if let Some(ys) = y.as_slice_mut() {
        apply(xs, ys, d);
        return;
    }
    let mut tmp = Array2::zeros(y.dim());
    let Some(ts) = tmp.as_slice_mut() else { unreachable!("fresh arrays are contiguous") };
    apply(xs, ts, d);
    y.assign(&tmp);
}

/// A CSR matrix whose rows are padded to multiples of four entries for fast
/// repeated SpMV (see the [module docs](self)). `T` is `f32` or `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct PaddedCsr<T> {
    nrows: u32,
    ncols: u32,
    nnz: usize,
    ptr: Vec<u32>,
    idx: Vec<u32>,
    vals: Vec<T>,
}

impl<T: Float + Send + Sync> PaddedCsr<T> {
    /// Entries per group: every row holds a multiple of this many.
    pub const GROUP: usize = 4;

    /// Pads `m` and converts its values to `T` (rounding to nearest for
    /// `f32`).
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] if the padded matrix stores more than
    /// `u32::MAX` entries; [`AlgebraError::Conversion`] if a value has no
    /// `T` representation (never for `f32` or `f64`).
    pub fn from_csr(m: CsrRef<'_, f64>) -> Result<Self> {
        let g = Self::GROUP;
        let (ptr_in, idx_in, vals_in) = (m.ptr(), m.indices(), m.values());
        let stored: usize = ptr_in.windows(2).map(|w| ((w[1] - w[0]) as usize).next_multiple_of(g)).sum();
        to_u32(stored, "stored entries of the padded matrix")?;
        let mut ptr = Vec::with_capacity(m.nrows() + 1);
        let mut idx = crate::mem::try_vec_with_capacity(stored, "indices of the padded matrix")?;
        let mut vals = crate::mem::try_vec_with_capacity(stored, "values of the padded matrix")?;
        ptr.push(0u32);
        for w in ptr_in.windows(2) {
            let range = w[0] as usize..w[1] as usize;
            let row = &idx_in[range.clone()];
            idx.extend_from_slice(row);
            for (p, &v) in range.clone().zip(&vals_in[range]) {
                let t = <T as num_traits::NumCast>::from(v).ok_or_else(|| AlgebraError::Conversion {
                    from: "f64",
                    reason: format!("value {v} at position {p} has no {} representation", std::any::type_name::<T>()),
                })?;
                vals.push(t);
            }
            if let Some(&last) = row.last() {
                let pad = row.len().next_multiple_of(g) - row.len();
                idx.extend(std::iter::repeat_n(last, pad));
                vals.extend(std::iter::repeat_n(T::zero(), pad));
            }
            // Fits: the total was checked above.
            ptr.push(idx.len() as u32);
        }
        let (nrows, ncols) = (m.nrows() as u32, m.ncols() as u32);
        Ok(PaddedCsr { nrows, ncols, nnz: m.nnz(), ptr, idx, vals })
    }

    /// Number of rows (refined vertices).
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows as usize
    }

    /// Number of columns (coarse vertices).
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols as usize
    }

    /// Number of entries of the original matrix (without padding).
    #[inline]
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Number of stored entries, padding included.
    #[inline]
    pub fn stored(&self) -> usize {
        self.idx.len()
    }

    /// Bytes held by the pointer, index and value arrays.
    pub fn bytes(&self) -> usize {
        (self.ptr.len() + self.idx.len()) * size_of::<u32>() + self.vals.len() * size_of::<T>()
    }

    /// The padded row pointers (`nrows + 1` entries, multiples of 4 apart).
    #[inline]
    pub fn ptr(&self) -> &[u32] {
        &self.ptr
    }

    /// The column indices, padding included.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.idx
    }

    /// The values, padding (zeros) included.
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.vals
    }

    /// `y = A x` for `ncols × d` data `x` into `nrows × d` storage `y`, in
    /// any memory layout (contiguous row-major arrays are used in place,
    /// others are copied into fresh arrays: use
    /// [`PaddedCsr::apply_slices`] to allocate nothing). Bitwise the same
    /// for every [`Par`]; see the
    /// [module docs](self#determinism-and-exactness).
    ///
    /// # Panics
    /// If `x.nrows() != self.ncols()` or `y.dim() != (self.nrows(), x.ncols())`.
    #[track_caller]
    pub fn apply(&self, x: ArrayView2<'_, T>, y: ArrayViewMut2<'_, T>, par: Par) {
        apply_in_layout("PaddedCsr::apply", (self.nrows(), self.ncols()), x, y, |xs, ys, d| {
            self.apply_slices(xs, ys, d, par);
        });
    }

    /// `y = A x` on contiguous row-major data with `d` channels: `x` holds
    /// `ncols * d` values (row `j` at `x[j * d..(j + 1) * d]`), `y` holds
    /// `nrows * d`. Every element of `y` is overwritten. Allocates nothing
    /// (see the [module docs](self#allocation)).
    ///
    /// # Panics
    /// If `x.len() != self.ncols() * d` or `y.len() != self.nrows() * d`.
    #[track_caller]
    pub fn apply_slices(&self, x: &[T], y: &mut [T], d: usize, par: Par) {
        assert!(
            self.ncols().checked_mul(d) == Some(x.len()),
            "PaddedCsr::apply_slices: x has {} values but A is {} x {} and d = {d} (x must hold A.ncols() * d)",
            x.len(),
            self.nrows,
            self.ncols
        );
        assert!(
            self.nrows().checked_mul(d) == Some(y.len()),
            "PaddedCsr::apply_slices: y has {} values but A is {} x {} and d = {d} (y must hold A.nrows() * d)",
            y.len(),
            self.nrows,
            self.ncols
        );
        if d == 0 || self.nrows == 0 {
            return;
        }
        let work = (self.stored() + self.nrows()).saturating_mul(d);
        let nblocks = par.blocks(work, 1 << 14).min(self.nrows());
        let run = |rows: Range<usize>, ys: &mut [T]| match d {
            1 => self.block::<1>(rows, x, ys),
            2 => self.block::<2>(rows, x, ys),
            3 => self.block::<3>(rows, x, ys),
            4 => self.block::<4>(rows, x, ys),
            _ => self.block_wide(rows, x, ys, d),
        };
        if nblocks <= 1 {
            run(0..self.nrows(), y);
        } else {
            for_each_block(y, d, nblocks, &|k| balanced_start(&self.ptr, nblocks, k), &run);
        }
    }

    /// Rows `rows` for exactly `D` channels; `y` holds those rows.
    fn block<const D: usize>(&self, rows: Range<usize>, x: &[T], y: &mut [T]) {
        let ptr = &self.ptr[rows.start..=rows.end];
        for (yi, w) in y.chunks_exact_mut(D).zip(ptr.windows(2)) {
            let acc = self.row::<D>(w[0] as usize..w[1] as usize, x, D, 0);
            yi.copy_from_slice(&acc);
        }
    }

    /// Rows `rows` for `d > 4` channels: four channels at a time, then the
    /// remaining one to three, each row finished before the next.
    fn block_wide(&self, rows: Range<usize>, x: &[T], y: &mut [T], d: usize) {
        let ptr = &self.ptr[rows.start..=rows.end];
        let full = d - d % 4;
        for (yi, w) in y.chunks_exact_mut(d).zip(ptr.windows(2)) {
            let range = w[0] as usize..w[1] as usize;
            for offset in (0..full).step_by(4) {
                let acc = self.row::<4>(range.clone(), x, d, offset);
                yi[offset..offset + 4].copy_from_slice(&acc);
            }
            match d % 4 {
                1 => yi[full..].copy_from_slice(&self.row::<1>(range, x, d, full)),
                2 => yi[full..].copy_from_slice(&self.row::<2>(range, x, d, full)),
                3 => yi[full..].copy_from_slice(&self.row::<3>(range, x, d, full)),
                _ => {}
            }
        }
    }

    /// Channels `offset..offset + D` of one row: entries `range` (a multiple
    /// of 4) against `x` rows of `stride` values, summed in stored order.
    #[inline(always)]
    fn row<const D: usize>(&self, range: Range<usize>, x: &[T], stride: usize, offset: usize) -> [T; D] {
        debug_assert!(offset + D <= stride && x.len() == self.ncols() * stride);
        let mut acc = [T::zero(); D];
        let mut step = |j: u32, w: T| {
            let base = j as usize * stride + offset;
            // SAFETY: `j < ncols` (invariant of `PaddedCsr`: indices come
            // from a validated CSR matrix, padding repeats one of them),
            // `x.len() == ncols * stride` (asserted in `apply_slices`) and
            // `offset + D <= stride` (how the callers cut the channels), so
            // `base + D <= x.len()`.
            let xj = unsafe { x.get_unchecked(base..base + D) };
            for c in 0..D {
                acc[c] = acc[c] + w * xj[c];
            }
        };
        for (j, w) in self.idx[range.clone()].chunks_exact(4).zip(self.vals[range].chunks_exact(4)) {
            step(j[0], w[0]);
            step(j[1], w[1]);
            step(j[2], w[2]);
            step(j[3], w[3]);
        }
        acc
    }
}
