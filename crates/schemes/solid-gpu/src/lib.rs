//! Catmull-Clark solids on the GPU: limit evaluation of regular cells
//! (inside, at a boundary face or at sharp boundary edges; layered cells by
//! [`LayeredLimitGpu`], irregular ones by [`IrregularLimitGpu`], any mix
//! of the three by [`GridLimitGpu`]) in WGSL, `f32`, with the two
//! kernel shapes of GPU limit evaluation — one invocation per sample, and
//! one workgroup per cell holding the cell's control points in workgroup
//! memory ([`Shape`]).
//!
//! The control grids are gathered on the CPU once per topology
//! ([`subla_solid::limit::control_grid`]) and uploaded with the basis of
//! the `k` sample parameters; each evaluation uploads the control points
//! and reads back `k³` samples per cell (`w` outer, then `v`, then `u`),
//! the order of [`subla_solid::limit::RegularEval`].
//!
//! ```no_run
//! use subla_solid::limit::Quantity;
//! use subla_solid_gpu::{Shape, SolidLimitGpu};
//! let ctx = subla_gpu::GpuContext::new()?;
//! let grid = subla_volume::shapes::hex_grid(4, 4, 4)?;
//! let x = grid.vertices.mapv(|v| v as f32);
//! let ev = SolidLimitGpu::new(&ctx, &grid.mesh, &[21, 22], 4)?;
//! let y = ev.eval(&ctx, x.view(), Quantity::Position, Shape::PerCell)?;
//! assert_eq!(y.nrows(), 2 * 64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod grid;
pub mod irregular;
pub mod layered;
pub mod points;
pub mod refine;

pub use grid::GridLimitGpu;
pub use irregular::IrregularLimitGpu;
pub use layered::LayeredLimitGpu;
pub use points::{SolidPointsGpu, SolidRefineOnDevice};
pub use refine::{GpuSolidTopology, SolidRefineGpu, SolidSplitGpu, SolidTopologyArrays, split_cells};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_gpu::program::{self, Program};
use subla_gpu::timing::{EvalProfile, KernelProfile, PassTimer};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
use subla_solid::limit::{ControlGrid, Quantity, control_grid, cubic_basis};
use subla_volume::VolMesh;

/// The WGSL kernels of this crate (its `shaders/` folder), compiled in.
pub mod shaders {
    /// `solid_limit.wgsl`: the limit of regular cells, per sample, per
    /// cell and per column of a cell's samples.
    pub const SOLID_LIMIT: &str = include_str!("../shaders/solid_limit.wgsl");
    /// `solid_irregular.wgsl`: the limit of irregular cells, per sample
    /// and per cell.
    pub const SOLID_IRREGULAR: &str = include_str!("../shaders/solid_irregular.wgsl");
    /// `solid_layered.wgsl`: the limit of layered cells, per sample and
    /// per cell.
    pub const SOLID_LAYERED: &str = include_str!("../shaders/solid_layered.wgsl");
    /// `solid_split.wgsl`: the child cells of one split, per cell corner.
    pub const SOLID_SPLIT: &str = include_str!("../shaders/solid_split.wgsl");
    /// `solid_points.wgsl`: the child points of one split from the
    /// parent's connectivity (its incidences by a counting sort, then cell,
    /// face, edge and vertex points).
    pub const SOLID_POINTS: &str = include_str!("../shaders/solid_points.wgsl");
    /// Every kernel as `(file name, source)`.
    pub const ALL: [(&str, &str); 5] = [
        ("solid_limit.wgsl", SOLID_LIMIT),
        ("solid_irregular.wgsl", SOLID_IRREGULAR),
        ("solid_layered.wgsl", SOLID_LAYERED),
        ("solid_split.wgsl", SOLID_SPLIT),
        ("solid_points.wgsl", SOLID_POINTS),
    ];
}

