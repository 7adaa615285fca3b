// The limit surface of a Catmull-Clark patch table at many samples:
// position, d/du and d/dv of every channel, from the table's points (the
// points computed per frame by the SpMV with the table's point matrix).
//
// Per sample (sorted on the host: B-spline patches, then Gregory basis
// patches, then samples no patch covers; by patch within each group) one
// invocation:
//   1. reads its sample (patch, u, v, output row): one 16-byte load;
//   2. reads its patch's record: the offset of its point indices and
//      OpenSubdiv's second PatchParam word (depth, non-quad root, boundary
//      mask, u/v origin; bit 6, unused there, set for Gregory patches);
//   3. normalises (u, v) to the patch's (s, t) as PatchParam::Normalize
//      (scale 2^(depth - non_quad_root)), evaluates the basis weights and
//      accumulates, for each group of four channels, weight * point over
//      the patch's 16 or 20 points, reading every point once per group;
//   4. scales the derivatives by 2^depth (OpenSubdiv's
//      PatchTable::EvaluateBasis, also for sub-faces of non-quad faces) and
//      writes its output row of each array once (d consecutive floats:
//      neighbouring invocations write neighbouring rows).
// One entry point per patch type, so that the bicubic B-spline path does
// not carry the Gregory path's registers; each dispatch covers one range
// of the sorted samples.
//
// Summation order is fixed (points in the patch's order, from +0), and
// every output element is written by exactly one invocation: no atomics,
// bitwise identical results on every run.

const WG: u32 = 256u;

