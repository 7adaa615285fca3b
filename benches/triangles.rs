//! Loop and √3 subdivision of a 200,000-triangle icosphere (frequency-100
//! geodesic sphere), 3 levels / steps: subla's paths against
//! subdiv-kernels in this process and against CGAL 5.5 and OpenMesh 9.0
//! through the peer timers (`shared/peers` beside the repository: build
//! them once with its `build.sh`), run as child processes in the same
//! session on the same mesh. No ratio uses a figure from elsewhere.
//!
//! `cargo bench -p subla-bench --bench triangles`
//! (`SUBLA_BENCH_QUICK=1`: frequency 30, fewer runs; `SUBLA_PEERS`: the
//! peer timers' folder, if not beside the repository)
//!
//! Each row is the full subdivision — topology and positions (3 channels
//! of `f64`), finest faces made — from the control mesh: subla's modeling
//! mode (build and eval one level at a time), subla's static build plus
//! one eval, subdiv-kernels' `refine_uniform` plus `interpolate`, and the
//! peers' subdivision call (their output is a full halfedge mesh). Times
//! are the minimum of ten runs after one warm-up (the peers report their
//! own minimum of five, run before and after subla's rows: ten in all). Peak bytes per output face (subla rows): the growth
//! of the peak resident size during one run of the row in a fresh child
//! process, over the finest level's faces.

use std::hint::black_box;
use std::num::NonZeroU8;
use std::path::PathBuf;
use std::time::Instant;

use subla_algebra::Par;
use subla_bench::pool;
use subla_loop::{LoopHalfedge, LoopSlak};
use subla_mesh::Mesh;
use subla_scheme::{Plan, Refiner, eval, modeling};
use subla_sqrt3::{Sqrt3Halfedge, Sqrt3Slak};

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

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

/// One subla row: `path` (`halfedge` or `kernels`) of `scheme` in `mode`
/// (`modeling` or `static`), `levels` levels, finest faces made.
fn run_row(scheme: &str, path: &str, mode: &str, mesh: &Mesh, pos: &ndarray::Array2<f64>, levels: u32) -> usize {
    fn go<R: Refiner<Input = Mesh>>(r: &R, mode: &str, mesh: &Mesh, pos: &ndarray::Array2<f64>, levels: u32) -> usize {
        if mode == "modeling" {
            let (p, y) = modeling(r, mesh, pos.view(), levels, Par::Rayon).unwrap();
            let f = p.faces(p.levels(), Par::Rayon).unwrap().face_verts().len();
            return y.nrows() + f;
        }
        let p = r.build(mesh, levels, Par::Rayon).unwrap();
        let y = eval(&p, pos.view(), Par::Rayon).unwrap();
        y.nrows() + p.faces(levels, Par::Rayon).unwrap().face_verts().len()
    }
    match (scheme, path) {
        ("loop", "halfedge") => go(&LoopHalfedge::new(), mode, mesh, pos, levels),
        ("loop", _) => go(&LoopSlak::new(), mode, mesh, pos, levels),
        (_, "halfedge") => go(&Sqrt3Halfedge::new(), mode, mesh, pos, levels),
        _ => go(&Sqrt3Slak::new(), mode, mesh, pos, levels),
    }
}

/// The environment variable that makes this program run one row once and
/// print its peak resident growth (a child process of the bench).
const CHILD: &str = "SUBLA_TRIANGLES_PEAK_ROW";

/// Peak resident growth in bytes of one run of a row in a fresh child
/// process (so that no memory the allocator kept from other rows hides
/// it), where the kernel reports it.
fn peak_bytes(row: &str, threads: usize) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out =
        std::process::Command::new(exe).env(CHILD, row).env("RAYON_NUM_THREADS", threads.to_string()).output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| l.strip_prefix("peak ")?.trim().parse().ok())
}

