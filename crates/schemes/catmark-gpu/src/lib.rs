//! Catmull-Clark subdivision evaluated on the GPU (wgpu), behind the same
//! [`Refiner`] / [`Plan`] traits as the CPU path
//! ([`subla_catmark::CatmarkSlak`]).
//!
//! The kernels are the SLAK gathers of Mlakar et al. 2020 (§4, §5) written
//! in WGSL, one file each in this crate's `shaders/` folder ([`shaders`]):
//!
//! | shader | entry point | writes |
//! |---|---|---|
//! | `catmark_face_points.wgsl` | `face_points` | one face point per parent face (centroid) |
//! | `catmark_edge_points.wgsl` | `edge_points` | one edge point per parent edge: `β Σ face points + α (a + b)`, smooth or special mask |
//! | `catmark_vertex_points.wgsl` | `vertex_points` | one vertex point per parent vertex: smooth mask (Eq. 11) or special mask (crease, corner, boundary, transition) |
//!
//! [`CatmarkEdgeFriendGpu`] ([`edgefriend`], `edge_friend.wgsl`) runs the
//! edge-friend encoding (Kuth et al. 2023) instead: one dispatch per level
//! for the connectivity and one for the points, no atomics, the same points
//! in the same order as [`subla_catmark::CatmarkEdgeFriend`].
//!
//! # What runs where
//! * **Build, on the GPU** ([`TopologySite::Auto`], the default, and
//!   [`TopologySite::Device`]): the host validates the control mesh and
//!   prepares its effective sharpness (as [`subla_catmark::CatmarkSlak`]
//!   does) and uploads its faces, sharpness and holes once; the device
//!   rebuilds the connectivity from the faces ([`topology`]: valences,
//!   offsets, the edge enumeration; one 8-byte readback sizes the edge
//!   arrays) and then makes every level with nothing read back — the quad split ([`split`]), then
//!   `catmark_masks.wgsl`: the faces of edge uses and vertex corners, the
//!   vertex neighbours, the edge and vertex masks (Sdc's rules: creases,
//!   corners, darts, semi-sharp transitions, both crease methods, smooth
//!   triangles), the child's sharpness and holes. [`Refiner::step`]
//!   (modeling mode) starts the new one-level plan from the finest level
//!   still on the device.
//! * **Build, on the CPU** ([`TopologySite::Host`], and `Auto` for a control
//!   mesh the device split does not take: non-manifold, or a face of more
//!   than [`split::MAX_FACE_ORDER`] vertices): [`subla_catmark::CatmarkSlak`]'s
//!   build, uploaded once ([`CatmarkGpu::upload`]).
//! * **Eval, on the GPU:** [`CatmarkGpuPlan::try_eval`] (and the [`Plan`]
//!   eval methods) uploads the control data once, runs face, edge and
//!   vertex points for every level with the levels chained on the device
//!   (intermediate levels never come back; two scratch buffers are reused
//!   in turn), and reads the finest level back once.
//! * **Only on request:** [`Plan::faces`] of a device-built plan reads that
//!   level's faces back on the first call and keeps them; [`Plan::operator`],
//!   [`Plan::limit`] and [`Plan::refined`] come from the CPU plan
//!   ([`CatmarkGpuPlan::cpu`], built on the first call for a device-built
//!   plan).
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
//! | `edge_masks` | `2 (1 + s_e)` | `(α, β)`: entry 0 the smooth `(¼, ¼)`, then the `s_e` special masks in edge order (built on the device: entry `e + 1` for edge `e`, `s_e = ne`) |
//! | `vertex_corner_ptr`, `vertex_faces` | `nv + 1`, `nc` | the face of each corner of each vertex, in corner order |
//! | `vertex_edge_ptr`, `vertex_nbrs` | `nv + 1`, `2 ne` | the other endpoint of each edge at each vertex, in edge order |
//! | `vertex_mask` | `nv` | each vertex's entry in `vertex_masks` |
//! | `vertex_masks` | `5 (V + 1 + s_v)` | `(cv, cs / n², ce, u_a, u_b)`: entries `0..=V` the smooth masks of valence `0..=V`, then the `s_v` special masks in vertex order (built on the device: entry `V + 1 + v` for vertex `v`, `s_v = nv`) |
//!
//! The masks are a dense per-element index (4 bytes per edge and per
//! vertex) into a table: smooth elements share one entry, special ones
//! (boundary, crease, semi-sharp, corner, non-manifold, smooth triangles,
//! rule transitions) have their own. A host build keeps the table compact
//! and computes weights in `f64`, rounded to `f32` as the CPU kernel rounds
//! them; a device build reserves one slot per element (no count to read
//! back) and computes the special weights in `f32`, so they may differ from
//! the host's in the last bit.
//! Empty arrays hold one padding element. [`CatmarkGpuPlan::device_bytes`]
//! gives the total.
//!
//! # Precision and determinism
//! The GPU computes in `f32`. [`Plan::eval_f32`] agrees with the CPU plan's
//! `f32` eval to rounding: both use the same `f32` weights (rounded from
//! `f64` on the host exactly as the CPU kernel rounds them; to the last bit
//! for device-built special masks) and the same
//! summation order (face terms, then neighbours or endpoints, then crease
//! ends, then the vertex itself), but a driver may fuse `acc + w · x` into
//! one multiply-add, and the CPU kernel takes a shortcut order on quad
//! levels. There is no `f64` path on the device (see below). Each output
//! row is written by one invocation (gathers, no float
//! atomics) in a fixed order, so repeated runs on one device give bitwise
//! identical results.
//!
//! # Errors and the CPU fallback
//! [`CatmarkGpuPlan::try_eval`] returns every device failure as a
//! [`GpuError`]; [`Plan::eval_f32`] returns it as [`SchemeError::Device`]
//! (the [`GpuError`] is its source). The device computes in `f32`, so
//! [`Plan::eval_f64`] is refused with [`SchemeError::Precision`]. A refiner
//! made with [`FallbackPolicy::Cpu`] ([`CatmarkGpu::with_fallback`])
//! evaluates on the CPU plan instead, in the precision asked for, and its
//! plans say so ([`Plan::last_fallback`]); nothing falls back silently.
//! [`Refiner::build`] and [`Refiner::step`] report device failures as
//! [`SchemeError::Device`], and a control mesh [`TopologySite::Device`]
//! cannot refine as [`SchemeError::NotManifold`] or
//! [`SchemeError::FaceTooLarge`]; [`CatmarkGpu::upload`] gives the
//! [`GpuError`] itself.
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
//! let fine = plan.try_eval(control.view())?; // on the device, or the GpuError
//! let same = eval(&plan, control.view(), Par::Rayon)?; // on the device, or SchemeError::Device
//! # let _ = (fine, same); Ok(()) }
//! ```
#![deny(missing_docs)]

