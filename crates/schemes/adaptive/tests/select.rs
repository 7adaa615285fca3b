//! Selection as algebra (Eq. 16–19) against direct walks of the topology.

use std::path::Path;

use proptest::prelude::*;
use subla_adaptive::select::{extract, extract_data, faces_around_vertices, vertices_of_faces};
use subla_algebra::Par;
use subla_mesh::Validation;
use subla_mesh::obj::read_obj;

fn check(name: &str, flags: &[bool]) {
    let d = read_obj(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../../data/meshes/osd/{name}.obj")),
        Validation::OpenSubdiv,
    )
    .expect("mesh");
    let t = d.mesh.topology();
    let m = t.mesh_matrix().expect("mesh matrix");
    let q: Vec<bool> = (0..t.num_faces()).map(|f| flags[f % flags.len()]).collect();
    // Eq. 17 against the faces' vertex lists.
    let s = vertices_of_faces(m.as_ref(), &q, Par::Rayon);
    let mut want = vec![false; t.num_vertices()];
    for f in (0..t.num_faces()).filter(|&f| q[f]) {
        for &v in t.face(f) {
            want[v as usize] = true;
        }
    }
    assert_eq!(s, want, "{name}: M q");
    // Eq. 16 against the vertices' corner lists.
    let around = faces_around_vertices(m.as_ref(), &s, Par::Seq);
    let want: Vec<bool> = (0..t.num_faces()).map(|f| t.face(f).iter().any(|&v| s[v as usize])).collect();
    assert_eq!(around, want, "{name}: Mᵀ s");
    // Eq. 19: the kept faces over the kept vertices, corners in face order.
    let e = extract(m.as_ref(), &s, &q, Par::Rayon).expect("extract");
    assert_eq!(e.faces, (0..t.num_faces() as u32).filter(|&f| q[f as usize]).collect::<Vec<_>>());
    for (col, &f) in e.faces.iter().enumerate() {
        let face = t.face(f as usize);
        let (rows, vals): (Vec<u32>, Vec<u32>) =
            e.mesh_matrix.as_ref().iter().filter(|&(_, c, _)| c as usize == col).map(|(r, _, &v)| (r, v)).unzip();
        assert_eq!(rows.len(), face.len(), "{name}: face {f} kept whole");
        for (r, v) in rows.iter().zip(vals) {
            assert_eq!(face[v as usize - 1], e.vertices[*r as usize], "{name}: face {f}'s corner {v}");
        }
    }
    // Eq. 18.
    let p = extract_data(d.vertices.view(), &s, Par::Seq).expect("data");
    for (i, &v) in e.vertices.iter().enumerate() {
        assert_eq!(p.row(i), d.vertices.row(v as usize));
    }
}

#[test]
fn propagation_and_extraction_match_the_topology() {
    for name in ["catmark_cube", "catmark_pyramid", "catmark_helmet", "catmark_hole_test1", "catmark_xord_boundary"] {
        check(name, &[true, false, false]);
        check(name, &[false, true]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn any_selection(flags in prop::collection::vec(any::<bool>(), 1..17)) {
        check("catmark_gregory_test2", &flags);
    }
}
