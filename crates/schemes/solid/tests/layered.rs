//! The limit volume of layered cells (one extraordinary edge): Stam's
//! surface patch times a cubic B-spline. The tests are the mathematics:
//! a child cell's limit is its parent's (refinement by the scheme's own
//! matrices, the regular children through the independent tricubic path),
//! the limit is continuous across shared faces (positions and
//! derivatives), derivatives are the positions' difference quotients, and
//! refined control points converge to the limit.

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{CellClass, Quantity, cell_grid, classify, limit_matrix};
use subla_volume::VolMesh;

/// Corner parameters of a VTK hexahedron's vertices.
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

/// Meshes with layered cells of valence 3 and 5, with jittered points: a
/// cylinder (its core's corners make edges of valence 3, some cells with
/// a face on the boundary across them) and the block with edges of
/// valence 3 and 5, refined once so that its rings are full.
fn shapes() -> Vec<(&'static str, VolMesh, Array2<f64>)> {
    let c = subla_volume::shapes::cylinder(4, 3, 6, 2.0).unwrap();
    let xc = jitter(&c.vertices, 11, 0.05);
    let b = subla_volume::shapes::extraordinary_block(4).unwrap();
    let plan = CatmarkSolid::default().build(&b.mesh, 1, Par::Rayon).unwrap();
    let xb = jitter(&eval(&plan, b.vertices.view(), Par::Rayon).unwrap(), 12, 0.03);
    vec![("cylinder", c.mesh, xc), ("block", plan.mesh(1).clone(), xb)]
}

fn at(m: &VolMesh, x: &Array2<f64>, samples: &[(u32, [f64; 3])], q: Quantity) -> Array2<f64> {
    let r = limit_matrix(m, samples, q, Par::Rayon).unwrap();
    spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
}

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter().zip(b.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()))
}

fn layered(m: &VolMesh) -> Vec<u32> {
    (0..m.num_cells() as u32)
        .filter(|&c| matches!(classify(m, c as usize), CellClass::Layered | CellClass::LayeredBoundary))
        .collect()
}

#[test]
fn layered_cells_are_found_with_both_valences_and_phantoms() {
    let mut valences = std::collections::BTreeSet::new();
    for (name, m, _) in shapes() {
        let cells = layered(&m);
        let mut boundary = 0;
        for &c in &cells {
            let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(&m, c as usize) else {
                panic!("{name}: cell {c} is classified layered without a layered grid");
            };
            valences.insert(g.valence);
            assert_eq!(g.points.len(), 4 * (2 * g.valence + 8));
            boundary += usize::from(g.phantom.is_some());
            // The cell's own eight vertices are among layers 1 and 2.
            let k = g.layer_len();
            for v in m.cell_vertices(c as usize) {
                assert!(g.points[k..3 * k].contains(v), "{name}: cell {c}");
            }
        }
        println!("{name}: {} layered cells, {boundary} at a boundary face", cells.len());
        assert!(!cells.is_empty() && boundary > 0, "{name}");
    }
    assert!(valences.contains(&3) && valences.contains(&5), "{valences:?}");
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

/// The affine map from a child's parameters to its parent's: `p0 + J q`.
fn child_map(corner_params: &[[f64; 3]]) -> ([f64; 3], [[f64; 3]; 3]) {
    let p0 = corner_params[0];
    let col = |k: usize| -> [f64; 3] { std::array::from_fn(|a| corner_params[k][a] - p0[a]) };
    let (cu, cv, cw) = (col(1), col(3), col(4));
    (p0, std::array::from_fn(|a| [cu[a], cv[a], cw[a]]))
}

#[test]
fn a_child_cell_has_its_layered_parents_limit() {
    let inside = [0.21, 0.5, 0.87];
    let mut grid: Vec<[f64; 3]> = Vec::new();
    for w in inside {
        for v in inside {
            for u in inside {
                grid.push([u, v, w]);
            }
        }
    }
    for (name, m, x) in shapes() {
        let plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        let child = plan.mesh(1);
        let (mut layered_children, mut regular_children) = (0, 0);
        for c in layered(&m) {
            let of_child = parent_params(&m, c);
            for ch in 8 * c..8 * c + 8 {
                let Some(g) = cell_grid(child, ch as usize) else { continue };
                match g {
                    subla_solid::limit::CellGrid::Layered(_) => layered_children += 1,
                    _ => regular_children += 1,
                }
                let cp: Vec<[f64; 3]> =
                    child.cell_vertices(ch as usize).iter().map(|&v| of_child(v as usize)).collect();
                let (p0, j) = child_map(&cp);
                let to_parent = |q: [f64; 3]| -> [f64; 3] {
                    std::array::from_fn(|a| p0[a] + j[a][0] * q[0] + j[a][1] * q[1] + j[a][2] * q[2])
                };
                // Positions at the corners (the extraordinary edge among
                // them) and inside; derivatives inside (by the chain rule).
                let mut qs: Vec<[f64; 3]> = CORNER.to_vec();
                qs.extend(&grid);
                let sc: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (ch, q)).collect();
                let sp: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (c, to_parent(q))).collect();
                let d = max_diff(&at(child, &y, &sc, Quantity::Position), &at(&m, &x, &sp, Quantity::Position));
                assert!(d < 1e-12, "{name}: child {ch} of cell {c}: positions {d}");
                let (sc, sp) = (&sc[8..], &sp[8..]);
                let dp: Vec<Array2<f64>> = DERIVS.iter().map(|&q| at(&m, &x, sp, q)).collect();
                for (i, &q) in DERIVS.iter().enumerate() {
                    let dc = at(child, &y, sc, q);
                    let want = &dp[0] * j[0][i] + &dp[1] * j[1][i] + &dp[2] * j[2][i];
                    let d = max_diff(&dc, &want);
                    assert!(d < 1e-10, "{name}: child {ch} of cell {c}: {q:?} {d}");
                }
            }
        }
        println!("{name}: {layered_children} layered and {regular_children} regular children checked");
        assert!(layered_children > 0 && regular_children > 0, "{name}");
    }
}

