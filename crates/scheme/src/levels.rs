//! The plans of schemes that refine level by level over full meshes
//! (Catmull-Clark, bilinear, Loop, √3).
//!
//! * [`LevelPlan`], the specialised-kernel path: the meshes of levels
//!   `0..L` with their full connectivity (eval reads it), the masks of each
//!   step, and the finest level as faces only ([`FinestFaces`]). A scheme
//!   supplies its rules through [`LevelRules`]; a scheme that can evaluate
//!   the level below the finest through its parent (without that level's
//!   connectivity) adds a [`LeanLevel`].
//! * [`AlgebraPlan`], the algebra path: every level's mesh and the matrices
//!   its eval multiplies, from the scheme's [`AlgebraRules`]; its
//!   refinement and limit matrices are the [`LevelRules`]' ones.
//!
//! Both do the rest: building the stack, [`Plan`], and the one-level step
//! of modeling mode. Levels are numbered from the control mesh of the
//! first build: a plan made by a modeling step knows the index of its own
//! level 0 ([`LevelPlan::first_level`]), so that rules which depend on the
//! step's parity (√3's boundary rule) see the right step.

use std::fmt;
use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::{CsrMat, Par, Scalar};
use subla_mesh::{Mesh, Topology};

use crate::kernel::{eval_levels, try_zeros};
use crate::predict::{LevelCounts, check_levels};
use crate::refinement::ClosedForm;
use crate::stored::LevelMeshes;
use crate::{ChildPoint, Faces, FinestFaces, Plan, Result, SchemeError};

/// The counts of a parent level that number its child's points.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Vertices.
    pub vertices: usize,
    /// Faces.
    pub faces: usize,
    /// Edges.
    pub edges: usize,
}

impl Counts {
    /// The counts of `t`.
    pub fn of(t: &Topology) -> Counts {
        Counts { vertices: t.num_vertices(), faces: t.num_faces(), edges: t.num_edges() }
    }
}

/// What a level-by-level scheme provides to [`LevelPlan`]: its rules, as a
/// value (rules may carry options, such as Loop's rule set). Every function
/// reads one parent level: a mesh with its full connectivity and its
/// effective sharpness.
pub trait LevelRules: Clone + fmt::Debug + Send + Sync + 'static {
    /// The masks of one step `l → l+1`.
    type Step: Clone + fmt::Debug + Send + Sync;
    /// The level below the finest in a lean form: [`NoLean`] for schemes
    /// that keep every level below the finest in full.
    type Lean: LeanLevel<Self>;
    /// The scheme's name in messages (`"catmark"`, `"loop"`).
    fn name(&self) -> &'static str;
    /// The masks of the step above `parent`, which is level `level`
    /// (counted from the control mesh of the first build).
    ///
    /// # Errors
    /// Input the rules cannot refine, named by element.
    fn masks(&self, parent: &Mesh, level: u32, par: Par) -> Result<Self::Step>;
    /// The child level of `parent`, with full connectivity.
    ///
    /// # Errors
    /// As the scheme's split.
    fn child(&self, parent: &Mesh, step: &Self::Step, par: Par) -> Result<Mesh>;
    /// The faces of the child level of `parent`, without its connectivity.
    ///
    /// # Errors
    /// As the scheme's split.
    fn child_faces(&self, parent: &Mesh, step: &Self::Step, par: Par) -> Result<FinestFaces>;
    /// One level of eval: `x` (parent rows) → `y` (child rows), `d`
    /// channels per row.
    fn eval_level<T: Float + Send + Sync>(
        &self,
        t: &Topology,
        step: &Self::Step,
        x: &[T],
        y: &mut [T],
        d: usize,
        par: Par,
    );
    /// The matrix `R` of one step.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn operator(&self, t: &Topology, step: &Self::Step, par: Par) -> Result<CsrMat<f64>>;
    /// Rows `rows` of [`LevelRules::operator`] (each below its row count).
    /// The default builds the whole matrix and keeps those rows.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn operator_rows(&self, t: &Topology, step: &Self::Step, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        Ok(self.operator(t, step, par)?.as_ref().select_major(rows))
    }
    /// An upper bound of the nonzeros of [`LevelRules::operator`], from the
    /// counts alone.
    fn operator_bound(&self, t: &Topology, step: &Self::Step) -> u64;
    /// The counts of the child of a level of counts `parent` (level
    /// `level`, counted from the control mesh of the first build), exact
    /// or an upper bound, from the counts alone: what [`crate::predict()`]
    /// and the builds' check against `u32` read. `None` (the default)
    /// where the scheme does not predict.
    fn child_counts(&self, parent: &LevelCounts, level: u32) -> Option<LevelCounts> {
        let _ = (parent, level);
        None
    }
    /// An upper bound of the nonzeros of the operator of the step above a
    /// level of counts `parent`, from the counts alone (as
    /// [`LevelRules::operator_bound`] without the topology). `None` (the
    /// default) where the scheme gives none.
    fn operator_bound_of_counts(&self, parent: &LevelCounts, level: u32) -> Option<u128> {
        let _ = (parent, level);
        None
    }
    /// Which child point row `row` of the step's operator is
    /// ([`Plan::child_point`]), from the parent's counts; `None` (the
    /// default) where the scheme does not say.
    fn child_point(&self, parent: Counts, step: &Self::Step, row: usize) -> Option<ChildPoint> {
        let _ = (parent, step, row);
        None
    }
    /// The rows of the composed matrix of the levels `meshes` (`0..L`, each
    /// with full connectivity) that the scheme knows in closed form, if
    /// any: [`Plan::closed_form`].
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn closed_form<'a>(&self, meshes: &'a [Mesh], par: Par) -> Result<Option<Box<dyn ClosedForm + 'a>>> {
        let _ = (meshes, par);
        Ok(None)
    }
    /// The limit masks of `finest` as a square matrix.
    ///
    /// # Errors
    /// [`SchemeError::NoLimit`] (the default) for schemes without limit
    /// masks; sizes over `u32`.
    fn limit(&self, finest: &Mesh, par: Par) -> Result<CsrMat<f64>> {
        let _ = (finest, par);
        Err(SchemeError::NoLimit { scheme: self.name() })
    }
}

