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
//! any thread count. A non-manifold parent goes through
//! [`Topology::from_edges`], which derives the relations by counting sorts.

use subla_algebra::mem::zeroed_vec;
use subla_algebra::par::Par;

use crate::error::{Result, to_u32};
use crate::split::{RawTopology, collect, in_parallel, manifold_halves, ragged, sort_small};
use crate::topology::{Topology, edge_tag, vertex_tag};

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
    /// (vertices, corners, edges) does not fit in `u32`.
    pub fn split_quads(&self, par: Par) -> Result<QuadSplit> {
        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        to_u32(nv + nf + ne, "number of refined vertices")?;
        to_u32(4 * nc, "number of refined corners")?;
        to_u32(2 * ne + nc, "number of refined edges")?;
        if self.is_manifold() { Ok(self.split_manifold(par)) } else { self.split_general(par) }
    }

    /// The interior child edge ids (`(Fp_f, Ep_e)`, one per parent corner):
    /// `2|e| + ` the corner's rank in its face by `(edge id, corner)`.
    fn interior_edges(&self, parallel: bool) -> Vec<u32> {
        let n_a = 2 * self.num_edges() as u32;
        let fptr = self.face_ptr();
        let ce = self.corner_edges();
        let mut interior = zeroed_vec::<u32>(self.num_corners());
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
        interior
    }

    /// The faces of [`Topology::split_quads`] alone (see the
    /// [module docs](crate::split_quad)), as a flat `4 × corners` vertex list:
    /// for a finest level that only needs its faces.
    pub fn split_faces(&self, par: Par) -> Vec<u32> {
        self.child_face_verts(in_parallel(self, par))
    }

    /// The child faces as a flat `4 × corners` vertex list.
    fn child_face_verts(&self, parallel: bool) -> Vec<u32> {
        let nv = self.num_vertices() as u32;
        let base_e = nv + self.num_faces() as u32;
        let (fv, cf, ce) = (self.face_verts(), self.corner_faces(), self.corner_edges());
        let mut out = zeroed_vec::<u32>(4 * self.num_corners());
        let child = |c: usize, q: &mut [u32]| {
            let p = self.prev_corner(c);
            q[0] = fv[c];
            q[1] = base_e + ce[c];
            q[2] = nv + cf[c];
            q[3] = base_e + ce[p];
        };
        ragged(&mut out, self.num_corners(), |c| 4 * c, parallel, child);
        out
    }

    /// The split of a manifold topology, every relation written directly.
    fn split_manifold(&self, par: Par) -> QuadSplit {
        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        let parallel = in_parallel(self, par);
        let (base_f, base_e) = (nv as u32, (nv + nf) as u32);
        let n_a = 2 * ne;
        let edges = self.edges();
        let (fptr, fv, ce) = (self.face_ptr(), self.face_verts(), self.corner_edges());
        let vep = self.vertex_edge_ptr();
        let ves = &self.vertex_edges_all();
        let ecp = self.edge_corner_ptr();
        let uses = |e: usize| self.edge_corners(e);

        let halves = manifold_halves(self, parallel);
        let interior = self.interior_edges(parallel);

        // Child edges: halves by vertex, then interior edges by face.
        let mut child_edges = zeroed_vec::<[u32; 2]>(n_a + nc);
        let (block_a, block_b) = child_edges.split_at_mut(n_a);
        ragged(
            block_a,
            nv,
            |v| vep[v] as usize,
            parallel,
            |v, slot| {
                let s = vep[v] as usize;
                for (k, out) in slot.iter_mut().enumerate() {
                    *out = [v as u32, base_e + ves[s + k]];
                }
            },
        );
        ragged(
            block_b,
            nf,
            |f| fptr[f] as usize,
            parallel,
            |f, slot| {
                let s = fptr[f] as usize;
                for c in s..fptr[f + 1] as usize {
                    slot[interior[c] as usize - n_a - s] = [base_f + f as u32, base_e + ce[c]];
                }
            },
        );

        // The half of edge `e` at its endpoint `v`.
        let half = |e: u32, v: u32| halves[2 * e as usize + usize::from(edges[e as usize][0] != v)];
        let face_verts = self.child_face_verts(parallel);
        let mut corner_edge = zeroed_vec::<u32>(4 * nc);
        ragged(
            &mut corner_edge,
            nc,
            |c| 4 * c,
            parallel,
            |c, q| {
                let p = self.prev_corner(c);
                q[0] = half(ce[c], fv[c]);
                q[1] = interior[c];
                q[2] = interior[p];
                q[3] = half(ce[p], fv[c]);
            },
        );
        let corner_face = collect(4 * nc, parallel, |c| (c / 4) as u32);
        let face_ptr = collect(nc + 1, parallel, |f| 4 * f as u32);

        // Uses of each child edge, in corner order: a half of `e` at `v` is
        // used by corner 4c of a use c leaving `v` and by corner
        // 4·next(c) + 3 of a use arriving at `v`; the interior edge of
        // corner c by corners 4c + 1 and 4·next(c) + 2.
        let mut edge_corner_ptr = Vec::with_capacity(n_a + nc + 1);
        let mut acc = 0u32;
        edge_corner_ptr.push(0);
        for &e in ves.iter() {
            acc += ecp[e as usize + 1] - ecp[e as usize];
            edge_corner_ptr.push(acc);
        }
        let total_a = acc as usize;
        edge_corner_ptr.extend((1..=nc as u32).map(|i| acc + 2 * i));
        let mut edge_corners = zeroed_vec::<u32>(total_a + 2 * nc);
        let (uses_a, uses_b) = edge_corners.split_at_mut(total_a);
        ragged(
            uses_a,
            n_a,
            |k| edge_corner_ptr[k] as usize,
            parallel,
            |k, slot| {
                // Vertex of block-A position k: the edge lists are in vertex order.
                let e = ves[k] as usize;
                let v = edges[e][usize::from(vep[edges[e][0] as usize + 1] as usize <= k)];
                for (out, &c) in slot.iter_mut().zip(uses(e)) {
                    let c = c as usize;
                    *out = if fv[c] == v { 4 * c as u32 } else { 4 * self.next_corner(c) as u32 + 3 };
                }
                sort_small(slot);
            },
        );
        ragged(
            uses_b,
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

        // Corners and edges of each child vertex.
        let nvc = nv + nf + ne;
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
        let vertex_corner_ptr = collect(nvc + 1, parallel, |i| vc_off(i) as u32);
        let mut vertex_corners = zeroed_vec::<u32>(4 * nc);
        ragged(&mut vertex_corners, nvc, vc_off, parallel, |i, slot| {
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
        });
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
        let vertex_edge_ptr = collect(nvc + 1, parallel, |i| ve_off(i) as u32);
        let mut vertex_edges = zeroed_vec::<u32>(2 * (n_a + nc));
        ragged(&mut vertex_edges, nvc, ve_off, parallel, |i, slot| {
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
        });

        // Tags: a manifold parent has a manifold child; halves and edge
        // points inherit the parent edge's boundary bit, parent vertices
        // keep theirs.
        let ptags = self.edge_tags();
        let edge_tags =
            collect(n_a + nc, parallel, |k| if k < n_a { ptags[ves[k] as usize] & edge_tag::BOUNDARY } else { 0 });
        let vtags = self.vertex_tags();
        let vertex_tags = collect(nvc, parallel, |i| {
            if i < nv {
                vtags[i]
            } else if i < nv + nf {
                0
            } else if ptags[i - nv - nf] & edge_tag::BOUNDARY != 0 {
                vertex_tag::BOUNDARY
            } else {
                0
            }
        });
        let topology = Topology::from_raw(RawTopology {
            num_vertices: nvc as u32,
            face_ptr,
            face_verts,
            corner_face,
            corner_edge,
            edges: child_edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags,
        });
        QuadSplit { topology, halves }
    }

    /// The split of any topology: child edges and corner edges written
    /// directly, everything else derived by [`Topology::from_edges`].
    fn split_general(&self, par: Par) -> Result<QuadSplit> {
        use std::sync::atomic::{AtomicU32, Ordering};

        let (nv, nf, ne, nc) = (self.num_vertices(), self.num_faces(), self.num_edges(), self.num_corners());
        let parallel = in_parallel(self, par);
        let (base_f, base_e) = (nv as u32, (nv + nf) as u32);
        let edges = self.edges();
        let degenerate = |e: u32| edges[e as usize][0] == edges[e as usize][1];
        // Halves grouped by their parent-vertex end, in the order of the
        // vertex's incident edges (a degenerate edge, listed once, counts 2).
        let mut a_ptr = Vec::with_capacity(nv + 1);
        a_ptr.push(0u32);
        let mut acc = 0u32;
        for v in 0..nv {
            for &e in self.vertex_edges(v) {
                acc += if degenerate(e) { 2 } else { 1 };
            }
            a_ptr.push(acc);
        }
        let n_a = acc as usize;
        let half_id: Vec<AtomicU32> = (0..2 * ne).map(|_| AtomicU32::new(u32::MAX)).collect();
        let mut child_edges = zeroed_vec::<[u32; 2]>(n_a + nc);
        let (block_a, block_b) = child_edges.split_at_mut(n_a);
        ragged(
            block_a,
            nv,
            |v| a_ptr[v] as usize,
            parallel,
            |v, slot| {
                let mut k = 0;
                for &e in self.vertex_edges(v) {
                    let ends = edges[e as usize];
                    for (j, &end) in ends.iter().enumerate() {
                        if end as usize == v {
                            half_id[2 * e as usize + j].store(a_ptr[v] + k as u32, Ordering::Relaxed);
                            slot[k] = [v as u32, base_e + e];
                            k += 1;
                        }
                    }
                }
            },
        );
        let halves: Vec<u32> = half_id.into_iter().map(AtomicU32::into_inner).collect();
        debug_assert_eq!(n_a, 2 * ne, "every edge has two halves");
        let interior = self.interior_edges(parallel);
        let (fptr, fv, ce) = (self.face_ptr(), self.face_verts(), self.corner_edges());
        ragged(
            block_b,
            nf,
            |f| fptr[f] as usize,
            parallel,
            |f, slot| {
                let s = fptr[f] as usize;
                for c in s..fptr[f + 1] as usize {
                    slot[interior[c] as usize - n_a - s] = [base_f + f as u32, base_e + ce[c]];
                }
            },
        );
        let face_verts = self.child_face_verts(parallel);
        let mut corner_edge = zeroed_vec::<u32>(4 * nc);
        ragged(
            &mut corner_edge,
            nc,
            |c| 4 * c,
            parallel,
            |c, q| {
                let p = self.prev_corner(c);
                let v = fv[c];
                // The half of edge `e` at `v`; a degenerate edge gives its first
                // half to the corner leaving along it, its second to the one
                // arriving.
                let half = |e: u32, arriving: bool| -> u32 {
                    let [a, b] = edges[e as usize];
                    let j = if a == b { usize::from(arriving) } else { usize::from(a != v) };
                    halves[2 * e as usize + j]
                };
                q[0] = half(ce[c], false);
                q[1] = interior[c];
                q[2] = interior[p];
                q[3] = half(ce[p], true);
            },
        );
        let ptr: Vec<u32> = (0..=nc as u32).map(|i| 4 * i).collect();
        let topology = Topology::from_edges(nv + nf + ne, ptr, face_verts, child_edges, corner_edge, par)?;
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
            let fast = t.split_manifold(par);
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
