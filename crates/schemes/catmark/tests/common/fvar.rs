//! Face-varying goldens (`data/golden/fvar/`): the cases, the inputs with
//! their texture coordinates, and the comparison of a refined channel with
//! a golden's `vt` face by face.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::io::Read;

use ndarray::{Array2, ArrayView2};
use subla_mesh::{FVarLinearInterpolation, FaceVarying, Mesh, MeshData, Validation};

use crate::common::{compare, data, read};

pub struct Case {
    pub file: String,
    pub source: String,
    pub scheme: String,
    pub mode: FVarLinearInterpolation,
}

pub fn mode_of(name: &str) -> FVarLinearInterpolation {
    use FVarLinearInterpolation as M;
    match name {
        "none" => M::None,
        "corners-only" => M::CornersOnly,
        "corners-plus1" => M::CornersPlus1,
        "corners-plus2" => M::CornersPlus2,
        "boundaries" => M::Boundaries,
        "all" => M::All,
        other => panic!("unknown mode {other}"),
    }
}

pub fn cases() -> Vec<Case> {
    let manifest = std::fs::read_to_string(data().join("golden/fvar/MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let scheme = c[2].to_string();
            let mode = c[3].split(';').find_map(|o| o.strip_prefix("fvar=")).map(mode_of)?;
            Some(Case { file: c[0].to_string(), source: c[1].to_string(), scheme, mode })
        })
        .collect()
}

