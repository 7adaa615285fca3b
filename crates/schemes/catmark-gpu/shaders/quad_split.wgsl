// The uniform quad split of a MANIFOLD topology (Mlakar et al. 2020, Eq. 12
// and Alg. 3), the same numbering as the CPU `Topology::split_quads`
// (`crates/mesh/src/split.rs`, `split_manifold`): child vertices are the
// parent vertices, then face points, then edge points; child faces corner
// after corner; child edges are the two halves of each parent edge grouped
// by parent vertex (block A, 2|e|), then one interior edge per parent corner
// face by face, within a face by parent edge id (block B, |c|).
//
// Several entry points, run in this order by `subla-catmark-gpu`
// (`split.rs`): `halves`, `corners`, `edge_counts`, `child_edges`,
// `child_faces`, `child_corner_edges`, `vertex_corners`, `vertex_edges`,
// `vertex_tags`; then the exclusive scan of `counts` (the child's
// `edge_corner_ptr`, `subla_gpu::scan`); then `edge_uses_a`, `edge_uses_b`.
// Every global has its own binding number, so that each entry point's
// automatic layout holds just the bindings it uses (at most 8 storage
// buffers each).
//
// One invocation per output element (or per child vertex / parent corner
// for the ragged and fixed-size slots); every element is written by exactly
// one invocation; offsets come from the parent's pointer arrays in closed
// form. No atomics: the results equal the CPU's bit for bit. Grids are 2-D
// beyond 65 535 workgroups: flat index `wg.y * nwg.x + wg.x`.

