//! `subla solid`: volumetric meshes and Catmull-Clark solids.
//!
//! ```text
//! subla solid info IN.vtk|IN.mesh [--json]
//! subla solid subdivide IN.vtk|IN.mesh --levels N -o OUT.vtk|OUT.mesh [--binary]
//!       [--backend cpu|gpu] [--fallback none|cpu]
//!       [--surface OUT.obj] [--png [OUT.png]] [--max-memory 4G]
//! subla solid limit IN.vtk|IN.mesh --grid K [--derivatives] [--cells all|regular] -o OUT.txt|OUT.vtk
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use ndarray::{Array2, s};
use subla_algebra::Par;
use subla_scheme::{Refiner, eval};
use subla_solid::{CatmarkSolid, VertexRule, predict_counts};
use subla_volume::medit::{MEDIT_REF, read_medit_file, write_medit_file};
use subla_volume::vtk::{VtkEncoding, read_vtk_file, write_vtk_file};
use subla_volume::{CellKind, Field, VolMesh, VolumeData};

use crate::memory;
use crate::output::shown;
use crate::progress::Progress;

/// `subla solid`'s subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum SolidCommand {
    /// Counts of a volumetric mesh: cells by kind, boundary, extraordinary
    /// edges by valence (after validating it).
    Info(SolidInfoArgs),
    /// Refine a volumetric mesh with Catmull-Clark solid rules and write
    /// the result (VTK or Medit), optionally its boundary surface as OBJ.
    Subdivide(SolidSubdivideArgs),
    /// The limit volume (and its derivatives) on a K × K × K grid of every
    /// cell, as text: `cell u v w x y z [dx/du dx/dv dx/dw]` per line.
    Limit(SolidLimitArgs),
}

/// The vertex rule of `subla solid subdivide` and `subla analyze --edge`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum VertexRuleArg {
    /// Catmull-Clark's surface rule times the cubic B-spline's at a vertex
    /// on an extraordinary edge in layers.
    Layered,
    /// Joy and MacCracken's rule everywhere.
    JoyMaccracken,
}

impl VertexRuleArg {
    /// The library's rule.
    pub(crate) fn rule(self) -> VertexRule {
        match self {
            VertexRuleArg::Layered => VertexRule::Layered,
            VertexRuleArg::JoyMaccracken => VertexRule::JoyMacCracken,
        }
    }
}

/// Which cells `subla solid limit` samples.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LimitCells {
    /// Every cell; a cell that cannot be evaluated yet is an error naming
    /// it.
    All,
    /// The cells that can be evaluated (regular, layered and irregular;
    /// with `--refine`, through their children too); the others are
    /// counted in a warning.
    Evaluated,
    /// The regular cells only (inside, at a boundary face or at sharp
    /// boundary edges); the others are counted in a warning.
    Regular,
}

/// Arguments of `subla solid limit`.
#[derive(Args, Debug)]
pub(crate) struct SolidLimitArgs {
    /// A VTK legacy unstructured grid (`.vtk`) or a Medit file (`.mesh`).
    input: PathBuf,
    /// Samples per direction in each cell: `u = i/(K−1)` (the centre for
    /// K = 1), `w` outer, then `v`, then `u`.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
    grid: u32,
    /// Also write the three derivative vectors.
    #[arg(long)]
    derivatives: bool,
    /// The samples: text, or a VTK point cloud where the name ends in
    /// `.vtk` (the derivatives, the cell and `(u, v, w)` as point data).
    #[arg(short, long)]
    output: PathBuf,
    /// Which cells to sample.
    #[arg(long, value_enum, default_value_t = LimitCells::All)]
    cells: LimitCells,
    /// Cells not evaluated as they are (several extraordinary vertices,
    /// or too coarse around extraordinary edges) are refined first, up to
    /// this many steps, and sampled through their children (0: they are
    /// not evaluated). Cells whose children next to a feature repeat their
    /// configuration (a sharp edge at a vertex of a layered or irregular
    /// cell) stay unevaluated.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=4))]
    refine: u32,
    /// Memory budget (bytes, or with K/M/G).
    #[arg(long, value_parser = crate::parse_bytes)]
    max_memory: Option<u64>,
}

