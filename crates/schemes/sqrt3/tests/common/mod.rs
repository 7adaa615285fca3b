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

/// The `v` lines of an OBJ file with no faces (limit goldens).
pub fn read_points(path: &PathBuf) -> ndarray::Array2<f64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows: Vec<[f64; 3]> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<f64>().unwrap_or(f64::NAN));
            [it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN)]
        })
        .collect();
    ndarray::Array2::from_shape_fn((rows.len(), 3), |(i, k)| rows[i][k])
}

/// What a comparison found.
#[derive(Debug)]
pub struct Comparison {
    /// Largest distance between matched vertices / bounding-box diagonal.
    pub max_rel: f64,
    /// Our vertex `i` is golden vertex `map[i]`.
    pub map: Vec<u32>,
}

fn canonical(face: &[u32]) -> Vec<u32> {
    let k = (0..face.len()).min_by_key(|&i| face[i]).unwrap_or(0);
    face[k..].iter().chain(&face[..k]).copied().collect()
}

/// Compares `ours` (mesh and positions) with `golden`. Hole faces of `ours`
/// are skipped (goldens omit them). Vertices are matched by position;
/// coincident vertices (non-manifold and back-to-back shapes) are told
/// apart by the faces they belong to.
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
    let dist =
        |p: ndarray::ArrayView1<'_, f64>, j: usize| (0..3).map(|k| (p[k] - g[(j, k)]).powi(2)).sum::<f64>().sqrt();
    // Golden position classes: vertices closer than eps share a class.
    let mut order: Vec<usize> = (0..g.nrows()).collect();
    order.sort_by(|&a, &b| g[(a, 0)].total_cmp(&g[(b, 0)]));
    let xs: Vec<f64> = order.iter().map(|&i| g[(i, 0)]).collect();
    let near = |p: ndarray::ArrayView1<'_, f64>| -> Vec<usize> {
        let start = xs.partition_point(|&x| x < p[0] - eps);
        order[start..]
            .iter()
            .take_while(|&&j| g[(j, 0)] <= p[0] + eps)
            .copied()
            .filter(|&j| dist(p, j) <= eps)
            .collect()
    };
    let mut class = vec![usize::MAX; g.nrows()];
    let mut classes: Vec<Vec<usize>> = Vec::new();
    for j in 0..g.nrows() {
        if class[j] == usize::MAX {
            let members: Vec<usize> = near(g.row(j)).into_iter().filter(|&m| class[m] == usize::MAX).collect();
            for &m in &members {
                class[m] = classes.len();
            }
            classes.push(members);
        }
    }
    // Our vertices to classes.
    let mut our_class = vec![0usize; pos.nrows()];
    let mut load = vec![0usize; classes.len()];
    for (i, oc) in our_class.iter_mut().enumerate() {
        let cands = near(pos.row(i));
        let Some(&j) = cands.first() else {
            return Err(format!("vertex {i} at {:?} has no golden vertex within {eps:e}", pos.row(i).to_vec()));
        };
        *oc = class[j];
        load[class[j]] += 1;
    }
    if let Some(c) = (0..classes.len()).find(|&c| load[c] != classes[c].len()) {
        return Err(format!(
            "{} of our vertices at {:?}, golden has {}",
            load[c],
            g.row(classes[c][0]).to_vec(),
            classes[c].len()
        ));
    }
    // Refine the position classes by the faces around each vertex (colour
    // refinement on both meshes at once), so that coincident vertices with
    // different surroundings get different colours.
    let gt = golden.mesh.topology();
    let t = mesh.topology();
    {
        let mut ours_col: Vec<usize> = our_class.clone();
        let mut gold_col: Vec<usize> = class.clone();
        let signature =
            |top: &subla_mesh::Topology, holes: Option<&[bool]>, col: &[usize], v: usize| -> (usize, Vec<Vec<usize>>) {
                let mut around: Vec<Vec<usize>> = top
                    .vertex_corners(v)
                    .iter()
                    .filter(|&&c| holes.is_none_or(|h| !h[top.corner_faces()[c as usize] as usize]))
                    .map(|&c| {
                        let f = top.corner_faces()[c as usize] as usize;
                        let vs = top.face(f);
                        let k = c as usize - top.face_ptr()[f] as usize;
                        (0..vs.len()).map(|i| col[vs[(k + i) % vs.len()] as usize]).collect()
                    })
                    .collect();
                around.sort();
                (col[v], around)
            };
        let mut colours = classes.len();
        for _round in 0..12 {
            let mut ids: HashMap<(usize, Vec<Vec<usize>>), usize> = HashMap::new();
            let mut next_id = |sig: (usize, Vec<Vec<usize>>)| {
                let n = ids.len();
                *ids.entry(sig).or_insert(n)
            };
            let new_gold: Vec<usize> = (0..g.nrows()).map(|v| next_id(signature(gt, None, &gold_col, v))).collect();
            let new_ours: Vec<usize> =
                (0..pos.nrows()).map(|v| next_id(signature(t, Some(mesh.holes()), &ours_col, v))).collect();
            let n = ids.len();
            gold_col = new_gold;
            ours_col = new_ours;
            if n == colours {
                break;
            }
            colours = n;
        }
        // Use the refined colours where they split a class consistently.
        let mut count_g = vec![0usize; colours.max(1) + g.nrows() + pos.nrows()];
        let mut count_o = vec![0usize; count_g.len()];
        for &c in &gold_col {
            count_g[c] += 1;
        }
        for &c in &ours_col {
            count_o[c] += 1;
        }
        if gold_col.iter().chain(&ours_col).all(|&c| count_g[c] == count_o[c]) {
            classes = vec![Vec::new(); count_g.len()];
            for (j, &c) in gold_col.iter().enumerate() {
                class[j] = c;
                classes[c].push(j);
            }
            our_class = ours_col;
        }
    }
    // Assign singletons, then propagate through faces.
    let mut map = vec![u32::MAX; pos.nrows()];
    let mut taken = vec![false; g.nrows()];
    for i in 0..pos.nrows() {
        let c = &classes[our_class[i]];
        if c.len() == 1 {
            map[i] = c[0] as u32;
            taken[c[0]] = true;
        }
    }
    let class_key = |ids: &[usize]| -> Vec<usize> {
        let k = (0..ids.len())
            .min_by_key(|&i| (ids[i..].iter().chain(&ids[..i]).copied().collect::<Vec<_>>(), i))
            .unwrap_or(0);
        ids[k..].iter().chain(&ids[..k]).copied().collect()
    };
    let mut by_key: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
    for f in 0..gt.num_faces() {
        let ids: Vec<usize> = gt.face(f).iter().map(|&v| class[v as usize]).collect();
        by_key.entry(class_key(&ids)).or_default().push(f);
    }
    // Propagate through faces: a face with one consistent golden
    // counterpart pins its vertices. When nothing is unique any more, take
    // the first consistent counterpart of some face and go on.
    let mut greedy = false;
    loop {
        let mut progress = false;
        for f in 0..t.num_faces() {
            if mesh.holes()[f] {
                continue;
            }
            let ours = t.face(f);
            if ours.iter().all(|&v| map[v as usize] != u32::MAX) {
                continue;
            }
            let ids: Vec<usize> = ours.iter().map(|&v| our_class[v as usize]).collect();
            let Some(cands) = by_key.get(&class_key(&ids)) else { continue };
            let mut fits = Vec::new();
            for &gf in cands {
                let gv = gt.face(gf);
                if gv.len() != ours.len() {
                    continue;
                }
                for rot in 0..gv.len() {
                    let ok = (0..ours.len()).all(|k| {
                        let o = ours[k] as usize;
                        let gvk = gv[(k + rot) % gv.len()] as usize;
                        class[gvk] == our_class[o]
                            && (if map[o] != u32::MAX { map[o] as usize == gvk } else { !taken[gvk] })
                    });
                    if ok {
                        fits.push((gf, rot));
                    }
                }
            }
            if fits.len() == 1 || (greedy && !fits.is_empty()) {
                let (gf, rot) = fits[0];
                let gv = gt.face(gf);
                for k in 0..ours.len() {
                    let o = ours[k] as usize;
                    if map[o] == u32::MAX {
                        let gvk = gv[(k + rot) % gv.len()];
                        map[o] = gvk;
                        taken[gvk as usize] = true;
                        progress = true;
                    }
                }
                if greedy {
                    break;
                }
            }
        }
        if progress {
            greedy = false;
        } else if !greedy {
            greedy = true;
        } else {
            break;
        }
    }
    // Whatever is still ambiguous: first free member of the class.
    for i in 0..pos.nrows() {
        if map[i] == u32::MAX {
            let Some(&j) = classes[our_class[i]].iter().find(|&&j| !taken[j]) else {
                return Err(format!("vertex {i}: no free golden vertex left at its position"));
            };
            map[i] = j as u32;
            taken[j] = true;
        }
    }
    let max_d = (0..pos.nrows()).map(|i| dist(pos.row(i), map[i] as usize)).fold(0f64, f64::max);
    let mut want: HashMap<Vec<u32>, i32> = HashMap::new();
    for f in 0..gt.num_faces() {
        *want.entry(canonical(gt.face(f))).or_default() += 1;
    }
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
    Ok(Comparison { max_rel: max_d / diag, map })
}
