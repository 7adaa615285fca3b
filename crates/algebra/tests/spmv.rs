//! Mapped SpMV (Eq. 1) against sprs, nalgebra-sparse and dense references.

mod common;

use ndarray::{Array2, ShapeBuilder};
use proptest::prelude::*;
use subla_algebra::proptest_support::{csc, csr};
use subla_algebra::spmv::{Update, spmv, spmv_csc, spmv_csc_into, spmv_csr, spmv_csr_into};
use subla_algebra::{CscMat, CsrMat, Par};

fn dense_x(n: usize, d: usize, seed: i64) -> Array2<i64> {
    Array2::from_shape_fn((n, d), |(i, c)| ((i as i64 * 7 + c as i64 * 3 + seed) % 11) - 5)
}

fn float_x(n: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |(i, c)| ((i * 131 + c * 17) as f64 * 0.618_033_988_7).sin() * 1e3)
}

proptest! {
    #[test]
    fn identity_map_equals_sprs_and_nalgebra_exactly(a in csr(0..20, 0..20, 8, -9i64..9), d in 1usize..6) {
        let x = dense_x(a.ncols(), d, 1);
        let y = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Rayon);
        let s = &a.to_sprs() * &x;
        prop_assert_eq!(&y, &s);
        let n = nalgebra_sparse::CsrMatrix::from(&a);
        let xd = nalgebra::DMatrix::from_fn(x.nrows(), d, |i, c| x[(i, c)]);
        let yn = &n * &xd;
        for i in 0..a.nrows() {
            for c in 0..d {
                prop_assert_eq!(y[(i, c)], yn[(i, c)]);
            }
        }
        // The CSC form of the same matrix agrees with sprs too.
        let c = a.to_csc(Par::Seq);
        prop_assert_eq!(spmv_csc(c.as_ref(), x.view(), |&v, _, _| v, Par::Rayon), s);
    }

    #[test]
    fn mapped_product_equals_product_of_materialized_map(a in csc(0..16, 0..16, 6, 1i64..9), d in 1usize..5) {
        let map = |&v: &i64, i: u32, j: u32| v * (i as i64 + 1) - j as i64;
        let materialized = {
            let (nr, nc, ptr, idx, vals) = a.clone().into_parts();
            let m: Vec<i64> = a.as_ref().iter().map(|(i, j, v)| map(v, i, j)).collect();
            let _ = vals;
            CscMat::try_new(nr as usize, nc as usize, ptr, idx, m).unwrap()
        };
        let x = dense_x(a.ncols(), d, 3);
        let y = spmv_csc(a.as_ref(), x.view(), map, Par::Rayon);
        let z = spmv_csc(materialized.as_ref(), x.view(), |&v, _, _| v, Par::Rayon);
        prop_assert_eq!(&y, &z);
        prop_assert_eq!(y, materialized.as_ref().to_dense().dot(&x));
    }

    #[test]
    fn csc_scatter_is_bitwise_equal_to_csr_gather(a in csr(0..40, 0..40, 10, -1.0f64..1.0), d in 1usize..7) {
        let x = float_x(a.ncols(), d);
        let map = |&v: &f64, i: u32, j: u32| v * (1.0 + f64::from(i)) / (1.0 + f64::from(j));
        let g = spmv_csr(a.as_ref(), x.view(), map, Par::Rayon);
        let c = a.to_csc(Par::Rayon);
        let s = spmv_csc(c.as_ref(), x.view(), map, Par::Rayon);
        prop_assert_eq!(common::bits(g.as_slice().unwrap()), common::bits(s.as_slice().unwrap()));
    }
}

fn mesh_like(n: usize) -> CsrMat<f64> {
    // 3x3 stencil on a sqrt(n) x sqrt(n) grid: rows of 4 to 9 entries.
    let side = (n as f64).sqrt() as usize;
    let mut t = Vec::new();
    for r in 0..side {
        for c in 0..side {
            let i = r * side + c;
            for dr in -1i64..=1 {
                for dc in -1i64..=1 {
                    let (rr, cc) = (r as i64 + dr, c as i64 + dc);
                    if rr >= 0 && cc >= 0 && (rr as usize) < side && (cc as usize) < side {
                        let j = rr as usize * side + cc as usize;
                        t.push((i, j, 1.0 / (1.0 + (i * 3 + j) as f64 % 7.0)));
                    }
                }
            }
        }
    }
    CsrMat::try_from_triplets(side * side, side * side, &t).unwrap()
}

