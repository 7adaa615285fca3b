//! Limit normals from Loop's tangent masks (`subla_scheme::tangents`) at
//! the vertices of a refined mesh agree with the normals the surface
//! converges to: refined six levels further, the faces around each vertex's
//! descendant have the same normal to within a few thousandths of a radian,
//! and the masks give the same normal at that descendant (to 1e-10 rad)
//! wherever they are exact. Shapes with extraordinary vertices (valence 3
//! to 64), smooth and extraordinary boundaries, both boundary rules and
//! corners.

#[path = "../../catmark/tests/common/mod.rs"]
mod common;
#[path = "../../catmark/tests/common/limit_normals.rs"]
mod normals;

use subla_algebra::Par;
use subla_loop::LoopSlak;
use subla_scheme::Refiner;
use subla_scheme::tangents::TangentRules;

#[test]
fn limit_normals_are_the_normals_the_surface_converges_to() {
    let shapes = [
        "loop_icosahedron",
        "loop_tetrahedron",
        "loop_cube",
        "loop_pole64",
        "loop_xord_boundary",
        "loop_triangle_edgeonly",
        "loop_triangle_edgecorner",
        "loop_saddle_edgeonly",
        "loop_saddle_edgecorner",
    ];
    let build = |m: &subla_mesh::Mesh, l| LoopSlak::new().build(m, l, Par::Rayon).unwrap();
    normals::check(&shapes, build, TangentRules::Loop, 3, 0.2);
}
