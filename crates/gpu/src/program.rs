//! Building blocks for scheme crates that bring their own WGSL: shaders
//! with several entry points, one pipeline per entry point, dispatches over
//! a 2-D grid, and checked uploads.
//!
//! A [`Program`] compiles every entry point of one shader with wgpu's
//! automatic layout, which holds only the bindings that entry point uses
//! (found with naga's reflection). [`dispatch`] then binds exactly those
//! bindings from a table indexed by binding number, so one table can serve
//! every entry point of a file. Every kernel run through [`dispatch`] must
//! use `@workgroup_size(256)` ([`WORKGROUP`]) and compute its flat index as
//! `(wg.y * num_workgroups.x + wg.x) * 256 + local_invocation_index`,
//! skipping the surplus invocations.

use bytemuck::Pod;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use crate::{GpuBuffer, GpuContext, GpuError, Result, wgpu};

/// Invocations per workgroup of every kernel run through [`dispatch`].
pub const WORKGROUP: u32 = crate::context::WORKGROUP;

/// One entry point: its pipeline, the layout of bind group 0, and the
/// bindings it uses.
#[derive(Debug)]
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    bindings: Vec<u32>,
    file: &'static str,
}

impl Kernel {
    /// The shader file the kernel comes from (for messages).
    pub fn file(&self) -> &'static str {
        self.file
    }
    /// The binding numbers of group 0 the entry point uses, in declaration
    /// order.
    pub fn bindings(&self) -> &[u32] {
        &self.bindings
    }
}

/// The entry points of one shader, compiled.
pub type Program = Vec<Kernel>;

/// Validates `source` (naga's diagnostics name the line) and creates one
/// pipeline per entry point of `entries`, in that order.
///
/// # Errors
/// [`GpuError::Shader`] if the WGSL does not validate or lacks an entry
/// point; wgpu errors.
pub fn compile(
    ctx: &GpuContext,
    file: &'static str,
    source: &'static str,
    entries: &[&'static str],
) -> Result<Program> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| GpuError::Shader { message: format!("{file}: {}", e.emit_to_string(source)) })?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| GpuError::Shader { message: format!("{file}: {}", e.emit_to_string(source)) })?;
    let device = ctx.device();
    let shader = ctx.scoped("shader creation", || {
        Ok(device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(file),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        }))
    })?;
    entries
        .iter()
        .map(|&entry| {
            let index = module
                .entry_points
                .iter()
                .position(|ep| ep.name == entry)
                .ok_or_else(|| GpuError::Shader { message: format!("{file} has no entry point {entry}") })?;
            let uses = info.get_entry_point(index);
            let bindings = module
                .global_variables
                .iter()
                .filter(|&(handle, _)| !uses[handle].is_empty())
                .filter_map(|(_, var)| var.binding.as_ref().map(|b| b.binding))
                .collect();
            ctx.scoped("pipeline creation", || {
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: None,
                    module: &shader,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions::default(),
                    cache: None,
                });
                let layout = pipeline.get_bind_group_layout(0);
                Ok(Kernel { pipeline, layout, bindings, file })
            })
        })
        .collect()
}

/// A 2-D grid `(x, y)` of at least `ceil(items / 256)` workgroups, or
/// `None` for none.
///
/// # Errors
/// [`GpuError::TooLarge`] naming `max_compute_workgroups_per_dimension`
/// when the grid does not fit, or `u32 index` when the invocation indices
/// would not.
pub fn grid(ctx: &GpuContext, what: &'static str, items: u64) -> Result<Option<(u32, u32)>> {
    ctx.grid(what, items.div_ceil(u64::from(WORKGROUP)))
}

