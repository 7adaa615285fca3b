//! The LAK path (mapped algebra) against the SLAK path (specialised
//! kernels), the scheme contract for both, and Catmull-Clark invariants.

mod common;

use ndarray::Array2;
use proptest::prelude::*;
use subla_algebra::Par;
use subla_catmark::{CatmarkLak, CatmarkSlak};
use subla_mesh::proptest_support::{any_mesh, mesh_with_creases, permutation, relabel};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{Plan, Refiner, eval};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn lak_and_slak_agree_to_1e12(d in mesh_with_creases(), levels in 1u32..3) {
        let slak = CatmarkSlak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let lak = CatmarkLak.build(&d.mesh, levels, Par::Rayon).unwrap();
        for l in 1..=levels {
            prop_assert_eq!(slak.refined(l, Par::Rayon).unwrap(), lak.refined(l, Par::Rayon).unwrap());
        }
        let x = d.positions().to_owned();
        let a = eval(&slak, x.view(), Par::Rayon).unwrap();
        let b = eval(&lak, x.view(), Par::Rayon).unwrap();
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let diff = a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
        prop_assert!(diff <= 1e-12 * scale, "LAK and SLAK differ by {}", diff);
    }

    #[test]
    fn wide_rows_equal_channel_by_channel(d in mesh_with_creases(), levels in 1u32..3, width in 1usize..11) {
        // The kernels take four channels at a time: any row length must give
        // the bits of evaluating each channel alone.
        let plan = CatmarkSlak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let x = control_data(plan.input_len(), width, 5);
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        for k in 0..width {
            let col = x.column(k).to_owned().insert_axis(ndarray::Axis(1));
            let yk = eval(&plan, col.view(), Par::Seq).unwrap();
            prop_assert!(yk.column(0).iter().zip(y.column(k)).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn slak_contract(d in any_mesh(), levels in 1u32..3) {
        check_contract(&CatmarkSlak, &d.mesh, levels, 1e-12);
    }

    #[test]
    fn lak_contract(d in mesh_with_creases(), levels in 1u32..3) {
        check_contract(&CatmarkLak, &d.mesh, levels, 1e-12);
    }

    #[test]
    fn relabelling_input_vertices_permutes_the_output((d, perm) in any_mesh().prop_flat_map(|d| {
        let n = d.mesh.num_vertices();
        (Just(d), permutation(n))
    })) {
        let e = relabel(&d, &perm);
        let p1 = CatmarkSlak.build(&d.mesh, 1, Par::Rayon).unwrap();
        let p2 = CatmarkSlak.build(&e.mesh, 1, Par::Rayon).unwrap();
        let y1 = eval(&p1, d.positions(), Par::Rayon).unwrap();
        let y2 = eval(&p2, e.positions(), Par::Rayon).unwrap();
        // Vertex points follow the permutation; face points keep their order;
        // edge points are renumbered: compare them as sets of positions.
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

/// On a regular quad grid, the interior of the refinement is uniform bicubic
/// B-spline knot insertion: vertex points (1 6 1)⊗(1 6 1)/64, edge points
/// (1 6 1)⊗(4 4)/64... written as the tensor masks, exactly.
#[test]
fn regular_grid_interior_is_bicubic_bspline_knot_insertion() {
    let n = 8usize; // 8 x 8 quads, 9 x 9 vertices
    let mut faces = Vec::new();
    for r in 0..n {
        for c in 0..n {
            let v = |rr: usize, cc: usize| (rr * (n + 1) + cc) as u32;
            faces.push(vec![v(r, c), v(r, c + 1), v(r + 1, c + 1), v(r + 1, c)]);
        }
    }
    let mesh = subla_mesh::Mesh::from_faces((n + 1) * (n + 1), &faces).unwrap();
    let x = control_data(mesh.num_vertices(), 3, 11);
    let plan = CatmarkSlak.build(&mesh, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let t = mesh.topology();
    let p = |r: usize, c: usize, k: usize| x[(r * (n + 1) + c, k)];
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    for r in 2..n - 1 {
        for c in 2..n - 1 {
            let w = [1.0, 6.0, 1.0];
            for k in 0..3 {
                // Vertex point.
                let mut s = 0.0;
                for (i, wi) in w.iter().enumerate() {
                    for (j, wj) in w.iter().enumerate() {
                        s += wi * wj * p(r + i - 1, c + j - 1, k);
                    }
                }
                let got = y[(r * (n + 1) + c, k)];
                assert!((got - s / 64.0).abs() < 1e-14, "vertex ({r},{c})");
                // Face point of the face with lower-left corner (r, c).
                let f = r * n + c;
                let fp = (p(r, c, k) + p(r, c + 1, k) + p(r + 1, c, k) + p(r + 1, c + 1, k)) / 4.0;
                assert!((y[(nv + f, k)] - fp).abs() < 1e-14);
                // Edge point of the horizontal edge (r, c)-(r, c+1): (1 6 1) across, (1 1) along.
                let e = t.find_edge((r * (n + 1) + c) as u32, (r * (n + 1) + c + 1) as u32).unwrap() as usize;
                let mut s = 0.0;
                for (i, wi) in w.iter().enumerate() {
                    s += wi * (p(r + i - 1, c, k) + p(r + i - 1, c + 1, k));
                }
                assert!((y[(nv + nf + e, k)] - s / 16.0).abs() < 1e-14, "edge ({r},{c})");
            }
        }
    }
}

#[test]
fn lak_rejects_what_the_mesh_matrix_cannot_hold() {
    let mesh = subla_mesh::Mesh::from_faces(5, &[vec![0, 1, 2, 1], vec![2, 3, 4]]).unwrap();
    let e = CatmarkLak.build(&mesh, 1, Par::Rayon).unwrap_err();
    // Named as a limit of the algebra path, pointing at the kernel path
    // (it cited no way out before).
    assert!(
        matches!(&e, subla_scheme::SchemeError::AlgebraPathLimit { source, .. }
            if matches!(**source, subla_mesh::MeshError::RepeatedVertex { face: 0, vertex: 1, .. })),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.contains("--path slak") && !text.contains("Eq.") && !text.contains('\n'), "{text}");
    // The SLAK path takes it.
    assert!(CatmarkSlak.build(&mesh, 1, Par::Rayon).is_ok());
}
