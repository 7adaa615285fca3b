//! Mapped SpGEMM against sprs, nalgebra-sparse and a naive reference that
//! follows the documented collision order.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use subla_algebra::proptest_support::{csc_pair, csr_pair};
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::{CscMat, CsrMat, Par};

/// Naive CSR reference: rows in order, collisions in increasing k then j,
/// per-row state, contributions folded in visiting order.
fn naive<V: Copy, S>(
    a: &CsrMat<i64>,
    b: &CsrMat<i64>,
    init: impl Fn(u32) -> S,
    lambda: impl Fn(&mut S, i64, u32, u32, u32, i64, i64) -> Option<V>,
    reduce: impl Fn(V, V) -> V,
) -> BTreeMap<(u32, u32), V> {
    let mut out = BTreeMap::new();
    for i in 0..a.nrows() {
        let mut st = init(i as u32);
        let (ks, avs) = a.row(i);
        for (&k, &av) in ks.iter().zip(avs) {
            let (js, bvs) = b.row(k as usize);
            for (&j, &bv) in js.iter().zip(bvs) {
                if let Some(v) = lambda(&mut st, av * bv, i as u32, j, k, av, bv) {
                    out.entry((i as u32, j)).and_modify(|acc| *acc = reduce(*acc, v)).or_insert(v);
                }
            }
        }
    }
    out
}

fn entries<V: Copy>(c: &CsrMat<V>) -> BTreeMap<(u32, u32), V> {
    c.as_ref().iter().map(|(i, j, &v)| ((i, j), v)).collect()
}

