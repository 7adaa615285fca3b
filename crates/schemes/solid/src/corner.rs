//! Exact evaluation of a Catmull-Clark surface patch next to a smooth
//! boundary vertex: a boundary vertex of `n` faces (`n = 1`: a corner of
//! one face; 2: a regular boundary; 3 and more: a concave corner) whose
//! boundary curve runs smoothly round it (no corner tag, OpenSubdiv's
//! edge-only boundary interpolation), as weights over the control points
//! of the patch on one of its faces, with both first derivatives.
//!
//! This is the cross-section of a solid's cell at an untagged boundary edge
//! of `n` cells (a box's edge: `n = 1`; a concave edge: 3): there, the
//! boundary surface refines by Catmull-Clark's surface rules, regular along
//! the edge, and the solid refines as this patch times the cubic B-spline
//! along the edge (the derivation is in `docs/solids.md`).
//!
//! # Control points
//! A fan of `n` quarter grids ("sectors") round the vertex `EV`, as
//! [`StamPatch`](crate::stam::StamPatch)'s ring but open: sector `k` is
//! the quad `(EV, E_k, D_k, E_{k+1})`, its points `(a, b)` with `a` along
//! `E_k` and `b` along `E_{k+1}`, and the rays `EV E_0 …` and `EV E_n …`
//! are the boundary. The patch on sector `j` is the limit surface over its
//! quad, parametrised by `(s, t)` with `EV` at `(0, 0)`, `E_j` at `(1, 0)`,
//! `E_{j+1}` at `(0, 1)`. Its control points are `EV`, then `E_k` and `D_k`
//! for each sector, then `E_n`, then those of the seven points `(2, −1)
//! (2, 0) (2, 1) (2, 2) (1, 2) (0, 2) (−1, 2)` of sector `j` that exist
//! (`(2, −1)` lies in sector `j − 1`, `(−1, 2)` in sector `j + 1`): `2n +
//! 7`, `2n + 8` or `2n + 9` points (9 for one face).
//!
//! # Rules
//! Inside, Catmull-Clark's (valence 4 away from `EV`: the bicubic
//! B-spline's). On the boundary, the cubic B-spline curve's: an edge point
//! is the edge's midpoint, a vertex point `(p + 6v + q)/8` with `p`, `q`
//! its two boundary neighbours; at `EV` these are `E_0` and `E_n`, the
//! curve turning round it without a crease. Every stencil is derived on a
//! local model of the open fan (the crate's `fan` module, which also makes
//! Stam's closed one), no tables.
//!
//! # Subdivision matrix and sub-patches
//! The child control points depend on the parent's only: `A`. With the
//! child points `(3, −1…3)` and `(−1…2, 3)` of sector `j` that exist, `Ā`
//! holds the grids of the three sub-patches of `[0, 1]²` that do not touch
//! `EV`, each a bicubic B-spline: `k = 1` over `[½, 1] × [0, ½]` on the
//! child grid `(0…3) × (−1…2)`, `k = 2` over `[½, 1]²` on `(0…3)²`, `k = 3`
//! over `[0, ½] × [½, 1]` on `(−1…2) × (0…3)`. Where the grid reaches
//! beyond a boundary ray (row `b = −1` on sector 0, column `a = −1` on
//! sector `n − 1`), that row is the phantom `2P(a, 0) − P(a, 1)` (a
//! boundary curve refined by the curve rule is the B-spline's end
//! condition, and `EV`'s own rule is never read there). `P_k` picks
//! sub-patch `k`'s grid from `Ā`'s rows, phantoms included.
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
//! the rounding of `ℓ`), further products by `A` below them: `A` need not
//! be diagonalisable. For one face its eigenvalues are `1, ½, ¼, ¼, ⅛, ⅛,
//! 1/16, 1/16, 1/64`, `¼` with a Jordan block of size 2 (a numerical
//! eigensolver splits it by about `1e−9`). For three faces and more the
//! subdominant eigenvalue `λ₁` exceeds the boundary curve's `½` (0.580 for
//! three faces, 0.611 for four, 0.643 for eight), and the parametric
//! derivatives grow as `(2λ₁)^m` towards `EV`.
//!
//! # At the vertex
//! The boundary rays refine by themselves as one cubic B-spline curve
//! through `…, E_n, EV, E_0, …`, so the limit position at `EV` is the
//! curve's, `(E_0 + 4 EV + E_n)/6`. The derivative weights written there
//! are the first-order terms of the surface along the patch's two rays:
//! - along a boundary ray, the curve's derivative: `(E_0 − E_n)/2` towards
//!   `E_0`, its negative towards `E_n`;
//! - along a ray inside the fan: for two faces the bicubic's derivative
//!   (the limit of the parametric one); for three faces or more the
//!   projection `φ(e) Π₁` of the weights at the ray's point `e` (`(1, 0)`
//!   or `(0, 1)`) on `λ₁`'s eigenspace, Stam's tangent mask: `x(2^{−p} e)
//!   − x(0, 0) = λ₁^p τ·P + O(λ₂^p)`.
//!
//! For one face the two are parallel (`∂/∂s = −∂/∂t`): the parametrisation
//! is singular at `EV`. For three faces or more `λ₁` is simple, so every
//! ray inside the fan leaves `EV` along the same direction, and the
//! boundary rays along the curve's: the standard boundary rules do not
//! make the surface smooth at a concave corner (a known property of them;
//! OpenSubdiv's surface is the same).

