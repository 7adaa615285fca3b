//! Catmull-Clark with specialised kernels (the "SLAK" path of Mlakar et al.
//! 2020, §4): face points (Alg. 4), edge points and vertex points as
//! gathers over the topology — every output row written by one task, so
//! results are deterministic — followed by the overwrite pass for sharp
//! and boundary elements (§5.1, §5.3). Quad faces (every level after the
//! first) take the fixed-order-4 paths of §4.4.

use num_traits::Float;
use subla_algebra::mem::try_filled_vec;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{axpy, for_rows, load, real, specials_in};
use subla_scheme::refinement::ClosedForm;
use subla_scheme::{
    ChildPoint, Counts, FinestFaces, LevelCounts, LevelPlan, LevelRules, NoLean, Prediction, Refiner, Result,
};

use crate::level::{EdgeMask, Step, VertexMask, child_level, masks, prepare};
use crate::operator::{level_operator, level_operator_bound, level_operator_rows, limit_operator};
use crate::regular::regular_rows;

/// Catmull-Clark subdivision through the specialised kernels.
#[derive(Copy, Clone, Debug, Default)]
pub struct CatmarkSlak;

/// A built Catmull-Clark refinement (static mode: all levels): the level
/// stack of [`LevelPlan`] with Catmull-Clark's rules.
pub type CatmarkPlan = LevelPlan<CatmarkRules>;

/// Catmull-Clark's rules for [`LevelPlan`]: the masks, the quad split, the
/// kernels and the matrices of this crate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CatmarkRules;

impl LevelRules for CatmarkRules {
    type Step = Step;
    type Lean = NoLean;
    fn name(&self) -> &'static str {
        "catmark"
    }
    fn masks(&self, parent: &Mesh, _level: u32, par: Par) -> Result<Step> {
        Ok(masks(parent, par))
    }
    fn child(&self, parent: &Mesh, _step: &Step, par: Par) -> Result<Mesh> {
        child_level(parent, par)
    }
    fn child_faces(&self, parent: &Mesh, _step: &Step, par: Par) -> Result<FinestFaces> {
        finest_of(parent, par)
    }
    fn eval_level<T: Float + Send + Sync>(&self, t: &Topology, step: &Step, x: &[T], y: &mut [T], d: usize, par: Par) {
        eval_level(t, step, x, y, d, par);
    }
    fn operator(&self, t: &Topology, step: &Step, par: Par) -> Result<CsrMat<f64>> {
        level_operator(t, step, par)
    }
    fn operator_rows(&self, t: &Topology, step: &Step, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        level_operator_rows(t, step, rows, par)
    }
    fn operator_bound(&self, t: &Topology, _step: &Step) -> u64 {
        level_operator_bound(t)
    }
    fn child_counts(&self, p: &LevelCounts, _level: u32) -> Option<LevelCounts> {
        Some(quad_split_counts(p))
    }
    fn operator_bound_of_counts(&self, p: &LevelCounts, _level: u32) -> Option<u128> {
        // `level_operator_bound` summed: 3V + 2E + Σn² over the vertices,
        // C over the faces, 2E + Σn² over the edges.
        Some(3 * p.vertices + 4 * p.edges + p.corners + 2 * p.order_squares)
    }
    fn child_point(&self, parent: Counts, _step: &Step, row: usize) -> Option<ChildPoint> {
        ChildPoint::of_quad_split(parent.vertices, parent.faces, parent.edges, row)
    }
    fn closed_form<'a>(&self, meshes: &'a [Mesh], par: Par) -> Result<Option<Box<dyn ClosedForm + 'a>>> {
        Ok(regular_rows(meshes, par)?.map(|r| Box::new(r) as Box<dyn ClosedForm>))
    }
    fn limit(&self, finest: &Mesh, par: Par) -> Result<CsrMat<f64>> {
        limit_operator(finest, par)
    }
}

