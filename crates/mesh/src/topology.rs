//! Connectivity of a polygon mesh: the mesh matrix and what the kernels
//! derive from it.
//!
//! # The mesh matrix
//! The mesh matrix `M` (`|v| × |f|`, Mlakar et al. 2020, §3.1) has one
//! column per face; column `f` holds the face's vertices. As in the paper's
//! specialized kernels (§4), it is stored without values, with the row
//! indices of each column in the face's *traversal order*, so that the
//! implicit value of an entry is its position in the face:
//!
//! ```text
//!   faces       (0 1 2 3)  (1 4 5 2)
//!   face_ptr  = [0,         4,         8]
//!   face_verts= [0, 1, 2, 3, 1, 4, 5, 2]      corners 0..8
//! ```
//!
//! Each entry is a *corner*. [`Topology::mesh_matrix`] gives the
//! sorted-index form with explicit corner positions (`CscMat<u32>`) that the
//! algebra crate multiplies.
//!
//! # Edges
//! Edges are undirected and stored as `[lo, hi]`, `lo <= hi`. A use of an
//! edge is a corner whose outgoing edge (corner → next corner of its face)
//! it is. Where they come from depends on the constructor:
//!
//! * [`Topology::build`] derives them from the faces as OpenSubdiv does
//!   (`Vtr::internal::Level::completeTopologyFromFaceVertices`), visiting
//!   the uses of each vertex pair in corner order (faces in order):
//!   1. a *degenerate* use (a corner followed by the same vertex) always gets
//!      a new edge of its own;
//!   2. a use whose face is the face that used the pair's first edge last
//!      (a face traversing the same pair twice, as `[a, b, a, c]` does) gets
//!      a new, separate edge;
//!   3. every other use joins the pair's first edge.
//!
//!   On a manifold mesh this is one edge per vertex pair. Edges are numbered
//!   in increasing `(lo, hi)` order, and the edges of one pair in creation
//!   order (first edge first): on a mesh with one edge per pair, the
//!   numbering of the nonzeros of the triangle of `E` (§4.1), column by
//!   column. The numbering is deterministic (the same for any thread
//!   count).
//! * [`Topology::from_edges`] takes the edges and every corner's outgoing
//!   edge from the caller (refined levels, whose edge numbering is given by
//!   the refinement rules) and keeps the caller's numbering; pairs may have
//!   several edges.
//!
//! [`Topology::find_edge`] gives the lowest-numbered edge of a pair (for
//! `build`, the pair's first edge, which is what OpenSubdiv's `findEdge`
//! returns and where user creases go).
//!
//! # Derived data
//! * `corner_face` — the face of each corner (the COO hybrid of §4.2);
//! * `corner_edge` — the outgoing edge of each corner (the "outgoing" edge
//!   of Alg. 3);
//! * per edge, its uses (corners, in corner order) and a tag ([`edge_tag`]):
//!   boundary (one use); non-manifold (more than two uses, two uses in the
//!   same direction, two uses by one face, degenerate, or a vertex pair that
//!   has more than one edge); duplicate (not the lowest-numbered edge of its
//!   pair);
//! * per vertex, its corners (the row of `M`, in corner order) and its
//!   incident edges (in id order; a degenerate edge appears once per
//!   instance); valence = number of incident edges; tags: boundary,
//!   non-manifold (on a non-manifold edge, or faces forming more than one
//!   fan, two faces being in one fan when they share an edge, not merely a
//!   vertex pair), isolated (in no face), repeated (twice in some face).
//!
//! # Invariants
//! Every face has at least 3 corners and every corner refers to a vertex
//! `< num_vertices`; every edge has at least one use and joins the vertices
//! of its uses' corners; all counts fit in `u32`.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use subla_algebra::mem::{try_vec_with_capacity, try_zeroed_vec};
use subla_algebra::par::{Par, balanced_ranges, split_by_ptr};
use subla_algebra::{CscMat, CsrPattern};

use crate::error::{Location, MeshError, Result, to_u32};

/// Edge tag bits.
pub mod edge_tag {
    /// Used by exactly one face.
    pub const BOUNDARY: u8 = 1;
    /// Used by more than two faces, by two faces in the same direction, twice
    /// by one face, from a vertex to itself, or one of several edges joining
    /// the same two vertices.
    pub const NON_MANIFOLD: u8 = 2;
    /// From a vertex to itself (also [`NON_MANIFOLD`]).
    pub const DEGENERATE: u8 = 4;
    /// Used by two faces in the same direction (also [`NON_MANIFOLD`]).
    pub const INCONSISTENT: u8 = 8;
    /// Joins the same two vertices as a lower-numbered edge: an extra
    /// instance that OpenSubdiv creates for a face traversing a vertex pair
    /// twice, or a further degenerate edge at a vertex (also
    /// [`NON_MANIFOLD`]). [`Topology::find_edge`](crate::Topology::find_edge)
    /// never returns one.
    pub const DUPLICATE: u8 = 16;
}

/// Vertex tag bits.
pub mod vertex_tag {
    /// On a boundary edge.
    pub const BOUNDARY: u8 = 1;
    /// On a non-manifold edge, or its faces form more than one fan.
    pub const NON_MANIFOLD: u8 = 2;
    /// In no face.
    pub const ISOLATED: u8 = 4;
    /// Appears more than once in some face.
    pub const REPEATED: u8 = 8;
}

/// The connectivity of a polygon mesh; see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    num_vertices: u32,
    face_ptr: Vec<u32>,
    face_verts: Vec<u32>,
    corner_face: Vec<u32>,
    corner_edge: Vec<u32>,
    edges: Vec<[u32; 2]>,
    edge_corner_ptr: Vec<u32>,
    edge_corners: Vec<u32>,
    edge_tags: Vec<u8>,
    vertex_corner_ptr: Vec<u32>,
    vertex_corners: Vec<u32>,
    vertex_edge_ptr: Vec<u32>,
    vertex_edges: Vec<u32>,
    vertex_tags: Vec<u8>,
    /// The order every face has (3 or 4), else 0: [`Topology::next_corner`]
    /// and [`Topology::prev_corner`] then need no look-up.
    uniform: u32,
}

/// 3 or 4 where every face of `face_ptr` has that many corners, else 0.
fn uniform_order(face_ptr: &[u32]) -> u32 {
    let n = match face_ptr {
        [a, b, ..] => b - a,
        _ => return 0,
    };
    let all = (n == 3 || n == 4) && face_ptr.iter().enumerate().all(|(f, &p)| u64::from(p) == u64::from(n) * f as u64);
    if all { n } else { 0 }
}

/// Counting sort of `keys` into buckets `0..nbuckets`: returns the bucket
/// pointer array and, bucket by bucket, the positions `i` of `keys`, sorted
/// inside each bucket by `order(i)` (so the result never depends on thread
/// timing; `order` must tell any two positions apart). Sequential with one
/// thread or few items, otherwise atomic counters and a parallel sort of the
/// buckets. `what` names the relation in an out-of-memory error.
fn bucket<K: Ord + Copy + Send>(
    nbuckets: usize,
    len: usize,
    key: impl Fn(usize) -> u32 + Sync,
    order: impl Fn(u32) -> K + Sync,
    par: Par,
    what: &'static str,
) -> Result<(Vec<u32>, Vec<u32>)> {
    bucket_with(nbuckets, len, key, Some(order), par, what)
}

/// [`bucket`] with each bucket in position order: the counting sort places
/// the positions in increasing order already, so no bucket is sorted.
fn bucket_by_position(
    nbuckets: usize,
    len: usize,
    key: impl Fn(usize) -> u32 + Sync,
    par: Par,
    what: &'static str,
) -> Result<(Vec<u32>, Vec<u32>)> {
    bucket_with(nbuckets, len, key, None::<fn(u32) -> u32>, par, what)
}

