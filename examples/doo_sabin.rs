//! Doo–Sabin subdivision written with subla's mapped sparse algebra: a
//! scheme the library does not ship, built only through its public API. The
//! walk-through is `docs/own-scheme.md`.
//!
//! Doo–Sabin is a *dual* scheme: every corner of every face becomes a new
//! vertex, an affine combination of its face's vertices (Doo and Sabin
//! 1978). In a face of order `n`, the point of the corner at position `a`
//! (1-based, in traversal order) is
//!
//! ```text
//! p'_a = Σ_b α_ab p_b,    α_aa = (n + 5) / (4n),
//!                         α_ab = (3 + 2 cos(2π (a − b) / n)) / (4n)   (b ≠ a)
//! ```
//!
//! and the new points are joined into an *F-face* per face, an *E-face* (a
//! quad) per interior edge and a *V-face* per interior vertex. With the mesh
//! matrix `M` of Mlakar et al. 2020 (§3.1) every piece is a mapped product:
//!
//! | piece | product |
//! |---|---|
//! | face orders `c = Mᵀ 1 {val → 1}` | Eq. 2, mapped SpMV ([`face_orders`]) |
//! | new points `R = K Mᵀ {(a, b) → α_{c_k}(a, b)}` | mapped SpGEMM ([`corner_points`]); `R` is the refinement matrix |
//! | E-faces `T_E = M Mᵀ {Q_c + Q_c⁻¹}[ε] ⊕ min` | Eq. 4 with another lambda and reduction ([`edge_faces`]) |
//! | V-faces | links read off the E-faces ([`vertex_faces`]) |
//!
//! # Numbering of a refined level
//! * Vertices: one per corner of the parent, in corner order (face after
//!   face, each in traversal order): the corner at position `a` of face `k`
//!   is vertex `ptr[k] + a − 1`, `ptr` the column pointer of `M`.
//! * Faces: the F-faces in parent face order, then the E-faces by edge
//!   `(lo, hi)`, then the V-faces by vertex. All keep the parent's
//!   orientation.
//!
//! # Boundaries and what is refused
//! Open meshes are accepted with the common convention that boundary edges
//! get no E-face and boundary vertices no V-face; corner points use the same
//! weights everywhere. The refined mesh stays manifold and its boundary
//! recedes from the control boundary a little at every step (there is no
//! boundary rule). Non-manifold meshes and interior vertices in only two
//! faces (whose V-face would be a 2-gon) are refused with an error.
//! Sharpness tags and holes are ignored and not carried to refined levels.
//!
//! Run with `cargo run --release --example doo_sabin [-- OUT_DIR]`: it
//! subdivides a pentagonal prism two levels, prints a summary, and with
//! `OUT_DIR` writes the refined mesh (`doo_sabin_L2.obj`) and the composed
//! refinement matrix (`R.mtx`, Matrix Market) there.

use std::f64::consts::PI;
use std::path::Path;

use ndarray::Array2;
use subla::algebra::spgemm::{self, Collision, Ops};
use subla::algebra::spmv::spmv_csr;
use subla::algebra::{CscRef, CsrMat, CsrRef, Par, mtx};
use subla::mesh::{Mesh, MeshData, Topology, obj};
use subla::scheme::refinement::{Budget, Refinement};
use subla::scheme::{ChildPoint, OperatorPlan, OperatorRefiner, OperatorRules, Plan, Refined, Refiner, SchemeError};
use subla::{AlgebraError, MeshError};

/// Marks a slot of an E-face that no face has filled (a boundary edge).
pub const NO_CORNER: u32 = u32::MAX;

/// Doo–Sabin weight `α_ab` of the vertex at position `b` in the point of
/// the corner at position `a`, in a face of order `n` (positions 1-based).
///
/// The cosine is taken of the shorter cyclic distance, so that `α_ab` and
/// `α_ba` are the same bits; for quads the weights are exactly
/// `9/16, 3/16, 1/16, 3/16`.
pub fn weight(n: u32, a: u32, b: u32) -> f64 {
    let d = (a + n - b) % n;
    let d = d.min(n - d);
    if d == 0 {
        f64::from(n + 5) / f64::from(4 * n)
    } else {
        (3.0 + 2.0 * (2.0 * PI * f64::from(d) / f64::from(n)).cos()) / f64::from(4 * n)
    }
}

