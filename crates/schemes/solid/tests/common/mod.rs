//! Helpers shared by the limit tests of layered and irregular cells.
#![allow(dead_code)]

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_solid::limit::{Quantity, limit_matrix};
use subla_volume::VolMesh;

/// Corner parameters of a VTK hexahedron's vertices.
pub(crate) const CORNER: [[f64; 3]; 8] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 0.0, 1.0],
    [1.0, 1.0, 1.0],
    [0.0, 1.0, 1.0],
];
/// The three first derivatives.
pub(crate) const DERIVS: [Quantity; 3] = [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW];

/// `x` moved by up to `amp / 2` per coordinate (a fixed generator).
pub(crate) fn jitter(x: &Array2<f64>, seed: u64, amp: f64) -> Array2<f64> {
    let mut s = seed;
    x.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + amp * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    })
}

/// `q` at `samples` by the limit matrix.
pub(crate) fn at(m: &VolMesh, x: &Array2<f64>, samples: &[(u32, [f64; 3])], q: Quantity) -> Array2<f64> {
    let r = limit_matrix(m, samples, q, Par::Rayon).unwrap();
    spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
}

/// The largest difference of two arrays.
pub(crate) fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter().zip(b.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()))
}

/// The parameter, in parent cell `c` of `m`, of each child point of it.
pub(crate) fn parent_params(m: &VolMesh, c: u32) -> impl Fn(usize) -> [f64; 3] + '_ {
    let (nv, ne, nf) = (m.num_vertices(), m.num_edges(), m.num_faces());
    let corners = m.cell_vertices(c as usize);
    let param = move |v: u32| CORNER[corners.iter().position(|&u| u == v).expect("a corner of the cell")];
    let mean = move |vs: &[u32]| -> [f64; 3] {
        let ps: Vec<[f64; 3]> = vs.iter().map(|&v| param(v)).collect();
        std::array::from_fn(|k| ps.iter().map(|p| p[k]).sum::<f64>() / ps.len() as f64)
    };
    move |r: usize| {
        if r < nv {
            param(r as u32)
        } else if r < nv + ne {
            mean(&m.edge(r - nv))
        } else if r < nv + ne + nf {
            mean(m.face(r - nv - ne))
        } else {
            [0.5; 3]
        }
    }
}

/// Every child of `c` (refined into `child`, points `y`) against its parent
/// (`m`, points `x`): positions at the child's corners and at `inner`
/// parameters to 1e-12, the three derivatives at the inner ones by the
/// chain rule to 1e-10.
pub(crate) fn check_children(
    m: &VolMesh,
    x: &Array2<f64>,
    child: &VolMesh,
    y: &Array2<f64>,
    c: u32,
    inner: &[[f64; 3]],
) {
    check_children_with(m, child, y, c, inner, |s, q| at(m, x, s, q));
}

/// [`check_children`] with the parent's limit given by `parent_at`
/// (samples of `m`, quantity → values).
pub(crate) fn check_children_with(
    m: &VolMesh,
    child: &VolMesh,
    y: &Array2<f64>,
    c: u32,
    inner: &[[f64; 3]],
    parent_at: impl Fn(&[(u32, [f64; 3])], Quantity) -> Array2<f64>,
) {
    let of_child = parent_params(m, c);
    for ch in 8 * c..8 * c + 8 {
        if subla_solid::limit::cell_grid(child, ch as usize).is_none() {
            continue;
        }
        let cp: Vec<[f64; 3]> = child.cell_vertices(ch as usize).iter().map(|&v| of_child(v as usize)).collect();
        let p0 = cp[0];
        let j: [[f64; 3]; 3] = std::array::from_fn(|a| [1, 3, 4].map(|k| cp[k][a] - p0[a]));
        let to_parent = |q: [f64; 3]| -> [f64; 3] {
            std::array::from_fn(|a| p0[a] + j[a][0] * q[0] + j[a][1] * q[1] + j[a][2] * q[2])
        };
        let mut qs: Vec<[f64; 3]> = CORNER.to_vec();
        qs.extend(inner);
        let sc: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (ch, q)).collect();
        let sp: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (c, to_parent(q))).collect();
        let d = max_diff(&at(child, y, &sc, Quantity::Position), &parent_at(&sp, Quantity::Position));
        assert!(d < 1e-12, "child {ch} of cell {c}: positions {d}");
        let (sc, sp) = (&sc[8..], &sp[8..]);
        let dp: Vec<Array2<f64>> = DERIVS.iter().map(|&q| parent_at(sp, q)).collect();
        for (i, &q) in DERIVS.iter().enumerate() {
            let want = &dp[0] * j[0][i] + &dp[1] * j[1][i] + &dp[2] * j[2][i];
            let d = max_diff(&at(child, y, sc, q), &want);
            assert!(d < 1e-10, "child {ch} of cell {c}: {q:?} {d}");
        }
    }
}

