//! The table's points computed on the device level by level and tile by
//! tile ([`PointPath`]) give the CPU `f64` limit surface, as the composed
//! point matrix does, and repeat bit for bit.
//!
//! Tests skip where no adapter exists and fail when `SUBLA_REQUIRE_GPU=1`
//! (see `subla_gpu::testing`); sizes stay small for software drivers.

mod common;

use common::{bits, compare, shape};
use ndarray::Array2;
use subla_adaptive::{EndCap, PatchTable, Sample, SparseRefinement, grid};
use subla_adaptive_gpu::{GpuLimit, LimitValues, PointPath};
use subla_algebra::Par;
use subla_gpu::GpuContext;
use subla_gpu::testing::context_or_skip;
use subla_mesh::MeshData;

fn diagonal(x: &Array2<f64>) -> f64 {
    (0..3)
        .map(|c| {
            let (lo, hi) = x.column(c).iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            (hi - lo).powi(2)
        })
        .sum::<f64>()
        .sqrt()
}

/// Positions plus two channels of other data (the kernels handle any
/// channel count in groups of four).
fn control(d: &MeshData) -> Array2<f64> {
    let p = d.positions();
    Array2::from_shape_fn((p.nrows(), 5), |(i, c)| if c < 3 { p[[i, c]] } else { (i * (c + 7) % 13) as f64 / 13.0 })
}

fn run(ctx: &GpuContext, limit: &mut GpuLimit, t: &PatchTable, x: &Array2<f64>, s: &[Sample]) -> LimitValues {
    let located = limit.locate(ctx, t, s).expect("locate");
    let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let a = limit.evaluate_host(ctx, &xf, x.ncols(), &located).expect("evaluate");
    let b = limit.evaluate_host(ctx, &xf, x.ncols(), &located).expect("evaluate again");
    assert!(bits(&a) == bits(&b), "{:?}: two runs differ", limit.path());
    a
}

