//! Catmull-Clark solid refinement on the device: the child points of every
//! level as the plan's matrices `R_l` applied in turn (load-balanced CSR
//! SpMV, [`subla_gpu::balanced::GpuRefinement`]), and the child cells of a
//! split by a WGSL kernel (`solid_split.wgsl`), the same cells as
//! [`VolMesh::split`] makes on the CPU.
//!
//! The child's whole connectivity — cells, faces, face edges, face cells,
//! edges and sharp flags, numbered as on the CPU — is computed on the device
//! by [`SolidSplitGpu::split`], chained level after level without a copy
//! back to the host. The plan's matrices `R_l` are built on the CPU
//! ([`CatmarkSolid`](subla_solid::CatmarkSolid)).

use ndarray::{Array2, ArrayView2};
use subla_gpu::balanced::GpuRefinement;
use subla_gpu::program::{self, Program};
use subla_gpu::{GpuBuffer, GpuContext, GpuError, wgpu};
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
    let topo = GpuSolidTopology::upload(ctx, m)?;
    let corners = topo.counts.cell_verts as usize;
    program::to_u32("child cell vertices", 8 * corners as u64)?;
    if corners == 0 {
        return Ok(Vec::new());
    }
    let program = program::compile(ctx, "solid_split.wgsl", shaders::SOLID_SPLIT, &["split"])?;
    let out: GpuBuffer<u32> = program::zeroed(ctx, "child cells", 8 * corners as u64)?;
    let params = program::uniform(ctx, "solid split params", &topo.params(&Layout::default(), 0, 0));
    let table = [Some(&params), Some(topo.buf.as_wgpu()), Some(out.as_wgpu())];
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

/// A volumetric mesh's connectivity on the device, in one `u32` buffer:
/// what a split reads, and what it writes for the next one, so that
/// [`SolidSplitGpu::split`] can be chained level after level with no
/// copy back to the host.
///
/// The sections, in order: cell vertex pointers and vertices, cell face
/// pointers and faces (`2f`, or `2f + 1` where the cell holds face `f`
/// inward), face pointers and vertices, face edges (edge `i` from vertex
/// `i` to `i + 1`), face cells (two per face, `u32::MAX` past a boundary
/// face), edges (two ends, lower first) and sharp flags (1 or 0 per
/// edge) — [`VolMesh`]'s arrays, with the same numbering. Beside it, a
/// second buffer of tags: a corner flag per vertex, then a hexahedron flag
/// per cell (what the point rules read besides the connectivity).
///
/// A split on the device gives the arrays of [`VolMesh::split`] exactly
/// (tested on every example shape over two splits, sharp edges included):
/// child cells per parent cell corner; faces in the order the child cells
/// first use them and edges in the order the child faces first use them,
/// each id an exclusive scan over first-use flags (a face's first use is
/// decided in closed form, an edge's by an integer atomic maximum that
/// keeps the smallest face corner claiming it, whatever the order of the
/// claims). The edge and vertex incidences of [`VolMesh`] (edge faces,
/// vertex edges) are built from these by [`SolidPointsGpu`](crate::SolidPointsGpu)
/// when it computes a split's points.
#[derive(Debug)]
pub struct GpuSolidTopology {
    pub(crate) buf: GpuBuffer<u32>,
    /// Corner flags of the vertices, then hexahedron flags of the cells
    /// (at least one word).
    pub(crate) tags: GpuBuffer<u32>,
    pub(crate) counts: Counts,
    pub(crate) layout: Layout,
}

/// Element counts of a [`GpuSolidTopology`].
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Counts {
    pub(crate) nv: u32,
    pub(crate) ne: u32,
    pub(crate) nf: u32,
    pub(crate) nc: u32,
    /// Cell vertices (cell corners).
    pub(crate) cell_verts: u32,
    /// Cell faces.
    pub(crate) cell_faces: u32,
    /// Face vertices (face corners).
    pub(crate) face_verts: u32,
    /// The face corners of every cell's faces (each interior face counted
    /// twice): twice the number of edges inside the cells after a split.
    pub(crate) cell_face_corners: u64,
}

