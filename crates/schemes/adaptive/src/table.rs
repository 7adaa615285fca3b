//! The patch table of a sparse refinement and the limit surface at
//! `(ptex face, u, v)` (OpenSubdiv's `Far::PatchTable`, `Far::PatchMap` and
//! `PatchTable::EvaluateBasis`).
//!
//! # Points
//! Every patch refers to *points*: first the vertices of every level of the
//! refinement (level 0's, then level 1's, ...), then the end caps' local
//! points, each a row of weights over the deepest level's vertices. The
//! limit at a sample is a row of weights over the patch's points, so over
//! the control points once the levels' stencils are composed: the
//! evaluation is a linear map, [`PatchTable::limit_matrices`].
//!
//! # Map
//! Each ptex face is a quadtree of squares; a patch of depth `d` at
//! `(i, j)` covers the square `[i, i+1] × [j, j+1] / 2^d` (for the
//! sub-faces of a control face that is not a quad, `2^(d-1)`). A sample
//! `(u, v)` falls in the square whose index is `⌊u 2^d⌋` (clamped to the
//! last square, so `u = 1` belongs to it), as OpenSubdiv's `PatchMap`
//! sends a coordinate on a split to the upper half.
//!
//! A Loop ptex face is a triangle; each square of the quadtree holds two
//! triangles, the second rotated by 180 degrees, and a sample is found by
//! OpenSubdiv's descent through the triangles' children (`PatchMap` with
//! triangular patches). Samples with `u + v > 1` fall in a triangle along
//! the diagonal and evaluate its polynomial outside it, as OpenSubdiv's do.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use crate::AdaptiveError;
use crate::basis::{GregoryDerivatives, PatchParam, PatchType, Weights, evaluate_basis_normalized};
use crate::endcap::{self, Corner, SourcePatch, SourcePatchError};
use crate::loop_endcap::{self, TriSourcePatch};
use crate::patches::{
    CornerInfo, Leaf, classify, irregular_corners, irregular_corners_tri, is_patch, regular_points, regular_points_tri,
};
use crate::sparse::{FacePtex, Scheme, SparseRefinement};

/// The end caps of irregular patches at the isolation level.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum EndCap {
    /// Gregory basis patches (OpenSubdiv's default, `ENDCAP_GREGORY_BASIS`);
    /// quartic Gregory triangles for Loop.
    #[default]
    GregoryBasis,
    /// Bicubic B-spline patches approximating the irregular neighbourhood
    /// (`ENDCAP_BSPLINE_BASIS`); quartic box-spline patches for Loop.
    BSplineBasis,
}

/// One patch: its type, where it lies, and its points.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Patch {
    /// The kind of patch.
    pub ty: PatchType,
    /// Where it lies in its ptex face, and its boundary edges.
    pub param: PatchParam,
    /// The refinement level of the face it covers.
    pub level: u8,
    first: u32,
}

/// Patches covering the limit surface of a mesh; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PatchTable {
    refinement: SparseRefinement,
    end_cap: EndCap,
    num_level_points: u32,
    local: EndCapRows,
    patches: Vec<Patch>,
    points: Vec<u32>,
    /// Where the patches lie: per ptex face, a tree of its squares
    /// (Catmull-Clark) or triangles (Loop).
    tree: QuadTree,
    max_depth: u8,
}

/// How many patches of each kind a table has.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchCounts {
    /// Regular B-spline patches without boundary edges.
    pub regular_interior: usize,
    /// Regular B-spline patches with boundary edges.
    pub regular_boundary: usize,
    /// End caps.
    pub end_caps: usize,
}

