//! Sizes are predicted from counts before anything is built: a build whose
//! levels would overflow the `u32` indices (20 levels of a cube, or
//! `u32::MAX` levels) is refused at once instead of building every level's
//! topology and then failing in an allocation.

use subla_catmark::{Bilinear, CatmarkLak, CatmarkSlak};
use subla_mesh::Mesh;
use subla_scheme::testing::check_predictions;

fn cube() -> Mesh {
    let faces: [[u32; 4]; 6] = [[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]];
    Mesh::from_faces(8, &faces).unwrap()
}

/// A pentagon, a triangle and a quad sharing edges, with a boundary.
fn open_mixed() -> Mesh {
    let faces: Vec<Vec<u32>> = vec![vec![0, 1, 2, 3, 4], vec![1, 5, 2], vec![2, 5, 6, 3]];
    Mesh::from_faces(7, &faces).unwrap()
}

#[test]
fn catmark_builds_over_u32_are_refused_from_the_counts() {
    for mesh in [cube(), open_mixed()] {
        check_predictions(&CatmarkSlak, &mesh, 3);
        check_predictions(&CatmarkLak, &mesh, 2);
    }
}

#[test]
fn bilinear_builds_over_u32_are_refused_from_the_counts() {
    for mesh in [cube(), open_mixed()] {
        check_predictions(&Bilinear, &mesh, 3);
    }
}
