//! The published test shapes: counts, Euler characteristic, closedness,
//! valences, orientation (outward normals), and the typed errors.

use std::f64::consts::TAU;

use subla_algebra::Par;
use subla_mesh::normals::vertex_normals;
use subla_mesh::topology::vertex_tag;
use subla_mesh::{MeshData, MeshError, shapes};

/// V − E + F.
fn euler(d: &MeshData) -> i64 {
    let t = d.mesh.topology();
    t.num_vertices() as i64 - t.num_edges() as i64 + t.num_faces() as i64
}

fn valences(d: &MeshData) -> Vec<usize> {
    let t = d.mesh.topology();
    (0..t.num_vertices()).map(|v| t.vertex_edges(v).len()).collect()
}

/// Closed solids around the origin: every vertex normal points away from it.
fn outward(d: &MeshData) -> bool {
    let n = vertex_normals(d.mesh.topology(), d.mesh.holes(), d.positions(), Par::Seq);
    (0..d.mesh.num_vertices()).all(|v| (0..3).map(|k| n[(v, k)] * d.positions()[(v, k)]).sum::<f64>() > 0.0)
}

#[test]
fn platonic_solids() {
    for (d, v, e, f, order, valence) in [
        (shapes::tetrahedron(), 4, 6, 4, 3, 3),
        (shapes::cube(), 8, 12, 6, 4, 3),
        (shapes::octahedron(), 6, 12, 8, 3, 4),
        (shapes::icosahedron(), 12, 30, 20, 3, 5),
        (shapes::dodecahedron(), 20, 30, 12, 5, 3),
    ] {
        let t = d.mesh.topology();
        assert_eq!((t.num_vertices(), t.num_edges(), t.num_faces()), (v, e, f));
        assert!(t.is_closed() && t.is_manifold());
        assert!((0..f).all(|i| t.face(i).len() == order));
        assert!(valences(&d).iter().all(|&n| n == valence));
        assert!(outward(&d), "faces turn outward: {v} vertices");
        // On the unit sphere.
        let pos = d.positions();
        for p in pos.rows() {
            assert!((p.dot(&p) - 1.0).abs() < 1e-12);
        }
    }
}

#[test]
fn bipyramids_prisms_tori_and_spheres() {
    for k in 3..=12 {
        let b = shapes::bipyramid(k).unwrap();
        assert_eq!(euler(&b), 2);
        assert!(b.mesh.topology().is_closed());
        let val = valences(&b);
        assert_eq!((val[k], val[k + 1]), (k, k), "apexes");
        assert!(val[..k].iter().all(|&n| n == 4));
        assert!(outward(&b));
        let p = shapes::prism(k).unwrap();
        assert_eq!(euler(&p), 2);
        assert!(valences(&p).iter().all(|&n| n == 3));
        assert!(outward(&p));
    }
    let q = shapes::quad_torus(5, 7).unwrap();
    assert_eq!((euler(&q), q.mesh.num_faces()), (0, 35));
    assert!(valences(&q).iter().all(|&n| n == 4));
    let t = shapes::triangle_torus(5, 7).unwrap();
    assert_eq!((euler(&t), t.mesh.num_faces()), (0, 70));
    assert!(valences(&t).iter().all(|&n| n == 6));
    let s = shapes::quad_sphere(3).unwrap();
    assert_eq!(euler(&s), 2);
    assert_eq!(valences(&s).iter().filter(|&&n| n == 3).count(), 8);
    assert!(outward(&s));
}

