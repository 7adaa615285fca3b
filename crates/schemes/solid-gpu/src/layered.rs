//! Limit evaluation of layered cells on the device (`solid_layered.wgsl`,
//! `f32`): Stam's surface patch times a cubic B-spline (see
//! [`subla_solid::layered`]), with the two kernel shapes of
//! [`Shape`].
//!
//! The cells' control points (`4 (2n + 8)` each), their frames and phantom
//! layers are gathered on the CPU once per topology
//! ([`subla_solid::layered::layered_grid`]), with Stam's weights at the
//! `k × k` local surface parameters once per valence
//! ([`subla_solid::layered::surface_weights`]); each evaluation uploads the
//! control points and reads back `k³` samples per cell in the order of
//! [`subla_solid::layered::LayeredEval`].

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_gpu::program::{self, Program};
use subla_gpu::timing::EvalProfile;
use subla_gpu::{GpuBuffer, GpuContext};
use subla_solid::layered::{LayeredGrid, layered_grid, surface_weights};
use subla_solid::limit::{Quantity, cubic_basis, sample_param};
use subla_volume::VolMesh;

use crate::{FrameBuffers, LimitKernel, LimitRun, Shape, SolidGpuError, quantity_code, shaders};

/// Limit evaluation of layered cells on the device (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct LayeredLimitGpu {
    program: Program,
    meta: GpuBuffer<u32>,
    points: GpuBuffer<u32>,
    tables: GpuBuffer<f32>,
    basis: GpuBuffer<f32>,
    cells: u32,
    k: u32,
    num_vertices: usize,
    /// The control points and samples of the last evaluation, reused by the
    /// next.
    frame: FrameBuffers,
}

/// A cell's frame and phantom layer as the kernel's code word.
fn code(g: &LayeredGrid) -> u32 {
    let mut code = 0u32;
    for (a, &(axis, back)) in g.axes.iter().enumerate() {
        code |= (u32::from(axis) | (u32::from(back) << 2)) << (3 * a);
    }
    code | (g.phantom.map_or(0, |high| 1 + u32::from(high)) << 9)
}

impl LayeredLimitGpu {
    /// The evaluator of `cells` of `m` (all layered) at `k` samples per
    /// direction (`1 ..= 64`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`SolidGpuError::NotEvaluable`] naming the first cell that is not
    /// layered; [`SolidGpuError::Device`] where the program does not
    /// compile or a buffer cannot be made.
    ///
    /// # Panics
    /// If `k` is 0 or over 64.
    pub fn new(ctx: &GpuContext, m: &VolMesh, cells: &[u32], k: usize) -> Result<LayeredLimitGpu, SolidGpuError> {
        assert!((1..=64).contains(&k), "LayeredLimitGpu: k in 1 ..= 64, got {k}");
        let mut meta = Vec::with_capacity(4 * cells.len());
        let mut points = Vec::new();
        let mut tables: Vec<f32> = Vec::new();
        // The first table entry of each valence (and boundary sector) met.
        let mut table_at: Vec<((usize, Option<usize>), u32)> = Vec::new();
        for &c in cells {
            let g = layered_grid(m, c as usize).ok_or(SolidGpuError::NotEvaluable { cell: c })?;
            let key = (g.valence, g.sector);
            let at = match table_at.iter().find(|(n, _)| *n == key) {
                Some(&(_, at)) => at,
                None => {
                    let at = program::to_u32("surface tables", tables.len() as u64)?;
                    let w = surface_weights(g.valence, g.sector, k).ok_or(SolidGpuError::NotEvaluable { cell: c })?;
                    tables.extend(w.iter().flatten().map(|&v| v as f32));
                    table_at.push((key, at));
                    at
                }
            };
            let first = program::to_u32("control points", points.len() as u64)?;
            meta.extend([first, g.layer_len() as u32, at, code(&g)]);
            points.extend_from_slice(&g.points);
        }
        let t = |i: usize| sample_param(i, k);
        let (b, d): (Vec<[f64; 4]>, Vec<[f64; 4]>) = (0..k).map(|i| cubic_basis(t(i))).unzip();
        let basis: Vec<f32> = b.iter().chain(&d).flatten().map(|&w| w as f32).collect();
        let program = program::compile(ctx, "solid_layered.wgsl", shaders::SOLID_LAYERED, &["per_sample", "per_cell"])?;
        let cells32 = program::to_u32("cells", cells.len() as u64)?;
        program::to_u32("samples", cells.len() as u64 * (k as u64).pow(3))?;
        // Empty inputs still bind a buffer.
        if points.is_empty() {
            meta.extend([0; 4]);
            points.push(0);
            tables.push(0.0);
        }
        Ok(LayeredLimitGpu {
            program,
            meta: program::upload_array(ctx, "layered cells", &meta)?,
            points: program::upload_array(ctx, "layered control points", &points)?,
            tables: program::upload_array(ctx, "surface weights", &tables)?,
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

    /// [`LayeredLimitGpu::eval`] into `out` (`samples × 3`).
    ///
    /// # Errors
    /// As [`LayeredLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`LayeredLimitGpu::eval`], and if `out` is not `samples × 3`.
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

    /// [`LayeredLimitGpu::eval`], timed: the kernel's GPU time (timestamp
    /// queries, where the adapter has them), the bytes it moves at least
    /// (the cells' records and control point ids, Stam's tables, the
    /// control points and the samples, once each) and the wall time.
    ///
    /// # Errors
    /// As [`LayeredLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`LayeredLimitGpu::eval`].
    pub fn profile_eval(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
    ) -> Result<(Array2<f32>, EvalProfile), SolidGpuError> {
        self.limit_run(q, shape)?.profile(ctx, x)
    }

    /// [`LayeredLimitGpu::eval`] with the kernel dispatched `runs` times back to
    /// back in one command buffer, each dispatch timed, as
    /// [`crate::SolidLimitGpu::profile_back_to_back`].
    ///
    /// # Errors
    /// As [`LayeredLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`LayeredLimitGpu::eval`].
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
}

impl LimitKernel for LayeredLimitGpu {
    fn limit_run(&self, q: Quantity, shape: Shape) -> Result<LimitRun<'_>, SolidGpuError> {
        let samples = self.num_samples();
        let (kernel, items, kernel_name) = match shape.for_samples(self.k as usize) {
            Shape::PerSample => (&self.program[0], samples as u64, "layered_per_sample"),
            _ => (&self.program[1], u64::from(self.cells) * u64::from(program::WORKGROUP), "layered_per_cell"),
        };
        Ok(LimitRun {
            label: "layered limit",
            frame: &self.frame,
            params: [samples as u32, self.k, quantity_code(q), self.cells],
            tables: vec![self.meta.as_wgpu(), self.points.as_wgpu(), self.tables.as_wgpu(), self.basis.as_wgpu()],
            table_bytes: self.meta.byte_len() + self.points.byte_len() + self.tables.byte_len(),
            kernel,
            kernel_name,
            items,
            num_vertices: self.num_vertices,
        })
    }
}
