//! Rows of a composed refinement matrix in tensor-product form, stored and
//! evaluated without their weights.
//!
//! Inside a regular patch, a tensor-product spline scheme (Catmull-Clark is
//! bicubic B-spline subdivision there) maps the patch's 4 × 4 control
//! points to every refined point on it with weights `w_x(r) · w_y(s)`,
//! where `w_x` and `w_y` come from one short table of one-dimensional
//! weights indexed by the point's grid position. [`TensorRows`] stores
//! exactly that: the table, each patch's sixteen control points, and for
//! each output row its patch and its two positions — 8 bytes a row instead
//! of the 12 bytes per nonzero (about 16 a row) of the composed matrix.
//!
//! It is a [`ClosedForm`]: [`Refinement::compose_with`] and
//! [`Refinement::composed_of`] write its rows into the composed matrix, and
//! keep it; [`Refinement::tensor_of`] keeps it without writing them. Then
//! [`Evaluation::Tensor`] and [`Evaluation::Separable`] (which
//! [`Evaluation::Auto`] prefers) evaluate those rows from the table, reading
//! the control points and about 8 bytes a row, and only the other rows from
//! the matrix: the first row by row, to the composed matrix's bits; the
//! second patch by patch, factored (`Σ_r w_x(r) Σ_s w_y(s) p(r, s)`, each
//! inner sum computed once per patch and position), with half the
//! arithmetic, within rounding.
//!
//! # Exactness (row by row)
//! Row `i` of patch `p` at positions `(x, y)` has, for each of the patch's
//! points `k` in ascending column order, the weight `w[x][g_k / 4] ·
//! w[y][g_k % 4]` (`g_k` the point's grid index), computed in `f64`; zero
//! weights are not stored. The evaluator sums all sixteen terms in that
//! order, starting from `+0`, with each weight computed the same way and
//! then converted to the evaluation type: a zero-weight term adds `±0`,
//! which changes nothing, so for finite data the result is, bit for bit,
//! that of evaluating the composed matrix ([`PaddedCsr`] sums in stored
//! order too).
//!
//! The evaluator sums up to four channels in four lanes (the control points
//! padded to four values), reads each row's weights from a table already
//! in column order where the patches use few distinct grids, and, where
//! the CPU has AVX, runs code compiled for it (`f64` rows in 256-bit
//! vectors). None of this changes an operation: every term is still a
//! multiply, then an add, in the order above, never fused.
//!
//! [`ClosedForm`]: crate::refinement::ClosedForm
//! [`Refinement::compose_with`]: crate::refinement::Refinement::compose_with
//! [`Refinement::composed_of`]: crate::refinement::Refinement::composed_of
//! [`Refinement::tensor_of`]: crate::refinement::Refinement::tensor_of
//! [`Evaluation::Tensor`]: crate::refinement::Evaluation::Tensor
//! [`Evaluation::Auto`]: crate::refinement::Evaluation::Auto
//! [`Evaluation::Separable`]: crate::refinement::Evaluation::Separable
//! [`PaddedCsr`]: subla_algebra::PaddedCsr

use std::any::TypeId;
use std::mem::MaybeUninit;
use std::ops::Range;

use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::mem::try_vec_with_capacity;
use subla_algebra::par::for_each_block;
use subla_algebra::scan::compact;
use subla_algebra::{CsrMat, PaddedCsr, Par};

use crate::refinement::ClosedForm;
use crate::{Result, SchemeError};

mod separable;
use separable::Separable;

/// Marks a row without a tensor-product form.
const OPEN: u32 = u32::MAX;

/// The sixteen control points of a patch, in ascending column order, each
/// with its grid index `4 r + s` (`r` the position along the first
/// direction, `s` along the second, both `0..4`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensorPatch {
    /// Columns (control points), strictly ascending.
    pub ids: [u32; 16],
    /// Grid index of each column: a permutation of `0..16`.
    pub grid: [u8; 16],
}

/// Where an output row lies: its patch and its positions in the weight
/// table along the two directions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensorRow {
    /// Index into the patches, or `u32::MAX` for a row without a tensor
    /// form ([`TensorRow::OPEN`]).
    pub patch: u32,
    /// Position along the first direction (index into the weight table).
    pub x: u16,
    /// Position along the second direction.
    pub y: u16,
}

impl TensorRow {
    /// A row without a tensor-product form.
    pub const OPEN: TensorRow = TensorRow { patch: OPEN, x: 0, y: 0 };
}

/// Rows of a composed refinement matrix in tensor-product form (see the
/// [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorRows {
    ncols: usize,
    weights: Vec<[f64; 4]>,
    /// Per pair of positions `(x, y)` (index `x · positions + y`), the
    /// weight of each grid index.
    products: Vec<[f64; 16]>,
    /// Per pair of positions, the nonzeros among its `products`: the
    /// length of its rows.
    lens: Vec<u8>,
    patches: Vec<TensorPatch>,
    rows: Vec<TensorRow>,
    closed: usize,
    /// Nonzeros of the rows with a tensor form.
    nnz: u64,
}

/// Rows per chunk of the passes that check and count rows.
const ROW_CHUNK: usize = 1 << 15;

/// What [`TensorRows`] derives from its weights and patches, before the
/// rows.
struct Table {
    ncols: usize,
    weights: Vec<[f64; 4]>,
    products: Vec<[f64; 16]>,
    lens: Vec<u8>,
    patches: Vec<TensorPatch>,
}

/// The first row out of range, the rows with a tensor form and their
/// nonzeros, over some rows.
#[derive(Copy, Clone)]
struct RowCounts {
    first_bad: usize,
    closed: usize,
    nnz: u64,
}

impl Default for RowCounts {
    fn default() -> Self {
        RowCounts { first_bad: usize::MAX, closed: 0, nnz: 0 }
    }
}

impl RowCounts {
    fn add(self, o: RowCounts) -> RowCounts {
        RowCounts { first_bad: self.first_bad.min(o.first_bad), closed: self.closed + o.closed, nnz: self.nnz + o.nnz }
    }
}

