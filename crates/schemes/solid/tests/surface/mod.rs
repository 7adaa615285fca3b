//! The boundary surface of a volume, as the tests of refinement compare it
//! with Catmull-Clark surface subdivision.

use ndarray::Array2;
use subla_algebra::Par;
use subla_mesh::{Mesh, MeshBuilder};
use subla_volume::VolMesh;

/// The boundary surface of a volume (its own vertex numbering) with the
/// volume's sharp boundary edges and corners as infinitely sharp tags, and
/// the volume vertex of each surface vertex.
pub(crate) fn boundary_surface(m: &VolMesh) -> (Mesh, Vec<u32>) {
    let mut sid = vec![u32::MAX; m.num_vertices()];
    let mut back = Vec::new();
    let mut faces: Vec<Vec<u32>> = Vec::new();
    for f in (0..m.num_faces()).filter(|&f| m.is_boundary_face(f)) {
        let face = m.face(f).iter().map(|&v| {
            if sid[v as usize] == u32::MAX {
                sid[v as usize] = back.len() as u32;
                back.push(v);
            }
            sid[v as usize]
        });
        faces.push(face.collect());
    }
    let mut b = MeshBuilder::from_faces(back.len(), &faces);
    for e in m.sharp_edges() {
        let [p, q] = m.edge(e as usize);
        b = b.crease(sid[p as usize], sid[q as usize], 10.0);
    }
    for v in m.corners() {
        b = b.corner(sid[v as usize], 10.0);
    }
    (b.build(Par::Seq).unwrap(), back)
}

/// Asserts that every point of `surface` (refined surface points) is a
/// point of `volume` (refined volume points) among the volume vertices
/// `back`, to 1e-12: matched by position.
pub(crate) fn assert_surface_in_volume(name: &str, surface: &Array2<f64>, volume: &Array2<f64>, back: &[u32]) {
    assert_eq!(back.len(), surface.nrows(), "{name}: boundary vertices");
    for i in 0..surface.nrows() {
        let best = back
            .iter()
            .map(|&v| (0..3).map(|k| (volume[[v as usize, k]] - surface[[i, k]]).abs()).fold(0.0, f64::max))
            .fold(f64::INFINITY, f64::min);
        assert!(best < 1e-12, "{name}: surface point {i} is {best} from the volume's boundary");
    }
}
