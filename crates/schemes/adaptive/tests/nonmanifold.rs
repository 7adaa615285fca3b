//! Non-manifold meshes: three planar sheets ("pages") joined along one
//! edge, like the pages of a book. The joint is a non-manifold edge, so each
//! page's patches may use only that page's control points (a corner's span
//! ends at the non-manifold edge): the limit surface of every page then lies
//! in the page's plane, and any point taken from another page would pull it
//! out of it. Faces that use a vertex twice stay refused, naming the vertex.

use ndarray::Array2;
use subla_adaptive::{AdaptiveError, EndCap, PatchTable, Sample, Scheme, SparseRefinement};
use subla_algebra::Par;
use subla_mesh::{Mesh, MeshBuilder, Validation};

/// Pages at these angles around the x axis.
const ANGLES: [f64; 3] = [0.0, 2.0, 4.2];
/// Quads along the spine.
const NX: usize = 3;
/// Rows of quads away from the spine.
const NY: usize = 3;

/// The book: the spine's `NX + 1` vertices on the x axis, then each page's
/// rows; quads (or each quad split into two triangles), and the positions.
fn book(triangles: bool) -> (Mesh, Array2<f64>, Vec<usize>) {
    let spine = NX + 1;
    let per_page = (NX + 1) * NY;
    let nv = spine + ANGLES.len() * per_page;
    let mut x = Array2::zeros((nv, 3));
    for i in 0..spine {
        x[[i, 0]] = i as f64;
    }
    let mut faces: Vec<Vec<u32>> = Vec::new();
    let mut page_of_face = Vec::new();
    for (p, &a) in ANGLES.iter().enumerate() {
        let id = |i: usize, j: usize| -> u32 {
            if j == 0 { i as u32 } else { (spine + p * per_page + (j - 1) * (NX + 1) + i) as u32 }
        };
        for j in 1..=NY {
            for i in 0..=NX {
                let v = id(i, j) as usize;
                // A little waviness within the plane keeps the patches from
                // being trivially flat in their own parameters.
                let r = j as f64 + 0.2 * ((i * j) as f64).sin();
                x[[v, 0]] = i as f64 + 0.15 * (j as f64).cos();
                x[[v, 1]] = r * a.cos();
                x[[v, 2]] = r * a.sin();
            }
        }
        for j in 0..NY {
            for i in 0..NX {
                let q = [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)];
                if triangles {
                    faces.push(vec![q[0], q[1], q[2]]);
                    faces.push(vec![q[0], q[2], q[3]]);
                    page_of_face.extend([p, p]);
                } else {
                    faces.push(q.to_vec());
                    page_of_face.push(p);
                }
            }
        }
    }
    let mesh = MeshBuilder::from_faces(nv, &faces).validation(Validation::OpenSubdiv).build(Par::Seq).expect("book");
    (mesh, x, page_of_face)
}

/// The largest distance of a page's limit points from the page's plane,
/// relative to the book's size, over a grid of every face.
fn off_plane(scheme: Scheme, iso: u32, end_cap: EndCap) -> f64 {
    let triangles = scheme == Scheme::Loop;
    let (mesh, x, page_of_face) = book(triangles);
    let t = mesh.topology();
    assert!(
        (0..t.num_vertices()).any(|v| t.vertex_tags()[v] & subla_mesh::topology::vertex_tag::NON_MANIFOLD != 0),
        "the book is non-manifold"
    );
    let refinement = SparseRefinement::build_scheme(scheme, &mesh, iso, None).expect("refinement");
    let table = PatchTable::new(refinement, end_cap).expect("patch table");
    let mut samples = Vec::new();
    let mut pages = Vec::new();
    for (f, &p) in page_of_face.iter().enumerate() {
        for a in 0..=6 {
            for b in 0..=6 {
                let (u, v) = (a as f64 / 6.0, b as f64 / 6.0);
                if triangles && u + v > 1.0 {
                    continue;
                }
                samples.push(Sample { ptex: f as u32, u, v });
                pages.push(p);
            }
        }
    }
    let limit = table.evaluate(x.view(), &samples, Par::Seq).expect("evaluation");
    assert!(limit.missing.is_empty(), "every face has patches");
    let mut worst = 0f64;
    for (i, &p) in pages.iter().enumerate() {
        let a = ANGLES[p];
        // The page's plane holds the x axis and (0, cos a, sin a).
        let d = -limit.position[[i, 1]] * a.sin() + limit.position[[i, 2]] * a.cos();
        // The derivatives lie in the plane too.
        let du = -limit.du[[i, 1]] * a.sin() + limit.du[[i, 2]] * a.cos();
        let dv = -limit.dv[[i, 1]] * a.sin() + limit.dv[[i, 2]] * a.cos();
        worst = worst.max(d.abs()).max(du.abs()).max(dv.abs());
        // And the page's points are on its side of the spine (up to the
        // slight overshoot of end caps and extrapolated boundary points,
        // which have no convex-hull property), not on another page's.
        let along = limit.position[[i, 1]] * a.cos() + limit.position[[i, 2]] * a.sin();
        assert!(along > -1e-3, "page {p}: a limit point behind the spine ({along})");
    }
    worst / NY as f64
}

#[test]
fn each_page_of_a_catmark_book_stays_in_its_plane() {
    for iso in [1, 2, 3] {
        for end_cap in [EndCap::GregoryBasis, EndCap::BSplineBasis] {
            let e = off_plane(Scheme::Catmark, iso, end_cap);
            assert!(e < 1e-13, "iso {iso} {end_cap:?}: off the page's plane by {e:e}");
        }
    }
}

#[test]
fn each_page_of_a_loop_book_stays_in_its_plane() {
    for iso in [1, 2, 3] {
        for end_cap in [EndCap::GregoryBasis, EndCap::BSplineBasis] {
            let e = off_plane(Scheme::Loop, iso, end_cap);
            assert!(e < 1e-13, "iso {iso} {end_cap:?}: off the page's plane by {e:e}");
        }
    }
}

#[test]
fn a_face_with_a_repeated_vertex_is_refused_naming_it() {
    // Two quads, the second folded onto a degenerate edge 4-4.
    let faces = [vec![0u32, 1, 2, 3], vec![1, 0, 4, 4]];
    let mesh = MeshBuilder::from_faces(5, &faces).validation(Validation::OpenSubdiv).build(Par::Seq).expect("mesh");
    match SparseRefinement::build(&mesh, 2, None) {
        Err(AdaptiveError::NotManifold { vertex }) => assert_eq!(vertex, 4),
        other => panic!("expected NotManifold at vertex 4, got {other:?}"),
    }
}
