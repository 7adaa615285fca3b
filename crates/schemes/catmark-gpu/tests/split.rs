//! The GPU quad split equals the CPU `Topology::split_quads` bit for bit:
//! every array of the child and `halves`, one and two levels chained on the
//! device; non-manifold parents and over-large faces are refused.

use std::path::PathBuf;

use proptest::test_runner::{Config, TestRunner};
use subla_algebra::Par;
use subla_catmark_gpu::split::{GpuTopology, QuadSplitKernels, TopologyArrays, split_quads_gpu};
use subla_gpu::{GpuContext, GpuContextOptions, GpuError};
use subla_mesh::{Topology, Validation};

fn mesh(name: &str) -> Topology {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../data/meshes/osd").join(name);
    subla_mesh::obj::read_obj(&path, Validation::OpenSubdiv).expect("read obj").mesh.topology().clone()
}

/// Splits `t` `levels` times on the device (chained) and on the CPU, and
/// compares every level's arrays and halves.
fn check(ctx: &GpuContext, kernels: &QuadSplitKernels, t: &Topology, levels: usize, what: &str) {
    assert!(t.is_manifold(), "{what}: not manifold");
    let mut gpu = GpuTopology::upload(ctx, t).expect("upload");
    assert_eq!(gpu.download(ctx).expect("download"), TopologyArrays::from_topology(t), "{what}: upload round trip");
    let mut cpu = t.clone();
    for level in 1..=levels {
        let (child, halves) = kernels.split(ctx, &gpu).expect("gpu split");
        let want = cpu.split_quads(Par::Seq).expect("cpu split");
        assert_eq!(halves.download(ctx).expect("download halves"), want.halves, "{what}: halves of level {level}");
        let got = child.download(ctx).expect("download child");
        let expected = TopologyArrays::from_topology(&want.topology);
        // Field by field first, for a readable failure.
        assert_eq!(got.face_ptr, expected.face_ptr, "{what}: face_ptr of level {level}");
        assert_eq!(got.face_verts, expected.face_verts, "{what}: face_verts of level {level}");
        assert_eq!(got.corner_edges, expected.corner_edges, "{what}: corner_edges of level {level}");
        assert_eq!(got.edges, expected.edges, "{what}: edges of level {level}");
        assert_eq!(got.edge_corner_ptr, expected.edge_corner_ptr, "{what}: edge_corner_ptr of level {level}");
        assert_eq!(got.edge_corners, expected.edge_corners, "{what}: edge_corners of level {level}");
        assert_eq!(got.vertex_corners, expected.vertex_corners, "{what}: vertex_corners of level {level}");
        assert_eq!(got.vertex_edges, expected.vertex_edges, "{what}: vertex_edges of level {level}");
        assert_eq!(got, expected, "{what}: level {level}");
        assert!(child.is_manifold() && child.max_face_order() <= 4);
        gpu = child;
        cpu = want.topology;
    }
}

#[test]
fn osd_meshes_split_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = QuadSplitKernels::new(ctx)?;
    for name in ["catmark_cube.obj", "catmark_edgecorner.obj", "catmark_hole_test1.obj", "catmark_chaikin2.obj"] {
        check(ctx, &kernels, &mesh(name), 2, name);
    }
    Ok(())
}

#[test]
fn torus_splits_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let data = subla_mesh::proptest_support::torus(20, 15, 1);
    let t = data.mesh.topology();
    check(ctx, &QuadSplitKernels::new(ctx)?, t, 2, "torus 20 x 15");
    // The one-call form.
    let (child, halves) = split_quads_gpu(ctx, &GpuTopology::upload(ctx, t)?)?;
    let want = t.split_quads(Par::Seq).expect("cpu split");
    assert_eq!(halves.download(ctx)?, want.halves);
    assert_eq!(child.download(ctx)?, TopologyArrays::from_topology(&want.topology));
    Ok(())
}