/// The parameters in cell `c` of the vertices `fv`.
fn face_params(m: &VolMesh, c: u32, fv: &[u32]) -> Vec<[f64; 3]> {
    let cv = m.cell_vertices(c as usize);
    fv.iter().map(|v| CORNER[cv.iter().position(|u| u == v).expect("a vertex of the cell")]).collect()
}

#[test]
fn the_limit_is_continuous_across_the_faces_of_layered_cells() {
    let ab = [0.0, 0.3, 0.5, 0.8, 1.0];
    let mut pairs = 0;
    for (name, m, x) in shapes() {
        for a in layered(&m) {
            for &code in m.cell_faces(a as usize) {
                let f = (code >> 1) as usize;
                let [c0, c1] = m.face_cells(f);
                let b = if c0 == a { c1 } else { c0 };
                if b == subla_volume::NONE || cell_grid(&m, b as usize).is_none() {
                    continue;
                }
                pairs += 1;
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
                assert!(d < 1e-12, "{name}: cells {a} and {b}: positions {d}");
                // Derivatives: the parameters of the two cells differ by a
                // signed permutation M (b's = M a's + const); skip the
                // extraordinary edge, where the parametrisation is singular.
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
                let off_edge: Vec<usize> = (0..st.len())
                    .filter(|&i| {
                        let g = cell_grid(&m, a as usize).unwrap();
                        let subla_solid::limit::CellGrid::Layered(g) = g else { unreachable!() };
                        let l = g.local(sa[i].1);
                        l[0] > 1e-9 || l[1] > 1e-9
                    })
                    .collect();
                let sa2: Vec<(u32, [f64; 3])> = off_edge.iter().map(|&i| sa[i]).collect();
                let sb2: Vec<(u32, [f64; 3])> = off_edge.iter().map(|&i| sb[i]).collect();
                let db: Vec<Array2<f64>> = DERIVS.iter().map(|&q| at(&m, &x, &sb2, q)).collect();
                for (i, &q) in DERIVS.iter().enumerate() {
                    let want = &db[0] * mm[0][i] + &db[1] * mm[1][i] + &db[2] * mm[2][i];
                    let d = max_diff(&at(&m, &x, &sa2, q), &want);
                    assert!(d < 1e-10, "{name}: cells {a} and {b}: {q:?} {d}");
                }
            }
        }
    }
    assert!(pairs > 20, "{pairs} pairs");
}

