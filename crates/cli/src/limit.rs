//! `subla limit` (the limit surface on a grid of every ptex face, as text)
//! and `subla tessellate` (a watertight mesh of the limit surface).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::ValueEnum;
use subla::adaptive::{AdaptiveError, EndCap, PatchTable, Scheme, SparseRefinement, Tessellation, grid};
use subla_algebra::Par;
use subla_mesh::MeshData;

use crate::output::{self, shown};
use crate::{MeshOpts, embedded, memory, progress, read_mesh};

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum AdaptiveScheme {
    /// Catmull-Clark.
    Catmark,
    /// Loop (triangles only).
    Loop,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EndCapArg {
    /// Gregory basis patches (OpenSubdiv's default).
    Gregory,
    /// B-spline patches approximating the irregular neighbourhood.
    Bspline,
}

/// What both subcommands share: the refinement and its patches.
#[derive(clap::Args, Debug)]
pub(crate) struct AdaptiveOpts {
    /// Subdivision scheme.
    #[arg(long, value_enum, default_value = "catmark")]
    scheme: AdaptiveScheme,
    /// Isolation level of the feature-adaptive refinement (1-10).
    #[arg(long, default_value_t = 3)]
    isolation: u32,
    /// End caps of the irregular patches at the isolation level.
    #[arg(long, value_enum, default_value = "gregory")]
    endcap: EndCapArg,
    /// Refine only around these control faces (a file of 0-based face
    /// indices, one per line; `#` starts a comment).
    #[arg(long, value_name = "FACES.txt")]
    select: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct LimitArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Output text file: for every ptex face in order, the K×K samples
    /// u = i/(K-1), v = j/(K-1) (j the outer loop), one line each:
    /// `ptex u v x y z dux duy duz dvx dvy dvz`; `nan` where no patch covers
    /// the sample (holes).
    #[arg(short, long)]
    output: PathBuf,
    /// Samples per ptex edge (K).
    #[arg(long, default_value_t = 5)]
    grid: u32,
    #[command(flatten)]
    adaptive: AdaptiveOpts,
    #[command(flatten)]
    mesh: MeshOpts,
}

#[derive(clap::Args, Debug)]
pub(crate) struct TessellateArgs {
    /// Input mesh (.obj or .ply); the embedded example mesh when absent.
    input: Option<PathBuf>,
    /// Output OBJ (positions, normals and quads, or triangles for Loop).
    #[arg(short, long)]
    output: PathBuf,
    /// Segments along every control edge (a quad's ptex face gets R×R
    /// quads, each sub-face of another face (R/2)×(R/2): R must then be even).
    #[arg(long, default_value_t = 8)]
    rate: u32,
    /// Also render the tessellation to this PNG (default: next to the OBJ).
    #[arg(long, num_args = 0..=1, value_name = "OUT.png")]
    png: Option<Option<PathBuf>>,
    #[command(flatten)]
    adaptive: AdaptiveOpts,
    #[command(flatten)]
    mesh: MeshOpts,
}

/// Reads the selected faces: 0-based indices, one per line.
fn read_selection(path: &Path) -> Result<Vec<u32>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", shown(path)))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let f = l.parse::<u32>().map_err(|_| {
            format!("{}:{}: `{}` is not a face index (0-based, one per line)", shown(path), i + 1, output::escape(l))
        })?;
        out.push(f);
    }
    Ok(out)
}

fn adaptive_error(e: AdaptiveError) -> String {
    match e {
        AdaptiveError::NoSuchFace { face, num_faces } => {
            format!("--select: face {face} does not exist (the mesh has {num_faces} faces, numbered from 0)")
        }
        e => e.to_string(),
    }
}

/// The input's name in messages.
fn name_of(input: Option<&Path>) -> String {
    input.map(shown).unwrap_or_else(|| format!("{} (embedded)", embedded::NAME))
}