struct Params {
    // First sorted sample of this dispatch.
    first: u32,
    // Samples of this dispatch.
    count: u32,
    // Channels d of the points and the outputs.
    channels: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// (patch, bits of u as f32, bits of v as f32, output row), sorted.
@group(0) @binding(1) var<storage, read> samples: array<vec4<u32>>;
// (offset of the patch's point indices, PatchParam word 1 | type bit).
@group(0) @binding(2) var<storage, read> patches: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> patch_points: array<vec4<u32>>;
// The table's points, num_points x d, row-major.
@group(0) @binding(4) var<storage, read> points: array<f32>;
@group(0) @binding(5) var<storage, read_write> position: array<f32>;
@group(0) @binding(6) var<storage, read_write> deriv_u: array<f32>;
@group(0) @binding(7) var<storage, read_write> deriv_v: array<f32>;
// Per point, its anchor: itself for an absolute point (every point of the
// composed matrix, every control point), else the control point the
// point's row holds the difference from (the refinement paths).
@group(0) @binding(8) var<storage, read> anchors: array<u32>;

// A cubic curve basis: values and first derivatives of its 4 functions.
struct Curve {
    v: vec4<f32>,
    d: vec4<f32>,
}

// The uniform cubic B-spline basis on the segment between its second and
// third points (OpenSubdiv's evalBSplineCurve).
fn bspline_curve(t: f32) -> Curve {
    let c = 1.0 - t;
    let t2 = t * t;
    let t3 = t2 * t;
    var r: Curve;
    r.v = vec4<f32>(
        c * c * c / 6.0,
        (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0,
        (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0,
        t3 / 6.0,
    );
    r.d = vec4<f32>(-0.5 * c * c, 1.5 * t2 - 2.0 * t, -1.5 * t2 + t + 0.5, 0.5 * t2);
    return r;
}

// The first point is absent beyond a boundary: it stands for the linear
// extrapolation 2 p1 - p2, so its weight moves onto those two.
fn fold_low(c: Curve) -> Curve {
    var r = c;
    r.v.y += 2.0 * c.v.x;
    r.v.z -= c.v.x;
    r.v.x = 0.0;
    r.d.y += 2.0 * c.d.x;
    r.d.z -= c.d.x;
    r.d.x = 0.0;
    return r;
}

// The same for the last point: 2 p2 - p1.
fn fold_high(c: Curve) -> Curve {
    var r = c;
    r.v.z += 2.0 * c.v.w;
    r.v.y -= c.v.w;
    r.v.w = 0.0;
    r.d.z += 2.0 * c.d.w;
    r.d.y -= c.d.w;
    r.d.w = 0.0;
    return r;
}

// The cubic Bernstein basis (OpenSubdiv's evalBezierCurve).
fn bezier_curve(t: f32) -> Curve {
    let c = 1.0 - t;
    var r: Curve;
    r.v = vec4<f32>(c * c * c, 3.0 * t * c * c, 3.0 * t * t * c, t * t * t);
    r.d = vec4<f32>(-3.0 * c * c, 3.0 * c * (1.0 - 3.0 * t), 3.0 * t * (2.0 - 3.0 * t), 3.0 * t * t);
    return r;
}

// Channels c0 .. c0 + 3 of point p (zeros past the last channel).
fn load_point(p: u32, c0: u32) -> vec4<f32> {
    let d = params.channels;
    let base = p * d + c0;
    var x = vec4<f32>(0.0);
    x.x = points[base];
    if (c0 + 1u < d) { x.y = points[base + 1u]; }
    if (c0 + 2u < d) { x.z = points[base + 2u]; }
    if (c0 + 3u < d) { x.w = points[base + 3u]; }
    return x;
}

// A point as (its anchor's control point, its difference from it).
struct Anchored {
    a: vec4<f32>,
    d: vec4<f32>,
}

fn load_anchored(p: u32, c0: u32) -> Anchored {
    let q = anchors[p];
    var r: Anchored;
    r.a = load_point(q, c0);
    r.d = vec4<f32>(0.0);
    if (q != p) {
        r.d = load_point(p, c0);
    }
    return r;
}

// Point p minus the reference point x0: the anchors' difference (exact or
// nearly, for nearby control points) plus the differences' difference.
fn minus(p: u32, x0: Anchored, c0: u32) -> vec4<f32> {
    let x = load_anchored(p, c0);
    return (x.a - x0.a) + (x.d - x0.d);
}

// Writes channels c0 .. c0 + 3 (those that exist) of output row `row`,
// each component by name (no vector indexed at run time).
fn store(row: u32, c0: u32, p: vec4<f32>, du: vec4<f32>, dv: vec4<f32>) {
    let d = params.channels;
    let base = row * d + c0;
    position[base] = p.x;
    deriv_u[base] = du.x;
    deriv_v[base] = dv.x;
    if (c0 + 1u < d) {
        position[base + 1u] = p.y;
        deriv_u[base + 1u] = du.y;
        deriv_v[base + 1u] = dv.y;
    }
    if (c0 + 2u < d) {
        position[base + 2u] = p.z;
        deriv_u[base + 2u] = du.z;
        deriv_v[base + 2u] = dv.z;
    }
    if (c0 + 3u < d) {
        position[base + 3u] = p.w;
        deriv_u[base + 3u] = du.w;
        deriv_v[base + 3u] = dv.w;
    }
}

// The three sums of a patch (position, d/ds, d/dt), accumulated point by
// point.
struct Sums {
    p: vec4<f32>,
    du: vec4<f32>,
    dv: vec4<f32>,
}

// Adds row `ids` of a bicubic B-spline patch to `sums`: its four points'
// differences from x0, in column order, weighted by the s curve `cs` and
// the row's t weight `tv` (derivative `td`). Written term by term: the
// loop over an array of the row's points that this replaces kept them in
// memory indexed at run time, which is slow on some drivers.
fn bspline_row(sums: ptr<function, Sums>, ids: vec4<u32>, x0: Anchored, c0: u32, cs: Curve, tv: f32, td: f32) {
    let a = minus(ids.x, x0, c0);
    let b = minus(ids.y, x0, c0);
    let c = minus(ids.z, x0, c0);
    let e = minus(ids.w, x0, c0);
    (*sums).p += (cs.v.x * tv) * a;
    (*sums).du += (cs.d.x * tv) * a;
    (*sums).dv += (cs.v.x * td) * a;
    (*sums).p += (cs.v.y * tv) * b;
    (*sums).du += (cs.d.y * tv) * b;
    (*sums).dv += (cs.v.y * td) * b;
    (*sums).p += (cs.v.z * tv) * c;
    (*sums).du += (cs.d.z * tv) * c;
    (*sums).dv += (cs.v.z * td) * c;
    (*sums).p += (cs.v.w * tv) * e;
    (*sums).du += (cs.d.w * tv) * e;
    (*sums).dv += (cs.v.w * td) * e;
}

// The sample of this invocation, or false for a surplus invocation.
fn sample_index(wg: vec3<u32>, nwg: vec3<u32>, lid: u32, out: ptr<function, u32>) -> bool {
    let i = (wg.y * nwg.x + wg.x) * WG + lid;
    *out = params.first + i;
    return i < params.count;
}

// A sample's patch record, the patch-local (s, t), and the scale of the
// derivatives.
struct Located {
    first_point: u32,
    boundary: u32,
    st: vec2<f32>,
    deriv_scale: f32,
    row: u32,
}

fn locate(s: vec4<u32>) -> Located {
    let rec = patches[s.x];
    let bits = rec.y;
    let depth = bits & 15u;
    let non_quad = (bits >> 4u) & 1u;
    let pv = f32((bits >> 12u) & 1023u);
    let pu = f32(bits >> 22u);
    let k = f32(1u << (depth - non_quad));
    var r: Located;
    r.first_point = rec.x;
    r.boundary = (bits >> 7u) & 31u;
    r.st = vec2<f32>(bitcast<f32>(s.y) * k - pu, bitcast<f32>(s.z) * k - pv);
    r.deriv_scale = f32(1u << depth);
    r.row = s.w;
    return r;
}

// `locate` for a triangular patch (OpenSubdiv's NormalizeTriangle): the
// second triangle of a square (u + v >= 2^depth) is parameterised from the
// square's far corner, so its derivatives change sign.
fn locate_tri(s: vec4<u32>) -> Located {
    var r = locate(s);
    let bits = patches[s.x].y;
    let depth = bits & 15u;
    let pu = bits >> 22u;
    let pv = (bits >> 12u) & 1023u;
    let n = 1u << depth;
    if (pu + pv >= n) {
        let k = f32(n);
        r.st = vec2<f32>(f32(n - pu) - bitcast<f32>(s.y) * k, f32(n - pv) - bitcast<f32>(s.z) * k);
        r.deriv_scale = -r.deriv_scale;
    }
    return r;
}

// Regular patches (and B-spline end caps): the bicubic B-spline of 16
// points, row-major with s along rows, with OpenSubdiv's boundary folds
// (boundBasisBSpline: edge 0 is t = 0, then s = 1, t = 1, s = 0).
@compute @workgroup_size(256)
fn limit_bspline(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    var i: u32;
    if (!sample_index(wg, nwg, lid, &i)) {
        return;
    }
    let at = locate(samples[i]);
    var cs = bspline_curve(at.st.x);
    var ct = bspline_curve(at.st.y);
    if ((at.boundary & 1u) != 0u) { ct = fold_low(ct); }
    if ((at.boundary & 2u) != 0u) { cs = fold_high(cs); }
    if ((at.boundary & 4u) != 0u) { ct = fold_high(ct); }
    if ((at.boundary & 8u) != 0u) { cs = fold_low(cs); }
    for (var c0 = 0u; c0 < params.channels; c0 += 4u) {
        // Sums of differences from the face's first corner (point 5): the
        // weights sum to 1 and the derivative weights to 0, so this is the
        // same surface, without the cancellation of large coordinates in
        // f32 derivatives.
        let base = at.first_point / 4u;
        let x0 = load_anchored(patch_points[base + 1u].y, c0);
        // Row by row, each row's points in column order.
        var sums = Sums(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        bspline_row(&sums, patch_points[base], x0, c0, cs, ct.v.x, ct.d.x);
        bspline_row(&sums, patch_points[base + 1u], x0, c0, cs, ct.v.y, ct.d.y);
        bspline_row(&sums, patch_points[base + 2u], x0, c0, cs, ct.v.z, ct.d.z);
        bspline_row(&sums, patch_points[base + 3u], x0, c0, cs, ct.v.w, ct.d.w);
        store(at.row, c0, (x0.a + x0.d) + sums.p, sums.du * at.deriv_scale, sums.dv * at.deriv_scale);
    }
}

// The Bezier point (column along s, row along t) each Gregory basis point
// stands for: per corner P, Ep, Em, Fp, Fm (OpenSubdiv's EvalBasisGregory).
const GREGORY_CELL = array<vec2<u32>, 20>(
    vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), vec2<u32>(0u, 1u), vec2<u32>(1u, 1u), vec2<u32>(1u, 1u),
    vec2<u32>(3u, 0u), vec2<u32>(3u, 1u), vec2<u32>(2u, 0u), vec2<u32>(2u, 1u), vec2<u32>(2u, 1u),
    vec2<u32>(3u, 3u), vec2<u32>(2u, 3u), vec2<u32>(3u, 2u), vec2<u32>(2u, 2u), vec2<u32>(2u, 2u),
    vec2<u32>(0u, 3u), vec2<u32>(0u, 2u), vec2<u32>(1u, 3u), vec2<u32>(1u, 2u), vec2<u32>(1u, 2u),
);

// n / d, with d taken as 1 where it is not positive (at the corner where
// the blend is 0 / 0), as OpenSubdiv does.
fn blend(n: f32, d: f32) -> f32 {
    var inv = 1.0;
    if (d > 0.0) {
        inv = 1.0 / d;
    }
    return n * inv;
}

// Adds one Gregory basis point `p` to `sums`: its difference from x0
// weighted by its Bezier cell's s weight `sv` (derivative `sd`), t weight
// `tv` (`td`) and blend `f`.
fn gregory_term(sums: ptr<function, Sums>, p: u32, x0: Anchored, c0: u32, sv: f32, sd: f32, tv: f32, td: f32, f: f32) {
    let x = minus(p, x0, c0);
    (*sums).p += (sv * tv * f) * x;
    (*sums).du += (sd * tv * f) * x;
    (*sums).dv += (sv * td * f) * x;
}

// Gregory basis end caps: 20 points, the bicubic Bezier patch whose four
// interior points blend each corner's pair of face points (Fp by the
// corner's rational weight, Fm by its complement), differentiated with the
// blend held fixed (OpenSubdiv's default "approximate" derivatives).
@compute @workgroup_size(256)
fn limit_gregory(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    var i: u32;
    if (!sample_index(wg, nwg, lid, &i)) {
        return;
    }
    let at = locate(samples[i]);
    let s = at.st.x;
    let t = at.st.y;
    let bs = bezier_curve(s);
    let bt = bezier_curve(t);
    let sc = 1.0 - s;
    let tc = 1.0 - t;
    let g = vec4<f32>(blend(s, s + t), blend(t, sc + t), blend(sc, sc + tc), blend(tc, s + tc));
    for (var c0 = 0u; c0 < params.channels; c0 += 4u) {
        // Differences from corner 0's limit point, as in `limit_bspline`;
        // the 20 points in order (`GREGORY_CELL`), term by term.
        let base = at.first_point / 4u;
        let ids = array<vec4<u32>, 5>(
            patch_points[base],
            patch_points[base + 1u],
            patch_points[base + 2u],
            patch_points[base + 3u],
            patch_points[base + 4u],
        );
        let x0 = load_anchored(ids[0].x, c0);
        var sums = Sums(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        gregory_term(&sums, ids[0].x, x0, c0, bs.v.x, bs.d.x, bt.v.x, bt.d.x, 1.0);
        gregory_term(&sums, ids[0].y, x0, c0, bs.v.y, bs.d.y, bt.v.x, bt.d.x, 1.0);
        gregory_term(&sums, ids[0].z, x0, c0, bs.v.x, bs.d.x, bt.v.y, bt.d.y, 1.0);
        gregory_term(&sums, ids[0].w, x0, c0, bs.v.y, bs.d.y, bt.v.y, bt.d.y, g.x);
        gregory_term(&sums, ids[1].x, x0, c0, bs.v.y, bs.d.y, bt.v.y, bt.d.y, 1.0 - g.x);
        gregory_term(&sums, ids[1].y, x0, c0, bs.v.w, bs.d.w, bt.v.x, bt.d.x, 1.0);
        gregory_term(&sums, ids[1].z, x0, c0, bs.v.w, bs.d.w, bt.v.y, bt.d.y, 1.0);
        gregory_term(&sums, ids[1].w, x0, c0, bs.v.z, bs.d.z, bt.v.x, bt.d.x, 1.0);
        gregory_term(&sums, ids[2].x, x0, c0, bs.v.z, bs.d.z, bt.v.y, bt.d.y, g.y);
        gregory_term(&sums, ids[2].y, x0, c0, bs.v.z, bs.d.z, bt.v.y, bt.d.y, 1.0 - g.y);
        gregory_term(&sums, ids[2].z, x0, c0, bs.v.w, bs.d.w, bt.v.w, bt.d.w, 1.0);
        gregory_term(&sums, ids[2].w, x0, c0, bs.v.z, bs.d.z, bt.v.w, bt.d.w, 1.0);
        gregory_term(&sums, ids[3].x, x0, c0, bs.v.w, bs.d.w, bt.v.z, bt.d.z, 1.0);
        gregory_term(&sums, ids[3].y, x0, c0, bs.v.z, bs.d.z, bt.v.z, bt.d.z, g.z);
        gregory_term(&sums, ids[3].z, x0, c0, bs.v.z, bs.d.z, bt.v.z, bt.d.z, 1.0 - g.z);
        gregory_term(&sums, ids[3].w, x0, c0, bs.v.x, bs.d.x, bt.v.w, bt.d.w, 1.0);
        gregory_term(&sums, ids[4].x, x0, c0, bs.v.x, bs.d.x, bt.v.z, bt.d.z, 1.0);
        gregory_term(&sums, ids[4].y, x0, c0, bs.v.y, bs.d.y, bt.v.w, bt.d.w, 1.0);
        gregory_term(&sums, ids[4].z, x0, c0, bs.v.y, bs.d.y, bt.v.z, bt.d.z, g.w);
        gregory_term(&sums, ids[4].w, x0, c0, bs.v.y, bs.d.y, bt.v.z, bt.d.z, 1.0 - g.w);
        store(at.row, c0, (x0.a + x0.d) + sums.p, sums.du * at.deriv_scale, sums.dv * at.deriv_scale);
    }
}

// Loop's regular patches: the quartic box spline of 12 points (Stam's
// basis in the monomials of s and t, OpenSubdiv's evalBoxSplineTriPatch),
// coefficients over 12 for the monomials 1, s, t, s^2, st, t^2, s^3, ...,
// t^4.
const BOX_SPLINE = array<array<f32, 15>, 12>(
    array<f32, 15>(1.0, -2.0, -4.0, 0.0, 6.0, 6.0, 2.0, 0.0, -6.0, -4.0, -1.0, -2.0, 0.0, 2.0, 1.0),
    array<f32, 15>(1.0, 2.0, -2.0, 0.0, -6.0, 0.0, -4.0, 0.0, 6.0, 2.0, 2.0, 4.0, 0.0, -2.0, -1.0),
    array<f32, 15>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -1.0, -2.0, 0.0, 0.0, 0.0),
    array<f32, 15>(1.0, -4.0, -2.0, 6.0, 6.0, 0.0, -4.0, -6.0, 0.0, 2.0, 1.0, 2.0, 0.0, -2.0, -1.0),
    array<f32, 15>(6.0, 0.0, 0.0, -12.0, -12.0, -12.0, 8.0, 12.0, 12.0, 8.0, -1.0, -2.0, 0.0, -2.0, -1.0),
    array<f32, 15>(1.0, 4.0, 2.0, 6.0, 6.0, 0.0, -4.0, -6.0, -12.0, -4.0, -1.0, -2.0, 0.0, 4.0, 2.0),
    array<f32, 15>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0),
    array<f32, 15>(1.0, -2.0, 2.0, 0.0, -6.0, 0.0, 2.0, 6.0, 0.0, -4.0, -1.0, -2.0, 0.0, 4.0, 2.0),
    array<f32, 15>(1.0, 2.0, 4.0, 0.0, 6.0, 6.0, -4.0, -12.0, -6.0, -4.0, 2.0, 4.0, 0.0, -2.0, -1.0),
    array<f32, 15>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 6.0, 6.0, 2.0, -1.0, -2.0, 0.0, -2.0, -1.0),
    array<f32, 15>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -2.0, -1.0),
    array<f32, 15>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 1.0),
);
// Powers of s and of t of each monomial.
const MONO_S = array<u32, 15>(0u, 1u, 0u, 2u, 1u, 0u, 3u, 2u, 1u, 0u, 4u, 3u, 2u, 1u, 0u);
const MONO_T = array<u32, 15>(0u, 0u, 1u, 0u, 1u, 2u, 0u, 1u, 2u, 3u, 0u, 1u, 2u, 3u, 4u);

