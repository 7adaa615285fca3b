//! Catmull-Clark solid refinement against the mathematics: on a regular
//! grid it is tricubic B-spline knot insertion; the boundary surface
//! refines as a Catmull-Clark surface; rows sum to one; thread counts and
//! modeling steps give the same bits; every cell becomes hexahedra, none
//! inverted.

mod surface;

use ndarray::{Array2, s};
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_scheme::{Plan, Refiner, eval, modeling};
use subla_solid::CatmarkSolid;
use subla_volume::shapes::{cylinder, examples, extraordinary_block, hex_grid};
use subla_volume::{Cell, CellKind, VolumeData};
use surface::{assert_surface_in_volume, boundary_surface};

/// Pseudo-random data, `rows × cols`.
fn data(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut s = seed;
    Array2::from_shape_fn((rows, cols), |_| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    })
}

#[test]
fn a_regular_grid_refines_as_tricubic_knot_insertion() {
    let n = 4;
    let g = hex_grid(n, n, n).unwrap();
    let f = data(g.mesh.num_vertices(), 2, 3);
    // Positions (to find each child's lattice point) and the data.
    let mut x = Array2::zeros((g.mesh.num_vertices(), 5));
    x.slice_mut(s![.., ..3]).assign(&g.vertices);
    x.slice_mut(s![.., 3..]).assign(&f);
    let plan = CatmarkSolid::default().build(&g.mesh, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let coarse = |i: usize, j: usize, k: usize, c: usize| f[[i + (n + 1) * (j + (n + 1) * k), c]];
    // The 1D cubic B-spline masks: even child 2i from (1, 6, 1)/8 around
    // i, odd child 2i + 1 from (1, 1)/2.
    let mask = |t: usize| -> Vec<(usize, f64)> {
        if t % 2 == 0 {
            vec![(t / 2 - 1, 0.125), (t / 2, 0.75), (t / 2 + 1, 0.125)]
        } else {
            vec![(t / 2, 0.5), (t / 2 + 1, 0.5)]
        }
    };
    let mut checked = 0;
    for r in 0..y.nrows() {
        let p = [y[[r, 0]], y[[r, 1]], y[[r, 2]]].map(|c| (2.0 * c).round() as i64);
        if p.iter().any(|&t| t <= 0 || t >= 2 * n as i64) {
            continue;
        }
        let [i, j, k] = p.map(|t| t as usize);
        for c in 0..2 {
            let mut want = 0.0;
            for &(a, wa) in &mask(i) {
                for &(b, wb) in &mask(j) {
                    for &(d, wd) in &mask(k) {
                        want += wa * wb * wd * coarse(a, b, d, c);
                    }
                }
            }
            assert!((y[[r, 3 + c]] - want).abs() < 1e-14, "child {r} at {p:?}: {} vs {want}", y[[r, 3 + c]]);
        }
        checked += 1;
    }
    // Every child strictly inside the box: (2n − 1)³.
    assert_eq!(checked, (2 * n - 1).pow(3));
}

#[test]
fn the_boundary_refines_as_a_catmull_clark_surface() {
    for (name, d) in [("cylinder", cylinder(2, 1, 2, 1.0).unwrap()), ("block", extraordinary_block(2).unwrap())] {
        let levels = 2;
        let plan = CatmarkSolid::default().build(&d.mesh, levels, Par::Rayon).unwrap();
        let y = eval(&plan, d.vertices.view(), Par::Rayon).unwrap();
        let (s0, back0) = boundary_surface(&d.mesh);
        let x0 = Array2::from_shape_fn((back0.len(), 3), |(i, k)| d.vertices[[back0[i] as usize, k]]);
        let sp = CatmarkSlak.build(&s0, levels, Par::Rayon).unwrap();
        let ys = eval(&sp, x0.view(), Par::Rayon).unwrap();
        // Match by position: every surface point is a boundary point of the
        // refined volume.
        assert_surface_in_volume(name, &ys, &y, &boundary_surface(plan.mesh(levels)).1);
    }
}

#[test]
fn rows_sum_to_one_and_threads_agree() {
    for (name, d) in examples().unwrap() {
        let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).unwrap();
        for l in 0..2 {
            let r = plan.operator(l, Par::Rayon).unwrap();
            for i in 0..r.nrows() {
                let sum: f64 = r.row(i).1.iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "{name}: row {i} of R_{l} sums to {sum}");
            }
        }
        let x = data(d.mesh.num_vertices(), 3, 9);
        let a = eval(&plan, x.view(), Par::Rayon).unwrap();
        let b = eval(&CatmarkSolid::default().build(&d.mesh, 2, Par::Seq).unwrap(), x.view(), Par::Seq).unwrap();
        assert!(a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{name}");
        let (_, m) = modeling(&CatmarkSolid::default(), &d.mesh, x.view(), 2, Par::Rayon).unwrap();
        assert!(m.iter().zip(a.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{name}: modeling");
        // The refined cells keep their orientation: checked positions.
        let p = eval(&plan, d.vertices.view(), Par::Rayon).unwrap();
        let refined = VolumeData::new(plan.mesh(2).clone(), p);
        assert!(refined.is_ok(), "{name}: {:?}", refined.err());
    }
}

#[test]
fn every_cell_becomes_hexahedra() {
    // A tetrahedron, a wedge and a pentagonal prism given by its faces,
    // each alone.
    let pent: Vec<[f64; 3]> = (0..5)
        .map(|k| {
            let a = 2.0 * std::f64::consts::PI * k as f64 / 5.0;
            [a.cos(), a.sin(), 0.0]
        })
        .collect();
    let mut prism_points = pent.clone();
    prism_points.extend(pent.iter().map(|p| [p[0], p[1], 1.0]));
    let mut faces = vec![vec![0, 4, 3, 2, 1], vec![5, 6, 7, 8, 9]];
    faces.extend((0..5u32).map(|k| vec![k, (k + 1) % 5, (k + 1) % 5 + 5, k + 5]));
    let cases: Vec<(Vec<[f64; 3]>, Cell, usize)> = vec![
        (vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], Cell::Tetra([0, 1, 2, 3]), 4),
        (
            vec![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]],
            Cell::Wedge([0, 1, 2, 3, 4, 5]),
            6,
        ),
        (prism_points, Cell::Polyhedron(faces), 10),
    ];
    for (points, cell, hexes) in cases {
        let x = Array2::from_shape_fn((points.len(), 3), |(i, k)| points[i][k]);
        let d = VolumeData::from_cells(x, std::slice::from_ref(&cell)).unwrap();
        let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).unwrap();
        let m1 = plan.mesh(1);
        assert_eq!(m1.num_cells(), hexes, "{:?}", cell.kind());
        assert!((0..m1.num_cells()).all(|c| m1.kind(c) == CellKind::Hexahedron));
        assert_eq!(plan.mesh(2).num_cells(), 8 * hexes);
        // The refined cells keep their orientation: valid positions.
        let y1 = eval(&CatmarkSolid::default().build(&d.mesh, 1, Par::Rayon).unwrap(), d.vertices.view(), Par::Rayon)
            .unwrap();
        VolumeData::new(m1.clone(), y1).unwrap();
    }
}