impl Table {
    /// Checks the patches; the products of the weights and their lengths.
    fn new(ncols: usize, weights: Vec<[f64; 4]>, patches: Vec<TensorPatch>) -> Result<Table> {
        for (p, patch) in patches.iter().enumerate() {
            let ascending = patch.ids.windows(2).all(|w| w[0] < w[1]) && (patch.ids[15] as usize) < ncols;
            let mut seen = 0u16;
            for &g in &patch.grid {
                seen |= 1u16.checked_shl(u32::from(g)).unwrap_or(0);
            }
            if !ascending || seen != u16::MAX {
                return Err(SchemeError::InvalidTensorPatch { patch: p, ncols });
            }
        }
        let nt = weights.len();
        let products: Vec<[f64; 16]> = (0..nt * nt)
            .map(|xy| std::array::from_fn(|g| product(&weights, (xy / nt) as u16, (xy % nt) as u16, g as u8)))
            .collect();
        // Counted from the products themselves (not from the factors, whose
        // product may underflow), so that a row's length is what
        // `write_row` writes.
        let lens: Vec<u8> = products.iter().map(|w| w.iter().filter(|&&v| v != 0.0).count() as u8).collect();
        Ok(Table { ncols, weights, products, lens, patches })
    }

    /// Counts of `rows`, the first of which is row `start`.
    fn count(&self, start: usize, rows: &[TensorRow]) -> RowCounts {
        let (np, nt) = (self.patches.len(), self.weights.len());
        let mut c = RowCounts::default();
        for (i, r) in rows.iter().enumerate() {
            if r.patch == OPEN {
                continue;
            }
            c.closed += 1;
            let (x, y) = (usize::from(r.x), usize::from(r.y));
            if r.patch as usize >= np || x >= nt || y >= nt {
                c.first_bad = c.first_bad.min(start + i);
            } else {
                c.nnz += u64::from(self.lens[x * nt + y]);
            }
        }
        c
    }

    /// The tensor rows, or the error naming the first row out of range.
    fn finish(self, rows: Vec<TensorRow>, c: RowCounts) -> Result<TensorRows> {
        if c.first_bad != usize::MAX {
            return Err(SchemeError::InvalidClosedFormRow { row: c.first_bad });
        }
        let Table { ncols, weights, products, lens, patches } = self;
        Ok(TensorRows { ncols, weights, products, lens, patches, rows, closed: c.closed, nnz: c.nnz })
    }
}

impl TensorRows {
    /// Tensor rows over `ncols` columns: one-dimensional `weights` (entry
    /// `t` holds the weights of position `t` over a patch's four points
    /// along one direction), the `patches`, and one [`TensorRow`] per
    /// output row.
    ///
    /// # Errors
    /// [`SchemeError::InvalidTensorPatch`] naming the first patch whose
    /// columns are not strictly ascending and below `ncols` or whose grid
    /// is not a permutation of `0..16`; [`SchemeError::InvalidClosedFormRow`]
    /// naming the first row whose patch or positions are out of range.
    pub fn new(ncols: usize, weights: Vec<[f64; 4]>, patches: Vec<TensorPatch>, rows: Vec<TensorRow>) -> Result<Self> {
        let table = Table::new(ncols, weights, patches)?;
        let counts = rows
            .par_chunks(ROW_CHUNK)
            .enumerate()
            .map(|(c, chunk)| table.count(c * ROW_CHUNK, chunk))
            .reduce(RowCounts::default, RowCounts::add);
        table.finish(rows, counts)
    }

    /// [`TensorRows::new`] with `nrows` rows, row `i` given by `row(i)`:
    /// each row is checked and counted as it is made, in one pass (in
    /// parallel under [`Par::Rayon`]) instead of two.
    ///
    /// # Errors
    /// As [`TensorRows::new`].
    pub fn from_fn(
        ncols: usize,
        weights: Vec<[f64; 4]>,
        patches: Vec<TensorPatch>,
        nrows: usize,
        par: Par,
        row: impl Fn(usize) -> TensorRow + Sync,
    ) -> Result<Self> {
        let table = Table::new(ncols, weights, patches)?;
        let mut rows: Vec<TensorRow> = try_vec_with_capacity(nrows, "the tensor rows of a composed matrix")?;
        let fill = |(c, chunk): (usize, &mut [MaybeUninit<TensorRow>])| {
            let start = c * ROW_CHUNK;
            for (i, r) in chunk.iter_mut().enumerate() {
                r.write(row(start + i));
            }
            // SAFETY: every element of `chunk` was written just above, and
            // `MaybeUninit<T>` has the layout of `T`.
            let made = unsafe { &*(std::ptr::from_ref(chunk) as *const [TensorRow]) };
            table.count(start, made)
        };
        let spare = &mut rows.spare_capacity_mut()[..nrows];
        let counts = match par {
            Par::Rayon => {
                spare.par_chunks_mut(ROW_CHUNK).enumerate().map(fill).reduce(RowCounts::default, RowCounts::add)
            }
            Par::Seq => spare.chunks_mut(ROW_CHUNK).enumerate().map(fill).fold(RowCounts::default(), RowCounts::add),
        };
        // SAFETY: the chunks cover `0..nrows`, and `fill` wrote every
        // element of each.
        unsafe { rows.set_len(nrows) };
        table.finish(rows, counts)
    }

    /// Output rows (with and without a tensor form).
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// Columns (control points).
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Rows with a tensor form.
    pub fn closed_rows(&self) -> usize {
        self.closed
    }

    /// Nonzeros of the rows with a tensor form (as the composed matrix
    /// stores them: zero weights left out).
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The patches.
    pub fn patches(&self) -> &[TensorPatch] {
        &self.patches
    }

    /// Where each output row lies.
    pub fn rows(&self) -> &[TensorRow] {
        &self.rows
    }

    /// Bytes held (table, patches, rows).
    pub fn bytes(&self) -> u64 {
        (self.weights.len() * 32
            + self.products.len() * 129
            + self.patches.len() * std::mem::size_of::<TensorPatch>()
            + self.rows.len() * 8) as u64
    }

    /// The rows without a tensor form, ascending.
    pub(crate) fn open_rows(&self, par: Par) -> Result<Vec<u32>> {
        Ok(compact(self.rows.len(), |i| self.rows[i].patch == OPEN, par)?)
    }
}

