//! The control mesh's connectivity built on the GPU from its faces alone
//! (`shaders/topology_build.wgsl`): only `face_ptr`, `face_verts` and the
//! vertex count go up, and every array of a [`GpuTopology`] is derived on
//! the device, equal array for array to the CPU [`Topology::build`] on
//! **manifold** input.
//!
//! # What is built
//! The faces are the mesh matrix `M` in traversal order (Mlakar et al.
//! 2020, §3.1); each entry is a corner. The edges are the nonzeros of the
//! lower triangle of `E = M·Mᵀ` mapped by `Q_c + Q_c⁻¹` (Eq. 4; entry
//! `(hi, lo)`), numbered column by column, that is by `(lo, hi)`, as
//! [`Topology::build`] numbers them on a manifold mesh:
//!
//! ```text
//!   faces            (0 1 2 3)        (1 4 5 2)
//!   corners           0  1  2  3       4  5  6  7
//!   outgoing edge    01 12 23 03      14 45 25 12      (lo, hi) of corner -> next
//!   uses by lo       lo=0: [0 3]  lo=1: [1 7 4]  lo=2: [2 6]  lo=4: [5]
//!                    (each slice sorted by (hi, corner): a pair's uses are
//!                    contiguous and in corner order)
//!   edges            01 03 12 14 23 25 45          ids 0..7, the distinct pairs
//!   edge_corners     [0][3][1 7][4][2][6][5]       = the slices, concatenated
//!   edge_corner_ptr  0 1 2 4 5 6 7 8
//! ```
//!
//! # Kernels and readbacks
//! Three submissions, each followed by one readback of 8 bytes (these are
//! the only ones):
//! 1. `corners_main`: the face of each corner (binary search in
//!    `face_ptr`), the ends of its outgoing edge, and by integer atomics the
//!    corners per vertex (Alg. 1's valences) and per low end. One device
//!    exclusive scan ([`crate::scan`]) of both gives `vertex_corner_ptr`
//!    and the offsets of the uses by low end; **the scan reads back its total**
//!    (`2 |c|`, checked).
//! 2. `pointers_main`; `place_main` places every corner into its vertex's
//!    and its low end's slice (atomic cursors, Alg. 1's offsets);
//!    `sort_slices` sorts the vertex slices by corner and the low-end slices
//!    by `(hi, corner)` (so placement order never shows: a slice of up to
//!    2048 items by one invocation, a longer one by `rank_long` and
//!    `copy_long`, one invocation per item, so that no invocation loops
//!    over more than one slice: software drivers end an invocation's loops
//!    after 65535 iterations in all); `count_edges`
//!    counts the distinct high ends of each low end (its edges) and, by
//!    atomics, the edges per high end. One scan of both gives the edge ids
//!    per low end and `vertex_edge_ptr`; **its total `2 |e|` is read back**
//!    to size the edge arrays (and [`GpuTopology::num_edges`]).
//! 3. `edge_ends` (edges, `edge_corner_ptr`, `corner_edges`: each low end's
//!    sorted slice is its edges' uses, so `edge_corners` is that array),
//!    `edge_tags_main`, `vertex_edges_main` (closed-form place at the low
//!    end, atomic at the high end), `sort_slices` on the vertex edge lists,
//!    `vertex_tags_main`, `vertex_fans`. **An 8-byte status word is read
//!    back**: the kinds of non-manifold configuration found and the lowest
//!    vertex involved.
//!
//! Every output element is written by one invocation or built by integer
//! atomics whose result does not depend on their order; atomically placed
//! lists are sorted by a total order afterwards, so repeated builds give
//! the same bits.
//!
//! # What stays on the CPU
//! Non-manifold meshes (as [`Topology::is_manifold`] defines them: a
//! degenerate edge, an edge with more than two uses, used twice in one
//! direction or twice by one face, a vertex repeated in a face, a vertex
//! whose faces form more than one fan) are detected on the device and
//! refused with [`GpuError::NotManifold`] after the build, naming the kinds
//! found and the lowest vertex involved: OpenSubdiv's edge rules for them
//! (separate edges for one vertex pair) are the CPU's ([`Topology::build`]).
//! Malformed faces are refused before anything is uploaded, with
//! [`GpuError::InvalidFaces`] naming the face.

