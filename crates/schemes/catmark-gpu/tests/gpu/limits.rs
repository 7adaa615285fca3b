//! Device limits: the 2-D grid, data over a binding (an error from
//! `try_eval` and from the trait methods, the CPU plan's result only where
//! a fallback was allowed, and said), and a build over the limits (an
//! error, not a panic).

use std::sync::Arc;

use subla_algebra::Par;
use subla_catmark_gpu::{CatmarkGpu, TopologySite};
use subla_gpu::{GpuContextOptions, GpuError};
use subla_scheme::{FallbackCause, FallbackPolicy, Plan, Refiner, SchemeError, eval};

use crate::common::{bits, diagonal, max_diff, refiner, shape};

/// One workgroup per grid dimension: every dispatch of more than 256
/// elements takes the 2-D path, with the same bits as the 1-D one.
#[test]
fn two_dimensional_grid() {
    let Some(base) = refiner() else { return };
    let options = GpuContextOptions::default().max_workgroups_per_dimension(2);
    let Some(ctx) = subla_gpu::testing::context_with_options_or_skip(options) else { return };
    let ctx = Arc::new(ctx);
    // The eval's grid on a host-built plan; the device build's below.
    let capped = CatmarkGpu::shared(Arc::clone(&ctx)).with_topology_site(TopologySite::Host);
    let data = shape("catmark_edgecorner");
    let x = data.positions().mapv(|v| v as f32);
    // Level 2 → 3 has 532 vertices and over 1000 edges: grids of 3 and 5
    // workgroups, 2 wide.
    let a = base.build(&data.mesh, 3, Par::Rayon).expect("build").try_eval(x.view()).expect("eval");
    let b = capped.build(&data.mesh, 3, Par::Rayon).expect("build").try_eval(x.view()).expect("eval");
    let diff = max_diff(a.mapv(f64::from).view(), b.mapv(f64::from).view()) / diagonal(data.positions());
    assert!(diff <= 1e-6, "2-D grid differs by {diff:e}");
    // Too many workgroups for a 2 × 2 grid: an error, not a panic.
    let big = capped.build(&data.mesh, 4, Par::Rayon).expect("build");
    match big.try_eval(x.view()) {
        Err(GpuError::TooLarge { limit: "max_compute_workgroups_per_dimension", .. }) => {}
        other => panic!("expected TooLarge for the grid, got {other:?}"),
    }
    // The trait method returns the device's error; it falls back to the
    // CPU only when allowed, and says so.
    let e = eval(&big, x.view(), Par::Rayon).unwrap_err();
    assert!(
        matches!(
            e.device_error::<GpuError>(),
            Some(GpuError::TooLarge { limit: "max_compute_workgroups_per_dimension", .. })
        ),
        "{e}"
    );
    assert_eq!(big.last_fallback(), None);
    let lenient = CatmarkGpu::shared(Arc::clone(&ctx))
        .with_topology_site(TopologySite::Host)
        .with_fallback(FallbackPolicy::Cpu)
        .build(&data.mesh, 4, Par::Rayon)
        .expect("build");
    let fallback = eval(&lenient, x.view(), Par::Rayon).unwrap();
    assert!(bits(&fallback) == bits(&eval(big.cpu(Par::Rayon).expect("cpu plan"), x.view(), Par::Rayon).unwrap()));
    assert!(matches!(lenient.last_fallback().map(|f| f.cause), Some(FallbackCause::Device(_))));
    // The device build's kernels take the 2-D path too (level 0 → 1 fits
    // 4 workgroups), and refuse a grid over the cap with an error.
    let device = CatmarkGpu::shared(ctx).with_topology_site(TopologySite::Device);
    let a = base.build(&data.mesh, 1, Par::Rayon).expect("build").try_eval(x.view()).expect("eval");
    let b = device.build(&data.mesh, 1, Par::Rayon).expect("device build").try_eval(x.view()).expect("eval");
    assert!(bits(&a) == bits(&b), "2-D grid of the device build");
    match device.build(&data.mesh, 4, Par::Rayon) {
        Err(e) => assert!(
            matches!(
                e.device_error::<GpuError>(),
                Some(GpuError::TooLarge { limit: "max_compute_workgroups_per_dimension", .. })
            ),
            "{e}"
        ),
        Ok(p) => panic!("expected the grid refusal, got a plan of {} levels", p.levels()),
    }
}

