//! GPU eval against the CPU eval of `CatmarkSlak` on golden input shapes.

use ndarray::{Array2, Axis, ShapeBuilder, concatenate};
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_scheme::testing::control_data;
use subla_scheme::{FallbackCause, FallbackPolicy, Plan, Refiner, SchemeError, eval};

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
            assert_eq!(
                gpu.faces(levels, Par::Rayon).unwrap(),
                cpu.faces(levels, Par::Rayon).unwrap(),
                "{name} L{levels}: faces"
            );
            for d in [1usize, 3, 4, 5] {
                let x = all5.slice(ndarray::s![.., ..d]).mapv(|v| v as f32);
                let y = gpu.try_eval(x.view()).unwrap_or_else(|e| panic!("{name} L{levels} d={d}: {e}"));
                let want = eval(&cpu, x.view(), Par::Rayon).unwrap();
                let diff = max_diff(y.mapv(f64::from).view(), want.mapv(f64::from).view()) / diag;
                assert!(diff <= 1e-5, "{name} L{levels} d={d}: GPU and CPU differ by {diff:e} of the diagonal");
                worst = worst.max(diff);
                let again = gpu.try_eval(x.view()).expect("second run");
                assert!(bits(&y) == bits(&again), "{name} L{levels} d={d}: repeated runs differ");
                // The trait method takes the same path.
                let via_trait = eval(&gpu, x.view(), Par::Seq).unwrap();
                assert!(bits(&y) == bits(&via_trait), "{name} L{levels} d={d}: eval_f32 differs from try_eval");
                // Into a caller's array, row-major or not.
                let mut into = Array2::from_elem(y.dim(), f32::NAN);
                gpu.try_eval_into(x.view(), into.view_mut()).unwrap();
                assert!(bits(&y) == bits(&into), "{name} L{levels} d={d}: try_eval_into differs from try_eval");
                let mut column_major = Array2::from_elem(y.dim().f(), f32::NAN);
                gpu.try_eval_into(x.view(), column_major.view_mut()).unwrap();
                assert!(y == column_major, "{name} L{levels} d={d}: try_eval_into a column-major array differs");
            }
        }
    }
    eprintln!("worst GPU vs CPU difference: {worst:e} of the diagonal");
}

