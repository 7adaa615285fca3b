//! Face-varying data (texture coordinates, any per-corner data) refined with
//! OpenSubdiv's rules: the scheme-independent part.
//!
//! A face-varying channel gives every face corner a *value* (a row of its
//! own table), so a vertex may carry several values — a *seam* runs where
//! two faces sharing an edge disagree on a value at one of its ends. The
//! values form a mesh of their own (the *value mesh*: the faces with value
//! indices in place of vertex indices); seams are its boundaries where the
//! vertex mesh has none.
//!
//! This module keeps, per level, what OpenSubdiv's `Vtr::FVarLevel` keeps:
//! * the values of each vertex (its *siblings*), numbered vertex after
//!   vertex, and the value of each corner ([`FVarLevel`]);
//! * per edge, whether the values are discontinuous across it
//!   ([`EdgeTag::mismatch`]) and whether it is interpolated linearly;
//! * per value, whether its neighbourhood matches the vertex's (then the
//!   vertex's own mask applies to the values), or else whether it is a
//!   *corner* (kept), a *crease* (`¾ v + ⅛ (a + b)` along the ends of its
//!   span of faces) or a semi-sharp corner decaying into a crease
//!   ([`ValueTag`]).
//!
//! The base level is analysed once from the user's indices and the mode
//! ([`FVarLevel::base`], OpenSubdiv's `completeTopologyFromFaceValues`);
//! the tags of refined levels are inherited from their parents
//! ([`FVarLevel::child`], OpenSubdiv's `FVarRefinement`), so that a value
//! keeps the rule it was given. [`build`] writes the rows of each level's
//! operator from these tags; a scheme supplies its split and its masks
//! through [`FVarRules`] (`subla_catmark::fvar`, `subla_loop::fvar`).
//!
//! # Modes (`Sdc::Options::FVarLinearInterpolation`)
//! | mode | values made corners (kept in place) |
//! |---|---|
//! | `None` | none: smooth everywhere, seams and boundaries as creases |
//! | `CornersOnly` | values in a single face |
//! | `CornersPlus1` | and vertices with more than two values, or two where one span has a sharp edge |
//! | `CornersPlus2` | and both values where one is in a single face, and darts |
//! | `Boundaries` | every value on a seam or boundary (linear boundaries) |
//! | `All` | everything: the values are refined bilinearly |

use std::any::{Any, TypeId};
use std::sync::OnceLock;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::{CsrMat, Par, SharedCsr};
use subla_mesh::topology::vertex_tag;
use subla_mesh::{BoundaryInterpolation, FVarLinearInterpolation, FaceVarying, Mesh, MeshError, Topology};

use crate::sdc::{is_infinite, is_semi, vertex_transition_weight};
use crate::{Plan, Real, Result, SchemeError, get_or_try_init};

/// What a face-varying value is, as OpenSubdiv tags it
/// (`Vtr::FVarLevel::ValueTag`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ValueTag {
    /// The value's neighbourhood differs from its vertex's (a seam, a
    /// sharpened boundary): the vertex's mask does not apply.
    pub mismatch: bool,
    /// A smooth seam or boundary value: refined by the crease rule along
    /// its span. Otherwise (when mismatched) a corner, kept in place.
    pub crease: bool,
    /// A corner while a semi-sharp feature in its span lasts, then a crease.
    pub semi_sharp: bool,
    /// Semi-sharp because the vertex's other value is.
    pub dep_sharp: bool,
    /// Its faces around the vertex form more than one span.
    pub non_manifold: bool,
}

impl ValueTag {
    /// Kept in place when mismatched (not a crease).
    pub fn is_corner(self) -> bool {
        !self.crease
    }
}

/// What a face-varying edge is (`Vtr::FVarLevel::ETag`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EdgeTag {
    /// The faces on the edge disagree on a value at one of its ends.
    pub mismatch: bool,
    /// Interpolated linearly (a seam or boundary under linear boundaries).
    pub linear: bool,
}

/// The interpolation a mode asks for, as flags.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ModeFlags {
    /// Every value refined linearly (`All`).
    pub linear: bool,
    /// Seams and boundaries linear (`All`, `Boundaries`).
    pub linear_boundaries: bool,
    /// Sharpness of one value depends on its sibling's (`CornersPlus1`,
    /// `CornersPlus2`).
    pub dependent_sharpness: bool,
}

impl ModeFlags {
    /// The flags of `mode`.
    pub fn of(mode: FVarLinearInterpolation) -> ModeFlags {
        use FVarLinearInterpolation as M;
        ModeFlags {
            linear: mode == M::All,
            linear_boundaries: matches!(mode, M::All | M::Boundaries),
            dependent_sharpness: matches!(mode, M::CornersPlus1 | M::CornersPlus2),
        }
    }
    /// Seams and boundaries refined smoothly (creases have ends).
    pub fn smooth_boundaries(self) -> bool {
        !self.linear_boundaries
    }
}

/// The faces and edges around a manifold vertex in turning order
/// ([`subla_mesh::topology::VertexRing`]).
pub type Ring = subla_mesh::topology::VertexRing;

/// The run of faces around a vertex that share one of its values
/// (OpenSubdiv's `ValueSpan`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// Number of faces.
    pub size: u32,
    /// Position of its first face in the vertex's [`Ring`].
    pub start: u32,
    /// Discontinuous edges inside it, or more than one run of faces.
    pub discts: u32,
    /// Semi-sharp edges inside it.
    pub semi: u32,
    /// Infinitely sharp edges inside it.
    pub inf: u32,
}

impl Span {
    /// Position in the ring of its last face.
    pub fn end(self, n: usize) -> usize {
        (self.start as usize + self.size as usize + n - 1) % n.max(1)
    }
    /// The ring positions of the edges inside it (between two of its faces).
    pub fn interior_edges(self, n: usize) -> impl Iterator<Item = usize> {
        (1..self.size as usize).map(move |k| (self.start as usize + k) % n)
    }
}

/// One level of a face-varying channel: values grouped by vertex, the
/// value of every corner, and the tags above. See the [module docs](self).
#[derive(Clone, Debug, PartialEq)]
pub struct FVarLevel {
    /// `value_ptr[v]..value_ptr[v + 1]`: the values of vertex `v` (none for
    /// a vertex in no face).
    pub value_ptr: Vec<u32>,
    /// The value of each corner.
    pub corner_values: Vec<u32>,
    /// The tag of each value.
    pub tags: Vec<ValueTag>,
    /// The tag of each edge.
    pub edge_tags: Vec<EdgeTag>,
    /// The mode's flags.
    pub flags: ModeFlags,
}

/// The user's table row each base-level value takes, with the base level.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseLevel {
    /// The level.
    pub level: FVarLevel,
    /// `source[i]`: the row of the user's values that value `i` is.
    pub source: Vec<u32>,
}

/// Sharpness facts of a vertex, from its level's mesh.
#[derive(Copy, Clone, Debug, Default)]
struct VertexFacts {
    inf_sharp: bool,
    semi_sharp: bool,
    semi_sharp_edges: bool,
    non_manifold: bool,
    boundary: bool,
}

fn vertex_facts(mesh: &Mesh, v: usize) -> VertexFacts {
    let t = mesh.topology();
    let s = mesh.vertex_sharpness()[v];
    let es = mesh.edge_sharpness();
    let tags = t.vertex_tags()[v];
    VertexFacts {
        inf_sharp: is_infinite(s),
        semi_sharp: is_semi(s),
        semi_sharp_edges: t.vertex_edges(v).iter().any(|&e| is_semi(es[e as usize])),
        non_manifold: tags & (vertex_tag::NON_MANIFOLD | vertex_tag::REPEATED) != 0,
        boundary: tags & vertex_tag::BOUNDARY != 0,
    }
}

impl FVarLevel {
    /// Number of values.
    pub fn num_values(&self) -> usize {
        self.tags.len()
    }