// The 12 box-spline weights at (s, t), (value, d/ds, d/dt) each, into the
// first 12 of `w` (the triangles' weight array, sized for 18 points).
fn box_spline(s: f32, t: f32, w: ptr<function, array<vec3<f32>, 18>>) {
    var ps = array<f32, 5>(1.0, s, s * s, s * s * s, s * s * s * s);
    var pt = array<f32, 5>(1.0, t, t * t, t * t * t, t * t * t * t);
    var m: array<vec3<f32>, 15>;
    for (var k = 0u; k < 15u; k++) {
        let a = MONO_S[k];
        let b = MONO_T[k];
        var ds = 0.0;
        var dt = 0.0;
        if (a > 0u) { ds = f32(a) * ps[a - 1u] * pt[b]; }
        if (b > 0u) { dt = f32(b) * ps[a] * pt[b - 1u]; }
        m[k] = vec3<f32>(ps[a] * pt[b], ds, dt);
    }
    for (var i = 0u; i < 12u; i++) {
        var acc = vec3<f32>(0.0);
        for (var k = 0u; k < 15u; k++) {
            acc += BOX_SPLINE[i][k] * m[k];
        }
        (*w)[i] = acc / 12.0;
    }
}

// Phantom point p = a + b - c: its weight moves onto a, b and c.
fn reflect(w: ptr<function, array<vec3<f32>, 18>>, p: u32, a: u32, b: u32, c: u32) {
    let x = (*w)[p];
    (*w)[a] += x;
    (*w)[b] += x;
    (*w)[c] -= x;
    (*w)[p] = vec3<f32>(0.0);
}

