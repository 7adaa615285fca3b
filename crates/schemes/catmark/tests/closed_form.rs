//! The composed refinement matrix with regular rows in closed form
//! (`Refinement::compose_with`, `Refinement::composed_of`,
//! `Refinement::tensor_of` once merged) is the product
//! of the per-level matrices, bit for bit, and its rows kept in tensor
//! form evaluate to the composed matrix's bits.

use ndarray::Array2;
use proptest::prelude::*;
use subla_algebra::{CsrMat, Par};
use subla_catmark::{CatmarkEdgeFriend, CatmarkHalfedge, CatmarkSlak};
use subla_mesh::proptest_support::{any_mesh, closed_quad_mesh, mesh_with_creases, torus};
use subla_mesh::{Mesh, MeshBuilder};
use subla_scheme::refinement::{Budget, Evaluation, Refinement};
use subla_scheme::testing::{check_tensor, with_threads};
use subla_scheme::{Plan, Refiner, SchemeError};

fn bits(m: &CsrMat<f64>) -> (Vec<u32>, Vec<u32>, Vec<u64>) {
    (m.ptr().to_vec(), m.indices().to_vec(), m.values().iter().map(|v| v.to_bits()).collect())
}

/// The product, the product with closed-form rows, and the composed
/// matrix alone agree to the bit, for the plans of the specialised kernels,
/// of the edge-friend encoding and of the halfedge levels (whose closed
/// forms cover the same rows, in their own numberings); returns how many
/// rows had a closed form.
fn check(mesh: &Mesh, levels: u32) -> usize {
    let slak = check_plan(&CatmarkSlak, mesh, levels);
    let ef = check_plan(&CatmarkEdgeFriend::new(), mesh, levels);
    assert_eq!(ef, slak, "rows in closed form, edge-friend against the kernels");
    let he = check_plan(&CatmarkHalfedge::new(), mesh, levels);
    assert_eq!(he, slak, "rows in closed form, halfedge against the kernels");
    slak
}

fn check_plan<R: Refiner<Input = Mesh>>(refiner: &R, mesh: &Mesh, levels: u32) -> usize {
    let plan = refiner.build(mesh, levels, Par::Rayon).unwrap();
    let mut plain = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon).unwrap();
    let want = bits(plain.compose(Budget::UNLIMITED, Par::Rayon).unwrap());
    let mut with = Refinement::chain(&plan, Budget::UNLIMITED, Par::Rayon).unwrap();
    assert_eq!(bits(with.compose_with(&plan, Budget::UNLIMITED, Par::Rayon).unwrap()), want, "compose_with");
    for threads in [1, 2, 3] {
        let alone = with_threads(threads, || Refinement::composed_of(&plan, Budget::UNLIMITED, Par::Rayon)).unwrap();
        assert_eq!(bits(alone.composed().unwrap()), want, "composed_of, {threads} threads");
    }
    let mut alone = Refinement::composed_of(&plan, Budget::UNLIMITED, Par::Seq).unwrap();
    assert_eq!(bits(alone.composed().unwrap()), want, "composed_of, Par::Seq");
    // With the tensor rows kept apart, merged on demand: the same bits.
    for threads in [1, 2, 3] {
        let mut parts = with_threads(threads, || Refinement::tensor_of(&plan, Budget::UNLIMITED, Par::Rayon)).unwrap();
        assert_eq!(parts.composed_nnz(), Some(want.1.len() as u64), "tensor_of's nonzeros, {threads} threads");
        let merged = with_threads(threads, || parts.compose(Budget::UNLIMITED, Par::Rayon).map(bits)).unwrap();
        assert_eq!(merged, want, "tensor_of, then compose, {threads} threads");
    }
    let mut parts = Refinement::tensor_of(&plan, Budget::UNLIMITED, Par::Seq).unwrap();
    assert_eq!(bits(parts.compose(Budget::UNLIMITED, Par::Seq).unwrap()), want, "tensor_of, Par::Seq");
    // The rows kept in tensor form evaluate to the composed matrix's bits,
    // for any thread count.
    if alone.tensor_rows().is_some() {
        let n = plan.input_len();
        let x = Array2::from_shape_fn((n, 3), |(i, c)| ((3 * i + c) as f64 * 0.731).sin() * 10.0);
        let composed = alone.evaluator::<f64>(Evaluation::Composed, 3, Budget::UNLIMITED, Par::Rayon).unwrap();
        let mut want = Array2::zeros((plan.output_len(), 3));
        composed.apply(x.view(), want.view_mut(), Par::Seq);
        let tensor = alone.evaluator::<f64>(Evaluation::Tensor, 3, Budget::UNLIMITED, Par::Rayon).unwrap();
        for threads in [1, 2, 3] {
            let mut got = Array2::zeros((plan.output_len(), 3));
            with_threads(threads, || tensor.apply(x.view(), got.view_mut(), Par::Rayon));
            let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "tensor evaluation, {threads} threads");
        }
        check_tensor("closed form", &alone, &x);
        // The tensor evaluator of the rows kept apart: the same bits.
        let mut parts = Refinement::tensor_of(&plan, Budget::UNLIMITED, Par::Rayon).unwrap();
        let tensor = parts.evaluator::<f64>(Evaluation::Tensor, 3, Budget::UNLIMITED, Par::Rayon).unwrap();
        let mut got = Array2::zeros((plan.output_len(), 3));
        tensor.apply(x.view(), got.view_mut(), Par::Rayon);
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "tensor_of's tensor evaluation");
        check_tensor("closed form, kept apart", &parts, &x);
    }
    let cf = plan.closed_form(Par::Rayon).unwrap();
    cf.map_or(0, |cf| (0..plan.output_len()).filter(|&i| cf.row_len(i).is_some()).count())
}

