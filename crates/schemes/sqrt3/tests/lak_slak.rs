//! The LAK path (mapped algebra) against the SLAK path (specialised
//! kernels) on closed and open meshes (Kobbelt's boundary steps in both),
//! the scheme contract for both (modeling mode continues the step parity),
//! refusals, and √3 invariants.

use proptest::prelude::*;
use subla_algebra::Par;
use subla_mesh::{BoundaryInterpolation, Mesh, MeshData};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, SchemeError, eval, modeling};
use subla_sqrt3::{Sqrt3Lak, Sqrt3Slak, Step};

/// `d` without the tags √3 refuses (sharpness, no boundary
/// interpolation); holes kept.
fn untagged(mut d: MeshData) -> MeshData {
    d.mesh = sqrt3_input(&d.mesh);
    d
}

/// `m` without the tags √3 refuses; holes kept.
fn sqrt3_input(m: &Mesh) -> Mesh {
    let t = m.topology();
    let mut opts = m.options();
    if opts.boundary == BoundaryInterpolation::None {
        opts.boundary = BoundaryInterpolation::EdgeOnly;
    }
    m.retagged(vec![0.0; t.num_edges()], vec![0.0; t.num_vertices()], m.holes().to_vec(), opts).unwrap()
}

/// Triangle meshes of the proptest strategy that √3 takes (holes kept).
fn triangle_mesh() -> impl Strategy<Value = MeshData> {
    subla_mesh::proptest_support::triangle_mesh().prop_map(untagged)
}

/// Closed triangle meshes of the proptest strategy.
fn closed_triangle_mesh() -> impl Strategy<Value = MeshData> {
    triangle_mesh().prop_filter("closed", |d| d.mesh.topology().is_closed())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn lak_equals_slak_on_closed_meshes(d in closed_triangle_mesh(), levels in 1u32..=3) {
        lak_equals_slak(&d, levels)?;
    }

    /// Open meshes: both paths refuse the same meshes (a triangle with two
    /// boundary edges on a splitting step) and agree on the others.
    #[test]
    fn lak_equals_slak_on_any_mesh(d in triangle_mesh(), levels in 1u32..=3) {
        lak_equals_slak(&d, levels)?;
    }

    #[test]
    fn contract_slak(d in triangle_mesh(), levels in 0u32..=3) {
        check_contract(&Sqrt3Slak::new(), &d.mesh, levels, 1e-12);
    }

    #[test]
    fn contract_lak(d in triangle_mesh(), levels in 0u32..=3) {
        if Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon).is_ok() {
            check_contract(&Sqrt3Lak::new(), &d.mesh, levels, 1e-12);
        }
    }


    /// Counts: each step adds one vertex per face (closed) and triples the
    /// faces; an affine function is reproduced exactly.
    #[test]
    fn counts_and_affine_invariance(d in triangle_mesh(), levels in 1u32..=3) {
        let plan = Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon).unwrap();
        let nf = d.mesh.num_faces();
        prop_assert_eq!(plan.faces(levels, Par::Rayon).unwrap().num_faces(), nf * 3usize.pow(levels));
        if d.mesh.topology().is_closed() {
            prop_assert_eq!(plan.level_len(1), d.mesh.num_vertices() + nf);
        }
        let x = control_data(d.mesh.num_vertices(), 3, 5);
        let ones = ndarray::Array2::<f64>::ones((x.nrows(), 1));
        let y = eval(&plan, ones.view(), Par::Rayon).unwrap();
        prop_assert!(y.iter().all(|v| (v - 1.0).abs() < 1e-12));
        let _ = x;
    }
}

/// SLAK and LAK: both refuse, or equal meshes, positions within 1e-12 and
/// equal operators.
fn lak_equals_slak(d: &MeshData, levels: u32) -> Result<(), TestCaseError> {
    let (slak, lak) =
        match (Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon), Sqrt3Lak::new().build(&d.mesh, levels, Par::Rayon))
        {
            (Ok(a), Ok(b)) => (a, b),
            (Err(_), Err(_)) => return Ok(()),
            (a, b) => {
                return Err(TestCaseError::fail(format!("one path refuses: slak {:?}, lak {:?}", a.err(), b.err())));
            }
        };
    prop_assert_eq!(slak.refined(levels, Par::Rayon).unwrap(), lak.refined(levels, Par::Rayon).unwrap());
    let x = control_data(d.mesh.num_vertices(), 3, 11);
    let a = eval(&slak, x.view(), Par::Rayon).unwrap();
    let b = eval(&lak, x.view(), Par::Rayon).unwrap();
    let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
    let diff = a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
    prop_assert!(diff <= 1e-12 * scale, "positions differ by {}", diff);
    for l in 0..levels {
        let (ra, rb) = (slak.operator(l, Par::Rayon).unwrap(), lak.operator(l, Par::Rayon).unwrap());
        prop_assert_eq!(ra.shape(), rb.shape());
        for i in 0..ra.nrows() {
            let (ca, va) = ra.row(i);
            let (cb, vb) = rb.row(i);
            prop_assert_eq!(ca, cb);
            prop_assert!(va.iter().zip(vb).all(|(p, q)| (p - q).abs() < 1e-14));
        }
    }
    Ok(())
}

