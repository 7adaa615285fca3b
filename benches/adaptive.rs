//! Feature-adaptive Catmull-Clark and Loop, subla against its peers in the same run:
//! `opensubdiv-rs` 0.5 (pure Rust) and OpenSubdiv 3.7 (C++) through
//! `opensubdiv-petite` 0.3 with the cargo feature `opensubdiv-petite` of
//! `subla-bench`.
//!
//! ```text
//! cargo bench -p subla-bench --bench adaptive [--features opensubdiv-petite]
//! SUBLA_BENCH_QUICK=1 cargo bench -p subla-bench --bench adaptive   # smoke run
//! ```
//!
//! Inputs: every `*.obj` of `$SUBLA_MESHES` (default `data/meshes/paper/`)
//! and `torus317d`, a generated closed torus of 317 × 317 = 100,489 quads
//! with about 2 % extraordinary vertices (valence 3 and 5,
//! [`subla_bench::quad_torus_with_defects`]), at isolation levels 2 and 3
//! with Gregory end caps. Loop (triangles, quartic box-spline patches and
//! OpenSubdiv's triangular end caps): the Stanford bunny of
//! `data/meshes/misc/` (3,674 triangles) and `tritorus317d`, `torus317d`
//! with each quad split into two triangles along one diagonal (200,978
//! triangles; the regular vertices get valence 6, those near the defects
//! other valences). opensubdiv-rs is compared on Catmull-Clark only.
//! Environment: `SUBLA_BENCH_QUICK=1` (Bigguy alone,
//! isolation 3, 100,000 samples), `SUBLA_BENCH_MESHES=Bigguy,torus317d`
//! (keep these inputs, by name), `SUBLA_BENCH_ISOLATION=3` (keep these
//! levels), `SUBLA_BENCH_SAMPLES=N` (samples per mesh, default 1,000,000),
//! `SUBLA_BENCH_RUNS=N` (most runs per row, default 5; each row stops
//! after 20 s), `SUBLA_BENCH_STENCILS=0` (leave out the limit-stencil rows),
//! `SUBLA_BENCH_PEERS=0` (subla alone, as under a profiler),
//! `SUBLA_BENCH_ENDCAP=bspline` (B-spline basis end caps for subla and
//! OpenSubdiv C++ instead of Gregory basis ones; opensubdiv-rs 0.5 has
//! Gregory basis end caps only, so it is not compared then).
//!
//! What each row times, per (mesh, isolation level):
//!
//! | row | subla | opensubdiv-rs | OpenSubdiv (C++) |
//! |---|---|---|---|
//! | `build` | `SparseRefinement::build` + `PatchTable::new` on a built `Mesh` | factory + `refine_adaptive` + `PatchTableFactory::create` | through petite: `TopologyRefiner::new` + `RefineAdaptive` + `PatchTableFactory::Create` (the same end caps as subla's) |
//! | `build_faces` | the same from face lists (`MeshBuilder::build` first, as the peers start from face lists) | – | – |
//! | `eval` | `PatchTable::evaluate` (levels' points, end caps' points, position + d/du + d/dv, f64) | `PrimvarRefiner::interpolate_all` + `PatchMap::new` + `PatchMap::find_patch` + `PatchTable::evaluate` per sample (f32 weights, f64 data) | `PrimvarRefinerReal<double>::Interpolate` per level + local points (`UpdateValues` of the double local point stencil table) + `PatchMap::FindPatch` + `PatchTable::EvaluateBasis` + sums over `GetPatchVertices` per sample (double throughout; serial) |
//! | `frame` | the same samples as a frame loop: `PatchTable::points_into` + `evaluate_points_into` into the last frame's points and outputs | – | the shim's loop into the last frame's points and outputs |
//! | `stencils` | `PatchTable::limit_matrices` + applying them to xyz | – | through petite: `LimitStencilTableFactory::Create` with the patch table + applying it to xyz (f32) |
//!
//! Every `eval` cell allocates its outputs inside the timer, as subla's
//! `evaluate` does; every `frame` cell reuses the buffers of the run
//! before (an animation evaluating the same samples every frame). OpenSubdiv's `eval` cell is its own loop, as its Far
//! tutorials write it, in a C++ shim of this crate
//! (`subla_bench::osd_eval`, `crates/bench/cpp/osd_eval.cpp`): the shim
//! builds its refiner, patch table (same options and end caps as the
//! `build` row, double precision local point stencils) and `PatchMap`
//! outside the timer, once per (mesh, level); their times are printed
//! apart. (opensubdiv-petite 0.3 binds `PatchMap::FindPatch`, but its
//! `PatchTable_EvaluateBasis` is a placeholder, hence the shim.) The
//! samples' ptex faces and parameters are handed over as arrays made
//! before the timer.
//!
//! petite 0.3's `EndCapType` is numbered one off from OpenSubdiv's
//! `Options::EndCapType` (its `GregoryBasis` reaches C++ as
//! `ENDCAP_BSPLINE_BASIS`, its `LegacyGregory` as `ENDCAP_GREGORY_BASIS`),
//! so the end caps are asked for by OpenSubdiv's number, and the built
//! table's end-cap patches are checked to have the control point count of
//! the kind asked for (20 for Gregory basis, 16 for B-spline basis; Loop: 18 and 12).
//!
//! The samples are the same for everyone: `N` points spread evenly over the
//! ptex faces (in order), `(u, v)` from a fixed hash and exact in `f32`
//! (inside the triangle for Loop).
//! Each peer's limit positions and derivatives (from its timed runs) are
//! compared with subla's at every sample. The build is serial everywhere; subla's
//! evaluation runs on 1 and on all threads, the peers' on one. Times are
//! the best of the runs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarray::Array2;
use subla::adaptive::{Limit, PatchTable, Sample, Scheme};
use subla_algebra::Par;
use subla_bench::{pool, quad_torus_with_defects};
use subla_mesh::{MeshBuilder, MeshData, Options, Validation};

