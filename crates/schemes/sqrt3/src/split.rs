//! The √3 split of a triangle mesh (Kobbelt 2000; Mlakar et al. 2020,
//! Appendix A, Fig. 12): a new vertex in every face, every interior edge
//! flipped to join the new vertices of its two faces, boundary edges kept.
//! This is the topology of every √3 step that does not split boundary
//! edges in three (Kobbelt's odd steps, and every step of a closed mesh).
//!
//! # Vertex order of the child
//! `|v|` parent vertices (in parent order), then one face point per face
//! (in face order): the face point of `f` is child vertex `|v| + f`.
//!
//! # Face order of the child
//! One child triangle per parent corner, corner after corner: for corner
//! `c` of face `f`, at vertex `v`, with outgoing edge `(v, w)`, the child is
//! `(v, F_g, F_f)` if the edge is interior with `g` the other face, or
//! `(v, w, F_f)` if it is a boundary edge (`F_f` the face point of `f`).
//! Children keep the parent's orientation.
//!
//! # Edge order of the child
//! The order [`Topology::build`] gives the child faces, a sort by `(lo,
//! hi)`: for each parent vertex `v`, the kept boundary edges `(v, u)` with
//! `u > v` by `u`, then the edges `(v, F_f)` by face; then the flipped edges
//! `(F_f, F_g)`, `f < g`, by `(f, g)`.
//!
//! # Cost
//! For a manifold parent in which no two triangles share two edges every
//! child relation is written directly from the parent's (as
//! [`Topology::split_triangles`]), from the phases of
//! [`subla_mesh::split`]; any other parent goes through
//! [`Topology::build`].
//!
//! The split is [`Sqrt3Split`], implemented for [`Topology`]: a scheme's
//! topology, so it lives with the scheme, not in the mesh crate.

use rayon::prelude::*;
use subla_algebra::mem::try_zeroed_vec;
use subla_algebra::par::Par;
use subla_mesh::error::to_u32;
use subla_mesh::split::{
    RawTopology, check_triangle_child, child_vertex_tags, collect, corner_faces, face_ptr, fixed_slots, in_parallel,
    next3, offsets, prev3, ragged, relation_by_ptr, sort_small, splits_triangles_directly,
};
use subla_mesh::topology::edge_tag;
use subla_mesh::{Result, Topology};

/// No corner.
const NONE: u32 = u32::MAX;

/// The child of a √3 split known through its parent
/// ([`Sqrt3Split::sqrt3_child`]): the other use of each parent corner's
/// edge, from which the child relations that refinement rules read are
/// computed on the fly, with no child connectivity in memory (as
/// [`TriChild`](subla_mesh::TriChild) for the 1-to-4 split). Only for closed
/// parents: there every child face is `(v, F_g, F_f)`.
///
/// Every method takes the parent topology the child was made from (`t`);
/// given another topology, its results are meaningless (and it may panic
/// on an index out of range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sqrt3Child {
    /// Number of parent vertices.
    num_vertices: u32,
    /// The other use of the edge of each parent corner.
    twins: Vec<u32>,
}

impl Sqrt3Child {
    /// Number of child vertices (parent vertices, then face points).
    pub fn num_vertices(&self) -> usize {
        self.num_vertices as usize + self.twins.len() / 3
    }

    /// Number of child faces (one per parent corner).
    pub fn num_faces(&self) -> usize {
        self.twins.len()
    }

    /// The other use of the edge of each parent corner.
    pub fn twins(&self) -> &[u32] {
        &self.twins
    }

    /// The vertices of child face `c` (from parent corner `c`): the corner's
    /// vertex, the face point across its edge, its own face's point.
    #[inline]
    pub fn face(&self, t: &Topology, c: usize) -> [u32; 3] {
        let nv = self.num_vertices;
        [t.face_verts()[c], nv + self.twins[c] / 3, nv + (c / 3) as u32]
    }

