//! The closed-form halfedge path against the specialised kernels on
//! generated meshes (creases, corners, holes, every option, both rule
//! sets): the same points, faces, sharpness and holes through the row
//! correspondence the two numberings have; the same bits for any thread
//! count; modeling steps equal to builds; the scheme contract; the
//! fallback for non-manifold meshes.

mod strategies;

use ndarray::Array2;
use proptest::prelude::*;
use strategies::{any_triangle_mesh, triangle_mesh_with_creases};
use subla_algebra::Par;
use subla_loop::{LoopHalfedge, LoopSlak};
use subla_mesh::proptest_support::torus;
use subla_mesh::{Mesh, MeshBuilder};
use subla_scheme::testing::{check_contract, control_data};
use subla_scheme::{ChildPoint, Plan, Refiner, SchemeError, eval};

/// For each level, the kernels' row of each halfedge row: a parent
/// vertex's point is its own, an edge point is the kernels' point of the
/// edge with the same (mapped) ends.
fn row_maps(he: &dyn Plan, slak: &dyn Plan, levels: u32) -> Result<Vec<Vec<u32>>, String> {
    let mut maps = vec![(0..he.level_len(0) as u32).collect::<Vec<u32>>()];
    for l in 0..levels {
        let m = &maps[l as usize];
        let (th, ts) = (he.refined(l, Par::Rayon).unwrap().topology(), slak.refined(l, Par::Rayon).unwrap().topology());
        let nvs = ts.num_vertices() as u32;
        let mut next = Vec::with_capacity(he.level_len(l + 1));
        for r in 0..he.level_len(l + 1) {
            next.push(match he.child_point(l, r) {
                Some(ChildPoint::Vertex(v)) => m[v as usize],
                Some(ChildPoint::Edge(e)) => {
                    let [a, b] = th.edge(e as usize);
                    let es = ts
                        .find_edge(m[a as usize], m[b as usize])
                        .ok_or_else(|| format!("level {l}: no kernel edge for edge {e}"))?;
                    nvs + es
                }
                other => return Err(format!("level {l} row {r}: {other:?}")),
            });
        }
        maps.push(next);
    }
    Ok(maps)
}

/// The faces of `mesh` through `map`, each rotated to start at its
/// smallest vertex, with their hole flags, sorted.
fn face_set(mesh: &Mesh, map: Option<&[u32]>) -> Vec<([u32; 3], bool)> {
    let t = mesh.topology();
    let mut out: Vec<([u32; 3], bool)> = (0..t.num_faces())
        .map(|f| {
            let v = t.face(f);
            let m = |i: usize| map.map_or(v[i], |m| m[v[i] as usize]);
            let mut tri = [m(0), m(1), m(2)];
            let k = (0..3).min_by_key(|&i| tri[i]).unwrap();
            tri.rotate_left(k);
            (tri, mesh.holes()[f])
        })
        .collect();
    out.sort_unstable();
    out
}

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter().zip(b.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()))
}

