//! Catmull-Clark, Loop, √3 and refinement-matrix evaluation on the GPU, with the
//! device's copy bandwidth measured in the same run (feature `gpu` of
//! `subla-bench`).
//!
//! ```text
//! cargo bench -p subla-bench --features gpu --bench gpu
//! SUBLA_BENCH_QUICK=1 cargo bench -p subla-bench --features gpu --bench gpu   # smoke run
//! ```
//!
//! Inputs: the paper meshes Bigguy, Car and Imrod (`data/meshes/paper/`)
//! and a generated closed quad torus of 317 × 317 = 100,489 quads, at
//! levels 4–6. Environment: `SUBLA_BENCH_QUICK=1` (Bigguy at levels 1–2),
//! `SUBLA_BENCH_MESHES=Bigguy,torus317` (keep these inputs),
//! `SUBLA_BENCH_LEVELS=4,5` (keep these levels), `SUBLA_GPU_BACKEND` /
//! `SUBLA_GPU_ADAPTER` (which adapter).
//!
//! Each row is the best of several runs (fewer for slow rows), each timed
//! GPU run after about 30 ms of a busy kernel (`warm`: an idle device
//! lowers its shader clock between the bench's short GPU phases):
//!
//! | column | what is timed |
//! |---|---|
//! | build | `CatmarkGpu::build` (control mesh prepared on the host, every level refined on the device), until the device is idle |
//! | eval | `try_eval_into` of `f32` xyz: upload, the kernels of every level, readback of the finest level into an array reused from frame to frame (wall) |
//! | kernels | the GPU time of the eval kernels alone (timestamp queries; wall time without them) |
//! | modeling | `subla_scheme::modeling`: build and eval level by level, one-level plans stepped on the device |
//! | cpu modeling | the same on the CPU (`CatmarkSlak`, all threads), for reference |
//! | GB/s, % copy | bytes the eval kernels move at least (`EvalProfile::bytes`) per second of kernel time, and that rate over the copy bandwidth |
//!
//! The copy bandwidth is a device-to-device copy of 256 MiB (or the largest
//! binding) by a compute kernel and by `copy_buffer_to_buffer`, counting
//! bytes read and written; the best of the two is the reference.
//! The "edge-friend" table times `CatmarkEdgeFriendGpu` (the edge-friend
//! encoding: the first level's connectivity from the host, every later
//! level's connectivity and every level's points by one dispatch each):
//! build, eval (wall: upload, kernels, readback into a reused array), the
//! GPU time of its kernels (`EdgeFriendGpuPlan::profile_eval`), modeling,
//! the least bytes an eval moves (every level's points read and written
//! once, its quads, friends and loop starts read once) over the eval's wall
//! time, and the rate of the points steps alone (their least bytes over
//! their GPU time; all levels, and the finest step) against the copy
//! bandwidth.
//! A second table runs Loop and √3 (`subla-tri-gpu`) on a 200,000-triangle
//! icosphere (`SUBLA_BENCH_ICOSPHERE=freq` changes the frequency), 3 levels.
//! A third table evaluates the per-level refinement matrices `R_i` with
//! the load-balanced SpMV (`GpuRefinement`) and reports its bandwidth over
//! the copy's (matrix bytes: values, column indices and row pointers, plus
//! input and output data). Rows that fail on the device (out of memory, a
//! binding limit) print the error and end that mesh's levels.
//!
//! A table "fvar" refines the paper meshes' texture coordinates (two `f32`
//! channels, corners-plus1) on the device: the face-varying operators
//! (`FVarPlan::operators`) by the same load-balanced SpMV chain, one frame
//! with the data on the device, next to the CPU's `FVarPlan::eval_levels`
//! (`f64`, all threads), levels 2–5 (quick: 2).
//!
//! A fourth table, "limit evaluation", evaluates the limit surface of a
//! feature-adaptive patch table (isolation 3, Gregory end caps) at about
//! 1M samples, a uniform grid of every ptex face (`subla-adaptive-gpu`),
//! on Bigguy and the torus (quick: Bigguy at isolation 2 and a 20 × 20
//! torus, about 10k samples; `SUBLA_BENCH_LIMIT_SAMPLES=n` changes the
//! count, `SUBLA_BENCH_MESHES` keeps the meshes named):
//!
//! | column | what is timed |
//! |---|---|
//! | build | `SparseRefinement::build` and `PatchTable::new` on the CPU, then `GpuLimit::new` (point matrix, upload, kernels), until the device is idle |
//! | locate | `GpuLimit::locate_ordered`: every sample's patch on the host, sorted, uploaded; each mesh has a row per `SampleOrder` (samples grouped by patch, or by kind of patch in the caller's order) |
//! | eval | one frame: control points written to the device, SpMV and limit kernels, until the device is idle (outputs stay there) |
//! | spmv, limit | GPU time of the SpMV passes and of the limit kernels (timestamp queries) |
//! | GB/s, % copy | bytes the passes move at least (`LimitProfile::bytes`: matrix, control and points, samples, distinct patches and points, outputs) per second of kernel time, and that rate over the copy bandwidth |
//! | cpu eval | `PatchTable::evaluate` on the CPU (`f32`, all threads), for reference |
//! | vs cpu f64 | the device's outputs against `PatchTable::evaluate` in `f64`: largest position difference over the bounding-box diagonal / largest derivative difference over the largest derivative |
//!
//! The limit table also runs the defect torus (`torus317d`, about 2 %
//! extraordinary vertices), and is followed by "limit points": the same
//! tables' points computed by each `PointPath` (the composed matrix, one
//! dispatch per level, one dispatch of tiles of 1024, 256 and 8192 rows),
//! with the dispatches, rows and weights each reads, the setup time
//! (`GpuLimit::with_path`), the GPU time of the points' passes and of the
//! limit kernels, the frame's wall time and the agreement with the CPU.
//!
//! A table "solid" evaluates the limit of Catmull-Clark solids' regular
//! cells (`subla-solid-gpu`) on a 32 × 32 × 32 hexahedral grid (quick: 8³),
//! every cell with a control grid, `k³` samples per cell for k = 2, 4, 8,
//! 16, positions in `f32`, by each kernel shape (`Shape::PerSample`,
//! `Shape::PerCell`): the frame's wall time (control points uploaded,
//! kernel, samples read back into a reused array), the kernel's GPU time,
//! samples per second of kernel time, the least bytes it moves
//! (`profile_eval`: control grids, control points, samples) over its time
//! and over the copy bandwidth, the least GPU time of 12 dispatches back
//! to back in one command buffer (`profile_back_to_back`: what a loop of
//! frames on the device sees) and its share of the copy bandwidth, next
//! to the CPU's `RegularEval::eval_into` (`f32`, all threads), with the
//! largest difference from it. Its second part
//! refines a 24³ grid (quick: 6³) one and two levels on the device
//! (`SolidRefineGpu`'s matrices by the balanced SpMV chain, the data kept
//! there): frame time, least bytes (matrices, levels read and written)
//! over the copy bandwidth, and the CPU's SpMV of the same matrices, then
//! the topology of two chained splits on the device (`SolidSplitGpu`)
//! against `VolMesh::split` (all threads), the arrays compared, then the
//! whole refinement on the device from its own connectivity
//! (`SolidRefineOnDevice`: splits and points, no matrix built; mesh in,
//! finest points out) against the CPU plan's build and evaluation. Its
//! third part evaluates by cell class on a solid torus (512 segments,
//! quick 32) and on a grid of cubes split into tetrahedra and refined twice
//! (4³ cubes, quick 2³): regular cells (`SolidLimitGpu`), layered ones
//! (`LayeredLimitGpu`) and irregular ones (`IrregularLimitGpu`), `k` = 4
//! and 8, both kernel shapes, kernel time, samples per second, least bytes
//! over the copy bandwidth, the least time of 12 dispatches back to back
//! and its share of the copy, and the CPU's evaluator of the class
//! (`RegularEval`, `LayeredEval`, `IrregularEval`) in the same run; then
//! all of them at once (`GridLimitGpu`, each class by its kernel, both
//! shapes and the hybrid choice; kernel time summed over the classes, wall
//! time with the uploads, readbacks and reordering) against `GridEval`.
//!
//! `SUBLA_BENCH_TABLES=catmark,edge-friend,triangles,spmv,fvar,limit,solid` keeps only
//! the tables named.

