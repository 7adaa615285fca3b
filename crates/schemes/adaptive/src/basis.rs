//! Patch basis functions: the weights that turn a patch's control points into
//! a point of the limit surface and its partial derivatives.
//!
//! The conventions (point orders, boundary masks, parameter domains, the
//! handling of degenerate corners) are those of OpenSubdiv's Far
//! (`far/patchBasis.cpp`, `far/patchParam.h`), so that patch tables built
//! the way OpenSubdiv builds them evaluate the same surface.
//!
//! Quad patches are parameterised over the unit square, `s` along the first
//! edge (corner 0 to corner 1) and `t` along the last edge (corner 0 to
//! corner 3). Triangular patches use the bivariate form of the barycentric
//! coordinates: corner 0 at `(0, 0)`, corner 1 at `(1, 0)`, corner 2 at
//! `(0, 1)`.
//!
//! All evaluation writes into a caller-owned [`Weights`], so evaluating
//! millions of samples allocates nothing.

/// The most control points any patch type here has (the Gregory basis
/// patch's 20).
pub const MAX_POINTS: usize = 20;

/// The kinds of patch whose basis this module evaluates, with OpenSubdiv's
/// point orders (the names of `Far::PatchDescriptor::Type` are given with
/// each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatchType {
    /// Bilinear quad (`QUADS`): the 4 corners counter-clockwise from
    /// `(0, 0)`.
    Bilinear,
    /// Regular bicubic B-spline patch (`REGULAR`): 16 points in a 4x4 grid,
    /// row-major with `s` along rows; the patch is the middle face,
    /// points 5, 6, 10, 9.
    Regular,
    /// Gregory basis end cap (`GREGORY_BASIS`): 20 points, 5 per corner in
    /// corner order, each group being `P, Ep, Em, Fp, Fm`.
    GregoryBasis,
    /// Regular Loop patch (`LOOP`): the quartic three-direction box spline
    /// on 12 points, rows from the bottom: 0-2, 3-6, 7-9, 10-11; the patch
    /// is the triangle of points 4, 5, 8.
    Loop,
    /// Quartic triangular Gregory patch (`GREGORY_TRIANGLE`): 18 points,
    /// 5 per corner as for [`PatchType::GregoryBasis`], then the 3 quartic
    /// edge midpoints of edges 0, 1 and 2.
    GregoryTriangle,
}

impl PatchType {
    /// The number of control points of a patch of this type.
    pub const fn num_points(self) -> usize {
        match self {
            PatchType::Bilinear => 4,
            PatchType::Regular => 16,
            PatchType::GregoryBasis => 20,
            PatchType::Loop => 12,
            PatchType::GregoryTriangle => 18,
        }
    }

    /// Whether the patch is a triangle (parameterised over
    /// `s, t >= 0, s + t <= 1`) rather than a quad.
    pub const fn is_triangle(self) -> bool {
        matches!(self, PatchType::Loop | PatchType::GregoryTriangle)
    }
}

/// How many derivatives an evaluation computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DerivOrder {
    /// The point weights only.
    Point,
    /// The point and the first partial derivatives.
    First,
    /// The point, the first and the second partial derivatives.
    Second,
}

/// Which derivatives the rational Gregory patches report.
///
/// OpenSubdiv, by default, differentiates the Bezier patch whose interior
/// points are the face points blended at the evaluated `(s, t)`, holding
/// the blend fixed (`Approximate`); building it with
/// `OPENSUBDIV_GREGORY_EVAL_TRUE_DERIVATIVES` differentiates the rational
/// blend too (`Exact`, which OpenSubdiv offers for quads only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GregoryDerivatives {
    /// OpenSubdiv's default: derivatives of the Bezier patch frozen at
    /// `(s, t)`. They are the true derivatives wherever each pair of face
    /// points coincides.
    #[default]
    Approximate,
    /// The true partial derivatives of the rational patch.
    Exact,
}

/// Weights of a patch's control points for a point of the patch and,
/// depending on the [`DerivOrder`] it was made with, its first and second
/// partial derivatives.
///
/// A buffer meant for reuse: every evaluation overwrites it and sets
/// [`Weights::len`] to the patch's number of points. The derivatives are
/// with respect to the parameters of the call that filled it: `(s, t)` for
/// the normalised bases, the ptex face's `(u, v)` for [`evaluate_basis`].
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    order: DerivOrder,
    len: usize,
    // Point, d/du, d/dv, d2/du2, d2/dudv, d2/dv2.
    w: [[f64; MAX_POINTS]; 6],
}

const P: usize = 0;
const DU: usize = 1;
const DV: usize = 2;
const DUU: usize = 3;
const DUV: usize = 4;
const DVV: usize = 5;

impl Weights {
    /// An empty buffer whose evaluations compute derivatives up to `order`.
    pub fn new(order: DerivOrder) -> Self {
        Self { order, len: 0, w: [[0.0; MAX_POINTS]; 6] }
    }

    /// The derivative order evaluations into this buffer compute.
    pub fn order(&self) -> DerivOrder {
        self.order
    }

    /// Changes the derivative order of later evaluations.
    pub fn set_order(&mut self, order: DerivOrder) {
        self.order = order;
    }

