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
//!             (layered vertex, `k = n/2`: the edge map weighs its two
//!              extraordinary edges (k − 3)/(2n), the others 2/(nk);
//!              x weighs (k − 3)/n)
//!             (boundary: (VF_∂ A/|F_∂| + 2 VE_∂ M/n + (n − 3) x)/n)
//! ```
//!
//! The maps carry the weights (row and column counts, boundary flags), so
//! each term is one mapped SpMV. The result equals the rows of
//! [`Plan::operator`](subla_scheme::Plan::operator) applied to `x` (to
//! rounding; tested).
//!
//! The refined cells are a mapped SpGEMM too ([`child_cells`]): `CF · FP`,
//! the signed cell–face matrix times the faces' position matrix (`FP(f, v)`
//! the 1-based place of `v` in face `f`), meets each corner `(c, v)` of
//! every cell once per face of `c` at `v`; the lambda turns each meeting
//! into the corner's two neighbours along that face, oriented out of `c`
//! (the sign), with the face and the two edges, and the reduction gathers
//! the three meetings of a corner into one entry. Each entry is then one
//! child hexahedron. The result equals the specialised kernels' cells
//! exactly (tested).

use ndarray::{Array2, ArrayView2, Axis, concatenate};
use rayon::prelude::*;
use subla_algebra::spgemm::Collision;
use subla_algebra::spgemm::{self, Ops};
use subla_algebra::spmv::spmv_csr;
use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_scheme::SchemeError;
use subla_volume::Cell;
use subla_volume::VolMesh;

use crate::VertexRule;

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
    child_points_with(m, x, VertexRule::default(), par)
}

