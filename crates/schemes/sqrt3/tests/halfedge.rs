//! The closed-form halfedge path against the specialised kernels: the
//! same rows, operators and faces in the same order (the two numberings
//! are one), closed meshes and meshes with a boundary (Kobbelt's
//! alternating steps) alike, the same bits for any thread count, modeling
//! steps equal to builds (the step parity carried on), and the scheme
//! contract.

use proptest::prelude::*;
use subla_algebra::Par;
use subla_mesh::proptest_support::torus;
use subla_mesh::{BoundaryInterpolation, Mesh, MeshData};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, eval};
use subla_sqrt3::{Sqrt3Halfedge, Sqrt3Slak};

/// `d` without the tags √3 refuses; holes kept.
fn untagged(mut d: MeshData) -> MeshData {
    let m = &d.mesh;
    let t = m.topology();
    let mut opts = m.options();
    if opts.boundary == BoundaryInterpolation::None {
        opts.boundary = BoundaryInterpolation::EdgeOnly;
    }
    d.mesh = m.retagged(vec![0.0; t.num_edges()], vec![0.0; t.num_vertices()], m.holes().to_vec(), opts).unwrap();
    d
}

fn triangle_mesh() -> impl Strategy<Value = MeshData> {
    subla_mesh::proptest_support::triangle_mesh().prop_map(untagged)
}

