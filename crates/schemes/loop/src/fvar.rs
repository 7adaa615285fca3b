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
use subla_mesh::{FVarLinearInterpolation, FaceVarying, Mesh};
use subla_scheme::Result;
pub use subla_scheme::fvar::FVarPlan;
use subla_scheme::fvar::{BaseLevel, CornerSource, FVarLevel, LevelRows, SplitMap, owners};
use subla_scheme::kernel::{Stencil, assemble_rows};

use crate::level::{Rules, Step, child_holes, child_mesh, masks, prepare};
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
    let m0 = prepare(mesh, Rules::OpenSubdiv)?;
    let BaseLevel { level, source } = FVarLevel::base(&m0, indices, num_values, mode)?;
    let mut flevels = vec![level];
    let mut meshes = vec![m0];
    let mut operators = Vec::with_capacity(levels as usize);
    for l in 0..levels as usize {
        let parent = &meshes[l];
        let split = parent.topology().split_triangles(par)?;
        let child = child_mesh(parent, split.topology, child_holes(parent)?, Some(&split.halves))?;
        let pt = parent.topology();
        let ce = pt.corner_edges();
        // Child faces 4f..4f+3: (v0, E0, E2), (E0, v1, E1), (E2, E1, v2),
        // (E1, E2, E0), E_k leaving corner k.
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
        let source_of = |cc: usize| -> CornerSource {
            let (vertex, k) = FROM[cc % 12];
            let c = (3 * (cc / 12) + k) as u32;
            if vertex { CornerSource::Vertex(c) } else { CornerSource::Edge(ce[c as usize], c) }
        };
        let map = SplitMap {
            first_face_point: None,
            first_edge_point: pt.num_vertices(),
            halves: &split.halves,
            source: &source_of,
        };
        let fparent = &flevels[l];
        let fchild = fparent.child(parent, &child, &map)?;
        let step = (mode != FVarLinearInterpolation::All).then(|| masks(parent, par));
        let rows = TriRows {
            base: LevelRows {
                parent,
                child: &child,
                fp: fparent,
                fc: &fchild,
                halves: &split.halves,
                source: (l == 0).then_some(&source[..]),
            },
            step: step.as_ref(),
        };
        let owner = owners(&fchild);
        let ncols = if l == 0 { num_values } else { fparent.num_values() };
        operators.push(assemble_rows(fchild.num_values(), ncols, par, |row, s| rows.row(&owner, row, s))?);
        flevels.push(fchild);
        meshes.push(child);
    }
    FVarPlan::from_parts("loop face-varying", mode, num_values, flevels, meshes, operators)
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

/// The rows of one triangle level.
struct TriRows<'a> {
    base: LevelRows<'a>,
    /// Loop's masks; `None` where the values are linear.
    step: Option<&'a Step>,
}

impl TriRows<'_> {
    /// The stencil of child value `row`.
    fn row(&self, owner: &[u32], row: usize, s: &mut Stencil) {
        let nv = self.base.parent.topology().num_vertices();
        let cv = owner[row] as usize;
        let sibling = row as u32 - self.base.fc.value_ptr[cv];
        let linear = self.step.is_none();
        if cv < nv {
            if !self.base.vertex_default(s, cv, sibling, row, linear) {
                self.vertex_mask(cv, s);
            }
        } else if !self.base.edge_default(s, cv - nv, sibling as usize, row, linear) {
            self.edge_mask(cv - nv, s);
        }
    }

    /// Loop's mask of continuous edge `e` over its values.
    fn edge_mask(&self, e: usize, s: &mut Stencil) {
        let t = self.base.parent.topology();
        let Some(step) = self.step else { return };
        let (alpha, beta) = step
            .edges
            .binary_search_by_key(&(e as u32), |m| m.edge)
            .ok()
            .map_or((EDGE_END, EDGE_OPPOSITE), |i| (step.edges[i].alpha, step.edges[i].beta));
        let [a, b] = self.base.fp.edge_values(t, e, 0);
        self.base.push(s, a, alpha);
        self.base.push(s, b, alpha);
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                let c = c as usize;
                let opposite = 3 * (c / 3) + (c % 3 + 2) % 3;
                self.base.push(s, self.base.fp.corner_values[opposite], beta);
            }
        }
    }

    /// Loop's mask of vertex `v` over its one (matching) value.
    fn vertex_mask(&self, v: usize, s: &mut Stencil) {
        let t = self.base.parent.topology();
        let Some(step) = self.step else { return };
        let pval = self.base.fp.values_of(v).start;
        let special = step.vertices.binary_search_by_key(&(v as u32), |m| m.vertex).ok().map(|i| step.vertices[i]);
        let (cv, cn) = match special {
            Some(m) => {
                if m.ce != 0.0 {
                    for end in [m.ua, m.ub] {
                        self.base.push(s, self.base.end_value(v, end, pval), m.ce);
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
                self.base.push(s, self.base.fp.neighbor_value(t, e as usize, v), cn);
            }
        }
        self.base.push(s, pval, cv);
    }
}
