//! The example control meshes in `data/solids` are the crate's shapes,
//! written as VTK (positions bit for bit, the same cells).

use std::path::PathBuf;

use subla_volume::shapes;
use subla_volume::vtk::read_vtk_file;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/solids")
}

#[test]
fn example_files_are_the_shapes() {
    for (name, want) in shapes::examples().unwrap() {
        let got = read_vtk_file(dir().join(format!("{name}.vtk"))).unwrap();
        assert_eq!(got.mesh, want.mesh, "{name}");
        assert!(got.vertices.iter().zip(want.vertices.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}");
    }
}
