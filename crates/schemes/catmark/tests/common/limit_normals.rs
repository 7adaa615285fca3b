//! The limit-normal checks of both schemes' `limit_normals.rs`.

use ndarray::Array2;
use subla_algebra::Par;
use subla_mesh::Mesh;
use subla_mesh::normals::vertex_normals;
use subla_scheme::tangents::{TangentRules, limit_normals};
use subla_scheme::{Plan, eval};

use crate::common;

/// Largest angles, over the vertices of `shape` refined once, between
/// the limit normal and (a) the limit normal at the same vertex six levels
/// on (the masks are exact where that is zero), (b) the normal of the
/// faces around the vertex six levels on; (c) and (d): (b) and (a) over the
/// extraordinary boundary vertices (more than `xord_faces` faces), where
/// OpenSubdiv's masks approximate the tangent plane of the standard
/// boundary rules. `build(mesh, levels)` is the scheme's vertex plan.
pub(crate) fn angles<P: Plan>(
    shape: &str,
    build: impl Fn(&Mesh, u32) -> P,
    rules: TangentRules,
    xord_faces: usize,
) -> [f64; 4] {
    let data = common::read(&common::data().join(format!("meshes/osd/{shape}.obj")));
    let fine = build(&data.mesh, 7);
    let p7 = eval(&fine, data.positions(), Par::Rayon).unwrap();
    let mesh7 = fine.refined(7, Par::Rayon).unwrap();
    let face7 = vertex_normals(mesh7.topology(), mesh7.holes(), p7.view(), Par::Rayon);
    let lim7 = limit_normals(mesh7, p7.view(), rules, Par::Rayon);
    let coarse = build(&data.mesh, 1);
    let p1 = eval(&coarse, data.positions(), Par::Rayon).unwrap();
    let mesh1 = coarse.refined(1, Par::Rayon).unwrap();
    let n1 = limit_normals(mesh1, p1.view(), rules, Par::Rayon);
    // A vertex keeps its number as it is refined (vertex points first):
    // its limit position is where its descendant converges.
    let limit: Array2<f64> = {
        let l = coarse.limit(Par::Rayon).unwrap();
        subla_algebra::spmv::spmv_csr(l.as_ref(), p1.view(), |&w, _, _| w, Par::Seq)
    };
    let t = mesh1.topology();
    let semi = |s: f32| s > 0.0 && s < subla_mesh::tags::SHARPNESS_INFINITE;
    let mut worst = [0.0f64; 4];
    for v in 0..t.num_vertices() {
        // Semi-sharp features still decay below this level: its limit
        // masks (sharp as they stand) are not the surface's.
        if semi(mesh1.vertex_sharpness()[v])
            || t.vertex_edges(v).iter().any(|&e| semi(mesh1.edge_sharpness()[e as usize]))
        {
            continue;
        }
        let d: f64 = (0..3).map(|k| (limit[(v, k)] - p7[(v, k)]).powi(2)).sum::<f64>().sqrt();
        assert!(d < 1e-2, "{shape}: vertex {v} is not its own descendant ({d})");
        // Creases inside the surface have a normal on each side.
        let sharp = t.vertex_edges(v).iter().filter(|&&e| mesh1.edge_sharpness()[e as usize] > 0.0).count();
        let boundary = t.is_boundary_vertex(v);
        if (sharp >= 2 && !boundary) || mesh1.vertex_sharpness()[v] > 0.0 || (boundary && sharp > 2) {
            continue;
        }
        let angle = |m: &Array2<f64>| {
            let (a, b) = ([n1[(v, 0)], n1[(v, 1)], n1[(v, 2)]], [m[(v, 0)], m[(v, 1)], m[(v, 2)]]);
            let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
            let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt().atan2(dot)
        };
        if boundary && t.vertex_corners(v).len() > xord_faces {
            worst[2] = worst[2].max(angle(&face7));
            worst[3] = worst[3].max(angle(&lim7));
        } else {
            worst[0] = worst[0].max(angle(&lim7));
            worst[1] = worst[1].max(angle(&face7));
        }
    }
    worst
}

/// Checks [`angles`] on every shape: exact (below 1e-10 rad) where the
/// masks are, within 5e-3 rad of the converged faces' normals, and within
/// `xord_limit` at extraordinary boundary vertices.
pub(crate) fn check<P: Plan>(
    shapes: &[&str],
    build: impl Fn(&Mesh, u32) -> P,
    rules: TangentRules,
    xord_faces: usize,
    xord_limit: f64,
) {
    for shape in shapes {
        let [exact, faces, xord, xord_moves] = angles(shape, &build, rules, xord_faces);
        println!("{shape}: {exact:e} {faces:e} {xord:e} {xord_moves:e}");
        assert!(exact < 1e-10, "{shape}: the limit normal moves by {exact} rad as the mesh is refined");
        assert!(faces < 5e-3, "{shape}: limit normals off the surface's by {faces} rad");
        // OpenSubdiv's masks at extraordinary boundary vertices do not
        // annihilate every other eigencomponent of the ring: their normal
        // settles as the ring approaches its characteristic shape.
        assert!(
            xord < xord_limit && xord_moves < xord_limit,
            "{shape}: extraordinary boundary normals off by {xord} rad ({xord_moves} between levels)"
        );
    }
}