    /// The values of vertex `v`.
    pub fn values_of(&self, v: usize) -> std::ops::Range<u32> {
        self.value_ptr[v]..self.value_ptr[v + 1]
    }

    /// The value of vertex `at` in face `f`'s corner `c`'s neighbourhood:
    /// the value of the corner of `c`'s face at vertex `at`, where `c` is
    /// one of the edge's uses — the value at the far end of an edge as one
    /// of its faces sees it.
    fn value_at_end(&self, t: &Topology, c: u32, at: u32) -> u32 {
        let fv = t.face_verts();
        if fv[c as usize] == at {
            self.corner_values[c as usize]
        } else {
            self.corner_values[t.next_corner(c as usize)]
        }
    }

    /// The values at both ends of edge `e` as its use `k` sees them (in the
    /// order of the edge's vertices).
    pub fn edge_values(&self, t: &Topology, e: usize, k: usize) -> [u32; 2] {
        let c = t.edge_corners(e)[k];
        let [a, b] = t.edge(e);
        if a == b {
            // A degenerate edge (a face using a vertex twice in a row): its
            // ends are the use's two corners, which may hold two values.
            return [self.corner_values[c as usize], self.corner_values[t.next_corner(c as usize)]];
        }
        [self.value_at_end(t, c, a), self.value_at_end(t, c, b)]
    }

    /// The value at the other end of edge `e` from `v`, as its first use
    /// sees it (for continuous edges, the only one).
    pub fn neighbor_value(&self, t: &Topology, e: usize, v: usize) -> u32 {
        let [a, b] = t.edge(e);
        let other = if a as usize == v { b } else { a };
        self.value_at_end(t, t.edge_corners(e)[0], other)
    }

    /// The spans of `v`'s values (OpenSubdiv's `gatherValueSpans`); `ring`
    /// is `v`'s ring where it has one.
    pub fn spans(&self, mesh: &Mesh, v: usize, ring: Option<&Ring>) -> Vec<Span> {
        let es = mesh.edge_sharpness();
        let vals = self.values_of(v);
        let nvals = vals.len();
        let mut spans = vec![Span::default(); nvals];
        let Some(ring) = ring else {
            for s in &mut spans {
                s.discts = 1;
            }
            return spans;
        };
        let n = ring.len();
        let sib = |i: usize| (self.corner_values[ring.corners[i] as usize] - vals.start) as usize;
        let count = |span: &mut Span, e: u32| {
            if self.edge_tags[e as usize].mismatch {
                span.discts += 1;
            } else if is_infinite(es[e as usize]) {
                span.inf += 1;
            } else if is_semi(es[e as usize]) {
                span.semi += 1;
            }
        };
        if nvals == 1 && !ring.boundary {
            let s = &mut spans[0];
            let mut started = false;
            for (i, &e) in ring.edges.iter().enumerate() {
                if self.edge_tags[e as usize].mismatch {
                    if started {
                        s.discts = 1;
                        break;
                    }
                    started = true;
                    s.start = i as u32;
                } else if is_infinite(es[e as usize]) {
                    s.inf += 1;
                } else if is_semi(es[e as usize]) {
                    s.semi += 1;
                }
            }
            s.size = n as u32;
            return spans;
        }
        let wraps = !ring.boundary && sib(n - 1) == 0;
        spans[sib(0)].size = 1;
        if wraps {
            count(&mut spans[0], ring.edges[0]);
        }
        for i in 1..n {
            let k = sib(i);
            if k == sib(i - 1) {
                count(&mut spans[k], ring.edges[i]);
            } else {
                if spans[k].size > 0 {
                    spans[k].discts += 1;
                }
                spans[k].start = i as u32;
            }
            spans[k].size += 1;
        }
        if wraps {
            spans[0].discts = spans[0].discts.saturating_sub(1);
        }
        spans
    }

    /// The two values a crease value is refined with: the values at the far
    /// ends of the first and last edges of its span.
    pub fn crease_ends(&self, t: &Topology, ring: &Ring, span: Span) -> [u32; 2] {
        let n = ring.len();
        let first = ring.corners[span.start as usize] as usize;
        let last = ring.corners[span.end(n)] as usize;
        [self.corner_values[t.next_corner(first)], self.corner_values[t.prev_corner(last)]]
    }

    /// The base level of a channel over `mesh` (with its effective
    /// sharpness, as the schemes prepare it): `indices` gives the row of
    /// the user's `num_values` values that each corner takes, and `mode`
    /// how seams and boundaries are refined. The analysis is OpenSubdiv's
    /// `completeTopologyFromFaceValues`, vertex by vertex in index order.
    ///
    /// # Errors
    /// [`MeshError::DataLength`] (in [`SchemeError::Mesh`]) when `indices`
    /// has not one entry per corner or one is not below `num_values`.
    pub fn base(mesh: &Mesh, indices: &[u32], num_values: usize, mode: FVarLinearInterpolation) -> Result<BaseLevel> {
        let t = mesh.topology();
        let what = "face-varying indices";
        if indices.len() != t.num_corners() {
            return Err(SchemeError::Mesh(MeshError::DataLength {
                what,
                expected: t.num_corners(),
                found: indices.len(),
            }));
        }
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= num_values) {
            return Err(SchemeError::Mesh(MeshError::DataLength {
                what: "face-varying values",
                expected: bad as usize + 1,
                found: num_values,
            }));
        }
        let flags = ModeFlags::of(mode);
        let nv = t.num_vertices();
        let fv = t.face_verts();
        let opts = mesh.options();
        let corners_smooth_geom = opts.boundary != BoundaryInterpolation::EdgeAndCorner;
        let fvar_corners_sharp = mode != FVarLinearInterpolation::None;
        let make_smooth_corners_sharp = corners_smooth_geom && fvar_corners_sharp;
        let sharpen_both_if_one_corner = mode == FVarLinearInterpolation::CornersPlus2;
        let sharpen_darts = sharpen_both_if_one_corner || flags.linear_boundaries;

        let rings: Vec<Option<Ring>> = (0..nv).map(|v| Ring::of(t, v)).collect();
        // The corners of `v` in turning order where it has a ring.
        let corners_of = |v: usize| -> &[u32] {
            match &rings[v] {
                Some(r) => &r.corners,
                None => t.vertex_corners(v),
            }
        };

        // First pass: discontinuous edges, mismatched vertices, value counts.
        let mut edge_tags = vec![EdgeTag::default(); t.num_edges()];
        let mut mismatch = vec![false; nv];
        let mut value_ptr = Vec::with_capacity(nv + 1);
        value_ptr.push(0u32);
        let mut corner_values = vec![0u32; t.num_corners()];
        let mut source: Vec<u32> = Vec::with_capacity(nv);
        for v in 0..nv {
            for &e in t.vertex_edges(v) {
                let uses = t.edge_corners(e as usize);
                if uses.len() < 2 {
                    continue;
                }
                let at_v = |c: u32| -> u32 {
                    let c = c as usize;
                    if fv[c] as usize == v { indices[c] } else { indices[t.next_corner(c)] }
                };
                let first = at_v(uses[0]);
                if uses[1..].iter().any(|&c| at_v(c) != first) {
                    let [a, b] = t.edge(e as usize);
                    mismatch[a as usize] = true;
                    mismatch[b as usize] = true;
                    let tag = &mut edge_tags[e as usize];
                    tag.mismatch = true;
                    tag.linear = flags.linear_boundaries;
                }
            }
            let boundary = t.is_boundary_vertex(v);
            let nfaces = t.face_count(v);
            if boundary && !mismatch[v] {
                if flags.linear_boundaries && nfaces > 0 {
                    mismatch[v] = true;
                    for &e in t.vertex_edges(v) {
                        if t.is_boundary_edge(e as usize) {
                            edge_tags[e as usize].linear = true;
                        }
                    }
                } else if nfaces == 1 && make_smooth_corners_sharp {
                    mismatch[v] = true;
                }
            }
            // Distinct values in turning order, as OpenSubdiv finds them: a
            // value equal to the one before keeps its sibling; with two
            // values so far, a third that is not the first is new even when
            // it is the second (the pattern `a b a b` gives three values).
            let start = source.len();
            let mut prev: Option<(u32, usize)> = None;
            for &c in corners_of(v) {
                let u = indices[c as usize];
                let k = match prev {
                    Some((p, k)) if p == u => k,
                    _ => {
                        let found = source.len() - start;
                        let search = !(found <= 1 || (found == 2 && source[start] != u));
                        match source[start..].iter().position(|&x| x == u).filter(|_| search) {
                            Some(k) => k,
                            None => {
                                source.push(u);
                                found
                            }
                        }
                    }
                };
                prev = Some((u, k));
                corner_values[c as usize] = (start + k) as u32;
            }
            let count = source.len() - start;
            if rings[v].is_none() && !mismatch[v] && count > 1 {
                mismatch[v] = true;
            }
            value_ptr.push(SchemeError::to_u32("face-varying values of a level", source.len())?);
        }
        let mut level =
            FVarLevel { value_ptr, corner_values, tags: vec![ValueTag::default(); source.len()], edge_tags, flags };

