//! `subla subdivide` (and the main job, which is one): read, predict,
//! refine, write, draw, report — each a step below.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use ndarray::{Array2, ArrayView2};
use subla::registry::{Backend as Site, Path as Written, Setup};
use subla_algebra::Par;
use subla_mesh::normals::vertex_normals;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{FVarLinearInterpolation, FaceVarying, FileFormat, Mesh, MeshBuilder, MeshData};
use subla_scheme::tangents::{TangentRules, limit_normals};
use subla_scheme::{Plan, Real, Refiner, eval};

use crate::output::shown;
use crate::{
    Backend, Fallback, MeshOpts, Mode, PathKind, Precision, Timings, embedded, parse_bytes, picture, progress,
};
use crate::{input_name, output, peak_memory_bytes, precision, read_mesh, schemes, total_ms};

mod carry;

#[derive(clap::Args, Debug)]
pub(crate) struct SubdivideArgs {
    /// Input mesh (.obj or .ply); OpenSubdiv shape tags in OBJ files are
    /// honoured. The embedded example mesh when absent.
    pub(crate) input: Option<PathBuf>,
    /// Output file: PLY (binary) when its name ends in `.ply`, OBJ otherwise;
    /// a folder (one that exists, or a path ending in `/`) gets the default
    /// name inside [default: <out-dir>/<name>.L<levels>.obj, or .ply for a
    /// PLY input].
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
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    pub(crate) scheme: String,
    /// Number of levels.
    #[arg(short, long, default_value_t = 1)]
    pub(crate) levels: u32,
    /// Floating-point precision of the evaluation [default: f64 on the
    /// CPU, f32 on the GPU, which computes in f32 only].
    #[arg(long, value_enum)]
    precision: Option<Precision>,
    /// Implementation path: the specialised kernels, the mapped sparse
    /// algebra (every scheme but bilinear; CPU only), the edge-friend
    /// kernels (catmark; CPU and GPU) or closed-form halfedge refinement
    /// (catmark, loop, loop-cgal, sqrt3; CPU) [default: the scheme's fastest on the
    /// backend: edge-friend for catmark and halfedge for Loop and √3 on the
    /// CPU, else slak].
    #[arg(long, value_enum)]
    path: Option<PathKind>,
    /// Operational mode.
    #[arg(long, value_enum, default_value_t = Mode::Static)]
    mode: Mode,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// What the GPU backend does when it cannot run the work.
    #[arg(long, value_enum, default_value_t = Fallback::None)]
    fallback: Fallback,
    #[command(flatten)]
    mesh: MeshOpts,
    /// Write hole faces too (as `t hole` tags) instead of leaving them out.
    #[arg(long)]
    keep_holes: bool,
    /// How texture coordinates (`vt`) are refined at seams and boundaries
    /// (OpenSubdiv's face-varying linear interpolation) [default: the
    /// file's `facevaryinginterpolateboundary` tag, else corners-plus1].
    #[arg(long, value_enum)]
    fvar: Option<FVarMode>,
    /// Print one JSON line with timings, counts and peak memory.
    #[arg(long, value_enum)]
    timings: Option<Timings>,
}

impl SubdivideArgs {
    /// The precision asked for, or the default of the backend the work
    /// runs on (the CPU's, when the GPU could not be opened and a fallback
    /// was allowed).
    fn precision(&self, site: Site) -> Precision {
        self.precision.unwrap_or(match site {
            Site::Cpu => Precision::F64,
            Site::Gpu => Precision::F32,
        })
    }
}

/// OpenSubdiv's face-varying linear interpolation modes, as `--fvar` names
/// them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FVarMode {
    /// Smooth everywhere, seams and boundaries as creases.
    None,
    /// Linear at corners (values in one face).
    CornersOnly,
    /// And at vertices with three or more values.
    CornersPlus1,
    /// And at darts and both values beside a corner.
    CornersPlus2,
    /// Linear along seams and boundaries.
    Boundaries,
    /// Linear everywhere.
    All,
}

impl FVarMode {
    pub(crate) fn mode(self) -> FVarLinearInterpolation {
        use FVarLinearInterpolation as M;
        match self {
            FVarMode::None => M::None,
            FVarMode::CornersOnly => M::CornersOnly,
            FVarMode::CornersPlus1 => M::CornersPlus1,
            FVarMode::CornersPlus2 => M::CornersPlus2,
            FVarMode::Boundaries => M::Boundaries,
            FVarMode::All => M::All,
        }
    }
}