/// `Q_c(a, b)`: position `b` follows position `a` in a face of order `c`
/// (the circulant map of Mlakar et al. 2020, Eq. 5).
pub fn q(a: u32, b: u32, c: u32) -> bool {
    b == a % c + 1
}

/// Face orders `c = Mᵀ 1 {val → 1}` (Mlakar et al. 2020, Eq. 2): the CSC
/// storage of `M` is the CSR storage of `Mᵀ`, so the transpose is free.
pub fn face_orders(m: CscRef<'_, u32>, par: Par) -> Vec<u32> {
    let ones = Array2::<u32>::ones((m.nrows(), 1));
    spmv_csr(m.transpose(), ones.view(), |_, _, _| 1u32, par).column(0).to_vec()
}

/// The corner matrix `K` (`|corners| × |f|`, CSR): row `ptr[k] + a − 1`
/// holds the position `a` in column `k`, one row per corner of the mesh.
/// It is `Mᵀ` with every nonzero moved to a row of its own, and depends on
/// the face orders only.
///
/// # Errors
/// Sizes over `u32`.
pub fn corner_matrix(num_faces: usize, orders: &[u32]) -> Result<CsrMat<u32>, AlgebraError> {
    let corners: usize = orders.iter().map(|&c| c as usize).sum();
    let ncorners =
        u32::try_from(corners).map_err(|_| AlgebraError::TooLarge { what: "corners", value: corners as u128 })?;
    let mut faces = Vec::with_capacity(corners);
    let mut positions = Vec::with_capacity(corners);
    for (k, &c) in orders.iter().enumerate() {
        faces.extend(std::iter::repeat_n(k as u32, c as usize));
        positions.extend(1..=c);
    }
    CsrMat::try_new(corners, num_faces, (0..=ncorners).collect(), faces, positions)
}

/// The Doo–Sabin refinement matrix `R = K Mᵀ {(a, b) → α_{c_k}(a, b)}`
/// (`|corners| × |v|`): the collision of `K(corner, k) = a` with
/// `Mᵀ(k, j) = b` is vertex `j` of face `k` meeting the corner at position
/// `a`; the action map keeps both positions and the lambda turns them into
/// the weight, reading the face order `c_k` ([`weight`]).
///
/// # Errors
/// Sizes over `u32`.
pub fn corner_points(m: CscRef<'_, u32>, orders: &[u32], par: Par) -> Result<CsrMat<f64>, AlgebraError> {
    let k = corner_matrix(m.ncols(), orders)?;
    let ops = Ops::new(
        |a: &u32, b: &u32| (*a, *b),
        |(a, b), col: &Collision<'_, u32, u32>| Some(weight(orders[col.k as usize], a, b)),
    );
    spgemm::multiply(k.as_ref(), m.transpose(), &ops, par)
}

/// The E-faces: `T_E = M Mᵀ {Q_c + Q_c⁻¹}[ε] ⊕ min`, the product of Eq. 4
/// (Mlakar et al. 2020) with a lambda `ε` that returns half an E-face
/// instead of a 1 and a reduction that merges the halves.
///
/// For the edge `i < j`, the face `k` holding `i → j` contributes
/// `[_, _, corner(k, j), corner(k, i)]` and the face holding `j → i`
/// contributes `[corner(k, i), corner(k, j), _, _]` (`_` = [`NO_CORNER`]);
/// the element-wise minimum joins them into a quad oriented like its faces.
/// A boundary edge keeps a [`NO_CORNER`] and gets no E-face. `m_rows` is
/// `M` in CSR layout; the result lists the quads by edge `(lo, hi)`.
///
/// # Errors
/// Sizes over `u32`.
pub fn edge_faces(
    m: CscRef<'_, u32>,
    m_rows: CsrRef<'_, u32>,
    orders: &[u32],
    par: Par,
) -> Result<Vec<[u32; 4]>, AlgebraError> {
    let ptr = m.ptr();
    let corner = |k: u32, pos: u32| ptr[k as usize] + pos - 1;
    let ops = Ops::new(
        |a: &u32, b: &u32| (*a, *b),
        |(a, b), col: &Collision<'_, u32, u32>| {
            if col.i >= col.j {
                return None; // each undirected edge once: the upper triangle
            }
            let c = orders[col.k as usize];
            let (ci, cj) = (corner(col.k, a), corner(col.k, b));
            if q(a, b, c) {
                Some([NO_CORNER, NO_CORNER, cj, ci])
            } else if q(b, a, c) {
                Some([ci, cj, NO_CORNER, NO_CORNER])
            } else {
                None // i and j in one face, but not along an edge
            }
        },
    )
    .reduce(|x: [u32; 4], y: [u32; 4]| std::array::from_fn(|s| x[s].min(y[s])));
    let t = spgemm::multiply(m_rows, m.transpose(), &ops, par)?;
    Ok(t.values().iter().copied().filter(|quad| !quad.contains(&NO_CORNER)).collect())
}

