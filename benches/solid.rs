//! Catmull-Clark solids: limit evaluation of regular cells on the CPU
//! (`RegularEval`, rayon) against the memory floor measured in the same
//! run, and refinement (`CatmarkSolid`: build and eval).
//!
//! `cargo bench -p subla-bench --bench solid` (`SUBLA_BENCH_QUICK=1`: a
//! smaller grid)
//!
//! The model is an `n³` hexahedral grid (`n = 48`: 110,592 cells, 97,336 of
//! them regular interior cells), jittered. Evaluation writes `k³` samples
//! per regular cell (`k = 4`: 64, `k = 8`: 512), positions in `f64`. Its
//! floor is the bytes it must move: the samples written (24 bytes each)
//! and the control points read once (24 bytes a vertex); the floor time is
//! a parallel copy of as many bytes, measured here, so the ratio is
//! evaluation time over the time the memory system needs for its bytes.
//! Further tables evaluate by cell class on a solid torus and on a
//! tetrahedral model refined twice (regular cells by `RegularEval`,
//! layered ones — one extraordinary edge — by `LayeredEval`, and so the
//! cells at smooth boundary edges (row `edge`), irregular ones —
//! extraordinary edges at one vertex — by `IrregularEval`).

use std::hint::black_box;
use std::time::Instant;

use ndarray::Array2;
use rayon::prelude::*;
use subla_algebra::Par;
use subla_scheme::{Plan, Refiner, eval};
use subla_solid::limit::{Quantity, RegularEval, regular_grid};
use subla_solid::{CatmarkSolid, CatmarkSolidLak};
use subla_volume::shapes::hex_grid;

/// Seconds of a parallel copy of `bytes` (source and destination already
/// touched): the memory floor of an evaluation that moves that many bytes.
fn copy_floor(bytes: f64, runs: usize) -> f64 {
    let words = (bytes / 8.0) as usize;
    let src = vec![1.0f64; words];
    let mut dst = vec![0.0f64; words];
    time(runs, || {
        dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
    })
}

/// Limit evaluation by cell class: a solid torus (an O-grid disk of a
/// 4 × 4 core and 3 rings swept in `segments` segments: the core's corners
/// make four rings of extraordinary edges of valence 3) and a tetrahedral
/// model refined twice (with irregular cells); regular cells by
/// `RegularEval`, layered ones by `LayeredEval`, irregular ones by
/// `IrregularEval`, positions in `f64`, with the
/// copy floor as above (samples written, the control points the class
/// reads once).
fn per_class(quick: bool, runs: usize) {
    let segments = if quick { 64 } else { 512 };
    let t = subla_volume::shapes::torus(4, 3, segments, 3.0, 1.0).expect("a torus");
    class_table(&format!("solid torus, {segments} segments"), &t.mesh, &t.vertices, runs);
    let n = if quick { 3 } else { 4 };
    let (m, x) = tetrahedral_model(n);
    class_table(&format!("{n}³ cubes of 6 tetrahedra, refined twice"), &m, &x, runs);
}

/// `shapes::tetrahedral_grid(n)` refined twice: regular, layered and
/// irregular cells.
fn tetrahedral_model(n: usize) -> (subla_volume::VolMesh, Array2<f64>) {
    let d = subla_volume::shapes::tetrahedral_grid(n).expect("a tetrahedral mesh");
    let plan = CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon).expect("a build");
    let x = eval(&plan, d.vertices.view(), Par::Rayon).expect("eval");
    (plan.mesh(2).clone(), x)
}

