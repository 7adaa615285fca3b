//! Parallel prefix sums, stream compaction and predicate enumeration of
//! nonzeros.
//!
//! Mlakar et al. 2020, §4.1 numbers the edges of a mesh by a prefix sum over
//! a 0/1 flag per nonzero of `E` ("is this entry in the lower triangle?");
//! [`enumerate_nonzeros`] is that step for any predicate, and
//! [`offsets_from_counts`] turns per-slice counts into a pointer array (the
//! symbolic phase of every product here).
//!
//! # Determinism
//! The scans cut their input into blocks of a fixed size
//! ([`SCAN_BLOCK`] elements, independent of the thread count), scan each
//! block from zero, scan the block totals, and add each block's offset once.
//! Integer results are exact; floating-point results are bitwise identical
//! for every [`Par`] and pool size (but are not the left-to-right sum).

use std::ops::Add;

use num_traits::{CheckedAdd, Zero};
use rayon::prelude::*;

use crate::error::{AlgebraError, Result, to_u32};
use crate::par::Par;
use crate::storage::{Layout, SparseRef};

/// Block size of the blocked scans (fixed so results never depend on the
/// thread count).
pub const SCAN_BLOCK: usize = 1 << 14;

/// Inclusive scan in place: `data[i] = data[0] + … + data[i]`. Returns the
/// total.
pub fn inclusive_scan_inplace<T>(data: &mut [T], par: Par) -> T
where
    T: Copy + Send + Sync + Zero + Add<Output = T>,
{
    scan_impl(data, par, false)
}

/// Exclusive scan in place: `data[i] = data[0] + … + data[i-1]`,
/// `data[0] = 0`. Returns the total of the input.
pub fn exclusive_scan_inplace<T>(data: &mut [T], par: Par) -> T
where
    T: Copy + Send + Sync + Zero + Add<Output = T>,
{
    scan_impl(data, par, true)
}

/// Exclusive scan into a new vector of length `data.len() + 1` whose last
/// element is the total (a pointer array from counts).
pub fn exclusive_scan<T>(data: &[T], par: Par) -> Vec<T>
where
    T: Copy + Send + Sync + Zero + Add<Output = T>,
{
    let mut out = Vec::with_capacity(data.len() + 1);
    out.extend_from_slice(data);
    out.push(T::zero());
    let total = scan_impl(&mut out, par, true);
    let _ = total;
    out
}

/// Pointer array from per-slice counts, with overflow checking: the result
/// has `counts.len() + 1` entries, starting at 0.
///
/// # Errors
/// [`AlgebraError::TooLarge`] if the total exceeds `u32::MAX`.
pub fn offsets_from_counts(counts: &[u32], par: Par) -> Result<Vec<u32>> {
    offsets_of(counts.len(), par, |slices, out| out.copy_from_slice(&counts[slices]))
}

/// Pointer array of `n` slices whose counts `fill` writes: `fill(range,
/// out)` stores the count of each slice of `range` in `out` (of the same
/// length; ranges are contiguous blocks, so `fill` can carry state along a
/// block). The result has `n + 1` entries, starting at 0. Unlike
/// [`offsets_from_counts`], the counts are never held apart: they are
/// written in place and summed in two passes over the result.
///
/// # Errors
/// [`AlgebraError::TooLarge`] if the total exceeds `u32::MAX` (or `n` does).
pub fn offsets_with(n: usize, par: Par, fill: impl Fn(std::ops::Range<usize>, &mut [u32]) + Sync) -> Result<Vec<u32>> {
    to_u32(n, "slice count")?;
    offsets_of(n, par, fill)
}

