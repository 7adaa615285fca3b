//! Local subdivision analysis against closed forms: Loop's and
//! Catmull-Clark's spectra at valences 3–12, the block-circulant structure,
//! and the errors.

use std::f64::consts::{PI, TAU};

use subla::analysis::{AnalysisError, DiskFaces, local_subdivision_matrix, spectrum};
use subla::catmark::CatmarkSlak;
use subla::loop_scheme::LoopSlak;
use subla::sqrt3::Sqrt3Slak;

/// Loop's vertex weight β(k) (Loop's original, which OpenSubdiv uses).
fn loop_beta(k: usize) -> f64 {
    let c = 3.0 / 8.0 + (TAU / k as f64).cos() / 4.0;
    (5.0 / 8.0 - c * c) / k as f64
}

#[test]
fn loop_spectrum_matches_its_closed_form() {
    for k in 3..=12 {
        let s = local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, k, 1).unwrap();
        assert_eq!(s.matrix.shape(), (k + 1, k + 1));
        assert!(s.is_block_circulant());
        // Rows sum to one.
        let d = s.matrix.to_dense();
        for r in d.rows() {
            assert!((r.sum() - 1.0).abs() < 1e-14);
        }
        let sp = spectrum(&s).unwrap();
        assert_eq!(sp.values.len(), k + 1);
        // 1 and 5/8 − kβ (ω = 0), 3/8 + cos(2πω/k)/4 (ω = 1 .. k − 1).
        let mut want: Vec<(f64, usize)> = vec![(1.0, 0), (5.0 / 8.0 - k as f64 * loop_beta(k), 0)];
        want.extend((1..k).map(|w| (3.0 / 8.0 + (TAU * w as f64 / k as f64).cos() / 4.0, w)));
        for (value, w) in want {
            assert!(
                sp.values
                    .iter()
                    .any(|e| e.fourier == Some(w) && (e.value.re - value).abs() < 1e-12 && e.value.im.abs() < 1e-12),
                "k {k}: {value} at ω = {w} in {:?}",
                sp.values
            );
        }
        let l1 = sp.subdominant().unwrap();
        assert!((l1.value.re - (3.0 / 8.0 + (TAU / k as f64).cos() / 4.0)).abs() < 1e-12, "k {k}");
        assert!(sp.conditions().all(), "k {k}: {:?}", sp.conditions());
    }
}

#[test]
fn catmull_clark_subdominant_eigenvalue_matches_its_closed_form() {
    for k in 3..=12 {
        let s = local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, k, 1).unwrap();
        assert_eq!(s.matrix.shape(), (2 * k + 1, 2 * k + 1));
        assert!(s.is_block_circulant());
        let sp = spectrum(&s).unwrap();
        // Doo & Sabin's and Ball & Storry's closed form.
        let c = (TAU / k as f64).cos();
        let lambda = (5.0 + c + (PI / k as f64).cos() * (2.0 * (9.0 + c)).sqrt()) / 16.0;
        let l1 = sp.subdominant().unwrap();
        assert!((l1.value.re - lambda).abs() < 1e-12, "k {k}: {} against {lambda}", l1.value);
        assert!(sp.conditions().all(), "k {k}: {:?}", sp.conditions());
        // ω = 0: 1, 1/(4k)·(something), and the centre block has size 3.
        assert_eq!(sp.values.iter().filter(|e| e.fourier == Some(0)).count(), 3);
        // The regular case: 1, 1/2, 1/2, 1/4, ...
        if k == 4 {
            assert!((l1.value.re - 0.5).abs() < 1e-12);
        }
    }
}

