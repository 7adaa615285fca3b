//! What the kernels read, per step: the parent level's connectivity and the
//! masks, as storage buffers, uploaded once by the build.
//!
//! The layout is documented in the [crate docs](crate#device-layout).
//! Empty arrays are padded to one element (a binding holds at least one).

use bytemuck::{Pod, Zeroable};
use subla_catmark::StepView;
use subla_gpu::{GpuContext, GpuError, wgpu};

pub(crate) use subla_gpu::program::{to_u32, uniform, upload, upload_array, zeroed};

/// A vertex mask as the vertex-point kernel reads it (`struct Mask` of
/// `shaders/catmark_vertex_points.wgsl`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuVertexMask {
    /// Weight of the vertex itself.
    pub(crate) cv: f32,
    /// Weight of each neighbour and each face point (`cs / n²`; 0 when the
    /// ring is left out).
    pub(crate) ring: f32,
    /// Weight of each crease end.
    pub(crate) crease: f32,
    /// First crease end.
    pub(crate) ua: u32,
    /// Second crease end.
    pub(crate) ub: u32,
}

/// The device data of one step: plain wgpu buffers, shared with the
/// level's [`crate::split::GpuTopology`] when the step was built on the
/// device.
#[derive(Debug)]
pub(crate) struct StepBuffers {
    pub(crate) nv: u32,
    pub(crate) nf: u32,
    pub(crate) ne: u32,
    /// Every parent face is a quad: the face-point kernel's fast path.
    pub(crate) quads: bool,
    pub(crate) face_ptr: wgpu::Buffer,
    pub(crate) face_verts: wgpu::Buffer,
    pub(crate) order_weight: wgpu::Buffer,
    /// `2 ne` endpoints (`vec2<u32>` in the kernel).
    pub(crate) edges: wgpu::Buffer,
    pub(crate) edge_corner_ptr: wgpu::Buffer,
    pub(crate) edge_faces: wgpu::Buffer,
    pub(crate) edge_mask: wgpu::Buffer,
    pub(crate) edge_masks: wgpu::Buffer,
    pub(crate) vertex_corner_ptr: wgpu::Buffer,
    pub(crate) vertex_faces: wgpu::Buffer,
    pub(crate) vertex_edge_ptr: wgpu::Buffer,
    pub(crate) vertex_nbrs: wgpu::Buffer,
    pub(crate) vertex_mask: wgpu::Buffer,
    pub(crate) vertex_masks: wgpu::Buffer,
}

/// `1 / n` for faces of `n = 0 ..= max_order` vertices (0 for `n = 0`),
/// the face-point weights in `f32`.
pub(crate) fn order_weights(max_order: usize) -> Vec<f32> {
    (0..=max_order).map(|n| if n == 0 { 0.0 } else { 1.0f32 / n as f32 }).collect()
}

/// The smooth vertex masks of valence `0 ..= max_valence` (Eq. 11):
/// `cv = (n − 2) / n`, ring weight `1 / n²`, computed in `f64` and rounded
/// to `f32` as the CPU kernel rounds them; an isolated vertex stays.
pub(crate) fn smooth_vertex_masks(max_valence: usize) -> Vec<GpuVertexMask> {
    (0..=max_valence)
        .map(|n| {
            if n == 0 {
                GpuVertexMask { cv: 1.0, ..GpuVertexMask::default() }
            } else {
                let n = n as f64;
                GpuVertexMask { cv: ((n - 2.0) / n) as f32, ring: (1.0 / (n * n)) as f32, ..GpuVertexMask::default() }
            }
        })
        .collect()
}

impl StepBuffers {
    /// Uploads step `step` of a CPU plan.
    pub(crate) fn upload(ctx: &GpuContext, step: &StepView<'_>) -> Result<Self, GpuError> {
        let t = step.parent.topology();
        let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
        // Rows of the child level, and so every index the kernels form
        // (before the channel factor, checked per eval).
        to_u32("catmark-gpu child level rows", (nv + nf + ne) as u64)?;
        let cf = t.corner_faces();

        // Faces.
        let max_order = t.face_ptr().windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0);
        let order_weight = order_weights(max_order);

