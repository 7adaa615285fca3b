//! Control meshes for subla: everything a subdivision scheme needs to know
//! about its input, read from the formats users have, with bad input turned
//! into clear errors.
//!
//! * [`Topology`]: the mesh matrix `M` (Mlakar et al. 2020, §3.1 and §4) in
//!   traversal order, faces of any order ≥ 3, and what the kernels derive
//!   from it: face orders, valences, the corner → face map (§4.2), a
//!   deterministic edge numbering (§4.1) with boundary and non-manifold
//!   tags, and 1-ring access.
//! * [`Mesh`]: topology plus OpenSubdiv's tags (edge and vertex sharpness,
//!   holes) and [`Options`] (boundary interpolation, crease method, triangle
//!   rule, face-varying interpolation).
//! * [`obj`] and [`ply`]: readers and writers. Vertex data are
//!   `ndarray::Array2<f64>` (convert to `f32` with `mapv`); any number of
//!   channels.
//! * [`normals`]: vertex normals from the faces (area-weighted, any face
//!   order, holes left out).
//! * Validation: see [`Validation`] for what is an error and what is
//!   accepted and tagged; every [`MeshError`] names the face, edge (as a
//!   vertex pair), vertex or file line.
#![deny(missing_docs)]

pub mod data;
pub mod error;
pub mod matrices;
pub mod mesh;
pub mod normals;
pub mod obj;
pub mod ply;
pub mod shapes;
pub mod split;
pub mod split_quad;
pub mod split_tri;
pub mod tags;
pub mod topology;

#[cfg(feature = "proptest-support")]
pub mod proptest_support;

pub use data::{Dropped, FaceVarying, FacesData, FileFormat, Group, GroupKind, MeshData, Skipped};
pub use error::{Location, MeshError, Result, SharpnessTarget};
pub use mesh::{Mesh, MeshBuilder, Validation};
pub use split_quad::QuadSplit;
pub use split_tri::{TriChild, TriSplit};
pub use tags::{BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, Options, TriangleSubdivision};
pub use topology::Topology;
