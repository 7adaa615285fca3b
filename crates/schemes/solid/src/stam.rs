//! Exact evaluation of a Catmull-Clark surface patch next to one
//! extraordinary vertex (Stam 1998), as weights over the patch's `K = 2n + 8`
//! control points, with both first derivatives.
//!
//! # Control points
//! Around the extraordinary vertex `EV` of valence `n` (`3 ..= MAX_VALENCE`,
//! interior), the edges from `EV` reach `E_0 … E_{n−1}` counter-clockwise;
//! sector `k` is the quad `(EV, E_k, D_k, E_{k+1})`. The patch is the limit
//! surface over face 0, parametrised by `(s, t) ∈ [0, 1]²` with `EV` at
//! `(0, 0)`, `E_0` at `(1, 0)`, `D_0` at `(1, 1)` and `E_1` at `(0, 1)`.
//! Grid coordinates `(i, j)` name points relative to the patch as on a
//! regular grid (`EV = (0, 0)`, `E_0 = (1, 0)`, `E_1 = (0, 1)`); the points
//! used here all lie in sectors `n − 1`, 0 and 1, where that naming is
//! well defined for every `n`. The order is
//!
//! | index         | point                                               |
//! |---------------|-----------------------------------------------------|
//! | `0`           | `EV`                                                |
//! | `1 + 2k`      | `E_k` (`k = 0 … n−1`)                               |
//! | `2 + 2k`      | `D_k`                                               |
//! | `2n+1 … 2n+7` | `(2,−1) (2,0) (2,1) (2,2) (1,2) (0,2) (−1,2)`       |
//!
//! For `n = 4` the patch is the bicubic uniform B-spline over the grid
//! `{−1, 0, 1, 2}²` (`E_2 = (−1, 0)`, `E_3 = (0, −1)`, `D_1 = (−1, 1)`,
//! `D_2 = (−1, −1)`, `D_3 = (1, −1)`): the weight of `(i, j)` is
//! `B_{i+1}(s) B_{j+1}(t)` with
//!
//! ```text
//! B_0(x) = (1 − x)³ / 6            B_1(x) = (3x³ − 6x² + 4) / 6
//! B_2(x) = (−3x³ + 3x² + 3x + 1) / 6  B_3(x) = x³ / 6
//! ```
//!
//! # Subdivision matrices
//! One Catmull-Clark step puts a face point at each face's centroid, an
//! edge point at `(a + b + f₁ + f₂) / 4` (the edge's ends and the face
//! points of its two faces), and moves each vertex `v` of valence `m` to
//!
//! ```text
//! v' = (m − 3)/m · v + 2/m · R + 1/m · Q
//! ```
//!
//! (`R` the average of the midpoints of its edges, `Q` of the centroids of
//! its faces). The child patch at `EV` (parameters halved) has control
//! points in the same order, and they depend on the parent's only:
//! `c = A p` with the `K × K` subdivision matrix `A`. Its first `2n + 1`
//! rows (`EV`, `E_k`, `D_k`) read only the first `2n + 1` points, so
//!
//! ```text
//! A = | S    0   |      S: (2n+1) × (2n+1), S₁₂: 7 × 7
//!     | S₁₁  S₁₂ |
//! ```
//!
//! The extended matrix `Ā` (`(K + 9) × K`) adds the child points
//! `(3,−1) (3,0) (3,1) (3,2) (3,3) (2,3) (1,3) (0,3) (−1,3)` (child grid
//! coordinates), which with `A`'s rows hold the 4 × 4 control grids of the
//! three regular sub-patches of face 0: `k = 1` over `[½,1] × [0,½]`,
//! `k = 2` over `[½,1]²` and `k = 3` over `[0,½] × [½,1]`. `P_k` (16 ×
//! (K + 9)) picks sub-patch `k`'s grid. Every stencil is derived from the
//! rules above on a local model of the mesh, a closed fan of quarter grids
//! (the crate's `fan` module, shared with [`crate::corner`]'s open fans):
//! sector `k` is a quarter grid `{(a, b) : a ≥ 1, b ≥ 0}` whose points
//! `(0, b)` are sector `k + 1`'s `(b, 0)`; `EV` is the common corner.
//!
//! # Eigenstructure
//! Catmull-Clark's `A` has real eigenvalues: those of `S` (`1`, the
//! subdominant pair `λ₁`, …) and of `S₁₂` (`1/8, 1/8, 1/16, 1/16, 1/32,
//! 1/32, 1/64`). Where `A = V Λ V⁻¹` (the eigenvectors span), powers are
//! `A^j = V Λ^j V⁻¹`. The decomposition is the [`eigen`](crate::eigen)
//! module's, with the blocks `S` and `S₁₂`: eigenvalues from the real Schur
//! forms of `S` and `S₁₂`; eigenvectors of each distinct eigenvalue `μ` of
//! multiplicity `p` are the `p` smallest right singular vectors of `A − μI`
//! (and left ones from its transpose), sharpened by one step of inverse
//! iteration; `μ` is refined by the two-sided Rayleigh quotient, and the
//! decomposition is kept only if `V Λ V⁻¹` reproduces `A` to `1e−11`
//! (relative, max norm). The eigenvector of `1` is the all-ones vector
//! (every row of `A` sums to 1: [`RowSums::One`]).
//!
//! For every valence `3 ..= 16` `A` is diagonalisable, including `n = 4, 8,
//! 12, 16` where `S` shares the eigenvalue `1/8` (and at `n = 4` also
//! `1/16`) with `S₁₂`, and `V Λ V⁻¹` reproduces it to about `1e−14`. Where
//! it would not (a defective `A`), the patch falls back to tables of
//! `P_k Ā A^{m−1}` for `m = 1 ..= 64` and further products by `A` below them
//! ([`Representation::Powers`]); both give the same weights (to about
//! `1e−13` in the tests, which force the tables for some valences).
//!
//! # Evaluation
//! For `(s, t) ≠ (0, 0)` the level `m ≥ 1` is the one with
//! `2^{−m} ≤ max(s, t) < 2^{1−m}` (`m = 1` at `max(s, t) = 1`). Scaled
//! exactly by a power of two, `(s', t') = 2^{m−1} (s, t)` has
//! `max(s', t') ∈ [½, 1]`, and picks the sub-patch and its parameters:
//!
//! ```text
//! k = 1: s' ≥ ½, t' < ½   (u, v) = (2s' − 1, 2t')
//! k = 2: s' ≥ ½, t' ≥ ½   (u, v) = (2s' − 1, 2t' − 1)
//! k = 3: s' < ½, t' ≥ ½   (u, v) = (2s', 2t' − 1)
//! ```
//!
//! The weights and their derivatives (chain rule: `du/ds = dv/dt = 2^m`) are
//!
//! ```text
//! φ(s, t)    = b(u, v)ᵀ P_k Ā A^{m−1}       = ((b(u, v)ᵀ E_k) ∘ λ^{m−1}) V⁻¹
//! ∂φ/∂s      = 2^m ∂b/∂u(u, v)ᵀ P_k Ā A^{m−1} = ((∂b/∂uᵀ E_k) ∘ 2(2λ)^{m−1}) V⁻¹
//! ```
//!
//! (`∂/∂t` likewise) with `E_k = P_k Ā V` precomputed and `b` the 16 bicubic
//! basis products `B_i(u) B_j(v)` (entry `i + 4j`). At `m = 1`
//! (`A⁰ = I`) the weights are `bᵀ P_k Ā` directly.
//!
//! # At the extraordinary vertex
//! At `(0, 0)` the position weights are the limit mask `ℓ`, the left
//! eigenvector of eigenvalue 1 scaled to sum 1 (for Catmull-Clark,
//! `(n², 4, 1) / (n(n + 5))` on `EV`, the `E_k` and the `D_k`). The
//! parametric derivative there is 0 for `n = 3` and unbounded for `n ≥ 5`
//! (it behaves as `(2λ₁)^m`), so the derivative weights written at `(0, 0)`
//! are tangent masks instead:
//!
//! ```text
//! τ_s = φ(1, 0) Π₁      τ_t = φ(0, 1) Π₁      Π₁ = R₁ (L₁ R₁)⁻¹ L₁
//! ```
//!
//! with `Π₁` the spectral projector onto the eigenspace of the subdominant
//! eigenvalue `λ₁` (the double eigenvalue of Fourier index 1; `R₁` its right
//! eigenvectors as columns, `L₁` its left ones as rows). They are the
//! surface's first-order terms along the rays: at `s = 2^{−p}`,
//! `x(s, 0) − x(0, 0) = λ₁^p τ_s·P + O(μ₂^p)` (`μ₂ < λ₁` the next
//! eigenvalue), and they span the limit tangent plane. For `n = 4`, `λ₁ = ½`
//! and its eigenfunctions are the linear functions, so `τ_s`, `τ_t` are the
//! bicubic patch's `∂/∂s`, `∂/∂t` at its corner exactly.
use std::sync::{Arc, OnceLock};

