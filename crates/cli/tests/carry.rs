//! What `subla subdivide` carries from its input besides the positions
//! (vertex channels, groups), the warnings for what it leaves out, what
//! `info` reports of them, and `render` on huge, tiny and empty pictures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("subla-carry-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn subla(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn read(path: &Path) -> subla_mesh::MeshData {
    subla_mesh::obj::read_obj(path, subla_mesh::Validation::OpenSubdiv).expect("valid OBJ")
}

/// Whether a GPU adapter exists (pictures need one; CI has lavapipe and
/// sets SUBLA_REQUIRE_GPU=1, under which a missing adapter fails).
fn gpu() -> Option<&'static subla_gpu::GpuContext> {
    subla_gpu::testing::context_or_skip()
}

/// The unit cube `[0, 1]³` as OBJ `v` lines with `extra(x, y, z)` appended
/// to each, its six faces split into the groups `bottom` (faces 0, 1) and
/// `rest`, and `tail` after the faces.
fn cube_obj(extra: impl Fn([f64; 3]) -> String, tail: &str) -> String {
    let mut s = String::new();
    for i in 0..8 {
        let p = [(i & 1) as f64, (i >> 1 & 1) as f64, (i >> 2) as f64];
        s += &format!("v {} {} {} {}\n", p[0], p[1], p[2], extra(p));
    }
    s += "g bottom\nf 1 3 4 2\nf 1 2 6 5\ng rest\nf 2 4 8 6\nf 4 3 7 8\nf 3 1 5 7\nf 5 6 8 7\n";
    s + tail
}

/// Colours are vertex data: `v x y z r g b` keeps its three colour
/// channels, refined with the positions. With `r g b = x y z` every
/// refined colour equals its refined position (the same weights).
/// Regression: the colours disappeared from the output.
#[test]
fn colours_of_obj_vertices_are_refined_with_the_positions() {
    let d = dir("colours");
    let input = d.join("cube.obj");
    std::fs::write(&input, cube_obj(|p| format!("{} {} {}", p[0], p[1], p[2]), "")).unwrap();
    for scheme in ["catmark", "bilinear", "loop", "sqrt3"] {
        for mode in ["static", "modeling"] {
            for precision in ["f64", "f32"] {
                let out = d.join(format!("{scheme}-{mode}-{precision}.obj"));
                let mut args = vec!["subdivide", s(&input), "--levels", "2", "--scheme", scheme, "-o", s(&out)];
                args.extend(["--mode", mode, "--precision", precision, "--quiet"]);
                if scheme != "catmark" && scheme != "bilinear" {
                    args.push("--triangulate");
                }
                ok(&subla(&args));
                let data = read(&out);
                assert_eq!(data.vertices.ncols(), 6, "{scheme} {mode} {precision}");
                for row in data.vertices.rows() {
                    for k in 0..3 {
                        assert_eq!(row[k].to_bits(), row[k + 3].to_bits(), "{scheme} {mode} {precision}: {row}");
                    }
                }
            }
        }
    }
    // `info` of the output counts six channels.
    let out = d.join("catmark-static-f64.obj");
    let v: serde_json::Value = serde_json::from_str(ok(&subla(&["info", s(&out), "--json"])).trim()).unwrap();
    assert_eq!(v["channels"], 6);
}

