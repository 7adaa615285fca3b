//! Sparse matrix × multi-channel vector products (`shaders/spmv.wgsl`,
//! `shaders/spmv_mapped.wgsl`).
//!
//! Mlakar et al. 2020, Eq. 1 (after Zayer et al. 2017):
//!
//! ```text
//! y = map(A) · x,        y(i, :) = Σ_j μ(A(i, j), i, j) · x(j, :)
//! ```
//!
//! `x` is `ncols × d` and `y` is `nrows × d`, row-major `f32` (positions,
//! normals, colours: any number of channels `d ≥ 1`), as in
//! `subla_algebra::spmv`.
//!
//! * [`spmv`] / [`spmv_into`]: the plain product (`μ` = identity).
//! * [`MappedSpmv`]: the action map `μ` written as a WGSL snippet, the body
//!   of `fn action(value: f32, row: u32, col: u32) -> f32`, spliced into the
//!   template `shaders/spmv_mapped.wgsl`, validated by naga, and compiled
//!   once per context (the pipeline is cached by snippet).
//!
//! # Determinism
//! Row gather on a CSR matrix: one invocation per output row computes
//! `y(i, c) = ((0 + w₀x₀) + w₁x₁) + …` over the row's entries in stored
//! order, like `subla_algebra::spmv::spmv_csr`. Results are bitwise
//! identical from run to run on one device; they agree with the CPU to
//! rounding (a driver may contract `acc + w * x` into a fused multiply-add).
//!
//! # Panics
//! If the shapes disagree (`x.len() != ncols · d`, `y.len() != nrows · d`,
//! `d == 0`; the message names the operands), or if a buffer or a
//! [`MappedSpmv`] belongs to another [`GpuContext`].

use std::sync::Arc;

use crate::buffer::GpuBuffer;
use crate::context::{GpuContext, Pipeline};
use crate::error::{GpuError, Result};
use crate::shaders;
use crate::sparse::GpuCsr;

#[track_caller]
fn check_shapes(a: &GpuCsr, x: &GpuBuffer<f32>, channels: usize, y_len: usize) {
    assert!(channels >= 1, "spmv: channels must be at least 1");
    assert_eq!(
        x.len(),
        a.ncols() * channels,
        "spmv: x has {} elements but A is {} x {} with {} channels (x must be A.ncols() x channels)",
        x.len(),
        a.nrows(),
        a.ncols(),
        channels
    );
    assert_eq!(
        y_len,
        a.nrows() * channels,
        "spmv: y has {} elements but A is {} x {} with {} channels (y must be A.nrows() x channels)",
        y_len,
        a.nrows(),
        a.ncols(),
        channels
    );
}

fn run(
    ctx: &GpuContext,
    pipeline: &Pipeline,
    a: &GpuCsr,
    x: &GpuBuffer<f32>,
    channels: usize,
    y: &mut GpuBuffer<f32>,
) -> Result<()> {
    for (what, len) in [("spmv x", x.len()), ("spmv y", y.len())] {
        if len as u64 > u64::from(u32::MAX) {
            return Err(GpuError::TooLarge {
                what,
                bytes: len as u64 * 4,
                limit: "u32 index",
                limit_value: u64::from(u32::MAX) * 4,
            });
        }
    }
    ctx.scoped("spmv", || {
        let entries = [
            (1, a.ptr().binding(ctx, "spmv row pointers")?),
            (2, a.indices().binding(ctx, "spmv column indices")?),
            (3, a.values().binding(ctx, "spmv values")?),
            (4, x.binding(ctx, "spmv x")?),
            (5, y.binding(ctx, "spmv y")?),
        ];
        let params = ctx.params([a.nrows() as u32, channels as u32, 0, 0]);
        let mut all = vec![(0, params.as_entire_binding())];
        all.extend(entries);
        let grid = ctx.grid("spmv dispatch", (a.nrows() as u64).div_ceil(256))?;
        let mut encoder = ctx.encoder();
        ctx.dispatch(&mut encoder, pipeline, &all, grid);
        ctx.submit(encoder);
        Ok(())
    })
}

/// `y = A x` into a new buffer (`x`: `ncols × channels`, row-major).
///
/// ```no_run
/// use subla_algebra::CsrMat;
/// use subla_gpu::{GpuBuffer, GpuContext, GpuCsr, spmv::spmv};
/// let ctx = GpuContext::new()?;
/// let a = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0f32, 2.0, 3.0])?;
/// let a = GpuCsr::upload(&ctx, a.as_ref())?;
/// let x = GpuBuffer::upload(&ctx, &[1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0])?; // 3 x 2
/// let y = spmv(&ctx, &a, &x, 2)?;
/// assert_eq!(y.download(&ctx)?, vec![7.0, 70.0, 6.0, 60.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
/// On mismatched shapes (see the [module docs](self)).
///
/// # Errors
/// [`GpuError::TooLarge`] if an array exceeds one storage binding; wgpu
/// errors.
#[track_caller]
pub fn spmv(ctx: &GpuContext, a: &GpuCsr, x: &GpuBuffer<f32>, channels: usize) -> Result<GpuBuffer<f32>> {
    check_shapes(a, x, channels, a.nrows() * channels);
    let mut y = GpuBuffer::zeroed(ctx, a.nrows() * channels)?;
    spmv_into(ctx, a, x, channels, &mut y)?;
    Ok(y)
}

