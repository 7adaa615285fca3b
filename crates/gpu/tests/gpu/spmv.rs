use ndarray::Array2;
use subla_algebra::spmv::spmv_csr;
use subla_algebra::{CsrMat, Par};
use subla_gpu::spmv::{MappedSpmv, spmv, spmv_into};
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuBuffer, GpuContextOptions, GpuCsr, GpuError};

use crate::common::{Rng, Timer, random_csr};

fn random_x(rng: &mut Rng, n: usize, d: usize) -> Array2<f32> {
    Array2::from_shape_fn((n, d), |_| rng.f32_in(0.5, 2.0))
}

/// Positive data: no cancellation, so a relative bound is meaningful.
#[track_caller]
fn assert_close(gpu: &[f32], cpu: &Array2<f32>) {
    let cpu = cpu.as_slice().expect("standard layout");
    assert_eq!(gpu.len(), cpu.len());
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let tol = 1e-5 * c.abs().max(f32::MIN_POSITIVE);
        assert!((g - c).abs() <= tol, "y[{i}]: gpu {g} vs cpu {c}");
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn spmv_matches_cpu_for_several_channel_counts() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("spmv_matches_cpu_for_several_channel_counts");
    let mut rng = Rng::new(30);
    let a = random_csr(&mut rng, 5000, 4000, 8, 0.25, 1.0);
    let gpu_a = GpuCsr::upload(ctx, a.as_ref()).unwrap();
    for d in [1, 3, 4, 5] {
        let x = random_x(&mut rng, 4000, d);
        let expected = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq);
        let gx = GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap();
        let y = spmv(ctx, &gpu_a, &gx, d).unwrap().download(ctx).unwrap();
        assert_close(&y, &expected);
    }
}

#[test]
fn spmv_is_bitwise_repeatable_and_reuses_output() {
    let Some(ctx) = context_or_skip() else { return };
    let mut rng = Rng::new(31);
    let a = random_csr(&mut rng, 3000, 3000, 10, -1.0, 1.0);
    let gpu_a = GpuCsr::upload(ctx, a.as_ref()).unwrap();
    let x = random_x(&mut rng, 3000, 3);
    let gx = GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap();
    let first = spmv(ctx, &gpu_a, &gx, 3).unwrap().download(ctx).unwrap();
    let mut y = GpuBuffer::zeroed(ctx, 9000).unwrap();
    for _ in 0..3 {
        spmv_into(ctx, &gpu_a, &gx, 3, &mut y).unwrap();
        assert_eq!(bits(&y.download(ctx).unwrap()), bits(&first));
    }
    // Per-frame update of x in place.
    let x2 = random_x(&mut rng, 3000, 3);
    let mut gx = gx;
    gx.write(ctx, x2.as_slice().unwrap()).unwrap();
    spmv_into(ctx, &gpu_a, &gx, 3, &mut y).unwrap();
    let expected = spmv_csr(a.as_ref(), x2.view(), |&v, _, _| v, Par::Seq);
    let got = y.download(ctx).unwrap();
    for (g, c) in got.iter().zip(expected.iter()) {
        assert!((g - c).abs() <= 1e-5 * (1.0 + c.abs()), "gpu {g} vs cpu {c}");
    }
}

#[test]
fn mapped_spmv_doubles_values() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("mapped_spmv_doubles_values");
    let mut rng = Rng::new(32);
    let a = random_csr(&mut rng, 2000, 1500, 6, 0.25, 1.0);
    let mapped = MappedSpmv::new(ctx, "return value * 2.0;").unwrap();
    assert_eq!(mapped.snippet(), "return value * 2.0;");
    // Channels in groups of four: one group, a group and a remainder.
    for d in [1, 3, 4, 5, 9] {
        let x = random_x(&mut rng, 1500, d);
        let y = mapped
            .apply(
                ctx,
                &GpuCsr::upload(ctx, a.as_ref()).unwrap(),
                &GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap(),
                d,
            )
            .unwrap()
            .download(ctx)
            .unwrap();
        let expected = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v * 2.0, Par::Seq);
        assert_close(&y, &expected);
    }
}

