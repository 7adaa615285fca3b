//! GPU timing for benchmarks: timestamp queries around compute passes, and
//! the device-to-device copy that achieved bandwidth is reported against.
//!
//! [`PassTimer`] hands out `timestamp_writes` for compute passes (two
//! queries per pass) when the adapter has `wgpu::Features::TIMESTAMP_QUERY`
//! (the context requests it whenever the adapter offers it); elsewhere it
//! hands out `None` and callers fall back to wall time around a submit and
//! a wait. Timestamps measure the GPU alone: no submission, no readback.
//!
//! [`copy_bandwidth`] copies a buffer on the device with a compute kernel
//! (`shaders/copy.wgsl`, 16 bytes per invocation) and with
//! `copy_buffer_to_buffer`, and reports bytes moved (read + written) per
//! second: the machine's practical memory bandwidth, measured in the same
//! run as the kernels it is compared with.

use std::time::Instant;

use crate::context::{GpuContext, WORKGROUP, range};
use crate::error::{GpuError, Result};
use crate::shaders;

/// One timed pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PassTime {
    /// The label given to [`PassTimer::writes`].
    pub label: String,
    /// GPU time between the pass's beginning and end timestamps.
    pub seconds: f64,
}

/// Timestamp queries for up to `capacity` compute passes.
#[derive(Debug)]
pub struct PassTimer {
    queries: Option<(wgpu::QuerySet, wgpu::Buffer)>,
    labels: Vec<String>,
    capacity: u32,
    period_ns: f64,
}

impl PassTimer {
    /// A timer for up to `passes` passes; without timestamp support it
    /// records nothing ([`PassTimer::is_supported`] is false).
    ///
    /// # Errors
    /// wgpu errors creating the query set.
    pub fn new(ctx: &GpuContext, passes: u32) -> Result<Self> {
        let capacity = passes.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
        let queries = if ctx.has_timestamps() {
            Some(ctx.scoped("timestamp query creation", || {
                let set = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("subla pass timer"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * capacity,
                });
                let resolve = ctx.create_buffer(
                    "timestamp resolve buffer",
                    16 * u64::from(capacity),
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    false,
                )?;
                Ok((set, resolve))
            })?)
        } else {
            None
        };
        Ok(PassTimer {
            queries,
            labels: Vec::new(),
            capacity,
            period_ns: f64::from(ctx.queue().get_timestamp_period()),
        })
    }

    /// Whether passes are timed on the GPU.
    pub fn is_supported(&self) -> bool {
        self.queries.is_some()
    }

    /// The `timestamp_writes` of the next pass, labelled `label`; `None`
    /// without timestamp support or once `capacity` passes are recorded.
    pub fn writes(&mut self, label: impl Into<String>) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let (set, _) = self.queries.as_ref()?;
        let k = u32::try_from(self.labels.len()).ok().filter(|&k| k < self.capacity)?;
        self.labels.push(label.into());
        Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(2 * k),
            end_of_pass_write_index: Some(2 * k + 1),
        })
    }

    /// Reads the times of the passes recorded so far (waits for the
    /// device), in recording order, and starts over. Call after the
    /// passes' command buffers are submitted.
    ///
    /// # Errors
    /// wgpu and readback errors.
    pub fn read(&mut self, ctx: &GpuContext) -> Result<Vec<PassTime>> {
        let Some((set, resolve)) = self.queries.as_ref() else { return Ok(Vec::new()) };
        let n = self.labels.len() as u32;
        if n == 0 {
            return Ok(Vec::new());
        }
        let raw = ctx.scoped("timestamp readback", || {
            let mut encoder = ctx.encoder();
            encoder.resolve_query_set(set, 0..2 * n, resolve, 0);
            ctx.submit_and_read(encoder, &[(resolve, 0, 16 * u64::from(n))])
        })?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&raw);
        let times = self
            .labels
            .drain(..)
            .enumerate()
            .map(|(k, label)| {
                let dt = ticks[2 * k + 1].saturating_sub(ticks[2 * k]);
                PassTime { label, seconds: dt as f64 * self.period_ns * 1e-9 }
            })
            .collect();
        Ok(times)
    }
}

