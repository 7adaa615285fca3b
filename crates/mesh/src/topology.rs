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
//! # Derived data
//! * `corner_face` — the face of each corner (the COO hybrid of §4.2);
//! * edges — unique undirected edges `(lo, hi)`, `lo <= hi`, numbered in
//!   increasing `(lo, hi)` order: the numbering of the nonzeros of the
//!   triangle of `E` (§4.1), column by column. Deterministic;
//! * `corner_edge` — the edge from each corner to the next corner of its
//!   face (the "outgoing" edge of Alg. 3);
//! * per edge, the corners whose outgoing edge it is (its faces), and a tag:
//!   boundary (one face), non-manifold (more than two faces, two faces in the
//!   same direction, or a degenerate edge from a vertex to itself);
//! * per vertex, its corners (the row of `M`, in corner order) and its
//!   incident edges (in edge order); valence = number of incident edges;
//!   tags: boundary, non-manifold (on a non-manifold edge, or faces forming
//!   more than one fan), isolated (in no face).
//!
//! # Invariants
//! Every face has at least 3 corners and every corner refers to a vertex
//! `< num_vertices`; all counts fit in `u32`.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use subla_algebra::par::{Par, balanced_ranges, split_by_ptr};
use subla_algebra::{CscMat, CsrPattern};

use crate::error::{Location, MeshError, Result, to_u32};

/// Edge tag bits.
pub mod edge_tag {
    /// Used by exactly one face.
    pub const BOUNDARY: u8 = 1;
    /// Used by more than two faces, by two faces in the same direction, or
    /// from a vertex to itself.
    pub const NON_MANIFOLD: u8 = 2;
    /// From a vertex to itself (also [`NON_MANIFOLD`]).
    pub const DEGENERATE: u8 = 4;
    /// Used by two faces in the same direction (also [`NON_MANIFOLD`]).
    pub const INCONSISTENT: u8 = 8;
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
}

/// Counting sort of `keys` into buckets `0..nbuckets`: returns the bucket
/// pointer array and, bucket by bucket, the positions `i` of `keys`, sorted
/// inside each bucket by `order(i)` (so the result never depends on thread
/// timing).
fn bucket<K: Ord + Copy + Send>(
    nbuckets: usize,
    len: usize,
    key: impl Fn(usize) -> u32 + Sync,
    order: impl Fn(u32) -> K + Sync,
    par: Par,
) -> (Vec<u32>, Vec<u32>) {
    let counts: Vec<AtomicU32> = (0..nbuckets).map(|_| AtomicU32::new(0)).collect();
    let count = |i: usize| {
        counts[key(i) as usize].fetch_add(1, Ordering::Relaxed);
    };
    match par {
        Par::Seq => (0..len).for_each(count),
        Par::Rayon => (0..len).into_par_iter().with_min_len(1 << 14).for_each(count),
    }
    let mut ptr = Vec::with_capacity(nbuckets + 1);
    let mut acc = 0u32;
    ptr.push(0);
    for c in &counts {
        acc += c.load(Ordering::Relaxed);
        ptr.push(acc);
    }
    let cursor: Vec<AtomicU32> = ptr[..nbuckets].iter().map(|&p| AtomicU32::new(p)).collect();
    let items: Vec<AtomicU32> = (0..len).map(|_| AtomicU32::new(0)).collect();
    let fill = |i: usize| {
        let at = cursor[key(i) as usize].fetch_add(1, Ordering::Relaxed);
        items[at as usize].store(i as u32, Ordering::Relaxed);
    };
    match par {
        Par::Seq => (0..len).for_each(fill),
        Par::Rayon => (0..len).into_par_iter().with_min_len(1 << 14).for_each(fill),
    }
    let mut items: Vec<u32> = items.into_iter().map(AtomicU32::into_inner).collect();
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
    (ptr, items)
}

impl Topology {
    /// Builds the connectivity of faces given as `face_ptr` / `face_verts`
    /// (the mesh matrix in traversal order, see the [module docs](self)).
    ///
    /// Non-manifold configurations and faces that repeat a vertex are
    /// accepted and tagged (as OpenSubdiv does); use
    /// [`Topology::check_manifold`] to reject them.
    ///
    /// # Errors
    /// [`MeshError::FaceTooSmall`], [`MeshError::IndexOutOfRange`],
    /// [`MeshError::TooLarge`], and [`MeshError::MalformedStatement`] for a
    /// malformed `face_ptr`.
    pub fn build(num_vertices: usize, face_ptr: Vec<u32>, face_verts: Vec<u32>, par: Par) -> Result<Self> {
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
        Ok(Self::build_valid(nv, face_ptr, face_verts, par))
    }