// OpenSubdiv's boundary reflections of a Loop patch (its 5-bit mask: the
// low 3 bits name edges or vertices as the upper 2 say; see
// subla_adaptive::basis::box_spline_weights).
fn fold_box_spline(w: ptr<function, array<vec3<f32>, 18>>, mask: u32) {
    let low = mask & 7u;
    let kind = mask >> 3u;
    var edges = low;
    var verts = 0u;
    if (kind == 1u) {
        edges = 0u;
        verts = low;
    } else if (kind == 2u) {
        // The vertex opposite edge i is vertex i + 2 (mod 3).
        verts = ((low & 1u) << 2u) | (low >> 1u);
    }
    let e0 = (edges & 1u) != 0u;
    let e1 = (edges & 2u) != 0u;
    let e2 = (edges & 4u) != 0u;
    if (e0) {
        if (e2) { reflect(w, 0u, 4u, 4u, 8u); } else { reflect(w, 0u, 4u, 3u, 7u); }
        reflect(w, 1u, 4u, 5u, 8u);
        if (e1) { reflect(w, 2u, 5u, 5u, 8u); } else { reflect(w, 2u, 5u, 6u, 9u); }
    }
    if (e1) {
        if (e0) { reflect(w, 6u, 5u, 5u, 4u); } else { reflect(w, 6u, 5u, 2u, 1u); }
        reflect(w, 9u, 5u, 8u, 4u);
        if (e2) { reflect(w, 11u, 8u, 8u, 4u); } else { reflect(w, 11u, 8u, 10u, 7u); }
    }
    if (e2) {
        if (e1) { reflect(w, 10u, 8u, 8u, 5u); } else { reflect(w, 10u, 8u, 11u, 9u); }
        reflect(w, 7u, 8u, 4u, 5u);
        if (e0) { reflect(w, 3u, 4u, 4u, 5u); } else { reflect(w, 3u, 4u, 0u, 1u); }
    }
    if ((verts & 1u) != 0u) {
        reflect(w, 3u, 4u, 7u, 8u);
        reflect(w, 0u, 4u, 1u, 5u);
    }
    if ((verts & 2u) != 0u) {
        reflect(w, 2u, 5u, 1u, 4u);
        reflect(w, 6u, 5u, 9u, 8u);
    }
    if ((verts & 4u) != 0u) {
        reflect(w, 11u, 8u, 9u, 5u);
        reflect(w, 10u, 8u, 7u, 4u);
    }
}