    /// The number of control points of the last evaluation (0 before any).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been evaluated into this buffer yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The weights of the point.
    pub fn point(&self) -> &[f64] {
        &self.w[P][..self.len]
    }

    /// The weights of the derivative along the first parameter; empty when
    /// the order is [`DerivOrder::Point`].
    pub fn du(&self) -> &[f64] {
        self.slice(DU, DerivOrder::First)
    }

    /// The weights of the derivative along the second parameter; empty when
    /// the order is [`DerivOrder::Point`].
    pub fn dv(&self) -> &[f64] {
        self.slice(DV, DerivOrder::First)
    }

    /// The weights of the second derivative along the first parameter;
    /// empty unless the order is [`DerivOrder::Second`].
    pub fn duu(&self) -> &[f64] {
        self.slice(DUU, DerivOrder::Second)
    }

    /// The weights of the mixed second derivative; empty unless the order
    /// is [`DerivOrder::Second`].
    pub fn duv(&self) -> &[f64] {
        self.slice(DUV, DerivOrder::Second)
    }

    /// The weights of the second derivative along the second parameter;
    /// empty unless the order is [`DerivOrder::Second`].
    pub fn dvv(&self) -> &[f64] {
        self.slice(DVV, DerivOrder::Second)
    }

    fn slice(&self, which: usize, needs: DerivOrder) -> &[f64] {
        if self.order >= needs { &self.w[which][..self.len] } else { &[] }
    }

    /// How many of the six weight rows the current order fills.
    fn rows(&self) -> usize {
        match self.order {
            DerivOrder::Point => 1,
            DerivOrder::First => 3,
            DerivOrder::Second => 6,
        }
    }

    fn start(&mut self, len: usize) {
        self.len = len;
    }

    fn store(&mut self, i: usize, j: Jet) {
        let vals = [j.v, j.s, j.t, j.ss, j.st, j.tt];
        for (r, &x) in vals.iter().enumerate().take(self.rows()) {
            self.w[r][i] = x;
        }
    }

    /// Multiplies the first derivatives by `d1` and the second by `d2` (a
    /// change of parameters, as [`evaluate_basis`] applies).
    pub fn scale_derivatives(&mut self, d1: f64, d2: f64) {
        let n = self.len;
        let rows = self.rows();
        for r in [DU, DV].into_iter().filter(|&r| r < rows) {
            for x in &mut self.w[r][..n] {
                *x *= d1;
            }
        }
        for r in [DUU, DUV, DVV].into_iter().filter(|&r| r < rows) {
            for x in &mut self.w[r][..n] {
                *x *= d2;
            }
        }
    }
}

/// A function's value with its first and second partial derivatives in
/// `(s, t)`: enough calculus to apply the product rule once.
#[derive(Clone, Copy, Debug, Default)]
struct Jet {
    v: f64,
    s: f64,
    t: f64,
    ss: f64,
    st: f64,
    tt: f64,
}

impl Jet {
    fn constant(v: f64) -> Self {
        Jet { v, ..Jet::default() }
    }

    fn mul(self, o: Jet) -> Jet {
        Jet {
            v: self.v * o.v,
            s: self.s * o.v + self.v * o.s,
            t: self.t * o.v + self.v * o.t,
            ss: self.ss * o.v + 2.0 * self.s * o.s + self.v * o.ss,
            st: self.st * o.v + self.s * o.t + self.t * o.s + self.v * o.st,
            tt: self.tt * o.v + 2.0 * self.t * o.t + self.v * o.tt,
        }
    }

    /// `1 - self`.
    fn complement(self) -> Jet {
        Jet { v: 1.0 - self.v, s: -self.s, t: -self.t, ss: -self.ss, st: -self.st, tt: -self.tt }
    }

    /// The jet of `n(s, t) / d(s, t)` for affine `n` and `d`, given
    /// `inv = 1 / d` and the constant gradients of both.
    fn ratio(n: f64, n_st: (f64, f64), inv: f64, d_st: (f64, f64)) -> Jet {
        let v = n * inv;
        // From n = v d and d'' = n'' = 0.
        let s = (n_st.0 - d_st.0 * v) * inv;
        let t = (n_st.1 - d_st.1 * v) * inv;
        Jet { v, s, t, ss: -2.0 * d_st.0 * s * inv, st: -(d_st.0 * t + d_st.1 * s) * inv, tt: -2.0 * d_st.1 * t * inv }
    }

    fn value_only(self) -> Jet {
        Jet::constant(self.v)
    }
}

/// A cubic curve basis and its first two derivatives at one parameter.
#[derive(Clone, Copy, Debug)]
struct Curve {
    v: [f64; 4],
    d: [f64; 4],
    dd: [f64; 4],
}