proptest! {
    #[test]
    fn plain_product_equals_sprs_and_nalgebra_exactly((a, b) in csr_pair(0..16, 6, -9i64..9)) {
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        let s = &a.to_sprs() * &b.to_sprs();
        // sprs keeps explicit zeros that arise from cancellation; so do we.
        prop_assert_eq!(&CsrMat::try_from_sprs(&s).unwrap(), &c);
        let n = nalgebra_sparse::CsrMatrix::from(&a) * nalgebra_sparse::CsrMatrix::from(&b);
        prop_assert_eq!(&CsrMat::try_from(&n).unwrap(), &c);
    }

    #[test]
    fn two_pass_product_equals_multiply((a, b) in csr_pair(0..16, 6, -9i64..9)) {
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        prop_assert_eq!(&spgemm::product(a.as_ref(), b.as_ref(), Par::Rayon).unwrap(), &c);
        prop_assert_eq!(&spgemm::product(a.as_ref(), b.as_ref(), Par::Seq).unwrap(), &c);
        let (ac, bc) = (a.to_csc(Par::Seq), b.to_csc(Par::Seq));
        prop_assert_eq!(spgemm::product(ac.as_ref(), bc.as_ref(), Par::Rayon).unwrap().to_csr(Par::Seq), c.clone());
        // The same rows, left in blocks.
        for par in [Par::Seq, Par::Rayon] {
            let rows = spgemm::product_rows(a.as_ref(), b.as_ref(), par).unwrap();
            prop_assert_eq!((rows.nrows(), rows.ncols(), rows.nnz()), (c.nrows(), c.ncols(), c.nnz() as u64));
            for i in 0..c.nrows() {
                prop_assert_eq!(rows.row(i), c.row(i), "row {}", i);
            }
            prop_assert_eq!(&rows.into_matrix().unwrap(), &c);
        }
    }

    #[test]
    fn csc_product_equals_csr_product((a, b) in csc_pair(0..14, 6, -9i64..9)) {
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        let ar = a.to_csr(Par::Seq);
        let br = b.to_csr(Par::Seq);
        let r = spgemm::multiply(ar.as_ref(), br.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        prop_assert_eq!(c.to_csr(Par::Seq), r);
        let s = &a.to_sprs() * &b.to_sprs();
        prop_assert_eq!(CscMat::try_from_sprs(&s).unwrap(), c);
    }

    #[test]
    fn separable_map_equals_product_of_materialized_maps((a, b) in csr_pair(0..14, 6, -9i64..9)) {
        // mu(a, b) = (2a + 1)(b - 3) is the plain product of two mapped matrices.
        let ops = Ops::mapped(|x: &i64, y: &i64| (2 * x + 1) * (y - 3));
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &ops, Par::Rayon).unwrap();
        let am = a.clone().map_values(|x| 2 * x + 1);
        let bm = b.clone().map_values(|y| y - 3);
        let d = spgemm::multiply(am.as_ref(), bm.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        prop_assert_eq!(c, d);
    }

    #[test]
    fn counting_lambda_gives_structural_counts((a, b) in csr_pair(0..14, 6, -9i64..9)) {
        let counts = spgemm::multiply(a.as_ref(), b.as_ref(), &Ops::new(|_: &i64, _: &i64| (), |(), _| Some(1u32)), Par::Rayon).unwrap();
        let ones_a = a.clone().map_values(|_| 1u32);
        let ones_b = b.clone().map_values(|_| 1u32);
        let structural = spgemm::multiply(ones_a.as_ref(), ones_b.as_ref(), &Ops::product(), Par::Rayon).unwrap();
        prop_assert_eq!(&counts, &structural);
        let pattern = spgemm::structure(a.pattern(), b.pattern(), Par::Rayon).unwrap();
        prop_assert_eq!(pattern.as_ref(), counts.pattern());
    }

    #[test]
    fn filtering_lambda_shapes_the_pattern((a, b) in csr_pair(0..14, 6, -9i64..9)) {
        // Keep collisions with an even inner index or a positive product;
        // combine with max: the pattern depends on the lambda.
        let ops = Ops::new(|x: &i64, y: &i64| x * y, |m, c: &Collision<'_, i64, i64>| (c.k % 2 == 0 || m > 0).then_some(m + i64::from(c.i) - i64::from(c.j)))
            .reduce(|p: i64, q: i64| p.max(q));
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &ops, Par::Rayon).unwrap();
        let r = naive(&a, &b, |_| (), |_, m, i, j, k, _, _| (k % 2 == 0 || m > 0).then_some(m + i64::from(i) - i64::from(j)), |p, q| p.max(q));
        prop_assert_eq!(entries(&c), r);
        // Symbolic + numeric equals one-shot.
        let pat = spgemm::symbolic(a.as_ref(), b.as_ref(), &ops, Par::Rayon).unwrap();
        let mut vals = vec![0i64; pat.as_ref().nnz()];
        spgemm::numeric(a.as_ref(), b.as_ref(), &ops, pat.as_ref().with_values_mut(&mut vals), Par::Rayon);
        prop_assert_eq!(pat.with_values(vals), c);
    }

    #[test]
    fn stateful_lambda_follows_the_documented_order((a, b) in csr_pair(0..14, 6, -9i64..9)) {
        // Each contribution is its rank among the row's collisions times the
        // product; every third collision of a row is dropped.
        let ops = Ops::mapped(|x: &i64, y: &i64| x * y).stateful(
            |i| i64::from(i) * 1000,
            |n: &mut i64, m, _c: &Collision<'_, i64, i64>| {
                *n += 1;
                (*n % 3 != 0).then_some(*n * m)
            },
        );
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &ops, Par::Rayon).unwrap();
        let r = naive(&a, &b, |i| i64::from(i) * 1000, |n, m, _, _, _, _, _| {
            *n += 1;
            (*n % 3 != 0).then_some(*n * m)
        }, |p, q| p + q);
        prop_assert_eq!(entries(&c), r);
        let pat = spgemm::symbolic(a.as_ref(), b.as_ref(), &ops, Par::Seq).unwrap();
        let mut vals = vec![0i64; pat.as_ref().nnz()];
        spgemm::numeric(a.as_ref(), b.as_ref(), &ops, pat.as_ref().with_values_mut(&mut vals), Par::Seq);
        prop_assert_eq!(pat.with_values(vals), c);
    }

    #[test]
    fn csc_collisions_report_original_indices((a, b) in csc_pair(0..12, 5, 1i64..9)) {
        // The lambda sees (i, j, k, a, b) of A B, not of the transposed run.
        let ops = Ops::new(|x: &i64, y: &i64| (*x, *y), |(x, y), c: &Collision<'_, i64, i64>| {
            assert_eq!(*c.a, x);
            assert_eq!(*c.b, y);
            Some(i64::from(c.i) * 10_000 + i64::from(c.j) * 100 + i64::from(c.k))
        }).reduce(|p: i64, q: i64| p.max(q));
        let c = spgemm::multiply(a.as_ref(), b.as_ref(), &ops, Par::Rayon).unwrap();
        let ar = a.to_csr(Par::Seq);
        let br = b.to_csr(Par::Seq);
        let r = naive(&ar, &br, |_| (), |_, _, i, j, k, _, _| Some(i64::from(i) * 10_000 + i64::from(j) * 100 + i64::from(k)), |p, q| p.max(q));
        prop_assert_eq!(entries(&c.to_csr(Par::Seq)), r);
    }
}