#[test]
fn parallel_is_bitwise_equal_to_sequential_for_any_thread_count() {
    let a = mesh_like(90_000);
    let c = a.to_csc(Par::Seq);
    for d in [1, 3, 4, 5] {
        let x = float_x(a.ncols(), d);
        let map = |&v: &f64, i: u32, _j: u32| v * (1.0 + f64::from(i % 5));
        let seq = spmv_csr(a.as_ref(), x.view(), map, Par::Seq);
        let seq_c = spmv_csc(c.as_ref(), x.view(), map, Par::Seq);
        assert_eq!(common::bits(seq.as_slice().unwrap()), common::bits(seq_c.as_slice().unwrap()));
        for t in [1, 2, 3, 4] {
            let (g, s) = common::with_threads(t, || {
                (spmv_csr(a.as_ref(), x.view(), map, Par::Rayon), spmv_csc(c.as_ref(), x.view(), map, Par::Rayon))
            });
            assert_eq!(
                common::bits(g.as_slice().unwrap()),
                common::bits(seq.as_slice().unwrap()),
                "gather, d={d}, threads={t}"
            );
            assert_eq!(
                common::bits(s.as_slice().unwrap()),
                common::bits(seq.as_slice().unwrap()),
                "scatter, d={d}, threads={t}"
            );
        }
    }
}

#[test]
fn update_add_and_non_contiguous_views() {
    let a =
        CsrMat::try_from_triplets(3, 4, &[(0, 0, 1.0), (0, 3, 2.0), (1, 1, 3.0), (2, 2, 4.0), (2, 0, 0.5)]).unwrap();
    // Column-major x (not standard layout).
    let mut x = Array2::<f64>::zeros((4, 2).f());
    for i in 0..4 {
        x[(i, 0)] = i as f64 + 1.0;
        x[(i, 1)] = -(i as f64);
    }
    let expect = a.as_ref().to_dense().dot(&x);
    let y = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Rayon);
    assert_eq!(y, expect);
    // y += A x into a column-major, then a strided, destination.
    let mut yf = Array2::<f64>::ones((3, 2).f());
    spmv_csr_into(a.as_ref(), x.view(), yf.view_mut(), Update::Add, |&v, _, _| v, Par::Rayon);
    assert_eq!(yf, &expect + 1.0);
    let mut big = Array2::<f64>::from_elem((3, 4), 7.0);
    spmv_csc_into(
        a.to_csc(Par::Seq).as_ref(),
        x.view(),
        big.slice_mut(ndarray::s![.., ..;2]),
        Update::Set,
        |&v, _, _| v,
        Par::Rayon,
    );
    assert_eq!(big.slice(ndarray::s![.., ..;2]), expect);
    assert!(big.slice(ndarray::s![.., 1..;2]).iter().all(|&v| v == 7.0));
    // Generic entry point dispatches by layout.
    assert_eq!(spmv(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq), expect);
    // Zero channels.
    let x0 = Array2::<f64>::zeros((4, 0));
    assert_eq!(spmv_csr(a.as_ref(), x0.view(), |&v, _, _| v, Par::Rayon).dim(), (3, 0));
}

#[test]
#[should_panic(expected = "x has 3 rows but A is 3 x 4")]
fn shape_mismatch_panics_naming_operands() {
    let a = CsrMat::<f64>::zeros(3, 4).unwrap();
    let x = Array2::<f64>::zeros((3, 1));
    let _ = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq);
}

#[test]
fn integer_and_f32_scalars() {
    let a = CsrMat::try_from_triplets(2, 2, &[(0, 0, 2u32), (0, 1, 3), (1, 1, 4)]).unwrap();
    let x = ndarray::array![[1u32], [2]];
    assert_eq!(spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq), ndarray::array![[8], [8]]);
    let xf = ndarray::array![[1.5f32, 2.0], [0.5, 1.0]];
    let y = spmv_csr(a.as_ref(), xf.view(), |&v, _, _| v as f32, Par::Rayon);
    assert_eq!(y, ndarray::array![[4.5f32, 7.0], [2.0, 4.0]]);
}
