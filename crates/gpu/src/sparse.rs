//! Sparse matrices on the device, and the CSR ↔ CSC counting sort
//! (`shaders/transpose.wgsl`).
//!
//! A [`GpuSparse`] holds the three arrays of `subla_algebra`'s compressed
//! storage, with the same layout and invariants (see
//! `subla_algebra::storage`), values as `f32`:
//!
//! ```text
//!         c0  c1  c2             ptr  = [0,    2, 3,    5, 6]
//!   r0 [  1   .   4 ]            idx  = [0, 2, 1, 0, 2, 2]
//!   r1 [  .   3   . ]   CSR →    vals = [1, 4, 3, 2, 5, 6]
//!   r2 [  2   .   5 ]
//!   r3 [  .   .   6 ]
//! ```
//!
//! Matrices reach the device only through [`GpuSparse::upload`] (from a
//! validated `SparseRef`) or a kernel of this crate, so the invariants hold
//! on the device too.
//!
//! # Relayout (CSR → CSC, CSC → CSR)
//! [`relayout`] is a counting sort: minor counts with `atomicAdd` (a sum, so
//! order-independent), an exclusive [scan](crate::scan) into the new pointer
//! array, placement with atomic cursors, then one invocation per new slice
//! sorts it by major index (insertion sort for short slices, heapsort for
//! long ones). Entries are unique, so each sorted slice is unique: the
//! result equals `CsrRef::to_csc` / `CscRef::to_csr` of `subla_algebra`
//! exactly, indices and values, on every run.

use std::fmt;
use std::marker::PhantomData;

use subla_algebra::storage::{Csc, Csr, Layout, SparseMat, SparseRef};

use crate::buffer::GpuBuffer;
use crate::context::GpuContext;
use crate::error::Result;
use crate::scan::{encode_scan, status_buffer};
use crate::shaders;

/// A sparse matrix on the device in layout `L` (`u32` indices, `f32`
/// values).
pub struct GpuSparse<L: Layout> {
    nrows: u32,
    ncols: u32,
    ptr: GpuBuffer<u32>,
    idx: GpuBuffer<u32>,
    vals: GpuBuffer<f32>,
    _layout: PhantomData<L>,
}

/// A CSR matrix on the device.
pub type GpuCsr = GpuSparse<Csr>;
/// A CSC matrix on the device.
pub type GpuCsc = GpuSparse<Csc>;

impl<L: Layout> fmt::Debug for GpuSparse<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuSparse")
            .field("layout", &L::NAME)
            .field("nrows", &self.nrows)
            .field("ncols", &self.ncols)
            .field("nnz", &self.idx.len())
            .finish()
    }
}

impl<L: Layout> GpuSparse<L> {
    /// Uploads an `f32` matrix.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`](crate::GpuError::TooLarge) over
    /// `max_buffer_size`; wgpu errors.
    pub fn upload(ctx: &GpuContext, a: SparseRef<'_, f32, L>) -> Result<Self> {
        Ok(Self {
            nrows: a.nrows() as u32,
            ncols: a.ncols() as u32,
            ptr: GpuBuffer::upload(ctx, a.ptr())?,
            idx: GpuBuffer::upload(ctx, a.indices())?,
            vals: GpuBuffer::upload(ctx, a.values())?,
            _layout: PhantomData,
        })
    }

    /// Uploads an `f64` matrix, rounding its values to the nearest `f32`.
    ///
    /// # Errors
    /// As [`GpuSparse::upload`].
    pub fn upload_f64(ctx: &GpuContext, a: SparseRef<'_, f64, L>) -> Result<Self> {
        let vals: Vec<f32> = a.values().iter().map(|&v| v as f32).collect();
        Ok(Self {
            nrows: a.nrows() as u32,
            ncols: a.ncols() as u32,
            ptr: GpuBuffer::upload(ctx, a.ptr())?,
            idx: GpuBuffer::upload(ctx, a.indices())?,
            vals: GpuBuffer::upload(ctx, &vals)?,
            _layout: PhantomData,
        })
    }

    /// Reads the matrix back (waits for the device).
    ///
    /// # Errors
    /// wgpu errors; [`GpuError::Algebra`](crate::GpuError::Algebra) if the
    /// arrays read back are not a valid matrix (a device fault).
    pub fn download(&self, ctx: &GpuContext) -> Result<SparseMat<f32, L>> {
        Ok(SparseMat::try_new(
            self.nrows as usize,
            self.ncols as usize,
            self.ptr.download(ctx)?,
            self.idx.download(ctx)?,
            self.vals.download(ctx)?,
        )?)
    }

    /// Replaces the values (same pattern), for per-frame updates.
    ///
    /// # Panics
    /// If `values.len() != self.nnz()`.
    ///
    /// # Errors
    /// wgpu errors.
    #[track_caller]
    pub fn write_values(&mut self, ctx: &GpuContext, values: &[f32]) -> Result<()> {
        self.vals.write(ctx, values)
    }