/// PLY properties beyond `x y z` (a float `quality`, a uchar `red`) are
/// channels, refined with the positions: a constant stays that constant,
/// a linear function of the position stays that function.
#[test]
fn ply_properties_are_refined_with_the_positions() {
    let d = dir("ply");
    let input = d.join("cube.ply");
    let mut ply = String::from(
        "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\nproperty float z\nproperty float quality\nproperty uchar red\nelement face 6\nproperty list uchar int vertex_indices\nend_header\n",
    );
    for i in 0..8 {
        let p = [(i & 1) as f64, (i >> 1 & 1) as f64, (i >> 2) as f64];
        ply += &format!("{} {} {} {} 200\n", p[0], p[1], p[2], 2.0 * p[0] + 1.0);
    }
    ply += "4 0 2 3 1\n4 0 1 5 4\n4 1 3 7 5\n4 3 2 6 7\n4 2 0 4 6\n4 4 5 7 6\n";
    std::fs::write(&input, ply).unwrap();
    let v: serde_json::Value = serde_json::from_str(ok(&subla(&["info", s(&input), "--json"])).trim()).unwrap();
    assert_eq!(v["channels"], 5);
    assert_eq!(v["channel_names"], serde_json::json!(["x", "y", "z", "quality", "red"]));
    let out = d.join("cube.L2.obj");
    ok(&subla(&["subdivide", s(&input), "--levels", "2", "-o", s(&out), "--quiet"]));
    let data = read(&out);
    assert_eq!(data.vertices.ncols(), 5);
    for row in data.vertices.rows() {
        assert!((row[3] - (2.0 * row[0] + 1.0)).abs() < 1e-12, "{row}");
        assert!((row[4] - 200.0).abs() < 1e-12, "{row}");
    }
    // Vertex normals (`nx`, `ny`, `nz`) are not refined as data: the
    // refined surface's limit normals take their place.
    let with_normals = d.join("normals.ply");
    let mut ply = String::from(
        "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nelement face 6\nproperty list uchar int vertex_indices\nend_header\n",
    );
    for i in 0..8 {
        let p = [(i & 1) as f64, (i >> 1 & 1) as f64, (i >> 2) as f64];
        let n = p.map(|x| (2.0 * x - 1.0) / 3f64.sqrt());
        ply += &format!("{} {} {} {} {} {}\n", p[0], p[1], p[2], n[0], n[1], n[2]);
    }
    ply += "4 0 2 3 1\n4 0 1 5 4\n4 1 3 7 5\n4 3 2 6 7\n4 2 0 4 6\n4 4 5 7 6\n";
    std::fs::write(&with_normals, ply).unwrap();
    let out = d.join("normals.L2.ply");
    let o = subla(&["subdivide", s(&with_normals), "--levels", "2", "-o", s(&out), "--quiet"]);
    ok(&o);
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = subla_mesh::ply::read_ply(&out, subla_mesh::Validation::OpenSubdiv).unwrap();
    assert_eq!(data.channels, ["x", "y", "z", "nx", "ny", "nz"]);
    let p = data.vertices.slice(ndarray::s![.., 0..3]).to_owned();
    let rules = subla_scheme::tangents::TangentRules::Catmark;
    let want = subla_scheme::tangents::limit_normals(&data.mesh, p.view(), rules, subla_algebra::Par::Seq);
    assert_eq!(data.vertices.slice(ndarray::s![.., 3..6]), want);
}

