//! **subla**: mesh subdivision written as sparse linear algebra.
//!
//! This facade re-exports the public API of the workspace's crates:
//!
//! * [`algebra`]: CSC/CSR matrices, mapped SpMV and mapped SpGEMM with action
//!   maps and lambdas (Mlakar et al. 2020, §3.1), scans and enumeration;
//! * [`mesh`]: control meshes (the mesh matrix and derived connectivity),
//!   OpenSubdiv-style tags and options, OBJ and PLY I/O, validation;
//! * [`scheme`]: the build/eval traits subdivision schemes implement;
//! * [`catmark`]: Catmull-Clark (specialised kernels and mapped algebra) and
//!   bilinear subdivision, matching OpenSubdiv;
//! * [`loop_scheme`]: Loop subdivision (specialised kernels and mapped
//!   algebra), with OpenSubdiv's or CGAL's rules;
//! * [`sqrt3`]: Kobbelt's √3 subdivision (specialised kernels and mapped
//!   algebra), matching CGAL;
//! * [`adaptive`]: feature-adaptive and selective Catmull-Clark
//!   refinement, patch tables with OpenSubdiv's end caps, and the limit
//!   surface at (ptex face, u, v): batched evaluation, limit matrices,
//!   tessellation;
//! * [`analysis`]: local subdivision analysis — the subdivision matrix of
//!   any scheme around an extraordinary vertex, its block-circulant
//!   structure and its spectrum;
//! * [`registry`]: the table of schemes and their implementations, as
//!   type-erased refiners that tools dispatch through;
//! * with the `gpu` feature, `gpu` (wgpu context and kernels),
//!   `catmark_gpu` (Catmull-Clark built and evaluated on the GPU) and
//!   `tri_gpu` (Loop and √3 evaluated on the GPU);
//! * with the `testing` feature, `testing`: the contract checks every
//!   scheme's test suite runs, for schemes of your own too;
//! * `sprs` and `nalgebra_sparse` (features of the same names, on by
//!   default), the versions the conversions are written for.
//!
//! # Features
//! | feature | default | what |
//! |---|---|---|
//! | `sprs` | yes | conversions to and from `sprs`, re-exported as [`sprs`] |
//! | `nalgebra-sparse` | yes | conversions to and from `nalgebra-sparse`, re-exported as [`nalgebra_sparse`] |
//! | `gpu` | no | the wgpu crates and the GPU implementations of the registry |
//! | `testing` | no | `subla::testing` (contract checks) and the proptest strategies |
//! | `proptest-support` | no | proptest strategies of the algebra and mesh layers |
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod analysis;
pub mod registry;

#[cfg(feature = "nalgebra-sparse")]
pub use nalgebra_sparse;
#[cfg(feature = "sprs")]
pub use sprs;
pub use subla_adaptive as adaptive;
pub use subla_algebra as algebra;
pub use subla_algebra::{AlgebraError, CscMat, CscRef, CsrMat, CsrRef, Par};
pub use subla_catmark as catmark;
pub use subla_catmark::{CatmarkLak, CatmarkSlak};
#[cfg(feature = "gpu")]
pub use subla_catmark_gpu as catmark_gpu;
#[cfg(feature = "gpu")]
pub use subla_gpu as gpu;
pub use subla_loop as loop_scheme;
pub use subla_loop::{LoopLak, LoopSlak};
pub use subla_mesh as mesh;
pub use subla_mesh::{Mesh, MeshData, MeshError, Topology, Validation};
pub use subla_scheme as scheme;
#[cfg(feature = "testing")]
pub use subla_scheme::testing;
pub use subla_scheme::{BoxedPlan, DynRefiner, Plan, Refiner, SchemeError, eval, modeling};
pub use subla_solid as solid;
pub use subla_sqrt3 as sqrt3;
pub use subla_sqrt3::{Sqrt3Lak, Sqrt3Slak};
#[cfg(feature = "gpu")]
pub use subla_tri_gpu as tri_gpu;
pub use subla_volume as volume;
