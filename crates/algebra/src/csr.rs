//! Compressed sparse row (CSR) matrices.
//!
//! Rows are stored one after the other; within a row the column indices are
//! strictly increasing. The 4 x 3 matrix
//!
//! ```text
//!         c0  c1  c2
//!   r0 [  1   .   4 ]
//!   r1 [  .   3   . ]
//!   r2 [  2   .   5 ]
//!   r3 [  .   .   6 ]
//! ```
//!
//! is stored as
//!
//! ```text
//!   row_ptr = [0,     2,  3,     5,  6]
//!   col_idx = [0, 2,  1,  0, 2,  2]
//!   values  = [1, 4,  3,  2, 5,  6]
//! ```
//!
//! CSR gives each output row of `y = A x` to one thread (a gather), which is
//! how refinement matrices are evaluated (Mlakar et al. 2020, §6.3). The
//! CSR storage of `A` is, array for array, the CSC storage of `Aᵀ`:
//! [`CsrRef::transpose`] is free.
//!
//! ```
//! use subla_algebra::CsrMat;
//! let a = CsrMat::try_new(4, 3, vec![0, 2, 3, 5, 6], vec![0, 2, 1, 0, 2, 2], vec![1, 4, 3, 2, 5, 6])?;
//! assert_eq!(a.as_ref().row(2), (&[0u32, 2][..], &[2, 5][..]));
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```

use crate::error::Result;
use crate::par::Par;
use crate::storage::{Csr, Pattern, PatternRef, SparseMat, SparseMut, SparseRef};

/// Owned CSR matrix.
pub type CsrMat<T> = SparseMat<T, Csr>;
/// Borrowed CSR matrix (`Copy`).
pub type CsrRef<'a, T> = SparseRef<'a, T, Csr>;
/// CSR matrix with mutable values and a fixed pattern.
pub type CsrMut<'a, T> = SparseMut<'a, T, Csr>;
/// Owned value-free CSR pattern.
pub type CsrPattern = Pattern<Csr>;
/// Borrowed value-free CSR pattern (`Copy`).
pub type CsrPatternRef<'a> = PatternRef<'a, Csr>;

impl<T: Clone> CsrMat<T> {
    /// Builds a CSR matrix from `(row, col, value)` triplets in any order;
    /// values at the same position are summed.
    ///
    /// # Errors
    /// A triplet outside the matrix, or sizes over `u32`.
    pub fn try_from_triplets(nrows: usize, ncols: usize, triplets: &[(usize, usize, T)]) -> Result<Self>
    where
        T: std::ops::Add<Output = T>,
    {
        crate::storage::from_triplets(nrows, ncols, triplets, |a, b| a + b)
    }
}

impl<'a, T> CsrRef<'a, T> {
    /// Column indices and values of row `i`.
    ///
    /// # Panics
    /// If `i >= nrows()`.
    #[inline]
    #[track_caller]
    pub fn row(&self, i: usize) -> (&'a [u32], &'a [T]) {
        self.slice(i)
    }
    /// The row pointer array.
    #[inline]
    pub fn row_ptr(&self) -> &'a [u32] {
        self.ptr()
    }
    /// The column indices.
    #[inline]
    pub fn col_indices(&self) -> &'a [u32] {
        self.indices()
    }
    /// The same matrix in CSC layout, by a deterministic parallel counting
    /// sort (same output for any thread count).
    pub fn to_csc(&self, par: Par) -> crate::CscMat<T>
    where
        T: Clone + Send + Sync,
    {
        crate::convert::relayout(*self, par)
    }
}

impl<T> CsrMat<T> {
    /// Column indices and values of row `i`.
    ///
    /// # Panics
    /// If `i >= nrows()`.
    #[inline]
    #[track_caller]
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        self.as_ref().slice(i)
    }
    /// The same matrix in CSC layout (see [`CsrRef::to_csc`]).
    pub fn to_csc(&self, par: Par) -> crate::CscMat<T>
    where
        T: Clone + Send + Sync,
    {
        self.as_ref().to_csc(par)
    }
}

impl<'a> CsrPatternRef<'a> {
    /// Column indices of row `i`.
    ///
    /// # Panics
    /// If `i >= nrows()`.
    #[inline]
    #[track_caller]
    pub fn row(&self, i: usize) -> &'a [u32] {
        self.slice(i)
    }
    /// The same pattern in CSC layout (deterministic counting sort).
    pub fn to_csc(&self, par: Par) -> crate::CscPattern {
        crate::convert::relayout_pattern(*self, par)
    }
}
