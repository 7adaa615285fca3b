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
    /// (`nrows × d`); the other rows are left as they are. `lanes` holds
    /// the control points in lanes for `d != 4` (`d.div_ceil(4) · ncols · 4`
    /// values; whatever it holds is overwritten).
    pub(super) fn apply(&self, x: &[T], y: &mut [T], d: usize, lanes: &mut [T], par: Par) {
        self.apply_with(x, y, d, lanes, par, false);
    }

    /// [`Self::apply`], through the portable body whatever the CPU if
    /// `portable`.
    pub(super) fn apply_with(&self, x: &[T], y: &mut [T], d: usize, lanes: &mut [T], par: Par, portable: bool) {
        // Channels in groups of four lanes (four channels are one group
        // already).
        let ncols = x.len() / d;
        let groups = d.div_ceil(LANES);
        let xs = if d == LANES {
            x
        } else {
            lane_groups(x, d, lanes);
            &*lanes
        };
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
    /// many rows as positions gets its factors for every position first
    /// (in passes of [`Q_CHUNK`] positions where it has more, apart, so
    /// that this loop stays as it was: with those passes inline, it took
    /// about a tenth longer in `f32` at level 3); a patch with fewer gets
    /// each row's factor with the row.
    #[inline(always)]
    fn patches_lanes<const D: usize>(&self, patches: Range<usize>, x: &[T], out: &Out<T>, d: usize, offset: usize) {
        let nt = self.weights.len();
        let mut q = [[[T::zero(); LANES]; 4]; Q_CHUNK];
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
            if all && nt > Q_CHUNK {
                self.rows_in_passes::<D>(rows, &pts, out, d, offset);
                continue;
            }
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

    /// The rows of a patch with more than [`Q_CHUNK`] positions, from its
    /// points `pts`: the factors of [`Q_CHUNK`] positions at a time, then
    /// the rows at those positions.
    #[inline(never)]
    fn rows_in_passes<const D: usize>(
        &self,
        rows: &[Entry],
        pts: &[[T; LANES]; 16],
        out: &Out<T>,
        d: usize,
        offset: usize,
    ) {
        let nt = self.weights.len();
        let mut q = [[[T::zero(); LANES]; 4]; Q_CHUNK];
        for first in (0..nt).step_by(Q_CHUNK) {
            let ws = &self.weights[first..nt.min(first + Q_CHUNK)];
            for (qt, w) in q.iter_mut().zip(ws) {
                *qt = contract(w, pts);
            }
            for e in rows {
                let y = usize::from(e.y);
                if (first..first + ws.len()).contains(&y) {
                    let v = combine(&self.weights[usize::from(e.x)], &q[y - first]);
                    out.write::<D>(e.row as usize * d + offset, &v);
                }
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
        let mut q = [[_mm256_setzero_pd(); 4]; Q_CHUNK];
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
            if rows.len() < nt {
                for e in rows {
                    let v = combine(&w[usize::from(e.x)], &contract(&w[usize::from(e.y)], &pts));
                    out.write::<D>(e.row as usize * d + offset, &v);
                }
                continue;
            }
            if nt <= Q_CHUNK {
                // One pass: every position's factors fit.
                for (qt, wy) in q.iter_mut().zip(w) {
                    *qt = contract(wy, &pts);
                }
                for e in rows {
                    let v = combine(&w[usize::from(e.x)], &q[usize::from(e.y)]);
                    out.write::<D>(e.row as usize * d + offset, &v);
                }
                continue;
            }
            for first in (0..nt).step_by(Q_CHUNK) {
                let ws = &w[first..nt.min(first + Q_CHUNK)];
                for (qt, wy) in q.iter_mut().zip(ws) {
                    *qt = contract(wy, &pts);
                }
                for e in rows {
                    let y = usize::from(e.y);
                    if (first..first + ws.len()).contains(&y) {
                        let v = combine(&w[usize::from(e.x)], &q[y - first]);
                        out.write::<D>(e.row as usize * d + offset, &v);
                    }
                }
            }
        }
    }
}

/// Positions whose factors a task keeps at once, on its stack (16 values
/// each): a patch with more positions is done in several passes over its
/// rows, each writing the rows of the positions it holds. Level 6 has 65
/// positions; up to level 5 one pass does.
const Q_CHUNK: usize = 64;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{TensorPatch, TensorRow};

    /// A patch with more rows than positions gets its factors
    /// [`Q_CHUNK`] positions at a time, in several passes over its rows,
    /// where there are more positions than that: every row is still its
    /// factored sum, bit for bit.
    fn rows_over_many_positions<T: Float + Send + Sync + 'static>() {
        let nt = 2 * Q_CHUNK + 22;
        let weights: Vec<[f64; 4]> = (0..nt)
            .map(|t| {
                let u = t as f64 / nt as f64;
                [(1.0 - u) / 3.0, 0.5 - u / 7.0, 0.25 + u / 5.0, u / 3.0]
            })
            .collect();
        let patch = |first: u32, flip: bool| TensorPatch {
            ids: std::array::from_fn(|k| first + 2 * k as u32),
            grid: std::array::from_fn(|k| if flip { (15 - k) as u8 } else { k as u8 }),
        };
        // Patch 0 has every pair of positions (factors per pass), patch 1 a
        // few (factors per row), and some rows have no tensor form.
        let mut rows: Vec<TensorRow> = (0..nt * nt)
            .map(|k| TensorRow { patch: 0, x: (k / nt) as u16, y: (k % nt) as u16 })
            .filter(|r| (r.x + 3 * r.y) % 11 != 0)
            .collect();
        rows.extend([3, 70, 149].map(|t| TensorRow { patch: 1, x: t, y: nt as u16 - 1 - t }));
        rows.extend([TensorRow::OPEN; 3]);
        let tr = TensorRows::new(40, weights.clone(), vec![patch(0, false), patch(7, true)], rows).unwrap();
        let s = Separable::<T>::new(&tr).unwrap();
        let w: Vec<[T; 4]> = weights.iter().map(|w| w.map(cast::<T>)).collect();
        for d in [3, 4] {
            let x: Vec<T> = (0..40 * d).map(|i| cast::<T>((i as f64 * 0.37).sin())).collect();
            let mut lanes = vec![T::nan(); 40 * LANES];
            lane_groups(&x, d, &mut lanes);
            for (par, portable) in [(Par::Seq, false), (Par::Rayon, false), (Par::Seq, true)] {
                let mut y = vec![T::nan(); tr.nrows() * d];
                s.apply_with(&x, &mut y, d, &mut [T::nan(); 40 * LANES], par, portable);
                for (i, r) in tr.rows().iter().enumerate() {
                    if r.patch == OPEN {
                        continue;
                    }
                    let g = &s.points[r.patch as usize];
                    let pts: [[T; LANES]; 16] = std::array::from_fn(|k| {
                        let at = g[k] as usize * LANES;
                        std::array::from_fn(|c| lanes[at + c])
                    });
                    let want = combine(&w[usize::from(r.x)], &contract(&w[usize::from(r.y)], &pts));
                    let got = &y[i * d..(i + 1) * d];
                    assert!(
                        got.iter().zip(&want).all(|(a, b)| a.integer_decode() == b.integer_decode()),
                        "row {i} ({d} channels, {par:?}, portable {portable})"
                    );
                }
            }
        }
    }

    #[test]
    fn rows_over_many_positions_are_their_factored_sums_f64() {
        rows_over_many_positions::<f64>();
    }

    #[test]
    fn rows_over_many_positions_are_their_factored_sums_f32() {
        rows_over_many_positions::<f32>();
    }
}
