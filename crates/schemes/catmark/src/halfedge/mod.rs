//! Catmull-Clark through closed-form halfedge refinement (Dupuy & Vanhoey
//! 2021, the anchor the edge-friend encoding compares against): after the
//! first step, every quad level's connectivity is computed per element
//! from its parent's, with no sort, no hashing and no search (the
//! numbering and its closed forms are in `docs/catmark.md`).
//!
//! * **First step.** The specialised kernels of [`crate::CatmarkSlak`]
//!   refine the control mesh (faces of any order) to level 1, numbered as
//!   they number it; level 1 is then read into halfedge form.
//! * **Later levels.** Per halfedge: origin, twin and edge (12 bytes, 48 a
//!   quad); per edge its canonical halfedge, per vertex an outgoing one.
//!   The finest level keeps only its quads; a modeling step derives the
//!   rest from its parent.
//! * **Rules.** OpenSubdiv's (creases uniform and Chaikin, corners, vertex
//!   sharpness, both boundary options; holes carried as flags), computed
//!   on the fly where a sharp edge or vertex touches a point; boundary
//!   edges are infinitely sharp without being stored.
//! * **Not held:** non-manifold meshes. [`CatmarkHalfedge::new`] builds
//!   them with the kernels and says why
//!   ([`CatmarkHalfedgePlan::kernels_because`]);
//!   [`CatmarkHalfedge::strict`] refuses them.
//!
//! Vertex order of a refined level: the parent's vertices, its face
//! points, its edge points (as the kernels order them); levels after the
//! first number their edges in closed form, so their rows are a
//! permutation of the kernels'.

mod eval;
mod level;
mod regular;

use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Options};
use subla_scheme::refinement::ClosedForm;
use subla_scheme::{ChildPoint, Faces, Plan, Prediction, Refiner, Result, SchemeError, WithFallback, check_rows};

use crate::level::{Step, child_level, masks, prepare};
use crate::slak::CatmarkRules;
use level::QuadLevel;

const NAME: &str = "catmark-halfedge";

/// Catmull-Clark subdivision through closed-form halfedge refinement (see
/// the [module docs](self)).
///
/// ```
/// use subla_algebra::Par;
/// use subla_catmark::CatmarkHalfedge;
/// use subla_scheme::{Plan, Refiner, eval};
/// // A cube, refined twice.
/// let faces = [[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]];
/// let mesh = subla_mesh::Mesh::from_faces(8, &faces)?;
/// let x = ndarray::Array2::from_shape_fn((8, 3), |(v, k)| ((v >> k) & 1) as f64);
/// let plan = CatmarkHalfedge::new().build(&mesh, 2, Par::Rayon)?;
/// let y = eval(&plan, x.view(), Par::Rayon)?;
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.face_verts().len()), (98, 4 * 96));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CatmarkHalfedge {
    strict: bool,
}

impl CatmarkHalfedge {
    /// The halfedge kernel, with the specialised kernels for non-manifold
    /// meshes.
    pub const fn new() -> Self {
        CatmarkHalfedge { strict: false }
    }
    /// The halfedge kernel alone: non-manifold meshes are refused
    /// ([`SchemeError::NotManifold`]).
    pub const fn strict() -> Self {
        CatmarkHalfedge { strict: true }
    }
}

/// A built Catmull-Clark refinement of [`CatmarkHalfedge`]: in halfedge
/// form, or (for meshes it cannot hold) a [`crate::CatmarkPlan`] of the
/// kernels.
#[derive(Debug)]
pub struct CatmarkHalfedgePlan {
    inner: WithFallback<HePlan, crate::CatmarkPlan>,
}

impl CatmarkHalfedgePlan {
    /// Why the plan was built by the specialised kernels, if it was.
    pub fn kernels_because(&self) -> Option<&SchemeError> {
        self.inner.because()
    }
    /// Bytes of connectivity the plan keeps in halfedge form (levels 1 and
    /// up; `0` for a plan of the kernels).
    pub fn connectivity_bytes(&self) -> usize {
        match &self.inner {
            WithFallback::Own(p) => p.levels.iter().map(QuadLevel::bytes).sum(),
            WithFallback::Fallback { .. } => 0,
        }
    }
    fn plan(&self) -> &dyn Plan {
        self.inner.plan()
    }
}

