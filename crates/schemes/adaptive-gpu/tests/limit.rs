//! The GPU limit evaluation against the CPU `f64` evaluation of the same
//! patch table (`PatchTable::evaluate`) on OpenSubdiv's shapes, against
//! affine invariance (a closed form independent of either), and for
//! repeatability.
//!
//! Tests skip where no adapter exists and fail when `SUBLA_REQUIRE_GPU=1`
//! (see `subla_gpu::testing`); sizes stay small for software drivers.

mod common;

use common::{bits, compare, shape};
use ndarray::Array2;
use subla_adaptive::{AdaptiveError, EndCap, PatchTable, Sample, SparseRefinement, grid};
use subla_adaptive_gpu::{AdaptiveGpuError, GpuLimit, LimitBuffers, PointPath, SampleOrder};
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_gpu::{GpuBuffer, GpuContext};
use subla_mesh::MeshData;

fn table(d: &MeshData, iso: u32, end_cap: EndCap) -> PatchTable {
    PatchTable::new(SparseRefinement::build(&d.mesh, iso, None).expect("refine"), end_cap).expect("patch table")
}

/// The table of a shape by its scheme (OpenSubdiv's `loop_` shapes are
/// Loop's).
fn table_of(name: &str, d: &MeshData, iso: u32, end_cap: EndCap) -> PatchTable {
    if name.starts_with("loop_") {
        let r = SparseRefinement::build_loop(&d.mesh, iso, None).expect("refine");
        PatchTable::new(r, end_cap).expect("patch table")
    } else {
        table(d, iso, end_cap)
    }
}

/// A small deterministic generator (xorshift), values in `[0, 1)`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A 4 × 4 grid of every ptex face (corners and edges included), then
/// random samples in random order.
fn samples(num_ptex: u32, random: usize, seed: u64) -> Vec<Sample> {
    let mut out = grid(num_ptex, 4);
    let mut rng = Rng(seed);
    for _ in 0..random {
        let ptex = ((rng.next() * f64::from(num_ptex)) as u32).min(num_ptex - 1);
        out.push(Sample { ptex, u: rng.next(), v: rng.next() });
    }
    out
}

/// Control data of `channels` columns: the positions, then random values
/// of the size of the shape.
fn control(d: &MeshData, channels: usize, diag: f64, seed: u64) -> Array2<f64> {
    let pos = d.positions();
    let mut rng = Rng(seed);
    Array2::from_shape_fn((pos.nrows(), channels), |(i, c)| if c < 3 { pos[[i, c]] } else { diag * rng.next() })
}

fn diagonal(d: &MeshData) -> f64 {
    let pos = d.positions();
    (0..3)
        .map(|c| {
            let col = pos.column(c);
            let (lo, hi) = col.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            (hi - lo).powi(2)
        })
        .sum::<f64>()
        .sqrt()
}

fn flat_f32(x: &Array2<f64>) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

