//! The table's points on the device by refinement, level by level or tile
//! by tile, instead of by the composed point matrix.
//!
//! A patch table's points are the vertices of every sparse level, then the
//! end caps' points ([`PatchTable::num_level_points`]). Level `k + 1`'s
//! vertices are rows of weights over level `k`'s
//! ([`SparseRefinement::stencils`](subla_adaptive::SparseRefinement::stencils)),
//! and the end caps' points rows over the levels' points
//! ([`PatchTable::end_cap_rows`]). Three ways to compute them from the
//! control points ([`PointPath`]):
//!
//! * **Composed**: one SpMV with the composed point matrix
//!   ([`PatchTable::point_matrix`]). One dispatch, but long rows (a deep
//!   point's stencil spans its whole support at level 0), and weights that
//!   are products of many factors, rounded to `f32` once.
//! * **Per level**: one dispatch per level and one for the end caps, each
//!   computing every row of its stage from the stage below (short rows,
//!   rounded as the CPU refinement rounds them), with a synchronisation
//!   between levels. Every vertex of every sparse level is computed,
//!   whether a patch reads it or not.
//! * **Per tile**, after Tokuyoshi's adaptive tile subdivision on the GPU
//!   (subtree kernels instead of one dispatch per level): the patches of a
//!   run of consecutive ptex faces form a tile (the quadtrees of their
//!   feature-adaptive subdivision), and one workgroup refines its tile
//!   through every level in one dispatch, level by level with a barrier
//!   between levels inside the workgroup. The host gives each tile the
//!   closure of its patches' points (the rows of each level that the next
//!   level or the patches read), renumbered into the tile's own scratch
//!   slots; rows needed by two tiles are computed by both (Tokuyoshi's
//!   duplicated work at the top of a subtree, here at the seams between
//!   tiles), and written to the points by the first tile that outputs
//!   them. Rows no patch needs are not computed.
//!
//! Tiles take ptex faces in order until their rows reach
//! [`TILE_ROWS`]; ptex faces whose patches read only control points need
//! no tile.

use subla_adaptive::PatchTable;
use subla_gpu::program::{self, Kernel};
use subla_gpu::timing::PassTimer;
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};

use crate::Result;

/// How [`GpuLimit`](crate::GpuLimit) computes the table's points (the
/// sparse levels' vertices, then the end caps' points) from the control
/// points each frame.
///
/// * `Composed`: one dispatch, long rows, weights composed in `f64` and
///   rounded to `f32` once; absolute points, so deep points carry the
///   rounding of the coordinates, which the derivatives magnify by
///   `2^depth` (Bigguy at isolation 3: 1.6e-5 of the largest derivative
///   from the CPU's `f64`; the CPU's own `f32` gives 2.4e-5).
/// * `PerLevel` (the default): short rows, one dispatch (and one
///   synchronisation) per level; every vertex of every sparse level is
///   computed.
/// * `PerTile`, after Tokuyoshi's adaptive tile subdivision on the GPU: a
///   workgroup per tile (the patches of a run of ptex faces) refines the
///   closure of its patches' points through every level in one dispatch,
///   with a barrier between levels inside the workgroup; rows that two
///   tiles need are computed by both, and written by the first; rows no
///   patch reads are not computed.
///
/// The refinement paths keep every point as its difference from a nearby
/// control point (its *anchor*) and sum each row as
/// `Σ w · ((anchor(q) − anchor(p)) + δ(q))`: `f32` rounding is then of the
/// size of the neighbourhood, and the derivatives stay within about 1e-6
/// of the largest derivative at isolation 3 (Bigguy 8.2e-7, the 100k-quad
/// torus with defects 1.5e-6, against 1.6e-5 and 1.6e-4 composed).
///
/// All three repeat bit for bit; per level and per tile give the same
/// points.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum PointPath {
    /// One load-balanced SpMV with the composed point matrix.
    Composed,
    /// One dispatch per sparse level, and one for the end caps' points.
    #[default]
    PerLevel,
    /// One dispatch for every level: a workgroup per tile of ptex faces
    /// refines the closure of its patches' points.
    PerTile,
}

/// Rows a tile gathers before it is closed (about four rows per
/// invocation of its workgroup of 256, summed over its levels).
pub const TILE_ROWS: usize = 1024;