/// Arguments of `subla solid`.
#[derive(Args, Debug)]
pub(crate) struct SolidArgs {
    #[command(subcommand)]
    pub(crate) command: SolidCommand,
}

/// Arguments of `subla solid info`.
#[derive(Args, Debug)]
pub(crate) struct SolidInfoArgs {
    /// A VTK legacy unstructured grid (`.vtk`) or a Medit file (`.mesh`).
    input: PathBuf,
    /// One JSON object instead of the text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `subla solid subdivide`.
#[derive(Args, Debug)]
pub(crate) struct SolidSubdivideArgs {
    /// A VTK legacy unstructured grid (`.vtk`) or a Medit file (`.mesh`).
    input: PathBuf,
    /// Refinement steps.
    #[arg(long, default_value_t = 1)]
    levels: u32,
    /// The vertex rule on an extraordinary edge in layers: `layered` (the
    /// surface rule times the curve's; the limit `solid limit` evaluates)
    /// or `joy-maccracken` (the original rule; the same elsewhere).
    #[arg(long, value_enum, default_value_t = VertexRuleArg::Layered)]
    vertex_rule: VertexRuleArg,
    /// The refined mesh: VTK (`.vtk`) or Medit (`.mesh`, by its name).
    #[arg(short, long)]
    output: PathBuf,
    /// Write VTK in binary (big-endian, as VTK does) rather than ASCII.
    #[arg(long)]
    binary: bool,
    /// Also write the refined boundary surface as OBJ (quads).
    #[arg(long)]
    surface: Option<PathBuf>,
    /// Also render the refined boundary surface to PNG (`--png` alone:
    /// next to the output, with `.png`); needs a GPU adapter (Mesa's
    /// lavapipe works).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    png: Option<PathBuf>,
    /// Memory budget (bytes, or with K/M/G); the default is 80 % of the
    /// memory available.
    #[arg(long, value_parser = crate::parse_bytes)]
    max_memory: Option<u64>,
    /// Where the points are refined: `cpu` (the plan's matrices, `f64`) or
    /// `gpu` (each level's connectivity and points made on the device from
    /// the level before, no matrix built, `f32`; the connectivity written
    /// is the CPU's split, which the device's equals). `SUBLA_GPU_BACKEND`
    /// and `SUBLA_GPU_ADAPTER` choose the adapter.
    #[arg(long, value_enum, default_value_t = crate::Backend::Cpu)]
    backend: crate::Backend,
    /// With `--backend gpu`: `cpu` refines on the CPU, with a warning,
    /// where no adapter is usable or the device fails; `none` fails.
    #[arg(long, value_enum, default_value_t = crate::Fallback::None)]
    fallback: crate::Fallback,
}

/// The finest points of `levels` steps of `mesh` from `x`, refined on the
/// device ([`subla_solid_gpu::SolidRefineOnDevice`]) in `f32`.
fn refine_on_device(mesh: &VolMesh, x: &Array2<f64>, levels: u32, rule: VertexRule) -> Result<Array2<f64>, String> {
    crate::picture::quiet_driver_env();
    let ctx = subla_gpu::GpuContext::new().map_err(|e| e.to_string())?;
    let device = subla_solid_gpu::SolidRefineOnDevice::new(&ctx, rule).map_err(|e| e.to_string())?;
    let (_, y) = device.refine(&ctx, mesh, x.mapv(|v| v as f32).view(), levels).map_err(|e| e.to_string())?;
    Ok(y.mapv(f64::from))
}

fn is_medit(p: &Path) -> bool {
    p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("mesh"))
}

/// Reads a volumetric mesh, warning about what a Medit file carried that
/// is not part of the volume.
fn read(path: &Path) -> Result<VolumeData, String> {
    if is_medit(path) {
        let r = read_medit_file(path).map_err(|e| format!("{}: {e}", shown(path)))?;
        for (keyword, n) in &r.skipped {
            eprintln!("warning: {}: {n} {keyword} (not part of the volume) were left out", shown(path));
        }
        return Ok(r.data);
    }
    read_vtk_file(path).map_err(|e| format!("{}: {e}", shown(path)))
}

