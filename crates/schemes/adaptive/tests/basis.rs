//! Checks of the patch bases against closed forms, finite differences and
//! reproduction of polynomials, all derived independently of the module.

use subla_adaptive::basis::{
    DerivOrder, GregoryDerivatives, PatchParam, PatchType, Weights, bezier_weights, box_spline_weights,
    bspline_weights, evaluate_basis, evaluate_basis_normalized, gregory_basis_weights, gregory_triangle_weights,
};

/// A map from a parameter along an edge to (s, t).
type EdgeMap = fn(f64) -> (f64, f64);
/// A map of the (s, t) plane.
type PlaneMap = fn((f64, f64)) -> (f64, f64);

const ALL_TYPES: [PatchType; 5] =
    [PatchType::Bilinear, PatchType::Regular, PatchType::GregoryBasis, PatchType::Loop, PatchType::GregoryTriangle];

const MODES: [GregoryDerivatives; 2] = [GregoryDerivatives::Approximate, GregoryDerivatives::Exact];

/// A small deterministic generator so the tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    fn values(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

fn dot(w: &[f64], p: &[f64]) -> f64 {
    assert_eq!(w.len(), p.len());
    w.iter().zip(p).map(|(a, b)| a * b).sum()
}

fn masks(ty: PatchType) -> Vec<u8> {
    match ty {
        PatchType::Regular => (0..16).collect(),
        PatchType::Loop => (0..32).collect(),
        _ => vec![0],
    }
}

/// Samples of the parameter domain, corners and edges included.
fn samples(ty: PatchType) -> Vec<(f64, f64)> {
    let xs = [0.0, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.7, 0.9, 1.0];
    let mut out = Vec::new();
    for &s in &xs {
        for &t in &xs {
            if !ty.is_triangle() || s + t <= 1.0 {
                out.push((s, t));
            }
        }
    }
    out
}

/// Samples kept away from the domain's boundary, where central differences
/// stay inside it.
fn interior_samples(ty: PatchType) -> Vec<(f64, f64)> {
    let xs = [0.05, 0.2, 1.0 / 3.0, 0.5, 0.65, 0.9];
    let mut out = Vec::new();
    for &s in &xs {
        for &t in &xs {
            if !ty.is_triangle() || s + t <= 0.95 {
                out.push((s, t));
            }
        }
    }
    out
}

fn eval_normalized(ty: PatchType, mask: u8, s: f64, t: f64, mode: GregoryDerivatives) -> Weights {
    let mut w = Weights::new(DerivOrder::Second);
    evaluate_basis_normalized(ty, mask, s, t, mode, &mut w);
    w
}

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: {a} != {b} (tolerance {tol})");
}

