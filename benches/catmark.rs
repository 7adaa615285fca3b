//! Uniform Catmull-Clark refinement, subla against its peers in the same
//! run: `subdiv-kernels` 0.1 and `opensubdiv-rs` 0.5 (pure Rust), and
//! OpenSubdiv 3.7 (C++) through `opensubdiv-petite` 0.3 with the cargo
//! feature `opensubdiv-petite` of `subla-bench`.
//!
//! ```text
//! cargo bench -p subla-bench --bench catmark [--features opensubdiv-petite]
//! SUBLA_BENCH_QUICK=1 cargo bench -p subla-bench --bench catmark   # smoke run
//! ```
//!
//! Inputs: every `*.obj` of `$SUBLA_MESHES` (default `data/meshes/paper/`;
//! generated meshes if there are none) and a generated closed quad torus
//! of 317 × 317 = 100,489 quads, at levels 1–4. Environment:
//! `SUBLA_BENCH_QUICK=1` (levels 1–2, one paper mesh, no torus),
//! `SUBLA_BENCH_MESHES=Bigguy,torus317` (keep these inputs, by name),
//! `SUBLA_BENCH_LEVELS=1,3` (keep these levels), `SUBLA_BIN` (the release
//! `subla` binary used for the peak-memory table).
//!
//! What each benchmark id times, per (mesh, level) group
//! `catmark_<mesh>_L<level>`:
//!
//! | id | subla | subdiv-kernels | opensubdiv-rs | OpenSubdiv (petite) |
//! |---|---|---|---|---|
//! | `*_topology` | `refine_topology_direct` × L | `Refiner::new` + `refine_topology` | factory + `refine_uniform` | `TopologyRefiner::new` + `refine_uniform` (full last level) |
//! | `*_build` | `CatmarkSlak.build` | `refine_uniform` + `compose_stencils` | factory + `refine_uniform` + `StencilTableFactory::create` (last level) | `TopologyRefiner` + `refine_uniform` (sparse last level) + `StencilTable::new` (last level) |
//! | `*_eval` | `eval` f64 on the plan | composed `interpolate` | `update_values` | `CpuEvaluator::EvalStencils` (f32) |
//! | `subla_modeling` / `*_oneshot` | `modeling` (build + eval level by level) | `refine_uniform` + `interpolate` (chained levels) | factory + `refine_uniform` + `PrimvarRefiner::interpolate` per level | the same, f32 |
//! | `subla_ef_build` / `_eval` / `_modeling` (`_f32`) | the same with `CatmarkEdgeFriend` (the default path) | | | |
//! | `subla_he_build` / `_eval` / `_modeling` | the same with `CatmarkHalfedge` (closed-form halfedge refinement) | | | |
//! | `subla_{ef,he}_plan_composed_build`, `subla_ef_plan_tensor_build` | the plan, then `Refinement::composed_of` (`tensor_of`: closed-form rows kept apart); compared with the peers' `*_build` | | | |
//!
//! Data are 3 channels of `f64` except for OpenSubdiv, whose wrapper only
//! has `f32` (compare it also with `subla_eval_f32`). The peers are
//! single-threaded (subdiv-kernels' `parallel` feature does nothing, and it
//! is off; opensubdiv-rs has no threading; OpenSubdiv's Far and
//! `CpuEvaluator` are serial); subla runs with 1 and with all threads.
//! Peer rows predicted (from the level below) to take over 60 s, and rows
//! predicted (bytes per output face × faces) to need more than 80 % of the
//! free memory, are skipped with the reason printed. Rows of a quarter
//! second or more are timed by hand instead of by criterion: 3 runs after
//! the probe run under 1.5 s, 2 under 5 s, else the probe run alone. Times
//! are medians (criterion's, or of the runs by hand): on a virtual machine
//! that hands free memory back to its host, a run that touches such memory
//! again can take up to a second more per GB, and the median leaves those
//! runs out where the mean would not. Before timing, each peer's level-1
//! positions are checked against subla's (matched by position).
//!
//! Peak memory is measured after the timings, outside criterion: subla's
//! modeling mode through the release `subla` binary (`--timings json`, all
//! levels), and every implementation in a child process of this binary
//! (`SUBLA_BENCH_CHILD`) at the highest level where its runs took ≤ 15 s.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use subla_algebra::Par;
use subla_bench::{criterion, median_seconds, pool, quad_sphere, quad_torus, report_with};
use subla_catmark::refine::refine_topology_direct;
use subla_catmark::{CatmarkEdgeFriend, CatmarkHalfedge, CatmarkSlak};
use subla_mesh::{Mesh, MeshData, Options, Validation};
use subla_scheme::refinement::{Budget, Evaluation, Evaluator, Refinement};
use subla_scheme::{Refiner, eval, modeling};

/// Peer rows predicted to take longer than this are skipped.
const PEER_SECONDS_LIMIT: f64 = 60.0;
/// Predicted growth of time from one level to the next (the output grows
/// 4×; stencils grow a little more).
const GROWTH: f64 = 4.5;
/// Rows whose single run takes at least this long are timed by hand.
const MANUAL_SECONDS: f64 = 0.25;

// ---------------------------------------------------------------------------
// Settings and inputs

struct Settings {
    quick: bool,
    /// Not run by `cargo bench` (e.g. `cargo test --benches`): one tiny row.
    smoke: bool,
    levels: Vec<u32>,
    meshes: Option<Vec<String>>,
    /// Bytes a row may use (predicted peak).
    budget: u64,
    threads: usize,
}

impl Settings {
    fn from_env() -> Settings {
        let smoke = !std::env::args().any(|a| a == "--bench");
        let quick = smoke || std::env::var("SUBLA_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let mut levels: Vec<u32> = if smoke {
            vec![1]
        } else if quick {
            vec![1, 2]
        } else {
            vec![1, 2, 3, 4]
        };
        if let Ok(v) = std::env::var("SUBLA_BENCH_LEVELS") {
            let keep: Vec<u32> = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
            levels.retain(|l| keep.contains(l));
        }
        let meshes = std::env::var("SUBLA_BENCH_MESHES")
            .ok()
            .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
        let available = meminfo_kb("MemAvailable:").map_or(8 << 30, |kb| kb * 1024);
        let budget = (available.min(24 << 30) as f64 * 0.8) as u64;
        Settings { quick, smoke, levels, meshes, budget, threads: rayon::current_num_threads() }
    }
}

struct Input {
    name: String,
    data: MeshData,
    /// The file it was read from (generated inputs are written to a
    /// temporary OBJ file for the peak-memory runs).
    path: Option<PathBuf>,
}

fn mesh_dir() -> PathBuf {
    match std::env::var_os("SUBLA_MESHES") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/paper"),
    }
}

fn load_inputs(s: &Settings) -> Vec<Input> {
    let dir = mesh_dir();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("obj")))
            .collect(),
        Err(e) => {
            println!("note: cannot read the mesh directory {}: {e}", dir.display());
            Vec::new()
        }
    };
    files.sort();
    let mut inputs = Vec::new();
    for path in files {
        let name = path.file_stem().map_or_else(|| "mesh".into(), |n| n.to_string_lossy().into_owned());
        match subla_mesh::obj::read_obj(&path, Validation::OpenSubdiv) {
            Ok(mut data) => {
                if data.left_handed {
                    match data.mesh.reversed_winding() {
                        Ok(m) => data.mesh = m,
                        Err(e) => {
                            println!("note: skipping {name}: {e}");
                            continue;
                        }
                    }
                }
                inputs.push(Input { name, data, path: Some(path) });
            }
            Err(e) => println!("note: skipping {}: {e}", path.display()),
        }
    }
    if inputs.is_empty() {
        println!("note: no meshes in {}; using generated ones", dir.display());
        inputs.push(Input { name: "sphere12".into(), data: quad_sphere(12), path: None });
        inputs.push(Input { name: "torus48x32".into(), data: quad_torus(48, 32), path: None });
    }
    let wanted = |name: &str| s.meshes.as_ref().is_none_or(|keep| keep.iter().any(|k| k == name));
    inputs.retain(|i| wanted(&i.name));
    if s.quick {
        if let Some(pick) = inputs.iter().position(|i| i.name == "Bigguy").or((!inputs.is_empty()).then_some(0)) {
            let one = inputs.swap_remove(pick);
            inputs = vec![one];
        }
    } else if wanted("torus317") {
        inputs.push(Input { name: "torus317".into(), data: quad_torus(317, 317), path: None });
    }
    inputs
}

