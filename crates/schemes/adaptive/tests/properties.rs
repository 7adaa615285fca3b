//! Properties of the limit surface that hold whatever OpenSubdiv does:
//! regular regions are exactly the bicubic B-spline of their 4 × 4 control
//! points; at a ptex face's (0, 0) corner the limit is the uniform scheme's
//! limit position of that control vertex; patches meet without gaps; the
//! limit matrices reproduce the evaluation and their rows are affine; f32
//! and f64 agree; any thread count gives the same bits.

use std::path::{Path, PathBuf};

use ndarray::{Array2, s};
use proptest::prelude::*;
use subla_adaptive::{EndCap, PatchTable, Sample, SparseRefinement, grid};
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_mesh::obj::read_obj;
use subla_mesh::{Mesh, MeshData, Validation};
use subla_scheme::{Plan, Refiner};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

fn shape(name: &str) -> MeshData {
    let mut d = read_obj(data().join(format!("meshes/osd/{name}.obj")), Validation::OpenSubdiv).expect("mesh");
    if d.left_handed {
        d.mesh = d.mesh.reversed_winding().expect("reversed");
    }
    d
}

fn table(mesh: &Mesh, iso: u32, end_cap: EndCap) -> PatchTable {
    PatchTable::new(SparseRefinement::build(mesh, iso, None).expect("refine"), end_cap).expect("patch table")
}

/// Shapes without semi-sharp features (OpenSubdiv's limit treats those as
/// sharp where they remain, so the corner property holds only once they
/// have decayed) and without interior infinitely sharp edges (OpenSubdiv's
/// patches approximate those as smooth at the isolation level, as ours do)
/// or interior vertices of valence 2 (the end caps' own limit points there
/// are not the limit masks').
const SMOOTH_OR_SHARP: &[&str] = &[
    "catmark_cube",
    "catmark_pyramid",
    "catmark_edgeonly",
    "catmark_edgecorner",
    "catmark_xord_boundary",
    "catmark_gregory_test0",
    "catmark_gregory_test1",
    "catmark_torus",
    "catmark_lefthanded",
    "catmark_quadstrips",
    "catmark_smoothtris0",
];

#[test]
fn corner_samples_are_the_uniform_limit_positions() {
    for name in SMOOTH_OR_SHARP {
        let d = shape(name);
        // One level first: the limit masks assume quads around the vertex.
        // The refined level keeps the control vertices first, in order.
        let plan = CatmarkSlak.build(&d.mesh, 1, Par::Seq).expect("plan");
        let limit = plan.limit(Par::Seq).expect("limit operator");
        let x = d.positions().to_owned();
        let x1 = subla_scheme::eval(&plan, x.view(), Par::Seq).expect("level 1");
        let t = table(&d.mesh, 3, EndCap::GregoryBasis);
        // Ptex faces' (0, 0) corners: a quad's first vertex, a sub-face's corner.
        let topo = d.mesh.topology();
        let mut samples = Vec::new();
        let mut verts = Vec::new();
        let mut ptex = 0u32;
        for f in 0..topo.num_faces() {
            let fv = topo.face(f);
            let n = if fv.len() == 4 { 1 } else { fv.len() };
            for (j, &v) in fv.iter().enumerate().take(n) {
                // OpenSubdiv's patches treat a smooth boundary corner (one face,
                // boundary interpolation edge-only) as sharp, unlike its limit masks.
                let smooth_corner = topo.face_count(v as usize) == 1
                    && d.mesh.options().boundary == subla_mesh::BoundaryInterpolation::EdgeOnly;
                if !d.mesh.holes()[f] && !smooth_corner {
                    samples.push(Sample { ptex: ptex + j as u32, u: 0.0, v: 0.0 });
                    verts.push(v as usize);
                }
            }
            ptex += n as u32;
        }
        let got = t.evaluate(x.view(), &samples, Par::Seq).expect("evaluate");
        let scale = x.iter().fold(0f64, |m, v| m.max(v.abs())).max(1.0);
        for (i, &v) in verts.iter().enumerate() {
            let (cols, ws) = limit.row(v);
            for c in 0..3 {
                let want: f64 = cols.iter().zip(ws).map(|(&j, &w)| w * x1[[j as usize, c]]).sum();
                let err = (got.position[[i, c]] - want).abs() / scale;
                assert!(
                    err < 1e-12,
                    "{name}: vertex {v} at ptex {}: {} vs {want}",
                    samples[i].ptex,
                    got.position[[i, c]]
                );
            }
        }
    }
}