impl Curve {
    /// The uniform cubic B-spline basis on the segment between its second
    /// and third points.
    #[inline]
    fn bspline(t: f64) -> Curve {
        let c = 1.0 - t;
        let t2 = t * t;
        let t3 = t2 * t;
        Curve {
            v: [
                c * c * c / 6.0,
                (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0,
                (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0,
                t3 / 6.0,
            ],
            d: [-0.5 * c * c, 1.5 * t2 - 2.0 * t, -1.5 * t2 + t + 0.5, 0.5 * t2],
            dd: [c, 3.0 * t - 2.0, 1.0 - 3.0 * t, t],
        }
    }

    /// The cubic Bernstein basis.
    fn bezier(t: f64) -> Curve {
        let c = 1.0 - t;
        Curve {
            v: [c * c * c, 3.0 * t * c * c, 3.0 * t * t * c, t * t * t],
            d: [-3.0 * c * c, 3.0 * c * (1.0 - 3.0 * t), 3.0 * t * (2.0 - 3.0 * t), 3.0 * t * t],
            dd: [6.0 * c, 18.0 * t - 12.0, 6.0 - 18.0 * t, 6.0 * t],
        }
    }

    /// Replaces the end point `phantom` by its linear extrapolation
    /// `2 * near - far` from the two points next to it, moving its weight
    /// onto them.
    #[inline]
    fn fold(&mut self, phantom: usize, near: usize, far: usize) {
        for w in [&mut self.v, &mut self.d, &mut self.dd] {
            let x = w[phantom];
            w[near] += 2.0 * x;
            w[far] -= x;
            w[phantom] = 0.0;
        }
    }

    /// The jet of the tensor product of `self` (along `s`, index `col`) and
    /// `t` (along `t`, index `row`).
    fn tensor(&self, col: usize, t: &Curve, row: usize) -> Jet {
        Jet {
            v: self.v[col] * t.v[row],
            s: self.d[col] * t.v[row],
            t: self.v[col] * t.d[row],
            ss: self.dd[col] * t.v[row],
            st: self.d[col] * t.d[row],
            tt: self.v[col] * t.dd[row],
        }
    }
}

/// Bilinear quad weights at `(s, t)`, as OpenSubdiv's
/// `Far::internal::EvalBasisLinear`.
pub fn bilinear_weights(s: f64, t: f64, w: &mut Weights) {
    let lin = |x: f64| Curve { v: [1.0 - x, x, 0.0, 0.0], d: [-1.0, 1.0, 0.0, 0.0], dd: [0.0; 4] };
    let (cs, ct) = (lin(s), lin(t));
    w.start(4);
    for (i, (col, row)) in [(0, 0), (1, 0), (1, 1), (0, 1)].into_iter().enumerate() {
        w.store(i, cs.tensor(col, &ct, row));
    }
}

/// Regular bicubic B-spline weights at `(s, t)`, as OpenSubdiv's
/// `Far::internal::EvalBasisBSpline`, with the boundary handling of its
/// `boundBasisBSpline`.
///
/// Bit `i` of `boundary` marks edge `i` of the patch (edge 0 from corner 0
/// to corner 1, i.e. `t = 0`; then `s = 1`, `t = 1`, `s = 0`) as a boundary:
/// the row or column of points beyond it is absent, taken to be the linear
/// extrapolation `2 * near - far` of the two rows or columns inside, and its
/// weights are zero. Where two boundary edges meet, the corner point is
/// extrapolated in both directions, as OpenSubdiv does by folding rows and
/// then columns.
#[track_caller]
pub fn bspline_weights(s: f64, t: f64, boundary: u8, w: &mut Weights) {
    assert!(boundary < 16, "a quad patch has 4 edges: boundary mask {boundary:#b} has more bits");
    let (cs, ct) = bspline_folded(s, t, boundary);
    w.start(16);
    for row in 0..4 {
        for col in 0..4 {
            w.store(4 * row + col, cs.tensor(col, &ct, row));
        }
    }
}

/// The B-spline curves along `s` and `t` with the boundary edges of
/// `boundary` folded in.
#[inline]
fn bspline_folded(s: f64, t: f64, boundary: u8) -> (Curve, Curve) {
    let mut cs = Curve::bspline(s);
    let mut ct = Curve::bspline(t);
    // Folding a row only mixes the t-curve and folding a column only the
    // s-curve, so the 2-D folds of OpenSubdiv factor into 1-D ones (equal
    // up to rounding).
    if boundary & 1 != 0 {
        ct.fold(0, 1, 2);
    }
    if boundary & 2 != 0 {
        cs.fold(3, 2, 1);
    }
    if boundary & 4 != 0 {
        ct.fold(3, 2, 1);
    }
    if boundary & 8 != 0 {
        cs.fold(0, 1, 2);
    }
    (cs, ct)
}

/// Bicubic Bezier weights (row-major 4x4, `s` along rows), as OpenSubdiv's
/// `Far::internal::EvalBasisBezier`.
pub fn bezier_weights(s: f64, t: f64, w: &mut Weights) {
    let (cs, ct) = (Curve::bezier(s), Curve::bezier(t));
    w.start(16);
    for row in 0..4 {
        for col in 0..4 {
            w.store(4 * row + col, cs.tensor(col, &ct, row));
        }
    }
}

/// For each Gregory basis point, the Bezier point (column along `s`, row
/// along `t`) it stands for.
pub(crate) const GREGORY_QUAD_BEZIER: [(usize, usize); 20] = [
    (0, 0),
    (1, 0),
    (0, 1),
    (1, 1),
    (1, 1),
    (3, 0),
    (3, 1),
    (2, 0),
    (2, 1),
    (2, 1),
    (3, 3),
    (2, 3),
    (3, 2),
    (2, 2),
    (2, 2),
    (0, 3),
    (0, 2),
    (1, 3),
    (1, 2),
    (1, 2),
];

/// Cubic Gregory basis patch weights at `(s, t)`, as OpenSubdiv's
/// `Far::internal::EvalBasisGregory`.
///
/// The 4 interior Bezier points are blends of the pairs of face points of
/// each corner: `Fp` weighted by `s / (s + t)` at corner 0,
/// `t / (1 - s + t)` at corner 1, `(1 - s) / (2 - s - t)` at corner 2 and
/// `(1 - t) / (1 + s - t)` at corner 3, `Fm` by the complement. At a
/// corner, where its blend is 0/0, the denominator is taken as 1 as
/// OpenSubdiv does, which gives all of that corner's interior weight to its
/// `Fm`.
pub fn gregory_basis_weights(s: f64, t: f64, derivs: GregoryDerivatives, w: &mut Weights) {
    let (bs, bt) = (Curve::bezier(s), Curve::bezier(t));
    let sc = 1.0 - s;
    let tc = 1.0 - t;
    // Numerator, its gradient, denominator and its gradient per corner.
    let blends = [
        (s, (1.0, 0.0), s + t, (1.0, 1.0)),
        (t, (0.0, 1.0), sc + t, (-1.0, 1.0)),
        (sc, (-1.0, 0.0), sc + tc, (-1.0, -1.0)),
        (tc, (0.0, -1.0), s + tc, (1.0, -1.0)),
    ];
    let mut g = [Jet::default(); 4];
    for (gi, &(n, n_st, d, d_st)) in g.iter_mut().zip(&blends) {
        let inv = if d <= 0.0 { 1.0 } else { 1.0 / d };
        let jet = Jet::ratio(n, n_st, inv, d_st);
        *gi = match derivs {
            GregoryDerivatives::Approximate => jet.value_only(),
            GregoryDerivatives::Exact => jet,
        };
    }
    w.start(20);
    for (i, &(col, row)) in GREGORY_QUAD_BEZIER.iter().enumerate() {
        let b = bs.tensor(col, &bt, row);
        let jet = match i % 5 {
            3 => b.mul(g[i / 5]),
            4 => b.mul(g[i / 5].complement()),
            _ => b,
        };
        w.store(i, jet);
    }
}

/// Exponents `(a, b)` of the monomials `s^a t^b` up to degree 4, in the
/// order OpenSubdiv lists them for the box spline.
pub(crate) const QUARTIC_MONOMIALS: [(usize, usize); 15] = [
    (0, 0),
    (1, 0),
    (0, 1),
    (2, 0),
    (1, 1),
    (0, 2),
    (3, 0),
    (2, 1),
    (1, 2),
    (0, 3),
    (4, 0),
    (3, 1),
    (2, 2),
    (1, 3),
    (0, 4),
];

/// Twelve times the coefficients of the box spline basis functions in the
/// monomials of [`QUARTIC_MONOMIALS`] (Stam's basis with `w` eliminated, as
/// tabulated in OpenSubdiv's `patchBasis.cpp`).
pub(crate) const BOX_SPLINE_COEFFS: [[i8; 15]; 12] = [
    [1, -2, -4, 0, 6, 6, 2, 0, -6, -4, -1, -2, 0, 2, 1],
    [1, 2, -2, 0, -6, 0, -4, 0, 6, 2, 2, 4, 0, -2, -1],
    [0, 0, 0, 0, 0, 0, 2, 0, 0, 0, -1, -2, 0, 0, 0],
    [1, -4, -2, 6, 6, 0, -4, -6, 0, 2, 1, 2, 0, -2, -1],
    [6, 0, 0, -12, -12, -12, 8, 12, 12, 8, -1, -2, 0, -2, -1],
    [1, 4, 2, 6, 6, 0, -4, -6, -12, -4, -1, -2, 0, 4, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0],
    [1, -2, 2, 0, -6, 0, 2, 6, 0, -4, -1, -2, 0, 4, 2],
    [1, 2, 4, 0, 6, 6, -4, -12, -6, -4, 2, 4, 0, -2, -1],
    [0, 0, 0, 0, 0, 0, 2, 6, 6, 2, -1, -2, 0, -2, -1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, -2, -1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1],
];

/// One phantom point of a boundary box spline patch, `phantom = a + b - c`.
pub(crate) type Reflection = (usize, [usize; 3]);

/// Quartic box spline weights at `(s, t)` for the regular Loop patch, as
/// OpenSubdiv's `Far::internal::EvalBasisBoxSplineTri`, with the boundary
/// handling of its `boundBasisBoxSplineTri`.
///
/// `boundary` is OpenSubdiv's 5-bit triangle boundary mask: the low 3 bits
/// name edges (edge 0 from corner 0 to corner 1, points 4-5) or vertices,
/// as the upper 2 bits say: 0 for edges only, 1 for vertices only, 2 for
/// edges with the vertex opposite each of them (3 is read as 0, as
/// OpenSubdiv does). The points beyond a boundary edge or around a boundary
/// vertex are absent and are extrapolated as reflections through the
/// points inside.
#[track_caller]
pub fn box_spline_weights(s: f64, t: f64, boundary: u8, w: &mut Weights) {
    assert!(boundary < 32, "a triangle's boundary mask has 5 bits: {boundary:#b} has more");
    let mut pw = [[1.0f64; 5]; 2];
    for k in 1..5 {
        pw[0][k] = pw[0][k - 1] * s;
        pw[1][k] = pw[1][k - 1] * t;
    }
    // d^p/dx^p of x^a is a!/(a-p)! x^(a-p).
    let falling = |a: usize, p: usize| -> f64 { ((a + 1 - p)..=a).product::<usize>() as f64 };
    let rows = w.rows();
    let orders = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)];
    w.start(12);
    for (r, &(p, q)) in orders.iter().enumerate().take(rows) {
        for (i, coeffs) in BOX_SPLINE_COEFFS.iter().enumerate() {
            let mut sum = 0.0;
            for (&c, &(a, b)) in coeffs.iter().zip(&QUARTIC_MONOMIALS) {
                if c != 0 && a >= p && b >= q {
                    sum += f64::from(c) * falling(a, p) * falling(b, q) * pw[0][a - p] * pw[1][b - q];
                }
            }
            w.w[r][i] = sum / 12.0;
        }
    }
    if boundary != 0 {
        for r in 0..rows {
            fold_box_spline_boundary(boundary, &mut w.w[r]);
        }
    }
}

