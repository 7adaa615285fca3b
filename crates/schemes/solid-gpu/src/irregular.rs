//! Limit evaluation of irregular cells on the device
//! (`solid_irregular.wgsl`, `f32`): extraordinary edges meeting at one
//! vertex (see [`subla_solid::irregular`]), with the two kernel shapes of
//! [`Shape`].
//!
//! The cells' supports and each configuration's weights at the `k × k × k`
//! local grid parameters are made on the CPU once per topology
//! ([`IrregularEval`]); each evaluation uploads the control points, sums
//! `|S|` weighted support points per sample and reads back `k³` samples per
//! cell in the order of [`IrregularEval`]. Derivatives exist for `k = 1`
//! only (the centre): a larger grid has a sample at every cell's
//! extraordinary vertex, where the parametrisation is singular.

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::Par;
use subla_gpu::program::{self, Program};
use subla_gpu::timing::EvalProfile;
use subla_gpu::{GpuBuffer, GpuContext};
use subla_solid::irregular::IrregularEval;
use subla_solid::limit::Quantity;
use subla_volume::VolMesh;

use crate::{FrameBuffers, LimitKernel, LimitRun, Shape, SolidGpuError, quantity_code, shaders};

/// The most support points the per-cell kernel holds in workgroup memory;
/// beyond it [`Shape::PerCell`] runs the per-sample kernel.
const MAX_SUPPORT: usize = 256;

/// Limit evaluation of irregular cells on the device (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct IrregularLimitGpu {
    program: Program,
    meta: GpuBuffer<u32>,
    support: GpuBuffer<u32>,
    /// The weights for the position, then (`k = 1` only) the three
    /// derivatives, each in the same layout.
    tables: Vec<GpuBuffer<f32>>,
    cells: u32,
    k: u32,
    /// The first cell (named by the error for a derivative where `k > 1`).
    first: Option<u32>,
    per_cell_fits: bool,
    num_vertices: usize,
    frame: FrameBuffers,
}

