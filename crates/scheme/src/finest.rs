//! The finest level of a plan kept as faces only.
//!
//! Eval never reads the connectivity of the finest level, and deriving it
//! (edges, incidences, tags) costs more than the faces themselves. Plans
//! keep the faces of their finest level in a [`FinestFaces`], hand them out
//! through [`Plan::faces`](crate::Plan::faces), and derive the full mesh
//! only when [`Plan::refined`](crate::Plan::refined) asks for it, once.

use std::sync::OnceLock;

use subla_mesh::Mesh;

use crate::{Faces, Result};

/// The faces of a plan's finest level, and its full mesh once derived.
#[derive(Clone, Debug)]
pub struct FinestFaces {
    num_vertices: usize,
    /// Vertices per face.
    order: usize,
    face_verts: Vec<u32>,
    holes: Vec<bool>,
    full: OnceLock<Mesh>,
}

impl FinestFaces {
    /// Faces of `order` vertices each (`face_verts.len() / order` faces)
    /// over `num_vertices` vertices, with a hole flag per face. The caller
    /// guarantees the shapes (`order > 0`, whole faces, one flag per face)
    /// and that the corner count fits in `u32`, as the splits that produce
    /// such faces check (debug builds assert it). No face offsets are kept
    /// ([`Faces::uniform`]).
    pub fn uniform(num_vertices: usize, order: usize, face_verts: Vec<u32>, holes: Vec<bool>) -> Self {
        debug_assert!(order > 0 && face_verts.len() % order == 0, "whole faces");
        debug_assert!(u32::try_from(face_verts.len()).is_ok(), "corner count fits in u32");
        debug_assert_eq!(holes.len(), face_verts.len() / order.max(1), "one hole flag per face");
        FinestFaces { num_vertices, order: order.max(1), face_verts, holes, full: OnceLock::new() }
    }

    /// Number of vertices (rows of data at this level).
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    /// The faces.
    pub fn faces(&self) -> Faces<'_> {
        Faces::uniform(self.num_vertices, self.order, &self.face_verts, &self.holes)
    }

    /// The full mesh, derived by `derive` on the first call and kept.
    ///
    /// # Errors
    /// `derive`'s; nothing is kept then, and a later call tries again.
    pub fn full(&self, derive: impl FnOnce() -> Result<Mesh>) -> Result<&Mesh> {
        crate::once::get_or_try_init(&self.full, derive)
    }

    /// The full mesh if [`FinestFaces::full`] derived it.
    pub fn into_full(self) -> Option<Mesh> {
        self.full.into_inner()
    }
}
