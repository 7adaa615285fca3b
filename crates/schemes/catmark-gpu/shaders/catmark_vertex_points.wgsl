// Catmull-Clark vertex points of one level (Mlakar et al. 2020, Eq. 11,
// §5.1, §5.3): for parent vertex v with mask (cv, ring, crease, ua, ub),
//
//   y(v, c) = Σ_k ring · fp(vertex_faces[k], c)      k in vertex_corner_ptr[v] .. [v + 1]
//           + Σ_k ring · x(vertex_nbrs[k], c)        k in vertex_edge_ptr[v] .. [v + 1]
//           + crease · x(ua, c) + crease · x(ub, c)
//           + cv · x(v, c),
//
// fp the face points already written to y (rows nv ..) by `face_points`,
// vertex_faces the face of each corner of v (corner order), vertex_nbrs the
// other endpoint of each edge at v (edge order). The ring terms are skipped
// when ring = 0 and the crease terms when crease = 0, as on the CPU.
//
// Masks: entries 0 ..= V of vertex_masks are the smooth masks of valence
// n = 0 ..= V, cv = (n - 2) / n and ring = 1 / n² (cv = 1, ring = 0 for an
// isolated vertex); the special masks (boundary, crease, corner, dart and
// transition rules) follow in vertex order, with ring = cs / n². Weights
// are computed in f64 and rounded to f32 on the host, as the CPU kernel
// rounds them. vertex_mask[v] names the entry of every vertex.
//
// x is the parent level, y the whole child level, both row-major f32 with
// d channels. One invocation per vertex writes all d channels of its row,
// each summed from +0 in the order above: deterministic, no atomics.

struct Params {
    // Vertices of the parent level.
    count: u32,
    // Channels d.
    channels: u32,
    // First vertex-point row of y (0).
    out_row: u32,
    // First face-point row of y (vertex count of the parent).
    face_row: u32,
}

struct Mask {
    cv: f32,
    ring: f32,
    crease: f32,
    ua: u32,
    ub: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> vertex_corner_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_faces: array<u32>;
@group(0) @binding(3) var<storage, read> vertex_edge_ptr: array<u32>;
@group(0) @binding(4) var<storage, read> vertex_nbrs: array<u32>;
@group(0) @binding(5) var<storage, read> vertex_mask: array<u32>;
@group(0) @binding(6) var<storage, read> vertex_masks: array<Mask>;
@group(0) @binding(7) var<storage, read> x: array<f32>;
@group(0) @binding(8) var<storage, read_write> y: array<f32>;

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
fn vertex_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (v >= params.count) {
        return;
    }
    let d = params.channels;
    let m = vertex_masks[vertex_mask[v]];
    let c0 = vertex_corner_ptr[v];
    let c1 = vertex_corner_ptr[v + 1u];
    let e0 = vertex_edge_ptr[v];
    let e1 = vertex_edge_ptr[v + 1u];
    let out = (params.out_row + v) * d;
    // Four channels at a time (every index read once per group), each
    // summed as one channel at a time.
    for (var ch = 0u; ch < d; ch = ch + 4u) {
        var acc = vec4<f32>(0.0);
        if (m.ring != 0.0) {
            for (var k = c0; k < c1; k = k + 1u) {
                acc = acc + m.ring * load4_y(params.face_row + vertex_faces[k], ch);
            }
            for (var k = e0; k < e1; k = k + 1u) {
                acc = acc + m.ring * load4_x(vertex_nbrs[k], ch);
            }
        }
        if (m.crease != 0.0) {
            acc = acc + m.crease * load4_x(m.ua, ch);
            acc = acc + m.crease * load4_x(m.ub, ch);
        }
        acc = acc + m.cv * load4_x(v, ch);
        store4(out, ch, acc);
    }
}
