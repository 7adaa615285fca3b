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
//! * with the `gpu` feature, `gpu` (wgpu context and kernels) and
//!   `catmark_gpu` (Catmull-Clark eval on the GPU).
#![deny(missing_docs)]

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
pub use subla_scheme::{Plan, Refiner};
pub use subla_sqrt3 as sqrt3;
pub use subla_sqrt3::{Sqrt3Lak, Sqrt3Slak};
