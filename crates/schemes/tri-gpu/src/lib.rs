//! Loop and Kobbelt's √3 subdivision evaluated on the GPU (wgpu), behind
//! subla's [`Refiner`](subla_scheme::Refiner) / [`Plan`] traits (Mlakar et al. 2020, Appendix A
//! and B, with the specialised kernels of §4).
//!
//! * [`LoopGpu`] builds [`LoopGpuPlan`]s with the rules of
//!   [`subla_loop::LoopSlak`] (OpenSubdiv's, or CGAL's with
//!   [`LoopGpu::cgal`]): boundaries, semi-sharp creases of both methods,
//!   corners, non-manifold edges, holes.
//! * [`Sqrt3Gpu`] builds [`Sqrt3GpuPlan`]s with the rules of
//!   [`subla_sqrt3::Sqrt3Slak`], Kobbelt's alternating boundary rule
//!   included (steps counted within a plan, continued in modeling mode).
//!
//! # Build and eval
//! The build step refines the topology and prepares the masks on the CPU
//! (the scheme crate's plan, kept inside the GPU plan: [`TriGpuPlan::cpu`])
//! and uploads what eval reads, once. Eval then runs entirely on the
//! device: the control data goes up, every level is computed from the one
//! before by WGSL gather kernels (one invocation per output row, levels
//! chained in device buffers reused from frame to frame), and only the
//! finest level comes back.
//!
//! | shader | entry points | writes |
//! |---|---|---|
//! | `loop_points.wgsl` | `edge_points`, `vertex_points` | Loop's edge points (special masks per edge) and vertex points (smooth masks by valence, special masks per vertex) |
//! | `sqrt3_points.wgsl` | `new_points`, `vertex_points` | √3 face points and boundary trisection points (one invocation per triangle), smoothed and boundary vertices |
//!
//! Both entry points of a level read only the parent level, so they are
//! independent. Every output value is summed from +0 by one invocation in
//! the order of the CPU kernels: results are bitwise identical from run to
//! run and agree with the CPU plan's `f32` eval to rounding (well within
//! 1e-5 of the bounding-box diagonal on every golden shape).
//!
//! Refined faces, the refinement matrices `R_i` and the limit operator come
//! from the CPU plan ([`Plan::faces`], [`Plan::operator`], [`Plan::limit`]).
//! Refining the topology of triangle meshes on the device, as
//! `subla-catmark-gpu` does for quads, is not done here yet.
//!
//! # Errors and fallback
//! The device computes in `f32`. [`TriGpuPlan::try_eval`] reports every
//! device failure as a [`GpuError`]; [`Plan::eval_f32`] returns it as
//! [`SchemeError::Device`] (the [`GpuError`] is its source), and
//! [`Plan::eval_f64`] is refused with [`SchemeError::Precision`] — unless
//! the refiner was made with [`FallbackPolicy::Cpu`] (`with_fallback`):
//! then both evaluate on the CPU plan instead, in the precision asked for,
//! and [`Plan::last_fallback`] says so. A level whose data exceeds a
//! storage binding or the kernels' `u32` indices is refused with
//! [`GpuError::TooLarge`] naming the limit. Builds report device failures
//! as [`SchemeError::Device`].
#![deny(missing_docs)]

mod loop_gpu;
mod sqrt3_gpu;

use std::sync::{Arc, Mutex, PoisonError};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::{CsrMat, Par};
use subla_gpu::program::{self, ContextRef, LevelChain, Program};
use subla_gpu::timing::PassTimer;
pub use subla_gpu::timing::{EvalProfile, KernelProfile};
use subla_gpu::{GpuContext, GpuError, wgpu};
use subla_mesh::Mesh;
use subla_scheme::{Faces, Fallback, FallbackPolicy, FallbackState, Plan, Result, SchemeError};

pub use loop_gpu::{LoopGpu, LoopGpuPlan};
pub use sqrt3_gpu::{Sqrt3Gpu, Sqrt3GpuPlan};

