//! Large output buffers that the kernel may back with huge pages.
//!
//! A build or an eval step writes arrays of tens to hundreds of megabytes,
//! each once. Fresh memory costs a page fault per page at its first touch,
//! and with 4 KiB pages those faults can take a third of a step's time. On
//! Linux, the buffers allocated here that span at least
//! [`HUGE_PAGE_MIN_BYTES`] are advised `MADV_HUGEPAGE` before anything
//! touches them, so that where transparent huge pages are enabled (the
//! `madvise` mode of `/sys/kernel/mm/transparent_hugepage/enabled`) the
//! kernel backs them with 2 MiB pages: one fault instead of 512.
//!
//! The advice changes neither contents nor layout: the buffers are plain
//! [`Vec`]s from the global allocator, freed as usual. Elsewhere, after
//! [`set_huge_pages(false)`](set_huge_pages), or with the environment
//! variable `SUBLA_HUGE_PAGES=0`, the functions allocate without it.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{AlgebraError, Result};

/// Buffers smaller than this are not advised (2 huge pages).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Size (and alignment) of the huge pages the advice covers.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Whether the advice is on: [`UNSET`] until the first use reads
/// `SUBLA_HUGE_PAGES`, then [`ON`] or [`OFF`].
static HUGE_PAGES: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

/// Turns the huge-page advice on or off for the whole process; buffers
/// already allocated keep theirs. Until this is called, the advice is on
/// unless the environment variable `SUBLA_HUGE_PAGES` is `0`, `off` or
/// `false`.
pub fn set_huge_pages(on: bool) {
    HUGE_PAGES.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether the huge-page advice is on ([`set_huge_pages`]).
pub fn huge_pages() -> bool {
    match HUGE_PAGES.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => {
            let off = std::env::var("SUBLA_HUGE_PAGES")
                .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "off" | "false"));
            // A concurrent `set_huge_pages` wins over the environment.
            let _ =
                HUGE_PAGES.compare_exchange(UNSET, if off { OFF } else { ON }, Ordering::Relaxed, Ordering::Relaxed);
            HUGE_PAGES.load(Ordering::Relaxed) == ON
        }
    }
}

/// Types whose all-zero bit pattern is a valid value (bytemuck's).
pub use bytemuck::Zeroable;

/// `n` zeros, from zeroed memory, or [`AlgebraError::OutOfMemory`] naming
/// `what` where the allocator cannot supply `n` values (instead of
/// aborting): pages the allocator takes fresh from the kernel are not
/// written here, so their first touch happens wherever the caller first
/// writes them (in parallel, for parallel writers), with the huge-page
/// advice when the buffer is large.
///
/// # Errors
/// [`AlgebraError::OutOfMemory`].
pub fn try_zeroed_vec<T: Zeroable>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = bytemuck::try_zeroed_vec::<T>(n).map_err(|()| out_of_memory::<T>(what, n))?;
    advise(v.as_mut_ptr().cast::<u8>(), v.len() * size_of::<T>());
    Ok(v)
}

/// [`vec_with_capacity`], or [`AlgebraError::OutOfMemory`] naming `what`
/// where the allocator cannot supply room for `n` values (instead of
/// aborting).
///
/// # Errors
/// [`AlgebraError::OutOfMemory`].
pub fn try_vec_with_capacity<T>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| out_of_memory::<T>(what, n))?;
    advise(v.as_mut_ptr().cast::<u8>(), v.capacity() * size_of::<T>());
    Ok(v)
}