/// A measured device-to-device copy.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyBandwidth {
    /// Bytes of the copied buffer.
    pub bytes: u64,
    /// Best time of the compute copy by timestamps, if the adapter has them.
    pub kernel_seconds: Option<f64>,
    /// Best wall time of the compute copy (submit and wait).
    pub kernel_wall_seconds: f64,
    /// Best wall time of `copy_buffer_to_buffer` (submit and wait).
    pub copy_wall_seconds: f64,
}

impl CopyBandwidth {
    /// Bytes moved per second (read and written: `2 × bytes`) by the best
    /// of the three measurements.
    pub fn bytes_per_second(&self) -> f64 {
        let best = [self.kernel_seconds.unwrap_or(f64::INFINITY), self.kernel_wall_seconds, self.copy_wall_seconds]
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        2.0 * self.bytes as f64 / best
    }
}

/// Copies a buffer of about `bytes` bytes (rounded down to 16, capped by
/// the binding limit) on the device `repeats` times each way and keeps the
/// best times.
///
/// # Errors
/// [`GpuError::TooLarge`] if even 16 bytes do not fit; wgpu errors.
pub fn copy_bandwidth(ctx: &GpuContext, bytes: u64, repeats: u32) -> Result<CopyBandwidth> {
    let bytes = bytes.min(ctx.binding_limit()).min(ctx.limits().max_buffer_size) / 16 * 16;
    if bytes == 0 {
        return Err(GpuError::TooLarge { what: "copy bandwidth buffer", bytes: 16, limit: "binding", limit_value: 0 });
    }
    let count = bytes / 16;
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let src = ctx.create_buffer("copy source", bytes, usage, false)?;
    let dst = ctx.create_buffer("copy destination", bytes, usage, false)?;
    let pipeline = ctx.pipeline("copy.wgsl", "copy_vec4", "", &|| shaders::COPY.into())?;
    let params = ctx.params([u32::try_from(count).unwrap_or(u32::MAX), 0, 0, 0]);
    let grid = ctx.grid("copy bandwidth dispatch", count.div_ceil(u64::from(WORKGROUP)))?;
    let mut timer = PassTimer::new(ctx, repeats.max(1))?;
    let (mut kernel_wall, mut copy_wall) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        ctx.scoped("copy bandwidth", || {
            let mut encoder = ctx.encoder();
            let entries = [(0, params.as_entire_binding()), (1, range(&src, 0, bytes)), (2, range(&dst, 0, bytes))];
            ctx.dispatch_timed(&mut encoder, &pipeline, &entries, grid, timer.writes("copy"));
            ctx.submit(encoder);
            ctx.wait()
        })?;
        kernel_wall = kernel_wall.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        ctx.scoped("copy bandwidth", || {
            let mut encoder = ctx.encoder();
            encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
            ctx.submit(encoder);
            ctx.wait()
        })?;
        copy_wall = copy_wall.min(start.elapsed().as_secs_f64());
    }
    let kernel_seconds = timer.read(ctx)?.iter().map(|t| t.seconds).filter(|&s| s > 0.0).reduce(f64::min);
    Ok(CopyBandwidth { bytes, kernel_seconds, kernel_wall_seconds: kernel_wall, copy_wall_seconds: copy_wall })
}

/// One kernel of one level in an [`EvalProfile`] (the profiled evals of
/// the GPU scheme crates).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelProfile {
    /// The parent level (`level → level + 1`).
    pub level: u32,
    /// The kernel's entry point.
    pub kernel: &'static str,
    /// GPU time (timestamp queries); `None` where the adapter has none.
    pub seconds: Option<f64>,
    /// Bytes the kernel moves at least: every array it reads (indices,
    /// mask indices, the parent level's data) once and its output rows
    /// once.
    pub bytes: u64,
}

/// The timings of one profiled eval through a chain of levels.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalProfile {
    /// Every kernel, level by level, in the order they ran.
    pub kernels: Vec<KernelProfile>,
    /// Wall time of the whole eval: upload, kernels, readback.
    pub wall_seconds: f64,
}

impl EvalProfile {
    /// Total GPU time of the kernels, if every kernel was timed.
    pub fn gpu_seconds(&self) -> Option<f64> {
        self.kernels.iter().map(|k| k.seconds).sum()
    }
    /// Total bytes of the kernels.
    pub fn bytes(&self) -> u64 {
        self.kernels.iter().map(|k| k.bytes).sum()
    }
}