#[test]
fn the_scheme_contract_holds() {
    for (name, d) in examples().unwrap() {
        let levels = if name == "torus" { 1 } else { 2 };
        subla_scheme::testing::check_contract_of(
            &CatmarkSolid::default(),
            &d.mesh,
            d.mesh.num_vertices(),
            levels,
            1e-12,
        );
    }
}

#[test]
fn predicted_counts_are_the_built_ones() {
    for (name, d) in examples().unwrap() {
        let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).unwrap();
        let want = subla_solid::predict_counts(&d.mesh, 2);
        for l in 0..=2 {
            assert_eq!(subla_solid::SolidCounts::of(plan.mesh(l)), want[l as usize], "{name}: level {l}");
        }
    }
}

#[test]
fn the_algebra_gives_the_kernel_rows_points() {
    let mut shapes = examples().unwrap();
    shapes.push(("grid", hex_grid(3, 2, 4).unwrap()));
    for (name, d) in shapes {
        let x = data(d.mesh.num_vertices(), 4, 12);
        let want = eval(&CatmarkSolid::default().build(&d.mesh, 1, Par::Rayon).unwrap(), x.view(), Par::Rayon).unwrap();
        for par in [Par::Seq, Par::Rayon] {
            let got = subla_solid::algebra::child_points(&d.mesh, x.view(), par).unwrap();
            assert_eq!(got.dim(), want.dim(), "{name}");
            let diff = got.iter().zip(want.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff < 1e-14, "{name}: algebra and kernel rows differ by {diff}");
        }
    }
}

/// The refined cells as a mapped SpGEMM (`CF · FP` with a lambda per
/// corner meeting and a reduction per corner) are the kernels' cells, in
/// the same order and vertex order, for every example shape (tetrahedra,
/// prisms and polyhedra split into hexahedra among them) and over two
/// levels, on one thread and many.
#[test]
fn the_algebra_gives_the_kernel_cells() {
    let mut shapes = examples().unwrap();
    shapes.push(("grid", hex_grid(3, 2, 4).unwrap()));
    for (name, d) in shapes {
        let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).unwrap();
        for level in 0..2 {
            let parent = plan.mesh(level);
            let want: Vec<Cell> = plan.mesh(level + 1).cells().collect();
            for par in [Par::Seq, Par::Rayon] {
                let got = subla_solid::algebra::child_cells(parent, par).unwrap();
                assert_eq!(got, want, "{name}, level {level}");
            }
        }
    }
}

