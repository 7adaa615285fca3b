//! Catmull-Clark subdivision evaluated on the GPU (wgpu), behind the same
//! [`Refiner`] / [`Plan`] traits as the CPU path
//! ([`subla_catmark::CatmarkSlak`]).
//!
//! The kernels are the SLAK gathers of Mlakar et al. 2020 (§4, §5) written
//! in WGSL, one file each in the top-level `shaders/` folder ([`shaders`]):
//!
//! | shader | entry point | writes |
//! |---|---|---|
//! | `catmark_face_points.wgsl` | `face_points` | one face point per parent face (centroid) |
//! | `catmark_edge_points.wgsl` | `edge_points` | one edge point per parent edge: `β Σ face points + α (a + b)`, smooth or special mask |
//! | `catmark_vertex_points.wgsl` | `vertex_points` | one vertex point per parent vertex: smooth mask (Eq. 11) or special mask (crease, corner, boundary, transition) |
//!
//! # What runs where
//! * **On the GPU now:** evaluation. [`CatmarkGpuPlan::try_eval`] (and the
//!   [`Plan`] eval methods) uploads the control data once, runs face, edge
//!   and vertex points for every level with the levels chained on the
//!   device (intermediate levels never come back; two scratch buffers are
//!   reused in turn), and reads the finest level back once.
//! * **On the CPU (not yet on the GPU):** everything that depends on
//!   topology only. [`Refiner::build`] runs [`subla_catmark::CatmarkSlak`]'s
//!   build — topology refinement, effective sharpness, and the special
//!   edge and vertex masks — and uploads, per step, the parent level's
//!   connectivity and the masks ([device layout](#device-layout)).
//!   [`Refiner::step`] (modeling mode) is the CPU step followed by an
//!   upload. [`Plan::operator`], [`Plan::limit`], [`Plan::refined`] and
//!   [`Plan::faces`] are the CPU plan's.
//!
//! # Device layout
//! Per step `l → l+1`, for a parent level with `nv` vertices, `nf` faces,
//! `ne` edges and `nc` corners, read-only storage buffers of `u32` / `f32`:
//!
//! | buffer | length | what |
//! |---|---|---|
//! | `face_ptr`, `face_verts` | `nf + 1`, `nc` | the faces (`Topology::face_ptr`, `face_verts`) |
//! | `order_weight` | largest face order + 1 | `1 / n` for a face of `n` vertices |
//! | `edges` | `2 ne` | the endpoints of every edge |
//! | `edge_corner_ptr`, `edge_faces` | `ne + 1`, one per face use | the face of each use of each edge, in corner order |
//! | `edge_mask` | `ne` | each edge's entry in `edge_masks` |
//! | `edge_masks` | `2 (1 + s_e)` | `(α, β)`: entry 0 the smooth `(¼, ¼)`, then the `s_e` special masks in edge order |
//! | `vertex_corner_ptr`, `vertex_faces` | `nv + 1`, `nc` | the face of each corner of each vertex, in corner order |
//! | `vertex_edge_ptr`, `vertex_nbrs` | `nv + 1`, `2 ne` | the other endpoint of each edge at each vertex, in edge order |
//! | `vertex_mask` | `nv` | each vertex's entry in `vertex_masks` |
//! | `vertex_masks` | `5 (V + 1 + s_v)` | `(cv, cs / n², ce, u_a, u_b)`: entries `0..=V` the smooth masks of valence `0..=V`, then the `s_v` special masks in vertex order |
//!
//! The masks are a dense per-element index (4 bytes per edge and per
//! vertex) into a compact table: smooth elements share one entry, special
//! ones (boundary, crease, semi-sharp, corner, non-manifold, smooth
//! triangles, rule transitions) have their own. Weights are computed in
//! `f64` and rounded to `f32` on the host, as the CPU kernel rounds them.
//! Empty arrays hold one padding element. [`CatmarkGpuPlan::device_bytes`]
//! gives the total.
//!
//! # Precision and determinism
//! The GPU computes in `f32`. [`Plan::eval_f32`] agrees with the CPU plan's
//! `f32` eval to rounding: both use the same `f32` weights (rounded from
//! `f64` on the host exactly as the CPU kernel rounds them) and the same
//! summation order (face terms, then neighbours or endpoints, then crease
//! ends, then the vertex itself), but a driver may fuse `acc + w · x` into
//! one multiply-add, and the CPU kernel takes a shortcut order on quad
//! levels. [`Plan::eval_f64`] converts the control data to `f32`, evaluates
//! on the GPU and converts the result back: expect `f32` accuracy, not
//! `f64`. Each output row is written by one invocation (gathers, no float
//! atomics) in a fixed order, so repeated runs on one device give bitwise
//! identical results.
//!
//! # Errors and the CPU fallback
//! [`CatmarkGpuPlan::try_eval`] returns every device failure as a
//! [`GpuError`]. The [`Plan`] eval methods cannot return errors: when the
//! GPU fails they fall back, silently (nothing is logged), to the CPU
//! plan's eval of the same precision ([`Plan::eval_f64`] then computes in
//! `f64`). Call [`CatmarkGpuPlan::try_eval`] to know which path ran.
//! [`Refiner::build`] and [`Refiner::step`] report upload failures as
//! [`SchemeError::OverBudget`] (a buffer over a device limit) or
//! [`SchemeError::Unsupported`] (any other device failure);
//! [`CatmarkGpu::upload`] gives the [`GpuError`] itself.
//!
//! # Example
//! ```no_run
//! use subla_algebra::Par;
//! use subla_catmark_gpu::CatmarkGpu;
//! use subla_gpu::GpuContext;
//! use subla_scheme::{Refiner, eval};
//! # fn run(data: &subla_mesh::MeshData) -> Result<(), Box<dyn std::error::Error>> {
//! let ctx: &'static GpuContext = Box::leak(Box::new(GpuContext::new()?));
//! let refiner = CatmarkGpu::new(ctx);
//! let plan = refiner.build(&data.mesh, 3, Par::Rayon)?;
//! let control = data.positions().mapv(|x| x as f32);
//! let fine = plan.try_eval(control.view())?; // on the device, or an error
//! let same = eval(&plan, control.view(), Par::Rayon); // on the device, or the CPU fallback
//! # let _ = (fine, same); Ok(()) }
//! ```
#![deny(missing_docs)]

