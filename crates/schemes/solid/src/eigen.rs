//! Eigen-decompositions `A = V Λ V⁻¹` of real square matrices with real
//! eigenvalues, such as the local subdivision matrices around an
//! extraordinary vertex or edge, whose powers `A^p = V Λ^p V⁻¹` and
//! eigenvectors describe the limit there.
//!
//! # Method
//! With `s = max(1, max |a_ij|)` the scale of `A`:
//!
//! 1. **Eigenvalues** come from the real Schur form of `A`, or, where `A` is
//!    block lower-triangular and the sizes of its diagonal blocks are given,
//!    from the Schur forms of those blocks (the eigenvalues of a block
//!    triangular matrix are those of its diagonal blocks; the smaller
//!    problems do not mix eigenvalues of different blocks and are more
//!    accurate). An eigenvalue whose imaginary part exceeds
//!    [`GROUP_TOLERANCE`]` · s` makes the real decomposition impossible.
//!    nalgebra's Schur iteration has no exceptional shifts and can stall at
//!    multiple eigenvalues; where it has not converged after
//!    `30 · max(n, 10)` sweeps, the eigenvalues come from an implicit
//!    double-shift QR iteration on the Hessenberg form instead, with
//!    exceptional shifts and deflation also where a subdiagonal entry is
//!    below `ε ‖H‖_F` (backward stable; multiple eigenvalues then come out
//!    split by up to about the square root of the rounding, which steps 2
//!    and 3 absorb).
//! 2. **Grouping.** Sorted by decreasing value, a group starts at the
//!    largest eigenvalue not yet grouped and takes every eigenvalue at most
//!    [`GROUP_TOLERANCE`]` · s` below it. A multiple eigenvalue comes out of
//!    the Schur form split by rounding (by about `ε^{1/k}` where it belongs
//!    to a `k × k` Jordan block, by about `ε` times its condition number
//!    otherwise) and is joined back into one group; distinct eigenvalues
//!    closer than the tolerance are joined too (their group then fails the
//!    test of step 3).
//! 3. **Eigenvectors.** A group of `p` eigenvalues around their mean `μ`
//!    has as right eigenvectors the `p` right singular vectors of `A − μI`
//!    with the smallest singular values, and as left eigenvectors those of
//!    `(A − μI)ᵀ`, provided the `p`-th smallest singular value of both is at
//!    most [`NULL_TOLERANCE`]` · s` (the eigenvectors of `μ` span a space of
//!    dimension `p`). One step of inverse iteration sharpens each basis,
//!    which is kept orthonormal. Where that singular value is above the
//!    null tolerance but within the group tolerance (the mean is off, as
//!    with the split of step 1), `μ` is replaced by the Rayleigh quotient of
//!    step 4 from these approximate bases and the test is made once more.
//!
//!    For matrices larger than 64 a simple group (`p = 1`) first tries two
//!    steps of inverse iteration with `H − μI` (`A = Q H Qᵀ` its Hessenberg
//!    form, computed once; `O(n²)` per group instead of two singular value
//!    decompositions), accepted if `|(A − μI) x| ≤ NULL_TOLERANCE · s` for
//!    the unit right and left eigenvectors and these are not orthogonal;
//!    otherwise it takes the singular vectors as above.
//! 4. **Rayleigh refinement.** With `R` the right eigenvectors (columns) and
//!    `L` the left ones (rows), the group's value becomes the two-sided
//!    Rayleigh quotient `tr((L R)⁻¹ L A R) / p`. The groups are then sorted
//!    by decreasing value (stably).
//! 5. **Decomposition.** `V` holds the right eigenvectors of the groups in
//!    their order, `Λ` the groups' values (each `p` times), `V⁻¹` comes from
//!    an LU factorisation, and the decomposition is accepted if
//!    `max |V Λ V⁻¹ − A| ≤ RECONSTRUCTION_TOLERANCE · max |A|`
//!    ([`RECONSTRUCTION_TOLERANCE`] is `1e−11`).
//!
//! Steps 1 – 4 alone ([`Spectrum`]) give the eigenvalues and the eigenvectors
//! of every group whose eigenvectors span, even where others do not;
//! [`Eigen`] adds step 5 and needs all of them.
//!
//! # Refusals
//! * [`EigenError::Shape`]: the matrix is empty or not square;
//!   [`EigenError::Blocks`]: the block sizes do not partition it, or an
//!   entry above the diagonal blocks is not zero (larger than `1e−14 · s`);
//!   [`EigenError::NotFinite`]: an entry is infinite or NaN.
//! * [`EigenError::Complex`]: an eigenvalue has an imaginary part above
//!   `GROUP_TOLERANCE · s` (rotations, for instance).
//! * [`EigenError::Defective`]: a group's eigenvectors do not span (a Jordan
//!   block, or distinct eigenvalues grouped together), `V` is singular, or
//!   `V Λ V⁻¹` does not reproduce `A` to the tolerance (eigenvectors too
//!   close to parallel for the accuracy asked).
//! * [`EigenError::NoConvergence`]: the Schur (both iterations of step 1) or
//!   a singular value iteration did not converge.
//!
//! # Matrices with unit row sums
//! Where every row of `A` sums to 1 (affine subdivision rules), `1` is an
//! eigenvalue with the all-ones right eigenvector.
//! [`Spectrum::decompose`] with [`RowSums::One`] uses that: the group
//! within tolerance of 1 takes the value 1 exactly and, if it is simple,
//! the all-ones vector as its eigenvector. The assumption is not checked up
//! front; if it is wrong, the reconstruction check fails.
//!
//! ```
//! use nalgebra::DMatrix;
//! use subla_solid::eigen::Eigen;
//! let a = DMatrix::from_row_slice(3, 3, &[0.5, 0.25, 0.25, 0.0, 0.75, 0.25, 0.0, 0.0, 1.0]);
//! let e = Eigen::decompose(&a, None)?;
//! assert!((e.values()[0] - 1.0).abs() < 1e-14 && (e.values()[2] - 0.5).abs() < 1e-14);
//! assert!((e.power(3) - &a * &a * &a).amax() < 1e-14);
//! # Ok::<(), subla_solid::eigen::EigenError>(())
//! ```
use nalgebra::{DMatrix, DVector};

/// Eigenvalues closer than this (times the scale `max(1, max |a_ij|)`) are
/// one group, and imaginary parts up to this are taken for zero.
pub const GROUP_TOLERANCE: f64 = 1e-6;

/// Largest singular value of `A − μI` (relative to the scale) accepted for
/// the eigenvectors of a group.
pub const NULL_TOLERANCE: f64 = 1e-10;

/// Largest relative (max-norm) error of `V Λ V⁻¹` against `A` accepted by
/// [`Eigen`].
pub const RECONSTRUCTION_TOLERANCE: f64 = 1e-11;