/// [`bucket`], the sort inside each bucket left out without an `order`.
fn bucket_with<K: Ord + Copy + Send>(
    nbuckets: usize,
    len: usize,
    key: impl Fn(usize) -> u32 + Sync,
    order: Option<impl Fn(u32) -> K + Sync>,
    par: Par,
    what: &'static str,
) -> Result<(Vec<u32>, Vec<u32>)> {
    if par.threads() == 1 || len < 1 << 15 {
        // A plain (stable) counting sort, then the sort inside each bucket.
        let mut ptr = try_zeroed_vec::<u32>(nbuckets + 1, what)?;
        for i in 0..len {
            ptr[key(i) as usize + 1] += 1;
        }
        for b in 0..nbuckets {
            ptr[b + 1] += ptr[b];
        }
        let mut cursor = try_vec_with_capacity(nbuckets + 1, what)?;
        cursor.extend_from_slice(&ptr);
        let mut items = try_zeroed_vec::<u32>(len, what)?;
        for i in 0..len {
            let k = key(i) as usize;
            items[cursor[k] as usize] = i as u32;
            cursor[k] += 1;
        }
        drop(cursor);
        if let Some(order) = &order {
            for b in 0..nbuckets {
                items[ptr[b] as usize..ptr[b + 1] as usize].sort_unstable_by_key(|&i| order(i));
            }
        }
        return Ok((ptr, items));
    }
    // Blocked counting sort: each block of items counts its own histogram,
    // a scan across blocks gives each block private cursors, and blocks then
    // place their items independently (stable: block order, then item order).
    let nblocks = par.threads().clamp(1, len / (1 << 14) + 1);
    let blocks = subla_algebra::par::even_ranges(len, nblocks);
    let mut hists: Vec<Vec<u32>> = blocks
        .par_iter()
        .map(|r| {
            let mut h = try_zeroed_vec::<u32>(nbuckets, what)?;
            for i in r.clone() {
                h[key(i) as usize] += 1;
            }
            Ok(h)
        })
        .collect::<Result<_>>()?;
    let mut ptr = try_zeroed_vec::<u32>(nbuckets + 1, what)?;
    for k in 0..nbuckets {
        let mut acc = ptr[k];
        for h in hists.iter_mut() {
            let c = h[k];
            h[k] = acc;
            acc += c;
        }
        ptr[k + 1] = acc;
    }
    let mut items: Vec<AtomicU32> = try_vec_with_capacity(len, what)?;
    items.extend((0..len).map(|_| AtomicU32::new(0)));
    blocks.into_par_iter().zip(hists).for_each(|(r, mut cursor)| {
        for i in r {
            let k = key(i) as usize;
            // Each slot is written by exactly one block: plain stores.
            items[cursor[k] as usize].store(i as u32, Ordering::Relaxed);
            cursor[k] += 1;
        }
    });
    let mut items: Vec<u32> = items.into_iter().map(AtomicU32::into_inner).collect();
    let Some(order) = order else {
        return Ok((ptr, items));
    };
    let ranges = balanced_ranges(&ptr, par.blocks(len + nbuckets, 1 << 14));
    let sort_block = |(r, chunk): (Range<usize>, &mut [u32])| {
        let base = ptr[r.start] as usize;
        for b in r {
            let s = ptr[b] as usize - base;
            let e = ptr[b + 1] as usize - base;
            chunk[s..e].sort_unstable_by_key(|&i| order(i));
        }
    };
    let pieces = split_by_ptr(&mut items, &ptr, &ranges);
    if ranges.len() <= 1 {
        ranges.into_iter().zip(pieces).for_each(sort_block);
    } else {
        ranges.into_par_iter().zip(pieces).for_each(sort_block);
    }
    Ok((ptr, items))
}

/// Checks the faces (pointer array, orders, vertex indices) and returns the
/// number of vertices as `u32`.
fn check_faces(num_vertices: usize, face_ptr: &[u32], face_verts: &[u32]) -> Result<u32> {
    let nv = to_u32(num_vertices, "number of vertices")?;
    to_u32(face_verts.len(), "number of corners")?;
    if face_ptr.first() != Some(&0) || face_ptr.last().map(|&p| p as usize) != Some(face_verts.len()) {
        return Err(MeshError::MalformedStatement {
            at: Location::none(),
            statement: "face pointer array".into(),
            reason: format!(
                "must start at 0 and end at the number of corners ({}), found {:?}..{:?}",
                face_verts.len(),
                face_ptr.first(),
                face_ptr.last()
            ),
        });
    }
    let nf = face_ptr.len() - 1;
    for f in 0..nf {
        if face_ptr[f + 1] < face_ptr[f] {
            return Err(MeshError::MalformedStatement {
                at: Location::none(),
                statement: "face pointer array".into(),
                reason: format!("decreases at face {f}"),
            });
        }
        let order = (face_ptr[f + 1] - face_ptr[f]) as usize;
        if order < 3 {
            return Err(MeshError::FaceTooSmall { at: Location::none(), face: f, order });
        }
    }
    if let Some(c) = face_verts.iter().position(|&v| v >= nv) {
        let face = face_ptr.partition_point(|&p| p as usize <= c) - 1;
        return Err(MeshError::IndexOutOfRange {
            at: Location::none(),
            face,
            index: i64::from(face_verts[c]),
            num_vertices,
        });
    }
    Ok(nv)
}

/// The face of each corner.
fn corner_faces(face_ptr: &[u32], parallel: bool, par: Par) -> Result<Vec<u32>> {
    let nf = face_ptr.len() - 1;
    let nc = face_ptr[nf] as usize;
    let mut corner_face = try_zeroed_vec::<u32>(nc, "the face of each corner")?;
    let ranges = balanced_ranges(face_ptr, par.blocks(nc + nf, 1 << 14));
    let pieces = split_by_ptr(&mut corner_face, face_ptr, &ranges);
    let work = |(r, chunk): (Range<usize>, &mut [u32])| {
        let base = face_ptr[r.start] as usize;
        for f in r {
            chunk[face_ptr[f] as usize - base..face_ptr[f + 1] as usize - base].fill(f as u32);
        }
    };
    if parallel {
        ranges.into_par_iter().zip(pieces).for_each(work);
    } else {
        ranges.into_iter().zip(pieces).for_each(work);
    }
    Ok(corner_face)
}

/// OpenSubdiv's edge rules for the uses (corners) of one vertex pair, in
/// corner order: calls `assign(k, local)` with the pair-local index (in
/// creation order) of the edge that the `k`-th use gets, and returns the
/// number of edges of the pair. See the [module docs](self).
fn pair_edges(degenerate: bool, uses: &[u32], face_of: impl Fn(u32) -> u32, mut assign: impl FnMut(usize, u32)) -> u32 {
    if degenerate {
        for k in 0..uses.len() {
            assign(k, k as u32);
        }
        return uses.len() as u32;
    }
    let mut n = 0u32;
    // The face that used the pair's first edge last.
    let mut last = 0u32;
    for (k, &c) in uses.iter().enumerate() {
        let f = face_of(c);
        if n == 0 {
            n = 1;
            last = f;
            assign(k, 0);
        } else if f == last {
            assign(k, n);
            n += 1;
        } else {
            last = f;
            assign(k, 0);
        }
    }
    n
}

