//! Shared pieces of subla's benchmarks: generated inputs and a ratio report
//! read back from criterion's own estimates.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;
use subla_algebra::{CscMat, CsrMat};

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
    let path = criterion_dir().join(group).join(id).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("mean")?.get("point_estimate")?.as_f64().map(|ns| ns * 1e-9)
}

/// Prints a table of `peer time / ours time` for each `(ours, peer)` pair of
/// benchmark ids in `group` (ratios > 1 mean subla is faster).
pub fn report(group: &str, rows: &[(&str, &str)]) {
    let mut out = String::new();
    let _ = writeln!(out, "\n== {group}: ratio = peer time / subla time (> 1: subla faster)");
    let _ = writeln!(out, "{:<34} {:>12} {:<30} {:>12} {:>8}", "subla", "ms", "peer", "ms", "ratio");
    for (ours, peer) in rows {
        match (mean_seconds(group, ours), mean_seconds(group, peer)) {
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
