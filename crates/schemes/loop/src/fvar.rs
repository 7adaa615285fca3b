//! Face-varying data (texture coordinates, any per-corner data) refined by
//! Loop subdivision with OpenSubdiv's rules
//! (`Far::PrimvarRefiner::InterpolateFaceVarying`).
//!
//! [`build`] refines the vertex topology level by level with the 1-to-4
//! split (child face `4f + k` as [`subla_mesh::split_tri`] numbers them, so
//! the plan's faces are the vertex plans' faces) and carries the channel's
//! values along with the tags of [`subla_scheme::fvar`]:
//! * an edge point's value: where the edge is continuous, Loop's mask of
//!   the edge (its sharpness included) applied to the values seen from its
//!   triangles (the ends and the opposite corners); on a seam, one value
//!   per triangle, the midpoint of that triangle's values;
//! * a vertex's value: where the value's neighbourhood matches the
//!   vertex's, Loop's vertex mask; else a corner is kept, a crease refined
//!   by `¾ v + ⅛ (a + b)` along its span, a semi-sharp value blended
//!   between the two while its features decay.
//!
//! In `All` mode values are refined linearly (midpoints, vertices kept).

use subla_algebra::Par;
use subla_mesh::{FVarLinearInterpolation, FaceVarying, Mesh, Topology};
use subla_scheme::Result;
use subla_scheme::fvar::{CornerSource, FVarRules, FVarSplit, LevelRows};
pub use subla_scheme::fvar::{FVarPlan, ValueMesh};
use subla_scheme::kernel::Stencil;

use crate::level::{Rules, Step, child_holes, child_mesh, masks, prepare};
use crate::operator::{edge_mask, opposite_corner, vertex_mask};
use crate::rules::{EDGE_END, EDGE_OPPOSITE};

/// Refines the channel whose corner `c` takes row `indices[c]` of a table
/// of `num_values` values over the triangle mesh `mesh`, `levels` times,
/// with `mode`'s rules for seams and boundaries (the mesh's own
/// `fvar_boundary` option is not read: pass it as `mode` to honour the
/// file's tag).
///
/// # Errors
/// [`subla_scheme::SchemeError::NotTriangles`] for a face that is not a
/// triangle; [`subla_mesh::MeshError::DataLength`] (in
/// [`subla_scheme::SchemeError::Mesh`]) when `indices` has not one entry
/// per corner or one is out of range; the errors of the vertex refinement.
pub fn build(
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    levels: u32,
    mode: FVarLinearInterpolation,
    par: Par,
) -> Result<FVarPlan> {
    subla_scheme::fvar::build(&LoopFVar, mesh, indices, num_values, levels, mode, par)
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
    par: Par,
) -> Result<FaceVarying> {
    build(mesh, &fv.indices, fv.values.nrows(), levels, mode, par)?.refine(fv.values.view(), par)
}

/// The 1-to-4 split and Loop's masks (OpenSubdiv's rules).
struct LoopFVar;

/// Child faces `4f .. 4f+3`: `(v0, E0, E2)`, `(E0, v1, E1)`, `(E2, E1, v2)`,
/// `(E1, E2, E0)`, `E_k` leaving corner `k`: whether each child corner is a
/// vertex's child, and the parent corner `k` it comes from.
const FROM: [(bool, usize); 12] = [
    (true, 0),
    (false, 0),
    (false, 2),
    (false, 0),
    (true, 1),
    (false, 1),
    (false, 2),
    (false, 1),
    (true, 2),
    (false, 1),
    (false, 2),
    (false, 0),
];

impl FVarRules for LoopFVar {
    type Masks = Step;