/// The input's texture coordinates refined as `args` refines its mesh, one
/// index per corner of the finest faces (holes included), or the reason
/// they cannot be.
fn refined_texcoords(input: &MeshData, args: &SubdivideArgs) -> Result<Option<FaceVarying>, String> {
    let Some(fv) = &input.texcoords else { return Ok(None) };
    let mode = args.fvar.map_or(input.mesh.options().fvar_boundary, FVarMode::mode);
    refine_channel(&input.mesh, fv, &args.scheme, args.levels, mode).map(Some)
}

/// Channel `fv` over `mesh` refined `levels` times by `scheme` ([`fvar_plan`]):
/// the finest values and each finest corner's value, in the order of the
/// vertex plans' finest faces.
pub(crate) fn refine_channel(
    mesh: &Mesh,
    fv: &FaceVarying,
    scheme: &str,
    levels: u32,
    mode: FVarLinearInterpolation,
) -> Result<FaceVarying, String> {
    if levels == 0 {
        return Ok(fv.clone());
    }
    let plan = fvar_plan(mesh, fv, scheme, levels, mode)?;
    let values = eval(&*plan, fv.values.view(), Par::Rayon).map_err(|e| e.to_string())?;
    let indices = plan.faces(levels, Par::Rayon).map_err(|e| e.to_string())?.face_verts().to_vec();
    Ok(FaceVarying { values, indices })
}

/// The face-varying refinement of channel `fv` over `mesh` by `scheme`
/// (its values numbered as the finest faces' corners use them), or why
/// there is none (√3 has no face-varying rules). The tagged value mesh
/// through a vertex plan where it is exact (Catmull-Clark and bilinear: the
/// edge-friend plan; Loop: the kernels), every other case the face-varying
/// plan.
pub(crate) fn fvar_plan(
    mesh: &Mesh,
    fv: &FaceVarying,
    scheme: &str,
    levels: u32,
    mode: FVarLinearInterpolation,
) -> Result<Box<dyn Plan>, String> {
    subla::registry::face_varying_plan(mesh, &fv.indices, fv.values.nrows(), scheme, levels, mode, Par::Rayon)
        .map_err(|e| e.to_string())
}

/// `fv` (over every face of `mesh`, holes included) over the faces a file
/// holds: hole faces' corners left out unless `keep_holes`.
fn texcoords_written(
    fv: FaceVarying,
    mesh_holes: &[bool],
    face_sizes: impl Iterator<Item = usize>,
    keep_holes: bool,
) -> FaceVarying {
    if keep_holes || !mesh_holes.contains(&true) {
        return fv;
    }
    let mut indices = Vec::with_capacity(fv.indices.len());
    let mut at = 0;
    for (f, n) in face_sizes.enumerate() {
        if !mesh_holes[f] {
            indices.extend_from_slice(&fv.indices[at..at + n]);
        }
        at += n;
    }
    FaceVarying { values: fv.values, indices }
}

/// `subla subdivide` with these arguments (and defaults for the rest).
pub(crate) fn subdivide_args(argv: &[&str]) -> Result<SubdivideArgs, String> {
    #[derive(Parser, Debug)]
    struct Only {
        #[command(flatten)]
        args: SubdivideArgs,
    }
    let argv = std::iter::once("subdivide").chain(argv.iter().copied());
    Only::try_parse_from(argv).map(|o| o.args).map_err(|e| e.to_string())
}

/// The finest level of a run: its full mesh, or (where nothing written
/// needs its edges) its faces alone.
pub(crate) enum Refined {
    /// The full mesh (connectivity, effective sharpness).
    Mesh(Mesh),
    /// The faces, as the plan hands them out without deriving the mesh:
    /// for a control mesh without sharpness or holes, whose refined levels
    /// have none a file would hold.
    Faces(RefinedFaces),
}

/// The faces of a finest level and the options a file holds as tags.
pub(crate) struct RefinedFaces {
    face_ptr: Vec<u32>,
    face_verts: Vec<u32>,
    options: subla_mesh::Options,
}

