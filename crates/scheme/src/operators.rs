//! The generic plan of a scheme written as one linear operator per level:
//! a new scheme is its rules and nothing else.
//!
//! A researcher's scheme refines a mesh once and says how the new points
//! are made from the old ones: the child mesh and the refinement matrix
//! `R_i` (Mlakar et al. 2020, §6.3). [`OperatorRules::refine`] is that one
//! function; [`OperatorRefiner`] turns it into a [`Refiner`] whose
//! [`OperatorPlan`] does the bookkeeping every scheme needs — the level
//! stack, eval as one SpMV per level (or the scheme's own kernel, where it
//! gives one), the operators, modeling-mode steps, and the contract checks
//! of [`testing`](crate#contract).
//!
//! ```
//! use subla_algebra::{CsrMat, Par};
//! use subla_mesh::Mesh;
//! use subla_scheme::{OperatorRefiner, OperatorRules, Plan, Refined, Refiner, Result, eval};
//!
//! /// A "scheme" that moves nothing: the identity on the same mesh.
//! #[derive(Clone, Debug)]
//! struct Same;
//!
//! impl OperatorRules for Same {
//!     fn name(&self) -> &'static str {
//!         "same"
//!     }
//!     fn refine(&self, parent: &Mesh, _par: Par) -> Result<Refined> {
//!         let n = parent.num_vertices();
//!         let trips: Vec<_> = (0..n).map(|v| (v, v, 1.0)).collect();
//!         Ok(Refined { operator: CsrMat::try_from_triplets(n, n, &trips)?, mesh: parent.clone() })
//!     }
//! }
//!
//! let mesh = Mesh::from_faces(3, &[[0, 1, 2]])?;
//! let plan = OperatorRefiner(Same).build(&mesh, 2, Par::Rayon)?;
//! let x = ndarray::array![[0.0], [1.0], [2.0]];
//! assert_eq!(eval(&plan, x.view(), Par::Rayon)?, x);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::Arc;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::spmv::{Update, spmv_csr_into};
use subla_algebra::{CsrMat, Par, Scalar};
use subla_mesh::Mesh;

use crate::kernel::{real, try_zeros};
use crate::{ChildPoint, Plan, Refiner, Result, SchemeError};

/// One refined level: the child mesh and the matrix `R_i` that makes its
/// points from the parent's (`child vertices × parent vertices`).
#[derive(Clone, Debug)]
pub struct Refined {
    /// `R_i`.
    pub operator: CsrMat<f64>,
    /// The child mesh.
    pub mesh: Mesh,
}

/// A subdivision scheme written as one linear operator per level: what
/// [`OperatorRefiner`] needs. The rules are a value (they may carry
/// options), cloned once into each plan built.
pub trait OperatorRules: Clone + Send + Sync + 'static {
    /// The scheme's name in messages and tables.
    fn name(&self) -> &'static str;
    /// Refines `parent` once.
    ///
    /// # Errors
    /// Input the scheme does not accept (a typed [`SchemeError`] naming the
    /// element; [`SchemeError::scheme`] carries an error type of the
    /// scheme's own), sizes over `u32`.
    fn refine(&self, parent: &Mesh, par: Par) -> Result<Refined>;
    /// The control mesh as level 0 sees it (checks, effective sharpness);
    /// the input as it is by default.
    ///
    /// # Errors
    /// Input the scheme does not accept.
    fn prepare(&self, input: &Mesh, par: Par) -> Result<Mesh> {
        let _ = par;
        Ok(input.clone())
    }
    /// A faster eval of one level than the SpMV with `operator`, if the
    /// scheme has one: writes `y` (child rows) from `x` (parent rows) and
    /// returns `true`, or returns `false` (the default) to have the plan
    /// apply `operator`. It must agree with `operator` up to rounding, the
    /// same bits for any [`Par`].
    fn eval_level<T: Float + Scalar>(
        &self,
        parent: &Mesh,
        operator: &CsrMat<f64>,
        x: ArrayView2<'_, T>,
        y: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> bool {
        let _ = (parent, operator, x, y, par);
        false
    }
    /// Which child point row `row` of the operator over `parent` is
    /// ([`Plan::child_point`]); `None` by default.
    fn child_point(&self, parent: &Mesh, row: usize) -> Option<ChildPoint> {
        let _ = (parent, row);
        None
    }
    /// The limit masks of `finest` as a square matrix.
    ///
    /// # Errors
    /// [`SchemeError::NoLimit`] (the default) for schemes without them.
    fn limit(&self, finest: &Mesh, par: Par) -> Result<CsrMat<f64>> {
        let _ = (finest, par);
        Err(SchemeError::NoLimit { scheme: self.name() })
    }
}

/// The [`Refiner`] of an [`OperatorRules`] scheme.
#[derive(Clone, Debug, Default)]
pub struct OperatorRefiner<S>(pub S);