#[test]
fn grids_fans_and_disks() {
    let g = shapes::quad_grid(3, 2).unwrap();
    assert_eq!((g.mesh.num_vertices(), g.mesh.num_faces(), euler(&g)), (12, 6, 1));
    assert!(!g.mesh.topology().is_closed());
    let tg = shapes::triangle_grid(3, 3).unwrap();
    assert_eq!((tg.mesh.num_faces(), euler(&tg)), (18, 1));
    let f = shapes::fan(9).unwrap();
    assert_eq!((valences(&f)[0], euler(&f)), (9, 1));
    for k in 3..=12 {
        for rings in 1..=4 {
            for (d, regular) in
                [(shapes::quad_disk(k, rings).unwrap(), 4), (shapes::triangle_disk(k, rings).unwrap(), 6)]
            {
                let t = d.mesh.topology();
                assert_eq!(euler(&d), 1, "a disk");
                assert!(t.is_manifold());
                let val = valences(&d);
                assert_eq!(val[0], k, "the centre");
                // Every other interior vertex is regular.
                for (v, (&n, &tag)) in val.iter().zip(t.vertex_tags()).enumerate().skip(1) {
                    if tag & vertex_tag::BOUNDARY == 0 {
                        assert_eq!(n, regular, "k {k} rings {rings}: vertex {v}");
                    }
                }
                // Spokes: vertex 1 + s·rings + (i − 1) at distance i.
                for s in 0..k {
                    for i in 1..=rings {
                        let pos = d.positions();
                        let p = pos.row(1 + s * rings + (i - 1));
                        assert!((p.dot(&p).sqrt() - i as f64).abs() < 1e-12);
                    }
                }
                // Every vertex where its sector coordinates put it.
                let quads = regular == 4;
                let coords = shapes::disk_coordinates(quads, k, rings).unwrap();
                assert_eq!(coords.len(), d.mesh.num_vertices());
                for (v, &[s, i, j]) in coords.iter().enumerate() {
                    let (a, b) = (TAU * s as f64 / k as f64, TAU * (s + 1) as f64 / k as f64);
                    let want = [i as f64 * a.cos() + j as f64 * b.cos(), i as f64 * a.sin() + j as f64 * b.sin()];
                    let p = d.positions();
                    assert!((p[(v, 0)] - want[0]).abs() < 1e-12 && (p[(v, 1)] - want[1]).abs() < 1e-12, "vertex {v}");
                }
                // Counter-clockwise from +z.
                let n = vertex_normals(d.mesh.topology(), d.mesh.holes(), d.positions(), Par::Seq);
                assert!(n.rows().into_iter().all(|r| r[2] > 0.0));
            }
        }
    }
}

