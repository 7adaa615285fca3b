//! Normals of the limit surface at the vertices of a refined mesh, from the
//! limit tangent masks of Catmull-Clark and Loop.
//!
//! At a vertex of a refined mesh the limit surface has two tangents that
//! are linear in the vertex's 1-ring (OpenSubdiv's `Sdc::Scheme` limit
//! tangent masks; Halstead, Kass & DeRose 1993 for smooth Catmull-Clark
//! vertices, Biermann, Levin & Zorin 2000 for creases and boundaries, Loop
//! 1987 with the same boundary rules). The normal is `t₁ × t₂`, normalised.
//! The ring is taken counter-clockwise about the outward normal (the faces'
//! orientation): edge `i` leaves the vertex, face `i` lies between edges `i`
//! and `i + 1`, and for Catmull-Clark quads the *face point* of face `i` is
//! its corner opposite the vertex.
//!
//! | vertex | `t₁` | `t₂` |
//! |---|---|---|
//! | smooth or dart, Catmull-Clark, valence `n` | `Σ 4 cos(iθ) eᵢ + Σ (cos iθ + cos (i+1)θ) fᵢ / (4λ − 1)`, `θ = 2π/n`, `λ` the subdominant eigenvalue | `t₁` turned one edge on |
//! | smooth or dart, Loop | `Σ cos(iθ) eᵢ` | `Σ sin(iθ) eᵢ` |
//! | crease (two sharp edges `a < b`; boundaries: the two boundary edges) | along the crease: `e_a − e_b` (scaled) | across the faces from `a` to `b`: the regular B-spline cross tangent, or Biermann et al.'s for other counts |
//! | corner (a corner tag, more than two sharp edges, or a boundary vertex of one face under edge-and-corner boundaries) | `e₀ − v` | `e₁ − v` |
//!
//! (`eᵢ` the other end of edge `i`, `fᵢ` the face point of face `i`, `v`
//! the vertex.) An edge counts as sharp where its sharpness is above zero
//! or it is a boundary edge. A vertex the masks do not cover — not
//! manifold, a face of another order in its ring (Catmull-Clark before its
//! first level, a Loop mesh with other polygons), or tangents that vanish
//! — gets the area-weighted normal of its faces instead
//! ([`subla_mesh::normals`]).
//!
//! The masks hold for a vertex of a uniformly refined mesh whose remaining
//! sharpness is read as it is (a semi-sharp edge counts as sharp), as
//! OpenSubdiv's limit stencils do at the finest level.

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use subla_algebra::Par;
use subla_mesh::normals::vertex_normal as faces_normal;
use subla_mesh::{BoundaryInterpolation, Mesh};

use crate::fvar::Ring;

/// Which scheme's limit tangent masks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TangentRules {
    /// Catmull-Clark (every face of a vertex's ring a quad).
    Catmark,
    /// Loop (every face of a vertex's ring a triangle).
    Loop,
}

type V3 = [f64; 3];

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn unit(n: V3) -> Option<V3> {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    (len > 0.0 && len.is_finite()).then(|| n.map(|x| x / len))
}

/// A tangent mask over the ring: weights of the vertex, of each edge's
/// other end and of each face's point.
struct Mask {
    vertex: f64,
    edges: Vec<f64>,
    faces: Vec<f64>,
}

impl Mask {
    fn zero(edges: usize, faces: usize) -> Mask {
        Mask { vertex: 0.0, edges: vec![0.0; edges], faces: vec![0.0; faces] }
    }

    fn apply(&self, p: V3, e: &[V3], f: &[V3]) -> V3 {
        let mut t = p.map(|x| x * self.vertex);
        for (w, q) in self.edges.iter().zip(e).chain(self.faces.iter().zip(f)) {
            for k in 0..3 {
                t[k] += w * q[k];
            }
        }
        t
    }
}

/// The limit normal of every vertex of `mesh` (one row per vertex) from
/// `positions` (at least x, y, z per vertex), by `rules`' tangent masks
/// (see the [module docs](self)). Bitwise the same for every [`Par`].
///
/// # Panics
/// If `positions` has not one row per vertex or fewer than three channels.
#[track_caller]
pub fn limit_normals(mesh: &Mesh, positions: ArrayView2<'_, f64>, rules: TangentRules, par: Par) -> Array2<f64> {
    let t = mesh.topology();
    assert!(
        positions.nrows() == t.num_vertices() && positions.ncols() >= 3,
        "limit_normals: positions are {:?}, the mesh has {} vertices (x, y, z needed)",
        positions.dim(),
        t.num_vertices()
    );
    let one = |v: usize| -> V3 {
        vertex_normal(mesh, positions, rules, v)
            .unwrap_or_else(|| faces_normal(mesh.topology(), mesh.holes(), positions, v))
    };
    let rows: Vec<V3> = match par {
        Par::Seq => (0..t.num_vertices()).map(one).collect(),
        _ => (0..t.num_vertices()).into_par_iter().map(one).collect(),
    };
    let Ok(out) = Array2::from_shape_vec((rows.len(), 3), rows.into_iter().flatten().collect()) else {
        unreachable!("three values a vertex")
    };
    out
}