/// A built refinement of an [`OperatorRules`] scheme: every level's mesh
/// and every step's operator.
pub struct OperatorPlan<S> {
    rules: Arc<S>,
    meshes: Vec<Mesh>,
    operators: Vec<CsrMat<f64>>,
}

impl<S> Clone for OperatorPlan<S> {
    fn clone(&self) -> Self {
        OperatorPlan { rules: Arc::clone(&self.rules), meshes: self.meshes.clone(), operators: self.operators.clone() }
    }
}

impl<S: fmt::Debug> fmt::Debug for OperatorPlan<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperatorPlan")
            .field("rules", &self.rules)
            .field("meshes", &self.meshes)
            .field("operators", &self.operators)
            .finish()
    }
}

impl<S: OperatorRules> OperatorPlan<S> {
    /// The plan of `levels` levels over `base` (already prepared).
    ///
    /// # Errors
    /// As [`OperatorRules::refine`].
    pub fn over(rules: Arc<S>, base: Mesh, levels: u32, par: Par) -> Result<Self> {
        let mut plan = OperatorPlan { rules, meshes: vec![base], operators: Vec::new() };
        for _ in 0..levels {
            plan.push_level(par)?;
        }
        Ok(plan)
    }

    /// The rules.
    pub fn rules(&self) -> &S {
        &self.rules
    }

    /// The operators `R_0 … R_{L−1}`.
    pub fn operators(&self) -> &[CsrMat<f64>] {
        &self.operators
    }

    /// Refines the finest level once more.
    fn push_level(&mut self, par: Par) -> Result<()> {
        let finest = self.meshes.last().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        let Refined { operator, mesh } = self.rules.refine(finest, par)?;
        let (rows, cols) = (mesh.num_vertices(), finest.num_vertices());
        if operator.shape() != (rows, cols) {
            return Err(SchemeError::Internal {
                what: "OperatorRules::refine",
                detail: format!(
                    "{}: the operator is {:?}, the levels need {rows} x {cols}",
                    self.rules.name(),
                    operator.shape()
                ),
            });
        }
        self.operators.push(operator);
        self.meshes.push(mesh);
        Ok(())
    }

    fn eval_generic<T: Float + Scalar + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        crate::check_eval_shapes(self, self.rules.name(), control.dim(), out.dim());
        let Some((last, head)) = self.operators.split_last() else {
            out.assign(&control);
            return Ok(());
        };
        let d = control.ncols();
        let level = |l: usize, r: &CsrMat<f64>, x: ArrayView2<'_, T>, y: ArrayViewMut2<'_, T>| {
            let mut y = y;
            if !self.rules.eval_level(&self.meshes[l], r, x, y.view_mut(), par) {
                spmv_csr_into(r.as_ref(), x, y, Update::Set, |&w, _, _| real::<T>(w), par);
            }
        };
        let mut cur: Option<Array2<T>> = None;
        for (l, r) in head.iter().enumerate() {
            let mut next = try_zeros::<T>(r.nrows(), d, "a level of an evaluation")?;
            level(l, r, cur.as_ref().map_or(control.view(), |c| c.view()), next.view_mut());
            cur = Some(next);
        }
        level(head.len(), last, cur.as_ref().map_or(control.view(), |c| c.view()), out);
        Ok(())
    }
}

impl<S: OperatorRules> Refiner for OperatorRefiner<S> {
    type Input = Mesh;
    type Plan = OperatorPlan<S>;
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<OperatorPlan<S>> {
        let base = self.0.prepare(input, par)?;
        OperatorPlan::over(Arc::new(self.0.clone()), base, levels, par)
    }
    fn step(&self, mut plan: OperatorPlan<S>, par: Par) -> Result<OperatorPlan<S>> {
        let finest = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        let rules = Arc::clone(&plan.rules);
        drop(plan);
        OperatorPlan::over(rules, finest, 1, par)
    }
}

impl<S: OperatorRules> Plan for OperatorPlan<S> {
    fn name(&self) -> &'static str {
        self.rules.name()
    }
    fn levels(&self) -> u32 {
        self.operators.len() as u32
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
    fn operator(&self, level: u32, _par: Par) -> Result<CsrMat<f64>> {
        let levels = self.levels();
        self.operators.get(level as usize).cloned().ok_or(SchemeError::NoSuchLevel { level, levels })
    }
    fn operator_rows(&self, level: u32, rows: &[u32], _par: Par) -> Result<CsrMat<f64>> {
        let levels = self.levels();
        let r = self.operators.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels })?;
        crate::check_rows(rows, r.nrows())?;
        Ok(r.as_ref().select_major(rows))
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.operators.get(level as usize).map(|r| r.nnz() as u64)
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        if row >= self.level_len(level + 1) {
            return None;
        }
        self.rules.child_point(self.meshes.get(level as usize).filter(|_| level < self.levels())?, row)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let finest = self.meshes.last().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        self.rules.limit(finest, par)
    }
    fn refined(&self, level: u32, _par: Par) -> Result<&Mesh> {
        self.meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }
}
