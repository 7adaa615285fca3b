//! The edge-friend path against the specialised kernels on generated
//! meshes (with creases, boundaries and, for the default refiner,
//! non-manifold input built by the kernels), and the scheme contract.

use proptest::prelude::*;
use subla_algebra::Par;
use subla_catmark::{CatmarkEdgeFriend, CatmarkSlak};
use subla_mesh::proptest_support::{any_mesh, mesh_with_creases};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, eval};

/// Points of `a` matched to points of `b` by quantised position: both
/// sides must have the same multiset of points (to `tol`).
fn same_points(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>, tol: f64) -> Result<(), String> {
    if a.dim() != b.dim() {
        return Err(format!("shapes {:?} and {:?}", a.dim(), b.dim()));
    }
    let key = |r: ndarray::ArrayView1<'_, f64>| r.iter().map(|&x| (x / tol).round() as i64).collect::<Vec<_>>();
    let mut ka: Vec<_> = a.rows().into_iter().map(key).collect();
    let mut kb: Vec<_> = b.rows().into_iter().map(key).collect();
    ka.sort();
    kb.sort();
    // Rounding can put two equal points on either side of a cell edge:
    // allow a difference of one cell per coordinate.
    for (x, y) in ka.iter().zip(&kb) {
        if x.iter().zip(y).any(|(p, q)| (p - q).abs() > 1) {
            return Err(format!("{x:?} and {y:?}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn edge_friend_and_kernels_make_the_same_points(d in mesh_with_creases(), levels in 1u32..4) {
        let kernels = CatmarkSlak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let ef = CatmarkEdgeFriend::new().build(&d.mesh, levels, Par::Rayon).unwrap();
        let x = control_data(kernels.input_len(), 3, 7);
        let a = eval(&kernels, x.view(), Par::Rayon).unwrap();
        let b = eval(&ef, x.view(), Par::Rayon).unwrap();
        prop_assert!(same_points(&a, &b, 1e-9).is_ok(), "{:?}", same_points(&a, &b, 1e-9));
        prop_assert_eq!(
            kernels.faces(levels, Par::Rayon).unwrap().num_faces(),
            ef.faces(levels, Par::Rayon).unwrap().num_faces()
        );
        // Any thread count, the same bits.
        let c = eval(&ef, x.view(), Par::Seq).unwrap();
        prop_assert!(b.iter().zip(c.iter()).all(|(p, q)| p.to_bits() == q.to_bits()));
    }

    #[test]
    fn edge_friend_contract(d in any_mesh(), levels in 1u32..3) {
        check_contract(&CatmarkEdgeFriend::new(), &d.mesh, levels, 1e-12);
    }

    #[test]
    fn edge_friend_contract_with_creases(d in mesh_with_creases(), levels in 1u32..3) {
        check_contract(&CatmarkEdgeFriend::new(), &d.mesh, levels, 1e-12);
    }
}
