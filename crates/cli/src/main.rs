//! `subla`: subdivide meshes from the command line.
//!
//! ```text
//! subla                       the main job: the embedded example mesh, 3 levels,
//!                             OBJ + PNG in subla-out/, a table of what was done
//! subla subdivide [IN] [-o OUT.obj] --scheme catmark|bilinear|loop|loop-cgal|sqrt3
//!       --levels 2 [--precision f32|f64] [--path lak|slak] [--mode modeling|static]
//!       [--backend cpu|gpu] [--boundary none|edge-only|edge-and-corner]
//!       [--crease-method uniform|chaikin] [--triangles catmark|smooth]
//!       [--keep-holes] [--png [OUT.png]] [--max-memory 4G] [--timings json]
//! subla render [IN] [-o OUT.png] [--levels 2] [--cage] [--creases] [--size 800x600]
//! subla matrix [IN] --levels 2 -o R.mtx [--per-level] [--limit] [--max-memory 8G]
//! subla info [IN] [--json]
//! subla bench [IN] --levels 1,2,3 [--backend cpu|gpu] [--runs 3]
//! ```
//! Without `IN`, every subcommand uses the embedded example mesh (an open
//! box with pentagons, triangles, a semi-sharp crease and a boundary).

/// Evaluates `$body` with `$r` bound to the CPU refiner of `$scheme` with
/// the specialised kernels (SLAK; bilinear's only path).
macro_rules! with_slak {
    ($scheme:expr, $r:ident => $body:expr) => {
        match $scheme {
            crate::Scheme::Catmark => {
                let $r = &::subla_catmark::CatmarkSlak;
                $body
            }
            crate::Scheme::Bilinear => {
                let $r = &::subla_catmark::Bilinear;
                $body
            }
            crate::Scheme::Loop => {
                let $r = &::subla_loop::LoopSlak::new();
                $body
            }
            crate::Scheme::LoopCgal => {
                let $r = &::subla_loop::LoopSlak::cgal();
                $body
            }
            crate::Scheme::Sqrt3 => {
                let $r = &::subla_sqrt3::Sqrt3Slak::new();
                $body
            }
        }
    };
}

/// Evaluates `$body` with `$r` bound to the GPU refiner of `$scheme` on a
/// context made here (kept for the whole process), or returns an error for
/// a scheme without GPU kernels (bilinear).
macro_rules! with_gpu {
    ($scheme:expr, $r:ident => $body:expr) => {{
        let ctx = ::subla_gpu::GpuContext::new().map_err(|e| format!("--backend gpu: {e}"))?;
        // The context lives as long as the process.
        let ctx: &'static ::subla_gpu::GpuContext = Box::leak(Box::new(ctx));
        match $scheme {
            crate::Scheme::Catmark => {
                let $r = &::subla_catmark_gpu::CatmarkGpu::new(ctx);
                $body
            }
            crate::Scheme::Loop => {
                let $r = &::subla_tri_gpu::LoopGpu::new(ctx);
                $body
            }
            crate::Scheme::LoopCgal => {
                let $r = &::subla_tri_gpu::LoopGpu::new(ctx).cgal();
                $body
            }
            crate::Scheme::Sqrt3 => {
                let $r = &::subla_tri_gpu::Sqrt3Gpu::new(ctx);
                $body
            }
            crate::Scheme::Bilinear => Err::<_, String>(
                "--backend gpu runs catmark, loop, loop-cgal and sqrt3 (bilinear has no GPU kernels)".into(),
            ),
        }
    }};
}

mod bench;
mod embedded;
mod info;
mod memory;
mod picture;
mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use ndarray::{Array2, ArrayView2};
use subla_algebra::Par;
use subla_catmark::CatmarkLak;
use subla_loop::LoopLak;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, MeshBuilder, MeshData, TriangleSubdivision, Validation};
use subla_scheme::refinement::{Budget, Refinement};
use subla_scheme::{Plan, Refiner, eval};
use subla_sqrt3::Sqrt3Lak;