/// Moves the weights of the phantom points of a boundary Loop patch onto
/// the points they are extrapolated from, as OpenSubdiv's
/// `adjustBoxSplineTriBoundaryWeights`.
fn fold_box_spline_boundary(mask: u8, w: &mut [f64; MAX_POINTS]) {
    let (reflections, n) = box_spline_reflections(mask);
    for &(p, [a, b, c]) in &reflections[..n] {
        let x = w[p];
        w[a] += x;
        w[b] += x;
        w[c] -= x;
        w[p] = 0.0;
    }
}

/// The phantom points of a boundary Loop patch (boundary mask `mask`) and
/// the points each is extrapolated from (`phantom = a + b - c`), in the
/// order [`fold_box_spline_boundary`] folds their weights (a phantom's
/// weight may land on a phantom folded later); the first `n` entries.
pub(crate) fn box_spline_reflections(mask: u8) -> ([Reflection; 15], usize) {
    let low = mask & 7;
    let (edges, verts) = match mask >> 3 {
        1 => (0, low),
        // The vertex opposite edge i is vertex i + 2 (mod 3).
        2 => (low, ((low & 1) << 2) | (low >> 1)),
        _ => (low, 0),
    };
    let edge = |i: u8| edges & (1 << i) != 0;
    let mut out = [(0, [0; 3]); 15];
    let mut n = 0;
    let mut apply = |r: Reflection| {
        out[n] = r;
        n += 1;
    };
    // Beyond a boundary edge, the end phantoms reflect through the corner
    // when the neighbouring edge is a boundary too, and otherwise continue
    // the row next to them.
    if edge(0) {
        apply((0, if edge(2) { [4, 4, 8] } else { [4, 3, 7] }));
        apply((1, [4, 5, 8]));
        apply((2, if edge(1) { [5, 5, 8] } else { [5, 6, 9] }));
    }
    if edge(1) {
        apply((6, if edge(0) { [5, 5, 4] } else { [5, 2, 1] }));
        apply((9, [5, 8, 4]));
        apply((11, if edge(2) { [8, 8, 4] } else { [8, 10, 7] }));
    }
    if edge(2) {
        apply((10, if edge(1) { [8, 8, 5] } else { [8, 11, 9] }));
        apply((7, [8, 4, 5]));
        apply((3, if edge(0) { [4, 4, 5] } else { [4, 0, 1] }));
    }
    if verts & 1 != 0 {
        apply((3, [4, 7, 8]));
        apply((0, [4, 1, 5]));
    }
    if verts & 2 != 0 {
        apply((2, [5, 1, 4]));
        apply((6, [5, 9, 8]));
    }
    if verts & 4 != 0 {
        apply((11, [8, 9, 5]));
        apply((10, [8, 7, 4]));
    }
    (out, n)
}

