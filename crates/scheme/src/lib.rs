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
//!   `R_i` (§6.3), so `P_{i+1} = R_i P_i`; [`Plan::child_point`] says which
//!   point each of its rows is; [`Plan::refined`] the refined topology
//!   where the scheme has one.
//!
//! Writing a scheme takes one of three forms, from the least code to the
//! most control:
//! * [`OperatorRules`]: one function that refines a mesh once and returns
//!   the child mesh with its `R_i`; [`OperatorRefiner`] does the rest
//!   (`docs/own-scheme.md`, and the Doo–Sabin example, are written so);
//! * [`LevelRules`] (with an optional [`LeanLevel`]): masks, a split and
//!   gather kernels per level, planned by [`LevelPlan`] (Catmull-Clark,
//!   bilinear, Loop, √3); [`AlgebraRules`] for the algebra paths;
//! * [`Refiner`] and [`Plan`] themselves, for anything else.
//!
//! Errors are [`SchemeError`]'s typed variants; none is told apart by its
//! message. [`DynRefiner`] is the type-erased form a registry of schemes
//! holds.
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
//!    passed to `eval` are caller errors and panic naming the operands;
//! 6. nothing is computed elsewhere than asked, silently: a backend that
//!    cannot evaluate (a device failure, a precision it does not compute
//!    in) returns the error, or — only where the caller allowed it
//!    ([`FallbackPolicy::Cpu`]) — evaluates elsewhere and says so
//!    ([`Plan::last_fallback`]);
//! 7. no error is dropped: data a plan derives on first use (a level's full
//!    mesh) is derived with the caller's [`Par`] and its errors are
//!    returned ([`Plan::refined`]).
//!
//! # What else the contract covers
//! The traits are written for the schemes to come as well; each fits
//! without a change to them:
//! * **Inputs that are not surface meshes.** [`Refiner::Input`] is any type:
//!   a volumetric hexahedral mesh for Catmull-Clark solids, whose levels
//!   are cell meshes. Their plans answer [`Plan::refined`] (a surface
//!   [`Mesh`]) with [`SchemeError::NoMesh`] and hand out their own
//!   topology through their own accessors; every other method keeps its
//!   meaning, rows being the points of the volume.
//! * **Outputs that are sample points.** Evaluating the limit surface at
//!   `(face, u, v)` or the limit volume at `(cell, u, v, w)` is a plan of
//!   one step: level 0 the control points, level 1 the samples
//!   (`output_len()` of them, derivatives as further rows or channels of
//!   the same linear map), `operator(0)` the sparse matrix of the limit
//!   stencils, [`Plan::refined`] of level 1 [`SchemeError::NoMesh`], and
//!   [`Refiner::step`] [`SchemeError::NoMesh`]. The sample parameters are
//!   part of the input type (`Input = (Mesh, Samples)`).
//! * **Plans built adaptively.** A plan refined only around features
//!   (feature-adaptive subdivision) numbers its levels as a uniform one
//!   does; `level_len(l)` is the sparse level's row count and `operator(l)`
//!   maps the rows of level `l` to those of `l + 1`, including rows that
//!   are copied unchanged. [`Plan::child_point`] may answer `None` for
//!   such rows.
//! * **Kernels with implicit connectivity.** A plan need not keep a
//!   [`Mesh`] for any level below its finest: eval reads whatever the
//!   kernels need (closed-form indices, edge-friend tables), and
//!   [`Plan::refined`] and [`Plan::faces`] derive a mesh on first use, with
//!   the caller's [`Par`], or return [`SchemeError::NoMesh`].
//!
//! The `testing` feature exports the `testing` module, whose checks verify
//! this contract generically (`testing::check_contract` for CPU plans,
//! `check_dyn` and `check_child_points` besides); each implementation's
//! test suite runs them.
#![deny(missing_docs)]

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::mem::{Zeroable, try_zeroed_vec};
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, MeshError};
use thiserror::Error;

pub use finest::FinestFaces;
pub use levels::{AlgebraPlan, AlgebraRules, Counts, LeanLevel, LevelPlan, LevelRules, NoLean};
pub use once::get_or_try_init;
pub use operators::{OperatorPlan, OperatorRefiner, OperatorRules, Refined};
pub use predict::{LevelCounts, Prediction, predict};

mod finest;
pub mod fvar;
pub mod halfedge;
pub mod kernel;
mod levels;
mod once;
mod operators;
pub mod predict;
pub mod refinement;
pub mod sdc;
mod stored;
pub mod tangents;
pub mod tensor;
#[cfg(feature = "testing")]
pub mod testing;

