//! Catmull-Clark solids for subla (Joy & MacCracken 1999): refinement of
//! volumetric meshes ([`subla_volume::VolMesh`]) behind the scheme
//! contract ([`Refiner`] / [`Plan`]).
//!
//! Each step puts a point in every cell, face and edge, moves every vertex
//! (the rules in [`rules`](crate#rules)), and splits each cell into one
//! hexahedron per corner; after one step every cell is a hexahedron. The
//! boundary surface refines by itself as a Catmull-Clark surface. A
//! plan keeps every level's mesh and the matrix `R_l` of each step; eval
//! applies them in turn (CSR SpMV, in parallel, deterministic).
//!
//! # Rules
//! See the module `rules` (private) and `docs/solids.md`: on a regular
//! hexahedral grid the rules are the tricubic B-spline's refinement masks,
//! which the tests check against knot insertion.
//!
//! [`Plan::refined`] and [`Plan::faces`] of a level are its boundary
//! surface: all the level's vertices (so data rows stay aligned), the
//! boundary faces as quads (polygons on level 0), outward.
//!
//! ```
//! use subla_algebra::Par;
//! use subla_scheme::{Plan, Refiner, eval};
//! use subla_solid::CatmarkSolid;
//! let grid = subla_volume::shapes::hex_grid(2, 2, 2)?;
//! let plan = CatmarkSolid::default().build(&grid.mesh, 1, Par::Rayon)?;
//! let y = eval(&plan, grid.vertices.view(), Par::Rayon)?;
//! // 27 vertices, 54 edges, 36 faces and 8 cells: 125 child points.
//! assert_eq!((y.nrows(), plan.mesh(1).num_cells()), (125, 64));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod algebra;
pub mod corner;
pub mod eigen;
mod fan;
pub mod irregular;
pub mod layered;
pub mod limit;
pub mod refined;
mod rules;
pub mod stam;

use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::Zeroable;
use subla_algebra::spmv::{Update, spmv_csr_into};
use subla_algebra::{CsrMat, Par};
use subla_mesh::Mesh;
use subla_scheme::kernel::{eval_levels, real};
use subla_scheme::{ChildPoint, Plan, Refiner, Result, SchemeError};
use subla_volume::{VolMesh, VolumeError};

const NAME: &str = "catmark-solid";

/// A volumetric error as the scheme's (its source is the
/// [`VolumeError`]).
fn volume(e: VolumeError) -> SchemeError {
    SchemeError::scheme(NAME, e)
}

/// The vertex rule at a layered vertex: inside the mesh, on a straight
/// extraordinary edge of valence `k ≠ 4` whose neighbourhood is `k` layers
/// of a Catmull-Clark surface ring (the vertices along the extraordinary
/// edge of a layered cell). Everywhere else the two rules are the same.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VertexRule {
    /// Catmull-Clark's surface vertex rule times the cubic B-spline's
    /// `(1, 6, 1)/8` across the layers, so that a layered neighbourhood
    /// refines as the tensor product of the two and a layered cell's limit
    /// is Stam's surface evaluation times a cubic B-spline (the premise of
    /// constant-time layered evaluation; `docs/solids.md` derives it). It
    /// differs from Joy and MacCracken's only in weighing the two
    /// extraordinary edges' midpoints apart from the others'.
    #[default]
    Layered,
    /// Joy and MacCracken's `(C + 3A + 3M + (n − 7)v)/n` at layered
    /// vertices too: not a product at valences other than 4, so layered
    /// cells have no constant-time limit under it and
    /// [`limit`] refuses them.
    JoyMacCracken,
}

impl VertexRule {
    /// The rule's name in the tool (`layered`, `joy-maccracken`).
    pub fn name(self) -> &'static str {
        match self {
            VertexRule::Layered => "layered",
            VertexRule::JoyMacCracken => "joy-maccracken",
        }
    }
}

/// Catmull-Clark solid refinement (`CatmarkSolid::default()`: the
/// [`VertexRule::Layered`] vertex rule).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CatmarkSolid {
    /// The vertex rule at layered vertices.
    pub vertex_rule: VertexRule,
}