/// Reads the mesh and builds the patch table.
fn build(
    input: Option<&Path>,
    opts: &AdaptiveOpts,
    mesh: &MeshOpts,
    progress: progress::Progress,
) -> Result<(MeshData, PatchTable), String> {
    let data = read_mesh(input, mesh, progress)?;
    let selected = opts.select.as_deref().map(read_selection).transpose()?;
    let bar = progress.phase(format!("isolating features to level {}", opts.isolation));
    let scheme = match opts.scheme {
        AdaptiveScheme::Catmark => Scheme::Catmark,
        AdaptiveScheme::Loop => Scheme::Loop,
    };
    let (budget, what) = memory::budget(None);
    let refinement = SparseRefinement::build_within(scheme, &data.mesh, opts.isolation, selected.as_deref(), budget)
        .map_err(|e| match e {
            AdaptiveError::OverBudget { level, bytes, budget } => format!(
                "--isolation {}: level {level} would bring the refinement to about {}; the budget is {} ({what}; {})",
                opts.isolation,
                memory::human(u128::from(bytes)),
                memory::human(u128::from(budget)),
                memory::advice(&what)
            ),
            e => adaptive_error(e),
        });
    bar.finish_and_clear();
    let end_cap = match opts.endcap {
        EndCapArg::Gregory => EndCap::GregoryBasis,
        EndCapArg::Bspline => EndCap::BSplineBasis,
    };
    let bar = progress.phase("building the patch table");
    let table = PatchTable::new(refinement?, end_cap).map_err(adaptive_error);
    bar.finish_and_clear();
    Ok((data, table?))
}

/// Warns about the channels beyond positions that an output leaves out.
fn warn_channels(data: &MeshData, input: &str, out: &Path) {
    if data.vertices.ncols() > 3 {
        let extra = data.channels[3..].join(", ");
        eprintln!("warning: {input}: vertex channels {extra} are not written to {} (positions only)", shown(out));
    }
    for s in &data.skipped {
        eprintln!("warning: {input}: {s}: not read, so not in {}", shown(out));
    }
}

/// Refuses an output predicted to need more memory than the process has.
fn check_size(samples: u128, bytes_per_sample: u128) -> Result<(), String> {
    let (budget, what) = memory::budget(None);
    let need = samples * bytes_per_sample;
    if need > u128::from(budget) {
        return Err(format!(
            "{} samples would need about {}; the budget is {} ({what}; {})",
            memory::count(samples),
            memory::human(need),
            memory::human(u128::from(budget)),
            memory::advice(&what)
        ));
    }
    Ok(())
}

fn number(w: &mut dyn Write, x: f64) -> std::io::Result<()> {
    if x.is_nan() {
        w.write_all(b"nan")
    } else {
        let mut b = ryu::Buffer::new();
        w.write_all(b.format(x).as_bytes())
    }
}

