//! Shared pieces of subla's benchmarks: generated inputs and a ratio report
//! read back from criterion's own estimates.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;
use ndarray::Array2;
use subla_algebra::{CscMat, CsrMat, Par};
use subla_mesh::{Mesh, MeshBuilder, MeshData};

#[cfg(feature = "opensubdiv-petite")]
pub mod osd_eval;
#[cfg(feature = "opensubdiv-petite")]
pub mod osd_fvar;
#[cfg(feature = "opensubdiv-petite")]
pub mod petite;

/// The best time (seconds) of `f` over at least `runs` runs that together
/// take at least `min_seconds`, stopping once `max_seconds` have passed,
/// with the number of runs and the last result (the others are dropped as
/// they come). An error of `f` ends the timing.
///
/// # Errors
/// The first error of `f`.
pub fn best_of<R>(
    runs: usize,
    min_seconds: f64,
    max_seconds: f64,
    mut f: impl FnMut() -> Result<R, String>,
) -> Result<(f64, usize, R), String> {
    let started = std::time::Instant::now();
    let mut best = f64::INFINITY;
    let mut n = 0;
    loop {
        let t = std::time::Instant::now();
        let r = std::hint::black_box(f()?);
        best = best.min(t.elapsed().as_secs_f64());
        n += 1;
        let spent = started.elapsed().as_secs_f64();
        if (n >= runs && spent >= min_seconds) || spent >= max_seconds {
            return Ok((best, n, r));
        }
        drop(r);
    }
}

/// Where criterion writes its estimates for these benches.
pub fn criterion_dir() -> PathBuf {
    if let Some(v) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(v);
    }
    if let Some(v) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(v).join("criterion");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/criterion")
}

/// A criterion configured for large inputs and a known output directory.
pub fn criterion() -> Criterion {
    Criterion::default()
        .output_directory(&criterion_dir())
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args()
}

/// Mean time in seconds of benchmark `group/id`, from criterion's estimates.
pub fn mean_seconds(group: &str, id: &str) -> Option<f64> {
    estimate_seconds(group, id, "mean")
}

/// Median time in seconds of benchmark `group/id`, from criterion's
/// estimates.
pub fn median_seconds(group: &str, id: &str) -> Option<f64> {
    estimate_seconds(group, id, "median")
}

/// Criterion's point estimate `what` (`mean`, `median`) of `group/id`.
fn estimate_seconds(group: &str, id: &str, what: &str) -> Option<f64> {
    let path = criterion_dir().join(group).join(id).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get(what)?.get("point_estimate")?.as_f64().map(|ns| ns * 1e-9)
}

/// Prints a table of `peer time / ours time` for each `(ours, peer)` pair of
/// benchmark ids in `group` (ratios > 1 mean subla is faster).
pub fn report(group: &str, rows: &[(&str, &str)]) {
    report_with(group, rows, |id| mean_seconds(group, id));
}

/// As [`report`], with the mean time in seconds of each benchmark id given
/// by `time` (for rows timed outside criterion, falling back to
/// [`mean_seconds`]).
pub fn report_with(group: &str, rows: &[(&str, &str)], time: impl Fn(&str) -> Option<f64>) {
    let mut out = String::new();
    let _ = writeln!(out, "\n== {group}: ratio = peer time / subla time (> 1: subla faster)");
    let _ = writeln!(out, "{:<34} {:>12} {:<30} {:>12} {:>8}", "subla", "ms", "peer", "ms", "ratio");
    for (ours, peer) in rows {
        match (time(ours), time(peer)) {
            (Some(a), Some(b)) => {
                let _ = writeln!(out, "{:<34} {:>12.3} {:<30} {:>12.3} {:>8.2}", ours, a * 1e3, peer, b * 1e3, b / a);
            }
            _ => {
                let _ = writeln!(out, "{ours:<34} {peer:<30} (not measured in this run)");
            }
        }
    }
    println!("{out}");
}

/// Runs `f` in a rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(e) => panic!("cannot build a rayon pool of {threads} threads: {e}"),
    }
}

