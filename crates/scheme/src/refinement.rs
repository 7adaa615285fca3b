//! Static topology (Mlakar et al. 2020, §6.2–6.3): the refinement matrices
//! of a plan, their product, and evaluation of either with one sparse
//! matrix–vector product per matrix.
//!
//! * [`Refinement::chain`] builds `R_0, …, R_{L−1}` (each
//!   `level_len(i+1) × level_len(i)`, CSR) through [`Plan::operator`];
//!   [`Refinement::with_limit`] appends the limit operator.
//! * [`Refinement::compose`] multiplies them, `R = R_{L−1} ⋯ R_0` (Eq. 22),
//!   through the algebra crate's symbolic and numeric SpGEMM, predicting
//!   each product's size before building it.
//! * [`Refinement::compose_with`] and [`Refinement::composed_of`] take the
//!   rows a plan knows in closed form ([`Plan::closed_form`]) as they are;
//!   [`Refinement::tensor_of`] keeps such rows in tensor-product form
//!   ([`TensorRows`]) and stores only the others.
//! * [`Refinement::evaluator`] packs the cheaper of the two (or the one
//!   asked for) into padded CSR ([`PaddedCsr`]) for repeated evaluation in
//!   `f32` or `f64`; the product's rows in tensor-product form are
//!   evaluated from their weight table instead ([`Evaluation::Tensor`],
//!   [`Evaluation::Separable`]).
//!
//! For deep levels the composed matrix can hold more nonzeros than the
//! chain (each level multiplies the stencil sizes), so both are offered and
//! [`Evaluation::Auto`] picks by the bytes each one reads per evaluation.
//!
//! Every size is predicted before anything is allocated, and a prediction
//! over the [`Budget`] is a [`SchemeError::OverBudget`] naming what would
//! need how much.
//!
//! # Scratch and allocation
//! An [`Evaluator`] is made once per topology and applied every frame.
//! [`Evaluator::apply`] allocates its working memory on every call; a frame
//! loop asks once for [`Evaluator::scratch_len`] (values of `T` for a
//! channel count), keeps a buffer that long, and calls
//! [`Evaluator::apply_with_scratch`], which allocates nothing (a sketch;
//! `examples/static_frames.rs` is the whole program):
//!
//! ```text
//! let ev = r.evaluator::<f32>(Evaluation::Auto, 4, Budget::default(), Par::Rayon)?;
//! let mut scratch = vec![0.0f32; ev.scratch_len(4)];
//! let mut out = Array2::<f32>::zeros((ev.output_len(), 4));
//! for frame in frames {
//!     // … write this frame's control points into `control` …
//!     ev.apply_with_scratch(control.view(), out.view_mut(), &mut scratch, Par::Rayon);
//! }
//! ```
//!
//! The scratch holds, for `d` channels (`n_i` rows at level `i`):
//!
//! ```text
//!   chain R_{L-1} ⋯ R_0    levels 1 … L-1 in two buffers used in turn:
//!                          d · (max n_1, n_3, … + max n_2, n_4, …)
//!   composed matrix        nothing
//!   Tensor                 d · (rows without the tensor form)
//!                            + 4 · input rows           (d < 4: lanes)
//!   Separable              d · (rows without the tensor form)
//!                            + 4 ⌈d/4⌉ · input rows     (d ≠ 4: lanes)
//! ```
//!
//! `control` and `out` not in standard layout (row-major, contiguous) are
//! copied through the scratch as well, which then needs `input_len() · d`
//! and `output_len() · d` more. What the scratch holds before a call does
//! not matter (every value is written before it is read), and the result is
//! the same bits as [`Evaluator::apply`]'s for every [`Par`] and pool size.
//!
//! Under [`Par::Seq`] nothing is allocated. Under [`Par::Rayon`], rayon
//! allocates nothing either when the call comes from inside its pool (a
//! worker thread, as within `ThreadPool::install`): the blocks are handed
//! out by `rayon::join` and parallel iterators over ranges, whose jobs live
//! on the stack and in each worker's own deque. From a thread outside the
//! pool, each parallel section (one per matrix, two for the tensor forms,
//! where the data is large enough to be cut) is injected into the pool's
//! queue, which (crossbeam-deque's `Injector`) allocates one block of 63
//! slots, about 1.5 KB, per 63 jobs injected and frees it once they are
//! taken: one allocation every 21 frames for a chain of three matrices.
//! Run the frame loop inside `ThreadPool::install` to allocate nothing at
//! all. The first call may allocate what rayon and the standard library
//! set up once (the global pool, per-thread state).

use std::borrow::Cow;
use std::ops::Range;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::mem::try_zeroed_vec;
use subla_algebra::par::{balanced_ranges, collect, split_by_ptr};
use subla_algebra::scan::{compact, offsets_with};
use subla_algebra::spgemm;
use subla_algebra::{AlgebraError, CsrMat, PaddedCsr, Par};

use crate::tensor::{TensorEval, TensorKernel, TensorRows};
use crate::{Plan, Result, SchemeError};

/// How many bytes the matrices of a [`Refinement`] may take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The limit, in bytes.
    pub bytes: u64,
}

impl Budget {
    /// No limit.
    pub const UNLIMITED: Budget = Budget { bytes: u64::MAX };
    /// A limit of `bytes`.
    pub fn bytes(bytes: u64) -> Budget {
        Budget { bytes }
    }
    /// `Ok` if `needed` fits, else the error naming `what`.
    ///
    /// # Errors
    /// [`SchemeError::OverBudget`].
    pub fn check(&self, what: impl FnOnce() -> String, needed: u64) -> Result<()> {
        if needed > self.bytes {
            return Err(SchemeError::OverBudget { what: what(), needed: needed.into(), budget: self.bytes.into() });
        }
        Ok(())
    }
}

impl Default for Budget {
    /// 8 GiB.
    fn default() -> Self {
        Budget { bytes: 8 << 30 }
    }
}

/// Bytes of an `f64` CSR matrix of `rows` rows and `nnz` entries.
pub fn csr_bytes(rows: usize, nnz: u64) -> u64 {
    4 * (rows as u64 + 1) + 12 * nnz
}

/// Which representation an [`Evaluator`] applies.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Evaluation {
    /// The one that reads fewer bytes per evaluation (matrices plus the
    /// intermediate levels' data for the chain).
    #[default]
    Auto,
    /// The per-level matrices in turn.
    Chain,
    /// The composed matrix (built on demand).
    Composed,
    /// The rows the plan writes in tensor-product form ([`TensorRows`])
    /// from their weight table, the others from the composed matrix: the
    /// same bits as [`Evaluation::Composed`] for finite data, reading about
    /// 8 bytes per such row instead of its stored weights. Available after
    /// [`Refinement::compose_with`], [`Refinement::composed_of`] or
    /// [`Refinement::tensor_of`] with a plan whose closed form has that
    /// form.
    Tensor,
    /// The rows in tensor-product form patch by patch, factored (each
    /// patch's control points summed along one direction once per position,
    /// then each row from those four sums), the others from the composed
    /// matrix: within rounding of [`Evaluation::Composed`] (not its bits),
    /// the same bits for any thread count and on every machine, with about
    /// half the arithmetic of [`Evaluation::Tensor`] on fully refined
    /// regular patches. Available where [`Evaluation::Tensor`] is;
    /// [`Evaluation::Auto`] prefers it to the composed matrix where at
    /// least 3/4 of the rows have the form.
    Separable,
}

