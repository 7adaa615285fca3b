//! Tests of the modified Butterfly example (`examples/butterfly.rs`), run on
//! the example's own code: interpolation, affine rows, polynomial
//! reproduction on the regular lattice, the `Plan` contract, the spectrum
//! (`1, ½, ½, ¼` away from valence 6) and the exported matrix.

#[allow(dead_code)] // the example's `main`
#[path = "../../../examples/butterfly.rs"]
pub mod butterfly;

use butterfly::{BUTTERFLY, stencil};
use subla::Par;
use subla::analysis::{AnalysisError, DiskFaces, local_subdivision_matrix, spectrum};
use subla::mesh::shapes;
use subla::scheme::testing::{check_child_points, check_contract, check_dyn};
use subla::scheme::{Plan, Refiner, SchemeError, eval};

#[test]
fn interpolates_and_rows_are_affine() {
    for d in [shapes::icosahedron(), shapes::triangle_torus(6, 8).unwrap(), shapes::bipyramid(7).unwrap()] {
        let plan = BUTTERFLY.build(&d.mesh, 1, Par::Rayon).unwrap();
        let y = eval(&plan, d.positions(), Par::Rayon).unwrap();
        let n = d.mesh.num_vertices();
        assert_eq!(y.slice(ndarray::s![..n, ..]), d.positions(), "old vertices stay");
        let r = plan.operator(0, Par::Seq).unwrap();
        for i in 0..r.nrows() {
            assert!((r.row(i).1.iter().sum::<f64>() - 1.0).abs() < 1e-14, "row {i}");
        }
    }
    // Zorin's weights sum to ¼ (with ¾ at the centre: affine).
    for k in 3..=12 {
        assert!((stencil(k).iter().sum::<f64>() - 0.25).abs() < 1e-14, "k {k}");
    }
}

#[test]
fn reproduces_cubics_on_the_regular_lattice() {
    // A regular triangle lattice (a torus of valence 6 everywhere, mapped
    // flat by its parameters): the eight-point rule reproduces cubic
    // polynomials, so refining samples of one gives its samples at the
    // edge midpoints.
    let (m, n) = (12, 12);
    let d = shapes::triangle_torus(m, n).unwrap();
    let plan = BUTTERFLY.build(&d.mesh, 1, Par::Seq).unwrap();
    // Torus vertex (i, j) is vertex i·n + j; its lattice point (i, j).
    let f = |u: f64, v: f64| 0.3 * u * u * u - u * u * v + 2.0 * v * v - u + 0.5;
    // Sample a cubic on the vertices away from the seam, zero elsewhere;
    // check the edge points inside the sampled region.
    let x = ndarray::Array2::from_shape_fn((m * n, 1), |(v, _)| {
        let (i, j) = ((v / n) as f64, (v % n) as f64);
        if (2.0..=9.0).contains(&i) && (2.0..=9.0).contains(&j) { f(i, j) } else { 0.0 }
    });
    let y = eval(&plan, x.view(), Par::Seq).unwrap();
    let t = d.mesh.topology();
    let lattice = |v: u32| (f64::from(v / n as u32), f64::from(v % n as u32));
    let mut checked = 0;
    for e in 0..t.num_edges() {
        let [a, b] = t.edge(e);
        let ((ai, aj), (bi, bj)) = (lattice(a), lattice(b));
        let inside = |i: f64, j: f64| (4.0..=7.0).contains(&i) && (4.0..=7.0).contains(&j);
        if inside(ai, aj) && inside(bi, bj) {
            let want = f((ai + bi) / 2.0, (aj + bj) / 2.0);
            assert!((y[(m * n + e, 0)] - want).abs() < 1e-10, "edge {e}: {} against {want}", y[(m * n + e, 0)]);
            checked += 1;
        }
    }
    assert!(checked > 20);
}

#[test]
fn the_contract_holds() {
    let ico = shapes::icosahedron();
    check_contract(&BUTTERFLY, &ico.mesh, 2, 1e-12);
    check_contract(&BUTTERFLY, &shapes::triangle_disk(5, 3).unwrap().mesh, 1, 1e-12);
    check_dyn(&BUTTERFLY, &ico.mesh, 2);
    check_child_points(&BUTTERFLY.build(&ico.mesh, 2, Par::Rayon).unwrap());
    // Faces that are not triangles are refused naming one.
    assert!(matches!(BUTTERFLY.build(&shapes::cube().mesh, 1, Par::Seq), Err(SchemeError::Mesh(_))));
}

#[test]
fn spectrum_away_from_valence_six() {
    for k in (3..=12).filter(|&k| k != 6) {
        let s = local_subdivision_matrix(&BUTTERFLY, DiskFaces::Triangles, k, 1).unwrap();
        let sp = spectrum(&s).unwrap();
        let lead: Vec<f64> = sp.values.iter().take(4).map(|e| e.value.re).collect();
        for (got, want) in lead.iter().zip([1.0, 0.5, 0.5, 0.25]) {
            assert!((got - want).abs() < 1e-12, "k {k}: {lead:?}");
        }
        assert!(sp.conditions().all(), "k {k}: {:?}", sp.conditions());
    }
    // At valence 6 the eight-point stencil reaches the second ring.
    assert!(matches!(
        local_subdivision_matrix(&BUTTERFLY, DiskFaces::Triangles, 6, 1),
        Err(AnalysisError::NotClosed { rings: 1, .. })
    ));
    let s = local_subdivision_matrix(&BUTTERFLY, DiskFaces::Triangles, 6, 2).unwrap();
    let l1 = spectrum(&s).unwrap().subdominant().unwrap();
    assert!((l1.value.re - 0.5).abs() < 1e-12);
}

#[test]
fn run_writes_the_mesh_and_r() {
    let dir = std::env::temp_dir().join(format!("subla-butterfly-{}", std::process::id()));
    let s = butterfly::run(Some(&dir)).unwrap();
    assert_eq!(s.faces, 20 * 16);
    let r = subla::algebra::mtx::read_matrix_market_file(dir.join("R.mtx")).unwrap();
    assert_eq!(r.ncols(), 12);
    let obj = std::fs::read_to_string(dir.join("butterfly_L2.obj")).unwrap();
    assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count(), 320);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn characteristic_maps_of_butterfly() {
    for k in (3..=12).filter(|&k| k != 6) {
        // Zorin's modification makes the map regular and injective.
        let map = subla::analysis::characteristic_map(&BUTTERFLY, DiskFaces::Triangles, k, 3).unwrap();
        assert!(map.regular && map.injective, "k {k}: areas {:?}", map.area_range);
        assert!((map.lambda - 0.5).abs() < 1e-12);
    }
}