/// Errors of building or evaluating a plan. Every variant is a distinct
/// failure a caller can match on; none is told apart by its message.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SchemeError {
    /// The input mesh is not acceptable (the mesh crate's error, naming the
    /// element).
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// A sparse-matrix operation failed (sizes, shapes).
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
    /// A scheme that refines triangles only was given another face: the
    /// source is [`MeshError::NotTriangle`], naming the face.
    #[error("{scheme} refines triangles only: {source} (`Mesh::triangulated` splits such faces)")]
    NotTriangles {
        /// The scheme.
        scheme: &'static str,
        /// The face that is not a triangle.
        #[source]
        source: Box<MeshError>,
    },
    /// A scheme that needs a manifold, consistently oriented mesh was given
    /// another one: the source names the edge or vertex
    /// ([`MeshError::NonManifoldEdge`], [`MeshError::NonManifoldVertex`],
    /// [`MeshError::InconsistentOrientation`]).
    #[error("{scheme} needs a manifold, consistently oriented mesh: {source}")]
    NotManifold {
        /// The scheme.
        scheme: &'static str,
        /// The offending element.
        #[source]
        source: Box<MeshError>,
    },
    /// A face of more vertices than the kernels take.
    #[error("{scheme}: face {face} has {order} vertices, over the {max} the kernels take")]
    FaceTooLarge {
        /// The scheme.
        scheme: &'static str,
        /// The face.
        face: usize,
        /// Its number of vertices.
        order: usize,
        /// The largest order the kernels take.
        max: usize,
    },
    /// √3's boundary-splitting step found a face with several boundary
    /// edges (only one is possible after a first √3 step).
    #[error("{scheme}: face {face} has {edges} boundary edges on a boundary-splitting step (at most one is possible)")]
    BoundaryFace {
        /// The scheme.
        scheme: &'static str,
        /// The face.
        face: usize,
        /// Its number of boundary edges.
        edges: usize,
    },
    /// A count does not fit the `u32` indices used throughout (this is not
    /// a memory budget: see [`SchemeError::OverBudget`]).
    #[error("{what} = {value} does not fit in a u32 index")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// Its value.
        value: u128,
    },
    /// The mesh carries a tag the scheme has no rule for (it would be
    /// ignored, and the output silently not what the tag asks for).
    #[error("{scheme} cannot honour the `{tag}` tag ({element}): remove the tag, or refine with {honoured_by}")]
    UnsupportedTag {
        /// The scheme.
        scheme: &'static str,
        /// The tag, as a shape file names it (`"crease"`, `"corner"`,
        /// `"interpolateboundary"`, …).
        tag: &'static str,
        /// The first element carrying it, or its value.
        element: String,
        /// Schemes that honour it.
        honoured_by: &'static str,
    },
    /// A specialised kernel's encoding cannot hold a feature of this mesh
    /// that other paths of the same scheme support (a hole or an isolated
    /// vertex for Catmull-Clark's edge-friend kernel): refine it with one
    /// of those.
    #[error("{scheme} cannot hold {feature} ({element}): refine with {supported_by}")]
    Unsupported {
        /// The kernel.
        scheme: &'static str,
        /// The feature (`"a hole"`, `"an isolated vertex"`, …).
        feature: &'static str,
        /// The first element carrying it.
        element: String,
        /// Paths that support it.
        supported_by: &'static str,
    },
    /// The algebra path cannot hold this mesh (a face that repeats a
    /// vertex, or an edge used by more than two faces or twice in one
    /// direction: its matrices hold one entry per directed edge), although
    /// the kernel path takes it. The source names the face or edge.
    #[error(
        "{scheme}: the algebra path cannot refine this mesh ({source}); the kernel path (Path::Kernels / `--path slak` in the tool) can"
    )]
    AlgebraPathLimit {
        /// The scheme.
        scheme: &'static str,
        /// What the algebra cannot hold, naming the element.
        #[source]
        source: Box<MeshError>,
    },
    /// A refined level would have more elements than the `u32` indices
    /// hold: found from the counts before anything is built.
    #[error(
        "{scheme}: level {level} would have {value} {what}, more than the 4294967295 that 32-bit indices hold (ask for fewer levels)"
    )]
    LevelTooLarge {
        /// The scheme.
        scheme: &'static str,
        /// The first level that would overflow.
        level: u32,
        /// What overflows (`"vertices"`, `"edges"`, `"faces"`, `"corners"`).
        what: &'static str,
        /// Its predicted count.
        value: u128,
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
    /// A row asked of an operator does not exist.
    #[error("row {row} (entry {entry} of the list) asked for, but the operator has {rows} rows")]
    NoSuchRow {
        /// The row.
        row: u32,
        /// Its place in the list of rows asked for.
        entry: usize,
        /// Rows of the operator.
        rows: usize,
    },
    /// The scheme has no limit masks.
    #[error("{scheme} has no limit masks")]
    NoLimit {
        /// The scheme.
        scheme: &'static str,
    },
    /// The plan produces no refined mesh (a plan whose output is sample
    /// points, such as limit evaluation), so there is nothing to refine
    /// further or to hand out.
    #[error("{scheme} produces no refined mesh")]
    NoMesh {
        /// The scheme.
        scheme: &'static str,
    },
    /// Rows a scheme writes in closed form are not rows of a matrix:
    /// columns out of order or range, or a tensor row whose patch or
    /// positions do not exist.
    #[error("row {row} of the closed form is not a valid row (columns out of order or range, or no such patch)")]
    InvalidClosedFormRow {
        /// The row of the composed matrix.
        row: usize,
    },
    /// A tensor-product patch whose columns are not strictly ascending
    /// and in range, or whose grid is not a permutation of `0..16`.
    #[error(
        "tensor patch {patch}: columns must be strictly ascending and below {ncols}, the grid a permutation of 0..16"
    )]
    InvalidTensorPatch {
        /// The patch.
        patch: usize,
        /// Columns of the matrix.
        ncols: usize,
    },
    /// The refinement was built as the composed matrix alone
    /// ([`Refinement::composed_of`](refinement::Refinement::composed_of),
    /// [`Refinement::tensor_of`](refinement::Refinement::tensor_of)): it
    /// has no per-level matrices to evaluate or to append the limit
    /// operator to.
    #[error(
        "the refinement was built as the composed matrix alone: it has no per-level matrices (build it with Refinement::chain)"
    )]
    NoChain,
    /// The refinement has no rows in tensor-product form, which
    /// [`Evaluation::Tensor`](refinement::Evaluation::Tensor) and
    /// [`Evaluation::Separable`](refinement::Evaluation::Separable) need.
    #[error("the refinement has no rows in tensor-product form (compose it with a plan whose closed form has them)")]
    NoTensorRows,
    /// A refinement and a plan that do not belong together.
    #[error(
        "the refinement ({levels} levels, {input} -> {output} rows) was not built from this plan ({plan_levels} levels, {plan_input} -> {plan_output} rows)"
    )]
    PlanMismatch {
        /// Levels of the refinement.
        levels: usize,
        /// Rows the refinement reads.
        input: usize,
        /// Rows it writes.
        output: usize,
        /// Levels of the plan.
        plan_levels: u32,
        /// Rows the plan reads.
        plan_input: usize,
        /// Rows it writes.
        plan_output: usize,
    },
    /// The device failed (or refused a buffer over one of its limits). The
    /// source is the GPU crate's own error (`subla_gpu::GpuError`; reach it
    /// with [`std::error::Error::source`] and `downcast_ref`).
    #[error("{scheme}: the device failed: {source}")]
    Device {
        /// The scheme.
        scheme: &'static str,
        /// The device's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The backend does not compute in the precision asked for (a GPU plan
    /// asked for `f64`), and no fallback was allowed.
    #[error("{scheme} computes in {computes}, not {requested} (evaluate in {computes}, or allow a CPU fallback)")]
    Precision {
        /// The scheme.
        scheme: &'static str,
        /// What was asked for.
        requested: &'static str,
        /// What the backend computes in.
        computes: &'static str,
    },
    /// A type-erased refiner ([`DynRefiner`]) was handed a plan it did not
    /// build.
    #[error("{scheme} was handed a plan of another scheme ({plan})")]
    ForeignPlan {
        /// The refiner.
        scheme: &'static str,
        /// The plan's name ([`Plan::name`]).
        plan: &'static str,
    },
    /// A scheme of its own (written outside subla) refused its input: the
    /// source is that scheme's error type (reach it with `downcast_ref`).
    #[error("{scheme}: {source}")]
    Scheme {
        /// The scheme.
        scheme: &'static str,
        /// Its error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// An invariant of subla itself did not hold: a bug, to be reported.
    #[error("internal error in {what}: {detail}")]
    Internal {
        /// Where.
        what: &'static str,
        /// What did not hold.
        detail: String,
    },
}

impl SchemeError {
    /// A device failure of `scheme` (the GPU crates' `GpuError`).
    pub fn device(scheme: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        SchemeError::Device { scheme, source: Box::new(source) }
    }

    /// A failure of a scheme written outside subla, carrying its own error
    /// type.
    pub fn scheme(scheme: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        SchemeError::Scheme { scheme, source: Box::new(source) }
    }

    /// The device's own error of a [`SchemeError::Device`], as type `E`
    /// (`subla_gpu::GpuError` for subla's GPU crates): `None` for other
    /// variants or another type.
    pub fn device_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            SchemeError::Device { source, .. } => source.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// `n` as a `u32` index, or [`SchemeError::TooLarge`] naming `what`.
    ///
    /// # Errors
    /// [`SchemeError::TooLarge`] if `n` does not fit.
    pub fn to_u32(what: &'static str, n: usize) -> Result<u32> {
        u32::try_from(n).map_err(|_| SchemeError::TooLarge { what, value: n as u128 })
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = SchemeError> = std::result::Result<T, E>;

/// A subdivision scheme or specialised kernel: builds [`Plan`]s from
/// topology alone.
///
/// See the [crate docs](crate) for the contract every implementation keeps,
/// and [`DynRefiner`] for the type-erased form a registry of schemes holds.
pub trait Refiner: Sync {
    /// What the build step reads: a [`Mesh`] for surface schemes; a
    /// volumetric mesh, or a mesh with parameters to sample, for others.
    type Input: ?Sized;
    /// What it produces.
    type Plan: Plan;
    /// Short name (`"catmark-slak"`, `"loop"`, …) for messages and tables.
    fn name(&self) -> &'static str;
    /// Builds `levels` levels of refinement (static mode).
    ///
    /// # Errors
    /// Input this scheme does not accept (a typed [`SchemeError`] naming
    /// the element), sizes over `u32` ([`SchemeError::TooLarge`]) or over
    /// a budget ([`SchemeError::OverBudget`]), device failures
    /// ([`SchemeError::Device`]).
    fn build(&self, input: &Self::Input, levels: u32, par: Par) -> Result<Self::Plan>;
    /// Modeling mode (§6.1): consumes `plan` and builds one level on top of
    /// its finest level, keeping nothing of the levels below. The new plan
    /// has one level, whose input is the old plan's output.
    ///
    /// # Errors
    /// [`SchemeError::NoMesh`] for plans without a refined topology (limit
    /// evaluation), or as [`Refiner::build`].
    fn step(&self, plan: Self::Plan, par: Par) -> Result<Self::Plan>;
    /// What a build of `levels` levels over `input` would make, from
    /// counts alone and without building anything ([`predict()`]): every
    /// level's counts and bounds of the per-level operators, for a caller
    /// to refuse a build over its memory budget. `Ok(None)` (the default)
    /// where the scheme does not predict.
    ///
    /// # Errors
    /// [`SchemeError::LevelTooLarge`] where a level would not fit the
    /// `u32` indices (as [`Refiner::build`] would refuse it).
    fn predict(&self, input: &Self::Input, levels: u32) -> Result<Option<Prediction>> {
        let _ = (input, levels);
        Ok(None)
    }
}

/// A built refinement: topology fixed, vertex data free.
///
/// Levels are numbered `0 ..= levels()`: level 0 is what the build read,
/// each step `l → l + 1` a linear map `R_l`. A plan whose output is not a
/// refined mesh (sample points of the limit surface or volume) has one
/// step, from the control points to the samples, and answers
/// [`Plan::refined`] and [`Plan::faces`] of its output with
/// [`SchemeError::NoMesh`].
pub trait Plan: Send + Sync {
    /// The scheme's name in messages; the type's name by default.
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
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
    /// `control` (`input_len() × d`). Every value of `out` is written,
    /// whatever it held: a buffer can be reused from frame to frame.
    ///
    /// # Errors
    /// Only where the backend can fail: a device failure
    /// ([`SchemeError::Device`]), or a precision the backend does not
    /// compute in ([`SchemeError::Precision`]). CPU plans never fail.
    ///
    /// # Panics
    /// If the shapes disagree.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()>;
    /// Applies the map to `f32` data.
    ///
    /// # Errors
    /// As [`Plan::eval_f64`].
    ///
    /// # Panics
    /// If the shapes disagree.
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()>;
    /// The map from level `level` to `level + 1` as a sparse matrix `R_i`
    /// (CSR, `level_len(level+1) × level_len(level)`).
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`], sizes over `u32`, or the errors of
    /// deriving a level's connectivity the plan keeps in lean form.
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>>;
    /// Rows `rows` of [`Plan::operator`]`(level)`, in that order, as a
    /// `rows.len() × level_len(level)` matrix: what
    /// [`Refinement::composed_of`](refinement::Refinement::composed_of) multiplies
    /// where it needs only some rows. The default builds the whole operator
    /// and keeps those rows.
    ///
    /// # Errors
    /// As [`Plan::operator`]; [`SchemeError::NoSuchRow`] for a row out of
    /// range.
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
    /// Which point of level `level + 1` row `row` of `operator(level)` is
    /// (the vertex point of a parent vertex, the edge point of a parent
    /// edge, …), where the scheme says; `None` past the levels or rows, or
    /// for schemes that do not say. Edges are numbered as the parent
    /// level's [`Topology`](subla_mesh::Topology) numbers them.
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let _ = (level, row);
        None
    }
    /// The map from the finest level's data to its limit positions, as an
    /// `output_len() × output_len()` matrix (compose it with the operators
    /// for control → limit).
    ///
    /// # Errors
    /// [`SchemeError::NoLimit`] for schemes without limit masks (the
    /// default).
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        let _ = par;
        Err(SchemeError::NoLimit { scheme: self.name() })
    }
    /// The mesh at `level` (0 ..= levels) as the scheme sees it. Its
    /// sharpness is the *effective* sharpness the scheme uses (boundary and
    /// non-manifold edges infinitely sharp, for example). A plan that keeps
    /// a level in a lean form (only its faces, or known through its parent)
    /// derives the full mesh on the first call, with `par`, and keeps it;
    /// a failed derivation is returned, not kept, so a later call tries
    /// again.
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`]; [`SchemeError::NoMesh`] for plans that
    /// produce no mesh; the derivation's errors.
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh>;
    /// The faces at `level` (0 ..= levels) without the rest of the
    /// connectivity. Plans that keep only the faces of a level hand them
    /// out here without deriving its full mesh. The default is the faces of
    /// [`Plan::refined`].
    ///
    /// # Errors
    /// As [`Plan::refined`]; a device plan's readback errors.
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.refined(level, par).map(Faces::of)
    }
    /// Where the last evaluation ran instead of where it was asked to, if
    /// it fell back (only plans built with a fallback allowed do: a GPU
    /// plan that may evaluate on the CPU when the device fails). `None`
    /// (the default) when it ran where asked.
    fn last_fallback(&self) -> Option<Fallback> {
        None
    }
}

impl<P: Plan + ?Sized> Plan for Box<P> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn levels(&self) -> u32 {
        (**self).levels()
    }
    fn level_len(&self, level: u32) -> usize {
        (**self).level_len(level)
    }
    fn input_len(&self) -> usize {
        (**self).input_len()
    }
    fn output_len(&self) -> usize {
        (**self).output_len()
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        (**self).eval_f64(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        (**self).eval_f32(control, out, par)
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        (**self).operator(level, par)
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        (**self).operator_rows(level, rows, par)
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn refinement::ClosedForm + '_>>> {
        (**self).closed_form(par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        (**self).operator_bound(level)
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        (**self).child_point(level, row)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        (**self).limit(par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        (**self).refined(level, par)
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        (**self).faces(level, par)
    }
    fn last_fallback(&self) -> Option<Fallback> {
        (**self).last_fallback()
    }
}

/// The plan of a kernel that hands the inputs it does not hold (a
/// non-manifold mesh, a boundary) to another plan, with the reason: what
/// the edge-friend and halfedge refiners build. Implement [`Plan`] for a
/// type holding one with [`forward_plan!`] over [`WithFallback::plan`].
#[derive(Debug)]
pub enum WithFallback<P, K> {
    /// The kernel's own plan.
    Own(P),
    /// The other plan, and why the kernel did not hold the input.
    Fallback {
        /// The plan that holds the input.
        plan: Box<K>,
        /// The kernel's error for the input.
        because: SchemeError,
    },
}

impl<P: Plan, K: Plan> WithFallback<P, K> {
    /// Builds with `own`; where it fails with an error `hands_over`
    /// accepts and `strict` is false, with `fallback`, keeping the error.
    ///
    /// # Errors
    /// `own`'s error where it is not handed over; `fallback`'s.
    pub fn build(
        own: impl FnOnce() -> Result<P>,
        fallback: impl FnOnce() -> Result<K>,
        strict: bool,
        hands_over: impl Fn(&SchemeError) -> bool,
    ) -> Result<Self> {
        match own() {
            Ok(p) => Ok(WithFallback::Own(p)),
            Err(e) if !strict && hands_over(&e) => {
                Ok(WithFallback::Fallback { plan: Box::new(fallback()?), because: e })
            }
            Err(e) => Err(e),
        }
    }
    /// One modeling step of whichever plan this is.
    ///
    /// # Errors
    /// The step's.
    pub fn step(self, own: impl FnOnce(P) -> Result<P>, fallback: impl FnOnce(K) -> Result<K>) -> Result<Self> {
        Ok(match self {
            WithFallback::Own(p) => WithFallback::Own(own(p)?),
            WithFallback::Fallback { plan, because } => {
                WithFallback::Fallback { plan: Box::new(fallback(*plan)?), because }
            }
        })
    }
    /// Why the other plan holds the input, if it does.
    pub fn because(&self) -> Option<&SchemeError> {
        match self {
            WithFallback::Fallback { because, .. } => Some(because),
            WithFallback::Own(_) => None,
        }
    }
    /// The plan that answers.
    pub fn plan(&self) -> &dyn Plan {
        match self {
            WithFallback::Own(p) => p,
            WithFallback::Fallback { plan, .. } => plan.as_ref(),
        }
    }
}

/// What [`forward_plan!`] names, reachable from other crates.
#[doc(hidden)]
pub mod __forward {
    pub use ndarray::{ArrayView2, ArrayViewMut2};
    pub use subla_algebra::{CsrMat, Par};
    pub use subla_mesh::Mesh;
}

/// Implements [`Plan`] for a type whose method `fn plan(&self) -> &dyn
/// Plan` says which plan answers (a kernel's plan that falls back to
/// another for the inputs it does not hold), forwarding every method; with
/// `name = NAME`, the type's name is `NAME` whichever plan answers.
#[macro_export]
macro_rules! forward_plan {
    ($t:ty) => {
        $crate::forward_plan!(@impl $t, |p: &$t| p.plan().name());
    };
    ($t:ty, name = $name:expr) => {
        $crate::forward_plan!(@impl $t, |_: &$t| $name);
    };
    (@impl $t:ty, $name:expr) => {
        impl $crate::Plan for $t {
            fn name(&self) -> &'static str {
                ($name)(self)
            }
            fn levels(&self) -> u32 {
                self.plan().levels()
            }
            fn level_len(&self, level: u32) -> usize {
                self.plan().level_len(level)
            }
            fn input_len(&self) -> usize {
                self.plan().input_len()
            }
            fn output_len(&self) -> usize {
                self.plan().output_len()
            }
            fn eval_f64(
                &self,
                control: $crate::__forward::ArrayView2<'_, f64>,
                out: $crate::__forward::ArrayViewMut2<'_, f64>,
                par: $crate::__forward::Par,
            ) -> $crate::Result<()> {
                self.plan().eval_f64(control, out, par)
            }
            fn eval_f32(
                &self,
                control: $crate::__forward::ArrayView2<'_, f32>,
                out: $crate::__forward::ArrayViewMut2<'_, f32>,
                par: $crate::__forward::Par,
            ) -> $crate::Result<()> {
                self.plan().eval_f32(control, out, par)
            }
            fn operator(
                &self,
                level: u32,
                par: $crate::__forward::Par,
            ) -> $crate::Result<$crate::__forward::CsrMat<f64>> {
                self.plan().operator(level, par)
            }
            fn operator_rows(
                &self,
                level: u32,
                rows: &[u32],
                par: $crate::__forward::Par,
            ) -> $crate::Result<$crate::__forward::CsrMat<f64>> {
                self.plan().operator_rows(level, rows, par)
            }
            fn closed_form(
                &self,
                par: $crate::__forward::Par,
            ) -> $crate::Result<Option<Box<dyn $crate::refinement::ClosedForm + '_>>> {
                self.plan().closed_form(par)
            }
            fn operator_bound(&self, level: u32) -> Option<u64> {
                self.plan().operator_bound(level)
            }
            fn child_point(&self, level: u32, row: usize) -> Option<$crate::ChildPoint> {
                self.plan().child_point(level, row)
            }
            fn limit(&self, par: $crate::__forward::Par) -> $crate::Result<$crate::__forward::CsrMat<f64>> {
                self.plan().limit(par)
            }
            fn refined(&self, level: u32, par: $crate::__forward::Par) -> $crate::Result<&$crate::__forward::Mesh> {
                self.plan().refined(level, par)
            }
            fn faces(&self, level: u32, par: $crate::__forward::Par) -> $crate::Result<$crate::Faces<'_>> {
                self.plan().faces(level, par)
            }
            fn last_fallback(&self) -> Option<$crate::Fallback> {
                self.plan().last_fallback()
            }
        }
    };
}