impl Refined {
    fn num_faces(&self) -> usize {
        match self {
            Refined::Mesh(m) => m.num_faces(),
            Refined::Faces(f) => f.face_ptr.len() - 1,
        }
    }
    fn num_corners(&self) -> usize {
        match self {
            Refined::Mesh(m) => m.topology().num_corners(),
            Refined::Faces(f) => f.face_verts.len(),
        }
    }
    /// The full mesh, for the callers that asked for it.
    pub(crate) fn into_mesh(self) -> Mesh {
        match self {
            Refined::Mesh(m) => m,
            Refined::Faces(_) => unreachable!("the full mesh was asked for"),
        }
    }
}

/// What a refinement produced, and how long it took.
pub(crate) struct Run {
    pub(crate) refined: Refined,
    /// The refined vertex data: every channel given to [`run_scheme`]
    /// (the positions first, then colours and the rest, if given).
    pub(crate) positions: Array2<f64>,
    build_ms: f64,
    eval_ms: f64,
    /// Deriving the finest level's full mesh (connectivity, tags), or
    /// copying its faces, from the plan.
    mesh_ms: f64,
    /// Where the evaluations ran instead of where asked, said once each.
    fell_back: Vec<String>,
}

/// Evaluates `plan` on `x` in `precision`, noting a fallback.
fn eval_in(
    plan: &impl Plan,
    x: ArrayView2<'_, f64>,
    precision: Precision,
    par: Par,
    fell_back: &mut Vec<String>,
) -> Result<Array2<f64>, String> {
    fn run<T: Real>(plan: &impl Plan, x: ArrayView2<'_, T>, par: Par) -> Result<Array2<T>, String> {
        eval(plan, x, par).map_err(schemes::error)
    }
    let y = match precision {
        Precision::F64 => run(plan, x, par)?,
        Precision::F32 => run(plan, x.mapv(|v| v as f32).view(), par)?.mapv(f64::from),
    };
    if let Some(f) = plan.last_fallback().map(|f| f.to_string()).filter(|f| !fell_back.contains(f)) {
        fell_back.push(f);
    }
    Ok(y)
}

/// Refines `mesh` and its vertex data `pos` with `r` (running on `site`),
/// in the mode, precision and levels of `args`. `pos` has any number of
/// channels, positions first: every channel is vertex data, refined by
/// the same operator in the same evaluation. The finest level comes back
/// as its full mesh if `want_mesh`, or if a file of it would hold tags
/// (the control mesh has sharpness or holes) or the plan ran on the GPU;
/// else as its faces alone.
pub(crate) fn run_scheme<R: Refiner<Input = Mesh> + ?Sized>(
    r: &R,
    site: Site,
    mesh: &Mesh,
    pos: ArrayView2<'_, f64>,
    args: &SubdivideArgs,
    want_mesh: bool,
    progress: progress::Progress,
) -> Result<Run, String> {
    let par = Par::Rayon;
    let precision = args.precision(site);
    let mut fell_back = Vec::new();
    let faces_only = !want_mesh && site == Site::Cpu && !mesh.has_sharpness() && !mesh.has_holes();
    // The finest level as a file needs it: its faces alone where no tag
    // needs its edges (with the options of the scheme's prepared level 0).
    let finest = |plan: &dyn Plan, level: u32| -> Result<Refined, String> {
        if !faces_only {
            return Ok(Refined::Mesh(plan.refined(level, par).map_err(schemes::error)?.clone()));
        }
        let f = plan.faces(level, par).map_err(schemes::error)?;
        let options = r.build(mesh, 0, par).and_then(|p| p.refined(0, par).map(|m| m.options()));
        Ok(Refined::Faces(RefinedFaces {
            face_ptr: f.face_ptr().into_owned(),
            face_verts: f.face_verts().to_vec(),
            options: options.map_err(schemes::error)?,
        }))
    };
    match args.mode {
        Mode::Static => {
            let bar = progress.phase(format!("building {} levels", args.levels));
            let t0 = Instant::now();
            let plan = r.build(mesh, args.levels, par).map_err(schemes::error)?;
            let build_ms = t0.elapsed().as_secs_f64() * 1e3;
            bar.set_message("evaluating");
            let t1 = Instant::now();
            let positions = eval_in(&plan, pos, precision, par, &mut fell_back)?;
            let eval_ms = t1.elapsed().as_secs_f64() * 1e3;
            let t2 = Instant::now();
            let refined = finest(&plan, args.levels)?;
            let mesh_ms = t2.elapsed().as_secs_f64() * 1e3;
            bar.finish_and_clear();
            Ok(Run { refined, positions, build_ms, eval_ms, mesh_ms, fell_back })
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
                .map_err(schemes::error)?;
                build_ms += t0.elapsed().as_secs_f64() * 1e3;
                let t1 = Instant::now();
                x = eval_in(&next, x.view(), precision, par, &mut fell_back)?;
                eval_ms += t1.elapsed().as_secs_f64() * 1e3;
                plan = Some(next);
                bar.inc(1);
            }
            bar.finish_and_clear();
            let t2 = Instant::now();
            let refined = match &plan {
                Some(p) => finest(p, p.levels())?,
                None => Refined::Mesh(
                    r.build(mesh, 0, par).and_then(|p| p.refined(0, par).cloned()).map_err(schemes::error)?,
                ),
            };
            let mesh_ms = t2.elapsed().as_secs_f64() * 1e3;
            Ok(Run { refined, positions: x, build_ms, eval_ms, mesh_ms, fell_back })
        }
    }
}

