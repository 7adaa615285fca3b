//! The limit volume of regular cells: the tricubic B-spline over the
//! control grid gathered from the mesh, invariant under refinement (a
//! child cell's limit is its parent's), continuous across shared faces,
//! approached by refined control points at the rate 1/4 per level.

use ndarray::Array2;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::limit::{Quantity, control_grid, limit_matrix, regular_grid};
use subla_volume::VolMesh;
use subla_volume::shapes::hex_grid;

/// A jittered `n³` grid's positions.
fn jittered(n: usize, seed: u64) -> (VolMesh, Array2<f64>) {
    let g = hex_grid(n, n, n).unwrap();
    let mut s = seed;
    let x = g.vertices.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + 0.15 * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    });
    (g.mesh, x)
}

fn at(m: &VolMesh, x: &Array2<f64>, samples: &[(u32, [f64; 3])], q: Quantity) -> Array2<f64> {
    let r = limit_matrix(m, samples, q, Par::Rayon).unwrap();
    spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
}

/// Cell `(i, j, k)` of an `n³` grid.
fn cell(n: usize, i: usize, j: usize, k: usize) -> u32 {
    (i + n * (j + n * k)) as u32
}

#[test]
fn the_control_grid_of_an_interior_cell_is_its_lattice() {
    let n = 4;
    let g = hex_grid(n, n, n).unwrap().mesh;
    let mut regular = 0;
    for c in 0..g.num_cells() {
        let (i, j, k) = (c % n, (c / n) % n, c / (n * n));
        let interior = [i, j, k].iter().all(|&t| t >= 1 && t + 1 < n);
        let grid = regular_grid(&g, c);
        assert_eq!(grid.is_some(), interior, "cell {c}");
        if let Some(grid) = grid {
            regular += 1;
            for (e, &v) in grid.iter().enumerate() {
                let (a, b, d) = (i - 1 + e % 4, j - 1 + (e / 4) % 4, k - 1 + e / 16);
                assert_eq!(v as usize, a + (n + 1) * (b + (n + 1) * d));
            }
        }
    }
    assert_eq!(regular, 8);
    // With one face on the boundary: the cells in the middle of each side
    // of the box (6 sides × 2 × 2), their phantom layer beyond that face.
    let mut sides = 0;
    for c in 0..g.num_cells() {
        let ijk = [c % n, (c / n) % n, c / (n * n)];
        let outer: Vec<usize> = (0..3).filter(|&a| ijk[a] == 0 || ijk[a] == n - 1).collect();
        let grid = control_grid(&g, c);
        assert_eq!(grid.is_some(), outer.len() <= 1, "cell {c}");
        if let (Some(grid), [axis]) = (grid, outer.as_slice()) {
            sides += 1;
            let mut phantoms = [None; 3];
            phantoms[*axis] = Some(ijk[*axis] == n - 1);
            assert_eq!(grid.phantoms, phantoms, "cell {c}");
            assert_eq!(grid.points.iter().filter(|&&v| v == subla_volume::NONE).count(), 16);
        }
    }
    assert_eq!(sides, 24);
    // A block with an extraordinary edge has no regular cell at it.
    let b = subla_volume::shapes::extraordinary_block(3).unwrap().mesh;
    assert!((0..b.num_cells()).all(|c| regular_grid(&b, c).is_none()));
}

