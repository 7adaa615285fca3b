//! The device topology build equals the CPU `Topology::build` array for
//! array on manifold meshes (the OpenSubdiv shapes, generated meshes, mixed
//! polygons, isolated vertices, high valences), is deterministic, and
//! refuses non-manifold meshes (`GpuError::NotManifold`, with the kinds
//! found and the lowest vertex involved, as the CPU's tags place it) and
//! malformed faces (`GpuError::InvalidFaces`, naming the face); uploaded
//! topologies, and topologies put
//! together from their parts, read back as the CPU's.

use std::path::PathBuf;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestRunner};
use subla_algebra::Par;
use subla_gpu::topology::{GpuTopology, TopologyArrays, TopologyKernels};
use subla_gpu::{FaceDefect, GpuContext, GpuContextOptions, GpuError, ManifoldDefect, ManifoldDefects};
use subla_mesh::topology::vertex_tag;
use subla_mesh::{Topology, Validation};

fn osd_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/osd")
}

/// The CPU oracle: `Topology::build` on the faces.
fn cpu(num_vertices: usize, face_ptr: &[u32], face_verts: &[u32]) -> Topology {
    Topology::build(num_vertices, face_ptr.to_vec(), face_verts.to_vec(), Par::Seq).expect("cpu build")
}

/// Builds `t`'s faces on the device and compares every array with `t`'s.
fn check(ctx: &GpuContext, kernels: &TopologyKernels, t: &Topology, what: &str) {
    assert!(t.is_manifold(), "{what}: not manifold");
    let gpu = kernels
        .build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts())
        .unwrap_or_else(|e| panic!("{what}: device build failed: {e}"));
    assert_eq!(
        (gpu.num_vertices(), gpu.num_faces(), gpu.num_edges(), gpu.num_corners()),
        (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners()),
        "{what}: counts"
    );
    assert_eq!(gpu.max_face_order(), (0..t.num_faces()).map(|f| t.face_order(f)).max().unwrap_or(0), "{what}");
    assert!(gpu.is_manifold());
    let got = gpu.download(ctx).expect("download");
    let want = TopologyArrays::from_topology(t);
    // Field by field first, for a readable failure.
    assert_eq!(got.corner_faces, want.corner_faces, "{what}: corner_faces");
    assert_eq!(got.edges, want.edges, "{what}: edges");
    assert_eq!(got.corner_edges, want.corner_edges, "{what}: corner_edges");
    assert_eq!(got.edge_corner_ptr, want.edge_corner_ptr, "{what}: edge_corner_ptr");
    assert_eq!(got.edge_corners, want.edge_corners, "{what}: edge_corners");
    assert_eq!(got.edge_tags, want.edge_tags, "{what}: edge_tags");
    assert_eq!(got.vertex_corner_ptr, want.vertex_corner_ptr, "{what}: vertex_corner_ptr");
    assert_eq!(got.vertex_corners, want.vertex_corners, "{what}: vertex_corners");
    assert_eq!(got.vertex_edge_ptr, want.vertex_edge_ptr, "{what}: vertex_edge_ptr");
    assert_eq!(got.vertex_edges, want.vertex_edges, "{what}: vertex_edges");
    assert_eq!(got.vertex_tags, want.vertex_tags, "{what}: vertex_tags");
    assert_eq!(got, want, "{what}");
}

/// Asserts that the device refuses `t` (non-manifold) as not manifold,
/// naming as the lowest vertex involved the lowest one the CPU tags
/// non-manifold or repeated, and returns the kinds found.
fn check_refused(ctx: &GpuContext, kernels: &TopologyKernels, t: &Topology, what: &str) -> ManifoldDefects {
    assert!(!t.is_manifold(), "{what}: manifold");
    match kernels.build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts()) {
        Err(GpuError::NotManifold { operation: "the GPU topology build", defects, lowest_vertex }) => {
            assert!(!defects.is_empty(), "{what}: no kind named");
            let tagged =
                t.vertex_tags().iter().position(|&g| g & (vertex_tag::NON_MANIFOLD | vertex_tag::REPEATED) != 0);
            assert_eq!(Some(lowest_vertex as usize), tagged, "{what}: lowest vertex involved ({defects:?})");
            defects
        }
        Err(e) => panic!("{what}: expected the non-manifold refusal, got {e}"),
        Ok(_) => panic!("{what}: a non-manifold mesh was built on the device"),
    }
}