use std::path::Path;
use std::time::Instant;

use ndarray::Array2;
use subla_algebra::Par;
use subla_bench::quad_torus;
use subla_catmark::CatmarkSlak;
use subla_catmark_gpu::{CatmarkEdgeFriendGpu, CatmarkGpu};
use subla_gpu::timing::copy_bandwidth;
use subla_gpu::{GpuBuffer, GpuContext, GpuRefinement};
use subla_mesh::{MeshData, Validation};
use subla_scheme::{Plan, Refiner, modeling};
use subla_tri_gpu::{LoopGpu, Sqrt3Gpu, TriGpuPlan};

/// Whether the table `name` is wanted (`SUBLA_BENCH_TABLES`, all by
/// default).
fn table_on(name: &str) -> bool {
    env_list("SUBLA_BENCH_TABLES").is_none_or(|l| l.iter().any(|x| x == name))
}

/// Best wall time of `runs` calls of `f` (at least one), in seconds.
fn best<R>(runs: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed().as_secs_f64());
        last = Some(r);
    }
    (best, last.expect("at least one run"))
}

/// Runs for a row whose single run took `seconds`.
fn runs_for(seconds: f64) -> usize {
    if seconds > 2.0 {
        1
    } else if seconds > 0.3 {
        3
    } else {
        7
    }
}

fn env_list(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect())
}

fn inputs(quick: bool) -> Vec<(String, MeshData)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/paper");
    let mut names = vec!["Bigguy", "Car", "Imrod", "torus317"];
    if quick {
        names.truncate(1);
    }
    let keep = env_list("SUBLA_BENCH_MESHES");
    names
        .into_iter()
        .filter(|n| keep.as_ref().is_none_or(|k| k.iter().any(|x| x == n)))
        .filter_map(|name| {
            let data = if name == "torus317" {
                quad_torus(317, 317)
            } else {
                let path = dir.join(format!("{name}.obj"));
                match subla_mesh::obj::read_obj(&path, Validation::OpenSubdiv) {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("skipping {name}: {e}");
                        return None;
                    }
                }
            };
            Some((name.to_owned(), data))
        })
        .collect()
}

fn main() {
    // criterion-style arguments (`--bench`) are accepted and ignored.
    let quick = std::env::var_os("SUBLA_BENCH_QUICK").is_some();
    let ctx: &'static GpuContext = match GpuContext::new() {
        Ok(c) => Box::leak(Box::new(c)),
        Err(e) => {
            eprintln!("gpu bench: no GPU ({e}); nothing to measure");
            return;
        }
    };
    let info = ctx.adapter_info();
    println!(
        "adapter: {} ({:?}, {:?}, driver {} {})",
        info.name, info.backend, info.device_type, info.driver, info.driver_info
    );
    println!("timestamp queries: {}", if ctx.has_timestamps() { "yes" } else { "no (kernel times are wall times)" });
    let copy = match copy_bandwidth(ctx, 256 << 20, 10) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gpu bench: copy bandwidth failed: {e}");
            return;
        }
    };
    let copy_rate = copy.bytes_per_second();
    println!(
        "copy bandwidth ({} MiB, read + write): {:.1} GB/s (kernel {} , kernel wall {:.3} ms, copy_buffer_to_buffer {:.3} ms)",
        copy.bytes >> 20,
        copy_rate * 1e-9,
        copy.kernel_seconds.map(|s| format!("{:.3} ms", s * 1e3)).unwrap_or_else(|| "n/a".into()),
        copy.kernel_wall_seconds * 1e3,
        copy.copy_wall_seconds * 1e3
    );

    let levels: Vec<u32> = match env_list("SUBLA_BENCH_LEVELS") {
        Some(l) => l.iter().filter_map(|s| s.parse().ok()).collect(),
        None if quick => vec![1, 2],
        None => vec![4, 5, 6],
    };
    let refiner = CatmarkGpu::new(ctx);
    if table_on("catmark") {
        println!(
            "\n| mesh | L | faces | build ms | eval ms | kernels ms | modeling ms | cpu modeling ms | GB/s | % copy |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
    }
    let mut kernel_tables = String::new();
    for (name, data) in inputs(quick).into_iter().filter(|_| table_on("catmark")) {
        let x: Array2<f32> = data.positions().mapv(|v| v as f32);
        for &l in &levels {
            let build = || -> Result<_, String> {
                let plan = refiner.build(&data.mesh, l, Par::Rayon).map_err(|e| e.to_string())?;
                ctx.wait_idle().map_err(|e| e.to_string())?;
                Ok(plan)
            };
            let start = Instant::now();
            let plan = match build() {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | – | build failed: {e} | | | | | | |");
                    break;
                }
            };
            let first = start.elapsed().as_secs_f64();
            drop(plan);
            let (build_s, plan) = best(runs_for(first) - 1, build);
            let build_s = build_s.min(first);
            let Ok(plan) = plan else {
                println!("| {name} | {l} | – | build failed on a rerun | | | | | | |");
                break;
            };
            let faces = plan.faces(l, Par::Rayon).map(|f| f.num_faces()).unwrap_or(0);
            warm(ctx);
            let profile = plan.profile_eval(x.view());
            let (_, first_profile) = match profile {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | {faces} | {:.2} | eval failed: {e} | | | | | |", build_s * 1e3);
                    break;
                }
            };
            let runs = runs_for(first_profile.wall_seconds);
            let mut prof = first_profile;
            for _ in 1..runs {
                warm(ctx);
                if let Ok((_, p)) = plan.profile_eval(x.view()) {
                    let better =
                        p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds);
                    if better {
                        prof = p;
                    }
                }
            }
            let mut y = Array2::zeros((plan.output_len(), 3));
            let (eval_s, _) = best(runs, || plan.try_eval_into(x.view(), y.view_mut()));
            let kernels_s = prof.gpu_seconds().unwrap_or(prof.wall_seconds);
            let rate = prof.bytes() as f64 / kernels_s;
            drop(plan);
            let (modeling_s, m) =
                best(runs_for(build_s + eval_s), || modeling(&refiner, &data.mesh, x.view(), l, Par::Rayon));
            if let Err(e) = m {
                println!("| {name} | {l} | {faces} | modeling failed: {e} | | | | | | |");
                break;
            }
            // The CPU reference only where it stays under a few seconds.
            let cpu = if faces <= 8_000_000 {
                let (s, _) = best(1, || modeling(&CatmarkSlak, &data.mesh, data.positions(), l, Par::Rayon));
                format!("{:.1}", s * 1e3)
            } else {
                "–".into()
            };
            println!(
                "| {name} | {l} | {faces} | {:.2} | {:.2} | {:.3} | {:.2} | {cpu} | {:.1} | {:.0} % |",
                build_s * 1e3,
                eval_s * 1e3,
                kernels_s * 1e3,
                modeling_s * 1e3,
                rate * 1e-9,
                100.0 * rate / copy_rate
            );
            if Some(&l) == levels.last() {
                use std::fmt::Write as _;
                let _ = writeln!(kernel_tables, "\n{name} L{l}: per kernel (xyz f32)\n");
                let _ = writeln!(kernel_tables, "| level | kernel | µs | MB | GB/s | % copy |");
                let _ = writeln!(kernel_tables, "|---|---|---|---|---|---|");
                for k in &prof.kernels {
                    let (t, r) = match k.seconds {
                        Some(s) if s > 0.0 => (format!("{:.1}", s * 1e6), k.bytes as f64 / s),
                        _ => ("–".into(), f64::NAN),
                    };
                    let _ = writeln!(
                        kernel_tables,
                        "| {} | {} | {t} | {:.2} | {:.1} | {:.0} % |",
                        k.level,
                        k.kernel,
                        k.bytes as f64 * 1e-6,
                        r * 1e-9,
                        100.0 * r / copy_rate
                    );
                }
            }
        }
    }
    print!("{kernel_tables}");
    if table_on("edge-friend") {
        edge_friend(ctx, copy_rate, quick, &levels);
    }
    if table_on("triangles") {
        triangles(ctx, copy_rate, quick);
    }

    // Refinement matrices on the device: the per-level chain R_0 … R_{L-1}
    // with the load-balanced SpMV.
    if table_on("spmv") {
        println!("\nrefinement matrices, load-balanced SpMV (chain of R_i, xyz f32)\n");
        println!("| mesh | L | nnz | apply ms | GB/s | % copy |");
        println!("|---|---|---|---|---|---|");
    }
    let spmv_levels: Vec<u32> = if quick { vec![2] } else { vec![2, 3, 4] };
    for (name, data) in inputs(quick).into_iter().filter(|_| table_on("spmv")) {
        for &l in &spmv_levels {
            let cpu = match CatmarkSlak.build(&data.mesh, l, Par::Rayon) {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | build failed: {e} | | | |");
                    break;
                }
            };
            let chain: Vec<_> = match (0..l).map(|i| cpu.operator(i, Par::Rayon)).collect::<Result<Vec<_>, _>>() {
                Ok(c) => c,
                Err(e) => {
                    println!("| {name} | {l} | operators failed: {e} | | | |");
                    break;
                }
            };
            drop(cpu);
            let refs: Vec<_> = chain.iter().map(|m| m.as_ref()).collect();
            let nnz: usize = chain.iter().map(|m| m.nnz()).sum();
            let bytes: u64 = chain
                .iter()
                .map(|m| (8 * m.nnz() + 4 * (m.nrows() + 1) + 12 * m.ncols() + 12 * m.nrows()) as u64)
                .sum();
            match chain_frame(ctx, &refs, &x_flat(&data), 3) {
                Ok(s) => println!(
                    "| {name} | {l} | {nnz} | {:.3} | {:.1} | {:.0} % |",
                    s * 1e3,
                    bytes as f64 / s * 1e-9,
                    100.0 * bytes as f64 / s / copy_rate
                ),
                Err(e) => {
                    println!("| {name} | {l} | {nnz} | failed: {e} | | |");
                    break;
                }
            }
        }
    }
    if table_on("fvar") {
        fvar(ctx, copy_rate, quick);
    }
    if table_on("limit") {
        limit(ctx, copy_rate, quick);
    }
    if table_on("solid") {
        solid(ctx, copy_rate, quick);
        solid_refinement(ctx, copy_rate, quick);
        solid_classes(ctx, copy_rate, quick);
    }
}

