//! One Catmull-Clark solid step as algebra (after Mlakar et al. 2020,
//! §3, carried to volumes): the child points as mapped products over the
//! incidence matrices of [`VolMesh`], with no traversal of the mesh.
//!
//! From the signed incidence matrices `CF` (cells × faces), `FE` (faces ×
//! edges), `EV` (edges × vertices) and the cell–vertex matrix `CV`:
//!
//! ```text
//! FV = |FE| · |EV|          faces × vertices (each vertex met twice)
//! EC = |FE|ᵀ · |CF|ᵀ        edges × cells (each cell met twice)
//! centroids  C = CV x / |V_c|,  A = FV x / |f|,  M = EV x / 2     (mapped SpMV)
//! cell point  C
//! face point  A/2 + (CFᵀ C)/4                    (boundary face: A)
//! edge point  (EC C/|C_e| + 2 EF A/n + (n − 3) M)/n  (boundary: M/2 + EF_∂ A/4)
//! vertex point (VC C/n + 3 VF A/|F_v| + 3 VE M/|E_v| + (n − 7) x)/n
//!             (boundary: (VF_∂ A/|F_∂| + 2 VE_∂ M/n + (n − 3) x)/n)
//! ```
//!
//! The maps carry the weights (row and column counts, boundary flags), so
//! each term is one mapped SpMV. The result equals the rows of
//! [`Plan::operator`](subla_scheme::Plan::operator) applied to `x` (to
//! rounding; tested).

use ndarray::{Array2, ArrayView2, Axis, concatenate};
use subla_algebra::spgemm::{self, Ops};
use subla_algebra::spmv::spmv_csr;
use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_volume::VolMesh;

/// `|A| · |B|` of two signed incidence matrices, counting collisions.
fn count_product(a: subla_algebra::CsrRef<'_, i8>, b: subla_algebra::CsrRef<'_, i8>, par: Par) -> Result<CsrMat<u32>> {
    Ok(spgemm::multiply(a, b, &Ops::mapped(|_: &i8, _: &i8| 1u32), par)?)
}

/// The transpose of `a`, in CSR.
fn transposed<T: Copy + Send + Sync>(a: &CsrMat<T>, par: Par) -> CsrMat<T> {
    a.to_csc(par).as_ref().transpose().to_owned()
}

/// Row lengths of a CSR matrix.
fn row_len<T>(a: &CsrMat<T>) -> Vec<f64> {
    a.ptr().windows(2).map(|w| f64::from(w[1] - w[0])).collect()
}

