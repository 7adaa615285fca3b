//! Sparse CSC/CSR matrices with **mapped** products, the algebra under
//! subla's subdivision schemes (Mlakar et al. 2020, *Subdivision-Specialized
//! Linear Algebra Kernels for Static and Dynamic Mesh Connectivity on the
//! GPU*, §3.1; Zayer et al. 2017).
//!
//! * Storage: [`CscMat`]/[`CsrMat`] (owned), [`CscRef`]/[`CsrRef`] (borrowed,
//!   `Copy`), [`CscMut`]/[`CsrMut`] (mutable values) and the value-free
//!   [`CscPattern`]/[`CsrPattern`]; `u32` indices throughout. See [`csc`],
//!   [`csr`] and [`storage`] for layouts and invariants.
//! * [`spmv`]: `y = map(A) · x` with an action map that sees each value with
//!   its row and column (Eq. 1), on `n × d` ndarray data (any number of
//!   channels); row-gather (CSR) and column-scatter (CSC).
//! * [`spgemm`]: `C(i, j) = ⊕_k λ(μ(A(i, k), B(k, j)), i, j, k, a, b)` with
//!   a bivariate action map, a (possibly stateful) lambda that may return no
//!   entry, and a replaceable reduction; symbolic and numeric phases apart or
//!   together.
//! * [`scan`]: parallel prefix sums, stream compaction and enumeration of the
//!   nonzeros that satisfy a predicate (edge numbering, §4.1).
//! * [`padded`]: [`PaddedCsr`], refinement matrices stored with rows padded
//!   to groups of four for fast repeated `P_{i+1} = R P_i` (§6.3).
//! * [`shared`]: [`SharedCsr`], matrices whose rows share their weights
//!   stored once (four bytes an entry), for repeated SpMV of refinement
//!   operators.
//! * [`mtx`]: Matrix Market files, written with exactly round-tripping
//!   values and read with symmetric expansion and line-numbered errors.
//! * CSC ↔ CSR layout conversion by a deterministic parallel counting sort
//!   ([`CscRef::to_csr`], [`CsrRef::to_csc`]); conversions with `sprs` and
//!   `nalgebra-sparse` ([`interop`]).
//!
//! # Determinism
//! Every routine gives bitwise identical results for every [`Par`] and every
//! rayon pool size: each output element is produced by one task, in an order
//! fixed by the data (documented per routine), never by thread timing.
//!
//! # Errors and panics
//! Problems in the *data* (malformed arrays, sizes over `u32`) are
//! [`AlgebraError`]s naming the offending slice and position. Violations of
//! a routine's contract by the *caller* (mismatched shapes, wrong buffer
//! lengths) panic with a message naming the operands.
//!
//! # Example: face points of a mesh (Eq. 2–3)
//! ```
//! use ndarray::array;
//! use subla_algebra::{CscMat, Par, spmv::spmv_csr};
//! // Mesh matrix M (|v| x |f|): two triangles (0 1 2) and (1 3 2); the
//! // value of an entry is the corner's position in its face (1-based).
//! let m = CscMat::try_from_triplets(4, 2, &[
//!     (0, 0, 1u32), (1, 0, 2), (2, 0, 3),
//!     (1, 1, 1), (3, 1, 2), (2, 1, 3),
//! ])?;
//! let p = array![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
//! // c = M^T 1 with val -> 1 (face orders), then f = M^T P with val -> 1/c.
//! let mt = m.as_ref().transpose();
//! let ones = ndarray::Array2::ones((4, 1));
//! let c = spmv_csr(mt, ones.view(), |_, _, _| 1.0, Par::Seq);
//! let f = spmv_csr(mt, p.view(), |_, face, _| 1.0 / c[(face as usize, 0)], Par::Seq);
//! assert_eq!(f, array![[1.0 / 3.0, 1.0 / 3.0], [2.0 / 3.0, 2.0 / 3.0]]);
//! # Ok::<(), subla_algebra::AlgebraError>(())
//! ```
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod blocks;
mod convert;
pub mod csc;
pub mod csr;
pub mod error;
pub mod interop;
pub mod mem;
pub mod mtx;
pub mod padded;
pub mod par;
pub mod scan;
pub mod shared;
pub mod spgemm;
pub mod spmv;
pub mod storage;

#[cfg(feature = "proptest-support")]
pub mod proptest_support;

pub use csc::{CscMat, CscMut, CscPattern, CscPatternRef, CscRef};
pub use csr::{CsrMat, CsrMut, CsrPattern, CsrPatternRef, CsrRef};
pub use error::{AlgebraError, Result};
pub use padded::PaddedCsr;
pub use par::Par;
pub use shared::SharedCsr;
pub use storage::{Csc, Csr, Layout, Pattern, PatternRef, SparseMat, SparseMut, SparseRef};

/// Scalars the numeric kernels work with: `f32`, `f64`, the integer types,
/// or anything with `0`, `+` and `*` that can cross threads.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + num_traits::Zero
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + PartialEq
    + std::fmt::Debug
    + 'static
{
}

impl<T> Scalar for T where
    T: Copy
        + Send
        + Sync
        + num_traits::Zero
        + std::ops::Add<Output = T>
        + std::ops::Mul<Output = T>
        + PartialEq
        + std::fmt::Debug
        + 'static
{
}