fn grid_mesh_matrix(side: usize) -> CscMat<u32> {
    // Quad grid, side x side faces, M is |v| x |f| with corner positions.
    let vside = side + 1;
    let mut t = Vec::new();
    for r in 0..side {
        for c in 0..side {
            let f = r * side + c;
            let v = [r * vside + c, r * vside + c + 1, (r + 1) * vside + c + 1, (r + 1) * vside + c];
            for (k, &vi) in v.iter().enumerate() {
                t.push((vi, f, k as u32 + 1));
            }
        }
    }
    CscMat::try_from_triplets(vside * vside, side * side, &t).unwrap()
}

#[test]
fn parallel_is_bitwise_equal_to_sequential_for_floats() {
    let m = grid_mesh_matrix(150).map_values(|v| 1.0 / f64::from(v) + 0.1);
    let mt = m.to_csr(Par::Seq).into_transpose();
    let ops = Ops::mapped(|a: &f64, b: &f64| a * b + 1e-3).reduce(|p: f64, q: f64| p * 0.5 + q);
    let seq = spgemm::multiply(m.as_ref(), mt.as_ref(), &ops, Par::Seq).unwrap();
    for t in [1, 2, 3, 4] {
        let par = common::with_threads(t, || spgemm::multiply(m.as_ref(), mt.as_ref(), &ops, Par::Rayon).unwrap());
        assert_eq!(par.pattern(), seq.pattern());
        assert_eq!(common::bits(par.values()), common::bits(seq.values()), "threads = {t}");
        let pat = common::with_threads(t, || spgemm::symbolic(m.as_ref(), mt.as_ref(), &ops, Par::Rayon).unwrap());
        assert_eq!(pat.as_ref(), seq.pattern());
    }
    // The two-pass plain product: the same bits as `multiply`, any pool.
    let plain = spgemm::multiply(m.as_ref(), mt.as_ref(), &Ops::product(), Par::Seq).unwrap();
    for t in [1, 2, 3, 4] {
        let p = common::with_threads(t, || spgemm::product(m.as_ref(), mt.as_ref(), Par::Rayon).unwrap());
        assert_eq!(p.pattern(), plain.pattern());
        assert_eq!(common::bits(p.values()), common::bits(plain.values()), "threads = {t}");
    }
    // Rows left in per-task blocks (several blocks here): the same bits as
    // the product, any pool.
    let (mr, mtr) = (m.to_csr(Par::Seq), mt.to_csr(Par::Seq));
    let plain = spgemm::product(mr.as_ref(), mtr.as_ref(), Par::Seq).unwrap();
    for t in [1, 2, 3, 4] {
        let rows = common::with_threads(t, || spgemm::product_rows(mr.as_ref(), mtr.as_ref(), Par::Rayon).unwrap());
        for i in 0..plain.nrows() {
            let ((ri, rv), (pi, pv)) = (rows.row(i), plain.row(i));
            assert_eq!(ri, pi, "row {i}, threads = {t}");
            assert_eq!(common::bits(rv), common::bits(pv), "row {i}, threads = {t}");
        }
        let gathered = rows.into_matrix().unwrap();
        assert_eq!(gathered.pattern(), plain.pattern());
        assert_eq!(common::bits(gathered.values()), common::bits(plain.values()), "threads = {t}");
    }
}

#[test]
fn edge_matrix_of_eq4_counts_shared_faces_and_numbers_edges() {
    // E = M M^T {Q_c + Q_c^-1}[tau] on a 3x3 quad grid: 16 vertices,
    // 24 edges (12 boundary, shared by one face; 12 interior, by two).
    let m = grid_mesh_matrix(3);
    let mt = m.to_csr(Par::Seq).into_transpose();
    let q = |a: u32, b: u32| b == a % 4 + 1;
    let ops = Ops::new(
        |a: &u32, b: &u32| (*a, *b),
        |(a, b), _c: &Collision<'_, u32, u32>| (q(a, b) || q(b, a)).then_some(1u32),
    );
    let e = spgemm::multiply(m.as_ref(), mt.as_ref(), &ops, Par::Rayon).unwrap();
    assert_eq!(e.nnz(), 48);
    let en = subla_algebra::scan::enumerate_nonzeros(e.as_ref(), |i, j, _| i > j, Par::Rayon);
    assert_eq!(en.count, 24);
    let shared: Vec<u32> = (0..e.nnz()).filter(|&p| en.selected[p]).map(|p| e.values()[p]).collect();
    assert_eq!(shared.iter().filter(|&&s| s == 1).count(), 12);
    assert_eq!(shared.iter().filter(|&&s| s == 2).count(), 12);
    // E is symmetric.
    assert_eq!(e.as_ref().to_dense(), e.as_ref().to_dense().t());
}