/// Largest entry (relative to the scale) above the diagonal blocks of a
/// block lower-triangular matrix.
const BLOCK_TOLERANCE: f64 = 1e-14;

/// Matrices up to this size take every group's eigenvectors from singular
/// vectors; larger ones try inverse iteration first for simple groups.
const SINGULAR_VECTORS_UP_TO: usize = 64;

/// Iterations allowed to the Schur and singular value decompositions.
const MAX_ITERATIONS: usize = 100_000;

/// Why a matrix has no real eigen-decomposition here.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum EigenError {
    /// The matrix is not square, or empty.
    #[error("the matrix is {rows} × {cols}: a non-empty square matrix is needed")]
    Shape {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// The block sizes do not describe a block lower-triangular matrix:
    /// they are not positive, do not sum to its size, or an entry above the
    /// diagonal blocks is not zero.
    #[error("the diagonal blocks do not fit the matrix: {what}")]
    Blocks {
        /// What does not fit.
        what: &'static str,
    },
    /// An entry is infinite or NaN.
    #[error("entry ({row}, {col}) is not finite")]
    NotFinite {
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
    },
    /// The spectrum has a complex pair (`|Im|` above the tolerance): the
    /// real decomposition does not exist.
    #[error("complex eigenvalues {re} ± {im}i: there is no real decomposition")]
    Complex {
        /// The real part (of the pair with the largest imaginary part).
        re: f64,
        /// The imaginary part, positive.
        im: f64,
    },
    /// The eigenvectors do not span (a Jordan block) or the decomposition
    /// does not reproduce the matrix.
    #[error("eigenvalue {value}: the eigenvectors do not span or do not reproduce the matrix (residual {residual:e})")]
    Defective {
        /// The eigenvalue whose eigenvectors fail: the group whose null
        /// space is too small, or, where `V Λ V⁻¹` fails, the one with the
        /// largest condition number `|V⁻¹ row| · |V column|`.
        value: f64,
        /// The relative size of the failure: the group's `p`-th smallest
        /// singular value over the scale, the reconstruction error, or
        /// infinity where `V` or `L R` is singular.
        residual: f64,
    },
    /// The Schur / SVD iteration did not converge.
    #[error("the Schur or singular value iteration did not converge")]
    NoConvergence,
}

/// What [`Spectrum::decompose`] may assume about the rows of the matrix.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum RowSums {
    /// Nothing.
    #[default]
    Any,
    /// Every row sums to 1: the group within tolerance of 1 takes the value
    /// 1 exactly and, if simple, the all-ones vector as its eigenvector.
    One,
}

/// A group of eigenvalues taken for one eigenvalue of multiplicity
/// [`Group::size`], with its eigenvectors where they span.
#[derive(Clone, Debug)]
pub struct Group {
    value: f64,
    size: usize,
    residual: f64,
    converged: bool,
    /// Right eigenvectors (columns) and left ones (rows).
    vectors: Option<(DMatrix<f64>, DMatrix<f64>)>,
}

impl Group {
    /// The eigenvalue: the two-sided Rayleigh quotient where the
    /// eigenvectors were found, else the mean of the group's Schur values.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The algebraic multiplicity (the number of Schur values grouped).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The larger of the `p`-th smallest singular values of `A − μI` and
    /// its transpose over the scale (`p` the size), or for a simple group
    /// found by inverse iteration the larger of `|(A − μI) x|` over its unit
    /// right and left eigenvectors (which bounds them); infinite where the
    /// singular value decomposition failed or `L R` is singular.
    pub fn residual(&self) -> f64 {
        self.residual
    }

    /// The right eigenvectors (`n × p`, orthonormal columns), where they
    /// span.
    pub fn right(&self) -> Option<&DMatrix<f64>> {
        self.vectors.as_ref().map(|(r, _)| r)
    }

    /// The left eigenvectors (`p × n`, orthonormal rows), where they span.
    pub fn left(&self) -> Option<&DMatrix<f64>> {
        self.vectors.as_ref().map(|(_, l)| l)
    }
}

/// The eigenvalues of a real matrix with real eigenvalues, grouped, with
/// the eigenvectors of each group where they span (steps 1 – 4 of the
/// [module docs](self)).
#[derive(Clone, Debug)]
pub struct Spectrum {
    a: DMatrix<f64>,
    scale: f64,
    groups: Vec<Group>,
}

/// `max(1, max |a_ij|)`.
fn scale_of(a: &DMatrix<f64>) -> f64 {
    a.amax().max(1.0)
}

/// The index of the nearest group within tolerance of `value`.
fn nearest(groups: &[Group], value: f64, scale: f64) -> Option<usize> {
    let distance = |i: usize| (groups[i].value - value).abs();
    (0..groups.len())
        .filter(|&i| distance(i) <= GROUP_TOLERANCE * scale)
        .min_by(|&x, &y| distance(x).total_cmp(&distance(y)))
}

impl Spectrum {
    /// The grouped spectrum of `a`. `blocks`: optional sizes of the
    /// diagonal blocks of a block lower-triangular `a` (eigenvalues then
    /// come from the blocks' Schur forms); `None` for the Schur form of the
    /// whole matrix.
    ///
    /// # Errors
    /// [`EigenError::Shape`], [`EigenError::Blocks`],
    /// [`EigenError::NotFinite`], [`EigenError::Complex`] or
    /// [`EigenError::NoConvergence`] (of a Schur form) as in the
    /// [module docs](self#refusals). A group whose eigenvectors do not span
    /// is no error here (see [`Group::right`]).
    pub fn new(a: &DMatrix<f64>, blocks: Option<&[usize]>) -> Result<Spectrum, EigenError> {
        Self::with_threshold(a, blocks, SINGULAR_VECTORS_UP_TO)
    }

