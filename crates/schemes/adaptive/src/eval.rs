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

use std::mem::MaybeUninit;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::mem::{Zeroable, try_vec_with_capacity};
use subla_algebra::{CsrMat, Par};

use crate::AdaptiveError;
use crate::basis::{
    DerivOrder, GREGORY_QUAD_BEZIER, GREGORY_TRI_BEZIER, MAX_POINTS, PatchType, QUARTIC_MONOMIALS, Weights,
    box_spline_reflections,
};
use crate::endcap;
use crate::sparse::Scheme;
use crate::sparse::Stencils;
use crate::table::{EndCapRows, PatchTable, Square, TriangleStep, triangle_step};

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

/// A block of samples' outputs: its index, then position, du and dv rows
/// (written, never read: fresh buffers or a frame's).
type Block<'a, T> = (usize, ((&'a mut [MaybeUninit<T>], &'a mut [MaybeUninit<T>]), &'a mut [MaybeUninit<T>]));

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
        let mut out = Array2::zeros((self.num_points(), control.ncols()));
        self.points_into(control, par, out.view_mut());
        out
    }

    /// [`PatchTable::points_of`] into a buffer from
    /// [`subla_algebra::mem`] (huge pages where large), or
    /// [`AdaptiveError::Algebra`] where it cannot be allocated.
    fn points_alloc<T: Float + Send + Sync + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        par: Par,
    ) -> Result<Array2<T>, AdaptiveError> {
        let mut out = zeroed((self.num_points(), control.ncols()), "the points of a patch table")?;
        self.points_into(control, par, out.view_mut());
        Ok(out)
    }

    /// [`PatchTable::points_of`] into `out` (`num_points × channels`), every
    /// entry written: a loop over frames reuses one array.
    ///
    /// # Panics
    /// If `control` does not have one row per control vertex, or `out` is
    /// not `num_points ×` the channels of `control`.
    #[track_caller]
    pub fn points_into<T: Float + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        par: Par,
        mut out: ArrayViewMut2<'_, T>,
    ) {
        let n0 = self.refinement().levels()[0].num_vertices();
        assert_eq!(control.nrows(), n0, "control data has {} rows for {n0} control vertices", control.nrows());
        let shape = (self.num_points(), control.ncols());
        assert_eq!(out.dim(), shape, "points_into: out is {:?}, the points are {shape:?}", out.dim());
        match out.as_slice_mut() {
            Some(flat) => self.fill_points(control, par, flat),
            None => {
                let mut flat = vec![T::zero(); shape.0 * shape.1];
                self.fill_points(control, par, &mut flat);
                out.assign(&ArrayView2::from_shape(shape, &flat).expect("one row per point"));
            }
        }
    }

    /// Every point's channels into `out` (rows one after the other).
    fn fill_points<T: Float + Send + Sync>(&self, control: ArrayView2<'_, T>, par: Par, out: &mut [T]) {
        let ch = control.ncols();
        if ch == 0 {
            return;
        }
        for (row, o) in control.outer_iter().zip(out.chunks_exact_mut(ch)) {
            for (o, &x) in o.iter_mut().zip(row.iter()) {
                *o = x;
            }
        }
        // Level k+1 from level k, then the end caps' points from the levels.
        let levels = self.refinement().levels();
        let mut start = 0usize;
        for (k, st) in self.refinement().stencils().iter().enumerate() {
            let next = start + levels[k].num_vertices();
            apply_rows(out, ch, start, next, st, par);
            start = next;
        }
        apply_end_caps(out, ch, self.num_level_points(), self.end_cap_rows(), par);
    }

    /// Limit positions and first derivatives of `control`'s channels at
    /// every sample. Deterministic: each sample is computed alone, in a
    /// fixed order of terms, whatever the thread count.
    ///
    /// The outputs are allocated through [`subla_algebra::mem`]: where
    /// they are large, the kernel may back them with huge pages, whose
    /// first touch (here, by the threads that write them) costs one fault
    /// per 2 MiB instead of per 4 KiB.
    ///
    /// # Errors
    /// [`AdaptiveError::NoSuchPtexFace`] for a sample's ptex face out of
    /// range; [`AdaptiveError::Algebra`] where the outputs cannot be
    /// allocated ([`AdaptiveError::Scheme`] where their size overflows).
    ///
    /// # Panics
    /// If `control` does not have one row per control vertex.
    #[track_caller]
    pub fn evaluate<T: Float + Send + Sync + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        samples: &[Sample],
        par: Par,
    ) -> Result<Limit<T>, AdaptiveError> {
        let ch = control.ncols();
        if ch == 0 {
            let mut out = Limit {
                position: Array2::zeros((samples.len(), 0)),
                du: Array2::zeros((samples.len(), 0)),
                dv: Array2::zeros((samples.len(), 0)),
                missing: vec![],
            };
            let points = Array2::zeros((self.num_points(), 0));
            self.evaluate_points_into(points.view(), samples, par, &mut out)?;
            return Ok(out);
        }
        let points = self.points_alloc(control, par)?;
        let points = points.as_slice().expect("a fresh array is in standard layout");
        let shape = (samples.len(), ch);
        let n = samples.len().checked_mul(ch).ok_or(AdaptiveError::TooLarge { what: "the limit samples" })?;
        // Not zeroed: every value is written below (a sample's channels or
        // NaN), so the allocator's memory is taken as it is, without a pass
        // that clears it first.
        let what = "the limit positions and derivatives";
        let alloc = || try_vec_with_capacity::<T>(n, what).map_err(AdaptiveError::Algebra);
        let (mut position, mut du, mut dv) = (alloc()?, alloc()?, alloc()?);
        // The samples' ptex faces are checked as they are met: the first
        // sample out of range is named by a scan only where one is.
        let missing = self
            .evaluate_flat(
                points,
                ch,
                samples,
                par,
                &mut position.spare_capacity_mut()[..n],
                &mut du.spare_capacity_mut()[..n],
                &mut dv.spare_capacity_mut()[..n],
            )
            .map_err(|e| match self.check_samples(samples) {
                Err(first) => first,
                Ok(()) => e,
            })?;
        // SAFETY: `evaluate_flat` wrote all `n` values of each output (every
        // channel of every sample: its value, or NaN where no patch covers
        // it), and the capacity is at least `n`.
        unsafe {
            position.set_len(n);
            du.set_len(n);
            dv.set_len(n);
        }
        let array = |v: Vec<T>| Array2::from_shape_vec(shape, v).expect("samples × channels values");
        Ok(Limit { position: array(position), du: array(du), dv: array(dv), missing })
    }

    /// [`PatchTable::evaluate`] from the table's points (from
    /// [`PatchTable::points_of`] or [`PatchTable::points_into`]) into `out`,
    /// whose arrays are `samples × channels` (`missing` is replaced): a
    /// loop over frames that keeps the points and `out` allocates no
    /// buffer of points or outputs (each block of 512 samples takes a few
    /// kilobytes of scratch for its patches). The same bits as
    /// [`PatchTable::evaluate`].
    ///
    /// # Errors
    /// [`AdaptiveError::NoSuchPtexFace`] for a sample's ptex face out of
    /// range, before anything is written.
    ///
    /// # Panics
    /// If `points` is not `num_points × channels` or an array of `out` not
    /// `samples × channels`.
    #[track_caller]
    pub fn evaluate_points_into<T: Float + Send + Sync>(
        &self,
        points: ArrayView2<'_, T>,
        samples: &[Sample],
        par: Par,
        out: &mut Limit<T>,
    ) -> Result<(), AdaptiveError> {
        let ch = points.ncols();
        assert_eq!(
            points.nrows(),
            self.num_points(),
            "{} rows of points for {} points",
            points.nrows(),
            self.num_points()
        );
        let shape = (samples.len(), ch);
        for (name, a) in [("position", &out.position), ("du", &out.du), ("dv", &out.dv)] {
            assert_eq!(a.dim(), shape, "evaluate_points_into: out.{name} is {:?}, not samples × channels", a.dim());
        }
        self.check_samples(samples)?;
        let points = points.as_standard_layout();
        let points = points.as_slice().expect("standard layout");
        if ch == 0 {
            // No data: only which samples no patch covers.
            let mut w = Weights::new(DerivOrder::First);
            out.missing.clear();
            for (i, s) in samples.iter().enumerate() {
                if locate(self, s, &mut w)?.is_none() {
                    out.missing.push(i);
                }
            }
            return Ok(());
        }
        let Limit { position, du, dv, missing } = out;
        let standard = [&*position, &*du, &*dv].iter().all(|a| a.is_standard_layout());
        *missing = if standard {
            let (p, u, v) = (
                position.as_slice_mut().expect("standard layout"),
                du.as_slice_mut().expect("standard layout"),
                dv.as_slice_mut().expect("standard layout"),
            );
            self.evaluate_flat(points, ch, samples, par, as_uninit(p), as_uninit(u), as_uninit(v))?
        } else {
            // Arrays in another layout: through rows in order.
            let n = samples.len() * ch;
            let (mut p, mut u, mut v) = (vec![T::zero(); n], vec![T::zero(); n], vec![T::zero(); n]);
            let found =
                self.evaluate_flat(points, ch, samples, par, as_uninit(&mut p), as_uninit(&mut u), as_uninit(&mut v))?;
            for (a, flat) in [(position, p), (du, u), (dv, v)] {
                a.assign(&ArrayView2::from_shape(shape, &flat).expect("one row per sample"));
            }
            found
        };
        Ok(())
    }

    /// [`AdaptiveError::NoSuchPtexFace`] for the first sample past the ptex
    /// faces.
    fn check_samples(&self, samples: &[Sample]) -> Result<(), AdaptiveError> {
        let num_ptex = self.refinement().num_ptex_faces();
        match samples.iter().find(|s| s.ptex >= num_ptex) {
            Some(s) => Err(AdaptiveError::NoSuchPtexFace { ptex: s.ptex, num_ptex }),
            None => Ok(()),
        }
    }

    /// The samples' positions and derivatives into `pos`, `du`, `dv` (rows
    /// of `ch > 0` channels) from the points (rows of `ch`); the samples no
    /// patch covers.
    #[allow(clippy::too_many_arguments)]
    fn evaluate_flat<T: Float + Send + Sync>(
        &self,
        points: &[T],
        ch: usize,
        samples: &[Sample],
        par: Par,
        pos: &mut [MaybeUninit<T>],
        du: &mut [MaybeUninit<T>],
        dv: &mut [MaybeUninit<T>],
    ) -> Result<Vec<usize>, AdaptiveError> {
        // Blocks of samples: one weight buffer per block, outputs written once.
        const BLOCK: usize = 512;
        let block = |(b, ((pos, du), dv)): Block<'_, T>| -> Result<Vec<usize>, AdaptiveError> {
            let first = b * BLOCK;
            let block = &samples[first..first + pos.len() / ch];
            evaluate_block_dispatch(BlockInput { table: self, points, ch, block, first }, (pos, du, dv))
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
        Ok(missing.concat())
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
        for row in self.end_cap_rows().iter() {
            for (c, w) in row.iter() {
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

/// Finds the patches of a run of samples and keeps their points gathered.
///
/// Consecutive samples mostly share a ptex face: for quad patches no
/// deeper than [`Locator::GRID_BITS`], each cell of the current ptex face's
/// finest grid remembers the patch found for it (a cell lies in exactly one
/// square of each depth, so its patch is the one [`PatchTable::find`]
/// returns for any sample in it), and each patch of the ptex face has its
/// points copied once into a slot, rows of `ch` channels one after the
/// other. Other tables (Loop's, deeper ones) find each sample's patch with
/// [`PatchTable::find`] (but for a ptex face that is one patch) and keep
/// the patches found on the current ptex face, up to
/// [`Locator::MAX_SLOTS`], with their points.
struct Locator<'a, T> {
    table: &'a PatchTable,
    points: &'a [T],
    ch: usize,
    /// The table's deepest patch's depth, the grid's: `None` where the grid
    /// is not used (deep tables).
    bits: Option<u8>,
    /// A Loop table: the grid's cells are the triangles of depth `bits`,
    /// numbered by their path from the ptex face (base 4, the first step
    /// the most significant), instead of squares.
    tri: bool,
    /// The ptex face whose patches `grid` holds.
    ptex: Option<u32>,
    /// Whether that ptex face is one patch (slot 0), `grid` unused.
    whole: bool,
    /// Per cell (squares row-major, `v` outer; or triangles), the slot of
    /// its patch or [`Locator::UNKNOWN`].
    grid: Vec<u32>,
    /// Per slot, the patch.
    slots: Vec<Slot>,
    /// Per slot, whether its points are in `near`.
    gathered: Vec<bool>,
    /// Per slot, the patch's points (room for [`MAX_POINTS`]).
    near: Vec<T>,
}

impl<'a, T: Float> Locator<'a, T> {
    /// The deepest tables the grid serves (a grid of `2^GRID_BITS` squared
    /// cells, cleared at every new ptex face).
    const GRID_BITS: u8 = 4;
    /// A cell whose patch is not known yet.
    const UNKNOWN: u32 = u32::MAX;
    /// A cell no patch covers.
    const NONE: u32 = u32::MAX - 1;
    /// How many samples of a ptex face, at least, make it worth finding all
    /// its patches at once: a walk down its quadtree looks each square up
    /// once, where `find` looks up every square above the patch per call.
    const WHOLE_FACE: usize = 16;
    /// The most patches kept at once where there is no grid (a ptex face
    /// with more starts again).
    const MAX_SLOTS: usize = 64;

    fn new(table: &'a PatchTable, points: &'a [T], ch: usize) -> Self {
        let bits = (table.max_depth() <= Self::GRID_BITS).then_some(table.max_depth());
        let side = bits.map_or(0, |b| 1usize << b);
        Locator {
            table,
            points,
            ch,
            bits,
            tri: table.refinement().scheme() == Scheme::Loop,
            ptex: None,
            whole: false,
            grid: vec![Self::UNKNOWN; side * side],
            slots: Vec::new(),
            gathered: Vec::new(),
            near: Vec::new(),
        }
    }

    /// The patch of `s` (`None`: no patch covers it), as
    /// [`PatchTable::find`], and its points; `ahead` are the samples that
    /// follow.
    #[inline(always)]
    fn find(&mut self, s: &Sample, cell: u32, ahead: &[Sample]) -> Result<Option<(&Slot, &[T])>, AdaptiveError> {
        let table = self.table;
        let room = MAX_POINTS * self.ch;
        let Some(bits) = self.bits else {
            // A ptex face covered by one patch: its first slot answers.
            if let Some(slot) = self.slots.first()
                && table.holds(slot.patch, s.ptex, s.u, s.v)
            {
                return Ok(Some((&self.slots[0], &self.near[..room])));
            }
            // Otherwise the patches found on this ptex face keep their
            // slots (a few dozen at most), so that samples alternating
            // between them gather each patch once.
            if self.ptex != Some(s.ptex) || self.slots.len() >= Self::MAX_SLOTS {
                self.slots.clear();
                self.gathered.clear();
                self.ptex = Some(s.ptex);
            }
            let Some(p) = locate_patch(table, s)? else { return Ok(None) };
            let slot = match self.slots.iter().position(|x| x.patch == p) {
                Some(slot) => slot,
                None => self.new_slot(p) as usize,
            };
            if !self.gathered[slot] {
                self.gather(p, slot);
                self.gathered[slot] = true;
            }
            return Ok(Some((&self.slots[slot], &self.near[slot * room..][..room])));
        };
        if self.ptex != Some(s.ptex) {
            self.slots.clear();
            self.gathered.clear();
            self.ptex = Some(s.ptex);
            // A ptex face that is one patch (most, away from features)
            // needs no grid.
            self.whole = false;
            if s.ptex < table.refinement().num_ptex_faces()
                && let Square::Patch(p) = table.square(table.quad_root(s.ptex))
            {
                self.new_slot(p);
                self.whole = true;
            } else {
                self.grid.fill(Self::UNKNOWN);
            }
        }
        if self.whole {
            if !self.gathered[0] {
                self.gather(self.slots[0].patch, 0);
                self.gathered[0] = true;
            }
            return Ok(Some((&self.slots[0], &self.near[..room])));
        }
        let at = cell as usize;
        let mut slot = self.grid[at];
        if slot == Self::UNKNOWN {
            self.miss(bits, at, s, ahead)?;
            slot = self.grid[at];
        }
        if slot >= Self::NONE {
            return Ok(None);
        }
        let slot = slot as usize;
        if !self.gathered[slot] {
            self.gather(self.slots[slot].patch, slot);
            self.gathered[slot] = true;
        }
        Ok(Some((&self.slots[slot], &self.near[slot * room..][..room])))
    }

    /// The grid cell of `s`. As `find` indexes the squares of each depth (a
    /// scaling by a power of two is exact, so the index at a coarser depth
    /// is this one shifted), or takes the steps of its walk down the
    /// triangles (the first steps of the walk to the deepest triangle).
    #[inline(always)]
    fn cell(&self, s: &Sample) -> usize {
        let Some(bits) = self.bits else { return 0 };
        if self.tri {
            let mut step = TriangleStep::new(s.u.clamp(0.0, 1.0), s.v.clamp(0.0, 1.0));
            (0..bits).fold(0, |at, _| 4 * at + step.child())
        } else {
            let side = 1u32 << bits;
            let cell = |x: f64| ((x.clamp(0.0, 1.0) * f64::from(side)) as u32).min(side - 1);
            let (i, j) = (cell(s.u), cell(s.v));
            ((j as usize) << bits) | i as usize
        }
    }

    /// Fills grid cell `at` of `s`, unknown so far: with every patch of the
    /// ptex face if enough samples follow on it, else with `s`'s patch.
    #[inline(never)]
    fn miss(&mut self, bits: u8, at: usize, s: &Sample, ahead: &[Sample]) -> Result<(), AdaptiveError> {
        let table = self.table;
        let same = ahead.iter().take(Self::WHOLE_FACE).filter(|a| a.ptex == s.ptex).count();
        if same >= Self::WHOLE_FACE && self.slots.is_empty() {
            let num_ptex = table.refinement().num_ptex_faces();
            if s.ptex >= num_ptex {
                return Err(AdaptiveError::NoSuchPtexFace { ptex: s.ptex, num_ptex });
            }
            if self.tri {
                self.descend_triangles(bits, table.quad_root(s.ptex), 0, 0);
            } else {
                self.descend(bits, table.quad_root(s.ptex), 0, 0, 0);
            }
            for slot in 0..self.slots.len() {
                self.gather(self.slots[slot].patch, slot);
                self.gathered[slot] = true;
            }
        } else if let Some(p) = locate_patch(table, s)? {
            let param = &table.patches()[p].param;
            let slot = self.new_slot(p);
            if self.tri {
                // The patch's triangle: the first `depth` steps of the cell's path.
                let depth = param.depth();
                self.fill_triangles(bits, depth, at >> (2 * (bits - depth)), slot);
            } else {
                let depth = param.depth() - u8::from(param.non_quad_root());
                self.fill(bits, depth, param.u().into(), param.v().into(), slot);
            }
        }
        // Without a patch, the cell stays unknown: `find` answers again.
        Ok(())
    }

    /// A new slot for patch `p`, its points not gathered yet.
    fn new_slot(&mut self, p: usize) -> u32 {
        self.slots.push(Slot::of(self.table, p));
        self.gathered.push(false);
        (self.slots.len() - 1) as u32
    }

    /// Marks the cells of the square of `depth` levels below the ptex face
    /// with origin `(i, j)` as `value`.
    fn fill(&mut self, bits: u8, depth: u8, i: u32, j: u32, value: u32) {
        // Patches are never deeper than the grid.
        let Some(shift) = bits.checked_sub(depth) else { return };
        let (u0, v0) = ((i as usize) << shift, (j as usize) << shift);
        let n = 1usize << shift;
        for row in v0..v0 + n {
            let start = (row << bits) + u0;
            self.grid[start..start + n].fill(value);
        }
    }

    /// Marks the cells of the triangle of `depth` levels below the ptex
    /// face with path `path` (base 4) as `value`: the cells whose paths
    /// start with it.
    fn fill_triangles(&mut self, bits: u8, depth: u8, path: usize, value: u32) {
        // Patches are never deeper than the grid.
        let Some(below) = bits.checked_sub(depth) else { return };
        let n = 1usize << (2 * below);
        self.grid[path * n..][..n].fill(value);
    }

    /// [`Locator::descend`] for a Loop ptex face: the patches of tree entry
    /// `entry`, the triangle at local `depth` with path `path`, and below.
    fn descend_triangles(&mut self, bits: u8, entry: u32, depth: u8, path: usize) {
        match self.table.square(entry) {
            Square::Patch(p) => {
                let slot = self.new_slot(p);
                self.fill_triangles(bits, depth, path, slot);
            }
            Square::Split(node) => {
                for c in 0..4 {
                    let e = self.table.quad_child(node, c);
                    self.descend_triangles(bits, e, depth + 1, 4 * path + c);
                }
            }
            Square::Empty => self.fill_triangles(bits, depth, path, Self::NONE),
        }
    }

    /// Finds the patches of quadtree entry `entry`, the square at local
    /// `depth` (counted from the ptex face) with origin `(i, j)`, and
    /// below, as `find` would for the samples in it.
    fn descend(&mut self, bits: u8, entry: u32, depth: u8, i: u32, j: u32) {
        match self.table.square(entry) {
            Square::Patch(p) => {
                let slot = self.new_slot(p);
                self.fill(bits, depth, i, j, slot);
            }
            Square::Split(node) => {
                for c in 0..4 {
                    let e = self.table.quad_child(node, c);
                    self.descend(bits, e, depth + 1, 2 * i + (c & 1) as u32, 2 * j + (c >> 1) as u32);
                }
            }
            Square::Empty => self.fill(bits, depth, i, j, Self::NONE),
        }
    }

    /// Copies patch `p`'s points into slot `slot`; a regular patch's as the
    /// coefficients of its bicubic ([`to_monomials`]), a Gregory patch's as
    /// [`gregory_to_monomials`] leaves them.
    #[inline(never)]
    fn gather(&mut self, p: usize, slot: usize) {
        let (ch, room) = (self.ch, MAX_POINTS * self.ch);
        // Slots are numbered from 0 in each ptex face: the buffer only grows.
        if self.near.len() < (slot + 1) * room {
            self.near.resize((slot + 1) * room, T::zero());
        }
        let near = &mut self.near[slot * room..][..room];
        let pts = self.table.patch_points(p);
        if ch == 3 {
            gather::<T, 3>(self.points, pts, near);
        } else {
            for (k, &pt) in pts.iter().enumerate() {
                near[k * ch..][..ch].copy_from_slice(&self.points[pt as usize * ch..][..ch]);
            }
        }
        let s = &self.slots[slot];
        match (s.ty, ch) {
            (PatchType::Regular, 3) => to_monomials::<T, 3>(near, 3, 0, s.boundary),
            (PatchType::Regular, _) => (0..ch).for_each(|j| to_monomials::<T, 1>(near, ch, j, s.boundary)),
            (PatchType::GregoryBasis, 3) => gregory_to_monomials::<T, 3>(near, 3, 0),
            (PatchType::GregoryBasis, _) => (0..ch).for_each(|j| gregory_to_monomials::<T, 1>(near, ch, j)),
            (PatchType::Loop, 3) => box_spline_to_monomials::<T, 3>(near, 3, 0, s.boundary),
            (PatchType::Loop, _) => (0..ch).for_each(|j| box_spline_to_monomials::<T, 1>(near, ch, j, s.boundary)),
            (PatchType::GregoryTriangle, 3) => gregory_triangle_to_monomials::<T, 3>(near, 3, 0),
            (PatchType::GregoryTriangle, _) => (0..ch).for_each(|j| gregory_triangle_to_monomials::<T, 1>(near, ch, j)),
            // Evaluated through the basis weights, from the points.
            (PatchType::Bilinear, _) => {}
        }
    }
}

/// [`Locator::cell`] of four samples of a Loop table at once: the steps of
/// the walk ([`triangle_step`]) lane by lane, which the compiler runs on
/// vector registers.
#[inline(always)]
fn triangle_cells(bits: u8, us: [f64; 4], vs: [f64; 4]) -> [u32; 4] {
    let mut u = us.map(|x| x.clamp(0.0, 1.0));
    let mut v = vs.map(|x| x.clamp(0.0, 1.0));
    let mut rotated = [false; 4];
    let mut cells = [0u32; 4];
    let mut m = 0.5;
    for _ in 0..bits {
        for l in 0..4 {
            let child;
            (u[l], v[l], rotated[l], child) = triangle_step(u[l], v[l], m, rotated[l]);
            cells[l] = 4 * cells[l] + child as u32;
        }
        m *= 0.5;
    }
    cells
}

/// A block of samples to evaluate: the table, its points (rows of `ch`
/// channels), the samples and the index of the first.
#[derive(Clone, Copy)]
struct BlockInput<'a, T> {
    table: &'a PatchTable,
    points: &'a [T],
    ch: usize,
    block: &'a [Sample],
    first: usize,
}

/// A block's position, d/du and d/dv rows, written, never read.
type BlockOutput<'a, T> = (&'a mut [MaybeUninit<T>], &'a mut [MaybeUninit<T>], &'a mut [MaybeUninit<T>]);