/// The uniform bicubic B-spline of a 4 × 4 grid, from its textbook basis.
fn bspline(p: &[[f64; 3]; 16], s: f64, t: f64) -> [f64; 3] {
    let b = |x: f64| {
        let y = 1.0 - x;
        [
            y * y * y / 6.0,
            (3.0 * x * x * x - 6.0 * x * x + 4.0) / 6.0,
            (-3.0 * x * x * x + 3.0 * x * x + 3.0 * x + 1.0) / 6.0,
            x * x * x / 6.0,
        ]
    };
    let (bs, bt) = (b(s), b(t));
    let mut out = [0.0; 3];
    for r in 0..4 {
        for c in 0..4 {
            for k in 0..3 {
                out[k] += bt[r] * bs[c] * p[4 * r + c][k];
            }
        }
    }
    out
}

/// A closed torus of `n × m` quads (every vertex regular) with control
/// points from `z`.
fn torus(n: usize, m: usize, z: &[f64]) -> (Mesh, Array2<f64>) {
    let id = |i: usize, j: usize| ((i % n) * m + (j % m)) as u32;
    let faces: Vec<[u32; 4]> =
        (0..n).flat_map(|i| (0..m).map(move |j| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)])).collect();
    let mesh = Mesh::from_faces(n * m, &faces).expect("torus");
    let mut x = Array2::zeros((n * m, 3));
    for i in 0..n {
        for j in 0..m {
            let (a, b) = (i as f64 / n as f64 * std::f64::consts::TAU, j as f64 / m as f64 * std::f64::consts::TAU);
            let r = 2.0 + a.cos() * (1.0 + z[(i * m + j) % z.len()]);
            x[[i * m + j, 0]] = r * b.cos();
            x[[i * m + j, 1]] = r * b.sin();
            x[[i * m + j, 2]] = a.sin() + z[(i * m + j + 1) % z.len()];
        }
    }
    (mesh, x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn regular_regions_are_the_bicubic_bspline(
        z in prop::collection::vec(-0.3f64..0.3, 1..40),
        u in 0.0f64..=1.0,
        v in 0.0f64..=1.0,
        f in 0usize..30,
    ) {
        let (n, m) = (5, 6);
        let (mesh, x) = torus(n, m, &z);
        let t = table(&mesh, 2, EndCap::GregoryBasis);
        prop_assert_eq!(t.patches().len(), n * m, "a regular mesh is one patch per face");
        let (i, j) = (f / m, f % m);
        // Face (i, j) = [(i,j), (i+1,j), (i+1,j+1), (i,j+1)]: u along i, v along j.
        let mut p = [[0.0; 3]; 16];
        for r in 0..4 {
            for c in 0..4 {
                let vtx = ((i + n + c - 1) % n) * m + (j + m + r - 1) % m;
                p[4 * r + c] = [x[[vtx, 0]], x[[vtx, 1]], x[[vtx, 2]]];
            }
        }
        let want = bspline(&p, u, v);
        let got = t.evaluate(x.view(), &[Sample { ptex: f as u32, u, v }], Par::Seq).expect("eval");
        for (k, &w) in want.iter().enumerate() {
            prop_assert!((got.position[[0, k]] - w).abs() < 1e-12, "{} vs {}", got.position[[0, k]], w);
        }
    }
}

