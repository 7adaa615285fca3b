//! Compressed sparse column (CSC) matrices.
//!
//! Columns are stored one after the other; within a column the row indices
//! are strictly increasing. The 4 x 3 matrix
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
//!   col_ptr = [0,       2,   3,          6]
//!   row_idx = [0, 2,    1,   0, 2, 3]
//!   values  = [1, 2,    3,   4, 5, 6]
//! ```
//!
//! CSC gives fast access to the vertices of a face in the mesh matrix
//! (Mlakar et al. 2020, §4): each column of the mesh matrix is a face.
//!
//! ```
//! use subla_algebra::CscMat;
//! let a = CscMat::try_new(4, 3, vec![0, 2, 3, 6], vec![0, 2, 1, 0, 2, 3], vec![1, 2, 3, 4, 5, 6])?;
//! assert_eq!(a.as_ref().col(2), (&[0u32, 2, 3][..], &[4, 5, 6][..]));
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```

use crate::error::Result;
use crate::par::Par;
use crate::storage::{Csc, Pattern, PatternRef, SparseMat, SparseMut, SparseRef};

/// Owned CSC matrix.
pub type CscMat<T> = SparseMat<T, Csc>;
/// Borrowed CSC matrix (`Copy`).
pub type CscRef<'a, T> = SparseRef<'a, T, Csc>;
/// CSC matrix with mutable values and a fixed pattern.
pub type CscMut<'a, T> = SparseMut<'a, T, Csc>;
/// Owned value-free CSC pattern.
pub type CscPattern = Pattern<Csc>;
/// Borrowed value-free CSC pattern (`Copy`).
pub type CscPatternRef<'a> = PatternRef<'a, Csc>;

impl<T: Clone> CscMat<T> {
    /// Builds a CSC matrix from `(row, col, value)` triplets in any order;
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

impl<'a, T> CscRef<'a, T> {
    /// Row indices and values of column `j`.
    ///
    /// # Panics
    /// If `j >= ncols()`.
    #[inline]
    #[track_caller]
    pub fn col(&self, j: usize) -> (&'a [u32], &'a [T]) {
        self.slice(j)
    }
    /// The column pointer array.
    #[inline]
    pub fn col_ptr(&self) -> &'a [u32] {
        self.ptr()
    }
    /// The row indices.
    #[inline]
    pub fn row_indices(&self) -> &'a [u32] {
        self.indices()
    }
    /// The same matrix in CSR layout, by a deterministic parallel counting
    /// sort (same output for any thread count).
    pub fn to_csr(&self, par: Par) -> crate::CsrMat<T>
    where
        T: Clone + Send + Sync,
    {
        crate::convert::relayout(*self, par)
    }
}

impl<T> CscMat<T> {
    /// Row indices and values of column `j`.
    ///
    /// # Panics
    /// If `j >= ncols()`.
    #[inline]
    #[track_caller]
    pub fn col(&self, j: usize) -> (&[u32], &[T]) {
        self.as_ref().slice(j)
    }
    /// The same matrix in CSR layout (see [`CscRef::to_csr`]).
    pub fn to_csr(&self, par: Par) -> crate::CsrMat<T>
    where
        T: Clone + Send + Sync,
    {
        self.as_ref().to_csr(par)
    }
}

impl<'a> CscPatternRef<'a> {
    /// Row indices of column `j`.
    ///
    /// # Panics
    /// If `j >= ncols()`.
    #[inline]
    #[track_caller]
    pub fn col(&self, j: usize) -> &'a [u32] {
        self.slice(j)
    }
    /// The same pattern in CSR layout (deterministic counting sort).
    pub fn to_csr(&self, par: Par) -> crate::CsrPattern {
        crate::convert::relayout_pattern(*self, par)
    }
}
