//! Limit evaluation on the device of every cell class the CPU evaluates.

use ndarray::{Array2, ArrayView2, ArrayViewMut2, s};
use subla_gpu::GpuContext;
use subla_gpu::timing::EvalProfile;
use subla_solid::limit::{CellGrid, Quantity, cell_grid};
use subla_volume::VolMesh;

use crate::{IrregularLimitGpu, LayeredLimitGpu, LimitKernel, Shape, SolidGpuError, SolidLimitGpu};

/// Limit evaluation on the device of any cells [`cell_grid`] takes
/// (regular, layered and irregular) on a `k × k × k` grid of samples per
/// cell: the device's counterpart of
/// [`GridEval`](subla_solid::limit::GridEval).
///
/// The cells are sorted by class once, at construction; each class present
/// has its own evaluator ([`SolidLimitGpu`], [`LayeredLimitGpu`],
/// [`IrregularLimitGpu`]) and kernel, so a [`Shape`] applies to each class
/// apart ([`Shape::Auto`] chooses per class by the samples per cell). The
/// samples come back in the cells' order, each cell's `w` outer, then `v`,
/// then `u`.
///
/// ```no_run
/// use subla_algebra::Par;
/// use subla_scheme::{Refiner, eval};
/// use subla_solid::CatmarkSolid;
/// use subla_solid::limit::Quantity;
/// use subla_solid_gpu::{GridLimitGpu, Shape};
/// let ctx = subla_gpu::GpuContext::new()?;
/// let t = subla_volume::shapes::tetra_split()?;
/// let plan = CatmarkSolid::default().build(&t.mesh, 2, Par::Rayon)?;
/// let m = plan.mesh(2);
/// let x = eval(&plan, t.vertices.view(), Par::Rayon)?.mapv(|v| v as f32);
/// // The cells at the centre: irregular, layered and regular ones.
/// let cells: Vec<u32> = (0..m.num_cells() as u32)
///     .filter(|&c| subla_solid::limit::cell_grid(m, c as usize).is_some())
///     .collect();
/// let ev = GridLimitGpu::new(&ctx, m, &cells, 4)?;
/// let y = ev.eval(&ctx, x.view(), Quantity::Position, Shape::Auto)?;
/// assert_eq!(y.nrows(), cells.len() * 64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GridLimitGpu {
    num_cells: usize,
    k: usize,
    num_vertices: usize,
    /// Each class's evaluator and, per cell it holds, the cell's place in
    /// the caller's list.
    regular: Option<(SolidLimitGpu, Vec<usize>)>,
    layered: Option<(LayeredLimitGpu, Vec<usize>)>,
    irregular: Option<(IrregularLimitGpu, Vec<usize>)>,
}

impl GridLimitGpu {
    /// The evaluator of `cells` of `m` at `k` samples per direction (`1 ..=
    /// 64`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`SolidGpuError::NotEvaluable`] naming the first cell without a
    /// [`cell_grid`] (past the mesh's cells included);
    /// [`SolidGpuError::Device`] where a program does not compile or a
    /// buffer cannot be made.
    ///
    /// # Panics
    /// If `k` is 0 or over 64.
    pub fn new(ctx: &GpuContext, m: &VolMesh, cells: &[u32], k: usize) -> Result<GridLimitGpu, SolidGpuError> {
        assert!((1..=64).contains(&k), "GridLimitGpu: k in 1 ..= 64, got {k}");
        // Per class: the cells, and their places in `cells`.
        let mut by_class: [(Vec<u32>, Vec<usize>); 3] = Default::default();
        for (i, &c) in cells.iter().enumerate() {
            let class = match cell_grid(m, c as usize) {
                Some(CellGrid::Regular(_)) => 0,
                Some(CellGrid::Layered(_)) => 1,
                Some(CellGrid::Irregular(_)) => 2,
                _ => return Err(SolidGpuError::NotEvaluable { cell: c }),
            };
            by_class[class].0.push(c);
            by_class[class].1.push(i);
        }
        let [regular, layered, irregular] = by_class;
        let some = |(c, at): (Vec<u32>, Vec<usize>)| (!c.is_empty()).then_some((c, at));
        Ok(GridLimitGpu {
            num_cells: cells.len(),
            k,
            num_vertices: m.num_vertices(),
            regular: some(regular).map(|(c, at)| SolidLimitGpu::new(ctx, m, &c, k).map(|e| (e, at))).transpose()?,
            layered: some(layered).map(|(c, at)| LayeredLimitGpu::new(ctx, m, &c, k).map(|e| (e, at))).transpose()?,
            irregular: some(irregular)
                .map(|(c, at)| IrregularLimitGpu::new(ctx, m, &c, k).map(|e| (e, at)))
                .transpose()?,
        })
    }

