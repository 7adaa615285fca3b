//! The edge-friend plan against the specialised kernels.

use ndarray::Array2;
use subla_algebra::Par;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, MeshBuilder};
use subla_scheme::{Plan, Refiner, eval};

use super::CatmarkEdgeFriend;
use crate::CatmarkSlak;

/// Greatest distance from a point of `a` to its nearest in `b`, both ways.
fn distance(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let near = |p: ndarray::ArrayView1<'_, f64>, set: &Array2<f64>| {
        set.rows().into_iter().map(|q| (&p - &q).mapv(|x| x * x).sum().sqrt()).fold(f64::INFINITY, f64::min)
    };
    let one = |x: &Array2<f64>, y: &Array2<f64>| x.rows().into_iter().map(|p| near(p, y)).fold(0f64, f64::max);
    one(a, b).max(one(b, a))
}

fn positions(n: usize) -> Array2<f64> {
    // Irrational-ish coordinates, no symmetry.
    Array2::from_shape_fn((n, 3), |(i, k)| ((i * 7 + k * 13) as f64 * 0.618_033_988_7).sin() + k as f64 * 0.1)
}

fn agree(mesh: &Mesh, levels: u32) {
    let x = positions(mesh.num_vertices());
    let want_plan = CatmarkSlak.build(mesh, levels, Par::Seq).unwrap();
    let want = eval(&want_plan, x.view(), Par::Seq).unwrap();
    for par in [Par::Seq, Par::Rayon] {
        let plan = CatmarkEdgeFriend::new().build(mesh, levels, par).unwrap();
        assert_eq!(plan.levels(), levels);
        for l in 0..=levels {
            assert_eq!(plan.level_len(l), want_plan.level_len(l), "level {l} size");
        }
        let got = eval(&plan, x.view(), par).unwrap();
        let d = distance(&got, &want);
        assert!(d < 1e-12, "levels {levels}: {d}");
        // Five channels at once (two channel groups): each channel the
        // bits of its own one-channel run.
        let x5 = Array2::from_shape_fn((mesh.num_vertices(), 5), |(i, k)| ((i * 11 + k * 5) as f64 * 0.37).cos());
        let y5 = eval(&plan, x5.view(), par).unwrap();
        for k in 0..5 {
            let xk = x5.column(k).to_owned().insert_axis(ndarray::Axis(1));
            let yk = eval(&plan, xk.view(), par).unwrap();
            assert!(y5.column(k).iter().zip(yk.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "channel {k}");
        }
        // The operators chain to the eval.
        let mut y = x.clone();
        for l in 0..levels {
            let r = plan.operator(l, par).unwrap();
            let mut z = Array2::zeros((r.nrows(), 3));
            for i in 0..r.nrows() {
                let (cols, vals) = r.as_ref().slice(i);
                for (&c, &w) in cols.iter().zip(vals) {
                    let row = y.row(c as usize).to_owned();
                    z.row_mut(i).scaled_add(w, &row);
                }
                let sum: f64 = vals.iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "row {i} of R_{l} sums to {sum}");
            }
            y = z;
        }
        let diff = (&y - &got).mapv(f64::abs).fold(0f64, |m, &v| m.max(v));
        assert!(diff < 1e-12, "R and eval differ by {diff}");
        // The faces refer to the same points as the kernels' faces.
        let faces = plan.faces(levels, par).unwrap();
        assert_eq!(faces.num_faces(), want_plan.faces(levels, Par::Seq).unwrap().num_faces());
        let refined = plan.refined(levels, par).unwrap();
        assert_eq!(refined.num_faces(), faces.num_faces());
        // The refined mesh's edges carry the kernels' sharpness (matched by
        // the positions of their ends), and its boundary is theirs.
        let want_mesh = want_plan.refined(levels, Par::Seq).unwrap();
        let key = |p: &Array2<f64>, a: u32, b: u32| {
            let q = |v: u32| [0, 1, 2].map(|k| (p[[v as usize, k]] * 1e9).round() as i64);
            let (x, y) = (q(a), q(b));
            if x < y { (x, y) } else { (y, x) }
        };
        let sharp_edges = |m: &Mesh, p: &Array2<f64>| {
            let t = m.topology();
            let mut v: Vec<_> = (0..t.num_edges())
                .map(|e| {
                    let [a, b] = t.edge(e);
                    (key(p, a, b), m.edge_sharpness()[e].to_bits(), t.is_boundary_edge(e))
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(sharp_edges(refined, &got), sharp_edges(want_mesh, &want), "edges of level {levels}");
        // f32 agrees.
        let got32 = eval(&plan, x.mapv(|v| v as f32).view(), par).unwrap().mapv(f64::from);
        let diff = (&got32 - &got).mapv(f64::abs).fold(0f64, |m, &v| m.max(v));
        assert!(diff < 1e-5, "f32 differs by {diff}");
    }
}

fn cube() -> MeshBuilder {
    MeshBuilder::from_faces(8, &[[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]])
}

#[test]
fn smooth_closed_meshes_agree() {
    agree(&cube().build(Par::Seq).unwrap(), 1);
    agree(&cube().build(Par::Seq).unwrap(), 3);
    // Triangles and a pentagon: the first step makes the quads.
    let tet = Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
    agree(&tet, 3);
}

#[test]
fn boundaries_agree() {
    let grid = MeshBuilder::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]);
    agree(&grid.clone().build(Par::Seq).unwrap(), 3);
    let corners = grid
        .clone()
        .options(subla_mesh::Options { boundary: BoundaryInterpolation::EdgeAndCorner, ..Default::default() });
    agree(&corners.build(Par::Seq).unwrap(), 3);
    let fan = Mesh::from_faces(6, &[&[0u32, 1, 2][..], &[0, 2, 3], &[0, 3, 4, 5]]).unwrap();
    agree(&fan, 3);
    // Boundaries as the only sharp edges: from level 2 on they are not
    // stored, for both crease methods (Chaikin reads the children's
    // sharpness around each vertex), with and without a corner.
    for crease_method in [CreaseMethod::Uniform, CreaseMethod::Chaikin] {
        for boundary in [BoundaryInterpolation::EdgeOnly, BoundaryInterpolation::EdgeAndCorner] {
            let opts = subla_mesh::Options { crease_method, boundary, ..Default::default() };
            let m = grid.clone().options(opts).build(Par::Seq).unwrap();
            agree(&m, 3);
            let plan = CatmarkEdgeFriend::strict().build(&m, 3, Par::Seq).unwrap();
            for l in 2..=3 {
                assert!(plan.level(l).unwrap().edge_sharpness.is_none(), "level {l}: an implicit boundary");
            }
            assert!(plan.level(1).unwrap().edge_sharpness.is_some(), "level 1 stores its boundary");
        }
    }
}

#[test]
fn creases_and_corners_agree() {
    for chaikin in [false, true] {
        let opts = subla_mesh::Options {
            crease_method: if chaikin { CreaseMethod::Chaikin } else { CreaseMethod::Uniform },
            ..Default::default()
        };
        let m = cube()
            .options(opts)
            .crease(0, 1, 2.5)
            .crease(1, 3, 0.7)
            .crease(3, 2, 1.5)
            .crease(5, 7, 10.0)
            .corner(4, 1.3)
            .build(Par::Seq)
            .unwrap();
        agree(&m, 3);
    }
}

#[test]
fn holes_agree() {
    let m = cube().hole(2).build(Par::Seq).unwrap();
    agree(&m, 2);
    let plan = CatmarkEdgeFriend::new().build(&m, 2, Par::Seq).unwrap();
    let want = CatmarkSlak.build(&m, 2, Par::Seq).unwrap();
    let count = |f: subla_scheme::Faces<'_>| f.holes().iter().filter(|&&h| h).count();
    assert_eq!(count(plan.faces(2, Par::Seq).unwrap()), 16);
    assert_eq!(count(want.faces(2, Par::Seq).unwrap()), 16);
    // The grid with no boundary interpolation: every face is a hole.
    let grid = MeshBuilder::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]])
        .options(subla_mesh::Options { boundary: BoundaryInterpolation::None, ..Default::default() })
        .build(Par::Seq)
        .unwrap();
    agree(&grid, 2);
}

