//! Uniform topology refinement into quads (Mlakar et al. 2020, Eq. 12 and
//! Alg. 3): every corner of every face becomes one child quad.
//!
//! # Vertex order of the child level
//! `|v|` updated vertices (in parent order), then `|f|` face points (in face
//! order), then `|e|` edge points (in edge-id order; edges are numbered by
//! `(lo, hi)`, see [`Topology`](subla_mesh::Topology)).
//!
//! # Face order of the child level
//! Face after face, and within a face corner after corner: the child of
//! corner `c` (vertex `v₀`, next vertex `vₙ`, previous vertex `vₚ`) is
//! `(v₀, e(v₀,vₙ), f, e(vₚ,v₀))` — the vertex, the edge point of its outgoing
//! edge, the face point, the edge point of its incoming edge — which keeps
//! the parent's orientation. Children of holes are holes.

use rayon::prelude::*;
use subla_algebra::Par;
use subla_mesh::{Mesh, MeshBuilder, Options, Result, Topology};

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

/// The refined mesh of one uniform quad-refinement step, carrying holes and
/// options; sharpness is left for the scheme to set (`crease` / `corner`
/// calls on the returned builder).
pub fn refine_builder(mesh: &Mesh, par: Par) -> MeshBuilder {
    let t = mesh.topology();
    let nverts = t.num_vertices() + t.num_faces() + t.num_edges();
    let faces = child_faces(mesh, par);
    let nchild = faces.len() / 4;
    let ptr: Vec<u32> = (0..=nchild as u32).map(|i| 4 * i).collect();
    let mut b = MeshBuilder::new(nverts, ptr, faces).options(mesh.options());
    if mesh.has_holes() {
        for f in 0..t.num_faces() {
            if mesh.holes()[f] {
                for c in t.face_ptr()[f]..t.face_ptr()[f + 1] {
                    b = b.hole(c);
                }
            }
        }
    }
    b
}

/// One uniform refinement step without sharpness (bilinear refinement).
///
/// # Errors
/// Sizes over `u32`.
pub fn refine_plain(mesh: &Mesh, par: Par) -> Result<Mesh> {
    let opts: Options = mesh.options();
    refine_builder(mesh, par).options(opts).build(par)
}

/// The child topology of one uniform quad-refinement step and the hole
/// flags of the child faces.
///
/// # Errors
/// Sizes over `u32`.
pub fn refine_topology(mesh: &Mesh, par: Par) -> Result<(Topology, Vec<bool>)> {
    let t = mesh.topology();
    let nverts = t.num_vertices() + t.num_faces() + t.num_edges();
    let faces = child_faces(mesh, par);
    let nchild = faces.len() / 4;
    let ptr: Vec<u32> = (0..=nchild as u32).map(|i| 4 * i).collect();
    let topology = Topology::build(nverts, ptr, faces, par)?;
    let mut holes = vec![false; nchild];
    if mesh.has_holes() {
        for f in 0..t.num_faces() {
            if mesh.holes()[f] {
                holes[t.face_ptr()[f] as usize..t.face_ptr()[f + 1] as usize].fill(true);
            }
        }
    }
    Ok((topology, holes))
}