/// Calls `group(start, end, hi)` for each run of `uses[start..end]` with the
/// same `hi(use)` (the uses of one vertex pair, `uses` being sorted by `hi`).
fn for_each_pair(uses: &[u32], hi: impl Fn(u32) -> u32, mut group: impl FnMut(usize, usize, u32)) {
    let mut i = 0;
    while i < uses.len() {
        let h = hi(uses[i]);
        let mut j = i + 1;
        while j < uses.len() && hi(uses[j]) == h {
            j += 1;
        }
        group(i, j, h);
        i = j;
    }
}

impl Topology {
    /// Builds the connectivity of faces given as `face_ptr` / `face_verts`
    /// (the mesh matrix in traversal order, see the [module docs](self)),
    /// deriving the edges with OpenSubdiv's rules and numbering them by
    /// `(lo, hi)`.
    ///
    /// Non-manifold configurations and faces that repeat a vertex are
    /// accepted and tagged (as OpenSubdiv does); use
    /// [`Topology::check_manifold`] to reject them.
    ///
    /// # Errors
    /// [`MeshError::FaceTooSmall`], [`MeshError::IndexOutOfRange`],
    /// [`MeshError::TooLarge`], and [`MeshError::MalformedStatement`] for a
    /// malformed `face_ptr`; [`MeshError::Algebra`] (out of memory) where
    /// the allocator cannot supply the connectivity.
    pub fn build(num_vertices: usize, face_ptr: Vec<u32>, face_verts: Vec<u32>, par: Par) -> Result<Self> {
        let nv = check_faces(num_vertices, &face_ptr, &face_verts)?;
        Self::build_valid(nv, face_ptr, face_verts, par)
    }

    /// Builds the connectivity of faces given as `face_ptr` / `face_verts`
    /// with the caller's edges: `edges[e]` joins the two vertices of edge `e`
    /// (either order) and `corner_edge[c]` is the outgoing edge of corner `c`
    /// (from its vertex to the next corner's vertex). For refined levels,
    /// whose edge numbering comes from the refinement rules.
    ///
    /// Edges keep the caller's numbering (they need not be sorted, and a
    /// vertex pair may have several edges); [`Topology::edges`] stores each
    /// as `[min, max]`. Everything else (uses, incident edges, tags) is
    /// derived exactly as [`Topology::build`] derives it, so that
    /// `from_edges` on the edges and corner edges of a built topology gives
    /// it back. No sorting of edges: counting sorts and prefix sums, no
    /// per-edge allocation, in parallel under [`Par::Rayon`], with the same
    /// result for any thread count.
    ///
    /// # Errors
    /// As [`Topology::build`] for the faces; then
    /// [`MeshError::MalformedStatement`] (statement `"edge list"`, naming the
    /// first offending corner or edge) if `corner_edge` does not have one
    /// entry per corner, an edge has a vertex out of range, a corner's edge
    /// does not exist or does not join the corner's vertex and the next
    /// corner's vertex. An edge no corner uses is kept (OpenSubdiv's second
    /// half of a degenerate edge is one) and tagged non-manifold;
    /// [`MeshError::TooLarge`] if there are more than `u32::MAX` edges;
    /// [`MeshError::Algebra`] (out of memory) where the allocator cannot
    /// supply the connectivity.
    pub fn from_edges(
        num_vertices: usize,
        face_ptr: Vec<u32>,
        face_verts: Vec<u32>,
        edges: Vec<[u32; 2]>,
        corner_edge: Vec<u32>,
        par: Par,
    ) -> Result<Self> {
        Self::from_edges_with(num_vertices, face_ptr, face_verts, edges, corner_edge, Refined::Checked, par)
    }

    /// [`Topology::from_edges`] for the edges of a refinement, which make
    /// two of its checks redundant: each corner's edge joins the corner's
    /// vertex and the next corner's by construction (checked in debug builds
    /// only), and with `distinct_pairs` the caller states that no two edges
    /// join the same two vertices, so that the search for such pairs (a
    /// sort of each vertex's edges) is left out. A refinement of a parent
    /// none of whose faces uses an edge twice (a manifold parent, say) has
    /// distinct pairs: each half joins a vertex point and an edge point of
    /// its own parent edge, each inner edge a face point and an edge point
    /// of its own face.
    ///
    /// Given edges that do not meet these conditions, the connectivity is
    /// wrong (it is never unsafe): corners may name edges that do not join
    /// their vertices, and repeated pairs go untagged.
    ///
    /// # Errors
    /// As [`Topology::from_edges`], but for the corner-edge check.
    pub fn from_refined_edges(
        num_vertices: usize,
        face_ptr: Vec<u32>,
        face_verts: Vec<u32>,
        edges: Vec<[u32; 2]>,
        corner_edge: Vec<u32>,
        distinct_pairs: bool,
        par: Par,
    ) -> Result<Self> {
        let trust = if distinct_pairs { Refined::DistinctPairs } else { Refined::Corners };
        Self::from_edges_with(num_vertices, face_ptr, face_verts, edges, corner_edge, trust, par)
    }

    fn from_edges_with(
        num_vertices: usize,
        face_ptr: Vec<u32>,
        face_verts: Vec<u32>,
        mut edges: Vec<[u32; 2]>,
        corner_edge: Vec<u32>,
        trust: Refined,
        par: Par,
    ) -> Result<Self> {
        let nv = check_faces(num_vertices, &face_ptr, &face_verts)?;
        let nc = face_verts.len();
        let ne = edges.len();
        to_u32(ne, "number of edges")?;
        let bad = |reason: String| MeshError::MalformedStatement {
            at: Location::none(),
            statement: "edge list".into(),
            reason,
        };
        if corner_edge.len() != nc {
            return Err(bad(format!("{} corner edges given for {nc} corners", corner_edge.len())));
        }
        let parallel = par == Par::Rayon && nc >= 1 << 15;
        let first = |n: usize, pred: &(dyn Fn(usize) -> bool + Sync)| -> Option<usize> {
            if parallel {
                // Blocks searched in order, each sequentially: a parallel
                // search item by item pays rayon's bookkeeping on every item.
                const BLOCK: usize = 1 << 12;
                (0..n.div_ceil(BLOCK))
                    .into_par_iter()
                    .find_map_first(|b| (b * BLOCK..n.min((b + 1) * BLOCK)).find(|&i| pred(i)))
            } else {
                (0..n).position(pred)
            }
        };
        if let Some(e) = first(ne, &|e| edges[e][0] >= nv || edges[e][1] >= nv) {
            let [a, b] = edges[e];
            return Err(bad(format!("edge {e} ({a}, {b}) has a vertex out of range ({num_vertices} vertices)")));
        }
        let corner_face = corner_faces(&face_ptr, parallel, par)?;
        let next = |c: usize| -> usize {
            let f = corner_face[c] as usize;
            if c + 1 == face_ptr[f + 1] as usize { face_ptr[f] as usize } else { c + 1 }
        };
        let wrong = |c: usize| -> bool {
            let Some(&[a, b]) = edges.get(corner_edge[c] as usize) else {
                return true;
            };
            let (u, w) = (face_verts[c], face_verts[next(c)]);
            !((a == u && b == w) || (a == w && b == u))
        };
        let check_corners = trust == Refined::Checked || cfg!(debug_assertions);
        if let Some(c) = first(if check_corners { nc } else { 0 }, &wrong) {
            let (f, e) = (corner_face[c], corner_edge[c]);
            let (u, w) = (face_verts[c], face_verts[next(c)]);
            return Err(bad(match edges.get(e as usize) {
                None => format!("corner {c} (face {f}) has edge {e}, but there are only {ne} edges"),
                Some([a, b]) => {
                    format!("corner {c} (face {f}) runs from vertex {u} to {w}, but its edge {e} joins ({a}, {b})")
                }
            }));
        }
        let normalise = |e: &mut [u32; 2]| {
            if e[0] > e[1] {
                e.swap(0, 1);
            }
        };
        if parallel {
            edges.par_iter_mut().with_min_len(1 << 12).for_each(normalise);
        } else {
            edges.iter_mut().for_each(normalise);
        }
        let (edge_corner_ptr, edge_corners) =
            bucket_by_position(ne, nc, |c| corner_edge[c], par, "the uses of each edge")?;
        Topology {
            num_vertices: nv,
            face_ptr,
            face_verts,
            corner_face,
            corner_edge,
            edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags: Vec::new(),
            vertex_corner_ptr: Vec::new(),
            vertex_corners: Vec::new(),
            vertex_edge_ptr: Vec::new(),
            vertex_edges: Vec::new(),
            vertex_tags: Vec::new(),
            uniform: 0,
        }
        .finish_with(trust == Refined::DistinctPairs, par)
    }