/// The optional extension of [`LevelRules`] for a level kept in lean form:
/// a child level known through its parent, which the scheme's lean kernels
/// evaluate (and whose child faces they write) without the child's own
/// connectivity. A [`LevelPlan`] keeps the level below its finest in this
/// form when [`LeanLevel::lean`] gives one, and derives its full mesh only
/// if asked for. Schemes without lean kernels use [`NoLean`].
pub trait LeanLevel<R: LevelRules>: Clone + fmt::Debug + Send + Sync + Sized {
    /// The child of `parent` (level `level`) in lean form, with the masks
    /// of the step above it, where the scheme's lean kernels apply to it;
    /// `None` elsewhere.
    ///
    /// # Errors
    /// As the scheme's split.
    fn lean(rules: &R, parent: &Mesh, level: u32, par: Par) -> Result<Option<(Self, R::Step)>>;
    /// The full mesh of this lean child of `parent`, reusing what it holds
    /// where the scheme can.
    ///
    /// # Errors
    /// As [`LevelRules::child`].
    fn into_full(self, rules: &R, parent: &Mesh, par: Par) -> Result<Mesh>;
    /// The counts of this lean child (its vertices are its rows).
    fn counts(&self) -> Counts;
    /// The faces of the level above this lean child of `parent`; `step` is
    /// the step above the lean child.
    ///
    /// # Errors
    /// As the scheme's split.
    fn faces(&self, rules: &R, parent: &Mesh, step: &R::Step, par: Par) -> Result<FinestFaces>;
    /// One level of eval from this lean child of `parent` (rows `x`) to the
    /// level above (rows `y`), bit for bit as [`LevelRules::eval_level`]
    /// over the child's full mesh.
    #[allow(clippy::too_many_arguments)]
    fn eval<T: Float + Send + Sync>(
        &self,
        rules: &R,
        parent: &Topology,
        step: &R::Step,
        x: &[T],
        y: &mut [T],
        d: usize,
        par: Par,
    );
    /// An upper bound of the nonzeros of the operator of the step above
    /// this lean child, from counts alone, where the scheme gives one.
    fn operator_bound(&self, rules: &R, step: &R::Step) -> Option<u64> {
        let _ = (rules, step);
        None
    }
}

/// The [`LevelRules::Lean`] of schemes without lean kernels: no value
/// exists, so [`LeanLevel::lean`] can only answer `None`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoLean {}

