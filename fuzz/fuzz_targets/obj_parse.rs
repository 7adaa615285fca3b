//! OBJ parsing plus validation (both modes) must never panic; whatever it
//! accepts must round-trip through the writer, and reading the same bytes
//! as a stream accepts exactly that, giving the same mesh.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subla_mesh::Validation;
use subla_mesh::obj::{parse_obj, read_obj_from, write_obj};

fuzz_target!(|data: &[u8]| {
    for validation in [Validation::OpenSubdiv, Validation::Manifold] {
        let streamed = read_obj_from(data, validation, "fuzz.obj");
        let parsed = parse_obj(data, validation);
        match (&parsed, &streamed) {
            (Ok(p), Ok(s)) => assert_eq!(p, s, "stream and memory disagree"),
            (Err(_), Err(_)) => {}
            (p, s) => panic!("stream and memory disagree: {:?} / {:?}", p.as_ref().map(|_| ()), s.as_ref().map(|_| ())),
        }
        if let Ok(mesh) = parsed {
            let _ = mesh.mesh.topology().check_manifold();
            let mut out = Vec::new();
            write_obj(&mesh, &mut out).expect("writing to memory cannot fail");
            let again = parse_obj(&out, Validation::OpenSubdiv).expect("written OBJ must re-read");
            // What was skipped on reading is not written.
            let kept = subla_mesh::MeshData { skipped: Vec::new(), ..mesh };
            assert_eq!(again, kept, "round trip changed the mesh");
        }
    }
});