use std::sync::{Arc, OnceLock};

use nalgebra::DMatrix;

use crate::fan::{Fan, Label};
use crate::stam::{PowerTables, apply, patch_weights, pow2, tensor_basis};

/// The most faces at the boundary vertex [`CornerPatch`] is built for.
pub const MAX_FACES: usize = 8;

/// The number of control points of sector `j`'s patch in a fan of `n`
/// sectors: `EV`, the `2n + 1` ring points, and the seven outer points but
/// `(2, −1)` on the first sector and `(−1, 2)` on the last
/// ([`CornerPatch::len`] without building the patch).
pub(crate) fn len(n: usize, j: usize) -> usize {
    2 * n + 9 - usize::from(j == 0) - usize::from(j + 1 == n)
}

/// Per control point of sector `j`'s patch in a fan of `n` sectors,
/// whether it is on the boundary (`EV` and the two boundary rays).
pub(crate) fn boundary_points(n: usize, j: usize) -> Vec<bool> {
    let fan = Fan { n, closed: false };
    let (l, len) = fan.labels(j);
    l[..len].iter().map(|&q| fan.on_boundary(q)).collect()
}

/// Why a [`CornerPatch`] could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CornerError {
    /// The number of faces or the sector is out of range.
    #[error(
        "a patch at a boundary vertex of {faces} faces, sector {sector}, is not supported (1 ..= {MAX_FACES} faces)"
    )]
    Unsupported {
        /// The faces at the vertex.
        faces: usize,
        /// The sector asked for.
        sector: usize,
    },
}

/// The patch on one sector of a boundary vertex whose boundary curve turns
/// smoothly round it (see the [module docs](self)).
#[derive(Debug)]
pub struct CornerPatch {
    faces: usize,
    sector: usize,
    len: usize,
    /// `A` (K × K).
    a: DMatrix<f64>,
    /// `P_k Ā` (16 × K) of each sub-patch.
    picked: [DMatrix<f64>; 3],
    /// `A`'s powers.
    tables: PowerTables,
    limit: Vec<f64>,
    tangents: [Vec<f64>; 2],
}

/// The built patches, by faces and sector.
static PATCHES: [[OnceLock<Arc<CornerPatch>>; MAX_FACES]; MAX_FACES + 1] =
    [const { [const { OnceLock::new() }; MAX_FACES] }; MAX_FACES + 1];

