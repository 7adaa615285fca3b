// Catmull-Clark build pass of one level on the device (Mlakar et al. 2020,
// §5.1 and §5.3; OpenSubdiv's Sdc rules, as `subla_catmark::rules` and the
// CPU `level::masks` write them): from the parent level's topology and
// effective sharpness, everything the eval kernels of this level read that
// is not topology, and the child level's sharpness and holes.
//
// Entry points (one invocation per element, each output written by exactly
// one invocation, no atomics):
//
//   edge_faces_main    per parent edge:   edge_faces[k] = face of use k
//   edge_masks_main    per parent edge:   edge_mask[e] (0: smooth, e + 1:
//                                         own entry), edge_masks[e + 1] =
//                                         (α, β)
//   edge_children      per parent edge:   sharpness of its two child halves
//                                         (uniform or Chaikin)
//   vertex_rings       per parent vertex: vertex_faces (face of each
//                                         corner), vertex_nbrs (other end of
//                                         each edge)
//   vertex_masks_main  per parent vertex: vertex_mask[v] (its valence when
//                                         the smooth mask applies, else
//                                         vertex_base + v), vertex_masks
//                                         [vertex_base + v], and the child
//                                         vertex sharpness
//   child_holes        per parent corner: the hole flag of the child face
//                                         of that corner
//
// The smooth entries 0 ..= max valence of vertex_masks and entry 0 of
// edge_masks are written by the host. Sharpness arithmetic is f32 as on the
// CPU (which rounds f64 weights to f32 once; a driver may fuse a multiply
// and an add here, so weights may differ in the last bit).
//
// Every global has its own binding, so each entry point's automatic layout
// holds only what it uses. Grids are 2-D: the flat workgroup index is
// wg.y * num_workgroups.x + wg.x.

struct Params {
    // Parent vertices, faces, edges, corners.
    nv: u32,
    nf: u32,
    ne: u32,
    nc: u32,
    // Bit 0: Chaikin crease method; bit 1: smooth triangles; bit 2: every
    // parent face is a quad (the face of corner c is c / 4, §4.4).
    flags: u32,
    // First special entry of vertex_masks (largest valence + 1).
    vertex_base: u32,
    pad0: u32,
    pad1: u32,
}

