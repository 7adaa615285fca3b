//! The connectivity of volumetric meshes: counts, valences and
//! extraordinary edges of the example shapes, the incidence matrices
//! (boundaries of boundaries vanish, exactly), and every validation error
//! naming the element it is about.

use ndarray::Array2;
use proptest::prelude::*;
use subla_algebra::CsrMat;
use subla_volume::shapes::{cylinder, extraordinary_block, hex_grid, tetra_split, torus};
use subla_volume::{Cell, NONE, VolMesh, VolumeData, VolumeError};

/// `a · b` of two integer incidence matrices, dense.
fn product(a: &CsrMat<i8>, b: &CsrMat<i8>) -> Array2<i64> {
    let (da, db) = (a.as_ref().to_dense().mapv(i64::from), b.as_ref().to_dense().mapv(i64::from));
    da.dot(&db)
}

fn shapes() -> Vec<(&'static str, VolumeData, i64)> {
    // (name, shape, Euler characteristic V − E + F − C: 1 for a ball, 0
    // for a solid torus)
    vec![
        ("grid", hex_grid(3, 2, 2).unwrap(), 1),
        ("cylinder", cylinder(2, 2, 3, 2.0).unwrap(), 1),
        ("torus", torus(2, 1, 8, 3.0, 1.0).unwrap(), 0),
        ("block", extraordinary_block(2).unwrap(), 1),
        ("tetra", tetra_split().unwrap(), 1),
    ]
}

#[test]
fn boundaries_of_boundaries_vanish() {
    for (name, d, chi) in shapes() {
        let m = &d.mesh;
        let (cf, fe, ev) =
            (m.cell_face_matrix().unwrap(), m.face_edge_matrix().unwrap(), m.edge_vertex_matrix().unwrap());
        assert!(product(&cf, &fe).iter().all(|&x| x == 0), "{name}: ∂∂ of cells");
        assert!(product(&fe, &ev).iter().all(|&x| x == 0), "{name}: ∂∂ of faces");
        let euler = m.num_vertices() as i64 - m.num_edges() as i64 + m.num_faces() as i64 - m.num_cells() as i64;
        assert_eq!(euler, chi, "{name}");
        // Every interior face in two cells, with opposite signs.
        let dense = cf.as_ref().to_dense();
        for f in 0..m.num_faces() {
            let col: Vec<i8> = dense.column(f).iter().copied().filter(|&x| x != 0).collect();
            let [_, b] = m.face_cells(f);
            assert_eq!(col.len(), if b == NONE { 1 } else { 2 }, "{name}: face {f}");
            assert_eq!(col.iter().map(|&x| i32::from(x)).sum::<i32>(), if b == NONE { 1 } else { 0 });
        }
    }
}

#[test]
fn two_cubes_share_one_face() {
    let cells = [Cell::Hexahedron([0, 1, 4, 3, 6, 7, 10, 9]), Cell::Hexahedron([1, 2, 5, 4, 7, 8, 11, 10])];
    let m = VolMesh::from_cells(12, &cells).unwrap();
    assert_eq!((m.num_cells(), m.num_faces(), m.num_edges()), (2, 11, 20));
    let shared: Vec<usize> = (0..m.num_faces()).filter(|&f| !m.is_boundary_face(f)).collect();
    assert_eq!(shared.len(), 1);
    assert_eq!(m.face_cells(shared[0]), [0, 1]);
    // The shared face's edges are boundary edges of valence 3 (regular);
    // the others of valence 2.
    let three = (0..m.num_edges()).filter(|&e| m.edge_valence(e) == 3).count();
    assert_eq!(three, 4);
    assert!((0..m.num_edges()).all(|e| m.is_boundary_edge(e)));
    assert_eq!(m.cells().collect::<Vec<_>>(), cells.to_vec());
    let cv = m.cell_vertex_matrix().unwrap().as_ref().to_dense();
    assert_eq!((cv[[0, 0]], cv[[0, 1]], cv[[0, 9]], cv[[1, 11]], cv[[0, 2]]), (1, 2, 8, 7, 0));
}

