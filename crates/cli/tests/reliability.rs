//! The tool's promises under hostile use: no output destroys an input or
//! another output, writes are whole or absent (errors, Ctrl-C, concurrent
//! runs), requests too big for the memory that may be used are refused
//! before any work (also under ulimit), and messages are one truthful line.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cube() -> PathBuf {
    repo().join("data/meshes/osd/catmark_cube.obj")
}

/// A fresh working folder for one test.
fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("subla-reliability-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn subla() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_subla"));
    c.env("RAYON_NUM_THREADS", "2");
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    subla().current_dir(dir).args(args).output().expect("run subla")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 1 with one line on standard error containing `needle`.
#[track_caller]
fn refused(o: &Output, needle: &str) -> String {
    // The GPU driver's own complaints are not the tool's messages.
    let err: String = stderr(o).lines().filter(|l| !l.contains("XDG_RUNTIME_DIR")).map(|l| format!("{l}\n")).collect();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert_eq!(err.trim_end().lines().filter(|l| l.starts_with("error:")).count(), 1, "{err}");
    assert!(err.trim_end().lines().last().is_some_and(|l| l.starts_with("error:")), "{err}");
    err
}

/// No temporary file left in `dir`.
#[track_caller]
fn no_temporaries(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "temporary file left: {name}");
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = workdir("same");
    std::fs::copy(cube(), dir.join("in.obj")).unwrap();
    std::fs::copy(repo().join("data/meshes/osd/catmark_cube.obj"), dir.join("keep.obj")).unwrap();
    let before = std::fs::read(dir.join("in.obj")).unwrap();
    std::fs::hard_link(dir.join("in.obj"), dir.join("hard.obj")).unwrap();
    std::os::unix::fs::symlink("in.obj", dir.join("sym.obj")).unwrap();
    let cases: [&[&str]; 6] = [
        &["subdivide", "in.obj", "-o", "in.obj"],
        &["subdivide", "in.obj", "-o", "./hard.obj"],
        &["subdivide", "sym.obj", "-o", "in.obj"],
        &["matrix", "in.obj", "-o", "in.obj"],
        &["matrix", "in.obj", "-o", "hard.obj"],
        &["render", "in.obj", "-o", "sym.obj"],
    ];
    for args in cases {
        refused(&run_in(&dir, args), "is the input");
        assert_eq!(std::fs::read(dir.join("in.obj")).unwrap(), before, "{args:?} changed the input");
    }
    // A PLY input overwritten with OBJ text.
    std::fs::write(dir.join("m.ply"), b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n").unwrap();
    refused(&run_in(&dir, &["subdivide", "m.ply", "-o", "m.ply"]), "is the input");
    assert!(std::fs::read_to_string(dir.join("m.ply")).unwrap().starts_with("ply"));
}

#[test]
fn two_outputs_of_one_run_may_not_be_one_file() {
    let dir = workdir("png-obj");
    let input = cube();
    let o = run_in(&dir, &["subdivide", input.to_str().unwrap(), "-o", "y.png", "--png"]);
    refused(&o, "is the same file as -o y.png");
    assert!(!dir.join("y.png").exists(), "nothing written");
    let o = run_in(&dir, &["subdivide", input.to_str().unwrap(), "-o", "a.obj", "--png", "./a.obj"]);
    refused(&o, "is the same file as");
}

#[test]
fn an_output_folder_that_is_a_file_is_named() {
    let dir = workdir("out-dir");
    std::fs::write(dir.join("subla-out"), b"a file").unwrap();
    let o = run_in(&dir, &["subdivide"]);
    let err = refused(&o, "subla-out is a file, not a folder");
    assert!(!err.contains("os error"), "{err}");
    let o = run_in(&dir, &["subdivide", "--out-dir", "subla-out"]);
    refused(&o, "is a file, not a folder");
    let o = run_in(&dir, &["render", "--levels", "1"]);
    refused(&o, "is a file, not a folder");
    assert_eq!(std::fs::read(dir.join("subla-out")).unwrap(), b"a file");
}