    /// [`Spectrum::new`], trying inverse iteration for simple groups of
    /// matrices larger than `threshold`.
    fn with_threshold(a: &DMatrix<f64>, blocks: Option<&[usize]>, threshold: usize) -> Result<Spectrum, EigenError> {
        let (n, cols) = a.shape();
        if n == 0 || n != cols {
            return Err(EigenError::Shape { rows: n, cols });
        }
        if let Some(i) = a.iter().position(|x| !x.is_finite()) {
            return Err(EigenError::NotFinite { row: i % n, col: i / n });
        }
        let scale = scale_of(a);
        let sizes = match blocks {
            Some(b) => {
                check_blocks(a, b, scale)?;
                b.to_vec()
            }
            None => vec![n],
        };
        let mut values = Vec::with_capacity(n);
        let mut start = 0;
        for b in sizes {
            values.extend(real_eigenvalues(a.view((start, start), (b, b)).into_owned(), scale)?);
            start += b;
        }
        values.sort_by(|x, y| y.total_cmp(x));
        let hessenberg = (n > threshold).then(|| nalgebra::Hessenberg::new(a.clone()).unpack());
        let mut groups = Vec::new();
        let mut i = 0;
        while i < values.len() {
            let mut j = i + 1;
            while j < values.len() && values[i] - values[j] <= GROUP_TOLERANCE * scale {
                j += 1;
            }
            let size = j - i;
            let mean = values[i..j].iter().sum::<f64>() / size as f64;
            let fast = hessenberg.as_ref().filter(|_| size == 1).and_then(|(q, h)| simple_group(a, q, h, mean, scale));
            groups.push(fast.unwrap_or_else(|| group(a, mean, size, scale, true)));
            i = j;
        }
        groups.sort_by(|x, y| y.value.total_cmp(&x.value));
        Ok(Spectrum { a: a.clone(), scale, groups })
    }

    /// The matrix.
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.a
    }

    /// The groups, by decreasing value.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The group nearest `value` among those within `GROUP_TOLERANCE ·
    /// max(1, max |a_ij|)` of it.
    pub fn group(&self, value: f64) -> Option<&Group> {
        nearest(&self.groups, value, self.scale).map(|i| &self.groups[i])
    }

    /// The eigenvalues, by decreasing value, each group's value as often as
    /// its size.
    pub fn values(&self) -> Vec<f64> {
        self.groups.iter().flat_map(|g| std::iter::repeat_n(g.value, g.size)).collect()
    }

    /// `A = V Λ V⁻¹` from this spectrum (step 5 of the
    /// [module docs](self)); `rows` tells whether every row of `A` sums to
    /// 1 (see [`RowSums`]).
    ///
    /// # Errors
    /// [`EigenError::NoConvergence`] where a group's singular value
    /// decomposition failed, [`EigenError::Defective`] where a group's
    /// eigenvectors do not span or the decomposition does not reproduce
    /// `A`.
    pub fn decompose(&self, rows: RowSums) -> Result<Eigen, EigenError> {
        let a = &self.a;
        let n = a.nrows();
        let mut groups = self.groups.clone();
        for g in &groups {
            match g.vectors {
                Some(_) => {}
                None if !g.converged => return Err(EigenError::NoConvergence),
                None => return Err(EigenError::Defective { value: g.value, residual: g.residual }),
            }
        }
        // With unit row sums, the group of 1 is 1 exactly, and if simple its
        // eigenvector is the all-ones vector.
        let unit = match rows {
            RowSums::One => nearest(&groups, 1.0, self.scale),
            RowSums::Any => None,
        };
        if let Some(i) = unit {
            groups[i].value = 1.0;
        }
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&x, &y| groups[y].value.total_cmp(&groups[x].value));
        let mut v = DMatrix::zeros(n, n);
        let mut values = Vec::with_capacity(n);
        let mut col = 0;
        for &i in &order {
            let g = &groups[i];
            let (r, _) = g.vectors.as_ref().expect("checked above");
            if unit == Some(i) && g.size == 1 {
                v.column_mut(col).fill(1.0);
            } else {
                v.columns_mut(col, g.size).copy_from(r);
            }
            values.extend(std::iter::repeat_n(g.value, g.size));
            col += g.size;
        }
        let groups: Vec<Group> = order.iter().map(|&i| groups[i].clone()).collect();
        let Some(v_inv) = v.clone().lu().try_inverse() else {
            return Err(EigenError::Defective { value: dependent(&v, &values), residual: f64::INFINITY });
        };
        let mut vl = v.clone();
        for (j, &l) in values.iter().enumerate() {
            vl.column_mut(j).scale_mut(l);
        }
        let norm = a.amax();
        let error = (vl * &v_inv - a).amax();
        let residual = if norm > 0.0 { error / norm } else { error };
        if residual.is_nan() || residual > RECONSTRUCTION_TOLERANCE {
            let worst =
                (0..n).max_by(|&i, &j| condition(&v, &v_inv, i).total_cmp(&condition(&v, &v_inv, j))).unwrap_or(0);
            return Err(EigenError::Defective { value: values[worst], residual });
        }
        Ok(Eigen { values, groups, scale: self.scale, v, v_inv, residual })
    }
}

/// Checks that `blocks` partitions `a` into the diagonal blocks of a block
/// lower-triangular matrix.
fn check_blocks(a: &DMatrix<f64>, blocks: &[usize], scale: f64) -> Result<(), EigenError> {
    let n = a.nrows();
    if blocks.contains(&0) {
        return Err(EigenError::Blocks { what: "a block is empty" });
    }
    if blocks.iter().sum::<usize>() != n {
        return Err(EigenError::Blocks { what: "the block sizes do not sum to the matrix's size" });
    }
    let mut start = 0;
    for &b in blocks {
        let above = a.view((start, start + b), (b, n - start - b));
        if above.amax() > BLOCK_TOLERANCE * scale {
            return Err(EigenError::Blocks { what: "an entry above the diagonal blocks is not zero" });
        }
        start += b;
    }
    Ok(())
}

/// The real eigenvalues of `m` (the real parts where the imaginary ones are
/// within tolerance): from nalgebra's real Schur form, or, where that does
/// not converge in `30 · max(n, 10)` sweeps (its QR iteration has no
/// exceptional shifts and can stall at multiple eigenvalues), from
/// [`hessenberg_eigenvalues`].
fn real_eigenvalues(m: DMatrix<f64>, scale: f64) -> Result<Vec<f64>, EigenError> {
    let sweeps = 30 * m.nrows().max(10);
    let values: Vec<(f64, f64)> = match nalgebra::Schur::try_new(m.clone(), f64::EPSILON, sweeps) {
        Some(schur) => schur.complex_eigenvalues().iter().map(|c| (c.re, c.im)).collect(),
        None => hessenberg_eigenvalues(nalgebra::Hessenberg::new(m).h()).ok_or(EigenError::NoConvergence)?,
    };
    match values.iter().max_by(|x, y| x.1.abs().total_cmp(&y.1.abs())) {
        Some(&(re, im)) if im.abs() > GROUP_TOLERANCE * scale => Err(EigenError::Complex { re, im: im.abs() }),
        _ => Ok(values.iter().map(|c| c.0).collect()),
    }
}

