//! The edge-friend kernels on the GPU against the CPU's, row by row (both
//! number the points alike): closed and bounded meshes (ghost quads),
//! creases of both methods, corners, holes, modeling steps; the same bits
//! on every run. Skips without an adapter unless `SUBLA_REQUIRE_GPU=1`.

use ndarray::Array2;
use subla_algebra::Par;
use subla_catmark::CatmarkEdgeFriend;
use subla_catmark_gpu::CatmarkEdgeFriendGpu;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, MeshBuilder, Options};
use subla_scheme::{Plan, Refiner, eval};

fn positions(n: usize) -> Array2<f32> {
    Array2::from_shape_fn((n, 3), |(i, k)| (((i * 7 + k * 13) as f64 * 0.618_033_988_7).sin() + k as f64 * 0.1) as f32)
}

fn meshes() -> Vec<(&'static str, Mesh)> {
    let cube = || {
        MeshBuilder::from_faces(
            8,
            &[[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]],
        )
    };
    let grid = || MeshBuilder::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]);
    let creased = |chaikin| {
        cube()
            .options(Options {
                crease_method: if chaikin { CreaseMethod::Chaikin } else { CreaseMethod::Uniform },
                ..Default::default()
            })
            .crease(0, 1, 2.5)
            .crease(1, 3, 0.7)
            .crease(3, 2, 1.5)
            .crease(5, 7, 10.0)
            .corner(4, 1.3)
            .build(Par::Seq)
            .unwrap()
    };
    vec![
        ("cube", cube().build(Par::Seq).unwrap()),
        ("tetrahedron", Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap()),
        ("grid", grid().build(Par::Seq).unwrap()),
        (
            "grid with corners",
            grid()
                .options(Options { boundary: BoundaryInterpolation::EdgeAndCorner, ..Default::default() })
                .build(Par::Seq)
                .unwrap(),
        ),
        ("fan", Mesh::from_faces(6, &[&[0u32, 1, 2][..], &[0, 2, 3], &[0, 3, 4, 5]]).unwrap()),
        ("uniform creases", creased(false)),
        ("chaikin creases", creased(true)),
        ("hole", cube().hole(2).build(Par::Seq).unwrap()),
    ]
}

fn max_diff(a: &Array2<f32>, b: &Array2<f32>) -> f32 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b.iter()).fold(0f32, |m, (p, q)| m.max((p - q).abs()))
}

#[test]
fn gpu_rows_equal_the_cpu_rows() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let gpu = CatmarkEdgeFriendGpu::new(ctx);
    for (name, mesh) in meshes() {
        let x = positions(mesh.num_vertices());
        for levels in [1, 3] {
            let cpu = CatmarkEdgeFriend::strict().build(&mesh, levels, Par::Rayon).unwrap();
            let want = eval(&cpu, x.view(), Par::Rayon).unwrap();
            let plan = gpu.build(&mesh, levels, Par::Rayon).unwrap();
            assert_eq!(plan.output_len(), cpu.output_len(), "{name} L{levels}");
            let got = plan.try_eval(x.view()).unwrap();
            let d = max_diff(&got, &want);
            assert!(d < 1e-5, "{name} L{levels}: GPU and CPU differ by {d}");
            let again = plan.try_eval(x.view()).unwrap();
            assert!(got.iter().zip(again.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{name}: bits changed");
            // Into a caller's array, and timed: the same values.
            let mut into = Array2::from_elem(got.dim(), f32::NAN);
            plan.try_eval_into(x.view(), into.view_mut()).unwrap();
            assert_eq!(into, got, "{name} L{levels}: try_eval_into");
            let (timed, profile) = plan.profile_eval(x.view()).unwrap();
            assert_eq!(timed, got, "{name} L{levels}: profile_eval");
            // One step per level after the first, and the first's.
            assert!(profile.kernels.iter().filter(|k| k.kernel == "points").count() == levels as usize - 1);
            assert!(profile.kernels.iter().all(|k| k.bytes > 0), "{name} L{levels}: {:?}", profile.kernels);
            // The finest faces, read back, are the CPU's.
            let (f_gpu, f_cpu) = (plan.faces(levels, Par::Rayon).unwrap(), cpu.faces(levels, Par::Rayon).unwrap());
            assert_eq!(f_gpu.face_verts(), f_cpu.face_verts(), "{name} L{levels} faces");
            assert_eq!(f_gpu.holes(), f_cpu.holes(), "{name} L{levels} holes");
        }
        // Modeling: steps on the device equal the CPU's steps.
        let mut plan = gpu.build(&mesh, 1, Par::Rayon).unwrap();
        let mut y = plan.try_eval(x.view()).unwrap();
        let mut cpu = CatmarkEdgeFriend::strict().build(&mesh, 1, Par::Rayon).unwrap();
        let mut z = eval(&cpu, x.view(), Par::Rayon).unwrap();
        for step in 0..2 {
            plan = gpu.step(plan, Par::Rayon).unwrap();
            cpu = CatmarkEdgeFriend::strict().step(cpu, Par::Rayon).unwrap();
            assert_eq!(plan.levels(), 1);
            y = plan.try_eval(y.view()).unwrap();
            z = eval(&cpu, z.view(), Par::Rayon).unwrap();
            let d = max_diff(&y, &z);
            assert!(d < 1e-5, "{name} step {step}: GPU and CPU differ by {d}");
            assert_eq!(
                plan.faces(1, Par::Rayon).unwrap().face_verts(),
                cpu.faces(1, Par::Rayon).unwrap().face_verts(),
                "{name} step {step} faces"
            );
        }
    }
}

/// The points kernel gathers four channels at a time: every channel count
/// (one group, a group and a remainder, several groups) gives the CPU's
/// rows, on smooth and creased meshes.
#[test]
fn every_channel_count_gives_the_cpu_rows() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let gpu = CatmarkEdgeFriendGpu::new(ctx);
    for (name, mesh) in meshes().into_iter().filter(|(n, _)| ["cube", "grid", "chaikin creases"].contains(n)) {
        for d in [1usize, 2, 4, 5, 9] {
            let x = Array2::from_shape_fn((mesh.num_vertices(), d), |(i, k)| {
                (((i * 7 + k * 13) as f64 * 0.618_033_988_7).sin() + k as f64 * 0.1) as f32
            });
            let cpu = CatmarkEdgeFriend::strict().build(&mesh, 2, Par::Rayon).unwrap();
            let want = eval(&cpu, x.view(), Par::Rayon).unwrap();
            let got = gpu.build(&mesh, 2, Par::Rayon).unwrap().try_eval(x.view()).unwrap();
            let diff = max_diff(&got, &want);
            assert!(diff < 1e-5, "{name}, {d} channels: GPU and CPU differ by {diff}");
            // Each channel is its own: channel k of a d-channel run is the
            // one-channel run of that column, bit for bit.
            let one =
                gpu.build(&mesh, 2, Par::Rayon).unwrap().try_eval(x.slice(ndarray::s![.., d - 1..]).view()).unwrap();
            assert!(
                one.column(0).iter().zip(got.column(d - 1)).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{name}, {d} channels: the last channel differs from its own run"
            );
        }
    }
}

#[test]
fn meshes_the_encoding_cannot_hold_are_refused() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let gpu = CatmarkEdgeFriendGpu::new(ctx);
    let fin = Mesh::from_faces(5, &[[0, 1, 2], [0, 1, 3], [1, 0, 4]]).unwrap();
    assert!(matches!(gpu.build(&fin, 2, Par::Seq), Err(subla_scheme::SchemeError::NotManifold { .. })));
}