#[derive(Parser, Debug)]
#[command(
    name = "subla",
    version,
    about = "Mesh subdivision as sparse linear algebra",
    long_about = "Mesh subdivision as sparse linear algebra.\n\nWithout a subcommand, subla runs its main job: it subdivides the embedded example mesh three levels with Catmull-Clark, writes the result as OBJ and a PNG picture into subla-out/, and prints a table of what it did."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// No progress bars and no table (errors are still printed).
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Subdivide a mesh (OBJ or PLY; the embedded example without one) and
    /// write the result as OBJ, optionally with a PNG picture.
    Subdivide(SubdivideArgs),
    /// Render a mesh, or the result of subdividing it, to PNG (offscreen,
    /// through wgpu).
    Render(RenderArgs),
    /// Export the refinement matrices of a mesh as Matrix Market files.
    Matrix(MatrixArgs),
    /// Counts, histograms, boundaries, creases and problems of a mesh.
    Info(InfoArgs),
    /// Time build and eval of a mesh level by level and print a table.
    Bench(bench::BenchArgs),
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
    /// Split faces of more than three vertices into triangles (a fan from
    /// each face's first vertex; tags, holes and groups carried over):
    /// loop, loop-cgal and sqrt3 refuse other faces without it.
    #[arg(long)]
    triangulate: bool,
}

#[derive(clap::Args, Debug)]
struct MatrixArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
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
    /// Input mesh (.obj or .ply); OpenSubdiv shape tags in OBJ files are
    /// honoured. The embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Output OBJ file [default: <out-dir>/<name>.L<levels>.obj].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Folder of the default output files.
    #[arg(long, default_value = "subla-out")]
    out_dir: PathBuf,
    /// Also render the result to PNG (`--png` alone: next to the OBJ).
    #[arg(long, num_args = 0..=1, default_missing_value = "auto", value_name = "PNG")]
    png: Option<PathBuf>,
    /// Draw the control cage over the picture.
    #[arg(long)]
    cage: bool,
    /// Refuse to subdivide when the output is predicted to need more than
    /// this many bytes (suffixes K, M, G) [default: 80% of the available
    /// memory].
    #[arg(long, value_parser = parse_bytes)]
    max_memory: Option<u64>,
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

fn read_input(path: &Path) -> Result<MeshData, String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let r = match ext.as_deref() {
        Some("ply") => subla_mesh::ply::read_ply(path, Validation::OpenSubdiv),
        _ => subla_mesh::obj::read_obj(path, Validation::OpenSubdiv),
    };
    r.map_err(|e| {
        let (shown, e) = (path.display().to_string(), e.to_string());
        if e.contains(&shown) { e } else { format!("{shown}: {e}") }
    })
}