    /// The transpose, free: the arrays of `A` in layout `L` are those of
    /// `Aᵀ` in the other layout.
    pub fn transpose(self) -> GpuSparse<L::Transposed> {
        GpuSparse {
            nrows: self.ncols,
            ncols: self.nrows,
            ptr: self.ptr,
            idx: self.idx,
            vals: self.vals,
            _layout: PhantomData,
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows as usize
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols as usize
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.idx.len()
    }
    /// The pointer array (major dimension + 1 entries).
    pub fn ptr(&self) -> &GpuBuffer<u32> {
        &self.ptr
    }
    /// The minor indices (columns for CSR, rows for CSC).
    pub fn indices(&self) -> &GpuBuffer<u32> {
        &self.idx
    }
    /// The values.
    pub fn values(&self) -> &GpuBuffer<f32> {
        &self.vals
    }
    fn major_minor(&self) -> (u32, u32) {
        L::major_minor(self.nrows, self.ncols)
    }
}

/// The same matrix in the other layout, by a deterministic counting sort on
/// the device (no readback: the work is submitted, not waited for).
///
/// # Errors
/// [`GpuError::TooLarge`](crate::GpuError::TooLarge) if an array exceeds
/// one storage binding (the placement scatters across the whole output, so
/// it is not split); wgpu errors.
///
/// # Panics
/// If `a` belongs to another context.
#[track_caller]
pub fn relayout<L: Layout>(ctx: &GpuContext, a: &GpuSparse<L>) -> Result<GpuSparse<L::Transposed>> {
    a.ptr.check_context(ctx);
    let (majors, minors) = a.major_minor();
    let nnz = a.nnz() as u64;
    let src = &|| shaders::TRANSPOSE.into();
    let count = ctx.pipeline("transpose", "count_minors", "", src)?;
    let place = ctx.pipeline("transpose", "place", "", src)?;
    let sort = ctx.pipeline("transpose", "sort_slices", "", src)?;
    // Check every binding before allocating anything.
    for (what, elems) in [
        ("relayout pointer array", u64::from(majors) + 1),
        ("relayout index and value arrays", nnz),
        ("relayout output pointer array", u64::from(minors) + 1),
    ] {
        ctx.check_binding(what, elems * 4)?;
    }

    let out_ptr = GpuBuffer::<u32>::zeroed(ctx, minors as usize + 1)?;
    let out_idx = GpuBuffer::<u32>::zeroed(ctx, a.nnz())?;
    let out_vals = GpuBuffer::<f32>::zeroed(ctx, a.nnz())?;
    let cursor = GpuBuffer::<u32>::zeroed(ctx, (minors as usize).max(1))?;
    ctx.scoped("relayout", || {
        let ptr_b = a.ptr.binding(ctx, "relayout pointer array")?;
        let idx_b = a.idx.binding(ctx, "relayout index array")?;
        let vals_b = a.vals.binding(ctx, "relayout value array")?;
        let out_ptr_b = out_ptr.binding(ctx, "relayout output pointer array")?;
        let out_idx_b = out_idx.binding(ctx, "relayout output index array")?;
        let out_vals_b = out_vals.binding(ctx, "relayout output value array")?;
        let cursor_b = cursor.binding(ctx, "relayout cursors")?;
        let params = ctx.params([majors, minors, nnz as u32, 0]);
        let mut encoder = ctx.encoder();
        // Counts land in out_ptr[0..minors]; out_ptr[minors] stays 0, so the
        // exclusive scan of all minors + 1 entries is the pointer array.
        ctx.dispatch(
            &mut encoder,
            &count,
            &[(0, params.as_entire_binding()), (2, idx_b.clone()), (4, out_ptr_b.clone())],
            ctx.grid("relayout dispatch", nnz.div_ceil(256))?,
        );
        let status = status_buffer(ctx)?;
        encode_scan(ctx, &mut encoder, out_ptr.as_wgpu(), u64::from(minors) + 1, &status)?;
        if minors > 0 && nnz > 0 {
            encoder.copy_buffer_to_buffer(out_ptr.as_wgpu(), 0, cursor.as_wgpu(), 0, u64::from(minors) * 4);
            ctx.dispatch(
                &mut encoder,
                &place,
                &[
                    (0, params.as_entire_binding()),
                    (1, ptr_b),
                    (2, idx_b),
                    (3, vals_b),
                    (4, cursor_b),
                    (6, out_idx_b.clone()),
                    (7, out_vals_b.clone()),
                ],
                ctx.grid("relayout dispatch", u64::from(majors).div_ceil(256))?,
            );
            ctx.dispatch(
                &mut encoder,
                &sort,
                &[(0, params.as_entire_binding()), (5, out_ptr_b), (6, out_idx_b), (7, out_vals_b)],
                ctx.grid("relayout dispatch", u64::from(minors).div_ceil(256))?,
            );
        }
        ctx.submit(encoder);
        Ok(())
    })?;
    let (nrows, ncols) = (a.nrows, a.ncols);
    Ok(GpuSparse { nrows, ncols, ptr: out_ptr, idx: out_idx, vals: out_vals, _layout: PhantomData })
}

/// CSR → CSC on the device ([`relayout`]).
///
/// # Errors
/// As [`relayout`].
pub fn csr_to_csc(ctx: &GpuContext, a: &GpuCsr) -> Result<GpuCsc> {
    relayout(ctx, a)
}

/// CSC → CSR on the device ([`relayout`]).
///
/// # Errors
/// As [`relayout`].
pub fn csc_to_csr(ctx: &GpuContext, a: &GpuCsc) -> Result<GpuCsr> {
    relayout(ctx, a)
}