#[test]
fn modeling_steps_agree_with_static_builds() {
    let grid = Mesh::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]).unwrap();
    for mesh in [cube().crease(0, 1, 2.5).build(Par::Seq).unwrap(), grid] {
        let x = positions(mesh.num_vertices());
        let full = CatmarkEdgeFriend::new().build(&mesh, 3, Par::Rayon).unwrap();
        let want = eval(&full, x.view(), Par::Rayon).unwrap();
        let mut plan = CatmarkEdgeFriend::new().build(&mesh, 1, Par::Rayon).unwrap();
        let mut y = eval(&plan, x.view(), Par::Rayon).unwrap();
        for _ in 0..2 {
            plan = CatmarkEdgeFriend::new().step(plan, Par::Rayon).unwrap();
            assert_eq!(plan.levels(), 1);
            y = eval(&plan, y.view(), Par::Rayon).unwrap();
        }
        assert_eq!(y, want, "steps and a static build give the same bits");
        // A step on a built plan of two levels (its finest level lean).
        let two = CatmarkEdgeFriend::new().build(&mesh, 2, Par::Rayon).unwrap();
        let y2 = eval(&two, x.view(), Par::Rayon).unwrap();
        let three = CatmarkEdgeFriend::new().step(two, Par::Rayon).unwrap();
        assert_eq!(eval(&three, y2.view(), Par::Rayon).unwrap(), want, "a step on a two-level plan");
    }
}

#[test]
fn unsupported_features_are_refused_or_built_by_the_kernels() {
    let isolated = Mesh::from_faces(5, &[[0, 1, 2, 3]]).unwrap();
    assert!(matches!(
        CatmarkEdgeFriend::strict().build(&isolated, 2, Par::Seq),
        Err(subla_scheme::SchemeError::Unsupported { feature: "an isolated vertex", .. })
    ));
    let fin = Mesh::from_faces(5, &[[0, 1, 2], [0, 1, 3], [1, 0, 4]]).unwrap();
    assert!(matches!(
        CatmarkEdgeFriend::strict().build(&fin, 2, Par::Seq),
        Err(subla_scheme::SchemeError::NotManifold { .. })
    ));
    // The default refiner builds them with the specialised kernels, and
    // says why.
    for m in [&isolated, &fin] {
        let plan = CatmarkEdgeFriend::new().build(m, 2, Par::Seq).unwrap();
        assert!(plan.kernels_because().is_some());
        let x = positions(m.num_vertices());
        let want = eval(&CatmarkSlak.build(m, 2, Par::Seq).unwrap(), x.view(), Par::Seq).unwrap();
        assert_eq!(eval(&plan, x.view(), Par::Seq).unwrap(), want);
        let plan = CatmarkEdgeFriend::new().step(plan, Par::Seq).unwrap();
        assert_eq!(plan.levels(), 1);
    }
    assert!(
        CatmarkEdgeFriend::new()
            .build(&cube().build(Par::Seq).unwrap(), 1, Par::Seq)
            .unwrap()
            .kernels_because()
            .is_none()
    );
}
