//! Sizes are predicted from counts before anything is built: a build whose
//! levels would overflow the `u32` indices (20 levels, or `u32::MAX`
//! levels) is refused at once instead of building every level's topology
//! and then failing in an allocation.

use subla_mesh::Mesh;
use subla_scheme::testing::check_predictions;
use subla_sqrt3::{Sqrt3Lak, Sqrt3Slak};

#[test]
fn sqrt3_builds_over_u32_are_refused_from_the_counts() {
    let tetrahedron = Mesh::from_faces(4, &[[0u32, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]]).unwrap();
    // Open: boundary-splitting steps on every second level.
    let fan = Mesh::from_faces(5, &[[0u32, 1, 2], [0, 2, 3], [0, 3, 4]]).unwrap();
    for mesh in [tetrahedron, fan] {
        check_predictions(&Sqrt3Slak::new(), &mesh, 4);
        check_predictions(&Sqrt3Lak::new(), &mesh, 3);
    }
}
