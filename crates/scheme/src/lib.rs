//! The one abstraction behind every subdivision scheme and specialised
//! kernel in subla: a **build** step that depends on topology only, and an
//! **eval** step that is a linear map from control data to output data
//! (Mlakar et al. 2020, §3.2 "Combination" and §6).
//!
//! * [`Refiner::build`] takes the control topology (a [`Mesh`] for surface
//!   schemes; another input type for, say, volumetric limit evaluation) and
//!   a number of levels, and returns a [`Plan`].
//! * [`Plan::eval_f64`] / [`Plan::eval_f32`] apply the linear map to `n × d`
//!   control data (any number of channels).
//! * [`Plan::operator`] hands out the map of one level as a sparse matrix
//!   `R_i` (§6.3), so `P_{i+1} = R_i P_i`; [`Plan::refined`] the refined
//!   topology where the scheme has one.
//!
//! # Operational modes (§6)
//! *Static* topology: build all levels once, then eval repeatedly (one
//! `Plan` of `L` levels). *Modeling*: [`modeling`] builds and evaluates one
//! level at a time, keeping only the current level, for topology that
//! changes between frames.
//!
//! # Contract
//! For every implementation, on every valid input:
//! 1. `eval` writes `output_len()` rows and reads `input_len()` rows, and is
//!    exactly linear: it equals applying `operator(0)`, …,
//!    `operator(levels-1)` in turn, up to rounding of the summation order;
//! 2. results are bitwise identical for every [`Par`] and thread count, and
//!    on every run;
//! 3. every row of every operator sums to 1 (affine invariance) for
//!    subdivision and limit operators;
//! 4. `modeling` over `L` levels gives the same data and topology as a
//!    static plan of `L` levels;
//! 5. bad input is an error, never a panic; shape mismatches of the data
//!    passed to `eval` are caller errors and panic naming the operands.
//!
//! The `testing` feature exports the `testing` module, whose checks verify this
//! contract generically; each implementation's test suite runs them.
#![deny(missing_docs)]

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::mem::{Zeroable, zeroed_vec};
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, MeshError};
use thiserror::Error;

pub use finest::FinestFaces;
pub use levels::{AlgebraPlan, AlgebraRules, LevelPlan, LevelRules, NoLean};
pub use stored::{DeriveChild, LevelMeshes};

mod finest;
pub mod kernel;
mod levels;
pub mod refinement;
pub mod sdc;
mod stored;
pub mod tensor;
#[cfg(feature = "testing")]
pub mod testing;