/// The table of [`per_class`] for one model.
fn class_table(name: &str, m: &subla_volume::VolMesh, x: &Array2<f64>, runs: usize) {
    use std::collections::BTreeMap;
    use subla_solid::irregular::IrregularEval;
    use subla_solid::layered::LayeredEval;
    use subla_solid::limit::{CellClass, classify};
    let classes: Vec<CellClass> = (0..m.num_cells()).into_par_iter().map(|c| classify(m, c)).collect();
    let mut count: BTreeMap<CellClass, usize> = BTreeMap::new();
    for &c in &classes {
        *count.entry(c).or_default() += 1;
    }
    println!("\n== limit evaluation by cell class: {name}, {} cells", m.num_cells());
    for (c, n) in &count {
        println!("  {:<55} {n}", c.name());
    }
    let pick = |want: &[CellClass]| -> Vec<u32> {
        (0..m.num_cells() as u32).filter(|&c| want.contains(&classes[c as usize])).collect()
    };
    let regular = pick(&[CellClass::Regular, CellClass::RegularBoundary]);
    let layered = pick(&[CellClass::Layered, CellClass::LayeredBoundary]);
    let edges = pick(&[CellClass::SmoothBoundaryEdge]);
    let irregular = pick(&[CellClass::Irregular]);
    println!(
        "{:>9} {:>7} {:>4} {:>11} {:>9} {:>12} {:>9} {:>9} {:>7}",
        "class", "cells", "k", "samples", "eval ms", "samples/s", "MB moved", "floor ms", "ratio"
    );
    for k in [4usize, 8] {
        for (class, cells) in
            [("regular", &regular), ("layered", &layered), ("edge", &edges), ("irregular", &irregular)]
        {
            if cells.is_empty() {
                continue;
            }
            let (samples, read, secs) = match class {
                "regular" => {
                    let ev = RegularEval::new(m, cells, k, Par::Rayon).expect("regular cells");
                    let mut out = Array2::<f64>::zeros((ev.num_samples(), 3));
                    let secs = time(runs, || ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon));
                    (ev.num_samples(), 64 * cells.len(), secs)
                }
                "layered" | "edge" => {
                    // Cells at smooth boundary edges are layered cells of
                    // a boundary sector (the same evaluator).
                    let ev = LayeredEval::new(m, cells, k, Par::Rayon).expect("layered cells");
                    let mut out = Array2::<f64>::zeros((ev.num_samples(), 3));
                    let secs = time(runs, || ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon));
                    // At least 4 layers of 2n + 8 = 14 points (9 at a box's
                    // edge).
                    let per = if class == "edge" { 36 } else { 56 };
                    (ev.num_samples(), per * cells.len(), secs)
                }
                _ => {
                    // The configurations' weight tables are made by the
                    // first (warm-up) run.
                    let t0 = Instant::now();
                    let ev = IrregularEval::new(m, cells, k, Par::Rayon).expect("irregular cells");
                    let mut out = Array2::<f64>::zeros((ev.num_samples(), 3));
                    ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon).expect("positions");
                    let made = t0.elapsed().as_secs_f64();
                    println!("  (irregular, k = {k}: gathered and tables made in {:.1} ms)", made * 1e3);
                    let secs = time(runs, || ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon));
                    // About 4 (2n + 8) to 100 support points a cell.
                    (ev.num_samples(), 64 * cells.len(), secs)
                }
            };
            // The control points a class reads at least once: no more than
            // the mesh's vertices.
            let bytes = (samples * 24 + read.min(m.num_vertices()) * 24) as f64;
            let floor = copy_floor(bytes, runs);
            println!(
                "{class:>9} {:>7} {k:>4} {samples:>11} {:>9.2} {:>12.3e} {:>9.1} {:>9.2} {:>7.2}",
                cells.len(),
                secs * 1e3,
                samples as f64 / secs,
                bytes / 1e6,
                floor * 1e3,
                secs / floor
            );
        }
    }
}

