//! GPU eval against the CPU eval of `CatmarkSlak` on golden input shapes.

use ndarray::{Array2, Axis, concatenate};
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_scheme::testing::control_data;
use subla_scheme::{Plan, Refiner, eval};

use crate::common::{SHAPES, Timer, bits, diagonal, max_diff, refiner, shape};

/// Levels 1–3 of every shape, d = 1, 3, 4, 5: the GPU equals the CPU `f32`
/// eval within 1e-5 of the bounding-box diagonal, the face sets are the
/// CPU plan's, and a second run gives the same bits.
#[test]
fn gpu_eval_equals_cpu_eval_on_golden_shapes() {
    let Some(refiner) = refiner() else { return };
    let _t = Timer::start("gpu_eval_equals_cpu_eval_on_golden_shapes");
    let mut worst = 0f64;
    for name in SHAPES {
        let data = shape(name);
        let n = data.mesh.num_vertices();
        let pos = data.positions().to_owned();
        let diag = diagonal(pos.view());
        // Channels: the positions, then scaled random channels.
        let extra = control_data(n, 2, 11) * diag;
        let all5 = concatenate(Axis(1), &[pos.view(), extra.view()]).expect("same rows");
        for levels in 1..=3 {
            let gpu = refiner.build(&data.mesh, levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: {e}"));
            let cpu = CatmarkSlak.build(&data.mesh, levels, Par::Rayon).expect("CPU build");
            assert_eq!(gpu.levels(), levels);
            assert_eq!(gpu.output_len(), cpu.output_len(), "{name} L{levels}: output rows");
            assert_eq!(gpu.faces(levels), cpu.faces(levels), "{name} L{levels}: faces");
            for d in [1usize, 3, 4, 5] {
                let x = all5.slice(ndarray::s![.., ..d]).mapv(|v| v as f32);
                let y = gpu.try_eval(x.view()).unwrap_or_else(|e| panic!("{name} L{levels} d={d}: {e}"));
                let want = eval(&cpu, x.view(), Par::Rayon);
                let diff = max_diff(y.mapv(f64::from).view(), want.mapv(f64::from).view()) / diag;
                assert!(diff <= 1e-5, "{name} L{levels} d={d}: GPU and CPU differ by {diff:e} of the diagonal");
                worst = worst.max(diff);
                let again = gpu.try_eval(x.view()).expect("second run");
                assert!(bits(&y) == bits(&again), "{name} L{levels} d={d}: repeated runs differ");
                // The trait method takes the same path.
                let via_trait = eval(&gpu, x.view(), Par::Seq);
                assert!(bits(&y) == bits(&via_trait), "{name} L{levels} d={d}: eval_f32 differs from try_eval");
            }
        }
    }
    eprintln!("worst GPU vs CPU difference: {worst:e} of the diagonal");
}

/// `eval_f64` goes through `f32` on the device and agrees with the CPU
/// `f64` eval to `f32` accuracy.
#[test]
fn eval_f64_agrees_with_cpu_to_f32_accuracy() {
    let Some(refiner) = refiner() else { return };
    for name in ["catmark_cube_creases0", "catmark_fan"] {
        let data = shape(name);
        let gpu = refiner.build(&data.mesh, 2, Par::Rayon).expect("build");
        let y = eval(&gpu, data.positions(), Par::Rayon);
        let want = eval(gpu.cpu(), data.positions(), Par::Rayon);
        let diff = max_diff(y.view(), want.view()) / diagonal(data.positions());
        assert!(diff <= 1e-5, "{name}: {diff:e}");
    }
}

/// Control data in a non-standard layout (every other column) is read as
/// the same matrix.
#[test]
fn strided_control_data() {
    let Some(refiner) = refiner() else { return };
    let data = shape("catmark_cube");
    let gpu = refiner.build(&data.mesh, 2, Par::Rayon).expect("build");
    let x = data.positions().mapv(|v| v as f32);
    let mut wide = Array2::<f32>::zeros((x.nrows(), 2 * x.ncols()));
    wide.slice_mut(ndarray::s![.., ..;2]).assign(&x);
    let strided = wide.slice(ndarray::s![.., ..;2]);
    assert!(!strided.is_standard_layout());
    let a = gpu.try_eval(x.view()).expect("eval");
    let b = gpu.try_eval(strided).expect("eval strided");
    assert!(bits(&a) == bits(&b));
}

/// Zero levels copy the control data; zero channels give an empty result.
#[test]
fn zero_levels_and_zero_channels() {
    let Some(refiner) = refiner() else { return };
    let data = shape("catmark_cube");
    let x = data.positions().mapv(|v| v as f32);
    let plan0 = refiner.build(&data.mesh, 0, Par::Rayon).expect("build");
    assert_eq!(plan0.levels(), 0);
    assert_eq!(plan0.try_eval(x.view()).expect("eval"), x);
    let plan = refiner.build(&data.mesh, 1, Par::Rayon).expect("build");
    let empty = Array2::<f32>::zeros((x.nrows(), 0));
    assert_eq!(plan.try_eval(empty.view()).expect("eval").dim(), (plan.output_len(), 0));
    assert_eq!(refiner.name(), "catmark-gpu");
}

/// Concurrent evals of one plan from two threads give the bits of a
/// single-threaded eval.
#[test]
fn concurrent_evals_agree() {
    let Some(refiner) = refiner() else { return };
    let data = shape("catmark_chaikin2");
    let plan = refiner.build(&data.mesh, 2, Par::Rayon).expect("build");
    let x = data.positions().mapv(|v| v as f32);
    let want = bits(&plan.try_eval(x.view()).expect("eval"));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| plan.try_eval(x.view()).expect("eval"))).collect();
        for h in handles {
            assert!(bits(&h.join().expect("thread")) == want);
        }
    });
}

/// Modeling mode (one level at a time, `step` = CPU step + upload) equals
/// the static plan, with the same finest faces.
#[test]
fn modeling_equals_static() {
    let Some(refiner) = refiner() else { return };
    for name in ["catmark_chaikin2", "catmark_hole_test1"] {
        let data = shape(name);
        let x = data.positions().mapv(|v| v as f32);
        let (stepped, y) = subla_scheme::modeling(refiner, &data.mesh, x.view(), 3, Par::Rayon).expect("modeling");
        let plan = refiner.build(&data.mesh, 3, Par::Rayon).expect("build");
        let want = plan.try_eval(x.view()).expect("eval");
        assert_eq!(stepped.levels(), 1);
        assert_eq!(stepped.faces(1), plan.faces(3), "{name}: finest faces");
        let diff = max_diff(y.mapv(f64::from).view(), want.mapv(f64::from).view()) / diagonal(data.positions());
        assert!(diff <= 1e-5, "{name}: modeling and static differ by {diff:e}");
    }
}