/// Mesh matrix M (|v| x |f|, CSC, values = 1-based corner position) of a
/// `side x side` quad grid, closed into a torus so every vertex has valence 4.
pub fn torus_mesh_matrix(side: usize) -> CscMat<u32> {
    let mut ptr = Vec::with_capacity(side * side + 1);
    let mut rows = Vec::with_capacity(4 * side * side);
    let mut vals = Vec::with_capacity(4 * side * side);
    ptr.push(0u32);
    for r in 0..side {
        for c in 0..side {
            let v = |rr: usize, cc: usize| ((rr % side) * side + (cc % side)) as u32;
            let mut corners = [(v(r, c), 1u32), (v(r, c + 1), 2), (v(r + 1, c + 1), 3), (v(r + 1, c), 4)];
            corners.sort_unstable();
            for (vi, k) in corners {
                rows.push(vi);
                vals.push(k);
            }
            ptr.push(rows.len() as u32);
        }
    }
    match CscMat::try_new(side * side, side * side, ptr, rows, vals) {
        Ok(m) => m,
        Err(e) => panic!("generated mesh matrix is invalid: {e}"),
    }
}

/// A mesh-like operator: one row per vertex of a `side x side` torus grid,
/// with the 3x3 vertex neighbourhood (9 entries per row, as the vertex rows
/// of a Catmull-Clark refinement matrix of a regular quad mesh).
pub fn stencil_matrix(side: usize) -> CsrMat<f64> {
    let n = side * side;
    let mut ptr = Vec::with_capacity(n + 1);
    let mut idx = Vec::with_capacity(9 * n);
    let mut vals = Vec::with_capacity(9 * n);
    ptr.push(0u32);
    // Tensor product of the cubic B-spline vertex mask (1, 6, 1) / 8.
    let w = [1.0, 6.0, 1.0, 6.0, 36.0, 6.0, 1.0, 6.0, 1.0].map(|v: f64| v / 64.0);
    for r in 0..side {
        for c in 0..side {
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(9);
            for dr in 0..3 {
                for dc in 0..3 {
                    let rr = (r + side + dr - 1) % side;
                    let cc = (c + side + dc - 1) % side;
                    row.push(((rr * side + cc) as u32, w[dr * 3 + dc]));
                }
            }
            row.sort_unstable_by_key(|e| e.0);
            for (j, v) in row {
                idx.push(j);
                vals.push(v);
            }
            ptr.push(idx.len() as u32);
        }
    }
    match CsrMat::try_new(n, n, ptr, idx, vals) {
        Ok(m) => m,
        Err(e) => panic!("generated stencil matrix is invalid: {e}"),
    }
}

/// Builds a mesh with positions from quads (`Mesh::from_faces`, OpenSubdiv
/// validation, default options).
fn quad_mesh(positions: Vec<[f64; 3]>, quads: &[[u32; 4]]) -> MeshData {
    let n = positions.len();
    let mesh = match Mesh::from_faces(n, quads) {
        Ok(m) => m,
        Err(e) => panic!("generated quad mesh is invalid: {e}"),
    };
    let flat: Vec<f64> = positions.into_iter().flatten().collect();
    let vertices = match Array2::from_shape_vec((n, 3), flat) {
        Ok(v) => v,
        Err(e) => panic!("generated positions have the wrong shape: {e}"),
    };
    match MeshData::new(mesh, vertices) {
        Ok(d) => d,
        Err(e) => panic!("generated mesh data is invalid: {e}"),
    }
}