use nalgebra::DMatrix;

use crate::eigen::{Eigen, EigenError, RowSums, Spectrum};

/// The largest valence [`StamPatch`] is built for.
pub const MAX_VALENCE: usize = 16;

/// The most control points of a patch: `2 · MAX_VALENCE + 8`.
const MAX_LEN: usize = 2 * MAX_VALENCE + 8;

/// Levels kept as tables in [`Representation::Powers`].
const POWER_LEVELS: u32 = 64;

/// Why a [`StamPatch`] could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StamError {
    /// The valence is outside `3 ..= MAX_VALENCE`.
    #[error("valence {valence} is not supported: Stam patches are built for valences 3 ..= {MAX_VALENCE}")]
    Valence {
        /// The valence asked for.
        valence: usize,
    },
    /// A child point's stencil reached outside the patch's control points
    /// (the local mesh model is inconsistent; not expected for any
    /// supported valence).
    #[error("valence {valence}: a child point's stencil reaches outside the {} control points", 2 * valence + 8)]
    Support {
        /// The valence.
        valence: usize,
    },
    /// The eigenstructure needed for the limit and tangent masks was not
    /// found: complex eigenvalues, a multiple eigenvalue 1, no double
    /// subdominant eigenvalue, or eigenvectors with too large a residual.
    #[error("valence {valence}: the subdivision matrix's eigenstructure failed: {what} (residual {residual:e})")]
    Eigen {
        /// The valence.
        valence: usize,
        /// What failed.
        what: &'static str,
        /// The residual measured (0 where none applies).
        residual: f64,
    },
}

/// How a [`StamPatch`] raises `A` to a power.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Representation {
    /// `A^j = V Λ^j V⁻¹` (`A` is diagonalisable).
    Eigen,
    /// Tables of `P_k Ā A^{m−1}` for `m ≤ 64`, further products by `A`
    /// below (for a defective `A`).
    Powers,
}

/// The cubic uniform B-spline basis at `x`.
fn basis(x: f64) -> [f64; 4] {
    let y = 1.0 - x;
    let x2 = x * x;
    let x3 = x2 * x;
    [y * y * y / 6.0, (3.0 * x3 - 6.0 * x2 + 4.0) / 6.0, (-3.0 * x3 + 3.0 * x2 + 3.0 * x + 1.0) / 6.0, x3 / 6.0]
}

/// The derivative of [`basis`].
fn basis_derivative(x: f64) -> [f64; 4] {
    let y = 1.0 - x;
    let x2 = x * x;
    [-0.5 * y * y, 1.5 * x2 - 2.0 * x, -1.5 * x2 + x + 0.5, 0.5 * x2]
}

/// `2^e` for `−1022 ≤ e ≤ 1023`.
pub(crate) fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `x · 2^e`, exact (powers of two at most `2^1000` at a time).
pub(crate) fn scale_up(mut x: f64, mut e: u32) -> f64 {
    while e > 1000 {
        x *= pow2(1000);
        e -= 1000;
    }
    x * pow2(e as i32)
}

/// The level `m ≥ 1` with `2^{−m} ≤ x < 2^{1−m}` for `0 < x < 1`, and 1 for
/// `x ≥ 1`.
pub(crate) fn level(x: f64) -> u32 {
    if x >= 1.0 {
        return 1;
    }
    let (y, extra) = if x < f64::MIN_POSITIVE { (x * pow2(64), 64) } else { (x, 0) };
    // y ∈ [2^{e−1}, 2^e) with e ≤ 0.
    let e = ((y.to_bits() >> 52) & 0x7ff) as i32 - 1022;
    (1 - e + extra) as u32
}

