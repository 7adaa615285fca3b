//! Patch identification on a sparse refinement (OpenSubdiv's
//! `Far::PatchBuilder` with the options `Far::PatchTableFactory` gives it by
//! default: inf-sharp features approximated as smooth in regular patches,
//! smooth boundary corners treated as sharp).
//!
//! A face of level `k` is a *patch* when its neighbourhood is complete (at
//! the control level: no corner on a face other than a quad), and a *leaf*
//! when it is not refined further (or `k` is the deepest level). A leaf
//! patch is *regular* (a bicubic B-spline over the 16 points around it,
//! with the phantom points of boundary edges extrapolated by the basis) or
//! *irregular* (an end cap built from the one-rings of its corners).
//!
//! # Regular points
//! The 4 × 4 grid, row-major with rows along v and columns along u; the
//! face's corners are points 5, 6, 10 and 9:
//! ```text
//!   12 13 14 15
//!    8  9 10 11        9 = corner 3, 10 = corner 2
//!    4  5  6  7        5 = corner 0,  6 = corner 1
//!    0  1  2  3
//! ```
//! Boundary bit `i` stands for the face's edge `i` (corner `i` → `i+1`).
//!
//! # Loop
//! A Loop triangle of level `k > 0` is a patch when its parent was selected
//! (OpenSubdiv's child face tag; its corners' tags are not enough). Its
//! regular patch is the quartic box spline over the 12 points around it
//! ([`PatchType::Loop`](crate::basis::PatchType::Loop)): corners 0, 1, 2 at
//! points 4, 5, 8, and OpenSubdiv's 5-bit boundary mask of edges and
//! boundary vertices.

use subla_mesh::Mesh;

use crate::sparse::{Level, Scheme};
use crate::tags::{VTag, face_tag, rule};

/// The faces around vertex `v` in order, each with the position of `v` in
/// it: counter-clockwise, the next face across the previous one's trailing
/// edge; for a boundary vertex, starting at the face whose leading edge is
/// on the boundary. Manifold vertices whose neighbourhood the level holds.
pub(crate) fn vertex_ring(mesh: &Mesh, v: usize) -> Vec<(u32, u8)> {
    let t = mesh.topology();
    let corners = t.vertex_corners(v);
    let n = corners.len();
    let fptr = t.face_ptr();
    let local = |c: u32| -> (u32, u8) {
        let f = t.corner_faces()[c as usize];
        (f, (c - fptr[f as usize]) as u8)
    };
    // The start: a corner whose leading edge is a boundary, else the first.
    let start = corners
        .iter()
        .copied()
        .find(|&c| t.edge_corners(t.corner_edges()[c as usize] as usize).len() == 1)
        .unwrap_or(corners[0]);
    let mut ring = Vec::with_capacity(n);
    let mut c = start;
    for _ in 0..n {
        ring.push(local(c));
        // Trailing edge: the outgoing edge of the previous corner.
        let pc = t.prev_corner(c as usize);
        let e = t.corner_edges()[pc] as usize;
        let Some(&other) = t.edge_corners(e).iter().find(|&&x| x as usize != pc) else {
            break;
        };
        // In the face across, v's corner follows `other`'s... `other` goes
        // from v to the previous vertex, so it is v's own corner there.
        c = other;
        if c == start {
            break;
        }
    }
    ring
}

/// The kind of a leaf patch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Leaf {
    /// Bicubic B-spline with the boundary mask.
    Regular(u8),
    /// End cap.
    Irregular,
}

/// Whether face `f` of level `k` is a patch.
pub(crate) fn is_patch(level: &Level, k: usize, f: usize, scheme: Scheme) -> bool {
    if level.mesh.holes()[f] {
        return false;
    }
    if scheme == Scheme::Loop {
        return level.from_selected[f];
    }
    let comp = face_tag(&level.mesh, &level.tags, f);
    if k == 0 {
        return !comp.incid_irreg_face && level.mesh.topology().face_order(f) == 4;
    }
    !comp.incomplete
}

