//! Exact evaluation of a Catmull-Clark surface patch at a smooth boundary
//! corner: the one face at a boundary vertex of valence 2 whose boundary
//! curve runs smoothly round it (no corner tag), as weights over the
//! patch's nine control points, with both first derivatives.
//!
//! This is the cross-section of a solid's cell at an untagged boundary edge
//! of one cell (a box's edge): there, the boundary surface refines by
//! Catmull-Clark's surface rules, regular along the edge, and the solid
//! refines as this patch times the cubic B-spline along the edge (the
//! derivation is in `docs/solids.md`).
//!
//! # Control points
//! The quarter plane `{(a, b) : a, b ≥ 0}` of a quad grid whose two
//! half-lines `a = 0` and `b = 0` are the boundary; the patch is the limit
//! surface over the quad `[0, 1]²`, parametrised by `(s, t)` with the
//! corner at `(0, 0)`. Its control points are the nine `(a, b)` with `a, b
//! ≤ 2`, point `a + 3b`.
//!
//! # Rules
//! Inside, Catmull-Clark's (regular: the bicubic B-spline's). On the
//! boundary, the cubic B-spline curve's: an edge point is the edge's
//! midpoint, a vertex point `(p + 6v + q)/8` with `p`, `q` its two boundary
//! neighbours; at the corner these are `(0, 1)` and `(1, 0)`, the curve
//! turning round it without a crease.
//!
//! # Subdivision matrix and sub-patches
//! The child points `(a, b)` with `a, b ≤ 2` (child grid) depend on the
//! parent's nine only: `A` (9 × 9). With the child points `(3, 0…3)` and
//! `(0…2, 3)`, `Ā` (16 × 9, the child grid `(0…3)²`) holds the grids of
//! the three sub-patches of `[0, 1]²` that do not touch the corner, each
//! a bicubic B-spline: `k = 1` over `[½, 1] × [0, ½]` on the child grid
//! `(0…3) × (−1…2)`, whose row `b = −1` is the phantom `2P(a, 0) − P(a,
//! 1)` (a boundary curve refined by the curve rule is the B-spline's end
//! condition, and the corner's own rule is never read there); `k = 2` over
//! `[½, 1]²` on `(0…3)²`; `k = 3` over `[0, ½] × [½, 1]` with the phantom
//! column `a = −1`. `P_k` (16 × 16) picks sub-patch `k`'s grid from `Ā`'s
//! rows, phantoms included.
//!
//! # Evaluation
//! As [`StamPatch`](crate::stam::StamPatch)'s: for `(s, t) ≠ (0, 0)` the
//! level `m` with `2^{−m} ≤ max(s, t) < 2^{1−m}` picks sub-patch `k` of
//! `(s', t') = 2^{m−1}(s, t)`, and
//!
//! ```text
//! φ(s, t) = b(u, v)ᵀ P_k Ā A^{m−1}          ∂φ/∂s = 2^m ∂b/∂u(u, v)ᵀ P_k Ā A^{m−1}
//! ```
//!
//! The powers are kept as tables of `(P_k Ā − 1ℓ) A^{m−1}` for `m ≤ 64`
//! (deflated by the limit mask `ℓ`, the left eigenvector of eigenvalue 1,
//! so that the entries decay and the derivatives' `2^m` does not magnify
//! the rounding of `ℓ`), further products by `A` below them: `A` is not
//! diagonalisable. Its eigenvalues are `1, ½, ¼, ¼, ⅛, ⅛, 1/16, 1/16,
//! 1/64`, and `¼` has a Jordan block of size 2 (a numerical eigensolver
//! splits it by about `1e−9`, the square root of the rounding). The
//! subdominant `½` is simple (the boundary curve's tangent), and the next
//! terms decay as `m 4^{−m}`: the parametric derivatives stay bounded.
//!
//! # At the corner
//! The boundary curves `t = 0` and `s = 0` are one cubic B-spline curve
//! through `…, (2, 0), (1, 0), (0, 0), (0, 1), (0, 2), …` (the boundary
//! refines by itself), so the limit position at `(0, 0)` is the curve's,
//! `((1, 0) + 4(0, 0) + (0, 1))/6`, and the derivatives there are the
//! curve's along each boundary: `∂/∂s = ((1, 0) − (0, 1))/2 = −∂/∂t`. The
//! two are parallel: the parametrisation is singular at the corner (the
//! limit surface's tangent plane there is spanned by the curve's tangent
//! and the limit of the cross-boundary direction, which the patch's
//! first-order terms do not reach).

