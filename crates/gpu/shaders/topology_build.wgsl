// The connectivity of a control mesh built from its faces alone (Mlakar et
// al. 2020, §4.1 and Alg. 1), equal array for array to the CPU
// `Topology::build` (`crates/mesh/src/topology.rs`) on MANIFOLD input, and a
// status word telling the host when the input is not manifold.
//
// Several entry points, run in this order by `subla-gpu`
// (`src/topology/build.rs`):
//
//   corners_main      per corner: its face, the ends (lo, hi) of its outgoing
//                     edge; valences (corners per vertex) and uses per low
//                     end by integer atomics, into one `counts` array
//   (the host scans `counts`: vertex_corner_ptr, then lo_ptr + nc)
//   pointers_main     per vertex: vertex_corner_ptr and lo_ptr
//   place_main        per corner: atomic placement into its vertex's slice
//                     and its low end's slice (`half`)
//   sort_slices       per slice: sorts a slice by (key, item); run on the
//                     vertex corners (by corner) and on `half` (by (hi,
//                     corner)), which makes both deterministic; slices
//                     over HEAP_MAX items are left to
//   rank_long,        per item of a long slice: its rank in the slice, and
//   copy_long         the item at its place (through `sorted`)
//   count_edges       per low end v: the distinct high ends in v's sorted
//                     slice (its edges) and, by atomics, the edges per high end
//   (the host scans `ecounts`: edge ids per low end, then the edges per high
//   end + |e|; the total 2|e| is read back to size the edge arrays)
//   edge_ends         per low end: edge ids in (lo, hi) order, edges,
//                     edge_corner_ptr, corner_edge, vertex_edge_ptr
//   edge_tags_main    per edge: its tag; non-manifold edges go to `status`
//   vertex_edges_main per edge: its place in both endpoints' lists (closed
//                     form at the low end, atomic at the high end)
//   sort_slices       on the vertex edge lists (by edge id)
//   vertex_tags_main  per vertex: isolated, boundary, non-manifold bits
//   vertex_fans       per vertex: repeated vertices in a face and vertices
//                     whose faces form more than one fan go to `status`
//
// Every output element is written by one invocation, or built by integer
// atomics whose result does not depend on their order (counts, atomicOr and
// atomicMin on the status word); the atomically placed slices are sorted
// afterwards by a total order, so every array is deterministic. Every global
// has its own binding number, so that each entry point's automatic layout
// holds just the bindings it uses (at most 8 storage buffers each); one
// buffer may sit at two bindings (an atomic and a plain view) used by
// different entry points. Grids are 2-D beyond 65 535 workgroups: flat index
// `wg.y * nwg.x + wg.x`.

struct Params {
    // Vertices, faces, corners, edges (0 until the edges are counted).
    nv: u32,
    nf: u32,
    nc: u32,
    ne: u32,
}

