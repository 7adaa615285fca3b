//! Explicit parallelism (as faer's `Par`): every parallel routine takes a
//! [`Par`] and gives the same bits for every choice. The helpers cut work
//! into contiguous blocks; blocks never change results, only speed.

use std::ops::Range;

use rayon::prelude::*;

/// How a routine may use threads.
///
/// Results never depend on this choice or on the size of the rayon pool:
/// work is split so that every output element is computed by one task in a
/// fixed order (see the crate docs on determinism).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Par {
    /// Run on the calling thread.
    Seq,
    /// Run on the current rayon pool (use `ThreadPool::install` to choose
    /// its size).
    #[default]
    Rayon,
}

impl Par {
    /// Number of threads this choice may use.
    pub fn threads(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon => rayon::current_num_threads(),
        }
    }

    /// How many blocks to cut `work_items` into: a few per thread for
    /// balance, none smaller than `min_per_block`, one for [`Par::Seq`].
    pub fn blocks(self, work_items: usize, min_per_block: usize) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon => {
                let by_size = work_items / min_per_block.max(1);
                (self.threads() * 4).min(by_size).max(1)
            }
        }
    }
}

/// `f(i)` for `i` in `0..n`, collected in order: in parallel under
/// [`Par::Rayon`] (at least 4096 items per task), on the calling thread
/// under [`Par::Seq`]. Each item is computed by one call, so the result
/// does not depend on the choice.
pub fn collect<T: Send>(n: usize, par: Par, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    let mut out = crate::mem::vec_with_capacity(n);
    match par {
        Par::Rayon => (0..n).into_par_iter().with_min_len(1 << 12).map(f).collect_into_vec(&mut out),
        Par::Seq => out.extend((0..n).map(f)),
    }
    out
}

/// [`collect()`], or [`AlgebraError::OutOfMemory`](crate::AlgebraError::OutOfMemory)
/// naming `what` where the result cannot be allocated (instead of
/// aborting).
///
/// # Errors
/// [`AlgebraError::OutOfMemory`](crate::AlgebraError::OutOfMemory).
pub fn try_collect<T: Send>(
    n: usize,
    par: Par,
    what: &'static str,
    f: impl Fn(usize) -> T + Sync + Send,
) -> crate::Result<Vec<T>> {
    let mut out = crate::mem::try_vec_with_capacity(n, what)?;
    // The room is there: neither way of filling it allocates again.
    match par {
        Par::Rayon => (0..n).into_par_iter().with_min_len(1 << 12).map(f).collect_into_vec(&mut out),
        Par::Seq => out.extend((0..n).map(f)),
    }
    Ok(out)
}

