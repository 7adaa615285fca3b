//! The output's format: PLY for a `.ply` name (and by default for a PLY
//! input), OBJ otherwise; what the chosen format cannot carry is named in a
//! warning, and every vertex channel keeps its values.

use std::path::PathBuf;
use std::process::Command;

fn subla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("subla-formats-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PLY: &str = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n\
property float quality\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n\
0 0 0 1\n1 0 0 2\n1 1 0 3\n0 1 0 4\n4 0 1 2 3\n";

#[test]
fn a_ply_output_keeps_channel_names_and_an_obj_output_warns_of_them() {
    let d = dir();
    let input = d.join("quad.ply");
    std::fs::write(&input, PLY).unwrap();
    let ply = d.join("out.ply");
    let o = subla(&["subdivide", input.to_str().unwrap(), "-o", ply.to_str().unwrap(), "--levels", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = subla_mesh::ply::read_ply(&ply, subla_mesh::Validation::OpenSubdiv).unwrap();
    assert_eq!(back.channels, ["x", "y", "z", "quality"]);
    assert_eq!(back.mesh.num_faces(), 4);
    // The face point's quality is the mean of the corners' (2.5).
    assert!(back.vertices.column(3).iter().any(|&q| (q - 2.5).abs() < 1e-6));

    let obj = d.join("out.obj");
    let o = subla(&["subdivide", input.to_str().unwrap(), "-o", obj.to_str().unwrap(), "--levels", "1"]);
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.lines().any(|l| l.starts_with("warning:") && l.contains("quality")), "{err}");
    let back = subla_mesh::obj::read_obj(&obj, subla_mesh::Validation::OpenSubdiv).unwrap();
    assert_eq!(back.vertices.ncols(), 4);
}

#[test]
fn the_default_output_of_a_ply_input_is_ply() {
    let d = dir().join("default");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("quad.ply");
    std::fs::write(&input, PLY).unwrap();
    let out_dir = d.join("out");
    let o = subla(&["subdivide", input.to_str().unwrap(), "--out-dir", out_dir.to_str().unwrap(), "--levels", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = subla_mesh::ply::read_ply(out_dir.join("quad.L1.ply"), subla_mesh::Validation::OpenSubdiv).unwrap();
    assert_eq!(back.channels.len(), 4);
}

/// `-o` naming a folder — one that exists, or a path ending in `/` — gets
/// the default file name inside it (a trailing `/` used to become a file
/// named like the folder).
#[test]
fn an_output_folder_gets_the_default_name_inside() {
    let d = dir().join("folders");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("quad.obj");
    std::fs::write(&input, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n").unwrap();
    let new = d.join("new");
    let with_slash = format!("{}/", new.display());
    let o = subla(&["subdivide", input.to_str().unwrap(), "-o", &with_slash, "--levels", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(new.is_dir() && new.join("quad.L1.obj").is_file());
    let o = subla(&["subdivide", input.to_str().unwrap(), "-o", new.to_str().unwrap(), "--levels", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(new.join("quad.L2.obj").is_file());
}

/// Statements the reader does not keep (materials, smoothing groups,
/// lines) are named in a warning and listed by `info`, not dropped
/// silently.
#[test]
fn statements_not_read_are_named_in_warnings_and_by_info() {
    let d = dir().join("skipped");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("mtl.obj");
    std::fs::write(&input, "mtllib a.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nusemtl red\ns 1\nf 1 2 3 4\n").unwrap();
    let out = d.join("out.obj");
    let o = subla(&["subdivide", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8(o.stderr).unwrap();
    for kw in ["`mtllib`", "`usemtl`", "`s`"] {
        assert!(err.lines().any(|l| l.starts_with("warning:") && l.contains(kw)), "{kw}: {err}");
    }
    let o = subla(&["info", input.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["skipped"][1]["what"], "`usemtl` statements");
    assert_eq!(v["skipped"][1]["line"], 6);
}
