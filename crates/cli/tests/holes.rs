//! A mesh whose every face is a hole: nothing to write unless the holes are
//! kept, and the error says so (it used to say the mesh had no faces).

use std::path::PathBuf;
use std::process::Command;

fn subla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

#[test]
fn a_mesh_of_holes_only_is_refused_naming_the_holes() {
    let dir = std::env::temp_dir().join(format!("subla-holes-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("holes.obj");
    std::fs::write(&input, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nt hole 1/0/0 0\n").unwrap();
    let out: PathBuf = dir.join("out.obj");
    for scheme in ["catmark", "bilinear"] {
        let o = subla(&["subdivide", input.to_str().unwrap(), "--scheme", scheme, "-o", out.to_str().unwrap()]);
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("every face is a hole") && err.contains("--keep-holes"), "{err}");
        assert!(!err.contains("no faces"), "{err}");
        assert!(!out.exists());
        let o = subla(
            &["subdivide", input.to_str().unwrap(), "--scheme", scheme, "--keep-holes", "-o"]
                .into_iter()
                .chain([out.to_str().unwrap()])
                .collect::<Vec<_>>(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::remove_file(&out).unwrap();
    }
}
