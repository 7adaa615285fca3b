//! The limit surface of a feature-adaptive Catmull-Clark or Loop patch table
//! ([`subla_adaptive::PatchTable`]) evaluated on the GPU: positions and
//! first derivatives of any number of channels at many samples, as
//! OpenSubdiv's GPU evaluators do with a patch table and `PatchCoord`s.
//!
//! # What runs where
//! * **Once per topology** ([`GpuLimit::new`]): the program that computes
//!   the table's points ([`PointPath`]: by default the sparse levels'
//!   stencil rows and the end caps' rows, each entry with the anchors that
//!   keep points as differences from nearby control points; or the
//!   composed point matrix [`PatchTable::point_matrix`] as a load-balanced
//!   CSR matrix, [`subla_gpu::BalancedCsr`]; or the tiles' programs), one
//!   record per patch (the offset of its point indices and OpenSubdiv's
//!   second `PatchParam` word: depth, non-quad root, boundary mask,
//!   origin), the patches' point indices and each point's anchor.
//! * **Once per sample set** ([`GpuLimit::locate`]): the host finds each
//!   sample's patch with [`PatchTable::find`] (in parallel), groups the
//!   samples by patch type and by patch (a stable counting sort), and
//!   uploads `(patch, u, v, output row)` per sample, 16 bytes.
//! * **Per frame** ([`GpuLimit::evaluate`]): one submission of
//!   1. the table's points from the control points: by default one
//!      dispatch per sparse level and one for the end caps
//!      (`level_rows`, [`PointPath::PerLevel`]); with
//!      [`GpuLimit::with_path`], one dispatch in which each workgroup
//!      refines a tile of ptex faces through every level
//!      ([`PointPath::PerTile`], after Tokuyoshi's subtree kernels), or
//!      the SpMV `points = M · control` with the composed matrix
//!      (`spmv_balanced`, and `spmv_fixup` where rows cross workgroups;
//!      [`PointPath::Composed`]);
//!   2. the limit kernels of `shaders/limit.wgsl`, one dispatch per group
//!      of sorted samples: `limit_bspline` (regular patches and B-spline
//!      end caps, 16 points with OpenSubdiv's boundary folds),
//!      `limit_gregory` (Gregory basis end caps, 20 points, OpenSubdiv's
//!      approximate derivatives), `limit_loop` (Loop's quartic box
//!      splines, 12 points with OpenSubdiv's boundary reflections),
//!      `limit_gregory_tri` (triangular Gregory end caps, 18 points),
//!      `limit_holes` (samples no patch covers: NaN, as the CPU evaluation
//!      gives them).
//!
//! # Kernel design
//! One invocation per sample. It reads its sample (one 16-byte load) and
//! its patch's record, normalises `(u, v)` into the patch
//! (`PatchParam::Normalize`), evaluates the basis in registers and, for
//! each group of four channels, reads each of the patch's points once and
//! accumulates position, d/du and d/dv together; then it scales the
//! derivatives by `2^depth` (OpenSubdiv's `PatchTable::EvaluateBasis`) and
//! writes its row of each output once. Because the samples are grouped by
//! patch, the invocations of a workgroup read the same few patches (cache
//! hits; no divergence between patch types except at the two group
//! boundaries), and a sample set laid out face by face (a grid) keeps
//! neighbouring invocations writing neighbouring rows. One entry point per
//! patch type keeps the B-spline path free of the Gregory path's
//! registers.
//!
//! # Precision and determinism
//! The device computes in `f32`: points, weights and sums. Points are kept
//! as differences from nearby control points (their anchors) and the limit
//! kernels sum differences from a patch's first point, so rounding is of
//! the size of a neighbourhood, not of the coordinates: results agree with
//! the CPU `f64` evaluation ([`PatchTable::evaluate`]) to about `1e-7` of
//! the largest position and `1e-6` of the largest derivative at isolation 3
//! (measured on Bigguy and a 100k-quad torus; the composed path, with
//! absolute points, is an order of magnitude looser in the derivatives,
//! and the CPU's own `f32` evaluation looser still). The summation order is fixed and every output
//! element is written by one invocation (no float atomics), so repeated
//! runs on one device give bitwise identical results.
//!
//! # Errors
//! Device failures, exceeded device limits (a binding over
//! `max_storage_buffer_binding_size`, more than `u32` indices) and
//! out-of-memory are [`AdaptiveGpuError::Gpu`] with the
//! [`GpuError`] of `subla-gpu` (`TooLarge` names the limit); a sample on a
//! ptex face that does not exist is [`AdaptiveGpuError::Adaptive`]; a
//! patch type the kernels do not evaluate is
//! [`AdaptiveGpuError::UnsupportedPatch`]. Caller mistakes (buffers of the
//! wrong length, samples located for another table) panic with a message.
//!
//! # Example
//! ```no_run
//! use subla_adaptive::{EndCap, PatchTable, SparseRefinement, grid};
//! use subla_adaptive_gpu::GpuLimit;
//! use subla_gpu::GpuContext;
//! # fn run(mesh: &subla_mesh::Mesh, xyz: &[f32]) -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = GpuContext::new()?;
//! let table = PatchTable::new(SparseRefinement::build(mesh, 3, None)?, EndCap::GregoryBasis)?;
//! let mut limit = GpuLimit::new(&ctx, &table)?;
//! let samples = limit.locate(&ctx, &table, &grid(table.refinement().num_ptex_faces(), 5))?;
//! let values = limit.evaluate_host(&ctx, xyz, 3, &samples)?; // positions, du, dv
//! # let _ = values; Ok(()) }
//! # use subla_mesh as _;
//! ```
#![deny(missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use subla_adaptive::basis::PatchType;
use subla_adaptive::{AdaptiveError, PatchTable, Sample};
use subla_gpu::balanced::{BalancedCsr, NNZ_PER_INVOCATION, record_spmv_balanced};
use subla_gpu::program::{self, Kernel};
pub use subla_gpu::timing::KernelProfile;
use subla_gpu::timing::PassTimer;
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};

