//! Catmull-Clark solid refinement on the device: the child points of every
//! level as the plan's matrices `R_l` applied in turn (load-balanced CSR
//! SpMV, [`subla_gpu::balanced::GpuRefinement`]), and the child cells of a
//! split by a WGSL kernel (`solid_split.wgsl`), the same cells as
//! [`VolMesh::split`] makes on the CPU.
//!
//! The plan itself (each level's connectivity and `R_l`) is built on the
//! CPU ([`CatmarkSolid`](subla_solid::CatmarkSolid)); numbering the child's
//! faces and edges on the device is not done yet.

use ndarray::{Array2, ArrayView2};
use subla_gpu::balanced::GpuRefinement;
use subla_gpu::program;
use subla_gpu::{GpuBuffer, GpuContext, wgpu};
use subla_solid::SolidPlan;
use subla_volume::VolMesh;

use crate::{SolidGpuError, shaders};

/// A solid plan's refinement on the device, `f32` (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct SolidRefineGpu {
    chain: GpuRefinement,
}

impl SolidRefineGpu {
    /// Uploads the matrices of `plan` (rounded to `f32`) for data of
    /// `channels` columns.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] where a matrix or a level does not fit a
    /// buffer, or the device fails.
    ///
    /// # Panics
    /// If the plan has no level or `channels` is 0.
    pub fn new(ctx: &GpuContext, plan: &SolidPlan, channels: usize) -> Result<SolidRefineGpu, SolidGpuError> {
        let chain: Vec<_> = plan.operators().iter().map(|r| r.as_ref()).collect();
        assert!(!chain.is_empty(), "SolidRefineGpu: the plan has no level to apply");
        Ok(SolidRefineGpu { chain: GpuRefinement::from_chain(ctx, &chain, channels)? })
    }

    /// The finest level's points from the control points `x` (`V × C`, the
    /// channels given to [`SolidRefineGpu::new`] or any other count, for
    /// which the levels are resized).
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] on a device failure.
    ///
    /// # Panics
    /// If `x` has other than the plan's control rows, or no column.
    pub fn eval(&mut self, ctx: &GpuContext, x: ArrayView2<'_, f32>) -> Result<Array2<f32>, SolidGpuError> {
        let (rows, channels) = x.dim();
        assert_eq!(rows, self.chain.input_len(), "SolidRefineGpu::eval: the plan's control rows");
        let x = x.as_standard_layout();
        let y = self.chain.apply(ctx, x.as_slice().expect("standard layout"), channels)?;
        Ok(Array2::from_shape_vec((self.chain.output_len(), channels), y).expect("rows × channels values"))
    }

    /// Rows of the finest level.
    pub fn output_len(&self) -> usize {
        self.chain.output_len()
    }
}

/// The child cells of one split of `m` computed on the device: one
/// hexahedron per cell corner, cell after cell, the vertices of each as
/// [`VolMesh::split`] gives them (child points numbered vertices, edges,
/// faces, cells).
///
/// # Errors
/// [`SolidGpuError::Device`] where the ids pass 32 bits, a buffer is over
/// the device's limits, or the device fails.
pub fn split_cells(ctx: &GpuContext, m: &VolMesh) -> Result<Vec<[u32; 8]>, SolidGpuError> {
    let (nv, ne, nf, nc) = (m.num_vertices(), m.num_edges(), m.num_faces(), m.num_cells());
    program::to_u32("child points", (nv + ne + nf + nc) as u64)?;
    // The connectivity as one array: cell_vert_ptr, cell_verts,
    // cell_face_ptr, cell_faces, face_ptr, face_verts, face_edges.
    let mut topo: Vec<u32> = Vec::new();
    let mut offsets = Vec::with_capacity(7);
    fn ragged<'a>(topo: &mut Vec<u32>, offsets: &mut Vec<u32>, n: usize, row: impl Fn(usize) -> &'a [u32]) {
        offsets.push(topo.len() as u32);
        let mut at = 0u32;
        topo.push(0);
        for r in 0..n {
            at += row(r).len() as u32;
            topo.push(at);
        }
        offsets.push(topo.len() as u32);
        for r in 0..n {
            topo.extend_from_slice(row(r));
        }
    }
    ragged(&mut topo, &mut offsets, nc, |c| m.cell_vertices(c));
    ragged(&mut topo, &mut offsets, nc, |c| m.cell_faces(c));
    ragged(&mut topo, &mut offsets, nf, |f| m.face(f));
    offsets.push(topo.len() as u32);
    for f in 0..nf {
        topo.extend_from_slice(m.face_edges(f));
    }
    program::to_u32("connectivity", topo.len() as u64)?;
    let corners = (offsets[2] - offsets[1]) as usize;
    program::to_u32("child cell vertices", 8 * corners as u64)?;
    if corners == 0 {
        return Ok(Vec::new());
    }
    let program = program::compile(ctx, "solid_split.wgsl", shaders::SOLID_SPLIT, &["split"])?;
    let topo = program::upload_array(ctx, "solid connectivity", &topo)?;
    let out: GpuBuffer<u32> = program::zeroed(ctx, "child cells", 8 * corners as u64)?;
    let mut values = vec![corners as u32, nc as u32, nv as u32, ne as u32, nf as u32];
    values.extend_from_slice(&offsets);
    let params = program::uniform(ctx, "solid split params", &values);
    let table = [Some(&params), Some(topo.as_wgpu()), Some(out.as_wgpu())];
    ctx.scoped("solid split", || {
        let mut encoder =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("solid split") });
        program::dispatch(ctx, &mut encoder, &program[0], &table, corners as u64)?;
        ctx.queue().submit([encoder.finish()]);
        Ok(())
    })?;
    let ids = out.download(ctx)?;
    Ok(ids.chunks_exact(8).map(|h| h.try_into().expect("eight ids")).collect())
}