fn mesh(nv: usize, faces: &[&[u32]]) -> Mesh {
    Mesh::from_faces(nv, faces).unwrap()
}

#[test]
fn non_triangles_are_refused_by_name() {
    let m = mesh(5, &[&[0, 1, 2], &[1, 3, 4, 2]]);
    for e in [
        Sqrt3Slak::new().build(&m, 1, Par::Seq).map(|_| ()).unwrap_err(),
        Sqrt3Lak::new().build(&m, 1, Par::Seq).map(|_| ()).unwrap_err(),
    ] {
        assert!(
            matches!(
                e,
                SchemeError::NotTriangles { ref source, .. } if matches!(**source, subla_mesh::MeshError::NotTriangle { face: 1, order: 4 })
            ),
            "{e}"
        );
    }
}

/// Kobbelt's rule through the algebra: one triangle, two steps, equal to
/// the kernels; modeling continues the parity.
#[test]
fn lak_boundary_steps_on_one_triangle() {
    let m = mesh(3, &[&[0, 1, 2]]);
    let x = ndarray::array![[0.0f64, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0]];
    let lak = Sqrt3Lak::new().build(&m, 2, Par::Seq).unwrap();
    let slak = Sqrt3Slak::new().build(&m, 2, Par::Seq).unwrap();
    assert_eq!(lak.refined(2, Par::Rayon).unwrap(), slak.refined(2, Par::Rayon).unwrap());
    let (a, b) = (eval(&lak, x.view(), Par::Seq).unwrap(), eval(&slak, x.view(), Par::Seq).unwrap());
    assert!(a.iter().zip(b.iter()).all(|(p, q)| (p - q).abs() < 1e-14), "{a} vs {b}");
    let (mp, my) = modeling(&Sqrt3Lak::new(), &m, x.view(), 2, Par::Seq).unwrap();
    assert_eq!(mp.first_level(), 1);
    assert!(my.iter().zip(b.iter()).all(|(p, q)| (p - q).abs() < 1e-14));
}

/// One triangle: step 1 keeps the corners and adds the centroid; step 2
/// splits each boundary edge in three with Kobbelt's weights; modeling
/// continues the parity, two separate builds do not.
#[test]
fn boundary_parity_on_one_triangle() {
    let m = mesh(3, &[&[0, 1, 2]]);
    let x = ndarray::array![[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0]];
    let p1 = Sqrt3Slak::new().build(&m, 1, Par::Seq).unwrap();
    let y1 = eval(&p1, x.view(), Par::Seq).unwrap();
    assert_eq!(y1, ndarray::array![[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [1.0, 1.0, 0.0]]);
    assert_eq!(p1.masks(0).map(Step::splits_boundary), Some(false));
    let p2 = Sqrt3Slak::new().build(&m, 2, Par::Seq).unwrap();
    assert_eq!(p2.masks(1).map(Step::splits_boundary), Some(true));
    // Level 1 has 4 vertices and 3 boundary triangles: step 2 gives them
    // no face points but 2 trisection points each.
    assert_eq!(p2.level_len(2), 4 + 6);
    assert_eq!(p2.faces(2, Par::Rayon).unwrap().num_faces(), 9);
    let y2 = eval(&p2, x.view(), Par::Seq).unwrap();
    // Corner 0 (boundary neighbours 1 and 2): (4 P1 + 19 P0 + 4 P2) / 27.
    let want: [f64; 2] = [12.0 / 27.0, 12.0 / 27.0];
    assert!((y2[(0, 0)] - want[0]).abs() < 1e-15 && (y2[(0, 1)] - want[1]).abs() < 1e-15);
    let (mp, my) = modeling(&Sqrt3Slak::new(), &m, x.view(), 2, Par::Seq).unwrap();
    assert_eq!(mp.first_level(), 1);
    assert_eq!(my, y2);
    let again = Sqrt3Slak::new().build(p1.refined(1, Par::Rayon).unwrap(), 1, Par::Seq).unwrap();
    assert_eq!(again.level_len(1), 4 + 3, "a fresh build starts at an odd step again");
}

/// A closed triangulated torus of `m × n` quads, each cut in two.
fn closed_torus(m: usize, n: usize) -> Mesh {
    let v = |i: usize, j: usize| ((i % m) * n + j % n) as u32;
    let mut faces = Vec::new();
    for i in 0..m {
        for j in 0..n {
            faces.push([v(i, j), v(i + 1, j), v(i + 1, j + 1)]);
            faces.push([v(i, j), v(i + 1, j + 1), v(i, j + 1)]);
        }
    }
    Mesh::from_faces(m * n, &faces).unwrap()
}

fn same_bits<T: Copy + PartialEq + std::fmt::Debug>(
    a: &ndarray::Array2<T>,
    b: &ndarray::Array2<T>,
    bits: impl Fn(T) -> u64,
) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(&p, &q)| bits(p) == bits(q))
}

