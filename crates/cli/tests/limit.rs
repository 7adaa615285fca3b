//! `subla limit` writes OpenSubdiv's limit-golden format and agrees with
//! the goldens; `subla tessellate` writes a closed OBJ with normals; bad
//! options are refused with one line naming them.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn subla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("subla-limit-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|x| x.parse().expect("a number")).collect())
        .collect()
}

#[test]
fn limit_files_match_opensubdiv() {
    let d = dir();
    for (shape, golden, extra) in [
        ("catmark_cube", "catmark_cube.iso3.gregory.txt.gz", &["--isolation", "3", "--grid", "5"][..]),
        // Faces that use a vertex twice (a degenerate edge each).
        (
            "catmark_nonman_quadpole8",
            "catmark_nonman_quadpole8.iso3.gregory.txt.gz",
            &["--isolation", "3", "--grid", "5"][..],
        ),
        (
            "catmark_hole_test1",
            "catmark_hole_test1.iso2.bspline.txt.gz",
            &["--isolation", "2", "--endcap", "bspline", "--grid", "3"][..],
        ),
        (
            "catmark_fvar_bound3",
            "catmark_fvar_bound3.iso3.gregory.selected.txt.gz",
            &["--isolation", "3", "--grid", "3", "--select", "SELECT"][..],
        ),
    ] {
        let out = d.join(format!("{shape}.txt"));
        let select = data().join("golden/limit/catmark_fvar_bound3.iso3.gregory.selected.faces");
        let mut args = vec!["limit", "-q"];
        let mesh = data().join(format!("meshes/osd/{shape}.obj"));
        args.push(mesh.to_str().unwrap());
        args.extend(extra.iter().map(|a| if *a == "SELECT" { select.to_str().unwrap() } else { a }));
        args.extend(["-o", out.to_str().unwrap()]);
        let o = subla(&args);
        assert!(o.status.success(), "{shape}: {}", String::from_utf8_lossy(&o.stderr));
        let ours = std::fs::read_to_string(&out).unwrap();
        let mut theirs = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(data().join("golden/limit").join(golden)).unwrap())
            .read_to_string(&mut theirs)
            .unwrap();
        // Same header counts.
        let level_line = |t: &str| t.lines().nth(1).unwrap().split(':').nth(1).unwrap().trim().to_owned();
        assert_eq!(level_line(&ours), level_line(&theirs), "{shape}");
        let patches = |t: &str| {
            t.lines().next().unwrap().split_whitespace().find(|w| w.starts_with("patches=")).unwrap().to_owned()
        };
        assert_eq!(patches(&ours), patches(&theirs), "{shape}");
        let (a, b) = (rows(&ours), rows(&theirs));
        assert_eq!(a.len(), b.len(), "{shape}: sample count");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x[..3], y[..3], "{shape}: sample order");
            for k in 3..12 {
                assert!(
                    x[k].is_nan() == y[k].is_nan() && (x[k].is_nan() || (x[k] - y[k]).abs() < 1e-9),
                    "{shape}: {x:?} vs {y:?}"
                );
            }
        }
    }
}

#[test]
fn tessellations_are_closed_objs_with_normals() {
    let d = dir();
    let out = d.join("pyramid.obj");
    let mesh = data().join("meshes/osd/catmark_pyramid.obj");
    let o = subla(&["tessellate", "-q", mesh.to_str().unwrap(), "--rate", "4", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = subla_mesh::obj::read_obj(&out, subla_mesh::Validation::OpenSubdiv).unwrap();
    let t = back.mesh.topology();
    assert!(t.is_closed() && t.is_manifold(), "the tessellation of a closed mesh is closed");
    // 1 quad (16 quads) and 4 triangles (3 sub-faces of 2 x 2 each).
    assert_eq!(back.mesh.num_faces(), 16 + 4 * 3 * 4);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("vn ")).count(), back.mesh.num_vertices());

    let o = subla(&["tessellate", mesh.to_str().unwrap(), "--rate", "3", "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rate 3 is odd"), "{err}");
}

#[test]
fn bad_options_are_refused_in_one_line() {
    let d = dir();
    let out = d.join("x.txt");
    let cube = data().join("meshes/osd/catmark_cube.obj");
    let sel = d.join("sel.txt");
    std::fs::write(&sel, "0\n# a comment\n2 # the third\nseven\n").unwrap();
    for (args, want) in [
        (vec!["--isolation", "0"], "isolation level 0 is outside 1-10"),
        (vec!["--grid", "0"], "--grid 0"),
        (vec!["--select", sel.to_str().unwrap()], "sel.txt:4: `seven` is not a face index"),
        (vec!["--scheme", "loop"], "face 0 has 4 vertices"),
    ] {
        let mut all = vec!["limit", cube.to_str().unwrap(), "-o", out.to_str().unwrap()];
        all.extend(args);
        let o = subla(&all);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    // Non-manifold meshes are refined.
    let fan = data().join("meshes/osd/catmark_fan.obj");
    let o = subla(&["limit", fan.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The input is never the output.
    let o = subla(&["limit", cube.to_str().unwrap(), "-o", cube.to_str().unwrap()]);
    assert!(!o.status.success());
}