#[test]
fn bad_parameters_are_refused() {
    // √3 turns the lattice: two steps bring it back; a boundary of it is
    // not analysed.
    let r = subla::analysis::local_subdivision_matrix_at(
        &Sqrt3Slak::new(),
        DiskFaces::Triangles,
        subla::analysis::Configuration::Boundary,
        3,
        1,
    );
    assert!(matches!(r, Err(AnalysisError::UnsupportedConfiguration { .. })), "{r:?}");
    // Loop refuses the k-gon of a face configuration.
    let r = subla::analysis::local_subdivision_matrix_at(
        &LoopSlak::new(),
        DiskFaces::Quads,
        subla::analysis::Configuration::Face,
        5,
        1,
    );
    assert!(matches!(r, Err(AnalysisError::Scheme(_))), "{r:?}");
    assert!(matches!(
        local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, 2, 1),
        Err(AnalysisError::Parameter { what: "valence", value: 2, min: 3 })
    ));
    assert!(matches!(
        local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, 5, 0),
        Err(AnalysisError::Parameter { what: "rings", .. })
    ));
}

/// The limit masks from the left eigenvector of 1 equal the schemes' own
/// (`Plan::limit`) and the closed forms: Loop's `χ = 1/(3/(8β) + k)` on the
/// neighbours, Catmull-Clark's `(k² P + 4 Σ e + Σ f) / (k (k + 5))`.
#[test]
fn limit_masks_from_the_left_eigenvector() {
    for k in 3..=12 {
        let s = local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, k, 1).unwrap();
        let mask = s.limit_mask().unwrap();
        let chi = 1.0 / (3.0 / (8.0 * loop_beta(k)) + k as f64);
        assert!((mask[0] - (1.0 - k as f64 * chi)).abs() < 1e-12, "Loop k {k}: centre {}", mask[0]);
        assert!(mask[1..].iter().all(|&w| (w - chi).abs() < 1e-12), "Loop k {k}");
        let own = s.scheme_limit_mask.as_ref().expect("Loop has limit masks");
        assert!(mask.iter().zip(own).all(|(a, b)| (a - b).abs() < 1e-12), "Loop k {k}: {mask:?} against {own:?}");

        let s = local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, k, 1).unwrap();
        let mask = s.limit_mask().unwrap();
        let n = k as f64;
        let den = n * (n + 5.0);
        assert!((mask[0] - n * n / den).abs() < 1e-12, "Catmark k {k}");
        assert!(mask[1..=k].iter().all(|&w| (w - 4.0 / den).abs() < 1e-12), "Catmark k {k}: edges");
        assert!(mask[k + 1..].iter().all(|&w| (w - 1.0 / den).abs() < 1e-12), "Catmark k {k}: faces");
        let own = s.scheme_limit_mask.as_ref().expect("Catmull-Clark has limit masks");
        assert!(mask.iter().zip(own).all(|(a, b)| (a - b).abs() < 1e-12), "Catmark k {k}");
        // The subdominant eigenvalue is double: a plane of eigenvectors on
        // both sides.
        let l1 = spectrum(&s).unwrap().subdominant().unwrap().value.re;
        assert_eq!(s.left_eigenvectors(l1).len(), 2, "k {k}");
        assert_eq!(s.right_eigenvectors(l1).len(), 2, "k {k}");
    }
}

