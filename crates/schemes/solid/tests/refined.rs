//! The limit of cells the constant-time evaluations do not take, by
//! refining first (`refined::limit_matrix_refined`): the coarse solid
//! torus (every cell near its extraordinary edges) and the block with
//! extraordinary edges of valence 3 and 5 (several extraordinary vertices
//! per cell), against their refined children evaluated directly, across
//! faces, against difference quotients; cells at untagged boundary edges
//! stay refused.

mod common;

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_scheme::{Refiner, SchemeError, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{CellClass, LimitError, Quantity, cell_grid, classify, limit_matrix};
use subla_solid::refined::{Unevaluated, limit_matrix_refined, limit_matrix_refined_partial, refined_region};
use subla_volume::VolMesh;

fn refined_at(m: &VolMesh, x: &Array2<f64>, s: &[(u32, [f64; 3])], q: Quantity, levels: u32) -> Array2<f64> {
    let r = limit_matrix_refined(m, s, q, levels, Par::Rayon).unwrap();
    spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
}

/// Whether parameters of cell `c` are off its extraordinary edges.
fn off_extraordinary_edges(m: &VolMesh, c: u32) -> impl Fn([f64; 3]) -> bool {
    const EDGES: [(usize, usize); 12] =
        [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)];
    let cv = m.cell_vertices(c as usize);
    let lines: Vec<([f64; 3], [f64; 3])> = EDGES
        .iter()
        .filter(|&&(i, j)| {
            let e = m.vertex_edges(cv[i] as usize).iter().find(|&&e| m.edge(e as usize).contains(&cv[j]));
            e.is_some_and(|&e| m.is_extraordinary_edge(e as usize))
        })
        .map(|&(i, j)| (common::CORNER[i], common::CORNER[j]))
        .collect();
    move |p| !lines.iter().any(|(a, b)| (0..3).all(|k| a[k] != b[k] || (p[k] - a[k]).abs() < 1e-12))
}

fn grid3(ts: &[f64]) -> Vec<[f64; 3]> {
    ts.iter().flat_map(|&w| ts.iter().flat_map(move |&v| ts.iter().map(move |&u| [u, v, w]))).collect()
}

#[test]
fn the_coarse_torus_is_evaluated_through_its_children() {
    let d = subla_volume::shapes::torus(2, 1, 16, 3.0, 1.0).unwrap();
    let (m, x) = (&d.mesh, common::jitter(&d.vertices, 13, 0.05));
    assert!((0..m.num_cells()).all(|c| cell_grid(m, c).is_none()), "no cell of the coarse torus is evaluated");
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let mut classes = std::collections::BTreeMap::new();
    for c in 0..child.num_cells() {
        *classes.entry(classify(child, c)).or_insert(0usize) += 1;
    }
    assert!(classes.keys().all(|k| k.evaluated()), "{classes:?}");
    // Not refined, refused, naming the cell.
    let err = limit_matrix_refined(m, &[(5, [0.5; 3])], Quantity::Position, 0, Par::Seq).unwrap_err();
    assert!(matches!(
        std::error::Error::source(&err).and_then(|s| s.downcast_ref::<LimitError>()),
        Some(LimitError::NotEvaluable { cell: 5 })
    ));
    // Each control cell against its children, evaluated directly at the
    // parameters that the test works out by itself.
    let inner = grid3(&[0.1, 0.45, 0.8]);
    for c in (0..m.num_cells() as u32).step_by(5) {
        common::check_children_with(m, child, &y, c, &inner, |s, q| refined_at(m, &x, s, q, 1));
    }
    // Across every inner face, positions and derivatives.
    let mut faces = 0;
    for f in (0..m.num_faces()).step_by(3) {
        let [a, b] = m.face_cells(f);
        if b != subla_volume::NONE {
            // Derivatives off the extraordinary edges, where the
            // parametrisation is singular.
            let off = off_extraordinary_edges(m, a);
            common::check_face_with(m, a, b, f, off, |s, q| refined_at(m, &x, s, q, 1));
            faces += 1;
        }
    }
    assert!(faces > 50, "{faces} faces");
    // Rows sum to 1 (positions), 0 (derivatives); derivatives are the
    // positions' difference quotients.
    let samples: Vec<(u32, [f64; 3])> =
        (0..m.num_cells() as u32).flat_map(|c| grid3(&[0.2, 0.7]).into_iter().map(move |p| (c, p))).collect();
    for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
        let r = limit_matrix_refined(m, &samples, q, 1, Par::Rayon).unwrap();
        let want = if q == Quantity::Position { 1.0 } else { 0.0 };
        for i in 0..samples.len() {
            let s: f64 = r.row(i).1.iter().sum();
            assert!((s - want).abs() < 1e-12, "{q:?} row {i}: {s}");
        }
    }
    let h = 1e-6;
    for (k, q) in [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW].into_iter().enumerate() {
        let shift = |s: &[(u32, [f64; 3])], by: f64| -> Vec<(u32, [f64; 3])> {
            s.iter()
                .map(|&(c, mut p)| {
                    p[k] += by;
                    (c, p)
                })
                .collect()
        };
        let fd = (refined_at(m, &x, &shift(&samples, h), Quantity::Position, 1)
            - refined_at(m, &x, &shift(&samples, -h), Quantity::Position, 1))
            / (2.0 * h);
        let d = common::max_diff(&fd, &refined_at(m, &x, &samples, q, 1));
        assert!(d < 1e-6, "{q:?}: {d}");
    }
    // Bitwise the same on one thread and two.
    let one = limit_matrix_refined(m, &samples, Quantity::DerivV, 1, Par::Seq).unwrap();
    let two = limit_matrix_refined(m, &samples, Quantity::DerivV, 1, Par::Rayon).unwrap();
    assert!(one.values().iter().zip(two.values()).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(one.indices(), two.indices());
}