/// Which kernel evaluates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One invocation per sample, reading the cell's control points from
    /// global memory.
    PerSample,
    /// One workgroup (256 invocations) per cell: the control points and
    /// the basis loaded once into workgroup memory, then the cell's
    /// samples by sum factorisation; for regular cells at `k < 16`, one
    /// workgroup per up to 16 cells, an invocation per column `(u, v)` of
    /// samples (every `w` of it).
    PerCell,
    /// The hybrid choice by cell class and samples per cell: for layered
    /// and irregular cells [`Shape::PerSample`] where a cell has fewer
    /// than 64 samples (`k ≤ 3`), [`Shape::PerCell`] from `k = 4` on
    /// ([`Shape::for_samples`]); for regular cells [`Shape::PerCell`] from
    /// `k = 2` on ([`SolidLimitGpu::kernel_shape`]). On an NVIDIA H100 at
    /// `k = 4` the per-cell kernels took 0.028 ms against 0.039 ms
    /// (6,144 layered cells) and 0.037 against 0.042 ms (2,976 irregular
    /// cells); regular cells as [`SolidLimitGpu::kernel_shape`] says
    /// (`docs/solids.md`).
    Auto,
}

impl Shape {
    /// The kernel that evaluates `k³` samples per layered or irregular
    /// cell: `self`, or for [`Shape::Auto`] the hybrid choice (regular
    /// cells: [`SolidLimitGpu::kernel_shape`]).
    pub fn for_samples(self, k: usize) -> Shape {
        match self {
            Shape::Auto if k < 4 => Shape::PerSample,
            Shape::Auto => Shape::PerCell,
            other => other,
        }
    }
}

/// What can go wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum SolidGpuError {
    /// A cell the evaluator does not take: for [`SolidLimitGpu`] one
    /// without a control grid (not a regular hexahedron inside, at a
    /// boundary face or at sharp boundary edges), for [`LayeredLimitGpu`] one that is not layered, for
    /// [`IrregularLimitGpu`] one that is not irregular, for
    /// [`GridLimitGpu`] one of none of these classes.
    NotEvaluable {
        /// The cell.
        cell: u32,
    },
    /// A derivative asked of [`IrregularLimitGpu`] (or of a
    /// [`GridLimitGpu`] with irregular cells) on a grid of more than
    /// one sample per direction: every cell's grid meets its extraordinary
    /// vertex, where the parametrisation is singular.
    SingularDerivative {
        /// The first cell.
        cell: u32,
    },
    /// The device failed.
    Device(GpuError),
}

impl std::fmt::Display for SolidGpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolidGpuError::NotEvaluable { cell } => {
                write!(
                    f,
                    "cell {cell} is not of this evaluator's class (regular: a regular hexahedron inside, at a boundary face or at sharp boundary edges; layered: one extraordinary edge in layers of a full ring; irregular: extraordinary edges at one vertex)"
                )
            }
            SolidGpuError::SingularDerivative { cell } => write!(
                f,
                "cell {cell}: no derivative on a grid through its extraordinary vertex, where the parametrisation is singular (positions, or one sample per direction)"
            ),
            SolidGpuError::Device(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SolidGpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SolidGpuError::Device(e) => Some(e),
            SolidGpuError::NotEvaluable { .. } | SolidGpuError::SingularDerivative { .. } => None,
        }
    }
}

impl From<GpuError> for SolidGpuError {
    fn from(e: GpuError) -> Self {
        SolidGpuError::Device(e)
    }
}

/// Limit evaluation of regular cells on the device (see the
/// [crate docs](crate)).
#[derive(Debug)]
pub struct SolidLimitGpu {
    program: Program,
    grids: GpuBuffer<u32>,
    phantom: GpuBuffer<u32>,
    basis: GpuBuffer<f32>,
    cells: u32,
    k: u32,
    num_vertices: usize,
    /// The control points and samples of the last evaluation, reused by the
    /// next (a frame loop allocates nothing on the device).
    frame: FrameBuffers,
}

