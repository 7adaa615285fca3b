//! Stream compaction and predicate enumeration (`shaders/compact.wgsl`).
//!
//! ```text
//! flags    [ 0  7  0  0  1  1  0  3 ]
//! marks    [ 0  1  0  0  1  1  0  1 ]   mark
//! offsets  [ 0  0  1  1  1  2  3  3 ]   exclusive scan, total 4
//! out      [ 1  4  5  7 ]               scatter: out[offsets[i]] = i
//! ```
//!
//! The GPU half of `subla_algebra::scan::compact` (Mlakar et al. 2020, §4.1:
//! numbering the edges of a mesh is a prefix sum over per-entry flags). Each
//! output is written by the one invocation of its index, so the order is
//! increasing and the result deterministic.

use crate::buffer::GpuBuffer;
use crate::context::{GpuContext, range};
use crate::error::{GpuError, Result};
use crate::scan::{SCAN_BLOCK, scan_exclusive_in_place};
use crate::shaders;

/// The indices `i` with `flags[i] != 0`, in increasing order, and their
/// count (waits for the device once, to size the output).
///
/// Inputs larger than one storage binding are processed in chunks; the
/// output is bound whole.
///
/// ```no_run
/// use subla_gpu::{GpuBuffer, GpuContext, compact::compact};
/// let ctx = GpuContext::new()?;
/// let flags = GpuBuffer::upload(&ctx, &[0u32, 7, 0, 0, 1, 1, 0, 3])?;
/// let (indices, count) = compact(&ctx, &flags)?;
/// assert_eq!((indices.download(&ctx)?, count), (vec![1, 4, 5, 7], 4));
/// # Ok::<(), subla_gpu::GpuError>(())
/// ```
///
/// # Errors
/// [`GpuError::TooLarge`] if the output exceeds one binding or the input
/// exceeds `u32::MAX` elements; wgpu errors.
///
/// # Panics
/// If `flags` belongs to another context.
#[track_caller]
pub fn compact(ctx: &GpuContext, flags: &GpuBuffer<u32>) -> Result<(GpuBuffer<u32>, u32)> {
    flags.check_context(ctx);
    let n = flags.len() as u64;
    if n > u64::from(u32::MAX) {
        return Err(GpuError::TooLarge {
            what: "compaction input",
            bytes: n * 4,
            limit: "u32 index",
            limit_value: u64::from(u32::MAX) * 4,
        });
    }
    if n == 0 {
        return Ok((GpuBuffer::zeroed(ctx, 0)?, 0));
    }
    let src = &|| shaders::COMPACT.into();
    let mark = ctx.pipeline("compact", "mark", "", src)?;
    let scatter = ctx.pipeline("compact", "scatter", "", src)?;
    // Chunks of whole 256-invocation workgroups that fit one binding and
    // keep binding offsets aligned (any multiple of the scan block does).
    let align = (u64::from(ctx.limits().min_storage_buffer_offset_alignment) / 4).max(SCAN_BLOCK);
    let fit = (ctx.binding_limit() / 4).min(1 << 30);
    let chunk = (fit - fit % align).max(align);
    let chunks: Vec<(u64, u64)> = (0..n.div_ceil(chunk)).map(|c| (c * chunk, chunk.min(n - c * chunk))).collect();

    let mut marks = GpuBuffer::<u32>::zeroed(ctx, flags.len())?;
    ctx.scoped("compaction", || {
        let mut encoder = ctx.encoder();
        for &(start, len) in &chunks {
            let params = ctx.params([len as u32, start as u32, 0, 0]);
            ctx.dispatch(
                &mut encoder,
                &mark,
                &[
                    (0, params.as_entire_binding()),
                    (1, range(flags.as_wgpu(), start * 4, len * 4)),
                    (2, range(marks.as_wgpu(), start * 4, len * 4)),
                ],
                ctx.grid("compaction dispatch", len.div_ceil(256))?,
            );
        }
        ctx.submit(encoder);
        Ok(())
    })?;
    let count = scan_exclusive_in_place(ctx, &mut marks)?;
    let out = GpuBuffer::<u32>::zeroed(ctx, count as usize)?;
    if count == 0 {
        return Ok((out, 0));
    }
    ctx.scoped("compaction", || {
        let out_binding = out.binding(ctx, "compacted indices")?;
        let mut encoder = ctx.encoder();
        for &(start, len) in &chunks {
            let params = ctx.params([len as u32, start as u32, 0, 0]);
            ctx.dispatch(
                &mut encoder,
                &scatter,
                &[
                    (0, params.as_entire_binding()),
                    (1, range(flags.as_wgpu(), start * 4, len * 4)),
                    (2, range(marks.as_wgpu(), start * 4, len * 4)),
                    (3, out_binding.clone()),
                ],
                ctx.grid("compaction dispatch", len.div_ceil(256))?,
            );
        }
        ctx.submit(encoder);
        Ok(())
    })?;
    Ok((out, count))
}