#[test]
fn a_child_cell_has_its_parents_limit() {
    let (m, x) = jittered(5, 1);
    let plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let (nv, ne, nf) = (m.num_vertices(), m.num_edges(), m.num_faces());
    // The parameter in the parent cell `c` of each child point of it.
    // Interior cells, and cells with one face on the boundary (on each
    // side of two axes: the phantom layer low and high).
    for &c in
        &[cell(5, 1, 1, 1), cell(5, 2, 1, 3), cell(5, 3, 2, 2), cell(5, 0, 2, 2), cell(5, 2, 4, 1), cell(5, 3, 2, 4)]
    {
        let corners = m.cell_vertices(c as usize);
        let param = |v: u32| -> [f64; 3] {
            let k = corners.iter().position(|&u| u == v).expect("a corner of the cell");
            [
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
                [1.0, 0.0, 1.0],
                [1.0, 1.0, 1.0],
                [0.0, 1.0, 1.0],
            ][k]
        };
        let mean = |vs: &[u32]| -> [f64; 3] {
            let ps: Vec<[f64; 3]> = vs.iter().map(|&v| param(v)).collect();
            std::array::from_fn(|k| ps.iter().map(|p| p[k]).sum::<f64>() / ps.len() as f64)
        };
        let of_child = |r: usize| -> [f64; 3] {
            if r < nv {
                param(r as u32)
            } else if r < nv + ne {
                mean(&m.edge(r - nv))
            } else if r < nv + ne + nf {
                mean(m.face(r - nv - ne))
            } else {
                [0.5, 0.5, 0.5]
            }
        };
        let corner = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 1.0, 1.0],
        ];
        for ch in 8 * c..8 * c + 8 {
            let verts = child.cell_vertices(ch as usize);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (k, &v) in verts.iter().enumerate() {
                a.push((ch, corner[k]));
                b.push((c, of_child(v as usize)));
            }
            let (la, lb) = (at(child, &y, &a, Quantity::Position), at(&m, &x, &b, Quantity::Position));
            let d = la.iter().zip(lb.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()));
            assert!(d < 1e-12, "child {ch} of cell {c}: {d}");
        }
    }
}

#[test]
fn the_limit_is_continuous_across_faces() {
    let (m, x) = jittered(5, 2);
    let (a, b) = (cell(5, 1, 2, 2), cell(5, 2, 2, 2));
    for q in [Quantity::Position, Quantity::DerivV, Quantity::DerivW, Quantity::DerivU] {
        let vw: Vec<[f64; 2]> = (0..5).flat_map(|i| (0..5).map(move |j| [i as f64 / 4.0, j as f64 / 3.7])).collect();
        let sa: Vec<(u32, [f64; 3])> = vw.iter().map(|p| (a, [1.0, p[0], p[1]])).collect();
        let sb: Vec<(u32, [f64; 3])> = vw.iter().map(|p| (b, [0.0, p[0], p[1]])).collect();
        let (la, lb) = (at(&m, &x, &sa, q), at(&m, &x, &sb, q));
        let d = la.iter().zip(lb.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()));
        assert!(d < 1e-12, "{q:?}: {d}");
    }
}

#[test]
fn the_limit_is_continuous_from_a_boundary_cell_inwards() {
    let (m, x) = jittered(5, 8);
    // Cell (2, 2, 0) has its bottom face on the boundary; (2, 2, 1) is
    // above it, inside.
    let (a, b) = (cell(5, 2, 2, 0), cell(5, 2, 2, 1));
    for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
        let uv: Vec<[f64; 2]> = (0..4).flat_map(|i| (0..4).map(move |j| [i as f64 / 3.0, j as f64 / 3.0])).collect();
        let sa: Vec<(u32, [f64; 3])> = uv.iter().map(|p| (a, [p[0], p[1], 1.0])).collect();
        let sb: Vec<(u32, [f64; 3])> = uv.iter().map(|p| (b, [p[0], p[1], 0.0])).collect();
        let (la, lb) = (at(&m, &x, &sa, q), at(&m, &x, &sb, q));
        let d = la.iter().zip(lb.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()));
        assert!(d < 1e-12, "{q:?}: {d}");
    }
}

#[test]
fn derivatives_are_the_positions_difference_quotients() {
    let (m, x) = jittered(4, 3);
    let c = cell(4, 1, 2, 1);
    let p = [0.3, 0.55, 0.7];
    let h = 1e-6;
    for (axis, q) in [(0, Quantity::DerivU), (1, Quantity::DerivV), (2, Quantity::DerivW)] {
        let (mut lo, mut hi) = (p, p);
        lo[axis] -= h;
        hi[axis] += h;
        let f = at(&m, &x, &[(c, lo), (c, hi)], Quantity::Position);
        let d = at(&m, &x, &[(c, p)], q);
        for k in 0..3 {
            let fd = (f[[1, k]] - f[[0, k]]) / (2.0 * h);
            assert!((fd - d[[0, k]]).abs() < 1e-7, "{q:?}[{k}]: {fd} vs {}", d[[0, k]]);
        }
    }
}