subla_scheme::forward_plan!(CatmarkHalfedgePlan);

/// The control mesh (prepared) and the masks of its step.
#[derive(Debug)]
struct Control {
    mesh: Mesh,
    step: Step,
}

/// The plan in halfedge form: the control level (if the plan starts
/// there) and quad levels; all but the finest with their connectivity.
#[derive(Debug)]
struct HePlan {
    control: Option<Control>,
    levels: Vec<QuadLevel>,
    options: Options,
    meshes: Vec<OnceLock<Mesh>>,
    faces: Vec<OnceLock<Vec<bool>>>,
}

impl Refiner for CatmarkHalfedge {
    type Input = Mesh;
    type Plan = CatmarkHalfedgePlan;
    fn name(&self) -> &'static str {
        NAME
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<CatmarkHalfedgePlan> {
        let inner = WithFallback::build(
            || build_he(input, levels, par),
            || crate::CatmarkSlak.build(input, levels, par),
            self.strict,
            |e| matches!(e, SchemeError::NotManifold { .. }),
        )?;
        Ok(CatmarkHalfedgePlan { inner })
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: CatmarkHalfedgePlan, par: Par) -> Result<CatmarkHalfedgePlan> {
        Ok(CatmarkHalfedgePlan { inner: plan.inner.step(|p| step_he(p, par), |k| crate::CatmarkSlak.step(k, par))? })
    }
}

fn build_he(input: &Mesh, levels: u32, par: Par) -> Result<HePlan> {
    subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)?;
    input.topology().check_manifold().map_err(|e| SchemeError::NotManifold { scheme: NAME, source: Box::new(e) })?;
    let mesh = prepare(input)?;
    let options = mesh.options();
    let step = masks(&mesh, par);
    let mut stack = Vec::with_capacity(levels as usize);
    if levels > 0 {
        stack.push(QuadLevel::from_mesh(&child_level(&mesh, par)?, par)?);
        for l in 2..=levels {
            let next = stack.last().expect("a level").refine(l, l < levels, par)?;
            stack.push(next);
        }
    }
    Ok(HePlan::new(Some(Control { mesh, step }), stack, options))
}

fn step_he(plan: HePlan, par: Par) -> Result<HePlan> {
    let HePlan { control, mut levels, options, .. } = plan;
    let Some(mut finest) = levels.pop() else {
        let c = control.ok_or_else(|| SchemeError::Internal { what: NAME, detail: "a plan without levels".into() })?;
        return build_he(&c.mesh, 1, par);
    };
    if finest.conn.is_none() {
        finest.conn = Some(match levels.last() {
            Some(parent) => parent.child_conn(par)?,
            // Level 1 of a one-level plan: read again from the kernels'
            // level 1.
            None => {
                let c = control.as_ref().expect("level 1 has the control mesh");
                QuadLevel::from_mesh(&child_level(&c.mesh, par)?, par)?.conn.expect("a full level")
            }
        });
    }
    drop(levels);
    drop(control);
    let next = finest.refine(1, false, par)?;
    Ok(HePlan::new(None, vec![finest, next], options))
}