mod build;
mod device;
pub mod edgefriend;
mod kernels;
mod multi;
pub mod split;
pub use subla_gpu::topology;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

pub use edgefriend::{CatmarkEdgeFriendGpu, EdgeFriendGpuPlan};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use subla_algebra::{CsrMat, Par};
use subla_catmark::{CatmarkPlan, CatmarkSlak};
use subla_gpu::program::{ContextRef as Ctx, LevelChain};
use subla_gpu::timing::PassTimer;
pub use subla_gpu::timing::{EvalProfile, KernelProfile};
use subla_gpu::{GpuBuffer, GpuContext, GpuError};
use subla_mesh::Mesh;
use subla_scheme::{Faces, Fallback, FallbackPolicy, FallbackState, Plan, Refiner, Result, SchemeError};

use crate::build::{BuildKernels, DeviceLevel, HostFaces};
use crate::device::StepBuffers;
use crate::kernels::Kernels;

/// The WGSL kernels of this crate (its `shaders/` folder), compiled in
/// with `include_str!`, and the device topology build it runs (of
/// `subla-gpu`).
pub mod shaders {
    /// `catmark_face_points.wgsl`: face points (centroids), entry point
    /// `face_points`.
    pub const FACE_POINTS: &str = include_str!("../shaders/catmark_face_points.wgsl");
    /// `catmark_edge_points.wgsl`: edge points, entry point `edge_points`.
    pub const EDGE_POINTS: &str = include_str!("../shaders/catmark_edge_points.wgsl");
    /// `catmark_vertex_points.wgsl`: vertex points, entry point
    /// `vertex_points`.
    pub const VERTEX_POINTS: &str = include_str!("../shaders/catmark_vertex_points.wgsl");
    /// `catmark_masks.wgsl`: the device build pass (masks, rings, child
    /// sharpness and holes), several entry points.
    pub const MASKS: &str = crate::build::MASKS;
    /// `quad_split.wgsl`: the quad split, several entry points.
    pub const QUAD_SPLIT: &str = crate::split::QUAD_SPLIT;
    /// `topology_build.wgsl` (`subla-gpu`'s, [`subla_gpu::topology`]): the
    /// control mesh's connectivity from its faces, several entry points.
    pub const TOPOLOGY_BUILD: &str = crate::topology::TOPOLOGY_BUILD;
    /// `edge_friend.wgsl`: Catmull-Clark on the edge-friend encoding
    /// ([`crate::edgefriend`]), several entry points.
    pub const EDGE_FRIEND: &str = crate::edgefriend::EDGE_FRIEND;
    /// Every kernel as `(file name, source)`.
    pub const ALL: [(&str, &str); 7] = [
        ("catmark_face_points.wgsl", FACE_POINTS),
        ("catmark_edge_points.wgsl", EDGE_POINTS),
        ("catmark_vertex_points.wgsl", VERTEX_POINTS),
        ("catmark_masks.wgsl", MASKS),
        ("quad_split.wgsl", QUAD_SPLIT),
        ("topology_build.wgsl", TOPOLOGY_BUILD),
        ("edge_friend.wgsl", EDGE_FRIEND),
    ];
}

