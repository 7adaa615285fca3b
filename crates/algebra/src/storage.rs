//! Compressed sparse storage shared by the CSC and CSR formats.
//!
//! A compressed matrix stores its nonzeros slice by slice along the *major*
//! dimension (columns for CSC, rows for CSR). Three arrays describe it:
//!
//! * `ptr` (length `major + 1`): slice `m` occupies positions
//!   `ptr[m]..ptr[m + 1]` of the next two arrays;
//! * `idx` (length `nnz`): the *minor* index (row for CSC, column for CSR) of
//!   each stored entry;
//! * `values` (length `nnz`): the stored values.
//!
//! The format-specific modules [`crate::csc`] and [`crate::csr`] draw the
//! layout for a concrete example.
//!
//! # Invariants
//!
//! Every owned matrix, view and pattern upholds, and every algorithm of this
//! crate relies on:
//!
//! * `nrows`, `ncols` and `nnz` fit in `u32`;
//! * `ptr.len() == major + 1`, `ptr[0] == 0`, `ptr` is non-decreasing and
//!   `ptr[major] == idx.len()` (`== values.len()`);
//! * within each major slice the minor indices are strictly increasing (sorted,
//!   no duplicates) and smaller than the minor dimension.
//!
//! The validating constructors (`try_new`) check all of these and return an
//! [`AlgebraError`] naming the first violation. The `new_unchecked`
//! constructors skip the checks; they are `unsafe` because the kernels index
//! without bounds checks on the strength of these invariants.

use std::fmt;
use std::marker::PhantomData;

use crate::error::{AlgebraError, Result, to_u32};

mod sealed {
    pub trait Sealed {}
}

/// Which dimension is compressed. Implemented by [`Csc`] and [`Csr`] only.
pub trait Layout:
    sealed::Sealed + Copy + Clone + Default + fmt::Debug + PartialEq + Eq + Send + Sync + 'static
{
    /// The other layout: a CSC matrix *is* the CSR storage of its transpose.
    type Transposed: Layout<Transposed = Self>;
    /// `"CSC"` or `"CSR"`.
    const NAME: &'static str;
    /// What a major slice is called: `"column"` or `"row"`.
    const MAJOR: &'static str;
    /// True for CSC.
    const COLUMN_MAJOR: bool;

    /// `(major, minor)` dimensions of an `nrows x ncols` matrix.
    #[inline]
    fn major_minor(nrows: u32, ncols: u32) -> (u32, u32) {
        if Self::COLUMN_MAJOR { (ncols, nrows) } else { (nrows, ncols) }
    }

    /// `(row, col)` of the entry at `(major, minor)`.
    #[inline]
    fn row_col(major: u32, minor: u32) -> (u32, u32) {
        if Self::COLUMN_MAJOR { (minor, major) } else { (major, minor) }
    }
}

/// Compressed sparse column layout marker.
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq, Hash)]
pub struct Csc;

/// Compressed sparse row layout marker.
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq, Hash)]
pub struct Csr;

impl sealed::Sealed for Csc {}
impl sealed::Sealed for Csr {}

impl Layout for Csc {
    type Transposed = Csr;
    const NAME: &'static str = "CSC";
    const MAJOR: &'static str = "column";
    const COLUMN_MAJOR: bool = true;
}

impl Layout for Csr {
    type Transposed = Csc;
    const NAME: &'static str = "CSR";
    const MAJOR: &'static str = "row";
    const COLUMN_MAJOR: bool = false;
}

