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
//! | boundary: `S = F + Fᵀ` keeping both operands; an entry with only `F(i, j)` is the boundary edge `i → j`, one with only `F(j, i)` the boundary edge `j → i` | sparse add with a map |
//! | new vertices per triangle (1, or 2 on a splitting step for a triangle with a boundary edge) and their offsets | exclusive scan |
//!
//! The appendix omits the boundary; this path adds Kobbelt's rule (see the
//! [crate docs](crate#rules)) from `S`: boundary vertices and their two
//! boundary neighbours, and each triangle's boundary edge. On plain steps
//! boundary vertices stay and a boundary corner gives `(k, l, i + |v|)`; on
//! splitting steps (the 2nd, 4th, … step, counted as [`crate::Sqrt3Slak`]
//! counts them) the new points and the boundary vertex rows are one more
//! sparse matrix each (the 1/27 masks), applied by SpMV. Both paths number
//! vertices and faces alike, so their refined meshes are equal and their
//! positions agree to rounding.

use ndarray::{Array2, ArrayView2, ArrayViewMut2, s};
use num_traits::Float;
use subla_algebra::mem::{try_filled_vec, try_vec_with_capacity};
use subla_algebra::scan::offsets_from_counts;
use subla_algebra::spmv::{Update, spmv_csr_into};
use subla_algebra::{CscMat, CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::eval_levels;
use subla_scheme::{Plan, Refiner, Result, SchemeError};

use crate::level::{
    BOUNDARY_EDGE, BOUNDARY_VERTEX, NONE, alpha, check_input, hole_children, is_kobbelt_step, plain_mesh, prepare,
};

/// √3 subdivision through mapped SpMV and SpGEMM, with Kobbelt's boundary
/// rule.
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
    /// `αᵢ / nᵢ` per interior vertex, 0 for boundary vertices.
    w: Vec<f64>,
    /// Weight of each vertex itself: `1 − αᵢ` inside, on the boundary 1
    /// (plain steps) or 19/27 (splitting steps).
    diag: Vec<f64>,
    /// Splitting steps: the boundary neighbours of boundary vertices with
    /// weight 4/27 (`|v| × |v|`).
    boundary: Option<CsrMat<f64>>,
    /// Splitting steps with a boundary: the new vertices' stencils (face
    /// points and trisection points, `new × |v|`); otherwise the new
    /// vertices are the face points `Mᵀ {→ ⅓}`.
    new_points: Option<CsrMat<f64>>,
}

/// A built LAK √3 refinement.
#[derive(Clone, Debug)]
pub struct Sqrt3LakPlan {
    meshes: Vec<Mesh>,
    levels: Vec<LakLevel>,
    first_step: u32,
}

impl Sqrt3LakPlan {
    /// The plan of `levels` steps over the prepared mesh `base`, whose first
    /// step has the global index `first_step`.
    fn over(base: Mesh, levels: u32, first_step: u32, par: Par) -> Result<Sqrt3LakPlan> {
        subla_scheme::predict(&crate::Sqrt3Rules, base.topology(), first_step, levels)?;
        let mut meshes = vec![base];
        let mut lvls = Vec::new();
        for l in 0..levels {
            let (lv, child) = build_level(&meshes[l as usize], is_kobbelt_step(first_step + l), par)?;
            lvls.push(lv);
            meshes.push(child);
        }
        Ok(Sqrt3LakPlan { meshes, levels: lvls, first_step })
    }

    /// The global index of this plan's first step (as
    /// [`subla_scheme::LevelPlan::first_level`] of a [`crate::Sqrt3Plan`]).
    pub fn first_level(&self) -> u32 {
        self.first_step
    }
}

const NAME: &str = "sqrt3-lak";

/// Appends `entries` as one CSR row: sorted by column, repeated columns
/// merged (their weights added).
fn push_row(entries: &[(u32, f64)], idx: &mut Vec<u32>, vals: &mut Vec<f64>) {
    let mut e = entries.to_vec();
    e.sort_by_key(|&(j, _)| j);
    let start = idx.len();
    for (j, x) in e {
        if idx.len() > start && idx[idx.len() - 1] == j {
            let last = vals.len() - 1;
            vals[last] += x;
        } else {
            idx.push(j);
            vals.push(x);
        }
    }
}

