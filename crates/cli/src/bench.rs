//! `subla bench`: build and eval times of a mesh level by level, and the
//! static-topology path a pipeline uses (the plan, `R`, one frame).

use std::path::PathBuf;
use std::time::Instant;

use subla::registry::{Backend as Site, Setup};
use subla_algebra::Par;
use subla_mesh::Mesh;
use subla_scheme::refinement::{Budget, Evaluation, Refinement};
use subla_scheme::{FallbackPolicy, Plan, Refiner, eval, modeling};

use crate::progress::Progress;
use crate::{Backend, MeshOpts, memory, read_mesh, schemes};

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Levels to time, comma separated.
    #[arg(short, long, value_delimiter = ',', default_values_t = [1, 2, 3])]
    levels: Vec<u32>,
    /// Subdivision scheme.
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    scheme: String,
    /// Implementation path [default: the scheme's fastest on the backend,
    /// as `subdivide` takes]. The static-topology table runs on the CPU,
    /// with this path there (else the CPU's fastest).
    #[arg(long, value_enum)]
    path: Option<crate::PathKind>,
    /// Where to run: the CPU, or the GPU for the schemes with GPU kernels
    /// (`slak on cpu and gpu` in the `--scheme` list). The static-topology
    /// table is timed on the CPU either way.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// Runs per measurement; the best time is printed.
    #[arg(long, default_value_t = 3)]
    runs: u32,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// Best time of `runs` calls of `f`, in milliseconds, and its last result.
fn best<T>(runs: u32, mut f: impl FnMut() -> Result<T, String>) -> Result<(f64, T), String> {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let r = f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        last = Some(r);
    }
    last.map(|r| (best, r)).ok_or_else(|| "no run".to_owned())
}