#[cfg(feature = "opensubdiv-petite")]
use subla_bench::osd_eval::{OsdEval, OsdLimit};

/// Targets: subla's build at least this many times faster than the fastest
/// peer...
const BUILD_TARGET: f64 = 10.0;
/// ... and its evaluation this many times.
const EVAL_TARGET: f64 = 3.0;
/// A row stops repeating once its runs took this long.
const ROW_SECONDS: f64 = 20.0;

// ---------------------------------------------------------------------------
// Settings and inputs

struct Settings {
    quick: bool,
    /// Not run by `cargo bench` (e.g. `cargo test --benches`): one tiny row.
    smoke: bool,
    isolations: Vec<u32>,
    meshes: Option<Vec<String>>,
    samples: usize,
    runs: usize,
    stencils: bool,
    /// Run the peers (off: subla alone, e.g. under a profiler).
    peers: bool,
    /// Gregory basis end caps (else B-spline basis ones).
    gregory: bool,
    threads: usize,
}

fn env_flag(name: &str) -> Option<bool> {
    std::env::var(name).ok().map(|v| !v.is_empty() && v != "0")
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().replace('_', "").parse().ok())
}

impl Settings {
    fn from_env() -> Settings {
        let smoke = !std::env::args().any(|a| a == "--bench");
        let quick = smoke || env_flag("SUBLA_BENCH_QUICK").unwrap_or(false);
        let mut isolations: Vec<u32> = if quick { vec![3] } else { vec![2, 3] };
        if let Ok(v) = std::env::var("SUBLA_BENCH_ISOLATION") {
            isolations = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        }
        let meshes = std::env::var("SUBLA_BENCH_MESHES")
            .ok()
            .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
        let default_samples = if smoke {
            10_000
        } else if quick {
            100_000
        } else {
            1_000_000
        };
        Settings {
            quick,
            smoke,
            isolations,
            meshes,
            samples: env_usize("SUBLA_BENCH_SAMPLES").unwrap_or(default_samples),
            runs: env_usize("SUBLA_BENCH_RUNS").unwrap_or(if smoke { 1 } else { 5 }).max(1),
            stencils: env_flag("SUBLA_BENCH_STENCILS").unwrap_or(true),
            peers: env_flag("SUBLA_BENCH_PEERS").unwrap_or(true),
            gregory: !std::env::var("SUBLA_BENCH_ENDCAP").is_ok_and(|v| v.eq_ignore_ascii_case("bspline")),
            threads: rayon::current_num_threads(),
        }
    }
}

struct Input {
    name: String,
    data: MeshData,
    scheme: Scheme,
}

fn mesh_dir() -> PathBuf {
    match std::env::var_os("SUBLA_MESHES") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/paper"),
    }
}

fn load_inputs(s: &Settings) -> Vec<Input> {
    if s.smoke {
        return vec![
            Input { name: "torus40d".into(), data: quad_torus_with_defects(40, 40, 5), scheme: Scheme::Catmark },
            Input {
                name: "tritorus40d".into(),
                data: triangulated(quad_torus_with_defects(40, 40, 5)),
                scheme: Scheme::Loop,
            },
        ];
    }
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
    let wanted = |name: &str| s.meshes.as_ref().is_none_or(|keep| keep.iter().any(|k| k == name));
    let mut inputs = Vec::new();
    for path in files {
        let name = path.file_stem().map_or_else(|| "mesh".into(), |n| n.to_string_lossy().into_owned());
        if !wanted(&name) || (s.quick && name != "Bigguy") {
            continue;
        }
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
                inputs.push(Input { name, data, scheme: Scheme::Catmark });
            }
            Err(e) => println!("note: skipping {}: {e}", path.display()),
        }
    }
    if !s.quick && wanted("torus317d") {
        inputs.push(Input {
            name: "torus317d".into(),
            data: quad_torus_with_defects(317, 317, 7),
            scheme: Scheme::Catmark,
        });
    }
    if !s.quick && wanted("bunny") {
        let path = dir.join("../misc/bunny.obj");
        match subla_mesh::obj::read_obj(&path, Validation::OpenSubdiv) {
            Ok(data) => inputs.push(Input { name: "bunny".into(), data, scheme: Scheme::Loop }),
            Err(e) => println!("note: skipping {}: {e}", path.display()),
        }
    }
    if !s.quick && wanted("tritorus317d") {
        let data = triangulated(quad_torus_with_defects(317, 317, 7));
        inputs.push(Input { name: "tritorus317d".into(), data, scheme: Scheme::Loop });
    }
    inputs
}