/// What point of a refined level a row of a refinement operator `R_i`
/// computes ([`Plan::child_point`]), in terms of the parent level.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChildPoint {
    /// The vertex point of (the updated) parent vertex.
    Vertex(u32),
    /// The face point of a parent face.
    Face(u32),
    /// The edge point of a parent edge.
    Edge(u32),
    /// One of the two points that split a parent boundary edge in three
    /// (√3's boundary steps): in the parent face `face`, the one next to
    /// the edge's first vertex (`index` 0) or its second (`index` 1).
    Trisection {
        /// The parent face whose boundary edge is split.
        face: u32,
        /// 0 or 1.
        index: u8,
    },
    /// The point of one corner of a parent face (dual schemes such as
    /// Doo–Sabin): corners numbered face after face, each in traversal
    /// order.
    Corner(u32),
    /// The cell point of a parent cell (volumetric schemes).
    Cell(u32),
}

impl ChildPoint {
    /// The point of row `row` of a level numbered as vertex points, then
    /// face points, then edge points (Catmull-Clark and bilinear, Mlakar et
    /// al. 2020 §3.2) over a parent of `vertices`, `faces` and `edges`;
    /// `None` past the rows.
    pub fn of_quad_split(vertices: usize, faces: usize, edges: usize, row: usize) -> Option<ChildPoint> {
        let r = u32::try_from(row).ok()?;
        if row < vertices {
            Some(ChildPoint::Vertex(r))
        } else if row < vertices + faces {
            Some(ChildPoint::Face(r - vertices as u32))
        } else if row < vertices + faces + edges {
            Some(ChildPoint::Edge(r - (vertices + faces) as u32))
        } else {
            None
        }
    }
}