impl<R: LevelRules> LeanLevel<R> for NoLean {
    fn lean(_: &R, _: &Mesh, _: u32, _: Par) -> Result<Option<(NoLean, R::Step)>> {
        Ok(None)
    }
    fn into_full(self, _: &R, _: &Mesh, _: Par) -> Result<Mesh> {
        match self {}
    }
    fn counts(&self) -> Counts {
        match *self {}
    }
    fn faces(&self, _: &R, _: &Mesh, _: &R::Step, _: Par) -> Result<FinestFaces> {
        match *self {}
    }
    fn eval<T: Float + Send + Sync>(&self, _: &R, _: &Topology, _: &R::Step, _: &[T], _: &mut [T], _: usize, _: Par) {
        match *self {}
    }
}

/// A built refinement of a [`LevelRules`] scheme (static mode: all
/// levels).
///
/// Levels below the finest are kept with their full connectivity (eval
/// reads it), except that the level just below the finest is kept in the
/// scheme's lean form where it has one ([`LeanLevel::lean`]): known
/// through its parent, its full mesh derived on the first call that needs
/// it ([`Plan::refined`], [`Plan::operator`], [`LevelPlan::step`]). The
/// finest level keeps only its faces, and derives its full mesh on the
/// first call of [`Plan::refined`] (as OpenSubdiv's `TopologyRefiner` does
/// without `fullTopologyInLastLevel`). Derivations use the caller's
/// [`Par`] and return their errors; a failed one is tried again by the
/// next call.
pub struct LevelPlan<R: LevelRules> {
    rules: R,
    /// The index of level 0, counted from the control mesh of the first
    /// build.
    first_level: u32,
    /// Levels `0..L` (level 0 alone when `L = 0`), the last possibly lean.
    stored: LevelMeshes<R::Lean>,
    /// Masks of each step `l → l+1`.
    steps: Vec<R::Step>,
    /// Level `L` when `L ≥ 1`.
    finest: Option<FinestFaces>,
}

impl<R: LevelRules> Clone for LevelPlan<R> {
    fn clone(&self) -> Self {
        LevelPlan {
            rules: self.rules.clone(),
            first_level: self.first_level,
            stored: self.stored.clone(),
            steps: self.steps.clone(),
            finest: self.finest.clone(),
        }
    }
}

impl<R: LevelRules> fmt::Debug for LevelPlan<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LevelPlan")
            .field("rules", &self.rules)
            .field("first_level", &self.first_level)
            .field("stored", &self.stored)
            .field("steps", &self.steps)
            .field("finest", &self.finest)
            .finish()
    }
}

impl<R: LevelRules> LevelPlan<R> {
    /// The plan of `levels` levels over a mesh that already carries
    /// effective sharpness (the scheme's prepared level 0, or any level of
    /// another plan as [`Plan::refined`] gives it), without preparing it
    /// again; its level 0 is level `first_level` of the refinement (0 for
    /// a control mesh).
    ///
    /// # Errors
    /// As [`LevelRules::masks`], [`LevelRules::child`],
    /// [`LevelRules::child_faces`] and [`LeanLevel::lean`].
    pub fn from_prepared(rules: R, base: Mesh, first_level: u32, levels: u32, par: Par) -> Result<Self> {
        // Refused before anything is built where a level would overflow.
        check_levels(&rules, base.topology(), first_level, levels)?;
        let n = levels as usize;
        let mut meshes = Vec::new();
        let mut steps = Vec::new();
        meshes.push(base);
        let plan = |stored, steps, finest| LevelPlan { rules: rules.clone(), first_level, stored, steps, finest };
        if n == 0 {
            return Ok(plan(LevelMeshes::new(meshes), steps, None));
        }
        for l in 0..n - 1 {
            let abs = first_level + l as u32;
            let step = rules.masks(&meshes[l], abs, par)?;
            if l + 2 == n
                && let Some((lean, lean_step)) = R::Lean::lean(&rules, &meshes[l], abs, par)?
            {
                let finest = lean.faces(&rules, &meshes[l], &lean_step, par)?;
                steps.extend([step, lean_step]);
                return Ok(plan(LevelMeshes::with_lean(meshes, lean), steps, Some(finest)));
            }
            let child = rules.child(&meshes[l], &step, par)?;
            steps.push(step);
            meshes.push(child);
        }
        let last = &meshes[n - 1];
        let step = rules.masks(last, first_level + levels - 1, par)?;
        let finest = rules.child_faces(last, &step, par)?;
        steps.push(step);
        Ok(plan(LevelMeshes::new(meshes), steps, Some(finest)))
    }