/// The quartic Bernstein polynomials on the triangle, in OpenSubdiv's order
/// (rows of rising `t` power, each of rising `s` power), as jets.
fn bezier_triangle_jets(s: f64, t: f64) -> [Jet; 15] {
    let bw = 1.0 - s - t;
    let mut pw = [[1.0f64; 5]; 3];
    for k in 1..5 {
        pw[0][k] = pw[0][k - 1] * s;
        pw[1][k] = pw[1][k - 1] * t;
        pw[2][k] = pw[2][k - 1] * bw;
    }
    const FACT: [f64; 5] = [1.0, 1.0, 2.0, 6.0, 24.0];
    // Bernstein polynomial of degree i + j + k, zero for negative indices.
    let bern = |i: isize, j: isize, k: isize| -> f64 {
        if i < 0 || j < 0 || k < 0 {
            return 0.0;
        }
        let (i, j, k) = (i as usize, j as usize, k as usize);
        FACT[i + j + k] / (FACT[i] * FACT[j] * FACT[k]) * pw[0][i] * pw[1][j] * pw[2][k]
    };
    let mut out = [Jet::default(); 15];
    let mut n = 0;
    for j in 0..5isize {
        for i in 0..(5 - j) {
            let k = 4 - i - j;
            // d/ds = d/du - d/dw and d/dt = d/dv - d/dw on the barycentric
            // form; each derivative lowers the degree by one.
            out[n] = Jet {
                v: bern(i, j, k),
                s: 4.0 * (bern(i - 1, j, k) - bern(i, j, k - 1)),
                t: 4.0 * (bern(i, j - 1, k) - bern(i, j, k - 1)),
                ss: 12.0 * (bern(i - 2, j, k) - 2.0 * bern(i - 1, j, k - 1) + bern(i, j, k - 2)),
                st: 12.0 * (bern(i - 1, j - 1, k) - bern(i - 1, j, k - 1) - bern(i, j - 1, k - 1) + bern(i, j, k - 2)),
                tt: 12.0 * (bern(i, j - 2, k) - 2.0 * bern(i, j - 1, k - 1) + bern(i, j, k - 2)),
            };
            n += 1;
        }
    }
    out
}

