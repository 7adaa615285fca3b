//! CSR matrices whose rows share their weights: repeated SpMV reading four
//! bytes per entry instead of twelve.
//!
//! The rows of a refinement matrix repeat a few weight sequences: every
//! face point of a quad averages four values with `¼`, every smooth edge
//! point has `⅜, ⅜, 1/16 …`, every smooth vertex of valence `n` the same
//! mask up to the order of its columns. [`SharedCsr`] stores each distinct
//! sequence once, in a table, and per row its columns and where its weights
//! start in the table:
//!
//! ```text
//!   row i:  columns idx[ptr[i] .. ptr[i + 1]]
//!           weights table[start[i] .. start[i] + (ptr[i + 1] − ptr[i])]
//! ```
//!
//! so a row costs `4 (entries + 2)` bytes instead of `12 entries + 4`; on
//! refinement matrices, whose SpMV is limited by the bytes it reads, this
//! is about twice as fast. The table holds each distinct sequence once per
//! block of rows it was built from (so small: a few thousand values for a
//! mesh of millions of faces); a matrix whose rows never repeat costs four
//! bytes a row more than its CSR form ([`SharedCsr::bytes`] says).
//!
//! # Determinism and exactness
//! Every output row is written by one task, which sums its entries in
//! stored order from `+0`: `y(i, c) = ((0 + w₀x₀) + w₁x₁) + …`, with the
//! weights converted once to `T`. This is, bit for bit, what
//! [`spmv_csr`](crate::spmv::spmv_csr) computes on the matrix it was built
//! from (with the conversion as its map), for every [`Par`] and pool size.
//!
//! # Invariants
//! `ptr` has `nrows + 1` entries from 0, non-decreasing; every index is
//! `< ncols`; every row's weights `start[i] .. start[i] + len` lie in the
//! table. The fields are private and only [`SharedCsr::from_csr`] builds
//! the matrix, which is what lets the kernel read without bounds checks.
//!
//! ```
//! use ndarray::array;
//! use subla_algebra::{CsrMat, Par, SharedCsr};
//! // Two rows averaging two values, one row copying one.
//! let a = CsrMat::try_new(3, 3, vec![0, 2, 4, 5], vec![0, 1, 1, 2, 2], vec![0.5, 0.5, 0.5, 0.5, 1.0])?;
//! let r = SharedCsr::<f64>::from_csr(a.as_ref(), Par::Seq)?;
//! assert_eq!(r.table_len(), 3); // [½, ½] once, [1] once
//! let x = array![[2.0], [4.0], [8.0]];
//! let mut y = ndarray::Array2::zeros((3, 1));
//! r.apply(x.view(), y.view_mut(), Par::Rayon);
//! assert_eq!(y, array![[3.0], [6.0], [8.0]]);
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;

use crate::CsrRef;
use crate::error::{AlgebraError, Result, to_u32};
use crate::par::{Par, balanced_start, even_ranges, for_each_block};

/// A CSR matrix whose rows point into one table of weight sequences (see
/// the [module docs](self)). `T` is `f32` or `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedCsr<T> {
    nrows: u32,
    ncols: u32,
    ptr: Vec<u32>,
    idx: Vec<u32>,
    start: Vec<u32>,
    table: Vec<T>,
}

/// A multiply-and-rotate hash of `u64` words (the rows' weight bits); the
/// keys are hashes already, so the map's hasher passes them through.
#[derive(Default)]
struct Pass(u64);