/// Where [`Refiner::build`] refines the topology and prepares the masks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TopologySite {
    /// On the device when the prepared control mesh is manifold with faces
    /// of at most [`split::MAX_FACE_ORDER`] vertices; otherwise on the CPU,
    /// uploaded once.
    #[default]
    Auto,
    /// On the device; other control meshes are refused
    /// ([`SchemeError::NotManifold`], [`SchemeError::FaceTooLarge`]).
    Device,
    /// On the CPU ([`CatmarkSlak`]), uploaded once ([`CatmarkGpu::upload`]).
    Host,
}

/// Catmull-Clark on the GPU: builds [`CatmarkGpuPlan`]s.
///
/// Holds a [`GpuContext`], the [`TopologySite`] of its builds, and the
/// compute pipelines, compiled on first use and shared by every plan built
/// from this refiner.
#[derive(Debug)]
pub struct CatmarkGpu {
    ctx: Ctx,
    site: TopologySite,
    fallback: FallbackPolicy,
    kernels: Mutex<Option<Arc<Kernels>>>,
}

impl CatmarkGpu {
    /// A refiner on a context that lives for the whole program (such as
    /// the one `subla_gpu::testing::context_or_skip` hands out, or a leaked
    /// one).
    pub fn new(ctx: &'static GpuContext) -> Self {
        CatmarkGpu {
            ctx: Ctx::Static(ctx),
            site: TopologySite::Auto,
            fallback: FallbackPolicy::Never,
            kernels: Mutex::new(None),
        }
    }

    /// A refiner on a shared context.
    pub fn shared(ctx: Arc<GpuContext>) -> Self {
        CatmarkGpu {
            ctx: Ctx::Shared(ctx),
            site: TopologySite::Auto,
            fallback: FallbackPolicy::Never,
            kernels: Mutex::new(None),
        }
    }

    /// The same refiner building its topology at `site`.
    pub fn with_topology_site(mut self, site: TopologySite) -> Self {
        self.site = site;
        self
    }

    /// Where builds refine the topology.
    pub fn topology_site(&self) -> TopologySite {
        self.site
    }

