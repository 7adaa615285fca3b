//! √3 with specialised kernels (the "SLAK" path of Mlakar et al. 2020,
//! §4, applied to Appendix A): face points, trisection points and smoothed
//! vertices as gathers over the parent topology — every output row written
//! once, by one task, so results are deterministic — and the child faces
//! by one invocation per parent corner.

use num_traits::Float;
use subla_algebra::mem::try_filled_vec;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{assemble_rows, axpy, for_rows, load, real};
use subla_scheme::{
    ChildPoint, Counts, FinestFaces, LeanLevel, LevelCounts, LevelPlan, LevelRules, Prediction, Refiner, Result,
};

use crate::lean::lean_eval;
use crate::level::{Step, is_kobbelt_step, plain_mesh, prepare};
use crate::split::{Sqrt3Child, Sqrt3Split};

/// √3 subdivision through the specialised kernels, with Kobbelt's boundary
/// rule as CGAL and OpenMesh apply it.
///
/// ```
/// use subla_algebra::Par;
/// use subla_scheme::{Plan, Refiner, eval};
/// use subla_sqrt3::Sqrt3Slak;
/// // A tetrahedron, refined twice: 4 + 4 + 12 vertices, 36 faces.
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = Sqrt3Slak::new().build(&mesh, 2, Par::Rayon)?;
/// let y = eval(&plan, x.view(), Par::Rayon)?;
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.num_faces()), (20, 36));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sqrt3Slak;

impl Sqrt3Slak {
    /// The refiner.
    pub const fn new() -> Self {
        Sqrt3Slak
    }
}

/// A built √3 refinement: the level stack of [`LevelPlan`] with √3's rules
/// ([`Sqrt3Rules`]): the stencil data of every step, the meshes of the
/// levels below the finest (eval reads them), and the faces of the finest
/// level, whose full mesh [`subla_scheme::Plan::refined`] derives on first use.
///
/// Where the level just below the finest is the split of a closed mesh, it
/// is kept in lean form ([`Sqrt3Child`]): eval and the finest faces read it
/// through its parent, and its full mesh is derived on the first call that
/// needs it ([`subla_scheme::Plan::refined`], [`subla_scheme::Plan::faces`], [`subla_scheme::Plan::operator`],
/// [`StepView::of`]).
///
/// Steps are counted from the control mesh of the first build
/// ([`subla_scheme::LevelPlan::first_level`]: 0 for a plan from [`Refiner::build`], the
/// previous plan's first level plus its levels for one from
/// [`Refiner::step`]); step `k` splits boundary edges when `k` is odd
/// ([`Step::splits_boundary`], through [`subla_scheme::LevelPlan::masks`]).
pub type Sqrt3Plan = LevelPlan<Sqrt3Rules>;

/// √3's rules for [`LevelPlan`]: the masks of each step (Kobbelt's
/// boundary rule on every second step), the split, the kernels and the
/// matrices of this crate, with lean kernels for the split of a closed
/// mesh ([`Sqrt3Child`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sqrt3Rules;

impl LevelRules for Sqrt3Rules {
    type Step = Step;
    type Lean = Sqrt3Child;
    fn name(&self) -> &'static str {
        "sqrt3"
    }
    fn masks(&self, parent: &Mesh, level: u32, par: Par) -> Result<Step> {
        Step::new(parent.topology(), is_kobbelt_step(level), par)
    }
    fn child(&self, parent: &Mesh, step: &Step, par: Par) -> Result<Mesh> {
        step.child_mesh(parent, par)
    }
    fn child_faces(&self, parent: &Mesh, step: &Step, par: Par) -> Result<FinestFaces> {
        let t = parent.topology();
        let holes = crate::level::child_holes(parent)?;
        Ok(FinestFaces::uniform(step.child_len(), 3, step.child_faces(t, par)?, holes))
    }
    fn eval_level<T: Float + Send + Sync>(&self, t: &Topology, step: &Step, x: &[T], y: &mut [T], d: usize, par: Par) {
        eval_level(t, step, x, y, d, par);
    }
    fn operator(&self, t: &Topology, step: &Step, par: Par) -> Result<CsrMat<f64>> {
        level_operator(t, step, par)
    }
    fn operator_bound(&self, t: &Topology, step: &Step) -> u64 {
        step.operator_bound(t)
    }
    fn child_counts(&self, p: &LevelCounts, level: u32) -> Option<LevelCounts> {
        Some(crate::level::child_counts(p, level))
    }
    fn operator_bound_of_counts(&self, p: &LevelCounts, level: u32) -> Option<u128> {
        // `Step::operator_bound` with valence.max(2) ≤ valence + 2.
        let new = crate::level::child_counts(p, level).vertices - p.vertices;
        Some(3 * p.vertices + 2 * p.edges + 3 * new)
    }
    fn child_point(&self, _parent: Counts, step: &Step, row: usize) -> Option<ChildPoint> {
        step.child_point(row)
    }
}