mod device;
mod kernels;
pub mod split;

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::{CsrMat, Par};
use subla_catmark::{CatmarkPlan, CatmarkSlak};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
use subla_mesh::Mesh;
use subla_scheme::{Faces, Plan, Refiner, Result, SchemeError};

use crate::device::{StepBuffers, check_binding};
use crate::kernels::Kernels;

/// The WGSL kernels of this crate (the top-level `shaders/` folder),
/// compiled in with `include_str!`.
pub mod shaders {
    /// `catmark_face_points.wgsl`: face points (centroids), entry point
    /// `face_points`.
    pub const FACE_POINTS: &str = include_str!("../../../../shaders/catmark_face_points.wgsl");
    /// `catmark_edge_points.wgsl`: edge points, entry point `edge_points`.
    pub const EDGE_POINTS: &str = include_str!("../../../../shaders/catmark_edge_points.wgsl");
    /// `catmark_vertex_points.wgsl`: vertex points, entry point
    /// `vertex_points`.
    pub const VERTEX_POINTS: &str = include_str!("../../../../shaders/catmark_vertex_points.wgsl");
    /// Every kernel as `(file name, source)`.
    pub const ALL: [(&str, &str); 3] = [
        ("catmark_face_points.wgsl", FACE_POINTS),
        ("catmark_edge_points.wgsl", EDGE_POINTS),
        ("catmark_vertex_points.wgsl", VERTEX_POINTS),
    ];
}

/// The GPU context a refiner and its plans use: borrowed for the whole
/// program, or shared.
#[derive(Clone)]
enum Ctx {
    Static(&'static GpuContext),
    Shared(Arc<GpuContext>),
}

impl Deref for Ctx {
    type Target = GpuContext;
    fn deref(&self) -> &GpuContext {
        match self {
            Ctx::Static(c) => c,
            Ctx::Shared(c) => c,
        }
    }
}

impl fmt::Debug for Ctx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.adapter_info();
        write!(f, "GpuContext({:?}, {:?})", info.name, info.backend)
    }
}

/// Catmull-Clark with evaluation on the GPU: builds [`CatmarkGpuPlan`]s.
///
/// Holds a [`GpuContext`] and the three compute pipelines, compiled on the
/// first build and shared by every plan built from this refiner.
#[derive(Debug)]
pub struct CatmarkGpu {
    ctx: Ctx,
    kernels: Mutex<Option<Arc<Kernels>>>,
}

impl CatmarkGpu {
    /// A refiner on a context that lives for the whole program (such as
    /// the one `subla_gpu::testing::context_or_skip` hands out, or a leaked
    /// one).
    pub fn new(ctx: &'static GpuContext) -> Self {
        CatmarkGpu { ctx: Ctx::Static(ctx), kernels: Mutex::new(None) }
    }

    /// A refiner on a shared context.
    pub fn shared(ctx: Arc<GpuContext>) -> Self {
        CatmarkGpu { ctx: Ctx::Shared(ctx), kernels: Mutex::new(None) }
    }

