//! Multi-level exclusive prefix sum of `u32` (`shaders/scan.wgsl`).
//!
//! ```text
//! level 0   data  [ 512 | 512 | 512 | … ]   scan_blocks: each block from 0,
//!                    │     │     │                       totals → sums
//! level 1   sums  [ t0  t1  t2  … ]          scanned the same way, recursively
//!                    │     │     │           until one block is left
//! level 0   data  [ +s0 | +s1 | +s2 | … ]   add_offsets
//! ```
//!
//! The grand total is the single block total of the last level. Inputs
//! larger than one storage binding are cut into chunks of whole blocks, each
//! bound and dispatched on its own (the block sums of all chunks go to one
//! array, so no carry is needed between chunks).
//!
//! # Determinism
//! Integer addition is exact; every element is written by one invocation.
//! A total over `u32::MAX` is detected (any wrapping addition sets a status
//! word) and reported as [`GpuError::Overflow`].

use crate::buffer::GpuBuffer;
use crate::context::{GpuContext, range};
use crate::error::{GpuError, Result};
use crate::shaders;

/// Elements scanned by one workgroup.
pub const SCAN_BLOCK: u64 = 512;

const STORAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// Largest chunk (elements, whole blocks, binding-offset aligned) that fits
/// in one storage binding.
fn chunk_elems(ctx: &GpuContext) -> u64 {
    let align = u64::from(ctx.limits().min_storage_buffer_offset_alignment).max(4) / 4;
    let unit = SCAN_BLOCK.max(align).next_multiple_of(SCAN_BLOCK);
    let fit = (ctx.binding_limit() / 4).min(1 << 30);
    (fit - fit % unit).max(unit)
}

/// Records the scan of `n` elements of `data` (in place) into `encoder`.
/// Returns the buffer whose first element will hold the grand total.
pub(crate) fn encode_scan(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    data: &wgpu::Buffer,
    n: u64,
    status: &wgpu::Buffer,
) -> Result<wgpu::Buffer> {
    let src = &|| shaders::SCAN.into();
    let blocks_pipe = ctx.pipeline("scan", "scan_blocks", "", src)?;
    let offsets_pipe = ctx.pipeline("scan", "add_offsets", "", src)?;
    let nblocks = n.div_ceil(SCAN_BLOCK).max(1);
    ctx.check_binding("scan block sums", nblocks * 4)?;
    let sums = ctx.create_buffer("scan block sums", nblocks * 4, STORAGE, false)?;
    let chunk = chunk_elems(ctx);
    let chunks: Vec<(u64, u64)> = (0..n.div_ceil(chunk)).map(|c| (c * chunk, chunk.min(n - c * chunk))).collect();
    for &(start, len) in &chunks {
        let params = ctx.params([len as u32, (start / SCAN_BLOCK) as u32, 0, 0]);
        let grid = ctx.grid("scan dispatch", len.div_ceil(SCAN_BLOCK))?;
        ctx.dispatch(
            encoder,
            &blocks_pipe,
            &[
                (0, params.as_entire_binding()),
                (1, range(data, start * 4, len * 4)),
                (2, range(&sums, 0, nblocks * 4)),
                (3, range(status, 0, 4)),
            ],
            grid,
        );
    }
    if nblocks == 1 {
        return Ok(sums);
    }
    let total = encode_scan(ctx, encoder, &sums, nblocks, status)?;
    for &(start, len) in &chunks {
        let params = ctx.params([len as u32, (start / SCAN_BLOCK) as u32, 0, 0]);
        let grid = ctx.grid("scan dispatch", len.div_ceil(SCAN_BLOCK))?;
        ctx.dispatch(
            encoder,
            &offsets_pipe,
            &[(0, params.as_entire_binding()), (1, range(data, start * 4, len * 4)), (2, range(&sums, 0, nblocks * 4))],
            grid,
        );
    }
    Ok(total)
}

/// A zeroed status word for [`encode_scan`].
pub(crate) fn status_buffer(ctx: &GpuContext) -> Result<wgpu::Buffer> {
    ctx.create_buffer("scan status", 4, STORAGE, false)
}

/// Exclusive prefix sum in place: `data[i] = data[0] + … + data[i-1]`,
/// `data[0] = 0`. Returns the total of the input (waits for the device).
///
/// ```no_run
/// use subla_gpu::{GpuBuffer, GpuContext, scan::scan_exclusive_in_place};
/// let ctx = GpuContext::new()?;
/// let mut counts = GpuBuffer::upload(&ctx, &[3u32, 0, 2, 5])?;
/// let total = scan_exclusive_in_place(&ctx, &mut counts)?;
/// assert_eq!((counts.download(&ctx)?, total), (vec![0, 3, 3, 5], 10));
/// # Ok::<(), subla_gpu::GpuError>(())
/// ```
///
/// # Errors
/// [`GpuError::Overflow`] if the total exceeds `u32::MAX` (the contents are
/// then unspecified); [`GpuError::TooLarge`] if the block sums do not fit
/// one binding (only for inputs of more than `128 × binding limit`
/// elements); wgpu errors.
///
/// # Panics
/// If `data` belongs to another context.
#[track_caller]
pub fn scan_exclusive_in_place(ctx: &GpuContext, data: &mut GpuBuffer<u32>) -> Result<u32> {
    data.check_context(ctx);
    let n = data.len() as u64;
    if n == 0 {
        ctx.check_alive()?;
        return Ok(0);
    }
    ctx.scoped("scan", || {
        let mut encoder = ctx.encoder();
        let status = status_buffer(ctx)?;
        let total = encode_scan(ctx, &mut encoder, data.as_wgpu(), n, &status)?;
        let raw = ctx.submit_and_read(encoder, &[(&total, 0, 4), (&status, 0, 4)])?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&raw);
        match words[..] {
            [total, 0] => Ok(total),
            [_, _] => Err(GpuError::Overflow { what: "exclusive scan total" }),
            _ => Err(GpuError::Map { message: format!("read back {} bytes, expected 8", raw.len()) }),
        }
    })
}

/// Exclusive prefix sum into a new buffer; returns it with the total.
///
/// # Errors
/// As [`scan_exclusive_in_place`].
///
/// # Panics
/// If `data` belongs to another context.
#[track_caller]
pub fn scan_exclusive(ctx: &GpuContext, data: &GpuBuffer<u32>) -> Result<(GpuBuffer<u32>, u32)> {
    let mut out = data.duplicate(ctx)?;
    let total = scan_exclusive_in_place(ctx, &mut out)?;
    Ok((out, total))
}