/// Runs `subla solid`.
pub(crate) fn solid(args: &SolidArgs, progress: Progress, quiet: bool) -> Result<(), String> {
    match &args.command {
        SolidCommand::Info(a) => info(a, progress),
        SolidCommand::Subdivide(a) => subdivide(a, progress, quiet),
        SolidCommand::Limit(a) => limit(a, progress, quiet),
    }
}

fn info(args: &SolidInfoArgs, progress: Progress) -> Result<(), String> {
    let bar = progress.phase(format!("reading {}", shown(&args.input)));
    let d = read(&args.input)?;
    bar.finish_and_clear();
    let m = &d.mesh;
    let kinds = [CellKind::Hexahedron, CellKind::Tetra, CellKind::Wedge, CellKind::Polyhedron];
    let by_kind: Vec<(&str, usize)> =
        kinds.iter().map(|&k| (k.name(), (0..m.num_cells()).filter(|&c| m.kind(c) == k).count())).collect();
    let bfaces = (0..m.num_faces()).filter(|&f| m.is_boundary_face(f)).count();
    let bedges: Vec<bool> = (0..m.num_edges()).map(|e| m.is_boundary_edge(e)).collect();
    let bverts = (0..m.num_vertices()).filter(|&v| m.is_boundary_vertex(v)).count();
    // Classes for limit evaluation, in the order of the enum.
    let mut classes: std::collections::BTreeMap<subla_solid::limit::CellClass, usize> = Default::default();
    for c in 0..m.num_cells() {
        *classes.entry(subla_solid::limit::classify(m, c)).or_default() += 1;
    }
    // Extraordinary edges by (inside or on the boundary, valence).
    let mut ee: std::collections::BTreeMap<(bool, usize), usize> = Default::default();
    for e in (0..m.num_edges()).filter(|&e| m.is_extraordinary_edge(e)) {
        *ee.entry((bedges[e], m.edge_valence(e))).or_default() += 1;
    }
    if args.json {
        let ee: Vec<serde_json::Value> =
            ee.iter().map(|(&(b, v), &n)| serde_json::json!({"boundary": b, "valence": v, "edges": n})).collect();
        let kinds: serde_json::Map<String, serde_json::Value> =
            by_kind.iter().map(|&(k, n)| (k.to_owned(), serde_json::json!(n))).collect();
        let line = serde_json::json!({
            "vertices": m.num_vertices(), "cells": m.num_cells(), "faces": m.num_faces(), "edges": m.num_edges(),
            "cell_kinds": kinds, "boundary_faces": bfaces, "boundary_edges": bedges.iter().filter(|&&b| b).count(),
            "boundary_vertices": bverts, "extraordinary_edges": ee,
            "sharp_edges": m.sharp_edges().count(), "corners": m.corners().count(),
            "cell_classes": classes.iter().map(|(k, n)| serde_json::json!({"class": k.name(), "cells": n, "evaluated": k.evaluated()})).collect::<Vec<_>>(),
            "point_fields": d.point_fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
            "cell_fields": d.cell_fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        });
        println!("{line}");
        return Ok(());
    }
    println!("{}: valid volumetric mesh", shown(&args.input));
    println!("  vertices {} ({bverts} on the boundary)", m.num_vertices());
    let kinds: Vec<String> = by_kind.iter().filter(|k| k.1 > 0).map(|(k, n)| format!("{n} {k}")).collect();
    println!("  cells {} ({})", m.num_cells(), kinds.join(", "));
    println!("  faces {} ({bfaces} on the boundary)", m.num_faces());
    println!("  edges {} ({} on the boundary)", m.num_edges(), bedges.iter().filter(|&&b| b).count());
    if ee.is_empty() {
        println!("  extraordinary edges: none");
    }
    for ((b, v), n) in &ee {
        println!("  extraordinary edges: {n} {} of valence {v}", if *b { "on the boundary" } else { "inside" });
    }
    if m.has_features() {
        println!("  sharp edges {}, corners {}", m.sharp_edges().count(), m.corners().count());
    }
    for (class, n) in &classes {
        let note = if class.evaluated() { "" } else { " (limit not evaluated yet)" };
        println!("  cells {}: {n}{note}", class.name());
    }
    for f in d.point_fields.iter().map(|f| ("point", f)).chain(d.cell_fields.iter().map(|f| ("cell", f))) {
        println!("  {} data {:?} ({} components)", f.0, f.1.name, f.1.values.ncols());
    }
    Ok(())
}