/// An evaluation that ran elsewhere than it was asked to
/// ([`Plan::last_fallback`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// The plan's scheme.
    pub scheme: &'static str,
    /// Why.
    pub cause: FallbackCause,
    /// Where it ran instead (`"cpu"`).
    pub ran_on: &'static str,
}

/// Why an evaluation fell back ([`Fallback`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackCause {
    /// The device failed; the device error's message, for the log.
    Device(String),
    /// The backend does not compute in the precision asked for.
    Precision {
        /// What was asked for (`"f64"`).
        requested: &'static str,
    },
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.cause {
            FallbackCause::Device(e) => {
                write!(f, "{}: the device failed ({e}); evaluated on the {}", self.scheme, self.ran_on)
            }
            FallbackCause::Precision { requested } => {
                write!(
                    f,
                    "{}: {requested} asked for, which the device does not compute; evaluated on the {}",
                    self.scheme, self.ran_on
                )
            }
        }
    }
}

/// Whether a backend may hand work to another when it cannot do it itself
/// (a GPU refiner's device fails, or it is asked for a precision it does
/// not compute in).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum FallbackPolicy {
    /// Return the error ([`SchemeError::Device`], [`SchemeError::Precision`]).
    #[default]
    Never,
    /// Evaluate on the CPU instead, and say so ([`Plan::last_fallback`]).
    Cpu,
}

