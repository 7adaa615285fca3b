// Catmull-Clark on the edge-friend encoding (Kuth et al. 2023, §3.2–3.4),
// one dispatch per level for the connectivity (`ef_topology`) and one for
// the points (`ef_points`); each invocation runs the quad task of quad i
// (i < quads) and the vertex task of vertex i (i < vertices). No atomics:
// every element is written by one invocation.
//
// Encoding (as the CPU's `subla_catmark::edgefriend`): quad q is
// quads[4q .. 4q + 4] = (v0, v1, v2, v3); its on-edges v0v1 and v2v3 have
// the ids 2q and 2q + 1; friends[2q + k] is the id of the edge across its
// off-edge v1v2 (k = 0) or v3v0 (k = 1); loop_start[v] is a corner of v.
// The next level's points are laid out in chunks
// [vertex i, face i, edge 2i, edge 2i + 1] for i < min(V, F), then the
// vertices past F, or chunks of three for the quads past V.
//
// Sharpness (OpenSubdiv's rules): sharp[e] per edge id where the level has
// sharp edges (flags bit 0), vsharp[v] per vertex (bit 1); Chaikin's rule
// (bit 2) reads the children's sharpness sharp_next in the points pass.
// All rules as `subla_scheme::sdc`, sums in ring order (the CPU sorts
// them: the two differ by rounding only).

struct Params {
    // Quads of the level (ghosts included).
    quads: u32,
    // Vertices of the level (ghosts included).
    vertices: u32,
    // Channels of the points.
    channels: u32,
    // Bit 0: sharp edges; bit 1: sharp vertices; bit 2: Chaikin.
    flags: u32,
}

const SHARPNESS_INFINITE: f32 = 10.0;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> quads: array<u32>;
@group(0) @binding(2) var<storage, read> friends: array<u32>;
@group(0) @binding(3) var<storage, read> loop_start: array<u32>;
@group(0) @binding(4) var<storage, read> sharp: array<f32>;
@group(0) @binding(5) var<storage, read> vsharp: array<f32>;
@group(0) @binding(6) var<storage, read_write> quads_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> friends_out: array<u32>;
@group(0) @binding(8) var<storage, read_write> loop_out: array<u32>;
@group(0) @binding(9) var<storage, read_write> sharp_out: array<f32>;
@group(0) @binding(10) var<storage, read_write> vsharp_out: array<f32>;
@group(0) @binding(11) var<storage, read> sharp_next: array<f32>;
@group(0) @binding(12) var<storage, read> x: array<f32>;
@group(0) @binding(13) var<storage, read_write> y: array<f32>;