/// The child's side of [`peak_bytes`].
fn child(row: &str, mesh: &Mesh, pos: &ndarray::Array2<f64>, levels: u32) {
    let mut it = row.split('/');
    let (Some(scheme), Some(path), Some(mode)) = (it.next(), it.next(), it.next()) else { return };
    // The peak so far (making the mesh) must not hide the row's.
    if std::fs::write("/proc/self/clear_refs", "5").is_err() {
        return;
    }
    let base = status_kb("VmRSS:").unwrap_or(0);
    black_box(run_row(scheme, path, mode, mesh, pos, levels));
    if let Some(hwm) = status_kb("VmHWM:") {
        println!("peak {}", hwm.saturating_sub(base) * 1024);
    }
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

/// The peer timers' folder: `SUBLA_PEERS`, else `shared/peers` beside the
/// repository.
fn peers_dir() -> PathBuf {
    std::env::var_os("SUBLA_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers"))
}

/// Milliseconds of one peer timer (`bin/<program>`) on `obj`: its own
/// minimum over `reps` runs of the subdivision call alone.
fn peer_ms(program: &str, obj: &std::path::Path, scheme: &str, levels: u32, reps: u32) -> Option<f64> {
    let bin = peers_dir().join("bin").join(program);
    if !bin.exists() {
        println!("note: {} is not built (run the peers' build.sh); no {program} row", bin.display());
        return None;
    }
    let out = std::process::Command::new(&bin)
        .arg(obj)
        .arg(scheme)
        .arg(levels.to_string())
        .arg("-")
        .arg(reps.to_string())
        .output()
        .ok()?;
    let line = String::from_utf8_lossy(&out.stdout);
    let ms = line.split("\"ms\":").nth(1)?.split([',', '}']).next()?.trim().parse().ok();
    if ms.is_none() {
        println!("note: {program} {scheme} gave no time: {} {}", line.trim(), String::from_utf8_lossy(&out.stderr));
    }
    ms
}

/// `mesh` with positions `pos` as an OBJ file for the peers.
fn write_obj(mesh: &Mesh, pos: &ndarray::Array2<f64>) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let path = std::env::temp_dir().join(format!("subla-triangles-{}.obj", std::process::id()));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for r in pos.rows() {
        writeln!(w, "v {:.17} {:.17} {:.17}", r[0], r[1], r[2])?;
    }
    let t = mesh.topology();
    for f in 0..t.num_faces() {
        let v = t.face(f);
        writeln!(w, "f {} {} {}", v[0] + 1, v[1] + 1, v[2] + 1)?;
    }
    Ok(path)
}

struct Row {
    scheme: &'static str,
    name: String,
    secs: f64,
    peer: bool,
    bytes: Option<u64>,
}

