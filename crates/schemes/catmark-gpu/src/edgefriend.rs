//! Catmull-Clark on the edge-friend encoding on the GPU
//! (`shaders/edge_friend.wgsl`; Kuth et al. 2023): the first level's
//! connectivity is written on the host by `subla_catmark`'s edge-friend
//! build (one pass over the control mesh's corners) and goes up once; every
//! later level's connectivity is one dispatch of `ef_topology` on the
//! device, and every level's points one dispatch of `ef_points` (the first
//! step, from the polygon control mesh, by this crate's face, edge and
//! vertex point kernels). Nothing comes back but the finest points; the
//! ghost quads that close boundaries are left out on the device
//! (`ef_mark`, an exclusive scan, `ef_gather`).
//!
//! The points are those of the CPU's [`CatmarkEdgeFriend`] in the same
//! order, to `f32` rounding; faces of the finest level are read back from
//! the device, everything else (`refined`, `operator`, `limit`, the faces
//! of other levels) comes from the CPU plan, built on first use.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::{CsrMat, Par};
use subla_catmark::edgefriend::LevelView;
use subla_catmark::{CatmarkEdgeFriend, EdgeFriendPlan};
use subla_gpu::program::{ContextRef as Ctx, LevelChain, uniform};
use subla_gpu::timing::{EvalProfile, KernelProfile, PassTimer};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
use subla_mesh::Mesh;
use subla_scheme::{Faces, Fallback, FallbackPolicy, FallbackState, Plan, Prediction, Refiner, Result, SchemeError};

use crate::device::StepBuffers;
use crate::kernels::Kernels;
use crate::multi::{self, Kernel};

const NAME: &str = "catmark-edge-friend-gpu";

/// `edge_friend.wgsl`: the edge-friend connectivity and points of one
/// level, the real vertices of a level with ghosts and the gather and
/// scatter of their rows.
pub(crate) const EDGE_FRIEND: &str = include_str!("../shaders/edge_friend.wgsl");

/// The pipelines of [`EDGE_FRIEND`] and the first step's point kernels.
#[derive(Debug)]
struct EfKernels {
    topology: Kernel,
    points: Kernel,
    mark: Kernel,
    gather: Kernel,
    scatter: Kernel,
    first: Kernels,
}

impl EfKernels {
    fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let mut p = multi::compile(
            ctx,
            "edge_friend.wgsl",
            EDGE_FRIEND,
            &["ef_topology", "ef_points", "ef_mark", "ef_gather", "ef_scatter"],
        )?;
        let scatter = p.pop();
        let gather = p.pop();
        let mark = p.pop();
        let points = p.pop();
        let topology = p.pop();
        let (Some(topology), Some(points), Some(mark), Some(gather), Some(scatter)) =
            (topology, points, mark, gather, scatter)
        else {
            return Err(GpuError::Internal { operation: NAME, message: "missing entry points".into() });
        };
        Ok(EfKernels { topology, points, mark, gather, scatter, first: Kernels::new(ctx)? })
    }
}

/// Catmull-Clark through the edge-friend encoding on the GPU: builds
/// [`EdgeFriendGpuPlan`]s. Meshes the encoding cannot hold (non-manifold,
/// isolated vertices) are refused with the CPU's typed errors
/// ([`CatmarkEdgeFriend::strict`]); [`crate::CatmarkGpu`] refines them.
#[derive(Debug)]
pub struct CatmarkEdgeFriendGpu {
    ctx: Ctx,
    fallback: FallbackPolicy,
    kernels: Mutex<Option<Arc<EfKernels>>>,
}

impl CatmarkEdgeFriendGpu {
    /// A refiner on a context that lives for the whole program.
    pub fn new(ctx: &'static GpuContext) -> Self {
        CatmarkEdgeFriendGpu { ctx: Ctx::Static(ctx), fallback: FallbackPolicy::Never, kernels: Mutex::new(None) }
    }

    /// A refiner on a shared context.
    pub fn shared(ctx: Arc<GpuContext>) -> Self {
        CatmarkEdgeFriendGpu { ctx: Ctx::Shared(ctx), fallback: FallbackPolicy::Never, kernels: Mutex::new(None) }
    }

    /// The same refiner, whose plans do `policy` when the device cannot
    /// evaluate (as [`crate::CatmarkGpu::with_fallback`]).
    pub fn with_fallback(mut self, policy: FallbackPolicy) -> Self {
        self.fallback = policy;
        self
    }