impl Hasher for Pass {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

fn row_hash(w: &[f64]) -> u64 {
    let mut h = w.len() as u64;
    for v in w {
        h = (h.rotate_left(23) ^ v.to_bits()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

impl<T: Float + Send + Sync> SharedCsr<T> {
    /// `m` with its rows' weight sequences stored once (per block of rows
    /// built in parallel) and converted to `T` (rounding to nearest for
    /// `f32`). Rows are equal when their weights are equal bit for bit.
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] if the table passes `u32::MAX` values;
    /// [`AlgebraError::Conversion`] if a value has no `T` representation
    /// (never for `f32` or `f64`); [`AlgebraError::OutOfMemory`].
    pub fn from_csr(m: CsrRef<'_, f64>, par: Par) -> Result<Self> {
        let (ptr, vals) = (m.ptr(), m.values());
        // Each block of rows: its table and its rows' starts in it.
        let dedup = |rows: Range<usize>| -> Result<(Vec<T>, Vec<u32>)> {
            let mut table: Vec<T> = Vec::new();
            let mut start = crate::mem::try_vec_with_capacity(rows.len(), "weight starts of a shared matrix")?;
            let mut seen: HashMap<u64, u32, BuildHasherDefault<Pass>> = HashMap::default();
            for i in rows {
                let w = &vals[ptr[i] as usize..ptr[i + 1] as usize];
                let equal = |at: u32| {
                    table[at as usize..at as usize + w.len()]
                        .iter()
                        .zip(w)
                        .all(|(t, &v)| <T as num_traits::NumCast>::from(v).is_some_and(|v| v.eq(t) && same_sign(v, *t)))
                };
                let at = match seen.entry(row_hash(w)) {
                    Entry::Occupied(e) if equal(*e.get()) => *e.get(),
                    e => {
                        let at = to_u32(table.len(), "weights of a shared matrix")?;
                        for (k, &v) in w.iter().enumerate() {
                            let t = <T as num_traits::NumCast>::from(v).ok_or_else(|| AlgebraError::Conversion {
                                from: "f64",
                                reason: format!(
                                    "value {v} at position {} has no {} representation",
                                    ptr[i] as usize + k,
                                    std::any::type_name::<T>()
                                ),
                            })?;
                            table.push(t);
                        }
                        // A colliding row keeps the first sequence's slot.
                        if let Entry::Vacant(v) = e {
                            v.insert(at);
                        }
                        at
                    }
                };
                start.push(at);
            }
            Ok((table, start))
        };
        let ranges = even_ranges(m.nrows(), par.blocks(m.nnz() + m.nrows(), 1 << 16));
        let parts: Vec<(Vec<T>, Vec<u32>)> = if ranges.len() > 1 {
            ranges.into_par_iter().map(dedup).collect::<Result<_>>()?
        } else {
            ranges.into_iter().map(dedup).collect::<Result<_>>()?
        };
        let total: usize = parts.iter().map(|p| p.0.len()).sum();
        to_u32(total, "weights of a shared matrix")?;
        let mut table = crate::mem::try_vec_with_capacity(total, "weights of a shared matrix")?;
        let mut start = crate::mem::try_vec_with_capacity(m.nrows(), "weight starts of a shared matrix")?;
        for (t, s) in parts {
            // Fits: the total was checked above.
            let base = table.len() as u32;
            start.extend(s.iter().map(|&x| x + base));
            table.extend(t);
        }
        Ok(SharedCsr {
            nrows: m.nrows() as u32,
            ncols: m.ncols() as u32,
            ptr: ptr.to_vec(),
            idx: m.indices().to_vec(),
            start,
            table,
        })
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows as usize
    }

    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols as usize
    }

    /// Number of entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.idx.len()
    }

    /// Number of values in the weight table.
    #[inline]
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Bytes held by the row pointers, indices, weight starts and table.
    pub fn bytes(&self) -> usize {
        (self.ptr.len() + self.idx.len() + self.start.len()) * size_of::<u32>() + self.table.len() * size_of::<T>()
    }

    /// The weights of row `i`, in stored order.
    ///
    /// # Panics
    /// If `i >= nrows`.
    pub fn row_weights(&self, i: usize) -> &[T] {
        let len = (self.ptr[i + 1] - self.ptr[i]) as usize;
        let s = self.start[i] as usize;
        &self.table[s..s + len]
    }

    /// The columns of row `i`, ascending.
    ///
    /// # Panics
    /// If `i >= nrows`.
    pub fn row_indices(&self, i: usize) -> &[u32] {
        &self.idx[self.ptr[i] as usize..self.ptr[i + 1] as usize]
    }

    /// `y = A x` for `ncols × d` data `x` into `nrows × d` storage `y`, in
    /// any memory layout (contiguous row-major arrays are used in place,
    /// others are copied). Bitwise the same for every [`Par`].
    ///
    /// # Panics
    /// If `x` does not have `ncols` rows or `y` is not `nrows × d`.
    #[track_caller]
    pub fn apply(&self, x: ArrayView2<'_, T>, y: ArrayViewMut2<'_, T>, par: Par) {
        crate::padded::apply_in_layout("SharedCsr::apply", (self.nrows(), self.ncols()), x, y, |xs, ys, d| {
            self.apply_slices(xs, ys, d, par);
        });
    }

    /// `y = A x` on contiguous row-major data with `d` channels (`x` holds
    /// `ncols * d` values, `y` holds `nrows * d`, every one overwritten).
    /// Allocates nothing.
    ///
    /// # Panics
    /// If `x.len() != self.ncols() * d` or `y.len() != self.nrows() * d`.
    #[track_caller]
    pub fn apply_slices(&self, x: &[T], y: &mut [T], d: usize, par: Par) {
        assert!(
            self.ncols().checked_mul(d) == Some(x.len()) && self.nrows().checked_mul(d) == Some(y.len()),
            "SharedCsr::apply_slices: x has {} and y {} values but A is {} x {} and d = {d}",
            x.len(),
            y.len(),
            self.nrows,
            self.ncols
        );
        if d == 0 || self.nrows == 0 {
            return;
        }
        let work = (self.nnz() + self.nrows()).saturating_mul(d);
        let nblocks = par.blocks(work, 1 << 14).min(self.nrows());
        let run = |rows: Range<usize>, ys: &mut [T]| match d {
            1 => self.block::<1>(rows, x, ys, 1, 0),
            2 => self.block::<2>(rows, x, ys, 2, 0),
            3 => self.block::<3>(rows, x, ys, 3, 0),
            4 => self.block::<4>(rows, x, ys, 4, 0),
            _ => {
                for c in 0..d {
                    self.block::<1>(rows.clone(), x, ys, d, c);
                }
            }
        };
        if nblocks <= 1 {
            run(0..self.nrows(), y);
        } else {
            for_each_block(y, d, nblocks, &|k| balanced_start(&self.ptr, nblocks, k), &run);
        }
    }

    /// Channels `offset..offset + D` of rows `rows` (`x` and `y` rows of
    /// `stride` values; `y` holds those rows).
    #[inline(always)]
    fn block<const D: usize>(&self, rows: Range<usize>, x: &[T], y: &mut [T], stride: usize, offset: usize) {
        debug_assert!(offset + D <= stride && x.len() == self.ncols() * stride);
        let ptr = &self.ptr[rows.start..=rows.end];
        let start = &self.start[rows];
        for ((yi, w), &s) in y.chunks_exact_mut(stride).zip(ptr.windows(2)).zip(start) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            let mut acc = [T::zero(); D];
            for k in 0..b - a {
                // SAFETY: `a + k < ptr[nrows] == idx.len()`, each index is
                // `< ncols` and `s + k` lies in the table (invariants of
                // `SharedCsr`), and `x.len() == ncols * stride` with
                // `offset + D <= stride` (asserted in `apply_slices`, and
                // how the callers cut the channels).
                let (j, wt) =
                    unsafe { (*self.idx.get_unchecked(a + k) as usize, *self.table.get_unchecked(s as usize + k)) };
                let base = j * stride + offset;
                // SAFETY: see above.
                let xj = unsafe { x.get_unchecked(base..base + D) };
                for c in 0..D {
                    acc[c] = acc[c] + wt * xj[c];
                }
            }
            yi[offset..offset + D].copy_from_slice(&acc);
        }
    }
}

