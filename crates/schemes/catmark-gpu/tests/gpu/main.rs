//! GPU tests of `subla-catmark-gpu`, one binary (one device, pipelines
//! compiled once). They run on any adapter (lavapipe in CI, with
//! `SUBLA_REQUIRE_GPU=1`) and skip where none exists; the CPU plan of
//! `subla_catmark::CatmarkSlak` is the oracle.

mod common;

mod agreement;
mod limits;
mod linearity;