/// The V-faces as `(face_ptr, face_verts)`: the E-face
/// `[g_i, g_j, f_j, f_i]` of the edge `(i, j)` links the new points around
/// `i` (`g_i → f_i`) and around `j` (`f_j → g_j`); following the links from
/// the first corner of a vertex (the row of `M` in CSR layout, `m_rows`)
/// walks once around it, counter-clockwise. A walk that ends at a missing
/// link is a boundary vertex, which gets no V-face. `ptr` is the column
/// pointer of `M`.
///
/// # Errors
/// [`DooSabinError`] (as [`SchemeError::Scheme`]) for an interior vertex in
/// two faces (its V-face would be a 2-gon) or a fan that does not close.
pub fn vertex_faces(
    m_rows: CsrRef<'_, u32>,
    ptr: &[u32],
    e_faces: &[[u32; 4]],
) -> Result<(Vec<u32>, Vec<u32>), SchemeError> {
    let mut next = vec![NO_CORNER; *ptr.last().unwrap_or(&0) as usize];
    for &[gi, gj, fj, fi] in e_faces {
        next[gi as usize] = fi;
        next[fj as usize] = gj;
    }
    let (mut face_ptr, mut face_verts) = (vec![0u32], Vec::new());
    for v in 0..m_rows.nrows() {
        let (faces, positions) = m_rows.row(v);
        let (Some(&k), Some(&a)) = (faces.first(), positions.first()) else {
            continue; // isolated vertex: no corner, nothing to do
        };
        let start = ptr[k as usize] + a - 1;
        let before = face_verts.len();
        let mut c = start;
        loop {
            face_verts.push(c);
            c = next[c as usize];
            if c == start || c == NO_CORNER || face_verts.len() - before > faces.len() {
                break;
            }
        }
        let n = face_verts.len() - before;
        if c == NO_CORNER {
            face_verts.truncate(before); // boundary vertex
            continue;
        }
        if c != start || n != faces.len() {
            return Err(SchemeError::scheme(NAME, DooSabinError::OpenFan { vertex: v }));
        }
        if n < 3 {
            return Err(SchemeError::scheme(NAME, DooSabinError::TwoFaces { vertex: v, faces: n }));
        }
        face_ptr.push(to_u32(face_verts.len(), "corners of the refined mesh")?);
    }
    Ok((face_ptr, face_verts))
}

/// One Doo–Sabin step: the refinement matrix, the refined mesh, and how many
/// faces of each kind it has.
#[derive(Clone, Debug)]
pub struct Level {
    /// `R` (`|corners| × |v|`, CSR): refined data = `R` · parent data.
    pub operator: CsrMat<f64>,
    /// The refined mesh (no tags; the parent's options).
    pub mesh: Mesh,
    /// Number of F-faces (one per parent face).
    pub f_faces: usize,
    /// Number of E-faces (one per interior parent edge).
    pub e_faces: usize,
    /// Number of V-faces (one per interior parent vertex).
    pub v_faces: usize,
}

