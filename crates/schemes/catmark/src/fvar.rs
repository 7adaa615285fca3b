//! Face-varying data (texture coordinates, any per-corner data) refined by
//! Catmull-Clark or bilinear subdivision with OpenSubdiv's rules
//! (`Far::PrimvarRefiner::InterpolateFaceVarying`).
//!
//! [`build`] refines the vertex topology level by level, as the
//! kernels do (the quad split's numbering: child face `c` is the child of
//! parent corner `c`, so the plan's faces are the vertex plans' faces), and
//! carries the channel's values along with the tags of
//! [`subla_scheme::fvar`]. Each level's values are a sparse matrix of the
//! level above, as for vertex data:
//! * a face point's value averages its face's corner values;
//! * an edge point's value: where the edge is continuous, the vertex
//!   mask of the edge (its sharpness included) applied to the values seen
//!   from its faces; on a seam, one value per face, the midpoint of that
//!   face's values;
//! * a vertex's value: where the value's neighbourhood matches the
//!   vertex's, the vertex mask; else a corner is kept, a crease refined by
//!   `¾ v + ⅛ (a + b)` along its span, a semi-sharp value blended between
//!   the two while its features decay.
//!
//! In `All` mode, and for the bilinear scheme, values are refined linearly.
//! The result is a [`FVarPlan`], a [`subla_scheme::Plan`] whose `eval`
//! refines a table of values and whose `operator(l)` is `R_l` of the
//! channel.

use subla_algebra::Par;
use subla_mesh::{FVarLinearInterpolation, FaceVarying, Mesh, Topology};
use subla_scheme::Result;
use subla_scheme::fvar::{CornerSource, FVarRules, FVarSplit, LevelRows};
pub use subla_scheme::fvar::{FVarPlan, ValueMesh};
use subla_scheme::kernel::Stencil;

use crate::level::{Step, child_mesh, masks, prepare};
use crate::operator::{edge_weights, vertex_weights};
use crate::refine::refine_topology_direct;

/// Which quad scheme's rules refine the values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuadScheme {
    /// Catmull-Clark (smooth, with the mode's seams and boundaries).
    Catmark,
    /// Bilinear (every value linear, whatever the mode).
    Bilinear,
}

/// Refines the channel whose corner `c` takes row `indices[c]` of a table
/// of `num_values` values over `mesh`, `levels` times, with `mode`'s rules
/// for seams and boundaries (the mesh's own `fvar_boundary` option is not
/// read: pass it as `mode` to honour the file's tag).
///
/// # Errors
/// [`subla_mesh::MeshError::DataLength`] (in
/// [`subla_scheme::SchemeError::Mesh`]) when `indices` has not one entry
/// per corner or one is out of range; the errors of the vertex refinement
/// (sizes over `u32`, memory).
pub fn build(
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    levels: u32,
    mode: FVarLinearInterpolation,
    scheme: QuadScheme,
    par: Par,
) -> Result<FVarPlan> {
    subla_scheme::fvar::build(&scheme, mesh, indices, num_values, levels, mode, par)
}

/// [`build`], then the values: the channel `fv` over the finest level.
///
/// # Errors
/// As [`build`].
pub fn refine_channel(
    mesh: &Mesh,
    fv: &FaceVarying,
    levels: u32,
    mode: FVarLinearInterpolation,
    scheme: QuadScheme,
    par: Par,
) -> Result<FaceVarying> {
    build(mesh, &fv.indices, fv.values.nrows(), levels, mode, scheme, par)?.refine(fv.values.view(), par)
}

/// The quad split (child face `c` the child of parent corner `c`,
/// `(v, E_out, F, E_in)`) and Catmull-Clark's masks, or none for bilinear.
impl FVarRules for QuadScheme {
    type Masks = Step;

