// Mapped SpMV (Mlakar et al. 2020, Eq. 1): y(i, :) = sum_j action(A(i, j), i, j) x(j, :)
// for a CSR matrix A and multi-channel row-major f32 data (x: ncols x d,
// y: nrows x d).
//
// This file is a template: the line holding the marker SUBLA_ACTION_BODY
// is replaced by the user's snippet, the body of `action`. As shipped the
// action map is the identity, so the template itself is valid WGSL.
//
// Row gather as in spmv.wgsl: one invocation per output row, entries summed
// in stored order, every output written by one invocation.

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

fn action(value: f32, row: u32, col: u32) -> f32 {
    return value; // SUBLA_ACTION_BODY
}

@compute @workgroup_size(256)
fn spmv_mapped(
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
            let col = idx[e];
            acc = acc + action(vals[e], row, col) * x[col * d + c];
        }
        y[row * d + c] = acc;
    }
}