/// The level-by-level table: build, eval and modeling per level count.
fn level_rows<R: Refiner<Input = Mesh> + ?Sized>(
    r: &R,
    mesh: &Mesh,
    args: &BenchArgs,
    x: ndarray::ArrayView2<'_, f32>,
    progress: Progress,
) -> Result<(), String> {
    println!("| levels | vertices | faces | build ms | eval ms | modeling ms |");
    println!("|---|---|---|---|---|---|");
    let bar = progress.steps(args.levels.len() as u64, "timing");
    for &l in &args.levels {
        let (build_ms, plan) = best(args.runs, || r.build(mesh, l, Par::Rayon).map_err(schemes::error))?;
        let (eval_ms, _) = best(args.runs, || eval(&plan, x, Par::Rayon).map_err(schemes::error))?;
        let faces = plan.faces(l, Par::Rayon).map_err(schemes::error)?.num_faces();
        let vertices = plan.output_len();
        drop(plan);
        let (modeling_ms, _) = best(args.runs, || modeling(r, mesh, x, l, Par::Rayon).map_err(schemes::error))?;
        bar.suspend(|| {
            println!("| {l} | {vertices} | {faces} | {build_ms:.2} | {eval_ms:.2} | {modeling_ms:.2} |");
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

/// The static-topology table: the plan, `R` in the form the library picks
/// (tensor rows kept apart where the scheme has them, else the composed
/// matrix), and one frame of evaluation (`Evaluation::Auto`, `f32` xyz),
/// with the bytes one frame moves at least: the matrix or tensor form, the
/// control points and the output.
fn static_rows<R: Refiner<Input = Mesh> + ?Sized>(
    r: &R,
    mesh: &Mesh,
    args: &BenchArgs,
    x: ndarray::ArrayView2<'_, f32>,
    progress: Progress,
) -> Result<(), String> {
    let budget = Budget::bytes(memory::budget(None).0);
    println!();
    println!("static topology (the plan and R once, then one evaluation per frame; f32 xyz):");
    println!("| levels | plan ms | R ms | R form | nonzeros | frame ms | MB per frame | GB/s |");
    println!("|---|---|---|---|---|---|---|---|");
    let bar = progress.steps(args.levels.len() as u64, "timing the static path");
    for &l in &args.levels {
        let (plan_ms, plan) = best(args.runs, || r.build(mesh, l, Par::Rayon).map_err(schemes::error))?;
        let (r_ms, refinement) =
            best(args.runs, || Refinement::tensor_of(&plan, budget, Par::Rayon).map_err(schemes::error))?;
        let mut refinement = refinement;
        let ev = refinement.evaluator::<f32>(Evaluation::Auto, 3, budget, Par::Rayon).map_err(schemes::error)?;
        let mut out = ndarray::Array2::<f32>::zeros((ev.output_len(), 3));
        let (frame_ms, ()) = best(args.runs.max(3), || {
            ev.apply(x, out.view_mut(), Par::Rayon);
            Ok(())
        })?;
        let bytes = ev.matrix_bytes() + 4 * 3 * (ev.input_len() + ev.output_len()) as u64;
        let form = if ev.is_tensor() { "tensor" } else { "composed" };
        let nnz = refinement.composed_nnz().unwrap_or_else(|| ev.nnz());
        bar.suspend(|| {
            println!(
                "| {l} | {plan_ms:.2} | {r_ms:.2} | {form} | {nnz} | {frame_ms:.3} | {:.2} | {:.2} |",
                bytes as f64 / 1e6,
                bytes as f64 / (frame_ms * 1e6),
            );
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

/// `subla bench`.
pub(crate) fn run(args: &BenchArgs, progress: Progress) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let x = data.positions().mapv(|v| v as f32);
    let name = args.input.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| crate::embedded::NAME.into());
    let scheme = schemes::scheme(&args.scheme)?;
    for &l in &args.levels {
        schemes::check_memory(scheme, l, None, &data.mesh, data.vertices.ncols())?;
        // The static path composes R: predicted as `subla matrix` does.
        let (budget, what) = crate::memory::budget(None);
        let p = crate::predict::matrix(scheme.growth(), &data.mesh, l, true, false);
        if p.bytes > u128::from(budget) {
            return Err(format!(
                "--levels {l}: R would need up to {}; the budget is {} ({what}; ask for fewer levels)",
                crate::memory::human(p.bytes),
                crate::memory::human(u128::from(budget)),
            ));
        }
    }
    let path = args.path.map_or_else(|| scheme.fastest(args.backend.site()), crate::PathKind::written);
    let choice = schemes::Choice { backend: args.backend.site(), path, fallback: FallbackPolicy::Never };
    let setup = Setup::default();
    let (r, _) = schemes::refiner(scheme, choice, &setup)?;
    println!(
        "{name}: {} vertices, {} faces; {} ({}) on {}, f32 xyz, best of {} runs",
        data.mesh.num_vertices(),
        data.mesh.num_faces(),
        scheme.name(),
        crate::PathKind::of(path).name(),
        match args.backend {
            Backend::Cpu => format!("the CPU ({} threads)", Par::Rayon.threads()),
            Backend::Gpu => "the GPU".to_owned(),
        },
        args.runs.max(1)
    );
    if args.backend == Backend::Gpu {
        let ctx = setup.gpu().map_err(|e| e.to_string())?;
        let info = ctx.adapter_info();
        println!("adapter: {} ({:?})", info.name, info.backend);
    }
    level_rows(&*r, &data.mesh, args, x.view(), progress)?;
    // The static table on the CPU: the same refiner there, else the CPU's
    // fastest path.
    if args.backend == Backend::Cpu {
        return static_rows(&*r, &data.mesh, args, x.view(), progress);
    }
    let on_cpu = schemes::Choice { backend: Site::Cpu, path: scheme.fastest(Site::Cpu), ..choice };
    let (cpu, _) = schemes::refiner(scheme, on_cpu, &setup)?;
    static_rows(&*cpu, &data.mesh, args, x.view(), progress)
}
