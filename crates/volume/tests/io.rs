//! VTK legacy and Medit reading and writing: bit-exact round trips of mixed
//! meshes with their fields, hand-written files of both VTK cell layouts,
//! and a typed error, never a panic, for what is refused or broken.

use ndarray::{Array2, array};
use subla_volume::medit::{MEDIT_REF, read_medit, write_medit};
use subla_volume::vtk::{VtkEncoding, read_vtk, write_vtk};
use subla_volume::{Cell, CellKind, Field, FieldKind, VolMesh, VolumeData, VolumeError};

const ENCODINGS: [VtkEncoding; 2] = [VtkEncoding::Ascii, VtkEncoding::Binary];

/// Positions moved by a positive affine map so that they are not short
/// decimals (round trips must keep every bit).
fn skew(points: &[[f64; 3]]) -> Array2<f64> {
    let mut a = Array2::zeros((points.len(), 3));
    for (i, p) in points.iter().enumerate() {
        for k in 0..3 {
            a[[i, k]] = p[k] / 3.0 + 0.1 * (k as f64 + 1.0) / 7.0 + 1e-17;
        }
    }
    a
}

/// Two cubes sharing a face, a wedge roof on the first, a tetrahedron on
/// the roof's front triangle, and apart from them a pentagonal prism given
/// as a polyhedron.
fn mixed() -> VolumeData {
    let mut p: Vec<[f64; 3]> = Vec::new();
    for z in [0.0, 1.0] {
        for y in [0.0, 1.0] {
            for x in [0.0, 1.0, 2.0] {
                p.push([x, y, z]);
            }
        }
    }
    p.extend([[0.5, 0.0, 2.0], [0.5, 1.0, 2.0], [0.5, -1.0, 1.3]]);
    // Pentagon counter-clockwise seen from above, at z = 0 and z = 1.
    for z in [0.0, 1.0] {
        for k in 0..5 {
            let a = 2.0 * std::f64::consts::PI * k as f64 / 5.0;
            p.push([5.0 + a.cos(), a.sin(), z]);
        }
    }
    let (b, t) = (15u32, 20u32);
    let mut prism = vec![vec![b, b + 4, b + 3, b + 2, b + 1], vec![t, t + 1, t + 2, t + 3, t + 4]];
    for k in 0..5 {
        let k1 = (k + 1) % 5;
        prism.push(vec![b + k, b + k1, t + k1, t + k]);
    }
    let cells = [
        Cell::Hexahedron([0, 1, 4, 3, 6, 7, 10, 9]),
        Cell::Hexahedron([1, 2, 5, 4, 7, 8, 11, 10]),
        Cell::Wedge([6, 7, 12, 9, 10, 13]),
        Cell::Tetra([6, 7, 12, 14]),
        Cell::Polyhedron(prism),
    ];
    let mesh = VolMesh::from_cells(p.len(), &cells).expect("a valid mixed mesh");
    let nv = p.len();
    let temperature = Array2::from_shape_fn((nv, 1), |(i, _)| (i as f64).sqrt());
    let velocity = Array2::from_shape_fn((nv, 3), |(i, k)| (i * 3 + k) as f64 / 7.0 - 1.0);
    let material = array![[1.0, 0.1], [2.0, 0.2], [3.0, -0.3], [4.0, 1e300], [5.0, -0.0]];
    let normal = Array2::from_shape_fn((5, 3), |(i, k)| if i % 3 == k { 1.0 } else { 0.0 });
    let field = |name: &str, kind, values| Field { name: name.to_string(), kind, values };
    VolumeData::new(mesh, skew(&p))
        .expect("positive volumes")
        .with_fields(
            vec![
                field("temperature", FieldKind::Scalars, temperature),
                field("velocity", FieldKind::Vectors, velocity),
            ],
            vec![
                field("up", FieldKind::Normals, normal),
                field("material id", FieldKind::Array, material),
                field("quality%", FieldKind::Array, Array2::from_elem((5, 1), 2.5)),
            ],
        )
        .expect("fields of the right length")
}