/// The parameters in cell `c` of the vertices `fv`.
fn face_params(m: &VolMesh, c: u32, fv: &[u32]) -> Vec<[f64; 3]> {
    let cv = m.cell_vertices(c as usize);
    fv.iter().map(|v| CORNER[cv.iter().position(|u| u == v).expect("a vertex of the cell")]).collect()
}

/// The limit across face `f` between cells `a` and `b`: positions at 25
/// points to 1e-12 from both sides, and the three derivatives (mapped by
/// the signed permutation between the two cells' parameters) to 1e-10 at
/// those of the points `smooth` keeps (`a`'s parameters).
pub(crate) fn check_face(m: &VolMesh, x: &Array2<f64>, a: u32, b: u32, f: usize, smooth: impl Fn([f64; 3]) -> bool) {
    check_face_with(m, a, b, f, smooth, |s, q| at(m, x, s, q));
}

/// [`check_face`] with the limit given by `at` (samples, quantity →
/// values).
pub(crate) fn check_face_with(
    m: &VolMesh,
    a: u32,
    b: u32,
    f: usize,
    smooth: impl Fn([f64; 3]) -> bool,
    at: impl Fn(&[(u32, [f64; 3])], Quantity) -> Array2<f64>,
) {
    let ab = [0.0, 0.3, 0.5, 0.8, 1.0];
    let fv = m.face(f);
    let (pa, pb) = (face_params(m, a, fv), face_params(m, b, fv));
    let bil = |p: &[[f64; 3]], s: f64, t: f64| -> [f64; 3] {
        std::array::from_fn(|k| {
            (1.0 - s) * (1.0 - t) * p[0][k] + s * (1.0 - t) * p[1][k] + s * t * p[2][k] + (1.0 - s) * t * p[3][k]
        })
    };
    let st: Vec<(f64, f64)> = ab.iter().flat_map(|&s| ab.iter().map(move |&t| (s, t))).collect();
    let sa: Vec<(u32, [f64; 3])> = st.iter().map(|&(s, t)| (a, bil(&pa, s, t))).collect();
    let sb: Vec<(u32, [f64; 3])> = st.iter().map(|&(s, t)| (b, bil(&pb, s, t))).collect();
    let d = max_diff(&at(&sa, Quantity::Position), &at(&sb, Quantity::Position));
    assert!(d < 1e-12, "cells {a} and {b}: positions {d}");
    // b's parameters are M a's + const, M a signed permutation.
    let normal = |p: &[[f64; 3]]| (0..3).find(|&k| p.iter().all(|q| q[k] == p[0][k])).expect("a face");
    let (na, nb) = (normal(&pa), normal(&pb));
    let mut mm = [[0.0f64; 3]; 3];
    for (u, w) in [(1usize, 0usize), (3, 0)] {
        let da: [f64; 3] = std::array::from_fn(|k| pa[u][k] - pa[w][k]);
        let db: [f64; 3] = std::array::from_fn(|k| pb[u][k] - pb[w][k]);
        let ia = (0..3).find(|&k| da[k] != 0.0).unwrap();
        for k in 0..3 {
            mm[k][ia] = db[k] / da[ia];
        }
    }
    let into_b = if pa[0][na] == 1.0 { 1.0 } else { -1.0 };
    let into_b_in_b = if pb[0][nb] == 0.0 { 1.0 } else { -1.0 };
    mm[nb][na] = into_b * into_b_in_b;
    let keep: Vec<usize> = (0..st.len()).filter(|&i| smooth(sa[i].1)).collect();
    let sa2: Vec<(u32, [f64; 3])> = keep.iter().map(|&i| sa[i]).collect();
    let sb2: Vec<(u32, [f64; 3])> = keep.iter().map(|&i| sb[i]).collect();
    let db: Vec<Array2<f64>> = DERIVS.iter().map(|&q| at(&sb2, q)).collect();
    for (i, &q) in DERIVS.iter().enumerate() {
        let want = &db[0] * mm[0][i] + &db[1] * mm[1][i] + &db[2] * mm[2][i];
        let d = max_diff(&at(&sa2, q), &want);
        assert!(d < 1e-10, "cells {a} and {b}: {q:?} {d}");
    }
}