impl SolidLimitGpu {
    /// The evaluator of `cells` of `m` at `k` samples per direction (`1 ..=
    /// 64`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`SolidGpuError::NotEvaluable`] naming the first cell without a
    /// control grid; [`SolidGpuError::Device`] where the program does not
    /// compile or a buffer cannot be made.
    ///
    /// # Panics
    /// If `k` is 0 or over 64.
    pub fn new(ctx: &GpuContext, m: &VolMesh, cells: &[u32], k: usize) -> Result<SolidLimitGpu, SolidGpuError> {
        assert!((1..=64).contains(&k), "SolidLimitGpu: k in 1 ..= 64, got {k}");
        let mut grids = Vec::with_capacity(64 * cells.len());
        let mut phantom = Vec::with_capacity(cells.len());
        for &c in cells {
            let g: ControlGrid = ((c as usize) < m.num_cells())
                .then(|| control_grid(m, c as usize))
                .flatten()
                .ok_or(SolidGpuError::NotEvaluable { cell: c })?;
            grids.extend_from_slice(&g.points);
            // Two bits per axis: 0 none, 1 at index 0, 2 at index 3.
            phantom.push((0..3).map(|ax| g.phantoms[ax].map_or(0, |high| 1 + u32::from(high)) << (2 * ax)).sum());
        }
        let t = |i: usize| subla_solid::limit::sample_param(i, k);
        let (b, d): (Vec<[f64; 4]>, Vec<[f64; 4]>) = (0..k).map(|i| cubic_basis(t(i))).unzip();
        let basis: Vec<f32> = b.iter().chain(&d).flatten().map(|&w| w as f32).collect();
        let program = program::compile(
            ctx,
            "solid_limit.wgsl",
            shaders::SOLID_LIMIT,
            &["per_sample", "per_cell", "per_cell_columns"],
        )?;
        let cells32 = program::to_u32("cells", cells.len() as u64)?;
        program::to_u32("samples", cells.len() as u64 * (k as u64).pow(3))?;
        Ok(SolidLimitGpu {
            program,
            grids: program::upload_array(ctx, "control grids", &grids)?,
            phantom: program::upload_array(ctx, "phantom layers", &phantom)?,
            basis: program::upload_array(ctx, "basis", &basis)?,
            cells: cells32,
            k: k as u32,
            num_vertices: m.num_vertices(),
            frame: std::sync::Mutex::new(None),
        })
    }

    /// Number of samples (`cells · k³`).
    pub fn num_samples(&self) -> usize {
        self.cells as usize * (self.k as usize).pow(3)
    }

    /// `q` at every sample from the control points `x` (`V × 3`, `f32`),
    /// by the kernel `shape`.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] on a device failure.
    ///
    /// # Panics
    /// If `x` is not `V × 3`.
    pub fn eval(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
    ) -> Result<Array2<f32>, SolidGpuError> {
        self.limit_run(q, shape)?.eval(ctx, x)
    }

    /// [`SolidLimitGpu::eval`] into `out` (`samples × 3`): a frame loop
    /// that passes the same `out` every frame allocates nothing on the host
    /// or the device.
    ///
    /// # Errors
    /// As [`SolidLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`SolidLimitGpu::eval`], and if `out` is not `samples × 3`.
    pub fn eval_into(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
        out: ArrayViewMut2<'_, f32>,
    ) -> Result<(), SolidGpuError> {
        self.limit_run(q, shape)?.run(ctx, x, out, None, 1)
    }

    /// [`SolidLimitGpu::eval`], timed: the samples with the GPU time of the
    /// kernel (timestamp queries, where the adapter has them), the bytes it
    /// moves at least (the cells' control grids, the control points and
    /// the samples written, once each) and the wall time of the whole
    /// evaluation (upload, kernel, readback).
    ///
    /// # Errors
    /// As [`SolidLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`SolidLimitGpu::eval`].
    pub fn profile_eval(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
    ) -> Result<(Array2<f32>, EvalProfile), SolidGpuError> {
        self.limit_run(q, shape)?.profile(ctx, x)
    }

    /// [`SolidLimitGpu::eval`] with the kernel dispatched `runs` times
    /// back to back in one command buffer (at least once), each dispatch
    /// timed: the samples, and the GPU time of every dispatch in order
    /// (empty without timestamp queries). A loop that evaluates frame
    /// after frame on the device sees these times; a single evaluation
    /// after an idle moment can run at the idle device's lower clocks
    /// (`docs/solids.md`).
    ///
    /// # Errors
    /// As [`SolidLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`SolidLimitGpu::eval`].
    pub fn profile_back_to_back(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
        runs: usize,
    ) -> Result<(Array2<f32>, Vec<f64>), SolidGpuError> {
        self.limit_run(q, shape)?.profile_back_to_back(ctx, x, runs)
    }

    /// The kernel `shape` runs on these cells: itself, or for
    /// [`Shape::Auto`] [`Shape::PerCell`] from two samples per direction
    /// on and [`Shape::PerSample`] at one. Regular cells' per-cell kernel
    /// takes several cells per workgroup where they have few samples, so
    /// it is the faster from `k = 2` (on an NVIDIA H100, 32,400 cells:
    /// 0.036 ms against 0.083 ms at `k = 2`, 0.048 against 0.39 at `k =
    /// 4`, 0.12 against 2.96 at `k = 8`; `docs/solids.md`), where layered
    /// and irregular cells follow [`Shape::for_samples`].
    pub fn kernel_shape(&self, shape: Shape) -> Shape {
        match shape {
            Shape::Auto if self.k >= 2 => Shape::PerCell,
            Shape::Auto => Shape::PerSample,
            other => other,
        }
    }
}