/// The refinement matrices of a plan: the chain of per-level matrices and,
/// once [`Refinement::compose`] ran, their product.
#[derive(Clone, Debug)]
pub struct Refinement {
    chain: Vec<CsrMat<f64>>,
    composed: Option<CsrMat<f64>>,
    input_len: usize,
    output_len: usize,
    /// Whether the chain ends with the limit operator.
    limit: bool,
    /// Built by [`Refinement::composed_of`] over at least one level: the
    /// chain is not kept.
    composed_only: bool,
    /// The composed matrix's rows in tensor-product form, where the plan's
    /// closed form had one.
    tensor: Option<TensorRows>,
    /// The composed matrix's other rows, kept apart by
    /// [`Refinement::tensor_of`] (and kept after [`Refinement::compose`]
    /// merged them with the tensor rows).
    apart: Option<OpenRows>,
}

/// The rows of the composed matrix without a closed form.
#[derive(Clone, Debug)]
struct OpenRows {
    /// Row `k` is the `k`-th such row of the composed matrix (ascending).
    mat: CsrMat<f64>,
    /// Nonzeros of the whole composed matrix.
    nnz: u64,
}

impl Refinement {
    /// The per-level matrices `R_0 … R_{L−1}` of `plan`.
    ///
    /// # Errors
    /// [`SchemeError::OverBudget`] if the predicted size (from
    /// [`Plan::operator_bound`] where the plan gives it, else as built) is
    /// over `budget`; errors of [`Plan::operator`].
    pub fn chain<P: Plan + ?Sized>(plan: &P, budget: Budget, par: Par) -> Result<Refinement> {
        let levels = plan.levels();
        let predicted: u64 =
            (0..levels).map(|l| plan.operator_bound(l).map_or(0, |nnz| csr_bytes(plan.level_len(l + 1), nnz))).sum();
        budget.check(|| format!("the {levels} refinement matrices"), predicted)?;
        let mut chain = Vec::new();
        let mut used = 0u64;
        for l in 0..levels {
            let r = plan.operator(l, par)?;
            used += csr_bytes(r.nrows(), r.nnz() as u64);
            budget.check(|| format!("the refinement matrices up to level {}", l + 1), used)?;
            chain.push(r);
        }
        Ok(Refinement {
            chain,
            composed: None,
            input_len: plan.input_len(),
            output_len: plan.output_len(),
            limit: false,
            composed_only: false,
            tensor: None,
            apart: None,
        })
    }

    /// Appends `plan`'s limit operator ([`Plan::limit`]) to the chain, so
    /// that the chain (and its product) maps control data to limit
    /// positions. Drops a product computed before.
    ///
    /// # Errors
    /// As [`Plan::limit`]; [`SchemeError::OverBudget`];
    /// [`SchemeError::NoChain`] for a refinement built as the composed
    /// matrix alone ([`Refinement::composed_of`], [`Refinement::tensor_of`]),
    /// which has no chain to append to.
    pub fn with_limit<P: Plan + ?Sized>(mut self, plan: &P, budget: Budget, par: Par) -> Result<Refinement> {
        if self.composed_only {
            return Err(SchemeError::NoChain);
        }
        // Limit masks reach no further than the faces around a vertex: at
        // most `1 + Σ (order − 1)` over its faces, that is `V + Σ_f n_f (n_f
        // − 1)` over the finest level, checked before the masks are made.
        if let Ok(f) = plan.faces(plan.levels(), par) {
            let bound =
                f.num_vertices() as u64 + f.iter().map(|c| c.len() as u64 * (c.len().max(1) as u64 - 1)).sum::<u64>();
            budget.check(
                || format!("the refinement matrices and the limit operator (up to {bound} nonzeros)"),
                self.chain_bytes().saturating_add(csr_bytes(f.num_vertices(), bound)),
            )?;
        }
        let lim = plan.limit(par)?;
        let used = self.chain_bytes() + csr_bytes(lim.nrows(), lim.nnz() as u64);
        budget.check(|| "the refinement matrices and the limit operator".into(), used)?;
        self.output_len = lim.nrows();
        self.chain.push(lim);
        self.composed = None;
        self.tensor = None;
        self.apart = None;
        self.limit = true;
        Ok(self)
    }

    /// The per-level matrices, coarsest first (none for a refinement built
    /// by [`Refinement::composed_of`]).
    pub fn levels(&self) -> &[CsrMat<f64>] {
        &self.chain
    }

    /// The per-level matrices, taken out without a copy.
    pub fn into_levels(self) -> Vec<CsrMat<f64>> {
        self.chain
    }

    /// The product, taken out without a copy, where it was built (as
    /// [`Refinement::composed`]).
    pub fn into_composed(self) -> Option<CsrMat<f64>> {
        self.composed
    }

    /// The product, if [`Refinement::compose`] ran or
    /// [`Refinement::composed_of`] built it (a refinement from
    /// [`Refinement::tensor_of`] with tensor rows has it only after
    /// [`Refinement::compose`]).
    pub fn composed(&self) -> Option<&CsrMat<f64>> {
        self.composed.as_ref()
    }

    /// Nonzeros of the product, whether it is stored as a matrix or, from
    /// [`Refinement::tensor_of`], as tensor rows and the other rows apart;
    /// `None` before it is built.
    pub fn composed_nnz(&self) -> Option<u64> {
        match (&self.composed, &self.apart) {
            (Some(c), _) => Some(c.nnz() as u64),
            (None, Some(a)) => Some(a.nnz),
            (None, None) => None,
        }
    }

    /// The product's rows in tensor-product form, kept by
    /// [`Refinement::compose_with`], [`Refinement::composed_of`] and
    /// [`Refinement::tensor_of`] where the plan's closed form has that
    /// form.
    pub fn tensor_rows(&self) -> Option<&TensorRows> {
        self.tensor.as_ref()
    }

    /// Rows of the control data.
    pub fn input_len(&self) -> usize {
        self.input_len
    }

    /// Rows of the output.
    pub fn output_len(&self) -> usize {
        self.output_len
    }

    /// Nonzeros of all per-level matrices.
    pub fn chain_nnz(&self) -> u64 {
        self.chain.iter().map(|r| r.nnz() as u64).sum()
    }

    /// Bytes of all per-level matrices.
    pub fn chain_bytes(&self) -> u64 {
        self.chain.iter().map(|r| csr_bytes(r.nrows(), r.nnz() as u64)).sum()
    }