/// A column naming a point (a control point) rather than a scratch slot.
const GLOBAL: u32 = 0x8000_0000;
/// No point to write.
const NONE: u32 = u32::MAX;

/// One stage of the level-by-level path: rows `first..first + count` of
/// the concatenated rows (whose entries name the points they read),
/// writing points from `dst` on.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Stage {
    first: u32,
    count: u32,
    dst: u32,
}

/// The host side of a tile program: what [`build_tiles`] makes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TileProgram {
    /// Per tile (first stage, end stage, scratch base), then per stage its
    /// end op.
    pub(crate) header: Vec<u32>,
    /// Word of `header` where the stage ends start.
    pub(crate) stage_base: u32,
    /// Per op: first entry, end entry, scratch slot, point or `NONE`.
    pub(crate) ops: Vec<[u32; 4]>,
    /// Per entry: column (slot, or `GLOBAL | point`), weight bits, the
    /// anchor of the column's point and of the row's point.
    pub(crate) entries: Vec<[u32; 4]>,
    pub(crate) num_tiles: u32,
    /// Scratch slots of all tiles.
    pub(crate) scratch_slots: u64,
    /// Points written (each by one tile).
    pub(crate) written: u64,
}

/// Where a point comes from: its stage (1..=levels for level vertices, the
/// end caps after) and its row there; stage 0 is a control point.
struct Layout<'a> {
    /// First point of each level, and the number of level points at the end.
    level_start: Vec<usize>,
    table: &'a PatchTable,
}

impl Layout<'_> {
    fn new(table: &PatchTable) -> Layout<'_> {
        let mut level_start = vec![0usize];
        for l in table.refinement().levels() {
            level_start.push(level_start.last().copied().unwrap_or(0) + l.num_vertices());
        }
        Layout { level_start, table }
    }
    fn num_levels(&self) -> usize {
        self.level_start.len() - 1
    }
    /// Stage of point `g`: 0 for a control point, `k` for a vertex of level
    /// `k`, `num_levels()` for an end-cap point.
    fn stage(&self, g: usize) -> usize {
        if g >= self.table.num_level_points() {
            return self.num_levels();
        }
        self.level_start.partition_point(|&s| s <= g) - 1
    }
    /// The row of point `g` (not a control point), columns as points.
    fn row(&self, g: usize, out: &mut Vec<(u32, f64)>) {
        out.clear();
        let s = self.stage(g);
        if s == self.num_levels() {
            out.extend(self.table.end_cap_rows().row(g - self.table.num_level_points()).iter());
        } else {
            let (cols, ws) = self.table.refinement().stencils()[s - 1].row(g - self.level_start[s]);
            let below = self.level_start[s - 1] as u32;
            out.extend(cols.iter().map(|&c| c + below).zip(ws.iter().copied()));
        }
    }
}

/// The anchor of every point: a control point near it. A control point is
/// its own anchor; a refined or end-cap point takes the anchor of the input
/// with the largest weight in its row (the first of equals). The
/// refinement paths keep each point as its difference from its anchor's
/// control point, and sum `w · ((anchor(q) − anchor(p)) + δ(q))` over a
/// row: every term is of the size of the neighbourhood, not of the
/// coordinates, so `f32` rounding stays local (see [`PointPath`]).
pub(crate) fn anchors(table: &PatchTable) -> Vec<u32> {
    let layout = Layout::new(table);
    let n0 = table.refinement().levels()[0].num_vertices();
    let mut anchor: Vec<u32> = (0..table.num_points() as u32).collect();
    let mut row = Vec::new();
    for g in n0..table.num_points() {
        layout.row(g, &mut row);
        let mut best: Option<(u32, f64)> = None;
        for &(c, w) in &row {
            if best.is_none_or(|(_, b)| w.abs() > b) {
                best = Some((c, w.abs()));
            }
        }
        // Inputs come from levels above, so their anchors are set already.
        if let Some((c, _)) = best {
            anchor[g] = anchor[c as usize];
        }
    }
    anchor
}