    /// The neighbours of child vertex `v` (a parent vertex), in the order of
    /// the child's incident edges: the face points of `v`'s faces, in the
    /// order of its corners.
    #[inline]
    pub fn parent_vertex_neighbors<'a>(&self, t: &'a Topology, v: usize) -> impl Iterator<Item = u32> + 'a {
        let nv = self.num_vertices;
        t.vertex_corners(v).iter().map(move |&c| nv + c / 3)
    }

    /// The six neighbours of the face point of parent face `f` (child vertex
    /// `t.num_vertices() + f`), in the order of the child's incident edges
    /// (by edge id): the face's three vertices by id, then the points of
    /// the three faces across its edges by face.
    #[inline]
    pub fn face_point_neighbors(&self, t: &Topology, f: usize) -> [u32; 6] {
        let nv = self.num_vertices;
        let fv = t.face_verts();
        let mut v = [fv[3 * f], fv[3 * f + 1], fv[3 * f + 2]];
        let mut g = [self.twins[3 * f] / 3, self.twins[3 * f + 1] / 3, self.twins[3 * f + 2] / 3];
        sort3(&mut v);
        sort3(&mut g);
        [v[0], v[1], v[2], nv + g[0], nv + g[1], nv + g[2]]
    }

    /// The faces of the √3 split of the child, as
    /// [`Sqrt3Split::split_sqrt3_faces`] of the child's full topology gives
    /// them: three triangles (nine vertices) per parent corner.
    ///
    /// # Errors
    /// [`MeshError::Algebra`](subla_mesh::MeshError::Algebra) (out of
    /// memory) where the allocator cannot supply the list.
    pub fn split_faces(&self, t: &Topology, par: Par) -> Result<Vec<u32>> {
        let nv = self.num_vertices;
        let nv2 = self.num_vertices() as u32;
        let fv = t.face_verts();
        let twins = &self.twins;
        fixed_slots::<_, 9>(t.num_corners(), in_parallel(t, par), "the vertices of the refined faces", |c, q| {
            // Child face `c` is `(v, F_g, F_f)`; its corners' edges are used,
            // across, by the children of corners `next(twin(c))`, `twin(c)`
            // and `twin(prev(c))`.
            let o = twins[c] as usize;
            let here = nv2 + c as u32;
            q.copy_from_slice(&[
                fv[c],
                nv2 + next3(o) as u32,
                here,
                nv + (o / 3) as u32,
                nv2 + o as u32,
                here,
                nv + (c / 3) as u32,
                nv2 + twins[prev3(c)],
                here,
            ]);
        })
    }
}

/// Sorts three values.
#[inline]
fn sort3(x: &mut [u32; 3]) {
    if x[0] > x[1] {
        x.swap(0, 1);
    }
    if x[1] > x[2] {
        x.swap(1, 2);
    }
    if x[0] > x[1] {
        x.swap(0, 1);
    }
}

/// The √3 split of a triangle-only topology, numbered as the
/// [module docs](self) say.
pub trait Sqrt3Split {
    /// The √3 split of this triangle-only topology.
    ///
    /// # Errors
    /// [`MeshError::NotTriangle`](subla_mesh::MeshError::NotTriangle)
    /// naming the first face that is not a triangle;
    /// [`MeshError::TooLarge`](subla_mesh::MeshError::TooLarge) if a child
    /// count does not fit in `u32`; for a parent with non-manifold edges,
    /// the errors of [`Topology::build`] on the child faces;
    /// [`MeshError::Algebra`](subla_mesh::MeshError::Algebra) (out of
    /// memory) where the allocator cannot supply the child.
    fn split_sqrt3(&self, par: Par) -> Result<Topology>;

    /// The faces of [`Sqrt3Split::split_sqrt3`] alone, as a flat
    /// `3 × corners` vertex list (one triangle per parent corner): for a
    /// finest level that only needs its faces.
    ///
    /// # Errors
    /// As [`Sqrt3Split::split_sqrt3`].
    fn split_sqrt3_faces(&self, par: Par) -> Result<Vec<u32>>;

