//! Face-varying refinement (texture coordinates) next to vertex refinement,
//! subla against OpenSubdiv 3.7 (C++) in the same run, with the cargo
//! feature `opensubdiv-petite` of `subla-bench` (OpenSubdiv through a shim
//! of its `PrimvarRefiner`, `cpp/osd_fvar.cpp`; the `opensubdiv-petite`
//! wrapper itself does not expose face-varying interpolation).
//!
//! ```text
//! cargo bench -p subla-bench --bench fvar [--features opensubdiv-petite]
//! ```
//!
//! Inputs: every `*.obj` of `$SUBLA_MESHES` (default `data/meshes/paper/`)
//! whose texture coordinates are a layout (at least one value per four
//! vertices; files with a placeholder of a few `vt` are skipped with a
//! note), Catmull-Clark, mode `$SUBLA_BENCH_FVAR` (default
//! `cornersplus1`, the mode of USD and of OBJ exporters), levels
//! `$SUBLA_BENCH_LEVELS` (default 2,3,4), meshes `$SUBLA_BENCH_MESHES`
//! (names, default all). Data: 2 channels of `f64` per
//! value (a `vt`) and per vertex. Each row is the best of at least
//! `$SUBLA_BENCH_RUNS` (default 7) runs and of as many as fit in one
//! second, or fewer where they pass 20 s.
//!
//! | row | subla | OpenSubdiv |
//! |---|---|---|
//! | `fvar build` | `subla_catmark::fvar::build` (vertex levels, the channel's topology and its operators) | `TopologyRefinerFactory::Create` with the channel + `RefineUniform` |
//! | `vertex build` | `CatmarkEdgeFriend::build` | the same without the channel |
//! | `fvar eval` | `FVarPlan::eval_levels` (one SpMV per level, into every level's buffer) | `PrimvarRefinerReal<double>::InterpolateFaceVarying` per level |
//! | `vertex eval` | `EdgeFriendPlan::eval_f64` (into one buffer) |
//! | `vm build` | `fvar::value_mesh_refinement`: the tagged value mesh and the edge-friend plan over it (the fast path, where the value mesh is exact) | (compared with `fvar build`) |
//! | `vm eval` | that plan's `eval_f64` of the value mesh's control values (into one buffer) | | `PrimvarRefinerReal<double>::Interpolate` per level |
//!
//! subla runs with one thread and with all; OpenSubdiv's `PrimvarRefiner`
//! is serial. Before timing, the finest values of subla and OpenSubdiv are
//! compared corner by corner (both number faces the same way), and the
//! value-mesh path's with the plan's. The summary
//! gives each row's ratio (OpenSubdiv / subla, all threads) and the cost of
//! face-varying against vertex refinement per refined value.

use std::path::{Path, PathBuf};

use ndarray::Array2;
use subla_algebra::Par;
use subla_catmark::CatmarkEdgeFriend;
use subla_catmark::fvar::{FVarPlan, QuadScheme};
use subla_mesh::obj::read_obj;
use subla_mesh::{FVarLinearInterpolation, MeshData, Validation};
use subla_scheme::fvar::ValueMeshRefinement;
use subla_scheme::{Plan, Refiner};

const ROW_SECONDS: f64 = 20.0;
/// Rows run at least this long (more runs than asked for where they are
/// short), so that the best time of a short row is not an outlier's.
const MIN_SECONDS: f64 = 1.0;

struct Settings {
    smoke: bool,
    levels: Vec<u32>,
    runs: usize,
    mode: FVarLinearInterpolation,
    threads: usize,
    meshes: Option<Vec<String>>,
}