/// Errors of building or evaluating a plan.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SchemeError {
    /// The input mesh is not acceptable to this scheme.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// A sparse-matrix size overflowed.
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
    /// The scheme cannot handle this input (for example a non-triangle face
    /// for Loop), naming the offending element.
    #[error("{scheme}: {reason}")]
    Unsupported {
        /// The scheme.
        scheme: &'static str,
        /// What is wrong, and where.
        reason: String,
    },
    /// The predicted output does not fit the memory budget.
    #[error("{what} would need {needed} bytes, over the budget of {budget} bytes")]
    OverBudget {
        /// What was being built.
        what: String,
        /// Predicted bytes.
        needed: u128,
        /// The budget.
        budget: u128,
    },
    /// The level asked for does not exist.
    #[error("level {level} requested, but the plan has {levels} levels")]
    NoSuchLevel {
        /// Requested.
        level: u32,
        /// Available.
        levels: u32,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = SchemeError> = std::result::Result<T, E>;

/// A subdivision scheme or specialised kernel: builds [`Plan`]s from
/// topology alone.
pub trait Refiner: Sync {
    /// What the build step reads: a [`Mesh`] for surface schemes.
    type Input: ?Sized;
    /// What it produces.
    type Plan: Plan;
    /// Short name (`"catmark-slak"`, `"loop"`, …) for messages and tables.
    fn name(&self) -> &'static str;
    /// Builds `levels` levels of refinement (static mode).
    ///
    /// # Errors
    /// Input this scheme does not accept, or sizes over `u32` / the budget.
    fn build(&self, input: &Self::Input, levels: u32, par: Par) -> Result<Self::Plan>;
    /// Modeling mode (§6.1): consumes `plan` and builds one level on top of
    /// its finest level, keeping nothing of the levels below. The new plan
    /// has one level, whose input is the old plan's output.
    ///
    /// # Errors
    /// [`SchemeError::Unsupported`] for plans without a refined topology
    /// (limit evaluation), or as [`Refiner::build`].
    fn step(&self, plan: Self::Plan, par: Par) -> Result<Self::Plan>;
}

/// A built refinement: topology fixed, vertex data free.
pub trait Plan: Send + Sync {
    /// Number of levels built.
    fn levels(&self) -> u32;
    /// Number of data rows at `level` (0 = control).
    fn level_len(&self, level: u32) -> usize;
    /// Rows `eval` reads.
    fn input_len(&self) -> usize {
        self.level_len(0)
    }
    /// Rows `eval` writes.
    fn output_len(&self) -> usize {
        self.level_len(self.levels())
    }
    /// Applies the map to `f64` data: `out` (`output_len() × d`) from
    /// `control` (`input_len() × d`).
    ///
    /// # Panics
    /// If the shapes disagree.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par);
    /// Applies the map to `f32` data.
    ///
    /// # Panics
    /// If the shapes disagree.
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par);
    /// The map from level `level` to `level + 1` as a sparse matrix `R_i`
    /// (CSR, `level_len(level+1) × level_len(level)`).
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`], or sizes over `u32`.
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>>;
    /// Rows `rows` of [`Plan::operator`]`(level)`, in that order, as a
    /// `rows.len() × level_len(level)` matrix: what
    /// [`Refinement::composed_of`](refinement::Refinement::composed_of) multiplies
    /// where it needs only some rows. The default builds the whole operator
    /// and keeps those rows.
    ///
    /// # Errors
    /// As [`Plan::operator`]; [`SchemeError::Unsupported`] for a row out
    /// of range.
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        let r = self.operator(level, par)?;
        check_rows(rows, r.nrows())?;
        Ok(r.as_ref().select_major(rows))
    }
    /// The rows of the composed refinement matrix `R = R_{L−1} ⋯ R_0`
    /// that the scheme writes without multiplying, if it knows any in
    /// closed form ([`refinement::ClosedForm`]); `None` (the default)
    /// otherwise.
    ///
    /// # Errors
    /// Sizes over `u32`.
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn refinement::ClosedForm + '_>>> {
        let _ = par;
        Ok(None)
    }
    /// An upper bound of the nonzeros of `operator(level)`, from counts
    /// alone (no matrix is built), where the plan can give one: for
    /// predicting memory before building.
    fn operator_bound(&self, level: u32) -> Option<u64> {
        let _ = level;
        None
    }
    /// The map from the finest level's data to its limit positions, as an
    /// `output_len() × output_len()` matrix (compose it with the operators
    /// for control → limit).
    ///
    /// # Errors
    /// [`SchemeError::Unsupported`] for schemes without limit masks.
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let _ = par;
        Err(SchemeError::Unsupported { scheme: "this scheme", reason: "it has no limit masks".into() })
    }
    /// The mesh at `level` (0 ..= levels) as the scheme sees it, if the
    /// scheme produces one (limit evaluation does not). Its sharpness is the
    /// *effective* sharpness the scheme uses (boundary and non-manifold
    /// edges infinitely sharp, for example).
    fn refined(&self, level: u32) -> Option<&Mesh>;
    /// The faces at `level` (0 ..= levels) without the rest of the
    /// connectivity, if the scheme produces a mesh. Plans may keep only the
    /// faces of their finest level and derive [`Plan::refined`] on demand;
    /// this accessor never does that work.
    fn faces(&self, level: u32) -> Option<Faces<'_>> {
        self.refined(level).map(Faces::of)
    }
}

/// Checks that every entry of `rows` is below `n` (the rows of an
/// operator).
///
/// # Errors
/// [`SchemeError::Unsupported`] naming the first row out of range.
pub fn check_rows(rows: &[u32], n: usize) -> Result<()> {
    match rows.iter().position(|&r| r as usize >= n) {
        None => Ok(()),
        Some(k) => Err(SchemeError::Unsupported {
            scheme: "operator rows",
            reason: format!("row {} (entry {k}) asked for, but the operator has {n} rows", rows[k]),
        }),
    }
}

/// A face list: what [`Plan::faces`] hands out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Faces<'a> {
    /// Number of vertices (rows of data at this level).
    pub num_vertices: usize,
    /// Start of each face in `face_verts`, plus the end.
    pub face_ptr: &'a [u32],
    /// The vertices of all faces, face after face.
    pub face_verts: &'a [u32],
    /// Whether each face is a hole (to be left out of the surface).
    pub holes: &'a [bool],
}

impl<'a> Faces<'a> {
    /// The faces of `mesh`.
    pub fn of(mesh: &'a Mesh) -> Self {
        let t = mesh.topology();
        Faces {
            num_vertices: t.num_vertices(),
            face_ptr: t.face_ptr(),
            face_verts: t.face_verts(),
            holes: mesh.holes(),
        }
    }
    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.face_ptr.len().saturating_sub(1)
    }
    /// The vertices of face `f`.
    pub fn face(&self, f: usize) -> &'a [u32] {
        &self.face_verts[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }
}

/// Scalars a plan evaluates: `f32` and `f64`.
pub trait Real: Copy + Send + Sync + Zeroable + num_like::Sealed + 'static {
    /// Calls the matching `eval_*` of `plan`.
    fn eval<P: Plan + ?Sized>(plan: &P, control: ArrayView2<'_, Self>, out: ArrayViewMut2<'_, Self>, par: Par);
    /// Zero.
    fn zero() -> Self;
}

mod num_like {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Real for f64 {
    fn eval<P: Plan + ?Sized>(plan: &P, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        plan.eval_f64(control, out, par);
    }
    fn zero() -> Self {
        0.0
    }
}

impl Real for f32 {
    fn eval<P: Plan + ?Sized>(plan: &P, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        plan.eval_f32(control, out, par);
    }
    fn zero() -> Self {
        0.0
    }
}

/// Checks the shapes of the arguments of [`Plan::eval_f64`] /
/// [`Plan::eval_f32`]: `control` needs `input_len()` rows and `out` must be
/// `output_len() × control.ncols()`.
///
/// # Panics
/// If they disagree, naming `scheme` and the shapes.
#[track_caller]
pub fn check_eval_shapes<P: Plan + ?Sized>(plan: &P, scheme: &str, control: (usize, usize), out: (usize, usize)) {
    assert_eq!(
        control.0,
        plan.input_len(),
        "{scheme} eval: control has {} rows, the plan needs {}",
        control.0,
        plan.input_len()
    );
    assert_eq!(
        out,
        (plan.output_len(), control.1),
        "{scheme} eval: out is {out:?}, the plan writes {} x {}",
        plan.output_len(),
        control.1
    );
}

/// Evaluates `plan` on `control`, allocating the output.
///
/// # Panics
/// If `control` does not have `plan.input_len()` rows.
pub fn eval<T: Real, P: Plan + ?Sized>(plan: &P, control: ArrayView2<'_, T>, par: Par) -> Array2<T> {
    let shape = (plan.output_len(), control.ncols());
    let Ok(mut out) = Array2::from_shape_vec(shape, zeroed_vec::<T>(shape.0 * shape.1)) else {
        unreachable!("a vector of rows × columns elements has that shape")
    };
    T::eval(plan, control, out.view_mut(), par);
    out
}

/// Modeling mode (§6.1): refines `levels` times, building and evaluating
/// one level at a time and keeping only the current level's data. Returns
/// the plan of the last step (its [`Plan::faces`] and [`Plan::refined`] at
/// [`Plan::levels`] are the finest level) and the finest data.
///
/// # Errors
/// As [`Refiner::build`] and [`Refiner::step`].
pub fn modeling<R, T>(
    refiner: &R,
    mesh: &R::Input,
    control: ArrayView2<'_, T>,
    levels: u32,
    par: Par,
) -> Result<(R::Plan, Array2<T>)>
where
    R: Refiner,
    T: Real,
{
    let mut plan = refiner.build(mesh, levels.min(1), par)?;
    let mut data = eval(&plan, control, par);
    for _ in 1..levels {
        plan = refiner.step(plan, par)?;
        data = eval(&plan, data.view(), par);
    }
    Ok((plan, data))
}