/// Regular (with boundary mask) or irregular, for a leaf patch.
pub(crate) fn classify(level: &Level, k: usize, f: usize, has_irregular_faces: bool) -> Leaf {
    let m = &level.mesh;
    let t = m.topology();
    let verts = t.face(f);
    // Patches are quads or triangles: the corners' tags fit on the stack.
    let mut corner_tags = [VTag::default(); 4];
    for (slot, &v) in corner_tags.iter_mut().zip(verts) {
        *slot = level.tags[v as usize];
    }
    let vt = &corner_tags[..verts.len().min(4)];
    let comp = vt.iter().fold(VTag::default(), |a, &b| a.or(b));
    let regular = 'r: {
        if !comp.inf_sharp && !comp.inf_sharp_edges {
            break 'r !comp.xordinary;
        }
        if !comp.non_manifold && !comp.xordinary {
            break 'r true;
        }
        let needs_extra = usize::from(comp.xordinary && has_irregular_faces);
        if k > needs_extra {
            let inspect = comp.non_manifold || (comp.xordinary && comp.boundary);
            if !inspect {
                break 'r !comp.xordinary;
            }
        }
        let c0 = t.face_ptr()[f] as usize;
        let n = verts.len();
        let boundary_edge = |i: usize| t.edge_corners(t.corner_edges()[c0 + i] as usize).len() == 1;
        let reg_boundary_faces = if n == 4 { 2 } else { 3 };
        for (i, &tv) in vt.iter().enumerate() {
            if tv.non_manifold {
                // Regular only as a sharp corner of one face or a boundary of
                // the regular number of faces (OpenSubdiv's `IsPatchRegular`).
                let span = corner_span(m, c0 + i);
                let want = if tv.inf_sharp { 1 } else { reg_boundary_faces };
                if span.corners.len() != want {
                    break 'r false;
                }
                continue;
            }
            if tv.xordinary {
                if !tv.inf_sharp_edges {
                    break 'r false;
                }
                if tv.boundary && !tv.inf_sharp && boundary_edge(i) && boundary_edge((i + n - 1) % n) {
                    continue;
                }
                break 'r false;
            }
        }
        true
    };
    if regular { Leaf::Regular(boundary_mask(level, f)) } else { Leaf::Irregular }
}

/// The regular boundary mask of face `f`: its boundary edges (interior
/// inf-sharp edges are approximated as smooth); for a triangle,
/// OpenSubdiv's encoding of its boundary edges and boundary corners
/// (`encodeTriBoundaryMask`, see [`box_spline_weights`](crate::basis::box_spline_weights)).
pub(crate) fn boundary_mask(level: &Level, f: usize) -> u8 {
    let m = &level.mesh;
    let t = m.topology();
    let comp = face_tag(m, &level.tags, f);
    if !comp.inf_sharp_edges {
        return 0;
    }
    let c0 = t.face_ptr()[f] as usize;
    let n = t.face_order(f);
    let edges = (0..n).fold(0u8, |acc, i| acc | (u8::from(is_singular(m, t.corner_edges()[c0 + i] as usize)) << i));
    if n == 4 {
        return edges;
    }
    let verts = t.face(f).iter().enumerate().fold(0u8, |acc, (i, &v)| {
        let tag = level.tags[v as usize];
        acc | (u8::from(tag.boundary || tag.non_manifold) << i)
    });
    match (edges, verts) {
        (0, 0) => 0,
        (0, v) => (1 << 3) | v,
        (1 | 2 | 4, 7) => (2 << 3) | edges,
        (e, _) => e,
    }
}

/// The boundary edges and boundary corners of a triangle's boundary mask
/// (OpenSubdiv's `decodeTriBoundaryMask`).
fn decode_tri_mask(mask: u8) -> (u8, u8) {
    const CORNERS_OF_EDGES: [u8; 8] = [0, 3, 6, 7, 5, 7, 7, 7];
    let low = mask & 7;
    match mask >> 3 {
        1 => (0, low),
        2 => (low, 7),
        _ => (low, CORNERS_OF_EDGES[low as usize]),
    }
}