    fn kernels(&self) -> Result<Arc<EfKernels>, GpuError> {
        let mut slot = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = slot.as_ref() {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(EfKernels::new(&self.ctx)?);
        *slot = Some(Arc::clone(&k));
        Ok(k)
    }
}

/// The counts after one Catmull-Clark step (the real surface's: ghosts do
/// not count).
fn quad_split(p: &subla_scheme::LevelCounts) -> subla_scheme::LevelCounts {
    use subla_scheme::LevelRules as _;
    subla_catmark::CatmarkRules.child_counts(p, 0).expect("Catmull-Clark predicts every level")
}

fn device(e: GpuError) -> SchemeError {
    SchemeError::device(NAME, e)
}

/// Bits of `Params.flags`.
const SHARP_EDGES: u32 = 1;
const SHARP_VERTICES: u32 = 2;
const CHAIKIN: u32 = 4;

/// One level on the device.
#[derive(Debug)]
struct DeviceLevel {
    nv: u32,
    nq: u32,
    real_quads: u32,
    real_vertices: u32,
    quads: GpuBuffer<u32>,
    friends: GpuBuffer<u32>,
    loop_start: GpuBuffer<u32>,
    sharp: Option<GpuBuffer<f32>>,
    vsharp: Option<GpuBuffer<f32>>,
    /// Where the level has ghosts: per vertex 1 if real, and the exclusive
    /// scan of those flags (the real vertex numbering).
    real: Option<(GpuBuffer<u32>, GpuBuffer<u32>)>,
}

impl DeviceLevel {
    fn upload(ctx: &GpuContext, v: &LevelView<'_>) -> Result<Self, GpuError> {
        let u32s = |n: usize| subla_gpu::program::to_u32("an edge-friend level", n as u64);
        Ok(DeviceLevel {
            nv: u32s(v.num_vertices)?,
            nq: u32s(v.friends.len())?,
            real_quads: u32s(v.real_quads)?,
            real_vertices: u32s(v.real_vertices)?,
            quads: GpuBuffer::upload(ctx, v.quads)?,
            friends: GpuBuffer::upload(ctx, bytemuck::cast_slice(v.friends))?,
            loop_start: GpuBuffer::upload(ctx, v.loop_start)?,
            sharp: v.edge_sharpness.map(|s| GpuBuffer::upload(ctx, s)).transpose()?,
            vsharp: v.vertex_sharpness.map(|s| GpuBuffer::upload(ctx, s)).transpose()?,
            real: None,
        })
    }

