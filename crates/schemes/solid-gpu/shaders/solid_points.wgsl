// The child points of one Catmull-Clark solid split, computed on the
// device from the parent's connectivity (a GpuSolidTopology: the sections
// of one u32 array at the offsets in params) and the parent's points: the
// rules of subla_solid's `rules.rs` (docs/solids.md), child points
// numbered vertex points, edge points, face points, cell points.
//
// First the incidences the rules walk and the connectivity does not hold,
// as one counting sort over four lists of (key, value) entries:
//
//   key e             the faces of edge e         (from the face edges)
//   key ne + v        the edges of vertex v       (from the edges' ends)
//   key ne + nv + v   the faces of vertex v       (from the face vertices)
//   key ne + 2nv + v  the cells of vertex v       (from the cell vertices)
//
//   count    counts[key] += 1 (atomicAdd: a sum, order-independent)
//   (the host scans the counts into kptr and clears them)
//   place    each entry takes the next slot of its key (atomicAdd: the
//            order within a key depends on scheduling)
//   sort     one invocation per key sorts its values; they are distinct
//            (a face holds an edge or a vertex once, a cell a vertex once),
//            so the sorted lists are unique: deterministic.
//
// Then the points, each stage reading the one before (a pass each):
//
//   cell_points    centroid of the cell
//   face_points    the face's centroid A (kept in favg); A on the boundary,
//                  else A/2 + (C₁ + C₂)/4
//   edge_points    sharp: the midpoint; boundary: (a + b)/4 + Σ A/4 over
//                  its boundary faces; else (C + 2A + (n − 3) M)/n
//   vertex_points  corners stay; on two sharp edges (a + 6v + b)/8, on
//                  three or more it stays; boundary: (F + 2M + (n − 3) v)/n
//                  over its boundary faces and edges; else
//                  (C + 3A + 3M + (n − 7) v)/n, or at a layered vertex
//                  (rule 1) (C + 3A + 2M_o + (k − 3)(M_x + v))/n
//
// Each invocation writes its own row, four channels at a time (every
// incidence walked once per group of four): no float atomics, the same
// bits every run.

struct Params {
    // Parent vertices, edges, faces, cells.
    nv: u32,
    ne: u32,
    nf: u32,
    nc: u32,
    // Offsets in topo: cell vertex pointers and vertices, face pointers,
    // vertices, edges and cells, edge ends, sharp flags.
    cell_vert_ptr: u32,
    cell_verts: u32,
    face_ptr: u32,
    face_verts: u32,
    face_edges: u32,
    face_cells: u32,
    edges: u32,
    sharp: u32,
    // Face corners, cell corners.
    fv: u32,
    cv: u32,
    // Channels of a point; 1 for the layered vertex rule, 0 for Joy and
    // MacCracken's everywhere.
    ch: u32,
    layered: u32,
}

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> topo: array<u32>;
// Corner flags of the vertices (nv), then hexahedron flags of the cells.
@group(0) @binding(2) var<storage, read> tags: array<u32>;
@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> kptr: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals: array<u32>;
@group(0) @binding(6) var<storage, read> x: array<f32>;
@group(0) @binding(7) var<storage, read_write> y: array<f32>;
@group(0) @binding(8) var<storage, read_write> favg: array<f32>;

fn flat_index(wg: vec3<u32>, nwg: vec3<u32>, li: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + li;
}

// The last i in 0..n with p[at + i] <= k.
fn owner(at: u32, n: u32, k: u32) -> u32 {
    var lo = 0u;
    var hi = n;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (topo[at + mid] <= k) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

fn num_entries() -> u32 {
    return 2u * params.fv + 2u * params.ne + params.cv;
}

fn num_keys() -> u32 {
    return params.ne + 3u * params.nv;
}

// Entry i of the four lists: (key, value).
fn entry(i: u32) -> vec2<u32> {
    let fv = params.fv;
    let ne = params.ne;
    let nv = params.nv;
    if (i < fv) {
        return vec2<u32>(topo[params.face_edges + i], owner(params.face_ptr, params.nf, i));
    }
    var j = i - fv;
    if (j < 2u * ne) {
        return vec2<u32>(ne + topo[params.edges + j], j / 2u);
    }
    j = j - 2u * ne;
    if (j < fv) {
        return vec2<u32>(ne + nv + topo[params.face_verts + j], owner(params.face_ptr, params.nf, j));
    }
    j = j - fv;
    return vec2<u32>(ne + 2u * nv + topo[params.cell_verts + j], owner(params.cell_vert_ptr, params.nc, j));
}

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let i = flat_index(wg, nwg, li);
    if (i >= num_entries()) {
        return;
    }
    atomicAdd(&counts[entry(i).x], 1u);
}