/// Evaluates `samples` of one shape on the GPU with 3 and 5 channels and
/// compares with the CPU; returns the table.
fn check_shape(ctx: &GpuContext, name: &str, iso: u32, end_cap: EndCap, random: usize) -> (PatchTable, usize) {
    let d = shape(name);
    let t = table_of(name, &d, iso, end_cap);
    let diag = diagonal(&d);
    let mut s = samples(t.refinement().num_ptex_faces(), random, 7 + u64::from(iso));
    if name.starts_with("loop_") {
        // A Loop ptex face is the triangle u + v <= 1; beyond it both sides
        // extrapolate the polynomial, and f32 loses digits with the
        // distance: fold the samples back in.
        for x in &mut s {
            if x.u + x.v > 1.0 {
                (x.u, x.v) = (1.0 - x.u, 1.0 - x.v);
            }
        }
    }
    let mut limit = GpuLimit::new(ctx, &t).unwrap_or_else(|e| panic!("{name}: {e}"));
    let located = limit.locate(ctx, &t, &s).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(located.len(), s.len());
    for channels in [3, 5] {
        let x = control(&d, channels, diag, 3);
        let xf = flat_f32(&x);
        let gpu = limit.evaluate_host(ctx, &xf, channels, &located).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ep, ed) = compare(name, &gpu, &t, &x, &s, diag);
        eprintln!(
            "{name} iso {iso} {end_cap:?} d={channels}: {} samples {:?}, positions {ep:.1e}, derivatives {ed:.1e} of the diagonal",
            s.len(),
            located.counts()
        );
        assert!(ep <= 1e-5, "{name} iso {iso} {end_cap:?} d={channels}: positions differ by {ep:e} of the diagonal");
        assert!(ed <= 1e-5, "{name} iso {iso} {end_cap:?} d={channels}: derivatives differ by {ed:e} of the diagonal");
        let again = limit.evaluate_host(ctx, &xf, channels, &located).expect("second run");
        assert!(bits(&gpu) == bits(&again), "{name} d={channels}: two runs differ");
        // The kernels' order of the samples changes nothing in the outputs.
        let by_kind = limit.locate_ordered(ctx, &t, &s, SampleOrder::ByKind).expect("locate by kind");
        let other = limit.evaluate_host(ctx, &xf, channels, &by_kind).expect("by kind");
        assert!(bits(&gpu) == bits(&other), "{name} d={channels}: the sample order changed the outputs");
        assert_eq!(by_kind.missing(), located.missing());
    }
    let holes = located.missing().len();
    (t, holes)
}

#[test]
fn gpu_limit_equals_cpu_limit_on_a_cube() {
    let Some(ctx) = context_or_skip() else { return };
    check_shape(ctx, "catmark_cube", 3, EndCap::GregoryBasis, 200);
}

#[test]
fn gpu_limit_equals_cpu_limit_on_non_quads() {
    let Some(ctx) = context_or_skip() else { return };
    let (t, _) = check_shape(ctx, "catmark_pyramid", 3, EndCap::GregoryBasis, 200);
    assert!(t.patches().iter().any(|p| p.param.non_quad_root()), "the pyramid has sub-faces of non-quads");
}

#[test]
fn gpu_limit_equals_cpu_limit_on_boundary_patches() {
    let Some(ctx) = context_or_skip() else { return };
    let (t, _) = check_shape(ctx, "catmark_edgecorner", 2, EndCap::GregoryBasis, 200);
    assert!(t.counts().regular_boundary > 0, "the shape has boundary patches");
}

#[test]
fn holes_are_nan_where_the_cpu_has_no_patch() {
    let Some(ctx) = context_or_skip() else { return };
    let (_, holes) = check_shape(ctx, "catmark_hole_test1", 2, EndCap::GregoryBasis, 200);
    assert!(holes > 0, "the hole shape's samples include holes");
}

#[test]
fn gpu_limit_equals_cpu_limit_with_both_end_caps() {
    let Some(ctx) = context_or_skip() else { return };
    for end_cap in [EndCap::GregoryBasis, EndCap::BSplineBasis] {
        let d = shape("catmark_gregory_test2");
        let t = table(&d, 2, end_cap);
        let gregory = t.patches().iter().filter(|p| p.ty == subla_adaptive::basis::PatchType::GregoryBasis).count();
        assert_eq!(gregory > 0, end_cap == EndCap::GregoryBasis, "{end_cap:?}: {gregory} Gregory patches");
        check_shape(ctx, "catmark_gregory_test2", 2, end_cap, 300);
    }
}

