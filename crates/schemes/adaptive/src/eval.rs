//! Batched evaluation of the limit surface: positions and first
//! derivatives of any number of channels at many `(ptex face, u, v)`
//! samples (f32 or f64, in parallel), and the same map as sparse matrices
//! from the control points (OpenSubdiv's limit stencils), exportable like
//! the refinement matrix `R`.
//!
//! Derivatives follow OpenSubdiv's `PatchTable::EvaluateBasis`: with
//! respect to the ptex face's `u` and `v`, scaled by `2^depth` for every
//! patch — so for the sub-faces of a control face that is not a quad they
//! are twice the derivatives with respect to the sub-face's own `(u, v)`.
//!
//! A sample on a hole (or on a face left out of a selective refinement
//! where no patch covers it) gets NaN in every channel and is listed in
//! [`Limit::missing`], as OpenSubdiv's evaluation reports no patch there.

use ndarray::{Array2, ArrayView2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::{CsrMat, Par};

use crate::AdaptiveError;
use crate::basis::{DerivOrder, Weights};
use crate::table::PatchTable;

/// A point of the limit surface to evaluate: ptex face and its parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Sample {
    /// Ptex face.
    pub ptex: u32,
    /// Parameter along the ptex face's first edge, in `[0, 1]`.
    pub u: f64,
    /// Parameter along its last edge, in `[0, 1]`.
    pub v: f64,
}

/// Limit positions and derivatives, one row per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit<T> {
    /// Position (all channels of the control data).
    pub position: Array2<T>,
    /// Derivative with respect to `u`.
    pub du: Array2<T>,
    /// Derivative with respect to `v`.
    pub dv: Array2<T>,
    /// Samples no patch covers (NaN rows), in order.
    pub missing: Vec<usize>,
}

/// The limit map as matrices over the control points: `position = P x`,
/// `du = Du x`, `dv = Dv x`, one row per sample (empty rows for samples no
/// patch covers).
#[derive(Clone, Debug)]
pub struct LimitMatrices {
    /// Positions.
    pub p: CsrMat<f64>,
    /// Derivatives with respect to `u`.
    pub du: CsrMat<f64>,
    /// Derivatives with respect to `v`.
    pub dv: CsrMat<f64>,
    /// Samples no patch covers.
    pub missing: Vec<usize>,
}

/// A block of samples' outputs: its index, then position, du and dv rows.
type Block<'a, T> = (usize, ((&'a mut [T], &'a mut [T]), &'a mut [T]));

/// The rows of a block of samples for the position, d/du and d/dv matrices.
#[derive(Default)]
struct BlockRows {
    lens: [Vec<usize>; 3],
    idx: [Vec<u32>; 3],
    val: [Vec<f64>; 3],
    missing: Vec<usize>,
}

