//! The local model of a Catmull-Clark surface round one vertex `EV`: a fan
//! of `n` quarter grids ("sectors"), closed round an interior vertex
//! (Stam's patch, [`crate::stam`]) or open between two boundary rays (the
//! patch next to a smooth boundary vertex, [`crate::corner`]), with the
//! child stencils of one subdivision step and the extended subdivision
//! matrix of the patch on one sector.
//!
//! Sector `k` is the quad `(EV, E_k, D_k, E_{k+1})`; its points are `(a, b)`
//! with `a ≥ 1`, `b ≥ 0`, `a` along `E_k` and `b` along `E_{k+1}`, and its
//! `(0, b)` is sector `k + 1`'s `(b, 0)`. Points with a negative coordinate
//! continue the grid into the neighbouring sectors: `(a, −b)` is sector
//! `k − 1`'s `(b, a)`, `(−a, b)` sector `k + 1`'s `(b, a)`. In an open fan
//! the rays `E_0 …` and `E_n …` are the boundary (sector `n` holds only its
//! ray).

use nalgebra::{DMatrix, RowDVector};

/// A fan of `n` sectors, closed (round an interior vertex) or open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fan {
    pub(crate) n: usize,
    pub(crate) closed: bool,
}

/// A point of the local mesh: `EV`, or point `(a, b)` of sector `k` with
/// `a ≥ 1`, `b ≥ 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Label {
    Ev,
    At { k: usize, a: i64, b: i64 },
}

/// The 7 outer control points of a sector's patch, relative to the sector.
pub(crate) const OUTER: [(i64, i64); 7] = [(2, -1), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2), (-1, 2)];
/// The 9 further child points of `Ā`, in child grid coordinates.
pub(crate) const EXTRA: [(i64, i64); 9] = [(3, -1), (3, 0), (3, 1), (3, 2), (3, 3), (2, 3), (1, 3), (0, 3), (-1, 3)];
/// The lowest corner of sub-patch `k = 1, 2, 3`'s 4 × 4 grid.
const SUB_ORIGIN: [(i64, i64); 3] = [(0, -1), (0, 0), (-1, 0)];

type Stencil = Vec<(Label, f64)>;

impl Fan {
    fn next(self, k: usize) -> usize {
        if self.closed { (k + 1) % self.n } else { k + 1 }
    }

    fn prev(self, k: usize) -> Option<usize> {
        if self.closed { Some((k + self.n - 1) % self.n) } else { k.checked_sub(1) }
    }

    /// The point at `(a, b)` relative to sector `k`; `None` where there is
    /// none (both coordinates negative, or beyond an open fan's rays).
    pub(crate) fn label(self, k: usize, a: i64, b: i64) -> Option<Label> {
        let (k, a, b) = match (a < 0, b < 0) {
            (false, false) => (k, a, b),
            (false, true) => (self.prev(k)?, -b, a),
            (true, false) => (self.next(k), b, -a),
            (true, true) => return None,
        };
        let l = match (a, b) {
            (0, 0) => Label::Ev,
            (0, b) => Label::At { k: self.next(k), a: b, b: 0 },
            (a, b) => Label::At { k, a, b },
        };
        match l {
            Label::At { k, b, .. } if !self.closed && (k > self.n || (k == self.n && b != 0)) => None,
            l => Some(l),
        }
    }

    /// Whether `l` is on an open fan's boundary (`EV` and the two rays).
    pub(crate) fn on_boundary(self, l: Label) -> bool {
        !self.closed
            && match l {
                Label::Ev => true,
                Label::At { k, b, .. } => b == 0 && (k == 0 || k == self.n),
            }
    }

    /// The control points of sector `j`'s patch in their order — `EV`, then
    /// `E_k` and `D_k` for each sector, an open fan's `E_n`, then the outer
    /// points there are — and their number; then the extra child points
    /// there are.
    pub(crate) fn labels(self, j: usize) -> (Vec<Label>, usize) {
        let mut l = vec![Label::Ev];
        for k in 0..self.n {
            l.push(Label::At { k, a: 1, b: 0 });
            l.push(Label::At { k, a: 1, b: 1 });
        }
        if !self.closed {
            l.push(Label::At { k: self.n, a: 1, b: 0 });
        }
        l.extend(OUTER.iter().filter_map(|&(a, b)| self.label(j, a, b)));
        let len = l.len();
        l.extend(EXTRA.iter().filter_map(|&(a, b)| self.label(j, a, b)));
        (l, len)
    }

