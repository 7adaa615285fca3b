//! proptest strategies for sparse matrices (feature `proptest-support`), as
//! nalgebra-sparse exports its own: downstream crates reuse them.
//!
//! ```
//! use proptest::prelude::*;
//! use subla_algebra::proptest_support::csr;
//! proptest!(|(a in csr(0..8usize, 0..8usize, 4, -5i64..5))| {
//!     prop_assert!(a.nnz() <= a.nrows() * 4);
//! });
//! ```

use std::collections::BTreeSet;
use std::ops::Range;

use proptest::collection::{btree_set, vec};
use proptest::prelude::*;

use crate::storage::{Csc, Csr, Layout, SparseMat};
use crate::{CscMat, CsrMat};

/// Matrices of any layout with `nrows`, `ncols` drawn from the ranges, up to
/// `max_per_slice` entries per major slice, and values from `values`.
pub fn sparse<T, L>(
    nrows: Range<usize>,
    ncols: Range<usize>,
    max_per_slice: usize,
    values: impl Strategy<Value = T> + Clone + 'static,
) -> impl Strategy<Value = SparseMat<T, L>>
where
    T: Clone + std::fmt::Debug + 'static,
    L: Layout,
{
    (nrows, ncols).prop_flat_map(move |(nr, nc)| {
        let (major, minor) = if L::COLUMN_MAJOR { (nc, nr) } else { (nr, nc) };
        let per = max_per_slice.min(minor);
        let slices = vec(btree_set(0..minor.max(1) as u32, 0..=per), major);
        let values = values.clone();
        slices.prop_flat_map(move |sets: Vec<BTreeSet<u32>>| {
            let nnz: usize = sets.iter().map(|s| s.len()).sum();
            let sets = if minor == 0 { vec![BTreeSet::new(); sets.len()] } else { sets };
            let nnz = if minor == 0 { 0 } else { nnz };
            vec(values.clone(), nnz).prop_map(move |vals| {
                let mut ptr = vec![0u32];
                let mut idx = Vec::with_capacity(nnz);
                for s in &sets {
                    idx.extend(s.iter().copied());
                    ptr.push(idx.len() as u32);
                }
                match SparseMat::try_new(nr, nc, ptr, idx, vals) {
                    Ok(m) => m,
                    Err(e) => unreachable!("strategy builds valid matrices: {e}"),
                }
            })
        })
    })
}

/// CSR matrices; see [`sparse`].
pub fn csr<T>(
    nrows: Range<usize>,
    ncols: Range<usize>,
    max_per_row: usize,
    values: impl Strategy<Value = T> + Clone + 'static,
) -> impl Strategy<Value = CsrMat<T>>
where
    T: Clone + std::fmt::Debug + 'static,
{
    sparse::<T, Csr>(nrows, ncols, max_per_row, values)
}

/// CSC matrices; see [`sparse`].
pub fn csc<T>(
    nrows: Range<usize>,
    ncols: Range<usize>,
    max_per_col: usize,
    values: impl Strategy<Value = T> + Clone + 'static,
) -> impl Strategy<Value = CscMat<T>>
where
    T: Clone + std::fmt::Debug + 'static,
{
    sparse::<T, Csc>(nrows, ncols, max_per_col, values)
}

/// Pairs `(A, B)` of CSR matrices with `A.ncols() == B.nrows()`.
pub fn csr_pair<T>(
    dim: Range<usize>,
    max_per_row: usize,
    values: impl Strategy<Value = T> + Clone + 'static,
) -> impl Strategy<Value = (CsrMat<T>, CsrMat<T>)>
where
    T: Clone + std::fmt::Debug + 'static,
{
    (dim.clone(), dim.clone(), dim).prop_flat_map(move |(m, k, n)| {
        (csr(m..m + 1, k..k + 1, max_per_row, values.clone()), csr(k..k + 1, n..n + 1, max_per_row, values.clone()))
    })
}

/// Pairs `(A, B)` of CSC matrices with `A.ncols() == B.nrows()`.
pub fn csc_pair<T>(
    dim: Range<usize>,
    max_per_col: usize,
    values: impl Strategy<Value = T> + Clone + 'static,
) -> impl Strategy<Value = (CscMat<T>, CscMat<T>)>
where
    T: Clone + std::fmt::Debug + 'static,
{
    (dim.clone(), dim.clone(), dim).prop_flat_map(move |(m, k, n)| {
        (csc(m..m + 1, k..k + 1, max_per_col, values.clone()), csc(k..k + 1, n..n + 1, max_per_col, values.clone()))
    })
}