impl PatchTable {
    /// The patches of `refinement` with end caps `end_cap` (OpenSubdiv's
    /// `PatchTableFactory::Create` with default options otherwise).
    ///
    /// # Errors
    /// [`AdaptiveError::UnsupportedEndCap`] for an irregular face whose
    /// corners OpenSubdiv's source patch cannot number (degenerate closed
    /// meshes such as two triangles glued along all their edges).
    pub fn new(refinement: SparseRefinement, end_cap: EndCap) -> Result<Self, AdaptiveError> {
        let levels = refinement.levels();
        let mut level_offsets = Vec::with_capacity(levels.len());
        let mut total = 0u32;
        for l in levels {
            level_offsets.push(total);
            total += l.num_vertices() as u32;
        }
        let scheme = refinement.scheme();
        let has_irregular_faces = scheme == Scheme::Catmark && !levels[0].mesh().topology().is_quad_only();
        let max_level = refinement.max_level();
        let mut patches = Vec::new();
        let mut points = Vec::new();
        let mut local = EndCapRows::default();
        let triangles = scheme == Scheme::Loop;
        let mut tree = QuadTree::new(refinement.num_ptex_faces());
        let mut max_depth = 0u8;
        // The conversions depend on the corners' configuration alone: most
        // end caps share one, kept once in `local`. The keys are small
        // integers looked up once per end cap: a cryptographic hash of them
        // would cost more than the rest of the look-up.
        let mut quad_rows: HashMap<[CornerKey; 4], u32, BuildHasherDefault<SquareHasher>> = HashMap::default();
        let mut tri_rows: HashMap<[CornerKey; 3], u32, BuildHasherDefault<SquareHasher>> = HashMap::default();
        for (k, level) in levels.iter().enumerate() {
            let off = level_offsets[k];
            // Which faces are leaf patches, and of what kind: per face, in
            // parallel; the table is then assembled in face order.
            let leaves: Vec<Option<Leaf>> = (0..level.num_faces())
                .into_par_iter()
                .with_min_len(1 << 10)
                .map(|f| {
                    let leaf = is_patch(level, k, f, scheme)
                        && !(k < max_level && level.is_selected(f))
                        && level.face_ptex(f).is_some();
                    leaf.then(|| classify(level, k, f, has_irregular_faces))
                })
                .collect();
            // Room for the level's patches at once: the tables grow to
            // hundreds of megabytes on large meshes, and growing them by
            // doubling copies and faults in every page twice.
            let caps = leaves.iter().filter(|l| matches!(l, Some(Leaf::Irregular))).count();
            let num_leaves = leaves.iter().filter(|l| l.is_some()).count();
            patches.reserve_exact(num_leaves);
            points.reserve_exact(num_leaves * 16 + caps * 4);
            local.caps.reserve_exact(caps);
            for (f, leaf) in leaves.into_iter().enumerate() {
                let Some(leaf) = leaf else { continue };
                let Some(px) = level.face_ptex(f) else { continue };
                let param = PatchParam::new(px.ptex, px.depth, px.u as u16, px.v as u16, px.non_quad);
                let first = points.len() as u32;
                let (ty, param) = match leaf {
                    Leaf::Regular(mask) if scheme == Scheme::Loop => {
                        points.extend(regular_points_tri(level, f, mask).iter().map(|&p| p + off));
                        (PatchType::Loop, param.with_boundary(mask).with_regular(true))
                    }
                    Leaf::Regular(mask) => {
                        points.extend(regular_points(level, f, mask).iter().map(|&p| p + off));
                        (PatchType::Regular, param.with_boundary(mask).with_regular(true))
                    }
                    Leaf::Irregular if scheme == Scheme::Loop => {
                        let corners = irregular_corners_tri(level, f);
                        let unsupported =
                            |reason| AdaptiveError::UnsupportedEndCap { level: k as u32, face: f as u32, reason };
                        let sp = TriSourcePatch::try_new(std::array::from_fn(|i| corner_of(corners[i].0)))
                            .map_err(unsupported)?;
                        check_rings(corners.iter().map(|c| c.1.len()), |c| sp.corner_ring_size(c))
                            .map_err(unsupported)?;
                        let source = sp.gather(std::array::from_fn(|i| corners[i].1.as_slice()));
                        let ty = match end_cap {
                            EndCap::GregoryBasis => PatchType::GregoryTriangle,
                            EndCap::BSplineBasis => PatchType::Loop,
                        };
                        let conversion =
                            *tri_rows.entry(std::array::from_fn(|i| corner_key(corners[i].0))).or_insert_with(|| {
                                local.add_conversion(match end_cap {
                                    EndCap::GregoryBasis => loop_endcap::gregory_triangle(&sp),
                                    EndCap::BSplineBasis => loop_endcap::loop_box_spline(&sp),
                                })
                            });
                        local.push(conversion, &source, off, total, &mut points);
                        (ty, param)
                    }
                    Leaf::Irregular => {
                        let corners = irregular_corners(level, f);
                        let unsupported =
                            |reason| AdaptiveError::UnsupportedEndCap { level: k as u32, face: f as u32, reason };
                        let sp = SourcePatch::try_new(std::array::from_fn(|i| corner_of(corners[i].0)))
                            .map_err(unsupported)?;
                        check_rings(corners.iter().map(|c| c.1.len()), |c| sp.corner_ring_size(c))
                            .map_err(unsupported)?;
                        let source = sp.gather(std::array::from_fn(|i| corners[i].1.as_slice()));
                        let ty = match end_cap {
                            EndCap::GregoryBasis => PatchType::GregoryBasis,
                            EndCap::BSplineBasis => PatchType::Regular,
                        };
                        let conversion =
                            *quad_rows.entry(std::array::from_fn(|i| corner_key(corners[i].0))).or_insert_with(|| {
                                local.add_conversion(match end_cap {
                                    EndCap::GregoryBasis => endcap::gregory_basis(&sp),
                                    EndCap::BSplineBasis => endcap::bspline(&sp),
                                })
                            });
                        local.push(conversion, &source, off, total, &mut points);
                        (ty, param)
                    }
                };
                let index = u32::try_from(patches.len())
                    .ok()
                    .filter(|&i| i < QuadTree::NODE)
                    .ok_or(AdaptiveError::TooLarge { what: "a patch table" })?;
                if triangles {
                    tree.insert_triangle(px, index)?;
                } else {
                    tree.insert(px.ptex, px.depth - u8::from(px.non_quad), px.u, px.v, index)?;
                }
                max_depth = max_depth.max(px.depth);
                patches.push(Patch { ty, param, level: k as u8, first });
            }
        }
        local.num_columns = total as usize;
        Ok(PatchTable { refinement, end_cap, num_level_points: total, local, patches, points, tree, max_depth })
    }