#[cfg(doc)]
use subla_mesh::Topology;

use super::GpuTopology;
use crate::program::{self, Kernel, to_u32, uniform, upload_array, zeroed};
use crate::{FaceDefect, FacePointerDefect, GpuBuffer, GpuContext, GpuError, ManifoldDefect, ManifoldDefects};

/// `topology_build.wgsl`: the device topology build (several entry points).
pub const TOPOLOGY_BUILD: &str = include_str!("../../shaders/topology_build.wgsl");

/// The operation named by this module's refusals.
const OPERATION: &str = "the GPU topology build";

/// The most corners at one vertex that the build takes on a device whose
/// driver ends an invocation's loops after 65535 iterations in all (a
/// software adapter): the invocations of a vertex loop over about three
/// times its corners (its edges' uses, its fan), plus a binary search.
pub const SOFTWARE_MAX_CORNERS: u32 = 21_000;

/// Binding numbers of `topology_build.wgsl`.
mod slot {
    pub(super) const PARAMS: usize = 0;
    pub(super) const FACE_PTR: usize = 1;
    pub(super) const FACE_VERTS: usize = 2;
    pub(super) const CORNER_FACE: usize = 3;
    pub(super) const CORNER_LO: usize = 4;
    pub(super) const CORNER_HI: usize = 5;
    pub(super) const COUNTS_ATOMIC: usize = 6;
    pub(super) const COUNTS: usize = 7;
    pub(super) const STATUS: usize = 8;
    pub(super) const VERTEX_CORNER_PTR: usize = 9;
    pub(super) const LO_PTR: usize = 10;
    pub(super) const CURSOR: usize = 11;
    pub(super) const VERTEX_CORNERS: usize = 12;
    pub(super) const HALF: usize = 13;
    pub(super) const ECOUNTS_ATOMIC: usize = 14;
    pub(super) const ESCAN: usize = 15;
    pub(super) const EDGES: usize = 16;
    pub(super) const EDGE_CORNER_PTR: usize = 17;
    pub(super) const CORNER_EDGE: usize = 18;
    pub(super) const VERTEX_EDGE_PTR: usize = 19;
    pub(super) const EDGE_TAGS: usize = 20;
    pub(super) const VERTEX_EDGES: usize = 21;
    pub(super) const VERTEX_TAGS: usize = 22;
    pub(super) const SORT_PARAMS: usize = 23;
    pub(super) const SLICE_PTR: usize = 24;
    pub(super) const ITEMS: usize = 25;
    pub(super) const KEYS: usize = 26;
    pub(super) const SORTED: usize = 27;
    pub(super) const COUNT: usize = 28;
}

/// The status bits of `topology_build.wgsl` (`STATUS_*`), with the kind
/// each reports.
const STATUS_KINDS: [(u32, ManifoldDefect); 6] = [
    (1, ManifoldDefect::DegenerateEdge),
    (2, ManifoldDefect::EdgeOfManyFaces),
    (4, ManifoldDefect::InconsistentOrientation),
    (8, ManifoldDefect::EdgeTwiceInFace),
    (16, ManifoldDefect::RepeatedVertex),
    (32, ManifoldDefect::BowTieVertex),
];

/// One binding of a dispatch table.
type Table<'a> = [Option<&'a wgpu::Buffer>; slot::COUNT];

/// The refusal of malformed faces, naming what is wrong.
fn bad_faces(defect: impl Into<FaceDefect>) -> GpuError {
    GpuError::InvalidFaces { operation: OPERATION, defect: defect.into() }
}

