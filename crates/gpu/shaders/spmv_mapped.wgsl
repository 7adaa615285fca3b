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
    // Four channels at a time (the action evaluated once per entry and
    // group), each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        for (var e = start; e < end; e = e + 1u) {
            let col = idx[e];
            acc = acc + action(vals[e], row, col) * load4_x(col, c0);
        }
        store4(row, c0, acc);
    }
}
