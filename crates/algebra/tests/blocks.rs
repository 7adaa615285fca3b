//! Building blocks (identity, diagonal, stacking, submatrices, permutations,
//! Kronecker product, dense copies) against sprs and nalgebra, in both
//! layouts, and their typed errors.

use nalgebra::DMatrix;
use proptest::prelude::*;
use subla_algebra::blocks::{hstack, kron, vstack};
use subla_algebra::proptest_support::{csc, csr};
use subla_algebra::{AlgebraError, CscMat, CsrMat, Layout, Par, SparseMat, SparseRef};

fn dm<L: Layout>(a: SparseRef<'_, i64, L>) -> DMatrix<i64> {
    let d = a.to_dense();
    DMatrix::from_fn(d.nrows(), d.ncols(), |i, j| d[(i, j)])
}

/// Same dense matrix, and the result passes the storage's validation.
fn same<L: Layout>(ours: &SparseMat<i64, L>, want: &DMatrix<i64>) -> Result<(), TestCaseError> {
    let checked = SparseMat::<i64, L>::try_new(
        ours.nrows(),
        ours.ncols(),
        ours.ptr().to_vec(),
        ours.indices().to_vec(),
        ours.values().to_vec(),
    );
    prop_assert!(checked.is_ok(), "invalid storage: {:?}", checked.err());
    prop_assert_eq!(&dm(ours.as_ref()), want);
    Ok(())
}

proptest! {
    #[test]
    fn vstack_and_hstack_equal_sprs(
        a in csr(0..6, 3..4, 3, -9i64..9), b in csr(0..6, 3..4, 3, -9i64..9),
        c in csr(2..3, 0..6, 3, -9i64..9), d in csr(2..3, 0..6, 3, -9i64..9),
    ) {
        let v = vstack(&[a.as_ref(), b.as_ref()]).unwrap();
        let want = sprs::vstack(&[a.to_sprs().view(), b.to_sprs().view()]);
        prop_assert_eq!(v.to_sprs().to_dense(), want.to_dense());
        let h = hstack(&[c.as_ref(), d.as_ref()]).unwrap();
        let want = sprs::hstack(&[c.to_sprs().view(), d.to_sprs().view()]);
        prop_assert_eq!(h.to_sprs().to_dense(), want.to_dense());
        // CSC: the same matrices.
        let (ac, bc) = (a.to_csc(Par::Seq), b.to_csc(Par::Seq));
        same(&vstack(&[ac.as_ref(), bc.as_ref()]).unwrap(), &dm(v.as_ref()))?;
        let (cc, dc) = (c.to_csc(Par::Seq), d.to_csc(Par::Seq));
        same(&hstack(&[cc.as_ref(), dc.as_ref()]).unwrap(), &dm(h.as_ref()))?;
    }

    #[test]
    fn kron_equals_nalgebra(a in csr(0..5, 0..5, 3, -9i64..9), b in csr(0..5, 0..5, 3, -9i64..9)) {
        let want = dm(a.as_ref()).kronecker(&dm(b.as_ref()));
        let k = kron(a.as_ref(), b.as_ref()).unwrap();
        same(&k, &want)?;
        prop_assert_eq!(k.nnz(), a.nnz() * b.nnz());
        let (ac, bc) = (a.to_csc(Par::Seq), b.to_csc(Par::Seq));
        same(&kron(ac.as_ref(), bc.as_ref()).unwrap(), &want)?;
    }

    #[test]
    fn submatrix_equals_nalgebra_selection(
        a in csc(1..8, 1..8, 4, -9i64..9),
        rows in proptest::collection::vec(0u32..64, 0..10),
        cols in proptest::collection::vec(0u32..64, 0..10),
    ) {
        // Any indices in range, repeats and any order included.
        let rows: Vec<u32> = rows.iter().map(|&r| r % a.nrows() as u32).collect();
        let cols: Vec<u32> = cols.iter().map(|&c| c % a.ncols() as u32).collect();
        let want = dm(a.as_ref())
            .select_rows(rows.iter().map(|&r| r as usize).collect::<Vec<_>>().iter())
            .select_columns(cols.iter().map(|&c| c as usize).collect::<Vec<_>>().iter());
        same(&a.submatrix(&rows, &cols).unwrap(), &want)?;
        same(&a.to_csr(Par::Seq).submatrix(&rows, &cols).unwrap(), &want)?;
    }

    #[test]
    fn permute_reorders_and_round_trips(a in csr(1..8, 1..8, 4, -9i64..9), seed in 0u64..1000) {
        let perm = |n: usize, s: u64| {
            let mut p: Vec<u32> = (0..n as u32).collect();
            let mut x = s;
            for i in (1..n).rev() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                p.swap(i, (x >> 33) as usize % (i + 1));
            }
            p
        };
        let (r, c) = (perm(a.nrows(), seed), perm(a.ncols(), seed + 1));
        let p = a.permute(&r, &c).unwrap();
        let d = dm(a.as_ref());
        for i in 0..a.nrows() {
            for j in 0..a.ncols() {
                prop_assert_eq!(dm(p.as_ref())[(i, j)], d[(r[i] as usize, c[j] as usize)]);
            }
        }
        // The inverse permutations give the matrix back, bit for bit.
        let inverse = |p: &[u32]| {
            let mut q = vec![0u32; p.len()];
            for (i, &x) in p.iter().enumerate() {
                q[x as usize] = i as u32;
            }
            q
        };
        prop_assert_eq!(p.permute(&inverse(&r), &inverse(&c)).unwrap(), a);
    }
}