/// `quads` with each quad `a b c d` split into `a b c` and `a c d`.
fn triangulated(quads: MeshData) -> MeshData {
    let t = quads.mesh.topology();
    let mut verts = Vec::with_capacity(t.face_verts().len() * 3 / 2);
    for f in 0..t.num_faces() {
        let q = t.face(f);
        verts.extend([q[0], q[1], q[2], q[0], q[2], q[3]]);
    }
    let ptr = (0..=verts.len() as u32 / 3).map(|f| 3 * f).collect();
    let mesh = MeshBuilder::new(quads.mesh.num_vertices(), ptr, verts)
        .build(Par::Seq)
        .expect("a triangulated closed torus is a valid mesh");
    MeshData { mesh, texcoords: None, normals: None, groups: Vec::new(), ..quads }
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
    holes: Vec<u32>,
    options: Options,
    ctrl: Vec<[f64; 3]>,
    /// Vertices with a valence other than 4 (interior) or 3 (boundary), 6
    /// or 4 for Loop.
    extraordinary: usize,
}

impl Flat {
    fn new(data: &MeshData, scheme: Scheme) -> Flat {
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
        let (interior, boundary) = if scheme == Scheme::Loop { (6, 4) } else { (4, 3) };
        let extraordinary = (0..t.num_vertices())
            .filter(|&v| {
                let edges = t.vertex_edges(v).len();
                let faces = t.vertex_corners(v).len();
                if edges == faces { edges != interior } else { edges != boundary }
            })
            .count();
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
            holes,
            options: mesh.options(),
            ctrl,
            extraordinary,
        }
    }
}

/// `n` samples spread evenly over `num_ptex` ptex faces, in ptex order,
/// `(u, v)` from a fixed hash, rounded to `f32` so that the peers' `f32`
/// parameters are the same numbers. On `triangles` (Loop's ptex faces), a
/// point beyond the diagonal is reflected into the face (`1 - u`, `1 - v`,
/// exact), so that no patch is evaluated outside its triangle.
fn make_samples(num_ptex: u32, n: usize, triangles: bool) -> Vec<Sample> {
    let unit = |x: u64| {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        f64::from((z >> 40) as u32 as f32 / (1u32 << 24) as f32)
    };
    (0..n)
        .map(|i| {
            let (u, v) = (unit(2 * i as u64), unit(2 * i as u64 + 1));
            let (u, v) = if triangles && u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
            Sample { ptex: ((i as u128 * u128::from(num_ptex)) / n as u128) as u32, u, v }
        })
        .collect()
}

/// Position, d/du and d/dv (xyz) per sample; NaN where no patch covers it.
struct Eval {
    p: Vec<[f64; 3]>,
    du: Vec<[f64; 3]>,
    dv: Vec<[f64; 3]>,
}

impl Eval {
    fn from_limit(l: &Limit<f64>) -> Eval {
        let rows = |a: &Array2<f64>| a.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
        Eval { p: rows(&l.position), du: rows(&l.du), dv: rows(&l.dv) }
    }
}

// ---------------------------------------------------------------------------
// subla

mod ours {
    use subla::adaptive::{EndCap, LimitMatrices, PatchTable, Sample, Scheme, SparseRefinement};
    use subla_algebra::Par;
    use subla_mesh::{Mesh, MeshBuilder, Validation};

    use super::{Eval, Flat};

    pub(super) fn build(mesh: &Mesh, scheme: Scheme, isolation: u32, gregory: bool) -> Result<PatchTable, String> {
        let r = SparseRefinement::build_scheme(scheme, mesh, isolation, None).map_err(|e| e.to_string())?;
        PatchTable::new(r, if gregory { EndCap::GregoryBasis } else { EndCap::BSplineBasis }).map_err(|e| e.to_string())
    }

    /// The control mesh from face lists and tags, as the peers get it.
    pub(super) fn mesh(f: &Flat) -> Result<Mesh, String> {
        let mut ptr = Vec::with_capacity(f.counts.len() + 1);
        ptr.push(0u32);
        for &c in &f.counts {
            ptr.push(ptr[ptr.len() - 1] + c);
        }
        let mut b = MeshBuilder::new(f.nv, ptr, f.verts.clone()).options(f.options).validation(Validation::OpenSubdiv);
        for (&[a, c], &w) in f.crease_pairs.iter().zip(&f.crease_w) {
            b = b.crease(a, c, w);
        }
        for (&v, &w) in f.corner_v.iter().zip(&f.corner_w) {
            b = b.corner(v, w);
        }
        for &h in &f.holes {
            b = b.hole(h);
        }
        b.build(Par::Seq).map_err(|e| e.to_string())
    }

    /// The limit matrices at `samples`, applied to the control points.
    pub(super) fn stencils(t: &PatchTable, ctrl: &[[f64; 3]], samples: &[Sample]) -> Result<Eval, String> {
        let LimitMatrices { p, du, dv, .. } = t.limit_matrices(samples, Par::Seq).map_err(|e| e.to_string())?;
        let apply = |m: &subla_algebra::CsrMat<f64>| -> Vec<[f64; 3]> {
            (0..samples.len())
                .map(|i| {
                    let (cols, ws) = m.row(i);
                    let mut acc = [0.0; 3];
                    for (&c, &w) in cols.iter().zip(ws) {
                        let x = &ctrl[c as usize];
                        for k in 0..3 {
                            acc[k] += w * x[k];
                        }
                    }
                    acc
                })
                .collect()
        };
        Ok(Eval { p: apply(&p), du: apply(&du), dv: apply(&dv) })
    }
}

