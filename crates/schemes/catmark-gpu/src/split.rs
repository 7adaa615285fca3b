//! Topology refinement on the GPU: the uniform quad split of a **manifold**
//! topology (`shaders/quad_split.wgsl`), bit for bit the CPU
//! [`Topology::split_quads`].
//!
//! [`GpuTopology`] holds every field of a [`Topology`] in device buffers of
//! `u32` (tags widened to `u32`, edges flattened to `2 |e|` entries);
//! [`split_quads_gpu`] (or [`QuadSplitKernels::split`], which keeps the
//! compiled pipelines) writes the child level and the `halves` of every
//! parent edge, in the numbering of [`subla_mesh::split_quad`]. The child is a
//! valid input of the next split, so levels chain on the device;
//! [`GpuTopology::download`] reads a level back as plain arrays
//! ([`TopologyArrays`]).
//!
//! # Kernels
//! One invocation per output element, written by gathers with offsets from
//! the parent's pointer arrays (the closed forms of the CPU's
//! `split_manifold`); the child's `edge_corner_ptr` is the one prefix sum
//! ([`subla_gpu::scan::scan_exclusive_in_place`]). In order: `halves_main`
//! (binary search of each edge in its endpoints' edge lists), `corners`
//! (rank of each corner's edge within its face, by counting; next and
//! previous corners), `edge_counts`, `child_edges`, `child_faces`,
//! `child_corner_edges`, `vertex_corners`, `vertex_edges`, `vertex_tags`,
//! the scan, then `edge_uses_a` and `edge_uses_b`.
//!
//! # What stays on the CPU
//! Non-manifold levels: [`QuadSplitKernels::split`] refuses them (the CPU
//! derives their relations by counting sorts in `Topology::from_edges`).
//! Faces of more than [`MAX_FACE_ORDER`] vertices are refused too (the rank
//! of a corner is counted over its face by one invocation). A manifold
//! parent has a manifold, all-quad child, so every level after the first
//! qualifies.

use subla_gpu::wgpu;
use subla_gpu::{GpuBuffer, GpuContext, GpuError};
use subla_mesh::Topology;

use crate::device::{to_u32, uniform, upload_array, zeroed as alloc};
use crate::multi::{self, Kernel};

/// `quad_split.wgsl`: the quad split kernels (several entry points).
pub const QUAD_SPLIT: &str = include_str!("../../../../shaders/quad_split.wgsl");

/// Largest face order the GPU split accepts (the `corners` kernel counts a
/// corner's rank over its whole face).
pub const MAX_FACE_ORDER: u32 = 64;

/// Binding numbers of `quad_split.wgsl`.
mod slot {
    pub(super) const PARAMS: usize = 0;
    /// First binding of the parent's 13 arrays, in [`super::GpuTopology::buffers`] order.
    pub(super) const PARENT: usize = 1;
    pub(super) const HALVES: usize = 14;
    pub(super) const INTERIOR: usize = 15;
    pub(super) const SORTED: usize = 16;
    pub(super) const NEXT: usize = 17;
    pub(super) const PREV: usize = 18;
    pub(super) const A_CODE: usize = 19;
    pub(super) const COUNTS: usize = 20;
    /// First binding of the child's arrays: face_ptr, face_verts,
    /// corner_face, corner_edge, edges, edge_corners, edge_tags,
    /// vertex_corner_ptr, vertex_corners, vertex_edge_ptr, vertex_edges,
    /// vertex_tags (the child's edge_corner_ptr is `COUNTS`).
    pub(super) const CHILD: usize = 21;
    pub(super) const COUNT: usize = 33;
}

/// Every field of a [`Topology`] on the device, as `u32` arrays.
///
/// The layout is the CPU's: `edges` is flattened (`edges[2e + j]` is
/// endpoint `j` of edge `e`), `vertex_edges` is the concatenation of
/// [`Topology::vertex_edges`] over the vertices, tags are widened to `u32`.
/// Empty arrays occupy a 4-byte buffer (their logical length stays 0).
#[derive(Debug)]
pub struct GpuTopology {
    num_vertices: u32,
    num_faces: u32,
    num_edges: u32,
    num_corners: u32,
    max_face_order: u32,
    manifold: bool,
    face_ptr: GpuBuffer<u32>,
    face_verts: GpuBuffer<u32>,
    corner_faces: GpuBuffer<u32>,
    corner_edges: GpuBuffer<u32>,
    edges: GpuBuffer<u32>,
    edge_corner_ptr: GpuBuffer<u32>,
    edge_corners: GpuBuffer<u32>,
    edge_tags: GpuBuffer<u32>,
    vertex_corner_ptr: GpuBuffer<u32>,
    vertex_corners: GpuBuffer<u32>,
    vertex_edge_ptr: GpuBuffer<u32>,
    vertex_edges: GpuBuffer<u32>,
    vertex_tags: GpuBuffer<u32>,
}

