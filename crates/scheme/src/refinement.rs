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
//! * [`Refinement::evaluator`] packs the cheaper of the two (or the one
//!   asked for) into padded CSR ([`PaddedCsr`]) for repeated evaluation in
//!   `f32` or `f64`.
//!
//! For deep levels the composed matrix can hold more nonzeros than the
//! chain (each level multiplies the stencil sizes), so both are offered and
//! [`Evaluation::Auto`] picks by the bytes each one reads per evaluation.
//!
//! Every size is predicted before anything is allocated, and a prediction
//! over the [`Budget`] is a [`SchemeError::OverBudget`] naming what would
//! need how much.

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::spgemm;
use subla_algebra::{CsrMat, PaddedCsr, Par};

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
}

/// The refinement matrices of a plan: the chain of per-level matrices and,
/// once [`Refinement::compose`] ran, their product.
#[derive(Clone, Debug)]
pub struct Refinement {
    chain: Vec<CsrMat<f64>>,
    composed: Option<CsrMat<f64>>,
    input_len: usize,
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
        let mut chain = Vec::with_capacity(levels as usize);
        let mut used = 0u64;
        for l in 0..levels {
            let r = plan.operator(l, par)?;
            used += csr_bytes(r.nrows(), r.nnz() as u64);
            budget.check(|| format!("the refinement matrices up to level {}", l + 1), used)?;
            chain.push(r);
        }
        Ok(Refinement { chain, composed: None, input_len: plan.input_len() })
    }

    /// Appends `plan`'s limit operator ([`Plan::limit`]) to the chain, so
    /// that the chain (and its product) maps control data to limit
    /// positions. Drops a product computed before.
    ///
    /// # Errors
    /// As [`Plan::limit`]; [`SchemeError::OverBudget`].
    pub fn with_limit<P: Plan + ?Sized>(mut self, plan: &P, budget: Budget, par: Par) -> Result<Refinement> {
        let lim = plan.limit(par)?;
        let used = self.chain_bytes() + csr_bytes(lim.nrows(), lim.nnz() as u64);
        budget.check(|| "the refinement matrices and the limit operator".into(), used)?;
        self.chain.push(lim);
        self.composed = None;
        Ok(self)
    }

    /// The per-level matrices, coarsest first.
    pub fn levels(&self) -> &[CsrMat<f64>] {
        &self.chain
    }

    /// The product, if [`Refinement::compose`] ran.
    pub fn composed(&self) -> Option<&CsrMat<f64>> {
        self.composed.as_ref()
    }

    /// Rows of the control data.
    pub fn input_len(&self) -> usize {
        self.input_len
    }

    /// Rows of the output.
    pub fn output_len(&self) -> usize {
        self.chain.last().map_or(self.input_len, |r| r.nrows())
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
    /// chain) before its symbolic and numeric phases run — by the count of
    /// collisions, an upper bound, and when that is over, by the exact count
    /// of [`spgemm::product_nnz`]. With no levels, the identity.
    ///
    /// # Errors
    /// [`SchemeError::OverBudget`]; sizes over `u32`.
    pub fn compose(&mut self, budget: Budget, par: Par) -> Result<&CsrMat<f64>> {
        if self.composed.is_none() {
            let composed = self.product(budget, par)?;
            self.composed = Some(composed);
        }
        match &self.composed {
            Some(c) => Ok(c),
            None => unreachable!("the product was just stored"),
        }
    }

    fn product(&self, budget: Budget, par: Par) -> Result<CsrMat<f64>> {
        let Some((first, rest)) = self.chain.split_first() else {
            let n = self.input_len;
            let ptr: Vec<u32> = (0..=n as u32).collect();
            let idx: Vec<u32> = (0..n as u32).collect();
            return Ok(CsrMat::try_new(n, n, ptr, idx, vec![1.0; n])?);
        };
        let chain_bytes = self.chain_bytes();
        let mut acc = first.clone();
        for (k, r) in rest.iter().enumerate() {
            // The collisions bound the product's nonzeros and cost one pass
            // over R's indices; count exactly only if the bound is over.
            let aptr = acc.ptr();
            let bound: u64 = r.indices().iter().map(|&j| u64::from(aptr[j as usize + 1] - aptr[j as usize])).sum();
            let base = chain_bytes + csr_bytes(acc.nrows(), acc.nnz() as u64);
            if budget.check(String::new, base + csr_bytes(r.nrows(), bound)).is_err() {
                let nnz = spgemm::product_nnz(r.pattern(), acc.pattern(), par);
                budget.check(
                    || format!("the composed refinement matrix R_{} ⋯ R_0 ({nnz} nonzeros)", k + 1),
                    base + csr_bytes(r.nrows(), nnz),
                )?;
            }
            acc = spgemm::product(r.as_ref(), acc.as_ref(), par)?;
        }
        Ok(acc)
    }

    /// An evaluator of the chain or of the product in precision `T`
    /// (`Evaluation::Composed` builds the product if needed;
    /// `Evaluation::Auto` uses the product only if it was built and reads
    /// fewer bytes than the chain for `channels` channels).
    ///
    /// # Errors
    /// As [`Refinement::compose`]; sizes over `u32` once padded.
    pub fn evaluator<T: Float + Send + Sync>(
        &mut self,
        how: Evaluation,
        channels: usize,
        budget: Budget,
        par: Par,
    ) -> Result<Evaluator<T>> {
        let t = std::mem::size_of::<T>() as u64;
        let use_composed = match how {
            Evaluation::Chain => false,
            Evaluation::Composed => {
                self.compose(budget, par)?;
                true
            }
            Evaluation::Auto => match &self.composed {
                None => false,
                Some(c) => {
                    let d = channels as u64;
                    let traffic = |rows: usize, nnz: u64| (4 + t) * nnz + 4 * rows as u64 + t * d * rows as u64;
                    let chain: u64 = self.chain.iter().map(|r| traffic(r.nrows(), r.nnz() as u64)).sum::<u64>()
                        + self.chain.iter().map(|r| t * d * r.ncols() as u64).sum::<u64>();
                    let composed = traffic(c.nrows(), c.nnz() as u64) + t * d * c.ncols() as u64;
                    composed <= chain
                }
            },
        };
        let mats = if use_composed {
            match &self.composed {
                Some(c) => vec![PaddedCsr::from_csr(c.as_ref())?],
                None => unreachable!("composed above"),
            }
        } else {
            self.chain.iter().map(|r| PaddedCsr::from_csr(r.as_ref())).collect::<std::result::Result<Vec<_>, _>>()?
        };
        Ok(Evaluator { mats, input_len: self.input_len })
    }
}

