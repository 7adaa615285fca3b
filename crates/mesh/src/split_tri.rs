//! The uniform 1-to-4 triangle split: the topology of one Loop step
//! (Mlakar et al. 2020, Appendix B, "Topology refinement"), built directly
//! from the parent's connectivity.
//!
//! # Vertex order of the child
//! `|v|` parent vertices (in parent order), then `|e|` edge points (in
//! edge-id order): edge point of edge `e` is child vertex `|v| + e`. There
//! are no face points.
//!
//! # Face order of the child
//! Four children per parent triangle, face after face: for triangle `f`
//! with corners `(v₀, v₁, v₂)` and `Eₖ` the edge point of the edge from
//! `vₖ` to `vₖ₊₁`, child faces `4f .. 4f+3` are
//!
//! ```text
//!            v₂
//!           /  \             4f + 0 = (v₀, E₀, E₂)   corner of v₀
//!          / 2  \            4f + 1 = (E₀, v₁, E₁)   corner of v₁
//!        E₂------E₁          4f + 2 = (E₂, E₁, v₂)   corner of v₂
//!        / \  3 / \          4f + 3 = (E₁, E₂, E₀)   middle
//!       / 0 \  / 1 \
//!     v₀-----E₀-----v₁
//! ```
//!
//! (OpenSubdiv's `TriRefinement` order and rotation), each with the
//! parent's orientation.
//!
//! # Edge order of the child
//! First the two halves of every parent edge, `(V_v, Ep_e)`, grouped by the
//! parent vertex `v` in the order of `v`'s incident edges (a degenerate
//! edge, listed once, gives its two halves in turn); then the three edges
//! of each middle triangle, `(Ep_a, Ep_b)`, ordered by `(min(a, b),
//! max(a, b))` and then by parent corner. For a manifold parent in which no
//! two triangles share two edges this is exactly the numbering that
//! [`Topology::build`] gives the child faces, a sort by `(lo, hi)`. A
//! degenerate parent edge keeps two separate halves, as OpenSubdiv does:
//! the corner leaving along it uses the first, the corner arriving the
//! second.
//!
//! # Cost
//! For a manifold parent in which no two triangles share two edges, every
//! child relation (uses of each edge, corners and edges of each vertex,
//! tags) is written directly from the parent's: no sorting beyond a few
//! entries per slot, one binary search per edge end, one pass per output
//! array, in parallel under [`Par::Rayon`] with the same result for any
//! thread count (the phases of a halving split, [`crate::split`]). Any
//! other parent goes through [`Topology::from_edges`], which derives the
//! relations by counting sorts.

use rayon::prelude::*;
use subla_algebra::mem::{try_vec_with_capacity, try_zeroed_vec};
use subla_algebra::par::{Par, balanced_ranges, split_by_ptr};

use crate::error::{Result, to_u32};
use crate::split::{
    RawTopology, check_triangle_child, child_vertex_tags, collect, corner_faces, face_ptr, fixed_slots, general_halves,
    half_at, halved_edge_tags, halved_edge_uses, halves_by_vertex, in_parallel, manifold_half_at, manifold_halves,
    next3, prev3, ragged, relation, sort_small,
};
use crate::topology::Topology;

/// The child of [`Topology::split_triangles`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriSplit {
    /// The child connectivity (triangles only; orders in the
    /// [module docs](self)).
    pub topology: Topology,
    /// The two child edges of each parent edge `e`: `halves[2e + j]` joins
    /// the edge point of `e` to the child of `e`'s endpoint `j`
    /// (`edges()[e][j]`).
    pub halves: Vec<u32>,
}

/// The child of a 1-to-4 triangle split known through its parent
/// ([`Topology::tri_child`]): the numbering of the child's edges (as
/// [`Topology::split_triangles`] gives it), from which a scheme computes
/// the relations its rules read on the fly (Loop's stencils, in its own
/// crate), with no child connectivity in memory. For the level below the finest, whose full
/// connectivity would be four times the parent's and is read only once.
///
/// Every method takes the parent topology the child was made from
/// (`t`); given another topology, its results are meaningless (and it may
/// panic on an index out of range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriChild {
    /// Number of parent vertices.
    num_vertices: u32,
    /// `halves[2e + j]`: the child edge of parent edge `e` at its end `j`.
    halves: Vec<u32>,
    /// The child edge `(Ep(ce[c]), Ep(ce[next(c)]))` of each parent corner `c`.
    middle: Vec<u32>,
    /// The parent corner owning each middle edge, in id order.
    owner: Vec<u32>,
}

