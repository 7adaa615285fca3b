//! Loop end caps: every conversion row is an affine combination (weights
//! sum to one, so a translated mesh gives a translated patch), and the
//! linear end cap of a regular interior corner is Loop's limit mask
//! `1/2 v + 1/12 Σ u_i`.

use subla_adaptive::endcap::{Corner, Rows};
use subla_adaptive::loop_endcap::{TriSourcePatch, gregory_triangle, linear_triangle, loop_box_spline};

fn corner(num_faces: u16, patch_face: u16, boundary: bool) -> Corner {
    Corner { num_faces, patch_face, boundary, sharp: boundary && num_faces == 1, dart: false }
}

fn configurations() -> Vec<[Corner; 3]> {
    let mut out = Vec::new();
    for n in [3u16, 4, 5, 6, 7, 9] {
        for f in 0..n {
            out.push([corner(n, f, false), corner(6, 0, false), corner(6, 5, false)]);
        }
    }
    for n in [1u16, 2, 3, 4, 5] {
        for f in 0..n {
            out.push([corner(n, f, true), corner(6, 1, false), corner(6, 3, false)]);
        }
    }
    out.push([corner(5, 2, false), corner(7, 3, false), corner(4, 1, false)]);
    out.push([corner(3, 0, true), corner(3, 2, true), corner(6, 4, false)]);
    out
}

fn assert_affine(rows: &Rows, what: &str) {
    for r in 0..rows.num_rows() {
        let (_, w) = rows.row(r);
        let sum: f64 = w.iter().sum();
        assert!((sum - 1.0).abs() < 1e-12, "{what}: row {r} sums to {sum}");
    }
}

#[test]
fn conversions_are_affine() {
    for corners in configurations() {
        let patch = TriSourcePatch::new(corners);
        let g = gregory_triangle(&patch);
        assert_eq!(g.num_rows(), 18);
        assert_affine(&g, &format!("Gregory triangle of {corners:?}"));
        let b = loop_box_spline(&patch);
        assert_eq!(b.num_rows(), 12);
        // The fitting table has six or seven digits: affine to that.
        for r in 0..12 {
            let sum: f64 = b.row(r).1.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "box spline of {corners:?}: row {r} sums to {sum}");
        }
        assert_affine(&linear_triangle(&patch), &format!("linear triangle of {corners:?}"));
    }
}

#[test]
fn regular_interior_limit_is_loops_mask() {
    let patch = TriSourcePatch::new([corner(6, 0, false), corner(6, 2, false), corner(6, 4, false)]);
    let rows = linear_triangle(&patch);
    for c in 0..3 {
        let (cols, w) = rows.row(c);
        for (&col, &x) in cols.iter().zip(w) {
            let expected = if col as usize == c { 0.5 } else { 1.0 / 12.0 };
            assert!((x - expected).abs() < 1e-15, "corner {c}, point {col}: {x}");
        }
        assert_eq!(cols.len(), 7);
    }
    // A regular triangle's source points are the box spline's 12: the 3
    // corners and 3 ring points of each corner's own.
    assert_eq!(patch.num_source_points(), 12);
}