/// The 16 basis products `B_i(u) B_j(v)` (entry `i + 4j`) and their `u`
/// and `v` derivatives.
pub(crate) fn tensor_basis(u: f64, v: f64) -> [[f64; 16]; 3] {
    let (bu, du, bv, dv) = (basis(u), basis_derivative(u), basis(v), basis_derivative(v));
    let mut out = [[0.0; 16]; 3];
    for j in 0..4 {
        for i in 0..4 {
            out[0][i + 4 * j] = bu[i] * bv[j];
            out[1][i + 4 * j] = du[i] * bv[j];
            out[2][i + 4 * j] = bu[i] * dv[j];
        }
    }
    out
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The dot products of `x`, `y` and `z` with `col`, in one pass over `col`.
pub(crate) fn dot3(x: &[f64], y: &[f64], z: &[f64], col: &[f64]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (((c, a), b), d) in col.iter().zip(x).zip(y).zip(z) {
        out[0] += a * c;
        out[1] += b * c;
        out[2] += d * c;
    }
    out
}

/// The level `m ≥ 1`, sub-patch (0, 1, 2 for `k = 1, 2, 3`) and local
/// parameters `(u, v)` of `(s, t)` (see the [module docs](self#evaluation));
/// `None` at `(0, 0)` (or NaN).
pub(crate) fn locate(s: f64, t: f64) -> Option<(u32, usize, f64, f64)> {
    let x = s.max(t);
    if x.is_nan() || x <= 0.0 {
        return None;
    }
    let m = level(x);
    let (s1, t1) = (scale_up(s, m - 1), scale_up(t, m - 1));
    Some(if s1 >= 0.5 {
        if t1 >= 0.5 { (m, 1, 2.0 * s1 - 1.0, 2.0 * t1 - 1.0) } else { (m, 0, 2.0 * s1 - 1.0, 2.0 * t1) }
    } else {
        (m, 2, 2.0 * s1, 2.0 * t1 - 1.0)
    })
}

/// The weights of a patch at `(s, t)` into `w` (one slice per quantity,
/// each as long as `limit`): at `(0, 0)` the limit mask and the tangent
/// masks, elsewhere `level` of the level, sub-patch and local parameters
/// [`locate`] gives.
///
/// # Panics
/// If a slice of `w` is not as long as `limit`.
pub(crate) fn patch_weights(
    s: f64,
    t: f64,
    w: [&mut [f64]; 3],
    limit: &[f64],
    tangents: &[Vec<f64>; 2],
    level: impl FnOnce(u32, usize, f64, f64, [&mut [f64]; 3]),
) {
    debug_assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t), "(s, t) = ({s}, {t}) outside [0, 1]²");
    assert!(w.iter().all(|x| x.len() == limit.len()), "the weights need {} entries each", limit.len());
    match locate(s, t) {
        Some((m, k, u, v)) => level(m, k, u, v, w),
        None => {
            let [w0, w1, w2] = w;
            w0.copy_from_slice(limit);
            w1.copy_from_slice(&tangents[0]);
            w2.copy_from_slice(&tangents[1]);
        }
    }
}

/// `w = bᵀ g` for the position and the two derivatives of the bicubic
/// basis `b` ([`tensor_basis`]), the derivatives times `scale`; `g` is 16 ×
/// K, column-major (column `j` contiguous).
pub(crate) fn apply(b: &[[f64; 16]; 3], g: &DMatrix<f64>, scale: f64, w: [&mut [f64]; 3]) {
    let [w0, w1, w2] = w;
    for (j, col) in g.as_slice().chunks_exact(16).enumerate() {
        let [x, y, z] = dot3(&b[0], &b[1], &b[2], col);
        (w0[j], w1[j], w2[j]) = (x, scale * y, scale * z);
    }
}

/// Powers of a subdivision matrix `A` as tables, for a patch whose `A` may
/// be defective: `tables[k][m − 2] = (P_k Ā − 1ℓ) A^{m−1}` for `m = 2 ..=
/// 64`, deflated by the limit mask `ℓ` (`ℓ A = ℓ`), so that the entries
/// shrink with the level and the derivatives' `2^m` does not magnify the
/// rounding of `ℓ`; below the tables, further products by `A`.
#[derive(Debug)]
pub(crate) struct PowerTables {
    tables: [Vec<DMatrix<f64>>; 3],
}

impl PowerTables {
    /// The tables of `A` with the sub-patches' `P_k Ā` (`picked`) and the
    /// limit mask `limit`.
    pub(crate) fn new(a: &DMatrix<f64>, picked: &[DMatrix<f64>; 3], limit: &[f64]) -> PowerTables {
        let ones_limit = DMatrix::from_fn(16, a.ncols(), |_, j| limit[j]);
        let tables = std::array::from_fn(|k| {
            let mut t = Vec::with_capacity(POWER_LEVELS as usize - 1);
            let mut cur = &picked[k] - &ones_limit;
            for _ in 2..=POWER_LEVELS {
                cur *= a;
                // Rounding along 1 ℓ would not decay: project it out.
                for mut row in cur.row_iter_mut() {
                    let sum = row.sum();
                    row.iter_mut().zip(limit).for_each(|(x, l)| *x -= sum * l);
                }
                t.push(cur.clone());
            }
            t
        });
        PowerTables { tables }
    }

    /// `(P_k Ā − 1ℓ) A^{63}`, the deepest table of sub-patch `k`.
    pub(crate) fn deepest(&self, k: usize) -> &DMatrix<f64> {
        self.tables[k].last().expect("tables")
    }

    /// The weights of sub-patch `k` of level `m ≥ 2` for the basis `b`.
    pub(crate) fn weights(
        &self,
        a: &DMatrix<f64>,
        limit: &[f64],
        m: u32,
        k: usize,
        b: &[[f64; 16]; 3],
        w: [&mut [f64]; 3],
    ) {
        let [w0, w1, w2] = w;
        let kk = a.ncols();
        let top = m.min(POWER_LEVELS);
        apply(b, &self.tables[k][top as usize - 2], pow2(top as i32), [&mut *w0, &mut *w1, &mut *w2]);
        // Below the tables: w ← w A, derivatives also ×2 per level.
        let mut tmp = [[0.0; MAX_LEN]; 3];
        for _ in top..m {
            for (j, col) in a.as_slice().chunks_exact(kk).enumerate() {
                let [x, y, z] = dot3(w0, w1, w2, col);
                (tmp[0][j], tmp[1][j], tmp[2][j]) = (x, 2.0 * y, 2.0 * z);
            }
            for (w, t) in [&mut *w0, &mut *w1, &mut *w2].into_iter().zip(&tmp) {
                let sum: f64 = t[..kk].iter().sum();
                w.iter_mut().zip(&t[..kk]).zip(limit).for_each(|((w, t), l)| *w = t - sum * l);
            }
        }
        for (w, l) in w0.iter_mut().zip(limit) {
            *w += l;
        }
    }
}