/// The samples of a block into their rows of the outputs; the samples no
/// patch covers.
#[inline(always)]
fn evaluate_block<T: Float>(input: BlockInput<'_, T>, out: BlockOutput<'_, T>) -> Result<Vec<usize>, AdaptiveError> {
    let BlockInput { table, points, ch, block, first } = input;
    let (pos, du, dv) = out;
    let mut w = Weights::new(DerivOrder::First);
    let mut locator = Locator::new(table, points, ch);
    let mut missing = Vec::new();
    // Each sample's grid cell first, in a loop of its own: without branches
    // (the walk down a Loop face's triangles), it runs several samples at
    // once.
    let mut cells = vec![0u32; block.len()];
    if locator.tri {
        if let Some(bits) = locator.bits {
            let mut quads = block.chunks_exact(4);
            let mut out = cells.chunks_exact_mut(4);
            for (s, c) in (&mut quads).zip(&mut out) {
                let us = [s[0].u, s[1].u, s[2].u, s[3].u];
                let vs = [s[0].v, s[1].v, s[2].v, s[3].v];
                c.copy_from_slice(&triangle_cells(bits, us, vs));
            }
            for (s, c) in quads.remainder().iter().zip(out.into_remainder()) {
                *c = locator.cell(s) as u32;
            }
        }
    } else {
        for (s, c) in block.iter().zip(&mut cells) {
            *c = locator.cell(s) as u32;
        }
    }
    for (i, s) in block.iter().enumerate() {
        let o = i * ch;
        let (pos, du, dv) = (&mut pos[o..o + ch], &mut du[o..o + ch], &mut dv[o..o + ch]);
        let Some((slot, near)) = locator.find(s, cells[i], &block[i + 1..])? else {
            for x in pos.iter_mut().chain(du.iter_mut()).chain(dv.iter_mut()) {
                x.write(T::nan());
            }
            missing.push(first + i);
            continue;
        };
        // Regular, Gregory and box-spline patches were gathered as the
        // coefficients of their polynomials; the three channels of a
        // position at once, other counts one channel at a time.
        macro_rules! by_channels {
            ($f:ident) => {{
                let (u, v, k) = slot.local(s);
                let (u, v, k) = (cast::<T>(u), cast::<T>(v), cast::<T>(k));
                if ch == 3 {
                    put($f::<T, 3>(near, 3, 0, u, v), k, pos, du, dv);
                } else {
                    for j in 0..ch {
                        let (p, du, dv) = (&mut pos[j..=j], &mut du[j..=j], &mut dv[j..=j]);
                        put($f::<T, 1>(near, ch, j, u, v), k, p, du, dv);
                    }
                }
            }};
        }
        match slot.ty {
            PatchType::Regular => by_channels!(bicubic),
            PatchType::Loop => by_channels!(box_spline),
            PatchType::GregoryBasis => by_channels!(gregory),
            PatchType::GregoryTriangle => by_channels!(gregory_triangle),
            PatchType::Bilinear => {
                let k = cast::<T>(table.evaluate_basis_unscaled(slot.patch, s.u, s.v, &mut w));
                if ch == 3 {
                    weighted::<T, 3>(near, 3, 0, &w, k, pos, du, dv);
                } else {
                    for j in 0..ch {
                        let (p, u, v) = (&mut pos[j..=j], &mut du[j..=j], &mut dv[j..=j]);
                        weighted::<T, 1>(near, ch, j, &w, k, p, u, v);
                    }
                }
            }
        }
    }
    Ok(missing)
}