/// The control mesh in the flat forms the peers take.
struct Flat {
    nv: usize,
    counts: Vec<u32>,
    counts_usize: Vec<usize>,
    verts: Vec<u32>,
    crease_pairs: Vec<[u32; 2]>,
    /// `crease_pairs` flattened (OpenSubdiv C++ only).
    #[cfg_attr(not(feature = "opensubdiv-petite"), allow(dead_code))]
    crease_flat: Vec<u32>,
    crease_w: Vec<f32>,
    corner_v: Vec<u32>,
    corner_w: Vec<f32>,
    corners_dense: Vec<f32>,
    holes: Vec<u32>,
    options: Options,
    ctrl: Vec<[f64; 3]>,
    /// `ctrl` flattened to `f32` (OpenSubdiv C++ only).
    #[cfg_attr(not(feature = "opensubdiv-petite"), allow(dead_code))]
    ctrl32: Vec<f32>,
}

impl Flat {
    fn new(data: &MeshData) -> Flat {
        let mesh = &data.mesh;
        let t = mesh.topology();
        let counts: Vec<u32> = t.face_ptr().windows(2).map(|w| w[1] - w[0]).collect();
        let mut crease_pairs = Vec::new();
        let mut crease_w = Vec::new();
        for (e, &s) in mesh.edge_sharpness().iter().enumerate() {
            if s > 0.0 {
                crease_pairs.push(t.edge(e));
                crease_w.push(s);
            }
        }
        let mut corner_v = Vec::new();
        let mut corner_w = Vec::new();
        for (v, &s) in mesh.vertex_sharpness().iter().enumerate() {
            if s > 0.0 {
                corner_v.push(v as u32);
                corner_w.push(s);
            }
        }
        let holes = mesh.holes().iter().enumerate().filter(|h| *h.1).map(|h| h.0 as u32).collect();
        let pos = data.positions();
        let ctrl: Vec<[f64; 3]> = pos.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
        Flat {
            nv: mesh.num_vertices(),
            counts_usize: counts.iter().map(|&c| c as usize).collect(),
            counts,
            verts: t.face_verts().to_vec(),
            crease_flat: crease_pairs.iter().flatten().copied().collect(),
            crease_pairs,
            crease_w,
            corner_v,
            corner_w,
            corners_dense: mesh.vertex_sharpness().to_vec(),
            holes,
            options: mesh.options(),
            ctrl32: ctrl.iter().flatten().map(|&x| x as f32).collect(),
            ctrl,
        }
    }
}

// ---------------------------------------------------------------------------
// Peers

/// subdiv-kernels 0.1: a `Refiner` over a `Mesh` of face lists (edges are
/// found by the crate; the edge list only carries crease values).
mod sk {
    use std::num::NonZeroU8;

    use subdiv_kernels as k;
    use subla_mesh::{BoundaryInterpolation, CreaseMethod, TriangleSubdivision};

    use super::Flat;

    fn refiner(f: &Flat) -> Result<k::Refiner, String> {
        if !f.holes.is_empty() {
            return Err("subdiv-kernels has no holes".into());
        }
        let o = f.options;
        let opts = k::SchemeOptions {
            boundary_interpolation: match o.boundary {
                BoundaryInterpolation::None => k::BoundaryInterpolation::Natural,
                BoundaryInterpolation::EdgeOnly => k::BoundaryInterpolation::EdgesOnly,
                BoundaryInterpolation::EdgeAndCorner => k::BoundaryInterpolation::EdgesAndCorners,
            },
            crease_computation: match o.crease_method {
                CreaseMethod::Uniform => k::CreaseComputationMethod::Uniform,
                CreaseMethod::Chaikin => k::CreaseComputationMethod::Chaikin,
            },
            triangle_subdivision_rule: match o.triangle_subdivision {
                TriangleSubdivision::Catmark => k::TriangleSubdivisionRule::CatmullClark,
                TriangleSubdivision::Smooth => k::TriangleSubdivisionRule::SmoothTriangles,
            },
            ..k::SchemeOptions::default()
        };
        let mesh = k::Mesh {
            vertex_count: f.nv as u32,
            face_vertex_counts: f.counts.clone(),
            face_vertex_indices: f.verts.clone(),
            edge_vertices: f.crease_pairs.clone(),
            edge_creases: f.crease_w.clone(),
            vertex_corners: f.corners_dense.clone(),
        };
        k::Refiner::new(mesh, k::Scheme::CatmullClark, opts).map_err(|e| e.to_string())
    }

    fn request(levels: u32) -> Result<k::UniformRefine, String> {
        let l = u8::try_from(levels).ok().and_then(NonZeroU8::new).ok_or("levels must be 1..=255")?;
        Ok(k::UniformRefine::from(l))
    }

    /// Topology refinement alone; returns the number of output faces.
    pub(super) fn topology(f: &Flat, levels: u32) -> Result<usize, String> {
        let r = refiner(f)?.refine_topology(&request(levels)?).map_err(|e| e.to_string())?;
        Ok(r.final_topology().face_vertex_counts.len())
    }

    /// Topology, per-level stencils, and their composition into one table
    /// from the control points.
    pub(super) fn build(f: &Flat, levels: u32) -> Result<k::StencilTable, String> {
        let r = refiner(f)?.refine_uniform(&request(levels)?).map_err(|e| e.to_string())?;
        Ok(r.compose_stencils(f.nv))
    }

    pub(super) fn eval(t: &k::StencilTable, ctrl: &[[f64; 3]]) -> Vec<[f64; 3]> {
        t.interpolate(ctrl)
    }

    /// Topology and per-level stencils, applied level after level.
    pub(super) fn oneshot(f: &Flat, levels: u32) -> Result<Vec<[f64; 3]>, String> {
        let r = refiner(f)?.refine_uniform(&request(levels)?).map_err(|e| e.to_string())?;
        Ok(r.interpolate(&f.ctrl))
    }
}

/// opensubdiv-rs 0.5: a port of OpenSubdiv's Far (`TopologyDescriptor`,
/// `TopologyRefinerFactory`, `StencilTableFactory`, `PrimvarRefiner`).
mod osdrs {
    use opensubdiv_rs::far::{
        PrimvarRefiner, StencilTable, StencilTableFactory, StencilTableOptions, TopologyDescriptor, TopologyRefiner,
        TopologyRefinerFactory, UniformOptions,
    };
    use opensubdiv_rs::sdc;
    use subla_mesh::{BoundaryInterpolation, CreaseMethod, TriangleSubdivision};

    use super::Flat;

    fn options(f: &Flat) -> sdc::Options {
        let o = f.options;
        sdc::Options::new()
            .with_vtx_boundary_interpolation(match o.boundary {
                BoundaryInterpolation::None => sdc::VtxBoundaryInterpolation::None,
                BoundaryInterpolation::EdgeOnly => sdc::VtxBoundaryInterpolation::EdgeOnly,
                BoundaryInterpolation::EdgeAndCorner => sdc::VtxBoundaryInterpolation::EdgeAndCorner,
            })
            .with_creasing_method(match o.crease_method {
                CreaseMethod::Uniform => sdc::CreasingMethod::Uniform,
                CreaseMethod::Chaikin => sdc::CreasingMethod::Chaikin,
            })
            .with_triangle_subdivision(match o.triangle_subdivision {
                TriangleSubdivision::Catmark => sdc::TriangleSubdivision::Catmark,
                TriangleSubdivision::Smooth => sdc::TriangleSubdivision::Smooth,
            })
    }

    /// Factory + uniform refinement (always full topology).
    pub(super) fn topology(f: &Flat, levels: u32) -> Result<TopologyRefiner, String> {
        let d = TopologyDescriptor::new(f.nv, &f.counts_usize, &f.verts)
            .with_creases(&f.crease_pairs, &f.crease_w)
            .with_corners(&f.corner_v, &f.corner_w)
            .with_holes(&f.holes);
        let mut r =
            TopologyRefinerFactory::create(d, sdc::SchemeType::Catmark, options(f)).map_err(|e| e.to_string())?;
        r.refine_uniform(UniformOptions::new(levels as usize));
        Ok(r)
    }

    /// Topology and the factorized stencils of the last level.
    pub(super) fn build(f: &Flat, levels: u32) -> Result<StencilTable, String> {
        let r = topology(f, levels)?;
        let opts = StencilTableOptions { generate_intermediate_levels: false, generate_control_verts: false };
        Ok(StencilTableFactory::create(&r, opts))
    }

    pub(super) fn eval(t: &StencilTable, ctrl: &[[f64; 3]], out: &mut [[f64; 3]]) {
        t.update_values(ctrl, out);
    }