    /// The patch of a Loop ptex face that holds `(u, v)`: OpenSubdiv's
    /// `PatchMap::FindPatch` descent through triangles (`u`, `v` in
    /// `[0, 1]`); a triangle's children are numbered as the refinement's.
    fn find_triangle(&self, ptex: u32, u: f64, v: f64) -> Option<usize> {
        let mut step = TriangleStep::new(u, v);
        let mut entry = self.tree.roots[ptex as usize];
        loop {
            match self.tree.square(entry) {
                Square::Patch(p) => return Some(p),
                Square::Empty => return None,
                Square::Split(node) => entry = self.tree.nodes[node][step.child()],
            }
        }
    }

    /// The refinement the table covers.
    pub fn refinement(&self) -> &SparseRefinement {
        &self.refinement
    }
    /// The end caps.
    pub fn end_cap(&self) -> EndCap {
        self.end_cap
    }
    /// The patches.
    pub fn patches(&self) -> &[Patch] {
        &self.patches
    }
    /// The points of patch `p` (see the module docs for their numbering).
    pub fn patch_points(&self, p: usize) -> &[u32] {
        let pa = &self.patches[p];
        &self.points[pa.first as usize..pa.first as usize + pa.ty.num_points()]
    }
    /// Number of points: every level's vertices, then the end caps' points.
    pub fn num_points(&self) -> usize {
        self.num_level_points as usize + self.local.num_rows()
    }
    /// Patches by kind.
    pub fn counts(&self) -> PatchCounts {
        let mut c = PatchCounts::default();
        for p in &self.patches {
            match (p.ty, p.param.is_regular(), p.param.boundary()) {
                (PatchType::Regular | PatchType::Loop, true, 0) => c.regular_interior += 1,
                (PatchType::Regular | PatchType::Loop, true, _) => c.regular_boundary += 1,
                _ => c.end_caps += 1,
            }
        }
        c
    }