impl TensorRows {
    /// Writes row `row`, one with a tensor form, at `at` in `idx` and
    /// `vals`. Where 16 places are left from `at`, up to 16 entries are
    /// written there: the row's [`ClosedForm::row_len`] entries, then
    /// leftovers for the caller to overwrite (the next rows of a block
    /// written in order). Otherwise exactly the row.
    #[inline]
    pub(crate) fn write_row_at(&self, row: usize, idx: &mut [u32], vals: &mut [f64], at: usize) {
        match (idx.get_mut(at..at + 16), vals.get_mut(at..at + 16)) {
            (Some(ri), Some(rv)) => self.write_wide(row, ri, rv),
            _ => {
                let len = self.row_len(row).unwrap_or(0);
                self.write_row(row, &mut idx[at..at + len], &mut vals[at..at + len]);
            }
        }
    }

    /// Writes row `row`, one with a tensor form, into the 16 places of `ri`
    /// and `rv`: its entries first, then leftovers.
    #[inline]
    fn write_wide(&self, row: usize, ri: &mut [u32], rv: &mut [f64]) {
        let r = self.rows[row];
        let p = &self.patches[r.patch as usize];
        let xy = usize::from(r.x) * self.weights.len() + usize::from(r.y);
        let w = &self.products[xy];
        if self.lens[xy] == 16 {
            // No zero weight: the patch as it is.
            ri.copy_from_slice(&p.ids);
            for (v, &g) in rv.iter_mut().zip(&p.grid) {
                *v = w[usize::from(g & 15)];
            }
            return;
        }
        // Compacted without branches: each entry is stored, and the next
        // goes over it if its weight is zero.
        let mut n = 0;
        for (&id, &g) in p.ids.iter().zip(&p.grid) {
            let w = w[usize::from(g & 15)];
            ri[n & 15] = id;
            rv[n & 15] = w;
            n += usize::from(w != 0.0);
        }
        debug_assert_eq!(n, usize::from(self.lens[xy]), "row {row}: the tensor form's length");
    }
}

/// The weight of grid index `g` at positions `(x, y)` of the
/// one-dimensional `weights`.
fn product(weights: &[[f64; 4]], x: u16, y: u16, g: u8) -> f64 {
    weights[usize::from(x)][usize::from(g >> 2)] * weights[usize::from(y)][usize::from(g & 3)]
}

impl ClosedForm for TensorRows {
    #[inline]
    fn row_len(&self, row: usize) -> Option<usize> {
        let r = self.rows[row];
        (r.patch != OPEN).then(|| usize::from(self.lens[usize::from(r.x) * self.weights.len() + usize::from(r.y)]))
    }

    #[inline]
    fn write_row(&self, row: usize, idx: &mut [u32], vals: &mut [f64]) {
        if let (Ok(ri), Ok(rv)) = (<&mut [u32; 16]>::try_from(&mut *idx), <&mut [f64; 16]>::try_from(&mut *vals)) {
            return self.write_wide(row, ri, rv);
        }
        // Written wide into a local row, then copied out.
        let (mut ri, mut rv) = ([0u32; 16], [0f64; 16]);
        self.write_wide(row, &mut ri, &mut rv);
        idx.copy_from_slice(&ri[..idx.len()]);
        vals.copy_from_slice(&rv[..vals.len()]);
    }

    fn tensor_rows(&self) -> Option<&TensorRows> {
        Some(self)
    }

    fn into_tensor_rows(self: Box<Self>) -> Option<TensorRows> {
        Some(*self)
    }
}

/// How [`TensorEval`] sums the tensor rows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TensorKernel {
    /// Row by row, the sixteen terms of each in the composed matrix's
    /// order: its bits.
    Rows,
    /// Patch by patch, factored: within rounding of the composed matrix.
    Separable,
}

/// The evaluation form of [`TensorRows`] in precision `T`, with the other
/// rows of the composed matrix.
#[derive(Clone, Debug)]
pub(crate) struct TensorEval<T> {
    form: Form<T>,
    ncols: usize,
    nrows: usize,
    /// The rows without a tensor form (ascending) and their rows of the
    /// composed matrix.
    open: Vec<u32>,
    open_mat: PaddedCsr<T>,
    /// Nonzeros of the composed matrix.
    nnz: u64,
}

/// The tensor rows, arranged for one of the [`TensorKernel`]s.
#[derive(Clone, Debug)]
enum Form<T> {
    Rows(ByRow<T>),
    Separable(Separable<T>),
}

/// The tensor rows in output order, each summed from its sixteen weights.
#[derive(Clone, Debug)]
struct ByRow<T> {
    /// Per pair of positions `(x, y)` (index `x · positions + y`), the
    /// weight of each grid index, converted to `T`.
    table: Vec<[T; 16]>,
    /// Where the patches use few distinct grids: per grid class `k` and
    /// pair of positions, the weight of each term in column order (entry
    /// `k · positions² + x · positions + y`), and each patch's class. Then
    /// a term's weight is read in sequence instead of through its grid
    /// index. Empty otherwise.
    ordered: Vec<[T; 16]>,
    classes: Vec<u16>,
    positions: usize,
    ncols: usize,
    patches: Vec<TensorPatch>,
    rows: Vec<TensorRow>,
}

impl<T: Float + Send + Sync> TensorEval<T> {
    /// `tensor`'s rows through `kernel`, the others from `open_mat`: its
    /// row `k` is the `k`-th row without a tensor form, in ascending order.
    /// `nnz` is the composed matrix's.
    ///
    /// # Errors
    /// Sizes over `u32` (as [`PaddedCsr`] refuses them).
    pub(crate) fn new(
        tensor: &TensorRows,
        open_mat: &CsrMat<f64>,
        nnz: u64,
        kernel: TensorKernel,
        par: Par,
    ) -> Result<Self> {
        Self::with_ordered_bytes(tensor, open_mat, nnz, kernel, ORDERED_BYTES, par)
    }