    fn name(&self) -> &'static str {
        "loop face-varying"
    }

    fn prepare(&self, mesh: &Mesh) -> Result<Mesh> {
        prepare(mesh, Rules::OpenSubdiv)
    }

    fn split(&self, parent: &Mesh, par: Par) -> Result<FVarSplit> {
        let split = parent.topology().split_triangles(par)?;
        let child = child_mesh(parent, split.topology, child_holes(parent)?, Some(&split.halves))?;
        Ok(FVarSplit { child, halves: split.halves, first_face_point: None, first_edge_point: parent.num_vertices() })
    }

    fn corner_source(&self, pt: &Topology, cc: usize) -> CornerSource {
        let (vertex, k) = FROM[cc % 12];
        let c = (3 * (cc / 12) + k) as u32;
        if vertex { CornerSource::Vertex(c) } else { CornerSource::Edge(pt.corner_edges()[c as usize], c) }
    }

    fn masks(&self, parent: &Mesh, mode: FVarLinearInterpolation, par: Par) -> Option<Step> {
        (mode != FVarLinearInterpolation::All).then(|| masks(parent, par))
    }

    /// Loop's edge mask over the values seen from the edge's triangles:
    /// the ends and the opposite corners.
    fn edge_mask(&self, rows: &LevelRows<'_>, step: &Step, e: usize, s: &mut Stencil) {
        let t = rows.parent.topology();
        let (alpha, beta) = edge_mask(step, e).map_or((EDGE_END, EDGE_OPPOSITE), |m| (m.alpha, m.beta));
        let [a, b] = rows.fp.edge_values(t, e, 0);
        rows.push(s, a, alpha);
        rows.push(s, b, alpha);
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                rows.push(s, rows.fp.corner_values[opposite_corner(c) as usize], beta);
            }
        }
    }

    /// Loop's vertex mask over the values around the vertex.
    fn vertex_mask(&self, rows: &LevelRows<'_>, step: &Step, v: usize, s: &mut Stencil) {
        let t = rows.parent.topology();
        let pval = rows.fp.values_of(v).start;
        let (cv, cn) = match vertex_mask(step, v) {
            Some(m) => {
                if m.ce != 0.0 {
                    for value in rows.end_values(v, m.ua, m.ub, pval) {
                        rows.push(s, value, m.ce);
                    }
                }
                (m.cv, m.cn)
            }
            None => {
                let [w, e] = step.smooth[t.valence(v)];
                (w, e)
            }
        };
        if cn != 0.0 {
            for &e in t.vertex_edges(v) {
                rows.push(s, rows.fp.neighbor_value(t, e as usize, v), cn);
            }
        }
        rows.push(s, pval, cv);
    }
}

/// The value mesh of a channel with the tags that make Loop refinement of
/// it (any of the vertex plans, the mapped-algebra [`crate::LoopLak`]
/// included) the channel's face-varying refinement, in every mode (in `All`
/// mode every edge and value is infinitely sharp, and Loop's refinement is
/// then linear): the algebra formulation of [`build`].
/// See [`subla_scheme::fvar::value_mesh_of`] for the tags.
///
/// # Errors
/// As [`build`].
pub fn value_mesh(mesh: &Mesh, indices: &[u32], num_values: usize, mode: FVarLinearInterpolation) -> Result<ValueMesh> {
    subla_scheme::fvar::value_mesh_of(&LoopFVar.prepare(mesh)?, indices, num_values, mode)
}

/// The channel refined as its tagged value mesh ([`value_mesh`]) by Loop's
/// kernels ([`crate::LoopSlak`], whose faces are numbered as this module's
/// split numbers them), or `None` where the value mesh
/// only approximates the channel's rules (values sharpened by a semi-sharp
/// sibling, values at non-manifold vertices: use [`build`]). Its corners
/// follow the faces of the vertex plans in order, and its values equal
/// [`build`]'s to rounding; it builds at the speed of the vertex plan.
///
/// # Errors
/// As [`build`].
pub fn value_mesh_refinement(
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    levels: u32,
    mode: FVarLinearInterpolation,
    par: Par,
) -> Result<Option<subla_scheme::fvar::ValueMeshRefinement>> {
    use subla_scheme::Refiner;
    let vm = value_mesh(mesh, indices, num_values, mode)?;
    if vm.approximate > 0 {
        return Ok(None);
    }
    let plan = crate::LoopSlak::new().build(&vm.mesh, levels, par)?;
    Ok(Some(subla_scheme::fvar::ValueMeshRefinement::new(&vm, Box::new(plan), num_values)?))
}