    /// The same refiner, whose plans do `policy` when the device cannot
    /// evaluate (a device failure, or `f64` asked for):
    /// [`FallbackPolicy::Never`] (the default) returns the error,
    /// [`FallbackPolicy::Cpu`] evaluates on the CPU plan and says so
    /// ([`Plan::last_fallback`]).
    pub fn with_fallback(mut self, policy: FallbackPolicy) -> Self {
        self.fallback = policy;
        self
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
    /// [`Refiner::build`] does with [`TopologySite::Host`]), reporting
    /// device failures as they are.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] when an array exceeds a device limit or the
    /// kernels' `u32` indices; shader, validation and device errors.
    pub fn upload(&self, cpu: CatmarkPlan) -> Result<CatmarkGpuPlan, GpuError> {
        let kernels = self.kernels()?;
        let steps = upload_steps(&self.ctx, &cpu)?;
        let lens = (0..=cpu.levels()).map(|l| cpu.level_len(l)).collect();
        Ok(CatmarkGpuPlan {
            ctx: self.ctx.clone(),
            kernels,
            steps,
            lens,
            source: Source::Host(Box::new(cpu)),
            frame: LevelChain::new(),
            fallback: FallbackState::new(NAME, self.fallback),
        })
    }

    /// Builds `levels` levels on the device from a control mesh prepared
    /// on the host (`base`, effective sharpness), reporting device failures
    /// as they are.
    fn build_on_device(&self, base: Mesh, levels: u32) -> Result<CatmarkGpuPlan, GpuError> {
        let kernels = self.kernels()?;
        let build = kernels.build(&self.ctx)?;
        let finest = DeviceLevel::upload(&self.ctx, &build, &base)?;
        let mut plan = CatmarkGpuPlan {
            ctx: self.ctx.clone(),
            kernels,
            steps: Vec::new(),
            lens: vec![base.topology().num_vertices()],
            source: Source::Device(Box::new(DeviceBuilt {
                base: Base::Host(base),
                levels: Vec::new(),
                finest: Some(finest),
                faces: vec![OnceLock::new()],
                cpu: OnceLock::new(),
            })),
            frame: LevelChain::new(),
            fallback: FallbackState::new(NAME, self.fallback),
        };
        for _ in 0..levels {
            plan.device_step(&build)?;
        }
        Ok(plan)
    }
}

/// Uploads every step of `cpu` (a [`CatmarkPlan`] keeps every level
/// below its finest in full, so no step's parent is derived).
fn upload_steps(ctx: &GpuContext, cpu: &CatmarkPlan) -> Result<Vec<StepBuffers>, GpuError> {
    (0..cpu.levels())
        .map(|l| match subla_catmark::StepView::of(cpu, l, Par::Seq) {
            Ok(view) => StepBuffers::upload(ctx, &view),
            Err(e) => Err(GpuError::Internal {
                operation: "catmark-gpu upload",
                message: format!("step {l} of a CPU plan of {} levels: {e}", cpu.levels()),
            }),
        })
        .collect()
}

/// The scheme's name in errors.
const NAME: &str = "catmark-gpu";

/// A device failure, as the [`Refiner`] and [`Plan`] traits report it.
fn scheme_error(e: GpuError) -> SchemeError {
    SchemeError::device(NAME, e)
}

/// Why the device cannot refine `base`, if it cannot.
fn device_refusal(base: &Mesh) -> Option<SchemeError> {
    let t = base.topology();
    if !t.is_manifold() {
        return Some(subla_scheme::not_manifold(NAME, t));
    }
    let max = split::MAX_FACE_ORDER as usize;
    (0..t.num_faces()).find(|&f| t.face_order(f) > max).map(|face| SchemeError::FaceTooLarge {
        scheme: NAME,
        face,
        order: t.face_order(face),
        max,
    })
}

impl Refiner for CatmarkGpu {
    type Input = Mesh;
    type Plan = CatmarkGpuPlan;
    fn name(&self) -> &'static str {
        "catmark-gpu"
    }
    /// Prepares the control mesh on the host (validation, effective
    /// sharpness: [`CatmarkSlak`] with zero levels), then refines every
    /// level on the device ([`TopologySite::Auto`] and
    /// [`TopologySite::Device`]); or runs [`CatmarkSlak`]'s whole build and
    /// uploads it ([`TopologySite::Host`], and `Auto` for control meshes
    /// the device does not refine).
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<CatmarkGpuPlan> {
        // Refused from the counts before anything is built or uploaded.
        CatmarkSlak.predict(input, levels)?;
        if self.site == TopologySite::Host {
            let cpu = CatmarkSlak.build(input, levels, par)?;
            return self.upload(cpu).map_err(scheme_error);
        }
        let base = CatmarkSlak.build(input, 0, par)?;
        let base = base.refined(0, par)?.clone();
        match device_refusal(&base) {
            None => self.build_on_device(base, levels).map_err(scheme_error),
            Some(refusal) if self.site == TopologySite::Device => Err(refusal),
            Some(_) => {
                let cpu = CatmarkSlak.build(input, levels, par)?;
                self.upload(cpu).map_err(scheme_error)
            }
        }
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<subla_scheme::Prediction>> {
        CatmarkSlak.predict(input, levels)
    }
    /// One more level, where the plan's topology lives: on the device for
    /// device-built plans, else the CPU step of [`CatmarkSlak`] followed
    /// by an upload.
    fn step(&self, plan: CatmarkGpuPlan, par: Par) -> Result<CatmarkGpuPlan> {
        let CatmarkGpuPlan { ctx, kernels, steps, source, fallback, .. } = plan;
        let fallback = fallback.policy();
        match source {
            Source::Host(cpu) => {
                drop(steps);
                let cpu = CatmarkSlak.step(*cpu, par)?;
                let steps = upload_steps(&ctx, &cpu).map_err(scheme_error)?;
                let lens = (0..=cpu.levels()).map(|l| cpu.level_len(l)).collect();
                Ok(CatmarkGpuPlan {
                    ctx,
                    kernels,
                    steps,
                    lens,
                    source: Source::Host(Box::new(cpu)),
                    frame: LevelChain::new(),
                    fallback: FallbackState::new(NAME, fallback),
                })
            }
            Source::Device(built) => {
                // As on the CPU: a plan of one level over the finest level.
                drop(steps);
                let DeviceBuilt { finest, .. } = *built;
                let finest = finest.ok_or_else(|| scheme_error(missing("finest level")))?;
                let rows = finest.topo.num_vertices();
                let mut plan = CatmarkGpuPlan {
                    ctx,
                    kernels,
                    steps: Vec::with_capacity(1),
                    lens: vec![rows],
                    source: Source::Device(Box::new(DeviceBuilt {
                        base: Base::Device { level: Box::new(finest), mesh: OnceLock::new() },
                        levels: Vec::new(),
                        finest: None,
                        faces: vec![OnceLock::new()],
                        cpu: OnceLock::new(),
                    })),
                    frame: LevelChain::new(),
                    fallback: FallbackState::new(NAME, fallback),
                };
                let build = plan.kernels.build(&plan.ctx).map_err(scheme_error)?;
                plan.device_step(&build).map_err(scheme_error)?;
                Ok(plan)
            }
        }
    }
}

/// The faces of one device-built level, on the device.
#[derive(Debug)]
struct LevelFaces {
    face_ptr: GpuBuffer<u32>,
    face_verts: GpuBuffer<u32>,
    holes: Option<GpuBuffer<u32>>,
}

/// Level 0 of a device-built plan.
#[derive(Debug)]
enum Base {
    /// A control mesh prepared on the host.
    Host(Mesh),
    /// The finest level of an earlier device-built plan (modeling mode),
    /// kept whole on the device; read back into a mesh on demand.
    Device { level: Box<DeviceLevel>, mesh: OnceLock<Mesh> },
}

/// What a device-built plan keeps besides its steps.
#[derive(Debug)]
struct DeviceBuilt {
    /// Level 0.
    base: Base,
    /// The faces of levels `1..levels` on the device (the finest level's
    /// are in `finest`).
    levels: Vec<LevelFaces>,
    /// The finest level on the device (for the next step and its faces);
    /// `None` only while a step runs.
    finest: Option<DeviceLevel>,
    /// The faces of levels `0..=levels` once read back (entry 0 used for a
    /// device base only).
    faces: Vec<OnceLock<HostFaces>>,
    /// The CPU plan of the same levels, built on first use (operators,
    /// limit, full meshes, and the eval fallback).
    cpu: OnceLock<CatmarkPlan>,
}

/// Where a plan's topology was built.
#[derive(Debug)]
enum Source {
    /// On the CPU, then uploaded.
    Host(Box<CatmarkPlan>),
    /// On the device.
    Device(Box<DeviceBuilt>),
}

/// A built Catmull-Clark refinement whose eval runs on the GPU.
///
/// Keeps the device copy of every step's connectivity and masks, the
/// context and the pipelines, and either the CPU plan it was uploaded from
/// or (built on the device) the finest level on the device and the control
/// mesh. `Send + Sync`: evals may run from several threads at once (each
/// with its own data buffers).
#[derive(Debug)]
pub struct CatmarkGpuPlan {
    ctx: Ctx,
    kernels: Arc<Kernels>,
    steps: Vec<StepBuffers>,
    /// Rows of each level `0..=levels`.
    lens: Vec<usize>,
    source: Source,
    /// The data buffers of the last eval, reused by the next one with the
    /// same channel count (per-frame evaluation allocates nothing).
    frame: LevelChain,
    /// What eval does when the device cannot evaluate, and where the last
    /// eval ran.
    fallback: FallbackState,
}

impl CatmarkGpuPlan {
    /// Where the topology of this plan was built: [`TopologySite::Device`]
    /// or [`TopologySite::Host`].
    pub fn topology_site(&self) -> TopologySite {
        match self.source {
            Source::Host(_) => TopologySite::Host,
            Source::Device(_) => TopologySite::Device,
        }
    }

