//! The limit surface against OpenSubdiv 3.5's limit goldens, Catmull-Clark
//! and Loop (`data/golden/limit/`: feature-adaptive refinement, a patch table with
//! Gregory-basis or B-spline end caps, evaluated on a grid of every ptex
//! face). Positions within 1e-6 of the bounding-box diagonal, derivatives
//! within 1e-5 of the shape's largest derivative, and the sparse levels'
//! vertex counts and the number of patches equal to OpenSubdiv's.
//!
//! Three large Catmull-Clark goldens (`catmark_bishop`, `catmark_car`,
//! `catmark_pole360`, together 1.7 MB compressed) are not copied into the
//! repository; they were checked the same way from the shared goldens.

use std::io::Read;
use std::path::{Path, PathBuf};

use ndarray::s;
use subla_adaptive::{AdaptiveError, EndCap, PatchTable, Sample, Scheme, SparseRefinement};
use subla_algebra::Par;
use subla_mesh::Validation;
use subla_mesh::obj::read_obj;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

/// Why a golden does not match.
#[derive(Debug)]
enum Failure {
    /// The refinement refused the shape.
    Refused(AdaptiveError),
    /// It was evaluated, and differs as described.
    Differs(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Differs(s)
    }
}

struct Golden {
    header: String,
    counts: Vec<usize>,
    patches: usize,
    rows: Vec<[f64; 12]>,
}

fn read_golden(path: &Path) -> Golden {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("golden")).read_to_string(&mut text).expect("gzip");
    let mut lines = text.lines();
    let header = lines.next().expect("header").to_owned();
    let counts = lines.next().expect("counts").split(':').nth(1).expect("counts").split_whitespace();
    let counts = counts.map(|x| x.parse().expect("count")).collect();
    let patches: usize =
        header.split_whitespace().find_map(|w| w.strip_prefix("patches=")).expect("patches").parse().expect("patches");
    let rows = lines
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut r = [0.0; 12];
            for (x, s) in r.iter_mut().zip(l.split_whitespace()) {
                *x = s.parse().expect("number");
            }
            r
        })
        .collect();
    Golden { header, counts, patches, rows }
}

/// Compares one golden file; returns a description of the first failure.
fn check(file: &Path) -> Result<(), Failure> {
    let name = file.file_name().and_then(|n| n.to_str()).expect("name");
    let mut parts = name.split('.');
    let shape = parts.next().expect("shape");
    let iso: u32 = parts.next().and_then(|p| p.strip_prefix("iso")).and_then(|p| p.parse().ok()).expect("iso");
    let end_cap = if name.contains(".bspline.") { EndCap::BSplineBasis } else { EndCap::GregoryBasis };
    let g = read_golden(file);
    let selected: Option<Vec<u32>> = name.contains(".selected.").then(|| {
        let faces = file.with_file_name(name.trim_end_matches(".txt.gz").to_owned() + ".faces");
        std::fs::read_to_string(faces).expect("faces").lines().filter_map(|l| l.trim().parse().ok()).collect()
    });
    let d = read_obj(data().join(format!("meshes/osd/{shape}.obj")), Validation::OpenSubdiv).expect("mesh");
    let mesh = if d.left_handed { d.mesh.reversed_winding().expect("reversed") } else { d.mesh.clone() };
    let scheme = if shape.starts_with("loop_") { Scheme::Loop } else { Scheme::Catmark };
    let refinement =
        SparseRefinement::build_scheme(scheme, &mesh, iso, selected.as_deref()).map_err(Failure::Refused)?;
    if refinement.vertices_per_level() != g.counts {
        return Err(Failure::Differs(format!(
            "level counts {:?}, OpenSubdiv {:?}",
            refinement.vertices_per_level(),
            g.counts
        )));
    }
    let table = PatchTable::new(refinement, end_cap).map_err(|e| e.to_string())?;
    if table.patches().len() != g.patches {
        return Err(Failure::Differs(format!(
            "{} patches, OpenSubdiv {} ({})",
            table.patches().len(),
            g.patches,
            g.header
        )));
    }
    let samples: Vec<Sample> = g.rows.iter().map(|r| Sample { ptex: r[0] as u32, u: r[1], v: r[2] }).collect();
    let limit = table.evaluate(d.vertices.slice(s![.., ..3]), &samples, Par::Rayon).map_err(|e| e.to_string())?;
    let (mut lo, mut hi, mut dmax) = ([f64::MAX; 3], [f64::MIN; 3], 0f64);
    for r in g.rows.iter().filter(|r| !r[3].is_nan()) {
        for c in 0..3 {
            lo[c] = lo[c].min(r[3 + c]);
            hi[c] = hi[c].max(r[3 + c]);
        }
        dmax = r[6..12].iter().fold(dmax, |m, x| m.max(x.abs()));
    }
    let diag = (0..3).map(|c| (hi[c] - lo[c]).powi(2)).sum::<f64>().sqrt();
    for (i, r) in g.rows.iter().enumerate() {
        let (ptex, u, v) = (r[0], r[1], r[2]);
        if r[3].is_nan() != limit.missing.contains(&i) {
            return Err(Failure::Differs(format!(
                "ptex {ptex} ({u}, {v}): OpenSubdiv has a patch: {}, we: {}",
                !r[3].is_nan(),
                !limit.missing.contains(&i)
            )));
        }
        if r[3].is_nan() {
            continue;
        }
        let got: Vec<f64> = (0..3)
            .map(|c| limit.position[[i, c]])
            .chain((0..3).map(|c| limit.du[[i, c]]))
            .chain((0..3).map(|c| limit.dv[[i, c]]))
            .collect();
        let ep = (0..3).map(|c| (got[c] - r[3 + c]).abs()).fold(0.0, f64::max) / diag;
        let ed = (0..6).map(|c| (got[3 + c] - r[6 + c]).abs()).fold(0.0, f64::max) / dmax;
        if ep > 1e-6 || ed > 1e-5 {
            let p = table.find(ptex as u32, u, v).map_err(|e| e.to_string())?;
            return Err(Failure::Differs(format!(
                "ptex {ptex} ({u}, {v}) on a {:?} patch of level {}: position off by {ep:.2e} of the diagonal, \
                 derivatives by {ed:.2e}",
                table.patches()[p].ty,
                table.patches()[p].level
            )));
        }
    }
    Ok(())
}

/// Checks every golden whose name starts with `prefix`; at least `min` of them.
fn check_all(prefix: &str, min: usize) {
    let dir = data().join("golden/limit");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("goldens")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|s| s.starts_with(prefix) && s.ends_with(".txt.gz"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= min, "expected the {prefix} limit goldens in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).expect("name").to_owned();
        match check(f) {
            Ok(()) => {}
            Err(Failure::Refused(e)) => failures.push(format!("{name}: refused: {e}")),
            Err(Failure::Differs(e)) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} of {} goldens fail:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn every_catmark_limit_golden() {
    check_all("catmark_", 100);
}

#[test]
fn every_loop_limit_golden() {
    check_all("loop_", 50);
}
