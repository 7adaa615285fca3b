//! A watertight tessellation of the limit surface at a uniform rate: `rate`
//! segments along every control edge, so `rate × rate` quads on a quad's
//! ptex face and `rate/2 × rate/2` on each sub-face of a face that is not a
//! quad (whose ptex face spans half of each of its edges), `rate²`
//! triangles on each triangle of a Loop mesh; every point on
//! a boundary between ptex faces is evaluated once and shared; normals come
//! from the derivatives.
//!
//! # Shared points
//! A point is named by where it lies on the control mesh, so that both
//! ptex faces on either side of an edge name it the same:
//! ```text
//!   control vertex v          Vertex(v)
//!   on control edge (a < b)   Edge(a, b, k)  at k / (2 rate) from a
//!   on the spoke of n-gon f   Spoke(f, j, k) from the midpoint of f's
//!                             edge j towards its centre, k / (rate/2)
//!   centre of n-gon f         Centre(f)
//!   inside a ptex face        Inner(ptex, i, j)
//! ```

use std::collections::HashMap;

use ndarray::{Array2, ArrayView2};
use subla_algebra::Par;

use crate::AdaptiveError;
use crate::eval::Sample;
use crate::table::PatchTable;

/// A tessellation: quads (Catmull-Clark) or triangles (Loop),
/// counter-clockwise as the control faces, point positions (all channels of
/// the control data) and unit normals.
#[derive(Clone, Debug, PartialEq)]
pub struct Tessellation {
    /// Points per face: 4 (quads) or 3 (triangles).
    pub face_size: usize,
    /// `face_size` point indices per face.
    pub faces: Vec<u32>,
    /// One row per point.
    pub positions: Array2<f64>,
    /// Unit normal of each point (`du × dv` normalised; where that
    /// vanishes, the mean of the normals of the quads around the point).
    pub normals: Vec<[f64; 3]>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Vertex(u32),
    Edge(u32, u32, u32),
    Spoke(u32, u32, u32),
    Centre(u32),
    Inner(u32, u32, u32),
}

/// The control face a ptex face belongs to, and for a sub-face its corner.
struct PtexFace {
    face: u32,
    corner: Option<u32>,
}