/// The spectrum of `A` from the Schur forms of its blocks `S` and `S₁₂`.
fn spectrum(n: usize, a: &DMatrix<f64>) -> Result<Spectrum, StamError> {
    let ring = 2 * n + 1;
    Spectrum::new(a, Some(&[ring, a.nrows() - ring])).map_err(|e| {
        let what = match e {
            EigenError::Complex { .. } => "complex eigenvalues",
            EigenError::NoConvergence => "the Schur iteration did not converge",
            _ => "the subdivision matrix is malformed",
        };
        StamError::Eigen { valence: n, what, residual: 0.0 }
    })
}

/// The precomputed products that raise `A` to a power.
#[derive(Debug)]
enum Powers {
    /// `A = V Λ V⁻¹`; `e[k] = P_k Ā V` (16 × K).
    Eigen { eigen: Eigen, e: [DMatrix<f64>; 3] },
    /// Deflated tables of `P_k Ā A^{m−1}` ([`PowerTables`]).
    Tables { tables: PowerTables },
}

/// Stam's exact evaluation of the Catmull-Clark patch next to one interior
/// extraordinary vertex of a given valence (see the [module docs](self)).
#[derive(Debug)]
pub struct StamPatch {
    valence: usize,
    len: usize,
    /// `A` (K × K).
    a: DMatrix<f64>,
    /// `Ā` ((K + 9) × K).
    extended: DMatrix<f64>,
    /// `P_k Ā` (16 × K) of each sub-patch.
    picked: [DMatrix<f64>; 3],
    /// Λ's diagonal, descending.
    eigenvalues: Vec<f64>,
    powers: Powers,
    limit: Vec<f64>,
    tangents: [Vec<f64>; 2],
}

/// The built patches, one per valence.
static PATCHES: [OnceLock<Result<Arc<StamPatch>, StamError>>; MAX_VALENCE + 1] =
    [const { OnceLock::new() }; MAX_VALENCE + 1];

impl StamPatch {
    /// The patch of valence `valence`, built on the first call for that
    /// valence and shared for the rest of the process.
    ///
    /// # Errors
    /// [`StamError::Valence`] outside `3 ..= MAX_VALENCE`; the other
    /// variants if the construction fails (not expected for any supported
    /// valence).
    pub fn get(valence: usize) -> Result<Arc<StamPatch>, StamError> {
        match PATCHES.get(valence) {
            Some(cell) if valence >= 3 => cell.get_or_init(|| Self::build(valence, false).map(Arc::new)).clone(),
            _ => Err(StamError::Valence { valence }),
        }
    }

    /// Builds the patch; `tables` forces [`Representation::Powers`].
    fn build(n: usize, tables: bool) -> Result<StamPatch, StamError> {
        if !(3..=MAX_VALENCE).contains(&n) {
            return Err(StamError::Valence { valence: n });
        }
        let kk = 2 * n + 8;
        // The local model of a closed fan (`crate::fan`): every point of
        // the patch's rings exists, so no phantom enters the sub-patches.
        let (extended, picked) =
            crate::fan::Fan { n, closed: true }.extended(0).ok_or(StamError::Support { valence: n })?;
        let a = extended.rows(0, kk).into_owned();
        let spectrum = spectrum(n, &a)?;
        let groups = spectrum.groups();
        let eigen_error = |what| StamError::Eigen { valence: n, what, residual: 0.0 };

        // Eigenvalue 1: simple, its left eigenvector the limit mask.
        let unit = groups.first().ok_or(eigen_error("no eigenvalues"))?;
        let Some(unit_left) = unit.left().filter(|_| unit.size() == 1) else {
            return Err(eigen_error("eigenvalue 1 is not simple"));
        };
        if (unit.value() - 1.0).abs() > 1e-12 {
            return Err(StamError::Eigen {
                valence: n,
                what: "the dominant eigenvalue is not 1",
                residual: unit.value() - 1.0,
            });
        }
        let sum: f64 = unit_left.iter().sum();
        let limit: Vec<f64> = unit_left.iter().map(|x| x / sum).collect();

        // The subdominant pair: the tangent masks.
        let sub = groups.get(1).ok_or(eigen_error("no subdominant eigenvalue"))?;
        let (Some(r1), Some(l1), 2) = (sub.right(), sub.left(), sub.size()) else {
            return Err(eigen_error("the subdominant eigenvalue is not a non-defective double eigenvalue"));
        };
        let projector = r1 * (l1 * r1).try_inverse().ok_or(eigen_error("singular subdominant eigenvectors"))? * l1;
        let tangents = [(0, 1.0, 0.0), (2, 0.0, 1.0)].map(|(k, u, v)| {
            let b = tensor_basis(u, v)[0];
            let phi = DMatrix::from_fn(1, kk, |_, j| dot(&b, picked[k].column(j).as_slice()));
            (phi * &projector).iter().copied().collect::<Vec<f64>>()
        });

        // Every row of A sums to 1: the dominant eigenvalue is exactly 1, its
        // eigenvector the all-ones vector.
        let mut eigenvalues = spectrum.values();
        eigenvalues[0] = 1.0;
        let powers = match (!tables).then(|| spectrum.decompose(RowSums::One).ok()).flatten() {
            Some(eigen) => {
                eigenvalues = eigen.values().to_vec();
                let e = picked.clone().map(|p| p * eigen.vectors());
                Powers::Eigen { eigen, e }
            }
            None => {
                let tables = PowerTables::new(&a, &picked, &limit);
                Powers::Tables { tables }
            }
        };
        Ok(StamPatch { valence: n, len: kk, a, extended, picked, eigenvalues, powers, limit, tangents })
    }

    /// The valence `n` of the extraordinary vertex.
    pub fn valence(&self) -> usize {
        self.valence
    }

    /// The number of control points, `K = 2n + 8`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false` (a patch has `2n + 8 ≥ 14` control points); for
    /// symmetry with [`StamPatch::len`].
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The subdivision matrix `A` (`K × K`): row `i` is child control point
    /// `i` of the patch at `EV` over the parent's control points.
    pub fn subdivision_matrix(&self) -> &DMatrix<f64> {
        &self.a
    }

