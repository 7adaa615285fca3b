//! The build step on the device: every level after the control mesh is
//! refined and prepared for eval by GPU kernels, with nothing read back.
//!
//! Level 0: the host reads and validates the control mesh and prepares
//! its effective sharpness; the faces, that sharpness and the hole flags go
//! up, and the connectivity is rebuilt on the device
//! (`topology_build.wgsl` of `subla-gpu`, [`TopologyKernels`]).
//!
//! Per step `l → l + 1`, from the parent level on the device (its
//! [`GpuTopology`], effective edge and vertex sharpness, hole flags):
//! 1. the quad split (`quad_split.wgsl`, [`QuadSplitKernels`]) writes the
//!    child topology and the two halves of every parent edge;
//! 2. `catmark_masks.wgsl` writes what the eval kernels read besides the
//!    topology — the face of every edge use and every vertex corner, the
//!    other endpoint of every vertex edge, the edge and vertex masks — and
//!    the child's sharpness (uniform or Chaikin, on the halves; the
//!    decremented vertex sharpness) and hole flags.
//!
//! Only the level counts are known on the host (they follow from the
//! parent's: `v + f + e` vertices, `c` faces, `2e + c` edges, `4c`
//! corners), so no step waits for the device.

use subla_gpu::topology::{GpuTopology, TopologyKernels};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
use subla_mesh::{CreaseMethod, Mesh, Options, TriangleSubdivision};

use crate::device::{
    self, GpuVertexMask, StepBuffers, order_weights, smooth_vertex_masks, to_u32, uniform, upload, upload_array,
};
use crate::multi::{self, Kernel};
use crate::split::QuadSplitKernels;

/// `catmark_masks.wgsl`: the device build pass (several entry points).
pub(crate) const MASKS: &str = include_str!("../shaders/catmark_masks.wgsl");

/// Binding numbers of `catmark_masks.wgsl`.
mod slot {
    pub(super) const PARAMS: usize = 0;
    pub(super) const FACE_PTR: usize = 1;
    pub(super) const CORNER_FACES: usize = 2;
    pub(super) const EDGES: usize = 3;
    pub(super) const EDGE_CORNER_PTR: usize = 4;
    pub(super) const EDGE_CORNERS: usize = 5;
    pub(super) const VERTEX_CORNER_PTR: usize = 6;
    pub(super) const VERTEX_CORNERS: usize = 7;
    pub(super) const VERTEX_EDGE_PTR: usize = 8;
    pub(super) const VERTEX_EDGES: usize = 9;
    pub(super) const EDGE_SHARPNESS: usize = 10;
    pub(super) const VERTEX_SHARPNESS: usize = 11;
    pub(super) const HALVES: usize = 12;
    pub(super) const EDGE_FACES: usize = 13;
    pub(super) const EDGE_MASK: usize = 14;
    pub(super) const EDGE_MASKS: usize = 15;
    pub(super) const VERTEX_FACES: usize = 16;
    pub(super) const VERTEX_NBRS: usize = 17;
    pub(super) const VERTEX_MASK: usize = 18;
    pub(super) const VERTEX_MASKS: usize = 19;
    pub(super) const CHILD_EDGE_SHARPNESS: usize = 20;
    pub(super) const CHILD_VERTEX_SHARPNESS: usize = 21;
    pub(super) const HOLES: usize = 22;
    pub(super) const CHILD_HOLES: usize = 23;
    pub(super) const COUNT: usize = 24;
}

/// The pipelines of the device build: the quad split and the masks pass.
#[derive(Debug)]
pub(crate) struct BuildKernels {
    topology: TopologyKernels,
    split: QuadSplitKernels,
    edge_faces: Kernel,
    edge_masks: Kernel,
    edge_children: Kernel,
    vertex_rings: Kernel,
    vertex_masks: Kernel,
    child_holes: Kernel,
}

impl BuildKernels {
    pub(crate) fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let topology = TopologyKernels::new(ctx)?;
        let split = QuadSplitKernels::new(ctx)?;
        let [edge_faces, edge_masks, edge_children, vertex_rings, vertex_masks, child_holes]: [Kernel; 6] =
            multi::compile(
                ctx,
                "catmark_masks.wgsl",
                MASKS,
                &[
                    "edge_faces_main",
                    "edge_masks_main",
                    "edge_children",
                    "vertex_rings",
                    "vertex_masks_main",
                    "child_holes_main",
                ],
            )?
            .try_into()
            .map_err(|_| GpuError::Internal { operation: "catmark masks", message: "missing pipeline".into() })?;
        Ok(BuildKernels {
            topology,
            split,
            edge_faces,
            edge_masks,
            edge_children,
            vertex_rings,
            vertex_masks,
            child_holes,
        })
    }
}