/// Offsets of the sections of a [`GpuSolidTopology`]'s buffer, in order
/// (cell vertex pointers, cell vertices, cell face pointers, cell faces,
/// face pointers, face vertices, face edges, face cells, edges, sharp
/// flags), then its length: the order of the kernels' parameters.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Layout {
    pub(crate) at: [u32; SECTIONS + 1],
}

/// Sections of a [`GpuSolidTopology`]'s buffer.
const SECTIONS: usize = 10;

impl Layout {
    /// The sections one after the other for `counts`.
    fn of(c: &Counts) -> Result<Layout, SolidGpuError> {
        let (nc, nf, ne) = (u64::from(c.nc), u64::from(c.nf), u64::from(c.ne));
        let (cv, cf, fv) = (u64::from(c.cell_verts), u64::from(c.cell_faces), u64::from(c.face_verts));
        let sizes = [nc + 1, cv, nc + 1, cf, nf + 1, fv, fv, 2 * nf, 2 * ne, ne];
        let mut at = [0u32; SECTIONS + 1];
        for (i, n) in sizes.iter().enumerate() {
            at[i + 1] = program::to_u32("solid connectivity", u64::from(at[i]) + n)?;
        }
        Ok(Layout { at })
    }

    /// Section `i`'s range.
    fn section(&self, i: usize) -> std::ops::Range<usize> {
        self.at[i] as usize..self.at[i + 1] as usize
    }

    /// The buffer's length.
    fn len(&self) -> u32 {
        self.at[SECTIONS]
    }
}

/// The arrays of a [`GpuSolidTopology`] read back (see its docs for what
/// each holds).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SolidTopologyArrays {
    /// Cell vertex pointers (cells + 1).
    pub cell_vert_ptr: Vec<u32>,
    /// Cell vertices.
    pub cell_verts: Vec<u32>,
    /// Cell face pointers (cells + 1).
    pub cell_face_ptr: Vec<u32>,
    /// Cell faces (`2f`, or `2f + 1` inward).
    pub cell_faces: Vec<u32>,
    /// Face vertex pointers (faces + 1).
    pub face_ptr: Vec<u32>,
    /// Face vertices.
    pub face_verts: Vec<u32>,
    /// Face edges.
    pub face_edges: Vec<u32>,
    /// The cells of each face (`u32::MAX` past a boundary face).
    pub face_cells: Vec<[u32; 2]>,
    /// The ends of each edge, lower first.
    pub edges: Vec<[u32; 2]>,
    /// Whether each edge is sharp.
    pub sharp: Vec<bool>,
    /// Whether each vertex is a corner.
    pub corners: Vec<bool>,
    /// Whether each cell is a hexahedron.
    pub hexahedra: Vec<bool>,
}

impl SolidTopologyArrays {
    /// The arrays of `m` (what [`GpuSolidTopology::download`] gives for a
    /// topology equal to `m`'s).
    pub fn of(m: &VolMesh) -> SolidTopologyArrays {
        let ptr = |n: usize, len: &dyn Fn(usize) -> usize| -> Vec<u32> {
            std::iter::once(0)
                .chain((0..n).scan(0u32, |at, i| {
                    *at += len(i) as u32;
                    Some(*at)
                }))
                .collect()
        };
        let (nc, nf, ne) = (m.num_cells(), m.num_faces(), m.num_edges());
        SolidTopologyArrays {
            cell_vert_ptr: ptr(nc, &|c| m.cell_vertices(c).len()),
            cell_verts: (0..nc).flat_map(|c| m.cell_vertices(c).iter().copied()).collect(),
            cell_face_ptr: ptr(nc, &|c| m.cell_faces(c).len()),
            cell_faces: (0..nc).flat_map(|c| m.cell_faces(c).iter().copied()).collect(),
            face_ptr: ptr(nf, &|f| m.face(f).len()),
            face_verts: (0..nf).flat_map(|f| m.face(f).iter().copied()).collect(),
            face_edges: (0..nf).flat_map(|f| m.face_edges(f).iter().copied()).collect(),
            face_cells: (0..nf).map(|f| m.face_cells(f)).collect(),
            edges: (0..ne).map(|e| m.edge(e)).collect(),
            sharp: (0..ne).map(|e| m.is_sharp_edge(e)).collect(),
            corners: (0..m.num_vertices()).map(|v| m.is_corner(v)).collect(),
            hexahedra: (0..nc).map(|c| m.kind(c) == subla_volume::CellKind::Hexahedron).collect(),
        }
    }