    /// Number of samples (`cells · k³`).
    pub fn num_samples(&self) -> usize {
        self.num_cells * self.k.pow(3)
    }

    /// Number of cells of each class: regular, layered, irregular.
    pub fn cells_by_class(&self) -> [usize; 3] {
        [
            self.regular.as_ref().map_or(0, |r| r.1.len()),
            self.layered.as_ref().map_or(0, |r| r.1.len()),
            self.irregular.as_ref().map_or(0, |r| r.1.len()),
        ]
    }

    /// `q` at every sample from the control points `x` (`V × 3`, `f32`),
    /// each class by its kernel of shape `shape`.
    ///
    /// # Errors
    /// [`SolidGpuError::SingularDerivative`] for a derivative where
    /// irregular cells are sampled with `k > 1`; [`SolidGpuError::Device`]
    /// on a device failure.
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
        let mut out = Array2::zeros((self.num_samples(), 3));
        self.run(ctx, x, q, shape, out.view_mut(), None)?;
        Ok(out)
    }

    /// [`GridLimitGpu::eval`] into `out` (`samples × 3`). Each class's
    /// samples pass through a host array of that class's size on their way
    /// to their cells' rows of `out`; the device allocates nothing after
    /// the first call.
    ///
    /// # Errors
    /// As [`GridLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`GridLimitGpu::eval`], and if `out` is not `samples × 3`.
    pub fn eval_into(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
        out: ArrayViewMut2<'_, f32>,
    ) -> Result<(), SolidGpuError> {
        self.run(ctx, x, q, shape, out, None)
    }

    /// [`GridLimitGpu::eval`], timed: one kernel profile per class present
    /// (regular, layered, irregular, in that order; see
    /// [`SolidLimitGpu::profile_eval`]) and the wall time of the whole
    /// evaluation, the rows' reordering on the host included.
    ///
    /// # Errors
    /// As [`GridLimitGpu::eval`].
    ///
    /// # Panics
    /// As [`GridLimitGpu::eval`].
    pub fn profile_eval(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
    ) -> Result<(Array2<f32>, EvalProfile), SolidGpuError> {
        let start = std::time::Instant::now();
        let mut out = Array2::zeros((self.num_samples(), 3));
        let mut profile = EvalProfile { kernels: Vec::new(), wall_seconds: 0.0 };
        self.run(ctx, x, q, shape, out.view_mut(), Some(&mut profile))?;
        profile.wall_seconds = start.elapsed().as_secs_f64();
        Ok((out, profile))
    }

    /// Evaluates every class into `out`, collecting the kernels' profiles
    /// into `profile` where given.
    fn run(
        &self,
        ctx: &GpuContext,
        x: ArrayView2<'_, f32>,
        q: Quantity,
        shape: Shape,
        mut out: ArrayViewMut2<'_, f32>,
        mut profile: Option<&mut EvalProfile>,
    ) -> Result<(), SolidGpuError> {
        assert_eq!(x.dim(), (self.num_vertices, 3), "GridLimitGpu: control points V × 3");
        assert_eq!(out.dim(), (self.num_samples(), 3), "GridLimitGpu: out is samples × 3");
        // Every class first, then the rows: a refusal (a derivative on
        // irregular cells with `k > 1`) leaves `out` as it was.
        let mut parts = Vec::with_capacity(3);
        if let Some((ev, at)) = &self.regular {
            parts.push((part(ev, ctx, x, q, shape, profile.as_deref_mut())?, at));
        }
        if let Some((ev, at)) = &self.layered {
            parts.push((part(ev, ctx, x, q, shape, profile.as_deref_mut())?, at));
        }
        if let Some((ev, at)) = &self.irregular {
            parts.push((part(ev, ctx, x, q, shape, profile)?, at));
        }
        let per = self.k.pow(3);
        for (part, at) in parts {
            for (j, &i) in at.iter().enumerate() {
                out.slice_mut(s![i * per..(i + 1) * per, ..]).assign(&part.slice(s![j * per..(j + 1) * per, ..]));
            }
        }
        Ok(())
    }
}

/// One class's samples, its kernel's profile added to `profile` where
/// given.
fn part(
    ev: &impl LimitKernel,
    ctx: &GpuContext,
    x: ArrayView2<'_, f32>,
    q: Quantity,
    shape: Shape,
    profile: Option<&mut EvalProfile>,
) -> Result<Array2<f32>, SolidGpuError> {
    let run = ev.limit_run(q, shape)?;
    match profile {
        None => run.eval(ctx, x),
        Some(p) => {
            let (y, one) = run.profile(ctx, x)?;
            p.kernels.extend(one.kernels);
            Ok(y)
        }
    }
}