    /// The one-level plan over this plan's finest level (modeling mode's
    /// step): the finest mesh is taken if it was derived; else, where the
    /// scheme has lean kernels for it, the new plan keeps its level 0 in
    /// lean form over the finest level's parent; else the finest mesh is
    /// derived from its parent. The rest of this plan is dropped first.
    ///
    /// # Errors
    /// As [`LevelPlan::from_prepared`].
    pub fn next(mut self, par: Par) -> Result<Self> {
        let rules = self.rules.clone();
        let first = self.first_level + self.levels();
        let finest = match self.finest.take() {
            None => {
                let base = self.stored.into_mesh(0, |p, l| l.into_full(&rules, p, par))?;
                return Self::from_prepared(rules, base, first, 1, par);
            }
            Some(f) => f.into_full(),
        };
        if let Some(mesh) = finest {
            drop(self);
            return Self::from_prepared(rules, mesh, first, 1, par);
        }
        let last = self.levels().checked_sub(1).ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        let step = self.steps.swap_remove(last as usize);
        self.steps.clear();
        let parent = self.stored.into_mesh(last, |p, l| l.into_full(&rules, p, par))?;
        if let Some((lean, lean_step)) = R::Lean::lean(&rules, &parent, first - 1, par)? {
            let finest = lean.faces(&rules, &parent, &lean_step, par)?;
            drop(step);
            let stored = LevelMeshes::lean_over(parent, lean);
            return Ok(LevelPlan { rules, first_level: first, stored, steps: vec![lean_step], finest: Some(finest) });
        }
        let child = rules.child(&parent, &step, par)?;
        drop((parent, step));
        Self::from_prepared(rules, child, first, 1, par)
    }

    /// The rules.
    pub fn rules(&self) -> &R {
        &self.rules
    }

    /// The index of this plan's level 0, counted from the control mesh of
    /// the first build: 0 for a plan from a build; for a plan from a
    /// modeling step, the previous plan's first level plus its levels.
    pub fn first_level(&self) -> u32 {
        self.first_level
    }

    /// The level kept in lean form (the one below the finest, where the
    /// scheme's lean kernels apply to it), if any: its connectivity is
    /// derived only when [`Plan::refined`], [`Plan::faces`],
    /// [`Plan::operator`] or [`LevelPlan::step`] ask for it.
    pub fn lean_level(&self) -> Option<u32> {
        self.stored.lean_level()
    }

    /// The masks of step `level → level+1`, or `None` past the last.
    pub fn masks(&self, level: u32) -> Option<&R::Step> {
        self.steps.get(level as usize)
    }