    /// The tags as one buffer: corner flags, then hexahedron flags (at
    /// least one word).
    fn tag_words(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.corners.iter().chain(&self.hexahedra).map(|&t| u32::from(t)).collect();
        if v.is_empty() {
            v.push(0);
        }
        v
    }

    /// The arrays as one buffer in [`Layout`] order.
    fn flat(&self) -> Vec<u32> {
        let mut v = Vec::new();
        v.extend_from_slice(&self.cell_vert_ptr);
        v.extend_from_slice(&self.cell_verts);
        v.extend_from_slice(&self.cell_face_ptr);
        v.extend_from_slice(&self.cell_faces);
        v.extend_from_slice(&self.face_ptr);
        v.extend_from_slice(&self.face_verts);
        v.extend_from_slice(&self.face_edges);
        v.extend(self.face_cells.iter().flatten());
        v.extend(self.edges.iter().flatten());
        v.extend(self.sharp.iter().map(|&s| u32::from(s)));
        v
    }
}

impl GpuSolidTopology {
    /// Uploads the connectivity of `m`.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] where the arrays pass 32-bit offsets or a
    /// binding, or the device fails.
    pub fn upload(ctx: &GpuContext, m: &VolMesh) -> Result<GpuSolidTopology, SolidGpuError> {
        let arrays = SolidTopologyArrays::of(m);
        let counts = Counts {
            nv: program::to_u32("vertices", m.num_vertices() as u64)?,
            ne: program::to_u32("edges", m.num_edges() as u64)?,
            nf: program::to_u32("faces", m.num_faces() as u64)?,
            nc: program::to_u32("cells", m.num_cells() as u64)?,
            cell_verts: program::to_u32("cell vertices", arrays.cell_verts.len() as u64)?,
            cell_faces: program::to_u32("cell faces", arrays.cell_faces.len() as u64)?,
            face_verts: program::to_u32("face vertices", arrays.face_verts.len() as u64)?,
            cell_face_corners: arrays.cell_faces.iter().map(|&f| m.face(f as usize >> 1).len() as u64).sum(),
        };
        let layout = Layout::of(&counts)?;
        let buf = program::upload_array(ctx, "solid connectivity", &arrays.flat())?;
        let tags = program::upload_array(ctx, "solid tags", &arrays.tag_words())?;
        Ok(GpuSolidTopology { buf, tags, counts, layout })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.counts.nv as usize
    }
    /// Number of edges.
    pub fn num_edges(&self) -> usize {
        self.counts.ne as usize
    }
    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.counts.nf as usize
    }
    /// Number of cells.
    pub fn num_cells(&self) -> usize {
        self.counts.nc as usize
    }

    /// The uniform words of the split kernels: this (parent) topology's
    /// counts and offsets, the child's offsets, its faces and face corners.
    fn params(&self, child: &Layout, c_faces: u32, c_face_corners: u32) -> Vec<u32> {
        let c = &self.counts;
        let mut v = vec![c.cell_verts, c.nc, c.nv, c.ne, c.nf];
        v.extend_from_slice(&self.layout.at[..SECTIONS]);
        v.extend_from_slice(&child.at[..SECTIONS]);
        v.extend_from_slice(&[c_faces, c_face_corners]);
        v
    }

    /// The child's counts, in closed form: every cell corner becomes a
    /// hexahedron; a face of `k` corners gives `k` quarters, a cell one
    /// face per edge (half its faces' corners); an edge gives two halves,
    /// a face `k` spokes, a cell one spoke per face.
    fn child_counts(&self) -> Result<Counts, SolidGpuError> {
        let c = &self.counts;
        let nv = u64::from(c.nv) + u64::from(c.ne) + u64::from(c.nf) + u64::from(c.nc);
        let nf = u64::from(c.face_verts) + c.cell_face_corners / 2;
        let ne = 2 * u64::from(c.ne) + u64::from(c.face_verts) + u64::from(c.cell_faces);
        let nc = u64::from(c.cell_verts);
        Ok(Counts {
            nv: program::to_u32("child vertices", nv)?,
            ne: program::to_u32("child edges", ne)?,
            nf: program::to_u32("child faces", nf)?,
            nc: program::to_u32("child cells", nc)?,
            cell_verts: program::to_u32("child cell vertices", 8 * nc)?,
            cell_faces: program::to_u32("child cell faces", 6 * nc)?,
            face_verts: program::to_u32("child face vertices", 4 * nf)?,
            cell_face_corners: 24 * nc,
        })
    }

    /// The arrays read back.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] on a device failure.
    pub fn download(&self, ctx: &GpuContext) -> Result<SolidTopologyArrays, SolidGpuError> {
        let all = self.buf.download(ctx)?;
        let tags = self.tags.download(ctx)?;
        let nv = self.counts.nv as usize;
        let nc = self.counts.nc as usize;
        let part = |i: usize| all[self.layout.section(i)].to_vec();
        let pairs = |i: usize| all[self.layout.section(i)].chunks_exact(2).map(|p| [p[0], p[1]]).collect();
        Ok(SolidTopologyArrays {
            cell_vert_ptr: part(0),
            cell_verts: part(1),
            cell_face_ptr: part(2),
            cell_faces: part(3),
            face_ptr: part(4),
            face_verts: part(5),
            face_edges: part(6),
            face_cells: pairs(7),
            edges: pairs(8),
            sharp: all[self.layout.section(9)].iter().map(|&s| s != 0).collect(),
            corners: tags[..nv].iter().map(|&t| t != 0).collect(),
            hexahedra: tags[nv..nv + nc].iter().map(|&t| t != 0).collect(),
        })
    }
}