/// A topology's fields as plain arrays, read back from a [`GpuTopology`]
/// or taken from a CPU [`Topology`] ([`TopologyArrays::from_topology`]) to
/// compare field by field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyArrays {
    /// [`Topology::num_vertices`].
    pub num_vertices: usize,
    /// [`Topology::face_ptr`].
    pub face_ptr: Vec<u32>,
    /// [`Topology::face_verts`].
    pub face_verts: Vec<u32>,
    /// [`Topology::corner_faces`].
    pub corner_faces: Vec<u32>,
    /// [`Topology::corner_edges`].
    pub corner_edges: Vec<u32>,
    /// [`Topology::edges`].
    pub edges: Vec<[u32; 2]>,
    /// [`Topology::edge_corner_ptr`].
    pub edge_corner_ptr: Vec<u32>,
    /// [`Topology::edge_corners`] of every edge, concatenated.
    pub edge_corners: Vec<u32>,
    /// [`Topology::edge_tags`].
    pub edge_tags: Vec<u8>,
    /// [`Topology::vertex_corner_ptr`].
    pub vertex_corner_ptr: Vec<u32>,
    /// [`Topology::vertex_corners`] of every vertex, concatenated.
    pub vertex_corners: Vec<u32>,
    /// [`Topology::vertex_edge_ptr`].
    pub vertex_edge_ptr: Vec<u32>,
    /// [`Topology::vertex_edges`] of every vertex, concatenated.
    pub vertex_edges: Vec<u32>,
    /// [`Topology::vertex_tags`].
    pub vertex_tags: Vec<u8>,
}

impl TopologyArrays {
    /// The fields of a CPU topology, through its public accessors.
    pub fn from_topology(t: &Topology) -> Self {
        let (nv, ne) = (t.num_vertices(), t.num_edges());
        TopologyArrays {
            num_vertices: nv,
            face_ptr: t.face_ptr().to_vec(),
            face_verts: t.face_verts().to_vec(),
            corner_faces: t.corner_faces().to_vec(),
            corner_edges: t.corner_edges().to_vec(),
            edges: t.edges().to_vec(),
            edge_corner_ptr: t.edge_corner_ptr().to_vec(),
            edge_corners: (0..ne).flat_map(|e| t.edge_corners(e).iter().copied()).collect(),
            edge_tags: t.edge_tags().to_vec(),
            vertex_corner_ptr: t.vertex_corner_ptr().to_vec(),
            vertex_corners: (0..nv).flat_map(|v| t.vertex_corners(v).iter().copied()).collect(),
            vertex_edge_ptr: t.vertex_edge_ptr().to_vec(),
            vertex_edges: (0..nv).flat_map(|v| t.vertex_edges(v).iter().copied()).collect(),
            vertex_tags: t.vertex_tags().to_vec(),
        }
    }
}

/// Uploads `data`, checked against the binding limit.
fn upload(ctx: &GpuContext, what: &'static str, data: &[u32]) -> Result<GpuBuffer<u32>, GpuError> {
    upload_array(ctx, what, data)
}

