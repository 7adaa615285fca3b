//! Padded CSR evaluation against a plain sequential CSR loop, bit for bit,
//! for every channel count, both precisions, every pool size and any memory
//! layout of the vertex data.

mod common;

use ndarray::{Array2, ShapeBuilder, s};
use num_traits::Float;
use proptest::prelude::*;
use subla_algebra::proptest_support::csr;
use subla_algebra::spmv::spmv_csr;
use subla_algebra::{CsrMat, PaddedCsr, Par};

/// The plain sequential CSR SpMV the padded kernel must reproduce: each
/// output summed from `+0` over the row's entries in stored order.
fn reference<T: Float>(a: &CsrMat<f64>, x: &Array2<T>) -> Array2<T> {
    let mut y = Array2::from_elem((a.nrows(), x.ncols()), T::nan());
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for c in 0..x.ncols() {
            let mut acc = T::zero();
            for (&j, &v) in cols.iter().zip(vals) {
                let w = T::from(v).unwrap();
                acc = acc + w * x[(j as usize, c)];
            }
            y[(i, c)] = acc;
        }
    }
    y
}

/// Deterministic vertex data with some `+0`, `-0` and negative values.
fn data<T: Float>(n: usize, d: usize, seed: usize) -> Array2<T> {
    Array2::from_shape_fn((n, d), |(j, c)| {
        let k = j * 131 + c * 17 + seed;
        match k % 11 {
            0 => T::zero(),
            1 => -T::zero(),
            _ => T::from(((k as f64) * 0.618_033_988_7).sin() * 1e3).unwrap(),
        }
    })
}

fn bits<T: Float>(y: &Array2<T>) -> Vec<(u64, i16, i8)> {
    y.iter().map(|v| v.integer_decode()).collect()
}

/// `apply` into a NaN-filled output, so every element must be written.
fn apply<T: Float + Send + Sync>(r: &PaddedCsr<T>, x: &Array2<T>, par: Par) -> Array2<T> {
    let mut y = Array2::from_elem((r.nrows(), x.ncols()), T::nan());
    r.apply(x.view(), y.view_mut(), par);
    y
}

fn weights() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![4 => -2.0..2.0f64, 1 => Just(0.0), 1 => Just(-0.0), 1 => Just(1.0 / 3.0), 1 => Just(0.1)]
}

/// A random matrix big enough to be cut into many blocks.
fn big_matrix(nrows: usize, ncols: usize, max_per_row: u64, seed: u64) -> CsrMat<f64> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut t = Vec::new();
    for i in 0..nrows {
        for _ in 0..next() % (max_per_row + 1) {
            let j = next() as usize % ncols;
            let v = (next() % 2001) as f64 / 1000.0 - 1.0;
            t.push((i, j, v));
        }
    }
    CsrMat::try_from_triplets(nrows, ncols, &t).unwrap()
}