    fn add_face(self, k: usize, a: i64, b: i64, w: f64, s: &mut Stencil) -> Option<()> {
        for (da, db) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
            s.push((self.label(k, a + da, b + db)?, w / 4.0));
        }
        Some(())
    }

    /// Catmull-Clark's vertex point of `v` off the boundary: valence `m`
    /// (`n` at `EV`, 4 elsewhere), `(m − 3)/m v + 2/m R + 1/m Q` with `R`
    /// the average of its edges' midpoints and `Q` of its faces' centroids.
    fn add_vertex_point(self, v: Label, s: &mut Stencil) -> Option<()> {
        let mut neighbours = Vec::with_capacity(self.n.max(4));
        let mut faces = Vec::with_capacity(self.n.max(4));
        match v {
            Label::Ev => {
                for k in 0..self.n {
                    neighbours.push(Label::At { k, a: 1, b: 0 });
                    faces.push((k, 0, 0));
                }
            }
            Label::At { k, a, b } => {
                for (da, db) in [(1, 0), (0, 1), (-1, 0), (0, -1)] {
                    neighbours.push(self.label(k, a + da, b + db)?);
                }
                for (da, db) in [(0, 0), (-1, 0), (-1, -1), (0, -1)] {
                    faces.push((k, a + da, b + db));
                }
            }
        }
        let m = neighbours.len() as f64;
        // v: (m − 3)/m, and 1/m from the v halves of R's midpoints; each
        // neighbour 1/m² (its midpoint's other half); each face centroid 1/m².
        s.push((v, (m - 3.0) / m + 1.0 / m));
        for e in neighbours {
            s.push((e, 1.0 / (m * m)));
        }
        for (k, a, b) in faces {
            self.add_face(k, a, b, 1.0 / (m * m), s)?;
        }
        Some(())
    }

    /// The stencil over parent points of child point `c` (named in the
    /// child's grid, where parent point `(a, b)` is child point `(2a, 2b)`).
    /// On an open fan's boundary, the cubic B-spline curve's rules: edge
    /// points are midpoints, vertex points `(p + 6v + q)/8` over the two
    /// boundary neighbours (at `EV`: `E_0` and `E_n`, the curve turning
    /// round it without a crease).
    pub(crate) fn child_stencil(self, c: Label) -> Option<Stencil> {
        let mut s = Vec::new();
        let curve = |s: &mut Stencil, p: Label, v: Label, q: Label| {
            s.extend([(p, 0.125), (v, 0.75), (q, 0.125)]);
        };
        let (k, a, b) = match c {
            Label::Ev if self.closed => {
                self.add_vertex_point(Label::Ev, &mut s)?;
                return Some(s);
            }
            Label::Ev => {
                curve(&mut s, Label::At { k: 0, a: 1, b: 0 }, Label::Ev, Label::At { k: self.n, a: 1, b: 0 });
                return Some(s);
            }
            Label::At { k, a, b } => (k, a, b),
        };
        match (a % 2, b % 2) {
            (0, 0) => {
                let v = Label::At { k, a: a / 2, b: b / 2 };
                if self.on_boundary(v) {
                    let (p, q) = (self.label(k, a / 2 - 1, 0)?, Label::At { k, a: a / 2 + 1, b: 0 });
                    curve(&mut s, p, v, q);
                } else {
                    self.add_vertex_point(v, &mut s)?;
                }
            }
            (1, 0) => {
                // The edge (a0, b0)–(a0 + 1, b0) along `a`; its faces lie at
                // b0 and b0 − 1 (the latter in sector k − 1 where b0 = 0).
                let (a0, b0) = ((a - 1) / 2, b / 2);
                let boundary = self.on_boundary(Label::At { k, a: a0 + 1, b: b0 });
                let w = if boundary { 0.5 } else { 0.25 };
                s.push((self.label(k, a0, b0)?, w));
                s.push((self.label(k, a0 + 1, b0)?, w));
                if !boundary {
                    self.add_face(k, a0, b0, 0.25, &mut s)?;
                    self.add_face(k, a0, b0 - 1, 0.25, &mut s)?;
                }
            }
            (0, 1) => {
                // The edge (a0, b0)–(a0, b0 + 1) along `b`, inside the sector.
                let (a0, b0) = (a / 2, (b - 1) / 2);
                s.push((self.label(k, a0, b0)?, 0.25));
                s.push((self.label(k, a0, b0 + 1)?, 0.25));
                self.add_face(k, a0, b0, 0.25, &mut s)?;
                self.add_face(k, a0 - 1, b0, 0.25, &mut s)?;
            }
            _ => self.add_face(k, (a - 1) / 2, (b - 1) / 2, 1.0, &mut s)?,
        }
        Some(s)
    }

    /// The extended subdivision matrix `Ā` of sector `j`'s patch (its first
    /// rows, as many as the control points, are `A`), and `P_k Ā` (16 ×
    /// control points) of the three sub-patches away from `EV`: a grid row
    /// beyond an open fan's boundary ray is the phantom `2P₀ − P₁`. `None`
    /// where a stencil reaches outside the control points.
    pub(crate) fn extended(self, j: usize) -> Option<(DMatrix<f64>, [DMatrix<f64>; 3])> {
        let (l, len) = self.labels(j);
        let mut ext = DMatrix::zeros(l.len(), len);
        for (r, &c) in l.iter().enumerate() {
            for (p, w) in self.child_stencil(c)? {
                let col = l[..len].iter().position(|&q| q == p)?;
                ext[(r, col)] += w;
            }
        }
        let row = |a: i64, b: i64| -> Option<RowDVector<f64>> {
            let p = self.label(j, a, b)?;
            Some(ext.row(l.iter().position(|&q| q == p)?).into_owned())
        };
        let mut picked = [DMatrix::zeros(16, len), DMatrix::zeros(16, len), DMatrix::zeros(16, len)];
        for (sub, &(a0, b0)) in SUB_ORIGIN.iter().enumerate() {
            for r in 0..16 {
                let (x, y) = (a0 + (r % 4) as i64, b0 + (r / 4) as i64);
                let v = match row(x, y) {
                    Some(v) => v,
                    None if y == -1 => row(x, 0)? * 2.0 - row(x, 1)?,
                    None if x == -1 => row(0, y)? * 2.0 - row(1, y)?,
                    None => return None,
                };
                picked[sub].set_row(r, &v);
            }
        }
        Some((ext, picked))
    }
}

