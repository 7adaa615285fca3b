//! The device's limit of regular cells against the CPU's (`RegularEval`,
//! `f64`): both kernel shapes, positions and the three derivatives, cells
//! inside and at a boundary face, within 1e-5 of the data's scale; the
//! same bits every run.

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_solid::limit::{Quantity, RegularEval, control_grid};
use subla_solid_gpu::{Shape, SolidGpuError, SolidLimitGpu};
use subla_volume::shapes::hex_grid;

#[test]
fn the_device_agrees_with_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    let g = hex_grid(5, 5, 5).unwrap();
    let mut s = 3u64;
    let x = g.vertices.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + 0.15 * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    });
    let m = &g.mesh;
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| control_grid(m, c as usize).is_some()).collect();
    assert!(cells.len() > 27, "interior and boundary-face cells");
    let xf = x.mapv(|v| v as f32);
    let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
    // k = 17: more basis rows and samples per slab than the per-cell
    // workgroup has invocations.
    for k in [1usize, 3, 5, 17] {
        let cpu = RegularEval::new(m, &cells, k, Par::Rayon).unwrap();
        let gpu = SolidLimitGpu::new(ctx, m, &cells, k).unwrap();
        assert_eq!(gpu.num_samples(), cpu.num_samples());
        for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
            let mut want = Array2::zeros((cpu.num_samples(), 3));
            cpu.eval_into(x.view(), q, want.view_mut(), Par::Rayon);
            for shape in [Shape::PerSample, Shape::PerCell] {
                let got = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                let d = got.iter().zip(want.iter()).fold(0f64, |a, (p, w)| a.max((f64::from(*p) - w).abs()));
                assert!(d <= 1e-5 * scale, "k {k}, {q:?}, {shape:?}: {d}");
                let again = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{shape:?}: bits");
                // Into a caller's array (the buffers kept from the last
                // evaluation), and timed: the same bits.
                let mut into = Array2::from_elem(got.dim(), f32::NAN);
                gpu.eval_into(ctx, xf.view(), q, shape, into.view_mut()).unwrap();
                assert!(into == got, "k {k}, {q:?}, {shape:?}: eval_into");
                let (timed, profile) = gpu.profile_eval(ctx, xf.view(), q, shape).unwrap();
                assert!(timed == got, "k {k}, {q:?}, {shape:?}: profile_eval");
                assert_eq!(profile.kernels.len(), 1);
            }
            // The hybrid choice runs one of the two.
            let auto = gpu.eval(ctx, xf.view(), q, Shape::Auto).unwrap();
            let chosen = gpu.eval(ctx, xf.view(), q, Shape::Auto.for_samples(k)).unwrap();
            assert!(auto == chosen, "k {k}, {q:?}: Auto");
            assert_eq!(Shape::Auto.for_samples(k), if k < 4 { Shape::PerSample } else { Shape::PerCell });
        }
    }
    // A cell at the box's corner has no control grid.
    assert!(matches!(SolidLimitGpu::new(ctx, m, &[0], 2), Err(SolidGpuError::NotEvaluable { cell: 0 })));
}