/// A level on the device: topology, effective sharpness, hole flags, and
/// the largest valence (which sizes the smooth mask table).
#[derive(Debug)]
pub(crate) struct DeviceLevel {
    pub(crate) topo: GpuTopology,
    pub(crate) edge_sharpness: GpuBuffer<f32>,
    pub(crate) vertex_sharpness: GpuBuffer<f32>,
    /// One `u32` flag per face; `None` when the mesh has no holes.
    pub(crate) holes: Option<GpuBuffer<u32>>,
    pub(crate) max_valence: u32,
    pub(crate) options: Options,
}

/// `data`, or one zero when empty (a binding holds at least 4 bytes).
fn padded<T: bytemuck::Pod>(data: &[T]) -> Vec<T> {
    if data.is_empty() { vec![T::zeroed()] } else { data.to_vec() }
}

impl DeviceLevel {
    /// A prepared control mesh (effective sharpness) on the device: its
    /// faces, sharpness and holes go up, its connectivity is built there
    /// ([`subla_gpu::topology`]; manifold meshes only).
    pub(crate) fn upload(ctx: &GpuContext, k: &BuildKernels, mesh: &Mesh) -> Result<Self, GpuError> {
        let t = mesh.topology();
        let topo = k.topology.build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts())?;
        let max_valence = (0..t.num_vertices()).map(|v| t.valence(v)).max().unwrap_or(0);
        let holes = if mesh.has_holes() {
            let flags: Vec<u32> = mesh.holes().iter().map(|&h| u32::from(h)).collect();
            Some(upload_array(ctx, "catmark-gpu holes", &padded(&flags))?)
        } else {
            None
        };
        Ok(DeviceLevel {
            topo,
            edge_sharpness: upload_array(ctx, "catmark-gpu edge sharpness", &padded(mesh.edge_sharpness()))?,
            vertex_sharpness: upload_array(ctx, "catmark-gpu vertex sharpness", &padded(mesh.vertex_sharpness()))?,
            holes,
            max_valence: to_u32("catmark-gpu valence", max_valence as u64)?,
            options: mesh.options(),
        })
    }

    /// Reads the level back as a mesh (topology rebuilt from the faces,
    /// which gives the device's edge numbering for a split's child).
    pub(crate) fn download(&self, ctx: &GpuContext) -> Result<Mesh, GpuError> {
        let host = |e: &dyn std::fmt::Display| GpuError::Internal {
            operation: "catmark-gpu readback",
            message: format!("the level read back is not a valid mesh: {e}"),
        };
        let t = &self.topo;
        let (nv, ne) = (t.num_vertices(), t.num_edges());
        let array = |name: &str| t.buffer(name).ok_or_else(|| host(&format!("no array {name}")));
        let HostFaces { face_ptr, face_verts, holes } =
            download_faces(ctx, array("face_ptr")?, array("face_verts")?, self.holes.as_ref())?;
        let topology =
            subla_mesh::Topology::build(nv, face_ptr, face_verts, subla_algebra::Par::Rayon).map_err(|e| host(&e))?;
        let mut es = self.edge_sharpness.download(ctx)?;
        es.truncate(ne);
        let mut vs = self.vertex_sharpness.download(ctx)?;
        vs.truncate(nv);
        Mesh::from_parts(topology, es, vs, holes, self.options).map_err(|e| host(&e))
    }
}

/// The faces of one level, read back.
#[derive(Debug)]
pub(crate) struct HostFaces {
    pub(crate) face_ptr: Vec<u32>,
    pub(crate) face_verts: Vec<u32>,
    pub(crate) holes: Vec<bool>,
}

/// Reads a level's faces back: `face_ptr`, `face_verts` (the padding of
/// empty arrays dropped) and the hole flags (all false without `holes`).
pub(crate) fn download_faces(
    ctx: &GpuContext,
    face_ptr: &GpuBuffer<u32>,
    face_verts: &GpuBuffer<u32>,
    holes: Option<&GpuBuffer<u32>>,
) -> Result<HostFaces, GpuError> {
    let face_ptr = face_ptr.download(ctx)?;
    let nf = face_ptr.len().saturating_sub(1);
    let mut face_verts = face_verts.download(ctx)?;
    face_verts.truncate(face_ptr.last().copied().unwrap_or(0) as usize);
    let holes = match holes {
        Some(h) => h.download(ctx)?.iter().take(nf).map(|&x| x != 0).collect(),
        None => vec![false; nf],
    };
    Ok(HostFaces { face_ptr, face_verts, holes })
}