/// Records one dispatch over `items` invocations in its own compute pass
/// (so wgpu orders it after the passes before it), binding from `table`
/// (indexed by binding number) exactly the bindings the kernel uses.
///
/// # Errors
/// [`GpuError::Internal`] if a used binding has no buffer in `table`;
/// [`GpuError::TooLarge`] over the dispatch limits.
pub fn dispatch(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    kernel: &Kernel,
    table: &[Option<&wgpu::Buffer>],
    items: u64,
) -> Result<()> {
    dispatch_timed(ctx, encoder, kernel, table, items, None)
}

/// [`dispatch`] with optional timestamp writes on its pass.
///
/// # Errors
/// As [`dispatch`].
pub fn dispatch_timed(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    kernel: &Kernel,
    table: &[Option<&wgpu::Buffer>],
    items: u64,
    timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
) -> Result<()> {
    let Some((x, y)) = grid(ctx, kernel.file, items)? else { return Ok(()) };
    let entries = kernel
        .bindings
        .iter()
        .map(|&b| {
            let buffer = table.get(b as usize).copied().flatten().ok_or_else(|| GpuError::Internal {
                operation: kernel.file,
                message: format!("binding {b} of {} has no buffer in this pass", kernel.file),
            })?;
            Ok(wgpu::BindGroupEntry { binding: b, resource: buffer.as_entire_binding() })
        })
        .collect::<Result<Vec<_>>>()?;
    let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(kernel.file),
        layout: &kernel.layout,
        entries: &entries,
    });
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
    Ok(())
}

/// Fails with [`GpuError::TooLarge`] if a storage binding of `bytes`
/// exceeds the context's binding limit.
///
/// # Errors
/// As above.
pub fn check_binding(ctx: &GpuContext, what: &'static str, bytes: u64) -> Result<()> {
    if bytes > ctx.binding_limit() {
        return Err(GpuError::TooLarge {
            what,
            bytes,
            limit: "max_storage_buffer_binding_size",
            limit_value: ctx.binding_limit(),
        });
    }
    Ok(())
}

/// Uploads `data`, checked against the binding limit.
///
/// # Errors
/// [`GpuError::TooLarge`] over the limit; wgpu errors.
pub fn upload_array<T: Pod>(ctx: &GpuContext, what: &'static str, data: &[T]) -> Result<GpuBuffer<T>> {
    let bytes = u64::try_from(std::mem::size_of_val(data)).unwrap_or(u64::MAX);
    check_binding(ctx, what, bytes)?;
    GpuBuffer::upload(ctx, data)
}

/// Uploads `data` (one zero element when empty: a binding holds at least
/// one), checked against the binding limit, as a plain wgpu buffer.
///
/// # Errors
/// As [`upload_array`].
pub fn upload<T: Pod>(ctx: &GpuContext, what: &'static str, data: &[T]) -> Result<wgpu::Buffer> {
    let pad = [T::zeroed()];
    let data = if data.is_empty() { &pad[..] } else { data };
    Ok(upload_array(ctx, what, data)?.as_wgpu().clone())
}

/// A device array of `len` zeros, checked against the binding limit.
///
/// # Errors
/// [`GpuError::TooLarge`] over the limit or past `usize`; wgpu errors.
pub fn zeroed<T: Pod>(ctx: &GpuContext, what: &'static str, len: u64) -> Result<GpuBuffer<T>> {
    check_binding(ctx, what, len.saturating_mul(size_of::<T>() as u64))?;
    let n = usize::try_from(len).map_err(|_| GpuError::TooLarge {
        what,
        bytes: len,
        limit: "usize",
        limit_value: usize::MAX as u64,
    })?;
    GpuBuffer::zeroed(ctx, n)
}