#[test]
fn osd_meshes_build_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let mut names: Vec<PathBuf> = std::fs::read_dir(osd_dir())
        .expect("data/meshes/osd")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "obj"))
        .collect();
    names.sort();
    let (mut built, mut refused) = (0, 0);
    for path in &names {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let data = subla_mesh::obj::read_obj(path, Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{name}: {e}"));
        let m = data.mesh.topology();
        let t = cpu(m.num_vertices(), m.face_ptr(), m.face_verts());
        if t.is_manifold() {
            check(ctx, &kernels, &t, &name);
            built += 1;
        } else {
            check_refused(ctx, &kernels, &t, &name);
            refused += 1;
        }
    }
    eprintln!("{built} manifold shapes built, {refused} non-manifold shapes refused");
    assert!(built > 50 && refused > 3, "{built} manifold and {refused} non-manifold shapes");
    Ok(())
}

#[test]
fn generated_meshes_build_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let mut runner = TestRunner::new(Config { cases: 16, failure_persistence: None, ..Config::default() });
    runner
        .run(&subla_mesh::proptest_support::any_mesh().prop_map(|d| d.mesh.topology().clone()), |t| {
            check(ctx, &kernels, &t, "generated mesh");
            Ok(())
        })
        .map_err(|e| GpuError::Internal { operation: "generated meshes", message: e.to_string() })
}

#[test]
fn relabelled_meshes_build_as_on_the_cpu() -> Result<(), GpuError> {
    // Vertex numbers in random order: edges far from (lo, hi) = face order.
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let mut runner = TestRunner::new(Config { cases: 8, failure_persistence: None, ..Config::default() });
    runner
        .run(&subla_mesh::proptest_support::any_mesh_with_permutation(), |(data, perm)| {
            let d = subla_mesh::proptest_support::relabel(&data, &perm);
            check(ctx, &kernels, d.mesh.topology(), "relabelled mesh");
            Ok(())
        })
        .map_err(|e| GpuError::Internal { operation: "relabelled meshes", message: e.to_string() })
}

/// A closed fan of `n` triangles around `center` (a disk whose rim is
/// `rim[0..n]`).
fn fan(center: u32, rim: &[u32], ptr: &mut Vec<u32>, verts: &mut Vec<u32>) {
    let n = rim.len();
    for k in 0..n {
        verts.extend([center, rim[k], rim[(k + 1) % n]]);
        ptr.push(verts.len() as u32);
    }
}

#[test]
fn mixed_polygons_isolated_vertices_and_poles_build_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    // A triangle, a quad and a pentagon sharing edges; vertex 8 isolated.
    let mut ptr = vec![0u32, 3, 7, 12];
    let mut verts = vec![0u32, 1, 2, 1, 3, 4, 2, 3, 5, 6, 7, 4];
    // A 100-gon on 9..109.
    verts.extend(9..109);
    ptr.push(verts.len() as u32);
    // Fans of 40 triangles: around vertex 109, the lowest of its ring, and
    // around vertex 190, the highest of its ring (long slices: heapsort in
    // every per-vertex sort).
    fan(109, &(110..150).collect::<Vec<_>>(), &mut ptr, &mut verts);
    fan(190, &(150..190).rev().collect::<Vec<_>>(), &mut ptr, &mut verts);
    // Isolated vertices in between and at the end.
    let t = cpu(195, &ptr, &verts);
    assert_eq!(t.vertex_tags()[8], subla_mesh::topology::vertex_tag::ISOLATED);
    check(ctx, &kernels, &t, "mixed polygons");
    // Nothing but isolated vertices, and nothing at all.
    check(ctx, &kernels, &cpu(3, &[0], &[]), "no faces");
    check(ctx, &kernels, &cpu(0, &[0], &[]), "empty mesh");
    Ok(())
}

