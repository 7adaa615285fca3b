//! The device's limit of regular cells against the CPU's (`RegularEval`,
//! `f64`): both kernel shapes, positions and the three derivatives, cells
//! inside, at a boundary face and at sharp boundary edges and corners,
//! within 1e-5 of the data's scale; the same bits every run.

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::GpuContext;
use subla_gpu::testing::context_or_skip;
use subla_solid::limit::{Quantity, RegularEval, control_grid};
use subla_solid_gpu::{Shape, SolidGpuError, SolidLimitGpu};
use subla_volume::VolMesh;
use subla_volume::shapes::hex_grid;

/// `x` moved by up to 0.075 per coordinate (a fixed generator).
fn jittered(x: &Array2<f64>, seed: u64) -> Array2<f64> {
    let mut s = seed;
    x.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + 0.15 * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    })
}

#[test]
fn the_device_agrees_with_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    let g = hex_grid(5, 5, 5).unwrap();
    let x = jittered(&g.vertices, 3);
    let m = &g.mesh;
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| control_grid(m, c as usize).is_some()).collect();
    assert!(cells.len() > 27, "interior and boundary-face cells");
    // k = 17: more columns per cell than the per-cell workgroup has
    // invocations; k = 1, 3, 5: several cells per workgroup, the last
    // workgroup part-filled.
    agrees(ctx, m, &x, &cells, &[1, 3, 5, 17]);
    // A cell at the box's corner has no control grid.
    assert!(matches!(SolidLimitGpu::new(ctx, m, &[0], 2), Err(SolidGpuError::NotEvaluable { cell: 0 })));
}

#[test]
fn cells_at_sharp_boundary_edges_agree_with_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    // A 4³ box with its outline sharp: every cell evaluated, the corner
    // cells with three phantom layers, the edge cells with two.
    let n = 4;
    let g = hex_grid(n, n, n).unwrap();
    let id = |i: usize, j: usize, k: usize| (i + (n + 1) * (j + (n + 1) * k)) as u32;
    let mut sharp = Vec::new();
    for t in 0..n {
        for (a, b) in [(0, 0), (n, 0), (0, n), (n, n)] {
            sharp.extend([
                [id(t, a, b), id(t + 1, a, b)],
                [id(a, t, b), id(a, t + 1, b)],
                [id(a, b, t), id(a, b, t + 1)],
            ]);
        }
    }
    let m = g.mesh.clone().with_features(&sharp, &[]).unwrap();
    let x = jittered(&g.vertices, 5);
    let cells: Vec<u32> = (0..m.num_cells() as u32).collect();
    assert!(cells.iter().all(|&c| control_grid(&m, c as usize).is_some_and(|g| g.num_phantoms() <= 3)));
    assert_eq!(cells.iter().filter(|&&c| control_grid(&m, c as usize).unwrap().num_phantoms() == 3).count(), 8);
    agrees(ctx, &m, &x, &cells, &[1, 4]);
}

/// Both kernel shapes (and the hybrid choice) on `cells` of `m` at each of
/// `ks` samples per direction, positions and derivatives, against
/// [`RegularEval`]; the same bits on every run and into a caller's array.
fn agrees(ctx: &GpuContext, m: &VolMesh, x: &Array2<f64>, cells: &[u32], ks: &[usize]) {
    let xf = x.mapv(|v| v as f32);
    let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
    for &k in ks {
        let cpu = RegularEval::new(m, cells, k, Par::Rayon).unwrap();
        let gpu = SolidLimitGpu::new(ctx, m, cells, k).unwrap();
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
                // Three dispatches back to back: the same bits, a time each
                // where the adapter times passes.
                let (repeated, times) = gpu.profile_back_to_back(ctx, xf.view(), q, shape, 3).unwrap();
                assert!(repeated == got, "k {k}, {q:?}, {shape:?}: profile_back_to_back");
                assert!(times.len() == 3 || (times.is_empty() && profile.kernels[0].seconds.is_none()), "{times:?}");
            }
            // The hybrid choice runs one of the two: for regular cells the
            // per-cell kernel from k = 2 on.
            let auto = gpu.eval(ctx, xf.view(), q, Shape::Auto).unwrap();
            let chosen = gpu.eval(ctx, xf.view(), q, gpu.kernel_shape(Shape::Auto)).unwrap();
            assert!(auto == chosen, "k {k}, {q:?}: Auto");
            assert_eq!(gpu.kernel_shape(Shape::Auto), if k < 2 { Shape::PerSample } else { Shape::PerCell });
            assert_eq!(Shape::Auto.for_samples(k), if k < 4 { Shape::PerSample } else { Shape::PerCell });
        }
    }
}
