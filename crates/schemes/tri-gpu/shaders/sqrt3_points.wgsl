// Kobbelt's √3 subdivision, one step of eval (Kobbelt 2000; Mlakar et al.
// 2020, Appendix A, Eq. 24-27). Two entry points, both reading only the
// parent level x, so they are independent:
//
//   new_points:    per parent triangle f, its new vertices, child rows
//                  nv + new_ptr[f] .. nv + new_ptr[f + 1]:
//                  * one: the face point (x(a) + x(b) + x(c)) / 3 (Eq. 26);
//                  * two (a boundary triangle on a boundary-splitting step):
//                    the trisection points of its boundary edge a -> b
//                    (leaving corner boundary_corner[f]), with p the other
//                    boundary neighbour of a and q that of b:
//                    (p + 16 a + 10 b) / 27, then (10 a + 16 b + q) / 27.
//   vertex_points: per parent vertex v of valence n:
//                  * interior: Σ_i (α(n) / n) · x(u_i) + (1 − α(n)) · x(v)
//                    (weights[n] holds (1 − α(n), α(n) / n));
//                  * boundary, boundary-splitting step:
//                    (4 p + 4 q + 19 v) / 27 with p, q its boundary
//                    neighbours; otherwise it stays.
//
// x and y are row-major f32 with d channels. One invocation per parent
// triangle or vertex writes every channel of its rows, each summed from +0
// in the order above (the CPU kernel's order): deterministic, no atomics.

struct Params {
    // Vertices of the parent level (the first new-vertex row of y).
    nv: u32,
    // Triangles of the parent level.
    nf: u32,
    // Channels d.
    channels: u32,
    // 1 on a boundary-splitting step.
    splits: u32,
}

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> face_verts: array<u32>;
@group(0) @binding(2) var<storage, read> new_ptr: array<u32>;
@group(0) @binding(3) var<storage, read> boundary_corner: array<u32>;
@group(0) @binding(4) var<storage, read> boundary_nbrs: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> vertex_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> vertex_nbrs: array<u32>;
@group(0) @binding(7) var<storage, read> weights: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> x: array<f32>;
@group(0) @binding(9) var<storage, read_write> y: array<f32>;

// The boundary neighbour of boundary vertex a other than b.
fn other_boundary(a: u32, b: u32) -> u32 {
    let n = boundary_nbrs[a];
    if (n.x == b) {
        return n.y;
    }
    return n.x;
}

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
fn new_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let f = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (f >= params.nf) {
        return;
    }
    let d = params.channels;
    let first = params.nv + new_ptr[f];
    if (new_ptr[f + 1u] - new_ptr[f] == 1u) {
        let w = 1.0 / 3.0;
        let a = face_verts[3u * f];
        let b = face_verts[3u * f + 1u];
        let c = face_verts[3u * f + 2u];
        for (var k = 0u; k < d; k = k + 1u) {
            var acc = 0.0;
            acc = acc + w * x[a * d + k];
            acc = acc + w * x[b * d + k];
            acc = acc + w * x[c * d + k];
            y[first * d + k] = acc;
        }
        return;
    }
    let bc = boundary_corner[f];
    let a = face_verts[bc];
    let b = face_verts[3u * f + (bc % 3u + 1u) % 3u];
    let p = other_boundary(a, b);
    let q = other_boundary(b, a);
    let w1 = 1.0 / 27.0;
    let w16 = 16.0 / 27.0;
    let w10 = 10.0 / 27.0;
    for (var k = 0u; k < d; k = k + 1u) {
        var acc = 0.0;
        acc = acc + w1 * x[p * d + k];
        acc = acc + w16 * x[a * d + k];
        acc = acc + w10 * x[b * d + k];
        y[first * d + k] = acc;
        var acc2 = 0.0;
        acc2 = acc2 + w10 * x[a * d + k];
        acc2 = acc2 + w16 * x[b * d + k];
        acc2 = acc2 + w1 * x[q * d + k];
        y[(first + 1u) * d + k] = acc2;
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
    let bn = boundary_nbrs[v];
    let start = vertex_ptr[v];
    let end = vertex_ptr[v + 1u];
    if (bn.x != NONE) {
        let w4 = 4.0 / 27.0;
        let w19 = 19.0 / 27.0;
        for (var k = 0u; k < d; k = k + 1u) {
            if (params.splits != 0u) {
                var acc = 0.0;
                acc = acc + w4 * x[bn.x * d + k];
                acc = acc + w4 * x[bn.y * d + k];
                acc = acc + w19 * x[v * d + k];
                y[v * d + k] = acc;
            } else {
                y[v * d + k] = x[v * d + k];
            }
        }
        return;
    }
    let w = weights[end - start];
    // Four channels at a time, each summed as one channel at a time.
    for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
        var acc = vec4<f32>(0.0);
        for (var i = start; i < end; i = i + 1u) {
            acc = acc + w.y * load4_x(vertex_nbrs[i], c0);
        }
        acc = acc + w.x * load4_x(v, c0);
        store4(v * d, c0, acc);
    }
}