/// The boundary structure from `S = F + Fᵀ`: for each vertex, the
/// boundary neighbour it leads to (`i → next` is a boundary edge) and the
/// one leading to it (`prev → i`), [`NONE`] for interior vertices.
fn boundary_neighbours(f: &CsrMat<u32>, ft: &CsrMat<u32>) -> Result<(Vec<u32>, Vec<u32>)> {
    let nv = f.nrows();
    const WHAT: &str = "the boundary neighbours of each vertex";
    let (mut next, mut prev) = (try_filled_vec(nv, NONE, WHAT)?, try_filled_vec(nv, NONE, WHAT)?);
    for i in 0..nv {
        let (a, _) = f.row(i);
        let (b, _) = ft.row(i);
        let (mut p, mut q) = (0, 0);
        // Merge the sorted rows: an entry of one operand only is a
        // boundary edge.
        while p < a.len() || q < b.len() {
            match (a.get(p), b.get(q)) {
                (Some(&x), Some(&y)) if x == y => {
                    p += 1;
                    q += 1;
                }
                (Some(&x), Some(&y)) if x < y => {
                    next[i] = x;
                    p += 1;
                }
                (Some(&x), None) => {
                    next[i] = x;
                    p += 1;
                }
                (_, Some(&y)) => {
                    prev[i] = y;
                    q += 1;
                }
                (None, None) => unreachable!("the loop runs while an entry is left"),
            }
        }
    }
    Ok((next, prev))
}

