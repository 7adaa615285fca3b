//! Vertex normals of a polygon mesh from its faces.
//!
//! A face's normal is Newell's vector `½ Σ pᵢ × pᵢ₊₁` over its corners: for a
//! planar polygon it is the polygon's area times its unit normal, and for a
//! non-planar one the area vector of its projection, so every face, of any
//! number of sides, counts by its area. A vertex's normal is the sum of the
//! normals of its faces (hole faces left out), in the order of the vertex's
//! corners, normalised; a vertex whose faces cancel or have no area gets
//! `[0, 0, 0]`. Every vertex is summed by one task, so the result is the
//! same bits for every [`Par`].

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use subla_algebra::Par;

use crate::Topology;

/// Newell's area vector of face `f` (positions: the first three channels).
pub fn face_area_vector(t: &Topology, positions: ArrayView2<'_, f64>, f: usize) -> [f64; 3] {
    let face = t.face(f);
    let mut n = [0.0; 3];
    for (k, &a) in face.iter().enumerate() {
        let b = face[(k + 1) % face.len()];
        let (p, q) = (positions.row(a as usize), positions.row(b as usize));
        n[0] += (p[1] - q[1]) * (p[2] + q[2]);
        n[1] += (p[2] - q[2]) * (p[0] + q[0]);
        n[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    n.map(|x| 0.5 * x)
}

/// The normalised sum of `face(f)` over the faces `f` of vertex `v` that
/// `holes` does not flag, in the order of its corners; zero where it
/// vanishes.
fn summed(t: &Topology, holes: &[bool], v: usize, face: impl Fn(usize) -> [f64; 3]) -> [f64; 3] {
    let cf = t.corner_faces();
    let mut n = [0.0; 3];
    for &c in t.vertex_corners(v) {
        let f = cf[c as usize] as usize;
        if holes.get(f).copied().unwrap_or(false) {
            continue;
        }
        let a = face(f);
        for k in 0..3 {
            n[k] += a[k];
        }
    }
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() { n.map(|x| x / len) } else { [0.0; 3] }
}

/// The unit normal of vertex `v` alone, as [`vertex_normals`] computes it
/// (the same bits), its faces' area vectors computed on the way.
///
/// # Panics
/// If `v` or one of its vertices' rows is out of range of `positions`.
pub fn vertex_normal(t: &Topology, holes: &[bool], positions: ArrayView2<'_, f64>, v: usize) -> [f64; 3] {
    summed(t, holes, v, |f| face_area_vector(t, positions, f))
}

/// Unit normal of every vertex of `t` (see the [module docs](self)), one
/// row per vertex, from `positions` (one row per vertex, at least three
/// channels: x, y, z). Faces with `holes[f]` are left out; `holes` may be
/// empty (no holes).
///
/// # Panics
/// If `positions` has not one row per vertex or fewer than three channels,
/// or `holes` is neither empty nor one entry per face.
#[track_caller]
pub fn vertex_normals(t: &Topology, holes: &[bool], positions: ArrayView2<'_, f64>, par: Par) -> Array2<f64> {
    assert!(
        positions.nrows() == t.num_vertices() && positions.ncols() >= 3,
        "vertex_normals: positions are {:?}, the mesh has {} vertices (x, y, z needed)",
        positions.dim(),
        t.num_vertices()
    );
    assert!(
        holes.is_empty() || holes.len() == t.num_faces(),
        "vertex_normals: {} hole flags for {} faces",
        holes.len(),
        t.num_faces()
    );
    let faces: Vec<[f64; 3]> = match par {
        Par::Seq => (0..t.num_faces()).map(|f| face_area_vector(t, positions, f)).collect(),
        _ => (0..t.num_faces()).into_par_iter().map(|f| face_area_vector(t, positions, f)).collect(),
    };
    let one = |v: usize| summed(t, holes, v, |f| faces[f]);
    let rows: Vec<[f64; 3]> = match par {
        Par::Seq => (0..t.num_vertices()).map(one).collect(),
        _ => (0..t.num_vertices()).into_par_iter().map(one).collect(),
    };
    let Ok(out) = Array2::from_shape_vec((rows.len(), 3), rows.into_iter().flatten().collect()) else {
        unreachable!("three values a vertex")
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MeshBuilder;
    use ndarray::array;

    #[test]
    fn a_cube_has_diagonal_unit_normals_and_a_quad_its_plane_normal() {
        let p = array![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0]
        ];
        let faces = vec![0, 2, 3, 1, 4, 5, 7, 6, 0, 1, 5, 4, 2, 6, 7, 3, 0, 4, 6, 2, 1, 3, 7, 5];
        let m = MeshBuilder::new(8, (0..=6).map(|f| 4 * f).collect(), faces).build(Par::Seq).unwrap();
        let n = vertex_normals(m.topology(), &[], p.view(), Par::Rayon);
        for v in 0..8 {
            let want = p.row(v).mapv(|x| (2.0 * x - 1.0) / 3f64.sqrt());
            assert!(n.row(v).iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-15), "vertex {v}: {:?}", n.row(v));
        }
        assert_eq!(n, vertex_normals(m.topology(), &[], p.view(), Par::Seq));
        // Holes leave their faces out: with the bottom face a hole, vertex
        // 0's normal is the sum of its two side faces'.
        let mut holes = vec![false; 6];
        holes[0] = true;
        let h = vertex_normals(m.topology(), &holes, p.view(), Par::Seq);
        let s = 0.5f64.sqrt();
        assert!((h[[0, 0]] + s).abs() < 1e-15 && (h[[0, 1]] + s).abs() < 1e-15 && h[[0, 2]].abs() < 1e-15);
        // One quad, counter-clockwise seen from +z: its normal is +z, and
        // its area vector has its area as length.
        let q = MeshBuilder::new(4, vec![0, 4], vec![0, 1, 3, 2]).build(Par::Seq).unwrap();
        let qp = array![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [2.0, 3.0, 0.0]];
        assert_eq!(face_area_vector(q.topology(), qp.view(), 0), [0.0, 0.0, 6.0]);
        assert!(
            vertex_normals(q.topology(), &[], qp.view(), Par::Seq)
                .rows()
                .into_iter()
                .all(|r| r.to_vec() == [0.0, 0.0, 1.0])
        );
    }

    #[test]
    fn faces_without_area_give_zero_normals() {
        let m = MeshBuilder::new(3, vec![0, 3], vec![0, 1, 2]).build(Par::Seq).unwrap();
        let p = array![[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]];
        assert!(vertex_normals(m.topology(), &[], p.view(), Par::Seq).iter().all(|&x| x == 0.0));
    }
}
