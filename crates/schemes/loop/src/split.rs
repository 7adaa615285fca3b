//! The uniform 1-to-4 triangle split: the topology of one Loop step
//! (Mlakar et al. 2020, Appendix B, "Topology refinement"), built directly
//! from the parent's connectivity.
//!
//! # Vertex order of the child
//! `|v|` parent vertices (in parent order), then `|e|` edge points (in
//! edge-id order): edge point of edge `e` is child vertex `|v| + e`. Loop
//! has no face points.
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
//! parent's orientation. Children of holes are holes.
//!
//! # Edge order of the child
//! First the two halves of every parent edge, `(V_v, Ep_e)`, grouped by the
//! parent vertex `v` in the order of `v`'s incident edges (a degenerate
//! edge, listed once, gives its two halves in turn); then the three edges
//! of each middle triangle, `(Ep_a, Ep_b)`, ordered by `(min(a, b),
//! max(a, b))` and then by parent corner. For a manifold parent (in which
//! no two triangles share two edges) this is exactly the numbering that
//! [`Topology::build`] gives the child faces, a sort by `(lo, hi)`. A
//! degenerate parent edge keeps two separate halves, as OpenSubdiv does:
//! the corner leaving along it uses the first, the corner arriving the
//! second.
//!
//! # Cost
//! Child faces and corner edges are written per parent face in parallel
//! under [`Par::Rayon`]; the halves need one binary search per edge end;
//! the middle edges one counting sort by their lower end. Every other
//! relation (uses, incident edges, tags) is derived by
//! [`Topology::from_edges`] with counting sorts. Results do not depend on
//! the thread count.

use rayon::prelude::*;
use subla_algebra::Par;
use subla_algebra::par::{balanced_ranges, split_by_ptr};
use subla_mesh::topology::edge_tag;
use subla_mesh::{MeshError, Topology};
use subla_scheme::{Result, SchemeError};

/// The child of [`split_triangles`].
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

/// `Ok` if every face of `t` is a triangle.
///
/// # Errors
/// [`SchemeError::Unsupported`] naming the first face that is not (as
/// OpenSubdiv's Loop, which rejects such meshes).
pub fn check_triangles(t: &Topology) -> Result<()> {
    if t.is_triangle_only() {
        return Ok(());
    }
    let f = (0..t.num_faces()).find(|&f| t.face_order(f) != 3).unwrap_or(0);
    Err(SchemeError::Unsupported {
        scheme: "loop",
        reason: format!(
            "face {f} has {} vertices {:?}; Loop subdivision refines triangles only (OpenSubdiv's Loop rejects such meshes too)",
            t.face_order(f),
            t.face(f)
        ),
    })
}

fn too_large(what: &'static str, value: usize) -> SchemeError {
    SchemeError::Mesh(MeshError::TooLarge { what, value: value as u128 })
}

/// Checks the child counts of a split of `t` against `u32`.
fn check_sizes(t: &Topology) -> Result<()> {
    let (nv, ne, nf) = (t.num_vertices(), t.num_edges(), t.num_faces());
    for (what, n) in [
        ("number of refined vertices", nv + ne),
        ("number of refined corners", 12 * nf),
        ("number of refined edges", 2 * ne + 3 * nf),
    ] {
        if u32::try_from(n).is_err() {
            return Err(too_large(what, n));
        }
    }
    Ok(())
}

/// Whether work of `n` items should go parallel.
fn parallel(par: Par, n: usize) -> bool {
    par == Par::Rayon && n >= 1 << 13
}

/// The half of parent edge `e` at its end `v` (`arriving`: the corner
/// arrives at `v` along `e`; only a degenerate edge needs to know).
#[inline]
fn half(edges: &[[u32; 2]], halves: &[u32], e: u32, v: u32, arriving: bool) -> u32 {
    let [a, b] = edges[e as usize];
    let j = if a == b { usize::from(arriving) } else { usize::from(a != v) };
    halves[2 * e as usize + j]
}