/// One level's algebra and the child mesh; `kobbelt` for a
/// boundary-splitting step.
fn build_level(parent: &Mesh, kobbelt: bool, par: Par) -> Result<(LakLevel, Mesh)> {
    let t: &Topology = parent.topology();
    // Every level, not only the input: a manifold mesh can refine into a
    // non-manifold one (two triangles glued along all three edges make an
    // edge of six triangles), and Eq. 6-7 need one triangle per directed
    // edge.
    check_input(t)?;
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let m = t.mesh_matrix()?;
    // Eq. 6-7: F(i, j) = the triangle k holding the directed edge i -> j
    // (`subla_mesh::matrices`).
    let f = subla_mesh::matrices::directed_edge_faces(t, par)?;
    let ft: CsrMat<u32> = f.to_csc(par).into_transpose();
    let (next, prev) = boundary_neighbours(&f, &ft)?;
    drop(ft);
    // Eq. 10 on F: valences (one outgoing directed edge per neighbour
    // inside; boundary vertices do not use it).
    let ones = Array2::<u32>::ones((nv, 1));
    let mut n = Array2::<u32>::zeros((nv, 1));
    spmv_csr_into(f.as_ref(), ones.view(), n.view_mut(), Update::Set, |_, _, _| 1u32, par);
    let on_boundary = |i: usize| next[i] != NONE || prev[i] != NONE;
    let alpha: Vec<f64> =
        n.column(0).iter().enumerate().map(|(i, &k)| if on_boundary(i) { 0.0 } else { alpha(k as usize) }).collect();
    let w: Vec<f64> = n
        .column(0)
        .iter()
        .zip(&alpha)
        .enumerate()
        .map(|(i, (&k, &a))| if k == 0 || on_boundary(i) { 0.0 } else { a / f64::from(k) })
        .collect();
    let diag: Vec<f64> = (0..nv)
        .map(|i| match (on_boundary(i), kobbelt) {
            (false, _) => 1.0 - alpha[i],
            (true, false) => 1.0,
            (true, true) => BOUNDARY_VERTEX[1],
        })
        .collect();

    // The corners of triangle i in face order: (vertex, position).
    let corners = |i: usize| -> [u32; 3] {
        let (rows, pos) = m.col(i);
        let mut v = [NONE; 3];
        for (&k, &a) in rows.iter().zip(pos) {
            v[a as usize - 1] = k;
        }
        v
    };
    // Each triangle's boundary edge `a -> b` (F(b, a) absent), on
    // splitting steps.
    let mut bedge = try_filled_vec(nf, [NONE; 2], "the boundary edges of each face")?;
    if kobbelt {
        for (i, be) in bedge.iter_mut().enumerate() {
            let v = corners(i);
            let mut count = 0;
            for j in 0..3 {
                let (a, b) = (v[j], v[(j + 1) % 3]);
                if f.as_ref().get(b as usize, a as usize).is_none() {
                    *be = [a, b];
                    count += 1;
                }
            }
            if count > 1 {
                return Err(SchemeError::BoundaryFace { scheme: NAME, face: i, edges: count });
            }
        }
    }
    // New vertices per triangle, and their offsets (a scan).
    let counts: Vec<u32> = bedge.iter().map(|b| 1 + u32::from(b[0] != NONE)).collect();
    let off = offsets_from_counts(&counts, par)?;
    let new = off[nf] as usize;
    let split_any = new > nf;
    // The new vertex of triangle i facing its edge that starts at u.
    let apex = |i: usize, u: u32| -> u32 {
        let base = (nv as u32) + off[i];
        if counts[i] == 2 && bedge[i][1] == u { base + 1 } else { base }
    };

    // Topology: one triangle per corner, corner (k, position a) of triangle
    // i at child face 3 i + a - 1.
    let mut fv = try_filled_vec(9 * nf, 0u32, "the vertices of the refined faces")?;
    for (i, children) in fv.chunks_exact_mut(9).enumerate() {
        let v = corners(i);
        for (a, child) in children.chunks_exact_mut(3).enumerate() {
            let (k, l, o) = (v[a], v[(a + 1) % 3], v[(a + 2) % 3]);
            let tri = match f.as_ref().get(l as usize, k as usize) {
                Some(&g) => [k, apex(g as usize, l), apex(i, k)],
                None if kobbelt => {
                    let base = (nv as u32) + off[i];
                    [base, base + 1, o]
                }
                None => [k, l, (nv as u32) + off[i]],
            };
            child.copy_from_slice(&tri);
        }
    }
    let face_ptr: Vec<u32> = (0..=3 * nf as u32).map(|i| 3 * i).collect();
    let child = hole_children(plain_mesh(Topology::build(nv + new, face_ptr, fv, par)?)?, parent)?;

    // Splitting steps: the boundary vertex rows and the new points as
    // sparse matrices.
    let boundary = if kobbelt && (0..nv).any(on_boundary) {
        let mut ptr = vec![0u32];
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        for i in 0..nv {
            if on_boundary(i) {
                push_row(&[(prev[i], BOUNDARY_VERTEX[0]), (next[i], BOUNDARY_VERTEX[0])], &mut idx, &mut vals);
            }
            ptr.push(idx.len() as u32);
        }
        Some(CsrMat::try_new(nv, nv, ptr, idx, vals)?)
    } else {
        None
    };
    let new_points = if split_any {
        let [w1, w16, w10] = BOUNDARY_EDGE;
        let mut ptr = vec![0u32];
        let (mut idx, mut vals) = (
            try_vec_with_capacity(3 * new, "the new-point matrix")?,
            try_vec_with_capacity(3 * new, "the new-point matrix")?,
        );
        let mut row = |entries: [(u32, f64); 3]| {
            push_row(&entries, &mut idx, &mut vals);
            ptr.push(idx.len() as u32);
        };
        for i in 0..nf {
            let v = corners(i);
            if counts[i] == 1 {
                row(v.map(|k| (k, 1.0 / 3.0)));
            } else {
                let [a, b] = bedge[i];
                row([(prev[a as usize], w1), (a, w16), (b, w10)]);
                row([(a, w10), (b, w16), (next[b as usize], w1)]);
            }
        }
        Some(CsrMat::try_new(new, nv, ptr, idx, vals)?)
    } else {
        None
    };
    Ok((LakLevel { m, f, w, diag, boundary, new_points }, child))
}

