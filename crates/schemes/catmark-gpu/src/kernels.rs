//! The three eval pipelines and their dispatch.
//!
//! The pipelines are compiled once per [`crate::CatmarkGpu`] (shared by its
//! plans) through `subla_gpu::program`; every recording runs inside the
//! context's error scopes (`GpuContext::scoped`), so that wgpu never panics
//! on an error it reports.

use subla_gpu::timing::PassTimer;
use subla_gpu::wgpu;
use subla_gpu::{GpuContext, GpuError};

use std::sync::{Arc, Mutex, PoisonError};

use crate::build::BuildKernels;
use crate::device::{StepBuffers, uniform};
use crate::multi::{self, Kernel};
use crate::shaders;

/// The face-, edge- and vertex-point pipelines of one context.
#[derive(Debug)]
pub(crate) struct Kernels {
    face: Kernel,
    edge: Kernel,
    vertex: Kernel,
    /// The device build's pipelines, compiled on the first device build.
    build: Mutex<Option<Arc<BuildKernels>>>,
}

/// Compiles the single entry point `entry` of `source`.
fn single(ctx: &GpuContext, file: &'static str, source: &'static str, entry: &'static str) -> Result<Kernel, GpuError> {
    multi::compile(ctx, file, source, &[entry])?
        .pop()
        .ok_or_else(|| GpuError::Shader { message: format!("{file} has no entry point {entry}") })
}

impl Kernels {
    /// Compiles the three kernels on `ctx`.
    pub(crate) fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        Ok(Kernels {
            face: single(ctx, "catmark_face_points.wgsl", shaders::FACE_POINTS, "face_points")?,
            edge: single(ctx, "catmark_edge_points.wgsl", shaders::EDGE_POINTS, "edge_points")?,
            vertex: single(ctx, "catmark_vertex_points.wgsl", shaders::VERTEX_POINTS, "vertex_points")?,
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
        multi::dispatch_timed(
            ctx,
            encoder,
            &self.face,
            &[Some(&face_params), Some(&s.face_ptr), Some(&s.face_verts), Some(&s.order_weight), Some(x), Some(y)],
            u64::from(nf),
            writes(&mut timer, "face_points"),
        )?;
        multi::dispatch_timed(
            ctx,
            encoder,
            &self.edge,
            &[
                Some(&edge_params),
                Some(&s.edges),
                Some(&s.edge_corner_ptr),
                Some(&s.edge_faces),
                Some(&s.edge_mask),
                Some(&s.edge_masks),
                Some(x),
                Some(y),
            ],
            u64::from(ne),
            writes(&mut timer, "edge_points"),
        )?;
        multi::dispatch_timed(
            ctx,
            encoder,
            &self.vertex,
            &[
                Some(&vertex_params),
                Some(&s.vertex_corner_ptr),
                Some(&s.vertex_faces),
                Some(&s.vertex_edge_ptr),
                Some(&s.vertex_nbrs),
                Some(&s.vertex_mask),
                Some(&s.vertex_masks),
                Some(x),
                Some(y),
            ],
            u64::from(nv),
            writes(&mut timer, "vertex_points"),
        )?;
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