    /// The CPU plan of the same levels: the one uploaded, or (for a plan
    /// built on the device) a [`CatmarkSlak`] build made on the first call
    /// (with `par`) and kept.
    ///
    /// # Errors
    /// The CPU build's errors (over budget, for example), or the device's
    /// in reading back a level 0 kept on the device; a later call tries
    /// again.
    pub fn cpu(&self, par: Par) -> Result<&CatmarkPlan, SchemeError> {
        match &self.source {
            Source::Host(cpu) => Ok(cpu),
            Source::Device(built) => {
                if let Some(cpu) = built.cpu.get() {
                    return Ok(cpu);
                }
                // Errors are not kept: a later call tries again.
                let base = match &built.base {
                    Base::Host(mesh) => mesh.clone(),
                    Base::Device { level, mesh } => match mesh.get() {
                        Some(m) => m.clone(),
                        None => {
                            let m = level.download(&self.ctx).map_err(scheme_error)?;
                            mesh.get_or_init(|| m).clone()
                        }
                    },
                };
                let cpu =
                    CatmarkPlan::from_prepared(subla_catmark::CatmarkRules, base, 0, self.steps.len() as u32, par)?;
                Ok(built.cpu.get_or_init(|| cpu))
            }
        }
    }

    /// The context the plan evaluates on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Bytes of connectivity and masks held on the device for eval (all
    /// steps); a device-built plan also keeps its finest level's topology.
    pub fn device_bytes(&self) -> u64 {
        self.steps.iter().map(StepBuffers::bytes).sum()
    }