/// The tangent masks from the subdominant left eigenvectors are left
/// eigenvectors (`l S = λ₁ l`) and equal the closed forms: Loop's
/// `Σ cos(2πj/k) p_j` (centre 0), Catmull-Clark's `A_k cos(2πj/k)` on the
/// edge neighbours and `cos(2πj/k) + cos(2π(j+1)/k)` on the faces, with
/// `A_k = 1 + cos(2π/k) + cos(π/k) √(2(9 + cos(2π/k)))` (here scaled by
/// `1/A_k`); the same with sines.
#[test]
fn tangent_masks_from_the_subdominant_left_eigenvectors() {
    for k in 3..=12 {
        for (faces, s) in [
            (DiskFaces::Triangles, local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, k, 1).unwrap()),
            (DiskFaces::Quads, local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, k, 1).unwrap()),
        ] {
            let l1 = spectrum(&s).unwrap().subdominant().unwrap().value.re;
            let [tc, ts] = s.tangent_masks().expect("tangent masks");
            let d = s.matrix.to_dense();
            for t in [&tc, &ts] {
                let ls = ndarray::Array1::from(t.clone()).dot(&d);
                assert!(
                    ls.iter().zip(t.iter()).all(|(a, b)| (a - l1 * b).abs() < 1e-12),
                    "{faces:?} k {k}: l S = λ1 l"
                );
                assert!(t.iter().sum::<f64>().abs() < 1e-12, "annihilates constants");
                assert!(t[0].abs() < 1e-12, "no centre weight");
            }
            let angle = |j: usize| TAU * j as f64 / k as f64;
            for j in 0..k {
                assert!((tc[1 + j] - angle(j).cos()).abs() < 1e-12 && (ts[1 + j] - angle(j).sin()).abs() < 1e-12);
                if faces == DiskFaces::Quads {
                    let c = angle(1).cos();
                    let a = 1.0 + c + (PI / k as f64).cos() * (2.0 * (9.0 + c)).sqrt();
                    let want_c = (angle(j).cos() + angle(j + 1).cos()) / a;
                    let want_s = (angle(j).sin() + angle(j + 1).sin()) / a;
                    assert!(
                        (tc[1 + k + j] - want_c).abs() < 1e-12,
                        "k {k}: face {j}: {} against {want_c}",
                        tc[1 + k + j]
                    );
                    assert!((ts[1 + k + j] - want_s).abs() < 1e-12, "k {k}: face {j}");
                }
            }
        }
    }
}

/// Reif's criterion, numerically: Loop's and Catmull-Clark's characteristic
/// maps are regular and injective at valences 3–12; bilinear subdivision's
/// subdominant eigenvalue is not a simple pair, so it has none.
#[test]
fn characteristic_maps_are_regular_and_injective() {
    use subla::analysis::characteristic_map;
    for k in 3..=12 {
        for (name, map) in [
            ("loop", characteristic_map(&LoopSlak::new(), DiskFaces::Triangles, k, 3).unwrap()),
            ("catmark", characteristic_map(&CatmarkSlak, DiskFaces::Quads, k, 3).unwrap()),
        ] {
            assert!(map.regular, "{name} k {k}: areas {:?}", map.area_range);
            assert!(map.injective, "{name} k {k}");
            assert!(!map.triangles.is_empty());
        }
    }
}

/// Around a boundary vertex (a half disk of k faces, the mesh's default
/// boundary rule: boundary edges infinitely sharp) the boundary curve is a
/// cubic B-spline: the spectrum holds its 1 (simple), ½ and ¼, and the
/// limit mask is the curve's (⅙, ⅔, ⅙) on the centre and its two boundary
/// neighbours, as the schemes' own limit masks say; the subdominant
/// eigenvalue of the interior vertex of valence 2k is among the boundary
/// vertex's.
#[test]
fn boundary_configurations() {
    use subla::analysis::{Configuration, local_subdivision_matrix_at};
    for k in 1..=6 {
        for (faces, s) in [
            (
                "loop",
                local_subdivision_matrix_at(&LoopSlak::new(), DiskFaces::Triangles, Configuration::Boundary, k, 1)
                    .unwrap(),
            ),
            (
                "catmark",
                local_subdivision_matrix_at(&CatmarkSlak, DiskFaces::Quads, Configuration::Boundary, k, 1).unwrap(),
            ),
        ] {
            assert!(!s.is_block_circulant());
            // The centre, k + 1 spokes, and for quads k face neighbours.
            let n = if faces == "loop" { k + 2 } else { 2 * k + 2 };
            assert_eq!(s.matrix.shape(), (n, n), "{faces} k {k}");
            let sp = spectrum(&s).unwrap();
            assert!(sp.configuration == Configuration::Boundary && sp.values.iter().all(|e| e.fourier.is_none()));
            // (¼ can be a double, defective eigenvalue: computed to about
            // the square root of the rounding.)
            for want in [1.0, 0.5, 0.25] {
                assert!(
                    sp.values.iter().any(|e| (e.value.re - want).abs() < 1e-6 && e.value.im.abs() < 1e-6),
                    "{faces} k {k}: {want} in {:?}",
                    sp.values
                );
            }
            let mask = s.limit_mask().unwrap();
            // Spokes 0 and k are points 1 and k + 1.
            assert!((mask[0] - 2.0 / 3.0).abs() < 1e-12, "{faces} k {k}: {mask:?}");
            assert!((mask[1] - 1.0 / 6.0).abs() < 1e-12 && (mask[k + 1] - 1.0 / 6.0).abs() < 1e-12);
            let own = s.scheme_limit_mask.as_ref().unwrap();
            assert!(mask.iter().zip(own).all(|(a, b)| (a - b).abs() < 1e-12), "{faces} k {k}");
            assert!(sp.conditions().unit_dominant, "{faces} k {k}");
            // The boundary rules mirror the surface: the subdominant
            // eigenvalue of an interior vertex of valence 2k is one of the
            // boundary vertex's with k faces.
            if k >= 2 {
                let interior = if faces == "loop" {
                    local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, 2 * k, 1).unwrap()
                } else {
                    local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, 2 * k, 1).unwrap()
                };
                let l1 = spectrum(&interior).unwrap().subdominant().unwrap().value.re;
                assert!(
                    sp.values.iter().any(|e| (e.value.re - l1).abs() < 1e-9),
                    "{faces} k {k}: {l1} in {:?}",
                    sp.values
                );
            }
        }
    }
    assert!(matches!(
        local_subdivision_matrix_at(&CatmarkSlak, DiskFaces::Quads, Configuration::Boundary, 0, 1),
        Err(AnalysisError::Parameter { min: 1, .. })
    ));
}

