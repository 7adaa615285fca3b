//! Sizes are predicted from counts before anything is built: a build whose
//! levels would overflow the `u32` indices (20 levels, or `u32::MAX`
//! levels) is refused at once instead of building every level's topology
//! and then failing in an allocation.

use subla_loop::{LoopLak, LoopSlak};
use subla_mesh::Mesh;
use subla_scheme::testing::check_predictions;

#[test]
fn loop_builds_over_u32_are_refused_from_the_counts() {
    let tetrahedron = Mesh::from_faces(4, &[[0u32, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]]).unwrap();
    let strip = Mesh::from_faces(5, &[[0u32, 1, 2], [2, 1, 3], [2, 3, 4]]).unwrap();
    for mesh in [tetrahedron, strip] {
        check_predictions(&LoopSlak::default(), &mesh, 3);
        check_predictions(&LoopLak::default(), &mesh, 2);
    }
}