    /// [`Self::new`] keeping an ordered weight table of at most
    /// `ordered_bytes` (for [`TensorKernel::Rows`]).
    fn with_ordered_bytes(
        tensor: &TensorRows,
        open_mat: &CsrMat<f64>,
        nnz: u64,
        kernel: TensorKernel,
        ordered_bytes: usize,
        par: Par,
    ) -> Result<Self> {
        let open = tensor.open_rows(par)?;
        debug_assert_eq!(open.len(), open_mat.nrows(), "one matrix row per open row");
        let open_mat = PaddedCsr::from_csr(open_mat.as_ref())?;
        let form = match kernel {
            TensorKernel::Rows => {
                let table = tensor.products.iter().map(|w| w.map(cast::<T>)).collect::<Vec<[T; 16]>>();
                let (ordered, classes) = ordered_weights(&table, &tensor.patches, ordered_bytes);
                Form::Rows(ByRow {
                    table,
                    ordered,
                    classes,
                    positions: tensor.weights.len(),
                    ncols: tensor.ncols,
                    patches: tensor.patches.clone(),
                    rows: tensor.rows.clone(),
                })
            }
            TensorKernel::Separable => Form::Separable(Separable::new(tensor)?),
        };
        Ok(TensorEval { form, ncols: tensor.ncols, nrows: tensor.rows.len(), open, open_mat, nnz })
    }

    pub(crate) fn nrows(&self) -> usize {
        self.nrows
    }

    pub(crate) fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Bytes read per evaluation besides the data: the tensor form (rows,
    /// patches, weight tables) and the open rows' padded matrix.
    pub(crate) fn bytes(&self) -> u64 {
        let t = std::mem::size_of::<T>();
        let form = match &self.form {
            Form::Rows(b) => {
                (b.rows.len() * 8
                    + b.patches.len() * std::mem::size_of::<TensorPatch>()
                    + (b.table.len() + b.ordered.len()) * 16 * t
                    + b.classes.len() * 2) as u64
            }
            Form::Separable(s) => s.bytes(),
        };
        form + self.open_mat.bytes() as u64
    }
}

/// The evaluation proper: `'static` for the check that `T` is `f64`.
impl<T: Float + Send + Sync + 'static> TensorEval<T> {
    /// Values of `T` of the scratch [`Self::apply`] needs for `d`
    /// channels: the open rows' values, then the control points in lanes
    /// where the kernel reads them so.
    pub(crate) fn scratch_len(&self, d: usize) -> usize {
        if d == 0 || self.nrows == 0 {
            return 0;
        }
        let lanes = match &self.form {
            Form::Rows(_) if d < LANES => self.ncols * LANES,
            Form::Separable(_) if d != LANES => d.div_ceil(LANES) * self.ncols * LANES,
            _ => 0,
        };
        self.open.len() * d + lanes
    }

    /// `y = R x` for row-major `x` (`ncols × d`) and `y` (`nrows × d`),
    /// with `scratch` of at least [`Self::scratch_len`] values (whatever
    /// they hold: all are written before they are read).
    pub(crate) fn apply(&self, x: &[T], y: &mut [T], d: usize, scratch: &mut [T], par: Par) {
        assert!(
            x.len() == self.ncols * d && y.len() == self.nrows * d,
            "tensor eval: x has {} values, y {} (expected {} x {d} and {} x {d})",
            x.len(),
            y.len(),
            self.ncols,
            self.nrows
        );
        let need = self.scratch_len(d);
        assert!(scratch.len() >= need, "tensor eval: scratch has {} values, needs {need}", scratch.len());
        if d == 0 || self.nrows == 0 {
            return;
        }
        let (open_y, lanes) = scratch[..need].split_at_mut(self.open.len() * d);
        self.open_mat.apply_slices(x, open_y, d, par);
        match &self.form {
            Form::Rows(b) => self.apply_rows(b, x, y, d, open_y, lanes, par),
            Form::Separable(b) => {
                b.apply(x, y, d, lanes, par);
                for (&o, v) in self.open.iter().zip(open_y.chunks_exact(d)) {
                    y[o as usize * d..(o as usize + 1) * d].copy_from_slice(v);
                }
            }
        }
    }

    /// [`Self::apply`] through [`ByRow`], the open rows' values in
    /// `open_y`, `lanes` the scratch for the lane-padded control points.
    #[allow(clippy::too_many_arguments)]
    fn apply_rows(&self, b: &ByRow<T>, x: &[T], y: &mut [T], d: usize, open_y: &[T], lanes: &mut [T], par: Par) {
        // Up to four channels go through four lanes: the control points
        // padded to four values each (a copy of the small input), so that
        // every term is one multiply and one add of four lanes.
        let xs = if d < LANES {
            lane_groups(x, d, lanes);
            &*lanes
        } else {
            x
        };
        // Blocks of equally many rows (the open rows, already computed, are
        // only copied).
        let n = self.nrows;
        let nb = par.blocks(n * d * 16, 1 << 14).min(n);
        let run = |rows: Range<usize>, ys: &mut [T]| {
            let k = self.open.partition_point(|&o| (o as usize) < rows.start);
            match d {
                1 => b.block::<1>(rows, xs, ys, open_y, k),
                2 => b.block::<2>(rows, xs, ys, open_y, k),
                3 => b.block::<3>(rows, xs, ys, open_y, k),
                4 => b.block::<4>(rows, xs, ys, open_y, k),
                _ => b.block_wide(rows, x, ys, d, open_y, k),
            }
        };
        if nb <= 1 {
            run(0..n, y);
        } else {
            for_each_block(y, d, nb, &|k| k * n / nb, &run);
        }
    }
}