/// The child faces of a triangle-only `t` (see the [module docs](self)),
/// as a flat `12 × faces` vertex list: for a finest level that only needs
/// its faces.
///
/// # Panics
/// If `t` has a face that is not a triangle (use [`check_triangles`]).
pub fn split_faces(t: &Topology, par: Par) -> Vec<u32> {
    assert!(t.is_triangle_only(), "split_faces: the topology has faces that are not triangles");
    let nv = t.num_vertices() as u32;
    let (fv, ce) = (t.face_verts(), t.corner_edges());
    let mut out = vec![0u32; 12 * t.num_faces()];
    let work = |(f, q): (usize, &mut [u32])| {
        let c = 3 * f;
        let (v0, v1, v2) = (fv[c], fv[c + 1], fv[c + 2]);
        let (e0, e1, e2) = (nv + ce[c], nv + ce[c + 1], nv + ce[c + 2]);
        q.copy_from_slice(&[v0, e0, e2, e0, v1, e1, e2, e1, v2, e1, e2, e0]);
    };
    if parallel(par, t.num_faces()) {
        out.par_chunks_mut(12).enumerate().with_min_len(1 << 11).for_each(work);
    } else {
        out.chunks_mut(12).enumerate().for_each(work);
    }
    out
}

/// Child edge id of each parent edge end: `halves[2e + j]` (see the
/// [module docs](self)).
fn halves_of(t: &Topology, par: Par) -> Vec<u32> {
    let ne = t.num_edges();
    let edges = t.edges();
    let degenerate = t.edge_tags().iter().any(|&g| g & edge_tag::DEGENERATE != 0);
    if !degenerate {
        // Incident edges are listed once each, in id order: the rank of `e`
        // among its end's edges is a binary search.
        let vep = t.vertex_edge_ptr();
        let id = |i: usize| -> u32 {
            let (e, v) = (i / 2, edges[i / 2][i % 2] as usize);
            vep[v] + t.vertex_edges(v).partition_point(|&x| (x as usize) < e) as u32
        };
        return if parallel(par, 2 * ne) {
            (0..2 * ne).into_par_iter().with_min_len(1 << 12).map(id).collect()
        } else {
            (0..2 * ne).map(id).collect()
        };
    }
    // A degenerate edge is listed once at its vertex but has two halves.
    let mut halves = vec![0u32; 2 * ne];
    let mut next = 0u32;
    for v in 0..t.num_vertices() {
        for &e in t.vertex_edges(v) {
            for (j, &end) in edges[e as usize].iter().enumerate() {
                if end as usize == v {
                    halves[2 * e as usize + j] = next;
                    next += 1;
                }
            }
        }
    }
    halves
}

/// Child edge id of the middle-triangle edge `(Ep(corner_edge[c]),
/// Ep(corner_edge[next(c)]))` of every parent corner `c`: `2|e| +` its rank
/// by `(lo, hi, c)`.
fn middle_edges(t: &Topology, par: Par) -> Vec<u32> {
    let (ne, nc) = (t.num_edges(), t.num_corners());
    let ce = t.corner_edges();
    let key = |c: usize| -> (u32, u32) {
        let (a, b) = (ce[c], ce[3 * (c / 3) + (c % 3 + 1) % 3]);
        (a.min(b), a.max(b))
    };
    // Counting sort by the lower edge, then a small sort inside each bucket.
    let mut ptr = vec![0u32; ne + 1];
    for c in 0..nc {
        ptr[key(c).0 as usize + 1] += 1;
    }
    for e in 0..ne {
        ptr[e + 1] += ptr[e];
    }
    let mut cursor = ptr.clone();
    let mut order = vec![(0u32, 0u32); nc];
    for c in 0..nc {
        let (lo, hi) = key(c);
        order[cursor[lo as usize] as usize] = (hi, c as u32);
        cursor[lo as usize] += 1;
    }
    drop(cursor);
    let ranges = balanced_ranges(&ptr, if parallel(par, nc) { par.blocks(nc, 1 << 13) } else { 1 });
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
    let mut middle = vec![0u32; nc];
    for (rank, &(_, c)) in order.iter().enumerate() {
        middle[c as usize] = (2 * ne + rank) as u32;
    }
    middle
}