struct SortParams {
    // Number of slices.
    slices: u32,
    // 1: order items by (keys[item], item); 0: by item.
    keyed: u32,
    // Number of items in all slices (slice_ptr[slices]).
    total: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// The faces (read only).
@group(0) @binding(1) var<storage, read> face_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> face_verts: array<u32>;
@group(0) @binding(3) var<storage, read_write> corner_face: array<u32>;
// The ends of each corner's outgoing edge, lo <= hi.
@group(0) @binding(4) var<storage, read_write> corner_lo: array<u32>;
@group(0) @binding(5) var<storage, read_write> corner_hi: array<u32>;
// counts[v]: corners of v; counts[nv + v]: corners whose edge has low end
// v; counts[2 nv] = 0. Atomic while counting, then scanned in place.
@group(0) @binding(6) var<storage, read_write> counts_atomic: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> counts: array<u32>;
// status[0]: the STATUS_* bits found; status[1]: the smallest vertex
// involved (u32 max when none).
@group(0) @binding(8) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> vertex_corner_ptr: array<u32>;
// Start of each low end's slice of `half`.
@group(0) @binding(10) var<storage, read_write> lo_ptr: array<u32>;
// Placement cursors (relative to the slice start), zeroed before use.
@group(0) @binding(11) var<storage, read_write> cursor: array<atomic<u32>>;
@group(0) @binding(12) var<storage, read_write> vertex_corners: array<u32>;
// The corners by low end of their edge, then (after sorting) by (hi,
// corner): each edge's uses, contiguous and in corner order; this is the
// final edge_corners.
@group(0) @binding(13) var<storage, read_write> half: array<u32>;
// ecounts[v]: edges with low end v; ecounts[nv + v]: edges with high end
// v; ecounts[2 nv] = 0. Atomic while counting, then scanned in place.
@group(0) @binding(14) var<storage, read_write> ecounts_atomic: array<atomic<u32>>;
@group(0) @binding(15) var<storage, read> escan: array<u32>;
// Flat: edges[2e + j] is endpoint j of edge e.
@group(0) @binding(16) var<storage, read_write> edges: array<u32>;
@group(0) @binding(17) var<storage, read_write> edge_corner_ptr: array<u32>;
@group(0) @binding(18) var<storage, read_write> corner_edge: array<u32>;
@group(0) @binding(19) var<storage, read_write> vertex_edge_ptr: array<u32>;
@group(0) @binding(20) var<storage, read_write> edge_tags: array<u32>;
@group(0) @binding(21) var<storage, read_write> vertex_edges: array<u32>;
@group(0) @binding(22) var<storage, read_write> vertex_tags: array<u32>;
// sort_slices: the slices `items[slice_ptr[k] .. slice_ptr[k + 1]]`.
@group(0) @binding(23) var<uniform> sort_params: SortParams;
@group(0) @binding(24) var<storage, read> slice_ptr: array<u32>;
@group(0) @binding(25) var<storage, read_write> items: array<u32>;
@group(0) @binding(26) var<storage, read> keys: array<u32>;
// rank_long / copy_long: the long slices, sorted, at the items' places.
@group(0) @binding(27) var<storage, read_write> sorted: array<u32>;

// Edge tag bits (`edge_tag`).
const EDGE_BOUNDARY: u32 = 1u;
const EDGE_NON_MANIFOLD: u32 = 2u;
const EDGE_DEGENERATE: u32 = 4u;
const EDGE_INCONSISTENT: u32 = 8u;
// Vertex tag bits (`vertex_tag`).
const VERTEX_BOUNDARY: u32 = 1u;
const VERTEX_NON_MANIFOLD: u32 = 2u;
const VERTEX_ISOLATED: u32 = 4u;
// Status bits (`topology.rs`, `status`).
const STATUS_DEGENERATE: u32 = 1u;
const STATUS_MANY_USES: u32 = 2u;
const STATUS_INCONSISTENT: u32 = 4u;
const STATUS_SAME_FACE: u32 = 8u;
const STATUS_REPEATED: u32 = 16u;
const STATUS_FANS: u32 = 32u;

const NONE: u32 = 0xffffffffu;
// Slices up to this length are insertion-sorted, longer ones heap-sorted
// up to HEAP_MAX, and longer ones still by rank (rank_long, copy_long).
const INSERTION_MAX: u32 = 24u;
// One invocation heap-sorts at most this many items: about 2.6e4 loop
// iterations. Software drivers (llvmpipe) end an invocation's loops after
// 65535 iterations in all, so one invocation must never sort a long slice
// alone: a vertex of a few thousand corners was cut short, and its fan
// then looked broken ("not manifold").
const HEAP_MAX: u32 = 2048u;

fn flat(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

fn report(bits: u32, vertex: u32) {
    atomicOr(&status[0], bits);
    atomicMin(&status[1], vertex);
}

// One invocation per corner c: its face (binary search in face_ptr), the
// ends of its outgoing edge, and the counts (Alg. 1's valences, plus the
// uses per low end).
@compute @workgroup_size(256)
fn corners_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat(wg, nwg, lid);
    if (c >= params.nc) {
        return;
    }
    // The last face f with face_ptr[f] <= c (faces have at least 3 corners).
    var lo = 0u;
    var hi = params.nf;
    while (hi - lo > 1u) {
        let mid = lo + (hi - lo) / 2u;
        if (face_ptr[mid] <= c) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let f = lo;
    corner_face[c] = f;
    let next = select(c + 1u, face_ptr[f], c + 1u == face_ptr[f + 1u]);
    let a = face_verts[c];
    let b = face_verts[next];
    corner_lo[c] = min(a, b);
    corner_hi[c] = max(a, b);
    if (a == b) {
        report(STATUS_DEGENERATE, a);
    }
    atomicAdd(&counts_atomic[a], 1u);
    atomicAdd(&counts_atomic[params.nv + min(a, b)], 1u);
}

// One invocation per vertex v (and one past the end): the starts of its
// corners and of its low-end uses, from the scanned counts.
@compute @workgroup_size(256)
fn pointers_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat(wg, nwg, lid);
    if (v > params.nv) {
        return;
    }
    vertex_corner_ptr[v] = counts[v];
    lo_ptr[v] = counts[params.nv + v] - params.nc;
}

// One invocation per corner: a free place in its vertex's slice and in its
// low end's slice (the order within a slice depends on scheduling until
// sort_slices).
@compute @workgroup_size(256)
fn place_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let c = flat(wg, nwg, lid);
    if (c >= params.nc) {
        return;
    }
    let v = face_verts[c];
    vertex_corners[vertex_corner_ptr[v] + atomicAdd(&cursor[v], 1u)] = c;
    let l = corner_lo[c];
    half[lo_ptr[l] + atomicAdd(&cursor[params.nv + l], 1u)] = c;
}