/// `subla limit`.
pub(crate) fn limit(args: &LimitArgs, progress: progress::Progress, quiet: bool) -> Result<(), String> {
    let start = Instant::now();
    let inputs: Vec<&Path> = args.input.as_deref().into_iter().chain(args.adaptive.select.as_deref()).collect();
    output::check_outputs(&inputs, &[("-o", &args.output)])?;
    if args.grid == 0 {
        return Err("--grid 0: at least one sample per ptex face".into());
    }
    let (data, table) = build(args.input.as_deref(), &args.adaptive, &args.mesh, progress)?;
    let name = name_of(args.input.as_deref());
    warn_channels(&data, &name, &args.output);
    let num_ptex = table.refinement().num_ptex_faces();
    check_size(u128::from(num_ptex) * u128::from(args.grid).pow(2), 12 * 8 * 2 + 16)?;
    let samples = grid(num_ptex, args.grid);
    let bar = progress.phase(format!("evaluating {} samples", samples.len()));
    let lim = table.evaluate(data.positions(), &samples, Par::Rayon).map_err(adaptive_error);
    bar.finish_and_clear();
    let lim = lim?;
    let counts = table.refinement().vertices_per_level();
    let bar = progress.phase(format!("writing {}", shown(&args.output)));
    let written = output::write_file(&args.output, |w| {
        writeln!(
            w,
            "# subla limit: scheme={} isolation={} endcap={} grid={} ptex_faces={num_ptex} patches={} selected={}",
            match args.adaptive.scheme {
                AdaptiveScheme::Catmark => "catmark",
                AdaptiveScheme::Loop => "loop",
            },
            args.adaptive.isolation,
            match args.adaptive.endcap {
                EndCapArg::Gregory => "gregory",
                EndCapArg::Bspline => "bspline",
            },
            args.grid,
            table.patches().len(),
            if args.adaptive.select.is_some() { "file" } else { "all" },
        )?;
        let levels: Vec<String> = counts.iter().map(ToString::to_string).collect();
        writeln!(w, "# refined vertices per level: {}", levels.join(" "))?;
        writeln!(w, "# u = i/(K-1), v = j/(K-1), j outer; each line: ptex u v x y z dux duy duz dvx dvy dvz")?;
        for (i, s) in samples.iter().enumerate() {
            write!(w, "{} ", s.ptex)?;
            number(w, s.u)?;
            w.write_all(b" ")?;
            number(w, s.v)?;
            for arr in [&lim.position, &lim.du, &lim.dv] {
                for c in 0..3 {
                    w.write_all(b" ")?;
                    number(w, arr[[i, c]])?;
                }
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    });
    bar.finish_and_clear();
    written?;
    if !quiet {
        let c = table.counts();
        println!(
            "wrote {}: {} samples of {num_ptex} ptex faces; {} patches ({} regular, {} on boundaries, {} end caps); {} vertices over {} levels; {:.0} ms",
            shown(&args.output),
            samples.len(),
            table.patches().len(),
            c.regular_interior,
            c.regular_boundary,
            c.end_caps,
            counts.iter().sum::<usize>(),
            counts.len(),
            start.elapsed().as_secs_f64() * 1e3
        );
        if !lim.missing.is_empty() {
            println!("{} samples lie on holes (written as nan)", lim.missing.len());
        }
    }
    Ok(())
}

fn write_tessellation(t: &Tessellation, w: &mut dyn Write) -> std::io::Result<()> {
    let mut b = ryu::Buffer::new();
    for r in t.positions.outer_iter() {
        w.write_all(b"v")?;
        for c in 0..3 {
            w.write_all(b" ")?;
            w.write_all(b.format(r[c]).as_bytes())?;
        }
        w.write_all(b"\n")?;
    }
    for n in &t.normals {
        writeln!(w, "vn {} {} {}", b.format(n[0]), ryu::Buffer::new().format(n[1]), ryu::Buffer::new().format(n[2]))?;
    }
    for f in t.faces.chunks(t.face_size) {
        w.write_all(b"f")?;
        for &i in f {
            write!(w, " {0}//{0}", i + 1)?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// `subla tessellate`.
pub(crate) fn tessellate(args: &TessellateArgs, progress: progress::Progress, quiet: bool) -> Result<(), String> {
    let start = Instant::now();
    let png = args.png.as_ref().map(|p| p.clone().unwrap_or_else(|| args.output.with_extension("png")));
    let inputs: Vec<&Path> = args.input.as_deref().into_iter().chain(args.adaptive.select.as_deref()).collect();
    let mut outs: Vec<(&str, &Path)> = vec![("-o", &args.output)];
    if let Some(p) = &png {
        outs.push(("--png", p));
    }
    output::check_outputs(&inputs, &outs)?;
    if args.rate == 0 {
        return Err("--rate 0: at least one segment per edge".into());
    }
    let (data, table) = build(args.input.as_deref(), &args.adaptive, &args.mesh, progress)?;
    let name = name_of(args.input.as_deref());
    warn_channels(&data, &name, &args.output);
    let quads_per_edge = u128::from(args.rate).pow(2);
    check_size(u128::from(table.refinement().num_ptex_faces()) * quads_per_edge, 3 * 8 * 4 + 16 + 32)?;
    let bar = progress.phase(format!("tessellating at rate {}", args.rate));
    let tess = table.tessellate(data.positions(), args.rate, Par::Rayon).map_err(adaptive_error);
    bar.finish_and_clear();
    let tess = tess?;
    let bar = progress.phase(format!("writing {}", shown(&args.output)));
    let written = output::write_file(&args.output, |w| write_tessellation(&tess, w));
    bar.finish_and_clear();
    written?;
    if let Some(p) = &png {
        let faces: Vec<&[u32]> = tess.faces.chunks(tess.face_size).collect();
        let mesh = subla_mesh::Mesh::from_faces(tess.positions.nrows(), &faces).map_err(|e| e.to_string())?;
        let pic = crate::picture::Picture { z_up: args.input.is_none(), ..crate::picture::Picture::default() };
        let bar = progress.phase(format!("rendering {}", shown(p)));
        let r = crate::picture::context()
            .and_then(|ctx| crate::picture::write_png(ctx, &mesh, tess.positions.view(), None, Vec::new(), &pic, p));
        bar.finish_and_clear();
        r.map_err(|e| output::at(p, &e))?;
    }
    if !quiet {
        println!(
            "wrote {}: {} points, {} {} ({} patches); {:.0} ms",
            shown(&args.output),
            tess.positions.nrows(),
            tess.faces.len() / tess.face_size,
            if tess.face_size == 3 { "triangles" } else { "quads" },
            table.patches().len(),
            start.elapsed().as_secs_f64() * 1e3
        );
        if let Some(p) = &png {
            println!("wrote {}", shown(p));
        }
    }
    Ok(())
}