#[test]
fn builds_are_deterministic() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let data = subla_mesh::proptest_support::torus(12, 9, 3);
    let t = data.mesh.topology();
    let a = GpuTopology::build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts())?;
    let b = kernels.build(ctx, t.num_vertices(), t.face_ptr(), t.face_verts())?;
    let first = a.download(ctx)?;
    assert_eq!(first, b.download(ctx)?, "two builds differ");
    assert_eq!(first, TopologyArrays::from_topology(t));
    Ok(())
}

#[test]
fn uploads_and_rebuilt_parts_read_back_as_the_cpu_arrays() -> Result<(), GpuError> {
    // Any topology uploads, manifold or not (the flag says which); a
    // topology put together from another's arrays (as a scheme's split
    // writes its child) is the same topology.
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let torus = subla_mesh::proptest_support::torus(12, 9, 3);
    let fin = cpu(5, &[0, 3, 6, 9], &[0, 1, 2, 1, 0, 3, 0, 1, 4]);
    for (t, manifold) in [(torus.mesh.topology(), true), (&fin, false)] {
        let want = TopologyArrays::from_topology(t);
        let gpu = GpuTopology::upload(ctx, t)?;
        assert_eq!(gpu.is_manifold(), manifold);
        assert_eq!(gpu.download(ctx)?, want);
        let [nv, nf, ne, nc, order] = gpu.counts().map(|n| n as usize);
        assert_eq!((nv, nf, ne, nc), (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners()));
        assert_eq!(order, (0..t.num_faces()).map(|f| t.face_order(f)).max().unwrap_or(0));
        for (name, b) in GpuTopology::ARRAYS.into_iter().zip(gpu.buffers()) {
            assert!(gpu.buffer(name).is_some_and(|n| std::ptr::eq(n, b)), "{name}");
        }
        let parts = GpuTopology::from_parts(gpu.counts(), gpu.is_manifold(), gpu.buffers().map(|b| b.share()));
        assert_eq!(parts.is_manifold(), manifold);
        assert_eq!(parts.download(ctx)?, want);
    }
    Ok(())
}

#[test]
fn two_dimensional_grids_build_as_on_the_cpu() -> Result<(), GpuError> {
    // At most 8 workgroups per dimension: the per-corner kernels run on a 2-D grid
    // (flat index wg.y * nwg.x + wg.x) with surplus invocations.
    let options = GpuContextOptions::default().max_workgroups_per_dimension(8);
    let Some(ctx) = subla_gpu::testing::context_with_options_or_skip(options) else { return Ok(()) };
    let kernels = TopologyKernels::new(&ctx)?;
    let data = subla_mesh::proptest_support::torus(30, 20, 5);
    check(&ctx, &kernels, data.mesh.topology(), "torus on a 2-D grid");
    Ok(())
}