fn sort_key(x: u32) -> u32 {
    if (sort_params.keyed != 0u) {
        return keys[x];
    }
    return 0u;
}

// (key, item) order; items within a slice are distinct, so it is total.
fn sort_less(a: u32, b: u32) -> bool {
    let ka = sort_key(a);
    let kb = sort_key(b);
    return ka < kb || (ka == kb && a < b);
}

fn swap_items(a: u32, b: u32) {
    let t = items[a];
    items[a] = items[b];
    items[b] = t;
}

// Restores the max-heap below `root` in items[lo .. lo + end).
fn sift_down(lo: u32, start: u32, end: u32) {
    var root = start;
    loop {
        let child = 2u * root + 1u;
        if (child >= end) {
            break;
        }
        var top = root;
        if (sort_less(items[lo + top], items[lo + child])) {
            top = child;
        }
        if (child + 1u < end && sort_less(items[lo + top], items[lo + child + 1u])) {
            top = child + 1u;
        }
        if (top == root) {
            break;
        }
        swap_items(lo + root, lo + top);
        root = top;
    }
}

// One invocation per slice k: sorts items[slice_ptr[k] .. slice_ptr[k + 1]]
// by (key, item).
@compute @workgroup_size(256)
fn sort_slices(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = flat(wg, nwg, lid);
    if (k >= sort_params.slices) {
        return;
    }
    let lo = slice_ptr[k];
    let hi = slice_ptr[k + 1u];
    let len = hi - lo;
    if (len > HEAP_MAX) {
        // rank_long sorts it, one invocation per item.
        return;
    }
    if (len <= INSERTION_MAX) {
        for (var i = lo + 1u; i < hi; i = i + 1u) {
            let x = items[i];
            var j = i;
            loop {
                if (j <= lo) {
                    break;
                }
                let y = items[j - 1u];
                if (!sort_less(x, y)) {
                    break;
                }
                items[j] = y;
                j = j - 1u;
            }
            items[j] = x;
        }
        return;
    }
    // Heapsort: O(len log len) without recursion or scratch space.
    var start = len / 2u;
    loop {
        if (start == 0u) {
            break;
        }
        start = start - 1u;
        sift_down(lo, start, len);
    }
    var end = len;
    loop {
        if (end <= 1u) {
            break;
        }
        end = end - 1u;
        swap_items(lo, lo + end);
        sift_down(lo, 0u, end);
    }
}