/// The WGSL kernels of this crate (its `shaders/` folder), compiled in.
pub mod shaders {
    /// `loop_points.wgsl`: Loop's edge and vertex points.
    pub const LOOP_POINTS: &str = include_str!("../shaders/loop_points.wgsl");
    /// `sqrt3_points.wgsl`: √3's new points and vertex points.
    pub const SQRT3_POINTS: &str = include_str!("../shaders/sqrt3_points.wgsl");
    /// Every kernel as `(file name, source)`.
    pub const ALL: [(&str, &str); 2] = [("loop_points.wgsl", LOOP_POINTS), ("sqrt3_points.wgsl", SQRT3_POINTS)];
}

/// The context of a refiner and its program, compiled on first use and
/// shared by every plan built from the refiner.
#[derive(Debug)]
struct Device {
    ctx: ContextRef,
    file: &'static str,
    source: &'static str,
    entries: [&'static str; 2],
    program: Mutex<Option<Arc<Program>>>,
    /// What the plans do when the device cannot evaluate.
    fallback: FallbackPolicy,
}

impl Device {
    fn new(ctx: ContextRef, file: &'static str, source: &'static str, entries: [&'static str; 2]) -> Self {
        Device { ctx, file, source, entries, program: Mutex::new(None), fallback: FallbackPolicy::Never }
    }

    /// The plan of `scheme` over `cpu`, each step's device data written by
    /// `step`.
    ///
    /// # Errors
    /// `step`'s; [`SchemeError::Device`] if the program does not compile.
    fn upload<P: Plan>(
        &self,
        scheme: &'static str,
        cpu: P,
        step: impl Fn(&GpuContext, &P, u32) -> Result<StepBuffers>,
    ) -> Result<TriGpuPlan<P>> {
        let steps = (0..cpu.levels()).map(|l| step(&self.ctx, &cpu, l)).collect::<Result<Vec<_>>>()?;
        TriGpuPlan::new(self, scheme, cpu, steps).map_err(|e| SchemeError::device(scheme, e))
    }

    fn program(&self) -> std::result::Result<Arc<Program>, GpuError> {
        let mut slot = self.program.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = slot.as_ref() {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(program::compile(&self.ctx, self.file, self.source, &self.entries)?);
        *slot = Some(Arc::clone(&p));
        Ok(p)
    }
}

/// What one level's kernels read besides the parent level's data: the
/// uniform's words (`channels` at word 2 is filled in per eval), storage
/// buffers indexed by binding number (binding 0, the uniform, and the data
/// bindings left empty), and the invocations of each entry point.
#[derive(Debug)]
struct StepBuffers {
    words: [u32; 4],
    /// Buffers by binding number.
    table: Vec<Option<wgpu::Buffer>>,
    /// Binding numbers of the parent data `x` and the child data `y`.
    data: [u32; 2],
    /// Invocations of entry points 0 and 1.
    items: [u64; 2],
    /// Bytes of the arrays each entry point reads, the vertex data aside.
    bytes: [u64; 2],
    /// Rows of vertex data each entry point reads (at most) and writes.
    rows: [(u64, u64); 2],
}

impl StepBuffers {
    /// Records both entry points over `x` → `y` with `channels` channels.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        ctx: &GpuContext,
        program: &Program,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        channels: u32,
        mut timer: Option<(&mut PassTimer, usize)>,
        names: [&'static str; 2],
    ) -> std::result::Result<(), GpuError> {
        let mut words = self.words;
        words[2] = channels;
        let params = program::uniform(ctx, "tri-gpu params", &words);
        let mut table: Vec<Option<&wgpu::Buffer>> = self.table.iter().map(Option::as_ref).collect();
        table[0] = Some(&params);
        table[self.data[0] as usize] = Some(x);
        table[self.data[1] as usize] = Some(y);
        for (k, kernel) in program.iter().enumerate() {
            let writes = match timer.as_mut() {
                Some((t, level)) => t.writes(format!("{level} {}", names[k])),
                None => None,
            };
            program::dispatch_timed(ctx, encoder, kernel, &table, self.items[k], writes)?;
        }
        Ok(())
    }

    /// Bytes held on the device.
    fn device_bytes(&self) -> u64 {
        self.table.iter().flatten().map(wgpu::Buffer::size).sum()
    }
}

/// A Loop or √3 refinement on the GPU: the CPU plan `P` that the build
/// made (topology, masks, faces, operators), and the device data of every
/// step.
#[derive(Debug)]
pub struct TriGpuPlan<P> {
    cpu: P,
    scheme: &'static str,
    names: [&'static str; 2],
    ctx: ContextRef,
    program: Arc<Program>,
    steps: Vec<StepBuffers>,
    lens: Vec<usize>,
    chain: LevelChain,
    /// What eval does when the device cannot evaluate, and where the last
    /// eval ran.
    fallback: FallbackState,
}

impl<P: Plan> TriGpuPlan<P> {
    fn new(
        device: &Device,
        scheme: &'static str,
        cpu: P,
        steps: Vec<StepBuffers>,
    ) -> std::result::Result<Self, GpuError> {
        let lens = (0..=cpu.levels()).map(|l| cpu.level_len(l)).collect();
        Ok(TriGpuPlan {
            cpu,
            scheme,
            names: device.entries,
            ctx: device.ctx.clone(),
            program: device.program()?,
            steps,
            lens,
            chain: LevelChain::new(),
            fallback: FallbackState::new(scheme, device.fallback),
        })
    }

    /// What the plan does when the device cannot evaluate.
    pub fn fallback_policy(&self) -> FallbackPolicy {
        self.fallback.policy()
    }

    /// The CPU plan the build made.
    pub fn cpu(&self) -> &P {
        &self.cpu
    }

    /// The CPU plan, the device data dropped.
    pub fn into_cpu(self) -> P {
        self.cpu
    }

    /// The context.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Bytes of the per-step arrays held on the device (the eval buffers
    /// aside).
    pub fn device_bytes(&self) -> u64 {
        self.steps.iter().map(StepBuffers::device_bytes).sum()
    }

    /// Evaluates on the device, reporting failures.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when a level's data exceeds a storage binding
    /// or the kernels' `u32` indices (`rows × d`); device, validation and
    /// readback errors.
    #[track_caller]
    pub fn try_eval(&self, control: ArrayView2<'_, f32>) -> std::result::Result<Array2<f32>, GpuError> {
        let mut out = Array2::zeros((self.lens[self.lens.len() - 1], control.ncols()));
        self.eval_timed(control, out.view_mut(), None)?;
        Ok(out)
    }

    /// [`TriGpuPlan::try_eval`] into `out` (the finest level's rows × `d`):
    /// a frame loop that passes the same `out` every frame allocates
    /// nothing on the host or the device.
    ///
    /// # Panics
    /// If `control` does not have the control mesh's rows or `out` is not
    /// the finest level's rows × `d`.
    ///
    /// # Errors
    /// As [`TriGpuPlan::try_eval`].
    #[track_caller]
    pub fn try_eval_into(
        &self,
        control: ArrayView2<'_, f32>,
        out: ArrayViewMut2<'_, f32>,
    ) -> std::result::Result<(), GpuError> {
        self.eval_timed(control, out, None)
    }

    /// [`TriGpuPlan::try_eval`], timed: the result with the GPU time of
    /// every kernel of every level (timestamp queries, where the adapter
    /// has them), the bytes each kernel must move at least, and the wall
    /// time of the whole eval.
    ///
    /// # Panics
    /// As [`TriGpuPlan::try_eval`].
    ///
    /// # Errors
    /// As [`TriGpuPlan::try_eval`].
    #[track_caller]
    pub fn profile_eval(
        &self,
        control: ArrayView2<'_, f32>,
    ) -> std::result::Result<(Array2<f32>, EvalProfile), GpuError> {
        let mut timer = PassTimer::new(&self.ctx, 2 * (self.steps.len() as u32).max(1))?;
        let start = std::time::Instant::now();
        let mut y = Array2::zeros((self.lens[self.lens.len() - 1], control.ncols()));
        self.eval_timed(control, y.view_mut(), Some(&mut timer))?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let times = timer.read(&self.ctx)?;
        let d = control.ncols() as u64;
        let mut kernels = Vec::with_capacity(2 * self.steps.len());
        for (l, s) in self.steps.iter().enumerate() {
            for k in 0..2 {
                let label = format!("{l} {}", self.names[k]);
                let (read, written) = s.rows[k];
                kernels.push(KernelProfile {
                    level: l as u32,
                    kernel: self.names[k],
                    seconds: times.iter().find(|t| t.label == label).map(|t| t.seconds),
                    bytes: s.bytes[k] + 4 * d * (read + written),
                });
            }
        }
        Ok((y, EvalProfile { kernels, wall_seconds }))
    }

    #[track_caller]
    fn eval_timed(
        &self,
        control: ArrayView2<'_, f32>,
        out: ArrayViewMut2<'_, f32>,
        mut timer: Option<&mut PassTimer>,
    ) -> std::result::Result<(), GpuError> {
        assert_eq!(
            control.nrows(),
            self.lens[0],
            "{}-gpu eval: control has {} rows, the plan needs {}",
            self.scheme,
            control.nrows(),
            self.lens[0]
        );
        let channels = program::to_u32("tri-gpu channels", control.ncols() as u64)?;
        let ctx: &GpuContext = &self.ctx;
        self.chain.run_into(ctx, "tri-gpu eval", &self.lens, control, out, |encoder, l, x, y| {
            let timer = timer.as_deref_mut().map(|t| (t, l));
            self.steps[l].record(ctx, &self.program, encoder, x, y, channels, timer, self.names)
        })
    }
}

impl<P: Plan> Plan for TriGpuPlan<P> {
    fn name(&self) -> &'static str {
        self.scheme
    }
    fn levels(&self) -> u32 {
        self.cpu.levels()
    }
    fn level_len(&self, level: u32) -> usize {
        self.cpu.level_len(level)
    }
    /// The device computes in `f32`: refused with
    /// [`SchemeError::Precision`], or (with [`FallbackPolicy::Cpu`])
    /// evaluated on the CPU plan in `f64`.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        subla_scheme::check_eval_shapes(self, self.scheme, control.dim(), out.dim());
        self.fallback.other_precision("f64", "f32", || self.cpu.eval_f64(control, out, par))
    }
    /// Evaluates on the GPU. A device failure is returned
    /// ([`SchemeError::Device`]), or (with [`FallbackPolicy::Cpu`]) the
    /// CPU plan evaluates instead.
    fn eval_f32(&self, control: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        subla_scheme::check_eval_shapes(self, self.scheme, control.dim(), out.dim());
        let on_device = self.try_eval_into(control, out.view_mut());
        self.fallback.on_device(on_device, || self.cpu.eval_f32(control, out.view_mut(), par))?;
        Ok(())
    }
    fn last_fallback(&self) -> Option<Fallback> {
        self.fallback.last()
    }
    fn child_point(&self, level: u32, row: usize) -> Option<subla_scheme::ChildPoint> {
        self.cpu.child_point(level, row)
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
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.cpu.refined(level, par)
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.cpu.faces(level, par)
    }
}

/// Converts an index count for the kernels.
fn u32_of(what: &'static str, n: usize) -> std::result::Result<u32, GpuError> {
    program::to_u32(what, n as u64)
}

/// Uploads `data` for the table.
fn put<T: bytemuck::Pod>(
    ctx: &GpuContext,
    what: &'static str,
    data: &[T],
) -> std::result::Result<Option<wgpu::Buffer>, GpuError> {
    Ok(Some(program::upload(ctx, what, data)?))
}

/// Bytes of `n` values of `T`.
fn bytes_of<T>(n: usize) -> u64 {
    (n * size_of::<T>()) as u64
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
    fn vertex_mask_matches_the_wgsl_struct() {
        // struct Mask { cv: f32, cn: f32, ce: f32, ua: u32, ub: u32 }
        assert_eq!(size_of::<loop_gpu::GpuVertexMask>(), 20);
    }

    #[test]
    fn plans_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<LoopGpuPlan>();
        check::<Sqrt3GpuPlan>();
    }
}