        // Second pass: tag the values of mismatched vertices.
        for v in 0..nv {
            if !mismatch[v] {
                continue;
            }
            let vals = level.values_of(v);
            let nvals = vals.len();
            if nvals == 0 {
                continue;
            }
            let facts = vertex_facts(mesh, v);
            let mut all_sharp = flags.linear_boundaries
                || facts.inf_sharp
                || facts.non_manifold
                || (flags.dependent_sharpness && nvals > 2)
                || (sharpen_darts && nvals == 1 && !facts.boundary);
            let spans = level.spans(mesh, v, rings[v].as_ref());
            let mut dependent = false;
            if !all_sharp && flags.dependent_sharpness && nvals == 2 {
                all_sharp = spans[0].inf > 0 || spans[1].inf > 0 || spans[0].discts > 0 || spans[1].discts > 0;
                if sharpen_both_if_one_corner {
                    all_sharp |= spans[0].size == 1 || spans[1].size == 1;
                }
                dependent = (spans[0].semi > 0) != (spans[1].semi > 0);
            }
            for (i, span) in spans.iter().enumerate() {
                let tag = &mut level.tags[vals.start as usize + i];
                *tag = ValueTag { mismatch: true, ..ValueTag::default() };
                if span.discts > 0 {
                    tag.non_manifold = true;
                    continue;
                }
                let inf = all_sharp || span.inf > 0 || (span.size == 1 && fvar_corners_sharp);
                if inf {
                    continue;
                }
                if span.semi > 0 || facts.semi_sharp {
                    tag.semi_sharp = true;
                } else if dependent {
                    tag.semi_sharp = true;
                    tag.dep_sharp = true;
                } else {
                    tag.crease = true;
                }
            }
        }
        Ok(BaseLevel { level, source })
    }

    /// The level below this one, over `child` (the refined mesh, with its
    /// effective sharpness) refined from `parent` (this level's mesh) by a
    /// split that keeps the parent's vertices first (child vertex `v` is
    /// parent vertex `v`'s) and numbers the others as `split` says. Tags
    /// are inherited as OpenSubdiv's `FVarRefinement` does; semi-sharp
    /// values whose features have decayed become creases.
    pub fn child(&self, parent: &Mesh, child: &Mesh, split: &SplitMap<'_>) -> Result<FVarLevel> {
        let pt = parent.topology();
        let ct = child.topology();
        let (nv, nf, ne) = (pt.num_vertices(), pt.num_faces(), pt.num_edges());
        let ncv = ct.num_vertices();
        // Values per child vertex, in child vertex order.
        let mut counts = vec![0u32; ncv];
        for (v, k) in counts.iter_mut().enumerate().take(nv) {
            *k = self.values_of(v).len() as u32;
        }
        if let Some(f0) = split.first_face_point {
            for f in 0..nf {
                counts[f0 + f] = 1;
            }
        }
        for e in 0..ne {
            let tag = self.edge_tags[e];
            counts[split.first_edge_point + e] = if tag.mismatch { pt.edge_corners(e).len() as u32 } else { 1 };
        }
        let mut value_ptr = Vec::with_capacity(ncv + 1);
        value_ptr.push(0u32);
        let mut acc = 0u64;
        for &k in &counts {
            acc += u64::from(k);
            value_ptr.push(SchemeError::to_u32("face-varying values of a level", acc as usize)?);
        }
        // Tags: vertex children inherit, face children match, edge children
        // of discontinuous or linear edges are creases or corners.
        let mut tags = vec![ValueTag::default(); acc as usize];
        for (v, &c0) in value_ptr.iter().enumerate().take(nv) {
            let p = self.values_of(v);
            let c0 = c0 as usize;
            tags[c0..c0 + p.len()].copy_from_slice(&self.tags[p.start as usize..p.end as usize]);
        }
        let split_tag = if self.flags.smooth_boundaries() {
            ValueTag { mismatch: true, crease: true, ..ValueTag::default() }
        } else {
            ValueTag { mismatch: true, ..ValueTag::default() }
        };
        for e in 0..ne {
            let tag = self.edge_tags[e];
            if tag.mismatch || tag.linear {
                let cv = split.first_edge_point + e;
                tags[value_ptr[cv] as usize..value_ptr[cv + 1] as usize].fill(split_tag);
            }
        }
        // Corner values.
        let corner_values: Vec<u32> = (0..ct.num_corners())
            .map(|cc| match (split.source)(cc) {
                CornerSource::Vertex(c) => {
                    let v = pt.face_verts()[c as usize] as usize;
                    value_ptr[v] + (self.corner_values[c as usize] - self.value_ptr[v])
                }
                CornerSource::Face(f) => {
                    value_ptr[split.first_face_point.expect("a split with face points") + f as usize]
                }
                CornerSource::Edge(e, c) => {
                    let base = value_ptr[split.first_edge_point + e as usize];
                    if self.edge_tags[e as usize].mismatch {
                        let k = pt.edge_corners(e as usize).iter().position(|&u| u == c).unwrap_or(0);
                        base + k as u32
                    } else {
                        base
                    }
                }
            })
            .collect();
        // Edge tags: halves inherit, the others are continuous.
        let mut edge_tags = vec![EdgeTag::default(); ct.num_edges()];
        for e in 0..ne {
            for j in 0..2 {
                edge_tags[split.halves[2 * e + j] as usize] = self.edge_tags[e];
            }
        }
        let mut level = FVarLevel { value_ptr, corner_values, tags, edge_tags, flags: self.flags };
        if self.flags.smooth_boundaries() {
            level.reclassify_semi_sharp(parent, child, nv);
        }
        Ok(level)
    }

    /// Semi-sharp values of the children of `parent`'s vertices whose
    /// features have decayed become creases (OpenSubdiv's
    /// `reclassifySemisharpValues`).
    fn reclassify_semi_sharp(&mut self, parent: &Mesh, child: &Mesh, nv: usize) {
        let ct = child.topology();
        let ces = child.edge_sharpness();
        for v in 0..nv {
            let vals = self.values_of(v);
            if vals.is_empty() || !self.tags[vals.start as usize].mismatch {
                continue;
            }
            let pf = vertex_facts(parent, v);
            if !pf.semi_sharp && !pf.semi_sharp_edges {
                continue;
            }
            let cf = vertex_facts(child, v);
            if cf.semi_sharp || cf.inf_sharp {
                continue;
            }
            let range = vals.start as usize..vals.end as usize;
            if !cf.semi_sharp_edges {
                for tag in &mut self.tags[range] {
                    if tag.semi_sharp {
                        *tag = ValueTag { semi_sharp: false, dep_sharp: false, crease: true, ..*tag };
                    }
                }
                continue;
            }
            let ring = Ring::of(ct, v);
            let spans = self.spans(child, v, ring.as_ref());
            for (i, span) in spans.iter().enumerate() {
                let k = range.start + i;
                if !self.tags[k].semi_sharp || self.tags[k].dep_sharp {
                    continue;
                }
                let still = ring
                    .as_ref()
                    .is_some_and(|r| span.interior_edges(r.len()).any(|p| is_semi(ces[r.edges[p] as usize])));
                if !still {
                    self.tags[k] = ValueTag { semi_sharp: false, dep_sharp: false, crease: true, ..self.tags[k] };
                }
            }
            if range.len() == 2 && self.flags.dependent_sharpness {
                let (a, b) = (range.start, range.start + 1);
                if self.tags[a].dep_sharp && !self.tags[b].semi_sharp {
                    self.tags[a].dep_sharp = false;
                } else if self.tags[b].dep_sharp && !self.tags[a].semi_sharp {
                    self.tags[b].dep_sharp = false;
                }
            }
        }
    }

    /// The fraction of the corner rule in the refinement of value `sibling`
    /// of vertex `v` while its semi-sharp features decay (OpenSubdiv's
    /// `FVarRefinement::getFractionalWeight`): the transition weight of the
    /// vertex and the edges inside the value's span, `parent` and `child`
    /// being this level's mesh and the next, `child_half(e)` the child of
    /// edge `e` at `v`.
    pub fn fractional_weight(
        &self,
        parent: &Mesh,
        child: &Mesh,
        v: usize,
        ring: Option<&Ring>,
        span: Span,
        child_half: impl Fn(u32) -> u32,
    ) -> f64 {
        let pes = parent.edge_sharpness();
        let ces = child.edge_sharpness();
        let (mut sigma, mut tau) = (Vec::new(), Vec::new());
        if let Some(r) = ring {
            for p in span.interior_edges(r.len()) {
                let e = r.edges[p];
                sigma.push(pes[e as usize]);
                tau.push(ces[child_half(e) as usize]);
            }
        }
        let chaikin = parent.options().crease_method == subla_mesh::CreaseMethod::Chaikin;
        f64::from(vertex_transition_weight(
            parent.vertex_sharpness()[v],
            child.vertex_sharpness()[v],
            &sigma,
            &tau,
            chaikin,
        ))
    }
}