/// The input's name for default output files: the file stem, or the
/// embedded mesh's name.
fn input_name(input: Option<&Path>) -> String {
    input
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| embedded::NAME.to_owned())
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
    progress: progress::Progress,
) -> Result<Run, String> {
    let par = Par::Rayon;
    match args.mode {
        Mode::Static => {
            let bar = progress.phase(format!("building {} levels", args.levels));
            let t0 = Instant::now();
            let plan = r.build(mesh, args.levels, par).map_err(|e| e.to_string())?;
            let build_ms = t0.elapsed().as_secs_f64() * 1e3;
            bar.set_message("evaluating");
            let t1 = Instant::now();
            let positions = match args.precision {
                Precision::F64 => eval(&plan, pos, par),
                Precision::F32 => eval(&plan, pos.mapv(|x| x as f32).view(), par).mapv(f64::from),
            };
            let eval_ms = t1.elapsed().as_secs_f64() * 1e3;
            let fine = plan.refined(args.levels).ok_or("the scheme produced no refined mesh")?.clone();
            bar.finish_and_clear();
            Ok(Run { mesh: fine, positions, build_ms, eval_ms })
        }
        Mode::Modeling => {
            // Level by level (what `subla_scheme::modeling` does), so that
            // progress can be shown per level.
            let bar = progress.steps(u64::from(args.levels), "subdividing");
            let (mut build_ms, mut eval_ms) = (0.0, 0.0);
            let mut plan = None;
            let mut x = pos.to_owned();
            for _ in 0..args.levels {
                let t0 = Instant::now();
                let next = match plan.take() {
                    None => r.build(mesh, 1, par),
                    Some(p) => r.step(p, par),
                }
                .map_err(|e| e.to_string())?;
                build_ms += t0.elapsed().as_secs_f64() * 1e3;
                let t1 = Instant::now();
                x = match args.precision {
                    Precision::F64 => eval(&next, x.view(), par),
                    Precision::F32 => eval(&next, x.mapv(|v| v as f32).view(), par).mapv(f64::from),
                };
                eval_ms += t1.elapsed().as_secs_f64() * 1e3;
                plan = Some(next);
                bar.inc(1);
            }
            bar.finish_and_clear();
            let fine = match &plan {
                Some(p) => p.refined(p.levels()).ok_or("the scheme produced no refined mesh")?.clone(),
                None => r.build(mesh, 0, par).map_err(|e| e.to_string())?.refined(0).ok_or("no mesh")?.clone(),
            };
            Ok(Run { mesh: fine, positions: x, build_ms, eval_ms })
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

/// Reads `path` (the embedded mesh when `None`) and applies the
/// command-line options over its tags.
fn read_mesh(path: Option<&Path>, m: &MeshOpts, progress: progress::Progress) -> Result<MeshData, String> {
    let mut data = match path {
        Some(p) => {
            let bar = progress.phase(format!("reading {}", p.display()));
            let d = read_input(p);
            bar.finish_and_clear();
            d?
        }
        None => embedded::open_box()?,
    };
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
    if m.triangulate {
        data = data.triangulated().map_err(|e| e.to_string())?;
    }
    Ok(data)
}

/// `subla matrix`: the refinement matrices as Matrix Market files.
fn matrix(args: &MatrixArgs, progress: progress::Progress) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    with_slak!(args.scheme, r => export_matrices(r, &data.mesh, args))
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
        let composed = refinement.compose_with(&plan, budget, par).map_err(|e| e.to_string())?;
        println!("per-level matrices: {chain_nnz} nonzeros in all; product: {} nonzeros", composed.nnz());
        write(composed, &args.output)?;
    }
    Ok(())
}

/// Refuses to subdivide `levels` levels of `scheme` when the output is
/// predicted to exceed the budget (`max_memory`, or the default).
fn check_memory(scheme: Scheme, levels: u32, max_memory: Option<u64>, mesh: &Mesh) -> Result<(), String> {
    let (factor, per_corner) = match scheme {
        Scheme::Catmark | Scheme::Bilinear => (4, true),
        Scheme::Loop | Scheme::LoopCgal => (4, false),
        Scheme::Sqrt3 => (3, false),
    };
    let faces = memory::predicted_faces(mesh, levels, factor, per_corner);
    let needed = memory::predicted_bytes(faces);
    let (budget, what) = match max_memory {
        Some(b) => (b, "--max-memory"),
        None => memory::default_budget(),
    };
    if needed > u128::from(budget) {
        return Err(format!(
            "{levels} levels would make about {faces} faces and need about {}; the budget is {} ({what}; raise it with --max-memory or ask for fewer levels)",
            memory::human(needed),
            memory::human(u128::from(budget)),
        ));
    }
    Ok(())
}

/// What a run wrote, for the table.
struct Summary {
    obj: PathBuf,
    png: Option<PathBuf>,
    vertices: usize,
    faces: usize,
}

/// `subla subdivide`; with `picture_optional` (the main job), a picture
/// that cannot be rendered is a warning, not an error.
fn subdivide(
    args: &SubdivideArgs,
    progress: progress::Progress,
    quiet: bool,
    picture_optional: bool,
) -> Result<Summary, String> {
    let t_read = Instant::now();
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let read_ms = t_read.elapsed().as_secs_f64() * 1e3;
    check_memory(args.scheme, args.levels, args.max_memory, &data.mesh)?;
    let name = input_name(args.input.as_deref());
    let obj = args.output.clone().unwrap_or_else(|| args.out_dir.join(format!("{name}.L{}.obj", args.levels)));
    let png = args.png.as_ref().map(|p| if p.as_os_str() == "auto" { obj.with_extension("png") } else { p.clone() });
    let pos = data.positions().to_owned();
    let (in_v, in_f) = (data.mesh.num_vertices(), data.mesh.num_faces());
    let run = match (args.scheme, args.path, args.backend) {
        (scheme, PathKind::Slak, Backend::Gpu) => {
            with_gpu!(scheme, r => run_scheme(r, &data.mesh, pos.view(), args, progress))?
        }
        (_, PathKind::Lak, Backend::Gpu) => {
            return Err("--backend gpu runs the specialised kernels (--path slak)".into());
        }
        (Scheme::Catmark, PathKind::Lak, Backend::Cpu) => {
            run_scheme(&CatmarkLak, &data.mesh, pos.view(), args, progress)?
        }
        (Scheme::Loop, PathKind::Lak, Backend::Cpu) => {
            run_scheme(&LoopLak::new(), &data.mesh, pos.view(), args, progress)?
        }
        (Scheme::LoopCgal, PathKind::Lak, Backend::Cpu) => {
            run_scheme(&LoopLak::cgal(), &data.mesh, pos.view(), args, progress)?
        }
        (Scheme::Sqrt3, PathKind::Lak, Backend::Cpu) => {
            run_scheme(&Sqrt3Lak::new(), &data.mesh, pos.view(), args, progress)?
        }
        // The kernels, and bilinear (which has one path).
        (scheme, _, Backend::Cpu) => with_slak!(scheme, r => run_scheme(r, &data.mesh, pos.view(), args, progress))
            .map_err(
                |e| if e.contains("refines triangles only") { format!("{e} (or pass --triangulate)") } else { e },
            )?,
    };
    let (build_ms, eval_ms) = (run.build_ms, run.eval_ms);
    let creases = picture::crease_edges(&run.mesh);
    let out = output_mesh(run, args.keep_holes)?;
    let t_write = Instant::now();
    if let Some(dir) = obj.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let bar = progress.phase(format!("writing {}", obj.display()));
    let written = subla_mesh::obj::write_obj_file(&out, &obj).map_err(|e| format!("{}: {e}", obj.display()));
    bar.finish_and_clear();
    written?;
    let write_ms = t_write.elapsed().as_secs_f64() * 1e3;
    let mut render_ms = None;
    let mut png = png;
    if let Some(path) = png.clone() {
        let bar = progress.phase(format!("rendering {}", path.display()));
        let t = Instant::now();
        let pic = picture::Picture { z_up: args.input.is_none(), ..picture::Picture::default() };
        let cage = args.cage.then_some(&data);
        let r = picture::context()
            .and_then(|ctx| picture::write_png(ctx, &out.mesh, out.positions(), cage, creases, &pic, &path));
        bar.finish_and_clear();
        match r {
            Ok(()) => render_ms = Some(t.elapsed().as_secs_f64() * 1e3),
            Err(e) if picture_optional => {
                eprintln!("warning: no picture: {e}");
                png = None;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    let summary = Summary { obj, png, vertices: out.mesh.num_vertices(), faces: out.mesh.num_faces() };
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
            "output_vertices": summary.vertices,
            "output_faces": summary.faces,
            "read_ms": read_ms,
            "build_ms": build_ms,
            "eval_ms": eval_ms,
            "write_ms": write_ms,
            "render_ms": render_ms,
            "peak_memory_bytes": peak_memory_bytes(),
        });
        println!("{line}");
    } else if !quiet {
        let backend = match args.backend {
            Backend::Cpu => format!("cpu ({} threads)", subla_algebra::Par::Rayon.threads()),
            Backend::Gpu => "gpu".to_owned(),
        };
        println!(
            "{}: {in_v} vertices, {in_f} faces",
            args.input
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| format!("{} (embedded)", embedded::NAME))
        );
        println!("| scheme | levels | mode | backend | vertices | faces | build ms | eval ms | write ms |");
        println!("|---|---|---|---|---|---|---|---|---|");
        println!(
            "| {} | {} | {} | {backend} | {} | {} | {build_ms:.1} | {eval_ms:.1} | {write_ms:.1} |",
            format!("{:?}", args.scheme).to_lowercase(),
            args.levels,
            format!("{:?}", args.mode).to_lowercase(),
            summary.vertices,
            summary.faces,
        );
        println!("wrote {}", summary.obj.display());
        if let Some(p) = &summary.png {
            println!("wrote {}", p.display());
        }
    }
    Ok(summary)
}

