//! Catmull-Clark written literally as mapped sparse linear algebra (the
//! "LAK" path of Mlakar et al. 2020, §3.2), through `subla-algebra`:
//!
//! | step | product |
//! |---|---|
//! | face orders `c = Mᵀ 1 {val → 1}` | Eq. 2, mapped SpMV |
//! | face points `f = Mᵀ P {val_{i,*} → 1/c_i}` | Eq. 3 |
//! | valences `n = E 1 {val → 1}`, face counts `M 1` | Eq. 10 |
//! | edges `E = M Mᵀ {Q_c + Q_c⁻¹}[τ]`, ids from its lower triangle | Eq. 4–5, §4.1 scan |
//! | faces beside edges `F = M Mᵀ {Q_c}[γ]` | Eq. 6–7 |
//! | refined topology `T = M Mᵀ {Q_c}[σ]` | Eq. 12 |
//! | edge points `D P {→ α_e} + G f {→ β_e}` (`D`: edge ends, `G`: faces from `F`) | §3.2 |
//! | vertex points `I P {→ cv_i} + E P {→ cs_i/n_i²} + M f {→ cs_i/n_i²} + K P {→ ce_i}` | Eq. 11, with the crease term of §5.1 (`K`: the crease ends, a sub-pattern of the crease matrix `C`) |
//!
//! The rules (which mask, with which weights) are the same as the SLAK
//! path's (see [`crate::rules`]); only the arithmetic and the topology go
//! through the algebra. The mesh matrix cannot hold a face that repeats a
//! vertex, and `T` and `F` need every directed edge in at most one face, so
//! this path rejects such input with [`SchemeError::Mesh`] or
//! [`SchemeError::NotManifold`] naming the face or edge (the SLAK path
//! accepts it).

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::{try_filled_vec, try_vec_with_capacity};
use subla_algebra::scan::enumerate_nonzeros;
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::spmv::{Update, spmv_csc_into, spmv_csr, spmv_csr_into};
use subla_algebra::{CscMat, CsrMat, Par, Scalar};
use subla_mesh::{Mesh, Topology};
use subla_scheme::{AlgebraPlan, AlgebraRules, Prediction, Refiner, Result, SchemeError};

use crate::level::{Step, child_mesh, masks, prepare};

/// Catmull-Clark through mapped SpMV and SpGEMM.
#[derive(Copy, Clone, Debug, Default)]
pub struct CatmarkLak;

/// The matrices and maps of one LAK level.
#[derive(Clone, Debug)]
pub struct LakLevel {
    /// Mesh matrix `M` (`|v| × |f|`, corner positions).
    m: CscMat<u32>,
    /// `1 / c_f`.
    inv_c: Vec<f64>,
    /// Edge matrix `E` (symmetric, shared-face counts).
    e: CscMat<u32>,
    /// Edge ends `D` (`|e| × |v|`).
    ends: CsrMat<u8>,
    /// Faces beside each edge `G` (`|e| × |f|`).
    faces: CsrMat<u8>,
    /// Crease ends `K` (`|v| × |v|`), only for vertices with a crease term.
    k: CsrMat<u8>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    cv: Vec<f64>,
    /// `cs_i / n_i²`.
    cs: Vec<f64>,
    ce: Vec<f64>,
}

/// A built LAK refinement: every level's mesh and the matrices its eval
/// multiplies ([`AlgebraPlan`] with this crate's algebra).
pub type LakPlan = AlgebraPlan<CatmarkLakRules>;

/// The algebra path's rules for [`AlgebraPlan`]; its refinement and limit
/// matrices are the specialised path's ([`crate::CatmarkRules`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CatmarkLakRules;

impl AlgebraRules for CatmarkLakRules {
    type Level = LakLevel;
    type Matrices = crate::CatmarkRules;
    fn name(&self) -> &'static str {
        "catmark-lak"
    }
    fn matrices(&self) -> crate::CatmarkRules {
        crate::CatmarkRules
    }
    fn build_level(&self, parent: &Mesh, _level: u32, par: Par) -> Result<(LakLevel, Mesh)> {
        build_level(parent, par)
    }
    fn eval_level<T: Float + Scalar + Send + Sync>(
        &self,
        level: &LakLevel,
        x: ArrayView2<'_, T>,
        y: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        eval_level(level, x, y, par);
    }
}

/// `Q_c(a, b)`: position `b` follows position `a` in a face of order `c`
/// (Eq. 5, 1-based positions).
#[inline]
fn q(a: u32, b: u32, c: u32) -> bool {
    b == a % c + 1
}

const NAME: &str = "catmark-lak";