impl HePlan {
    fn new(control: Option<Control>, levels: Vec<QuadLevel>, options: Options) -> Self {
        let n = levels.len() + usize::from(control.is_some());
        HePlan {
            control,
            levels,
            options,
            meshes: (0..n).map(|_| OnceLock::new()).collect(),
            faces: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Index of level `level` in `levels` (`None` for the control level).
    fn index(&self, level: u32) -> Option<usize> {
        match &self.control {
            Some(_) => (level as usize).checked_sub(1),
            None => Some(level as usize),
        }
    }

    fn check_level(&self, level: u32) -> Result<()> {
        if level > self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        Ok(())
    }

    fn eval_t<T: Float + Send + Sync + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        subla_scheme::kernel::eval_levels(self, NAME, control, out, |l, x, y, d| match self.index(l as u32) {
            None => {
                let c = self.control.as_ref().expect("level 0 of a plan with a control mesh");
                crate::slak::eval_level(c.mesh.topology(), &c.step, x, y, d, par);
            }
            Some(i) => eval::eval_level(&self.levels[i], x, y, d, par),
        })
    }
}

impl Plan for HePlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        (self.levels.len() + usize::from(self.control.is_some())) as u32 - 1
    }
    fn level_len(&self, level: u32) -> usize {
        match self.index(level) {
            None => self.control.as_ref().map_or(0, |c| c.mesh.num_vertices()),
            Some(i) => self.levels.get(i).map_or(0, |l| l.num_vertices),
        }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        match self.index(level) {
            None => {
                let c = self.control.as_ref().expect("level 0 of a plan with a control mesh");
                crate::operator::level_operator(c.mesh.topology(), &c.step, par)
            }
            Some(i) => eval::level_operator(&self.levels[i], None, par),
        }
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        check_rows(rows, self.level_len(level + 1))?;
        match self.index(level) {
            None => {
                let c = self.control.as_ref().expect("level 0 of a plan with a control mesh");
                crate::operator::level_operator_rows(c.mesh.topology(), &c.step, rows, par)
            }
            Some(i) => eval::level_operator(&self.levels[i], Some(rows), par),
        }
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        // Only from a polygon control mesh: a modeling step's plan starts at
        // a refined level, whose faces are not the patches' control faces.
        let Some(c) = &self.control else { return Ok(None) };
        Ok(regular::regular_rows(&c.mesh, &self.levels, par)?.map(|r| Box::new(r) as Box<dyn ClosedForm>))
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        if level >= self.levels() {
            return None;
        }
        match self.index(level) {
            None => Some(crate::operator::level_operator_bound(self.control.as_ref()?.mesh.topology())),
            // Vertex rows: the vertex, 2n ring points and two crease ends
            // (3V + 4E); face rows four points; edge rows eight.
            Some(i) => {
                let l = &self.levels[i];
                Some((3 * l.num_vertices + 4 * l.num_edges + 4 * l.num_faces() + 8 * l.num_edges) as u64)
            }
        }
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        if level >= self.levels() {
            return None;
        }
        match self.index(level) {
            None => {
                let t = self.control.as_ref()?.mesh.topology();
                ChildPoint::of_quad_split(t.num_vertices(), t.num_faces(), t.num_edges(), row)
            }
            Some(i) => {
                let l = &self.levels[i];
                ChildPoint::of_quad_split(l.num_vertices, l.num_faces(), l.num_edges, row)
            }
        }
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        crate::operator::limit_operator(self.refined(self.levels(), par)?, par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.check_level(level)?;
        let Some(i) = self.index(level) else {
            return Ok(&self.control.as_ref().expect("level 0 of a plan with a control mesh").mesh);
        };
        let cell = &self.meshes[level as usize];
        if let Some(m) = cell.get() {
            return Ok(m);
        }
        let l = &self.levels[i];
        let m = match (&l.conn, i.checked_sub(1), &self.control) {
            (Some(c), _, _) => l.mesh(c, self.options, par)?,
            (None, Some(p), _) => l.mesh(&self.levels[p].child_conn(par)?, self.options, par)?,
            (None, None, Some(c)) => child_level(&c.mesh, par)?,
            (None, None, None) => {
                return Err(SchemeError::Internal { what: NAME, detail: "a lean level without a parent".into() });
            }
        };
        Ok(cell.get_or_init(|| m))
    }
    fn faces(&self, level: u32, _par: Par) -> Result<Faces<'_>> {
        self.check_level(level)?;
        let Some(i) = self.index(level) else {
            return Ok(Faces::of(&self.control.as_ref().expect("level 0 of a plan with a control mesh").mesh));
        };
        let l = &self.levels[i];
        let nf = l.num_faces();
        let holes = self.faces[level as usize].get_or_init(|| l.holes.clone().unwrap_or_else(|| vec![false; nf]));
        Ok(Faces::uniform(l.num_vertices, 4, &l.vert, holes))
    }
}