/// The fallback bookkeeping of a plan on a backend that can fail (a GPU
/// plan): the caller's [`FallbackPolicy`], and where the last evaluation
/// ran ([`Plan::last_fallback`]). One place applies the policy, so every
/// such plan refuses, falls back and reports alike.
#[derive(Debug)]
pub struct FallbackState {
    scheme: &'static str,
    policy: FallbackPolicy,
    last: std::sync::Mutex<Option<Fallback>>,
}

impl FallbackState {
    /// The state of a plan of `scheme` under `policy`, nothing evaluated
    /// yet.
    pub fn new(scheme: &'static str, policy: FallbackPolicy) -> Self {
        FallbackState { scheme, policy, last: std::sync::Mutex::new(None) }
    }

    /// The policy.
    pub fn policy(&self) -> FallbackPolicy {
        self.policy
    }

    /// Where the last evaluation ran instead of where it was asked to, if
    /// it fell back.
    pub fn last(&self) -> Option<Fallback> {
        self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn record(&self, cause: Option<FallbackCause>) {
        let record = cause.map(|cause| Fallback { scheme: self.scheme, cause, ran_on: "cpu" });
        *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = record;
    }

    /// An evaluation in `requested`, a precision the backend does not
    /// compute in (it computes in `computes`): refused, or run by `cpu`
    /// and reported.
    ///
    /// # Errors
    /// [`SchemeError::Precision`] under [`FallbackPolicy::Never`]; `cpu`'s.
    pub fn other_precision(
        &self,
        requested: &'static str,
        computes: &'static str,
        cpu: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        match self.policy {
            FallbackPolicy::Never => Err(SchemeError::Precision { scheme: self.scheme, requested, computes }),
            FallbackPolicy::Cpu => {
                cpu()?;
                self.record(Some(FallbackCause::Precision { requested }));
                Ok(())
            }
        }
    }

    /// The result of an evaluation on the device: its output (`Some`), or
    /// after a device error, that error, or `cpu` run in its place and
    /// reported (`None`: `cpu` wrote the output).
    ///
    /// # Errors
    /// [`SchemeError::Device`] under [`FallbackPolicy::Never`]; `cpu`'s.
    pub fn on_device<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        on_device: std::result::Result<T, E>,
        cpu: impl FnOnce() -> Result<()>,
    ) -> Result<Option<T>> {
        match (on_device, self.policy) {
            (Ok(y), _) => {
                self.record(None);
                Ok(Some(y))
            }
            (Err(e), FallbackPolicy::Never) => Err(SchemeError::device(self.scheme, e)),
            (Err(e), FallbackPolicy::Cpu) => {
                cpu()?;
                self.record(Some(FallbackCause::Device(e.to_string())));
                Ok(None)
            }
        }
    }
}