#[test]
fn cells_evaluated_directly_are_not_refined() {
    // The refined torus: every cell evaluated, so the matrices are equal.
    let d = subla_volume::shapes::torus(2, 1, 16, 3.0, 1.0).unwrap();
    let plan = CatmarkSolid::default().build(&d.mesh, 1, Par::Rayon).unwrap();
    let m = plan.mesh(1);
    let samples: Vec<(u32, [f64; 3])> = (0..m.num_cells() as u32).map(|c| (c, [0.3, 0.6, 0.9])).collect();
    let a = limit_matrix(m, &samples, Quantity::DerivW, Par::Rayon).unwrap();
    let b = limit_matrix_refined(m, &samples, Quantity::DerivW, 3, Par::Rayon).unwrap();
    assert_eq!(a.indices(), b.indices());
    assert_eq!(a.values(), b.values());
}

#[test]
fn several_extraordinary_vertices_are_separated_by_refining() {
    // The block: every cell has several extraordinary vertices, and its
    // box's edges are untagged boundary edges. One step separates the
    // extraordinary vertices; the children along the box's edges are cells
    // at smooth boundary edges, those at its corners irregular.
    let d = subla_volume::shapes::extraordinary_block(2).unwrap();
    let (m, x) = (&d.mesh, common::jitter(&d.vertices, 17, 0.05));
    assert!((0..m.num_cells()).all(|c| classify(m, c) == CellClass::SeveralExtraordinaryVertices));
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    // Samples in the middle of each cell: its child there is off the
    // boundary edges.
    let mid = [0.4, 0.45, 0.55];
    let (mut checked, mut compared) = (0, 0);
    for c in 0..m.num_cells() as u32 {
        let inner: Vec<[f64; 3]> = vec![mid];
        let ok = limit_matrix_refined(m, &[(c, mid)], Quantity::Position, 2, Par::Seq).is_ok();
        if ok {
            // Only the children the sample reaches are compared.
            let to_child = |ch: u32| cell_grid(child, ch as usize).is_some();
            if (8 * c..8 * c + 8).all(to_child) {
                common::check_children_with(m, child, &y, c, &inner, |s, q| refined_at(m, &x, s, q, 2));
            }
            checked += 1;
        }
        compared += evaluated_children_have_the_limit(m, &x, child, &y, c, 2);
    }
    assert!(checked >= 4, "{checked} cells evaluated in their middle");
    assert!(compared >= 16, "{compared} children compared");
    // A sample at the box's corner: through the corner's irregular child,
    // the corner's limit (the boundary surface's, at a vertex of three
    // faces).
    let corner = (0..m.num_vertices() as u32)
        .find(|&v| {
            m.is_boundary_vertex(v as usize)
                && (0..m.num_cells()).filter(|&c| m.cell_vertices(c).contains(&v)).count() == 1
                && m.vertex_edges(v as usize).len() == 3
        })
        .unwrap();
    let corner_cell = (0..m.num_cells() as u32).find(|&c| m.cell_vertices(c as usize).contains(&corner)).unwrap();
    let at_corner = common::CORNER[m.cell_vertices(corner_cell as usize).iter().position(|&v| v == corner).unwrap()];
    let r = limit_matrix_refined(m, &[(corner_cell, at_corner)], Quantity::Position, 3, Par::Seq).unwrap();
    assert!((r.row(0).1.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // A corner tag there: a point feature, the extraordinary vertex of the
    // corner's child; the limit there is the corner itself.
    let tagged = m.clone().with_features(&[], &[corner]).unwrap();
    let r = limit_matrix_refined(&tagged, &[(corner_cell, at_corner)], Quantity::Position, 3, Par::Seq).unwrap();
    assert_eq!(r.row(0).0.iter().zip(r.row(0).1).filter(|p| *p.1 != 0.0).collect::<Vec<_>>(), [(&corner, &1.0)]);
    // One of the box's edges at the corner sharp instead: that point never
    // reaches an evaluated cell (the child there has the sharp edge at its
    // own vertices again).
    let along = m
        .vertex_edges(corner as usize)
        .iter()
        .map(|&e| m.edge(e as usize))
        .find(|&[a, b]| m.is_boundary_vertex(a as usize) && m.is_boundary_vertex(b as usize))
        .unwrap();
    let m = &m.clone().with_features(&[along], &[]).unwrap();
    let err = limit_matrix_refined(m, &[(corner_cell, at_corner)], Quantity::Position, 3, Par::Seq);
    assert!(matches!(err, Err(SchemeError::Scheme { .. })), "{err:?}");
    // The partial form: a row for each sample away from the sharp edge, an
    // empty one and the reason for the others, in order.
    let samples: Vec<(u32, [f64; 3])> =
        (0..m.num_cells() as u32).flat_map(|c| grid3(&[0.0, 0.5, 1.0]).into_iter().map(move |p| (c, p))).collect();
    let (r, failed) = limit_matrix_refined_partial(m, &samples, Quantity::Position, 2, Par::Rayon).unwrap();
    assert!(
        failed.iter().all(|&(i, _)| m.cell_vertices(samples[i].0 as usize).iter().any(|v| along.contains(v))),
        "only in cells at the sharp edge"
    );
    assert!(!failed.is_empty() && failed.len() < samples.len(), "{} of {}", failed.len(), samples.len());
    assert!(failed.windows(2).all(|w| w[0].0 < w[1].0));
    for i in 0..samples.len() {
        let bad = failed.iter().find(|f| f.0 == i);
        let (cols, ws) = r.row(i);
        match bad {
            Some(&(_, why)) => {
                assert_eq!(why, Unevaluated::NotEvaluable);
                assert!(cols.is_empty());
            }
            None => assert!((ws.iter().sum::<f64>() - 1.0).abs() < 1e-12, "sample {i}"),
        }
    }
    // The one at the corner among them.
    assert!(failed.iter().any(|&(i, _)| samples[i] == (corner_cell, at_corner)));
}

/// Each child of `c` evaluated directly in `child` (points `y`) against
/// the parent refined first (up to `levels` steps) at two inner points of
/// the child, positions and derivatives by the chain rule, the parameters
/// worked out here; the number of children compared.
fn evaluated_children_have_the_limit(
    m: &VolMesh,
    x: &Array2<f64>,
    child: &VolMesh,
    y: &Array2<f64>,
    c: u32,
    levels: u32,
) -> usize {
    let of_child = common::parent_params(m, c);
    let mut compared = 0;
    for ch in (8 * c..8 * c + 8).filter(|&ch| cell_grid(child, ch as usize).is_some()) {
        let cp: Vec<[f64; 3]> = child.cell_vertices(ch as usize).iter().map(|&v| of_child(v as usize)).collect();
        let p0 = cp[0];
        let j: [[f64; 3]; 3] = std::array::from_fn(|a| [1, 3, 4].map(|k| cp[k][a] - p0[a]));
        let qs = [[0.3, 0.6, 0.5], [0.8, 0.25, 0.7]];
        let sc: Vec<(u32, [f64; 3])> = qs.iter().map(|&q| (ch, q)).collect();
        let sp: Vec<(u32, [f64; 3])> = qs
            .iter()
            .map(|&q| (c, std::array::from_fn(|a| p0[a] + j[a][0] * q[0] + j[a][1] * q[1] + j[a][2] * q[2])))
            .collect();
        let d = common::max_diff(
            &common::at(child, y, &sc, Quantity::Position),
            &refined_at(m, x, &sp, Quantity::Position, levels),
        );
        assert!(d < 1e-12, "child {ch} of {c}: {d}");
        let dp: Vec<Array2<f64>> = common::DERIVS.iter().map(|&q| refined_at(m, x, &sp, q, levels)).collect();
        for (i, &q) in common::DERIVS.iter().enumerate() {
            let want = &dp[0] * j[0][i] + &dp[1] * j[1][i] + &dp[2] * j[2][i];
            let d = common::max_diff(&common::at(child, y, &sc, q), &want);
            assert!(d < 1e-10, "child {ch} of {c}: {q:?} {d}");
        }
        compared += 1;
    }
    compared
}

#[test]
fn a_few_cells_are_refined_within_their_neighbourhood() {
    // A tall cylinder with a sharp edge in the middle of its side: only
    // the cells at its two vertices are not evaluated as they are, so
    // refining first refines the cells around them, not the whole mesh.
    // Their children off the edge against the whole mesh refined.
    let d = subla_volume::shapes::cylinder(2, 2, 12, 6.0).unwrap();
    assert!((0..d.mesh.num_cells()).all(|c| cell_grid(&d.mesh, c).is_some()));
    let cells_at = |v: u32| (0..d.mesh.num_cells()).filter(|&c| d.mesh.cell_vertices(c).contains(&v)).count();
    let side = (0..d.mesh.num_vertices() as u32)
        .filter(|&v| d.mesh.is_boundary_vertex(v as usize) && cells_at(v) == 4)
        .min_by(|&a, &b| {
            (d.vertices[[a as usize, 2]] - 3.0).abs().total_cmp(&(d.vertices[[b as usize, 2]] - 3.0).abs())
        })
        .unwrap();
    let up = d
        .mesh
        .vertex_edges(side as usize)
        .iter()
        .map(|&e| d.mesh.edge(e as usize))
        .find(|&[a, b]| {
            let o = if a == side { b } else { a };
            d.mesh.is_boundary_vertex(o as usize)
                && (d.vertices[[o as usize, 2]] - d.vertices[[side as usize, 2]]).abs() > 0.1
        })
        .unwrap();
    let m = &d.mesh.clone().with_features(&[up], &[]).unwrap();
    let x = common::jitter(&d.vertices, 19, 0.04);
    let near_tag: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| cell_grid(m, c as usize).is_none()).collect();
    assert!(near_tag.iter().all(|&c| m.cell_vertices(c as usize).iter().any(|v| up.contains(v))));
    assert_eq!(near_tag.len(), 6, "four cells at each end, two holding the edge");
    assert!(!near_tag.is_empty() && near_tag.len() * 4 < m.num_cells(), "{} of {}", near_tag.len(), m.num_cells());
    // What is refined: those cells and two rings of cells around them.
    let region = refined_region(m, &near_tag).expect("a part of the mesh");
    println!("refined: {} of {} cells", region.num_cells(), m.num_cells());
    assert!(region.num_cells() > near_tag.len() && region.num_cells() < m.num_cells(), "{}", region.num_cells());
    // The coarse torus: every cell is refined, so the whole mesh.
    let torus = subla_volume::shapes::torus(2, 1, 16, 3.0, 1.0).unwrap().mesh;
    assert!(refined_region(&torus, &(0..torus.num_cells() as u32).collect::<Vec<_>>()).is_none());
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let compared: usize =
        near_tag.iter().map(|&c| evaluated_children_have_the_limit(m, &x, plan.mesh(1), &y, c, 1)).sum();
    assert!(compared >= 4 * near_tag.len(), "{compared} children of {} cells", near_tag.len());
    // With cells evaluated as they are among them: the same rows as each
    // alone.
    let samples: Vec<(u32, [f64; 3])> = (0..m.num_cells() as u32).map(|c| (c, [0.35, 0.5, 0.6])).collect();
    let all = limit_matrix_refined(m, &samples, Quantity::DerivU, 2, Par::Rayon).unwrap();
    for (i, &s) in samples.iter().enumerate().step_by(7) {
        let one = limit_matrix_refined(m, &[s], Quantity::DerivU, 2, Par::Seq).unwrap();
        assert_eq!(all.row(i), one.row(0), "sample {i}");
    }
}