/// [`evaluate_block`] compiled for AVX2: the same operations in the same
/// order, on 256-bit registers, so the same bits as the baseline build.
/// Fused multiply-adds (another target feature, left off) would round once
/// where the baseline rounds twice, and change them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn evaluate_block_avx2<T: Float>(
    input: BlockInput<'_, T>,
    out: BlockOutput<'_, T>,
) -> Result<Vec<usize>, AdaptiveError> {
    evaluate_block(input, out)
}

/// [`evaluate_block`], through [`evaluate_block_avx2`] where the processor
/// has AVX2.
fn evaluate_block_dispatch<T: Float>(
    input: BlockInput<'_, T>,
    out: BlockOutput<'_, T>,
) -> Result<Vec<usize>, AdaptiveError> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, the one target feature
        // `evaluate_block_avx2` enables.
        return unsafe { evaluate_block_avx2(input, out) };
    }
    evaluate_block(input, out)
}

/// A patch the [`Locator`] holds, with what a regular patch's evaluation
/// needs of its parameters, read once per patch rather than per sample.
#[derive(Clone, Copy, Debug)]
struct Slot {
    patch: usize,
    /// Its type: regular B-spline, Gregory basis and Loop box-spline
    /// patches are gathered as polynomial coefficients, the others as
    /// points.
    ty: PatchType,
    /// A triangle parameterised from the far corner of its square
    /// ([`PatchParam::is_triangle_rotated`]).
    rotated: bool,
    /// Its boundary edges ([`PatchParam::boundary`]).
    boundary: u8,
    /// `(u, v)` in the ptex face to `(s, t)` in the patch, as
    /// [`PatchParam::normalize`]: `s = u · scale − u0`.
    scale: f64,
    u0: f64,
    v0: f64,
    /// The derivatives' factor, `2^depth`.
    k: f64,
}