/// The level below the finest of a closed mesh is kept in lean form, in
/// static and in modeling mode; eval, faces, meshes and operators are those
/// of a chain of one-step plans over full meshes, bit for bit.
#[test]
fn lean_levels_equal_full_levels_bit_for_bit() {
    let octahedron =
        Mesh::from_faces(6, &[[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]])
            .unwrap();
    let f64_bits = |v: f64| v.to_bits();
    for (name, mesh) in [("torus", closed_torus(7, 5)), ("octahedron", octahedron)] {
        let x = control_data(mesh.num_vertices(), 3, 5);
        let wide = control_data(mesh.num_vertices(), 6, 8).mapv(|v| v as f32);
        for levels in 1..=4u32 {
            let what = format!("{name}, {levels} steps");
            // The reference: one-step plans over full meshes (closed, so the
            // step parity does not matter).
            let mut meshes = vec![mesh.clone()];
            let (mut want, mut want_wide) = (x.clone(), wide.clone());
            for _ in 0..levels {
                let one = Sqrt3Slak.build(meshes.last().unwrap(), 1, Par::Seq).unwrap();
                assert_eq!(one.lean_level(), None);
                want = eval(&one, want.view(), Par::Seq).unwrap();
                want_wide = eval(&one, want_wide.view(), Par::Seq).unwrap();
                meshes.push(one.refined(1, Par::Rayon).unwrap().clone());
            }
            let plan = Sqrt3Slak.build(&mesh, levels, Par::Rayon).unwrap();
            assert_eq!(plan.lean_level(), (levels >= 2).then_some(levels - 1), "{what}");
            assert!(same_bits(&eval(&plan, x.view(), Par::Rayon).unwrap(), &want, f64_bits), "{what}: eval");
            assert!(same_bits(&eval(&plan, x.view(), Par::Seq).unwrap(), &want, f64_bits), "{what}: eval, one thread");
            let yw = eval(&plan, wide.view(), Par::Rayon).unwrap();
            assert!(same_bits(&yw, &want_wide, |v: f32| u64::from(v.to_bits())), "{what}: f32, 6 channels");
            let (stepped, y) = modeling(&Sqrt3Slak, &mesh, x.view(), levels, Par::Rayon).unwrap();
            assert!(same_bits(&y, &want, f64_bits), "{what}: modeling");
            assert_eq!(
                stepped.faces(1, Par::Rayon).unwrap(),
                (subla_scheme::Faces::of(&meshes[levels as usize])),
                "{what}: modeling faces"
            );
            assert_eq!(
                plan.faces(levels, Par::Rayon).unwrap(),
                (subla_scheme::Faces::of(&meshes[levels as usize])),
                "{what}: faces"
            );
            for l in 0..=levels {
                assert_eq!(plan.refined(l, Par::Rayon).unwrap(), &meshes[l as usize], "{what}: level {l}");
            }
            for l in 0..levels {
                let one = Sqrt3Slak.build(&meshes[l as usize], 1, Par::Seq).unwrap();
                assert_eq!(
                    plan.operator(l, Par::Rayon).unwrap(),
                    one.operator(0, Par::Rayon).unwrap(),
                    "{what}: R_{l}"
                );
                assert_eq!(plan.operator_bound(l), one.operator_bound(0), "{what}: bound {l}");
            }
        }
    }
    // An open mesh keeps every level full.
    let open = Mesh::from_faces(4, &[[0, 1, 2], [0, 2, 3]]).unwrap();
    assert_eq!(Sqrt3Slak.build(&open, 3, Par::Seq).unwrap().lean_level(), None);
}