/// Where a corner of a child face comes from, in its parent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CornerSource {
    /// The child of the vertex of this parent corner.
    Vertex(u32),
    /// The face point of this parent face.
    Face(u32),
    /// The edge point of this parent edge, on the side of this parent
    /// corner (one of the edge's uses).
    Edge(u32, u32),
}

/// How a split numbers the child: parent vertices first, then face points
/// (if any) and edge points; the two child halves of each parent edge; and
/// where each child corner comes from.
pub struct SplitMap<'a> {
    /// The child vertex of parent face 0's face point, if the split has
    /// face points.
    pub first_face_point: Option<usize>,
    /// The child vertex of parent edge 0's edge point.
    pub first_edge_point: usize,
    /// `halves[2e + j]`: the child edge of parent edge `e` at its endpoint
    /// `j`.
    pub halves: &'a [u32],
    /// The source of each child corner.
    pub source: &'a (dyn Fn(usize) -> CornerSource + Sync),
}

/// The child face-varying value of each value of `level`'s vertices:
/// `owners(level)[i]` is the vertex value `i` belongs to.
pub fn owners(level: &FVarLevel) -> Vec<u32> {
    let mut owner = vec![0u32; level.num_values()];
    for v in 0..level.value_ptr.len().saturating_sub(1) {
        let r = level.values_of(v);
        owner[r.start as usize..r.end as usize].fill(v as u32);
    }
    owner
}

/// What the rows of one level's operator read, with the rules every
/// scheme shares: seams' midpoints, corners kept, creases and their
/// semi-sharp blends.
pub struct LevelRows<'a> {
    /// This level's vertex mesh (effective sharpness).
    pub parent: &'a Mesh,
    /// The next level's.
    pub child: &'a Mesh,
    /// This level's values.
    pub fp: &'a FVarLevel,
    /// The next level's.
    pub fc: &'a FVarLevel,
    /// `halves[2e + j]`: the child edge of parent edge `e` at endpoint `j`.
    pub halves: &'a [u32],
    /// At level 0, the caller's row of each value (columns are the
    /// caller's values).
    pub source: Option<&'a [u32]>,
}

impl LevelRows<'_> {
    /// Adds `w` times parent value `value` (a column of the caller's table
    /// at level 0).
    #[inline]
    pub fn push(&self, s: &mut crate::kernel::Stencil, value: u32, w: f64) {
        let col = self.source.map_or(value, |src| src[value as usize]);
        s.push((col, w));
    }

    /// The values of parent face `f`, each with weight `w / order` (a face
    /// point's value, scaled).
    pub fn face_average(&self, s: &mut crate::kernel::Stencil, f: usize, w: f64) {
        let t = self.parent.topology();
        let r = t.face_ptr()[f] as usize..t.face_ptr()[f + 1] as usize;
        let wf = w / r.len() as f64;
        for c in r {
            self.push(s, self.fp.corner_values[c], wf);
        }
    }

    /// The midpoint of edge `e`'s values as its use `k` sees them.
    pub fn midpoint(&self, s: &mut crate::kernel::Stencil, e: usize, k: usize) {
        let [a, b] = self.fp.edge_values(self.parent.topology(), e, k);
        self.push(s, a, 0.5);
        self.push(s, b, 0.5);
    }

    /// The row of an edge point's value `sibling` where it does not take
    /// the edge's mask: on a seam (one value per face) or where values are
    /// linear, the midpoint. Returns `false` (and writes nothing) where the
    /// mask applies: a continuous edge, refined smoothly.
    pub fn edge_default(
        &self,
        s: &mut crate::kernel::Stencil,
        e: usize,
        sibling: usize,
        row: usize,
        linear: bool,
    ) -> bool {
        if self.fc.tags[row].mismatch || linear {
            let k = if self.fp.edge_tags[e].mismatch { sibling } else { 0 };
            self.midpoint(s, e, k);
            return true;
        }
        false
    }

    /// The row of vertex `v`'s value `sibling` (child value `row`) where
    /// it does not take the vertex's mask: linear values and corners are
    /// kept, creases take `¾ v + ⅛ (a + b)` along their span, blended
    /// towards the corner while a semi-sharp feature decays (OpenSubdiv's
    /// `interpFVarFromVerts`). Returns `false` (and writes nothing) where
    /// the vertex's mask applies: a value matching its vertex, refined
    /// smoothly.
    pub fn vertex_default(
        &self,
        s: &mut crate::kernel::Stencil,
        v: usize,
        sibling: u32,
        row: usize,
        linear: bool,
    ) -> bool {
        let t = self.parent.topology();
        let pval = self.fp.values_of(v).start + sibling;
        let ptag = self.fp.tags[pval as usize];
        if linear {
            self.push(s, pval, 1.0);
            return true;
        }
        if !ptag.mismatch {
            return false;
        }
        let ring = Ring::of(t, v);
        let Some(ring) = ring.filter(|_| !self.fc.tags[row].is_corner()) else {
            self.push(s, pval, 1.0);
            return true;
        };
        let spans = self.fp.spans(self.parent, v, Some(&ring));
        let span = spans[sibling as usize];
        let ends = self.fp.crease_ends(t, &ring, span);
        let (mut vw, mut ew) = (0.75, 0.125);
        if ptag.semi_sharp {
            let from = if ptag.dep_sharp && spans.len() == 2 { spans[1 - sibling as usize] } else { span };
            let half = |e: u32| {
                let [a, _] = t.edge(e as usize);
                self.halves[2 * e as usize + usize::from(a as usize != v)]
            };
            let wc = self.fp.fractional_weight(self.parent, self.child, v, Some(&ring), from, half);
            vw = (1.0 - wc) * 0.75 + wc;
            ew = (1.0 - wc) * 0.125;
        }
        self.push(s, ends[0], ew);
        self.push(s, ends[1], ew);
        self.push(s, pval, vw);
        true
    }

    /// The value at the far end of `v`'s edge to vertex `end` (`v`'s own
    /// value `pval` if there is none).
    pub fn end_value(&self, v: usize, end: u32, pval: u32) -> u32 {
        let t = self.parent.topology();
        self.edge_to(v, end).map_or(pval, |e| self.fp.neighbor_value(t, e, v))
    }

    /// The values at the far ends of a crease rule's two edges, from `v`
    /// to `ua` and to `ub` (`v`'s own value `pval` where an edge is
    /// missing). Where both ends are one vertex, the two edges are the two
    /// halves of a degenerate parent edge (a face using a vertex twice in a
    /// row), two edges between the same vertices, as OpenSubdiv keeps them:
    /// each gives its own far value.
    pub fn end_values(&self, v: usize, ua: u32, ub: u32, pval: u32) -> [u32; 2] {
        let t = self.parent.topology();
        if ua == ub && ua as usize != v {
            let mut parallel = t.vertex_edges(v).iter().map(|&e| e as usize).filter(|&e| {
                let [a, b] = t.edge(e);
                (a == ua && b as usize == v) || (b == ua && a as usize == v)
            });
            if let (Some(e0), Some(e1)) = (parallel.next(), parallel.next()) {
                return [self.fp.neighbor_value(t, e0, v), self.fp.neighbor_value(t, e1, v)];
            }
        }
        [self.end_value(v, ua, pval), self.end_value(v, ub, pval)]
    }

    /// `v`'s edge to vertex `end`.
    fn edge_to(&self, v: usize, end: u32) -> Option<usize> {
        let t = self.parent.topology();
        t.vertex_edges(v).iter().map(|&e| e as usize).find(|&e| {
            let [a, b] = t.edge(e);
            (a == end && b as usize == v) || (b == end && a as usize == v)
        })
    }
}