    /// The patch that holds `(u, v)` of ptex face `ptex`.
    ///
    /// # Errors
    /// [`AdaptiveError::NoSuchPtexFace`].
    pub fn find(&self, ptex: u32, u: f64, v: f64) -> Result<usize, AdaptiveError> {
        let num_ptex = self.refinement.num_ptex_faces();
        if ptex >= num_ptex {
            return Err(AdaptiveError::NoSuchPtexFace { ptex, num_ptex });
        }
        let (u, v) = (u.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
        if self.refinement.scheme() == Scheme::Loop {
            return self.find_triangle(ptex, u, v).ok_or(AdaptiveError::NoPatch { ptex });
        }
        // Down the ptex face's quadtree: the square of local depth `d`
        // holding `(u, v)` is `⌊u 2^d⌋` (exact: a scaling by a power of
        // two), so its child is the last bit of the next depth's index.
        let mut entry = self.tree.roots[ptex as usize];
        let mut d = 0u32;
        loop {
            match self.tree.square(entry) {
                Square::Patch(p) => return Ok(p),
                // Every sample of a face that is not a hole lies in some patch.
                Square::Empty => return Err(AdaptiveError::NoPatch { ptex }),
                Square::Split(node) => {
                    d += 1;
                    let cells = 1u32 << d;
                    let i = ((u * f64::from(cells)) as u32).min(cells - 1);
                    let j = ((v * f64::from(cells)) as u32).min(cells - 1);
                    entry = self.tree.nodes[node][((i & 1) | ((j & 1) << 1)) as usize];
                }
            }
        }
    }

    /// Whether `(u, v)` of ptex face `ptex` lies in patch `p`'s square (what
    /// [`PatchTable::find`] would return for it): lets a caller keep the
    /// last patch found for the next sample. A triangle patch holds the
    /// samples of its ptex face where it is the whole face (depth 0), and
    /// no others (`find` walks the triangles below).
    pub(crate) fn holds(&self, p: usize, ptex: u32, u: f64, v: f64) -> bool {
        let pa = &self.patches[p];
        if pa.param.face_id() != ptex {
            return false;
        }
        if pa.ty.is_triangle() {
            return pa.param.depth() == 0;
        }
        let cells = 1u32 << (pa.param.depth() - u8::from(pa.param.non_quad_root()));
        let (u, v) = (u.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
        let i = ((u * f64::from(cells)) as u32).min(cells - 1);
        let j = ((v * f64::from(cells)) as u32).min(cells - 1);
        i == u32::from(pa.param.u()) && j == u32::from(pa.param.v())
    }

    /// The depth of the deepest patch.
    pub(crate) fn max_depth(&self) -> u8 {
        self.max_depth
    }

    /// The root square of quad ptex face `ptex`'s quadtree (a
    /// [`QuadTree`] entry; see [`PatchTable::square`]).
    pub(crate) fn quad_root(&self, ptex: u32) -> u32 {
        self.tree.roots[ptex as usize]
    }

    /// What a quadtree entry holds.
    pub(crate) fn square(&self, entry: u32) -> Square {
        self.tree.square(entry)
    }

    /// The entry of child `c` (`u` bit + 2 `v` bit) of quadtree node `node`.
    pub(crate) fn quad_child(&self, node: usize, c: usize) -> u32 {
        self.tree.nodes[node][c]
    }

    /// The weights of patch `p`'s points at `(u, v)` of its ptex face with
    /// the derivatives still in the patch's own parameters, and the factor
    /// [`PatchTable::evaluate_basis`] scales the first derivatives by.
    pub(crate) fn evaluate_basis_unscaled(&self, p: usize, u: f64, v: f64, w: &mut Weights) -> f64 {
        let pa = &self.patches[p];
        let ((s, t), sign) = if pa.ty.is_triangle() {
            let sign = if pa.param.is_triangle_rotated() { -1.0 } else { 1.0 };
            (pa.param.normalize_triangle(u, v), sign)
        } else {
            (pa.param.normalize(u, v), 1.0)
        };
        evaluate_basis_normalized(pa.ty, pa.param.boundary(), s, t, GregoryDerivatives::Approximate, w);
        sign * f64::from(1u32 << pa.param.depth())
    }

    /// The weights of patch `p`'s points for the limit at `(u, v)` of its ptex
    /// face, and their derivatives with respect to `u` and `v`, into `w`
    /// (as OpenSubdiv's `PatchTable::EvaluateBasis`, whose derivative scale
    /// is `2^depth` also for the sub-faces of faces that are not quads, and
    /// negative for rotated triangles, the second derivatives included).
    pub fn evaluate_basis(&self, p: usize, u: f64, v: f64, w: &mut Weights) {
        let pa = &self.patches[p];
        let ((s, t), sign) = if pa.ty.is_triangle() {
            let sign = if pa.param.is_triangle_rotated() { -1.0 } else { 1.0 };
            (pa.param.normalize_triangle(u, v), sign)
        } else {
            (pa.param.normalize(u, v), 1.0)
        };
        evaluate_basis_normalized(pa.ty, pa.param.boundary(), s, t, GregoryDerivatives::Approximate, w);
        let k = sign * f64::from(1u32 << pa.param.depth());
        w.scale_derivatives(k, sign * k * k);
    }

    /// Number of points that are level vertices: the table's points are the
    /// vertices of every level of [`PatchTable::refinement`] in order (level
    /// 0 first, each level's vertices numbered as in its
    /// [`Stencils`](crate::Stencils) rows), then the end caps' points
    /// ([`PatchTable::end_cap_rows`]).
    pub fn num_level_points(&self) -> usize {
        self.num_level_points as usize
    }
    /// The end caps' points (OpenSubdiv's local points): one row per point,
    /// over the level points (columns below
    /// [`PatchTable::num_level_points`], numbered across all levels). Point
    /// `num_level_points() + r` is row `r`.
    pub fn end_cap_rows(&self) -> &EndCapRows {
        &self.local
    }
}

/// What a square of a ptex face's quadtree holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Square {
    /// No patch (a hole, or a face left out of a selective refinement).
    Empty,
    /// A patch covers it.
    Patch(usize),
    /// It is split in four: the node of its children.
    Split(usize),
}

/// OpenSubdiv's `PatchMap` for quad patches: per ptex face, a quadtree of
/// its squares whose leaves are patches. An entry is a patch index, a node
/// index with [`QuadTree::NODE`] set, or [`QuadTree::EMPTY`]; a node's four
/// children are numbered `u` bit + 2 `v` bit. Looking a sample up reads one
/// entry per depth, next to the previous ptex face's for samples in order,
/// where a hash of the squares missed the cache at every look-up.
#[derive(Clone, Debug, Default)]
struct QuadTree {
    roots: Vec<u32>,
    nodes: Vec<[u32; 4]>,
}

impl QuadTree {
    const EMPTY: u32 = u32::MAX;
    const NODE: u32 = 1 << 31;

