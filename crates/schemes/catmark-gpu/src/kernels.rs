//! The three compute pipelines, their dispatch, and wgpu error capture.
//!
//! `subla-gpu` keeps its pipeline cache and error scopes to itself; this
//! module builds its own pipelines (once per [`crate::CatmarkGpu`], shared
//! by its plans) through the public `GpuContext::device()` and runs every
//! recording inside validation, out-of-memory and internal error scopes, so
//! that wgpu never panics on an error it reports.

use subla_gpu::timing::PassTimer;
use subla_gpu::wgpu;
use subla_gpu::{GpuContext, GpuError};

use std::sync::{Arc, Mutex, PoisonError};

use crate::build::BuildKernels;
use crate::device::{StepBuffers, uniform};
use crate::multi::grid;
use crate::shaders;

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

/// Runs `f` inside the context's error scopes ([`GpuContext::scoped`]).
pub(crate) fn scoped<R>(
    ctx: &GpuContext,
    operation: &'static str,
    f: impl FnOnce() -> Result<R, GpuError>,
) -> Result<R, GpuError> {
    ctx.scoped(operation, f)
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
        let face_params = uniform(ctx, "catmark-gpu params", &[nf, channels, nv, u32::from(s.quads)]);
        let edge_params = uniform(ctx, "catmark-gpu params", &[ne, channels, nv + nf, nv]);
        let vertex_params = uniform(ctx, "catmark-gpu params", &[nv, channels, 0, nv]);
        fn b(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            buffer.as_entire_binding()
        }
        dispatch(
            ctx,
            encoder,
            &self.face,
            &[b(&face_params), b(&s.face_ptr), b(&s.face_verts), b(&s.order_weight), b(x), b(y)],
            grid(ctx, "catmark-gpu face points dispatch", u64::from(nf))?,
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
            grid(ctx, "catmark-gpu edge points dispatch", u64::from(ne))?,
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
            grid(ctx, "catmark-gpu vertex points dispatch", u64::from(nv))?,
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
