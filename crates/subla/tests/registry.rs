//! The registry of schemes: every CPU implementation of every built-in
//! scheme keeps the contract through the type-erased form tools use, the
//! erased refiner gives the concrete one's bits, and every row of every
//! operator is the child point [`Plan::child_point`] says it is.

use std::path::PathBuf;

use subla::catmark::Bilinear;
use subla::mesh::{Mesh, Validation};
use subla::registry::{Backend, Faces, Path, Registry, Setup};
use subla::scheme::testing::{check_contract, check_dyn};
use subla::scheme::{ChildPoint, Plan, Refiner};
use subla::{CatmarkLak, CatmarkSlak, LoopLak, LoopSlak, Par, Sqrt3Lak, Sqrt3Slak};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn read(rel: &str) -> Mesh {
    subla::mesh::obj::read_obj(data().join(rel), Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{rel}: {e}")).mesh
}

/// An open mesh with creases of the kind each scheme takes.
fn mesh_for(faces: Faces) -> Mesh {
    match faces {
        Faces::Any => read("meshes/osd/catmark_cube_creases0.obj"),
        Faces::Triangles => read("meshes/misc/grid_tri_open.obj"),
    }
}

#[test]
fn every_cpu_implementation_keeps_the_contract_through_the_registry() {
    let registry = Registry::builtin();
    let setup = Setup::default();
    let mut checked = 0;
    for scheme in registry.schemes() {
        let mesh = mesh_for(scheme.faces());
        for path in [Path::Kernels, Path::Algebra] {
            if !scheme.has(Backend::Cpu, path) {
                continue;
            }
            let refiner = scheme.refiner(Backend::Cpu, path, &setup).expect("a CPU refiner");
            check_contract(&*refiner, &mesh, 2, 1e-12);
            checked += 1;
        }
    }
    assert_eq!(checked, 9, "kernels of five schemes and algebra of four");
}

#[test]
fn erased_refiners_give_the_concrete_bits() {
    let quads = mesh_for(Faces::Any);
    let tris = mesh_for(Faces::Triangles);
    check_dyn(&CatmarkSlak, &quads, 2);
    check_dyn(&CatmarkLak, &quads, 2);
    check_dyn(&Bilinear, &quads, 2);
    check_dyn(&LoopSlak::new(), &tris, 2);
    check_dyn(&LoopSlak::cgal(), &tris, 2);
    check_dyn(&LoopLak::new(), &tris, 2);
    check_dyn(&Sqrt3Slak::new(), &tris, 3);
    check_dyn(&Sqrt3Lak::new(), &tris, 3);
}

/// A row of `R_l` reads the parent elements its child point names: a
/// vertex point its vertex, a face point exactly its face's vertices, an
/// edge point both ends of its edge, a trisection point the ends of its
/// face's boundary edge.
fn rows_read_their_elements(plan: &dyn Plan, what: &str) {
    for l in 0..plan.levels() {
        let r = plan.operator(l, Par::Rayon).expect("operator");
        let t = plan.refined(l, Par::Rayon).expect("parent").topology();
        for i in 0..r.nrows() {
            let cols = r.row(i).0;
            let has = |v: u32| cols.binary_search(&v).is_ok();
            let point = plan.child_point(l, i).unwrap_or_else(|| panic!("{what}: row {i} of R_{l} says nothing"));
            match point {
                ChildPoint::Vertex(v) => assert!(has(v), "{what}: R_{l} row {i}, {point:?}"),
                ChildPoint::Face(f) => {
                    let mut vs = t.face(f as usize).to_vec();
                    vs.sort_unstable();
                    assert_eq!(cols, &vs[..], "{what}: R_{l} row {i}, {point:?}");
                }
                ChildPoint::Edge(e) => {
                    assert!(t.edge(e as usize).into_iter().all(has), "{what}: R_{l} row {i}, {point:?}")
                }
                ChildPoint::Trisection { face, .. } => {
                    let on_boundary = (0..3).any(|k| {
                        let e = t.corner_edges()[3 * face as usize + k] as usize;
                        t.is_boundary_edge(e) && t.edge(e).into_iter().all(has)
                    });
                    assert!(on_boundary, "{what}: R_{l} row {i}, {point:?}");
                }
                other => panic!("{what}: R_{l} row {i} is {other:?}"),
            }
        }
        assert_eq!(plan.child_point(l, r.nrows()), None, "{what}: past the rows");
    }
}

#[test]
fn every_row_is_the_child_point_it_says() {
    let registry = Registry::builtin();
    for scheme in registry.schemes() {
        let refiner = scheme.refiner(Backend::Cpu, Path::Kernels, &Setup::default()).expect("kernels");
        let plan = refiner.build(&mesh_for(scheme.faces()), 2, Par::Rayon).expect("build");
        rows_read_their_elements(&*plan, scheme.name());
    }
    // Catmull-Clark's numbering: vertices, then face points, then edge
    // points (Mlakar et al. 2020, §3.2).
    let quads = mesh_for(Faces::Any);
    let plan = CatmarkSlak.build(&quads, 1, Par::Rayon).expect("build");
    let (nv, nf) = (quads.num_vertices() as u32, quads.num_faces() as u32);
    assert_eq!(plan.child_point(0, 0), Some(ChildPoint::Vertex(0)));
    assert_eq!(plan.child_point(0, nv as usize), Some(ChildPoint::Face(0)));
    assert_eq!(plan.child_point(0, (nv + nf) as usize), Some(ChildPoint::Edge(0)));
    // √3's boundary step: trisection points where boundary faces are split.
    let tris = mesh_for(Faces::Triangles);
    let plan = Sqrt3Slak::new().build(&tris, 2, Par::Rayon).expect("build");
    let trisections =
        (0..plan.level_len(2)).filter(|&r| matches!(plan.child_point(1, r), Some(ChildPoint::Trisection { .. })));
    assert!(trisections.count() > 0, "the second step splits the boundary");
}