#[test]
fn valences_and_extraordinary_edges() {
    let g = hex_grid(3, 3, 3).unwrap().mesh;
    for e in 0..g.num_edges() {
        let want = if g.is_boundary_edge(e) { 3 } else { 4 };
        if g.edge_valence(e) != want {
            // The box's twelve edges, three segments each, have two faces.
            assert_eq!(g.edge_valence(e), 2);
        }
    }
    assert_eq!((0..g.num_edges()).filter(|&e| g.is_extraordinary_edge(e)).count(), 36);
    let interior_ees = |m: &VolMesh| -> Vec<usize> {
        let mut v: Vec<usize> = (0..m.num_edges())
            .filter(|&e| !m.is_boundary_edge(e) && m.is_extraordinary_edge(e))
            .map(|e| m.edge_valence(e))
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(interior_ees(&extraordinary_block(2).unwrap().mesh), vec![3, 3, 5, 5]);
    assert_eq!(interior_ees(&cylinder(2, 2, 3, 2.0).unwrap().mesh), vec![3; 12]);
    let t = torus(2, 1, 8, 3.0, 1.0).unwrap().mesh;
    assert_eq!(interior_ees(&t), vec![3; 32]);
    // The torus's boundary is closed: every boundary edge of valence 3.
    assert!((0..t.num_edges()).filter(|&e| t.is_boundary_edge(e)).all(|e| t.edge_valence(e) == 3));
    // The split tetrahedron: its centre edges (to the face centres) have
    // three faces and are interior: regular there would be four.
    assert_eq!(interior_ees(&tetra_split().unwrap().mesh), vec![3; 4]);
}

fn cube_points() -> Vec<[f64; 3]> {
    vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
    ]
}

fn data(points: &[[f64; 3]], cells: &[Cell]) -> Result<VolumeData, VolumeError> {
    let x = Array2::from_shape_fn((points.len(), 3), |(i, k)| points[i][k]);
    VolumeData::from_cells(x, cells)
}

const CUBE: Cell = Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7]);

#[test]
fn a_vertex_out_of_range_is_named() {
    let e = VolMesh::from_cells(7, &[CUBE]).unwrap_err();
    assert!(matches!(e, VolumeError::VertexOutOfRange { cell: 0, vertex: 7, num_vertices: 7 }), "{e}");
}

#[test]
fn a_repeated_vertex_is_degenerate() {
    let e = VolMesh::from_cells(8, &[CUBE, Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 4])]).unwrap_err();
    assert!(matches!(e, VolumeError::DegenerateCell { cell: 1, .. }), "{e}");
}

#[test]
fn a_pyramid_is_refused_at_its_apex() {
    let e = VolMesh::from_cells(5, &[Cell::Pyramid([0, 1, 2, 3, 4])]).unwrap_err();
    assert!(matches!(e, VolumeError::UnsupportedCell { cell: 0, kind: "pyramid", vertex: 4, faces: 4 }), "{e}");
}

#[test]
fn an_open_polyhedron_is_refused() {
    // A cube's faces without its top.
    let faces = vec![vec![0, 3, 2, 1], vec![0, 1, 5, 4], vec![1, 2, 6, 5], vec![2, 3, 7, 6], vec![3, 0, 4, 7]];
    let e = VolMesh::from_cells(8, &[Cell::Polyhedron(faces)]).unwrap_err();
    assert!(matches!(e, VolumeError::NotAPolyhedron { cell: 0, .. }), "{e}");
}

#[test]
fn a_polyhedron_equals_its_kind() {
    // The cube as a polyhedron: same faces, edges, boundary.
    let mut faces = Vec::new();
    CUBE.for_each_face(|f| faces.push(f.to_vec()));
    let poly = data(&cube_points(), &[Cell::Polyhedron(faces)]).unwrap().mesh;
    let hex = data(&cube_points(), &[CUBE]).unwrap().mesh;
    assert_eq!((poly.num_faces(), poly.num_edges()), (hex.num_faces(), hex.num_edges()));
    assert_eq!(poly.face_edge_matrix().unwrap(), hex.face_edge_matrix().unwrap());
}

