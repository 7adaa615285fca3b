//! Catmull-Clark (SLAK path) against every OpenSubdiv golden in
//! `data/golden/catmark/`, with the options the MANIFEST records.

mod common;

use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_mesh::MeshData;
use subla_scheme::{Plan, Refiner, eval};

struct Case {
    file: String,
    source: String,
    level: u32,
    left_handed: bool,
}

fn cases() -> Vec<Case> {
    let manifest = std::fs::read_to_string(common::data().join("golden/MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[2] == "catmark" && c[4] == "uniform").then(|| Case {
                file: c[0].to_string(),
                source: c[1].trim_start_matches("shared/").to_string(),
                level: c[3].parse().unwrap(),
                left_handed: c[5].contains("left_handed=true"),
            })
        })
        .collect()
}

fn input(case: &Case) -> MeshData {
    let mut d = common::read(&common::data().join(&case.source));
    if case.left_handed {
        d.mesh = d.mesh.reversed_winding().unwrap();
    }
    d
}

/// Goldens a path cannot match yet, with the reason. The test checks that
/// they still fail (so a fix is noticed) and that everything else passes.
fn known_failure(path: &str, file: &str) -> Option<&'static str> {
    let lak_nonman =
        file.contains("catmark_nonman_") && !file.contains("nonman_verts") && !file.contains("nonman_bareverts");
    if path == "lak" && (lak_nonman || file.contains("/catmark_fan.")) {
        return Some(
            "LAK: the mesh matrix holds no face that repeats a vertex, and F/T need each directed edge in one face",
        );
    }
    None
}

fn run<R: Refiner<Input = subla_mesh::Mesh>>(path: &str, refiner: &R) {
    let mut failures = Vec::new();
    let mut unexpected_passes = Vec::new();
    let mut worst = 0f64;
    let all = cases();
    let mut known = 0;
    for case in &all {
        let d = input(case);
        let golden = common::read(&common::data().join("golden").join(&case.file));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let plan = refiner.build(&d.mesh, case.level, Par::Rayon).map_err(|e| e.to_string())?;
            let pos = eval(&plan, d.positions(), Par::Rayon);
            let c = common::compare(plan.refined(case.level).unwrap(), pos.view(), &golden, 1e-6)?;
            // f32: within 1e-5 of the bounding-box diagonal.
            let pos32 = eval(&plan, d.positions().mapv(|x| x as f32).view(), Par::Rayon).mapv(f64::from);
            common::compare(plan.refined(case.level).unwrap(), pos32.view(), &golden, 1e-5)
                .map_err(|e| format!("f32: {e}"))?;
            Ok(c)
        }));
        let outcome = match result {
            Ok(Ok(c)) => Ok(c.max_rel),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("panicked".to_string()),
        };
        match (outcome, known_failure(path, &case.file)) {
            (Ok(rel), None) => worst = worst.max(rel),
            (Ok(_), Some(_)) => unexpected_passes.push(case.file.clone()),
            (Err(e), None) => failures.push(format!("{}: {e}", case.file)),
            (Err(e), Some(_)) => {
                known += 1;
                if std::env::var_os("SUBLA_SHOW_KNOWN").is_some() {
                    eprintln!("known failure {}: {e}", case.file);
                }
            }
        }
    }
    eprintln!(
        "{path}: {} goldens, {known} known failures, worst relative error of the passing ones {worst:e}",
        all.len()
    );
    assert!(failures.is_empty(), "{path}: {} of {} goldens fail:\n{}", failures.len(), all.len(), failures.join("\n"));
    assert!(unexpected_passes.is_empty(), "{path}: now passing, remove from the known failures: {unexpected_passes:?}");
    assert!(worst < 1e-12, "{path}: worst relative error {worst:e}");
}

#[test]
fn slak_matches_the_opensubdiv_goldens() {
    run("slak", &CatmarkSlak);
}

#[test]
fn lak_matches_the_opensubdiv_goldens() {
    run("lak", &subla_catmark::CatmarkLak);
}