/// The "solid" table's third part: the limit by cell class on a solid torus
/// (an O-grid of a 4 × 4 core and 3 rings swept in 512 segments, quick 32:
/// regular cells and layered ones of valence 3) and on a grid of cubes
/// split into tetrahedra and refined twice (`shapes::tetrahedral_grid(4)`,
/// quick 2: with irregular cells), each class by its evaluator and both
/// kernel shapes, positions in `f32`, against the CPU's evaluator of the
/// class in the same run.
fn solid_classes(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    use subla_scheme::Refiner;
    let segments = if quick { 32 } else { 512 };
    if let Ok(t) = subla_volume::shapes::torus(4, 3, segments, 3.0, 1.0) {
        let x: Array2<f32> = t.vertices.mapv(|v| v as f32);
        solid_class_table(ctx, copy_rate, &format!("torus, {segments} segments"), &t.mesh, &x);
    }
    let n = if quick { 2 } else { 4 };
    let Ok(d) = subla_volume::shapes::tetrahedral_grid(n) else { return };
    let Ok(plan) = subla_solid::CatmarkSolid::default().build(&d.mesh, 2, Par::Rayon) else { return };
    let Ok(x) = subla_scheme::eval(&plan, d.vertices.view(), Par::Rayon) else { return };
    let x: Array2<f32> = x.mapv(|v| v as f32);
    solid_class_table(ctx, copy_rate, &format!("{n}³ cubes of 6 tetrahedra, refined twice"), plan.mesh(2), &x);
}

/// One model's rows of [`solid_classes`].
fn solid_class_table(ctx: &'static GpuContext, copy_rate: f64, name: &str, m: &subla_volume::VolMesh, x: &Array2<f32>) {
    use subla_solid::irregular::IrregularEval;
    use subla_solid::layered::LayeredEval;
    use subla_solid::limit::{CellClass, GridEval, Quantity, RegularEval, classify};
    use subla_solid_gpu::{GridLimitGpu, IrregularLimitGpu, LayeredLimitGpu, Shape, SolidLimitGpu};
    let pick = |want: &[CellClass]| -> Vec<u32> {
        (0..m.num_cells()).filter(|&c| want.contains(&classify(m, c))).map(|c| c as u32).collect()
    };
    let regular = pick(&[CellClass::Regular, CellClass::RegularBoundary]);
    let layered = pick(&[CellClass::Layered, CellClass::LayeredBoundary]);
    let irregular = pick(&[CellClass::Irregular]);
    println!(
        "\nsolid limit by class: {name}, {} cells: {} regular, {} layered, {} irregular (positions, f32)",
        m.num_cells(),
        regular.len(),
        layered.len(),
        irregular.len()
    );
    println!(
        "\n| class | k | samples | shape | kernel ms | Msamples/s (kernel) | least MB | GB/s | % copy | back to back ms | % copy | cpu ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for k in [4usize, 8] {
        for (class, cells) in [("regular", &regular), ("layered", &layered), ("irregular", &irregular)] {
            if cells.is_empty() {
                continue;
            }
            let samples = cells.len() * k * k * k;
            let mut want = Array2::<f32>::zeros((samples, 3));
            let cpu_s = match class {
                "regular" => {
                    let Ok(ev) = RegularEval::new(m, cells, k, Par::Rayon) else { continue };
                    best(3, || ev.eval_into(x.view(), Quantity::Position, want.view_mut(), Par::Rayon)).0
                }
                "layered" => {
                    let Ok(ev) = LayeredEval::new(m, cells, k, Par::Rayon) else { continue };
                    best(3, || ev.eval_into(x.view(), Quantity::Position, want.view_mut(), Par::Rayon)).0
                }
                _ => {
                    let Ok(ev) = IrregularEval::new(m, cells, k, Par::Rayon) else { continue };
                    best(3, || ev.eval_into(x.view(), Quantity::Position, want.view_mut(), Par::Rayon)).0
                }
            };
            // The class's evaluator, made once.
            let (reg, lay, irr) = match class {
                "regular" => (SolidLimitGpu::new(ctx, m, cells, k).ok(), None, None),
                "layered" => (None, LayeredLimitGpu::new(ctx, m, cells, k).ok(), None),
                _ => (None, None, IrregularLimitGpu::new(ctx, m, cells, k).ok()),
            };
            for shape in [Shape::PerSample, Shape::PerCell] {
                let run = || match (&reg, &lay, &irr) {
                    (Some(g), _, _) => g.profile_eval(ctx, x.view(), Quantity::Position, shape).ok().map(|r| r.1),
                    (_, Some(g), _) => g.profile_eval(ctx, x.view(), Quantity::Position, shape).ok().map(|r| r.1),
                    (_, _, Some(g)) => g.profile_eval(ctx, x.view(), Quantity::Position, shape).ok().map(|r| r.1),
                    _ => None,
                };
                // The kernel 12 times back to back (a loop of frames).
                warm(ctx);
                let b2b = match (&reg, &lay, &irr) {
                    (Some(g), _, _) => g.profile_back_to_back(ctx, x.view(), Quantity::Position, shape, 12).ok(),
                    (_, Some(g), _) => g.profile_back_to_back(ctx, x.view(), Quantity::Position, shape, 12).ok(),
                    (_, _, Some(g)) => g.profile_back_to_back(ctx, x.view(), Quantity::Position, shape, 12).ok(),
                    _ => None,
                }
                .and_then(|(_, t)| t.into_iter().min_by(f64::total_cmp));
                class_row(class, k, samples, shape, (best_profile(ctx, run), b2b), copy_rate, cpu_s);
            }
        }
        // Every class at once, each by its kernel (`GridLimitGpu`), against
        // the CPU's `GridEval`.
        let all: Vec<u32> = regular.iter().chain(&layered).chain(&irregular).copied().collect();
        let (Ok(cpu), Ok(gpu)) = (GridEval::new(m, &all, k, Par::Rayon), GridLimitGpu::new(ctx, m, &all, k)) else {
            continue;
        };
        let samples = gpu.num_samples();
        let mut want = Array2::<f32>::zeros((samples, 3));
        let cpu_s = best(3, || cpu.eval_into(x.view(), Quantity::Position, want.view_mut(), Par::Rayon)).0;
        for shape in [Shape::PerSample, Shape::PerCell, Shape::Auto] {
            let prof =
                best_profile(ctx, || gpu.profile_eval(ctx, x.view(), Quantity::Position, shape).ok().map(|r| r.1));
            let class =
                prof.as_ref().map_or("all".to_string(), |p| format!("all (wall {:.3} ms)", p.wall_seconds * 1e3));
            class_row(&class, k, samples, shape, (prof, None), copy_rate, cpu_s);
        }
    }
}

