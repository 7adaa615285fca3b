//! Kobbelt's √3 subdivision for subla (Kobbelt 2000; Mlakar et al. 2020,
//! Appendix A), behind the [`subla_scheme::Refiner`] / [`subla_scheme::Plan`]
//! traits, matching CGAL's `Subdivision_method_3::Sqrt3_subdivision` (and
//! OpenMesh's `Sqrt3T`).
//!
//! * [`Sqrt3Slak`]: specialised gather kernels per step and one triangle per
//!   parent corner.
//! * [`Sqrt3Halfedge`]: closed-form halfedge refinement of manifold
//!   meshes, closed or with boundaries (each refined level's connectivity
//!   one read of its parent's per element; `docs/sqrt3.md`), the kernels
//!   for non-manifold ones.
//! * [`Sqrt3Lak`]: the same scheme as mapped sparse algebra, Kobbelt's
//!   boundary rule included.
//! * [`split`]: the √3 split of a triangle mesh (face points and edge
//!   flips, [`Sqrt3Split`]) and its child known through the parent
//!   ([`Sqrt3Child`]), with the vertex, face and edge orders.
//!
//! # Rules
//! Each step inserts a point at the centroid of every triangle, moves every
//! old interior vertex of valence `n` to `(1 − α) v + (α/n) Σ uᵢ` with
//! `α = (4 − 2 cos(2π/n)) / 9` ([`alpha`]), and flips every old interior
//! edge. On open meshes Kobbelt's boundary rule alternates:
//!
//! * on the 1st, 3rd, … step of a plan, boundary vertices stay, boundary
//!   triangles get a centroid, and boundary edges are not flipped (a
//!   boundary edge `a → b` of triangle `f` gives the child `(a, b, F_f)`);
//! * on the 2nd, 4th, … step, boundary triangles get no centroid; their
//!   boundary edge `P2 P3` (with boundary neighbours `P1`, `P4`) is split in
//!   three at `(P1 + 16 P2 + 10 P3)/27` and `(10 P2 + 16 P3 + P4)/27`
//!   ([`BOUNDARY_EDGE`]), boundary vertices move to
//!   `(4 P1 + 19 P2 + 4 P3)/27` ([`BOUNDARY_VERTEX`]), and the triangle is
//!   split into three around its opposite vertex before its interior edges
//!   are flipped.
//!
//! # Step parity
//! Steps are counted within one plan from its first step, as CGAL counts
//! them within one call of `N` steps: a plan from [`subla_scheme::Refiner::build`]
//! starts at step 0. In modeling mode ([`subla_scheme::Refiner::step`],
//! [`subla_scheme::modeling`]) the count continues: the new plan's first
//! step is the old plan's first step plus its levels
//! ([`subla_scheme::LevelPlan::first_level`]), so modeling over `L` levels equals a static
//! plan of `L` levels. Note that two separate `build` calls of one level
//! each do *not* equal one call of two levels on open meshes (as with CGAL).
//!
//! # Vertex order of a refined level
//! The parent's vertices (updated, in parent order), then the new vertices
//! face by face in parent face order: one face point per triangle, except a
//! boundary triangle on a boundary-splitting step, which gives the two
//! trisection points of its boundary edge `a → b` (the one next to `a`
//! first).
//!
//! # Face order of a refined level
//! One child triangle per parent corner, child face `c` from corner `c`
//! (corner `c` of face `f` at vertex `a`, its edge `a → b`, third vertex
//! `o`; `X_f` is face `f`'s new vertex facing that edge: its face point, or
//! the trisection point next to the edge on a split boundary triangle):
//!
//! * interior edge, twin corner in face `g`: `(a, X_g, X_f)` — the two
//!   triangles of the flipped edge come from its two corners;
//! * boundary edge, plain step: `(a, b, F_f)`;
//! * boundary edge, splitting step: `(E_a, E_b, o)`, the middle third.
//!
//! Orientation follows the parent's. Creases, corners and holes of the
//! input are ignored (as CGAL does); non-manifold meshes and faces that are
//! not triangles are refused with [`subla_scheme::SchemeError::NotTriangles`].
#![deny(missing_docs)]

pub mod halfedge;
mod lak;
mod lean;
mod level;
mod slak;
pub mod split;

pub use halfedge::{Sqrt3Halfedge, Sqrt3HalfedgePlan};
pub use lak::{Sqrt3Lak, Sqrt3LakPlan};
pub use level::Step;
pub use level::{BOUNDARY_EDGE, BOUNDARY_VERTEX, alpha};
pub use slak::{Sqrt3Plan, Sqrt3Rules, Sqrt3Slak, StepView};
pub use split::{Sqrt3Child, Sqrt3Split};