#[test]
fn layered_derivatives_are_the_positions_difference_quotients() {
    let h = 1e-6;
    for (name, m, x) in shapes() {
        for &c in layered(&m).iter().step_by(7) {
            for p in [[0.3, 0.55, 0.7], [0.05, 0.9, 0.2], [0.8, 0.02, 0.5]] {
                for (axis, &q) in DERIVS.iter().enumerate() {
                    let (mut lo, mut hi) = (p, p);
                    lo[axis] -= h;
                    hi[axis] += h;
                    let f = at(&m, &x, &[(c, lo), (c, hi)], Quantity::Position);
                    let d = at(&m, &x, &[(c, p)], q);
                    for k in 0..3 {
                        let fd = (f[[1, k]] - f[[0, k]]) / (2.0 * h);
                        assert!(
                            (fd - d[[0, k]]).abs() < 1e-6,
                            "{name} cell {c} {p:?} {q:?}[{k}]: {fd} vs {}",
                            d[[0, k]]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn layered_limit_rows_sum_to_one_and_keep_the_contract() {
    for (name, m, _) in shapes() {
        let cells = layered(&m);
        let r = subla_solid::limit::SolidLimit::grid(cells.iter().copied().take(12), 3, Quantity::Position);
        subla_scheme::testing::check_contract_of(&r, &m, m.num_vertices(), 1, 1e-12);
        let samples = r.samples().to_vec();
        let p = limit_matrix(&m, &samples, Quantity::Position, Par::Seq).unwrap();
        for row in 0..p.nrows() {
            let s: f64 = p.row(row).1.iter().sum();
            assert!((s - 1.0).abs() < 1e-13, "{name}: row {row} sums to {s}");
        }
        for q in DERIVS {
            let d = limit_matrix(&m, &samples, q, Par::Seq).unwrap();
            for row in 0..d.nrows() {
                assert!(d.row(row).1.iter().sum::<f64>().abs() < 1e-12, "{name}: {q:?} row {row}");
            }
        }
        // Any thread count, the same bits.
        let a = limit_matrix(&m, &samples, Quantity::DerivW, Par::Seq).unwrap();
        let b = limit_matrix(&m, &samples, Quantity::DerivW, Par::Rayon).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

/// The corner of a layered cell on its extraordinary edge: the refined
/// control point there approaches the limit point geometrically, at the
/// rate the theory gives. The local subdivision matrix is Catmull-Clark's
/// surface matrix ⊗ the cubic B-spline's; at the edge's vertex the limit
/// removes the eigenvalue 1 and the components that vanish there (Fourier
/// indices other than 0, the curve's linear ½), so the error decays as the
/// larger of the curve's ¼ and the surface's second eigenvalue of
/// frequency 0, `μ(n)` — computed here from the 3 × 3 frequency-0 block of
/// Catmull-Clark's vertex, edge-neighbour and diagonal averages. At `n = 3`,
/// `μ = ⅙` and the rate tends to 4; at `n = 5`, `μ ≈ 0.3225`: 3.10. Over
/// levels 1–3 the rates approach those values (over 1–5, in a release run:
/// 3.61 → 3.85 and 3.21 → 3.12 on a refined block; see `docs/solids.md`).
#[test]
fn refined_control_points_on_the_edge_converge_at_the_predicted_rate() {
    // The frequency-0 block: (vertex, edge-neighbour average, diagonal
    // average) → the same after one step.
    let mu = |n: f64| -> f64 {
        let a = [
            [(4.0 * n - 7.0) / (4.0 * n), 3.0 / (2.0 * n), 1.0 / (4.0 * n)],
            [3.0 / 8.0, 0.5, 1.0 / 8.0],
            [0.25, 0.5, 0.25],
        ];
        // Eigenvalue 1 (rows sum to 1); the other two from the trace and
        // the determinant.
        let tr = a[0][0] + a[1][1] + a[2][2] - 1.0;
        let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
        (tr + (tr * tr - 4.0 * det).max(0.0).sqrt()) / 2.0
    };
    assert!((mu(3.0) - 1.0 / 6.0).abs() < 1e-15 && (mu(4.0) - 0.25).abs() < 1e-15);
    let (_, m, x) = shapes().into_iter().nth(1).unwrap();
    let mut seen = Vec::new();
    for c in layered(&m) {
        let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(&m, c as usize) else { unreachable!() };
        if seen.contains(&g.valence) || g.phantom.is_some() {
            continue;
        }
        seen.push(g.valence);
        let v = g.points[g.layer_len()];
        let cv = m.cell_vertices(c as usize);
        let corner = CORNER[cv.iter().position(|&u| u == v).unwrap()];
        let limit = at(&m, &x, &[(c, corner)], Quantity::Position);
        let mut errors = Vec::new();
        let mut plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
        let mut y = eval(&plan, x.view(), Par::Rayon).unwrap();
        for level in 1..=3 {
            // Vertex points keep their ids: `v` is the corner at every level.
            errors.push((0..3).map(|j| (y[[v as usize, j]] - limit[[0, j]]).powi(2)).sum::<f64>().sqrt());
            if level < 3 {
                plan = CatmarkSolid::default().step(plan, Par::Rayon).unwrap();
                y = eval(&plan, y.view(), Par::Rayon).unwrap();
            }
        }
        let rates: Vec<f64> = errors.windows(2).map(|w| w[0] / w[1]).collect();
        let want = 1.0 / mu(g.valence as f64).max(0.25);
        println!("valence {}: errors {errors:?}, rates {rates:?}, predicted {want}", g.valence);
        let off: Vec<f64> = rates.iter().map(|r| (r - want).abs() / want).collect();
        assert!(off[1] < off[0] && off[1] < 0.15, "valence {}: rates {rates:?} vs {want}", g.valence);
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
}

/// The layered evaluation is the limit of the default vertex rule; under
/// Joy and MacCracken's (not a product at valences other than 4) a child
/// at the extraordinary edge no longer has its parent's limit.
#[test]
fn under_joy_and_maccrackens_rule_the_children_leave_the_layered_limit() {
    use subla_solid::VertexRule;
    let (name, m, x) = shapes().into_iter().next().unwrap();
    let plan = CatmarkSolid::new(VertexRule::JoyMacCracken).build(&m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let mut worst = 0f64;
    for c in layered(&m) {
        let of_child = parent_params(&m, c);
        for ch in 8 * c..8 * c + 8 {
            if cell_grid(child, ch as usize).is_none() {
                continue;
            }
            let cp: Vec<[f64; 3]> = child.cell_vertices(ch as usize).iter().map(|&v| of_child(v as usize)).collect();
            let sc: Vec<(u32, [f64; 3])> = (0..8).map(|k| (ch, CORNER[k])).collect();
            let sp: Vec<(u32, [f64; 3])> = cp.iter().map(|&p| (c, p)).collect();
            worst = worst.max(max_diff(&at(child, &y, &sc, Quantity::Position), &at(&m, &x, &sp, Quantity::Position)));
        }
    }
    assert!(worst > 1e-4, "{name}: {worst}");
}

/// The direct evaluator of layered cells equals the limit matrix at the
/// same samples, positions and the three derivatives, on one thread and
/// many (the same bits), and its `f32` output is the `f64` one rounded.
#[test]
fn the_direct_layered_evaluator_equals_the_limit_matrix() {
    use subla_solid::layered::LayeredEval;
    for (name, m, x) in shapes() {
        let cells = layered(&m);
        for k in [1, 3, 4] {
            let ev = LayeredEval::new(&m, &cells, k, Par::Rayon).unwrap();
            assert_eq!(ev.num_samples(), cells.len() * k * k * k);
            for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
                let samples = subla_solid::limit::SolidLimit::grid(cells.iter().copied(), k, q).samples().to_vec();
                let want = at(&m, &x, &samples, q);
                let scale = want.iter().fold(1f64, |w, v| w.max(v.abs()));
                let mut outs = Vec::new();
                for par in [Par::Seq, Par::Rayon] {
                    let mut out = Array2::zeros((ev.num_samples(), 3));
                    ev.eval_into(x.view(), q, out.view_mut(), par);
                    let d = max_diff(&out, &want);
                    assert!(d < 1e-13 * scale, "{name}: k {k}, {q:?}: {d}");
                    outs.push(out);
                }
                assert!(outs[0].iter().zip(outs[1].iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}");
                let x32 = x.mapv(|v| v as f32);
                let mut y32 = Array2::<f32>::zeros((ev.num_samples(), 3));
                ev.eval_into(x32.view(), q, y32.view_mut(), Par::Rayon);
                let mut y64 = Array2::<f64>::zeros((ev.num_samples(), 3));
                ev.eval_into(x32.mapv(f64::from).view(), q, y64.view_mut(), Par::Rayon);
                assert!(y32.iter().zip(y64.iter()).all(|(a, b)| a.to_bits() == (*b as f32).to_bits()), "{name}");
            }
        }
        // A regular cell is refused, by index.
        let regular = (0..m.num_cells() as u32).find(|&c| classify(&m, c as usize) == CellClass::Regular);
        if let Some(c) = regular {
            assert!(LayeredEval::new(&m, &[cells[0], c], 2, Par::Seq).is_err());
        }
    }
}