/// Two cubes sharing a face, and apart from them a tetrahedron.
fn hexes_and_tetra() -> VolumeData {
    let mut p: Vec<[f64; 3]> = Vec::new();
    for z in [0.0, 1.0] {
        for y in [0.0, 1.0] {
            for x in [0.0, 1.0, 2.0] {
                p.push([x, y, z]);
            }
        }
    }
    p.extend([[4.0, 0.0, 0.0], [5.0, 0.0, 0.0], [4.0, 1.0, 0.0], [4.2, 0.3, 1.0]]);
    let cells = [
        Cell::Hexahedron([0, 1, 4, 3, 6, 7, 10, 9]),
        Cell::Hexahedron([1, 2, 5, 4, 7, 8, 11, 10]),
        Cell::Tetra([12, 13, 14, 15]),
    ];
    let mesh = VolMesh::from_cells(p.len(), &cells).expect("a valid mesh");
    VolumeData::new(mesh, skew(&p)).expect("positive volumes")
}

fn to_vtk(data: &VolumeData, encoding: VtkEncoding) -> Vec<u8> {
    let mut out = Vec::new();
    write_vtk(data, &mut out, encoding).expect("writing to memory");
    out
}

/// Equal data, positions and field values compared bit for bit.
fn assert_identical(a: &VolumeData, b: &VolumeData) {
    assert_eq!(a.mesh.cells().collect::<Vec<_>>(), b.mesh.cells().collect::<Vec<_>>());
    assert_eq!(a.vertices.dim(), b.vertices.dim());
    for ((i, x), y) in a.vertices.indexed_iter().zip(b.vertices.iter()) {
        assert_eq!(x.to_bits(), y.to_bits(), "position {i:?}: {x:e} became {y:e}");
    }
    for (fa, fb) in a.point_fields.iter().chain(&a.cell_fields).zip(b.point_fields.iter().chain(&b.cell_fields)) {
        assert_eq!((&fa.name, fa.kind, fa.values.dim()), (&fb.name, fb.kind, fb.values.dim()));
        for (x, y) in fa.values.iter().zip(fb.values.iter()) {
            assert_eq!(x.to_bits(), y.to_bits(), "field {:?}: {x:e} became {y:e}", fa.name);
        }
    }
    assert_eq!(a, b);
}

fn vtk_error(text: &[u8]) -> VolumeError {
    match read_vtk(text) {
        Ok(d) => panic!("expected an error, got a mesh of {} cells", d.mesh.num_cells()),
        Err(e) => e,
    }
}

#[test]
fn vtk_round_trips_are_bit_exact() {
    let data = mixed();
    for encoding in ENCODINGS {
        let file = to_vtk(&data, encoding);
        let back = read_vtk(&file).unwrap_or_else(|e| panic!("{encoding:?}: {e}"));
        assert_identical(&data, &back);
        assert_eq!(back.mesh.kind(4), CellKind::Polyhedron);
    }
}

#[test]
fn vtk_writer_output_is_classic_and_encodes_names() {
    let data = mixed();
    let ascii = String::from_utf8(to_vtk(&data, VtkEncoding::Ascii)).expect("ASCII output is text");
    let lines: Vec<&str> = ascii.lines().collect();
    assert_eq!(
        lines[..4],
        ["# vtk DataFile Version 3.0", "written by subla: 25 vertices, 5 cells", "ASCII", "DATASET UNSTRUCTURED_GRID"]
    );
    assert!(lines.contains(&"POINTS 25 double"));
    // The polyhedron's face stream: 7 faces, two pentagons and five quads.
    assert!(lines.contains(&"CELLS 5 69"), "{ascii}");
    assert!(lines.contains(
        &"38 7 5 15 19 18 17 16 5 20 21 22 23 24 4 15 16 21 20 4 16 17 22 21 4 17 18 23 22 4 18 19 24 23 4 19 15 20 24"
    ));
    assert!(lines.contains(&"SCALARS temperature double 1"));
    assert!(lines.contains(&"FIELD FieldData 2"));
    assert!(lines.contains(&"material%20id 2 5 double"));
    assert!(lines.contains(&"quality%25 1 5 double"));
    let binary = to_vtk(&data, VtkEncoding::Binary);
    assert!(binary.starts_with(b"# vtk DataFile Version 3.0\nwritten by subla: 25 vertices, 5 cells\nBINARY\n"));
}

#[test]
fn vtk_binary_file_from_the_writer_reads_back() {
    let data = hexes_and_tetra();
    let file = to_vtk(&data, VtkEncoding::Binary);
    // Points are big-endian doubles right after their header line.
    let header = b"POINTS 16 double\n";
    let at = file.windows(header.len()).position(|w| w == header).expect("a POINTS header") + header.len();
    assert_eq!(file[at..at + 8], data.vertices[[0, 0]].to_be_bytes());
    let back = read_vtk(&file).expect("the writer's binary file");
    assert_identical(&data, &back);
}