    /// The child of [`Sqrt3Split::split_sqrt3`] known through this topology
    /// ([`Sqrt3Child`]), for a closed parent whose every vertex and edge is
    /// untagged (manifold, no boundary, none isolated or repeated) and in
    /// which no two triangles share two edges; `None` for any other
    /// triangle-only parent.
    ///
    /// # Errors
    /// As [`Sqrt3Split::split_sqrt3`]; also
    /// [`MeshError::TooLarge`](subla_mesh::MeshError::TooLarge) if the
    /// split of the child does not fit in `u32`.
    fn sqrt3_child(&self, par: Par) -> Result<Option<Sqrt3Child>>;
}

impl Sqrt3Split for Topology {
    fn split_sqrt3(&self, par: Par) -> Result<Topology> {
        check_sqrt3_split(self)?;
        if splits_triangles_directly(self, par) {
            split_sqrt3_manifold(self, par)
        } else {
            split_sqrt3_general(self, par)
        }
    }

    fn split_sqrt3_faces(&self, par: Par) -> Result<Vec<u32>> {
        check_sqrt3_split(self)?;
        sqrt3_faces(self, in_parallel(self, par))
    }

    fn sqrt3_child(&self, par: Par) -> Result<Option<Sqrt3Child>> {
        check_sqrt3_split(self)?;
        let (nv, nf, nc) = (self.num_vertices(), self.num_faces(), self.num_corners());
        // The child has `nv + nf` vertices, `nc` faces and `nc + ne` edges
        // (closed); its split `nv + nf + nc` vertices and `3 nc` faces.
        to_u32(nv + nf + nc, "number of vertices of the child's split")?;
        to_u32(9 * nc, "number of corners of the child's split")?;
        let untagged = self.vertex_tags().iter().all(|&g| g == 0) && self.edge_tags().iter().all(|&g| g == 0);
        // Untagged: every edge has two uses, in two faces.
        if !untagged {
            return Ok(None);
        }
        let parallel = in_parallel(self, par);
        let twins = twins(self, parallel)?;
        // Two triangles share two edges where a face meets one neighbour
        // across two of its edges.
        let shares = |f: usize| {
            let [a, b, c] = [twins[3 * f] / 3, twins[3 * f + 1] / 3, twins[3 * f + 2] / 3];
            a == b || a == c || b == c
        };
        let shared =
            if parallel { (0..nf).into_par_iter().with_min_len(1 << 12).any(shares) } else { (0..nf).any(shares) };
        Ok((!shared).then_some(Sqrt3Child { num_vertices: nv as u32, twins }))
    }
}

/// `Ok` for a triangle-only topology whose √3 split fits in `u32`.
fn check_sqrt3_split(t: &Topology) -> Result<()> {
    let (nv, nf, nc, ne) = (t.num_vertices(), t.num_faces(), t.num_corners(), t.num_edges());
    check_triangle_child(t, [nv + nf, 3 * nc, nc + ne])
}

/// The child faces (triangle-only parent).
fn sqrt3_faces(t: &Topology, parallel: bool) -> Result<Vec<u32>> {
    let nv = t.num_vertices() as u32;
    let (fv, ce) = (t.face_verts(), t.corner_edges());
    fixed_slots::<_, 3>(t.num_corners(), parallel, "the vertices of the refined faces", |c, q| {
        let f = (c / 3) as u32;
        let uses = t.edge_corners(ce[c] as usize);
        match uses.iter().find(|&&u| u as usize != c) {
            Some(&o) if uses.len() == 2 => q.copy_from_slice(&[fv[c], nv + o / 3, nv + f]),
            _ => q.copy_from_slice(&[fv[c], fv[next3(c)], nv + f]),
        }
    })
}

/// The other use of the edge of each corner, where the edge has two uses;
/// `NONE` on any other edge.
fn twins(t: &Topology, parallel: bool) -> Result<Vec<u32>> {
    let ce = t.corner_edges();
    collect(t.num_corners(), parallel, "the other use of each corner's edge", |c| {
        match t.edge_corners(ce[c] as usize) {
            &[a, b] => {
                if a as usize == c {
                    b
                } else {
                    a
                }
            }
            _ => NONE,
        }
    })
}