#[test]
fn a_full_disk_is_an_error_and_no_side_file_is_made() {
    let dir = workdir("full");
    let o = run_in(&dir, &["subdivide", "-o", "/dev/full"]);
    refused(&o, "/dev/full");
    let o = run_in(&dir, &["matrix", "-o", "/dev/full"]);
    refused(&o, "/dev/full");
    let o = run_in(&dir, &["matrix", "--per-level", "--levels", "2", "-o", "/dev/full"]);
    refused(&o, "--per-level writes one file per level");
    assert!(!Path::new("/dev/full.0.mtx").exists());
    assert!(!Path::new("/dev/full.png").exists());
    // Devices that take data are written as they are.
    let o = run_in(&dir, &["subdivide", "-o", "/dev/null", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_symlinked_output_stays_a_link_to_the_new_file() {
    let dir = workdir("link");
    std::fs::write(dir.join("R.mtx"), b"previous").unwrap();
    std::os::unix::fs::symlink("R.mtx", dir.join("link.mtx")).unwrap();
    let o = run_in(&dir, &["matrix", "-o", "link.mtx", "--levels", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(dir.join("link.mtx")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(dir.join("R.mtx")).unwrap().starts_with("%%MatrixMarket"));
    no_temporaries(&dir);
}

#[test]
fn ctrl_c_during_a_write_keeps_the_previous_file_and_removes_the_temporary() {
    let dir = workdir("sigint");
    std::fs::write(dir.join("out.obj"), b"previous").unwrap();
    let input = cube();
    for _ in 0..3 {
        let mut child = subla()
            .current_dir(&dir)
            .args(["subdivide", input.to_str().unwrap(), "--levels", "7", "-o", "out.obj", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let mut seen = false;
        while start.elapsed() < Duration::from_secs(60) {
            if std::fs::read_dir(&dir).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp")) {
                seen = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        // SAFETY: kill with a valid pid of our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let status = child.wait().unwrap();
        no_temporaries(&dir);
        if seen {
            assert_eq!(status.code(), Some(130), "{status:?}");
            assert_eq!(std::fs::read(dir.join("out.obj")).unwrap(), b"previous");
            return;
        }
    }
    panic!("the write was never caught in progress");
}

#[test]
fn concurrent_runs_on_one_path_leave_one_whole_file() {
    let dir = workdir("concurrent");
    let input = cube();
    let args = |scheme: &str, out: &str| {
        let mut c = subla();
        c.current_dir(&dir).args([
            "subdivide",
            input.to_str().unwrap(),
            "--levels",
            "7",
            "--scheme",
            scheme,
            "-o",
            out,
            "-q",
        ]);
        c
    };
    // The two possible whole files: same counts, different positions.
    for scheme in ["catmark", "bilinear"] {
        assert!(args(scheme, &format!("{scheme}.obj")).status().unwrap().success());
    }
    let whole = [std::fs::read(dir.join("catmark.obj")).unwrap(), std::fs::read(dir.join("bilinear.obj")).unwrap()];
    for _ in 0..2 {
        let children: Vec<_> =
            ["catmark", "bilinear", "catmark", "bilinear"].map(|s| args(s, "same.obj").spawn().unwrap()).into();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let got = std::fs::read(dir.join("same.obj")).unwrap();
        assert!(whole.contains(&got), "same.obj ({} bytes) is no run's whole output", got.len());
        no_temporaries(&dir);
    }
}

#[test]
fn per_level_matrices_go_into_a_folder() {
    let dir = workdir("per-level");
    std::fs::create_dir(dir.join("mats")).unwrap();
    let o = run_in(&dir, &["matrix", "--levels", "2", "--per-level", "-o", "mats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("mats/R.0.mtx").is_file() && dir.join("mats/R.1.mtx").is_file());
    assert!(!dir.join("mats.0.mtx").exists());
    let o = run_in(&dir, &["matrix", "--levels", "1", "--per-level", "-o", "new/"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("new/R.0.mtx").is_file());
    let o = run_in(&dir, &["matrix", "--levels", "1", "-o", "mats/"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("mats/R.mtx").is_file());
}

#[test]
fn per_level_with_no_levels_is_refused() {
    let dir = workdir("per-level-0");
    let o = run_in(&dir, &["matrix", "--levels", "0", "--per-level", "-o", "R.mtx"]);
    refused(&o, "--per-level --levels 0");
    // With the limit operator there is one matrix to write.
    let o = run_in(&dir, &["matrix", "--levels", "0", "--per-level", "--limit", "-o", "L.mtx"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("L.0.mtx").is_file());
}

/// A closed n-gon: two faces of `n` vertices, back to back.
fn closed_gon(path: &Path, n: usize) {
    let mut s = String::new();
    for i in 0..n {
        let a = i as f64 * std::f64::consts::TAU / n as f64;
        s.push_str(&format!("v {} {} 0\n", a.cos(), a.sin()));
    }
    s.push('f');
    (1..=n).for_each(|i| s.push_str(&format!(" {i}")));
    s.push_str("\nf");
    (1..=n).rev().for_each(|i| s.push_str(&format!(" {i}")));
    s.push('\n');
    std::fs::write(path, s).unwrap();
}

/// Runs under an address-space limit of `bytes` (`ulimit -v`).
fn under_address_limit(dir: &Path, bytes: u64, args: &[&str]) -> Output {
    let mut c = subla();
    c.current_dir(dir).args(args);
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        c.pre_exec(move || {
            let r = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("run subla")
}

#[test]
fn matrix_refuses_from_counts_before_building() {
    let dir = workdir("matrix-memory");
    let input = cube();
    let cube = input.to_str().unwrap();
    let start = Instant::now();
    for args in [
        &["--levels", "20", "--max-memory", "1K"][..],
        &["--levels", "4294967295"],
        &["--levels", "4294967295", "--per-level"],
        &["--levels", "30", "--limit"],
        &["--levels", "13", "--max-memory", "1G"],
        &["--levels", "30", "--scheme", "loop", "--triangulate"],
        &["--levels", "40", "--scheme", "sqrt3", "--triangulate", "--per-level"],
        &["--levels", "30", "--scheme", "bilinear"],
    ] {
        let mut all = vec!["matrix", cube, "-o", "R.mtx"];
        all.extend_from_slice(args);
        let o = under_address_limit(&dir, 2 << 30, &all);
        refused(&o, "the budget is");
    }
    closed_gon(&dir.join("gon.obj"), 10_000);
    let o = under_address_limit(&dir, 2 << 30, &["matrix", "gon.obj", "--levels", "2", "-o", "G.mtx"]);
    refused(&o, "the budget is");
    assert!(start.elapsed() < Duration::from_secs(20), "refusals took {:?}", start.elapsed());
    assert!(!dir.join("R.mtx").exists() && !dir.join("G.mtx").exists());
}

#[test]
fn the_main_paths_run_under_an_address_space_limit() {
    let dir = workdir("ulimit");
    let input = cube();
    let cube = input.to_str().unwrap();
    let limit = 2 << 30;
    for args in [
        &["subdivide", cube, "--levels", "3", "-o", "c3.obj", "-q"][..],
        &["subdivide", cube, "--levels", "2", "--mode", "modeling", "--scheme", "loop", "--triangulate", "-o", "l.obj"],
        &["matrix", cube, "--levels", "2", "-o", "R.mtx"],
        &["matrix", cube, "--levels", "2", "--per-level", "--limit", "-o", "P.mtx"],
        &["info", cube],
    ] {
        let o = under_address_limit(&dir, limit, args);
        assert!(o.status.success(), "{args:?}: exit {:?}: {}", o.status.code(), stderr(&o));
    }
    // Too big for the limit: refused naming it, not a crash (101, 134).
    let o = under_address_limit(&dir, limit, &["subdivide", cube, "--levels", "11", "-o", "big.obj"]);
    refused(&o, "RLIMIT_AS");
    // --max-memory cannot lift a ulimit: the advice is the limit itself.
    assert!(stderr(&o).contains("raise that limit") && !stderr(&o).contains("--max-memory"), "{}", stderr(&o));
    let o = under_address_limit(&dir, limit, &["matrix", cube, "--levels", "11", "-o", "big.mtx"]);
    refused(&o, "RLIMIT_AS");
    // --max-memory raises the default share, not the hard limit.
    let o =
        under_address_limit(&dir, limit, &["subdivide", cube, "--levels", "11", "--max-memory", "1T", "-o", "big.obj"]);
    refused(&o, "RLIMIT_AS");
}

#[test]
fn gpu_f64_is_refused_or_run_and_reported_on_the_cpu() {
    let dir = workdir("gpu-f64");
    let input = cube();
    let cube = input.to_str().unwrap();
    let o = run_in(&dir, &["subdivide", cube, "--backend", "gpu", "--precision", "f64", "-o", "a.obj"]);
    refused(&o, "the GPU computes in f32 only");
    assert!(!dir.join("a.obj").exists());
    let o = run_in(
        &dir,
        &[
            "subdivide",
            cube,
            "--backend",
            "gpu",
            "--precision",
            "f64",
            "--fallback",
            "cpu",
            "-o",
            "b.obj",
            "--timings",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((json["backend"].as_str(), json["precision"].as_str()), (Some("cpu"), Some("f64")), "{json}");
    assert_eq!(json["fell_back"], true, "{json}");
    assert!(stderr(&o).contains("warning:"), "{}", stderr(&o));
}

#[test]
fn a_coordinate_beyond_f32_is_named_not_called_nan() {
    let dir = workdir("f32");
    std::fs::write(dir.join("big.obj"), "v 0 0 0\nv 1 0 0\nv 1 1e39 0\nv 0 1 0\nf 1 2 3 4\n").unwrap();
    let o = run_in(&dir, &["subdivide", "big.obj", "--precision", "f32", "-o", "o.obj"]);
    let err = refused(&o, "vertex 2: coordinate 1 is 1e39, which overflows f32");
    assert!(err.contains("--precision f64") && !err.contains("NaN"), "{err}");
    let o = run_in(&dir, &["subdivide", "big.obj", "-o", "o.obj", "-q"]);
    assert!(o.status.success(), "f64 holds it: {}", stderr(&o));
}

#[test]
fn control_characters_in_file_names_are_escaped() {
    let dir = workdir("names");
    let name = "bad\u{1b}[31m\nname.obj";
    let o = run_in(&dir, &["info", name]);
    let err = refused(&o, "bad\\u{1b}[31m\\nname.obj");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    std::fs::copy(cube(), dir.join(name)).unwrap();
    let o = run_in(&dir, &["subdivide", name, "-o", "out\u{7}.obj"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("wrote out\\u{7}.obj"), "{out}");
}

#[test]
fn timings_cover_the_whole_run() {
    let dir = workdir("timings");
    let input = cube();
    for mode in ["static", "modeling"] {
        let o = run_in(
            &dir,
            &[
                "subdivide",
                input.to_str().unwrap(),
                "--levels",
                "6",
                "--mode",
                mode,
                "-o",
                "t.obj",
                "--timings",
                "json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let total = json["total_ms"].as_f64().expect("total_ms");
        let parts: f64 =
            ["read_ms", "build_ms", "eval_ms", "mesh_ms", "write_ms"].iter().map(|k| json[k].as_f64().unwrap()).sum();
        assert!(total >= parts, "{json}");
        // The parts account for the run (start-up and the report are the
        // rest).
        assert!(parts >= 0.7 * total, "{mode}: the parts cover {parts} of {total} ms: {json}");
    }
}

#[test]
fn an_image_too_large_for_the_gpu_is_one_line() {
    if subla_gpu::testing::context_or_skip().is_none() {
        return;
    }
    let dir = workdir("render-size");
    for size in ["12000x12000", "100000x10"] {
        let o = run_in(&dir, &["render", "--size", size, "-o", "big.png"]);
        assert_eq!(o.status.code(), Some(1), "{size}: {}", stderr(&o));
        // The driver's own complaints (not the tool's) left out.
        let err = stderr(&o);
        let ours: Vec<&str> = err.lines().filter(|l| !l.contains("XDG_RUNTIME_DIR") && !l.is_empty()).collect();
        assert_eq!(ours.len(), 1, "{size}: {err}");
        assert!(!dir.join("big.png").exists());
    }
    let o = run_in(&dir, &["render", "--size", "100000x10", "-o", "big.png"]);
    refused(&o, "--size 100000x10: this GPU draws at most");
    let o = run_in(&dir, &["render", "--size", "12000x12000", "-o", "big.png"]);
    refused(&o, "GPU memory in one piece");
}