/// Points on an edge shared by two quads, from both sides.
#[test]
fn patches_meet_without_gaps() {
    for name in
        ["catmark_cube", "catmark_gregory_test1", "catmark_val2_interior", "catmark_helmet", "catmark_xord_boundary"]
    {
        let d = shape(name);
        let topo = d.mesh.topology();
        if !topo.is_quad_only() {
            continue;
        }
        let t = table(&d.mesh, 3, EndCap::GregoryBasis);
        let at = |i: usize, s: f64| match i {
            0 => (s, 0.0),
            1 => (1.0, s),
            2 => (1.0 - s, 1.0),
            _ => (0.0, 1.0 - s),
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        for e in 0..topo.num_edges() {
            let corners = topo.edge_corners(e);
            if corners.len() != 2 {
                continue;
            }
            let side = |c: u32| {
                let f = topo.corner_faces()[c as usize] as usize;
                (f, c as usize - topo.face_ptr()[f] as usize)
            };
            let ((f0, i0), (f1, i1)) = (side(corners[0]), side(corners[1]));
            if d.mesh.holes()[f0] || d.mesh.holes()[f1] {
                continue;
            }
            for k in 0..=8 {
                let s = f64::from(k) / 8.0;
                let (u0, v0) = at(i0, s);
                let (u1, v1) = at(i1, 1.0 - s);
                a.push(Sample { ptex: f0 as u32, u: u0, v: v0 });
                b.push(Sample { ptex: f1 as u32, u: u1, v: v1 });
            }
        }
        let x = d.positions().to_owned();
        let (pa, pb) = (t.evaluate(x.view(), &a, Par::Seq).expect("a"), t.evaluate(x.view(), &b, Par::Seq).expect("b"));
        let scale = x.iter().fold(0f64, |m, v| m.max(v.abs())).max(1.0);
        for i in 0..a.len() {
            for c in 0..3 {
                let d = (pa.position[[i, c]] - pb.position[[i, c]]).abs() / scale;
                assert!(d < 1e-12, "{name}: {:?} and {:?} differ by {d:e}", a[i], b[i]);
            }
        }
    }
}

#[test]
fn limit_matrices_reproduce_the_evaluation_and_are_affine() {
    for (name, end_cap) in
        [("catmark_gregory_test2", EndCap::GregoryBasis), ("catmark_pyramid_creases1", EndCap::BSplineBasis)]
    {
        let d = shape(name);
        let t = table(&d.mesh, 3, end_cap);
        let samples = grid(t.refinement().num_ptex_faces(), 4);
        let x = d.positions().to_owned();
        let m = t.limit_matrices(&samples, Par::Rayon).expect("matrices");
        let e = t.evaluate(x.view(), &samples, Par::Seq).expect("eval");
        for i in 0..samples.len() {
            let sums: Vec<f64> = [&m.p, &m.du, &m.dv].iter().map(|mat| mat.row(i).1.iter().sum()).collect();
            if m.missing.contains(&i) {
                continue;
            }
            assert!(
                (sums[0] - 1.0).abs() < 1e-12 && sums[1].abs() < 1e-9 && sums[2].abs() < 1e-9,
                "{name}: row {i} sums {sums:?}"
            );
            for (mat, arr) in [(&m.p, &e.position), (&m.du, &e.du), (&m.dv, &e.dv)] {
                for c in 0..3 {
                    let y: f64 = mat.row(i).0.iter().zip(mat.row(i).1).map(|(&j, &w)| w * x[[j as usize, c]]).sum();
                    assert!((y - arr[[i, c]]).abs() < 1e-10, "{name}: sample {i}: {y} vs {}", arr[[i, c]]);
                }
            }
        }
    }
}

#[test]
fn f32_agrees_with_f64_and_threads_do_not_change_bits() {
    let d = shape("catmark_helmet");
    let t = table(&d.mesh, 3, EndCap::GregoryBasis);
    let samples = grid(t.refinement().num_ptex_faces(), 5);
    let x = d.positions().to_owned();
    let x32 = x.mapv(|v| v as f32);
    let a = t.evaluate(x.view(), &samples, Par::Seq).expect("seq");
    let b = t.evaluate(x.view(), &samples, Par::Rayon).expect("rayon");
    assert_eq!(a, b, "thread count changed the result");
    let c = t.evaluate(x32.view(), &samples, Par::Rayon).expect("f32");
    let scale = x.iter().fold(0f64, |m, v| m.max(v.abs()));
    for (p, q) in a.position.iter().zip(c.position.iter()) {
        assert!((p - f64::from(*q)).abs() / scale < 1e-5);
    }
    let m = t.evaluate(x.slice(s![.., ..1]), &samples, Par::Seq).expect("one channel");
    assert_eq!(m.position.column(0), a.position.column(0));
}

/// On a closed mesh every edge of the tessellation is shared by two quads,
/// with quads and sub-faces of other faces meeting along the same points.
#[test]
fn tessellations_are_watertight() {
    for (name, rate) in
        [("catmark_cube", 3), ("catmark_pyramid", 4), ("catmark_smoothtris0", 2), ("catmark_gregory_test1", 5)]
    {
        let d = shape(name);
        let closed = d.mesh.topology().is_closed();
        let t = table(&d.mesh, 3, EndCap::GregoryBasis);
        let tess = t.tessellate(d.positions(), rate, Par::Rayon).expect("tessellate");
        assert_eq!(tess.face_size, 4);
        let quads: Vec<&[u32]> = tess.faces.chunks(4).collect();
        let mesh = Mesh::from_faces(tess.positions.nrows(), &quads).expect("a valid mesh");
        let topo = mesh.topology();
        let open = (0..topo.num_edges()).filter(|&e| topo.edge_corners(e).len() != 2).count();
        if closed {
            assert_eq!(open, 0, "{name}: {open} edges not shared by two quads");
            assert!(topo.is_manifold(), "{name}: the tessellation is not manifold");
        }
        // Rate r per edge: r² quads per quad, (r/2)² per sub-face.
        let per: usize = (0..d.mesh.num_faces())
            .map(|f| match d.mesh.topology().face_order(f) {
                4 => (rate * rate) as usize,
                n => n * (rate as usize / 2).pow(2),
            })
            .sum();
        assert_eq!(quads.len(), per, "{name}");
        for n in &tess.normals {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 1e-9, "{name}: a normal of length {len}");
        }
    }
    let d = shape("catmark_pyramid");
    let t = table(&d.mesh, 2, EndCap::GregoryBasis);
    assert!(matches!(
        t.tessellate(d.positions(), 3, Par::Seq),
        Err(subla_adaptive::AdaptiveError::OddRate { rate: 3 })
    ));
}