impl LimitKernel for SolidLimitGpu {
    fn limit_run(&self, q: Quantity, shape: Shape) -> Result<LimitRun<'_>, SolidGpuError> {
        let samples = self.num_samples();
        let (kernel, items, kernel_name) = match self.kernel_shape(shape) {
            Shape::PerSample => (&self.program[0], samples as u64, "per_sample"),
            _ if self.k < COLUMNS_BELOW => (&self.program[2], per_cell_items(self.cells, self.k), "per_cell_columns"),
            _ => (&self.program[1], u64::from(self.cells) * u64::from(program::WORKGROUP), "per_cell"),
        };
        Ok(LimitRun {
            label: "solid limit",
            frame: &self.frame,
            params: [samples as u32, self.k, quantity_code(q), self.cells],
            tables: vec![self.grids.as_wgpu(), self.phantom.as_wgpu(), self.basis.as_wgpu()],
            table_bytes: self.grids.byte_len() + self.phantom.byte_len(),
            kernel,
            kernel_name,
            items,
            num_vertices: self.num_vertices,
        })
    }
}

/// [`Shape::PerCell`] of regular cells runs `per_cell_columns` (several
/// cells per workgroup, an invocation per column of samples) below this
/// many samples per direction, `per_cell` (one cell per workgroup, sum
/// factorisation through workgroup memory) from it on. On an NVIDIA H100
/// (32,400 cells, positions, clocks raised by a busy kernel first) the
/// columns took 0.036, 0.048 and 0.12 ms against 0.14, 0.15 and 0.23 ms
/// at `k = 2, 4, 8`, and 1.1-2.0 ms against 1.0-1.2 ms at `k = 16`.
const COLUMNS_BELOW: u32 = 16;

/// The invocations of `solid_limit.wgsl`'s `per_cell_columns` for `cells` cells
/// at `k` samples per direction: one workgroup per `min(16, 256 / k²)`
/// cells (at least one), as the kernel takes them.
fn per_cell_items(cells: u32, k: u32) -> u64 {
    let per_group = (256 / (k * k)).clamp(1, 16);
    u64::from(cells.div_ceil(per_group)) * u64::from(program::WORKGROUP)
}

/// A limit evaluator whose evaluation is one kernel run: what its
/// `eval`, `eval_into` and `profile_eval` and [`GridLimitGpu`] run.
trait LimitKernel {
    /// The evaluation of `q` by the kernel `shape`.
    ///
    /// # Errors
    /// Where the evaluator cannot evaluate `q`
    /// ([`SolidGpuError::SingularDerivative`]).
    fn limit_run(&self, q: Quantity, shape: Shape) -> Result<LimitRun<'_>, SolidGpuError>;
}

/// The control points and samples an evaluator keeps from one evaluation
/// to the next (a frame loop allocates nothing on the device).
type FrameBuffers = std::sync::Mutex<Option<(GpuBuffer<f32>, GpuBuffer<f32>)>>;

/// A limit kernel's code of the quantity: 0 position, 1–3 the derivative
/// along `u`, `v`, `w`.
fn quantity_code(q: Quantity) -> u32 {
    match q {
        Quantity::DerivU => 1,
        Quantity::DerivV => 2,
        Quantity::DerivW => 3,
        _ => 0,
    }
}

/// One evaluation by a limit kernel whose bindings are the parameters, the
/// evaluator's `tables`, the control points and the samples, in that order.
struct LimitRun<'a> {
    label: &'static str,
    frame: &'a FrameBuffers,
    /// Samples, `k`, the quantity's code, cells.
    params: [u32; 4],
    tables: Vec<&'a wgpu::Buffer>,
    /// The bytes of the tables the kernel reads at least once.
    table_bytes: u64,
    kernel: &'a program::Kernel,
    kernel_name: &'static str,
    items: u64,
    num_vertices: usize,
}

