//! OBJ parsing plus validation (both modes) must never panic; whatever it
//! accepts must round-trip through the writer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subla_mesh::Validation;
use subla_mesh::obj::{parse_obj, write_obj};

fuzz_target!(|data: &[u8]| {
    for validation in [Validation::OpenSubdiv, Validation::Manifold] {
        if let Ok(mesh) = parse_obj(data, validation) {
            let _ = mesh.mesh.topology().check_manifold();
            let mut out = Vec::new();
            write_obj(&mesh, &mut out).expect("writing to memory cannot fail");
            let again = parse_obj(&out, Validation::OpenSubdiv).expect("written OBJ must re-read");
            assert_eq!(again, mesh, "round trip changed the mesh");
        }
    }
});