/// The faces of the level above `parent`.
pub(crate) fn finest_of(parent: &Mesh, par: Par) -> Result<FinestFaces> {
    let t = parent.topology();
    let nc = t.num_corners();
    let mut holes = try_filled_vec(nc, false, "the hole flags of the finest faces")?;
    if parent.has_holes() {
        let fptr = t.face_ptr();
        for (f, &hole) in parent.holes().iter().enumerate() {
            if hole {
                holes[fptr[f] as usize..fptr[f + 1] as usize].fill(true);
            }
        }
    }
    Ok(FinestFaces::uniform(t.num_vertices() + t.num_faces() + t.num_edges(), 4, t.split_faces(par)?, holes))
}

/// One step `l → l+1` of a [`CatmarkPlan`] as other backends read it: the
/// parent level (full connectivity, effective sharpness) and the masks that
/// differ from the smooth ones, sorted by element. Every other vertex point
/// is the smooth mask, every other edge point `¼ (a + b + f₁ + f₂)`, every
/// face point the centroid.
#[derive(Copy, Clone, Debug)]
pub struct StepView<'a> {
    /// The parent level.
    pub parent: &'a Mesh,
    /// Special edge masks, by edge.
    pub edge_masks: &'a [EdgeMask],
    /// Special vertex masks, by vertex.
    pub vertex_masks: &'a [VertexMask],
}

impl StepView<'_> {
    /// Step `level → level+1` of `plan`.
    ///
    /// # Errors
    /// [`subla_scheme::SchemeError::NoSuchLevel`] past the last step.
    pub fn of(plan: &CatmarkPlan, level: u32, par: Par) -> Result<StepView<'_>> {
        let (parent, step) = plan.step(level, par)?;
        Ok(StepView { parent, edge_masks: &step.edges, vertex_masks: &step.vertices })
    }
}

impl StepView<'_> {
    /// The special masks of one Catmull-Clark step of any prepared level
    /// `parent` (effective sharpness, as [`subla_scheme::sdc::prepare_sharpness`]
    /// makes it), without building a plan: what a sparse refinement needs for
    /// the part of a level it refines. The masks of an edge or vertex depend
    /// only on its own neighbourhood in `parent`.
    pub fn of_level(parent: &Mesh, par: Par) -> OwnedStep<'_> {
        OwnedStep { parent, step: crate::level::masks(parent, par) }
    }
}

/// The masks of one step of a level, owned (see [`StepView::of_level`]).
#[derive(Clone, Debug)]
pub struct OwnedStep<'a> {
    parent: &'a Mesh,
    step: Step,
}

impl OwnedStep<'_> {
    /// A view of the masks.
    pub fn view(&self) -> StepView<'_> {
        StepView { parent: self.parent, edge_masks: &self.step.edges, vertex_masks: &self.step.vertices }
    }
}

impl Refiner for CatmarkSlak {
    type Input = Mesh;
    type Plan = CatmarkPlan;
    fn name(&self) -> &'static str {
        "catmark-slak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<CatmarkPlan> {
        // Before the mesh is prepared: a build that would overflow costs nothing.
        subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)?;
        CatmarkPlan::from_prepared(CatmarkRules, prepare(input)?, 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: CatmarkPlan, par: Par) -> Result<CatmarkPlan> {
        plan.next(par)
    }
}

/// The counts after a quad split (one quad per corner) of a level of
/// counts `p`: Catmull-Clark's and bilinear's.
pub(crate) fn quad_split_counts(p: &LevelCounts) -> LevelCounts {
    LevelCounts::quads(p.vertices + p.edges + p.faces, 2 * p.edges + p.corners, p.corners, 2 * p.boundary_edges)
}

/// One level of eval: `x` (parent rows) → `y` (child rows), row length `d`.
/// The kernels keep a fixed number of channels (1 to 4) in registers; wider
/// rows are done four channels at a time.
pub(crate) fn eval_level<T: Float + Send + Sync>(t: &Topology, step: &Step, x: &[T], y: &mut [T], d: usize, par: Par) {
    subla_scheme::channel_groups!(d, off, D => eval_level_impl::<T, D>(t, step, x, y, d, off, par));
}

