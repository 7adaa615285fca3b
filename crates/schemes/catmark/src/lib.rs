//! Quad-refining subdivision schemes of subla, behind the
//! [`subla_scheme::Refiner`] / [`subla_scheme::Plan`] traits.
//!
//! * [`refine`]: uniform topology refinement (each corner → a quad; Mlakar
//!   et al. 2020, Eq. 12, Alg. 3), with the vertex and face order
//!   documented there.
//! * [`bilinear`]: bilinear subdivision (centroids and midpoints).
//!
//! Catmull-Clark itself (the LAK and SLAK paths) is not implemented yet.
#![deny(missing_docs)]

pub mod bilinear;
pub mod refine;

pub use bilinear::{Bilinear, BilinearPlan};