/// For each triangular Gregory point, the quartic Bezier point it stands
/// for, and for the face points which blend (and which side of the pair).
pub(crate) const GREGORY_TRI_BEZIER: [(usize, Option<usize>); 18] = [
    (0, None),
    (1, None),
    (5, None),
    (6, Some(0)),
    (6, Some(1)),
    (4, None),
    (8, None),
    (3, None),
    (7, Some(2)),
    (7, Some(3)),
    (14, None),
    (12, None),
    (13, None),
    (10, Some(4)),
    (10, Some(5)),
    (2, None),
    (11, None),
    (9, None),
];

/// Quartic triangular Gregory patch weights at `(s, t)`, as OpenSubdiv's
/// `Far::internal::EvalBasisGregoryTri`.
///
/// With barycentric `u = s`, `v = t`, `w = 1 - s - t`, the face point pairs
/// of corners 0, 1, 2 blend by `u : v`, `v : w` and `w : u`; at a corner,
/// where its blend is 0/0, the first point of the pair takes it all, as in
/// OpenSubdiv. OpenSubdiv has only [`GregoryDerivatives::Approximate`] for
/// this patch; `Exact` differentiates the blend as for the quad.
pub fn gregory_triangle_weights(s: f64, t: f64, derivs: GregoryDerivatives, w: &mut Weights) {
    let bez = bezier_triangle_jets(s, t);
    let (u, v) = (s, t);
    let bw = 1.0 - u - v;
    // Per corner: numerators of the pair with their gradients, and the
    // shared denominator with its gradient.
    let pairs = [
        (u, (1.0, 0.0), v, (0.0, 1.0), u + v, (1.0, 1.0)),
        (v, (0.0, 1.0), bw, (-1.0, -1.0), v + bw, (-1.0, 0.0)),
        (bw, (-1.0, -1.0), u, (1.0, 0.0), bw + u, (0.0, -1.0)),
    ];
    // OpenSubdiv's values where a blend is 0/0.
    let mut g = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0].map(Jet::constant);
    for (c, &(n0, g0, n1, g1, d, gd)) in pairs.iter().enumerate() {
        if d > 0.0 {
            let inv = 1.0 / d;
            let (a, b) = (Jet::ratio(n0, g0, inv, gd), Jet::ratio(n1, g1, inv, gd));
            (g[2 * c], g[2 * c + 1]) = match derivs {
                GregoryDerivatives::Approximate => (a.value_only(), b.value_only()),
                GregoryDerivatives::Exact => (a, b),
            };
        }
    }
    w.start(18);
    for (i, &(b, blend)) in GREGORY_TRI_BEZIER.iter().enumerate() {
        let jet = match blend {
            Some(k) => bez[b].mul(g[k]),
            None => bez[b],
        };
        w.store(i, jet);
    }
}

/// Evaluates the basis of a patch of type `ty` at patch-local `(s, t)`, as
/// OpenSubdiv's `Far::internal::EvaluatePatchBasisNormalized`.
///
/// `boundary` is the patch's boundary mask (the [`PatchParam::boundary`]);
/// only regular and Loop patches use it (the low 4 bits for regular ones).
pub fn evaluate_basis_normalized(
    ty: PatchType,
    boundary: u8,
    s: f64,
    t: f64,
    derivs: GregoryDerivatives,
    w: &mut Weights,
) {
    match ty {
        PatchType::Bilinear => bilinear_weights(s, t, w),
        PatchType::Regular => bspline_weights(s, t, boundary & 0xF, w),
        PatchType::GregoryBasis => gregory_basis_weights(s, t, derivs, w),
        PatchType::Loop => box_spline_weights(s, t, boundary & 0x1F, w),
        PatchType::GregoryTriangle => gregory_triangle_weights(s, t, derivs, w),
    }
}

