//! One backend-agnostic suite, instantiated for the CPU and the GPU
//! backends: every backend must reproduce every OpenSubdiv Catmull-Clark
//! golden (levels 1–3, faces identical as sets, positions within its
//! precision's tolerance of the bounding-box diagonal), give identical bits
//! on repeated runs, and agree between modeling and static modes. The GPU
//! instance skips when no adapter exists, unless `SUBLA_REQUIRE_GPU=1`.

#[path = "../../catmark/tests/common/mod.rs"]
mod golden;

use ndarray::{Array2, ArrayView2};
use subla_algebra::Par;
use subla_mesh::{Mesh, MeshData};
use subla_scheme::{Plan, Refiner, eval, modeling};

/// A golden case of `data/golden/MANIFEST.tsv`.
struct Case {
    file: String,
    source: String,
    level: u32,
    left_handed: bool,
}

fn cases() -> Vec<Case> {
    let manifest = std::fs::read_to_string(golden::data().join("golden/MANIFEST.tsv")).expect("MANIFEST.tsv");
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() > 5 && c[2] == "catmark" && c[4] == "uniform").then(|| Case {
                file: c[0].to_string(),
                source: c[1].trim_start_matches("shared/").to_string(),
                level: c[3].parse().expect("level"),
                left_handed: c[5].contains("left_handed=true"),
            })
        })
        .collect()
}

fn input(case: &Case) -> MeshData {
    let mut d = golden::read(&golden::data().join(&case.source));
    if case.left_handed {
        d.mesh = d.mesh.reversed_winding().expect("reversed winding");
    }
    d
}

/// Every golden through `refiner`, in `f32` (what every backend offers),
/// within `tol` of the bounding-box diagonal.
fn goldens<R: Refiner<Input = Mesh>>(
    refiner: &R,
    run: impl Fn(&R::Plan, ArrayView2<'_, f32>) -> Array2<f32>,
    tol: f64,
    manifold_only: bool,
) {
    let mut failures = Vec::new();
    let mut refused = 0;
    let mut worst = 0f64;
    let all = cases();
    assert!(!all.is_empty(), "no Catmull-Clark goldens");
    for case in &all {
        let d = input(case);
        let golden_mesh = golden::read(&golden::data().join("golden").join(&case.file));
        let plan = match refiner.build(&d.mesh, case.level, Par::Rayon) {
            Ok(p) => p,
            // Backends that hold manifold meshes only refuse the others
            // with the typed error.
            Err(subla_scheme::SchemeError::NotManifold { .. } | subla_scheme::SchemeError::Unsupported { .. })
                if manifold_only && (!d.mesh.topology().is_manifold() || has_isolated(&d.mesh)) =>
            {
                refused += 1;
                continue;
            }
            Err(e) => {
                failures.push(format!("{}: build: {e}", case.file));
                continue;
            }
        };
        let pos = run(&plan, d.positions().mapv(|x| x as f32).view()).mapv(f64::from);
        match golden::compare(
            plan.refined(case.level, Par::Rayon).expect("refined mesh"),
            pos.view(),
            &golden_mesh,
            tol,
        ) {
            Ok(c) => worst = worst.max(c.max_rel),
            Err(e) => failures.push(format!("{}: {e}", case.file)),
        }
    }
    eprintln!("{}: {} goldens ({refused} refused), worst relative error {worst:e}", refiner.name(), all.len());
    assert!(refused * 4 < all.len(), "{}: {refused} refused", refiner.name());
    assert!(failures.is_empty(), "{}: {} goldens fail:\n{}", refiner.name(), failures.len(), failures.join("\n"));
}

fn has_isolated(m: &Mesh) -> bool {
    (0..m.num_vertices()).any(|v| m.topology().vertex_corners(v).is_empty())
}

/// Same bits on every run, and modeling = static.
fn determinism_and_modes<R: Refiner<Input = Mesh>>(
    refiner: &R,
    run: impl Fn(&R::Plan, ArrayView2<'_, f32>) -> Array2<f32>,
) {
    let d = golden::read(&golden::data().join("meshes/osd/catmark_chaikin2.obj"));
    let x = d.positions().mapv(|v| v as f32);
    let plan = refiner.build(&d.mesh, 2, Par::Rayon).expect("build");
    let a = run(&plan, x.view());
    for _ in 0..3 {
        let b = run(&plan, x.view());
        assert!(a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{}: bits changed", refiner.name());
    }
    let (m, y) = modeling(refiner, &d.mesh, x.view(), 2, Par::Rayon).expect("modeling");
    assert_eq!(
        m.faces(m.levels(), Par::Rayon).unwrap(),
        plan.faces(2, Par::Rayon).unwrap(),
        "{}: modeling and static faces differ",
        refiner.name()
    );
    let diff = y.iter().zip(a.iter()).fold(0f32, |mx, (p, q)| mx.max((p - q).abs()));
    assert!(diff <= 1e-5, "{}: modeling and static differ by {diff}", refiner.name());
}

/// Instantiates the suite for a backend: `$make` gives `Option<refiner>`
/// (`None`: no such backend here, skip), `$run` evaluates a plan on that
/// backend (failing rather than falling back), `$tol` is its tolerance.
macro_rules! backend_suite {
    ($name:ident, $make:expr, $run:expr, $tol:expr) => {
        backend_suite!($name, $make, $run, $tol, false);
    };
    ($name:ident, $make:expr, $run:expr, $tol:expr, $manifold_only:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn matches_every_opensubdiv_golden() {
                if let Some(r) = $make {
                    goldens(&r, $run, $tol, $manifold_only);
                }
            }

            #[test]
            fn same_bits_every_run_and_modeling_equals_static() {
                if let Some(r) = $make {
                    determinism_and_modes(&r, $run);
                }
            }
        }
    };
}

backend_suite!(
    cpu,
    Some(subla_catmark::CatmarkSlak),
    |p: &subla_catmark::CatmarkPlan, x: ArrayView2<'_, f32>| eval(p, x, Par::Rayon).unwrap(),
    1e-5
);
backend_suite!(
    gpu,
    subla_gpu::testing::context_or_skip().map(subla_catmark_gpu::CatmarkGpu::new),
    |p: &subla_catmark_gpu::CatmarkGpuPlan, x: ArrayView2<'_, f32>| p
        .try_eval(x)
        .unwrap_or_else(|e| panic!("GPU eval failed: {e}")),
    1e-5
);
backend_suite!(
    edge_friend_cpu,
    Some(subla_catmark::CatmarkEdgeFriend::strict()),
    |p: &subla_catmark::EdgeFriendPlan, x: ArrayView2<'_, f32>| eval(p, x, Par::Rayon).unwrap(),
    1e-5,
    true
);
backend_suite!(
    halfedge_cpu,
    Some(subla_catmark::CatmarkHalfedge::strict()),
    |p: &subla_catmark::CatmarkHalfedgePlan, x: ArrayView2<'_, f32>| eval(p, x, Par::Rayon).unwrap(),
    1e-5,
    true
);
backend_suite!(
    edge_friend_gpu,
    subla_gpu::testing::context_or_skip().map(subla_catmark_gpu::CatmarkEdgeFriendGpu::new),
    |p: &subla_catmark_gpu::EdgeFriendGpuPlan, x: ArrayView2<'_, f32>| p
        .try_eval(x)
        .unwrap_or_else(|e| panic!("GPU eval failed: {e}")),
    1e-5,
    true
);