impl CornerPatch {
    /// The patch on sector `sector` (`0 ≤ sector < faces`, counter-clockwise
    /// from the first boundary edge) of a boundary vertex of `faces` faces
    /// (`1 ..= MAX_FACES`), built on the first call and shared for the rest
    /// of the process.
    ///
    /// # Errors
    /// [`CornerError::Unsupported`] out of range.
    pub fn get(faces: usize, sector: usize) -> Result<Arc<CornerPatch>, CornerError> {
        if !(1..=MAX_FACES).contains(&faces) || sector >= faces {
            return Err(CornerError::Unsupported { faces, sector });
        }
        Ok(PATCHES[faces][sector]
            .get_or_init(|| Arc::new(CornerPatch::build(faces, sector).expect("the local model is consistent")))
            .clone())
    }

    fn build(n: usize, j: usize) -> Option<CornerPatch> {
        let fan = Fan { n, closed: false };
        let (l, len) = fan.labels(j);
        let (ext, picked) = fan.extended(j)?;
        let a = ext.rows(0, len).into_owned();
        let at = |p: Label| l.iter().position(|&q| q == p).expect("a control point");
        let (ev, e0, en) = (at(Label::Ev), at(Label::At { k: 0, a: 1, b: 0 }), at(Label::At { k: n, a: 1, b: 0 }));
        let mut limit = vec![0.0; len];
        limit[e0] += 1.0 / 6.0;
        limit[ev] += 4.0 / 6.0;
        limit[en] += 1.0 / 6.0;
        let tables = PowerTables::new(&a, &picked, &limit);
        let tangents = tangent_masks(n, j, &a, &picked, &tables)?;
        Some(CornerPatch { faces: n, sector: j, len, a, picked, tables, limit, tangents })
    }

    /// The number of faces at the boundary vertex.
    pub fn faces(&self) -> usize {
        self.faces
    }

    /// The sector the patch lies on.
    pub fn sector(&self) -> usize {
        self.sector
    }

    /// The number of control points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`; for symmetry with [`CornerPatch::len`].
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The subdivision matrix `A`: row `i` is child control point `i` of
    /// the patch at the vertex over the parent's.
    pub fn subdivision_matrix(&self) -> &DMatrix<f64> {
        &self.a
    }

    /// The limit mask at the vertex: the boundary curve's, `(1, 4, 1)/6` on
    /// `E_0`, `EV`, `E_K`.
    pub fn limit_mask(&self) -> &[f64] {
        &self.limit
    }

    /// The derivative weights written at the vertex ([module docs](self#at-the-vertex)).
    pub fn tangent_masks(&self) -> [&[f64]; 2] {
        [&self.tangents[0], &self.tangents[1]]
    }

    /// Writes the weights of the position, `∂/∂s` and `∂/∂t` at `(s, t)`
    /// into `w[0]`, `w[1]`, `w[2]` (see [`StamPatch::weights`](crate::stam::StamPatch::weights),
    /// whose contract this keeps; at `(0, 0)` the derivative weights are
    /// [`CornerPatch::tangent_masks`]).
    ///
    /// # Panics
    /// If a slice of `w` is not [`CornerPatch::len`] long.
    pub fn weights(&self, s: f64, t: f64, w: [&mut [f64]; 3]) {
        patch_weights(s, t, w, &self.limit, &self.tangents, |m, k, u, v, w| {
            let b = tensor_basis(u, v);
            if m <= 1 {
                apply(&b, &self.picked[k], 2.0, w);
            } else {
                self.tables.weights(&self.a, &self.limit, m, k, &b, w);
            }
        });
    }
}