impl LimitRun<'_> {
    /// The samples from the control points `x`.
    fn eval(&self, ctx: &GpuContext, x: ArrayView2<'_, f32>) -> Result<Array2<f32>, SolidGpuError> {
        let mut y = Array2::zeros((self.params[0] as usize, 3));
        self.run(ctx, x, y.view_mut(), None, 1)?;
        Ok(y)
    }

    /// The samples, with the kernel dispatched `runs` times back to back
    /// in one command buffer, each dispatch timed (timestamp queries;
    /// none without them).
    fn profile_back_to_back(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        runs: usize,
    ) -> Result<(Array2<f32>, Vec<f64>), SolidGpuError> {
        let runs = u32::try_from(runs.max(1)).unwrap_or(u32::MAX).min(wgpu::QUERY_SET_MAX_QUERIES / 2);
        let mut timer = PassTimer::new(ctx, runs)?;
        let mut y = Array2::zeros((self.params[0] as usize, 3));
        self.run(ctx, x, y.view_mut(), Some(&mut timer), runs)?;
        let seconds = timer.read(ctx)?.into_iter().map(|t| t.seconds).collect();
        Ok((y, seconds))
    }

    /// [`LimitRun::eval`], timed: the kernel's GPU time (timestamp queries,
    /// where the adapter has them), the bytes it moves at least (the
    /// tables, the control points and the samples, once each) and the wall
    /// time of the whole evaluation (upload, kernel, readback).
    fn profile(&self, ctx: &GpuContext, x: ArrayView2<'_, f32>) -> Result<(Array2<f32>, EvalProfile), SolidGpuError> {
        let mut timer = PassTimer::new(ctx, 1)?;
        let start = std::time::Instant::now();
        let mut y = Array2::zeros((self.params[0] as usize, 3));
        self.run(ctx, x, y.view_mut(), Some(&mut timer), 1)?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let seconds = timer.read(ctx)?.first().map(|t| t.seconds);
        let bytes = self.table_bytes + 12 * self.num_vertices as u64 + 12 * y.nrows() as u64;
        let kernel = self.kernel_name;
        Ok((y, EvalProfile { kernels: vec![KernelProfile { level: 0, kernel, seconds, bytes }], wall_seconds }))
    }

    /// Writes the control points `x` (`V × 3`) into the kept buffers (or
    /// new ones), dispatches the kernel `dispatches` times (at least once)
    /// and reads the samples into `out`.
    ///
    /// # Panics
    /// If `x` is not `V × 3` or `out` not `samples × 3`.
    fn run(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        mut out: ArrayViewMut2<'_, f32>,
        mut timer: Option<&mut PassTimer>,
        dispatches: u32,
    ) -> Result<(), SolidGpuError> {
        let label = self.label;
        assert_eq!(x.dim(), (self.num_vertices, 3), "{label}: control points V × 3");
        let samples = self.params[0] as usize;
        assert_eq!(out.dim(), (samples, 3), "{label}: out is samples × 3");
        if samples == 0 {
            return Ok(());
        }
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        // The buffers of the last evaluation, when no other one holds them.
        let cached = self.frame.try_lock().ok().and_then(|mut f| f.take());
        let (points, y) = match cached {
            Some((mut points, y)) => {
                points.write(ctx, xs)?;
                (points, y)
            }
            None => (program::upload_array(ctx, "control points", xs)?, GpuBuffer::<f32>::zeroed(ctx, 3 * samples)?),
        };
        let params = program::uniform(ctx, label, &self.params);
        let mut table: Vec<Option<&wgpu::Buffer>> = vec![Some(&params)];
        table.extend(self.tables.iter().map(|&b| Some(b)));
        table.extend([Some(points.as_wgpu()), Some(y.as_wgpu())]);
        ctx.scoped(label, || {
            let mut encoder =
                ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
            // Every dispatch writes the same samples.
            for _ in 0..dispatches.max(1) {
                let writes = timer.as_deref_mut().and_then(|t| t.writes(label));
                program::dispatch_timed(ctx, &mut encoder, self.kernel, &table, self.items, writes)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        match out.as_slice_mut() {
            Some(o) => y.download_into(ctx, o)?,
            None => {
                let v = y.download(ctx)?;
                out.assign(&ArrayView2::from_shape((samples, 3), &v).expect("3 values per sample"));
            }
        }
        if let Ok(mut f) = self.frame.try_lock() {
            *f = Some((points, y));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel validates (naga), with or without a device.
    #[test]
    fn every_shader_validates() {
        for (name, source) in shaders::ALL {
            if let Err(e) = subla_gpu::shaders::validate(source) {
                panic!("{name}: {e}");
            }
        }
    }
}
