//! The limit volume of irregular cells (extraordinary edges meeting at one
//! vertex): the local subdivision matrix's powers down to a regular or
//! layered child. The tests are the mathematics: a child's limit is its
//! parent's, the limit is continuous across faces, derivatives are the
//! positions' difference quotients, and refined control points converge.

mod common;

use common::{DERIVS, at, check_children, check_face, jitter};
use ndarray::Array2;
use subla_algebra::Par;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{CellClass, CellGrid, Quantity, cell_grid, classify, limit_matrix};
use subla_volume::VolMesh;

/// A tetrahedron split into four hexahedra, refined twice: its centre is an
/// extraordinary vertex inside, four extraordinary edges of valence 3
/// meeting there; the four cells at it are irregular.
fn shape() -> (VolMesh, Array2<f64>) {
    let t = subla_volume::shapes::tetra_split().unwrap();
    let plan = CatmarkSolid::default().build(&t.mesh, 2, Par::Rayon).unwrap();
    let x = eval(&plan, t.vertices.view(), Par::Rayon).unwrap();
    (plan.mesh(2).clone(), jitter(&x, 21, 0.01))
}

fn irregular(m: &VolMesh) -> Vec<u32> {
    (0..m.num_cells() as u32).filter(|&c| classify(m, c as usize) == CellClass::Irregular).collect()
}

/// The irregular cells whose extraordinary vertex is inside (the shape's
/// centre), or on the boundary (the tetrahedron's corners: three edges of
/// valence 2 meet there).
fn irregular_at(m: &VolMesh, boundary: bool) -> Vec<u32> {
    irregular(m)
        .into_iter()
        .filter(|&c| {
            let Some(CellGrid::Irregular(g)) = cell_grid(m, c as usize) else { unreachable!() };
            m.is_boundary_vertex(g.extraordinary_vertex() as usize) == boundary
        })
        .collect()
}

#[test]
fn irregular_cells_are_found_and_share_their_configuration() {
    let (m, _) = shape();
    let mut count = std::collections::BTreeMap::new();
    for c in 0..m.num_cells() {
        *count.entry(classify(&m, c)).or_insert(0usize) += 1;
    }
    println!("{count:?}");
    // Every cell is evaluated: the centre's four and the corners' four
    // irregular.
    assert!(count.keys().all(|k| k.evaluated()), "{count:?}");
    assert_eq!(irregular_at(&m, true).len(), 4, "{count:?}");
    let cells = irregular_at(&m, false);
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
    for boundary in [false, true] {
        let mut classes = std::collections::BTreeMap::new();
        for c in irregular_at(&m, boundary) {
            for ch in 8 * c..8 * c + 8 {
                *classes.entry(classify(child, ch as usize)).or_insert(0usize) += 1;
            }
            check_children(&m, &x, child, &y, c, &grid);
        }
        println!("children (extraordinary vertex on the boundary: {boundary}): {classes:?}");
        assert_eq!(classes.get(&CellClass::Irregular), Some(&4), "{classes:?}");
        assert_eq!(classes.values().sum::<usize>(), 32, "{classes:?}");
        assert!(classes.keys().all(|k| k.evaluated()), "{classes:?}");
    }
}