struct Params {
    // Parent vertices, faces, edges, corners.
    nv: u32,
    nf: u32,
    ne: u32,
    nc: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// The parent (read only).
@group(0) @binding(1) var<storage, read> p_face_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> p_face_verts: array<u32>;
@group(0) @binding(3) var<storage, read> p_corner_face: array<u32>;
@group(0) @binding(4) var<storage, read> p_corner_edge: array<u32>;
// Flat: edges[2e + j] is endpoint j of edge e.
@group(0) @binding(5) var<storage, read> p_edges: array<u32>;
@group(0) @binding(6) var<storage, read> p_edge_corner_ptr: array<u32>;
@group(0) @binding(7) var<storage, read> p_edge_corners: array<u32>;
@group(0) @binding(8) var<storage, read> p_edge_tags: array<u32>;
@group(0) @binding(9) var<storage, read> p_vertex_corner_ptr: array<u32>;
@group(0) @binding(10) var<storage, read> p_vertex_corners: array<u32>;
@group(0) @binding(11) var<storage, read> p_vertex_edge_ptr: array<u32>;
@group(0) @binding(12) var<storage, read> p_vertex_edges: array<u32>;
@group(0) @binding(13) var<storage, read> p_vertex_tags: array<u32>;

// Scratch, written by one entry point and read by later ones.
// halves[2e + j]: the child edge joining endpoint j of e to e's edge point.
@group(0) @binding(14) var<storage, read_write> halves: array<u32>;
// interior[c]: the child edge (face point, edge point of c's edge).
@group(0) @binding(15) var<storage, read_write> interior: array<u32>;
// sorted[s + r]: the corner of rank r in its face (face start s).
@group(0) @binding(16) var<storage, read_write> sorted: array<u32>;
@group(0) @binding(17) var<storage, read_write> next: array<u32>;
@group(0) @binding(18) var<storage, read_write> prev: array<u32>;
// a_code[k] = 2e + j for block-A child edge k (a half of e at endpoint j).
@group(0) @binding(19) var<storage, read_write> a_code: array<u32>;
// Uses per child edge, then (scanned in place) the child's edge_corner_ptr.
@group(0) @binding(20) var<storage, read_write> counts: array<u32>;

// The child (written).
@group(0) @binding(21) var<storage, read_write> c_face_ptr: array<u32>;
@group(0) @binding(22) var<storage, read_write> c_face_verts: array<u32>;
@group(0) @binding(23) var<storage, read_write> c_corner_face: array<u32>;
@group(0) @binding(24) var<storage, read_write> c_corner_edge: array<u32>;
@group(0) @binding(25) var<storage, read_write> c_edges: array<u32>;
@group(0) @binding(26) var<storage, read_write> c_edge_corners: array<u32>;
@group(0) @binding(27) var<storage, read_write> c_edge_tags: array<u32>;
@group(0) @binding(28) var<storage, read_write> c_vertex_corner_ptr: array<u32>;
@group(0) @binding(29) var<storage, read_write> c_vertex_corners: array<u32>;
@group(0) @binding(30) var<storage, read_write> c_vertex_edge_ptr: array<u32>;
@group(0) @binding(31) var<storage, read_write> c_vertex_edges: array<u32>;
@group(0) @binding(32) var<storage, read_write> c_vertex_tags: array<u32>;

// The edge and vertex tag bit BOUNDARY (edge_tag / vertex_tag).
const BOUNDARY: u32 = 1u;

fn flat(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

// Sorts the first n (at most 4) entries of a small array.
fn sort4(a: ptr<function, array<u32, 4>>, n: u32) {
    for (var i = 1u; i < n; i = i + 1u) {
        var j = i;
        loop {
            if (j == 0u || (*a)[j - 1u] <= (*a)[j]) {
                break;
            }
            let t = (*a)[j - 1u];
            (*a)[j - 1u] = (*a)[j];
            (*a)[j] = t;
            j = j - 1u;
        }
    }
}

// One invocation per half i = 2e + j: the position of e in the (id-ordered)
// edge list of its endpoint j, by binary search.
@compute @workgroup_size(256)
fn halves_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat(wg, nwg, lid);
    if (i >= 2u * params.ne) {
        return;
    }
    let e = i / 2u;
    let v = p_edges[i];
    var lo = p_vertex_edge_ptr[v];
    var hi = p_vertex_edge_ptr[v + 1u];
    while (lo < hi) {
        let mid = lo + (hi - lo) / 2u;
        if (p_vertex_edges[mid] < e) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    halves[i] = lo;
}

// One invocation per parent corner c: its rank in its face by
// (edge id, corner), counted (the host refuses faces above a maximum
// order), the interior edge id 2|e| + face start + rank, the inverse
// permutation `sorted`, and the next and previous corners.
@compute @workgroup_size(256)
fn corners(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat(wg, nwg, lid);
    if (c >= params.nc) {
        return;
    }
    let f = p_corner_face[c];
    let s = p_face_ptr[f];
    let t = p_face_ptr[f + 1u];
    let e = p_corner_edge[c];
    var rank = 0u;
    for (var k = s; k < t; k = k + 1u) {
        let x = p_corner_edge[k];
        if (x < e || (x == e && k < c)) {
            rank = rank + 1u;
        }
    }
    interior[c] = 2u * params.ne + s + rank;
    sorted[s + rank] = c;
    next[c] = select(c + 1u, s, c + 1u == t);
    prev[c] = select(c - 1u, t - 1u, c == s);
}

// One invocation per child edge k (and one past the end): its number of
// uses (scanned next into the child's edge_corner_ptr), its tag, and for
// block A the half it is (a_code).
@compute @workgroup_size(256)
fn edge_counts(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = flat(wg, nwg, lid);
    let na = 2u * params.ne;
    if (k > na + params.nc) {
        return;
    }
    if (k < na) {
        let e = p_vertex_edges[k];
        counts[k] = p_edge_corner_ptr[e + 1u] - p_edge_corner_ptr[e];
        c_edge_tags[k] = p_edge_tags[e] & BOUNDARY;
        a_code[k] = 2u * e + select(1u, 0u, halves[2u * e] == k);
    } else if (k < na + params.nc) {
        counts[k] = 2u;
        c_edge_tags[k] = 0u;
    } else {
        counts[k] = 0u;
    }
}

// One invocation per child edge: (parent vertex, edge point) for block A,
// (face point, edge point) for block B.
@compute @workgroup_size(256)
fn child_edges(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = flat(wg, nwg, lid);
    let na = 2u * params.ne;
    if (k >= na + params.nc) {
        return;
    }
    let base_e = params.nv + params.nf;
    if (k < na) {
        let code = a_code[k];
        c_edges[2u * k] = p_edges[code];
        c_edges[2u * k + 1u] = base_e + code / 2u;
    } else {
        let c = sorted[k - na];
        c_edges[2u * k] = params.nv + p_corner_face[c];
        c_edges[2u * k + 1u] = base_e + p_corner_edge[c];
    }
}

// One invocation per parent corner c (and one past the end for the last
// face_ptr entry): child face c = (v, edge point out, face point, edge
// point in), its corner faces and face_ptr.
@compute @workgroup_size(256)
fn child_faces(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat(wg, nwg, lid);
    if (c > params.nc) {
        return;
    }
    c_face_ptr[c] = 4u * c;
    if (c == params.nc) {
        return;
    }
    let base_e = params.nv + params.nf;
    let p = prev[c];
    let q = 4u * c;
    c_face_verts[q] = p_face_verts[c];
    c_face_verts[q + 1u] = base_e + p_corner_edge[c];
    c_face_verts[q + 2u] = params.nv + p_corner_face[c];
    c_face_verts[q + 3u] = base_e + p_corner_edge[p];
    for (var j = 0u; j < 4u; j = j + 1u) {
        c_corner_face[q + j] = c;
    }
}

// The half of edge e at its endpoint v.
fn half(e: u32, v: u32) -> u32 {
    return halves[2u * e + select(0u, 1u, p_edges[2u * e] != v)];
}

// One invocation per parent corner c: the four edges of child face c.
@compute @workgroup_size(256)
fn child_corner_edges(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat(wg, nwg, lid);
    if (c >= params.nc) {
        return;
    }
    let p = prev[c];
    let v = p_face_verts[c];
    let q = 4u * c;
    c_corner_edge[q] = half(p_corner_edge[c], v);
    c_corner_edge[q + 1u] = interior[c];
    c_corner_edge[q + 2u] = interior[p];
    c_corner_edge[q + 3u] = half(p_corner_edge[p], v);
}

// Start of child vertex i's corners (closed form).
fn vc_off(i: u32) -> u32 {
    let nv = params.nv;
    let nf = params.nf;
    if (i < nv) {
        return p_vertex_corner_ptr[i];
    }
    if (i < nv + nf) {
        return params.nc + p_face_ptr[i - nv];
    }
    if (i < nv + nf + params.ne) {
        return 2u * params.nc + 2u * p_edge_corner_ptr[i - nv - nf];
    }
    return 4u * params.nc;
}

// One invocation per child vertex (and one past the end): its corners, in
// increasing order, and vertex_corner_ptr.
@compute @workgroup_size(256)
fn vertex_corners(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat(wg, nwg, lid);
    let nv = params.nv;
    let nf = params.nf;
    let nvc = nv + nf + params.ne;
    if (i > nvc) {
        return;
    }
    let o = vc_off(i);
    c_vertex_corner_ptr[i] = o;
    if (i == nvc) {
        return;
    }
    if (i < nv) {
        let s = p_vertex_corner_ptr[i];
        let t = p_vertex_corner_ptr[i + 1u];
        for (var k = s; k < t; k = k + 1u) {
            c_vertex_corners[o + k - s] = 4u * p_vertex_corners[k];
        }
    } else if (i < nv + nf) {
        let s = p_face_ptr[i - nv];
        let t = p_face_ptr[i - nv + 1u];
        for (var k = s; k < t; k = k + 1u) {
            c_vertex_corners[o + k - s] = 4u * k + 2u;
        }
    } else {
        let e = i - nv - nf;
        let s = p_edge_corner_ptr[e];
        let n = min(p_edge_corner_ptr[e + 1u] - s, 2u);
        var a: array<u32, 4>;
        for (var u = 0u; u < n; u = u + 1u) {
            let c = p_edge_corners[s + u];
            a[2u * u] = 4u * c + 1u;
            a[2u * u + 1u] = 4u * next[c] + 3u;
        }
        sort4(&a, 2u * n);
        for (var u = 0u; u < 2u * n; u = u + 1u) {
            c_vertex_corners[o + u] = a[u];
        }
    }
}

// Start of child vertex i's edges (closed form).
fn ve_off(i: u32) -> u32 {
    let nv = params.nv;
    let nf = params.nf;
    let na = 2u * params.ne;
    if (i < nv) {
        return p_vertex_edge_ptr[i];
    }
    if (i < nv + nf) {
        return na + p_face_ptr[i - nv];
    }
    if (i < nv + nf + params.ne) {
        let e = i - nv - nf;
        return na + params.nc + 2u * e + p_edge_corner_ptr[e];
    }
    return 2u * (na + params.nc);
}

// One invocation per child vertex (and one past the end): its edges, in
// increasing order, and vertex_edge_ptr.
@compute @workgroup_size(256)
fn vertex_edges(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat(wg, nwg, lid);
    let nv = params.nv;
    let nf = params.nf;
    let nvc = nv + nf + params.ne;
    if (i > nvc) {
        return;
    }
    let o = ve_off(i);
    c_vertex_edge_ptr[i] = o;
    if (i == nvc) {
        return;
    }
    if (i < nv) {
        let s = p_vertex_edge_ptr[i];
        let t = p_vertex_edge_ptr[i + 1u];
        for (var k = s; k < t; k = k + 1u) {
            c_vertex_edges[o + k - s] = k;
        }
    } else if (i < nv + nf) {
        let s = p_face_ptr[i - nv];
        let t = p_face_ptr[i - nv + 1u];
        for (var k = s; k < t; k = k + 1u) {
            c_vertex_edges[o + k - s] = 2u * params.ne + k;
        }
    } else {
        let e = i - nv - nf;
        let s = p_edge_corner_ptr[e];
        let n = min(p_edge_corner_ptr[e + 1u] - s, 2u);
        var a: array<u32, 4>;
        a[0] = halves[2u * e];
        a[1] = halves[2u * e + 1u];
        for (var u = 0u; u < n; u = u + 1u) {
            a[2u + u] = interior[p_edge_corners[s + u]];
        }
        sort4(&a, 2u + n);
        for (var u = 0u; u < 2u + n; u = u + 1u) {
            c_vertex_edges[o + u] = a[u];
        }
    }
}

// One invocation per child vertex: parent vertices keep their tags, face
// points have none, edge points inherit the boundary bit of their edge.
@compute @workgroup_size(256)
fn vertex_tags(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat(wg, nwg, lid);
    let nv = params.nv;
    let nf = params.nf;
    if (i >= nv + nf + params.ne) {
        return;
    }
    if (i < nv) {
        c_vertex_tags[i] = p_vertex_tags[i];
    } else if (i < nv + nf) {
        c_vertex_tags[i] = 0u;
    } else {
        c_vertex_tags[i] = select(0u, BOUNDARY, (p_edge_tags[i - nv - nf] & BOUNDARY) != 0u);
    }
}

// One invocation per block-A child edge k (a half of e at v): its uses in
// increasing order, corner 4c for a use c leaving v, 4·next(c) + 3 for a
// use arriving at v (a manifold edge has one or two uses).
@compute @workgroup_size(256)
fn edge_uses_a(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = flat(wg, nwg, lid);
    if (k >= 2u * params.ne) {
        return;
    }
    let code = a_code[k];
    let e = code / 2u;
    let v = p_edges[code];
    let s = p_edge_corner_ptr[e];
    let n = min(p_edge_corner_ptr[e + 1u] - s, 2u);
    var a: array<u32, 4>;
    for (var u = 0u; u < n; u = u + 1u) {
        let c = p_edge_corners[s + u];
        a[u] = select(4u * next[c] + 3u, 4u * c, p_face_verts[c] == v);
    }
    sort4(&a, n);
    let o = counts[k];
    for (var u = 0u; u < n; u = u + 1u) {
        c_edge_corners[o + u] = a[u];
    }
}

// One invocation per block-B child edge (the interior edge of corner c):
// its uses 4c + 1 and 4·next(c) + 2, in increasing order.
@compute @workgroup_size(256)
fn edge_uses_b(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let j = flat(wg, nwg, lid);
    if (j >= params.nc) {
        return;
    }
    let c = sorted[j];
    let a = 4u * c + 1u;
    let b = 4u * next[c] + 2u;
    let o = counts[2u * params.ne + j];
    c_edge_corners[o] = min(a, b);
    c_edge_corners[o + 1u] = max(a, b);
}