        // Edges.
        let edge_faces: Vec<u32> = (0..ne).flat_map(|e| t.edge_corners(e).iter().map(|&c| cf[c as usize])).collect();
        let mut edge_mask = vec![0u32; ne];
        let mut edge_masks: Vec<[f32; 2]> = Vec::with_capacity(1 + step.edge_masks.len());
        edge_masks.push([0.25, 0.25]);
        for m in step.edge_masks {
            edge_mask[m.edge as usize] = to_u32("catmark-gpu edge masks", edge_masks.len() as u64)?;
            edge_masks.push([m.alpha as f32, m.beta as f32]);
        }

        // Vertices.
        let vertex_faces: Vec<u32> =
            (0..nv).flat_map(|v| t.vertex_corners(v).iter().map(|&c| cf[c as usize])).collect();
        let vertex_nbrs: Vec<u32> = (0..nv).flat_map(|v| t.vertex_neighbors(v)).collect();
        let max_valence = (0..nv).map(|v| t.valence(v)).max().unwrap_or(0);
        let mut vertex_masks = smooth_vertex_masks(max_valence);
        let mut vertex_mask: Vec<u32> = (0..nv).map(|v| t.valence(v) as u32).collect();
        for m in step.vertex_masks {
            let v = m.vertex as usize;
            let n = t.valence(v);
            let ring = if m.cs != 0.0 && n > 0 { (m.cs / (n * n) as f64) as f32 } else { 0.0 };
            vertex_mask[v] = to_u32("catmark-gpu vertex masks", vertex_masks.len() as u64)?;
            vertex_masks.push(GpuVertexMask { cv: m.cv as f32, ring, crease: m.ce as f32, ua: m.ua, ub: m.ub });
        }

        Ok(StepBuffers {
            nv: to_u32("catmark-gpu vertices", nv as u64)?,
            nf: to_u32("catmark-gpu faces", nf as u64)?,
            ne: to_u32("catmark-gpu edges", ne as u64)?,
            quads: nf > 0 && t.is_quad_only(),
            face_ptr: upload(ctx, "catmark-gpu face_ptr", t.face_ptr())?,
            face_verts: upload(ctx, "catmark-gpu face_verts", t.face_verts())?,
            order_weight: upload(ctx, "catmark-gpu order weights", &order_weight)?,
            edges: upload(ctx, "catmark-gpu edges", t.edges())?,
            edge_corner_ptr: upload(ctx, "catmark-gpu edge_corner_ptr", t.edge_corner_ptr())?,
            edge_faces: upload(ctx, "catmark-gpu edge faces", &edge_faces)?,
            edge_mask: upload(ctx, "catmark-gpu edge mask index", &edge_mask)?,
            edge_masks: upload(ctx, "catmark-gpu edge masks", &edge_masks)?,
            vertex_corner_ptr: upload(ctx, "catmark-gpu vertex_corner_ptr", t.vertex_corner_ptr())?,
            vertex_faces: upload(ctx, "catmark-gpu vertex faces", &vertex_faces)?,
            vertex_edge_ptr: upload(ctx, "catmark-gpu vertex_edge_ptr", t.vertex_edge_ptr())?,
            vertex_nbrs: upload(ctx, "catmark-gpu vertex neighbours", &vertex_nbrs)?,
            vertex_mask: upload(ctx, "catmark-gpu vertex mask index", &vertex_mask)?,
            vertex_masks: upload(ctx, "catmark-gpu vertex masks", &vertex_masks)?,
        })
    }

    /// Bytes held on the device (shared buffers counted once per step).
    pub(crate) fn bytes(&self) -> u64 {
        [
            &self.face_ptr,
            &self.face_verts,
            &self.order_weight,
            &self.edges,
            &self.edge_corner_ptr,
            &self.edge_faces,
            &self.edge_mask,
            &self.edge_masks,
            &self.vertex_corner_ptr,
            &self.vertex_faces,
            &self.vertex_edge_ptr,
            &self.vertex_nbrs,
            &self.vertex_mask,
            &self.vertex_masks,
        ]
        .iter()
        .map(|b| b.size())
        .sum()
    }
}
