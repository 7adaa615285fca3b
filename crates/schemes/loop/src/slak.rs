//! Loop with specialised kernels (the "SLAK" path of Mlakar et al. 2020,
//! §4, applied to Appendix B): edge points and vertex points as gathers
//! over the topology — every output row written once, by one task, so
//! results are deterministic — with the overwrite masks of sharp and
//! boundary elements (§5.1, §5.3) looked up per row. Both gathers read only
//! the parent level (Loop has no face points), so they are independent.

use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology, TriChild};
use subla_scheme::kernel::{axpy, for_rows, load, real, specials_in};
use subla_scheme::{
    ChildPoint, Counts, FinestFaces, LeanLevel, LevelCounts, LevelPlan, LevelRules, Prediction, Refiner, Result,
};

use crate::lean::{lean, lean_eval, lean_faces};
use crate::level::{
    EdgeMask, Rules, Step, VertexMask, child_holes, child_level, lean_child_level, masks, operator_bound, prepare,
};
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
/// let y = eval(&plan, x.view(), Par::Rayon)?;
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.num_faces()), (34, 64));
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

/// A built Loop refinement (static mode: all levels): the level stack of
/// [`LevelPlan`] with Loop's rules.
pub type LoopPlan = LevelPlan<LoopRules>;

/// Loop's rules for [`LevelPlan`]: the masks, the 1-to-4 split, the
/// kernels and the matrices of this crate (the rule set, OpenSubdiv's or
/// CGAL's, is fixed when level 0 is prepared), with lean kernels for the
/// level below the finest of a smooth closed manifold ([`TriChild`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopRules;

impl LevelRules for LoopRules {
    type Step = Step;
    type Lean = TriChild;
    fn name(&self) -> &'static str {
        "loop"
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
    fn operator_bound(&self, t: &Topology, _step: &Step) -> u64 {
        operator_bound(t)
    }
    fn child_counts(&self, p: &LevelCounts, _level: u32) -> Option<LevelCounts> {
        Some(LevelCounts::triangles(p.vertices + p.edges, 2 * p.edges + p.corners, 4 * p.faces, 2 * p.boundary_edges))
    }
    fn operator_bound_of_counts(&self, p: &LevelCounts, _level: u32) -> Option<u128> {
        // `operator_bound` summed: 3V + 2E over the vertices, 2E + C over
        // the edges.
        Some(3 * p.vertices + 4 * p.edges + p.corners)
    }
    fn child_point(&self, parent: Counts, _step: &Step, row: usize) -> Option<ChildPoint> {
        ChildPoint::of_quad_split(parent.vertices, 0, parent.edges, row)
    }
    fn limit(&self, finest: &Mesh, par: Par) -> Result<CsrMat<f64>> {
        limit_operator(finest, par)
    }
}

impl LeanLevel<LoopRules> for TriChild {
    fn lean(_: &LoopRules, parent: &Mesh, _level: u32, par: Par) -> Result<Option<(TriChild, Step)>> {
        lean(parent, par)
    }
    fn into_full(self, _: &LoopRules, parent: &Mesh, par: Par) -> Result<Mesh> {
        lean_child_level(parent, self, par)
    }
    fn counts(&self) -> Counts {
        Counts { vertices: self.num_vertices(), faces: self.num_faces(), edges: self.num_edges() }
    }
    fn faces(&self, _: &LoopRules, parent: &Mesh, _step: &Step, par: Par) -> Result<FinestFaces> {
        lean_faces(parent, self, par)
    }
    fn eval<T: Float + Send + Sync>(
        &self,
        _: &LoopRules,
        t: &Topology,
        step: &Step,
        x: &[T],
        y: &mut [T],
        d: usize,
        par: Par,
    ) {
        lean_eval(t, self, step, x, y, d, par);
    }
    fn operator_bound(&self, _: &LoopRules, _step: &Step) -> Option<u64> {
        // A closed manifold: each vertex row holds the vertex and its
        // neighbours (3 + valence summed: 3 V + 2 E), each edge row its two
        // ends and two opposite vertices.
        Some((3 * self.num_vertices() + 6 * self.num_edges()) as u64)
    }
}

/// The faces of the level above `parent`.
fn finest_of(parent: &Mesh, par: Par) -> Result<FinestFaces> {
    let t = parent.topology();
    Ok(FinestFaces::uniform(t.num_vertices() + t.num_edges(), 3, split_faces(t, par)?, child_holes(parent)?))
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

impl StepView<'_> {
    /// Step `level → level+1` of `plan` (a lean parent's full mesh is
    /// derived with `par` on first use).
    ///
    /// # Errors
    /// [`subla_scheme::SchemeError::NoSuchLevel`] past the last step; the
    /// derivation's errors.
    pub fn of(plan: &LoopPlan, level: u32, par: Par) -> Result<StepView<'_>> {
        let (parent, step) = plan.step(level, par)?;
        Ok(StepView { parent, edge_masks: &step.edges, vertex_masks: &step.vertices, smooth: &step.smooth })
    }
}

impl StepView<'_> {
    /// The special masks of one Loop step of any prepared level `parent`
    /// (triangles only, effective sharpness, as
    /// [`subla_scheme::sdc::prepare_sharpness`] makes it), without building a
    /// plan: what a sparse (feature-adaptive) refinement needs for the part
    /// of a level it refines. The masks of an edge or vertex depend only on
    /// its own neighbourhood in `parent`.
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
        StepView {
            parent: self.parent,
            edge_masks: &self.step.edges,
            vertex_masks: &self.step.vertices,
            smooth: &self.step.smooth,
        }
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
        subla_scheme::predict(&LoopRules, input.topology(), 0, levels)?;
        LoopPlan::from_prepared(LoopRules, prepare(input, self.rules)?, 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&LoopRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: LoopPlan, par: Par) -> Result<LoopPlan> {
        plan.next(par)
    }
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
