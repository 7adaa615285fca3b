//! Face-varying values refined on the device: a channel's operators
//! (`FVarPlan::operators`, Catmull-Clark's face-varying rules) applied by
//! the load-balanced SpMV chain (`subla_gpu::balanced::GpuRefinement`).
//! The device agrees with the CPU to `f32` rounding (1e-5 of the values'
//! bounding-box diagonal, the tolerance of the face-varying goldens in
//! `f32`), and repeats its own bits. Skips where no adapter exists, unless
//! `SUBLA_REQUIRE_GPU=1`.

use ndarray::Array2;
use subla_algebra::{CsrRef, Par};
use subla_catmark::fvar::{self, QuadScheme};
use subla_gpu::balanced::GpuRefinement;
use subla_mesh::obj::read_obj;
use subla_mesh::{FVarLinearInterpolation as M, Validation};
use subla_scheme::Plan;

#[test]
fn texture_coordinates_refine_on_the_device_as_on_the_cpu() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/meshes/paper/Monsterfrog.obj");
    let data = read_obj(path, Validation::OpenSubdiv).expect("the paper mesh reads");
    let fv = data.texcoords.as_ref().expect("Monsterfrog has texture coordinates");
    let uv = fv.values.slice(ndarray::s![.., 0..2]).to_owned();
    let diag = {
        let lo = uv.fold_axis(ndarray::Axis(0), f64::INFINITY, |a, &b| a.min(b));
        let hi = uv.fold_axis(ndarray::Axis(0), f64::NEG_INFINITY, |a, &b| a.max(b));
        (&hi - &lo).mapv(|x| x * x).sum().sqrt()
    };
    for mode in [M::None, M::CornersPlus1, M::Boundaries] {
        let plan = fvar::build(&data.mesh, &fv.indices, uv.nrows(), 2, mode, QuadScheme::Catmark, Par::Rayon).unwrap();
        let chain: Vec<CsrRef<'_, f64>> = plan.operators().iter().map(|r| r.as_ref()).collect();
        let mut gpu = GpuRefinement::from_chain(ctx, &chain, 2).expect("uploads");
        let x: Vec<f32> = uv.iter().map(|&v| v as f32).collect();
        let got = gpu.apply(ctx, &x, 2).expect("runs");
        assert_eq!(got, gpu.apply(ctx, &x, 2).expect("runs again"), "{mode:?}: the same bits every run");
        let mut want = Array2::<f32>::zeros((plan.output_len(), 2));
        plan.eval_f32(uv.mapv(|v| v as f32).view(), want.view_mut(), Par::Rayon).unwrap();
        let worst = got.iter().zip(want.iter()).map(|(a, b)| f64::from((a - b).abs())).fold(0.0, f64::max);
        assert!(worst <= 1e-5 * diag, "{mode:?}: device and CPU differ by {worst:e} (diagonal {diag})");
    }
}
