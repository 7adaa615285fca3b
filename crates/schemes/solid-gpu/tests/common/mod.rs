//! Models and comparisons shared by the device's limit tests.
#![allow(dead_code)]

use ndarray::Array2;
use subla_algebra::Par;
use subla_scheme::{Refiner, eval};
use subla_solid::limit::Quantity;
use subla_solid::{CatmarkSolid, SolidPlan};

/// A tetrahedron split into hexahedra, refined twice, with its refined
/// points moved by up to 0.005 (a fixed generator from `seed`): irregular
/// cells at its centre, layered ones along its extraordinary edges,
/// regular ones elsewhere. The mesh is the plan's level 2.
pub(crate) fn tetra_refined_twice(seed: u64) -> (SolidPlan, Array2<f64>) {
    let t = subla_volume::shapes::tetra_split().unwrap();
    let plan = CatmarkSolid::default().build(&t.mesh, 2, Par::Rayon).unwrap();
    let x = jitter(&eval(&plan, t.vertices.view(), Par::Rayon).unwrap(), seed, 0.01);
    (plan, x)
}

/// The largest difference between the device's `f32` samples and the
/// CPU's `f64` ones.
pub(crate) fn max_diff(got: &Array2<f32>, want: &Array2<f64>) -> f64 {
    got.iter().zip(want.iter()).fold(0f64, |a, (p, w)| a.max((f64::from(*p) - w).abs()))
}

/// The quantities checked at `k` samples per direction: derivatives too at
/// the centre (`k = 1`), positions only on a grid through the cells'
/// corners (where an irregular cell's or an edge's derivatives are
/// singular).
pub(crate) fn quantities(k: usize) -> &'static [Quantity] {
    if k == 1 {
        &[Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW]
    } else {
        &[Quantity::Position]
    }
}

/// `x` moved by up to `amp / 2` per coordinate (a fixed generator from
/// `seed`).
pub(crate) fn jitter(x: &Array2<f64>, seed: u64, amp: f64) -> Array2<f64> {
    let mut s = seed;
    x.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + amp * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    })
}
