//! Load-balanced CSR SpMV (`shaders/spmv_balanced.wgsl`) and evaluation of
//! a chain of refinement matrices on the device ([`GpuRefinement`]).
//!
//! Mlakar et al. 2020, §6.3: a refinement matrix `R` is applied once per
//! frame to fresh vertex data, `P_{i+1} = R_i P_i`. The row-gather
//! [`spmv`](crate::spmv) gives one row to each invocation, so a row of
//! thousands of entries (an extraordinary vertex after composition, a limit
//! stencil) stalls its whole workgroup. Here every invocation takes a
//! **fixed number of consecutive nonzeros**, [`NNZ_PER_INVOCATION`],
//! regardless of row boundaries:
//!
//! ```text
//! nonzeros   | r0 r0 r0 r0 r0 r0 r0 r0 | r0 r0 r0 r1 r1 r3 r3 r3 | r3 r4 …
//! invocation |          i = 0          |          i = 1          |  i = 2
//! chunk_row  |           r0            |           r0            |   r3
//! ```
//!
//! (`r2` is empty: invocation 1 writes its 0 when it passes it.) Each
//! invocation needs the row of its first nonzero, `chunk_row[i]`, computed
//! at upload on the host by a binary search in the row pointers
//! ([`chunk_rows`]), or on the device for a matrix already there
//! ([`BalancedCsr::from_gpu`]).
//!
//! # Passes and summation order
//! A workgroup of 256 invocations covers [`NNZ_PER_WORKGROUP`] = 2048
//! nonzeros. For an output element `y(r, c)`:
//!
//! 1. each invocation sums its entries of row `r` sequentially from `+0` in
//!    stored order, `p = ((0 + a_k x_k) + a_{k+1} x_{k+1}) + …`, as
//!    `subla_algebra::spmv::spmv_csr` does for a whole row;
//! 2. inside a workgroup, the partial sums of a row split across
//!    invocations are combined by a segmented inclusive scan (Hillis–Steele,
//!    offsets 1, 2, …, 128, keyed by row, in workgroup memory): the
//!    invocation holding the row's last entry writes `S + p`, where `S` is
//!    the scanned sum of the partials before it;
//! 3. a row that crosses workgroup boundaries gets, from each workgroup it
//!    leaves, a carry (that workgroup's part of the row); a second pass
//!    with one invocation per boundary (only the row's first boundary acts)
//!    updates it to `(((c_{w₀} + c_{w₀+1}) + …) + c_{w₁−1}) + y(r, c)`.
//!
//! Every pass writes each element of `y` at most once, with no float
//! atomics, and the order above does not depend on scheduling: results are
//! **bitwise identical on every run** on one device. They agree with the
//! CPU to rounding (the order differs from a sequential sum over the row;
//! a driver may contract `acc + a x` into a fused multiply-add). Empty rows
//! get `0`.
//!
//! Channels are accumulated four at a time: one pass over the nonzeros for
//! `d ≤ 4`, `⌈d / 4⌉` for wider data.
//!
//! # Chains
//! [`GpuRefinement`] uploads `R_0, …, R_{L−1}` (coarsest first, `f64`
//! rounded to `f32`), keeps the intermediate levels on the device for a
//! channel count, and applies the whole chain with one submission;
//! [`GpuRefinement::apply_device`] reads nothing back, so per-frame data
//! can stay on the device.
//!
//! ```no_run
//! use subla_algebra::CsrMat;
//! use subla_gpu::{GpuContext, balanced::GpuRefinement};
//! let ctx = GpuContext::new()?;
//! // 2 -> 3 -> 2 vertices.
//! let r0 = CsrMat::try_new(3, 2, vec![0, 1, 3, 4], vec![0, 0, 1, 1], vec![1.0, 0.5, 0.5, 1.0])?;
//! let r1 = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 1, 2], vec![0.5, 0.5, 1.0])?;
//! let mut eval = GpuRefinement::from_chain(&ctx, &[r0.as_ref(), r1.as_ref()], 2)?;
//! let out = eval.apply(&ctx, &[0.0, 10.0, 2.0, 20.0], 2)?; // 2 x 2 control data
//! assert_eq!(out, vec![0.5, 12.5, 2.0, 20.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Panics
//! On mismatched shapes (`x.len() != ncols · d`, `y.len() != nrows · d`,
//! `d == 0`, a chain whose matrices do not compose; the message names the
//! operands), or if a buffer belongs to another [`GpuContext`].