    /// Step `level → level+1`: the parent level and the step's masks. A
    /// lean parent's full mesh is derived (with `par`) on first use.
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`] past the last step; the derivation's
    /// errors.
    pub fn step(&self, level: u32, par: Par) -> Result<(&Mesh, &R::Step)> {
        let step = self.steps.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        Ok((self.stored_mesh(level, par)?, step))
    }

    /// The full mesh of stored level `level` (below the finest).
    fn stored_mesh(&self, level: u32, par: Par) -> Result<&Mesh> {
        let levels = self.levels();
        self.stored
            .mesh(level, |p, l| l.into_full(&self.rules, p, par))?
            .ok_or(SchemeError::NoSuchLevel { level, levels })
    }

    fn eval_generic<T: Float + Zeroable + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        // Every level below the finest is a full mesh or the lean level.
        let name = self.rules.name();
        eval_levels(self, name, control, out, |l, x, y, d| match self.stored.full_meshes().get(l) {
            Some(m) => self.rules.eval_level(m.topology(), &self.steps[l], x, y, d, par),
            None => {
                if let Some((parent, lean)) = self.stored.lean() {
                    lean.eval(&self.rules, parent.topology(), &self.steps[l], x, y, d, par);
                }
            }
        })
    }
}

impl<R: LevelRules> Plan for LevelPlan<R> {
    fn name(&self) -> &'static str {
        self.rules.name()
    }
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        if let Some(m) = self.stored.full_meshes().get(level as usize) {
            return m.num_vertices();
        }
        match self.stored.lean() {
            Some((_, lean)) if self.stored.lean_level() == Some(level) => lean.counts().vertices,
            _ if level == self.levels() => self.finest.as_ref().map_or(0, FinestFaces::num_vertices),
            _ => 0,
        }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let (parent, step) = self.step(level, par)?;
        self.rules.operator(parent.topology(), step, par)
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        let (parent, step) = self.step(level, par)?;
        crate::check_rows(rows, self.level_len(level + 1))?;
        self.rules.operator_rows(parent.topology(), step, rows, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        let step = self.steps.get(level as usize)?;
        match self.stored.full_meshes().get(level as usize) {
            Some(m) => Some(self.rules.operator_bound(m.topology(), step)),
            None => self.stored.lean().and_then(|(_, lean)| lean.operator_bound(&self.rules, step)),
        }
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let step = self.steps.get(level as usize)?;
        if row >= self.level_len(level + 1) {
            return None;
        }
        let counts = match self.stored.full_meshes().get(level as usize) {
            Some(m) => Counts::of(m.topology()),
            None => self.stored.lean()?.1.counts(),
        };
        self.rules.child_point(counts, step, row)
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        // The closed forms read every level's full mesh; a plan with a lean
        // level goes through the product of its level matrices instead.
        if self.steps.is_empty() || self.stored.lean_level().is_some() {
            return Ok(None);
        }
        self.rules.closed_form(self.stored.full_meshes(), par)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.refined(self.levels(), par)?;
        self.rules.limit(finest, par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        let levels = self.levels();
        match &self.finest {
            Some(f) if level == levels => f.full(|| {
                let (parent, step) = self.step(level - 1, par)?;
                self.rules.child(parent, step, par)
            }),
            _ if level <= levels => self.stored_mesh(level, par),
            _ => Err(SchemeError::NoSuchLevel { level, levels }),
        }
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        match &self.finest {
            Some(f) if level == self.levels() => Ok(f.faces()),
            _ => self.refined(level, par).map(Faces::of),
        }
    }
}

/// What the algebra ("LAK") path of a level-by-level scheme provides to
/// [`AlgebraPlan`]: how to build one level (its matrices and maps, and the
/// child mesh) and how to evaluate it. The refinement and limit matrices
/// are those of the scheme's [`LevelRules`] (`Matrices`): the same rules,
/// so the two paths hand out the same operators.
pub trait AlgebraRules: Clone + fmt::Debug + Send + Sync + 'static {
    /// What eval needs for one level.
    type Level: Clone + fmt::Debug + Send + Sync;
    /// The rules whose matrices the plan hands out.
    type Matrices: LevelRules;
    /// The scheme's name in messages (`"catmark-lak"`, `"loop-lak"`).
    fn name(&self) -> &'static str;
    /// The rules whose matrices the plan hands out.
    fn matrices(&self) -> Self::Matrices;
    /// The level above `parent` (level `level`, counted from the control
    /// mesh of the first build) and the child mesh (full connectivity,
    /// effective sharpness).
    ///
    /// # Errors
    /// Input the algebra cannot hold, named by element.
    fn build_level(&self, parent: &Mesh, level: u32, par: Par) -> Result<(Self::Level, Mesh)>;
    /// One level of eval: `x` (parent rows) → `y` (child rows).
    fn eval_level<T: Float + Scalar + Send + Sync>(
        &self,
        level: &Self::Level,
        x: ArrayView2<'_, T>,
        y: ArrayViewMut2<'_, T>,
        par: Par,
    );
}

/// A built refinement of an [`AlgebraRules`] scheme: every level's mesh
/// (the finest included) and the data of each level's eval. Eval chains
/// the levels through owned intermediate arrays, as the algebra computes
/// them.
pub struct AlgebraPlan<R: AlgebraRules> {
    rules: R,
    first_level: u32,
    /// Meshes of levels `0..=L`.
    meshes: Vec<Mesh>,
    /// The data of each step `l → l+1`.
    levels: Vec<R::Level>,
    /// The [`LevelRules`] masks of each step, made on first use (by the
    /// operators, their bounds and [`Plan::child_point`]).
    masks: Vec<OnceLock<<R::Matrices as LevelRules>::Step>>,
}

impl<R: AlgebraRules> Clone for AlgebraPlan<R> {
    fn clone(&self) -> Self {
        AlgebraPlan {
            rules: self.rules.clone(),
            first_level: self.first_level,
            meshes: self.meshes.clone(),
            levels: self.levels.clone(),
            masks: self.masks.clone(),
        }
    }
}

impl<R: AlgebraRules> fmt::Debug for AlgebraPlan<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlgebraPlan")
            .field("rules", &self.rules)
            .field("first_level", &self.first_level)
            .field("meshes", &self.meshes)
            .field("levels", &self.levels)
            .finish()
    }
}

impl<R: AlgebraRules> AlgebraPlan<R> {
    /// The plan of `levels` levels over a mesh that already carries
    /// effective sharpness, whose level 0 is level `first_level` of the
    /// refinement.
    ///
    /// # Errors
    /// As [`AlgebraRules::build_level`].
    pub fn from_prepared(rules: R, base: Mesh, first_level: u32, levels: u32, par: Par) -> Result<Self> {
        // Refused before anything is built where a level would overflow.
        check_levels(&rules.matrices(), base.topology(), first_level, levels)?;
        let mut meshes = Vec::new();
        let mut data = Vec::new();
        meshes.push(base);
        for l in 0..levels as usize {
            let (level, child) = rules.build_level(&meshes[l], first_level + l as u32, par)?;
            data.push(level);
            meshes.push(child);
        }
        let masks = data.iter().map(|_| OnceLock::new()).collect();
        Ok(AlgebraPlan { rules, first_level, meshes, levels: data, masks })
    }

    /// The one-level plan over this plan's finest level (modeling mode's
    /// step); the other levels are dropped first.
    ///
    /// # Errors
    /// As [`AlgebraRules::build_level`].
    pub fn next(mut self, par: Par) -> Result<Self> {
        let first = self.first_level + self.levels();
        let finest = self.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        let rules = self.rules.clone();
        drop(self);
        Self::from_prepared(rules, finest, first, 1, par)
    }

    /// The rules.
    pub fn rules(&self) -> &R {
        &self.rules
    }

    /// The index of this plan's level 0 (as [`LevelPlan::first_level`]).
    pub fn first_level(&self) -> u32 {
        self.first_level
    }

    fn eval_generic<T: Float + Scalar + Zeroable + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        crate::check_eval_shapes(self, self.rules.name(), control.dim(), out.dim());
        let mut cur = try_zeros::<T>(control.nrows(), control.ncols(), "a level of an evaluation")?;
        cur.assign(&control);
        for (l, lv) in self.levels.iter().enumerate() {
            let mut next = try_zeros::<T>(self.level_len(l as u32 + 1), control.ncols(), "a level of an evaluation")?;
            self.rules.eval_level(lv, cur.view(), next.view_mut(), par);
            cur = next;
        }
        out.assign(&cur);
        Ok(())
    }

    /// The parent mesh of step `level` and its masks.
    fn step(&self, level: u32, par: Par) -> Result<(&Mesh, &<R::Matrices as LevelRules>::Step)> {
        let missing = SchemeError::NoSuchLevel { level, levels: self.levels() };
        let (Some(parent), Some(cell)) = (self.meshes.get(level as usize), self.masks.get(level as usize)) else {
            return Err(missing);
        };
        let masks =
            crate::once::get_or_try_init(cell, || self.rules.matrices().masks(parent, self.first_level + level, par))?;
        Ok((parent, masks))
    }
}

impl<R: AlgebraRules> Plan for AlgebraPlan<R> {
    fn name(&self) -> &'static str {
        self.rules.name()
    }
    fn levels(&self) -> u32 {
        self.levels.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, Mesh::num_vertices)
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let (parent, step) = self.step(level, par)?;
        self.rules.matrices().operator(parent.topology(), step, par)
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        let (parent, step) = self.step(level, par)?;
        crate::check_rows(rows, self.level_len(level + 1))?;
        self.rules.matrices().operator_rows(parent.topology(), step, rows, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        let (parent, step) = self.step(level, Par::Seq).ok()?;
        Some(self.rules.matrices().operator_bound(parent.topology(), step))
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let (parent, step) = self.step(level, Par::Seq).ok()?;
        if row >= self.level_len(level + 1) {
            return None;
        }
        self.rules.matrices().child_point(Counts::of(parent.topology()), step, row)
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        match self.levels() as usize {
            0 => Ok(None),
            l => self.rules.matrices().closed_form(&self.meshes[..l], par),
        }
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.meshes.last().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        self.rules.matrices().limit(finest, par)
    }
    fn refined(&self, level: u32, _par: Par) -> Result<&Mesh> {
        self.meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }
}