/// Minimum seconds of `runs` runs of `f` after one warm-up.
fn time<R>(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    black_box(f());
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    let quick = std::env::var_os("SUBLA_BENCH_QUICK").is_some();
    let (n, runs) = if quick { (16, 3) } else { (48, 7) };
    let g = hex_grid(n, n, n).expect("a grid");
    let mut s = 1u64;
    let x = g.vertices.mapv(|v| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v + 0.2 * (((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    });
    let m = &g.mesh;
    let threads = rayon::current_num_threads();
    println!("solid bench: {n}³ grid, {} cells, {} vertices; {threads} threads", m.num_cells(), m.num_vertices());
    let t = Instant::now();
    let cells: Vec<u32> =
        (0..m.num_cells() as u32).into_par_iter().filter(|&c| regular_grid(m, c as usize).is_some()).collect();
    println!("regular interior cells: {} (found in {:.0} ms)", cells.len(), t.elapsed().as_secs_f64() * 1e3);
    println!("\n== limit evaluation of regular cells (positions, f64)");
    println!(
        "{:>4} {:>12} {:>10} {:>14} {:>10} {:>10} {:>8}",
        "k", "samples", "eval ms", "samples/s", "MB moved", "floor ms", "ratio"
    );
    for k in [4usize, 8] {
        let ev = RegularEval::new(m, &cells, k, Par::Rayon).expect("regular cells");
        let mut out = Array2::<f64>::zeros((ev.num_samples(), 3));
        let secs = time(runs, || ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon));
        let bytes = (ev.num_samples() * 24 + m.num_vertices() * 24) as f64;
        // The floor: a parallel copy of as many bytes, source and
        // destination already touched.
        let words = (bytes / 8.0) as usize;
        let src = vec![1.0f64; words];
        let mut dst = vec![0.0f64; words];
        let floor = time(runs, || {
            dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
        });
        println!(
            "{k:>4} {:>12} {:>10.2} {:>14.3e} {:>10.1} {:>10.2} {:>8.2}",
            ev.num_samples(),
            secs * 1e3,
            ev.num_samples() as f64 / secs,
            bytes / 1e6,
            floor * 1e3,
            secs / floor
        );
        // The same samples as the limit matrix (a spot check of the bench's
        // output, not a test).
        black_box(&out);
    }
    per_class(quick, runs);
    println!("\n== refinement (CatmarkSolid), build and eval");
    let small = hex_grid(n / 2, n / 2, n / 2).expect("a grid");
    for levels in [1u32, 2] {
        let build =
            time(3.min(runs), || CatmarkSolid::default().build(&small.mesh, levels, Par::Rayon).expect("a build"));
        let plan = CatmarkSolid::default().build(&small.mesh, levels, Par::Rayon).expect("a build");
        let ev = time(runs, || eval(&plan, small.vertices.view(), Par::Rayon).expect("eval"));
        println!(
            "{}³ grid, {levels} levels: {} cells out, build {:.1} ms, eval {:.2} ms",
            n / 2,
            plan.mesh(plan.levels()).num_cells(),
            build * 1e3,
            ev * 1e3
        );
    }
    println!("\n== one step's connectivity: written from the parent's against built from the cells (same run)");
    let m = &small.mesh;
    let child = m.split(Par::Rayon).expect("a split");
    let child_cells: Vec<subla_volume::Cell> = child.cells().collect();
    let split = time(runs, || m.split(Par::Rayon).expect("a split"));
    let split_seq = time(runs, || m.split(Par::Seq).expect("a split"));
    let from =
        time(3.min(runs), || subla_volume::VolMesh::from_cells(child.num_vertices(), &child_cells).expect("a mesh"));
    println!(
        "{}³ grid, {} cells out: split {:.1} ms (one thread {:.1} ms), from_cells {:.1} ms ({:.1}×)",
        n / 2,
        child.num_cells(),
        split * 1e3,
        split_seq * 1e3,
        from * 1e3,
        from / split
    );
    println!("\n== one step's cells and points: specialised kernels against the mapped algebra (same run)");
    let cells_k = time(runs, || CatmarkSolid::default().build(m, 1, Par::Rayon).expect("a build"));
    let cells_a = time(runs, || CatmarkSolidLak::default().build(m, 1, Par::Rayon).expect("a build"));
    let lak = CatmarkSolidLak::default().build(m, 1, Par::Rayon).expect("a build");
    let kern = CatmarkSolid::default().build(m, 1, Par::Rayon).expect("a build");
    let ev_k = time(runs, || eval(&kern, small.vertices.view(), Par::Rayon).expect("eval"));
    let ev_a = time(runs, || eval(&lak, small.vertices.view(), Par::Rayon).expect("eval"));
    let sp_k = time(runs, || subla_solid::algebra::child_cells(m, Par::Rayon).expect("cells"));
    println!(
        "{}³ grid: build (cells + R) kernels {:.1} ms, algebra {:.1} ms ({:.2}×); cells alone by SpGEMM {:.1} ms; eval kernels (SpMV of R) {:.2} ms, algebra (mapped products) {:.2} ms ({:.2}×)",
        n / 2,
        cells_k * 1e3,
        cells_a * 1e3,
        cells_a / cells_k,
        sp_k * 1e3,
        ev_k * 1e3,
        ev_a * 1e3,
        ev_a / ev_k
    );
}