#[test]
fn vtk_files_on_disk_round_trip() {
    let data = mixed();
    let dir = std::env::temp_dir().join(format!("subla-volume-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    for encoding in ENCODINGS {
        let path = dir.join(format!("mixed-{encoding:?}.vtk"));
        subla_volume::vtk::write_vtk_file(&data, &path, encoding).expect("writing a file");
        assert_identical(&data, &subla_volume::vtk::read_vtk_file(&path).expect("reading it back"));
    }
    let missing = subla_volume::vtk::read_vtk_file(dir.join("missing.vtk"));
    assert!(matches!(missing, Err(VolumeError::Io { .. })));
    std::fs::remove_dir_all(&dir).expect("cleaning up");
}

const CUBE_POINTS: &str = "0 0 0  1 0 0  1 1 0  0 1 0\n0 0 1  1 0 1\n1 1 1  0 1 1\n";

#[test]
fn classic_ascii_vtk_by_hand() {
    let text = format!(
        "# vtk DataFile Version 2.0\none cube\nASCII\n\nDATASET UNSTRUCTURED_GRID\nPOINTS 8 float\n{CUBE_POINTS}\
         CELLS 1 9\n8 0 1 2 3\n4 5 6\n7\ncell_types 1\n12\n\
         POINT_DATA 8\nSCALARS temperature%20(K) float\nLOOKUP_TABLE default\n0 1 2 3 4 5 6 7\n\
         cell_data 1\nfield FieldData 2\nmaterial 1 1 int\n7\nstress 2 1 double\n0.5 -0.25\n"
    );
    let d = read_vtk(text.as_bytes()).expect("a valid classic file");
    assert_eq!(d.mesh.cells().collect::<Vec<_>>(), [Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7])]);
    assert_eq!(d.vertices.row(6).to_vec(), [1.0, 1.0, 1.0]);
    assert_eq!(d.point_fields.len(), 1);
    assert_eq!(d.point_fields[0].name, "temperature (K)");
    assert_eq!(d.point_fields[0].kind, FieldKind::Scalars);
    assert_eq!(d.point_fields[0].values.column(0).to_vec(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let cell: Vec<_> = d.cell_fields.iter().map(|f| (f.name.as_str(), f.kind, f.values.row(0).to_vec())).collect();
    assert_eq!(cell, [("material", FieldKind::Array, vec![7.0]), ("stress", FieldKind::Array, vec![0.5, -0.25])]);
}

#[test]
fn version_5_vtk_by_hand() {
    // A cube with a wedge roof; the 5.1 layout, with the METADATA block
    // VTK 9 writes after an array.
    let text = format!(
        "# vtk DataFile Version 5.1\nvtk output\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 10 double\n{CUBE_POINTS}\
         0.5 0 2 0.5 1 2\nMETADATA\nINFORMATION 2\nNAME L2_NORM_RANGE LOCATION vtkDataArray\nDATA 2 0 2.29 \n\
         NAME L2_NORM_FINITE_RANGE LOCATION vtkDataArray\nDATA 2 0 2.29 \n\n\
         CELLS 3 14\nOFFSETS vtktypeint64\n0 8 14\nCONNECTIVITY vtktypeint64\n0 1 2 3 4 5 6 7\n4 5 8 7 6 9\n\
         CELL_TYPES 2\n12\n13\n\nCELL_DATA 2\nVECTORS flow double\n1 0 0 0 1 0\n"
    );
    let d = read_vtk(text.as_bytes()).expect("a valid 5.1 file");
    assert_eq!(
        d.mesh.cells().collect::<Vec<_>>(),
        [Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7]), Cell::Wedge([4, 5, 8, 7, 6, 9])]
    );
    assert_eq!(d.cell_fields.len(), 1);
    assert_eq!((d.cell_fields[0].name.as_str(), d.cell_fields[0].kind), ("flow", FieldKind::Vectors));
    assert_eq!(d.cell_fields[0].values, array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
}

#[test]
fn version_5_polyhedra_are_refused() {
    let text = "# vtk DataFile Version 5.1\nvtk output\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 double\n\
                0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 2 4\nOFFSETS vtktypeint64\n0 4\nCONNECTIVITY vtktypeint64\n0 1 2 3\n\
                CELL_TYPES 1\n42\n";
    assert!(matches!(vtk_error(text.as_bytes()), VolumeError::Parse { line: 7, .. }));
}