use std::sync::OnceLock;

use nalgebra::DMatrix;

use crate::stam::{dot3, level, pow2, scale_up, tensor_basis};

/// The number of control points.
pub const LEN: usize = 9;

/// Levels kept as tables.
const POWER_LEVELS: u32 = 64;

/// The index of parent point `(a, b)`, `a, b ≤ 2`.
fn index(a: i64, b: i64) -> usize {
    debug_assert!((0..3).contains(&a) && (0..3).contains(&b));
    (a + 3 * b) as usize
}

/// The stencil of child point `(a, b)` (child grid, `0 ≤ a, b ≤ 3`) over
/// the nine parent points.
fn child_stencil(a: i64, b: i64) -> [f64; LEN] {
    let mut s = [0.0; LEN];
    let mut add = |a: i64, b: i64, w: f64| s[index(a, b)] += w;
    let face = |add: &mut dyn FnMut(i64, i64, f64), a: i64, b: i64, w: f64| {
        for (da, db) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
            add(a + da, b + db, w / 4.0);
        }
    };
    match (a % 2, b % 2) {
        (0, 0) => {
            let (a, b) = (a / 2, b / 2);
            match (a, b) {
                (0, 0) => {
                    add(0, 1, 0.125);
                    add(0, 0, 0.75);
                    add(1, 0, 0.125);
                }
                (0, b) => {
                    add(0, b - 1, 0.125);
                    add(0, b, 0.75);
                    add(0, b + 1, 0.125);
                }
                (a, 0) => {
                    add(a - 1, 0, 0.125);
                    add(a, 0, 0.75);
                    add(a + 1, 0, 0.125);
                }
                (a, b) => {
                    // Valence 4: v/2 + Σ neighbours/16 + Σ face centroids/16.
                    add(a, b, 0.5);
                    for (da, db) in [(1, 0), (0, 1), (-1, 0), (0, -1)] {
                        add(a + da, b + db, 1.0 / 16.0);
                    }
                    for (da, db) in [(0, 0), (-1, 0), (-1, -1), (0, -1)] {
                        face(&mut add, a + da, b + db, 1.0 / 16.0);
                    }
                }
            }
        }
        (1, 0) => {
            // The edge (a0, b0)–(a0 + 1, b0) along `a`.
            let (a0, b0) = ((a - 1) / 2, b / 2);
            if b0 == 0 {
                add(a0, 0, 0.5);
                add(a0 + 1, 0, 0.5);
            } else {
                add(a0, b0, 0.25);
                add(a0 + 1, b0, 0.25);
                face(&mut add, a0, b0, 0.25);
                face(&mut add, a0, b0 - 1, 0.25);
            }
        }
        (0, 1) => {
            let (a0, b0) = (a / 2, (b - 1) / 2);
            if a0 == 0 {
                add(0, b0, 0.5);
                add(0, b0 + 1, 0.5);
            } else {
                add(a0, b0, 0.25);
                add(a0, b0 + 1, 0.25);
                face(&mut add, a0, b0, 0.25);
                face(&mut add, a0 - 1, b0, 0.25);
            }
        }
        _ => face(&mut add, (a - 1) / 2, (b - 1) / 2, 1.0),
    }
    s
}

/// The patch at a smooth boundary corner (see the [module docs](self)).
#[derive(Debug)]
pub struct CornerPatch {
    /// `A` (9 × 9).
    a: DMatrix<f64>,
    /// `P_k Ā` (16 × 9) of each sub-patch.
    picked: [DMatrix<f64>; 3],
    /// `tables[k][m − 2] = (P_k Ā − 1ℓ) A^{m−1}`, `m = 2 ..= POWER_LEVELS`.
    tables: [Vec<DMatrix<f64>>; 3],
    limit: [f64; LEN],
    tangents: [[f64; LEN]; 2],
}

static PATCH: OnceLock<CornerPatch> = OnceLock::new();

