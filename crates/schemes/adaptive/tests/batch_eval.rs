//! Batched evaluation (`PatchTable::evaluate`, which keeps the patches of
//! the current ptex face and evaluates regular patches as a contracted
//! tensor product) against the plain route, sample by sample: `find`, the
//! basis weights of `evaluate_basis`, and the sum of the weighted points.
//! Shapes with holes, faces that are not quads, boundaries and Loop
//! triangles; isolation levels on both sides of the depth the batched
//! route's per-face grid serves; many samples per ptex face, on the edges
//! of the patches' squares and outside the unit square; four channels.

use std::path::{Path, PathBuf};

use ndarray::Array2;
use subla_adaptive::basis::{DerivOrder, Weights};
use subla_adaptive::{AdaptiveError, EndCap, PatchTable, Sample, SparseRefinement};
use subla_algebra::Par;
use subla_mesh::Validation;
use subla_mesh::obj::read_obj;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

/// A fixed hash to `[0, 1)`.
fn unit(x: u64) -> f64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `per_face` samples on every ptex face, in ptex order: hashed ones, the
/// edges of the squares of every depth, and a few outside the face.
fn samples(num_ptex: u32, per_face: usize) -> Vec<Sample> {
    const EDGES: [f64; 8] = [0.0, 1.0, 0.5, 0.25, 0.75, 0.125, -0.25, 1.25];
    let mut out = Vec::new();
    for ptex in 0..num_ptex {
        for k in 0..per_face {
            let i = u64::from(ptex) * per_face as u64 + k as u64;
            let (u, v) = if k < EDGES.len() {
                (EDGES[k], EDGES[(k * 3 + 1) % EDGES.len()])
            } else {
                (unit(2 * i), unit(2 * i + 1))
            };
            out.push(Sample { ptex, u, v });
        }
    }
    out
}

/// The limit at each sample by `find`, `evaluate_basis` and the points, and
/// per value the sum of its terms' magnitudes (`|w| |x|`), which bounds the
/// rounding of either route: a sample outside its ptex face extrapolates,
/// and a Gregory patch's blends grow without bound near their poles there.
fn reference(t: &PatchTable, points: &Array2<f64>, samples: &[Sample]) -> ([Array2<f64>; 3], [Array2<f64>; 3]) {
    let ch = points.ncols();
    let mut out = [(); 3].map(|_| Array2::from_elem((samples.len(), ch), f64::NAN));
    let mut size = [(); 3].map(|_| Array2::zeros((samples.len(), ch)));
    let mut w = Weights::new(DerivOrder::First);
    for (i, s) in samples.iter().enumerate() {
        let p = match t.find(s.ptex, s.u, s.v) {
            Ok(p) => p,
            Err(AdaptiveError::NoPatch { .. }) => continue,
            Err(e) => panic!("sample {i}: {e}"),
        };
        t.evaluate_basis(p, s.u, s.v, &mut w);
        for (m, ws) in [w.point(), w.du(), w.dv()].into_iter().enumerate() {
            for c in 0..ch {
                let terms = t.patch_points(p).iter().zip(ws).map(|(&pt, &x)| x * points[[pt as usize, c]]);
                out[m][[i, c]] = terms.clone().sum();
                size[m][[i, c]] = terms.map(f64::abs).sum();
            }
        }
    }
    (out, size)
}

#[test]
fn batched_evaluation_matches_the_plain_route() {
    let cases = [
        ("catmark_hole_test1", 2, EndCap::GregoryBasis),
        ("catmark_hole_test3", 3, EndCap::GregoryBasis),
        ("catmark_smoothtris0", 4, EndCap::GregoryBasis),
        ("catmark_pole8", 3, EndCap::BSplineBasis),
        ("catmark_quadstrips", 5, EndCap::GregoryBasis),
        ("catmark_pyramid", 6, EndCap::GregoryBasis),
        ("loop_cube", 3, EndCap::GregoryBasis),
    ];
    for (name, iso, end_cap) in cases {
        let mut d = read_obj(data().join(format!("meshes/osd/{name}.obj")), Validation::OpenSubdiv).expect("mesh");
        if d.left_handed {
            d.mesh = d.mesh.reversed_winding().expect("reversed");
        }
        let t = PatchTable::new(SparseRefinement::build(&d.mesh, iso, None).expect("refine"), end_cap).expect("table");
        // Four channels: the position and a quadratic of it.
        let pos = d.positions();
        let x = Array2::from_shape_fn((pos.nrows(), 4), |(i, c)| {
            if c < 3 { pos[[i, c]] } else { pos[[i, 0]] * pos[[i, 1]] - pos[[i, 2]] }
        });
        let samples = samples(t.refinement().num_ptex_faces(), 40);
        let got = t.evaluate(x.view(), &samples, Par::Seq).expect("evaluate");
        let (want, size) = reference(&t, &t.points_of(x.view(), Par::Seq), &samples);
        let scale = x.iter().fold(1f64, |m, v| m.max(v.abs()));
        let mut missing = Vec::new();
        for (m, (g, w)) in [&got.position, &got.du, &got.dv].into_iter().zip(&want).enumerate() {
            // Derivatives are scaled by up to 2^iso.
            let tol = 1e-12 * scale * if m == 0 { 1.0 } else { f64::from(1u32 << iso) };
            for ((i, c), &wv) in w.indexed_iter() {
                let gv = g[[i, c]];
                let tol = tol + 1e-13 * size[m][[i, c]];
                if wv.is_nan() {
                    assert!(gv.is_nan(), "{name}: sample {i} has no patch but got {gv}");
                    if m == 0 && c == 0 {
                        missing.push(i);
                    }
                } else {
                    assert!(
                        (gv - wv).abs() <= tol,
                        "{name} iso {iso}: sample {:?}, output {m}: {gv} vs {wv}",
                        samples[i]
                    );
                }
            }
        }
        assert_eq!(got.missing, missing, "{name}: the samples without a patch");
        if name.contains("hole") {
            assert!(!missing.is_empty(), "{name}: a shape with holes has samples on no patch");
        }
        // Three channels take another route through the code; so do threads.
        let three = t.evaluate(x.slice(ndarray::s![.., ..3]), &samples, Par::Rayon).expect("three channels");
        for (a, b) in [(&three.position, &got.position), (&three.du, &got.du), (&three.dv, &got.dv)] {
            for ((i, c), &v) in a.indexed_iter() {
                let w = b[[i, c]];
                assert!(v == w || v.is_nan() && w.is_nan(), "{name}: three channels differ at sample {i}: {v} vs {w}");
            }
        }
    }
}