#[test]
fn refined_control_points_converge_at_a_quarter_per_level() {
    let (m, x) = jittered(4, 4);
    let c = cell(4, 1, 1, 1);
    let v = m.cell_vertices(c as usize)[6];
    let limit = at(&m, &x, &[(c, [1.0, 1.0, 1.0])], Quantity::Position);
    let mut errors = Vec::new();
    for levels in 1..=3 {
        let y = eval(&CatmarkSolid::default().build(&m, levels, Par::Rayon).unwrap(), x.view(), Par::Rayon).unwrap();
        // Vertex points keep their ids: `v` is the corner at every level.
        let e = (0..3).map(|k| (y[[v as usize, k]] - limit[[0, k]]).powi(2)).sum::<f64>().sqrt();
        errors.push(e);
    }
    // The error is dominated by the subdivision matrix's eigenvalue 1/4
    // (the next ones, 1/8 and below, fade): rates tend to 4.
    let rates: Vec<f64> = errors.windows(2).map(|w| w[0] / w[1]).collect();
    assert!(rates.iter().all(|r| (3.8..4.5).contains(r)), "errors {errors:?}, rates {rates:?}");
    assert!((rates[1] - 4.0).abs() < (rates[0] - 4.0).abs().max(0.05), "rates {rates:?} do not approach 4");
}

#[test]
fn cells_not_yet_evaluated_are_refused_by_index() {
    let (m, _) = jittered(4, 5);
    // Cell 0 is at the box's corner; a sharp edge there leaves it not
    // evaluated (a sharp edge at its own vertices).
    let m = m.with_features(&[[0, 1]], &[]).unwrap();
    let e = limit_matrix(&m, &[(cell(4, 1, 1, 1), [0.5; 3]), (0, [0.5; 3])], Quantity::Position, Par::Seq).unwrap_err();
    let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<subla_solid::limit::LimitError>());
    assert_eq!(why, Some(&subla_solid::limit::LimitError::NotEvaluable { cell: 0 }), "{e}");
}

#[test]
fn limit_sampling_holds_the_scheme_contract() {
    let (m, _) = jittered(4, 6);
    let regular: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| control_grid(&m, c as usize).is_some()).collect();
    let r = subla_solid::limit::SolidLimit::grid(regular.iter().copied(), 3, Quantity::Position);
    subla_scheme::testing::check_contract_of(&r, &m, m.num_vertices(), 1, 1e-12);
    // Derivatives: rows sum to zero (a constant field has none).
    for q in [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
        let d = limit_matrix(&m, &[(regular[0], [0.2, 0.4, 0.9])], q, Par::Seq).unwrap();
        assert!(d.row(0).1.iter().sum::<f64>().abs() < 1e-14, "{q:?}");
    }
}

#[test]
fn the_direct_evaluator_equals_the_limit_matrix() {
    use subla_solid::limit::RegularEval;
    let (m, x) = jittered(5, 7);
    // Interior cells and cells with one face on the boundary.
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| control_grid(&m, c as usize).is_some()).collect();
    assert!(cells.iter().any(|&c| regular_grid(&m, c as usize).is_none()));
    for k in [1, 3, 4] {
        let ev = RegularEval::new(&m, &cells, k, Par::Rayon).unwrap();
        for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
            let samples = subla_solid::limit::SolidLimit::grid(cells.iter().copied(), k, q).samples().to_vec();
            let want = at(&m, &x, &samples, q);
            for par in [Par::Seq, Par::Rayon] {
                let mut out = Array2::zeros((ev.num_samples(), 3));
                ev.eval_into(x.view(), q, out.view_mut(), par);
                let d = out.iter().zip(want.iter()).fold(0f64, |w, (p, q)| w.max((p - q).abs()));
                assert!(d < 1e-13, "k {k}, {q:?}: {d}");
            }
        }
    }
    assert!(RegularEval::new(&m, &[0], 2, Par::Seq).is_err());
}