fn same_bits(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> bool {
    a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn halfedge_and_kernels_agree(d in triangle_mesh(), levels in 1u32..=3) {
        let slak = Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon);
        let he = Sqrt3Halfedge::new().build(&d.mesh, levels, Par::Rayon);
        let (slak, he) = match (slak, he) {
            (Ok(s), Ok(h)) => (s, h),
            // A mesh the kernels refuse (non-manifold after a step) is
            // refused by the fallback too, or refined in halfedge form,
            // where edges between the same two vertices stay apart.
            (Err(_), _) => return Ok(()),
            (Ok(_), Err(e)) => return Err(TestCaseError::fail(format!("halfedge refused: {e}"))),
        };
        // Every manifold mesh the kernels refine is held in halfedge form.
        prop_assert!(he.kernels_because().is_none(), "{:?}", he.kernels_because());
        for l in 0..=levels {
            let (a, b) = (slak.faces(l, Par::Rayon).unwrap(), he.faces(l, Par::Rayon).unwrap());
            prop_assert_eq!(a.face_verts(), b.face_verts(), "faces of level {}", l);
            prop_assert_eq!(a.holes(), b.holes());
            let (ma, mb) = (slak.refined(l, Par::Rayon).unwrap(), he.refined(l, Par::Rayon).unwrap());
            prop_assert_eq!(ma.topology().face_verts(), mb.topology().face_verts());
            prop_assert_eq!(ma.topology().num_edges(), mb.topology().num_edges());
            prop_assert_eq!(ma.topology().is_closed(), mb.topology().is_closed());
            if l < levels {
                let (ra, rb) = (slak.operator(l, Par::Seq).unwrap(), he.operator(l, Par::Seq).unwrap());
                prop_assert_eq!(ra.shape(), rb.shape());
                let (da, db) = (ra.as_ref().to_dense(), rb.as_ref().to_dense());
                let worst = da.iter().zip(db.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
                prop_assert!(worst <= 1e-14, "operator {} differs by {}", l, worst);
                for row in 0..ra.nrows() {
                    prop_assert_eq!(slak.child_point(l, row), he.child_point(l, row));
                }
            }
        }
        let x = d.positions().to_owned();
        let (ya, yb) = (eval(&slak, x.view(), Par::Rayon).unwrap(), eval(&he, x.view(), Par::Rayon).unwrap());
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let diff = ya.iter().zip(yb.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
        prop_assert!(diff <= 1e-12 * scale, "differ by {}", diff);
        prop_assert!(same_bits(&yb, &eval(&he, x.view(), Par::Seq).unwrap()));
    }

    #[test]
    fn modeling_steps_equal_builds(d in triangle_mesh(), levels in 1u32..3) {
        let r = Sqrt3Halfedge::new();
        let (Ok(deep), Ok(plan)) = (r.build(&d.mesh, levels + 1, Par::Rayon), r.build(&d.mesh, levels, Par::Rayon)) else {
            return Ok(());
        };
        let x = control_data(d.mesh.num_vertices(), 3, 11);
        let want = eval(&deep, x.view(), Par::Rayon).unwrap();
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        let Ok(stepped) = r.step(plan, Par::Rayon) else { return Ok(()) };
        let got = eval(&stepped, y.view(), Par::Rayon).unwrap();
        prop_assert!(same_bits(&got, &want));
    }

    #[test]
    fn halfedge_contract(d in triangle_mesh(), levels in 0u32..=3) {
        if Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon).is_ok() {
            check_contract(&Sqrt3Halfedge::strict(), &d.mesh, levels, 1e-12);
        }
    }
}

/// A triangulated torus with a few triangles taken out (so it has several
/// boundary loops, each face at most one boundary edge).
fn holed_torus() -> Mesh {
    let t = torus(12, 9, 1).mesh.triangulated().unwrap();
    let tp = t.topology();
    let faces: Vec<&[u32]> = (0..tp.num_faces()).filter(|f| f % 29 != 3).map(|f| tp.face(f)).collect();
    let mesh = Mesh::from_faces(tp.num_vertices(), &faces).unwrap();
    let t = mesh.topology();
    assert!(!t.is_closed());
    let ce = t.corner_edges();
    assert!((0..t.num_faces()).all(|f| (0..3).filter(|&k| t.is_boundary_edge(ce[3 * f + k] as usize)).count() <= 1));
    mesh
}

/// A mesh with several boundary loops, in halfedge form (the strict
/// refiner builds it): four steps alternate plain and splitting boundary
/// steps, the same faces and points as the kernels, in one build and in
/// modeling steps.
#[test]
fn boundaries_refine_in_halfedge_form() {
    let mesh = holed_torus();
    let x = control_data(mesh.num_vertices(), 3, 5);
    let he = Sqrt3Halfedge::strict().build(&mesh, 4, Par::Rayon).unwrap();
    let slak = Sqrt3Slak::new().build(&mesh, 4, Par::Rayon).unwrap();
    for l in 0..=4 {
        assert_eq!(he.faces(l, Par::Seq).unwrap().face_verts(), slak.faces(l, Par::Seq).unwrap().face_verts());
    }
    let (a, b) = (eval(&he, x.view(), Par::Rayon).unwrap(), eval(&slak, x.view(), Par::Rayon).unwrap());
    let worst = a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
    assert!(worst < 1e-12, "{worst}");
    let (p, y) = subla_scheme::modeling(&Sqrt3Halfedge::strict(), &mesh, x.view(), 4, Par::Rayon).unwrap();
    assert!(same_bits(&y, &a));
    assert_eq!(p.faces(p.levels(), Par::Seq).unwrap().face_verts(), he.faces(4, Par::Seq).unwrap().face_verts());
    check_contract(&Sqrt3Halfedge::strict(), &mesh, 3, 1e-12);
}

/// Two triangles, each with two boundary edges: the first (plain) step
/// leaves every face at most one, so every later splitting step holds;
/// four steps as the kernels make them.
#[test]
fn faces_of_two_boundary_edges_refine_as_the_kernels_do() {
    let m = Mesh::from_faces(4, &[[0u32, 1, 2], [0, 2, 3]]).unwrap();
    let x = control_data(4, 3, 2);
    let he = Sqrt3Halfedge::strict().build(&m, 4, Par::Seq).unwrap();
    let slak = Sqrt3Slak::new().build(&m, 4, Par::Seq).unwrap();
    assert_eq!(he.faces(4, Par::Seq).unwrap().face_verts(), slak.faces(4, Par::Seq).unwrap().face_verts());
    let (a, b) = (eval(&he, x.view(), Par::Seq).unwrap(), eval(&slak, x.view(), Par::Seq).unwrap());
    assert!(a.iter().zip(b.iter()).all(|(p, q)| (p - q).abs() < 1e-12));
}

/// Two triangles glued along all three edges: the kernels refuse the second
/// level (its edges between the same two vertices join six triangles); the
/// halfedge form keeps those edges apart, as the closed form makes them,
/// and refines it consistently.
#[test]
fn a_pillow_refines_in_halfedge_form() {
    let mesh = Mesh::from_faces(3, &[[0u32, 2, 1], [1, 2, 0]]).unwrap();
    assert!(Sqrt3Slak::new().build(&mesh, 2, Par::Seq).is_err());
    let plan = Sqrt3Halfedge::strict().build(&mesh, 3, Par::Seq).unwrap();
    assert_eq!(plan.faces(3, Par::Seq).unwrap().face_verts().len(), 3 * 2 * 27);
    let x = control_data(3, 3, 1);
    let y = eval(&plan, x.view(), Par::Seq).unwrap();
    assert!(y.iter().all(|v| v.is_finite()));
    check_contract(&Sqrt3Halfedge::strict(), &mesh, 3, 1e-12);
}

/// A large closed mesh: the same bits sequentially and in parallel.
#[test]
fn large_meshes_refine_the_same_in_parallel() {
    // A 60 × 40 quad torus, each quad split into two triangles.
    let (n, m) = (60, 40);
    let mesh = torus(n, m, 1).mesh.triangulated().unwrap();
    let x = control_data(n * m, 3, 3);
    let a = Sqrt3Halfedge::strict().build(&mesh, 3, Par::Rayon).unwrap();
    let b = Sqrt3Halfedge::strict().build(&mesh, 3, Par::Seq).unwrap();
    assert!(same_bits(&eval(&a, x.view(), Par::Rayon).unwrap(), &eval(&b, x.view(), Par::Seq).unwrap()));
    assert_eq!(a.refined(3, Par::Rayon).unwrap(), b.refined(3, Par::Seq).unwrap());
}
