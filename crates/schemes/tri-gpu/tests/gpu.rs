//! Loop and √3 on the GPU against the CPU plans and the goldens: every
//! OpenSubdiv Loop golden, every CGAL Loop golden and every CGAL √3 golden
//! (levels 1–3) evaluated on the device in `f32`, faces identical as sets,
//! positions within 1e-5 of the bounding-box diagonal of both the golden
//! and the CPU plan's eval. Skips without an adapter unless
//! `SUBLA_REQUIRE_GPU=1`.

#[path = "../../catmark/tests/common/mod.rs"]
mod common;

use ndarray::{Array2, ArrayView2, ShapeBuilder};
use std::sync::Arc;
use subla_algebra::Par;
use subla_gpu::{GpuContextOptions, GpuError};
use subla_mesh::{Mesh, MeshData};
use subla_scheme::{FallbackCause, FallbackPolicy, Plan, Refiner, SchemeError, eval, modeling};
use subla_tri_gpu::{LoopGpu, Sqrt3Gpu, TriGpuPlan};

struct Case {
    file: String,
    source: String,
    level: u32,
}

fn cases(scheme: &str, kind: &str) -> Vec<Case> {
    let manifest = std::fs::read_to_string(common::data().join("golden/MANIFEST.tsv")).expect("MANIFEST.tsv");
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() > 4 && c[2] == scheme && c[4] == kind).then(|| Case {
                file: c[0].to_string(),
                source: c[1].trim_start_matches("shared/").to_string(),
                level: c[3].parse().expect("level"),
            })
        })
        .collect()
}

fn diagonal(x: ArrayView2<'_, f64>) -> f64 {
    let mut d2 = 0.0;
    for c in 0..x.ncols() {
        let col = x.column(c);
        let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        d2 += (hi - lo).powi(2);
    }
    d2.sqrt().max(f64::MIN_POSITIVE)
}

/// Largest difference between `a` and `b` relative to `b`'s bounding-box
/// diagonal.
fn rel_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    let diag = diagonal(b);
    a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / diag
}

/// Every golden of `scheme`/`kind` through `refiner` on the device.
fn goldens<P: Plan, R: Refiner<Input = Mesh, Plan = TriGpuPlan<P>>>(refiner: &R, scheme: &str, kind: &str) {
    let all = cases(scheme, kind);
    assert!(!all.is_empty(), "no {scheme}/{kind} goldens");
    let mut failures = Vec::new();
    let (mut worst_golden, mut worst_cpu) = (0f64, 0f64);
    for case in &all {
        let mut d: MeshData = common::read(&common::data().join(&case.source));
        if scheme == "sqrt3" {
            // CGAL ignores every tag; √3 refuses the sharpness it has no
            // rule for, so its goldens are compared on untagged meshes.
            let t = d.mesh.topology();
            let (ne, nv, nf) = (t.num_edges(), t.num_vertices(), t.num_faces());
            d.mesh = d.mesh.retagged(vec![0.0; ne], vec![0.0; nv], vec![false; nf], Default::default()).unwrap();
        }
        let golden = common::read(&common::data().join("golden").join(&case.file));
        let plan = match refiner.build(&d.mesh, case.level, Par::Rayon) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: build: {e}", case.file));
                continue;
            }
        };
        let x32 = d.positions().mapv(|v| v as f32);
        let gpu = match plan.try_eval(x32.view()) {
            Ok(y) => y.mapv(f64::from),
            Err(e) => {
                failures.push(format!("{}: GPU eval: {e}", case.file));
                continue;
            }
        };
        let cpu = eval(plan.cpu(), d.positions(), Par::Rayon).unwrap();
        let rel = rel_diff(gpu.view(), cpu.view());
        worst_cpu = worst_cpu.max(rel);
        if rel > 1e-5 {
            failures.push(format!("{}: GPU differs from the CPU by {rel:e} of the diagonal", case.file));
        }
        let fine = plan.refined(case.level, Par::Rayon).expect("refined mesh");
        match common::compare(fine, gpu.view(), &golden, 1e-5) {
            Ok(c) => worst_golden = worst_golden.max(c.max_rel),
            Err(e) => failures.push(format!("{}: {e}", case.file)),
        }
    }
    eprintln!(
        "{}: {} goldens, worst relative error {worst_golden:e} (golden), {worst_cpu:e} (CPU f64)",
        refiner.name(),
        all.len()
    );
    assert!(failures.is_empty(), "{}: {} goldens fail:\n{}", refiner.name(), failures.len(), failures.join("\n"));
}

fn ctx() -> Option<&'static subla_gpu::GpuContext> {
    subla_gpu::testing::context_or_skip()
}

#[test]
fn loop_matches_the_opensubdiv_goldens() {
    let Some(ctx) = ctx() else { return };
    goldens(&LoopGpu::new(ctx), "loop", "uniform");
}

#[test]
fn loop_matches_the_cgal_goldens() {
    let Some(ctx) = ctx() else { return };
    goldens(&LoopGpu::new(ctx).cgal(), "loop_cgal", "cgal");
}

