//! √3 on the GPU: the device layout of one step and the refiner.

use std::sync::Arc;
use subla_algebra::Par;
use subla_gpu::program::ContextRef;
use subla_gpu::{GpuContext, GpuError};
use subla_mesh::Mesh;
use subla_scheme::{FallbackPolicy, Refiner, Result, SchemeError};
use subla_sqrt3::{Sqrt3Plan, Sqrt3Slak, StepView};

use crate::{Device, StepBuffers, TriGpuPlan, bytes_of, put, shaders, u32_of};

/// A √3 refinement on the GPU.
pub type Sqrt3GpuPlan = TriGpuPlan<Sqrt3Plan>;

/// Kobbelt's √3 subdivision on the GPU: the build of [`Sqrt3Slak`], eval
/// by `sqrt3_points.wgsl`. Steps are counted as [`Sqrt3Slak`] counts them:
/// from a plan's first step, continued in modeling mode.
///
/// ```no_run
/// use subla_algebra::Par;
/// use subla_scheme::{Plan, Refiner};
/// use subla_tri_gpu::Sqrt3Gpu;
/// let ctx = subla_gpu::GpuContext::new()?;
/// let refiner = Sqrt3Gpu::shared(std::sync::Arc::new(ctx));
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = refiner.build(&mesh, 2, Par::Rayon)?;
/// let y = plan.try_eval(x.view())?;
/// assert_eq!(y.nrows(), 20);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Sqrt3Gpu {
    device: Device,
}

impl Sqrt3Gpu {
    fn with(ctx: ContextRef) -> Self {
        Sqrt3Gpu {
            device: Device::new(ctx, "sqrt3_points.wgsl", shaders::SQRT3_POINTS, ["new_points", "vertex_points"]),
        }
    }
    /// A refiner on a context that lives for the whole program.
    pub fn new(ctx: &'static GpuContext) -> Self {
        Sqrt3Gpu::with(ContextRef::Static(ctx))
    }
    /// A refiner on a shared context.
    pub fn shared(ctx: Arc<GpuContext>) -> Self {
        Sqrt3Gpu::with(ContextRef::Shared(ctx))
    }
    /// The context.
    pub fn context(&self) -> &GpuContext {
        &self.device.ctx
    }

    /// The same refiner, whose plans do `policy` when the device cannot
    /// evaluate (a device failure, or `f64` asked for):
    /// [`FallbackPolicy::Never`] (the default) returns the error,
    /// [`FallbackPolicy::Cpu`] evaluates on the CPU plan and says so
    /// ([`subla_scheme::Plan::last_fallback`]).
    pub fn with_fallback(mut self, policy: FallbackPolicy) -> Self {
        self.device.fallback = policy;
        self
    }

    /// Uploads a CPU plan (what [`Refiner::build`] does after the CPU
    /// build).
    ///
    /// # Errors
    /// [`SchemeError::Device`] carrying the [`GpuError`]:
    /// [`GpuError::TooLarge`] when an array exceeds a device limit or the
    /// kernels' `u32` indices; shader, validation and device errors. The
    /// errors of deriving a lean level's connectivity for the upload.
    pub fn upload(&self, cpu: Sqrt3Plan, par: Par) -> Result<Sqrt3GpuPlan> {
        self.device.upload("sqrt3-gpu", cpu, |ctx, cpu, l| {
            upload_step(ctx, &StepView::of(cpu, l, par)?).map_err(|e| SchemeError::device("sqrt3-gpu", e))
        })
    }
}

/// The device data of one √3 step (bindings of `sqrt3_points.wgsl`).
fn upload_step(ctx: &GpuContext, step: &StepView<'_>) -> std::result::Result<StepBuffers, GpuError> {
    let t = step.parent.topology();
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let new = step.new_ptr.last().copied().unwrap_or(0) as usize;
    u32_of("sqrt3-gpu child level rows", nv + new)?;
    let vertex_nbrs: Vec<u32> = (0..nv).flat_map(|v| t.vertex_neighbors(v)).collect();
    // (1 − α(n), α(n) / n) by valence, in f64 then rounded, as the CPU
    // kernel rounds its weights.
    let smooth: Vec<[f32; 2]> = step
        .alpha
        .iter()
        .enumerate()
        .map(|(n, &a)| if n == 0 { [1.0, 0.0] } else { [(1.0 - a) as f32, (a / n as f64) as f32] })
        .collect();
    let nn = vertex_nbrs.len();
    let table = vec![
        None,
        put(ctx, "sqrt3-gpu face_verts", t.face_verts())?,
        put(ctx, "sqrt3-gpu new_ptr", step.new_ptr)?,
        put(ctx, "sqrt3-gpu boundary corners", step.boundary_corner)?,
        put(ctx, "sqrt3-gpu boundary neighbours", step.boundary_neighbors)?,
        put(ctx, "sqrt3-gpu vertex_ptr", t.vertex_edge_ptr())?,
        put(ctx, "sqrt3-gpu vertex neighbours", &vertex_nbrs)?,
        put(ctx, "sqrt3-gpu smoothing weights", &smooth)?,
        None,
        None,
    ];
    Ok(StepBuffers {
        words: [u32_of("sqrt3-gpu vertices", nv)?, u32_of("sqrt3-gpu faces", nf)?, 0, u32::from(step.splits_boundary)],
        table,
        data: [8, 9],
        items: [nf as u64, nv as u64],
        bytes: [
            bytes_of::<u32>(3 * nf + nf + 1 + step.boundary_corner.len()) + bytes_of::<[u32; 2]>(nv),
            bytes_of::<[u32; 2]>(nv) + bytes_of::<u32>(nv + 1 + nn) + bytes_of::<[f32; 2]>(smooth.len()),
        ],
        rows: [(nv as u64, new as u64), (nv as u64, nv as u64)],
    })
}

impl Refiner for Sqrt3Gpu {
    type Input = Mesh;
    type Plan = Sqrt3GpuPlan;
    fn name(&self) -> &'static str {
        "sqrt3-gpu"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<Sqrt3GpuPlan> {
        let cpu = Sqrt3Slak::new().build(input, levels, par)?;
        self.upload(cpu, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<subla_scheme::Prediction>> {
        Sqrt3Slak::new().predict(input, levels)
    }
    fn step(&self, plan: Sqrt3GpuPlan, par: Par) -> Result<Sqrt3GpuPlan> {
        let cpu = Sqrt3Slak::new().step(plan.into_cpu(), par)?;
        self.upload(cpu, par)
    }
}