/// Splits major slices `0..ptr.len()-1` into at most `nblocks` contiguous
/// ranges holding about the same number of stored entries (plus one unit of
/// weight per slice, so empty slices are spread too).
pub fn balanced_ranges(ptr: &[u32], nblocks: usize) -> Vec<Range<usize>> {
    let n = ptr.len().saturating_sub(1);
    if n == 0 {
        return std::iter::once(0..0).collect();
    }
    let nblocks = nblocks.clamp(1, n);
    let total = ptr[n] as u64 + n as u64;
    let mut out = Vec::with_capacity(nblocks);
    let mut start = 0usize;
    for b in 1..=nblocks {
        let end = if b == nblocks {
            n
        } else {
            let target = total * b as u64 / nblocks as u64;
            // First slice boundary whose weight reaches the target.
            let mut lo = start;
            let mut hi = n;
            while lo < hi {
                let mid = (lo + hi) / 2;
                if ptr[mid] as u64 + mid as u64 >= target {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        };
        if end > start {
            out.push(start..end);
            start = end;
        }
    }
    if out.is_empty() {
        out.extend(std::iter::once(0..n));
    }
    out
}

/// The first slice of block `k` when major slices `0..ptr.len()-1` are cut
/// into `nblocks` blocks as [`balanced_ranges`] cuts them (`0` for
/// `k == 0`, the number of slices from the last block on; a block may be
/// empty where [`balanced_ranges`] drops one). Computed alone, so that a block needs no list of ranges.
pub fn balanced_start(ptr: &[u32], nblocks: usize, k: usize) -> usize {
    let n = ptr.len().saturating_sub(1);
    if k == 0 || n == 0 {
        return 0;
    }
    let nblocks = nblocks.clamp(1, n);
    if k >= nblocks {
        return n;
    }
    let total = ptr[n] as u64 + n as u64;
    let target = total * k as u64 / nblocks as u64;
    // First slice boundary whose weight reaches the target.
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if ptr[mid] as u64 + mid as u64 >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// `f(rows, piece)` for blocks `k` in `0..nblocks`, where block `k` holds
/// rows `start(k)..start(k + 1)` and `piece` is those rows of `data`
/// (`stride` values a row, rows `start(0)..` from the start of `data`).
/// The blocks run on the current rayon pool, split in halves by
/// `rayon::join` (one block runs on the calling thread). Allocates
/// nothing: the blocks are neither collected nor split ahead, so that a
/// routine called every frame can run in parallel without allocating.
///
/// # Panics
/// If `start` is not non-decreasing over `0..=nblocks` or `data` is
/// shorter than the rows need.
pub fn for_each_block<T: Send>(
    data: &mut [T],
    stride: usize,
    nblocks: usize,
    start: &(impl Fn(usize) -> usize + Sync),
    f: &(impl Fn(Range<usize>, &mut [T]) + Sync),
) {
    fn halves<T: Send>(
        data: &mut [T],
        stride: usize,
        blocks: Range<usize>,
        start: &(impl Fn(usize) -> usize + Sync),
        f: &(impl Fn(Range<usize>, &mut [T]) + Sync),
    ) {
        if blocks.len() <= 1 {
            if !blocks.is_empty() {
                f(start(blocks.start)..start(blocks.end), data);
            }
            return;
        }
        let mid = blocks.start + blocks.len() / 2;
        let (a, b) = data.split_at_mut((start(mid) - start(blocks.start)) * stride);
        rayon::join(|| halves(a, stride, blocks.start..mid, start, f), || halves(b, stride, mid..blocks.end, start, f));
    }
    halves(data, stride, 0..nblocks, start, f);
}

/// Equal ranges of `0..n` (at most `nblocks`, none empty unless `n == 0`).
pub fn even_ranges(n: usize, nblocks: usize) -> Vec<Range<usize>> {
    let nblocks = nblocks.clamp(1, n.max(1));
    (0..nblocks).map(|b| n * b / nblocks..n * (b + 1) / nblocks).filter(|r| !r.is_empty() || n == 0).collect()
}

/// Splits `data` into consecutive mutable pieces of `ranges[k].len() * stride`
/// elements.
///
/// # Panics
/// If `data` is shorter than the ranges need.
pub fn split_by_ranges<'a, T>(mut data: &'a mut [T], ranges: &[Range<usize>], stride: usize) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (head, tail) = data.split_at_mut(r.len() * stride);
        out.push(head);
        data = tail;
    }
    out
}