/// A [`Plan`] whose type can be recovered: what [`DynRefiner`] hands out,
/// so that [`DynRefiner::step_boxed`] gets its own plan back. Every
/// `'static` plan is one.
pub trait DynPlan: Plan + std::any::Any {
    /// The plan as [`std::any::Any`], for downcasting.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send + Sync>;
    /// The plan as `&dyn Plan`.
    fn as_plan(&self) -> &dyn Plan;
}

impl<P: Plan + 'static> DynPlan for P {
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send + Sync> {
        self
    }
    fn as_plan(&self) -> &dyn Plan {
        self
    }
}

/// A boxed, type-erased plan.
pub type BoxedPlan = Box<dyn DynPlan>;

/// A type-erased [`Refiner`] over input `I`, as a registry of schemes holds
/// it: every [`Refiner`] whose plans are `'static` is one. `dyn
/// DynRefiner<I>` is itself a [`Refiner`] (with [`BoxedPlan`]s), so generic
/// code ([`modeling`], the contract checks) takes it as it takes a
/// concrete refiner. The dispatch costs one virtual call per build, step
/// and eval, not per row.
pub trait DynRefiner<I: ?Sized = Mesh>: Send + Sync {
    /// As [`Refiner::name`].
    fn name(&self) -> &'static str;
    /// As [`Refiner::build`], boxed.
    ///
    /// # Errors
    /// As [`Refiner::build`].
    fn build_boxed(&self, input: &I, levels: u32, par: Par) -> Result<BoxedPlan>;
    /// As [`Refiner::step`], for a plan this refiner built.
    ///
    /// # Errors
    /// [`SchemeError::ForeignPlan`] for a plan of another type; as
    /// [`Refiner::step`].
    fn step_boxed(&self, plan: BoxedPlan, par: Par) -> Result<BoxedPlan>;
    /// As [`Refiner::predict`].
    ///
    /// # Errors
    /// As [`Refiner::predict`].
    fn predict_boxed(&self, input: &I, levels: u32) -> Result<Option<Prediction>>;
}

impl<R> DynRefiner<R::Input> for R
where
    R: Refiner + Send,
    R::Plan: 'static,
{
    fn name(&self) -> &'static str {
        Refiner::name(self)
    }
    fn build_boxed(&self, input: &R::Input, levels: u32, par: Par) -> Result<BoxedPlan> {
        Ok(Box::new(self.build(input, levels, par)?))
    }
    fn predict_boxed(&self, input: &R::Input, levels: u32) -> Result<Option<Prediction>> {
        self.predict(input, levels)
    }
    fn step_boxed(&self, plan: BoxedPlan, par: Par) -> Result<BoxedPlan> {
        let name = plan.name();
        match plan.into_any().downcast::<R::Plan>() {
            Ok(p) => Ok(Box::new(self.step(*p, par)?)),
            Err(_) => Err(SchemeError::ForeignPlan { scheme: Refiner::name(self), plan: name }),
        }
    }
}

impl<I: ?Sized> Refiner for dyn DynRefiner<I> + '_ {
    type Input = I;
    type Plan = BoxedPlan;
    fn name(&self) -> &'static str {
        DynRefiner::name(self)
    }
    fn build(&self, input: &I, levels: u32, par: Par) -> Result<BoxedPlan> {
        self.build_boxed(input, levels, par)
    }
    fn step(&self, plan: BoxedPlan, par: Par) -> Result<BoxedPlan> {
        self.step_boxed(plan, par)
    }
    fn predict(&self, input: &I, levels: u32) -> Result<Option<Prediction>> {
        self.predict_boxed(input, levels)
    }
}