/// [`ByRow`]'s kernels.
impl<T: Float + Send + Sync + 'static> ByRow<T> {
    /// Rows `rows` for `D <= 4` channels from lane-padded data `x` (four
    /// values a control point); `k` is the index of the first open row at or
    /// after `rows.start`. Where the CPU has AVX, the same code is compiled
    /// for it, and `f64` rows are summed in 256-bit vectors: a multiply,
    /// then an add, as in the scalar code (never fused), so the bits do not
    /// change.
    fn block<const D: usize>(&self, rows: Range<usize>, x: &[T], y: &mut [T], open_y: &[T], k: usize) {
        debug_assert_eq!(x.len(), self.ncols * LANES);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above).
            unsafe { self.block_avx::<D>(rows, x, y, open_y, k) };
            return;
        }
        self.block_lanes::<D, false>(rows, x, y, open_y, k);
    }

    /// [`Self::block_lanes`] compiled for AVX.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn block_avx<const D: usize>(&self, rows: Range<usize>, x: &[T], y: &mut [T], open_y: &[T], k: usize) {
        self.block_lanes::<D, true>(rows, x, y, open_y, k);
    }

    /// The body of [`Self::block`] (`AVX`: called from [`Self::block_avx`]).
    /// Four tensor rows in a row are summed together, their sums
    /// interleaved (each sum still in its own order), so that the additions
    /// of one row do not wait on each other.
    #[inline(always)]
    fn block_lanes<const D: usize, const AVX: bool>(
        &self,
        rows: Range<usize>,
        x: &[T],
        y: &mut [T],
        open_y: &[T],
        mut k: usize,
    ) {
        let f64_lanes = AVX && !self.classes.is_empty() && TypeId::of::<T>() == TypeId::of::<f64>();
        let mut i = rows.start;
        let mut out = y.chunks_exact_mut(D);
        while i < rows.end {
            if i + 4 <= rows.end {
                let q: [TensorRow; 4] = std::array::from_fn(|j| self.rows[i + j]);
                if q.iter().all(|r| r.patch != OPEN) {
                    let acc = if f64_lanes {
                        #[cfg(target_arch = "x86_64")]
                        {
                            // SAFETY: `AVX` is only set under `block_avx`,
                            // which runs where the CPU has AVX; `T` is
                            // `f64`.
                            unsafe { self.rows4_f64_avx(q, x) }
                        }
                        #[cfg(not(target_arch = "x86_64"))]
                        unreachable!("AVX kernels exist on x86_64 only")
                    } else if self.classes.is_empty() {
                        self.rows4::<false>(q, x)
                    } else {
                        self.rows4::<true>(q, x)
                    };
                    for a in &acc {
                        if let Some(yi) = out.next() {
                            yi.copy_from_slice(&a[..D]);
                        }
                    }
                    i += 4;
                    continue;
                }
            }
            let r = self.rows[i];
            let Some(yi) = out.next() else { unreachable!("one output row per row") };
            if r.patch == OPEN {
                yi.copy_from_slice(&open_y[k * D..(k + 1) * D]);
                k += 1;
            } else {
                yi.copy_from_slice(&self.row::<LANES>(r, x, LANES, 0)[..D]);
            }
            i += 1;
        }
    }

    /// Four tensor rows at once, all four lanes of lane-padded data; the
    /// weights from the ordered table if `ORDERED`, else through the grid.
    #[inline(always)]
    fn rows4<const ORDERED: bool>(&self, q: [TensorRow; 4], x: &[T]) -> [[T; LANES]; 4] {
        let p: [&TensorPatch; 4] = std::array::from_fn(|j| &self.patches[q[j].patch as usize]);
        let w: [&[T; 16]; 4] = std::array::from_fn(|j| self.weights_of::<ORDERED>(q[j]));
        let mut acc = [[T::zero(); LANES]; 4];
        for t in 0..16 {
            for j in 0..4 {
                let base = p[j].ids[t] as usize * LANES;
                // SAFETY: `ids < ncols` (checked by `TensorRows::new`) and
                // `x.len() == ncols * LANES` (how `apply` pads the data).
                let xj = unsafe { x.get_unchecked(base..base + LANES) };
                let wg = if ORDERED { w[j][t] } else { w[j][usize::from(p[j].grid[t] & 15)] };
                for c in 0..LANES {
                    acc[j][c] = acc[j][c] + wg * xj[c];
                }
            }
        }
        acc
    }

    /// [`Self::rows4`] with the ordered table for `T = f64`, one 256-bit
    /// vector per row: each term a multiply and then an add, as the scalar
    /// code does, so the same bits.
    ///
    /// # Safety
    /// The CPU must support AVX, `T` must be `f64`, and the ordered table
    /// must exist.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    #[inline]
    unsafe fn rows4_f64_avx(&self, q: [TensorRow; 4], x: &[T]) -> [[T; LANES]; 4] {
        use std::arch::x86_64::{_mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_storeu_pd};
        debug_assert!(TypeId::of::<T>() == TypeId::of::<f64>() && !self.classes.is_empty());
        let p: [&TensorPatch; 4] = std::array::from_fn(|j| &self.patches[q[j].patch as usize]);
        // SAFETY: `T` is `f64` (the caller's contract), so these are the
        // same arrays.
        let w: [&[f64; 16]; 4] =
            std::array::from_fn(|j| unsafe { &*std::ptr::from_ref(self.weights_of::<true>(q[j])).cast::<[f64; 16]>() });
        let xp = x.as_ptr().cast::<f64>();
        let zero = [0f64; LANES];
        // SAFETY: AVX is available (the caller's contract); every load reads
        // the four values of a control point `id < ncols` (checked by
        // `TensorRows::new`) of `x`, which holds `ncols * LANES` values (how
        // `apply` pads the data).
        unsafe {
            let mut acc = [_mm256_loadu_pd(zero.as_ptr()); 4];
            for t in 0..16 {
                for (a, (pj, wj)) in acc.iter_mut().zip(p.iter().zip(&w)) {
                    let xj = _mm256_loadu_pd(xp.add(pj.ids[t] as usize * LANES));
                    *a = _mm256_add_pd(*a, _mm256_mul_pd(_mm256_broadcast_sd(&wj[t]), xj));
                }
            }
            let mut out = [[0f64; LANES]; 4];
            for j in 0..4 {
                _mm256_storeu_pd(out[j].as_mut_ptr(), acc[j]);
            }
            // `T` is `f64`.
            std::mem::transmute_copy(&out)
        }
    }

    /// The weights of row `r`: in column order if `ORDERED`, else by grid
    /// index.
    #[inline(always)]
    fn weights_of<const ORDERED: bool>(&self, r: TensorRow) -> &[T; 16] {
        let xy = usize::from(r.x) * self.positions + usize::from(r.y);
        if ORDERED {
            let k = usize::from(self.classes[r.patch as usize]);
            &self.ordered[k * self.positions * self.positions + xy]
        } else {
            &self.table[xy]
        }
    }

    /// Rows `rows` for `d > 4` channels, four at a time.
    fn block_wide(&self, rows: Range<usize>, x: &[T], y: &mut [T], d: usize, open_y: &[T], mut k: usize) {
        for (i, yi) in rows.zip(y.chunks_exact_mut(d)) {
            let r = self.rows[i];
            if r.patch == OPEN {
                yi.copy_from_slice(&open_y[k * d..(k + 1) * d]);
                k += 1;
                continue;
            }
            let mut c = 0;
            while c + 4 <= d {
                yi[c..c + 4].copy_from_slice(&self.row::<4>(r, x, d, c));
                c += 4;
            }
            for (c, v) in yi.iter_mut().enumerate().skip(c) {
                *v = self.row::<1>(r, x, d, c)[0];
            }
        }
    }

    /// Channels `offset..offset + D` of tensor row `r`, the sixteen terms in
    /// ascending column order.
    #[inline(always)]
    fn row<const D: usize>(&self, r: TensorRow, x: &[T], stride: usize, offset: usize) -> [T; D] {
        let p = &self.patches[r.patch as usize];
        let w = &self.table[usize::from(r.x) * self.positions + usize::from(r.y)];
        let mut acc = [T::zero(); D];
        for (&j, &g) in p.ids.iter().zip(&p.grid) {
            let base = j as usize * stride + offset;
            // SAFETY: `j < ncols` (checked by `TensorRows::new`), `x.len()
            // == ncols * stride` (checked in `apply`, or made so by the
            // padding), `offset + D <= stride` (how the callers cut the
            // channels).
            let xj = unsafe { x.get_unchecked(base..base + D) };
            let wg = w[usize::from(g & 15)];
            for c in 0..D {
                acc[c] = acc[c] + wg * xj[c];
            }
        }
        acc
    }
}