    /// Topology, then `PrimvarRefiner::interpolate` level by level.
    pub(super) fn oneshot(f: &Flat, levels: u32) -> Result<Vec<[f64; 3]>, String> {
        let r = topology(f, levels)?;
        let p = PrimvarRefiner::new(&r);
        let mut src = f.ctrl.clone();
        for level in 1..=levels as usize {
            let mut dst = vec![[0.0f64; 3]; r.level(level).num_vertices()];
            p.interpolate(level, &src, &mut dst);
            src = dst;
        }
        Ok(src)
    }
}

/// OpenSubdiv 3.7 (C++) through opensubdiv-petite 0.3 (`f32` data only).
#[cfg(feature = "opensubdiv-petite")]
mod petite {
    use opensubdiv_petite::{far, osd};
    use subla_bench::osd_eval::OsdTopology;
    use subla_bench::osd_fvar::OsdScheme;

    use super::Flat;

    fn err(e: impl std::fmt::Display) -> String {
        e.to_string()
    }

    /// `TopologyRefiner::new` + `refine_uniform` (vertex order as in Far);
    /// `full`: full topology in the last level too (OpenSubdiv's default,
    /// and enough for stencils, is a sparse last level).
    pub(super) fn topology(f: &Flat, levels: u32, full: bool) -> Result<far::TopologyRefiner, String> {
        let mut r = subla_bench::petite::refiner(
            &OsdTopology {
                num_vertices: f.nv,
                face_counts: &f.counts,
                face_verts: &f.verts,
                crease_pairs: &f.crease_flat,
                crease_weights: &f.crease_w,
                corner_vertices: &f.corner_v,
                corner_weights: &f.corner_w,
                holes: &f.holes,
                options: f.options,
            },
            OsdScheme::Catmark,
        )?;
        r.refine_uniform(far::topology_refiner::UniformRefinementOptions {
            refinement_level: levels as usize,
            order_vertices_from_faces_first: false,
            full_topology_in_last_level: full,
        });
        Ok(r)
    }

    /// Topology and the factorized stencils of the last level.
    pub(super) fn build(f: &Flat, levels: u32) -> Result<far::StencilTable, String> {
        stencils(&topology(f, levels, false)?)
    }

    /// The factorized stencils of the last level alone, on refined
    /// topology (`StencilTableFactory` without the refinement).
    pub(super) fn stencils(r: &far::TopologyRefiner) -> Result<far::StencilTable, String> {
        far::StencilTable::new(
            r,
            far::StencilTableOptions {
                generate_offsets: true,
                generate_intermediate_levels: false,
                ..Default::default()
            },
        )
        .map_err(err)
    }

    /// Source and destination buffers of `CpuEvaluator`.
    pub(super) struct Buffers {
        src: osd::CpuVertexBuffer,
        dst: osd::CpuVertexBuffer,
        n: usize,
    }

    pub(super) fn buffers(t: &far::StencilTable, n: usize) -> Result<Buffers, String> {
        Ok(Buffers {
            src: osd::CpuVertexBuffer::new(3, n).map_err(err)?,
            dst: osd::CpuVertexBuffer::new(3, t.len()).map_err(err)?,
            n,
        })
    }

    /// Uploads the control points and evaluates the stencils.
    pub(super) fn eval(t: &far::StencilTable, b: &mut Buffers, ctrl: &[f32]) -> Result<(), String> {
        b.src.update_data(ctrl, 0, b.n).map_err(err)?;
        let desc = || osd::BufferDescriptor::new(0, 3, 3).map_err(err);
        osd::cpu_evaluator::evaluate_stencils(&b.src, desc()?, &mut b.dst, desc()?, t).map_err(err)
    }

    /// Buffers of 4 floats per vertex (xyz and padding) for the padded
    /// evaluation.
    pub(super) fn buffers4(t: &far::StencilTable, n: usize) -> Result<Buffers, String> {
        Ok(Buffers {
            src: osd::CpuVertexBuffer::new(4, n).map_err(err)?,
            dst: osd::CpuVertexBuffer::new(4, t.len()).map_err(err)?,
            n,
        })
    }

    /// Uploads xyzw control points and evaluates the stencils on xyz with a
    /// stride of 4.
    pub(super) fn eval4(t: &far::StencilTable, b: &mut Buffers, ctrl4: &[f32]) -> Result<(), String> {
        b.src.update_data(ctrl4, 0, b.n).map_err(err)?;
        let desc = || osd::BufferDescriptor::new(0, 3, 4).map_err(err);
        osd::cpu_evaluator::evaluate_stencils(&b.src, desc()?, &mut b.dst, desc()?, t).map_err(err)
    }

    /// Topology, then `PrimvarRefiner::interpolate` level by level.
    pub(super) fn oneshot(f: &Flat, levels: u32) -> Result<Vec<f32>, String> {
        let r = topology(f, levels, false)?;
        let p = far::PrimvarRefiner::new(&r).map_err(err)?;
        let mut src = f.ctrl32.clone();
        for level in 1..=levels as usize {
            src = p.interpolate(level, 3, &src).ok_or("no such level")?;
        }
        Ok(src)
    }
}

// ---------------------------------------------------------------------------
// Memory probes (Linux)

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

fn meminfo_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    s.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak resident size to the current one; returns the current
/// resident size in bytes, or `None` where the kernel does not allow it.
fn reset_peak() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status_kb("VmRSS:").map(|kb| kb * 1024)
}

/// Faces after `level` uniform steps (every corner becomes a quad).
fn mesh_faces(mesh: &Mesh, level: u32) -> usize {
    mesh.topology().num_corners() * 4usize.pow(level.saturating_sub(1))
}

/// Peak bytes per output face of one run, for the predictions that skip
/// rows over the memory budget: child-process measurements on the 100k-quad
/// torus at level 3 (subla build 214, modeling 354; subdiv-kernels 651;
/// opensubdiv-rs build 617, one-shot 260; OpenSubdiv build 492, one-shot
/// 162), plus about 15 %.
fn bytes_per_face(id: &str) -> Option<f64> {
    let name = id.split('/').next().unwrap_or(id);
    Some(match name {
        "subla_topology" | "subla_build" => 250.0,
        "subla_eval" | "subla_eval_f32" => 300.0,
        "subla_modeling" => 410.0,
        "subla_ef_build" => 120.0,
        "subla_ef_eval" | "subla_ef_modeling" | "subla_ef_modeling_f32" => 200.0,
        "subla_he_build" => 160.0,
        "subla_he_eval" | "subla_he_modeling" => 220.0,
        "subdiv_kernels_topology" | "subdiv_kernels_build" | "subdiv_kernels_oneshot" => 750.0,
        "opensubdiv_rs_build" => 750.0,
        "opensubdiv_rs_topology" | "opensubdiv_rs_oneshot" => 300.0,
        "osd_petite_build" => 570.0,
        "osd_petite_topology" | "osd_petite_oneshot" => 250.0,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Timing

/// Runs the benchmarked code `iters` times and returns the time taken.
type Timed<'a> = dyn FnMut(u64) -> Result<Duration, String> + 'a;

/// Times `f` inside `pool` (one `install` per batch of iterations).
fn in_pool<'a, R: Send>(
    pool: &'a rayon::ThreadPool,
    mut f: impl FnMut() -> R + Send + 'a,
) -> impl FnMut(u64) -> Result<Duration, String> + 'a {
    move |iters| {
        Ok(pool.install(|| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            t.elapsed()
        }))
    }
}

/// Times `f` on the calling thread.
fn direct<'a, R>(mut f: impl FnMut() -> Result<R, String> + 'a) -> impl FnMut(u64) -> Result<Duration, String> + 'a {
    move |iters| {
        let t = Instant::now();
        for _ in 0..iters {
            black_box(f()?);
        }
        Ok(t.elapsed())
    }
}

/// What one probe run found, kept to predict the next level.
#[derive(Copy, Clone)]
enum Probe {
    Ran { secs: f64 },
    Skipped,
}

struct Harness<'c> {
    c: &'c mut Criterion,
    s: &'c Settings,
    /// Rows timed by hand: (group, id) → (median seconds, runs).
    manual: HashMap<(String, String), (f64, usize)>,
    /// Rows timed by criterion in this run.
    ran: HashSet<(String, String)>,
    /// (input, id) → (level, probe).
    probes: HashMap<(String, String), (u32, Probe)>,
    /// (input, level, id) → seconds of the probe run.
    times: HashMap<(String, u32, String), f64>,
    notes: Vec<String>,
}

/// One (mesh, level) row.
struct Row<'a> {
    input: &'a str,
    level: u32,
    /// Output faces.
    faces: usize,
    group: String,
}