/// The `pieces` one after the other in one vector, copied in parallel
/// when there is more than one (so the first touches of the output pages
/// are spread over the threads too).
pub fn concat<T: Copy + Default + Send + Sync>(pieces: &[&[T]]) -> Vec<T> {
    match try_concat(pieces, "a concatenation") {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

/// [`concat()`], or [`AlgebraError::OutOfMemory`](crate::AlgebraError::OutOfMemory)
/// naming `what` where the result cannot be allocated.
///
/// # Errors
/// [`AlgebraError::OutOfMemory`](crate::AlgebraError::OutOfMemory).
pub fn try_concat<T: Copy + Default + Send + Sync>(pieces: &[&[T]], what: &'static str) -> crate::Result<Vec<T>> {
    let lens: Vec<Range<usize>> = pieces.iter().map(|p| 0..p.len()).collect();
    let mut out = crate::mem::try_filled_vec(lens.iter().map(Range::len).sum(), T::default(), what)?;
    let dst = split_by_ranges(&mut out, &lens, 1);
    if pieces.len() > 1 {
        dst.into_par_iter().zip(pieces.par_iter()).for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.into_iter().zip(pieces).for_each(|(d, s)| d.copy_from_slice(s));
    }
    Ok(out)
}

/// Splits `data` (laid out slice by slice as described by the pointer array
/// `ptr`) into one mutable piece per range of major slices.
///
/// # Panics
/// If the ranges are not consecutive from 0 or `data` is shorter than
/// `ptr` says.
pub fn split_by_ptr<'a, T>(mut data: &'a mut [T], ptr: &[u32], ranges: &[Range<usize>]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut at = 0usize;
    for r in ranges {
        assert_eq!(ptr[r.start] as usize, at, "split_by_ptr: ranges must be consecutive");
        let len = (ptr[r.end] - ptr[r.start]) as usize;
        let (head, tail) = data.split_at_mut(len);
        out.push(head);
        data = tail;
        at += len;
    }
    out
}

/// A raw pointer that tasks share to write disjoint positions of one buffer.
pub(crate) struct SharedMut<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: tasks only write disjoint positions (each caller documents why) and
// the buffer outlives the scope that shares the pointer.
unsafe impl<T: Send> Sync for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SharedMut<T> {}

impl<T> SharedMut<T> {
    pub(crate) fn new(data: &mut [T]) -> Self {
        SharedMut { ptr: data.as_mut_ptr(), len: data.len() }
    }

    /// Writes `value` at `i`.
    ///
    /// # Safety
    /// No other task reads or writes position `i` concurrently, and the
    /// buffer is still borrowed by the creator of `self`.
    #[inline]
    pub(crate) unsafe fn write(&self, i: usize, value: T) {
        assert!(i < self.len, "internal error: shared write out of range");
        // SAFETY: in range (checked) and exclusive per the caller's contract.
        // The old value is not dropped: callers share uninitialised
        // (`MaybeUninit`) or `Copy` buffers.
        unsafe { self.ptr.add(i).write(value) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row pointers of `n` rows of lengths cycling through `0, 5, 1, 17`.
    fn ptr(n: usize) -> Vec<u32> {
        let mut p = vec![0u32];
        for i in 0..n {
            p.push(p[i] + [0, 5, 1, 17][i % 4]);
        }
        p
    }

    #[test]
    fn balanced_starts_are_the_balanced_ranges() {
        for n in [0, 1, 2, 7, 100, 1001] {
            let p = ptr(n);
            for nblocks in [1, 2, 3, 8, 64, 2000] {
                let ranges = balanced_ranges(&p, nblocks);
                let starts: Vec<usize> = (0..=nblocks).map(|k| balanced_start(&p, nblocks, k)).collect();
                assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{n} rows, {nblocks} blocks: not ascending");
                assert_eq!((starts[0], starts[nblocks]), (0, n), "{n} rows, {nblocks} blocks: the ends");
                // The same cuts, less the empty blocks.
                let mut cuts: Vec<usize> = starts.clone();
                cuts.dedup();
                let want: Vec<usize> = ranges.iter().map(|r| r.start).chain([n]).collect();
                if n > 0 {
                    assert_eq!(cuts, want, "{n} rows, {nblocks} blocks");
                }
            }
        }
    }

    #[test]
    fn each_block_gets_its_rows() {
        for (n, nblocks) in [(0, 1), (1, 1), (10, 3), (10, 10), (1000, 16), (5, 8)] {
            let p = ptr(n);
            let stride = 3;
            let mut data = vec![usize::MAX; n * stride];
            let start = |k: usize| balanced_start(&p, nblocks, k);
            for_each_block(&mut data, stride, nblocks, &start, &|rows, piece| {
                assert_eq!(piece.len(), rows.len() * stride);
                for (i, v) in rows.flat_map(|i| [i; 3]).zip(piece) {
                    *v = i;
                }
            });
            let want: Vec<usize> = (0..n).flat_map(|i| [i; 3]).collect();
            assert_eq!(data, want, "{n} rows, {nblocks} blocks");
        }
    }
}
