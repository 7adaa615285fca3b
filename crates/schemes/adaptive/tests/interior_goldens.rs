//! The limit surface inside the patches against OpenSubdiv C++
//! (`data/golden/limit/interior/`: limit stencils of OpenSubdiv 3.7 at
//! points strictly inside end caps and regular patches). The per-face grids
//! of `limit_goldens.rs` hit only patch corners and edges at isolation 2
//! and 3, where a Gregory patch is fixed by its corner and edge points
//! alone; its face points, the rational blend of their pairs and the basis
//! in between show only here.
//!
//! The goldens' weights are `f32` (OpenSubdiv's limit stencils), so the
//! tolerances are those of `f32` composed over a few levels. Each golden
//! must also tell the two kinds of end cap apart: evaluated with the other
//! kind, some sample must miss it by far more than the tolerance, so that
//! an error inside the end caps of that size cannot pass.

use std::io::Read;
use std::path::{Path, PathBuf};

use ndarray::s;
use subla_adaptive::{EndCap, Limit, PatchTable, Sample, SparseRefinement};
use subla_algebra::Par;
use subla_mesh::Validation;
use subla_mesh::obj::read_obj;

/// Positions: of the bounding-box diagonal of the samples.
const POS_TOL: f64 = 1e-6;
/// Derivatives: of the largest derivative component of the samples.
const DERIV_TOL: f64 = 2e-5;
/// The other kind of end cap must miss some sample by this many
/// tolerances.
const SEPARATION: f64 = 10.0;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

struct Golden {
    patches: usize,
    /// `ptex u v x y z dx/du dy/du dz/du dx/dv dy/dv dz/dv`.
    rows: Vec<[f64; 12]>,
}

fn read_golden(path: &Path) -> Golden {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("golden")).read_to_string(&mut text).expect("gzip");
    let header = text.lines().next().expect("header");
    let patches =
        header.split_whitespace().find_map(|w| w.strip_prefix("patches=")).expect("patches").parse().expect("patches");
    let rows = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut r = [f64::NAN; 12];
            let mut n = 0;
            for (x, s) in r.iter_mut().zip(l.split_whitespace()) {
                *x = s.parse().expect("number");
                n += 1;
            }
            assert_eq!(n, 12, "{}: a line of {n} numbers", path.display());
            r
        })
        .collect();
    Golden { patches, rows }
}

/// Largest position difference (of `diag`) and derivative difference (of
/// `dmax`) between `limit` and the golden rows, with the row of the
/// largest position difference.
fn errors(limit: &Limit<f64>, rows: &[[f64; 12]], diag: f64, dmax: f64) -> (f64, f64, usize) {
    let (mut ep, mut ed, mut at) = (0f64, 0f64, 0);
    for (i, r) in rows.iter().enumerate() {
        let p = (0..3).map(|c| (limit.position[[i, c]] - r[3 + c]).abs()).fold(0.0, f64::max) / diag;
        let d = (0..3)
            .map(|c| (limit.du[[i, c]] - r[6 + c]).abs().max((limit.dv[[i, c]] - r[9 + c]).abs()))
            .fold(0.0, f64::max)
            / dmax;
        if p > ep {
            (ep, at) = (p, i);
        }
        ed = ed.max(d);
    }
    (ep, ed, at)
}

/// Checks one golden; returns a description of the failure.
fn check(file: &Path) -> Result<String, String> {
    let name = file.file_name().and_then(|n| n.to_str()).expect("name");
    let mut parts = name.split('.');
    let shape = parts.next().expect("shape");
    let iso: u32 = parts.next().and_then(|p| p.strip_prefix("iso")).and_then(|p| p.parse().ok()).expect("iso");
    let (end_cap, other) = match parts.next() {
        Some("gregory") => (EndCap::GregoryBasis, EndCap::BSplineBasis),
        Some("bspline") => (EndCap::BSplineBasis, EndCap::GregoryBasis),
        e => panic!("{name}: end cap {e:?}"),
    };
    let g = read_golden(file);
    let d = read_obj(data().join(format!("meshes/osd/{shape}.obj")), Validation::OpenSubdiv).expect("mesh");
    let mesh = if d.left_handed { d.mesh.reversed_winding().expect("reversed") } else { d.mesh.clone() };
    let refinement = SparseRefinement::build(&mesh, iso, None).map_err(|e| e.to_string())?;
    let samples: Vec<Sample> = g.rows.iter().map(|r| Sample { ptex: r[0] as u32, u: r[1], v: r[2] }).collect();
    let ctrl = d.vertices.slice(s![.., ..3]);

    let (mut lo, mut hi, mut dmax) = ([f64::MAX; 3], [f64::MIN; 3], 0f64);
    for r in &g.rows {
        for c in 0..3 {
            lo[c] = lo[c].min(r[3 + c]);
            hi[c] = hi[c].max(r[3 + c]);
        }
        dmax = r[6..12].iter().fold(dmax, |m, x| m.max(x.abs()));
    }
    let diag = (0..3).map(|c| (hi[c] - lo[c]).powi(2)).sum::<f64>().sqrt();

    let table = PatchTable::new(refinement.clone(), end_cap).map_err(|e| e.to_string())?;
    if table.patches().len() != g.patches {
        return Err(format!("{} patches, OpenSubdiv {}", table.patches().len(), g.patches));
    }
    let limit = table.evaluate(ctrl, &samples, Par::Seq).map_err(|e| e.to_string())?;
    if !limit.missing.is_empty() {
        return Err(format!("{} samples on no patch", limit.missing.len()));
    }
    let (ep, ed, at) = errors(&limit, &g.rows, diag, dmax);
    if ep > POS_TOL || ed > DERIV_TOL {
        let r = &g.rows[at];
        let p = table.find(r[0] as u32, r[1], r[2]).map_err(|e| e.to_string())?;
        return Err(format!(
            "position off by {ep:.2e} of the diagonal (largest at ptex {} ({}, {}), a {:?} patch), derivatives by \
             {ed:.2e}",
            r[0],
            r[1],
            r[2],
            table.patches()[p].ty
        ));
    }

    // The other end caps must be told apart (on shapes with end caps).
    let end_caps = table.counts().end_caps;
    let mut line = format!("{name}: position {ep:.1e}, derivatives {ed:.1e}");
    if end_caps > 0 {
        let wrong = PatchTable::new(refinement, other)
            .map_err(|e| e.to_string())?
            .evaluate(ctrl, &samples, Par::Seq)
            .map_err(|e| e.to_string())?;
        let (wp, wd, _) = errors(&wrong, &g.rows, diag, dmax);
        if wp < SEPARATION * POS_TOL && wd < SEPARATION * DERIV_TOL {
            return Err(format!(
                "does not tell the end caps apart: {other:?} end caps are off by only {wp:.1e} (positions), {wd:.1e} \
                 (derivatives)"
            ));
        }
        line += &format!("; {other:?} end caps instead: position {wp:.1e}, derivatives {wd:.1e}");
    }
    Ok(line)
}

#[test]
fn catmark_limit_inside_patches_matches_opensubdiv() {
    let dir = data().join("golden/limit/interior");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("interior goldens")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|s| s.ends_with(".txt.gz")))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "expected the interior limit goldens in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).expect("name").to_owned();
        match check(f) {
            Ok(line) => eprintln!("{line}"),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} of {} goldens fail:\n{}", failures.len(), files.len(), failures.join("\n"));
}
