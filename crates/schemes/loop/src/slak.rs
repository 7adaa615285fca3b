//! Loop with specialised kernels (the "SLAK" path of Mlakar et al. 2020,
//! §4, applied to Appendix B): edge points and vertex points as gathers
//! over the topology — every output row written once, by one task, so
//! results are deterministic — with the overwrite masks of sharp and
//! boundary elements (§5.1, §5.3) looked up per row. Both gathers read only
//! the parent level (Loop has no face points), so they are independent.

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{axpy, eval_levels, for_rows, load, real, specials_in};
use subla_scheme::{Faces, FinestFaces, Plan, Refiner, Result, SchemeError};

use crate::level::{EdgeMask, Rules, Step, VertexMask, child_holes, child_level, masks, operator_bound, prepare};
use crate::operator::{level_operator, limit_operator};
use crate::rules::{EDGE_END, EDGE_OPPOSITE};
use crate::split::split_faces;

/// Loop subdivision through the specialised kernels.
///
/// ```
/// use subla_algebra::Par;
/// use subla_loop::LoopSlak;
/// use subla_scheme::{Plan, Refiner, eval};
/// // A tetrahedron, refined twice.
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = LoopSlak::new().build(&mesh, 2, Par::Rayon)?;
/// let y = eval(&plan, x.view(), Par::Rayon);
/// assert_eq!((y.nrows(), plan.faces(2).unwrap().num_faces()), (34, 64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopSlak {
    /// The reference whose rules apply.
    pub rules: Rules,
}

impl LoopSlak {
    /// OpenSubdiv's Loop ([`Rules::OpenSubdiv`]).
    pub const fn new() -> Self {
        LoopSlak { rules: Rules::OpenSubdiv }
    }
    /// CGAL's Loop ([`Rules::Cgal`]).
    pub const fn cgal() -> Self {
        LoopSlak { rules: Rules::Cgal }
    }
}

/// A built Loop refinement (static mode: all levels).
///
/// Levels below the finest are kept with their full connectivity (eval
/// reads it); the finest level keeps only its faces, and derives its full
/// mesh on the first call of [`Plan::refined`].
#[derive(Clone, Debug)]
pub struct LoopPlan {
    /// Meshes of levels `0..L` (level 0 alone when `L = 0`), with
    /// effective sharpness.
    meshes: Vec<Mesh>,
    /// Masks of each step `l → l+1`.
    steps: Vec<Step>,
    /// Level `L` when `L ≥ 1`.
    finest: Option<FinestFaces>,
}

/// The faces of the level above `parent`.
fn finest_of(parent: &Mesh, par: Par) -> Result<FinestFaces> {
    let t = parent.topology();
    Ok(FinestFaces::uniform(t.num_vertices() + t.num_edges(), 3, split_faces(t, par)?, child_holes(parent)))
}

/// One step `l → l+1` of a [`LoopPlan`] as other backends read it: the
/// parent level (full connectivity, effective sharpness), the masks that
/// differ from the smooth ones, sorted by element, and the smooth vertex
/// weights by valence. Every other edge point is
/// `⅜ a + ⅜ b + ⅛ o₁ + ⅛ o₂`, every other vertex point
/// `smooth[n][0] v + smooth[n][1] Σ uᵢ`.
#[derive(Copy, Clone, Debug)]
pub struct StepView<'a> {
    /// The parent level.
    pub parent: &'a Mesh,
    /// Special edge masks, by edge.
    pub edge_masks: &'a [EdgeMask],
    /// Special vertex masks, by vertex.
    pub vertex_masks: &'a [VertexMask],
    /// `[vertex, neighbour]` weights of the smooth vertex mask, indexed by
    /// valence.
    pub smooth: &'a [[f64; 2]],
}

impl LoopPlan {
    /// Step `level → level+1`, or `None` past the last.
    pub fn step_view(&self, level: u32) -> Option<StepView<'_>> {
        let step = self.steps.get(level as usize)?;
        Some(StepView {
            parent: &self.meshes[level as usize],
            edge_masks: &step.edges,
            vertex_masks: &step.vertices,
            smooth: &step.smooth,
        })
    }

    /// The plan of `levels` levels over the prepared mesh `base`.
    fn over(base: Mesh, levels: u32, par: Par) -> Result<LoopPlan> {
        let mut meshes = Vec::with_capacity(levels as usize);
        let mut steps = Vec::with_capacity(levels as usize);
        meshes.push(base);
        for l in 0..levels as usize {
            steps.push(masks(&meshes[l], par));
            if l + 1 < levels as usize {
                let child = child_level(&meshes[l], par)?;
                meshes.push(child);
            }
        }
        let finest = match meshes.last() {
            Some(m) if levels > 0 => Some(finest_of(m, par)?),
            _ => None,
        };
        Ok(LoopPlan { meshes, steps, finest })
    }
}

