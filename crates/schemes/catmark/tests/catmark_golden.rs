//! Catmull-Clark (SLAK, LAK, edge-friend and halfedge paths) against every OpenSubdiv golden in
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
            let pos = eval(&plan, d.positions(), Par::Rayon).unwrap();
            let c = common::compare(plan.refined(case.level, Par::Rayon).unwrap(), pos.view(), &golden, 1e-6)?;
            // f32: within 1e-5 of the bounding-box diagonal.
            let pos32 = eval(&plan, d.positions().mapv(|x| x as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
            common::compare(plan.refined(case.level, Par::Rayon).unwrap(), pos32.view(), &golden, 1e-5)
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

/// The halfedge path (`new()`: the kernels for non-manifold shapes) on
/// every golden.
#[test]
fn halfedge_matches_the_opensubdiv_goldens() {
    run("halfedge", &subla_catmark::CatmarkHalfedge::new());
}

/// The halfedge form itself serves every manifold golden shape.
#[test]
fn halfedge_form_serves_every_manifold_golden() {
    let mut served = 0;
    for case in &cases() {
        let d = input(case);
        let plan = subla_catmark::CatmarkHalfedge::new().build(&d.mesh, case.level, Par::Rayon).unwrap();
        let manifold = d.mesh.topology().check_manifold().is_ok();
        assert_eq!(plan.kernels_because().is_none(), manifold, "{}", case.file);
        served += usize::from(manifold);
    }
    assert!(served > 100, "{served}");
}

#[test]
fn lak_matches_the_opensubdiv_goldens() {
    run("lak", &subla_catmark::CatmarkLak);
}

/// The edge-friend path on every golden it can hold: the shapes it
/// refuses are exactly those with isolated vertices or non-manifold
/// topology, each with its typed error.
#[test]
fn edge_friend_matches_the_opensubdiv_goldens() {
    use subla_scheme::SchemeError;
    let refiner = subla_catmark::CatmarkEdgeFriend::strict();
    let mut refused = Vec::new();
    let mut failures = Vec::new();
    let mut worst = 0f64;
    let all = cases();
    for case in &all {
        let d = input(case);
        let plan = match refiner.build(&d.mesh, case.level, Par::Rayon) {
            Ok(p) => p,
            Err(e @ (SchemeError::Unsupported { .. } | SchemeError::NotManifold { .. })) => {
                let t = d.mesh.topology();
                let why = !t.is_manifold() || t.vertex_tags().iter().any(|&g| g & 4 != 0);
                assert!(why, "{}: refused without an isolated vertex or non-manifold part: {e}", case.file);
                refused.push(case.file.clone());
                continue;
            }
            Err(e) => panic!("{}: {e}", case.file),
        };
        let golden = common::read(&common::data().join("golden").join(&case.file));
        let pos = eval(&plan, d.positions(), Par::Rayon).unwrap();
        let mesh = plan.refined(case.level, Par::Rayon).unwrap();
        match common::compare(mesh, pos.view(), &golden, 1e-6) {
            Ok(c) => worst = worst.max(c.max_rel),
            Err(e) => failures.push(format!("{}: {e}", case.file)),
        }
        let pos32 = eval(&plan, d.positions().mapv(|x| x as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
        if let Err(e) = common::compare(mesh, pos32.view(), &golden, 1e-5) {
            failures.push(format!("{} f32: {e}", case.file));
        }
    }
    eprintln!(
        "edge-friend: {} goldens, {} refused (isolated vertices, non-manifold), worst relative error {worst:e}",
        all.len(),
        refused.len()
    );
    assert!(failures.is_empty(), "{} of {} goldens fail:\n{}", failures.len(), all.len(), failures.join("\n"));
    assert!(worst < 1e-12, "worst relative error {worst:e}");
    assert!(refused.len() * 4 < all.len(), "most shapes are held: refused {refused:?}");
}

/// The refinement matrices on every golden shape: `R P₀` (chain and
/// composed, through the padded evaluator) equals the level-by-level eval,
/// and every row sums to 1.
#[test]
fn refinement_matrices_equal_eval_on_every_golden_shape() {
    use subla_scheme::refinement::{Budget, Evaluation, Refinement};
    let mut worst = 0f64;
    let all = cases();
    for case in &all {
        let d = input(case);
        let plan = CatmarkSlak.build(&d.mesh, case.level, Par::Rayon).unwrap();
        let want = eval(&plan, d.positions(), Par::Rayon).unwrap();
        let scale = want.iter().fold(1f64, |m, v| m.max(v.abs()));
        let mut r = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon).unwrap();
        for m in r.levels() {
            for i in 0..m.nrows() {
                let sum: f64 = m.as_ref().slice(i).1.iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "{}: a row sums to {sum}", case.file);
            }
        }
        for how in [Evaluation::Chain, Evaluation::Composed] {
            let ev = r.evaluator::<f64>(how, 3, Budget::UNLIMITED, Par::Rayon).unwrap();
            let mut got = ndarray::Array2::zeros(want.dim());
            ev.apply(d.positions(), got.view_mut(), Par::Rayon);
            let diff = got.iter().zip(want.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff <= 1e-12 * scale, "{} {how:?}: R P0 and eval differ by {diff}", case.file);
            worst = worst.max(diff / scale);
        }
    }
    eprintln!("refinement matrices: {} shapes, worst relative difference {worst:e}", all.len());
}

/// OpenSubdiv's limit positions (`*.L2.limit.obj`, same vertex order as the
/// level-2 golden): our limit operator applied to our level-2 positions,
/// matched to the golden's vertices through the level-2 comparison.
#[test]
fn limit_positions_match_the_opensubdiv_goldens() {
    use subla_algebra::spmv::spmv_csr;
    let manifest = std::fs::read_to_string(common::data().join("golden/MANIFEST.tsv")).unwrap();
    let mut n = 0;
    let mut worst = 0f64;
    let mut failures = Vec::new();
    for l in manifest.lines().skip(1) {
        let c: Vec<&str> = l.split('\t').collect();
        if c[2] != "catmark" || c[4] != "limit" {
            continue;
        }
        let case = Case {
            file: c[0].replace(".limit.obj", ".obj"),
            source: c[1].trim_start_matches("shared/").to_string(),
            level: c[3].parse().unwrap(),
            left_handed: c[5].contains("left_handed=true"),
        };
        n += 1;
        let d = input(&case);
        let golden_level = common::read(&common::data().join("golden").join(&case.file));
        let g = common::read_points(&common::data().join("golden").join(c[0]));
        let plan = CatmarkSlak.build(&d.mesh, case.level, Par::Rayon).unwrap();
        let pos = eval(&plan, d.positions(), Par::Rayon).unwrap();
        let cmp = match common::compare(plan.refined(case.level, Par::Rayon).unwrap(), pos.view(), &golden_level, 1e-6)
        {
            Ok(cmp) => cmp,
            Err(e) => {
                failures.push(format!("{}: level {}: {e}", c[0], case.level));
                continue;
            }
        };
        let lim = plan.limit(Par::Rayon).unwrap();
        let ours = spmv_csr(lim.as_ref(), pos.view(), |w: &f64, _, _| *w, Par::Rayon);
        assert_eq!(g.nrows(), ours.nrows(), "{}: vertex count", c[0]);
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for r in g.rows() {
            for k in 0..3 {
                lo[k] = lo[k].min(r[k]);
                hi[k] = hi[k].max(r[k]);
            }
        }
        let diag = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt().max(1e-300);
        let mut max_d = 0f64;
        for (i, &j) in cmp.map.iter().enumerate() {
            let dd = (0..3).map(|k| (ours[(i, k)] - g[(j as usize, k)]).powi(2)).sum::<f64>().sqrt();
            max_d = max_d.max(dd);
        }
        if max_d > 1e-6 * diag {
            failures.push(format!("{}: limit positions differ by {:e} of the diagonal", c[0], max_d / diag));
        }
        worst = worst.max(max_d / diag);
    }
    eprintln!("limit: {n} goldens, worst relative error {worst:e}");
    assert!(n > 0, "no limit goldens found");
    assert!(failures.is_empty(), "{} of {n} limit goldens fail:\n{}", failures.len(), failures.join("\n"));
}

/// The matrices leave subla intact: through sprs, nalgebra-sparse and
/// Matrix Market text, on a shape with creases, boundaries and corners.
#[test]
fn exported_matrices_round_trip() {
    use subla_algebra::CsrMat;
    use subla_scheme::refinement::{Budget, Refinement};
    for shape in
        ["meshes/osd/catmark_chaikin2.obj", "meshes/osd/catmark_edgecorner.obj", "meshes/osd/catmark_hole_test1.obj"]
    {
        let d = common::read(&common::data().join(shape));
        let plan = CatmarkSlak.build(&d.mesh, 2, Par::Rayon).unwrap();
        let mut r = Refinement::chain(&plan, Budget::default(), Par::Rayon).unwrap();
        let mut all: Vec<CsrMat<f64>> = r.levels().to_vec();
        all.push(r.compose(Budget::default(), Par::Rayon).unwrap().clone());
        all.push(plan.limit(Par::Rayon).unwrap());
        for m in &all {
            let back = CsrMat::try_from_sprs(&m.to_sprs()).unwrap();
            assert_eq!(&back, m, "{shape}: sprs round trip");
            let na = nalgebra_sparse::CsrMatrix::from(m);
            assert_eq!(&CsrMat::try_from(&na).unwrap(), m, "{shape}: nalgebra-sparse round trip");
            let mut text = Vec::new();
            subla_algebra::mtx::write_matrix_market(m.as_ref(), &mut text).unwrap();
            let read = subla_algebra::mtx::read_matrix_market(&text[..]).unwrap();
            assert_eq!(read.ptr(), m.ptr(), "{shape}: Matrix Market pattern");
            assert_eq!(read.indices(), m.indices(), "{shape}: Matrix Market pattern");
            assert!(
                read.values().iter().zip(m.values()).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{shape}: Matrix Market values"
            );
        }
    }
}
