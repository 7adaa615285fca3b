//! Shared helpers for the integration tests.
#![allow(dead_code, unreachable_pub)]

use rayon::ThreadPoolBuilder;

/// Runs `f` inside a rayon pool of `threads` threads.
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool").install(f)
}

/// Bit pattern of an f64 slice, for bitwise comparisons.
pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}