fn index(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

fn lay_vertex(v: u32) -> u32 {
    let m = min(params.vertices, params.quads);
    if (v < m) {
        return 4u * v;
    }
    return 4u * params.quads + (v - params.quads);
}

fn lay_face(q: u32) -> u32 {
    let m = min(params.vertices, params.quads);
    if (q < m) {
        return 4u * q + 1u;
    }
    return 4u * params.vertices + 3u * (q - params.vertices);
}

fn lay_edge(e: u32) -> u32 {
    let q = e >> 1u;
    let m = min(params.vertices, params.quads);
    if (q < m) {
        return 4u * q + 2u + (e & 1u);
    }
    return 4u * params.vertices + 3u * (q - params.vertices) + 1u + (e & 1u);
}

fn dec(s: f32) -> f32 {
    if (s <= 0.0) {
        return 0.0;
    }
    if (s >= SHARPNESS_INFINITE) {
        return SHARPNESS_INFINITE;
    }
    if (s > 1.0) {
        return s - 1.0;
    }
    return 0.0;
}

fn edge_sharpness(e: u32) -> f32 {
    if ((params.flags & 1u) == 0u) {
        return 0.0;
    }
    return sharp[e];
}

// The corner after c across its off-edge (Alg. 1, lines 9–11).
fn ring_next(c: u32) -> u32 {
    let q = c >> 2u;
    var k = 1u;
    if ((c & 3u) == 1u || (c & 3u) == 2u) {
        k = 0u;
    }
    return 2u * friends[2u * q + k] + (c & 1u);
}

// The id of the edge leaving corner c towards the next corner of its quad.
fn leaving_edge(c: u32) -> u32 {
    let q = c >> 2u;
    switch (c & 3u) {
        case 0u: { return 2u * q; }
        case 1u: { return friends[2u * q]; }
        case 2u: { return 2u * q + 1u; }
        default: { return friends[2u * q + 1u]; }
    }
}

fn next_in_quad(c: u32) -> u32 {
    return (c & ~3u) | ((c + 1u) & 3u);
}

// Chaikin's child sharpness of semi-sharp edge s at a vertex whose edges
// have sharpness summing to `semi_sum` over `semi_count` semi-sharp ones.
fn chaikin(s: f32, semi_sum: f32, semi_count: u32, n: u32) -> f32 {
    if (n < 2u) {
        return dec(s);
    }
    var blended = s;
    if (semi_count > 1u) {
        let avg = (semi_sum - s) / f32(semi_count - 1u);
        blended = 0.75 * s + 0.25 * avg;
    }
    return max(blended - 1.0, 0.0);
}

fn child_sharpness(s: f32, semi_sum: f32, semi_count: u32, n: u32) -> f32 {
    if (s <= 0.0) {
        return 0.0;
    }
    if (s >= SHARPNESS_INFINITE) {
        return SHARPNESS_INFINITE;
    }
    if ((params.flags & 4u) != 0u) {
        return chaikin(s, semi_sum, semi_count, n);
    }
    return dec(s);
}

@compute @workgroup_size(256)
fn ef_topology(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = index(wg, nwg, lid);
    if (i < params.quads) {
        let q = i;
        let g0 = friends[2u * q];
        let g1 = friends[2u * q + 1u];
        let f = lay_face(q);
        let e0 = lay_edge(g0);
        let e1 = lay_edge(g1);
        let a = lay_edge(2u * q);
        let b = lay_edge(2u * q + 1u);
        var w: array<u32, 4>;
        for (var k = 0u; k < 4u; k = k + 1u) {
            w[k] = lay_vertex(quads[4u * q + k]);
        }
        let o = 16u * q;
        quads_out[o + 0u] = w[0]; quads_out[o + 1u] = a; quads_out[o + 2u] = f; quads_out[o + 3u] = e1;
        quads_out[o + 4u] = w[1]; quads_out[o + 5u] = e0; quads_out[o + 6u] = f; quads_out[o + 7u] = a;
        quads_out[o + 8u] = w[2]; quads_out[o + 9u] = b; quads_out[o + 10u] = f; quads_out[o + 11u] = e0;
        quads_out[o + 12u] = w[3]; quads_out[o + 13u] = e1; quads_out[o + 14u] = f; quads_out[o + 15u] = b;
        let c = 4u * q;
        friends_out[2u * c] = 2u * (c + 1u) + 1u;
        friends_out[2u * c + 1u] = 2u * (2u * g1);
        friends_out[2u * (c + 1u)] = 2u * (c + 2u) + 1u;
        friends_out[2u * (c + 2u)] = 2u * (c + 3u) + 1u;
        friends_out[2u * (c + 2u) + 1u] = 2u * (2u * g0);
        friends_out[2u * (c + 3u)] = 2u * c + 1u;
        // The second friends of the neighbours' children at v1 and v3:
        // written here only (g0 and g1 are off-edges of q alone).
        friends_out[2u * (2u * g0 + 1u) + 1u] = 2u * (c + 1u);
        friends_out[2u * (2u * g1 + 1u) + 1u] = 2u * (c + 3u);
        loop_out[f] = 4u * c + 2u;
        loop_out[e0] = 4u * (c + 1u) + 1u;
        loop_out[e1] = 4u * (c + 3u) + 1u;
        if ((params.flags & 5u) == 1u) {
            // Uniform rule: child i's first edge is half of edge i of q;
            // its second, inside q, is smooth (zeroed by the host).
            sharp_out[8u * q + 0u] = dec(sharp[2u * q]);
            sharp_out[8u * q + 2u] = dec(sharp[g0]);
            sharp_out[8u * q + 4u] = dec(sharp[2u * q + 1u]);
            sharp_out[8u * q + 6u] = dec(sharp[g1]);
        }
    }
    if (i < params.vertices) {
        let v = i;
        let start = loop_start[v];
        let wv = lay_vertex(v);
        loop_out[wv] = 4u * start;
        if ((params.flags & 2u) != 0u) {
            vsharp_out[wv] = dec(vsharp[v]);
        }
        if ((params.flags & 5u) == 5u) {
            // Chaikin: the children's first edges at v, from the
            // semi-sharp edges around v.
            var semi_sum = 0.0;
            var semi_count = 0u;
            var n = 0u;
            var c = start;
            loop {
                let s = sharp[leaving_edge(c)];
                if (s > 0.0 && s < SHARPNESS_INFINITE) {
                    semi_sum = semi_sum + s;
                    semi_count = semi_count + 1u;
                }
                n = n + 1u;
                c = ring_next(c);
                if (c == start) { break; }
            }
            c = start;
            loop {
                sharp_out[2u * c] = child_sharpness(sharp[leaving_edge(c)], semi_sum, semi_count, n);
                c = ring_next(c);
                if (c == start) { break; }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Points

// Channels c0 .. c0 + 3 of point p (zeros past the last channel): the
// points kernel gathers each point once per group of four channels.
fn load4(p: u32, c0: u32) -> vec4<f32> {
    let d = params.channels;
    let base = p * d + c0;
    var r = vec4<f32>(0.0);
    r.x = x[base];
    if (c0 + 1u < d) { r.y = x[base + 1u]; }
    if (c0 + 2u < d) { r.z = x[base + 2u]; }
    if (c0 + 3u < d) { r.w = x[base + 3u]; }
    return r;
}

// Writes channels c0 .. c0 + 3 (those that exist) of the output point
// whose first channel is at `at`.
fn store4(at: u32, c0: u32, v: vec4<f32>) {
    let d = params.channels;
    y[at + c0] = v.x;
    if (c0 + 1u < d) { y[at + c0 + 1u] = v.y; }
    if (c0 + 2u < d) { y[at + c0 + 2u] = v.z; }
    if (c0 + 3u < d) { y[at + c0 + 3u] = v.w; }
}

// Channels c0 .. c0 + 3 of the face point of quad q.
fn face_acc(q: u32, c0: u32) -> vec4<f32> {
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        acc = acc + 0.25 * load4(quads[4u * q + k], c0);
    }
    return acc;
}

// (alpha, beta) of the edge point of off-edge k of quad q.
fn edge_weights(q: u32, k: u32) -> vec2<f32> {
    let g = friends[2u * q + k];
    let s = edge_sharpness(g);
    if (s <= 0.0) {
        return vec2<f32>(0.25, 0.25);
    }
    var ta = dec(s);
    var tb = ta;
    if ((params.flags & 4u) != 0u) {
        ta = sharp_next[2u * (4u * q + 1u + 2u * k)];
        tb = sharp_next[4u * g];
    }
    if (s >= SHARPNESS_INFINITE || (ta > 0.0 && tb > 0.0)) {
        return vec2<f32>(0.5, 0.0);
    }
    return vec2<f32>(s * 0.5 + (1.0 - s) * 0.25, (1.0 - s) * 0.25);
}

// Rules as `Rule::classify`: 0 smooth, 1 dart, 2 crease, 3 corner.
fn classify(sv: f32, sharp_edges: u32) -> u32 {
    if (sv > 0.0) {
        return 3u;
    }
    return min(sharp_edges, 3u);
}

struct VertexMask {
    cv: f32,
    cs: f32,
    ce: f32,
    ua: u32,
    ub: u32,
}

fn vertex_mask(v: u32, n: u32) -> VertexMask {
    let nf = f32(n);
    let smooth_v = (nf - 2.0) / nf;
    var m: VertexMask;
    m.cv = smooth_v;
    m.cs = 1.0;
    m.ce = 0.0;
    m.ua = v;
    m.ub = v;
    if ((params.flags & 3u) == 0u) {
        return m;
    }
    var sv = 0.0;
    if ((params.flags & 2u) != 0u) {
        sv = vsharp[v];
    }
    let chaikin_rule = (params.flags & 4u) != 0u;
    // One walk: counts, crease ends of the parent (sigma) and child (tau)
    // sharpness, and the sums of the transition weight.
    let start = loop_start[v];
    var k = 0u;
    var kc = 0u;
    var sig_first = v;
    var sig_last = v;
    var tau_first = v;
    var tau_last = v;
    var dsum = 0.0;
    var dcount = 0u;
    var c = start;
    loop {
        let s = edge_sharpness(leaving_edge(c));
        var t = dec(s);
        if (chaikin_rule) {
            t = sharp_next[2u * c];
        }
        let u = quads[next_in_quad(c)];
        if (s > 0.0) {
            if (k == 0u) { sig_first = u; }
            sig_last = u;
            k = k + 1u;
        }
        if (t > 0.0) {
            if (kc == 0u) { tau_first = u; }
            tau_last = u;
            kc = kc + 1u;
        }
        var decays = s > 0.0 && s <= 1.0;
        if (chaikin_rule) {
            decays = s > 0.0 && t <= 0.0;
        }
        if (decays) {
            dsum = dsum + s;
            dcount = dcount + 1u;
        }
        c = ring_next(c);
        if (c == start) { break; }
    }
    let rp = classify(sv, k);
    if (rp <= 1u) {
        return m;
    }
    let sv_child = dec(sv);
    let rc = classify(sv_child, kc);
    // Parent mask.
    var p: VertexMask;
    p.ua = sig_first;
    p.ub = sig_last;
    if (rp == 2u) {
        p.cv = 0.75; p.cs = 0.0; p.ce = 0.125;
    } else {
        p.cv = 1.0; p.cs = 0.0; p.ce = 0.0; p.ua = v; p.ub = v;
    }
    if (rc == rp) {
        return p;
    }
    var ch: VertexMask;
    ch.ua = tau_first;
    ch.ub = tau_last;
    if (rc <= 1u) {
        ch.cv = smooth_v; ch.cs = 1.0; ch.ce = 0.0; ch.ua = v; ch.ub = v;
    } else if (rc == 2u) {
        ch.cv = 0.75; ch.cs = 0.0; ch.ce = 0.125;
    } else {
        ch.cv = 1.0; ch.cs = 0.0; ch.ce = 0.0; ch.ua = v; ch.ub = v;
    }
    if (sv > 0.0 && sv_child <= 0.0) {
        dsum = dsum + sv;
        dcount = dcount + 1u;
    }
    var w = 0.0;
    if (dcount > 0u) {
        w = min(dsum / f32(dcount), 1.0);
    }
    var r: VertexMask;
    r.cv = w * p.cv + (1.0 - w) * ch.cv;
    r.cs = w * p.cs + (1.0 - w) * ch.cs;
    r.ce = w * p.ce + (1.0 - w) * ch.ce;
    if (p.ce != 0.0) {
        r.ua = p.ua; r.ub = p.ub;
    } else {
        r.ua = ch.ua; r.ub = ch.ub;
    }
    return r;
}

@compute @workgroup_size(256)
fn ef_points(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = index(wg, nwg, lid);
    let d = params.channels;
    if (i < params.quads) {
        let q = i;
        let fr = lay_face(q) * d;
        let w0 = edge_weights(q, 0u);
        let w1 = edge_weights(q, 1u);
        let g0 = friends[2u * q];
        let g1 = friends[2u * q + 1u];
        let r0 = lay_edge(g0) * d;
        let r1 = lay_edge(g1) * d;
        let v1 = quads[4u * q + 1u];
        let v2 = quads[4u * q + 2u];
        let v3 = quads[4u * q + 3u];
        let v0 = quads[4u * q];
        // Four channels at a time: every index and point read once per
        // group (once in all for d <= 4); per channel the same sums, in
        // the same order, as one channel at a time.
        for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
            let f = face_acc(q, c0);
            store4(fr, c0, f);
            var e = vec4<f32>(0.0);
            if (w0.y != 0.0) {
                e = w0.y * f + w0.y * face_acc(g0 >> 1u, c0);
            }
            store4(r0, c0, e + w0.x * load4(v1, c0) + w0.x * load4(v2, c0));
            e = vec4<f32>(0.0);
            if (w1.y != 0.0) {
                e = w1.y * f + w1.y * face_acc(g1 >> 1u, c0);
            }
            store4(r1, c0, e + w1.x * load4(v3, c0) + w1.x * load4(v0, c0));
        }
    }
    if (i < params.vertices) {
        let v = i;
        let start = loop_start[v];
        // One walk of the ring counts the valence and sums the first
        // group's neighbours (edge ends) and diagonals (opposite corners).
        var n = 0u;
        var nsum = vec4<f32>(0.0);
        var dsum = vec4<f32>(0.0);
        var c = start;
        loop {
            n = n + 1u;
            if (d > 0u) {
                nsum = nsum + load4(quads[next_in_quad(c)], 0u);
                dsum = dsum + load4(quads[c ^ 2u], 0u);
            }
            c = ring_next(c);
            if (c == start) { break; }
        }
        let m = vertex_mask(v, n);
        let nf = f32(n);
        let wn = 1.5 * m.cs / (nf * nf);
        let wd = 0.25 * m.cs / (nf * nf);
        let wv = m.cv + 0.25 * m.cs / nf;
        let out = lay_vertex(v) * d;
        for (var c0 = 0u; c0 < d; c0 = c0 + 4u) {
            if (c0 > 0u) {
                nsum = vec4<f32>(0.0);
                dsum = vec4<f32>(0.0);
                c = start;
                loop {
                    nsum = nsum + load4(quads[next_in_quad(c)], c0);
                    dsum = dsum + load4(quads[c ^ 2u], c0);
                    c = ring_next(c);
                    if (c == start) { break; }
                }
            }
            var acc = vec4<f32>(0.0);
            if (m.cs != 0.0) {
                acc = wn * nsum + wd * dsum;
            }
            if (m.ce != 0.0) {
                acc = acc + m.ce * load4(m.ua, c0) + m.ce * load4(m.ub, c0);
            }
            store4(out, c0, acc + wv * load4(v, c0));
        }
    }
}

// ---------------------------------------------------------------------------
// The real vertices of the finest level (those of the real quads, `quads`
// here being the real quad count) and the gather of their points.

@compute @workgroup_size(256)
fn ef_mark(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // One invocation per vertex: flagged where a real quad uses it. The
    // quads of vertex v are found around its loop (ghost quads come after
    // the real ones), so every flag is written by one invocation.
    let v = index(wg, nwg, lid);
    if (v >= params.vertices) {
        return;
    }
    let start = loop_start[v];
    var c = start;
    var real = 0u;
    loop {
        if ((c >> 2u) < params.quads) {
            real = 1u;
        }
        c = ring_next(c);
        if (c == start) { break; }
    }
    loop_out[v] = real;
}

@compute @workgroup_size(256)
fn ef_gather(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // `loop_start` holds the flags, `friends` their exclusive scan.
    let v = index(wg, nwg, lid);
    if (v >= params.vertices || loop_start[v] == 0u) {
        return;
    }
    let d = params.channels;
    let r = friends[v];
    for (var ch = 0u; ch < d; ch = ch + 1u) {
        y[r * d + ch] = x[v * d + ch];
    }
}

@compute @workgroup_size(256)
fn ef_scatter(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // The real rows x into the level's layout y (ghost rows 0); flags and
    // offsets as in `ef_gather`.
    let v = index(wg, nwg, lid);
    if (v >= params.vertices) {
        return;
    }
    let d = params.channels;
    let real = loop_start[v] != 0u;
    let r = friends[v];
    for (var ch = 0u; ch < d; ch = ch + 1u) {
        var value = 0.0;
        if (real) {
            value = x[r * d + ch];
        }
        y[v * d + ch] = value;
    }
}