impl TriChild {
    /// Number of child vertices (parent vertices, then edge points).
    pub fn num_vertices(&self) -> usize {
        self.num_vertices as usize + self.halves.len() / 2
    }

    /// Number of child edges (halves, then middle edges).
    pub fn num_edges(&self) -> usize {
        self.halves.len() + self.middle.len()
    }

    /// Number of child faces (four per parent triangle).
    pub fn num_faces(&self) -> usize {
        4 * self.middle.len() / 3
    }

    /// The two child edges of each parent edge, as [`TriSplit::halves`].
    #[inline]
    pub fn halves(&self) -> &[u32] {
        &self.halves
    }

    /// The middle edge `(Ep(ce[c]), Ep(ce[next(c)]))` of each parent corner
    /// `c` (with `ce` the parent's corner edges): its child edge id.
    #[inline]
    pub fn middle(&self) -> &[u32] {
        &self.middle
    }

    /// The parent corner owning each middle edge, in id order: middle edge
    /// `m` (child edge `2|e| + m`) is the middle edge of corner `owner()[m]`.
    #[inline]
    pub fn owner(&self) -> &[u32] {
        &self.owner
    }

    /// The faces of the 1-to-4 split of the child, as
    /// [`Topology::split_triangle_faces`] of the child's full topology
    /// gives them: sixteen triangles (48 vertices) per parent triangle.
    ///
    /// # Errors
    /// [`MeshError::Algebra`](crate::MeshError::Algebra) (out of memory)
    /// where the allocator cannot supply the list.
    pub fn split_faces(&self, t: &Topology, par: Par) -> Result<Vec<u32>> {
        let (nv, nv2) = (self.num_vertices, self.num_vertices() as u32);
        let (fv, ce) = (t.face_verts(), t.corner_edges());
        let half = |e, v, _| manifold_half_at(t, &self.halves, e, v);
        fixed_slots::<_, 48>(t.num_faces(), in_parallel(t, par), "the vertices of the refined faces", |f, q| {
            let (v, e) = (triple(fv, f), triple(ce, f));
            let verts = children(v, e.map(|e| nv + e));
            let edges = children_corner_edges(half, v, e, triple(&self.middle, f));
            // Each child's own four children: its corners, and the edge
            // points of its corners' edges.
            for (k, out) in q.chunks_exact_mut(12).enumerate() {
                let v = [verts[3 * k], verts[3 * k + 1], verts[3 * k + 2]];
                let e = [nv2 + edges[3 * k], nv2 + edges[3 * k + 1], nv2 + edges[3 * k + 2]];
                out.copy_from_slice(&children(v, e));
            }
        })
    }
}

/// The vertices of the four children of a triangle with vertices `v` and
/// the edge points `e` of its edges (`eₖ` on the edge from `vₖ` to
/// `vₖ₊₁`), in the order of the [module docs](self).
#[inline]
fn children([v0, v1, v2]: [u32; 3], [e0, e1, e2]: [u32; 3]) -> [u32; 12] {
    [v0, e0, e2, e0, v1, e1, e2, e1, v2, e1, e2, e0]
}

/// The three entries of triangle `f` in a per-corner array.
#[inline]
fn triple(per_corner: &[u32], f: usize) -> [u32; 3] {
    let c = 3 * f;
    [per_corner[c], per_corner[c + 1], per_corner[c + 2]]
}