/// Two unit cubes stacked, 12 points; `top` the upper cube.
fn stacked(top: Cell, extra: &[Cell]) -> Result<VolumeData, VolumeError> {
    let mut points = cube_points();
    points.extend([[0.0, 0.0, 2.0], [1.0, 0.0, 2.0], [1.0, 1.0, 2.0], [0.0, 1.0, 2.0]]);
    let mut cells = vec![CUBE, top];
    cells.extend_from_slice(extra);
    data(&points, &cells)
}

#[test]
fn stacked_cubes_are_valid() {
    let d = stacked(Cell::Hexahedron([4, 5, 6, 7, 8, 9, 10, 11]), &[]).unwrap();
    assert_eq!(d.mesh.num_faces(), 11);
}

#[test]
fn a_face_of_three_cells_is_refused() {
    // A third cell on the lower cube's top face, overlapping the upper one.
    let e = stacked(Cell::Hexahedron([4, 5, 6, 7, 8, 9, 10, 11]), &[Cell::Hexahedron([4, 5, 6, 7, 9, 10, 11, 8])])
        .unwrap_err();
    assert!(matches!(e, VolumeError::NonManifoldFace { cells: [0, 1, 2], .. }), "{e}");
}

#[test]
fn an_inverted_neighbour_is_named() {
    // The upper cube with its base and top swapped: inward faces.
    let e = stacked(Cell::Hexahedron([8, 9, 10, 11, 4, 5, 6, 7]), &[]).unwrap_err();
    assert!(matches!(e, VolumeError::MisorientedFace { cells: [0, 1], .. }), "{e}");
}

#[test]
fn an_inverted_cell_alone_is_found_by_its_volume() {
    let e = data(&cube_points(), &[Cell::Hexahedron([4, 5, 6, 7, 0, 1, 2, 3])]).unwrap_err();
    assert!(matches!(e, VolumeError::InvertedCell { cell: 0, .. }), "{e}");
}

#[test]
fn a_tangled_hexahedron_is_inverted_at_its_corner() {
    // Vertex 6 pulled through the bottom face: the volume stays positive,
    // the corner at 6 turns the wrong way.
    let mut p = cube_points();
    p[6] = [0.6, 0.6, -0.4];
    let e = data(&p, &[CUBE]).unwrap_err();
    assert!(matches!(e, VolumeError::InvertedCell { cell: 0, .. }), "{e}");
}

#[test]
fn a_flat_cell_is_degenerate() {
    let mut p = cube_points();
    for q in &mut p[4..] {
        q[2] = 0.0;
    }
    let e = data(&p, &[CUBE]).unwrap_err();
    assert!(matches!(e, VolumeError::DegenerateCell { cell: 0, .. }), "{e}");
}

#[test]
fn cubes_meeting_at_an_edge_are_non_manifold() {
    let mut p = cube_points();
    // A second cube at x ∈ [1, 2], z ∈ [1, 2]: it shares the edge 5-6.
    p.extend([[2.0, 0.0, 1.0], [2.0, 1.0, 1.0], [1.0, 0.0, 2.0], [2.0, 0.0, 2.0], [2.0, 1.0, 2.0], [1.0, 1.0, 2.0]]);
    let e = data(&p, &[CUBE, Cell::Hexahedron([5, 8, 9, 6, 10, 11, 12, 13])]).unwrap_err();
    assert!(matches!(e, VolumeError::NonManifoldEdge { edge: [5, 6], faces: 4, .. }), "{e}");
}

#[test]
fn cubes_meeting_at_a_vertex_are_non_manifold() {
    let mut p = cube_points();
    let o = [1.0, 1.0, 1.0];
    for q in cube_points().iter().skip(1) {
        p.push([o[0] + q[0], o[1] + q[1], o[2] + q[2]]);
    }
    let e = data(&p, &[CUBE, Cell::Hexahedron([6, 8, 9, 10, 11, 12, 13, 14])]).unwrap_err();
    assert!(matches!(e, VolumeError::NonManifoldVertex { vertex: 6, fans: 2 }), "{e}");
}