    /// Computes (once) and returns `R = R_{L−1} ⋯ R_0`: products from the
    /// control side, each checked against `budget` (together with the
    /// chain) before it runs — by the count of collisions, an upper bound,
    /// and when that is over, by the exact count of
    /// [`spgemm::product_nnz`]. With no levels, the identity.
    ///
    /// # Errors
    /// [`SchemeError::OverBudget`]; sizes over `u32`.
    pub fn compose(&mut self, budget: Budget, par: Par) -> Result<&CsrMat<f64>> {
        if let (None, Some(part), Some(tr)) = (&self.composed, &self.apart, &self.tensor) {
            // Built by `tensor_of`: merge the tensor rows and the others.
            let (n_out, n_in) = (self.output_len, self.input_len);
            budget.check(
                || format!("the composed refinement matrix ({} nonzeros)", part.nnz),
                csr_bytes(n_out, part.nnz) + tr.bytes() + csr_bytes(part.mat.nrows(), part.mat.nnz() as u64),
            )?;
            let open = tr.open_rows(par)?;
            let merged = merge_rows(n_out, n_in, &open, |k| part.mat.row(k), tr, par)?;
            self.composed = Some(merged);
            return Ok(self.composed_ref());
        }
        self.compose_chain(None, budget, par)
    }

    /// [`Refinement::compose`] for the chain of `plan`, with the rows that
    /// `plan` writes in closed form ([`Plan::closed_form`]) taken as they
    /// are and only the others multiplied out, each through the rows of the
    /// per-level matrices it needs. The product is the same matrix (see
    /// [`ClosedForm`] for how exactly). A chain that ends with the limit
    /// operator is composed as by [`Refinement::compose`].
    ///
    /// # Errors
    /// As [`Refinement::compose`]; [`SchemeError::PlanMismatch`] if this
    /// chain was not built from a plan of `plan`'s levels and sizes.
    pub fn compose_with<P: Plan + ?Sized>(&mut self, plan: &P, budget: Budget, par: Par) -> Result<&CsrMat<f64>> {
        if self.limit || self.apart.is_some() {
            return self.compose(budget, par);
        }
        self.check_plan(plan)?;
        if self.composed.is_some() {
            return Ok(self.composed_ref());
        }
        let closed = plan.closed_form(par)?;
        self.compose_chain(closed.as_deref(), budget, par)?;
        self.tensor = closed.and_then(ClosedForm::into_tensor_rows);
        Ok(self.composed_ref())
    }

    /// Computes (once) the product of the chain, with the rows of `closed`
    /// written directly.
    fn compose_chain(&mut self, closed: Option<&dyn ClosedForm>, budget: Budget, par: Par) -> Result<&CsrMat<f64>> {
        if self.composed.is_none() {
            let chain = &self.chain;
            let composed = compose_rows(
                &Levels { count: chain.len(), input_len: self.input_len, output_len: self.output_len },
                |l, rows| Ok(select(&chain[l], rows)),
                closed,
                budget,
                self.chain_bytes(),
                false,
                par,
            )?;
            self.composed = Some(composed.into_full());
        }
        Ok(self.composed_ref())
    }

    /// The composed matrix `R = R_{L−1} ⋯ R_0` of `plan` alone, without
    /// keeping the per-level matrices: the rows `plan` writes in closed
    /// form ([`Plan::closed_form`]) are taken as they are, and the others
    /// are the products of the rows of the per-level matrices they need
    /// ([`Plan::operator_rows`]). The same matrix as
    /// [`Refinement::chain`] then [`Refinement::compose`] (see
    /// [`ClosedForm`] for how exactly); [`Refinement::levels`] is empty, so
    /// [`Evaluation::Chain`] is not available.
    ///
    /// # Errors
    /// As [`Refinement::compose`] and [`Plan::operator_rows`].
    pub fn composed_of<P: Plan + ?Sized>(plan: &P, budget: Budget, par: Par) -> Result<Refinement> {
        Self::product_of(plan, budget, false, par)
    }

    /// [`Refinement::composed_of`], with the rows `plan` writes in
    /// tensor-product form ([`TensorRows`]) kept in that form and not
    /// written into a matrix: only the other rows are multiplied out and
    /// stored. This is the cheapest build of the composed matrix for
    /// [`Evaluation::Tensor`] (and [`Evaluation::Auto`], which prefers it
    /// where at least 3/4 of the rows have it): on a regular mesh it stores
    /// 8 bytes a row instead of the matrix's 12 per nonzero.
    /// [`Refinement::compose`] merges both into the matrix
    /// ([`Refinement::composed`]) when it is wanted, for export or
    /// [`Evaluation::Composed`]; [`Refinement::composed_nnz`] counts its
    /// nonzeros before. Where the plan's closed form has no tensor form,
    /// the same as [`Refinement::composed_of`].
    ///
    /// # Errors
    /// As [`Refinement::composed_of`].
    pub fn tensor_of<P: Plan + ?Sized>(plan: &P, budget: Budget, par: Par) -> Result<Refinement> {
        Self::product_of(plan, budget, true, par)
    }

    /// [`Refinement::composed_of`] or, with `apart`,
    /// [`Refinement::tensor_of`].
    fn product_of<P: Plan + ?Sized>(plan: &P, budget: Budget, apart: bool, par: Par) -> Result<Refinement> {
        let levels =
            Levels { count: plan.levels() as usize, input_len: plan.input_len(), output_len: plan.output_len() };
        let closed = plan.closed_form(par)?;
        let product = compose_rows(
            &levels,
            |l, rows| match rows {
                None => plan.operator(l as u32, par).map(Cow::Owned),
                Some(rows) => plan.operator_rows(l as u32, rows, par).map(Cow::Owned),
            },
            closed.as_deref(),
            budget,
            0,
            apart,
            par,
        )?;
        let (composed, apart) = match product {
            Product::Full(c) => (Some(c), None),
            Product::Apart(open) => (None, Some(open)),
        };
        Ok(Refinement {
            chain: Vec::new(),
            composed,
            input_len: levels.input_len,
            output_len: levels.output_len,
            limit: false,
            composed_only: levels.count > 0,
            tensor: closed.and_then(ClosedForm::into_tensor_rows),
            apart,
        })
    }

    fn composed_ref(&self) -> &CsrMat<f64> {
        match &self.composed {
            Some(c) => c,
            None => unreachable!("the product was just stored"),
        }
    }

    fn check_plan<P: Plan + ?Sized>(&self, plan: &P) -> Result<()> {
        let matches = plan.levels() as usize == self.chain.len()
            && plan.input_len() == self.input_len
            && plan.output_len() == self.output_len;
        if matches {
            Ok(())
        } else {
            Err(SchemeError::PlanMismatch {
                levels: self.chain.len(),
                input: self.input_len,
                output: self.output_len,
                plan_levels: plan.levels(),
                plan_input: plan.input_len(),
                plan_output: plan.output_len(),
            })
        }
    }

