// The cells of one Catmull-Clark solid split: one hexahedron per cell
// corner, written from the parent's connectivity (the same cells as
// VolMesh::split on the CPU, in the same order). One invocation per parent
// cell corner k (cells in order, corners in the cell's vertex order):
//
//   the corner's cell: the last c with cell_vert_ptr[c] <= k (a binary
//   search); its vertex v; the three face corners of v in the cell's
//   outward faces (previous and next vertex seen from outside, the face,
//   the edge to the next vertex); r1 the first of them in the cell's face
//   order, r2 the one whose previous vertex is r1's next, r3 the one whose
//   previous vertex is r2's next; then, with n1 n2 n3 their next vertices,
//   the child (v, E(n1), F(n1 n2), E(n2), E(n3), F(n1 n3), C, F(n2 n3)) in
//   VTK's order, child point ids numbered vertices, edges, faces, cells.
//
// The connectivity is one u32 array, its parts at the offsets in params.
// Each invocation writes its own eight ids: no atomics, deterministic.
//
// The rest of the child's connectivity (split_names, split_faces, then
// edge_keys, edge_first, edge_ids_of, with exclusive scans between) is
// numbered as VolMesh::split numbers it on the CPU: faces in the order the
// child cells first use them, edges in the order the child faces first use
// them. A face has at most two users, both known in closed form, so its
// first use is decided locally; an edge has any number, so each claims its
// slot with an atomic maximum of (NONE − face corner), which keeps the
// smallest corner whatever the order of the claims (integer atomics:
// deterministic). Ids are exclusive scans of the first-use flags.

struct Params {
    // Parent cell corners (child cells).
    corners: u32,
    // Parent cells, vertices, edges, faces.
    cells: u32,
    nv: u32,
    ne: u32,
    nf: u32,
    // Offsets in topo of cell_vert_ptr (cells + 1), cell_verts,
    // cell_face_ptr (cells + 1), cell_faces (2 f + 1 where stored inward),
    // face_ptr (faces + 1), face_verts, face_edges (edge i from vertex i
    // to i + 1), face_cells (two per face, NONE past a boundary face),
    // edges (two ends per edge), sharp (1 per sharp edge, else 0).
    cell_vert_ptr: u32,
    cell_verts: u32,
    cell_face_ptr: u32,
    cell_faces: u32,
    face_ptr: u32,
    face_verts: u32,
    face_edges: u32,
    face_cells: u32,
    edges: u32,
    sharp: u32,
    // Offsets in out of the child's sections (the same layout; `split`
    // writes only cell_verts).
    c_cell_vert_ptr: u32,
    c_cell_verts: u32,
    c_cell_face_ptr: u32,
    c_cell_faces: u32,
    c_face_ptr: u32,
    c_face_verts: u32,
    c_face_edges: u32,
    c_face_cells: u32,
    c_edges: u32,
    c_sharp: u32,
    // Child faces, and child face corners (4 per face).
    c_faces: u32,
    c_face_corners: u32,
}

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> topo: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
// Per child face slot 6 k + l (child cell k, its local face l): the
// face's name (2 × parent face corner slot, or 2 × parent edge + 1 for a
// face inside the parent cell), whether this slot is the face's first use
// (1 or 0), and the other child cell using the face (NONE: none).
@group(0) @binding(3) var<storage, read_write> names: array<u32>;
@group(0) @binding(4) var<storage, read_write> flags: array<u32>;
@group(0) @binding(5) var<storage, read_write> partners: array<u32>;
// The exclusive scan of flags: the child face id at a first use.
@group(0) @binding(6) var<storage, read> face_ids: array<u32>;
// Per child edge slot (half of a parent edge, a parent face's spoke, a
// parent cell's spoke): NONE − the first face corner using it (atomicMax
// of a zeroed buffer keeps the smallest corner).
@group(0) @binding(7) var<storage, read_write> first_use: array<atomic<u32>>;
// Per child face corner 4 f + i: its edge's slot, and whether it is the
// edge's first use.
@group(0) @binding(8) var<storage, read_write> edge_slots: array<u32>;
@group(0) @binding(9) var<storage, read_write> edge_flags: array<u32>;
// The exclusive scan of edge_flags: the child edge id at a first use.
@group(0) @binding(10) var<storage, read> edge_ids: array<u32>;
// The parent's and the child's tags: a corner flag per vertex, then a
// hexahedron flag per cell.
@group(0) @binding(11) var<storage, read> tags: array<u32>;
@group(0) @binding(12) var<storage, read_write> child_tags: array<u32>;