impl Settings {
    fn from_env() -> Settings {
        let smoke = !std::env::args().any(|a| a == "--bench");
        let mut levels = if smoke { vec![1] } else { vec![2, 3, 4] };
        if let Ok(v) = std::env::var("SUBLA_BENCH_LEVELS") {
            levels = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        }
        let runs = std::env::var("SUBLA_BENCH_RUNS").ok().and_then(|v| v.trim().parse().ok());
        let mode = std::env::var("SUBLA_BENCH_FVAR").ok().map_or(FVarLinearInterpolation::CornersPlus1, |v| {
            match v.to_ascii_lowercase().as_str() {
                "none" => FVarLinearInterpolation::None,
                "cornersonly" => FVarLinearInterpolation::CornersOnly,
                "cornersplus2" => FVarLinearInterpolation::CornersPlus2,
                "boundaries" => FVarLinearInterpolation::Boundaries,
                "all" => FVarLinearInterpolation::All,
                _ => FVarLinearInterpolation::CornersPlus1,
            }
        });
        Settings {
            smoke,
            levels,
            runs: runs.unwrap_or(if smoke { 1 } else { 7 }).max(1),
            mode,
            threads: rayon::current_num_threads(),
            meshes: std::env::var("SUBLA_BENCH_MESHES")
                .ok()
                .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()),
        }
    }
}

struct Input {
    name: String,
    data: MeshData,
    uv: Array2<f64>,
    indices: Vec<u32>,
}

fn mesh_dir() -> PathBuf {
    match std::env::var_os("SUBLA_MESHES") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/paper"),
    }
}

fn load_inputs(s: &Settings, notes: &mut Vec<String>) -> Vec<Input> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(mesh_dir())
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("obj")));
    files.sort();
    let mut inputs = Vec::new();
    for path in files {
        let name = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        if s.meshes.as_ref().is_some_and(|keep| !keep.contains(&name)) {
            continue;
        }
        let data = match read_obj(&path, Validation::OpenSubdiv) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!("{name}: skipped: {e}"));
                continue;
            }
        };
        let Some(tc) = &data.texcoords else {
            notes.push(format!("{name}: skipped: no texture coordinates on every face"));
            continue;
        };
        if tc.values.nrows() * 4 < data.mesh.num_vertices() {
            notes.push(format!(
                "{name}: skipped: {} texture coordinates for {} vertices (a placeholder, not a layout)",
                tc.values.nrows(),
                data.mesh.num_vertices()
            ));
            continue;
        }
        let uv = tc.values.slice(ndarray::s![.., 0..2]).to_owned();
        let indices = tc.indices.clone();
        inputs.push(Input { name, data, uv, indices });
        if s.smoke {
            break;
        }
    }
    inputs
}

/// One (mesh, level) group's times, in seconds, by row and implementation.
#[derive(Default)]
struct Group {
    label: String,
    values: usize,
    vertices: usize,
    cells: Vec<(&'static str, &'static str, f64)>,
}

impl Group {
    fn get(&self, row: &str, who: &str) -> Option<f64> {
        self.cells.iter().find(|c| c.0 == row && c.1 == who).map(|c| c.2)
    }
}

struct Bench<'a> {
    s: &'a Settings,
    groups: Vec<Group>,
    notes: Vec<String>,
}

impl Bench<'_> {
    fn time<R>(&mut self, row: &'static str, who: &'static str, f: impl FnMut() -> Result<R, String>) -> Option<R> {
        let g = self.groups.last_mut().expect("a group");
        match subla_bench::best_of(self.s.runs, if self.s.smoke { 0.0 } else { MIN_SECONDS }, ROW_SECONDS, f) {
            Ok((secs, _, r)) => {
                println!("{} {row} {who}: {:.3} ms", g.label, secs * 1e3);
                g.cells.push((row, who, secs));
                Some(r)
            }
            Err(e) => {
                let n = format!("{} {row} {who}: failed: {e}", g.label);
                println!("{n}");
                self.notes.push(n);
                None
            }
        }
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    subla_bench::pool(threads)
}