impl CatmarkSolid {
    /// The refiner with vertex rule `vertex_rule`.
    pub const fn new(vertex_rule: VertexRule) -> CatmarkSolid {
        CatmarkSolid { vertex_rule }
    }
}

/// Catmull-Clark solid refinement written as algebra
/// ([`algebra`]): each level's cells by the mapped SpGEMM
/// [`algebra::child_cells`], its points by the mapped products of
/// [`algebra::child_points`] over the incidence matrices, level by level
/// (`f32` data evaluated in `f64` and rounded once). Its plans hand out the
/// same meshes, and `R_l` assembled from the rules' stencils for the
/// operators; its points equal [`CatmarkSolid`]'s to rounding.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CatmarkSolidLak {
    /// The vertex rule at layered vertices.
    pub vertex_rule: VertexRule,
}

impl CatmarkSolidLak {
    /// The refiner with vertex rule `vertex_rule`.
    pub const fn new(vertex_rule: VertexRule) -> CatmarkSolidLak {
        CatmarkSolidLak { vertex_rule }
    }
}

const NAME_LAK: &str = "catmark-solid-lak";

/// A built Catmull-Clark solid refinement: the meshes of levels `0 ..= L`
/// and the matrix of each step.
#[derive(Debug)]
pub struct SolidPlan {
    meshes: Vec<VolMesh>,
    ops: Vec<CsrMat<f64>>,
    surfaces: Vec<OnceLock<Mesh>>,
    /// Evaluated by the algebra ([`CatmarkSolidLak`]) instead of `ops`.
    algebra: bool,
    rule: VertexRule,
}

impl SolidPlan {
    /// The mesh of level `level` (panics past the finest).
    pub fn mesh(&self, level: u32) -> &VolMesh {
        &self.meshes[level as usize]
    }

    /// The matrix `R_l` of each step, coarsest first (what
    /// [`Plan::operator`] hands out, borrowed).
    pub fn operators(&self) -> &[CsrMat<f64>] {
        &self.ops
    }

    /// The vertex rule the plan was built with.
    pub fn vertex_rule(&self) -> VertexRule {
        self.rule
    }

    fn new(meshes: Vec<VolMesh>, ops: Vec<CsrMat<f64>>, algebra: bool, rule: VertexRule) -> SolidPlan {
        let surfaces = (0..meshes.len()).map(|_| OnceLock::new()).collect();
        SolidPlan { meshes, ops, surfaces, algebra, rule }
    }

    fn eval_t<T: Float + Zeroable + subla_algebra::Scalar>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        if self.algebra {
            subla_scheme::check_eval_shapes(self, NAME_LAK, control.dim(), out.dim());
            let to = |t: T| t.to_f64().unwrap_or(f64::NAN);
            let mut x = control.mapv(to);
            for m in &self.meshes[..self.meshes.len() - 1] {
                x = algebra::child_points_with(m, x.view(), self.rule, par)?;
            }
            out.zip_mut_with(&x, |o, &v| *o = T::from(v).unwrap_or_else(T::nan));
            return Ok(());
        }
        eval_levels(self, NAME, control, out, |l, x, y, d| {
            let r = &self.ops[l];
            let (x, y) = match (ArrayView2::from_shape((r.ncols(), d), x), ArrayViewMut2::from_shape((r.nrows(), d), y))
            {
                (Ok(x), Ok(y)) => (x, y),
                _ => unreachable!("eval_levels hands out rows of the levels' sizes"),
            };
            spmv_csr_into(r.as_ref(), x, y, Update::Set, |&w, _, _| real::<T>(w), par);
        })
    }
}

/// The sizes of a level, from which a build's size is predicted before
/// anything is made ([`predict_counts`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SolidCounts {
    /// Vertices.
    pub vertices: u128,
    /// Edges.
    pub edges: u128,
    /// Faces.
    pub faces: u128,
    /// Cells.
    pub cells: u128,
    /// Cell corners, `Σ_c |V_c|` (the child's cells).
    pub corners: u128,
    /// Face corners, `Σ_f |f|` (the child's faces inside parent faces).
    pub face_corners: u128,
    /// Edges of the cells, each counted once per cell, `Σ_c E_c` (the
    /// child's faces inside parent cells).
    pub cell_edges: u128,
    /// Faces of the cells, each counted once per cell, `Σ_c F_c` (the
    /// child's edges from cell points).
    pub cell_faces: u128,
}