// The outward faces of a hexahedron, VTK's vertex order (CellKind's).
const HEX_FACES = array<vec4<u32>, 6>(
    vec4<u32>(0u, 3u, 2u, 1u),
    vec4<u32>(4u, 5u, 6u, 7u),
    vec4<u32>(0u, 1u, 5u, 4u),
    vec4<u32>(1u, 2u, 6u, 5u),
    vec4<u32>(2u, 3u, 7u, 6u),
    vec4<u32>(3u, 0u, 4u, 7u),
);

// A parent cell corner: its cell and vertex, and the three face corners of
// the vertex in the cell's outward faces as r1, r2, r3 (r1 the first in
// the cell's face order, r2 the one whose previous vertex is r1's next, r3
// the one whose previous vertex is r2's next): previous and next vertex
// seen from outside, the face, the edge to the next vertex, the vertex's
// place in the face as stored, and the face's code in the cell.
struct Corner {
    c: u32,
    v: u32,
    prev: array<u32, 3>,
    next: array<u32, 3>,
    face: array<u32, 3>,
    edge: array<u32, 3>,
    place: array<u32, 3>,
    code: array<u32, 3>,
}

fn flat_index(wg: vec3<u32>, nwg: vec3<u32>, li: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + li;
}

// The cell of parent cell corner k: the last c with cell_vert_ptr[c] <= k.
fn cell_of(k: u32) -> u32 {
    var lo = 0u;
    var hi = params.cells;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (topo[params.cell_vert_ptr + mid] <= k) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The place of vertex v among the vertices of cell c.
fn place_in_cell(c: u32, v: u32) -> u32 {
    let first = topo[params.cell_vert_ptr + c];
    let last = topo[params.cell_vert_ptr + c + 1u];
    for (var i = first; i < last; i++) {
        if (topo[params.cell_verts + i] == v) {
            return i - first;
        }
    }
    return 0u;
}

fn corner_of(k: u32) -> Corner {
    var x: Corner;
    let c = cell_of(k);
    let v = topo[params.cell_verts + k];
    x.c = c;
    x.v = v;
    var prev: array<u32, 3>;
    var next: array<u32, 3>;
    var face: array<u32, 3>;
    var edge: array<u32, 3>;
    var place: array<u32, 3>;
    var code: array<u32, 3>;
    var found = 0u;
    let first_face = topo[params.cell_face_ptr + c];
    let last_face = topo[params.cell_face_ptr + c + 1u];
    for (var j = first_face; j < last_face; j++) {
        let cf = topo[params.cell_faces + j];
        let f = cf >> 1u;
        let s = topo[params.face_ptr + f];
        let n = topo[params.face_ptr + f + 1u] - s;
        for (var i = 0u; i < n; i++) {
            if (found < 3u && topo[params.face_verts + s + i] == v) {
                let back = (i + n - 1u) % n;
                let fwd = (i + 1u) % n;
                if ((cf & 1u) == 0u) {
                    prev[found] = topo[params.face_verts + s + back];
                    next[found] = topo[params.face_verts + s + fwd];
                    edge[found] = topo[params.face_edges + s + i];
                } else {
                    prev[found] = topo[params.face_verts + s + fwd];
                    next[found] = topo[params.face_verts + s + back];
                    edge[found] = topo[params.face_edges + s + back];
                }
                face[found] = f;
                place[found] = i;
                code[found] = cf;
                found += 1u;
            }
        }
    }
    var r = array<u32, 3>(0u, 0u, 0u);
    for (var t = 2u; t > 0u; t--) {
        if (prev[t] == next[0]) {
            r[1] = t;
        }
    }
    for (var t = 2u; t > 0u; t--) {
        if (prev[t] == next[r[1]]) {
            r[2] = t;
        }
    }
    for (var t = 0u; t < 3u; t++) {
        x.prev[t] = prev[r[t]];
        x.next[t] = next[r[t]];
        x.face[t] = face[r[t]];
        x.edge[t] = edge[r[t]];
        x.place[t] = place[r[t]];
        x.code[t] = code[r[t]];
    }
    return x;
}

// The child cell of corner x: (v, E(n1), F(n1 n2), E(n2), E(n3), F(n1 n3),
// C, F(n2 n3)) in VTK's order, child point ids numbered vertices, edges,
// faces, cells.
fn child_of(x: Corner) -> array<u32, 8> {
    let e0 = params.nv;
    let f0 = params.nv + params.ne;
    return array<u32, 8>(
        x.v,
        e0 + x.edge[0],
        f0 + x.face[1],
        e0 + x.edge[1],
        e0 + x.edge[2],
        f0 + x.face[0],
        f0 + params.nf + x.c,
        f0 + x.face[2],
    );
}

@compute @workgroup_size(256)
fn split(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let k = flat_index(wg, nwg, li);
    if (k >= params.corners) {
        return;
    }
    var child = child_of(corner_of(k));
    for (var i = 0u; i < 8u; i++) {
        out[params.c_cell_verts + 8u * k + i] = child[i];
    }
}

// The child's pointer arrays (every child cell a hexahedron, every child
// face a quad): one invocation per entry of the longest.
@compute @workgroup_size(256)
fn child_ptrs(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let i = flat_index(wg, nwg, li);
    if (i <= params.corners) {
        out[params.c_cell_vert_ptr + i] = 8u * i;
        out[params.c_cell_face_ptr + i] = 6u * i;
    }
    if (i <= params.c_faces) {
        out[params.c_face_ptr + i] = 4u * i;
    }
}

// The child's tags: a vertex point is a corner where its vertex is (the
// child's first vertices are the parent's), no other child point is, and
// every child cell is a hexahedron.
@compute @workgroup_size(256)
fn child_tags_of(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let i = flat_index(wg, nwg, li);
    let child_nv = params.nv + params.ne + params.nf + params.cells;
    if (i >= child_nv + params.corners) {
        return;
    }
    if (i < params.nv) {
        child_tags[i] = tags[i];
    } else {
        child_tags[i] = u32(i >= child_nv);
    }
}

// Per parent cell corner k (child cell k): the child's vertices, and per
// local face l its name, whether k uses it first (as the CPU numbers faces:
// in the order child cells and their faces first use them), and the other
// child using it. A quarter of parent face f is used first by the child in
// the cell that stores f outward (the cell before the other); a face
// inside parent cell c through the midpoint of its edge (v, w) by the
// child of whichever of v and w comes first in c.
@compute @workgroup_size(256)
fn split_names(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let k = flat_index(wg, nwg, li);
    if (k >= params.corners) {
        return;
    }
    var x = corner_of(k);
    var child = child_of(x);
    for (var i = 0u; i < 8u; i++) {
        out[params.c_cell_verts + 8u * k + i] = child[i];
    }
    let first = topo[params.cell_vert_ptr + x.c];
    let here = k - first;
    // Local faces: quarter of r2's face, inside at r3's edge, quarter of
    // r1's face, inside at r1's edge, inside at r2's edge, quarter of r3's
    // face.
    var quarter = array<u32, 6>(1u, NONE, 0u, NONE, NONE, 2u);
    var inside = array<u32, 6>(NONE, 2u, NONE, 0u, 1u, NONE);
    for (var l = 0u; l < 6u; l++) {
        let s = 6u * k + l;
        if (quarter[l] != NONE) {
            let t = quarter[l];
            let f = x.face[t];
            names[s] = 2u * (topo[params.face_ptr + f] + x.place[t]);
            let cells = vec2<u32>(topo[params.face_cells + 2u * f], topo[params.face_cells + 2u * f + 1u]);
            var other = cells.x;
            if (other == x.c) {
                other = cells.y;
            }
            flags[s] = select(0u, 1u, (x.code[t] & 1u) == 0u);
            if (other == NONE) {
                partners[s] = NONE;
            } else {
                partners[s] = topo[params.cell_vert_ptr + other] + place_in_cell(other, x.v);
            }
        } else {
            let t = inside[l];
            names[s] = 2u * x.edge[t] + 1u;
            let there = place_in_cell(x.c, x.next[t]);
            flags[s] = select(0u, 1u, here < there);
            partners[s] = first + there;
        }
    }
}

// Per child face slot s = 6 k + l: at a first use, the face's vertices
// (the child's local face l), its two cells and this cell's outward code;
// else the id its partner's first use got, stored inward.
@compute @workgroup_size(256)
fn split_faces(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let s = flat_index(wg, nwg, li);
    if (s >= 6u * params.corners) {
        return;
    }
    let k = s / 6u;
    let l = s % 6u;
    if (flags[s] == 1u) {
        let id = face_ids[s];
        var faces = HEX_FACES;
        let local = faces[l];
        for (var j = 0u; j < 4u; j++) {
            out[params.c_face_verts + 4u * id + j] = out[params.c_cell_verts + 8u * k + local[j]];
        }
        out[params.c_face_cells + 2u * id] = k;
        out[params.c_face_cells + 2u * id + 1u] = partners[s];
        out[params.c_cell_faces + s] = 2u * id;
    } else {
        let p = partners[s];
        var id = 0u;
        for (var m = 0u; m < 6u; m++) {
            if (names[6u * p + m] == names[s]) {
                id = face_ids[6u * p + m];
            }
        }
        out[params.c_cell_faces + s] = 2u * id + 1u;
    }
}

// The ends of child face corner t's edge (to the next corner), lower
// first.
fn edge_ends(t: u32) -> vec2<u32> {
    let f = t / 4u;
    let a = out[params.c_face_verts + t];
    let b = out[params.c_face_verts + 4u * f + (t % 4u + 1u) % 4u];
    return vec2<u32>(min(a, b), max(a, b));
}

// Per child face corner t: its edge's slot, by the kinds of its ends
// (vertex < edge < face < cell points): half of parent edge e (2 e, or
// 2 e + 1 from its second end), the spoke of parent face f to its k-th
// edge (after the halves, at f's corner slot), or the spoke of parent cell
// c to its j-th face (after those, at c's face slot); and its claim on the
// slot.
@compute @workgroup_size(256)
fn edge_keys(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let t = flat_index(wg, nwg, li);
    if (t >= params.c_face_corners) {
        return;
    }
    let ends = edge_ends(t);
    let lo = ends.x;
    let hi = ends.y;
    let corner_slots = topo[params.face_ptr + params.nf];
    var slot = 0u;
    if (lo < params.nv) {
        let e = hi - params.nv;
        slot = 2u * e + select(0u, 1u, topo[params.edges + 2u * e + 1u] == lo);
    } else if (lo < params.nv + params.ne) {
        let e = lo - params.nv;
        let f = hi - params.nv - params.ne;
        let s = topo[params.face_ptr + f];
        let n = topo[params.face_ptr + f + 1u] - s;
        var k = 0u;
        for (var i = n; i > 0u; i--) {
            if (topo[params.face_edges + s + i - 1u] == e) {
                k = i - 1u;
            }
        }
        slot = 2u * params.ne + s + k;
    } else {
        let f = lo - params.nv - params.ne;
        let c = hi - params.nv - params.ne - params.nf;
        let s = topo[params.cell_face_ptr + c];
        let n = topo[params.cell_face_ptr + c + 1u] - s;
        var j = 0u;
        for (var i = n; i > 0u; i--) {
            if ((topo[params.cell_faces + s + i - 1u] >> 1u) == f) {
                j = i - 1u;
            }
        }
        slot = 2u * params.ne + corner_slots + s + j;
    }
    edge_slots[t] = slot;
    atomicMax(&first_use[slot], NONE - t);
}

// Whether child face corner t is its edge's first use.
@compute @workgroup_size(256)
fn edge_first(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let t = flat_index(wg, nwg, li);
    if (t >= params.c_face_corners) {
        return;
    }
    edge_flags[t] = select(0u, 1u, NONE - atomicLoad(&first_use[edge_slots[t]]) == t);
}

// Per child face corner t: its edge's id (the id of the edge's first use);
// at the first use, the edge's ends and sharpness (a half of a sharp
// parent edge is sharp).
@compute @workgroup_size(256)
fn edge_ids_of(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let t = flat_index(wg, nwg, li);
    if (t >= params.c_face_corners) {
        return;
    }
    let slot = edge_slots[t];
    let first = NONE - atomicLoad(&first_use[slot]);
    let id = edge_ids[first];
    out[params.c_face_edges + t] = id;
    if (first == t) {
        let ends = edge_ends(t);
        out[params.c_edges + 2u * id] = ends.x;
        out[params.c_edges + 2u * id + 1u] = ends.y;
        var sharp = 0u;
        if (slot < 2u * params.ne) {
            sharp = topo[params.sharp + slot / 2u];
        }
        out[params.c_sharp + id] = sharp;
    }
}