    /// One level more on the device (device-built plans only).
    fn device_step(&mut self, build: &BuildKernels) -> Result<(), GpuError> {
        let Source::Device(built) = &mut self.source else {
            return Err(GpuError::Internal {
                operation: "catmark-gpu step",
                message: "the plan was built on the host".into(),
            });
        };
        let (step, child) = match (&built.base, built.finest.take()) {
            (Base::Device { level, .. }, None) if self.steps.is_empty() => build::step(&self.ctx, build, level)?,
            (_, Some(parent)) => {
                let out = build::step(&self.ctx, build, &parent)?;
                // The parent's topology goes, its faces stay for `faces`.
                if !self.steps.is_empty() {
                    built.levels.push(LevelFaces {
                        face_ptr: parent.topo.buffer("face_ptr").map(GpuBuffer::share).ok_or(missing("face_ptr"))?,
                        face_verts: parent
                            .topo
                            .buffer("face_verts")
                            .map(GpuBuffer::share)
                            .ok_or(missing("face_verts"))?,
                        holes: parent.holes.as_ref().map(GpuBuffer::share),
                    });
                }
                out
            }
            _ => return Err(missing("finest level")),
        };
        let rows = child.topo.num_vertices();
        built.finest = Some(child);
        built.faces.push(OnceLock::new());
        built.cpu = OnceLock::new();
        self.steps.push(step);
        self.lens.push(rows);
        self.frame.clear();
        Ok(())
    }