/// One level's algebra and the child mesh.
fn build_level(parent: &Mesh, par: Par) -> Result<(LakLevel, Mesh)> {
    let t = parent.topology();
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    // A face that repeats a vertex has no mesh matrix (the kernel path
    // takes it).
    let m = t.mesh_matrix().map_err(|e| match e {
        e @ subla_mesh::MeshError::RepeatedVertex { .. } => subla_scheme::algebra_path_limit(NAME, t, Some(e)),
        e => e.into(),
    })?;
    let mt = m.as_ref().transpose(); // CSR of Mᵀ, free
    let mt_csc = m.to_csr(par).into_transpose(); // CSC of Mᵀ
    // Eq. 2: face orders.
    let c = spmv_csr(mt, Array2::<u32>::ones((nv, 1)).view(), |_, _, _| 1u32, par);
    let order: Vec<u32> = c.column(0).to_vec();
    let inv_c: Vec<f64> = order.iter().map(|&k| 1.0 / f64::from(k)).collect();
    // Every directed edge in at most one face (needed by F and T).
    let directed = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| q(a, b, order[col.k as usize]).then_some(1u32),
        ),
        par,
    )?;
    // T and F (Eq. 6, 12) need every directed edge in at most one face.
    if directed.as_ref().iter().any(|(_, _, n)| *n > 1) {
        return Err(subla_scheme::algebra_path_limit(NAME, t, None));
    }
    drop(directed);
    // Eq. 4: E.
    let e = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| {
                let c = order[col.k as usize];
                (q(a, b, c) || q(b, a, c)).then_some(1u32)
            },
        ),
        par,
    )?;
    // §4.1: edge ids from the lower triangle (row > column) of E.
    let ids = enumerate_nonzeros(e.as_ref(), |i, j, _| i > j, par);
    let ne = ids.count as usize;
    if ne != t.num_edges() {
        return Err(SchemeError::Internal {
            what: NAME,
            detail: format!("E enumerates {ne} edges, the topology has {}", t.num_edges()),
        });
    }
    let edge_id = |a: u32, b: u32| -> u32 {
        let (lo, hi) = (a.min(b), a.max(b));
        match e.as_ref().pattern().position(hi as usize, lo as usize) {
            Some(p) => ids.ids[p],
            None => unreachable!("({a}, {b}) is an edge of E"),
        }
    };
    // Eq. 6-7: F(i, j) = the face holding the directed edge i -> j.
    let fmat = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| q(a, b, order[col.k as usize]).then_some(col.k),
        ),
        par,
    )?;
    // Edge ends D and faces G, row per edge id.
    let mut d_ptr = try_vec_with_capacity(ne + 1, "the edge-vertex matrix")?;
    let mut d_idx = try_vec_with_capacity(2 * ne, "the edge-vertex matrix")?;
    let mut g_rows: Vec<[Option<u32>; 2]> = try_filled_vec(ne, [None, None], "the edge-face matrix")?;
    d_ptr.push(0u32);
    let ep = e.as_ref();
    for (p, (r, col, _)) in ep.iter().enumerate() {
        if ids.selected[p] {
            d_idx.push(col);
            d_idx.push(r);
            d_ptr.push(d_idx.len() as u32);
            let id = ids.ids[p] as usize;
            g_rows[id] = [
                fmat.as_ref().get(col as usize, r as usize).copied(),
                fmat.as_ref().get(r as usize, col as usize).copied(),
            ];
        }
    }
    let d_vals = try_filled_vec(d_idx.len(), 1u8, "the edge-vertex matrix")?;
    let ends = CsrMat::try_new(ne, nv, d_ptr, d_idx, d_vals)?;
    let mut g_ptr = vec![0u32];
    let mut g_idx = try_vec_with_capacity(2 * ne, "the edge-face matrix")?;
    for row in &g_rows {
        let mut fs: Vec<u32> = row.iter().flatten().copied().collect();
        fs.sort_unstable();
        g_idx.extend(fs);
        g_ptr.push(g_idx.len() as u32);
    }
    let g_vals = try_filled_vec(g_idx.len(), 1u8, "the edge-face matrix")?;
    let faces = CsrMat::try_new(ne, nf, g_ptr, g_idx, g_vals)?;
    // Eq. 12: T. The lambda builds the child quad at each corner and its
    // index (face offset + corner position), so the children come out in
    // the order of `crate::refine`.
    let base_e = (nv + nf) as u32;
    let face_start: Vec<u32> = m.ptr().to_vec();
    let pred = |k: u32, a: u32| -> u32 {
        // Vertex at position a-1 (cyclically) of face k.
        let c = order[k as usize];
        let want = if a == 1 { c } else { a - 1 };
        let (rows, pos) = m.col(k as usize);
        match pos.iter().position(|&x| x == want) {
            Some(i) => rows[i],
            None => unreachable!("face {k} has a corner at every position"),
        }
    };
    let tmat = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| {
                let (i, j, k) = (col.i, col.j, col.k);
                q(a, b, order[k as usize]).then(|| {
                    let quad = [i, edge_id(i, j) + base_e, k + nv as u32, edge_id(pred(k, a), i) + base_e];
                    (quad, face_start[k as usize] + a - 1)
                })
            },
        )
        // One collision per directed edge (checked above): keep it.
        .reduce(|first: ([u32; 4], u32), _| first),
        par,
    )?;
    let nchild = t.num_corners();
    let mut child = try_filled_vec(4 * nchild, 0u32, "the vertices of the refined faces")?;
    for &(quad, at) in tmat.values() {
        child[4 * at as usize..4 * at as usize + 4].copy_from_slice(&quad);
    }
    let ptr: Vec<u32> = (0..=nchild as u32).map(|i| 4 * i).collect();
    let ct = Topology::build(nv + nf + ne, ptr, child, par)?;
    let mut holes = try_filled_vec(nchild, false, "the hole flags of a refined level")?;
    for f in 0..nf {
        if parent.holes()[f] {
            holes[t.face_ptr()[f] as usize..t.face_ptr()[f + 1] as usize].fill(true);
        }
    }
    let child = child_mesh(parent, ct, holes, None)?;
    // Maps: the rules' masks as per-row coefficients.
    let step: Step = masks(parent, par);
    let mut alpha = try_filled_vec(ne, 0.25, "the edge weights")?;
    let mut beta = try_filled_vec(ne, 0.25, "the edge weights")?;
    for mk in &step.edges {
        alpha[mk.edge as usize] = mk.alpha;
        beta[mk.edge as usize] = mk.beta;
    }
    // Valence n = E 1 (Eq. 10 on E).
    let n = valences(e.as_ref(), nv);
    let mut cv: Vec<f64> = n.iter().map(|&k| if k > 0 { (k as f64 - 2.0) / k as f64 } else { 1.0 }).collect();
    let mut cs: Vec<f64> = n.iter().map(|&k| if k > 0 { 1.0 / (k * k) as f64 } else { 0.0 }).collect();
    let mut ce = try_filled_vec(nv, 0.0, "the vertex weights")?;
    let mut k_trips = Vec::new();
    for mk in &step.vertices {
        let v = mk.vertex as usize;
        let nn = n[v];
        cv[v] = mk.cv;
        cs[v] = if nn > 0 { mk.cs / (nn * nn) as f64 } else { 0.0 };
        ce[v] = mk.ce;
        if mk.ce != 0.0 {
            k_trips.push((v, mk.ua as usize, 1u8));
            k_trips.push((v, mk.ub as usize, 1u8));
        }
    }
    let k = CsrMat::try_from_triplets(nv, nv, &k_trips)?;
    Ok((LakLevel { m, inv_c, e, ends, faces, k, alpha, beta, cv, cs, ce }, child))
}