#[test]
fn sqrt3_matches_the_cgal_goldens() {
    let Some(ctx) = ctx() else { return };
    goldens(&Sqrt3Gpu::new(ctx), "sqrt3", "cgal");
}

/// A mesh of the goldens' inputs by file name.
fn input(name: &str) -> MeshData {
    common::read(&common::data().join("meshes").join(name))
}

/// Same bits on every run, any channel count agrees with the CPU, twice
/// the data gives exactly twice the result through reused frame buffers,
/// and modeling mode equals static mode.
fn contract<P: Plan + 'static, R: Refiner<Input = Mesh, Plan = TriGpuPlan<P>> + Send>(
    refiner: &R,
    mesh: &Mesh,
    levels: u32,
) {
    // Through the registry's type-erased form: the same bits.
    subla_scheme::testing::check_dyn(refiner, mesh, levels);
    let plan = refiner.build(mesh, levels, Par::Rayon).expect("build");
    for d in [1usize, 2, 3, 4, 7] {
        let x = subla_scheme::testing::control_data(plan.input_len(), d, 7 + d as u64).mapv(|v| v as f32);
        let a = plan.try_eval(x.view()).expect("GPU eval");
        let b = plan.try_eval(x.view()).expect("GPU eval");
        assert_eq!(a, b, "{}: d = {d}: two runs differ", refiner.name());
        // Into a caller's array (row-major, then column-major).
        let mut into = Array2::from_elem(a.dim(), f32::NAN);
        plan.try_eval_into(x.view(), into.view_mut()).expect("GPU eval into");
        assert_eq!(into, a, "{}: d = {d}: try_eval_into differs", refiner.name());
        let mut column_major = Array2::from_elem(a.dim().f(), f32::NAN);
        plan.try_eval_into(x.view(), column_major.view_mut()).expect("GPU eval into");
        assert_eq!(column_major, a, "{}: d = {d}: try_eval_into a column-major array differs", refiner.name());
        let twice = plan.try_eval(x.mapv(|v| 2.0 * v).view()).expect("GPU eval");
        assert_eq!(twice, a.mapv(|v| 2.0 * v), "{}: d = {d}: not exactly linear", refiner.name());
        let cpu = eval(plan.cpu(), x.mapv(f64::from).view(), Par::Rayon).unwrap();
        let rel = rel_diff(a.mapv(f64::from).view(), cpu.view());
        assert!(rel < 1e-5, "{}: d = {d}: GPU differs from the CPU by {rel:e}", refiner.name());
    }
    let x = subla_scheme::testing::control_data(plan.input_len(), 3, 1).mapv(|v| v as f32);
    let stat = plan.try_eval(x.view()).expect("GPU eval");
    let (mplan, model) = modeling(refiner, mesh, x.view(), levels, Par::Rayon).expect("modeling");
    assert_eq!(mplan.output_len(), plan.output_len());
    let rel = rel_diff(model.mapv(f64::from).view(), stat.mapv(f64::from).view());
    assert!(rel < 1e-5, "{}: modeling differs from static by {rel:e}", refiner.name());
    let (y, profile) = plan.profile_eval(x.view()).expect("profiled eval");
    assert_eq!(y, stat);
    assert_eq!(profile.kernels.len(), 2 * levels as usize);
    assert!(profile.bytes() > 0);
    if ctx().is_some_and(|c| c.has_timestamps()) {
        assert!(profile.gpu_seconds().is_some());
    }
}

#[test]
fn loop_contract_on_open_and_creased_meshes() {
    let Some(ctx) = ctx() else { return };
    for name in ["osd/loop_cube_creases0.obj", "osd/loop_triangle_edgeonly.obj", "osd/loop_chaikin1.obj"] {
        let m = input(name).mesh;
        contract(&LoopGpu::new(ctx), &m, 3);
        contract(&LoopGpu::new(ctx).cgal(), &m, 2);
    }
}

#[test]
fn sqrt3_contract_with_both_boundary_steps() {
    let Some(ctx) = ctx() else { return };
    // An open fan (boundary on every step) and a closed tetrahedron.
    let fan = Mesh::from_faces(7, &[[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5], [0, 5, 6], [0, 6, 1]]).unwrap();
    let tet = Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
    for m in [&fan, &tet] {
        contract(&Sqrt3Gpu::new(ctx), m, 3);
    }
}

#[test]
fn non_triangles_are_refused() {
    let Some(ctx) = ctx() else { return };
    let quad = Mesh::from_faces(4, &[[0, 1, 2, 3]]).unwrap();
    let not_triangles = |e: SchemeError| matches!(e, SchemeError::NotTriangles { ref source, .. } if matches!(**source, subla_mesh::MeshError::NotTriangle { face: 0, order: 4 }));
    assert!(not_triangles(LoopGpu::new(ctx).build(&quad, 1, Par::Rayon).unwrap_err()));
    assert!(not_triangles(Sqrt3Gpu::new(ctx).build(&quad, 1, Par::Rayon).unwrap_err()));
}