/// `n` copies of `value`, or [`AlgebraError::OutOfMemory`] naming `what`
/// (instead of aborting).
///
/// # Errors
/// [`AlgebraError::OutOfMemory`].
pub fn try_filled_vec<T: Clone>(n: usize, value: T, what: &'static str) -> Result<Vec<T>> {
    let mut v = try_vec_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// Makes room for `more` values in `v`, or [`AlgebraError::OutOfMemory`]
/// naming `what` (instead of aborting): for buffers that grow as they are
/// written.
///
/// # Errors
/// [`AlgebraError::OutOfMemory`].
pub fn try_reserve<T>(v: &mut Vec<T>, more: usize, what: &'static str) -> Result<()> {
    v.try_reserve(more).map_err(|_| out_of_memory::<T>(what, v.len().saturating_add(more)))
}

/// The [`AlgebraError::OutOfMemory`] of `n` values of `T` for `what`.
fn out_of_memory<T>(what: &'static str, n: usize) -> AlgebraError {
    AlgebraError::OutOfMemory { what, bytes: (n as u128).saturating_mul(size_of::<T>() as u128) }
}

/// An empty vector with room for `n` elements, advised as
/// [`try_zeroed_vec`] when large: for buffers filled by `extend` or a parallel
/// `collect_into_vec`.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise(v.as_mut_ptr().cast::<u8>(), v.capacity() * size_of::<T>());
    v
}

/// Advises the 2 MiB-aligned part of `[ptr, ptr + bytes)` as huge-page
/// memory. Only pages not yet touched change their backing.
#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, bytes: usize) {
    if bytes < HUGE_PAGE_MIN_BYTES || !huge_pages() {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: the range lies inside one live allocation of the caller;
        // `MADV_HUGEPAGE` changes how the kernel backs it, not its contents.
        // The result is ignored: the advice is a hint (it fails where
        // transparent huge pages are not built in).
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_vectors_are_zero_and_usable() {
        for n in [0, 1, 1000, (HUGE_PAGE_MIN_BYTES / 4) + 12_345] {
            let mut v: Vec<u32> = try_zeroed_vec(n, "x").unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
            v.push(7);
            assert_eq!(v[n], 7);
        }
        let w: Vec<[f64; 3]> = try_zeroed_vec(1 << 20, "x").unwrap();
        assert!(w.iter().all(|r| r == &[0.0; 3]));
        let e: Vec<f32> = try_zeroed_vec(0, "x").unwrap();
        assert!(e.is_empty());
    }

    #[test]
    fn the_switch_holds() {
        let before = huge_pages();
        set_huge_pages(false);
        assert!(!huge_pages());
        let v: Vec<u32> = try_zeroed_vec(HUGE_PAGE_MIN_BYTES, "x").unwrap();
        assert!(v.iter().all(|&x| x == 0));
        set_huge_pages(true);
        assert!(huge_pages());
        set_huge_pages(before);
    }

    /// An allocation the allocator cannot make is an error, not a panic
    /// (`bytemuck::zeroed_vec` unwraps) or an abort (`Vec::with_capacity`).
    #[test]
    fn impossible_allocations_are_errors() {
        let n = usize::MAX / 16;
        let e = try_zeroed_vec::<u64>(n, "the test buffer").unwrap_err();
        assert!(
            matches!(e, AlgebraError::OutOfMemory { what: "the test buffer", bytes } if bytes == n as u128 * 8),
            "{e}"
        );
        assert!(matches!(try_vec_with_capacity::<u32>(n, "x"), Err(AlgebraError::OutOfMemory { .. })));
        assert!(matches!(try_filled_vec(n, 0.5f64, "x"), Err(AlgebraError::OutOfMemory { .. })));
        let mut v = vec![1u8];
        assert!(matches!(try_reserve(&mut v, usize::MAX / 2, "x"), Err(AlgebraError::OutOfMemory { .. })));
        // A byte count that overflows `usize` is an error too.
        assert!(matches!(try_zeroed_vec::<u64>(usize::MAX / 4, "x"), Err(AlgebraError::OutOfMemory { .. })));
        assert!(matches!(
            crate::par::try_collect(n, crate::par::Par::Seq, "x", |i| i),
            Err(AlgebraError::OutOfMemory { .. })
        ));
        assert_eq!(try_zeroed_vec::<u32>(5, "x").unwrap(), [0; 5]);
        assert_eq!(try_filled_vec(3, 7u8, "x").unwrap(), [7; 3]);
    }

    #[test]
    fn reserved_vectors_hold_their_capacity() {
        let mut v: Vec<u64> = vec_with_capacity(HUGE_PAGE_MIN_BYTES);
        assert!(v.is_empty() && v.capacity() >= HUGE_PAGE_MIN_BYTES);
        v.extend(0..10);
        assert_eq!(v[9], 9);
    }
}
