//! Conversions to and from `sprs` and `nalgebra-sparse`.
//!
//! | from → to | how |
//! |---|---|
//! | [`CscMat`]/[`CsrMat`] → `sprs::CsMatI<T, u32>` | [`CscMat::to_sprs`], [`CsrMat::to_sprs`]: same layout, arrays copied |
//! | `sprs::CsMatBase` (any index type, either layout) → ours | [`CscMat::try_from_sprs`], [`CsrMat::try_from_sprs`]: indices checked against `u32`, layout converted by counting sort if needed |
//! | ours ↔ `nalgebra_sparse::{CscMatrix, CsrMatrix}` | `From` and `TryFrom` (indices are `usize` there) |
//!
//! Every conversion in is validated: a malformed source gives an
//! [`AlgebraError`], never a panic.

#[cfg(any(feature = "sprs", feature = "nalgebra-sparse"))]
use crate::error::{AlgebraError, Result};
#[cfg(any(feature = "sprs", feature = "nalgebra-sparse"))]
use crate::storage::{Layout, SparseMat};
#[cfg(any(feature = "sprs", feature = "nalgebra-sparse"))]
use crate::{CscMat, CsrMat, Par};

#[cfg(any(feature = "sprs", feature = "nalgebra-sparse"))]
fn indices_to_u32<I: Copy>(src: &[I], what: &'static str, to_u64: impl Fn(I) -> Option<u64>) -> Result<Vec<u32>> {
    src.iter()
        .map(|&i| {
            to_u64(i).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| AlgebraError::Conversion {
                from: what,
                reason: "an index or pointer does not fit in u32".into(),
            })
        })
        .collect()
}

#[cfg(feature = "sprs")]
mod sprs_impl {
    use std::ops::Deref;

    use sprs::{CsMatBase, CsMatI, SpIndex};

    use super::*;

    fn from_sprs<N, I, Iptr, IpS, IS, DS, L>(m: &CsMatBase<N, I, IpS, IS, DS, Iptr>) -> Result<SparseMat<N, L>>
    where
        N: Clone + Send + Sync,
        I: SpIndex,
        Iptr: SpIndex,
        IpS: Deref<Target = [Iptr]>,
        IS: Deref<Target = [I]>,
        DS: Deref<Target = [N]>,
        L: Layout,
    {
        let ptr = indices_to_u32(m.indptr().raw_storage(), "sprs::CsMatBase", |i| u64::try_from(i.index()).ok())?;
        // sprs may hold a pointer array that does not start at 0 (a view of
        // a submatrix); rebase it.
        let base = ptr.first().copied().unwrap_or(0);
        let ptr: Vec<u32> = ptr.iter().map(|&p| p - base).collect();
        let nnz = *ptr.last().unwrap_or(&0) as usize;
        let idx = indices_to_u32(&m.indices()[..nnz], "sprs::CsMatBase", |i| u64::try_from(i.index()).ok())?;
        let vals = m.data()[..nnz].to_vec();
        let (nr, nc) = m.shape();
        if m.is_csr() != L::COLUMN_MAJOR {
            SparseMat::try_new(nr, nc, ptr, idx, vals)
        } else {
            let other: SparseMat<N, L::Transposed> = SparseMat::try_new(nr, nc, ptr, idx, vals)?;
            Ok(crate::convert::relayout(other.as_ref(), Par::Rayon))
        }
    }

    impl<T: Clone + Send + Sync> CsrMat<T> {
        /// Converts any `sprs` matrix (either layout, any index type).
        ///
        /// # Errors
        /// Indices over `u32`, or a source that breaks the invariants.
        pub fn try_from_sprs<I, Iptr, IpS, IS, DS>(m: &CsMatBase<T, I, IpS, IS, DS, Iptr>) -> Result<Self>
        where
            I: SpIndex,
            Iptr: SpIndex,
            IpS: Deref<Target = [Iptr]>,
            IS: Deref<Target = [I]>,
            DS: Deref<Target = [T]>,
        {
            from_sprs(m)
        }

        /// A CSR `sprs` matrix with `u32` indices.
        pub fn to_sprs(&self) -> CsMatI<T, u32> {
            CsMatI::new(self.shape(), self.ptr().to_vec(), self.indices().to_vec(), self.values().to_vec())
        }
    }

    impl<T: Clone + Send + Sync> CscMat<T> {
        /// Converts any `sprs` matrix (either layout, any index type).
        ///
        /// # Errors
        /// Indices over `u32`, or a source that breaks the invariants.
        pub fn try_from_sprs<I, Iptr, IpS, IS, DS>(m: &CsMatBase<T, I, IpS, IS, DS, Iptr>) -> Result<Self>
        where
            I: SpIndex,
            Iptr: SpIndex,
            IpS: Deref<Target = [Iptr]>,
            IS: Deref<Target = [I]>,
            DS: Deref<Target = [T]>,
        {
            from_sprs(m)
        }

        /// A CSC `sprs` matrix with `u32` indices.
        pub fn to_sprs(&self) -> CsMatI<T, u32> {
            CsMatI::new_csc(self.shape(), self.ptr().to_vec(), self.indices().to_vec(), self.values().to_vec())
        }
    }
}

#[cfg(feature = "nalgebra-sparse")]
mod nalgebra_impl {
    use nalgebra_sparse::{CscMatrix, CsrMatrix};

    use super::*;

    fn widen(v: &[u32]) -> Vec<usize> {
        v.iter().map(|&i| i as usize).collect()
    }

    fn narrow(v: &[usize], from: &'static str) -> Result<Vec<u32>> {
        indices_to_u32(v, from, |i| u64::try_from(i).ok())
    }

    impl<T: Clone> From<&CsrMat<T>> for CsrMatrix<T> {
        fn from(m: &CsrMat<T>) -> Self {
            match CsrMatrix::try_from_csr_data(
                m.nrows(),
                m.ncols(),
                widen(m.ptr()),
                widen(m.indices()),
                m.values().to_vec(),
            ) {
                Ok(x) => x,
                Err(e) => unreachable!("a valid CsrMat is a valid CsrMatrix: {e}"),
            }
        }
    }

    impl<T: Clone> From<&CscMat<T>> for CscMatrix<T> {
        fn from(m: &CscMat<T>) -> Self {
            match CscMatrix::try_from_csc_data(
                m.nrows(),
                m.ncols(),
                widen(m.ptr()),
                widen(m.indices()),
                m.values().to_vec(),
            ) {
                Ok(x) => x,
                Err(e) => unreachable!("a valid CscMat is a valid CscMatrix: {e}"),
            }
        }
    }

    impl<T: Clone> TryFrom<&CsrMatrix<T>> for CsrMat<T> {
        type Error = AlgebraError;
        fn try_from(m: &CsrMatrix<T>) -> Result<Self> {
            let (ptr, idx, vals) = m.csr_data();
            let from = "nalgebra_sparse::CsrMatrix";
            SparseMat::try_new(m.nrows(), m.ncols(), narrow(ptr, from)?, narrow(idx, from)?, vals.to_vec())
        }
    }

    impl<T: Clone> TryFrom<&CscMatrix<T>> for CscMat<T> {
        type Error = AlgebraError;
        fn try_from(m: &CscMatrix<T>) -> Result<Self> {
            let (ptr, idx, vals) = m.csc_data();
            let from = "nalgebra_sparse::CscMatrix";
            SparseMat::try_new(m.nrows(), m.ncols(), narrow(ptr, from)?, narrow(idx, from)?, vals.to_vec())
        }
    }
}