    fn bytes(&self) -> u64 {
        let b = |n: usize| 4 * n as u64;
        b(self.quads.len())
            + b(self.friends.len())
            + b(self.loop_start.len())
            + self.sharp.as_ref().map_or(0, |s| b(s.len()))
            + self.vsharp.as_ref().map_or(0, |s| b(s.len()))
            + self.real.as_ref().map_or(0, |(f, o)| b(f.len() + o.len()))
    }
}

/// `b`'s buffer, or `dummy` (a binding the kernel reads only under a flag
/// that is off).
fn or_dummy<'a>(b: &'a Option<GpuBuffer<f32>>, dummy: &'a GpuBuffer<f32>) -> &'a wgpu::Buffer {
    b.as_ref().unwrap_or(dummy).as_wgpu()
}

/// The level after `l`, by one dispatch of `ef_topology`.
fn refine(ctx: &GpuContext, k: &EfKernels, l: &DeviceLevel, flags: u32, dummy: &GpuBuffer<f32>) -> Result<DeviceLevel> {
    let nq = u64::from(l.nq);
    let nv = u64::from(l.nv) + 3 * nq;
    let too_large = |what: &'static str, n: u64| -> Result<u32> {
        u32::try_from(n).map_err(|_| SchemeError::TooLarge { what, value: u128::from(n) })
    };
    let nv32 = too_large("the vertices of an edge-friend level", nv)?;
    let nq32 = too_large("the quads of an edge-friend level", 4 * nq)?;
    too_large("the corners of an edge-friend level", 16 * nq)?;
    let quads = GpuBuffer::<u32>::zeroed(ctx, 16 * nq as usize).map_err(device)?;
    let friends = GpuBuffer::<u32>::zeroed(ctx, 8 * nq as usize).map_err(device)?;
    let loop_start = GpuBuffer::<u32>::zeroed(ctx, nv as usize).map_err(device)?;
    let sharp = if flags & SHARP_EDGES != 0 {
        Some(GpuBuffer::<f32>::zeroed(ctx, 8 * nq as usize).map_err(device)?)
    } else {
        None
    };
    let vsharp = if flags & SHARP_VERTICES != 0 {
        Some(GpuBuffer::<f32>::zeroed(ctx, nv as usize).map_err(device)?)
    } else {
        None
    };
    let params = uniform(ctx, "edge-friend params", &[l.nq, l.nv, 0, flags]);
    // Outputs the level does not have get their own one-element buffers: a
    // buffer cannot be read and written in one dispatch.
    let (out_dummy_s, out_dummy_vs) =
        (GpuBuffer::<f32>::zeroed(ctx, 1).map_err(device)?, GpuBuffer::<f32>::zeroed(ctx, 1).map_err(device)?);
    let (s_in, vs_in, s_out, vs_out) = (
        or_dummy(&l.sharp, dummy),
        or_dummy(&l.vsharp, dummy),
        or_dummy(&sharp, &out_dummy_s),
        or_dummy(&vsharp, &out_dummy_vs),
    );
    ctx.scoped("edge-friend topology", || {
        let mut encoder = encoder(ctx);
        let table = [
            Some(&params),
            Some(l.quads.as_wgpu()),
            Some(l.friends.as_wgpu()),
            Some(l.loop_start.as_wgpu()),
            Some(s_in),
            Some(vs_in),
            Some(quads.as_wgpu()),
            Some(friends.as_wgpu()),
            Some(loop_start.as_wgpu()),
            Some(s_out),
            Some(vs_out),
        ];
        multi::dispatch(ctx, &mut encoder, &k.topology, &table, nq.max(u64::from(l.nv)))?;
        ctx.queue().submit([encoder.finish()]);
        Ok(())
    })
    .map_err(device)?;
    Ok(DeviceLevel {
        nv: nv32,
        nq: nq32,
        real_quads: 4 * l.real_quads,
        real_vertices: 0,
        quads,
        friends,
        loop_start,
        sharp,
        vsharp,
        real: None,
    })
}

/// The real vertices of `l` (where it has ghosts) on the device: the
/// flags of `ef_mark` and their exclusive scan, whose total must be
/// `real_vertices`.
fn mark_real(ctx: &GpuContext, k: &EfKernels, l: &mut DeviceLevel, real_vertices: u32) -> Result<()> {
    l.real_vertices = real_vertices;
    if l.real_quads == l.nq && real_vertices == l.nv {
        return Ok(());
    }
    let flags = GpuBuffer::<u32>::zeroed(ctx, l.nv as usize).map_err(device)?;
    let params = uniform(ctx, "edge-friend params", &[l.real_quads, l.nv, 0, 0]);
    ctx.scoped("edge-friend real vertices", || {
        let mut encoder = encoder(ctx);
        let table = [
            Some(&params),
            None,
            Some(l.friends.as_wgpu()),
            Some(l.loop_start.as_wgpu()),
            None,
            None,
            None,
            None,
            Some(flags.as_wgpu()),
        ];
        multi::dispatch(ctx, &mut encoder, &k.mark, &table, u64::from(l.nv))?;
        ctx.queue().submit([encoder.finish()]);
        Ok(())
    })
    .map_err(device)?;
    let (offsets, total) = subla_gpu::scan::scan_exclusive(ctx, &flags).map_err(device)?;
    if total != real_vertices {
        return Err(SchemeError::Internal {
            what: NAME,
            detail: format!("{total} real vertices on the device, {real_vertices} expected"),
        });
    }
    l.real = Some((flags, offsets));
    Ok(())
}

/// What the plan mirrors on the CPU (built on first use): a build of
/// `levels` levels of `mesh`, stepped `steps` times.
#[derive(Debug)]
struct Mirror {
    mesh: Mesh,
    levels: u32,
    steps: u32,
}

