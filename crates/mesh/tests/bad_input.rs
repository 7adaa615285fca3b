//! The bad-input corpus in `data/bad/`: every file gives the error that
//! `EXPECTED.tsv` names (variant and message), and nothing panics.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use subla_algebra::Par;
use subla_mesh::{MeshError, Topology, Validation};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/bad")
}

fn read(path: &std::path::Path, validation: Validation) -> Result<subla_mesh::MeshData, MeshError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("ply") => subla_mesh::ply::read_ply(path, validation),
        _ => subla_mesh::obj::read_obj(path, validation),
    }
}

#[test]
fn every_corpus_file_gives_its_error_without_panicking() {
    let table = std::fs::read_to_string(corpus().join("EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for row in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (file, variant, message, validation) = (cols[0], cols[1], cols[2], cols[3]);
        let validation = if validation == "manifold" { Validation::Manifold } else { Validation::OpenSubdiv };
        let path = corpus().join(file);
        let outcome = catch_unwind(AssertUnwindSafe(|| read(&path, validation)));
        match outcome {
            Err(_) => failures.push(format!("{file}: panicked")),
            Ok(Ok(_)) => failures.push(format!("{file}: accepted, expected {variant}")),
            Ok(Err(e)) => {
                let debug = format!("{e:?}");
                let shown = e.to_string();
                if !debug.starts_with(variant) {
                    failures.push(format!("{file}: got {debug}, expected {variant}"));
                } else if !shown.contains(message) {
                    failures.push(format!("{file}: message {shown:?} does not contain {message:?}"));
                }
            }
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} of {checked} corpus files failed:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 40, "corpus has only {checked} files");
    // Every file in the folder is listed.
    let listed: std::collections::BTreeSet<String> =
        table.lines().skip(1).filter_map(|l| l.split('\t').next()).map(String::from).collect();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            name == "EXPECTED.tsv" || name == "README.md" || listed.contains(&name),
            "{name} is not listed in EXPECTED.tsv"
        );
    }
}

#[test]
fn non_manifold_corpus_files_are_accepted_and_tagged_in_the_default_mode() {
    for file in [
        "repeated_vertex.obj",
        "degenerate_edge.obj",
        "nonmanifold_edge_fin.obj",
        "inconsistent_orientation.obj",
        "bowtie_vertex.obj",
    ] {
        let d = read(&corpus().join(file), Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!d.mesh.topology().is_manifold(), "{file} should be tagged non-manifold");
    }
}

#[test]
fn sizes_over_u32_are_errors() {
    let e = Topology::build(1usize << 33, vec![0, 3], vec![0, 1, 2], Par::Seq).unwrap_err();
    assert!(matches!(e, MeshError::TooLarge { what: "number of vertices", .. }), "{e}");
}

#[test]
fn random_bytes_never_panic() {
    // A cheap in-test fuzz: mutated copies of a valid file.
    let base = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/osd/catmark_cube_creases0.obj"),
    )
    .unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2000 {
        let mut b = base.clone();
        for _ in 0..(next() % 8 + 1) {
            let i = (next() as usize) % b.len();
            match next() % 3 {
                0 => b[i] = next() as u8,
                1 => {
                    b.remove(i);
                }
                _ => b.insert(i, b"-0123456789 /\n\\t#.ef"[(next() % 20) as usize]),
            }
        }
        let r = catch_unwind(AssertUnwindSafe(|| subla_mesh::obj::parse_obj(&b, Validation::Manifold)));
        assert!(r.is_ok(), "panic on input {:?}", String::from_utf8_lossy(&b));
    }
}
