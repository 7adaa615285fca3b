// The limit of regular Catmull-Clark solid cells (Altenhofen et al. 2018,
// Eq. 1): a tricubic B-spline over each cell's 4 x 4 x 4 control points
// (entry i + 4j + 16l; a cell with faces on the boundary has a phantom
// layer beyond each, extrapolated as 2 P_near - P_far). k x k x k samples per cell,
// w outer, then v, then u. The two kernel shapes of GPU limit evaluation
// of Catmull-Clark solids (per sample, and per cell with the cell's data in
// workgroup memory):
//
//   per_sample: one invocation per sample gathers the 64 control points
//               and sums them with the tensor weights (u innermost, then
//               v, then w);
//   per_cell:   one workgroup per cell loads the control points (phantom
//               layer included) and the basis into workgroup memory, then
//               evaluates the cell's samples by sum factorisation (below);
//   per_cell_columns: the same for up to 16 cells per workgroup, each
//               invocation one column of samples (below): the per-cell
//               shape where k < 16.
//
// Positions or one first derivative (params.quantity: 0 position, 1-3 the
// derivative along u, v, w). x and y are row-major f32, 3 channels. Each
// sample is written by one invocation, its sums in a fixed order:
// deterministic, no atomics. The two shapes sum in different orders, so
// their results differ by rounding.

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

@group(0) @binding(0) var<uniform> params: Params;
// 64 control points per cell.
@group(0) @binding(1) var<storage, read> grids: array<u32>;
// Per cell, two bits per axis (bits 2a, 2a + 1): 0 no phantom layer, 1 at
// index 0, 2 at index 3.
@group(0) @binding(2) var<storage, read> phantom: array<u32>;
// basis[4 t + i] = B_i(t_t), then deriv at 4 k + 4 t + i.
@group(0) @binding(3) var<storage, read> basis: array<f32>;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

var<workgroup> cell_points: array<vec3<f32>, 64>;

// The basis value of index i at sample t along axis a (derivative where the
// quantity asks for it along a).
fn weight(a: u32, t: u32, i: u32) -> f32 {
    if (params.quantity == a + 1u) {
        return basis[4u * params.k + 4u * t + i];
    }
    return basis[4u * t + i];
}

fn point(v: u32) -> vec3<f32> {
    return vec3<f32>(x[3u * v], x[3u * v + 1u], x[3u * v + 2u]);
}

// Control point e of cell c, the phantom layers extrapolated: along each
// axis whose phantom layer e is in, 2 P_near - P_far; over several axes,
// the product of those (up to 8 real points).
fn control(c: u32, e: u32) -> vec3<f32> {
    let v = grids[64u * c + e];
    if (v != NONE) {
        return point(v);
    }
    let code = phantom[c];
    let idx = vec3<u32>(e % 4u, (e / 4u) % 4u, e / 16u);
    // Per axis: the index taken first (weight 2 if a phantom, else 1) and
    // the second (weight -1), and how many are taken.
    var first = idx;
    var second = idx;
    var n = vec3<u32>(1u, 1u, 1u);
    for (var a = 0u; a < 3u; a = a + 1u) {
        let side = (code >> (2u * a)) & 3u;
        if (side == 1u && idx[a] == 0u) {
            first[a] = 1u;
            second[a] = 2u;
            n[a] = 2u;
        } else if (side == 2u && idx[a] == 3u) {
            first[a] = 2u;
            second[a] = 1u;
            n[a] = 2u;
        }
    }
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var l = 0u; l < n.z; l = l + 1u) {
        for (var j = 0u; j < n.y; j = j + 1u) {
            for (var i = 0u; i < n.x; i = i + 1u) {
                let ii = select(first.x, second.x, i == 1u);
                let jj = select(first.y, second.y, j == 1u);
                let ll = select(first.z, second.z, l == 1u);
                let wi = select(select(1.0, 2.0, n.x == 2u), -1.0, i == 1u);
                let wj = select(select(1.0, 2.0, n.y == 2u), -1.0, j == 1u);
                let wl = select(select(1.0, 2.0, n.z == 2u), -1.0, l == 1u);
                acc = acc + (wi * wj * wl) * point(grids[64u * c + ii + 4u * jj + 16u * ll]);
            }
        }
    }
    return acc;
}