/// The refined level as a file holds it: a mesh with its data, or faces
/// and data alone (no tag to write).
pub(crate) enum Output {
    Data(Box<MeshData>),
    Faces {
        vertices: Array2<f64>,
        channels: Vec<String>,
        faces: RefinedFaces,
        groups: Vec<subla_mesh::Group>,
        texcoords: Option<Box<FaceVarying>>,
    },
}

impl Output {
    fn num_vertices(&self) -> usize {
        match self {
            Output::Data(d) => d.mesh.num_vertices(),
            Output::Faces { vertices, .. } => vertices.nrows(),
        }
    }
    fn num_faces(&self) -> usize {
        match self {
            Output::Data(d) => d.mesh.num_faces(),
            Output::Faces { faces, .. } => faces.face_ptr.len() - 1,
        }
    }
}

/// The refined mesh as a file would hold it: hole faces left out (unless
/// asked), and only the sharpness a user would write (not the infinite
/// sharpness the scheme gives boundary and non-manifold elements); every
/// vertex channel of `input` with its name, and its groups mapped to the
/// refined faces (`carry`). What cannot be carried to `out` is said in a
/// warning on standard error, even with `--quiet`.
fn output_mesh(run: Run, input: &MeshData, args: &SubdivideArgs, out: &Path) -> Result<Output, String> {
    let keep_holes = args.keep_holes;
    let growth = schemes::scheme(&args.scheme)?.growth();
    let groups = carry::refined_groups(&input.groups, &input.mesh, growth, args.levels, run.refined.num_faces());
    let name = match &args.input {
        Some(p) => shown(p),
        None => embedded::NAME.to_owned(),
    };
    let texcoords = if input.texcoords.is_some() && !faces_follow_channel(args) {
        eprintln!(
            "warning: {name}: texture coordinates (vt) were left out of {}: Loop's halfedge path numbers its faces \
             otherwise (leave out --path halfedge, or use --path slak)",
            shown(out)
        );
        None
    } else {
        match refined_texcoords(input, args) {
            Ok(fv) => fv,
            Err(why) => {
                eprintln!("warning: {name}: texture coordinates (vt) were left out of {}: {why}", shown(out));
                None
            }
        }
    };
    // The channel follows the plan's finest faces: the same faces, in the
    // same order, with the same number of corners.
    let texcoords = texcoords.filter(|fv| {
        let fits = fv.indices.len() == run.refined.num_corners();
        if !fits {
            eprintln!(
                "warning: {name}: texture coordinates (vt) were left out of {}: the refined faces do not follow them",
                shown(out)
            );
        }
        fits
    });
    // Normals are not refined as data: the refined surface's are written
    // (positions needed: three channels at least).
    let normals = input.normals.is_some() && run.positions.ncols() >= 3;
    // PLY's vertex normals (`nx`, `ny`, `nz`) were refined with the other
    // channels, as data: they are replaced by the surface's too.
    let normal_columns: Option<Vec<usize>> = (run.positions.ncols() == input.channels.len())
        .then(|| ["nx", "ny", "nz"].iter().map(|n| input.channels.iter().position(|c| c == n)).collect())
        .flatten();
    for w in carry::left_out(input, &name, &out.display().to_string(), groups.is_none(), texcoords.is_some(), normals) {
        eprintln!("warning: {w}");
    }
    for s in &input.skipped {
        eprintln!("warning: {name}: {s}: not read, so not in {}", shown(out));
    }
    let refined = match run.refined {
        Refined::Mesh(m) => m,
        Refined::Faces(faces) if normals || normal_columns.is_some() => {
            // The normals need the faces in a mesh of their own.
            let nv = run.positions.nrows();
            MeshBuilder::new(nv, faces.face_ptr, faces.face_verts)
                .options(faces.options)
                .build(Par::Rayon)
                .map_err(|e| e.to_string())?
        }
        Refined::Faces(faces) => {
            // No holes and no sharpness: every face is written, no tag but
            // the options; texture coordinates corner by corner, as the
            // faces hold them.
            let n = run.positions.ncols();
            let channels = if input.channels.len() == n {
                input.channels.clone()
            } else {
                (0..n)
                    .map(|k| ["x", "y", "z", "w"].get(k).map_or_else(|| format!("c{k}"), |c| (*c).to_owned()))
                    .collect()
            };
            return Ok(Output::Faces {
                vertices: run.positions,
                channels,
                faces,
                groups: groups.unwrap_or_default(),
                texcoords: texcoords.map(Box::new),
            });
        }
    };
    let groups = match groups {
        Some(g) if !keep_holes => carry::without_holes(&g, refined.holes()),
        Some(g) => g,
        None => Vec::new(),
    };
    let t = refined.topology();
    // The sharpness a user would write: not the infinite sharpness the
    // scheme gives boundary and non-manifold elements.
    let edge_s: Vec<f32> = refined
        .edge_sharpness()
        .iter()
        .zip(t.edge_tags())
        .map(|(&s, &tag)| if s > 0.0 && tag & (edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD) == 0 { s } else { 0.0 })
        .collect();
    let vertex_s: Vec<f32> = refined
        .vertex_sharpness()
        .iter()
        .zip(t.vertex_tags())
        .map(|(&s, &tag)| if s > 0.0 && tag & (vertex_tag::NON_MANIFOLD | vertex_tag::ISOLATED) == 0 { s } else { 0.0 })
        .collect();
    let mesh = if keep_holes || !refined.has_holes() {
        // Every face is written: the refined connectivity is shared, not
        // rebuilt.
        refined.retagged(edge_s, vertex_s, refined.holes().to_vec(), refined.options()).map_err(|e| e.to_string())?
    } else {
        let mut ptr = vec![0u32];
        let mut verts = Vec::with_capacity(t.num_corners());
        for f in 0..t.num_faces() {
            if refined.holes()[f] {
                continue;
            }
            verts.extend_from_slice(t.face(f));
            ptr.push(verts.len() as u32);
        }
        let mut b = MeshBuilder::new(t.num_vertices(), ptr, verts).options(refined.options());
        for (e, &s) in edge_s.iter().enumerate() {
            if s > 0.0 {
                let [a, c] = t.edge(e);
                b = b.crease(a, c, s);
            }
        }
        for (v, &s) in vertex_s.iter().enumerate() {
            if s > 0.0 {
                b = b.corner(v as u32, s);
            }
        }
        b.build(Par::Rayon).map_err(|e| e.to_string())?
    };
    // The limit surface's normals where the scheme has tangent masks, else
    // the refined faces'; from the whole refined mesh (hole faces shape the
    // surface around them), whose vertices the written mesh keeps.
    let surface_normals = (normals || normal_columns.is_some()).then(|| {
        let rules = match args.scheme.as_str() {
            "catmark" => Some(TangentRules::Catmark),
            "loop" => Some(TangentRules::Loop),
            _ => None,
        };
        match rules {
            Some(r) => limit_normals(&refined, run.positions.view(), r, Par::Rayon),
            None => vertex_normals(refined.topology(), refined.holes(), run.positions.view(), Par::Rayon),
        }
    });
    let mut data = MeshData::new(mesh, run.positions).map_err(|e| e.to_string())?;
    if data.vertices.ncols() == input.channels.len() {
        data.channels.clone_from(&input.channels);
    }
    data.groups = groups;
    data.texcoords = texcoords.map(|fv| {
        let sizes = (0..t.num_faces()).map(|f| t.face_order(f));
        texcoords_written(fv, refined.holes(), sizes, keep_holes)
    });
    if let Some(values) = surface_normals {
        if let Some(cols) = &normal_columns {
            for (k, &c) in cols.iter().enumerate() {
                data.vertices.column_mut(c).assign(&values.column(k));
            }
        }
        if normals {
            data.normals = Some(FaceVarying { values, indices: data.mesh.topology().face_verts().to_vec() });
        }
    }
    Ok(Output::Data(Box::new(data)))
}