/// Checks the [invariants](self#invariants) of a pattern.
pub(crate) fn validate<L: Layout>(nrows: usize, ncols: usize, ptr: &[u32], idx: &[u32]) -> Result<()> {
    let nrows = to_u32(nrows, "nrows")?;
    let ncols = to_u32(ncols, "ncols")?;
    to_u32(idx.len(), "nnz")?;
    let (major, minor) = L::major_minor(nrows, ncols);
    let major = major as usize;
    if ptr.len() != major + 1 {
        return Err(AlgebraError::PointerLength { layout: L::NAME, expected: major + 1, found: ptr.len() });
    }
    if ptr[0] != 0 {
        return Err(AlgebraError::PointerStart { layout: L::NAME, found: ptr[0] });
    }
    for m in 0..major {
        let (start, end) = (ptr[m], ptr[m + 1]);
        if end < start {
            return Err(AlgebraError::PointerDecreasing { layout: L::NAME, slice: L::MAJOR, major: m, start, end });
        }
        if end as usize > idx.len() {
            return Err(AlgebraError::PointerEnd { layout: L::NAME, last: end, nnz: idx.len() });
        }
        let slice = &idx[start as usize..end as usize];
        for (offset, &index) in slice.iter().enumerate() {
            let position = start as usize + offset;
            if index >= minor {
                return Err(AlgebraError::IndexOutOfRange {
                    layout: L::NAME,
                    slice: L::MAJOR,
                    major: m,
                    position,
                    index,
                    bound: minor,
                });
            }
            if offset > 0 {
                let previous = slice[offset - 1];
                if previous >= index {
                    return Err(AlgebraError::UnsortedIndices {
                        layout: L::NAME,
                        slice: L::MAJOR,
                        major: m,
                        position,
                        previous,
                        index,
                        kind: if previous == index { "duplicate" } else { "unsorted" },
                    });
                }
            }
        }
    }
    if ptr[major] as usize != idx.len() {
        return Err(AlgebraError::PointerEnd { layout: L::NAME, last: ptr[major], nnz: idx.len() });
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------

/// Owned value-free sparsity pattern (the symbolic half of a matrix).
///
/// Produced by symbolic products and consumed by numeric ones; see
/// [`CscPattern`](crate::CscPattern) and [`CsrPattern`](crate::CsrPattern).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Pattern<L: Layout> {
    nrows: u32,
    ncols: u32,
    ptr: Vec<u32>,
    idx: Vec<u32>,
    layout: PhantomData<L>,
}

/// Borrowed value-free sparsity pattern. Cheap to copy.
#[derive(PartialEq, Eq, Hash)]
pub struct PatternRef<'a, L: Layout> {
    nrows: u32,
    ncols: u32,
    ptr: &'a [u32],
    idx: &'a [u32],
    layout: PhantomData<L>,
}

impl<L: Layout> Clone for PatternRef<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<L: Layout> Copy for PatternRef<'_, L> {}

impl<L: Layout> fmt::Debug for Pattern<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl<L: Layout> fmt::Debug for PatternRef<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("{}Pattern", L::NAME))
            .field("nrows", &self.nrows)
            .field("ncols", &self.ncols)
            .field("ptr", &self.ptr)
            .field("idx", &self.idx)
            .finish()
    }
}

impl<L: Layout> Pattern<L> {
    /// Validates and wraps a pattern.
    ///
    /// # Errors
    /// The first violated [invariant](self#invariants), naming the slice and
    /// position.
    pub fn try_new(nrows: usize, ncols: usize, ptr: Vec<u32>, idx: Vec<u32>) -> Result<Self> {
        validate::<L>(nrows, ncols, &ptr, &idx)?;
        Ok(Pattern { nrows: nrows as u32, ncols: ncols as u32, ptr, idx, layout: PhantomData })
    }

    /// Wraps a pattern without checking it.
    ///
    /// # Safety
    /// The arguments must satisfy the [invariants](self#invariants); kernels
    /// index without bounds checks on their strength.
    pub unsafe fn new_unchecked(nrows: u32, ncols: u32, ptr: Vec<u32>, idx: Vec<u32>) -> Self {
        debug_assert!(validate::<L>(nrows as usize, ncols as usize, &ptr, &idx).is_ok());
        Pattern { nrows, ncols, ptr, idx, layout: PhantomData }
    }