// Sums weight * point over a triangular patch's `n` points (value, d/ds,
// d/dt weights per point), as differences from point `reference`, and
// writes the sample's rows.
fn sum_triangle(at: Located, w: ptr<function, array<vec3<f32>, 18>>, n: u32, reference: u32) {
    let base = at.first_point / 4u;
    for (var c0 = 0u; c0 < params.channels; c0 += 4u) {
        let x0 = load_anchored(patch_points[base + reference / 4u][reference % 4u], c0);
        var p = vec4<f32>(0.0);
        var du = vec4<f32>(0.0);
        var dv = vec4<f32>(0.0);
        for (var k = 0u; k < n; k++) {
            let x = minus(patch_points[base + k / 4u][k % 4u], x0, c0);
            let wk = (*w)[k];
            p += wk.x * x;
            du += wk.y * x;
            dv += wk.z * x;
        }
        store(at.row, c0, (x0.a + x0.d) + p, du * at.deriv_scale, dv * at.deriv_scale);
    }
}

// Loop's regular patches (and box-spline end caps): 12 points, with the
// boundary reflections; differences from point 4 (the first corner).
@compute @workgroup_size(256)
fn limit_loop(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    var i: u32;
    if (!sample_index(wg, nwg, lid, &i)) {
        return;
    }
    let at = locate_tri(samples[i]);
    var w: array<vec3<f32>, 18>;
    box_spline(at.st.x, at.st.y, &w);
    if (at.boundary != 0u) {
        fold_box_spline(&w, at.boundary);
    }
    sum_triangle(at, &w, 12u, 4u);
}