/// The corner edges of the four children of a parent triangle with
/// vertices `v`, edges `e` and middle edges `i` (of its corners), where
/// `half(e, v, arriving)` is the half of edge `e` at `v` ([`half_at`], or
/// [`manifold_half_at`] where no edge is degenerate).
#[inline]
fn children_corner_edges(
    half: impl Fn(u32, u32, bool) -> u32,
    [v0, v1, v2]: [u32; 3],
    [e0, e1, e2]: [u32; 3],
    [i0, i1, i2]: [u32; 3],
) -> [u32; 12] {
    [
        half(e0, v0, false),
        i2,
        half(e2, v0, true),
        half(e0, v1, true),
        half(e1, v1, false),
        i0,
        i1,
        half(e1, v2, true),
        half(e2, v2, false),
        i1,
        i2,
        i0,
    ]
}

/// No edge.
const NONE: u32 = u32::MAX;

/// Child corner, among the twelve of a parent triangle's children, that
/// arrives at `vₖ₊₁` along the half of edge `Eₖ` (the corner leaving `vₖ`
/// along the other half is `4k`).
const ARRIVING: [usize; 3] = [3, 7, 2];
/// The two child corners that use the middle edge `(Eₖ, Eₖ₊₁)`.
const MIDDLE_USES: [[usize; 2]; 3] = [[5, 11], [6, 9], [1, 10]];
/// The three child corners at the edge point `Eₖ`.
const EDGE_POINT_CORNERS: [[usize; 3]; 3] = [[1, 3, 11], [5, 7, 9], [2, 6, 10]];

/// The ends of the middle edge of parent corner `c`: the edge points of
/// its edge and the next corner's.
#[inline]
fn middle_ends(t: &Topology, c: usize) -> [u32; 2] {
    let (nv, ce) = (t.num_vertices() as u32, t.corner_edges());
    let (a, b) = (ce[c], ce[next3(c)]);
    [nv + a.min(b), nv + a.max(b)]
}

impl Topology {
    /// The uniform 1-to-4 split of a triangle-only topology, numbered as the
    /// [module docs](crate::split_tri) say.
    ///
    /// # Errors
    /// [`MeshError::NotTriangle`](crate::MeshError::NotTriangle) naming the
    /// first face that is not a triangle;
    /// [`MeshError::TooLarge`](crate::MeshError::TooLarge) if a child count
    /// (vertices, corners, edges) does not fit in `u32`;
    /// [`MeshError::Algebra`](crate::MeshError::Algebra) (out of memory)
    /// where the allocator cannot supply the child.
    pub fn split_triangles(&self, par: Par) -> Result<TriSplit> {
        self.check_triangle_split()?;
        if self.is_manifold()
            && let Some(numbering) = self.tri_numbering(in_parallel(self, par))?
        {
            return self.split_tri_manifold(numbering, par);
        }
        self.split_tri_general(par)
    }

    /// [`Topology::split_triangles`] with its numbering already known:
    /// `child` is this topology's [`Topology::tri_child`] (a lean level
    /// whose full mesh is wanted after all), so the split writes the
    /// relations without numbering the child's edges again. The result is
    /// the same. A `child` whose counts do not match this topology's is
    /// set aside and the split numbers the edges itself; one of matching
    /// counts from another topology gives a child that is meaningless, as
    /// every [`TriChild`] method does.
    ///
    /// # Errors
    /// As [`Topology::split_triangles`].
    pub fn split_triangles_from(&self, child: TriChild, par: Par) -> Result<TriSplit> {
        self.check_triangle_split()?;
        let matches = child.num_vertices as usize == self.num_vertices()
            && child.halves.len() == 2 * self.num_edges()
            && child.middle.len() == self.num_corners()
            && child.owner.len() == self.num_corners()
            && self.is_manifold();
        if matches { self.split_tri_manifold(child, par) } else { self.split_triangles(par) }
    }

    /// The faces of [`Topology::split_triangles`] alone, as a flat
    /// `12 × faces` vertex list: for a finest level that only needs its
    /// faces.
    ///
    /// # Errors
    /// As [`Topology::split_triangles`].
    pub fn split_triangle_faces(&self, par: Par) -> Result<Vec<u32>> {
        self.check_triangle_split()?;
        self.child_tri_faces(in_parallel(self, par))
    }

