//! Quad-refining subdivision schemes of subla, behind the
//! [`subla_scheme::Refiner`] / [`subla_scheme::Plan`] traits.
//!
//! * [`refine`]: uniform topology refinement (each corner → a quad; Mlakar
//!   et al. 2020, Eq. 12, Alg. 3), with the vertex and face order
//!   documented there.
//! * [`bilinear`]: bilinear subdivision (centroids and midpoints).
//! * [`CatmarkSlak`]: Catmull-Clark through specialised kernels, with
//!   OpenSubdiv's boundary, crease, corner and non-manifold rules
//!   ([`rules`]).
//! * [`CatmarkLak`]: the same scheme written as mapped SpMV/SpGEMM
//!   (Eq. 2–12), agreeing with the SLAK path to rounding.
//! * [`CatmarkEdgeFriend`]: the same scheme through the edge-friend
//!   encoding (Kuth et al. 2023): after one step by the specialised
//!   kernels, 24 bytes a quad and one gather pass per level.
//! * [`CatmarkHalfedge`]: the same scheme through closed-form halfedge
//!   refinement (Dupuy & Vanhoey 2021): after one step by the kernels,
//!   each quad level's connectivity one read of its parent's per element.
//! * Refinement matrices `R_i` (§6.3) built directly from each level's
//!   topology ([`subla_scheme::Plan::operator`]), and OpenSubdiv's limit
//!   masks as a matrix ([`subla_scheme::Plan::limit`]).
//!
//! # Vertex order of a refined level
//! Updated vertices, then face points, then edge points (§3.2); see
//! [`refine`] for the face order.
#![deny(missing_docs)]

pub mod bilinear;
pub mod edgefriend;
pub mod fvar;
pub mod halfedge;
mod lak;
mod level;
mod operator;
pub mod refine;
mod regular;
/// OpenSubdiv's crease rules, which Catmull-Clark applies with its own
/// masks: they are scheme-independent and live in [`subla_scheme::sdc`];
/// re-exported so that `subla_catmark::rules` paths keep working.
pub use subla_scheme::sdc as rules;
mod slak;

pub use bilinear::{Bilinear, BilinearPlan, BilinearRules};
pub use edgefriend::{CatmarkEdgeFriend, EdgeFriendPlan};
pub use halfedge::{CatmarkHalfedge, CatmarkHalfedgePlan};
pub use lak::{CatmarkLak, CatmarkLakRules, LakLevel, LakPlan};
pub use level::{EdgeMask, Step, VertexMask};
pub use slak::{CatmarkPlan, CatmarkRules, CatmarkSlak, OwnedStep, StepView};