/// The eigenvalues `(re, im)` of the upper Hessenberg matrix `h`, by the
/// implicit double-shift QR algorithm on the active block, deflating where
/// a subdiagonal entry is at most `ε` times its two diagonal neighbours or
/// `ε ‖H‖_F` (backward stable; without the latter the iteration stalls at
/// multiple eigenvalues, whose subdiagonal entries settle at the rounding
/// level of `‖H‖`), with exceptional shifts after every 10 sweeps without
/// deflation; `None` after `30 · n` sweeps.
fn hessenberg_eigenvalues(mut h: DMatrix<f64>) -> Option<Vec<(f64, f64)>> {
    let n = h.nrows();
    let norm = h.norm();
    let mut out = vec![(0.0, 0.0); n];
    let (mut sweeps, mut stalled) = (0, 0);
    // The active block is `lo ..= hi`; below it the eigenvalues are found.
    let mut end = n;
    while end > 0 {
        let hi = end - 1;
        let mut lo = hi;
        while lo > 0 {
            let sub = h[(lo, lo - 1)].abs();
            let diag = h[(lo - 1, lo - 1)].abs() + h[(lo, lo)].abs();
            if sub <= f64::EPSILON * diag || sub <= f64::EPSILON * norm {
                h[(lo, lo - 1)] = 0.0;
                break;
            }
            lo -= 1;
        }
        if lo == hi {
            out[hi] = (h[(hi, hi)], 0.0);
            (end, stalled) = (hi, 0);
            continue;
        }
        if lo + 1 == hi {
            let (a, b, c, d) = (h[(lo, lo)], h[(lo, hi)], h[(hi, lo)], h[(hi, hi)]);
            [out[lo], out[hi]] = eigenvalues_2x2(a, b, c, d);
            (end, stalled) = (lo, 0);
            continue;
        }
        sweeps += 1;
        stalled += 1;
        if sweeps > 30 * n {
            return None;
        }
        // The shifts σ₁, σ₂ as their sum and product: those of the trailing
        // 2 × 2 block, or every 10th stalled sweep ad hoc ones near the
        // last diagonal entry.
        let (sum, product) = if stalled % 10 == 0 {
            let x = h[(hi, hi)] + 0.75 * (h[(hi, hi - 1)].abs() + h[(hi - 1, hi - 2)].abs());
            let y = 0.4375 * (h[(hi, hi - 1)].abs() + h[(hi - 1, hi - 2)].abs());
            (2.0 * x, x * x + y * y)
        } else {
            let (a, b, c, d) = (h[(hi - 1, hi - 1)], h[(hi - 1, hi)], h[(hi, hi - 1)], h[(hi, hi)]);
            (a + d, a * d - b * c)
        };
        // The first column of (H − σ₁)(H − σ₂) = H² − (σ₁ + σ₂) H + σ₁σ₂.
        let (h00, h01, h10, h11, h21) =
            (h[(lo, lo)], h[(lo, lo + 1)], h[(lo + 1, lo)], h[(lo + 1, lo + 1)], h[(lo + 2, lo + 1)]);
        let mut v = [h00 * h00 + h01 * h10 - sum * h00 + product, h10 * (h00 + h11 - sum), h10 * h21];
        // Chase the bulge down with reflectors on rows (and columns) k ..
        // k + 2, the last one on hi − 1 and hi.
        for k in lo..hi {
            let width = if k + 2 <= hi { 3 } else { 2 };
            if let Some((u, beta)) = householder(&v[..width]) {
                let first = if k > lo { k - 1 } else { lo };
                for j in first..=hi {
                    let d = beta * (0..width).map(|r| u[r] * h[(k + r, j)]).sum::<f64>();
                    (0..width).for_each(|r| h[(k + r, j)] -= d * u[r]);
                }
                for i in lo..=(k + 3).min(hi) {
                    let d = beta * (0..width).map(|c| h[(i, k + c)] * u[c]).sum::<f64>();
                    (0..width).for_each(|c| h[(i, k + c)] -= d * u[c]);
                }
                if k > lo {
                    (1..width).for_each(|r| h[(k + r, k - 1)] = 0.0);
                }
            }
            if k + 1 < hi {
                v = [h[(k + 1, k)], h[(k + 2, k)], if k + 3 <= hi { h[(k + 3, k)] } else { 0.0 }];
            }
        }
    }
    Some(out)
}

/// The eigenvalues of `[[a, b], [c, d]]`, the larger real one first.
fn eigenvalues_2x2(a: f64, b: f64, c: f64, d: f64) -> [(f64, f64); 2] {
    let p = 0.5 * (a - d);
    let discriminant = p * p + b * c;
    if discriminant >= 0.0 {
        // λ − d solves μ² − 2pμ − bc = 0; the root away from 0 first.
        let z = p + discriminant.sqrt().copysign(p);
        let other = if z == 0.0 { d } else { d - b * c / z };
        let (x, y) = (d + z, other);
        [(x.max(y), 0.0), (x.min(y), 0.0)]
    } else {
        let (re, im) = (d + p, (-discriminant).sqrt());
        [(re, im), (re, -im)]
    }
}

/// The reflector `I − β u uᵀ` taking `x` to a multiple of the first unit
/// vector, as `(u, β)` (`u` padded to 3 entries); `None` where `x` is 0.
fn householder(x: &[f64]) -> Option<([f64; 3], f64)> {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm == 0.0 {
        return None;
    }
    let alpha = -norm.copysign(x[0]);
    let mut u = [0.0; 3];
    u[..x.len()].copy_from_slice(x);
    u[0] -= alpha;
    let uu = u.iter().map(|v| v * v).sum::<f64>();
    Some((u, 2.0 / uu))
}

/// The `p` right singular vectors of `m` with the smallest singular values
/// (as columns), and the largest of those singular values.
fn null_space(m: DMatrix<f64>, p: usize) -> Option<(DMatrix<f64>, f64)> {
    let n = m.ncols();
    if p == 0 || p > n || m.nrows() != n {
        return None;
    }
    let svd = nalgebra::SVD::try_new(m, false, true, f64::EPSILON, MAX_ITERATIONS)?;
    let vt = svd.v_t.as_ref()?;
    let sigma = svd.singular_values[n - p];
    Some((DMatrix::from_fn(n, p, |i, j| vt[(n - p + j, i)]), sigma))
}

/// `(M⁻¹ X)` with orthonormal columns: one step of inverse iteration
/// towards the null space of `M` (`X` where `M` is singular to rounding).
fn refine(m: &DMatrix<f64>, x: DMatrix<f64>) -> DMatrix<f64> {
    let Some(y) = m.clone().lu().solve(&x).filter(|y| y.iter().all(|v| v.is_finite())) else {
        return x;
    };
    let q = y.qr().q();
    if q.iter().all(|v| v.is_finite()) { q } else { x }
}

