//! The factored evaluation of tensor rows ([`TensorKernel::Separable`]).
//!
//! Row `(x, y)` of a patch with control points `p(r, s)` is
//! `Σ_r w[x][r] · q_y(r)` with `q_y(r) = Σ_s w[y][s] · p(r, s)`: each factor
//! `q_y` (four sums over four points) is computed once per patch and
//! position `y`, and each row is then four terms instead of sixteen.
//!
//! The patches are split between tasks; each patch's rows are written in
//! ascending order, every row by one task.
//!
//! Each row is the same sequence of operations (multiply, then add, never
//! fused) whatever the blocks, threads or CPU features, so the result is
//! the same bits on every run; it is within rounding of the composed
//! matrix's evaluation, not its bits (the sums are grouped differently).
//!
//! [`TensorKernel::Separable`]: super::TensorKernel::Separable

use std::any::TypeId;
use std::ops::Range;

use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::Par;

use super::{LANES, OPEN, TensorRows, cast, lane_groups};
use crate::{Result, SchemeError};

/// The tensor rows of a [`TensorRows`] arranged for the factored sum.
#[derive(Clone, Debug)]
pub(super) struct Separable<T> {
    /// The one-dimensional weights, converted to `T`.
    weights: Vec<[T; 4]>,
    /// Each patch's control points by grid index `4 r + s`.
    points: Vec<[u32; 16]>,
    /// Patch `p`'s rows are `entries[ptr[p]..ptr[p + 1]]`, ascending.
    ptr: Vec<u32>,
    entries: Vec<Entry>,
}

/// A tensor row: the output row and its positions.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Entry {
    row: u32,
    x: u16,
    y: u16,
}

impl<T: Float> Separable<T> {
    /// `tensor`'s rows grouped by patch (a counting sort, so ascending
    /// within each).
    ///
    /// # Errors
    /// [`SchemeError::TooLarge`] for more than `u32::MAX` rows.
    pub(super) fn new(tensor: &TensorRows) -> Result<Self> {
        if tensor.rows.len() > u32::MAX as usize {
            return Err(SchemeError::TooLarge {
                what: "tensor rows evaluated by patch",
                value: tensor.rows.len() as u128,
            });
        }
        let np = tensor.patches.len();
        let mut ptr = vec![0u32; np + 1];
        for r in &tensor.rows {
            if r.patch != OPEN {
                ptr[r.patch as usize + 1] += 1;
            }
        }
        for p in 0..np {
            ptr[p + 1] += ptr[p];
        }
        let mut next = ptr[..np].to_vec();
        let mut entries = vec![Entry::default(); tensor.closed];
        for (i, r) in tensor.rows.iter().enumerate() {
            if r.patch != OPEN {
                let at = &mut next[r.patch as usize];
                entries[*at as usize] = Entry { row: i as u32, x: r.x, y: r.y };
                *at += 1;
            }
        }
        let points = tensor
            .patches
            .iter()
            .map(|p| {
                let mut g = [0u32; 16];
                for (&id, &k) in p.ids.iter().zip(&p.grid) {
                    g[usize::from(k & 15)] = id;
                }
                g
            })
            .collect();
        let weights = tensor.weights.iter().map(|w| w.map(cast::<T>)).collect();
        Ok(Separable { weights, points, ptr, entries })
    }

    /// Bytes read per evaluation besides the data.
    pub(super) fn bytes(&self) -> u64 {
        (self.entries.len() * std::mem::size_of::<Entry>()
            + self.ptr.len() * 4
            + self.points.len() * 64
            + self.weights.len() * 4 * std::mem::size_of::<T>()) as u64
    }
}