/// The patch and weights of one sample (`None`: no patch).
fn locate(table: &PatchTable, s: &Sample, w: &mut Weights) -> Result<Option<usize>, AdaptiveError> {
    match table.find(s.ptex, s.u, s.v) {
        Ok(p) => {
            table.evaluate_basis(p, s.u, s.v, w);
            Ok(Some(p))
        }
        Err(AdaptiveError::NoPatch { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl PatchTable {
    /// The value of every point of the table (see
    /// [`PatchTable::num_points`]), from the control points' data (one row
    /// per control vertex, any number of channels).
    ///
    /// # Panics
    /// If `control` does not have one row per control vertex.
    #[track_caller]
    pub fn points_of<T: Float + Send + Sync>(&self, control: ArrayView2<'_, T>, par: Par) -> Array2<T> {
        let ch = control.ncols();
        let flat = self.points_flat(control, par);
        Array2::from_shape_vec((self.num_points(), ch), flat).expect("one row per point")
    }

    #[track_caller]
    fn points_flat<T: Float + Send + Sync>(&self, control: ArrayView2<'_, T>, par: Par) -> Vec<T> {
        let levels = self.refinement().levels();
        let n0 = levels[0].num_vertices();
        assert_eq!(control.nrows(), n0, "control data has {} rows for {n0} control vertices", control.nrows());
        let ch = control.ncols().max(1);
        let mut out = vec![T::zero(); self.num_points() * ch];
        for (i, row) in control.outer_iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                out[i * ch + j] = x;
            }
        }
        // Level k+1 from level k, then the end caps' points from the levels.
        let mut start = 0usize;
        let mut spans: Vec<(usize, usize, &dyn RowSource)> = Vec::new();
        for (k, st) in self.refinement().stencils().iter().enumerate() {
            let next = start + levels[k].num_vertices();
            spans.push((start, next, st));
            start = next;
        }
        spans.push((0, self.num_level_points(), self.end_cap_rows()));
        for (src_start, dst_start, rows) in spans {
            let (src, dst) = out.split_at_mut(dst_start * ch);
            let dst = &mut dst[..rows.rows() * ch];
            let one = |(r, d): (usize, &mut [T])| {
                let (cols, ws) = rows.get(r);
                for (&c, &w) in cols.iter().zip(ws) {
                    let w = cast::<T>(w);
                    let s = &src[(src_start + c as usize) * ch..][..ch];
                    for (x, &y) in d.iter_mut().zip(s) {
                        *x = *x + w * y;
                    }
                }
            };
            if par == Par::Rayon {
                dst.par_chunks_mut(ch).enumerate().with_min_len(1 << 10).for_each(one);
            } else {
                dst.chunks_mut(ch).enumerate().for_each(one);
            }
        }
        out
    }

    /// Limit positions and first derivatives of `control`'s channels at
    /// every sample. Deterministic: each sample is computed alone, in a
    /// fixed order of terms, whatever the thread count.
    ///
    /// # Errors
    /// [`AdaptiveError::NoSuchPtexFace`] for a sample's ptex face out of range.
    ///
    /// # Panics
    /// If `control` does not have one row per control vertex.
    #[track_caller]
    pub fn evaluate<T: Float + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        samples: &[Sample],
        par: Par,
    ) -> Result<Limit<T>, AdaptiveError> {
        let points = self.points_flat(control, par);
        let ch = control.ncols().max(1);
        let n = samples.len();
        let (mut pos, mut du, mut dv) = (vec![T::zero(); n * ch], vec![T::zero(); n * ch], vec![T::zero(); n * ch]);
        // Blocks of samples: one weight buffer per block, outputs written once.
        const BLOCK: usize = 512;
        let block = |(b, ((pos, du), dv)): Block<'_, T>| -> Result<Vec<usize>, AdaptiveError> {
            let mut w = Weights::new(DerivOrder::First);
            let mut missing = Vec::new();
            let first = b * BLOCK;
            // Consecutive samples often share a patch: try the last one first.
            let mut last: Option<usize> = None;
            for (i, s) in samples[first..first + pos.len() / ch].iter().enumerate() {
                let o = i * ch;
                let (pos, du, dv) = (&mut pos[o..o + ch], &mut du[o..o + ch], &mut dv[o..o + ch]);
                let found = match last {
                    Some(p) if self.holds(p, s.ptex, s.u, s.v) => Some(p),
                    _ => match self.find(s.ptex, s.u, s.v) {
                        Ok(p) => Some(p),
                        Err(AdaptiveError::NoPatch { .. }) => None,
                        Err(e) => return Err(e),
                    },
                };
                last = found;
                let Some(p) = found else {
                    pos.fill(T::nan());
                    du.fill(T::nan());
                    dv.fill(T::nan());
                    missing.push(first + i);
                    continue;
                };
                let k = cast::<T>(self.evaluate_basis_unscaled(p, s.u, s.v, &mut w));
                let (wp, wu, wv) = (w.point(), w.du(), w.dv());
                let pts = self.patch_points(p);
                if ch == 3 {
                    let mut acc = [T::zero(); 9];
                    for (k, &pt) in pts.iter().enumerate() {
                        let x = &points[pt as usize * 3..][..3];
                        let (a, b, c) = (cast::<T>(wp[k]), cast::<T>(wu[k]), cast::<T>(wv[k]));
                        for j in 0..3 {
                            acc[j] = acc[j] + a * x[j];
                            acc[3 + j] = acc[3 + j] + b * x[j];
                            acc[6 + j] = acc[6 + j] + c * x[j];
                        }
                    }
                    pos.copy_from_slice(&acc[..3]);
                    for j in 0..3 {
                        du[j] = acc[3 + j] * k;
                        dv[j] = acc[6 + j] * k;
                    }
                } else {
                    for (k, &pt) in pts.iter().enumerate() {
                        let x = &points[pt as usize * ch..][..ch];
                        let (a, b, c) = (cast::<T>(wp[k]), cast::<T>(wu[k]), cast::<T>(wv[k]));
                        for j in 0..ch {
                            pos[j] = pos[j] + a * x[j];
                            du[j] = du[j] + b * x[j];
                            dv[j] = dv[j] + c * x[j];
                        }
                    }
                    for j in 0..ch {
                        du[j] = du[j] * k;
                        dv[j] = dv[j] * k;
                    }
                }
            }
            Ok(missing)
        };
        let chunk = BLOCK * ch;
        let missing: Vec<Vec<usize>> = if par == Par::Rayon {
            pos.par_chunks_mut(chunk)
                .zip(du.par_chunks_mut(chunk))
                .zip(dv.par_chunks_mut(chunk))
                .enumerate()
                .map(block)
                .collect::<Result<_, _>>()?
        } else {
            pos.chunks_mut(chunk)
                .zip(du.chunks_mut(chunk))
                .zip(dv.chunks_mut(chunk))
                .enumerate()
                .map(block)
                .collect::<Result<_, _>>()?
        };
        let missing = missing.concat();
        let shape = (n, ch);
        let position = Array2::from_shape_vec(shape, pos).expect("one row per sample");
        let du = Array2::from_shape_vec(shape, du).expect("one row per sample");
        let dv = Array2::from_shape_vec(shape, dv).expect("one row per sample");
        Ok(Limit { position, du, dv, missing })
    }

    /// Every point of the table (see [`PatchTable::num_points`]) as a row of
    /// weights over the control points: the levels' stencils and the end
    /// caps composed. Applying it to control data gives
    /// [`PatchTable::points_of`] (what a GPU evaluation uploads).
    ///
    /// # Errors
    /// [`AdaptiveError::TooLarge`] past `u32` indices.
    pub fn point_matrix(&self) -> Result<CsrMat<f64>, AdaptiveError> {
        let (ptr, idx, val) = self.point_rows();
        let ncols = self.refinement().levels()[0].num_vertices();
        Ok(CsrMat::try_new(self.num_points(), ncols, ptr, idx, val)?)
    }

    /// Every point of the table as a row of weights over the control
    /// points (the levels' stencils composed).
    fn point_rows(&self) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
        let levels = self.refinement().levels();
        let n0 = levels[0].num_vertices() as u32;
        let mut ptr = vec![0u32];
        let mut idx = Vec::new();
        let mut val = Vec::new();
        for i in 0..n0 {
            idx.push(i);
            val.push(1.0);
            ptr.push(idx.len() as u32);
        }
        let mut scratch: Vec<(u32, f64)> = Vec::new();
        let push = |ptr: &mut Vec<u32>, idx: &mut Vec<u32>, val: &mut Vec<f64>, scratch: &mut Vec<(u32, f64)>| {
            scratch.sort_by_key(|&(c, _)| c);
            let mut last = None;
            for &(c, w) in scratch.iter() {
                if last == Some(c) {
                    *val.last_mut().expect("an entry") += w;
                } else {
                    idx.push(c);
                    val.push(w);
                    last = Some(c);
                }
            }
            ptr.push(idx.len() as u32);
            scratch.clear();
        };
        let mut start = 0usize;
        for (k, st) in self.refinement().stencils().iter().enumerate() {
            for r in 0..st.num_rows() {
                let (cols, ws) = st.row(r);
                for (&c, &w) in cols.iter().zip(ws) {
                    let g = start + c as usize;
                    let (a, b) = (ptr[g] as usize, ptr[g + 1] as usize);
                    scratch.extend(idx[a..b].iter().zip(&val[a..b]).map(|(&i, &v)| (i, w * v)));
                }
                push(&mut ptr, &mut idx, &mut val, &mut scratch);
            }
            start += levels[k].num_vertices();
        }
        let local = self.end_cap_rows();
        for r in 0..local.num_rows() {
            let (cols, ws) = local.row(r);
            for (&c, &w) in cols.iter().zip(ws) {
                let (a, b) = (ptr[c as usize] as usize, ptr[c as usize + 1] as usize);
                scratch.extend(idx[a..b].iter().zip(&val[a..b]).map(|(&i, &v)| (i, w * v)));
            }
            push(&mut ptr, &mut idx, &mut val, &mut scratch);
        }
        (ptr, idx, val)
    }

    /// The limit map at `samples` as sparse matrices over the control points
    /// (OpenSubdiv's limit stencils). Each row's position weights sum to 1
    /// and its derivative weights to 0, up to rounding.
    ///
    /// # Errors
    /// [`AdaptiveError::NoSuchPtexFace`]; [`AdaptiveError::Algebra`] if a
    /// matrix does not fit `u32` indices.
    pub fn limit_matrices(&self, samples: &[Sample], par: Par) -> Result<LimitMatrices, AdaptiveError> {
        let (ptr, idx, val) = self.point_rows();
        let ncols = self.refinement().levels()[0].num_vertices();
        // Blocks of samples, each with dense accumulators over the control
        // points and the list of columns touched: contributions are added in
        // the order of the patch's points, then of their rows' entries.
        const BLOCK: usize = 256;
        // Per worker: the weights, the accumulators, the columns seen.
        let scratch = || (Weights::new(DerivOrder::First), vec![[0.0f64; 3]; ncols], vec![[false; 3]; ncols]);
        type Scratch = (Weights, Vec<[f64; 3]>, Vec<[bool; 3]>);
        let block = |sc: &mut Scratch, (b, chunk): (usize, &[Sample])| -> Result<BlockRows, AdaptiveError> {
            let (w, acc, seen) = sc;
            let mut touched: [Vec<u32>; 3] = Default::default();
            let mut out = BlockRows::default();
            for (i, s) in chunk.iter().enumerate() {
                let Some(p) = locate(self, s, w)? else {
                    out.missing.push(b * BLOCK + i);
                    for m in 0..3 {
                        out.lens[m].push(0);
                    }
                    continue;
                };
                for (k, &pt) in self.patch_points(p).iter().enumerate() {
                    let (a, e) = (ptr[pt as usize] as usize, ptr[pt as usize + 1] as usize);
                    for (m, wk) in [w.point()[k], w.du()[k], w.dv()[k]].into_iter().enumerate() {
                        if wk == 0.0 {
                            continue;
                        }
                        for (&c, &v) in idx[a..e].iter().zip(&val[a..e]) {
                            let c = c as usize;
                            if !seen[c][m] {
                                seen[c][m] = true;
                                touched[m].push(c as u32);
                                acc[c][m] = wk * v;
                            } else {
                                acc[c][m] += wk * v;
                            }
                        }
                    }
                }
                for m in 0..3 {
                    let t = &mut touched[m];
                    t.sort_unstable();
                    out.lens[m].push(t.len());
                    for &c in t.iter() {
                        out.idx[m].push(c);
                        out.val[m].push(acc[c as usize][m]);
                        seen[c as usize][m] = false;
                    }
                    t.clear();
                }
            }
            Ok(out)
        };
        let blocks: Vec<BlockRows> = if par == Par::Rayon {
            samples.par_chunks(BLOCK).enumerate().map_init(scratch, block).collect::<Result<_, _>>()?
        } else {
            let mut sc = scratch();
            samples.chunks(BLOCK).enumerate().map(|x| block(&mut sc, x)).collect::<Result<_, _>>()?
        };
        let missing = blocks.iter().flat_map(|b| b.missing.iter().copied()).collect();
        let build = |m: usize| -> Result<CsrMat<f64>, AdaptiveError> {
            let nnz: usize = blocks.iter().map(|b| b.idx[m].len()).sum();
            let too_large = || AdaptiveError::TooLarge { what: "a limit matrix" };
            u32::try_from(nnz).map_err(|_| too_large())?;
            let mut p = Vec::with_capacity(samples.len() + 1);
            p.push(0u32);
            let (mut ix, mut vs) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
            for b in &blocks {
                for &l in &b.lens[m] {
                    let last = *p.last().expect("a start");
                    p.push(last + l as u32);
                }
                ix.extend_from_slice(&b.idx[m]);
                vs.extend_from_slice(&b.val[m]);
            }
            Ok(CsrMat::try_new(samples.len(), ncols, p, ix, vs)?)
        };
        Ok(LimitMatrices { p: build(0)?, du: build(1)?, dv: build(2)?, missing })
    }
}

