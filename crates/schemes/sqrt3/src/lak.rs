//! √3 written as mapped sparse linear algebra (the "LAK" path of Mlakar et
//! al. 2020, Appendix A), through `subla-algebra`:
//!
//! | step | product |
//! |---|---|
//! | face points `f = Mᵀ P {(1,2,3) → ⅓}` | Eq. 26, mapped SpMV |
//! | triangle adjacency `F = M Mᵀ {Q₃}[γ]`, `F(i, j)` = the triangle holding the directed edge `i → j` | Eq. 6–7, mapped SpGEMM with a lambda |
//! | valences `n = F 1 {val → 1}` | Eq. 10 on `F` |
//! | vertex update `(1 − αᵢ) Pᵢ + F P {val_i → αᵢ/nᵢ}` | Eq. 24, 25, 27 |
//! | refined topology: corner `k` of triangle `i` (next vertex `l`) gives `(k, F(l, k) + |v|, i + |v|)` | Appendix A, "Topology refinement" |
//!
//! The appendix omits the boundary; so does this path: open meshes are
//! refused with [`SchemeError::Unsupported`] (the SLAK path,
//! [`crate::Sqrt3Slak`], has Kobbelt's boundary rule). On closed meshes
//! both paths number vertices and faces alike, so their refined meshes are
//! equal and their positions agree to rounding.