/// Checks the faces as [`Topology::build`] does (pointer array, orders,
/// vertex indices, sizes) and returns `[vertices, faces, corners, largest
/// face order]`.
fn check_faces(num_vertices: usize, face_ptr: &[u32], face_verts: &[u32]) -> Result<[u32; 4], GpuError> {
    // 2 nv + 1 counters and a scan total of 2 nc must fit u32.
    let nv = to_u32("topology vertices", 2 * num_vertices as u64 + 1)?;
    let nv = (nv - 1) / 2;
    let nc = to_u32("topology corners", 2 * face_verts.len() as u64)? / 2;
    let corners = face_verts.len();
    match *face_ptr {
        [] => return Err(bad_faces(FacePointerDefect::Empty { corners })),
        [first, ..] if first != 0 => return Err(bad_faces(FacePointerDefect::Start { first })),
        [.., last] if last != nc => return Err(bad_faces(FacePointerDefect::End { last, corners })),
        _ => {}
    }
    let nf = face_ptr.len() - 1;
    let mut max_order = 0;
    for (face, w) in face_ptr.windows(2).enumerate() {
        let order = w[1]
            .checked_sub(w[0])
            .ok_or_else(|| bad_faces(FacePointerDefect::Decreases { face, start: w[0], end: w[1] }))?;
        if order < 3 {
            return Err(bad_faces(FaceDefect::TooFewVertices { face, order: order as usize }));
        }
        max_order = max_order.max(order);
    }
    if let Some(c) = face_verts.iter().position(|&v| v >= nv) {
        let face = face_ptr.partition_point(|&p| p as usize <= c) - 1;
        return Err(bad_faces(FaceDefect::VertexOutOfRange { face, vertex: face_verts[c], num_vertices }));
    }
    Ok([nv, to_u32("topology faces", nf as u64)?, nc, max_order])
}

/// A device array of `len` zeros, checked against the binding limit.
/// Refuses a vertex of more than `max` corners (checked faces), naming the
/// first.
fn check_valences(nv: u32, face_verts: &[u32], max: u32) -> Result<(), GpuError> {
    if face_verts.len() <= max as usize {
        return Ok(());
    }
    let mut corners = vec![0u32; nv as usize];
    for &v in face_verts {
        corners[v as usize] += 1;
    }
    match corners.iter().position(|&n| n > max) {
        Some(v) => {
            Err(GpuError::ValenceOverDriverLimit { operation: OPERATION, vertex: v as u32, corners: corners[v], max })
        }
        None => Ok(()),
    }
}

fn alloc(ctx: &GpuContext, what: &'static str, len: u32) -> Result<GpuBuffer<u32>, GpuError> {
    zeroed(ctx, what, u64::from(len))
}