#[test]
fn identity_and_diagonal_equal_nalgebra() {
    for n in [0usize, 1, 5] {
        let i = CsrMat::<i64>::identity(n).unwrap();
        assert_eq!(dm(i.as_ref()), DMatrix::<i64>::identity(n, n));
        let c = CscMat::<i64>::identity(n).unwrap();
        assert_eq!(dm(c.as_ref()), DMatrix::<i64>::identity(n, n));
        let v: Vec<i64> = (0..n as i64).map(|k| k - 1).collect();
        let d = CsrMat::diagonal(v.clone()).unwrap();
        assert_eq!(dm(d.as_ref()), DMatrix::from_diagonal(&nalgebra::DVector::from_vec(v.clone())));
        // Zeros on the diagonal stay stored: the identity's pattern.
        assert_eq!(d.nnz(), n);
        assert_eq!(d.pattern(), i.pattern());
    }
}

#[test]
fn shapes_that_do_not_fit_are_typed_errors() {
    let a = CsrMat::<f64>::identity(2).unwrap();
    let b = CsrMat::<f64>::identity(3).unwrap();
    assert!(matches!(
        vstack(&[a.as_ref(), a.as_ref(), b.as_ref()]),
        Err(AlgebraError::BlockShape { what: "vstack", block: 2, dimension: "column", expected: 2, found: 3 })
    ));
    assert!(matches!(
        hstack(&[a.as_ref(), b.as_ref()]),
        Err(AlgebraError::BlockShape { what: "hstack", block: 1, dimension: "row", expected: 2, found: 3 })
    ));
    let ac = CscMat::<f64>::identity(2).unwrap();
    let bc = CscMat::<f64>::identity(3).unwrap();
    assert!(matches!(
        vstack(&[ac.as_ref(), bc.as_ref()]),
        Err(AlgebraError::BlockShape { what: "vstack", block: 1, dimension: "column", .. })
    ));
    assert!(matches!(
        a.submatrix(&[0, 2], &[0]),
        Err(AlgebraError::SelectionOutOfRange { what: "row", position: 1, index: 2, bound: 2 })
    ));
    assert!(matches!(
        a.submatrix(&[0], &[5]),
        Err(AlgebraError::SelectionOutOfRange { what: "column", position: 0, index: 5, bound: 2 })
    ));
    assert!(matches!(
        a.permute(&[0], &[0, 1]),
        Err(AlgebraError::PermutationLength { what: "row", expected: 2, found: 1 })
    ));
    assert!(matches!(
        a.permute(&[0, 1], &[1, 1]),
        Err(AlgebraError::NotAPermutation { what: "column", position: 1, index: 1 })
    ));
    assert!(matches!(b.to_dense_within(8), Err(AlgebraError::OverBudget { what: "dense copy", nnz: 9, budget: 8 })));
    assert_eq!(b.to_dense_within(9).unwrap(), ndarray::Array2::eye(3));
    // No block: the empty matrix.
    assert_eq!(vstack::<f64, subla_algebra::Csr>(&[]).unwrap().shape(), (0, 0));
}