/// The parent cell of each cell after `levels` steps over `m` (each cell
/// splits into one child per corner, in order).
/// The levels of a refinement: a CPU plan (its meshes and matrices), or
/// the meshes alone (the points refined on the device).
enum Levels {
    Plan(subla_solid::SolidPlan),
    Meshes(Vec<VolMesh>),
}

impl Levels {
    fn mesh(&self, level: u32) -> &VolMesh {
        match self {
            Levels::Plan(p) => p.mesh(level),
            Levels::Meshes(m) => &m[level as usize],
        }
    }
}

fn cell_origin<'a>(mesh: impl Fn(u32) -> &'a VolMesh, levels: u32) -> Vec<u32> {
    let mut origin: Vec<u32> = (0..mesh(0).num_cells() as u32).collect();
    for l in 0..levels {
        let m = mesh(l);
        let mut next = Vec::with_capacity(mesh(l + 1).num_cells());
        for (c, &o) in origin.iter().enumerate() {
            next.extend(std::iter::repeat_n(o, m.cell_vertices(c).len()));
        }
        origin = next;
    }
    origin
}

fn subdivide(args: &SolidSubdivideArgs, progress: Progress, quiet: bool) -> Result<(), String> {
    let t0 = Instant::now();
    let bar = progress.phase(format!("reading {}", shown(&args.input)));
    let d = read(&args.input)?;
    bar.finish_and_clear();
    let counts = predict_counts(&d.mesh, args.levels);
    let fine = counts.last().copied().unwrap_or_default();
    let channels = 3 + d.point_fields.iter().map(|f| f.values.ncols()).sum::<usize>();
    let need = fine.plan_bytes() + 16 * fine.vertices * channels as u128;
    let (budget, what) = memory::budget(args.max_memory);
    if need > u128::from(budget) {
        return Err(format!(
            "{} levels would make {} cells and need about {} MB, over the budget of {} MB ({what}); {}",
            args.levels,
            fine.cells,
            need >> 20,
            budget >> 20,
            memory::advice(&what)
        ));
    }
    let bar = progress.phase(format!("refining {} levels", args.levels));
    let rule = args.vertex_rule.rule();
    let on_device = args.backend == crate::Backend::Gpu;
    // On the device the plan's matrices are not needed: the CPU makes the
    // connectivity alone (to write it), the device its own and the points.
    let plan = if on_device {
        let mut meshes = vec![d.mesh.clone()];
        for _ in 0..args.levels {
            let next = meshes.last().expect("a level").split(Par::Rayon);
            meshes.push(next.map_err(|e| format!("{}: {e}", shown(&args.input)))?);
        }
        Levels::Meshes(meshes)
    } else {
        Levels::Plan(
            CatmarkSolid::new(rule)
                .build(&d.mesh, args.levels, Par::Rayon)
                .map_err(|e| format!("{}: {e}", shown(&args.input)))?,
        )
    };
    // Positions and point data refine together, as columns of one array.
    let mut x = Array2::zeros((d.mesh.num_vertices(), channels));
    x.slice_mut(s![.., ..3]).assign(&d.vertices);
    let mut at = 3;
    let mut refined_fields = Vec::new();
    for f in &d.point_fields {
        if f.name == MEDIT_REF {
            eprintln!(
                "warning: {}: vertex references ({MEDIT_REF}) are labels, not refined; left out",
                shown(&args.input)
            );
            continue;
        }
        x.slice_mut(s![.., at..at + f.values.ncols()]).assign(&f.values);
        refined_fields.push((f, at));
        at += f.values.ncols();
    }
    let x = x.slice(s![.., ..at]).to_owned();
    let y = match &plan {
        Levels::Plan(p) => eval(p, x.view(), Par::Rayon).map_err(|e| e.to_string())?,
        Levels::Meshes(_) => match refine_on_device(&d.mesh, &x, args.levels, rule) {
            Ok(y) => y,
            Err(e) if args.fallback == crate::Fallback::Cpu => {
                eprintln!("warning: --backend gpu: {e}; refined on the CPU");
                let p = CatmarkSolid::new(rule)
                    .build(&d.mesh, args.levels, Par::Rayon)
                    .map_err(|e| format!("{}: {e}", shown(&args.input)))?;
                eval(&p, x.view(), Par::Rayon).map_err(|e| e.to_string())?
            }
            Err(e) => return Err(format!("--backend gpu: {e}; --fallback cpu refines on the CPU instead")),
        },
    };
    bar.finish_and_clear();
    let levels = args.levels;
    let mesh: VolMesh = plan.mesh(levels).clone();
    let origin = cell_origin(|l| plan.mesh(l), levels);
    let point_fields: Vec<Field> = refined_fields
        .iter()
        .map(|(f, at)| Field {
            name: f.name.clone(),
            kind: f.kind,
            values: y.slice(s![.., *at..*at + f.values.ncols()]).to_owned(),
        })
        .collect();
    let cell_fields: Vec<Field> = d
        .cell_fields
        .iter()
        .map(|f| Field {
            name: f.name.clone(),
            kind: f.kind,
            values: Array2::from_shape_fn((origin.len(), f.values.ncols()), |(c, k)| f.values[[origin[c] as usize, k]]),
        })
        .collect();
    // The refined connectivity is checked as it is built; its positions
    // are written as the rules made them.
    let out = VolumeData { mesh, vertices: y.slice(s![.., ..3]).to_owned(), point_fields, cell_fields };
    // The rules can fold cells where a coarse mesh's features pull hard
    // (three ridges at a corner of a single cube, say): said, not hidden,
    // as readers that check cells refuse them.
    if let Err(e) = out.mesh.check_cells(&out.vertices) {
        eprintln!(
            "warning: {}: the refined cells do not all pass the geometry check ({e}); written as the rules made them",
            shown(&args.output)
        );
    }
    let bar = progress.phase(format!("writing {}", shown(&args.output)));
    let written = if is_medit(&args.output) {
        if !out.point_fields.is_empty() || out.cell_fields.iter().any(|f| f.name != MEDIT_REF) {
            eprintln!("warning: {}: a Medit file holds only references; other data left out", shown(&args.output));
        }
        write_medit_file(&out, &args.output)
    } else {
        if out.mesh.has_features() {
            eprintln!(
                "warning: {}: a VTK file has no place for sharp edges and corners ({} and {}); left out (a Medit .mesh keeps them)",
                shown(&args.output),
                out.mesh.sharp_edges().count(),
                out.mesh.corners().count()
            );
        }
        let enc = if args.binary { VtkEncoding::Binary } else { VtkEncoding::Ascii };
        write_vtk_file(&out, &args.output, enc)
    };
    written.map_err(|e| format!("{}: {e}", shown(&args.output)))?;
    bar.finish_and_clear();
    if let Some(obj) = &args.surface {
        write_surface(&out, obj)?;
    }
    if let Some(png) = &args.png {
        let path = if png.as_os_str().is_empty() { args.output.with_extension("png") } else { png.clone() };
        let bar = progress.phase(format!("rendering {}", shown(&path)));
        let (mesh, x) = boundary_surface(&out)?;
        let pic = crate::picture::Picture::default();
        let drawn = crate::picture::context()
            .and_then(|ctx| crate::picture::write_png(ctx, &mesh, x.view(), None, Vec::new(), &pic, &path));
        bar.finish_and_clear();
        drawn?;
    }
    if !quiet {
        println!(
            "{}: {} cells, {} vertices after {levels} levels → {} ({} ms)",
            shown(&args.input),
            out.mesh.num_cells(),
            out.mesh.num_vertices(),
            shown(&args.output),
            t0.elapsed().as_millis()
        );
    }
    Ok(())
}