    /// An evaluator of the chain, of the product or of the product's
    /// tensor form in precision `T`. `Evaluation::Composed` builds the
    /// product if needed. `Evaluation::Auto` takes whichever of the chain
    /// and the built product reads fewer bytes for `channels` channels, or
    /// the product if there is no chain; the product goes through its
    /// tensor form ([`Evaluation::Separable`]) where at least 3/4 of its
    /// rows have one.
    ///
    /// # Errors
    /// As [`Refinement::compose`]; sizes over `u32` once padded;
    /// [`SchemeError::NoChain`] for `Evaluation::Chain` on a refinement
    /// built by [`Refinement::composed_of`]; [`SchemeError::NoTensorRows`]
    /// for `Evaluation::Tensor` and `Evaluation::Separable` without tensor
    /// rows; for `Evaluation::Separable`, more than `u32::MAX` rows
    /// ([`SchemeError::TooLarge`]).
    pub fn evaluator<T: Float + Send + Sync>(
        &mut self,
        how: Evaluation,
        channels: usize,
        budget: Budget,
        par: Par,
    ) -> Result<Evaluator<T>> {
        let t = std::mem::size_of::<T>() as u64;
        let composed_only = self.composed_only;
        let d = channels as u64;
        let traffic = |rows: usize, nnz: u64| (4 + t) * nnz + 4 * rows as u64 + t * d * rows as u64;
        // Bytes one evaluation through the tensor form reads and writes:
        // 8 per tensor row, the patches, the open rows as a matrix (at most the composed matrix's average row
        // length each), the data.
        let tensor_traffic = |nrows: usize, nnz: u64, tr: &TensorRows| {
            let open = (nrows - tr.closed_rows()) as u64;
            let per_row = nnz.div_ceil(nrows.max(1) as u64);
            8 * tr.closed_rows() as u64
                + std::mem::size_of_val(tr.patches()) as u64
                + traffic(open as usize, open * per_row)
                + t * d * (nrows + tr.ncols()) as u64
        };
        enum Use {
            Chain,
            Composed,
            Tensor(TensorKernel),
        }
        let choice = match how {
            Evaluation::Chain if composed_only => return Err(SchemeError::NoChain),
            Evaluation::Chain => Use::Chain,
            Evaluation::Composed => Use::Composed,
            Evaluation::Tensor | Evaluation::Separable => match (self.composed_nnz(), &self.tensor) {
                (Some(_), Some(_)) if how == Evaluation::Tensor => Use::Tensor(TensorKernel::Rows),
                (Some(_), Some(_)) => Use::Tensor(TensorKernel::Separable),
                _ => return Err(SchemeError::NoTensorRows),
            },
            Evaluation::Auto => match self.composed_nnz() {
                None => Use::Chain,
                Some(nnz) => {
                    let nrows = self.output_len;
                    let chain: u64 = self.chain.iter().map(|r| traffic(r.nrows(), r.nnz() as u64)).sum::<u64>()
                        + self.chain.iter().map(|r| t * d * r.ncols() as u64).sum::<u64>();
                    // The tensor form does more arithmetic per row than
                    // the matrix and copies the open rows once more: it is
                    // taken only where at least 3/4 of the rows have it.
                    let composed_cost = traffic(nrows, nnz) + t * d * self.input_len as u64;
                    let tensor_cost = self
                        .tensor
                        .as_ref()
                        .filter(|tr| 4 * tr.closed_rows() >= 3 * nrows)
                        .map(|tr| tensor_traffic(nrows, nnz, tr));
                    let (cost, with) = match tensor_cost {
                        Some(cost) if cost <= composed_cost => (cost, Use::Tensor(TensorKernel::Separable)),
                        _ => (composed_cost, Use::Composed),
                    };
                    if composed_only || cost <= chain { with } else { Use::Chain }
                }
            },
        };
        if matches!(choice, Use::Composed) {
            // Builds the product, or merges the rows `tensor_of` kept
            // apart, if not done yet.
            self.compose(budget, par)?;
        }
        let composed = || match &self.composed {
            Some(c) => c,
            None => unreachable!("composed above"),
        };
        let (mats, tensor) = match choice {
            Use::Chain => (
                self.chain
                    .iter()
                    .map(|r| PaddedCsr::from_csr(r.as_ref()))
                    .collect::<std::result::Result<Vec<_>, _>>()?,
                None,
            ),
            Use::Composed => (vec![PaddedCsr::from_csr(composed().as_ref())?], None),
            Use::Tensor(kernel) => {
                let Some(tr) = &self.tensor else { unreachable!("chosen only with tensor rows") };
                let te = match &self.apart {
                    Some(part) => TensorEval::new(tr, &part.mat, part.nnz, kernel, par)?,
                    None => {
                        let c = composed();
                        let open = c.as_ref().select_major(&tr.open_rows(par)?);
                        TensorEval::new(tr, &open, c.nnz() as u64, kernel, par)?
                    }
                };
                (Vec::new(), Some(te))
            }
        };
        Ok(Evaluator { mats, tensor, input_len: self.input_len })
    }
}

/// Repeated evaluation of a [`Refinement`]: one padded-CSR SpMV per
/// matrix, or the product's tensor form.
#[derive(Clone, Debug)]
pub struct Evaluator<T> {
    mats: Vec<PaddedCsr<T>>,
    tensor: Option<TensorEval<T>>,
    input_len: usize,
}

impl<T: Float + Send + Sync> Evaluator<T> {
    /// Rows read.
    pub fn input_len(&self) -> usize {
        self.input_len
    }
    /// Rows written.
    pub fn output_len(&self) -> usize {
        match &self.tensor {
            Some(te) => te.nrows(),
            None => self.mats.last().map_or(self.input_len, |m| m.nrows()),
        }
    }
    /// Number of matrices applied in turn (1 for the product, in either
    /// form).
    pub fn num_matrices(&self) -> usize {
        if self.tensor.is_some() { 1 } else { self.mats.len() }
    }
    /// Nonzeros applied per evaluation (without padding; the product's
    /// for its tensor form).
    pub fn nnz(&self) -> u64 {
        match &self.tensor {
            Some(te) => te.nnz(),
            None => self.mats.iter().map(|m| m.nnz() as u64).sum(),
        }
    }
    /// Rows of the intermediate levels (written and read once per
    /// evaluation of a chain; 0 for the product).
    pub fn intermediate_rows(&self) -> usize {
        self.mats.iter().rev().skip(1).map(|m| m.nrows()).sum()
    }
    /// Bytes of the matrices (with padding), or of the tensor form (rows,
    /// patches, weight table and the other rows' matrix).
    pub fn matrix_bytes(&self) -> u64 {
        match &self.tensor {
            Some(te) => te.bytes(),
            None => self.mats.iter().map(|m| m.bytes() as u64).sum(),
        }
    }
    /// Whether this evaluator applies the product's tensor form.
    pub fn is_tensor(&self) -> bool {
        self.tensor.is_some()
    }
}

