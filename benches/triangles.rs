//! Loop and √3 subdivision of a 200,000-triangle icosphere (frequency-100
//! geodesic sphere), subla against subdiv-kernels in the same run, with the
//! CGAL and OpenMesh figures measured on this machine class for reference
//! (√3, 3 steps: CGAL 2.4 s, OpenMesh 4.0 s; Loop, 3 levels: CGAL 4.1 s).
//!
//! `cargo bench -p subla-bench --bench triangles` (`SUBLA_BENCH_QUICK=1`:
//! frequency 30, one run per row)
//!
//! Each row is the full subdivision — topology and positions (3 channels of
//! `f64`) — from the control mesh: subla's modeling mode (build and eval one
//! level at a time), subla's static build plus one eval, and subdiv-kernels'
//! `refine_uniform` plus `interpolate`. Times are the mean of the runs after
//! one warm-up.

use std::hint::black_box;
use std::num::NonZeroU8;
use std::time::Instant;

use subla_algebra::Par;
use subla_bench::pool;
use subla_loop::LoopSlak;
use subla_mesh::Mesh;
use subla_scheme::{Refiner, eval, modeling};
use subla_sqrt3::Sqrt3Slak;

/// Reference figures (seconds) on this machine class, from the issue.
const CGAL_SQRT3: f64 = 2.4;
const OPENMESH_SQRT3: f64 = 4.0;
const CGAL_LOOP: f64 = 4.1;

/// Mean seconds of `runs` runs of `f` after one warm-up.
fn time<R>(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    black_box(f());
    let t = Instant::now();
    for _ in 0..runs {
        black_box(f());
    }
    t.elapsed().as_secs_f64() / runs as f64
}

/// subdiv-kernels: topology, per-level stencils, then the chained
/// interpolation of the positions.
fn subdiv_kernels(mesh: &Mesh, pos: &ndarray::Array2<f64>, scheme: subdiv_kernels::Scheme, levels: u8) -> usize {
    let t = mesh.topology();
    let m = subdiv_kernels::Mesh {
        vertex_count: t.num_vertices() as u32,
        face_vertex_counts: t.face_ptr().windows(2).map(|w| w[1] - w[0]).collect(),
        face_vertex_indices: t.face_verts().to_vec(),
        edge_vertices: Vec::new(),
        edge_creases: Vec::new(),
        vertex_corners: vec![0.0; t.num_vertices()],
    };
    let ctrl: Vec<[f64; 3]> = pos.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
    let Some(l) = NonZeroU8::new(levels) else { return 0 };
    let result = subdiv_kernels::Refiner::new(m, scheme, subdiv_kernels::SchemeOptions::default())
        .and_then(|r| r.refine_uniform(&subdiv_kernels::UniformRefine::from(l)));
    match result {
        Ok(r) => r.interpolate(&ctrl).len(),
        Err(e) => {
            println!("subdiv-kernels failed: {e}");
            0
        }
    }
}

fn main() {
    let quick = std::env::var_os("SUBLA_BENCH_QUICK").is_some();
    let (freq, runs) = if quick { (30, 1) } else { (100, 2) };
    let (mesh, pos) = subla_bench::icosphere(freq);
    let threads = rayon::current_num_threads();
    println!(
        "triangle bench: icosphere of {} triangles, {} vertices; 3 levels / steps; {threads} threads",
        mesh.num_faces(),
        mesh.num_vertices()
    );
    let p1 = pool(1);
    let pn = pool(threads);
    let mut table = Vec::new();
    for (scheme, cgal, openmesh) in [("loop", CGAL_LOOP, None), ("sqrt3", CGAL_SQRT3, Some(OPENMESH_SQRT3))] {
        let mut row = |name: String, secs: f64| {
            println!("{scheme:<6} {name:<28} {:>10.1} ms", secs * 1e3);
            table.push((scheme, name, secs, cgal, openmesh));
        };
        for (label, p) in [("1thread", &p1), ("all threads", &pn)] {
            let modeling_secs = p.install(|| match scheme {
                "loop" => {
                    time(runs, || modeling(&LoopSlak::new(), &mesh, pos.view(), 3, Par::Rayon).map(|r| r.1.nrows()))
                }
                _ => time(runs, || modeling(&Sqrt3Slak::new(), &mesh, pos.view(), 3, Par::Rayon).map(|r| r.1.nrows())),
            });
            row(format!("subla modeling, {label}"), modeling_secs);
            let static_secs = p.install(|| match scheme {
                "loop" => time(runs, || {
                    LoopSlak::new().build(&mesh, 3, Par::Rayon).map(|pl| eval(&pl, pos.view(), Par::Rayon).unwrap())
                }),
                _ => time(runs, || {
                    Sqrt3Slak::new().build(&mesh, 3, Par::Rayon).map(|pl| eval(&pl, pos.view(), Par::Rayon).unwrap())
                }),
            });
            row(format!("subla build + eval, {label}"), static_secs);
        }
        let sk = match scheme {
            "loop" => subdiv_kernels::Scheme::Loop,
            _ => subdiv_kernels::Scheme::Sqrt3,
        };
        let sk_secs = time(1, || subdiv_kernels(&mesh, &pos, sk, 3));
        row("subdiv-kernels, 1 thread".into(), sk_secs);
    }
    println!("\n== triangle schemes: reference time / subla time (> 1: subla faster)");
    println!("{:<6} {:<28} {:>10} {:>8} {:>9} {:>8}", "scheme", "row", "ms", "vs CGAL", "vs OpenMesh", "vs sk");
    for (scheme, name, secs, cgal, openmesh) in &table {
        let sk = table.iter().find(|r| r.0 == *scheme && r.1.starts_with("subdiv-kernels")).map(|r| r.2);
        let om = openmesh.map_or("-".to_string(), |o| format!("{:.2}", o / secs));
        let vs_sk = sk.map_or("-".to_string(), |s| format!("{:.2}", s / secs));
        println!("{scheme:<6} {name:<28} {:>10.1} {:>8.2} {om:>9} {vs_sk:>8}", secs * 1e3, cgal / secs);
    }
    if quick {
        println!("(quick run: a smaller sphere, so the CGAL ratios are not comparable)");
    }
}
