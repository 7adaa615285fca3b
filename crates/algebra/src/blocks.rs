//! Building blocks: identity and diagonal matrices, stacking, submatrices,
//! permutations, the Kronecker product, and dense copies of small matrices
//! (for eigen-analysis), for both layouts.
//!
//! Every function takes views ([`SparseRef`]) and returns owned matrices
//! ([`SparseMat`]); selections and permutations are lists of `u32` indices,
//! the house's index type. What a caller gives that does not fit (blocks
//! of different heights, an index past the matrix, a list that is not a
//! permutation) is an [`AlgebraError`] naming the block or the position.
//!
//! ```
//! use subla_algebra::CsrMat;
//! use subla_algebra::blocks::{hstack, kron, vstack};
//! let i2 = CsrMat::<f64>::identity(2)?;
//! let d = CsrMat::diagonal(vec![1.0, 2.0])?;
//! let top = hstack(&[i2.as_ref(), d.as_ref()])?; // 2 x 4
//! let both = vstack(&[top.as_ref(), top.as_ref()])?; // 4 x 4
//! assert_eq!(both.shape(), (4, 4));
//! let k = kron(d.as_ref(), i2.as_ref())?; // diag(1, 1, 2, 2)
//! assert_eq!(k.to_dense()[(3, 3)], 2.0);
//! let corner = both.submatrix(&[0, 3], &[2, 3])?; // rows 0 and 3, columns 2 and 3
//! assert_eq!(corner.to_dense(), ndarray::array![[1.0, 0.0], [0.0, 2.0]]);
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```

use num_traits::{One, Zero};

use crate::error::{AlgebraError, Result};
use crate::storage::{Layout, SparseMat, SparseRef};

fn to_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| AlgebraError::TooLarge { what, value: n as u128 })
}

/// What a minor slice is called: `"row"` for CSC, `"column"` for CSR.
fn minor_name<L: Layout>() -> &'static str {
    if L::COLUMN_MAJOR { "row" } else { "column" }
}

/// Builds an owned matrix from slices checked by construction.
fn assemble<T, L: Layout>(major: u32, minor: u32, ptr: Vec<u32>, idx: Vec<u32>, values: Vec<T>) -> SparseMat<T, L> {
    let (nrows, ncols) = L::row_col(major, minor);
    // SAFETY: callers build `ptr` as running counts of `idx`, whose slices
    // are strictly increasing and below `minor`.
    unsafe { SparseMat::new_unchecked(nrows, ncols, ptr, idx, values) }
}

impl<T, L: Layout> SparseMat<T, L> {
    /// The `n × n` identity matrix.
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] when `n` does not fit a `u32` index.
    pub fn identity(n: usize) -> Result<Self>
    where
        T: One + Clone,
    {
        Self::diagonal(vec![T::one(); n])
    }

    /// The square matrix with `diagonal` on its diagonal (every entry
    /// stored, zeros included, so that the pattern is the identity's).
    ///
    /// # Errors
    /// [`AlgebraError::TooLarge`] when its length does not fit a `u32`
    /// index.
    pub fn diagonal(diagonal: Vec<T>) -> Result<Self> {
        let n = to_u32(diagonal.len(), "diagonal length")?;
        Ok(assemble(n, n, (0..=n).collect(), (0..n).collect(), diagonal))
    }
}

/// The sizes of a stack of `blocks`: the dimension they share
/// (`shared`, named `dimension` in the error), the sum of the one they are
/// stacked along (`stacked`), and their entries, each checked to fit `u32`.
fn stack_sizes<T, L: Layout>(
    blocks: &[SparseRef<'_, T, L>],
    what: &'static str,
    dimension: &'static str,
    shared: impl Fn(&SparseRef<'_, T, L>) -> usize,
    stacked: impl Fn(&SparseRef<'_, T, L>) -> usize,
) -> Result<(usize, usize, usize)> {
    let common = blocks.first().map_or(0, &shared);
    let (mut total, mut nnz) = (0usize, 0usize);
    for (block, b) in blocks.iter().enumerate() {
        if shared(b) != common {
            return Err(AlgebraError::BlockShape { what, block, dimension, expected: common, found: shared(b) });
        }
        total += stacked(b);
        nnz += b.nnz();
    }
    to_u32(common, what)?;
    to_u32(total, what)?;
    to_u32(nnz, what)?;
    Ok((common, total, nnz))
}

/// Concatenates `blocks` along the major dimension (rows of CSR, columns of
/// CSC): every block has the same minor dimension.
fn concat_major<T: Clone, L: Layout>(blocks: &[SparseRef<'_, T, L>], what: &'static str) -> Result<SparseMat<T, L>> {
    let (minor, major, nnz) = stack_sizes(blocks, what, minor_name::<L>(), |b| b.minor_dim(), |b| b.major_dim())?;
    let mut ptr = Vec::with_capacity(major + 1);
    let mut idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    ptr.push(0u32);
    for b in blocks {
        for m in 0..b.major_dim() {
            let (i, v) = b.slice(m);
            idx.extend_from_slice(i);
            values.extend_from_slice(v);
            ptr.push(idx.len() as u32);
        }
    }
    Ok(assemble(major as u32, minor as u32, ptr, idx, values))
}

/// Concatenates `blocks` along the minor dimension: every block has the
/// same major dimension, and block `b`'s indices move past the blocks
/// before it.
fn concat_minor<T: Clone, L: Layout>(blocks: &[SparseRef<'_, T, L>], what: &'static str) -> Result<SparseMat<T, L>> {
    let (major, minor, nnz) = stack_sizes(blocks, what, L::MAJOR, |b| b.major_dim(), |b| b.minor_dim())?;
    let mut ptr = Vec::with_capacity(major + 1);
    let mut idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    ptr.push(0u32);
    for m in 0..major {
        let mut offset = 0u32;
        for b in blocks {
            let (i, v) = b.slice(m);
            idx.extend(i.iter().map(|&j| j + offset));
            values.extend_from_slice(v);
            offset += b.minor_dim() as u32;
        }
        ptr.push(idx.len() as u32);
    }
    Ok(assemble(major as u32, minor as u32, ptr, idx, values))
}

/// `blocks` one above the other (`[A; B; …]`): every block has the same
/// number of columns. No block gives the `0 × 0` matrix.
///
/// # Errors
/// [`AlgebraError::BlockShape`] naming the first block of another width;
/// [`AlgebraError::TooLarge`] when the result does not fit `u32` indices.
pub fn vstack<T: Clone, L: Layout>(blocks: &[SparseRef<'_, T, L>]) -> Result<SparseMat<T, L>> {
    if L::COLUMN_MAJOR { concat_minor(blocks, "vstack") } else { concat_major(blocks, "vstack") }
}

/// `blocks` side by side (`[A, B, …]`): every block has the same number of
/// rows. No block gives the `0 × 0` matrix.
///
/// # Errors
/// [`AlgebraError::BlockShape`] naming the first block of another height;
/// [`AlgebraError::TooLarge`] when the result does not fit `u32` indices.
pub fn hstack<T: Clone, L: Layout>(blocks: &[SparseRef<'_, T, L>]) -> Result<SparseMat<T, L>> {
    if L::COLUMN_MAJOR { concat_major(blocks, "hstack") } else { concat_minor(blocks, "hstack") }
}

/// The Kronecker product `A ⊗ B`: the `(ma·mb) × (na·nb)` matrix whose block
/// `(i, j)` is `a[i, j] · B`, entry `(i·mb + k, j·nb + l)` equal to
/// `a[i, j] · b[k, l]`. Only products of stored entries are stored.
///
/// # Errors
/// [`AlgebraError::TooLarge`] when its dimensions or its number of entries
/// do not fit `u32` indices.
pub fn kron<T, L: Layout>(a: SparseRef<'_, T, L>, b: SparseRef<'_, T, L>) -> Result<SparseMat<T, L>>
where
    T: Clone + std::ops::Mul<Output = T>,
{
    let what = "Kronecker product";
    let major = to_u32(a.major_dim().saturating_mul(b.major_dim()), what)?;
    let minor = to_u32(a.minor_dim().saturating_mul(b.minor_dim()), what)?;
    let nnz = to_u32(a.nnz().saturating_mul(b.nnz()), what)? as usize;
    let bm = b.minor_dim() as u32;
    let mut ptr = Vec::with_capacity(major as usize + 1);
    let mut idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    ptr.push(0u32);
    // (A ⊗ B)ᵀ = Aᵀ ⊗ Bᵀ: the same loops serve both layouts.
    for i in 0..a.major_dim() {
        let (ai, av) = a.slice(i);
        for k in 0..b.major_dim() {
            let (bi, bv) = b.slice(k);
            for (&j, x) in ai.iter().zip(av) {
                for (&l, y) in bi.iter().zip(bv) {
                    idx.push(j * bm + l);
                    values.push(x.clone() * y.clone());
                }
            }
            ptr.push(idx.len() as u32);
        }
    }
    Ok(assemble(major, minor, ptr, idx, values))
}

/// Checks that `list` indexes a dimension of `bound`: the first entry past
/// it is an error naming its position.
fn check_selection(list: &[u32], bound: usize, what: &'static str) -> Result<()> {
    match list.iter().position(|&i| i as usize >= bound) {
        Some(position) => Err(AlgebraError::SelectionOutOfRange { what, position, index: list[position], bound }),
        None => Ok(()),
    }
}

/// Checks that `list` is a permutation of `0..n`.
fn check_permutation(list: &[u32], n: usize, what: &'static str) -> Result<()> {
    if list.len() != n {
        return Err(AlgebraError::PermutationLength { what, expected: n, found: list.len() });
    }
    check_selection(list, n, what)?;
    let mut seen = vec![false; n];
    for (position, &i) in list.iter().enumerate() {
        if std::mem::replace(&mut seen[i as usize], true) {
            return Err(AlgebraError::NotAPermutation { what, position, index: i });
        }
    }
    Ok(())
}

impl<T, L: Layout> SparseRef<'_, T, L> {
    /// The submatrix of rows `rows` and columns `cols`, in those orders:
    /// entry `(i, j)` of the result is entry `(rows[i], cols[j])` of `self`.
    /// Either list may repeat an index (the row or column is copied).
    ///
    /// # Errors
    /// [`AlgebraError::SelectionOutOfRange`] naming the first index past the
    /// matrix; [`AlgebraError::TooLarge`] when the result does not fit `u32`
    /// indices.
    pub fn submatrix(&self, rows: &[u32], cols: &[u32]) -> Result<SparseMat<T, L>>
    where
        T: Clone,
    {
        check_selection(rows, self.nrows(), "row")?;
        check_selection(cols, self.ncols(), "column")?;
        let (majors, minors) = if L::COLUMN_MAJOR { (cols, rows) } else { (rows, cols) };
        // Where each old minor index goes (it may go to several places).
        let mut first = vec![u32::MAX; self.minor_dim()];
        let mut next = vec![u32::MAX; minors.len()];
        for (p, &m) in minors.iter().enumerate().rev() {
            next[p] = first[m as usize];
            first[m as usize] = p as u32;
        }
        let what = "submatrix";
        let (major, minor) = (to_u32(majors.len(), what)?, to_u32(minors.len(), what)?);
        let mut ptr = Vec::with_capacity(majors.len() + 1);
        let mut idx = Vec::new();
        let mut values = Vec::new();
        let mut slice: Vec<(u32, T)> = Vec::new();
        ptr.push(0u32);
        for &m in majors {
            slice.clear();
            let (i, v) = self.slice(m as usize);
            for (&j, x) in i.iter().zip(v) {
                let mut p = first[j as usize];
                while p != u32::MAX {
                    slice.push((p, x.clone()));
                    p = next[p as usize];
                }
            }
            slice.sort_unstable_by_key(|e| e.0);
            for (p, x) in slice.drain(..) {
                idx.push(p);
                values.push(x);
            }
            ptr.push(to_u32(idx.len(), what)?);
        }
        Ok(assemble(major, minor, ptr, idx, values))
    }

    /// `self` with its rows and columns reordered: entry `(i, j)` of the
    /// result is entry `(rows[i], cols[j])` of `self` (`P A Qᵀ` for the
    /// permutation matrices `P`, `Q` whose row `i` is `e_{rows[i]}`,
    /// `e_{cols[i]}`). Each list is a permutation of its dimension.
    ///
    /// # Errors
    /// [`AlgebraError::PermutationLength`], [`AlgebraError::SelectionOutOfRange`]
    /// or [`AlgebraError::NotAPermutation`] (the first repeated index)
    /// naming the list and the position.
    pub fn permute(&self, rows: &[u32], cols: &[u32]) -> Result<SparseMat<T, L>>
    where
        T: Clone,
    {
        check_permutation(rows, self.nrows(), "row")?;
        check_permutation(cols, self.ncols(), "column")?;
        self.submatrix(rows, cols)
    }

    /// A dense copy for a matrix of at most `max_entries` entries (rows ×
    /// columns): what eigen-analysis of small matrices works on, refused
    /// rather than allocated for a large one.
    ///
    /// # Errors
    /// [`AlgebraError::OverBudget`] when `nrows · ncols > max_entries`.
    pub fn to_dense_within(&self, max_entries: usize) -> Result<ndarray::Array2<T>>
    where
        T: Clone + Zero,
    {
        let entries = self.nrows() as u128 * self.ncols() as u128;
        if entries > max_entries as u128 {
            return Err(AlgebraError::OverBudget { what: "dense copy", nnz: entries, budget: max_entries as u128 });
        }
        Ok(self.to_dense())
    }
}

impl<T, L: Layout> SparseMat<T, L> {
    /// [`SparseRef::submatrix`] of the owned matrix.
    ///
    /// # Errors
    /// As [`SparseRef::submatrix`].
    pub fn submatrix(&self, rows: &[u32], cols: &[u32]) -> Result<SparseMat<T, L>>
    where
        T: Clone,
    {
        self.as_ref().submatrix(rows, cols)
    }

    /// [`SparseRef::permute`] of the owned matrix.
    ///
    /// # Errors
    /// As [`SparseRef::permute`].
    pub fn permute(&self, rows: &[u32], cols: &[u32]) -> Result<SparseMat<T, L>>
    where
        T: Clone,
    {
        self.as_ref().permute(rows, cols)
    }

    /// Dense row-major copy; absent entries are zero.
    pub fn to_dense(&self) -> ndarray::Array2<T>
    where
        T: Clone + Zero,
    {
        self.as_ref().to_dense()
    }

    /// [`SparseRef::to_dense_within`] of the owned matrix.
    ///
    /// # Errors
    /// As [`SparseRef::to_dense_within`].
    pub fn to_dense_within(&self, max_entries: usize) -> Result<ndarray::Array2<T>>
    where
        T: Clone + Zero,
    {
        self.as_ref().to_dense_within(max_entries)
    }
}
