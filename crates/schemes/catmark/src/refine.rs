//! Uniform topology refinement into quads (Mlakar et al. 2020, Eq. 12 and
//! Alg. 3): every corner of every face becomes one child quad.
//!
//! # Vertex order of the child level
//! `|v|` updated vertices (in parent order), then `|f|` face points (in face
//! order), then `|e|` edge points (in edge-id order; edges are numbered by
//! `(lo, hi)`, see [`Topology`]).
//!
//! # Face order of the child level
//! Face after face, and within a face corner after corner: the child of
//! corner `c` (vertex `v₀`, next vertex `vₙ`, previous vertex `vₚ`) is
//! `(v₀, e(v₀,vₙ), f, e(vₚ,v₀))` — the vertex, the edge point of its outgoing
//! edge, the face point, the edge point of its incoming edge — which keeps
//! the parent's orientation. Children of holes are holes.

use rayon::prelude::*;
use subla_algebra::Par;
use subla_mesh::{Mesh, Result, Topology};

/// Child face of every corner, in the order documented in the
/// [module docs](self), as a flat `4 × corners` vertex list.
pub fn child_faces(mesh: &Mesh, par: Par) -> Vec<u32> {
    let t = mesh.topology();
    let nv = t.num_vertices() as u32;
    let nf = t.num_faces() as u32;
    let base_e = nv + nf;
    let fv = t.face_verts();
    let cf = t.corner_faces();
    let ce = t.corner_edges();
    let mut out = vec![0u32; 4 * t.num_corners()];
    let child = |(c, q): (usize, &mut [u32])| {
        let p = t.prev_corner(c);
        q[0] = fv[c];
        q[1] = base_e + ce[c];
        q[2] = nv + cf[c];
        q[3] = base_e + ce[p];
    };
    if par == Par::Rayon && t.num_corners() > 1 << 14 {
        out.par_chunks_mut(4).enumerate().with_min_len(1 << 12).for_each(child);
    } else {
        out.chunks_mut(4).enumerate().for_each(child);
    }
    out
}

/// One uniform refinement step without sharpness (bilinear refinement):
/// the child topology of [`refine_topology_direct`], with holes and options.
///
/// # Errors
/// Sizes over `u32`.
pub fn refine_plain(mesh: &Mesh, par: Par) -> Result<Mesh> {
    let r = refine_topology_direct(mesh, par)?;
    let (ne, nv) = (r.topology.num_edges(), r.topology.num_vertices());
    Mesh::from_parts(r.topology, vec![0.0; ne], vec![0.0; nv], r.holes, mesh.options())
}

/// A refined level from [`refine_topology_direct`].
#[derive(Clone, Debug)]
pub struct RefinedTopology {
    /// The child connectivity.
    pub topology: Topology,
    /// Hole flag of each child face.
    pub holes: Vec<bool>,
    /// The two child edges of each parent edge `e`: `halves[2e + j]` joins
    /// the edge point of `e` to the child of `e`'s endpoint `j`.
    pub halves: Vec<u32>,
}