/// The group of `size` eigenvalues of `a` around `value`: its eigenvectors
/// where they span, and the value refined by the two-sided Rayleigh
/// quotient `tr((L R)⁻¹ L A R) / size`. Where the `size`-th singular value
/// is above the null tolerance but within the group tolerance (the shift is
/// off: multiple eigenvalues from a Schur form can be, by up to the square
/// root of the rounding), the approximate null spaces give the Rayleigh
/// quotient, and the test is repeated once there.
fn group(a: &DMatrix<f64>, value: f64, size: usize, scale: f64, retry: bool) -> Group {
    let n = a.nrows();
    let shifted = a - DMatrix::identity(n, n) * value;
    let failed = |residual, converged| Group { value, size, residual, converged, vectors: None };
    let (Some((r, sr)), Some((l, sl))) = (null_space(shifted.clone(), size), null_space(shifted.transpose(), size))
    else {
        return failed(f64::INFINITY, false);
    };
    let residual = sr.max(sl) / scale;
    let near = retry && residual <= GROUP_TOLERANCE;
    if residual.is_nan() || (residual > NULL_TOLERANCE && !near) {
        return failed(residual, true);
    }
    // One step of inverse iteration sharpens both bases.
    let (r, l) = (refine(&shifted, r), refine(&shifted.transpose(), l).transpose());
    let Some(lr) = (&l * &r).try_inverse() else {
        return failed(f64::INFINITY, true);
    };
    let refined = (lr * (&l * a * &r)).trace() / size as f64;
    if !refined.is_finite() {
        return failed(f64::INFINITY, true);
    }
    if residual > NULL_TOLERANCE {
        let again = group(a, refined, size, scale, false);
        return if again.vectors.is_some() { again } else { failed(residual, again.converged) };
    }
    Group { value: refined, size, residual, converged: true, vectors: Some((r, l)) }
}

/// The simple eigenvalue of `a = Q H Qᵀ` near `value` with its right and
/// left eigenvectors, by two steps of inverse iteration with `H − μI`
/// (`O(n²)` each), or `None` where their residuals `|(A − μI) x|` exceed the
/// null tolerance or the vectors are (nearly) orthogonal.
fn simple_group(a: &DMatrix<f64>, q: &DMatrix<f64>, h: &DMatrix<f64>, value: f64, scale: f64) -> Option<Group> {
    let n = a.nrows();
    let lu = HessenbergLu::new(h, value);
    // A start with no special direction; each step normalised.
    let start = DVector::from_fn(n, |i, _| 1.0 + 0.5 * ((i as f64 * 0.618_033_988_749_895).fract() - 0.5));
    let iterate = |transpose: bool| -> Option<DVector<f64>> {
        let mut x = start.normalize();
        for _ in 0..2 {
            x = lu.solve(x, transpose);
            let norm = x.norm();
            if !(norm.is_finite() && norm > 0.0) {
                return None;
            }
            x /= norm;
        }
        Some(q * x)
    };
    let (r, l) = (iterate(false)?, iterate(true)?);
    let residual = |x: &DVector<f64>, t: bool| {
        let ax = if t { a.tr_mul(x) } else { a * x };
        (ax - x * value).norm()
    };
    let residual = residual(&r, false).max(residual(&l, true)) / scale;
    let lr = l.dot(&r);
    if !(residual <= NULL_TOLERANCE && lr.abs() > 1e3 * f64::EPSILON) {
        return None;
    }
    let refined = l.dot(&(a * &r)) / lr;
    let vectors = (DMatrix::from_column_slice(n, 1, r.as_slice()), DMatrix::from_row_slice(1, n, l.as_slice()));
    refined.is_finite().then_some(Group { value: refined, size: 1, residual, converged: true, vectors: Some(vectors) })
}

/// `H − μI = G⁻¹ U` for an upper Hessenberg `H`: Gaussian elimination with
/// partial pivoting between neighbouring rows (`G` the product of the swaps
/// and eliminations), pivots below `ε |H|` replaced by `ε |H|` as inverse
/// iteration does.
struct HessenbergLu {
    u: DMatrix<f64>,
    /// Per column `k`: whether rows `k`, `k + 1` were swapped, and the
    /// multiple of row `k` taken from row `k + 1`.
    steps: Vec<(bool, f64)>,
}

impl HessenbergLu {
    fn new(h: &DMatrix<f64>, value: f64) -> HessenbergLu {
        let n = h.nrows();
        let mut u = h.clone();
        for i in 0..n {
            u[(i, i)] -= value;
        }
        let tiny = f64::EPSILON * h.norm().max(f64::MIN_POSITIVE);
        let mut steps = Vec::with_capacity(n.saturating_sub(1));
        for k in 0..n.saturating_sub(1) {
            let swap = u[(k + 1, k)].abs() > u[(k, k)].abs();
            if swap {
                for j in k..n {
                    u.swap((k, j), (k + 1, j));
                }
            }
            if u[(k, k)].abs() < tiny {
                u[(k, k)] = tiny;
            }
            let m = u[(k + 1, k)] / u[(k, k)];
            for j in k + 1..n {
                u[(k + 1, j)] -= m * u[(k, j)];
            }
            u[(k + 1, k)] = 0.0;
            steps.push((swap, m));
        }
        if n > 0 && u[(n - 1, n - 1)].abs() < tiny {
            u[(n - 1, n - 1)] = tiny;
        }
        HessenbergLu { u, steps }
    }

    /// `(H − μI)⁻¹ b`, or `(H − μI)⁻ᵀ b` where `transpose`.
    fn solve(&self, mut b: DVector<f64>, transpose: bool) -> DVector<f64> {
        let (u, n) = (&self.u, self.u.nrows());
        if transpose {
            // Uᵀ z = b, then y = Gᵀ z.
            for i in 0..n {
                let s: f64 = (0..i).map(|k| u[(k, i)] * b[k]).sum();
                b[i] = (b[i] - s) / u[(i, i)];
            }
            for (k, &(swap, m)) in self.steps.iter().enumerate().rev() {
                b[k] -= m * b[k + 1];
                if swap {
                    b.swap_rows(k, k + 1);
                }
            }
        } else {
            // G b, then U x = G b.
            for (k, &(swap, m)) in self.steps.iter().enumerate() {
                if swap {
                    b.swap_rows(k, k + 1);
                }
                b[k + 1] -= m * b[k];
            }
            for i in (0..n).rev() {
                let s: f64 = (i + 1..n).map(|j| u[(i, j)] * b[j]).sum();
                b[i] = (b[i] - s) / u[(i, i)];
            }
        }
        b
    }
}

/// The condition number `|row i of V⁻¹| · |column i of V|` of the
/// eigenvalue of column `i`.
fn condition(v: &DMatrix<f64>, v_inv: &DMatrix<f64>, i: usize) -> f64 {
    v_inv.row(i).norm() * v.column(i).norm()
}