use std::fmt;

use subla_algebra::CsrRef;

use crate::buffer::GpuBuffer;
use crate::context::{GpuContext, WORKGROUP};
use crate::error::{GpuError, Result};
use crate::shaders;
use crate::sparse::GpuCsr;
use crate::timing::PassTimer;

/// Consecutive nonzeros each invocation of the balanced SpMV sums (the
/// kernel's `CHUNK`).
pub const NNZ_PER_INVOCATION: usize = 8;

/// Consecutive nonzeros each workgroup covers (the kernel's `TILE`):
/// [`NNZ_PER_INVOCATION`] × 256.
pub const NNZ_PER_WORKGROUP: usize = NNZ_PER_INVOCATION * WORKGROUP as usize;

const KERNEL: &str = "spmv_balanced";

fn source() -> std::borrow::Cow<'static, str> {
    shaders::SPMV_BALANCED.into()
}

/// The row holding the first nonzero of each chunk of
/// [`NNZ_PER_INVOCATION`] nonzeros: entry `c` is the row `r` with
/// `ptr[r] ≤ c · NNZ_PER_INVOCATION < ptr[r + 1]` (a binary search in
/// `ptr`). `ptr` is a CSR pointer array (`nrows + 1` entries from 0,
/// non-decreasing).
///
/// ```
/// // Rows of 10, 0, 3 and 4 entries.
/// let ptr = [0, 10, 10, 13, 17];
/// assert_eq!(subla_gpu::balanced::chunk_rows(&ptr), vec![0, 0, 3]);
/// ```
pub fn chunk_rows(ptr: &[u32]) -> Vec<u32> {
    let nrows = ptr.len().saturating_sub(1);
    let nnz = ptr.last().map_or(0, |&n| n as usize);
    let rows = &ptr[..nrows];
    (0..nnz.div_ceil(NNZ_PER_INVOCATION))
        .map(|c| {
            let k = (c * NNZ_PER_INVOCATION) as u32;
            // ptr[0] = 0 <= k: at least one row qualifies.
            (rows.partition_point(|&p| p <= k) - 1) as u32
        })
        .collect()
}

/// Workgroups of the first pass for `nnz` nonzeros, checked against the
/// kernel's `u32` nonzero indices.
fn tiles_for(nnz: usize) -> Result<u32> {
    let tiles = (nnz as u64).div_ceil(NNZ_PER_WORKGROUP as u64);
    // The kernel forms (tile + 1) * TILE and chunk * CHUNK in u32.
    if (tiles + 1) * NNZ_PER_WORKGROUP as u64 > u64::from(u32::MAX) {
        return Err(GpuError::TooLarge {
            what: "balanced spmv nonzeros",
            bytes: nnz as u64 * 4,
            limit: "u32 index",
            limit_value: (u64::from(u32::MAX) - 2 * NNZ_PER_WORKGROUP as u64) * 4,
        });
    }
    Ok(tiles as u32)
}

/// A CSR matrix on the device with the per-chunk starting rows of the
/// load-balanced SpMV ([module docs](self)).
pub struct BalancedCsr {
    a: GpuCsr,
    chunk_rows: GpuBuffer<u32>,
    tiles: u32,
}

impl fmt::Debug for BalancedCsr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BalancedCsr")
            .field("nrows", &self.a.nrows())
            .field("ncols", &self.a.ncols())
            .field("nnz", &self.a.nnz())
            .field("workgroups", &self.tiles)
            .finish()
    }
}

