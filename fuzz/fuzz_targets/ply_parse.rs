//! PLY parsing plus validation must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subla_mesh::Validation;
use subla_mesh::ply::parse_ply;

fuzz_target!(|data: &[u8]| {
    let _ = parse_ply(data, Validation::OpenSubdiv);
});