/// The boundary surface of `d`: its boundary vertices (renumbered in order
/// of first use) and faces, outward, as a mesh and positions.
fn boundary_surface(d: &VolumeData) -> Result<(subla_mesh::Mesh, Array2<f64>), String> {
    let m = &d.mesh;
    let mut id = vec![u32::MAX; m.num_vertices()];
    let mut back = Vec::new();
    let mut faces: Vec<Vec<u32>> = Vec::new();
    for f in (0..m.num_faces()).filter(|&f| m.is_boundary_face(f)) {
        let face = m
            .face(f)
            .iter()
            .map(|&v| {
                if id[v as usize] == u32::MAX {
                    id[v as usize] = back.len() as u32;
                    back.push(v);
                }
                id[v as usize]
            })
            .collect();
        faces.push(face);
    }
    let x = Array2::from_shape_fn((back.len(), 3), |(i, k)| d.vertices[[back[i] as usize, k]]);
    let mesh = subla_mesh::Mesh::from_faces(back.len(), &faces).map_err(|e| format!("the boundary surface: {e}"))?;
    Ok((mesh, x))
}

/// The boundary surface of `d` as OBJ: its boundary vertices (renumbered
/// in order of first use) and faces, outward.
fn write_surface(d: &VolumeData, path: &Path) -> Result<(), String> {
    let (mesh, x) = boundary_surface(d)?;
    let t = mesh.topology();
    let faces = subla_mesh::FacesData {
        vertices: &x,
        channels: &[],
        face_ptr: t.face_ptr(),
        face_verts: t.face_verts(),
        groups: &[],
        options: subla_mesh::Options::default(),
        texcoords: None,
    };
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", shown(path)))?;
    subla_mesh::obj::write_obj_faces(&faces, file).map_err(|e| format!("{}: {e}", shown(path)))
}