    /// The faces of device level `level`, read back on first use.
    fn device_faces<'a>(&'a self, built: &'a DeviceBuilt, level: usize) -> Result<&'a HostFaces> {
        let read = || -> Result<HostFaces, GpuError> {
            let (face_ptr, face_verts, holes) = if level == 0 {
                let Base::Device { level, .. } = &built.base else { return Err(missing("level 0 faces")) };
                (
                    level.topo.buffer("face_ptr").ok_or(missing("face_ptr"))?,
                    level.topo.buffer("face_verts").ok_or(missing("face_verts"))?,
                    level.holes.as_ref(),
                )
            } else if level == self.steps.len() {
                let finest = built.finest.as_ref().ok_or(missing("finest level"))?;
                (
                    finest.topo.buffer("face_ptr").ok_or(missing("face_ptr"))?,
                    finest.topo.buffer("face_verts").ok_or(missing("face_verts"))?,
                    finest.holes.as_ref(),
                )
            } else {
                let l = built.levels.get(level - 1).ok_or(missing("level faces"))?;
                (&l.face_ptr, &l.face_verts, l.holes.as_ref())
            };
            build::download_faces(&self.ctx, face_ptr, face_verts, holes)
        };
        let cell =
            built.faces.get(level).ok_or(SchemeError::NoSuchLevel { level: level as u32, levels: self.levels() })?;
        subla_scheme::get_or_try_init(cell, || read().map_err(scheme_error))
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
        let mut out = Array2::zeros((self.output_len(), control.ncols()));
        self.eval_timed(control, out.view_mut(), None)?;
        Ok(out)
    }

    /// [`CatmarkGpuPlan::try_eval`] into `out` (`output_len() × d`): a frame
    /// loop that passes the same `out` every frame allocates nothing on
    /// the host or the device.
    ///
    /// # Panics
    /// If `control` does not have `input_len()` rows or `out` is not
    /// `output_len() × d`.
    ///
    /// # Errors
    /// As [`CatmarkGpuPlan::try_eval`].
    #[track_caller]
    pub fn try_eval_into(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>) -> Result<(), GpuError> {
        self.eval_timed(control, out, None)
    }