fn check(ctx: &GpuContext, name: &str, iso: u32, end_cap: EndCap) {
    let d = shape(name);
    let t = PatchTable::new(SparseRefinement::build(&d.mesh, iso, None).expect("refine"), end_cap).expect("table");
    let x = control(&d);
    let s = grid(t.refinement().num_ptex_faces(), 5);
    let mut results = Vec::new();
    let mut limits = vec![
        GpuLimit::with_path(ctx, &t, PointPath::Composed).expect("composed"),
        GpuLimit::with_path(ctx, &t, PointPath::PerLevel).expect("per level"),
        GpuLimit::with_path(ctx, &t, PointPath::PerTile).expect("per tile"),
        // Tiles of a few rows: many tiles, many seams computed twice.
        GpuLimit::with_tile_rows(ctx, &t, 16).expect("small tiles"),
    ];
    for limit in &mut limits {
        let v = run(ctx, limit, &t, &x, &s);
        let (ep, ed) = compare(name, &v, &t, &x, &s, diagonal(&x));
        eprintln!(
            "{name} iso {iso} {end_cap:?} {:?}: rows {} nnz {}: positions {ep:.1e}, derivatives {ed:.1e} of the diagonal",
            limit.path(),
            limit.rows_computed(),
            limit.nnz()
        );
        assert!(ep <= 1e-5 && ed <= 1e-5, "{name} {:?}: {ep:e} {ed:e}", limit.path());
        results.push(v);
    }
    // The same rows from the same inputs in the same order: tiles of any
    // size give the level-by-level points, up to the compiler's contraction
    // of the two kernels' multiply-adds.
    for v in &results[2..] {
        for (a, b) in bits(&results[1]).iter().zip(bits(v)) {
            let (a, b) = (f32::from_bits(*a), f32::from_bits(b));
            assert!(
                (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
                "{name}: per level {a}, per tile {b}"
            );
        }
    }
    let small = &limits[3];
    assert!(small.rows_computed() >= limits[2].rows_computed(), "{name}: smaller tiles compute no fewer rows");
}

#[test]
fn refined_points_give_the_cpu_limit_on_non_quads() {
    let Some(ctx) = context_or_skip() else { return };
    check(ctx, "catmark_pyramid", 3, EndCap::GregoryBasis);
}

#[test]
fn refined_points_give_the_cpu_limit_with_both_end_caps() {
    let Some(ctx) = context_or_skip() else { return };
    check(ctx, "catmark_gregory_test2", 2, EndCap::GregoryBasis);
    check(ctx, "catmark_gregory_test2", 2, EndCap::BSplineBasis);
}

#[test]
fn refined_points_give_the_cpu_limit_with_holes_and_creases() {
    let Some(ctx) = context_or_skip() else { return };
    check(ctx, "catmark_hole_test1", 2, EndCap::GregoryBasis);
    check(ctx, "catmark_cube_creases2", 3, EndCap::GregoryBasis);
}

/// Faces that use a vertex twice: the levels keep the halves of each
/// degenerate edge apart, and every path refines the points they need.
#[test]
fn refined_points_give_the_cpu_limit_with_degenerate_edges() {
    let Some(ctx) = context_or_skip() else { return };
    check(ctx, "catmark_nonman_edges", 3, EndCap::GregoryBasis);
}

/// A regular torus has every patch on control points: the refinement
/// paths compute nothing (no tile, no level rows) and still give the limit.
#[test]
fn regular_meshes_need_no_refined_points() {
    let Some(ctx) = context_or_skip() else { return };
    let d = shape("catmark_torus");
    let t = PatchTable::new(SparseRefinement::build(&d.mesh, 3, None).expect("refine"), EndCap::GregoryBasis)
        .expect("table");
    assert_eq!(t.num_points(), d.mesh.num_vertices(), "every point is a control point");
    let x = control(&d);
    let s = grid(t.refinement().num_ptex_faces(), 4);
    for path in [PointPath::PerLevel, PointPath::PerTile] {
        let mut limit = GpuLimit::with_path(ctx, &t, path).expect("upload");
        assert_eq!(limit.rows_computed(), 0, "{path:?}");
        let v = run(ctx, &mut limit, &t, &x, &s);
        let (ep, ed) = compare("catmark_torus", &v, &t, &x, &s, diagonal(&x));
        assert!(ep <= 1e-5 && ed <= 1e-5, "{path:?}: {ep:e} {ed:e}");
    }
}

/// Far from the origin, absolute `f32` points lose the derivatives of deep
/// patches (the coordinates' rounding, magnified by `2^depth`); the
/// refinement paths keep points as differences from nearby control points
/// and stay within 1e-5 of the largest derivative (the bound) of
/// the `f64` limit of the same (`f32`) control points.
#[test]
fn anchored_points_keep_derivatives_far_from_the_origin() {
    let Some(ctx) = context_or_skip() else { return };
    let d = shape("catmark_gregory_test2");
    let t = PatchTable::new(SparseRefinement::build(&d.mesh, 4, None).expect("refine"), EndCap::GregoryBasis)
        .expect("table");
    let mut x = control(&d);
    let scale = diagonal(&x);
    for (c, offset) in [300.0, -200.0, 500.0].into_iter().enumerate() {
        x.column_mut(c).mapv_inplace(|v| v + offset * scale);
    }
    // The reference evaluates the device's own inputs (the control points
    // rounded to f32) in f64: what is left is the device's arithmetic.
    x.mapv_inplace(|v| f64::from(v as f32));
    let s = grid(t.refinement().num_ptex_faces(), 5);
    let cpu = t.evaluate(x.view(), &s, Par::Rayon).expect("cpu");
    let largest = cpu.du.iter().chain(cpu.dv.iter()).filter(|v| v.is_finite()).fold(0f64, |m, v| m.max(v.abs()));
    let mut errors = Vec::new();
    for path in [PointPath::Composed, PointPath::PerLevel, PointPath::PerTile] {
        let mut limit = GpuLimit::with_path(ctx, &t, path).expect("upload");
        let v = run(ctx, &mut limit, &t, &x, &s);
        let worst = |w: &Array2<f64>, g: &[f32]| {
            w.iter().zip(g).filter(|(a, _)| a.is_finite()).fold(0f64, |m, (a, b)| m.max((a - f64::from(*b)).abs()))
        };
        let e = worst(&cpu.du, &v.du).max(worst(&cpu.dv, &v.dv)) / largest;
        eprintln!("{path:?}: derivatives {e:.1e} of the largest");
        errors.push(e);
    }
    assert!(errors[1] <= 1e-5 && errors[2] <= 1e-5, "anchored paths: {errors:?}");
    // And the composed matrix's absolute points do not (this is what the
    // anchors are for; if it held, the test would not show it).
    assert!(errors[0] > 1e-4, "composed: {errors:?}");
}