    /// The child of [`Topology::split_triangles`] known through this
    /// topology ([`TriChild`]), where the split writes every relation
    /// directly: a manifold parent in which no two triangles share two
    /// edges. `None` for any other triangle-only parent.
    ///
    /// # Errors
    /// As [`Topology::split_triangles`]; also
    /// [`MeshError::TooLarge`](crate::MeshError::TooLarge) if the split of
    /// the child does not fit in `u32`.
    pub fn tri_child(&self, par: Par) -> Result<Option<TriChild>> {
        self.check_triangle_split()?;
        let (nv, ne, nf) = (self.num_vertices(), self.num_edges(), self.num_faces());
        let (nv2, ne2, nf2) = (nv + ne, 2 * ne + 3 * nf, 4 * nf);
        to_u32(48 * nf, "number of corners of the child's split")?;
        to_u32(nv2 + ne2, "number of vertices of the child's split")?;
        to_u32(2 * ne2 + 3 * nf2, "number of edges of the child's split")?;
        if !self.is_manifold() {
            return Ok(None);
        }
        self.tri_numbering(in_parallel(self, par))
    }

    /// `Ok` for a triangle-only topology whose split fits in `u32`.
    fn check_triangle_split(&self) -> Result<()> {
        let (nv, ne, nf) = (self.num_vertices(), self.num_edges(), self.num_faces());
        check_triangle_child(self, [nv + ne, 12 * nf, 2 * ne + 3 * nf])
    }

    /// The child faces as a flat `12 × faces` vertex list.
    fn child_tri_faces(&self, parallel: bool) -> Result<Vec<u32>> {
        let nv = self.num_vertices() as u32;
        let (fv, ce) = (self.face_verts(), self.corner_edges());
        fixed_slots::<_, 12>(self.num_faces(), parallel, "the vertices of the refined faces", |f, q| {
            q.copy_from_slice(&children(triple(fv, f), triple(ce, f).map(|e| nv + e)));
        })
    }

    /// The child corner edges, face after face (see the
    /// [module docs](crate::split_tri)), from the halves and the middle
    /// edge of each parent corner.
    fn child_tri_corner_edges(
        &self,
        half: impl Fn(u32, u32, bool) -> u32 + Sync,
        middle: &[u32],
        parallel: bool,
    ) -> Result<Vec<u32>> {
        let (fv, ce) = (self.face_verts(), self.corner_edges());
        fixed_slots::<_, 12>(self.num_faces(), parallel, "the corner edges of the refined faces", |f, q| {
            q.copy_from_slice(&children_corner_edges(&half, triple(fv, f), triple(ce, f), triple(middle, f)));
        })
    }

