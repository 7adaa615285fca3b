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

#[test]
fn slak_matches_the_opensubdiv_goldens() {
    let mut failures = Vec::new();
    let mut worst = 0f64;
    let all = cases();
    for case in &all {
        let d = input(case);
        let golden = common::read(&common::data().join("golden").join(&case.file));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let plan = CatmarkSlak.build(&d.mesh, case.level, Par::Rayon).map_err(|e| e.to_string())?;
            let pos = eval(&plan, d.positions(), Par::Rayon);
            common::compare(plan.refined(case.level).unwrap(), pos.view(), &golden, 1e-6)
        }));
        match result {
            Ok(Ok(c)) => worst = worst.max(c.max_rel),
            Ok(Err(e)) => failures.push(format!("{}: {e}", case.file)),
            Err(_) => failures.push(format!("{}: panicked", case.file)),
        }
    }
    eprintln!("{} goldens, {} failing, worst relative error of the passing ones {worst:e}", all.len(), failures.len());
    assert!(failures.is_empty(), "{} of {} goldens fail:\n{}", failures.len(), all.len(), failures.join("\n"));
}
