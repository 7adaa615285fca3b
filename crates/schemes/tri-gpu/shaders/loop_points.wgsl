// Loop subdivision, one level of eval (Loop 1987; Mlakar et al. 2020,
// Appendix B, Eq. 28-29, with the overwrite masks of §5.1 and §5.3 looked
// up per row). Two entry points, both reading only the parent level x, so
// they are independent:
//
//   edge_points:   y(nv + e) = alpha · x(a) + alpha · x(b) + Σ_k beta · x(o_k)
//                  for parent edge e = (a, b), o_k the vertex opposite the
//                  edge in each incident triangle (edge_opp[edge_opp_ptr[e]
//                  .. edge_opp_ptr[e + 1]]). The smooth mask (3/8, 1/8) is
//                  entry 0 of edge_masks; edge_mask[e] names the entry of
//                  every edge. The opposite vertices are skipped when
//                  beta = 0 (creases), as on the CPU.
//   vertex_points: y(v) = ce · x(ua) + ce · x(ub) + Σ_i cn · x(u_i) + cv · x(v)
//                  for parent vertex v with neighbours u_i
//                  (vertex_nbrs[vertex_ptr[v] .. vertex_ptr[v + 1]]) and mask
//                  vertex_masks[vertex_mask[v]]: entries 0 ..= max valence
//                  are the smooth masks by valence, the special masks
//                  (boundary, crease, corner, transition blends) follow.
//
// x and y are row-major f32 with d channels. One invocation per output row
// writes all d channels of it, each summed from +0 in the order above (the
// CPU kernel's order): deterministic, no atomics.

struct Params {
    // Vertices of the parent level (the first edge-point row of y).
    nv: u32,
    // Edges of the parent level.
    ne: u32,
    // Channels d.
    channels: u32,
    pad: u32,
}

struct Mask {
    // Weight of the vertex itself.
    cv: f32,
    // Weight of each neighbour.
    cn: f32,
    // Weight of each crease end (0 for none).
    ce: f32,
    ua: u32,
    ub: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> edges: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> edge_opp_ptr: array<u32>;
@group(0) @binding(3) var<storage, read> edge_opp: array<u32>;
@group(0) @binding(4) var<storage, read> edge_mask: array<u32>;
// (alpha, beta) of each mask.
@group(0) @binding(5) var<storage, read> edge_masks: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read> vertex_ptr: array<u32>;
@group(0) @binding(7) var<storage, read> vertex_nbrs: array<u32>;
@group(0) @binding(8) var<storage, read> vertex_mask: array<u32>;
@group(0) @binding(9) var<storage, read> vertex_masks: array<Mask>;
@group(0) @binding(10) var<storage, read> x: array<f32>;
@group(0) @binding(11) var<storage, read_write> y: array<f32>;

// Channels c0 .. c0 + 3 of row p of x (zeros past the last channel): a
// ring is gathered once per group of four channels.
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
fn edge_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (e >= params.ne) {
        return;
    }
    let d = params.channels;
    let ab = edges[e];
    let m = edge_masks[edge_mask[e]];
    let start = edge_opp_ptr[e];
    let end = edge_opp_ptr[e + 1u];
    let out = (params.nv + e) * d;
    // Four channels at a time, each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        acc = acc + m.x * load4_x(ab.x, c0);
        acc = acc + m.x * load4_x(ab.y, c0);
        if (m.y != 0.0) {
            for (var k = start; k < end; k = k + 1u) {
                acc = acc + m.y * load4_x(edge_opp[k], c0);
            }
        }
        store4(out, c0, acc);
    }
}

@compute @workgroup_size(256)
fn vertex_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (v >= params.nv) {
        return;
    }
    let d = params.channels;
    let m = vertex_masks[vertex_mask[v]];
    let start = vertex_ptr[v];
    let end = vertex_ptr[v + 1u];
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        if (m.ce != 0.0) {
            acc = acc + m.ce * load4_x(m.ua, c0);
            acc = acc + m.ce * load4_x(m.ub, c0);
        }
        if (m.cn != 0.0) {
            for (var k = start; k < end; k = k + 1u) {
                acc = acc + m.cn * load4_x(vertex_nbrs[k], c0);
            }
        }
        acc = acc + m.cv * load4_x(v, c0);
        store4(v * d, c0, acc);
    }
}