/// A Catmull-Clark refinement in edge-friend form on the device.
#[derive(Debug)]
pub struct EdgeFriendGpuPlan {
    ctx: Ctx,
    kernels: Arc<EfKernels>,
    /// The first step's data, for plans built from a polygon mesh, and the
    /// gather of its rows (written in the kernels' numbering) into the
    /// first level's: flags (1 for real rows) and source rows.
    first: Option<(StepBuffers, GpuBuffer<u32>, GpuBuffer<u32>)>,
    /// Rows of the control data.
    n0: usize,
    /// The edge-friend levels, first to finest.
    levels: Vec<DeviceLevel>,
    flags: u32,
    /// Real rows per level, control first.
    lens: Vec<usize>,
    /// The counts of the finest level's surface (real quads).
    counts: subla_scheme::LevelCounts,
    dummy: GpuBuffer<f32>,
    chain: LevelChain,
    mirror: Mirror,
    cpu: OnceLock<EdgeFriendPlan>,
    faces: OnceLock<(Vec<u32>, Vec<bool>)>,
    fallback: FallbackState,
}

impl Refiner for CatmarkEdgeFriendGpu {
    type Input = Mesh;
    type Plan = EdgeFriendGpuPlan;
    fn name(&self) -> &'static str {
        NAME
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<EdgeFriendGpuPlan> {
        let cpu = CatmarkEdgeFriend::strict().build(input, levels.min(1), par)?;
        let k = self.kernels().map_err(device)?;
        let ctx = &self.ctx;
        let dummy = GpuBuffer::<f32>::zeroed(ctx, 1).map_err(device)?;
        let mut lens = vec![input.num_vertices()];
        let mut dev = Vec::new();
        let mut first = None;
        let mut flags = 0;
        let mut counts = subla_scheme::LevelCounts::of(input.topology());
        if levels > 0 {
            let (Some(view), Some((step, slak_of))) = (cpu.level(1), cpu.control_step()) else {
                return Err(SchemeError::Internal { what: NAME, detail: "no first edge-friend level".into() });
            };
            let bit = |on: bool, b: u32| if on { b } else { 0 };
            flags = bit(view.edge_sharpness.is_some(), SHARP_EDGES)
                | bit(view.vertex_sharpness.is_some(), SHARP_VERTICES)
                | bit(view.chaikin, CHAIKIN);
            let mut flags_rows = vec![0u32; view.num_vertices];
            flags_rows[..slak_of.len()].fill(1);
            let mut source_rows = vec![0u32; view.num_vertices];
            source_rows[..slak_of.len()].copy_from_slice(slak_of);
            first = Some((
                StepBuffers::upload(ctx, &step).map_err(device)?,
                GpuBuffer::upload(ctx, &flags_rows).map_err(device)?,
                GpuBuffer::upload(ctx, &source_rows).map_err(device)?,
            ));
            dev.push(DeviceLevel::upload(ctx, &view).map_err(device)?);
            lens.push(view.real_vertices);
            dev[0].real_vertices = view.real_vertices as u32;
            // Real counts of the later levels: those of the uniform split.
            counts = quad_split(&counts);
            for _ in 1..levels {
                let next = refine(ctx, &k, dev.last().expect("a level"), flags, &dummy)?;
                counts = quad_split(&counts);
                dev.push(next);
                lens.push(counts.vertices as usize);
            }
            let last = dev.last_mut().expect("a level");
            let real = u32::try_from(counts.vertices)
                .map_err(|_| SchemeError::TooLarge { what: "the vertices of a level", value: counts.vertices })?;
            mark_real(ctx, &k, last, real)?;
        }
        Ok(EdgeFriendGpuPlan {
            ctx: self.ctx.clone(),
            kernels: k,
            first,
            n0: input.num_vertices(),
            levels: dev,
            flags,
            lens,
            counts,
            dummy,
            chain: LevelChain::new(),
            mirror: Mirror { mesh: input.clone(), levels, steps: 0 },
            cpu: OnceLock::new(),
            faces: OnceLock::new(),
            fallback: FallbackState::new(NAME, self.fallback),
        })
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        CatmarkEdgeFriend::strict().predict(input, levels)
    }
    fn step(&self, plan: EdgeFriendGpuPlan, par: Par) -> Result<EdgeFriendGpuPlan> {
        let _ = par;
        let EdgeFriendGpuPlan { ctx, kernels, mut levels, flags, lens, counts, dummy, mirror, fallback, .. } = plan;
        let Some(mut finest) = levels.pop() else {
            return self.build(&mirror.mesh, 1, par);
        };
        drop(levels);
        let n0 = *lens.last().expect("a level");
        // The input is the finest level's real rows: they are scattered
        // into its layout with the real numbering (kept or made here).
        if finest.real.is_none() {
            let real = finest.real_vertices;
            mark_real(&ctx, &kernels, &mut finest, real)?;
        }
        let mut next = refine(&ctx, &kernels, &finest, flags, &dummy)?;
        let counts = quad_split(&counts);
        let real_next = u32::try_from(counts.vertices)
            .map_err(|_| SchemeError::TooLarge { what: "the vertices of a level", value: counts.vertices })?;
        mark_real(&ctx, &kernels, &mut next, real_next)?;
        let lens = vec![n0, real_next as usize];
        Ok(EdgeFriendGpuPlan {
            ctx,
            kernels,
            first: None,
            n0,
            levels: vec![finest, next],
            flags,
            lens,
            counts,
            dummy,
            chain: LevelChain::new(),
            mirror: Mirror { mesh: mirror.mesh, levels: mirror.levels, steps: mirror.steps + 1 },
            cpu: OnceLock::new(),
            faces: OnceLock::new(),
            fallback: FallbackState::new(NAME, fallback.policy()),
        })
    }
}

