//! The GPU eval is the linear map of the CPU plan's operators `R_i`
//! (loosely: `f32` on the device against `f64` operators).

use ndarray::Array2;
use proptest::prelude::*;
use subla_algebra::Par;
use subla_algebra::spmv::spmv_csr;
use subla_catmark_gpu::CatmarkGpuPlan;
use subla_mesh::Mesh;
use subla_scheme::testing::control_data;
use subla_scheme::{Plan, Refiner, eval};

use crate::common::{SHAPES, max_diff, refiner};

/// `R_{L-1} ⋯ R_0 x` in `f64`.
fn by_operators(plan: &CatmarkGpuPlan, x: &Array2<f64>) -> Array2<f64> {
    let mut z = x.clone();
    for l in 0..plan.levels() {
        let r = plan.operator(l, Par::Rayon).expect("operator");
        z = spmv_csr(r.as_ref(), z.view(), |&v, _, _| v, Par::Rayon);
    }
    z
}

/// GPU eval equals the chain of operators, and is linear, within 1e-5 of
/// the data scale (control data in [-1, 1)).
fn check(mesh: &Mesh, levels: u32) {
    let Some(refiner) = refiner() else { return };
    let plan = refiner.build(mesh, levels, Par::Rayon).expect("build");
    let n = plan.input_len();
    let x = control_data(n, 3, 5);
    let y = control_data(n, 3, 6);
    // The device computes in f32.
    let on_device = |x: &Array2<f64>| eval(&plan, x.mapv(|v| v as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
    let ex = on_device(&x);
    let want = by_operators(&plan, &x);
    let diff = max_diff(ex.view(), want.view());
    assert!(diff <= 1e-5, "GPU eval and the operators differ by {diff:e}");
    let ey = on_device(&y);
    let (a, b) = (0.75, -1.5);
    let combo = &x * a + &y * b;
    let ec = on_device(&combo);
    let diff = max_diff(ec.view(), (&ex * a + &ey * b).view());
    assert!(diff <= 1e-5 * 4.0, "GPU eval is not linear: {diff:e}");
}

#[test]
fn golden_shapes_follow_the_operators() {
    let Some(_) = refiner() else { return };
    for name in SHAPES {
        check(&crate::common::shape(name).mesh, 2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn closed_quad_meshes_follow_the_operators(d in subla_mesh::proptest_support::closed_quad_mesh()) {
        check(&d.mesh, 2);
    }

    #[test]
    fn meshes_with_creases_follow_the_operators(d in subla_mesh::proptest_support::mesh_with_creases()) {
        check(&d.mesh, 2);
    }
}