/// Evaluates the basis of a patch at `(u, v)` in its ptex face, as
/// OpenSubdiv's `Far::PatchTable::EvaluateBasis`: maps `(u, v)` into the
/// patch with [`PatchParam::normalize`] (or
/// [`PatchParam::normalize_triangle`] for triangles), evaluates the basis
/// and scales the derivatives so that they are with respect to `u` and `v`.
///
/// The scale is [`PatchParam::param_scale`], `2^(depth - non_quad_root)`,
/// the inverse of the fraction `normalize` uses; for a rotated triangle the
/// first derivatives also change sign (the map from `(u, v)` reverses both
/// directions) while the second ones do not. This is the chain rule for the
/// map `normalize` applies. OpenSubdiv's `EvaluatePatchBasis` differs in
/// two corner cases: it scales by `2^depth` even for the sub-faces of a
/// non-quad root face, and it negates the second derivatives of rotated
/// triangles.
pub fn evaluate_basis(ty: PatchType, param: &PatchParam, u: f64, v: f64, derivs: GregoryDerivatives, w: &mut Weights) {
    let ((s, t), sign) = if ty.is_triangle() {
        let sign = if param.is_triangle_rotated() { -1.0 } else { 1.0 };
        (param.normalize_triangle(u, v), sign)
    } else {
        (param.normalize(u, v), 1.0)
    };
    evaluate_basis_normalized(ty, param.boundary(), s, t, derivs, w);
    let k = param.param_scale();
    w.scale_derivatives(sign * k, k * k);
}

/// Where a patch lies within its ptex face, and its boundary and transition
/// edges: the information of OpenSubdiv's `Far::PatchParam`.
///
/// A patch at refinement `depth` covers the square
/// `[u, u + 1] x [v, v + 1]` scaled by [`PatchParam::param_fraction`] in its
/// ptex face. A ptex face is a base quad, or for a base face of another
/// size, one of the quads its first refinement splits it into; the patches
/// of such a sub-face are marked [`PatchParam::non_quad_root`], and their
/// depth counts that first refinement too.
///
/// Triangular patches use the same encoding: at each depth a square of the
/// quad tree holds two triangles, the second one (with `u + v >= 2^depth`)
/// parameterised from the opposite corner, rotated by 180 degrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PatchParam {
    face_id: u32,
    u: u16,
    v: u16,
    depth: u8,
    non_quad_root: bool,
    boundary: u8,
    transition: u8,
    regular: bool,
}

impl PatchParam {
    /// The largest face id the packed form holds (28 bits).
    pub const MAX_FACE_ID: u32 = (1 << 28) - 1;
    /// The largest depth the packed form holds (4 bits).
    pub const MAX_DEPTH: u8 = 15;

    /// A patch of ptex face `face_id` at refinement `depth`, whose first
    /// corner lies at `(u, v)` times the param fraction, with no boundary
    /// or transition edges and not marked regular.
    ///
    /// Panics unless `face_id <= MAX_FACE_ID`, `depth <= MAX_DEPTH`, a
    /// non-quad root's depth is at least 1, and `u` and `v` lie in
    /// `0..2^(depth - non_quad_root)` and fit 10 bits.
    #[track_caller]
    pub fn new(face_id: u32, depth: u8, u: u16, v: u16, non_quad_root: bool) -> Self {
        assert!(face_id <= Self::MAX_FACE_ID, "face id {face_id} does not fit the 28 bits of a patch param");
        assert!(depth <= Self::MAX_DEPTH, "depth {depth} does not fit the 4 bits of a patch param");
        assert!(!non_quad_root || depth >= 1, "the patches of a non-quad root face are at depth 1 or more");
        let cells = 1u32 << (depth - u8::from(non_quad_root));
        assert!(
            u32::from(u) < cells.min(1024) && u32::from(v) < cells.min(1024),
            "patch origin ({u}, {v}) is outside the {cells}x{cells} grid of its depth"
        );
        Self { face_id, u, v, depth, non_quad_root, boundary: 0, transition: 0, regular: false }
    }

    /// This patch with boundary mask `mask` (4 bits for quads, OpenSubdiv's
    /// 5-bit encoding for triangles; see [`bspline_weights`] and
    /// [`box_spline_weights`]).
    #[track_caller]
    pub fn with_boundary(mut self, mask: u8) -> Self {
        assert!(mask < 32, "boundary mask {mask:#b} has more than 5 bits");
        self.boundary = mask;
        self
    }

    /// This patch with transition mask `mask`: bit `i` marks edge `i` as
    /// adjacent to patches one level deeper.
    #[track_caller]
    pub fn with_transition(mut self, mask: u8) -> Self {
        assert!(mask < 16, "transition mask {mask:#b} has more than 4 bits");
        self.transition = mask;
        self
    }

    /// This patch marked regular or not.
    pub fn with_regular(mut self, regular: bool) -> Self {
        self.regular = regular;
        self
    }

    /// The ptex face this patch lies in.
    pub fn face_id(&self) -> u32 {
        self.face_id
    }

