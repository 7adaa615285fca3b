//! Deterministic random data and small helpers.

use subla_algebra::{CsrMat, Par};

/// xorshift64*: deterministic, dependency-free.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
    /// Uniform in `[lo, hi)`.
    pub(crate) fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
}

/// A random `nrows x ncols` CSR matrix with about `per_row` entries per row
/// and values in `[lo, hi)`.
pub(crate) fn random_csr(rng: &mut Rng, nrows: usize, ncols: usize, per_row: u32, lo: f32, hi: f32) -> CsrMat<f32> {
    let mut triplets = Vec::new();
    for r in 0..nrows {
        let k = rng.below(2 * per_row + 1);
        for _ in 0..k {
            triplets.push((r, rng.below(ncols as u32) as usize, rng.f32_in(lo, hi)));
        }
    }
    // Duplicates are summed: still a valid matrix.
    CsrMat::try_from_triplets(nrows, ncols, &triplets).expect("valid triplets")
}

/// CPU exclusive scan, the oracle.
pub(crate) fn cpu_exclusive_scan(data: &[u32]) -> (Vec<u32>, u32) {
    let mut out = data.to_vec();
    let total = subla_algebra::scan::exclusive_scan_inplace(&mut out, Par::Seq);
    (out, total)
}

/// Times a test body, printing the duration (visible with `--nocapture`).
pub(crate) struct Timer(&'static str, std::time::Instant);

impl Timer {
    pub(crate) fn start(name: &'static str) -> Self {
        Self(name, std::time::Instant::now())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        eprintln!("{}: {:.3} s", self.0, self.1.elapsed().as_secs_f64());
    }
}