/// Degenerate closed meshes (two faces glued along all their edges) are
/// refined without a panic: a patch table, or a typed refusal naming the
/// face whose end cap cannot be built.
#[test]
fn pillows_never_panic() {
    use subla_adaptive::{AdaptiveError, Scheme};
    for (scheme, faces) in [
        (Scheme::Loop, vec![vec![0u32, 1, 2], vec![2, 1, 0]]),
        (Scheme::Catmark, vec![vec![0u32, 1, 2, 3], vec![3, 2, 1, 0]]),
        (Scheme::Catmark, vec![vec![0u32, 1, 2], vec![2, 1, 0]]),
    ] {
        let nv = 4;
        let mesh = Mesh::from_faces(nv, &faces).expect("a manifold pillow");
        let x = Array2::from_shape_fn((nv, 3), |(i, c)| (i * 3 + c) as f64);
        for iso in 1..=3 {
            let r = SparseRefinement::build_scheme(scheme, &mesh, iso, None).expect("refine");
            for end_cap in [EndCap::GregoryBasis, EndCap::BSplineBasis] {
                match PatchTable::new(r.clone(), end_cap) {
                    Ok(t) => {
                        let samples = grid(t.refinement().num_ptex_faces(), 3);
                        t.evaluate(x.view(), &samples, Par::Seq).expect("evaluate");
                    }
                    Err(AdaptiveError::UnsupportedEndCap { level, .. }) => assert_eq!(level, iso),
                    Err(e) => panic!("{scheme:?} pillow: {e}"),
                }
            }
        }
    }
}

