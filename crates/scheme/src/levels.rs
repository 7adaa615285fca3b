//! The plans of schemes that refine level by level over full meshes
//! (Catmull-Clark, Loop).
//!
//! * [`LevelPlan`], the specialised-kernel path: the meshes of levels
//!   `0..L` with their full connectivity (eval reads it), the masks of each
//!   step, and the finest level as faces only ([`FinestFaces`]). A scheme
//!   supplies its rules through [`LevelRules`].
//! * [`AlgebraPlan`], the algebra path: every level's mesh and the matrices
//!   its eval multiplies, from the scheme's [`AlgebraRules`]; its
//!   refinement and limit matrices are the [`LevelRules`]' ones.
//!
//! Both do the rest: building the stack, [`Plan`], and the one-level step
//! of modeling mode.

use std::fmt;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::{CsrMat, Par, Scalar};
use subla_mesh::{Mesh, Topology};

use crate::kernel::eval_levels;
use crate::refinement::ClosedForm;
use crate::stored::LevelMeshes;
use crate::{Faces, FinestFaces, Plan, Result, SchemeError};

/// What a level-by-level scheme provides to [`LevelPlan`]. Every function
/// reads one parent level: a mesh with its full connectivity and its
/// effective sharpness.
pub trait LevelRules: 'static {
    /// The scheme's name in messages (`"catmark"`, `"loop"`).
    const NAME: &'static str;
    /// The masks of one step `l → l+1`.
    type Step: Clone + fmt::Debug + Send + Sync;
    /// The masks of the step above `parent`.
    fn masks(parent: &Mesh, par: Par) -> Self::Step;
    /// The child level of `parent`, with full connectivity.
    ///
    /// # Errors
    /// As the scheme's split.
    fn child(parent: &Mesh, par: Par) -> Result<Mesh>;
    /// The faces of the child level of `parent`, without its connectivity.
    ///
    /// # Errors
    /// As the scheme's split.
    fn child_faces(parent: &Mesh, par: Par) -> Result<FinestFaces>;
    /// One level of eval: `x` (parent rows) → `y` (child rows), `d`
    /// channels per row.
    fn eval_level<T: Float + Send + Sync>(t: &Topology, step: &Self::Step, x: &[T], y: &mut [T], d: usize, par: Par);
    /// The matrix `R` of one step.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn operator(t: &Topology, step: &Self::Step, par: Par) -> Result<CsrMat<f64>>;
    /// Rows `rows` of [`LevelRules::operator`] (each below its row count).
    /// The default builds the whole matrix and keeps those rows.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn operator_rows(t: &Topology, step: &Self::Step, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        Ok(Self::operator(t, step, par)?.as_ref().select_major(rows))
    }
    /// An upper bound of the nonzeros of [`LevelRules::operator`], from the
    /// counts alone.
    fn operator_bound(t: &Topology) -> u64;
    /// The rows of the composed matrix of the levels `meshes` (`0..L`, each
    /// with full connectivity) that the scheme knows in closed form, if
    /// any: [`Plan::closed_form`].
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn closed_form<'a>(meshes: &'a [Mesh], par: Par) -> Result<Option<Box<dyn ClosedForm + 'a>>> {
        let _ = (meshes, par);
        Ok(None)
    }
    /// The limit masks of `finest` as a square matrix.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn limit(finest: &Mesh, par: Par) -> Result<CsrMat<f64>>;

    /// A child level known through its parent: what [`LevelRules::lean`]
    /// gives (schemes without lean kernels use [`NoLean`]).
    type Lean: Clone + fmt::Debug + Send + Sync;
    /// The child of `parent` in lean form, with the masks of the step above
    /// it, where the scheme's lean kernels apply to it; `None` elsewhere.
    /// A plan keeps the level below its finest in this form when it can:
    /// eval and the finest faces read it through its parent, and its full
    /// mesh is derived only if asked for.
    ///
    /// # Errors
    /// As the scheme's split.
    fn lean(parent: &Mesh, par: Par) -> Result<Option<(Self::Lean, Self::Step)>>;
    /// The full mesh of the lean child `lean` of `parent`: as
    /// [`LevelRules::child`] (the default, which ignores `lean`), reusing
    /// what `lean` already holds where the scheme can.
    ///
    /// # Errors
    /// As [`LevelRules::child`].
    fn lean_child(parent: &Mesh, lean: Self::Lean, par: Par) -> Result<Mesh> {
        let _ = lean;
        Self::child(parent, par)
    }
    /// Number of vertices of the lean child `lean`.
    fn lean_len(lean: &Self::Lean) -> usize;
    /// The faces of the level above the lean child `lean` of `parent`.
    ///
    /// # Errors
    /// As the scheme's split.
    fn lean_faces(parent: &Mesh, lean: &Self::Lean, par: Par) -> Result<FinestFaces>;
    /// One level of eval from the lean child `lean` of `parent` (rows `x`)
    /// to the level above (rows `y`), bit for bit as
    /// [`LevelRules::eval_level`] over the child's full mesh.
    #[allow(clippy::too_many_arguments)]
    fn lean_eval<T: Float + Send + Sync>(
        parent: &Topology,
        lean: &Self::Lean,
        step: &Self::Step,
        x: &[T],
        y: &mut [T],
        d: usize,
        par: Par,
    );
}

