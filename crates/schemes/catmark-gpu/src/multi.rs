//! Shaders with several entry points whose globals each have their own
//! binding (`quad_split.wgsl`, `catmark_masks.wgsl`): one pipeline per entry
//! point with wgpu's automatic layout, which holds only the bindings the
//! entry point uses (found with naga's reflection), and dispatches that
//! bind exactly those from a table of every binding.

use subla_gpu::wgpu;
use subla_gpu::{GpuContext, GpuError};

use crate::kernels::scoped;

/// Invocations per workgroup of every multi-entry kernel.
pub(crate) const WORKGROUP: u32 = 256;

/// One entry point: its pipeline, the layout of bind group 0, and the
/// bindings it uses.
#[derive(Debug)]
pub(crate) struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    bindings: Vec<u32>,
    file: &'static str,
}

/// Validates `source` (naga's diagnostics name the line) and creates one
/// pipeline per entry point of `entries`, in that order.
///
/// # Errors
/// [`GpuError::Shader`] if the WGSL does not validate or lacks an entry
/// point; wgpu errors.
pub(crate) fn compile(
    ctx: &GpuContext,
    file: &'static str,
    source: &'static str,
    entries: &[&'static str],
) -> Result<Vec<Kernel>, GpuError> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| GpuError::Shader { message: format!("{file}: {}", e.emit_to_string(source)) })?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| GpuError::Shader { message: format!("{file}: {}", e.emit_to_string(source)) })?;
    let device = ctx.device();
    let shader = scoped(ctx, "shader creation", || {
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
            scoped(ctx, "pipeline creation", || {
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
/// `None` for none. The kernels compute `wg.y * num_workgroups.x + wg.x`
/// and skip the surplus.
///
/// # Errors
/// [`GpuError::TooLarge`] naming `max_compute_workgroups_per_dimension`
/// when the grid does not fit, or `u32 index` when the invocation indices
/// would not.
pub(crate) fn grid(ctx: &GpuContext, what: &'static str, items: u64) -> Result<Option<(u32, u32)>, GpuError> {
    let groups = items.div_ceil(u64::from(WORKGROUP));
    if groups == 0 {
        return Ok(None);
    }
    let max = u64::from(ctx.max_workgroups_per_dimension().max(1));
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

/// Records one dispatch over `items` invocations in its own compute pass,
/// binding from `table` (indexed by binding number) exactly the bindings
/// the kernel uses.
///
/// # Errors
/// [`GpuError::Internal`] if a used binding has no buffer in `table`;
/// [`GpuError::TooLarge`] over the dispatch limits.
pub(crate) fn dispatch(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    kernel: &Kernel,
    table: &[Option<&wgpu::Buffer>],
    items: u64,
) -> Result<(), GpuError> {
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
        .collect::<Result<Vec<_>, GpuError>>()?;
    let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(kernel.file),
        layout: &kernel.layout,
        entries: &entries,
    });
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
    Ok(())
}