fn bench_level(b: &mut Bench<'_>, input: &Input, level: u32) {
    let mesh = &input.data.mesh;
    let mode = b.s.mode;
    let vertex_data: Array2<f64> = input.data.vertices.slice(ndarray::s![.., 0..2]).to_owned();
    b.groups.push(Group { label: format!("{} L{level}", input.name), ..Group::default() });
    let one = pool(1);
    let build =
        |par| subla_catmark::fvar::build(mesh, &input.indices, input.uv.nrows(), level, mode, QuadScheme::Catmark, par);
    let Some(plan): Option<FVarPlan> = b.time("fvar build", "subla", || build(Par::Rayon).map_err(err)) else { return };
    b.time("fvar build", "subla 1t", || one.install(|| build(Par::Seq)).map_err(err));
    let ef = CatmarkEdgeFriend::new();
    let Some(vplan) = b.time("vertex build", "subla", || ef.build(mesh, level, Par::Rayon).map_err(err)) else {
        return;
    };
    b.time("vertex build", "subla 1t", || one.install(|| ef.build(mesh, level, Par::Seq)).map_err(err));
    let (values, vertices) = (plan.output_len(), vplan.output_len());
    {
        let g = b.groups.last_mut().expect("a group");
        g.values = values;
        g.vertices = vertices;
    }
    // Buffers allocated once, as OpenSubdiv's are.
    let Ok(mut buffers) = plan.level_buffers::<f64>(2) else { return };
    let mut eval = |par| plan.eval_levels(input.uv.view(), &mut buffers, par).map_err(err);
    b.time("fvar eval", "subla", || eval(Par::Rayon));
    b.time("fvar eval", "subla 1t", || one.install(|| eval(Par::Seq)));
    let ours = buffers.finest().map(|v| v.to_owned());
    let mut vout = Array2::<f64>::zeros((vertices, 2));
    let mut veval = |par| vplan.eval_f64(vertex_data.view(), vout.view_mut(), par).map_err(err);
    b.time("vertex eval", "subla", || veval(Par::Rayon));
    b.time("vertex eval", "subla 1t", || one.install(|| veval(Par::Seq)));
    let vours = Some(vout);
    // The fast path: the tagged value mesh refined by the edge-friend plan
    // (where the value mesh is exact), checked corner by corner against
    // the plan.
    let vm_build = || {
        subla_catmark::fvar::value_mesh_refinement(
            mesh,
            &input.indices,
            input.uv.nrows(),
            level,
            mode,
            QuadScheme::Catmark,
            Par::Rayon,
        )
        .map_err(err)?
        .ok_or_else(|| "the value mesh only approximates this channel".to_string())
    };
    if let Some(fast) = b.time("vm build", "subla", vm_build) {
        check_fast(b, &fast, &plan, input, level);
        let plan = fast.plan();
        let x = fast.control_values(input.uv.view());
        let mut out = Array2::<f64>::zeros((plan.output_len(), 2));
        b.time("vm eval", "subla", || plan.eval_f64(x.view(), out.view_mut(), Par::Rayon).map_err(err));
    }
    #[cfg(feature = "opensubdiv-petite")]
    osd::bench(b, input, level, &plan, ours.as_ref(), vours.as_ref(), &vertex_data);
    #[cfg(not(feature = "opensubdiv-petite"))]
    let _ = (ours, vours);
}

/// The fast path's finest corners against the plan's.
fn check_fast(b: &mut Bench<'_>, fast: &ValueMeshRefinement, plan: &FVarPlan, input: &Input, level: u32) {
    let label = format!("{} L{level}", input.name);
    let (Ok(got), Ok(want)) = (fast.refine(input.uv.view(), Par::Rayon), plan.refine(input.uv.view(), Par::Rayon))
    else {
        b.notes.push(format!("{label}: the value-mesh path or the plan failed to refine"));
        return;
    };
    if got.indices.len() != want.indices.len() {
        b.notes.push(format!(
            "{label}: the value-mesh path has {} corners, the plan {}",
            got.indices.len(),
            want.indices.len()
        ));
        return;
    }
    let worst = got
        .indices
        .iter()
        .zip(&want.indices)
        .flat_map(|(&a, &w)| (0..2).map(move |k| (a as usize, w as usize, k)))
        .map(|(a, w, k)| (got.values[(a, k)] - want.values[(w, k)]).abs())
        .fold(0.0, f64::max);
    println!("{label}: value-mesh path against the plan, largest corner difference {worst:.2e}");
    if worst > 1e-9 {
        b.notes.push(format!("{label}: the value-mesh path differs from the plan by {worst:.2e}"));
    }
}

