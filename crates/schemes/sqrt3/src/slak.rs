//! √3 with specialised kernels (the "SLAK" path of Mlakar et al. 2020,
//! §4, applied to Appendix A): face points, trisection points and smoothed
//! vertices as gathers over the parent topology — every output row written
//! once, by one task, so results are deterministic — and the child faces
//! by one invocation per parent corner.

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{assemble_rows, axpy, eval_levels, for_rows, load, real};
use subla_scheme::{Faces, FinestFaces, Plan, Refiner, Result, SchemeError};

use crate::level::{Step, is_kobbelt_step, prepare};

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
#[derive(Clone, Debug)]
pub struct Sqrt3Plan {
    /// Meshes of levels `0..L` (level 0 alone when `L = 0`).
    meshes: Vec<Mesh>,
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
    /// Step `level → level+1` of `plan`, or `None` past the last.
    pub fn of(plan: &Sqrt3Plan, level: u32) -> Option<StepView<'_>> {
        let step = plan.steps.get(level as usize)?;
        Some(StepView {
            parent: &plan.meshes[level as usize],
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
            if l + 1 < levels {
                let child = step.child_mesh(t, par)?;
                meshes.push(child);
            } else {
                let holes = vec![false; t.num_corners()];
                finest = Some(FinestFaces::uniform(step.child_len(), 3, step.child_faces(t, par)?, holes, par));
            }
            steps.push(step);
        }
        Ok(Sqrt3Plan { meshes, steps, finest, first_step })
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
            None => plan.meshes.swap_remove(0),
            Some(f) => match f.into_full() {
                Some(mesh) => mesh,
                None => {
                    let missing = || SchemeError::NoSuchLevel { level: 0, levels: 0 };
                    let parent = plan.meshes.pop().ok_or_else(missing)?;
                    let step = plan.steps.pop().ok_or_else(missing)?;
                    drop(plan);
                    step.child_mesh(parent.topology(), par)?
                }
            },
        };
        Sqrt3Plan::over(finest, 1, first, par)
    }
}

/// One level of eval: `x` (parent rows) → `y` (child rows), row length `d`.
/// The kernels keep a fixed number of channels (1 to 4) in registers; wider
/// rows are done four channels at a time. Each row sums the terms of
/// [`Step::stencil`] from zero in the stencil's order, so eval and the
/// operator agree term for term.
pub(crate) fn eval_level<T: Float + Send + Sync>(t: &Topology, step: &Step, x: &[T], y: &mut [T], d: usize, par: Par) {
    let mut off = 0;
    while off < d {
        match d - off {
            1 => eval_level_impl::<T, 1>(t, step, x, y, d, off, par),
            2 => eval_level_impl::<T, 2>(t, step, x, y, d, off, par),
            3 => eval_level_impl::<T, 3>(t, step, x, y, d, off, par),
            _ => eval_level_impl::<T, 4>(t, step, x, y, d, off, par),
        }
        off += 4;
    }
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

impl Plan for Sqrt3Plan {
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        match self.meshes.get(level as usize) {
            Some(m) => m.num_vertices(),
            None if level == self.levels() => self.finest.as_ref().map_or(0, FinestFaces::num_vertices),
            None => 0,
        }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        eval_levels(self, "sqrt3", control, out, |l, x, y, d| {
            eval_level(self.meshes[l].topology(), &self.steps[l], x, y, d, par);
        });
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        eval_levels(self, "sqrt3", control, out, |l, x, y, d| {
            eval_level(self.meshes[l].topology(), &self.steps[l], x, y, d, par);
        });
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let step = self.steps.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        level_operator(self.meshes[level as usize].topology(), step, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.steps.get(level as usize).map(|s| s.operator_bound(self.meshes[level as usize].topology()))
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        match (self.meshes.get(level as usize), &self.finest) {
            (Some(m), _) => Some(m),
            (None, Some(f)) if level == self.levels() => {
                let (parent, step) = (self.meshes.last()?, self.steps.last()?);
                f.full(|| step.child_mesh(parent.topology(), Par::Rayon).ok())
            }
            _ => None,
        }
    }
    fn faces(&self, level: u32) -> Option<Faces<'_>> {
        match (self.meshes.get(level as usize), &self.finest) {
            (Some(m), _) => Some(Faces::of(m)),
            (None, Some(f)) if level == self.levels() => Some(f.faces()),
            _ => None,
        }
    }
}