    /// The edges of valid faces by OpenSubdiv's rules (see the
    /// [module docs](self)), then [`Topology::finish`].
    fn build_valid(nv: u32, face_ptr: Vec<u32>, face_verts: Vec<u32>, par: Par) -> Result<Self> {
        let nc = face_verts.len();
        let parallel = par == Par::Rayon && nc >= 1 << 15;
        let corner_face = corner_faces(&face_ptr, parallel, par)?;
        let next = |c: usize| -> usize {
            let f = corner_face[c] as usize;
            if c + 1 == face_ptr[f + 1] as usize { face_ptr[f] as usize } else { c + 1 }
        };
        let ends = |c: usize| -> (u32, u32) {
            let a = face_verts[c];
            let b = face_verts[next(c)];
            (a.min(b), a.max(b))
        };
        let hi_of = |c: u32| ends(c as usize).1;
        let face_of = |c: u32| corner_face[c as usize];
        // Uses bucketed by their low vertex, ordered by (high, corner): the
        // uses of each vertex pair are contiguous and in corner order.
        let (lo_ptr, mut half) =
            bucket(nv as usize, nc, |c| ends(c).0, |c| (ends(c as usize).1, c), par, "the edge uses of each vertex")?;
        // Edges per low vertex, then their ids by a scan.
        let mut count = try_zeroed_vec::<u32>(nv as usize, "the number of edges of each vertex")?;
        let count_edges = |(v, n): (usize, &mut u32)| {
            let uses = &half[lo_ptr[v] as usize..lo_ptr[v + 1] as usize];
            *n = 0;
            for_each_pair(uses, hi_of, |s, e, hi| *n += pair_edges(v as u32 == hi, &uses[s..e], face_of, |_, _| {}));
        };
        if parallel {
            count.par_iter_mut().enumerate().with_min_len(1 << 12).for_each(count_edges);
        } else {
            count.iter_mut().enumerate().for_each(count_edges);
        }
        let mut edge_base = try_vec_with_capacity(nv as usize + 1, "the first edge of each vertex")?;
        let mut acc = 0u32;
        edge_base.push(0);
        for &n in &count {
            acc += n;
            edge_base.push(acc);
        }
        drop(count);
        let ne = acc as usize;
        let mut edges = try_zeroed_vec::<[u32; 2]>(ne, "the edges")?;
        let mut edge_corner_ptr = try_zeroed_vec::<u32>(ne + 1, "the uses of each edge")?;
        let mut corner_edge_at = try_zeroed_vec::<u32>(nc, "the edge of each corner")?; // edge id per position of `half`
        {
            let ranges = balanced_ranges(&lo_ptr, par.blocks(nc + nv as usize, 1 << 14));
            let e_pieces = split_by_ptr(&mut edges, &edge_base, &ranges);
            let p_pieces = split_by_ptr(&mut edge_corner_ptr[1..], &edge_base, &ranges);
            let c_pieces = split_by_ptr(&mut corner_edge_at, &lo_ptr, &ranges);
            let h_pieces = split_by_ptr(&mut half, &lo_ptr, &ranges);
            type Piece<'a> = ((((Range<usize>, &'a mut [[u32; 2]]), &'a mut [u32]), &'a mut [u32]), &'a mut [u32]);
            let work = |((((r, e_out), p_out), c_out), h_out): Piece<'_>| {
                let ebase = edge_base[r.start] as usize;
                let cbase = lo_ptr[r.start] as usize;
                let mut scratch: Vec<(u32, u32)> = Vec::new();
                for v in r {
                    let (s, e) = (lo_ptr[v] as usize - cbase, lo_ptr[v + 1] as usize - cbase);
                    let mut id = edge_base[v] as usize - ebase;
                    let (uses, local) = (&mut h_out[s..e], &mut c_out[s..e]);
                    let mut i = 0;
                    while i < uses.len() {
                        // The uses of the pair (v, hi): uses[i..j].
                        let hi = hi_of(uses[i]);
                        let mut j = i + 1;
                        while j < uses.len() && hi_of(uses[j]) == hi {
                            j += 1;
                        }
                        let n = pair_edges(v as u32 == hi, &uses[i..j], face_of, |k, l| local[i + k] = l) as usize;
                        if n > 1 {
                            // Edge by edge (creation order), each edge's uses
                            // in corner order.
                            scratch.clear();
                            scratch.extend(local[i..j].iter().copied().zip(uses[i..j].iter().copied()));
                            scratch.sort_unstable();
                            for (k, &(l, c)) in scratch.iter().enumerate() {
                                local[i + k] = l;
                                uses[i + k] = c;
                            }
                        }
                        for (k, l) in (i..j).zip(&mut local[i..j]) {
                            let at = id + *l as usize;
                            *l = (ebase + at) as u32;
                            e_out[at] = [v as u32, hi];
                            // End position (in `half`) of this edge's uses.
                            p_out[at] = (cbase + s + k + 1) as u32;
                        }
                        id += n;
                        i = j;
                    }
                }
            };
            if parallel {
                ranges.into_par_iter().zip(e_pieces).zip(p_pieces).zip(c_pieces).zip(h_pieces).for_each(work);
            } else {
                ranges.into_iter().zip(e_pieces).zip(p_pieces).zip(c_pieces).zip(h_pieces).for_each(work);
            }
        }
        // `half` now lists each edge's uses contiguously in corner order.
        let edge_corners = half;
        let corner_edge: Vec<u32> = if parallel {
            let mut out: Vec<AtomicU32> = try_vec_with_capacity(nc, "the edge of each corner")?;
            out.extend((0..nc).map(|_| AtomicU32::new(0)));
            edge_corners.par_iter().zip(corner_edge_at.par_iter()).with_min_len(1 << 14).for_each(|(&c, &e)| {
                out[c as usize].store(e, Ordering::Relaxed);
            });
            out.into_iter().map(AtomicU32::into_inner).collect()
        } else {
            let mut out = try_zeroed_vec::<u32>(nc, "the edge of each corner")?;
            for (&c, &e) in edge_corners.iter().zip(&corner_edge_at) {
                out[c as usize] = e;
            }
            out
        };
        drop(corner_edge_at);
        Topology {
            num_vertices: nv,
            face_ptr,
            face_verts,
            corner_face,
            corner_edge,
            edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags: Vec::new(),
            vertex_corner_ptr: Vec::new(),
            vertex_corners: Vec::new(),
            vertex_edge_ptr: Vec::new(),
            vertex_edges: Vec::new(),
            vertex_tags: Vec::new(),
            uniform: 0,
        }
        .finish(par)
    }

    /// A topology from fields a split derived directly (see
    /// [`crate::split`]), taken as they are: the caller guarantees the
    /// invariants of [`RawTopology`](crate::split::RawTopology).
    pub fn from_raw(r: crate::split::RawTopology) -> Self {
        let uniform = uniform_order(&r.face_ptr);
        Topology {
            num_vertices: r.num_vertices,
            face_ptr: r.face_ptr,
            face_verts: r.face_verts,
            corner_face: r.corner_face,
            corner_edge: r.corner_edge,
            edges: r.edges,
            edge_corner_ptr: r.edge_corner_ptr,
            edge_corners: r.edge_corners,
            edge_tags: r.edge_tags,
            vertex_corner_ptr: r.vertex_corner_ptr,
            vertex_corners: r.vertex_corners,
            vertex_edge_ptr: r.vertex_edge_ptr,
            vertex_edges: r.vertex_edges,
            vertex_tags: r.vertex_tags,
            uniform,
        }
    }

    /// The incident edges of all vertices, vertex after vertex (see
    /// [`Topology::vertex_edge_ptr`]).
    #[inline]
    pub fn vertex_edges_all(&self) -> &[u32] {
        &self.vertex_edges
    }

    /// What both constructors derive from the faces, the edges (`[lo, hi]`)
    /// and the uses of each edge (`corner_edge`, `edge_corner_ptr`,
    /// `edge_corners`, each edge's uses in corner order): the edges of each
    /// vertex, the corners of each vertex, and the tags.
    fn finish(self, par: Par) -> Result<Self> {
        self.finish_with(false, par)
    }

    /// [`Topology::finish`]; `distinct_pairs`: no two edges join the same
    /// two vertices, so none is looked for.
    fn finish_with(mut self, distinct_pairs: bool, par: Par) -> Result<Self> {
        self.uniform = uniform_order(&self.face_ptr);
        let nv = self.num_vertices as usize;
        let nc = self.face_verts.len();
        let ne = self.edges.len();
        let parallel = par == Par::Rayon && nc >= 1 << 15;
        let edges = &self.edges;
        let face_verts = &self.face_verts;
        let corner_face = &self.corner_face;
        let corner_edge = &self.corner_edge;
        let face_ptr = &self.face_ptr;
        // Vertex -> edges: incidence 2e (lo) and 2e + 1 (hi) of each edge,
        // bucketed by vertex in edge order; the second incidence of a
        // degenerate edge goes to an extra bucket `nv`, dropped.
        let (mut vertex_edge_ptr, incid) = bucket_by_position(
            nv + 1,
            2 * ne,
            |i| {
                let [lo, hi] = edges[i / 2];
                if i % 2 == 0 {
                    lo
                } else if lo == hi {
                    nv as u32
                } else {
                    hi
                }
            },
            par,
            "the edges of each vertex",
        )?;
        vertex_edge_ptr.truncate(nv + 1);
        let incid = &incid[..vertex_edge_ptr[nv] as usize];
        let mut vertex_edges: Vec<u32> = try_vec_with_capacity(incid.len(), "the edges of each vertex")?;
        if parallel {
            incid.par_iter().with_min_len(1 << 14).map(|&i| i / 2).collect_into_vec(&mut vertex_edges);
        } else {
            vertex_edges.extend(incid.iter().map(|&i| i / 2));
        }
        let edges_of =
            |v: u32| &vertex_edges[vertex_edge_ptr[v as usize] as usize..vertex_edge_ptr[v as usize + 1] as usize];
        // Edges sharing their vertex pair with another edge: found per low
        // vertex by a sort of that vertex's edges (O(d log d), never a scan
        // of the incident edges per edge, which is quadratic where many
        // edges join the same two vertices).
        let shared = if distinct_pairs {
            debug_assert!(shared_pairs(nv, edges, &vertex_edges, &vertex_edge_ptr, parallel).is_empty());
            Vec::new()
        } else {
            shared_pairs(nv, edges, &vertex_edges, &vertex_edge_ptr, parallel)
        };
        // Edge tags.
        let edge_corner_ptr = &self.edge_corner_ptr;
        let edge_corners = &self.edge_corners;
        let tag_edge = |e: usize| -> u8 {
            let cs = &edge_corners[edge_corner_ptr[e] as usize..edge_corner_ptr[e + 1] as usize];
            let [lo, hi] = edges[e];
            let mut t = 0;
            if lo == hi {
                t |= edge_tag::DEGENERATE | edge_tag::NON_MANIFOLD;
            }
            match cs.len() {
                1 => t |= edge_tag::BOUNDARY,
                2 => {
                    if face_verts[cs[0] as usize] == face_verts[cs[1] as usize] && lo != hi {
                        t |= edge_tag::INCONSISTENT | edge_tag::NON_MANIFOLD;
                    }
                }
                _ => t |= edge_tag::NON_MANIFOLD,
            }
            // Two uses by one face (a face's corners are consecutive).
            if cs.windows(2).any(|w| corner_face[w[0] as usize] == corner_face[w[1] as usize]) {
                t |= edge_tag::NON_MANIFOLD;
            }
            if !shared.is_empty()
                && let Ok(k) = shared.binary_search_by_key(&(e as u32), |x| x.0)
            {
                t |= shared[k].1;
            }
            t
        };
        let edge_tags: Vec<u8> = crate::split::collect(ne, parallel, "the edge tags", tag_edge)?;
        // Vertex -> corners (rows of M).
        let (vertex_corner_ptr, vertex_corners) =
            bucket_by_position(nv, nc, |c| face_verts[c], par, "the corners of each vertex")?;
        // Vertex tags: boundary, non-manifold (edge or fans), isolated, repeated.
        let tag_vertex = |v: usize| -> u8 {
            let cs = &vertex_corners[vertex_corner_ptr[v] as usize..vertex_corner_ptr[v + 1] as usize];
            if cs.is_empty() {
                return vertex_tag::ISOLATED;
            }
            let mut t = 0;
            for &e in edges_of(v as u32) {
                let et = edge_tags[e as usize];
                if et & edge_tag::BOUNDARY != 0 {
                    t |= vertex_tag::BOUNDARY;
                }
                if et & edge_tag::NON_MANIFOLD != 0 {
                    t |= vertex_tag::NON_MANIFOLD;
                }
            }
            if cs.windows(2).any(|w| corner_face[w[0] as usize] == corner_face[w[1] as usize]) {
                t |= vertex_tag::REPEATED | vertex_tag::NON_MANIFOLD;
            }
            if t & vertex_tag::NON_MANIFOLD == 0
                && !one_fan(cs, |c| {
                    let f = corner_face[c] as usize;
                    let prev = if c == face_ptr[f] as usize { face_ptr[f + 1] as usize - 1 } else { c - 1 };
                    (corner_edge[prev], corner_edge[c])
                })
            {
                t |= vertex_tag::NON_MANIFOLD;
            }
            t
        };
        let vertex_tags: Vec<u8> = crate::split::collect(nv, parallel, "the vertex tags", tag_vertex)?;
        self.edge_tags = edge_tags;
        self.vertex_corner_ptr = vertex_corner_ptr;
        self.vertex_corners = vertex_corners;
        self.vertex_edge_ptr = vertex_edge_ptr;
        self.vertex_edges = vertex_edges;
        self.vertex_tags = vertex_tags;
        Ok(self)
    }

    /// Rejects what [`Topology::build`] accepted but a manifold-only consumer
    /// cannot use, naming the first offending element: repeated vertices in
    /// a face, non-manifold edges, inconsistent orientation, bow-tie
    /// vertices.
    ///
    /// # Errors
    /// [`MeshError::RepeatedVertex`], [`MeshError::NonManifoldEdge`],
    /// [`MeshError::InconsistentOrientation`],
    /// [`MeshError::NonManifoldVertex`]; [`MeshError::Algebra`] (out of
    /// memory) where the allocator cannot supply a mark per vertex.
    pub fn check_manifold(&self) -> Result<()> {
        if let Some((face, vertex)) = self.first_repeated_vertex()? {
            return Err(MeshError::RepeatedVertex { at: Location::none(), face, vertex });
        }
        for e in 0..self.num_edges() {
            let t = self.edge_tags[e];
            if t & edge_tag::NON_MANIFOLD == 0 {
                continue;
            }
            let [lo, hi] = self.edges[e];
            let cs = self.edge_corners(e);
            let face = |k: usize| self.corner_face[cs[k] as usize];
            if t & edge_tag::INCONSISTENT != 0 {
                let a = self.face_verts[cs[0] as usize];
                return Err(MeshError::InconsistentOrientation {
                    v0: a,
                    v1: if a == lo { hi } else { lo },
                    face_a: face(0),
                    face_b: face(1),
                });
            }
            if cs.len() > 2 {
                return Err(MeshError::NonManifoldEdge {
                    v0: lo,
                    v1: hi,
                    faces: cs.len(),
                    first: face(0),
                    second: face(1),
                    third: face(2),
                });
            }
        }
        for v in 0..self.num_vertices() {
            if self.vertex_tags[v] & vertex_tag::NON_MANIFOLD != 0 {
                let cs = self.vertex_corners(v);
                let n = fans(cs, |c| (self.corner_edge[self.prev_corner(c)], self.corner_edge[c]));
                return Err(MeshError::NonManifoldVertex { vertex: v as u32, fans: n });
            }
        }
        Ok(())
    }

    /// The first face that uses a vertex twice, and the vertex whose second
    /// use comes first in it. Linear: a mark per vertex (the last face that
    /// used it), only where some vertex is tagged repeated.
    fn first_repeated_vertex(&self) -> Result<Option<(usize, u32)>> {
        if self.vertex_tags.iter().all(|t| t & vertex_tag::REPEATED == 0) {
            return Ok(None);
        }
        let mut mark = try_zeroed_vec::<u32>(self.num_vertices(), "a mark per vertex")?;
        for f in 0..self.num_faces() {
            let stamp = f as u32 + 1;
            for &v in self.face(f) {
                if mark[v as usize] == stamp {
                    return Ok(Some((f, v)));
                }
                mark[v as usize] = stamp;
            }
        }
        Ok(None)
    }

    /// Number of vertices (including isolated ones).
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.num_vertices as usize
    }
    /// Number of faces.
    #[inline]
    pub fn num_faces(&self) -> usize {
        self.face_ptr.len() - 1
    }
    /// Number of corners (nonzeros of the mesh matrix).
    #[inline]
    pub fn num_corners(&self) -> usize {
        self.face_verts.len()
    }
    /// Number of edges (more than the number of vertex pairs joined where
    /// a pair has several edges, see the [module docs](self)).
    #[inline]
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }
    /// The face pointer array (column pointer of `M`).
    #[inline]
    pub fn face_ptr(&self) -> &[u32] {
        &self.face_ptr
    }
    /// All corners' vertices, face after face in traversal order.
    #[inline]
    pub fn face_verts(&self) -> &[u32] {
        &self.face_verts
    }
    /// Vertices of face `f` in traversal order.
    #[inline]
    pub fn face(&self, f: usize) -> &[u32] {
        &self.face_verts[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }
    /// Number of vertices of face `f`.
    #[inline]
    pub fn face_order(&self, f: usize) -> usize {
        (self.face_ptr[f + 1] - self.face_ptr[f]) as usize
    }
    /// True if every face is a quad (the specialised kernels of §4.4 apply).
    pub fn is_quad_only(&self) -> bool {
        self.face_ptr.windows(2).all(|w| w[1] - w[0] == 4)
    }
    /// True if every face is a triangle.
    pub fn is_triangle_only(&self) -> bool {
        self.num_corners() == 3 * self.num_faces()
    }
    /// Face of each corner (the COO hybrid of §4.2).
    #[inline]
    pub fn corner_faces(&self) -> &[u32] {
        &self.corner_face
    }
    /// Outgoing edge of each corner (corner → next corner of its face).
    #[inline]
    pub fn corner_edges(&self) -> &[u32] {
        &self.corner_edge
    }
    /// The next corner of the same face.
    #[inline]
    pub fn next_corner(&self, c: usize) -> usize {
        match self.uniform {
            4 => return (c & !3) | ((c + 1) & 3),
            3 => return if c % 3 == 2 { c - 2 } else { c + 1 },
            _ => {}
        }
        let f = self.corner_face[c] as usize;
        if c + 1 == self.face_ptr[f + 1] as usize { self.face_ptr[f] as usize } else { c + 1 }
    }
    /// The previous corner of the same face.
    #[inline]
    pub fn prev_corner(&self, c: usize) -> usize {
        match self.uniform {
            4 => return (c & !3) | (c.wrapping_sub(1) & 3),
            3 => return if c % 3 == 0 { c + 2 } else { c - 1 },
            _ => {}
        }
        let f = self.corner_face[c] as usize;
        if c == self.face_ptr[f] as usize { self.face_ptr[f + 1] as usize - 1 } else { c - 1 }
    }
    /// All edges as `[lo, hi]` with `lo <= hi`, in id order: by `(lo, hi)`
    /// from [`Topology::build`], in the caller's order from
    /// [`Topology::from_edges`].
    #[inline]
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }
    /// Endpoints of edge `e`.
    #[inline]
    pub fn edge(&self, e: usize) -> [u32; 2] {
        self.edges[e]
    }
    /// Corners whose outgoing edge is `e` (one per incident face use), in
    /// corner order.
    #[inline]
    pub fn edge_corners(&self, e: usize) -> &[u32] {
        &self.edge_corners[self.edge_corner_ptr[e] as usize..self.edge_corner_ptr[e + 1] as usize]
    }
    /// Pointer array of [`Topology::edge_corners`].
    #[inline]
    pub fn edge_corner_ptr(&self) -> &[u32] {
        &self.edge_corner_ptr
    }
    /// Tag bits of every edge ([`edge_tag`]).
    #[inline]
    pub fn edge_tags(&self) -> &[u8] {
        &self.edge_tags
    }
    /// True if edge `e` has exactly one face.
    #[inline]
    pub fn is_boundary_edge(&self, e: usize) -> bool {
        self.edge_tags[e] & edge_tag::BOUNDARY != 0
    }
    /// Id of the edge between `a` and `b` (either order; `a == b` for a
    /// degenerate edge), if there is one: the lowest-numbered one where the
    /// pair has several (for [`Topology::build`], the pair's first edge, as
    /// OpenSubdiv's `findEdge`). Scans the incident edges of the endpoint
    /// with fewer of them.
    pub fn find_edge(&self, a: u32, b: u32) -> Option<u32> {
        let key = [a.min(b), a.max(b)];
        if key[1] >= self.num_vertices {
            return None;
        }
        let (ea, eb) = (self.vertex_edges(key[0] as usize), self.vertex_edges(key[1] as usize));
        let list = if eb.len() < ea.len() { eb } else { ea };
        list.iter().copied().find(|&e| self.edges[e as usize] == key)
    }
    /// [`Topology::find_edge`] for a topology from [`Topology::build`],
    /// whose edges are sorted by `(lo, hi)`: a binary search, O(log |e|)
    /// whatever the valences (a scan of incident edges is not, where many
    /// edges join two vertices).
    pub(crate) fn find_built_edge(&self, a: u32, b: u32) -> Option<u32> {
        let key = [a.min(b), a.max(b)];
        let e = self.edges.partition_point(|x| *x < key);
        (self.edges.get(e) == Some(&key)).then_some(e as u32)
    }
    /// Corners of vertex `v` (row `v` of `M`), in corner order.
    #[inline]
    pub fn vertex_corners(&self, v: usize) -> &[u32] {
        &self.vertex_corners[self.vertex_corner_ptr[v] as usize..self.vertex_corner_ptr[v + 1] as usize]
    }
    /// Edges incident to vertex `v`, in id order (a degenerate edge once).
    #[inline]
    pub fn vertex_edges(&self, v: usize) -> &[u32] {
        &self.vertex_edges[self.vertex_edge_ptr[v] as usize..self.vertex_edge_ptr[v + 1] as usize]
    }
    /// Pointer array of [`Topology::vertex_corners`].
    #[inline]
    pub fn vertex_corner_ptr(&self) -> &[u32] {
        &self.vertex_corner_ptr
    }
    /// Pointer array of [`Topology::vertex_edges`].
    #[inline]
    pub fn vertex_edge_ptr(&self) -> &[u32] {
        &self.vertex_edge_ptr
    }
    /// The 1-ring: the other endpoint of each incident edge, in edge order
    /// (a neighbour joined by several edges appears once per edge; `v`
    /// itself for a degenerate edge).
    #[inline]
    pub fn vertex_neighbors(&self, v: usize) -> impl Iterator<Item = u32> + '_ {
        self.vertex_edges(v).iter().map(move |&e| {
            let [a, b] = self.edges[e as usize];
            if a as usize == v { b } else { a }
        })
    }
    /// Number of edges at vertex `v`.
    #[inline]
    pub fn valence(&self, v: usize) -> usize {
        (self.vertex_edge_ptr[v + 1] - self.vertex_edge_ptr[v]) as usize
    }
    /// Number of face corners at vertex `v` (the row count of `M`, Eq. 10).
    #[inline]
    pub fn face_count(&self, v: usize) -> usize {
        (self.vertex_corner_ptr[v + 1] - self.vertex_corner_ptr[v]) as usize
    }
    /// Tag bits of every vertex ([`vertex_tag`]).
    #[inline]
    pub fn vertex_tags(&self) -> &[u8] {
        &self.vertex_tags
    }
    /// True if vertex `v` lies on a boundary edge.
    #[inline]
    pub fn is_boundary_vertex(&self, v: usize) -> bool {
        self.vertex_tags[v] & vertex_tag::BOUNDARY != 0
    }
    /// True if no edge or vertex is non-manifold.
    pub fn is_manifold(&self) -> bool {
        self.edge_tags.iter().all(|t| t & edge_tag::NON_MANIFOLD == 0)
            && self.vertex_tags.iter().all(|t| t & vertex_tag::NON_MANIFOLD == 0)
    }
    /// True if there is no boundary edge.
    pub fn is_closed(&self) -> bool {
        self.edge_tags.iter().all(|t| t & edge_tag::BOUNDARY == 0)
    }

    /// The mesh matrix `M` in the algebra crate's form: `|v| × |f|` CSC with
    /// sorted rows and each entry's value its 1-based position in the face
    /// (Mlakar et al. 2020, §3.1).
    ///
    /// # Errors
    /// [`MeshError::RepeatedVertex`] if a face uses a vertex twice (the
    /// matrix would need two entries at one position);
    /// [`MeshError::Algebra`] (out of memory).
    pub fn mesh_matrix(&self) -> Result<CscMat<u32>> {
        let mut idx = try_vec_with_capacity(self.num_corners(), "the indices of the mesh matrix")?;
        let mut vals = try_vec_with_capacity(self.num_corners(), "the values of the mesh matrix")?;
        let mut col: Vec<(u32, u32)> = Vec::new();
        for f in 0..self.num_faces() {
            col.clear();
            col.extend(self.face(f).iter().enumerate().map(|(k, &v)| (v, k as u32 + 1)));
            col.sort_unstable();
            if let Some(w) = col.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(MeshError::RepeatedVertex { at: Location::none(), face: f, vertex: w[0].0 });
            }
            for &(v, k) in &col {
                idx.push(v);
                vals.push(k);
            }
        }
        Ok(CscMat::try_new(self.num_vertices(), self.num_faces(), self.face_ptr.clone(), idx, vals)?)
    }

    /// The CSR pattern of `M`: row `v` lists the faces of `v` (sorted, once
    /// each).
    pub fn vertex_face_pattern(&self) -> CsrPattern {
        let faces: Vec<u32> = self.vertex_corners.iter().map(|&c| self.corner_face[c as usize]).collect();
        let mut idx = Vec::with_capacity(faces.len());
        let mut ptr = Vec::with_capacity(self.num_vertices() + 1);
        ptr.push(0u32);
        for v in 0..self.num_vertices() {
            let mut fs: Vec<u32> =
                faces[self.vertex_corner_ptr[v] as usize..self.vertex_corner_ptr[v + 1] as usize].to_vec();
            fs.dedup();
            idx.extend_from_slice(&fs);
            ptr.push(idx.len() as u32);
        }
        match CsrPattern::try_new(self.num_vertices(), self.num_faces(), ptr, idx) {
            Ok(p) => p,
            Err(e) => unreachable!("vertex-face pattern is valid by construction: {e}"),
        }
    }
}