    /// The child edge numbering of a manifold topology (the halves of each
    /// edge end, the middle edge of each corner and the owner corner of
    /// each middle edge), or `None` if two of its triangles share two edges
    /// (then the middle edges are not unique per vertex pair). The test
    /// comes free with the numbering: an edge's two triangles share another
    /// edge exactly when their other edges meet.
    fn tri_numbering(&self, parallel: bool) -> Result<Option<TriChild>> {
        /// Set in an edge's count when its two triangles share another edge.
        const SHARED: u32 = 1 << 31;
        let (nv, ne, nc) = (self.num_vertices(), self.num_edges(), self.num_corners());
        let ce = self.corner_edges();
        let uses = |e: usize| self.edge_corners(e);

        // Middle edges by their lower end: the middle edges at `Ep_a` are
        // `(a, ce[next(u)])`, owned by the use `u` of `a`, and
        // `(ce[prev(u)], a)`, owned by `prev(u)`; those whose other edge is
        // greater have `a` as their lower end. Each edge's (at most four)
        // owners, in order of the other end, and their count.
        let per_edge = collect(ne, parallel, "the middle edges of each parent edge", |a| -> (u32, [u32; 4]) {
            let mut pairs = [(0u32, 0u32); 4];
            let mut ends = [[NONE; 2]; 2];
            let mut n = 0;
            for (k, &u) in uses(a).iter().take(2).enumerate() {
                let u = u as usize;
                let p = prev3(u);
                ends[k] = [ce[next3(u)], ce[p]];
                for (b, owner) in [(ce[next3(u)], u), (ce[p], p)] {
                    if b as usize > a {
                        pairs[n] = (b, owner as u32);
                        n += 1;
                    }
                }
            }
            sort_small(&mut pairs[..n]);
            let [x, y] = ends;
            let shared = x[0] != NONE && y[0] != NONE && (x[0] == y[0] || x[0] == y[1] || x[1] == y[0] || x[1] == y[1]);
            let owners = [pairs[0].1, pairs[1].1, pairs[2].1, pairs[3].1];
            (n as u32 | if shared { SHARED } else { 0 }, owners)
        })?;
        let mut mid_ptr = try_vec_with_capacity(ne + 1, "the middle edges of each parent edge")?;
        let mut acc = 0u32;
        mid_ptr.push(0);
        for &(n, _) in &per_edge {
            if n & SHARED != 0 {
                return Ok(None);
            }
            acc += n;
            mid_ptr.push(acc);
        }
        let halves = manifold_halves(self, parallel)?;
        // Owner corner of each middle edge, in id order.
        let mut owner = try_zeroed_vec::<u32>(nc, "the owner corner of each middle edge")?;
        ragged(
            &mut owner,
            ne,
            |a| mid_ptr[a] as usize,
            parallel,
            |a, slot| {
                let owners = &per_edge[a].1;
                slot.copy_from_slice(&owners[..slot.len()]);
            },
        );
        // The middle edge of each corner: its rank among its lower end's.
        let middle = collect(nc, parallel, "the middle edge of each corner", |c| {
            let (x, y) = (ce[c], ce[next3(c)]);
            let lo = x.min(y) as usize;
            let (n, owners) = per_edge[lo];
            let rank = owners[..n as usize].iter().position(|&o| o as usize == c).unwrap_or(0);
            (2 * ne + mid_ptr[lo] as usize + rank) as u32
        })?;
        Ok(Some(TriChild { num_vertices: nv as u32, halves, middle, owner }))
    }

