//! The uniform quad split: every corner of every face becomes one child
//! quad (Mlakar et al. 2020, Eq. 12 and Alg. 3; the topology of one
//! Catmull-Clark or bilinear step).
//!
//! # Vertex order of the child
//! `|v|` parent vertices (in parent order), then `|f|` face points (in face
//! order), then `|e|` edge points (in edge-id order).
//!
//! # Face order of the child
//! Face after face, and within a face corner after corner: the child of
//! corner `c` (vertex `v₀`, next vertex `vₙ`, previous vertex `vₚ`) is
//! `(v₀, e(v₀,vₙ), f, e(vₚ,v₀))` — the vertex, the edge point of its outgoing
//! edge, the face point, the edge point of its incoming edge — which keeps
//! the parent's orientation.
//!
//! # Edge order of the child
//! Two halves per parent edge, `(V_v, Ep_e)`, grouped by the parent vertex
//! `v` in the order of `v`'s incident edges; then one edge `(Fp_f, Ep_e)`
//! per parent corner, face by face, within a face by parent edge id. For a
//! manifold parent this is exactly the numbering that
//! [`Topology::build`] gives the child faces (a sort by `(lo, hi)`). A
//! degenerate parent edge (a vertex to itself) keeps two separate halves, as
//! OpenSubdiv does: the corner leaving along it uses the first, the corner
//! arriving the second.
//!
//! # Cost
//! For a manifold parent every child relation (uses of each edge, corners
//! and edges of each vertex, tags) is written directly from the parent's —
//! no sorting, no search beyond a binary search per edge end, one pass per
//! output array, in parallel under [`Par::Rayon`] with the same result for
//! any thread count (the phases of a halving split, [`crate::split`]). A
//! non-manifold parent goes through [`Topology::from_edges`], which
//! derives the relations by counting sorts.

use subla_algebra::mem::try_zeroed_vec;
use subla_algebra::par::Par;

use crate::error::Result;
use crate::split::{
    RawTopology, check_counts, child_vertex_tags, corner_faces, face_ptr, fixed_slots, general_halves, half_at,
    halved_edge_tags, halved_edge_uses, halves_by_vertex, in_parallel, manifold_half_at, manifold_halves, ragged,
    relation, sort_small,
};
use crate::topology::Topology;

/// The child of [`Topology::split_quads`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuadSplit {
    /// The child connectivity (quads only; orders in the
    /// [module docs](self)).
    pub topology: Topology,
    /// The two child edges of each parent edge `e`: `halves[2e + j]` joins
    /// the edge point of `e` to the child of `e`'s endpoint `j`
    /// (`edges()[e][j]`).
    pub halves: Vec<u32>,
}

impl Topology {
    /// The uniform quad split of this topology: one child quad per corner,
    /// numbered as the [module docs](crate::split_quad) say.
    ///
    /// # Errors
    /// [`MeshError::TooLarge`](crate::MeshError::TooLarge) if a child count
    /// (vertices, corners, edges) does not fit in `u32`;
    /// [`MeshError::Algebra`](crate::MeshError::Algebra) (out of memory)
    /// where the allocator cannot supply the child.
    pub fn split_quads(&self, par: Par) -> Result<QuadSplit> {
        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        check_counts([nv + nf + ne, 4 * nc, 2 * ne + nc])?;
        if self.is_manifold() { self.split_manifold(par) } else { self.split_general(par) }
    }

    /// The faces of [`Topology::split_quads`] alone (see the
    /// [module docs](crate::split_quad)), as a flat `4 × corners` vertex list:
    /// for a finest level that only needs its faces.
    ///
    /// # Errors
    /// [`MeshError::Algebra`](crate::MeshError::Algebra) (out of memory)
    /// where the allocator cannot supply the list.
    pub fn split_faces(&self, par: Par) -> Result<Vec<u32>> {
        self.child_face_verts(in_parallel(self, par))
    }

    /// The interior child edge ids (`(Fp_f, Ep_e)`, one per parent corner):
    /// `2|e| + ` the corner's rank in its face by `(edge id, corner)`.
    fn interior_edges(&self, parallel: bool) -> Result<Vec<u32>> {
        let n_a = 2 * self.num_edges() as u32;
        let fptr = self.face_ptr();
        let ce = self.corner_edges();
        let mut interior = try_zeroed_vec::<u32>(self.num_corners(), "the interior edges of the refined faces")?;
        ragged(
            &mut interior,
            self.num_faces(),
            |f| fptr[f] as usize,
            parallel,
            |f, ids| {
                let s = fptr[f];
                let key = |k: usize| (ce[s as usize + k], k);
                if ids.len() <= 16 {
                    // Rank by (edge, corner); orders are small.
                    for i in 0..ids.len() {
                        let rank = (0..ids.len()).filter(|&k| key(k) < key(i)).count();
                        ids[i] = n_a + s + rank as u32;
                    }
                } else {
                    let mut order: Vec<usize> = (0..ids.len()).collect();
                    order.sort_unstable_by_key(|&k| key(k));
                    for (rank, &k) in order.iter().enumerate() {
                        ids[k] = n_a + s + rank as u32;
                    }
                }
            },
        );
        Ok(interior)
    }

