//! Loop written literally as mapped sparse linear algebra (the "LAK" path
//! of Mlakar et al. 2020, Appendix B), through `subla-algebra`:
//!
//! | step | product |
//! |---|---|
//! | opposite vertices `G = M Mᵀ {Q₃}[λ]`, `λ` = the vertex of face `k` opposite the directed edge `i → j` | Eq. 30, mapped SpGEMM with a stateless lambda |
//! | undirected adjacency `S = G + Gᵀ` (`S(i, j) = [G(i, j), G(j, i)]`), edge ids from its lower triangle | §4.1 scan |
//! | valences `n = S 1 {val → 1}` | Eq. 10 on `S` |
//! | refined topology `T = M Mᵀ {Q₃}[σ]`, `σ` = the corner's vertex and the edge point of its outgoing edge | Appendix B, "Topology refinement" |
//! | edge points `D P {→ α_e} + O P {→ β_e}` (`D`: edge ends, `O`: the opposite vertices `G(i, j)`, `G(j, i)`) | Fig. 13 (left) |
//! | vertex points `I P {→ cv_i} + S P {→ cn_i} + K P {→ ce_i}` | Eq. 28 and 31, with the crease term of §5.1 (`K`: the crease ends) |
//!
//! The rules (which mask, with which weights: boundaries, creases of both
//! methods, corners, transition blends) are those of the SLAK path (see
//! [`crate::rules`]); only the arithmetic and the topology go through the
//! algebra. The mesh matrix cannot hold a face that repeats a vertex, and
//! `G` holds one opposite vertex per directed edge, so this path rejects
//! such input (and edges of more than two faces, or two faces using an
//! edge in the same direction) with [`SchemeError::Mesh`] or
//! [`SchemeError::NotManifold`] naming the face or edge; the SLAK path
//! accepts it.

use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use num_traits::Float;
use subla_algebra::mem::{try_filled_vec, try_vec_with_capacity};
use subla_algebra::scan::enumerate_nonzeros;
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::spmv::{Update, spmv_csr, spmv_csr_into};
use subla_algebra::{CscMat, CscRef, CsrMat, Par, Scalar};
use subla_mesh::{Mesh, Topology};
use subla_scheme::{AlgebraPlan, AlgebraRules, Refiner, Result, SchemeError};

use crate::level::{Rules, child_holes, child_mesh, masks, prepare};
use crate::rules::{EDGE_END, EDGE_OPPOSITE, vertex_weights};
use crate::split::check_triangles;

/// Loop subdivision through mapped SpGEMM and SpMV.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopLak {
    /// The reference whose rules apply.
    pub rules: Rules,
}

impl LoopLak {
    /// OpenSubdiv's Loop ([`Rules::OpenSubdiv`]).
    pub const fn new() -> Self {
        LoopLak { rules: Rules::OpenSubdiv }
    }
    /// CGAL's Loop ([`Rules::Cgal`]).
    pub const fn cgal() -> Self {
        LoopLak { rules: Rules::Cgal }
    }
}

/// "No entry" in a value of `S`.
const NONE: u32 = u32::MAX;

/// The matrices and maps of one LAK level.
#[derive(Clone, Debug)]
pub struct LakLevel {
    /// `S = G + Gᵀ` (`|v| × |v|`, symmetric pattern).
    s: CscMat<[u32; 2]>,
    /// Edge ends `D` (`|e| × |v|`).
    ends: CsrMat<u8>,
    /// Opposite vertices `O` (`|e| × |v|`, value = how many faces have that
    /// vertex opposite the edge).
    opp: CsrMat<u8>,
    /// Crease ends `K` (`|v| × |v|`), only for vertices with a crease term.
    k: CsrMat<u8>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    cv: Vec<f64>,
    cn: Vec<f64>,
    ce: Vec<f64>,
}

/// A built LAK refinement: every level's mesh and the matrices its eval
/// multiplies ([`AlgebraPlan`] with this crate's algebra).
pub type LakPlan = AlgebraPlan<LoopLakRules>;