#[derive(clap::Args, Debug)]
struct RenderArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Output PNG [default: subla-out/<name>.png, or <name>.L<levels>.png].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Subdivide this many levels (Catmull-Clark unless --scheme) first.
    #[arg(short, long, default_value_t = 0)]
    levels: u32,
    /// Subdivision scheme for --levels.
    #[arg(long, value_enum, default_value_t = Scheme::Catmark)]
    scheme: Scheme,
    /// Draw the control cage over the surface.
    #[arg(long)]
    cage: bool,
    /// Highlight the creases (tagged sharp edges).
    #[arg(long)]
    creases: bool,
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "800x600", value_parser = parse_size)]
    size: (u32, u32),
    /// Camera azimuth and elevation in degrees.
    #[arg(long, num_args = 2, value_names = ["AZIMUTH", "ELEVATION"], default_values_t = [35.0, 25.0])]
    view: Vec<f64>,
    /// Flat shading (one normal per face) instead of smooth.
    #[arg(long)]
    flat: bool,
    /// The up axis [default: y for files, z for the embedded mesh].
    #[arg(long, value_enum)]
    up: Option<Up>,
    #[command(flatten)]
    mesh: MeshOpts,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Up {
    Y,
    Z,
}

/// `800x600` as `(800, 600)`.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("`{s}` is not a size (try 800x600)"))?;
    let w: u32 = w.trim().parse().map_err(|_| format!("`{s}`: bad width"))?;
    let h: u32 = h.trim().parse().map_err(|_| format!("`{s}`: bad height"))?;
    if w == 0 || h == 0 {
        return Err(format!("`{s}`: the image needs at least one pixel each way"));
    }
    Ok((w, h))
}