#[test]
fn cells_are_classified() {
    use std::collections::BTreeMap;
    use subla_solid::limit::{CellClass, classify};
    let count = |m: &VolMesh| {
        let mut n: BTreeMap<CellClass, usize> = BTreeMap::new();
        for c in 0..m.num_cells() {
            *n.entry(classify(m, c)).or_default() += 1;
        }
        n
    };
    // A 4³ grid: 8 inside, 24 at a face, 24 along the box's edges (the
    // corner patch across an untagged boundary edge of valence 2) and 8 at
    // its corners (three such edges at one vertex: irregular).
    let g = count(&hex_grid(4, 4, 4).unwrap().mesh);
    assert_eq!(g.get(&CellClass::Regular), Some(&8));
    assert_eq!(g.get(&CellClass::RegularBoundary), Some(&24));
    assert_eq!(g.get(&CellClass::SmoothBoundaryEdge), Some(&24));
    assert_eq!(g.get(&CellClass::Irregular), Some(&8));
    assert_eq!(g.values().sum::<usize>(), 64);
    // The block refined once: the cells along the valence-3 and valence-5
    // edges in its middle layers have that one extraordinary edge.
    let block = subla_volume::shapes::extraordinary_block(3).unwrap().mesh;
    let plan = <subla_solid::CatmarkSolid as subla_scheme::Refiner>::build(
        &subla_solid::CatmarkSolid::default(),
        &block,
        1,
        Par::Seq,
    )
    .unwrap();
    let fine = subla_scheme::Plan::levels(&plan);
    let b = count(plan.mesh(fine));
    assert!(b.get(&CellClass::Layered).copied().unwrap_or(0) >= 8 * 2, "{b:?}");
    assert!(b.contains_key(&CellClass::Regular), "{b:?}");
    // A tetrahedron is not a hexahedron; its four hexahedra after a step
    // meet at the centre, where four extraordinary edges meet.
    let t = subla_volume::VolumeData::from_cells(
        ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        &[subla_volume::Cell::Tetra([0, 1, 2, 3])],
    )
    .unwrap();
    assert_eq!(classify(&t.mesh, 0), CellClass::NotHexahedron);
    let s = count(&subla_volume::shapes::tetra_split().unwrap().mesh);
    println!("tetrahedron split: {s:?}");
    assert!(s.keys().all(|k| !k.evaluated()), "{s:?}");
}

#[test]
fn f32_evaluation_is_the_f64_one_rounded() {
    use subla_solid::limit::RegularEval;
    let (m, x) = jittered(5, 9);
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| control_grid(&m, c as usize).is_some()).collect();
    let ev = RegularEval::new(&m, &cells, 3, Par::Rayon).unwrap();
    let x32 = x.mapv(|v| v as f32);
    for q in [Quantity::Position, Quantity::DerivW] {
        let mut y32 = Array2::<f32>::zeros((ev.num_samples(), 3));
        ev.eval_into(x32.view(), q, y32.view_mut(), Par::Rayon);
        let mut y64 = Array2::<f64>::zeros((ev.num_samples(), 3));
        ev.eval_into(x32.mapv(f64::from).view(), q, y64.view_mut(), Par::Rayon);
        assert!(y32.iter().zip(y64.iter()).all(|(a, b)| a.to_bits() == (*b as f32).to_bits()), "{q:?}");
        let mut exact = Array2::<f64>::zeros((ev.num_samples(), 3));
        ev.eval_into(x.view(), q, exact.view_mut(), Par::Rayon);
        let d = y32.iter().zip(exact.iter()).fold(0f64, |w, (a, b)| w.max((f64::from(*a) - b).abs()));
        assert!(d < 1e-5 * 5.0, "{q:?}: {d}");
    }
}