/// A dispatch table holding `buffers` at their slots and `params` at
/// [`slot::PARAMS`].
fn table<'a>(params: &'a wgpu::Buffer, buffers: &[(usize, &'a GpuBuffer<u32>)]) -> Table<'a> {
    let mut t: Table<'a> = [None; slot::COUNT];
    t[slot::PARAMS] = Some(params);
    for &(s, b) in buffers {
        t[s] = Some(b.as_wgpu());
    }
    t
}

/// Records with `record` into one encoder and submits it, inside error
/// scopes.
fn submit(
    ctx: &GpuContext,
    what: &'static str,
    record: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<(), GpuError>,
) -> Result<(), GpuError> {
    ctx.scoped(what, || {
        let mut encoder = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
        record(&mut encoder)?;
        ctx.queue().submit([encoder.finish()]);
        Ok(())
    })
}

/// The compiled pipelines of `topology_build.wgsl` on one context; build
/// once and derive the topology of many meshes.
#[derive(Debug)]
pub struct TopologyKernels {
    corners: Kernel,
    pointers: Kernel,
    place: Kernel,
    sort: Kernel,
    rank_long: Kernel,
    copy_long: Kernel,
    count_edges: Kernel,
    edge_ends: Kernel,
    edge_tags: Kernel,
    vertex_edges: Kernel,
    vertex_tags: Kernel,
    vertex_fans: Kernel,
}

/// One sort of slices: `items[slice_ptr[k] .. slice_ptr[k + 1]]` for `k <
/// slices`, by `(keys[item], item)` if `keyed`, else by item.
struct Sort<'a> {
    params: &'a wgpu::Buffer,
    slice_ptr: &'a GpuBuffer<u32>,
    items: &'a GpuBuffer<u32>,
    keys: &'a GpuBuffer<u32>,
    /// Scratch of `total` items for the long slices.
    sorted: &'a GpuBuffer<u32>,
    slices: u32,
    /// Items in all slices.
    total: u32,
}

impl TopologyKernels {
    /// Compiles the kernels on `ctx`.
    ///
    /// # Errors
    /// [`GpuError::Shader`] if the WGSL does not validate; wgpu errors.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let kernels = program::compile(
            ctx,
            "topology_build.wgsl",
            TOPOLOGY_BUILD,
            &[
                "corners_main",
                "pointers_main",
                "place_main",
                "sort_slices",
                "rank_long",
                "copy_long",
                "count_edges",
                "edge_ends",
                "edge_tags_main",
                "vertex_edges_main",
                "vertex_tags_main",
                "vertex_fans",
            ],
        )?;
        let mut k = kernels.into_iter();
        let mut kernel =
            || k.next().ok_or(GpuError::Internal { operation: "topology build", message: "missing pipeline".into() });
        Ok(TopologyKernels {
            corners: kernel()?,
            pointers: kernel()?,
            place: kernel()?,
            sort: kernel()?,
            rank_long: kernel()?,
            copy_long: kernel()?,
            count_edges: kernel()?,
            edge_ends: kernel()?,
            edge_tags: kernel()?,
            vertex_edges: kernel()?,
            vertex_tags: kernel()?,
            vertex_fans: kernel()?,
        })
    }

    /// Records one [`Sort`] with the bindings of `base`.
    fn record_sort(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        base: &Table<'_>,
        sort: &Sort<'_>,
    ) -> Result<(), GpuError> {
        let mut t = *base;
        t[slot::SORT_PARAMS] = Some(sort.params);
        t[slot::SLICE_PTR] = Some(sort.slice_ptr.as_wgpu());
        t[slot::ITEMS] = Some(sort.items.as_wgpu());
        t[slot::KEYS] = Some(sort.keys.as_wgpu());
        t[slot::SORTED] = Some(sort.sorted.as_wgpu());
        // Short slices one invocation each; long ones one invocation per
        // item (no invocation loops over more than one slice's length).
        program::dispatch(ctx, encoder, &self.sort, &t, u64::from(sort.slices))?;
        program::dispatch(ctx, encoder, &self.rank_long, &t, u64::from(sort.total))?;
        program::dispatch(ctx, encoder, &self.copy_long, &t, u64::from(sort.total))
    }

    /// The connectivity of the faces `face_ptr` / `face_verts` over
    /// `num_vertices` vertices (the mesh matrix in traversal order, as
    /// [`Topology::build`] takes it), built on the device: every array
    /// equals [`Topology::build`]'s (compare with [`GpuTopology::download`]
    /// and [`super::TopologyArrays::from_topology`]). The result is
    /// manifold.
    ///
    /// Waits for the device three times, each time reading back 8 bytes:
    /// the totals of two scans (with the scan's overflow word; the second
    /// total, `2 |e|`, sizes the edge arrays) and the status word that tells
    /// whether the mesh is manifold (see the [module docs](self)).
    ///
    /// Faces of any order are built (the quad split of `subla-catmark-gpu`
    /// then takes the result if no face is too large for it).
    ///
    /// # Errors
    /// * [`GpuError::InvalidFaces`] (operation `"the GPU topology build"`),
    ///   before anything is uploaded, if the faces are malformed: a
    ///   `face_ptr` that does not run from 0 to the number of corners or
    ///   decreases, a face of fewer than 3 vertices, or a vertex index
    ///   `>= num_vertices` (the [`FaceDefect`] says which, naming the face);
    /// * [`GpuError::NotManifold`] (operation `"the GPU topology build"`) if the
    ///   mesh is not manifold, with the kinds of configuration found and
    ///   the lowest vertex involved (build it on the CPU with
    ///   [`Topology::build`]);
    /// * [`GpuError::TooLarge`] when a count does not fit the kernels' `u32`
    ///   indices or an array exceeds the binding limit;
    /// * [`GpuError::Internal`] if a scan total or the status word read back
    ///   is inconsistent (a kernel or device fault); wgpu errors.
    pub fn build(
        &self,
        ctx: &GpuContext,
        num_vertices: usize,
        face_ptr: &[u32],
        face_verts: &[u32],
    ) -> Result<GpuTopology, GpuError> {
        let [nv, nf, nc, max_order] = check_faces(num_vertices, face_ptr, face_verts)?;
        if ctx.adapter_info().device_type == wgpu::DeviceType::Cpu {
            check_valences(nv, face_verts, SOFTWARE_MAX_CORNERS)?;
        }
        let fault = |message: String| GpuError::Internal { operation: "topology build", message };

        // 1. Corner faces, corner ends, counts.
        let face_ptr = upload_array(ctx, "topology face_ptr", face_ptr)?;
        let face_verts = upload_array(ctx, "topology face_verts", face_verts)?;
        let corner_face = alloc(ctx, "topology corner_faces", nc)?;
        let corner_lo = alloc(ctx, "topology corner low ends", nc)?;
        let corner_hi = alloc(ctx, "topology corner high ends", nc)?;
        let mut counts = alloc(ctx, "topology corner counts", 2 * nv + 1)?;
        let status = upload_array(ctx, "topology status", &[0, u32::MAX])?;
        let params = uniform(ctx, "topology params", &[nv, nf, nc, 0]);
        {
            let t = table(
                &params,
                &[
                    (slot::FACE_PTR, &face_ptr),
                    (slot::FACE_VERTS, &face_verts),
                    (slot::CORNER_FACE, &corner_face),
                    (slot::CORNER_LO, &corner_lo),
                    (slot::CORNER_HI, &corner_hi),
                    (slot::COUNTS_ATOMIC, &counts),
                    (slot::STATUS, &status),
                ],
            );
            submit(ctx, "topology corners", |enc| program::dispatch(ctx, enc, &self.corners, &t, u64::from(nc)))?;
        }
        // Readback: the scan's total.
        let total = crate::scan::scan_exclusive_in_place(ctx, &mut counts)?;
        if u64::from(total) != 2 * u64::from(nc) {
            return Err(fault(format!("corner counts sum to {total}, expected {}", 2 * u64::from(nc))));
        }

        // 2. Placement, sorts, edge counts.
        let vertex_corner_ptr = alloc(ctx, "topology vertex_corner_ptr", nv + 1)?;
        let lo_ptr = alloc(ctx, "topology low-end pointers", nv + 1)?;
        let cursor = alloc(ctx, "topology cursors", 2 * nv)?;
        let vertex_corners = alloc(ctx, "topology vertex_corners", nc)?;
        let half = alloc(ctx, "topology edge_corners", nc)?;
        let mut ecounts = alloc(ctx, "topology edge counts", 2 * nv + 1)?;
        let by_corner = uniform(ctx, "topology sort params", &[nv, 0, nc, 0]);
        let by_hi = uniform(ctx, "topology sort params", &[nv, 1, nc, 0]);
        let sorted = alloc(ctx, "topology sort scratch", nc)?;
        {
            let t = table(
                &params,
                &[
                    (slot::FACE_VERTS, &face_verts),
                    (slot::CORNER_LO, &corner_lo),
                    (slot::CORNER_HI, &corner_hi),
                    (slot::COUNTS, &counts),
                    (slot::VERTEX_CORNER_PTR, &vertex_corner_ptr),
                    (slot::LO_PTR, &lo_ptr),
                    (slot::CURSOR, &cursor),
                    (slot::VERTEX_CORNERS, &vertex_corners),
                    (slot::HALF, &half),
                    (slot::ECOUNTS_ATOMIC, &ecounts),
                ],
            );
            let corners_sort = Sort {
                params: &by_corner,
                slice_ptr: &vertex_corner_ptr,
                items: &vertex_corners,
                keys: &corner_hi,
                sorted: &sorted,
                slices: nv,
                total: nc,
            };
            let half_sort = Sort {
                params: &by_hi,
                slice_ptr: &lo_ptr,
                items: &half,
                keys: &corner_hi,
                sorted: &sorted,
                slices: nv,
                total: nc,
            };
            submit(ctx, "topology placement", |enc| {
                program::dispatch(ctx, enc, &self.pointers, &t, u64::from(nv) + 1)?;
                program::dispatch(ctx, enc, &self.place, &t, u64::from(nc))?;
                self.record_sort(ctx, enc, &t, &corners_sort)?;
                self.record_sort(ctx, enc, &t, &half_sort)?;
                program::dispatch(ctx, enc, &self.count_edges, &t, u64::from(nv))
            })?;
        }
        // Readback: the scan's total, 2 |e| (edges by low end plus edges by
        // high end), which sizes the edge arrays.
        let total = crate::scan::scan_exclusive_in_place(ctx, &mut ecounts)?;
        let ne = total / 2;
        if total % 2 != 0 || ne > nc {
            return Err(fault(format!("edge counts sum to {total} for {nc} corners")));
        }

        // 3. Edges, edge uses, tags, vertex edges, manifold checks.
        let params = uniform(ctx, "topology params", &[nv, nf, nc, ne]);
        let edges = alloc(ctx, "topology edges", 2 * ne)?;
        let edge_corner_ptr = alloc(ctx, "topology edge_corner_ptr", ne + 1)?;
        let corner_edge = alloc(ctx, "topology corner_edges", nc)?;
        let vertex_edge_ptr = alloc(ctx, "topology vertex_edge_ptr", nv + 1)?;
        let edge_tags = alloc(ctx, "topology edge_tags", ne)?;
        let vertex_edges = alloc(ctx, "topology vertex_edges", 2 * ne)?;
        let vertex_tags = alloc(ctx, "topology vertex_tags", nv)?;
        let by_edge = uniform(ctx, "topology sort params", &[nv, 0, 2 * ne, 0]);
        let edge_sorted = alloc(ctx, "topology sort scratch", 2 * ne)?;
        {
            let t = table(
                &params,
                &[
                    (slot::FACE_PTR, &face_ptr),
                    (slot::FACE_VERTS, &face_verts),
                    (slot::CORNER_FACE, &corner_face),
                    (slot::CORNER_HI, &corner_hi),
                    (slot::STATUS, &status),
                    (slot::VERTEX_CORNER_PTR, &vertex_corner_ptr),
                    (slot::LO_PTR, &lo_ptr),
                    (slot::CURSOR, &cursor),
                    (slot::VERTEX_CORNERS, &vertex_corners),
                    (slot::HALF, &half),
                    (slot::ESCAN, &ecounts),
                    (slot::EDGES, &edges),
                    (slot::EDGE_CORNER_PTR, &edge_corner_ptr),
                    (slot::CORNER_EDGE, &corner_edge),
                    (slot::VERTEX_EDGE_PTR, &vertex_edge_ptr),
                    (slot::EDGE_TAGS, &edge_tags),
                    (slot::VERTEX_EDGES, &vertex_edges),
                    (slot::VERTEX_TAGS, &vertex_tags),
                ],
            );
            let edges_sort = Sort {
                params: &by_edge,
                slice_ptr: &vertex_edge_ptr,
                items: &vertex_edges,
                keys: &corner_hi,
                sorted: &edge_sorted,
                slices: nv,
                total: 2 * ne,
            };
            submit(ctx, "topology edges", |enc| {
                program::dispatch(ctx, enc, &self.edge_ends, &t, u64::from(nv) + 1)?;
                program::dispatch(ctx, enc, &self.edge_tags, &t, u64::from(ne))?;
                // The cursors of the high-end placement start from zero.
                enc.clear_buffer(cursor.as_wgpu(), 0, None);
                program::dispatch(ctx, enc, &self.vertex_edges, &t, u64::from(ne))?;
                self.record_sort(ctx, enc, &t, &edges_sort)?;
                program::dispatch(ctx, enc, &self.vertex_tags, &t, u64::from(nv))?;
                program::dispatch(ctx, enc, &self.vertex_fans, &t, u64::from(nv))
            })?;
        }
        // Readback: the status word.
        let words = status.download(ctx)?;
        let [bits, vertex] = words[..] else {
            return Err(fault(format!("read back {} status words, expected 2", words.len())));
        };
        if bits != 0 {
            let defects: ManifoldDefects =
                STATUS_KINDS.iter().filter(|&&(b, _)| bits & b != 0).map(|&(_, kind)| kind).collect();
            // The kernels set only these bits, each with a vertex of the
            // mesh: anything else is a kernel or device fault, not a
            // property of the mesh.
            if bits & !STATUS_KINDS.iter().fold(0, |all, &(b, _)| all | b) != 0 || vertex >= nv {
                return Err(fault(format!("status word {bits:#x}, lowest vertex {vertex} of {nv}")));
            }
            return Err(GpuError::NotManifold { operation: OPERATION, defects, lowest_vertex: vertex });
        }
        Ok(GpuTopology::from_parts(
            [nv, nf, ne, nc, max_order],
            true,
            [
                face_ptr,
                face_verts,
                corner_face,
                corner_edge,
                edges,
                edge_corner_ptr,
                half,
                edge_tags,
                vertex_corner_ptr,
                vertex_corners,
                vertex_edge_ptr,
                vertex_edges,
                vertex_tags,
            ],
        ))
    }
}

