//! Loop subdivision for subla (Loop 1987; Mlakar et al. 2020, Appendix B),
//! behind the [`subla_scheme::Refiner`] / [`subla_scheme::Plan`] traits.
//!
//! * [`split`]: the uniform 1-to-4 triangle split (topology), with the
//!   vertex, face and edge order documented there.
//! * [`stencil`]: what Loop's masks read of a child known through its
//!   parent's split numbering, for the lean level below the finest.
//! * [`LoopSlak`]: Loop through specialised gather kernels, with
//!   OpenSubdiv's boundary, crease (uniform and Chaikin), corner,
//!   non-manifold and hole rules ([`rules`]), or CGAL's boundary rule
//!   ([`Rules::Cgal`]).
//! * [`LoopHalfedge`]: Loop through closed-form halfedge refinement (each
//!   refined level's connectivity computed per element from its
//!   parent's: no sort, no search), with the same rules.
//! * [`LoopLak`]: the same scheme written as mapped SpGEMM and SpMV
//!   (Eq. 28–31), agreeing with the SLAK path to rounding.
//! * Refinement matrices `R_i` (§6.3) built from each level's topology
//!   ([`subla_scheme::Plan::operator`]), and OpenSubdiv's Loop limit masks
//!   as a matrix ([`subla_scheme::Plan::limit`]).
//!
//! Loop refines triangles only: a mesh with any other face is refused with
//! [`subla_scheme::SchemeError::NotTriangles`] naming the first such face, as
//! OpenSubdiv refuses it. To refine such a mesh anyway, triangulate it
//! first, explicitly ([`subla_mesh::Mesh::triangulated`]; `--triangulate`
//! in the `subla` tool).
//!
//! # Vertex order of a refined level
//! Updated vertices (in parent order), then edge points (in edge-id order);
//! see [`split`] for the face order.
#![deny(missing_docs)]

pub mod fvar;
pub mod halfedge;
mod lak;
mod lean;
mod level;
mod operator;
pub mod rules;
mod slak;
pub mod split;
pub mod stencil;

pub use halfedge::{LoopHalfedge, LoopHalfedgePlan};
pub use lak::{LakLevel, LakPlan, LoopLak, LoopLakRules};
pub use level::{EdgeMask, Rules, Step, VertexMask};
pub use slak::{LoopPlan, LoopRules, LoopSlak, OwnedStep, StepView};
