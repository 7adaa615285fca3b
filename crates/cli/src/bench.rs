//! `subla bench`: build and eval times of a mesh, level by level.

use std::path::PathBuf;
use std::time::Instant;

use subla_algebra::Par;
use subla_mesh::Mesh;
use subla_scheme::{Plan, Refiner, eval, modeling};

use crate::progress::Progress;
use crate::{Backend, MeshOpts, Scheme, read_mesh};

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Levels to time, comma separated.
    #[arg(short, long, value_delimiter = ',', default_values_t = [1, 2, 3])]
    levels: Vec<u32>,
    /// Subdivision scheme (specialised kernels).
    #[arg(long, value_enum, default_value_t = Scheme::Catmark)]
    scheme: Scheme,
    /// Where to run (the GPU: Catmull-Clark only).
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

fn rows<R: Refiner<Input = Mesh>>(
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
        let (build_ms, plan) = best(args.runs, || r.build(mesh, l, Par::Rayon).map_err(|e| e.to_string()))?;
        let (eval_ms, _) = best(args.runs, || Ok(eval(&plan, x, Par::Rayon)))?;
        let faces = plan.faces(l).map(|f| f.num_faces()).unwrap_or(0);
        let vertices = plan.output_len();
        drop(plan);
        let (modeling_ms, _) = best(args.runs, || modeling(r, mesh, x, l, Par::Rayon).map_err(|e| e.to_string()))?;
        bar.suspend(|| {
            println!("| {l} | {vertices} | {faces} | {build_ms:.2} | {eval_ms:.2} | {modeling_ms:.2} |");
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
    println!(
        "{name}: {} vertices, {} faces; {:?} on {}, f32 xyz, best of {} runs",
        data.mesh.num_vertices(),
        data.mesh.num_faces(),
        args.scheme,
        match args.backend {
            Backend::Cpu => format!("the CPU ({} threads)", Par::Rayon.threads()),
            Backend::Gpu => "the GPU".to_owned(),
        },
        args.runs.max(1)
    );
    for &l in &args.levels {
        crate::check_memory(args.scheme, l, None, &data.mesh)?;
    }
    match (args.scheme, args.backend) {
        (scheme, Backend::Gpu) => with_gpu!(scheme, r => {
            let info = r.context().adapter_info();
            println!("adapter: {} ({:?})", info.name, info.backend);
            rows(r, &data.mesh, args, x.view(), progress)
        }),
        (scheme, Backend::Cpu) => with_slak!(scheme, r => rows(r, &data.mesh, args, x.view(), progress)),
    }
}
