//! Adapter selection, device limits, error capture and the pipeline cache.
//!
//! A [`GpuContext`] owns one wgpu device and its queue. It
//!
//! * picks the adapter ([`GpuContextOptions`], overridable by the
//!   environment variables [`BACKEND_ENV`] and [`ADAPTER_ENV`]);
//! * requests the adapter's **real** limits (`adapter.limits()`), so that
//!   buffers and storage bindings may be as large as the hardware allows
//!   (often 2 GiB or more on discrete GPUs) rather than the WebGPU defaults;
//! * checks every buffer and binding against those limits *before* calling
//!   wgpu ([`GpuError::TooLarge`]);
//! * runs every operation inside wgpu error scopes (validation, out of
//!   memory, internal) and records device loss and uncaptured errors, so
//!   that wgpu never panics on an error: each one becomes a [`GpuError`];
//! * builds each compute pipeline once and caches it, keyed by kernel, entry
//!   point and specialisation (the user snippet of a mapped kernel).

use std::borrow::Cow;
use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};

use wgpu::util::DeviceExt;

use crate::error::{GpuError, Result};

/// Environment variable restricting the backends an adapter may come from:
/// a comma-separated list of `vulkan`, `gl`, `metal`, `dx12`.
pub const BACKEND_ENV: &str = "SUBLA_GPU_BACKEND";

/// Environment variable selecting the adapter by a case-insensitive
/// substring of its name (for example `llvmpipe`, `nvidia`).
pub const ADAPTER_ENV: &str = "SUBLA_GPU_ADAPTER";

/// How long a readback waits for its map callback after the device is idle.
const MAP_CALLBACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How long [`GpuContext::wait`] blocks before it checks whether the
/// device was lost and waits again.
const WAIT_SLICE: std::time::Duration = std::time::Duration::from_secs(1);

/// Largest staging buffer of one readback ([`GpuContext::read_into`]):
/// larger readbacks go through it in chunks.
pub(crate) const READBACK_CHUNK: u64 = 64 << 20;

/// Invocations per workgroup of every kernel (along x).
pub(crate) const WORKGROUP: u32 = 256;

/// The smallest binding cap [`GpuContextOptions::max_binding_bytes`]
/// accepts: one scan block of 512 `u32`.
pub const MIN_BINDING_CAP: u64 = 2048;

/// How to choose and configure the device.
///
/// The defaults pick a high-performance adapter on any native backend and
/// use the adapter's own limits. The environment variables [`BACKEND_ENV`]
/// and [`ADAPTER_ENV`] fill [`backends`](Self::backends) and
/// [`adapter_name`](Self::adapter_name) when those are `None`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GpuContextOptions {
    /// Preferred kind of adapter: `HighPerformance` ranks discrete GPUs
    /// first, `LowPower` integrated ones; software adapters come last.
    pub power_preference: wgpu::PowerPreference,
    /// Backends to consider; `None`: [`BACKEND_ENV`], or all native ones.
    pub backends: Option<wgpu::Backends>,
    /// Case-insensitive substring of the adapter name; `None`:
    /// [`ADAPTER_ENV`], or any adapter.
    pub adapter_name: Option<String>,
    /// Caps the storage-binding size the kernels use, below the device's
    /// `max_storage_buffer_binding_size` (rounded down to a multiple of
    /// [`MIN_BINDING_CAP`], and at least that). Meant for exercising the
    /// split-dispatch paths on small data.
    pub max_binding_bytes: Option<u64>,
    /// Caps the workgroups per grid dimension below the device's
    /// `max_compute_workgroups_per_dimension` (at least 1). Meant for
    /// exercising the 2-D grid paths on small data.
    pub max_workgroups_per_dimension: Option<u32>,
}

impl Default for GpuContextOptions {
    fn default() -> Self {
        Self {
            power_preference: wgpu::PowerPreference::HighPerformance,
            backends: None,
            adapter_name: None,
            max_binding_bytes: None,
            max_workgroups_per_dimension: None,
        }
    }
}

