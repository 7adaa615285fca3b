//! The device's limit of layered cells (one extraordinary edge) against the
//! CPU's (`LayeredEval`, `f64`): both kernel shapes, positions and the
//! three derivatives, valences 3 and 5 and the cells at untagged boundary
//! edges (valence 1), cells inside and with a phantom layer, within 1e-5
//! of the data's scale; the same bits every run.

mod common;

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid::layered::{LayeredEval, layered_grid};
use subla_solid::limit::Quantity;
use subla_solid_gpu::{LayeredLimitGpu, Shape, SolidGpuError};

#[test]
fn the_device_agrees_with_the_cpu_on_layered_cells() {
    let Some(ctx) = context_or_skip() else { return };
    // The block with edges of valence 3 and 5, refined once: full rings.
    let b = subla_volume::shapes::extraordinary_block(3).unwrap();
    let plan = CatmarkSolid::default().build(&b.mesh, 1, Par::Rayon).unwrap();
    let m = plan.mesh(1);
    let x = common::jitter(&eval(&plan, b.vertices.view(), Par::Rayon).unwrap(), 5, 0.03);
    let grids: Vec<(u32, usize, bool)> = (0..m.num_cells() as u32)
        .filter_map(|c| layered_grid(m, c as usize).map(|g| (c, g.valence, g.phantom.is_some())))
        .collect();
    assert!(grids.iter().any(|g| g.1 == 3) && grids.iter().any(|g| g.1 == 5), "both valences");
    // And the cells along the block's untagged outer edges (valence 1: the
    // patch at a smooth boundary corner, nine points per layer).
    assert!(grids.iter().any(|g| g.1 == 1), "cells at smooth boundary edges");
    assert!(grids.iter().any(|g| g.2) && grids.iter().any(|g| !g.2), "inside and with a phantom layer");
    let cells: Vec<u32> = grids.iter().map(|g| g.0).collect();
    let xf = x.mapv(|v| v as f32);
    let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
    // k = 9: more surface samples (81) than one chunk of the per-cell
    // kernel (64).
    for k in [1usize, 3, 4, 9] {
        let cpu = LayeredEval::new(m, &cells, k, Par::Rayon).unwrap();
        let gpu = LayeredLimitGpu::new(ctx, m, &cells, k).unwrap();
        assert_eq!(gpu.num_samples(), cpu.num_samples());
        for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW] {
            let mut want = Array2::zeros((cpu.num_samples(), 3));
            cpu.eval_into(x.view(), q, want.view_mut(), Par::Rayon);
            let dscale = want.iter().fold(scale, |a, v| a.max(v.abs()));
            for shape in [Shape::PerSample, Shape::PerCell] {
                let got = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                let d = got.iter().zip(want.iter()).fold(0f64, |a, (p, w)| a.max((f64::from(*p) - w).abs()));
                assert!(d <= 1e-5 * dscale, "k {k}, {q:?}, {shape:?}: {d}");
                let again = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{shape:?}: bits");
                let mut into = Array2::from_elem(got.dim(), f32::NAN);
                gpu.eval_into(ctx, xf.view(), q, shape, into.view_mut()).unwrap();
                assert!(into == got, "k {k}, {q:?}, {shape:?}: eval_into");
                let (timed, profile) = gpu.profile_eval(ctx, xf.view(), q, shape).unwrap();
                assert!(timed == got, "k {k}, {q:?}, {shape:?}: profile_eval");
                assert_eq!(profile.kernels.len(), 1);
                let (repeated, times) = gpu.profile_back_to_back(ctx, xf.view(), q, shape, 2).unwrap();
                assert!(repeated == got, "k {k}, {q:?}, {shape:?}: profile_back_to_back");
                assert!(times.len() == 2 || (times.is_empty() && profile.kernels[0].seconds.is_none()));
            }
        }
    }
    // A cell that is not layered is refused, by index.
    let other = (0..m.num_cells() as u32).find(|&c| layered_grid(m, c as usize).is_none()).unwrap();
    assert!(matches!(
        LayeredLimitGpu::new(ctx, m, &[cells[0], other], 2),
        Err(SolidGpuError::NotEvaluable { cell }) if cell == other
    ));
}

/// The cells round a concave untagged boundary edge (three cells: each on
/// its sector of the fan, 14 or 15 points per layer) on the device as on
/// the CPU.
#[test]
fn the_device_agrees_with_the_cpu_at_a_concave_boundary_edge() {
    let Some(ctx) = context_or_skip() else { return };
    let g = subla_volume::shapes::hex_grid(6, 6, 4).unwrap();
    let keep: Vec<subla_volume::Cell> =
        g.mesh.cells().enumerate().filter(|&(c, _)| !(c % 6 >= 3 && (c / 6) % 6 >= 3)).map(|(_, cell)| cell).collect();
    let d = subla_volume::VolumeData::from_cells(g.vertices.clone(), &keep).unwrap();
    let m = &d.mesh;
    let x = common::jitter(&d.vertices, 9, 0.05);
    let cells: Vec<u32> = (0..m.num_cells() as u32)
        .filter(|&c| layered_grid(m, c as usize).is_some_and(|g| g.sector.is_some() && g.valence == 3))
        .collect();
    assert_eq!(cells.len(), 3 * 2, "three sectors, two layers");
    let xf = x.mapv(|v| v as f32);
    for k in [1usize, 4] {
        let cpu = LayeredEval::new(m, &cells, k, Par::Rayon).unwrap();
        let gpu = LayeredLimitGpu::new(ctx, m, &cells, k).unwrap();
        // Derivatives off the edge (k = 1: the centre).
        for &q in common::quantities(k) {
            let mut want = Array2::zeros((cpu.num_samples(), 3));
            cpu.eval_into(x.view(), q, want.view_mut(), Par::Rayon);
            let scale = want.iter().fold(5f64, |a, v| a.max(v.abs()));
            for shape in [Shape::PerSample, Shape::PerCell] {
                let got = gpu.eval(ctx, xf.view(), q, shape).unwrap();
                let d = common::max_diff(&got, &want);
                assert!(d <= 1e-5 * scale, "k {k}, {q:?}, {shape:?}: {d}");
            }
        }
    }
}