    /// The split of a manifold topology in which no two triangles share two
    /// edges, every relation written directly.
    fn split_tri_manifold(&self, numbering: TriChild, par: Par) -> Result<TriSplit> {
        let (nv, ne, nf, nc) = (self.num_vertices(), self.num_edges(), self.num_faces(), self.num_corners());
        let parallel = in_parallel(self, par);
        let (nvc, n_a) = (nv + ne, 2 * ne);
        let (vep, ecp) = (self.vertex_edge_ptr(), self.edge_corner_ptr());
        let uses = |e: usize| self.edge_corners(e);

        // Edge numbering: the parent's (halves by vertex, then middle edges).
        let TriChild { halves, middle, owner, .. } = numbering;
        let mut child_edges = try_zeroed_vec::<[u32; 2]>(n_a + nc, "the refined edges")?;
        let (block_a, block_b) = child_edges.split_at_mut(n_a);
        halves_by_vertex(self, nv as u32, block_a, parallel);
        ragged(block_b, nc, |k| k, parallel, |k, slot| slot[0] = middle_ends(self, owner[k] as usize));

        // Child faces.
        let face_verts = self.child_tri_faces(parallel)?;
        let corner_edge =
            self.child_tri_corner_edges(|e, v, _| manifold_half_at(self, &halves, e, v), &middle, parallel)?;

        // Uses of each child edge, in corner order: the half of `e` at `v`
        // is used by child corner `4c` of a use `c` leaving `v` and by
        // `ARRIVING` of a use arriving at `v`; a middle edge by the two
        // corners of `MIDDLE_USES`.
        let (edge_corner_ptr, mut edge_corners) = halved_edge_uses(self, nc, parallel, |c, leaving| {
            if leaving { 4 * c as u32 } else { (12 * (c / 3) + ARRIVING[c % 3]) as u32 }
        })?;
        let total_a = edge_corner_ptr[n_a] as usize;
        ragged(
            &mut edge_corners[total_a..],
            nc,
            |k| 2 * k,
            parallel,
            |k, slot| {
                let c = owner[k] as usize;
                let [a, b] = MIDDLE_USES[c % 3];
                slot.copy_from_slice(&[(12 * (c / 3) + a) as u32, (12 * (c / 3) + b) as u32]);
            },
        );

        // Corners and edges of each child vertex: parent vertices, edge
        // points.
        let vcp = self.vertex_corner_ptr();
        let vc_off = |i: usize| -> usize {
            if i < nv {
                vcp[i] as usize
            } else if i < nvc {
                nc + 3 * ecp[i - nv] as usize
            } else {
                4 * nc
            }
        };
        let (vertex_corner_ptr, vertex_corners) =
            relation(nvc, vc_off, parallel, "the corners of each refined vertex", |i, slot| {
                if i < nv {
                    for (out, &c) in slot.iter_mut().zip(self.vertex_corners(i)) {
                        *out = 4 * c;
                    }
                } else {
                    for (k, &c) in uses(i - nv).iter().enumerate() {
                        let c = c as usize;
                        for (j, &p) in EDGE_POINT_CORNERS[c % 3].iter().enumerate() {
                            slot[3 * k + j] = (12 * (c / 3) + p) as u32;
                        }
                    }
                    sort_small(slot);
                }
            })?;
        let ve_off = |i: usize| -> usize {
            if i < nv {
                vep[i] as usize
            } else if i < nvc {
                let e = i - nv;
                n_a + 2 * e + 2 * ecp[e] as usize
            } else {
                2 * (n_a + nc)
            }
        };
        let (vertex_edge_ptr, vertex_edges) =
            relation(nvc, ve_off, parallel, "the edges of each refined vertex", |i, slot| {
                if i < nv {
                    for (k, out) in slot.iter_mut().enumerate() {
                        *out = vep[i] + k as u32;
                    }
                } else {
                    let e = i - nv;
                    slot[0] = halves[2 * e];
                    slot[1] = halves[2 * e + 1];
                    for (k, &c) in uses(e).iter().enumerate() {
                        slot[2 + 2 * k] = middle[c as usize];
                        slot[3 + 2 * k] = middle[prev3(c as usize)];
                    }
                    sort_small(slot);
                }
            })?;

        // Tags: the child is manifold too.
        let topology = Topology::from_raw(RawTopology {
            num_vertices: nvc as u32,
            face_ptr: face_ptr::<3>(4 * nf, parallel)?,
            face_verts,
            corner_face: corner_faces::<3>(4 * nf, parallel)?,
            corner_edge,
            edges: child_edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags: halved_edge_tags(self, nc, parallel)?,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags: child_vertex_tags(self, nvc, Some(nv), parallel)?,
        });
        Ok(TriSplit { topology, halves })
    }

    /// The split of any triangle-only topology: child edges and corner
    /// edges written directly, everything else derived by
    /// [`Topology::from_edges`].
    fn split_tri_general(&self, par: Par) -> Result<TriSplit> {
        let (nv, ne, nf) = (self.num_vertices(), self.num_edges(), self.num_faces());
        let parallel = in_parallel(self, par);
        let mut child_edges = try_zeroed_vec::<[u32; 2]>(2 * ne + 3 * nf, "the refined edges")?;
        let halves = general_halves(self, nv as u32, &mut child_edges[..2 * ne])?;
        let middle = self.middle_edges(par)?;
        for (c, &m) in middle.iter().enumerate() {
            child_edges[m as usize] = middle_ends(self, c);
        }
        let face_verts = self.child_tri_faces(parallel)?;
        let corner_edge =
            self.child_tri_corner_edges(|e, v, at| half_at(self, &halves, e, v, at), &middle, parallel)?;
        let face_ptr = face_ptr::<3>(4 * nf, parallel)?;
        // Two triangles sharing two edges (a closed pair) make the same
        // middle edge twice: pairs are looked for.
        let topology =
            Topology::from_refined_edges(nv + ne, face_ptr, face_verts, child_edges, corner_edge, false, par)?;
        Ok(TriSplit { topology, halves })
    }