fn write(s: u32, acc: vec3<f32>) {
    y[3u * s] = acc.x;
    y[3u * s + 1u] = acc.y;
    y[3u * s + 2u] = acc.z;
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
    let r = s % kkk;
    let iu = r % k;
    let iv = (r / k) % k;
    let iw = r / (k * k);
    var bu = vec4<f32>(0.0);
    var bv = vec4<f32>(0.0);
    var bw = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i = i + 1u) {
        bu[i] = weight(0u, iu, i);
        bv[i] = weight(1u, iv, i);
        bw[i] = weight(2u, iw, i);
    }
    // Nested sums, u innermost, over the 64 points read once each.
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var l = 0u; l < 4u; l = l + 1u) {
        var plane = vec3<f32>(0.0, 0.0, 0.0);
        for (var j = 0u; j < 4u; j = j + 1u) {
            var row = vec3<f32>(0.0, 0.0, 0.0);
            for (var i = 0u; i < 4u; i = i + 1u) {
                row = row + bu[i] * control(c, i + 4u * j + 16u * l);
            }
            plane = plane + bv[j] * row;
        }
        acc = acc + bw[l] * plane;
    }
    write(s, acc);
}

// Per cell, by sum factorisation (the tensor product contracted one
// direction at a time), h layers of samples along w at a time (h = the
// most that fit the tables below: min(k, 16, 64 / k), at least 1):
//   T1[16 a + i + 4j] = sum_l Bw(iw, l) P[i + 4j + 16l]        (16 h points)
//   T2[4 (k a + iv) + i] = sum_j Bv(iv, j) T1[16 a + i + 4j]    (4 k h)
//   sample (iu, iv, iw) = sum_i Bu(iu, i) T2[4 (k a + iv) + i]
// with iw = w0 + a: 4 terms per sample instead of 64, each sum in a fixed
// order. 256 invocations; the basis of the three directions in workgroup
// memory.
const CELL_WG: u32 = 256u;

var<workgroup> basis_u: array<f32, 256>;
var<workgroup> basis_v: array<f32, 256>;
var<workgroup> basis_w: array<f32, 256>;
var<workgroup> slab1: array<vec3<f32>, 256>;
var<workgroup> slab2: array<vec3<f32>, 256>;

@compute @workgroup_size(256)
fn per_cell(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = wg.y * nwg.x + wg.x;
    let k = params.k;
    // The whole workgroup reaches every barrier; cells past the end load
    // nothing and write nothing.
    let live = c < params.cells;
    if (live && lid < 64u) {
        cell_points[lid] = control(c, lid);
    }
    for (var e = lid; e < 4u * k; e = e + CELL_WG) {
        basis_u[e] = weight(0u, e / 4u, e % 4u);
        basis_v[e] = weight(1u, e / 4u, e % 4u);
        basis_w[e] = weight(2u, e / 4u, e % 4u);
    }
    workgroupBarrier();
    let kk = k * k;
    let h = max(1u, min(k, min(16u, 64u / k)));
    for (var w0 = 0u; w0 < k; w0 = w0 + h) {
        let layers = min(h, k - w0);
        for (var e = lid; e < 16u * layers; e = e + CELL_WG) {
            let iw = w0 + e / 16u;
            let ij = e % 16u;
            var t1 = vec3<f32>(0.0, 0.0, 0.0);
            for (var l = 0u; l < 4u; l = l + 1u) {
                t1 = t1 + basis_w[4u * iw + l] * cell_points[ij + 16u * l];
            }
            slab1[e] = t1;
        }
        workgroupBarrier();
        for (var e = lid; e < 4u * k * layers; e = e + CELL_WG) {
            let i = e % 4u;
            let row = e / 4u;
            let a = row / k;
            let iv = row % k;
            var t2 = vec3<f32>(0.0, 0.0, 0.0);
            for (var j = 0u; j < 4u; j = j + 1u) {
                t2 = t2 + basis_v[4u * iv + j] * slab1[16u * a + i + 4u * j];
            }
            slab2[e] = t2;
        }
        workgroupBarrier();
        if (live) {
            for (var r = lid; r < kk * layers; r = r + CELL_WG) {
                let iu = r % k;
                let row = r / k;
                var acc = vec3<f32>(0.0, 0.0, 0.0);
                for (var i = 0u; i < 4u; i = i + 1u) {
                    acc = acc + basis_u[4u * iu + i] * slab2[4u * row + i];
                }
                write(c * kk * k + w0 * kk + r, acc);
            }
        }
        workgroupBarrier();
    }
}