/// The entry points of `solid_split.wgsl` a whole split runs, in order.
const ENTRIES: [&str; 7] =
    ["child_ptrs", "child_tags_of", "split_names", "split_faces", "edge_keys", "edge_first", "edge_ids_of"];

/// Catmull-Clark solid splits of a [`GpuSolidTopology`] on the device, its
/// kernels compiled once.
///
/// ```no_run
/// use subla_solid_gpu::{GpuSolidTopology, SolidSplitGpu};
/// let ctx = subla_gpu::GpuContext::new()?;
/// let grid = subla_volume::shapes::hex_grid(4, 4, 4)?;
/// let splitter = SolidSplitGpu::new(&ctx)?;
/// let mut topo = GpuSolidTopology::upload(&ctx, &grid.mesh)?;
/// for _ in 0..2 {
///     topo = splitter.split(&ctx, &topo)?;
/// }
/// assert_eq!(topo.num_cells(), 64 * 64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SolidSplitGpu {
    program: Program,
}

impl SolidSplitGpu {
    /// Compiles the split's kernels.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] if the device fails.
    pub fn new(ctx: &GpuContext) -> Result<SolidSplitGpu, SolidGpuError> {
        Ok(SolidSplitGpu { program: program::compile(ctx, "solid_split.wgsl", shaders::SOLID_SPLIT, &ENTRIES)? })
    }