/// The tiles of `table`: runs of ptex faces whose patches' rows (the
/// closure, per level) reach `tile_rows`, the rows renumbered into each
/// tile's slots ([module docs](self)).
pub(crate) fn build_tiles(table: &PatchTable, tile_rows: usize, anchor: &[u32]) -> Result<TileProgram> {
    let layout = Layout::new(table);
    let stages = layout.num_levels() + 1;
    let n0 = table.refinement().levels()[0].num_vertices();
    let num_points = table.num_points();
    // Per point: the tile that last reached it (+1) and whether it is one
    // of that tile's outputs (a patch point), its slot there, and whether a
    // tile writes it already.
    let mut mark = vec![0u32; num_points];
    let mut output = vec![0u32; num_points];
    let mut slot = vec![0u32; num_points];
    let mut written = vec![false; num_points];
    let mut program = TileProgram::default();
    let mut tile_headers: Vec<[u32; 3]> = Vec::new();
    let mut stage_ends: Vec<u32> = Vec::new();
    // The open tile's points, per stage.
    let mut per_stage: Vec<Vec<u32>> = vec![Vec::new(); stages];
    let mut work: Vec<u32> = Vec::new();
    let mut row = Vec::new();
    let mut rows_in_tile = 0usize;
    let mut tile_id = 1u32;
    let mut scratch = 0u64;

    // Patches by ptex face (the table orders them by level first).
    let patches = table.patches();
    let mut order: Vec<u32> = (0..patches.len() as u32).collect();
    order.sort_by_key(|&p| patches[p as usize].param.face_id());
    let mut i = 0usize;
    while i < order.len() {
        let ptex = patches[order[i] as usize].param.face_id();
        while i < order.len() && patches[order[i] as usize].param.face_id() == ptex {
            for &g in table.patch_points(order[i] as usize) {
                let gi = g as usize;
                if gi < n0 {
                    continue;
                }
                output[gi] = tile_id;
                if mark[gi] != tile_id {
                    mark[gi] = tile_id;
                    work.push(g);
                }
            }
            i += 1;
        }
        // The closure: every row the new points read, down to the controls.
        while let Some(g) = work.pop() {
            let gi = g as usize;
            per_stage[layout.stage(gi)].push(g);
            rows_in_tile += 1;
            layout.row(gi, &mut row);
            for &(c, _) in &row {
                let ci = c as usize;
                if ci >= n0 && mark[ci] != tile_id {
                    mark[ci] = tile_id;
                    work.push(c);
                }
            }
        }
        if rows_in_tile == 0 || (rows_in_tile < tile_rows && i < order.len()) {
            continue;
        }
        // Close the tile: slots by stage, then by point; ops stage by stage.
        let mut next_slot = 0u32;
        for list in per_stage.iter_mut() {
            list.sort_unstable();
            for &g in list.iter() {
                slot[g as usize] = next_slot;
                next_slot += 1;
            }
        }
        let first_stage = u32_len("tile stages", stage_ends.len())?;
        for list in per_stage.iter().filter(|l| !l.is_empty()) {
            for &g in list {
                let gi = g as usize;
                layout.row(gi, &mut row);
                let first = u32_len("tile entries", program.entries.len())?;
                for &(c, w) in &row {
                    let col = if (c as usize) < n0 { GLOBAL | c } else { slot[c as usize] };
                    program.entries.push([col, (w as f32).to_bits(), anchor[c as usize], anchor[gi]]);
                }
                let end = u32_len("tile entries", program.entries.len())?;
                let out = if output[gi] == tile_id && !written[gi] {
                    written[gi] = true;
                    program.written += 1;
                    g
                } else {
                    NONE
                };
                program.ops.push([first, end, slot[gi], out]);
            }
            stage_ends.push(u32_len("tile ops", program.ops.len())?);
        }
        let end_stage = u32_len("tile stages", stage_ends.len())?;
        tile_headers.push([first_stage, end_stage, u32_len("tile slots", scratch)?]);
        scratch += u64::from(next_slot);
        for list in per_stage.iter_mut() {
            list.clear();
        }
        rows_in_tile = 0;
        tile_id += 1;
    }
    program.num_tiles = u32_len("tiles", tile_headers.len())?;
    program.header = tile_headers.iter().flatten().copied().collect();
    program.stage_base = u32_len("tile header", program.header.len())?;
    program.header.extend_from_slice(&stage_ends);
    program.scratch_slots = scratch;
    Ok(program)
}

fn u32_len(what: &'static str, n: impl TryInto<u64>) -> Result<u32> {
    let n = n.try_into().unwrap_or(u64::MAX);
    Ok(program::to_u32(what, n)?)
}

