//! The closed-form halfedge path against the specialised kernels: on
//! closed meshes the same rows and faces in the same order (the two
//! numberings are one), the same bits for any thread count, modeling
//! steps equal to builds, the scheme contract, and the fallback for
//! meshes with a boundary.

use proptest::prelude::*;
use subla_algebra::Par;
use subla_mesh::proptest_support::torus;
use subla_mesh::{BoundaryInterpolation, Mesh, MeshData};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, SchemeError, eval};
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
        let closed = d.mesh.topology().is_closed();
        prop_assert_eq!(he.kernels_because().is_none(), closed);
        for l in 0..=levels {
            let (a, b) = (slak.faces(l, Par::Rayon).unwrap(), he.faces(l, Par::Rayon).unwrap());
            prop_assert_eq!(a.face_verts, b.face_verts, "faces of level {}", l);
            prop_assert_eq!(a.holes, b.holes);
            if closed {
                prop_assert_eq!(slak.refined(l, Par::Rayon).unwrap().topology().face_verts(),
                    he.refined(l, Par::Rayon).unwrap().topology().face_verts());
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
    fn halfedge_contract(d in triangle_mesh().prop_filter("closed", |d| d.mesh.topology().is_closed()), levels in 0u32..=3) {
        if Sqrt3Slak::new().build(&d.mesh, levels, Par::Rayon).is_ok() {
            check_contract(&Sqrt3Halfedge::strict(), &d.mesh, levels, 1e-12);
        }
    }
}

/// A mesh with a boundary: built by the kernels, with the reason; refused
/// by the strict refiner naming an edge.
#[test]
fn boundaries_fall_back_or_are_refused() {
    let m = Mesh::from_faces(4, &[[0u32, 1, 2], [0, 2, 3]]).unwrap();
    let plan = Sqrt3Halfedge::new().build(&m, 2, Par::Seq).unwrap();
    assert!(matches!(plan.kernels_because(), Some(SchemeError::Unsupported { feature: "a boundary", .. })));
    let e = Sqrt3Halfedge::strict().build(&m, 2, Par::Seq).unwrap_err();
    assert!(
        matches!(e, SchemeError::Unsupported { feature: "a boundary", ref element, .. } if element.starts_with("edge ")),
        "{e}"
    );
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
    assert_eq!(plan.faces(3, Par::Seq).unwrap().face_verts.len(), 3 * 2 * 27);
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
