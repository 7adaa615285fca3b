//! The limit volume of layered cells (one extraordinary edge): Stam's
//! surface patch times a cubic B-spline. The tests are the mathematics:
//! a child cell's limit is its parent's (refinement by the scheme's own
//! matrices, the regular children through the independent tricubic path),
//! the limit is continuous across shared faces (positions and
//! derivatives), derivatives are the positions' difference quotients, and
//! refined control points converge to the limit.

mod common;

use common::{CORNER, DERIVS, at, check_children, check_face, jitter, max_diff, parent_params};
use ndarray::Array2;
use subla_algebra::Par;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{CellClass, Quantity, cell_grid, classify, limit_matrix};
use subla_volume::VolMesh;

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
            for ch in 8 * c..8 * c + 8 {
                match cell_grid(child, ch as usize) {
                    Some(subla_solid::limit::CellGrid::Layered(_)) => layered_children += 1,
                    Some(_) => regular_children += 1,
                    None => {}
                }
            }
            // Positions at the children's corners (the extraordinary edge
            // among them) and inside; derivatives inside.
            check_children(&m, &x, child, &y, c, &grid);
        }
        println!("{name}: {layered_children} layered and {regular_children} regular children checked");
        assert!(layered_children > 0 && regular_children > 0, "{name}");
    }
}

#[test]
fn the_limit_is_continuous_across_the_faces_of_layered_cells() {
    let mut pairs = 0;
    for (_, m, x) in shapes() {
        for a in layered(&m) {
            let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(&m, a as usize) else { unreachable!() };
            for &code in m.cell_faces(a as usize) {
                let f = (code >> 1) as usize;
                let [c0, c1] = m.face_cells(f);
                let b = if c0 == a { c1 } else { c0 };
                if b == subla_volume::NONE || cell_grid(&m, b as usize).is_none() {
                    continue;
                }
                pairs += 1;
                // Derivatives off the extraordinary edge, where the
                // parametrisation is singular.
                check_face(&m, &x, a, b, f, |p| {
                    let l = g.local(p);
                    l[0] > 1e-9 || l[1] > 1e-9
                });
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

#[test]
fn tags_away_from_a_layered_cells_own_vertices_leave_it_layered() {
    // A corner at a point of the cell's grid that is not one of its
    // vertices — in its outer layers, or next to it in its own (a ring
    // vertex the cell does not have) — leaves it layered, and its children,
    // refined with the corner, have its limit; a corner at one of its
    // edge's vertices makes it irregular (that vertex extraordinary), and a
    // sharp edge at one of its vertices leaves it not evaluated.
    let c = subla_volume::shapes::cylinder(4, 3, 6, 2.0).unwrap();
    let x = jitter(&c.vertices, 11, 0.05);
    let m = &c.mesh;
    let mut checked = 0;
    for cell in layered(m) {
        let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(m, cell as usize) else { unreachable!() };
        if g.phantom.is_some() {
            continue;
        }
        let len = g.layer_len();
        let own = m.cell_vertices(cell as usize);
        let tagged = |v: u32| m.clone().with_features(&[], &[v]).unwrap();
        // The extraordinary vertex in its own layer 2, and in the outer
        // layer 3; a ring vertex of layer 1 next to the cell.
        let at_edge = tagged(g.points[2 * len]);
        assert_eq!(classify(&at_edge, cell as usize), CellClass::Irregular, "cell {cell}");
        if checked == 0 {
            let plan = CatmarkSolid::default().build(&at_edge, 1, Par::Rayon).unwrap();
            let y = eval(&plan, x.view(), Par::Rayon).unwrap();
            check_children(&at_edge, &x, plan.mesh(1), &y, cell, &[[0.2, 0.5, 0.8], [0.7, 0.3, 0.1]]);
        }
        let sharp = m.clone().with_features(&[[g.points[len], g.points[len + 1]]], &[]).unwrap();
        assert_eq!(classify(&sharp, cell as usize), CellClass::NearFeature, "cell {cell}");
        let ring = (1..=2 * g.valence).map(|i| g.points[len + i]).find(|v| !own.contains(v)).unwrap();
        for corner in [g.points[3 * len], ring] {
            let t = tagged(corner);
            assert_eq!(classify(&t, cell as usize), CellClass::Layered, "cell {cell}, corner {corner}");
            let plan = CatmarkSolid::default().build(&t, 1, Par::Rayon).unwrap();
            let y = eval(&plan, x.view(), Par::Rayon).unwrap();
            let evaluated =
                (8 * cell..8 * cell + 8).filter(|&ch| cell_grid(plan.mesh(1), ch as usize).is_some()).count();
            assert_eq!(evaluated, 8, "children of {cell}, corner {corner}");
            check_children(&t, &x, plan.mesh(1), &y, cell, &[[0.2, 0.5, 0.8], [0.7, 0.3, 0.1]]);
        }
        checked += 1;
        if checked == 4 {
            break;
        }
    }
    assert_eq!(checked, 4);
}