#[test]
fn mapped_spmv_sees_row_and_column() {
    let Some(ctx) = context_or_skip() else { return };
    let mut rng = Rng::new(33);
    let a = random_csr(&mut rng, 1000, 1000, 20, 0.25, 1.0);
    let x = random_x(&mut rng, 1000, 2);
    let diagonal = MappedSpmv::new(ctx, "if (row == col) { return 1.0; } return 0.0;").unwrap();
    let y = diagonal
        .apply(
            ctx,
            &GpuCsr::upload(ctx, a.as_ref()).unwrap(),
            &GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap(),
            2,
        )
        .unwrap()
        .download(ctx)
        .unwrap();
    let expected = spmv_csr(a.as_ref(), x.view(), |_, r, c| if r == c { 1.0f32 } else { 0.0 }, Par::Seq);
    // Exact: at most one nonzero term per output.
    assert_eq!(bits(&y), bits(expected.as_slice().unwrap()));
    assert!(y.iter().any(|&v| v != 0.0), "some diagonal entries exist");
}

#[test]
fn invalid_snippet_is_a_shader_error_with_naga_message() {
    let Some(ctx) = context_or_skip() else { return };
    match MappedSpmv::new(ctx, "return value * ;") {
        Err(GpuError::Shader { message }) => {
            assert!(message.contains("action map snippet"), "{message}");
            assert!(message.contains("return value * ;"), "the offending line is shown: {message}");
            assert!(message.contains("expected"), "naga's diagnostic: {message}");
        }
        other => panic!("expected a shader error, got {other:?}"),
    }
    match MappedSpmv::new(ctx, "return undefined_thing;") {
        Err(GpuError::Shader { message }) => assert!(message.contains("undefined_thing"), "{message}"),
        other => panic!("expected a shader error, got {other:?}"),
    }
    // Type errors are caught too (u32 returned where f32 is expected).
    assert!(matches!(MappedSpmv::new(ctx, "return row;"), Err(GpuError::Shader { .. })));
}

#[test]
fn spmv_with_2d_grid_and_small_bindings() {
    let options = GpuContextOptions::default().max_workgroups_per_dimension(3).max_binding_bytes(64 * 1024);
    let Some(ctx) = context_with_options_or_skip(options) else { return };
    let mut rng = Rng::new(34);
    // 2000 rows: 8 workgroups on a 3 x 3 grid.
    let a = random_csr(&mut rng, 2000, 1000, 4, 0.25, 1.0);
    let x = random_x(&mut rng, 1000, 3);
    let ga = GpuCsr::upload(&ctx, a.as_ref()).unwrap();
    let y = spmv(&ctx, &ga, &GpuBuffer::upload(&ctx, x.as_slice().unwrap()).unwrap(), 3).unwrap();
    assert_close(&y.download(&ctx).unwrap(), &spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq));
    // x of 1000 x 20 floats (80 000 bytes) exceeds the 64 KiB binding.
    let wide = GpuBuffer::<f32>::zeroed(&ctx, 1000 * 20).unwrap();
    match spmv(&ctx, &ga, &wide, 20) {
        Err(GpuError::TooLarge { what, limit, limit_value, bytes }) => {
            assert_eq!((what, limit, limit_value, bytes), ("spmv x", "max_storage_buffer_binding_size", 65536, 80_000));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[test]
fn empty_matrices() {
    let Some(ctx) = context_or_skip() else { return };
    let a = CsrMat::<f32>::zeros(3, 2).unwrap();
    let ga = GpuCsr::upload(ctx, a.as_ref()).unwrap();
    let y = spmv(ctx, &ga, &GpuBuffer::upload(ctx, &[1.0f32, 2.0]).unwrap(), 1).unwrap();
    assert_eq!(y.download(ctx).unwrap(), vec![0.0; 3]);
    let none = CsrMat::<f32>::zeros(0, 0).unwrap();
    let gn = GpuCsr::upload(ctx, none.as_ref()).unwrap();
    assert!(spmv(ctx, &gn, &GpuBuffer::zeroed(ctx, 0).unwrap(), 2).unwrap().is_empty());
}

#[test]
#[should_panic(expected = "x has 5 elements")]
fn spmv_shape_mismatch_panics() {
    let Some(ctx) = context_or_skip() else { panic!("x has 5 elements (skipped: no adapter)") };
    let a = CsrMat::<f32>::zeros(3, 2).unwrap();
    let ga = GpuCsr::upload(ctx, a.as_ref()).unwrap();
    let _ = spmv(ctx, &ga, &GpuBuffer::zeroed(ctx, 5).unwrap(), 1);
}