/// The ordered weight table and the patches' classes (see
/// [`TensorEval`]'s fields), or two empty vectors where the table would
/// exceed `max_bytes`. Classes are numbered in order of first use.
fn ordered_weights<T: Float>(table: &[[T; 16]], patches: &[TensorPatch], max_bytes: usize) -> (Vec<[T; 16]>, Vec<u16>) {
    let per_class = std::mem::size_of_val(table);
    let mut grids: Vec<[u8; 16]> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut classes = Vec::with_capacity(patches.len());
    for p in patches {
        let next = grids.len();
        let k = *index.entry(p.grid).or_insert(next);
        if k == next {
            if (next + 1) * per_class > max_bytes {
                return (Vec::new(), Vec::new());
            }
            grids.push(p.grid);
        }
        classes.push(k as u16);
    }
    let ordered = grids
        .iter()
        .flat_map(|grid| table.iter().map(move |w| std::array::from_fn(|t| w[usize::from(grid[t] & 15)])))
        .collect();
    (ordered, classes)
}

/// Largest ordered weight table kept (it should stay in cache).
const ORDERED_BYTES: usize = 1 << 20;

/// Lanes of the evaluation of up to four channels.
const LANES: usize = 4;

/// `x` (rows of `d` values) in groups of [`LANES`] channels, written to
/// the first `d.div_ceil(LANES) * rows * LANES` values of `out` (whatever
/// they held): group `g` holds channels `4 g .. 4 g + 4` of every row,
/// padded with zeros (for `d < LANES`, each row padded to four values).
fn lane_groups<T: Float>(x: &[T], d: usize, out: &mut [T]) {
    let n = x.len() / d;
    if n == 0 {
        return;
    }
    let groups = d.div_ceil(LANES);
    for (g, og) in out[..groups * n * LANES].chunks_exact_mut(n * LANES).enumerate() {
        let c0 = g * LANES;
        let width = (d - c0).min(LANES);
        for (xi, oi) in x.chunks_exact(d).zip(og.chunks_exact_mut(LANES)) {
            oi[..width].copy_from_slice(&xi[c0..c0 + width]);
            oi[width..].fill(T::zero());
        }
    }
}