#[test]
fn the_limit_is_continuous_across_the_faces_of_irregular_cells() {
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
            // Derivatives off the extraordinary edges (two local
            // coordinates positive), where the parametrisations are singular.
            check_face(&m, &x, a, b, f, |p| {
                let local: [f64; 3] = std::array::from_fn(|k| {
                    if ga.axes[k].1 { 1.0 - p[ga.axes[k].0 as usize] } else { p[ga.axes[k].0 as usize] }
                });
                local.iter().filter(|&&t| t > 1e-9).count() >= 2
            });
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
    let c = irregular_at(&m, false)[0];
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

/// The direct evaluator of irregular cells equals the limit matrix at the
/// same samples (positions; derivatives at the centre), on one thread and
/// many (the same bits), its `f32` output the `f64` one rounded, and it
/// refuses derivatives on a grid through the extraordinary vertex.
#[test]
fn the_direct_irregular_evaluator_equals_the_limit_matrix() {
    use subla_solid::irregular::IrregularEval;
    let (m, x) = shape();
    let cells = irregular(&m);
    for (k, qs) in [
        (1usize, vec![Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW]),
        (3, vec![Quantity::Position]),
        (4, vec![Quantity::Position]),
    ] {
        let ev = IrregularEval::new(&m, &cells, k, Par::Rayon).unwrap();
        assert_eq!(ev.num_samples(), cells.len() * k * k * k);
        for q in qs {
            let samples = subla_solid::limit::SolidLimit::grid(cells.iter().copied(), k, q).samples().to_vec();
            let want = at(&m, &x, &samples, q);
            let scale = want.iter().fold(1f64, |w, v| w.max(v.abs()));
            let mut outs = Vec::new();
            for par in [Par::Seq, Par::Rayon] {
                let mut out = Array2::zeros((ev.num_samples(), 3));
                ev.eval_into(x.view(), q, out.view_mut(), par).unwrap();
                let d = common::max_diff(&out, &want);
                assert!(d < 1e-13 * scale, "k {k}, {q:?}: {d}");
                outs.push(out);
            }
            assert!(outs[0].iter().zip(outs[1].iter()).all(|(a, b)| a.to_bits() == b.to_bits()));
            let x32 = x.mapv(|v| v as f32);
            let mut y32 = Array2::<f32>::zeros((ev.num_samples(), 3));
            ev.eval_into(x32.view(), q, y32.view_mut(), Par::Rayon).unwrap();
            let mut y64 = Array2::<f64>::zeros((ev.num_samples(), 3));
            ev.eval_into(x32.mapv(f64::from).view(), q, y64.view_mut(), Par::Rayon).unwrap();
            assert!(y32.iter().zip(y64.iter()).all(|(a, b)| a.to_bits() == (*b as f32).to_bits()));
        }
    }
    let ev = IrregularEval::new(&m, &cells, 2, Par::Rayon).unwrap();
    let mut out = Array2::zeros((ev.num_samples(), 3));
    let e = ev.eval_into(x.view(), Quantity::DerivW, out.view_mut(), Par::Rayon).unwrap_err();
    let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<subla_solid::limit::LimitError>());
    assert!(matches!(why, Some(subla_solid::limit::LimitError::SingularDerivative { .. })), "{e}");
    // A cell that is not irregular is refused.
    let other = (0..m.num_cells() as u32).find(|&c| classify(&m, c as usize) == CellClass::Regular).unwrap();
    assert!(IrregularEval::new(&m, &[cells[0], other], 2, Par::Seq).is_err());
}

/// The evaluator of mixed classes puts each class's samples in the cells'
/// order: it equals the limit matrix over regular, layered and irregular
/// cells together, and names a cell it cannot evaluate.
#[test]
fn the_mixed_evaluator_equals_the_limit_matrix() {
    use subla_solid::limit::GridEval;
    let (m, x) = shape();
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| cell_grid(&m, c as usize).is_some()).collect();
    let classes: std::collections::BTreeSet<CellClass> = cells.iter().map(|&c| classify(&m, c as usize)).collect();
    assert!(classes.contains(&CellClass::Regular) && classes.contains(&CellClass::Layered));
    assert!(classes.contains(&CellClass::Irregular));
    let ev = GridEval::new(&m, &cells, 3, Par::Rayon).unwrap();
    let samples = subla_solid::limit::SolidLimit::grid(cells.iter().copied(), 3, Quantity::Position).samples().to_vec();
    let want = at(&m, &x, &samples, Quantity::Position);
    let mut out = Array2::zeros((ev.num_samples(), 3));
    ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon).unwrap();
    assert!(common::max_diff(&out, &want) < 1e-12);
    // Derivatives: refused through the irregular cells' vertex, fine
    // without them.
    assert!(ev.eval_into(x.view(), Quantity::DerivU, out.view_mut(), Par::Rayon).is_err());
    let smooth: Vec<u32> =
        cells.iter().copied().filter(|&c| classify(&m, c as usize) != CellClass::Irregular).collect();
    let ev = GridEval::new(&m, &smooth, 3, Par::Rayon).unwrap();
    let samples = subla_solid::limit::SolidLimit::grid(smooth.iter().copied(), 3, Quantity::DerivU).samples().to_vec();
    let want = at(&m, &x, &samples, Quantity::DerivU);
    let mut out = Array2::zeros((ev.num_samples(), 3));
    ev.eval_into(x.view(), Quantity::DerivU, out.view_mut(), Par::Rayon).unwrap();
    assert!(common::max_diff(&out, &want) < 1e-11);
    // Every cell of the shape is evaluated: a sharp edge of a regular cell
    // makes one that is not.
    let reg = cells.iter().copied().find(|&c| classify(&m, c as usize) == CellClass::Regular).unwrap();
    let rv = m.cell_vertices(reg as usize);
    let m = m.clone().with_features(&[[rv[0], rv[1]]], &[]).unwrap();
    let near = (0..m.num_cells() as u32).find(|&c| cell_grid(&m, c as usize).is_none()).unwrap();
    let ok = (0..m.num_cells() as u32).find(|&c| cell_grid(&m, c as usize).is_some()).unwrap();
    let e = GridEval::new(&m, &[ok, near], 2, Par::Seq).unwrap_err();
    let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<subla_solid::limit::LimitError>());
    assert_eq!(why, Some(&subla_solid::limit::LimitError::NotEvaluable { cell: near }));
}

