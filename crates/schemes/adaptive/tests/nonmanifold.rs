//! Non-manifold meshes: three planar sheets ("pages") joined along one
//! edge, like the pages of a book. The joint is a non-manifold edge, so each
//! page's patches may use only that page's control points (a corner's span
//! ends at the non-manifold edge): the limit surface of every page then lies
//! in the page's plane, and any point taken from another page would pull it
//! out of it. Faces that use a vertex twice stay refused, naming the vertex.

use ndarray::Array2;
use subla_adaptive::{EndCap, PatchTable, Sample, Scheme, SparseRefinement};
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

/// Points along every edge two quads share, from both sides, on meshes
/// whose faces use a vertex twice (a degenerate edge from the vertex to
/// itself); the limit matrix's rows sum to one.
#[test]
fn faces_with_a_repeated_vertex_are_refined_and_patched() {
    // Two quads, the second folded onto a degenerate edge 4-4; a pole of
    // eight quads each with a degenerate edge at vertex 5 (as OpenSubdiv's
    // `catmark_nonman_quadpole8`, built here to keep the test self-contained).
    let folded = (5, vec![vec![0u32, 1, 2, 3], vec![1, 0, 4, 4]]);
    let ring: Vec<u32> = (0..8).collect();
    let mut pole_faces: Vec<Vec<u32>> = (0..8).map(|i| vec![ring[i], ring[(i + 1) % 8], 8, 8]).collect();
    // An outer ring of quads, so the pole's spokes are not all boundary.
    pole_faces.extend((0..8u32).map(|i| vec![9 + i, 9 + (i + 1) % 8, (i + 1) % 8, i]));
    let pole = (17, pole_faces);
    for (name, (nv, faces), iso) in [("folded", folded.clone(), 2), ("folded", folded, 3), ("pole", pole, 3)] {
        let mesh =
            MeshBuilder::from_faces(nv, &faces).validation(Validation::OpenSubdiv).build(Par::Seq).expect("mesh");
        let t = mesh.topology();
        assert!((0..nv).any(|v| t.vertex_tags()[v] & subla_mesh::topology::vertex_tag::REPEATED != 0));
        let mut x = Array2::zeros((nv, 3));
        for v in 0..nv {
            let a = v as f64 * 0.9;
            x[[v, 0]] = a.cos() * (1.0 + 0.1 * v as f64);
            x[[v, 1]] = a.sin() * (1.0 + 0.05 * v as f64);
            x[[v, 2]] = 0.3 * (1.7 * a).sin();
        }
        let refinement = SparseRefinement::build(&mesh, iso, None).expect("refinement");
        // The two halves of a degenerate edge stay two edges below it.
        let l1 = refinement.levels()[1].mesh().topology();
        let twins = (0..l1.num_edges()).filter(|&e| l1.edge_tags()[e] & subla_mesh::topology::edge_tag::DUPLICATE != 0);
        assert!(twins.count() > 0, "{name}: the halves of the degenerate edges were merged");
        let table = PatchTable::new(refinement, EndCap::GregoryBasis).expect("patch table");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let at = |i: usize, s: f64| match i {
            0 => (s, 0.0),
            1 => (1.0, s),
            2 => (1.0 - s, 1.0),
            _ => (0.0, 1.0 - s),
        };
        for e in 0..t.num_edges() {
            let corners = t.edge_corners(e);
            let [p, q] = t.edge(e);
            if corners.len() != 2 || p == q {
                continue;
            }
            let side = |c: u32| {
                let f = t.corner_faces()[c as usize] as usize;
                (f, c as usize - t.face_ptr()[f] as usize)
            };
            let ((f0, i0), (f1, i1)) = (side(corners[0]), side(corners[1]));
            for k in 0..=8 {
                let s = f64::from(k) / 8.0;
                let ((u0, v0), (u1, v1)) = (at(i0, s), at(i1, 1.0 - s));
                a.push(Sample { ptex: f0 as u32, u: u0, v: v0 });
                b.push(Sample { ptex: f1 as u32, u: u1, v: v1 });
            }
        }
        assert!(!a.is_empty());
        let pa = table.evaluate(x.view(), &a, Par::Seq).expect("evaluate");
        let pb = table.evaluate(x.view(), &b, Par::Seq).expect("evaluate");
        for i in 0..a.len() {
            for c in 0..3 {
                let d = (pa.position[[i, c]] - pb.position[[i, c]]).abs();
                assert!(d < 1e-12, "{name} iso {iso}: {:?} and {:?} differ by {d:e}", a[i], b[i]);
            }
        }
        let m = table.limit_matrices(&a, Par::Seq).expect("limit matrices");
        assert!(m.missing.is_empty(), "{name}: samples without a patch: {:?}", m.missing);
        for r in 0..a.len() {
            let sum: f64 = m.p.row(r).1.iter().sum();
            assert!((sum - 1.0).abs() < 1e-12, "{name}: row {r} sums to {sum}");
        }
    }
}