pub fn golden(file: &str) -> MeshData {
    let path = data().join("golden").join(format!("{file}.gz"));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_end(&mut bytes).unwrap();
    subla_mesh::obj::parse_obj(&bytes, Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The input with its winding reversed where the file says it is
/// left-handed, face-varying indices following their corners.
pub fn input(case: &Case) -> (MeshData, FaceVarying) {
    let mut d = read(&data().join("meshes").join(&case.source));
    let mut fv = d.texcoords.clone().expect("the shape has texture coordinates");
    if d.left_handed {
        let t = d.mesh.topology();
        let mut idx = Vec::with_capacity(fv.indices.len());
        for f in 0..t.num_faces() {
            let r = t.face_ptr()[f] as usize..t.face_ptr()[f + 1] as usize;
            let x = &fv.indices[r];
            idx.push(x[0]);
            idx.extend(x[1..].iter().rev());
        }
        fv.indices = idx;
        d.mesh = d.mesh.reversed_winding().unwrap();
    }
    (d, fv)
}

/// Compares a refined channel (`values`, `indices` over `mesh`'s corners,
/// positions `pos`) with golden `file`: positions matched as
/// [`compare`] does, then every non-hole face's corners' values within
/// 1e-6 of the golden values' bounding-box diagonal, and the seams: two
/// corners share a value in the golden exactly where they share one in
/// ours. Returns the worst value difference over the diagonal.
pub fn compare_channel(
    mesh: &Mesh,
    pos: ArrayView2<'_, f64>,
    values: &Array2<f64>,
    ours: &[u32],
    file: &str,
) -> Result<f64, String> {
    let g = golden(file);
    let cmp = compare(mesh, pos, &g, 1e-6)?;
    let gfv = g.texcoords.as_ref().ok_or("golden has no vt")?;
    // Golden faces by their vertices, rotated to start at the smallest.
    let gt = g.mesh.topology();
    let mut by_verts: HashMap<Vec<u32>, Vec<(usize, usize)>> = HashMap::new();
    for f in 0..gt.num_faces() {
        let vs = gt.face(f);
        let k = (0..vs.len()).min_by_key(|&i| vs[i]).unwrap();
        let key: Vec<u32> = vs[k..].iter().chain(&vs[..k]).copied().collect();
        by_verts.entry(key).or_default().push((f, k));
    }
    let gv = &gfv.values;
    let d = gv.ncols();
    let (mut lo, mut hi) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
    for r in gv.rows() {
        for k in 0..d {
            lo[k] = lo[k].min(r[k]);
            hi[k] = hi[k].max(r[k]);
        }
    }
    let diag = (0..d).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt().max(1e-300);
    let t = mesh.topology();
    let mut worst = 0f64;
    let mut ours_to_gold: HashMap<u32, u32> = HashMap::new();
    let mut gold_to_ours: HashMap<u32, u32> = HashMap::new();
    for f in 0..t.num_faces() {
        if mesh.holes()[f] {
            continue;
        }
        let vs: Vec<u32> = t.face(f).iter().map(|&v| cmp.map[v as usize]).collect();
        let k = (0..vs.len()).min_by_key(|&i| vs[i]).unwrap();
        let key: Vec<u32> = vs[k..].iter().chain(&vs[..k]).copied().collect();
        let cands = by_verts.get(&key).ok_or_else(|| format!("our face {f} ({vs:?}) has no golden face"))?;
        // Of coincident faces (back to back), take the closest in values.
        let mut best: Option<(f64, usize)> = None;
        for &(gf, gk) in cands {
            let mut err = 0f64;
            for j in 0..vs.len() {
                let oc = t.face_ptr()[f] as usize + (k + j) % vs.len();
                let gc = gt.face_ptr()[gf] as usize + (gk + j) % vs.len();
                let (a, b) = (ours[oc] as usize, gfv.indices[gc] as usize);
                let dist = (0..d).map(|c| (values[(a, c)] - gv[(b, c)]).powi(2)).sum::<f64>().sqrt();
                err = err.max(dist / diag);
            }
            if best.is_none_or(|(e, _)| err < e) {
                best = Some((err, gf));
            }
        }
        let (err, gf) = best.expect("at least one candidate");
        if err > 1e-6 {
            return Err(format!("face {f}: values differ by {err:e} of the diagonal"));
        }
        worst = worst.max(err);
        // Seams: corners sharing a value in the golden share one in ours,
        // and the other way round.
        let gk = cands.iter().find(|&&(g, _)| g == gf).map(|&(_, gk)| gk).unwrap_or(0);
        for j in 0..vs.len() {
            let oc = t.face_ptr()[f] as usize + (k + j) % vs.len();
            let gc = gt.face_ptr()[gf] as usize + (gk + j) % vs.len();
            let (a, b) = (ours[oc], gfv.indices[gc]);
            if *ours_to_gold.entry(a).or_insert(b) != b || *gold_to_ours.entry(b).or_insert(a) != a {
                return Err(format!("face {f}: value {a} is golden value {b}, seams differ"));
            }
        }
    }
    Ok(worst)
}

/// Runs `check` on every case of `cases`: each must pass, except those
/// `known_failure` lists with a reason, which must still fail (so that a
/// fix is noticed). Panics with every failure.
pub fn run_cases(
    cases: &[Case],
    check: impl Fn(&Case) -> Result<f64, String>,
    known_failure: impl Fn(&str) -> Option<&'static str>,
) {
    let mut failures = Vec::new();
    let mut worst = 0f64;
    for case in cases {
        match (check(case), known_failure(&case.file)) {
            (Ok(w), None) => worst = worst.max(w),
            (Ok(_), Some(why)) => failures.push(format!("{}: passes but is listed as failing ({why})", case.file)),
            (Err(e), None) => failures.push(format!("{}: {e}", case.file)),
            (Err(_), Some(_)) => {}
        }
    }
    eprintln!("{} cases, worst value difference {worst:e} of the diagonal", cases.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// The largest difference, over the values' bounding-box diagonal, between
/// each finest corner's value in `want` and in the refinement by `plan` (a
/// vertex plan of `levels` levels over a tagged value mesh) of `values`'
/// rows `source` (the value mesh's control values), corner by corner.
pub fn value_mesh_difference(
    plan: &dyn subla_scheme::Plan,
    levels: u32,
    source: &[u32],
    values: &ndarray::Array2<f64>,
    want: &FaceVarying,
) -> f64 {
    let rows: Vec<usize> = source.iter().map(|&r| r as usize).collect();
    let x = values.select(ndarray::Axis(0), &rows);
    let out = subla_scheme::eval(plan, x.view(), subla_algebra::Par::Seq).unwrap();
    let faces = plan.refined(levels, subla_algebra::Par::Seq).unwrap().topology().face_verts().to_vec();
    assert_eq!(faces.len(), want.indices.len(), "the value mesh's faces are the channel's");
    let lo = values.fold_axis(ndarray::Axis(0), f64::INFINITY, |a, &b| a.min(b));
    let hi = values.fold_axis(ndarray::Axis(0), f64::NEG_INFINITY, |a, &b| a.max(b));
    let diag = (&hi - &lo).mapv(|x| x * x).sum().sqrt().max(1e-300);
    let worst = faces
        .iter()
        .zip(&want.indices)
        .flat_map(|(&v, &w)| (0..values.ncols()).map(move |k| (v as usize, w as usize, k)))
        .map(|(v, w, k)| (out[(v, k)] - want.values[(w, k)]).abs())
        .fold(0.0, f64::max);
    worst / diag
}
