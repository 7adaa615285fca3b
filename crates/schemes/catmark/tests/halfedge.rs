//! The closed-form halfedge path against the specialised kernels on
//! generated meshes (creases, corners, holes, boundaries, every option):
//! the same points, faces, sharpness and holes through the row
//! correspondence of the two numberings; the same bits for any thread
//! count; modeling steps equal to builds; the scheme contract; the
//! fallback for non-manifold meshes.

use std::collections::HashMap;

use proptest::prelude::*;
use subla_algebra::Par;
use subla_catmark::{CatmarkHalfedge, CatmarkSlak};
use subla_mesh::proptest_support::{any_mesh, mesh_with_creases};
use subla_mesh::{Mesh, MeshBuilder, Topology};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{ChildPoint, Plan, Refiner, SchemeError, eval};

/// A face's vertices through `map`, rotated to start at the smallest.
fn key(t: &Topology, f: usize, map: Option<&[u32]>) -> Vec<u32> {
    let mut v: Vec<u32> = t.face(f).iter().map(|&x| map.map_or(x, |m| m[x as usize])).collect();
    let k = (0..v.len()).min_by_key(|&i| v[i]).unwrap_or(0);
    v.rotate_left(k);
    v
}

/// For each level, the kernels' row of each halfedge row: a vertex point
/// is its parent's, a face point the kernels' point of the face with the
/// same (mapped) corners, an edge point that of the edge with the same
/// ends.
fn row_maps(he: &dyn Plan, slak: &dyn Plan, levels: u32) -> Result<Vec<Vec<u32>>, String> {
    let mut maps = vec![(0..he.level_len(0) as u32).collect::<Vec<u32>>()];
    for l in 0..levels {
        let m = &maps[l as usize];
        let (th, ts) = (he.refined(l, Par::Rayon).unwrap().topology(), slak.refined(l, Par::Rayon).unwrap().topology());
        let faces: HashMap<Vec<u32>, u32> = (0..ts.num_faces()).map(|f| (key(ts, f, None), f as u32)).collect();
        let (nv, nf) = (ts.num_vertices() as u32, ts.num_faces() as u32);
        let mut next = Vec::with_capacity(he.level_len(l + 1));
        for r in 0..he.level_len(l + 1) {
            next.push(match he.child_point(l, r) {
                Some(ChildPoint::Vertex(v)) => m[v as usize],
                Some(ChildPoint::Face(f)) => {
                    nv + faces.get(&key(th, f as usize, Some(m))).ok_or_else(|| format!("level {l}: face {f}"))?
                }
                Some(ChildPoint::Edge(e)) => {
                    let [a, b] = th.edge(e as usize);
                    let es =
                        ts.find_edge(m[a as usize], m[b as usize]).ok_or_else(|| format!("level {l}: edge {e}"))?;
                    nv + nf + es
                }
                other => return Err(format!("level {l} row {r}: {other:?}")),
            });
        }
        maps.push(next);
    }
    Ok(maps)
}

fn face_set(mesh: &Mesh, map: Option<&[u32]>) -> Vec<(Vec<u32>, bool)> {
    let t = mesh.topology();
    let mut out: Vec<(Vec<u32>, bool)> = (0..t.num_faces()).map(|f| (key(t, f, map), mesh.holes()[f])).collect();
    out.sort_unstable();
    out
}