fn limit(args: &SolidLimitArgs, progress: Progress, quiet: bool) -> Result<(), String> {
    use std::io::Write;
    use subla_algebra::spmv::spmv_csr;
    use subla_solid::limit::{CellGrid, GridEval, Quantity, SolidLimit, cell_grid, control_grid};
    use subla_solid::refined::limit_matrix_refined_partial;
    let t0 = Instant::now();
    let bar = progress.phase(format!("reading {}", shown(&args.input)));
    let d = read(&args.input)?;
    bar.finish_and_clear();
    let m = &d.mesh;
    let k = args.grid as usize;
    let failed = |e: subla_scheme::SchemeError| format!("{}: {e}", shown(&args.input));
    let quantities: &[Quantity] = if args.derivatives {
        &[Quantity::Position, Quantity::DerivU, Quantity::DerivV, Quantity::DerivW]
    } else {
        &[Quantity::Position]
    };
    let regular = args.cells == LimitCells::Regular;
    // Each cell's grid where it is evaluated directly (an irregular cell's
    // derivatives are singular at its extraordinary vertex, a corner of
    // the sample grid).
    let grids: Vec<Option<CellGrid>> = (0..m.num_cells() as u32)
        .map(|c| {
            let g = if regular { control_grid(m, c as usize).map(CellGrid::Regular) } else { cell_grid(m, c as usize) };
            g.filter(|g| !(args.derivatives && matches!(g, CellGrid::Irregular(_))))
        })
        .collect();
    // The others, refined first where asked (not for regular cells only).
    let others: Vec<u32> = (0..m.num_cells() as u32).filter(|&c| grids[c as usize].is_none()).collect();
    let refine = if regular { 0 } else { args.refine };
    if refine > 0 && !others.is_empty() {
        // Only the cells around those are refined.
        let region = subla_solid::refined::refined_region(m, &others);
        let fine = predict_counts(region.as_ref().unwrap_or(m), refine).last().copied().unwrap_or_default();
        let need = fine.plan_bytes();
        let (budget, what) = memory::budget(args.max_memory);
        if need > u128::from(budget) {
            return Err(format!(
                "refining {refine} levels would make {} cells and need about {} MB, over the budget of {} MB ({what}); {}",
                fine.cells,
                need >> 20,
                budget >> 20,
                memory::advice(&what).replace("fewer levels", "a smaller --refine")
            ));
        }
    }
    let bar = progress.phase(format!("refining {} cells first", others.len()));
    // Per quantity, the refined cells' samples (`k³` per cell, in order),
    // and the cells some sample of which is still not evaluated.
    let mut refined_values: Vec<Array2<f64>> = Vec::new();
    let mut unevaluated: std::collections::BTreeMap<u32, subla_solid::refined::Unevaluated> = Default::default();
    if refine > 0 && !others.is_empty() {
        let plan = SolidLimit::grid(others.iter().copied(), k, Quantity::Position);
        for &q in quantities {
            let (r, bad) = limit_matrix_refined_partial(m, plan.samples(), q, refine, Par::Rayon).map_err(failed)?;
            for (i, why) in bad {
                unevaluated.entry(others[i / (k * k * k)]).or_insert(why);
            }
            refined_values.push(spmv_csr(r.as_ref(), d.vertices.view(), |&w, _, _| w, Par::Rayon));
        }
    } else {
        use subla_solid::refined::Unevaluated;
        unevaluated.extend(others.iter().map(|&c| {
            let singular = !regular && matches!(cell_grid(m, c as usize), Some(CellGrid::Irregular(_)));
            (c, if singular { Unevaluated::SingularDerivative } else { Unevaluated::NotEvaluable })
        }));
    }
    bar.finish_and_clear();
    if let Some((&c, &why)) = unevaluated.iter().next().filter(|_| args.cells == LimitCells::All) {
        return Err(failed(subla_scheme::SchemeError::scheme("catmark-solid-limit", why.error(c))));
    }
    if !unevaluated.is_empty() {
        let which = if regular {
            "not regular (layered, irregular, at boundary edges)"
        } else if args.derivatives {
            "not evaluated yet (near tags, several extraordinary vertices, or the boundary otherwise than at a face, an untagged edge or a box's corner) or have derivatives asked at an irregular cell's extraordinary vertex, where they are singular"
        } else {
            "not evaluated yet (near tags, several extraordinary vertices, or the boundary otherwise than at a face, an untagged edge or a box's corner)"
        };
        let hint = if refine == 0 && !regular { "; --refine N refines cells first" } else { "" };
        eprintln!(
            "warning: {}: {} of {} cells are {which} and were left out{hint}",
            shown(&args.input),
            unevaluated.len(),
            m.num_cells()
        );
    }
    // Each class by its direct evaluator; each cell's grid gathered once.
    let direct: Vec<(u32, CellGrid)> =
        grids.into_iter().enumerate().filter_map(|(c, g)| g.map(|g| (c as u32, g))).collect();
    let ev = GridEval::from_grids(m, direct, k);
    let cells: Vec<u32> = (0..m.num_cells() as u32).filter(|c| !unevaluated.contains_key(c)).collect();

    let per_sample = if args.derivatives { 12 } else { 3 };
    let samples = cells.len() as u128 * (k as u128).pow(3);
    // Values in f64 and their text (about 25 bytes a number).
    let need = samples * per_sample as u128 * (8 + 25);
    let (budget, what) = memory::budget(args.max_memory);
    if need > u128::from(budget) {
        return Err(format!(
            "{samples} samples would need about {} MB, over the budget of {} MB ({what}); {}",
            need >> 20,
            budget >> 20,
            memory::advice(&what).replace("fewer levels", "a smaller --grid")
        ));
    }
    let bar = progress.phase(format!("evaluating {samples} samples"));
    let kkk = k * k * k;
    // Where each output cell's samples come from: the direct evaluation's
    // block, or the refined one's.
    let direct_at: std::collections::HashMap<u32, usize> =
        ev.cells().iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let refined_at: std::collections::HashMap<u32, usize> = others.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let values: Vec<Array2<f64>> = quantities
        .iter()
        .enumerate()
        .map(|(qi, &q)| {
            let mut direct = Array2::zeros((ev.num_samples(), 3));
            ev.eval_into(d.vertices.view(), q, direct.view_mut(), Par::Rayon).map_err(failed)?;
            let mut out = Array2::zeros((cells.len() * kkk, 3));
            for (ci, c) in cells.iter().enumerate() {
                let (src, at) = match direct_at.get(c) {
                    Some(&i) => (&direct, i),
                    None => (&refined_values[qi], refined_at[c]),
                };
                out.slice_mut(ndarray::s![ci * kkk..(ci + 1) * kkk, ..])
                    .assign(&src.slice(ndarray::s![at * kkk..(at + 1) * kkk, ..]));
            }
            Ok(out)
        })
        .collect::<Result<_, String>>()?;
    let num_samples = cells.len() * k * k * k;
    bar.finish_and_clear();
    let bar = progress.phase(format!("writing {}", shown(&args.output)));
    if is_vtk(&args.output) {
        write_samples_vtk(args, &cells, k, &values)?;
        bar.finish_and_clear();
        if !quiet {
            println!(
                "{}: {} samples of {} cells → {}",
                shown(&args.input),
                num_samples,
                cells.len(),
                shown(&args.output)
            );
        }
        return Ok(());
    }
    let file = std::fs::File::create(&args.output).map_err(|e| format!("{}: {e}", shown(&args.output)))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let io = |e: std::io::Error| format!("{}: {e}", shown(&args.output));
    writeln!(w, "# subla solid limit of {}: {} cells, {k}^3 samples each", shown(&args.input), cells.len())
        .map_err(io)?;
    let cols = if args.derivatives {
        "cell u v w x y z dxdu dydu dzdu dxdv dydv dzdv dxdw dydw dzdw"
    } else {
        "cell u v w x y z"
    };
    writeln!(w, "# {cols}").map_err(io)?;
    let t = |i: usize| subla_solid::limit::sample_param(i, k);
    let mut fbuf = ryu::Buffer::new();
    let mut line = String::new();
    for (ci, &c) in cells.iter().enumerate() {
        for l in 0..k {
            for j in 0..k {
                for i in 0..k {
                    let row = ((ci * k + l) * k + j) * k + i;
                    line.clear();
                    line.push_str(&c.to_string());
                    for p in [t(i), t(j), t(l)] {
                        line.push(' ');
                        line.push_str(fbuf.format(p));
                    }
                    for v in &values {
                        for x in v.row(row) {
                            line.push(' ');
                            line.push_str(fbuf.format(*x));
                        }
                    }
                    line.push('\n');
                    w.write_all(line.as_bytes()).map_err(io)?;
                }
            }
        }
    }
    w.flush().map_err(io)?;
    bar.finish_and_clear();
    if !quiet {
        println!(
            "{}: {} samples of {} cells → {} ({} ms)",
            shown(&args.input),
            num_samples,
            cells.len(),
            shown(&args.output),
            t0.elapsed().as_millis()
        );
    }
    Ok(())
}