/// `v` in `T` (rounded to nearest).
fn cast<T: Float>(v: f64) -> T {
    T::from(v).unwrap_or_else(T::nan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch() -> TensorPatch {
        TensorPatch { ids: std::array::from_fn(|k| 2 * k as u32), grid: std::array::from_fn(|k| (15 - k) as u8) }
    }

    #[test]
    fn rows_are_the_products_of_the_one_dimensional_weights() {
        let w = vec![[0.25, 0.5, 0.25, 0.0], [0.0, 0.5, 0.5, 0.0]];
        let rows = vec![TensorRow { patch: 0, x: 0, y: 1 }, TensorRow::OPEN];
        let t = TensorRows::new(32, w, vec![patch()], rows).unwrap();
        assert_eq!((t.nrows(), t.ncols(), t.closed_rows()), (2, 32, 1));
        assert_eq!(t.row_len(1), None);
        // Nonzero where r ∈ {0, 1, 2} and s ∈ {1, 2}: 6 entries.
        assert_eq!(t.row_len(0), Some(6));
        let (mut idx, mut vals) = ([0u32; 6], [0f64; 6]);
        t.write_row(0, &mut idx, &mut vals);
        // Column 2k has grid index 15 - k = 4r + s.
        let want: Vec<(u32, f64)> = (0..16u32)
            .filter_map(|k| {
                let g = 15 - k as usize;
                let v = [0.25, 0.5, 0.25, 0.0][g / 4] * [0.0, 0.5, 0.5, 0.0][g % 4];
                (v != 0.0).then_some((2 * k, v))
            })
            .collect();
        assert_eq!(idx.iter().copied().zip(vals).collect::<Vec<_>>(), want);
    }

    /// Random patches (ascending columns, grids from a few permutations)
    /// and rows over them, one in eight without a tensor form.
    fn random_rows(ncols: u32, npatches: usize, nrows: usize, seed: u64) -> (TensorRows, CsrMat<f64>) {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let weights =
            vec![[0.125, 0.75, 0.125, 0.0], [0.0, 0.5, 0.5, 0.0], [1.0 / 48.0, 23.0 / 48.0, 23.0 / 48.0, 1.0 / 48.0]];
        let patches: Vec<TensorPatch> = (0..npatches)
            .map(|_| {
                let start = next() % (ncols - 40);
                let mut ids = [0u32; 16];
                let mut c = start;
                for id in &mut ids {
                    c += 1 + next() % 2;
                    *id = c;
                }
                // One of eight grids: rotations and reflections of 4 × 4.
                let sym = next() % 8;
                let grid = std::array::from_fn(|k| {
                    let (r, s) = ((k / 4) as u32, (k % 4) as u32);
                    let (r, s) = if sym & 1 == 1 { (s, r) } else { (r, s) };
                    let r = if sym & 2 == 2 { 3 - r } else { r };
                    let s = if sym & 4 == 4 { 3 - s } else { s };
                    (4 * r + s) as u8
                });
                TensorPatch { ids, grid }
            })
            .collect();
        let rows: Vec<TensorRow> = (0..nrows)
            .map(|_| {
                if next() % 8 == 0 {
                    TensorRow::OPEN
                } else {
                    TensorRow { patch: next() % npatches as u32, x: (next() % 3) as u16, y: (next() % 3) as u16 }
                }
            })
            .collect();
        let t = TensorRows::new(ncols as usize, weights, patches, rows).unwrap();
        // The open rows: two entries each.
        let open = t.open_rows(Par::Seq).unwrap();
        let ptr = (0..=open.len() as u32).map(|k| 2 * k).collect();
        let idx: Vec<u32> = open.iter().flat_map(|&o| [o % (ncols - 7), o % (ncols - 7) + 7]).collect();
        let vals = (0..idx.len()).map(|k| 0.25 + k as f64 * 1e-3).collect();
        let m = CsrMat::try_new(open.len(), ncols as usize, ptr, idx, vals).unwrap();
        (t, m)
    }

    #[test]
    fn rows_made_by_a_function_are_the_rows_given() {
        let (t, _) = random_rows(300, 40, 3 * ROW_CHUNK + 77, 11);
        let (w, p) = (t.weights.clone(), t.patches.clone());
        for par in [Par::Seq, Par::Rayon] {
            let made = TensorRows::from_fn(300, w.clone(), p.clone(), t.nrows(), par, |i| t.rows[i]).unwrap();
            assert_eq!(made, t);
            // The first row out of range is named, as by `new`.
            for bad in [5, ROW_CHUNK + 3, 3 * ROW_CHUNK + 76] {
                let row =
                    |i: usize| if i == bad || i == bad + 1 { TensorRow { patch: 40, x: 0, y: 0 } } else { t.rows[i] };
                let e = TensorRows::from_fn(300, w.clone(), p.clone(), t.nrows(), par, row).unwrap_err();
                let rows: Vec<TensorRow> = (0..t.nrows()).map(row).collect();
                let e_new = TensorRows::new(300, w.clone(), p.clone(), rows).unwrap_err();
                assert!(matches!(e, SchemeError::InvalidClosedFormRow { row } if row == bad), "{e}");
                assert!(matches!(e_new, SchemeError::InvalidClosedFormRow { row } if row == bad), "{e_new}");
            }
        }
    }

    #[test]
    fn rows_written_in_a_block_are_the_rows() {
        let (t, _) = random_rows(300, 40, 2000, 5);
        let closed: Vec<usize> = (0..t.nrows()).filter(|&i| t.row_len(i).is_some()).collect();
        let total: usize = closed.iter().map(|&i| t.row_len(i).unwrap_or(0)).sum();
        // All rows of a block one after another: the full-width writes past
        // a row's end are overwritten by the next, the last rows are exact.
        let (mut idx, mut vals) = (vec![u32::MAX; total], vec![f64::NAN; total]);
        let mut at = 0;
        for &i in &closed {
            t.write_row_at(i, &mut idx, &mut vals, at);
            at += t.row_len(i).unwrap_or(0);
        }
        let mut at = 0;
        for &i in &closed {
            let n = t.row_len(i).unwrap_or(0);
            let (mut ri, mut rv) = (vec![0; n], vec![0.0; n]);
            t.write_row(i, &mut ri, &mut rv);
            assert_eq!((&idx[at..at + n], &vals[at..at + n]), (&ri[..], &rv[..]), "row {i}");
            at += n;
        }
    }

    #[test]
    fn row_lengths_count_the_products_that_are_not_zero() {
        // 1e-200 · 1e-200 underflows: those products are zero, and the
        // rows are as long as what is written.
        let w = vec![[1e-200, 0.5, 0.5, 0.0], [1e-200, 1.0, 0.0, 0.0]];
        let rows = vec![TensorRow { patch: 0, x: 0, y: 1 }, TensorRow { patch: 0, x: 1, y: 1 }];
        let t = TensorRows::new(32, w, vec![patch()], rows).unwrap();
        // (r, s) with both weights nonzero: 3 × 2 and 2 × 2, less (0, 0).
        assert_eq!(t.row_len(0), Some(5));
        assert_eq!(t.row_len(1), Some(3));
        assert_eq!(t.nnz(), 8);
        let (mut idx, mut vals) = ([0u32; 5], [0f64; 5]);
        t.write_row(0, &mut idx, &mut vals);
        assert!(vals.iter().all(|&v| v != 0.0) && idx.windows(2).all(|w| w[0] < w[1]));
    }

    /// Each row as the composed matrix sums it: its nonzero terms in
    /// ascending column order from `+0`, the open rows from their matrix.
    fn reference<T: Float>(t: &TensorRows, open: &CsrMat<f64>, x: &[T], d: usize) -> Vec<T> {
        let mut y = Vec::with_capacity(t.nrows() * d);
        let mut k = 0;
        for i in 0..t.nrows() {
            let len = t.row_len(i);
            let (idx, vals): (Vec<u32>, Vec<f64>) = match len {
                Some(n) => {
                    let (mut idx, mut vals) = (vec![0; n], vec![0.0; n]);
                    t.write_row(i, &mut idx, &mut vals);
                    (idx, vals)
                }
                None => {
                    let r = open.ptr()[k] as usize..open.ptr()[k + 1] as usize;
                    k += 1;
                    (open.indices()[r.clone()].to_vec(), open.values()[r].to_vec())
                }
            };
            for c in 0..d {
                let mut acc = T::zero();
                for (&j, &w) in idx.iter().zip(&vals) {
                    acc = acc + cast::<T>(w) * x[j as usize * d + c];
                }
                y.push(acc);
            }
        }
        y
    }

    fn same_bits<T: Float>(a: &[T], b: &[T]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.integer_decode() == q.integer_decode())
    }

    /// Every path of the evaluator (ordered table or grid lookups, AVX or
    /// not, the wide path) gives the composed matrix's bits.
    fn every_path_is_exact<T: Float + Send + Sync + 'static>() {
        let (t, open) = random_rows(300, 40, 1001, 7);
        for d in 1..=6 {
            let x: Vec<T> = (0..300 * d).map(|i| cast::<T>((i as f64 * 0.731).sin() * 10.0)).collect();
            let want = reference(&t, &open, &x, d);
            for bytes in [ORDERED_BYTES, 0] {
                let e = TensorEval::<T>::with_ordered_bytes(&t, &open, 0, TensorKernel::Rows, bytes, Par::Seq).unwrap();
                let Form::Rows(b) = &e.form else { panic!("the row kernel was asked for") };
                assert_eq!(b.classes.is_empty(), bytes == 0, "the ordered table is kept when it fits");
                for par in [Par::Seq, Par::Rayon] {
                    let mut y = vec![T::zero(); t.nrows() * d];
                    // Scratch holding garbage: every value is written first.
                    let mut scratch = vec![T::nan(); e.scratch_len(d)];
                    e.apply(&x, &mut y, d, &mut scratch, par);
                    assert!(same_bits(&y, &want), "{d} channels, {bytes} bytes of table, {par:?}");
                }
                if d <= LANES {
                    // The portable body, whatever the CPU.
                    let mut open_y = vec![T::zero(); e.open.len() * d];
                    e.open_mat.apply_slices(&x, &mut open_y, d, Par::Seq);
                    let xs = if d < LANES {
                        let mut xs = vec![T::nan(); t.ncols() * LANES];
                        lane_groups(&x, d, &mut xs);
                        xs
                    } else {
                        x.clone()
                    };
                    let mut y = vec![T::zero(); t.nrows() * d];
                    match d {
                        1 => b.block_lanes::<1, false>(0..t.nrows(), &xs, &mut y, &open_y, 0),
                        2 => b.block_lanes::<2, false>(0..t.nrows(), &xs, &mut y, &open_y, 0),
                        3 => b.block_lanes::<3, false>(0..t.nrows(), &xs, &mut y, &open_y, 0),
                        _ => b.block_lanes::<4, false>(0..t.nrows(), &xs, &mut y, &open_y, 0),
                    }
                    assert!(same_bits(&y, &want), "{d} channels, {bytes} bytes of table, portable body");
                }
            }
        }
    }

    #[test]
    fn every_path_gives_the_composed_bits_f64() {
        every_path_is_exact::<f64>();
    }

    #[test]
    fn every_path_gives_the_composed_bits_f32() {
        every_path_is_exact::<f32>();
    }

    /// The separable kernel: within rounding of the composed matrix (open
    /// rows exactly its), the same bits for every thread count and with or
    /// without AVX, on patches with many rows (factors per patch) and with
    /// one or none (per row).
    fn separable_is_within_rounding<T: Float + Send + Sync + 'static>(tol: f64) {
        for npatches in [40, 1000] {
            let (t, open) = random_rows(300, npatches, 1001, 11);
            let open_rows = t.open_rows(Par::Seq).unwrap();
            for d in 1..=6 {
                let x: Vec<T> = (0..300 * d).map(|i| cast::<T>((i as f64 * 0.731).sin() * 10.0)).collect();
                let want = reference(&t, &open, &x, d);
                let e = TensorEval::<T>::new(&t, &open, 0, TensorKernel::Separable, Par::Seq).unwrap();
                let Form::Separable(s) = &e.form else { panic!("the separable kernel was asked for") };
                let mut y = vec![T::nan(); t.nrows() * d];
                let mut scratch = vec![T::nan(); e.scratch_len(d)];
                e.apply(&x, &mut y, d, &mut scratch, Par::Seq);
                for (i, (a, w)) in y.chunks_exact(d).zip(want.chunks_exact(d)).enumerate() {
                    let exact = open_rows.binary_search(&(i as u32)).is_ok();
                    for (a, w) in a.iter().zip(w) {
                        let (a, w) = (a.to_f64().unwrap(), w.to_f64().unwrap());
                        assert!(
                            if exact { a.to_bits() == w.to_bits() } else { (a - w).abs() <= tol * 10.0 },
                            "{npatches} patches, {d} channels, row {i}: {a} against {w}"
                        );
                    }
                }
                for (par, portable) in [(Par::Rayon, false), (Par::Seq, true), (Par::Rayon, true)] {
                    let mut z = y.clone();
                    s.apply_with(&x, &mut z, d, &mut scratch[e.open.len() * d..], par, portable);
                    assert!(
                        same_bits(&y, &z),
                        "{npatches} patches, {d} channels, {par:?}, portable {portable}: other bits"
                    );
                }
            }
        }
    }

    #[test]
    fn separable_kernel_is_within_rounding_f64() {
        separable_is_within_rounding::<f64>(1e-14);
    }

    #[test]
    fn separable_kernel_is_within_rounding_f32() {
        separable_is_within_rounding::<f32>(1e-5);
    }

    #[test]
    fn bad_patches_and_rows_are_refused_by_name() {
        let w = vec![[1.0, 0.0, 0.0, 0.0]];
        let err = |p: TensorPatch, r: TensorRow| match TensorRows::new(32, w.clone(), vec![patch(), p], vec![r]) {
            Err(e) => e,
            Ok(_) => panic!("expected an error"),
        };
        let bad_patch = |e: SchemeError| matches!(e, SchemeError::InvalidTensorPatch { patch: 1, ncols: 32 });
        let bad_row = |e: SchemeError| matches!(e, SchemeError::InvalidClosedFormRow { row: 0 });
        let ok_row = TensorRow { patch: 0, x: 0, y: 0 };
        let mut p = patch();
        p.ids.swap(3, 4);
        assert!(bad_patch(err(p, ok_row)), "columns out of order");
        let mut p = patch();
        p.ids[15] = 32;
        assert!(bad_patch(err(p, ok_row)), "column out of range");
        let mut p = patch();
        p.grid[0] = p.grid[1];
        assert!(bad_patch(err(p, ok_row)), "grid not a permutation");
        let mut p = patch();
        p.grid[0] = 16;
        assert!(bad_patch(err(p, ok_row)), "grid index out of range");
        assert!(bad_row(err(patch(), TensorRow { patch: 2, x: 0, y: 0 })), "patch out of range");
        assert!(bad_row(err(patch(), TensorRow { patch: 0, x: 1, y: 0 })), "position out of range");
    }
}
