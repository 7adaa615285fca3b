//! √3 (SLAK and LAK paths) against every CGAL golden in
//! `data/golden/sqrt3/`: `N` steps in one call, positions within 1e-6 of
//! the bounding-box diagonal in f64 (1e-5 in f32), faces identical as
//! oriented cycles after matching vertices by position.

#[path = "../../catmark/tests/common/mod.rs"]
mod common;

use subla_algebra::Par;
use subla_mesh::{Mesh, MeshData};
use subla_scheme::{Plan, Refiner, eval};
use subla_sqrt3::{Sqrt3Halfedge, Sqrt3Lak, Sqrt3Slak};

struct Case {
    file: String,
    source: String,
    level: u32,
}

/// The MANIFEST rows of the √3 goldens.
fn cases() -> Vec<Case> {
    let manifest = std::fs::read_to_string(common::data().join("golden/MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[2] == "sqrt3" && c[4] == "cgal").then(|| Case {
                file: c[0].to_string(),
                source: c[1].trim_start_matches("shared/").to_string(),
                level: c[3].parse().unwrap(),
            })
        })
        .collect()
}

/// Goldens a path cannot match, with the reason. The test checks that they
/// still fail (so a fix is noticed) and that everything else passes.
/// `m` without tags, as CGAL reads it.
fn untagged(m: &Mesh) -> Mesh {
    let t = m.topology();
    let (ne, nv, nf) = (t.num_edges(), t.num_vertices(), t.num_faces());
    m.retagged(vec![0.0; ne], vec![0.0; nv], vec![false; nf], subla_mesh::Options::default()).unwrap()
}

fn known_failure(path: &str, file: &str, mesh: &Mesh) -> Option<&'static str> {
    let _ = (path, file, mesh);
    None
}

fn run<R: Refiner<Input = Mesh>>(path: &str, refiner: &R) {
    let mut failures = Vec::new();
    let mut unexpected_passes = Vec::new();
    let mut worst = 0f64;
    let mut worst_f32 = 0f64;
    let all = cases();
    assert_eq!(all.len(), 71, "sqrt3 goldens in the MANIFEST");
    let mut known = 0;
    for case in &all {
        let mut d: MeshData = common::read(&common::data().join(&case.source));
        // CGAL ignores every tag; √3 refuses sharpness it cannot honour
        // and carries holes, so the input goes without them.
        d.mesh = untagged(&d.mesh);
        let golden = common::read(&common::data().join("golden").join(&case.file));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let plan = refiner.build(&d.mesh, case.level, Par::Rayon).map_err(|e| e.to_string())?;
            let pos = eval(&plan, d.positions(), Par::Rayon).unwrap();
            let fine = plan.refined(case.level, Par::Rayon).map_err(|e| e.to_string())?;
            let c = common::compare(fine, pos.view(), &golden, 1e-6)?;
            let pos32 = eval(&plan, d.positions().mapv(|x| x as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
            let c32 = common::compare(fine, pos32.view(), &golden, 1e-5).map_err(|e| format!("f32: {e}"))?;
            Ok::<_, String>((c.max_rel, c32.max_rel))
        }));
        let outcome = match result {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("panicked".to_string()),
        };
        match (outcome, known_failure(path, &case.file, &d.mesh)) {
            (Ok((rel, rel32)), None) => {
                worst = worst.max(rel);
                worst_f32 = worst_f32.max(rel32);
            }
            (Ok(_), Some(_)) => unexpected_passes.push(case.file.clone()),
            (Err(e), None) => failures.push(format!("{}: {e}", case.file)),
            (Err(e), Some(why)) => {
                known += 1;
                if std::env::var_os("SUBLA_SHOW_KNOWN").is_some() {
                    eprintln!("known failure {} ({why}): {e}", case.file);
                }
            }
        }
    }
    eprintln!(
        "{path}: {} goldens, {known} known failures, worst relative error of the passing ones {worst:e} (f32 {worst_f32:e})",
        all.len()
    );
    assert!(failures.is_empty(), "{path}: {} of {} goldens fail:\n{}", failures.len(), all.len(), failures.join("\n"));
    assert!(unexpected_passes.is_empty(), "{path}: now passing, remove from the known failures: {unexpected_passes:?}");
    assert!(worst < 1e-12, "{path}: worst relative error {worst:e}");
}

#[test]
fn slak_matches_the_cgal_goldens() {
    run("slak", &Sqrt3Slak::new());
}

#[test]
fn halfedge_matches_the_cgal_goldens() {
    run("halfedge", &Sqrt3Halfedge::new());
}

/// The halfedge form itself (not its fallback) serves every golden shape,
/// closed and with a boundary.
#[test]
fn halfedge_form_serves_every_golden() {
    let (mut closed, mut open) = (0, 0);
    for case in cases() {
        let d: MeshData = common::read(&common::data().join(&case.source));
        let plan = Sqrt3Halfedge::new().build(&untagged(&d.mesh), case.level, Par::Rayon).unwrap();
        assert!(plan.kernels_because().is_none(), "{}: {:?}", case.file, plan.kernels_because());
        if d.mesh.topology().is_closed() {
            closed += 1;
        } else {
            open += 1;
        }
    }
    assert!(closed > 0 && open > 0, "{closed} closed, {open} open");
}

#[test]
fn lak_matches_the_cgal_goldens() {
    run("lak", &Sqrt3Lak::new());
}
