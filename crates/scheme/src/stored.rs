//! The meshes a plan keeps below its finest level, one of them possibly in
//! a scheme's lean form.
//!
//! Eval of a level reads that level's connectivity, so plans keep the full
//! meshes of the levels below the finest. The level just below the finest
//! is the largest of them and is read once; a scheme that can evaluate it
//! through its parent (Loop's and √3's lean children) keeps it in that
//! form instead, and derives its full mesh only when something asks for it.
//! [`LevelMeshes`] holds both kinds for [`LevelPlan`](crate::LevelPlan)
//! and for plans of other shapes.

use std::sync::OnceLock;

use subla_algebra::Par;
use subla_mesh::Mesh;

use crate::{Result, SchemeError};

/// Derives the full mesh of a lean level from its parent and its lean
/// data (which the derivation may reuse, as a split reuses its numbering).
pub type DeriveChild<L> = fn(&Mesh, L, Par) -> Result<Mesh>;

/// The stored levels `0..k` of a plan (the levels below its finest): full
/// meshes of levels `0..j`, then, optionally, level `j` in lean form (`L`,
/// known through its parent: the last full mesh, or for a plan whose level
/// 0 is lean, the mesh below it), its full mesh derived on first use.
#[derive(Clone, Debug)]
pub struct LevelMeshes<L> {
    full: Vec<Mesh>,
    lean: Option<Lean<L>>,
    derive: DeriveChild<L>,
}

/// A lean level with its full mesh once derived.
#[derive(Clone, Debug)]
struct Lean<L> {
    /// The parent when the lean level is level 0.
    below: Option<Mesh>,
    data: L,
    full: OnceLock<Option<Mesh>>,
}

impl<L: Clone> LevelMeshes<L> {
    /// Full meshes only; `derive` makes a lean level's full mesh, should one
    /// be added.
    pub fn new(full: Vec<Mesh>, derive: DeriveChild<L>) -> Self {
        LevelMeshes { full, lean: None, derive }
    }

    /// Full meshes, then the lean level `data` over the last of them.
    pub fn with_lean(full: Vec<Mesh>, data: L, derive: DeriveChild<L>) -> Self {
        LevelMeshes { full, lean: Some(Lean { below: None, data, full: OnceLock::new() }), derive }
    }

    /// Only a lean level 0, over `below` (the level under it, which the
    /// plan does not count).
    pub fn lean_over(below: Mesh, data: L, derive: DeriveChild<L>) -> Self {
        LevelMeshes { full: Vec::new(), lean: Some(Lean { below: Some(below), data, full: OnceLock::new() }), derive }
    }

    /// The full meshes (levels `0..j`).
    pub fn full_meshes(&self) -> &[Mesh] {
        &self.full
    }

    /// The lean level's index, if there is one.
    pub fn lean_level(&self) -> Option<u32> {
        self.lean.as_ref().map(|_| self.full.len() as u32)
    }

    /// The lean level's parent and data, if there is one.
    pub fn lean(&self) -> Option<(&Mesh, &L)> {
        let lean = self.lean.as_ref()?;
        Some((lean.below.as_ref().or(self.full.last())?, &lean.data))
    }

    /// The full mesh of stored level `level`, derived on first use if it is
    /// the lean one, from a copy of its lean data (`None` past the stored
    /// levels, or if it could not be derived).
    pub fn mesh(&self, level: u32) -> Option<&Mesh> {
        let l = level as usize;
        if let Some(m) = self.full.get(l) {
            return Some(m);
        }
        let lean = self.lean.as_ref().filter(|_| l == self.full.len())?;
        let parent = lean.below.as_ref().or(self.full.last())?;
        lean.full.get_or_init(|| (self.derive)(parent, lean.data.clone(), Par::Rayon).ok()).as_ref()
    }

    /// The full mesh of stored level `level`, taken out (derived if it is
    /// the lean one, from its lean data, after everything else is
    /// dropped).
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`] past the stored levels; the derivation's
    /// errors.
    pub fn into_mesh(mut self, level: u32, par: Par) -> Result<Mesh> {
        let l = level as usize;
        let stored = (self.full.len() + usize::from(self.lean.is_some())) as u32;
        let missing = SchemeError::NoSuchLevel { level, levels: stored };
        if l < self.full.len() {
            return Ok(self.full.swap_remove(l));
        }
        let Lean { below, data, full } = self.lean.take().filter(|_| l == self.full.len()).ok_or(missing)?;
        if let Some(mesh) = full.into_inner().flatten() {
            return Ok(mesh);
        }
        let parent = match below {
            Some(m) => m,
            None => self.full.pop().ok_or(SchemeError::NoSuchLevel { level, levels: stored })?,
        };
        let derive = self.derive;
        drop(self);
        derive(&parent, data, par)
    }
}