/// The sharp configurations (infinitely sharp tags, stationary rules).
/// A crease through the vertex is a cubic B-spline curve whatever the
/// sectors on each side: the limit mask is (⅙, ⅔, ⅙) on the centre and the
/// two crease spokes, ½ is an eigenvalue, and the regular crease
/// (Catmull-Clark k = 4 with 2 sectors a side, Loop k = 6 with 3) has the
/// leading spectrum 1, ½, ½, ½, ¼: ½ once along the crease and once across
/// it on each side, whose tangents are independent — the surface is only
/// C⁰ there, so the gap condition fails, as it must. A corner
/// interpolates: its limit mask is the centre alone, and the two boundary
/// curves' ends make ½ double. Every limit mask from the left eigenvector
/// is the scheme's own.
#[test]
fn sharp_configurations() {
    use subla::analysis::{Configuration, LocalMatrix, local_subdivision_matrix_at};
    let make = |quads: bool, c: Configuration, k: usize| -> LocalMatrix {
        if quads {
            local_subdivision_matrix_at(&CatmarkSlak, DiskFaces::Quads, c, k, 1).unwrap()
        } else {
            local_subdivision_matrix_at(&LoopSlak::new(), DiskFaces::Triangles, c, k, 1).unwrap()
        }
    };
    let has = |s: &LocalMatrix, want: f64| {
        let sp = spectrum(s).unwrap();
        sp.values.iter().filter(|e| (e.value.re - want).abs() < 1e-6 && e.value.im.abs() < 1e-6).count()
    };
    let same_mask = |s: &LocalMatrix| {
        let mask = s.limit_mask().unwrap();
        let own = s.scheme_limit_mask.as_ref().unwrap();
        mask.iter().zip(own).all(|(a, b)| (a - b).abs() < 1e-10)
    };
    for quads in [true, false] {
        for k in 3..=8 {
            for across in 1..k {
                let s = make(quads, Configuration::Crease { across }, k);
                assert!(!s.is_block_circulant());
                let mask = s.limit_mask().unwrap();
                // Spoke 0 is point 1, spoke `across` point 1 + across.
                let mut want = vec![0.0; mask.len()];
                want[0] = 2.0 / 3.0;
                want[1] = 1.0 / 6.0;
                want[1 + across] = 1.0 / 6.0;
                assert!(mask.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-10), "k {k} across {across}: {mask:?}");
                assert!(same_mask(&s), "k {k} across {across}");
                assert!(has(&s, 0.5) >= 1, "k {k} across {across}");
                let sp = spectrum(&s).unwrap();
                assert!(sp.conditions().unit_dominant, "k {k} across {across}");
                assert_eq!(sp.configuration, Configuration::Crease { across });
            }
        }
        let (k, across) = if quads { (4, 2) } else { (6, 3) };
        let sp = spectrum(&make(quads, Configuration::Crease { across }, k)).unwrap();
        let lead: Vec<f64> = sp.values.iter().take(5).map(|e| e.value.re).collect();
        for (got, want) in lead.iter().zip([1.0, 0.5, 0.5, 0.5, 0.25]) {
            assert!((got - want).abs() < 1e-6, "regular crease: {lead:?}");
        }
        let c = sp.conditions();
        assert!(c.unit_dominant && c.subdominant_pair && !c.gap);
        for k in 1..=6 {
            let s = make(quads, Configuration::Corner, k);
            let mask = s.limit_mask().unwrap();
            assert!(
                (mask[0] - 1.0).abs() < 1e-10 && mask[1..].iter().all(|w| w.abs() < 1e-10),
                "corner k {k}: {mask:?}"
            );
            assert!(same_mask(&s), "corner k {k}");
            assert!(has(&s, 0.5) >= 2, "corner k {k}");
        }
        for k in 3..=8 {
            // A dart: the limit mask is a positive affine mask, mirror
            // symmetric about the sharp spoke 0 (spokes j and k − j, and
            // for quads sectors j and k − 1 − j, weigh the same). It is not
            // the smooth mask the scheme's (and OpenSubdiv's) limit uses
            // at darts: see docs/analysis.md.
            let s = make(quads, Configuration::Dart, k);
            let mask = s.limit_mask().unwrap();
            assert!((mask.iter().sum::<f64>() - 1.0).abs() < 1e-12 && mask.iter().all(|&w| w > 0.0), "dart k {k}");
            for j in 1..k {
                assert!((mask[1 + j] - mask[1 + k - j]).abs() < 1e-10, "dart k {k}: {mask:?}");
                if quads {
                    assert!((mask[1 + k + j] - mask[1 + k + (k - 1 - j)]).abs() < 1e-10, "dart k {k}: {mask:?}");
                }
            }
            assert!(spectrum(&s).unwrap().conditions().unit_dominant);
        }
    }
    assert!(matches!(
        local_subdivision_matrix_at(&CatmarkSlak, DiskFaces::Quads, Configuration::Crease { across: 5 }, 5, 1),
        Err(AnalysisError::Parameter { .. })
    ));
}