/// The derivative weights at the vertex: the first-order term of the
/// surface along each of the patch's two rays (see the module docs).
fn tangent_masks(
    n: usize,
    j: usize,
    a: &DMatrix<f64>,
    picked: &[DMatrix<f64>; 3],
    tables: &PowerTables,
) -> Option<[Vec<f64>; 2]> {
    let len = a.nrows();
    let (l, _) = Fan { n, closed: false }.labels(j);
    let at = |p: Label| l.iter().position(|&q| q == p).expect("a control point");
    let (e0, en) = (at(Label::At { k: 0, a: 1, b: 0 }), at(Label::At { k: n, a: 1, b: 0 }));
    // Along a boundary ray: the boundary curve's derivative, from the
    // vertex towards E_0 (ray 0) or towards E_n (ray n).
    let curve = |towards: usize, from: usize| {
        let mut d = vec![0.0; len];
        d[towards] += 0.5;
        d[from] -= 0.5;
        d
    };
    let spectrum = crate::eigen::Spectrum::new(a, None).ok()?;
    let sub = spectrum.groups().get(1)?;
    // Along a ray inside the fan, towards (1, 0) on sub-patch 1 or (0, 1)
    // on sub-patch 3.
    let inside = |sub_patch: usize, ray: (f64, f64), along_s: bool| -> Option<Vec<f64>> {
        if sub.value() > 0.5 + 1e-9 {
            // λ₁ > ½ (three faces or more): φ(ray) Π₁.
            let (r1, l1) = (sub.right()?, sub.left()?);
            let projector = r1 * (l1 * r1).try_inverse()? * l1;
            let b = tensor_basis(ray.0, ray.1)[0];
            let phi = DMatrix::from_fn(1, len, |_, c| dot(&b, picked[sub_patch].column(c).as_slice()));
            Some((phi * projector).iter().copied().collect())
        } else {
            // λ₁ = ½ (two faces): the parametric derivative converges; its
            // value at the deepest level kept, at the vertex's end.
            let b = tensor_basis(0.0, 0.0);
            let t = tables.deepest(sub_patch);
            let scale = pow2(64);
            Some(t.as_slice().chunks_exact(16).map(|col| scale * dot(&b[if along_s { 1 } else { 2 }], col)).collect())
        }
    };
    let ds = if j == 0 { curve(e0, en) } else { inside(0, (1.0, 0.0), true)? };
    let dt = if j + 1 == n { curve(en, e0) } else { inside(2, (0.0, 1.0), false)? };
    Some([ds, dt])
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use subla_algebra::Par;
    use subla_catmark::CatmarkSlak;
    use subla_scheme::{Plan, Refiner, eval};

    use super::*;

    fn weights(p: &CornerPatch, s: f64, t: f64) -> [Vec<f64>; 3] {
        let mut w = [vec![0.0; p.len()], vec![0.0; p.len()], vec![0.0; p.len()]];
        let [a, b, c] = &mut w;
        p.weights(s, t, [a, b, c]);
        w
    }

    fn patches() -> Vec<Arc<CornerPatch>> {
        (1..=MAX_FACES).flat_map(|n| (0..n).map(move |j| CornerPatch::get(n, j).unwrap())).collect()
    }

    #[test]
    fn the_limit_mask_is_the_left_eigenvector_of_one() {
        for p in patches() {
            assert_eq!(len(p.faces, p.sector), p.len());
            let l = DMatrix::from_row_slice(1, p.len(), &p.limit);
            assert!((&l * &p.a - &l).amax() < 1e-15, "{} faces, sector {}", p.faces, p.sector);
            let ev = crate::eigen::Spectrum::new(&p.a, None).expect("real eigenvalues").values();
            println!("{} faces, sector {}: {:?}", p.faces, p.sector, &ev[..5]);
        }
    }

    /// Along the boundary `t = 0` of sector 0 the patch is the cubic
    /// B-spline curve through `E_n, EV, E_0, (2, 0)`.
    #[test]
    fn the_boundary_is_the_curve() {
        let b = |x: f64| {
            let y = 1.0 - x;
            let x3 = x * x * x;
            [
                y * y * y / 6.0,
                (3.0 * x3 - 6.0 * x * x + 4.0) / 6.0,
                (-3.0 * x3 + 3.0 * x * x + 3.0 * x + 1.0) / 6.0,
                x3 / 6.0,
            ]
        };
        for n in 1..=4 {
            let p = CornerPatch::get(n, 0).unwrap();
            let (l, len) = Fan { n, closed: false }.labels(0);
            let at = |q: Label| l[..len].iter().position(|&x| x == q).unwrap();
            let curve = [
                Label::At { k: n, a: 1, b: 0 },
                Label::Ev,
                Label::At { k: 0, a: 1, b: 0 },
                Label::At { k: 0, a: 2, b: 0 },
            ];
            for s in [0.0, 1e-7, 0.1, 0.37, 0.5, 0.8, 1.0] {
                let w = weights(&p, s, 0.0);
                let mut want = vec![0.0; len];
                for (&q, bw) in curve.iter().zip(b(s)) {
                    want[at(q)] += bw;
                }
                for c in 0..len {
                    assert!((w[0][c] - want[c]).abs() < 1e-13, "{n} faces, s = {s}: {:?} vs {want:?}", w[0]);
                }
            }
        }
    }

    /// An independent check against the uniform Catmull-Clark surface
    /// scheme (`subla-catmark`, OpenSubdiv's rules, boundary interpolation
    /// of edges only, so the vertex's boundary is smooth): on a fan of `n`
    /// sectors of 4 × 4 quads with random points, the limit positions of the
    /// vertices over sector `j`'s quad at the vertex after three steps, at
    /// `(i/8, k/8)`, equal the patch's; at the vertex, the limit operator's
    /// row.
    #[test]
    fn agrees_with_uniform_catmull_clark_refinement_and_limits() {
        const LEVELS: u32 = 3;
        for (n, j) in [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2), (5, 2)] {
            let p = CornerPatch::get(n, j).unwrap();
            let (mesh, index) = crate::fan::fan_mesh(Fan { n, closed: false }, 4);
            let (l, len) = Fan { n, closed: false }.labels(j);
            let control: Vec<u32> = l[..len]
                .iter()
                .map(|&q| match q {
                    Label::Ev => index[&(0, 0, 0)],
                    Label::At { k, a, b } => index[&(k, a, b)],
                })
                .collect();
            let mut rng = crate::test_rng::Rng(n as u64 * 10 + j as u64);
            let x = Array2::from_shape_fn((mesh.num_vertices(), 3), |_| 2.0 * rng.next() - 1.0);
            let plan = CatmarkSlak.build(&mesh, LEVELS, Par::Seq).unwrap();
            let fine = eval(&plan, x.view(), Par::Seq).unwrap();
            let limit = plan.limit(Par::Seq).unwrap();
            let id = |a: i64, b: i64| {
                let q = Fan { n, closed: false }.label(j, a, b).unwrap();
                control[l.iter().position(|&x| x == q).unwrap()]
            };
            let grid = crate::fan::refined_quad(&plan, LEVELS, [id(0, 0), id(1, 0), id(1, 1), id(0, 1)]);
            let side = 1u32 << LEVELS;
            let mut worst: f64 = 0.0;
            for (&(i, k), &v) in &grid {
                let w = weights(&p, f64::from(i) / f64::from(side), f64::from(k) / f64::from(side));
                let (cols, vals) = limit.as_ref().row(v as usize);
                for d in 0..3 {
                    let ours: f64 = w[0].iter().zip(&control).map(|(&wc, &c)| wc * x[(c as usize, d)]).sum();
                    let theirs: f64 = cols.iter().zip(vals).map(|(&c, &wc)| wc * fine[(c as usize, d)]).sum();
                    worst = worst.max((ours - theirs).abs());
                }
            }
            assert!(worst < 1e-12, "{n} faces, sector {j}: {worst:e}");
        }
    }

    /// Affine weights; continuity across the sub-patches of one level and
    /// between levels; derivatives equal difference quotients; towards the
    /// vertex along a ray, the derivatives tend to those written there.
    #[test]
    fn weights_are_affine_continuous_and_differentiate_the_position() {
        let xs = [0.0, 1e-300, 1e-9, 1e-5, 0.01, 0.1, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0];
        for p in patches() {
            let name = format!("{} faces, sector {}", p.faces, p.sector);
            for &s in &xs {
                for &t in &xs {
                    let w = weights(&p, s, t);
                    assert!((w[0].iter().sum::<f64>() - 1.0).abs() < 1e-12, "{name} ({s}, {t})");
                    // Derivatives grow as (2λ₁)^m towards the vertex where λ₁ > ½.
                    let scale = w[1].iter().chain(&w[2]).fold(1.0f64, |m, x| m.max(x.abs()));
                    let sums = [w[1].iter().sum::<f64>(), w[2].iter().sum::<f64>()];
                    assert!(sums.iter().all(|x| x.abs() < 1e-11 * scale), "{name} ({s}, {t}): {sums:?}");
                }
            }
            for (a, b) in
                [((0.5 - 1e-13, 0.2), (0.5, 0.2)), ((0.3, 0.5 - 1e-13), (0.3, 0.5)), ((0.25 - 1e-14, 0.1), (0.25, 0.1))]
            {
                let (x, y) = (weights(&p, a.0, a.1), weights(&p, b.0, b.1));
                for d in 0..3 {
                    let e = x[d].iter().zip(&y[d]).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
                    assert!(e < 1e-9, "{name}: seam {a:?} {b:?}, quantity {d}: {e:e}");
                }
            }
            let h = 1e-6;
            for &(s, t) in &[(0.3, 0.4), (0.7, 0.1), (0.05, 0.6), (0.01, 0.002), (0.6, 0.0), (0.0, 0.3)] {
                let w = weights(&p, s, t);
                let (sp, sm) = (weights(&p, s + h, t), weights(&p, (s - h).max(0.0), t));
                let (tp, tm) = (weights(&p, s, t + h), weights(&p, s, (t - h).max(0.0)));
                for c in 0..p.len() {
                    let ds = (sp[0][c] - sm[0][c]) / (s + h - (s - h).max(0.0));
                    let dt = (tp[0][c] - tm[0][c]) / (t + h - (t - h).max(0.0));
                    assert!((ds - w[1][c]).abs() < 1e-5, "{name}: ∂s at ({s}, {t}) point {c}: {ds} vs {}", w[1][c]);
                    assert!((dt - w[2][c]).abs() < 1e-5, "{name}: ∂t at ({s}, {t}) point {c}: {dt} vs {}", w[2][c]);
                }
            }
            // At the vertex: along a boundary ray (and inside a fan of two
            // faces) the derivative there is the limit of the parametric
            // one; along a ray inside a fan of three faces or more, the
            // first-order term: (φ(2^−p e) − ℓ)/λ₁^p tends to it, a left
            // eigenvector of λ₁.
            let c = weights(&p, 0.0, 0.0);
            let lambda = crate::eigen::Spectrum::new(&p.a, None).unwrap().groups()[1].value();
            for (s, t, d, boundary) in [(1e-9, 0.0, 1, p.sector == 0), (0.0, 1e-9, 2, p.sector + 1 == p.faces)] {
                if boundary || p.faces <= 2 {
                    let w = weights(&p, s, t);
                    for q in [0, d] {
                        let e = w[q].iter().zip(&c[q]).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
                        assert!(e < 1e-6, "{name}: ({s}, {t}) quantity {q}: {e:e}");
                    }
                    continue;
                }
                let row = DMatrix::from_row_slice(1, p.len(), &c[d]);
                assert!((&row * &p.a - &row * lambda).amax() < 1e-12, "{name}: not a left eigenvector");
                let at = |e: i32| {
                    let h = 2f64.powi(-e);
                    let w = weights(&p, if d == 1 { h } else { 0.0 }, if d == 2 { h } else { 0.0 });
                    let off: Vec<f64> = w[0].iter().zip(&p.limit).map(|(x, l)| (x - l) / lambda.powi(e)).collect();
                    off.iter().zip(&c[d]).fold(0f64, |m, (x, y)| m.max((x - y).abs()))
                };
                // The error shrinks as (λ₂/λ₁)^p, λ₂ the next eigenvalue
                // (while λ₁^p stays well above the rounding of φ − ℓ).
                let next = crate::eigen::Spectrum::new(&p.a, None).unwrap().groups()[2].value();
                let (e20, e45) = (at(20), at(45));
                // (A Jordan block at λ₂ adds a factor p: up to 45/20.)
                let want = e20 * (next / lambda).powi(25) * 45.0 / 20.0;
                assert!(e45 < 1.5 * want, "{name}: first-order term {e20:e} → {e45:e} ({want:e})");
            }
        }
    }
}