impl GpuTopology {
    /// [`TopologyKernels::build`] with kernels compiled for this call (make
    /// a [`TopologyKernels`] once to build many meshes): the connectivity of
    /// a manifold control mesh derived on the device from its faces, equal
    /// to [`Topology::build`]'s.
    ///
    /// # Errors
    /// As [`TopologyKernels::new`] and [`TopologyKernels::build`]: malformed
    /// faces are refused with [`GpuError::InvalidFaces`], a non-manifold
    /// mesh with [`GpuError::NotManifold`] (build those on the CPU).
    pub fn build(
        ctx: &GpuContext,
        num_vertices: usize,
        face_ptr: &[u32],
        face_verts: &[u32],
    ) -> Result<GpuTopology, GpuError> {
        TopologyKernels::new(ctx)?.build(ctx, num_vertices, face_ptr, face_verts)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shader_validates() {
        if let Err(e) = crate::shaders::validate(super::TOPOLOGY_BUILD) {
            panic!("topology_build.wgsl: {e}");
        }
    }

    #[test]
    fn malformed_faces_are_refused_naming_the_face() {
        use crate::{FaceDefect, FacePointerDefect, GpuError};
        let defect = |r: Result<[u32; 4], GpuError>| match r {
            Err(GpuError::InvalidFaces { operation: "the GPU topology build", defect }) => defect,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(
            defect(super::check_faces(3, &[0, 3, 6], &[0, 1, 2, 2, 1, 3])),
            FaceDefect::VertexOutOfRange { face: 1, vertex: 3, num_vertices: 3 }
        );
        assert_eq!(
            defect(super::check_faces(4, &[0, 3, 5], &[0, 1, 2, 2, 1])),
            FaceDefect::TooFewVertices { face: 1, order: 2 }
        );
        assert_eq!(
            defect(super::check_faces(4, &[0, 4, 3], &[0, 1, 2])),
            FaceDefect::Pointers(FacePointerDefect::Decreases { face: 1, start: 4, end: 3 })
        );
        assert_eq!(
            defect(super::check_faces(4, &[1, 3], &[0, 1, 2])),
            FaceDefect::Pointers(FacePointerDefect::Start { first: 1 })
        );
        assert_eq!(
            defect(super::check_faces(4, &[0, 3], &[0, 1, 2, 3])),
            FaceDefect::Pointers(FacePointerDefect::End { last: 3, corners: 4 })
        );
        assert_eq!(
            defect(super::check_faces(4, &[], &[])),
            FaceDefect::Pointers(FacePointerDefect::Empty { corners: 0 })
        );
        assert_eq!(super::check_faces(5, &[0, 3, 7], &[0, 1, 2, 2, 1, 3, 4]).ok(), Some([5, 2, 7, 4]));
        assert_eq!(super::check_faces(2, &[0], &[]).ok(), Some([2, 0, 0, 0]));
    }
}