    /// The empty `nrows x ncols` pattern.
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] if a dimension exceeds `u32`.
    pub fn empty(nrows: usize, ncols: usize) -> Result<Self> {
        let nr = to_u32(nrows, "nrows")?;
        let nc = to_u32(ncols, "ncols")?;
        let (major, _) = L::major_minor(nr, nc);
        Ok(Pattern { nrows: nr, ncols: nc, ptr: vec![0; major as usize + 1], idx: Vec::new(), layout: PhantomData })
    }

    /// Borrows the pattern.
    #[inline]
    pub fn as_ref(&self) -> PatternRef<'_, L> {
        PatternRef { nrows: self.nrows, ncols: self.ncols, ptr: &self.ptr, idx: &self.idx, layout: PhantomData }
    }

    /// Attaches values, giving an owned matrix.
    ///
    /// # Panics
    /// If `values.len() != self.nnz()`.
    #[track_caller]
    pub fn with_values<T>(self, values: Vec<T>) -> SparseMat<T, L> {
        check_values_len::<L>(self.idx.len(), values.len());
        SparseMat { pattern: self, values }
    }

    /// Decomposes into `(nrows, ncols, ptr, idx)`.
    pub fn into_parts(self) -> (u32, u32, Vec<u32>, Vec<u32>) {
        (self.nrows, self.ncols, self.ptr, self.idx)
    }

    /// Reinterprets as the pattern of the transpose (free: no data moves).
    pub fn into_transpose(self) -> Pattern<L::Transposed> {
        Pattern { nrows: self.ncols, ncols: self.nrows, ptr: self.ptr, idx: self.idx, layout: PhantomData }
    }
}

impl<'a, L: Layout> PatternRef<'a, L> {
    /// Validates and wraps borrowed arrays.
    ///
    /// # Errors
    /// The first violated [invariant](self#invariants).
    pub fn try_new(nrows: usize, ncols: usize, ptr: &'a [u32], idx: &'a [u32]) -> Result<Self> {
        validate::<L>(nrows, ncols, ptr, idx)?;
        Ok(PatternRef { nrows: nrows as u32, ncols: ncols as u32, ptr, idx, layout: PhantomData })
    }

    /// Wraps borrowed arrays without checking them.
    ///
    /// # Safety
    /// The arguments must satisfy the [invariants](self#invariants).
    pub unsafe fn new_unchecked(nrows: u32, ncols: u32, ptr: &'a [u32], idx: &'a [u32]) -> Self {
        debug_assert!(validate::<L>(nrows as usize, ncols as usize, ptr, idx).is_ok());
        PatternRef { nrows, ncols, ptr, idx, layout: PhantomData }
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows as usize
    }
    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols as usize
    }
    /// `(nrows, ncols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows as usize, self.ncols as usize)
    }
    /// Number of stored entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.idx.len()
    }
    /// Size of the compressed dimension (columns for CSC, rows for CSR).
    #[inline]
    pub fn major_dim(&self) -> usize {
        L::major_minor(self.nrows, self.ncols).0 as usize
    }
    /// Size of the other dimension.
    #[inline]
    pub fn minor_dim(&self) -> usize {
        L::major_minor(self.nrows, self.ncols).1 as usize
    }
    /// The pointer array (`major_dim() + 1` entries).
    #[inline]
    pub fn ptr(&self) -> &'a [u32] {
        self.ptr
    }
    /// The minor indices, slice by slice.
    #[inline]
    pub fn indices(&self) -> &'a [u32] {
        self.idx
    }
    /// Storage range of major slice `m`.
    ///
    /// # Panics
    /// If `m >= major_dim()`.
    #[inline]
    #[track_caller]
    pub fn range(&self, m: usize) -> std::ops::Range<usize> {
        assert!(
            m < self.major_dim(),
            "{} {m} out of range for a {} matrix with {} {}s",
            L::MAJOR,
            L::NAME,
            self.major_dim(),
            L::MAJOR
        );
        self.ptr[m] as usize..self.ptr[m + 1] as usize
    }
    /// Minor indices of major slice `m`.
    ///
    /// # Panics
    /// If `m >= major_dim()`.
    #[inline]
    #[track_caller]
    pub fn slice(&self, m: usize) -> &'a [u32] {
        &self.idx[self.range(m)]
    }
    /// Number of entries in major slice `m`.
    #[inline]
    #[track_caller]
    pub fn slice_len(&self, m: usize) -> usize {
        self.range(m).len()
    }
    /// Storage position of entry `(row, col)`, if stored (binary search).
    pub fn position(&self, row: usize, col: usize) -> Option<usize> {
        let (m, n) = if L::COLUMN_MAJOR { (col, row) } else { (row, col) };
        if m >= self.major_dim() || n >= self.minor_dim() {
            return None;
        }
        let r = self.range(m);
        self.idx[r.clone()].binary_search(&(n as u32)).ok().map(|p| r.start + p)
    }
    /// Iterates `(row, col)` of all entries in storage order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let ptr = self.ptr;
        let idx = self.idx;
        (0..ptr.len().saturating_sub(1))
            .flat_map(move |m| idx[ptr[m] as usize..ptr[m + 1] as usize].iter().map(move |&n| L::row_col(m as u32, n)))
    }
    /// The same entries viewed as the pattern of the transpose (free).
    #[inline]
    pub fn transpose(&self) -> PatternRef<'a, L::Transposed> {
        PatternRef { nrows: self.ncols, ncols: self.nrows, ptr: self.ptr, idx: self.idx, layout: PhantomData }
    }
    /// Copies into an owned pattern.
    pub fn to_owned(&self) -> Pattern<L> {
        Pattern {
            nrows: self.nrows,
            ncols: self.ncols,
            ptr: self.ptr.to_vec(),
            idx: self.idx.to_vec(),
            layout: PhantomData,
        }
    }
    /// Attaches borrowed values.
    ///
    /// # Panics
    /// If `values.len() != self.nnz()`.
    #[track_caller]
    pub fn with_values<T>(self, values: &'a [T]) -> SparseRef<'a, T, L> {
        check_values_len::<L>(self.idx.len(), values.len());
        SparseRef { pattern: self, values }
    }
    /// Attaches mutable values.
    ///
    /// # Panics
    /// If `values.len() != self.nnz()`.
    #[track_caller]
    pub fn with_values_mut<T>(self, values: &'a mut [T]) -> SparseMut<'a, T, L> {
        check_values_len::<L>(self.idx.len(), values.len());
        SparseMut { pattern: self, values }
    }
    #[inline]
    pub(crate) fn dims_u32(&self) -> (u32, u32) {
        (self.nrows, self.ncols)
    }
}

// ---------------------------------------------------------------------------
// Matrices
// ---------------------------------------------------------------------------

/// Owned compressed sparse matrix; see [`CscMat`](crate::CscMat) and
/// [`CsrMat`](crate::CsrMat).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SparseMat<T, L: Layout> {
    pattern: Pattern<L>,
    values: Vec<T>,
}