/// One step of a scheme's split, as [`FVarRules::split`] hands it out.
#[derive(Debug)]
pub struct FVarSplit {
    /// The child mesh, with its effective sharpness.
    pub child: Mesh,
    /// `halves[2e + j]`: the child edge of parent edge `e` at endpoint `j`.
    pub halves: Vec<u32>,
    /// The child vertex of parent face 0's face point, if the split has
    /// face points.
    pub first_face_point: Option<usize>,
    /// The child vertex of parent edge 0's edge point.
    pub first_edge_point: usize,
}

/// What a scheme supplies to refine face-varying data with its rules:
/// its split and its masks. [`build`] does the rest — the face-varying
/// levels, the shared rules of [`LevelRows`] and face points' averages —
/// and calls the masks only for values that match their vertex's (or
/// continuous edges), refined smoothly.
pub trait FVarRules: Sync {
    /// The masks of one level, built once per level.
    type Masks: Sync;
    /// The scheme's name in messages.
    fn name(&self) -> &'static str;
    /// The control mesh with its effective sharpness.
    ///
    /// # Errors
    /// Input the scheme refuses.
    fn prepare(&self, mesh: &Mesh) -> Result<Mesh>;
    /// One split of `parent`: its child vertices are `parent`'s vertices
    /// first, then face points (if any) and edge points.
    ///
    /// # Errors
    /// Sizes over `u32`, memory.
    fn split(&self, parent: &Mesh, par: Par) -> Result<FVarSplit>;
    /// Where child corner `cc` of a split of `parent` comes from.
    fn corner_source(&self, parent: &Topology, cc: usize) -> CornerSource;
    /// The masks of `parent`'s level; `None` where values are linear.
    fn masks(&self, parent: &Mesh, mode: FVarLinearInterpolation, par: Par) -> Option<Self::Masks>;
    /// The row of vertex `v`'s one value, which matches the vertex.
    fn vertex_mask(&self, rows: &LevelRows<'_>, masks: &Self::Masks, v: usize, s: &mut crate::kernel::Stencil);
    /// The row of continuous edge `e`'s one value.
    fn edge_mask(&self, rows: &LevelRows<'_>, masks: &Self::Masks, e: usize, s: &mut crate::kernel::Stencil);
}

/// Refines the channel whose corner `c` takes row `indices[c]` of a table
/// of `num_values` values over `mesh`, `levels` times, by `rules`, with
/// `mode`'s rules for seams and boundaries (the mesh's own `fvar_boundary`
/// option is not read: pass it as `mode` to honour the file's tag).
///
/// # Errors
/// [`MeshError::DataLength`] (in [`SchemeError::Mesh`]) when `indices` has
/// not one entry per corner or one is out of range; what `rules` refuses;
/// the errors of the vertex refinement (sizes over `u32`, memory).
pub fn build<R: FVarRules>(
    rules: &R,
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    levels: u32,
    mode: FVarLinearInterpolation,
    par: Par,
) -> Result<FVarPlan> {
    let m0 = rules.prepare(mesh)?;
    let BaseLevel { level, source } = FVarLevel::base(&m0, indices, num_values, mode)?;
    let mut flevels = vec![level];
    let mut meshes = vec![m0];
    let mut operators = Vec::with_capacity(levels as usize);
    for l in 0..levels as usize {
        let parent = &meshes[l];
        let FVarSplit { child, halves, first_face_point, first_edge_point } = rules.split(parent, par)?;
        let pt = parent.topology();
        let source_of = |cc: usize| rules.corner_source(pt, cc);
        let map = SplitMap { first_face_point, first_edge_point, halves: &halves, source: &source_of };
        let fparent = &flevels[l];
        let fchild = fparent.child(parent, &child, &map)?;
        let masks = rules.masks(parent, mode, par);
        let rows = LevelRows {
            parent,
            child: &child,
            fp: fparent,
            fc: &fchild,
            halves: &halves,
            source: (l == 0).then_some(&source[..]),
        };
        let owner = owners(&fchild);
        let nv = pt.num_vertices();
        let row = |row: usize, s: &mut crate::kernel::Stencil| {
            let cv = owner[row] as usize;
            let sibling = row as u32 - fchild.value_ptr[cv];
            let linear = masks.is_none();
            if cv < nv {
                if !rows.vertex_default(s, cv, sibling, row, linear)
                    && let Some(m) = &masks
                {
                    rules.vertex_mask(&rows, m, cv, s);
                }
            } else if cv < first_edge_point {
                rows.face_average(s, cv - first_face_point.unwrap_or(nv), 1.0);
            } else {
                let e = cv - first_edge_point;
                if !rows.edge_default(s, e, sibling as usize, row, linear)
                    && let Some(m) = &masks
                {
                    rules.edge_mask(&rows, m, e, s);
                }
            }
        };
        let ncols = if l == 0 { num_values } else { fparent.num_values() };
        operators.push(crate::kernel::assemble_rows(fchild.num_values(), ncols, par, row)?);
        flevels.push(fchild);
        meshes.push(child);
    }
    FVarPlan::from_parts(rules.name(), mode, num_values, source, flevels, meshes, operators)
}

/// A face-varying channel refined over `L` levels by one of the schemes
/// (`subla_catmark::fvar`, `subla_loop::fvar`): the operator of each level
/// and the values of every level's corners. A [`Plan`]: `eval` refines a
/// table of values (rows: values, columns: channels), `operator(l)` is
/// `R_l` of the channel, and
/// [`Refinement`](crate::refinement::Refinement) composes them. Its
/// [`Plan::refined`] level is the *value mesh*: the level's faces with
/// value indices in place of vertex indices.
#[derive(Debug)]
pub struct FVarPlan {
    name: &'static str,
    mode: FVarLinearInterpolation,
    input_len: usize,
    source: Vec<u32>,
    levels: Vec<FVarLevel>,
    meshes: Vec<Mesh>,
    operators: Vec<CsrMat<f64>>,
    value_meshes: Vec<OnceLock<Mesh>>,
    // The operators with their rows' weights shared, per evaluation type:
    // made on the first evaluation (or `level_buffers`) in that type.
    shared64: OnceLock<Vec<SharedCsr<f64>>>,
    shared32: OnceLock<Vec<SharedCsr<f32>>>,
}

impl FVarPlan {
    /// A plan from its parts: `levels[l]` and `meshes[l]` for `l` in
    /// `0 ..= L`, `operators[l]` from level `l` to `l + 1`, whose level 0
    /// reads a table of `input_len` values; `source[i]` is the row of that
    /// table that value `i` of `levels[0]` is ([`BaseLevel::source`]).
    ///
    /// # Errors
    /// [`SchemeError::Internal`] where the parts do not fit together.
    pub fn from_parts(
        name: &'static str,
        mode: FVarLinearInterpolation,
        input_len: usize,
        source: Vec<u32>,
        levels: Vec<FVarLevel>,
        meshes: Vec<Mesh>,
        operators: Vec<CsrMat<f64>>,
    ) -> Result<FVarPlan> {
        let fits = levels.len() == meshes.len()
            && operators.len() + 1 == levels.len()
            && source.len() == levels[0].num_values()
            && source.iter().all(|&r| (r as usize) < input_len)
            && operators.iter().enumerate().all(|(l, r)| {
                let cols = if l == 0 { input_len } else { levels[l].num_values() };
                r.shape() == (levels[l + 1].num_values(), cols)
            });
        if !fits {
            return Err(SchemeError::Internal {
                what: "FVarPlan::from_parts",
                detail: format!("{name}: levels, meshes and operators do not fit together"),
            });
        }
        let value_meshes = (0..levels.len()).map(|_| OnceLock::new()).collect();
        Ok(FVarPlan {
            name,
            mode,
            input_len,
            source,
            levels,
            meshes,
            operators,
            value_meshes,
            shared64: OnceLock::new(),
            shared32: OnceLock::new(),
        })
    }

    /// The mode the plan was built with.
    pub fn mode(&self) -> FVarLinearInterpolation {
        self.mode
    }

    /// The value of each corner at `level` (0 ..= levels), in the order of
    /// that level's faces. At level 0 these are the plan's numbering of the
    /// control values (one per vertex and value, see [`FVarLevel::base`]),
    /// not the caller's indices.
    ///
    /// # Panics
    /// If `level` is over the plan's levels.
    pub fn indices(&self, level: u32) -> &[u32] {
        &self.levels[level as usize].corner_values
    }

    /// The face-varying level `level` (tags, values per vertex).
    ///
    /// # Panics
    /// If `level` is over the plan's levels.
    pub fn level(&self, level: u32) -> &FVarLevel {
        &self.levels[level as usize]
    }

    /// The vertex mesh of `level` (with effective sharpness), whose faces
    /// the channel's corners follow.
    ///
    /// # Panics
    /// If `level` is over the plan's levels.
    pub fn vertex_mesh(&self, level: u32) -> &Mesh {
        &self.meshes[level as usize]
    }

    /// The operators `R_0 … R_{L−1}` of the channel.
    pub fn operators(&self) -> &[CsrMat<f64>] {
        &self.operators
    }

    /// `eval_f64` into a new array.
    ///
    /// # Errors
    /// As [`Plan::eval_f64`].
    pub fn eval_owned(&self, values: ArrayView2<'_, f64>, par: Par) -> Result<Array2<f64>> {
        let mut out =
            crate::kernel::try_zeros::<f64>(self.output_len(), values.ncols(), "refined face-varying values")?;
        self.eval_f64(values, out.view_mut(), par)?;
        Ok(out)
    }

    /// The refined channel: the finest values of `values` and the finest
    /// corners' indices into them (holes included, in the finest faces'
    /// order).
    ///
    /// # Errors
    /// As [`Plan::eval_f64`].
    pub fn refine(&self, values: ArrayView2<'_, f64>, par: Par) -> Result<FaceVarying> {
        let indices = self.indices(self.levels()).to_vec();
        if self.operators.is_empty() {
            // No level: the control values in the plan's numbering, which
            // the level-0 corners use.
            assert_eq!(values.nrows(), self.input_len, "{}: values for a channel of {}", self.name, self.input_len);
            let rows: Vec<usize> = self.source.iter().map(|&r| r as usize).collect();
            return Ok(FaceVarying { values: values.select(ndarray::Axis(0), &rows), indices });
        }
        let values = self.eval_owned(values, par)?;
        Ok(FaceVarying { values, indices })
    }

    /// Buffers for every refined level's values of a table of `channels`
    /// columns, for [`FVarPlan::eval_levels`]: allocated once, reused by
    /// every evaluation (a frame loop then allocates nothing). Also makes
    /// the plan's evaluation form for `T` (see [`FVarPlan::eval_levels`]),
    /// so that the first evaluation costs what the others do.
    ///
    /// # Errors
    /// [`SchemeError::Algebra`] (out of memory) or [`SchemeError::TooLarge`]
    /// where the levels do not fit.
    pub fn level_buffers<T: Real + Float>(&self, channels: usize) -> Result<LevelBuffers<T>> {
        self.shared::<T>(Par::Rayon)?;
        let levels = (1..=self.levels())
            .map(|l| crate::kernel::try_zeros::<T>(self.level_len(l), channels, "a level of face-varying values"))
            .collect::<Result<_>>()?;
        Ok(LevelBuffers { levels })
    }

    /// Every level's values of `values` (rows: the control values, columns:
    /// channels), written into `buffers` (made by
    /// [`FVarPlan::level_buffers`] for as many channels), as OpenSubdiv's
    /// `InterpolateFaceVarying` level by level: one SpMV per level. The
    /// finest level is [`LevelBuffers::finest`]. Bitwise equal to
    /// [`Plan::eval_f64`] / [`Plan::eval_f32`], and to a CSR SpMV by each
    /// of [`FVarPlan::operators`] (the weights converted to `T`).
    ///
    /// The operators are evaluated as [`SharedCsr`]: each distinct row of
    /// weights stored once, so that a row reads four bytes an entry
    /// instead of twelve. The plan makes that form on its first evaluation
    /// in `T` (or in [`FVarPlan::level_buffers`]) and keeps it.
    ///
    /// # Errors
    /// [`SchemeError::Algebra`] where the evaluation form cannot be made
    /// (out of memory, on the first evaluation in `T`).
    ///
    /// # Panics
    /// Where `values` has not one row per control value, or `buffers` was
    /// not made by this plan for as many channels (as [`Plan::eval_f64`]
    /// panics on shapes).
    #[track_caller]
    pub fn eval_levels<T: Real + Float>(
        &self,
        values: ArrayView2<'_, T>,
        buffers: &mut LevelBuffers<T>,
        par: Par,
    ) -> Result<()> {
        let d = values.ncols();
        let fits = values.nrows() == self.input_len
            && buffers.levels.len() == self.operators.len()
            && buffers.levels.iter().enumerate().all(|(l, b)| b.dim() == (self.level_len(l as u32 + 1), d));
        assert!(
            fits,
            "{}: {} values × {d} channels for a channel of {} values, or level buffers not made for them",
            self.name,
            values.nrows(),
            self.input_len
        );
        for (l, r) in self.shared::<T>(par)?.iter().enumerate() {
            let (done, rest) = buffers.levels.split_at_mut(l);
            let x = if l == 0 { values.view() } else { done[l - 1].view() };
            r.apply(x, rest[0].view_mut(), par);
        }
        Ok(())
    }

    /// The operators as [`SharedCsr`] in `T`, made on the first call.
    fn shared<T: Real + Float>(&self, par: Par) -> Result<&[SharedCsr<T>]> {
        fn make<T: Float + Send + Sync>(ops: &[CsrMat<f64>], par: Par) -> Result<Vec<SharedCsr<T>>> {
            ops.iter().map(|r| Ok(SharedCsr::from_csr(r.as_ref(), par)?)).collect()
        }
        let any: &dyn Any = if TypeId::of::<T>() == TypeId::of::<f64>() {
            get_or_try_init(&self.shared64, || make::<f64>(&self.operators, par))?
        } else {
            get_or_try_init(&self.shared32, || make::<f32>(&self.operators, par))?
        };
        match any.downcast_ref::<Vec<SharedCsr<T>>>() {
            Some(v) => Ok(v),
            None => unreachable!("Real is implemented for f32 and f64 only"),
        }
    }

    fn eval_generic<T: Real + Float>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        crate::check_eval_shapes(self, self.name, control.dim(), out.dim());
        let shared = self.shared::<T>(par)?;
        let Some((last, head)) = shared.split_last() else {
            out.assign(&control);
            return Ok(());
        };
        let d = control.ncols();
        let mut cur: Option<Array2<T>> = None;
        for r in head {
            let mut next = crate::kernel::try_zeros::<T>(r.nrows(), d, "a level of a face-varying refinement")?;
            let x = cur.as_ref().map_or(control.view(), |c| c.view());
            r.apply(x, next.view_mut(), par);
            cur = Some(next);
        }
        let x = cur.as_ref().map_or(control.view(), |c| c.view());
        last.apply(x, out, par);
        Ok(())
    }
}

/// Every refined level's values of a face-varying channel (levels
/// `1 ..= L`), reused across evaluations: [`FVarPlan::level_buffers`],
/// [`FVarPlan::eval_levels`].
#[derive(Clone, Debug)]
pub struct LevelBuffers<T> {
    levels: Vec<Array2<T>>,
}

impl<T> LevelBuffers<T> {
    /// The values of `level` (`1 ..= L`; level 0 is the caller's table).
    ///
    /// # Panics
    /// If `level` is 0 or over the plan's levels.
    pub fn level(&self, level: u32) -> ArrayView2<'_, T> {
        assert!(level >= 1 && level as usize <= self.levels.len(), "level {level} of 1..={}", self.levels.len());
        self.levels[level as usize - 1].view()
    }

