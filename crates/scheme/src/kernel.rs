//! Building blocks shared by the schemes' specialised kernels and their
//! refinement matrices: parallel row blocks, register-held channels, and
//! assembly of a CSR matrix from per-row stencils.
//!
//! Every helper writes each output row from one task, so results never
//! depend on the thread count.

use std::ops::Range;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::mem::{Zeroable, try_reserve, try_vec_with_capacity, try_zeroed_vec};
use subla_algebra::par::{even_ranges, split_by_ranges, try_concat};
use subla_algebra::{CsrMat, Par};

use crate::{Plan, Result, SchemeError};

/// A `rows × cols` array of zeros, or
/// [`AlgebraError::OutOfMemory`](subla_algebra::AlgebraError::OutOfMemory)
/// (in [`SchemeError::Algebra`]) naming `what`, or [`SchemeError::TooLarge`]
/// where the element count overflows: a level's buffer in an eval.
pub fn try_zeros<T: Zeroable>(rows: usize, cols: usize, what: &'static str) -> Result<Array2<T>> {
    let n = rows
        .checked_mul(cols)
        .ok_or(SchemeError::TooLarge { what: "values of a level", value: rows as u128 * cols as u128 })?;
    let Ok(a) = Array2::from_shape_vec((rows, cols), try_zeroed_vec::<T>(n, what)?) else {
        unreachable!("a vector of rows × columns elements has that shape")
    };
    Ok(a)
}

/// `(column, weight)` pairs of one row, in accumulation order.
pub type Stencil = Vec<(u32, f64)>;

/// Sums the weights of equal columns, in the order they were pushed, and
/// sorts `s` by column: the result is the same as a stable sort followed by
/// a merge of neighbours.
pub fn merge_stencil(s: &mut Stencil) {
    if s.len() > MERGE_BY_SEARCH {
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
        return;
    }
    // Short stencils: each entry joins the first one of its column (a
    // linear search over the distinct columns so far), then the distinct
    // columns are sorted.
    let mut w = 0;
    for r in 0..s.len() {
        let (c, x) = s[r];
        match s[..w].iter().position(|e| e.0 == c) {
            Some(p) => s[p].1 += x,
            None => {
                s[w] = (c, x);
                w += 1;
            }
        }
    }
    s.truncate(w);
    s.sort_unstable_by_key(|&(c, _)| c);
}

/// Longest stencil [`merge_stencil`] merges by linear search.
const MERGE_BY_SEARCH: usize = 64;

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
    // Each block: its rows' lengths, columns and weights, and whether every
    // column is in range (rows come out of `merge_stencil` sorted and
    // without repeats).
    type Part = (Vec<u32>, Vec<u32>, Vec<f64>, bool);
    let work = |r: Range<usize>| -> Result<Part> {
        const WHAT: &str = "the rows of a refinement matrix";
        let mut counts = try_vec_with_capacity(r.len(), WHAT)?;
        let mut idx = try_vec_with_capacity(8 * r.len(), WHAT)?;
        let mut vals = try_vec_with_capacity(8 * r.len(), WHAT)?;
        let mut s = Stencil::new();
        let mut in_range = true;
        for i in r {
            s.clear();
            row(i, &mut s);
            merge_stencil(&mut s);
            in_range &= s.last().is_none_or(|&(c, _)| (c as usize) < ncols);
            counts.push(s.len() as u32);
            try_reserve(&mut idx, s.len(), WHAT)?;
            try_reserve(&mut vals, s.len(), WHAT)?;
            idx.extend(s.iter().map(|&(c, _)| c));
            vals.extend(s.iter().map(|&(_, w)| w));
        }
        Ok((counts, idx, vals, in_range))
    };
    let parts: Vec<Part> = if ranges.len() > 1 {
        ranges.into_par_iter().map(work).collect::<Result<_>>()?
    } else {
        ranges.into_iter().map(work).collect::<Result<_>>()?
    };
    let total: usize = parts.iter().map(|p| p.1.len()).sum();
    let (Ok(nr), Ok(nc), Ok(_)) = (u32::try_from(nrows), u32::try_from(ncols), u32::try_from(total)) else {
        return Err(SchemeError::TooLarge {
            what: "a refinement matrix with u32 indices (rows, columns or nonzeros)",
            value: total.max(nrows).max(ncols) as u128,
        });
    };
    let mut ptr = Vec::with_capacity(nrows + 1);
    ptr.push(0u32);
    let mut acc = 0u32;
    for (counts, ..) in &parts {
        for &c in counts {
            acc += c;
            ptr.push(acc);
        }
    }
    // The blocks' entries are copied into place in parallel (the first
    // touches of the output pages are spread over the threads too).
    let idx = try_concat(&parts.iter().map(|p| p.1.as_slice()).collect::<Vec<_>>(), "refinement matrix indices")?;
    let vals = try_concat(&parts.iter().map(|p| p.2.as_slice()).collect::<Vec<_>>(), "refinement matrix values")?;
    if parts.iter().all(|p| p.3) {
        // SAFETY: `ptr` starts at 0 and is non-decreasing with `nrows + 1`
        // entries ending at `total`; every row is strictly increasing
        // (`merge_stencil` sorts and merges repeats) and in range (checked
        // above); all sizes fit in u32.
        Ok(unsafe { CsrMat::new_unchecked(nr, nc, ptr, idx, vals) })
    } else {
        // Names the offending row and column.
        Ok(CsrMat::try_new(nrows, ncols, ptr, idx, vals)?)
    }
}