/// Borrowed compressed sparse matrix. Cheap to copy.
pub struct SparseRef<'a, T, L: Layout> {
    pattern: PatternRef<'a, L>,
    values: &'a [T],
}

/// Mutably borrowed compressed sparse matrix: the values can change, the
/// pattern cannot.
pub struct SparseMut<'a, T, L: Layout> {
    pattern: PatternRef<'a, L>,
    values: &'a mut [T],
}

impl<T, L: Layout> Clone for SparseRef<'_, T, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, L: Layout> Copy for SparseRef<'_, T, L> {}

impl<T: fmt::Debug, L: Layout> fmt::Debug for SparseMat<T, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}
impl<T: fmt::Debug, L: Layout> fmt::Debug for SparseRef<'_, T, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("{}Mat", L::NAME))
            .field("nrows", &self.pattern.nrows)
            .field("ncols", &self.pattern.ncols)
            .field("ptr", &self.pattern.ptr)
            .field("idx", &self.pattern.idx)
            .field("values", &self.values)
            .finish()
    }
}
impl<T: fmt::Debug, L: Layout> fmt::Debug for SparseMut<'_, T, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.rb().fmt(f)
    }
}

impl<T: PartialEq, L: Layout> PartialEq for SparseRef<'_, T, L> {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.values == other.values
    }
}

impl<T, L: Layout> SparseMat<T, L> {
    /// Validates and wraps a matrix.
    ///
    /// # Errors
    /// The first violated [invariant](self#invariants), naming the slice and
    /// position, or [`AlgebraError::ValuesLength`].
    pub fn try_new(nrows: usize, ncols: usize, ptr: Vec<u32>, idx: Vec<u32>, values: Vec<T>) -> Result<Self> {
        if values.len() != idx.len() {
            return Err(AlgebraError::ValuesLength { layout: L::NAME, indices: idx.len(), values: values.len() });
        }
        let pattern = Pattern::try_new(nrows, ncols, ptr, idx)?;
        Ok(SparseMat { pattern, values })
    }