/// Repeated evaluation of a [`Refinement`]: one padded-CSR SpMV per matrix.
#[derive(Clone, Debug)]
pub struct Evaluator<T> {
    mats: Vec<PaddedCsr<T>>,
    input_len: usize,
}

impl<T: Float + Send + Sync> Evaluator<T> {
    /// Rows read.
    pub fn input_len(&self) -> usize {
        self.input_len
    }
    /// Rows written.
    pub fn output_len(&self) -> usize {
        self.mats.last().map_or(self.input_len, |m| m.nrows())
    }
    /// Number of matrices applied in turn (1 for the product).
    pub fn num_matrices(&self) -> usize {
        self.mats.len()
    }
    /// Nonzeros applied per evaluation (without padding).
    pub fn nnz(&self) -> u64 {
        self.mats.iter().map(|m| m.nnz() as u64).sum()
    }
    /// Rows of the intermediate levels (written and read once per
    /// evaluation of a chain; 0 for the product).
    pub fn intermediate_rows(&self) -> usize {
        self.mats.iter().rev().skip(1).map(|m| m.nrows()).sum()
    }
    /// Bytes of the matrices (with padding).
    pub fn matrix_bytes(&self) -> u64 {
        self.mats.iter().map(|m| m.bytes() as u64).sum()
    }

    /// `out = R control` for `n × d` data.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows or `out` is not
    /// `output_len() × d`.
    pub fn apply(&self, control: ArrayView2<'_, T>, mut out: ArrayViewMut2<'_, T>, par: Par) {
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
        let d = control.ncols();
        match self.mats.split_last() {
            None => out.assign(&control),
            Some((last, head)) => {
                let mut cur: Option<ndarray::Array2<T>> = None;
                for m in head {
                    let mut next = ndarray::Array2::from_elem((m.nrows(), d), T::zero());
                    m.apply(cur.as_ref().map_or(control.view(), |c| c.view()), next.view_mut(), par);
                    cur = Some(next);
                }
                last.apply(cur.as_ref().map_or(control.view(), |c| c.view()), out.view_mut(), par);
            }
        }
    }
}