// ---------------------------------------------------------------------------
// Peers

/// opensubdiv-rs 0.5: a port of OpenSubdiv's Far.
mod osdrs {
    use opensubdiv_rs::far::{
        AdaptiveOptions, PatchMap, PatchTable, PatchTableFactory, PrimvarRefiner, TopologyDescriptor, TopologyRefiner,
        TopologyRefinerFactory,
    };
    use opensubdiv_rs::sdc;
    use subla::adaptive::Sample;
    use subla_mesh::{BoundaryInterpolation, CreaseMethod, TriangleSubdivision};

    use super::{Eval, Flat};

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

    /// Factory, adaptive refinement and the patch table.
    pub(super) fn build(f: &Flat, isolation: u32) -> Result<(TopologyRefiner, PatchTable), String> {
        let d = TopologyDescriptor::new(f.nv, &f.counts_usize, &f.verts)
            .with_creases(&f.crease_pairs, &f.crease_w)
            .with_corners(&f.corner_v, &f.corner_w)
            .with_holes(&f.holes);
        let mut r =
            TopologyRefinerFactory::create(d, sdc::SchemeType::Catmark, options(f)).map_err(|e| e.to_string())?;
        r.refine_adaptive(AdaptiveOptions::new(isolation as usize));
        let t = PatchTableFactory::create(&r).map_err(|e| e.to_string())?;
        Ok((r, t))
    }

    /// Every level's points from the control points, then the patch and
    /// its basis at each sample.
    pub(super) fn eval(r: &TopologyRefiner, t: &PatchTable, ctrl: &[[f64; 3]], samples: &[Sample]) -> Eval {
        let mut all = ctrl.to_vec();
        for level in PrimvarRefiner::new(r).interpolate_all(ctrl) {
            all.extend(level);
        }
        let map = PatchMap::new(t);
        let n = samples.len();
        let mut out = Eval { p: Vec::with_capacity(n), du: Vec::with_capacity(n), dv: Vec::with_capacity(n) };
        for s in samples {
            let (u, v) = (s.u as f32, s.v as f32);
            let (p, du, dv) = match map.find_patch(s.ptex as usize, u, v) {
                Some(patch) => t.evaluate(patch, u, v, &all),
                None => ([f64::NAN; 3], [f64::NAN; 3], [f64::NAN; 3]),
            };
            out.p.push(p);
            out.du.push(du);
            out.dv.push(dv);
        }
        out
    }
}

/// OpenSubdiv 3.7 (C++): through opensubdiv-petite 0.3 (`f32` weights),
/// and its evaluation loop through this crate's shim (`f64`).
#[cfg(feature = "opensubdiv-petite")]
mod petite {
    use opensubdiv_petite::far;
    use subla::adaptive::{Sample, Scheme};
    use subla_bench::osd_eval::{OsdEndCap, OsdEval, OsdLimit, OsdTopology};
    use subla_bench::osd_fvar::OsdScheme;
    pub(super) use subla_bench::petite::patch_sizes;

    use super::{Eval, Flat};

    fn topology(f: &Flat) -> OsdTopology<'_> {
        OsdTopology {
            num_vertices: f.nv,
            face_counts: &f.counts,
            face_verts: &f.verts,
            crease_pairs: &f.crease_flat,
            crease_weights: &f.crease_w,
            corner_vertices: &f.corner_v,
            corner_weights: &f.corner_w,
            holes: &f.holes,
            options: f.options,
        }
    }

    fn end_cap(gregory: bool) -> OsdEndCap {
        if gregory { OsdEndCap::GregoryBasis } else { OsdEndCap::BSplineBasis }
    }

    /// `TopologyRefiner::new`, `RefineAdaptive` (default options but the
    /// level) and `PatchTableFactory::Create` with Gregory basis end caps
    /// (else B-spline basis ones).
    pub(super) fn build(
        f: &Flat,
        scheme: Scheme,
        isolation: u32,
        gregory: bool,
    ) -> Result<(far::TopologyRefiner, far::PatchTable), String> {
        subla_bench::petite::adaptive(&topology(f), osd_scheme(scheme), isolation, end_cap(gregory))
    }

    fn osd_scheme(scheme: Scheme) -> OsdScheme {
        match scheme {
            Scheme::Catmark => OsdScheme::Catmark,
            Scheme::Loop => OsdScheme::Loop,
        }
    }

    /// Limit stencils at the samples (OpenSubdiv finds each sample's patch,
    /// evaluates its basis and composes the weights down to the control
    /// points), applied to the control points. Samples on no patch get no
    /// stencil: an error here, as the inputs have no holes.
    pub(super) fn stencils(
        r: &far::TopologyRefiner,
        t: &far::PatchTable,
        ctrl: &[[f64; 3]],
        samples: &[Sample],
    ) -> Result<Eval, String> {
        let table = subla_bench::petite::limit_stencils(r, t, samples)?;
        let apply = |w: &[f32]| subla_bench::petite::apply_stencils(&table, w, |c| ctrl[c]);
        Ok(Eval { p: apply(table.weights()), du: apply(table.du_weights()), dv: apply(table.dv_weights()) })
    }

    /// The shim's refiner and patch table: the same options as [`build`].
    pub(super) fn eval_setup(f: &Flat, scheme: Scheme, isolation: u32, gregory: bool) -> Result<OsdEval, String> {
        OsdEval::new(&topology(f), osd_scheme(scheme), isolation, end_cap(gregory))
    }

    /// The samples as the shim takes them: ptex faces, u, v.
    pub(super) fn eval_samples(samples: &[Sample]) -> (Vec<i32>, Vec<f64>, Vec<f64>) {
        (
            samples.iter().map(|s| s.ptex as i32).collect(),
            samples.iter().map(|s| s.u).collect(),
            samples.iter().map(|s| s.v).collect(),
        )
    }

    pub(super) fn eval_result(l: OsdLimit) -> Eval {
        Eval { p: l.p, du: l.du, dv: l.dv }
    }
}