    /// Wraps a matrix without checking it.
    ///
    /// # Safety
    /// The arguments must satisfy the [invariants](self#invariants) and
    /// `values.len() == idx.len()`.
    pub unsafe fn new_unchecked(nrows: u32, ncols: u32, ptr: Vec<u32>, idx: Vec<u32>, values: Vec<T>) -> Self {
        debug_assert_eq!(values.len(), idx.len());
        // SAFETY: forwarded to the caller.
        let pattern = unsafe { Pattern::new_unchecked(nrows, ncols, ptr, idx) };
        SparseMat { pattern, values }
    }

    /// The all-zero `nrows x ncols` matrix (no stored entries).
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] if a dimension exceeds `u32`.
    pub fn zeros(nrows: usize, ncols: usize) -> Result<Self> {
        Ok(SparseMat { pattern: Pattern::empty(nrows, ncols)?, values: Vec::new() })
    }

    /// Borrows the matrix.
    #[inline]
    pub fn as_ref(&self) -> SparseRef<'_, T, L> {
        SparseRef { pattern: self.pattern.as_ref(), values: &self.values }
    }

    /// Borrows the matrix with mutable values.
    #[inline]
    pub fn as_mut(&mut self) -> SparseMut<'_, T, L> {
        SparseMut { pattern: self.pattern.as_ref(), values: &mut self.values }
    }

    /// Stored values, slice by slice.
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Stored values, mutable (the pattern stays fixed).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// The sparsity pattern.
    #[inline]
    pub fn pattern(&self) -> PatternRef<'_, L> {
        self.pattern.as_ref()
    }

    /// Splits into pattern and values.
    pub fn into_pattern_values(self) -> (Pattern<L>, Vec<T>) {
        (self.pattern, self.values)
    }

    /// Decomposes into `(nrows, ncols, ptr, idx, values)`.
    pub fn into_parts(self) -> (u32, u32, Vec<u32>, Vec<u32>, Vec<T>) {
        let (nr, nc, ptr, idx) = self.pattern.into_parts();
        (nr, nc, ptr, idx, self.values)
    }

    /// Reinterprets as the transpose in the other layout (free).
    pub fn into_transpose(self) -> SparseMat<T, L::Transposed> {
        SparseMat { pattern: self.pattern.into_transpose(), values: self.values }
    }

    /// Applies `f` to every stored value, keeping the pattern.
    pub fn map_values<U>(self, f: impl FnMut(T) -> U) -> SparseMat<U, L> {
        SparseMat { pattern: self.pattern, values: self.values.into_iter().map(f).collect() }
    }

    // Accessors forwarded from the view so that owned matrices read the same.

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.pattern.nrows as usize
    }
    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.pattern.ncols as usize
    }
    /// `(nrows, ncols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows(), self.ncols())
    }
    /// Number of stored entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The pointer array.
    #[inline]
    pub fn ptr(&self) -> &[u32] {
        &self.pattern.ptr
    }
    /// The minor indices.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.pattern.idx
    }
}

impl<'a, T, L: Layout> SparseRef<'a, T, L> {
    /// Validates and wraps borrowed arrays.
    ///
    /// # Errors
    /// The first violated [invariant](self#invariants), or
    /// [`AlgebraError::ValuesLength`].
    pub fn try_new(nrows: usize, ncols: usize, ptr: &'a [u32], idx: &'a [u32], values: &'a [T]) -> Result<Self> {
        if values.len() != idx.len() {
            return Err(AlgebraError::ValuesLength { layout: L::NAME, indices: idx.len(), values: values.len() });
        }
        Ok(SparseRef { pattern: PatternRef::try_new(nrows, ncols, ptr, idx)?, values })
    }

    /// Wraps borrowed arrays without checking them.
    ///
    /// # Safety
    /// The arguments must satisfy the [invariants](self#invariants) and
    /// `values.len() == idx.len()`.
    pub unsafe fn new_unchecked(nrows: u32, ncols: u32, ptr: &'a [u32], idx: &'a [u32], values: &'a [T]) -> Self {
        debug_assert_eq!(values.len(), idx.len());
        SparseRef {
            // SAFETY: forwarded to the caller.
            pattern: unsafe { PatternRef::new_unchecked(nrows, ncols, ptr, idx) },
            values,
        }
    }

