//! Comparison of a refined mesh with a golden output: vertices matched by
//! position (OpenSubdiv numbers them differently), faces compared as sets
//! of oriented cyclic sequences.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::path::PathBuf;

use ndarray::ArrayView2;
use subla_mesh::{Mesh, MeshData, Validation};

/// The repository's `data/` folder.
pub fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

/// Reads a golden or input OBJ.
pub fn read(path: &PathBuf) -> MeshData {
    subla_mesh::obj::read_obj(path, Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a comparison found.
#[derive(Debug)]
pub struct Comparison {
    /// Largest distance between matched vertices / bounding-box diagonal.
    pub max_rel: f64,
}

fn canonical(face: &[u32]) -> Vec<u32> {
    let k = (0..face.len()).min_by_key(|&i| face[i]).unwrap_or(0);
    face[k..].iter().chain(&face[..k]).copied().collect()
}

/// Compares `ours` (mesh and positions) with `golden`. Hole faces of `ours`
/// are skipped (goldens omit them).
pub fn compare(mesh: &Mesh, pos: ArrayView2<'_, f64>, golden: &MeshData, tol: f64) -> Result<Comparison, String> {
    let g = golden.positions();
    if pos.nrows() != g.nrows() {
        return Err(format!("vertex count {} vs golden {}", pos.nrows(), g.nrows()));
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for r in g.rows() {
        for k in 0..3 {
            lo[k] = lo[k].min(r[k]);
            hi[k] = hi[k].max(r[k]);
        }
    }
    let diag = ((0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>()).sqrt().max(1e-300);
    let eps = tol * diag;
    // Golden vertices sorted by x for range queries.
    let mut order: Vec<usize> = (0..g.nrows()).collect();
    order.sort_by(|&a, &b| g[(a, 0)].total_cmp(&g[(b, 0)]));
    let xs: Vec<f64> = order.iter().map(|&i| g[(i, 0)]).collect();
    let mut used = vec![false; g.nrows()];
    let mut map = vec![u32::MAX; pos.nrows()];
    let mut max_d = 0f64;
    for i in 0..pos.nrows() {
        let p = pos.row(i);
        let start = xs.partition_point(|&x| x < p[0] - eps);
        let mut best: Option<(f64, usize)> = None;
        for &j in &order[start..] {
            if g[(j, 0)] > p[0] + eps {
                break;
            }
            if used[j] {
                continue;
            }
            let d = (0..3).map(|k| (p[k] - g[(j, k)]).powi(2)).sum::<f64>().sqrt();
            if d <= eps && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, j));
            }
        }
        match best {
            Some((d, j)) => {
                used[j] = true;
                map[i] = j as u32;
                max_d = max_d.max(d);
            }
            None => return Err(format!("vertex {i} at {:?} has no golden vertex within {eps:e}", p.to_vec())),
        }
    }
    let gt = golden.mesh.topology();
    let mut want: HashMap<Vec<u32>, i32> = HashMap::new();
    for f in 0..gt.num_faces() {
        *want.entry(canonical(gt.face(f))).or_default() += 1;
    }
    let t = mesh.topology();
    let mut faces = 0;
    for f in 0..t.num_faces() {
        if mesh.holes()[f] {
            continue;
        }
        faces += 1;
        let mapped: Vec<u32> = t.face(f).iter().map(|&v| map[v as usize]).collect();
        let key = canonical(&mapped);
        match want.get_mut(&key) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return Err(format!("face {f} {:?} (golden ids {key:?}) is not a golden face", t.face(f))),
        }
    }
    if faces != gt.num_faces() {
        return Err(format!("face count {faces} vs golden {}", gt.num_faces()));
    }
    Ok(Comparison { max_rel: max_d / diag })
}
