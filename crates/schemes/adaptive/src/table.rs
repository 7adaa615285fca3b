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
use crate::sparse::{FacePtex, Scheme, SparseRefinement, tri_child_ptex};

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
    local: endcap::Rows,
    patches: Vec<Patch>,
    points: Vec<u32>,
    map: HashMap<u64, u32, BuildHasherDefault<SquareHasher>>,
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
        let mut local = endcap::Rows { num_columns: 0, offsets: vec![0], columns: Vec::new(), weights: Vec::new() };
        let mut map = HashMap::with_capacity_and_hasher(
            levels.iter().map(|l| l.num_faces()).sum::<usize>() / 2,
            BuildHasherDefault::default(),
        );
        let mut max_depth = 0u8;
        // The conversions depend on the corners' configuration alone: most
        // end caps share one.
        let mut quad_rows: HashMap<[CornerKey; 4], endcap::Rows> = HashMap::new();
        let mut tri_rows: HashMap<[CornerKey; 3], endcap::Rows> = HashMap::new();
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
            let mut caps_left = leaves.iter().filter(|l| matches!(l, Some(Leaf::Irregular))).count();
            let num_leaves = leaves.iter().filter(|l| l.is_some()).count();
            patches.reserve_exact(num_leaves);
            points.reserve_exact(num_leaves * 16 + caps_left * 4);
            for (f, leaf) in leaves.into_iter().enumerate() {
                let Some(leaf) = leaf else { continue };
                let Some(px) = level.face_ptex(f) else { continue };
                let param = PatchParam::new(px.ptex, px.depth, px.u as u16, px.v as u16, px.non_quad);
                let first = points.len() as u32;
                let (ty, param) =
                    match leaf {
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
                            let rows = tri_rows
                                .entry(std::array::from_fn(|i| corner_key(corners[i].0)))
                                .or_insert_with(|| match end_cap {
                                    EndCap::GregoryBasis => loop_endcap::gregory_triangle(&sp),
                                    EndCap::BSplineBasis => loop_endcap::loop_box_spline(&sp),
                                });
                            push_end_cap(rows, &source, off, total, caps_left, &mut local, &mut points);
                            caps_left -= 1;
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
                            let rows = quad_rows
                                .entry(std::array::from_fn(|i| corner_key(corners[i].0)))
                                .or_insert_with(|| match end_cap {
                                    EndCap::GregoryBasis => endcap::gregory_basis(&sp),
                                    EndCap::BSplineBasis => endcap::bspline(&sp),
                                });
                            push_end_cap(rows, &source, off, total, caps_left, &mut local, &mut points);
                            caps_left -= 1;
                            (ty, param)
                        }
                    };
                map.insert(square_key(px.ptex, px.depth, px.u, px.v), patches.len() as u32);
                max_depth = max_depth.max(px.depth);
                patches.push(Patch { ty, param, level: k as u8, first });
            }
        }
        local.num_columns = total as usize;
        Ok(PatchTable { refinement, end_cap, num_level_points: total, local, patches, points, map, max_depth })
    }

    /// The patch of a Loop ptex face that holds `(u, v)`: OpenSubdiv's
    /// `PatchMap::FindPatch` descent through triangles (`u`, `v` in
    /// `[0, 1]`); a triangle's children are numbered as the refinement's.
    fn find_triangle(&self, ptex: u32, mut u: f64, mut v: f64) -> Option<usize> {
        let mut at = FacePtex { ptex, u: 0, v: 0, depth: 0, non_quad: false };
        let mut median = 0.5;
        let mut rotated = false;
        for _ in 0..=self.max_depth {
            if let Some(&p) = self.map.get(&square_key(ptex, at.depth, at.u, at.v)) {
                return Some(p as usize);
            }
            let child = if !rotated {
                if u >= median {
                    u -= median;
                    1
                } else if v >= median {
                    v -= median;
                    2
                } else if u + v >= median {
                    rotated = true;
                    3
                } else {
                    0
                }
            } else if u < median {
                v -= median;
                1
            } else if v < median {
                u -= median;
                2
            } else {
                u -= median;
                v -= median;
                if u + v < median {
                    rotated = false;
                    3
                } else {
                    0
                }
            };
            at = tri_child_ptex(at, child);
            median *= 0.5;
        }
        None
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
        let nq = self.refinement.ptex_is_sub_face(ptex);
        for d in u8::from(nq)..=self.max_depth {
            let cells = 1u32 << (d - u8::from(nq));
            let i = ((u * f64::from(cells)) as u32).min(cells - 1);
            let j = ((v * f64::from(cells)) as u32).min(cells - 1);
            if let Some(&p) = self.map.get(&square_key(ptex, d, i, j)) {
                return Ok(p as usize);
            }
        }
        // Every sample of a face that is not a hole lies in some patch.
        Err(AdaptiveError::NoPatch { ptex })
    }

    /// Whether `(u, v)` of ptex face `ptex` lies in quad patch `p`'s square
    /// (what [`PatchTable::find`] would return for it): lets a caller keep
    /// the last patch found for the next sample. Always `false` for
    /// triangles.
    pub(crate) fn holds(&self, p: usize, ptex: u32, u: f64, v: f64) -> bool {
        let pa = &self.patches[p];
        if pa.ty.is_triangle() || pa.param.face_id() != ptex {
            return false;
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

    /// The quad patch whose square of ptex face `ptex` at `depth` has
    /// origin `(i, j)` (in squares of that depth), if there is one.
    pub(crate) fn patch_at(&self, ptex: u32, depth: u8, i: u32, j: u32) -> Option<usize> {
        self.map.get(&square_key(ptex, depth, i, j)).map(|&p| p as usize)
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
    pub fn end_cap_rows(&self) -> &endcap::Rows {
        &self.local
    }
}

/// The key of a square of a ptex face's quadtree: ptex face, depth and
/// origin packed into 64 bits (depth ≤ 15, origins below 2^16).
fn square_key(ptex: u32, depth: u8, u: u32, v: u32) -> u64 {
    (u64::from(ptex) << 36) | (u64::from(depth) << 32) | (u64::from(u & 0xffff) << 16) | u64::from(v & 0xffff)
}

/// A multiply-rotate hash for the packed square keys: the keys are
/// distinct small integers, so a cryptographic hash buys nothing here.
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

/// Appends an end cap's points: each conversion row, over the source
/// points (vertices of the level whose points start at `off`), becomes a
/// local point numbered after the `total` level points. `caps_left` end
/// caps (this one included) remain in the level: when the rows run out of
/// room they are sized for all of them alike, once.
fn push_end_cap(
    rows: &endcap::Rows,
    source: &[u32],
    off: u32,
    total: u32,
    caps_left: usize,
    local: &mut endcap::Rows,
    points: &mut Vec<u32>,
) {
    let nnz = rows.columns.len();
    if local.columns.capacity() - local.columns.len() < nnz {
        // The first end cap's size stands for the rest (most share one
        // configuration); an eighth more covers larger rings, and a
        // quarter of what is there keeps a short estimate from regrowing
        // the whole table again and again.
        let more = (nnz * caps_left + nnz * caps_left / 8).max(local.columns.len() / 4);
        local.columns.reserve_exact(more);
        local.weights.reserve_exact(more);
        local.offsets.reserve_exact(rows.num_rows() * caps_left);
    }
    // All rows at once: the weights are copied as they are, the columns
    // renamed, and each row's point and end moved past what is there.
    let n = rows.num_rows();
    if n == 0 {
        return;
    }
    let (lo, hi) = (rows.offsets[0], rows.offsets[n]);
    let base = local.columns.len();
    let first_row = local.num_rows();
    local.columns.extend(rows.columns[lo..hi].iter().map(|&c| source[c as usize] + off));
    local.weights.extend_from_slice(&rows.weights[lo..hi]);
    local.offsets.extend(rows.offsets[1..=n].iter().map(|&o| base + o - lo));
    points.extend((0..n).map(|r| total + (first_row + r) as u32));
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