/// A device array of `len` zeros, at least one element (a binding holds
/// at least one element of its array), checked against the binding limit.
fn zeroed<T: bytemuck::Pod>(ctx: &GpuContext, what: &'static str, len: u64) -> Result<GpuBuffer<T>, GpuError> {
    device::zeroed(ctx, what, len.max(1))
}

/// One step on the device: the eval data of `parent → child` and the child
/// level. The parent's topology arrays that eval reads are shared with the
/// step; the rest are dropped with `parent`.
pub(crate) fn step(
    ctx: &GpuContext,
    k: &BuildKernels,
    parent: &DeviceLevel,
) -> Result<(StepBuffers, DeviceLevel), GpuError> {
    let t = &parent.topo;
    let (nv, nf, ne, nc) =
        (t.num_vertices() as u64, t.num_faces() as u64, t.num_edges() as u64, t.num_corners() as u64);
    to_u32("catmark-gpu child level rows", nv + nf + ne)?;
    let (child, halves) = k.split.split(ctx, t)?;

    // The smooth masks of valence 0 ..= V, then one entry per vertex.
    let base = u64::from(parent.max_valence) + 1;
    let edge_faces = zeroed::<u32>(ctx, "catmark-gpu edge faces", nc)?;
    let edge_mask = zeroed::<u32>(ctx, "catmark-gpu edge mask index", ne)?;
    let edge_masks = zeroed::<[f32; 2]>(ctx, "catmark-gpu edge masks", ne + 1)?;
    let vertex_faces = zeroed::<u32>(ctx, "catmark-gpu vertex faces", nc)?;
    let vertex_nbrs = zeroed::<u32>(ctx, "catmark-gpu vertex neighbours", 2 * ne)?;
    let vertex_mask = zeroed::<u32>(ctx, "catmark-gpu vertex mask index", nv)?;
    let vertex_masks = zeroed::<GpuVertexMask>(ctx, "catmark-gpu vertex masks", base + nv)?;
    let child_es = zeroed::<f32>(ctx, "catmark-gpu child edge sharpness", child.num_edges() as u64)?;
    let child_vs = zeroed::<f32>(ctx, "catmark-gpu child vertex sharpness", child.num_vertices() as u64)?;
    let child_holes = match parent.holes {
        Some(_) => Some(zeroed::<u32>(ctx, "catmark-gpu child holes", child.num_faces() as u64)?),
        None => None,
    };
    // Host-written entries: the smooth edge mask and the smooth vertex masks.
    let smooth = smooth_vertex_masks(parent.max_valence as usize);
    ctx.queue().write_buffer(edge_masks.as_wgpu(), 0, bytemuck::cast_slice(&[[0.25f32, 0.25]]));
    ctx.queue().write_buffer(vertex_masks.as_wgpu(), 0, bytemuck::cast_slice(&smooth));

    let chaikin = parent.options.crease_method == CreaseMethod::Chaikin;
    let smooth_triangles = parent.options.triangle_subdivision == TriangleSubdivision::Smooth;
    let quads = t.num_faces() > 0 && t.max_face_order() == 4 && t.num_corners() == 4 * t.num_faces();
    let flags = u32::from(chaikin) | (u32::from(smooth_triangles) << 1) | (u32::from(quads) << 2);
    let params: [u32; 8] = [
        t.num_vertices() as u32,
        t.num_faces() as u32,
        t.num_edges() as u32,
        t.num_corners() as u32,
        flags,
        to_u32("catmark-gpu vertex mask table", base)?,
        0,
        0,
    ];
    let params = uniform(ctx, "catmark masks params", &params);
    let topo = |name: &str| -> Result<&wgpu::Buffer, GpuError> {
        t.buffer(name).map(GpuBuffer::as_wgpu).ok_or_else(|| GpuError::Internal {
            operation: "catmark masks",
            message: format!("no topology array {name}"),
        })
    };
    let mut table: [Option<&wgpu::Buffer>; slot::COUNT] = [None; slot::COUNT];
    table[slot::PARAMS] = Some(&params);
    for (s, name) in [
        (slot::FACE_PTR, "face_ptr"),
        (slot::CORNER_FACES, "corner_faces"),
        (slot::EDGES, "edges"),
        (slot::EDGE_CORNER_PTR, "edge_corner_ptr"),
        (slot::EDGE_CORNERS, "edge_corners"),
        (slot::VERTEX_CORNER_PTR, "vertex_corner_ptr"),
        (slot::VERTEX_CORNERS, "vertex_corners"),
        (slot::VERTEX_EDGE_PTR, "vertex_edge_ptr"),
        (slot::VERTEX_EDGES, "vertex_edges"),
    ] {
        table[s] = Some(topo(name)?);
    }
    table[slot::EDGE_SHARPNESS] = Some(parent.edge_sharpness.as_wgpu());
    table[slot::VERTEX_SHARPNESS] = Some(parent.vertex_sharpness.as_wgpu());
    table[slot::HALVES] = Some(halves.as_wgpu());
    table[slot::EDGE_FACES] = Some(edge_faces.as_wgpu());
    table[slot::EDGE_MASK] = Some(edge_mask.as_wgpu());
    table[slot::EDGE_MASKS] = Some(edge_masks.as_wgpu());
    table[slot::VERTEX_FACES] = Some(vertex_faces.as_wgpu());
    table[slot::VERTEX_NBRS] = Some(vertex_nbrs.as_wgpu());
    table[slot::VERTEX_MASK] = Some(vertex_mask.as_wgpu());
    table[slot::VERTEX_MASKS] = Some(vertex_masks.as_wgpu());
    table[slot::CHILD_EDGE_SHARPNESS] = Some(child_es.as_wgpu());
    table[slot::CHILD_VERTEX_SHARPNESS] = Some(child_vs.as_wgpu());
    table[slot::HOLES] = parent.holes.as_ref().map(GpuBuffer::as_wgpu);
    table[slot::CHILD_HOLES] = child_holes.as_ref().map(GpuBuffer::as_wgpu);

    ctx.scoped("catmark masks", || {
        let mut encoder =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("catmark masks") });
        for (kernel, items) in [
            (&k.edge_faces, ne),
            (&k.edge_masks, ne),
            (&k.edge_children, ne),
            (&k.vertex_rings, nv),
            (&k.vertex_masks, nv),
        ] {
            multi::dispatch(ctx, &mut encoder, kernel, &table, items)?;
        }
        if child_holes.is_some() {
            multi::dispatch(ctx, &mut encoder, &k.child_holes, &table, nc)?;
        }
        ctx.queue().submit([encoder.finish()]);
        Ok(())
    })?;

    let max_order = t.max_face_order();
    let order_weight = order_weights(max_order);
    let shared = |name: &str| topo(name).cloned();
    let step = StepBuffers {
        nv: t.num_vertices() as u32,
        nf: t.num_faces() as u32,
        ne: t.num_edges() as u32,
        quads: t.num_faces() > 0 && max_order == 4 && t.num_corners() == 4 * t.num_faces(),
        face_ptr: shared("face_ptr")?,
        face_verts: shared("face_verts")?,
        order_weight: upload(ctx, "catmark-gpu order weights", &order_weight)?,
        edges: shared("edges")?,
        edge_corner_ptr: shared("edge_corner_ptr")?,
        edge_faces: edge_faces.as_wgpu().clone(),
        edge_mask: edge_mask.as_wgpu().clone(),
        edge_masks: edge_masks.as_wgpu().clone(),
        vertex_corner_ptr: shared("vertex_corner_ptr")?,
        vertex_faces: vertex_faces.as_wgpu().clone(),
        vertex_edge_ptr: shared("vertex_edge_ptr")?,
        vertex_nbrs: vertex_nbrs.as_wgpu().clone(),
        vertex_mask: vertex_mask.as_wgpu().clone(),
        vertex_masks: vertex_masks.as_wgpu().clone(),
    };
    // Child valences: old vertices keep theirs, face points have the order
    // of their face, edge points at most 4 (a manifold child).
    let max_valence = parent.max_valence.max(max_order as u32).max(if ne > 0 { 4 } else { 0 });
    let child = DeviceLevel {
        topo: child,
        edge_sharpness: child_es,
        vertex_sharpness: child_vs,
        holes: child_holes,
        max_valence,
        options: parent.options,
    };
    Ok((step, child))
}

#[cfg(test)]
mod tests {
    #[test]
    fn shader_validates() {
        if let Err(e) = subla_gpu::shaders::validate(super::MASKS) {
            panic!("catmark_masks.wgsl: {e}");
        }
    }
}