/// A uniform buffer holding `values`.
pub fn uniform(ctx: &GpuContext, label: &'static str, values: &[u32]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(values),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// Fails with [`GpuError::TooLarge`] when `n` does not fit the kernels'
/// `u32` indices.
///
/// # Errors
/// As above.
pub fn to_u32(what: &'static str, n: u64) -> Result<u32> {
    u32::try_from(n).map_err(|_| GpuError::TooLarge {
        what,
        bytes: n,
        limit: "u32 index",
        limit_value: u64::from(u32::MAX),
    })
}

/// The data buffers of one eval through a chain of levels: the control
/// data, two scratch levels used in turn, and the output.
#[derive(Debug)]
struct Frame {
    channels: usize,
    x0: GpuBuffer<f32>,
    scratch: [Option<GpuBuffer<f32>>; 2],
    out: GpuBuffer<f32>,
}

/// Evaluation through a chain of levels on the device, `f32` data of `d`
/// channels, row-major: the control data goes up, every step reads level
/// `l` and writes level `l + 1` (levels between in two scratch buffers used
/// in turn), and only the finest level comes back. The buffers are kept
/// for the next eval with the same channel count, so per-frame evaluation
/// allocates nothing; concurrent evals each get their own.
#[derive(Debug, Default)]
pub struct LevelChain {
    frame: std::sync::Mutex<Option<Frame>>,
}

impl LevelChain {
    /// An empty chain (buffers are made by the first eval).
    pub fn new() -> Self {
        LevelChain::default()
    }

    /// Drops the kept buffers (after the levels change).
    pub fn clear(&mut self) {
        *self.frame.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Runs the steps of `lens.len() − 1` levels over `control` (`lens[0]`
    /// rows of `d` channels): `record(encoder, l, x, y)` records step `l`,
    /// reading `x` (level `l`) and writing `y` (level `l + 1`), row-major
    /// `f32`, all in one submission inside the context's error scopes.
    /// Returns the finest level (`lens[L] × d`).
    ///
    /// # Panics
    /// If `control` does not have `lens[0]` rows or `lens` is empty.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when a level's data exceeds a storage binding
    /// or the kernels' `u32` indices (`rows × d`); the errors of `record`;
    /// device, validation and readback errors.
    pub fn run(
        &self,
        ctx: &GpuContext,
        what: &'static str,
        lens: &[usize],
        control: ArrayView2<'_, f32>,
        record: impl FnMut(&mut wgpu::CommandEncoder, usize, &wgpu::Buffer, &wgpu::Buffer) -> Result<()>,
    ) -> Result<Array2<f32>> {
        assert!(!lens.is_empty(), "{what}: a chain needs at least level 0");
        let mut out = Array2::zeros((lens[lens.len() - 1], control.ncols()));
        self.run_into(ctx, what, lens, control, out.view_mut(), record)?;
        Ok(out)
    }

    /// [`LevelChain::run`] into `out` (`lens[L] × d`): a frame loop that
    /// passes the same `out` every frame allocates nothing on the host
    /// either.
    ///
    /// # Panics
    /// As [`LevelChain::run`], and if `out` is not `lens[L] × d`.
    ///
    /// # Errors
    /// As [`LevelChain::run`].
    pub fn run_into(
        &self,
        ctx: &GpuContext,
        what: &'static str,
        lens: &[usize],
        control: ArrayView2<'_, f32>,
        mut out: ArrayViewMut2<'_, f32>,
        mut record: impl FnMut(&mut wgpu::CommandEncoder, usize, &wgpu::Buffer, &wgpu::Buffer) -> Result<()>,
    ) -> Result<()> {
        assert!(!lens.is_empty(), "{what}: a chain needs at least level 0");
        assert_eq!(
            control.nrows(),
            lens[0],
            "{what}: control has {} rows, the plan needs {}",
            control.nrows(),
            lens[0]
        );
        let channels = control.ncols();
        let levels = lens.len() - 1;
        assert_eq!(
            out.dim(),
            (lens[levels], channels),
            "{what}: out is {:?}, the finest level is {} × {channels}",
            out.dim(),
            lens[levels]
        );
        if levels == 0 {
            out.assign(&control);
            return Ok(());
        }
        if channels == 0 {
            return Ok(());
        }
        let control = control.as_standard_layout();
        let owned;
        let data: &[f32] = match control.as_slice() {
            Some(s) => s,
            None => {
                owned = control.iter().copied().collect::<Vec<f32>>();
                &owned
            }
        };
        // Every index the kernels form is below rows × d of some level.
        let elements = |&rows: &usize| -> Result<usize> {
            let n = rows as u64 * channels as u64;
            if n > u64::from(u32::MAX) {
                return Err(GpuError::TooLarge {
                    what,
                    bytes: n.saturating_mul(4),
                    limit: "u32 index",
                    limit_value: u64::from(u32::MAX) * 4,
                });
            }
            check_binding(ctx, what, n * 4)?;
            Ok(n as usize)
        };
        let sizes: Vec<usize> = lens.iter().map(elements).collect::<Result<_>>()?;
        // The buffers of the last eval with the same channel count, when no
        // other eval holds them; otherwise new ones.
        let cached = self
            .frame
            .try_lock()
            .ok()
            .and_then(|mut slot| slot.take())
            .filter(|f| f.channels == channels && f.x0.len() == sizes[0] && f.out.len() == sizes[levels]);
        let frame = match cached {
            Some(mut f) => {
                f.x0.write(ctx, data)?;
                f
            }
            None => {
                // Level l + 1 goes to scratch[l % 2] (the finest to `out`);
                // each scratch buffer is sized by the largest level it
                // holds, the last.
                let mut scratch: [Option<GpuBuffer<f32>>; 2] = [None, None];
                for (k, slot) in scratch.iter_mut().enumerate() {
                    if let Some(l) = (0..levels - 1).rev().find(|l| l % 2 == k) {
                        *slot = Some(GpuBuffer::zeroed(ctx, sizes[l + 1])?);
                    }
                }
                Frame {
                    channels,
                    x0: GpuBuffer::upload(ctx, data)?,
                    scratch,
                    out: GpuBuffer::zeroed(ctx, sizes[levels])?,
                }
            }
        };
        let Frame { x0, scratch, out: finest, .. } = &frame;
        let level_buffer = |l: usize| -> Result<&wgpu::Buffer> {
            if l == levels {
                return Ok(finest.as_wgpu());
            }
            if l == 0 {
                return Ok(x0.as_wgpu());
            }
            scratch[(l - 1) % 2]
                .as_ref()
                .map(GpuBuffer::as_wgpu)
                .ok_or(GpuError::Internal { operation: what, message: format!("no scratch buffer for level {l}") })
        };
        ctx.scoped(what, || {
            let mut encoder =
                ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
            for l in 0..levels {
                record(&mut encoder, l, level_buffer(l)?, level_buffer(l + 1)?)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        match out.as_slice_mut() {
            Some(y) => frame.out.download_into(ctx, y)?,
            None => {
                let y = frame.out.download(ctx)?;
                let y = ArrayView2::from_shape((lens[levels], channels), &y)
                    .map_err(|e| GpuError::Internal { operation: what, message: e.to_string() })?;
                out.assign(&y);
            }
        }
        if let Ok(mut slot) = self.frame.try_lock() {
            *slot = Some(frame);
        }
        Ok(())
    }
}

/// The context a refiner and its plans keep: one that lives for the whole
/// program (such as the one `testing::context_or_skip` hands out, or a
/// leaked one), or a shared one.
#[derive(Clone)]
pub enum ContextRef {
    /// Borrowed for the whole program.
    Static(&'static GpuContext),
    /// Shared.
    Shared(std::sync::Arc<GpuContext>),
}

impl std::ops::Deref for ContextRef {
    type Target = GpuContext;
    fn deref(&self) -> &GpuContext {
        match self {
            ContextRef::Static(c) => c,
            ContextRef::Shared(c) => c,
        }
    }
}

impl std::fmt::Debug for ContextRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.adapter_info();
        write!(f, "GpuContext({:?}, {:?})", info.name, info.backend)
    }
}