/// Catmull-Clark solids around an interior extraordinary edge of valence
/// k (k hexahedra around it, in layers along it). At the regular valence 4
/// the local subdivision matrix is the tensor product of Catmull-Clark's
/// surface matrix and the cubic B-spline curve's along the edge. At every
/// valence the rows of the points off the edge are that tensor product
/// too; under Joy and MacCracken's vertex rule the edge's own vertex points
/// differ (their rule is not Catmull-Clark's times the curve's there), under
/// the default layered rule they do not: the whole matrix is the product.
/// So the spectrum's frequencies other than 0 are the products of
/// Catmull-Clark's with the curve's (1, ½, ¼) — frequency 0 too under the
/// layered rule —, and the second eigenvalue is the larger of
/// Catmull-Clark's λ₁ (a pair, Fourier index 1) and the curve's ½ (along
/// the edge, Fourier index 0).
#[test]
fn solid_edge_configurations() {
    use subla::analysis::{Configuration, edge_subdivision_matrix};
    use subla::solid::{CatmarkSolid, VertexRule};
    for (k, rule) in (3..=8).flat_map(|k| [(k, VertexRule::JoyMacCracken), (k, VertexRule::Layered)]) {
        let s = edge_subdivision_matrix(&CatmarkSolid::new(rule), k, 1, 1).unwrap();
        assert_eq!(s.configuration, Configuration::Edge);
        let surface = local_subdivision_matrix(&CatmarkSlak, DiskFaces::Quads, k, 1).unwrap();
        let n2 = surface.points.len();
        assert_eq!(n2, 2 * k + 1);
        assert_eq!(s.matrix.shape(), (3 * n2, 3 * n2));
        assert_eq!(&s.layers[..3], &[0, -1, 1]);
        assert!(s.is_block_circulant(), "k {k}");
        let at2: std::collections::HashMap<_, usize> =
            surface.points.iter().enumerate().map(|(n, p)| (*p, n)).collect();
        // The cubic B-spline curve's rows over layers −1, 0, 1: the vertex
        // point (⅛, ¾, ⅛) and the two edge midpoints.
        let curve = |zc: i32, zp: i32| -> f64 {
            match (zc, zp) {
                (0, 0) => 0.75,
                (0, _) => 0.125,
                (1, 0 | 1) | (-1, 0 | -1) => 0.5,
                _ => 0.0,
            }
        };
        let (d, d2) = (s.matrix.to_dense(), surface.matrix.to_dense());
        let mut axis_differs = false;
        for r in 0..3 * n2 {
            let on_axis = s.points[r].i == 0;
            for c in 0..3 * n2 {
                let want = curve(s.layers[r], s.layers[c]) * d2[(at2[&s.points[r]], at2[&s.points[c]])];
                let same = (d[(r, c)] - want).abs() < 1e-14;
                assert!(same || (on_axis && s.layers[r] == 0), "k {k}: ({r}, {c}) {} vs {want}", d[(r, c)]);
                axis_differs |= !same;
            }
            assert!((d.row(r).sum() - 1.0).abs() < 1e-14);
        }
        assert_eq!(axis_differs, k != 4 && rule == VertexRule::JoyMacCracken, "k {k}, {rule:?}");
        let sp = spectrum(&s).unwrap();
        let cc = spectrum(&surface).unwrap();
        let l1 = cc.subdominant().unwrap().value.re;
        assert!((sp.values[0].value.re - 1.0).abs() < 1e-12);
        assert!(sp.values[1..].iter().all(|e| e.value.norm() < 1.0 - 1e-9));
        assert!((sp.values[1].value.re - l1.max(0.5)).abs() < 1e-9, "k {k}: {:?} vs {l1}", sp.values[1]);
        let layered = rule == VertexRule::Layered;
        for e in sp.values.iter().filter(|e| layered || e.fourier != Some(0)) {
            let w = e.fourier.unwrap();
            let product = cc
                .values
                .iter()
                .filter(|c| c.fourier == Some(w))
                .any(|c| [1.0, 0.5, 0.25].iter().any(|&m| (c.value * m - e.value).norm() < 1e-9));
            assert!(product, "k {k}: {:?} (ω = {w}) is no product", e.value);
        }
        assert!(sp.values.iter().any(|e| e.fourier == Some(0) && (e.value.re - 0.5).abs() < 1e-9));
    }
    assert!(matches!(edge_subdivision_matrix(&CatmarkSolid::default(), 2, 1, 1), Err(AnalysisError::Parameter { .. })));
    assert!(matches!(edge_subdivision_matrix(&CatmarkSolid::default(), 5, 1, 0), Err(AnalysisError::Parameter { .. })));
}