struct Mask {
    cv: f32,
    ring: f32,
    crease: f32,
    ua: u32,
    ub: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> face_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> corner_faces: array<u32>;
@group(0) @binding(3) var<storage, read> edges: array<u32>;
@group(0) @binding(4) var<storage, read> edge_corner_ptr: array<u32>;
@group(0) @binding(5) var<storage, read> edge_corners: array<u32>;
@group(0) @binding(6) var<storage, read> vertex_corner_ptr: array<u32>;
@group(0) @binding(7) var<storage, read> vertex_corners: array<u32>;
@group(0) @binding(8) var<storage, read> vertex_edge_ptr: array<u32>;
@group(0) @binding(9) var<storage, read> vertex_edges: array<u32>;
@group(0) @binding(10) var<storage, read> edge_sharpness: array<f32>;
@group(0) @binding(11) var<storage, read> vertex_sharpness: array<f32>;
@group(0) @binding(12) var<storage, read> halves: array<u32>;
@group(0) @binding(13) var<storage, read_write> edge_faces: array<u32>;
@group(0) @binding(14) var<storage, read_write> edge_mask: array<u32>;
@group(0) @binding(15) var<storage, read_write> edge_masks: array<vec2<f32>>;
@group(0) @binding(16) var<storage, read_write> vertex_faces: array<u32>;
@group(0) @binding(17) var<storage, read_write> vertex_nbrs: array<u32>;
@group(0) @binding(18) var<storage, read_write> vertex_mask: array<u32>;
@group(0) @binding(19) var<storage, read_write> vertex_masks: array<Mask>;
@group(0) @binding(20) var<storage, read_write> child_edge_sharpness: array<f32>;
@group(0) @binding(21) var<storage, read_write> child_vertex_sharpness: array<f32>;
@group(0) @binding(22) var<storage, read> holes: array<u32>;
@group(0) @binding(23) var<storage, read_write> child_holes: array<u32>;

// OpenSubdiv's Sdc::Crease::SHARPNESS_INFINITE.
const INFINITE: f32 = 10.0;

// Rules of a vertex (Sdc::Crease::Rule).
const SMOOTH: u32 = 0u;
const DART: u32 = 1u;
const CREASE: u32 = 2u;
const CORNER: u32 = 3u;


// The face of corner c: c / 4 on a level of quads only (§4.4: no lookup),
// corner_faces[c] otherwise.
fn face_of(c: u32) -> u32 {
    if ((params.flags & 4u) != 0u) {
        return c >> 2u;
    }
    return corner_faces[c];
}

fn flat_index(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

fn chaikin_method() -> bool {
    return (params.flags & 1u) != 0u;
}

// Uniform decrement of one level.
fn dec(s: f32) -> f32 {
    if (s <= 0.0) {
        return 0.0;
    }
    if (s >= INFINITE) {
        return INFINITE;
    }
    if (s > 1.0) {
        return s - 1.0;
    }
    return 0.0;
}

fn is_semi(s: f32) -> bool {
    return s > 0.0 && s < INFINITE;
}

// The other endpoint of edge e at v.
fn other(e: u32, v: u32) -> u32 {
    let a = edges[2u * e];
    return select(a, edges[2u * e + 1u], a == v);
}

// Sum and count of the semi-sharp edges at v, in v's edge order (Chaikin's
// neighbourhood average).
struct Semi {
    sum: f32,
    count: u32,
    edges: u32,
}

fn semi_at(v: u32) -> Semi {
    var r = Semi(0.0, 0u, 0u);
    let e0 = vertex_edge_ptr[v];
    let e1 = vertex_edge_ptr[v + 1u];
    r.edges = e1 - e0;
    if (!chaikin_method()) {
        return r;
    }
    for (var k = e0; k < e1; k = k + 1u) {
        let s = edge_sharpness[vertex_edges[k]];
        if (is_semi(s)) {
            r.sum = r.sum + s;
            r.count = r.count + 1u;
        }
    }
    return r;
}

// Sharpness of the child of an edge of sharpness s at an endpoint whose
// edges give `semi` (rules::tau_at).
fn tau(s: f32, semi: Semi) -> f32 {
    if (s <= 0.0) {
        return 0.0;
    }
    if (s >= INFINITE) {
        return INFINITE;
    }
    if (!chaikin_method() || semi.edges < 2u) {
        return dec(s);
    }
    var blended = s;
    if (semi.count > 1u) {
        let avg = (semi.sum - s) / f32(semi.count - 1u);
        blended = 0.75 * s + 0.25 * avg;
    }
    let r = blended - 1.0;
    return select(0.0, r, r > 0.0);
}

fn classify(vertex_s: f32, sharp_edges: u32) -> u32 {
    if (vertex_s > 0.0) {
        return CORNER;
    }
    return min(sharp_edges, CORNER);
}

fn face_order(f: u32) -> u32 {
    return face_ptr[f + 1u] - face_ptr[f];
}

@compute @workgroup_size(256)
fn edge_faces_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = flat_index(wg, nwg, lid);
    if (e >= params.ne) {
        return;
    }
    for (var k = edge_corner_ptr[e]; k < edge_corner_ptr[e + 1u]; k = k + 1u) {
        edge_faces[k] = face_of(edge_corners[k]);
    }
}

@compute @workgroup_size(256)
fn edge_masks_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = flat_index(wg, nwg, lid);
    if (e >= params.ne) {
        return;
    }
    let s = edge_sharpness[e];
    let lo = edge_corner_ptr[e];
    let k = edge_corner_ptr[e + 1u] - lo;
    var alpha_s = 0.25;
    var beta_s = 0.25;
    var special = false;
    if (k == 2u) {
        if ((params.flags & 2u) != 0u) {
            let tri0 = face_order(face_of(edge_corners[lo])) == 3u;
            let tri1 = face_order(face_of(edge_corners[lo + 1u])) == 3u;
            if (tri0 || tri1) {
                let t1 = select(0.25, 0.47, tri0);
                let t2 = select(0.25, 0.47, tri1);
                beta_s = 0.5 * (t1 + t2);
                alpha_s = 0.5 * (1.0 - 2.0 * beta_s);
                special = true;
            }
        }
    } else {
        beta_s = 1.0 / (2.0 * f32(max(k, 1u)));
        special = true;
    }
    var m = vec2<f32>(alpha_s, beta_s);
    if (s > 0.0) {
        special = true;
        let a = edges[2u * e];
        let b = edges[2u * e + 1u];
        let crease = s >= INFINITE || (tau(s, semi_at(a)) > 0.0 && tau(s, semi_at(b)) > 0.0);
        if (crease) {
            m = vec2<f32>(0.5, 0.0);
        } else {
            m = vec2<f32>(s * 0.5 + (1.0 - s) * alpha_s, (1.0 - s) * beta_s);
        }
    }
    if (special) {
        edge_mask[e] = e + 1u;
        edge_masks[e + 1u] = m;
    } else {
        edge_mask[e] = 0u;
    }
}