/// Where the evaluation ran and in what precision, for the report.
#[derive(Copy, Clone, Debug)]
struct Ran {
    site: Site,
    precision: Precision,
    /// The GPU failed and the CPU took over (`--fallback cpu`).
    fell_back: bool,
    /// The input had texture coordinates (which choose Loop's path).
    texcoords: bool,
}

impl Ran {
    /// Where the evaluation ran.
    fn backend(&self) -> String {
        if self.fell_back { Site::Cpu.to_string() } else { self.site.to_string() }
    }
}

/// What a run wrote, for the table.
pub(crate) struct Summary {
    obj: PathBuf,
    png: Option<PathBuf>,
    vertices: usize,
    faces: usize,
}

/// Times of the steps of one run, in milliseconds.
struct Times {
    read: f64,
    build: f64,
    eval: f64,
    /// The output mesh: the finest level's connectivity from the plan, and
    /// the mesh a file holds (holes, tags, groups).
    mesh: f64,
    write: f64,
    render: Option<f64>,
}

/// The path `args` run: `--path`, or the scheme's fastest on the backend —
/// except that with texture coordinates Loop takes the kernels on the CPU,
/// not its halfedge path, whose finest faces are numbered otherwise (the
/// channel follows the kernels' faces).
fn path_of(args: &SubdivideArgs, texcoords: bool) -> Result<subla::registry::Path, String> {
    Ok(match args.path {
        Some(p) => p.written(),
        None => {
            let fastest = schemes::scheme(&args.scheme)?.fastest(args.backend.site());
            if texcoords && args.scheme == "loop" && fastest == Written::Halfedge { Written::Kernels } else { fastest }
        }
    })
}

