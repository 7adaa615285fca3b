//! The limit volume of irregular cells (extraordinary edges meeting at one
//! vertex): the local subdivision matrix's powers down to a regular or
//! layered child. The tests are the mathematics: a child's limit is its
//! parent's, the limit is continuous across faces, derivatives are the
//! positions' difference quotients, and refined control points converge.

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{CellClass, CellGrid, Quantity, cell_grid, classify, limit_matrix};
use subla_volume::VolMesh;

const CORNER: [[f64; 3]; 8] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 0.0, 1.0],
    [1.0, 1.0, 1.0],
    [0.0, 1.0, 1.0],
];
const DERIVS: [Quantity; 3] = [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW];

fn jitter(x: &Array2<f64>, seed: u64, amp: f64) -> Array2<f64> {
    let mut s = seed;
    x.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + amp * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    })
}

/// A tetrahedron split into four hexahedra, refined twice: its centre is an
/// extraordinary vertex inside, four extraordinary edges of valence 3
/// meeting there; the four cells at it are irregular.
fn shape() -> (VolMesh, Array2<f64>) {
    let t = subla_volume::shapes::tetra_split().unwrap();
    let plan = CatmarkSolid::default().build(&t.mesh, 2, Par::Rayon).unwrap();
    let x = eval(&plan, t.vertices.view(), Par::Rayon).unwrap();
    (plan.mesh(2).clone(), jitter(&x, 21, 0.01))
}

fn at(m: &VolMesh, x: &Array2<f64>, samples: &[(u32, [f64; 3])], q: Quantity) -> Array2<f64> {
    let r = limit_matrix(m, samples, q, Par::Rayon).unwrap();
    spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
}

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter().zip(b.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()))
}

fn irregular(m: &VolMesh) -> Vec<u32> {
    (0..m.num_cells() as u32).filter(|&c| classify(m, c as usize) == CellClass::Irregular).collect()
}

#[test]
fn irregular_cells_are_found_and_share_their_configuration() {
    let (m, _) = shape();
    let mut count = std::collections::BTreeMap::new();
    for c in 0..m.num_cells() {
        *count.entry(classify(&m, c)).or_insert(0usize) += 1;
    }
    println!("{count:?}");
    let cells = irregular(&m);
    assert_eq!(cells.len(), 4, "{count:?}");
    let grids: Vec<_> = cells
        .iter()
        .map(|&c| match cell_grid(&m, c as usize) {
            Some(CellGrid::Irregular(g)) => g,
            other => panic!("cell {c}: {other:?}"),
        })
        .collect();
    let ev = grids[0].extraordinary_vertex();
    for g in &grids {
        assert_eq!(g.extraordinary_vertex(), ev);
        // The same configuration: one matrix, shared.
        assert_eq!(g.subdivision_matrix(), grids[0].subdivision_matrix());
        let a = g.subdivision_matrix();
        for r in 0..a.nrows() {
            assert!((a.row(r).sum() - 1.0).abs() < 1e-13);
        }
    }
    // The eigendecomposition reproduces A (checked when made) and its
    // powers are A's.
    let a = grids[0].subdivision_matrix();
    let values = grids[0].eigenvalues().expect("a real eigendecomposition");
    assert_eq!(values.len(), a.nrows());
    assert!((values[0] - 1.0).abs() < 1e-12 && values[1] < 1.0 - 1e-9, "{values:?}");
    let e = subla_solid::eigen::Eigen::decompose(a, None).unwrap();
    let a3 = a * a * a;
    assert!((e.power(3) - &a3).amax() < 1e-12);
    assert!(e.residual() < 1e-11);
    println!(
        "support {} points, eigenvalues {:?} … {:?}",
        grids[0].points.len(),
        &values[..10],
        &values[values.len() - 6..]
    );
}

/// The parameter, in parent cell `c` of `m`, of each child point of it.
fn parent_params(m: &VolMesh, c: u32) -> impl Fn(usize) -> [f64; 3] + '_ {
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

