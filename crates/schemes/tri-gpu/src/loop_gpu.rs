//! Loop on the GPU: the device layout of one level and the refiner.

use bytemuck::{Pod, Zeroable};
use std::sync::Arc;
use subla_algebra::Par;
use subla_gpu::program::ContextRef;
use subla_gpu::{GpuContext, GpuError};
use subla_loop::{LoopPlan, LoopSlak, Rules, StepView};
use subla_mesh::Mesh;
use subla_scheme::{FallbackPolicy, Refiner, Result, SchemeError};

use crate::{Device, StepBuffers, TriGpuPlan, bytes_of, put, shaders, u32_of};

/// A vertex mask as `loop_points.wgsl` reads it (`struct Mask`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuVertexMask {
    pub(crate) cv: f32,
    pub(crate) cn: f32,
    pub(crate) ce: f32,
    pub(crate) ua: u32,
    pub(crate) ub: u32,
}

/// A Loop refinement on the GPU.
pub type LoopGpuPlan = TriGpuPlan<LoopPlan>;

/// Loop subdivision on the GPU: the build of [`LoopSlak`] (OpenSubdiv's or
/// CGAL's rules), eval by `loop_points.wgsl`.
///
/// ```no_run
/// use subla_algebra::Par;
/// use subla_scheme::{Plan, Refiner};
/// use subla_tri_gpu::LoopGpu;
/// let ctx = subla_gpu::GpuContext::new()?;
/// let refiner = LoopGpu::shared(std::sync::Arc::new(ctx));
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = refiner.build(&mesh, 3, Par::Rayon)?;
/// let y = plan.try_eval(x.view())?;
/// assert_eq!(y.nrows(), plan.output_len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LoopGpu {
    device: Device,
    cpu: LoopSlak,
}

impl LoopGpu {
    fn with(ctx: ContextRef) -> Self {
        LoopGpu {
            device: Device::new(ctx, "loop_points.wgsl", shaders::LOOP_POINTS, ["edge_points", "vertex_points"]),
            cpu: LoopSlak::new(),
        }
    }
    /// A refiner on a context that lives for the whole program.
    pub fn new(ctx: &'static GpuContext) -> Self {
        LoopGpu::with(ContextRef::Static(ctx))
    }
    /// A refiner on a shared context.
    pub fn shared(ctx: Arc<GpuContext>) -> Self {
        LoopGpu::with(ContextRef::Shared(ctx))
    }
    /// The same refiner with CGAL's rules ([`Rules::Cgal`]).
    pub fn cgal(mut self) -> Self {
        self.cpu = LoopSlak::cgal();
        self
    }
    /// The rules the refiner follows.
    pub fn rules(&self) -> Rules {
        self.cpu.rules
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
    pub fn upload(&self, cpu: LoopPlan, par: Par) -> Result<LoopGpuPlan> {
        self.device.upload("loop-gpu", cpu, |ctx, cpu, l| {
            upload_step(ctx, &StepView::of(cpu, l, par)?).map_err(|e| SchemeError::device("loop-gpu", e))
        })
    }
}

/// The device data of one Loop step (bindings of `loop_points.wgsl`).
fn upload_step(ctx: &GpuContext, step: &StepView<'_>) -> std::result::Result<StepBuffers, GpuError> {
    let t = step.parent.topology();
    let (nv, ne) = (t.num_vertices(), t.num_edges());
    u32_of("loop-gpu child level rows", nv + ne)?;
    let fv = t.face_verts();
    // The vertex opposite each edge use: corner c of triangle c / 3, two
    // places on.
    let edge_opp: Vec<u32> = (0..ne)
        .flat_map(|e| t.edge_corners(e).iter().map(|&c| fv[3 * (c as usize / 3) + (c as usize % 3 + 2) % 3]))
        .collect();
    let mut edge_mask = vec![0u32; ne];
    let mut edge_masks: Vec<[f32; 2]> = Vec::with_capacity(1 + step.edge_masks.len());
    edge_masks.push([(3.0f64 / 8.0) as f32, (1.0f64 / 8.0) as f32]);
    for m in step.edge_masks {
        edge_mask[m.edge as usize] = u32_of("loop-gpu edge masks", edge_masks.len())?;
        edge_masks.push([m.alpha as f32, m.beta as f32]);
    }
    let vertex_nbrs: Vec<u32> = (0..nv).flat_map(|v| t.vertex_neighbors(v)).collect();
    let max_valence = (0..nv).map(|v| t.valence(v)).max().unwrap_or(0);
    let mut vertex_masks: Vec<GpuVertexMask> = (0..=max_valence)
        .map(|n| {
            let [cv, cn] = step.smooth.get(n).copied().unwrap_or([1.0, 0.0]);
            GpuVertexMask { cv: cv as f32, cn: cn as f32, ..GpuVertexMask::default() }
        })
        .collect();
    let mut vertex_mask: Vec<u32> = (0..nv).map(|v| t.valence(v) as u32).collect();
    for m in step.vertex_masks {
        vertex_mask[m.vertex as usize] = u32_of("loop-gpu vertex masks", vertex_masks.len())?;
        vertex_masks.push(GpuVertexMask { cv: m.cv as f32, cn: m.cn as f32, ce: m.ce as f32, ua: m.ua, ub: m.ub });
    }
    let nc = edge_opp.len();
    let nn = vertex_nbrs.len();
    let table = vec![
        None,
        put(ctx, "loop-gpu edges", t.edges())?,
        put(ctx, "loop-gpu edge_opp_ptr", t.edge_corner_ptr())?,
        put(ctx, "loop-gpu opposite vertices", &edge_opp)?,
        put(ctx, "loop-gpu edge mask index", &edge_mask)?,
        put(ctx, "loop-gpu edge masks", &edge_masks)?,
        put(ctx, "loop-gpu vertex_ptr", t.vertex_edge_ptr())?,
        put(ctx, "loop-gpu vertex neighbours", &vertex_nbrs)?,
        put(ctx, "loop-gpu vertex mask index", &vertex_mask)?,
        put(ctx, "loop-gpu vertex masks", &vertex_masks)?,
        None,
        None,
    ];
    Ok(StepBuffers {
        words: [u32_of("loop-gpu vertices", nv)?, u32_of("loop-gpu edges", ne)?, 0, 0],
        table,
        data: [10, 11],
        items: [ne as u64, nv as u64],
        bytes: [
            bytes_of::<[u32; 2]>(ne) + bytes_of::<u32>(ne + 1 + nc + ne) + bytes_of::<[f32; 2]>(edge_masks.len()),
            bytes_of::<u32>(nv + 1 + nn + nv) + bytes_of::<GpuVertexMask>(vertex_masks.len()),
        ],
        rows: [(nv as u64, ne as u64), (nv as u64, nv as u64)],
    })
}

impl Refiner for LoopGpu {
    type Input = Mesh;
    type Plan = LoopGpuPlan;
    fn name(&self) -> &'static str {
        match self.cpu.rules {
            Rules::OpenSubdiv => "loop-gpu",
            Rules::Cgal => "loop-gpu-cgal",
        }
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<LoopGpuPlan> {
        let cpu = self.cpu.build(input, levels, par)?;
        self.upload(cpu, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<subla_scheme::Prediction>> {
        self.cpu.predict(input, levels)
    }
    fn step(&self, plan: LoopGpuPlan, par: Par) -> Result<LoopGpuPlan> {
        let cpu = self.cpu.step(plan.into_cpu(), par)?;
        self.upload(cpu, par)
    }
}