impl BalancedCsr {
    /// Uploads an `f32` matrix and its chunk rows ([`chunk_rows`], on the
    /// host).
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] over `max_buffer_size` or when the nonzeros
    /// come within two workgroups of `u32::MAX`; wgpu errors.
    pub fn upload(ctx: &GpuContext, a: CsrRef<'_, f32>) -> Result<Self> {
        let tiles = tiles_for(a.nnz())?;
        Ok(Self { a: GpuCsr::upload(ctx, a)?, chunk_rows: GpuBuffer::upload(ctx, &chunk_rows(a.ptr()))?, tiles })
    }

    /// Uploads an `f64` matrix, rounding its values to the nearest `f32`.
    ///
    /// # Errors
    /// As [`BalancedCsr::upload`].
    pub fn upload_f64(ctx: &GpuContext, a: CsrRef<'_, f64>) -> Result<Self> {
        let tiles = tiles_for(a.nnz())?;
        Ok(Self { a: GpuCsr::upload_f64(ctx, a)?, chunk_rows: GpuBuffer::upload(ctx, &chunk_rows(a.ptr()))?, tiles })
    }

    /// Wraps a matrix already on the device, computing its chunk rows there
    /// (entry point `chunk_rows`: one invocation per row writes the chunks
    /// that start in it, so each chunk is written once). The work is
    /// submitted, not waited for.
    ///
    /// # Errors
    /// As [`BalancedCsr::upload`]; [`GpuError::TooLarge`] if the row
    /// pointers exceed one storage binding.
    ///
    /// # Panics
    /// If `a` belongs to another context.
    #[track_caller]
    pub fn from_gpu(ctx: &GpuContext, a: GpuCsr) -> Result<Self> {
        a.ptr().check_context(ctx);
        let tiles = tiles_for(a.nnz())?;
        let chunks = a.nnz().div_ceil(NNZ_PER_INVOCATION);
        let rows = GpuBuffer::<u32>::zeroed(ctx, chunks)?;
        if chunks > 0 {
            let pipeline = ctx.pipeline(KERNEL, "chunk_rows", "", &source)?;
            ctx.scoped("balanced spmv chunk rows", || {
                let params = ctx.params([a.nrows() as u32, 0, a.nnz() as u32, tiles]);
                let grid = ctx.grid("balanced spmv chunk rows dispatch", (a.nrows() as u64).div_ceil(256))?;
                let mut encoder = ctx.encoder();
                ctx.dispatch(
                    &mut encoder,
                    &pipeline,
                    &[
                        (0, params.as_entire_binding()),
                        (1, a.ptr().binding(ctx, "balanced spmv row pointers")?),
                        (8, rows.binding(ctx, "balanced spmv chunk rows")?),
                    ],
                    grid,
                );
                ctx.submit(encoder);
                Ok(())
            })?;
        }
        Ok(Self { a, chunk_rows: rows, tiles })
    }

    /// The matrix.
    pub fn matrix(&self) -> &GpuCsr {
        &self.a
    }

    /// The matrix, giving up the chunk rows.
    pub fn into_matrix(self) -> GpuCsr {
        self.a
    }

    /// The row of each chunk's first nonzero ([`chunk_rows`]).
    pub fn chunk_rows(&self) -> &GpuBuffer<u32> {
        &self.chunk_rows
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.a.nrows()
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.a.ncols()
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.a.nnz()
    }

    /// Workgroups of the first pass: `⌈nnz / NNZ_PER_WORKGROUP⌉`.
    pub fn workgroups(&self) -> usize {
        self.tiles as usize
    }

    /// Carries the SpMV needs for `channels` channels (one per workgroup
    /// and channel): the least length of the `carries` buffer of
    /// [`record_spmv_balanced`].
    pub fn carries_len(&self, channels: usize) -> usize {
        self.workgroups() * channels
    }

    /// The uniform parameters for `channels` channels.
    fn params(&self, ctx: &GpuContext, channels: usize) -> wgpu::Buffer {
        ctx.params([self.nrows() as u32, channels as u32, self.nnz() as u32, self.tiles])
    }
}