    /// The finest level's values (none for a plan of no levels).
    pub fn finest(&self) -> Option<ArrayView2<'_, T>> {
        self.levels.last().map(|a| a.view())
    }
}

impl Plan for FVarPlan {
    fn name(&self) -> &'static str {
        self.name
    }
    fn levels(&self) -> u32 {
        self.operators.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        match level {
            0 => self.input_len,
            l => self.levels.get(l as usize).map_or(0, FVarLevel::num_values),
        }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_generic(control, out, par)
    }
    fn operator(&self, level: u32, _par: Par) -> Result<CsrMat<f64>> {
        let levels = self.levels();
        self.operators.get(level as usize).cloned().ok_or(SchemeError::NoSuchLevel { level, levels })
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.operators.get(level as usize).map(|r| r.nnz() as u64)
    }
    /// The value mesh of `level`: the level's faces over its values (at
    /// level 0, over the plan's numbering of the control values, see
    /// [`FVarPlan::indices`]).
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        let levels = self.levels();
        let cell = self.value_meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels })?;
        get_or_try_init(cell, || {
            let m = &self.meshes[level as usize];
            let fl = &self.levels[level as usize];
            let vt = Topology::build(fl.num_values(), m.topology().face_ptr().to_vec(), fl.corner_values.clone(), par)?;
            let (ne, nv) = (vt.num_edges(), vt.num_vertices());
            Ok(Mesh::from_parts(vt, vec![0.0; ne], vec![0.0; nv], m.holes().to_vec(), m.options())?)
        })
    }
    /// The value mesh's faces of `level` (those of [`FVarPlan::refined`]),
    /// straight from the level's corner values: no connectivity derived.
    fn faces(&self, level: u32, _par: Par) -> Result<crate::Faces<'_>> {
        let levels = self.levels();
        let (Some(m), Some(fl)) = (self.meshes.get(level as usize), self.levels.get(level as usize)) else {
            return Err(SchemeError::NoSuchLevel { level, levels });
        };
        Ok(crate::Faces::new(fl.num_values(), m.topology().face_ptr(), &fl.corner_values, m.holes()))
    }
}