    /// The `u` index of the patch's first corner in units of the param
    /// fraction.
    pub fn u(&self) -> u16 {
        self.u
    }

    /// The `v` index of the patch's first corner in units of the param
    /// fraction.
    pub fn v(&self) -> u16 {
        self.v
    }

    /// The refinement depth of the patch.
    pub fn depth(&self) -> u8 {
        self.depth
    }

    /// Whether the patch's base face is not a quad, so that its ptex face
    /// is a sub-face of the first refinement.
    pub fn non_quad_root(&self) -> bool {
        self.non_quad_root
    }

    /// The boundary mask.
    pub fn boundary(&self) -> u8 {
        self.boundary
    }

    /// The transition mask.
    pub fn transition(&self) -> u8 {
        self.transition
    }

    /// Whether the patch is marked regular.
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// The side of the patch in its ptex face's parameters,
    /// `2^-(depth - non_quad_root)`, as OpenSubdiv's
    /// `PatchParam::GetParamFraction`.
    pub fn param_fraction(&self) -> f64 {
        1.0 / self.param_scale()
    }

    /// The inverse of [`PatchParam::param_fraction`]: how much faster the
    /// patch's `(s, t)` run than the ptex face's `(u, v)`.
    pub fn param_scale(&self) -> f64 {
        f64::from(1u32 << (self.depth - u8::from(self.non_quad_root)))
    }

    /// Maps `(u, v)` in the ptex face to `(s, t)` in the patch, as
    /// OpenSubdiv's `PatchParam::Normalize`.
    pub fn normalize(&self, u: f64, v: f64) -> (f64, f64) {
        let k = self.param_scale();
        (u * k - f64::from(self.u), v * k - f64::from(self.v))
    }

    /// Maps `(s, t)` in the patch to `(u, v)` in the ptex face, as
    /// OpenSubdiv's `PatchParam::Unnormalize`.
    pub fn unnormalize(&self, s: f64, t: f64) -> (f64, f64) {
        let f = self.param_fraction();
        ((s + f64::from(self.u)) * f, (t + f64::from(self.v)) * f)
    }

    /// Whether this triangular patch is the second, rotated triangle of its
    /// square, as OpenSubdiv's `PatchParam::IsTriangleRotated`.
    pub fn is_triangle_rotated(&self) -> bool {
        u32::from(self.u) + u32::from(self.v) >= 1u32 << self.depth
    }

    /// [`PatchParam::normalize`] for triangular patches, as OpenSubdiv's
    /// `PatchParam::NormalizeTriangle`: a rotated triangle is parameterised
    /// from the far corner of its square.
    pub fn normalize_triangle(&self, u: f64, v: f64) -> (f64, f64) {
        if self.is_triangle_rotated() {
            let k = self.param_scale();
            let n = f64::from(1u32 << self.depth);
            ((n - f64::from(self.u)) - u * k, (n - f64::from(self.v)) - v * k)
        } else {
            self.normalize(u, v)
        }
    }

    /// The inverse of [`PatchParam::normalize_triangle`], as OpenSubdiv's
    /// `PatchParam::UnnormalizeTriangle`.
    pub fn unnormalize_triangle(&self, s: f64, t: f64) -> (f64, f64) {
        if self.is_triangle_rotated() {
            let f = self.param_fraction();
            let n = f64::from(1u32 << self.depth);
            (((n - f64::from(self.u)) - s) * f, ((n - f64::from(self.v)) - t) * f)
        } else {
            self.unnormalize(s, t)
        }
    }

    /// The two 32-bit words OpenSubdiv packs a `PatchParam` into
    /// (`field0`, `field1`).
    pub fn to_bits(&self) -> [u32; 2] {
        let field0 = self.face_id | (u32::from(self.transition) << 28);
        let field1 = (u32::from(self.u) << 22)
            | (u32::from(self.v) << 12)
            | (u32::from(self.boundary) << 7)
            | (u32::from(self.regular) << 5)
            | (u32::from(self.non_quad_root) << 4)
            | u32::from(self.depth);
        [field0, field1]
    }

    /// Unpacks OpenSubdiv's two words; `None` where they break the
    /// invariants of [`PatchParam::new`].
    pub fn from_bits(bits: [u32; 2]) -> Option<Self> {
        let field = |word: u32, width: u32, offset: u32| (word >> offset) & ((1 << width) - 1);
        let depth = field(bits[1], 4, 0) as u8;
        let non_quad_root = field(bits[1], 1, 4) != 0;
        let u = field(bits[1], 10, 22) as u16;
        let v = field(bits[1], 10, 12) as u16;
        if non_quad_root && depth == 0 {
            return None;
        }
        let cells = 1u32 << (depth - u8::from(non_quad_root));
        if u32::from(u) >= cells || u32::from(v) >= cells {
            return None;
        }
        Some(
            Self::new(field(bits[0], 28, 0), depth, u, v, non_quad_root)
                .with_transition(field(bits[0], 4, 28) as u8)
                .with_boundary(field(bits[1], 5, 7) as u8)
                .with_regular(field(bits[1], 1, 5) != 0),
        )
    }
}
