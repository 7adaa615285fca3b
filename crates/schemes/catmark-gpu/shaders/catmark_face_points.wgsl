// Catmull-Clark face points of one level (Mlakar et al. 2020, Eq. 3 and
// Alg. 4): the centroid of each parent face,
//
//   y(nv + f, c) = Σ_k w_n · x(face_verts[k], c),   k in face_ptr[f] .. face_ptr[f + 1],
//
// with w_n = order_weight[n] = 1 / n for a face of n vertices (rounded to f32
// on the host, as the CPU kernel rounds it).
//
// Quad fast path (§4.4): on a level of quads only (every level after the
// first), face f has corners 4f .. 4f + 3 and weight 1/4, so face_ptr and
// the weight table are not read.
//
// x is the parent level (rows × d), y the whole child level (vertex points,
// then face points, then edge points; rows × d), both row-major f32. One
// invocation per face writes all d channels of its row, each summed from
// +0 in the face's vertex order: deterministic, no atomics.

struct Params {
    // Faces of the parent level.
    count: u32,
    // Channels d.
    channels: u32,
    // First face-point row of y (the parent's vertex count).
    out_row: u32,
    // 1 when every face of the parent level is a quad.
    quads: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> face_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> face_verts: array<u32>;
@group(0) @binding(3) var<storage, read> order_weight: array<f32>;
@group(0) @binding(4) var<storage, read> x: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

// Channels c0 .. c0 + 3 of row p of x (zeros past the last channel): the
// kernel gathers each row once per group of four channels.
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

// Writes channels c0 .. c0 + 3 (those that exist) of the row of y whose
// first channel is at `at`.
fn store4(at: u32, c0: u32, v: vec4<f32>) {
    let d = params.channels;
    y[at + c0] = v.x;
    if (c0 + 1u < d) { y[at + c0 + 1u] = v.y; }
    if (c0 + 2u < d) { y[at + c0 + 2u] = v.z; }
    if (c0 + 3u < d) { y[at + c0 + 3u] = v.w; }
}

@compute @workgroup_size(256)
fn face_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // 2-D grid for more than 65 535 workgroups: flat workgroup index.
    let f = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (f >= params.count) {
        return;
    }
    let d = params.channels;
    var start = 4u * f;
    var end = start + 4u;
    var w = 0.25;
    if (params.quads == 0u) {
        start = face_ptr[f];
        end = face_ptr[f + 1u];
        w = order_weight[end - start];
    }
    let out = (params.out_row + f) * d;
    // Four channels at a time, each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        for (var k = start; k < end; k = k + 1u) {
            acc = acc + w * load4_x(face_verts[k], c0);
        }
        store4(out, c0, acc);
    }
}