proptest! {
    #[test]
    fn f64_equals_the_reference_loop_bitwise(a in csr(0..40, 0..40, 11, weights()), d in 1usize..=9, seed in 0usize..100) {
        let r = PaddedCsr::<f64>::from_csr(a.as_ref()).unwrap();
        let x = data::<f64>(a.ncols(), d, seed);
        let expected = reference(&a, &x);
        prop_assert_eq!(bits(&apply(&r, &x, Par::Seq)), bits(&expected));
        prop_assert_eq!(bits(&apply(&r, &x, Par::Rayon)), bits(&expected));
        // The crate's own SpMV with the identity map sums in the same order.
        prop_assert_eq!(bits(&spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq)), bits(&expected));
    }

    #[test]
    fn f32_equals_the_reference_loop_bitwise(a in csr(0..40, 0..40, 11, weights()), d in 1usize..=9, seed in 0usize..100) {
        let r = PaddedCsr::<f32>::from_csr(a.as_ref()).unwrap();
        let x = data::<f32>(a.ncols(), d, seed);
        let expected = reference(&a, &x);
        prop_assert_eq!(bits(&apply(&r, &x, Par::Seq)), bits(&expected));
        prop_assert_eq!(bits(&apply(&r, &x, Par::Rayon)), bits(&expected));
        prop_assert_eq!(bits(&spmv_csr(a.as_ref(), x.view(), |&v, _, _| v as f32, Par::Seq)), bits(&expected));
    }

    #[test]
    fn padding_layout_and_sizes(a in csr(0..30, 0..30, 11, weights())) {
        let r = PaddedCsr::<f32>::from_csr(a.as_ref()).unwrap();
        prop_assert_eq!((r.nrows(), r.ncols(), r.nnz()), (a.nrows(), a.ncols(), a.nnz()));
        prop_assert_eq!(r.ptr().len(), a.nrows() + 1);
        prop_assert_eq!(r.stored(), *r.ptr().last().unwrap() as usize);
        prop_assert_eq!(r.bytes(), (r.ptr().len() + r.stored()) * 4 + r.stored() * 4);
        for i in 0..a.nrows() {
            let (cols, vals) = a.row(i);
            let range = r.ptr()[i] as usize..r.ptr()[i + 1] as usize;
            prop_assert_eq!(range.len(), cols.len().next_multiple_of(4));
            let (pc, pv) = (&r.indices()[range.clone()], &r.values()[range]);
            prop_assert_eq!(&pc[..cols.len()], cols);
            for (k, &v) in vals.iter().enumerate() {
                prop_assert_eq!(pv[k].to_bits(), (v as f32).to_bits());
            }
            for k in cols.len()..pc.len() {
                prop_assert_eq!(pc[k], *cols.last().unwrap());
                prop_assert_eq!(pv[k].to_bits(), 0.0f32.to_bits());
            }
        }
    }
}

#[test]
fn every_pool_size_gives_the_same_bits() {
    let a = big_matrix(30_000, 20_000, 12, 7);
    let r64 = PaddedCsr::<f64>::from_csr(a.as_ref()).unwrap();
    let r32 = PaddedCsr::<f32>::from_csr(a.as_ref()).unwrap();
    for d in [1, 2, 3, 4, 5, 7, 9] {
        let x64 = data::<f64>(a.ncols(), d, d);
        let x32 = data::<f32>(a.ncols(), d, d);
        let seq64 = apply(&r64, &x64, Par::Seq);
        let seq32 = apply(&r32, &x32, Par::Seq);
        assert_eq!(bits(&seq64), bits(&reference(&a, &x64)), "d = {d}");
        assert_eq!(bits(&seq32), bits(&reference(&a, &x32)), "d = {d}");
        for t in [1, 2, 3] {
            let p64 = common::with_threads(t, || apply(&r64, &x64, Par::Rayon));
            let p32 = common::with_threads(t, || apply(&r32, &x32, Par::Rayon));
            assert_eq!(bits(&p64), bits(&seq64), "f64, d = {d}, threads = {t}");
            assert_eq!(bits(&p32), bits(&seq32), "f32, d = {d}, threads = {t}");
        }
    }
}

#[test]
fn any_memory_layout_gives_the_same_result() {
    let a = big_matrix(500, 300, 9, 3);
    let r = PaddedCsr::<f64>::from_csr(a.as_ref()).unwrap();
    for d in [1, 3, 6] {
        let x = data::<f64>(a.ncols(), d, 5);
        let expected = bits(&apply(&r, &x, Par::Seq));
        // Transposed view of a d x n array (column-major x).
        let xt = x.t().to_owned();
        let mut y = Array2::from_elem((a.nrows(), d), f64::NAN);
        r.apply(xt.t(), y.view_mut(), Par::Rayon);
        assert_eq!(bits(&y), expected, "transposed x, d = {d}");
        // Strided view: every other column of a wider array.
        let mut wide = Array2::from_elem((a.ncols(), 2 * d), f64::NAN);
        wide.slice_mut(s![.., ..;2]).assign(&x);
        let mut y = Array2::from_elem((a.nrows(), d), f64::NAN);
        r.apply(wide.slice(s![.., ..;2]), y.view_mut(), Par::Rayon);
        assert_eq!(bits(&y), expected, "strided x, d = {d}");
        // Column-major y, and a strided y.
        let mut yf = Array2::from_elem((a.nrows(), d).f(), f64::NAN);
        r.apply(x.view(), yf.view_mut(), Par::Rayon);
        assert_eq!(bits(&yf.as_standard_layout().to_owned()), expected, "column-major y, d = {d}");
        let mut ywide = Array2::from_elem((a.nrows(), 2 * d), f64::NAN);
        r.apply(x.view(), ywide.slice_mut(s![.., 1..;2]), Par::Seq);
        assert_eq!(bits(&ywide.slice(s![.., 1..;2]).to_owned()), expected, "strided y, d = {d}");
        assert!(ywide.slice(s![.., ..;2]).iter().all(|v| v.is_nan()), "untouched columns stay");
    }
}