/// The 12 points of a regular Loop patch on triangle `f` (OpenSubdiv's
/// `getTriRegularPatchPoints`); points beyond a boundary are the face's
/// first corner (their weight is zero).
pub(crate) fn regular_points_tri(level: &Level, f: usize, mask: u8) -> [u32; 12] {
    // Per corner: the corner, then the three points of the ring beyond it,
    // counter-clockwise from the one past the corner's leading edge.
    const PER_CORNER: [[usize; 4]; 3] = [[4, 7, 3, 0], [5, 1, 2, 6], [8, 9, 11, 10]];
    let m = &level.mesh;
    let t = m.topology();
    let verts = t.face(f);
    let mut out = [verts[0]; 12];
    let (edges, corners) = if mask == 0 { (0, 0) } else { decode_tri_mask(mask) };
    for i in 0..3 {
        let idx = PER_CORNER[i];
        out[idx[0]] = verts[i];
        if level.tags[verts[i] as usize].non_manifold {
            // Such a corner is regular only as a boundary of its span, whose
            // faces are found across the face's edges, not in the ring.
            let c = t.face_ptr()[f] as usize + i;
            let fv = t.face_verts();
            let lead = edges & (1 << i) != 0;
            let trail = edges & (1 << ((i + 2) % 3)) != 0;
            if lead && trail {
            } else if lead {
                if let Some(x) = across_trailing(m, c).and_then(|x| across_trailing(m, x)) {
                    out[idx[1]] = fv[t.next_corner(x)];
                    out[idx[2]] = fv[t.prev_corner(x)];
                }
            } else if trail {
                if let Some(x) = across_leading(m, c).and_then(|x| across_leading(m, x)) {
                    out[idx[3]] = fv[t.next_corner(x)];
                }
            } else if let Some(x) = across_trailing(m, c) {
                out[idx[1]] = fv[t.prev_corner(x)];
            }
            continue;
        }
        // Walks around the corner's vertex, as `vertex_ring` orders its faces
        // (forward across trailing edges, back across leading ones), without
        // building the ring.
        let c = t.face_ptr()[f] as usize + i;
        let fv = t.face_verts();
        let walk = |k: usize, forward: bool| {
            (0..k).try_fold(c, |x, _| if forward { across_trailing(m, x) } else { across_leading(m, x) })
        };
        // Vertex `d` corners after corner `x` of its face.
        let at = |x: usize, d: usize| fv[(0..d).fold(x, |x, _| t.next_corner(x))];
        let lead = edges & (1 << i) != 0;
        let trail = edges & (1 << ((i + 2) % 3)) != 0;
        if corners & (1 << i) == 0 {
            let Some(x2) = walk(2, true) else { continue };
            let Some(x3) = across_trailing(m, x2) else { continue };
            out[idx[1]] = at(x2, 1);
            out[idx[2]] = at(x3, 1);
            out[idx[3]] = at(x3, 2);
        } else if lead && trail {
        } else if lead {
            let Some(x2) = walk(2, true) else { continue };
            out[idx[1]] = at(x2, 1);
            out[idx[2]] = at(x2, 2);
        } else if trail {
            let Some(x) = walk(2, false) else { continue };
            out[idx[3]] = at(x, 1);
        } else {
            let Some(x1) = walk(1, true) else { continue };
            out[idx[1]] = at(x1, 2);
        }
    }
    out
}