/// One step of the eval chain.
#[derive(Copy, Clone, Debug)]
enum Stage {
    /// The first step's point kernels.
    First,
    /// Its rows into the first level's numbering.
    Permute,
    /// The control rows into the first level's layout.
    Scatter,
    /// The points of level `i + 1` from level `i`.
    Points(usize),
    /// The finest level's real rows.
    Gather,
}

impl Stage {
    /// The step's name in an [`EvalProfile`].
    fn name(self) -> &'static str {
        match self {
            Stage::First => "first",
            Stage::Permute => "permute",
            Stage::Scatter => "scatter",
            Stage::Points(_) => "points",
            Stage::Gather => "gather",
        }
    }
}

impl EdgeFriendGpuPlan {
    fn stages(&self) -> (Vec<usize>, Vec<Stage>) {
        let mut lens = vec![self.n0];
        let mut stages = Vec::new();
        let Some(first) = self.levels.first() else { return (lens, stages) };
        if self.first.is_some() {
            stages.push(Stage::First);
            lens.push(first.real_vertices as usize);
            stages.push(Stage::Permute);
            lens.push(first.nv as usize);
        } else if first.real.is_some() {
            stages.push(Stage::Scatter);
            lens.push(first.nv as usize);
        }
        for i in 0..self.levels.len() - 1 {
            stages.push(Stage::Points(i));
            lens.push(self.levels[i + 1].nv as usize);
        }
        let last = self.levels.last().expect("a level");
        if last.real.is_some() {
            stages.push(Stage::Gather);
            lens.push(last.real_vertices as usize);
        }
        (lens, stages)
    }

    /// Evaluates on the GPU in `f32`: one upload, every level on the
    /// device, one readback.
    ///
    /// # Errors
    /// Device, validation and readback errors; levels over a storage
    /// binding.
    pub fn try_eval(&self, control: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        let (lens, stages) = self.stages();
        if stages.is_empty() {
            return Ok(control.to_owned());
        }
        let mut out = Array2::zeros((lens[lens.len() - 1], control.ncols()));
        self.eval_timed(control, out.view_mut(), None)?;
        Ok(out)
    }

    /// [`EdgeFriendGpuPlan::try_eval`] into `out` (the finest level's rows ×
    /// `d`): a frame loop that passes the same `out` every frame allocates
    /// nothing on the host or the device.
    ///
    /// # Panics
    /// If `control` or `out` have other numbers of rows than the control
    /// mesh and the finest level, or their channels differ.
    ///
    /// # Errors
    /// As [`EdgeFriendGpuPlan::try_eval`].
    pub fn try_eval_into(&self, control: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) -> Result<(), GpuError> {
        if self.stages().1.is_empty() {
            out.assign(&control);
            return Ok(());
        }
        self.eval_timed(control, out, None)
    }

