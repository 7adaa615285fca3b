//! What `subla matrix` will need, from counts alone, before anything is
//! built: the topology of every level, the per-level matrices, the product
//! and the limit operator. All sums saturate in `u128`, so absurd level
//! counts give a refusal, not an overflow.
//!
//! The bounds: a child point's row at one level reads at most the vertices
//! of the faces around its parent element, so level `l`'s operator has at
//! most `Σ_f (2|f|² + |f|) + V` entries (vertex, edge and face points);
//! every point of the product reads at most the vertices of the one-ring
//! of the control face it lies in, and never more than all control points.

use subla::registry::Growth;
use subla_mesh::Mesh;

use crate::memory;

/// The prediction for one `subla matrix` run.
#[derive(Clone, Debug)]
pub(crate) struct Prediction {
    /// Faces of the finest level.
    pub(crate) faces: u128,
    /// Rows of the product (points of the finest level), a bound.
    pub(crate) rows: u128,
    /// Bytes in all, a bound.
    pub(crate) bytes: u128,
}

/// CSR bytes of `rows` rows and `nnz` entries (`f64` values, `u32`
/// indices), as `subla_scheme::refinement::csr_bytes`.
fn csr(rows: u128, nnz: u128) -> u128 {
    rows.saturating_add(1).saturating_mul(4).saturating_add(nnz.saturating_mul(12))
}

/// Predicts `subla matrix` on `mesh` for `levels` levels of a scheme that
/// grows as `growth`; `product`: the composed matrix is made (not only
/// `--per-level`); `limit`: the limit operator is appended.
pub(crate) fn matrix(growth: Growth, mesh: &Mesh, levels: u32, product: bool, limit: bool) -> Prediction {
    let t = mesh.topology();
    let sqrt3 = growth.factor == 3;
    // Faces after the first step: quads for the quad-splitting schemes,
    // triangles for the others.
    let k: u128 = if growth.first_per_corner { 4 } else { 3 };
    let (mut v, mut e, mut f, mut c) =
        (t.num_vertices() as u128, t.num_edges() as u128, t.num_faces() as u128, t.num_corners() as u128);
    let level0: u128 = (0..t.num_faces()).map(|f| t.face_order(f) as u128).map(|n| 2 * n * n + n).sum();
    let mut bytes: u128 = 0;
    for l in 0..levels {
        let nnz = if l == 0 { level0 } else { k.saturating_mul(2 * k + 1).saturating_mul(f) }.saturating_add(v);
        let next_f = growth.faces(mesh, l + 1);
        let next_v = if sqrt3 { v.saturating_add(f) } else { v.saturating_add(e).saturating_add(f) };
        let next_e = e.saturating_mul(2).saturating_add(c);
        let same = (next_v, next_e, next_f) == (v, e, f);
        (v, e, f, c) = (next_v, next_e, next_f, k.saturating_mul(next_f));
        bytes = bytes.saturating_add(csr(v, nnz));
        if same {
            // Nothing grows (no faces): the remaining levels are alike.
            bytes = bytes.saturating_add(csr(v, nnz).saturating_mul(u128::from(levels - l - 1)));
            break;
        }
        if bytes == u128::MAX {
            break;
        }
    }
    let f = growth.faces(mesh, levels);
    // Every level's topology, as `subla subdivide` was measured to need.
    bytes = bytes.saturating_add(memory::predicted_bytes(f, 3));
    if limit {
        let nnz = k.saturating_mul(2 * k + 1).saturating_mul(f).saturating_add(v);
        bytes = bytes.saturating_add(csr(v, nnz));
    }
    if product {
        let nnz = v.saturating_mul(support(mesh));
        // The product and the partial product it is made from.
        bytes = bytes.saturating_add(csr(v, nnz).saturating_mul(2));
    }
    Prediction { faces: f, rows: v, bytes }
}

/// The most control points one row of the product reads: the largest
/// one-ring of a control face (exact where small, else the sum of the
/// face sizes around its vertices), at most all control points.
fn support(mesh: &Mesh) -> u128 {
    let t = mesh.topology();
    let nv = t.num_vertices() as u128;
    let (corner_faces, mut ring) = (t.corner_faces(), Vec::new());
    let mut most: u128 = 1;
    for face in 0..t.num_faces() {
        let around =
            || t.face(face).iter().flat_map(|&v| t.vertex_corners(v as usize)).map(|&c| corner_faces[c as usize]);
        let over: u128 = around().map(|g| t.face_order(g as usize) as u128).sum();
        let n = if over <= 512 {
            ring.clear();
            ring.extend(around().flat_map(|g| t.face(g as usize).iter().copied()));
            ring.sort_unstable();
            ring.dedup();
            ring.len() as u128
        } else {
            over
        };
        most = most.max(n);
        if most >= nv {
            return nv.max(1);
        }
    }
    most.min(nv.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_level_counts_saturate() {
        let data = crate::embedded::open_box().unwrap();
        let growth = Growth { factor: 4, first_per_corner: true };
        let p = matrix(growth, &data.mesh, u32::MAX, true, true);
        assert_eq!(p.bytes, u128::MAX);
        let small = matrix(growth, &data.mesh, 2, true, false);
        assert!(small.bytes < 1 << 20, "{small:?}");
        assert_eq!(small.faces, growth.faces(&data.mesh, 2));
    }
}
