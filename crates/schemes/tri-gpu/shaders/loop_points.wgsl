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
    for (var c = 0u; c < d; c = c + 1u) {
        var acc = 0.0;
        acc = acc + m.x * x[ab.x * d + c];
        acc = acc + m.x * x[ab.y * d + c];
        if (m.y != 0.0) {
            for (var k = start; k < end; k = k + 1u) {
                acc = acc + m.y * x[edge_opp[k] * d + c];
            }
        }
        y[out + c] = acc;
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
    for (var c = 0u; c < d; c = c + 1u) {
        var acc = 0.0;
        if (m.ce != 0.0) {
            acc = acc + m.ce * x[m.ua * d + c];
            acc = acc + m.ce * x[m.ub * d + c];
        }
        if (m.cn != 0.0) {
            for (var k = start; k < end; k = k + 1u) {
                acc = acc + m.cn * x[vertex_nbrs[k] * d + c];
            }
        }
        acc = acc + m.cv * x[v * d + c];
        y[v * d + c] = acc;
    }
}