impl GpuTopology {
    /// Uploads every field of `t`.
    ///
    /// Any topology uploads; [`QuadSplitKernels::split`] then refuses a
    /// non-manifold one (recorded here with [`Topology::is_manifold`]).
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] over the binding limit; wgpu errors.
    pub fn upload(ctx: &GpuContext, t: &Topology) -> Result<Self, GpuError> {
        let (nv, nf, ne, nc) = (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners());
        let widen = |tags: &[u8]| tags.iter().map(|&x| u32::from(x)).collect::<Vec<u32>>();
        let edges: Vec<u32> = t.edges().iter().flatten().copied().collect();
        let edge_corners: Vec<u32> = (0..ne).flat_map(|e| t.edge_corners(e).iter().copied()).collect();
        let vertex_corners: Vec<u32> = (0..nv).flat_map(|v| t.vertex_corners(v).iter().copied()).collect();
        let vertex_edges: Vec<u32> = (0..nv).flat_map(|v| t.vertex_edges(v).iter().copied()).collect();
        let max_face_order = (0..nf).map(|f| t.face_order(f)).max().unwrap_or(0);
        Ok(GpuTopology {
            num_vertices: to_u32("quad split vertices", nv as u64)?,
            num_faces: to_u32("quad split faces", nf as u64)?,
            num_edges: to_u32("quad split edges", ne as u64)?,
            num_corners: to_u32("quad split corners", nc as u64)?,
            max_face_order: to_u32("quad split face order", max_face_order as u64)?,
            manifold: t.is_manifold(),
            face_ptr: upload(ctx, "topology face_ptr", t.face_ptr())?,
            face_verts: upload(ctx, "topology face_verts", t.face_verts())?,
            corner_faces: upload(ctx, "topology corner_faces", t.corner_faces())?,
            corner_edges: upload(ctx, "topology corner_edges", t.corner_edges())?,
            edges: upload(ctx, "topology edges", &edges)?,
            edge_corner_ptr: upload(ctx, "topology edge_corner_ptr", t.edge_corner_ptr())?,
            edge_corners: upload(ctx, "topology edge_corners", &edge_corners)?,
            edge_tags: upload(ctx, "topology edge_tags", &widen(t.edge_tags()))?,
            vertex_corner_ptr: upload(ctx, "topology vertex_corner_ptr", t.vertex_corner_ptr())?,
            vertex_corners: upload(ctx, "topology vertex_corners", &vertex_corners)?,
            vertex_edge_ptr: upload(ctx, "topology vertex_edge_ptr", t.vertex_edge_ptr())?,
            vertex_edges: upload(ctx, "topology vertex_edges", &vertex_edges)?,
            vertex_tags: upload(ctx, "topology vertex_tags", &widen(t.vertex_tags()))?,
        })
    }

    /// Reads every field back (waits for the device).
    ///
    /// # Errors
    /// wgpu errors; [`GpuError::Overflow`] if a tag read back does not fit
    /// in `u8` (a kernel fault).
    pub fn download(&self, ctx: &GpuContext) -> Result<TopologyArrays, GpuError> {
        let narrow = |b: &GpuBuffer<u32>| -> Result<Vec<u8>, GpuError> {
            b.download(ctx)?
                .into_iter()
                .map(|x| u8::try_from(x).map_err(|_| GpuError::Overflow { what: "topology tag" }))
                .collect()
        };
        let edges = self.edges.download(ctx)?;
        Ok(TopologyArrays {
            num_vertices: self.num_vertices as usize,
            face_ptr: self.face_ptr.download(ctx)?,
            face_verts: self.face_verts.download(ctx)?,
            corner_faces: self.corner_faces.download(ctx)?,
            corner_edges: self.corner_edges.download(ctx)?,
            edges: edges.chunks_exact(2).map(|p| [p[0], p[1]]).collect(),
            edge_corner_ptr: self.edge_corner_ptr.download(ctx)?,
            edge_corners: self.edge_corners.download(ctx)?,
            edge_tags: narrow(&self.edge_tags)?,
            vertex_corner_ptr: self.vertex_corner_ptr.download(ctx)?,
            vertex_corners: self.vertex_corners.download(ctx)?,
            vertex_edge_ptr: self.vertex_edge_ptr.download(ctx)?,
            vertex_edges: self.vertex_edges.download(ctx)?,
            vertex_tags: narrow(&self.vertex_tags)?,
        })
    }

    /// Number of vertices (including isolated ones).
    pub fn num_vertices(&self) -> usize {
        self.num_vertices as usize
    }
    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.num_faces as usize
    }
    /// Number of edges.
    pub fn num_edges(&self) -> usize {
        self.num_edges as usize
    }
    /// Number of corners.
    pub fn num_corners(&self) -> usize {
        self.num_corners as usize
    }
    /// Largest face order (0 without faces).
    pub fn max_face_order(&self) -> usize {
        self.max_face_order as usize
    }
    /// Whether the topology is manifold ([`Topology::is_manifold`] at
    /// upload; true for every split's child).
    pub fn is_manifold(&self) -> bool {
        self.manifold
    }

    /// A topology from device arrays made elsewhere in this crate (the
    /// device build of [`crate::topology`]), in [`GpuTopology::buffers`]
    /// order; `counts` is (vertices, faces, edges, corners, largest face
    /// order). The caller guarantees that the arrays are consistent.
    pub(crate) fn from_parts(counts: [u32; 5], manifold: bool, buffers: [GpuBuffer<u32>; 13]) -> Self {
        let [num_vertices, num_faces, num_edges, num_corners, max_face_order] = counts;
        let [
            face_ptr,
            face_verts,
            corner_faces,
            corner_edges,
            edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags,
        ] = buffers;
        GpuTopology {
            num_vertices,
            num_faces,
            num_edges,
            num_corners,
            max_face_order,
            manifold,
            face_ptr,
            face_verts,
            corner_faces,
            corner_edges,
            edges,
            edge_corner_ptr,
            edge_corners,
            edge_tags,
            vertex_corner_ptr,
            vertex_corners,
            vertex_edge_ptr,
            vertex_edges,
            vertex_tags,
        }
    }

    /// The 13 arrays, in the binding order of `quad_split.wgsl`'s parent.
    fn buffers(&self) -> [&GpuBuffer<u32>; 13] {
        [
            &self.face_ptr,
            &self.face_verts,
            &self.corner_faces,
            &self.corner_edges,
            &self.edges,
            &self.edge_corner_ptr,
            &self.edge_corners,
            &self.edge_tags,
            &self.vertex_corner_ptr,
            &self.vertex_corners,
            &self.vertex_edge_ptr,
            &self.vertex_edges,
            &self.vertex_tags,
        ]
    }

    /// The device buffers, by name: `face_ptr`, `face_verts`,
    /// `corner_faces`, `corner_edges`, `edges` (flat), `edge_corner_ptr`,
    /// `edge_corners`, `edge_tags`, `vertex_corner_ptr`, `vertex_corners`,
    /// `vertex_edge_ptr`, `vertex_edges`, `vertex_tags`, for kernels that
    /// read the topology on the device.
    pub fn buffer(&self, name: &str) -> Option<&GpuBuffer<u32>> {
        const NAMES: [&str; 13] = [
            "face_ptr",
            "face_verts",
            "corner_faces",
            "corner_edges",
            "edges",
            "edge_corner_ptr",
            "edge_corners",
            "edge_tags",
            "vertex_corner_ptr",
            "vertex_corners",
            "vertex_edge_ptr",
            "vertex_edges",
            "vertex_tags",
        ];
        NAMES.iter().position(|&n| n == name).map(|i| self.buffers()[i])
    }
}