fn main() {
    let quick = std::env::var_os("SUBLA_BENCH_QUICK").is_some();
    let (freq, runs, reps) = if quick { (30, 2, 2) } else { (100, 10, 5) };
    let (mesh, pos) = subla_bench::icosphere(freq);
    let threads = rayon::current_num_threads();
    let levels = 3u32;
    if let Some(row) = std::env::var_os(CHILD) {
        child(&row.to_string_lossy(), &mesh, &pos, levels);
        return;
    }
    println!(
        "triangle bench: icosphere of {} triangles, {} vertices; {levels} levels / steps; {threads} threads",
        mesh.num_faces(),
        mesh.num_vertices()
    );
    let obj = write_obj(&mesh, &pos).ok();
    let p1 = pool(1);
    let pn = pool(threads);
    let mut table: Vec<Row> = Vec::new();
    let mut out_faces = std::collections::HashMap::new();
    for scheme in ["loop", "sqrt3"] {
        let mut row = |name: String, secs: f64, peer: bool, bytes: Option<u64>| {
            println!("{scheme:<6} {name:<36} {:>10.1} ms", secs * 1e3);
            table.push(Row { scheme, name, secs, peer, bytes });
        };
        // The peers first and last, so that a drift of the machine shows.
        let peer_rows = |row: &mut dyn FnMut(String, f64, bool, Option<u64>), when: &str| {
            let Some(obj) = &obj else { return };
            for program in ["cgal_ref", "om_ref"] {
                if let Some(ms) = peer_ms(program, obj, scheme, levels, reps) {
                    let lib = if program == "cgal_ref" { "CGAL" } else { "OpenMesh" };
                    row(format!("{lib} ({when})"), ms / 1e3, true, None);
                }
            }
        };
        peer_rows(&mut row, "before");
        let paths: &[&str] = &["halfedge", "kernels"];
        let faces = match scheme {
            "loop" => LoopSlak::new()
                .build(&mesh, levels, Par::Rayon)
                .map(|p| p.faces(levels, Par::Rayon).map(|f| f.num_faces())),
            _ => Sqrt3Slak::new()
                .build(&mesh, levels, Par::Rayon)
                .map(|p| p.faces(levels, Par::Rayon).map(|f| f.num_faces())),
        };
        if let Ok(Ok(n)) = faces {
            out_faces.insert(scheme, n);
        }
        for path in paths {
            for (label, p, t) in [("all threads", &pn, threads), ("1 thread", &p1, 1)] {
                for (mode, what) in [("modeling", "modeling"), ("static", "build + eval")] {
                    let secs = p.install(|| time(runs, || run_row(scheme, path, mode, &mesh, &pos, levels)));
                    let bytes = peak_bytes(&format!("{scheme}/{path}/{mode}"), t);
                    row(format!("subla {path} {what}, {label}"), secs, false, bytes);
                }
            }
        }
        let sk = match scheme {
            "loop" => subdiv_kernels::Scheme::Loop,
            _ => subdiv_kernels::Scheme::Sqrt3,
        };
        let sk_secs = time(1, || subdiv_kernels(&mesh, &pos, sk, levels as u8));
        row("subdiv-kernels, 1 thread".into(), sk_secs, true, None);
        peer_rows(&mut row, "after");
    }
    if let Some(obj) = &obj {
        let _ = std::fs::remove_file(obj);
    }
    println!("\n== triangle schemes: fastest peer time / subla time (> 1: subla faster); peak bytes per output face");
    println!("{:<6} {:<36} {:>10} {:>10} {:>10}", "scheme", "row", "ms", "vs peer", "B/face");
    for r in &table {
        // The fastest of the peers, CGAL and OpenMesh at their better
        // measurement of the two.
        let peer =
            table.iter().filter(|p| p.scheme == r.scheme && p.peer).map(|p| p.secs).fold(f64::INFINITY, f64::min);
        let ratio = if r.peer || !peer.is_finite() { "-".to_string() } else { format!("{:.2}", peer / r.secs) };
        let faces = out_faces.get(r.scheme).copied().unwrap_or(0).max(1) as f64;
        let bpf = r.bytes.map_or("-".to_string(), |b| format!("{:.0}", b as f64 / faces));
        println!("{:<6} {:<36} {:>10.1} {ratio:>10} {bpf:>10}", r.scheme, r.name, r.secs * 1e3);
    }
    for scheme in ["loop", "sqrt3"] {
        for lib in ["CGAL", "OpenMesh"] {
            let best = table
                .iter()
                .filter(|r| r.scheme == scheme && r.name.starts_with(lib))
                .map(|r| r.secs)
                .fold(f64::INFINITY, f64::min);
            let subla =
                table.iter().filter(|r| r.scheme == scheme && !r.peer).map(|r| r.secs).fold(f64::INFINITY, f64::min);
            if best.is_finite() && subla.is_finite() {
                println!("{scheme}: fastest subla row vs {lib}: {:.2}×", best / subla);
            }
        }
    }
    if quick {
        println!("(quick run: a smaller sphere)");
    }
}
