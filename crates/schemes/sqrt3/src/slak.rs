//! √3 with specialised kernels (the "SLAK" path of Mlakar et al. 2020,
//! §4, applied to Appendix A): face points, trisection points and smoothed
//! vertices as gathers over the parent topology — every output row written
//! once, by one task, so results are deterministic — and the child faces
//! by one invocation per parent corner.

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::{CsrMat, Par};

use subla_algebra::mem::Zeroable;
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{assemble_rows, axpy, eval_levels, for_rows, load, real};
use subla_scheme::{Faces, FinestFaces, LevelMeshes, Plan, Refiner, Result, SchemeError};

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
/// let y = eval(&plan, x.view(), Par::Rayon);
/// assert_eq!((y.nrows(), plan.faces(2).unwrap().num_faces()), (20, 36));
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

/// A built √3 refinement: the stencil data of every step, the meshes of
/// the levels below the finest (eval reads them), and the faces of the
/// finest level, whose full mesh [`Plan::refined`] derives on first use.
///
/// Where the level just below the finest is the split of a closed mesh, it
/// is kept in lean form ([`Sqrt3Child`]): eval and the finest faces read it
/// through its parent, and its full mesh is derived on the first call that
/// needs it ([`Plan::refined`], [`Plan::faces`], [`Plan::operator`],
/// [`StepView::of`]).
#[derive(Clone, Debug)]
pub struct Sqrt3Plan {
    /// Levels `0..L` (level 0 alone when `L = 0`), the last possibly lean.
    stored: LevelMeshes<Sqrt3Child>,
    steps: Vec<Step>,
    /// Level `L` when `L ≥ 1`: its faces, its full mesh derived on demand.
    finest: Option<FinestFaces>,
    first_step: u32,
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
    /// Step `level → level+1` of `plan`, or `None` past the last (or if a
    /// lean parent's full mesh could not be derived).
    pub fn of(plan: &Sqrt3Plan, level: u32) -> Option<StepView<'_>> {
        let step = plan.steps.get(level as usize)?;
        Some(StepView {
            parent: plan.stored.mesh(level)?,
            splits_boundary: step.kobbelt,
            new_ptr: &step.off,
            boundary_corner: if step.kobbelt { &step.bcorner } else { &[] },
            boundary_neighbors: &step.bnbr,
            alpha: &step.alpha,
        })
    }
}

impl Sqrt3Plan {
    /// The plan of `levels` steps over the prepared mesh `base`, whose first
    /// step has the global index `first_step`.
    pub(crate) fn over(base: Mesh, levels: u32, first_step: u32, par: Par) -> Result<Sqrt3Plan> {
        let mut meshes = Vec::with_capacity(levels as usize + 1);
        let mut steps = Vec::with_capacity(levels as usize);
        meshes.push(base);
        let mut finest = None;
        for l in 0..levels {
            let t = meshes[l as usize].topology();
            let step = Step::new(t, is_kobbelt_step(first_step + l), par)?;
            if l + 2 == levels
                && let Some(child) = t.sqrt3_child(par)?
            {
                // The split of a closed mesh: keep it lean.
                let (lean_step, faces) = lean_level(t, &child, is_kobbelt_step(first_step + l + 1), par)?;
                steps.push(step);
                steps.push(lean_step);
                let stored = LevelMeshes::with_lean(meshes, child, lean_full);
                return Ok(Sqrt3Plan { stored, steps, finest: Some(faces), first_step });
            }
            if l + 1 < levels {
                let child = step.child_mesh(t, par)?;
                meshes.push(child);
            } else {
                let holes = vec![false; t.num_corners()];
                finest = Some(FinestFaces::uniform(step.child_len(), 3, step.child_faces(t, par)?, holes, par));
            }
            steps.push(step);
        }
        Ok(Sqrt3Plan { stored: LevelMeshes::new(meshes, lean_full), steps, finest, first_step })
    }

    /// The global index of this plan's first step: 0 for a plan from
    /// [`Refiner::build`]; for a plan from [`Refiner::step`], the previous
    /// plan's first step plus its levels. Step `k` (0-based) is a
    /// boundary-splitting step when `k` is odd.
    pub fn first_step(&self) -> u32 {
        self.first_step
    }

    /// Whether step `level → level + 1` splits boundary edges in three
    /// (Kobbelt's even steps), or `None` past the last step.
    pub fn splits_boundary(&self, level: u32) -> Option<bool> {
        self.steps.get(level as usize).map(|s| s.kobbelt)
    }

    /// The level kept in lean form (the one below the finest, where it is
    /// the split of a closed mesh), if any: its connectivity is derived
    /// only when asked for.
    pub fn lean_level(&self) -> Option<u32> {
        self.stored.lean_level()
    }
}