impl GpuContextOptions {
    /// Sets [`power_preference`](Self::power_preference).
    #[must_use]
    pub fn power_preference(mut self, preference: wgpu::PowerPreference) -> Self {
        self.power_preference = preference;
        self
    }
    /// Sets [`backends`](Self::backends).
    #[must_use]
    pub fn backends(mut self, backends: wgpu::Backends) -> Self {
        self.backends = Some(backends);
        self
    }
    /// Sets [`adapter_name`](Self::adapter_name).
    #[must_use]
    pub fn adapter_name(mut self, name: impl Into<String>) -> Self {
        self.adapter_name = Some(name.into());
        self
    }
    /// Sets [`max_binding_bytes`](Self::max_binding_bytes).
    #[must_use]
    pub fn max_binding_bytes(mut self, bytes: u64) -> Self {
        self.max_binding_bytes = Some(bytes);
        self
    }
    /// Sets [`max_workgroups_per_dimension`](Self::max_workgroups_per_dimension).
    #[must_use]
    pub fn max_workgroups_per_dimension(mut self, groups: u32) -> Self {
        self.max_workgroups_per_dimension = Some(groups);
        self
    }
}

/// A compute pipeline with the layout of its bind group 0.
#[derive(Debug)]
pub(crate) struct Pipeline {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PipelineKey {
    kernel: &'static str,
    entry: &'static str,
    specialisation: String,
}

/// One wgpu device and queue, with limits, error capture and a pipeline
/// cache. `Send + Sync`: share it by reference.
///
/// # Errors
/// Every operation first checks that the device is alive
/// ([`GpuError::DeviceLost`]) and turns errors wgpu reports during the
/// operation into [`GpuError`]s.
#[derive(Debug)]
pub struct GpuContext {
    id: u64,
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    binding_limit: u64,
    max_groups: u32,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    modules: Mutex<HashMap<(&'static str, String), wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Parses [`BACKEND_ENV`]: `None` when unset or blank.
fn backends_from_env() -> Result<Option<wgpu::Backends>> {
    let Ok(value) = std::env::var(BACKEND_ENV) else { return Ok(None) };
    if value.trim().is_empty() {
        return Ok(None);
    }
    let mut backends = wgpu::Backends::empty();
    for word in value.split(',').map(|w| w.trim().to_ascii_lowercase()) {
        backends |= match word.as_str() {
            "vulkan" | "vk" => wgpu::Backends::VULKAN,
            "gl" | "gles" | "opengl" => wgpu::Backends::GL,
            "metal" | "mtl" => wgpu::Backends::METAL,
            "dx12" | "d3d12" => wgpu::Backends::DX12,
            _ => {
                return Err(GpuError::InvalidEnv {
                    var: BACKEND_ENV,
                    value,
                    expected: "a comma-separated list of vulkan, gl, metal, dx12",
                });
            }
        };
    }
    Ok(Some(backends))
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// Lower ranks first.
fn type_rank(ty: wgpu::DeviceType, preference: wgpu::PowerPreference) -> u8 {
    use wgpu::DeviceType as T;
    match (preference, ty) {
        (wgpu::PowerPreference::LowPower, T::IntegratedGpu) => 0,
        (wgpu::PowerPreference::LowPower, T::DiscreteGpu) => 1,
        (_, T::DiscreteGpu) => 0,
        (_, T::IntegratedGpu) => 1,
        (_, T::VirtualGpu) => 2,
        (_, T::Cpu) => 3,
        (_, T::Other) => 4,
    }
}

fn backend_rank(backend: wgpu::Backend) -> u8 {
    match backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        wgpu::Backend::Gl => 1,
        _ => 2,
    }
}

fn convert_error(operation: &'static str, error: wgpu::Error) -> GpuError {
    match error {
        wgpu::Error::OutOfMemory { source } => GpuError::OutOfMemory { operation, message: source.to_string() },
        wgpu::Error::Validation { description, .. } => GpuError::Validation { operation, message: description },
        wgpu::Error::Internal { description, .. } => GpuError::Internal { operation, message: description },
    }
}

impl GpuContext {
    /// A context on the default adapter ([`GpuContextOptions::default`],
    /// with the environment variables applied).
    ///
    /// # Errors
    /// [`GpuError::NoAdapter`] (with the adapters seen) when none matches,
    /// [`GpuError::InvalidEnv`] for a bad [`BACKEND_ENV`],
    /// [`GpuError::RequestDevice`] when the adapter refuses the device.
    pub fn new() -> Result<Self> {
        Self::with_options(GpuContextOptions::default())
    }

    /// A context chosen and configured by `options`.
    ///
    /// # Errors
    /// As [`GpuContext::new`].
    pub fn with_options(options: GpuContextOptions) -> Result<Self> {
        let native = wgpu::Backends::VULKAN | wgpu::Backends::GL | wgpu::Backends::METAL | wgpu::Backends::DX12;
        let backends = match options.backends {
            Some(b) => b,
            None => backends_from_env()?.unwrap_or(native),
        };
        let name_filter = match options.adapter_name {
            Some(name) => Some(name),
            None => std::env::var(ADAPTER_ENV).ok().filter(|s| !s.trim().is_empty()),
        }
        .map(|s| s.trim().to_lowercase());

        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        desc.flags = wgpu::InstanceFlags::from_build_config().with_env();
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let seen: Vec<String> = adapters.iter().map(|a| describe(&a.get_info())).collect();
        let adapter = adapters
            .into_iter()
            .enumerate()
            .filter(|(_, a)| name_filter.as_ref().is_none_or(|f| a.get_info().name.to_lowercase().contains(f)))
            .min_by_key(|(i, a)| {
                let info = a.get_info();
                (type_rank(info.device_type, options.power_preference), backend_rank(info.backend), *i)
            })
            .map(|(_, a)| a)
            .ok_or_else(|| GpuError::NoAdapter {
                request: format!(
                    "backends {backends:?}{}",
                    name_filter.as_ref().map(|f| format!(" and name containing {f:?}")).unwrap_or_default()
                ),
                seen,
            })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("subla-gpu"),
            // Timestamps for benchmarks (`timing`), where the adapter has them.
            required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| GpuError::RequestDevice { adapter: info.name.clone(), message: e.to_string() })?;

        let lost = Arc::new(Mutex::new(None));
        let lost_cb = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            *lock(&lost_cb) = Some(format!("{reason:?}: {message}"));
        });
        // wgpu's default handler panics; errors outside our scopes are
        // recorded and reported by the next operation instead.
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let uncaptured_cb = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| lock(&uncaptured_cb).push(e.to_string())));

        let mut binding_limit = device.limits().max_storage_buffer_binding_size;
        if let Some(cap) = options.max_binding_bytes {
            let cap = (cap - cap % MIN_BINDING_CAP).max(MIN_BINDING_CAP);
            binding_limit = binding_limit.min(cap);
        }
        let mut max_groups = device.limits().max_compute_workgroups_per_dimension;
        if let Some(cap) = options.max_workgroups_per_dimension {
            max_groups = max_groups.min(cap.max(1));
        }
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            limits: device.limits(),
            device,
            queue,
            info,
            binding_limit,
            max_groups,
            lost,
            uncaptured,
            modules: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
        })
    }

    /// Identifies this context among those of the process (buffers
    /// remember the context that created them).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The chosen adapter (name, backend, device type, driver).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// Whether compute passes can be timed on the GPU
    /// (`wgpu::Features::TIMESTAMP_QUERY`, requested when the adapter has
    /// it); see [`crate::timing`].
    pub fn has_timestamps(&self) -> bool {
        self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// The device's limits (the adapter's own, as requested).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The storage-binding size in force: the device's
    /// `max_storage_buffer_binding_size`, or the cap of
    /// [`GpuContextOptions::max_binding_bytes`].
    pub fn binding_limit(&self) -> u64 {
        self.binding_limit
    }

    /// Workgroups per grid dimension in force (the device's
    /// `max_compute_workgroups_per_dimension` or the option's cap).
    pub fn max_workgroups_per_dimension(&self) -> u32 {
        self.max_groups
    }

    /// The wgpu device, for interoperation.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The wgpu queue, for interoperation.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Number of compute pipelines built so far (each built once per key:
    /// kernel, entry point and specialisation).
    pub fn pipeline_count(&self) -> usize {
        lock(&self.pipelines).len()
    }

    /// Blocks until all submitted work has finished.
    ///
    /// # Errors
    /// [`GpuError::DeviceLost`] or [`GpuError::Poll`].
    pub fn wait_idle(&self) -> Result<()> {
        self.check_alive()?;
        self.wait()
    }

    /// Waits for the device in slices of [`WAIT_SLICE`], checking between
    /// them whether it was lost: a lost device whose work never completes
    /// gives [`GpuError::DeviceLost`] instead of a wait without end. Work
    /// that takes longer than a slice is simply waited for again.
    pub(crate) fn wait(&self) -> Result<()> {
        loop {
            match self.device.poll(wgpu::PollType::Wait { submission_index: None, timeout: Some(WAIT_SLICE) }) {
                Ok(_) => return self.check_alive(),
                Err(wgpu::PollError::Timeout) => self.check_alive()?,
                Err(e) => {
                    self.check_alive()?;
                    return Err(GpuError::Poll { message: e.to_string() });
                }
            }
        }
    }

    /// Fails when the device is lost or an error escaped the error scopes.
    pub(crate) fn check_alive(&self) -> Result<()> {
        if let Some(reason) = lock(&self.lost).clone() {
            return Err(GpuError::DeviceLost { reason });
        }
        let mut uncaptured = lock(&self.uncaptured);
        if !uncaptured.is_empty() {
            let message = std::mem::take(&mut *uncaptured).join("\n");
            return Err(GpuError::Validation { operation: "an earlier operation (outside any error scope)", message });
        }
        Ok(())
    }

    /// Runs `f` inside validation, out-of-memory and internal error scopes;
    /// an error captured there wins over `f`'s own result, and a lost
    /// device is reported before and after. Scheme crates record their own
    /// pipelines and dispatches through this, so that wgpu never panics on
    /// an error it reports.
    ///
    /// # Errors
    /// The error captured in a scope, [`GpuError::DeviceLost`], or `f`'s.
    pub fn scoped<R>(&self, operation: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
        self.check_alive()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = f();
        let validation = pollster::block_on(validation.pop());
        let internal = pollster::block_on(internal.pop());
        let oom = pollster::block_on(oom.pop());
        self.check_alive()?;
        if let Some(e) = validation.or(oom).or(internal) {
            return Err(convert_error(operation, e));
        }
        result
    }

    /// Fails with [`GpuError::TooLarge`] if a buffer of `bytes` exceeds
    /// `max_buffer_size`.
    pub(crate) fn check_buffer(&self, what: &'static str, bytes: u64) -> Result<()> {
        if bytes > self.limits.max_buffer_size {
            return Err(GpuError::TooLarge {
                what,
                bytes,
                limit: "max_buffer_size",
                limit_value: self.limits.max_buffer_size,
            });
        }
        Ok(())
    }

    /// Fails with [`GpuError::TooLarge`] if a storage binding of `bytes`
    /// exceeds the binding limit in force.
    pub(crate) fn check_binding(&self, what: &'static str, bytes: u64) -> Result<()> {
        if bytes > self.binding_limit {
            return Err(GpuError::TooLarge {
                what,
                bytes,
                limit: "max_storage_buffer_binding_size",
                limit_value: self.binding_limit,
            });
        }
        Ok(())
    }

    /// A buffer of at least `bytes` (rounded up to a multiple of 4, at least
    /// 4), zero-initialised unless `mapped`.
    pub(crate) fn create_buffer(
        &self,
        what: &'static str,
        bytes: u64,
        usage: wgpu::BufferUsages,
        mapped: bool,
    ) -> Result<wgpu::Buffer> {
        let size = bytes.max(4).next_multiple_of(4);
        self.check_buffer(what, size)?;
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size,
            usage,
            mapped_at_creation: mapped,
        }))
    }

    /// A uniform buffer holding four `u32` parameters.
    pub(crate) fn params(&self, values: [u32; 4]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("subla params"),
            contents: bytemuck::cast_slice(&values),
            usage: wgpu::BufferUsages::UNIFORM,
        })
    }

    /// A 2-D grid `(x, y)` of at least `groups` workgroups, or `None` for
    /// none. Kernels compute `wg.y * num_workgroups.x + wg.x` and skip the
    /// surplus.
    pub(crate) fn grid(&self, what: &'static str, groups: u64) -> Result<Option<(u32, u32)>> {
        if groups == 0 {
            return Ok(None);
        }
        let max = u64::from(self.max_groups);
        let x = groups.min(max);
        let y = groups.div_ceil(x);
        if y > max {
            return Err(GpuError::TooLarge {
                what,
                bytes: groups,
                limit: "max_compute_workgroups_per_dimension",
                limit_value: max * max,
            });
        }
        // Invocation indices are u32 in the kernels.
        if x * y * u64::from(WORKGROUP) > 1 << 32 {
            return Err(GpuError::TooLarge {
                what,
                bytes: groups,
                limit: "u32 index",
                limit_value: (1 << 32) / u64::from(WORKGROUP),
            });
        }
        Ok(Some((x as u32, y as u32)))
    }

    /// Records one dispatch in its own compute pass.
    pub(crate) fn dispatch(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &Pipeline,
        entries: &[(u32, wgpu::BindingResource<'_>)],
        grid: Option<(u32, u32)>,
    ) {
        self.dispatch_timed(encoder, pipeline, entries, grid, None);
    }

    /// [`GpuContext::dispatch`] with the pass's timestamp writes.
    pub(crate) fn dispatch_timed(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &Pipeline,
        entries: &[(u32, wgpu::BindingResource<'_>)],
        grid: Option<(u32, u32)>,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        let Some((x, y)) = grid else { return };
        let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
            .iter()
            .map(|(binding, resource)| wgpu::BindGroupEntry { binding: *binding, resource: resource.clone() })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.layout,
            entries: &entries,
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// A new command encoder.
    pub(crate) fn encoder(&self) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("subla") })
    }

    /// Submits `encoder` without waiting.
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) {
        self.queue.submit([encoder.finish()]);
    }

    /// Appends copies of `ranges` (buffer, byte offset, byte length; lengths
    /// multiples of 4) to `encoder`, submits it, waits and returns the bytes
    /// one range after the other.
    pub(crate) fn submit_and_read(
        &self,
        mut encoder: wgpu::CommandEncoder,
        ranges: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<u8>> {
        let total: u64 = ranges.iter().map(|r| r.2).sum();
        if total == 0 {
            self.submit(encoder);
            return Ok(Vec::new());
        }
        let staging = self.create_buffer(
            "readback staging buffer",
            total,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            false,
        )?;
        let mut at = 0;
        for &(buffer, offset, len) in ranges {
            if len > 0 {
                encoder.copy_buffer_to_buffer(buffer, offset, &staging, at, len);
            }
            at += len;
        }
        self.submit(encoder);
        self.map_staging(&staging, total)?;
        let bytes = {
            let view =
                staging.slice(..total).get_mapped_range().map_err(|e| GpuError::Map { message: e.to_string() })?;
            view.to_vec()
        };
        staging.unmap();
        Ok(bytes)
    }

    /// Reads the first `out.len()` bytes of `buffer` into `out` (waits for
    /// the device), through one staging buffer of at most
    /// [`READBACK_CHUNK`] bytes used chunk after chunk, so that a large
    /// readback neither allocates its size twice nor maps more than a chunk
    /// at a time. `buffer` must hold `out.len()` rounded up to a multiple
    /// of 4 bytes (every buffer of this crate does).
    pub(crate) fn read_into(&self, buffer: &wgpu::Buffer, out: &mut [u8]) -> Result<()> {
        let total = out.len() as u64;
        if total == 0 {
            return self.check_alive();
        }
        let chunk = total.next_multiple_of(4).min(READBACK_CHUNK);
        let staging = self.create_buffer(
            "readback staging buffer",
            chunk,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            false,
        )?;
        let mut at = 0;
        while at < total {
            let len = (total - at).min(chunk);
            // Copies move multiples of 4 bytes; the last one may read the
            // buffer's padding, which is not handed out.
            let copied = len.next_multiple_of(4);
            let mut encoder = self.encoder();
            encoder.copy_buffer_to_buffer(buffer, at, &staging, 0, copied);
            self.submit(encoder);
            self.map_staging(&staging, copied)?;
            {
                let view =
                    staging.slice(..copied).get_mapped_range().map_err(|e| GpuError::Map { message: e.to_string() })?;
                out[at as usize..(at + len) as usize].copy_from_slice(&view[..len as usize]);
            }
            staging.unmap();
            at += len;
        }
        Ok(())
    }

    /// Maps the first `len` bytes of `staging` for reading and waits until
    /// they are.
    fn map_staging(&self, staging: &wgpu::Buffer, len: u64) -> Result<()> {
        let (tx, rx) = mpsc::channel();
        staging.slice(..len).map_async(wgpu::MapMode::Read, move |r| {
            // The receiver outlives the poll below; a send error is moot.
            let _ = tx.send(r);
        });
        self.wait()?;
        // Normally the callback ran during our wait; when another thread
        // polls the same device it may deliver it a moment later.
        match rx.recv_timeout(MAP_CALLBACK_TIMEOUT) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(GpuError::Map { message: e.to_string() }),
            Err(e) => {
                self.check_alive()?;
                Err(GpuError::Map { message: format!("the map callback did not run after waiting: {e}") })
            }
        }
    }

    /// The cached pipeline for `(kernel, entry, specialisation)`, built from
    /// `source()` on first use. Shader errors become [`GpuError::Shader`].
    pub(crate) fn pipeline(
        &self,
        kernel: &'static str,
        entry: &'static str,
        specialisation: &str,
        source: &dyn Fn() -> Cow<'static, str>,
    ) -> Result<Arc<Pipeline>> {
        let key = PipelineKey { kernel, entry, specialisation: specialisation.to_owned() };
        let mut pipelines = lock(&self.pipelines);
        if let Some(p) = pipelines.get(&key) {
            return Ok(Arc::clone(p));
        }
        let mut modules = lock(&self.modules);
        let module_key = (kernel, key.specialisation.clone());
        let module = match modules.get(&module_key) {
            Some(m) => m.clone(),
            None => {
                let m = self
                    .scoped("shader module creation", || {
                        Ok(self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(kernel),
                            source: wgpu::ShaderSource::Wgsl(source()),
                        }))
                    })
                    .map_err(|e| match e {
                        GpuError::Validation { message, .. } => GpuError::Shader { message },
                        other => other,
                    })?;
                modules.insert(module_key, m.clone());
                m
            }
        };
        drop(modules);
        let pipeline = self.scoped("compute pipeline creation", || {
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            });
            let layout = pipeline.get_bind_group_layout(0);
            Ok(Pipeline { pipeline, layout })
        })?;
        let pipeline = Arc::new(pipeline);
        pipelines.insert(key, Arc::clone(&pipeline));
        Ok(pipeline)
    }
}

/// A binding of `len` bytes of `buffer` from byte `offset` (`len` > 0).
pub(crate) fn range(buffer: &wgpu::Buffer, offset: u64, len: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: NonZeroU64::new(len.max(4)) })
}
