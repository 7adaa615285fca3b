// Catmull-Clark edge points of one level (Mlakar et al. 2020, §3.2, §5.1,
// §5.3): for parent edge e = (a, b) with mask (alpha, beta),
//
//   y(nv + nf + e, c) = Σ_k beta · fp(edge_faces[k], c) + alpha · x(a, c) + alpha · x(b, c),
//
// k in edge_corner_ptr[e] .. edge_corner_ptr[e + 1] (one entry per face use
// of the edge, in corner order), fp the face points already written to y
// (rows nv ..) by `face_points`. The face term is skipped when beta = 0
// (creases), as on the CPU. The smooth mask (1/4, 1/4) is entry 0 of
// edge_masks; edge_mask[e] names the entry of every edge (the special
// masks of boundary, crease, semi-sharp, non-manifold and smooth-triangle
// edges follow in edge order).
//
// x is the parent level, y the whole child level, both row-major f32 with
// d channels. One invocation per edge writes all d channels of its row,
// each summed from +0 in the order above: deterministic, no atomics.

struct Params {
    // Edges of the parent level.
    count: u32,
    // Channels d.
    channels: u32,
    // First edge-point row of y (vertex count + face count of the parent).
    out_row: u32,
    // First face-point row of y (vertex count of the parent).
    face_row: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> edges: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> edge_corner_ptr: array<u32>;
@group(0) @binding(3) var<storage, read> edge_faces: array<u32>;
@group(0) @binding(4) var<storage, read> edge_mask: array<u32>;
// (alpha, beta) of each mask.
@group(0) @binding(5) var<storage, read> edge_masks: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read> x: array<f32>;
@group(0) @binding(7) var<storage, read_write> y: array<f32>;

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

// The same for row p of y (the face points already written).
fn load4_y(p: u32, c0: u32) -> vec4<f32> {
    let d = params.channels;
    let base = p * d + c0;
    var r = vec4<f32>(0.0);
    r.x = y[base];
    if (c0 + 1u < d) { r.y = y[base + 1u]; }
    if (c0 + 2u < d) { r.z = y[base + 2u]; }
    if (c0 + 3u < d) { r.w = y[base + 3u]; }
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
fn edge_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (e >= params.count) {
        return;
    }
    let d = params.channels;
    let ab = edges[e];
    let m = edge_masks[edge_mask[e]];
    let alpha = m.x;
    let beta = m.y;
    let start = edge_corner_ptr[e];
    let end = edge_corner_ptr[e + 1u];
    let out = (params.out_row + e) * d;
    // Four channels at a time, each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        if (beta != 0.0) {
            for (var k = start; k < end; k = k + 1u) {
                acc = acc + beta * load4_y(params.face_row + edge_faces[k], c0);
            }
        }
        acc = acc + alpha * load4_x(ab.x, c0);
        acc = acc + alpha * load4_x(ab.y, c0);
        store4(out, c0, acc);
    }
}
