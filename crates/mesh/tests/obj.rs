//! OBJ reading and writing: every shared shape round-trips exactly, every
//! syntax form parses, and the parallel parser agrees with the serial one.

use std::path::PathBuf;

use subla_mesh::obj::{parse_obj, read_obj, write_obj};
use subla_mesh::{
    BoundaryInterpolation, CreaseMethod, GroupKind, MeshData, MeshError, TriangleSubdivision, Validation,
};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes")
}

/// Writes and re-reads `d`. What the first read skipped (`s`, `usemtl`, …)
/// is not written: it is put back for the comparison, and checked to be
/// all that is missing.
fn round_trip(d: &MeshData) -> MeshData {
    let mut out = Vec::new();
    write_obj(d, &mut out).unwrap();
    let again = parse_obj(&out, Validation::OpenSubdiv)
        .unwrap_or_else(|e| panic!("re-read failed: {e}\n{}", String::from_utf8_lossy(&out)));
    assert!(again.skipped.is_empty(), "the writer wrote something the reader skips: {:?}", again.skipped);
    MeshData { skipped: d.skipped.clone(), ..again }
}

#[test]
fn every_shared_shape_reads_with_listed_counts_and_round_trips_exactly() {
    let list = std::fs::read_to_string(data_dir().join("LIST.tsv")).unwrap();
    let mut n = 0;
    for row in list.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let rel = cols[0].trim_start_matches("shared/meshes/");
        let (verts, faces): (usize, usize) = (cols[4].parse().unwrap(), cols[5].parse().unwrap());
        let d = read_obj(data_dir().join(rel), Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(d.mesh.num_vertices(), verts, "{rel}");
        assert_eq!(d.mesh.num_faces(), faces, "{rel}");
        let again = round_trip(&d);
        assert_eq!(again, d, "{rel}: read -> write -> read changed the data");
        n += 1;
    }
    assert!(n >= 100, "only {n} shapes listed");
}

#[test]
fn shape_tags_are_read() {
    let d = read_obj(data_dir().join("osd/catmark_cube_creases0.obj"), Validation::OpenSubdiv).unwrap();
    assert!(d.mesh.edge_sharpness().iter().any(|&s| s > 0.0));
    let d = read_obj(data_dir().join("osd/catmark_chaikin0.obj"), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.mesh.options().crease_method, CreaseMethod::Uniform);
    let d = read_obj(data_dir().join("osd/catmark_chaikin2.obj"), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.mesh.options().crease_method, CreaseMethod::Chaikin);
    let d = read_obj(data_dir().join("osd/catmark_edgecorner.obj"), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.mesh.options().boundary, BoundaryInterpolation::EdgeAndCorner);
    let d = read_obj(data_dir().join("osd/catmark_smoothtris0.obj"), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.mesh.options().triangle_subdivision, TriangleSubdivision::Catmark);
    let d = parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nt smoothtriangles 0/0/1 smooth\n", Validation::OpenSubdiv)
        .unwrap();
    assert_eq!(d.mesh.options().triangle_subdivision, TriangleSubdivision::Smooth);
    assert_eq!(round_trip(&d), d);
    let d = read_obj(data_dir().join("osd/catmark_hole_test1.obj"), Validation::OpenSubdiv).unwrap();
    assert!(d.mesh.has_holes());
    let d = read_obj(data_dir().join("osd/catmark_lefthanded.obj"), Validation::OpenSubdiv).unwrap();
    assert!(d.left_handed);
    let d = read_obj(data_dir().join("osd/catmark_cube_corner4.obj"), Validation::OpenSubdiv).unwrap();
    assert!(d.mesh.vertex_sharpness().iter().any(|&s| s >= 10.0));
}

