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

// Writes channels c0 .. c0 + 3 (those that exist) of output row `row`.
fn store(row: u32, c0: u32, p: vec4<f32>, du: vec4<f32>, dv: vec4<f32>) {
    let d = params.channels;
    let base = row * d + c0;
    for (var k = 0u; k < 4u; k++) {
        if (c0 + k < d) {
            position[base + k] = p[k];
            deriv_u[base + k] = du[k];
            deriv_v[base + k] = dv[k];
        }
    }
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
    r.boundary = (bits >> 7u) & 15u;
    r.st = vec2<f32>(bitcast<f32>(s.y) * k - pu, bitcast<f32>(s.z) * k - pv);
    r.deriv_scale = f32(1u << depth);
    r.row = s.w;
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
        var p = vec4<f32>(0.0);
        var du = vec4<f32>(0.0);
        var dv = vec4<f32>(0.0);
        for (var row = 0u; row < 4u; row++) {
            let ids = patch_points[base + row];
            let xs = array<vec4<f32>, 4>(
                minus(ids.x, x0, c0),
                minus(ids.y, x0, c0),
                minus(ids.z, x0, c0),
                minus(ids.w, x0, c0),
            );
            for (var col = 0u; col < 4u; col++) {
                let x = xs[col];
                p += (cs.v[col] * ct.v[row]) * x;
                du += (cs.d[col] * ct.v[row]) * x;
                dv += (cs.v[col] * ct.d[row]) * x;
            }
        }
        store(at.row, c0, (x0.a + x0.d) + p, du * at.deriv_scale, dv * at.deriv_scale);
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
        // Differences from corner 0's limit point, as in `limit_bspline`.
        let base = at.first_point / 4u;
        let x0 = load_anchored(patch_points[base].x, c0);
        var p = vec4<f32>(0.0);
        var du = vec4<f32>(0.0);
        var dv = vec4<f32>(0.0);
        for (var k = 0u; k < 20u; k++) {
            let cell = GREGORY_CELL[k];
            let corner = k / 5u;
            let role = k % 5u;
            var f = 1.0;
            if (role == 3u) {
                f = g[corner];
            } else if (role == 4u) {
                f = 1.0 - g[corner];
            }
            let x = minus(patch_points[base + k / 4u][k % 4u], x0, c0);
            p += (bs.v[cell.x] * bt.v[cell.y] * f) * x;
            du += (bs.d[cell.x] * bt.v[cell.y] * f) * x;
            dv += (bs.v[cell.x] * bt.d[cell.y] * f) * x;
        }
        store(at.row, c0, (x0.a + x0.d) + p, du * at.deriv_scale, dv * at.deriv_scale);
    }
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
