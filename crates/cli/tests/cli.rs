//! End-to-end tests of the `subla` binary.

use std::path::PathBuf;
use std::process::Command;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn subla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("subla-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn read(path: &PathBuf) -> subla_mesh::MeshData {
    subla_mesh::obj::read_obj(path, subla_mesh::Validation::OpenSubdiv).unwrap()
}

fn positions_sorted(d: &subla_mesh::MeshData) -> Vec<[i64; 3]> {
    let mut v: Vec<[i64; 3]> =
        d.positions().rows().into_iter().map(|r| [0, 1, 2].map(|k| (r[k] * 1e9).round() as i64)).collect();
    v.sort();
    v
}

/// The meshes in two files have the same faces, vertex for vertex, and
/// their points differ by less than 1e-5 (`what` names the two).
fn same_faces_and_points(a: &PathBuf, b: &PathBuf, what: &str) {
    let (a, b) = (read(a), read(b));
    assert_eq!(a.mesh.topology().face_verts(), b.mesh.topology().face_verts(), "{what}");
    let diff = a.positions().iter().zip(b.positions().iter()).fold(0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(diff < 1e-5, "{what} differ by {diff}");
}

#[test]
fn subdivide_matches_the_golden_and_prints_timings() {
    let out = tmp("cube2.obj");
    let input = data().join("meshes/osd/catmark_cube_creases0.obj");
    let o = subla(&[
        "subdivide",
        input.to_str().unwrap(),
        "--levels",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--timings",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = String::from_utf8(o.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(json["output_faces"], 96);
    assert!(json["build_ms"].as_f64().unwrap() >= 0.0);
    assert!(json["peak_memory_bytes"].as_u64().unwrap() > 0);
    let ours = read(&out);
    let golden = read(&data().join("golden/catmark/catmark_cube_creases0.L2.obj"));
    assert_eq!(ours.mesh.num_faces(), golden.mesh.num_faces());
    assert_eq!(positions_sorted(&ours), positions_sorted(&golden));
}

#[test]
fn paths_modes_and_precisions_agree() {
    let input = data().join("meshes/osd/catmark_chaikin2.obj");
    let mut results = Vec::new();
    for extra in [
        vec!["--path", "slak"],
        vec!["--path", "lak"],
        vec!["--path", "slak", "--mode", "modeling"],
        vec!["--path", "lak", "--mode", "modeling"],
        vec!["--path", "slak", "--precision", "f32"],
    ] {
        let out = tmp(&format!("chaikin-{}.obj", extra.join("")));
        let mut args = vec!["subdivide", input.to_str().unwrap(), "--levels", "2", "-o", out.to_str().unwrap()];
        args.extend(extra.iter().copied());
        let o = subla(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        results.push((extra, read(&out)));
    }
    let base = &results[0].1;
    for (extra, d) in &results[1..] {
        assert_eq!(d.mesh.topology(), base.mesh.topology(), "{extra:?}");
        let tol = if extra.contains(&"f32") { 1e-5 } else { 1e-12 };
        let diff = d.vertices.iter().zip(base.vertices.iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff < tol, "{extra:?}: differs by {diff}");
    }
}

/// The edge-friend kernels (the default for catmark on the CPU) and the
/// halfedge kernels make the same surface as the specialised kernels, in
/// their own vertex order, in both modes; `--timings json` names the path
/// that ran.
#[test]
fn edge_friend_is_the_default_and_agrees_with_the_kernels() {
    let input = data().join("meshes/osd/catmark_chaikin2.obj");
    let slak = tmp("chaikin-slak.obj");
    let o =
        subla(&["subdivide", input.to_str().unwrap(), "--levels", "3", "--path", "slak", "-o", slak.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let base = read(&slak);
    for extra in [vec![], vec!["--mode", "modeling"], vec!["--path", "edge-friend"], vec!["--path", "halfedge"]] {
        let out = tmp(&format!("chaikin-ef{}.obj", extra.join("")));
        let mut args = vec!["subdivide", input.to_str().unwrap(), "--levels", "3", "-o", out.to_str().unwrap()];
        args.extend(extra.iter().copied());
        args.extend(["--timings", "json"]);
        let o = subla(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let json: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
        let path = if extra.contains(&"halfedge") { "halfedge" } else { "edge-friend" };
        assert_eq!(json["path"], path, "{extra:?}");
        let d = read(&out);
        assert_eq!(d.mesh.num_faces(), base.mesh.num_faces(), "{extra:?}");
        assert_eq!(positions_sorted(&d), positions_sorted(&base), "{extra:?}");
    }
    // Other schemes have no edge-friend path.
    let o = subla(&["subdivide", input.to_str().unwrap(), "--scheme", "bilinear", "--path", "edge-friend"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bilinear has no edge-friend kernels on the cpu"), "{err}");
}

/// The closed-form halfedge kernels (the default for Loop and √3 on the
/// CPU, for meshes without texture coordinates) make the same surface as
/// the specialised kernels, in both modes and with both Loop rule sets;
/// `--timings json` names the path that ran.
#[test]
fn halfedge_is_the_default_for_triangles_and_agrees_with_the_kernels() {
    for (scheme, mesh) in
        [("loop", "loop_chaikin1.obj"), ("loop-cgal", "loop_chaikin1.obj"), ("sqrt3", "loop_icosahedron.obj")]
    {
        // Without texture coordinates (with them, Loop takes its kernels,
        // whose faces the refined coordinates follow).
        let mut plain = read(&data().join("meshes/osd").join(mesh));
        plain.texcoords = None;
        plain.normals = None;
        let input = tmp(&format!("{scheme}-plain.obj"));
        subla_mesh::obj::write_obj_file(&plain, &input).unwrap();
        let slak = tmp(&format!("{scheme}-slak.obj"));
        let o = subla(&[
            "subdivide",
            input.to_str().unwrap(),
            "--scheme",
            scheme,
            "--levels",
            "3",
            "--path",
            "slak",
            "-o",
            slak.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let base = read(&slak);
        for extra in [vec![], vec!["--mode", "modeling"], vec!["--path", "halfedge"]] {
            let out = tmp(&format!("{scheme}-he{}.obj", extra.join("")));
            let mut args = vec![
                "subdivide",
                input.to_str().unwrap(),
                "--scheme",
                scheme,
                "--levels",
                "3",
                "-o",
                out.to_str().unwrap(),
            ];
            args.extend(extra.iter().copied());
            args.extend(["--timings", "json"]);
            let o = subla(&args);
            assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
            let json: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
            assert_eq!(json["path"], "halfedge", "{scheme} {extra:?}");
            let d = read(&out);
            assert_eq!(d.mesh.num_faces(), base.mesh.num_faces(), "{scheme} {extra:?}");
            assert_eq!(positions_sorted(&d), positions_sorted(&base), "{scheme} {extra:?}");
        }
    }
}

/// A control mesh without sharpness or holes is written from the plan's
/// faces, without deriving the refined mesh: the same file, byte for byte,
/// as the full mesh gives (a picture asks for the full mesh), in both
/// modes, for every scheme, OBJ and PLY.
#[test]
fn tagless_output_from_the_faces_equals_the_full_mesh() {
    let input = data().join("meshes/osd/loop_icosahedron.obj");
    for scheme in ["catmark", "loop", "loop-cgal", "sqrt3"] {
        for mode in ["static", "modeling"] {
            for ext in ["obj", "ply"] {
                let (a, b) =
                    (tmp(&format!("faces-{scheme}-{mode}.{ext}")), tmp(&format!("full-{scheme}-{mode}.{ext}")));
                let png = tmp(&format!("full-{scheme}-{mode}-{ext}.png"));
                let args = ["subdivide", input.to_str().unwrap(), "--scheme", scheme, "--levels", "2", "--mode", mode];
                let o = subla(&[&args[..], &["-o", a.to_str().unwrap()]].concat());
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                let o = subla(&[&args[..], &["-o", b.to_str().unwrap(), "--png", png.to_str().unwrap()]].concat());
                if !o.status.success() {
                    let err = String::from_utf8_lossy(&o.stderr);
                    assert!(std::env::var("SUBLA_REQUIRE_GPU").as_deref() != Ok("1"), "GPU required, but: {err}");
                    eprintln!("skipped (no picture): {err}");
                    return;
                }
                let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
                assert!(x == y, "{scheme} {mode} {ext}: the faces-only file differs from the full mesh's");
            }
        }
    }
}

#[test]
fn options_on_the_command_line_override_the_file() {
    let input = data().join("meshes/osd/catmark_edgecorner.obj");
    let a = tmp("edgecorner.obj");
    let b = tmp("edgeonly.obj");
    assert!(subla(&["subdivide", input.to_str().unwrap(), "-o", a.to_str().unwrap()]).status.success());
    assert!(
        subla(&["subdivide", input.to_str().unwrap(), "-o", b.to_str().unwrap(), "--boundary", "edge-only"])
            .status
            .success()
    );
    let golden_ec = read(&data().join("golden/catmark/catmark_edgecorner.L1.obj"));
    assert_eq!(positions_sorted(&read(&a)), positions_sorted(&golden_ec));
    assert_ne!(positions_sorted(&read(&b)), positions_sorted(&golden_ec));
}

#[test]
fn holes_are_left_out_unless_kept() {
    let input = data().join("meshes/osd/catmark_hole_test1.obj");
    let a = tmp("holes.obj");
    let b = tmp("holes-kept.obj");
    assert!(subla(&["subdivide", input.to_str().unwrap(), "-o", a.to_str().unwrap()]).status.success());
    assert!(subla(&["subdivide", input.to_str().unwrap(), "-o", b.to_str().unwrap(), "--keep-holes"]).status.success());
    let golden = read(&data().join("golden/catmark/catmark_hole_test1.L1.obj"));
    let (da, db) = (read(&a), read(&b));
    assert_eq!(da.mesh.num_faces(), golden.mesh.num_faces());
    assert!(db.mesh.num_faces() > da.mesh.num_faces());
    assert!(db.mesh.has_holes());
}

#[test]
fn errors_are_one_line_with_a_non_zero_exit() {
    let out = tmp("never.obj");
    let o = subla(&["subdivide", "/nonexistent/mesh.obj", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.starts_with("error: /nonexistent/mesh.obj:"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let bad = data().join("bad/index_out_of_range.obj");
    let o = subla(&["subdivide", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("line 4: face 0: vertex index 9 out of range"), "{err}");
    // LAK refuses what the mesh matrix cannot hold, naming the face.
    let nonman = data().join("meshes/osd/catmark_nonman_quadpole8.obj");
    let o = subla(&["subdivide", nonman.to_str().unwrap(), "-o", out.to_str().unwrap(), "--path", "lak"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8(o.stderr).unwrap().contains("more than once"));
    // Usage errors come from the argument parser.
    let o = subla(&["subdivide", "--levels", "two"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn matrix_exports_r_that_reproduces_subdivide() {
    let input = data().join("meshes/osd/catmark_cube_creases0.obj");
    let r_path = tmp("R.mtx");
    let o = subla(&["matrix", input.to_str().unwrap(), "--levels", "2", "-o", r_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nonzeros"));
    let r = subla_algebra::mtx::read_matrix_market_file(&r_path).unwrap();
    let mesh_out = tmp("cube2-for-r.obj");
    let o = subla(&["subdivide", input.to_str().unwrap(), "--levels", "2", "-o", mesh_out.to_str().unwrap()]);
    assert!(o.status.success());
    let refined = read(&mesh_out);
    let control = read(&input);
    let y = subla_algebra::spmv::spmv_csr(r.as_ref(), control.positions(), |&w, _, _| w, subla_algebra::Par::Seq);
    assert_eq!(y.dim(), refined.positions().dim());
    let diff = y.iter().zip(refined.positions().iter()).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff < 1e-12, "R P0 and subdivide differ by {diff}");
    // Per level: R_1 R_0 has the same action.
    let o = subla(&["matrix", input.to_str().unwrap(), "--levels", "2", "--per-level", "-o", r_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r0 = subla_algebra::mtx::read_matrix_market_file(r_path.with_extension("0.mtx")).unwrap();
    let r1 = subla_algebra::mtx::read_matrix_market_file(r_path.with_extension("1.mtx")).unwrap();
    assert_eq!((r0.ncols(), r1.nrows()), (control.mesh.num_vertices(), y.nrows()));
    // The limit operator makes it control -> limit positions (rows sum to 1).
    let o = subla(&["matrix", input.to_str().unwrap(), "--levels", "2", "--limit", "-o", r_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rl = subla_algebra::mtx::read_matrix_market_file(&r_path).unwrap();
    for i in 0..rl.nrows() {
        let s: f64 = rl.row(i).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-12);
    }
    // Over the budget: one line, how much it would need, exit code 1.
    let o = subla(&[
        "matrix",
        input.to_str().unwrap(),
        "--levels",
        "3",
        "--max-memory",
        "1K",
        "-o",
        r_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("need up to") && err.contains("the budget is 1 KiB (--max-memory"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn gpu_backend_agrees_with_the_cpu() {
    let input = data().join("meshes/osd/catmark_chaikin2.obj");
    let (cpu, gpu) = (tmp("chaikin-cpu.obj"), tmp("chaikin-gpu.obj"));
    // The GPU runs the specialised kernels, which number vertices as the
    // CPU's do.
    let o =
        subla(&["subdivide", input.to_str().unwrap(), "--levels", "2", "--path", "slak", "-o", cpu.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = subla(&[
        "subdivide",
        input.to_str().unwrap(),
        "--levels",
        "2",
        "--backend",
        "gpu",
        "-o",
        gpu.to_str().unwrap(),
        "--timings",
        "json",
    ]);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(std::env::var("SUBLA_REQUIRE_GPU").as_deref() != Ok("1"), "GPU required, but: {err}");
        assert!(err.starts_with("error: --backend gpu:"), "{err}");
        eprintln!("skipped: {err}");
        return;
    }
    let json: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
    assert_eq!(json["backend"], "gpu");
    same_faces_and_points(&cpu, &gpu, "GPU and CPU");
    // The edge-friend kernels on the device number the points as on the
    // CPU.
    let (ef_cpu, ef_gpu) = (tmp("chaikin-ef-cpu.obj"), tmp("chaikin-ef-gpu.obj"));
    for (out, backend) in [(&ef_cpu, "cpu"), (&ef_gpu, "gpu")] {
        let o = subla(&[
            "subdivide",
            input.to_str().unwrap(),
            "--levels",
            "2",
            "--path",
            "edge-friend",
            "--backend",
            backend,
            "--precision",
            "f32",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{backend}: {}", String::from_utf8_lossy(&o.stderr));
    }
    same_faces_and_points(&ef_cpu, &ef_gpu, "edge-friend GPU and CPU");
    // Other schemes and paths say what the GPU backend supports.
    let o = subla(&[
        "subdivide",
        input.to_str().unwrap(),
        "--backend",
        "gpu",
        "--path",
        "lak",
        "-o",
        gpu.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("catmark has no mapped algebra on the gpu"), "{err}");
    // Bilinear has no GPU kernels.
    let o = subla(&["subdivide", input.to_str().unwrap(), "--backend", "gpu", "--scheme", "bilinear"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bilinear has no specialised kernels on the gpu"), "{err}");
    // The device computes in f32: f64 is refused, or run on the CPU when
    // allowed, and said.
    let o = subla(&[
        "subdivide",
        input.to_str().unwrap(),
        "--levels",
        "2",
        "--backend",
        "gpu",
        "--precision",
        "f64",
        "-o",
        gpu.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: ") && err.contains("the GPU computes in f32 only"), "{err}");
    let o = subla(&[
        "subdivide",
        input.to_str().unwrap(),
        "--levels",
        "2",
        "--backend",
        "gpu",
        "--precision",
        "f64",
        "--fallback",
        "cpu",
        "-o",
        gpu.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: catmark-gpu: f64 asked for"), "{err}");
    assert_eq!(positions_sorted(&read(&gpu)), positions_sorted(&read(&cpu)), "f64 on the CPU, bit for bit");
    // Loop, CGAL's Loop and sqrt(3) on the GPU agree with the CPU's
    // kernels (the GPU runs them; the CPU's default is the halfedge path,
    // which numbers Loop's vertices its own way).
    for scheme in ["loop", "loop-cgal", "sqrt3"] {
        let tri = data().join("meshes/misc/grid_tri_open.obj");
        let (cpu, gpu) = (tmp(&format!("{scheme}-cpu.obj")), tmp(&format!("{scheme}-gpu.obj")));
        for (backend, out) in [("cpu", &cpu), ("gpu", &gpu)] {
            let o = subla(&[
                "subdivide",
                tri.to_str().unwrap(),
                "--scheme",
                scheme,
                "--levels",
                "3",
                "--path",
                "slak",
                "--backend",
                backend,
                "--precision",
                "f32",
                "-o",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{scheme} on {backend}: {}", String::from_utf8_lossy(&o.stderr));
        }
        same_faces_and_points(&cpu, &gpu, &format!("{scheme}: GPU and CPU"));
    }
}

#[test]
fn triangle_schemes_match_their_goldens() {
    for (scheme, input, golden) in [
        ("loop", "meshes/osd/loop_cube_creases1.obj", "golden/loop/loop_cube_creases1.L2.obj"),
        ("loop-cgal", "meshes/misc/grid_tri_open.obj", "golden/loop_cgal/grid_tri_open.N2.obj"),
        ("sqrt3", "meshes/misc/grid_tri_open.obj", "golden/sqrt3/grid_tri_open.N2.obj"),
    ] {
        let out = tmp(&format!("{scheme}.obj"));
        let o = subla(&[
            "subdivide",
            data().join(input).to_str().unwrap(),
            "--scheme",
            scheme,
            "--levels",
            "2",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{scheme}: {}", String::from_utf8_lossy(&o.stderr));
        let (ours, gold) = (read(&out), read(&data().join(golden)));
        assert_eq!(ours.mesh.num_faces(), gold.mesh.num_faces(), "{scheme}");
        assert_eq!(positions_sorted(&ours), positions_sorted(&gold), "{scheme}");
    }
    // Loop refuses quads, naming the face.
    let cube = data().join("meshes/osd/catmark_cube.obj");
    let out = tmp("never-loop.obj");
    let o = subla(&["subdivide", cube.to_str().unwrap(), "--scheme", "loop", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("face 0") && err.contains("triangulated"), "{err}");
    // Asked explicitly, the quads are split first: 12 triangles over the 8
    // vertices, with 18 edges.
    for (scheme, vertices, faces) in [("loop", 8 + 18, 4 * 12), ("sqrt3", 8 + 12, 3 * 12)] {
        let out = tmp(&format!("triangulated-{scheme}.obj"));
        let o = subla(&[
            "subdivide",
            cube.to_str().unwrap(),
            "--scheme",
            scheme,
            "--triangulate",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{scheme}: {}", String::from_utf8_lossy(&o.stderr));
        let ours = read(&out);
        assert_eq!((ours.mesh.num_vertices(), ours.mesh.num_faces()), (vertices, faces), "{scheme}");
    }
}

/// `--backend gpu` without a usable adapter: one error line naming what was
/// tried, exit 1; with `--fallback cpu`, the CPU's result and a warning.
#[test]
fn gpu_without_an_adapter_fails_unless_a_fallback_is_allowed() {
    let input = data().join("meshes/osd/catmark_cube.obj");
    let (cpu, gpu) = (tmp("noadapter-cpu.obj"), tmp("noadapter-gpu.obj"));
    let run = |extra: &[&str], out: &PathBuf| {
        let mut args = vec!["subdivide", input.to_str().unwrap(), "--levels", "2", "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_subla"))
            .args(&args)
            .env("SUBLA_GPU_ADAPTER", "no adapter has this name")
            .output()
            .expect("run subla")
    };
    let o = run(&["--backend", "gpu"], &gpu);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: --backend gpu: no GPU adapter matches"), "{err}");
    assert!(err.contains("adapters seen") && err.contains("--fallback cpu"), "{err}");
    assert!(!gpu.exists(), "nothing written");
    let o = run(&["--backend", "gpu", "--fallback", "cpu", "--timings", "json"], &gpu);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("warning: --backend gpu: no GPU adapter matches") && err.contains("running on the CPU"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
    assert_eq!(json["backend"], "cpu");
    assert!(run(&[], &cpu).status.success());
    assert_eq!(positions_sorted(&read(&gpu)), positions_sorted(&read(&cpu)));
}
