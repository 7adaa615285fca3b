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
    // to i + 1).
    cell_vert_ptr: u32,
    cell_verts: u32,
    cell_face_ptr: u32,
    cell_faces: u32,
    face_ptr: u32,
    face_verts: u32,
    face_edges: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> topo: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn split(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let k = (wg.y * nwg.x + wg.x) * 256u + li;
    if (k >= params.corners) {
        return;
    }
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
    let c = lo;
    let v = topo[params.cell_verts + k];
    var prev: array<u32, 3>;
    var next: array<u32, 3>;
    var face: array<u32, 3>;
    var edge: array<u32, 3>;
    var found = 0u;
    let first_face = topo[params.cell_face_ptr + c];
    let last_face = topo[params.cell_face_ptr + c + 1u];
    for (var j = first_face; j < last_face; j++) {
        let code = topo[params.cell_faces + j];
        let f = code >> 1u;
        let s = topo[params.face_ptr + f];
        let n = topo[params.face_ptr + f + 1u] - s;
        for (var i = 0u; i < n; i++) {
            if (found < 3u && topo[params.face_verts + s + i] == v) {
                let back = (i + n - 1u) % n;
                let fwd = (i + 1u) % n;
                if ((code & 1u) == 0u) {
                    prev[found] = topo[params.face_verts + s + back];
                    next[found] = topo[params.face_verts + s + fwd];
                    edge[found] = topo[params.face_edges + s + i];
                } else {
                    prev[found] = topo[params.face_verts + s + fwd];
                    next[found] = topo[params.face_verts + s + back];
                    edge[found] = topo[params.face_edges + s + back];
                }
                face[found] = f;
                found += 1u;
            }
        }
    }
    var r2 = 0u;
    for (var t = 2u; t > 0u; t--) {
        if (prev[t] == next[0]) {
            r2 = t;
        }
    }
    var r3 = 0u;
    for (var t = 2u; t > 0u; t--) {
        if (prev[t] == next[r2]) {
            r3 = t;
        }
    }
    let e0 = params.nv;
    let f0 = params.nv + params.ne;
    let o = 8u * k;
    out[o] = v;
    out[o + 1u] = e0 + edge[0];
    out[o + 2u] = f0 + face[r2];
    out[o + 3u] = e0 + edge[r2];
    out[o + 4u] = e0 + edge[r3];
    out[o + 5u] = f0 + face[0];
    out[o + 6u] = f0 + params.nf + c;
    out[o + 7u] = f0 + face[r3];
}