// ---------------------------------------------------------------------------
// Timing and checks

/// Largest difference between `ours` and `theirs` over the samples both
/// cover, relative to `scale`, and how many samples one side misses.
fn max_diff(ours: &[[f64; 3]], theirs: &[[f64; 3]], scale: f64) -> (f64, usize) {
    let (w, m, _) = max_diff_at(ours, theirs, scale);
    (w, m)
}

/// As [`max_diff`], with the sample where the difference is largest.
fn max_diff_at(ours: &[[f64; 3]], theirs: &[[f64; 3]], scale: f64) -> (f64, usize, usize) {
    let mut worst = 0.0f64;
    let mut at = 0;
    let mut missing = 0;
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a[0].is_nan() || b[0].is_nan() {
            missing += usize::from(a[0].is_nan() != b[0].is_nan());
            continue;
        }
        let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        if d / scale > worst {
            worst = d / scale;
            at = i;
        }
    }
    (worst, missing, at)
}

fn largest(v: &[[f64; 3]]) -> f64 {
    v.iter().filter(|p| !p[0].is_nan()).map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt()).fold(0.0, f64::max)
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
    ((0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>()).sqrt().max(1e-300)
}

/// Tolerances of the comparison, relative to the bounding-box diagonal
/// (positions) and to the largest derivative (derivatives): the peers keep
/// their basis weights in `f32`.
const POS_TOL: f64 = 1e-5;
const DERIV_TOL: f64 = 1e-4;

/// Compares a peer's limit at every sample with subla's; returns the line
/// to print.
fn check(peer: &str, ours: &Eval, theirs: &Eval, diag: f64, table: &PatchTable, samples: &[Sample]) -> String {
    let (dp, mp, ip) = max_diff_at(&ours.p, &theirs.p, diag);
    let ds = largest(&ours.du).max(largest(&ours.dv)).max(1e-300);
    let (du, _, iu) = max_diff_at(&ours.du, &theirs.du, ds);
    let (dv, _, iv) = max_diff_at(&ours.dv, &theirs.dv, ds);
    let ok = dp <= POS_TOL && du.max(dv) <= DERIV_TOL && mp == 0;
    let at = |i: usize| {
        let s = samples[i];
        let kind = table.find(s.ptex, s.u, s.v).map_or_else(
            |e| e.to_string(),
            |p| {
                let pa = &table.patches()[p];
                format!("{:?} patch, depth {}", pa.ty, pa.param.depth())
            },
        );
        format!("sample {i} (ptex {}, u {}, v {}: {kind})", s.ptex, s.u, s.v)
    };
    let mut line = format!(
        "{peer}: max |Δposition| {dp:.1e} of the bounding-box diagonal, max |Δd/du|, |Δd/dv| {:.1e} of the largest derivative, {mp} samples covered by one side only: {}",
        du.max(dv),
        if ok { "agree" } else { "WARNING: mismatch" }
    );
    if !ok {
        // The largest differences by kind of patch, and for end caps apart
        // from the patch's edges (where the interior points do not reach).
        let mut by_kind: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
        for (i, s) in samples.iter().enumerate() {
            let Ok(p) = table.find(s.ptex, s.u, s.v) else { continue };
            let pa = &table.patches()[p];
            let (x, y) = pa.param.normalize(s.u, s.v);
            let inside = x > 1e-3 && x < 1.0 - 1e-3 && y > 1e-3 && y < 1.0 - 1e-3;
            let key = format!("{:?}{}", pa.ty, if inside { "" } else { " on an edge" });
            let d = |a: &[[f64; 3]], b: &[[f64; 3]]| {
                let (a, b) = (a[i], b[i]);
                ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
            };
            let e = by_kind.entry(key).or_default();
            e.0 = e.0.max(d(&ours.p, &theirs.p) / diag);
            e.1 = e.1.max(d(&ours.du, &theirs.du).max(d(&ours.dv, &theirs.dv)) / ds);
        }
        for (k, (p, d)) in by_kind {
            let _ = write!(line, "; {k}: position {p:.1e}, derivatives {d:.1e}");
        }
        let id = if du >= dv { iu } else { iv };
        let _ = write!(line, "; largest position difference at {}, derivative at {}", at(ip), at(id));
    }
    line
}

// ---------------------------------------------------------------------------
// The benchmark

/// One timed cell.
#[derive(Clone)]
struct Cell {
    who: String,
    secs: f64,
    runs: usize,
}

