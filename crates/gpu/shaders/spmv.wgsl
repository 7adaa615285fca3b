// y = A x for a CSR matrix A (nrows x ncols) and multi-channel data:
// x is ncols x d, y is nrows x d, both row-major f32.
//
// Row gather: one invocation per output row computes all d channels of its
// row, each as ((0 + a0 x0) + a1 x1) + ... over the row's entries in stored
// (increasing column) order, like the CPU `spmv_csr`. Every output element
// is written by one invocation: deterministic, no float atomics.

struct Params {
    nrows: u32,
    // Channels d.
    channels: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> vals: array<f32>;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

// Channels c0 .. c0 + 3 of row p of x (zeros past the last channel): each
// entry's index and value are read once per group of four channels.
fn load4_x(p: u32, c0: u32) -> vec4<f32> {
    let d = params.channels;
    let base = p * d + c0;
    var r = vec4<f32>(0.0);
    r.x = x[base];
    if (c0 + 1u < d) { r.y = x[base + 1u]; }
    if (c0 + 2u < d) { r.z = x[base + 2u]; }
    if (c0 + 3u < d) { r.w = x[base + 3u]; }
    return r;
}

// Writes channels c0 .. c0 + 3 (those that exist) of row `row` of y.
fn store4(row: u32, c0: u32, v: vec4<f32>) {
    let d = params.channels;
    let at = row * d + c0;
    y[at] = v.x;
    if (c0 + 1u < d) { y[at + 1u] = v.y; }
    if (c0 + 2u < d) { y[at + 2u] = v.z; }
    if (c0 + 3u < d) { y[at + 3u] = v.w; }
}

@compute @workgroup_size(256)
fn spmv(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let row = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (row >= params.nrows) {
        return;
    }
    let d = params.channels;
    let start = row_ptr[row];
    let end = row_ptr[row + 1u];
    // Four channels at a time, each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        for (var e = start; e < end; e = e + 1u) {
            acc = acc + vals[e] * load4_x(idx[e], c0);
        }
        store4(row, c0, acc);
    }
}
