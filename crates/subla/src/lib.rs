//! **subla**: mesh subdivision written as sparse linear algebra.
//!
//! This facade re-exports the public API of the workspace's crates. Today
//! that is the mapped sparse algebra ([`algebra`]): CSC/CSR matrices, mapped
//! SpMV and mapped SpGEMM with action maps and lambdas (Mlakar et al. 2020,
//! §3.1), scans and enumeration.
#![deny(missing_docs)]

pub use subla_algebra as algebra;
pub use subla_algebra::{AlgebraError, CscMat, CscRef, CsrMat, CsrRef, Par};
