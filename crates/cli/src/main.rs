//! `subla`: subdivide meshes from the command line.
//!
//! ```text
//! subla subdivide IN.obj --scheme catmark|bilinear|loop|loop-cgal|sqrt3 --levels 2 -o OUT.obj
//!       [--precision f32|f64] [--path lak|slak] [--mode modeling|static]
//!       [--backend cpu|gpu] [--boundary none|edge-only|edge-and-corner]
//!       [--crease-method uniform|chaikin] [--triangles catmark|smooth]
//!       [--keep-holes] [--timings json]
//! subla matrix IN.obj --levels 2 -o R.mtx [--per-level] [--limit]
//!       [--max-memory 8G]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use ndarray::{Array2, ArrayView2};
use subla_algebra::Par;
use subla_catmark::{Bilinear, CatmarkLak, CatmarkSlak};
use subla_loop::{LoopLak, LoopSlak};
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, MeshBuilder, MeshData, TriangleSubdivision, Validation};
use subla_scheme::refinement::{Budget, Refinement};
use subla_scheme::{Plan, Refiner, eval, modeling};
use subla_sqrt3::{Sqrt3Lak, Sqrt3Slak};

#[derive(Parser, Debug)]
#[command(name = "subla", version, about = "Mesh subdivision as sparse linear algebra")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Subdivide a mesh (OBJ or PLY) and write the result as OBJ.
    Subdivide(SubdivideArgs),
    /// Export the refinement matrices of a mesh as Matrix Market files.
    Matrix(MatrixArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Scheme {
    /// Catmull-Clark (OpenSubdiv's `catmark`).
    Catmark,
    /// Bilinear (face centroids and edge midpoints).
    Bilinear,
    /// Loop (OpenSubdiv's rules; triangles only).
    Loop,
    /// Loop with CGAL's rules (boundary edge points are midpoints, boundary
    /// vertices (1,6,1)/8, tags ignored).
    LoopCgal,
    /// Kobbelt's √3 (triangles only; `--levels` counts steps, two steps
    /// being a 1-to-9 refinement; boundary edges split every second step).
    Sqrt3,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Precision {
    F32,
    F64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum PathKind {
    /// Mapped sparse algebra (Eq. 2-12).
    Lak,
    /// Specialised kernels (§4).
    Slak,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Build and evaluate level by level, keeping one level.
    Modeling,
    /// Build all levels, then evaluate.
    Static,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The CPU (all threads).
    Cpu,
    /// The GPU through wgpu (Catmull-Clark, specialised kernels): build on
    /// the CPU, eval on the device in `f32` (`SUBLA_GPU_BACKEND` and
    /// `SUBLA_GPU_ADAPTER` choose the adapter).
    Gpu,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Boundary {
    None,
    EdgeOnly,
    EdgeAndCorner,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Crease {
    Uniform,
    Chaikin,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Triangles {
    Catmark,
    Smooth,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Timings {
    Json,
}

/// How to read the input mesh: the options that override its tags.
#[derive(clap::Args, Debug)]
struct MeshOpts {
    /// Boundary interpolation (overrides the file's tag).
    #[arg(long, value_enum)]
    boundary: Option<Boundary>,
    /// Crease method (overrides the file's tag).
    #[arg(long, value_enum)]
    crease_method: Option<Crease>,
    /// Catmull-Clark triangle rule (overrides the file's tag).
    #[arg(long, value_enum)]
    triangles: Option<Triangles>,
    /// Read the input as left-handed (clockwise faces).
    #[arg(long)]
    left_handed: bool,
}

#[derive(clap::Args, Debug)]
struct MatrixArgs {
    /// Input mesh (.obj or .ply).
    input: PathBuf,
    /// Output Matrix Market file (`R.mtx`); with `--per-level`, the level-i
    /// matrix goes to `R.i.mtx`.
    #[arg(short, long)]
    output: PathBuf,
    /// Subdivision scheme.
    #[arg(long, value_enum, default_value_t = Scheme::Catmark)]
    scheme: Scheme,
    /// Number of levels.
    #[arg(short, long, default_value_t = 1)]
    levels: u32,
    /// Write each level's matrix R_i instead of the product R.
    #[arg(long)]
    per_level: bool,
    /// Append the limit operator (the matrix then maps control points to
    /// limit positions).
    #[arg(long)]
    limit: bool,
    /// Refuse to build matrices predicted to need more than this many bytes
    /// (suffixes K, M, G).
    #[arg(long, value_parser = parse_bytes, default_value = "8G")]
    max_memory: u64,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// `123`, `64K`, `512M`, `8G` as bytes.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("`{s}` is not a size (try 512M or 8G)"))?;
    if v.is_nan() || v < 0.0 || !v.is_finite() {
        return Err(format!("`{s}` is not a size"));
    }
    Ok((v * (1u64 << shift) as f64) as u64)
}

#[derive(clap::Args, Debug)]
struct SubdivideArgs {
    /// Input mesh (.obj or .ply); OpenSubdiv shape tags in OBJ files are honoured.
    input: PathBuf,
    /// Output OBJ file.
    #[arg(short, long)]
    output: PathBuf,
    /// Subdivision scheme.
    #[arg(long, value_enum, default_value_t = Scheme::Catmark)]
    scheme: Scheme,
    /// Number of levels.
    #[arg(short, long, default_value_t = 1)]
    levels: u32,
    /// Floating-point precision of the evaluation.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    /// Implementation path (Catmull-Clark only).
    #[arg(long, value_enum, default_value_t = PathKind::Slak)]
    path: PathKind,
    /// Operational mode.
    #[arg(long, value_enum, default_value_t = Mode::Static)]
    mode: Mode,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    #[command(flatten)]
    mesh: MeshOpts,
    /// Write hole faces too (as `t hole` tags) instead of leaving them out.
    #[arg(long)]
    keep_holes: bool,
    /// Print one JSON line with timings, counts and peak memory.
    #[arg(long, value_enum)]
    timings: Option<Timings>,
}

fn read_input(path: &PathBuf) -> Result<MeshData, String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let r = match ext.as_deref() {
        Some("ply") => subla_mesh::ply::read_ply(path, Validation::OpenSubdiv),
        _ => subla_mesh::obj::read_obj(path, Validation::OpenSubdiv),
    };
    r.map_err(|e| e.to_string())
}

/// Peak resident memory of this process, from the kernel (Linux).
fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

struct Run {
    mesh: Mesh,
    positions: Array2<f64>,
    build_ms: f64,
    eval_ms: f64,
}

fn run_scheme<R: Refiner<Input = Mesh>>(
    r: &R,
    mesh: &Mesh,
    pos: ArrayView2<'_, f64>,
    args: &SubdivideArgs,
) -> Result<Run, String> {
    let par = Par::Rayon;
    match args.mode {
        Mode::Static => {
            let t0 = Instant::now();
            let plan = r.build(mesh, args.levels, par).map_err(|e| e.to_string())?;
            let build_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = Instant::now();
            let positions = match args.precision {
                Precision::F64 => eval(&plan, pos, par),
                Precision::F32 => eval(&plan, pos.mapv(|x| x as f32).view(), par).mapv(f64::from),
            };
            let eval_ms = t1.elapsed().as_secs_f64() * 1e3;
            let fine = plan.refined(args.levels).ok_or("the scheme produced no refined mesh")?.clone();
            Ok(Run { mesh: fine, positions, build_ms, eval_ms })
        }
        Mode::Modeling => {
            let t0 = Instant::now();
            let (plan, positions) = match args.precision {
                Precision::F64 => modeling(r, mesh, pos, args.levels, par).map_err(|e| e.to_string())?,
                Precision::F32 => {
                    let (m, p) = modeling(r, mesh, pos.mapv(|x| x as f32).view(), args.levels, par)
                        .map_err(|e| e.to_string())?;
                    (m, p.mapv(f64::from))
                }
            };
            let fine = plan.refined(plan.levels()).ok_or("the scheme produced no refined mesh")?.clone();
            // Modeling mode interleaves build and eval: report the total as build.
            Ok(Run { mesh: fine, positions, build_ms: t0.elapsed().as_secs_f64() * 1e3, eval_ms: 0.0 })
        }
    }
}

/// The refined mesh as a file would hold it: hole faces left out (unless
/// asked), and only the sharpness a user would write (not the infinite
/// sharpness the scheme gives boundary and non-manifold elements).
fn output_mesh(run: Run, keep_holes: bool) -> Result<MeshData, String> {
    let t = run.mesh.topology();
    let mut ptr = vec![0u32];
    let mut verts = Vec::with_capacity(t.num_corners());
    let mut holes = Vec::new();
    for f in 0..t.num_faces() {
        let hole = run.mesh.holes()[f];
        if hole && !keep_holes {
            continue;
        }
        if hole {
            holes.push((ptr.len() - 1) as u32);
        }
        verts.extend_from_slice(t.face(f));
        ptr.push(verts.len() as u32);
    }
    let mut b = MeshBuilder::new(t.num_vertices(), ptr, verts).options(run.mesh.options());
    for (e, &s) in run.mesh.edge_sharpness().iter().enumerate() {
        let tag = t.edge_tags()[e];
        if s > 0.0 && tag & (edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD) == 0 {
            let [a, c] = t.edge(e);
            b = b.crease(a, c, s);
        }
    }
    for (v, &s) in run.mesh.vertex_sharpness().iter().enumerate() {
        if s > 0.0 && t.vertex_tags()[v] & (vertex_tag::NON_MANIFOLD | vertex_tag::ISOLATED) == 0 {
            b = b.corner(v as u32, s);
        }
    }
    for f in holes {
        b = b.hole(f);
    }
    let mesh = b.build(Par::Rayon).map_err(|e| e.to_string())?;
    MeshData::new(mesh, run.positions).map_err(|e| e.to_string())
}

/// Reads `path` and applies the command-line options over its tags.
fn read_mesh(path: &PathBuf, m: &MeshOpts) -> Result<MeshData, String> {
    let mut data = read_input(path)?;
    if m.left_handed || data.left_handed {
        data.mesh = data.mesh.reversed_winding().map_err(|e| e.to_string())?;
    }
    let mut opts = data.mesh.options();
    if let Some(b) = m.boundary {
        opts.boundary = match b {
            Boundary::None => BoundaryInterpolation::None,
            Boundary::EdgeOnly => BoundaryInterpolation::EdgeOnly,
            Boundary::EdgeAndCorner => BoundaryInterpolation::EdgeAndCorner,
        };
    }
    if let Some(c) = m.crease_method {
        opts.crease_method = match c {
            Crease::Uniform => CreaseMethod::Uniform,
            Crease::Chaikin => CreaseMethod::Chaikin,
        };
    }
    if let Some(t) = m.triangles {
        opts.triangle_subdivision = match t {
            Triangles::Catmark => TriangleSubdivision::Catmark,
            Triangles::Smooth => TriangleSubdivision::Smooth,
        };
    }
    data.mesh.set_options(opts);
    Ok(data)
}

/// `subla matrix`: the refinement matrices as Matrix Market files.
fn matrix(args: &MatrixArgs) -> Result<(), String> {
    let data = read_mesh(&args.input, &args.mesh)?;
    match args.scheme {
        Scheme::Catmark => export_matrices(&CatmarkSlak, &data.mesh, args),
        Scheme::Bilinear => export_matrices(&Bilinear, &data.mesh, args),
        Scheme::Loop => export_matrices(&LoopSlak::new(), &data.mesh, args),
        Scheme::LoopCgal => export_matrices(&LoopSlak::cgal(), &data.mesh, args),
        Scheme::Sqrt3 => export_matrices(&Sqrt3Slak::new(), &data.mesh, args),
    }
}

fn export_matrices<R: Refiner<Input = Mesh>>(r: &R, mesh: &Mesh, args: &MatrixArgs) -> Result<(), String> {
    let par = Par::Rayon;
    let budget = Budget::bytes(args.max_memory);
    let plan = r.build(mesh, args.levels, par).map_err(|e| e.to_string())?;
    let mut refinement = Refinement::chain(&plan, budget, par).map_err(|e| e.to_string())?;
    if args.limit {
        refinement = refinement.with_limit(&plan, budget, par).map_err(|e| e.to_string())?;
    }
    let write = |m: &subla_algebra::CsrMat<f64>, path: &std::path::Path| -> Result<(), String> {
        subla_algebra::mtx::write_matrix_market_file(m.as_ref(), path).map_err(|e| e.to_string())?;
        println!("{}: {} x {}, {} nonzeros", path.display(), m.nrows(), m.ncols(), m.nnz());
        Ok(())
    };
    if args.per_level {
        let stem = args.output.with_extension("");
        for (i, m) in refinement.levels().iter().enumerate() {
            write(m, &stem.with_extension(format!("{i}.mtx")))?;
        }
    } else {
        let chain_nnz = refinement.chain_nnz();
        let composed = refinement.compose(budget, par).map_err(|e| e.to_string())?;
        println!("per-level matrices: {chain_nnz} nonzeros in all; product: {} nonzeros", composed.nnz());
        write(composed, &args.output)?;
    }
    Ok(())
}

fn subdivide(args: &SubdivideArgs) -> Result<(), String> {
    let t_read = Instant::now();
    let data = read_mesh(&args.input, &args.mesh)?;
    let read_ms = t_read.elapsed().as_secs_f64() * 1e3;
    let pos = data.positions().to_owned();
    let (in_v, in_f) = (data.mesh.num_vertices(), data.mesh.num_faces());
    let run = match (args.scheme, args.path, args.backend) {
        (Scheme::Catmark, PathKind::Slak, Backend::Gpu) => {
            let ctx = subla_gpu::GpuContext::new().map_err(|e| format!("--backend gpu: {e}"))?;
            // The context lives as long as the process.
            let ctx: &'static subla_gpu::GpuContext = Box::leak(Box::new(ctx));
            run_scheme(&subla_catmark_gpu::CatmarkGpu::new(ctx), &data.mesh, pos.view(), args)?
        }
        (_, _, Backend::Gpu) => {
            return Err(
                "--backend gpu runs Catmull-Clark with the specialised kernels (--scheme catmark --path slak)".into()
            );
        }
        (Scheme::Catmark, PathKind::Slak, Backend::Cpu) => run_scheme(&CatmarkSlak, &data.mesh, pos.view(), args)?,
        (Scheme::Catmark, PathKind::Lak, Backend::Cpu) => run_scheme(&CatmarkLak, &data.mesh, pos.view(), args)?,
        (Scheme::Bilinear, _, Backend::Cpu) => run_scheme(&Bilinear, &data.mesh, pos.view(), args)?,
        (Scheme::Loop, PathKind::Slak, Backend::Cpu) => run_scheme(&LoopSlak::new(), &data.mesh, pos.view(), args)?,
        (Scheme::Loop, PathKind::Lak, Backend::Cpu) => run_scheme(&LoopLak::new(), &data.mesh, pos.view(), args)?,
        (Scheme::LoopCgal, PathKind::Slak, Backend::Cpu) => {
            run_scheme(&LoopSlak::cgal(), &data.mesh, pos.view(), args)?
        }
        (Scheme::LoopCgal, PathKind::Lak, Backend::Cpu) => run_scheme(&LoopLak::cgal(), &data.mesh, pos.view(), args)?,
        (Scheme::Sqrt3, PathKind::Slak, Backend::Cpu) => run_scheme(&Sqrt3Slak::new(), &data.mesh, pos.view(), args)?,
        (Scheme::Sqrt3, PathKind::Lak, Backend::Cpu) => run_scheme(&Sqrt3Lak::new(), &data.mesh, pos.view(), args)?,
    };
    let (build_ms, eval_ms) = (run.build_ms, run.eval_ms);
    let out = output_mesh(run, args.keep_holes)?;
    let t_write = Instant::now();
    subla_mesh::obj::write_obj_file(&out, &args.output).map_err(|e| e.to_string())?;
    let write_ms = t_write.elapsed().as_secs_f64() * 1e3;
    if args.timings == Some(Timings::Json) {
        let line = serde_json::json!({
            "scheme": format!("{:?}", args.scheme).to_lowercase(),
            "path": format!("{:?}", args.path).to_lowercase(),
            "mode": format!("{:?}", args.mode).to_lowercase(),
            "precision": format!("{:?}", args.precision).to_lowercase(),
            "backend": format!("{:?}", args.backend).to_lowercase(),
            "levels": args.levels,
            "threads": subla_algebra::Par::Rayon.threads(),
            "input_vertices": in_v,
            "input_faces": in_f,
            "output_vertices": out.mesh.num_vertices(),
            "output_faces": out.mesh.num_faces(),
            "read_ms": read_ms,
            "build_ms": build_ms,
            "eval_ms": eval_ms,
            "write_ms": write_ms,
            "peak_memory_bytes": peak_memory_bytes(),
        });
        println!("{line}");
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Subdivide(args) => subdivide(args),
        Command::Matrix(args) => matrix(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