/// The step over the lean child `child` of `t`, and the faces of the level
/// above it.
fn lean_level(t: &Topology, child: &Sqrt3Child, kobbelt: bool, par: Par) -> Result<(Step, FinestFaces)> {
    let step = Step::lean(t, child, kobbelt, par)?;
    let faces = child.split_faces(t, par);
    let holes = vec![false; faces.len() / 3];
    let finest = FinestFaces::uniform(step.child_len(), 3, faces, holes, par);
    Ok((step, finest))
}

/// The full mesh of the lean child of the closed `parent`: its plain split
/// (which finds the twins again: they cost little next to the rest).
fn lean_full(parent: &Mesh, _child: Sqrt3Child, par: Par) -> Result<Mesh> {
    plain_mesh(parent.topology().split_sqrt3(par)?)
}

impl Refiner for Sqrt3Slak {
    type Input = Mesh;
    type Plan = Sqrt3Plan;
    fn name(&self) -> &'static str {
        "sqrt3-slak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<Sqrt3Plan> {
        Sqrt3Plan::over(prepare(input)?, levels, 0, par)
    }
    fn step(&self, mut plan: Sqrt3Plan, par: Par) -> Result<Sqrt3Plan> {
        let first = plan.first_step + plan.steps.len() as u32;
        let finest = match plan.finest.take() {
            None => return Sqrt3Plan::over(plan.stored.into_mesh(0, par)?, 1, first, par),
            Some(f) => f.into_full(),
        };
        if let Some(mesh) = finest {
            drop(plan);
            return Sqrt3Plan::over(mesh, 1, first, par);
        }
        let last = plan.levels().checked_sub(1).ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        // The step above the finest level's parent, then the parent itself;
        // the rest is dropped first.
        let Sqrt3Plan { stored, mut steps, .. } = plan;
        let step = steps.swap_remove(last as usize);
        drop(steps);
        let parent = stored.into_mesh(last, par)?;
        let t = parent.topology();
        if let Some(child) = t.sqrt3_child(par)? {
            // The new plan's level 0 is the split of a closed mesh: lean.
            let (lean_step, faces) = lean_level(t, &child, is_kobbelt_step(first), par)?;
            drop(step);
            return Ok(Sqrt3Plan {
                stored: LevelMeshes::lean_over(parent, child, lean_full),
                steps: vec![lean_step],
                finest: Some(faces),
                first_step: first,
            });
        }
        let child = step.child_mesh(t, par)?;
        drop((parent, step));
        Sqrt3Plan::over(child, 1, first, par)
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

impl Sqrt3Plan {
    fn eval_generic<T: Float + Zeroable + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        // Every level below the finest is a full mesh or the lean level.
        eval_levels(self, "sqrt3", control, out, |l, x, y, d| match self.stored.full_meshes().get(l) {
            Some(m) => eval_level(m.topology(), &self.steps[l], x, y, d, par),
            None => {
                if let Some((parent, child)) = self.stored.lean() {
                    lean_eval(parent.topology(), child, &self.steps[l], x, y, d, par);
                }
            }
        });
    }

    /// The parent mesh and step of `level`, or the error saying why not.
    fn step_or_err(&self, level: u32) -> Result<(&Mesh, &Step)> {
        let step = self.steps.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        let mesh = self.stored.mesh(level).ok_or(SchemeError::Unsupported {
            scheme: "sqrt3",
            reason: format!("the connectivity of level {level} could not be derived"),
        })?;
        Ok((mesh, step))
    }
}

impl Plan for Sqrt3Plan {
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        if let Some(m) = self.stored.full_meshes().get(level as usize) {
            return m.num_vertices();
        }
        match self.stored.lean() {
            Some((_, child)) if self.stored.lean_level() == Some(level) => child.num_vertices(),
            _ if level == self.levels() => self.finest.as_ref().map_or(0, FinestFaces::num_vertices),
            _ => 0,
        }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let (mesh, step) = self.step_or_err(level)?;
        level_operator(mesh.topology(), step, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        let step = self.steps.get(level as usize)?;
        Some(step.operator_bound(self.stored.mesh(level)?.topology()))
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        if level < self.levels() || self.finest.is_none() {
            return self.stored.mesh(level);
        }
        let f = self.finest.as_ref().filter(|_| level == self.levels())?;
        let (parent, step) = (self.stored.mesh(level - 1)?, self.steps.last()?);
        f.full(|| step.child_mesh(parent.topology(), Par::Rayon).ok())
    }
    fn faces(&self, level: u32) -> Option<Faces<'_>> {
        match &self.finest {
            Some(f) if level == self.levels() => Some(f.faces()),
            _ => self.stored.mesh(level).map(Faces::of),
        }
    }
}