/// A closed quad torus of `m × n` quads (`m` around the central axis, `n`
/// around the tube; both at least 3): every vertex has valence 4, so the
/// refined meshes are regular. Major radius 1, minor radius 0.35, faces
/// counter-clockwise seen from outside. `quad_torus(317, 317)` has 100,489
/// quads.
///
/// # Panics
/// If `m < 3` or `n < 3`, or the mesh has more than `u32::MAX` vertices.
pub fn quad_torus(m: usize, n: usize) -> MeshData {
    assert!(m >= 3 && n >= 3, "a quad torus needs at least 3 x 3 quads, got {m} x {n}");
    let (big, small) = (1.0f64, 0.35f64);
    let mut positions = Vec::with_capacity(m * n);
    for i in 0..m {
        let u = std::f64::consts::TAU * i as f64 / m as f64;
        for j in 0..n {
            let v = std::f64::consts::TAU * j as f64 / n as f64;
            let r = big + small * v.cos();
            positions.push([r * u.cos(), r * u.sin(), small * v.sin()]);
        }
    }
    let id = |i: usize, j: usize| ((i % m) * n + (j % n)) as u32;
    let mut quads = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            quads.push([id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    quad_mesh(positions, &quads)
}

/// A quad sphere: the cube with each face split into `k × k` quads, its
/// vertices projected onto the unit sphere (`6k²` quads; the 8 cube corners
/// are extraordinary vertices of valence 3).
///
/// # Panics
/// If `k == 0`.
pub fn quad_sphere(k: usize) -> MeshData {
    assert!(k > 0, "a quad sphere needs at least one quad per cube face");
    let mut positions: Vec<[f64; 3]> = Vec::new();
    let mut index = std::collections::HashMap::<[i64; 3], u32>::new();
    let mut quads = Vec::with_capacity(6 * k * k);
    let ki = k as i64;
    // Each cube face: a fixed axis `a` at side `s`, spanned by axes (b, c)
    // ordered so that b × c points outwards.
    for a in 0..3usize {
        for s in [-1i64, 1] {
            let (b, c) = if s > 0 { ((a + 1) % 3, (a + 2) % 3) } else { ((a + 2) % 3, (a + 1) % 3) };
            let mut vert = |i: i64, j: i64| {
                let mut p = [0i64; 3];
                p[a] = s * ki;
                p[b] = 2 * i - ki;
                p[c] = 2 * j - ki;
                *index.entry(p).or_insert_with(|| {
                    let q = p.map(|x| x as f64);
                    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
                    positions.push(q.map(|x| x / len));
                    (positions.len() - 1) as u32
                })
            };
            for i in 0..ki {
                for j in 0..ki {
                    quads.push([vert(i, j), vert(i + 1, j), vert(i + 1, j + 1), vert(i, j + 1)]);
                }
            }
        }
    }
    quad_mesh(positions, &quads)
}

/// A geodesic sphere: each icosahedron face split into `n²` triangles,
/// projected to the unit sphere (`20 n²` triangles, `10 n² + 2` vertices).
///
/// # Panics
/// If `n` is 0.
pub fn icosphere(n: usize) -> (Mesh, ndarray::Array2<f64>) {
    let base = subla_mesh::shapes::icosahedron();
    let bt = base.mesh.topology();
    let bp = base.positions();
    let ico: Vec<[f64; 3]> = bp.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
    let faces: Vec<[usize; 3]> = (0..bt.num_faces()).map(|f| std::array::from_fn(|k| bt.face(f)[k] as usize)).collect();
    let mut ids: HashMap<[i64; 3], u32> = HashMap::new();
    let mut pos: Vec<[f64; 3]> = Vec::new();
    let mut id = |p: [f64; 3]| -> u32 {
        let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        let q = [p[0] / l, p[1] / l, p[2] / l];
        let key = q.map(|x| (x * 1e9).round() as i64);
        *ids.entry(key).or_insert_with(|| {
            pos.push(q);
            (pos.len() - 1) as u32
        })
    };
    let mut verts = Vec::with_capacity(60 * n * n);
    for f in faces {
        let [a, b, c] = f.map(|i| ico[i]);
        let at = |i: usize, j: usize| -> [f64; 3] {
            let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
            std::array::from_fn(|k| a[k] + u * (b[k] - a[k]) + v * (c[k] - a[k]))
        };
        for i in 0..n {
            for j in 0..n - i {
                let (p, q, r) = (id(at(i, j)), id(at(i + 1, j)), id(at(i, j + 1)));
                verts.extend([p, q, r]);
                if i + j + 1 < n {
                    let s = id(at(i + 1, j + 1));
                    verts.extend([q, s, r]);
                }
            }
        }
    }
    let nf = verts.len() / 3;
    let ptr: Vec<u32> = (0..=nf as u32).map(|i| 3 * i).collect();
    let mesh = match MeshBuilder::new(pos.len(), ptr, verts).build(Par::Rayon) {
        Ok(m) => m,
        Err(e) => panic!("icosphere: {e}"),
    };
    let p = ndarray::Array2::from_shape_fn((pos.len(), 3), |(i, k)| pos[i][k]);
    (mesh, p)
}

/// A closed `m × n` quad torus (as [`quad_torus`]) with extraordinary
/// vertices made by a deterministic edit: at about a quarter of the sites
/// of a lattice of spacing `spacing` (chosen by a fixed hash), the edge
/// shared by two neighbouring quads is turned to the other diagonal of
/// their hexagon. Each edit leaves two vertices of valence 3 and two of
/// valence 5, and the quad count unchanged; `spacing` of at least 4 keeps
/// the edits apart. `quad_torus_with_defects(317, 317, 7)` has 100,489
/// quads and about 2 % extraordinary vertices.
///
/// # Panics
/// If `m < 3` or `n < 3`, if `spacing < 4`, or if the mesh has more than
/// `u32::MAX` vertices.
pub fn quad_torus_with_defects(m: usize, n: usize, spacing: usize) -> MeshData {
    assert!(m >= 3 && n >= 3, "a quad torus needs at least 3 x 3 quads, got {m} x {n}");
    assert!(spacing >= 4, "edits closer than 4 quads apart would touch each other (spacing {spacing})");
    let (big, small) = (1.0f64, 0.35f64);
    let mut positions = Vec::with_capacity(m * n);
    for i in 0..m {
        let u = std::f64::consts::TAU * i as f64 / m as f64;
        for j in 0..n {
            let v = std::f64::consts::TAU * j as f64 / n as f64;
            let r = big + small * v.cos();
            positions.push([r * u.cos(), r * u.sin(), small * v.sin()]);
        }
    }
    let id = |i: usize, j: usize| ((i % m) * n + (j % n)) as u32;
    let quad = |i: usize, j: usize| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)];
    let mut quads: Vec<[u32; 4]> = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            quads.push(quad(i, j));
        }
    }
    // A site (i, j) edits quads (i, j) and (i+1, j); the last lattice rows
    // and columns are left out where they would wrap onto the first.
    let hash = |i: usize, j: usize| {
        let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^ (x >> 32)
    };
    for i in (0..m.saturating_sub(spacing)).step_by(spacing) {
        for j in (0..n.saturating_sub(spacing)).step_by(spacing) {
            if hash(i, j) % 4 != 0 {
                continue;
            }
            // a b c along i at j, d e f at j + 1: quads (a b e d), (b c f e)
            // become (a b c f), (a f e d).
            let (a, b, c) = (id(i, j), id(i + 1, j), id(i + 2, j));
            let (d, e, f) = (id(i, j + 1), id(i + 1, j + 1), id(i + 2, j + 1));
            quads[i * n + j] = [a, b, c, f];
            quads[(i + 1) * n + j] = [a, f, e, d];
        }
    }
    quad_mesh(positions, &quads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valence of each vertex, counted from the faces' edges (each interior
    /// edge is seen from both of its faces).
    fn valences(data: &MeshData) -> Vec<usize> {
        let t = data.mesh.topology();
        let mut edges = std::collections::HashSet::new();
        for f in 0..t.num_faces() {
            let vs = t.face(f);
            for k in 0..vs.len() {
                let (a, b) = (vs[k], vs[(k + 1) % vs.len()]);
                edges.insert((a.min(b), a.max(b)));
            }
        }
        let mut val = vec![0; t.num_vertices()];
        for (a, b) in edges {
            val[a as usize] += 1;
            val[b as usize] += 1;
        }
        val
    }

    #[test]
    fn defect_torus_has_paired_valence_3_and_5_vertices() {
        let data = quad_torus_with_defects(60, 50, 6);
        let t = data.mesh.topology();
        assert_eq!(t.num_faces(), 60 * 50);
        assert_eq!(t.num_vertices(), 60 * 50);
        let val = valences(&data);
        let count = |k: usize| val.iter().filter(|&&v| v == k).count();
        let (three, five) = (count(3), count(5));
        // Every edit makes two of each, and nothing else changes.
        assert!(three > 0, "no edit was made");
        assert_eq!(three, five);
        assert_eq!(three % 2, 0);
        assert_eq!(three + five + count(4), val.len());
        // A closed torus: V - E + F = 0.
        let edges: usize = val.iter().sum::<usize>() / 2;
        assert_eq!(t.num_vertices() + t.num_faces(), edges);
        // Sites: 9 lattice columns × 8 lattice rows, about a quarter edited.
        let edits = three / 2;
        assert!((4..=40).contains(&edits), "{edits} edits of 72 sites");
    }

    #[test]
    fn bench_torus_has_a_few_percent_extraordinary_vertices() {
        let data = quad_torus_with_defects(317, 317, 7);
        assert_eq!(data.mesh.topology().num_faces(), 100_489);
        let ev = valences(&data).iter().filter(|&&v| v != 4).count();
        let share = ev as f64 / 100_489.0;
        assert!((0.01..=0.05).contains(&share), "{ev} extraordinary vertices ({:.2} %)", 100.0 * share);
    }
}