impl<T: Float + Send + Sync + 'static> Evaluator<T> {
    /// Values of `T` that [`Evaluator::apply_with_scratch`] needs as
    /// scratch for `channels` channels, where `control` and `out` are in
    /// standard layout (row-major and contiguous): the intermediate levels
    /// of a chain (two of them, used in turn), or the tensor form's rows
    /// without that form and its control points padded to four lanes;
    /// none for one matrix. Data in another layout is copied through the
    /// scratch too: `control` takes `input_len() · channels` more values,
    /// `out` `output_len() · channels` more.
    pub fn scratch_len(&self, channels: usize) -> usize {
        let d = channels;
        if let Some(te) = &self.tensor {
            return te.scratch_len(d);
        }
        // The outputs of all matrices but the last, levels 0, 2, … in one
        // buffer and 1, 3, … in the other.
        let head = self.mats.len().saturating_sub(1);
        let largest =
            |parity: usize| self.mats[..head].iter().skip(parity).step_by(2).map(|m| m.nrows() * d).max().unwrap_or(0);
        largest(0) + largest(1)
    }

    /// `out = R control` for `n × d` data. Allocates its scratch
    /// ([`Evaluator::scratch_len`]) on every call: a frame loop should
    /// hold one and call [`Evaluator::apply_with_scratch`] instead.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows or `out` is not
    /// `output_len() × d`.
    #[track_caller]
    pub fn apply(&self, control: ArrayView2<'_, T>, out: ArrayViewMut2<'_, T>, par: Par) {
        let mut scratch = vec![T::zero(); self.scratch_len_for(&control, &out)];
        self.apply_with_scratch(control, out, &mut scratch, par);
    }

    /// `out = R control` for `n × d` data, with `scratch` as the only
    /// working memory: nothing is allocated (see the
    /// [module docs](self#scratch-and-allocation) for what rayon itself
    /// may allocate under [`Par::Rayon`]). `scratch` may hold anything; it
    /// is written before it is read, and what is left in it means nothing.
    /// The result is the same bits as [`Evaluator::apply`]'s, for every
    /// [`Par`] and pool size.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows, `out` is not
    /// `output_len() × d`, or `scratch` is shorter than
    /// [`Evaluator::scratch_len`]`(d)` plus the copies of data not in
    /// standard layout (`input_len() · d` for `control`,
    /// `output_len() · d` for `out`).
    #[track_caller]
    pub fn apply_with_scratch(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        scratch: &mut [T],
        par: Par,
    ) {
        assert_eq!(
            control.nrows(),
            self.input_len,
            "refinement eval: control has {} rows, expected {}",
            control.nrows(),
            self.input_len
        );
        assert_eq!(
            out.dim(),
            (self.output_len(), control.ncols()),
            "refinement eval: out is {:?}, expected {:?}",
            out.dim(),
            (self.output_len(), control.ncols())
        );
        let need = self.scratch_len_for(&control, &out);
        assert!(
            scratch.len() >= need,
            "refinement eval: scratch has {} values, needs {need} (Evaluator::scratch_len({}) = {}, plus copies of \
             control and out where they are not in standard layout)",
            scratch.len(),
            control.ncols(),
            self.scratch_len(control.ncols())
        );
        let d = control.ncols();
        if self.tensor.is_none() && self.mats.is_empty() {
            out.assign(&control);
            return;
        }
        // Data in another layout goes through contiguous copies in the
        // scratch, after what the kernels use.
        let (work, rest) = scratch[..need].split_at_mut(self.scratch_len(d));
        let (x_copy, y_copy) = rest.split_at_mut(if control.is_standard_layout() { 0 } else { self.input_len * d });
        let xs: &[T] = match control.as_slice() {
            Some(xs) => xs,
            None => {
                let Ok(mut copy) = ArrayViewMut2::from_shape(control.raw_dim(), &mut *x_copy) else {
                    unreachable!("the copy has input_len() × d values")
                };
                copy.assign(&control);
                x_copy
            }
        };
        match out.as_slice_mut() {
            Some(ys) => self.apply_slices(xs, ys, d, work, par),
            None => {
                self.apply_slices(xs, y_copy, d, work, par);
                let Ok(copy) = ArrayView2::from_shape(out.raw_dim(), &*y_copy) else {
                    unreachable!("the copy has output_len() × d values")
                };
                out.assign(&copy);
            }
        }
    }

    /// Scratch [`Evaluator::apply_with_scratch`] needs for these arrays.
    fn scratch_len_for(&self, control: &ArrayView2<'_, T>, out: &ArrayViewMut2<'_, T>) -> usize {
        let d = control.ncols();
        if self.tensor.is_none() && self.mats.is_empty() {
            return 0;
        }
        let x_copy = if control.is_standard_layout() { 0 } else { self.input_len * d };
        let y_copy = if out.is_standard_layout() { 0 } else { self.output_len() * d };
        self.scratch_len(d) + x_copy + y_copy
    }

    /// `ys = R xs` on row-major data with `d` channels, `work` holding
    /// [`Evaluator::scratch_len`]`(d)` values.
    fn apply_slices(&self, xs: &[T], ys: &mut [T], d: usize, work: &mut [T], par: Par) {
        if let Some(te) = &self.tensor {
            te.apply(xs, ys, d, work, par);
            return;
        }
        let Some((last, head)) = self.mats.split_last() else { unreachable!("no matrices: handled by the caller") };
        // Level `i` is written to `even` for even `i`, to `odd` for odd `i`,
        // and read from there by level `i + 1`.
        let even_len = head.iter().step_by(2).map(|m| m.nrows() * d).max().unwrap_or(0);
        let (even, odd) = work.split_at_mut(even_len);
        for (i, m) in head.iter().enumerate() {
            let n = m.nrows() * d;
            let below = if i == 0 { 0 } else { head[i - 1].nrows() * d };
            match (i % 2, i) {
                (_, 0) => m.apply_slices(xs, &mut even[..n], d, par),
                (0, _) => m.apply_slices(&odd[..below], &mut even[..n], d, par),
                _ => m.apply_slices(&even[..below], &mut odd[..n], d, par),
            }
        }
        let x_last: &[T] = match head.len() {
            0 => xs,
            k if k % 2 == 1 => &even[..head[k - 1].nrows() * d],
            k => &odd[..head[k - 1].nrows() * d],
        };
        last.apply_slices(x_last, ys, d, par);
    }
}

/// Rows of a plan's composed refinement matrix `R = R_{L−1} ⋯ R_0` that
/// the scheme writes without multiplying the per-level matrices — for
/// example, the rows inside regular patches of a spline scheme, whose
/// stencils over the control mesh are known in closed form
/// ([`Plan::closed_form`]).
///
/// A row written here must be the row of the product: columns ascending,
/// the same nonzeros, values equal up to rounding. (Where the product's
/// weights are exact binary fractions, as Catmull-Clark's regular ones are
/// up to 8 levels, they are the same bits.)
pub trait ClosedForm: Sync {
    /// Entries of row `row`, or `None` if the row has no closed form.
    fn row_len(&self, row: usize) -> Option<usize>;
    /// Writes row `row`, one with a closed form: `idx` and `vals` have the
    /// length [`ClosedForm::row_len`] gave.
    fn write_row(&self, row: usize, idx: &mut [u32], vals: &mut [f64]);
    /// The rows in tensor-product form, if they have it. `None` by
    /// default.
    fn tensor_rows(&self) -> Option<&TensorRows> {
        None
    }
    /// The rows in tensor-product form, if they have it: a [`Refinement`]
    /// keeps them for [`Evaluation::Tensor`]. `None` by default.
    fn into_tensor_rows(self: Box<Self>) -> Option<TensorRows> {
        None
    }
}