/// The eigenvalue of the column of a singular `V` that takes the largest
/// part in its smallest singular vector.
fn dependent(v: &DMatrix<f64>, values: &[f64]) -> f64 {
    let Some(svd) = nalgebra::SVD::try_new(v.clone(), false, true, f64::EPSILON, MAX_ITERATIONS) else {
        return values[0];
    };
    let (n, vt) = (values.len(), svd.v_t.as_ref());
    let column = vt.and_then(|vt| (0..n).max_by(|&i, &j| vt[(n - 1, i)].abs().total_cmp(&vt[(n - 1, j)].abs())));
    values[column.unwrap_or(0)]
}

/// `A = V Λ V⁻¹` for a real matrix with real eigenvalues whose eigenvectors
/// span (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct Eigen {
    values: Vec<f64>,
    groups: Vec<Group>,
    scale: f64,
    v: DMatrix<f64>,
    v_inv: DMatrix<f64>,
    residual: f64,
}

impl Eigen {
    /// `A = V Λ V⁻¹` for a real matrix with real eigenvalues. `blocks`:
    /// optional sizes of the diagonal blocks of a block lower-triangular `A`
    /// (eigenvalues then come from the Schur forms of the blocks, which is
    /// more accurate); `None` = Schur of the whole matrix.
    ///
    /// Eigenvalues are sorted by decreasing value (ties: stable) and
    /// grouped where closer than `GROUP_TOLERANCE · max(1, max |a_ij|)`
    /// (`1e−6` for matrices with entries at most 1); each group's
    /// eigenvectors are a null space of `A − μI` of the group's size. The
    /// result is checked: `V Λ V⁻¹` reproduces `A` to `1e−11` relative (max
    /// norm). No row sums are assumed (see [`Spectrum::decompose`] for
    /// [`RowSums::One`]).
    ///
    /// # Errors
    /// As the [module docs](self#refusals) list.
    pub fn decompose(a: &DMatrix<f64>, blocks: Option<&[usize]>) -> Result<Eigen, EigenError> {
        Spectrum::new(a, blocks)?.decompose(RowSums::Any)
    }

    /// The eigenvalues `Λ`, by decreasing value, in the column order of `V`
    /// (each group's value as often as its size).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// `V`: the right eigenvectors as columns.
    pub fn vectors(&self) -> &DMatrix<f64> {
        &self.v
    }

    /// `V⁻¹`: its rows are left eigenvectors, scaled so that `V⁻¹ V = I`.
    pub fn inverse(&self) -> &DMatrix<f64> {
        &self.v_inv
    }

    /// The reconstruction error `max |V Λ V⁻¹ − A| / max |A|`.
    pub fn residual(&self) -> f64 {
        self.residual
    }

    /// The groups, in the order of `V`'s columns.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Left eigenvectors of the eigenvalue group containing `value` (rows,
    /// orthonormal, from the null space of `(A − μI)ᵀ`), or `None` if no
    /// group is within `GROUP_TOLERANCE · max(1, max |a_ij|)`.
    pub fn left_eigenvectors(&self, value: f64) -> Option<DMatrix<f64>> {
        nearest(&self.groups, value, self.scale).and_then(|i| self.groups[i].left()).cloned()
    }