/// The WGSL kernels of this crate (its `shaders/` folder), compiled in
/// with `include_str!`.
pub mod shaders {
    /// `limit.wgsl`: the limit kernels (`limit_bspline`, `limit_gregory`,
    /// `limit_holes`).
    pub const LIMIT: &str = include_str!("../shaders/limit.wgsl");
    /// `refine.wgsl`: the table's points by refinement (`level_rows`, one
    /// dispatch per level; `tile_rows`, one workgroup per tile of ptex
    /// faces for every level).
    pub const REFINE: &str = include_str!("../shaders/refine.wgsl");
}

mod refine;
pub use refine::{PointPath, TILE_ROWS};
use refine::{REFINE_KERNELS, Refine};

/// What GPU limit evaluation refuses or fails with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdaptiveGpuError {
    /// The device, the driver or a device limit (`TooLarge` names the
    /// limit; `OutOfMemory`, `DeviceLost`, ...).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The patch table or a sample was refused (a ptex face that does not
    /// exist, a point matrix past `u32` indices).
    #[error(transparent)]
    Adaptive(#[from] AdaptiveError),
    /// A patch of a type the kernels do not evaluate (the tables of
    /// [`subla_adaptive`] hold only types they do: regular and Gregory
    /// basis patches for Catmull-Clark, box-spline and triangular Gregory
    /// patches for Loop).
    #[error(
        "patch {patch} is a {ty:?} patch; the GPU limit kernels evaluate regular, Gregory basis, Loop and triangular Gregory patches"
    )]
    UnsupportedPatch {
        /// The patch.
        patch: usize,
        /// Its type.
        ty: PatchType,
    },
}

/// The crate's result type.
pub type Result<T, E = AdaptiveGpuError> = std::result::Result<T, E>;

/// The kernels' patch groups, in the order samples are sorted and
/// dispatched.
const GROUPS: [&str; 5] = ["limit_bspline", "limit_gregory", "limit_loop", "limit_gregory_tri", "limit_holes"];
/// Group of samples no patch covers.
const HOLES: usize = 4;
/// Groups of patches (all but the holes).
const PATCH_GROUPS: usize = 4;
/// Set in a patch record's parameter word (bit 6, unused by OpenSubdiv's
/// packing) for Gregory basis patches.
const GREGORY_BIT: u32 = 1 << 6;

/// Points of a patch of each kernel group.
const GROUP_POINTS: [u64; PATCH_GROUPS] = [16, 20, 12, 18];

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The per-frame buffers for one channel count.
#[derive(Debug)]
struct Frame {
    channels: usize,
    points: GpuBuffer<f32>,
    carries: GpuBuffer<f32>,
    scratch: GpuBuffer<f32>,
}

/// How the table's points are computed each frame.
#[derive(Debug)]
enum Points {
    /// The composed point matrix.
    Composed(BalancedCsr),
    /// Refinement, level by level or tile by tile, and its kernels.
    Refined(Refine, Vec<Kernel>),
}

/// A patch table on the device, ready to evaluate its limit surface; see
/// the [crate docs](crate).
#[derive(Debug)]
pub struct GpuLimit {
    id: u64,
    kernels: Vec<Kernel>,
    points: Points,
    path: PointPath,
    num_control: usize,
    /// Per patch: offset of its point indices, parameter word.
    patches: wgpu::Buffer,
    patch_points: wgpu::Buffer,
    /// Per point, the point its value is relative to (itself for absolute
    /// points, [`PointPath::Composed`]).
    anchors: wgpu::Buffer,
    /// Host copy of each patch's kernel group (0 B-spline, 1 Gregory).
    groups: Vec<u8>,
    /// Host copy of the patch point indices and their offsets, to count the
    /// distinct points a sample set reads.
    point_offsets: Vec<u32>,
    point_indices: Vec<u32>,
    num_points: usize,
    frame: Option<Frame>,
}

