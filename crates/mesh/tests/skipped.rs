//! What a reader reads and does not keep is listed in `MeshData::skipped`
//! (the tool names each in a warning): nothing is dropped silently.

use subla_mesh::Validation;
use subla_mesh::obj::parse_obj;
use subla_mesh::ply::parse_ply;

#[test]
fn obj_statements_without_a_use_are_listed_with_counts_and_first_lines() {
    let text = "mtllib box.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nusemtl red\ns 1\nf 1 2 3 4\nl 1 3\nusemtl blue\n";
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    let got: Vec<(String, u64, usize)> = d.skipped.iter().map(|s| (s.what.clone(), s.count, s.line)).collect();
    assert_eq!(
        got,
        [
            ("`mtllib` statements".to_owned(), 1, 1),
            ("`usemtl` statements".to_owned(), 2, 6),
            ("`s` statements".to_owned(), 1, 7),
            ("`l` statements".to_owned(), 1, 9),
        ]
    );
    assert_eq!(d.skipped[1].to_string(), "`usemtl` statements (2, first on line 6)");
    // Comments, vertices, faces, groups and tags are kept, not skipped.
    let plain = parse_obj(b"# a comment\nv 0 0 0\nv 1 0 0\nv 0 1 0\ng a\nf 1 2 3\n", Validation::OpenSubdiv).unwrap();
    assert!(plain.skipped.is_empty(), "{:?}", plain.skipped);
}

/// A file cut into many chunks (parsed in parallel) lists the same as one
/// chunk would: keywords in the order of first use, counts summed, the
/// first 16 kinds by name and the others together.
#[test]
fn many_keywords_over_many_chunks_are_listed_the_same_way() {
    let mut text = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    let per = 4000;
    for k in 0..20 {
        for _ in 0..per {
            text.push_str(&format!("kw{k:02} some data to make the file big enough for several chunks\n"));
        }
    }
    assert!(text.len() > 4 << 20);
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.skipped.len(), 17);
    for (k, s) in d.skipped.iter().take(16).enumerate() {
        assert_eq!(s.what, format!("`kw{k:02}` statements"));
        assert_eq!(s.count, per);
        assert_eq!(s.line, 5 + k * per as usize);
    }
    assert_eq!(d.skipped[16].what, "statements of 4 other keywords");
    assert_eq!(d.skipped[16].count, 4 * per);
    assert_eq!(d.skipped[16].line, 5 + 16 * per as usize);
}

#[test]
fn ply_elements_and_properties_without_a_use_are_listed() {
    let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
property list uchar int neighbours\nelement face 1\nproperty list uchar int vertex_indices\nproperty uchar red\n\
element edge 2\nproperty int vertex1\nproperty int vertex2\nend_header\n\
0 0 0 1 1\n1 0 0 1 2\n0 1 0 1 0\n3 0 1 2 200\n0 1\n1 2\n";
    let d = parse_ply(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    let got: Vec<(String, u64, usize)> = d.skipped.iter().map(|s| (s.what.clone(), s.count, s.line)).collect();
    assert_eq!(
        got,
        [
            ("PLY vertex list property `neighbours`".to_owned(), 3, 3),
            ("PLY face property `red`".to_owned(), 1, 8),
            ("PLY element `edge`".to_owned(), 2, 11),
        ]
    );
}