fn same_bits(a: &Array2<f64>, b: &Array2<f64>) -> bool {
    a.iter().zip(b.iter()).all(|(p, q)| p.to_bits() == q.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn halfedge_and_kernels_agree_level_by_level(d in any_triangle_mesh(), levels in 1u32..4, cgal in any::<bool>()) {
        let (slak, he) = if cgal {
            (LoopSlak::cgal(), LoopHalfedge::cgal().strict())
        } else {
            (LoopSlak::new(), LoopHalfedge::new().strict())
        };
        let slak = slak.build(&d.mesh, levels, Par::Rayon).unwrap();
        let he = he.build(&d.mesh, levels, Par::Rayon).unwrap();
        prop_assert!(he.kernels_because().is_none());
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
            // `faces` hands out the same faces without the full mesh.
            let f = he.faces(l, Par::Rayon).unwrap();
            prop_assert_eq!(f.face_verts(), th.face_verts());
            prop_assert_eq!(f.holes(), mh.holes());
        }
        let x = d.positions().to_owned();
        let a = eval(&slak, x.view(), Par::Rayon).unwrap();
        let b = eval(&he, x.view(), Par::Rayon).unwrap();
        let m = &maps[levels as usize];
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let mut diff = 0f64;
        for (r, &s) in m.iter().enumerate() {
            for k in 0..3 {
                diff = diff.max((b[[r, k]] - a[[s as usize, k]]).abs());
            }
        }
        prop_assert!(diff <= 1e-12 * scale, "halfedge and kernels differ by {}", diff);
        // Any thread count, the same bits; f32 close to f64.
        let c = eval(&he, x.view(), Par::Seq).unwrap();
        prop_assert!(same_bits(&b, &c));
        let b32 = eval(&he, x.mapv(|v| v as f32).view(), Par::Rayon).unwrap().mapv(f64::from);
        prop_assert!(max_diff(&b, &b32) <= 1e-5 * scale);
    }

    #[test]
    fn modeling_steps_equal_builds(d in triangle_mesh_with_creases(), levels in 1u32..3) {
        let r = LoopHalfedge::new();
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
    fn halfedge_contract(d in any_triangle_mesh(), levels in 1u32..3) {
        check_contract(&LoopHalfedge::new(), &d.mesh, levels, 1e-12);
        check_contract(&LoopHalfedge::cgal(), &d.mesh, levels, 1e-12);
    }
}

/// Three triangles on one edge: the default refiner builds it with the
/// kernels and says why; the strict one refuses it naming the edge.
#[test]
fn non_manifold_meshes_fall_back_or_are_refused() {
    let mesh = MeshBuilder::new(5, vec![0, 3, 6, 9], vec![0, 1, 2, 1, 0, 3, 0, 1, 4]).build(Par::Seq).unwrap();
    let plan = LoopHalfedge::new().build(&mesh, 2, Par::Rayon).unwrap();
    assert!(matches!(plan.kernels_because(), Some(SchemeError::NotManifold { .. })));
    let kernels = LoopSlak::new().build(&mesh, 2, Par::Rayon).unwrap();
    let x = control_data(5, 3, 1);
    assert!(same_bits(&eval(&plan, x.view(), Par::Rayon).unwrap(), &eval(&kernels, x.view(), Par::Rayon).unwrap()));
    let e = LoopHalfedge::new().strict().build(&mesh, 2, Par::Rayon).unwrap_err();
    match e {
        SchemeError::NotManifold { ref source, .. } => {
            assert!(matches!(**source, subla_mesh::MeshError::NonManifoldEdge { v0: 0, v1: 1, faces: 3, .. }), "{e}");
        }
        _ => panic!("{e}"),
    }
}

/// A large closed mesh: the same bits sequentially and in parallel, and
/// the finest level kept as faces only.
#[test]
fn large_meshes_refine_the_same_in_parallel() {
    // A 60 × 40 quad torus, each quad split into two triangles.
    let (n, m) = (60, 40);
    let mesh = torus(n, m, 1).mesh.triangulated().unwrap();
    let x = control_data(n * m, 3, 3);
    let a = LoopHalfedge::new().build(&mesh, 3, Par::Rayon).unwrap();
    let b = LoopHalfedge::new().build(&mesh, 3, Par::Seq).unwrap();
    assert!(same_bits(&eval(&a, x.view(), Par::Rayon).unwrap(), &eval(&b, x.view(), Par::Seq).unwrap()));
    assert_eq!(a.refined(3, Par::Rayon).unwrap(), b.refined(3, Par::Seq).unwrap());
    // Faces 12 bytes, the rest of levels 0..2 about 24 bytes a face more.
    let f3 = 64 * 2 * n * m;
    assert!(
        a.connectivity_bytes() < 12 * f3 + 36 * f3 / 4 + 36 * f3 / 16 + 36 * f3 / 64 + 16 * f3 / 4,
        "{}",
        a.connectivity_bytes()
    );
}
