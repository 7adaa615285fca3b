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
    for (var c = 0u; c < d; c = c + 1u) {
        var acc = 0.0;
        for (var e = start; e < end; e = e + 1u) {
            acc = acc + vals[e] * x[idx[e] * d + c];
        }
        y[row * d + c] = acc;
    }
}