impl Refiner for LoopSlak {
    type Input = Mesh;
    type Plan = LoopPlan;
    fn name(&self) -> &'static str {
        match self.rules {
            Rules::OpenSubdiv => "loop-slak",
            Rules::Cgal => "loop-slak-cgal",
        }
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<LoopPlan> {
        LoopPlan::over(prepare(input, self.rules)?, levels, par)
    }
    fn step(&self, mut plan: LoopPlan, par: Par) -> Result<LoopPlan> {
        let finest = match plan.finest.take() {
            None => plan.meshes.swap_remove(0),
            Some(f) => match f.into_full() {
                Some(mesh) => mesh,
                None => {
                    let parent = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
                    drop(plan);
                    child_level(&parent, par)?
                }
            },
        };
        LoopPlan::over(finest, 1, par)
    }
}

/// One level of eval: `x` (parent rows) → `y` (child rows), row length `d`.
/// The kernels keep a fixed number of channels (1 to 4) in registers; wider
/// rows are done four channels at a time.
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
    let (nv, ne) = (t.num_vertices(), t.num_edges());
    let (yv, ye) = y.split_at_mut(nv * stride);
    let fverts = t.face_verts();
    let edges = t.edges();
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    // Edge points: `α (a + b) + β Σ o`, the opposite vertex of a use `c`
    // being the corner two places on in its triangle.
    for_rows(ye, ne, stride, par, |r, out| {
        let specials = specials_in(&step.edges, &r, |m: &EdgeMask| m.edge);
        let mut next_special = 0;
        for (row, e) in out.chunks_exact_mut(stride).zip(r) {
            let [a, b] = edges[e];
            let (alpha, beta) = if next_special < specials.len() && specials[next_special].edge as usize == e {
                let m = specials[next_special];
                next_special += 1;
                (real::<T>(m.alpha), real::<T>(m.beta))
            } else {
                (real::<T>(EDGE_END), real::<T>(EDGE_OPPOSITE))
            };
            let mut acc = [T::zero(); D];
            axpy(&mut acc, alpha, gx(a));
            axpy(&mut acc, alpha, gx(b));
            if beta != T::zero() {
                for &c in t.edge_corners(e) {
                    let c = c as usize;
                    axpy(&mut acc, beta, gx(fverts[3 * (c / 3) + (c % 3 + 2) % 3]));
                }
            }
            put(row, acc);
        }
    });
    // Vertex points: the neighbours, then the vertex (Eq. 28), or the
    // special mask.
    for_rows(yv, nv, stride, par, |r, out| {
        let specials = specials_in(&step.vertices, &r, |m: &VertexMask| m.vertex);
        let mut next_special = 0;
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            let (cv, cn) = if next_special < specials.len() && specials[next_special].vertex as usize == v {
                let m = specials[next_special];
                next_special += 1;
                if m.ce != 0.0 {
                    let w = real::<T>(m.ce);
                    axpy(&mut acc, w, gx(m.ua));
                    axpy(&mut acc, w, gx(m.ub));
                }
                (m.cv, m.cn)
            } else {
                let [w, e] = step.smooth[t.valence(v)];
                (w, e)
            };
            if cn != 0.0 {
                let w = real::<T>(cn);
                for u in t.vertex_neighbors(v) {
                    axpy(&mut acc, w, gx(u));
                }
            }
            axpy(&mut acc, real::<T>(cv), gx(v as u32));
            put(row, acc);
        }
    });
}

impl LoopPlan {
    fn eval_generic<T: Float + Send + Sync>(&self, control: ArrayView2<'_, T>, out: ArrayViewMut2<'_, T>, par: Par) {
        eval_levels(self, "loop", control, out, |l, x, y, d| {
            eval_level(self.meshes[l].topology(), &self.steps[l], x, y, d, par);
        });
    }
}

impl Plan for LoopPlan {
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
        self.eval_generic(control, out, par);
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let step = self.steps.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        level_operator(self.meshes[level as usize].topology(), step, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.steps.get(level as usize).map(|_| operator_bound(self.meshes[level as usize].topology()))
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.refined(self.levels()).ok_or(SchemeError::Unsupported {
            scheme: "loop",
            reason: "the finest level's connectivity could not be derived".into(),
        })?;
        limit_operator(finest, par)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        match (self.meshes.get(level as usize), &self.finest) {
            (Some(m), _) => Some(m),
            (None, Some(f)) if level == self.levels() => {
                let parent = self.meshes.last()?;
                f.full(|| child_level(parent, Par::Rayon).ok())
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