/// The [`SchemeError::NotManifold`] of `scheme` for `t`, naming the first
/// element [`Topology::check_manifold`](subla_mesh::Topology::check_manifold)
/// refuses: for schemes (the algebra paths) that find a non-manifold or
/// inconsistently oriented edge by their own means. If `t` passes that
/// check, the error is [`SchemeError::Internal`] (the caller's test and the
/// mesh's disagree).
pub fn not_manifold(scheme: &'static str, t: &subla_mesh::Topology) -> SchemeError {
    match t.check_manifold() {
        Err(source) => SchemeError::NotManifold { scheme, source: Box::new(source) },
        Ok(()) => SchemeError::Internal {
            what: scheme,
            detail: "a non-manifold edge was found that the mesh's own check does not find".into(),
        },
    }
}

/// The error of an algebra path (`scheme`) for a mesh `t` whose mesh
/// matrix or directed edges its matrices cannot hold, where the kernel
/// path takes the mesh: [`SchemeError::AlgebraPathLimit`] naming the
/// element that [`Topology::check_manifold`](subla_mesh::Topology::check_manifold)
/// (or `cause`, a [`MeshError`] of the mesh matrix) refuses.
pub fn algebra_path_limit(scheme: &'static str, t: &subla_mesh::Topology, cause: Option<MeshError>) -> SchemeError {
    match cause.map_or_else(|| t.check_manifold().err(), Some) {
        Some(source) => SchemeError::AlgebraPathLimit { scheme, source: Box::new(source) },
        None => SchemeError::Internal {
            what: scheme,
            detail: "a non-manifold edge was found that the mesh's own check does not find".into(),
        },
    }
}

/// The [`SchemeError::NotTriangles`] of `scheme` for the first face of `t`
/// that is not a triangle, if any.
///
/// # Errors
/// [`SchemeError::NotTriangles`] naming the face.
pub fn check_triangles(scheme: &'static str, t: &subla_mesh::Topology) -> Result<()> {
    if t.is_triangle_only() {
        return Ok(());
    }
    let face = (0..t.num_faces()).find(|&f| t.face_order(f) != 3).unwrap_or(0);
    let source = Box::new(MeshError::NotTriangle { face, order: t.face_order(face) });
    Err(SchemeError::NotTriangles { scheme, source })
}

/// Checks that every entry of `rows` is below `n` (the rows of an
/// operator).
///
/// # Errors
/// [`SchemeError::NoSuchRow`] naming the first row out of range.
pub fn check_rows(rows: &[u32], n: usize) -> Result<()> {
    match rows.iter().position(|&r| r as usize >= n) {
        None => Ok(()),
        Some(entry) => Err(SchemeError::NoSuchRow { row: rows[entry], entry, rows: n }),
    }
}

/// A face list: what [`Plan::faces`] hands out.
///
/// Where every face has the same number of corners (the levels a uniform
/// refinement makes), the list keeps no face offsets: face `f` starts at
/// `order · f`, and [`Faces::face_ptr`] writes the offsets only when a
/// caller asks for them as an array. Two lists are equal where they have
/// the same vertex count, faces and hole flags, however their offsets are
/// kept.
#[derive(Copy, Clone, Debug)]
pub struct Faces<'a> {
    num_vertices: usize,
    starts: Starts<'a>,
    face_verts: &'a [u32],
    holes: &'a [bool],
}

/// Where the faces of a [`Faces`] start.
#[derive(Copy, Clone, Debug)]
enum Starts<'a> {
    /// Every face has this many corners (at least one).
    Uniform(usize),
    /// The start of each face, plus the end.
    Offsets(&'a [u32]),
}

impl<'a> Faces<'a> {
    /// Faces starting at `face_ptr` (the start of each face in
    /// `face_verts`, plus the end) over `num_vertices` vertices, with a
    /// hole flag per face. The caller guarantees the shapes (debug builds
    /// assert them).
    pub fn new(num_vertices: usize, face_ptr: &'a [u32], face_verts: &'a [u32], holes: &'a [bool]) -> Self {
        debug_assert!(
            face_ptr.last().is_none_or(|&e| e as usize == face_verts.len()),
            "offsets end at the corners' end"
        );
        debug_assert_eq!(holes.len(), face_ptr.len().saturating_sub(1), "one hole flag per face");
        Faces { num_vertices, starts: Starts::Offsets(face_ptr), face_verts, holes }
    }

    /// Faces of `order` corners each (`face_verts.len() / order` faces)
    /// over `num_vertices` vertices, with a hole flag per face: no offsets
    /// are kept. The caller guarantees the shapes (`order > 0`, whole
    /// faces, one flag per face, corner count within `u32`; debug builds
    /// assert them).
    pub fn uniform(num_vertices: usize, order: usize, face_verts: &'a [u32], holes: &'a [bool]) -> Self {
        debug_assert!(order > 0 && face_verts.len() % order == 0, "whole faces");
        debug_assert!(u32::try_from(face_verts.len()).is_ok(), "corner count fits in u32");
        debug_assert_eq!(holes.len(), face_verts.len() / order.max(1), "one hole flag per face");
        Faces { num_vertices, starts: Starts::Uniform(order.max(1)), face_verts, holes }
    }

    /// The faces of `mesh`.
    pub fn of(mesh: &'a Mesh) -> Self {
        let t = mesh.topology();
        Faces::new(t.num_vertices(), t.face_ptr(), t.face_verts(), mesh.holes())
    }