/// The algebra path's rules for [`AlgebraPlan`]; its refinement and limit
/// matrices are the specialised path's ([`crate::LoopRules`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopLakRules;

impl AlgebraRules for LoopLakRules {
    type Level = LakLevel;
    type Matrices = crate::LoopRules;
    fn name(&self) -> &'static str {
        NAME
    }
    fn matrices(&self) -> crate::LoopRules {
        crate::LoopRules
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

/// `Q₃(a, b)`: position `b` follows position `a` in a triangle (Eq. 5,
/// 1-based positions).
#[inline]
fn q3(a: u32, b: u32) -> bool {
    b == a % 3 + 1
}

const NAME: &str = "loop-lak";

/// `S = G + Gᵀ` with `⊕` keeping both operands: `S(i, j) = [G(i, j),
/// G(j, i)]`, [`NONE`] where one is absent. Column `j` of `S` merges column
/// `j` of `G` with column `j` of `Gᵀ` (row `j` of `G`).
fn symmetric_sum(g: CscRef<'_, u32>, gt: CscRef<'_, u32>) -> Result<CscMat<[u32; 2]>> {
    let n = g.ncols();
    let mut ptr = try_vec_with_capacity(n + 1, "the column pointers of a symmetric sum")?;
    let mut idx = try_vec_with_capacity(2 * g.nnz(), "the indices of a symmetric sum")?;
    let mut vals = try_vec_with_capacity(2 * g.nnz(), "the values of a symmetric sum")?;
    ptr.push(0u32);
    for j in 0..n {
        let (ra, va) = g.col(j);
        let (rb, vb) = gt.col(j);
        let (mut p, mut q) = (0, 0);
        while p < ra.len() || q < rb.len() {
            let (i, v) = match (ra.get(p), rb.get(q)) {
                (Some(&x), Some(&y)) if x == y => {
                    p += 1;
                    q += 1;
                    (x, [va[p - 1], vb[q - 1]])
                }
                (Some(&x), Some(&y)) if x < y => {
                    p += 1;
                    (x, [va[p - 1], NONE])
                }
                (Some(&x), None) => {
                    p += 1;
                    (x, [va[p - 1], NONE])
                }
                (_, Some(&y)) => {
                    q += 1;
                    (y, [NONE, vb[q - 1]])
                }
                (None, None) => unreachable!("the loop runs while an entry is left"),
            };
            idx.push(i);
            vals.push(v);
        }
        ptr.push(idx.len() as u32);
    }
    Ok(CscMat::try_new(n, n, ptr, idx, vals)?)
}

/// One level's algebra and the child mesh.
fn build_level(parent: &Mesh, par: Par) -> Result<(LakLevel, Mesh)> {
    let t = parent.topology();
    check_triangles(t)?;
    let nv = t.num_vertices();
    // A face that repeats a vertex has no mesh matrix (the kernel path
    // takes it).
    let m = t.mesh_matrix().map_err(|e| match e {
        e @ subla_mesh::MeshError::RepeatedVertex { .. } => subla_scheme::algebra_path_limit(NAME, t, Some(e)),
        e => e.into(),
    })?;
    let mt_csc = m.to_csr(par).into_transpose(); // CSC of Mᵀ
    // Eq. 30: G(i, j) = the vertex opposite the directed edge i -> j
    // (`subla_mesh::matrices`); two triangles holding one directed edge
    // have no such G (the kernel path takes them).
    let g = match subla_mesh::matrices::opposite_vertices(t, par) {
        Ok(g) => g.to_csc(par),
        Err(subla_mesh::MeshError::InconsistentOrientation { .. }) => {
            return Err(subla_scheme::algebra_path_limit(NAME, t, None));
        }
        Err(e) => return Err(e.into()),
    };
    let gt = g.to_csr(par).into_transpose();
    let s = symmetric_sum(g.as_ref(), gt.as_ref())?;
    drop((g, gt));
    // §4.1: edge ids from the lower triangle (row > column) of S, in
    // storage order: sorted by (lo, hi), the topology's numbering.
    let ids = enumerate_nonzeros(s.as_ref(), |i, j, _| i > j, par);
    let ne = ids.count as usize;
    if ne != t.num_edges() {
        return Err(SchemeError::Internal {
            what: NAME,
            detail: format!("S enumerates {ne} edges, the topology has {}", t.num_edges()),
        });
    }
    let edge_id = |a: u32, b: u32| -> u32 {
        let (lo, hi) = (a.min(b), a.max(b));
        match s.as_ref().pattern().position(hi as usize, lo as usize) {
            Some(p) => ids.ids[p],
            None => unreachable!("({a}, {b}) is an edge of S"),
        }
    };
    // Edge ends D and opposite vertices O, row per edge id.
    let mut d_ptr = try_vec_with_capacity(ne + 1, "the edge-vertex matrix")?;
    let mut d_idx = try_vec_with_capacity(2 * ne, "the edge-vertex matrix")?;
    let mut o_ptr = try_vec_with_capacity(ne + 1, "the opposite-vertex matrix")?;
    let mut o_idx = try_vec_with_capacity(2 * ne, "the opposite-vertex matrix")?;
    let mut o_val = try_vec_with_capacity(2 * ne, "the opposite-vertex matrix")?;
    d_ptr.push(0u32);
    o_ptr.push(0u32);
    for (p, (r, col, &[gij, gji])) in s.as_ref().iter().enumerate() {
        if !ids.selected[p] {
            continue;
        }
        let id = ids.ids[p] as usize;
        if t.edge(id) != [col, r] {
            return Err(SchemeError::Internal {
                what: NAME,
                detail: format!("S numbers ({col}, {r}) as edge {id}, the topology has {:?} there", t.edge(id)),
            });
        }
        d_idx.extend([col, r]);
        d_ptr.push(d_idx.len() as u32);
        let mut os: Vec<u32> = [gij, gji].into_iter().filter(|&o| o != NONE).collect();
        os.sort_unstable();
        if os.len() == 2 && os[0] == os[1] {
            o_idx.push(os[0]);
            o_val.push(2u8);
        } else {
            o_val.extend(os.iter().map(|_| 1u8));
            o_idx.extend(os);
        }
        o_ptr.push(o_idx.len() as u32);
    }
    let d_vals = try_filled_vec(d_idx.len(), 1u8, "the edge-vertex matrix")?;
    let ends = CsrMat::try_new(ne, nv, d_ptr, d_idx, d_vals)?;
    let opp = CsrMat::try_new(ne, nv, o_ptr, o_idx, o_val)?;
    // Topology: T = M Mᵀ {Q₃}[σ]; each directed edge i -> j of triangle k
    // at position a gives corner 3k + a - 1 its vertex i and the edge point
    // of its outgoing edge.
    let tmat = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), c: &Collision<'_, u32, u32>| {
                q3(a, b).then(|| (c.i, nv as u32 + edge_id(c.i, c.j), 3 * c.k + a - 1))
            },
        )
        // One collision per directed edge (checked above): keep it.
        .reduce(|first: (u32, u32, u32), _| first),
        par,
    )?;
    let nf = t.num_faces();
    let mut corner = try_filled_vec(3 * nf, (0u32, 0u32), "the corners of the refined faces")?;
    for &(v, ep, at) in tmat.values() {
        corner[at as usize] = (v, ep);
    }
    drop(tmat);
    // The four children of each triangle, as crate::split numbers them.
    let mut child = try_vec_with_capacity(12 * nf, "the vertices of the refined faces")?;
    for f in 0..nf {
        let [(v0, e0), (v1, e1), (v2, e2)] = [corner[3 * f], corner[3 * f + 1], corner[3 * f + 2]];
        child.extend([v0, e0, e2, e0, v1, e1, e2, e1, v2, e1, e2, e0]);
    }
    let ptr: Vec<u32> = (0..=4 * nf as u32).map(|i| 3 * i).collect();
    let ct = Topology::build(nv + ne, ptr, child, par)?;
    let child = child_mesh(parent, ct, child_holes(parent)?, None)?;
    // Maps: the rules' masks as per-row coefficients.
    let step = masks(parent, par);
    let mut alpha = try_filled_vec(ne, EDGE_END, "the edge weights")?;
    let mut beta = try_filled_vec(ne, EDGE_OPPOSITE, "the edge weights")?;
    for mk in &step.edges {
        alpha[mk.edge as usize] = mk.alpha;
        beta[mk.edge as usize] = mk.beta;
    }
    // Valences n = S 1 {val -> 1}.
    let n = spmv_csr(s.as_ref().transpose(), Array2::<u32>::ones((nv, 1)).view(), |_, _, _| 1u32, par);
    let mut cv = try_vec_with_capacity(nv, "the vertex weights")?;
    let mut cn = try_vec_with_capacity(nv, "the vertex weights")?;
    for &k in n.column(0) {
        let [w, e] = if k > 0 { vertex_weights(k as usize) } else { [1.0, 0.0] };
        cv.push(w);
        cn.push(e);
    }
    let mut ce = try_filled_vec(nv, 0.0, "the vertex weights")?;
    let mut k_trips = Vec::new();
    for mk in &step.vertices {
        let v = mk.vertex as usize;
        cv[v] = mk.cv;
        cn[v] = mk.cn;
        ce[v] = mk.ce;
        if mk.ce != 0.0 {
            k_trips.push((v, mk.ua as usize, 1u8));
            k_trips.push((v, mk.ub as usize, 1u8));
        }
    }
    let k = CsrMat::try_from_triplets(nv, nv, &k_trips)?;
    Ok((LakLevel { s, ends, opp, k, alpha, beta, cv, cn, ce }, child))
}