/// Refines `parent` once.
///
/// # Errors
/// [`SchemeError::Mesh`] for a non-manifold mesh (the error names the
/// element), [`DooSabinError`] as [`vertex_faces`], sizes over `u32`.
pub fn refine(parent: &Mesh, par: Par) -> Result<Level, SchemeError> {
    let t = parent.topology();
    t.check_manifold()?;
    let m = t.mesh_matrix()?;
    let m_rows = m.to_csr(par);
    let orders = face_orders(m.as_ref(), par);
    let operator = corner_points(m.as_ref(), &orders, par)?;
    let e = edge_faces(m.as_ref(), m_rows.as_ref(), &orders, par)?;
    let (v_ptr, v_verts) = vertex_faces(m_rows.as_ref(), m.ptr(), &e)?;
    // F-faces: face k is the run of its own corners, so the child's face
    // arrays start as M's column pointer and 0, 1, …, |corners| − 1.
    let corners = m.nnz();
    let mut face_ptr = m.ptr().to_vec();
    let mut face_verts: Vec<u32> = (0..corners as u32).collect();
    for quad in &e {
        face_verts.extend_from_slice(quad);
        face_ptr.push(to_u32(face_verts.len(), "corners of the refined mesh")?);
    }
    let base = face_verts.len() as u64;
    face_verts.extend_from_slice(&v_verts);
    for &p in &v_ptr[1..] {
        face_ptr.push(to_u32((base + u64::from(p)) as usize, "corners of the refined mesh")?);
    }
    let topology = Topology::build(corners, face_ptr, face_verts, par)?;
    let (ne, nf) = (topology.num_edges(), topology.num_faces());
    let mesh = Mesh::from_parts(topology, vec![0.0; ne], vec![0.0; corners], vec![false; nf], parent.options())?;
    Ok(Level { operator, mesh, f_faces: m.ncols(), e_faces: e.len(), v_faces: v_ptr.len() - 1 })
}

fn to_u32(n: usize, what: &'static str) -> Result<u32, SchemeError> {
    u32::try_from(n).map_err(|_| SchemeError::Mesh(MeshError::TooLarge { what, value: n as u128 }))
}

/// The scheme's name in messages.
const NAME: &str = "doo-sabin";

/// What Doo–Sabin refuses beyond what the mesh crate does, naming the
/// vertex: the scheme's own error type, carried by [`SchemeError::Scheme`].
#[derive(Debug, thiserror::Error)]
pub enum DooSabinError {
    /// The faces around an interior vertex do not form one closed fan.
    #[error("the faces around vertex {vertex} do not form one closed fan")]
    OpenFan {
        /// The vertex.
        vertex: usize,
    },
    /// An interior vertex in fewer than three faces: its V-face would be
    /// degenerate.
    #[error("vertex {vertex} is interior and in only {faces} faces: its V-face would be a {faces}-gon")]
    TwoFaces {
        /// The vertex.
        vertex: usize,
        /// Its faces.
        faces: usize,
    },
}

/// Doo–Sabin's rules: one level is [`refine`], the rest (the level stack,
/// eval as one SpMV per level, modeling steps, the operators) is subla's
/// generic [`OperatorPlan`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DooSabin;

impl OperatorRules for DooSabin {
    fn name(&self) -> &'static str {
        NAME
    }
    fn refine(&self, parent: &Mesh, par: Par) -> Result<Refined, SchemeError> {
        let Level { operator, mesh, .. } = refine(parent, par)?;
        Ok(Refined { operator, mesh })
    }
    /// Every new point is the point of one parent corner, in corner order.
    fn child_point(&self, parent: &Mesh, row: usize) -> Option<ChildPoint> {
        (row < parent.topology().num_corners()).then_some(ChildPoint::Corner(row as u32))
    }
}

/// Doo–Sabin subdivision behind subla's [`Refiner`] trait.
pub const DOO_SABIN: OperatorRefiner<DooSabin> = OperatorRefiner(DooSabin);

/// A built Doo–Sabin refinement: the meshes of every level and the
/// refinement matrix of every step.
pub type DooSabinPlan = OperatorPlan<DooSabin>;

/// A prism over a regular pentagon (10 vertices, 2 pentagons and 5 quads,
/// counter-clockwise seen from outside) and its positions.
///
/// # Errors
/// None in practice; the mesh is valid by construction.
pub fn pentagonal_prism() -> Result<(Mesh, Array2<f64>), MeshError> {
    let mut faces: Vec<Vec<u32>> = vec![vec![4, 3, 2, 1, 0], vec![5, 6, 7, 8, 9]];
    faces.extend((0..5u32).map(|i| vec![i, (i + 1) % 5, 5 + (i + 1) % 5, 5 + i]));
    let p = Array2::from_shape_fn((10, 3), |(v, k)| {
        let angle = 2.0 * PI * (v % 5) as f64 / 5.0;
        [angle.cos(), angle.sin(), (v / 5) as f64][k]
    });
    Ok((Mesh::from_faces(10, &faces)?, p))
}