impl LeanLevel<Sqrt3Rules> for Sqrt3Child {
    fn lean(_: &Sqrt3Rules, parent: &Mesh, level: u32, par: Par) -> Result<Option<(Sqrt3Child, Step)>> {
        let t = parent.topology();
        // The lean kernels carry no hole flags: a mesh with holes keeps
        // its levels in full.
        if parent.has_holes() {
            return Ok(None);
        }
        let Some(child) = t.sqrt3_child(par)? else { return Ok(None) };
        // The split of a closed mesh: its step is the one above `level`.
        let step = Step::lean(t, &child, is_kobbelt_step(level + 1), par)?;
        Ok(Some((child, step)))
    }
    /// Its plain split (which finds the twins again: they cost little next
    /// to the rest).
    fn into_full(self, _: &Sqrt3Rules, parent: &Mesh, par: Par) -> Result<Mesh> {
        plain_mesh(parent.topology().split_sqrt3(par)?)
    }
    fn counts(&self) -> Counts {
        // A closed triangle mesh: three edges to every two faces.
        Counts { vertices: self.num_vertices(), faces: self.num_faces(), edges: 3 * self.num_faces() / 2 }
    }
    fn faces(&self, _: &Sqrt3Rules, parent: &Mesh, step: &Step, par: Par) -> Result<FinestFaces> {
        let faces = self.split_faces(parent.topology(), par)?;
        let holes = try_filled_vec(faces.len() / 3, false, "the hole flags of the finest faces")?;
        Ok(FinestFaces::uniform(step.child_len(), 3, faces, holes))
    }
    fn eval<T: Float + Send + Sync>(
        &self,
        _: &Sqrt3Rules,
        t: &Topology,
        step: &Step,
        x: &[T],
        y: &mut [T],
        d: usize,
        par: Par,
    ) {
        lean_eval(t, self, step, x, y, d, par);
    }
    fn operator_bound(&self, _: &Sqrt3Rules, step: &Step) -> Option<u64> {
        // Closed: each vertex row holds the vertex and its neighbours
        // (V + 2 E = V + 3 F), each new point three vertices.
        Some((self.num_vertices() + 3 * self.num_faces() + 3 * step.owner.len()) as u64)
    }
}

/// One step `l → l+1` of a [`Sqrt3Plan`] as other backends read it (the
/// rules are in the [crate docs](crate#rules)).
#[derive(Copy, Clone, Debug)]
pub struct StepView<'a> {
    /// The parent level (triangles, manifold).
    pub parent: &'a Mesh,
    /// Whether the step splits boundary edges in three (Kobbelt's even
    /// steps).
    pub splits_boundary: bool,
    /// The new vertices of parent face `f` are child vertices
    /// `nv + new_ptr[f] .. nv + new_ptr[f + 1]` (`nv` parent vertices): one
    /// face point, or on a splitting step for a boundary face the two
    /// trisection points of its boundary edge, the one next to the edge's
    /// first vertex first.
    pub new_ptr: &'a [u32],
    /// On a splitting step, the corner of each face whose outgoing edge is
    /// its boundary edge, `u32::MAX` for interior faces; empty otherwise.
    pub boundary_corner: &'a [u32],
    /// The two boundary neighbours of each boundary vertex,
    /// `[u32::MAX; 2]` for interior vertices.
    pub boundary_neighbors: &'a [[u32; 2]],
    /// `α(n)` ([`crate::alpha`]) by valence `n`.
    pub alpha: &'a [f64],
}