#[track_caller]
fn check_shapes(a: &BalancedCsr, x_len: usize, channels: usize, y_len: usize) {
    assert!(channels >= 1, "balanced spmv: channels must be at least 1");
    assert_eq!(
        x_len,
        a.ncols() * channels,
        "balanced spmv: x has {} elements but A is {} x {} with {} channels (x must be A.ncols() x channels)",
        x_len,
        a.nrows(),
        a.ncols(),
        channels
    );
    assert_eq!(
        y_len,
        a.nrows() * channels,
        "balanced spmv: y has {} elements but A is {} x {} with {} channels (y must be A.nrows() x channels)",
        y_len,
        a.nrows(),
        a.ncols(),
        channels
    );
}

/// Fails unless the operands of one product fit the kernel's `u32` indices
/// and the binding limit.
fn check_sizes(ctx: &GpuContext, a: &BalancedCsr, channels: usize) -> Result<()> {
    let x = a.ncols() as u64 * channels as u64;
    let y = a.nrows() as u64 * channels as u64;
    let carries = a.carries_len(channels) as u64;
    for (what, len) in [("balanced spmv x", x), ("balanced spmv y", y), ("balanced spmv carries", carries)] {
        if len > u64::from(u32::MAX) {
            return Err(GpuError::TooLarge {
                what,
                bytes: len * 4,
                limit: "u32 index",
                limit_value: u64::from(u32::MAX) * 4,
            });
        }
        ctx.check_binding(what, len * 4)?;
    }
    Ok(())
}

/// Records `y = A x` (both passes) into `encoder`, for the channel count
/// `d` of `params` (`a.params(d)`); `carries` holds at least
/// `a.carries_len(d)` elements.
#[allow(clippy::too_many_arguments)]
fn encode(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    a: &BalancedCsr,
    x: &GpuBuffer<f32>,
    y: &GpuBuffer<f32>,
    carries: &GpuBuffer<f32>,
    params: &wgpu::Buffer,
    mut timer: Option<&mut PassTimer>,
) -> Result<()> {
    if a.nnz() == 0 {
        // Every row is empty.
        y.check_context(ctx);
        encoder.clear_buffer(y.as_wgpu(), 0, None);
        return Ok(());
    }
    let pass1 = ctx.pipeline(KERNEL, "spmv_balanced", "", &source)?;
    let ptr = a.a.ptr().binding(ctx, "balanced spmv row pointers")?;
    let rows = a.chunk_rows.binding(ctx, "balanced spmv chunk rows")?;
    let y_b = y.binding(ctx, "balanced spmv y")?;
    let carry_b = carries.binding(ctx, "balanced spmv carries")?;
    ctx.dispatch_timed(
        encoder,
        &pass1,
        &[
            (0, params.as_entire_binding()),
            (1, ptr.clone()),
            (2, a.a.indices().binding(ctx, "balanced spmv column indices")?),
            (3, a.a.values().binding(ctx, "balanced spmv values")?),
            (4, rows.clone()),
            (5, x.binding(ctx, "balanced spmv x")?),
            (6, y_b.clone()),
            (7, carry_b.clone()),
        ],
        ctx.grid("balanced spmv dispatch", u64::from(a.tiles))?,
        timer.as_deref_mut().and_then(|t| t.writes("spmv_balanced")),
    );
    if a.tiles > 1 {
        let fixup = ctx.pipeline(KERNEL, "spmv_fixup", "", &source)?;
        ctx.dispatch_timed(
            encoder,
            &fixup,
            &[(0, params.as_entire_binding()), (1, ptr), (4, rows), (6, y_b), (7, carry_b)],
            ctx.grid("balanced spmv fixup dispatch", u64::from(a.tiles - 1).div_ceil(256))?,
            timer.and_then(|t| t.writes("spmv_fixup")),
        );
    }
    Ok(())
}

