//! The device's limit of every evaluated cell class at once
//! (`GridLimitGpu`) against the CPU's (`GridEval`, `f64`): regular, layered
//! and irregular cells of one mesh, in an order that mixes the classes,
//! within 1e-5 of the data's scale; the same bits every run; a refused
//! derivative leaves the output as it was.

mod common;

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_solid::limit::{GridEval, Quantity, cell_grid};
use subla_solid_gpu::{GridLimitGpu, Shape, SolidGpuError};

#[test]
fn the_device_agrees_with_the_cpu_on_every_class() {
    let Some(ctx) = context_or_skip() else { return };
    let (plan, x) = common::tetra_refined_twice(5);
    let m = plan.mesh(2);
    // Evaluated cells, last first, so that the classes interleave.
    let mut cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| cell_grid(m, c as usize).is_some()).collect();
    cells.reverse();
    let xf = x.mapv(|v| v as f32);
    let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
    for k in [1usize, 4] {
        let cpu = GridEval::new(m, &cells, k, Par::Rayon).unwrap();
        let gpu = GridLimitGpu::new(ctx, m, &cells, k).unwrap();
        assert_eq!(gpu.num_samples(), cpu.num_samples());
        let by_class = gpu.cells_by_class();
        assert!(by_class.iter().all(|&n| n > 0), "every class present: {by_class:?}");
        assert_eq!(by_class.iter().sum::<usize>(), cells.len());
        for &q in common::quantities(k) {
            let mut want = Array2::zeros((cpu.num_samples(), 3));
            cpu.eval_into(x.view(), q, want.view_mut(), Par::Rayon).unwrap();
            let dscale = want.iter().fold(scale, |a, v| a.max(v.abs()));
            for shape in [Shape::PerSample, Shape::PerCell, Shape::Auto] {
                let got = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                let d = common::max_diff(&got, &want);
                assert!(d <= 1e-5 * dscale, "k {k}, {q:?}, {shape:?}: {d}");
                let again = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{shape:?}: bits");
                let mut into = Array2::from_elem(got.dim(), f32::NAN);
                gpu.eval_into(ctx, xf.view(), q, shape, into.view_mut()).unwrap();
                assert!(into == got, "k {k}, {q:?}, {shape:?}: eval_into");
                let (timed, profile) = gpu.profile_eval(ctx, xf.view(), q, shape).unwrap();
                assert!(timed == got && profile.kernels.len() == 3, "k {k}, {q:?}, {shape:?}: profile_eval");
            }
        }
        if k > 1 {
            // Irregular cells' grids meet the extraordinary vertex.
            let mut out = Array2::from_elem((gpu.num_samples(), 3), f32::NAN);
            let e = gpu.eval_into(ctx, xf.view(), Quantity::DerivW, Shape::Auto, out.view_mut());
            assert!(matches!(e, Err(SolidGpuError::SingularDerivative { .. })), "{e:?}");
            assert!(out.iter().all(|v| v.is_nan()), "a refusal writes nothing");
        }
    }
    let past = m.num_cells() as u32;
    assert!(matches!(
        GridLimitGpu::new(ctx, m, &[cells[0], past], 2),
        Err(SolidGpuError::NotEvaluable { cell }) if cell == past
    ));
}
