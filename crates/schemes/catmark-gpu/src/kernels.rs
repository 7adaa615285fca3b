//! The three compute pipelines, their dispatch, and wgpu error capture.
//!
//! `subla-gpu` keeps its pipeline cache and error scopes to itself; this
//! module builds its own pipelines (once per [`crate::CatmarkGpu`], shared
//! by its plans) through the public `GpuContext::device()` and runs every
//! recording inside validation, out-of-memory and internal error scopes, so
//! that wgpu never panics on an error it reports.

use subla_gpu::timing::PassTimer;
use subla_gpu::wgpu;
use subla_gpu::wgpu::util::DeviceExt;
use subla_gpu::{GpuContext, GpuError};

use std::sync::{Arc, Mutex, PoisonError};

use crate::build::BuildKernels;
use crate::device::StepBuffers;
use crate::shaders;

/// Invocations per workgroup of the three kernels.
const WORKGROUP: u32 = 256;

/// A compute pipeline with the layout of its bind group 0.
#[derive(Debug)]
struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// The face-, edge- and vertex-point pipelines of one context.
#[derive(Debug)]
pub(crate) struct Kernels {
    face: Pipeline,
    edge: Pipeline,
    vertex: Pipeline,
    /// The device build's pipelines, compiled on the first device build.
    build: Mutex<Option<Arc<BuildKernels>>>,
}

fn convert_error(operation: &'static str, error: wgpu::Error) -> GpuError {
    match error {
        wgpu::Error::OutOfMemory { source } => GpuError::OutOfMemory { operation, message: source.to_string() },
        wgpu::Error::Validation { description, .. } => GpuError::Validation { operation, message: description },
        wgpu::Error::Internal { description, .. } => GpuError::Internal { operation, message: description },
    }
}

/// Runs `f` inside validation, out-of-memory and internal error scopes;
/// an error captured there wins over `f`'s own result.
pub(crate) fn scoped<R>(
    ctx: &GpuContext,
    operation: &'static str,
    f: impl FnOnce() -> Result<R, GpuError>,
) -> Result<R, GpuError> {
    let device = ctx.device();
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let result = f();
    let validation = pollster::block_on(validation.pop());
    let internal = pollster::block_on(internal.pop());
    let oom = pollster::block_on(oom.pop());
    if let Some(e) = validation.or(oom).or(internal) {
        return Err(convert_error(operation, e));
    }
    result
}

fn pipeline(
    ctx: &GpuContext,
    name: &'static str,
    source: &'static str,
    entry: &'static str,
) -> Result<Pipeline, GpuError> {
    // naga's diagnostics name the line; wgpu's would only say "invalid".
    subla_gpu::shaders::validate(source)?;
    let device = ctx.device();
    scoped(ctx, "catmark-gpu pipeline creation", || {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(name),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        Ok(Pipeline { pipeline, layout })
    })
}

impl Kernels {
    /// Compiles the three kernels on `ctx`.
    pub(crate) fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        Ok(Kernels {
            face: pipeline(ctx, "catmark_face_points.wgsl", shaders::FACE_POINTS, "face_points")?,
            edge: pipeline(ctx, "catmark_edge_points.wgsl", shaders::EDGE_POINTS, "edge_points")?,
            vertex: pipeline(ctx, "catmark_vertex_points.wgsl", shaders::VERTEX_POINTS, "vertex_points")?,
            build: Mutex::new(None),
        })
    }

    /// The device build's pipelines, compiled on first use.
    pub(crate) fn build(&self, ctx: &GpuContext) -> Result<Arc<BuildKernels>, GpuError> {
        let mut slot = self.build.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = slot.as_ref() {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(BuildKernels::new(ctx)?);
        *slot = Some(Arc::clone(&k));
        Ok(k)
    }

    /// Records one level: face points, edge points, then vertex points of
    /// the child level `y` from the parent level `x` (`channels` per row).
    /// Call inside [`scoped`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_level(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        s: &StepBuffers,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        channels: u32,
        mut timer: Option<(&mut PassTimer, u32)>,
    ) -> Result<(), GpuError> {
        let (nv, nf, ne) = (s.nv, s.nf, s.ne);
        // Row offsets in y fit u32: the build checked nv + nf + ne.
        let face_params = params(ctx, [nf, channels, nv, nv]);
        let edge_params = params(ctx, [ne, channels, nv + nf, nv]);
        let vertex_params = params(ctx, [nv, channels, 0, nv]);
        fn b(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            buffer.as_entire_binding()
        }
        dispatch(
            ctx,
            encoder,
            &self.face,
            &[b(&face_params), b(&s.face_ptr), b(&s.face_verts), b(&s.order_weight), b(x), b(y)],
            grid(ctx, "catmark-gpu face points dispatch", nf)?,
            writes(&mut timer, "face_points"),
        );
        dispatch(
            ctx,
            encoder,
            &self.edge,
            &[
                b(&edge_params),
                b(&s.edges),
                b(&s.edge_corner_ptr),
                b(&s.edge_faces),
                b(&s.edge_mask),
                b(&s.edge_masks),
                b(x),
                b(y),
            ],
            grid(ctx, "catmark-gpu edge points dispatch", ne)?,
            writes(&mut timer, "edge_points"),
        );
        dispatch(
            ctx,
            encoder,
            &self.vertex,
            &[
                b(&vertex_params),
                b(&s.vertex_corner_ptr),
                b(&s.vertex_faces),
                b(&s.vertex_edge_ptr),
                b(&s.vertex_nbrs),
                b(&s.vertex_mask),
                b(&s.vertex_masks),
                b(x),
                b(y),
            ],
            grid(ctx, "catmark-gpu vertex points dispatch", nv)?,
            writes(&mut timer, "vertex_points"),
        );
        Ok(())
    }
}

/// The timestamp writes of `kernel`'s pass, labelled `"<level> <kernel>"`.
fn writes<'t>(
    timer: &'t mut Option<(&mut PassTimer, u32)>,
    kernel: &str,
) -> Option<wgpu::ComputePassTimestampWrites<'t>> {
    let (t, level) = timer.as_mut()?;
    let label = format!("{level} {kernel}");
    t.writes(label)
}

/// A uniform buffer holding the four `u32` of `struct Params`.
fn params(ctx: &GpuContext, values: [u32; 4]) -> wgpu::Buffer {
    ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("catmark-gpu params"),
        contents: bytemuck::cast_slice(&values),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// A 2-D grid `(x, y)` of at least `ceil(items / 256)` workgroups, or `None`
/// for none. The kernels compute `wg.y * num_workgroups.x + wg.x` and skip
/// the surplus.
fn grid(ctx: &GpuContext, what: &'static str, items: u32) -> Result<Option<(u32, u32)>, GpuError> {
    let groups = u64::from(items).div_ceil(u64::from(WORKGROUP));
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

/// Records one dispatch (bindings `0..`) in its own compute pass.
fn dispatch(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &Pipeline,
    resources: &[wgpu::BindingResource<'_>],
    grid: Option<(u32, u32)>,
    timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
) {
    let Some((x, y)) = grid else { return };
    let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
        .iter()
        .enumerate()
        .map(|(i, resource)| wgpu::BindGroupEntry { binding: i as u32, resource: resource.clone() })
        .collect();
    let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("catmark-gpu"),
        layout: &pipeline.layout,
        entries: &entries,
    });
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
    pass.set_pipeline(&pipeline.pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
}
