// The limit of irregular Catmull-Clark solid cells (Altenhofen et al.
// 2018, Eq. 3): extraordinary edges meeting at one vertex. The weights of
// each configuration at the k x k x k local grid parameters (the local
// subdivision matrix's powers down to a regular or layered child) are made
// on the CPU once per topology (tables: k^3 x |S|, entry s |S| + j, the
// local sample s = (z k + y) k + x); here each sample is their dot product
// with the cell's support points:
//
//   p(sample) = sign * sum_j W[s, j] P[j]
//
// The cell's parameters (u, v, w) are the local (x, y, z) reflected where
// cell_meta.code says (bit a: axis a runs backwards from the extraordinary
// vertex), which also gives a derivative's sign. k x k x k samples per
// cell, w outer, then v, then u.
//
//   per_sample: one invocation per sample, the support read from global
//               memory;
//   per_cell:   one workgroup per cell loads the support into workgroup
//               memory, then its invocations take the cell's samples.
//
// x and y are row-major f32, 3 channels. Each sample is written by one
// invocation, its sum in a fixed order: deterministic, no atomics.

struct Params {
    // Samples in all.
    samples: u32,
    // Samples per direction.
    k: u32,
    // 0 position, 1-3 the derivative along u, v, w.
    quantity: u32,
    // Cells.
    cells: u32,
}

// The most support points a cell may have in the per-cell kernel.
const MAX_SUPPORT: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
// Per cell: first support point, support size, first table entry, code.
@group(0) @binding(1) var<storage, read> cell_meta: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> support: array<u32>;
@group(0) @binding(3) var<storage, read> tables: array<f32>;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

fn point(v: u32) -> vec3<f32> {
    return vec3<f32>(x[3u * v], x[3u * v + 1u], x[3u * v + 2u]);
}

fn write(s: u32, acc: vec3<f32>) {
    y[3u * s] = acc.x;
    y[3u * s + 1u] = acc.y;
    y[3u * s + 2u] = acc.z;
}

// The sign of the quantity in a cell of code `code`.
fn sign_of(code: u32) -> f32 {
    if (params.quantity > 0u && ((code >> (params.quantity - 1u)) & 1u) == 1u) {
        return -1.0;
    }
    return 1.0;
}

// Index `idx` along axis `a`, reflected where bit `a` of the code says.
fn reflect_axis(code: u32, a: u32, idx: u32) -> u32 {
    if (((code >> a) & 1u) == 1u) {
        return params.k - 1u - idx;
    }
    return idx;
}

// The local sample index of the cell's sample `rest` (u fastest), axis by
// axis by name (no per-invocation array indexed at run time).
fn local_sample(code: u32, rest: u32) -> u32 {
    let k = params.k;
    let i = reflect_axis(code, 0u, rest % k);
    let j = reflect_axis(code, 1u, (rest / k) % k);
    let l = reflect_axis(code, 2u, rest / (k * k));
    return (l * k + j) * k + i;
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
    let kkk = params.k * params.k * params.k;
    let c = s / kkk;
    let m = cell_meta[c];
    let row = m.z + local_sample(m.w, s % kkk) * m.y;
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var j = 0u; j < m.y; j = j + 1u) {
        acc = acc + tables[row + j] * point(support[m.x + j]);
    }
    write(s, sign_of(m.w) * acc);
}

var<workgroup> cell_points: array<vec3<f32>, MAX_SUPPORT>;

@compute @workgroup_size(256)
fn per_cell(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = wg.y * nwg.x + wg.x;
    // The same path for every invocation of the group (uniform barriers).
    let live = c < params.cells;
    var m = vec4<u32>(0u, 0u, 0u, 0u);
    if (live) {
        m = cell_meta[c];
    }
    let len = min(m.y, MAX_SUPPORT);
    for (var j = lid; j < len; j = j + 256u) {
        cell_points[j] = point(support[m.x + j]);
    }
    workgroupBarrier();
    if (!live) {
        return;
    }
    let kkk = params.k * params.k * params.k;
    let sign = sign_of(m.w);
    for (var rest = lid; rest < kkk; rest = rest + 256u) {
        let row = m.z + local_sample(m.w, rest) * len;
        var acc = vec3<f32>(0.0, 0.0, 0.0);
        for (var j = 0u; j < len; j = j + 1u) {
            acc = acc + tables[row + j] * cell_points[j];
        }
        write(c * kkk + rest, sign * acc);
    }
}