// Per cell, by columns: a workgroup takes g = min(16, 256 / k^2) cells (at
// least 1), loads their control points (phantom layers extrapolated) and
// the basis of the three directions into workgroup memory once, then each
// invocation evaluates one column (iu, iv) of one of its cells:
//   T[l] = sum_j Bv(iv, j) sum_i Bu(iu, i) P[i + 4j + 16l]     (l < 4)
//   sample (iu, iv, iw) = sum_l Bw(iw, l) T[l]                  (every iw)
// the sums of per_sample, in its order (u innermost, then v, then w),
// written out term by term (no array indexed at run time in an
// invocation's registers). One barrier; neighbouring invocations write
// neighbouring samples of each layer iw.
const COLUMN_CELLS: u32 = 16u;
// A cell's 64 points at a stride of 65 (neighbouring cells' points fall in
// different banks).
const COLUMN_STRIDE: u32 = 65u;

var<workgroup> column_points: array<vec3<f32>, 1040>;
var<workgroup> column_bu: array<vec4<f32>, 64>;
var<workgroup> column_bv: array<vec4<f32>, 64>;
var<workgroup> column_bw: array<vec4<f32>, 64>;

// The four basis values of sample t along axis a.
fn weights4(a: u32, t: u32) -> vec4<f32> {
    return vec4<f32>(weight(a, t, 0u), weight(a, t, 1u), weight(a, t, 2u), weight(a, t, 3u));
}

// sum_i bu[i] P[at + i].
fn column_row(at: u32, bu: vec4<f32>) -> vec3<f32> {
    return bu.x * column_points[at] + bu.y * column_points[at + 1u] + bu.z * column_points[at + 2u]
        + bu.w * column_points[at + 3u];
}

// sum_j bv[j] sum_i bu[i] P[at + i + 4j].
fn column_plane(at: u32, bu: vec4<f32>, bv: vec4<f32>) -> vec3<f32> {
    return bv.x * column_row(at, bu) + bv.y * column_row(at + 4u, bu) + bv.z * column_row(at + 8u, bu)
        + bv.w * column_row(at + 12u, bu);
}

@compute @workgroup_size(256)
fn per_cell_columns(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = params.k;
    let kk = k * k;
    let g = max(1u, min(COLUMN_CELLS, CELL_WG / kk));
    let first = (wg.y * nwg.x + wg.x) * g;
    for (var e = lid; e < 64u * g; e = e + CELL_WG) {
        let c = first + e / 64u;
        if (c < params.cells) {
            column_points[COLUMN_STRIDE * (e / 64u) + e % 64u] = control(c, e % 64u);
        }
    }
    for (var t = lid; t < k; t = t + CELL_WG) {
        column_bu[t] = weights4(0u, t);
        column_bv[t] = weights4(1u, t);
        column_bw[t] = weights4(2u, t);
    }
    // The only barrier: every invocation reaches it.
    workgroupBarrier();
    for (var col = lid; col < g * kk; col = col + CELL_WG) {
        let a = col / kk;
        let c = first + a;
        if (c >= params.cells) {
            break;
        }
        let uv = col % kk;
        let bu = column_bu[uv % k];
        let bv = column_bv[uv / k];
        let at = COLUMN_STRIDE * a;
        let t0 = column_plane(at, bu, bv);
        let t1 = column_plane(at + 16u, bu, bv);
        let t2 = column_plane(at + 32u, bu, bv);
        let t3 = column_plane(at + 48u, bu, bv);
        let out = c * kk * k + uv;
        for (var iw = 0u; iw < k; iw = iw + 1u) {
            let bw = column_bw[iw];
            write(out + iw * kk, bw.x * t0 + bw.y * t1 + bw.z * t2 + bw.w * t3);
        }
    }
}