/// The order in which [`GpuLimit::locate_ordered`] hands samples to the
/// kernels (the outputs keep the caller's order either way).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum SampleOrder {
    /// By kind of patch, then by patch: neighbouring invocations share
    /// patch points.
    #[default]
    ByPatch,
    /// By kind of patch, then in the caller's order: neighbouring
    /// invocations write neighbouring output rows.
    ByKind,
}

/// Samples located in a table and uploaded, sorted by patch type and
/// patch ([`GpuLimit::locate`]); reusable frame after frame.
#[derive(Debug)]
pub struct GpuSamples {
    owner: u64,
    buffer: wgpu::Buffer,
    len: usize,
    /// `(first, count)` of each group of the sorted samples.
    ranges: [(u32, u32); 5],
    missing: Vec<usize>,
    /// Distinct patches and distinct points the samples of each patch group
    /// touch.
    touched_patches: [u64; PATCH_GROUPS],
    touched_points: [u64; PATCH_GROUPS],
}

impl GpuSamples {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The samples no patch covers (holes), in increasing order: their
    /// output rows are NaN.
    pub fn missing(&self) -> &[usize] {
        &self.missing
    }
    /// Samples on regular patches (and B-spline end caps), on Gregory basis
    /// patches, on Loop box-spline patches, on triangular Gregory patches,
    /// and on no patch.
    pub fn counts(&self) -> [usize; 5] {
        self.ranges.map(|(_, n)| n as usize)
    }
}

/// The outputs of an evaluation on the device: one row of `channels`
/// `f32` per sample, in the order of the samples given to
/// [`GpuLimit::locate`], row-major.
#[derive(Debug)]
pub struct LimitBuffers {
    /// Positions.
    pub position: GpuBuffer<f32>,
    /// Derivatives with respect to the ptex face's `u`.
    pub du: GpuBuffer<f32>,
    /// Derivatives with respect to `v`.
    pub dv: GpuBuffer<f32>,
    channels: usize,
}

impl LimitBuffers {
    /// Zeroed outputs for `samples` with `channels` channels.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] over the binding limit or `u32` indices;
    /// device errors.
    pub fn new(ctx: &GpuContext, samples: &GpuSamples, channels: usize) -> Result<Self> {
        let len = samples.len as u64 * channels as u64;
        program::to_u32("limit outputs", len)?;
        Ok(Self {
            position: program::zeroed(ctx, "limit positions", len)?,
            du: program::zeroed(ctx, "limit u derivatives", len)?,
            dv: program::zeroed(ctx, "limit v derivatives", len)?,
            channels,
        })
    }

    /// The channel count the buffers hold.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Reads the three arrays back (waits for the device).
    ///
    /// # Errors
    /// Device and readback errors.
    pub fn download(&self, ctx: &GpuContext) -> Result<LimitValues> {
        Ok(LimitValues {
            channels: self.channels,
            position: self.position.download(ctx)?,
            du: self.du.download(ctx)?,
            dv: self.dv.download(ctx)?,
        })
    }
}

/// Limit positions and derivatives on the host, one row of `channels`
/// values per sample, row-major (NaN rows for the samples no patch
/// covers, [`GpuSamples::missing`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LimitValues {
    /// Channels per row.
    pub channels: usize,
    /// Positions.
    pub position: Vec<f32>,
    /// Derivatives with respect to `u`.
    pub du: Vec<f32>,
    /// Derivatives with respect to `v`.
    pub dv: Vec<f32>,
}

/// The timings of one profiled evaluation ([`GpuLimit::profile`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LimitProfile {
    /// Every pass in the order it ran: the points' passes (`spmv_balanced`
    /// and `spmv_fixup` when it runs, for [`PointPath::Composed`]; one
    /// `level_rows` per stage, its `level` the stage, for
    /// [`PointPath::PerLevel`]; one `tile_rows` for [`PointPath::PerTile`]),
    /// then `limit_bspline`, `limit_gregory`, `limit_holes` (those with
    /// samples). `bytes` is what the pass moves at least: the matrix,
    /// the control points and the points written for the SpMV; for a limit
    /// kernel its samples, the records and point indices of the distinct
    /// patches they touch, the distinct points they read (every channel) and
    /// its output rows (position, du, dv).
    pub kernels: Vec<KernelProfile>,
    /// Patch point values and indices the limit kernels request in all,
    /// each sample reading its patch's 16 or 20 points: the traffic caches
    /// serve when samples share patches.
    pub gathered_bytes: u64,
    /// Wall time of the evaluation: recording, submission and the wait for
    /// the device (no upload, no readback).
    pub wall_seconds: f64,
}