/// Whether the path `args` run numbers its finest faces as the
/// face-varying refinement does (every path but Loop's halfedge path).
fn faces_follow_channel(args: &SubdivideArgs) -> bool {
    !(args.scheme == "loop" && path_of(args, true).is_ok_and(|p| p == Written::Halfedge))
}

/// The refinement itself: the scheme's refiner for the backend and path
/// asked for (or the CPU's, if the GPU cannot be opened and a fallback is
/// allowed), run on `data`. Returns the run and where it ran.
fn refine(
    args: &SubdivideArgs,
    data: &MeshData,
    want_mesh: bool,
    progress: progress::Progress,
) -> Result<(Run, Site), String> {
    let scheme = schemes::scheme(&args.scheme)?;
    let path = path_of(args, data.texcoords.is_some())?;
    let choice = schemes::Choice { backend: args.backend.site(), path, fallback: args.fallback.policy() };
    let (r, site) = schemes::refiner(scheme, choice, &Setup::with_fallback(choice.fallback))?;
    let run = run_scheme(&*r, site, &data.mesh, data.vertices.view(), args, want_mesh, progress)?;
    for f in &run.fell_back {
        eprintln!("warning: {f} (--fallback cpu)");
    }
    Ok((run, site))
}

/// Writes `out` to `obj`: PLY (binary) when its name ends in `.ply`, OBJ
/// otherwise; what the format cannot carry is named in a warning first.
fn write_obj(out: &Output, obj: &Path, input: &str, progress: progress::Progress) -> Result<f64, String> {
    use subla_mesh::ply::PlyEncoding::BinaryLittleEndian as Binary;
    let t = Instant::now();
    let ply = obj.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("ply"));
    let format = if ply { FileFormat::Ply } else { FileFormat::Obj };
    let faces = match out {
        Output::Faces { vertices, channels, faces, groups, texcoords } => Some(subla_mesh::FacesData {
            vertices,
            channels,
            face_ptr: &faces.face_ptr,
            face_verts: &faces.face_verts,
            groups,
            options: faces.options,
            texcoords: texcoords.as_deref(),
        }),
        Output::Data(_) => None,
    };
    let dropped = match (out, &faces) {
        (Output::Data(d), _) => d.dropped_by(format),
        (_, Some(f)) => f.dropped_by(format),
        (Output::Faces { .. }, None) => Vec::new(),
    };
    for d in dropped {
        eprintln!("warning: {input}: {d} cannot be written to {} and were left out", shown(obj));
    }
    let bar = progress.phase(format!("writing {}", shown(obj)));
    let written = output::write_file(obj, |w| match (out, &faces) {
        (Output::Data(d), _) if ply => subla_mesh::ply::write_ply(d, w, Binary),
        (Output::Data(d), _) => subla_mesh::obj::write_obj(d, w),
        (_, Some(f)) if ply => subla_mesh::ply::write_ply_faces(f, w, Binary),
        (_, Some(f)) => subla_mesh::obj::write_obj_faces(f, w),
        (Output::Faces { .. }, None) => unreachable!("faces are written from their view"),
    });
    bar.finish_and_clear();
    written?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// Renders `out` (with the control cage of `data` when asked) to `path`.