/// What [`Topology::from_edges_with`] may take on trust.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Refined {
    /// Nothing: every check of [`Topology::from_edges`].
    Checked,
    /// Each corner's edge joins its corner's vertex and the next one's.
    Corners,
    /// That, and no two edges join the same two vertices.
    DistinctPairs,
}

/// The tag bits an edge gets for sharing its vertex pair with other
/// edges, for those edges only (by edge id): [`edge_tag::NON_MANIFOLD`], and
/// [`edge_tag::DUPLICATE`] on all but the lowest-numbered edge of the pair.
/// Each edge is looked at once, at its low vertex, whose edges (in id
/// order) are sorted by their high end: O(d log d) per vertex.
fn shared_pairs(
    nv: usize,
    edges: &[[u32; 2]],
    vertex_edges: &[u32],
    vertex_edge_ptr: &[u32],
    parallel: bool,
) -> Vec<(u32, u8)> {
    // Appends the tagged edges of low vertex `v` to `out`.
    let at_vertex = |v: usize, out: &mut Vec<(u32, u8)>| {
        let list = &vertex_edges[vertex_edge_ptr[v] as usize..vertex_edge_ptr[v + 1] as usize];
        // (high end, id) of the edges whose low end is `v`.
        let mut scratch: Vec<(u32, u32)> = Vec::new();
        let mut small = [(0u32, 0u32); 16];
        let mut n = 0;
        for &e in list {
            let [lo, hi] = edges[e as usize];
            if lo as usize != v {
                continue;
            }
            if n < small.len() {
                small[n] = (hi, e);
            } else {
                if n == small.len() {
                    scratch.extend_from_slice(&small);
                }
                scratch.push((hi, e));
            }
            n += 1;
        }
        let pairs: &mut [(u32, u32)] = if n <= small.len() { &mut small[..n] } else { &mut scratch };
        // Almost always no two edges share their ends: a few comparisons
        // tell, before any sort.
        if pairs.len() <= 16 && !(1..pairs.len()).any(|k| pairs[..k].iter().any(|x| x.0 == pairs[k].0)) {
            return;
        }
        if pairs.len() <= 16 {
            crate::split::sort_small(pairs);
        } else {
            pairs.sort_unstable();
        }
        for (k, w) in pairs.iter().enumerate() {
            let same_before = k > 0 && pairs[k - 1].0 == w.0;
            let same_after = pairs.get(k + 1).is_some_and(|x| x.0 == w.0);
            if same_before {
                out.push((w.1, edge_tag::NON_MANIFOLD | edge_tag::DUPLICATE));
            } else if same_after {
                out.push((w.1, edge_tag::NON_MANIFOLD));
            }
        }
    };
    let mut out: Vec<(u32, u8)> = if parallel {
        (0..nv)
            .into_par_iter()
            .with_min_len(1 << 12)
            .flat_map_iter(|v| {
                let mut o = Vec::new();
                at_vertex(v, &mut o);
                o
            })
            .collect()
    } else {
        let mut o = Vec::new();
        for v in 0..nv {
            at_vertex(v, &mut o);
        }
        o
    };
    out.sort_unstable_by_key(|x| x.0);
    out
}