#[test]
fn a_quad_cell_is_refused_naming_it() {
    let text = format!(
        "# vtk DataFile Version 3.0\nhex and quad\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 8 double\n{CUBE_POINTS}\
         CELLS 2 14\n8 0 1 2 3 4 5 6 7\n4 0 1 2 3\nCELL_TYPES 2\n12\n9\n"
    );
    assert!(matches!(vtk_error(text.as_bytes()), VolumeError::UnsupportedCellType { cell: 1, .. }));
}

#[test]
fn truncated_vtk_files_are_parse_errors() {
    let data = mixed();
    for encoding in ENCODINGS {
        let file = to_vtk(&data, encoding);
        // Mid-points and mid-cells.
        for cut in [file.len() / 5, file.len() / 2] {
            let e = vtk_error(&file[..cut]);
            assert!(matches!(e, VolumeError::Parse { .. }), "{encoding:?} cut at {cut}: {e:?}");
        }
        // Every other prefix is a result, never a panic (a prefix that
        // ends between sections is a smaller valid file).
        for cut in 0..file.len() {
            let _ = read_vtk(&file[..cut]);
        }
    }
}

#[test]
fn unread_vtk_data_is_an_error_not_a_loss() {
    let head =
        format!("# vtk DataFile Version 3.0\ncube\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 8 double\n{CUBE_POINTS}");
    let cells = "CELLS 1 9\n8 0 1 2 3 4 5 6 7\nCELL_TYPES 1\n12\n";
    let zeros = "0 0 0 0 0 0 0 0 0\n";
    let cases = [
        format!("{head}{cells}POINT_DATA 8\nTENSORS t double\n{}", zeros.repeat(8)),
        format!("{head}{cells}POINT_DATA 8\nTEXTURE_COORDINATES uv 2 double\n{}", zeros.repeat(2)),
        format!("{head}{cells}CELL_DATA 1\nFIELD FieldData 1\nnames 1 1 string\nabc\n"),
        format!("{head}FIELD FieldData 1\nTIME 1 1 double\n0\n{cells}"),
        "# vtk DataFile Version 3.0\nsurface\nASCII\nDATASET POLYDATA\nPOINTS 0 float\n".to_string(),
        "not a vtk file\n".to_string(),
    ];
    for text in cases {
        assert!(matches!(vtk_error(text.as_bytes()), VolumeError::Parse { .. }), "{text}");
    }
}

#[test]
fn vtk_writer_refuses_what_the_format_cannot_hold() {
    let mut data = hexes_and_tetra();
    data.cell_fields.push(Field { name: "v".into(), kind: FieldKind::Vectors, values: Array2::zeros((3, 2)) });
    let mut out = Vec::new();
    let e = write_vtk(&data, &mut out, VtkEncoding::Ascii).expect_err("two-component vectors");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(out.is_empty());
}

#[test]
fn medit_round_trip_keeps_references() {
    let mut data = hexes_and_tetra();
    let refs = |rows: usize| Array2::from_shape_fn((rows, 1), |(i, _)| i as f64 * 10.0 - 5.0);
    data.point_fields = vec![Field { name: MEDIT_REF.into(), kind: FieldKind::Scalars, values: refs(16) }];
    data.cell_fields = vec![Field { name: MEDIT_REF.into(), kind: FieldKind::Scalars, values: refs(3) }];
    let mut file = Vec::new();
    write_medit(&data, &mut file).expect("writing to memory");
    let text = String::from_utf8(file.clone()).expect("Medit files are text");
    assert!(text.starts_with("MeshVersionFormatted 2\n") && text.ends_with("End\n"));
    assert!(text.contains("\nHexahedra\n2\n1 2 5 4 7 8 11 10 -5\n"), "{text}");
    let back = read_medit(&file).expect("reading it back");
    assert!(back.skipped.is_empty());
    assert_identical(&data, &back.data);
}

#[test]
fn medit_without_references_writes_zeros() {
    let data = hexes_and_tetra();
    let mut file = Vec::new();
    write_medit(&data, &mut file).expect("writing to memory");
    let back = read_medit(&file).expect("reading it back").data;
    assert_eq!(back.mesh, data.mesh);
    assert!(back.point_fields[0].values.iter().chain(back.cell_fields[0].values.iter()).all(|&r| r == 0.0));
}

const MEDIT_CUBE: &str = "MeshVersionFormatted 2\n# a unit cube\nDimension\n3\nVertices\n8\n\
    0 0 0 1\n1 0 0 1\n1 1 0 1\n0 1 0 1\n0 0 1 2\n1 0 1 2\n1 1 1 2\n0 1 1 2\n";