/// One level of eval: the new points (Eq. 26, or on splitting steps their
/// matrix), then the updated vertices (Eq. 24, 27, and Kobbelt's boundary
/// rows).
fn eval_level<T: Float + Send + Sync + subla_algebra::Scalar>(lv: &LakLevel, x: &[T], y: &mut [T], d: usize, par: Par) {
    let nv = lv.f.nrows();
    let cast = |w: f64| T::from(w).unwrap_or_else(T::zero);
    let xv = ArrayView2::from_shape((nv, d), x).unwrap_or_else(|e| unreachable!("{e}"));
    let mut yv = ArrayViewMut2::from_shape((y.len() / d, d), y).unwrap_or_else(|e| unreachable!("{e}"));
    match &lv.new_points {
        Some(np) => {
            spmv_csr_into(np.as_ref(), xv, yv.slice_mut(s![nv.., ..]), Update::Set, |&w, _, _| cast(w), par);
        }
        None => {
            let third = cast(1.0 / 3.0);
            spmv_csr_into(lv.m.as_ref().transpose(), xv, yv.slice_mut(s![nv.., ..]), Update::Set, |_, _, _| third, par);
        }
    }
    let mut top = yv.slice_mut(s![..nv, ..]);
    spmv_csr_into(lv.f.as_ref(), xv, top.view_mut(), Update::Set, |_, i, _| cast(lv.w[i as usize]), par);
    if let Some(b) = &lv.boundary {
        spmv_csr_into(b.as_ref(), xv, top.view_mut(), Update::Add, |&w, _, _| cast(w), par);
    }
    for (i, mut row) in top.outer_iter_mut().enumerate() {
        let c = cast(lv.diag[i]);
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
        subla_scheme::predict(&crate::Sqrt3Rules, input.topology(), 0, levels)?;
        Sqrt3LakPlan::over(prepare(input)?, levels, 0, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<subla_scheme::Prediction>> {
        subla_scheme::predict(&crate::Sqrt3Rules, input.topology(), 0, levels)
    }
    fn step(&self, mut plan: Sqrt3LakPlan, par: Par) -> Result<Sqrt3LakPlan> {
        // The step count continues, as in `Sqrt3Slak`.
        let first = plan.first_step + plan.levels.len() as u32;
        let finest = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        drop(plan);
        Sqrt3LakPlan::over(finest, 1, first, par)
    }
}

impl Plan for Sqrt3LakPlan {
    fn levels(&self) -> u32 {
        self.levels.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, Mesh::num_vertices)
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        eval_levels(self, NAME, control, out, |l, x, y, d| eval_level(&self.levels[l], x, y, d, par))
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        eval_levels(self, NAME, control, out, |l, x, y, d| eval_level(&self.levels[l], x, y, d, par))
    }
    /// `R = [diag + F {val_i → wᵢ} + B; N]`, rows sorted: `B` the
    /// boundary rows of splitting steps, `N` the new points (`Mᵀ {→ ⅓}`
    /// without a split boundary).
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let _ = par;
        let lv = self.levels.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        let nv = lv.f.nrows();
        let new = lv.new_points.as_ref().map_or(lv.m.ncols(), CsrMat::nrows);
        let mut ptr = vec![0u32];
        let mut idx = try_vec_with_capacity(lv.f.nnz() + nv + 3 * new, "the indices of a refinement matrix")?;
        let mut vals = try_vec_with_capacity(idx.capacity(), "the values of a refinement matrix")?;
        let mut entries = Vec::new();
        for i in 0..nv {
            entries.clear();
            if lv.w[i] != 0.0 {
                entries.extend(lv.f.row(i).0.iter().map(|&j| (j, lv.w[i])));
            }
            entries.push((i as u32, lv.diag[i]));
            if let Some(b) = &lv.boundary {
                let (cols, w) = b.row(i);
                entries.extend(cols.iter().copied().zip(w.iter().copied()));
            }
            push_row(&entries, &mut idx, &mut vals);
            ptr.push(idx.len() as u32);
        }
        for k in 0..new {
            match &lv.new_points {
                Some(np) => {
                    let (cols, w) = np.row(k);
                    idx.extend_from_slice(cols);
                    vals.extend_from_slice(w);
                }
                None => {
                    let (cols, _) = lv.m.col(k);
                    idx.extend_from_slice(cols);
                    vals.extend(cols.iter().map(|_| 1.0 / 3.0));
                }
            }
            ptr.push(idx.len() as u32);
        }
        Ok(CsrMat::try_new(nv + new, nv, ptr, idx, vals)?)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.levels.get(level as usize).map(|lv| (lv.f.nnz() + 3 * lv.f.nrows() + 2 * lv.m.nnz()) as u64)
    }
    fn refined(&self, level: u32, _par: Par) -> Result<&Mesh> {
        self.meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }
}
