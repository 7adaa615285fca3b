//! Loop through closed-form halfedge refinement: every refined level's
//! connectivity is computed per element from its parent's, with no sort,
//! no hashing and no search (after Vanhoey & Dupuy's halfedge refinement
//! rules; the numbering and its closed forms are in `docs/loop.md`).
//!
//! * **Levels.** Per halfedge: origin, twin and edge (12 bytes); per edge
//!   its canonical halfedge, per vertex an outgoing one. The finest level
//!   keeps only its faces (the origins); the rest is derived from its
//!   parent when a step or a full mesh asks for it. The level before it,
//!   where plain, keeps nothing: the last step and its evaluation read it
//!   from its parent in closed form (`docs/loop.md`).
//! * **Rules.** OpenSubdiv's (creases uniform and Chaikin, corners, vertex
//!   sharpness, both boundary options, holes carried as flags) or CGAL's,
//!   computed on the fly where a sharp edge or vertex touches a point;
//!   boundary edges are infinitely sharp without being stored.
//! * **Not held:** non-manifold meshes (an edge with more than two faces,
//!   a vertex where fans meet, a face using a vertex twice, inconsistent
//!   orientation). [`LoopHalfedge::new`] builds them with the
//!   specialised kernels of [`crate::LoopSlak`] and says why
//!   ([`LoopHalfedgePlan::kernels_because`]); [`LoopHalfedge::strict`]
//!   refuses them with [`SchemeError::NotManifold`].
//!
//! Vertex order of a refined level: the parent's vertices, then the edge
//! points in the parent's edge order. Level 1 is numbered as
//! [`crate::LoopSlak`] numbers it (the control mesh's edge ids); later
//! levels number their edges in closed form (the halves of parent edge
//! `e` are `2e` and `2e + 1`, the middle edges of face `f` are
//! `2E + 3f + k`), so their rows are a permutation of the kernels'.

mod eval;
mod level;

use std::borrow::Cow;
use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Options};
use subla_scheme::halfedge::{Conn, VirtualLevels};
use subla_scheme::{ChildPoint, Faces, Plan, Prediction, Refiner, Result, SchemeError, WithFallback};

use crate::level::{Rules, prepare};
use crate::slak::LoopRules;
use level::{HeLevel, Keep};

const NAME: &str = "loop-halfedge";