#[test]
fn weights_partition_unity_and_derivative_weights_sum_to_zero() {
    for ty in ALL_TYPES {
        for mask in masks(ty) {
            for mode in MODES {
                for (s, t) in samples(ty) {
                    let w = eval_normalized(ty, mask, s, t, mode);
                    assert_eq!(w.len(), ty.num_points());
                    let what = format!("{ty:?} mask {mask} {mode:?} at ({s}, {t})");
                    let sum: f64 = w.point().iter().sum();
                    assert_close(sum, 1.0, 1e-12, &what);
                    assert!(w.point().iter().all(|x| x.is_finite()), "{what}");
                    for d in [w.du(), w.dv(), w.duu(), w.duv(), w.dvv()] {
                        assert_eq!(d.len(), ty.num_points());
                        assert!(d.iter().all(|x| x.is_finite()), "{what}");
                        assert_close(d.iter().sum(), 0.0, 1e-10, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn derivative_weights_match_central_differences() {
    let h = 1e-5;
    for ty in ALL_TYPES {
        for mask in masks(ty) {
            for mode in MODES {
                for (s, t) in interior_samples(ty) {
                    let w = eval_normalized(ty, mask, s, t, mode);
                    let at = |ds: f64, dt: f64| eval_normalized(ty, mask, s + ds, t + dt, mode);
                    let (sp, sm, tp, tm) = (at(h, 0.0), at(-h, 0.0), at(0.0, h), at(0.0, -h));
                    let what = format!("{ty:?} mask {mask} {mode:?} at ({s}, {t})");
                    // The approximate Gregory derivatives hold the blend of
                    // the face points fixed: they are checked against that
                    // frozen Bezier patch in their own test.
                    let exact = !matches!(ty, PatchType::GregoryBasis | PatchType::GregoryTriangle)
                        || mode == GregoryDerivatives::Exact;
                    for i in 0..ty.num_points() {
                        let fd =
                            |p: &Weights, m: &Weights, row: fn(&Weights) -> &[f64]| (row(p)[i] - row(m)[i]) / (2.0 * h);
                        if exact {
                            assert_close(w.du()[i], fd(&sp, &sm, Weights::point), 1e-6, &what);
                            assert_close(w.dv()[i], fd(&tp, &tm, Weights::point), 1e-6, &what);
                            assert_close(w.duu()[i], fd(&sp, &sm, Weights::du), 1e-6, &what);
                            assert_close(w.duv()[i], fd(&tp, &tm, Weights::du), 1e-6, &what);
                            assert_close(w.duv()[i], fd(&sp, &sm, Weights::dv), 1e-6, &what);
                            assert_close(w.dvv()[i], fd(&tp, &tm, Weights::dv), 1e-6, &what);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn lower_orders_leave_derivatives_empty_and_agree_on_what_they_compute() {
    for ty in ALL_TYPES {
        let full = eval_normalized(ty, 0, 0.3, 0.2, GregoryDerivatives::Exact);
        let mut w = Weights::new(DerivOrder::Point);
        evaluate_basis_normalized(ty, 0, 0.3, 0.2, GregoryDerivatives::Exact, &mut w);
        assert_eq!(w.point(), full.point());
        assert!(w.du().is_empty() && w.dv().is_empty() && w.duu().is_empty());
        w.set_order(DerivOrder::First);
        evaluate_basis_normalized(ty, 0, 0.3, 0.2, GregoryDerivatives::Exact, &mut w);
        assert_eq!(w.order(), DerivOrder::First);
        assert_eq!((w.du(), w.dv()), (full.du(), full.dv()));
        assert!(w.duu().is_empty() && w.duv().is_empty() && w.dvv().is_empty());
    }
    assert!(Weights::new(DerivOrder::Second).is_empty());
}

#[test]
fn bilinear_weights_are_the_corner_products() {
    let w = eval_normalized(PatchType::Bilinear, 0, 0.3, 0.6, GregoryDerivatives::Exact);
    let expect = [0.7 * 0.4, 0.3 * 0.4, 0.3 * 0.6, 0.7 * 0.6];
    for (a, b) in w.point().iter().zip(expect) {
        assert_close(*a, b, 1e-15, "bilinear");
    }
    assert_eq!(w.duv(), &[1.0, -1.0, 1.0, -1.0]);
}

// --- B-spline -------------------------------------------------------------

/// The polar form of `sum a_k x^k` (cubic): the control point of the
/// uniform B-spline with integer knots whose curve is that polynomial.
fn blossom(a: [f64; 4], x: [f64; 3]) -> f64 {
    let e1 = (x[0] + x[1] + x[2]) / 3.0;
    let e2 = (x[0] * x[1] + x[0] * x[2] + x[1] * x[2]) / 3.0;
    let e3 = x[0] * x[1] * x[2];
    a[0] + a[1] * e1 + a[2] * e2 + a[3] * e3
}

fn poly(a: [f64; 4], x: f64) -> [f64; 3] {
    [
        a[0] + a[1] * x + a[2] * x * x + a[3] * x * x * x,
        a[1] + 2.0 * a[2] * x + 3.0 * a[3] * x * x,
        2.0 * a[2] + 6.0 * a[3] * x,
    ]
}

#[test]
fn bspline_reproduces_bicubic_polynomials() {
    // f(s, t) = f1(s) g1(t) + f2(s) g2(t): the patch's middle face spans
    // [0, 1]^2 and point j of a row sits over the knots j - 2, j - 1, j.
    let terms = [([0.5, -1.0, 2.0, 0.75], [1.0, 0.3, -0.7, 1.25]), ([-0.2, 0.4, 0.0, -1.5], [0.1, 2.0, 0.5, 0.0])];
    let mut pts = [0.0; 16];
    for (row, ctrl) in pts.chunks_mut(4).enumerate() {
        for (col, p) in ctrl.iter_mut().enumerate() {
            let knots = |j: usize| [j as f64 - 2.0, j as f64 - 1.0, j as f64];
            *p = terms.iter().map(|(f, g)| blossom(*f, knots(col)) * blossom(*g, knots(row))).sum();
        }
    }
    let mut w = Weights::new(DerivOrder::Second);
    for (s, t) in samples(PatchType::Regular) {
        bspline_weights(s, t, 0, &mut w);
        let mut expect = [0.0; 6];
        for (f, g) in terms {
            let (fs, gt) = (poly(f, s), poly(g, t));
            let e = [fs[0] * gt[0], fs[1] * gt[0], fs[0] * gt[1], fs[2] * gt[0], fs[1] * gt[1], fs[0] * gt[2]];
            for (x, y) in expect.iter_mut().zip(e) {
                *x += y;
            }
        }
        let got = [w.point(), w.du(), w.dv(), w.duu(), w.duv(), w.dvv()].map(|r| dot(r, &pts));
        for (g, e) in got.iter().zip(expect) {
            assert_close(*g, e, 1e-12, &format!("bicubic at ({s}, {t})"));
        }
    }
}

#[test]
fn bspline_reproduces_planes_for_every_boundary_mask() {
    // Phantom points are linear extrapolations, so a plane sampled at the
    // grid stays a plane whatever the boundary.
    let plane = |x: f64, y: f64| 0.3 - 1.7 * x + 2.2 * y;
    let pts: Vec<f64> = (0..16).map(|i| plane((i % 4) as f64 - 1.0, (i / 4) as f64 - 1.0)).collect();
    let mut w = Weights::new(DerivOrder::Second);
    for mask in 0..16 {
        for (s, t) in samples(PatchType::Regular) {
            bspline_weights(s, t, mask, &mut w);
            let what = format!("mask {mask} at ({s}, {t})");
            assert_close(dot(w.point(), &pts), plane(s, t), 1e-12, &what);
            assert_close(dot(w.du(), &pts), -1.7, 1e-12, &what);
            assert_close(dot(w.dv(), &pts), 2.2, 1e-12, &what);
            for d in [w.duu(), w.duv(), w.dvv()] {
                assert_close(dot(d, &pts), 0.0, 1e-12, &what);
            }
        }
    }
}

fn cubic_bspline(x: f64) -> [f64; 4] {
    let c = 1.0 - x;
    [
        c * c * c / 6.0,
        (3.0 * x * x * x - 6.0 * x * x + 4.0) / 6.0,
        (-3.0 * x * x * x + 3.0 * x * x + 3.0 * x + 1.0) / 6.0,
        x * x * x / 6.0,
    ]
}

#[test]
fn bspline_boundary_edge_is_the_curve_of_its_boundary_points() {
    // Edge e, its boundary points in edge order, and where a parameter x
    // along the edge lies in (s, t).
    let edges: [(u8, [usize; 4], EdgeMap); 4] = [
        (1, [4, 5, 6, 7], |x| (x, 0.0)),
        (2, [2, 6, 10, 14], |x| (1.0, x)),
        (4, [11, 10, 9, 8], |x| (1.0 - x, 1.0)),
        (8, [13, 9, 5, 1], |x| (0.0, 1.0 - x)),
    ];
    let mut rng = Rng(7);
    let pts = rng.values(16);
    let mut w = Weights::new(DerivOrder::First);
    for (mask, row, at) in edges {
        for x in [0.0, 0.2, 0.5, 0.8, 1.0] {
            let (s, t) = at(x);
            bspline_weights(s, t, mask, &mut w);
            let b = cubic_bspline(x);
            let expect: f64 = row.iter().zip(b).map(|(&i, bi)| pts[i] * bi).sum();
            assert_close(dot(w.point(), &pts), expect, 1e-12, &format!("edge {mask}"));
        }
        // At the edge's start: (P0 + 4 P1 + P2) / 6 of its boundary points.
        let (s, t) = at(0.0);
        bspline_weights(s, t, mask, &mut w);
        let expect = (pts[row[0]] + 4.0 * pts[row[1]] + pts[row[2]]) / 6.0;
        assert_close(dot(w.point(), &pts), expect, 1e-12, "edge start");
    }
    // Where two boundary edges meet the patch interpolates the corner.
    for (mask, (s, t), corner) in [(9, (0.0, 0.0), 5), (3, (1.0, 0.0), 6), (6, (1.0, 1.0), 10), (12, (0.0, 1.0), 9)] {
        bspline_weights(s, t, mask, &mut w);
        for (i, &x) in w.point().iter().enumerate() {
            let e = if i == corner { 1.0 } else { 0.0 };
            assert_close(x, e, 1e-14, &format!("corner mask {mask}"));
        }
    }
}

/// Folds the weights of absent rows and columns in the 4x4 grid onto the
/// two inside them, edge by edge in bit order: the 2-D procedure of
/// OpenSubdiv, written out directly.
fn fold_grid(mask: u8, w: &mut [f64]) {
    let at = |r: usize, c: usize| 4 * r + c;
    for bit in 0..4 {
        if mask & (1 << bit) == 0 {
            continue;
        }
        for k in 0..4 {
            let (ph, near, far) = match bit {
                0 => (at(0, k), at(1, k), at(2, k)),
                1 => (at(k, 3), at(k, 2), at(k, 1)),
                2 => (at(3, k), at(2, k), at(1, k)),
                _ => (at(k, 0), at(k, 1), at(k, 2)),
            };
            let x = w[ph];
            w[near] += 2.0 * x;
            w[far] -= x;
            w[ph] = 0.0;
        }
    }
}

#[test]
fn bspline_boundary_weights_match_folding_the_grid() {
    let mut w = Weights::new(DerivOrder::Second);
    let mut free = Weights::new(DerivOrder::Second);
    for mask in 0..16 {
        for (s, t) in samples(PatchType::Regular) {
            bspline_weights(s, t, mask, &mut w);
            bspline_weights(s, t, 0, &mut free);
            let rows = [
                (w.point(), free.point()),
                (w.du(), free.du()),
                (w.dv(), free.dv()),
                (w.duu(), free.duu()),
                (w.duv(), free.duv()),
                (w.dvv(), free.dvv()),
            ];
            for (got, unfolded) in rows {
                let mut expect = unfolded.to_vec();
                fold_grid(mask, &mut expect);
                for (a, b) in got.iter().zip(&expect) {
                    assert_close(*a, *b, 1e-13, &format!("mask {mask} at ({s}, {t})"));
                }
            }
        }
    }
}

#[test]
fn bspline_corner_is_the_limit_mask() {
    let mut w = Weights::new(DerivOrder::Point);
    bspline_weights(0.0, 0.0, 0, &mut w);
    let m = [1.0, 4.0, 1.0, 0.0];
    for (i, &x) in w.point().iter().enumerate() {
        assert_close(x, m[i % 4] * m[i / 4] / 36.0, 1e-15, "limit mask");
    }
}

// --- Gregory basis ----------------------------------------------------------

/// Bernstein polynomials of degree `n` with their derivatives, from the
/// degree-lowering identities.
fn bernstein(n: usize, k: isize, x: f64) -> f64 {
    if k < 0 || k as usize > n {
        return 0.0;
    }
    let k = k as usize;
    let binom = (1..=k).fold(1.0, |acc, i| acc * (n + 1 - i) as f64 / i as f64);
    binom * x.powi(k as i32) * (1.0 - x).powi((n - k) as i32)
}

fn bezier3(k: usize, x: f64) -> [f64; 3] {
    let k = k as isize;
    [
        bernstein(3, k, x),
        3.0 * (bernstein(2, k - 1, x) - bernstein(2, k, x)),
        6.0 * (bernstein(1, k - 2, x) - 2.0 * bernstein(1, k - 1, x) + bernstein(1, k, x)),
    ]
}

/// A bicubic Bezier patch of 16 row-major points with its derivatives:
/// point, d/ds, d/dt, d2/ds2, d2/dsdt, d2/dt2.
fn bezier_patch(b: &[f64; 16], s: f64, t: f64) -> [f64; 6] {
    let mut out = [0.0; 6];
    for r in 0..4 {
        for c in 0..4 {
            let (bs, bt) = (bezier3(c, s), bezier3(r, t));
            let p = b[4 * r + c];
            let terms = [bs[0] * bt[0], bs[1] * bt[0], bs[0] * bt[1], bs[2] * bt[0], bs[1] * bt[1], bs[0] * bt[2]];
            for (o, x) in out.iter_mut().zip(terms) {
                *o += x * p;
            }
        }
    }
    out
}

/// The Bezier point (row-major index) each Gregory basis point stands for,
/// read off OpenSubdiv's diagram of the patch.
const GREGORY_TO_BEZIER: [usize; 20] = [0, 1, 4, 5, 5, 3, 7, 2, 6, 6, 15, 14, 11, 10, 10, 12, 8, 13, 9, 9];

fn all_rows(w: &Weights) -> [&[f64]; 6] {
    [w.point(), w.du(), w.dv(), w.duu(), w.duv(), w.dvv()]
}

#[test]
fn bezier_weights_match_bernstein_products() {
    let mut rng = Rng(3);
    let b: [f64; 16] = std::array::from_fn(|_| rng.next());
    let mut w = Weights::new(DerivOrder::Second);
    for (s, t) in samples(PatchType::Regular) {
        bezier_weights(s, t, &mut w);
        let expect = bezier_patch(&b, s, t);
        for (row, e) in all_rows(&w).iter().zip(expect) {
            assert_close(dot(row, &b), e, 1e-12, "bezier");
        }
    }
}

#[test]
fn gregory_basis_with_coincident_face_points_is_the_bezier_patch() {
    let mut rng = Rng(11);
    let b: [f64; 16] = std::array::from_fn(|_| rng.next());
    let g: Vec<f64> = GREGORY_TO_BEZIER.iter().map(|&i| b[i]).collect();
    let mut w = Weights::new(DerivOrder::Second);
    for mode in MODES {
        for (s, t) in samples(PatchType::GregoryBasis) {
            gregory_basis_weights(s, t, mode, &mut w);
            let expect = bezier_patch(&b, s, t);
            for (row, e) in all_rows(&w).iter().zip(expect) {
                assert_close(dot(row, &g), e, 1e-12, &format!("{mode:?} at ({s}, {t})"));
            }
        }
    }
}

/// The Bezier patch of a Gregory patch at (s, t): interior points blended
/// from the face point pairs (Fp weighted by the distance along the edge
/// its Ep lies on).
fn gregory_frozen_bezier(g: &[f64], s: f64, t: f64) -> [f64; 16] {
    let mut b = [0.0; 16];
    for (i, &bi) in GREGORY_TO_BEZIER.iter().enumerate() {
        if i % 5 < 3 {
            b[bi] = g[i];
        }
    }
    let blend = |p: f64, m: f64, wp: f64, wm: f64| (wp * p + wm * m) / (wp + wm);
    b[5] = blend(g[3], g[4], s, t);
    b[6] = blend(g[8], g[9], t, 1.0 - s);
    b[10] = blend(g[13], g[14], 1.0 - s, 1.0 - t);
    b[9] = blend(g[18], g[19], 1.0 - t, s);
    b
}

#[test]
fn gregory_basis_blends_face_points_rationally() {
    let mut rng = Rng(5);
    let g = rng.values(20);
    let mut w = Weights::new(DerivOrder::Second);
    for (s, t) in interior_samples(PatchType::GregoryBasis) {
        let b = gregory_frozen_bezier(&g, s, t);
        let expect = bezier_patch(&b, s, t);
        // The point, and for OpenSubdiv's default derivatives, those of the
        // Bezier patch with the blend held fixed.
        gregory_basis_weights(s, t, GregoryDerivatives::Approximate, &mut w);
        for (row, e) in all_rows(&w).iter().zip(expect) {
            assert_close(dot(row, &g), e, 1e-12, &format!("at ({s}, {t})"));
        }
        gregory_basis_weights(s, t, GregoryDerivatives::Exact, &mut w);
        assert_close(dot(w.point(), &g), expect[0], 1e-12, "exact point");
    }
}

#[test]
fn gregory_basis_corners_follow_opensubdiv() {
    let mut w = Weights::new(DerivOrder::Second);
    for mode in MODES {
        for (c, (s, t)) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].into_iter().enumerate() {
            gregory_basis_weights(s, t, mode, &mut w);
            for (i, &x) in w.point().iter().enumerate() {
                assert_eq!(x, if i == 5 * c { 1.0 } else { 0.0 }, "corner {c}");
            }
        }
        // Where a corner's blend is 0/0, the mixed derivative of the
        // interior Bezier point (9 = 3 * 3 at corner 0, -9 at corner 1)
        // goes wholly to the corner's Fm, as in OpenSubdiv.
        gregory_basis_weights(0.0, 0.0, mode, &mut w);
        assert_eq!((w.duv()[3], w.duv()[4]), (0.0, 9.0));
        gregory_basis_weights(1.0, 0.0, mode, &mut w);
        assert_eq!((w.duv()[8], w.duv()[9]), (0.0, -9.0));
        // The triangle gives it to Fp instead: 12, -12 and -12 are the
        // mixed derivatives of its interior Bezier points at their corners.
        for ((s, t), (p, m), d) in
            [((0.0, 0.0), (3, 4), 12.0), ((1.0, 0.0), (8, 9), -12.0), ((0.0, 1.0), (13, 14), -12.0)]
        {
            gregory_triangle_weights(s, t, mode, &mut w);
            assert_close(w.duv()[p], d, 1e-14, "triangle corner Fp");
            assert_eq!(w.duv()[m], 0.0, "triangle corner Fm");
        }
    }
}

// --- Loop box spline -------------------------------------------------------

/// Where the 12 box spline points lie in the patch's (s, t) coordinates,
/// from OpenSubdiv's diagram: corners 4, 5, 8 at (0,0), (1,0), (0,1).
const BOX_POINTS: [(f64, f64); 12] = [
    (0.0, -1.0),
    (1.0, -1.0),
    (2.0, -1.0),
    (-1.0, 0.0),
    (0.0, 0.0),
    (1.0, 0.0),
    (2.0, 0.0),
    (-1.0, 1.0),
    (0.0, 1.0),
    (1.0, 1.0),
    (-1.0, 2.0),
    (0.0, 2.0),
];

#[test]
fn box_spline_has_linear_precision_for_every_boundary_mask() {
    let f = |(x, y): (f64, f64)| 0.4 + 1.3 * x - 0.6 * y;
    let pts: Vec<f64> = BOX_POINTS.iter().map(|&p| f(p)).collect();
    let mut w = Weights::new(DerivOrder::Second);
    for mask in 0..32 {
        for (s, t) in samples(PatchType::Loop) {
            box_spline_weights(s, t, mask, &mut w);
            let what = format!("mask {mask} at ({s}, {t})");
            assert_close(dot(w.point(), &pts), f((s, t)), 1e-12, &what);
            assert_close(dot(w.du(), &pts), 1.3, 1e-12, &what);
            assert_close(dot(w.dv(), &pts), -0.6, 1e-12, &what);
            for d in [w.duu(), w.duv(), w.dvv()] {
                assert_close(dot(d, &pts), 0.0, 1e-12, &what);
            }
        }
    }
}

fn point_at(p: (f64, f64)) -> usize {
    BOX_POINTS
        .iter()
        .position(|&q| (q.0 - p.0).abs() < 1e-12 && (q.1 - p.1).abs() < 1e-12)
        .unwrap_or_else(|| panic!("{p:?} is not a box spline point"))
}

#[test]
fn box_spline_is_symmetric_under_the_triangles_symmetries() {
    // The rotation taking corners 0 -> 1 -> 2 and the reflection swapping
    // corners 1 and 2 map the 12 points onto themselves; the basis
    // functions must follow them.
    let maps: [PlaneMap; 2] = [|(s, t)| (1.0 - s - t, s), |(s, t)| (t, s)];
    let mut w = Weights::new(DerivOrder::Point);
    let mut wm = Weights::new(DerivOrder::Point);
    for map in maps {
        let perm: Vec<usize> = BOX_POINTS.iter().map(|&p| point_at(map(p))).collect();
        for (s, t) in samples(PatchType::Loop) {
            box_spline_weights(s, t, 0, &mut w);
            let (ms, mt) = map((s, t));
            box_spline_weights(ms, mt, 0, &mut wm);
            for (k, &pk) in perm.iter().enumerate() {
                assert_close(w.point()[k], wm.point()[pk], 1e-13, "symmetry");
            }
        }
    }
}

#[test]
fn box_spline_corners_are_loops_limit_mask() {
    // A regular (valence 6) Loop vertex's limit is 1/2 of it plus 1/12 of
    // each neighbour.
    let mut w = Weights::new(DerivOrder::Point);
    for (corner, (s, t)) in [(4, (0.0, 0.0)), (5, (1.0, 0.0)), (8, (0.0, 1.0))] {
        box_spline_weights(s, t, 0, &mut w);
        let c = BOX_POINTS[corner];
        for (i, &x) in w.point().iter().enumerate() {
            let p = BOX_POINTS[i];
            let (dx, dy) = ((p.0 - c.0) as i32, (p.1 - c.1) as i32);
            let neighbour = matches!((dx, dy), (1, 0) | (-1, 0) | (0, 1) | (0, -1) | (1, -1) | (-1, 1));
            let e = if i == corner {
                0.5
            } else if neighbour {
                1.0 / 12.0
            } else {
                0.0
            };
            assert_close(x, e, 1e-15, &format!("corner {corner}, point {i}"));
        }
    }
}

#[test]
fn box_spline_boundary_edge_is_the_curve_of_its_boundary_points() {
    let edges: [(u8, [usize; 4], EdgeMap); 3] =
        [(1, [3, 4, 5, 6], |x| (x, 0.0)), (2, [2, 5, 8, 10], |x| (1.0 - x, x)), (4, [11, 8, 4, 0], |x| (0.0, 1.0 - x))];
    let mut rng = Rng(13);
    let pts = rng.values(12);
    let mut w = Weights::new(DerivOrder::Point);
    for (mask, row, at) in edges {
        for x in [0.0, 0.3, 0.5, 1.0] {
            let (s, t) = at(x);
            box_spline_weights(s, t, mask, &mut w);
            let b = cubic_bspline(x);
            let expect: f64 = row.iter().zip(b).map(|(&i, bi)| pts[i] * bi).sum();
            assert_close(dot(w.point(), &pts), expect, 1e-12, &format!("edge {mask} at {x}"));
        }
    }
}

// --- Gregory triangle ---------------------------------------------------------

/// The quartic Bezier triangle by de Casteljau's algorithm; points are in
/// OpenSubdiv's order (rows of rising t, each of rising s).
fn de_casteljau_triangle(b: &[f64; 15], s: f64, t: f64) -> f64 {
    let w = 1.0 - s - t;
    // net[j][i]: i powers of s, j of t.
    let mut net: Vec<Vec<f64>> = Vec::new();
    let mut k = 0;
    for j in 0..5 {
        net.push(b[k..k + 5 - j].to_vec());
        k += 5 - j;
    }
    for n in (1..5).rev() {
        let next: Vec<Vec<f64>> = (0..n)
            .map(|j| (0..n - j).map(|i| s * net[j][i + 1] + t * net[j + 1][i] + w * net[j][i]).collect())
            .collect();
        net = next;
    }
    net[0][0]
}

/// The quartic Bezier point each triangular Gregory point stands for, read
/// off OpenSubdiv's description (5 per corner, then the edge midpoints).
const GREGORY_TRI_TO_BEZIER: [usize; 18] = [0, 1, 5, 6, 6, 4, 8, 3, 7, 7, 14, 12, 13, 10, 10, 2, 11, 9];

#[test]
fn gregory_triangle_with_coincident_face_points_is_the_bezier_triangle() {
    let mut rng = Rng(17);
    let b: [f64; 15] = std::array::from_fn(|_| rng.next());
    let g: Vec<f64> = GREGORY_TRI_TO_BEZIER.iter().map(|&i| b[i]).collect();
    let mut w = Weights::new(DerivOrder::Second);
    let h = 1e-5;
    for mode in MODES {
        for (s, t) in samples(PatchType::GregoryTriangle) {
            gregory_triangle_weights(s, t, mode, &mut w);
            let what = format!("{mode:?} at ({s}, {t})");
            assert_close(dot(w.point(), &g), de_casteljau_triangle(&b, s, t), 1e-12, &what);
            // With coincident pairs both modes give the Bezier derivatives.
            let fd_s = (de_casteljau_triangle(&b, s + h, t) - de_casteljau_triangle(&b, s - h, t)) / (2.0 * h);
            let fd_t = (de_casteljau_triangle(&b, s, t + h) - de_casteljau_triangle(&b, s, t - h)) / (2.0 * h);
            assert_close(dot(w.du(), &g), fd_s, 1e-7, &what);
            assert_close(dot(w.dv(), &g), fd_t, 1e-7, &what);
        }
    }
}

#[test]
fn gregory_triangle_has_linear_precision_and_interpolates_corners() {
    // The Bezier net of an affine function sits at (i/4, j/4).
    let f = |s: f64, t: f64| -0.2 + 0.9 * s + 1.4 * t;
    let mut b = [0.0; 15];
    let mut k = 0;
    for j in 0..5 {
        for i in 0..5 - j {
            b[k] = f(i as f64 / 4.0, j as f64 / 4.0);
            k += 1;
        }
    }
    let g: Vec<f64> = GREGORY_TRI_TO_BEZIER.iter().map(|&i| b[i]).collect();
    let mut w = Weights::new(DerivOrder::First);
    for mode in MODES {
        for (s, t) in samples(PatchType::GregoryTriangle) {
            gregory_triangle_weights(s, t, mode, &mut w);
            assert_close(dot(w.point(), &g), f(s, t), 1e-12, "affine");
            assert_close(dot(w.du(), &g), 0.9, 1e-12, "affine du");
            assert_close(dot(w.dv(), &g), 1.4, 1e-12, "affine dv");
        }
        for (c, (s, t)) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)].into_iter().enumerate() {
            gregory_triangle_weights(s, t, mode, &mut w);
            for (i, &x) in w.point().iter().enumerate() {
                assert_eq!(x, if i == 5 * c { 1.0 } else { 0.0 }, "corner {c}");
            }
        }
    }
}

// --- PatchParam and evaluation in the ptex face ------------------------------

#[test]
fn param_fraction_halves_with_each_level() {
    for depth in 0..=10u8 {
        let p = PatchParam::new(3, depth, 0, 0, false);
        assert_eq!(p.param_fraction(), 0.5f64.powi(i32::from(depth)));
        assert_eq!(p.param_scale() * p.param_fraction(), 1.0);
        if depth >= 1 {
            // A non-quad root's ptex face is already a level-1 sub-face.
            let q = PatchParam::new(3, depth, 0, 0, true);
            assert_eq!(q.param_fraction(), 0.5f64.powi(i32::from(depth) - 1));
        }
    }
}

#[test]
fn normalize_and_unnormalize_are_inverse() {
    let params = [
        PatchParam::new(0, 0, 0, 0, false),
        PatchParam::new(1, 3, 5, 2, false),
        PatchParam::new(2, 3, 1, 3, true),
        PatchParam::new(9, 10, 1023, 517, false),
    ];
    for p in params {
        let f = p.param_fraction();
        // The patch's corners land on its cell of the quad tree.
        let (u0, v0) = p.unnormalize(0.0, 0.0);
        assert_eq!((u0, v0), (f64::from(p.u()) * f, f64::from(p.v()) * f));
        let (u1, v1) = p.unnormalize(1.0, 1.0);
        assert_eq!((u1 - u0, v1 - v0), (f, f));
        for (s, t) in samples(PatchType::Regular) {
            let (u, v) = p.unnormalize(s, t);
            let (s2, t2) = p.normalize(u, v);
            assert_close(s2, s, 1e-12, "s");
            assert_close(t2, t, 1e-12, "t");
        }
    }
}

#[test]
fn triangles_of_the_second_half_are_rotated() {
    let plain = PatchParam::new(0, 2, 1, 2, false);
    let rotated = PatchParam::new(0, 2, 3, 2, false);
    assert!(!plain.is_triangle_rotated());
    assert!(rotated.is_triangle_rotated());
    // A rotated triangle is parameterised from the far corner of its
    // square, with both directions reversed.
    let (u, v) = rotated.unnormalize_triangle(0.0, 0.0);
    assert_eq!((u, v), (0.25, 0.5));
    let (u, v) = rotated.unnormalize_triangle(1.0, 0.0);
    assert_eq!((u, v), (0.0, 0.5));
    let (u, v) = rotated.unnormalize_triangle(0.0, 1.0);
    assert_eq!((u, v), (0.25, 0.25));
    for p in [plain, rotated] {
        for (s, t) in samples(PatchType::Loop) {
            let (u, v) = p.unnormalize_triangle(s, t);
            let (s2, t2) = p.normalize_triangle(u, v);
            assert_close(s2, s, 1e-12, "s");
            assert_close(t2, t, 1e-12, "t");
        }
    }
}

#[test]
fn patch_param_packs_like_opensubdiv() {
    let p = PatchParam::new(123_456, 4, 9, 14, false).with_boundary(0b10110).with_transition(0b0101).with_regular(true);
    let bits = p.to_bits();
    assert_eq!(bits[0], 123_456 | (5 << 28));
    assert_eq!(bits[1], (9 << 22) | (14 << 12) | (22 << 7) | (1 << 5) | 4);
    assert_eq!(PatchParam::from_bits(bits), Some(p));
    let q = PatchParam::new(7, 1, 0, 0, true);
    assert_eq!(q.to_bits()[1], (1 << 4) | 1);
    assert_eq!(PatchParam::from_bits(q.to_bits()), Some(q));
    // A non-quad root at depth 0, and a cell outside the grid of depth 1.
    assert_eq!(PatchParam::from_bits([0, 1 << 4]), None);
    assert_eq!(PatchParam::from_bits([0, (2 << 22) | 1]), None);
    assert_eq!((p.face_id(), p.u(), p.v(), p.depth(), p.non_quad_root()), (123_456, 9, 14, 4, false));
    assert_eq!((p.boundary(), p.transition(), p.is_regular()), (0b10110, 0b0101, true));
}

#[test]
#[should_panic(expected = "outside the")]
fn patch_param_rejects_cells_outside_its_depth() {
    let _ = PatchParam::new(0, 2, 4, 0, false);
}

#[test]
#[should_panic(expected = "non-quad root")]
fn patch_param_rejects_non_quad_roots_at_depth_zero() {
    let _ = PatchParam::new(0, 0, 0, 0, true);
}

#[test]
fn evaluate_basis_differentiates_in_the_ptex_face() {
    let cases = [
        (PatchType::Bilinear, PatchParam::new(0, 2, 1, 3, false)),
        (PatchType::Regular, PatchParam::new(0, 3, 5, 2, false).with_boundary(9)),
        (PatchType::Regular, PatchParam::new(0, 3, 1, 3, true)),
        (PatchType::GregoryBasis, PatchParam::new(0, 1, 1, 0, false)),
        (PatchType::GregoryBasis, PatchParam::new(0, 2, 1, 1, true)),
        (PatchType::Loop, PatchParam::new(0, 2, 1, 2, false).with_boundary(1)),
        (PatchType::Loop, PatchParam::new(0, 2, 3, 2, false)),
        (PatchType::GregoryTriangle, PatchParam::new(0, 1, 1, 1, false)),
        (PatchType::GregoryTriangle, PatchParam::new(0, 1, 0, 1, false)),
    ];
    let eval = |ty, p: &PatchParam, u, v| {
        let mut w = Weights::new(DerivOrder::Second);
        evaluate_basis(ty, p, u, v, GregoryDerivatives::Exact, &mut w);
        w
    };
    for (ty, p) in cases {
        let h = 1e-6 * p.param_fraction();
        for (s, t) in interior_samples(ty) {
            let (u, v) = if ty.is_triangle() { p.unnormalize_triangle(s, t) } else { p.unnormalize(s, t) };
            let w = eval(ty, &p, u, v);
            // The same weights as the patch's own basis at (s, t).
            let own = eval_normalized(ty, p.boundary(), s, t, GregoryDerivatives::Exact);
            for (a, b) in w.point().iter().zip(own.point()) {
                assert_close(*a, *b, 1e-12, "point");
            }
            let (up, um, vp, vm) =
                (eval(ty, &p, u + h, v), eval(ty, &p, u - h, v), eval(ty, &p, u, v + h), eval(ty, &p, u, v - h));
            let what = format!("{ty:?} {p:?} at ({u}, {v})");
            // Second derivatives grow as the scale squared: compare them
            // relative to it.
            let k2 = p.param_scale() * p.param_scale();
            for i in 0..ty.num_points() {
                let fd = |a: &Weights, b: &Weights, row: fn(&Weights) -> &[f64]| (row(a)[i] - row(b)[i]) / (2.0 * h);
                let k = p.param_scale();
                assert_close(w.du()[i] / k, fd(&up, &um, Weights::point) / k, 1e-5, &what);
                assert_close(w.dv()[i] / k, fd(&vp, &vm, Weights::point) / k, 1e-5, &what);
                assert_close(w.duu()[i] / k2, fd(&up, &um, Weights::du) / k2, 1e-5, &what);
                assert_close(w.duv()[i] / k2, fd(&vp, &vm, Weights::du) / k2, 1e-5, &what);
                assert_close(w.dvv()[i] / k2, fd(&vp, &vm, Weights::dv) / k2, 1e-5, &what);
            }
        }
    }
}

#[test]
fn box_spline_corner_of_two_boundary_edges_ends_both_curves() {
    // Two boundary edges meet at a corner of the mesh: each edge's curve is
    // the B-spline of its boundary points with the end beyond the corner
    // reflected through it (so the curve interpolates the corner).
    let mut rng = Rng(19);
    let pts = rng.values(12);
    let p = |i: usize| pts[i];
    // (mask, curve points along the edge, where x along the edge lies).
    type Curve = (u8, [f64; 4], EdgeMap);
    let curves: [Curve; 6] = [
        (5, [2.0 * p(4) - p(5), p(4), p(5), p(6)], |x| (x, 0.0)),
        (5, [p(11), p(8), p(4), 2.0 * p(4) - p(8)], |x| (0.0, 1.0 - x)),
        (3, [p(3), p(4), p(5), 2.0 * p(5) - p(4)], |x| (x, 0.0)),
        (3, [2.0 * p(5) - p(8), p(5), p(8), p(10)], |x| (1.0 - x, x)),
        (6, [p(2), p(5), p(8), 2.0 * p(8) - p(5)], |x| (1.0 - x, x)),
        (6, [2.0 * p(8) - p(4), p(8), p(4), p(0)], |x| (0.0, 1.0 - x)),
    ];
    let mut w = Weights::new(DerivOrder::Point);
    for (mask, ctrl, at) in curves {
        for x in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let (s, t) = at(x);
            box_spline_weights(s, t, mask, &mut w);
            let expect: f64 = ctrl.iter().zip(cubic_bspline(x)).map(|(c, b)| c * b).sum();
            assert_close(dot(w.point(), &pts), expect, 1e-12, &format!("mask {mask} at {x}"));
        }
    }
}

#[test]
fn box_spline_boundary_vertex_limit_uses_the_boundary_line() {
    // A boundary vertex whose edges in the patch are interior: its limit is
    // (P- + 4 P + P+) / 6 along the boundary line through it. The upper
    // bits 01 mark vertices; 10 marks edges with their opposite vertices.
    let mut rng = Rng(23);
    let pts = rng.values(12);
    let p = |i: usize| pts[i];
    let cases: [(u8, (f64, f64), f64); 6] = [
        (0b01_001, (0.0, 0.0), (p(7) + 4.0 * p(4) + p(1)) / 6.0),
        (0b01_010, (1.0, 0.0), (p(1) + 4.0 * p(5) + p(9)) / 6.0),
        (0b01_100, (0.0, 1.0), (p(7) + 4.0 * p(8) + p(9)) / 6.0),
        (0b10_001, (0.0, 1.0), (p(7) + 4.0 * p(8) + p(9)) / 6.0),
        (0b10_010, (0.0, 0.0), (p(7) + 4.0 * p(4) + p(1)) / 6.0),
        (0b10_100, (1.0, 0.0), (p(1) + 4.0 * p(5) + p(9)) / 6.0),
    ];
    let mut w = Weights::new(DerivOrder::Point);
    for (mask, (s, t), expect) in cases {
        box_spline_weights(s, t, mask, &mut w);
        assert_close(dot(w.point(), &pts), expect, 1e-12, &format!("mask {mask:#b}"));
    }
}

#[test]
fn gregory_edges_use_only_their_own_face_points() {
    // Corner c's Ep lies on edge c and its Em on edge c - 1; along edge e
    // the patch and its derivatives (the cross-boundary one included) use
    // the face points next to those edge points, Fp of corner e and Fm of
    // corner e + 1, and not Fm of corner e nor Fp of corner e + 1.
    let quad_edges: [EdgeMap; 4] = [|x| (x, 0.0), |x| (1.0, x), |x| (1.0 - x, 1.0), |x| (0.0, 1.0 - x)];
    let tri_edges: [EdgeMap; 3] = [|x| (x, 0.0), |x| (1.0 - x, x), |x| (0.0, 1.0 - x)];
    let mut w = Weights::new(DerivOrder::First);
    for mode in MODES {
        for (ty, edges) in [(PatchType::GregoryBasis, &quad_edges[..]), (PatchType::GregoryTriangle, &tri_edges[..])] {
            let n = edges.len();
            for (e, at) in edges.iter().enumerate() {
                let used = [5 * e + 3, 5 * ((e + 1) % n) + 4];
                let unused = [5 * e + 4, 5 * ((e + 1) % n) + 3];
                for x in [0.1, 0.4, 0.75] {
                    let (s, t) = at(x);
                    evaluate_basis_normalized(ty, 0, s, t, mode, &mut w);
                    let what = format!("{ty:?} {mode:?} edge {e} at {x}");
                    for i in unused {
                        for row in [w.point(), w.du(), w.dv()] {
                            assert!(row[i].abs() < 1e-14, "{what}: point {i} has {}", row[i]);
                        }
                    }
                    // The cross-boundary derivative does reach the others.
                    assert!(used.iter().all(|&i| w.du()[i] != 0.0 || w.dv()[i] != 0.0), "{what}");
                }
            }
        }
    }
}