impl CornerPatch {
    /// The patch, built on the first call and shared for the rest of the
    /// process.
    pub fn get() -> &'static CornerPatch {
        PATCH.get_or_init(CornerPatch::build)
    }

    fn build() -> CornerPatch {
        // Ā over the child grid (0…3)², row a + 4b.
        let ext = DMatrix::from_fn(16, LEN, |r, j| child_stencil((r % 4) as i64, (r / 4) as i64)[j]);
        let row = |a: i64, b: i64| ext.row((a + 4 * b) as usize).into_owned();
        let a = DMatrix::from_fn(LEN, LEN, |r, j| ext[((r % 3) + 4 * (r / 3), j)]);
        // Sub-patch grids' lowest corners in the child grid; a phantom row
        // or column where the grid reaches −1.
        let picked = [(0i64, -1i64), (0, 0), (-1, 0)].map(|(a0, b0)| {
            let mut p = DMatrix::zeros(16, LEN);
            for r in 0..16 {
                let (a, b) = (a0 + (r % 4) as i64, b0 + (r / 4) as i64);
                let v = match (a, b) {
                    (a, -1) => row(a, 0) * 2.0 - row(a, 1),
                    (-1, b) => row(0, b) * 2.0 - row(1, b),
                    (a, b) => row(a, b),
                };
                p.set_row(r, &v);
            }
            p
        });
        let mut limit = [0.0; LEN];
        limit[index(1, 0)] = 1.0 / 6.0;
        limit[index(0, 0)] = 4.0 / 6.0;
        limit[index(0, 1)] = 1.0 / 6.0;
        let mut ds = [0.0; LEN];
        ds[index(1, 0)] = 0.5;
        ds[index(0, 1)] = -0.5;
        let dt = ds.map(|x| -x);
        let ones_limit = DMatrix::from_fn(16, LEN, |_, j| limit[j]);
        let tables = picked.clone().map(|p| {
            let mut t = Vec::with_capacity(POWER_LEVELS as usize - 1);
            let mut cur = p - &ones_limit;
            for _ in 2..=POWER_LEVELS {
                cur *= &a;
                for mut r in cur.row_iter_mut() {
                    let sum = r.sum();
                    r.iter_mut().zip(&limit).for_each(|(x, l)| *x -= sum * l);
                }
                t.push(cur.clone());
            }
            t
        });
        CornerPatch { a, picked, tables, limit, tangents: [ds, dt] }
    }

    /// The number of control points, 9.
    pub fn len(&self) -> usize {
        LEN
    }

    /// Always `false`; for symmetry with [`CornerPatch::len`].
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The subdivision matrix `A` (9 × 9): row `i` is child control point
    /// `i` of the patch at the corner over the parent's.
    pub fn subdivision_matrix(&self) -> &DMatrix<f64> {
        &self.a
    }

    /// The limit mask at the corner: `(1, 4, 1)/6` on `(1, 0)`, `(0, 0)`,
    /// `(0, 1)`.
    pub fn limit_mask(&self) -> &[f64] {
        &self.limit
    }

    /// Writes the weights of the position, `∂/∂s` and `∂/∂t` at `(s, t)`
    /// into `w[0]`, `w[1]`, `w[2]` (see [`StamPatch::weights`](crate::stam::StamPatch::weights),
    /// whose contract this keeps; at `(0, 0)` the derivative weights are
    /// the boundary curve's).
    ///
    /// # Panics
    /// If a slice of `w` is not 9 long.
    pub fn weights(&self, s: f64, t: f64, w: [&mut [f64]; 3]) {
        debug_assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t), "(s, t) = ({s}, {t}) outside [0, 1]²");
        assert!(w.iter().all(|x| x.len() == LEN), "the weights need {LEN} entries each");
        let [w0, w1, w2] = w;
        let x = s.max(t);
        if x.is_nan() || x <= 0.0 {
            w0.copy_from_slice(&self.limit);
            w1.copy_from_slice(&self.tangents[0]);
            w2.copy_from_slice(&self.tangents[1]);
            return;
        }
        let m = level(x);
        let (s1, t1) = (scale_up(s, m - 1), scale_up(t, m - 1));
        let (k, u, v) = if s1 >= 0.5 {
            if t1 >= 0.5 { (1, 2.0 * s1 - 1.0, 2.0 * t1 - 1.0) } else { (0, 2.0 * s1 - 1.0, 2.0 * t1) }
        } else {
            (2, 2.0 * s1, 2.0 * t1 - 1.0)
        };
        let b = tensor_basis(u, v);
        let apply = |g: &DMatrix<f64>, scale: f64, w0: &mut [f64], w1: &mut [f64], w2: &mut [f64]| {
            for (j, col) in g.as_slice().chunks_exact(16).enumerate() {
                let [x, y, z] = dot3(&b[0], &b[1], &b[2], col);
                (w0[j], w1[j], w2[j]) = (x, scale * y, scale * z);
            }
        };
        if m <= 1 {
            apply(&self.picked[k], 2.0, w0, w1, w2);
            return;
        }
        let top = m.min(POWER_LEVELS);
        apply(&self.tables[k][top as usize - 2], pow2(top as i32), w0, w1, w2);
        let mut tmp = [[0.0; LEN]; 3];
        for _ in top..m {
            for (j, col) in self.a.as_slice().chunks_exact(LEN).enumerate() {
                let [x, y, z] = dot3(w0, w1, w2, col);
                (tmp[0][j], tmp[1][j], tmp[2][j]) = (x, 2.0 * y, 2.0 * z);
            }
            for (w, t) in [&mut *w0, &mut *w1, &mut *w2].into_iter().zip(&tmp) {
                let sum: f64 = t.iter().sum();
                w.iter_mut().zip(t).zip(&self.limit).for_each(|((w, t), l)| *w = t - sum * l);
            }
        }
        for (w, l) in w0.iter_mut().zip(&self.limit) {
            *w += l;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(s: f64, t: f64) -> [Vec<f64>; 3] {
        let mut w = [vec![0.0; LEN], vec![0.0; LEN], vec![0.0; LEN]];
        let [a, b, c] = &mut w;
        CornerPatch::get().weights(s, t, [a, b, c]);
        w
    }

    #[test]
    fn the_limit_mask_is_the_left_eigenvector_of_one_and_the_spectrum_is_as_documented() {
        let p = CornerPatch::get();
        let l = DMatrix::from_row_slice(1, LEN, &p.limit);
        let la = &l * &p.a;
        assert!((la - &l).amax() < 1e-15);
        let mut ev: Vec<f64> = p.a.clone().complex_eigenvalues().iter().map(|z| z.re).collect();
        assert!(p.a.clone().complex_eigenvalues().iter().all(|z| z.im.abs() < 1e-12));
        ev.sort_by(|a, b| b.total_cmp(a));
        let want = [1.0, 0.5, 0.25, 0.25, 0.125, 0.125, 0.0625, 0.0625, 1.0 / 64.0];
        for (x, y) in ev.iter().zip(want) {
            assert!((x - y).abs() < 1e-6, "{ev:?}");
        }
    }

    /// Affine weights; continuity across the sub-patches of one level and
    /// between levels; derivatives equal difference quotients; at the
    /// corner, the limit along either boundary.
    #[test]
    fn weights_are_affine_continuous_and_differentiate_the_position() {
        let xs = [1e-300, 1e-9, 1e-5, 0.01, 0.1, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0];
        for &s in &[0.0].iter().chain(&xs).copied().collect::<Vec<_>>() {
            for &t in &[0.0].iter().chain(&xs).copied().collect::<Vec<_>>() {
                let w = weights(s, t);
                assert!((w[0].iter().sum::<f64>() - 1.0).abs() < 1e-12, "({s}, {t})");
                assert!(w[1].iter().sum::<f64>().abs() < 1e-9 && w[2].iter().sum::<f64>().abs() < 1e-9);
            }
        }
        // Seams: just below and at a level's boundary, and between sub-patches.
        for (a, b) in
            [((0.5 - 1e-13, 0.2), (0.5, 0.2)), ((0.3, 0.5 - 1e-13), (0.3, 0.5)), ((0.25 - 1e-14, 0.1), (0.25, 0.1))]
        {
            let (x, y) = (weights(a.0, a.1), weights(b.0, b.1));
            for d in 0..3 {
                let e = x[d].iter().zip(&y[d]).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
                assert!(e < 1e-9, "seam {a:?} {b:?}, quantity {d}: {e:e}");
            }
        }
        let h = 1e-6;
        for &(s, t) in &[(0.3, 0.4), (0.7, 0.1), (0.05, 0.6), (0.01, 0.002), (0.6, 0.0)] {
            let w = weights(s, t);
            let (sp, sm) = (weights(s + h, t), weights((s - h).max(0.0), t));
            let (tp, tm) = (weights(s, t + h), weights(s, (t - h).max(0.0)));
            for j in 0..LEN {
                let ds = (sp[0][j] - sm[0][j]) / (s + h - (s - h).max(0.0));
                let dt = (tp[0][j] - tm[0][j]) / (t + h - (t - h).max(0.0));
                assert!((ds - w[1][j]).abs() < 1e-5, "∂s at ({s}, {t}) point {j}: {ds} vs {}", w[1][j]);
                assert!((dt - w[2][j]).abs() < 1e-5, "∂t at ({s}, {t}) point {j}: {dt} vs {}", w[2][j]);
            }
        }
        // Towards the corner along either boundary, the derivatives tend to
        // the corner's.
        let c = weights(0.0, 0.0);
        for (s, t) in [(1e-9, 0.0), (0.0, 1e-9)] {
            let w = weights(s, t);
            for d in 0..3 {
                let e = w[d].iter().zip(&c[d]).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
                assert!(e < 1e-7, "({s}, {t}) quantity {d}: {e:e}");
            }
        }
    }

    /// An independent check against the uniform Catmull-Clark surface
    /// scheme (`subla-catmark`, OpenSubdiv's rules, boundary interpolation
    /// of edges only, so the corner is smooth): on a 5 × 5 grid of quads
    /// with random points, the limit positions of the vertices over the
    /// corner quad after three steps, at `(i/8, j/8)`, equal the patch's.
    #[test]
    fn agrees_with_uniform_catmull_clark_refinement_and_limits() {
        use std::collections::HashMap;

        use ndarray::Array2;
        use subla_algebra::Par;
        use subla_catmark::CatmarkSlak;
        use subla_mesh::{BoundaryInterpolation, MeshBuilder};
        use subla_scheme::{Plan, Refiner, eval};

        const LEVELS: u32 = 3;
        const R: u32 = 5;
        let id = |a: u32, b: u32| a + (R + 1) * b;
        let faces: Vec<Vec<u32>> = (0..R)
            .flat_map(|b| (0..R).map(move |a| vec![id(a, b), id(a + 1, b), id(a + 1, b + 1), id(a, b + 1)]))
            .collect();
        let options = subla_mesh::Options { boundary: BoundaryInterpolation::EdgeOnly, ..Default::default() };
        let nv = ((R + 1) * (R + 1)) as usize;
        let mesh = MeshBuilder::from_faces(nv, &faces).options(options).build(Par::Seq).unwrap();
        let mut rng = crate::test_rng::Rng(11);
        let x = Array2::from_shape_fn((nv, 3), |_| 2.0 * rng.next() - 1.0);
        let control: Vec<u32> = (0..LEN as u32).map(|i| id(i % 3, i / 3)).collect();
        let plan = CatmarkSlak.build(&mesh, LEVELS, Par::Seq).unwrap();
        let fine = eval(&plan, x.view(), Par::Seq).unwrap();
        let limit = plan.limit(Par::Seq).unwrap();
        let mut grid: HashMap<(u32, u32), u32> =
            HashMap::from([((0, 0), id(0, 0)), ((1, 0), id(1, 0)), ((1, 1), id(1, 1)), ((0, 1), id(0, 1))]);
        for level in 0..LEVELS {
            let t = plan.refined(level, Par::Seq).unwrap().topology();
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
        let side = 1u32 << LEVELS;
        assert_eq!(grid.len(), ((side + 1) * (side + 1)) as usize);
        let mut worst: f64 = 0.0;
        for (&(i, j), &v) in &grid {
            let w = weights(f64::from(i) / f64::from(side), f64::from(j) / f64::from(side));
            let (cols, vals) = limit.as_ref().row(v as usize);
            for d in 0..3 {
                let ours: f64 = w[0].iter().zip(&control).map(|(&wc, &c)| wc * x[(c as usize, d)]).sum();
                let theirs: f64 = cols.iter().zip(vals).map(|(&c, &wc)| wc * fine[(c as usize, d)]).sum();
                worst = worst.max((ours - theirs).abs());
            }
        }
        assert!(worst < 1e-12, "{worst:e}");
    }

    /// Along the boundary `t = 0` the patch is the cubic B-spline curve
    /// through `(0, 1), (0, 0), (1, 0), (2, 0)`.
    #[test]
    fn the_boundary_is_the_curve() {
        let b = |x: f64| {
            let y = 1.0 - x;
            [
                y * y * y / 6.0,
                (3.0 * x * x * x - 6.0 * x * x + 4.0) / 6.0,
                (-3.0 * x * x * x + 3.0 * x * x + 3.0 * x + 1.0) / 6.0,
                x * x * x / 6.0,
            ]
        };
        for s in [0.0, 1e-7, 0.1, 0.37, 0.5, 0.8, 1.0] {
            let w = weights(s, 0.0);
            let mut want = [0.0; LEN];
            for (p, bw) in [index(0, 1), index(0, 0), index(1, 0), index(2, 0)].into_iter().zip(b(s)) {
                want[p] += bw;
            }
            for j in 0..LEN {
                assert!((w[0][j] - want[j]).abs() < 1e-13, "s = {s}: {:?} vs {want:?}", w[0]);
            }
        }
    }
}
