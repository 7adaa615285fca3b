//! `subla`: subdivide meshes from the command line.
//!
//! ```text
//! subla                       the main job: the embedded example mesh, 3 levels,
//!                             OBJ + PNG in subla-out/, a table of what was done
//! subla subdivide [IN] [-o OUT.obj] --scheme SCHEME --levels 2
//!       [--precision f32|f64] [--path lak|slak|edge-friend|halfedge] [--mode modeling|static]
//!       [--backend cpu|gpu] [--fallback none|cpu] [--boundary none|edge-only|edge-and-corner]
//!       [--crease-method uniform|chaikin] [--triangles catmark|smooth]
//!       [--keep-holes] [--png [OUT.png]] [--max-memory 4G] [--timings json]
//! subla render [IN] [-o OUT.png] [--levels 2] [--cage] [--creases] [--size 800x600]
//! subla matrix [IN] --levels 2 -o R.mtx [--path lak|slak|edge-friend|halfedge] [--per-level] [--limit] [--max-memory 8G]
//!              [--fvar-channel vt|vn [--fvar MODE]]
//! subla info [IN] [--json]
//! subla bench [IN] --levels 1,2,3 [--backend cpu|gpu] [--runs 3]
//! subla limit [IN] --isolation 3 [--endcap gregory|bspline] [--select FACES.txt] --grid 5 -o OUT.txt
//! subla tessellate [IN] --isolation 3 --rate 8 -o OUT.obj [--png [OUT.png]]
//! subla solid info IN.vtk|IN.mesh [--json]
//! subla solid subdivide IN.vtk|IN.mesh --levels 2 -o OUT.vtk [--binary] [--surface OUT.obj] [--backend cpu|gpu]
//! ```
//! Without `IN`, every subcommand uses the embedded example mesh (an open
//! box with pentagons, triangles, a semi-sharp crease and a boundary). The
//! schemes are those of subla's registry (`subla::registry`): every
//! subcommand dispatches through it.

mod analyze;
mod bench;
mod embedded;
mod info;
mod limit;
mod memory;
mod output;
mod picture;
mod precision;
mod predict;
mod progress;
mod schemes;
mod solid;
mod subdivide;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use subla::registry::{Backend as Site, Path as Written};
use subla::scheme::FallbackPolicy;
use subla_algebra::Par;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, MeshData, TriangleSubdivision, Validation};
use subla_scheme::Refiner;
use subla_scheme::refinement::{Budget, Refinement};

use crate::output::shown;
use crate::subdivide::{SubdivideArgs, subdivide, subdivide_args};

/// When the run started, for `--timings`' total.
static START: OnceLock<Instant> = OnceLock::new();