/// The value mesh of a channel over `m0`, a control mesh as its scheme
/// prepares it (OpenSubdiv's sharpness preparation: boundary and
/// non-manifold edges infinitely sharp), with the tags that make the
/// scheme's vertex refinement of it the channel's face-varying refinement:
/// the algebra formulation of [`build`] (`subla_catmark::fvar::value_mesh`,
/// `subla_loop::fvar::value_mesh`).
///
/// The value mesh has the faces of `m0` over the channel's values (in the
/// plan's numbering of [`FVarLevel::base`]; `source[i]` is the caller's row
/// of value `i`). It differs from the vertex mesh at the seams, which are
/// its boundaries. With
/// * every edge's sharpness that of the vertex mesh's edge (after
///   OpenSubdiv's preparation: boundary and non-manifold edges infinitely
///   sharp) — a seam, as a boundary of the value mesh, is infinitely sharp
///   too, so its values follow the crease rule and its edge points are
///   midpoints;
/// * a value whose neighbourhood matches its vertex's: the vertex's
///   sharpness, so that the vertex's mask applies; a value the mode makes a
///   corner: infinitely sharp; a smooth seam or boundary value: none (the
///   crease rule of its two boundary edges);
/// * the vertex mesh's options with boundary interpolation "edge only"
///   (the channel's tags, not the vertex rule, decide its corners),
///
/// as [`ValueMesh::mesh`], the scheme's refinement of the value mesh
/// refines the channel as the scheme's [`build`] does. In `All` mode the
/// channel is refined linearly: refine the value mesh with the linear
/// scheme (bilinear, for quads); its edges and values are all infinitely
/// sharp, which makes Loop's refinement of it linear too (Loop reproduces
/// linear functions inside each parent triangle), but not Catmull-Clark's
/// past the first level (the edges inside a face are new and smooth). A
/// semi-sharp value (a semi-sharp feature in its span) takes its vertex's
/// sharpness, which with the span's semi-sharp edges gives the value
/// mesh's vertex rule the corner-then-crease behaviour of OpenSubdiv's
/// semi-sharp values. Three kinds of values are approximated, and counted
/// in [`ValueMesh::approximate`]: a value sharpened by its sibling's
/// semi-sharpness (`CornersPlus1`/`CornersPlus2`), which OpenSubdiv blends
/// by the sibling's weight; values at non-manifold vertices; and, with
/// Chaikin's crease method, values split by a seam at a vertex with a
/// semi-sharp edge (Chaikin's rule reads every edge at the vertex, the
/// value mesh only those of the value's span).
///
/// # Errors
/// [`MeshError::DataLength`] (in [`SchemeError::Mesh`]) when `indices` has
/// not one entry per corner or one is out of range.
pub fn value_mesh_of(
    m0: &Mesh,
    indices: &[u32],
    num_values: usize,
    mode: FVarLinearInterpolation,
) -> Result<ValueMesh> {
    use subla_mesh::tags::SHARPNESS_INFINITE;
    let base = FVarLevel::base(m0, indices, num_values, mode)?;
    let (level, source) = (base.level, base.source);
    let t = m0.topology();
    let owner = owners(&level);
    // `All`: every edge and value infinitely sharp (see above).
    let linear = mode == FVarLinearInterpolation::All;
    let vt = Topology::build(level.num_values(), t.face_ptr().to_vec(), level.corner_values.clone(), Par::Rayon)?;
    // Each value-mesh edge is the vertex mesh's edge between its ends'
    // vertices.
    let es: Vec<f32> = vt
        .edges()
        .iter()
        .map(|&[a, b]| {
            let (va, vb) = (owner[a as usize], owner[b as usize]);
            let s = t.find_edge(va, vb).map_or(SHARPNESS_INFINITE, |e| m0.edge_sharpness()[e as usize]);
            if linear { SHARPNESS_INFINITE } else { s }
        })
        .collect();
    let mut approximate = 0;
    // Chaikin's rule sharpens a child edge by the other semi-sharp edges at
    // its vertex: a value split from its siblings by a seam sees only the
    // edges of its own span, so its edges decay otherwise than the
    // channel's (which follow the vertex mesh's).
    let chaikin = m0.options().crease_method == subla_mesh::CreaseMethod::Chaikin;
    let mut values_of = vec![0u32; t.num_vertices()];
    for &v in &owner {
        values_of[v as usize] += 1;
    }
    let split_semi = |v: usize| {
        chaikin && values_of[v] > 1 && t.vertex_edges(v).iter().any(|&e| is_semi(m0.edge_sharpness()[e as usize]))
    };
    let vs: Vec<f32> = (0..level.num_values())
        .map(|i| {
            let tag = level.tags[i];
            let v = owner[i] as usize;
            if linear {
                return SHARPNESS_INFINITE;
            }
            if tag.dep_sharp || tag.non_manifold || split_semi(v) {
                approximate += 1;
                return m0.vertex_sharpness()[v];
            }
            if tag.semi_sharp {
                // A corner while the semi-sharp features of its span last,
                // then a crease: the vertex's sharpness, with the span's
                // semi-sharp edges, gives the value mesh's vertex rule that.
                return m0.vertex_sharpness()[v];
            }
            match (tag.mismatch, tag.is_corner()) {
                (false, _) => m0.vertex_sharpness()[v],
                (true, true) => SHARPNESS_INFINITE,
                (true, false) => 0.0,
            }
        })
        .collect();
    let mut options = m0.options();
    options.boundary = subla_mesh::BoundaryInterpolation::EdgeOnly;
    let mesh = Mesh::from_parts(vt, es, vs, m0.holes().to_vec(), options)?;
    Ok(ValueMesh { mesh, source, approximate })
}

