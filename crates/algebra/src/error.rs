//! The crate's error type.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Everything in this crate that can fail because of the *data* it was given
/// (as opposed to a caller contract violation, which panics).
///
/// Every variant names the offending element: the major slice (column of a
/// CSC matrix, row of a CSR matrix), the position in the index array, or the
/// size that did not fit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AlgebraError {
    /// A dimension, a number of nonzeros or a pointer value does not fit the
    /// `u32` index type used throughout (the GPU wants 32-bit indices).
    #[error("{what} = {value} does not fit in a u32 index (max {max})", max = u32::MAX)]
    TooLarge {
        /// What overflowed (for example `"nrows"`, `"nnz of the product"`).
        what: &'static str,
        /// The value that did not fit.
        value: u128,
    },
    /// The pointer array has the wrong length (it must be major dimension + 1).
    #[error("{layout} pointer array has length {found}, expected {expected} (major dimension + 1)")]
    PointerLength {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// The pointer array does not start at zero.
    #[error("{layout} pointer array starts at {found}, expected 0")]
    PointerStart {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// The first pointer value.
        found: u32,
    },
    /// The pointer array decreases at a major slice.
    #[error("{layout} pointer array decreases at {slice} {major}: {start} > {end}")]
    PointerDecreasing {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// `"column"` or `"row"`.
        slice: &'static str,
        /// The offending major index.
        major: usize,
        /// Pointer at `major`.
        start: u32,
        /// Pointer at `major + 1`.
        end: u32,
    },
    /// The last pointer does not equal the number of stored indices.
    #[error("{layout} pointer array ends at {last}, but {nnz} indices are stored")]
    PointerEnd {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// Last pointer value.
        last: u32,
        /// Length of the index array.
        nnz: usize,
    },
    /// The value array and the index array differ in length.
    #[error("{layout} matrix has {indices} indices but {values} values")]
    ValuesLength {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// Length of the index array.
        indices: usize,
        /// Length of the value array.
        values: usize,
    },
    /// A minor index is out of range.
    #[error("{layout} {slice} {major}, position {position}: index {index} out of range (< {bound} required)")]
    IndexOutOfRange {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// `"column"` or `"row"`.
        slice: &'static str,
        /// The major slice holding the index.
        major: usize,
        /// Position in the index array.
        position: usize,
        /// The offending index.
        index: u32,
        /// The minor dimension.
        bound: u32,
    },
    /// Indices within a major slice are not strictly increasing (unsorted or
    /// duplicated).
    #[error(
        "{layout} {slice} {major}, position {position}: index {index} follows {previous} (indices must be strictly increasing: {kind})"
    )]
    UnsortedIndices {
        /// `"CSC"` or `"CSR"`.
        layout: &'static str,
        /// `"column"` or `"row"`.
        slice: &'static str,
        /// The major slice holding the indices.
        major: usize,
        /// Position of the second index in the index array.
        position: usize,
        /// The earlier index.
        previous: u32,
        /// The offending index.
        index: u32,
        /// `"unsorted"` or `"duplicate"`.
        kind: &'static str,
    },
    /// A triplet lies outside the matrix.
    #[error("triplet {position}: ({row}, {col}) lies outside a {nrows} x {ncols} matrix")]
    TripletOutOfRange {
        /// Position in the triplet list.
        position: usize,
        /// Row of the triplet.
        row: usize,
        /// Column of the triplet.
        col: usize,
        /// Number of rows.
        nrows: usize,
        /// Number of columns.
        ncols: usize,
    },
    /// A block of a stack does not have the size the others have.
    #[error("{what}: block {block} has {found} {dimension}s, the blocks before it {expected}")]
    BlockShape {
        /// `"vstack"` or `"hstack"`.
        what: &'static str,
        /// Position of the block in the list.
        block: usize,
        /// `"row"` or `"column"`: the dimension that must agree.
        dimension: &'static str,
        /// The size of the blocks before it.
        expected: usize,
        /// Its size.
        found: usize,
    },
    /// A selected row or column is past the matrix.
    #[error("{what} selection, position {position}: index {index} out of range (< {bound} required)")]
    SelectionOutOfRange {
        /// `"row"` or `"column"`.
        what: &'static str,
        /// Position in the selection.
        position: usize,
        /// The offending index.
        index: u32,
        /// The dimension.
        bound: usize,
    },
    /// A permutation has another length than the dimension it permutes.
    #[error("{what} permutation has {found} entries, expected {expected}")]
    PermutationLength {
        /// `"row"` or `"column"`.
        what: &'static str,
        /// The dimension.
        expected: usize,
        /// The list's length.
        found: usize,
    },
    /// A permutation repeats an index.
    #[error("{what} permutation, position {position}: index {index} appears a second time")]
    NotAPermutation {
        /// `"row"` or `"column"`.
        what: &'static str,
        /// Position of the second occurrence.
        position: usize,
        /// The repeated index.
        index: u32,
    },
    /// A product or conversion would exceed a caller-given budget of nonzeros.
    #[error("{what} would have {nnz} nonzeros, over the budget of {budget}")]
    OverBudget {
        /// What was being built.
        what: &'static str,
        /// Predicted number of nonzeros.
        nnz: u128,
        /// The budget.
        budget: u128,
    },
    /// The allocator could not supply a buffer (the machine's memory, or a
    /// limit on the process's address space, is exhausted).
    #[error(
        "out of memory: {what} needs {bytes} bytes, which could not be allocated (free memory, raise the process's memory limit, or make the input smaller)"
    )]
    OutOfMemory {
        /// What the buffer was for.
        what: &'static str,
        /// Bytes asked for.
        bytes: u128,
    },
    /// A matrix from another library could not be converted.
    #[error("conversion from {from}: {reason}")]
    Conversion {
        /// The source library type.
        from: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// Matrix Market input is malformed or unsupported ([`crate::mtx`]).
    #[error("Matrix Market {}line {line}: {reason}", in_file(path.as_deref()))]
    MatrixMarket {
        /// The file, when read through
        /// [`read_matrix_market_file`](crate::mtx::read_matrix_market_file).
        path: Option<PathBuf>,
        /// 1-based line number of the offending line (for input that ends
        /// too early, the line after the last one).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be opened, created, read or written.
    #[error("cannot {action} {}: {message}", path.display())]
    Io {
        /// `"open"`, `"create"`, `"read"` or `"write"`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The kind of the underlying [`std::io::Error`].
        kind: std::io::ErrorKind,
        /// The underlying error's message.
        message: String,
    },
}

fn in_file(path: Option<&Path>) -> String {
    path.map(|p| format!("file {}, ", p.display())).unwrap_or_default()
}

/// Shorthand for results of this crate.
pub type Result<T, E = AlgebraError> = std::result::Result<T, E>;

/// Converts a `usize` to `u32` or reports which quantity overflowed.
#[inline]
pub(crate) fn to_u32(value: usize, what: &'static str) -> Result<u32> {
    u32::try_from(value).map_err(|_| AlgebraError::TooLarge { what, value: value as u128 })
}