impl StepView<'_> {
    /// Step `level → level+1` of `plan` (a lean parent's full mesh is
    /// derived with `par` on first use).
    ///
    /// # Errors
    /// [`subla_scheme::SchemeError::NoSuchLevel`] past the last step; the
    /// derivation's errors.
    pub fn of(plan: &Sqrt3Plan, level: u32, par: Par) -> Result<StepView<'_>> {
        let (parent, step) = plan.step(level, par)?;
        Ok(StepView {
            parent,
            splits_boundary: step.kobbelt,
            new_ptr: &step.off,
            boundary_corner: if step.kobbelt { &step.bcorner } else { &[] },
            boundary_neighbors: &step.bnbr,
            alpha: &step.alpha,
        })
    }
}

impl Refiner for Sqrt3Slak {
    type Input = Mesh;
    type Plan = Sqrt3Plan;
    fn name(&self) -> &'static str {
        "sqrt3-slak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<Sqrt3Plan> {
        subla_scheme::predict(&Sqrt3Rules, input.topology(), 0, levels)?;
        Sqrt3Plan::from_prepared(Sqrt3Rules, prepare(input)?, 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&Sqrt3Rules, input.topology(), 0, levels)
    }
    fn step(&self, plan: Sqrt3Plan, par: Par) -> Result<Sqrt3Plan> {
        plan.next(par)
    }
}

/// One level of eval: `x` (parent rows) → `y` (child rows), row length `d`.
/// The kernels keep a fixed number of channels (1 to 4) in registers; wider
/// rows are done four channels at a time. Each row sums the terms of
/// [`Step::stencil`] from zero in the stencil's order, so eval and the
/// operator agree term for term.
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
    let nv = step.nv;
    let (yv, yn) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    // Parent vertices: smoothed, kept or Kobbelt's boundary rule.
    for_rows(yv, nv, stride, par, |r, out| {
        let mut s = Vec::with_capacity(8);
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            let n = t.valence(v);
            if step.bnbr[v][0] == crate::level::NONE && n > 0 {
                let a = step.alpha[n];
                let w = real::<T>(a / n as f64);
                for u in t.vertex_neighbors(v) {
                    axpy(&mut acc, w, gx(u));
                }
                axpy(&mut acc, real::<T>(1.0 - a), gx(v as u32));
            } else {
                s.clear();
                step.stencil(t, v, &mut s);
                for &(u, w) in &s {
                    axpy(&mut acc, real::<T>(w), gx(u));
                }
            }
            put(row, acc);
        }
    });
    // New vertices: face points, or trisection points.
    let fv = t.face_verts();
    let third = real::<T>(1.0 / 3.0);
    for_rows(yn, step.owner.len(), stride, par, |r, out| {
        let mut s = Vec::with_capacity(4);
        for (row, j) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            let f = step.owner[j] as usize;
            if step.off[f + 1] - step.off[f] == 1 {
                for &u in &fv[3 * f..3 * f + 3] {
                    axpy(&mut acc, third, gx(u));
                }
            } else {
                s.clear();
                step.stencil(t, nv + j, &mut s);
                for &(u, w) in &s {
                    axpy(&mut acc, real::<T>(w), gx(u));
                }
            }
            put(row, acc);
        }
    });
}

/// The matrix `R` of one step (§6.3): row `i` holds the stencil eval applies
/// to child vertex `i`, merged by column.
pub(crate) fn level_operator(t: &Topology, step: &Step, par: Par) -> Result<CsrMat<f64>> {
    assemble_rows(step.child_len(), t.num_vertices(), par, |i, s| step.stencil(t, i, s))
}