    /// [`EdgeFriendGpuPlan::try_eval`], timed: the result with the GPU time
    /// of every step (timestamp queries, where the adapter has them), the
    /// bytes each step moves at least (its input level's points, the
    /// level's quads, friends, loop starts and sharpness read once, its
    /// output written once; the first step counts its three Catmull-Clark
    /// kernels as one, data only), and the wall time of the whole eval
    /// (upload, kernels, readback).
    ///
    /// # Errors
    /// As [`EdgeFriendGpuPlan::try_eval`].
    pub fn profile_eval(&self, control: ArrayView2<'_, f32>) -> Result<(Array2<f32>, EvalProfile), GpuError> {
        let (lens, stages) = self.stages();
        if stages.is_empty() {
            return Ok((control.to_owned(), EvalProfile { kernels: Vec::new(), wall_seconds: 0.0 }));
        }
        let mut timer = PassTimer::new(&self.ctx, stages.len() as u32 + 2)?;
        let start = std::time::Instant::now();
        let mut y = Array2::zeros((lens[lens.len() - 1], control.ncols()));
        self.eval_timed(control, y.view_mut(), Some(&mut timer))?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let times = timer.read(&self.ctx)?;
        let d = control.ncols() as u64;
        let data = |rows: usize| 4 * rows as u64 * d;
        let kernels = stages
            .iter()
            .enumerate()
            .map(|(s, stage)| {
                let arrays = match *stage {
                    Stage::First => 0,
                    Stage::Permute | Stage::Scatter => 8 * lens[s + 1] as u64,
                    Stage::Gather => 8 * lens[s] as u64,
                    Stage::Points(i) => {
                        let (l, next) = (&self.levels[i], &self.levels[i + 1]);
                        let sharp = |b: &Option<GpuBuffer<f32>>| b.as_ref().map_or(0, GpuBuffer::byte_len);
                        l.quads.byte_len()
                            + l.friends.byte_len()
                            + l.loop_start.byte_len()
                            + sharp(&l.sharp)
                            + sharp(&l.vsharp)
                            + sharp(&next.sharp)
                    }
                };
                // The first step's three kernels are labelled by the
                // Catmull-Clark kernels ("0 face_points", …).
                let label = format!("{s} ");
                let timed: Vec<f64> = times.iter().filter(|t| t.label.starts_with(&label)).map(|t| t.seconds).collect();
                KernelProfile {
                    level: s as u32,
                    kernel: stage.name(),
                    seconds: (!timed.is_empty()).then(|| timed.iter().sum()),
                    bytes: arrays + data(lens[s]) + data(lens[s + 1]),
                }
            })
            .collect();
        Ok((y, EvalProfile { kernels, wall_seconds }))
    }

    fn eval_timed(
        &self,
        control: ArrayView2<'_, f32>,
        out: ArrayViewMut2<'_, f32>,
        mut timer: Option<&mut PassTimer>,
    ) -> Result<(), GpuError> {
        let ctx: &GpuContext = &self.ctx;
        let (lens, stages) = self.stages();
        let d = control.ncols() as u32;
        let k = &self.kernels;
        self.chain.run_into(ctx, NAME, &lens, control, out, |encoder, s, x, y| {
            let label = format!("{s} {}", stages[s].name());
            match stages[s] {
                Stage::First => {
                    let (first, _, _) = self.first.as_ref().ok_or_else(|| internal("first step"))?;
                    // Labelled "0 face_points" and so on.
                    k.first.record_level(ctx, encoder, first, x, y, d, timer.as_deref_mut().map(|t| (t, s as u32)))
                }
                Stage::Permute | Stage::Scatter | Stage::Gather => {
                    let l = if matches!(stages[s], Stage::Gather) { self.levels.last() } else { self.levels.first() };
                    let l = l.ok_or_else(|| internal("level"))?;
                    let (flags, offsets) = match (stages[s], &self.first) {
                        (Stage::Permute, Some((_, flags, rows))) => (flags, rows),
                        _ => {
                            let (f, o) = l.real.as_ref().ok_or_else(|| internal("real vertices"))?;
                            (f, o)
                        }
                    };
                    let params = uniform(ctx, "edge-friend params", &[0, l.nv, d, 0]);
                    let table = [
                        Some(&params),
                        None,
                        Some(offsets.as_wgpu()),
                        Some(flags.as_wgpu()),
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        Some(x),
                        Some(y),
                    ];
                    let kernel = if matches!(stages[s], Stage::Gather) { &k.gather } else { &k.scatter };
                    let writes = timer.as_deref_mut().and_then(|t| t.writes(label));
                    multi::dispatch_timed(ctx, encoder, kernel, &table, u64::from(l.nv), writes)
                }
                Stage::Points(i) => {
                    let (l, next) = (&self.levels[i], &self.levels[i + 1]);
                    let params = uniform(ctx, "edge-friend params", &[l.nq, l.nv, d, self.flags]);
                    let table = [
                        Some(&params),
                        Some(l.quads.as_wgpu()),
                        Some(l.friends.as_wgpu()),
                        Some(l.loop_start.as_wgpu()),
                        Some(or_dummy(&l.sharp, &self.dummy)),
                        Some(or_dummy(&l.vsharp, &self.dummy)),
                        None,
                        None,
                        None,
                        None,
                        None,
                        Some(or_dummy(&next.sharp, &self.dummy)),
                        Some(x),
                        Some(y),
                    ];
                    let writes = timer.as_deref_mut().and_then(|t| t.writes(label));
                    multi::dispatch_timed(ctx, encoder, &k.points, &table, u64::from(l.nq.max(l.nv)), writes)
                }
            }
        })
    }