/// [`child_points`] with the vertex rule `rule` at layered vertices (the
/// vertices on an extraordinary edge of a layered neighbourhood, found by
/// the kernels' test; under [`VertexRule::Layered`] the edge map weighs
/// their two extraordinary edges apart, see [`VertexRule`]).
///
/// # Errors
/// As [`child_points`].
///
/// # Panics
/// If `x` does not have one row per vertex.
pub fn child_points_with(m: &VolMesh, x: ArrayView2<'_, f64>, rule: VertexRule, par: Par) -> Result<Array2<f64>> {
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
    // The two extraordinary edges of each layered vertex.
    let layered: Vec<Option<[u32; 2]>> =
        if rule == VertexRule::Layered { crate::rules::layered_vertices(m, par) } else { vec![None; m.num_vertices()] };
    let v_edges = spmv_csr(
        ve.as_ref(),
        mid.view(),
        |_, i, j| {
            let v = i as usize;
            let n = nv_cells[v];
            if bvert[v] {
                if bedge[j as usize] { 2.0 / (nb_edges[v] * nb_edges[v]) } else { 0.0 }
            } else if let Some(ee) = layered[v] {
                let k = n / 2.0;
                if ee.contains(&j) { (k - 3.0) / (2.0 * n) } else { 2.0 / (n * k) }
            } else {
                3.0 / (n * nv_edges[v])
            }
        },
        par,
    );
    let mut vp = v_cells + &v_faces + &v_edges;
    for (v, mut row) in vp.axis_iter_mut(Axis(0)).enumerate() {
        let wx = if bvert[v] {
            let n = nb_edges[v];
            (n - 3.0) / n
        } else if layered[v].is_some() {
            let n = nv_cells[v];
            (n / 2.0 - 3.0) / n
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

/// One meeting of a cell corner with a face of the cell: the corner's
/// neighbours along the face, oriented out of the cell, with the face and
/// the edges to them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Meeting {
    prev: u32,
    next: u32,
    face: u32,
    edge_prev: u32,
    edge_next: u32,
}

/// The meetings of one corner (three at the corner of a cell whose
/// corners have three faces each; more is refused).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Corner {
    meetings: [Meeting; 3],
    len: u8,
}

impl Corner {
    fn merge(mut self, other: Corner) -> Corner {
        for m in &other.meetings[..usize::from(other.len.min(3))] {
            if usize::from(self.len) < 3 {
                self.meetings[usize::from(self.len)] = *m;
            }
            self.len = self.len.saturating_add(1);
        }
        self.len = self.len.saturating_add(other.len.saturating_sub(3));
        self
    }
}

/// The faces' position matrix `FP` (faces × vertices): `FP(f, v)` is the
/// 1-based place of `v` in face `f`.
fn face_positions(m: &VolMesh) -> Result<CsrMat<u32>> {
    let mut ptr = Vec::with_capacity(m.num_faces() + 1);
    let mut idx = Vec::new();
    let mut val = Vec::new();
    ptr.push(0u32);
    let mut row: Vec<(u32, u32)> = Vec::new();
    for f in 0..m.num_faces() {
        row.clear();
        row.extend(m.face(f).iter().enumerate().map(|(i, &v)| (v, i as u32 + 1)));
        row.sort_unstable();
        idx.extend(row.iter().map(|r| r.0));
        val.extend(row.iter().map(|r| r.1));
        ptr.push(
            u32::try_from(idx.len())
                .map_err(|_| SchemeError::TooLarge { what: "face corners", value: idx.len() as u128 })?,
        );
    }
    Ok(CsrMat::try_new(m.num_faces(), m.num_vertices(), ptr, idx, val)?)
}

/// The hexahedra of one step over `m` as a mapped SpGEMM (see the [module
/// docs](self)): one per cell corner, cell after cell, corners in the
/// cell's vertex order, each `(v, E(n₁), F(n₁n₂), E(n₂), E(n₃), F(n₁n₃), C,
/// F(n₂n₃))` in the child's numbering (vertex, edge, face, cell points) —
/// the cells [`CatmarkSolid`](crate::CatmarkSolid)'s kernels make, in the
/// same order.
///
/// # Errors
/// [`SchemeError::Algebra`] where a product overflows or memory runs out;
/// [`SchemeError::Unsupported`] naming a cell with a corner of more than
/// three faces (a pyramid's apex, which the volumetric meshes refuse).
pub fn child_cells(m: &VolMesh, par: Par) -> Result<Vec<Cell>> {
    let (nv, ne, nf) = (m.num_vertices() as u32, m.num_edges() as u32, m.num_faces() as u32);
    let cf = m.cell_face_matrix().map_err(crate::volume)?;
    let fp = face_positions(m)?;
    // The meeting of corner (c, v) with face f = k, oriented out of c.
    let meet = |sign: &i8, pos: &u32| (*sign, *pos);
    let lambda = |(sign, pos): (i8, u32), hit: &Collision<'_, i8, u32>| {
        let f = hit.k as usize;
        let (fv, fe) = (m.face(f), m.face_edges(f));
        let (k, i) = (fv.len(), pos as usize - 1);
        let (p, n) = (fv[(i + k - 1) % k], fv[(i + 1) % k]);
        // Edge i runs from vertex i to i + 1 of the face.
        let (ep, en) = (fe[(i + k - 1) % k], fe[i]);
        let mt = if sign > 0 {
            Meeting { prev: p, next: n, face: hit.k, edge_prev: ep, edge_next: en }
        } else {
            Meeting { prev: n, next: p, face: hit.k, edge_prev: en, edge_next: ep }
        };
        let mut meetings = [Meeting::default(); 3];
        meetings[0] = mt;
        Some(Corner { meetings, len: 1 })
    };
    let ops = Ops::new(meet, lambda).reduce(Corner::merge);
    let corners = spgemm::multiply(cf.as_ref(), fp.as_ref(), &ops, par)?;
    let cell = |c: usize| -> Result<Vec<Cell>> {
        let (cols, entries) = corners.as_ref().slice(c);
        // The first meeting in the order of the cell's faces, as the
        // kernels take it.
        let order: Vec<u32> = m.cell_faces(c).iter().map(|&code| code >> 1).collect();
        let rank = |f: u32| order.iter().position(|&g| g == f).unwrap_or(usize::MAX);
        m.cell_vertices(c)
            .iter()
            .map(|&v| {
                let at = cols.binary_search(&v).map_err(|_| SchemeError::Unsupported {
                    scheme: crate::NAME,
                    feature: "a cell corner on no face of the cell",
                    element: format!("cell {c}, vertex {v}"),
                    supported_by: "none",
                })?;
                let corner = entries[at];
                if corner.len != 3 {
                    return Err(SchemeError::Unsupported {
                        scheme: crate::NAME,
                        feature: "a cell corner of other than three faces",
                        element: format!("cell {c}, vertex {v} ({} faces)", corner.len),
                        supported_by: "none",
                    });
                }
                let here = &corner.meetings;
                let first = (0..3).min_by_key(|&i| rank(here[i].face)).unwrap_or(0);
                let after = |prev: u32| here.iter().find(|x| x.prev == prev).map_or(prev, |x| x.next);
                let to = |next: u32| here.iter().find(|x| x.next == next).copied().unwrap_or_default();
                let n1 = here[first].next;
                let n2 = after(n1);
                let n3 = after(n2);
                let (m1, m2, m3) = (to(n1), to(n2), to(n3));
                Ok(Cell::Hexahedron([
                    v,
                    nv + m1.edge_next,
                    nv + ne + m2.face,
                    nv + m2.edge_next,
                    nv + m3.edge_next,
                    nv + ne + m1.face,
                    nv + ne + nf + c as u32,
                    nv + ne + m3.face,
                ]))
            })
            .collect()
    };
    let per_cell: Vec<Result<Vec<Cell>>> = if par == Par::Rayon && m.num_cells() >= 256 {
        (0..m.num_cells()).into_par_iter().with_min_len(64).map(cell).collect()
    } else {
        (0..m.num_cells()).map(cell).collect()
    };
    let mut out = Vec::with_capacity(8 * m.num_cells());
    for cells in per_cell {
        out.extend(cells?);
    }
    Ok(out)
}