/// The cells of one (mesh, isolation, row).
struct Line {
    mesh: String,
    isolation: u32,
    row: &'static str,
    cells: Vec<Cell>,
    target: Option<f64>,
}

struct Bench<'a> {
    s: &'a Settings,
    lines: Vec<Line>,
    notes: Vec<String>,
}

impl Bench<'_> {
    /// Times `f`, prints the result, and adds it to the current line.
    fn time<R>(&mut self, who: &str, f: impl FnMut() -> Result<R, String>) -> Option<R> {
        let line = self.lines.last_mut().expect("a line to add to");
        let label = format!("{} iso{} {} {who}", line.mesh, line.isolation, line.row);
        match subla_bench::best_of(self.s.runs, 0.0, ROW_SECONDS, f) {
            Ok((secs, runs, r)) => {
                println!("{label}: {:.3} ms (best of {runs})", secs * 1e3);
                line.cells.push(Cell { who: who.to_string(), secs, runs });
                Some(r)
            }
            Err(e) => {
                let note = format!("{label}: failed: {e}");
                println!("{note}");
                self.notes.push(note);
                None
            }
        }
    }

    fn line(&mut self, mesh: &str, isolation: u32, row: &'static str, target: Option<f64>) {
        self.lines.push(Line { mesh: mesh.to_string(), isolation, row, cells: Vec::new(), target });
    }

    fn note(&mut self, n: String) {
        println!("{n}");
        self.notes.push(n);
    }
}

