// The limit of layered Catmull-Clark solid cells (Altenhofen et al. 2018,
// Eq. 2): one extraordinary edge of valence n, the cell's limit Stam's
// surface patch across the edge times a cubic B-spline along it,
//
//   p(s, t, r) = sum_l B_l(r) sum_i phi_i(s, t) P[l, i]    l < 4, i < K = 2n + 8
//
// over four layers of K control points (layer 0 or 3 a phantom where the
// face across the edge is on the boundary: folded into the layer weights,
// 2 P_near - P_far). Stam's weights phi at the k x k local surface
// parameters are computed on the CPU once per valence (tables: position,
// d/ds, d/dt, each k^2 x K, entry (j k + i) K + point); the cell's own
// parameters (u, v, w) are a permutation of (s, t, r) with reflections
// (meta.code). k x k x k samples per cell, w outer, then v, then u, as the
// CPU's LayeredEval writes them.
//
//   per_sample: one invocation per sample sums the 4 K terms from global
//               memory;
//   per_cell:   one workgroup per cell loads the control points into
//               workgroup memory, contracts each layer with the surface
//               weights (T[l, st] = sum_i phi_i(st) P[l, i], 64 surface
//               samples at a time), then writes the samples (4 terms each).
//
// Positions or one first derivative (params.quantity: 0 position, 1-3 the
// derivative along u, v, w). x and y are row-major f32, 3 channels. Each
// sample is written by one invocation, its sums in a fixed order:
// deterministic, no atomics.

struct Params {
    // Samples in all.
    samples: u32,
    // Samples per direction.
    k: u32,
    // 0 position, 1 d/du, 2 d/dv, 3 d/dw.
    quantity: u32,
    // Cells.
    cells: u32,
}

const NONE: u32 = 0xffffffffu;
// The most control points of a cell: 4 layers of 2 * 16 + 8.
const MAX_POINTS: u32 = 160u;

@group(0) @binding(0) var<uniform> params: Params;
// Per cell: first control point, points per layer K, first table entry,
// code (bits 0-1 the cell axis of s, 2 s reflected, 3-4 t's axis, 5 t
// reflected, 6-7 r's axis, 8 r reflected, 9-10 the phantom layer: 0 none,
// 1 layer 0, 2 layer 3).
@group(0) @binding(1) var<storage, read> cell_meta: array<vec4<u32>>;
// 4 K control points per cell, layer-major (NONE in a phantom layer).
@group(0) @binding(2) var<storage, read> points: array<u32>;
// Stam's weights per valence: position, d/ds, d/dt, each k^2 x K.
@group(0) @binding(3) var<storage, read> tables: array<f32>;
// basis[4 t + l] = B_l(t_t), then the derivative at 4 k + 4 t + l.
@group(0) @binding(4) var<storage, read> basis: array<f32>;
@group(0) @binding(5) var<storage, read> x: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;

fn point(v: u32) -> vec3<f32> {
    return vec3<f32>(x[3u * v], x[3u * v + 1u], x[3u * v + 2u]);
}

fn write(s: u32, acc: vec3<f32>) {
    y[3u * s] = acc.x;
    y[3u * s + 1u] = acc.y;
    y[3u * s + 2u] = acc.z;
}

// What a cell's quantity reads: the surface table (0 position, 1 d/ds,
// 2 d/dt), whether the layers take the basis' derivative, and the sign.
struct Pick {
    table: u32,
    deriv: bool,
    sign: f32,
}

fn pick(code: u32) -> Pick {
    var p = Pick(0u, false, 1.0);
    if (params.quantity == 0u) {
        return p;
    }
    let axis = params.quantity - 1u;
    for (var a = 0u; a < 3u; a = a + 1u) {
        let bits = (code >> (3u * a)) & 7u;
        if ((bits & 3u) == axis) {
            if ((bits & 4u) != 0u) {
                p.sign = -1.0;
            }
            if (a == 2u) {
                p.deriv = true;
            } else {
                p.table = a + 1u;
            }
        }
    }
    return p;
}

// The four layer weights at the r-sample ir, the sign applied and the
// phantom layer folded into the two next to it.
fn layer_weights(code: u32, p: Pick, ir: u32) -> vec4<f32> {
    var base = 4u * ir;
    if (p.deriv) {
        base = base + 4u * params.k;
    }
    var w = p.sign * vec4<f32>(basis[base], basis[base + 1u], basis[base + 2u], basis[base + 3u]);
    let ghost = (code >> 9u) & 3u;
    if (ghost == 1u) {
        w = vec4<f32>(0.0, w.y + 2.0 * w.x, w.z - w.x, w.w);
    } else if (ghost == 2u) {
        w = vec4<f32>(w.x, w.y - w.w, w.z + 2.0 * w.w, 0.0);
    }
    return w;
}

// The stride of the cell's axis `axis` (0 u, 1 v, 2 w) among its samples.
fn axis_stride(axis: u32) -> u32 {
    let k = params.k;
    if (axis == 0u) {
        return 1u;
    }
    if (axis == 1u) {
        return k;
    }
    return k * k;
}