impl SolidCounts {
    /// The sizes of `m`.
    pub fn of(m: &VolMesh) -> SolidCounts {
        let (mut corners, mut cell_edges, mut cell_faces) = (0u128, 0u128, 0u128);
        for c in 0..m.num_cells() {
            corners += m.cell_vertices(c).len() as u128;
            let fs = m.cell_faces(c);
            cell_faces += fs.len() as u128;
            cell_edges += fs.iter().map(|&f| m.face((f >> 1) as usize).len() as u128).sum::<u128>() / 2;
        }
        SolidCounts {
            vertices: m.num_vertices() as u128,
            edges: m.num_edges() as u128,
            faces: m.num_faces() as u128,
            cells: m.num_cells() as u128,
            corners,
            face_corners: (0..m.num_faces()).map(|f| m.face(f).len() as u128).sum(),
            cell_edges,
            cell_faces,
        }
    }

    /// The sizes after one step: every cell a hexahedron.
    pub fn child(&self) -> SolidCounts {
        let cells = self.corners;
        let faces = self.face_corners + self.cell_edges;
        SolidCounts {
            vertices: self.vertices + self.edges + self.faces + self.cells,
            edges: 2 * self.edges + self.face_corners + self.cell_faces,
            faces,
            cells,
            corners: 8 * cells,
            face_corners: 4 * faces,
            cell_edges: 12 * cells,
            cell_faces: 6 * cells,
        }
    }

    /// Bytes a plan of this level as its finest is estimated to hold at
    /// its peak: its mesh, the build's face and edge tables, the last
    /// step's matrix (about 125 entries per hexahedron on a regular grid)
    /// and the levels below (an eighth of it each), with margin: 3 KB a
    /// cell.
    pub fn plan_bytes(&self) -> u128 {
        3000 * self.cells
    }
}

/// The sizes of levels `0 ..= levels` of a build over `m`, from counts
/// alone.
pub fn predict_counts(m: &VolMesh, levels: u32) -> Vec<SolidCounts> {
    let mut out = vec![SolidCounts::of(m)];
    for _ in 0..levels {
        let next = out.last().expect("a level").child();
        out.push(next);
    }
    out
}

/// One step over `m`: the child mesh (written from `m`'s connectivity by
/// [`VolMesh::split`], or, where `algebra`, its cells by the mapped SpGEMM
/// and their connectivity by [`VolMesh::from_cells`]) and the step's
/// matrix.
fn step_over(m: &VolMesh, rule: VertexRule, par: Par, algebra: bool) -> Result<(VolMesh, CsrMat<f64>)> {
    let n = rules::child_len(m);
    if u32::try_from(8 * m.num_cells() as u64 * 8).is_err() || u32::try_from(n).is_err() {
        return Err(SchemeError::TooLarge { what: "a refined solid", value: n as u128 });
    }
    if algebra && m.has_features() {
        // The mapped products carry the smooth rules only.
        let (tag, element) = match m.sharp_edges().next() {
            Some(e) => ("crease", format!("edge {e}")),
            None => ("corner", format!("vertex {}", m.corners().next().unwrap_or(0))),
        };
        return Err(SchemeError::UnsupportedTag { scheme: NAME_LAK, tag, element, honoured_by: NAME });
    }
    let child = if algebra {
        VolMesh::from_cells(n, &algebra::child_cells(m, par)?).map_err(volume)?
    } else {
        m.split(par).map_err(volume)?
    };
    Ok((child, rules::operator(m, rule, par)?))
}