#[test]
#[should_panic(expected = "does not match the product")]
fn numeric_with_a_foreign_pattern_panics() {
    let a = CsrMat::try_from_triplets(2, 2, &[(0, 0, 1i64), (1, 1, 1)]).unwrap();
    let wrong = CsrMat::try_from_triplets(2, 2, &[(0, 1, 0i64), (1, 1, 0)]).unwrap();
    let (pat, mut vals) = wrong.into_pattern_values();
    spgemm::numeric(a.as_ref(), a.as_ref(), &Ops::product(), pat.as_ref().with_values_mut(&mut vals), Par::Seq);
}

#[test]
#[should_panic(expected = "A.ncols() must equal B.nrows()")]
fn inner_dimension_mismatch_panics() {
    let a = CsrMat::<i64>::zeros(2, 3).unwrap();
    let _ = spgemm::multiply(a.as_ref(), a.as_ref(), &Ops::product(), Par::Seq);
}

proptest! {
    #[test]
    fn product_nnz_equals_structure_nnz_csr((a, b) in csr_pair(0..20, 7, 0u8..1)) {
        let expected = spgemm::structure(a.pattern(), b.pattern(), Par::Seq).unwrap().as_ref().nnz() as u64;
        prop_assert_eq!(spgemm::product_nnz(a.pattern(), b.pattern(), Par::Seq), expected);
        prop_assert_eq!(spgemm::product_nnz(a.pattern(), b.pattern(), Par::Rayon), expected);
    }

    /// The bounds from slice lengths hold the exact count between them,
    /// in both layouts and under both `Par`s.
    #[test]
    fn product_nnz_bounds_hold_the_count((a, b) in csr_pair(0..20, 7, 0u8..1), (c, d) in csc_pair(0..20, 7, 0u8..1)) {
        for (lo, hi, nnz) in [
            {
                let (lo, hi) = spgemm::product_nnz_bounds(a.pattern(), b.pattern(), Par::Seq);
                prop_assert_eq!(spgemm::product_nnz_bounds(a.pattern(), b.pattern(), Par::Rayon), (lo, hi));
                (lo, hi, spgemm::product_nnz(a.pattern(), b.pattern(), Par::Seq))
            },
            {
                let (lo, hi) = spgemm::product_nnz_bounds(c.pattern(), d.pattern(), Par::Seq);
                prop_assert_eq!(spgemm::product_nnz_bounds(c.pattern(), d.pattern(), Par::Rayon), (lo, hi));
                (lo, hi, spgemm::product_nnz(c.pattern(), d.pattern(), Par::Seq))
            },
        ] {
            prop_assert!(lo <= nnz && nnz <= hi, "{} <= {} <= {}", lo, nnz, hi);
        }
    }

    #[test]
    fn product_nnz_equals_structure_nnz_csc((a, b) in csc_pair(0..20, 7, 0u8..1)) {
        let expected = spgemm::structure(a.pattern(), b.pattern(), Par::Seq).unwrap().as_ref().nnz() as u64;
        prop_assert_eq!(spgemm::product_nnz(a.pattern(), b.pattern(), Par::Seq), expected);
        prop_assert_eq!(spgemm::product_nnz(a.pattern(), b.pattern(), Par::Rayon), expected);
    }
}

#[test]
fn product_nnz_is_the_same_for_every_pool_size() {
    // Big enough for several blocks: M Mᵀ (vertex adjacency through faces)
    // and Mᵀ M (face adjacency through vertices) of a 150 x 150 quad grid.
    let m = grid_mesh_matrix(150);
    let mt = m.to_csr(Par::Seq).into_transpose();
    for (a, b) in [(m.pattern(), mt.pattern()), (mt.pattern(), m.pattern())] {
        let expected = spgemm::structure(a, b, Par::Seq).unwrap().as_ref().nnz() as u64;
        assert_eq!(spgemm::product_nnz(a, b, Par::Seq), expected);
        for t in [1, 2, 3] {
            assert_eq!(common::with_threads(t, || spgemm::product_nnz(a, b, Par::Rayon)), expected, "threads = {t}");
        }
        let (ar, br) = (a.to_csr(Par::Seq), b.to_csr(Par::Seq));
        for t in [1, 2, 3] {
            let n = common::with_threads(t, || spgemm::product_nnz(ar.as_ref(), br.as_ref(), Par::Rayon));
            assert_eq!(n, expected, "CSR, threads = {t}");
        }
    }
}

#[test]
#[should_panic(expected = "A.ncols() must equal B.nrows()")]
fn product_nnz_with_mismatched_inner_dimensions_panics() {
    let a = CsrMat::<i64>::zeros(2, 3).unwrap();
    let _ = spgemm::product_nnz(a.pattern(), a.pattern(), Par::Seq);
}