    /// The context.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The pipelines, compiled on first use.
    fn kernels(&self) -> Result<Arc<Kernels>, GpuError> {
        let mut slot = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = slot.as_ref() {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(Kernels::new(&self.ctx)?);
        *slot = Some(Arc::clone(&k));
        Ok(k)
    }

    /// Uploads a CPU plan built by [`CatmarkSlak`] (what
    /// [`Refiner::build`] does after the CPU build), reporting device
    /// failures as they are.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when an array exceeds a device limit or the
    /// kernels' `u32` indices; shader, validation and device errors.
    pub fn upload(&self, cpu: CatmarkPlan) -> Result<CatmarkGpuPlan, GpuError> {
        let kernels = self.kernels()?;
        let steps = upload_steps(&self.ctx, &cpu)?;
        Ok(CatmarkGpuPlan { cpu, ctx: self.ctx.clone(), kernels, steps })
    }
}

/// Uploads every step of `cpu`.
fn upload_steps(ctx: &GpuContext, cpu: &CatmarkPlan) -> Result<Vec<StepBuffers>, GpuError> {
    (0..cpu.levels())
        .map(|l| match cpu.step_view(l) {
            Some(view) => StepBuffers::upload(ctx, &view),
            None => Err(GpuError::Internal {
                operation: "catmark-gpu upload",
                message: format!("the CPU plan has {} levels but no step {l}", cpu.levels()),
            }),
        })
        .collect()
}

/// A device failure during a build, as the [`Refiner`] trait reports it.
fn scheme_error(e: GpuError) -> SchemeError {
    match e {
        GpuError::TooLarge { what, bytes, limit, limit_value }
            if limit == "max_buffer_size" || limit == "max_storage_buffer_binding_size" =>
        {
            SchemeError::OverBudget {
                what: format!("{what} (GPU limit {limit})"),
                needed: u128::from(bytes),
                budget: u128::from(limit_value),
            }
        }
        other => SchemeError::Unsupported { scheme: "catmark-gpu", reason: format!("the GPU failed: {other}") },
    }
}

impl Refiner for CatmarkGpu {
    type Input = Mesh;
    type Plan = CatmarkGpuPlan;
    fn name(&self) -> &'static str {
        "catmark-gpu"
    }
    /// The CPU build of [`CatmarkSlak`], then one upload of every step's
    /// connectivity and masks.
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<CatmarkGpuPlan> {
        let cpu = CatmarkSlak.build(input, levels, par)?;
        self.upload(cpu).map_err(scheme_error)
    }
    /// The CPU step of [`CatmarkSlak`], then an upload of the new step, on
    /// the plan's own context and pipelines.
    fn step(&self, plan: CatmarkGpuPlan, par: Par) -> Result<CatmarkGpuPlan> {
        let CatmarkGpuPlan { cpu, ctx, kernels, steps } = plan;
        drop(steps);
        let cpu = CatmarkSlak.step(cpu, par)?;
        let steps = upload_steps(&ctx, &cpu).map_err(scheme_error)?;
        Ok(CatmarkGpuPlan { cpu, ctx, kernels, steps })
    }
}

/// A built Catmull-Clark refinement whose eval runs on the GPU.
///
/// Keeps the CPU plan (for topology, operators, limit and the fallback),
/// the device copy of every step's connectivity and masks, the context and
/// the pipelines. `Send + Sync`: evals may run from several threads at once
/// (each with its own data buffers).
#[derive(Debug)]
pub struct CatmarkGpuPlan {
    cpu: CatmarkPlan,
    ctx: Ctx,
    kernels: Arc<Kernels>,
    steps: Vec<StepBuffers>,
}

impl CatmarkGpuPlan {
    /// The CPU plan this plan evaluates.
    pub fn cpu(&self) -> &CatmarkPlan {
        &self.cpu
    }

    /// Gives the CPU plan back, releasing the device buffers.
    pub fn into_cpu(self) -> CatmarkPlan {
        self.cpu
    }

    /// The context the plan evaluates on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Bytes of connectivity and masks held on the device (all steps).
    pub fn device_bytes(&self) -> u64 {
        self.steps.iter().map(StepBuffers::bytes).sum()
    }