@compute @workgroup_size(256)
fn place(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let i = flat_index(wg, nwg, li);
    if (i >= num_entries()) {
        return;
    }
    let kv = entry(i);
    let slot = atomicAdd(&counts[kv.x], 1u);
    vals[kptr[kv.x] + slot] = kv.y;
}

@compute @workgroup_size(256)
fn sort(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let k = flat_index(wg, nwg, li);
    if (k >= num_keys()) {
        return;
    }
    let a = kptr[k];
    let b = kptr[k + 1u];
    for (var i = a + 1u; i < b; i++) {
        let v = vals[i];
        var j = i;
        while (j > a && vals[j - 1u] > v) {
            vals[j] = vals[j - 1u];
            j--;
        }
        vals[j] = v;
    }
}

// Child rows: vertex points, edge points, face points, cell points.
fn edge_row(e: u32) -> u32 {
    return params.nv + e;
}

fn face_row(f: u32) -> u32 {
    return params.nv + params.ne + f;
}

fn cell_row(c: u32) -> u32 {
    return params.nv + params.ne + params.nf + c;
}

// Channels c0 .. c0 + 3 of parent point v (zeros past the last channel):
// each kernel walks its incidences once per group of four channels.
fn xv(v: u32, c0: u32) -> vec4<f32> {
    let d = params.ch;
    let base = v * d + c0;
    var r = vec4<f32>(0.0);
    r.x = x[base];
    if (c0 + 1u < d) { r.y = x[base + 1u]; }
    if (c0 + 2u < d) { r.z = x[base + 2u]; }
    if (c0 + 3u < d) { r.w = x[base + 3u]; }
    return r;
}

// Channels c0 .. c0 + 3 of child row `row` (rows written by an earlier
// pass).
fn yv(row: u32, c0: u32) -> vec4<f32> {
    let d = params.ch;
    let base = row * d + c0;
    var r = vec4<f32>(0.0);
    r.x = y[base];
    if (c0 + 1u < d) { r.y = y[base + 1u]; }
    if (c0 + 2u < d) { r.z = y[base + 2u]; }
    if (c0 + 3u < d) { r.w = y[base + 3u]; }
    return r;
}

// Writes channels c0 .. c0 + 3 (those that exist) of child row `row`.
fn put(row: u32, c0: u32, v: vec4<f32>) {
    let d = params.ch;
    let base = row * d + c0;
    y[base] = v.x;
    if (c0 + 1u < d) { y[base + 1u] = v.y; }
    if (c0 + 2u < d) { y[base + 2u] = v.z; }
    if (c0 + 3u < d) { y[base + 3u] = v.w; }
}

// Channels c0 .. c0 + 3 of the centroid of face f (written by
// face_points).
fn face_centroid(f: u32, c0: u32) -> vec4<f32> {
    let d = params.ch;
    let base = f * d + c0;
    var r = vec4<f32>(0.0);
    r.x = favg[base];
    if (c0 + 1u < d) { r.y = favg[base + 1u]; }
    if (c0 + 2u < d) { r.z = favg[base + 2u]; }
    if (c0 + 3u < d) { r.w = favg[base + 3u]; }
    return r;
}

// The centroid of cell c (its child row, written by cell_points).
fn cell_centroid(c: u32, c0: u32) -> vec4<f32> {
    return yv(cell_row(c), c0);
}

fn is_boundary_face(f: u32) -> bool {
    return topo[params.face_cells + 2u * f + 1u] == NONE;
}

fn is_sharp(e: u32) -> bool {
    return topo[params.sharp + e] != 0u;
}

fn is_boundary_edge(e: u32) -> bool {
    for (var k = kptr[e]; k < kptr[e + 1u]; k++) {
        if (is_boundary_face(vals[k])) {
            return true;
        }
    }
    return false;
}

fn valence(e: u32) -> u32 {
    return kptr[e + 1u] - kptr[e];
}

// The end of edge e other than v.
fn other_end(e: u32, v: u32) -> u32 {
    let a = topo[params.edges + 2u * e];
    return select(a, topo[params.edges + 2u * e + 1u], a == v);
}

// Cell slot s (0 or 1) of the k-th face of edge e, or NONE past a boundary
// face or where an earlier slot of the edge named the same cell: each of
// the edge's cells once.
fn distinct_cell(e: u32, k: u32, s: u32) -> u32 {
    let c = topo[params.face_cells + 2u * vals[k] + s];
    if (c == NONE) {
        return NONE;
    }
    for (var q = kptr[e]; q <= k; q++) {
        for (var t = 0u; t < 2u; t++) {
            if (q == k && t == s) {
                return c;
            }
            if (topo[params.face_cells + 2u * vals[q] + t] == c) {
                return NONE;
            }
        }
    }
    return c;
}