/// `info` names every channel, and lists the groups and the face-varying
/// data (regression: a coloured mesh reported `channels 3`).
#[test]
fn info_reports_every_channel_and_the_groups() {
    let d = dir("info");
    let input = d.join("cube.obj");
    std::fs::write(&input, cube_obj(|p| format!("{} 0.5 1", p[0]), "")).unwrap();
    let text = ok(&subla(&["info", s(&input)]));
    assert!(text.contains("channels 6 (x, y, z, red, green, blue)"), "{text}");
    assert!(text.contains(r#"groups (2): g "bottom" faces 0..2, g "rest" faces 2..6"#), "{text}");
    let v: serde_json::Value = serde_json::from_str(ok(&subla(&["info", s(&input), "--json"])).trim()).unwrap();
    assert_eq!(v["channels"], 6);
    assert_eq!(v["groups"][1], serde_json::json!({"kind": "g", "name": "rest", "faces": [2, 6]}));
}

/// `info` counts a channel's seams: two quads sharing an edge, each with
/// texture coordinates of its own, split along that edge (one seam edge,
/// its two vertices with two values each); with the values shared, none.
#[test]
fn info_reports_the_seams_of_texture_coordinates() {
    let d = dir("info-seams");
    let input = d.join("two.obj");
    let head = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nv 1 1 0\nv 2 1 0\n";
    let split =
        "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 2 0\nvt 3 0\nvt 3 1\nvt 2 1\nf 1/1 2/2 5/3 4/4\nf 2/5 3/6 6/7 5/8\n";
    std::fs::write(&input, format!("{head}{split}")).unwrap();
    let text = ok(&subla(&["info", s(&input)]));
    assert!(
        text.contains("texture coordinates (vt): 8 values, 2 channels, 1 seam edges, 2 vertices with several values"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(ok(&subla(&["info", s(&input), "--json"])).trim()).unwrap();
    assert_eq!(v["texcoord_seams"], serde_json::json!({"seam_edges": 1, "vertices_with_several_values": 2}));
    let shared = "vt 0 0\nvt 1 0\nvt 2 0\nvt 0 1\nvt 1 1\nvt 2 1\nf 1/1 2/2 5/5 4/4\nf 2/2 3/3 6/6 5/5\n";
    std::fs::write(&input, format!("{head}{shared}")).unwrap();
    let text = ok(&subla(&["info", s(&input)]));
    assert!(text.contains("6 values, 2 channels, 0 seam edges, 0 vertices with several values"), "{text}");
}

/// `matrix --fvar-channel vt` writes the channel's operators: the product
/// applied to the file's `vt` gives, row for row, the `vt` that `subdivide`
/// writes (same scheme, levels and mode), and the per-level matrices chain
/// to it; a mesh without the channel, `--limit` and √3 are refused.
#[test]
fn matrix_exports_the_texture_coordinate_operators() {
    let d = dir("matrix-fvar");
    let input = d.join("two.obj");
    let text = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nv 1 1 0\nv 2 1 0\n\
                vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 2 0\nvt 3 0\nvt 3 1\nvt 2 1\n\
                f 1/1 2/2 5/3 4/4\nf 2/5 3/6 6/7 5/8\n";
    std::fs::write(&input, text).unwrap();
    let out = d.join("two.L2.obj");
    ok(&subla(&["subdivide", s(&input), "-o", s(&out), "--levels", "2", "--fvar", "none", "--quiet"]));
    let refined = read(&out).texcoords.expect("vt written");
    let r_path = d.join("R.mtx");
    let o = subla(&["matrix", s(&input), "-o", s(&r_path), "--levels", "2", "--fvar-channel", "vt", "--fvar", "none"]);
    ok(&o);
    let r = subla_algebra::mtx::read_matrix_market_file(&r_path).unwrap();
    let control = read(&input).texcoords.expect("vt").values;
    assert_eq!(r.shape(), (refined.values.nrows(), 8));
    let got = subla_algebra::spmv::spmv_csr(r.as_ref(), control.view(), |&w, _, _| w, subla_algebra::Par::Seq);
    for (a, b) in got.iter().zip(refined.values.iter()) {
        assert!((a - b).abs() < 1e-12, "{got} vs {}", refined.values);
    }
    let per = d.join("per.mtx");
    let args =
        ["matrix", s(&input), "-o", s(&per), "--levels", "2", "--fvar-channel", "vt", "--fvar", "none", "--per-level"];
    ok(&subla(&args));
    let r0 = subla_algebra::mtx::read_matrix_market_file(d.join("per.0.mtx")).unwrap();
    let r1 = subla_algebra::mtx::read_matrix_market_file(d.join("per.1.mtx")).unwrap();
    let x1 = subla_algebra::spmv::spmv_csr(r0.as_ref(), control.view(), |&w, _, _| w, subla_algebra::Par::Seq);
    let x2 = subla_algebra::spmv::spmv_csr(r1.as_ref(), x1.view(), |&w, _, _| w, subla_algebra::Par::Seq);
    assert!(x2.iter().zip(got.iter()).all(|(a, b)| (a - b).abs() < 1e-12));
    for (extra, says) in [
        (&["--fvar-channel", "vn"][..], "has no normals (vn)"),
        (&["--fvar-channel", "vt", "--limit"][..], "--limit"),
        (&["--fvar-channel", "vt", "--scheme", "sqrt3", "--triangulate"][..], "no face-varying rules"),
    ] {
        let mut args = vec!["matrix", s(&input), "-o", s(&r_path)];
        args.extend_from_slice(extra);
        let o = subla(&args);
        assert!(!o.status.success(), "{extra:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
}

/// Groups are carried by face: each refined face belongs to its parent's
/// group, hole faces left out close up the ranges (regression: the groups
/// disappeared).
#[test]
fn groups_survive_subdivision() {
    let d = dir("groups");
    let input = d.join("cube.obj");
    std::fs::write(&input, cube_obj(|_| String::new(), "")).unwrap();
    for (scheme, tri, levels, expected) in [
        // 2 quads → 8 → 32 faces; the 4 others → 64.
        ("catmark", false, 2, [0..32, 32..96]),
        ("bilinear", false, 1, [0..8, 8..24]),
        // Triangulated: 4 triangles of the bottom → 16 → 64, of 12 in all.
        ("loop", true, 2, [0..64, 64..192]),
        ("sqrt3", true, 2, [0..36, 36..108]),
    ] {
        let out = d.join(format!("{scheme}.obj"));
        let mut args = vec!["subdivide", s(&input), "--scheme", scheme, "-o", s(&out), "--quiet"];
        let l = levels.to_string();
        args.extend(["--levels", &l]);
        if tri {
            args.push("--triangulate");
        }
        let o = subla(&args);
        ok(&o);
        assert!(o.stderr.is_empty(), "{scheme}: {}", String::from_utf8_lossy(&o.stderr));
        let data = read(&out);
        let got: Vec<(String, std::ops::Range<u32>)> =
            data.groups.iter().map(|g| (g.name.clone(), g.faces.clone())).collect();
        assert_eq!(got, [("bottom".to_owned(), expected[0].clone()), ("rest".to_owned(), expected[1].clone())]);
        // Every face of `bottom` lies on the bottom of the box (z = 0 for
        // bilinear; near it for the smooth schemes).
        if scheme == "bilinear" {
            let t = data.mesh.topology();
            for f in expected[0].clone() {
                for &v in t.face(f as usize) {
                    let p = data.vertices.row(v as usize);
                    assert!(p[2] == 0.0 || p[1] == 0.0, "{scheme}: face {f} at {p}");
                }
            }
        }
    }
    // A hole in the first group: its children are left out and the ranges
    // close up.
    let holed = d.join("holed.obj");
    std::fs::write(&holed, cube_obj(|_| String::new(), "t hole 1/0/0 0\n")).unwrap();
    let out = d.join("holed.L1.obj");
    ok(&subla(&["subdivide", s(&holed), "-o", s(&out), "--quiet"]));
    let ranges: Vec<_> = read(&out).groups.iter().map(|g| g.faces.clone()).collect();
    assert_eq!(ranges, [0..4, 4..20]);
}

/// Texture coordinates are refined (each face's corners keep their own
/// values where every edge is a seam) and written as `vt` with `f v/vt/vn`;
/// normals are not refined as data: the refined surface's are written (one
/// per vertex: the limit surface's for Catmull-Clark and Loop, the faces'
/// for bilinear), without a warning. A scheme without
/// face-varying rules names the texture coordinates in a warning.
#[test]
fn texture_coordinates_are_refined_and_surface_normals_written() {
    let d = dir("vt");
    let input = d.join("cube.obj");
    let mut text = String::new();
    for i in 0..8 {
        text += &format!("v {} {} {}\n", i & 1, i >> 1 & 1, i >> 2);
    }
    text += "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n";
    for f in [[1, 3, 4, 2], [1, 2, 6, 5], [2, 4, 8, 6], [4, 3, 7, 8], [3, 1, 5, 7], [5, 6, 8, 7]] {
        text += &format!("f {}/1/1 {}/2/1 {}/3/1 {}/4/1\n", f[0], f[1], f[2], f[3]);
    }
    std::fs::write(&input, text).unwrap();
    let out = d.join("out.obj");
    for quiet in [false, true] {
        let mut args = vec!["subdivide", s(&input), "-o", s(&out), "--levels", "2", "--fvar", "all"];
        if quiet {
            args.push("--quiet");
        }
        let o = subla(&args);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("warning"), "quiet {quiet}: {err}");
    }
    // Linear values on the unit square of every face: each child face's
    // corners are the bilinear values at (i/4, j/4).
    let data = read(&out);
    let fv = data.texcoords.as_ref().expect("vt written");
    let t = data.mesh.topology();
    assert_eq!(t.num_faces(), 96);
    assert_eq!(fv.indices.len(), t.num_corners());
    for f in 0..t.num_faces() {
        let uv: Vec<[f64; 2]> = (t.face_ptr()[f]..t.face_ptr()[f + 1])
            .map(|c| {
                let r = fv.indices[c as usize] as usize;
                [fv.values[(r, 0)], fv.values[(r, 1)]]
            })
            .collect();
        for p in &uv {
            assert!(p.iter().all(|&x| (0.0..=1.0).contains(&x) && (4.0 * x).fract() == 0.0), "{uv:?}");
        }
        // A quarter-by-quarter square.
        let (lo, hi) = uv.iter().fold(([1f64; 2], [0f64; 2]), |(lo, hi), p| {
            ([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])])
        });
        assert_eq!([hi[0] - lo[0], hi[1] - lo[1]], [0.25, 0.25], "{uv:?}");
    }
    // The normals: one per vertex, unit, pointing away from the centre of
    // the (convex, centred) refined cube, and each the limit surface's
    // (Catmull-Clark's tangent masks at the refined vertices).
    let vn = data.normals.as_ref().expect("vn written");
    assert_eq!(vn.indices, t.face_verts());
    assert_eq!(vn.values.nrows(), t.num_vertices());
    let p = &data.vertices;
    for v in 0..t.num_vertices() {
        let n = vn.values.row(v);
        let len = n.dot(&n).sqrt();
        assert!((len - 1.0).abs() < 1e-12, "vertex {v}: |n| = {len}");
        let out_dir: f64 = (0..3).map(|k| n[k] * (p[(v, k)] - 0.5)).sum();
        assert!(out_dir > 0.0, "vertex {v}: normal {n} points inwards");
    }
    let rules = subla_scheme::tangents::TangentRules::Catmark;
    let want = subla_scheme::tangents::limit_normals(&data.mesh, p.view(), rules, subla_algebra::Par::Seq);
    assert_eq!(vn.values, want);
    // Bilinear has no limit tangents: the faces' normals.
    let flat = d.join("bilinear.obj");
    ok(&subla(&["subdivide", s(&input), "-o", s(&flat), "--scheme", "bilinear", "--quiet"]));
    let b = read(&flat);
    let bt = b.mesh.topology();
    let want = subla_mesh::normals::vertex_normals(bt, &[], b.vertices.view(), subla_algebra::Par::Seq);
    assert_eq!(b.normals.expect("vn written").values, want);
    // √3 has no face-varying rules: the values are left out, with a warning.
    let out3 = d.join("sqrt3.obj");
    let o = subla(&["subdivide", s(&input), "-o", s(&out3), "--scheme", "sqrt3", "--triangulate", "--quiet"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "warning: {}: texture coordinates (vt) were left out of {}: the sqrt3 scheme has no face-varying rules",
            s(&input),
            s(&out3)
        )),
        "{err}"
    );
    assert!(read(&out3).texcoords.is_none());
}

/// The same colours on the GPU backend (the device kernels take any
/// number of channels).
#[test]
fn colours_are_refined_on_the_gpu() {
    if gpu().is_none() {
        return;
    }
    let d = dir("gpu");
    let input = d.join("cube.obj");
    std::fs::write(&input, cube_obj(|p| format!("{} {} {}", p[0], p[1], p[2]), "")).unwrap();
    for (scheme, tri) in [("catmark", false), ("loop", true), ("sqrt3", true)] {
        let out = d.join(format!("{scheme}.obj"));
        let mut args = vec!["subdivide", s(&input), "--levels", "2", "--backend", "gpu", "--scheme", scheme];
        args.extend(["-o", s(&out), "--quiet"]);
        if tri {
            args.push("--triangulate");
        }
        ok(&subla(&args));
        let data = read(&out);
        assert_eq!(data.vertices.ncols(), 6, "{scheme}");
        for row in data.vertices.rows() {
            for k in 0..3 {
                assert_eq!(row[k].to_bits(), row[k + 3].to_bits(), "{scheme}: {row}");
            }
        }
    }
}

/// Distinct colours of a PNG, and whether its pixels are all one colour.
fn colours(path: &Path) -> usize {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    buf.chunks_exact(4).collect::<std::collections::HashSet<_>>().len()
}

/// A cube at 1e160 and at 1e-210 renders like the unit cube, not as a
/// blank picture reported as success; the driver's complaint about
/// `XDG_RUNTIME_DIR` is not printed.
#[test]
fn huge_and_tiny_meshes_render() {
    if gpu().is_none() {
        return;
    }
    let d = dir("render");
    for (name, scale) in [("unit", 1.0), ("huge", 1e160), ("tiny", 1e-210)] {
        let input = d.join(format!("{name}.obj"));
        let mut text = String::new();
        for i in 0..8 {
            text += &format!(
                "v {:e} {:e} {:e}\n",
                (i & 1) as f64 * scale,
                (i >> 1 & 1) as f64 * scale,
                (i >> 2) as f64 * scale
            );
        }
        text += "f 1 3 4 2\nf 1 2 6 5\nf 2 4 8 6\nf 4 3 7 8\nf 3 1 5 7\nf 5 6 8 7\n";
        std::fs::write(&input, text).unwrap();
        let png = d.join(format!("{name}.png"));
        let o = Command::new(env!("CARGO_BIN_EXE_subla"))
            .args(["render", s(&input), "--size", "64x48", "-o", s(&png)])
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .expect("run subla");
        ok(&o);
        assert!(o.stderr.is_empty(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(colours(&png) > 3, "{name}: the picture is blank");
    }
}

/// A picture in which nothing is drawn (every face a hole) is an error,
/// and no file is written.
#[test]
fn an_empty_picture_is_an_error() {
    if gpu().is_none() {
        return;
    }
    let d = dir("empty");
    let input = d.join("holes.obj");
    std::fs::write(&input, cube_obj(|_| String::new(), "t hole 6/0/0 0 1 2 3 4 5\n")).unwrap();
    let png = d.join("holes.png");
    let o = subla(&["render", s(&input), "--size", "64x48", "-o", s(&png)]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{err}");
    assert!(!png.exists());
}

/// An image too large for the device's memory is refused in one line,
/// not wgpu's multi-line report (on the software driver, which fails to
/// allocate it at once; a real GPU might draw it, slowly).
#[test]
fn an_image_too_large_for_the_device_is_one_line() {
    let Some(ctx) = gpu() else { return };
    if ctx.adapter_info().device_type != subla_gpu::wgpu::DeviceType::Cpu {
        return;
    }
    let d = dir("large");
    let png = d.join("large.png");
    let o = subla(&["render", "--size", "12000x12000", "-o", s(&png)]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{err}");
    assert!(err.contains("12000×12000") || err.contains("12000x12000"), "{err}");
}

/// `render --checker` draws a checker from the texture coordinates,
/// refined with the surface: warm squares appear only with the option; a
/// mesh without texture coordinates is refused with the reason.
#[test]
fn render_draws_a_checker_from_texture_coordinates() {
    if gpu().is_none() {
        return;
    }
    let d = dir("render-checker");
    let input = d.join("cube.obj");
    let mut text = String::new();
    for i in 0..8 {
        text += &format!("v {} {} {}\n", i & 1, i >> 1 & 1, i >> 2);
    }
    text += "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n";
    for f in [[1, 3, 4, 2], [1, 2, 6, 5], [2, 4, 8, 6], [4, 3, 7, 8], [3, 1, 5, 7], [5, 6, 8, 7]] {
        text += &format!("f {}/1 {}/2 {}/3 {}/4\n", f[0], f[1], f[2], f[3]);
    }
    std::fs::write(&input, text).unwrap();
    let warm = |png: &Path| {
        let file = std::fs::File::open(png).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
        let info = reader.next_frame(&mut buf).expect("png frame");
        buf.truncate(info.buffer_size());
        buf.chunks_exact(4).filter(|p| u16::from(p[0]) > u16::from(p[2]) + 20).count()
    };
    for levels in ["0", "2"] {
        let with = d.join(format!("checker{levels}.png"));
        let without = d.join(format!("plain{levels}.png"));
        let base = ["render", s(&input), "--size", "96x72", "--levels", levels];
        ok(&subla(&[&base[..], &["-o", s(&with), "--checker", "2"]].concat()));
        ok(&subla(&[&base[..], &["-o", s(&without)]].concat()));
        assert!(warm(&with) > 200, "levels {levels}: {} warm pixels", warm(&with));
        assert_eq!(warm(&without), 0, "levels {levels}");
    }
    let bare = d.join("bare.obj");
    std::fs::write(&bare, cube_obj(|_| String::new(), "")).unwrap();
    let o = subla(&["render", s(&bare), "-o", s(&d.join("bare.png")), "--checker"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no texture coordinates"));
}

/// The refined texture coordinates follow the written faces: with one value
/// per vertex equal to the vertex's (x, y) and mode `none`, each corner's
/// refined value is its vertex's refined (x, y), for Catmull-Clark and for
/// Loop (whose default halfedge path numbers faces otherwise: with texture
/// coordinates the tool takes the kernels); `--path halfedge` with Loop
/// leaves them out with a warning saying why.
#[test]
fn texture_coordinates_follow_the_written_faces() {
    let d = dir("vt-follow");
    let input = d.join("octa.obj");
    let mut text = String::new();
    let pts =
        [[1.0, 0.2, 0.1], [-1.0, 0.1, -0.2], [0.3, 1.0, 0.0], [0.0, -1.0, 0.3], [0.1, 0.0, 1.0], [-0.2, 0.3, -1.0]];
    for p in pts {
        text += &format!("v {} {} {}\nvt {} {}\n", p[0], p[1], p[2], p[0], p[1]);
    }
    for f in [[1, 3, 5], [3, 2, 5], [2, 4, 5], [4, 1, 5], [3, 1, 6], [2, 3, 6], [4, 2, 6], [1, 4, 6]] {
        text += &format!("f {0}/{0} {1}/{1} {2}/{2}\n", f[0], f[1], f[2]);
    }
    std::fs::write(&input, text).unwrap();
    for (scheme, extra) in [("loop", &[][..]), ("catmark", &[][..]), ("loop", &["--path", "slak"][..])] {
        let out = d.join(format!("{scheme}{}.obj", extra.len()));
        let mut args =
            vec!["subdivide", s(&input), "-o", s(&out), "--levels", "2", "--scheme", scheme, "--fvar", "none"];
        args.extend_from_slice(extra);
        let o = subla(&args);
        ok(&o);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"), "{}", String::from_utf8_lossy(&o.stderr));
        let data = read(&out);
        let fv = data.texcoords.as_ref().expect("vt written");
        let t = data.mesh.topology();
        for (c, &v) in t.face_verts().iter().enumerate() {
            let uv = fv.values.row(fv.indices[c] as usize);
            let p = data.vertices.row(v as usize);
            assert!((uv[0] - p[0]).abs() < 1e-12 && (uv[1] - p[1]).abs() < 1e-12, "{scheme}: corner {c}: {uv} at {p}");
        }
    }
    let out = d.join("halfedge.obj");
    let o = subla(&["subdivide", s(&input), "-o", s(&out), "--scheme", "loop", "--path", "halfedge", "--quiet"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("texture coordinates (vt) were left out") && err.contains("halfedge"), "{err}");
    assert!(read(&out).texcoords.is_none());
}