#[test]
fn medit_boundary_sections_are_skipped_and_reported() {
    let text =
        format!("{MEDIT_CUBE}Triangles 2\n1 2 3 5\n1 3 4 5\nhexahedra\n1\n1 2 3 4\n5 6 7 8 42\nEdges 1 1 3 0\nEnd\n");
    let read = read_medit(text.as_bytes()).expect("a valid Medit file");
    // An edge no ridge names (here a face diagonal) is not the volume's.
    assert_eq!(read.skipped, [("Triangles".to_string(), 2), ("Edges".to_string(), 1)]);
    assert!(!read.data.mesh.has_features());
    assert_eq!(read.data.mesh.cells().collect::<Vec<_>>(), [Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7])]);
    assert_eq!(read.data.point_fields[0].values.column(0).to_vec(), [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]);
    assert_eq!(read.data.cell_fields[0].values, array![[42.0]]);
}

#[test]
fn medit_ridges_and_corners_are_sharp_edges_and_corners() {
    // Two ridges of the cube (one named twice), a third edge kept as a
    // boundary edge, a corner.
    let text = format!(
        "{MEDIT_CUBE}Hexahedra 1\n1 2 3 4 5 6 7 8 0\nEdges 3\n1 2 7\n2 3 7\n3 7 0\n\
         Ridges 3\n1 2 1\nCorners 1\n5\nEnd\n"
    );
    let read = read_medit(text.as_bytes()).expect("a valid Medit file");
    let m = &read.data.mesh;
    assert_eq!(read.skipped, [("Edges".to_string(), 1)]);
    let sharp: Vec<[u32; 2]> = m.sharp_edges().map(|e| m.edge(e as usize)).collect();
    assert_eq!(sharp.len(), 2);
    assert!(sharp.contains(&[0, 1]) && sharp.contains(&[1, 2]), "{sharp:?}");
    assert_eq!(m.corners().collect::<Vec<_>>(), [4]);
    // Written back: an Edges section of the sharp edges, all ridges.
    let mut file = Vec::new();
    write_medit(&read.data, &mut file).expect("writing to memory");
    let text = String::from_utf8(file.clone()).expect("Medit files are text");
    assert!(text.contains("\nRidges\n2\n1\n2\n") && text.contains("\nCorners\n1\n5\n"), "{text}");
    let back = read_medit(&file).expect("reading it back");
    assert!(back.skipped.is_empty());
    assert_eq!(back.data.mesh, read.data.mesh);
    // A ridge past the edges, and a ridge that is no edge of the volume.
    let past = format!("{MEDIT_CUBE}Hexahedra 1\n1 2 3 4 5 6 7 8 0\nEdges 1\n1 2 0\nRidges 1\n2\nEnd\n");
    assert!(matches!(read_medit(past.as_bytes()), Err(VolumeError::Parse { .. })));
    let diagonal = format!("{MEDIT_CUBE}Hexahedra 1\n1 2 3 4 5 6 7 8 0\nEdges 1\n1 3 0\nRidges 1\n1\nEnd\n");
    assert!(matches!(read_medit(diagonal.as_bytes()), Err(VolumeError::NoSuchEdge { vertices: [0, 2] })));
}

#[test]
fn medit_prisms_are_refused() {
    let text = format!("{MEDIT_CUBE}Hexahedra 1\n1 2 3 4 5 6 7 8 0\nPrisms 1\n1 2 3 5 6 7 0\nEnd\n");
    assert!(matches!(read_medit(text.as_bytes()), Err(VolumeError::UnsupportedCellType { cell: 1, .. })));
}