    /// Writes the interior edges `(Fp_f, Ep_e)` into `out` (the child edges
    /// after the halves), face by face.
    fn interior_edge_ends(&self, interior: &[u32], out: &mut [[u32; 2]], parallel: bool) {
        let (nv, nf) = (self.num_vertices() as u32, self.num_faces());
        let (base_e, n_a) = (nv + nf as u32, 2 * self.num_edges());
        let (fptr, ce) = (self.face_ptr(), self.corner_edges());
        ragged(
            out,
            nf,
            |f| fptr[f] as usize,
            parallel,
            |f, slot| {
                let s = fptr[f] as usize;
                for c in s..fptr[f + 1] as usize {
                    slot[interior[c] as usize - n_a - s] = [nv + f as u32, base_e + ce[c]];
                }
            },
        );
    }

    /// The child faces as a flat `4 × corners` vertex list.
    fn child_face_verts(&self, parallel: bool) -> Result<Vec<u32>> {
        let nv = self.num_vertices() as u32;
        let base_e = nv + self.num_faces() as u32;
        let (fv, cf, ce) = (self.face_verts(), self.corner_faces(), self.corner_edges());
        fixed_slots::<_, 4>(self.num_corners(), parallel, "the vertices of the refined faces", |c, q| {
            let p = self.prev_corner(c);
            q[0] = fv[c];
            q[1] = base_e + ce[c];
            q[2] = nv + cf[c];
            q[3] = base_e + ce[p];
        })
    }

    /// The child corner edges as a flat `4 × corners` list, from the
    /// interior edges and the halves: `half(e, v, arriving)` is the half of
    /// edge `e` at `v` ([`half_at`], or [`manifold_half_at`] where no edge
    /// is degenerate).
    fn child_corner_edges(
        &self,
        half: impl Fn(u32, u32, bool) -> u32 + Sync,
        interior: &[u32],
        parallel: bool,
    ) -> Result<Vec<u32>> {
        let (fv, ce) = (self.face_verts(), self.corner_edges());
        fixed_slots::<_, 4>(self.num_corners(), parallel, "the corner edges of the refined faces", |c, q| {
            let p = self.prev_corner(c);
            q[0] = half(ce[c], fv[c], false);
            q[1] = interior[c];
            q[2] = interior[p];
            q[3] = half(ce[p], fv[c], true);
        })
    }