/// Two triangles glued along all three edges (a closed, manifold pillow)
/// refine into a mesh whose one edge joins six triangles: the second level
/// is refused as non-manifold by both paths, built directly or stepped (the
/// algebra path read past its arrays here; found by fuzzing).
#[test]
fn a_pillow_refines_into_a_non_manifold_mesh_and_both_paths_refuse_it() {
    let mesh = Mesh::from_faces(3, &[[0u32, 2, 1], [1, 2, 0]]).unwrap();
    let lak = Sqrt3Lak::new();
    let slak = Sqrt3Slak::new();
    for levels in [2, 3] {
        assert!(matches!(lak.build(&mesh, levels, Par::Seq), Err(SchemeError::NotManifold { .. })));
        assert!(matches!(slak.build(&mesh, levels, Par::Seq), Err(SchemeError::NotManifold { .. })));
    }
    let one = lak.build(&mesh, 1, Par::Seq).unwrap();
    assert!(matches!(lak.step(one, Par::Seq), Err(SchemeError::NotManifold { .. })));
    let one = slak.build(&mesh, 1, Par::Seq).unwrap();
    assert!(matches!(slak.step(one, Par::Seq), Err(SchemeError::NotManifold { .. })));
}

/// √3 ignored `t hole`: the hole's faces were written. The children of a
/// hole are holes, on both paths and at every level (the lean level
/// included), and in modeling mode.
#[test]
fn holes_are_carried_to_the_children() {
    // An octahedron (closed: the lean level applies without holes) and an
    // open fan (boundary-splitting steps), face 1 a hole.
    let octahedron: &[&[u32]] =
        &[&[0, 1, 2], &[0, 2, 3], &[0, 3, 4], &[0, 4, 1], &[5, 2, 1], &[5, 3, 2], &[5, 4, 3], &[5, 1, 4]];
    let fan: &[&[u32]] = &[&[0, 1, 2], &[0, 2, 3], &[0, 3, 4], &[0, 4, 5]];
    for (faces, nv) in [(octahedron, 6), (fan, 6)] {
        let m = subla_mesh::MeshBuilder::from_faces(nv, faces).hole(1).build(Par::Seq).unwrap();
        assert_eq!(m.holes().iter().filter(|&&h| h).count(), 1);
        for levels in 1..=3u32 {
            let expect = |l: u32| 3usize.pow(l);
            let slak = Sqrt3Slak::new().build(&m, levels, Par::Seq).unwrap();
            let lak = Sqrt3Lak::new().build(&m, levels, Par::Seq).unwrap();
            for l in 1..=levels {
                for (name, plan) in [("slak", &slak as &dyn Plan), ("lak", &lak as &dyn Plan)] {
                    let f = plan.faces(l, Par::Seq).unwrap();
                    let holes: Vec<usize> = (0..f.holes().len()).filter(|&i| f.holes()[i]).collect();
                    let want: Vec<usize> = (expect(l)..2 * expect(l)).collect();
                    assert_eq!(holes, want, "{name}, level {l} of {levels}: the children of face 1");
                }
            }
            let x = control_data(nv, 3, 1);
            let (stepped, _) = modeling(&Sqrt3Slak::new(), &m, x.view(), levels, Par::Seq).unwrap();
            let f = stepped.faces(stepped.levels(), Par::Seq).unwrap();
            assert_eq!(f.holes().iter().filter(|&&h| h).count(), expect(levels), "modeling, {levels} levels");
        }
    }
}

/// √3 has no rule for sharp edges or corners, nor for a boundary without
/// interpolation: it refuses them, naming the tag and the element, where
/// it ignored them before.
#[test]
fn tags_without_a_rule_are_refused_by_name() {
    let faces: &[&[u32]] = &[&[0, 1, 2], &[0, 2, 3]];
    let b = || subla_mesh::MeshBuilder::from_faces(4, faces);
    let cases = [
        (b().crease(0, 2, 2.0).build(Par::Seq).unwrap(), "crease"),
        (b().corner(1, 10.0).build(Par::Seq).unwrap(), "corner"),
        (
            b().options(subla_mesh::Options { boundary: BoundaryInterpolation::None, ..Default::default() })
                .build(Par::Seq)
                .unwrap(),
            "interpolateboundary",
        ),
    ];
    for (m, tag) in cases {
        for e in [
            Sqrt3Slak::new().build(&m, 1, Par::Seq).map(|_| ()).unwrap_err(),
            Sqrt3Lak::new().build(&m, 1, Par::Seq).map(|_| ()).unwrap_err(),
        ] {
            assert!(matches!(e, SchemeError::UnsupportedTag { tag: t, .. } if t == tag), "{tag}: {e}");
        }
    }
}
