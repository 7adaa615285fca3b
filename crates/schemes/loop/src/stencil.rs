//! The stencils of Loop's masks on a child known through its parent
//! ([`TriChild`], the numbering of a 1-to-4 split that the mesh crate
//! gives): the neighbours of each child vertex and the ends and opposite
//! vertices of each child edge, computed on the fly from the parent's
//! connectivity, in the order the child's own connectivity would give them
//! (so the lean kernels add the same terms in the same order as the full
//! ones). They are what Loop's vertex and edge masks read; another
//! triangle scheme on the same split reads other relations.
//!
//! Every method takes the parent topology the child was made from (`t`);
//! given another topology, its results are meaningless (and it may panic on
//! an index out of range).

use subla_mesh::split::{half_vertex, next3, prev3, sort_small};
use subla_mesh::{Topology, TriChild};

/// Loop's stencils on the lean child of a 1-to-4 split (see the
/// [module docs](self)).
pub trait ChildStencils {
    /// The neighbours of child vertex `v` (a parent vertex, `v <
    /// t.num_vertices()`), in the order of the child's incident edges: the
    /// edge points of `v`'s parent edges, in their order.
    fn parent_vertex_neighbors<'a>(&self, t: &'a Topology, v: usize) -> impl Iterator<Item = u32> + 'a;

    /// The neighbours of the edge point of parent edge `e` (child vertex
    /// `t.num_vertices() + e`), in the order of the child's incident edges
    /// (by edge id), and their count: the edge's two ends, then per use the
    /// edge points of the use's other two edges.
    fn edge_point_neighbors(&self, t: &Topology, e: usize) -> ([u32; 6], usize);

    /// The ends of child edge `k` (as the child's `edges()[k]`), and the
    /// vertices opposite it in its (one or two) child triangles, in the
    /// order of the edge's uses (the child's `edge_corners(k)`), with their
    /// count.
    fn edge_stencil(&self, t: &Topology, k: usize) -> ([u32; 2], [u32; 2], usize);

    /// [`ChildStencils::edge_stencil`] of half `k` of parent vertex `v`: `k` in
    /// `t.vertex_edge_ptr()[v]..t.vertex_edge_ptr()[v + 1]`, the child edge
    /// from `v` to the edge point of its `k`-th incident edge.
    fn half_stencil(&self, t: &Topology, v: usize, k: usize) -> ([u32; 2], [u32; 2], usize);

    /// [`ChildStencils::edge_stencil`] of middle edge `m` (child edge
    /// `2|e| + m`): between the edge points of its owner corner's edge and
    /// the next, used by the corner triangle of the vertex between those
    /// edges and by the middle triangle, in that order.
    fn middle_stencil(&self, t: &Topology, m: usize) -> ([u32; 2], [u32; 2], usize);
}

impl ChildStencils for TriChild {
    #[inline]
    fn parent_vertex_neighbors<'a>(&self, t: &'a Topology, v: usize) -> impl Iterator<Item = u32> + 'a {
        let nv = t.num_vertices() as u32;
        t.vertex_edges(v).iter().map(move |&e| nv + e)
    }

    #[inline]
    fn edge_point_neighbors(&self, t: &Topology, e: usize) -> ([u32; 6], usize) {
        let nv = t.num_vertices() as u32;
        let (ce, [a, b]) = (t.corner_edges(), t.edge(e));
        let mut pairs = [(0u32, 0u32); 6];
        pairs[0] = (self.halves()[2 * e], a);
        pairs[1] = (self.halves()[2 * e + 1], b);
        let mut n = 2;
        for &c in t.edge_corners(e).iter().take(2) {
            let c = c as usize;
            let p = prev3(c);
            pairs[n] = (self.middle()[c], nv + ce[next3(c)]);
            pairs[n + 1] = (self.middle()[p], nv + ce[p]);
            n += 2;
        }
        // By edge id (unique): at most six entries.
        sort_small(&mut pairs[..n]);
        let mut out = [0u32; 6];
        for (o, p) in out.iter_mut().zip(&pairs[..n]) {
            *o = p.1;
        }
        (out, n)
    }

    fn edge_stencil(&self, t: &Topology, k: usize) -> ([u32; 2], [u32; 2], usize) {
        let n_a = self.halves().len();
        if k < n_a { self.half_stencil(t, half_vertex(t, k) as usize, k) } else { self.middle_stencil(t, k - n_a) }
    }

    #[inline]
    fn half_stencil(&self, t: &Topology, v: usize, k: usize) -> ([u32; 2], [u32; 2], usize) {
        let nv = t.num_vertices() as u32;
        let e = t.vertex_edges_all()[k] as usize;
        let (fv, ce) = (t.face_verts(), t.corner_edges());
        let mut out = [0u32; 2];
        let mut n = 0;
        // One use per triangle, in corner order (so their child corners are
        // in order too). In the child triangle at `v`, the vertex opposite
        // the half is the edge point of the face's other edge at `v`: the
        // edge before a corner leaving `v`, the edge after one arriving.
        for &c in t.edge_corners(e).iter().take(2) {
            let c = c as usize;
            let other = if fv[c] as usize == v { ce[prev3(c)] } else { ce[next3(c)] };
            out[n] = nv + other;
            n += 1;
        }
        ([v as u32, nv + e as u32], out, n)
    }

    #[inline]
    fn middle_stencil(&self, t: &Topology, m: usize) -> ([u32; 2], [u32; 2], usize) {
        let nv = t.num_vertices() as u32;
        let c = self.owner()[m] as usize;
        let (fv, ce) = (t.face_verts(), t.corner_edges());
        let (a, b) = (ce[c], ce[next3(c)]);
        ([nv + a.min(b), nv + a.max(b)], [fv[next3(c)], nv + ce[prev3(c)]], 2)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use subla_algebra::Par;
    use subla_mesh::proptest_support::{any_mesh, fan_triangles, torus};
    use subla_mesh::split::shares_two_edges;

    use super::*;

    /// Every relation the stencils compute equals the full child's.
    fn check(t: &Topology) {
        let full = t.split_triangles(Par::Seq).expect("split").topology;
        for par in [Par::Seq, Par::Rayon] {
            let lean = t.tri_child(par).expect("sizes").expect("direct split");
            for v in 0..t.num_vertices() {
                let got: Vec<u32> = lean.parent_vertex_neighbors(t, v).collect();
                assert_eq!(got, full.vertex_neighbors(v).collect::<Vec<_>>(), "vertex {v}");
            }
            for e in 0..t.num_edges() {
                let (got, n) = lean.edge_point_neighbors(t, e);
                let v = t.num_vertices() + e;
                assert_eq!(&got[..n], full.vertex_neighbors(v).collect::<Vec<_>>(), "edge point {e}");
            }
            let (fv, edges) = (full.face_verts(), full.edges());
            for (k, &want_ends) in edges.iter().enumerate() {
                let (ends, got, n) = lean.edge_stencil(t, k);
                assert_eq!(ends, want_ends, "child edge {k}");
                let want: Vec<u32> = full.edge_corners(k).iter().map(|&c| fv[prev3(c as usize)]).collect();
                assert_eq!(&got[..n], want, "child edge {k}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn stencils_match_the_full_child(data in any_mesh()) {
            let t = fan_triangles(data.mesh.topology());
            prop_assume!(t.is_manifold() && !shares_two_edges(&t, false));
            check(&t);
        }
    }

    #[test]
    fn stencils_of_a_large_child_match() {
        let t = fan_triangles(torus(60, 50, 7).mesh.topology());
        check(&t.split_triangles(Par::Rayon).expect("split").topology);
    }
}