/// Milliseconds since the run started.
fn total_ms() -> f64 {
    START.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3)
}

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
    /// The limit surface (position and derivatives) on a grid of every ptex
    /// face, by feature-adaptive refinement and patches, as text.
    Limit(limit::LimitArgs),
    /// A watertight quad mesh of the limit surface at a uniform rate (OBJ
    /// with normals), optionally rendered to PNG.
    Tessellate(limit::TessellateArgs),
    /// Volumetric meshes (VTK, Medit) and Catmull-Clark solids: `info`,
    /// `subdivide`.
    Solid(solid::SolidArgs),
    /// The local subdivision matrix of a scheme around extraordinary
    /// vertices: its spectrum and the classical conditions, per valence.
    Analyze(analyze::AnalyzeArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Precision {
    F32,
    F64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum PathKind {
    /// Mapped sparse algebra (Mlakar et al. 2020, §3).
    Lak,
    /// Specialised kernels (§4).
    Slak,
    /// The edge-friend encoding (Catmull-Clark; Kuth et al. 2023).
    EdgeFriend,
    /// Closed-form halfedge refinement (Catmull-Clark, Loop, √3).
    Halfedge,
}

impl PathKind {
    fn written(self) -> Written {
        match self {
            PathKind::Lak => Written::Algebra,
            PathKind::Slak => Written::Kernels,
            PathKind::EdgeFriend => Written::EdgeFriend,
            PathKind::Halfedge => Written::Halfedge,
        }
    }
    fn of(w: Written) -> PathKind {
        match w {
            Written::Algebra => PathKind::Lak,
            Written::EdgeFriend => PathKind::EdgeFriend,
            Written::Halfedge => PathKind::Halfedge,
            _ => PathKind::Slak,
        }
    }
    /// The name `--path` takes.
    fn name(self) -> &'static str {
        match self {
            PathKind::Lak => "lak",
            PathKind::Slak => "slak",
            PathKind::EdgeFriend => "edge-friend",
            PathKind::Halfedge => "halfedge",
        }
    }
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
    /// The GPU through wgpu, for the schemes with GPU kernels (`slak on
    /// cpu and gpu` in the `--scheme` list): eval on the device in `f32`;
    /// Catmull-Clark refines its topology on the device too, the others on
    /// the CPU. `SUBLA_GPU_BACKEND` and `SUBLA_GPU_ADAPTER` choose the
    /// adapter; without a usable one the run fails, unless `--fallback
    /// cpu`.
    Gpu,
}

impl Backend {
    fn site(self) -> Site {
        match self {
            Backend::Cpu => Site::Cpu,
            Backend::Gpu => Site::Gpu,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Fallback {
    /// Fail when the GPU cannot run the work.
    None,
    /// Run on the CPU when no GPU adapter is usable, the device fails, or
    /// f64 is asked of it; a warning says so.
    Cpu,
}

impl Fallback {
    fn policy(self) -> FallbackPolicy {
        match self {
            Fallback::None => FallbackPolicy::Never,
            Fallback::Cpu => FallbackPolicy::Cpu,
        }
    }
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
    /// matrix goes to `R.i.mtx`. A folder (existing, or a path ending in
    /// `/`) gets `R.mtx`, or `R.0.mtx`, `R.1.mtx`, … inside it.
    #[arg(short, long)]
    output: PathBuf,
    /// Subdivision scheme.
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    scheme: String,
    /// Implementation path (the rows are numbered as `subdivide` with the
    /// same path numbers its vertices) [default: the scheme's fastest on
    /// the CPU, as for `subdivide`].
    #[arg(long, value_enum)]
    path: Option<PathKind>,
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
    /// Export the operators of a face-varying channel instead of the
    /// vertices': `vt` (texture coordinates) or `vn` (normals, refined as
    /// data). Columns: the file's values of the channel; rows: the refined
    /// values, in the order `subdivide` writes them (`vt`).
    #[arg(long, value_enum)]
    fvar_channel: Option<FVarChannel>,
    /// Face-varying interpolation mode for --fvar-channel [default: the
    /// file's `facevaryinginterpolateboundary` tag, else corners-plus1].
    #[arg(long, value_enum)]
    fvar: Option<subdivide::FVarMode>,
    /// Refuse to build matrices predicted to need more than this many bytes
    /// (suffixes K, M, G) [default: 80% of the memory the process may use:
    /// available memory, ulimit and cgroup limits, the smallest].
    #[arg(long, value_parser = parse_bytes)]
    max_memory: Option<u64>,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// A face-varying channel of an OBJ file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum FVarChannel {
    /// Texture coordinates (`vt`).
    Vt,
    /// Normals (`vn`), as data.
    Vn,
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

fn read_input(path: &Path) -> Result<MeshData, String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let r = match ext.as_deref() {
        Some("ply") => subla_mesh::ply::read_ply(path, Validation::OpenSubdiv),
        _ => subla_mesh::obj::read_obj(path, Validation::OpenSubdiv),
    };
    r.map_err(|e| {
        let (raw, e) = (path.display().to_string(), e.to_string());
        if e.contains(&raw) { e.replace(&raw, &shown(path)) } else { format!("{}: {e}", shown(path)) }
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

/// Reads `path` (the embedded mesh when `None`) and applies the
/// command-line options over its tags.
fn read_mesh(path: Option<&Path>, m: &MeshOpts, progress: progress::Progress) -> Result<MeshData, String> {
    let mut data = match path {
        Some(p) => {
            let bar = progress.phase(format!("reading {}", shown(p)));
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

/// Where `subla matrix` writes: the product's file, or the per-level
/// files' stem (`R` of `R.0.mtx`).
fn matrix_target(args: &MatrixArgs) -> Result<PathBuf, String> {
    use std::os::unix::ffi::OsStrExt;
    let out = &args.output;
    let folder = out.is_dir() || out.as_os_str().as_bytes().ends_with(b"/");
    if folder {
        return Ok(out.join(if args.per_level { "R" } else { "R.mtx" }));
    }
    if args.per_level {
        if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
            return Err(format!(
                "-o {}: --per-level writes one file per level, next to -o: name a file (R.mtx) or a folder",
                shown(out)
            ));
        }
        return Ok(out.with_extension(""));
    }
    Ok(out.clone())
}

/// `subla matrix`: the refinement matrices as Matrix Market files.
fn matrix(args: &MatrixArgs, progress: progress::Progress) -> Result<(), String> {
    if args.per_level && args.levels == 0 && !args.limit {
        return Err(
            "--per-level --levels 0: no level has a matrix (ask for --levels 1 or more, or --limit; without --per-level, --levels 0 writes the identity)"
                .to_owned(),
        );
    }
    let target = matrix_target(args)?;
    let inputs: Vec<&Path> = args.input.as_deref().into_iter().collect();
    // Before reading: the outputs that do not depend on the level count.
    let first = if args.per_level { target.with_extension("0.mtx") } else { target.clone() };
    output::check_outputs(&inputs, &[("-o", &first)])?;
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let scheme = schemes::scheme(&args.scheme)?;
    let budget = check_matrix_memory(scheme, &data.mesh, args)?;
    let paths: Vec<PathBuf> = if args.per_level {
        // The limit operator, when asked for, is the last "level".
        (0..=args.levels - u32::from(!args.limit)).map(|i| target.with_extension(format!("{i}.mtx"))).collect()
    } else {
        vec![target]
    };
    let named: Vec<(&str, &Path)> = paths.iter().map(|p| ("-o", p.as_path())).collect();
    output::check_outputs(&inputs, &named)?;
    if let Some(channel) = args.fvar_channel {
        return export_fvar_matrices(&data, channel, args, Budget::bytes(budget), &paths);
    }
    let path = args.path.map_or_else(|| scheme.fastest(Site::Cpu), PathKind::written);
    let choice = schemes::Choice { backend: Site::Cpu, path, fallback: FallbackPolicy::Never };
    let (r, _) = schemes::refiner(scheme, choice, &Default::default())?;
    export_matrices(&*r, &data.mesh, args, Budget::bytes(budget), &paths)
}

/// `subla matrix --fvar-channel`: the operators of a face-varying channel.
fn export_fvar_matrices(
    data: &MeshData,
    channel: FVarChannel,
    args: &MatrixArgs,
    budget: Budget,
    paths: &[PathBuf],
) -> Result<(), String> {
    let (fv, what) = match channel {
        FVarChannel::Vt => (&data.texcoords, "texture coordinates (vt)"),
        FVarChannel::Vn => (&data.normals, "normals (vn)"),
    };
    let name = args.input.as_deref().map_or_else(|| embedded::NAME.to_owned(), shown);
    let fv = fv.as_ref().ok_or_else(|| format!("{name} has no {what} on every face"))?;
    if args.limit {
        return Err("--limit: face-varying channels have no limit operator here (leave out --limit)".to_owned());
    }
    if args.path.is_some() {
        return Err("--path chooses among the vertex refinements; --fvar-channel has one (leave out --path)".to_owned());
    }
    let mode = args.fvar.map_or(data.mesh.options().fvar_boundary, subdivide::FVarMode::mode);
    let plan = subdivide::fvar_plan(&data.mesh, fv, &args.scheme, args.levels, mode)?;
    let refinement = Refinement::chain(&*plan, budget, Par::Rayon).map_err(schemes::error)?;
    write_refinement(refinement, &*plan, args.per_level, budget, paths)
}

/// Refuses, from counts alone, matrices predicted to need more than the
/// budget; returns the budget.
fn check_matrix_memory(scheme: &subla::registry::Scheme, mesh: &Mesh, args: &MatrixArgs) -> Result<u64, String> {
    let p = predict::matrix(scheme.growth(), mesh, args.levels, !args.per_level, args.limit);
    let (budget, what) = memory::budget(args.max_memory);
    if p.bytes > u128::from(budget) {
        return Err(format!(
            "{} levels of {} would make about {} faces and {} points and need up to {}; the budget is {} ({what}; {})",
            args.levels,
            args.scheme,
            memory::count(p.faces),
            memory::count(p.rows),
            memory::human(p.bytes),
            memory::human(u128::from(budget)),
            memory::advice(&what),
        ));
    }
    Ok(budget)
}

fn export_matrices<R: Refiner<Input = Mesh> + ?Sized>(
    r: &R,
    mesh: &Mesh,
    args: &MatrixArgs,
    budget: Budget,
    paths: &[PathBuf],
) -> Result<(), String> {
    let par = Par::Rayon;
    let plan = r.build(mesh, args.levels, par).map_err(schemes::error)?;
    let mut refinement = Refinement::chain(&plan, budget, par).map_err(schemes::error)?;
    if args.limit {
        refinement = refinement.with_limit(&plan, budget, par).map_err(schemes::error)?;
    }
    write_refinement(refinement, &plan, args.per_level, budget, paths)
}

/// Writes each of `refinement`'s matrices (`per_level`) or their product
/// (composed with `plan`'s closed forms) to `paths`, one line each saying
/// what was written.
fn write_refinement<P: subla_scheme::Plan + ?Sized>(
    mut refinement: Refinement,
    plan: &P,
    per_level: bool,
    budget: Budget,
    paths: &[PathBuf],
) -> Result<(), String> {
    let write = |m: &subla_algebra::CsrMat<f64>, path: &Path| -> Result<(), String> {
        output::write_file(path, |w| subla_algebra::mtx::write_matrix_market(m.as_ref(), w))?;
        println!("{}: {} x {}, {} nonzeros", shown(path), m.nrows(), m.ncols(), m.nnz());
        Ok(())
    };
    if per_level {
        for (m, path) in refinement.levels().iter().zip(paths) {
            write(m, path)?;
        }
        return Ok(());
    }
    let chain_nnz = refinement.chain_nnz();
    let composed = refinement.compose_with(plan, budget, Par::Rayon).map_err(|e| e.to_string())?;
    println!("per-level matrices: {chain_nnz} nonzeros in all; product: {} nonzeros", composed.nnz());
    write(composed, &paths[0])
}

#[derive(clap::Args, Debug)]
struct RenderArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Output PNG; a folder (one that exists, or a path ending in `/`) gets
    /// the default name inside [default: subla-out/<name>.png, or
    /// <name>.L<levels>.png].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Subdivide this many levels (Catmull-Clark unless --scheme) first.
    #[arg(short, long, default_value_t = 0)]
    levels: u32,
    /// Subdivision scheme for --levels.
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    scheme: String,
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
    /// Draw a checker from the texture coordinates (vt), refined with the
    /// surface (face-varying, the file's mode), with this many squares per
    /// unit of texture space [default: 8]: seams show where the squares
    /// break.
    #[arg(long, num_args = 0..=1, default_missing_value = "8", value_name = "SQUARES")]
    checker: Option<f32>,
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

/// Refuses, in one line and before any GPU work, an image larger than
/// the device's largest texture, or whose multisampled colour target (4
/// samples of 4 bytes per pixel) exceeds the largest single allocation the
/// device allows (`max_buffer_size`, which wgpu takes from it).
fn check_image_size(ctx: &subla_gpu::GpuContext, width: u32, height: u32) -> Result<(), String> {
    let limits = ctx.limits();
    let max = limits.max_texture_dimension_2d;
    if width > max || height > max {
        return Err(format!(
            "--size {width}x{height}: this GPU draws at most {max}x{max} pixels (ask for a smaller --size)"
        ));
    }
    let bytes = u128::from(width) * u128::from(height) * 16;
    if bytes > u128::from(limits.max_buffer_size) {
        return Err(format!(
            "--size {width}x{height}: the picture needs {} of GPU memory in one piece, over this GPU's largest allocation of {} (ask for a smaller --size)",
            memory::human(bytes),
            memory::human(u128::from(limits.max_buffer_size)),
        ));
    }
    Ok(())
}

/// `subla render`.
fn render(args: &RenderArgs, progress: progress::Progress, quiet: bool) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let name = input_name(args.input.as_deref());
    let file = if args.levels == 0 { format!("{name}.png") } else { format!("{name}.L{}.png", args.levels) };
    let out = match &args.output {
        Some(o) => output::in_folder(o, &file),
        None => PathBuf::from("subla-out").join(file),
    };
    let inputs: Vec<&Path> = args.input.as_deref().into_iter().collect();
    output::check_outputs(&inputs, &[("-o", &out)])?;
    if args.checker.is_some() && data.texcoords.is_none() {
        return Err(format!("--checker: {name} has no texture coordinates (vt) on every face"));
    }
    let texcoords = match (&data.texcoords, args.checker) {
        (Some(fv), Some(_)) => {
            let mode = data.mesh.options().fvar_boundary;
            Some(
                subdivide::refine_channel(&data.mesh, fv, &args.scheme, args.levels, mode)
                    .map_err(|e| format!("--checker: {e}"))?,
            )
        }
        _ => None,
    };
    let (mesh, positions, creases) = if args.levels == 0 {
        let creases = if args.creases { picture::crease_edges(&data.mesh) } else { Vec::new() };
        (data.mesh.clone(), data.positions().to_owned(), creases)
    } else {
        let scheme = schemes::scheme(&args.scheme)?;
        schemes::check_memory(scheme, args.levels, None, &data.mesh, data.vertices.ncols())?;
        let sub = subdivide_args(&["--levels", &args.levels.to_string(), "--scheme", &args.scheme])?;
        let choice = schemes::Choice { backend: Site::Cpu, path: Written::Kernels, fallback: FallbackPolicy::Never };
        let (r, _) = schemes::refiner(scheme, choice, &Default::default())?;
        let run = subdivide::run_scheme(&*r, Site::Cpu, &data.mesh, data.positions(), &sub, true, progress)?;
        let mesh = run.refined.into_mesh();
        let creases = if args.creases { picture::crease_edges(&mesh) } else { Vec::new() };
        (mesh, run.positions, creases)
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
        checker: args.checker,
    };
    // The channel follows the refined faces (the kernels' order).
    if let Some(fv) = &texcoords
        && fv.indices.len() != mesh.topology().num_corners()
    {
        return Err("--checker: the refined faces do not follow the texture coordinates".to_owned());
    }
    let bar = progress.phase(format!("rendering {}", shown(&out)));
    let cage = args.cage.then_some(&data);
    let r = picture::context().and_then(|ctx| {
        check_image_size(ctx, pic.width, pic.height)?;
        picture::write_png_textured(ctx, &mesh, positions.view(), texcoords.as_ref(), cage, creases, &pic, &out)
    });
    bar.finish_and_clear();
    r.map_err(|e| output::at(&out, &e))?;
    if !quiet {
        println!("wrote {} ({}x{})", shown(&out), pic.width, pic.height);
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
    /// Isolation level of the feature-adaptive refinement reported.
    #[arg(long, default_value_t = 3)]
    isolation: u32,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// `subla info`.
fn info(args: &InfoArgs, progress: progress::Progress) -> Result<(), String> {
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let name = args.input.as_deref().map(shown).unwrap_or_else(|| format!("{} (embedded)", embedded::NAME));
    let strict = info::strict_verdict(&data);
    let (mut text, mut json) = info::report(&name, &data, strict);
    let (adaptive_text, adaptive_json) = info::adaptive(&data, args.isolation);
    text.push_str(&adaptive_text);
    json["adaptive"] = adaptive_json;
    if args.json {
        println!("{json}");
    } else {
        print!("{text}");
    }
    Ok(())
}

fn main() -> ExitCode {
    START.get_or_init(Instant::now);
    // First, before any thread starts: Ctrl-C removes temporary files.
    output::handle_signals();
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
        Some(Command::Limit(args)) => limit::limit(args, progress, cli.quiet),
        Some(Command::Tessellate(args)) => limit::tessellate(args, progress, cli.quiet),
        Some(Command::Solid(args)) => solid::solid(args, progress, cli.quiet),
        Some(Command::Analyze(args)) => analyze::analyze(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", output::one_line(&e));
            ExitCode::FAILURE
        }
    }
}