#[cfg(feature = "opensubdiv-petite")]
mod osd {
    use super::*;
    use subla_bench::osd_fvar::{OsdChannel, OsdFVar, OsdScheme};
    use subla_bench::petite::OsdMesh;

    pub(super) fn bench(
        b: &mut Bench<'_>,
        input: &Input,
        level: u32,
        plan: &FVarPlan,
        ours: Option<&Array2<f64>>,
        vours: Option<&Array2<f64>>,
        vertex_data: &Array2<f64>,
    ) {
        let m = OsdMesh::new(&input.data.mesh);
        let t = m.topology();
        let channel = OsdChannel { num_values: input.uv.nrows(), indices: &input.indices, mode: b.s.mode };
        let Some(mut h) =
            b.time("fvar build", "OpenSubdiv", || OsdFVar::new(&t, OsdScheme::Catmark, Some(channel), level))
        else {
            return;
        };
        b.time("vertex build", "OpenSubdiv", || OsdFVar::new(&t, OsdScheme::Catmark, None, level));
        if let Err(e) = h.alloc() {
            b.notes.push(format!("{} OpenSubdiv: {e}", input.name));
            return;
        }
        let uv: Vec<[f64; 2]> = input.uv.rows().into_iter().map(|r| [r[0], r[1]]).collect();
        let vx: Vec<[f64; 2]> = vertex_data.rows().into_iter().map(|r| [r[0], r[1]]).collect();
        let mut out = Vec::new();
        if b.time("fvar eval", "OpenSubdiv", || h.interpolate(&uv, &mut out)).is_some() {
            check(b, input, level, plan, ours, &h, &out);
        }
        let mut vout = Vec::new();
        b.time("vertex eval", "OpenSubdiv", || h.interpolate_vertex(&vx, &mut vout));
        if let Some(v) = vours
            && v.nrows() != vout.len()
        {
            b.notes.push(format!("{} L{level}: {} vertices, OpenSubdiv {}", input.name, v.nrows(), vout.len()));
        }
    }

    /// Each finest corner's value, subla's against OpenSubdiv's.
    fn check(
        b: &mut Bench<'_>,
        input: &Input,
        level: u32,
        plan: &FVarPlan,
        ours: Option<&Array2<f64>>,
        h: &OsdFVar,
        theirs: &[[f64; 2]],
    ) {
        let Some(ours) = ours else { return };
        let label = format!("{} L{level}", input.name);
        let theirs_at = match h.finest_indices() {
            Ok(i) => i,
            Err(e) => {
                b.notes.push(format!("{label}: OpenSubdiv's corners: {e}"));
                return;
            }
        };
        let ours_at = plan.indices(level);
        if ours_at.len() != theirs_at.len() || ours.nrows() != theirs.len() {
            b.notes.push(format!(
                "{label}: subla has {} corners and {} values, OpenSubdiv {} and {}",
                ours_at.len(),
                ours.nrows(),
                theirs_at.len(),
                theirs.len()
            ));
            return;
        }
        // Both number a face's children by its corners, but OpenSubdiv
        // rotates a quad's child `j` so that its vertex's child is at corner
        // `j` (subla: at corner 0), and the next level's children follow
        // that rotation. Follow each face down the levels as (OpenSubdiv's
        // face, rotation), then compare its corners at the rotation.
        let mut map: Vec<(usize, usize)> = (0..plan.vertex_mesh(0).num_faces()).map(|f| (f, 0)).collect();
        for l in 0..level {
            let fp = plan.vertex_mesh(l).topology().face_ptr();
            let mut next = vec![(0, 0); plan.vertex_mesh(l + 1).num_faces()];
            for (f, &(g, r)) in map.iter().enumerate() {
                let n = (fp[f + 1] - fp[f]) as usize;
                // OpenSubdiv's face `g` has `n` corners as well; its
                // children start at its first corner's index (level 0: the
                // same faces; later levels: quads only).
                let start = if l == 0 { fp[g] as usize } else { 4 * g };
                for c in 0..n {
                    let j = (c + r) % n;
                    next[fp[f] as usize + c] = (start + j, if n == 4 { j } else { 0 });
                }
            }
            map = next;
        }
        let fp = plan.vertex_mesh(level).topology().face_ptr();
        let mut worst = 0.0f64;
        for (f, &(g, r)) in map.iter().enumerate() {
            let (a, n) = (fp[f] as usize, (fp[f + 1] - fp[f]) as usize);
            let b0 = if level == 0 { fp[g] as usize } else { 4 * g };
            for c in 0..n {
                let o = ours.row(ours_at[a + c] as usize);
                let p = theirs[theirs_at[b0 + (c + r) % n] as usize];
                worst = worst.max((o[0] - p[0]).abs()).max((o[1] - p[1]).abs());
            }
        }
        let line = format!("{label}: finest corner values, largest difference from OpenSubdiv {worst:.2e}");
        println!("{line}");
        if worst > 1e-9 {
            b.notes.push(format!("{line} (over 1e-9)"));
        }
    }
}