    /// The same refinement on the CPU (built on first use): what
    /// `refined`, `operator`, `limit` and the faces of other levels than
    /// the finest come from.
    ///
    /// # Errors
    /// The CPU build's.
    pub fn cpu(&self, par: Par) -> Result<&EdgeFriendPlan> {
        subla_scheme::get_or_try_init(&self.cpu, || {
            let m = &self.mirror;
            let mut p = CatmarkEdgeFriend::strict().build(&m.mesh, m.levels, par)?;
            for _ in 0..m.steps {
                p = CatmarkEdgeFriend::strict().step(p, par)?;
            }
            Ok(p)
        })
    }

    /// Bytes of the plan's device buffers.
    pub fn device_bytes(&self) -> u64 {
        self.levels.iter().map(DeviceLevel::bytes).sum::<u64>()
            + self.first.as_ref().map_or(0, |(s, f, r)| s.bytes() + 4 * (f.len() + r.len()) as u64)
    }

    /// The finest level's faces, read back.
    fn finest_faces(&self) -> Result<&(Vec<u32>, Vec<bool>)> {
        subla_scheme::get_or_try_init(&self.faces, || {
            let ctx: &GpuContext = &self.ctx;
            let l = self.levels.last().ok_or_else(|| device(internal("level")))?;
            let nq = l.real_quads as usize;
            let mut verts = l.quads.download(ctx).map_err(device)?;
            verts.truncate(4 * nq);
            if let Some((_, offsets)) = &l.real {
                let map = offsets.download(ctx).map_err(device)?;
                for v in &mut verts {
                    *v = map[*v as usize];
                }
            }
            // Holes: as the CPU plan has them (the device does not keep
            // them); only meshes with holes build it.
            let holes = if self.mirror.mesh.has_holes() {
                self.cpu(Par::Rayon)?.faces(self.levels(), Par::Rayon)?.holes().to_vec()
            } else {
                vec![false; nq]
            };
            Ok((verts, holes))
        })
    }
}

fn encoder(ctx: &GpuContext) -> wgpu::CommandEncoder {
    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(NAME) })
}

fn internal(what: &str) -> GpuError {
    GpuError::Internal { operation: NAME, message: format!("missing {what}") }
}

impl Plan for EdgeFriendGpuPlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        (self.lens.len() - 1) as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.lens.get(level as usize).copied().unwrap_or(0)
    }
    /// The device computes in `f32`: refused with
    /// [`SchemeError::Precision`], or (with [`FallbackPolicy::Cpu`])
    /// evaluated on the CPU plan in `f64`.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        subla_scheme::check_eval_shapes(self, NAME, control.dim(), out.dim());
        self.fallback.other_precision("f64", "f32", || self.cpu(par)?.eval_f64(control, out, par))
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        subla_scheme::check_eval_shapes(self, NAME, control.dim(), out.dim());
        let on_device = self.try_eval_into(control, out.view_mut());
        self.fallback.on_device(on_device, || self.cpu(par)?.eval_f32(control, out.view_mut(), par))?;
        Ok(())
    }
    fn last_fallback(&self) -> Option<Fallback> {
        self.fallback.last()
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        self.cpu(par)?.operator(level, par)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        self.cpu(par)?.limit(par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.cpu(par)?.refined(level, par)
    }
    /// The finest level's faces are read back from the device (once);
    /// other levels' come from the CPU plan.
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        if level > self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        if level < self.levels() || self.levels.is_empty() {
            return self.cpu(par)?.faces(level, par);
        }
        let (verts, holes) = self.finest_faces()?;
        Ok(Faces::uniform(self.lens[level as usize], 4, verts, holes))
    }
}