/// The seconds a profile counts: its kernels' GPU time where timed, else
/// its wall time.
fn profile_seconds(p: &subla_gpu::timing::EvalProfile) -> f64 {
    p.gpu_seconds().unwrap_or(p.wall_seconds)
}

/// The fastest of seven profiled runs, each after [`warm`]; `None` where
/// every run failed.
fn best_profile(
    ctx: &GpuContext,
    run: impl Fn() -> Option<subla_gpu::timing::EvalProfile>,
) -> Option<subla_gpu::timing::EvalProfile> {
    (0..7)
        .filter_map(|_| {
            warm(ctx);
            run()
        })
        .min_by(|a, b| profile_seconds(a).total_cmp(&profile_seconds(b)))
}

/// A kernel that keeps every shader core busy: a long chain of dependent
/// multiply-adds per invocation, its result stored only where it cannot
/// be (so the compiler keeps the chain).
const SPIN: &str = r"
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@group(0) @binding(1) var<uniform> steps: vec4<u32>;

@compute @workgroup_size(256)
fn spin(@builtin(global_invocation_id) id: vec3<u32>) {
    var a = f32(id.x & 255u) * 0.001;
    for (var i = 0u; i < steps.x; i = i + 1u) {
        a = a * 0.999999 + 0.000001;
    }
    if (a < -1.0) {
        sink[id.x] = a;
    }
}
";

/// Keeps the device busy for at least 30 ms, so that the timed run after it
/// starts at the clocks of a loaded device. Between the bench's short GPU
/// phases an idle device lowers its shader clock (an H100 went from 1980
/// to 345 MHz within half a second, its memory clock unchanged), which
/// slows kernels bound by arithmetic or latency several-fold and makes
/// rows of one run incomparable. Does nothing where the kernel does not
/// compile.
fn warm(ctx: &GpuContext) {
    use std::sync::OnceLock;
    use subla_gpu::program::{self, Program};
    static SPINNER: OnceLock<Option<(Program, GpuBuffer<f32>)>> = OnceLock::new();
    let spinner = SPINNER.get_or_init(|| {
        let program = program::compile(ctx, "bench spin", SPIN, &["spin"]).ok()?;
        let sink = GpuBuffer::<f32>::zeroed(ctx, 256 * 1024).ok()?;
        Some((program, sink))
    });
    let Some((program, sink)) = spinner else { return };
    // Work per batch doubles from a small start (a software rasteriser
    // takes the first ones in milliseconds) to 256k invocations of 100k
    // steps.
    let (mut items, mut steps) = (256 * 64u64, 1000u32);
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.03 {
        let params = program::uniform(ctx, "bench spin", &[steps, 0, 0, 0]);
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        for _ in 0..4 {
            if program::dispatch(ctx, &mut encoder, &program[0], &[Some(sink.as_wgpu()), Some(&params)], items).is_err()
            {
                return;
            }
        }
        ctx.queue().submit([encoder.finish()]);
        if ctx.wait_idle().is_err() {
            return;
        }
        if items < 256 * 1024 {
            items *= 2;
        } else {
            steps = (steps * 2).min(100_000);
        }
    }
}

/// The back-to-back columns of a row: the least time of the dispatches in
/// ms and, for `bytes` moved, its share of the copy bandwidth; dashes
/// where there is no time.
fn back_to_back_cells(seconds: Option<f64>, bytes: u64, copy_rate: f64) -> (String, String) {
    seconds.map_or(("–".to_string(), "–".to_string()), |t| {
        (format!("{:.3}", t * 1e3), format!("{:.0} %", 100.0 * bytes as f64 / t / copy_rate))
    })
}

/// One row of the class table: the profiled run and the least time of
/// the back-to-back dispatches (none for the `all` rows).
fn class_row(
    class: &str,
    k: usize,
    samples: usize,
    shape: subla_solid_gpu::Shape,
    (prof, back_to_back): (Option<subla_gpu::timing::EvalProfile>, Option<f64>),
    copy_rate: f64,
    cpu_s: f64,
) {
    let Some(prof) = prof else {
        println!("| {class} | {k} | {samples} | {shape:?} failed | | | | | | | | |");
        return;
    };
    let kernel_s = profile_seconds(&prof);
    let rate = prof.bytes() as f64 / kernel_s;
    let (b2b_ms, b2b_copy) = back_to_back_cells(back_to_back, prof.bytes(), copy_rate);
    println!(
        "| {class} | {k} | {samples} | {shape:?} | {:.3} | {:.0} | {:.1} | {:.1} | {:.0} % | {b2b_ms} | {b2b_copy} | {:.3} |",
        kernel_s * 1e3,
        samples as f64 / kernel_s * 1e-6,
        prof.bytes() as f64 * 1e-6,
        rate * 1e-9,
        100.0 * rate / copy_rate,
        cpu_s * 1e3
    );
}

