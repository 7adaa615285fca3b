//! GPU tests, one binary (one device, pipelines compiled once). They run on
//! any adapter (lavapipe in CI, with `SUBLA_REQUIRE_GPU=1`) and skip where
//! none exists; the CPU routines of `subla-algebra` are the oracle.

mod common;

mod balanced;
mod compact;
mod context;
mod scan;
mod spmv;
mod transpose;