#[test]
fn device_built_levels_split_as_on_the_cpu() -> Result<(), GpuError> {
    // The control level built on the device from its faces alone feeds the
    // split as an uploaded one does.
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let data = subla_mesh::proptest_support::torus(12, 9, 3);
    let t = data.mesh.topology();
    let built = GpuTopology::build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts())?;
    let (child, halves) = QuadSplitKernels::new(ctx)?.split(ctx, &built)?;
    let want = t.split_quads(Par::Seq).expect("cpu split");
    assert_eq!(halves.download(ctx)?, want.halves);
    assert_eq!(child.download(ctx)?, TopologyArrays::from_topology(&want.topology));
    Ok(())
}

#[test]
fn closed_quad_meshes_split_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = QuadSplitKernels::new(ctx)?;
    let mut runner = TestRunner::new(Config { cases: 12, ..Config::default() });
    runner
        .run(&subla_mesh::proptest_support::closed_quad_mesh(), |data| {
            check(ctx, &kernels, data.mesh.topology(), 2, "closed quad mesh");
            Ok(())
        })
        .map_err(|e| GpuError::Internal { operation: "closed quad meshes", message: e.to_string() })
}

#[test]
fn polygon_faces_and_isolated_vertices_split_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = QuadSplitKernels::new(ctx)?;
    // A triangle, a quad and a pentagon sharing edges, an isolated vertex
    // (8), and a 64-gon (the largest order the GPU accepts).
    let mut ptr = vec![0u32, 3, 7, 12];
    let mut verts = vec![0u32, 1, 2, 1, 3, 4, 2, 3, 5, 6, 7, 4];
    let n = 64u32;
    verts.extend((0..n).map(|k| 9 + k));
    ptr.push(12 + n);
    let t = Topology::build(9 + n as usize, ptr, verts, Par::Seq).expect("build");
    check(ctx, &kernels, &t, 2, "mixed polygons");
    Ok(())
}

#[test]
fn non_manifold_and_large_faces_are_refused() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = QuadSplitKernels::new(ctx)?;
    let t = mesh("catmark_nonman_quadpole8.obj");
    assert!(!t.is_manifold());
    let gpu = GpuTopology::upload(ctx, &t)?;
    assert!(!gpu.is_manifold());
    match kernels.split(ctx, &gpu) {
        Err(GpuError::ManifoldRequired { operation: "the GPU quad split" }) => {}
        other => panic!("expected the non-manifold refusal, got {other:?}"),
    }
    let n = 65u32;
    let t = Topology::build(n as usize, vec![0, n], (0..n).collect(), Par::Seq).expect("build");
    assert!(t.is_manifold());
    match kernels.split(ctx, &GpuTopology::upload(ctx, &t)?) {
        Err(GpuError::TooLarge { limit: "max face order", .. }) => {}
        other => panic!("expected the face-order refusal, got {other:?}"),
    }
    Ok(())
}

#[test]
fn two_dimensional_grids_split_as_on_the_cpu() -> Result<(), GpuError> {
    // At most 8 workgroups per dimension: every kernel runs on a 2-D grid
    // (flat index wg.y * nwg.x + wg.x) with surplus invocations.
    let options = GpuContextOptions::default().max_workgroups_per_dimension(8);
    let Some(ctx) = subla_gpu::testing::context_with_options_or_skip(options) else { return Ok(()) };
    let data = subla_mesh::proptest_support::torus(20, 15, 1);
    check(&ctx, &QuadSplitKernels::new(&ctx)?, data.mesh.topology(), 2, "torus on a 2-D grid");
    Ok(())
}

#[test]
#[ignore = "larger mesh (~20 k parent faces, 3 levels); run with --ignored"]
fn large_torus_splits_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let data = subla_mesh::proptest_support::torus(150, 130, 7);
    check(ctx, &QuadSplitKernels::new(ctx)?, data.mesh.topology(), 3, "torus 150 x 130");
    Ok(())
}
