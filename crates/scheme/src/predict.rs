//! Sizes predicted from counts alone, before anything is built: the
//! counts of every refined level and an upper bound of each step's
//! operator, so that a caller can refuse a refinement over its memory
//! budget (or over the `u32` indices) without allocating it.
//!
//! A scheme predicts through [`LevelRules::child_counts`] and
//! [`LevelRules::operator_bound_of_counts`]; [`predict()`] walks the levels
//! and stops at the first count over `u32` ([`SchemeError::LevelTooLarge`]),
//! so even `u32::MAX` levels cost a few dozen steps. [`Refiner::predict`]
//! is the same for a refiner, on its input.
//!
//! ```text
//!   level 0        counts of the control mesh (LevelCounts::of)
//!   level l + 1    rules.child_counts(level l)          (exact or a bound)
//!   R_l            rules.operator_bound_of_counts(level l)   (a bound)
//! ```
//!
//! [`Refiner::predict`]: crate::Refiner::predict

use subla_mesh::Topology;

use crate::refinement::csr_bytes;
use crate::{LevelRules, Result, SchemeError};

/// The counts of one level that its child's counts and its operator's
/// size are predicted from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LevelCounts {
    /// Vertices (rows of data).
    pub vertices: u128,
    /// Edges.
    pub edges: u128,
    /// Faces.
    pub faces: u128,
    /// Corners (the sum of the face orders).
    pub corners: u128,
    /// Edges with one face.
    pub boundary_edges: u128,
    /// The sum of the squares of the face orders.
    pub order_squares: u128,
}

impl LevelCounts {
    /// The counts of `t`.
    pub fn of(t: &Topology) -> LevelCounts {
        let fp = t.face_ptr();
        let order_squares = fp.windows(2).map(|w| u128::from(w[1] - w[0]).pow(2)).sum();
        let boundary_edges = (0..t.num_edges()).filter(|&e| t.edge_corners(e).len() == 1).count();
        LevelCounts {
            vertices: t.num_vertices() as u128,
            edges: t.num_edges() as u128,
            faces: t.num_faces() as u128,
            corners: t.num_corners() as u128,
            boundary_edges: boundary_edges as u128,
            order_squares,
        }
    }

    /// The counts of a level of quads only (`faces` of them).
    pub fn quads(vertices: u128, edges: u128, faces: u128, boundary_edges: u128) -> LevelCounts {
        LevelCounts { vertices, edges, faces, corners: 4 * faces, boundary_edges, order_squares: 16 * faces }
    }

    /// The counts of a level of triangles only (`faces` of them).
    pub fn triangles(vertices: u128, edges: u128, faces: u128, boundary_edges: u128) -> LevelCounts {
        LevelCounts { vertices, edges, faces, corners: 3 * faces, boundary_edges, order_squares: 9 * faces }
    }

    /// The first count over `u32`, named.
    fn over_u32(&self) -> Option<(&'static str, u128)> {
        let max = u128::from(u32::MAX);
        [("vertices", self.vertices), ("edges", self.edges), ("faces", self.faces), ("corners", self.corners)]
            .into_iter()
            .find(|&(_, n)| n > max)
    }
}

/// What [`predict()`] foresees for a refinement: the counts of every level
/// (`0 ..= levels`) and, where the scheme bounds them, the nonzeros of each
/// step's operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// Counts of levels `0 ..= L`.
    pub levels: Vec<LevelCounts>,
    /// Upper bounds of the nonzeros of `R_0 … R_{L−1}`; empty where the
    /// scheme gives none.
    pub operator_nnz: Vec<u128>,
}

impl Prediction {
    /// The counts of the finest level.
    pub fn finest(&self) -> LevelCounts {
        self.levels.last().copied().unwrap_or_default()
    }

    /// Bytes of the per-level matrices in `f64` CSR
    /// ([`Refinement::chain`](crate::refinement::Refinement::chain)), an
    /// upper bound; `None` where the scheme bounds no operator.
    pub fn chain_bytes(&self) -> Option<u128> {
        if self.operator_nnz.len() + 1 != self.levels.len() {
            return None;
        }
        let bytes = |l: usize| {
            let rows = self.levels[l + 1].vertices;
            4u128.saturating_mul(rows + 1).saturating_add(12u128.saturating_mul(self.operator_nnz[l]))
        };
        Some((0..self.operator_nnz.len()).map(bytes).fold(0u128, u128::saturating_add))
    }

    /// Bytes of the limit operator over the finest level in `f64` CSR, an
    /// upper bound (limit masks reach the faces around a vertex: `V + Σ
    /// n_f (n_f − 1)` nonzeros).
    pub fn limit_bytes(&self) -> u128 {
        let f = self.finest();
        let nnz = f.vertices + f.order_squares.saturating_sub(f.corners);
        4 * (f.vertices + 1) + 12 * nnz
    }
}

/// The prediction of `levels` levels of `rules` over `base` (level
/// `first_level` of the refinement), or `None` where the rules predict no
/// counts.
///
/// # Errors
/// [`SchemeError::LevelTooLarge`] at the first level with a count over
/// `u32` (found in at most a few dozen steps, whatever `levels`: counts
/// grow at least threefold per step on a mesh with faces).
pub fn predict<R: LevelRules>(rules: &R, base: &Topology, first_level: u32, levels: u32) -> Result<Option<Prediction>> {
    predict_from(rules, LevelCounts::of(base), first_level, levels)
}

/// [`predict()`] from the counts of level 0.
///
/// # Errors
/// As [`predict()`].
pub fn predict_from<R: LevelRules>(
    rules: &R,
    base: LevelCounts,
    first_level: u32,
    levels: u32,
) -> Result<Option<Prediction>> {
    let mut counts = vec![base];
    let mut nnz = Vec::new();
    let mut bounded = true;
    let mut c = base;
    for l in 0..levels {
        let level = first_level.wrapping_add(l);
        let Some(child) = rules.child_counts(&c, level) else { return Ok(None) };
        match rules.operator_bound_of_counts(&c, level) {
            Some(n) if bounded => nnz.push(n),
            _ => bounded = false,
        }
        if let Some((what, value)) = child.over_u32() {
            return Err(SchemeError::LevelTooLarge { scheme: rules.name(), level: l + 1, what, value });
        }
        if child == c {
            // Nothing grows (a mesh without faces): no count can overflow,
            // and the levels are not listed.
            return Ok(None);
        }
        counts.push(child);
        c = child;
    }
    if !bounded {
        nnz.clear();
    }
    Ok(Some(Prediction { levels: counts, operator_nnz: nnz }))
}

/// Checks, before a build allocates anything, that no level of `levels`
/// over `base` has a count over `u32` (where the rules predict counts).
///
/// # Errors
/// [`SchemeError::LevelTooLarge`].
pub(crate) fn check_levels<R: LevelRules>(rules: &R, base: &Topology, first_level: u32, levels: u32) -> Result<()> {
    predict(rules, base, first_level, levels).map(drop)
}

/// Bytes of an `f64` CSR matrix, as [`csr_bytes`], for predicted counts.
pub fn csr_bytes_of(rows: u128, nnz: u128) -> u128 {
    match (usize::try_from(rows), u64::try_from(nnz)) {
        (Ok(r), Ok(n)) => u128::from(csr_bytes(r, n)),
        _ => 4u128.saturating_mul(rows.saturating_add(1)).saturating_add(12u128.saturating_mul(nnz)),
    }
}