#[test]
fn a_ptex_face_out_of_range_is_an_error_in_a_long_run() {
    let d = read_obj(data().join("meshes/osd/catmark_cube.obj"), Validation::OpenSubdiv).expect("mesh");
    let t = PatchTable::new(SparseRefinement::build(&d.mesh, 2, None).expect("refine"), EndCap::GregoryBasis)
        .expect("table");
    let n = t.refinement().num_ptex_faces();
    let mut s = samples(n, 20);
    s.extend(samples(n + 1, 20).into_iter().filter(|x| x.ptex == n));
    match t.evaluate(d.positions(), &s, Par::Seq) {
        Err(AdaptiveError::NoSuchPtexFace { ptex, num_ptex }) => assert_eq!((ptex, num_ptex), (n, n)),
        other => panic!("expected NoSuchPtexFace, got {other:?}"),
    }
    // Two samples out of range in a run of many blocks: whatever block a
    // thread meets first, the error names the first in order.
    let mut s = samples(n, 2000);
    let len = s.len();
    // The first at the end of the first half, the other at the start of
    // the second (blocks of 512 samples): a second thread meets it long
    // before the first thread meets the first.
    let mid = len.div_ceil(512) / 2 * 512;
    assert!(mid >= 8 * 512);
    s[mid - 2].ptex = n + 3;
    s[mid + 1].ptex = n + 1;
    for par in [Par::Seq, Par::Rayon] {
        for _ in 0..4 {
            match t.evaluate(d.positions(), &s, par) {
                Err(AdaptiveError::NoSuchPtexFace { ptex, num_ptex }) => {
                    assert_eq!((ptex, num_ptex), (n + 3, n), "{par:?}")
                }
                other => panic!("expected NoSuchPtexFace, got {other:?}"),
            }
        }
    }
}

/// The same bits, or both NaN.
fn same(a: &Array2<f64>, b: &Array2<f64>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan())
}

#[test]
fn a_frame_loop_reuses_its_buffers_and_gives_the_same_bits() {
    for (name, channels) in [("catmark_hole_test1", 3), ("catmark_pole8", 5), ("loop_cube", 3)] {
        let d = read_obj(data().join(format!("meshes/osd/{name}.obj")), Validation::OpenSubdiv).expect("mesh");
        let t = PatchTable::new(SparseRefinement::build(&d.mesh, 3, None).expect("refine"), EndCap::GregoryBasis)
            .expect("table");
        let pos = d.positions();
        let frame = |k: usize| {
            Array2::from_shape_fn((pos.nrows(), channels), |(i, c)| pos[[i, c % 3]] * (1.0 + 0.1 * k as f64) + c as f64)
        };
        let s = samples(t.refinement().num_ptex_faces(), 12);
        // Buffers from another frame, and output arrays in column-major
        // layout for the second: each call overwrites every entry.
        let mut points = Array2::from_elem((t.num_points(), channels), f64::NAN);
        let shape = (s.len(), channels);
        let mut out = subla_adaptive::Limit {
            position: Array2::from_elem(shape, 7.0),
            du: Array2::from_elem(shape, 7.0),
            dv: Array2::from_elem(shape, 7.0),
            missing: vec![0, 1, 2],
        };
        for k in 0..3 {
            let x = frame(k);
            let want = t.evaluate(x.view(), &s, Par::Rayon).expect("evaluate");
            t.points_into(x.view(), Par::Rayon, points.view_mut());
            assert!(same(&points, &t.points_of(x.view(), Par::Seq)), "{name} frame {k}: points");
            if k == 1 {
                use ndarray::ShapeBuilder;
                out.position = Array2::from_elem(shape.f(), 7.0);
                out.dv = Array2::from_elem(shape.f(), 7.0);
            }
            t.evaluate_points_into(points.view(), &s, Par::Rayon, &mut out).expect("frame");
            assert!(same(&out.position, &want.position), "{name} frame {k}: positions");
            assert!(same(&out.du, &want.du) && same(&out.dv, &want.dv), "{name} frame {k}: derivatives");
            assert_eq!(out.missing, want.missing, "{name} frame {k}");
        }
        // A ptex face past the last: refused before anything is written.
        let before = out.clone();
        let mut bad = s.clone();
        bad[3].ptex = t.refinement().num_ptex_faces();
        assert!(matches!(
            t.evaluate_points_into(points.view(), &bad, Par::Rayon, &mut out),
            Err(AdaptiveError::NoSuchPtexFace { .. })
        ));
        assert!(same(&out.position, &before.position) && out.missing == before.missing, "{name}: untouched");
    }
}