/// The algebra refiner (`CatmarkSolidLak`: cells by the mapped SpGEMM,
/// points by mapped products level by level) keeps the scheme contract
/// (its eval against its operators among the checks), makes the kernels'
/// meshes, and evaluates the kernels' points to rounding, with the same
/// bits for any thread count; under both vertex rules.
#[test]
fn the_algebra_refiner_keeps_the_contract_and_the_kernels_points() {
    use subla_solid::{CatmarkSolidLak, VertexRule};
    let rules = [VertexRule::Layered, VertexRule::JoyMacCracken];
    for ((name, d), rule) in examples().unwrap().into_iter().flat_map(|e| rules.map(|r| (e.clone(), r))) {
        let levels = if name == "torus" { 1 } else { 2 };
        let (lak_r, slak_r) = (CatmarkSolidLak::new(rule), CatmarkSolid::new(rule));
        subla_scheme::testing::check_contract_of(&lak_r, &d.mesh, d.mesh.num_vertices(), levels, 1e-12);
        let (lak, slak) =
            (lak_r.build(&d.mesh, levels, Par::Rayon).unwrap(), slak_r.build(&d.mesh, levels, Par::Rayon).unwrap());
        assert_eq!((lak.vertex_rule(), slak.vertex_rule()), (rule, rule));
        assert_eq!(lak.name(), "catmark-solid-lak");
        // The whole connectivity: the kernels' split numbers faces and
        // edges as `from_cells` does over the algebra's cells.
        for l in 0..=levels {
            assert_eq!(lak.mesh(l), slak.mesh(l), "{name}: level {l}");
        }
        let x = data(d.mesh.num_vertices(), 3, 5);
        let (a, b) = (eval(&lak, x.view(), Par::Rayon).unwrap(), eval(&slak, x.view(), Par::Rayon).unwrap());
        let diff = a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff < 1e-13, "{name}: {diff}");
        let seq = eval(&lak, x.view(), Par::Seq).unwrap();
        assert!(seq.iter().zip(a.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{name}");
        let x32 = x.mapv(|v| v as f32);
        let a32 = eval(&lak, x32.view(), Par::Rayon).unwrap();
        assert!(a32.iter().zip(a.iter()).all(|(p, q)| (f64::from(*p) - q).abs() < 1e-6), "{name}");
    }
}

/// The two vertex rules give the same matrix except in the rows of layered
/// vertices (inside, on a straight extraordinary edge of valence other than
/// 4), which exist in the shapes with extraordinary edges and not in a
/// grid; both keep the rows summing to 1.
#[test]
fn the_vertex_rules_differ_only_at_layered_vertices() {
    use subla_solid::VertexRule;
    let grid = ("grid", subla_volume::shapes::hex_grid(4, 4, 4).unwrap());
    for (name, d) in examples().unwrap().into_iter().chain([grid]) {
        let (a, b) = (
            CatmarkSolid::new(VertexRule::Layered).build(&d.mesh, 1, Par::Rayon).unwrap(),
            CatmarkSolid::new(VertexRule::JoyMacCracken).build(&d.mesh, 1, Par::Rayon).unwrap(),
        );
        let (ra, rb) = (&a.operators()[0], &b.operators()[0]);
        let mut differ = 0;
        for row in 0..ra.nrows() {
            let (x, y) = (ra.row(row), rb.row(row));
            let sum: f64 = x.1.iter().sum();
            assert!((sum - 1.0).abs() < 1e-14, "{name}: row {row} sums to {sum}");
            if x != y {
                differ += 1;
                assert!(row < d.mesh.num_vertices(), "{name}: row {row} is no vertex point");
                let v = row;
                let ext: Vec<usize> = d
                    .mesh
                    .vertex_edges(v)
                    .iter()
                    .map(|&e| d.mesh.edge_faces(e as usize).len())
                    .filter(|&n| n != 4)
                    .collect();
                assert!(
                    !d.mesh.is_boundary_vertex(v) && ext.len() == 2 && ext[0] == ext[1],
                    "{name}: vertex {v} {ext:?}"
                );
            }
        }
        let has_ext = (0..d.mesh.num_edges()).any(|e| !d.mesh.is_boundary_edge(e) && d.mesh.edge_faces(e).len() != 4);
        println!("{name}: {differ} rows differ");
        if name == "grid" {
            assert_eq!(differ, 0);
        }
        if name == "block_ee3_ee5" || name == "cylinder" {
            assert!(has_ext && differ > 0, "{name}");
        }
    }
}