/// The host side of the level-by-level program.
#[derive(Clone, Debug, Default, PartialEq)]
struct LevelRows {
    /// Row offsets into `entries`, all stages' rows concatenated.
    offsets: Vec<u32>,
    /// Per entry: the column's point (`GLOBAL |` it for a control point),
    /// weight bits, the anchor of the column's point and of the row's point.
    entries: Vec<[u32; 4]>,
    /// Per stage: first row, rows, first point written.
    stages: Vec<(u32, u32, u32)>,
}

fn build_levels(table: &PatchTable, anchor: &[u32]) -> Result<LevelRows> {
    let layout = Layout::new(table);
    let n0 = table.refinement().levels()[0].num_vertices();
    let mut out = LevelRows { offsets: vec![0], ..LevelRows::default() };
    let push_stage = |out: &mut LevelRows, src: usize, dst: usize, rows: &mut dyn Iterator<Item = (&[u32], &[f64])>| {
        let first = out.offsets.len() - 1;
        for (cols, ws) in rows {
            let g = dst + out.offsets.len() - 1 - first;
            out.entries.extend(cols.iter().zip(ws).map(|(&c, &w)| {
                let q = src + c as usize;
                let col = if q < n0 { GLOBAL | q as u32 } else { q as u32 };
                [col, (w as f32).to_bits(), anchor[q], anchor[g]]
            }));
            out.offsets.push(u32_len("level entries", out.entries.len())?);
        }
        let count = out.offsets.len() - 1 - first;
        if count > 0 {
            out.stages.push((u32_len("level rows", first)?, u32_len("level rows", count)?, u32_len("points", dst)?));
        }
        Ok::<(), crate::AdaptiveGpuError>(())
    };
    for (k, st) in table.refinement().stencils().iter().enumerate() {
        let mut rows = (0..st.num_rows()).map(|r| st.row(r));
        push_stage(&mut out, layout.level_start[k], layout.level_start[k + 1], &mut rows)?;
    }
    // The end caps' rows written out: they share their conversions (see
    // `EndCapRows`), the program takes each row on its own.
    let caps = table.end_cap_rows().to_rows();
    let mut rows = (0..caps.num_rows()).map(|r| caps.row(r));
    push_stage(&mut out, 0, table.num_level_points(), &mut rows)?;
    Ok(out)
}

/// A point path on the device other than the composed matrix.
#[derive(Debug)]
pub(crate) enum Refine {
    /// [`PointPath::PerLevel`].
    Levels {
        offsets: wgpu::Buffer,
        entries: wgpu::Buffer,
        /// (first row, rows, first point read, first point written).
        stages: Vec<Stage>,
        rows: u64,
        nnz: u64,
    },
    /// [`PointPath::PerTile`].
    Tiles {
        header: wgpu::Buffer,
        ops: wgpu::Buffer,
        entries: wgpu::Buffer,
        num_tiles: u32,
        stage_base: u32,
        scratch_slots: u64,
        rows: u64,
        nnz: u64,
        written: u64,
    },
}

/// The entry points of `refine.wgsl`.
pub(crate) const REFINE_KERNELS: [&str; 2] = ["level_rows", "tile_rows"];

impl Refine {
    /// The level-by-level program ([`PointPath::PerLevel`]), uploaded.
    pub(crate) fn levels(ctx: &GpuContext, table: &PatchTable, anchor: &[u32]) -> Result<Refine> {
        let l = build_levels(table, anchor)?;
        let stages = l.stages.iter().map(|&(first, count, dst)| Stage { first, count, dst }).collect();
        Ok(Refine::Levels {
            offsets: program::upload(ctx, "level row offsets", &l.offsets)?,
            entries: program::upload(ctx, "level row entries", &l.entries)?,
            stages,
            rows: (l.offsets.len() - 1) as u64,
            nnz: l.entries.len() as u64,
        })
    }

    /// The tile program ([`PointPath::PerTile`]) with tiles of about
    /// `tile_rows` rows, uploaded.
    pub(crate) fn tiles(ctx: &GpuContext, table: &PatchTable, tile_rows: usize, anchor: &[u32]) -> Result<Refine> {
        let t = build_tiles(table, tile_rows, anchor)?;
        Ok(Refine::Tiles {
            header: program::upload(ctx, "tile header", &t.header)?,
            ops: program::upload(ctx, "tile ops", &t.ops)?,
            entries: program::upload(ctx, "tile entries", &t.entries)?,
            num_tiles: t.num_tiles,
            stage_base: t.stage_base,
            scratch_slots: t.scratch_slots,
            rows: t.ops.len() as u64,
            nnz: t.entries.len() as u64,
            written: t.written,
        })
    }