/// Irregular cells with vertices on the boundary (their children with a
/// phantom layer at a boundary face): a grid of cubes split into
/// tetrahedra, refined twice, has such cells, and every child of each has
/// its parent's limit.
#[test]
fn irregular_cells_at_the_boundary_have_their_childrens_limit() {
    let d = subla_volume::shapes::tetrahedral_grid(2).unwrap();
    let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).unwrap();
    let m = plan.mesh(2).clone();
    let x = jitter(&eval(&plan, d.vertices.view(), Par::Rayon).unwrap(), 3, 0.005);
    let at_boundary: Vec<u32> = irregular(&m)
        .into_iter()
        .filter(|&c| m.cell_vertices(c as usize).iter().any(|&v| m.is_boundary_vertex(v as usize)))
        .collect();
    assert!(at_boundary.len() >= 8, "{} irregular cells at the boundary", at_boundary.len());
    let refined = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
    let y = eval(&refined, x.view(), Par::Rayon).unwrap();
    for &c in &at_boundary {
        check_children(&m, &x, refined.mesh(1), &y, c, &[[0.2, 0.5, 0.8], [0.6, 0.1, 0.3], [0.9, 0.9, 0.05]]);
    }
}

#[test]
fn tags_away_from_an_irregular_cells_own_vertices_leave_it_irregular() {
    // A corner at a support point that is not one of the cell's vertices
    // leaves it irregular, and its children, refined with the corner, have
    // its limit; a corner at one of its vertices does not.
    let (m, x) = shape();
    for c in irregular(&m) {
        let Some(CellGrid::Irregular(g)) = cell_grid(&m, c as usize) else { unreachable!() };
        let own = m.cell_vertices(c as usize);
        let tagged = |v: u32| m.clone().with_features(&[], &[v]).unwrap();
        assert_eq!(classify(&tagged(own[3]), c as usize), CellClass::NearFeature, "cell {c}");
        // A neighbour of the cell's vertices, and a point farther out.
        let near = g.points.iter().copied().find(|v| !own.contains(v)).unwrap();
        let far = *g.points.last().unwrap();
        for corner in [near, far] {
            let t = tagged(corner);
            assert_eq!(classify(&t, c as usize), CellClass::Irregular, "cell {c}, corner {corner}");
            let plan = CatmarkSolid::default().build(&t, 1, Par::Rayon).unwrap();
            let y = eval(&plan, x.view(), Par::Rayon).unwrap();
            let evaluated = (8 * c..8 * c + 8).filter(|&ch| cell_grid(plan.mesh(1), ch as usize).is_some()).count();
            assert_eq!(evaluated, 8, "children of {c}, corner {corner}");
            check_children(&t, &x, plan.mesh(1), &y, c, &[[0.2, 0.5, 0.8], [0.1, 0.1, 0.1]]);
        }
    }
}