fn summary(b: &Bench<'_>) {
    println!("\n== face-varying bench: mode {:?}, {} threads, best of {} runs", b.s.mode, b.s.threads, b.s.runs);
    println!(
        "| mesh, level | values | fvar eval subla (1t) | OpenSubdiv | ratio | vertex eval subla | OpenSubdiv | ns/value fvar : vertex | fvar build subla | OpenSubdiv | ratio | value-mesh build | ratio | value-mesh eval |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let ms = |t: Option<f64>| t.map_or_else(|| "–".to_string(), |t| format!("{:.2}", t * 1e3));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}×", a / b),
        _ => "–".to_string(),
    };
    for g in &b.groups {
        let fe = g.get("fvar eval", "subla");
        let ve = g.get("vertex eval", "subla");
        let per = match (fe, ve) {
            (Some(f), Some(v)) => {
                format!("{:.2} : {:.2}", f * 1e9 / g.values.max(1) as f64, v * 1e9 / g.vertices.max(1) as f64)
            }
            _ => "–".to_string(),
        };
        println!(
            "| {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            g.label,
            g.values,
            ms(fe),
            ms(g.get("fvar eval", "subla 1t")),
            ms(g.get("fvar eval", "OpenSubdiv")),
            ratio(g.get("fvar eval", "OpenSubdiv"), fe),
            ms(ve),
            ms(g.get("vertex eval", "OpenSubdiv")),
            per,
            ms(g.get("fvar build", "subla")),
            ms(g.get("fvar build", "OpenSubdiv")),
            ratio(g.get("fvar build", "OpenSubdiv"), g.get("fvar build", "subla")),
            ms(g.get("vm build", "subla")),
            ratio(g.get("fvar build", "OpenSubdiv"), g.get("vm build", "subla")),
            ms(g.get("vm eval", "subla")),
        );
    }
    if !b.notes.is_empty() {
        println!("\n== notes");
        for n in &b.notes {
            println!("{n}");
        }
    }
}

fn main() {
    let s = Settings::from_env();
    let mut notes = Vec::new();
    let inputs = load_inputs(&s, &mut notes);
    println!(
        "face-varying bench: {} inputs, levels {:?}, {} threads{}",
        inputs.len(),
        s.levels,
        s.threads,
        if cfg!(feature = "opensubdiv-petite") { ", with OpenSubdiv C++ (the PrimvarRefiner shim)" } else { "" }
    );
    let mut b = Bench { s: &s, groups: Vec::new(), notes };
    for input in &inputs {
        for &level in &s.levels {
            bench_level(&mut b, input, level);
        }
    }
    summary(&b);
}