fn num_distinct_cells(e: u32) -> u32 {
    var n = 0u;
    for (var k = kptr[e]; k < kptr[e + 1u]; k++) {
        for (var s = 0u; s < 2u; s++) {
            n += u32(distinct_cell(e, k, s) != NONE);
        }
    }
    return n;
}

// Whether edges a and b share a cell.
fn share_a_cell(a: u32, b: u32) -> bool {
    for (var k = kptr[a]; k < kptr[a + 1u]; k++) {
        for (var s = 0u; s < 2u; s++) {
            let c = topo[params.face_cells + 2u * vals[k] + s];
            if (c == NONE) {
                continue;
            }
            for (var q = kptr[b]; q < kptr[b + 1u]; q++) {
                if (topo[params.face_cells + 2u * vals[q]] == c || topo[params.face_cells + 2u * vals[q] + 1u] == c) {
                    return true;
                }
            }
        }
    }
    return false;
}

@compute @workgroup_size(256)
fn cell_points(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let c = flat_index(wg, nwg, li);
    if (c >= params.nc) {
        return;
    }
    let a = topo[params.cell_vert_ptr + c];
    let b = topo[params.cell_vert_ptr + c + 1u];
    let w = 1.0 / f32(b - a);
    for (var j = 0u; j < params.ch; j += 4u) {
        var s = vec4<f32>(0.0);
        for (var k = a; k < b; k++) {
            s += xv(topo[params.cell_verts + k], j);
        }
        put(cell_row(c), j, w * s);
    }
}

@compute @workgroup_size(256)
fn face_points(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let f = flat_index(wg, nwg, li);
    if (f >= params.nf) {
        return;
    }
    let a = topo[params.face_ptr + f];
    let b = topo[params.face_ptr + f + 1u];
    let w = 1.0 / f32(b - a);
    let c0 = topo[params.face_cells + 2u * f];
    let c1 = topo[params.face_cells + 2u * f + 1u];
    let d = params.ch;
    for (var j = 0u; j < d; j += 4u) {
        var s = vec4<f32>(0.0);
        for (var k = a; k < b; k++) {
            s += xv(topo[params.face_verts + k], j);
        }
        let centroid = w * s;
        let base = f * d + j;
        favg[base] = centroid.x;
        if (j + 1u < d) { favg[base + 1u] = centroid.y; }
        if (j + 2u < d) { favg[base + 2u] = centroid.z; }
        if (j + 3u < d) { favg[base + 3u] = centroid.w; }
        var p = centroid;
        if (c1 != NONE) {
            p = 0.5 * centroid + 0.25 * (cell_centroid(c0, j) + cell_centroid(c1, j));
        }
        put(face_row(f), j, p);
    }
}

@compute @workgroup_size(256)
fn edge_points(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let e = flat_index(wg, nwg, li);
    if (e >= params.ne) {
        return;
    }
    let a = topo[params.edges + 2u * e];
    let b = topo[params.edges + 2u * e + 1u];
    let p0 = kptr[e];
    let p1 = kptr[e + 1u];
    let out = edge_row(e);
    if (is_sharp(e)) {
        for (var j = 0u; j < params.ch; j += 4u) {
            put(out, j, 0.5 * (xv(a, j) + xv(b, j)));
        }
        return;
    }
    if (is_boundary_edge(e)) {
        for (var j = 0u; j < params.ch; j += 4u) {
            var s = 0.25 * xv(a, j) + 0.25 * xv(b, j);
            for (var k = p0; k < p1; k++) {
                if (is_boundary_face(vals[k])) {
                    s += 0.25 * face_centroid(vals[k], j);
                }
            }
            put(out, j, s);
        }
        return;
    }
    let n = f32(p1 - p0);
    let wc = 1.0 / (n * f32(num_distinct_cells(e)));
    let wf = 2.0 / (n * n);
    let wm = (n - 3.0) / (2.0 * n);
    for (var j = 0u; j < params.ch; j += 4u) {
        var sc = vec4<f32>(0.0);
        var sf = vec4<f32>(0.0);
        for (var k = p0; k < p1; k++) {
            for (var s = 0u; s < 2u; s++) {
                let c = distinct_cell(e, k, s);
                if (c != NONE) {
                    sc += cell_centroid(c, j);
                }
            }
            sf += face_centroid(vals[k], j);
        }
        put(out, j, wc * sc + wf * sf + wm * (xv(a, j) + xv(b, j)));
    }
}