// The slice holding item p: the last k with slice_ptr[k] <= p (empty
// slices share their start with the next one).
fn slice_of(p: u32) -> u32 {
    var lo = 0u;
    var hi = sort_params.slices;
    while (hi - lo > 1u) {
        let mid = lo + (hi - lo) / 2u;
        if (slice_ptr[mid] <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// One invocation per item p of a slice longer than HEAP_MAX: its place in
// the sorted slice is the number of items of the slice before it in (key,
// item) order (items are distinct, so places are too); it goes there in
// `sorted`. One loop of the slice's length per invocation.
@compute @workgroup_size(256)
fn rank_long(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let p = flat(wg, nwg, lid);
    if (p >= sort_params.total) {
        return;
    }
    let k = slice_of(p);
    let lo = slice_ptr[k];
    let hi = slice_ptr[k + 1u];
    if (hi - lo <= HEAP_MAX) {
        return;
    }
    let x = items[p];
    var rank = 0u;
    for (var j = lo; j < hi; j = j + 1u) {
        if (sort_less(items[j], x)) {
            rank = rank + 1u;
        }
    }
    sorted[lo + rank] = x;
}

// One invocation per item p of a slice longer than HEAP_MAX: back from
// `sorted` (after rank_long).
@compute @workgroup_size(256)
fn copy_long(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let p = flat(wg, nwg, lid);
    if (p >= sort_params.total) {
        return;
    }
    let k = slice_of(p);
    if (slice_ptr[k + 1u] - slice_ptr[k] > HEAP_MAX) {
        items[p] = sorted[p];
    }
}

// One invocation per low end v: its edges are the distinct high ends of its
// sorted slice of `half`; each also counts at its high end.
@compute @workgroup_size(256)
fn count_edges(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat(wg, nwg, lid);
    if (v >= params.nv) {
        return;
    }
    var n = 0u;
    var last = NONE;
    for (var i = lo_ptr[v]; i < lo_ptr[v + 1u]; i = i + 1u) {
        let h = corner_hi[half[i]];
        if (h != last) {
            n = n + 1u;
            last = h;
            atomicAdd(&ecounts_atomic[params.nv + h], 1u);
        }
    }
    atomicStore(&ecounts_atomic[v], n);
}

// One invocation per low end v (and one past the end): numbers v's edges
// after those of lower vertices, in increasing high end (the CPU's (lo, hi)
// order), and writes their ends, the end of their uses in `half`, the edge
// of each use, and vertex_edge_ptr[v].
@compute @workgroup_size(256)
fn edge_ends(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat(wg, nwg, lid);
    let nv = params.nv;
    if (v > nv) {
        return;
    }
    // Edges at v: those with low end v and, before them, those with high
    // end v (lower ids).
    vertex_edge_ptr[v] = escan[v] + escan[nv + v] - params.ne;
    if (v == nv) {
        edge_corner_ptr[0] = 0u;
        return;
    }
    var id = escan[v];
    let s = lo_ptr[v];
    let t = lo_ptr[v + 1u];
    var i = s;
    while (i < t) {
        let h = corner_hi[half[i]];
        var j = i;
        loop {
            if (j >= t || corner_hi[half[j]] != h) {
                break;
            }
            corner_edge[half[j]] = id;
            j = j + 1u;
        }
        edges[2u * id] = v;
        edges[2u * id + 1u] = h;
        edge_corner_ptr[id + 1u] = j;
        id = id + 1u;
        i = j;
    }
}

// One invocation per edge: its tag as the CPU defines it; a non-manifold
// edge is reported (with its low end).
@compute @workgroup_size(256)
fn edge_tags_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = flat(wg, nwg, lid);
    if (e >= params.ne) {
        return;
    }
    let lo = edges[2u * e];
    let hi = edges[2u * e + 1u];
    let s = edge_corner_ptr[e];
    let t = edge_corner_ptr[e + 1u];
    let n = t - s;
    var tag = 0u;
    var bits = 0u;
    if (lo == hi) {
        tag = tag | EDGE_DEGENERATE | EDGE_NON_MANIFOLD;
        bits = bits | STATUS_DEGENERATE;
    }
    if (n == 1u) {
        tag = tag | EDGE_BOUNDARY;
    } else if (n == 2u) {
        if (face_verts[half[s]] == face_verts[half[s + 1u]] && lo != hi) {
            tag = tag | EDGE_INCONSISTENT | EDGE_NON_MANIFOLD;
            bits = bits | STATUS_INCONSISTENT;
        }
    } else {
        tag = tag | EDGE_NON_MANIFOLD;
        bits = bits | STATUS_MANY_USES;
    }
    // Two uses by one face (a face's corners are consecutive).
    for (var i = s + 1u; i < t; i = i + 1u) {
        if (corner_face[half[i - 1u]] == corner_face[half[i]]) {
            tag = tag | EDGE_NON_MANIFOLD;
            bits = bits | STATUS_SAME_FACE;
        }
    }
    edge_tags[e] = tag;
    if (bits != 0u) {
        report(bits, lo);
    }
}

// One invocation per edge e: its place in the list of its low end (after
// the edges with high end there, in id order: closed form) and of its high
// end (atomic; sorted next).
@compute @workgroup_size(256)
fn vertex_edges_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = flat(wg, nwg, lid);
    if (e >= params.ne) {
        return;
    }
    let nv = params.nv;
    let lo = edges[2u * e];
    let hi = edges[2u * e + 1u];
    let from_hi = escan[nv + lo + 1u] - escan[nv + lo];
    vertex_edges[vertex_edge_ptr[lo] + from_hi + e - escan[lo]] = e;
    vertex_edges[vertex_edge_ptr[hi] + atomicAdd(&cursor[hi], 1u)] = e;
}

// One invocation per vertex: isolated (no corners), or the boundary and
// non-manifold bits of its edges.
@compute @workgroup_size(256)
fn vertex_tags_main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat(wg, nwg, lid);
    if (v >= params.nv) {
        return;
    }
    if (vertex_corner_ptr[v] == vertex_corner_ptr[v + 1u]) {
        vertex_tags[v] = VERTEX_ISOLATED;
        return;
    }
    var tag = 0u;
    for (var i = vertex_edge_ptr[v]; i < vertex_edge_ptr[v + 1u]; i = i + 1u) {
        let t = edge_tags[vertex_edges[i]];
        if ((t & EDGE_BOUNDARY) != 0u) {
            tag = tag | VERTEX_BOUNDARY;
        }
        if ((t & EDGE_NON_MANIFOLD) != 0u) {
            tag = tag | VERTEX_NON_MANIFOLD;
        }
    }
    vertex_tags[v] = tag;
}