/// The sizes of a chain of `count` levels.
struct Levels {
    count: usize,
    input_len: usize,
    output_len: usize,
}

/// Rows `rows` of `r` (all of them, borrowed, for `None`).
fn select<'a>(r: &'a CsrMat<f64>, rows: Option<&[u32]>) -> Cow<'a, CsrMat<f64>> {
    match rows {
        None => Cow::Borrowed(r),
        Some(rows) => Cow::Owned(r.as_ref().select_major(rows)),
    }
}

/// What [`compose_rows`] built.
enum Product {
    /// The whole composed matrix.
    Full(CsrMat<f64>),
    /// Only the rows without a closed form: the others are in tensor form.
    Apart(OpenRows),
}

impl Product {
    fn into_full(self) -> CsrMat<f64> {
        match self {
            Product::Full(c) => c,
            Product::Apart(_) => unreachable!("composed apart only when asked"),
        }
    }
}

/// `R = R_{L−1} ⋯ R_0`, with the rows of `closed` written directly and
/// the others multiplied out through the rows of each level they need.
/// `level_rows(l, rows)` gives rows `rows` of `R_l` (all for `None`);
/// `base_bytes` are already held against `budget`. With `apart`, where
/// `closed` has a tensor form and some rows have it, only the other rows
/// are built ([`Product::Apart`]).
#[allow(clippy::too_many_arguments)]
fn compose_rows<'a>(
    levels: &Levels,
    level_rows: impl Fn(usize, Option<&[u32]>) -> Result<Cow<'a, CsrMat<f64>>>,
    closed: Option<&dyn ClosedForm>,
    budget: Budget,
    base_bytes: u64,
    apart: bool,
    par: Par,
) -> Result<Product> {
    let (l_count, n_in, n_out) = (levels.count, levels.input_len, levels.output_len);
    if l_count == 0 {
        let ptr: Vec<u32> = (0..=n_in as u32).collect();
        let idx: Vec<u32> = (0..n_in as u32).collect();
        return Ok(Product::Full(CsrMat::try_new(n_in, n_in, ptr, idx, vec![1.0; n_in])?));
    }
    // Which output rows have a closed form, and their lengths (not needed
    // for rows that stay in tensor form).
    let kept = closed.and_then(ClosedForm::tensor_rows).filter(|_| apart);
    let (open, closed_nnz): (Option<Vec<u32>>, u64) = match (closed, kept) {
        (_, Some(tr)) => (Some(tr.open_rows(par)?), tr.nnz()),
        (Some(cf), None) => {
            let open = compact(n_out, |i| cf.row_len(i).is_none(), par)?;
            (Some(open), closed_nnz_of(cf, n_out, par))
        }
        (None, None) => (None, 0),
    };
    // The closed rows stay in tensor form, if asked and there are some.
    let tensor = kept.filter(|_| open.as_ref().is_some_and(|o| o.len() < n_out));
    // Top down: the rows of each level the open rows need (`None`: all).
    let mut need: Option<Vec<u32>> = open.clone();
    let mut mats: Vec<Cow<'a, CsrMat<f64>>> = Vec::with_capacity(l_count);
    let mut needs: Vec<Option<Vec<u32>>> = Vec::with_capacity(l_count);
    let mut held = base_bytes + tensor.map_or_else(|| csr_bytes(n_out, closed_nnz), TensorRows::bytes);
    for l in (0..l_count).rev() {
        let m = level_rows(l, need.as_deref())?;
        if !matches!(m, Cow::Borrowed(_)) {
            held += csr_bytes(m.nrows(), m.nnz() as u64);
            budget.check(|| format!("the rows of R_{l} the composed matrix needs"), held)?;
        }
        let below = need.as_ref().map(|_| columns_of(&m));
        needs.push(need);
        mats.push(m);
        need = below;
    }
    mats.reverse();
    needs.reverse();
    // Bottom up: the products, over the needed rows only. When some rows
    // are closed, the last product's rows are copied into the merged matrix
    // anyway, so they stay in the product's blocks (no counting pass).
    let merging = tensor.is_none() && closed.is_some() && open.as_ref().is_some_and(|o| o.len() < n_out);
    let products = l_count - 1;
    let mut mats = mats.into_iter();
    let mut acc = match mats.next() {
        Some(m) => m,
        None => unreachable!("at least one level"),
    };
    let mut last_rows = None;
    for (k, r) in mats.enumerate() {
        // Columns of `r` are rows of level k+1; `acc` holds the needed ones.
        let r = match &needs[k] {
            Some(rows_of_acc) => Cow::Owned(remap_columns(&r, rows_of_acc, par)),
            None => r,
        };
        let (lower, bound) = spgemm::product_nnz_bounds(r.pattern(), acc.pattern(), par);
        let base = held + csr_bytes(acc.nrows(), acc.nnz() as u64);
        // A product whose longest rows alone are over the budget is refused
        // at once; one only possibly over it is counted exactly.
        budget.check(
            || format!("the composed refinement matrix R_{} ⋯ R_0 (at least {lower} nonzeros)", k + 1),
            base.saturating_add(csr_bytes(r.nrows(), lower)),
        )?;
        if budget.check(String::new, base.saturating_add(csr_bytes(r.nrows(), bound))).is_err() {
            let nnz = spgemm::product_nnz(r.pattern(), acc.pattern(), par);
            budget.check(
                || format!("the composed refinement matrix R_{} ⋯ R_0 ({nnz} nonzeros)", k + 1),
                base + csr_bytes(r.nrows(), nnz),
            )?;
        }
        if merging && k + 1 == products {
            last_rows = Some(spgemm::product_rows(CsrMat::as_ref(&r), CsrMat::as_ref(&acc), par)?);
        } else {
            acc = Cow::Owned(spgemm::product(CsrMat::as_ref(&r), CsrMat::as_ref(&acc), par)?);
        }
    }
    if tensor.is_some() {
        let nnz = closed_nnz + acc.nnz() as u64;
        return Ok(Product::Apart(OpenRows { mat: acc.into_owned(), nnz }));
    }
    let (Some(cf), Some(open), true) = (closed, open, merging) else {
        return Ok(Product::Full(acc.into_owned()));
    };
    let open_nnz = last_rows.as_ref().map_or(acc.nnz() as u64, |p| p.nnz());
    budget.check(
        || format!("the composed refinement matrix ({} nonzeros)", closed_nnz + open_nnz),
        base_bytes + csr_bytes(n_out, closed_nnz + open_nnz),
    )?;
    let full = match &last_rows {
        Some(rows) => merge(n_out, n_in, &open, |k| rows.row(k), cf, par),
        None => merge(n_out, n_in, &open, |k| acc.row(k), cf, par),
    };
    full.map(Product::Full)
}