/// `y = A x` into caller storage (reused across frames).
///
/// # Panics
/// On mismatched shapes.
///
/// # Errors
/// As [`spmv`].
#[track_caller]
pub fn spmv_into(
    ctx: &GpuContext,
    a: &GpuCsr,
    x: &GpuBuffer<f32>,
    channels: usize,
    y: &mut GpuBuffer<f32>,
) -> Result<()> {
    check_shapes(a, x, channels, y.len());
    let pipeline = ctx.pipeline("spmv", "spmv", "", &|| shaders::SPMV.into())?;
    run(ctx, &pipeline, a, x, channels, y)
}

/// A mapped SpMV whose action map is a WGSL snippet, compiled once.
///
/// The snippet is the body of
/// `fn action(value: f32, row: u32, col: u32) -> f32 { <snippet> }`; it sees
/// the stored value with its row and column and returns the weight that
/// multiplies `x(col, :)`. It may declare locals and branch, and must
/// return on every path.
///
/// ```no_run
/// use subla_gpu::{GpuContext, spmv::MappedSpmv};
/// let ctx = GpuContext::new()?;
/// let identity_part = MappedSpmv::new(&ctx, "if (row == col) { return 1.0; } return 0.0;")?;
/// let doubled = MappedSpmv::new(&ctx, "return value * 2.0;")?;
/// assert!(MappedSpmv::new(&ctx, "return value *;").is_err());
/// # let _ = (identity_part, doubled);
/// # Ok::<(), subla_gpu::GpuError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MappedSpmv {
    context: u64,
    snippet: String,
    pipeline: Arc<Pipeline>,
}

impl MappedSpmv {
    /// Splices `snippet` into the template, validates it with naga and
    /// builds (or fetches from the context's cache) its pipeline.
    ///
    /// # Errors
    /// [`GpuError::Shader`] with naga's message if the snippet does not
    /// parse or validate (the message names the line of the generated
    /// shader and shows it); wgpu errors.
    pub fn new(ctx: &GpuContext, snippet: &str) -> Result<Self> {
        let (source, line) = shaders::mapped_spmv_source(snippet);
        shaders::validate(&source).map_err(|e| match e {
            GpuError::Shader { message } => {
                let last = line + snippet.lines().count().max(1) - 1;
                let lines = if last == line { format!("line {line}") } else { format!("lines {line}..={last}") };
                GpuError::Shader {
                    message: format!("action map snippet ({lines} of the generated shader) is invalid:\n{message}"),
                }
            }
            other => other,
        })?;
        let pipeline = ctx.pipeline("spmv_mapped", "spmv_mapped", snippet, &|| source.clone().into())?;
        Ok(Self { context: ctx.id(), snippet: snippet.to_owned(), pipeline })
    }

    /// The action map's WGSL body.
    pub fn snippet(&self) -> &str {
        &self.snippet
    }

    /// True when both use the same compiled pipeline (same context and
    /// snippet).
    pub fn shares_pipeline_with(&self, other: &MappedSpmv) -> bool {
        Arc::ptr_eq(&self.pipeline, &other.pipeline)
    }

    /// `y = map(A) x` into a new buffer.
    ///
    /// # Panics
    /// On mismatched shapes.
    ///
    /// # Errors
    /// As [`spmv`].
    #[track_caller]
    pub fn apply(&self, ctx: &GpuContext, a: &GpuCsr, x: &GpuBuffer<f32>, channels: usize) -> Result<GpuBuffer<f32>> {
        check_shapes(a, x, channels, a.nrows() * channels);
        let mut y = GpuBuffer::zeroed(ctx, a.nrows() * channels)?;
        self.apply_into(ctx, a, x, channels, &mut y)?;
        Ok(y)
    }

    /// `y = map(A) x` into caller storage.
    ///
    /// # Panics
    /// On mismatched shapes.
    ///
    /// # Errors
    /// As [`spmv`].
    #[track_caller]
    pub fn apply_into(
        &self,
        ctx: &GpuContext,
        a: &GpuCsr,
        x: &GpuBuffer<f32>,
        channels: usize,
        y: &mut GpuBuffer<f32>,
    ) -> Result<()> {
        check_shapes(a, x, channels, y.len());
        assert_eq!(self.context, ctx.id(), "MappedSpmv used with a GpuContext other than the one that built it");
        run(ctx, &self.pipeline, a, x, channels, y)
    }
}