/// With `optional` (the main job), a picture that cannot be rendered is a
/// warning, and `Ok(None)`.
#[allow(clippy::too_many_arguments)]
fn draw(
    args: &SubdivideArgs,
    data: &MeshData,
    out: &MeshData,
    creases: Vec<[u32; 2]>,
    path: &Path,
    optional: bool,
    progress: progress::Progress,
) -> Result<Option<f64>, String> {
    let bar = progress.phase(format!("rendering {}", shown(path)));
    let t = Instant::now();
    let pic = picture::Picture { z_up: args.input.is_none(), ..picture::Picture::default() };
    let cage = args.cage.then_some(data);
    let r = picture::context()
        .and_then(|ctx| picture::write_png(ctx, &out.mesh, out.positions(), cage, creases, &pic, path));
    bar.finish_and_clear();
    match r {
        Ok(()) => Ok(Some(t.elapsed().as_secs_f64() * 1e3)),
        Err(e) if optional => {
            eprintln!("warning: no picture: {e}");
            Ok(None)
        }
        Err(e) => Err(output::at(path, &e)),
    }
}

/// Prints what was done: one JSON line with `--timings json`, else a
/// table (unless `quiet`).
fn report(args: &SubdivideArgs, ran: Ran, input: (usize, usize), summary: &Summary, times: &Times, quiet: bool) {
    let (in_v, in_f) = input;
    let threads = Par::Rayon.threads();
    let mode = format!("{:?}", args.mode).to_lowercase();
    if args.timings == Some(Timings::Json) {
        let line = serde_json::json!({
            "scheme": args.scheme,
            "path": path_of(args, ran.texcoords).map_or("?", |p| PathKind::of(p).name()),
            "mode": mode,
            "precision": format!("{:?}", ran.precision).to_lowercase(),
            "backend": ran.backend(),
            "fell_back": ran.fell_back,
            "levels": args.levels,
            "threads": threads,
            "input_vertices": in_v,
            "input_faces": in_f,
            "output_vertices": summary.vertices,
            "output_faces": summary.faces,
            "read_ms": times.read,
            "build_ms": times.build,
            "eval_ms": times.eval,
            "mesh_ms": times.mesh,
            "write_ms": times.write,
            "render_ms": times.render,
            "total_ms": total_ms(),
            "peak_memory_bytes": peak_memory_bytes(),
        });
        println!("{line}");
        return;
    }
    if quiet {
        return;
    }
    let backend = match ran.site {
        Site::Gpu if ran.fell_back => format!("cpu ({threads} threads; fell back from gpu)"),
        Site::Cpu => format!("cpu ({threads} threads)"),
        Site::Gpu => "gpu".to_owned(),
    };
    let precision = format!("{:?}", ran.precision).to_lowercase();
    let name = match &args.input {
        Some(p) => shown(p),
        None => format!("{} (embedded)", embedded::NAME),
    };
    println!("{name}: {in_v} vertices, {in_f} faces");
    println!(
        "| scheme | levels | mode | backend | vertices | faces | build ms | eval ms | mesh ms | write ms | precision | total ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {mode} | {backend} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {precision} | {:.1} |",
        args.scheme,
        args.levels,
        summary.vertices,
        summary.faces,
        times.build,
        times.eval,
        times.mesh,
        times.write,
        total_ms(),
    );
    println!("wrote {}", shown(&summary.obj));
    if let Some(p) = &summary.png {
        println!("wrote {}", shown(p));
    }
}