impl PatchTable {
    /// Tessellates the limit surface of `control` (positions in the first
    /// three channels) at `rate` segments along each control edge. Holes are
    /// left out.
    ///
    /// # Errors
    /// [`AdaptiveError::OddRate`] for an odd `rate` on a mesh with faces
    /// other than quads; [`AdaptiveError::TooLarge`] past `u32` point indices.
    ///
    /// # Panics
    /// If `rate` is 0, or `control` does not have one row per control
    /// vertex and at least three channels.
    #[track_caller]
    pub fn tessellate(&self, control: ArrayView2<'_, f64>, rate: u32, par: Par) -> Result<Tessellation, AdaptiveError> {
        assert!(rate >= 1, "the tessellation rate must be at least 1");
        assert!(control.ncols() >= 3, "tessellation needs positions (3 channels), got {}", control.ncols());
        let mesh = self.refinement().levels()[0].mesh();
        let t = mesh.topology();
        let tri = self.refinement().scheme() == crate::Scheme::Loop;
        let mut ptex_faces = Vec::with_capacity(self.refinement().num_ptex_faces() as usize);
        for f in 0..t.num_faces() {
            let n = t.face_order(f) as u32;
            if n == 4 || tri {
                ptex_faces.push(PtexFace { face: f as u32, corner: None });
            } else {
                ptex_faces.extend((0..n).map(|j| PtexFace { face: f as u32, corner: Some(j) }));
            }
        }
        if rate % 2 == 1 && !tri && !t.is_quad_only() {
            return Err(AdaptiveError::OddRate { rate });
        }
        let mut index: HashMap<Key, u32> = HashMap::new();
        let mut samples: Vec<Sample> = Vec::new();
        let mut faces = Vec::new();
        let mut grid = vec![0u32; ((rate + 1) * (rate + 1)) as usize];
        for (p, pf) in ptex_faces.iter().enumerate() {
            let f = pf.face as usize;
            if mesh.holes()[f] {
                continue;
            }
            let fv = t.face(f);
            if tri {
                let r = rate;
                for j in 0..=r {
                    for i in 0..=r - j {
                        let key = tri_key(fv, p as u32, i, j, r);
                        let next = u32::try_from(samples.len())
                            .map_err(|_| AdaptiveError::TooLarge { what: "a tessellation" })?;
                        let id = *index.entry(key).or_insert_with(|| {
                            samples.push(Sample {
                                ptex: p as u32,
                                u: f64::from(i) / f64::from(r),
                                v: f64::from(j) / f64::from(r),
                            });
                            next
                        });
                        grid[(j * (r + 1) + i) as usize] = id;
                    }
                }
                let at = |a: u32, b: u32| grid[(b * (r + 1) + a) as usize];
                for j in 0..r {
                    for i in 0..r - j {
                        faces.extend([at(i, j), at(i + 1, j), at(i, j + 1)]);
                        if i + j + 1 < r {
                            faces.extend([at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                        }
                    }
                }
                continue;
            }
            let r = if pf.corner.is_some() { rate / 2 } else { rate };
            for j in 0..=r {
                for i in 0..=r {
                    let key = key_of(pf, fv, p as u32, i, j, rate);
                    let next =
                        u32::try_from(samples.len()).map_err(|_| AdaptiveError::TooLarge { what: "a tessellation" })?;
                    let id = *index.entry(key).or_insert_with(|| {
                        samples.push(Sample {
                            ptex: p as u32,
                            u: f64::from(i) / f64::from(r),
                            v: f64::from(j) / f64::from(r),
                        });
                        next
                    });
                    grid[(j * (r + 1) + i) as usize] = id;
                }
            }
            for j in 0..r {
                for i in 0..r {
                    let at = |a: u32, b: u32| grid[(b * (r + 1) + a) as usize];
                    faces.extend([at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                }
            }
        }
        let limit = self.evaluate(control, &samples, par)?;
        let mut normals: Vec<[f64; 3]> = (0..samples.len())
            .map(|k| {
                let (du, dv) = (limit.du.row(k), limit.dv.row(k));
                let c = [du[1] * dv[2] - du[2] * dv[1], du[2] * dv[0] - du[0] * dv[2], du[0] * dv[1] - du[1] * dv[0]];
                let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
                let scale = du.iter().chain(dv.iter()).take(6).fold(0f64, |m, x| m.max(x.abs()));
                if len > 1e-12 * scale * scale && len.is_finite() {
                    [c[0] / len, c[1] / len, c[2] / len]
                } else {
                    [0.0; 3]
                }
            })
            .collect();
        // Degenerate derivatives (a singular point of the parameterisation):
        // the mean of the normals of the quads around.
        let mut acc = vec![[0.0f64; 3]; samples.len()];
        let pos = &limit.position;
        let face_size = if tri { 3 } else { 4 };
        for q in faces.chunks(face_size) {
            let p = |k: usize| [pos[[q[k] as usize, 0]], pos[[q[k] as usize, 1]], pos[[q[k] as usize, 2]]];
            // The cross product of the diagonals (a quad) or of two edges (a triangle).
            let (a, b, c, d) = if tri { (p(0), p(0), p(1), p(2)) } else { (p(0), p(1), p(2), p(3)) };
            let e = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
            let g = [d[0] - b[0], d[1] - b[1], d[2] - b[2]];
            let nrm = [e[1] * g[2] - e[2] * g[1], e[2] * g[0] - e[0] * g[2], e[0] * g[1] - e[1] * g[0]];
            for &k in q {
                for c in 0..3 {
                    acc[k as usize][c] += nrm[c];
                }
            }
        }
        for (n, a) in normals.iter_mut().zip(&acc) {
            if *n == [0.0; 3] {
                let len = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
                if len > 0.0 {
                    *n = [a[0] / len, a[1] / len, a[2] / len];
                }
            }
        }
        Ok(Tessellation { face_size, faces, positions: limit.position, normals })
    }
}

/// The name of the point `k` half-steps from `a` on the control edge from
/// `a` to `b`, at `rate` segments per edge (`2 rate` half-steps): the same
/// from either end.
fn edge_key(a: u32, b: u32, k: u32, rate: u32) -> Key {
    if k == 0 {
        Key::Vertex(a)
    } else if k == 2 * rate {
        Key::Vertex(b)
    } else if a < b {
        Key::Edge(a, b, k)
    } else {
        Key::Edge(b, a, 2 * rate - k)
    }
}

/// The name of point `(i, j)` (`i + j <= r`) of the triangle ptex face `p`
/// with corners `fv` at `(0, 0)`, `(1, 0)` and `(0, 1)`.
fn tri_key(fv: &[u32], p: u32, i: u32, j: u32, r: u32) -> Key {
    let on_edge = |a: u32, b: u32, k: u32| edge_key(a, b, k, r);
    if j == 0 {
        on_edge(fv[0], fv[1], 2 * i)
    } else if i + j == r {
        on_edge(fv[1], fv[2], 2 * j)
    } else if i == 0 {
        on_edge(fv[2], fv[0], 2 * (r - j))
    } else {
        Key::Inner(p, i, j)
    }
}

/// The name of grid point `(i, j)` of ptex face `p` (see the module docs),
/// at `rate` segments per control edge.
fn key_of(pf: &PtexFace, fv: &[u32], p: u32, i: u32, j: u32, rate: u32) -> Key {
    let (n, r) = (fv.len(), rate);
    // A point on the control edge from `a` to `b`, `k` half-steps from `a`.
    let on_edge = |a: u32, b: u32, k: u32| edge_key(a, b, k, r);
    match pf.corner {
        None => {
            // Quad: corners 0..3 at (0,0), (1,0), (1,1), (0,1).
            if j == 0 {
                on_edge(fv[0], fv[1], 2 * i)
            } else if i == r {
                on_edge(fv[1], fv[2], 2 * j)
            } else if j == r {
                on_edge(fv[2], fv[3], 2 * (r - i))
            } else if i == 0 {
                on_edge(fv[3], fv[0], 2 * (r - j))
            } else {
                Key::Inner(p, i, j)
            }
        }
        Some(c) => {
            // Sub-face c: corner vertex at (0,0), u towards the midpoint of
            // edge c, v towards the midpoint of edge c-1, the centre at (1,1).
            let c = c as usize;
            let (vc, vn, vp) = (fv[c], fv[(c + 1) % n], fv[(c + n - 1) % n]);
            let (f, s) = (pf.face, r / 2);
            if j == 0 {
                on_edge(vc, vn, 2 * i)
            } else if i == 0 {
                on_edge(vc, vp, 2 * j)
            } else if i == s && j == s {
                Key::Centre(f)
            } else if i == s {
                // Spoke c, from the midpoint of edge c (j = 0) to the centre.
                Key::Spoke(f, c as u32, j)
            } else if j == s {
                // Spoke c-1, from the midpoint of edge c-1 (i = 0) to the centre.
                Key::Spoke(f, ((c + n - 1) % n) as u32, i)
            } else {
                Key::Inner(p, i, j)
            }
        }
    }
}