    /// Rows computed per frame (tiles: duplicates included).
    pub(crate) fn rows(&self) -> u64 {
        match self {
            Refine::Levels { rows, .. } | Refine::Tiles { rows, .. } => *rows,
        }
    }

    /// Entries read per frame.
    pub(crate) fn nnz(&self) -> u64 {
        match self {
            Refine::Levels { nnz, .. } | Refine::Tiles { nnz, .. } => *nnz,
        }
    }

    /// Scratch elements per channel (tiles), or 0.
    pub(crate) fn scratch_slots(&self) -> u64 {
        match self {
            Refine::Levels { .. } => 0,
            Refine::Tiles { scratch_slots, .. } => *scratch_slots,
        }
    }

    /// Number of passes [`Refine::record`] records after the copy.
    pub(crate) fn passes(&self) -> usize {
        match self {
            Refine::Levels { stages, .. } => stages.len(),
            Refine::Tiles { num_tiles, .. } => usize::from(*num_tiles > 0),
        }
    }

    /// Device bytes of the program.
    pub(crate) fn device_bytes(&self) -> u64 {
        match self {
            Refine::Levels { offsets, entries, .. } => offsets.size() + entries.size(),
            Refine::Tiles { header, ops, entries, .. } => header.size() + ops.size() + entries.size(),
        }
    }

    /// Per pass: its kernel name and the bytes it moves at least (the
    /// program, the rows read and written; tiles: scratch traffic too).
    pub(crate) fn pass_bytes(&self, channels: u64) -> Vec<(&'static str, u64)> {
        match self {
            Refine::Levels { stages, offsets: _, entries: _, .. } => stages
                .iter()
                .map(|s| ("level_rows", 4 * (u64::from(s.count) + 1) + 4 * 3 * u64::from(s.count) * channels))
                .collect(),
            Refine::Tiles { num_tiles, rows, nnz, written, header, .. } => {
                if *num_tiles == 0 {
                    return Vec::new();
                }
                let bytes = header.size() + 16 * rows + 16 * nnz + 4 * channels * (2 * rows + written);
                vec![("tile_rows", bytes)]
            }
        }
    }

    /// Records the control points' copy into `points` and the passes that
    /// compute the other points.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        kernels: &[Kernel],
        control: &GpuBuffer<f32>,
        channels: usize,
        points: &GpuBuffer<f32>,
        scratch: &GpuBuffer<f32>,
        mut timer: Option<&mut PassTimer>,
    ) -> subla_gpu::Result<()> {
        encoder.copy_buffer_to_buffer(control.as_wgpu(), 0, points.as_wgpu(), 0, control.byte_len());
        let d = channels as u32;
        match self {
            Refine::Levels { offsets, entries, stages, .. } => {
                for s in stages {
                    let params = program::uniform(ctx, "level rows params", &[s.first, s.count, 0, s.dst, d, 0, 0, 0]);
                    let table = [Some(&params), Some(offsets), None, Some(entries), None, Some(points.as_wgpu())];
                    let writes = timer.as_deref_mut().and_then(|t| t.writes("level_rows"));
                    program::dispatch_timed(ctx, encoder, &kernels[0], &table, u64::from(s.count), writes)?;
                }
            }
            Refine::Tiles { header, ops, entries, num_tiles, stage_base, .. } => {
                if *num_tiles == 0 {
                    return Ok(());
                }
                let params = program::uniform(ctx, "tile rows params", &[*num_tiles, *stage_base, 0, 0, d, 0, 0, 0]);
                let table = [
                    Some(&params),
                    Some(header),
                    Some(ops),
                    Some(entries),
                    Some(scratch.as_wgpu()),
                    Some(points.as_wgpu()),
                ];
                let writes = timer.and_then(|t| t.writes("tile_rows"));
                let items = u64::from(*num_tiles) * u64::from(program::WORKGROUP);
                program::dispatch_timed(ctx, encoder, &kernels[1], &table, items, writes)?;
            }
        }
        Ok(())
    }
}