/// [`offsets_with`] for any `n`: the counts written block by block
/// ([`SCAN_BLOCK`]) and scanned within each, then each block's offset
/// added.
fn offsets_of(n: usize, par: Par, fill: impl Fn(std::ops::Range<usize>, &mut [u32]) + Sync) -> Result<Vec<u32>> {
    let mut ptr: Vec<u32> = crate::mem::try_zeroed_vec(n + 1, "row offsets")?;
    // Pass 1: each block's counts, scanned within the block (64-bit, so a
    // block's overflow shows), and its total.
    let local = |(b, chunk): (usize, &mut [u32])| -> u64 {
        let start = b * SCAN_BLOCK;
        fill(start..start + chunk.len(), chunk);
        let mut acc = 0u64;
        for v in chunk.iter_mut() {
            acc += u64::from(*v);
            *v = acc as u32;
        }
        acc
    };
    let totals: Vec<u64> = match par {
        Par::Seq => ptr[1..].chunks_mut(SCAN_BLOCK).enumerate().map(local).collect(),
        Par::Rayon => ptr[1..].par_chunks_mut(SCAN_BLOCK).enumerate().map(local).collect(),
    };
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = 0u64;
    for &t in &totals {
        offsets.push(acc as u32);
        acc += t;
        if acc > u64::from(u32::MAX) {
            let value = totals.iter().map(|&t| u128::from(t)).sum();
            return Err(AlgebraError::TooLarge { what: "sum of counts", value });
        }
    }
    // Pass 2: each block's offset (a block's local sums fit, being at most
    // the total).
    let add = |(chunk, &off): (&mut [u32], &u32)| {
        for v in chunk.iter_mut() {
            *v += off;
        }
    };
    match par {
        Par::Seq => ptr[1..].chunks_mut(SCAN_BLOCK).zip(&offsets).skip(1).for_each(add),
        Par::Rayon => ptr[1..].par_chunks_mut(SCAN_BLOCK).zip(&offsets).skip(1).for_each(add),
    }
    Ok(ptr)
}

/// Sum with overflow detection (integers).
pub fn checked_total<T>(data: &[T], par: Par) -> Option<T>
where
    T: Copy + Send + Sync + Zero + CheckedAdd,
{
    let fold = |chunk: &[T]| chunk.iter().try_fold(T::zero(), |a, b| a.checked_add(b));
    match par {
        Par::Seq => fold(data),
        Par::Rayon => data
            .par_chunks(SCAN_BLOCK)
            .map(fold)
            .collect::<Vec<_>>()
            .into_iter()
            .try_fold(T::zero(), |a, b| a.checked_add(&b?)),
    }
}

fn scan_impl<T>(data: &mut [T], par: Par, exclusive: bool) -> T
where
    T: Copy + Send + Sync + Zero + Add<Output = T>,
{
    let local = |chunk: &mut [T]| -> T {
        let mut acc = T::zero();
        for v in chunk.iter_mut() {
            let x = *v;
            if exclusive {
                *v = acc;
                acc = acc + x;
            } else {
                acc = acc + x;
                *v = acc;
            }
        }
        acc
    };
    let nblocks = data.len().div_ceil(SCAN_BLOCK);
    if nblocks <= 1 {
        return local(data);
    }
    let totals: Vec<T> = match par {
        Par::Seq => data.chunks_mut(SCAN_BLOCK).map(local).collect(),
        Par::Rayon => data.par_chunks_mut(SCAN_BLOCK).map(local).collect(),
    };
    let mut offsets = Vec::with_capacity(nblocks);
    let mut acc = T::zero();
    for &t in &totals {
        offsets.push(acc);
        acc = acc + t;
    }
    let add = |(chunk, &off): (&mut [T], &T)| {
        for v in chunk.iter_mut() {
            *v = off + *v;
        }
    };
    match par {
        Par::Seq => data.chunks_mut(SCAN_BLOCK).zip(&offsets).skip(1).for_each(add),
        Par::Rayon => data.par_chunks_mut(SCAN_BLOCK).zip(&offsets).skip(1).for_each(add),
    }
    acc
}

/// Positions `i < len` where `pred(i)` holds, in increasing order (stream
/// compaction).
///
/// # Errors
/// [`AlgebraError::TooLarge`] if `len` exceeds `u32`.
pub fn compact(len: usize, pred: impl Fn(usize) -> bool + Sync, par: Par) -> Result<Vec<u32>> {
    to_u32(len, "length to compact")?;
    let run = |r: std::ops::Range<usize>| -> Vec<u32> { r.filter(|&i| pred(i)).map(|i| i as u32).collect() };
    Ok(match par {
        Par::Seq => run(0..len),
        Par::Rayon => {
            let ranges: Vec<_> =
                (0..len.div_ceil(SCAN_BLOCK)).map(|b| b * SCAN_BLOCK..((b + 1) * SCAN_BLOCK).min(len)).collect();
            let parts: Vec<Vec<u32>> = ranges.into_par_iter().map(run).collect();
            parts.concat()
        }
    })
}