    /// The extended subdivision matrix `Ā` (`(K + 9) × K`): `A`'s rows, then
    /// the child points `(3,−1) (3,0) (3,1) (3,2) (3,3) (2,3) (1,3) (0,3)
    /// (−1,3)` in child grid coordinates.
    pub fn extended_matrix(&self) -> &DMatrix<f64> {
        &self.extended
    }

    /// The eigenvalues of `A`, descending (each as often as its algebraic
    /// multiplicity), in the column order of `V`
    /// ([`StamPatch::eigenvectors`]).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// `(V, V⁻¹)` with `A = V Λ V⁻¹` where `A` is diagonalisable
    /// ([`Representation::Eigen`]); `None` otherwise.
    pub fn eigenvectors(&self) -> Option<(&DMatrix<f64>, &DMatrix<f64>)> {
        match &self.powers {
            Powers::Eigen { eigen, .. } => Some((eigen.vectors(), eigen.inverse())),
            Powers::Tables { .. } => None,
        }
    }

    /// `‖V Λ V⁻¹ − A‖ / ‖A‖` (max norms) where `A` is diagonalised.
    pub fn reconstruction_error(&self) -> Option<f64> {
        match &self.powers {
            Powers::Eigen { eigen, .. } => Some(eigen.residual()),
            Powers::Tables { .. } => None,
        }
    }

    /// How the patch raises `A` to a power.
    pub fn representation(&self) -> Representation {
        match &self.powers {
            Powers::Eigen { .. } => Representation::Eigen,
            Powers::Tables { .. } => Representation::Powers,
        }
    }

    /// The limit mask: the weights of the limit position of `EV` (the
    /// position weights at `(0, 0)`).
    pub fn limit_mask(&self) -> &[f64] {
        &self.limit
    }

    /// The tangent masks `τ_s`, `τ_t` written as the derivative weights at
    /// `(0, 0)` (see the [module docs](self#at-the-extraordinary-vertex)).
    pub fn tangent_masks(&self) -> [&[f64]; 2] {
        [&self.tangents[0], &self.tangents[1]]
    }

    /// Writes the weights of the position, `∂/∂s` and `∂/∂t` of the patch at
    /// `(s, t)` into `w[0]`, `w[1]` and `w[2]`, one per control point. At
    /// `(0, 0)` the derivative weights are the tangent masks
    /// ([`StamPatch::tangent_masks`]). Allocation-free.
    ///
    /// The caller passes `0 ≤ s, t ≤ 1` (checked in debug builds only;
    /// outside, the result is the polynomial of the nearest sub-patch
    /// continued, and meaningless).
    ///
    /// For `n ≥ 5` the derivative weights grow as `(2λ₁)^m` towards `EV`
    /// (the parametrisation's derivative is unbounded there) and overflow
    /// only for parameters below about `2^{−1000}`.
    ///
    /// # Panics
    /// If a slice of `w` is not [`StamPatch::len`] long.
    pub fn weights(&self, s: f64, t: f64, w: [&mut [f64]; 3]) {
        patch_weights(s, t, w, &self.limit, &self.tangents, |m, k, u, v, w| self.level_weights(m, k, u, v, w));
    }