    /// The split of a manifold topology, every relation written directly.
    fn split_manifold(&self, par: Par) -> Result<QuadSplit> {
        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        let parallel = in_parallel(self, par);
        let (nvc, n_a) = (nv + nf + ne, 2 * ne);
        let fptr = self.face_ptr();
        let (vep, ecp) = (self.vertex_edge_ptr(), self.edge_corner_ptr());
        let uses = |e: usize| self.edge_corners(e);

        // Edge numbering: halves by vertex, then interior edges by face.
        let halves = manifold_halves(self, parallel)?;
        let interior = self.interior_edges(parallel)?;
        let mut child_edges = try_zeroed_vec::<[u32; 2]>(n_a + nc, "the refined edges")?;
        let (block_a, block_b) = child_edges.split_at_mut(n_a);
        halves_by_vertex(self, (nv + nf) as u32, block_a, parallel);
        self.interior_edge_ends(&interior, block_b, parallel);

        // Child faces.
        let face_verts = self.child_face_verts(parallel)?;
        let corner_edge =
            self.child_corner_edges(|e, v, _| manifold_half_at(self, &halves, e, v), &interior, parallel)?;

        // Uses of each child edge, in corner order: a half of `e` at `v` is
        // used by corner 4c of a use c leaving `v` and by corner
        // 4·next(c) + 3 of a use arriving at `v`; the interior edge of
        // corner c by corners 4c + 1 and 4·next(c) + 2.
        let (edge_corner_ptr, mut edge_corners) = halved_edge_uses(self, nc, parallel, |c, leaving| {
            if leaving { 4 * c as u32 } else { 4 * self.next_corner(c) as u32 + 3 }
        })?;
        let total_a = edge_corner_ptr[n_a] as usize;
        ragged(
            &mut edge_corners[total_a..],
            nf,
            |f| 2 * fptr[f] as usize,
            parallel,
            |f, slot| {
                let s = fptr[f] as usize;
                for (c, &id) in interior.iter().enumerate().take(fptr[f + 1] as usize).skip(s) {
                    let at = 2 * (id as usize - n_a - s);
                    let (a, b) = (4 * c as u32 + 1, 4 * self.next_corner(c) as u32 + 2);
                    slot[at] = a.min(b);
                    slot[at + 1] = a.max(b);
                }
            },
        );

        // Corners and edges of each child vertex: parent vertices, face
        // points, edge points.
        let vcp = self.vertex_corner_ptr();
        let vc_off = |i: usize| -> usize {
            if i < nv {
                vcp[i] as usize
            } else if i < nv + nf {
                nc + fptr[i - nv] as usize
            } else if i < nvc {
                2 * nc + 2 * ecp[i - nv - nf] as usize
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
                } else if i < nv + nf {
                    let s = fptr[i - nv];
                    for (k, out) in slot.iter_mut().enumerate() {
                        *out = 4 * (s + k as u32) + 2;
                    }
                } else {
                    for (k, &c) in uses(i - nv - nf).iter().enumerate() {
                        slot[2 * k] = 4 * c + 1;
                        slot[2 * k + 1] = 4 * self.next_corner(c as usize) as u32 + 3;
                    }
                    sort_small(slot);
                }
            })?;
        let ve_off = |i: usize| -> usize {
            if i < nv {
                vep[i] as usize
            } else if i < nv + nf {
                n_a + fptr[i - nv] as usize
            } else if i < nvc {
                let e = i - nv - nf;
                n_a + nc + 2 * e + ecp[e] as usize
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
                } else if i < nv + nf {
                    let s = (n_a + fptr[i - nv] as usize) as u32;
                    for (k, out) in slot.iter_mut().enumerate() {
                        *out = s + k as u32;
                    }
                } else {
                    let e = i - nv - nf;
                    slot[0] = halves[2 * e];
                    slot[1] = halves[2 * e + 1];
                    for (k, &c) in uses(e).iter().enumerate() {
                        slot[2 + k] = interior[c as usize];
                    }
                    sort_small(slot);
                }
            })?;

        // Tags: a manifold parent has a manifold child.
        let topology = Topology::from_raw(RawTopology {
            num_vertices: nvc as u32,
            face_ptr: face_ptr::<4>(nc, parallel)?,
            face_verts,
            corner_face: corner_faces::<4>(nc, parallel)?,
            corner_edge,
            edges: child_edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags: halved_edge_tags(self, nc, parallel)?,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags: child_vertex_tags(self, nvc, Some(nv + nf), parallel)?,
        });
        Ok(QuadSplit { topology, halves })
    }

    /// The split of any topology: child edges and corner edges written
    /// directly, everything else derived by [`Topology::from_edges`].
    fn split_general(&self, par: Par) -> Result<QuadSplit> {
        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        let parallel = in_parallel(self, par);
        let n_a = 2 * ne;
        let mut child_edges = try_zeroed_vec::<[u32; 2]>(n_a + nc, "the refined edges")?;
        let (block_a, block_b) = child_edges.split_at_mut(n_a);
        let halves = general_halves(self, (nv + nf) as u32, block_a)?;
        let interior = self.interior_edges(parallel)?;
        self.interior_edge_ends(&interior, block_b, parallel);
        let face_verts = self.child_face_verts(parallel)?;
        let corner_edge = self.child_corner_edges(|e, v, at| half_at(self, &halves, e, v, at), &interior, parallel)?;
        let ptr = face_ptr::<4>(nc, parallel)?;
        // Pairs are distinct where no face uses an edge twice (see
        // `Topology::from_refined_edges`).
        let distinct = self.is_manifold();
        let topology =
            Topology::from_refined_edges(nv + nf + ne, ptr, face_verts, child_edges, corner_edge, distinct, par)?;
        Ok(QuadSplit { topology, halves })
    }
}

#[cfg(all(test, feature = "proptest-support"))]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::proptest_support::any_mesh;

    /// The direct manifold split equals the general one, whose relations
    /// `from_edges` derives by counting sorts, field for field.
    fn check(t: &Topology) {
        for par in [Par::Seq, Par::Rayon] {
            let fast = t.split_manifold(par).expect("manifold split");
            let general = t.split_general(par).expect("general split");
            assert_eq!(fast, general);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn direct_split_matches_derived(data in any_mesh()) {
            let t = data.mesh.topology();
            prop_assume!(t.is_manifold());
            check(t);
            let child = t.split_quads(Par::Seq).expect("split").topology;
            check(&child);
        }
    }

    #[test]
    fn large_meshes_split_the_same_in_parallel() {
        let data = crate::proptest_support::torus(150, 130, 7);
        let t = data.mesh.topology();
        let child = t.split_quads(Par::Rayon).expect("split");
        assert_eq!(child, t.split_quads(Par::Seq).expect("split"));
        check(&child.topology);
    }

    #[test]
    fn non_manifold_parents_take_the_general_path() {
        // Three faces on one edge, and a bow-tie vertex.
        let faces = [0u32, 1, 2, 1, 0, 3, 0, 1, 4, 2, 5, 6];
        let ptr = vec![0u32, 3, 6, 9, 12];
        let t = Topology::build(7, ptr, faces.to_vec(), Par::Seq).expect("build");
        assert!(!t.is_manifold());
        let s = t.split_quads(Par::Seq).expect("split");
        assert_eq!(s.topology.num_faces(), 12);
        assert_eq!(s.topology.num_vertices(), 7 + 4 + t.num_edges());
        assert!(!s.topology.is_manifold());
    }
}