    /// Child edge id of the middle edge `(Ep(corner_edge[c]),
    /// Ep(corner_edge[next(c)]))` of every parent corner `c`: `2|e| +` its
    /// rank by `(lo, hi, c)`.
    fn middle_edges(&self, par: Par) -> Result<Vec<u32>> {
        let (ne, nc) = (self.num_edges(), self.num_corners());
        let ce = self.corner_edges();
        let key = |c: usize| -> (u32, u32) {
            let (a, b) = (ce[c], ce[next3(c)]);
            (a.min(b), a.max(b))
        };
        // Counting sort by the lower edge, then a small sort inside each bucket.
        let mut ptr = try_zeroed_vec::<u32>(ne + 1, "the middle edges of each parent edge")?;
        for c in 0..nc {
            ptr[key(c).0 as usize + 1] += 1;
        }
        for e in 0..ne {
            ptr[e + 1] += ptr[e];
        }
        let mut cursor = try_vec_with_capacity(ne + 1, "the middle edges of each parent edge")?;
        cursor.extend_from_slice(&ptr);
        let mut order = try_zeroed_vec::<(u32, u32)>(nc, "the middle edges of each parent edge")?;
        for c in 0..nc {
            let (lo, hi) = key(c);
            order[cursor[lo as usize] as usize] = (hi, c as u32);
            cursor[lo as usize] += 1;
        }
        drop(cursor);
        let parallel = par == Par::Rayon && nc >= 1 << 13;
        let ranges = balanced_ranges(&ptr, if parallel { par.blocks(nc, 1 << 13) } else { 1 });
        let pieces = split_by_ptr(&mut order, &ptr, &ranges);
        let sort = |(r, piece): (std::ops::Range<usize>, &mut [(u32, u32)])| {
            let base = ptr[r.start] as usize;
            for e in r {
                piece[ptr[e] as usize - base..ptr[e + 1] as usize - base].sort_unstable();
            }
        };
        if ranges.len() > 1 {
            ranges.into_par_iter().zip(pieces).for_each(sort);
        } else {
            ranges.into_iter().zip(pieces).for_each(sort);
        }
        let mut middle = try_zeroed_vec::<u32>(nc, "the middle edge of each corner")?;
        for (rank, &(_, c)) in order.iter().enumerate() {
            middle[c as usize] = (2 * ne + rank) as u32;
        }
        Ok(middle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MeshError;
    use crate::split::shares_two_edges;

    #[test]
    fn one_triangle_splits_into_four() {
        let t = Topology::build(3, vec![0, 3], vec![0, 1, 2], Par::Seq).unwrap();
        let s = t.split_triangles(Par::Seq).unwrap();
        // Edges (0,1)=0, (0,2)=1, (1,2)=2: edge points 3, 4, 5.
        assert_eq!(s.topology.face_verts(), &[0, 3, 4, 3, 1, 5, 4, 5, 2, 5, 4, 3]);
        assert_eq!(s.topology.num_edges(), 9);
        let rebuilt =
            Topology::build(6, s.topology.face_ptr().to_vec(), s.topology.face_verts().to_vec(), Par::Seq).unwrap();
        assert_eq!(rebuilt, s.topology);
        assert_eq!(s, t.split_tri_general(Par::Seq).unwrap());
    }

    #[test]
    fn quads_are_refused_by_name() {
        let t = Topology::build(5, vec![0, 3, 7], vec![0, 1, 2, 1, 3, 4, 2], Par::Seq).unwrap();
        let e = t.split_triangles(Par::Seq).unwrap_err();
        assert!(matches!(e, MeshError::NotTriangle { face: 1, order: 4 }), "{e}");
        assert!(t.split_triangle_faces(Par::Seq).is_err());
    }

    #[test]
    fn two_triangles_on_the_same_three_edges_take_the_general_path() {
        // A closed "pillow" of two triangles: manifold, but the middle edges
        // of the two faces join the same edge points.
        let t = Topology::build(3, vec![0, 3, 6], vec![0, 1, 2, 0, 2, 1], Par::Seq).unwrap();
        assert!(t.is_manifold());
        assert!(shares_two_edges(&t, false));
        let s = t.split_triangles(Par::Seq).unwrap();
        assert!(!s.topology.is_manifold());
        assert_eq!(s.topology.num_edges(), 2 * 3 + 6);
    }
}

#[cfg(all(test, feature = "proptest-support"))]
mod proptests {
    use proptest::prelude::*;

    use super::*;
    use crate::proptest_support::{any_mesh, fan_triangles};
    use crate::split::shares_two_edges;

    /// The direct split equals the general one, whose relations
    /// `from_edges` derives by counting sorts, field for field; and the
    /// general one equals a fresh build from the child faces.
    fn check(t: &Topology) {
        for par in [Par::Seq, Par::Rayon] {
            let numbering =
                t.tri_numbering(par == Par::Rayon).expect("memory").expect("no two triangles share two edges");
            let fast = t.split_tri_manifold(numbering, par).expect("manifold split");
            let general = t.split_tri_general(par).expect("general split");
            assert_eq!(fast, general);
        }
    }

    /// The counts of [`TriChild`] are the full child's, the split of the
    /// child's faces equals the full child's split, and a split from the
    /// numbering equals a split that numbers the edges itself. (What a
    /// scheme computes from the numbering, Loop's stencils, is checked in
    /// its crate.)
    fn check_lean(t: &Topology) {
        let full = t.split_triangles(Par::Seq).expect("split").topology;
        for par in [Par::Seq, Par::Rayon] {
            let lean = t.tri_child(par).expect("sizes").expect("direct split");
            assert_eq!(
                (lean.num_vertices(), lean.num_edges(), lean.num_faces()),
                (full.num_vertices(), full.num_edges(), full.num_faces())
            );
            let (ne, ce) = (t.num_edges(), t.corner_edges());
            for (m, &c) in lean.owner().iter().enumerate() {
                let c = c as usize;
                assert_eq!(lean.middle()[c] as usize, 2 * ne + m, "middle edge {m}");
                let (x, y) = (ce[c] + t.num_vertices() as u32, ce[next3(c)] + t.num_vertices() as u32);
                assert_eq!(full.edge(2 * ne + m), [x.min(y), x.max(y)], "middle edge {m}");
            }
            assert_eq!(lean.split_faces(t, par).expect("split"), full.split_triangle_faces(Par::Seq).expect("split"));
            let from = t.split_triangles_from(lean, par).expect("split");
            assert_eq!(from, t.split_triangles(Par::Seq).expect("split"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn lean_child_matches_the_full_child(data in any_mesh()) {
            let t = fan_triangles(data.mesh.topology());
            if t.is_manifold() && !shares_two_edges(&t, false) {
                check_lean(&t);
            } else {
                prop_assert!(t.tri_child(Par::Seq).expect("sizes").is_none());
            }
        }

        #[test]
        fn direct_split_matches_derived(data in any_mesh()) {
            let t = fan_triangles(data.mesh.topology());
            prop_assume!(t.is_manifold() && !shares_two_edges(&t, false));
            check(&t);
            let child = t.split_triangles(Par::Seq).expect("split").topology;
            let rebuilt = Topology::build(child.num_vertices(), child.face_ptr().to_vec(), child.face_verts().to_vec(), Par::Seq).expect("build");
            prop_assert_eq!(&rebuilt, &child);
            prop_assert!(child.is_manifold() && !shares_two_edges(&child, false));
            check(&child);
        }
    }

    /// A numbering of another topology's counts is set aside.
    #[test]
    fn split_from_a_foreign_numbering_numbers_itself() {
        let t = fan_triangles(crate::proptest_support::torus(6, 5, 1).mesh.topology());
        let other = fan_triangles(crate::proptest_support::torus(7, 5, 1).mesh.topology());
        let foreign = other.tri_child(Par::Seq).expect("sizes").expect("direct split");
        let from = t.split_triangles_from(foreign, Par::Seq).expect("split");
        assert_eq!(from, t.split_triangles(Par::Seq).expect("split"));
    }

    #[test]
    fn large_meshes_split_the_same_in_parallel() {
        let data = crate::proptest_support::torus(60, 50, 7);
        let t = fan_triangles(data.mesh.topology());
        let child = t.split_triangles(Par::Rayon).expect("split");
        assert_eq!(child, t.split_triangles(Par::Seq).expect("split"));
        check(&child.topology);
        check_lean(&child.topology);
    }
}