use ndarray::{Array2, ArrayView2, ArrayViewMut2, s};
use num_traits::Float;
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::spmv::{Update, spmv_csr_into};
use subla_algebra::{CscMat, CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::eval_levels;
use subla_scheme::{Plan, Refiner, Result, SchemeError};

use crate::level::{alpha, plain_mesh, prepare};

/// √3 subdivision through mapped SpMV and SpGEMM (closed meshes only).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sqrt3Lak;

impl Sqrt3Lak {
    /// The refiner.
    pub const fn new() -> Self {
        Sqrt3Lak
    }
}

/// The matrices of one LAK level.
#[derive(Clone, Debug)]
struct LakLevel {
    /// `M` (`|v| × |f|`, values: 1-based corner positions); its CSC
    /// storage is the CSR storage of `Mᵀ`.
    m: CscMat<u32>,
    /// `F` (`|v| × |v|`): the triangle of each directed edge.
    f: CsrMat<u32>,
    /// `αᵢ` per vertex.
    alpha: Vec<f64>,
    /// `αᵢ / nᵢ` per vertex.
    w: Vec<f64>,
}

/// A built LAK √3 refinement.
#[derive(Clone, Debug)]
pub struct Sqrt3LakPlan {
    meshes: Vec<Mesh>,
    levels: Vec<LakLevel>,
}

fn unsupported(reason: String) -> SchemeError {
    SchemeError::Unsupported { scheme: "sqrt3-lak", reason }
}

/// `Q₃(a, b)`: position `b` follows position `a` in a triangle.
#[inline]
fn q3(a: u32, b: u32) -> bool {
    b == a % 3 + 1
}

/// One level's algebra and the child mesh.
fn build_level(parent: &Mesh, par: Par) -> Result<(LakLevel, Mesh)> {
    let t: &Topology = parent.topology();
    if let Some(e) = (0..t.num_edges()).find(|&e| t.is_boundary_edge(e)) {
        return Err(unsupported(format!(
            "edge {e} {:?} is a boundary edge; the LAK path (Appendix A) handles closed meshes only, use Sqrt3Slak for open ones",
            t.edge(e)
        )));
    }
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let m = t.mesh_matrix().map_err(|e| unsupported(format!("{e}: the mesh matrix cannot hold it")))?;
    let mt_csc: CscMat<u32> = m.to_csr(par).into_transpose();
    // Eq. 6-7: F(i, j) = the triangle k holding the directed edge i -> j.
    let f = spgemm::multiply(
        m.as_ref(),
        mt_csc.as_ref(),
        &Ops::new(|a: &u32, b: &u32| (*a, *b), |(a, b), c: &Collision<'_, u32, u32>| q3(a, b).then_some(c.k)),
        par,
    )?
    .to_csr(par);
    // Eq. 10 on F: valences (closed manifold: one outgoing directed edge
    // per neighbour).
    let ones = Array2::<u32>::ones((nv, 1));
    let mut n = Array2::<u32>::zeros((nv, 1));
    spmv_csr_into(f.as_ref(), ones.view(), n.view_mut(), Update::Set, |_, _, _| 1u32, par);
    let alpha: Vec<f64> = n.column(0).iter().map(|&k| alpha(k as usize)).collect();
    let w: Vec<f64> =
        n.column(0).iter().zip(&alpha).map(|(&k, &a)| if k == 0 { 0.0 } else { a / f64::from(k) }).collect();
    // Topology: one triangle per nonzero of M, corner (k, position a) of
    // triangle i at child face 3 i + a - 1.
    let mut fv = vec![0u32; 9 * nf];
    for i in 0..nf {
        let (rows, pos) = m.col(i);
        let vert_at = |p: u32| rows[pos.iter().position(|&x| x == p).unwrap_or(0)];
        for (&k, &a) in rows.iter().zip(pos) {
            let l = vert_at(a % 3 + 1);
            let Some(&g) = f.as_ref().get(l as usize, k as usize) else {
                return Err(unsupported(format!("the directed edge ({l}, {k}) has no triangle")));
            };
            let c = 3 * (3 * i + a as usize - 1);
            fv[c..c + 3].copy_from_slice(&[k, g + nv as u32, (i + nv) as u32]);
        }
    }
    let face_ptr: Vec<u32> = (0..=3 * nf as u32).map(|i| 3 * i).collect();
    let child = plain_mesh(Topology::build(nv + nf, face_ptr, fv, par)?)?;
    drop(mt_csc);
    Ok((LakLevel { m, f, alpha, w }, child))
}

/// One level of eval: face points (Eq. 26) after the updated vertices
/// (Eq. 24, 27).
fn eval_level<T: Float + Send + Sync + subla_algebra::Scalar>(lv: &LakLevel, x: &[T], y: &mut [T], d: usize, par: Par) {
    let nv = lv.f.nrows();
    let cast = |w: f64| T::from(w).unwrap_or_else(T::zero);
    let xv = ArrayView2::from_shape((nv, d), x).unwrap_or_else(|e| unreachable!("{e}"));
    let mut yv = ArrayViewMut2::from_shape((y.len() / d, d), y).unwrap_or_else(|e| unreachable!("{e}"));
    let third = cast(1.0 / 3.0);
    spmv_csr_into(lv.m.as_ref().transpose(), xv, yv.slice_mut(s![nv.., ..]), Update::Set, |_, _, _| third, par);
    let mut top = yv.slice_mut(s![..nv, ..]);
    spmv_csr_into(lv.f.as_ref(), xv, top.view_mut(), Update::Set, |_, i, _| cast(lv.w[i as usize]), par);
    for (i, mut row) in top.outer_iter_mut().enumerate() {
        let c = cast(1.0 - lv.alpha[i]);
        for (o, &v) in row.iter_mut().zip(xv.row(i)) {
            *o = *o + c * v;
        }
    }
}

impl Refiner for Sqrt3Lak {
    type Input = Mesh;
    type Plan = Sqrt3LakPlan;
    fn name(&self) -> &'static str {
        "sqrt3-lak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<Sqrt3LakPlan> {
        let mut meshes = vec![prepare(input)?];
        let mut lvls = Vec::with_capacity(levels as usize);
        for l in 0..levels as usize {
            let (lv, child) = build_level(&meshes[l], par)?;
            lvls.push(lv);
            meshes.push(child);
        }
        Ok(Sqrt3LakPlan { meshes, levels: lvls })
    }
    fn step(&self, mut plan: Sqrt3LakPlan, par: Par) -> Result<Sqrt3LakPlan> {
        // Closed meshes only: the boundary parity does not arise.
        let finest = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        drop(plan);
        let (lv, child) = build_level(&finest, par)?;
        Ok(Sqrt3LakPlan { meshes: vec![finest, child], levels: vec![lv] })
    }
}

impl Plan for Sqrt3LakPlan {
    fn levels(&self) -> u32 {
        self.levels.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, Mesh::num_vertices)
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        eval_levels(self, "sqrt3-lak", control, out, |l, x, y, d| eval_level(&self.levels[l], x, y, d, par));
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        eval_levels(self, "sqrt3-lak", control, out, |l, x, y, d| eval_level(&self.levels[l], x, y, d, par));
    }
    /// `R = [diag(1 − α) + F {val_i → αᵢ/nᵢ}; Mᵀ {→ ⅓}]`, rows sorted.
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let _ = par;
        let lv = self.levels.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        let (nv, nf) = (lv.f.nrows(), lv.m.ncols());
        let mut ptr = vec![0u32];
        let mut idx = Vec::with_capacity(lv.f.nnz() + nv + lv.m.nnz());
        let mut vals = Vec::with_capacity(idx.capacity());
        for i in 0..nv {
            let (cols, _) = lv.f.row(i);
            let mut diag = false;
            for &j in cols {
                if !diag && j as usize > i {
                    idx.push(i as u32);
                    vals.push(1.0 - lv.alpha[i]);
                    diag = true;
                }
                idx.push(j);
                vals.push(lv.w[i]);
            }
            if !diag {
                idx.push(i as u32);
                vals.push(1.0 - lv.alpha[i]);
            }
            ptr.push(idx.len() as u32);
        }
        for k in 0..nf {
            let (cols, _) = lv.m.col(k);
            idx.extend_from_slice(cols);
            vals.extend(cols.iter().map(|_| 1.0 / 3.0));
            ptr.push(idx.len() as u32);
        }
        Ok(CsrMat::try_new(nv + nf, nv, ptr, idx, vals)?)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.levels.get(level as usize).map(|lv| (lv.f.nnz() + lv.f.nrows() + lv.m.nnz()) as u64)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        self.meshes.get(level as usize)
    }
}