@compute @workgroup_size(256)
fn vertex_points(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let v = flat_index(wg, nwg, li);
    let nv = params.nv;
    let ne = params.ne;
    if (v >= nv) {
        return;
    }
    let e0 = kptr[ne + v];
    let e1 = kptr[ne + v + 1u];
    let f0 = kptr[ne + nv + v];
    let f1 = kptr[ne + nv + v + 1u];
    let c0 = kptr[ne + 2u * nv + v];
    let c1 = kptr[ne + 2u * nv + v + 1u];
    if (e0 == e1 || tags[v] != 0u) {
        for (var j = 0u; j < params.ch; j += 4u) {
            put(v, j, xv(v, j));
        }
        return;
    }
    // Sharp edges: two make a crease curve, three or more a corner.
    var sharp = 0u;
    var sa = NONE;
    var sb = NONE;
    var boundary = false;
    for (var k = e0; k < e1; k++) {
        let e = vals[k];
        if (is_sharp(e)) {
            sharp++;
            if (sa == NONE) {
                sa = e;
            } else if (sb == NONE) {
                sb = e;
            }
        }
        boundary = boundary || is_boundary_edge(e);
    }
    if (sharp >= 2u) {
        for (var j = 0u; j < params.ch; j += 4u) {
            var p = xv(v, j);
            if (sharp == 2u) {
                p = 0.125 * xv(other_end(sa, v), j) + 0.75 * p + 0.125 * xv(other_end(sb, v), j);
            }
            put(v, j, p);
        }
        return;
    }
    if (boundary) {
        // The boundary surface by itself: Catmull-Clark's surface rule over
        // the boundary faces and edges.
        var nbf = 0u;
        for (var k = f0; k < f1; k++) {
            nbf += u32(is_boundary_face(vals[k]));
        }
        var nbe = 0u;
        for (var k = e0; k < e1; k++) {
            nbe += u32(is_boundary_edge(vals[k]));
        }
        let n = f32(nbe);
        let wf = 1.0 / (n * f32(nbf));
        let wm = 1.0 / (n * n);
        for (var j = 0u; j < params.ch; j += 4u) {
            var sf = vec4<f32>(0.0);
            for (var k = f0; k < f1; k++) {
                if (is_boundary_face(vals[k])) {
                    sf += face_centroid(vals[k], j);
                }
            }
            var sm = vec4<f32>(0.0);
            for (var k = e0; k < e1; k++) {
                let e = vals[k];
                if (is_boundary_edge(e)) {
                    sm += xv(topo[params.edges + 2u * e], j) + xv(topo[params.edges + 2u * e + 1u], j);
                }
            }
            put(v, j, wf * sf + wm * sm + (n - 3.0) / n * xv(v, j));
        }
        return;
    }
    let n = f32(c1 - c0);
    let wc = 1.0 / (n * n);
    let wf = 3.0 / (n * f32(f1 - f0));
    // A layered vertex: exactly two edges of valence k ≠ 4 (k ≥ 3), k + 2
    // edges, each extraordinary edge in k cells of its own, 2k hexahedra.
    var xa = NONE;
    var xb = NONE;
    var layered = params.layered != 0u;
    if (layered) {
        var others = 0u;
        for (var k = e0; k < e1; k++) {
            let e = vals[k];
            if (valence(e) != 4u) {
                if (xa == NONE) {
                    xa = e;
                } else if (xb == NONE) {
                    xb = e;
                } else {
                    others++;
                }
            }
        }
        layered = xb != NONE && others == 0u;
    }
    if (layered) {
        let k = valence(xa);
        layered = k >= 3u && valence(xb) == k && e1 - e0 == k + 2u && c1 - c0 == 2u * k
            && num_distinct_cells(xa) == k && num_distinct_cells(xb) == k && !share_a_cell(xa, xb);
        for (var q = c0; q < c1; q++) {
            layered = layered && tags[nv + vals[q]] != 0u;
        }
    }
    var wx = 0.0;
    var wo = 3.0 / (n * f32(e1 - e0));
    var wv = (n - 7.0) / n;
    if (layered) {
        let k = n / 2.0;
        wx = (k - 3.0) / (2.0 * n);
        wo = 2.0 / (n * k);
        wv = (k - 3.0) / n;
    }
    for (var j = 0u; j < params.ch; j += 4u) {
        var sc = vec4<f32>(0.0);
        for (var q = c0; q < c1; q++) {
            sc += cell_centroid(vals[q], j);
        }
        var sf = vec4<f32>(0.0);
        for (var q = f0; q < f1; q++) {
            sf += face_centroid(vals[q], j);
        }
        var mo = vec4<f32>(0.0);
        var mx = vec4<f32>(0.0);
        for (var q = e0; q < e1; q++) {
            let e = vals[q];
            let m = xv(topo[params.edges + 2u * e], j) + xv(topo[params.edges + 2u * e + 1u], j);
            if (layered && (e == xa || e == xb)) {
                mx += m;
            } else {
                mo += m;
            }
        }
        // The midpoints as half the sums of the ends.
        put(v, j, wc * sc + wf * sf + 0.5 * (wo * mo + wx * mx) + wv * xv(v, j));
    }
}