#[test]
fn a_child_cell_has_its_irregular_parents_limit() {
    let inside = [0.13, 0.5, 0.91];
    let mut grid = Vec::new();
    for w in inside {
        for v in inside {
            for u in inside {
                grid.push([u, v, w]);
            }
        }
    }
    let (m, x) = shape();
    let plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let mut classes = std::collections::BTreeMap::new();
    for c in irregular(&m) {
        let of_child = parent_params(&m, c);
        for ch in 8 * c..8 * c + 8 {
            *classes.entry(classify(child, ch as usize)).or_insert(0usize) += 1;
            let cp: Vec<[f64; 3]> = child.cell_vertices(ch as usize).iter().map(|&v| of_child(v as usize)).collect();
            let p0 = cp[0];
            let j: [[f64; 3]; 3] = std::array::from_fn(|a| [1, 3, 4].map(|k| cp[k][a] - p0[a]));
            let to_parent = |q: [f64; 3]| -> [f64; 3] {
                std::array::from_fn(|a| p0[a] + j[a][0] * q[0] + j[a][1] * q[1] + j[a][2] * q[2])
            };
            let mut qs: Vec<[f64; 3]> = CORNER.to_vec();
            qs.extend(&grid);
            let sc: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (ch, q)).collect();
            let sp: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (c, to_parent(q))).collect();
            let d = max_diff(&at(child, &y, &sc, Quantity::Position), &at(&m, &x, &sp, Quantity::Position));
            assert!(d < 1e-12, "child {ch} of cell {c}: positions {d}");
            let (sc, sp) = (&sc[8..], &sp[8..]);
            let dp: Vec<Array2<f64>> = DERIVS.iter().map(|&q| at(&m, &x, sp, q)).collect();
            for (i, &q) in DERIVS.iter().enumerate() {
                let want = &dp[0] * j[0][i] + &dp[1] * j[1][i] + &dp[2] * j[2][i];
                let d = max_diff(&at(child, &y, sc, q), &want);
                assert!(d < 1e-10, "child {ch} of cell {c}: {q:?} {d}");
            }
        }
    }
    println!("children: {classes:?}");
    assert_eq!(classes.get(&CellClass::Irregular), Some(&4), "{classes:?}");
}

fn face_params(m: &VolMesh, c: u32, fv: &[u32]) -> Vec<[f64; 3]> {
    let cv = m.cell_vertices(c as usize);
    fv.iter().map(|v| CORNER[cv.iter().position(|u| u == v).expect("a vertex of the cell")]).collect()
}

#[test]
fn the_limit_is_continuous_across_the_faces_of_irregular_cells() {
    let ab = [0.0, 0.3, 0.5, 0.8, 1.0];
    let (m, x) = shape();
    let mut pairs = std::collections::BTreeMap::new();
    for a in irregular(&m) {
        let Some(CellGrid::Irregular(ga)) = cell_grid(&m, a as usize) else { unreachable!() };
        for &code in m.cell_faces(a as usize) {
            let f = (code >> 1) as usize;
            let [c0, c1] = m.face_cells(f);
            let b = if c0 == a { c1 } else { c0 };
            if b == subla_volume::NONE || cell_grid(&m, b as usize).is_none() {
                continue;
            }
            *pairs.entry(classify(&m, b as usize)).or_insert(0usize) += 1;
            let fv = m.face(f);
            let (pa, pb) = (face_params(&m, a, fv), face_params(&m, b, fv));
            let bil = |p: &[[f64; 3]], s: f64, t: f64| -> [f64; 3] {
                std::array::from_fn(|k| {
                    (1.0 - s) * (1.0 - t) * p[0][k]
                        + s * (1.0 - t) * p[1][k]
                        + s * t * p[2][k]
                        + (1.0 - s) * t * p[3][k]
                })
            };
            let st: Vec<(f64, f64)> = ab.iter().flat_map(|&s| ab.iter().map(move |&t| (s, t))).collect();
            let sa: Vec<(u32, [f64; 3])> = st.iter().map(|&(s, t)| (a, bil(&pa, s, t))).collect();
            let sb: Vec<(u32, [f64; 3])> = st.iter().map(|&(s, t)| (b, bil(&pb, s, t))).collect();
            let d = max_diff(&at(&m, &x, &sa, Quantity::Position), &at(&m, &x, &sb, Quantity::Position));
            assert!(d < 1e-12, "cells {a} and {b}: positions {d}");
            // Derivatives off the extraordinary edges (where the
            // parametrisations are singular): the signed permutation
            // between the two cells' parameters.
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
            // Local coordinates of a's samples (the extraordinary vertex at
            // 0): keep those with two of them positive.
            let local = |p: [f64; 3]| -> [f64; 3] {
                std::array::from_fn(|k| {
                    if ga.axes[k].1 { 1.0 - p[ga.axes[k].0 as usize] } else { p[ga.axes[k].0 as usize] }
                })
            };
            let keep: Vec<usize> =
                (0..st.len()).filter(|&i| local(sa[i].1).iter().filter(|&&t| t > 1e-9).count() >= 2).collect();
            let sa2: Vec<(u32, [f64; 3])> = keep.iter().map(|&i| sa[i]).collect();
            let sb2: Vec<(u32, [f64; 3])> = keep.iter().map(|&i| sb[i]).collect();
            let db: Vec<Array2<f64>> = DERIVS.iter().map(|&q| at(&m, &x, &sb2, q)).collect();
            for (i, &q) in DERIVS.iter().enumerate() {
                let want = &db[0] * mm[0][i] + &db[1] * mm[1][i] + &db[2] * mm[2][i];
                let d = max_diff(&at(&m, &x, &sa2, q), &want);
                assert!(d < 1e-10, "cells {a} and {b}: {q:?} {d}");
            }
        }
    }
    println!("neighbours checked: {pairs:?}");
    assert!(pairs.get(&CellClass::Irregular).copied().unwrap_or(0) >= 4, "{pairs:?}");
    assert!(pairs.get(&CellClass::Layered).copied().unwrap_or(0) >= 4, "{pairs:?}");
}