/// The 16 points of a regular patch (see the module docs); points beyond a
/// boundary are the face's first corner (their weight is zero).
pub(crate) fn regular_points(level: &Level, f: usize, mask: u8) -> [u32; 16] {
    const PER_CORNER: [[usize; 4]; 4] = [[5, 4, 0, 1], [6, 2, 3, 7], [10, 11, 15, 14], [9, 13, 12, 8]];
    let m = &level.mesh;
    let t = m.topology();
    let verts = t.face(f);
    let fill = verts[0];
    let mut out = [fill; 16];
    let c0 = t.face_ptr()[f] as usize;
    let fv = t.face_verts();
    for i in 0..4 {
        let idx = PER_CORNER[i];
        out[idx[0]] = verts[i];
        let c = c0 + i;
        let lead = mask & (1 << i) != 0;
        let trail = mask & (1 << ((i + 3) % 4)) != 0;
        // Walks around the corner's vertex, as `vertex_ring` orders its faces,
        // without building the ring.
        if !lead && !trail {
            let Some(opp) = across_trailing(m, c).and_then(|x| across_trailing(m, x)) else { continue };
            let n1 = t.next_corner(opp);
            let n2 = t.next_corner(n1);
            out[idx[1]] = fv[n1];
            out[idx[2]] = fv[n2];
            out[idx[3]] = fv[t.next_corner(n2)];
        } else if lead && trail {
        } else if lead {
            let Some(x) = across_trailing(m, c) else { continue };
            out[idx[1]] = fv[t.prev_corner(x)];
        } else {
            let Some(x) = across_leading(m, c) else { continue };
            out[idx[3]] = fv[t.next_corner(x)];
        }
    }
    out
}

/// The corner of the same vertex in the face across corner `c`'s trailing
/// edge (the next face of [`vertex_ring`]).
fn across_trailing(m: &Mesh, c: usize) -> Option<usize> {
    let t = m.topology();
    let pc = t.prev_corner(c);
    let e = t.corner_edges()[pc] as usize;
    t.edge_corners(e).iter().map(|&x| x as usize).find(|&x| x != pc)
}

/// The corner of the same vertex in the face across corner `c`'s leading
/// edge (the previous face of [`vertex_ring`]).
fn across_leading(m: &Mesh, c: usize) -> Option<usize> {
    let t = m.topology();
    let e = t.corner_edges()[c] as usize;
    t.edge_corners(e).iter().map(|&x| x as usize).find(|&x| x != c).map(|o| t.next_corner(o))
}

/// One corner of an irregular patch, as the end-cap conversion needs it:
/// valence (faces around), the patch face's place in the ring, and the
/// classification of the vertex.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct CornerInfo {
    pub(crate) num_faces: usize,
    pub(crate) patch_face: usize,
    pub(crate) boundary: bool,
    pub(crate) sharp: bool,
    pub(crate) dart: bool,
}

/// The corners of irregular quad `f` and the one-ring points of each
/// (OpenSubdiv's `gatherQuadRegularRingAroundVertex`: per face of the ring,
/// the vertex after the corner and the opposite one; a boundary ring ends
/// with the last face's vertex before the corner).
pub(crate) fn irregular_corners(level: &Level, f: usize) -> [(CornerInfo, Vec<u32>); 4] {
    std::array::from_fn(|i| irregular_corner(level, f, i))
}

/// [`irregular_corners`] for triangle `f` (OpenSubdiv's
/// `gatherTriRegularRingAroundVertex`: per face of the ring, the vertex
/// after the corner; a boundary ring ends with the last face's vertex
/// before the corner).
pub(crate) fn irregular_corners_tri(level: &Level, f: usize) -> [(CornerInfo, Vec<u32>); 3] {
    std::array::from_fn(|i| irregular_corner(level, f, i))
}

