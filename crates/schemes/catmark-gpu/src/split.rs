//! Topology refinement on the GPU: the uniform quad split of a **manifold**
//! topology (`shaders/quad_split.wgsl`), bit for bit the CPU
//! [`Topology::split_quads`].
//!
//! [`GpuTopology`] (of [`subla_gpu::topology`], re-exported here) holds
//! every field of a [`Topology`] in device buffers of `u32` (tags widened
//! to `u32`, edges flattened to `2 |e|` entries); [`split_quads_gpu`] (or
//! [`QuadSplitKernels::split`], which keeps the compiled pipelines) writes
//! the child level and the `halves` of every parent edge, in the numbering
//! of [`subla_mesh::split_quad`]. The child is a valid input of the next
//! split, so levels chain on the device; [`GpuTopology::download`] reads a
//! level back as plain arrays ([`TopologyArrays`]).
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
//! Non-manifold levels: [`QuadSplitKernels::split`] refuses them with
//! [`GpuError::ManifoldRequired`] (the CPU derives their relations by
//! counting sorts in `Topology::from_edges`). Faces of more than
//! [`MAX_FACE_ORDER`] vertices are refused too, with [`GpuError::TooLarge`]
//! (the rank of a corner is counted over its face by one invocation). A
//! manifold parent has a manifold, all-quad child, so every level after the
//! first qualifies.

use subla_gpu::wgpu;
use subla_gpu::{GpuBuffer, GpuContext, GpuError};
#[cfg(doc)]
use subla_mesh::Topology;

pub use subla_gpu::topology::{GpuTopology, TopologyArrays};

use crate::device::{to_u32, uniform, zeroed as alloc};
use crate::multi::{self, Kernel};

/// `quad_split.wgsl`: the quad split kernels (several entry points).
pub const QUAD_SPLIT: &str = include_str!("../shaders/quad_split.wgsl");

/// Largest face order the GPU split accepts (the `corners` kernel counts a
/// corner's rank over its whole face).
pub const MAX_FACE_ORDER: u32 = 64;

/// Binding numbers of `quad_split.wgsl`.
mod slot {
    pub(super) const PARAMS: usize = 0;
    /// First binding of the parent's 13 arrays, in [`GpuTopology::ARRAYS`] order.
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
    /// * [`GpuError::ManifoldRequired`] (operation `"the GPU quad split"`) if
    ///   `t` is not manifold ([`GpuTopology::is_manifold`]): non-manifold
    ///   levels stay on the CPU ([`Topology::split_quads`]);
    /// * [`GpuError::TooLarge`] (limit `"max face order"`) if a face has
    ///   more than [`MAX_FACE_ORDER`] vertices, or when a child count does
    ///   not fit `u32` or a child array exceeds the binding limit;
    /// * wgpu errors.
    ///
    /// # Panics
    /// If `t` belongs to another context.
    pub fn split(&self, ctx: &GpuContext, t: &GpuTopology) -> Result<(GpuTopology, GpuBuffer<u32>), GpuError> {
        let [t_nv, t_nf, t_ne, t_nc, t_max_order] = t.counts();
        if !t.is_manifold() {
            return Err(GpuError::ManifoldRequired { operation: "the GPU quad split" });
        }
        if t_max_order > MAX_FACE_ORDER {
            return Err(GpuError::TooLarge {
                what: "quad split face order",
                bytes: u64::from(t_max_order),
                limit: "max face order",
                limit_value: u64::from(MAX_FACE_ORDER),
            });
        }
        let (nv, nf, ne, nc) = (u64::from(t_nv), u64::from(t_nf), u64::from(t_ne), u64::from(t_nc));
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

        let params = uniform(ctx, "quad split params", &[t_nv, t_nf, t_ne, t_nc]);
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

        let child = GpuTopology::from_parts(
            [child_nv, child_nc / 4, child_ne, child_nc, if nc == 0 { 0 } else { 4 }],
            true,
            [c_fptr, c_fv, c_cf, c_ce, c_edges, counts, c_ec, c_etags, c_vcp, c_vc, c_vep, c_ves, c_vtags],
        );
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
