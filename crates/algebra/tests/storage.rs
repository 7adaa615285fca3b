//! Storage invariants, validation errors, layout conversion and interop.

mod common;

use proptest::prelude::*;
use subla_algebra::proptest_support::{csc, csr};
use subla_algebra::{AlgebraError, CscMat, CscPattern, CsrMat, CsrRef, Par};

#[test]
fn malformed_inputs_give_the_right_error() {
    use AlgebraError::*;
    // Wrong pointer length.
    let e = CsrMat::try_new(2, 2, vec![0, 1], vec![0], vec![1.0]).unwrap_err();
    assert!(matches!(e, PointerLength { expected: 3, found: 2, .. }), "{e}");
    // Pointer not starting at zero.
    let e = CsrMat::try_new(1, 2, vec![1, 1], vec![], Vec::<f64>::new()).unwrap_err();
    assert!(matches!(e, PointerStart { found: 1, .. }), "{e}");
    // Decreasing pointer.
    let e = CscMat::try_new(2, 2, vec![0, 2, 1], vec![0, 1], vec![1, 2]).unwrap_err();
    assert!(matches!(e, PointerDecreasing { major: 1, start: 2, end: 1, slice: "column", .. }), "{e}");
    // Pointer end != nnz.
    let e = CsrMat::try_new(1, 3, vec![0, 1], vec![0, 1], vec![1, 2]).unwrap_err();
    assert!(matches!(e, PointerEnd { last: 1, nnz: 2, .. }), "{e}");
    // Pointer beyond the indices.
    let e = CsrMat::try_new(1, 3, vec![0, 3], vec![0, 1], vec![1, 2]).unwrap_err();
    assert!(matches!(e, PointerEnd { last: 3, nnz: 2, .. }), "{e}");
    // Out-of-range index.
    let e = CscMat::try_new(2, 2, vec![0, 1, 2], vec![0, 2], vec![1, 2]).unwrap_err();
    assert!(matches!(e, IndexOutOfRange { major: 1, position: 1, index: 2, bound: 2, .. }), "{e}");
    // Unsorted indices.
    let e = CsrMat::try_new(1, 3, vec![0, 2], vec![2, 1], vec![1, 2]).unwrap_err();
    assert!(matches!(e, UnsortedIndices { major: 0, position: 1, previous: 2, index: 1, kind: "unsorted", .. }), "{e}");
    // Duplicate indices.
    let e = CsrMat::try_new(1, 3, vec![0, 2], vec![1, 1], vec![1, 2]).unwrap_err();
    assert!(matches!(e, UnsortedIndices { kind: "duplicate", .. }), "{e}");
    // Wrong number of values.
    let e = CsrMat::try_new(1, 3, vec![0, 2], vec![0, 1], vec![1]).unwrap_err();
    assert!(matches!(e, ValuesLength { indices: 2, values: 1, .. }), "{e}");
    // Sizes over u32.
    let e = CscPattern::try_new(1usize << 33, 1, vec![0, 0], vec![]).unwrap_err();
    assert!(matches!(e, TooLarge { what: "nrows", .. }), "{e}");
    // Triplet outside the matrix.
    let e = CsrMat::try_from_triplets(2, 2, &[(0, 0, 1), (2, 1, 1)]).unwrap_err();
    assert!(matches!(e, TripletOutOfRange { position: 1, row: 2, col: 1, .. }), "{e}");
    // Messages name the slice.
    let msg = CsrMat::try_new(1, 3, vec![0, 2], vec![2, 1], vec![1, 2]).unwrap_err().to_string();
    assert!(msg.contains("row 0") && msg.contains("position 1"), "{msg}");
}

#[test]
fn triplets_sum_duplicates_and_sort() {
    let a = CsrMat::try_from_triplets(2, 3, &[(1, 2, 1), (0, 1, 2), (1, 0, 3), (1, 2, 4)]).unwrap();
    assert_eq!(a.ptr(), &[0, 1, 3]);
    assert_eq!(a.indices(), &[1, 0, 2]);
    assert_eq!(a.values(), &[2, 3, 5]);
    let c = CscMat::try_from_triplets(2, 3, &[(1, 2, 1), (0, 1, 2), (1, 0, 3), (1, 2, 4)]).unwrap();
    assert_eq!(c.as_ref().to_dense(), a.as_ref().to_dense());
}

#[test]
fn transpose_view_is_free_and_correct() {
    let a = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1, 2, 3]).unwrap();
    let t = a.as_ref().transpose();
    assert_eq!(t.shape(), (3, 2));
    assert_eq!(t.to_dense(), a.as_ref().to_dense().t().to_owned());
    assert!(std::ptr::eq(t.values().as_ptr(), a.values().as_ptr()));
}

#[test]
fn relayout_of_empty_and_degenerate_matrices() {
    for (nr, nc) in [(0, 0), (0, 5), (5, 0), (3, 3)] {
        let a: CsrMat<f32> = CsrMat::zeros(nr, nc).unwrap();
        let c = a.to_csc(Par::Rayon);
        assert_eq!(c.shape(), (nr, nc));
        assert_eq!(c.nnz(), 0);
        assert_eq!(c.ptr().len(), nc + 1);
    }
}