fn next_corner(c: u32) -> u32 {
    let f = corner_face[c];
    return select(c + 1u, face_ptr[f], c + 1u == face_ptr[f + 1u]);
}

fn prev_corner(c: u32) -> u32 {
    let f = corner_face[c];
    return select(c - 1u, face_ptr[f + 1u] - 1u, c == face_ptr[f]);
}

// The use of edge e other than corner c, or NONE for a boundary edge.
fn other_use(e: u32, c: u32) -> u32 {
    let s = edge_corner_ptr[e];
    if (edge_corner_ptr[e + 1u] - s < 2u) {
        return NONE;
    }
    let a = half[s];
    return select(a, half[s + 1u], a == c);
}

// One invocation per vertex v: a vertex repeated in a face (two of its
// corners, consecutive in corner order, in one face), or whose faces form
// more than one fan, is reported. The fan of v's first corner is walked
// across shared edges, forwards (out-edges) until it closes or meets a
// boundary, then backwards (in-edges); it is the only fan iff it holds all
// of v's corners. The walk is bounded by the corner count, so it ends on
// any input (its answer only matters where the edges at v are manifold:
// non-manifold edges are reported by edge_tags_main).
@compute @workgroup_size(256)
fn vertex_fans(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = flat(wg, nwg, lid);
    if (v >= params.nv) {
        return;
    }
    let s = vertex_corner_ptr[v];
    let t = vertex_corner_ptr[v + 1u];
    let k = t - s;
    if (k == 0u) {
        return;
    }
    for (var i = s + 1u; i < t; i = i + 1u) {
        if (corner_face[vertex_corners[i - 1u]] == corner_face[vertex_corners[i]]) {
            report(STATUS_REPEATED, v);
            return;
        }
    }
    let c0 = vertex_corners[s];
    var seen = 1u;
    var closed = false;
    var x = c0;
    loop {
        if (seen > k) {
            break;
        }
        let o = other_use(corner_edge[x], x);
        if (o == NONE) {
            break;
        }
        let y = next_corner(o);
        if (y == c0) {
            closed = true;
            break;
        }
        seen = seen + 1u;
        x = y;
    }
    if (!closed) {
        x = c0;
        loop {
            if (seen > k) {
                break;
            }
            let p = prev_corner(x);
            let o = other_use(corner_edge[p], p);
            if (o == NONE) {
                break;
            }
            seen = seen + 1u;
            x = o;
        }
    }
    if (seen != k) {
        report(STATUS_FANS, v);
    }
}