/// The tagged value mesh of a channel ([`value_mesh_of`]).
#[derive(Clone, Debug)]
pub struct ValueMesh {
    /// The value mesh: the faces over the values, with the tags that make
    /// its refinement the channel's.
    pub mesh: Mesh,
    /// `source[i]`: the caller's row of value `i` (the rows of the control
    /// values to refine as the value mesh's vertex data).
    pub source: Vec<u32>,
    /// How many values take an approximate tag (sharpened by a semi-sharp
    /// sibling, or at a non-manifold vertex): where this is zero, the value
    /// mesh's refinement equals [`build`]'s to rounding.
    pub approximate: usize,
}

/// A channel refined as its tagged value mesh ([`value_mesh_of`]) by a
/// vertex plan: the fast face-varying path where the value mesh is exact
/// ([`ValueMesh::approximate`] is zero). Building it costs the value mesh
/// (one analysis of the control level) and the vertex plan, which can be
/// any of the scheme's (the edge-friend or halfedge plans keep no
/// connectivity they do not need); its values are in the vertex plan's
/// numbering and its corners follow the plan's finest faces.
pub struct ValueMeshRefinement {
    plan: Box<dyn Plan>,
    source: Vec<u32>,
    input_len: usize,
}

impl std::fmt::Debug for ValueMeshRefinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValueMeshRefinement")
            .field("plan", &self.plan.name())
            .field("values", &self.source.len())
            .finish()
    }
}

impl Plan for ValueMeshRefinement {
    fn name(&self) -> &'static str {
        "value-mesh face-varying"
    }
    fn levels(&self) -> u32 {
        self.plan.levels()
    }
    /// Level 0 is the caller's table; the others the vertex plan's levels.
    fn level_len(&self, level: u32) -> usize {
        if level == 0 { self.input_len } else { self.plan.level_len(level) }
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        crate::check_eval_shapes(self, self.name(), control.dim(), out.dim());
        if self.plan.levels() == 0 {
            out.assign(&control);
            return Ok(());
        }
        self.plan.eval_f64(self.control_values(control).view(), out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        crate::check_eval_shapes(self, self.name(), control.dim(), out.dim());
        if self.plan.levels() == 0 {
            out.assign(&control);
            return Ok(());
        }
        self.plan.eval_f32(self.control_values(control).view(), out, par)
    }
    /// The vertex plan's `R_l`; at level 0 with its columns mapped to the
    /// caller's table (values sharing a row of it summed).
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        let r = self.plan.operator(level, par)?;
        if level > 0 {
            return Ok(r);
        }
        let (mut ptr, mut idx, mut vals) = (vec![0u32], Vec::with_capacity(r.nnz()), Vec::with_capacity(r.nnz()));
        let mut row: crate::kernel::Stencil = Vec::new();
        for i in 0..r.nrows() {
            row.clear();
            let (cols, ws) = r.row(i);
            row.extend(cols.iter().zip(ws).map(|(&c, &w)| (self.source[c as usize], w)));
            crate::kernel::merge_stencil(&mut row);
            idx.extend(row.iter().map(|e| e.0));
            vals.extend(row.iter().map(|e| e.1));
            ptr.push(idx.len() as u32);
        }
        Ok(CsrMat::try_new(r.nrows(), self.input_len, ptr, idx, vals)?)
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        self.plan.operator_bound(level)
    }
    /// The value mesh's levels (level 0 over the value mesh's numbering of
    /// the control values, see [`ValueMeshRefinement::control_values`]).
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.plan.refined(level, par)
    }
    fn faces(&self, level: u32, par: Par) -> Result<crate::Faces<'_>> {
        self.plan.faces(level, par)
    }
}

impl ValueMeshRefinement {
    /// The plan `plan` built over `vm.mesh` refines a table of
    /// `input_len` control values (the caller's rows, gathered through
    /// `vm.source`).
    ///
    /// # Errors
    /// [`SchemeError::Internal`] where the plan does not read the value
    /// mesh's values or a source row is past `input_len`.
    pub fn new(vm: &ValueMesh, plan: Box<dyn Plan>, input_len: usize) -> Result<ValueMeshRefinement> {
        if plan.input_len() != vm.source.len() || vm.source.iter().any(|&r| r as usize >= input_len) {
            return Err(SchemeError::Internal {
                what: "ValueMeshRefinement::new",
                detail: format!(
                    "{}: the plan reads {} values, the value mesh has {}",
                    plan.name(),
                    plan.input_len(),
                    vm.source.len()
                ),
            });
        }
        Ok(ValueMeshRefinement { plan, source: vm.source.clone(), input_len })
    }

    /// The vertex plan over the value mesh.
    pub fn plan(&self) -> &dyn Plan {
        &*self.plan
    }

    /// The value mesh's control values: the rows of the caller's table
    /// `values` that its values are (what [`ValueMeshRefinement::plan`]
    /// evaluates; a frame loop gathers them once per frame and calls the
    /// plan's `eval` into its own buffer).
    ///
    /// # Panics
    /// If `values` has not `input_len` rows.
    pub fn control_values<T: Copy>(&self, values: ArrayView2<'_, T>) -> Array2<T> {
        assert_eq!(values.nrows(), self.input_len, "{}: values for a channel of {}", self.plan.name(), self.input_len);
        let rows: Vec<usize> = self.source.iter().map(|&r| r as usize).collect();
        values.select(ndarray::Axis(0), &rows)
    }

    /// The refined channel: the finest values of `values` (the caller's
    /// table, one row per value) and each finest corner's value, in the
    /// order of the plan's finest faces (holes included).
    ///
    /// # Errors
    /// As [`Plan::eval_f64`] and [`Plan::faces`].
    ///
    /// # Panics
    /// If `values` has not `input_len` rows.
    pub fn refine(&self, values: ArrayView2<'_, f64>, par: Par) -> Result<FaceVarying> {
        let x = self.control_values(values);
        let indices = self.plan.faces(self.plan.levels(), par)?.face_verts.to_vec();
        if self.plan.levels() == 0 {
            return Ok(FaceVarying { values: x, indices });
        }
        let mut out =
            crate::kernel::try_zeros::<f64>(self.plan.output_len(), values.ncols(), "refined face-varying values")?;
        self.plan.eval_f64(x.view(), out.view_mut(), par)?;
        Ok(FaceVarying { values: out, indices })
    }
}