    /// [`CatmarkGpuPlan::try_eval`], timed: the result with the GPU time of
    /// every kernel of every level (timestamp queries, where the adapter
    /// has them), the bytes each kernel must move at least (every array it
    /// reads once, its output once), and the wall time of the whole eval
    /// (upload, kernels, readback).
    ///
    /// # Panics
    /// As [`CatmarkGpuPlan::try_eval`].
    ///
    /// # Errors
    /// As [`CatmarkGpuPlan::try_eval`].
    #[track_caller]
    pub fn profile_eval(&self, control: ArrayView2<'_, f32>) -> Result<(Array2<f32>, EvalProfile), GpuError> {
        let levels = self.steps.len() as u32;
        let mut timer = PassTimer::new(&self.ctx, 3 * levels.max(1))?;
        let start = std::time::Instant::now();
        let mut y = Array2::zeros((self.output_len(), control.ncols()));
        self.eval_timed(control, y.view_mut(), Some(&mut timer))?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let times = timer.read(&self.ctx)?;
        let d = control.ncols() as u64;
        let mut kernels = Vec::with_capacity(3 * self.steps.len());
        for (l, s) in self.steps.iter().enumerate() {
            let (nv, nf, ne) = (u64::from(s.nv), u64::from(s.nf), u64::from(s.ne));
            // Corners = edge uses = vertex corners.
            let nc = s.face_verts.size() / 4;
            let nc = if nf == 0 { 0 } else { nc };
            let data = |rows: u64| 4 * rows * d;
            let bytes = [
                // Quad levels read no face_ptr (the §4.4 fast path).
                ("face_points", if s.quads { 0 } else { 4 * (nf + 1) } + 4 * nc + data(nv) + data(nf)),
                ("edge_points", 8 * ne + 4 * (ne + 1) + 4 * nc + 4 * ne + data(nv) + data(nf) + data(ne)),
                ("vertex_points", 8 * (nv + 1) + 4 * nc + 8 * ne + 4 * nv + data(nv) + data(nf) + data(nv)),
            ];
            for (kernel, bytes) in bytes {
                let label = format!("{l} {kernel}");
                let seconds = times.iter().find(|t| t.label == label).map(|t| t.seconds);
                kernels.push(KernelProfile { level: l as u32, kernel, seconds, bytes });
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
    ) -> Result<(), GpuError> {
        assert_eq!(
            control.nrows(),
            self.input_len(),
            "catmark-gpu eval: control has {} rows, the plan needs {}",
            control.nrows(),
            self.input_len()
        );
        let ctx: &GpuContext = &self.ctx;
        let channels = control.ncols() as u32;
        self.frame.run_into(ctx, "catmark-gpu eval", &self.lens, control, out, |encoder, l, x, y| {
            let timer = timer.as_deref_mut().map(|t| (t, l as u32));
            self.kernels.record_level(ctx, encoder, &self.steps[l], x, y, channels, timer)
        })
    }

    /// What the plan does when the device cannot evaluate.
    pub fn fallback_policy(&self) -> FallbackPolicy {
        self.fallback.policy()
    }
}

fn missing(what: &str) -> GpuError {
    GpuError::Internal { operation: "catmark-gpu", message: format!("missing device array {what}") }
}

impl Plan for CatmarkGpuPlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.lens
            .get(level as usize)
            .copied()
            .unwrap_or_else(|| panic!("catmark-gpu: level {level} of a plan of {} levels", self.steps.len()))
    }
    /// The device computes in `f32`: refused with
    /// [`SchemeError::Precision`], or (with [`FallbackPolicy::Cpu`])
    /// evaluated on the CPU plan in `f64`.
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        subla_scheme::check_eval_shapes(self, NAME, control.dim(), out.dim());
        self.fallback.other_precision("f64", "f32", || self.cpu(par)?.eval_f64(control, out, par))
    }
    /// Evaluates on the GPU. A device failure is returned
    /// ([`SchemeError::Device`]), or (with [`FallbackPolicy::Cpu`]) the
    /// CPU plan evaluates instead.
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
    /// The bound of the CPU plan's operator, where that plan exists (it is
    /// not built for a bound).
    fn operator_bound(&self, level: u32) -> Option<u64> {
        match &self.source {
            Source::Host(cpu) => cpu.operator_bound(level),
            Source::Device(built) => built.cpu.get()?.operator_bound(level),
        }
    }
    fn child_point(&self, level: u32, row: usize) -> Option<subla_scheme::ChildPoint> {
        // Quad split numbering: vertices, face points, edge points.
        let vertices = *self.lens.get(level as usize)?;
        let s = self.steps.get(level as usize)?;
        subla_scheme::ChildPoint::of_quad_split(vertices, s.nf as usize, s.ne as usize, row)
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        self.cpu(par)?.limit(par)
    }
    /// The full mesh of `level`, from the CPU plan ([`CatmarkGpuPlan::cpu`],
    /// built on first use for a device-built plan).
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.cpu(par)?.refined(level, par)
    }
    /// The faces of `level`; a device-built plan reads them back from the
    /// device on the first call for each level and keeps them.
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        match &self.source {
            Source::Host(cpu) => cpu.faces(level, par),
            Source::Device(built) => {
                if let (0, Base::Host(mesh)) = (level, &built.base) {
                    return Ok(Faces::of(mesh));
                }
                let num_vertices =
                    *self.lens.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
                let f = self.device_faces(built, level as usize)?;
                Ok(Faces::new(num_vertices, &f.face_ptr, &f.face_verts, &f.holes))
            }
        }
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