    /// Number of vertices (rows of data at this level).
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        match self.starts {
            Starts::Uniform(order) => self.face_verts.len() / order,
            Starts::Offsets(ptr) => ptr.len().saturating_sub(1),
        }
    }

    /// Where face `f` starts in [`Faces::face_verts`] (`f` up to
    /// [`Faces::num_faces`], which gives the end).
    #[inline]
    pub fn face_start(&self, f: usize) -> usize {
        match self.starts {
            Starts::Uniform(order) => order * f,
            Starts::Offsets(ptr) => ptr[f] as usize,
        }
    }

    /// The vertices of face `f`.
    #[inline]
    pub fn face(&self, f: usize) -> &'a [u32] {
        &self.face_verts[self.face_start(f)..self.face_start(f + 1)]
    }

    /// The faces in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a [u32]> + 'a {
        let this = *self;
        (0..self.num_faces()).map(move |f| this.face(f))
    }

    /// The corner count of every face, where all faces have the same
    /// (`None` where they are kept with offsets, even if they agree).
    pub fn uniform_order(&self) -> Option<usize> {
        match self.starts {
            Starts::Uniform(order) => Some(order),
            Starts::Offsets(_) => None,
        }
    }

    /// The start of each face in [`Faces::face_verts`], plus the end:
    /// borrowed where the list keeps them, else written now.
    pub fn face_ptr(&self) -> std::borrow::Cow<'a, [u32]> {
        match self.starts {
            Starts::Offsets(ptr) => std::borrow::Cow::Borrowed(ptr),
            Starts::Uniform(order) => {
                std::borrow::Cow::Owned((0..=self.num_faces()).map(|f| (order * f) as u32).collect())
            }
        }
    }

    /// The vertices of all faces, face after face.
    pub fn face_verts(&self) -> &'a [u32] {
        self.face_verts
    }

    /// Whether each face is a hole (to be left out of the surface).
    pub fn holes(&self) -> &'a [bool] {
        self.holes
    }
}

impl PartialEq for Faces<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.num_vertices == other.num_vertices
            && self.face_verts == other.face_verts
            && self.holes == other.holes
            && self.num_faces() == other.num_faces()
            && (0..=self.num_faces()).all(|f| self.face_start(f) == other.face_start(f))
    }
}

impl Eq for Faces<'_> {}

/// Scalars a plan evaluates: `f32` and `f64`.
pub trait Real: Copy + Send + Sync + Zeroable + num_like::Sealed + 'static {
    /// Calls the matching `eval_*` of `plan`.
    ///
    /// # Errors
    /// As [`Plan::eval_f64`].
    fn eval<P: Plan + ?Sized>(
        plan: &P,
        control: ArrayView2<'_, Self>,
        out: ArrayViewMut2<'_, Self>,
        par: Par,
    ) -> Result<()>;
    /// Zero.
    fn zero() -> Self;
}

mod num_like {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Real for f64 {
    fn eval<P: Plan + ?Sized>(
        plan: &P,
        control: ArrayView2<'_, f64>,
        out: ArrayViewMut2<'_, f64>,
        par: Par,
    ) -> Result<()> {
        plan.eval_f64(control, out, par)
    }
    fn zero() -> Self {
        0.0
    }
}

impl Real for f32 {
    fn eval<P: Plan + ?Sized>(
        plan: &P,
        control: ArrayView2<'_, f32>,
        out: ArrayViewMut2<'_, f32>,
        par: Par,
    ) -> Result<()> {
        plan.eval_f32(control, out, par)
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
/// # Errors
/// As [`Plan::eval_f64`] (CPU plans never fail);
/// [`AlgebraError::OutOfMemory`](subla_algebra::AlgebraError::OutOfMemory)
/// (in [`SchemeError::Algebra`]) where the output cannot be allocated.
///
/// # Panics
/// If `control` does not have `plan.input_len()` rows.
pub fn eval<T: Real, P: Plan + ?Sized>(plan: &P, control: ArrayView2<'_, T>, par: Par) -> Result<Array2<T>> {
    let shape = (plan.output_len(), control.ncols());
    let n = shape
        .0
        .checked_mul(shape.1)
        .ok_or(SchemeError::TooLarge { what: "output values", value: shape.0 as u128 * shape.1 as u128 })?;
    let Ok(mut out) = Array2::from_shape_vec(shape, try_zeroed_vec::<T>(n, "the output of an evaluation")?) else {
        unreachable!("a vector of rows × columns elements has that shape")
    };
    T::eval(plan, control, out.view_mut(), par)?;
    Ok(out)
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
    R: Refiner + ?Sized,
    T: Real,
{
    let mut plan = refiner.build(mesh, levels.min(1), par)?;
    let mut data = eval(&plan, control, par)?;
    for _ in 1..levels {
        plan = refiner.step(plan, par)?;
        data = eval(&plan, data.view(), par)?;
    }
    Ok((plan, data))
}

#[cfg(test)]
mod faces_tests {
    use super::Faces;

    #[test]
    fn a_uniform_list_reads_as_its_offsets() {
        let verts = [0, 1, 2, 2, 1, 3, 3, 1, 4];
        let holes = [false, true, false];
        let ptr = [0, 3, 6, 9];
        let u = Faces::uniform(5, 3, &verts, &holes);
        let o = Faces::new(5, &ptr, &verts, &holes);
        assert_eq!(u.num_faces(), 3);
        assert_eq!(u.uniform_order(), Some(3));
        assert_eq!(o.uniform_order(), None);
        assert_eq!(&*u.face_ptr(), &ptr[..]);
        assert!(matches!(o.face_ptr(), std::borrow::Cow::Borrowed(_)));
        for f in 0..3 {
            assert_eq!(u.face(f), o.face(f));
            assert_eq!(u.face_start(f + 1), 3 * (f + 1));
        }
        assert_eq!(u.iter().collect::<Vec<_>>(), o.iter().collect::<Vec<_>>());
        assert_eq!(u, o);
        // Same corners, other faces: not equal.
        let mixed = [0, 4, 6, 9];
        assert_ne!(u, Faces::new(5, &mixed, &verts, &holes));
        assert_ne!(u, Faces::uniform(6, 3, &verts, &holes));
        let empty = Faces::uniform(0, 4, &[], &[]);
        assert_eq!((empty.num_faces(), &*empty.face_ptr()), (0, &[0u32][..]));
    }
}