@compute @workgroup_size(256)
fn edge_children(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = flat_index(wg, nwg, lid);
    if (e >= params.ne) {
        return;
    }
    let s = edge_sharpness[e];
    var t0 = 0.0;
    var t1 = 0.0;
    if (s > 0.0) {
        t0 = tau(s, semi_at(edges[2u * e]));
        t1 = tau(s, semi_at(edges[2u * e + 1u]));
    }
    child_edge_sharpness[halves[2u * e]] = t0;
    child_edge_sharpness[halves[2u * e + 1u]] = t1;
}

@compute @workgroup_size(256)
fn vertex_rings(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat_index(wg, nwg, lid);
    if (v >= params.nv) {
        return;
    }
    for (var k = vertex_corner_ptr[v]; k < vertex_corner_ptr[v + 1u]; k = k + 1u) {
        vertex_faces[k] = face_of(vertex_corners[k]);
    }
    for (var k = vertex_edge_ptr[v]; k < vertex_edge_ptr[v + 1u]; k = k + 1u) {
        vertex_nbrs[k] = other(vertex_edges[k], v);
    }
}

// A vertex mask before the ring weight is divided by n²: (cv, cs, ce) and
// the crease ends.
struct Raw {
    cv: f32,
    cs: f32,
    ce: f32,
    ua: u32,
    ub: u32,
}

// The first and last edge at v (in v's edge order) whose sharpness, from
// the parent (`child` false) or of its child at v (`child` true), is > 0:
// their other endpoints.
fn ends(v: u32, child: bool, semi: Semi) -> vec2<u32> {
    let e0 = vertex_edge_ptr[v];
    let e1 = vertex_edge_ptr[v + 1u];
    var first = e1;
    var last = e1;
    for (var k = e0; k < e1; k = k + 1u) {
        var s = edge_sharpness[vertex_edges[k]];
        if (child) {
            s = tau(s, semi);
        }
        if (s > 0.0) {
            if (first == e1) {
                first = k;
            }
            last = k;
        }
    }
    if (first == e1) {
        first = e0;
        last = e0;
    }
    return vec2<u32>(other(vertex_edges[first], v), other(vertex_edges[last], v));
}