#[test]
fn relayout_large_matrix_is_identical_for_any_thread_count() {
    // Big enough for several blocks.
    let n = 60_000usize;
    let trips: Vec<(usize, usize, u64)> =
        (0..n).flat_map(|i| (0..5).map(move |k| (i, (i * 7 + k * 13_001) % n, (i * 31 + k) as u64))).collect();
    let a = CsrMat::try_from_triplets(n, n, &trips).unwrap();
    let seq = a.to_csc(Par::Seq);
    for t in [1, 2, 3, 8] {
        let par = common::with_threads(t, || a.to_csc(Par::Rayon));
        assert_eq!(par, seq, "threads = {t}");
    }
    let back = seq.to_csr(Par::Rayon);
    assert_eq!(back, a);
}

proptest! {
    #[test]
    fn selected_major_slices_are_the_dense_rows_and_columns(
        a in csr(1..12, 0..12, 6, -100i64..100),
        b in csc(0..12, 1..12, 6, -100i64..100),
        picks in proptest::collection::vec(0usize..1000, 0..16),
    ) {
        let rows: Vec<u32> = picks.iter().map(|&p| (p % a.nrows()) as u32).collect();
        let s = a.as_ref().select_major(&rows);
        prop_assert_eq!(s.shape(), (rows.len(), a.ncols()));
        let (da, ds) = (a.as_ref().to_dense(), s.as_ref().to_dense());
        for (k, &r) in rows.iter().enumerate() {
            prop_assert_eq!(ds.row(k), da.row(r as usize));
        }
        let cols: Vec<u32> = picks.iter().map(|&p| (p % b.ncols()) as u32).collect();
        let t = b.as_ref().select_major(&cols);
        prop_assert_eq!(t.shape(), (b.nrows(), cols.len()));
        let (db, dt) = (b.as_ref().to_dense(), t.as_ref().to_dense());
        for (k, &c) in cols.iter().enumerate() {
            prop_assert_eq!(dt.column(k), db.column(c as usize));
        }
    }

    #[test]
    fn csr_csc_round_trip(a in csr(0..12, 0..12, 6, -100i64..100)) {
        let c = a.to_csc(Par::Rayon);
        prop_assert_eq!(c.as_ref().to_dense(), a.as_ref().to_dense());
        prop_assert_eq!(c.to_csr(Par::Seq), a.clone());
        // The pattern conversion agrees with the matrix conversion.
        let p = a.pattern().to_csc(Par::Rayon);
        prop_assert_eq!(p.as_ref(), c.pattern());
    }

    #[test]
    fn sprs_round_trip(a in csr(0..12, 0..12, 6, -100i64..100), b in csc(0..12, 0..12, 6, -100i64..100)) {
        let s = a.to_sprs();
        prop_assert!(s.is_csr());
        prop_assert_eq!(CsrMat::try_from_sprs(&s).unwrap(), a.clone());
        // Cross-layout conversion goes through the counting sort.
        prop_assert_eq!(CscMat::try_from_sprs(&s).unwrap(), a.to_csc(Par::Seq));
        let t = b.to_sprs();
        prop_assert!(t.is_csc());
        prop_assert_eq!(CscMat::try_from_sprs(&t).unwrap(), b.clone());
        // usize-indexed sprs matrices too.
        let wide: sprs::CsMat<i64> = sprs::CsMat::new(a.shape(), a.ptr().iter().map(|&p| p as usize).collect(), a.indices().iter().map(|&i| i as usize).collect(), a.values().to_vec());
        prop_assert_eq!(CsrMat::try_from_sprs(&wide).unwrap(), a);
    }

    #[test]
    fn nalgebra_round_trip(a in csr(0..12, 0..12, 6, -100i64..100), b in csc(0..12, 0..12, 6, -100i64..100)) {
        let n = nalgebra_sparse::CsrMatrix::from(&a);
        prop_assert_eq!(CsrMat::try_from(&n).unwrap(), a);
        let m = nalgebra_sparse::CscMatrix::from(&b);
        prop_assert_eq!(CscMat::try_from(&m).unwrap(), b);
    }

    #[test]
    fn views_validate_like_owned(a in csr(0..10, 0..10, 5, 0u8..10)) {
        let v = CsrRef::try_new(a.nrows(), a.ncols(), a.ptr(), a.indices(), a.values()).unwrap();
        prop_assert_eq!(v, a.as_ref());
        for (r, c, val) in a.as_ref().iter() {
            prop_assert_eq!(a.as_ref().get(r as usize, c as usize), Some(val));
        }
    }
}

#[test]
fn sprs_submatrix_views_are_rebased() {
    let a = CsrMat::try_from_triplets(4, 3, &[(0, 0, 1), (1, 1, 2), (2, 2, 3), (3, 0, 4)]).unwrap();
    let s = a.to_sprs();
    let mid = s.slice_outer(1..3);
    let b = CsrMat::try_from_sprs(&mid).unwrap();
    assert_eq!(b.shape(), (2, 3));
    assert_eq!(b.values(), &[2, 3]);
    assert_eq!(b.ptr(), &[0, 1, 2]);
}