impl Harness<'_> {
    /// Mean seconds of `group/id` measured in this run.
    fn seconds(&self, group: &str, id: &str) -> Option<f64> {
        let key = (group.to_string(), id.to_string());
        if let Some(&(t, _)) = self.manual.get(&key) {
            return Some(t);
        }
        if self.ran.contains(&key) { median_seconds(group, id) } else { None }
    }

    fn skip(&mut self, row: &Row<'_>, id: &str, why: String) {
        let note = format!("{} L{} {id}: skipped: {why}", row.input, row.level);
        println!("{note}");
        self.notes.push(note);
        self.probes.insert((row.input.to_string(), id.to_string()), (row.level, Probe::Skipped));
    }

    /// Whether `id` may run at this row, judging from the level below.
    fn admit(&mut self, row: &Row<'_>, id: &str, peer: bool) -> bool {
        let prev = self.probes.get(&(row.input.to_string(), id.to_string())).copied();
        let Some((l, probe)) = prev else { return true };
        if l + 1 != row.level {
            return true;
        }
        match probe {
            Probe::Skipped => {
                self.skip(row, id, format!("skipped at level {l}"));
                false
            }
            Probe::Ran { secs } => {
                let t = secs * GROWTH;
                if peer && t > PEER_SECONDS_LIMIT {
                    self.skip(
                        row,
                        id,
                        format!("predicted {t:.0} s from {secs:.1} s at level {l}, over {PEER_SECONDS_LIMIT:.0} s"),
                    );
                    return false;
                }
                true
            }
        }
    }

    /// Whether `id`'s predicted peak memory fits the budget.
    fn fits(&mut self, row: &Row<'_>, id: &str) -> bool {
        let Some(per_face) = bytes_per_face(id) else { return true };
        let m = per_face * row.faces as f64;
        if m > self.s.budget as f64 {
            self.skip(
                row,
                id,
                format!(
                    "predicted peak {:.1} GB ({per_face:.0} B/face), over the budget of {:.1} GB",
                    m / 1e9,
                    self.s.budget as f64 / 1e9
                ),
            );
            return false;
        }
        true
    }

    /// Benchmarks `timed` as `row.group/name/param`: one probe run, then
    /// criterion, or a few runs by hand for slow rows. Returns false when
    /// skipped or failed.
    fn bench(&mut self, row: &Row<'_>, name: &str, param: &str, peer: bool, timed: &mut Timed<'_>) -> bool {
        let id = format!("{name}/{param}");
        if !self.admit(row, &id, peer) || !self.fits(row, &id) {
            return false;
        }
        let secs = match timed(1) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => {
                self.skip(row, &id, format!("failed: {e}"));
                return false;
            }
        };
        self.probes.insert((row.input.to_string(), id.clone()), (row.level, Probe::Ran { secs }));
        self.times.insert((row.input.to_string(), row.level, id.clone()), secs);
        let key = (row.group.clone(), id.clone());
        if secs >= MANUAL_SECONDS {
            // The probe is a warm-up (its first touch of fresh memory can
            // cost more than the work) wherever more runs follow.
            let extra = if secs < 1.5 {
                3
            } else if secs < 5.0 {
                2
            } else {
                0
            };
            let mut runs = Vec::with_capacity(extra);
            for _ in 0..extra {
                match timed(1) {
                    Ok(d) => runs.push(d.as_secs_f64()),
                    Err(e) => println!("{id}: repeated run failed: {e}"),
                }
            }
            if runs.is_empty() {
                runs.push(secs);
            }
            runs.sort_by(f64::total_cmp);
            let n = runs.len();
            let median = (runs[(n - 1) / 2] + runs[n / 2]) / 2.0;
            println!("{}/{id}  time: {:.3} ms (by hand, median of {n} runs)", row.group, median * 1e3);
            self.manual.insert(key, (median, n));
            return true;
        }
        let mut g = self.c.benchmark_group(row.group.clone());
        g.sample_size(10);
        if secs < 2e-3 || self.s.smoke {
            g.warm_up_time(Duration::from_millis(100));
            g.measurement_time(Duration::from_millis(300));
        } else {
            // About one iteration per sample.
            g.sampling_mode(SamplingMode::Flat);
            g.warm_up_time(Duration::from_secs_f64(secs.max(0.02)));
            g.measurement_time(Duration::from_secs_f64(secs * 10.0));
        }
        g.bench_function(BenchmarkId::new(name, param), |b| {
            b.iter_custom(|iters| match timed(iters) {
                Ok(d) => d,
                Err(e) => panic!("{id} failed after a successful probe: {e}"),
            })
        });
        g.finish();
        self.ran.insert(key);
        true
    }
}

// ---------------------------------------------------------------------------
// Correctness check

/// Largest distance from a point of `a` to its nearest point of `b`, and
/// back (a grid search; `INFINITY` when a point has no neighbour within a
/// grid cell).
fn max_mismatch(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    fn one_way(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in b {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let diag = ((0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>()).sqrt().max(1e-300);
        let cell = diag / (b.len() as f64).cbrt().max(1.0);
        let key = |p: &[f64; 3]| [0, 1, 2].map(|k| ((p[k] - lo[k]) / cell).floor() as i64);
        let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
        for (i, p) in b.iter().enumerate() {
            grid.entry(key(p)).or_default().push(i as u32);
        }
        let mut worst = 0.0f64;
        for p in a {
            let c = key(p);
            let mut best = f64::INFINITY;
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        if let Some(list) = grid.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) {
                            for &j in list {
                                let q = &b[j as usize];
                                let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                                best = best.min(d);
                            }
                        }
                    }
                }
            }
            worst = worst.max(if best <= cell { best } else { f64::INFINITY });
        }
        worst
    }
    one_way(a, b).max(one_way(b, a))
}

fn diagonal(p: &[[f64; 3]]) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for q in p {
        for k in 0..3 {
            lo[k] = lo[k].min(q[k]);
            hi[k] = hi[k].max(q[k]);
        }
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt()
}

/// Compares subla's level-`level` positions with each peer's, matching
/// points by position (vertex orders differ between implementations).
fn verify(input: &Input, flat: &Flat, level: u32, notes: &mut Vec<String>) {
    let pos = input.data.positions();
    let ours = match modeling(&CatmarkSlak, &input.data.mesh, pos, level, Par::Rayon) {
        Ok((_, p)) => p.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect::<Vec<_>>(),
        Err(e) => {
            println!("verify {} L{level}: subla failed: {e}", input.name);
            return;
        }
    };
    let diag = diagonal(&ours).max(1e-300);
    let mut check = |peer: &str, theirs: Result<Vec<[f64; 3]>, String>, tol: f64| {
        let line = match theirs {
            Err(e) => format!("verify {} L{level}: {peer} failed: {e}", input.name),
            Ok(t) if t.len() != ours.len() => {
                format!("WARNING verify {} L{level}: {peer} has {} points, subla {}", input.name, t.len(), ours.len())
            }
            Ok(t) => {
                let d = max_mismatch(&ours, &t);
                let verdict = if d <= tol * diag { "ok" } else { "WARNING: mismatch" };
                format!(
                    "verify {} L{level}: {peer}: {} points, max |subla - peer| = {d:.3e} ({:.2e} of the bounding-box diagonal, tolerance {tol:.0e}): {verdict}",
                    input.name,
                    t.len(),
                    d / diag
                )
            }
        };
        println!("{line}");
        if line.contains("WARNING") {
            notes.push(line);
        }
    };
    // The pure-Rust peers store stencil weights as f32 (data f64): agreement
    // to ~1e-7 relative is the best they can give.
    check("subdiv-kernels", sk::oneshot(flat, level), 1e-6);
    check("opensubdiv-rs", osdrs::oneshot(flat, level), 1e-6);
    #[cfg(feature = "opensubdiv-petite")]
    check(
        "OpenSubdiv (petite, f32)",
        petite::oneshot(flat, level)
            .map(|v| v.chunks_exact(3).map(|c| [c[0] as f64, c[1] as f64, c[2] as f64]).collect()),
        1e-5,
    );
}

// ---------------------------------------------------------------------------
// The benchmarks

fn peers() -> Vec<&'static str> {
    let mut p = vec!["subdiv_kernels", "opensubdiv_rs"];
    if cfg!(feature = "opensubdiv-petite") {
        p.push("osd_petite");
    }
    p
}