/// The [`LevelRules::Lean`] of schemes without lean kernels: no value
/// exists, so [`LevelRules::lean`] can only answer `None`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoLean {}

/// A built refinement of a [`LevelRules`] scheme (static mode: all
/// levels).
///
/// Levels below the finest are kept with their full connectivity (eval
/// reads it), except that the level just below the finest is kept in the
/// scheme's lean form where it has one ([`LevelRules::lean`]): known
/// through its parent, its full mesh derived on the first call that needs
/// it ([`Plan::refined`], [`Plan::operator`], [`LevelPlan::step`]). The
/// finest level keeps only its faces, and derives its full mesh on the
/// first call of [`Plan::refined`] (as OpenSubdiv's `TopologyRefiner` does
/// without `fullTopologyInLastLevel`).
pub struct LevelPlan<R: LevelRules> {
    /// Levels `0..L` (level 0 alone when `L = 0`), the last possibly lean.
    stored: LevelMeshes<R::Lean>,
    /// Masks of each step `l → l+1`.
    steps: Vec<R::Step>,
    /// Level `L` when `L ≥ 1`.
    finest: Option<FinestFaces>,
}

impl<R: LevelRules> Clone for LevelPlan<R> {
    fn clone(&self) -> Self {
        LevelPlan { stored: self.stored.clone(), steps: self.steps.clone(), finest: self.finest.clone() }
    }
}