/// `y = A x` into a new buffer (`x`: `ncols × channels`, row-major), load
/// balanced by nonzeros ([module docs](self)).
///
/// ```no_run
/// use subla_algebra::CsrMat;
/// use subla_gpu::balanced::{BalancedCsr, spmv_balanced};
/// use subla_gpu::{GpuBuffer, GpuContext};
/// let ctx = GpuContext::new()?;
/// let a = CsrMat::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0f32, 2.0, 3.0])?;
/// let a = BalancedCsr::upload(&ctx, a.as_ref())?;
/// let x = GpuBuffer::upload(&ctx, &[1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0])?; // 3 x 2
/// let y = spmv_balanced(&ctx, &a, &x, 2)?;
/// assert_eq!(y.download(&ctx)?, vec![7.0, 70.0, 6.0, 60.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
/// On mismatched shapes (see the [module docs](self)).
///
/// # Errors
/// [`GpuError::TooLarge`] if an array exceeds one storage binding or `u32`
/// indices; wgpu errors.
#[track_caller]
pub fn spmv_balanced(ctx: &GpuContext, a: &BalancedCsr, x: &GpuBuffer<f32>, channels: usize) -> Result<GpuBuffer<f32>> {
    check_shapes(a, x.len(), channels, a.nrows() * channels);
    check_sizes(ctx, a, channels)?;
    let mut y = GpuBuffer::zeroed(ctx, a.nrows() * channels)?;
    spmv_balanced_into(ctx, a, x, channels, &mut y)?;
    Ok(y)
}

/// `y = A x` into caller storage (every element of `y` is overwritten).
/// Allocates the small carry buffer (one value per workgroup and channel)
/// on each call; [`GpuRefinement`] keeps its own.
///
/// # Panics
/// On mismatched shapes.
///
/// # Errors
/// As [`spmv_balanced`].
#[track_caller]
pub fn spmv_balanced_into(
    ctx: &GpuContext,
    a: &BalancedCsr,
    x: &GpuBuffer<f32>,
    channels: usize,
    y: &mut GpuBuffer<f32>,
) -> Result<()> {
    check_shapes(a, x.len(), channels, y.len());
    x.check_context(ctx);
    y.check_context(ctx);
    check_sizes(ctx, a, channels)?;
    let carries = GpuBuffer::<f32>::zeroed(ctx, a.carries_len(channels))?;
    ctx.scoped("balanced spmv", || {
        let params = a.params(ctx, channels);
        let mut encoder = ctx.encoder();
        encode(ctx, &mut encoder, a, x, y, &carries, &params, None)?;
        ctx.submit(encoder);
        Ok(())
    })
}

/// Records `y = A x` (both passes) into `encoder` without submitting it,
/// for callers that chain the product with kernels of their own in one
/// submission. `carries` is scratch of at least
/// [`BalancedCsr::carries_len`]`(channels)` elements, reusable from call to
/// call. With a `timer`, the passes are timed under the labels
/// `spmv_balanced` and `spmv_fixup` (the fix-up pass only runs when the
/// nonzeros span more than one workgroup).
///
/// Call it inside [`GpuContext::scoped`], which turns the errors wgpu
/// reports while recording into [`GpuError`]s.
///
/// # Panics
/// On mismatched shapes (see the [module docs](self)), `carries` shorter
/// than `carries_len(channels)`, or a buffer of another context.
///
/// # Errors
/// As [`spmv_balanced`].
#[allow(clippy::too_many_arguments)]
#[track_caller]
pub fn record_spmv_balanced(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    a: &BalancedCsr,
    x: &GpuBuffer<f32>,
    channels: usize,
    y: &GpuBuffer<f32>,
    carries: &GpuBuffer<f32>,
    timer: Option<&mut PassTimer>,
) -> Result<()> {
    check_shapes(a, x.len(), channels, y.len());
    assert!(
        carries.len() >= a.carries_len(channels),
        "balanced spmv: carries has {} elements, {} channels over {} workgroups need {}",
        carries.len(),
        channels,
        a.workgroups(),
        a.carries_len(channels)
    );
    x.check_context(ctx);
    y.check_context(ctx);
    carries.check_context(ctx);
    check_sizes(ctx, a, channels)?;
    let params = a.params(ctx, channels);
    encode(ctx, encoder, a, x, y, carries, &params, timer)
}

