// The limit of regular Catmull-Clark solid cells (Altenhofen et al. 2018,
// Eq. 1): a tricubic B-spline over each cell's 4 x 4 x 4 control points
// (entry i + 4j + 16l; a cell with one face on the boundary has a phantom
// layer, extrapolated as 2 P_near - P_far). k x k x k samples per cell,
// w outer, then v, then u. The two kernel shapes of GPU limit evaluation
// of Catmull-Clark solids (per sample, and per cell with the cell's data in
// workgroup memory):
//
//   per_sample: one invocation per sample gathers the 64 control points
//               and sums them with the tensor weights;
//   per_cell:   one workgroup per cell; its first 64 invocations load the
//               control points (phantom layer included) into workgroup
//               memory, then every invocation evaluates samples lid,
//               lid + 256, ... of the cell from there.
//
// Positions or one first derivative (params.quantity: 0 position, 1-3 the
// derivative along u, v, w). x and y are row-major f32, 3 channels. Each
// sample is written by one invocation, summed in the order of the control
// points: deterministic, no atomics.

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
// Per cell: 0, or 1 + 2 axis + (1 if the phantom layer is at index 3).
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

// Control point e of cell c, the phantom layer extrapolated.
fn control(c: u32, e: u32) -> vec3<f32> {
    let v = grids[64u * c + e];
    if (v != NONE) {
        return point(v);
    }
    let code = phantom[c] - 1u;
    let axis = code / 2u;
    var stride = 1u;
    if (axis == 1u) {
        stride = 4u;
    } else if (axis == 2u) {
        stride = 16u;
    }
    var near = 1u;
    var far = 2u;
    var m = 0u;
    if ((code & 1u) == 1u) {
        near = 2u;
        far = 1u;
        m = 3u;
    }
    let base = e - m * stride;
    return 2.0 * point(grids[64u * c + base + near * stride]) - point(grids[64u * c + base + far * stride]);
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
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var e = 0u; e < 64u; e = e + 1u) {
        let w = weight(0u, iu, e % 4u) * weight(1u, iv, (e / 4u) % 4u) * weight(2u, iw, e / 16u);
        acc = acc + w * control(c, e);
    }
    write(s, acc);
}

@compute @workgroup_size(256)
fn per_cell(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = wg.y * nwg.x + wg.x;
    // The whole workgroup reaches the barrier; cells past the end load
    // nothing and write nothing.
    if (c < params.cells && lid < 64u) {
        cell_points[lid] = control(c, lid);
    }
    workgroupBarrier();
    if (c >= params.cells) {
        return;
    }
    let k = params.k;
    let kkk = k * k * k;
    for (var r = lid; r < kkk; r = r + 256u) {
        let iu = r % k;
        let iv = (r / k) % k;
        let iw = r / (k * k);
        var acc = vec3<f32>(0.0, 0.0, 0.0);
        for (var e = 0u; e < 64u; e = e + 1u) {
            let w = weight(0u, iu, e % 4u) * weight(1u, iv, (e / 4u) % 4u) * weight(2u, iw, e / 16u);
            acc = acc + w * cell_points[e];
        }
        write(c * kkk + r, acc);
    }
}