/// `subla render`.
fn render(args: &RenderArgs, progress: progress::Progress, quiet: bool) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let name = input_name(args.input.as_deref());
    let out = args.output.clone().unwrap_or_else(|| {
        let file = if args.levels == 0 { format!("{name}.png") } else { format!("{name}.L{}.png", args.levels) };
        PathBuf::from("subla-out").join(file)
    });
    let (mesh, positions, creases) = if args.levels == 0 {
        let creases = if args.creases { picture::crease_edges(&data.mesh) } else { Vec::new() };
        (data.mesh.clone(), data.positions().to_owned(), creases)
    } else {
        check_memory(args.scheme, args.levels, None, &data.mesh)?;
        let sub = SubdivideArgs { scheme: args.scheme, ..subdivide_args(&["--levels", &args.levels.to_string()])? };
        let run = with_slak!(args.scheme, r => run_scheme(r, &data.mesh, data.positions(), &sub, progress))?;
        let creases = if args.creases { picture::crease_edges(&run.mesh) } else { Vec::new() };
        (run.mesh, run.positions, creases)
    };
    let pic = picture::Picture {
        width: args.size.0,
        height: args.size.1,
        azimuth: args.view.first().copied().unwrap_or(35.0),
        elevation: args.view.get(1).copied().unwrap_or(25.0),
        smooth: !args.flat,
        z_up: match args.up {
            Some(u) => u == Up::Z,
            None => args.input.is_none(),
        },
    };
    let bar = progress.phase(format!("rendering {}", out.display()));
    let cage = args.cage.then_some(&data);
    let r =
        picture::context().and_then(|ctx| picture::write_png(ctx, &mesh, positions.view(), cage, creases, &pic, &out));
    bar.finish_and_clear();
    r.map_err(|e| format!("{}: {e}", out.display()))?;
    if !quiet {
        println!("wrote {} ({}x{})", out.display(), pic.width, pic.height);
    }
    Ok(())
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// `subla info`.
fn info(args: &InfoArgs, progress: progress::Progress) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let name = args
        .input
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| format!("{} (embedded)", embedded::NAME));
    let strict = info::strict_verdict(&data);
    let (text, json) = info::report(&name, &data, strict);
    if args.json {
        println!("{json}");
    } else {
        print!("{text}");
    }
    Ok(())
}

/// `subla subdivide` with these arguments (and defaults for the rest).
fn subdivide_args(argv: &[&str]) -> Result<SubdivideArgs, String> {
    #[derive(Parser, Debug)]
    struct Only {
        #[command(flatten)]
        args: SubdivideArgs,
    }
    let argv = std::iter::once("subdivide").chain(argv.iter().copied());
    Only::try_parse_from(argv).map(|o| o.args).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let progress = progress::Progress::new(cli.quiet);
    let result = match &cli.command {
        None => subdivide_args(&["--levels", "3", "--png", "--cage"])
            .and_then(|args| subdivide(&args, progress, cli.quiet, true).map(|_| ())),
        Some(Command::Subdivide(args)) => subdivide(args, progress, cli.quiet, false).map(|_| ()),
        Some(Command::Render(args)) => render(args, progress, cli.quiet),
        Some(Command::Matrix(args)) => matrix(args, progress),
        Some(Command::Info(args)) => info(args, progress),
        Some(Command::Bench(args)) => bench::run(args, progress),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