fn vertex_normal(mesh: &Mesh, positions: ArrayView2<'_, f64>, rules: TangentRules, v: usize) -> Option<V3> {
    let t = mesh.topology();
    let ring = Ring::of(t, v)?;
    let order = match rules {
        TangentRules::Catmark => 4,
        TangentRules::Loop => 3,
    };
    let cf = t.corner_faces();
    if ring.corners.iter().any(|&c| t.face_order(cf[c as usize] as usize) != order) {
        return None;
    }
    let point = |i: usize| -> V3 {
        let r = positions.row(i);
        [r[0], r[1], r[2]]
    };
    let n = ring.len();
    let other = |e: u32| {
        let [a, b] = t.edge(e as usize);
        if a as usize == v { b } else { a }
    };
    let e: Vec<V3> = ring.edges.iter().map(|&x| point(other(x) as usize)).collect();
    let f: Vec<V3> = match rules {
        TangentRules::Catmark => ring
            .corners
            .iter()
            .map(|&c| point(t.face_verts()[t.next_corner(t.next_corner(c as usize))] as usize))
            .collect(),
        TangentRules::Loop => Vec::new(),
    };
    // Sharp edges, in ring order.
    let sharp: Vec<usize> = ring
        .edges
        .iter()
        .enumerate()
        .filter(|&(_, &x)| mesh.edge_sharpness()[x as usize] > 0.0 || t.is_boundary_edge(x as usize))
        .map(|(i, _)| i)
        .collect();
    let corner_boundary = ring.boundary && n == 1 && mesh.options().boundary == BoundaryInterpolation::EdgeAndCorner;
    let (t1, t2) = if mesh.vertex_sharpness()[v] > 0.0 || sharp.len() > 2 || corner_boundary {
        corner(rules, ring.edges.len(), n)
    } else if sharp.len() == 2 {
        crease(rules, ring.edges.len(), n, [sharp[0], sharp[1]])
    } else if ring.boundary {
        // A boundary vertex always has its two boundary edges sharp.
        return None;
    } else {
        smooth(rules, n)
    };
    let p = point(v);
    unit(cross(t1.apply(p, &e, &f), t2.apply(p, &e, &f)))
}

fn corner(rules: TangentRules, edges: usize, faces: usize) -> (Mask, Mask) {
    let nf = if rules == TangentRules::Catmark { faces } else { 0 };
    let (mut a, mut b) = (Mask::zero(edges, nf), Mask::zero(edges, nf));
    a.vertex = -1.0;
    a.edges[0] = 1.0;
    b.vertex = -1.0;
    b.edges[1] = 1.0;
    (a, b)
}

fn crease(rules: TangentRules, edges: usize, faces: usize, ends: [usize; 2]) -> (Mask, Mask) {
    let nf = if rules == TangentRules::Catmark { faces } else { 0 };
    let (mut a, mut b) = (Mask::zero(edges, nf), Mask::zero(edges, nf));
    // Along the crease, towards the leading edge.
    a.edges[ends[0]] = 1.0;
    a.edges[ends[1]] = -1.0;
    // Across the faces from the leading to the trailing edge.
    let interior = ends[1] - ends[0] - 1;
    match rules {
        TangentRules::Catmark => match interior {
            0 => {
                b.vertex = -6.0;
                b.edges[ends[0]] = 3.0;
                b.edges[ends[1]] = 3.0;
            }
            1 => {
                b.vertex = -4.0 / 6.0;
                b.edges[ends[0]] = -1.0 / 6.0;
                b.edges[ends[0] + 1] = 4.0 / 6.0;
                b.edges[ends[1]] = -1.0 / 6.0;
                b.faces[ends[0]] = 1.0 / 6.0;
                b.faces[ends[0] + 1] = 1.0 / 6.0;
            }
            _ => {
                let k = (interior + 1) as f64;
                let theta = std::f64::consts::PI / k;
                let (c, s) = (theta.cos(), theta.sin());
                let denom = 1.0 / (k * (3.0 + c));
                let r = (c + 1.0) / s;
                b.vertex = 4.0 * r * (c - 1.0) * denom;
                b.edges[ends[0]] = -r * (1.0 + 2.0 * c) * denom;
                b.edges[ends[1]] = -r * (1.0 + 2.0 * c) * denom;
                b.faces[ends[0]] = s * denom;
                for i in 1..=interior {
                    let (si, si1) = ((i as f64 * theta).sin(), ((i + 1) as f64 * theta).sin());
                    b.edges[ends[0] + i] = 4.0 * si * denom;
                    b.faces[ends[0] + i] = (si + si1) * denom;
                }
            }
        },
        TangentRules::Loop => match interior {
            0 => {
                b.vertex = -6.0;
                b.edges[ends[0]] = 3.0;
                b.edges[ends[1]] = 3.0;
            }
            1 => {
                b.vertex = -3.0;
                b.edges[ends[0] + 1] = 3.0;
            }
            2 => {
                let r3 = 3f64.sqrt();
                b.vertex = -r3;
                b.edges[ends[0]] = -0.5 * r3;
                b.edges[ends[1]] = -0.5 * r3;
                b.edges[ends[0] + 1] = r3;
                b.edges[ends[0] + 2] = r3;
            }
            _ => {
                let theta = std::f64::consts::PI / (interior + 1) as f64;
                b.edges[ends[0]] = -3.0 * theta.sin();
                b.edges[ends[1]] = -3.0 * theta.sin();
                let e = -6.0 * (theta.cos() - 1.0);
                for i in 1..=interior {
                    b.edges[ends[0] + i] = e * (i as f64 * theta).sin();
                }
            }
        },
    }
    (a, b)
}

