//! Uniform topology refinement into quads (Mlakar et al. 2020, Eq. 12 and
//! Alg. 3): every corner of every face becomes one child quad. The vertex,
//! face and edge orders of the child are those of
//! [`Topology::split_quads`](subla_mesh::Topology::split_quads) (see
//! [`subla_mesh::split_quad`]): parent vertices, then face points, then edge
//! points; child faces corner after corner, the child of corner `c` being
//! `(v₀, e(v₀,vₙ), f, e(vₚ,v₀))`. Children of holes are holes.

use subla_algebra::Par;
use subla_mesh::{Mesh, Result, Topology};

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
/// refinement tables): [`Topology::split_quads`], whose docs give the
/// numbering, plus the hole flags of the child faces (children of holes are
/// holes).
///
/// # Errors
/// Sizes over `u32`.
pub fn refine_topology_direct(mesh: &Mesh, par: Par) -> Result<RefinedTopology> {
    let t = mesh.topology();
    let split = t.split_quads(par)?;
    let mut holes = vec![false; t.num_corners()];
    if mesh.has_holes() {
        let fptr = t.face_ptr();
        for (f, &hole) in mesh.holes().iter().enumerate() {
            if hole {
                holes[fptr[f] as usize..fptr[f + 1] as usize].fill(true);
            }
        }
    }
    Ok(RefinedTopology { topology: split.topology, holes, halves: split.halves })
}
