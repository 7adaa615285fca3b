//! Feature-adaptive and selective subdivision (Mlakar et al. 2020, §5.2;
//! Nießner et al. 2012): sparse refinement around the features of a mesh,
//! patch tables that cover the rest with regular patches, and the limit
//! surface at any (ptex face, u, v) as a linear map from control points.
#![deny(missing_docs)]
pub mod endcap;