/// The split of any triangle-only topology: the child faces, then
/// [`Topology::build`].
fn split_sqrt3_general(t: &Topology, par: Par) -> Result<Topology> {
    let parallel = in_parallel(t, par);
    let face_verts = sqrt3_faces(t, parallel)?;
    Topology::build(t.num_vertices() + t.num_faces(), face_ptr::<3>(t.num_corners(), parallel)?, face_verts, par)
}

/// The split of a manifold topology in which no two triangles share two
/// edges, every relation written directly.
fn split_sqrt3_manifold(t: &Topology, par: Par) -> Result<Topology> {
    let (nv, nf, nc) = (t.num_vertices(), t.num_faces(), t.num_corners());
    let parallel = in_parallel(t, par);
    let (fv, ce, edges) = (t.face_verts(), t.corner_edges(), t.edges());
    let uses = |e: usize| t.edge_corners(e);
    let boundary = |e: usize| t.edge_tags()[e] & edge_tag::BOUNDARY != 0;
    // The other use of the edge of each corner, or NONE on the boundary.
    let twins = twins(t, parallel)?;
    let twin = |c: usize| twins[c];
    let other_end = |e: usize, v: usize| -> usize {
        let [a, b] = edges[e];
        if a as usize == v { b as usize } else { a as usize }
    };
    // Kept boundary edges (v, u) with u > v, by u.
    let up_edges = |v: usize| -> ([u32; 2], usize) {
        let mut up = [0u32; 2];
        let mut n = 0;
        if t.is_boundary_vertex(v) {
            for &e in t.vertex_edges(v) {
                if boundary(e as usize) && other_end(e as usize, v) > v && n < 2 {
                    up[n] = e;
                    n += 1;
                }
            }
        }
        if n == 2 && other_end(up[0] as usize, v) > other_end(up[1] as usize, v) {
            up.swap(0, 1);
        }
        (up, n)
    };
    // Child edge ids: per parent vertex a block of kept boundary edges
    // and edges to face points, then per face its flipped edges to
    // greater faces.
    const BLOCKS: &str = "the first child edge of each parent vertex";
    let vbase = offsets(&collect(nv, parallel, BLOCKS, |v| (up_edges(v).1 + t.face_count(v)) as u32)?, BLOCKS)?;
    let a_base = collect(nv, parallel, BLOCKS, |v| vbase[v] + up_edges(v).1 as u32)?;
    let n_vblocks = vbase[nv];
    // Neighbour faces of `f` across interior edges, greater than `f`, by face.
    let greater = |f: usize| -> ([(u32, u32); 3], usize) {
        let mut out = [(0u32, 0u32); 3];
        let mut n = 0;
        for c in 3 * f..3 * f + 3 {
            let o = twin(c);
            if o != NONE && (o / 3) as usize > f {
                out[n] = (o / 3, c as u32);
                n += 1;
            }
        }
        sort_small(&mut out[..n]);
        (out, n)
    };
    const FLIPPED: &str = "the flipped edges of each parent face";
    let mut fbase = offsets(&collect(nf, parallel, FLIPPED, |f| greater(f).1 as u32)?, FLIPPED)?;
    fbase.iter_mut().for_each(|x| *x += n_vblocks);
    let ne_child = fbase[nf] as usize;
    // Id of the edge (fv[c], F_{c/3}) of each corner.
    let a_ids = collect(nc, parallel, "the child edge of each parent corner", |c| {
        let v = fv[c] as usize;
        let list = t.vertex_corners(v);
        a_base[v] + list.partition_point(|&x| (x as usize) < c) as u32
    })?;
    // Id of the kept boundary edge e.
    let c_id = |e: usize| -> u32 {
        let lo = edges[e][0] as usize;
        let (up, _) = up_edges(lo);
        vbase[lo] + u32::from(up[0] as usize != e)
    };
    // Id of the flipped edge of each interior corner (NONE on the
    // boundary).
    let b_ids = collect(nc, parallel, "the flipped edge of each parent corner", |c| {
        let o = twins[c];
        if o == NONE {
            return NONE;
        }
        let (f, g) = (c / 3, o as usize / 3);
        let (lo, hi) = (f.min(g), f.max(g));
        let (list, n) = greater(lo);
        fbase[lo] + list[..n].iter().filter(|&&(x, _)| (x as usize) < hi).count() as u32
    })?;

    let face_verts = sqrt3_faces(t, parallel)?;
    let corner_edge = fixed_slots::<_, 3>(nc, parallel, "the corner edges of the refined faces", |c, q| {
        let o = twin(c);
        if o != NONE {
            q.copy_from_slice(&[a_ids[next3(o as usize)], b_ids[c], a_ids[c]]);
        } else {
            q.copy_from_slice(&[c_id(ce[c] as usize), a_ids[next3(c)], a_ids[c]]);
        }
    })?;

    // Edges and their uses. An edge (v, F_f) of corner c is used by
    // child corner 3c + 2 and by 3·twin(prev c) (interior incoming edge)
    // or 3·prev(c) + 1 (boundary incoming edge); a flipped edge by
    // 3c + 1 and 3o + 1; a kept boundary edge by 3c.
    let a_uses = |c: usize| -> [u32; 2] {
        let p = prev3(c);
        let tw = twin(p);
        let x = if tw != NONE { 3 * tw } else { 3 * p as u32 + 1 };
        let y = 3 * c as u32 + 2;
        [x.min(y), x.max(y)]
    };
    let mut child_edges = try_zeroed_vec::<[u32; 2]>(ne_child, "the refined edges")?;
    let mut use_count = try_zeroed_vec::<u32>(ne_child, "the uses of the refined edges")?;
    {
        let (ea, eb) = child_edges.split_at_mut(n_vblocks as usize);
        ragged(
            ea,
            nv,
            |v| vbase[v] as usize,
            parallel,
            |v, slot| {
                let (up, n) = up_edges(v);
                for k in 0..n {
                    slot[k] = [v as u32, other_end(up[k] as usize, v) as u32];
                }
                for (out, &c) in slot[n..].iter_mut().zip(t.vertex_corners(v)) {
                    *out = [v as u32, (nv + c as usize / 3) as u32];
                }
            },
        );
        let fb = |f: usize| (fbase[f] - n_vblocks) as usize;
        ragged(eb, nf, fb, parallel, |f, slot| {
            let (list, n) = greater(f);
            for (out, &(g, _)) in slot.iter_mut().zip(&list[..n]) {
                *out = [(nv + f) as u32, nv as u32 + g];
            }
        });
        let (ca, _) = use_count.split_at_mut(n_vblocks as usize);
        ragged(
            ca,
            nv,
            |v| vbase[v] as usize,
            parallel,
            |v, slot| {
                let n = up_edges(v).1;
                slot[..n].fill(1);
                slot[n..].fill(2);
            },
        );
        use_count[n_vblocks as usize..].fill(2);
    }
    let edge_corner_ptr = offsets(&use_count, "the uses of the refined edges")?;
    drop(use_count);
    let mut edge_corners = try_zeroed_vec::<u32>(edge_corner_ptr[ne_child] as usize, "the uses of the refined edges")?;
    {
        let split = edge_corner_ptr[n_vblocks as usize] as usize;
        let (ua, ub) = edge_corners.split_at_mut(split);
        ragged(
            ua,
            nv,
            |v| edge_corner_ptr[vbase[v] as usize] as usize,
            parallel,
            |v, slot| {
                let (up, n) = up_edges(v);
                for k in 0..n {
                    slot[k] = 3 * uses(up[k] as usize)[0];
                }
                for (pair, &c) in slot[n..].chunks_exact_mut(2).zip(t.vertex_corners(v)) {
                    pair.copy_from_slice(&a_uses(c as usize));
                }
            },
        );
        let base = split;
        ragged(
            ub,
            nf,
            |f| edge_corner_ptr[fbase[f] as usize] as usize - base,
            parallel,
            |f, slot| {
                let (list, n) = greater(f);
                for (pair, &(_, c)) in slot.chunks_exact_mut(2).zip(&list[..n]) {
                    let o = twin(c as usize);
                    let (x, y) = (3 * c + 1, 3 * o + 1);
                    pair.copy_from_slice(&[x.min(y), x.max(y)]);
                }
            },
        );
    }

    // Corners of each child vertex: a parent vertex is corner 3c of the
    // child of each of its corners c, and corner 3·prev(c) + 1 when the
    // edge arriving at c is a boundary edge; a face point is corner
    // 3c + 2 of the children of its face's corners and 3·twin(c) + 1
    // across each interior edge.
    let nvc = nv + nf;
    let arriving_boundary = |c: usize| boundary(ce[prev3(c)] as usize);
    // A face point's corners and edges: one per corner of its face, one
    // more across each interior edge.
    let face_point_valence = |f: usize| 3 + (3 * f..3 * f + 3).filter(|&c| twin(c) != NONE).count() as u32;
    const CORNERS: &str = "the corners of each refined vertex";
    let vc_count = collect(nvc, parallel, CORNERS, |i| {
        if i < nv {
            let cs = t.vertex_corners(i);
            let extra =
                if t.is_boundary_vertex(i) { cs.iter().filter(|&&c| arriving_boundary(c as usize)).count() } else { 0 };
            (cs.len() + extra) as u32
        } else {
            face_point_valence(i - nv)
        }
    })?;
    let vertex_corner_ptr = offsets(&vc_count, CORNERS)?;
    drop(vc_count);
    let vertex_corners = relation_by_ptr(&vertex_corner_ptr, parallel, CORNERS, |i, slot| {
        let mut k = 0;
        if i < nv {
            for &c in t.vertex_corners(i) {
                slot[k] = 3 * c;
                k += 1;
                if t.is_boundary_vertex(i) && arriving_boundary(c as usize) {
                    slot[k] = 3 * prev3(c as usize) as u32 + 1;
                    k += 1;
                }
            }
        } else {
            let f = i - nv;
            for c in 3 * f..3 * f + 3 {
                slot[k] = 3 * c as u32 + 2;
                k += 1;
                let o = twin(c);
                if o != NONE {
                    slot[k] = 3 * o + 1;
                    k += 1;
                }
            }
        }
        sort_small(slot);
    })?;

    // Edges of each child vertex, by id: a parent vertex has its kept
    // boundary edges and its edges to face points; a face point its
    // three edges to the face's vertices and its flipped edges.
    const EDGES: &str = "the edges of each refined vertex";
    let ve_count = collect(nvc, parallel, EDGES, |i| {
        if i < nv {
            let nb = if t.is_boundary_vertex(i) {
                t.vertex_edges(i).iter().filter(|&&e| boundary(e as usize)).count()
            } else {
                0
            };
            (nb + t.face_count(i)) as u32
        } else {
            face_point_valence(i - nv)
        }
    })?;
    let vertex_edge_ptr = offsets(&ve_count, EDGES)?;
    drop(ve_count);
    let vertex_edges = relation_by_ptr(&vertex_edge_ptr, parallel, EDGES, |i, slot| {
        let mut k = 0;
        if i < nv {
            if t.is_boundary_vertex(i) {
                for &e in t.vertex_edges(i) {
                    if boundary(e as usize) {
                        slot[k] = c_id(e as usize);
                        k += 1;
                    }
                }
            }
            let n = t.face_count(i);
            for (j, out) in slot[k..k + n].iter_mut().enumerate() {
                *out = a_base[i] + j as u32;
            }
        } else {
            let f = i - nv;
            for c in 3 * f..3 * f + 3 {
                slot[k] = a_ids[c];
                k += 1;
                let o = twin(c);
                if o != NONE {
                    slot[k] = b_ids[c];
                    k += 1;
                }
            }
        }
        sort_small(slot);
    })?;

    // Tags: kept boundary edges are the child's boundary; parent
    // vertices keep their tags, face points are interior.
    let edge_tags = {
        let mut tags = try_zeroed_vec::<u8>(ne_child, "the tags of the refined edges")?;
        let (ta, _) = tags.split_at_mut(n_vblocks as usize);
        ragged(
            ta,
            nv,
            |v| vbase[v] as usize,
            parallel,
            |v, slot| {
                let n = up_edges(v).1;
                slot[..n].fill(edge_tag::BOUNDARY);
            },
        );
        tags
    };
    Ok(Topology::from_raw(RawTopology {
        num_vertices: nvc as u32,
        face_ptr: face_ptr::<3>(nc, parallel)?,
        face_verts,
        corner_face: corner_faces::<3>(nc, parallel)?,
        corner_edge,
        edges: child_edges,
        edge_corner_ptr,
        edge_corners,
        edge_tags,
        vertex_corner_ptr,
        vertex_corners,
        vertex_edge_ptr,
        vertex_edges,
        vertex_tags: child_vertex_tags(t, nvc, None, parallel)?,
    }))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use subla_mesh::proptest_support::{any_mesh, fan_triangles};
    use subla_mesh::split::shares_two_edges;

    /// The direct split equals a build from the child faces, field for
    /// field, sequential and parallel.
    fn check(t: &Topology) {
        for par in [Par::Seq, Par::Rayon] {
            let fast = split_sqrt3_manifold(t, par).expect("manifold split");
            let general = split_sqrt3_general(t, par).expect("general split");
            assert_eq!(fast, general);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn direct_split_matches_built(data in any_mesh()) {
            let t = fan_triangles(data.mesh.topology());
            prop_assume!(t.is_manifold() && !shares_two_edges(&t, false));
            check(&t);
            let child = t.split_sqrt3(Par::Seq).expect("split");
            prop_assume!(child.is_manifold() && !shares_two_edges(&child, false));
            check(&child);
        }
    }

    /// Every relation [`Sqrt3Child`] computes equals the full child's, and
    /// the split of the child's faces equals the full child's split.
    fn check_lean(t: &Topology) {
        let full = t.split_sqrt3(Par::Seq).expect("split");
        let nv = t.num_vertices();
        for par in [Par::Seq, Par::Rayon] {
            let lean = t.sqrt3_child(par).expect("sizes").expect("closed manifold");
            assert_eq!((lean.num_vertices(), lean.num_faces()), (full.num_vertices(), full.num_faces()));
            for v in 0..nv {
                let got: Vec<u32> = lean.parent_vertex_neighbors(t, v).collect();
                assert_eq!(got, full.vertex_neighbors(v).collect::<Vec<_>>(), "vertex {v}");
                assert_eq!(full.valence(v), t.face_count(v), "vertex {v}");
            }
            for f in 0..t.num_faces() {
                let got = lean.face_point_neighbors(t, f);
                assert_eq!(got.to_vec(), full.vertex_neighbors(nv + f).collect::<Vec<_>>(), "face point {f}");
            }
            for c in 0..t.num_corners() {
                assert_eq!(&lean.face(t, c)[..], full.face(c), "child face {c}");
            }
            assert_eq!(lean.split_faces(t, par).expect("split"), full.split_sqrt3_faces(Par::Seq).expect("split"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn lean_child_matches_the_full_child(data in any_mesh()) {
            let t = fan_triangles(data.mesh.topology());
            let untagged = t.vertex_tags().iter().all(|&g| g == 0) && t.edge_tags().iter().all(|&g| g == 0);
            if untagged && !shares_two_edges(&t, false) {
                check_lean(&t);
                check_lean(&t.split_sqrt3(Par::Seq).expect("split"));
            } else {
                prop_assert!(t.sqrt3_child(Par::Seq).expect("sizes").is_none());
            }
        }
    }

    #[test]
    fn large_meshes_split_the_same_in_parallel() {
        let data = subla_mesh::proptest_support::torus(60, 50, 7);
        let t = fan_triangles(data.mesh.topology());
        let child = t.split_sqrt3(Par::Rayon).expect("split");
        assert_eq!(child, t.split_sqrt3(Par::Seq).expect("split"));
        check(&child);
        check_lean(&t);
        check_lean(&child);
    }

    #[test]
    fn quads_are_refused_by_name() {
        let t = Topology::build(5, vec![0, 3, 7], vec![0, 1, 2, 1, 3, 4, 2], Par::Seq).unwrap();
        let e = t.split_sqrt3(Par::Seq).unwrap_err();
        assert!(matches!(e, subla_mesh::MeshError::NotTriangle { face: 1, order: 4 }), "{e}");
    }
}
