//! The LAK path (mapped algebra) against the SLAK path (specialised
//! kernels), the scheme contract for both, the triangle split against
//! `Topology::build`, and Loop invariants.

mod strategies;

use ndarray::Array2;
use proptest::prelude::*;
use strategies::{any_triangle_mesh, triangle_mesh_with_creases};
use subla_algebra::Par;
use subla_loop::split::split_triangles;
use subla_loop::{LoopLak, LoopSlak};
use subla_mesh::proptest_support::{permutation, relabel, triangle_mesh};
use subla_mesh::{Mesh, MeshBuilder, Topology};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, SchemeError, eval};

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn lak_and_slak_agree_to_1e12(d in any_triangle_mesh(), levels in 1u32..4, cgal in any::<bool>()) {
        let (slak, lak) = if cgal { (LoopSlak::cgal(), LoopLak::cgal()) } else { (LoopSlak::new(), LoopLak::new()) };
        let slak = slak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let lak = lak.build(&d.mesh, levels, Par::Rayon).unwrap();
        for l in 0..=levels {
            prop_assert_eq!(slak.refined(l, Par::Rayon).unwrap(), lak.refined(l, Par::Rayon).unwrap());
        }
        let x = d.positions().to_owned();
        let a = eval(&slak, x.view(), Par::Rayon).unwrap();
        let b = eval(&lak, x.view(), Par::Rayon).unwrap();
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let diff = max_diff(&a, &b);
        prop_assert!(diff <= 1e-12 * scale, "LAK and SLAK differ by {}", diff);
        // The limit operators agree too (the same masks on the same level).
        let (la, lb) = (slak.limit(Par::Rayon).unwrap(), lak.limit(Par::Rayon).unwrap());
        prop_assert_eq!(la, lb);
    }

    #[test]
    fn wide_rows_equal_channel_by_channel(d in triangle_mesh_with_creases(), levels in 1u32..3, width in 1usize..11) {
        // The kernels take four channels at a time: any row length must give
        // the bits of evaluating each channel alone.
        let plan = LoopSlak::new().build(&d.mesh, levels, Par::Rayon).unwrap();
        let x = control_data(plan.input_len(), width, 5);
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        for k in 0..width {
            let col = x.column(k).to_owned().insert_axis(ndarray::Axis(1));
            let yk = eval(&plan, col.view(), Par::Seq).unwrap();
            prop_assert!(yk.column(0).iter().zip(y.column(k)).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn slak_contract(d in any_triangle_mesh(), levels in 1u32..3) {
        check_contract(&LoopSlak::new(), &d.mesh, levels, 1e-12);
        check_contract(&LoopSlak::cgal(), &d.mesh, levels, 1e-12);
    }

    #[test]
    fn lak_contract(d in any_triangle_mesh(), levels in 1u32..3) {
        check_contract(&LoopLak::new(), &d.mesh, levels, 1e-12);
    }

    #[test]
    fn the_split_numbers_edges_as_topology_build(d in triangle_mesh(), par in prop_oneof![Just(Par::Seq), Just(Par::Rayon)]) {
        let t = d.mesh.topology();
        let s = split_triangles(t, par).unwrap();
        let built = Topology::build(
            s.topology.num_vertices(),
            s.topology.face_ptr().to_vec(),
            s.topology.face_verts().to_vec(),
            Par::Seq,
        ).unwrap();
        prop_assert_eq!(&built, &s.topology);
        prop_assert_eq!(s.topology.num_faces(), 4 * t.num_faces());
        prop_assert_eq!(s.topology.num_vertices(), t.num_vertices() + t.num_edges());
        for (e, pair) in s.halves.chunks(2).enumerate() {
            let [a, b] = t.edge(e);
            let ep = (t.num_vertices() + e) as u32;
            prop_assert_eq!(s.topology.edge(pair[0] as usize), [a, ep]);
            prop_assert_eq!(s.topology.edge(pair[1] as usize), [b, ep]);
        }
    }

    #[test]
    fn relabelling_input_vertices_permutes_the_output((d, perm) in any_triangle_mesh().prop_flat_map(|d| {
        let n = d.mesh.num_vertices();
        (Just(d), permutation(n))
    })) {
        let e = relabel(&d, &perm);
        let p1 = LoopSlak::new().build(&d.mesh, 1, Par::Rayon).unwrap();
        let p2 = LoopSlak::new().build(&e.mesh, 1, Par::Rayon).unwrap();
        let y1 = eval(&p1, d.positions(), Par::Rayon).unwrap();
        let y2 = eval(&p2, e.positions(), Par::Rayon).unwrap();
        // Vertex points follow the permutation; edge points are renumbered:
        // compare them as sets of positions.
        let nv = d.mesh.num_vertices();
        for v in 0..nv {
            for k in 0..3 {
                prop_assert!((y1[(v, k)] - y2[(perm[v] as usize, k)]).abs() <= 1e-12 * (1.0 + y1[(v, k)].abs()));
            }
        }
        let key = |y: &Array2<f64>, r: usize| -> Vec<i64> { (0..3).map(|k| (y[(r, k)] * 1e9).round() as i64).collect() };
        let mut a: Vec<Vec<i64>> = (nv..y1.nrows()).map(|r| key(&y1, r)).collect();
        let mut b: Vec<Vec<i64>> = (nv..y2.nrows()).map(|r| key(&y2, r)).collect();
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
    }
}

/// A regular triangulated grid (every interior vertex of valence 6).
fn regular_grid(n: usize) -> (Mesh, usize) {
    let v = |r: usize, c: usize| (r * (n + 1) + c) as u32;
    let mut faces = Vec::new();
    for r in 0..n {
        for c in 0..n {
            faces.push(vec![v(r, c), v(r, c + 1), v(r + 1, c + 1)]);
            faces.push(vec![v(r, c), v(r + 1, c + 1), v(r + 1, c)]);
        }
    }
    (Mesh::from_faces((n + 1) * (n + 1), &faces).unwrap(), n + 1)
}

/// On a regular grid, the interior of the refinement is the quartic box
/// spline's: vertex points `⅝ v + 1/16 Σ uᵢ`, edge points `⅜ (a + b) +
/// ⅛ (o₁ + o₂)`, exactly.
#[test]
fn regular_grid_interior_is_the_box_spline() {
    let (mesh, w) = regular_grid(8);
    let x = control_data(mesh.num_vertices(), 3, 11);
    let plan = LoopSlak::new().build(&mesh, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let t = mesh.topology();
    let nv = t.num_vertices();
    let id = |r: usize, c: usize| r * w + c;
    for r in 1..w - 1 {
        for c in 1..w - 1 {
            let ring = [id(r, c + 1), id(r + 1, c + 1), id(r + 1, c), id(r, c - 1), id(r - 1, c - 1), id(r - 1, c)];
            for k in 0..3 {
                let want = 0.625 * x[(id(r, c), k)] + ring.iter().map(|&u| x[(u, k)]).sum::<f64>() / 16.0;
                assert!((y[(id(r, c), k)] - want).abs() < 1e-14, "vertex ({r},{c})");
            }
            // The edge to the right neighbour: opposite vertices (r+1, c+1), (r-1, c).
            let e = t.find_edge(id(r, c) as u32, id(r, c + 1) as u32).unwrap() as usize;
            for k in 0..3 {
                let want = 0.375 * (x[(id(r, c), k)] + x[(id(r, c + 1), k)])
                    + 0.125 * (x[(id(r + 1, c + 1), k)] + x[(id(r - 1, c), k)]);
                assert!((y[(nv + e, k)] - want).abs() < 1e-14, "edge ({r},{c})");
            }
        }
    }
}

/// Boundaries: edge-only gives the cubic B-spline along the boundary, and a
/// corner of one triangle is smoothed (`¾ v + ⅛ (u₀ + u₁)`);
/// edge-and-corner pins it; CGAL's rule is edge-only's whatever the tag.
#[test]
fn boundary_rules() {
    use subla_mesh::{BoundaryInterpolation, Options};
    let (mesh, _) = regular_grid(4);
    let x = control_data(mesh.num_vertices(), 3, 3);
    // Vertex 4 is in one triangle, with neighbours 3 and 9 (the grid is 5 wide).
    let with = |boundary| {
        let mut m = mesh.clone();
        m.set_options(Options { boundary, ..m.options() });
        m
    };
    let corner =
        |refiner: &LoopSlak, m: &Mesh| eval(&refiner.build(m, 1, Par::Seq).unwrap(), x.view(), Par::Seq).unwrap();
    let smooth = corner(&LoopSlak::new(), &with(BoundaryInterpolation::EdgeOnly));
    let pinned = corner(&LoopSlak::new(), &with(BoundaryInterpolation::EdgeAndCorner));
    let cgal = corner(&LoopSlak::cgal(), &with(BoundaryInterpolation::EdgeAndCorner));
    for k in 0..3 {
        let want = 0.75 * x[(4, k)] + 0.125 * (x[(3, k)] + x[(9, k)]);
        assert!((smooth[(4, k)] - want).abs() < 1e-15);
        assert_eq!(pinned[(4, k)], x[(4, k)]);
        assert_eq!(cgal[(4, k)].to_bits(), smooth[(4, k)].to_bits());
        // Boundary vertex 2 (neighbours 1, 3 along the boundary).
        let want = 0.75 * x[(2, k)] + 0.125 * (x[(1, k)] + x[(3, k)]);
        assert!((smooth[(2, k)] - want).abs() < 1e-15);
    }
    // Boundary edge points are midpoints.
    let e = mesh.topology().find_edge(1, 2).unwrap() as usize;
    for k in 0..3 {
        assert!((smooth[(25 + e, k)] - 0.5 * (x[(1, k)] + x[(2, k)])).abs() < 1e-15);
    }
}

#[test]
fn non_triangles_are_refused_naming_the_face() {
    let mesh = Mesh::from_faces(6, &[vec![0, 1, 2], vec![1, 3, 4, 2], vec![2, 4, 5]]).unwrap();
    let check = |e: SchemeError| {
        assert!(
            matches!(
                e,
                SchemeError::NotTriangles { ref source, .. } if matches!(**source, subla_mesh::MeshError::NotTriangle { face: 1, order: 4 })
            ),
            "{e:?}"
        );
    };
    check(LoopSlak::new().build(&mesh, 1, Par::Rayon).unwrap_err());
    check(LoopSlak::cgal().build(&mesh, 1, Par::Rayon).unwrap_err());
    check(LoopLak::new().build(&mesh, 1, Par::Rayon).unwrap_err());
    // Level 0 too: the mesh is not a Loop control mesh.
    check(LoopSlak::new().build(&mesh, 0, Par::Rayon).unwrap_err());
}

#[test]
fn lak_rejects_what_the_mesh_matrix_cannot_hold() {
    let mesh = Mesh::from_faces(5, &[vec![0, 1, 1], vec![1, 3, 4], vec![0, 4, 1]]).unwrap();
    let e = LoopLak::new().build(&mesh, 1, Par::Rayon).unwrap_err();
    // Named as a limit of the algebra path, pointing at the kernel path.
    assert!(
        matches!(&e, SchemeError::AlgebraPathLimit { source, .. }
            if matches!(**source, subla_mesh::MeshError::RepeatedVertex { face: 0, vertex: 1, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("--path slak"), "{e}");
    // The SLAK path takes it (OpenSubdiv's degenerate edges).
    assert!(LoopSlak::new().build(&mesh, 2, Par::Rayon).is_ok());
}

#[test]
fn large_meshes_refine_the_same_in_parallel() {
    // Enough faces for the parallel paths of the split, masks and kernels.
    let (mesh, _) = regular_grid(120);
    let x = control_data(mesh.num_vertices(), 3, 9);
    let plan = LoopSlak::new().build(&mesh, 2, Par::Rayon).unwrap();
    let seq = LoopSlak::new().build(&mesh, 2, Par::Seq).unwrap();
    assert_eq!(plan.faces(2, Par::Rayon).unwrap(), seq.faces(2, Par::Rayon).unwrap());
    assert_eq!(plan.refined(2, Par::Rayon).unwrap(), seq.refined(2, Par::Rayon).unwrap());
    let a = eval(&plan, x.view(), Par::Rayon).unwrap();
    let b = eval(&seq, x.view(), Par::Seq).unwrap();
    assert!(a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits()));
    let built = Topology::build(
        plan.refined(2, Par::Rayon).unwrap().num_vertices(),
        plan.faces(2, Par::Rayon).unwrap().face_ptr().to_vec(),
        plan.faces(2, Par::Rayon).unwrap().face_verts().to_vec(),
        Par::Rayon,
    )
    .unwrap();
    assert_eq!(&built, plan.refined(2, Par::Rayon).unwrap().topology());
}

/// A closed triangulated torus of `m × n` quads, each cut in two.
fn closed_torus(m: usize, n: usize) -> Vec<[u32; 3]> {
    let v = |i: usize, j: usize| ((i % m) * n + j % n) as u32;
    let mut faces = Vec::new();
    for i in 0..m {
        for j in 0..n {
            faces.push([v(i, j), v(i + 1, j), v(i + 1, j + 1)]);
            faces.push([v(i, j), v(i + 1, j + 1), v(i, j + 1)]);
        }
    }
    faces
}

/// The same refinement as a chain of one-level plans over full meshes,
/// which never keep a level in lean form: each level's data, the finest
/// plan and the finest level's mesh.
fn full_chain(refiner: &LoopSlak, mesh: &Mesh, levels: u32, x: &Array2<f64>) -> (Array2<f64>, Vec<Mesh>) {
    let mut plan = refiner.build(mesh, 1, Par::Seq).unwrap();
    let mut meshes = vec![plan.refined(0, Par::Rayon).unwrap().clone()];
    let mut y = eval(&plan, x.view(), Par::Seq).unwrap();
    for _ in 1..levels {
        let next = plan.refined(1, Par::Rayon).unwrap().clone();
        meshes.push(next.clone());
        plan = subla_loop::LoopPlan::from_prepared(subla_loop::LoopRules, next, 0, 1, Par::Seq).unwrap();
        assert_eq!(plan.lean_level(), None);
        y = eval(&plan, y.view(), Par::Seq).unwrap();
    }
    meshes.push(plan.refined(1, Par::Rayon).unwrap().clone());
    (y, meshes)
}

fn same_bits(a: &Array2<f64>, b: &Array2<f64>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
}

/// The level below the finest of a smooth closed manifold is kept in lean
/// form, in static and in modeling mode; eval, faces, meshes and operators
/// are those of the full levels, bit for bit.
#[test]
fn lean_levels_equal_full_levels_bit_for_bit() {
    let torus = Mesh::from_faces(7 * 5, &closed_torus(7, 5)).unwrap();
    // A crease of sharpness 1 decays after one level: level 1 is smooth.
    let creased = MeshBuilder::from_faces(7 * 5, &closed_torus(7, 5)).crease(0, 6, 1.0).build(Par::Seq).unwrap();
    let octahedron =
        Mesh::from_faces(6, &[[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]])
            .unwrap();
    for (name, mesh, first_lean) in
        [("torus", &torus, 2), ("creased torus", &creased, 3), ("octahedron", &octahedron, 2)]
    {
        for refiner in [LoopSlak::new(), LoopSlak::cgal()] {
            let first_lean = if refiner == LoopSlak::cgal() { 2 } else { first_lean };
            let x = control_data(mesh.num_vertices(), 3, 5);
            for levels in 1..=4u32 {
                let what = format!("{name}, {}, {levels} levels", refiner.name());
                let (want, meshes) = full_chain(&refiner, mesh, levels, &x);
                let plan = refiner.build(mesh, levels, Par::Rayon).unwrap();
                let lean = (levels >= first_lean).then_some(levels - 1);
                assert_eq!(plan.lean_level(), lean, "{what}");
                assert!(same_bits(&eval(&plan, x.view(), Par::Rayon).unwrap(), &want), "{what}: eval");
                assert!(same_bits(&eval(&plan, x.view(), Par::Seq).unwrap(), &want), "{what}: eval, one thread");
                let (stepped, y) = subla_scheme::modeling(&refiner, mesh, x.view(), levels, Par::Rayon).unwrap();
                assert!(same_bits(&y, &want), "{what}: modeling");
                assert_eq!(
                    stepped.faces(1, Par::Rayon).unwrap(),
                    (subla_scheme::Faces::of(&meshes[levels as usize])),
                    "{what}: modeling faces"
                );
                // f32 and any channel count take the same kernels.
                let wide = control_data(mesh.num_vertices(), 6, 8).mapv(|v| v as f32);
                let mut col = Array2::zeros((mesh.num_vertices(), 1));
                let yw = eval(&plan, wide.view(), Par::Rayon).unwrap();
                for k in 0..6 {
                    col.column_mut(0).assign(&wide.column(k));
                    let yk = eval(&plan, col.view(), Par::Seq).unwrap();
                    assert!(
                        yk.column(0).iter().zip(yw.column(k)).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{what}: f32 channel {k}"
                    );
                }
                assert_eq!(
                    plan.faces(levels, Par::Rayon).unwrap(),
                    (subla_scheme::Faces::of(&meshes[levels as usize])),
                    "{what}: faces"
                );
                for l in 0..=levels {
                    assert_eq!(plan.refined(l, Par::Rayon).unwrap(), &meshes[l as usize], "{what}: level {l}");
                }
                for l in 0..levels {
                    let full = subla_loop::LoopPlan::from_prepared(
                        subla_loop::LoopRules,
                        meshes[l as usize].clone(),
                        l,
                        1,
                        Par::Seq,
                    )
                    .unwrap();
                    assert_eq!(
                        plan.operator(l, Par::Rayon).unwrap(),
                        full.operator(0, Par::Rayon).unwrap(),
                        "{what}: R_{l}"
                    );
                }
            }
        }
    }
}

/// An edge of three faces: the algebra path refuses it as its own limit,
/// saying that the kernel path takes it (which it does).
#[test]
fn lak_names_the_kernel_path_for_an_edge_of_three_faces() {
    let mesh = Mesh::from_faces(5, &[vec![0, 1, 2], vec![1, 0, 3], vec![0, 1, 4]]).unwrap();
    let e = LoopLak::new().build(&mesh, 1, Par::Rayon).unwrap_err();
    assert!(matches!(e, SchemeError::AlgebraPathLimit { scheme: "loop-lak", .. }), "{e}");
    assert!(e.to_string().contains("--path slak"), "{e}");
    assert!(LoopSlak::new().build(&mesh, 1, Par::Rayon).is_ok());
}

/// CGAL's rule set dropped the holes with the other tags (the hole's faces
/// were written); holes only leave faces out, so both rule sets carry them.
#[test]
fn both_rule_sets_carry_holes() {
    let m = subla_mesh::MeshBuilder::from_faces(4, &[[0u32, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]])
        .hole(2)
        .build(Par::Seq)
        .unwrap();
    for refiner in [LoopSlak::new(), LoopSlak::cgal()] {
        let plan = refiner.build(&m, 2, Par::Seq).unwrap();
        let f = plan.faces(2, Par::Seq).unwrap();
        let holes: Vec<usize> = (0..f.holes().len()).filter(|&i| f.holes()[i]).collect();
        assert_eq!(holes, (32..48).collect::<Vec<_>>(), "{}", refiner.name());
    }
}