/// Counts of one level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSummary {
    /// Vertices.
    pub vertices: usize,
    /// Edges.
    pub edges: usize,
    /// Faces.
    pub faces: usize,
    /// `(order, number of faces of that order)`, by order.
    pub orders: Vec<(usize, usize)>,
    /// Nonzeros of the matrix that made this level (0 for the control mesh).
    pub operator_nnz: usize,
}

/// What [`run`] did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Level 0 (control) to 2.
    pub levels: Vec<LevelSummary>,
    /// Nonzeros of the composed refinement matrix `R = R_1 R_0`.
    pub composed_nnz: usize,
    /// Largest `|row sum − 1|` of `R`.
    pub row_sum_error: f64,
    /// Largest difference between `R P_0` and the plan's eval.
    pub eval_difference: f64,
}

/// Subdivides the pentagonal prism two levels; with `out_dir`, writes the
/// refined mesh as `doo_sabin_L2.obj` and `R` as `R.mtx` into it.
///
/// # Errors
/// Errors of the scheme, of composing `R`, or of writing the files.
pub fn run(out_dir: Option<&Path>) -> Result<Summary, Box<dyn std::error::Error>> {
    let par = Par::Rayon;
    let (mesh, p0) = pentagonal_prism()?;
    let plan = DOO_SABIN.build(&mesh, 2, par)?;
    let p2 = subla::scheme::eval(&plan, p0.view(), par)?;

    let mut refinement = Refinement::chain(&plan, Budget::default(), par)?;
    let r = refinement.compose(Budget::default(), par)?.clone();
    let row_sum_error = (0..r.nrows()).map(|i| (r.row(i).1.iter().sum::<f64>() - 1.0).abs()).fold(0.0, f64::max);
    let rp = spmv_csr(r.as_ref(), p0.view(), |&w, _, _| w, par);
    let eval_difference = rp.iter().zip(&p2).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);

    let mut levels = Vec::new();
    for l in 0..=plan.levels() {
        let m = plan.refined(l, par)?;
        let t = m.topology();
        let mut orders = std::collections::BTreeMap::new();
        for f in 0..t.num_faces() {
            *orders.entry(t.face_order(f)).or_insert(0) += 1;
        }
        levels.push(LevelSummary {
            vertices: t.num_vertices(),
            edges: t.num_edges(),
            faces: t.num_faces(),
            orders: orders.into_iter().collect(),
            operator_nnz: if l == 0 { 0 } else { plan.operator_bound(l - 1).unwrap_or(0) as usize },
        });
    }
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir)?;
        let fine = plan.refined(plan.levels(), par)?.clone();
        obj::write_obj_file(&MeshData::new(fine, p2)?, dir.join("doo_sabin_L2.obj"))?;
        mtx::write_matrix_market_file(r.as_ref(), dir.join("R.mtx"))?;
    }
    Ok(Summary { levels, composed_nnz: r.nnz(), row_sum_error, eval_difference })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = std::env::args_os().nth(1).map(std::path::PathBuf::from);
    let s = run(out_dir.as_deref())?;
    println!("Doo-Sabin on a pentagonal prism, two levels");
    for (l, lv) in s.levels.iter().enumerate() {
        let made_by = if l == 0 { "control".to_string() } else { format!("R_{}: {} nonzeros", l - 1, lv.operator_nnz) };
        println!(
            "  level {l}: {:4} vertices, {:4} edges, {:4} faces, (order, count) {:?}; {made_by}",
            lv.vertices, lv.edges, lv.faces, lv.orders
        );
    }
    println!("composed R = R_1 R_0: {} nonzeros, max |row sum - 1| = {:.1e}", s.composed_nnz, s.row_sum_error);
    println!("max |R P_0 - eval| = {:.1e}", s.eval_difference);
    if let Some(dir) = out_dir {
        println!("wrote {} and {}", dir.join("doo_sabin_L2.obj").display(), dir.join("R.mtx").display());
    }
    Ok(())
}