    /// `A^p = V Λ^p V⁻¹` (`p ≥ 0`; exactly the identity for `p = 0`).
    pub fn power(&self, p: u32) -> DMatrix<f64> {
        let n = self.values.len();
        if p == 0 {
            return DMatrix::identity(n, n);
        }
        let mut vl = self.v.clone();
        for (j, &l) in self.values.iter().enumerate() {
            let lp = match i32::try_from(p) {
                Ok(p) => l.powi(p),
                Err(_) => l.powf(f64::from(p)),
            };
            vl.column_mut(j).scale_mut(lp);
        }
        vl * &self.v_inv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::Rng;

    /// `V J V⁻¹` for a random `V` (at least well enough conditioned that
    /// the reconstruction is accurate), and `V`.
    fn similar(j: &DMatrix<f64>, rng: &mut Rng) -> (DMatrix<f64>, DMatrix<f64>) {
        let n = j.nrows();
        loop {
            let v = rng.matrix(n) + DMatrix::identity(n, n) * 2.0;
            let v_inv = v.clone().try_inverse().unwrap();
            if v.norm() * v_inv.norm() < 1e3 {
                return (&v * j * v_inv, v);
            }
        }
    }

    fn diagonal(values: &[f64]) -> DMatrix<f64> {
        DMatrix::from_diagonal(&DVector::from_column_slice(values))
    }

    /// Known eigenvalues, a triple one among them.
    const VALUES: [f64; 12] = [1.0, 0.7, 0.5, 0.5, 0.5, 0.3, 0.25, 0.125, 0.1, 0.05, -0.2, -0.4];

    #[test]
    fn diagonalisable_matrices_with_a_triple_eigenvalue_are_recovered() {
        let mut rng = Rng(3);
        let (a, _) = similar(&diagonal(&VALUES), &mut rng);
        let e = Eigen::decompose(&a, None).unwrap();
        let worst = e.values().iter().zip(VALUES).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(worst < 1e-10, "{:?}: {worst:e}", e.values());
        assert_eq!(e.groups().iter().map(Group::size).collect::<Vec<_>>(), [1, 1, 3, 1, 1, 1, 1, 1, 1, 1]);
        // The reconstruction, measured here and as reported.
        let (v, v_inv) = (e.vectors(), e.inverse());
        let error = (v * diagonal(e.values()) * v_inv - &a).amax() / a.amax();
        assert!(error < 1e-11 && e.residual() < 1e-11, "{error:e} {:e}", e.residual());
        assert!((v * v_inv - DMatrix::identity(12, 12)).amax() < 1e-12);
        // Each column is an eigenvector, each row of V⁻¹ a left one.
        for (j, &l) in e.values().iter().enumerate() {
            assert!((&a * v.column(j) - v.column(j) * l).amax() < 1e-12 * v.column(j).amax());
            assert!((v_inv.row(j) * &a - v_inv.row(j) * l).amax() < 1e-12 * v_inv.row(j).amax());
        }
        // Powers.
        let mut a5 = DMatrix::identity(12, 12);
        for p in 0..=5 {
            assert!((e.power(p) - &a5).amax() < 1e-10 * a5.amax(), "p = {p}");
            a5 *= &a;
        }
        assert_eq!(e.power(0), DMatrix::identity(12, 12));
        // Left eigenvectors of the triple eigenvalue span its left space.
        let l = e.left_eigenvectors(0.5 + 1e-8).unwrap();
        assert_eq!(l.shape(), (3, 12));
        assert!((&l * &a - &l * 0.5).amax() < 1e-10);
        assert!((&l * l.transpose() - DMatrix::identity(3, 3)).amax() < 1e-12);
        assert!(e.left_eigenvectors(0.6).is_none());
        assert_eq!(e.left_eigenvectors(-0.4).unwrap().shape(), (1, 12));
    }

    #[test]
    fn an_inaccurate_shift_is_refined_and_retried() {
        let (a, _) = similar(&diagonal(&VALUES), &mut Rng(3));
        // 5e−10 off the triple eigenvalue 1/2: the third singular value of
        // A − μI is above the null tolerance.
        let once = group(&a, 0.5 + 5e-10, 3, 1.0, false);
        assert!(once.right().is_none() && once.residual() > NULL_TOLERANCE, "{:e}", once.residual());
        let retried = group(&a, 0.5 + 5e-10, 3, 1.0, true);
        assert!(retried.right().is_some() && retried.residual() <= NULL_TOLERANCE);
        assert!((retried.value() - 0.5).abs() < 1e-12, "{:e}", retried.value() - 0.5);
        // A shift beyond the group tolerance is not retried.
        assert!(group(&a, 0.5 + 1e-5, 3, 1.0, true).right().is_none());
    }

    #[test]
    fn jordan_blocks_are_defective() {
        let mut j = diagonal(&[0.9, 0.25, 0.25, 0.5, -0.3, 0.1]);
        j[(1, 2)] = 1.0;
        let e = Eigen::decompose(&j, None).unwrap_err();
        assert!(matches!(e, EigenError::Defective { value, .. } if (value - 0.25).abs() < 1e-6), "{e:?}");
        // Hidden by a similarity.
        let (a, _) = similar(&j, &mut Rng(5));
        let e = Eigen::decompose(&a, None).unwrap_err();
        assert!(matches!(e, EigenError::Defective { value, .. } if (value - 0.25).abs() < 1e-6), "{e:?}");
        // The spectrum still has the other eigenvectors.
        let s = Spectrum::new(&a, None).unwrap();
        let g = s.group(0.25).unwrap();
        assert!(g.size() == 2 && g.right().is_none() && g.residual() > 1e-3);
        assert!(s.group(0.5).unwrap().right().is_some());
        // Without the coupling it is diagonalisable.
        j[(1, 2)] = 0.0;
        assert!(Eigen::decompose(&j, None).is_ok());
    }

    #[test]
    fn nearly_parallel_eigenvectors_fail_the_reconstruction() {
        // Eigenvalues 1/4 and 1/4 + 2e−6 (two groups) whose eigenvectors
        // are 2e−6 apart: each null space is found, but V is too badly
        // conditioned for V Λ V⁻¹ to reproduce A to 1e−11.
        let mut j = diagonal(&[0.9, 0.25, 0.25 + 2e-6, 0.6, -0.1]);
        j[(1, 2)] = 1.0;
        let (a, _) = similar(&j, &mut Rng(13));
        let s = Spectrum::new(&a, None).unwrap();
        assert_eq!(s.groups().len(), 5, "{:?}", s.values());
        assert!(s.groups().iter().all(|g| g.right().is_some()));
        match s.decompose(RowSums::Any).unwrap_err() {
            EigenError::Defective { value, residual } => {
                assert!((value - 0.25).abs() < 1e-5 && residual > 1e-11, "{value} {residual:e}")
            }
            e => panic!("{e:?}"),
        }
        // Further apart, the same structure is accepted.
        j[(2, 2)] = 0.5;
        assert!(Eigen::decompose(&similar(&j, &mut Rng(13)).0, None).is_ok());
    }

    #[test]
    fn complex_eigenvalues_are_refused() {
        let (c, s) = (0.6f64, 0.3f64);
        let mut j = diagonal(&[1.0, c, c, 0.2, -0.1]);
        (j[(1, 2)], j[(2, 1)]) = (-s, s);
        let (a, _) = similar(&j, &mut Rng(9));
        match Eigen::decompose(&a, None).unwrap_err() {
            EigenError::Complex { re, im } => assert!((re - c).abs() < 1e-10 && (im - s).abs() < 1e-10, "{re} {im}"),
            e => panic!("{e:?}"),
        }
        // Below the tolerance the pair counts as a double real eigenvalue.
        (j[(1, 2)], j[(2, 1)]) = (-1e-9, 1e-9);
        assert!(Spectrum::new(&j, None).is_ok());
    }

    #[test]
    fn block_triangular_matrices_agree_with_the_whole_schur_form() {
        // A = V D V⁻¹ with V block lower-triangular is block lower-triangular
        // and diagonalisable, although its blocks share the eigenvalue 1/2.
        let mut rng = Rng(17);
        let (_, top) = similar(&DMatrix::identity(4, 4), &mut rng);
        let (_, bottom) = similar(&DMatrix::identity(5, 5), &mut rng);
        let mut v = DMatrix::zeros(9, 9);
        v.view_mut((0, 0), (4, 4)).copy_from(&top);
        v.view_mut((4, 4), (5, 5)).copy_from(&bottom);
        v.view_mut((4, 0), (5, 4)).copy_from(&rng.matrix(5).columns(0, 4));
        let d = diagonal(&[1.0, 0.5, 0.25, 0.25, 0.5, 0.125, 0.0625, 0.0625, -0.25]);
        let mut a = &v * d * v.clone().try_inverse().unwrap();
        a.view_mut((0, 4), (4, 5)).fill(0.0);
        let blocked = Eigen::decompose(&a, Some(&[4, 5])).unwrap();
        let whole = Eigen::decompose(&a, None).unwrap();
        let expected = [1.0, 0.5, 0.5, 0.25, 0.25, 0.125, 0.0625, 0.0625, -0.25];
        for e in [&blocked, &whole] {
            let worst = e.values().iter().zip(expected).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(worst < 1e-10, "{:?}", e.values());
            assert!(e.residual() < 1e-11);
        }
        assert!((blocked.power(7) - whole.power(7)).amax() < 1e-12);
        // The spectral projectors of the double eigenvalue shared by the
        // blocks agree.
        let projector = |e: &Eigen| {
            let (v, w) = (e.vectors().columns(1, 2), e.inverse().rows(1, 2));
            v * w
        };
        assert!((projector(&blocked) - projector(&whole)).amax() < 1e-10);
        // Blocks that do not fit.
        assert!(matches!(Eigen::decompose(&a, Some(&[5, 4])), Err(EigenError::Blocks { .. })));
        assert!(matches!(Eigen::decompose(&a, Some(&[4, 4])), Err(EigenError::Blocks { .. })));
        assert!(matches!(Eigen::decompose(&a, Some(&[4, 0, 5])), Err(EigenError::Blocks { .. })));
        assert!(Eigen::decompose(&a, Some(&[9])).is_ok());
        // A generic coupling of the blocks makes 1/2 a Jordan block.
        a.view_mut((4, 0), (5, 4)).copy_from(&(rng.matrix(5).columns(0, 4) * 0.3));
        for blocks in [Some(&[4, 5][..]), None] {
            let e = Eigen::decompose(&a, blocks).unwrap_err();
            assert!(matches!(e, EigenError::Defective { value, .. } if (value - 0.5).abs() < 1e-6), "{e:?}");
        }
    }

    #[test]
    fn shapes_and_entries_are_checked() {
        let a = DMatrix::from_element(3, 4, 0.5);
        assert_eq!(Eigen::decompose(&a, None).unwrap_err(), EigenError::Shape { rows: 3, cols: 4 });
        assert_eq!(Eigen::decompose(&DMatrix::zeros(0, 0), None).unwrap_err(), EigenError::Shape { rows: 0, cols: 0 });
        let mut a = DMatrix::identity(3, 3);
        a[(2, 1)] = f64::NAN;
        assert_eq!(Eigen::decompose(&a, None).unwrap_err(), EigenError::NotFinite { row: 2, col: 1 });
        // The zero matrix is diagonal.
        let e = Eigen::decompose(&DMatrix::zeros(3, 3), None).unwrap();
        assert_eq!((e.values(), e.residual()), (&[0.0; 3][..], 0.0));
    }

    #[test]
    fn unit_row_sums_give_the_exact_eigenvalue_one() {
        let mut rng = Rng(23);
        // A row-stochastic matrix with positive entries.
        let mut a = DMatrix::from_fn(7, 7, |_, _| rng.next() + 0.1);
        for mut row in a.row_iter_mut() {
            let sum = row.sum();
            row /= sum;
        }
        // Random positive matrices may have complex eigenvalues: symmetrise
        // the chain (D^{1/2} S D^{-1/2} with S symmetric keeps them real).
        let s = &a + a.transpose();
        let d: Vec<f64> = s.row_iter().map(|r| r.sum()).collect();
        let a = DMatrix::from_fn(7, 7, |i, j| s[(i, j)] / d[i]);
        let e = Spectrum::new(&a, None).unwrap().decompose(RowSums::One).unwrap();
        assert_eq!(e.values()[0], 1.0);
        assert!(e.vectors().column(0).iter().all(|&x| x == 1.0));
        assert!(e.residual() < 1e-12);
        let general = Eigen::decompose(&a, None).unwrap();
        assert!((general.values()[0] - 1.0).abs() < 1e-14);
        assert!((general.power(4) - e.power(4)).amax() < 1e-13);
    }

    /// `V D V⁻¹` with `D` from `values` (padded with `1/8`) and a random
    /// `V`, for `n` of them.
    fn known(n: usize, rng: &mut Rng) -> (DMatrix<f64>, Vec<f64>) {
        let mut values = VALUES.to_vec();
        values.resize(n, 0.125);
        values.sort_by(|x, y| y.total_cmp(x));
        (similar(&diagonal(&values), rng).0, values)
    }

    #[test]
    fn stalled_schur_iterations_fall_back_to_the_hessenberg_qr() {
        // nalgebra's QR iteration stalls on some of these (a triple
        // eigenvalue); find one.
        let mut rng = Rng(31);
        let (a, values) = (0..100)
            .map(|_| known(12, &mut rng))
            .find(|(a, _)| nalgebra::Schur::try_new(a.clone(), f64::EPSILON, 300).is_none())
            .expect("a matrix on which the Schur iteration stalls");
        let e = Eigen::decompose(&a, None).unwrap();
        let worst = e.values().iter().zip(&values).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(worst < 1e-10 && e.residual() < 1e-11, "{worst:e} {:e}", e.residual());
        // The fallback alone, against nalgebra where that converges,
        // complex pairs included.
        for _ in 0..20 {
            let a = rng.matrix(15);
            let key = |x: &(f64, f64), y: &(f64, f64)| y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1));
            let mut ours = hessenberg_eigenvalues(nalgebra::Hessenberg::new(a.clone()).h()).unwrap();
            let mut theirs: Vec<(f64, f64)> =
                nalgebra::Schur::new(a.clone()).complex_eigenvalues().iter().map(|c| (c.re, c.im)).collect();
            ours.sort_by(key);
            theirs.sort_by(key);
            let d = ours.iter().zip(&theirs).fold(0.0f64, |m, (x, y)| m.max((x.0 - y.0).abs() + (x.1 - y.1).abs()));
            assert!(d < 1e-12, "{ours:?} {theirs:?}");
        }
    }

    #[test]
    fn inverse_iteration_agrees_with_the_singular_vectors() {
        let mut rng = Rng(41);
        let (a, values) = known(12, &mut rng);
        // Threshold 0: every simple group tries inverse iteration.
        let fast = Spectrum::with_threshold(&a, None, 0).unwrap();
        let slow = Spectrum::with_threshold(&a, None, usize::MAX).unwrap();
        let (q, h) = nalgebra::Hessenberg::new(a.clone()).unpack();
        for g in fast.groups().iter().filter(|g| g.size() == 1) {
            let direct = simple_group(&a, &q, &h, g.value(), 1.0).expect("inverse iteration converges");
            assert!((direct.value() - g.value()).abs() < 1e-14);
            assert!((direct.right().unwrap() - g.right().unwrap()).amax() < 1e-12);
        }
        let (fast, slow) = (fast.decompose(RowSums::Any).unwrap(), slow.decompose(RowSums::Any).unwrap());
        let worst = fast.values().iter().zip(&values).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(worst < 1e-10 && fast.residual() < 1e-11);
        assert!((fast.power(3) - slow.power(3)).amax() < 1e-10);
        // A larger matrix takes it by default.
        let (a, values) = known(80, &mut rng);
        let e = Eigen::decompose(&a, None).unwrap();
        let worst = e.values().iter().zip(&values).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(worst < 1e-10 && e.residual() < 1e-11, "{worst:e} {:e}", e.residual());
        assert_eq!(e.groups().iter().map(Group::size).max(), Some(69));
    }

    #[test]
    fn hessenberg_solves_in_both_directions() {
        let mut rng = Rng(43);
        let mut h = rng.matrix(9);
        for i in 0..9usize {
            for j in 0..i.saturating_sub(1) {
                h[(i, j)] = 0.0;
            }
        }
        let b = DVector::from_fn(9, |_, _| rng.next());
        let lu = HessenbergLu::new(&h, 0.3);
        let m = &h - DMatrix::identity(9, 9) * 0.3;
        assert!((&m * lu.solve(b.clone(), false) - &b).amax() < 1e-12);
        assert!((m.transpose() * lu.solve(b.clone(), true) - &b).amax() < 1e-12);
    }
}