/// The mesh of `fan` with `r × r` quads per sector (boundary edges
/// infinitely sharp, the default), and the index of each local point by
/// `(sector, a, b)`, `EV` as `(0, 0, 0)`, numbered in the order the faces
/// first use them (so `EV` is vertex 0). For the independent checks of the
/// patches.
#[cfg(test)]
pub(crate) fn fan_mesh(fan: Fan, r: i64) -> (subla_mesh::Mesh, std::collections::HashMap<(usize, i64, i64), u32>) {
    let key = |l: Label| match l {
        Label::Ev => (0, 0, 0),
        Label::At { k, a, b } => (k, a, b),
    };
    let mut index = std::collections::HashMap::new();
    let mut faces = Vec::new();
    for k in 0..fan.n {
        for a in 0..r {
            for b in 0..r {
                let face: Vec<u32> = [(0, 0), (1, 0), (1, 1), (0, 1)]
                    .iter()
                    .map(|&(da, db)| {
                        let next = index.len() as u32;
                        *index.entry(key(fan.label(k, a + da, b + db).unwrap())).or_insert(next)
                    })
                    .collect();
                faces.push(face);
            }
        }
    }
    (subla_mesh::Mesh::from_faces(index.len(), &faces).unwrap(), index)
}

/// The vertices of `plan`'s finest level over the control quad `quad`
/// (its corners at `(0, 0) (1, 0) (1, 1) (0, 1)`), by their grid
/// coordinates `(i, j)`, `0 ≤ i, j ≤ 2^levels`: parent vertices keep their
/// index, then come face points and edge points (the uniform schemes'
/// numbering). For the independent checks of the patches.
#[cfg(test)]
pub(crate) fn refined_quad(
    plan: &dyn subla_scheme::Plan,
    levels: u32,
    quad: [u32; 4],
) -> std::collections::HashMap<(u32, u32), u32> {
    use std::collections::HashMap;
    let mut grid: HashMap<(u32, u32), u32> =
        HashMap::from([((0, 0), quad[0]), ((1, 0), quad[1]), ((1, 1), quad[2]), ((0, 1), quad[3])]);
    for level in 0..levels {
        let t = plan.refined(level, subla_algebra::Par::Seq).unwrap().topology();
        let (nv, nf) = (t.num_vertices() as u32, t.num_faces() as u32);
        let side = 1u32 << level;
        let mut next = HashMap::new();
        for i in 0..=side {
            for j in 0..=side {
                let v = grid[&(i, j)];
                next.insert((2 * i, 2 * j), v);
                if i < side {
                    next.insert((2 * i + 1, 2 * j), nv + nf + t.find_edge(v, grid[&(i + 1, j)]).unwrap());
                }
                if j < side {
                    next.insert((2 * i, 2 * j + 1), nv + nf + t.find_edge(v, grid[&(i, j + 1)]).unwrap());
                }
                if i < side && j < side {
                    let mut corners = [v, grid[&(i + 1, j)], grid[&(i + 1, j + 1)], grid[&(i, j + 1)]];
                    corners.sort_unstable();
                    let f = (0..t.num_faces())
                        .find(|&f| {
                            let mut q = t.face(f).to_vec();
                            q.sort_unstable();
                            q == corners
                        })
                        .unwrap();
                    next.insert((2 * i + 1, 2 * j + 1), nv + f as u32);
                }
            }
        }
        grid = next;
    }
    assert_eq!(grid.len(), ((1usize << levels) + 1).pow(2));
    grid
}