/// subla's topology refinement alone: the child connectivity that
/// `CatmarkSlak.build` uses (`refine_topology_direct`), as a mesh without
/// sharpness.
fn topology_step(mesh: &Mesh, par: Par) -> Result<Mesh, String> {
    let r = refine_topology_direct(mesh, par).map_err(|e| e.to_string())?;
    let (ne, nv) = (r.topology.num_edges(), r.topology.num_vertices());
    Mesh::from_parts(r.topology, vec![0.0; ne], vec![0.0; nv], r.holes, mesh.options()).map_err(|e| e.to_string())
}

fn bench_row(h: &mut Harness<'_>, input: &Input, flat: &Flat, level: u32) {
    let faces_out = mesh_faces(&input.data.mesh, level);
    let row = Row { input: &input.name, level, faces: faces_out, group: format!("catmark_{}_L{level}", input.name) };
    let mesh: &Mesh = &input.data.mesh;
    let pos = input.data.positions().to_owned();
    let threads = h.s.threads;
    let nt = format!("{threads}threads");
    let p1 = pool(1);
    let pn = pool(threads);
    let mut variants: Vec<(&str, &rayon::ThreadPool, Par)> = vec![("1thread", &p1, Par::Seq)];
    if threads > 1 {
        variants.push((nt.as_str(), &pn, Par::Rayon));
    }
    println!("\n#### {} level {level}: {} control faces -> {} faces", input.name, mesh.num_faces(), faces_out);

    // subla
    for &(t, p, par) in &variants {
        h.bench(
            &row,
            "subla_topology",
            t,
            false,
            &mut in_pool(p, || {
                let mut m = topology_step(mesh, par);
                for _ in 1..level {
                    m = m.and_then(|m| topology_step(&m, par));
                }
                m.map(|m| m.num_faces())
            }),
        );
        h.bench(&row, "subla_build", t, false, &mut in_pool(p, || CatmarkSlak.build(mesh, level, par)));
    }
    match pn.install(|| CatmarkSlak.build(mesh, level, Par::Rayon)) {
        Ok(plan) => {
            for &(t, p, par) in &variants {
                h.bench(&row, "subla_eval", t, false, &mut in_pool(p, || eval(&plan, pos.view(), par).unwrap()));
            }
            if cfg!(feature = "opensubdiv-petite") {
                let pos32 = pos.mapv(|x| x as f32);
                h.bench(
                    &row,
                    "subla_eval_f32",
                    "1thread",
                    false,
                    &mut in_pool(&p1, || eval(&plan, pos32.view(), Par::Seq).unwrap()),
                );
            }
        }
        Err(e) => println!("subla build failed: {e}"),
    }
    for &(t, p, par) in &variants {
        h.bench(
            &row,
            "subla_modeling",
            t,
            false,
            &mut in_pool(p, || modeling(&CatmarkSlak, mesh, pos.view(), level, par)),
        );
    }
    // The edge-friend kernels (the default path on the CPU).
    let ef = CatmarkEdgeFriend::new();
    for &(t, p, par) in &variants {
        h.bench(&row, "subla_ef_build", t, false, &mut in_pool(p, || ef.build(mesh, level, par)));
    }
    match pn.install(|| ef.build(mesh, level, Par::Rayon)) {
        Ok(plan) => {
            for &(t, p, par) in &variants {
                h.bench(&row, "subla_ef_eval", t, false, &mut in_pool(p, || eval(&plan, pos.view(), par).unwrap()));
            }
        }
        Err(e) => println!("subla edge-friend build failed: {e}"),
    }
    for &(t, p, par) in &variants {
        h.bench(&row, "subla_ef_modeling", t, false, &mut in_pool(p, || modeling(&ef, mesh, pos.view(), level, par)));
    }
    // Topology and the composed matrix, merged and with the rows in closed
    // form kept apart, as `subla_plan_*_build` with the kernels' plan.
    for &(t, p, par) in &variants {
        h.bench(
            &row,
            "subla_ef_plan_composed_build",
            t,
            false,
            &mut in_pool(p, || Refinement::composed_of(&ef.build(mesh, level, par)?, Budget::default(), par)),
        );
        h.bench(
            &row,
            "subla_ef_plan_tensor_build",
            t,
            false,
            &mut in_pool(p, || Refinement::tensor_of(&ef.build(mesh, level, par)?, Budget::default(), par)),
        );
    }
    if cfg!(feature = "opensubdiv-petite") {
        let pos32 = pos.mapv(|x| x as f32);
        h.bench(
            &row,
            "subla_ef_modeling_f32",
            &nt,
            false,
            &mut in_pool(&pn, || modeling(&ef, mesh, pos32.view(), level, Par::Rayon)),
        );
    }

    // The closed-form halfedge kernels (Dupuy & Vanhoey 2021).
    let he = CatmarkHalfedge::new();
    for &(t, p, par) in &variants {
        h.bench(&row, "subla_he_build", t, false, &mut in_pool(p, || he.build(mesh, level, par)));
    }
    match pn.install(|| he.build(mesh, level, Par::Rayon)) {
        Ok(plan) => {
            for &(t, p, par) in &variants {
                h.bench(&row, "subla_he_eval", t, false, &mut in_pool(p, || eval(&plan, pos.view(), par).unwrap()));
            }
        }
        Err(e) => println!("subla halfedge build failed: {e}"),
    }
    for &(t, p, par) in &variants {
        h.bench(&row, "subla_he_modeling", t, false, &mut in_pool(p, || modeling(&he, mesh, pos.view(), level, par)));
    }
    for &(t, p, par) in &variants {
        h.bench(
            &row,
            "subla_he_plan_composed_build",
            t,
            false,
            &mut in_pool(p, || Refinement::composed_of(&he.build(mesh, level, par)?, Budget::default(), par)),
        );
    }

    // subdiv-kernels
    h.bench(&row, "subdiv_kernels_topology", "1thread", true, &mut direct(|| sk::topology(flat, level)));
    let mut table = None;
    h.bench(
        &row,
        "subdiv_kernels_build",
        "1thread",
        true,
        &mut direct(|| {
            table = Some(sk::build(flat, level)?);
            Ok(())
        }),
    );
    if let Some(t) = table.take() {
        h.bench(&row, "subdiv_kernels_eval", "1thread", true, &mut direct(|| Ok(sk::eval(&t, &flat.ctrl))));
    } else {
        h.skip(&row, "subdiv_kernels_eval/1thread", "no stencils were built".into());
    }
    h.bench(&row, "subdiv_kernels_oneshot", "1thread", true, &mut direct(|| sk::oneshot(flat, level)));

    // opensubdiv-rs
    h.bench(
        &row,
        "opensubdiv_rs_topology",
        "1thread",
        true,
        &mut direct(|| osdrs::topology(flat, level).map(|r| r.level(level as usize).num_faces())),
    );
    let mut table = None;
    h.bench(
        &row,
        "opensubdiv_rs_build",
        "1thread",
        true,
        &mut direct(|| {
            table = Some(osdrs::build(flat, level)?);
            Ok(())
        }),
    );
    if let Some(t) = table.take() {
        let mut out = vec![[0.0f64; 3]; t.num_stencils()];
        h.bench(
            &row,
            "opensubdiv_rs_eval",
            "1thread",
            true,
            &mut direct(|| {
                osdrs::eval(&t, &flat.ctrl, &mut out);
                Ok(())
            }),
        );
    } else {
        h.skip(&row, "opensubdiv_rs_eval/1thread", "no stencils were built".into());
    }
    h.bench(&row, "opensubdiv_rs_oneshot", "1thread", true, &mut direct(|| osdrs::oneshot(flat, level)));

    // OpenSubdiv (C++)
    #[cfg(feature = "opensubdiv-petite")]
    {
        h.bench(
            &row,
            "osd_petite_topology",
            "1thread",
            true,
            &mut direct(|| petite::topology(flat, level, true).map(|r| r.max_level())),
        );
        let mut table = None;
        h.bench(
            &row,
            "osd_petite_build",
            "1thread",
            true,
            &mut direct(|| {
                table = Some(petite::build(flat, level)?);
                Ok(())
            }),
        );
        if let Ok(r) = petite::topology(flat, level, false) {
            h.bench(&row, "osd_petite_stencils", "1thread", true, &mut direct(|| petite::stencils(&r).map(drop)));
        }
        match table.take().map(|t| petite::buffers(&t, flat.nv).map(|b| (t, b))) {
            Some(Ok((t, mut b))) => {
                h.bench(
                    &row,
                    "osd_petite_eval",
                    "1thread",
                    true,
                    &mut direct(|| petite::eval(&t, &mut b, &flat.ctrl32)),
                );
            }
            Some(Err(e)) => h.skip(&row, "osd_petite_eval/1thread", e),
            None => h.skip(&row, "osd_petite_eval/1thread", "no stencils were built".into()),
        }
        if let Ok(t) = petite::build(flat, level) {
            match petite::buffers4(&t, flat.nv) {
                Ok(mut b) => {
                    let ctrl4: Vec<f32> =
                        flat.ctrl.iter().flat_map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0]).collect();
                    h.bench(
                        &row,
                        "osd_petite_eval4",
                        "1thread",
                        true,
                        &mut direct(|| petite::eval4(&t, &mut b, &ctrl4)),
                    );
                }
                Err(e) => h.skip(&row, "osd_petite_eval4/1thread", e),
            }
        }
        h.bench(&row, "osd_petite_oneshot", "1thread", true, &mut direct(|| petite::oneshot(flat, level)));
    }

    // Static topology: refinement matrices (chain and product) and their
    // padded-CSR evaluation.
    let static_plan = pn.install(|| CatmarkSlak.build(mesh, level, Par::Rayon));
    for &(t, p, par) in &variants {
        if let Ok(plan) = &static_plan {
            h.bench(
                &row,
                "subla_static_build",
                t,
                false,
                &mut in_pool(p, || {
                    let mut r = Refinement::chain(plan, Budget::default(), par)?;
                    r.compose_with(plan, Budget::default(), par)?;
                    Ok::<_, subla_scheme::SchemeError>(r)
                }),
            );
            h.bench(
                &row,
                "subla_composed_build",
                t,
                false,
                &mut in_pool(p, || Refinement::composed_of(plan, Budget::default(), par)),
            );
            h.bench(
                &row,
                "subla_tensor_build",
                t,
                false,
                &mut in_pool(p, || Refinement::tensor_of(plan, Budget::default(), par)),
            );
        }
        // Like the peers' builds: the topology of every level, then the
        // composed matrix (merged, and with the tensor rows kept apart).
        h.bench(
            &row,
            "subla_plan_composed_build",
            t,
            false,
            &mut in_pool(p, || {
                let plan = CatmarkSlak.build(mesh, level, par)?;
                Refinement::composed_of(&plan, Budget::default(), par)
            }),
        );
        h.bench(
            &row,
            "subla_plan_tensor_build",
            t,
            false,
            &mut in_pool(p, || {
                let plan = CatmarkSlak.build(mesh, level, par)?;
                Refinement::tensor_of(&plan, Budget::default(), par)
            }),
        );
    }
    let refinement = static_plan.as_ref().ok().and_then(|plan| {
        pn.install(|| {
            let mut r = Refinement::chain(plan, Budget::default(), Par::Rayon).ok()?;
            r.compose_with(plan, Budget::default(), Par::Rayon).ok()?;
            Some(r)
        })
    });
    if let Some(mut r) = refinement {
        let pos4 =
            ndarray::Array2::from_shape_fn((pos.nrows(), 4), |(i, k)| if k < 3 { pos[(i, k)] as f32 } else { 0.0 });
        let mut runs: Vec<(&str, Evaluation, bool)> =
            vec![("subla_static_eval", Evaluation::Auto, false), ("subla_static_eval_chain", Evaluation::Chain, false)];
        runs.push(("subla_static_eval_composed", Evaluation::Composed, false));
        if r.tensor_rows().is_some() {
            runs.push(("subla_static_eval_tensor", Evaluation::Tensor, false));
        }
        runs.push(("subla_static_eval_f32x4", Evaluation::Auto, true));
        println!(
            "refinement matrices: per-level {} nonzeros, composed {} nonzeros, {} of {} rows in tensor form",
            r.chain_nnz(),
            r.composed().map_or(0, |c| c.nnz()),
            r.tensor_rows().map_or(0, |t| t.closed_rows()),
            r.output_len()
        );
        for (name, how, f32x4) in runs {
            for &(t, p, par) in &variants {
                let (secs, bytes) = if f32x4 {
                    let Ok(ev) = r.evaluator::<f32>(how, 4, Budget::default(), Par::Rayon) else { continue };
                    let bytes = eval_bytes(&ev, 4);
                    let mut out = ndarray::Array2::<f32>::zeros((ev.output_len(), 4));
                    h.bench(&row, name, t, false, &mut in_pool(p, || ev.apply(pos4.view(), out.view_mut(), par)));
                    (h.seconds(&row.group, &format!("{name}/{t}")), bytes)
                } else {
                    let Ok(ev) = r.evaluator::<f64>(how, 3, Budget::default(), Par::Rayon) else { continue };
                    let bytes = eval_bytes(&ev, 3);
                    let mut out = ndarray::Array2::<f64>::zeros((ev.output_len(), 3));
                    h.bench(&row, name, t, false, &mut in_pool(p, || ev.apply(pos.view(), out.view_mut(), par)));
                    (h.seconds(&row.group, &format!("{name}/{t}")), bytes)
                };
                let Some(secs) = secs else { continue };
                // A copy moving as many bytes, timed the same way right
                // after: the machine's bandwidth drifts over minutes.
                let copy_id = format!("copy_for_{name}");
                let words = (bytes / 16) as usize;
                let src: Vec<f64> = (0..words).map(|i| i as f64).collect();
                // Written once first, so that no run pays the first touch.
                let mut dst = vec![1f64; words];
                p.install(|| stream_copy(&mut dst, &src, par));
                h.bench(&row, &copy_id, t, false, &mut in_pool(p, || stream_copy(&mut dst, &src, par)));
                drop((src, dst));
                let gbs = bytes as f64 / secs / 1e9;
                let adjacent = h.seconds(&row.group, &format!("{copy_id}/{t}")).map(|c| bytes as f64 / c / 1e9);
                let line = format!(
                    "{} {name}/{t}: {:.1} MB moved in {:.2} ms = {gbs:.2} GB/s = {} of the copy of as many bytes \
                     timed alongside, {:.0} % of the best copy bandwidth",
                    row.group,
                    bytes as f64 / 1e6,
                    secs * 1e3,
                    adjacent.map_or("-".to_string(), |c| format!("{:.0} % ({c:.2} GB/s)", 100.0 * gbs / c)),
                    100.0 * gbs / copy_bandwidth()
                );
                println!("{line}");
                h.notes.push(line);
            }
        }
    }

    // Ratios.
    let mut rows: Vec<(String, String)> = Vec::new();
    for (kind, peer_kind) in [("topology", "topology"), ("build", "build"), ("eval", "eval"), ("modeling", "oneshot")] {
        for &(t, _, _) in &variants {
            for peer in peers() {
                rows.push((format!("subla_{kind}/{t}"), format!("{peer}_{peer_kind}/1thread")));
            }
        }
    }
    if cfg!(feature = "opensubdiv-petite") {
        rows.push(("subla_eval_f32/1thread".into(), "osd_petite_eval/1thread".into()));
    }
    for &(t, _, _) in &variants {
        for peer in peers() {
            rows.push((format!("subla_static_eval/{t}"), format!("{peer}_eval/1thread")));
            rows.push((format!("subla_static_eval_composed/{t}"), format!("{peer}_eval/1thread")));
            rows.push((format!("subla_plan_tensor_build/{t}"), format!("{peer}_build/1thread")));
        }
        if cfg!(feature = "opensubdiv-petite") {
            rows.push((format!("subla_static_eval_f32x4/{t}"), "osd_petite_eval4/1thread".into()));
            rows.push((format!("subla_static_build/{t}"), "osd_petite_stencils/1thread".into()));
            rows.push((format!("subla_composed_build/{t}"), "osd_petite_stencils/1thread".into()));
            rows.push((format!("subla_plan_composed_build/{t}"), "osd_petite_build/1thread".into()));
            rows.push((format!("subla_tensor_build/{t}"), "osd_petite_stencils/1thread".into()));
            rows.push((format!("subla_plan_tensor_build/{t}"), "osd_petite_build/1thread".into()));
        }
    }
    let rows: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    report_with(&row.group, &rows, |id| h.seconds(&row.group, id));
}