    fn new(num_ptex: u32) -> Self {
        QuadTree { roots: vec![Self::EMPTY; num_ptex as usize], nodes: Vec::new() }
    }

    fn square(&self, entry: u32) -> Square {
        if entry == Self::EMPTY {
            Square::Empty
        } else if entry & Self::NODE != 0 {
            Square::Split((entry & !Self::NODE) as usize)
        } else {
            Square::Patch(entry as usize)
        }
    }

    /// The node an entry names, a new one if it is empty; `None` if the
    /// entry is a patch.
    fn node_of(&mut self, entry: &mut u32) -> Result<Option<usize>, AdaptiveError> {
        if *entry == Self::EMPTY {
            let n = u32::try_from(self.nodes.len())
                .ok()
                .filter(|&n| n < Self::NODE)
                .ok_or(AdaptiveError::TooLarge { what: "a patch map" })?;
            self.nodes.push([Self::EMPTY; 4]);
            *entry = n | Self::NODE;
        }
        Ok((*entry & Self::NODE != 0).then_some((*entry & !Self::NODE) as usize))
    }

    /// Patch `patch` at triangle `at` of a Loop ptex face: the children
    /// on the way down are those [`TriangleStep`] takes towards the
    /// triangle's centroid (inside it, so on no edge of the descent).
    ///
    /// A Loop table can hold a patch inside another, shallower one (both
    /// patches of OpenSubdiv's table); the look-up finds the shallower, as
    /// OpenSubdiv's `PatchMap` does, so the deeper is left out of the tree.
    /// The patches are inserted level by level, shallower first.
    fn insert_triangle(&mut self, at: FacePtex, patch: u32) -> Result<(), AdaptiveError> {
        let n = f64::from(1u32 << at.depth);
        let (u, v) = (f64::from(at.u), f64::from(at.v));
        let third = 1.0 / 3.0;
        // An upright triangle's first corner is `(u, v)`; a rotated one's is
        // `2^depth - (u, v)`, its other corners one step back along each axis.
        let (cu, cv) = if at.u + at.v < 1 << at.depth {
            ((u + third) / n, (v + third) / n)
        } else {
            ((n - u - third) / n, (n - v - third) / n)
        };
        let mut step = TriangleStep::new(cu, cv);
        let mut path = [0usize; PatchParam::MAX_DEPTH as usize];
        for c in path.iter_mut().take(at.depth as usize) {
            *c = step.child();
        }
        let depth = at.depth;
        self.insert_path(at.ptex, depth, |s| path[(depth - 1 - s) as usize], patch).map(|_| ())
    }

    /// Patch `patch` at the square of local depth `depth` (counted from the
    /// ptex face) with origin `(u, v)` of ptex face `ptex`.
    fn insert(&mut self, ptex: u32, depth: u8, u: u32, v: u32, patch: u32) -> Result<(), AdaptiveError> {
        let child = |s: u8| (((u >> s) & 1) | (((v >> s) & 1) << 1)) as usize;
        let inserted = self.insert_path(ptex, depth, child, patch)?;
        debug_assert!(inserted, "a quad patch inside another");
        Ok(())
    }

    /// Patch `patch` at local depth `depth` of ptex face `ptex`, reached
    /// from the root through children `child(depth - 1)` down to
    /// `child(0)`; `false` (nothing inserted) where a patch already covers
    /// a square on the way.
    fn insert_path(
        &mut self,
        ptex: u32,
        depth: u8,
        child: impl Fn(u8) -> usize,
        patch: u32,
    ) -> Result<bool, AdaptiveError> {
        let mut entry = self.roots[ptex as usize];
        if depth == 0 {
            self.roots[ptex as usize] = patch;
            return Ok(true);
        }
        let Some(mut node) = self.node_of(&mut entry)? else { return Ok(false) };
        self.roots[ptex as usize] = entry;
        for s in (1..depth).rev() {
            let mut e = self.nodes[node][child(s)];
            let Some(next) = self.node_of(&mut e)? else { return Ok(false) };
            self.nodes[node][child(s)] = e;
            node = next;
        }
        self.nodes[node][child(0)] = patch;
        Ok(true)
    }
}

/// A walk down a Loop ptex face's triangles towards `(u, v)`: OpenSubdiv's
/// `PatchMap::FindPatch` descent (the children numbered as
/// [`tri_child_ptex`](crate::sparse::tri_child_ptex) numbers them).
pub(crate) struct TriangleStep {
    u: f64,
    v: f64,
    /// Half the side of the current triangle.
    median: f64,
    rotated: bool,
}

impl TriangleStep {
    pub(crate) fn new(u: f64, v: f64) -> Self {
        TriangleStep { u, v, median: 0.5, rotated: false }
    }