/// Data over the binding cap: `try_eval` reports `TooLarge`, the trait
/// methods return it as `SchemeError::Device` (and refuse `f64`), or with a
/// CPU fallback allowed evaluate on the CPU plan (same bits as the CPU
/// eval) and say so; a build whose connectivity does not fit is a device
/// error naming the limit.
#[test]
fn over_the_binding_limit() {
    let Some(_) = refiner() else { return };
    let options = GpuContextOptions::default().max_binding_bytes(2048);
    let Some(ctx) = subla_gpu::testing::context_with_options_or_skip(options) else { return };
    let ctx = Arc::new(ctx);
    let capped = CatmarkGpu::shared(Arc::clone(&ctx)).with_topology_site(TopologySite::Host);
    let data = shape("catmark_cube");
    // The cube's connectivity fits 2 KiB up to level 2 → 3, its level-3
    // data (386 × 3 floats) does not.
    let plan = capped.build(&data.mesh, 3, Par::Rayon).expect("build");
    let x = data.positions().mapv(|v| v as f32);
    match plan.try_eval(x.view()) {
        Err(GpuError::TooLarge { limit: "max_storage_buffer_binding_size", .. }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let e = eval(&plan, x.view(), Par::Rayon).unwrap_err();
    assert!(matches!(e.device_error::<GpuError>(), Some(GpuError::TooLarge { .. })), "{e}");
    let e = eval(&plan, data.positions(), Par::Rayon).unwrap_err();
    assert!(matches!(e, SchemeError::Precision { requested: "f64", computes: "f32", .. }), "{e}");
    let lenient = CatmarkGpu::shared(Arc::clone(&ctx))
        .with_topology_site(TopologySite::Host)
        .with_fallback(FallbackPolicy::Cpu)
        .build(&data.mesh, 3, Par::Rayon)
        .expect("build");
    let cpu = plan.cpu(Par::Rayon).expect("cpu plan");
    let y32 = eval(&lenient, x.view(), Par::Rayon).unwrap();
    assert!(bits(&y32) == bits(&eval(cpu, x.view(), Par::Rayon).unwrap()), "f32 fallback");
    assert!(matches!(lenient.last_fallback().map(|f| f.cause), Some(FallbackCause::Device(_))));
    let y64 = eval(&lenient, data.positions(), Par::Rayon).unwrap();
    assert_eq!(y64, eval(cpu, data.positions(), Par::Rayon).unwrap(), "f64 fallback");
    assert_eq!(lenient.last_fallback().map(|f| f.cause), Some(FallbackCause::Precision { requested: "f64" }));
    // Level 1 fits: evaluated on the device.
    let small = capped.build(&data.mesh, 1, Par::Rayon).expect("build");
    assert!(small.try_eval(x.view()).is_ok());
    // Level 4 → 5 connectivity does not fit: the build says so.
    match capped.build(&data.mesh, 5, Par::Rayon) {
        Err(e) => assert!(matches!(e.device_error::<GpuError>(), Some(GpuError::TooLarge { .. })), "{e}"),
        Ok(p) => panic!("expected a device limit, got a plan of {} levels", p.levels()),
    }
    assert!(plan.device_bytes() > 0);
    // Built on the device, every level's whole topology must fit too.
    let device = CatmarkGpu::shared(ctx).with_topology_site(TopologySite::Device);
    assert!(device.build(&data.mesh, 1, Par::Rayon).expect("device build").try_eval(x.view()).is_ok());
    match device.build(&data.mesh, 5, Par::Rayon) {
        Err(e) => assert!(
            matches!(
                e.device_error::<GpuError>(),
                Some(GpuError::TooLarge { limit: "max_buffer_size" | "max_storage_buffer_binding_size", .. })
            ),
            "{e}"
        ),
        Ok(p) => panic!("expected a device limit, got a plan of {} levels", p.levels()),
    }
}