#[test]
fn zero_levels_and_zero_channels() {
    let Some(ctx) = ctx() else { return };
    let tet = Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
    let plan = Sqrt3Gpu::new(ctx).build(&tet, 0, Par::Rayon).unwrap();
    let x = Array2::<f32>::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f32);
    assert_eq!(plan.try_eval(x.view()).unwrap(), x);
    let mut into = Array2::<f32>::zeros((4, 3));
    plan.try_eval_into(x.view(), into.view_mut()).unwrap();
    assert_eq!(into, x);
    let plan = LoopGpu::new(ctx).build(&tet, 2, Par::Rayon).unwrap();
    assert_eq!(plan.try_eval(Array2::<f32>::zeros((4, 0)).view()).unwrap().dim(), (plan.output_len(), 0));
}

#[test]
fn device_limits_are_errors_and_eval_falls_back() {
    // 2 KiB bindings and a 2 × 2 workgroup grid.
    let options = GpuContextOptions::default().max_binding_bytes(2048).max_workgroups_per_dimension(2);
    let Some(small) = subla_gpu::testing::context_with_options_or_skip(options) else { return };
    let small = Arc::new(small);
    let m = input("osd/loop_icosahedron.obj");
    // Level 3 → 4 has 2562 vertices: its arrays are over the binding.
    match LoopGpu::shared(Arc::clone(&small)).build(&m.mesh, 5, Par::Rayon) {
        Err(e) => assert!(matches!(e.device_error::<GpuError>(), Some(GpuError::TooLarge { .. })), "{e}"),
        Ok(p) => panic!("expected a device limit, got a plan of {} levels", p.levels()),
    }
    // One level fits; 64 channels of data do not.
    let plan = Sqrt3Gpu::shared(Arc::clone(&small)).build(&m.mesh, 1, Par::Rayon).expect("build");
    let x = subla_scheme::testing::control_data(plan.input_len(), 64, 3).mapv(|v| v as f32);
    match plan.try_eval(x.view()) {
        Err(GpuError::TooLarge { limit: "max_storage_buffer_binding_size", .. }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // The trait method returns the device's error; allowed to, it falls
    // back to the CPU plan (same bits) and says so.
    let e = eval(&plan, x.view(), Par::Rayon).unwrap_err();
    assert!(matches!(e.device_error::<GpuError>(), Some(GpuError::TooLarge { .. })), "{e}");
    let lenient = Sqrt3Gpu::shared(Arc::clone(&small)).with_fallback(FallbackPolicy::Cpu).build(&m.mesh, 1, Par::Rayon);
    let lenient = lenient.expect("build");
    assert_eq!(eval(&lenient, x.view(), Par::Rayon).unwrap(), eval(plan.cpu(), x.view(), Par::Rayon).unwrap());
    assert!(matches!(lenient.last_fallback().map(|f| f.cause), Some(FallbackCause::Device(_))));
    // f64 is refused by the device, computed by the CPU plan when allowed.
    let x64 = x.mapv(f64::from);
    assert!(matches!(eval(&plan, x64.view(), Par::Rayon), Err(SchemeError::Precision { requested: "f64", .. })));
    assert_eq!(eval(&lenient, x64.view(), Par::Rayon).unwrap(), eval(plan.cpu(), x64.view(), Par::Rayon).unwrap());
    assert_eq!(lenient.last_fallback().map(|f| f.cause), Some(FallbackCause::Precision { requested: "f64" }));
}

#[test]
fn two_dimensional_grids_and_their_limit() {
    let Some(ctx) = ctx() else { return };
    let options = GpuContextOptions::default().max_workgroups_per_dimension(2);
    let Some(capped) = subla_gpu::testing::context_with_options_or_skip(options) else { return };
    let capped = Arc::new(capped);
    let m = input("osd/loop_icosahedron.obj");
    let x = m.positions().mapv(|v| v as f32);
    // Level 2 → 3 has 480 edges: a grid of 2 workgroups, then 2 × 1 ... up
    // to 2 × 2; the 2-D path gives the same bits as the 1-D one.
    let a = LoopGpu::new(ctx).build(&m.mesh, 3, Par::Rayon).unwrap().try_eval(x.view()).unwrap();
    let b = LoopGpu::shared(Arc::clone(&capped)).build(&m.mesh, 3, Par::Rayon).unwrap().try_eval(x.view()).unwrap();
    assert_eq!(a, b);
    // Level 3 → 4 has 1920 edges, 8 workgroups: over a 2 × 2 grid, an
    // error, not a panic, from the trait method too.
    let big = LoopGpu::shared(Arc::clone(&capped)).build(&m.mesh, 4, Par::Rayon).unwrap();
    match big.try_eval(x.view()) {
        Err(GpuError::TooLarge { limit: "max_compute_workgroups_per_dimension", .. }) => {}
        other => panic!("expected TooLarge for the grid, got {other:?}"),
    }
    let e = eval(&big, x.view(), Par::Rayon).unwrap_err();
    assert!(
        matches!(
            e.device_error::<GpuError>(),
            Some(GpuError::TooLarge { limit: "max_compute_workgroups_per_dimension", .. })
        ),
        "{e}"
    );
}