#[test]
fn non_manifold_meshes_are_refused() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    use ManifoldDefect::{BowTieVertex, DegenerateEdge, EdgeOfManyFaces, InconsistentOrientation, RepeatedVertex};
    // (what, vertices, face_ptr, face_verts, every kind found): the kind
    // each case is about, plus what it makes of its vertices (the ends of
    // a fin are bow ties too; a degenerate edge repeats its vertex).
    type Case = (&'static str, usize, Vec<u32>, Vec<u32>, &'static [ManifoldDefect]);
    let cases: [Case; 6] = [
        ("edge of three faces", 5, vec![0, 3, 6, 9], vec![0, 1, 2, 1, 0, 3, 0, 1, 4], &[EdgeOfManyFaces, BowTieVertex]),
        ("inconsistent orientation", 4, vec![0, 3, 6], vec![0, 1, 2, 0, 1, 3], &[InconsistentOrientation]),
        ("repeated vertex", 5, vec![0, 6], vec![0, 1, 2, 0, 3, 4], &[RepeatedVertex]),
        ("degenerate edge", 3, vec![0, 4], vec![0, 0, 1, 2], &[DegenerateEdge, RepeatedVertex]),
        ("open bow tie", 5, vec![0, 3, 6], vec![0, 1, 2, 0, 3, 4], &[BowTieVertex]),
        (
            "two tetrahedra sharing a vertex",
            7,
            vec![0, 3, 6, 9, 12, 15, 18, 21, 24],
            vec![0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3, 0, 5, 4, 0, 4, 6, 0, 6, 5, 4, 5, 6],
            &[BowTieVertex],
        ),
    ];
    for (what, nv, ptr, verts, kinds) in cases {
        let defects = check_refused(ctx, &kernels, &cpu(nv, &ptr, &verts), what);
        assert_eq!(defects, kinds.iter().copied().collect(), "{what}");
    }
    Ok(())
}

/// Builds each face list of `strategy` on the device: equal to the CPU
/// where the CPU finds it manifold, refused where it does not. Returns the
/// numbers built and refused.
fn built_or_refused(
    ctx: &GpuContext,
    kernels: &TopologyKernels,
    cases: u32,
    strategy: impl Strategy<Value = (usize, Vec<Vec<u32>>)>,
) -> Result<(usize, usize), GpuError> {
    let counts = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&strategy, |(nv, faces)| {
            let mut ptr = vec![0u32];
            let mut verts = Vec::new();
            for f in &faces {
                verts.extend_from_slice(f);
                ptr.push(verts.len() as u32);
            }
            let t = cpu(nv, &ptr, &verts);
            let what = format!("{nv} vertices, faces {faces:?}");
            if t.is_manifold() {
                check(ctx, kernels, &t, &what);
                counts.0.set(counts.0.get() + 1);
            } else {
                check_refused(ctx, kernels, &t, &what);
                counts.1.set(counts.1.get() + 1);
            }
            Ok(())
        })
        .map_err(|e| GpuError::Internal { operation: "built or refused", message: e.to_string() })?;
    Ok((counts.0.get(), counts.1.get()))
}

#[test]
fn random_face_soups_are_built_or_refused_as_the_cpu_decides() -> Result<(), GpuError> {
    // Few vertices, random faces of distinct vertices: bow ties, fins,
    // flips, and now and then a manifold patch.
    use proptest::collection::vec;
    use proptest::sample::subsequence;
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let soup = (4usize..9).prop_flat_map(|nv| {
        let face = subsequence((0..nv as u32).collect::<Vec<_>>(), 3..5).prop_shuffle();
        (proptest::strategy::Just(nv), vec(face, 1..5))
    });
    let (built, refused) = built_or_refused(ctx, &kernels, 96, soup)?;
    eprintln!("{built} manifold soups built, {refused} non-manifold soups refused");
    assert!(built > 0 && refused > 0, "{built} manifold and {refused} non-manifold soups");
    Ok(())
}