/// A level over the budget is refused before it is built, naming the
/// level; a budget that fits changes nothing.
#[test]
fn refinement_within_a_budget() {
    use subla_adaptive::{AdaptiveError, Scheme};
    let d = shape("catmark_cube_creases0");
    let full = SparseRefinement::build(&d.mesh, 4, None).expect("refine");
    let roomy = SparseRefinement::build_within(Scheme::Catmark, &d.mesh, 4, None, 1 << 30).expect("within 1 GiB");
    assert_eq!(full.vertices_per_level(), roomy.vertices_per_level());
    match SparseRefinement::build_within(Scheme::Catmark, &d.mesh, 4, None, 20_000) {
        Err(AdaptiveError::OverBudget { level, bytes, budget }) => {
            assert!(level >= 1 && bytes > budget && budget == 20_000);
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.vertices_per_level())),
    }
}

/// A closed torus of `n × n` quads, each split into two triangles along a
/// diagonal that alternates from quad to quad (valences 4 and 8, so Loop
/// has extraordinary vertices everywhere).
fn triangle_torus(n: usize) -> (Mesh, Array2<f64>) {
    let id = |i: usize, j: usize| ((i % n) * n + j % n) as u32;
    let mut verts = Vec::with_capacity(6 * n * n);
    for i in 0..n {
        for j in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if (i + j) % 2 == 0 {
                verts.extend([a, b, c, a, c, d]);
            } else {
                verts.extend([a, b, d, b, c, d]);
            }
        }
    }
    let ptr = (0..=verts.len() as u32 / 3).map(|f| 3 * f).collect();
    let mesh = subla_mesh::MeshBuilder::new(n * n, ptr, verts).build(Par::Seq).expect("a closed torus");
    let tau = std::f64::consts::TAU;
    let x = Array2::from_shape_fn((n * n, 3), |(v, k)| {
        let (u, w) = (tau * (v / n) as f64 / n as f64, tau * (v % n) as f64 / n as f64);
        let r = 1.0 + 0.35 * w.cos();
        [r * u.cos(), r * u.sin(), 0.35 * w.sin()][k]
    });
    (mesh, x)
}

/// The build (levels, stencils, end caps) and the points it gives are the
/// same bits on one thread and on several, on a mesh large enough that
/// the build's parallel paths run (blocks of stencil rows, connectivity
/// in parallel), for both schemes.
#[test]
fn threads_do_not_change_the_build() {
    let (mesh, x) = triangle_torus(64);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
    for scheme in [subla_adaptive::Scheme::Catmark, subla_adaptive::Scheme::Loop] {
        let build = |pool: &rayon::ThreadPool| {
            pool.install(|| {
                let r = SparseRefinement::build_scheme(scheme, &mesh, 2, None).expect("build");
                PatchTable::new(r, EndCap::GregoryBasis).expect("table")
            })
        };
        let (a, b) = (build(&one), build(&three));
        let (ra, rb) = (a.refinement(), b.refinement());
        assert_eq!(ra.vertices_per_level(), rb.vertices_per_level());
        assert!(
            ra.stencils().iter().any(|s| s.num_rows() > 1 << 14),
            "{scheme:?}: a level of more than one block of rows"
        );
        for (l, (sa, sb)) in ra.stencils().iter().zip(rb.stencils()).enumerate() {
            assert_eq!(sa.num_rows(), sb.num_rows());
            for i in 0..sa.num_rows() {
                let ((ca, wa), (cb, wb)) = (sa.row(i), sb.row(i));
                assert_eq!(ca, cb, "{scheme:?}: level {l} row {i}");
                assert!(wa.iter().zip(wb).all(|(p, q)| p.to_bits() == q.to_bits()), "{scheme:?}: level {l} row {i}");
            }
        }
        let (pa, pb) = (a.points_of(x.view(), Par::Seq), b.points_of(x.view(), Par::Seq));
        assert!(pa.iter().zip(pb.iter()).all(|(p, q)| p.to_bits() == q.to_bits()), "{scheme:?}: points");
    }
}