#[test]
fn all_index_forms_relative_indices_groups_continuations_and_crlf() {
    let text = "# comment\r\n\
        mtllib x.mtl\r\n\
        o thing\r\n\
        v 0 0 0\r\nv 1 0 0\r\nv 1 1 0\r\nv 0 1 0\r\nv 2 0 0 \\\r\n  \r\nv 2 1 0\r\n\
        vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n\
        vn 0 0 1\n\
        g left\n\
        usemtl m\n\
        s 1\n\
        f 1/1/1 2/2/1 3/3/1 4/4/1\n\
        g right\n\
        f -5/-3/-1 -1/-2/-1 \\\n  -3/-1/-1\n\
        t crease 2/1/0 1 2 2.5\n\
        t corner 1/1/0 0 10\n";
    // Vertex 5 (`v 2 0 0`) is continued onto the next line, which is empty.
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.mesh.num_vertices(), 6);
    assert_eq!(d.mesh.topology().face(0), &[0, 1, 2, 3]);
    assert_eq!(d.mesh.topology().face(1), &[1, 5, 3]);
    let t = d.texcoords.as_ref().unwrap();
    assert_eq!(t.indices, vec![0, 1, 2, 3, 1, 2, 3]);
    let n = d.normals.as_ref().unwrap();
    assert_eq!(n.indices, vec![0; 7]);
    assert_eq!(d.groups.len(), 3);
    assert_eq!(
        (d.groups[0].kind, d.groups[0].name.as_str(), d.groups[0].faces.clone()),
        (GroupKind::Object, "thing", 0..2)
    );
    assert_eq!((d.groups[1].name.as_str(), d.groups[1].faces.clone()), ("left", 0..1));
    assert_eq!((d.groups[2].name.as_str(), d.groups[2].faces.clone()), ("right", 1..2));
    let e = d.mesh.topology().find_edge(1, 2).unwrap();
    assert_eq!(d.mesh.edge_sharpness()[e as usize], 2.5);
    assert_eq!(d.mesh.vertex_sharpness()[0], 10.0);
    assert_eq!(round_trip(&d), d);
    // v//n and v/t forms.
    let d = parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n", Validation::OpenSubdiv).unwrap();
    assert!(d.texcoords.is_none() && d.normals.is_some());
    let d = parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/1 3/1\n", Validation::OpenSubdiv).unwrap();
    assert!(d.texcoords.is_some() && d.normals.is_none());
    // Extra channels on v lines are kept.
    let d = parse_obj(b"v 0 0 0 1 0.5\nv 1 0 0 1 0.5\nv 0 1 0 1 0.25\nf 1 2 3\n", Validation::OpenSubdiv).unwrap();
    assert_eq!(d.vertices.ncols(), 5);
    assert_eq!(d.positions().ncols(), 3);
    assert_eq!(round_trip(&d), d);
}

#[test]
fn f64_values_survive_a_round_trip_bit_for_bit() {
    let vals =
        [0.1, 1.0 / 3.0, -2.5e-300, 1.7976931348623157e308, f64::MIN_POSITIVE, 5e-324, -0.0, 123_456_789.123_456_79];
    let mut text = String::new();
    for (i, v) in vals.iter().enumerate() {
        text.push_str(&format!("v {v:e} {} {}\n", v * 0.5, i as f64));
    }
    text.push_str("f 1 2 3\nf 4 5 6 7 8\n");
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    for (i, v) in vals.iter().enumerate() {
        assert_eq!(d.vertices[(i, 0)].to_bits(), v.to_bits());
    }
    let again = round_trip(&d);
    let bits = |d: &MeshData| d.vertices.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&again), bits(&d));
}

/// A generated OBJ of `n x n` quads with relative indices, groups and
/// continuations: big enough to be parsed in several chunks.
fn big_obj(n: usize) -> String {
    let mut s = String::with_capacity(n * n * 40);
    let mut count = 0usize;
    for r in 0..=n {
        for c in 0..=n {
            s.push_str(&format!("v {} {} {}\n", c as f64 * 0.1, r as f64 * 0.1, ((r * 7 + c * 3) % 11) as f64 * 0.01));
            count += 1;
        }
    }
    for r in 0..n {
        if r % 50 == 0 {
            s.push_str(&format!("g rows{r}\n"));
        }
        for c in 0..n {
            let v = |rr: usize, cc: usize| rr * (n + 1) + cc + 1;
            if (r + c) % 3 == 0 {
                // Relative indices.
                let rel = |x: usize| x as i64 - count as i64 - 1;
                s.push_str(&format!(
                    "f {} {} \\\n {} {}\n",
                    rel(v(r, c)),
                    rel(v(r, c + 1)),
                    rel(v(r + 1, c + 1)),
                    rel(v(r + 1, c))
                ));
            } else {
                s.push_str(&format!("f {} {} {} {}\n", v(r, c), v(r, c + 1), v(r + 1, c + 1), v(r + 1, c)));
            }
        }
    }
    s
}

#[test]
fn parallel_parse_equals_serial_parse() {
    let text = big_obj(300); // ~4 MB
    let pool = |t: usize| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
    let one = pool(1).install(|| parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap());
    let four = pool(4).install(|| parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap());
    assert_eq!(one, four);
    assert_eq!(one.mesh.num_faces(), 300 * 300);
    assert_eq!(one.mesh.topology().face(0), &[0, 1, 302, 301]);
    assert_eq!(one.groups.len(), 6);
    // An error in a late chunk reports its absolute line.
    let mut bad = text.clone();
    bad.push_str("f 1 2 x\n");
    let lines = bad.lines().count();
    let e = pool(4).install(|| parse_obj(bad.as_bytes(), Validation::OpenSubdiv).unwrap_err());
    match e {
        MeshError::MalformedNumber { at, .. } => assert_eq!(at.line, Some(lines)),
        other => panic!("unexpected {other}"),
    }
}