    /// The sparsity pattern.
    #[inline]
    pub fn pattern(&self) -> PatternRef<'a, L> {
        self.pattern
    }
    /// Stored values.
    #[inline]
    pub fn values(&self) -> &'a [T] {
        self.values
    }
    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.pattern.nrows()
    }
    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.pattern.ncols()
    }
    /// `(nrows, ncols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        self.pattern.shape()
    }
    /// Number of stored entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Size of the compressed dimension.
    #[inline]
    pub fn major_dim(&self) -> usize {
        self.pattern.major_dim()
    }
    /// Size of the other dimension.
    #[inline]
    pub fn minor_dim(&self) -> usize {
        self.pattern.minor_dim()
    }
    /// The pointer array.
    #[inline]
    pub fn ptr(&self) -> &'a [u32] {
        self.pattern.ptr
    }
    /// The minor indices.
    #[inline]
    pub fn indices(&self) -> &'a [u32] {
        self.pattern.idx
    }
    /// Minor indices and values of major slice `m`.
    ///
    /// # Panics
    /// If `m >= major_dim()`.
    #[inline]
    #[track_caller]
    pub fn slice(&self, m: usize) -> (&'a [u32], &'a [T]) {
        let r = self.pattern.range(m);
        (&self.pattern.idx[r.clone()], &self.values[r])
    }
    /// The stored value at `(row, col)`, if any (binary search).
    pub fn get(&self, row: usize, col: usize) -> Option<&'a T> {
        self.pattern.position(row, col).map(|p| &self.values[p])
    }
    /// Iterates `(row, col, &value)` in storage order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, &'a T)> + 'a {
        self.pattern.iter().zip(self.values.iter()).map(|((r, c), v)| (r, c, v))
    }
    /// The same entries viewed as the transpose in the other layout (free).
    #[inline]
    pub fn transpose(&self) -> SparseRef<'a, T, L::Transposed> {
        SparseRef { pattern: self.pattern.transpose(), values: self.values }
    }
    /// The same arrays under another layout marker. Only for storage that
    /// *is* valid in `L2` — the view itself (`L2 = L`), or the storage of a
    /// transposed view named for what it is (CSC of `A` = CSR of `Aᵀ`).
    #[inline]
    pub(crate) fn relabel<L2: Layout>(self) -> SparseRef<'a, T, L2> {
        SparseRef {
            pattern: PatternRef {
                nrows: self.pattern.nrows,
                ncols: self.pattern.ncols,
                ptr: self.pattern.ptr,
                idx: self.pattern.idx,
                layout: PhantomData,
            },
            values: self.values,
        }
    }
    /// Copies into an owned matrix.
    pub fn to_owned(&self) -> SparseMat<T, L>
    where
        T: Clone,
    {
        SparseMat { pattern: self.pattern.to_owned(), values: self.values.to_vec() }
    }
    /// The major slices `majors` (rows of a CSR matrix, columns of a CSC
    /// one), in that order, as a matrix of `majors.len()` slices with the
    /// same minor dimension.
    ///
    /// # Panics
    /// If an entry of `majors` is not below [`SparseRef::major_dim`], or
    /// the selection (which may repeat slices) holds more than `u32::MAX`
    /// entries.
    #[track_caller]
    pub fn select_major(&self, majors: &[u32]) -> SparseMat<T, L>
    where
        T: Copy,
    {
        let mut ptr = Vec::with_capacity(majors.len() + 1);
        ptr.push(0u32);
        let mut nnz = 0u32;
        for &m in majors {
            let len = self.pattern.slice_len(m as usize) as u32;
            nnz = nnz.checked_add(len).expect("select_major: more than u32::MAX entries selected");
            ptr.push(nnz);
        }
        let mut idx = Vec::with_capacity(nnz as usize);
        let mut values = Vec::with_capacity(nnz as usize);
        for &m in majors {
            let (i, v) = self.slice(m as usize);
            idx.extend_from_slice(i);
            values.extend_from_slice(v);
        }
        let (major, minor) = (majors.len() as u32, self.pattern.minor_dim() as u32);
        let (nrows, ncols) = if L::COLUMN_MAJOR { (minor, major) } else { (major, minor) };
        // SAFETY: each slice is a copy of a valid slice of the same minor
        // dimension, and `ptr` counts them.
        unsafe { SparseMat::new_unchecked(nrows, ncols, ptr, idx, values) }
    }
    /// Dense row-major copy (for tests and small matrices); absent entries are
    /// `T::zero()`.
    pub fn to_dense(&self) -> ndarray::Array2<T>
    where
        T: Clone + num_traits::Zero,
    {
        let mut d = ndarray::Array2::zeros((self.nrows(), self.ncols()));
        for (r, c, v) in self.iter() {
            d[(r as usize, c as usize)] = v.clone();
        }
        d
    }
}