    fn build_valid(nv: u32, face_ptr: Vec<u32>, face_verts: Vec<u32>, par: Par) -> Self {
        let nf = face_ptr.len() - 1;
        let nc = face_verts.len();
        let parallel = par == Par::Rayon && nc >= 1 << 15;
        // corner -> face
        let mut corner_face = vec![0u32; nc];
        {
            let ranges = balanced_ranges(&face_ptr, par.blocks(nc + nf, 1 << 14));
            let pieces = split_by_ptr(&mut corner_face, &face_ptr, &ranges);
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
        }
        let next = |c: usize| -> usize {
            let f = corner_face[c] as usize;
            if c + 1 == face_ptr[f + 1] as usize { face_ptr[f] as usize } else { c + 1 }
        };
        let ends = |c: usize| -> (u32, u32) {
            let a = face_verts[c];
            let b = face_verts[next(c)];
            (a.min(b), a.max(b))
        };
        // Half-edges bucketed by their low vertex, ordered by (high, corner).
        let (lo_ptr, half) = bucket(nv as usize, nc, |c| ends(c).0, |c| (ends(c as usize).1, c), par);
        // Unique edges per low vertex, then their ids by a scan.
        let mut unique = vec![0u32; nv as usize];
        let count_unique = |(v, u): (usize, &mut u32)| {
            let s = &half[lo_ptr[v] as usize..lo_ptr[v + 1] as usize];
            let mut n = 0;
            let mut last = u32::MAX;
            for &c in s {
                let hi = ends(c as usize).1;
                if hi != last {
                    n += 1;
                    last = hi;
                }
            }
            *u = n;
        };
        if parallel {
            unique.par_iter_mut().enumerate().with_min_len(1 << 12).for_each(count_unique);
        } else {
            unique.iter_mut().enumerate().for_each(count_unique);
        }
        let mut edge_base = Vec::with_capacity(nv as usize + 1);
        let mut acc = 0u32;
        edge_base.push(0);
        for &u in &unique {
            acc += u;
            edge_base.push(acc);
        }
        let ne = acc as usize;
        let mut edges = vec![[0u32; 2]; ne];
        let mut edge_corner_ptr = vec![0u32; ne + 1];
        let mut corner_edge_at = vec![0u32; nc]; // edge id per position of `half`
        {
            let ranges = balanced_ranges(&lo_ptr, par.blocks(nc + nv as usize, 1 << 14));
            let edge_ranges: Vec<Range<usize>> = ranges.clone();
            let e_pieces = split_by_ptr(&mut edges, &edge_base, &edge_ranges);
            let p_pieces = split_by_ptr(&mut edge_corner_ptr[1..], &edge_base, &edge_ranges);
            let c_pieces = split_by_ptr(&mut corner_edge_at, &lo_ptr, &ranges);
            type Piece<'a> = (((Range<usize>, &'a mut [[u32; 2]]), &'a mut [u32]), &'a mut [u32]);
            let work = |(((r, e_out), p_out), c_out): Piece<'_>| {
                let ebase = edge_base[r.start] as usize;
                let cbase = lo_ptr[r.start] as usize;
                for v in r {
                    let mut id = edge_base[v] as usize;
                    let mut last = u32::MAX;
                    let (s, e) = (lo_ptr[v] as usize, lo_ptr[v + 1] as usize);
                    for (pos, &c) in half[s..e].iter().enumerate() {
                        let hi = ends(c as usize).1;
                        if hi != last {
                            if last != u32::MAX {
                                id += 1;
                            }
                            e_out[id - ebase] = [v as u32, hi];
                            last = hi;
                        }
                        c_out[s + pos - cbase] = id as u32;
                        // End position (in `half`) of this edge's group.
                        p_out[id - ebase] = (s + pos + 1) as u32;
                    }
                }
            };
            if parallel {
                ranges.into_par_iter().zip(e_pieces).zip(p_pieces).zip(c_pieces).for_each(work);
            } else {
                ranges.into_iter().zip(e_pieces).zip(p_pieces).zip(c_pieces).for_each(work);
            }
        }
        // `half` lists each edge's corners contiguously in corner order.
        let edge_corners = half;
        let mut corner_edge = vec![0u32; nc];
        for (pos, &c) in edge_corners.iter().enumerate() {
            corner_edge[c as usize] = corner_edge_at[pos];
        }
        drop(corner_edge_at);
        // Edge tags.
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
            t
        };
        let edge_tags: Vec<u8> = if parallel {
            (0..ne).into_par_iter().with_min_len(1 << 12).map(tag_edge).collect()
        } else {
            (0..ne).map(tag_edge).collect()
        };
        // Vertex -> corners (rows of M) and vertex -> edges.
        let (vertex_corner_ptr, vertex_corners) = bucket(nv as usize, nc, |c| face_verts[c], |c| c, par);
        let ends_of = |i: usize| -> u32 {
            // Incidences 2e (lo) and 2e+1 (hi); a degenerate edge counts once.
            let [lo, hi] = edges[i / 2];
            if i % 2 == 0 { lo } else { hi }
        };
        let incid: Vec<u32> =
            (0..2 * ne).filter(|&i| i % 2 == 0 || edges[i / 2][0] != edges[i / 2][1]).map(|i| i as u32).collect();
        let (vertex_edge_ptr, vpos) =
            bucket(nv as usize, incid.len(), |k| ends_of(incid[k] as usize), |k| incid[k as usize], par);
        let vertex_edges: Vec<u32> = vpos.iter().map(|&k| incid[k as usize] / 2).collect();
        // Vertex tags: boundary, non-manifold (edge or fans), isolated, repeated.
        let tag_vertex = |v: usize| -> u8 {
            let cs = &vertex_corners[vertex_corner_ptr[v] as usize..vertex_corner_ptr[v + 1] as usize];
            let es = &vertex_edges[vertex_edge_ptr[v] as usize..vertex_edge_ptr[v + 1] as usize];
            let mut t = 0;
            if cs.is_empty() {
                return vertex_tag::ISOLATED;
            }
            for &e in es {
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
                && fans(cs, |c| {
                    let f = corner_face[c] as usize;
                    let prev = if c == face_ptr[f] as usize { face_ptr[f + 1] as usize - 1 } else { c - 1 };
                    (corner_edge[prev], corner_edge[c])
                }) > 1
            {
                t |= vertex_tag::NON_MANIFOLD;
            }
            t
        };
        let vertex_tags: Vec<u8> = if parallel {
            (0..nv as usize).into_par_iter().with_min_len(1 << 12).map(tag_vertex).collect()
        } else {
            (0..nv as usize).map(tag_vertex).collect()
        };
        Topology {
            num_vertices: nv,
            face_ptr,
            face_verts,
            corner_face,
            corner_edge,
            edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags,
        }
    }

    /// Rejects what [`Topology::build`] accepted but a manifold-only consumer
    /// cannot use, naming the first offending element: repeated vertices in
    /// a face, non-manifold edges, inconsistent orientation, bow-tie
    /// vertices.
    ///
    /// # Errors
    /// [`MeshError::RepeatedVertex`], [`MeshError::NonManifoldEdge`],
    /// [`MeshError::InconsistentOrientation`],
    /// [`MeshError::NonManifoldVertex`].
    pub fn check_manifold(&self) -> Result<()> {
        for f in 0..self.num_faces() {
            let vs = self.face(f);
            for (i, &v) in vs.iter().enumerate() {
                if vs[..i].contains(&v) {
                    return Err(MeshError::RepeatedVertex { at: Location::none(), face: f, vertex: v });
                }
            }
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
    /// Number of unique edges.
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
        let f = self.corner_face[c] as usize;
        if c + 1 == self.face_ptr[f + 1] as usize { self.face_ptr[f] as usize } else { c + 1 }
    }
    /// The previous corner of the same face.
    #[inline]
    pub fn prev_corner(&self, c: usize) -> usize {
        let f = self.corner_face[c] as usize;
        if c == self.face_ptr[f] as usize { self.face_ptr[f + 1] as usize - 1 } else { c - 1 }
    }
    /// All edges as `[lo, hi]` with `lo <= hi`, in id order.
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
    /// Id of the edge between `a` and `b`, if there is one.
    pub fn find_edge(&self, a: u32, b: u32) -> Option<u32> {
        let key = [a.min(b), a.max(b)];
        if key[1] >= self.num_vertices {
            return None;
        }
        self.edges.binary_search(&key).ok().map(|e| e as u32)
    }
    /// Corners of vertex `v` (row `v` of `M`), in corner order.
    #[inline]
    pub fn vertex_corners(&self, v: usize) -> &[u32] {
        &self.vertex_corners[self.vertex_corner_ptr[v] as usize..self.vertex_corner_ptr[v + 1] as usize]
    }
    /// Edges incident to vertex `v`, in id order.
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
    /// The 1-ring: the other endpoint of each incident edge, in edge order.
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
    /// matrix would need two entries at one position).
    pub fn mesh_matrix(&self) -> Result<CscMat<u32>> {
        let mut idx = Vec::with_capacity(self.num_corners());
        let mut vals = Vec::with_capacity(self.num_corners());
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

/// Number of fans formed by the corners `cs` of one vertex, where
/// `edges(c) = (incoming edge, outgoing edge)` of corner `c`: corners sharing
/// an edge belong to the same fan.
fn fans(cs: &[u32], edges: impl Fn(usize) -> (u32, u32)) -> usize {
    let n = cs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    // (edge, corner) pairs sorted by edge: corners listed next to each other
    // under the same edge share it.
    let mut by_edge: Vec<(u32, usize)> = Vec::with_capacity(2 * n);
    for (k, &c) in cs.iter().enumerate() {
        let (i, o) = edges(c as usize);
        by_edge.push((i, k));
        by_edge.push((o, k));
    }
    by_edge.sort_unstable();
    let mut comps = n;
    for w in by_edge.windows(2) {
        if w[0].0 == w[1].0 {
            let (ra, rb) = (root(&mut parent, w[0].1), root(&mut parent, w[1].1));
            if ra != rb {
                parent[ra] = rb;
                comps -= 1;
            }
        }
    }
    comps
}