/// √3 (Kobbelt 2000) turns the lattice by 30° each step; two steps bring
/// it back at a third of the size, so its local subdivision matrix is that
/// of two steps, `R₁ R₀`, over the centre and its neighbours. Its
/// subdominant eigenvalue is `(2 + 2 cos(2π/k))/9` (the square of one
/// step's modulus `|1 + e^{2πi/k}|/3`; ⅓ at the regular valence 6), with
/// Fourier indices 1 and `k − 1`; `ω = 0` gives 1 and the square of
/// `2/3 − α_k = (2 + 2 cos(2π/k))/9`; every condition holds, and the limit
/// mask is Kobbelt's.
#[test]
fn sqrt3_spectrum_over_two_steps() {
    for k in 3..=12 {
        let s = local_subdivision_matrix(&Sqrt3Slak::new(), DiskFaces::Triangles, k, 1).unwrap();
        assert_eq!((s.matrix.shape(), s.steps), ((k + 1, k + 1), 2));
        assert!(s.is_block_circulant(), "k {k}");
        let d = s.matrix.to_dense();
        for r in d.rows() {
            assert!((r.sum() - 1.0).abs() < 1e-14);
        }
        let sp = spectrum(&s).unwrap();
        let c = (TAU / k as f64).cos();
        let l1 = (2.0 + 2.0 * c) / 9.0;
        for w in 1..k {
            let want = (2.0 + 2.0 * (TAU * w as f64 / k as f64).cos()) / 9.0;
            assert!(
                sp.values.iter().any(|e| e.fourier == Some(w) && (e.value.re - want).abs() < 1e-12),
                "k {k} ω {w}: {want} in {:?}",
                sp.values
            );
        }
        assert!(sp.values.iter().any(|e| e.fourier == Some(0) && (e.value.re - l1 * l1).abs() < 1e-12));
        assert!((sp.subdominant().unwrap().value.re - l1).abs() < 1e-12, "k {k}");
        assert!(sp.conditions().all(), "k {k}: {:?}", sp.values);
        // Kobbelt's limit mask: 1/(1 + 3α) at the centre, the rest shared
        // by the k neighbours, α = (4 − 2 cos(2π/k))/9.
        let alpha = (4.0 - 2.0 * c) / 9.0;
        let mask = s.limit_mask().unwrap();
        assert!((mask[0] - 1.0 / (1.0 + 3.0 * alpha)).abs() < 1e-12, "k {k}: {mask:?}");
        let ring = 3.0 * alpha / ((1.0 + 3.0 * alpha) * k as f64);
        assert!(mask[1..].iter().all(|w| (w - ring).abs() < 1e-12), "k {k}: {mask:?}");
    }
    // Its characteristic map is not drawn (the ring turns level by level).
    assert!(matches!(
        subla::analysis::characteristic_map(&Sqrt3Slak::new(), DiskFaces::Triangles, 5, 3),
        Err(AnalysisError::UnsupportedConfiguration { .. })
    ));
}