/// `eval_f64` goes through `f32` on the device and agrees with the CPU
/// `f64` eval to `f32` accuracy.
#[test]
fn f64_is_refused_or_computed_on_the_cpu_when_allowed() {
    let Some(refiner) = refiner() else { return };
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let lenient = subla_catmark_gpu::CatmarkGpu::new(ctx).with_fallback(FallbackPolicy::Cpu);
    for name in ["catmark_cube_creases0", "catmark_fan"] {
        let data = shape(name);
        let gpu = refiner.build(&data.mesh, 2, Par::Rayon).expect("build");
        let e = eval(&gpu, data.positions(), Par::Rayon).unwrap_err();
        assert!(matches!(e, SchemeError::Precision { requested: "f64", computes: "f32", .. }), "{name}: {e}");
        let want = eval(gpu.cpu(Par::Rayon).expect("cpu plan"), data.positions(), Par::Rayon).unwrap();
        // In f32 on the device: f32 accuracy.
        let y = eval(&gpu, data.positions().mapv(|v| v as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
        let diff = max_diff(y.view(), want.view()) / diagonal(data.positions());
        assert!(diff <= 1e-5, "{name}: {diff:e}");
        assert_eq!(gpu.last_fallback(), None, "{name}: ran on the device");
        // Allowed to fall back: the CPU plan's f64 bits, and said.
        let plan = lenient.build(&data.mesh, 2, Par::Rayon).expect("build");
        let y64 = eval(&plan, data.positions(), Par::Rayon).unwrap();
        assert!(y64.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: f64 fallback");
        let said = plan.last_fallback().expect("the fallback is reported");
        assert_eq!(said.cause, FallbackCause::Precision { requested: "f64" }, "{name}");
    }
}

/// The registry's type-erased form of the refiner builds, steps and
/// evaluates as the refiner does, bit for bit.
#[test]
fn erased_refiner_gives_the_same_bits() {
    let Some(refiner) = refiner() else { return };
    for name in ["catmark_cube_creases0", "catmark_fan"] {
        subla_scheme::testing::check_dyn(refiner, &shape(name).mesh, 2);
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
        assert_eq!(stepped.faces(1, Par::Rayon).unwrap(), plan.faces(3, Par::Rayon).unwrap(), "{name}: finest faces");
        let diff = max_diff(y.mapv(f64::from).view(), want.mapv(f64::from).view()) / diagonal(data.positions());
        assert!(diff <= 1e-5, "{name}: modeling and static differ by {diff:e}");
    }
}

/// Plans built on the device (topology, masks, sharpness and holes by GPU
/// kernels) against plans built on the host and uploaded: the same faces
/// and holes at every level, evals within 1e-5 of the diagonal. Modeling
/// mode on the device starts each step from the device's finest level; read
/// back, that level's sharpness and holes are the CPU's. A non-manifold
/// control mesh is refused by `TopologySite::Device` and built on the host
/// by `Auto`.
#[test]
fn device_build_equals_host_build() {
    use subla_catmark_gpu::{CatmarkGpu, TopologySite};
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let _t = Timer::start("device_build_equals_host_build");
    let host = CatmarkGpu::new(ctx).with_topology_site(TopologySite::Host);
    let device = CatmarkGpu::new(ctx).with_topology_site(TopologySite::Device);
    for name in SHAPES {
        let data = shape(name);
        if !data.mesh.topology().is_manifold() {
            match device.build(&data.mesh, 1, Par::Rayon) {
                Err(subla_scheme::SchemeError::NotManifold { scheme: "catmark-gpu", .. }) => {}
                other => panic!("{name}: expected a refusal, got {:?}", other.map(|p| p.levels())),
            }
            let auto = refiner().expect("refiner").build(&data.mesh, 1, Par::Rayon).expect("auto build");
            assert_eq!(auto.topology_site(), TopologySite::Host, "{name}");
            continue;
        }
        let x = data.positions().mapv(|v| v as f32);
        let diag = diagonal(data.positions());
        for levels in 1..=3 {
            let d = device.build(&data.mesh, levels, Par::Rayon).unwrap_or_else(|e| panic!("{name}: {e}"));
            let h = host.build(&data.mesh, levels, Par::Rayon).expect("host build");
            assert_eq!(d.topology_site(), TopologySite::Device);
            assert_eq!(h.topology_site(), TopologySite::Host);
            for l in 0..=levels {
                assert_eq!(d.level_len(l), h.level_len(l), "{name} L{levels}: rows of level {l}");
                assert_eq!(
                    d.faces(l, Par::Rayon).unwrap(),
                    h.faces(l, Par::Rayon).unwrap(),
                    "{name} L{levels}: faces of level {l}"
                );
            }
            let (yd, yh) = (d.try_eval(x.view()).expect("device eval"), h.try_eval(x.view()).expect("host eval"));
            let diff = max_diff(yd.mapv(f64::from).view(), yh.mapv(f64::from).view()) / diag;
            assert!(diff <= 1e-5, "{name} L{levels}: device and host builds differ by {diff:e}");
        }
        // Modeling: each step starts from the device's finest level.
        let (stepped, y) = subla_scheme::modeling(&device, &data.mesh, x.view(), 3, Par::Rayon).expect("modeling");
        assert_eq!(stepped.topology_site(), TopologySite::Device);
        let h = host.build(&data.mesh, 3, Par::Rayon).expect("host build");
        assert_eq!(stepped.faces(0, Par::Rayon).unwrap(), h.faces(2, Par::Rayon).unwrap(), "{name}: modeling level 0");
        assert_eq!(stepped.faces(1, Par::Rayon).unwrap(), h.faces(3, Par::Rayon).unwrap(), "{name}: modeling level 1");
        let want = h.try_eval(x.view()).expect("host eval");
        let diff = max_diff(y.mapv(f64::from).view(), want.mapv(f64::from).view()) / diag;
        assert!(diff <= 1e-5, "{name}: device modeling differs from the host build by {diff:e}");
        let back = stepped.cpu(Par::Rayon).expect("cpu plan of a device-based step");
        assert_eq!(
            back.refined(0, Par::Rayon).ok().map(|m| (
                m.edge_sharpness().to_vec(),
                m.vertex_sharpness().to_vec(),
                m.holes().to_vec()
            )),
            h.refined(2, Par::Rayon).ok().map(|m| (
                m.edge_sharpness().to_vec(),
                m.vertex_sharpness().to_vec(),
                m.holes().to_vec()
            )),
            "{name}: level 0 read back"
        );
    }
}

/// Per-frame evals reuse the plan's data buffers: new control data each
/// frame gives that frame's result (twice the data, exactly twice the
/// result), a change of channel count takes new buffers, and going back
/// gives the first frame's bits.
#[test]
fn frames_reuse_buffers() {
    let Some(refiner) = refiner() else { return };
    let data = shape("catmark_tent_creases0");
    let plan = refiner.build(&data.mesh, 2, Par::Rayon).expect("build");
    let x = data.positions().mapv(|v| v as f32);
    let first = plan.try_eval(x.view()).expect("frame 1");
    let doubled = plan.try_eval(x.mapv(|v| 2.0 * v).view()).expect("frame 2");
    assert!(bits(&doubled) == bits(&first.mapv(|v| 2.0 * v)), "frame 2 is not twice frame 1");
    let one = plan.try_eval(x.slice(ndarray::s![.., ..1])).expect("one channel");
    assert!(bits(&one) == bits(&first.slice(ndarray::s![.., ..1]).to_owned()));
    assert!(bits(&plan.try_eval(x.view()).expect("frame 4")) == bits(&first), "frame 4");
}

/// A profiled eval gives the bits of a plain one, with every kernel of
/// every level timed where the adapter has timestamps.
#[test]
fn profiled_eval() {
    let Some(refiner) = refiner() else { return };
    let data = shape("catmark_cube_creases0");
    let plan = refiner.build(&data.mesh, 3, Par::Rayon).expect("build");
    let x = data.positions().mapv(|v| v as f32);
    let (y, profile) = plan.profile_eval(x.view()).expect("profile");
    assert!(bits(&y) == bits(&plan.try_eval(x.view()).expect("eval")));
    assert_eq!(profile.kernels.len(), 9);
    let names: Vec<(u32, &str)> = profile.kernels.iter().map(|k| (k.level, k.kernel)).collect();
    assert_eq!(names[..3], [(0, "face_points"), (0, "edge_points"), (0, "vertex_points")]);
    assert!(profile.kernels.windows(2).all(|w| w[0].level <= w[1].level));
    // Each level moves more bytes than the one before.
    let per_level: Vec<u64> =
        (0..3).map(|l| profile.kernels.iter().filter(|k| k.level == l).map(|k| k.bytes).sum()).collect();
    assert!(per_level.windows(2).all(|w| w[0] < w[1]), "{per_level:?}");
    let ctx = refiner.context();
    assert_eq!(profile.gpu_seconds().is_some(), ctx.has_timestamps());
    assert!(profile.wall_seconds > 0.0);
}