/// Bytes one evaluation moves: the matrices, the input, the output and,
/// for a chain, each intermediate level written and read once.
fn eval_bytes<T: num_traits::Float + Send + Sync>(ev: &Evaluator<T>, d: usize) -> u64 {
    let t = std::mem::size_of::<T>() as u64;
    ev.matrix_bytes()
        + t * d as u64 * (ev.input_len() + ev.output_len()) as u64
        + ev.intermediate_rows() as u64 * 2 * t * d as u64
}

/// STREAM-style copy bandwidth of this machine (bytes read + written per
/// second, best of five copies of 512 MB on all threads), measured once.
/// `dst = src`, in 1 MiB pieces over the pool under `Par::Rayon`.
fn stream_copy(dst: &mut [f64], src: &[f64], par: Par) {
    use rayon::prelude::*;
    match par {
        Par::Seq => dst.copy_from_slice(src),
        Par::Rayon => dst.par_chunks_mut(1 << 17).zip(src.par_chunks(1 << 17)).for_each(|(d, s)| d.copy_from_slice(s)),
    }
}

fn copy_bandwidth() -> f64 {
    static BW: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *BW.get_or_init(|| {
        use rayon::prelude::*;
        let n = 64 << 20; // f64s: 512 MB
        let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut dst = vec![0f64; n];
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            dst.par_chunks_mut(1 << 20).zip(src.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
            best = best.min(t.elapsed().as_secs_f64());
            black_box(&dst);
        }
        let bw = 2.0 * (n * 8) as f64 / best / 1e9;
        println!("copy bandwidth (STREAM-style copy, {} threads): {bw:.2} GB/s", rayon::current_num_threads());
        bw
    })
}