impl Slot {
    /// The patch's parameters at sample `s` and the factor of the
    /// derivatives (as [`PatchTable::evaluate_basis_unscaled`]).
    #[inline(always)]
    fn local(&self, s: &Sample) -> (f64, f64, f64) {
        if self.rotated {
            ((self.k - self.u0) - s.u * self.scale, (self.k - self.v0) - s.v * self.scale, -self.k)
        } else {
            (s.u * self.scale - self.u0, s.v * self.scale - self.v0, self.k)
        }
    }

    fn of(table: &PatchTable, p: usize) -> Slot {
        let pa = &table.patches()[p];
        let param = &pa.param;
        Slot {
            patch: p,
            ty: pa.ty,
            rotated: pa.ty.is_triangle() && param.is_triangle_rotated(),
            boundary: param.boundary() & if pa.ty.is_triangle() { 0x1F } else { 0xF },
            scale: param.param_scale(),
            u0: f64::from(param.u()),
            v0: f64::from(param.v()),
            k: f64::from(1u32 << param.depth()),
        }
    }
}

/// [`PatchTable::find`], with no patch as `None`.
fn locate_patch(table: &PatchTable, s: &Sample) -> Result<Option<usize>, AdaptiveError> {
    match table.find(s.ptex, s.u, s.v) {
        Ok(p) => Ok(Some(p)),
        Err(AdaptiveError::NoPatch { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Copies the rows of `N` channels of points `pts` into `near`, one after
/// the other.
// Element by element: a slice copy of a few values went through a
// `memmove` call in the end caps' gather.
#[allow(clippy::manual_memcpy)]
#[inline]
fn gather<T: Float, const N: usize>(points: &[T], pts: &[u32], near: &mut [T]) {
    for (x, &pt) in near.chunks_exact_mut(N).zip(pts) {
        let p = &points[pt as usize * N..][..N];
        for j in 0..N {
            x[j] = p[j];
        }
    }
}

/// Turns `N` channels (at `off` in rows of `stride`) of a regular patch's
/// 4x4 points (row-major, `t` along the rows) into the coefficients of its bicubic in the
/// monomials, in place: entry `(j, i)` becomes the coefficient of
/// `s^i t^j`. Once per patch: a sample then costs a polynomial, not a
/// tensor product of basis curves.
///
/// The phantom points beyond `boundary`'s edges are first replaced by their
/// reflections `2 near - far`, which is what folding them into the basis
/// does; then the uniform cubic B-spline's change of basis runs down the
/// columns and across the rows.
#[inline(always)]
fn to_monomials<T: Float, const N: usize>(near: &mut [T], stride: usize, off: usize, boundary: u8) {
    let at = |row: usize, col: usize| (4 * row + col) * stride + off;
    let mut x = [[[T::zero(); N]; 4]; 4];
    for (row, xr) in x.iter_mut().enumerate() {
        for (col, xc) in xr.iter_mut().enumerate() {
            xc.copy_from_slice(&near[at(row, col)..][..N]);
        }
    }
    let two = cast::<T>(2.0);
    let reflect = |near: [T; N], far: [T; N]| -> [T; N] { std::array::from_fn(|m| two * near[m] - far[m]) };
    // Rows: bit 1 is the edge at t = 0 (row 0 the phantom), bit 4 at t = 1.
    for (bit, ph, n, f) in [(1, 0, 1, 2), (4, 3, 2, 1)] {
        if boundary & bit != 0 {
            let (rn, rf) = (x[n], x[f]);
            for ((p, &a), &b) in x[ph].iter_mut().zip(&rn).zip(&rf) {
                *p = reflect(a, b);
            }
        }
    }
    // Columns: bit 8 is the edge at s = 0 (column 0), bit 2 at s = 1.
    for (bit, ph, n, f) in [(8, 0, 1, 2), (2, 3, 2, 1)] {
        if boundary & bit != 0 {
            for xr in &mut x {
                xr[ph] = reflect(xr[n], xr[f]);
            }
        }
    }
    // `b0..b3` of a cubic B-spline segment to the coefficients of
    // `1, x, x², x³`: (b0 + 4 b1 + b2)/6, (b2 - b0)/2, (b0 - 2 b1 + b2)/2,
    // (b3 - b0)/6 + (b1 - b2)/2.
    let (four, half, sixth) = (cast::<T>(4.0), cast::<T>(0.5), cast::<T>(1.0 / 6.0));
    let change = |b: [T; 4]| {
        let s02 = b[0] + b[2];
        [
            (s02 + four * b[1]) * sixth,
            (b[2] - b[0]) * half,
            (s02 - two * b[1]) * half,
            (b[3] - b[0]) * sixth + (b[1] - b[2]) * half,
        ]
    };
    change_both_ways(&mut x, change);
    for (row, xr) in x.iter().enumerate() {
        for (col, xc) in xr.iter().enumerate() {
            near[at(row, col)..][..N].copy_from_slice(xc);
        }
    }
}

/// Applies a change of basis of cubics `change` down the columns (along
/// `t`), then across the rows (along `s`) of a 4x4 grid of `N` channels.
// Indices: a column gathers one entry of each row.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn change_both_ways<T: Float, const N: usize>(x: &mut [[[T; N]; 4]; 4], change: impl Fn([T; 4]) -> [T; 4]) {
    for col in 0..4 {
        for m in 0..N {
            let c = change([x[0][col][m], x[1][col][m], x[2][col][m], x[3][col][m]]);
            for (j, c) in c.into_iter().enumerate() {
                x[j][col][m] = c;
            }
        }
    }
    for xr in x.iter_mut() {
        for m in 0..N {
            let c = change([xr[0][m], xr[1][m], xr[2][m], xr[3][m]]);
            for (i, c) in c.into_iter().enumerate() {
                xr[i][m] = c;
            }
        }
    }
}

/// Position and first derivatives (with respect to the patch's `s` and
/// `t`) of `N` channels (at `off` in rows of `stride` of `near`) of a
/// bicubic at `(s, t)`, its coefficients in `near` as [`to_monomials`]
/// leaves them. Each channel's sums are the same whatever `N` and
/// `stride`: every channel count gives the same bits.
#[inline(always)]
fn bicubic<T: Float, const N: usize>(near: &[T], stride: usize, off: usize, s: T, t: T) -> ([T; N], [T; N], [T; N]) {
    let (two, three) = (cast::<T>(2.0), cast::<T>(3.0));
    let (s2, t2) = (s * s, t * t);
    let (s3, t3) = (s2 * s, t2 * t);
    let (ds2, ds3) = (two * s, three * s2);
    // Per row (power of `t`): the cubic in `s` and its derivative.
    let (mut a, mut b) = ([[T::zero(); N]; 4], [[T::zero(); N]; 4]);
    for (j, row) in near.chunks_exact(4 * stride).take(4).enumerate() {
        let c = |i: usize| &row[i * stride + off..][..N];
        let (c0, c1, c2, c3) = (c(0), c(1), c(2), c(3));
        for m in 0..N {
            a[j][m] = c0[m] + s * c1[m] + s2 * c2[m] + s3 * c3[m];
            b[j][m] = c1[m] + ds2 * c2[m] + ds3 * c3[m];
        }
    }
    let (dt2, dt3) = (two * t, three * t2);
    let (mut p, mut pu, mut pv) = ([T::zero(); N], [T::zero(); N], [T::zero(); N]);
    for m in 0..N {
        p[m] = a[0][m] + t * a[1][m] + t2 * a[2][m] + t3 * a[3][m];
        pu[m] = b[0][m] + t * b[1][m] + t2 * b[2][m] + t3 * b[3][m];
        pv[m] = a[1][m] + dt2 * a[2][m] + dt3 * a[3][m];
    }
    (p, pu, pv)
}

/// The Bezier points (column along `s`, row along `t`) of a Gregory basis
/// patch's interior, one per corner, in the order of the corners.
const GREGORY_INTERIOR: [(usize, usize); 4] = [(1, 1), (2, 1), (2, 2), (1, 2)];

/// Rearranges `N` channels (at `off` in rows of `stride`) of a Gregory
/// basis patch's 20 points (in OpenSubdiv's order: per corner `P`, `Ep`,
/// `Em`, `Fp`, `Fm`) in place:
/// first the monomial coefficients ([`to_monomials`]' layout) of the
/// bicubic Bezier patch whose interior points are the corners' `Fm`, then
/// per corner `Fp - Fm`. The patch at `(s, t)` is that bicubic plus, per
/// corner, its interior Bernstein weight times the corner's blend times
/// `Fp - Fm` ([`gregory`]).
#[inline(always)]
fn gregory_to_monomials<T: Float, const N: usize>(near: &mut [T], stride: usize, off: usize) {
    let point = |i: usize| -> [T; N] { std::array::from_fn(|m| near[i * stride + off + m]) };
    let mut x = [[[T::zero(); N]; 4]; 4];
    let mut d = [[T::zero(); N]; 4];
    for (i, &(col, row)) in GREGORY_QUAD_BEZIER.iter().enumerate() {
        // `Fp` (i % 5 == 3) is not a point of the Bezier net.
        if i % 5 != 3 {
            x[row][col] = point(i);
        }
    }
    for (k, d) in d.iter_mut().enumerate() {
        let (fp, fm) = (point(5 * k + 3), point(5 * k + 4));
        for m in 0..N {
            d[m] = fp[m] - fm[m];
        }
    }
    // Bernstein to monomials: c0 = b0, c1 = 3 (b1 - b0),
    // c2 = 3 (b0 - 2 b1 + b2), c3 = (b3 - b0) + 3 (b1 - b2).
    let (two, three) = (cast::<T>(2.0), cast::<T>(3.0));
    let change = |b: [T; 4]| {
        [b[0], three * (b[1] - b[0]), three * (b[0] - two * b[1] + b[2]), (b[3] - b[0]) + three * (b[1] - b[2])]
    };
    change_both_ways(&mut x, change);
    for (row, xr) in x.iter().enumerate() {
        for (col, xc) in xr.iter().enumerate() {
            near[(4 * row + col) * stride + off..][..N].copy_from_slice(xc);
        }
    }
    for (k, d) in d.iter().enumerate() {
        near[(16 + k) * stride + off..][..N].copy_from_slice(d);
    }
}

/// Position and first derivatives (unscaled) of `N` channels of a Gregory
/// basis patch at `(s, t)` from `near` as [`gregory_to_monomials`] leaves
/// it, with OpenSubdiv's approximate derivatives (the blends held
/// constant). At a corner, where a blend is 0/0, its denominator is taken
/// as 1, as OpenSubdiv does.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gregory<T: Float, const N: usize>(near: &[T], stride: usize, off: usize, s: T, t: T) -> ([T; N], [T; N], [T; N]) {
    let mut acc = bicubic::<T, N>(near, stride, off, s, t);
    let (one, two, three) = (T::one(), cast::<T>(2.0), cast::<T>(3.0));
    let (sc, tc) = (one - s, one - t);
    // Interior Bernstein functions 1 and 2 and their derivatives.
    let bern = |x: T, xc: T| {
        ([three * x * xc * xc, three * x * x * xc], [three * xc * (one - three * x), three * x * (two - three * x)])
    };
    let ((bs, dbs), (bt, dbt)) = (bern(s, sc), bern(t, tc));
    let blend = |n: T, d: T| if d <= T::zero() { n } else { n * (one / d) };
    let g = [blend(s, s + t), blend(t, sc + t), blend(sc, sc + tc), blend(tc, s + tc)];
    for (k, &(col, row)) in GREGORY_INTERIOR.iter().enumerate() {
        let (bs, dbs, bt, dbt) = (bs[col - 1], dbs[col - 1], bt[row - 1], dbt[row - 1]);
        let (wp, wu, wv) = (bs * bt * g[k], dbs * bt * g[k], bs * dbt * g[k]);
        add_weighted(&mut acc, (wp, wu, wv), &near[(16 + k) * stride + off..][..N]);
    }
    acc
}

/// Turns `N` channels (at `off` in rows of `stride`) of a regular Loop
/// patch's 12 points into the coefficients of its quartic box spline in
/// the monomials of [`QUARTIC_MONOMIALS`], in place: the phantom points
/// beyond `boundary`'s edges and vertices replaced by their reflections
/// (`a + b - c`; in the reverse of the order their weights are folded, so
/// that a reflection through a phantom sees it reflected), then the box
/// spline's basis in the monomials applied.
#[inline(always)]
fn box_spline_to_monomials<T: Float, const N: usize>(near: &mut [T], stride: usize, off: usize, boundary: u8) {
    let mut x: [[T; N]; 12] = std::array::from_fn(|i| std::array::from_fn(|m| near[i * stride + off + m]));
    if boundary != 0 {
        let (reflections, n) = box_spline_reflections(boundary);
        for &(p, [a, b, c]) in reflections[..n].iter().rev() {
            x[p] = std::array::from_fn(|m| x[a][m] + x[b][m] - x[c][m]);
        }
    }
    // The columns of `basis::BOX_SPLINE_COEFFS` written out, each sum in the
    // order of the points: straight-line code, so that the sums, chains of
    // additions, overlap. Columns 11 and 13 are twice 10 and 14 (doubling
    // is exact), column 12 is zero.
    let (two, four, six) = (cast::<T>(2.0), cast::<T>(4.0), cast::<T>(6.0));
    let (eight, twelve, twelfth) = (cast::<T>(8.0), cast::<T>(12.0), cast::<T>(1.0 / 12.0));
    for m in 0..N {
        let x = |i: usize| x[i][m];
        let mut c = [T::zero(); 15];
        c[0] = x(0) + x(1) + x(3) + six * x(4) + x(5) + x(7) + x(8);
        c[1] = -two * x(0) + two * x(1) - four * x(3) + four * x(5) - two * x(7) + two * x(8);
        c[2] = -four * x(0) - two * x(1) - two * x(3) + two * x(5) + two * x(7) + four * x(8);
        c[3] = six * x(3) - twelve * x(4) + six * x(5);
        c[4] = six * x(0) - six * x(1) + six * x(3) - twelve * x(4) + six * x(5) - six * x(7) + six * x(8);
        c[5] = six * x(0) - twelve * x(4) + six * x(8);
        c[6] = two * x(0) - four * x(1) + two * x(2) - four * x(3) + eight * x(4) - four * x(5) + two * x(7)
            - four * x(8)
            + two * x(9);
        c[7] = -six * x(3) + twelve * x(4) - six * x(5) + six * x(7) - twelve * x(8) + six * x(9);
        c[8] = -six * x(0) + six * x(1) + twelve * x(4) - twelve * x(5) - six * x(8) + six * x(9);
        c[9] = -four * x(0) + two * x(1) + two * x(3) + eight * x(4) - four * x(5) - four * x(7) - four * x(8)
            + two * x(9)
            + two * x(10);
        c[10] = -x(0) + two * x(1) - x(2) + x(3) - x(4) - x(5) + x(6) - x(7) + two * x(8) - x(9);
        c[11] = two * c[10];
        c[12] = T::zero();
        c[14] = x(0) - x(1) - x(3) - x(4) + two * x(5) + two * x(7) - x(8) - x(9) - x(10) + x(11);
        c[13] = two * c[14];
        for (k, c) in c.iter().enumerate() {
            near[k * stride + off + m] = *c * twelfth;
        }
    }
}

/// Position and first derivatives (with respect to the patch's `s` and
/// `t`) of `N` channels of a quartic at `(s, t)`, its coefficients in
/// `near` as [`box_spline_to_monomials`] leaves them (the monomials of
/// [`QUARTIC_MONOMIALS`]): per power of `t`, the polynomial in `s` and its
/// derivative by Horner's rule, then the same along `t`.
#[inline(always)]
fn box_spline<T: Float, const N: usize>(near: &[T], stride: usize, off: usize, s: T, t: T) -> ([T; N], [T; N], [T; N]) {
    // The coefficients, in the order of the monomials: by degree, then by
    // the power of `t`.
    let near = &near[..15 * stride];
    let (two, three, four) = (cast::<T>(2.0), cast::<T>(3.0), cast::<T>(4.0));
    let (mut p, mut pu, mut pv) = ([T::zero(); N], [T::zero(); N], [T::zero(); N]);
    for m in 0..N {
        let c = |k: usize| near[k * stride + off + m];
        // Per power of `t`, the polynomial in `s` and its derivative.
        let q0 = (((c(10) * s + c(6)) * s + c(3)) * s + c(1)) * s + c(0);
        let q1 = ((c(11) * s + c(7)) * s + c(4)) * s + c(2);
        let q2 = (c(12) * s + c(8)) * s + c(5);
        let q3 = c(13) * s + c(9);
        let q4 = c(14);
        let d0 = ((four * c(10) * s + three * c(6)) * s + two * c(3)) * s + c(1);
        let d1 = (three * c(11) * s + two * c(7)) * s + c(4);
        let d2 = two * c(12) * s + c(8);
        let d3 = c(13);
        p[m] = (((q4 * t + q3) * t + q2) * t + q1) * t + q0;
        pu[m] = ((d3 * t + d2) * t + d1) * t + d0;
        pv[m] = ((four * q4 * t + three * q3) * t + two * q2) * t + q1;
    }
    (p, pu, pv)
}

/// The quartic Bernstein polynomials on the triangle, in the order of
/// OpenSubdiv's Bezier points (rows of rising `t` power, each of rising `s`
/// power; `w = 1 - s - t` takes the rest of the degree), in the monomials
/// of [`QUARTIC_MONOMIALS`]: row `b` holds the coefficients of
/// `4!/(i! j! k!) s^i t^j (1 - s - t)^k`.
const BEZIER_TRIANGLE_MONOMIALS: [[i16; 15]; 15] = {
    const FACT: [i32; 5] = [1, 1, 2, 6, 24];
    let mut m = [[0i16; 15]; 15];
    let (mut n, mut j) = (0, 0);
    while j < 5 {
        let mut i = 0;
        while i < 5 - j {
            let k = 4 - i - j;
            let c = 24 / (FACT[i] * FACT[j] * FACT[k]);
            // (1 - s - t)^k, term by term: s^p t^q.
            let mut p = 0;
            while p <= k {
                let mut q = 0;
                while p + q <= k {
                    let sign = if (p + q) % 2 == 0 { 1 } else { -1 };
                    let term = FACT[k] / (FACT[p] * FACT[q] * FACT[k - p - q]);
                    let (a, b) = (i + p, j + q);
                    // The monomials are ordered by degree, then by the power of `t`.
                    let at = (a + b) * (a + b + 1) / 2 + b;
                    m[n][at] += (sign * c * term) as i16;
                    q += 1;
                }
                p += 1;
            }
            n += 1;
            i += 1;
        }
        j += 1;
    }
    m
};

/// The quartic Bezier points of a triangular Gregory patch's interior, one
/// per corner, in the order of the corners (the face points of corner `c`
/// blend there).
const GREGORY_TRIANGLE_INTERIOR: [usize; 3] = [6, 7, 10];

/// Rearranges `N` channels (at `off` in rows of `stride`) of a triangular
/// Gregory patch's 18 points (OpenSubdiv's order) in place: first the
/// coefficients, in the monomials of [`QUARTIC_MONOMIALS`], of the quartic
/// Bezier triangle whose interior points are the second point of each
/// corner's face point pair, then per corner the first point minus the
/// second. The patch at `(s, t)` is that quartic plus, per corner, its
/// interior Bernstein weight times the blend of the pair's first point
/// times that difference ([`gregory_triangle`]): the blends of a pair sum
/// to one.
#[inline(always)]
fn gregory_triangle_to_monomials<T: Float, const N: usize>(near: &mut [T], stride: usize, off: usize) {
    let x: [[T; N]; 18] = std::array::from_fn(|i| std::array::from_fn(|m| near[i * stride + off + m]));
    let mut y = [[T::zero(); N]; 15];
    let mut first = [[T::zero(); N]; 3];
    for (x, &(b, blend)) in x.iter().zip(&GREGORY_TRI_BEZIER) {
        match blend {
            Some(k) if k % 2 == 0 => first[k / 2] = *x,
            _ => y[b] = *x,
        }
    }
    for k in 0..QUARTIC_MONOMIALS.len() {
        let mut c = [T::zero(); N];
        for (row, y) in BEZIER_TRIANGLE_MONOMIALS.iter().zip(&y) {
            if row[k] != 0 {
                let w = cast::<T>(f64::from(row[k]));
                for m in 0..N {
                    c[m] = c[m] + w * y[m];
                }
            }
        }
        near[k * stride + off..][..N].copy_from_slice(&c);
    }
    for (c, &b) in GREGORY_TRIANGLE_INTERIOR.iter().enumerate() {
        let d: [T; N] = std::array::from_fn(|m| first[c][m] - y[b][m]);
        near[(15 + c) * stride + off..][..N].copy_from_slice(&d);
    }
}

/// Position and first derivatives (unscaled) of `N` channels of a
/// triangular Gregory patch at `(s, t)` from `near` as
/// [`gregory_triangle_to_monomials`] leaves it, with OpenSubdiv's
/// approximate derivatives (the blends held constant). At a corner, where a
/// blend is 0/0, the pair's first point takes it all, as in OpenSubdiv.
#[inline(always)]
fn gregory_triangle<T: Float, const N: usize>(
    near: &[T],
    stride: usize,
    off: usize,
    s: T,
    t: T,
) -> ([T; N], [T; N], [T; N]) {
    let mut acc = box_spline::<T, N>(near, stride, off, s, t);
    let (one, two, twelve) = (T::one(), cast::<T>(2.0), cast::<T>(12.0));
    let w = one - s - t;
    // The interior Bernstein functions 12 s t w², 12 s² t w, 12 s t² w and
    // their derivatives along `s` and `t` (`w` falls along both).
    let (st, tw, sw) = (twelve * s * t, twelve * t * w, twelve * s * w);
    let interior = [
        (st * w * w, tw * (w - two * s), sw * (w - two * t)),
        (st * s * w, st * (two * w - s), twelve * s * s * (w - t)),
        (st * t * w, twelve * t * t * (w - s), st * (two * w - t)),
    ];
    let blend = |n: T, d: T| if d > T::zero() { n * (one / d) } else { one };
    let g = [blend(s, s + t), blend(t, t + w), blend(w, w + s)];
    for (c, &(b, bs, bt)) in interior.iter().enumerate() {
        add_weighted(&mut acc, (b * g[c], bs * g[c], bt * g[c]), &near[(15 + c) * stride + off..][..N]);
    }
    acc
}

/// Adds `x` (`N` channels) with weights `w`, `wu`, `wv` to a position and
/// its derivatives.
#[inline(always)]
fn add_weighted<T: Float, const N: usize>(acc: &mut ([T; N], [T; N], [T; N]), (w, wu, wv): (T, T, T), x: &[T]) {
    for (m, &x) in x[..N].iter().enumerate() {
        acc.0[m] = acc.0[m] + w * x;
        acc.1[m] = acc.1[m] + wu * x;
        acc.2[m] = acc.2[m] + wv * x;
    }
}

/// Writes a sample's position and derivatives, the derivatives scaled by
/// `k`.
#[inline(always)]
fn put<T: Float, const N: usize>(
    (p, pu, pv): ([T; N], [T; N], [T; N]),
    k: T,
    pos: &mut [MaybeUninit<T>],
    du: &mut [MaybeUninit<T>],
    dv: &mut [MaybeUninit<T>],
) {
    for m in 0..N {
        pos[m].write(p[m]);
        du[m].write(pu[m] * k);
        dv[m].write(pv[m] * k);
    }
}

/// Position and first derivatives of `N` channels (at `off` in rows of
/// `stride` of `near`, the patch's points) from a patch's weights `w`, derivatives scaled by `k`.
#[allow(clippy::too_many_arguments)]
fn weighted<T: Float, const N: usize>(
    near: &[T],
    stride: usize,
    off: usize,
    w: &Weights,
    k: T,
    pos: &mut [MaybeUninit<T>],
    du: &mut [MaybeUninit<T>],
    dv: &mut [MaybeUninit<T>],
) {
    let mut acc = ([T::zero(); N], [T::zero(); N], [T::zero(); N]);
    for (((x, &a), &b), &c) in near.chunks_exact(stride).zip(w.point()).zip(w.du()).zip(w.dv()) {
        add_weighted(&mut acc, (cast::<T>(a), cast::<T>(b), cast::<T>(c)), &x[off..][..N]);
    }
    put(acc, k, pos, du, dv);
}

/// Points `dst_start..` of `out` (rows of `ch` channels) as the stencils
/// `rows` applied to the points from `src_start` (all before `dst_start`).
fn apply_rows<T: Float + Send + Sync>(
    out: &mut [T],
    ch: usize,
    src_start: usize,
    dst_start: usize,
    rows: &Stencils,
    par: Par,
) {
    let (src, dst) = out.split_at_mut(dst_start * ch);
    let dst = &mut dst[..rows.num_rows() * ch];
    let src = &src[src_start * ch..];
    let one = |(r, d): (usize, &mut [T])| {
        let (cols, ws) = rows.row(r);
        combine_rows::<T>(src, ch, cols.iter().copied(), ws, d);
    };
    if par == Par::Rayon {
        dst.par_chunks_mut(ch).enumerate().with_min_len(1 << 10).for_each(one);
    } else {
        dst.chunks_mut(ch).enumerate().for_each(one);
    }
}

/// The end caps' points, from `start` on in `out` (rows of `ch` channels),
/// from the level points before them: per end cap, its source points are
/// gathered once, then its conversion's rows applied to them (the terms in
/// the order of the rows, as [`EndCapRows::to_rows`] writes them).
fn apply_end_caps<T: Float + Send + Sync>(out: &mut [T], ch: usize, start: usize, caps: &EndCapRows, par: Par) {
    let (src, mut dst) = out.split_at_mut(start * ch);
    let mut parts = Vec::with_capacity(caps.num_caps());
    for (conv, names) in caps.caps() {
        let (d, rest) = std::mem::take(&mut dst).split_at_mut(conv.num_rows() * ch);
        parts.push((conv, names, d));
        dst = rest;
    }
    let one = |near: &mut Vec<T>, (conv, names, d): (&endcap::Rows, &[u32], &mut [T])| {
        near.resize(names.len() * ch, T::zero());
        if ch == 3 {
            gather::<T, 3>(src, names, near);
        } else {
            for (x, &p) in near.chunks_exact_mut(ch).zip(names) {
                x.copy_from_slice(&src[p as usize * ch..][..ch]);
            }
        }
        for (r, d) in d.chunks_mut(ch).enumerate() {
            let (cols, ws) = conv.row(r);
            combine_rows::<T>(near, ch, cols.iter().copied(), ws, d);
        }
    };
    if par == Par::Rayon {
        parts.into_par_iter().with_min_len(64).for_each_init(Vec::new, one);
    } else {
        let mut near = Vec::new();
        parts.into_iter().for_each(|p| one(&mut near, p));
    }
}

/// `d = sum of ws[i] * point cols[i]` over rows of `ch` channels of `src`,
/// in the order of the terms (`d` starts at zero).
#[inline]
fn combine_rows<T: Float>(src: &[T], ch: usize, cols: impl Iterator<Item = u32>, ws: &[f64], d: &mut [T]) {
    if ch == 3 {
        combine::<T, 3>(src, cols, ws, d);
    } else {
        d.fill(T::zero());
        for (c, &w) in cols.zip(ws) {
            let w = cast::<T>(w);
            let s = &src[c as usize * ch..][..ch];
            for (x, &y) in d.iter_mut().zip(s) {
                *x = *x + w * y;
            }
        }
    }
}

/// [`combine_rows`] for `N` channels.
// Element by element, as `gather`.
#[allow(clippy::manual_memcpy)]
#[inline]
fn combine<T: Float, const N: usize>(src: &[T], cols: impl Iterator<Item = u32>, ws: &[f64], d: &mut [T]) {
    let mut acc = [T::zero(); N];
    for (c, &w) in cols.zip(ws) {
        let w = cast::<T>(w);
        let s = &src[c as usize * N..][..N];
        for j in 0..N {
            acc[j] = acc[j] + w * s[j];
        }
    }
    for j in 0..N {
        d[j] = acc[j];
    }
}

#[inline]
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

/// [`subla_scheme::kernel::try_zeros`] (huge pages where large, untouched
/// until written), its allocation failure as [`AdaptiveError::Algebra`].
fn zeroed<T: Zeroable>(shape: (usize, usize), what: &'static str) -> Result<Array2<T>, AdaptiveError> {
    subla_scheme::kernel::try_zeros(shape.0, shape.1, what).map_err(|e| match e {
        subla_scheme::SchemeError::Algebra(a) => AdaptiveError::Algebra(a),
        e => AdaptiveError::Scheme(e),
    })
}

/// `s` as memory to write only: `evaluate_flat` takes fresh buffers and a
/// frame's alike.
fn as_uninit<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    let len = s.len();
    // SAFETY: `MaybeUninit<T>` has the layout of `T`; the slice borrows `s`
    // for its lifetime, and its users only write initialised values into it
    // (`MaybeUninit::write`), so `s` holds valid `T`s when it is used again.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<T>>(), len) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EndCap, SparseRefinement};
    use subla_mesh::Validation;
    use subla_mesh::obj::read_obj;

    /// Each block of samples through both builds of the sample loop, as
    /// values of `T`, compared bit for bit (NaN where no patch covers a
    /// sample).
    fn both_builds<T: Float + std::fmt::Debug>(
        t: &PatchTable,
        points: &[T],
        ch: usize,
        samples: &[Sample],
        name: &str,
    ) {
        let n = samples.len() * ch;
        let run = |avx2: bool| {
            let mut out = [vec![T::zero(); n], vec![T::zero(); n], vec![T::zero(); n]];
            let [p, u, v] = &mut out;
            let (p, u, v) = (as_uninit(p), as_uninit(u), as_uninit(v));
            let input = BlockInput { table: t, points, ch, block: samples, first: 0 };
            let missing = if avx2 {
                // SAFETY: the caller checked that the processor has AVX2.
                unsafe { evaluate_block_avx2(input, (p, u, v)) }
            } else {
                evaluate_block(input, (p, u, v))
            }
            .expect("samples in range");
            (out, missing)
        };
        let (base, missing) = run(false);
        let (wide, wide_missing) = run(true);
        assert_eq!(missing, wide_missing, "{name}: the samples no patch covers");
        for (k, (a, b)) in base.iter().zip(&wide).enumerate() {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let same = x == y && x.is_sign_negative() == y.is_sign_negative() || x.is_nan() && y.is_nan();
                assert!(same, "{name}: output {k}, value {i}: {x:?} (baseline) vs {y:?} (AVX2)");
            }
        }
    }

    /// Four samples' triangles at once are the walk's, one sample at a
    /// time: at random points, and on the edges of the triangles of every
    /// depth (where the walk's comparisons tie), inside and outside the
    /// ptex face.
    #[test]
    fn four_triangle_cells_at_once_are_the_walks() {
        let mut points: Vec<(f64, f64)> =
            (0..4000).map(|i| (unit(2 * i) * 0.6 + 0.5, unit(2 * i + 1) * 0.6 + 0.5)).collect();
        for i in 0..=16 {
            for j in 0..=16 {
                points.push((f64::from(i) / 16.0, f64::from(j) / 16.0));
            }
        }
        for bits in 0..=4u8 {
            for q in points.chunks(4) {
                let lane = |l: usize| q[l % q.len()];
                let got = triangle_cells(bits, std::array::from_fn(|l| lane(l).0), std::array::from_fn(|l| lane(l).1));
                for (l, &cell) in got.iter().enumerate() {
                    let (u, v) = lane(l);
                    let mut step = TriangleStep::new(u.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
                    let want = (0..bits).fold(0, |at, _| 4 * at + step.child() as u32);
                    assert_eq!(cell, want, "depth {bits}, ({u}, {v})");
                }
            }
        }
    }

    /// A fixed hash to `[-1, 1)`.
    fn unit(x: u64) -> f64 {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    }

    /// Each patch type's coefficients, made once per patch, evaluate to the
    /// basis weights' sums (OpenSubdiv's `EvaluateBasis`) at points inside
    /// and outside the patch, for every boundary mask: the reflections, the
    /// changes of basis and the derivatives.
    #[test]
    fn coefficients_per_patch_equal_the_basis_weights() {
        use crate::basis::{
            GregoryDerivatives, box_spline_weights, bspline_weights, gregory_basis_weights, gregory_triangle_weights,
        };
        let params = [(0.0, 0.0), (1.0, 0.0), (0.3, 0.6), (0.9, 0.05), (0.5, 0.5), (-0.2, 1.3), (0.0, 1.0)];
        // A triangle's parameters stay in it; its three corners are where
        // a Gregory blend is 0/0.
        let tri_params = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.2, 0.3), (0.6, 0.1), (0.1, 0.8), (0.25, 0.25)];
        // (points, masks, coefficients and evaluation, weights)
        type Coeffs = fn(&mut [f64], u8);
        type Eval = fn(&[f64], f64, f64) -> ([f64; 3], [f64; 3], [f64; 3]);
        type Basis = fn(f64, f64, u8, &mut Weights);
        let cases: [(&str, usize, u8, Coeffs, Eval, Basis); 4] = [
            (
                "B-spline",
                16,
                16,
                |x, b| to_monomials::<f64, 3>(x, 3, 0, b),
                |x, s, t| bicubic::<f64, 3>(x, 3, 0, s, t),
                |s, t, b, w| bspline_weights(s, t, b, w),
            ),
            (
                "Gregory",
                20,
                1,
                |x, _| gregory_to_monomials::<f64, 3>(x, 3, 0),
                |x, s, t| gregory::<f64, 3>(x, 3, 0, s, t),
                |s, t, _, w| gregory_basis_weights(s, t, GregoryDerivatives::Approximate, w),
            ),
            (
                "box spline",
                12,
                24,
                |x, b| box_spline_to_monomials::<f64, 3>(x, 3, 0, b),
                |x, s, t| box_spline::<f64, 3>(x, 3, 0, s, t),
                |s, t, b, w| box_spline_weights(s, t, b, w),
            ),
            (
                "triangular Gregory",
                18,
                1,
                |x, _| gregory_triangle_to_monomials::<f64, 3>(x, 3, 0),
                |x, s, t| gregory_triangle::<f64, 3>(x, 3, 0, s, t),
                |s, t, _, w| gregory_triangle_weights(s, t, GregoryDerivatives::Approximate, w),
            ),
        ];
        let mut w = Weights::new(DerivOrder::First);
        let mut checked = 0;
        for (name, n, masks, coeffs, eval, basis) in cases {
            for mask in 0..masks {
                let points: Vec<f64> = (0..3 * n).map(|i| unit(1000 * u64::from(mask) + i as u64)).collect();
                let mut x = points.clone();
                x.resize(3 * MAX_POINTS, 0.0);
                coeffs(&mut x, mask);
                for &(s, t) in if n % 4 == 0 { &params } else { &tri_params } {
                    let got = eval(&x, s, t);
                    basis(s, t, mask, &mut w);
                    for (k, (g, ws)) in [got.0, got.1, got.2].iter().zip([w.point(), w.du(), w.dv()]).enumerate() {
                        for c in 0..3 {
                            let terms = ws.iter().enumerate().map(|(i, &wi)| wi * points[3 * i + c]);
                            let want: f64 = terms.clone().sum();
                            let size: f64 = terms.map(f64::abs).sum::<f64>().max(1.0);
                            assert!(
                                (g[c] - want).abs() <= 1e-13 * size,
                                "{name}, mask {mask:#b}, ({s}, {t}), output {k}, channel {c}: {} vs {want}",
                                g[c]
                            );
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, (16 + 1 + 24 + 1) * params.len());
    }

    /// The AVX2 build of the sample loop gives the baseline's bits: regular
    /// patches (interior and boundary), Gregory end caps, holes, Loop's box
    /// splines and triangular end caps, 3 and 4 channels, `f64` and `f32`.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx2_build_gives_the_baseline_bits() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("this processor has no AVX2: the baseline build alone runs here");
            return;
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data/meshes/osd");
        for name in ["catmark_hole_test1", "catmark_pole8", "catmark_quadstrips", "catmark_car", "loop_xord_boundary"] {
            let mut d = read_obj(dir.join(format!("{name}.obj")), Validation::OpenSubdiv).expect("mesh");
            if d.left_handed {
                d.mesh = d.mesh.reversed_winding().expect("reversed");
            }
            let r = if name.starts_with("loop") {
                SparseRefinement::build_loop(&d.mesh, 3, None)
            } else {
                SparseRefinement::build(&d.mesh, 3, None)
            }
            .expect("refine");
            let t = PatchTable::new(r, EndCap::GregoryBasis).expect("table");
            let pos = d.positions();
            let x = Array2::from_shape_fn((pos.nrows(), 4), |(i, c)| {
                if c < 3 { pos[[i, c]] } else { pos[[i, 0]] * pos[[i, 1]] - pos[[i, 2]] }
            });
            // A grid per ptex face (whole faces at once) and a sparse
            // scatter (a patch at a time).
            let mut samples = grid(t.refinement().num_ptex_faces(), 6);
            samples.extend((0..2000u32).map(|i| Sample {
                ptex: i * 7919 % t.refinement().num_ptex_faces(),
                u: f64::from(i % 97) / 96.0,
                v: f64::from(i % 89) / 88.0,
            }));
            for ch in [3, 4] {
                let points = t.points_of(x.slice(ndarray::s![.., ..ch]), Par::Seq);
                let flat = points.as_slice().expect("standard layout");
                both_builds(&t, flat, ch, &samples, name);
                let flat32: Vec<f32> = flat.iter().map(|&v| v as f32).collect();
                both_builds(&t, &flat32, ch, &samples, name);
            }
        }
    }
}