impl<'a, T, L: Layout> SparseMut<'a, T, L> {
    /// Reborrows as a shared view.
    #[inline]
    pub fn rb(&self) -> SparseRef<'_, T, L> {
        SparseRef { pattern: self.pattern, values: self.values }
    }
    /// Reborrows mutably.
    #[inline]
    pub fn rb_mut(&mut self) -> SparseMut<'_, T, L> {
        SparseMut { pattern: self.pattern, values: self.values }
    }
    /// The sparsity pattern.
    #[inline]
    pub fn pattern(&self) -> PatternRef<'a, L> {
        self.pattern
    }
    /// Mutable values.
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        self.values
    }
    /// Splits into the pattern and the mutable values.
    #[inline]
    pub fn into_parts(self) -> (PatternRef<'a, L>, &'a mut [T]) {
        (self.pattern, self.values)
    }
}

/// Builds a matrix from `(row, col, value)` triplets in any order; duplicate
/// positions are combined with `combine` in input order.
///
/// # Errors
/// [`AlgebraError::TripletOutOfRange`] naming the first bad triplet, or
/// [`AlgebraError::TooLarge`].
pub(crate) fn from_triplets<T: Clone, L: Layout>(
    nrows: usize,
    ncols: usize,
    triplets: &[(usize, usize, T)],
    mut combine: impl FnMut(T, T) -> T,
) -> Result<SparseMat<T, L>> {
    let nr = to_u32(nrows, "nrows")?;
    let nc = to_u32(ncols, "ncols")?;
    to_u32(triplets.len(), "number of triplets")?;
    let (major, _) = L::major_minor(nr, nc);
    let mut counts = vec![0u32; major as usize + 1];
    for (position, &(row, col, _)) in triplets.iter().enumerate() {
        if row >= nrows || col >= ncols {
            return Err(AlgebraError::TripletOutOfRange { position, row, col, nrows, ncols });
        }
        let m = if L::COLUMN_MAJOR { col } else { row };
        counts[m + 1] += 1;
    }
    for m in 0..major as usize {
        counts[m + 1] += counts[m];
    }
    // Stable bucket sort by major, then stable sort by minor inside each
    // bucket keeps duplicates in input order.
    let mut order = vec![0u32; triplets.len()];
    let mut next = counts.clone();
    for (t, &(row, col, _)) in triplets.iter().enumerate() {
        let m = if L::COLUMN_MAJOR { col } else { row };
        order[next[m] as usize] = t as u32;
        next[m] += 1;
    }
    let minor_of = |t: u32| {
        let (row, col, _) = &triplets[t as usize];
        if L::COLUMN_MAJOR { *row } else { *col }
    };
    let mut ptr = Vec::with_capacity(major as usize + 1);
    let mut idx = Vec::with_capacity(triplets.len());
    let mut values: Vec<T> = Vec::with_capacity(triplets.len());
    ptr.push(0u32);
    for m in 0..major as usize {
        let bucket = &mut order[counts[m] as usize..counts[m + 1] as usize];
        bucket.sort_by_key(|&t| minor_of(t));
        let start = idx.len();
        for &t in bucket.iter() {
            let n = minor_of(t) as u32;
            let v = triplets[t as usize].2.clone();
            if idx.len() > start && *idx.last().unwrap_or(&u32::MAX) == n {
                let last = values.pop().unwrap_or_else(|| unreachable!("values and idx grow together"));
                values.push(combine(last, v));
            } else {
                idx.push(n);
                values.push(v);
            }
        }
        ptr.push(idx.len() as u32);
    }
    // SAFETY: sorted per slice by construction, indices checked above.
    Ok(unsafe { SparseMat::new_unchecked(nr, nc, ptr, idx, values) })
}

/// Values attached to a pattern must match its nonzeros one for one.
#[track_caller]
fn check_values_len<L: Layout>(nnz: usize, values: usize) {
    assert_eq!(values, nnz, "{} pattern has {nnz} nonzeros but {values} values were given", L::NAME);
}
