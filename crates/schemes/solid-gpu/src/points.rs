//! The child points of a Catmull-Clark solid split computed on the device
//! from the parent's connectivity ([`GpuSolidTopology`]), so that a whole
//! refinement — connectivity and points, level after level — runs there
//! with no matrix built on the host and no copy back between levels.
//!
//! [`SolidPointsGpu::points`] runs `solid_points.wgsl`: first the
//! incidences the rules walk (the faces of each edge, the edges, faces and
//! cells of each vertex) as one counting sort over the connectivity
//! (integer atomics for the counts and slots, then each list sorted, so
//! the lists are unique), then one pass per kind of child point — cell,
//! face, edge, vertex points, each stage reading the one before — with
//! the rules of the CPU's plan ([`CatmarkSolid`](subla_solid::CatmarkSolid),
//! `docs/solids.md`): boundaries by the surface rules, sharp edges and
//! corners, and the layered vertex rule where the refiner's
//! [`VertexRule`] asks for it. Each child point is one invocation's
//! gather: the same bits every run.
//!
//! [`SolidRefineOnDevice`] chains [`SolidSplitGpu`] and
//! [`SolidPointsGpu`] over any number of levels.

use ndarray::{Array2, ArrayView2};
use subla_gpu::program::{self, Program};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
use subla_solid::VertexRule;
use subla_volume::VolMesh;

use crate::refine::GpuSolidTopology;
use crate::{SolidGpuError, SolidSplitGpu, shaders};

/// The entry points of `solid_points.wgsl`, in the order they run.
const ENTRIES: [&str; 7] = ["count", "place", "sort", "cell_points", "face_points", "edge_points", "vertex_points"];

/// The child points of a split computed on the device from the parent's
/// connectivity and points (see the [module docs](self)), `f32`, any
/// number of channels.
///
/// ```no_run
/// use subla_solid::VertexRule;
/// use subla_solid_gpu::{GpuSolidTopology, SolidPointsGpu};
/// let ctx = subla_gpu::GpuContext::new()?;
/// let grid = subla_volume::shapes::hex_grid(4, 4, 4)?;
/// let topo = GpuSolidTopology::upload(&ctx, &grid.mesh)?;
/// let x = subla_gpu::GpuBuffer::upload(&ctx, &grid.vertices.mapv(|v| v as f32).into_raw_vec_and_offset().0)?;
/// let child = SolidPointsGpu::new(&ctx, VertexRule::Layered)?.points(&ctx, &topo, &x, 3)?;
/// assert_eq!(child.len(), 3 * (topo.num_vertices() + topo.num_edges() + topo.num_faces() + topo.num_cells()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SolidPointsGpu {
    program: Program,
    rule: VertexRule,
}