fn mask_of(rule: u32, v: u32, n: u32, child: bool, semi: Semi) -> Raw {
    if (rule == SMOOTH || rule == DART) {
        let nf = f32(n);
        return Raw((nf - 2.0) / nf, 1.0, 0.0, v, v);
    }
    if (rule == CREASE) {
        let u = ends(v, child, semi);
        return Raw(0.75, 0.0, 0.125, u.x, u.y);
    }
    return Raw(1.0, 0.0, 0.0, v, v);
}

fn write_vertex_mask(v: u32, n: u32, m: Raw) {
    var ring = 0.0;
    if (m.cs != 0.0 && n > 0u) {
        let nf = f32(n);
        ring = m.cs / (nf * nf);
    }
    let slot = params.vertex_base + v;
    vertex_mask[v] = slot;
    vertex_masks[slot] = Mask(m.cv, ring, m.ce, m.ua, m.ub);
}

@compute @workgroup_size(256)
fn vertex_masks_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat_index(wg, nwg, lid);
    if (v >= params.nv) {
        return;
    }
    let sv = vertex_sharpness[v];
    let sv_child = dec(sv);
    child_vertex_sharpness[v] = sv_child;
    let e0 = vertex_edge_ptr[v];
    let e1 = vertex_edge_ptr[v + 1u];
    let n = e1 - e0;
    let n_faces = vertex_corner_ptr[v + 1u] - vertex_corner_ptr[v];
    var k = 0u;
    for (var i = e0; i < e1; i = i + 1u) {
        if (edge_sharpness[vertex_edges[i]] > 0.0) {
            k = k + 1u;
        }
    }
    let rp = classify(sv, k);
    let smooth_ok = n == n_faces && n > 0u;
    let rp_smooth = rp == SMOOTH || rp == DART;
    if (rp_smooth && smooth_ok) {
        vertex_mask[v] = n;
        return;
    }
    if (rp_smooth) {
        // Unreachable for prepared meshes: keep the vertex in place.
        write_vertex_mask(v, n, Raw(1.0, 0.0, 0.0, v, v));
        return;
    }
    let semi = semi_at(v);
    var kc = 0u;
    for (var i = e0; i < e1; i = i + 1u) {
        if (tau(edge_sharpness[vertex_edges[i]], semi) > 0.0) {
            kc = kc + 1u;
        }
    }
    let rc = classify(sv_child, kc);
    let mp = mask_of(rp, v, n, false, semi);
    let rc_smooth = rc == SMOOTH || rc == DART;
    if (rc == rp || (rc_smooth && !smooth_ok)) {
        write_vertex_mask(v, n, mp);
        return;
    }
    let mc = mask_of(rc, v, n, true, semi);
    // The transition weight (rules::vertex_transition_weight).
    var sum = 0.0;
    var count = 0u;
    if (sv > 0.0 && sv_child <= 0.0) {
        sum = sv;
        count = 1u;
    }
    for (var i = e0; i < e1; i = i + 1u) {
        let s = edge_sharpness[vertex_edges[i]];
        var counts = s > 0.0 && s <= 1.0;
        if (chaikin_method()) {
            counts = s > 0.0 && tau(s, semi) <= 0.0;
        }
        if (counts) {
            sum = sum + s;
            count = count + 1u;
        }
    }
    var w = 0.0;
    if (count > 0u) {
        w = min(sum / f32(count), 1.0);
    }
    var ua = mc.ua;
    var ub = mc.ub;
    if (mp.ce != 0.0) {
        ua = mp.ua;
        ub = mp.ub;
    }
    let blended = Raw(
        w * mp.cv + (1.0 - w) * mc.cv,
        w * mp.cs + (1.0 - w) * mc.cs,
        w * mp.ce + (1.0 - w) * mc.ce,
        ua,
        ub,
    );
    write_vertex_mask(v, n, blended);
}

@compute @workgroup_size(256)
fn child_holes_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat_index(wg, nwg, lid);
    if (c >= params.nc) {
        return;
    }
    child_holes[c] = holes[face_of(c)];
}
