//! Properties of face-varying refinement: every operator's rows sum to 1;
//! in `All` mode values are refined as bilinear vertex data; with one
//! value per vertex (no seams) in `None` mode, values are refined as the
//! vertex data are; refinement is the same for any thread count.

use ndarray::Array2;
use subla_algebra::Par;
use subla_catmark::fvar::{self, QuadScheme};
use subla_catmark::{Bilinear, CatmarkSlak};
use subla_mesh::proptest_support::any_mesh;
use subla_mesh::{FVarLinearInterpolation as M, Mesh};
use subla_scheme::{Plan, Refiner, eval};

use proptest::prelude::*;

/// Values of a channel with seams: a value per corner, merged with the
/// previous corner of the same vertex where `glue` says so.
fn channel(mesh: &Mesh, glue: &[bool]) -> (Vec<u32>, Array2<f64>) {
    let t = mesh.topology();
    let mut idx = vec![0u32; t.num_corners()];
    let mut n = 0u32;
    for v in 0..t.num_vertices() {
        for (k, &c) in t.vertex_corners(v).iter().enumerate() {
            if k == 0 || !glue[c as usize % glue.len().max(1)] {
                idx[c as usize] = n;
                n += 1;
            } else {
                idx[c as usize] = n - 1;
            }
        }
    }
    let values = Array2::from_shape_fn((n as usize, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
    (idx, values)
}

fn modes() -> [M; 6] {
    [M::None, M::CornersOnly, M::CornersPlus1, M::CornersPlus2, M::Boundaries, M::All]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn rows_sum_to_one_and_threads_agree(data in any_mesh(), glue in prop::collection::vec(any::<bool>(), 1..9)) {
        let mesh = data.mesh;
        let (idx, values) = channel(&mesh, &glue);
        for mode in modes() {
            for scheme in [QuadScheme::Catmark, QuadScheme::Bilinear] {
                let plan = fvar::build(&mesh, &idx, values.nrows(), 2, mode, scheme, Par::Seq).unwrap();
                for r in plan.operators() {
                    for i in 0..r.nrows() {
                        let s: f64 = r.row(i).1.iter().sum();
                        prop_assert!((s - 1.0).abs() < 1e-12, "{mode:?} row {i} sums to {s}");
                    }
                }
                let a = plan.eval_owned(values.view(), Par::Seq).unwrap();
                let par = fvar::build(&mesh, &idx, values.nrows(), 2, mode, scheme, Par::Rayon).unwrap();
                let b = par.eval_owned(values.view(), Par::Rayon).unwrap();
                prop_assert_eq!(&a, &b);
                prop_assert_eq!(plan.indices(2), par.indices(2));
                // Every level into reused buffers, in f64 and f32: the bits
                // of a CSR SpMV by each operator.
                let mut bufs = plan.level_buffers::<f64>(2).unwrap();
                plan.eval_levels(values.view(), &mut bufs, Par::Rayon).unwrap();
                prop_assert_eq!(bufs.finest().unwrap(), a.view());
                let mut x = values.clone();
                for (l, r) in plan.operators().iter().enumerate() {
                    x = subla_algebra::spmv::spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Seq);
                    let same = x.iter().zip(bufs.level(l as u32 + 1)).all(|(p, q)| p.to_bits() == q.to_bits());
                    prop_assert!(same, "{mode:?} level {}", l + 1);
                }
                let v32 = values.mapv(|v| v as f32);
                let mut b32 = plan.level_buffers::<f32>(2).unwrap();
                plan.eval_levels(v32.view(), &mut b32, Par::Seq).unwrap();
                let mut x32 = v32.clone();
                for r in plan.operators() {
                    x32 = subla_algebra::spmv::spmv_csr(r.as_ref(), x32.view(), |&w, _, _| w as f32, Par::Seq);
                }
                prop_assert!(x32.iter().zip(b32.finest().unwrap()).all(|(p, q)| p.to_bits() == q.to_bits()));
                let mut o32 = Array2::<f32>::zeros((plan.output_len(), 2));
                plan.eval_f32(v32.view(), o32.view_mut(), Par::Rayon).unwrap();
                prop_assert_eq!(o32.view(), b32.finest().unwrap());
            }
        }
    }

    /// `faces` hands out the value mesh's faces without deriving it: the
    /// same faces, counts and holes as [`Plan::refined`]'s, at every level.
    #[test]
    fn faces_are_the_value_meshs(data in any_mesh(), glue in prop::collection::vec(any::<bool>(), 1..9)) {
        let mesh = data.mesh;
        let (idx, values) = channel(&mesh, &glue);
        for mode in [M::CornersPlus1, M::Boundaries] {
            let plan = fvar::build(&mesh, &idx, values.nrows(), 2, mode, QuadScheme::Catmark, Par::Rayon).unwrap();
            for l in 0..=2 {
                let f = plan.faces(l, Par::Rayon).unwrap();
                // A value mesh that is not a valid mesh has no `refined`.
                let Ok(m) = plan.refined(l, Par::Rayon) else { continue };
                prop_assert_eq!(f, subla_scheme::Faces::of(m), "{:?} level {}", mode, l);
            }
            prop_assert!(plan.faces(3, Par::Rayon).is_err());
        }
    }

    #[test]
    fn no_level_gives_every_corner_its_value(data in any_mesh(), glue in prop::collection::vec(any::<bool>(), 1..9)) {
        let mesh = data.mesh;
        let (idx, values) = channel(&mesh, &glue);
        let plan = fvar::build(&mesh, &idx, values.nrows(), 0, M::CornersPlus1, QuadScheme::Catmark, Par::Seq).unwrap();
        let fv = plan.refine(values.view(), Par::Seq).unwrap();
        prop_assert_eq!(fv.indices.len(), idx.len());
        for (c, (&a, &b)) in fv.indices.iter().zip(&idx).enumerate() {
            prop_assert_eq!(fv.values.row(a as usize), values.row(b as usize), "corner {}", c);
        }
    }

    /// The algebra formulation: Catmull-Clark (the mapped-algebra path and
    /// the kernels) or bilinear refinement of the tagged value mesh equals
    /// the face-varying plan, corner by corner, wherever no value takes an
    /// approximate (semi-sharp or non-manifold) tag.
    #[test]
    fn refining_the_tagged_value_mesh_is_the_channel_refinement(
        data in any_mesh(),
        glue in prop::collection::vec(any::<bool>(), 1..9),
    ) {
        let mesh = data.mesh;
        let (idx, values) = channel(&mesh, &glue);
        for mode in modes() {
            let vm = fvar::value_mesh(&mesh, &idx, values.nrows(), mode).unwrap();
            if vm.approximate > 0 {
                continue;
            }
            let rows: Vec<usize> = vm.source.iter().map(|&r| r as usize).collect();
            let x = values.select(ndarray::Axis(0), &rows);
            let want = fvar::build(&mesh, &idx, values.nrows(), 2, mode, QuadScheme::Catmark, Par::Seq)
                .unwrap()
                .refine(values.view(), Par::Seq)
                .unwrap();
            let check = |plan: &dyn Plan, what: &str| -> Result<(), TestCaseError> {
                let out = eval(plan, x.view(), Par::Seq).unwrap();
                let faces = plan.refined(2, Par::Seq).unwrap().topology().face_verts().to_vec();
                prop_assert_eq!(faces.len(), want.indices.len());
                for (c, (&v, &w)) in faces.iter().zip(&want.indices).enumerate() {
                    for k in 0..2 {
                        let (a, b) = (out[(v as usize, k)], want.values[(w as usize, k)]);
                        prop_assert!((a - b).abs() < 1e-12, "{:?} {}: corner {} {} vs {}", mode, what, c, a, b);
                    }
                }
                Ok(())
            };
            if mode == M::All {
                check(&Bilinear.build(&vm.mesh, 2, Par::Seq).unwrap(), "bilinear")?;
            } else {
                match subla_catmark::CatmarkLak.build(&vm.mesh, 2, Par::Seq) {
                    Ok(p) => check(&p, "algebra")?,
                    // The mapped-algebra path does not take every mesh
                    // (non-manifold edges): the kernels below still do.
                    Err(subla_scheme::SchemeError::AlgebraPathLimit { .. }) => {}
                    Err(e) => panic!("{mode:?}: {e}"),
                }
                check(&CatmarkSlak.build(&vm.mesh, 2, Par::Seq).unwrap(), "kernels")?;
            }
        }
    }

    #[test]
    fn all_mode_is_bilinear_refinement_of_the_values(data in any_mesh()) {
        let mesh = data.mesh;
        // One value per vertex: the value mesh is the vertex mesh, and
        // linear refinement is bilinear subdivision of the values.
        let t = mesh.topology();
        let idx: Vec<u32> = t.face_verts().to_vec();
        let values = Array2::from_shape_fn((t.num_vertices(), 2), |(i, j)| ((i * 5 + j) % 13) as f64);
        let plan = fvar::build(&mesh, &idx, values.nrows(), 2, M::All, QuadScheme::Catmark, Par::Seq).unwrap();
        let got = plan.refine(values.view(), Par::Seq).unwrap();
        let bil = Bilinear.build(&mesh, 2, Par::Seq).unwrap();
        let want = eval(&bil, values.view(), Par::Seq).unwrap();
        let faces = bil.refined(2, Par::Seq).unwrap().topology().face_verts().to_vec();
        for (c, &v) in faces.iter().enumerate() {
            let g = got.indices[c] as usize;
            for j in 0..2 {
                prop_assert!((got.values[(g, j)] - want[(v as usize, j)]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn none_mode_without_seams_refines_values_as_vertex_data(data in any_mesh()) {
        let mesh = data.mesh;
        let t = mesh.topology();
        let idx: Vec<u32> = t.face_verts().to_vec();
        let values = Array2::from_shape_fn((t.num_vertices(), 3), |(i, j)| ((i * 3 + j * 5) % 17) as f64);
        let plan = fvar::build(&mesh, &idx, values.nrows(), 2, M::None, QuadScheme::Catmark, Par::Seq).unwrap();
        let got = plan.refine(values.view(), Par::Seq).unwrap();
        let cc = CatmarkSlak.build(&mesh, 2, Par::Seq).unwrap();
        let want = eval(&cc, values.view(), Par::Seq).unwrap();
        let faces = cc.refined(2, Par::Seq).unwrap().topology().face_verts().to_vec();
        for (c, &v) in faces.iter().enumerate() {
            let g = got.indices[c] as usize;
            for j in 0..3 {
                prop_assert!((got.values[(g, j)] - want[(v as usize, j)]).abs() < 1e-12);
            }
        }
    }
}

/// Bad input is a typed error naming what is wrong, not a panic.
#[test]
fn bad_indices_are_errors() {
    let mesh = Mesh::from_faces(4, &[[0u32, 1, 2, 3]]).unwrap();
    let short = fvar::build(&mesh, &[0, 1, 2], 4, 1, M::All, QuadScheme::Catmark, Par::Seq);
    assert!(matches!(
        short,
        Err(subla_scheme::SchemeError::Mesh(subla_mesh::MeshError::DataLength { expected: 4, found: 3, .. }))
    ));
    let out_of_range = fvar::build(&mesh, &[0, 1, 2, 9], 4, 1, M::All, QuadScheme::Catmark, Par::Seq);
    assert!(matches!(
        out_of_range,
        Err(subla_scheme::SchemeError::Mesh(subla_mesh::MeshError::DataLength { expected: 10, found: 4, .. }))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// OBJ → refine → OBJ keeps every channel: the refined positions, the
    /// refined texture coordinates of every corner and the normals written
    /// per vertex read back bit for bit, on the same faces; PLY keeps the
    /// positions and the texture coordinates.
    #[test]
    fn refined_channels_round_trip_through_obj_and_ply(
        data in any_mesh(),
        glue in prop::collection::vec(any::<bool>(), 1..9),
    ) {
        use subla_mesh::{FaceVarying, MeshData, Validation};
        let (idx, values) = channel(&data.mesh, &glue);
        let plan = CatmarkSlak.build(&data.mesh, 1, Par::Seq).unwrap();
        let positions = eval(&plan, data.vertices.view(), Par::Seq).unwrap();
        let mesh = plan.refined(1, Par::Seq).unwrap().clone();
        let uv = fvar::build(&data.mesh, &idx, values.nrows(), 1, M::CornersPlus1, QuadScheme::Catmark, Par::Seq)
            .unwrap()
            .refine(values.view(), Par::Seq)
            .unwrap();
        let t = mesh.topology();
        let normals = subla_mesh::normals::vertex_normals(t, mesh.holes(), positions.view(), Par::Seq);
        let mut out = MeshData::new(mesh.clone(), positions).unwrap();
        out.texcoords = Some(uv);
        out.normals = Some(FaceVarying { values: normals, indices: t.face_verts().to_vec() });
        let mut bytes = Vec::new();
        subla_mesh::obj::write_obj(&out, &mut bytes).unwrap();
        let back = subla_mesh::obj::parse_obj(&bytes, Validation::OpenSubdiv).unwrap();
        let bt = back.mesh.topology();
        prop_assert_eq!(bt.face_ptr(), t.face_ptr());
        prop_assert_eq!(bt.face_verts(), t.face_verts());
        let bits = |a: &Array2<f64>| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back.vertices), bits(&out.vertices));
        let corners = |fv: &FaceVarying| -> Vec<u64> {
            fv.indices.iter().flat_map(|&i| fv.values.row(i as usize).iter().map(|x| x.to_bits()).collect::<Vec<_>>()).collect()
        };
        for (name, a, b) in [("vt", &out.texcoords, &back.texcoords), ("vn", &out.normals, &back.normals)] {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref());
            prop_assert!(b.is_some(), "{} read back", name);
            prop_assert_eq!(corners(a), corners(b.unwrap()), "{}", name);
        }
        for enc in [subla_mesh::ply::PlyEncoding::Ascii, subla_mesh::ply::PlyEncoding::BinaryLittleEndian] {
            let mut ply = Vec::new();
            subla_mesh::ply::write_ply(&out, &mut ply, enc).unwrap();
            let back = subla_mesh::ply::parse_ply(&ply, Validation::OpenSubdiv).unwrap();
            prop_assert_eq!(bits(&back.vertices), bits(&out.vertices));
            prop_assert_eq!(corners(out.texcoords.as_ref().unwrap()), corners(back.texcoords.as_ref().unwrap()));
        }
    }
}