/// `subla subdivide`; with `picture_optional` (the main job), a picture
/// that cannot be rendered is a warning, not an error.
pub(crate) fn subdivide(
    args: &SubdivideArgs,
    progress: progress::Progress,
    quiet: bool,
    picture_optional: bool,
) -> Result<Summary, String> {
    let name = input_name(args.input.as_deref());
    // The default output is in the input's format.
    let ext = match args.input.as_deref().and_then(|p| p.extension()).and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("ply") => "ply",
        _ => "obj",
    };
    let default = format!("{name}.L{}.{ext}", args.levels);
    let obj = match &args.output {
        Some(o) => output::in_folder(o, &default),
        None => args.out_dir.join(&default),
    };
    let png = args.png.as_ref().map(|p| {
        if p.as_os_str() == "auto" {
            obj.with_extension("png")
        } else {
            output::in_folder(p, &format!("{name}.L{}.png", args.levels))
        }
    });
    let mut outputs = vec![(if args.output.is_some() { "-o" } else { "--out-dir" }, obj.as_path())];
    outputs.extend(png.as_deref().map(|p| ("--png", p)));
    output::check_outputs(&args.input.as_deref().into_iter().collect::<Vec<_>>(), &outputs)?;
    precision::check_backend(args.backend, args.fallback, args.precision)?;
    let t_read = Instant::now();
    let data = read_mesh(args.input.as_deref(), &args.mesh, progress)?;
    let read = t_read.elapsed().as_secs_f64() * 1e3;
    let input_shown = args.input.as_deref().map(shown).unwrap_or_else(|| embedded::NAME.to_owned());
    // The children of holes are holes: refuse before refining.
    if !args.keep_holes && data.mesh.holes().iter().all(|&h| h) {
        return Err(format!(
            "{input_shown}: every face is a hole (`t hole` on all {} of them): nothing would be written; \
             --keep-holes writes them, tagged as holes",
            data.mesh.num_faces()
        ));
    }
    let channels = data.vertices.ncols();
    schemes::check_memory(schemes::scheme(&args.scheme)?, args.levels, args.max_memory, &data.mesh, channels)?;
    if args.precision(args.backend.site()) == Precision::F32 {
        precision::check_f32(data.vertices.view(), args.input.as_deref())?;
    }
    let input = (data.mesh.num_vertices(), data.mesh.num_faces());
    // A picture is drawn from the full mesh.
    let (run, site) = refine(args, &data, png.is_some(), progress)?;
    let ran = Ran {
        site,
        precision: args.precision(site),
        fell_back: !run.fell_back.is_empty(),
        texcoords: data.texcoords.is_some(),
    };
    let (build, eval) = (run.build_ms, run.eval_ms);
    let t_mesh = Instant::now();
    let derive_ms = run.mesh_ms;
    let creases = match &run.refined {
        Refined::Mesh(m) if png.is_some() => picture::crease_edges(m),
        _ => Vec::new(),
    };
    let out = output_mesh(run, &data, args, &obj)?;
    let mesh = derive_ms + t_mesh.elapsed().as_secs_f64() * 1e3;
    let write = write_obj(&out, &obj, &input_shown, progress)?;
    let render = match (&png, &out) {
        (Some(path), Output::Data(d)) => draw(args, &data, d, creases, path, picture_optional, progress)?,
        _ => None,
    };
    let png = png.filter(|_| render.is_some());
    let summary = Summary { obj, png, vertices: out.num_vertices(), faces: out.num_faces() };
    report(args, ran, input, &summary, &Times { read, build, eval, mesh, write, render }, quiet);
    Ok(summary)
}
