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
use subla_mesh::{FVarLinearInterpolation, FaceVarying, Mesh};
use subla_scheme::Result;
pub use subla_scheme::fvar::FVarPlan;
use subla_scheme::fvar::{BaseLevel, CornerSource, FVarLevel, LevelRows, SplitMap, owners};
use subla_scheme::kernel::{Stencil, assemble_rows};

use crate::level::{Step, child_mesh, masks, prepare};
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
    let m0 = prepare(mesh)?;
    let BaseLevel { level, source } = FVarLevel::base(&m0, indices, num_values, mode)?;
    let mut flevels = vec![level];
    let mut meshes = vec![m0];
    let mut operators = Vec::with_capacity(levels as usize);
    for l in 0..levels as usize {
        let parent = &meshes[l];
        let r = refine_topology_direct(parent, par)?;
        let child = child_mesh(parent, r.topology, r.holes, Some(&r.halves))?;
        let pt = parent.topology();
        let (nv, nf) = (pt.num_vertices(), pt.num_faces());
        let ce = pt.corner_edges();
        let source_of = |cc: usize| -> CornerSource {
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
        };
        let split =
            SplitMap { first_face_point: Some(nv), first_edge_point: nv + nf, halves: &r.halves, source: &source_of };
        let fparent = &flevels[l];
        let fchild = fparent.child(parent, &child, &split)?;
        let step = match scheme {
            QuadScheme::Catmark if mode != FVarLinearInterpolation::All => Some(masks(parent, par)),
            _ => None,
        };
        let rows = QuadRows {
            base: LevelRows {
                parent,
                child: &child,
                fp: fparent,
                fc: &fchild,
                halves: &r.halves,
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
    let name = match scheme {
        QuadScheme::Catmark => "catmark face-varying",
        QuadScheme::Bilinear => "bilinear face-varying",
    };
    FVarPlan::from_parts(name, mode, num_values, flevels, meshes, operators)
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

/// The rows of one quad level.
struct QuadRows<'a> {
    base: LevelRows<'a>,
    /// Catmull-Clark's masks; `None` where the values are linear.
    step: Option<&'a Step>,
}

impl QuadRows<'_> {
    /// The values of parent face `f`, each with weight `w / order`.
    fn face(&self, s: &mut Stencil, f: usize, w: f64) {
        let t = self.base.parent.topology();
        let r = t.face_ptr()[f] as usize..t.face_ptr()[f + 1] as usize;
        let wf = w / r.len() as f64;
        for c in r {
            self.base.push(s, self.base.fp.corner_values[c], wf);
        }
    }

    /// The stencil of child value `row`.
    fn row(&self, owner: &[u32], row: usize, s: &mut Stencil) {
        let t = self.base.parent.topology();
        let (nv, nf) = (t.num_vertices(), t.num_faces());
        let cv = owner[row] as usize;
        let sibling = row as u32 - self.base.fc.value_ptr[cv];
        let linear = self.step.is_none();
        if cv < nv {
            if !self.base.vertex_default(s, cv, sibling, row, linear) {
                self.vertex_mask(cv, s);
            }
        } else if cv < nv + nf {
            self.face(s, cv - nv, 1.0);
        } else {
            let e = cv - nv - nf;
            if !self.base.edge_default(s, e, sibling as usize, row, linear) {
                self.edge_mask(e, s);
            }
        }
    }

    /// Catmull-Clark's mask of continuous edge `e` over its values.
    fn edge_mask(&self, e: usize, s: &mut Stencil) {
        let t = self.base.parent.topology();
        let Some(step) = self.step else { return };
        let (alpha, beta) = step
            .edges
            .binary_search_by_key(&(e as u32), |m| m.edge)
            .ok()
            .map_or((0.25, 0.25), |i| (step.edges[i].alpha, step.edges[i].beta));
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                self.face(s, t.corner_faces()[c as usize] as usize, beta);
            }
        }
        let [a, b] = self.base.fp.edge_values(t, e, 0);
        self.base.push(s, a, alpha);
        self.base.push(s, b, alpha);
    }

    /// Catmull-Clark's mask of vertex `v` over its one (matching) value.
    fn vertex_mask(&self, v: usize, s: &mut Stencil) {
        let t = self.base.parent.topology();
        let Some(step) = self.step else { return };
        let pval = self.base.fp.values_of(v).start;
        let n = t.valence(v);
        let special = step.vertices.binary_search_by_key(&(v as u32), |m| m.vertex).ok().map(|i| step.vertices[i]);
        let (cv, cs, ce) = match special {
            Some(m) => (m.cv, m.cs, m.ce),
            None => (if n > 0 { (n as f64 - 2.0) / n as f64 } else { 1.0 }, 1.0, 0.0),
        };
        if cs != 0.0 && n > 0 {
            let w = cs / (n * n) as f64;
            for &c in t.vertex_corners(v) {
                self.face(s, t.corner_faces()[c as usize] as usize, w);
            }
            for &e in t.vertex_edges(v) {
                self.base.push(s, self.base.fp.neighbor_value(t, e as usize, v), w);
            }
        }
        if let Some(m) = special
            && ce != 0.0
        {
            for end in [m.ua, m.ub] {
                self.base.push(s, self.base.end_value(v, end, pval), ce);
            }
        }
        self.base.push(s, pval, cv);
    }
}