const FACT = array<f32, 5>(1.0, 1.0, 2.0, 6.0, 24.0);

// The Bernstein polynomial of degree i + j + k on the triangle at
// barycentric powers ps, pt, pw; zero for a negative index.
fn bern(i: i32, j: i32, k: i32, ps: array<f32, 5>, pt: array<f32, 5>, pw: array<f32, 5>) -> f32 {
    if (i < 0 || j < 0 || k < 0) {
        return 0.0;
    }
    return FACT[i + j + k] / (FACT[i] * FACT[j] * FACT[k]) * ps[i] * pt[j] * pw[k];
}

// For each triangular Gregory point: the quartic Bezier point it stands
// for, and the blend it is weighted by (6: none), as
// subla_adaptive::basis::gregory_triangle_weights (OpenSubdiv's
// EvalBasisGregoryTri).
const GREGORY_TRI_BEZIER = array<u32, 18>(0u, 1u, 5u, 6u, 6u, 4u, 8u, 3u, 7u, 7u, 14u, 12u, 13u, 10u, 10u, 2u, 11u, 9u);
const GREGORY_TRI_BLEND = array<u32, 18>(6u, 6u, 6u, 0u, 1u, 6u, 6u, 6u, 2u, 3u, 6u, 6u, 6u, 4u, 5u, 6u, 6u, 6u);