/// The distinct columns of `m`, ascending.
fn columns_of(m: &CsrMat<f64>) -> Vec<u32> {
    let mut seen = vec![0u64; m.ncols().div_ceil(64)];
    for &j in m.indices() {
        seen[j as usize / 64] |= 1 << (j % 64);
    }
    let mut out = Vec::new();
    for (w, &bits) in seen.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            out.push((64 * w) as u32 + b.trailing_zeros());
            b &= b - 1;
        }
    }
    out
}

/// `m` with column `rows[k]` renamed `k` (every column of `m` is in the
/// ascending list `rows`, so the order within each row is kept).
fn remap_columns(m: &CsrMat<f64>, rows: &[u32], par: Par) -> CsrMat<f64> {
    let mut at = vec![0u32; m.ncols()];
    for (k, &r) in rows.iter().enumerate() {
        at[r as usize] = k as u32;
    }
    let old = m.indices();
    let idx = collect(old.len(), par, |e| at[old[e] as usize]);
    debug_assert!(old.iter().all(|&j| rows.binary_search(&j).is_ok()), "remap_columns: a column outside `rows`");
    // SAFETY: `at` is increasing on `rows`, which holds every column of `m`,
    // so each row's columns stay strictly ascending, and all are below
    // `rows.len()`; the shape and `ptr` are `m`'s.
    unsafe { CsrMat::new_unchecked(m.nrows() as u32, rows.len() as u32, m.ptr().to_vec(), idx, m.values().to_vec()) }
}

/// Nonzeros of the rows of `cf` with a closed form, among rows `0..n`.
fn closed_nnz_of(cf: &dyn ClosedForm, n: usize, par: Par) -> u64 {
    if let Some(tr) = cf.tensor_rows() {
        return tr.nnz();
    }
    let len = |i: usize| cf.row_len(i).map_or(0, |n| n as u64);
    match par {
        Par::Rayon => (0..n).into_par_iter().with_min_len(1 << 14).map(len).sum(),
        Par::Seq => (0..n).map(len).sum(),
    }
}

/// The composed matrix from the rows of `cf` with a closed form and the
/// products of the others (`open[k]` is the row `open_row(k)`), through
/// `cf`'s tensor rows where it has them.
fn merge<'p>(
    nrows: usize,
    ncols: usize,
    open: &[u32],
    open_row: impl Fn(usize) -> (&'p [u32], &'p [f64]) + Sync,
    cf: &dyn ClosedForm,
    par: Par,
) -> Result<CsrMat<f64>> {
    match cf.tensor_rows() {
        Some(tr) => merge_rows(nrows, ncols, open, open_row, tr, par),
        None => merge_rows(nrows, ncols, open, open_row, &Checked(cf), par),
    }
}

/// How [`merge_rows`] writes the rows with a closed form.
trait RowSource: Sync {
    /// As [`ClosedForm::row_len`].
    fn len(&self, row: usize) -> Option<usize>;
    /// Writes row `row` (one with a closed form) at `idx[a..b]`,
    /// `vals[a..b]`, where `idx` and `vals` are a block of consecutive rows
    /// written in order: what follows `b` may be overwritten. `false` if its
    /// columns are not strictly ascending and below `ncols`.
    fn write(&self, row: usize, idx: &mut [u32], vals: &mut [f64], a: usize, b: usize, ncols: usize) -> bool;
}

/// Any closed form, its rows checked.
struct Checked<'a>(&'a dyn ClosedForm);

impl RowSource for Checked<'_> {
    fn len(&self, row: usize) -> Option<usize> {
        self.0.row_len(row)
    }
    fn write(&self, row: usize, idx: &mut [u32], vals: &mut [f64], a: usize, b: usize, ncols: usize) -> bool {
        let idx = &mut idx[a..b];
        self.0.write_row(row, idx, &mut vals[a..b]);
        idx.windows(2).all(|w| w[0] < w[1]) && idx.last().is_none_or(|&j| (j as usize) < ncols)
    }
}

/// Tensor rows, whose columns are strictly ascending and in range by
/// construction ([`TensorRows::new`] checks the patches; a row is a
/// patch's columns, some left out).
impl RowSource for TensorRows {
    #[inline]
    fn len(&self, row: usize) -> Option<usize> {
        self.row_len(row)
    }
    #[inline]
    fn write(&self, row: usize, idx: &mut [u32], vals: &mut [f64], a: usize, _: usize, _: usize) -> bool {
        self.write_row_at(row, idx, vals, a);
        true
    }
}