/// The child topology of one uniform quad-refinement step built directly
/// from the parent's connectivity (Alg. 3 / Alg. 7 and OpenSubdiv's
/// refinement tables): no sorting, no search.
///
/// Child edges follow the parent structure — two halves per parent edge
/// (`(Ep_e, V_a)`, `(Ep_e, V_b)`) and one per parent corner
/// (`(Fp_f, Ep_e)`) — and are numbered as a sort by `(lo, hi)` would number
/// them (ties in that order), so that manifold meshes get exactly the
/// numbering of [`Topology::build`] on the child faces. A degenerate parent
/// edge (a vertex to itself) keeps two separate halves, as OpenSubdiv does:
/// the corner leaving along it uses the first, the corner arriving the
/// second.
///
/// Returns the child topology, the hole flags of the child faces, and the
/// two halves of every parent edge.
///
/// # Errors
/// Sizes over `u32`.
pub fn refine_topology_direct(mesh: &Mesh, par: Par) -> Result<RefinedTopology> {
    use std::sync::atomic::{AtomicU32, Ordering};

    use subla_algebra::par::{balanced_ranges, split_by_ptr};

    let t = mesh.topology();
    let (nv, nf, ne, nc) = (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners());
    let base_f = nv as u32;
    let base_e = (nv + nf) as u32;
    let parallel = par == Par::Rayon && nc > 1 << 14;
    let edges = t.edges();
    let degenerate = |e: u32| edges[e as usize][0] == edges[e as usize][1];
    // Block A: halves of parent edges, grouped by their parent-vertex end
    // (lo = V_v), in the order of the vertex's incident edges.
    let mut a_ptr = Vec::with_capacity(nv + 1);
    a_ptr.push(0u32);
    let mut acc = 0u32;
    for v in 0..nv {
        for &e in t.vertex_edges(v) {
            acc += if degenerate(e) { 2 } else { 1 };
        }
        a_ptr.push(acc);
    }
    let n_a = acc as usize; // = 2 ne (a degenerate edge is listed once, counts 2)
    let half_id: Vec<AtomicU32> = (0..2 * ne).map(|_| AtomicU32::new(u32::MAX)).collect();
    let mut child_edges = vec![[0u32; 2]; n_a + nc];
    {
        let ranges = balanced_ranges(&a_ptr, par.blocks(n_a + nv, 1 << 13));
        let pieces = split_by_ptr(&mut child_edges[..n_a], &a_ptr, &ranges);
        let work = |(r, out): (std::ops::Range<usize>, &mut [[u32; 2]])| {
            let base = a_ptr[r.start] as usize;
            for v in r {
                let mut k = a_ptr[v] as usize;
                for &e in t.vertex_edges(v) {
                    let ends = edges[e as usize];
                    for j in 0..2 {
                        if ends[j] as usize == v {
                            half_id[2 * e as usize + j].store(k as u32, Ordering::Relaxed);
                            out[k - base] = [v as u32, base_e + e];
                            k += 1;
                        }
                    }
                }
            }
        };
        if parallel {
            ranges.into_par_iter().zip(pieces).for_each(work);
        } else {
            ranges.into_iter().zip(pieces).for_each(work);
        }
    }
    let half_id: Vec<u32> = half_id.into_iter().map(AtomicU32::into_inner).collect();
    // Block B: one edge per parent corner, (Fp_f, Ep_e), per face in edge
    // order.
    let fptr = t.face_ptr();
    let ce = t.corner_edges();
    let mut interior = vec![0u32; nc];
    {
        let ranges = balanced_ranges(fptr, par.blocks(nc + nf, 1 << 13));
        let e_pieces = split_by_ptr(&mut child_edges[n_a..], fptr, &ranges);
        let i_pieces = split_by_ptr(&mut interior, fptr, &ranges);
        type Piece<'a> = ((std::ops::Range<usize>, &'a mut [[u32; 2]]), &'a mut [u32]);
        let work = |((r, out), ids): Piece<'_>| {
            let base = fptr[r.start] as usize;
            let mut order: Vec<u32> = Vec::new();
            for f in r {
                let (s, e) = (fptr[f] as usize, fptr[f + 1] as usize);
                order.clear();
                order.extend(s as u32..e as u32);
                order.sort_unstable_by_key(|&c| (ce[c as usize], c));
                for (rank, &c) in order.iter().enumerate() {
                    let slot = s + rank - base;
                    out[slot] = [base_f + f as u32, base_e + ce[c as usize]];
                    ids[c as usize - base] = (n_a + s + rank) as u32;
                }
            }
        };
        if parallel {
            ranges.into_par_iter().zip(e_pieces).zip(i_pieces).for_each(work);
        } else {
            ranges.into_iter().zip(e_pieces).zip(i_pieces).for_each(work);
        }
    }
    // Child faces and their corner edges: the quad of parent corner c is
    // (V_v, Ep_out, Fp, Ep_in).
    let faces = child_faces(mesh, par);
    let fv = t.face_verts();
    let mut corner_edge = vec![0u32; 4 * nc];
    let fill = |(c, q): (usize, &mut [u32])| {
        let p = t.prev_corner(c);
        let v = fv[c];
        // The half of edge `e` at `v`; a degenerate edge gives its first half
        // to the corner leaving along it and its second to the one arriving.
        let half = |e: u32, arriving: bool| -> u32 {
            let [a, b] = edges[e as usize];
            let j = if a == b { usize::from(arriving) } else { usize::from(a != v) };
            half_id[2 * e as usize + j]
        };
        q[0] = half(ce[c], false);
        q[1] = interior[c];
        q[2] = interior[p];
        q[3] = half(ce[p], true);
    };
    if parallel {
        corner_edge.par_chunks_mut(4).enumerate().with_min_len(1 << 12).for_each(fill);
    } else {
        corner_edge.chunks_mut(4).enumerate().for_each(fill);
    }
    let ptr: Vec<u32> = (0..=nc as u32).map(|i| 4 * i).collect();
    let topology = Topology::from_edges(nv + nf + ne, ptr, faces, child_edges, corner_edge, par)?;
    let mut holes = vec![false; nc];
    if mesh.has_holes() {
        for f in 0..nf {
            if mesh.holes()[f] {
                holes[fptr[f] as usize..fptr[f + 1] as usize].fill(true);
            }
        }
    }
    Ok(RefinedTopology { topology, holes, halves: half_id })
}