    /// The topology after one Catmull-Clark solid split of `parent`,
    /// computed on the device (see [`GpuSolidTopology`]); equal to
    /// [`VolMesh::split`]'s. Three submissions, each of the two scans
    /// between them reading its total back to check it against the
    /// closed-form counts.
    ///
    /// # Errors
    /// [`SolidGpuError::Device`] where the child's ids pass 32 bits, a
    /// buffer is over the device's limits, or the device fails.
    pub fn split(&self, ctx: &GpuContext, parent: &GpuSolidTopology) -> Result<GpuSolidTopology, SolidGpuError> {
        let counts = parent.child_counts()?;
        let layout = Layout::of(&counts)?;
        let buf: GpuBuffer<u32> = program::zeroed(ctx, "child solid connectivity", u64::from(layout.len()))?;
        let tag_words = (u64::from(counts.nv) + u64::from(counts.nc)).max(1);
        let tags: GpuBuffer<u32> = program::zeroed(ctx, "child solid tags", tag_words)?;
        let child = GpuSolidTopology { buf, tags, counts, layout };
        let corners = u64::from(parent.counts.cell_verts);
        if corners == 0 {
            return Ok(child);
        }
        let kernel = |name: &str| &self.program[ENTRIES.iter().position(|&e| e == name).expect("an entry point")];
        let slots = 6 * corners;
        let face_corners = u64::from(counts.face_verts);
        let names: GpuBuffer<u32> = program::zeroed(ctx, "child face names", slots)?;
        let flags: GpuBuffer<u32> = program::zeroed(ctx, "child face first uses", slots)?;
        let partners: GpuBuffer<u32> = program::zeroed(ctx, "child face partners", slots)?;
        let first_use: GpuBuffer<u32> = program::zeroed(ctx, "child edge first uses", u64::from(counts.ne))?;
        let edge_slots: GpuBuffer<u32> = program::zeroed(ctx, "child edge slots", face_corners)?;
        let edge_flags: GpuBuffer<u32> = program::zeroed(ctx, "child edge first-use flags", face_corners)?;
        let params = program::uniform(ctx, "solid split params", &parent.params(&layout, counts.nf, counts.face_verts));
        let run = |label: &'static str, steps: &[(&str, u64)], table: &[Option<&wgpu::Buffer>]| {
            ctx.scoped(label, || {
                let mut encoder =
                    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
                for &(name, items) in steps {
                    program::dispatch(ctx, &mut encoder, kernel(name), table, items)?;
                }
                ctx.queue().submit([encoder.finish()]);
                Ok(())
            })
        };
        // Bindings 6 and 10 (the face and edge ids) are filled in once
        // scanned.
        let mut table = [
            Some(&params),
            Some(parent.buf.as_wgpu()),
            Some(child.buf.as_wgpu()),
            Some(names.as_wgpu()),
            Some(flags.as_wgpu()),
            Some(partners.as_wgpu()),
            None,
            Some(first_use.as_wgpu()),
            Some(edge_slots.as_wgpu()),
            Some(edge_flags.as_wgpu()),
            None,
            Some(parent.tags.as_wgpu()),
            Some(child.tags.as_wgpu()),
        ];
        let ptrs = u64::from(counts.nc.max(counts.nf)) + 1;
        run(
            "solid split: cells",
            &[("child_ptrs", ptrs), ("child_tags_of", tag_words), ("split_names", corners)],
            &table,
        )?;
        let (face_ids, nf) = subla_gpu::scan::scan_exclusive(ctx, &flags)?;
        check_count("child faces", nf, counts.nf)?;
        table[6] = Some(face_ids.as_wgpu());
        run(
            "solid split: faces",
            &[("split_faces", slots), ("edge_keys", face_corners), ("edge_first", face_corners)],
            &table,
        )?;
        let (edge_ids, ne) = subla_gpu::scan::scan_exclusive(ctx, &edge_flags)?;
        check_count("child edges", ne, counts.ne)?;
        table[10] = Some(edge_ids.as_wgpu());
        run("solid split: edges", &[("edge_ids_of", face_corners)], &table)?;
        Ok(child)
    }
}

/// A device count against the closed form: a mismatch is a bug in the
/// kernels, reported, not ignored.
fn check_count(what: &'static str, got: u32, want: u32) -> Result<(), SolidGpuError> {
    if got == want {
        Ok(())
    } else {
        Err(SolidGpuError::Device(GpuError::Internal {
            operation: what,
            message: format!("the split numbered {got} where the counts give {want}"),
        }))
    }
}
