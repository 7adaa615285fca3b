//! The device's limit of irregular cells (extraordinary edges at one
//! vertex) against the CPU's (`IrregularEval`, `f64`): both kernel shapes,
//! positions (and derivatives at `k = 1`), within 1e-5 of the data's scale;
//! the same bits every run; derivatives refused on a grid through the
//! extraordinary vertex.

mod common;

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_solid::irregular::{IrregularEval, irregular_grid};
use subla_solid::limit::Quantity;
use subla_solid_gpu::{IrregularLimitGpu, Shape, SolidGpuError};

#[test]
fn the_device_agrees_with_the_cpu_on_irregular_cells() {
    let Some(ctx) = context_or_skip() else { return };
    // Eight irregular cells: four at the tetrahedron's centre, four at its
    // corners (three untagged boundary edges meet there; their children
    // along the edges are cells at smooth boundary edges).
    let (plan, x) = common::tetra_refined_twice(9);
    let m = plan.mesh(2);
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| irregular_grid(m, c as usize).is_some()).collect();
    assert_eq!(cells.len(), 8);
    let xf = x.mapv(|v| v as f32);
    let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
    for k in [1usize, 3, 8] {
        let cpu = IrregularEval::new(m, &cells, k, Par::Rayon).unwrap();
        let gpu = IrregularLimitGpu::new(ctx, m, &cells, k).unwrap();
        assert_eq!(gpu.num_samples(), cpu.num_samples());
        for &q in common::quantities(k) {
            let mut want = Array2::zeros((cpu.num_samples(), 3));
            cpu.eval_into(x.view(), q, want.view_mut(), Par::Rayon).unwrap();
            let dscale = want.iter().fold(scale, |a, v| a.max(v.abs()));
            for shape in [Shape::PerSample, Shape::PerCell] {
                let got = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                let d = common::max_diff(&got, &want);
                assert!(d <= 1e-5 * dscale, "k {k}, {q:?}, {shape:?}: {d}");
                let again = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{shape:?}: bits");
                let mut into = Array2::from_elem(got.dim(), f32::NAN);
                gpu.eval_into(ctx, xf.view(), q, shape, into.view_mut()).unwrap();
                assert!(into == got, "k {k}, {q:?}, {shape:?}: eval_into");
                let (timed, profile) = gpu.profile_eval(ctx, xf.view(), q, shape).unwrap();
                assert!(timed == got && profile.kernels.len() == 1, "k {k}, {q:?}, {shape:?}: profile_eval");
                let (repeated, times) = gpu.profile_back_to_back(ctx, xf.view(), q, shape, 2).unwrap();
                assert!(repeated == got, "k {k}, {q:?}, {shape:?}: profile_back_to_back");
                assert!(times.len() == 2 || (times.is_empty() && profile.kernels[0].seconds.is_none()));
            }
        }
        if k > 1 {
            assert!(matches!(
                gpu.eval(ctx, xf.view(), Quantity::DerivV, Shape::PerSample),
                Err(SolidGpuError::SingularDerivative { cell }) if cell == cells[0]
            ));
        }
    }
    let other = (0..m.num_cells() as u32).find(|&c| irregular_grid(m, c as usize).is_none()).unwrap();
    assert!(matches!(
        IrregularLimitGpu::new(ctx, m, &[cells[0], other], 2),
        Err(SolidGpuError::NotEvaluable { cell }) if cell == other
    ));
}