#[test]
fn a_torus_is_closed_form_throughout() {
    let d = torus(7, 5, 3);
    for levels in 1..=3 {
        let plan = CatmarkSlak.build(&d.mesh, levels, Par::Rayon).unwrap();
        assert_eq!(check(&d.mesh, levels), plan.output_len(), "every row of a regular torus, level {levels}");
    }
}

#[test]
fn tensor_rows_kept_apart_respect_the_budget() {
    let d = torus(7, 5, 3);
    let plan = CatmarkSlak.build(&d.mesh, 2, Par::Rayon).unwrap();
    let tiny = Refinement::tensor_of(&plan, Budget::bytes(16), Par::Rayon);
    assert!(matches!(tiny, Err(SchemeError::OverBudget { .. })), "{tiny:?}");
    // Enough for the tensor form, not for the merged matrix: `compose`
    // refuses, and the tensor form stays usable.
    let mut parts = Refinement::tensor_of(&plan, Budget::UNLIMITED, Par::Rayon).unwrap();
    let tensor_bytes = parts.tensor_rows().unwrap().bytes();
    let merged = parts.compose(Budget::bytes(2 * tensor_bytes), Par::Rayon).map(|_| ());
    assert!(matches!(merged, Err(SchemeError::OverBudget { .. })), "{merged:?}");
    assert!(parts.composed().is_none());
    assert!(parts.evaluator::<f64>(Evaluation::Tensor, 3, Budget::UNLIMITED, Par::Rayon).is_ok());
}

#[test]
fn a_torus_too_small_for_distinct_patches_has_no_closed_form() {
    // On a 3 × 3 torus every 4 × 4 patch wraps onto itself.
    let d = torus(3, 3, 1);
    assert_eq!(check(&d.mesh, 2), 0);
}

#[test]
fn an_extraordinary_vertex_leaves_the_rows_around_it_open() {
    // A cube split into 6 × 6 quads per side: valence 3 at the eight corners.
    let mesh = cube(6);
    let plan = CatmarkSlak.build(&mesh, 2, Par::Rayon).unwrap();
    let closed = check(&mesh, 2);
    assert!(closed > 0 && closed < plan.output_len(), "{closed} of {} rows in closed form", plan.output_len());
}