fn bench_mesh(b: &mut Bench<'_>, input: &Input, flat: &Flat) {
    let s = b.s;
    let threads = s.threads;
    let one = pool(1);
    let all = pool(threads);
    let mesh = &input.data.mesh;
    let control = input.data.positions().to_owned();
    let diag = diagonal(&flat.ctrl);
    println!(
        "\n== {}: {} vertices ({} extraordinary, {:.1} %), {} faces",
        input.name,
        flat.nv,
        flat.extraordinary,
        100.0 * flat.extraordinary as f64 / flat.nv as f64,
        flat.counts.len()
    );
    for &iso in &s.isolations {
        // Build.
        b.line(&input.name, iso, "build", Some(BUILD_TARGET));
        let g = s.gregory;
        let scheme = input.scheme;
        let Some(table) = b.time("subla", || one.install(|| ours::build(mesh, scheme, iso, g))) else { continue };
        b.time("subla_faces", || one.install(|| ours::build(&ours::mesh(flat)?, scheme, iso, g)));
        let rs = if s.peers && g && scheme == Scheme::Catmark {
            b.time("opensubdiv-rs", || osdrs::build(flat, iso))
        } else {
            None
        };
        #[cfg(feature = "opensubdiv-petite")]
        let cpp = if s.peers { b.time("OpenSubdiv", || petite::build(flat, scheme, iso, g)) } else { None };
        let r = table.refinement();
        let mut counts = format!(
            "{} iso{iso}: subla: {} patches ({:?}), levels {:?}",
            input.name,
            table.patches().len(),
            table.counts(),
            r.vertices_per_level()
        );
        if let Some((_, t)) = &rs {
            let _ = write!(counts, "; opensubdiv-rs: {} patches", t.num_patches());
        }
        #[cfg(feature = "opensubdiv-petite")]
        if let Some((_, t)) = &cpp {
            let sizes = petite::patch_sizes(t);
            let _ = write!(counts, "; OpenSubdiv: {} patches (per control point count: {sizes:?})", t.patch_count());
            let end_caps = table.counts().end_caps;
            // A Gregory basis end cap has 20 points, a Loop one (a
            // triangle) 18.
            let gregory_size = if scheme == Scheme::Loop { 18 } else { 20 };
            let gregory = sizes.get(&gregory_size).copied().unwrap_or(0);
            if g && gregory != end_caps || !g && gregory != 0 {
                b.note(format!(
                    "WARNING {} iso{iso}: OpenSubdiv built {gregory} Gregory basis patches, subla {end_caps} {} end caps",
                    input.name,
                    if g { "Gregory basis" } else { "B-spline basis" }
                ));
            }
        }
        println!("{counts}");

        // Evaluation.
        let samples = make_samples(r.num_ptex_faces(), s.samples, scheme == Scheme::Loop);
        b.line(&input.name, iso, "eval", Some(EVAL_TARGET));
        let eval_with = |pool: &rayon::ThreadPool, par: Par| {
            pool.install(|| table.evaluate(control.view(), &samples, par).map_err(|e| e.to_string()))
        };
        let ours_1 = b.time("subla", || eval_with(&one, Par::Seq)).map(|l| Eval::from_limit(&l));
        if threads > 1 {
            let ours_n = b.time(&format!("subla_{threads}threads"), || eval_with(&all, Par::Rayon));
            if let (Some(a), Some(n)) = (&ours_1, ours_n) {
                let (d, _) = max_diff(&a.p, &Eval::from_limit(&n).p, 1.0);
                if d != 0.0 {
                    b.note(format!("WARNING {} iso{iso}: subla on {threads} threads differs by {d:e}", input.name));
                }
            }
        }
        let Some(ours_eval) = ours_1 else { continue };
        if let Some((rr, rt)) = &rs {
            if let Some(theirs) = b.time("opensubdiv-rs", || Ok(osdrs::eval(rr, rt, &flat.ctrl, &samples))) {
                let line = check("opensubdiv-rs", &ours_eval, &theirs, diag, &table, &samples);
                b.note(format!("check {} iso{iso} ({} samples): {line}", input.name, samples.len()));
            }
        }
        #[cfg(feature = "opensubdiv-petite")]
        let osd = if s.peers {
            osd_cpp_eval(b, input, flat, iso, &samples, &ours_eval, &table, cpp.as_ref().map(|c| c.1.patch_count()))
        } else {
            None
        };

        // A frame loop: the same samples again, the last frame's buffers
        // (points and outputs) kept.
        b.line(&input.name, iso, "frame", Some(EVAL_TARGET));
        let shape = (samples.len(), control.ncols());
        let fresh = || Limit {
            position: Array2::zeros(shape),
            du: Array2::zeros(shape),
            dv: Array2::zeros(shape),
            missing: Vec::new(),
        };
        let frame_with = |pool: &rayon::ThreadPool, par: Par, points: &mut Array2<f64>, out: &mut Limit<f64>| {
            pool.install(|| {
                table.points_into(control.view(), par, points.view_mut());
                table.evaluate_points_into(points.view(), &samples, par, out).map_err(|e| e.to_string())
            })
        };
        for (who, pool, par) in [("subla", &one, Par::Seq), ("subla_all", &all, Par::Rayon)] {
            if who != "subla" && threads < 2 {
                continue;
            }
            let who = if who == "subla" { who.to_string() } else { format!("subla_{threads}threads") };
            let (mut points, mut out) = (table.points_of(control.view(), par), fresh());
            // The first frame allocates nothing either: its buffers exist.
            if b.time(&who, || frame_with(pool, par, &mut points, &mut out)).is_some() {
                let (d, _) = max_diff(&ours_eval.p, &Eval::from_limit(&out).p, 1.0);
                if d != 0.0 || out.missing.len() != ours_eval.p.iter().filter(|p| p[0].is_nan()).count() {
                    b.note(format!("WARNING {} iso{iso}: subla's frame loop ({who}) differs by {d:e}", input.name));
                }
            }
        }
        #[cfg(feature = "opensubdiv-petite")]
        if let Some((e, ptex, u, v)) = &osd {
            let n = samples.len();
            let mut out = OsdLimit { p: vec![[0.0; 3]; n], du: vec![[0.0; 3]; n], dv: vec![[0.0; 3]; n], missing: 0 };
            let mut points = Vec::new();
            if b.time("OpenSubdiv", || e.evaluate_into(&flat.ctrl, ptex, u, v, &mut out, &mut points)).is_some() {
                let theirs = petite::eval_result(out);
                let line = check("OpenSubdiv C++ frame loop", &ours_eval, &theirs, diag, &table, &samples);
                b.note(format!("check {} iso{iso} frame ({} samples): {line}", input.name, samples.len()));
            }
        }

        // Limit stencils.
        if !s.stencils {
            continue;
        }
        b.line(&input.name, iso, "stencils", None);
        let ctrl = &flat.ctrl;
        if let Some(st) = b.time("subla", || one.install(|| ours::stencils(&table, ctrl, &samples))) {
            let (d, _) = max_diff(&ours_eval.p, &st.p, diag);
            if d > 1e-12 {
                b.note(format!(
                    "WARNING {} iso{iso}: subla's limit matrices differ from its evaluation by {d:e}",
                    input.name
                ));
            }
        }
        #[cfg(feature = "opensubdiv-petite")]
        if let Some((cr, ct)) = &cpp {
            if let Some(theirs) = b.time("OpenSubdiv", || petite::stencils(cr, ct, ctrl, &samples)) {
                let line = check("OpenSubdiv (petite) limit stencils", &ours_eval, &theirs, diag, &table, &samples);
                b.note(format!("check {} iso{iso} ({} samples): {line}", input.name, samples.len()));
            }
        }
    }
}

/// The shim's evaluator with the samples as it takes them.
#[cfg(feature = "opensubdiv-petite")]
type OsdFrame = (OsdEval, Vec<i32>, Vec<f64>, Vec<f64>);