/// The "solid" table: regular cells of a hexahedral grid by each kernel
/// shape, against the CPU.
fn solid(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    use subla_solid::limit::{Quantity, RegularEval, control_grid};
    use subla_solid_gpu::{Shape, SolidLimitGpu};
    let n = if quick { 8 } else { 32 };
    let grid = match subla_volume::shapes::hex_grid(n, n, n) {
        Ok(g) => g,
        Err(e) => {
            println!("solid: no grid: {e}");
            return;
        }
    };
    let m = &grid.mesh;
    let cells: Vec<u32> = (0..m.num_cells()).filter(|&c| control_grid(m, c).is_some()).map(|c| c as u32).collect();
    let x: Array2<f32> = grid.vertices.mapv(|v| v as f32);
    println!("\nsolid limit: {n}³ grid, {} cells with a control grid (positions, f32)", cells.len());
    println!(
        "\n| k | samples | shape | frame ms | kernel ms | Msamples/s (kernel) | least MB | GB/s | % copy | back to back ms | % copy | cpu ms | vs cpu |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for k in [2usize, 4, 8, 16] {
        let cpu = match RegularEval::new(m, &cells, k, Par::Rayon) {
            Ok(ev) => ev,
            Err(e) => {
                println!("| {k} | – | cpu failed: {e} | | | | |");
                continue;
            }
        };
        let samples = cpu.num_samples();
        let mut want = Array2::<f32>::zeros((samples, 3));
        let (cpu_s, ()) = best(3, || cpu.eval_into(x.view(), Quantity::Position, want.view_mut(), Par::Rayon));
        let gpu = match SolidLimitGpu::new(ctx, m, &cells, k) {
            Ok(g) => g,
            Err(e) => {
                println!("| {k} | {samples} | gpu failed: {e} | | | | |");
                continue;
            }
        };
        for shape in [Shape::PerSample, Shape::PerCell] {
            warm(ctx);
            let first = gpu.profile_eval(ctx, x.view(), Quantity::Position, shape);
            let Ok((first, mut prof)) = first else {
                println!("| {k} | {samples} | {shape:?} failed | | | | | | | | |");
                continue;
            };
            let diff = first.iter().zip(want.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            for _ in 0..6 {
                warm(ctx);
                if let Ok((_, p)) = gpu.profile_eval(ctx, x.view(), Quantity::Position, shape) {
                    if p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds) {
                        prof = p;
                    }
                }
            }
            let mut y = Array2::zeros((samples, 3));
            let (s, _) = best(5, || gpu.eval_into(ctx, x.view(), Quantity::Position, shape, y.view_mut()));
            let kernel_s = prof.gpu_seconds().unwrap_or(prof.wall_seconds);
            let rate = prof.bytes() as f64 / kernel_s;
            // The kernel dispatched 12 times in one command buffer: what a
            // loop of frames on the device sees.
            warm(ctx);
            let b2b = gpu
                .profile_back_to_back(ctx, x.view(), Quantity::Position, shape, 12)
                .ok()
                .and_then(|(_, t)| t.into_iter().min_by(f64::total_cmp));
            let (b2b_ms, b2b_copy) = back_to_back_cells(b2b, prof.bytes(), copy_rate);
            println!(
                "| {k} | {samples} | {shape:?} | {:.3} | {:.3} | {:.0} | {:.1} | {:.1} | {:.0} % | {b2b_ms} | {b2b_copy} | {:.3} | {diff:.1e} |",
                s * 1e3,
                kernel_s * 1e3,
                samples as f64 / kernel_s * 1e-6,
                prof.bytes() as f64 * 1e-6,
                rate * 1e-9,
                100.0 * rate / copy_rate,
                cpu_s * 1e3
            );
        }
    }
}