fn smooth(rules: TangentRules, n: usize) -> (Mask, Mask) {
    let theta = 2.0 * std::f64::consts::PI / n as f64;
    match rules {
        TangentRules::Catmark => {
            if n == 2 {
                return corner(rules, 2, 2);
            }
            let (c, ch) = (theta.cos(), (0.5 * theta).cos());
            let lambda = 5.0 / 16.0 + (c + ch * (2.0 * (9.0 + c)).sqrt()) / 16.0;
            let fscale = 1.0 / (4.0 * lambda - 1.0);
            let mut a = Mask::zero(n, n);
            for i in 0..n {
                let (ci, ci1) = ((i as f64 * theta).cos(), ((i + 1) as f64 * theta).cos());
                a.edges[i] = 4.0 * ci;
                a.faces[i] = fscale * (ci + ci1);
            }
            // The second tangent: the first turned by one edge.
            let mut b = Mask::zero(n, n);
            for i in 0..n {
                b.edges[(i + 1) % n] = a.edges[i];
                b.faces[(i + 1) % n] = a.faces[i];
            }
            (a, b)
        }
        TangentRules::Loop => {
            let (mut a, mut b) = (Mask::zero(n, 0), Mask::zero(n, 0));
            for i in 0..n {
                a.edges[i] = (i as f64 * theta).cos();
                b.edges[i] = (i as f64 * theta).sin();
            }
            (a, b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use subla_mesh::MeshBuilder;

    /// A grid of `n × n` quads in the plane z = 0 (counter-clockwise seen
    /// from +z), with its vertices lifted by `h`.
    fn grid(n: usize, h: impl Fn(f64, f64) -> f64) -> (Mesh, Array2<f64>) {
        let m = n + 1;
        let mut verts = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let v = (j * m + i) as u32;
                verts.extend([v, v + 1, v + m as u32 + 1, v + m as u32]);
            }
        }
        let mesh = MeshBuilder::new(m * m, (0..=n * n).map(|f| 4 * f as u32).collect(), verts).build(Par::Seq).unwrap();
        let p = Array2::from_shape_fn((m * m, 3), |(v, k)| {
            let (x, y) = ((v % m) as f64, (v / m) as f64);
            [x, y, h(x, y)][k]
        });
        (mesh, p)
    }

    #[test]
    fn a_flat_grid_has_the_plane_normal_everywhere() {
        let (mesh, p) = grid(4, |_, _| 0.0);
        let n = limit_normals(&mesh, p.view(), TangentRules::Catmark, Par::Rayon);
        for v in 0..n.nrows() {
            assert!(
                n.row(v).iter().zip([0.0, 0.0, 1.0]).all(|(a, b)| (a - b).abs() < 1e-14),
                "vertex {v}: {}",
                n.row(v)
            );
        }
        assert_eq!(n, limit_normals(&mesh, p.view(), TangentRules::Catmark, Par::Seq));
    }

    /// On a regular grid the limit surface is a bicubic B-spline: lifting
    /// the grid by a quadratic `h` (reproduced exactly), the limit normal at
    /// an interior vertex is that of the limit surface `z = h(x, y) + c`,
    /// `(−h_x, −h_y, 1)` normalised, with the derivatives of `h`.
    #[test]
    fn regular_vertices_have_the_normal_of_the_bicubic_limit() {
        let h = |x: f64, y: f64| 0.1 * x * x - 0.05 * x * y + 0.02 * y * y;
        let (mesh, p) = grid(6, h);
        let n = limit_normals(&mesh, p.view(), TangentRules::Catmark, Par::Seq);
        for v in 0..n.nrows() {
            let (x, y) = ((v % 7) as f64, (v / 7) as f64);
            if x < 1.0 || y < 1.0 || x > 5.0 || y > 5.0 {
                continue;
            }
            let want = unit([-(0.2 * x - 0.05 * y), -(-0.05 * x + 0.04 * y), 1.0]).unwrap();
            assert!(
                n.row(v).iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
                "vertex {v}: {} vs {want:?}",
                n.row(v)
            );
        }
    }
}