/// Number of fans formed by the corners `cs` of one vertex, where
/// `edges(c) = (incoming edge, outgoing edge)` of corner `c`: corners sharing
/// an edge belong to the same fan.
fn fans(cs: &[u32], edges: impl Fn(usize) -> (u32, u32)) -> usize {
    // Without allocating for the usual few corners.
    const SMALL: usize = 16;
    let n = cs.len();
    if n <= SMALL {
        let mut parent = [0u32; SMALL];
        let mut by_edge = [(0u32, 0u32); 2 * SMALL];
        fans_in(cs, edges, &mut parent[..n], &mut by_edge[..2 * n])
    } else {
        fans_in(cs, edges, &mut vec![0; n], &mut vec![(0, 0); 2 * n])
    }
}

/// Whether the corners `cs` of one vertex form a single fan (`edges` as
/// for [`fans`]), for a vertex whose edges are manifold and consistently
/// oriented: there an edge is the outgoing edge of at most one of the
/// corners and the incoming edge of at most one other, so the corners
/// chain into paths or cycles, and one walk each way along the chain
/// through the first corner finds whether it holds them all.
fn one_fan(cs: &[u32], edges: impl Fn(usize) -> (u32, u32)) -> bool {
    const SMALL: usize = 16;
    let n = cs.len();
    if n > SMALL {
        return fans(cs, edges) == 1;
    }
    let mut io = [(0u32, 0u32); SMALL];
    for (slot, &c) in io.iter_mut().zip(cs) {
        *slot = edges(c as usize);
    }
    let io = &io[..n];
    let mut seen = 1;
    let mut k = 0;
    // Forwards: the corner whose incoming edge is this one's outgoing edge.
    while seen <= n {
        match io.iter().position(|x| x.0 == io[k].1) {
            Some(0) => return seen == n,
            Some(j) => {
                k = j;
                seen += 1;
            }
            None => break,
        }
    }
    // An open chain: backwards from the first corner.
    k = 0;
    while seen <= n {
        match io.iter().position(|x| x.1 == io[k].0) {
            Some(j) if j != 0 => {
                k = j;
                seen += 1;
            }
            _ => break,
        }
    }
    seen == n
}

