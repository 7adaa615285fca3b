//! A mesh's connectivity on the device, for kernels that refine or read
//! it: [`GpuTopology`] holds every array of a CPU [`Topology`] in `u32`
//! storage buffers, uploaded from the host ([`GpuTopology::upload`]) or
//! built on the GPU from the faces alone ([`build`]: [`TopologyKernels`],
//! manifold meshes), and read back as plain arrays
//! ([`GpuTopology::download`], [`TopologyArrays`]).
//!
//! Nothing here knows a subdivision rule: scheme crates refine a
//! [`GpuTopology`] level by level (the quad split of `subla-catmark-gpu`,
//! which writes its child through [`GpuTopology::from_parts`]) and bind its
//! arrays ([`GpuTopology::buffers`], [`GpuTopology::buffer`]) in their own
//! kernels.

pub mod build;

pub use build::{TOPOLOGY_BUILD, TopologyKernels};

use subla_mesh::Topology;

use crate::program::{to_u32, upload_array};
use crate::{GpuBuffer, GpuContext, GpuError};

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
    /// Any topology uploads; whether it is manifold is recorded
    /// ([`Topology::is_manifold`]), for kernels that take manifold levels
    /// only (the quad split of `subla-catmark-gpu` refuses the others with
    /// [`GpuError::ManifoldRequired`]).
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
    /// upload; true for a device build, which refuses the others with
    /// [`GpuError::NotManifold`], and for
    /// every child of a quad split).
    pub fn is_manifold(&self) -> bool {
        self.manifold
    }

    /// The counts `[vertices, faces, edges, corners, largest face order]`
    /// as the kernels take them, in the order of [`GpuTopology::from_parts`].
    pub fn counts(&self) -> [u32; 5] {
        [self.num_vertices, self.num_faces, self.num_edges, self.num_corners, self.max_face_order]
    }

    /// A topology from device arrays written by kernels (the device build
    /// of this module, or a scheme crate's refinement of a level), in
    /// [`GpuTopology::ARRAYS`] order; `counts` is `[vertices, faces, edges,
    /// corners, largest face order]`, `manifold` what
    /// [`Topology::is_manifold`] would say of it.
    ///
    /// # Invariants
    /// The caller guarantees that the arrays hold a topology of these
    /// counts in the layout of [`GpuTopology`]; nothing is checked (the
    /// arrays are on the device).
    pub fn from_parts(counts: [u32; 5], manifold: bool, buffers: [GpuBuffer<u32>; 13]) -> Self {
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

    /// The names of the 13 arrays, in the order of [`GpuTopology::buffers`]
    /// and [`GpuTopology::from_parts`]: `edges` is flat, the rest are
    /// named after the [`Topology`] accessor they hold.
    pub const ARRAYS: [&'static str; 13] = [
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

    /// The 13 arrays, in [`GpuTopology::ARRAYS`] order, to bind in a
    /// kernel's table.
    pub fn buffers(&self) -> [&GpuBuffer<u32>; 13] {
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

    /// The device array named `name` (one of [`GpuTopology::ARRAYS`]), for
    /// kernels that read the topology on the device.
    pub fn buffer(&self, name: &str) -> Option<&GpuBuffer<u32>> {
        Self::ARRAYS.iter().position(|&n| n == name).map(|i| self.buffers()[i])
    }
}
