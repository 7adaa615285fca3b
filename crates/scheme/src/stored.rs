//! The meshes a plan keeps below its finest level, one of them possibly in
//! a scheme's lean form.
//!
//! Eval of a level reads that level's connectivity, so plans keep the full
//! meshes of the levels below the finest. The level just below the finest
//! is the largest of them and is read once; a scheme that can evaluate it
//! through its parent (Loop's and √3's lean children) keeps it in that
//! form instead, and derives its full mesh only when something asks for it.
//! [`LevelMeshes`] holds both kinds for [`LevelPlan`](crate::LevelPlan).

use std::sync::OnceLock;

use subla_mesh::Mesh;

use crate::{Result, SchemeError};

/// The stored levels `0..k` of a plan (the levels below its finest): full
/// meshes of levels `0..j`, then, optionally, level `j` in lean form (`L`,
/// known through its parent: the last full mesh, or for a plan whose level
/// 0 is lean, the mesh below it), its full mesh derived on first use.
#[derive(Clone, Debug)]
pub(crate) struct LevelMeshes<L> {
    full: Vec<Mesh>,
    lean: Option<Lean<L>>,
}

/// A lean level with its full mesh once derived.
#[derive(Clone, Debug)]
struct Lean<L> {
    /// The parent when the lean level is level 0.
    below: Option<Mesh>,
    data: L,
    full: OnceLock<Mesh>,
}

impl<L: Clone> LevelMeshes<L> {
    /// Full meshes only.
    pub(crate) fn new(full: Vec<Mesh>) -> Self {
        LevelMeshes { full, lean: None }
    }

    /// Full meshes, then the lean level `data` over the last of them.
    pub(crate) fn with_lean(full: Vec<Mesh>, data: L) -> Self {
        LevelMeshes { full, lean: Some(Lean { below: None, data, full: OnceLock::new() }) }
    }

    /// Only a lean level 0, over `below` (the level under it, which the
    /// plan does not count).
    pub(crate) fn lean_over(below: Mesh, data: L) -> Self {
        LevelMeshes { full: Vec::new(), lean: Some(Lean { below: Some(below), data, full: OnceLock::new() }) }
    }

    /// The full meshes (levels `0..j`).
    pub(crate) fn full_meshes(&self) -> &[Mesh] {
        &self.full
    }

    /// The lean level's index, if there is one.
    pub(crate) fn lean_level(&self) -> Option<u32> {
        self.lean.as_ref().map(|_| self.full.len() as u32)
    }

    /// The lean level's parent and data, if there is one.
    pub(crate) fn lean(&self) -> Option<(&Mesh, &L)> {
        let lean = self.lean.as_ref()?;
        Some((lean.below.as_ref().or(self.full.last())?, &lean.data))
    }

    /// The full mesh of stored level `level` (`None` past the stored
    /// levels); the lean one is derived on first use by `derive` (from its
    /// parent and a copy of its lean data) and kept.
    ///
    /// # Errors
    /// `derive`'s; nothing is kept then.
    pub(crate) fn mesh(&self, level: u32, derive: impl FnOnce(&Mesh, L) -> Result<Mesh>) -> Result<Option<&Mesh>> {
        let l = level as usize;
        if let Some(m) = self.full.get(l) {
            return Ok(Some(m));
        }
        let Some(lean) = self.lean.as_ref().filter(|_| l == self.full.len()) else { return Ok(None) };
        let Some(parent) = lean.below.as_ref().or(self.full.last()) else { return Ok(None) };
        crate::once::get_or_try_init(&lean.full, || derive(parent, lean.data.clone())).map(Some)
    }

    /// The full mesh of stored level `level`, taken out (derived by
    /// `derive` if it is the lean one, from its lean data, after everything
    /// else is dropped).
    ///
    /// # Errors
    /// [`SchemeError::NoSuchLevel`] past the stored levels; `derive`'s.
    pub(crate) fn into_mesh(mut self, level: u32, derive: impl FnOnce(&Mesh, L) -> Result<Mesh>) -> Result<Mesh> {
        let l = level as usize;
        let stored = (self.full.len() + usize::from(self.lean.is_some())) as u32;
        let missing = SchemeError::NoSuchLevel { level, levels: stored };
        if l < self.full.len() {
            return Ok(self.full.swap_remove(l));
        }
        let Lean { below, data, full } = self.lean.take().filter(|_| l == self.full.len()).ok_or(missing)?;
        if let Some(mesh) = full.into_inner() {
            return Ok(mesh);
        }
        let parent = match below {
            Some(m) => m,
            None => self.full.pop().ok_or(SchemeError::NoSuchLevel { level, levels: stored })?,
        };
        drop(self);
        derive(&parent, data)
    }
}
