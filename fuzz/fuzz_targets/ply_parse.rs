//! PLY parsing plus validation must never panic; reading the same bytes as
//! a stream accepts exactly what the in-memory parse accepts, and gives the
//! same mesh.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subla_mesh::Validation;
use subla_mesh::ply::{parse_ply, read_ply_from};

fuzz_target!(|data: &[u8]| {
    let parsed = parse_ply(data, Validation::OpenSubdiv);
    let streamed = read_ply_from(data, Validation::OpenSubdiv, "fuzz.ply");
    match (parsed, streamed) {
        (Ok(p), Ok(s)) => assert_eq!(p, s, "stream and memory disagree"),
        (Err(_), Err(_)) => {}
        (p, s) => panic!("stream and memory disagree: {:?} / {:?}", p.map(|_| ()), s.map(|_| ())),
    }
});