/// The limit map is affine-invariant (weights sum to 1, derivative weights
/// to 0): a channel that is an affine function of others evaluates to the
/// same function of their limits, on every patch type. Holds whatever the
/// basis, so it checks the GPU without the CPU evaluation.
#[test]
fn affine_channels_stay_affine() {
    let Some(ctx) = context_or_skip() else { return };
    for (name, end_cap) in
        [("catmark_gregory_test2", EndCap::GregoryBasis), ("catmark_edgecorner", EndCap::GregoryBasis)]
    {
        let d = shape(name);
        let t = table(&d, 2, end_cap);
        let s = samples(t.refinement().num_ptex_faces(), 100, 11);
        let mut limit = GpuLimit::new(ctx, &t).expect("upload");
        let located = limit.locate(ctx, &t, &s).expect("locate");
        let pos = d.positions();
        // Channels: x, y, z, 2x - y + 0.5, and 1.
        let x: Vec<f32> =
            pos.outer_iter().flat_map(|p| [p[0], p[1], p[2], 2.0 * p[0] - p[1] + 0.5, 1.0]).map(|v| v as f32).collect();
        let g = limit.evaluate_host(ctx, &x, 5, &located).expect("evaluate");
        let scale = diagonal(&d).max(1.0);
        for i in (0..s.len()).filter(|i| located.missing().binary_search(i).is_err()) {
            let r = |v: &[f32], c: usize| f64::from(v[i * 5 + c]);
            let e = (r(&g.position, 3) - (2.0 * r(&g.position, 0) - r(&g.position, 1) + 0.5)).abs();
            assert!(e <= 1e-5 * scale, "{name} sample {i}: affine channel off by {e:e}");
            for dv in [&g.du, &g.dv] {
                let e = (r(dv, 3) - (2.0 * r(dv, 0) - r(dv, 1))).abs();
                assert!(e <= 1e-4 * scale, "{name} sample {i}: affine derivative off by {e:e}");
            }
            assert!((r(&g.position, 4) - 1.0).abs() <= 1e-6, "{name} sample {i}: weights sum to {}", r(&g.position, 4));
            assert!(r(&g.du, 4).abs() <= 1e-4 && r(&g.dv, 4).abs() <= 1e-4, "{name} sample {i}: derivative weights");
        }
    }
}

/// A sample on a ptex face that does not exist is a typed error.
#[test]
fn samples_off_the_mesh_are_refused() {
    let Some(ctx) = context_or_skip() else { return };
    let d = shape("catmark_cube");
    let t = table(&d, 1, EndCap::GregoryBasis);
    let limit = GpuLimit::new(ctx, &t).expect("upload");
    let n = t.refinement().num_ptex_faces();
    let e = limit.locate(ctx, &t, &[Sample { ptex: n, u: 0.5, v: 0.5 }]).unwrap_err();
    assert!(
        matches!(e, AdaptiveGpuError::Adaptive(AdaptiveError::NoSuchPtexFace { ptex, num_ptex }) if ptex == n && num_ptex == n),
        "{e}"
    );
}

/// The device path (control rewritten in place, outputs reused) gives the
/// host path's bits, and the profile times every pass and counts bytes,
/// whichever way the points are computed.
#[test]
fn device_buffers_and_profile() {
    let Some(ctx) = context_or_skip() else { return };
    let d = shape("catmark_gregory_test2");
    let t = table(&d, 2, EndCap::GregoryBasis);
    let s = samples(t.refinement().num_ptex_faces(), 50, 5);
    for (path, kernel) in
        [(PointPath::Composed, "spmv_balanced"), (PointPath::PerLevel, "level_rows"), (PointPath::PerTile, "tile_rows")]
    {
        let mut limit = GpuLimit::with_path(ctx, &t, path).expect("upload");
        assert_eq!(limit.path(), path);
        let located = limit.locate(ctx, &t, &s).expect("locate");
        let x = flat_f32(&control(&d, 3, 1.0, 1));
        let want = limit.evaluate_host(ctx, &x, 3, &located).expect("host path");
        let mut control = GpuBuffer::upload(ctx, &vec![0.0f32; x.len()]).expect("control");
        control.write(ctx, &x).expect("write");
        let mut out = LimitBuffers::new(ctx, &located, 3).expect("outputs");
        let profile = limit.profile(ctx, &control, 3, &located, &mut out).expect("profile");
        assert!(bits(&out.download(ctx).expect("download")) == bits(&want), "{path:?}: device path differs");
        let names: Vec<&str> = profile.kernels.iter().map(|k| k.kernel).collect();
        assert!(
            names.contains(&kernel) && names.contains(&"limit_bspline") && names.contains(&"limit_gregory"),
            "{path:?}: {names:?}"
        );
        assert!(profile.kernels.iter().all(|k| k.bytes > 0));
        // Outputs alone: 3 arrays of 3 channels per sample.
        assert!(profile.bytes() >= 36 * s.len() as u64);
        if ctx.has_timestamps() {
            assert!(profile.gpu_seconds().is_some(), "timestamps on, every pass timed: {profile:?}");
            assert!(profile.points_seconds().is_some_and(|s| s > 0.0), "{path:?}: the points' passes are timed");
        }
        assert!(profile.gathered_bytes >= 16 * 16 * (s.len() - located.missing().len()) as u64);
    }
}