impl LimitProfile {
    /// Total GPU time of the passes, if every pass was timed.
    pub fn gpu_seconds(&self) -> Option<f64> {
        self.kernels.iter().map(|k| k.seconds).sum()
    }
    /// GPU time of the passes whose kernel name starts with `prefix`
    /// (`"spmv"`, `"limit"`), if they were timed.
    pub fn seconds_of(&self, prefix: &str) -> Option<f64> {
        self.kernels.iter().filter(|k| k.kernel.starts_with(prefix)).map(|k| k.seconds).sum()
    }
    /// GPU time of the passes that compute the table's points (the SpMV,
    /// or the refinement passes of [`PointPath::PerLevel`] and
    /// [`PointPath::PerTile`]), if they were timed.
    pub fn points_seconds(&self) -> Option<f64> {
        self.kernels.iter().filter(|k| !k.kernel.starts_with("limit")).map(|k| k.seconds).sum()
    }
    /// Total bytes moved at least.
    pub fn bytes(&self) -> u64 {
        self.kernels.iter().map(|k| k.bytes).sum()
    }
}

/// `n` as `u32`, or [`GpuError::TooLarge`] naming the `u32` indices.
fn u32_of(what: &'static str, n: usize) -> Result<u32> {
    Ok(program::to_u32(what, n as u64)?)
}

impl GpuLimit {
    /// Uploads the program of `table`'s points ([`PointPath::default`],
    /// one dispatch per level), the patch records, patch point indices and
    /// point anchors, and compiles the kernels.
    ///
    /// # Errors
    /// [`AdaptiveGpuError::UnsupportedPatch`] for a patch that is neither
    /// regular, Gregory basis, Loop or triangular Gregory patch;
    /// [`AdaptiveGpuError::Adaptive`] if
    /// the point matrix does not fit `u32` indices;
    /// [`AdaptiveGpuError::Gpu`] over a device limit, out of memory, or on
    /// any other device failure.
    pub fn new(ctx: &GpuContext, table: &PatchTable) -> Result<Self> {
        Self::with_path(ctx, table, PointPath::default())
    }

    /// [`GpuLimit::new`] computing the table's points each frame by `path`
    /// ([`PointPath`]; tiles of about [`TILE_ROWS`] rows).
    ///
    /// # Errors
    /// As [`GpuLimit::new`].
    pub fn with_path(ctx: &GpuContext, table: &PatchTable, path: PointPath) -> Result<Self> {
        Self::build(ctx, table, path, TILE_ROWS)
    }

    /// [`GpuLimit::with_path`] with [`PointPath::PerTile`] and tiles closed
    /// once they hold `tile_rows` rows (at least one ptex face each).
    ///
    /// # Errors
    /// As [`GpuLimit::new`].
    pub fn with_tile_rows(ctx: &GpuContext, table: &PatchTable, tile_rows: usize) -> Result<Self> {
        Self::build(ctx, table, PointPath::PerTile, tile_rows)
    }