/// OpenSubdiv's own evaluation loop (the shim): its setup timed once and
/// printed, the loop timed in the `eval` line, and checked against subla;
/// the evaluator and samples returned for the `frame` line.
#[cfg(feature = "opensubdiv-petite")]
#[allow(clippy::too_many_arguments)]
fn osd_cpp_eval(
    b: &mut Bench<'_>,
    input: &Input,
    flat: &Flat,
    iso: u32,
    samples: &[Sample],
    ours: &Eval,
    table: &PatchTable,
    petite_patches: Option<usize>,
) -> Option<OsdFrame> {
    let name = &input.name;
    let t0 = Instant::now();
    let mut e = match petite::eval_setup(flat, input.scheme, iso, b.s.gregory) {
        Ok(e) => e,
        Err(err) => {
            b.note(format!("{name} iso{iso} eval OpenSubdiv: setup failed: {err}"));
            return None;
        }
    };
    let t1 = Instant::now();
    if let Err(err) = e.build_map() {
        b.note(format!("{name} iso{iso} eval OpenSubdiv: {err}"));
        return None;
    }
    println!(
        "{name} iso{iso} eval OpenSubdiv setup (not in the eval time): refiner + RefineAdaptive + PatchTableFactory::Create (double) {:.3} ms, PatchMap {:.3} ms; {} patches",
        (t1 - t0).as_secs_f64() * 1e3,
        t1.elapsed().as_secs_f64() * 1e3,
        e.num_patches()
    );
    if petite_patches.is_some_and(|n| n != e.num_patches()) {
        b.note(format!(
            "WARNING {name} iso{iso}: the evaluation shim's patch table has {} patches, petite's {}",
            e.num_patches(),
            petite_patches.unwrap_or(0)
        ));
    }
    let (ptex, u, v) = petite::eval_samples(samples);
    if let Some(l) = b.time("OpenSubdiv", || e.evaluate(&flat.ctrl, &ptex, &u, &v)) {
        let theirs = petite::eval_result(l);
        let line = check(
            "OpenSubdiv C++ (FindPatch + EvaluateBasis loop)",
            ours,
            &theirs,
            diagonal(&flat.ctrl),
            table,
            samples,
        );
        b.note(format!("check {name} iso{iso} ({} samples): {line}", samples.len()));
    }
    Some((e, ptex, u, v))
}

/// The final table: per line, each side's best time, the ratio of the
/// fastest peer to subla, and whether the target is met.
fn summary(b: &Bench<'_>) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n== adaptive summary: best times in ms; ratio = fastest peer / subla (> 1: subla faster), ratio C++ = OpenSubdiv / subla; subla one thread unless named"
    );
    let _ = writeln!(
        out,
        "{:<12} {:>3} {:<9} {:>12} {:>12} {:>12} {:>14} {:>12} {:>8} {:>8} {:>10}  target",
        "mesh",
        "iso",
        "row",
        "subla",
        "subla Nthr",
        "subla faces",
        "opensubdiv-rs",
        "OpenSubdiv",
        "ratio",
        "ratio N",
        "ratio C++"
    );
    for l in &b.lines {
        let find = |who: &str| l.cells.iter().find(|c| c.who == who).map(|c| c.secs);
        let threaded =
            l.cells.iter().find(|c| c.who.starts_with("subla_") && c.who.ends_with("threads")).map(|c| c.secs);
        let ms = |t: Option<f64>| t.map_or_else(|| "-".to_string(), |t| format!("{:.2}", t * 1e3));
        let peer = ["opensubdiv-rs", "OpenSubdiv"].iter().filter_map(|p| find(p)).fold(f64::INFINITY, f64::min);
        let ours = find("subla");
        let ratio = |t: Option<f64>| match t {
            Some(t) if peer.is_finite() => Some(peer / t),
            _ => None,
        };
        let show = |r: Option<f64>| r.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
        let cpp = find("OpenSubdiv").zip(ours).map(|(c, o)| c / o);
        // The build target is judged on subla from face lists (as the peers
        // start), the evaluation target on one thread.
        let judged = if l.row == "build" { ratio(find("subla_faces")) } else { ratio(ours) };
        let verdict = match (l.target, judged) {
            (Some(t), Some(r)) => format!("{}x: {}", t, if r >= t { "met" } else { "NOT met" }),
            (Some(t), None) => format!("{t}x: no peer"),
            (None, _) => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<12} {:>3} {:<9} {:>12} {:>12} {:>12} {:>14} {:>12} {:>8} {:>8} {:>10}  {verdict}",
            l.mesh,
            l.isolation,
            l.row,
            ms(ours),
            ms(threaded),
            ms(find("subla_faces")),
            ms(find("opensubdiv-rs")),
            ms(find("OpenSubdiv")),
            show(ratio(ours)),
            show(ratio(threaded)),
            show(cpp),
        );
    }
    let runs: Vec<usize> = b.lines.iter().flat_map(|l| l.cells.iter().map(|c| c.runs)).collect();
    let _ = writeln!(
        out,
        "(runs per cell: {}..={}; the build target is judged on `subla faces`, from face lists as the peers start)",
        runs.iter().min().unwrap_or(&0),
        runs.iter().max().unwrap_or(&0)
    );
    println!("{out}");
}

fn main() {
    let s = Settings::from_env();
    let inputs = load_inputs(&s);
    println!(
        "adaptive bench: {} inputs, isolation {:?}, {} end caps, {} samples, {} threads, best of up to {} runs{}{}",
        inputs.len(),
        s.isolations,
        if s.gregory { "Gregory basis" } else { "B-spline basis" },
        s.samples,
        s.threads,
        s.runs,
        if s.quick { ", quick" } else { "" },
        if cfg!(feature = "opensubdiv-petite") { ", with OpenSubdiv C++ (petite and the evaluation shim)" } else { "" },
    );
    let started = Instant::now();
    let mut b = Bench { s: &s, lines: Vec::new(), notes: Vec::new() };
    for input in &inputs {
        let flat = Flat::new(&input.data, input.scheme);
        bench_mesh(&mut b, input, &flat);
    }
    summary(&b);
    if !b.notes.is_empty() {
        println!("== notes");
        for n in &b.notes {
            println!("{n}");
        }
    }
    println!("adaptive bench: {:.0} s", started.elapsed().as_secs_f64());
}