/// [`fans`] with scratch space for `cs.len()` parents and twice as many
/// (edge, corner) pairs.
fn fans_in(cs: &[u32], edges: impl Fn(usize) -> (u32, u32), parent: &mut [u32], by_edge: &mut [(u32, u32)]) -> usize {
    fn root(p: &mut [u32], mut i: u32) -> u32 {
        while p[i as usize] != i {
            p[i as usize] = p[p[i as usize] as usize];
            i = p[i as usize];
        }
        i
    }
    // (edge, corner) pairs sorted by edge: corners listed next to each other
    // under the same edge share it.
    for (k, &c) in cs.iter().enumerate() {
        let (i, o) = edges(c as usize);
        parent[k] = k as u32;
        by_edge[2 * k] = (i, k as u32);
        by_edge[2 * k + 1] = (o, k as u32);
    }
    by_edge.sort_unstable();
    let mut comps = cs.len();
    for w in by_edge.windows(2) {
        if w[0].0 == w[1].0 {
            let (ra, rb) = (root(parent, w[0].1), root(parent, w[1].1));
            if ra != rb {
                parent[ra as usize] = rb;
                comps -= 1;
            }
        }
    }
    comps
}

/// The faces and edges around a manifold vertex in turning order: corner
/// `i` (at the vertex, in face `i`) leaves along `edges[i]` and arrives
/// along `edges[i + 1]`, which face `i + 1` leaves along. A boundary vertex
/// starts at the face that leaves along a boundary edge and has one edge
/// more than faces; an interior vertex has as many (`edges[n]` would be
/// `edges[0]`). The turning is counter-clockwise seen from the side the
/// faces face (their corners counter-clockwise).
///
/// ```
/// use subla_mesh::shapes;
/// use subla_mesh::topology::VertexRing;
/// let d = shapes::quad_disk(5, 1)?; // centre 0, spokes 1..=5
/// let t = d.mesh.topology();
/// let ring = VertexRing::of(t, 0).expect("a manifold vertex");
/// assert_eq!((ring.len(), ring.boundary), (5, false));
/// assert_eq!(ring.neighbours(t, 0), [1, 2, 3, 4, 5]);
/// // A boundary vertex: its first and last edges are boundary edges.
/// let edge = VertexRing::of(t, 1).expect("manifold");
/// assert!(edge.boundary && edge.edges.len() == edge.len() + 1);
/// # Ok::<(), subla_mesh::MeshError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VertexRing {
    /// One corner per face, at the vertex.
    pub corners: Vec<u32>,
    /// The edges, as above.
    pub edges: Vec<u32>,
    /// The vertex is on the boundary.
    pub boundary: bool,
}

