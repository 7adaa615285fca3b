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
    let lens: Vec<Range<usize>> = pieces.iter().map(|p| 0..p.len()).collect();
    let mut out = vec![T::default(); lens.iter().map(Range::len).sum()];
    let dst = split_by_ranges(&mut out, &lens, 1);
    if pieces.len() > 1 {
        dst.into_par_iter().zip(pieces.par_iter()).for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.into_iter().zip(pieces).for_each(|(d, s)| d.copy_from_slice(s));
    }
    out
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