/// Numbering of the nonzeros that satisfy a predicate; see
/// [`enumerate_nonzeros`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enumeration {
    /// For each stored entry (storage order), the number of selected entries
    /// before it: a selected entry's id, in `0..count`.
    pub ids: Vec<u32>,
    /// Whether each stored entry was selected.
    pub selected: Vec<bool>,
    /// Number of selected entries.
    pub count: u32,
}

impl Enumeration {
    /// Id of the entry at storage position `p`, if it was selected.
    #[inline]
    pub fn id(&self, p: usize) -> Option<u32> {
        self.selected[p].then(|| self.ids[p])
    }
}

/// Enumerates the nonzeros of `a` for which `pred(row, col, value)` holds,
/// in storage order, by an exclusive scan over the 0/1 flags (Mlakar et al.
/// 2020, §4.1 and Alg. 2: edge ids from the lower triangle of `E`).
///
/// ```
/// use subla_algebra::{CscMat, Par, scan::enumerate_nonzeros};
/// // Symmetric adjacency of a triangle: number the edges from the lower triangle.
/// let e = CscMat::try_new(3, 3, vec![0, 2, 4, 6], vec![1, 2, 0, 2, 0, 1], vec![1u8; 6])?;
/// let en = enumerate_nonzeros(e.as_ref(), |i, j, _| i > j, Par::Seq);
/// assert_eq!(en.count, 3);
/// assert_eq!(en.id(0), Some(0)); // entry (1, 0)
/// assert_eq!(en.id(2), None); // entry (0, 1) is in the upper triangle
/// # Ok::<(), subla_algebra::AlgebraError>(())
/// ```
pub fn enumerate_nonzeros<T: Sync, L: Layout>(
    a: SparseRef<'_, T, L>,
    pred: impl Fn(u32, u32, &T) -> bool + Sync,
    par: Par,
) -> Enumeration {
    let pat = a.pattern();
    let ptr = pat.ptr();
    let idx = pat.indices();
    let vals = a.values();
    let mut selected = vec![false; a.nnz()];
    let flag_slice = |m: usize, flags: &mut [bool]| {
        let start = ptr[m] as usize;
        for (k, f) in flags.iter_mut().enumerate() {
            let (r, c) = L::row_col(m as u32, idx[start + k]);
            *f = pred(r, c, &vals[start + k]);
        }
    };
    let ranges = crate::par::balanced_ranges(ptr, par.blocks(a.nnz(), 1 << 14));
    let pieces = {
        let mut rest: &mut [bool] = &mut selected;
        let mut pieces = Vec::with_capacity(ranges.len());
        for r in &ranges {
            let len = (ptr[r.end] - ptr[r.start]) as usize;
            let (head, tail) = rest.split_at_mut(len);
            pieces.push(head);
            rest = tail;
        }
        pieces
    };
    let work = |(r, flags): (std::ops::Range<usize>, &mut [bool])| {
        let base = ptr[r.start] as usize;
        for m in r {
            let s = ptr[m] as usize - base;
            let e = ptr[m + 1] as usize - base;
            flag_slice(m, &mut flags[s..e]);
        }
    };
    if ranges.len() <= 1 {
        ranges.into_iter().zip(pieces).for_each(work);
    } else {
        ranges.into_par_iter().zip(pieces).for_each(work);
    }
    let mut ids: Vec<u32> = match par {
        Par::Seq => selected.iter().map(|&s| s as u32).collect(),
        Par::Rayon => selected.par_iter().map(|&s| s as u32).collect(),
    };
    // nnz fits u32, so the count does too.
    let count = exclusive_scan_inplace(&mut ids, par);
    Enumeration { ids, selected, count }
}