/// The 1-to-4 split of a triangle-only topology, numbered as the
/// [module docs](self) say.
///
/// # Errors
/// [`SchemeError::Unsupported`] for a face that is not a triangle;
/// [`MeshError::TooLarge`] (as [`SchemeError::Mesh`]) if a child count does
/// not fit in `u32`.
pub fn split_triangles(t: &Topology, par: Par) -> Result<TriSplit> {
    check_triangles(t)?;
    check_sizes(t)?;
    let (nv, ne, nf) = (t.num_vertices(), t.num_edges(), t.num_faces());
    let edges = t.edges();
    let halves = halves_of(t, par);
    let middle = middle_edges(t, par);
    let mut child_edges = vec![[0u32; 2]; 2 * ne + 3 * nf];
    for (i, &h) in halves.iter().enumerate() {
        child_edges[h as usize] = [edges[i / 2][i % 2], (nv + i / 2) as u32];
    }
    let ce = t.corner_edges();
    for (c, &m) in middle.iter().enumerate() {
        let (a, b) = (ce[c], ce[3 * (c / 3) + (c % 3 + 1) % 3]);
        child_edges[m as usize] = [nv as u32 + a.min(b), nv as u32 + a.max(b)];
    }
    let face_verts = split_faces(t, par);
    let fv = t.face_verts();
    let mut corner_edge = vec![0u32; 12 * nf];
    let work = |(f, q): (usize, &mut [u32])| {
        let c = 3 * f;
        let (v0, v1, v2) = (fv[c], fv[c + 1], fv[c + 2]);
        let (e0, e1, e2) = (ce[c], ce[c + 1], ce[c + 2]);
        let (i0, i1, i2) = (middle[c], middle[c + 1], middle[c + 2]);
        let h = |e: u32, v: u32, arriving: bool| half(edges, &halves, e, v, arriving);
        q.copy_from_slice(&[
            h(e0, v0, false),
            i2,
            h(e2, v0, true),
            h(e0, v1, true),
            h(e1, v1, false),
            i0,
            i1,
            h(e1, v2, true),
            h(e2, v2, false),
            i1,
            i2,
            i0,
        ]);
    };
    if parallel(par, nf) {
        corner_edge.par_chunks_mut(12).enumerate().with_min_len(1 << 11).for_each(work);
    } else {
        corner_edge.chunks_mut(12).enumerate().for_each(work);
    }
    let face_ptr: Vec<u32> = (0..=4 * nf as u32).map(|i| 3 * i).collect();
    let topology = Topology::from_edges(nv + ne, face_ptr, face_verts, child_edges, corner_edge, par)?;
    Ok(TriSplit { topology, halves })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_triangle_splits_into_four() {
        let t = Topology::build(3, vec![0, 3], vec![0, 1, 2], Par::Seq).unwrap();
        let s = split_triangles(&t, Par::Seq).unwrap();
        // Edges (0,1)=0, (0,2)=1, (1,2)=2: edge points 3, 4, 5.
        assert_eq!(s.topology.face_verts(), &[0, 3, 4, 3, 1, 5, 4, 5, 2, 5, 4, 3]);
        assert_eq!(s.topology.num_edges(), 9);
        let rebuilt =
            Topology::build(6, s.topology.face_ptr().to_vec(), s.topology.face_verts().to_vec(), Par::Seq).unwrap();
        assert_eq!(rebuilt, s.topology);
    }

    #[test]
    fn quads_are_refused_by_name() {
        let t = Topology::build(5, vec![0, 3, 7], vec![0, 1, 2, 1, 3, 4, 2], Par::Seq).unwrap();
        let e = split_triangles(&t, Par::Seq).unwrap_err().to_string();
        assert!(e.contains("face 1 has 4 vertices"), "{e}");
    }
}