/// A chain of refinement matrices `R_0, …, R_{L−1}` on the device,
/// evaluated as `out = R_{L−1} ⋯ R_0 · control` with one load-balanced
/// SpMV per matrix ([module docs](self)).
///
/// The intermediate levels `R_i ⋯ R_0 · control` (`i < L − 1`) live in
/// device buffers sized for [`channels`](Self::channels), allocated once
/// and reused by every evaluation, as is the carry buffer.
#[derive(Debug)]
pub struct GpuRefinement {
    mats: Vec<BalancedCsr>,
    channels: usize,
    /// Output of `mats[i]` for `i < L − 1`, `nrows × channels`.
    levels: Vec<GpuBuffer<f32>>,
    carries: GpuBuffer<f32>,
    /// Uniform parameters of each matrix for `channels`.
    params: Vec<wgpu::Buffer>,
}

impl GpuRefinement {
    /// Uploads `chain` (coarsest first, as `Refinement::levels` of
    /// `subla-scheme` gives it; values rounded to `f32`) and allocates the
    /// intermediate levels for `channels` channels.
    ///
    /// # Panics
    /// If `chain` is empty, `channels == 0`, or the shapes do not chain
    /// (`chain[i + 1].ncols() != chain[i].nrows()`; the message names the
    /// matrices). Nothing is uploaded then.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when a matrix or a level exceeds a buffer or
    /// binding limit or `u32` indices; wgpu errors.
    #[track_caller]
    pub fn from_chain(ctx: &GpuContext, chain: &[CsrRef<'_, f64>], channels: usize) -> Result<Self> {
        assert!(!chain.is_empty(), "GpuRefinement::from_chain: the chain is empty (it needs at least one matrix)");
        assert!(channels >= 1, "GpuRefinement::from_chain: channels must be at least 1");
        for (i, w) in chain.windows(2).enumerate() {
            assert_eq!(
                w[1].ncols(),
                w[0].nrows(),
                "GpuRefinement::from_chain: matrix {} is {} x {} but matrix {} is {} x {} (each matrix must have as many columns as the previous one has rows)",
                i + 1,
                w[1].nrows(),
                w[1].ncols(),
                i,
                w[0].nrows(),
                w[0].ncols()
            );
        }
        let mats = chain.iter().map(|&m| BalancedCsr::upload_f64(ctx, m)).collect::<Result<Vec<_>>>()?;
        let mut eval =
            Self { mats, channels: 0, levels: Vec::new(), carries: GpuBuffer::zeroed(ctx, 0)?, params: Vec::new() };
        eval.set_channels(ctx, channels)?;
        Ok(eval)
    }

    /// Resizes the intermediate levels for `channels` channels (nothing
    /// happens if that is already the count).
    ///
    /// # Panics
    /// If `channels == 0`.
    ///
    /// # Errors
    /// As [`GpuRefinement::from_chain`].
    #[track_caller]
    pub fn set_channels(&mut self, ctx: &GpuContext, channels: usize) -> Result<()> {
        assert!(channels >= 1, "GpuRefinement: channels must be at least 1");
        if channels == self.channels {
            return Ok(());
        }
        for m in &self.mats {
            check_sizes(ctx, m, channels)?;
        }
        let (_, head) = self.mats.split_last().expect("a chain has at least one matrix");
        let levels = head.iter().map(|m| GpuBuffer::zeroed(ctx, m.nrows() * channels)).collect::<Result<Vec<_>>>()?;
        let carries_len = self.mats.iter().map(|m| m.carries_len(channels)).max().unwrap_or(0);
        let carries = GpuBuffer::zeroed(ctx, carries_len)?;
        let params =
            ctx.scoped("refinement parameters", || Ok(self.mats.iter().map(|m| m.params(ctx, channels)).collect()))?;
        *self = Self { mats: std::mem::take(&mut self.mats), channels, levels, carries, params };
        Ok(())
    }

    /// `R_{L−1} ⋯ R_0 · control` for `control` of `input_len() × channels`
    /// (row-major), read back to the host. Resizes the intermediate levels
    /// first if `channels` differs from [`channels`](Self::channels).
    ///
    /// # Panics
    /// If `control.len() != input_len() · channels` or `channels == 0`.
    ///
    /// # Errors
    /// As [`GpuRefinement::from_chain`]; wgpu errors.
    #[track_caller]
    pub fn apply(&mut self, ctx: &GpuContext, control: &[f32], channels: usize) -> Result<Vec<f32>> {
        assert!(channels >= 1, "GpuRefinement::apply: channels must be at least 1");
        assert_eq!(
            control.len(),
            self.input_len() * channels,
            "GpuRefinement::apply: control has {} elements but the chain reads {} rows of {} channels",
            control.len(),
            self.input_len(),
            channels
        );
        self.set_channels(ctx, channels)?;
        let input = GpuBuffer::upload(ctx, control)?;
        let mut out = self.output_buffer(ctx)?;
        self.apply_device(ctx, &input, &mut out)?;
        out.download(ctx)
    }

    /// `out = R_{L−1} ⋯ R_0 · control` on the device for
    /// [`channels`](Self::channels) channels: every product is recorded in
    /// one command buffer and submitted, nothing is read back or waited
    /// for. `control` may be rewritten with [`GpuBuffer::write`] and `out`
    /// reused frame after frame.
    ///
    /// # Panics
    /// If `control.len() != input_len() · channels()`,
    /// `out.len() != output_len() · channels()`, or a buffer belongs to
    /// another context.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] if a buffer exceeds one storage binding; wgpu
    /// errors.
    #[track_caller]
    pub fn apply_device(&self, ctx: &GpuContext, control: &GpuBuffer<f32>, out: &mut GpuBuffer<f32>) -> Result<()> {
        let d = self.channels;
        assert_eq!(
            control.len(),
            self.input_len() * d,
            "GpuRefinement::apply_device: control has {} elements but the chain reads {} rows of {} channels",
            control.len(),
            self.input_len(),
            d
        );
        assert_eq!(
            out.len(),
            self.output_len() * d,
            "GpuRefinement::apply_device: out has {} elements but the chain writes {} rows of {} channels",
            out.len(),
            self.output_len(),
            d
        );
        control.check_context(ctx);
        out.check_context(ctx);
        let last = self.mats.len() - 1;
        ctx.scoped("refinement evaluation", || {
            let mut encoder = ctx.encoder();
            for (i, m) in self.mats.iter().enumerate() {
                let x = if i == 0 { control } else { &self.levels[i - 1] };
                let y = if i == last { &*out } else { &self.levels[i] };
                encode(ctx, &mut encoder, m, x, y, &self.carries, &self.params[i], None)?;
            }
            ctx.submit(encoder);
            Ok(())
        })
    }

    /// A zeroed buffer of `output_len() × channels()` elements, for
    /// [`apply_device`](Self::apply_device).
    ///
    /// # Errors
    /// As [`GpuBuffer::zeroed`].
    pub fn output_buffer(&self, ctx: &GpuContext) -> Result<GpuBuffer<f32>> {
        GpuBuffer::zeroed(ctx, self.output_len() * self.channels)
    }

    /// The channel count the intermediate levels are sized for.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Rows of the control data (columns of `R_0`).
    pub fn input_len(&self) -> usize {
        self.mats[0].ncols()
    }

    /// Rows of the output (rows of `R_{L−1}`).
    pub fn output_len(&self) -> usize {
        self.mats[self.mats.len() - 1].nrows()
    }

    /// The matrices, coarsest first.
    pub fn matrices(&self) -> &[BalancedCsr] {
        &self.mats
    }

    /// Number of matrices applied in turn.
    pub fn num_matrices(&self) -> usize {
        self.mats.len()
    }

    /// Nonzeros applied per evaluation.
    pub fn nnz(&self) -> u64 {
        self.mats.iter().map(|m| m.nnz() as u64).sum()
    }

    /// Rows of the intermediate levels kept on the device.
    pub fn intermediate_rows(&self) -> usize {
        self.levels.iter().map(|l| l.len() / self.channels).sum()
    }
}