/// Rows of weights, as the levels' stencils and the end caps' points have them.
trait RowSource: Sync {
    fn rows(&self) -> usize;
    fn get(&self, r: usize) -> (&[u32], &[f64]);
}

impl RowSource for crate::sparse::Stencils {
    fn rows(&self) -> usize {
        self.num_rows()
    }
    fn get(&self, r: usize) -> (&[u32], &[f64]) {
        self.row(r)
    }
}

impl RowSource for crate::endcap::Rows {
    fn rows(&self) -> usize {
        self.num_rows()
    }
    fn get(&self, r: usize) -> (&[u32], &[f64]) {
        self.row(r)
    }
}

fn cast<T: Float>(w: f64) -> T {
    T::from(w).unwrap_or_else(T::nan)
}

/// The `k × k` grid of every ptex face, `u = i/(k-1)`, `v = j/(k-1)`, `j`
/// the outer loop (`k = 1`: the face's `(0, 0)` corner), ptex faces in
/// order: the samples `subla limit --grid k` writes.
pub fn grid(num_ptex: u32, k: u32) -> Vec<Sample> {
    let mut out = Vec::with_capacity(num_ptex as usize * (k as usize).pow(2));
    let at = |i: u32| if k <= 1 { 0.0 } else { f64::from(i) / f64::from(k - 1) };
    for ptex in 0..num_ptex {
        for j in 0..k {
            for i in 0..k {
                out.push(Sample { ptex, u: at(i), v: at(j) });
            }
        }
    }
    out
}
