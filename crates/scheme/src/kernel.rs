//! Building blocks shared by the schemes' specialised kernels and their
//! refinement matrices: parallel row blocks, register-held channels, and
//! assembly of a CSR matrix from per-row stencils.
//!
//! Every helper writes each output row from one task, so results never
//! depend on the thread count.

use std::ops::Range;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::par::{even_ranges, split_by_ranges};
use subla_algebra::{CsrMat, Par};

use crate::{Plan, Result, SchemeError};

/// `(column, weight)` pairs of one row, in accumulation order.
pub type Stencil = Vec<(u32, f64)>;

/// Sorts `s` by column (stable) and sums the weights of equal columns.
pub fn merge_stencil(s: &mut Stencil) {
    s.sort_by_key(|&(c, _)| c);
    let mut w = 0;
    for r in 0..s.len() {
        if w > 0 && s[w - 1].0 == s[r].0 {
            s[w - 1].1 += s[r].1;
        } else {
            s[w] = s[r];
            w += 1;
        }
    }
    s.truncate(w);
}

/// An `nrows × ncols` CSR matrix whose row `i` is the stencil `row(i, s)`
/// pushes into `s` (which arrives empty), merged by
/// [`merge_stencil`]: rows are gathered in parallel blocks and concatenated.
///
/// # Errors
/// [`SchemeError::OverBudget`] if there are more than `u32::MAX` entries;
/// [`SchemeError::Algebra`] if a column is out of range.
pub fn assemble_rows(
    nrows: usize,
    ncols: usize,
    par: Par,
    row: impl Fn(usize, &mut Stencil) + Sync,
) -> Result<CsrMat<f64>> {
    let ranges = even_ranges(nrows, par.blocks(nrows, 1 << 12));
    let work = |r: Range<usize>| -> (Vec<u32>, Vec<u32>, Vec<f64>) {
        let mut counts = Vec::with_capacity(r.len());
        let mut idx = Vec::with_capacity(8 * r.len());
        let mut vals = Vec::with_capacity(8 * r.len());
        let mut s = Stencil::new();
        for i in r {
            s.clear();
            row(i, &mut s);
            merge_stencil(&mut s);
            counts.push(s.len() as u32);
            idx.extend(s.iter().map(|&(c, _)| c));
            vals.extend(s.iter().map(|&(_, w)| w));
        }
        (counts, idx, vals)
    };
    let parts: Vec<(Vec<u32>, Vec<u32>, Vec<f64>)> = if ranges.len() > 1 {
        ranges.into_par_iter().map(work).collect()
    } else {
        ranges.into_iter().map(work).collect()
    };
    let total: usize = parts.iter().map(|p| p.1.len()).sum();
    if u32::try_from(total).is_err() {
        return Err(SchemeError::OverBudget {
            what: "a refinement matrix with u32 indices".into(),
            needed: total as u128,
            budget: u32::MAX as u128,
        });
    }
    let mut ptr = Vec::with_capacity(nrows + 1);
    ptr.push(0u32);
    let mut idx = Vec::with_capacity(total);
    let mut vals = Vec::with_capacity(total);
    let mut acc = 0u32;
    for (counts, i, v) in parts {
        for c in counts {
            acc += c;
            ptr.push(acc);
        }
        idx.extend_from_slice(&i);
        vals.extend_from_slice(&v);
    }
    Ok(CsrMat::try_new(nrows, ncols, ptr, idx, vals)?)
}

/// The eval of a plan made of levels: checks the shapes (panicking with
/// `name` on a mismatch, see [`crate::check_eval_shapes`]), then runs
/// `level(l, x, y, d)` for `l` in `0..plan.levels()`, from `control` to
/// `out`, with `x` and `y` row-major rows of `d` channels. Intermediate
/// levels live in scratch buffers; the last is written straight into `out`
/// when it is contiguous.
pub fn eval_levels<P: Plan + ?Sized, T: Float + Send + Sync>(
    plan: &P,
    name: &str,
    control: ArrayView2<'_, T>,
    mut out: ArrayViewMut2<'_, T>,
    level: impl Fn(usize, &[T], &mut [T], usize),
) {
    crate::check_eval_shapes(plan, name, control.dim(), out.dim());
    let d = control.ncols();
    let levels = plan.levels() as usize;
    if d == 0 {
        return;
    }
    if levels == 0 {
        out.assign(&control);
        return;
    }
    let control = control.as_standard_layout();
    let Some(x0) = control.as_slice() else { unreachable!("a standard-layout array is contiguous") };
    let mut cur: Vec<T> = Vec::new();
    for l in 0..levels {
        let x: &[T] = if l == 0 { x0 } else { &cur };
        if l + 1 == levels {
            if let Some(y) = out.as_slice_mut() {
                level(l, x, y, d);
                return;
            }
        }
        let mut next = vec![T::zero(); plan.level_len(l as u32 + 1) * d];
        level(l, x, &mut next, d);
        cur = next;
    }
    match ArrayView2::from_shape((plan.output_len(), d), &cur) {
        Ok(v) => out.assign(&v),
        Err(e) => unreachable!("output rows have the planned size: {e}"),
    }
}

/// Runs `f(range, rows)` over `n` rows of width `d` in `out` (row-major),
/// in parallel blocks of rows when `par` allows.
pub fn for_rows<T: Send>(out: &mut [T], n: usize, d: usize, par: Par, f: impl Fn(Range<usize>, &mut [T]) + Sync) {
    let ranges = even_ranges(n, par.blocks(n, 2048));
    if ranges.len() <= 1 {
        f(0..n, out);
        return;
    }
    let pieces = split_by_ranges(out, &ranges, d);
    ranges.into_par_iter().zip(pieces).for_each(|(r, p)| f(r, p));
}

/// The entries of `list` (sorted by `key`) whose key lies in `r`.
pub fn specials_in<'a, M>(list: &'a [M], r: &Range<usize>, key: impl Fn(&M) -> u32) -> &'a [M] {
    let a = list.partition_point(|m| (key(m) as usize) < r.start);
    let b = list.partition_point(|m| (key(m) as usize) < r.end);
    &list[a..b]
}

/// Channels `off..off + D` of row `i` of `x` (row length `stride`).
#[inline(always)]
pub fn load<T: Copy, const D: usize>(x: &[T], i: usize, stride: usize, off: usize) -> [T; D] {
    let r = &x[i * stride + off..i * stride + off + D];
    std::array::from_fn(|k| r[k])
}

/// `acc += w · x`.
#[inline(always)]
pub fn axpy<T: Float, const D: usize>(acc: &mut [T; D], w: T, x: [T; D]) {
    for k in 0..D {
        acc[k] = acc[k] + w * x[k];
    }
}

/// `w` as `T` (`f64` weights are exact in `f64` and rounded once in `f32`).
#[inline(always)]
pub fn real<T: Float>(w: f64) -> T {
    T::from(w).unwrap_or_else(T::zero)
}