/// Found by fuzzing: `o` and `g` statements before the same face were
/// written objects-first, so the re-read list came back in another order.
#[test]
fn groups_at_the_same_face_keep_their_order_through_a_round_trip() {
    let text = b"v 0 0 0\nv 1 0 0\nv 0 1 0\ng a\no b\ng c\nf 1 2 3\ng d\no e\ng f\n";
    let d = parse_obj(text, Validation::OpenSubdiv).unwrap();
    let names: Vec<&str> = d.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
    assert_eq!(round_trip(&d), d);
}

/// Found by fuzzing: a NUL byte on a continued line slipped into a group
/// name, and the written file could not be read back.
#[test]
fn nul_bytes_on_continued_lines_are_rejected() {
    let text = b"v 0 0 0\nv 1 0 0\nv 0 1 0\ng a \\\nb\x00c\nf 1 2 3\n";
    let e = parse_obj(text, Validation::OpenSubdiv).unwrap_err();
    assert!(matches!(e, MeshError::NotText { .. }), "{e}");
    assert!(e.to_string().starts_with("line 4:"), "{e}");
}

/// Found by fuzzing: a group name ending in a backslash was written as a
/// line continuation.
#[test]
fn group_names_ending_in_a_backslash_survive_a_round_trip() {
    let text = b"v 0 0 0\nv 1 0 0\nv 0 1 0\ng dir\\ \nf 1 2 3\n";
    let d = parse_obj(text, Validation::OpenSubdiv).unwrap();
    assert_eq!(d.groups[0].name, "dir\\");
    assert_eq!(round_trip(&d), d);
}

/// Triangulating file data carries texture coordinates by corner and group
/// ranges by face, and the result round-trips.
#[test]
fn triangulated_data_keeps_texcoords_and_groups() {
    let text = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\nv 2 1 0\n\
vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 2 0\nvt 2 1\n\
g left\nf 1/1 2/2 3/3 4/4\ng right\nf 2/2 5/5 6/6 3/3\nf 3/3 6/6 4/4\n";
    let d = parse_obj(text, Validation::OpenSubdiv).unwrap();
    let t = d.triangulated().unwrap();
    assert_eq!(t.mesh.num_faces(), 5);
    assert_eq!(t.vertices, d.vertices);
    let ranges: Vec<(&str, std::ops::Range<u32>)> =
        t.groups.iter().map(|g| (g.name.as_str(), g.faces.clone())).collect();
    assert_eq!(ranges, [("left", 0..2), ("right", 2..5)]);
    // Every triangle corner keeps the texture coordinate of its vertex.
    let tc = t.texcoords.as_ref().unwrap();
    let fv = t.mesh.topology().face_verts();
    for (c, &v) in fv.iter().enumerate() {
        assert_eq!(tc.values.row(tc.indices[c] as usize), d.texcoords.as_ref().unwrap().values.row(v as usize));
    }
    assert_eq!(round_trip(&t), t);
}

/// The faces-only writers write what the mesh writers write for every
/// shared shape without sharpness or holes (groups and options kept), with
/// and without its texture coordinates, OBJ and PLY, byte for byte.
#[test]
fn faces_only_writers_equal_the_mesh_writers_on_tagless_shapes() {
    use subla_mesh::ply::{PlyEncoding, write_ply, write_ply_faces};
    let list = std::fs::read_to_string(data_dir().join("LIST.tsv")).unwrap();
    let (mut n, mut with_uv) = (0, 0);
    for row in list.lines().skip(1) {
        let rel = row.split('\t').next().unwrap().trim_start_matches("shared/meshes/");
        let mut d = read_obj(data_dir().join(rel), Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{rel}: {e}"));
        if d.mesh.has_sharpness() || d.mesh.has_holes() {
            continue;
        }
        d.normals = None;
        d.left_handed = false;
        let uv = d.texcoords.take();
        with_uv += usize::from(uv.is_some());
        for texcoords in [None, uv] {
            d.texcoords = texcoords;
            let t = d.mesh.topology();
            let f = subla_mesh::FacesData {
                vertices: &d.vertices,
                channels: &d.channels,
                face_ptr: t.face_ptr(),
                face_verts: t.face_verts(),
                groups: &d.groups,
                options: d.mesh.options(),
                texcoords: d.texcoords.as_ref(),
            };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            write_obj(&d, &mut a).unwrap();
            subla_mesh::obj::write_obj_faces(&f, &mut b).unwrap();
            assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{rel}: OBJ");
            for enc in [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                write_ply(&d, &mut a, enc).unwrap();
                write_ply_faces(&f, &mut b, enc).unwrap();
                assert!(a == b, "{rel}: PLY {enc:?}");
            }
            for format in [subla_mesh::FileFormat::Obj, subla_mesh::FileFormat::Ply] {
                assert_eq!(d.dropped_by(format), f.dropped_by(format), "{rel}: {format:?}");
            }
        }
        n += 1;
    }
    assert!(n >= 20, "only {n} tagless shapes");
    assert!(with_uv >= 3, "only {with_uv} tagless shapes with texture coordinates");
}
