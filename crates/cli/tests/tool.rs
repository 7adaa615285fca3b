//! End-to-end tests of the tool around `subdivide`: the main job, `render`,
//! `info`, `bench`, the memory budget, `--quiet`, and the README's commands.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh working folder for one test, with `data` linked to the
/// repository's (so relative paths of the README work).
fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("subla-tool-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(repo().join("data"), dir.join("data")).expect("link data");
    dir
}

fn subla_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).current_dir(dir).args(args).output().expect("run subla")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Whether a GPU adapter exists (pictures need one; CI has lavapipe and
/// sets SUBLA_REQUIRE_GPU=1, under which a missing adapter fails).
fn gpu() -> bool {
    subla_gpu::testing::context_or_skip().is_some()
}

/// Decodes a PNG: width, height, RGBA bytes.
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    assert_eq!(info.color_type, png::ColorType::Rgba, "RGBA picture");
    (info.width, info.height, buf)
}

/// A picture with real content: the expected size, an object covering a
/// sane share of it, shaded (more than `colours` distinct colours).
fn check_picture(path: &Path, width: u32, height: u32, colours: usize) {
    let (w, h, px) = decode(path);
    assert_eq!((w, h), (width, height), "{}", path.display());
    let background = &px[..4];
    let pixels: Vec<&[u8]> = px.chunks_exact(4).collect();
    let covered = pixels.iter().filter(|p| *p != &background).count() as f64 / pixels.len() as f64;
    assert!((0.05..0.9).contains(&covered), "{}: {covered} of the picture covered", path.display());
    let distinct: std::collections::HashSet<&[u8]> = pixels.iter().copied().collect();
    assert!(distinct.len() > colours, "{}: only {} colours", path.display(), distinct.len());
}

#[test]
fn the_main_job_writes_obj_png_and_a_table() {
    let dir = workdir("main");
    let out = ok(&subla_in(&dir, &[]));
    assert!(out.contains("| scheme | levels | mode | backend | vertices | faces |"), "{out}");
    assert!(out.contains("| catmark | 3 | static | cpu"), "{out}");
    let obj = dir.join("subla-out/open-box.L3.obj");
    let d = subla_mesh::obj::read_obj(&obj, subla_mesh::Validation::OpenSubdiv).expect("valid OBJ");
    // 24 corners → 24 quads at level 1, ×4 per level; the open top stays open.
    assert_eq!(d.mesh.num_faces(), 24 * 16);
    assert!(d.mesh.topology().is_manifold());
    assert!(d.mesh.topology().edge_tags().iter().any(|&t| t & subla_mesh::topology::edge_tag::BOUNDARY != 0));
    let png = dir.join("subla-out/open-box.L3.png");
    if gpu() {
        assert!(out.contains("wrote subla-out/open-box.L3.png"), "{out}");
        check_picture(&png, 800, 600, 100);
    }
    // --quiet: the same files, nothing on stdout.
    std::fs::remove_dir_all(dir.join("subla-out")).expect("clean");
    let out = ok(&subla_in(&dir, &["--quiet"]));
    assert!(out.is_empty(), "{out}");
    assert!(obj.exists());
}