/// The final table: subla's time and each peer's ratio, per row.
fn summary(h: &Harness<'_>, rows: &[(String, u32, usize)]) {
    let threads = h.s.threads;
    let mut labels = vec!["1thread".to_string()];
    if threads > 1 {
        labels.push(format!("{threads}threads"));
    }
    let mut out = String::new();
    let kernels = RatioTable {
        title: "catmark summary",
        note: "(> 1: subla faster; peers single-threaded; - = not run)",
        prefix: "subla_",
        kinds: &[("topology", "topology"), ("build", "build"), ("eval", "eval"), ("modeling", "oneshot")],
        ours_width: 9,
        peer_width: 7,
        peer_kind_shown: false,
    };
    // The edge-friend path: its build against the peers' topology
    // refinement (the plan, what a modeling step needs), its modeling
    // against their one-shot subdivision; the f32 row runs on all threads
    // only.
    let edge_friend = RatioTable {
        title: "catmark edge-friend (the default path)",
        note: "(peer kind in brackets)",
        prefix: "subla_ef_",
        kinds: &[
            ("build", "topology"),
            ("eval", "eval"),
            ("modeling", "oneshot"),
            ("modeling_f32", "oneshot"),
            ("plan_composed_build", "build"),
            ("plan_tensor_build", "build"),
        ],
        ours_width: 12,
        peer_width: 9,
        peer_kind_shown: true,
    };
    let halfedge = RatioTable {
        title: "catmark halfedge (Dupuy & Vanhoey 2021)",
        note: "(peer kind in brackets)",
        prefix: "subla_he_",
        kinds: &[("build", "topology"), ("eval", "eval"), ("modeling", "oneshot"), ("plan_composed_build", "build")],
        ours_width: 12,
        peer_width: 9,
        peer_kind_shown: true,
    };
    for table in [&kernels, &edge_friend, &halfedge] {
        for t in &labels {
            table.write(&mut out, h, rows, t);
        }
    }
    println!("{out}");
}

/// A table of subla's times and the peers' ratios to them, per (mesh,
/// level) row: for each `(kind, peer kind)`, subla's `{prefix}{kind}/{t}`
/// in ms, then each peer's `{peer}_{peer kind}/1thread` over it.
struct RatioTable<'a> {
    title: &'a str,
    note: &'a str,
    prefix: &'a str,
    kinds: &'a [(&'a str, &'a str)],
    ours_width: usize,
    peer_width: usize,
    /// Whether the peer columns name the peer kind (`osd-c++[top]`).
    peer_kind_shown: bool,
}

impl RatioTable<'_> {
    fn write(&self, out: &mut String, h: &Harness<'_>, rows: &[(String, u32, usize)], t: &str) {
        let peers = peers();
        let (ow, pw) = (self.ours_width, self.peer_width);
        let _ = writeln!(out, "\n== {}, subla on {t}: subla ms, then peer time / subla time {}", self.title, self.note);
        // The path's short name from the row prefix (`subla_ef_` → `ef `).
        let ours_name = match self.prefix.trim_start_matches("subla_").trim_end_matches('_') {
            "" => String::new(),
            p => format!("{p} "),
        };
        let mut head = format!("{:<12} {:>2} {:>10}", "mesh", "L", "faces");
        for (kind, peer_kind) in self.kinds {
            let _ = write!(head, " | {:>ow$}", format!("{ours_name}{kind} ms"));
            for p in &peers {
                let short = match *p {
                    "subdiv_kernels" => "sk",
                    "opensubdiv_rs" => "osd-rs",
                    _ => "osd-c++",
                };
                let label =
                    if self.peer_kind_shown { format!("{short}[{}]", &peer_kind[..3]) } else { short.to_string() };
                let _ = write!(head, " {label:>pw$}");
            }
        }
        let _ = writeln!(out, "{head}");
        for (input, level, faces) in rows {
            let group = format!("catmark_{input}_L{level}");
            let mut line = format!("{input:<12} {level:>2} {faces:>10}");
            for (kind, peer_kind) in self.kinds {
                let ours = h.seconds(&group, &format!("{}{kind}/{t}", self.prefix));
                match ours {
                    Some(a) => {
                        let _ = write!(line, " | {:>ow$.2}", a * 1e3);
                    }
                    None => {
                        let _ = write!(line, " | {:>ow$}", "-");
                    }
                }
                for p in &peers {
                    match (ours, h.seconds(&group, &format!("{p}_{peer_kind}/1thread"))) {
                        (Some(a), Some(b)) => {
                            let _ = write!(line, " {:>pw$.2}", b / a);
                        }
                        _ => {
                            let _ = write!(line, " {:>pw$}", "-");
                        }
                    }
                }
            }
            let _ = writeln!(out, "{line}");
        }
    }
}