/// The compiled pipelines of `quad_split.wgsl` on one context; build once
/// and split many levels.
#[derive(Debug)]
pub struct QuadSplitKernels {
    halves: Kernel,
    corners: Kernel,
    edge_counts: Kernel,
    child_edges: Kernel,
    child_faces: Kernel,
    child_corner_edges: Kernel,
    vertex_corners: Kernel,
    vertex_edges: Kernel,
    vertex_tags: Kernel,
    edge_uses_a: Kernel,
    edge_uses_b: Kernel,
}

impl QuadSplitKernels {
    /// Compiles the kernels on `ctx`.
    ///
    /// # Errors
    /// [`GpuError::Shader`] if the WGSL does not validate; wgpu errors.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let kernels = multi::compile(
            ctx,
            "quad_split.wgsl",
            QUAD_SPLIT,
            &[
                "halves_main",
                "corners",
                "edge_counts",
                "child_edges",
                "child_faces",
                "child_corner_edges",
                "vertex_corners",
                "vertex_edges",
                "vertex_tags",
                "edge_uses_a",
                "edge_uses_b",
            ],
        )?;
        let mut k = kernels.into_iter();
        let mut kernel =
            || k.next().ok_or(GpuError::Internal { operation: "quad split", message: "missing pipeline".into() });
        Ok(QuadSplitKernels {
            halves: kernel()?,
            corners: kernel()?,
            edge_counts: kernel()?,
            child_edges: kernel()?,
            child_faces: kernel()?,
            child_corner_edges: kernel()?,
            vertex_corners: kernel()?,
            vertex_edges: kernel()?,
            vertex_tags: kernel()?,
            edge_uses_a: kernel()?,
            edge_uses_b: kernel()?,
        })
    }

    /// The uniform quad split of the manifold topology `t`: the child (a
    /// manifold all-quad topology, a valid input of the next split) and the
    /// two child edges of each parent edge (`halves[2e + j]` joins the edge
    /// point of `e` to the child of endpoint `j`), both equal to
    /// [`Topology::split_quads`]'s, array for array.
    ///
    /// # Errors
    /// * [`GpuError::Unsupported`] (operation `"split_quads_gpu"`) if `t` is
    ///   not manifold: non-manifold levels stay on the CPU
    ///   ([`Topology::split_quads`]);
    /// * [`GpuError::TooLarge`] (limit `"max face order"`) if a face has
    ///   more than [`MAX_FACE_ORDER`] vertices, or when a child count does
    ///   not fit `u32` or a child array exceeds the binding limit;
    /// * wgpu errors.
    ///
    /// # Panics
    /// If `t` belongs to another context.
    pub fn split(&self, ctx: &GpuContext, t: &GpuTopology) -> Result<(GpuTopology, GpuBuffer<u32>), GpuError> {
        if !t.manifold {
            return Err(GpuError::Unsupported {
                operation: "split_quads_gpu",
                reason: "the parent topology is not manifold; the GPU quad split handles manifold levels only \
                          (split non-manifold levels on the CPU with Topology::split_quads)"
                    .into(),
            });
        }
        if t.max_face_order > MAX_FACE_ORDER {
            return Err(GpuError::TooLarge {
                what: "quad split face order",
                bytes: u64::from(t.max_face_order),
                limit: "max face order",
                limit_value: u64::from(MAX_FACE_ORDER),
            });
        }
        let (nv, nf, ne, nc) =
            (u64::from(t.num_vertices), u64::from(t.num_faces), u64::from(t.num_edges), u64::from(t.num_corners));
        let na = 2 * ne;
        let child_nv = to_u32("refined vertices", nv + nf + ne)?;
        to_u32("refined vertex edges", 2 * (na + nc))?;
        let child_ne = to_u32("refined edges", na + nc)?;
        let child_nc = to_u32("refined corners", 4 * nc)?;

        let halves = alloc(ctx, "quad split halves", na)?;
        let interior = alloc(ctx, "quad split interior edges", nc)?;
        let sorted = alloc(ctx, "quad split corner order", nc)?;
        let next = alloc(ctx, "quad split next corners", nc)?;
        let prev = alloc(ctx, "quad split previous corners", nc)?;
        let a_code = alloc(ctx, "quad split half codes", na)?;
        let mut counts = alloc(ctx, "child edge_corner_ptr", na + nc + 1)?;
        let nvc = nv + nf + ne;
        let child = [
            alloc(ctx, "child face_ptr", nc + 1)?,
            alloc(ctx, "child face_verts", 4 * nc)?,
            alloc(ctx, "child corner_faces", 4 * nc)?,
            alloc(ctx, "child corner_edges", 4 * nc)?,
            alloc(ctx, "child edges", 2 * (na + nc))?,
            alloc(ctx, "child edge_tags", na + nc)?,
            alloc(ctx, "child vertex_corner_ptr", nvc + 1)?,
            alloc(ctx, "child vertex_corners", 4 * nc)?,
            alloc(ctx, "child vertex_edge_ptr", nvc + 1)?,
            alloc(ctx, "child vertex_edges", 2 * (na + nc))?,
            alloc(ctx, "child vertex_tags", nvc)?,
        ];
        let [c_fptr, c_fv, c_cf, c_ce, c_edges, c_etags, c_vcp, c_vc, c_vep, c_ves, c_vtags] = child;

        let params = uniform(ctx, "quad split params", &[t.num_vertices, t.num_faces, t.num_edges, t.num_corners]);
        // Every binding of quad_split.wgsl; the child's edge_corners comes
        // after the scan.
        let mut table: [Option<&wgpu::Buffer>; slot::COUNT] = [None; slot::COUNT];
        table[slot::PARAMS] = Some(&params);
        for (k, b) in t.buffers().into_iter().enumerate() {
            table[slot::PARENT + k] = Some(b.as_wgpu());
        }
        for (s, b) in [
            (slot::HALVES, &halves),
            (slot::INTERIOR, &interior),
            (slot::SORTED, &sorted),
            (slot::NEXT, &next),
            (slot::PREV, &prev),
            (slot::A_CODE, &a_code),
            (slot::COUNTS, &counts),
        ] {
            table[s] = Some(b.as_wgpu());
        }
        let child_slots: [(usize, &GpuBuffer<u32>); 11] = [
            (0, &c_fptr),
            (1, &c_fv),
            (2, &c_cf),
            (3, &c_ce),
            (4, &c_edges),
            (6, &c_etags),
            (7, &c_vcp),
            (8, &c_vc),
            (9, &c_vep),
            (10, &c_ves),
            (11, &c_vtags),
        ];
        for (k, b) in child_slots {
            table[slot::CHILD + k] = Some(b.as_wgpu());
        }

        ctx.scoped("quad split", || {
            let mut encoder =
                ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("quad split") });
            let steps: [(&Kernel, u64); 9] = [
                (&self.halves, na),
                (&self.corners, nc),
                (&self.edge_counts, na + nc + 1),
                (&self.child_edges, na + nc),
                (&self.child_faces, nc + 1),
                (&self.child_corner_edges, nc),
                (&self.vertex_corners, nvc + 1),
                (&self.vertex_edges, nvc + 1),
                (&self.vertex_tags, nvc),
            ];
            for (kernel, items) in steps {
                multi::dispatch(ctx, &mut encoder, kernel, &table, items)?;
            }
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;
        let total = subla_gpu::scan::scan_exclusive_in_place(ctx, &mut counts)?;
        let c_ec = alloc(ctx, "child edge_corners", u64::from(total))?;

        let mut table: [Option<&wgpu::Buffer>; slot::COUNT] = [None; slot::COUNT];
        table[slot::PARAMS] = Some(&params);
        for (k, b) in t.buffers().into_iter().enumerate() {
            table[slot::PARENT + k] = Some(b.as_wgpu());
        }
        table[slot::SORTED] = Some(sorted.as_wgpu());
        table[slot::NEXT] = Some(next.as_wgpu());
        table[slot::A_CODE] = Some(a_code.as_wgpu());
        table[slot::COUNTS] = Some(counts.as_wgpu());
        table[slot::CHILD + 5] = Some(c_ec.as_wgpu());
        ctx.scoped("quad split edge uses", || {
            let mut encoder = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("quad split edge uses") });
            multi::dispatch(ctx, &mut encoder, &self.edge_uses_a, &table, na)?;
            multi::dispatch(ctx, &mut encoder, &self.edge_uses_b, &table, nc)?;
            ctx.queue().submit([encoder.finish()]);
            Ok(())
        })?;

        let child = GpuTopology {
            num_vertices: child_nv,
            num_faces: child_nc / 4,
            num_edges: child_ne,
            num_corners: child_nc,
            max_face_order: if nc == 0 { 0 } else { 4 },
            manifold: true,
            face_ptr: c_fptr,
            face_verts: c_fv,
            corner_faces: c_cf,
            corner_edges: c_ce,
            edges: c_edges,
            edge_corner_ptr: counts,
            edge_corners: c_ec,
            edge_tags: c_etags,
            vertex_corner_ptr: c_vcp,
            vertex_corners: c_vc,
            vertex_edge_ptr: c_vep,
            vertex_edges: c_ves,
            vertex_tags: c_vtags,
        };
        Ok((child, halves))
    }
}

/// [`QuadSplitKernels::split`] with kernels compiled for this call (build a
/// [`QuadSplitKernels`] once to split many levels).
///
/// # Errors
/// As [`QuadSplitKernels::new`] and [`QuadSplitKernels::split`]: a
/// non-manifold parent is refused (it stays on the CPU).
pub fn split_quads_gpu(ctx: &GpuContext, t: &GpuTopology) -> Result<(GpuTopology, GpuBuffer<u32>), GpuError> {
    QuadSplitKernels::new(ctx)?.split(ctx, t)
}

#[cfg(test)]
mod tests {
    #[test]
    fn shader_validates() {
        if let Err(e) = subla_gpu::shaders::validate(super::QUAD_SPLIT) {
            panic!("quad_split.wgsl: {e}");
        }
    }
}