/// The eval of a plan made of levels: checks the shapes (panicking with
/// `name` on a mismatch, see [`crate::check_eval_shapes`]), then runs
/// `level(l, x, y, d)` for `l` in `0..plan.levels()`, from `control` to
/// `out`, with `x` and `y` row-major rows of `d` channels. Intermediate
/// levels live in scratch buffers; the last is written straight into `out`
/// when it is contiguous.
///
/// # Errors
/// [`AlgebraError::OutOfMemory`](subla_algebra::AlgebraError::OutOfMemory)
/// (in [`SchemeError::Algebra`]) where a level's buffer cannot be
/// allocated; [`SchemeError::TooLarge`] where its size overflows.
pub fn eval_levels<P: Plan + ?Sized, T: Float + Zeroable + Send + Sync>(
    plan: &P,
    name: &str,
    control: ArrayView2<'_, T>,
    mut out: ArrayViewMut2<'_, T>,
    level: impl Fn(usize, &[T], &mut [T], usize),
) -> Result<()> {
    crate::check_eval_shapes(plan, name, control.dim(), out.dim());
    let d = control.ncols();
    let levels = plan.levels() as usize;
    if d == 0 {
        return Ok(());
    }
    if levels == 0 {
        out.assign(&control);
        return Ok(());
    }
    let control = control.as_standard_layout();
    let Some(x0) = control.as_slice() else { unreachable!("a standard-layout array is contiguous") };
    let mut cur: Vec<T> = Vec::new();
    for l in 0..levels {
        let x: &[T] = if l == 0 { x0 } else { &cur };
        if l + 1 == levels {
            if let Some(y) = out.as_slice_mut() {
                level(l, x, y, d);
                return Ok(());
            }
        }
        let len = plan.level_len(l as u32 + 1);
        let n = len
            .checked_mul(d)
            .ok_or(SchemeError::TooLarge { what: "values of a level", value: len as u128 * d as u128 })?;
        let mut next = try_zeroed_vec::<T>(n, "a level of an evaluation")?;
        level(l, x, &mut next, d);
        cur = next;
    }
    match ArrayView2::from_shape((plan.output_len(), d), &cur) {
        Ok(v) => out.assign(&v),
        Err(e) => unreachable!("output rows have the planned size: {e}"),
    }
    Ok(())
}

/// Runs a kernel over rows of `$d` channels, four channels at a time with
/// the count held in a const generic: `$body` is evaluated with `$off`
/// (the first channel of the group) and the const `$D` (1 to 4 channels)
/// in scope, once per group.
///
/// ```
/// fn sum<const D: usize>(off: usize) -> usize { D * 10 + off }
/// let mut groups = Vec::new();
/// subla_scheme::channel_groups!(6, off, D => groups.push(sum::<D>(off)));
/// assert_eq!(groups, [40, 24]);
/// ```
#[macro_export]
macro_rules! channel_groups {
    ($d:expr, $off:ident, $D:ident => $body:expr) => {{
        let d: usize = $d;
        let mut $off = 0usize;
        while $off < d {
            match d - $off {
                1 => {
                    const $D: usize = 1;
                    $body;
                }
                2 => {
                    const $D: usize = 2;
                    $body;
                }
                3 => {
                    const $D: usize = 3;
                    $body;
                }
                _ => {
                    const $D: usize = 4;
                    $body;
                }
            }
            $off += 4;
        }
    }};
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: a stable sort by column, then neighbours merged.
    fn reference(s: &Stencil) -> Stencil {
        let mut s = s.clone();
        s.sort_by_key(|&(c, _)| c);
        let mut out: Stencil = Vec::new();
        for (c, w) in s {
            match out.last_mut() {
                Some(last) if last.0 == c => last.1 += w,
                _ => out.push((c, w)),
            }
        }
        out
    }

    #[test]
    fn merge_stencil_sums_in_push_order_at_every_length() {
        // Weights of very different magnitudes, so that a different
        // summation order changes the bits.
        let mut seed = 0x9e37_79b9_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for len in [0, 1, 2, 5, 17, 63, 64, 65, 130] {
            for _ in 0..50 {
                let s: Stencil = (0..len)
                    .map(|_| (next() % 12, f64::from(next() % 1000) * 10f64.powi((next() % 20) as i32 - 10)))
                    .collect();
                let mut merged = s.clone();
                merge_stencil(&mut merged);
                let want = reference(&s);
                assert_eq!(merged.len(), want.len(), "length {len}");
                for (a, b) in merged.iter().zip(&want) {
                    assert_eq!((a.0, a.1.to_bits()), (b.0, b.1.to_bits()), "length {len}: {s:?}");
                }
            }
        }
    }

    #[test]
    fn assemble_rows_names_a_column_out_of_range() {
        let e = assemble_rows(3, 2, Par::Seq, |i, s| s.push((i as u32, 1.0)));
        assert!(matches!(e, Err(SchemeError::Algebra(_))), "{e:?}");
        let m = assemble_rows(9000, 9000, Par::Rayon, |i, s| {
            s.extend([(i as u32, 0.5), ((i as u32 + 1) % 9000, 0.25), (i as u32, 0.25)]);
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.nnz(), 18000);
        assert_eq!(m.row(8999), (&[0u32, 8999][..], &[0.25, 0.75][..]));
    }
}