fn eval_level<T: Float + Send + Sync + subla_algebra::Scalar>(
    lv: &LakLevel,
    x: ArrayView2<'_, T>,
    mut y: ArrayViewMut2<'_, T>,
    par: Par,
) {
    let nv = lv.s.nrows();
    let cast = |w: f64| T::from(w).unwrap_or_else(T::zero);
    let (mut yv, mut ye) = y.view_mut().split_at(Axis(0), nv);
    // Edge points (Fig. 13, left).
    spmv_csr_into(lv.ends.as_ref(), x, ye.view_mut(), Update::Set, |_, i, _| cast(lv.alpha[i as usize]), par);
    spmv_csr_into(
        lv.opp.as_ref(),
        x,
        ye.view_mut(),
        Update::Add,
        |&m, i, _| cast(f64::from(m) * lv.beta[i as usize]),
        par,
    );
    // Eq. 28 / 31 with the crease term. S is symmetric: its CSC storage is
    // its CSR storage.
    yv.assign(&x);
    let cv = Array1::from_iter(lv.cv.iter().map(|&w| cast(w))).insert_axis(Axis(1));
    yv.zip_mut_with(&cv, |a, &w| *a = *a * w);
    spmv_csr_into(lv.s.as_ref().transpose(), x, yv.view_mut(), Update::Add, |_, i, _| cast(lv.cn[i as usize]), par);
    spmv_csr_into(lv.k.as_ref(), x, yv.view_mut(), Update::Add, |_, i, _| cast(lv.ce[i as usize]), par);
}

impl Refiner for LoopLak {
    type Input = Mesh;
    type Plan = LakPlan;
    fn name(&self) -> &'static str {
        match self.rules {
            Rules::OpenSubdiv => "loop-lak",
            Rules::Cgal => "loop-lak-cgal",
        }
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<LakPlan> {
        subla_scheme::predict(&crate::LoopRules, input.topology(), 0, levels)?;
        LakPlan::from_prepared(LoopLakRules, prepare(input, self.rules)?, 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<subla_scheme::Prediction>> {
        subla_scheme::predict(&crate::LoopRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: LakPlan, par: Par) -> Result<LakPlan> {
        plan.next(par)
    }
}