#[test]
fn apply_slices_matches_apply() {
    let a = big_matrix(200, 150, 8, 11);
    let r = PaddedCsr::<f32>::from_csr(a.as_ref()).unwrap();
    for d in 1..=9 {
        let x = data::<f32>(a.ncols(), d, 1);
        let mut y = vec![f32::NAN; a.nrows() * d];
        r.apply_slices(x.as_slice().unwrap(), &mut y, d, Par::Rayon);
        let expected = apply(&r, &x, Par::Seq);
        assert_eq!(
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn empty_matrices_and_zero_channels() {
    for (nr, nc) in [(0, 0), (0, 5), (5, 0), (4, 4)] {
        let a = CsrMat::<f64>::zeros(nr, nc).unwrap();
        let r = PaddedCsr::<f64>::from_csr(a.as_ref()).unwrap();
        assert_eq!((r.stored(), r.nnz(), r.bytes()), (0, 0, (nr + 1) * 4));
        for d in [0, 1, 3, 5] {
            let x = data::<f64>(nc, d, 0);
            let y = apply(&r, &x, Par::Rayon);
            assert_eq!(y.dim(), (nr, d));
            assert!(y.iter().all(|&v| v.to_bits() == 0), "empty rows give +0");
        }
    }
}

#[test]
fn doc_example_matrix_is_padded_as_drawn() {
    let a =
        CsrMat::try_new(4, 3, vec![0, 2, 3, 5, 6], vec![0, 2, 1, 0, 2, 2], vec![1.0, 4.0, 3.0, 2.0, 5.0, 6.0]).unwrap();
    let r = PaddedCsr::<f64>::from_csr(a.as_ref()).unwrap();
    assert_eq!(r.ptr(), &[0, 4, 8, 12, 16]);
    assert_eq!(r.indices(), &[0, 2, 2, 2, 1, 1, 1, 1, 0, 2, 2, 2, 2, 2, 2, 2]);
    assert_eq!(r.values(), &[1.0, 4.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 2.0, 5.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0]);
    assert_eq!(r.bytes(), 5 * 4 + 16 * 4 + 16 * 8);
}

#[test]
#[should_panic(expected = "x must have A.ncols() rows")]
fn x_with_the_wrong_number_of_rows_panics() {
    let r = PaddedCsr::<f64>::from_csr(CsrMat::zeros(3, 4).unwrap().as_ref()).unwrap();
    let x = Array2::<f64>::zeros((3, 2));
    let mut y = Array2::<f64>::zeros((3, 2));
    r.apply(x.view(), y.view_mut(), Par::Seq);
}

#[test]
#[should_panic(expected = "y must be A.nrows() x x.ncols()")]
fn y_with_the_wrong_shape_panics() {
    let r = PaddedCsr::<f64>::from_csr(CsrMat::zeros(3, 4).unwrap().as_ref()).unwrap();
    let x = Array2::<f64>::zeros((4, 2));
    let mut y = Array2::<f64>::zeros((3, 3));
    r.apply(x.view(), y.view_mut(), Par::Seq);
}

#[test]
#[should_panic(expected = "y must hold A.nrows() * d")]
fn short_output_slice_panics() {
    let r = PaddedCsr::<f32>::from_csr(CsrMat::zeros(3, 4).unwrap().as_ref()).unwrap();
    r.apply_slices(&[0.0; 8], &mut [0.0; 5], 2, Par::Seq);
}