    /// The child of the current triangle that holds the point; it becomes
    /// the current one ([`triangle_step`]).
    #[inline]
    pub(crate) fn child(&mut self) -> usize {
        let child;
        (self.u, self.v, self.rotated, child) = triangle_step(self.u, self.v, self.median, self.rotated);
        self.median *= 0.5;
        child
    }
}

/// One step of the walk down a Loop ptex face's triangles: from the point
/// `(u, v)` in the current triangle (half side `m`, `rotated` or upright),
/// the point in the child that holds it, whether that child is rotated,
/// and the child.
///
/// Upright: corner 1 (`u >= m`), 2 (`v >= m`), the middle 3 (rotated) if
/// the point is past its diagonal, else 0. Rotated: corner 1 (`u < m`), 2
/// (`v < m`), else the middle 3 (upright) if the point is before its
/// diagonal, else 0. Either way `u` drops by `m` exactly where `u >= m`.
///
/// Without branches: the samples of a face fall anywhere in it, so a
/// branch per comparison would be mispredicted half the time; the same
/// code runs on several samples at once on vector registers. The
/// subtractions are exact (each subtracts a power of two from a number at
/// most twice as large).
#[inline(always)]
pub(crate) fn triangle_step(u: f64, v: f64, m: f64, rotated: bool) -> (f64, f64, bool, usize) {
    let (ge_u, ge_v) = (u >= m, v >= m);
    let (u2, v2) = (u - m, v - m);
    let (child, take_v, r) = if rotated {
        let middle = ge_u & ge_v & (u2 + v2 < m);
        let c = usize::from(!ge_u) + 2 * usize::from(ge_u & !ge_v) + 3 * usize::from(middle);
        (c, !ge_u | ge_v, !middle)
    } else {
        let middle = !ge_u & !ge_v & (u + v >= m);
        let c = usize::from(ge_u) + 2 * usize::from(!ge_u & ge_v) + 3 * usize::from(middle);
        (c, !ge_u & ge_v, middle)
    };
    (if ge_u { u2 } else { u }, if take_v { v2 } else { v }, r, child)
}

/// A multiply-rotate hash for the packed square keys and the corner
/// configurations: the keys are small integers, so a cryptographic hash
/// buys nothing here.
#[derive(Default)]
struct SquareHasher(u64);

impl Hasher for SquareHasher {
    fn finish(&self) -> u64 {
        // A finaliser, so that the bucket bits (the low ones) depend on
        // every bit of the key.
        let mut x = self.0;
        x ^= x >> 31;
        x = x.wrapping_mul(0x94_d0_49_bb_13_31_11_eb);
        x ^ (x >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    // Integers whole, not byte by byte through `write`.
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A corner's configuration, as a hashable key (valence, place of the
/// patch face, boundary, sharp, dart).
type CornerKey = (usize, usize, bool, bool, bool);

fn corner_key(c: CornerInfo) -> CornerKey {
    (c.num_faces, c.patch_face, c.boundary, c.sharp, c.dart)
}

/// Refuses a corner whose one-ring, as the mesh gives it, does not have
/// the length the source patch numbers.
fn check_rings(lens: impl Iterator<Item = usize>, expected: impl Fn(usize) -> usize) -> Result<(), SourcePatchError> {
    for (c, len) in lens.enumerate() {
        if len != expected(c) {
            return Err(SourcePatchError {
                message: format!("corner {c}: the mesh gives {len} ring points, the patch expects {}", expected(c)),
            });
        }
    }
    Ok(())
}

/// The end-cap description of a patch corner.
fn corner_of(c: CornerInfo) -> Corner {
    Corner {
        num_faces: c.num_faces as u16,
        patch_face: c.patch_face as u16,
        boundary: c.boundary,
        sharp: c.sharp,
        dart: c.dart,
    }
}

/// The end caps' points (OpenSubdiv's local points) as rows of weights over
/// the level points, kept as each end cap's source points and a conversion
/// shared by every end cap whose corners have the same configuration: the
/// rows of an end cap are its conversion's rows, their columns (source
/// point indices) renamed through its source points. Storing each row
/// written out would copy the conversion once per end cap, tens of
/// megabytes on large meshes.
#[derive(Clone, Debug, Default)]
pub struct EndCapRows {
    num_columns: usize,
    num_rows: usize,
    /// The rows of every end cap where all end caps have that many (the
    /// usual case: one patch type), so that a row finds its end cap by a
    /// division; zero otherwise.
    uniform: usize,
    conversions: Vec<endcap::Rows>,
    caps: Vec<CapRows>,
    /// The end caps' source points, end cap after end cap, as level points.
    sources: Vec<u32>,
}

/// Where an end cap's rows come from.
#[derive(Copy, Clone, Debug)]
struct CapRows {
    /// The end cap's first row.
    first_row: u32,
    /// Its conversion in [`EndCapRows::conversions`].
    conversion: u32,
    /// Its source points: `sources[source..source + conversion's columns]`.
    source: u32,
}

/// One end-cap point's row: entry `i` weighs level point
/// `source[columns[i]]` by `weights[i]` (see [`EndCapRows`]).
#[derive(Copy, Clone, Debug)]
pub struct EndCapRow<'a> {
    columns: &'a [u32],
    weights: &'a [f64],
    source: &'a [u32],
}

impl<'a> EndCapRow<'a> {
    /// Number of entries (OpenSubdiv's, zeros included).
    pub fn len(&self) -> usize {
        self.columns.len()
    }
    /// Whether the row has no entries.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
    /// The weights, in the order of the entries.
    pub fn weights(&self) -> &'a [f64] {
        self.weights
    }
    /// The entries as (level point, weight), in OpenSubdiv's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, f64)> + 'a {
        let source = self.source;
        self.columns.iter().zip(self.weights).map(move |(&c, &w)| (source[c as usize], w))
    }
    /// The row's columns (indices into the end cap's source points, the
    /// third slice), its weights, and those source points (level points).
    pub fn parts(&self) -> (&'a [u32], &'a [f64], &'a [u32]) {
        (self.columns, self.weights, self.source)
    }
}

impl EndCapRows {
    /// Number of rows (end-cap points).
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }
    /// Number of columns: the table's level points.
    pub fn num_columns(&self) -> usize {
        self.num_columns
    }
    /// Number of entries over all rows.
    pub fn num_entries(&self) -> usize {
        self.caps.iter().map(|c| self.conversions[c.conversion as usize].columns.len()).sum()
    }
    /// Row `r`.
    #[track_caller]
    pub fn row(&self, r: usize) -> EndCapRow<'_> {
        assert!(r < self.num_rows, "row {r} of {}", self.num_rows);
        let cap =
            r.checked_div(self.uniform).unwrap_or_else(|| self.caps.partition_point(|c| c.first_row as usize <= r) - 1);
        self.cap_row(cap, r - self.caps[cap].first_row as usize)
    }
    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = EndCapRow<'_>> + '_ {
        (0..self.caps.len()).flat_map(move |cap| {
            let n = self.conversions[self.caps[cap].conversion as usize].num_rows();
            (0..n).map(move |r| self.cap_row(cap, r))
        })
    }
    /// The rows written out, one after the other.
    pub fn to_rows(&self) -> endcap::Rows {
        let mut out = endcap::Rows {
            num_columns: self.num_columns,
            offsets: Vec::with_capacity(self.num_rows + 1),
            columns: Vec::with_capacity(self.num_entries()),
            weights: Vec::with_capacity(self.num_entries()),
        };
        out.offsets.push(0);
        for row in self.iter() {
            out.columns.extend(row.iter().map(|(c, _)| c));
            out.weights.extend_from_slice(row.weights());
            out.offsets.push(out.columns.len());
        }
        out
    }

    /// Number of end caps.
    pub(crate) fn num_caps(&self) -> usize {
        self.caps.len()
    }

    /// The end caps in order, their rows one after the other: each one's
    /// conversion and the level points its columns name.
    pub(crate) fn caps(&self) -> impl Iterator<Item = (&endcap::Rows, &[u32])> + '_ {
        self.caps.iter().map(|c| {
            let conv = &self.conversions[c.conversion as usize];
            let s = c.source as usize;
            (conv, &self.sources[s..s + conv.num_columns])
        })
    }

    /// Row `r` of end cap `cap`.
    fn cap_row(&self, cap: usize, r: usize) -> EndCapRow<'_> {
        let c = self.caps[cap];
        let conv = &self.conversions[c.conversion as usize];
        let (columns, weights) = conv.row(r);
        let s = c.source as usize;
        EndCapRow { columns, weights, source: &self.sources[s..s + conv.num_columns] }
    }

    /// Keeps a conversion for the end caps to share; returns its number.
    fn add_conversion(&mut self, rows: endcap::Rows) -> u32 {
        self.conversions.push(rows);
        (self.conversions.len() - 1) as u32
    }

    /// Appends an end cap of conversion `conversion` over `source` (vertices
    /// of the level whose points start at `off`), and its points, numbered
    /// after the `total` level points, to `points`.
    fn push(&mut self, conversion: u32, source: &[u32], off: u32, total: u32, points: &mut Vec<u32>) {
        let conv = &self.conversions[conversion as usize];
        let n = conv.num_rows();
        debug_assert!(conv.columns.iter().all(|&c| (c as usize) < source.len()));
        let first_row = self.num_rows;
        self.uniform = match (self.caps.is_empty(), self.uniform == n) {
            (true, _) | (false, true) => n,
            (false, false) => 0,
        };
        self.caps.push(CapRows { first_row: first_row as u32, conversion, source: self.sources.len() as u32 });
        self.sources.extend(source[..conv.num_columns.min(source.len())].iter().map(|&p| p + off));
        // A conversion over more points than the source gives: pad, so that
        // the slices stay in bounds (no column names them).
        self.sources.extend(std::iter::repeat_n(off, conv.num_columns.saturating_sub(source.len())));
        self.num_rows += n;
        self.num_columns = total as usize;
        points.extend((0..n).map(|r| total + (first_row + r) as u32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversion(rows: &[&[(u32, f64)]], num_columns: usize) -> endcap::Rows {
        let mut r = endcap::Rows { num_columns, offsets: vec![0], columns: Vec::new(), weights: Vec::new() };
        for row in rows {
            for &(c, w) in *row {
                r.columns.push(c);
                r.weights.push(w);
            }
            r.offsets.push(r.columns.len());
        }
        r
    }

    /// End caps of two conversions with different row counts (the rows
    /// then find their end cap by a search, not a division): every row is
    /// its conversion's row over the end cap's own source points, offset to
    /// its level, and the points are numbered after the level points.
    #[test]
    fn shared_conversions_rename_columns() {
        let mut caps = EndCapRows::default();
        let a = caps.add_conversion(conversion(&[&[(0, 0.5), (1, 0.5)], &[(1, 1.0)]], 2));
        let b = caps.add_conversion(conversion(&[&[(2, 1.0)], &[(0, 0.25), (2, 0.75)], &[(1, 2.0), (0, -1.0)]], 3));
        let mut points = Vec::new();
        caps.push(a, &[7, 3], 100, 1000, &mut points);
        caps.push(b, &[4, 5, 6], 10, 1000, &mut points);
        caps.push(a, &[1, 2], 0, 1000, &mut points);
        assert_eq!(caps.uniform, 0);
        assert_eq!(points, (1000..1007).collect::<Vec<u32>>());
        let expected: [&[(u32, f64)]; 7] = [
            &[(107, 0.5), (103, 0.5)],
            &[(103, 1.0)],
            &[(16, 1.0)],
            &[(14, 0.25), (16, 0.75)],
            &[(15, 2.0), (14, -1.0)],
            &[(1, 0.5), (2, 0.5)],
            &[(2, 1.0)],
        ];
        assert_eq!(caps.num_rows(), 7);
        assert_eq!(caps.num_entries(), 11);
        for (r, want) in expected.iter().enumerate() {
            assert_eq!(caps.row(r).iter().collect::<Vec<_>>(), *want, "row {r}");
        }
        let rows: Vec<Vec<(u32, f64)>> = caps.iter().map(|r| r.iter().collect()).collect();
        assert_eq!(rows, expected.iter().map(|r| r.to_vec()).collect::<Vec<_>>());
        let flat = caps.to_rows();
        for (r, want) in expected.iter().enumerate() {
            let (c, w) = flat.row(r);
            assert_eq!(c.iter().copied().zip(w.iter().copied()).collect::<Vec<_>>(), *want, "written-out row {r}");
        }
    }

    /// With one conversion the rows find their end cap by a division.
    #[test]
    fn uniform_end_caps() {
        let mut caps = EndCapRows::default();
        let a = caps.add_conversion(conversion(&[&[(0, 1.0)], &[(1, 0.5), (0, 0.5)]], 2));
        let mut points = Vec::new();
        for k in 0..5u32 {
            caps.push(a, &[2 * k, 2 * k + 1], 1, 50, &mut points);
        }
        assert_eq!(caps.uniform, 2);
        for k in 0..5u32 {
            assert_eq!(caps.row(2 * k as usize).iter().collect::<Vec<_>>(), [(2 * k + 1, 1.0)]);
            assert_eq!(caps.row(2 * k as usize + 1).iter().collect::<Vec<_>>(), [(2 * k + 2, 0.5), (2 * k + 1, 0.5)]);
        }
    }
}