/// Corner `i` of irregular face `f` and its one-ring, for quads and
/// triangles alike.
fn irregular_corner(level: &Level, f: usize, i: usize) -> (CornerInfo, Vec<u32>) {
    let m = &level.mesh;
    let t = m.topology();
    let verts = t.face(f);
    let quad = verts.len() == 4;
    let v = verts[i] as usize;
    let tag = level.tags[v];
    let (ring, patch_face, boundary) = if tag.non_manifold {
        // Only the span of faces around the corner that is bounded by
        // singular edges (OpenSubdiv's `GetIrregularPatchCornerSpans`).
        let span = corner_span(m, t.face_ptr()[f] as usize + i);
        let ring: Vec<(u32, u8)> = span
            .corners
            .iter()
            .map(|&c| {
                let g = t.corner_faces()[c];
                (g, (c - t.face_ptr()[g as usize] as usize) as u8)
            })
            .collect();
        (ring, span.corner_in_span, !span.periodic)
    } else {
        let ring = vertex_ring(m, v);
        let patch_face = ring.iter().position(|&(g, _)| g as usize == f).unwrap_or(0);
        (ring, patch_face, tag.boundary)
    };
    let n = ring.len();
    let mut sharp = tag.corner || (tag.non_manifold && tag.inf_sharp);
    if !sharp && tag.xordinary && tag.boundary && !tag.inf_sharp && !tag.non_manifold {
        sharp = n == 1;
    }
    let info =
        CornerInfo { num_faces: n, patch_face, boundary, sharp, dart: tag.rule == rule::DART && tag.inf_sharp_edges };
    let mut pts = Vec::with_capacity(2 * n + 1);
    for (k, &(g, j)) in ring.iter().enumerate() {
        let fv = t.face(g as usize);
        let o = fv.len();
        pts.push(fv[(j as usize + 1) % o]);
        if quad {
            pts.push(fv[(j as usize + 2) % o]);
        }
        if boundary && k == n - 1 {
            pts.push(fv[(j as usize + o - 1) % o]);
        }
    }
    (info, pts)
}

/// Whether edge `e` bounds a corner span: a boundary or a non-manifold edge
/// (OpenSubdiv's singular edges; interior inf-sharp edges do not count, as
/// they are approximated as smooth).
fn is_singular(m: &Mesh, e: usize) -> bool {
    let t = m.topology();
    t.edge_corners(e).len() == 1 || t.edge_tags()[e] & subla_mesh::topology::edge_tag::NON_MANIFOLD != 0
}

/// The faces around a corner's vertex that are connected to the corner's
/// face across manifold edges.
pub(crate) struct CornerSpan {
    /// The vertex's corner in each face of the span, in ring order
    /// (counter-clockwise, from the face whose leading edge is singular).
    pub(crate) corners: Vec<usize>,
    /// The place of the starting face in `corners`.
    pub(crate) corner_in_span: usize,
    /// Whether the span closes around the vertex without a singular edge.
    pub(crate) periodic: bool,
}

/// The span of corner `c0` (OpenSubdiv's `identifyNonManifoldCornerSpan`):
/// faces reached from the corner's face across edges that are not singular,
/// first clockwise across leading edges, then counter-clockwise across
/// trailing ones.
pub(crate) fn corner_span(m: &Mesh, c0: usize) -> CornerSpan {
    let t = m.topology();
    let lead_start = t.corner_edges()[c0] as usize;
    let trail_start = t.corner_edges()[t.prev_corner(c0)] as usize;
    let mut periodic = false;
    let mut back = Vec::new();
    let mut c = c0;
    // A face can be met again only through a closed span, which the edge
    // comparisons end; the bound guards against malformed topology.
    let limit = t.num_faces() + 1;
    while !is_singular(m, t.corner_edges()[c] as usize) && back.len() < limit {
        let Some(x) = across_leading(m, c) else { break };
        back.push(x);
        c = x;
        let e = t.corner_edges()[c] as usize;
        if e == trail_start {
            periodic = !is_singular(m, e);
            break;
        }
    }
    let mut fwd = Vec::new();
    if !periodic && t.corner_edges()[c] as usize != trail_start {
        let mut c = c0;
        while !is_singular(m, t.corner_edges()[t.prev_corner(c)] as usize) && fwd.len() < limit {
            let Some(x) = across_trailing(m, c) else { break };
            fwd.push(x);
            c = x;
            let e = t.corner_edges()[t.prev_corner(c)] as usize;
            if e == lead_start {
                periodic = !is_singular(m, e);
                break;
            }
        }
    }
    let corner_in_span = back.len();
    let mut corners: Vec<usize> = back.into_iter().rev().collect();
    corners.push(c0);
    corners.extend(fwd);
    CornerSpan { corners, corner_in_span, periodic }
}