/// [`merge`] with the closed-form rows from `cf`.
fn merge_rows<'p>(
    nrows: usize,
    ncols: usize,
    open: &[u32],
    open_row: impl Fn(usize) -> (&'p [u32], &'p [f64]) + Sync,
    cf: &impl RowSource,
    par: Par,
) -> Result<CsrMat<f64>> {
    // `open` is ascending and holds the rows without a closed form, so a
    // block of rows finds its open rows by counting on from the first.
    let first_open = |start: usize| open.partition_point(|&o| (o as usize) < start);
    let ptr = offsets_with(nrows, par, |rows, out| {
        let mut k = first_open(rows.start);
        for (i, n) in rows.zip(out) {
            *n = match cf.len(i) {
                Some(len) => len as u32,
                None => {
                    debug_assert_eq!(open[k] as usize, i, "the open rows");
                    k += 1;
                    open_row(k - 1).0.len() as u32
                }
            };
        }
    })
    .map_err(|e| match e {
        AlgebraError::TooLarge { value, .. } => {
            SchemeError::TooLarge { what: "nonzeros of the composed refinement matrix", value }
        }
        e => e.into(),
    })?;
    let nnz = ptr[nrows] as usize;
    let mut idx = try_zeroed_vec::<u32>(nnz, "indices of the composed refinement matrix")?;
    let mut vals = try_zeroed_vec::<f64>(nnz, "values of the composed refinement matrix")?;
    let ranges = balanced_ranges(&ptr, par.blocks(nrows + nnz, 1 << 14));
    // Each block writes its rows and returns the first closed-form row
    // whose columns are not ascending and in range, if any.
    let write = |(r, (ib, vb)): (Range<usize>, (&mut [u32], &mut [f64]))| -> Option<usize> {
        let base = ptr[r.start] as usize;
        let mut k = first_open(r.start);
        for i in r {
            let (a, b) = (ptr[i] as usize - base, ptr[i + 1] as usize - base);
            if open.get(k).is_some_and(|&o| o as usize == i) {
                let (pi, pv) = open_row(k);
                k += 1;
                ib[a..b].copy_from_slice(pi);
                vb[a..b].copy_from_slice(pv);
            } else if !cf.write(i, ib, vb, a, b, ncols) {
                return Some(i);
            }
        }
        None
    };
    let parts = split_by_ptr(&mut idx, &ptr, &ranges).into_iter().zip(split_by_ptr(&mut vals, &ptr, &ranges));
    let bad = if ranges.len() > 1 {
        ranges.clone().into_par_iter().zip(parts.collect::<Vec<_>>()).map(write).flatten().min()
    } else {
        ranges.clone().into_iter().zip(parts).filter_map(write).min()
    };
    if let Some(i) = bad {
        return Err(SchemeError::InvalidClosedFormRow { row: i });
    }
    // SAFETY: `ptr` counts every row; product rows are copies of rows of a
    // valid matrix with `ncols` columns; closed-form rows are strictly
    // ascending and below `ncols` (checked above, or tensor rows), each
    // written in full before the next row of its block.
    Ok(unsafe { CsrMat::new_unchecked(nrows as u32, ncols as u32, ptr, idx, vals) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of `m` in closed form where `closed(i)`, with a fault injected
    /// into one row if asked.
    struct Rows<'a> {
        m: &'a CsrMat<f64>,
        closed: fn(usize) -> bool,
        fault: Option<(usize, Fault)>,
    }

    #[derive(Copy, Clone)]
    enum Fault {
        /// The first two columns swapped.
        Unsorted,
        /// The last column past the matrix.
        OutOfRange,
    }

    impl ClosedForm for Rows<'_> {
        fn row_len(&self, row: usize) -> Option<usize> {
            (self.closed)(row).then(|| self.m.row(row).0.len())
        }
        fn write_row(&self, row: usize, idx: &mut [u32], vals: &mut [f64]) {
            let (ri, rv) = self.m.row(row);
            idx.copy_from_slice(ri);
            vals.copy_from_slice(rv);
            match self.fault {
                Some((r, Fault::Unsorted)) if r == row => idx.swap(0, 1),
                Some((r, Fault::OutOfRange)) if r == row => {
                    if let Some(last) = idx.last_mut() {
                        *last = self.m.ncols() as u32;
                    }
                }
                _ => {}
            }
        }
    }

    /// A 3000 × 500 matrix with 2–5 entries a row, strictly ascending.
    fn matrix() -> CsrMat<f64> {
        let (nrows, ncols) = (3000usize, 500u32);
        let mut ptr = vec![0u32];
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        for i in 0..nrows {
            let n = 2 + i % 4;
            let first = (i as u32 * 7) % (ncols - 40);
            for k in 0..n as u32 {
                idx.push(first + 9 * k);
                vals.push(f64::from(k + 1) / (i as f64 + 1.0));
            }
            ptr.push(idx.len() as u32);
        }
        CsrMat::try_new(nrows, ncols as usize, ptr, idx, vals).unwrap()
    }

    fn merged(m: &CsrMat<f64>, cf: &Rows<'_>, par: Par) -> Result<CsrMat<f64>> {
        let open = compact(m.nrows(), |i| !(cf.closed)(i), par).unwrap();
        // The open rows as their own matrix, as a product would give them.
        let rows = m.as_ref().select_major(&open);
        merge(m.nrows(), m.ncols(), &open, |k| rows.row(k), cf, par)
    }

    /// A closed 10000-gon refined twice built its whole chain and then
    /// counted the product's nonzeros exactly (4.7 GB, 14.6 s) before
    /// refusing it: a product whose longest rows alone are over the budget
    /// is refused from the row lengths, before any counting.
    #[test]
    fn composed_products_over_the_budget_are_refused_from_row_lengths() {
        // R_0: 400 dense rows over 400 columns; R_1: 4000 rows, each the
        // sum of three rows of R_0 (the product is dense: 1.6M nonzeros).
        let n = 400usize;
        let dense = |rows: usize, cols: usize| {
            let ptr: Vec<u32> = (0..=rows).map(|i| (i * cols) as u32).collect();
            let idx: Vec<u32> = (0..rows).flat_map(|_| 0..cols as u32).collect();
            CsrMat::try_new(rows, cols, ptr, idx, vec![1.0; rows * cols]).unwrap()
        };
        let r0 = dense(n, n);
        let m = 4000usize;
        let ptr: Vec<u32> = (0..=m).map(|i| 3 * i as u32).collect();
        let idx: Vec<u32> =
            (0..m).flat_map(|i| [(i % 397) as u32, (i % 397 + 1) as u32, (i % 397 + 2) as u32]).collect();
        let r1 = CsrMat::try_new(m, n, ptr, idx, vec![1.0 / 3.0; 3 * m]).unwrap();
        let (lower, upper) = spgemm::product_nnz_bounds(r1.pattern(), r0.pattern(), Par::Seq);
        assert_eq!((lower, upper), ((m * n) as u64, (3 * m * n) as u64));
        assert_eq!(spgemm::product_nnz_bounds(r1.pattern(), r0.pattern(), Par::Rayon), (lower, upper));
        let mut r = Refinement {
            chain: vec![r0, r1],
            composed: None,
            input_len: n,
            output_len: m,
            limit: false,
            composed_only: false,
            tensor: None,
            apart: None,
        };
        // Held while the product is made: the chain, the output's row
        // pointers, the product so far (R_0).
        let held = r.chain_bytes() + csr_bytes(m, 0) + csr_bytes(n, (n * n) as u64);
        let budget = Budget::bytes(held + csr_bytes(m, lower) - 1);
        match r.compose(budget, Par::Rayon) {
            Err(SchemeError::OverBudget { needed, budget: b, .. }) => {
                assert_eq!(needed, u128::from(held + csr_bytes(m, lower)));
                assert_eq!(b, u128::from(budget.bytes));
            }
            other => panic!("expected OverBudget, got {other:?}"),
        }
        // Within the budget, the product is built.
        let c = r.compose(Budget::bytes(held + csr_bytes(m, lower)), Par::Rayon).unwrap();
        assert_eq!(c.nnz(), m * n);
    }

    #[test]
    fn closed_and_open_rows_merge_into_the_matrix() {
        let m = matrix();
        let every_third: fn(usize) -> bool = |i| i % 3 != 1;
        for closed in [every_third, |_| true, |_| false, |i| i >= 1700] {
            let cf = Rows { m: &m, closed, fault: None };
            for par in [Par::Seq, Par::Rayon] {
                let got = merged(&m, &cf, par).unwrap();
                assert_eq!(got.ptr(), m.ptr());
                assert_eq!(got.indices(), m.indices());
                assert_eq!(got.values(), m.values());
            }
        }
    }

    #[test]
    fn closed_rows_with_bad_columns_are_refused_by_row() {
        let m = matrix();
        for fault in [Fault::Unsorted, Fault::OutOfRange] {
            for row in [0, 1234, 2999] {
                let cf = Rows { m: &m, closed: |i| i % 2 == 0 || i == 2999, fault: Some((row, fault)) };
                for par in [Par::Seq, Par::Rayon] {
                    let e = merged(&m, &cf, par).unwrap_err();
                    assert!(matches!(e, SchemeError::InvalidClosedFormRow { row: r } if r == row), "{e}");
                }
            }
        }
    }
}