/// Entries per column of `E`: the valences.
fn valences(e: subla_algebra::CscRef<'_, u32>, nv: usize) -> Vec<usize> {
    (0..nv).map(|j| e.col(j).0.len()).collect()
}

fn eval_level<T: Float + Send + Sync + subla_algebra::Scalar>(
    lv: &LakLevel,
    x: ArrayView2<'_, T>,
    mut y: ArrayViewMut2<'_, T>,
    par: Par,
) {
    let nv = lv.m.nrows();
    let nf = lv.m.ncols();
    let cast = |w: f64| T::from(w).unwrap_or_else(T::zero);
    // Eq. 3.
    let f = spmv_csr(lv.m.as_ref().transpose(), x, |_, i, _| cast(lv.inv_c[i as usize]), par);
    let (mut yv, mut rest) = y.view_mut().split_at(ndarray::Axis(0), nv);
    let (mut yf, mut ye) = rest.view_mut().split_at(ndarray::Axis(0), nf);
    yf.assign(&f);
    // Edge points.
    spmv_csr_into(lv.ends.as_ref(), x, ye.view_mut(), Update::Set, |_, i, _| cast(lv.alpha[i as usize]), par);
    spmv_csr_into(lv.faces.as_ref(), f.view(), ye.view_mut(), Update::Add, |_, i, _| cast(lv.beta[i as usize]), par);
    // Eq. 11 with the crease term.
    yv.assign(&x);
    yv.zip_mut_with(
        &ndarray::Array1::from_iter(lv.cv.iter().map(|&w| cast(w))).insert_axis(ndarray::Axis(1)),
        |a, &w| *a = *a * w,
    );
    spmv_csc_into(lv.e.as_ref(), x, yv.view_mut(), Update::Add, |_, i, _| cast(lv.cs[i as usize]), par);
    spmv_csc_into(lv.m.as_ref(), f.view(), yv.view_mut(), Update::Add, |_, i, _| cast(lv.cs[i as usize]), par);
    spmv_csr_into(lv.k.as_ref(), x, yv.view_mut(), Update::Add, |_, i, _| cast(lv.ce[i as usize]), par);
}

impl Refiner for CatmarkLak {
    type Input = Mesh;
    type Plan = LakPlan;
    fn name(&self) -> &'static str {
        "catmark-lak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<LakPlan> {
        subla_scheme::predict(&crate::CatmarkRules, input.topology(), 0, levels)?;
        LakPlan::from_prepared(CatmarkLakRules, prepare(input)?, 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&crate::CatmarkRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: LakPlan, par: Par) -> Result<LakPlan> {
        plan.next(par)
    }
}