#[test]
fn edited_meshes_are_built_or_refused_as_the_cpu_decides() -> Result<(), GpuError> {
    // Generated manifold meshes with a few faces flipped, removed (holes,
    // bow ties where two holes touch) or doubled (fins, flipped pairs).
    use proptest::collection::vec;
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let edited = subla_mesh::proptest_support::any_mesh()
        .prop_flat_map(|d| {
            let t = d.mesh.topology();
            let faces: Vec<Vec<u32>> = (0..t.num_faces()).map(|f| t.face(f).to_vec()).collect();
            let n = faces.len();
            (proptest::strategy::Just((t.num_vertices(), faces)), vec((0..n, 0u8..3), 1..4))
        })
        .prop_map(|((nv, mut faces), edits)| {
            let mut removed = vec![false; faces.len()];
            for (f, op) in edits {
                match op {
                    0 => faces[f].reverse(),
                    1 => removed[f] = true,
                    _ => faces.push(faces[f].clone()),
                }
            }
            let kept = faces.into_iter().enumerate().filter(|&(f, _)| !removed.get(f).copied().unwrap_or(false));
            (nv, kept.map(|(_, face)| face).collect())
        });
    let (built, refused) = built_or_refused(ctx, &kernels, 48, edited)?;
    eprintln!("{built} edited meshes built, {refused} refused");
    assert!(built > 0 && refused > 0, "{built} manifold and {refused} non-manifold edited meshes");
    Ok(())
}

#[test]
fn malformed_faces_are_refused_naming_the_face() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    match GpuTopology::build(ctx, 4, &[0, 3, 6], &[0, 1, 2, 2, 1, 4]) {
        Err(GpuError::InvalidFaces {
            operation: "the GPU topology build",
            defect: FaceDefect::VertexOutOfRange { face: 1, vertex: 4, num_vertices: 4 },
        }) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    match GpuTopology::build(ctx, 4, &[0, 3, 5], &[0, 1, 2, 2, 1]) {
        Err(GpuError::InvalidFaces { defect: FaceDefect::TooFewVertices { face: 1, order: 2 }, .. }) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    Ok(())
}

/// A manifold fan around a vertex of valence 2415 or more was refused as
/// not manifold on the software driver (2414 passed), although the CPU
/// builds it: a high-valence vertex builds as on the CPU, whether it is the
/// lowest or the highest vertex of its ring.
#[test]
fn a_fan_of_valence_3000_builds_as_on_the_cpu() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    for n in [2414u32, 2415, 3000] {
        let (mut ptr, mut verts) = (vec![0u32], Vec::new());
        fan(0, &(1..=n).collect::<Vec<_>>(), &mut ptr, &mut verts);
        check(ctx, &kernels, &cpu(n as usize + 1, &ptr, &verts), &format!("fan of {n} around its lowest vertex"));
        let (mut ptr, mut verts) = (vec![0u32], Vec::new());
        fan(n, &(0..n).collect::<Vec<_>>(), &mut ptr, &mut verts);
        check(ctx, &kernels, &cpu(n as usize + 1, &ptr, &verts), &format!("fan of {n} around its highest vertex"));
    }
    Ok(())
}

/// Past what the driver's loops allow (software drivers end an
/// invocation's loops after 65535 iterations in all), a vertex's valence is
/// refused by name, before anything is uploaded, instead of being reported
/// as not manifold; a hardware device builds it.
#[test]
fn a_valence_over_the_drivers_loop_limit_is_refused_by_name() -> Result<(), GpuError> {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
    let kernels = TopologyKernels::new(ctx)?;
    let n = subla_gpu::topology::build::SOFTWARE_MAX_CORNERS + 1;
    let (mut ptr, mut verts) = (vec![0u32], Vec::new());
    fan(0, &(1..=n).collect::<Vec<_>>(), &mut ptr, &mut verts);
    if ctx.adapter_info().device_type == wgpu::DeviceType::Cpu {
        match kernels.build(ctx, n as usize + 1, &ptr, &verts) {
            Err(GpuError::ValenceOverDriverLimit { vertex: 0, corners, max, .. }) => {
                assert_eq!((corners, max), (n, n - 1));
            }
            Err(e) => panic!("expected the valence limit, got {e}"),
            Ok(_) => panic!("a software device built a vertex over its loop limit"),
        }
    } else {
        check(ctx, &kernels, &cpu(n as usize + 1, &ptr, &verts), "fan over the software limit");
    }
    Ok(())
}