/// The child points of one step over `m` from the points `x` (`V × d`),
/// numbered as [`CatmarkSolid`](crate::CatmarkSolid)'s: vertex points, edge
/// points, face points, cell points.
///
/// # Errors
/// [`subla_scheme::SchemeError::Algebra`] where a product overflows or
/// memory runs out.
///
/// # Panics
/// If `x` does not have one row per vertex.
pub fn child_points(m: &VolMesh, x: ArrayView2<'_, f64>, par: Par) -> Result<Array2<f64>> {
    assert_eq!(x.nrows(), m.num_vertices(), "child_points: one row of x per vertex");
    let cf = m.cell_face_matrix().map_err(crate::volume)?;
    let fe = m.face_edge_matrix().map_err(crate::volume)?;
    let ev = m.edge_vertex_matrix().map_err(crate::volume)?;
    let cv = m.cell_vertex_matrix().map_err(crate::volume)?;
    let fv = count_product(fe.as_ref(), ev.as_ref(), par)?;
    let (fc, ef) = (transposed(&cf, par), transposed(&fe, par));
    let ec = count_product(ef.as_ref(), fc.as_ref(), par)?;
    let (vc, vf, ve) = (transposed(&cv, par), transposed(&fv, par), transposed(&ev, par));
    // Boundary flags of faces, edges, vertices.
    let bface: Vec<bool> = (0..m.num_faces()).map(|f| m.is_boundary_face(f)).collect();
    let bedge: Vec<bool> = (0..m.num_edges()).map(|e| m.is_boundary_edge(e)).collect();
    let bvert: Vec<bool> = (0..m.num_vertices()).map(|v| m.is_boundary_vertex(v)).collect();
    // Centroids and midpoints.
    let (cn, fn_) = (row_len(&cv), row_len(&fv));
    let cc = spmv_csr(cv.as_ref(), x, |_, i, _| 1.0 / cn[i as usize], par);
    let af = spmv_csr(fv.as_ref(), x, |_, i, _| 1.0 / fn_[i as usize], par);
    let mid = spmv_csr(ev.as_ref(), x, |_, _, _| 0.5, par);
    // Face points.
    let around_f = spmv_csr(fc.as_ref(), cc.view(), |_, _, _| 0.25, par);
    let mut fp = af.clone();
    for (f, mut row) in fp.axis_iter_mut(Axis(0)).enumerate() {
        if !bface[f] {
            row.zip_mut_with(&around_f.row(f), |a, &c| *a = 0.5 * *a + c);
        }
    }
    // Edge points.
    let (ne_faces, ne_cells) = (row_len(&ef), row_len(&ec));
    let e_cells = spmv_csr(ec.as_ref(), cc.view(), |_, i, _| 1.0 / (ne_faces[i as usize] * ne_cells[i as usize]), par);
    let e_faces = spmv_csr(
        ef.as_ref(),
        af.view(),
        |_, i, j| {
            let (n, e, f) = (ne_faces[i as usize], i as usize, j as usize);
            if bedge[e] { if bface[f] { 0.25 } else { 0.0 } } else { 2.0 / (n * n) }
        },
        par,
    );
    let mut ep = e_faces;
    for (e, mut row) in ep.axis_iter_mut(Axis(0)).enumerate() {
        let n = ne_faces[e];
        let (wm, wc) = if bedge[e] { (0.5, 0.0) } else { ((n - 3.0) / n, 1.0) };
        for k in 0..row.len() {
            row[k] += wm * mid[[e, k]] + wc * e_cells[[e, k]];
        }
    }
    // Vertex points.
    let (nv_cells, nv_faces, nv_edges) = (row_len(&vc), row_len(&vf), row_len(&ve));
    // Boundary counts per vertex: its boundary faces and edges.
    let nb_faces: Vec<f64> =
        (0..m.num_vertices()).map(|v| vf.row(v).0.iter().filter(|&&f| bface[f as usize]).count() as f64).collect();
    let nb_edges: Vec<f64> =
        (0..m.num_vertices()).map(|v| ve.row(v).0.iter().filter(|&&e| bedge[e as usize]).count() as f64).collect();
    let v_cells = spmv_csr(
        vc.as_ref(),
        cc.view(),
        |_, i, _| if bvert[i as usize] { 0.0 } else { 1.0 / (nv_cells[i as usize] * nv_cells[i as usize]) },
        par,
    );
    let v_faces = spmv_csr(
        vf.as_ref(),
        af.view(),
        |_, i, j| {
            let v = i as usize;
            if bvert[v] {
                if bface[j as usize] { 1.0 / (nb_edges[v] * nb_faces[v]) } else { 0.0 }
            } else {
                3.0 / (nv_cells[v] * nv_faces[v])
            }
        },
        par,
    );
    let v_edges = spmv_csr(
        ve.as_ref(),
        mid.view(),
        |_, i, j| {
            let v = i as usize;
            if bvert[v] {
                if bedge[j as usize] { 2.0 / (nb_edges[v] * nb_edges[v]) } else { 0.0 }
            } else {
                3.0 / (nv_cells[v] * nv_edges[v])
            }
        },
        par,
    );
    let mut vp = v_cells + &v_faces + &v_edges;
    for (v, mut row) in vp.axis_iter_mut(Axis(0)).enumerate() {
        let wx = if bvert[v] {
            let n = nb_edges[v];
            (n - 3.0) / n
        } else if nv_cells[v] > 0.0 {
            let n = nv_cells[v];
            (n - 7.0) / n
        } else {
            1.0
        };
        for k in 0..row.len() {
            row[k] += wx * x[[v, k]];
        }
    }
    Ok(concatenate(Axis(0), &[vp.view(), ep.view(), fp.view(), cc.view()]).expect("the same number of columns"))
}