/// A missing frame buffer (internal).
pub(crate) fn no_frame() -> GpuError {
    GpuError::Internal { operation: "limit evaluation", message: "no frame buffers".into() }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ndarray::Array2;
    use subla_adaptive::{EndCap, PatchTable, SparseRefinement};
    use subla_algebra::Par;
    use subla_mesh::Validation;
    use subla_mesh::obj::read_obj;

    use super::*;

    fn table(name: &str, iso: u32, end_cap: EndCap) -> (PatchTable, Array2<f64>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../../data/meshes/osd/{name}.obj"));
        let mut d = read_obj(path, Validation::OpenSubdiv).expect("mesh");
        if d.left_handed {
            d.mesh = d.mesh.reversed_winding().expect("reversed");
        }
        let t = PatchTable::new(SparseRefinement::build(&d.mesh, iso, None).expect("refine"), end_cap).expect("table");
        (t, d.positions().to_owned())
    }

    /// One anchored term (see the shader): `w · ((a(q) − a(p)) + d(q))`,
    /// checking that what it reads was computed.
    fn term(acc: &mut [f64; 3], w: u32, anchor_q: [f64; 3], anchor_p: [f64; 3], d: Option<[f64; 3]>) {
        let w = f64::from(f32::from_bits(w));
        let d = d.unwrap_or([0.0; 3]);
        assert!(d[0].is_finite() && anchor_q[0].is_finite(), "a row reads a point not computed yet");
        for k in 0..3 {
            acc[k] += w * ((anchor_q[k] - anchor_p[k]) + d[k]);
        }
    }

    /// Anchored points (control points as they are, others as differences
    /// from their anchors) back to absolute ones.
    fn absolute(points: &[[f64; 3]], anchor: &[u32], n0: usize) -> Vec<[f64; 3]> {
        (0..points.len())
            .map(|g| {
                if g < n0 {
                    return points[g];
                }
                let (a, d) = (points[anchor[g] as usize], points[g]);
                [a[0] + d[0], a[1] + d[1], a[2] + d[2]]
            })
            .collect()
    }

    /// Runs a tile program on the host, in `f64` with the program's `f32`
    /// weights, in the kernel's order; returns the (anchored) points and
    /// how many times each was written.
    fn run_tiles(p: &TileProgram, n0: usize, num_points: usize, x: &Array2<f64>) -> (Vec<[f64; 3]>, Vec<u32>) {
        let mut points = vec![[f64::NAN; 3]; num_points];
        for (i, row) in x.outer_iter().enumerate() {
            points[i] = [row[0], row[1], row[2]];
        }
        let mut writes = vec![0u32; num_points];
        let mut scratch = vec![[f64::NAN; 3]; p.scratch_slots as usize];
        for t in 0..p.num_tiles as usize {
            let [s0, s1, base] = [p.header[3 * t], p.header[3 * t + 1], p.header[3 * t + 2]];
            for s in s0..s1 {
                let first = if s == 0 { 0 } else { p.header[(p.stage_base + s - 1) as usize] };
                let end = p.header[(p.stage_base + s) as usize];
                for op in &p.ops[first as usize..end as usize] {
                    let mut acc = [0f64; 3];
                    for &[c, w, aq, ap] in &p.entries[op[0] as usize..op[1] as usize] {
                        assert!((aq as usize) < n0 && (ap as usize) < n0, "anchors are control points");
                        let d = (c & GLOBAL == 0).then(|| scratch[(base + c) as usize]);
                        term(&mut acc, w, points[aq as usize], points[ap as usize], d);
                    }
                    scratch[(base + op[2]) as usize] = acc;
                    if op[3] != NONE {
                        assert!(op[3] as usize >= n0, "a tile writes control point {}", op[3]);
                        points[op[3] as usize] = acc;
                        writes[op[3] as usize] += 1;
                    }
                }
            }
        }
        (points, writes)
    }

    /// Every point a patch reads is computed by exactly one tile, equal to
    /// the host's points, whatever the tile size; reads never run ahead of
    /// writes within a tile (slots of a stage below, computed before).
    #[test]
    fn tiles_compute_every_patch_point_once() {
        for (name, iso, end_cap) in [
            ("catmark_pyramid", 3, EndCap::GregoryBasis),
            ("catmark_edgecorner", 2, EndCap::GregoryBasis),
            ("catmark_gregory_test2", 2, EndCap::BSplineBasis),
            ("catmark_hole_test1", 2, EndCap::GregoryBasis),
        ] {
            let (t, x) = table(name, iso, end_cap);
            let want = t.points_of(x.view(), Par::Seq);
            let n0 = x.nrows();
            let anchor = anchors(&t);
            let mut read = vec![false; t.num_points()];
            for p in 0..t.patches().len() {
                for &g in t.patch_points(p) {
                    read[g as usize] = true;
                }
            }
            let mut tiles_seen = Vec::new();
            for rows in [1, 64, TILE_ROWS, usize::MAX] {
                let p = build_tiles(&t, rows, &anchor).expect("tiles");
                let (got, writes) = run_tiles(&p, n0, t.num_points(), &x);
                let got = absolute(&got, &anchor, n0);
                for g in n0..t.num_points() {
                    assert_eq!(
                        writes[g],
                        u32::from(read[g]),
                        "{name} rows {rows}: point {g} written {} times",
                        writes[g]
                    );
                    if read[g] {
                        for k in 0..3 {
                            let d = (got[g][k] - want[[g, k]]).abs();
                            assert!(d <= 1e-6 * (1.0 + want[[g, k]].abs()), "{name} rows {rows}: point {g} off by {d}");
                        }
                    }
                }
                assert_eq!(p.written as usize, (n0..t.num_points()).filter(|&g| read[g]).count());
                tiles_seen.push(p.num_tiles);
            }
            if !read[n0..].contains(&true) {
                // Patches on control points alone: nothing to refine.
                assert!(tiles_seen.iter().all(|&n| n == 0), "{name}: {tiles_seen:?}");
                continue;
            }
            // Smaller tiles: more of them, and one tile for all at the end.
            assert!(tiles_seen.windows(2).all(|w| w[0] >= w[1]), "{name}: tile counts {tiles_seen:?}");
            assert_eq!(*tiles_seen.last().expect("a size"), 1, "{name}: one tile for an unbounded size");
            assert!(tiles_seen[0] > 1, "{name}: {tiles_seen:?}");
        }
    }

    /// The level-by-level rows are the refinement's stencils and the end
    /// caps' rows, stage by stage, with every point computed once.
    #[test]
    fn level_rows_cover_every_point() {
        let (t, x) = table("catmark_pyramid", 3, EndCap::GregoryBasis);
        let anchor = anchors(&t);
        let l = build_levels(&t, &anchor).expect("levels");
        let n0 = x.nrows();
        let mut points = vec![[f64::NAN; 3]; t.num_points()];
        for (i, row) in x.outer_iter().enumerate() {
            points[i] = [row[0], row[1], row[2]];
        }
        for &(first, count, dst) in &l.stages {
            for i in 0..count as usize {
                let r = first as usize + i;
                let mut acc = [0f64; 3];
                for &[c, w, aq, ap] in &l.entries[l.offsets[r] as usize..l.offsets[r + 1] as usize] {
                    assert_eq!(ap, anchor[dst as usize + i], "row {r}: the row's anchor");
                    let d = (c & GLOBAL == 0).then(|| points[c as usize]);
                    term(&mut acc, w, points[aq as usize], points[ap as usize], d);
                }
                points[dst as usize + i] = acc;
            }
        }
        let points = absolute(&points, &anchor, n0);
        let want = t.points_of(x.view(), Par::Seq);
        for g in n0..t.num_points() {
            for k in 0..3 {
                assert!((points[g][k] - want[[g, k]]).abs() <= 1e-6 * (1.0 + want[[g, k]].abs()), "point {g}");
            }
        }
    }

    /// Anchors are control points near their points: a refined point's
    /// anchor is the anchor of its heaviest input, so it lies within the
    /// support of the point's stencil at level 0 (checked with the composed
    /// rows: the anchor has a nonzero weight in the point's row).
    #[test]
    fn anchors_are_in_the_support() {
        let (t, _) = table("catmark_gregory_test2", 2, EndCap::GregoryBasis);
        let anchor = anchors(&t);
        let m = t.point_matrix().expect("point matrix");
        let n0 = t.refinement().levels()[0].num_vertices();
        for (g, &a) in anchor.iter().enumerate() {
            let a = a as usize;
            assert!(a < n0, "point {g}: anchor {a} is not a control point");
            if g < n0 {
                assert_eq!(a, g);
                continue;
            }
            let (cols, _) = m.as_ref().row(g);
            assert!(cols.contains(&(a as u32)), "point {g}: anchor {a} is outside its support {cols:?}");
        }
    }
}
