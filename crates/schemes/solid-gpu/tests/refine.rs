//! Refinement on the device against the CPU: the split kernel's child
//! cells are `VolMesh::split`'s, and the plan's matrices applied on the
//! device give the CPU's points within 1e-5 of the data's scale, with the
//! same bits every run.

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid_gpu::{SolidRefineGpu, split_cells};
use subla_volume::shapes::{examples, hex_grid};
use subla_volume::{Cell, VolumeData};

fn shapes() -> Vec<(&'static str, VolumeData)> {
    let mut s = examples().unwrap();
    s.push(("grid", hex_grid(3, 2, 4).unwrap()));
    s
}

/// Every example shape (tetrahedra, wedges and polyhedra among the cells
/// of level 0) and a grid, over two splits.
#[test]
fn the_split_kernel_makes_the_cpu_cells() {
    let Some(ctx) = context_or_skip() else { return };
    for (name, d) in shapes() {
        let mut m = d.mesh;
        for level in 0..2 {
            let child = m.split(Par::Seq).unwrap();
            let want: Vec<[u32; 8]> = child
                .cells()
                .map(|c| match c {
                    Cell::Hexahedron(v) => v,
                    other => panic!("{name}: a split makes hexahedra, not {other:?}"),
                })
                .collect();
            let got = split_cells(ctx, &m).unwrap();
            assert_eq!(got, want, "{name}, level {level}");
            m = child;
        }
    }
}

#[test]
fn the_device_refines_as_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    for (name, d) in shapes() {
        let levels = if name == "torus" { 1 } else { 2 };
        let plan = CatmarkSolid::default().build(&d.mesh, levels, Par::Rayon).unwrap();
        let mut gpu = SolidRefineGpu::new(ctx, &plan, 3).unwrap();
        // Positions, then four channels (the levels resized).
        let mut s = 5u64;
        let extra = Array2::from_shape_fn((d.mesh.num_vertices(), 4), |_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        });
        for x in [d.vertices.clone(), extra] {
            let want = eval(&plan, x.view(), Par::Rayon).unwrap();
            let got = gpu.eval(ctx, x.mapv(|v| v as f32).view()).unwrap();
            assert_eq!(got.dim(), want.dim(), "{name}");
            assert_eq!(gpu.output_len(), want.nrows());
            let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
            let diff = got.iter().zip(want.iter()).fold(0f64, |a, (p, w)| a.max((f64::from(*p) - w).abs()));
            assert!(diff <= 1e-5 * scale, "{name}: {diff}");
            let again = gpu.eval(ctx, x.mapv(|v| v as f32).view()).unwrap();
            assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: bits");
        }
    }
}