#[test]
fn subdivide_options_work_on_the_embedded_mesh() {
    let dir = workdir("embedded");
    let out = ok(&subla_in(&dir, &["subdivide", "--scheme", "bilinear", "--levels", "2", "--mode", "modeling"]));
    assert!(out.contains("| bilinear | 2 | modeling |"), "{out}");
    assert!(dir.join("subla-out/open-box.L2.obj").exists());
    // Loop refuses the pentagons, saying so.
    let o = subla_in(&dir, &["subdivide", "--scheme", "loop"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: ") && err.contains("triangle"), "{err}");
}

#[test]
fn render_draws_meshes_and_subdivisions() {
    if !gpu() {
        return;
    }
    let dir = workdir("render");
    let out = ok(&subla_in(
        &dir,
        &[
            "render",
            "data/meshes/osd/catmark_cube_creases0.obj",
            "--levels",
            "2",
            "--cage",
            "--creases",
            "--size",
            "160x120",
            "-o",
            "cube.png",
        ],
    ));
    assert!(out.contains("wrote cube.png (160x120)"), "{out}");
    check_picture(&dir.join("cube.png"), 160, 120, 50);
    // The control mesh alone, default path.
    ok(&subla_in(&dir, &["render", "data/meshes/osd/catmark_cube.obj", "--size", "96x64", "--flat"]));
    // Flat shading: a few face colours and their antialiased edges.
    check_picture(&dir.join("subla-out/catmark_cube.png"), 96, 64, 3);
    // The cage changes the picture.
    ok(&subla_in(&dir, &["render", "--levels", "2", "--size", "96x64", "-o", "a.png"]));
    ok(&subla_in(&dir, &["render", "--levels", "2", "--size", "96x64", "--cage", "-o", "b.png"]));
    assert_ne!(decode(&dir.join("a.png")).2, decode(&dir.join("b.png")).2);
    // A bad size is a usage error.
    let o = subla_in(&dir, &["render", "--size", "0x10"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn info_reports_counts_and_problems() {
    let dir = workdir("info");
    let out = ok(&subla_in(&dir, &["info"]));
    assert!(out.contains("vertices 9, faces 6, edges 14, corners 24"), "{out}");
    assert!(out.contains("face orders: 3: 2, 4: 2, 5: 2"), "{out}");
    assert!(out.contains("creases: 3 semi-sharp"), "{out}");
    assert!(out.contains("no problems found"), "{out}");
    let out = ok(&subla_in(&dir, &["info", "data/meshes/osd/catmark_nonman_quadpole8.obj", "--json"]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(v["manifold"], false);
    assert_eq!(v["non_manifold_vertices"], serde_json::json!([4]));
    assert!(v["strict_validation"].as_str().is_some_and(|s| s.contains("face 1")), "{v}");
    let out = ok(&subla_in(&dir, &["info", "data/meshes/osd/catmark_nonman_quadpole8.obj"]));
    assert!(out.contains("non-manifold vertices (1): 4"), "{out}");
    // Faces that use a vertex twice refine adaptively: OpenSubdiv's patch
    // table of this shape at isolation 3 has 184 patches (the golden's header).
    assert!(out.contains("adaptive refinement (catmark, isolation 3): 3 levels, 184 patches"), "{out}");
    // Bad input: one line naming the file, the line and the face.
    let o = subla_in(&dir, &["info", "data/bad/index_out_of_range.obj"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.trim_end(),
        "error: data/bad/index_out_of_range.obj: line 4: face 0: vertex index 9 out of range (3 vertices)"
    );
}

#[test]
fn bench_prints_a_table() {
    let dir = workdir("bench");
    let out = ok(&subla_in(&dir, &["bench", "--levels", "1,2", "--runs", "1"]));
    assert!(out.contains("| levels | vertices | faces | build ms | eval ms | modeling ms |"), "{out}");
    assert!(out.contains("| 1 | 29 | 24 |") && out.contains("| 2 | 105 | 96 |"), "{out}");
    let out = ok(&subla_in(
        &dir,
        &["bench", "data/meshes/osd/loop_cube.obj", "--scheme", "sqrt3", "--levels", "1", "--runs", "1"],
    ));
    assert!(out.contains("| 1 |"), "{out}");
}

#[test]
fn output_over_the_memory_budget_is_refused_before_work() {
    let dir = workdir("memory");
    let o = subla_in(&dir, &["subdivide", "data/meshes/paper/Bigguy.obj", "--levels", "3", "--max-memory", "1M"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("3 levels would make about 92800 faces") && err.contains("budget is 1 MiB (--max-memory"),
        "{err}"
    );
    assert!(!dir.join("subla-out").exists(), "nothing written");
    // Absurd depths are refused under the default budget too.
    let o = subla_in(&dir, &["subdivide", "--levels", "20"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("available memory"));
}

#[test]
fn matrix_works_on_the_embedded_mesh() {
    let dir = workdir("matrix");
    let out = ok(&subla_in(&dir, &["matrix", "--levels", "2", "-o", "R.mtx"]));
    assert!(out.contains("R.mtx: 105 x 9"), "{out}");
}

/// Every `cargo run --release -- …` command of the README runs (as the
/// built binary, from a folder where the README's relative paths hold).
#[test]
fn readme_commands_run() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let dir = workdir("readme");
    let mut ran = 0;
    for line in readme.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("cargo run --release") else { continue };
        if rest.trim_start().starts_with("--example") || rest.contains("-p ") {
            continue; // examples are run by their own tests
        }
        let args: Vec<&str> = rest.trim_start().strip_prefix("--").unwrap_or(rest).split_whitespace().collect();
        if args.contains(&"gpu") && !gpu() {
            continue;
        }
        if args.first() == Some(&"render") && !gpu() {
            continue; // pictures need an adapter (the main job warns instead)
        }
        let o = subla_in(&dir, &args);
        assert!(o.status.success(), "README command `{line}` failed: {}", String::from_utf8_lossy(&o.stderr));
        ran += 1;
    }
    assert!(ran >= 3, "only {ran} README commands found");
}