    fn name(&self) -> &'static str {
        match self {
            QuadScheme::Catmark => "catmark face-varying",
            QuadScheme::Bilinear => "bilinear face-varying",
        }
    }

    fn prepare(&self, mesh: &Mesh) -> Result<Mesh> {
        prepare(mesh)
    }

    fn split(&self, parent: &Mesh, par: Par) -> Result<FVarSplit> {
        let r = refine_topology_direct(parent, par)?;
        let child = child_mesh(parent, r.topology, r.holes, Some(&r.halves))?;
        let (nv, nf) = (parent.num_vertices(), parent.num_faces());
        Ok(FVarSplit { child, halves: r.halves, first_face_point: Some(nv), first_edge_point: nv + nf })
    }

    fn corner_source(&self, pt: &Topology, cc: usize) -> CornerSource {
        let ce = pt.corner_edges();
        let c = (cc / 4) as u32;
        match cc % 4 {
            0 => CornerSource::Vertex(c),
            1 => CornerSource::Edge(ce[c as usize], c),
            2 => CornerSource::Face(pt.corner_faces()[c as usize]),
            _ => {
                let p = pt.prev_corner(c as usize) as u32;
                CornerSource::Edge(ce[p as usize], p)
            }
        }
    }

    fn masks(&self, parent: &Mesh, mode: FVarLinearInterpolation, par: Par) -> Option<Step> {
        (*self == QuadScheme::Catmark && mode != FVarLinearInterpolation::All).then(|| masks(parent, par))
    }

    /// Catmull-Clark's edge mask over the values seen from the edge's faces.
    fn edge_mask(&self, rows: &LevelRows<'_>, step: &Step, e: usize, s: &mut Stencil) {
        let t = rows.parent.topology();
        let (alpha, beta) = edge_weights(step, e);
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                rows.face_average(s, t.corner_faces()[c as usize] as usize, beta);
            }
        }
        let [a, b] = rows.fp.edge_values(t, e, 0);
        rows.push(s, a, alpha);
        rows.push(s, b, alpha);
    }

    /// Catmull-Clark's vertex mask over the values around the vertex.
    fn vertex_mask(&self, rows: &LevelRows<'_>, step: &Step, v: usize, s: &mut Stencil) {
        let t = rows.parent.topology();
        let pval = rows.fp.values_of(v).start;
        let n = t.valence(v);
        let (cv, cs, ce, special) = vertex_weights(step, v, n);
        if cs != 0.0 && n > 0 {
            let w = cs / (n * n) as f64;
            for &c in t.vertex_corners(v) {
                rows.face_average(s, t.corner_faces()[c as usize] as usize, w);
            }
            for &e in t.vertex_edges(v) {
                rows.push(s, rows.fp.neighbor_value(t, e as usize, v), w);
            }
        }
        if let Some(m) = special
            && ce != 0.0
        {
            for value in rows.end_values(v, m.ua, m.ub, pval) {
                rows.push(s, value, ce);
            }
        }
        rows.push(s, pval, cv);
    }
}

/// The value mesh of a channel with the tags that make Catmull-Clark
/// refinement of it (any of the vertex plans, the mapped-algebra
/// [`crate::CatmarkLak`] included) the channel's face-varying refinement,
/// and bilinear refinement of it the channel's in `All` mode and for
/// [`QuadScheme::Bilinear`]: the algebra formulation of [`build`]. See
/// [`subla_scheme::fvar::value_mesh_of`] for the tags.
///
/// # Errors
/// As [`build`].
pub fn value_mesh(mesh: &Mesh, indices: &[u32], num_values: usize, mode: FVarLinearInterpolation) -> Result<ValueMesh> {
    subla_scheme::fvar::value_mesh_of(&prepare(mesh)?, indices, num_values, mode)
}

/// The channel refined as its tagged value mesh ([`value_mesh`]) by the
/// edge-friend plan (Catmull-Clark; bilinear in `All` mode and for
/// [`QuadScheme::Bilinear`]), or `None` where the value mesh only
/// approximates the channel's rules (values sharpened by a semi-sharp
/// sibling, values at non-manifold vertices: use [`build`]). Its corners
/// follow the faces of the vertex plans in order, and its values equal
/// [`build`]'s to rounding; it builds at the speed of the edge-friend
/// vertex plan.
///
/// # Errors
/// As [`build`].
pub fn value_mesh_refinement(
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    levels: u32,
    mode: FVarLinearInterpolation,
    scheme: QuadScheme,
    par: Par,
) -> Result<Option<subla_scheme::fvar::ValueMeshRefinement>> {
    use subla_scheme::Refiner;
    let vm = value_mesh(mesh, indices, num_values, mode)?;
    let linear = scheme == QuadScheme::Bilinear || mode == FVarLinearInterpolation::All;
    if vm.approximate > 0 && !linear {
        return Ok(None);
    }
    let plan: Box<dyn subla_scheme::Plan> = if linear {
        Box::new(crate::Bilinear.build(&vm.mesh, levels, par)?)
    } else {
        Box::new(crate::CatmarkEdgeFriend::new().build(&vm.mesh, levels, par)?)
    };
    Ok(Some(subla_scheme::fvar::ValueMeshRefinement::new(&vm, plan, num_values)?))
}