    /// The weights of sub-patch `k` (0, 1, 2 for `k = 1, 2, 3`) of level `m`
    /// at its local parameters `(u, v)`.
    fn level_weights(&self, m: u32, k: usize, u: f64, v: f64, w: [&mut [f64]; 3]) {
        let kk = self.len;
        let b = tensor_basis(u, v);
        let [w0, w1, w2] = w;
        if m <= 1 {
            apply(&b, &self.picked[k], 2.0, [w0, w1, w2]);
            return;
        }
        match &self.powers {
            Powers::Eigen { eigen, e } => {
                let mut c = [[0.0; MAX_LEN]; 3];
                let p = (m - 1) as i32;
                for (i, col) in e[k].as_slice().chunks_exact(16).enumerate() {
                    let l = self.eigenvalues[i];
                    // Column 0 is the constant eigenvector: no derivative.
                    let d = if i == 0 { 0.0 } else { 2.0 * (2.0 * l).powi(p) };
                    let [x, y, z] = dot3(&b[0], &b[1], &b[2], col);
                    (c[0][i], c[1][i], c[2][i]) = (x * l.powi(p), y * d, z * d);
                }
                for (j, col) in eigen.inverse().as_slice().chunks_exact(kk).enumerate() {
                    (w0[j], w1[j], w2[j]) = dot3(&c[0][..kk], &c[1][..kk], &c[2][..kk], col).into();
                }
            }
            Powers::Tables { tables } => tables.weights(&self.a, &self.limit, m, k, &b, [w0, w1, w2]),
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use subla_algebra::Par;
    use subla_catmark::CatmarkSlak;
    use subla_scheme::{Plan, Refiner, eval};

    use super::*;
    use crate::fan::{EXTRA, Fan, OUTER};

    use crate::test_rng::Rng;

    /// Parameters on the edges, near them, at the seams and inside.
    fn samples() -> Vec<(f64, f64)> {
        let xs =
            [0.0, 1e-300, 1e-9, 1e-5, 0.01, 0.1, 0.2, 0.25, 0.3, 0.5 - 1e-12, 0.5, 0.6, 0.75, 0.9, 1.0 - 1e-12, 1.0];
        let mut out: Vec<(f64, f64)> = xs.iter().flat_map(|&s| xs.iter().map(move |&t| (s, t))).collect();
        let mut rng = Rng(7);
        for _ in 0..200 {
            let (s, t) = (rng.next(), rng.next());
            out.push((s, t));
            out.push((s * 1e-3, t * 1e-3));
        }
        out
    }

    fn weights(p: &StamPatch, s: f64, t: f64) -> [Vec<f64>; 3] {
        let mut w = [vec![0.0; p.len()], vec![0.0; p.len()], vec![0.0; p.len()]];
        let [a, b, c] = &mut w;
        p.weights(s, t, [a, b, c]);
        w
    }

    fn level_weights(p: &StamPatch, m: u32, k: usize, u: f64, v: f64) -> [Vec<f64>; 3] {
        let mut w = [vec![0.0; p.len()], vec![0.0; p.len()], vec![0.0; p.len()]];
        let [a, b, c] = &mut w;
        p.level_weights(m, k, u, v, [a, b, c]);
        w
    }

    /// The largest difference of two weight sets, relative to their size
    /// (at least 1).
    fn difference(x: &[Vec<f64>; 3], y: &[Vec<f64>; 3]) -> f64 {
        (0..3)
            .map(|d| {
                let scale = x[d].iter().chain(&y[d]).fold(1.0f64, |m, v| m.max(v.abs()));
                x[d].iter().zip(&y[d]).fold(0.0f64, |m, (a, b)| m.max((a - b).abs())) / scale
            })
            .fold(0.0, f64::max)
    }

    /// Grid coordinates of the control points for `n = 4`.
    fn regular_grid() -> Vec<(i64, i64)> {
        let mut g = vec![(0, 0)];
        let rays = [(1, 0), (0, 1), (-1, 0), (0, -1)];
        for k in 0..4 {
            let (e, f) = (rays[k], rays[(k + 1) % 4]);
            g.push(e);
            g.push((e.0 + f.0, e.1 + f.1));
        }
        g.extend(OUTER);
        g
    }

    #[test]
    fn regular_valence_is_the_bicubic_b_spline() {
        let p = StamPatch::get(4).unwrap();
        let grid = regular_grid();
        assert_eq!(grid[2 + 2 * 2], (-1, -1));
        assert_eq!(grid[2 + 2 * 3], (1, -1));
        let mut worst: f64 = 0.0;
        for (s, t) in samples() {
            let w = weights(&p, s, t);
            let (bs, ds, bt, dt) = (basis(s), basis_derivative(s), basis(t), basis_derivative(t));
            for (c, &(i, j)) in grid.iter().enumerate() {
                let (i, j) = ((i + 1) as usize, (j + 1) as usize);
                let expected = [bs[i] * bt[j], ds[i] * bt[j], bs[i] * dt[j]];
                for d in 0..3 {
                    worst = worst.max((w[d][c] - expected[d]).abs());
                }
            }
        }
        assert!(worst <= 1e-13, "{worst:e}");
        // The corner: the B-spline's derivatives there are the tangent masks.
        let w = weights(&p, 0.0, 0.0);
        assert_eq!(w[0], p.limit_mask());
        assert_eq!([w[1].as_slice(), w[2].as_slice()], p.tangent_masks());
    }

    #[test]
    fn construction_rows_sum_to_one_and_reduce_to_the_tensor_product() {
        for n in 3..=MAX_VALENCE {
            let p = StamPatch::get(n).unwrap();
            let (a, ext) = (p.subdivision_matrix(), p.extended_matrix());
            assert_eq!((a.nrows(), a.ncols(), ext.nrows(), ext.ncols()), (2 * n + 8, 2 * n + 8, 2 * n + 17, 2 * n + 8));
            assert_eq!(&ext.rows(0, 2 * n + 8), a);
            for r in 0..ext.nrows() {
                let sum: f64 = ext.row(r).iter().sum();
                assert!((sum - 1.0).abs() < 1e-14, "n = {n}, row {r}: {sum}");
                assert!(ext.row(r).iter().all(|&x| x >= 0.0));
            }
            // EV, E_k and D_k read only EV, E_k and D_k.
            assert_eq!(a.view((0, 2 * n + 1), (2 * n + 1, 7)).amax(), 0.0);
        }
        // n = 4: each child row is the product of the cubic B-spline's 1D
        // refinement masks (1/8, 6/8, 1/8 at even, 1/2, 1/2 at odd points).
        let p = StamPatch::get(4).unwrap();
        let grid = regular_grid();
        let rows: Vec<(i64, i64)> = grid.iter().copied().chain(EXTRA).collect();
        let mask = |x: i64| -> Vec<(i64, f64)> {
            if x % 2 == 0 {
                vec![(x / 2 - 1, 0.125), (x / 2, 0.75), (x / 2 + 1, 0.125)]
            } else {
                vec![(x.div_euclid(2), 0.5), (x.div_euclid(2) + 1, 0.5)]
            }
        };
        for (r, &(i, j)) in rows.iter().enumerate() {
            let mut expected = vec![0.0; 16];
            for (pi, wi) in mask(i) {
                for &(pj, wj) in &mask(j) {
                    let c = grid.iter().position(|&g| g == (pi, pj)).unwrap();
                    expected[c] += wi * wj;
                }
            }
            let row: Vec<f64> = p.extended_matrix().row(r).iter().copied().collect();
            assert_eq!(row, expected, "child ({i}, {j})");
        }
    }

    #[test]
    fn weights_are_affine() {
        for n in (3..=8).chain([12, 16]) {
            let p = StamPatch::get(n).unwrap();
            for (s, t) in samples() {
                let w = weights(&p, s, t);
                let scale = w[1].iter().chain(&w[2]).fold(1.0f64, |m, x| m.max(x.abs()));
                let sums = w.clone().map(|x| x.iter().sum::<f64>());
                assert!((sums[0] - 1.0).abs() < 1e-12, "n = {n} at ({s}, {t}): {sums:?}");
                assert!(
                    sums[1].abs() < 1e-12 * scale && sums[2].abs() < 1e-12 * scale,
                    "n = {n} at ({s}, {t}): {sums:?}"
                );
            }
        }
    }

    /// The subdominant eigenvalue of Catmull-Clark at valence `n`.
    fn subdominant(n: usize) -> f64 {
        let (c1, c2) = ((std::f64::consts::PI / n as f64).cos(), (2.0 * std::f64::consts::PI / n as f64).cos());
        (5.0 + c2 + c1 * (2.0 * (9.0 + c2)).sqrt()) / 16.0
    }

    #[test]
    fn eigenstructure_reproduces_the_subdivision_matrix() {
        for n in 3..=MAX_VALENCE {
            let p = StamPatch::get(n).unwrap();
            let a = p.subdivision_matrix();
            let (v, v_inv) = p.eigenvectors().expect("diagonalisable");
            assert_eq!(p.representation(), Representation::Eigen);
            let lambda = DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(p.eigenvalues()));
            let error = (v * lambda * v_inv - a).amax() / a.amax();
            assert!(error <= 1e-11, "n = {n}: {error:e}");
            assert_eq!(p.reconstruction_error().map(|e| e <= 1e-11), Some(true));
            // Each column is an eigenvector.
            for (j, &l) in p.eigenvalues().iter().enumerate() {
                let r = (a * v.column(j) - v.column(j) * l).amax() / v.column(j).amax();
                assert!(r < 1e-12, "n = {n}, eigenvalue {l}: {r:e}");
            }
            let e = p.eigenvalues();
            assert_eq!(e.len(), 2 * n + 8);
            assert!(e.windows(2).all(|x| x[0] >= x[1]));
            // 1 is simple, then the double subdominant eigenvalue.
            assert_eq!(e[0], 1.0);
            assert!(e[1] < 1.0 - 1e-3);
            assert!((e[1] - subdominant(n)).abs() < 1e-13 && (e[2] - subdominant(n)).abs() < 1e-13, "n = {n}: {e:?}");
            assert!(e[3] < e[2] - 1e-3);
        }
    }

    #[test]
    fn limit_mask_is_catmull_clarks() {
        for n in 3..=MAX_VALENCE {
            let p = StamPatch::get(n).unwrap();
            let d = (n * (n + 5)) as f64;
            for (c, &w) in p.limit_mask().iter().enumerate() {
                let expected = match c {
                    0 => (n * n) as f64 / d,
                    c if c <= 2 * n => [1.0, 4.0][c % 2] / d,
                    _ => 0.0,
                };
                assert!((w - expected).abs() < 1e-14, "n = {n}, point {c}: {w} vs {expected}");
            }
        }
    }

    #[test]
    fn seams_between_levels_and_sub_patches_agree() {
        for n in [3, 4, 5, 6, 8, 16] {
            let p = StamPatch::get(n).unwrap();
            let mut worst: f64 = 0.0;
            for m in 1..=8 {
                for i in 0..=16 {
                    let x = f64::from(i) / 16.0;
                    // s = 2^{−m} (k = 1 below, 1 or 2 a level down) and
                    // t = 2^{−m} (k = 3, or 2).
                    let below = if x < 0.5 { (0, 1.0, 2.0 * x) } else { (1, 1.0, 2.0 * x - 1.0) };
                    let a = level_weights(&p, m, 0, 0.0, x);
                    let b = level_weights(&p, m + 1, below.0, below.1, below.2);
                    worst = worst.max(difference(&a, &b));
                    let below = if x < 0.5 { (2, 2.0 * x, 1.0) } else { (1, 2.0 * x - 1.0, 1.0) };
                    let a = level_weights(&p, m, 2, x, 0.0);
                    let b = level_weights(&p, m + 1, below.0, below.1, below.2);
                    worst = worst.max(difference(&a, &b));
                    // Between the sub-patches of a level.
                    worst = worst.max(difference(&level_weights(&p, m, 1, 0.0, x), &level_weights(&p, m, 2, 1.0, x)));
                    worst = worst.max(difference(&level_weights(&p, m, 1, x, 0.0), &level_weights(&p, m, 0, x, 1.0)));
                }
                // Through the public evaluation, on both sides of the seams.
                let h = f64::from(1u32 << m).recip();
                for (s, t) in [(h, 0.3 * h), (h, h), (0.6 * h, h), (h, 0.5 * h), (0.5 * h, h), (0.0, h), (h, 0.0)] {
                    for (ds, dt) in [(1e-12, 0.0), (0.0, 1e-12), (1e-12, 1e-12)] {
                        let lo = weights(&p, s * (1.0 - ds), t * (1.0 - dt));
                        let hi = weights(&p, (s * (1.0 + ds)).min(1.0), (t * (1.0 + dt)).min(1.0));
                        worst = worst.max(difference(&lo, &weights(&p, s, t)));
                        worst = worst.max(difference(&hi, &weights(&p, s, t)));
                    }
                }
            }
            assert!(worst < 1e-9, "n = {n}: {worst:e}");
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for n in [3, 5, 8] {
            let p = StamPatch::get(n).unwrap();
            let h = 1e-6;
            for (s, t) in [(0.3, 0.7), (0.55, 0.2), (0.05, 0.02), (0.9, 0.9), (0.01, 0.3)] {
                let w = weights(&p, s, t);
                let (sp, sm) = (weights(&p, s + h, t), weights(&p, s - h, t));
                let (tp, tm) = (weights(&p, s, t + h), weights(&p, s, t - h));
                for c in 0..p.len() {
                    let fd = [(sp[0][c] - sm[0][c]) / (2.0 * h), (tp[0][c] - tm[0][c]) / (2.0 * h)];
                    assert!((fd[0] - w[1][c]).abs() < 1e-6, "n = {n} ({s}, {t}) point {c}: {fd:?}");
                    assert!((fd[1] - w[2][c]).abs() < 1e-6, "n = {n} ({s}, {t}) point {c}: {fd:?}");
                }
            }
        }
    }

    #[test]
    fn tangent_masks_are_the_first_order_terms_along_the_rays() {
        for n in 3..=MAX_VALENCE {
            let p = StamPatch::get(n).unwrap();
            let [ts, tt] = p.tangent_masks();
            let ring = 2 * n + 1;
            assert!(ts[ring..].iter().chain(&tt[ring..]).all(|x| x.abs() < 1e-14));
            assert!(ts.iter().sum::<f64>().abs() < 1e-14 && tt.iter().sum::<f64>().abs() < 1e-14);
            // Left eigenvectors of λ₁.
            let l1 = p.eigenvalues()[1];
            for tau in [ts, tt] {
                let row = DMatrix::from_row_slice(1, p.len(), tau);
                assert!((&row * p.subdivision_matrix() - &row * l1).amax() < 1e-14);
            }
            // The derivative along ray 1 seen from face 0 is the one along
            // ray 0 seen from face 0, turned by a sector.
            for k in 0..n {
                let j = (k + n - 1) % n;
                assert!((tt[1 + 2 * k] - ts[1 + 2 * j]).abs() < 1e-14, "n = {n} {:e}", tt[1 + 2 * k] - ts[1 + 2 * j]);
                assert!((tt[2 + 2 * k] - ts[2 + 2 * j]).abs() < 1e-14, "n = {n} {:e}", tt[2 + 2 * k] - ts[2 + 2 * j]);
            }
            assert!((tt[0] - ts[0]).abs() < 1e-14);
            // x(2^{−q}, 0) − x(0, 0) = λ₁^q τ_s + O(μ₂^q).
            if n != 4 && n <= 6 {
                let mu2 = p.eigenvalues()[3];
                let q = 12;
                let x = pow2(-q);
                for (w, tau) in [(weights(&p, x, 0.0), ts), (weights(&p, 0.0, x), tt)] {
                    let scale = l1.powi(q);
                    let bound = 10.0 * (mu2 / l1).powi(q) + 1e-15 / scale;
                    for c in 0..p.len() {
                        let first = (w[0][c] - p.limit_mask()[c]) / scale;
                        assert!((first - tau[c]).abs() < bound, "n = {n}, point {c}: {first} vs {}", tau[c]);
                    }
                }
            }
        }
    }

    #[test]
    fn tables_of_powers_agree_with_the_eigenvectors() {
        for n in [3, 5, 8] {
            let eigen = StamPatch::get(n).unwrap();
            let tables = StamPatch::build(n, true).unwrap();
            assert_eq!(tables.representation(), Representation::Powers);
            assert!(tables.eigenvectors().is_none() && tables.reconstruction_error().is_none());
            let mut rng = Rng(11);
            for j in 0..80 {
                let (s, t) = (rng.next() * pow2(-j), rng.next() * pow2(-j));
                let (a, b) = (weights(&eigen, s, t), weights(&tables, s, t));
                let d = difference(&a, &b);
                assert!(d < 1e-12, "n = {n} at ({s:e}, {t:e}): {d:e}");
            }
        }
    }

    #[test]
    fn levels_scale_exactly_down_to_subnormals() {
        assert_eq!(level(1.0), 1);
        assert_eq!(level(0.5), 1);
        assert_eq!(level(0.75), 1);
        assert_eq!(level(f64::from_bits(0.5f64.to_bits() - 1)), 2);
        assert_eq!(level(0.25), 2);
        assert_eq!(level(f64::MIN_POSITIVE), 1022);
        assert_eq!(level(f64::from_bits(1)), 1074);
        assert_eq!(scale_up(f64::from_bits(1), 1073), 0.5);
        assert_eq!(scale_up(3.0 * pow2(-700), 700), 3.0);
        for n in [3, 4, 5] {
            let p = StamPatch::get(n).unwrap();
            let w = weights(&p, f64::from_bits(1), f64::from_bits(1));
            assert!(w[0].iter().zip(p.limit_mask()).all(|(a, b)| (a - b).abs() < 1e-14));
            if n <= 4 {
                assert!(w[1].iter().chain(&w[2]).all(|x| x.is_finite()));
            }
        }
    }

    #[test]
    fn valences_outside_the_range_are_refused() {
        for valence in [0, 1, 2, MAX_VALENCE + 1, 100] {
            assert_eq!(StamPatch::get(valence).unwrap_err(), StamError::Valence { valence });
        }
        let (a, b) = (StamPatch::get(5).unwrap(), StamPatch::get(5).unwrap());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((a.valence(), a.len(), a.is_empty()), (5, 18, false));
    }

    #[test]
    fn agrees_with_uniform_catmull_clark_refinement_and_limits() {
        const LEVELS: u32 = 3;
        for n in [3, 5] {
            let p = StamPatch::get(n).unwrap();
            // A disk of `n` quarter grids of 5 × 5 quads around a vertex of
            // valence `n` (vertex 0), every other inner vertex of valence 4.
            let (mesh, index) = crate::fan::fan_mesh(Fan { n, closed: true }, 5);
            let t = mesh.topology();
            assert_eq!(t.valence(0), n);
            // The control points, gathered in the documented order.
            let mut control = vec![index[&(0, 0, 0)]];
            for k in 0..n {
                control.push(index[&(k, 1, 0)]);
                control.push(index[&(k, 1, 1)]);
            }
            // Sector n − 1's (1, 2); sector 0's (2, 0) (2, 1) (2, 2) (1, 2);
            // sector 1's (2, 0) (2, 1).
            let outer = [(n - 1, 1, 2), (0, 2, 0), (0, 2, 1), (0, 2, 2), (0, 1, 2), (1, 2, 0), (1, 2, 1)];
            control.extend(outer.iter().map(|o| index[o]));
            let mut rng = Rng(n as u64);
            let x = Array2::from_shape_fn((mesh.num_vertices(), 3), |_| 2.0 * rng.next() - 1.0);
            let at = |w: &[f64]| -> [f64; 3] {
                let mut y = [0.0; 3];
                for (c, &wc) in w.iter().enumerate() {
                    for (d, yd) in y.iter_mut().enumerate() {
                        *yd += wc * x[(control[c] as usize, d)];
                    }
                }
                y
            };

            // (a) The limit position of EV.
            let plan = CatmarkSlak.build(&mesh, LEVELS, Par::Seq).unwrap();
            let fine = eval(&plan, x.view(), Par::Seq).unwrap();
            let limit = plan.limit(Par::Seq).unwrap();
            let limit_of = |v: u32| -> [f64; 3] {
                let (cols, vals) = limit.as_ref().row(v as usize);
                let mut y = [0.0; 3];
                for (&c, &w) in cols.iter().zip(vals) {
                    for (d, yd) in y.iter_mut().enumerate() {
                        *yd += w * fine[(c as usize, d)];
                    }
                }
                y
            };

            // (b) The vertices over face 0 after the steps.
            let grid = crate::fan::refined_quad(&plan, LEVELS, [control[0], control[1], control[2], control[3]]);
            let side = 1u32 << LEVELS;
            let mut worst: f64 = 0.0;
            for ((i, j), &v) in &grid {
                let (s, t) = (f64::from(*i) / f64::from(side), f64::from(*j) / f64::from(side));
                let ours = at(&weights(&p, s, t)[0]);
                let theirs = limit_of(v);
                for d in 0..3 {
                    worst = worst.max((ours[d] - theirs[d]).abs());
                }
            }
            assert_eq!(grid.len(), ((side + 1) * (side + 1)) as usize);
            assert!(worst < 1e-12, "n = {n}: {worst:e}");

            // (a) φ(0, 0) is the limit operator's row at EV on level 0.
            let coarse = CatmarkSlak.build(&mesh, 1, Par::Seq).unwrap();
            let r0 = coarse.operator(0, Par::Seq).unwrap();
            let l1 = coarse.limit(Par::Seq).unwrap();
            let mut row = vec![0.0; mesh.num_vertices()];
            let (cols, vals) = l1.as_ref().row(0);
            for (&c, &w) in cols.iter().zip(vals) {
                let (cols0, vals0) = r0.as_ref().row(c as usize);
                for (&c0, &w0) in cols0.iter().zip(vals0) {
                    row[c0 as usize] += w * w0;
                }
            }
            let mut ours = vec![0.0; mesh.num_vertices()];
            for (c, &w) in weights(&p, 0.0, 0.0)[0].iter().enumerate() {
                ours[control[c] as usize] += w;
            }
            let d = row.iter().zip(&ours).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(d < 1e-14, "n = {n}: {d:e}");
        }
    }
}