/// Loop subdivision through closed-form halfedge refinement (see the
/// [module docs](self)).
///
/// ```
/// use subla_algebra::Par;
/// use subla_loop::LoopHalfedge;
/// use subla_scheme::{Plan, Refiner, eval};
/// // A tetrahedron, refined twice.
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = LoopHalfedge::new().build(&mesh, 2, Par::Rayon)?;
/// let y = eval(&plan, x.view(), Par::Rayon)?;
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.face_verts().len()), (34, 3 * 64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopHalfedge {
    /// The reference whose rules apply.
    pub rules: Rules,
    strict: bool,
}

impl LoopHalfedge {
    /// OpenSubdiv's Loop, with the specialised kernels for the meshes the
    /// halfedge form cannot hold.
    pub const fn new() -> Self {
        LoopHalfedge { rules: Rules::OpenSubdiv, strict: false }
    }
    /// CGAL's Loop ([`Rules::Cgal`]), with the same fallback.
    pub const fn cgal() -> Self {
        LoopHalfedge { rules: Rules::Cgal, strict: false }
    }
    /// The halfedge kernel alone: non-manifold meshes are refused
    /// ([`SchemeError::NotManifold`]).
    pub const fn strict(self) -> Self {
        LoopHalfedge { strict: true, ..self }
    }
}

/// A built Loop refinement of [`LoopHalfedge`]: in halfedge form, or (for
/// meshes it cannot hold) a [`crate::LoopPlan`] of the specialised
/// kernels.
#[derive(Debug)]
pub struct LoopHalfedgePlan {
    inner: WithFallback<HePlan, crate::LoopPlan>,
}

impl LoopHalfedgePlan {
    /// Why the plan was built by the specialised kernels instead of in
    /// halfedge form, if it was.
    pub fn kernels_because(&self) -> Option<&SchemeError> {
        self.inner.because()
    }
    /// Bytes of connectivity the plan keeps in halfedge form (faces,
    /// twins, edges, sharpness and hole flags of its levels; `0` for a
    /// plan of the kernels).
    pub fn connectivity_bytes(&self) -> usize {
        match &self.inner {
            WithFallback::Own(p) => p.levels.iter().map(HeLevel::bytes).sum(),
            WithFallback::Fallback { .. } => 0,
        }
    }
    fn plan(&self) -> &dyn Plan {
        self.inner.plan()
    }
}

subla_scheme::forward_plan!(LoopHalfedgePlan);

/// The plan in halfedge form: levels `0 ..= L`; the prepared control mesh
/// where level 0 is it. Every level but the finest keeps its connectivity
/// (the finest its faces only; after a modeling step, nothing until a
/// caller asks for its faces), except that the one before the finest is
/// *virtual* where it is plain ([`Keep::Virtual`]): its faces and
/// connectivity are read from its parent's in closed form by the last
/// step and its evaluation, and made whole where a caller asks for its
/// faces, mesh or operator.
#[derive(Debug)]
struct HePlan {
    control: Option<Mesh>,
    /// Levels kept below the plan's first (`0` or `1`) only for their
    /// connectivity: a modeling step keeps the parent of the level it
    /// refines, so that the refined level need not store its own.
    base: usize,
    levels: Vec<HeLevel>,
    options: Options,
    meshes: Vec<OnceLock<Mesh>>,
    /// The hole flags a level hands out in [`Plan::faces`].
    faces: Vec<OnceLock<Vec<bool>>>,
    /// A virtual level made whole, where a caller asked for it.
    wholes: Vec<OnceLock<HeLevel>>,
}

impl Refiner for LoopHalfedge {
    type Input = Mesh;
    type Plan = LoopHalfedgePlan;
    fn name(&self) -> &'static str {
        match self.rules {
            Rules::OpenSubdiv => NAME,
            Rules::Cgal => "loop-halfedge-cgal",
        }
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<LoopHalfedgePlan> {
        let inner = WithFallback::build(
            || build_he(input, self.rules, levels, par),
            || crate::LoopSlak { rules: self.rules }.build(input, levels, par),
            self.strict,
            |e| matches!(e, SchemeError::NotManifold { .. }),
        )?;
        Ok(LoopHalfedgePlan { inner })
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&LoopRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: LoopHalfedgePlan, par: Par) -> Result<LoopHalfedgePlan> {
        Ok(LoopHalfedgePlan {
            inner: plan.inner.step(|p| step_he(p, par), |k| crate::LoopSlak { rules: self.rules }.step(k, par))?,
        })
    }
}

/// The halfedge plan of `levels` levels over `input`.
fn build_he(input: &Mesh, rules: Rules, levels: u32, par: Par) -> Result<HePlan> {
    subla_scheme::predict(&LoopRules, input.topology(), 0, levels)?;
    let mesh = prepare(input, rules)?;
    let t = mesh.topology();
    t.check_manifold().map_err(|e| SchemeError::NotManifold { scheme: NAME, source: Box::new(e) })?;
    let options = mesh.options();
    let mut stack = Vec::with_capacity(levels as usize + 1);
    stack.push(HeLevel::from_mesh(&mesh, par)?);
    for l in 1..=levels {
        let k = stack.len();
        let (done, last) = stack.split_at(k - 1);
        let parent = &last[0];
        let next = match (&parent.conn, done.last()) {
            (Some(c), _) => {
                // The level before the finest is virtual where it is plain.
                let keep = match levels - l {
                    0 => Keep::Faces,
                    1 => Keep::Virtual,
                    _ => Keep::Full,
                };
                parent.refine(c, l, keep, par)?
            }
            (None, Some(grand)) => parent.refine_lean(grand, l, par)?,
            (None, None) => unreachable!("level 0 keeps its connectivity"),
        };
        stack.push(next);
    }
    Ok(HePlan::new(Some(mesh), 0, stack, options))
}

/// One level on top of `plan`'s finest. Where the finest is plain, it is
/// refined (and evaluated) through its parent's connectivity, which is made
/// if the parent does not keep it, and the parent stays as the new plan's
/// base: the connectivity a step makes is that of the parent, a quarter of
/// the finest's. Else the finest's own connectivity is made from its
/// parent's, and the parent dropped.
fn step_he(plan: HePlan, par: Par) -> Result<HePlan> {
    let n = plan.levels.len();
    if n >= 2 && plan.levels[n - 1].conn.is_none() && plan.levels[n - 1].is_plain() {
        let parent_virtual = plan.levels[n - 2].is_virtual();
        let conn = match &plan.levels[n - 2].conn {
            None if !parent_virtual => Some(plan.conn(n - 2, par)?.into_owned()),
            _ => None,
        };
        if parent_virtual {
            plan.level(n - 2, par)?;
        }
        let HePlan { mut levels, mut wholes, options, .. } = plan;
        let finest = levels.pop().expect("a plan has a level");
        let mut parent = match wholes[n - 2].take() {
            Some(w) => w,
            None => levels.pop().expect("a level before the finest"),
        };
        if conn.is_some() {
            parent.conn = conn;
        }
        drop(levels);
        // The new finest keeps nothing until a caller asks for its faces
        // (`HePlan::level`): a further step and the evaluation read its
        // parent's parent.
        let next = finest.lazy_child(1)?;
        return Ok(HePlan::new(None, 1, vec![parent, finest, next], options));
    }
    let conn = match plan.levels[n - 1].conn.as_ref() {
        Some(_) => None,
        None => Some(plan.conn(n - 1, par)?.into_owned()),
    };
    let HePlan { control, mut levels, options, .. } = plan;
    let mut finest = levels.pop().expect("a plan has a level");
    if conn.is_some() {
        finest.conn = conn;
    }
    drop(levels);
    drop(control);
    let next = finest.refine(finest.conn(), 1, Keep::Faces, par)?;
    Ok(HePlan::new(None, 0, vec![finest, next], options))
}

impl HePlan {
    fn new(control: Option<Mesh>, base: usize, levels: Vec<HeLevel>, options: Options) -> Self {
        let n = levels.len();
        HePlan {
            control,
            base,
            levels,
            options,
            meshes: (0..n).map(|_| OnceLock::new()).collect(),
            faces: (0..n).map(|_| OnceLock::new()).collect(),
            wholes: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    fn virtuals(&self) -> VirtualLevels<'_, HeLevel, Conn> {
        VirtualLevels { levels: &self.levels, wholes: &self.wholes, conn: |l| l.conn.as_ref() }
    }

    /// The connectivity of `level`: its own, or made from its parent's.
    fn conn(&self, level: usize, par: Par) -> Result<Cow<'_, Conn>> {
        self.virtuals().conn_of(level, &|p: &HeLevel, c: &Conn| p.child_conn(c, par))
    }

    /// `level` with its faces: itself, or where it is virtual, made whole
    /// (once) from its parent.
    fn level(&self, level: usize, par: Par) -> Result<&HeLevel> {
        // A modeling step's finest level (its parent without connectivity,
        // its grandparent with it) gets its faces from the grandparent;
        // the level before a build's finest, faces and connectivity from
        // its parent.
        let v = self.virtuals();
        let grand = v.lazy_finest_grandparent(level);
        v.level(level, HeLevel::is_virtual, |l, p| match grand {
            Some(g) => p.refine_lean(g, (level - self.base) as u32, par),
            None => l.whole(p, p.conn(), par),
        })
    }

    /// Where the plan's `level` is in `levels`.
    fn at(&self, level: u32) -> usize {
        self.base + level as usize
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
        subla_scheme::kernel::eval_levels(self, NAME, control, out, |l, x, y, d| {
            let i = self.at(l as u32);
            eval::eval_level(&self.levels[i], i.checked_sub(1).map(|p| &self.levels[p]), x, y, d, par);
        })
    }
}

impl Plan for HePlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        (self.levels.len() - 1 - self.base) as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.levels.get(self.at(level)).map_or(0, |l| l.num_vertices)
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
        let i = self.at(level);
        eval::level_operator(self.level(i, par)?, &*self.conn(i, par)?, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        // Vertex rows: the vertex, its neighbours and two crease ends
        // (3V + 2E); edge rows: four points.
        let l = self.levels.get(self.at(level)).filter(|_| level < self.levels())?;
        Some((3 * l.num_vertices + 6 * l.num_edges) as u64)
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let l = self.levels.get(self.at(level)).filter(|_| level < self.levels())?;
        ChildPoint::of_quad_split(l.num_vertices, 0, l.num_edges, row)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        crate::operator::limit_operator(self.refined(self.levels(), par)?, par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(c);
        }
        let i = self.at(level);
        let cell = &self.meshes[i];
        if let Some(m) = cell.get() {
            return Ok(m);
        }
        let l = self.level(i, par)?;
        let m = l.mesh(&*self.conn(i, par)?, self.options, par)?;
        Ok(cell.get_or_init(|| m))
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(Faces::of(c));
        }
        let i = self.at(level);
        let l = self.level(i, par)?;
        let nf = l.num_faces();
        let holes = self.faces[i].get_or_init(|| l.holes.clone().unwrap_or_else(|| vec![false; nf]));
        Ok(Faces::uniform(l.num_vertices, 3, &l.vert, holes))
    }
}