impl<R: LevelRules> fmt::Debug for LevelPlan<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LevelPlan")
            .field("scheme", &R::NAME)
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
    /// again.
    ///
    /// # Errors
    /// As [`LevelRules::child`], [`LevelRules::child_faces`] and
    /// [`LevelRules::lean`].
    pub fn from_prepared(base: Mesh, levels: u32, par: Par) -> Result<Self> {
        let levels = levels as usize;
        let mut meshes = Vec::with_capacity(levels.max(1));
        let mut steps = Vec::with_capacity(levels);
        meshes.push(base);
        if levels == 0 {
            return Ok(LevelPlan { stored: LevelMeshes::new(meshes, R::lean_child), steps, finest: None });
        }
        for l in 0..levels - 1 {
            steps.push(R::masks(&meshes[l], par));
            if l + 2 == levels
                && let Some((data, step)) = R::lean(&meshes[l], par)?
            {
                let finest = R::lean_faces(&meshes[l], &data, par)?;
                steps.push(step);
                let stored = LevelMeshes::with_lean(meshes, data, R::lean_child);
                return Ok(LevelPlan { stored, steps, finest: Some(finest) });
            }
            let child = R::child(&meshes[l], par)?;
            meshes.push(child);
        }
        let last = &meshes[levels - 1];
        steps.push(R::masks(last, par));
        let finest = Some(R::child_faces(last, par)?);
        Ok(LevelPlan { stored: LevelMeshes::new(meshes, R::lean_child), steps, finest })
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
        let missing = || SchemeError::NoSuchLevel { level: 0, levels: 0 };
        let finest = match self.finest.take() {
            None => return Self::from_prepared(self.stored.into_mesh(0, par)?, 1, par),
            Some(f) => f.into_full(),
        };
        if let Some(mesh) = finest {
            drop(self);
            return Self::from_prepared(mesh, 1, par);
        }
        let last = self.levels().checked_sub(1).ok_or_else(missing)?;
        let parent = self.stored.into_mesh(last, par)?;
        if let Some((data, step)) = R::lean(&parent, par)? {
            let finest = R::lean_faces(&parent, &data, par)?;
            let stored = LevelMeshes::lean_over(parent, data, R::lean_child);
            return Ok(LevelPlan { stored, steps: vec![step], finest: Some(finest) });
        }
        let child = R::child(&parent, par)?;
        drop(parent);
        Self::from_prepared(child, 1, par)
    }

    /// The level kept in lean form (the one below the finest, where the
    /// scheme's lean kernels apply to it), if any: its connectivity is
    /// derived only when [`Plan::refined`], [`Plan::faces`],
    /// [`Plan::operator`] or [`LevelPlan::step`] ask for it.
    pub fn lean_level(&self) -> Option<u32> {
        self.stored.lean_level()
    }

    /// Step `level → level+1`: the parent level and the step's masks, or
    /// `None` past the last (or if a lean parent's full mesh could not be
    /// derived).
    pub fn step(&self, level: u32) -> Option<(&Mesh, &R::Step)> {
        let step = self.steps.get(level as usize)?;
        Some((self.stored.mesh(level)?, step))
    }

    fn eval_generic<T: Float + Zeroable + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        // Every level below the finest is a full mesh or the lean level.
        eval_levels(self, R::NAME, control, out, |l, x, y, d| match self.stored.full_meshes().get(l) {
            Some(m) => R::eval_level(m.topology(), &self.steps[l], x, y, d, par),
            None => {
                if let Some((parent, lean)) = self.stored.lean() {
                    R::lean_eval(parent.topology(), lean, &self.steps[l], x, y, d, par);
                }
            }
        });
    }
}

impl<R: LevelRules> Plan for LevelPlan<R> {
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        if let Some(m) = self.stored.full_meshes().get(level as usize) {
            return m.num_vertices();
        }
        match self.stored.lean() {
            Some((_, lean)) if self.stored.lean_level() == Some(level) => R::lean_len(lean),
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
        let (parent, step) = self.step_or_err(level)?;
        R::operator(parent.topology(), step, par)
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        let (parent, step) = self.step_or_err(level)?;
        crate::check_rows(rows, self.level_len(level + 1))?;
        R::operator_rows(parent.topology(), step, rows, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.step(level).map(|(parent, _)| R::operator_bound(parent.topology()))
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        // The closed forms read every level's full mesh; a plan with a lean
        // level goes through the product of its level matrices instead.
        if self.steps.is_empty() || self.stored.lean_level().is_some() {
            return Ok(None);
        }
        R::closed_form(self.stored.full_meshes(), par)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.refined(self.levels()).ok_or(SchemeError::Unsupported {
            scheme: R::NAME,
            reason: "the finest level's connectivity could not be derived".into(),
        })?;
        R::limit(finest, par)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        if level < self.levels() || self.finest.is_none() {
            return self.stored.mesh(level);
        }
        let f = self.finest.as_ref().filter(|_| level == self.levels())?;
        let parent = self.stored.mesh(level - 1)?;
        f.full(|| R::child(parent, Par::Rayon).ok())
    }
    fn faces(&self, level: u32) -> Option<Faces<'_>> {
        match &self.finest {
            Some(f) if level == self.levels() => Some(f.faces()),
            _ => self.stored.mesh(level).map(Faces::of),
        }
    }
}

impl<R: LevelRules> LevelPlan<R> {
    /// [`LevelPlan::step`], or the error saying why there is none.
    fn step_or_err(&self, level: u32) -> Result<(&Mesh, &R::Step)> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        self.step(level).ok_or(SchemeError::Unsupported {
            scheme: R::NAME,
            reason: format!("the connectivity of level {level} could not be derived"),
        })
    }
}

