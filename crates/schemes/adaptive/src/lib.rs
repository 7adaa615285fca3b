//! Feature-adaptive and selective subdivision (Mlakar et al. 2020, §5.2;
//! Nießner et al. 2012): sparse refinement around the features of a mesh,
//! patch tables that cover the rest with regular patches, and the limit
//! surface at any (ptex face, u, v) as a linear map from control points.
#![deny(missing_docs)]

pub mod basis;
pub mod endcap;
pub mod eval;
pub mod loop_endcap;
mod patches;
pub mod select;
pub mod sparse;
pub mod table;
mod tags;
pub mod tessellate;

pub use eval::{Limit, LimitMatrices, Sample, grid};
pub use sparse::{FacePtex, Level, Scheme, SparseRefinement, Stencils};
pub use table::{EndCap, EndCapRow, EndCapRows, Patch, PatchCounts, PatchTable};
pub use tessellate::Tessellation;

/// What adaptive refinement refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdaptiveError {
    /// The isolation level is outside 1–10.
    #[error("isolation level {level} is outside 1-10")]
    IsolationLevel {
        /// The level asked for.
        level: u32,
    },
    /// A selected face does not exist.
    #[error("selected face {face} does not exist (the mesh has {num_faces} faces)")]
    NoSuchFace {
        /// The face.
        face: u32,
        /// Faces of the mesh.
        num_faces: usize,
    },
    /// A ptex face does not exist.
    #[error("ptex face {ptex} does not exist (the mesh has {num_ptex} ptex faces)")]
    NoSuchPtexFace {
        /// The ptex face.
        ptex: u32,
        /// Ptex faces of the mesh.
        num_ptex: u32,
    },
    /// No patch covers the sample: the ptex face is a hole.
    #[error("ptex face {ptex} has no patch (it is a hole)")]
    NoPatch {
        /// The ptex face.
        ptex: u32,
    },
    /// A refined level would take the refinement over its memory budget
    /// ([`SparseRefinement::build_within`]).
    #[error(
        "level {level} would bring the adaptive refinement to about {bytes} bytes, over the budget of {budget} bytes"
    )]
    OverBudget {
        /// The level refused.
        level: u32,
        /// Bytes the levels up to it would take, about.
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// An output would not fit the index types.
    #[error("{what} would be too large for 32-bit indices")]
    TooLarge {
        /// What.
        what: &'static str,
    },
    /// An irregular face whose corners OpenSubdiv's end-cap construction
    /// cannot number.
    #[error("level {level}, face {face}: no end cap for this corner configuration: {reason}")]
    UnsupportedEndCap {
        /// The refinement level of the face.
        level: u32,
        /// The face, numbered within its level.
        face: u32,
        /// What the source patch refused.
        reason: crate::endcap::SourcePatchError,
    },
    /// An odd tessellation rate on a mesh with faces other than quads (whose
    /// ptex faces span half an edge).
    #[error("tessellation rate {rate} is odd: a mesh with faces other than quads needs an even rate")]
    OddRate {
        /// The rate asked for.
        rate: u32,
    },
    /// A sparse matrix could not be built.
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
    /// The mesh was refused.
    #[error(transparent)]
    Mesh(#[from] subla_mesh::MeshError),
    /// The scheme refused the mesh.
    #[error(transparent)]
    Scheme(#[from] subla_scheme::SchemeError),
}