#[test]
fn a_hanging_vertex_is_non_conforming() {
    // A 2 × 1 × 1 block under two unit cubes: the cubes' shared vertices at
    // x = 1 hang on the block's top edges.
    let p = vec![
        [0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [2.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [2.0, 0.0, 1.0],
        [2.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 0.0, 2.0],
        [1.0, 0.0, 2.0],
        [1.0, 1.0, 2.0],
        [0.0, 1.0, 2.0],
        [2.0, 0.0, 2.0],
        [2.0, 1.0, 2.0],
    ];
    let cells = [
        Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7]),
        Cell::Hexahedron([4, 8, 9, 7, 10, 11, 12, 13]),
        Cell::Hexahedron([8, 5, 6, 9, 11, 14, 15, 12]),
    ];
    let e = data(&p, &cells).unwrap_err();
    assert!(matches!(e, VolumeError::NonConforming { cell: 0, vertex: 8, edge: [4, 5], detail: "lies inside" }), "{e}");
}

#[test]
fn unmerged_vertices_are_non_conforming() {
    // Two cubes side by side, the shared face's vertices given twice.
    let mut p = cube_points();
    for q in cube_points() {
        p.push([q[0] + 1.0, q[1], q[2]]);
    }
    let e = data(&p, &[CUBE, Cell::Hexahedron([8, 9, 10, 11, 12, 13, 14, 15])]).unwrap_err();
    assert!(matches!(e, VolumeError::NonConforming { detail: "coincides with an end of", .. }), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A jittered grid in any cell order is valid; with one cell turned
    /// inside out, the error names that cell.
    #[test]
    fn an_inverted_cell_of_a_grid_is_named(nx in 1usize..4, ny in 1usize..4, nz in 1usize..3, seed in any::<u64>(), pick in any::<prop::sample::Index>()) {
        let g = hex_grid(nx, ny, nz).unwrap();
        let mut x = g.vertices.clone();
        let mut s = seed;
        for v in x.iter_mut() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *v += 0.2 * (((s >> 33) as f64 / (1u64 << 31) as f64) - 0.5);
        }
        let mut cells: Vec<Cell> = g.mesh.cells().collect();
        let shift = (seed % cells.len() as u64) as usize;
        cells.rotate_left(shift);
        let ok = VolMesh::from_cells(x.nrows(), &cells).and_then(|m| VolumeData::new(m, x.clone()));
        prop_assert!(ok.is_ok(), "{:?}", ok.err());
        let bad = pick.index(cells.len());
        if let Cell::Hexahedron(v) = cells[bad] {
            cells[bad] = Cell::Hexahedron([v[4], v[5], v[6], v[7], v[0], v[1], v[2], v[3]]);
        }
        match VolMesh::from_cells(x.nrows(), &cells).and_then(|m| VolumeData::new(m, x.clone())) {
            Err(VolumeError::MisorientedFace { cells: c, .. }) => prop_assert!(c.contains(&bad)),
            Err(VolumeError::InvertedCell { cell, .. }) => prop_assert_eq!(cell, bad),
            other => prop_assert!(false, "{:?}", other.err()),
        }
    }
}

/// Six tetrahedra per cube, conforming (every interior face shared), all
/// positively oriented (checked on construction).
#[test]
fn a_tetrahedral_grid_is_conforming() {
    let d = subla_volume::shapes::tetrahedral_grid(3).unwrap();
    let m = &d.mesh;
    assert_eq!(m.num_cells(), 6 * 27);
    assert_eq!(m.num_vertices(), 64);
    assert!((0..m.num_cells()).all(|c| m.kind(c) == subla_volume::CellKind::Tetra));
    // Boundary faces: two triangles per unit square of the box's surface.
    let boundary = (0..m.num_faces()).filter(|&f| m.is_boundary_face(f)).count();
    assert_eq!(boundary, 2 * 6 * 9);
    // Euler's formula for a ball: V − E + F − C = 1.
    let euler = m.num_vertices() as i64 - m.num_edges() as i64 + m.num_faces() as i64 - m.num_cells() as i64;
    assert_eq!(euler, 1);
}