/// What the algebra ("LAK") path of a level-by-level scheme provides to
/// [`AlgebraPlan`]: how to build one level (its matrices and maps, and the
/// child mesh) and how to evaluate it. The refinement and limit matrices
/// are those of the scheme's [`LevelRules`] (`Matrices`): the same rules,
/// so the two paths hand out the same operators.
pub trait AlgebraRules: 'static {
    /// The scheme's name in messages (`"catmark"`, `"loop-lak"`).
    const NAME: &'static str;
    /// What eval needs for one level.
    type Level: Clone + fmt::Debug + Send + Sync;
    /// The rules whose matrices the plan hands out.
    type Matrices: LevelRules;
    /// The level above `parent` and the child mesh (full connectivity,
    /// effective sharpness).
    ///
    /// # Errors
    /// Input the algebra cannot hold, named by element.
    fn build_level(parent: &Mesh, par: Par) -> Result<(Self::Level, Mesh)>;
    /// One level of eval: `x` (parent rows) → `y` (child rows).
    fn eval_level<T: Float + Scalar + Send + Sync>(
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
    /// Meshes of levels `0..=L`.
    meshes: Vec<Mesh>,
    /// The data of each step `l → l+1`.
    levels: Vec<R::Level>,
}

impl<R: AlgebraRules> Clone for AlgebraPlan<R> {
    fn clone(&self) -> Self {
        AlgebraPlan { meshes: self.meshes.clone(), levels: self.levels.clone() }
    }
}

impl<R: AlgebraRules> fmt::Debug for AlgebraPlan<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlgebraPlan")
            .field("scheme", &R::NAME)
            .field("meshes", &self.meshes)
            .field("levels", &self.levels)
            .finish()
    }
}

impl<R: AlgebraRules> AlgebraPlan<R> {
    /// The plan of `levels` levels over a mesh that already carries
    /// effective sharpness.
    ///
    /// # Errors
    /// As [`AlgebraRules::build_level`].
    pub fn from_prepared(base: Mesh, levels: u32, par: Par) -> Result<Self> {
        let mut meshes = Vec::with_capacity(levels as usize + 1);
        let mut data = Vec::with_capacity(levels as usize);
        meshes.push(base);
        for l in 0..levels as usize {
            let (level, child) = R::build_level(&meshes[l], par)?;
            data.push(level);
            meshes.push(child);
        }
        Ok(AlgebraPlan { meshes, levels: data })
    }

    /// The one-level plan over this plan's finest level (modeling mode's
    /// step); the other levels are dropped first.
    ///
    /// # Errors
    /// As [`AlgebraRules::build_level`].
    pub fn next(mut self, par: Par) -> Result<Self> {
        let finest = self.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        drop(self);
        Self::from_prepared(finest, 1, par)
    }

    fn eval_generic<T: Float + Scalar + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        crate::check_eval_shapes(self, R::NAME, control.dim(), out.dim());
        let mut cur = control.to_owned();
        for (l, lv) in self.levels.iter().enumerate() {
            let mut next = Array2::<T>::zeros((self.level_len(l as u32 + 1), control.ncols()));
            R::eval_level(lv, cur.view(), next.view_mut(), par);
            cur = next;
        }
        out.assign(&cur);
    }

    /// The parent mesh of step `level`.
    fn parent(&self, level: u32) -> Result<&Mesh> {
        self.meshes
            .get(level as usize)
            .filter(|_| level < self.levels())
            .ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }
}

impl<R: AlgebraRules> Plan for AlgebraPlan<R> {
    fn levels(&self) -> u32 {
        self.levels.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, Mesh::num_vertices)
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let parent = self.parent(level)?;
        R::Matrices::operator(parent.topology(), &R::Matrices::masks(parent, par), par)
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        let parent = self.parent(level)?;
        crate::check_rows(rows, self.level_len(level + 1))?;
        R::Matrices::operator_rows(parent.topology(), &R::Matrices::masks(parent, par), rows, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.parent(level).ok().map(|parent| R::Matrices::operator_bound(parent.topology()))
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        match self.levels() as usize {
            0 => Ok(None),
            l => R::Matrices::closed_form(&self.meshes[..l], par),
        }
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.meshes.last().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        R::Matrices::limit(finest, par)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        self.meshes.get(level as usize)
    }
}
