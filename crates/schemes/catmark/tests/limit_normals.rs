//! Limit normals from Catmull-Clark's tangent masks
//! (`subla_scheme::tangents`) at the vertices of a refined mesh agree with
//! the normals the surface converges to: refined six levels further, the
//! faces around each vertex's descendant have the same normal to within a
//! few thousandths of a radian, and the masks give the same normal at that
//! descendant (to 1e-10 rad) wherever they are exact. Shapes with
//! extraordinary vertices (valence 3, 5, 8), smooth and extraordinary
//! boundaries, both boundary rules, darts and corners (vertices next to
//! semi-sharp features, which keep decaying, are left out).

mod common;
#[path = "common/limit_normals.rs"]
mod normals;

use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_scheme::Refiner;
use subla_scheme::tangents::TangentRules;

#[test]
fn limit_normals_are_the_normals_the_surface_converges_to() {
    let shapes = [
        "catmark_cube",
        "catmark_fan",
        "catmark_edgeonly",
        "catmark_edgecorner",
        "catmark_xord_boundary",
        "catmark_pole8",
        "catmark_dart_edgeonly",
        "catmark_torus",
        "catmark_pyramid",
    ];
    let build = |m: &subla_mesh::Mesh, l| CatmarkSlak.build(m, l, Par::Rayon).unwrap();
    normals::check(&shapes, build, TangentRules::Catmark, 2, 0.12);
}