/// The characteristic maps of boundary vertices (the half disk's map by
/// the eigenvectors of λ₁ ≥ λ₂, Reif's criterion on the half ring):
/// - the regular boundaries (Catmull-Clark with 2 faces, Loop with 3) map
///   the half ring onto the lattice's own half ring, every triangle the same
///   area;
/// - Loop with 1, 2, 4 and 5 faces and Catmull-Clark with 3 are regular
///   and injective;
/// - Catmull-Clark with 5 and 6 faces folds: triangles collapse (not
///   regular) — the standard boundary rules are not C¹ there;
/// - where λ₂ = λ₃ (Catmull-Clark with 1 and 4 faces, Loop with 6) there is
///   no unique map, and the refusal is typed.
#[test]
fn boundary_characteristic_maps() {
    use subla::analysis::boundary_characteristic_map;
    let catmark = |k| boundary_characteristic_map(&CatmarkSlak, DiskFaces::Quads, k, 3);
    let lp = |k| boundary_characteristic_map(&LoopSlak::new(), DiskFaces::Triangles, k, 3);
    for m in [catmark(2).unwrap(), lp(3).unwrap()] {
        assert!(m.regular && m.injective);
        assert!((m.area_range[0] - 1.0).abs() < 1e-9 && (m.area_range[1] - 1.0).abs() < 1e-9, "{:?}", m.area_range);
        assert!((m.lambda - 0.5).abs() < 1e-9);
    }
    for k in [1, 2, 4, 5] {
        let m = lp(k).unwrap();
        assert!(m.regular && m.injective, "loop k {k}: {:?}", m.area_range);
    }
    let m = catmark(3).unwrap();
    assert!(m.regular && m.injective, "{:?}", m.area_range);
    for k in [5, 6] {
        let m = catmark(k).unwrap();
        assert!(!m.regular && !m.injective, "catmark k {k}: {:?}", m.area_range);
    }
    for r in [catmark(1), catmark(4), lp(6)] {
        assert!(matches!(r, Err(AnalysisError::NoBoundaryPair { .. })), "{r:?}");
    }
}