#[test]
fn irregular_derivatives_are_the_positions_difference_quotients() {
    let (m, x) = shape();
    let h: f64 = 1e-6;
    for c in irregular(&m) {
        for p in [[0.3, 0.55, 0.7], [0.05, 0.02, 0.03], [0.6, 0.01, 0.9], [0.004, 0.3, 0.002]] {
            for (axis, &q) in DERIVS.iter().enumerate() {
                let (mut lo, mut hi) = (p, p);
                lo[axis] -= h.min(p[axis] / 2.0);
                hi[axis] += h.min(p[axis] / 2.0);
                let f = at(&m, &x, &[(c, lo), (c, hi)], Quantity::Position);
                let d = at(&m, &x, &[(c, p)], q);
                for k in 0..3 {
                    let fd = (f[[1, k]] - f[[0, k]]) / (hi[axis] - lo[axis]);
                    assert!((fd - d[[0, k]]).abs() < 1e-5, "cell {c} {p:?} {q:?}[{k}]: {fd} vs {}", d[[0, k]]);
                }
            }
        }
    }
}

#[test]
fn irregular_rows_sum_to_one_keep_the_contract_and_refuse_derivatives_at_the_vertex() {
    let (m, _) = shape();
    let cells = irregular(&m);
    let r = subla_solid::limit::SolidLimit::grid(cells.iter().copied(), 3, Quantity::Position);
    subla_scheme::testing::check_contract_of(&r, &m, m.num_vertices(), 1, 1e-12);
    let samples = r.samples().to_vec();
    let p = limit_matrix(&m, &samples, Quantity::Position, Par::Seq).unwrap();
    for row in 0..p.nrows() {
        let s: f64 = p.row(row).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-12, "row {row} sums to {s}");
    }
    assert_eq!(p, limit_matrix(&m, &samples, Quantity::Position, Par::Rayon).unwrap());
    // Derivatives: off the vertex rows sum to 0; at it, refused by cell.
    let Some(CellGrid::Irregular(g)) = cell_grid(&m, cells[0] as usize) else { unreachable!() };
    let at_ev: [f64; 3] = std::array::from_fn(|k| f64::from(u8::from(g.axes[k].1)));
    let e = limit_matrix(&m, &[(cells[0], [0.5; 3]), (cells[0], at_ev)], Quantity::DerivV, Par::Seq).unwrap_err();
    let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<subla_solid::limit::LimitError>());
    assert_eq!(why, Some(&subla_solid::limit::LimitError::SingularDerivative { cell: cells[0] }), "{e}");
    let d = limit_matrix(&m, &[(cells[0], [0.5, 0.01, 0.2])], Quantity::DerivV, Par::Seq).unwrap();
    assert!(d.row(0).1.iter().sum::<f64>().abs() < 1e-10);
}

/// The extraordinary vertex's refined control point approaches its limit
/// point at the rate the local matrix's spectrum gives (levels 1–3).
#[test]
fn refined_control_points_at_the_vertex_converge() {
    let (m, x) = shape();
    let c = irregular(&m)[0];
    let Some(CellGrid::Irregular(g)) = cell_grid(&m, c as usize) else { unreachable!() };
    let v = g.extraordinary_vertex();
    let at_ev: [f64; 3] = std::array::from_fn(|k| f64::from(u8::from(g.axes[k].1)));
    let limit = at(&m, &x, &[(c, at_ev)], Quantity::Position);
    let mut plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
    let mut y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let mut errors = Vec::new();
    for level in 1..=3 {
        errors.push((0..3).map(|j| (y[[v as usize, j]] - limit[[0, j]]).powi(2)).sum::<f64>().sqrt());
        if level < 3 {
            plan = CatmarkSolid::default().step(plan, Par::Rayon).unwrap();
            y = eval(&plan, y.view(), Par::Rayon).unwrap();
        }
    }
    let rates: Vec<f64> = errors.windows(2).map(|w| w[0] / w[1]).collect();
    // The error is row EV of A^j − A^∞ applied to the support: it decays as
    // the largest eigenvalue in modulus below 1 (here a negative one,
    // −0.3669, ahead of the triple 0.3476).
    let values = g.eigenvalues().expect("an eigendecomposition");
    let lead = values[1..].iter().fold(0f64, |m, v| m.max(v.abs()));
    let want = 1.0 / lead;
    println!("errors {errors:?}, rates {rates:?}, predicted {want}");
    let off: Vec<f64> = rates.iter().map(|r| (r - want).abs() / want).collect();
    assert!(off[1] < off[0] && off[1] < 0.02, "errors {errors:?}, rates {rates:?} vs {want}");
}