/// `levels` steps over `input`, by the kernels or the algebra.
fn build_plan(input: &VolMesh, levels: u32, rule: VertexRule, par: Par, algebra: bool) -> Result<SolidPlan> {
    let mut meshes = vec![input.clone()];
    let mut ops = Vec::with_capacity(levels as usize);
    for _ in 0..levels {
        let (child, r) = step_over(meshes.last().expect("a level"), rule, par, algebra)?;
        meshes.push(child);
        ops.push(r);
    }
    Ok(SolidPlan::new(meshes, ops, algebra, rule))
}

/// One more step from the finest level of `plan` (modeling mode), by the
/// refiner's rule.
fn step_plan(plan: SolidPlan, rule: VertexRule, par: Par) -> Result<SolidPlan> {
    let algebra = plan.algebra;
    let finest = plan.meshes.into_iter().last().expect("a plan has a level");
    let (child, r) = step_over(&finest, rule, par, algebra)?;
    Ok(SolidPlan::new(vec![finest, child], vec![r], algebra, rule))
}

impl Refiner for CatmarkSolid {
    type Input = VolMesh;
    type Plan = SolidPlan;
    fn name(&self) -> &'static str {
        NAME
    }
    fn build(&self, input: &VolMesh, levels: u32, par: Par) -> Result<SolidPlan> {
        build_plan(input, levels, self.vertex_rule, par, false)
    }
    fn step(&self, plan: SolidPlan, par: Par) -> Result<SolidPlan> {
        step_plan(plan, self.vertex_rule, par)
    }
}

impl Refiner for CatmarkSolidLak {
    type Input = VolMesh;
    type Plan = SolidPlan;
    fn name(&self) -> &'static str {
        NAME_LAK
    }
    fn build(&self, input: &VolMesh, levels: u32, par: Par) -> Result<SolidPlan> {
        build_plan(input, levels, self.vertex_rule, par, true)
    }
    fn step(&self, plan: SolidPlan, par: Par) -> Result<SolidPlan> {
        step_plan(plan, self.vertex_rule, par)
    }
}

impl Plan for SolidPlan {
    fn name(&self) -> &'static str {
        if self.algebra { NAME_LAK } else { NAME }
    }
    fn levels(&self) -> u32 {
        self.ops.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, VolMesh::num_vertices)
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn operator(&self, level: u32, _par: Par) -> Result<CsrMat<f64>> {
        self.ops.get(level as usize).cloned().ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.ops.get(level as usize).map(|r| r.nnz() as u64)
    }
    /// Vertex points, then edge, face and cell points of level `level`.
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let m = self.meshes.get(level as usize)?;
        if level as usize + 1 >= self.meshes.len() {
            return None;
        }
        let r = u32::try_from(row).ok()?;
        let (nv, ne, nf, nc) = (m.num_vertices(), m.num_edges(), m.num_faces(), m.num_cells());
        let at = |base: usize| r - base as u32;
        Some(if row < nv {
            ChildPoint::Vertex(r)
        } else if row < nv + ne {
            ChildPoint::Edge(at(nv))
        } else if row < nv + ne + nf {
            ChildPoint::Face(at(nv + ne))
        } else if row < nv + ne + nf + nc {
            ChildPoint::Cell(at(nv + ne + nf))
        } else {
            return None;
        })
    }
    /// The boundary surface of the level (see the [crate docs](crate)).
    fn refined(&self, level: u32, _par: Par) -> Result<&Mesh> {
        let m = self.meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        if let Some(s) = self.surfaces[level as usize].get() {
            return Ok(s);
        }
        let faces: Vec<&[u32]> = (0..m.num_faces()).filter(|&f| m.is_boundary_face(f)).map(|f| m.face(f)).collect();
        let s = Mesh::from_faces(m.num_vertices(), &faces)?;
        Ok(self.surfaces[level as usize].get_or_init(|| s))
    }
}

/// Reproducible pseudo-random numbers for the unit tests.
#[cfg(test)]
mod test_rng {
    use nalgebra::DMatrix;

    /// SplitMix64: reproducible pseudo-random numbers in `[0, 1)`.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        /// An `n × n` matrix with entries in `[−1, 1)`.
        pub(crate) fn matrix(&mut self, n: usize) -> DMatrix<f64> {
            DMatrix::from_fn(n, n, |_, _| 2.0 * self.next() - 1.0)
        }
    }
}