#[allow(clippy::too_many_arguments)]
fn eval_level_impl<T: Float + Send + Sync, const D: usize>(
    t: &Topology,
    step: &Step,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let (yv, rest) = y.split_at_mut(nv * stride);
    let (yf, ye) = rest.split_at_mut(nf * stride);
    let quads = t.is_quad_only();
    let fptr = t.face_ptr();
    let fverts = t.face_verts();
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    // Face points (Alg. 4; fixed order 4 for quad meshes, §4.4).
    for_rows(yf, nf, stride, par, |r, out| {
        let quarter = real::<T>(0.25);
        for (row, f) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            if quads {
                for &v in &fverts[4 * f..4 * f + 4] {
                    axpy(&mut acc, quarter, gx(v));
                }
            } else {
                let vs = &fverts[fptr[f] as usize..fptr[f + 1] as usize];
                let w = T::one() / real::<T>(vs.len() as f64);
                for &v in vs {
                    axpy(&mut acc, w, gx(v));
                }
            }
            put(row, acc);
        }
    });
    let yf: &[T] = yf;
    let gf = |f: usize| load::<T, D>(yf, f, stride, off);
    // Edge points: default mask, then the special ones.
    let cf = t.corner_faces();
    let face_of = |c: u32| if quads { c as usize >> 2 } else { cf[c as usize] as usize };
    for_rows(ye, ne, stride, par, |r, out| {
        let quarter = real::<T>(0.25);
        let specials = specials_in(&step.edges, &r, |m: &EdgeMask| m.edge);
        let mut next_special = 0;
        for (row, e) in out.chunks_exact_mut(stride).zip(r) {
            let [a, b] = t.edge(e);
            let corners = t.edge_corners(e);
            let (alpha, beta) = if next_special < specials.len() && specials[next_special].edge as usize == e {
                let m = specials[next_special];
                next_special += 1;
                (real::<T>(m.alpha), real::<T>(m.beta))
            } else {
                (quarter, quarter)
            };
            let mut acc = [T::zero(); D];
            if beta != T::zero() {
                for &c in corners {
                    axpy(&mut acc, beta, gf(face_of(c)));
                }
            }
            axpy(&mut acc, alpha, gx(a));
            axpy(&mut acc, alpha, gx(b));
            put(row, acc);
        }
    });
    // Vertex points: smooth mask (faces, then edges, then the vertex), and
    // the special masks.
    for_rows(yv, nv, stride, par, |r, out| {
        let specials = specials_in(&step.vertices, &r, |m: &VertexMask| m.vertex);
        let mut next_special = 0;
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let special = if next_special < specials.len() && specials[next_special].vertex as usize == v {
                next_special += 1;
                Some(specials[next_special - 1])
            } else {
                None
            };
            let mut acc = [T::zero(); D];
            if special.is_none() && quads {
                // An interior manifold vertex of a quad mesh (vertices that
                // are not take the special masks): its neighbours are the
                // next corners of its corners, one per incident edge.
                let corners = t.vertex_corners(v);
                let n = corners.len();
                let w = real::<T>(1.0 / (n * n) as f64);
                for &c in corners {
                    let c = c as usize;
                    axpy(&mut acc, w, gf(c >> 2));
                    axpy(&mut acc, w, gx(fverts[(c & !3) | ((c + 1) & 3)]));
                }
                axpy(&mut acc, real::<T>((n as f64 - 2.0) / n as f64), gx(v as u32));
                put(row, acc);
                continue;
            }
            let n = t.valence(v);
            let (cv, cs, ce) = match special {
                Some(m) => (m.cv, m.cs, m.ce),
                None => (if n > 0 { (n as f64 - 2.0) / n as f64 } else { 1.0 }, 1.0, 0.0),
            };
            if cs != 0.0 && n > 0 {
                let w = real::<T>(cs / (n * n) as f64);
                for &c in t.vertex_corners(v) {
                    axpy(&mut acc, w, gf(cf[c as usize] as usize));
                }
                for u in t.vertex_neighbors(v) {
                    axpy(&mut acc, w, gx(u));
                }
            }
            if let Some(m) = special {
                if ce != 0.0 {
                    let w = real::<T>(ce);
                    axpy(&mut acc, w, gx(m.ua));
                    axpy(&mut acc, w, gx(m.ub));
                }
            }
            axpy(&mut acc, real::<T>(cv), gx(v as u32));
            put(row, acc);
        }
    });
}