#[test]
fn creases_and_errors() {
    let d = shapes::quad_disk(5, 2).unwrap();
    // The spokes 0 and 2 (vertices 1 and 1 + 2·2 next to the centre).
    let c = shapes::with_creases(&d, &[(0, 1), (0, 5)], 2.5).unwrap();
    let t = c.mesh.topology();
    let sharp: Vec<[u32; 2]> =
        (0..t.num_edges()).filter(|&e| c.mesh.edge_sharpness()[e] == 2.5).map(|e| t.edge(e)).collect();
    assert_eq!(sharp.len(), 2);
    assert!(sharp.iter().all(|e| e.contains(&0)));
    assert!(shapes::with_creases(&d, &[(1, 3)], 1.0).is_err(), "not an edge");
    assert!(matches!(
        shapes::bipyramid(2),
        Err(MeshError::ShapeParameter { what: "bipyramid sides", value: 2, min: 3 })
    ));
    assert!(matches!(shapes::quad_disk(2, 1), Err(MeshError::ShapeParameter { what: "disk valence", .. })));
    assert!(matches!(shapes::triangle_disk(5, 0), Err(MeshError::ShapeParameter { what: "disk rings", .. })));
    assert!(matches!(shapes::quad_torus(2, 5), Err(MeshError::ShapeParameter { .. })));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Every generated case is a closed triangle mesh: nothing to reject.
    #[test]
    fn closed_triangle_strategies_need_no_filtering(
        d in subla_mesh::proptest_support::closed_triangle_mesh(),
        c in subla_mesh::proptest_support::closed_triangle_mesh_with_creases(),
    ) {
        for m in [&d.mesh, &c.mesh] {
            let t = m.topology();
            proptest::prop_assert!(t.is_closed() && t.is_manifold());
            proptest::prop_assert!((0..t.num_faces()).all(|f| t.face(f).len() == 3));
            let chi = t.num_vertices() as i64 - t.num_edges() as i64 + t.num_faces() as i64;
            proptest::prop_assert!(chi == 2 || chi == 0, "a sphere or a torus, χ = {}", chi);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// `F` and `G` hold, for every corner of every triangle, the triangle
    /// and the opposite vertex of its outgoing edge, and nothing else.
    #[test]
    fn directed_edge_matrices_match_the_faces(d in subla_mesh::proptest_support::triangle_mesh()) {
        let t = d.mesh.topology();
        let f = subla_mesh::matrices::directed_edge_faces(t, Par::Rayon).unwrap();
        let g = subla_mesh::matrices::opposite_vertices(t, Par::Seq).unwrap();
        proptest::prop_assert_eq!(f.nnz(), 3 * t.num_faces());
        proptest::prop_assert_eq!(f.pattern(), g.pattern());
        for k in 0..t.num_faces() {
            let v = t.face(k);
            for i in 0..3 {
                let (a, b, c) = (v[i], v[(i + 1) % 3], v[(i + 2) % 3]);
                proptest::prop_assert_eq!(f.as_ref().get(a as usize, b as usize), Some(&(k as u32)));
                proptest::prop_assert_eq!(g.as_ref().get(a as usize, b as usize), Some(&c));
            }
        }
    }
}

#[test]
fn directed_edge_matrices_refuse_what_they_cannot_hold() {
    use subla_mesh::{MeshBuilder, Validation, matrices};
    let quads = shapes::cube();
    assert!(matches!(
        matrices::opposite_vertices(quads.mesh.topology(), Par::Seq),
        Err(MeshError::NotTriangle { face: 0, order: 4 })
    ));
    // Two triangles traversing 0 → 1 the same way.
    let m = MeshBuilder::from_faces(4, &[[0u32, 1, 2], [0, 1, 3]]).validation(Validation::OpenSubdiv).build(Par::Seq);
    if let Ok(m) = m {
        assert!(matches!(
            matrices::directed_edge_faces(m.topology(), Par::Seq),
            Err(MeshError::InconsistentOrientation { v0: 0, v1: 1, face_a: 0, face_b: 1 })
        ));
    }
}

#[test]
fn half_disks_put_the_centre_on_the_boundary() {
    for quads in [true, false] {
        for k in 1..=6 {
            for rings in 1..=3 {
                let d = shapes::half_disk(quads, k, rings).unwrap();
                let t = d.mesh.topology();
                assert_eq!(euler(&d), 1);
                assert_eq!((t.vertex_edges(0).len(), t.vertex_corners(0).len()), (k + 1, k));
                assert!(t.vertex_tags()[0] & vertex_tag::BOUNDARY != 0);
                let coords = shapes::half_disk_coordinates(quads, k, rings).unwrap();
                assert_eq!(coords.len(), t.num_vertices());
                let p = d.positions();
                for (v, &[s, i, j]) in coords.iter().enumerate() {
                    let (a, b) =
                        (std::f64::consts::PI * s as f64 / k as f64, std::f64::consts::PI * (s + 1) as f64 / k as f64);
                    let want = [i as f64 * a.cos() + j as f64 * b.cos(), i as f64 * a.sin() + j as f64 * b.sin()];
                    assert!((p[(v, 0)] - want[0]).abs() < 1e-12 && (p[(v, 1)] - want[1]).abs() < 1e-12);
                }
            }
        }
    }
    assert!(matches!(shapes::half_disk(true, 0, 2), Err(MeshError::ShapeParameter { what: "half disk sectors", .. })));
}

/// The polygon disks (the configuration of dual schemes): a k-gon at the
/// centre, every other face a quad and every interior vertex of valence 4,
/// a manifold disk, counter-clockwise, its vertices where their places put
/// them; the dual of the quad disk's faces.
#[test]
fn polygon_disks_put_a_k_gon_in_the_centre() {
    for k in 3..=10 {
        for rings in 1..=3 {
            let d = shapes::polygon_disk(k, rings).unwrap();
            let t = d.mesh.topology();
            assert_eq!(euler(&d), 1, "a disk");
            assert!(t.is_manifold());
            assert_eq!(t.face(0).len(), k);
            assert!((1..t.num_faces()).all(|f| t.face(f).len() == 4));
            assert_eq!(t.num_faces(), 1 + k * rings + k * rings * rings);
            // The quad disk with one more ring has a face per vertex here.
            assert_eq!(d.mesh.num_vertices(), shapes::quad_disk(k, rings + 1).unwrap().mesh.num_faces());
            for (v, (&n, &tag)) in valences(&d).iter().zip(t.vertex_tags()).enumerate() {
                if tag & vertex_tag::BOUNDARY == 0 {
                    assert_eq!(n, 4, "k {k} rings {rings}: vertex {v}");
                }
            }
            let coords = shapes::polygon_disk_coordinates(k, rings).unwrap();
            assert_eq!(coords.len(), d.mesh.num_vertices());
            let p = d.positions();
            for (v, &[s, i, j]) in coords.iter().enumerate() {
                let (a, b) = (TAU * s as f64 / k as f64, TAU * (s + 1) as f64 / k as f64);
                let (x, y) = (i as f64 + 0.5, j as f64 + 0.5);
                assert!((p[(v, 0)] - (x * a.cos() + y * b.cos())).abs() < 1e-12, "vertex {v}");
                assert!((p[(v, 1)] - (x * a.sin() + y * b.sin())).abs() < 1e-12, "vertex {v}");
            }
            assert!(t.face(0).iter().all(|&v| coords[v as usize][1] == 0 && coords[v as usize][2] == 0));
            let n = vertex_normals(t, d.mesh.holes(), d.positions(), Par::Seq);
            assert!(n.rows().into_iter().all(|r| r[2] > 0.0));
        }
    }
    assert!(matches!(shapes::polygon_disk(2, 1), Err(MeshError::ShapeParameter { .. })));
    assert!(matches!(shapes::polygon_disk(5, 0), Err(MeshError::ShapeParameter { .. })));
}