impl VertexRing {
    /// The ring of vertex `v`, or `None` where its faces do not form one
    /// fan (non-manifold, repeated in a face, or isolated).
    pub fn of(t: &Topology, v: usize) -> Option<VertexRing> {
        let tags = t.vertex_tags()[v];
        if tags & (vertex_tag::NON_MANIFOLD | vertex_tag::ISOLATED | vertex_tag::REPEATED) != 0 {
            return None;
        }
        let vc = t.vertex_corners(v);
        let ce = t.corner_edges();
        let boundary = tags & vertex_tag::BOUNDARY != 0;
        let start = if boundary {
            *vc.iter().find(|&&c| t.edge_corners(ce[c as usize] as usize).len() == 1)?
        } else {
            *vc.first()?
        };
        let mut ring =
            VertexRing { corners: Vec::with_capacity(vc.len()), edges: Vec::with_capacity(vc.len() + 1), boundary };
        let mut c = start;
        loop {
            ring.corners.push(c);
            ring.edges.push(ce[c as usize]);
            let p = t.prev_corner(c as usize) as u32;
            let e = ce[p as usize];
            let uses = t.edge_corners(e as usize);
            if uses.len() == 1 {
                if !boundary {
                    return None;
                }
                ring.edges.push(e);
                break;
            }
            if uses.len() != 2 {
                return None;
            }
            let next = if uses[0] == p { uses[1] } else { uses[0] };
            if next == start {
                break;
            }
            if ring.corners.len() >= vc.len() {
                return None;
            }
            c = next;
        }
        (ring.corners.len() == vc.len()).then_some(ring)
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.corners.len()
    }

    /// No faces.
    pub fn is_empty(&self) -> bool {
        self.corners.is_empty()
    }

    /// The faces in turning order.
    pub fn faces<'a>(&'a self, t: &'a Topology) -> impl Iterator<Item = u32> + 'a {
        self.corners.iter().map(|&c| t.corner_faces()[c as usize])
    }

    /// The neighbours in turning order: the far ends of
    /// [`VertexRing::edges`] (one more than faces on the boundary, the first
    /// and last there being the boundary neighbours).
    pub fn neighbours(&self, t: &Topology, v: usize) -> Vec<u32> {
        self.edges
            .iter()
            .map(|&e| {
                let [a, b] = t.edge(e as usize);
                if a as usize == v { b } else { a }
            })
            .collect()
    }
}