/// Equal and of the same sign (so that `+0` and `−0` stay apart, as their
/// bits do).
fn same_sign<T: Float>(a: T, b: T) -> bool {
    a.is_sign_negative() == b.is_sign_negative()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CsrMat;
    use crate::spmv::spmv_csr;
    use ndarray::Array2;

    fn random(nrows: usize, ncols: usize, seed: u64) -> CsrMat<f64> {
        // Rows of 1–6 entries whose weights come from a few patterns, some
        // unique, some negative zero.
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) as usize
        };
        let (mut ptr, mut idx, mut vals) = (vec![0u32], Vec::new(), Vec::new());
        for _ in 0..nrows {
            let len = 1 + next() % 6;
            let mut cols: Vec<u32> = (0..len).map(|_| (next() % ncols) as u32).collect();
            cols.sort_unstable();
            cols.dedup();
            let pattern = next() % 5;
            for (k, &c) in cols.iter().enumerate() {
                idx.push(c);
                vals.push(match pattern {
                    0 => 1.0 / cols.len() as f64,
                    1 => [0.375, 0.375, 0.0625, 0.0625, 0.0625, 0.0625][k],
                    2 => -0.0,
                    3 => (next() % 1000) as f64 / 997.0,
                    _ => 0.25 * (k + 1) as f64,
                });
            }
            ptr.push(idx.len() as u32);
        }
        CsrMat::try_new(nrows, ncols, ptr, idx, vals).expect("a valid matrix")
    }

    #[test]
    fn equals_csr_spmv_bit_for_bit_for_every_width_and_pool() {
        let a = random(5000, 700, 7);
        for par in [Par::Seq, Par::Rayon] {
            let s = SharedCsr::<f64>::from_csr(a.as_ref(), par).expect("builds");
            assert!(s.table_len() < a.nnz() / 2, "patterns repeat: {} of {}", s.table_len(), a.nnz());
            for i in 0..a.nrows() {
                let r = a.as_ref();
                let range = r.ptr()[i] as usize..r.ptr()[i + 1] as usize;
                assert_eq!(s.row_indices(i), &r.indices()[range.clone()]);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(s.row_weights(i)), bits(&r.values()[range]), "row {i}");
            }
            for d in [1, 2, 3, 4, 5, 7] {
                let x = Array2::from_shape_fn((700, d), |(i, c)| (i * 31 + c * 7) as f64 / 13.0 - 20.0);
                let want = spmv_csr(a.as_ref(), x.view(), |&w, _, _| w, Par::Seq);
                for p in [Par::Seq, Par::Rayon] {
                    let mut y = Array2::from_elem((5000, d), f64::NAN);
                    s.apply(x.view(), y.view_mut(), p);
                    assert!(
                        y.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "d = {d}, {p:?}: differs from the CSR SpMV"
                    );
                }
                // Column-major input and output.
                let xt = x.t().to_owned();
                let mut yt = Array2::<f64>::zeros((d, 5000));
                s.apply(xt.t(), yt.view_mut().reversed_axes(), Par::Rayon);
                assert!(yt.t().iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "d = {d}, strided");
            }
        }
    }

    #[test]
    fn f32_converts_once_and_matches_a_mapped_spmv() {
        let a = random(800, 90, 3);
        let s = SharedCsr::<f32>::from_csr(a.as_ref(), Par::Rayon).expect("builds");
        let x = Array2::from_shape_fn((90, 3), |(i, c)| (i + c) as f32 * 0.5);
        let want = spmv_csr(a.as_ref(), x.view(), |&w, _, _| w as f32, Par::Seq);
        let mut y = Array2::<f32>::zeros((800, 3));
        s.apply(x.view(), y.view_mut(), Par::Seq);
        assert!(y.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn empty_rows_and_matrices() {
        let a = CsrMat::try_new(3, 2, vec![0, 0, 1, 1], vec![1], vec![2.0]).expect("valid");
        let s = SharedCsr::<f64>::from_csr(a.as_ref(), Par::Seq).expect("builds");
        let mut y = Array2::from_elem((3, 2), 9.0);
        s.apply(ndarray::array![[1.0, 2.0], [3.0, 4.0]].view(), y.view_mut(), Par::Seq);
        assert_eq!(y, ndarray::array![[0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]);
        let e = CsrMat::<f64>::try_new(0, 4, vec![0], vec![], vec![]).expect("valid");
        let s = SharedCsr::<f64>::from_csr(e.as_ref(), Par::Rayon).expect("builds");
        assert_eq!((s.nrows(), s.ncols(), s.table_len()), (0, 4, 0));
    }

    #[test]
    #[should_panic(expected = "SharedCsr::apply")]
    fn wrong_shapes_panic_naming_the_operands() {
        let a = CsrMat::try_new(1, 2, vec![0, 1], vec![1], vec![2.0]).expect("valid");
        let s = SharedCsr::<f64>::from_csr(a.as_ref(), Par::Seq).expect("builds");
        let mut y = Array2::zeros((1, 1));
        s.apply(Array2::zeros((3, 1)).view(), y.view_mut(), Par::Seq);
    }
}