impl SolidPointsGpu {
    /// Compiles the kernels, for the vertex rule `rule` (the one the CPU's
    /// refiner uses by default: [`VertexRule::Layered`]).
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] if the device fails.
    pub fn new(ctx: &GpuContext, rule: VertexRule) -> Result<SolidPointsGpu, SolidGpuError> {
        let program = program::compile(ctx, "solid_points.wgsl", shaders::SOLID_POINTS, &ENTRIES)?;
        Ok(SolidPointsGpu { program, rule })
    }

    /// The vertex rule.
    pub fn rule(&self) -> VertexRule {
        self.rule
    }

    /// The child points of one split of `topo` (rows: vertex points, edge
    /// points, face points, cell points, each in the parent's order, as
    /// the CPU numbers them) from the parent's points `x` (`num_vertices ×
    /// channels`, rows one after the other), left on the device. One
    /// readback: the total of the incidence counts, checked against the
    /// connectivity's.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] where a buffer or id passes the device's
    /// limits or 32 bits, or the device fails.
    ///
    /// # Panics
    /// If `x` does not hold `num_vertices × channels` values, or
    /// `channels` is 0.
    #[track_caller]
    pub fn points(
        &self,
        ctx: &GpuContext,
        topo: &GpuSolidTopology,
        x: &GpuBuffer<f32>,
        channels: usize,
    ) -> Result<GpuBuffer<f32>, SolidGpuError> {
        assert!(channels > 0, "SolidPointsGpu::points: no channel");
        let c = topo.counts;
        assert_eq!(
            x.len(),
            c.nv as usize * channels,
            "SolidPointsGpu::points: {} values for {} vertices of {channels} channels",
            x.len(),
            c.nv
        );
        let ch = program::to_u32("channels", channels as u64)?;
        let (nv, ne, nf, nc) = (u64::from(c.nv), u64::from(c.ne), u64::from(c.nf), u64::from(c.nc));
        let rows = nv + ne + nf + nc;
        let (fv, cv) = (u64::from(c.face_verts), u64::from(c.cell_verts));
        let entries = 2 * fv + 2 * ne + cv;
        let keys = ne + 3 * nv;
        program::to_u32("incidence entries", entries)?;
        program::to_u32("incidence lists", keys + 1)?;
        program::to_u32("child point values", rows * u64::from(ch))?;
        let y: GpuBuffer<f32> = program::zeroed(ctx, "child points", (rows * u64::from(ch)).max(1))?;
        if rows == 0 {
            return Ok(y);
        }
        let counts: GpuBuffer<u32> = program::zeroed(ctx, "incidence counts", keys + 1)?;
        let vals: GpuBuffer<u32> = program::zeroed(ctx, "incidence lists", entries.max(1))?;
        let favg: GpuBuffer<f32> = program::zeroed(ctx, "face centroids", (nf * u64::from(ch)).max(1))?;
        let at = |i: usize| topo.layout.at[i];
        let layered = u32::from(self.rule == VertexRule::Layered);
        let words = [
            c.nv,
            c.ne,
            c.nf,
            c.nc,
            at(0),
            at(1),
            at(4),
            at(5),
            at(6),
            at(7),
            at(8),
            at(9),
            c.face_verts,
            c.cell_verts,
            ch,
            layered,
        ];
        let params = program::uniform(ctx, "solid points params", &words);
        let kernel = |name: &str| &self.program[ENTRIES.iter().position(|&e| e == name).expect("an entry point")];
        let mut table = [
            Some(&params),
            Some(topo.buf.as_wgpu()),
            Some(topo.tags.as_wgpu()),
            Some(counts.as_wgpu()),
            None,
            Some(vals.as_wgpu()),
            Some(x.as_wgpu()),
            Some(y.as_wgpu()),
            Some(favg.as_wgpu()),
        ];
        ctx.scoped("solid points: counts", || {
            let mut encoder = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("solid points: counts") });
            program::dispatch(ctx, &mut encoder, kernel("count"), &table, entries)?;
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        let (kptr, total) = subla_gpu::scan::scan_exclusive(ctx, &counts)?;
        if u64::from(total) != entries {
            return Err(SolidGpuError::Device(GpuError::Internal {
                operation: "solid points: incidences",
                message: format!("the counts sum to {total} where the connectivity has {entries} entries"),
            }));
        }
        table[4] = Some(kptr.as_wgpu());
        ctx.scoped("solid points", || {
            let mut encoder =
                ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("solid points") });
            // The counts become the slots' cursors.
            encoder.clear_buffer(counts.as_wgpu(), 0, None);
            for (name, items) in [
                ("place", entries),
                ("sort", keys),
                ("cell_points", nc),
                ("face_points", nf),
                ("edge_points", ne),
                ("vertex_points", nv),
            ] {
                program::dispatch(ctx, &mut encoder, kernel(name), &table, items)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        Ok(y)
    }
}

/// A whole Catmull-Clark solid refinement on the device: each level's
/// connectivity by [`SolidSplitGpu`] and its points by
/// [`SolidPointsGpu`], chained with no copy back between levels (see the
/// [module docs](self)). The same points as the CPU plan's
/// ([`CatmarkSolid`](subla_solid::CatmarkSolid) with the same vertex
/// rule) within `f32` rounding.
#[derive(Debug)]
pub struct SolidRefineOnDevice {
    split: SolidSplitGpu,
    points: SolidPointsGpu,
}

impl SolidRefineOnDevice {
    /// Compiles the split's and the points' kernels.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] if the device fails.
    pub fn new(ctx: &GpuContext, rule: VertexRule) -> Result<SolidRefineOnDevice, SolidGpuError> {
        Ok(SolidRefineOnDevice { split: SolidSplitGpu::new(ctx)?, points: SolidPointsGpu::new(ctx, rule)? })
    }

    /// `levels` steps of `mesh` with control points `x` (`num_vertices ×
    /// channels`): the finest level's connectivity, left on the device,
    /// and its points, read back.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] where a level passes the device's limits
    /// or 32-bit ids, or the device fails.
    ///
    /// # Panics
    /// If `x` does not have one row per vertex of `mesh`, or no column.
    #[track_caller]
    pub fn refine(
        &self,
        ctx: &GpuContext,
        mesh: &VolMesh,
        x: ArrayView2<'_, f32>,
        levels: u32,
    ) -> Result<(GpuSolidTopology, Array2<f32>), SolidGpuError> {
        let (rows, channels) = x.dim();
        assert_eq!(rows, mesh.num_vertices(), "SolidRefineOnDevice::refine: one row per control vertex");
        assert!(channels > 0, "SolidRefineOnDevice::refine: no channel");
        let x = x.as_standard_layout();
        let mut topo = GpuSolidTopology::upload(ctx, mesh)?;
        let mut pts = program::upload_array(ctx, "control points", x.as_slice().expect("standard layout"))?;
        for _ in 0..levels {
            let next = self.points.points(ctx, &topo, &pts, channels)?;
            topo = self.split.split(ctx, &topo)?;
            pts = next;
        }
        let values = pts.download(ctx)?;
        let n = topo.num_vertices();
        let values = if n == 0 { Vec::new() } else { values };
        let out = Array2::from_shape_vec((n, channels), values).expect("one row of channels per vertex");
        Ok((topo, out))
    }
}