    /// Evaluates on the GPU: `output_len() × d` from `control`
    /// (`input_len() × d`, any `d`), in `f32`. One upload, all levels on
    /// the device, one readback. A plan of zero levels copies `control`
    /// without the device, as does `d = 0`.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when a level's data exceeds a storage binding
    /// or the kernels' `u32` indices (`rows × d`); device, validation and
    /// readback errors.
    #[track_caller]
    pub fn try_eval(&self, control: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        assert_eq!(
            control.nrows(),
            self.input_len(),
            "catmark-gpu eval: control has {} rows, the plan needs {}",
            control.nrows(),
            self.input_len()
        );
        let d = control.ncols();
        let levels = self.steps.len();
        if d == 0 {
            return Ok(Array2::zeros((self.output_len(), 0)));
        }
        if levels == 0 {
            return Ok(control.to_owned());
        }
        let ctx: &GpuContext = &self.ctx;
        // Every index the kernels form is below rows × d of some level.
        let elements = |l: usize| -> Result<usize, GpuError> {
            let n = self.level_len(l as u32) as u64 * d as u64;
            if n > u64::from(u32::MAX) {
                return Err(GpuError::TooLarge {
                    what: "catmark-gpu level data",
                    bytes: n.saturating_mul(4),
                    limit: "u32 index",
                    limit_value: u64::from(u32::MAX) * 4,
                });
            }
            check_binding(ctx, "catmark-gpu level data", n * 4)?;
            Ok(n as usize)
        };
        let sizes: Vec<usize> = (0..=levels).map(elements).collect::<Result<_, _>>()?;
        let channels = d as u32;

        let control = control.as_standard_layout();
        let x0 = match control.as_slice() {
            Some(s) => GpuBuffer::upload(ctx, s)?,
            None => GpuBuffer::upload(ctx, &control.iter().copied().collect::<Vec<f32>>())?,
        };
        // Level l + 1 goes to scratch[l % 2] (the finest to `out`); each
        // scratch buffer is sized by the largest level it holds, the last.
        let mut scratch: [Option<GpuBuffer<f32>>; 2] = [None, None];
        for (k, slot) in scratch.iter_mut().enumerate() {
            if let Some(l) = (0..levels - 1).rev().find(|l| l % 2 == k) {
                *slot = Some(GpuBuffer::zeroed(ctx, sizes[l + 1])?);
            }
        }
        let out = GpuBuffer::<f32>::zeroed(ctx, sizes[levels])?;
        let level_buffer = |l: usize| -> Result<&wgpu::Buffer, GpuError> {
            if l == levels {
                return Ok(out.as_wgpu());
            }
            if l == 0 {
                return Ok(x0.as_wgpu());
            }
            scratch[(l - 1) % 2].as_ref().map(GpuBuffer::as_wgpu).ok_or(GpuError::Internal {
                operation: "catmark-gpu eval",
                message: format!("no scratch buffer for level {l}"),
            })
        };
        kernels::scoped(ctx, "catmark-gpu eval", || {
            let mut encoder = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("catmark-gpu eval") });
            for (l, step) in self.steps.iter().enumerate() {
                let (x, y) = (level_buffer(l)?, level_buffer(l + 1)?);
                self.kernels.record_level(ctx, &mut encoder, step, x, y, channels)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        let data = out.download(ctx)?;
        Array2::from_shape_vec((self.output_len(), d), data)
            .map_err(|e| GpuError::Internal { operation: "catmark-gpu readback", message: e.to_string() })
    }
}

impl Plan for CatmarkGpuPlan {
    fn levels(&self) -> u32 {
        self.cpu.levels()
    }
    fn level_len(&self, level: u32) -> usize {
        self.cpu.level_len(level)
    }
    /// Converts `control` to `f32`, evaluates on the GPU and converts back
    /// (`f32` accuracy); falls back to the CPU plan's `f64` eval if the GPU
    /// fails.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>, par: Par) {
        subla_scheme::check_eval_shapes(self, "catmark-gpu", control.dim(), out.dim());
        let narrow = control.mapv(|v| v as f32);
        match self.try_eval(narrow.view()) {
            Ok(y) => out.zip_mut_with(&y, |o, &v| *o = f64::from(v)),
            Err(_) => self.cpu.eval_f64(control, out, par),
        }
    }
    /// Evaluates on the GPU; falls back to the CPU plan's eval if the GPU
    /// fails.
    fn eval_f32(&self, control: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, par: Par) {
        subla_scheme::check_eval_shapes(self, "catmark-gpu", control.dim(), out.dim());
        match self.try_eval(control) {
            Ok(y) => out.assign(&y),
            Err(_) => self.cpu.eval_f32(control, out, par),
        }
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        self.cpu.operator(level, par)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.cpu.operator_bound(level)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        self.cpu.limit(par)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        self.cpu.refined(level)
    }
    fn faces(&self, level: u32) -> Option<Faces<'_>> {
        self.cpu.faces(level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shader_validates() {
        for (name, source) in shaders::ALL {
            if let Err(e) = subla_gpu::shaders::validate(source) {
                panic!("{name}: {e}");
            }
        }
    }

    #[test]
    fn plan_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<CatmarkGpuPlan>();
        check::<CatmarkGpu>();
    }

    #[test]
    fn vertex_mask_matches_the_wgsl_struct() {
        assert_eq!(std::mem::size_of::<device::GpuVertexMask>(), 20);
    }
}