/// Peak memory per output face: subla's modeling mode in a child process
/// (the release `subla` binary), and the probes' in-process peaks.
fn memory(h: &Harness<'_>, inputs: &[Input], levels: &[u32]) {
    let bin = match std::env::var_os("SUBLA_BIN") {
        Some(v) => PathBuf::from(v),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"), PathBuf::from);
            target.join("release/subla")
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n== peak memory of `subla subdivide --mode modeling --levels L` (whole process: read, refine, output mesh, write to /dev/null), bytes per output face"
    );
    if !bin.exists() {
        let _ = writeln!(
            out,
            "note: {} is not built (`cargo build --release -p subla-cli`), or set SUBLA_BIN; no child-process figures",
            bin.display()
        );
    } else {
        let _ = writeln!(
            out,
            "{:<12} {:>2} {:>10} {:>14} {:>10} {:>10}",
            "mesh", "L", "faces", "peak bytes", "B/face", "secs"
        );
        let tmp = std::env::temp_dir().join(format!("subla_catmark_bench_{}", std::process::id()));
        for input in inputs {
            let path = match &input.path {
                Some(p) => p.clone(),
                None => {
                    let _ = std::fs::create_dir_all(&tmp);
                    let p = tmp.join(format!("{}.obj", input.name));
                    if let Err(e) = subla_mesh::obj::write_obj_file(&input.data, &p) {
                        let _ = writeln!(out, "{}: cannot write {}: {e}", input.name, p.display());
                        continue;
                    }
                    p
                }
            };
            for &level in levels {
                let t = Instant::now();
                let run = std::process::Command::new(&bin)
                    .args(["subdivide"])
                    .arg(&path)
                    .args([
                        "-o",
                        "/dev/null",
                        "--levels",
                        &level.to_string(),
                        "--mode",
                        "modeling",
                        "--timings",
                        "json",
                    ])
                    .output();
                let secs = t.elapsed().as_secs_f64();
                let line = match run {
                    Ok(o) if o.status.success() => {
                        let text = String::from_utf8_lossy(&o.stdout);
                        let v: Option<serde_json::Value> =
                            text.lines().rev().find_map(|l| serde_json::from_str(l).ok());
                        let peak = v.as_ref().and_then(|v| v.get("peak_memory_bytes")?.as_u64());
                        let faces = v.as_ref().and_then(|v| v.get("output_faces")?.as_u64());
                        match (peak, faces) {
                            (Some(p), Some(f)) if f > 0 => format!(
                                "{:<12} {level:>2} {f:>10} {p:>14} {:>10.1} {secs:>10.2}",
                                input.name,
                                p as f64 / f as f64
                            ),
                            _ => format!("{} L{level}: no peak_memory_bytes/output_faces in: {text}", input.name),
                        }
                    }
                    Ok(o) => format!(
                        "{} L{level}: subla failed ({}): {}",
                        input.name,
                        o.status,
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                    Err(e) => format!("{} L{level}: cannot run {}: {e}", input.name, bin.display()),
                };
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }

    // Every implementation in a fresh child process (this bench binary,
    // SUBLA_BENCH_CHILD), at the highest level where each of its runs took
    // at most CHILD_SECONDS: peak resident size less the size after loading
    // the input.
    let mut ids: Vec<&str> = vec![
        "subla_build",
        "subla_modeling",
        "subla_ef_build",
        "subla_ef_modeling",
        "subla_ef_modeling_f32",
        "subla_he_build",
        "subla_he_modeling",
    ];
    for p in peers() {
        ids.push(match p {
            "subdiv_kernels" => "subdiv_kernels_build",
            "opensubdiv_rs" => "opensubdiv_rs_build",
            _ => "osd_petite_build",
        });
        ids.push(match p {
            "subdiv_kernels" => "subdiv_kernels_oneshot",
            "opensubdiv_rs" => "opensubdiv_rs_oneshot",
            _ => "osd_petite_oneshot",
        });
    }
    let _ = writeln!(
        out,
        "\n== peak memory of one run in a child process (peak resident size less the size after loading the input), bytes per output face; subla on all threads"
    );
    let mut head = format!("{:<12} {:>2} {:>10}", "mesh", "L", "faces");
    for id in &ids {
        let _ = write!(head, " {:>15}", id.replace("opensubdiv_rs", "osdrs").replace("subdiv_kernels", "sk"));
    }
    let _ = writeln!(out, "{head}");
    let exe = std::env::current_exe();
    for input in inputs {
        // The highest level at which every implementation ran quickly.
        let quick_enough = |level: u32| {
            ids.iter().all(|id| {
                let t = h.times.get(&(input.name.clone(), level, format!("{id}/1thread")));
                t.is_none_or(|&t| t <= CHILD_SECONDS)
            })
        };
        let Some(&level) = levels.iter().rev().find(|&&l| quick_enough(l)) else { continue };
        let faces = mesh_faces(&input.data.mesh, level);
        let mut line = format!("{:<12} {level:>2} {faces:>10}", input.name);
        for id in &ids {
            // Timed on one thread, or (the f32 row) on all of them.
            let ran = h
                .times
                .keys()
                .any(|(name, l, row)| *name == input.name && *l == level && row.split('/').next() == Some(*id));
            let cell = match (&exe, ran) {
                (Ok(exe), true) => match child_peak(exe, id, &input.name, level) {
                    Ok(b) => format!("{:.1}", b as f64 / faces as f64),
                    Err(e) => {
                        println!("{} L{level} {id}: child measurement failed: {e}", input.name);
                        "failed".into()
                    }
                },
                _ => "-".into(),
            };
            let _ = write!(line, " {cell:>15}");
        }
        let _ = writeln!(out, "{line}");
    }
    println!("{out}");
}

/// Rows whose single run took longer than this are left out of the
/// child-process memory table.
const CHILD_SECONDS: f64 = 15.0;

/// Runs `id` once on `input` at `level` in a child process; returns its
/// peak resident bytes less its resident bytes before the run.
fn child_peak(exe: &Path, id: &str, input: &str, level: u32) -> Result<u64, String> {
    let o = std::process::Command::new(exe)
        .env("SUBLA_BENCH_CHILD", format!("{id}:{level}:{input}"))
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("SUBLA_CHILD_PEAK "));
    match (o.status.success(), line) {
        (true, Some(l)) => l.trim().parse().map_err(|e| format!("{e}: {l}")),
        _ => Err(format!("{}: {}{}", o.status, text.trim(), String::from_utf8_lossy(&o.stderr).trim())),
    }
}

/// The child side of [`child_peak`]: `spec` is `id:level:input`.
fn child(spec: &str) -> Result<(), String> {
    let mut parts = spec.splitn(3, ':');
    let (Some(id), Some(level), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("bad SUBLA_BENCH_CHILD {spec:?}"));
    };
    let level: u32 = level.parse().map_err(|e| format!("bad level in {spec:?}: {e}"))?;
    let mut s = Settings::from_env();
    s.quick = false;
    s.meshes = Some(vec![name.to_string()]);
    let input = load_inputs(&s).into_iter().next().ok_or_else(|| format!("no input named {name}"))?;
    let flat = Flat::new(&input.data);
    let mesh = &input.data.mesh;
    let pos = input.data.positions().to_owned();
    let before = reset_peak().ok_or("cannot reset the peak resident size (/proc/self/clear_refs)")?;
    // Each result is dropped at once: the peak resident size keeps its
    // high-water mark.
    let err = |e: subla_scheme::SchemeError| e.to_string();
    match id {
        "subla_build" => drop(CatmarkSlak.build(mesh, level, Par::Rayon).map_err(err)?),
        "subla_modeling" => drop(modeling(&CatmarkSlak, mesh, pos.view(), level, Par::Rayon).map_err(err)?),
        "subla_ef_build" => drop(CatmarkEdgeFriend::new().build(mesh, level, Par::Rayon).map_err(err)?),
        "subla_ef_modeling" => {
            drop(modeling(&CatmarkEdgeFriend::new(), mesh, pos.view(), level, Par::Rayon).map_err(err)?);
        }
        "subla_ef_modeling_f32" => {
            let pos32 = pos.mapv(|x| x as f32);
            let before = before + 4 * pos32.len() as u64;
            drop(modeling(&CatmarkEdgeFriend::new(), mesh, pos32.view(), level, Par::Rayon).map_err(err)?);
            let peak = status_kb("VmHWM:").ok_or("no VmHWM")? * 1024;
            println!("SUBLA_CHILD_PEAK {}", peak.saturating_sub(before));
            return Ok(());
        }
        "subla_he_build" => drop(CatmarkHalfedge::new().build(mesh, level, Par::Rayon).map_err(err)?),
        "subla_he_modeling" => {
            drop(modeling(&CatmarkHalfedge::new(), mesh, pos.view(), level, Par::Rayon).map_err(err)?);
        }
        "subdiv_kernels_build" => drop(sk::build(&flat, level)?),
        "subdiv_kernels_oneshot" => drop(sk::oneshot(&flat, level)?),
        "opensubdiv_rs_build" => drop(osdrs::build(&flat, level)?),
        "opensubdiv_rs_oneshot" => drop(osdrs::oneshot(&flat, level)?),
        #[cfg(feature = "opensubdiv-petite")]
        "osd_petite_build" => drop(petite::build(&flat, level)?),
        #[cfg(feature = "opensubdiv-petite")]
        "osd_petite_oneshot" => drop(petite::oneshot(&flat, level)?),
        _ => return Err(format!("unknown implementation {id}")),
    }
    let peak = status_kb("VmHWM:").ok_or("no VmHWM")? * 1024;
    println!("SUBLA_CHILD_PEAK {}", peak.saturating_sub(before));
    Ok(())
}

fn main() {
    if let Ok(spec) = std::env::var("SUBLA_BENCH_CHILD") {
        if let Err(e) = child(&spec) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let s = Settings::from_env();
    let mut c = criterion().nresamples(20_000);
    let inputs = load_inputs(&s);
    println!(
        "catmark bench: {} inputs, levels {:?}, {} threads, row budget {:.1} GB{}{}",
        inputs.len(),
        s.levels,
        s.threads,
        s.budget as f64 / 1e9,
        if s.quick { ", quick" } else { "" },
        if cfg!(feature = "opensubdiv-petite") { ", with OpenSubdiv C++ (petite)" } else { "" },
    );
    let flats: Vec<Flat> = inputs.iter().map(|i| Flat::new(&i.data)).collect();

    let mut notes = Vec::new();
    for (input, flat) in inputs.iter().zip(&flats) {
        verify(input, flat, 1, &mut notes);
    }

    let mut h = Harness {
        c: &mut c,
        s: &s,
        manual: HashMap::new(),
        ran: HashSet::new(),
        probes: HashMap::new(),
        times: HashMap::new(),
        notes,
    };
    let mut rows = Vec::new();
    let started = Instant::now();
    for (input, flat) in inputs.iter().zip(&flats) {
        for &level in &s.levels {
            bench_row(&mut h, input, flat, level);
            rows.push((input.name.clone(), level, mesh_faces(&input.data.mesh, level)));
        }
    }
    summary(&h, &rows);
    if !s.smoke {
        memory(&h, &inputs, &s.levels);
    }
    if !h.notes.is_empty() {
        println!("== notes");
        for n in &h.notes {
            println!("{n}");
        }
    }
    println!("catmark bench: {:.0} s", started.elapsed().as_secs_f64());
    c.final_summary();
}