fn same_bits(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> bool {
    a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn halfedge_and_kernels_agree_level_by_level(d in mesh_with_creases(), levels in 1u32..4) {
        prop_assume!(d.mesh.topology().check_manifold().is_ok());
        let slak = CatmarkSlak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let he = CatmarkHalfedge::strict().build(&d.mesh, levels, Par::Rayon).unwrap();
        let maps = row_maps(&he, &slak, levels).map_err(TestCaseError::fail)?;
        for l in 0..=levels {
            let (mh, ms) = (he.refined(l, Par::Rayon).unwrap(), slak.refined(l, Par::Rayon).unwrap());
            let m = &maps[l as usize];
            prop_assert_eq!(face_set(mh, Some(m)), face_set(ms, None), "faces of level {}", l);
            let (th, ts) = (mh.topology(), ms.topology());
            prop_assert_eq!(th.num_edges(), ts.num_edges());
            for e in 0..th.num_edges() {
                let [a, b] = th.edge(e);
                let es = ts.find_edge(m[a as usize], m[b as usize]).unwrap() as usize;
                prop_assert_eq!(mh.edge_sharpness()[e], ms.edge_sharpness()[es], "level {} edge {}", l, e);
            }
            for (v, &s) in mh.vertex_sharpness().iter().enumerate() {
                prop_assert_eq!(s, ms.vertex_sharpness()[m[v] as usize], "level {} vertex {}", l, v);
            }
            let f = he.faces(l, Par::Rayon).unwrap();
            prop_assert_eq!(f.face_verts(), th.face_verts());
            prop_assert_eq!(f.holes(), mh.holes());
        }
        let x = control_data(d.mesh.num_vertices(), 3, 5);
        let (a, b) = (eval(&slak, x.view(), Par::Rayon).unwrap(), eval(&he, x.view(), Par::Rayon).unwrap());
        let m = &maps[levels as usize];
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let mut diff = 0f64;
        for (r, &s) in m.iter().enumerate() {
            for k in 0..3 {
                diff = diff.max((b[[r, k]] - a[[s as usize, k]]).abs());
            }
        }
        prop_assert!(diff <= 1e-12 * scale, "halfedge and kernels differ by {}", diff);
        prop_assert!(same_bits(&b, &eval(&he, x.view(), Par::Seq).unwrap()));
    }

    #[test]
    fn modeling_steps_equal_builds(d in mesh_with_creases(), levels in 1u32..3) {
        let r = CatmarkHalfedge::new();
        let x = control_data(d.mesh.num_vertices(), 3, 11);
        let deep = r.build(&d.mesh, levels + 1, Par::Rayon).unwrap();
        let want = eval(&deep, x.view(), Par::Rayon).unwrap();
        let plan = r.build(&d.mesh, levels, Par::Rayon).unwrap();
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        let stepped = r.step(plan, Par::Rayon).unwrap();
        let got = eval(&stepped, y.view(), Par::Rayon).unwrap();
        prop_assert!(same_bits(&got, &want));
        prop_assert_eq!(stepped.refined(1, Par::Rayon).unwrap(), deep.refined(levels + 1, Par::Rayon).unwrap());
    }

    #[test]
    fn halfedge_contract(d in any_mesh(), levels in 1u32..3) {
        check_contract(&CatmarkHalfedge::new(), &d.mesh, levels, 1e-12);
    }

    #[test]
    fn halfedge_contract_with_creases(d in mesh_with_creases(), levels in 1u32..3) {
        check_contract(&CatmarkHalfedge::new(), &d.mesh, levels, 1e-12);
    }
}

/// Three quads on one edge: the default refiner builds it with the kernels
/// and says why; the strict one refuses it naming the edge.
#[test]
fn non_manifold_meshes_fall_back_or_are_refused() {
    let faces = vec![0, 1, 2, 3, 1, 0, 4, 5, 0, 1, 6, 7];
    let mesh = MeshBuilder::new(8, vec![0, 4, 8, 12], faces).build(Par::Seq).unwrap();
    let plan = CatmarkHalfedge::new().build(&mesh, 2, Par::Rayon).unwrap();
    assert!(matches!(plan.kernels_because(), Some(SchemeError::NotManifold { .. })));
    let kernels = CatmarkSlak.build(&mesh, 2, Par::Rayon).unwrap();
    let x = control_data(8, 3, 1);
    assert!(same_bits(&eval(&plan, x.view(), Par::Rayon).unwrap(), &eval(&kernels, x.view(), Par::Rayon).unwrap()));
    let e = CatmarkHalfedge::strict().build(&mesh, 2, Par::Rayon).unwrap_err();
    match e {
        SchemeError::NotManifold { ref source, .. } => {
            assert!(matches!(**source, subla_mesh::MeshError::NonManifoldEdge { v0: 0, v1: 1, faces: 3, .. }), "{e}");
        }
        _ => panic!("{e}"),
    }
}

/// A large mesh with a boundary and creases: the same bits sequentially
/// and in parallel (the rows are split into blocks past 2048).
#[test]
fn large_meshes_refine_the_same_in_parallel() {
    let (w, h) = (60, 40);
    let v = |i: usize, j: usize| (i * (h + 1) + j) as u32;
    let faces: Vec<[u32; 4]> =
        (0..w).flat_map(|i| (0..h).map(move |j| [v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)])).collect();
    let grid = Mesh::from_faces((w + 1) * (h + 1), &faces).unwrap();
    let t = grid.topology();
    let mut b = MeshBuilder::new(t.num_vertices(), t.face_ptr().to_vec(), t.face_verts().to_vec());
    for e in (0..t.num_edges()).step_by(7) {
        let [a, c] = t.edge(e);
        b = b.crease(a, c, 1.5);
    }
    let mesh = b.build(Par::Seq).unwrap();
    let x = control_data(mesh.num_vertices(), 3, 3);
    let a = CatmarkHalfedge::strict().build(&mesh, 3, Par::Rayon).unwrap();
    let s = CatmarkHalfedge::strict().build(&mesh, 3, Par::Seq).unwrap();
    assert!(same_bits(&eval(&a, x.view(), Par::Rayon).unwrap(), &eval(&s, x.view(), Par::Seq).unwrap()));
    assert_eq!(a.refined(3, Par::Rayon).unwrap(), s.refined(3, Par::Seq).unwrap());
    assert!(a.connectivity_bytes() > 0);
}