fn is_vtk(p: &Path) -> bool {
    p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("vtk"))
}

/// The samples as a VTK point cloud: positions as points, the cell, `(u,
/// v, w)` and the derivatives (if computed) as point data.
fn write_samples_vtk(args: &SolidLimitArgs, cells: &[u32], k: usize, values: &[Array2<f64>]) -> Result<(), String> {
    use subla_volume::FieldKind;
    let n = values[0].nrows();
    let t = |i: usize| subla_solid::limit::sample_param(i, k);
    let kkk = k * k * k;
    let cell = Array2::from_shape_fn((n, 1), |(s, _)| f64::from(cells[s / kkk]));
    let uvw = Array2::from_shape_fn((n, 3), |(s, a)| {
        let r = s % kkk;
        t([r % k, (r / k) % k, r / (k * k)][a])
    });
    let mut fields = vec![
        Field { name: "cell".into(), kind: FieldKind::Scalars, values: cell },
        Field { name: "uvw".into(), kind: FieldKind::Vectors, values: uvw },
    ];
    for (name, v) in ["d_du", "d_dv", "d_dw"].iter().zip(values.iter().skip(1)) {
        fields.push(Field { name: (*name).into(), kind: FieldKind::Vectors, values: v.clone() });
    }
    let file = std::fs::File::create(&args.output).map_err(|e| format!("{}: {e}", shown(&args.output)))?;
    subla_volume::vtk::write_vtk_points(values[0].view(), &fields, file, VtkEncoding::Binary)
        .map_err(|e| format!("{}: {e}", shown(&args.output)))
}