impl IrregularLimitGpu {
    /// The evaluator of `cells` of `m` (all irregular) at `k` samples per
    /// direction (`1 ..= 64`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`SolidGpuError::NotEvaluable`] naming the first cell that is not
    /// irregular; [`SolidGpuError::Device`] where the program does not
    /// compile or a buffer cannot be made.
    ///
    /// # Panics
    /// If `k` is 0 or over 64.
    pub fn new(ctx: &GpuContext, m: &VolMesh, cells: &[u32], k: usize) -> Result<IrregularLimitGpu, SolidGpuError> {
        assert!((1..=64).contains(&k), "IrregularLimitGpu: k in 1 ..= 64, got {k}");
        let ev = IrregularEval::new(m, cells, k, Par::Rayon).map_err(|_| {
            let bad = cells.iter().copied().find(|&c| subla_solid::irregular::irregular_grid(m, c as usize).is_none());
            SolidGpuError::NotEvaluable { cell: bad.unwrap_or(0) }
        })?;
        let quantities: &[Quantity] = if k == 1 {
            &[Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW]
        } else {
            &[Quantity::Position]
        };
        // Each configuration's tables, at the same offsets for every
        // quantity.
        let mut offset = Vec::with_capacity(ev.num_configurations());
        let mut tables: Vec<Vec<f32>> = vec![Vec::new(); quantities.len()];
        for t in 0..ev.num_configurations() {
            offset.push(program::to_u32("weights", tables[0].len() as u64)?);
            for (w, &q) in tables.iter_mut().zip(quantities) {
                let table = ev.table(t, q).map_err(|_| SolidGpuError::NotEvaluable { cell: cells[0] })?;
                w.extend(table.iter().map(|&v| v as f32));
            }
        }
        let mut meta = Vec::with_capacity(4 * cells.len());
        let mut support = Vec::new();
        let mut widest = 0;
        for i in 0..cells.len() {
            let s = ev.support(i);
            widest = widest.max(s.len());
            let code = ev.reflected(i).iter().enumerate().map(|(a, &b)| u32::from(b) << a).sum::<u32>();
            meta.extend([
                program::to_u32("support points", support.len() as u64)?,
                s.len() as u32,
                offset[ev.configuration(i)],
                code,
            ]);
            support.extend_from_slice(s);
        }
        if support.is_empty() {
            meta.extend([0; 4]);
            support.push(0);
            for w in &mut tables {
                w.push(0.0);
            }
        }
        let program =
            program::compile(ctx, "solid_irregular.wgsl", shaders::SOLID_IRREGULAR, &["per_sample", "per_cell"])?;
        let cells32 = program::to_u32("cells", cells.len() as u64)?;
        program::to_u32("samples", cells.len() as u64 * (k as u64).pow(3))?;
        Ok(IrregularLimitGpu {
            program,
            meta: program::upload_array(ctx, "irregular cells", &meta)?,
            support: program::upload_array(ctx, "irregular supports", &support)?,
            tables: tables
                .iter()
                .map(|w| program::upload_array(ctx, "irregular weights", w))
                .collect::<Result<_, _>>()?,
            cells: cells32,
            k: k as u32,
            first: cells.first().copied(),
            per_cell_fits: widest <= MAX_SUPPORT,
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
    /// [`SolidGpuError::SingularDerivative`] for a derivative where `k >
    /// 1`; [`SolidGpuError::Device`] on a device failure.
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

    /// [`IrregularLimitGpu::eval`] into `out` (`samples × 3`).
    ///
    /// # Errors
    /// As [`IrregularLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`IrregularLimitGpu::eval`], and if `out` is not `samples × 3`.
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

    /// [`IrregularLimitGpu::eval`], timed (as
    /// [`SolidLimitGpu::profile_eval`](crate::SolidLimitGpu::profile_eval)).
    ///
    /// # Errors
    /// As [`IrregularLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`IrregularLimitGpu::eval`].
    pub fn profile_eval(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
    ) -> Result<(Array2<f32>, EvalProfile), SolidGpuError> {
        self.limit_run(q, shape)?.profile(ctx, x)
    }

    /// [`IrregularLimitGpu::eval`] with the kernel dispatched `runs` times back to
    /// back in one command buffer, each dispatch timed, as
    /// [`crate::SolidLimitGpu::profile_back_to_back`].
    ///
    /// # Errors
    /// As [`IrregularLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`IrregularLimitGpu::eval`].
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

impl LimitKernel for IrregularLimitGpu {
    fn limit_run(&self, q: Quantity, shape: Shape) -> Result<LimitRun<'_>, SolidGpuError> {
        let code = quantity_code(q);
        let table = self.tables.get(code as usize).or_else(|| self.first.is_none().then(|| &self.tables[0]));
        let table = match table {
            Some(t) => t,
            None => return Err(SolidGpuError::SingularDerivative { cell: self.first.unwrap_or(0) }),
        };
        let samples = self.num_samples();
        let per_cell = shape.for_samples(self.k as usize) == Shape::PerCell && self.per_cell_fits;
        let (kernel, items, kernel_name) = if per_cell {
            (&self.program[1], u64::from(self.cells) * u64::from(program::WORKGROUP), "irregular_per_cell")
        } else {
            (&self.program[0], samples as u64, "irregular_per_sample")
        };
        Ok(LimitRun {
            label: "irregular limit",
            frame: &self.frame,
            params: [samples as u32, self.k, code, self.cells],
            tables: vec![self.meta.as_wgpu(), self.support.as_wgpu(), table.as_wgpu()],
            table_bytes: self.meta.byte_len() + self.support.byte_len() + table.byte_len(),
            kernel,
            kernel_name,
            items,
            num_vertices: self.num_vertices,
        })
    }
}