impl<T: Float + Send + Sync + 'static> Separable<T> {
    /// The tensor rows of `y = R x` for row-major `x` (`ncols × d`) and `y`
    /// (`nrows × d`); the other rows are left as they are.
    pub(super) fn apply(&self, x: &[T], y: &mut [T], d: usize, par: Par) {
        self.apply_with(x, y, d, par, false);
    }

    /// [`Self::apply`], through the portable body whatever the CPU if
    /// `portable`.
    pub(super) fn apply_with(&self, x: &[T], y: &mut [T], d: usize, par: Par, portable: bool) {
        // Channels in groups of four lanes (four channels are one group
        // already).
        let ncols = x.len() / d;
        let groups = d.div_ceil(LANES);
        let grouped = (d != LANES).then(|| lane_groups(x, d));
        let xs = grouped.as_deref().unwrap_or(x);
        let out = Out { y: y.as_mut_ptr(), len: y.len() };
        // Tasks of consecutive patches with about equally many rows.
        let (n, np) = (self.entries.len(), self.points.len());
        let tasks = par.blocks(n * d * 8, 1 << 14);
        let at = |k: usize| if k == tasks { np } else { self.ptr.partition_point(|&e| (e as usize) < k * n / tasks) };
        let run = |patches: Range<usize>| {
            for g in 0..groups {
                let xg = &xs[g * ncols * LANES..(g + 1) * ncols * LANES];
                let (c, ps) = (g * LANES, patches.clone());
                match (d - c, portable) {
                    (1, false) => self.patches::<1>(ps, xg, &out, d, c),
                    (2, false) => self.patches::<2>(ps, xg, &out, d, c),
                    (3, false) => self.patches::<3>(ps, xg, &out, d, c),
                    (_, false) => self.patches::<4>(ps, xg, &out, d, c),
                    (1, true) => self.patches_lanes::<1>(ps, xg, &out, d, c),
                    (2, true) => self.patches_lanes::<2>(ps, xg, &out, d, c),
                    (3, true) => self.patches_lanes::<3>(ps, xg, &out, d, c),
                    (_, true) => self.patches_lanes::<4>(ps, xg, &out, d, c),
                }
            }
        };
        if tasks <= 1 {
            run(0..np);
        } else {
            (0..tasks).into_par_iter().for_each(|k| run(at(k)..at(k + 1)));
        }
    }

    /// Channels `offset..offset + D` of the rows of `patches`, from lane
    /// data `x` (four values a control point). Where the CPU has AVX,
    /// `f64` goes through 256-bit vectors and other types through the same
    /// code compiled for AVX: the operations and their order do not change,
    /// so neither do the bits.
    fn patches<const D: usize>(&self, patches: Range<usize>, x: &[T], out: &Out<T>, d: usize, offset: usize) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            if TypeId::of::<T>() == TypeId::of::<f64>() {
                // SAFETY: `T` is `f64` (checked just above), so these are
                // the same types; the CPU has AVX.
                unsafe {
                    let s = &*std::ptr::from_ref(self).cast::<Separable<f64>>();
                    let x = std::slice::from_raw_parts(x.as_ptr().cast::<f64>(), x.len());
                    let out = &*std::ptr::from_ref(out).cast::<Out<f64>>();
                    s.patches_f64_avx::<D>(patches, x, out, d, offset);
                }
                return;
            }
            // SAFETY: the CPU has AVX (checked just above).
            unsafe { self.patches_avx::<D>(patches, x, out, d, offset) };
            return;
        }
        self.patches_lanes::<D>(patches, x, out, d, offset);
    }

    /// [`Self::patches_lanes`] compiled for AVX.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn patches_avx<const D: usize>(
        &self,
        patches: Range<usize>,
        x: &[T],
        out: &Out<T>,
        d: usize,
        offset: usize,
    ) {
        self.patches_lanes::<D>(patches, x, out, d, offset);
    }

    /// The portable body of [`Self::patches`]. A patch with at least as
    /// many rows as positions gets its factors for every position first; a
    /// patch with fewer gets each row's factor with the row.
    #[inline(always)]
    fn patches_lanes<const D: usize>(&self, patches: Range<usize>, x: &[T], out: &Out<T>, d: usize, offset: usize) {
        let nt = self.weights.len();
        let mut q = vec![[[T::zero(); LANES]; 4]; nt];
        let mut pts = [[T::zero(); LANES]; 16];
        for p in patches {
            let rows = &self.entries[self.ptr[p] as usize..self.ptr[p + 1] as usize];
            if rows.is_empty() {
                continue;
            }
            for (pt, &id) in pts.iter_mut().zip(&self.points[p]) {
                let k = id as usize * LANES;
                pt.copy_from_slice(&x[k..k + LANES]);
            }
            let all = rows.len() >= nt;
            if all {
                for (qt, w) in q.iter_mut().zip(&self.weights) {
                    *qt = contract(w, &pts);
                }
            }
            for e in rows {
                let (wx, y) = (&self.weights[usize::from(e.x)], usize::from(e.y));
                let v = if all { combine(wx, &q[y]) } else { combine(wx, &contract(&self.weights[y], &pts)) };
                out.write::<D>(e.row as usize * d + offset, &v);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Separable<f64> {
    /// [`Separable::patches_lanes`] for `f64` in 256-bit vectors: the same
    /// operations in the same order, so the same bits.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[target_feature(enable = "avx")]
    unsafe fn patches_f64_avx<const D: usize>(
        &self,
        patches: Range<usize>,
        x: &[f64],
        out: &Out<f64>,
        d: usize,
        offset: usize,
    ) {
        use std::arch::x86_64::{
            __m256d, _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd,
            _mm256_storeu_pd,
        };
        let w = &self.weights[..];
        let contract = |wy: &[f64; 4], pts: &[__m256d; 16]| -> [__m256d; 4] {
            let ws: [__m256d; 4] = std::array::from_fn(|k| _mm256_broadcast_sd(&wy[k]));
            std::array::from_fn(|r| {
                let mut acc = _mm256_mul_pd(ws[0], pts[4 * r]);
                for k in 1..4 {
                    acc = _mm256_add_pd(acc, _mm256_mul_pd(ws[k], pts[4 * r + k]));
                }
                acc
            })
        };
        let combine = |wx: &[f64; 4], qs: &[__m256d; 4]| -> [f64; LANES] {
            let mut acc = _mm256_mul_pd(_mm256_broadcast_sd(&wx[0]), qs[0]);
            for r in 1..4 {
                acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(&wx[r]), qs[r]));
            }
            let mut v = [0f64; LANES];
            // SAFETY: four values into a four-value array.
            unsafe { _mm256_storeu_pd(v.as_mut_ptr(), acc) };
            v
        };
        let nt = w.len();
        let mut q = vec![[_mm256_setzero_pd(); 4]; nt];
        for p in patches {
            let rows = &self.entries[self.ptr[p] as usize..self.ptr[p + 1] as usize];
            if rows.is_empty() {
                continue;
            }
            let ids = &self.points[p];
            assert!(
                ids.iter().all(|&id| (id as usize + 1) * LANES <= x.len()),
                "tensor eval: a control point of patch {p} out of range"
            );
            // SAFETY: the four values of a control point within `x` (just
            // checked).
            let pts: [__m256d; 16] =
                std::array::from_fn(|g| unsafe { _mm256_loadu_pd(x.as_ptr().add(ids[g] as usize * LANES)) });
            let all = rows.len() >= nt;
            if all {
                for (qt, wy) in q.iter_mut().zip(w) {
                    *qt = contract(wy, &pts);
                }
            }
            for e in rows {
                let (wx, y) = (&w[usize::from(e.x)], usize::from(e.y));
                let v = if all { combine(wx, &q[y]) } else { combine(wx, &contract(&w[y], &pts)) };
                out.write::<D>(e.row as usize * d + offset, &v);
            }
        }
    }
}

/// `q(r) = Σ_s w[s] · p(r, s)` for the four `r`, each sum in ascending `s`.
#[inline(always)]
fn contract<T: Float>(w: &[T; 4], p: &[[T; LANES]; 16]) -> [[T; LANES]; 4] {
    let mut q = [[T::zero(); LANES]; 4];
    for (r, acc) in q.iter_mut().enumerate() {
        for c in 0..LANES {
            acc[c] = w[0] * p[4 * r][c];
        }
        for s in 1..4 {
            for c in 0..LANES {
                acc[c] = acc[c] + w[s] * p[4 * r + s][c];
            }
        }
    }
    q
}

/// `Σ_r w[r] · q(r)` in ascending `r`.
#[inline(always)]
fn combine<T: Float>(w: &[T; 4], q: &[[T; LANES]; 4]) -> [T; LANES] {
    let mut acc = [T::zero(); LANES];
    for c in 0..LANES {
        acc[c] = w[0] * q[0][c];
    }
    for r in 1..4 {
        for c in 0..LANES {
            acc[c] = acc[c] + w[r] * q[r][c];
        }
    }
    acc
}

/// The output, written from several tasks at once, each row by one task.
struct Out<T> {
    y: *mut T,
    len: usize,
}

// SAFETY: `Out` is a pointer to a slice borrowed mutably for as long as it
// lives; the tasks write disjoint rows (every tensor row is in exactly one
// patch's entries, and the patches are split between tasks).
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}

impl<T: Copy> Out<T> {
    /// Writes `v[..D]` to values `at..at + D`.
    #[inline(always)]
    fn write<const D: usize>(&self, at: usize, v: &[T; LANES]) {
        assert!(at + D <= self.len, "tensor eval: value {at} out of range");
        // SAFETY: in range (just checked); no other task writes these
        // values (see `Out`).
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), self.y.add(at), D) };
    }
}