/// A table whose every face is a hole has no patch: every sample is NaN,
/// and nothing fails on the device.
#[test]
fn a_table_of_holes_only() {
    let Some(ctx) = context_or_skip() else { return };
    let mesh = subla_mesh::MeshBuilder::from_faces(4, &[[0u32, 1, 2, 3]]).hole(0).build(Par::Seq).expect("a mesh");
    let r = SparseRefinement::build(&mesh, 2, None).expect("refine");
    let t = PatchTable::new(r, EndCap::GregoryBasis).expect("patch table");
    assert!(t.patches().is_empty());
    let mut limit = GpuLimit::new(ctx, &t).expect("an evaluator with no patch");
    let s = grid(t.refinement().num_ptex_faces(), 2);
    let located = limit.locate(ctx, &t, &s).expect("locate");
    let x = vec![0.0f32; 12];
    let v = limit.evaluate_host(ctx, &x, 3, &located).expect("evaluate");
    assert!(v.position.iter().all(|p| p.is_nan()));
}

/// Loop: box-spline patches (with boundary reflections) and triangular
/// Gregory end caps, or box-spline end caps, against the CPU.
#[test]
fn gpu_limit_equals_cpu_limit_on_loop_patches() {
    let Some(ctx) = context_or_skip() else { return };
    use subla_adaptive::basis::PatchType;
    let kinds = |t: &PatchTable| {
        let n = |ty| t.patches().iter().filter(|p| p.ty == ty).count();
        (n(PatchType::Loop), n(PatchType::GregoryTriangle))
    };
    let (t, _) = check_shape(ctx, "loop_cube", 3, EndCap::GregoryBasis, 200);
    let (regular, gregory) = kinds(&t);
    assert!(regular > 0 && gregory > 0, "loop_cube: {regular} box splines, {gregory} Gregory triangles");
    let (t, _) = check_shape(ctx, "loop_cube", 2, EndCap::BSplineBasis, 200);
    assert_eq!(kinds(&t).1, 0, "box-spline end caps only");
    let (t, _) = check_shape(ctx, "loop_triangle_edgecorner", 2, EndCap::GregoryBasis, 200);
    assert!(t.patches().iter().any(|p| p.ty == PatchType::Loop && p.param.boundary() != 0), "boundary box splines");
    check_shape(ctx, "loop_xord_boundary", 2, EndCap::GregoryBasis, 200);
    check_shape(ctx, "loop_cube_creases1", 3, EndCap::GregoryBasis, 200);
}

/// Non-manifold meshes (their patches take the manifold span of each
/// non-manifold corner), faces that use a vertex twice included, evaluate
/// on the GPU as on the CPU.
#[test]
fn gpu_limit_equals_cpu_limit_on_non_manifold_meshes() {
    let Some(ctx) = context_or_skip() else { return };
    check_shape(ctx, "catmark_fan", 3, EndCap::GregoryBasis, 100);
    check_shape(ctx, "catmark_nonman_verts", 2, EndCap::BSplineBasis, 100);
    check_shape(ctx, "loop_nonman_verts", 2, EndCap::GregoryBasis, 100);
    // Faces that use a vertex twice (degenerate edges).
    check_shape(ctx, "catmark_nonman_quadpole8", 3, EndCap::GregoryBasis, 100);
    check_shape(ctx, "loop_nonman_edges", 2, EndCap::BSplineBasis, 100);
}