#[test]
fn sharp_vertices_and_edges_leave_the_rows_around_them_open() {
    // A 9 × 8 torus grid: every face regular but for a corner at vertex 20
    // and a crease on the edge (50, 51).
    let (m, n) = (9u32, 8u32);
    let id = |i: u32, j: u32| (i % m) * n + j % n;
    let faces: Vec<[u32; 4]> =
        (0..m).flat_map(|i| (0..n).map(move |j| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)])).collect();
    let builder = || MeshBuilder::from_faces((m * n) as usize, &faces);
    for (what, mesh) in [
        ("corner", builder().corner(20, 2.0).build(Par::Seq).unwrap()),
        ("crease", builder().crease(50, 51, 1.5).build(Par::Seq).unwrap()),
    ] {
        for levels in 1..=2 {
            let plan = CatmarkSlak.build(&mesh, levels, Par::Rayon).unwrap();
            let closed = check(&mesh, levels);
            assert!(closed > 0 && closed < plan.output_len(), "{what}, level {levels}: {closed} rows closed");
        }
    }
}

#[test]
fn deep_plans_have_no_closed_form() {
    let d = torus(4, 4, 1);
    let plan = CatmarkSlak.build(&d.mesh, 9, Par::Rayon).unwrap();
    assert!(plan.closed_form(Par::Rayon).unwrap().is_none());
}

#[test]
fn edge_friend_and_halfedge_plans_keep_their_closed_form_from_the_control_mesh_only() {
    fn go<R: Refiner<Input = Mesh>>(r: &R) {
        let d = torus(7, 5, 3);
        let plan = r.build(&d.mesh, 2, Par::Rayon).unwrap();
        let cf = plan.closed_form(Par::Rayon).unwrap().expect("a regular torus has a closed form");
        assert!((0..plan.output_len()).all(|i| cf.row_len(i).is_some()), "{}", r.name());
        drop(cf);
        // A modeling step starts at a refined level: no control faces, no
        // closed form, and the composed matrix is the chain's product.
        let stepped = r.step(plan, Par::Rayon).unwrap();
        assert!(stepped.closed_form(Par::Rayon).unwrap().is_none(), "{}", r.name());
        let deep = r.build(&torus(4, 4, 1).mesh, 9, Par::Rayon).unwrap();
        assert!(deep.closed_form(Par::Rayon).unwrap().is_none(), "{}", r.name());
    }
    go(&CatmarkEdgeFriend::strict());
    go(&CatmarkHalfedge::strict());
}

/// A cube with each side split into `k × k` quads.
fn cube(k: usize) -> Mesh {
    let mut verts: Vec<[i64; 3]> = Vec::new();
    let mut faces = Vec::new();
    let id = |p: [i64; 3], verts: &mut Vec<[i64; 3]>| -> u32 {
        match verts.iter().position(|&q| q == p) {
            Some(i) => i as u32,
            None => {
                verts.push(p);
                (verts.len() - 1) as u32
            }
        }
    };
    let k = k as i64;
    // Each side: a fixed axis at 0 or k, the other two spanning the grid
    // with the orientation facing outwards.
    for axis in 0..3 {
        for high in [false, true] {
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            for i in 0..k {
                for j in 0..k {
                    let mut quad = [[0i64; 3]; 4];
                    for (n, (di, dj)) in [(0, 0), (1, 0), (1, 1), (0, 1)].into_iter().enumerate() {
                        let mut p = [0i64; 3];
                        p[axis] = if high { k } else { 0 };
                        p[a] = i + di;
                        p[b] = j + dj;
                        quad[n] = p;
                    }
                    if !high {
                        quad.reverse();
                    }
                    let f: Vec<u32> = quad.iter().map(|&p| id(p, &mut verts)).collect();
                    faces.push(f);
                }
            }
        }
    }
    Mesh::from_faces(verts.len(), &faces).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn closed_quad_meshes(d in closed_quad_mesh(), levels in 1u32..4) {
        check(&d.mesh, levels);
    }
    #[test]
    fn meshes_with_creases(d in mesh_with_creases(), levels in 1u32..3) {
        check(&d.mesh, levels);
    }
    #[test]
    fn any_meshes(d in any_mesh(), levels in 1u32..3) {
        check(&d.mesh, levels);
    }
}