// Local index `idx` along local axis `a` (0 s, 1 t, 2 r): reflected where
// the code says, times the stride of the cell axis it runs along.
fn place_axis(code: u32, a: u32, idx: u32) -> u32 {
    let bits = (code >> (3u * a)) & 7u;
    var at = idx;
    if ((bits & 4u) != 0u) {
        at = params.k - 1u - idx;
    }
    return axis_stride(bits & 3u) * at;
}

// The cell's sample index of local sample (i along s, j along t, ir along
// r). Axis by axis, by name: no per-invocation array indexed at run time
// (slow on some drivers).
fn place(code: u32, i: u32, j: u32, ir: u32) -> u32 {
    return place_axis(code, 0u, i) + place_axis(code, 1u, j) + place_axis(code, 2u, ir);
}

// The local index along local axis `a` of the cell's sample `rest` (u
// fastest, then v, then w).
fn local_index(code: u32, a: u32, rest: u32) -> u32 {
    let k = params.k;
    let bits = (code >> (3u * a)) & 7u;
    let axis = bits & 3u;
    var idx = rest / (k * k);
    if (axis == 0u) {
        idx = rest % k;
    } else if (axis == 1u) {
        idx = (rest / k) % k;
    }
    if ((bits & 4u) != 0u) {
        idx = k - 1u - idx;
    }
    return idx;
}

// Layer l of the cell whose control points start at `first`: the surface
// weights of table row `row` dotted with the layer's points.
fn layer_sum(row: u32, first: u32, l: u32, len: u32) -> vec3<f32> {
    var layer = vec3<f32>(0.0, 0.0, 0.0);
    for (var i = 0u; i < len; i = i + 1u) {
        layer = layer + tables[row + i] * point(points[first + l * len + i]);
    }
    return layer;
}

@compute @workgroup_size(256)
fn per_sample(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let s = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (s >= params.samples) {
        return;
    }
    let k = params.k;
    let kkk = k * k * k;
    let c = s / kkk;
    let rest = s % kkk;
    let m = cell_meta[c];
    let code = m.w;
    // The local indices of the cell's sample.
    let ls = local_index(code, 0u, rest);
    let lt = local_index(code, 1u, rest);
    let lr = local_index(code, 2u, rest);
    let p = pick(code);
    let lw = layer_weights(code, p, lr);
    let len = m.y;
    let row = m.z + p.table * k * k * len + (lt * k + ls) * len;
    // The layers in order, a layer of weight 0 (a phantom) skipped.
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    if (lw.x != 0.0) {
        acc = acc + lw.x * layer_sum(row, m.x, 0u, len);
    }
    if (lw.y != 0.0) {
        acc = acc + lw.y * layer_sum(row, m.x, 1u, len);
    }
    if (lw.z != 0.0) {
        acc = acc + lw.z * layer_sum(row, m.x, 2u, len);
    }
    if (lw.w != 0.0) {
        acc = acc + lw.w * layer_sum(row, m.x, 3u, len);
    }
    write(s, acc);
}

// Per cell: the control points, then 64 surface samples at a time.
const CHUNK: u32 = 64u;

var<workgroup> cell_points: array<vec3<f32>, MAX_POINTS>;
var<workgroup> slab: array<vec3<f32>, 256>;

@compute @workgroup_size(256)
fn per_cell(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = wg.y * nwg.x + wg.x;
    // Every invocation of the group takes the same path: the barriers stay
    // in uniform control flow.
    let live = c < params.cells;
    let k = params.k;
    var m = vec4<u32>(0u, 0u, 0u, 0u);
    if (live) {
        m = cell_meta[c];
    }
    let code = m.w;
    let len = m.y;
    let ghost = (code >> 9u) & 3u;
    for (var e = lid; e < 4u * len; e = e + 256u) {
        let l = e / len;
        let is_ghost = (ghost == 1u && l == 0u) || (ghost == 2u && l == 3u);
        if (is_ghost) {
            cell_points[e] = vec3<f32>(0.0, 0.0, 0.0);
        } else {
            cell_points[e] = point(points[m.x + e]);
        }
    }
    workgroupBarrier();
    let p = pick(code);
    let kk = k * k;
    let base = m.z + p.table * kk * len;
    let kkk = kk * k;
    for (var st0 = 0u; st0 < kk; st0 = st0 + CHUNK) {
        let n = min(CHUNK, kk - st0);
        // T[l, st] for the chunk: 4 n entries, one per invocation.
        if (lid < 4u * n) {
            let l = lid / n;
            let st = st0 + lid % n;
            var acc = vec3<f32>(0.0, 0.0, 0.0);
            let row = base + st * len;
            for (var i = 0u; i < len; i = i + 1u) {
                acc = acc + tables[row + i] * cell_points[l * len + i];
            }
            slab[lid] = acc;
        }
        workgroupBarrier();
        // The chunk's samples: n surface samples x k along r.
        for (var e = lid; e < n * k; e = e + 256u) {
            let ir = e / n;
            let q = e % n;
            let st = st0 + q;
            let lw = layer_weights(code, p, ir);
            var acc = vec3<f32>(0.0, 0.0, 0.0);
            acc = acc + lw.x * slab[q];
            acc = acc + lw.y * slab[n + q];
            acc = acc + lw.z * slab[2u * n + q];
            acc = acc + lw.w * slab[3u * n + q];
            if (live) {
                write(c * kkk + place(code, st % k, st / k, ir), acc);
            }
        }
        workgroupBarrier();
    }
}