/// Catmull-Clark solid refinement on the device (the "solid" table's
/// second part): a plan's matrices applied in turn by the balanced SpMV
/// chain, positions in `f32`, against the CPU's SpMV of the same matrices
/// in the same run.
fn solid_refinement(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    use subla_scheme::Refiner;
    let n = if quick { 6 } else { 24 };
    let Ok(grid) = subla_volume::shapes::hex_grid(n, n, n) else { return };
    println!(
        "\nsolid refinement: {n}³ grid, positions (f32); frame: the levels applied on the device, data kept there"
    );
    println!("\n| levels | cells out | rows out | nonzeros | frame ms | least MB | GB/s | % copy | cpu ms | vs cpu |");
    // Positions in f32, standard layout: the CPU's input and the device's.
    let x32v = grid.vertices.mapv(|v| v as f32);
    let x32 = x32v.as_slice().expect("a fresh array is contiguous");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for levels in [1u32, 2] {
        let plan = match subla_solid::CatmarkSolid::default().build(&grid.mesh, levels, Par::Rayon) {
            Ok(p) => p,
            Err(e) => {
                println!("| {levels} | build failed: {e} | | | | | | | | |");
                continue;
            }
        };
        let refs: Vec<_> = plan.operators().iter().map(|r| r.as_ref()).collect();
        let (cpu_s, want) = best(5, || subla_scheme::eval(&plan, x32v.view(), Par::Rayon));
        let Ok(want) = want else { continue };
        let frame = chain_frame(ctx, &refs, x32, 3);
        let got = subla_solid_gpu::SolidRefineGpu::new(ctx, &plan, 3).and_then(|mut g| g.eval(ctx, x32v.view()));
        let (Ok(frame), Ok(got)) = (frame, got) else {
            println!("| {levels} | device failed | | | | | | | | |");
            continue;
        };
        let diff = got.iter().zip(want.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        let nnz: usize = refs.iter().map(|r| r.nnz()).sum();
        let bytes: usize = refs.iter().map(|r| 8 * r.nnz() + 4 * (r.nrows() + 1) + 12 * (r.nrows() + r.ncols())).sum();
        let rate = bytes as f64 / frame;
        println!(
            "| {levels} | {} | {} | {nnz} | {:.3} | {:.1} | {:.1} | {:.0} % | {:.3} | {diff:.1e} |",
            plan.mesh(levels).num_cells(),
            want.nrows(),
            frame * 1e3,
            bytes as f64 * 1e-6,
            rate * 1e-9,
            100.0 * rate / copy_rate,
            cpu_s * 1e3
        );
    }
    println!("\nsolid topology on the device: {n}³ grid, two chained splits");
    solid_topology(ctx, &grid.mesh);
    println!("\nsolid refinement from the connectivity on the device: {n}³ grid, mesh in → finest points out");
    solid_on_device(ctx, &grid);
}

/// A whole Catmull-Clark solid refinement on the device
/// (`SolidRefineOnDevice`: each level's connectivity by the split kernels,
/// its points from that connectivity by `solid_points.wgsl`, no matrix
/// built): from the control mesh and points uploaded to the finest points
/// read back, against the CPU's plan built and evaluated (all threads,
/// `f32`) in the same run; the largest difference.
fn solid_on_device(ctx: &'static GpuContext, grid: &subla_volume::VolumeData) {
    use subla_scheme::Refiner;
    use subla_solid_gpu::SolidRefineOnDevice;
    println!("\n| levels | rows out | device ms | cpu build + eval ms | vs cpu | max diff |");
    println!("|---|---|---|---|---|---|");
    let Ok(device) = SolidRefineOnDevice::new(ctx, subla_solid::VertexRule::Layered) else {
        println!("| – | device failed | | | | |");
        return;
    };
    let x = grid.vertices.mapv(|v| v as f32);
    for levels in [1u32, 2] {
        let (dev_s, got) = best(5, || device.refine(ctx, &grid.mesh, x.view(), levels));
        let (cpu_s, want) = best(5, || {
            let plan = subla_solid::CatmarkSolid::default().build(&grid.mesh, levels, Par::Rayon)?;
            subla_scheme::eval(&plan, x.view(), Par::Rayon)
        });
        let (Ok((_, got)), Ok(want)) = (got, want) else {
            println!("| {levels} | failed | | | | |");
            continue;
        };
        let diff = got.iter().zip(want.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        println!(
            "| {levels} | {} | {:.3} | {:.3} | {:.2} | {diff:.1e} |",
            want.nrows(),
            dev_s * 1e3,
            cpu_s * 1e3,
            cpu_s / dev_s
        );
    }
}

/// The topology of Catmull-Clark solid splits on the device
/// (`SolidSplitGpu`: cells, faces, edges numbered as the CPU numbers them,
/// the data kept there, each split chained on the last), against the CPU's
/// `VolMesh::split` (all threads) in the same run; the arrays compared.
fn solid_topology(ctx: &'static GpuContext, grid: &subla_volume::VolMesh) {
    use subla_solid_gpu::{GpuSolidTopology, SolidSplitGpu, SolidTopologyArrays};
    println!("\n| split | cells out | device ms | cpu ms | vs cpu | arrays |");
    println!("|---|---|---|---|---|---|");
    let (Ok(splitter), Ok(mut topo)) = (SolidSplitGpu::new(ctx), GpuSolidTopology::upload(ctx, grid)) else {
        println!("| – | device failed | | | | |");
        return;
    };
    let mut m = grid.clone();
    for level in 1..=2 {
        let (dev_s, child) = best(5, || {
            let t = splitter.split(ctx, &topo)?;
            ctx.wait_idle()?;
            Ok::<_, subla_solid_gpu::SolidGpuError>(t)
        });
        let (cpu_s, cm) = best(5, || m.split(Par::Rayon));
        let (Ok(child), Ok(cm)) = (child, cm) else {
            println!("| {level} | failed | | | | |");
            return;
        };
        let same = child.download(ctx).is_ok_and(|a| a == SolidTopologyArrays::of(&cm));
        println!(
            "| {level} | {} | {:.3} | {:.3} | {:.2} | {} |",
            cm.num_cells(),
            dev_s * 1e3,
            cpu_s * 1e3,
            cpu_s / dev_s,
            if same { "equal" } else { "DIFFER" }
        );
        (topo, m) = (child, cm);
    }
}

/// The best time of one frame of the chain `refs` on the device (`d`
/// channels of `x` uploaded once, the chain applied with the data staying
/// there, until the device is idle), after a first run.
fn chain_frame(
    ctx: &'static GpuContext,
    refs: &[subla_algebra::CsrRef<'_, f64>],
    x: &[f32],
    d: usize,
) -> Result<f64, subla_gpu::GpuError> {
    let r = GpuRefinement::from_chain(ctx, refs, d)?;
    let input = GpuBuffer::upload(ctx, x)?;
    let mut out = r.output_buffer(ctx)?;
    r.apply_device(ctx, &input, &mut out)?;
    ctx.wait_idle()?;
    let (s, res) = best(7, || -> Result<(), subla_gpu::GpuError> {
        r.apply_device(ctx, &input, &mut out)?;
        ctx.wait_idle()
    });
    res.map(|()| s)
}

/// Face-varying values (the paper meshes' texture coordinates, two `f32`
/// channels, mode corners-plus1) refined on the device: the channel's
/// operators (`FVarPlan::operators`) by the load-balanced SpMV chain, one
/// frame with the data on the device; the CPU's `eval_levels` (all
/// threads, `f64`, buffers reused) for reference.
fn fvar(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    use subla_catmark::fvar::{self as cfvar, QuadScheme};
    println!("\nface-varying values (texture coordinates, 2 channels), load-balanced SpMV chain\n");
    println!("| mesh | L | values | nnz | apply ms | GB/s | % copy | cpu eval ms |");
    println!("|---|---|---|---|---|---|---|---|");
    let levels: Vec<u32> = if quick { vec![2] } else { vec![2, 3, 4, 5] };
    for (name, data) in inputs(quick) {
        let Some(fv) = data.texcoords.as_ref().filter(|fv| fv.values.nrows() * 4 >= data.mesh.num_vertices()) else {
            continue;
        };
        let uv = fv.values.slice(ndarray::s![.., 0..2]).to_owned();
        for &l in &levels {
            let mode = subla_mesh::FVarLinearInterpolation::CornersPlus1;
            let plan = match cfvar::build(&data.mesh, &fv.indices, uv.nrows(), l, mode, QuadScheme::Catmark, Par::Rayon)
            {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | build failed: {e} | | | | | |");
                    break;
                }
            };
            let refs: Vec<_> = plan.operators().iter().map(|m| m.as_ref()).collect();
            let nnz: usize = refs.iter().map(|m| m.nnz()).sum();
            let bytes: u64 =
                refs.iter().map(|m| (8 * m.nnz() + 4 * (m.nrows() + 1) + 8 * m.ncols() + 8 * m.nrows()) as u64).sum();
            let cpu =
                plan.level_buffers::<f64>(2).map(|mut b| best(7, || plan.eval_levels(uv.view(), &mut b, Par::Rayon)).0);
            let x: Vec<f32> = uv.iter().map(|&v| v as f32).collect();
            let cpu_ms = cpu.map_or_else(|e| format!("failed: {e}"), |s| format!("{:.3}", s * 1e3));
            match chain_frame(ctx, &refs, &x, 2) {
                Ok(s) => println!(
                    "| {name} | {l} | {} | {nnz} | {:.3} | {:.1} | {:.0} % | {cpu_ms} |",
                    plan.output_len(),
                    s * 1e3,
                    bytes as f64 / s * 1e-9,
                    100.0 * bytes as f64 / s / copy_rate
                ),
                Err(e) => {
                    println!("| {name} | {l} | {} | {nnz} | failed: {e} | | | {cpu_ms} |", plan.output_len());
                    break;
                }
            }
        }
    }
}

/// Loop and √3 on the device: a frequency-`freq` icosphere (200,000
/// triangles at the default 100), 3 levels / steps. Build is the CPU build
/// plus the upload; eval, kernels and bandwidth as in the Catmull-Clark
/// table; the CPU eval (all threads) for reference.
fn triangles(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    let freq = std::env::var("SUBLA_BENCH_ICOSPHERE").ok().and_then(|s| s.parse().ok()).unwrap_or(if quick {
        10
    } else {
        100
    });
    let (mesh, pos) = subla_bench::icosphere(freq);
    let x = pos.mapv(|v| v as f32);
    println!("\nLoop and sqrt(3) on the device: icosphere of {} triangles (xyz f32)\n", mesh.num_faces());
    println!("| scheme | L | faces | build ms | eval ms | kernels ms | cpu eval ms | GB/s | % copy |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let loop_gpu = LoopGpu::new(ctx);
    let sqrt3_gpu = Sqrt3Gpu::new(ctx);
    for l in 1..=3u32 {
        row(ctx, "loop", &loop_gpu, &mesh, x.view(), l, copy_rate);
        row(ctx, "sqrt3", &sqrt3_gpu, &mesh, x.view(), l, copy_rate);
    }
}

/// One row of the triangle table.
fn row<P: Plan, R: Refiner<Input = subla_mesh::Mesh, Plan = TriGpuPlan<P>>>(
    ctx: &GpuContext,
    name: &str,
    refiner: &R,
    mesh: &subla_mesh::Mesh,
    x: ndarray::ArrayView2<'_, f32>,
    l: u32,
    copy_rate: f64,
) {
    let (build_s, plan) = best(3, || refiner.build(mesh, l, Par::Rayon));
    let plan = match plan {
        Ok(p) => p,
        Err(e) => return println!("| {name} | {l} | – | build failed: {e} | | | | | |"),
    };
    let faces = plan.faces(l, Par::Rayon).map(|f| f.num_faces()).unwrap_or(0);
    warm(ctx);
    let mut prof = match plan.profile_eval(x) {
        Ok((_, p)) => p,
        Err(e) => return println!("| {name} | {l} | {faces} | {:.1} | eval failed: {e} | | | | |", build_s * 1e3),
    };
    let runs = runs_for(prof.wall_seconds);
    for _ in 1..runs {
        warm(ctx);
        if let Ok((_, p)) = plan.profile_eval(x) {
            if p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds) {
                prof = p;
            }
        }
    }
    let mut y = Array2::zeros((plan.level_len(l), 3));
    let (eval_s, _) = best(runs, || plan.try_eval_into(x, y.view_mut()));
    let (cpu_s, _) = best(runs_for(eval_s).min(5), || subla_scheme::eval(plan.cpu(), x, Par::Rayon).unwrap());
    let kernels_s = prof.gpu_seconds().unwrap_or(prof.wall_seconds);
    let rate = prof.bytes() as f64 / kernels_s;
    println!(
        "| {name} | {l} | {faces} | {:.1} | {:.2} | {:.3} | {:.1} | {:.1} | {:.0} % |",
        build_s * 1e3,
        eval_s * 1e3,
        kernels_s * 1e3,
        cpu_s * 1e3,
        rate * 1e-9,
        100.0 * rate / copy_rate
    );
}

/// The largest difference between the CPU's `f64` values and the device's
/// `f32` ones, over the values the CPU has (not the holes' NaN).
fn worst(want: &Array2<f64>, got: &[f32]) -> f64 {
    want.iter().zip(got).filter(|(a, _)| a.is_finite()).fold(0f64, |m, (a, b)| m.max((a - f64::from(*b)).abs()))
}

/// The largest magnitude of the finite values.
fn largest(values: &Array2<f64>) -> f64 {
    values.iter().filter(|v| v.is_finite()).fold(0f64, |m, v| m.max(v.abs()))
}

/// The control positions as row-major `f32`.
fn x_flat(data: &MeshData) -> Vec<f32> {
    data.positions().iter().map(|&v| v as f32).collect()
}

/// The limit-evaluation table (see the module docs): Bigguy and the torus
/// at isolation 3, about 1M samples on a uniform grid of every ptex face.
fn limit(ctx: &'static GpuContext, copy_rate: f64, quick: bool) {
    use subla_adaptive::{EndCap, PatchTable, SparseRefinement, grid};
    use subla_adaptive_gpu::{GpuLimit, LimitBuffers, SampleOrder};

    let target: usize = std::env::var("SUBLA_BENCH_LIMIT_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if quick { 10_000 } else { 1_000_000 });
    let (iso, torus) = if quick { (2, 20) } else { (3, 317) };
    println!(
        "\nlimit evaluation: patch table (isolation {iso}, Gregory end caps), xyz f32, uniform grid over the ptex faces\n"
    );
    println!(
        "| mesh | patches | points | nnz | samples | build ms | locate ms | eval ms | spmv ms | limit ms | MB | GB/s | % copy | cpu eval ms | vs cpu f64 (pos / der) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let bigguy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/paper/Bigguy.obj");
    let mut meshes = Vec::new();
    match subla_mesh::obj::read_obj(&bigguy, Validation::OpenSubdiv) {
        Ok(d) => meshes.push(("Bigguy".to_owned(), d)),
        Err(e) => eprintln!("skipping Bigguy: {e}"),
    }
    meshes.push((format!("torus{torus}"), quad_torus(torus, torus)));
    // The same torus with about 2 % extraordinary vertices: refined around
    // them (the regular torus has patches on its control points alone).
    meshes.push((
        format!("torus{torus}d"),
        subla_bench::quad_torus_with_defects(torus, torus, if quick { 5 } else { 7 }),
    ));
    if let Some(keep) = env_list("SUBLA_BENCH_MESHES") {
        meshes.retain(|(name, _)| keep.iter().any(|k| k == name));
    }
    let mut point_paths = Vec::new();
    for (name, data) in meshes {
        let build = || -> Result<(PatchTable, GpuLimit), String> {
            let refinement = SparseRefinement::build(&data.mesh, iso, None).map_err(|e| e.to_string())?;
            let table = PatchTable::new(refinement, EndCap::GregoryBasis).map_err(|e| e.to_string())?;
            let limit = GpuLimit::new(ctx, &table).map_err(|e| e.to_string())?;
            ctx.wait_idle().map_err(|e| e.to_string())?;
            Ok((table, limit))
        };
        let start = Instant::now();
        let first = build();
        let first_s = start.elapsed().as_secs_f64();
        let (build_s, built) = if first_s > 2.0 { (first_s, first) } else { best(3, build) };
        let build_s = build_s.min(first_s);
        let (table, mut limit) = match built {
            Ok(b) => b,
            Err(e) => {
                println!("| {name} | build failed: {e} | | | | | | | | | | | | |");
                continue;
            }
        };
        let nptex = table.refinement().num_ptex_faces();
        let k = ((target as f64 / f64::from(nptex)).sqrt().round() as u32).max(2);
        let samples = grid(nptex, k);
        for order in [SampleOrder::ByPatch, SampleOrder::ByKind] {
            let (locate_s, located) =
                best(if quick { 1 } else { 3 }, || limit.locate_ordered(ctx, &table, &samples, order));
            let row = |limit: &mut GpuLimit| -> Result<String, subla_adaptive_gpu::AdaptiveGpuError> {
                let located = located.as_ref().map_err(|e| subla_gpu::GpuError::Internal {
                    operation: "limit bench",
                    message: format!("locate failed: {e}"),
                })?;
                let x = x_flat(&data);
                let mut control = GpuBuffer::upload(ctx, &x)?;
                let mut out = LimitBuffers::new(ctx, located, 3)?;
                warm(ctx);
                let mut prof = limit.profile(ctx, &control, 3, located, &mut out)?;
                for _ in 0..if quick { 2 } else { 9 } {
                    warm(ctx);
                    let p = limit.profile(ctx, &control, 3, located, &mut out)?;
                    if p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds) {
                        prof = p;
                    }
                }
                let (eval_s, r) =
                    best(if quick { 3 } else { 10 }, || -> Result<(), subla_adaptive_gpu::AdaptiveGpuError> {
                        control.write(ctx, &x)?;
                        limit.evaluate(ctx, &control, 3, located, &mut out)?;
                        Ok(ctx.wait_idle()?)
                    });
                r?;
                let kernels_s = prof.gpu_seconds().unwrap_or(prof.wall_seconds);
                let rate = prof.bytes() as f64 / kernels_s;
                let ms = |s: Option<f64>| s.map_or("–".to_owned(), |s| format!("{:.3}", s * 1e3));
                let xf = data.positions().mapv(|v| v as f32);
                let (cpu_s, cpu) = best(1, || table.evaluate(xf.view(), &samples, Par::Rayon));
                let cpu = if cpu.is_ok() { format!("{:.1}", cpu_s * 1e3) } else { "failed".to_owned() };
                // The device's result against the CPU's f64 evaluation: largest
                // difference over the bounding-box diagonal (positions) and over
                // the largest derivative (derivatives).
                let got = out.download(ctx)?;
                let agree = match table.evaluate(data.positions(), &samples, Par::Rayon) {
                    Ok(want) => {
                        let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
                        for r in want.position.outer_iter().filter(|r| r[0].is_finite()) {
                            for c in 0..3 {
                                lo[c] = lo[c].min(r[c]);
                                hi[c] = hi[c].max(r[c]);
                            }
                        }
                        let diag = (0..3).map(|c| (hi[c] - lo[c]).powi(2)).sum::<f64>().sqrt();
                        let dmax = largest(&want.du).max(largest(&want.dv));
                        format!(
                            "{:.1e} / {:.1e}",
                            worst(&want.position, &got.position) / diag,
                            worst(&want.du, &got.du).max(worst(&want.dv, &got.dv)) / dmax
                        )
                    }
                    Err(e) => format!("cpu failed: {e}"),
                };
                Ok(format!(
                    "{:.1} | {:.1} | {:.3} | {} | {} | {:.1} | {:.1} | {:.0} % | {cpu} | {agree} |",
                    build_s * 1e3,
                    locate_s * 1e3,
                    eval_s * 1e3,
                    ms(prof.seconds_of("spmv")),
                    ms(prof.seconds_of("limit")),
                    prof.bytes() as f64 * 1e-6,
                    rate * 1e-9,
                    100.0 * rate / copy_rate
                ))
            };
            let cells = row(&mut limit).unwrap_or_else(|e| format!("failed: {e} | | | | | | | | |"));
            println!(
                "| {name} ({order:?}) | {} | {} | {} | {} | {cells}",
                table.patches().len(),
                limit.num_points(),
                limit.nnz(),
                samples.len()
            );
        }
        drop(limit);
        point_paths.push((name, data, table, samples));
    }
    limit_points(ctx, &point_paths, quick);
}

/// The points of the limit table's patch tables computed three ways
/// (`PointPath`): the composed point matrix, one dispatch per level, one
/// dispatch of tiles (Tokuyoshi's subtree kernels), and tiles of other
/// sizes; each followed by the same limit kernels.
fn limit_points(
    ctx: &'static GpuContext,
    inputs: &[(String, MeshData, subla_adaptive::PatchTable, Vec<subla_adaptive::Sample>)],
    quick: bool,
) {
    use subla_adaptive_gpu::{GpuLimit, LimitBuffers, PointPath, TILE_ROWS};

    println!(
        "\nlimit points: the table's points from the control points, per frame (xyz f32, then the limit kernels)\n"
    );
    println!(
        "| mesh | path | dispatches | rows | nnz | setup ms | points ms | limit ms | eval ms | vs cpu f64 (pos / der) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, data, table, samples) in inputs {
        let want = table.evaluate(data.positions(), samples, Par::Rayon).ok();
        let paths = [
            (PointPath::Composed, 0),
            (PointPath::PerLevel, 0),
            (PointPath::PerTile, TILE_ROWS),
            (PointPath::PerTile, 256),
            (PointPath::PerTile, 8192),
        ];
        for (path, tile_rows) in paths {
            let label = match path {
                PointPath::PerTile => format!("per tile ({tile_rows})"),
                PointPath::PerLevel => "per level".to_owned(),
                _ => "composed".to_owned(),
            };
            let make = || match path {
                PointPath::PerTile => GpuLimit::with_tile_rows(ctx, table, tile_rows),
                _ => GpuLimit::with_path(ctx, table, path),
            };
            let r = (|| -> Result<String, String> {
                let (setup_s, limit) = best(if quick { 1 } else { 3 }, || {
                    let l = make().map_err(|e| e.to_string());
                    ctx.wait_idle().map_err(|e| e.to_string())?;
                    l
                });
                let mut limit = limit?;
                let e = |e: subla_adaptive_gpu::AdaptiveGpuError| e.to_string();
                let located = limit.locate(ctx, table, samples).map_err(e)?;
                let x = x_flat(data);
                let mut control = GpuBuffer::upload(ctx, &x).map_err(|e| e.to_string())?;
                let mut out = LimitBuffers::new(ctx, &located, 3).map_err(e)?;
                warm(ctx);
                let mut prof = limit.profile(ctx, &control, 3, &located, &mut out).map_err(e)?;
                for _ in 0..if quick { 2 } else { 9 } {
                    warm(ctx);
                    let p = limit.profile(ctx, &control, 3, &located, &mut out).map_err(e)?;
                    if p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds) {
                        prof = p;
                    }
                }
                let (eval_s, r) =
                    best(if quick { 3 } else { 10 }, || -> Result<(), subla_adaptive_gpu::AdaptiveGpuError> {
                        control.write(ctx, &x)?;
                        limit.evaluate(ctx, &control, 3, &located, &mut out)?;
                        Ok(ctx.wait_idle()?)
                    });
                r.map_err(e)?;
                let got = out.download(ctx).map_err(e)?;
                let agree = want.as_ref().map_or("–".to_owned(), |w| {
                    format!(
                        "{:.1e} / {:.1e}",
                        worst(&w.position, &got.position) / largest(&w.position),
                        worst(&w.du, &got.du).max(worst(&w.dv, &got.dv)) / largest(&w.du).max(largest(&w.dv))
                    )
                });
                // (+ 0.0: the sum of no passes is -0.0.)
                let ms = |s: Option<f64>| s.map_or("–".to_owned(), |s| format!("{:.3}", s * 1e3 + 0.0));
                let dispatches = prof.kernels.iter().filter(|k| !k.kernel.starts_with("limit")).count();
                Ok(format!(
                    "{dispatches} | {} | {} | {:.1} | {} | {} | {:.3} | {agree} |",
                    limit.rows_computed(),
                    limit.nnz(),
                    setup_s * 1e3,
                    ms(prof.points_seconds()),
                    ms(prof.seconds_of("limit")),
                    eval_s * 1e3
                ))
            })();
            println!("| {name} | {label} | {} ", r.unwrap_or_else(|e| format!("failed: {e} | | | | | | | | |")));
        }
    }
}

/// The edge-friend kernels on the device (`CatmarkEdgeFriendGpu`).
fn edge_friend(ctx: &'static subla_gpu::GpuContext, copy_rate: f64, quick: bool, levels: &[u32]) {
    let refiner = CatmarkEdgeFriendGpu::new(ctx);
    println!("\ncatmark edge-friend on the device (xyz f32)\n");
    println!(
        "| mesh | L | faces | build ms | eval ms (wall) | kernels ms | modeling ms | least MB per eval | GB/s over eval wall | points GB/s | % copy | finest step GB/s | % copy |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, data) in inputs(quick) {
        let x: Array2<f32> = data.positions().mapv(|v| v as f32);
        for &l in levels {
            let build = || -> Result<_, String> {
                let plan = refiner.build(&data.mesh, l, Par::Rayon).map_err(|e| e.to_string())?;
                ctx.wait_idle().map_err(|e| e.to_string())?;
                Ok(plan)
            };
            let start = Instant::now();
            let first = match build() {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | – | build failed: {e} | | | | | |");
                    break;
                }
            };
            let first_s = start.elapsed().as_secs_f64();
            drop(first);
            let (build_s, plan) = best(runs_for(first_s) - 1, build);
            let Ok(plan) = plan else {
                println!("| {name} | {l} | – | build failed on a rerun | | | | | |");
                break;
            };
            let build_s = build_s.min(first_s);
            let faces = plan.faces(l, Par::Rayon).map(|f| f.num_faces()).unwrap_or(0);
            warm(ctx);
            let (_, mut prof) = match plan.profile_eval(x.view()) {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {l} | {faces} | {:.2} | eval failed: {e} | | | | | | | |", build_s * 1e3);
                    break;
                }
            };
            let runs = runs_for(prof.wall_seconds);
            for _ in 1..runs {
                warm(ctx);
                if let Ok((_, p)) = plan.profile_eval(x.view()) {
                    if p.gpu_seconds().unwrap_or(p.wall_seconds) < prof.gpu_seconds().unwrap_or(prof.wall_seconds) {
                        prof = p;
                    }
                }
            }
            let mut y = Array2::zeros((plan.level_len(l), 3));
            let (eval_s, _) = best(runs, || plan.try_eval_into(x.view(), y.view_mut()));
            // Least bytes of the whole eval: points of every level read and
            // written once (12 bytes a row), the connectivity of every
            // edge-friend level but the finest read once (28 bytes a quad,
            // about); of the levels' points steps alone: `EvalProfile`.
            let mut bytes = 0f64;
            for k in 0..=l {
                let rows = plan.level_len(k) as f64;
                bytes += if k == 0 || k == l { 12.0 * rows } else { 24.0 * rows + 28.0 * rows };
            }
            let points: Vec<_> = prof.kernels.iter().filter(|k| k.kernel == "points").collect();
            let points_s: Option<f64> = points.iter().map(|k| k.seconds).sum();
            let points_bytes: u64 = points.iter().map(|k| k.bytes).sum();
            let finest = points.last().and_then(|k| Some((k.bytes as f64 / k.seconds?, k.seconds?)));
            let rate = bytes / eval_s;
            drop(plan);
            let (modeling_s, m) =
                best(runs_for(build_s + eval_s), || modeling(&refiner, &data.mesh, x.view(), l, Par::Rayon));
            if let Err(e) = m {
                println!("| {name} | {l} | {faces} | modeling failed: {e} | | | | | | | | | |");
                break;
            }
            let pct = |r: f64| format!("{:.0} %", 100.0 * r / copy_rate);
            let (points_rate, points_pct) = match points_s {
                Some(t) if t > 0.0 => (format!("{:.1}", points_bytes as f64 / t * 1e-9), pct(points_bytes as f64 / t)),
                _ => ("–".into(), "–".into()),
            };
            let (finest_rate, finest_pct) = match finest {
                Some((r, _)) => (format!("{:.1}", r * 1e-9), pct(r)),
                None => ("–".into(), "–".into()),
            };
            println!(
                "| {name} | {l} | {faces} | {:.2} | {:.2} | {} | {:.2} | {:.1} | {:.1} | {points_rate} | {points_pct} | {finest_rate} | {finest_pct} |",
                build_s * 1e3,
                eval_s * 1e3,
                prof.gpu_seconds().map_or("–".into(), |t| format!("{:.3}", t * 1e3)),
                modeling_s * 1e3,
                bytes * 1e-6,
                rate * 1e-9,
            );
        }
    }
}