// Triangular Gregory end caps: 18 points, the quartic Bezier triangle
// whose interior points blend each corner's pair of face points by the
// barycentric ratios (u : v, v : w, w : u), differentiated with the blend
// held fixed (OpenSubdiv's approximate derivatives); differences from
// point 0 (corner 0).
@compute @workgroup_size(256)
fn limit_gregory_tri(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    var i: u32;
    if (!sample_index(wg, nwg, lid, &i)) {
        return;
    }
    let at = locate_tri(samples[i]);
    let u = at.st.x;
    let v = at.st.y;
    let bw = 1.0 - u - v;
    let ps = array<f32, 5>(1.0, u, u * u, u * u * u, u * u * u * u);
    let pt = array<f32, 5>(1.0, v, v * v, v * v * v, v * v * v * v);
    let pw = array<f32, 5>(1.0, bw, bw * bw, bw * bw * bw, bw * bw * bw * bw);
    // The 15 quartic Bernstein jets, rows of rising t power, each of
    // rising s power.
    var bez: array<vec3<f32>, 15>;
    var n = 0u;
    for (var j = 0; j < 5; j++) {
        for (var ii = 0; ii < 5 - j; ii++) {
            let k = 4 - ii - j;
            bez[n] = vec3<f32>(
                bern(ii, j, k, ps, pt, pw),
                4.0 * (bern(ii - 1, j, k, ps, pt, pw) - bern(ii, j, k - 1, ps, pt, pw)),
                4.0 * (bern(ii, j - 1, k, ps, pt, pw) - bern(ii, j, k - 1, ps, pt, pw)),
            );
            n += 1u;
        }
    }
    // OpenSubdiv's values where a blend is 0 / 0 (at a corner): 1 and 0.
    var g = array<f32, 7>(1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0);
    let pairs = array<vec3<f32>, 3>(vec3<f32>(u, v, u + v), vec3<f32>(v, bw, v + bw), vec3<f32>(bw, u, bw + u));
    for (var c = 0u; c < 3u; c++) {
        let q = pairs[c];
        if (q.z > 0.0) {
            let inv = 1.0 / q.z;
            g[2u * c] = q.x * inv;
            g[2u * c + 1u] = q.y * inv;
        }
    }
    var w: array<vec3<f32>, 18>;
    for (var k = 0u; k < 18u; k++) {
        w[k] = bez[GREGORY_TRI_BEZIER[k]] * g[GREGORY_TRI_BLEND[k]];
    }
    sum_triangle(at, &w, 18u, 0u);
}

// Samples no patch covers (holes): NaN in every channel, as the CPU
// evaluation reports them.
@compute @workgroup_size(256)
fn limit_holes(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    var i: u32;
    if (!sample_index(wg, nwg, lid, &i)) {
        return;
    }
    // A quiet NaN; WGSL has no NaN literal.
    let nan = bitcast<f32>(0x7fc00000u);
    let row = samples[i].w;
    let d = params.channels;
    for (var c = 0u; c < d; c++) {
        position[row * d + c] = nan;
        deriv_u[row * d + c] = nan;
        deriv_v[row * d + c] = nan;
    }
}