    fn build(ctx: &GpuContext, table: &PatchTable, path: PointPath, tile_rows: usize) -> Result<Self> {
        let n = table.patches().len();
        let mut records: Vec<[u32; 2]> = Vec::with_capacity(n);
        let mut groups = Vec::with_capacity(n);
        let mut point_offsets = Vec::with_capacity(n + 1);
        let mut point_indices = Vec::new();
        // The kernels read a patch's indices in rows of 4, each patch from a
        // row of its own (18-point patches end with a padded row).
        let mut rows: Vec<[u32; 4]> = Vec::new();
        for (p, patch) in table.patches().iter().enumerate() {
            let group = match patch.ty {
                PatchType::Regular => 0u8,
                PatchType::GregoryBasis => 1u8,
                PatchType::Loop => 2u8,
                PatchType::GregoryTriangle => 3u8,
                ty => return Err(AdaptiveGpuError::UnsupportedPatch { patch: p, ty }),
            };
            let offset = u32_of("patch point indices", 4 * rows.len())?;
            let word = patch.param.to_bits()[1] | if group == 1 { GREGORY_BIT } else { 0 };
            records.push([offset, word]);
            groups.push(group);
            point_offsets.push(u32_of("patch point indices", point_indices.len())?);
            point_indices.extend_from_slice(table.patch_points(p));
            rows.extend(index_rows(table.patch_points(p)));
        }
        point_offsets.push(u32_of("patch point indices", point_indices.len())?);
        // Each point's anchor: itself for the composed matrix (absolute
        // points), a nearby control point for the refinement paths (points
        // kept as differences from it).
        let anchor: Vec<u32> = match path {
            PointPath::Composed => (0..u32_of("table points", table.num_points())?).collect(),
            PointPath::PerLevel | PointPath::PerTile => refine::anchors(table),
        };
        let points = match path {
            PointPath::Composed => {
                let m = table.point_matrix()?;
                Points::Composed(BalancedCsr::upload_f64(ctx, m.as_ref())?)
            }
            PointPath::PerLevel | PointPath::PerTile => {
                let program = if path == PointPath::PerLevel {
                    Refine::levels(ctx, table, &anchor)?
                } else {
                    Refine::tiles(ctx, table, tile_rows, &anchor)?
                };
                Points::Refined(program, program::compile(ctx, "refine.wgsl", shaders::REFINE, &REFINE_KERNELS)?)
            }
        };
        let kernels = program::compile(ctx, "limit.wgsl", shaders::LIMIT, &GROUPS)?;
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            kernels,
            points,
            path,
            num_control: table.refinement().levels()[0].num_vertices(),
            patches: program::upload(ctx, "patch records", &records)?,
            anchors: program::upload(ctx, "point anchors", &anchor)?,
            patch_points: program::upload(ctx, "patch point indices", &rows)?,
            groups,
            point_offsets,
            point_indices,
            num_points: table.num_points(),
            frame: None,
        })
    }

    /// Number of control points (rows of the control data).
    pub fn num_control_points(&self) -> usize {
        self.num_control
    }

    /// How the table's points are computed each frame.
    pub fn path(&self) -> PointPath {
        self.path
    }

    /// Number of the table's points ([`PatchTable::num_points`]): the rows
    /// of the point buffer the limit kernels read.
    pub fn num_points(&self) -> usize {
        self.num_points
    }

    /// Number of patches.
    pub fn num_patches(&self) -> usize {
        self.groups.len()
    }

    /// Weights read per frame to compute the points: the nonzeros of the
    /// point matrix ([`PointPath::Composed`]), of the levels' and end caps'
    /// rows ([`PointPath::PerLevel`]), or of the tiles' rows, rows computed
    /// by several tiles counted each time ([`PointPath::PerTile`]).
    pub fn nnz(&self) -> usize {
        match &self.points {
            Points::Composed(m) => m.nnz(),
            Points::Refined(r, _) => r.nnz() as usize,
        }
    }

    /// Rows computed per frame to get the points: the table's points
    /// ([`PointPath::Composed`], [`PointPath::PerLevel`]: all of them but
    /// the control points' copies), or the tiles' rows, duplicates
    /// included ([`PointPath::PerTile`]; only the points patches read).
    pub fn rows_computed(&self) -> usize {
        match &self.points {
            Points::Composed(m) => m.nrows(),
            Points::Refined(r, _) => r.rows() as usize,
        }
    }

    /// Bytes this table holds on the device (the point program, records,
    /// indices; not the per-frame points and scratch).
    pub fn device_bytes(&self) -> u64 {
        let program = match &self.points {
            Points::Composed(m) => {
                8 * m.nnz() as u64 + 4 * (m.nrows() as u64 + 1) + 4 * m.nnz().div_ceil(NNZ_PER_INVOCATION) as u64
            }
            Points::Refined(r, _) => r.device_bytes(),
        };
        program + self.patches.size() + self.patch_points.size() + self.anchors.size()
    }

    /// Finds the patch of every sample ([`PatchTable::find`], on the host,
    /// in parallel), sorts them by patch type and patch, and uploads them.
    /// The outputs keep the order of `samples`.
    ///
    /// # Panics
    /// If `table` is not the table this evaluator was made from (its patch
    /// or point count differs).
    ///
    /// # Errors
    /// [`AdaptiveGpuError::Adaptive`] with
    /// [`AdaptiveError::NoSuchPtexFace`] for a sample on a ptex face that
    /// does not exist; [`AdaptiveGpuError::Gpu`] over a device limit or on
    /// a device failure.
    #[track_caller]
    pub fn locate(&self, ctx: &GpuContext, table: &PatchTable, samples: &[Sample]) -> Result<GpuSamples> {
        self.locate_ordered(ctx, table, samples, SampleOrder::ByPatch)
    }

    /// [`GpuLimit::locate`] with the order the kernels see the samples in:
    /// [`SampleOrder::ByPatch`] groups the samples of a patch (neighbouring
    /// invocations read the same points, but write rows far apart when the
    /// input is not in patch order), [`SampleOrder::ByKind`] keeps the
    /// caller's order within each kind of patch (neighbouring invocations
    /// write neighbouring rows). The outputs keep the order of `samples`
    /// either way.
    ///
    /// # Panics
    /// As [`GpuLimit::locate`].
    ///
    /// # Errors
    /// As [`GpuLimit::locate`].
    #[track_caller]
    pub fn locate_ordered(
        &self,
        ctx: &GpuContext,
        table: &PatchTable,
        samples: &[Sample],
        order: SampleOrder,
    ) -> Result<GpuSamples> {
        assert!(
            table.patches().len() == self.groups.len() && table.num_points() == self.num_points,
            "GpuLimit::locate: the table has {} patches and {} points, the evaluator {} and {} (locate samples in the table the evaluator was made from)",
            table.patches().len(),
            table.num_points(),
            self.groups.len(),
            self.num_points
        );
        let n = samples.len();
        u32_of("limit samples", n)?;
        let patches = find_all(table, samples)?;
        // A stable counting sort: by kernel group (B-spline, Gregory, Loop,
        // triangular Gregory patches, each in patch order), then holes.
        let np = self.groups.len();
        let mut bucket_of = vec![0u32; np];
        let mut next = 0u32;
        // The first bucket of each group, and of the holes.
        let mut first_bucket = [0usize; PATCH_GROUPS + 1];
        for g in 0..PATCH_GROUPS as u8 {
            first_bucket[g as usize] = match order {
                SampleOrder::ByPatch => next as usize,
                SampleOrder::ByKind => g as usize,
            };
            for (p, _) in self.groups.iter().enumerate().filter(|&(_, &x)| x == g) {
                bucket_of[p] = match order {
                    SampleOrder::ByPatch => next,
                    SampleOrder::ByKind => u32::from(g),
                };
                next += 1;
            }
        }
        if order == SampleOrder::ByKind {
            next = PATCH_GROUPS as u32;
        }
        let hole_bucket = next as usize;
        first_bucket[PATCH_GROUPS] = hole_bucket;
        let bucket = |p: u32| if p == u32::MAX { hole_bucket } else { bucket_of[p as usize] as usize };
        let mut starts = vec![0usize; hole_bucket + 2];
        for &p in &patches {
            starts[bucket(p) + 1] += 1;
        }
        for b in 0..=hole_bucket {
            starts[b + 1] += starts[b];
        }
        let mut ranges = [(0u32, 0u32); 5];
        for (g, r) in ranges.iter_mut().enumerate() {
            let (a, b) = (starts[first_bucket[g]], if g == HOLES { n } else { starts[first_bucket[g + 1]] });
            *r = (a as u32, (b - a) as u32);
        }
        let mut sorted = vec![[0u32; 4]; n];
        let mut missing = Vec::new();
        let mut seen_patch = vec![false; np];
        let mut seen_point = vec![0u8; self.num_points];
        let (mut touched_patches, mut touched_points) = ([0u64; PATCH_GROUPS], [0u64; PATCH_GROUPS]);
        for (i, (s, &p)) in samples.iter().zip(&patches).enumerate() {
            let b = bucket(p);
            let at = starts[b];
            starts[b] += 1;
            let patch = if p == u32::MAX {
                missing.push(i);
                0
            } else {
                let g = self.groups[p as usize] as usize;
                if !std::mem::replace(&mut seen_patch[p as usize], true) {
                    touched_patches[g] += 1;
                    let range = self.point_offsets[p as usize] as usize..self.point_offsets[p as usize + 1] as usize;
                    for &pt in &self.point_indices[range] {
                        let flag = &mut seen_point[pt as usize];
                        if *flag & (1 << g) == 0 {
                            *flag |= 1 << g;
                            touched_points[g] += 1;
                        }
                    }
                }
                p
            };
            sorted[at] = [patch, (s.u as f32).to_bits(), (s.v as f32).to_bits(), i as u32];
        }
        program::check_binding(ctx, "limit samples", 16 * n as u64)?;
        let buffer = ctx.scoped("limit samples upload", || program::upload(ctx, "limit samples", &sorted))?;
        Ok(GpuSamples { owner: self.id, buffer, len: n, ranges, missing, touched_patches, touched_points })
    }

    /// Sizes the per-frame points for `channels` channels.
    fn frame(&mut self, ctx: &GpuContext, channels: usize) -> Result<&Frame> {
        if self.frame.as_ref().is_none_or(|f| f.channels != channels) {
            self.frame = None;
            let len = self.num_points as u64 * channels as u64;
            program::to_u32("limit patch points", len)?;
            let points = program::zeroed(ctx, "limit patch points", len)?;
            let (carries, scratch) = match &self.points {
                Points::Composed(m) => (m.carries_len(channels), 1),
                Points::Refined(r, _) => (1, r.scratch_slots().saturating_mul(channels as u64).max(1)),
            };
            let carries = GpuBuffer::zeroed(ctx, carries)?;
            let scratch = program::zeroed(ctx, "tile scratch", scratch)?;
            self.frame = Some(Frame { channels, points, carries, scratch });
        }
        self.frame.as_ref().ok_or(refine::no_frame().into())
    }

    /// `position`, `du`, `dv` of every sample from `control`
    /// (`num_control_points() × channels`, row-major) into `out`, on the
    /// device: the SpMV and the limit kernels in one submission, nothing
    /// waited for or read back. `control` may be rewritten with
    /// [`GpuBuffer::write`] and `out` reused frame after frame.
    ///
    /// # Panics
    /// If `control` or `out` do not match `channels` and the sample count,
    /// `channels == 0`, or `samples` were located by another evaluator.
    ///
    /// # Errors
    /// [`AdaptiveGpuError::Gpu`] over a device limit, out of memory, or on
    /// a device failure.
    #[track_caller]
    pub fn evaluate(
        &mut self,
        ctx: &GpuContext,
        control: &GpuBuffer<f32>,
        channels: usize,
        samples: &GpuSamples,
        out: &mut LimitBuffers,
    ) -> Result<()> {
        self.record_and_submit(ctx, control, channels, samples, out, None)
    }

    /// [`GpuLimit::evaluate`] from host data, read back: uploads
    /// `control`, evaluates and downloads the three arrays.
    ///
    /// # Panics
    /// As [`GpuLimit::evaluate`].
    ///
    /// # Errors
    /// As [`GpuLimit::evaluate`]; readback errors.
    #[track_caller]
    pub fn evaluate_host(
        &mut self,
        ctx: &GpuContext,
        control: &[f32],
        channels: usize,
        samples: &GpuSamples,
    ) -> Result<LimitValues> {
        self.check_control(control.len(), channels);
        let x = program::upload_array(ctx, "limit control points", control)?;
        let mut out = LimitBuffers::new(ctx, samples, channels)?;
        self.evaluate(ctx, &x, channels, samples, &mut out)?;
        out.download(ctx)
    }

    /// [`GpuLimit::evaluate`] with every pass timed (timestamp queries,
    /// where the adapter has them) and waited for, and the bytes each pass
    /// moves at least ([`LimitProfile`]).
    ///
    /// # Panics
    /// As [`GpuLimit::evaluate`].
    ///
    /// # Errors
    /// As [`GpuLimit::evaluate`]; timestamp readback errors.
    #[track_caller]
    pub fn profile(
        &mut self,
        ctx: &GpuContext,
        control: &GpuBuffer<f32>,
        channels: usize,
        samples: &GpuSamples,
        out: &mut LimitBuffers,
    ) -> Result<LimitProfile> {
        let passes = match &self.points {
            Points::Composed(_) => 2,
            Points::Refined(r, _) => r.passes(),
        };
        let mut timer = PassTimer::new(ctx, (passes + GROUPS.len()) as u32)?;
        let start = Instant::now();
        self.record_and_submit(ctx, control, channels, samples, out, Some(&mut timer))?;
        ctx.wait_idle()?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let times = timer.read(ctx)?;
        let seconds = |label: &str| times.iter().find(|t| t.label == label).map(|t| t.seconds);
        let d = channels as u64;
        let mut kernels = Vec::new();
        match &self.points {
            Points::Composed(m) => {
                let (rows, cols, nnz) = (m.nrows() as u64, m.ncols() as u64, m.nnz() as u64);
                let tiles = m.workgroups() as u64;
                kernels.push(KernelProfile {
                    level: 0,
                    kernel: "spmv_balanced",
                    seconds: seconds("spmv_balanced"),
                    // Values, column indices, row pointers, chunk rows,
                    // control in, points and carries out.
                    bytes: 8 * nnz
                        + 4 * (rows + 1)
                        + 4 * nnz.div_ceil(NNZ_PER_INVOCATION as u64)
                        + 4 * d * cols
                        + 4 * d * rows
                        + 4 * d * tiles,
                });
                if tiles > 1 {
                    // Carries and the chunk rows of each boundary, the rows
                    // updated.
                    kernels.push(KernelProfile {
                        level: 0,
                        kernel: "spmv_fixup",
                        seconds: seconds("spmv_fixup"),
                        bytes: (tiles - 1) * (8 * d + 8),
                    });
                }
            }
            Points::Refined(r, _) => {
                // Timed passes are labelled by kernel: take them in order.
                let mut timed = times.iter().filter(|t| t.label == "level_rows" || t.label == "tile_rows");
                for (level, (kernel, bytes)) in r.pass_bytes(d).into_iter().enumerate() {
                    let seconds = timed.next().map(|t| t.seconds);
                    kernels.push(KernelProfile { level: level as u32 + 1, kernel, seconds, bytes });
                }
            }
        }
        let mut gathered_bytes = 0;
        for (g, &kernel) in GROUPS.iter().enumerate() {
            let count = u64::from(samples.ranges[g].1);
            if count == 0 {
                continue;
            }
            let outputs = 12 * d * count;
            let bytes = if g == HOLES {
                16 * count + outputs
            } else {
                let k = GROUP_POINTS[g];
                gathered_bytes += count * k * (4 * d + 4);
                16 * count + samples.touched_patches[g] * (8 + 4 * k) + 4 * d * samples.touched_points[g] + outputs
            };
            kernels.push(KernelProfile { level: 0, kernel, seconds: seconds(kernel), bytes });
        }
        Ok(LimitProfile { kernels, gathered_bytes, wall_seconds })
    }

    #[track_caller]
    fn check_control(&self, len: usize, channels: usize) {
        assert!(channels >= 1, "GpuLimit: channels must be at least 1");
        assert_eq!(
            len,
            self.num_control_points() * channels,
            "GpuLimit: control has {} elements but the table has {} control points of {} channels",
            len,
            self.num_control_points(),
            channels
        );
    }

    #[track_caller]
    fn record_and_submit(
        &mut self,
        ctx: &GpuContext,
        control: &GpuBuffer<f32>,
        channels: usize,
        samples: &GpuSamples,
        out: &mut LimitBuffers,
        mut timer: Option<&mut PassTimer>,
    ) -> Result<()> {
        self.check_control(control.len(), channels);
        assert_eq!(
            samples.owner, self.id,
            "GpuLimit::evaluate: the samples were located by another evaluator (locate them with this one)"
        );
        let len = samples.len * channels;
        for (what, buffer) in [("position", &out.position), ("du", &out.du), ("dv", &out.dv)] {
            assert_eq!(
                buffer.len(),
                len,
                "GpuLimit::evaluate: output {what} has {} elements, {} samples of {channels} channels need {len}",
                buffer.len(),
                samples.len
            );
        }
        self.frame(ctx, channels)?;
        let Self { kernels, points, patches, patch_points, anchors, frame, .. } = self;
        let frame = frame.as_ref().ok_or(refine::no_frame())?;
        Ok(ctx.scoped("limit evaluation", || {
            let mut encoder = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("limit evaluation") });
            match points {
                Points::Composed(matrix) => record_spmv_balanced(
                    ctx,
                    &mut encoder,
                    matrix,
                    control,
                    channels,
                    &frame.points,
                    &frame.carries,
                    timer.as_deref_mut(),
                )?,
                Points::Refined(r, refine_kernels) => r.record(
                    ctx,
                    &mut encoder,
                    refine_kernels,
                    control,
                    channels,
                    &frame.points,
                    &frame.scratch,
                    timer.as_deref_mut(),
                )?,
            }
            let params: Vec<wgpu::Buffer> = samples
                .ranges
                .iter()
                .map(|&(first, count)| program::uniform(ctx, "limit params", &[first, count, channels as u32, 0]))
                .collect();
            for (g, kernel) in kernels.iter().enumerate() {
                let count = u64::from(samples.ranges[g].1);
                if count == 0 {
                    continue;
                }
                let table = [
                    Some(&params[g]),
                    Some(&samples.buffer),
                    Some(&*patches),
                    Some(&*patch_points),
                    Some(frame.points.as_wgpu()),
                    Some(out.position.as_wgpu()),
                    Some(out.du.as_wgpu()),
                    Some(out.dv.as_wgpu()),
                    Some(&*anchors),
                ];
                let writes = timer.as_deref_mut().and_then(|t| t.writes(GROUPS[g]));
                program::dispatch_timed(ctx, &mut encoder, kernel, &table, count, writes)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?)
    }
}

/// `indices` in rows of 4, the last one padded with zeros.
fn index_rows(indices: &[u32]) -> Vec<[u32; 4]> {
    indices
        .chunks(4)
        .map(|c| {
            let mut row = [0u32; 4];
            row[..c.len()].copy_from_slice(c);
            row
        })
        .collect()
}

/// The patch of every sample (`u32::MAX` for none), found in parallel.
fn find_all(table: &PatchTable, samples: &[Sample]) -> Result<Vec<u32>> {
    let one = |s: &Sample| -> Result<u32, AdaptiveError> {
        match table.find(s.ptex, s.u, s.v) {
            Ok(p) => Ok(p as u32),
            Err(AdaptiveError::NoPatch { .. }) => Ok(u32::MAX),
            Err(e) => Err(e),
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = samples.len().div_ceil(threads).max(1 << 14);
    let mut out = vec![0u32; samples.len()];
    std::thread::scope(|scope| {
        let handles: Vec<_> = samples
            .chunks(chunk)
            .zip(out.chunks_mut(chunk))
            .map(|(s, o)| {
                scope.spawn(move || -> Result<(), AdaptiveError> {
                    for (x, y) in s.iter().zip(o) {
                        *y = one(x)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })?;
    Ok(out)
}