#[test]
fn broken_medit_files_are_parse_errors() {
    let hexa = "Hexahedra 1\n1 2 3 4 5 6 7 8 0\n";
    let cases = [
        format!("{MEDIT_CUBE}{hexa}"),                                // no End
        format!("{MEDIT_CUBE}Hexahedra 1\n1 2 3 4 5 6 7\n"),          // truncated
        format!("{MEDIT_CUBE}Hexahedra 1\n0 1 2 3 4 5 6 7 0\nEnd\n"), // 0-based
        format!("{MEDIT_CUBE}{hexa}Polygons 1\n3 1 2 3 0\nEnd\n"),    // unknown section
        MEDIT_CUBE.replace("Dimension\n3", "Dimension 2"),            // 2D
        "Vertices 0\nEnd\n".to_string(),                              // no version
    ];
    for text in cases {
        assert!(matches!(read_medit(text.as_bytes()), Err(VolumeError::Parse { .. })), "{text}");
    }
    let meshb = [1u8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
    assert!(matches!(read_medit(&meshb), Err(VolumeError::Parse { line: 1, .. })));
    let text = format!("{MEDIT_CUBE}{hexa}End\n");
    for cut in 0..text.len() {
        let _ = read_medit(&text.as_bytes()[..cut]);
    }
}

#[test]
fn medit_writer_refuses_wedges_and_fractional_references() {
    let data = mixed();
    let mut out = Vec::new();
    assert!(matches!(write_medit(&data, &mut out), Err(VolumeError::UnsupportedCellType { cell: 2, .. })));
    assert!(out.is_empty());
    let mut data = hexes_and_tetra();
    data.cell_fields =
        vec![Field { name: MEDIT_REF.into(), kind: FieldKind::Scalars, values: array![[1.0], [2.5], [3.0]] }];
    assert!(matches!(write_medit(&data, &mut out), Err(VolumeError::Unwritable { .. })));
    assert!(out.is_empty());
}

#[test]
fn binary_vtk_by_hand_with_narrow_types() {
    let mut file = b"# vtk DataFile Version 4.2\nby hand\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS 8 float\n".to_vec();
    let corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];
    for x in corners.iter().flatten() {
        file.extend((*x as f32 * 0.5).to_be_bytes());
    }
    file.extend(b"\nCELLS 1 9\n");
    for v in [8i32, 0, 1, 2, 3, 4, 5, 6, 7] {
        file.extend(v.to_be_bytes());
    }
    file.extend(b"\nCELL_TYPES 1\n");
    file.extend(12i32.to_be_bytes());
    file.extend(b"\nPOINT_DATA 8\nSCALARS level short 1\nLOOKUP_TABLE default\n");
    for v in [-3i16, -2, -1, 0, 1, 2, 3, 300] {
        file.extend(v.to_be_bytes());
    }
    file.extend(b"\nFIELD FieldData 1\nflags 1 8 bit\n");
    file.push(0b1010_0001);
    file.extend(b"\nCELL_DATA 1\nSCALARS part unsigned_char\nLOOKUP_TABLE default\n");
    file.push(200);
    file.push(b'\n');
    let d = read_vtk(&file).expect("a valid binary file");
    assert_eq!(d.mesh.cells().collect::<Vec<_>>(), [Cell::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7])]);
    assert_eq!(d.vertices.row(6).to_vec(), [0.5, 0.5, 0.5]);
    let column = |f: &Field| f.values.column(0).to_vec();
    assert_eq!(column(&d.point_fields[0]), [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 300.0]);
    assert_eq!(column(&d.point_fields[1]), [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(column(&d.cell_fields[0]), [200.0]);
    // The last block cut short.
    assert!(matches!(read_vtk(&file[..file.len() - 2]), Err(VolumeError::Parse { .. })));
}

#[test]
fn point_clouds_are_vertex_cells_with_point_data() {
    use subla_volume::vtk::write_vtk_points;
    let p = ndarray::array![[0.0, 0.5, 1.0], [2.0, 3.0, 4.25]];
    let fields = vec![
        Field { name: "cell".into(), kind: FieldKind::Scalars, values: ndarray::array![[7.0], [8.0]] },
        Field {
            name: "d du".into(),
            kind: FieldKind::Vectors,
            values: ndarray::array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        },
    ];
    let mut out = Vec::new();
    write_vtk_points(p.view(), &fields, &mut out, VtkEncoding::Ascii).unwrap();
    let text = String::from_utf8(out).unwrap();
    let want = "# vtk DataFile Version 3.0\nwritten by subla: 2 points\nASCII\nDATASET UNSTRUCTURED_GRID\n\
POINTS 2 double\n0.0 0.5 1.0\n2.0 3.0 4.25\nCELLS 2 4\n1 0\n1 1\nCELL_TYPES 2\n1\n1\n\
POINT_DATA 2\nSCALARS cell double 1\nLOOKUP_TABLE default\n7.0\n8.0\nVECTORS d%20du double\n1.0 0.0 0.0\n0.0 1.0 0.0\n";
    assert_eq!(text, want);
    // A field of the wrong length is refused before anything is written.
    let mut out = Vec::new();
    let bad = [Field { name: "x".into(), kind: FieldKind::Scalars, values: ndarray::array![[1.0]] }];
    assert!(write_vtk_points(p.view(), &bad, &mut out, VtkEncoding::Ascii).is_err());
    assert!(out.is_empty());
}
