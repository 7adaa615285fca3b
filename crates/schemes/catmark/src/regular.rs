//! Rows of the composed refinement matrix `R = R_{L−1} ⋯ R_0` in closed
//! form, inside regular patches.
//!
//! Catmull-Clark on a regular quad grid is tensor-product cubic B-spline
//! subdivision. A control face is *regular* here when it is a quad whose
//! four vertices are interior, manifold, of valence 4 with four quad faces,
//! and without sharpness on themselves or their edges (and no hole among
//! those faces): then every vertex that `L` levels put on the closed face
//! is `Σ w_x(r) w_y(s) p(r, s)` over the face's 4 × 4 control points, where
//! `w(t)` are the weights over four consecutive control points of the
//! point at `t / 2^L` after `L` steps of the one-dimensional rules
//! `(1, 6, 1) / 8` and `(1, 1) / 2`. Every refined vertex around the face
//! that those points need is computed by the same smooth rules, so the
//! product of the per-level matrices gives the same row.
//!
//! The weights are binary fractions with denominators of at most `2^{6L}`;
//! up to 8 levels every product and partial sum of them is exact in `f64`,
//! so the rows written here are the product's to the bit. Deeper plans get
//! no closed form.
//!
//! The rows are handed out as [`TensorRows`]: a refinement keeps them and
//! evaluates them from their weight table, without stored weights.
//!
//! Each finest vertex is located by following faces down the levels: the
//! child of corner `k` of a face covers the quarter at that corner, its
//! first edge along the parent's edge `k` (the quad split's order). A vertex
//! takes the first of its faces (vertex: its corners; edge point: its
//! edge's uses; face point: its face) that lies in a regular control face.

use subla_algebra::Par;
use subla_algebra::mem::try_filled_vec;
use subla_algebra::par::try_collect;
use subla_mesh::Mesh;
use subla_scheme::Result;
use subla_scheme::tensor::{TensorPatch, TensorRow, TensorRows};

/// Most levels with a closed form (where its weights are exact).
pub(crate) const MAX_LEVELS: usize = 8;

/// No control face (or not a regular one).
pub(crate) const NONE: u32 = u32::MAX;

/// A face at some level placed in its control face: corner 0 at `(x, y)`
/// of the control face's `2^L × 2^L` grid, edge 0 along `d1`, edge 3
/// arriving along `-d3` (directions `0..4`: `+x`, `+y`, `-x`, `-y`).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Frame {
    /// The control face ([`NONE`] outside the regular ones).
    pub face: u32,
    x: u16,
    y: u16,
    d1: u8,
    d3: u8,
}

/// The frame of a face outside every regular control face.
pub(crate) const NO_FRAME: Frame = Frame { face: NONE, x: 0, y: 0, d1: 0, d3: 0 };

#[inline]
fn step(d: u8) -> (i32, i32) {
    const STEPS: [(i32, i32); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
    STEPS[usize::from(d & 3)]
}

impl Frame {
    /// Directions of the face's edges `0..4`.
    #[inline]
    fn edges(&self) -> [u8; 4] {
        [self.d1, self.d3, (self.d1 + 2) & 3, (self.d3 + 2) & 3]
    }
    /// Grid position of corner `k` for a face of side `side`: corner 1 is
    /// one side along `d1` from corner 0, corner 3 one along `d3`, corner 2
    /// both.
    #[inline]
    pub(crate) fn corner(&self, k: usize, side: i32) -> (i32, i32) {
        let (along1, along3) = (i32::from(k == 1 || k == 2), i32::from(k >= 2));
        let ((ax, ay), (bx, by)) = (step(self.d1), step(self.d3));
        let (x, y) = (i32::from(self.x), i32::from(self.y));
        (x + side * (along1 * ax + along3 * bx), y + side * (along1 * ay + along3 * by))
    }
    /// The frame of regular control face `f`: its own grid.
    #[inline]
    fn control(f: usize) -> Frame {
        Frame { face: f as u32, x: 0, y: 0, d1: 0, d3: 1 }
    }
    /// Grid position of the face point of a face of side 2.
    #[inline]
    pub(crate) fn face_point(&self) -> (i32, i32) {
        self.corner(2, 1)
    }
    /// Grid position of the edge point of edge `k` of a face of side 2.
    #[inline]
    pub(crate) fn edge_point(&self, k: usize) -> (i32, i32) {
        let (x, y) = self.corner(k, 2);
        let (dx, dy) = step(self.edges()[k]);
        (x + dx, y + dy)
    }
    /// The row of the point at `(x, y)` of this frame's grid, in patch
    /// `patch_of[face]`.
    #[inline]
    pub(crate) fn row(&self, (x, y): (i32, i32), patch_of: &[u32]) -> TensorRow {
        TensorRow { patch: patch_of[self.face as usize], x: x as u16, y: y as u16 }
    }
    /// The frame of the child of corner `k` (the quad split's child face).
    #[inline]
    pub(crate) fn child(&self, k: usize, side: i32) -> Frame {
        let (x, y) = self.corner(k, side);
        let e = self.edges();
        Frame { face: self.face, x: x as u16, y: y as u16, d1: e[k], d3: (e[(k + 3) % 4] + 2) & 3 }
    }
}

/// One-dimensional weights of the points at `t / 2^levels`, `t = 0 ..=
/// 2^levels`, over the control points at `-1, 0, 1, 2`.
pub(crate) fn weights_1d(levels: usize) -> Vec<[f64; 4]> {
    let unit = |i: usize| {
        let mut w = [0.0; 4];
        w[i] = 1.0;
        w
    };
    // Points at parameters (j - 1) / 2^l, j = 0 .. 2^l + 3.
    let mut pts: Vec<[f64; 4]> = (0..4).map(unit).collect();
    for _ in 0..levels {
        let old = pts;
        let n_new = 2 * (old.len() - 3) + 3;
        pts = (0..n_new)
            .map(|i| {
                let mut w = [0.0; 4];
                if i % 2 == 1 {
                    // Vertex point of old point (i + 1) / 2.
                    let j = i.div_ceil(2);
                    for k in 0..4 {
                        w[k] = 0.125 * old[j - 1][k] + 0.75 * old[j][k] + 0.125 * old[j + 1][k];
                    }
                } else {
                    // Edge point between old points i / 2 and i / 2 + 1.
                    let j = i / 2;
                    for k in 0..4 {
                        w[k] = 0.5 * (old[j][k] + old[j + 1][k]);
                    }
                }
                w
            })
            .collect();
    }
    pts[1..pts.len() - 1].to_vec()
}

/// Whether vertex `u` is interior, manifold, of valence 4 with four quad
/// faces, none a hole (`holes`: the mesh's hole flags if it has any), and
/// without sharpness on itself or its edges.
fn regular_vertex(mesh: &Mesh, holes: Option<&[bool]>, u: usize) -> bool {
    let t = mesh.topology();
    let (fptr, cf) = (t.face_ptr(), t.corner_faces());
    let (es, vs) = (mesh.edge_sharpness(), mesh.vertex_sharpness());
    let edges = t.vertex_edges(u);
    let corners = t.vertex_corners(u);
    t.vertex_tags()[u] == 0
        && vs[u] == 0.0
        && edges.len() == 4
        && corners.len() == 4
        && edges.iter().all(|&e| es[e as usize] == 0.0 && t.edge_corners(e as usize).len() == 2)
        && corners.iter().all(|&c| {
            let g = cf[c as usize] as usize;
            fptr[g + 1] - fptr[g] == 4 && !holes.is_some_and(|h| h[g])
        })
}

/// The patch of control face `f`, if it is regular; `regular[u]` says
/// whether vertex `u` is ([`regular_vertex`]).
fn patch(mesh: &Mesh, regular: &[bool], f: usize) -> Option<TensorPatch> {
    let t = mesh.topology();
    let (fptr, fv, cf, ce) = (t.face_ptr(), t.face_verts(), t.corner_faces(), t.corner_edges());
    if fptr[f + 1] - fptr[f] != 4 {
        return None;
    }
    let start = fptr[f] as usize;
    let v: [u32; 4] = std::array::from_fn(|k| fv[start + k]);
    if !v.iter().all(|&u| regular[u as usize]) {
        return None;
    }
    // Faces are quads from here on.
    let next = |c: usize| {
        let s = fptr[cf[c] as usize] as usize;
        s + (c - s + 1) % 4
    };
    let across = |c: usize| -> Option<usize> {
        let uses = t.edge_corners(ce[c] as usize);
        uses.iter().map(|&u| u as usize).find(|&u| u != c)
    };
    let (mut outer_a, mut outer_b, mut diag, mut side) = ([0u32; 4], [0u32; 4], [0u32; 4], [0u32; 4]);
    for k in 0..4 {
        // The face across edge k: (v_{k+1}, v_k, a_k, b_k).
        let c1 = across(start + k)?;
        let c2 = next(c1);
        if fv[c1] != v[(k + 1) % 4] || fv[c2] != v[k] {
            return None;
        }
        outer_a[k] = fv[next(c2)];
        outer_b[k] = fv[next(next(c2))];
        // The diagonal face at v_k: (a_k, v_k, side_k, diag_k).
        let q1 = across(c2)?;
        let q2 = next(q1);
        if fv[q1] != outer_a[k] || fv[q2] != v[k] {
            return None;
        }
        side[k] = fv[next(q2)];
        diag[k] = fv[next(next(q2))];
    }
    if (0..4).any(|k| side[k] != outer_b[(k + 3) % 4]) {
        return None;
    }
    // Grid (r, s): corners (1,1) (2,1) (2,2) (1,2); edge k's outer points
    // and the diagonal at each corner.
    let at = [
        ((1, 1), v[0]),
        ((2, 1), v[1]),
        ((2, 2), v[2]),
        ((1, 2), v[3]),
        ((1, 0), outer_a[0]),
        ((2, 0), outer_b[0]),
        ((3, 1), outer_a[1]),
        ((3, 2), outer_b[1]),
        ((2, 3), outer_a[2]),
        ((1, 3), outer_b[2]),
        ((0, 2), outer_a[3]),
        ((0, 1), outer_b[3]),
        ((0, 0), diag[0]),
        ((3, 0), diag[1]),
        ((3, 3), diag[2]),
        ((0, 3), diag[3]),
    ];
    // Sorted by id as one key: id above, grid index below.
    let mut keys: [u64; 16] = std::array::from_fn(|i| {
        let ((r, s), id): ((u8, u8), u32) = at[i];
        (u64::from(id) << 8) | u64::from(4 * r + s)
    });
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] >> 8 == w[1] >> 8) {
        return None;
    }
    Some(TensorPatch { ids: keys.map(|k| (k >> 8) as u32), grid: keys.map(|k| k as u8) })
}

/// The regular control faces of a mesh and their patches.
pub(crate) struct ControlPatches {
    /// The patch of each control face, or [`NONE`].
    pub patch_of: Vec<u32>,
    /// The patches, in control face order.
    pub patches: Vec<TensorPatch>,
}

/// The patches of the regular faces of the control mesh `base`, or `None`
/// where no face is regular.
pub(crate) fn control_patches(base: &Mesh, par: Par) -> Result<Option<ControlPatches>> {
    let holes = base.has_holes().then(|| base.holes());
    let regular = try_collect(base.num_vertices(), par, "the regular vertices", |u| regular_vertex(base, holes, u))?;
    let found = try_collect(base.num_faces(), par, "the regular patches", |f| patch(base, &regular, f))?;
    let mut patch_of = try_filled_vec(found.len(), NONE, "the regular patches")?;
    let mut patches = Vec::new();
    for (f, p) in found.into_iter().enumerate() {
        if let Some(p) = p {
            patch_of[f] = patches.len() as u32;
            patches.push(p);
        }
    }
    Ok((!patches.is_empty()).then_some(ControlPatches { patch_of, patches }))
}

/// The regular patches of `control` and the frames of the quads of level
/// `max(1, count − 1)` of a plan of `count` levels whose level 1 has
/// `first_len` quads: level 1's quad `c` the child of control corner `c`
/// (those past the corners, ghosts, have none), then quad `q`'s children
/// `4q + k` — as the edge-friend and the halfedge levels number them. Those
/// quads have side 2 (side 1 for a plan of one level). `None` past
/// [`MAX_LEVELS`] or without a regular control face.
pub(crate) fn quad_frames(
    control: &Mesh,
    count: usize,
    first_len: usize,
    par: Par,
) -> Result<Option<(ControlPatches, Vec<Frame>)>> {
    if count == 0 || count > MAX_LEVELS {
        return Ok(None);
    }
    let Some(cp) = control_patches(control, par)? else {
        return Ok(None);
    };
    let n = 1i32 << count;
    let t = control.topology();
    let (fptr, cf, nc) = (t.face_ptr(), t.corner_faces(), t.num_corners());
    let patch_of = &cp.patch_of;
    let mut frames = try_collect(first_len, par, "the frames of the regular faces", |c| {
        if c >= nc {
            return NO_FRAME;
        }
        let g = cf[c] as usize;
        if patch_of[g] == NONE { NO_FRAME } else { Frame::control(g).child(c - fptr[g] as usize, n) }
    })?;
    for i in 1..count - 1 {
        let side = n >> i;
        frames = try_collect(4 * frames.len(), par, "the frames of the regular faces", |q| {
            let fr = frames[q >> 2];
            if fr.face == NONE { NO_FRAME } else { fr.child(q & 3, side) }
        })?;
    }
    Ok(Some((cp, frames)))
}

/// The closed-form rows of the composed matrix of the levels `meshes`
/// (`0..L`, with full connectivity), or `None` past [`MAX_LEVELS`] or with
/// no regular control face.
pub(crate) fn regular_rows(meshes: &[Mesh], par: Par) -> Result<Option<TensorRows>> {
    let levels = meshes.len();
    if levels == 0 || levels > MAX_LEVELS {
        return Ok(None);
    }
    let base = &meshes[0];
    let Some(ControlPatches { patch_of, patches }) = control_patches(base, par)? else {
        return Ok(None);
    };
    let n = 1i32 << levels;
    // Frames of the faces of each level down to L-1.
    let mut frames: Vec<Frame> = try_collect(base.num_faces(), par, "the frames of the regular faces", |f| {
        if patch_of[f] == NONE { NO_FRAME } else { Frame::control(f) }
    })?;
    for (l, parent) in meshes[..levels - 1].iter().enumerate() {
        let t = parent.topology();
        let (fptr, cf) = (t.face_ptr(), t.corner_faces());
        let side = n >> l;
        frames = try_collect(t.num_corners(), par, "the frames of the regular faces", |c| {
            let g = cf[c] as usize;
            let fr = frames[g];
            if fr.face == NONE { NO_FRAME } else { fr.child(c - fptr[g] as usize, side) }
        })?;
    }
    // The finest vertices: vertex points, face points, edge points of the
    // last level's mesh, whose faces have side 2.
    let t = meshes[levels - 1].topology();
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let (fptr, cf) = (t.face_ptr(), t.corner_faces());
    let none = TensorRow::OPEN;
    let own = |(x, y): (i32, i32), face: u32| TensorRow { patch: patch_of[face as usize], x: x as u16, y: y as u16 };
    // The first of `corners` whose face lies in a regular control face,
    // with the corner's place in its face (on a quad-only level, every
    // level past the first, without reading the face of the corner).
    let quads = t.is_quad_only();
    let first = |corners: &[u32]| -> Option<(&Frame, usize)> {
        corners.iter().find_map(|&c| {
            let c = c as usize;
            let (g, k) = if quads {
                (c / 4, c % 4)
            } else {
                let g = cf[c] as usize;
                (g, c - fptr[g] as usize)
            };
            (frames[g].face != NONE).then(|| (&frames[g], k))
        })
    };
    TensorRows::from_fn(base.num_vertices(), weights_1d(levels), patches, nv + nf + t.num_edges(), par, |row| {
        if row < nv {
            first(t.vertex_corners(row)).map_or(none, |(fr, k)| own(fr.corner(k, 2), fr.face))
        } else if row < nv + nf {
            let fr = &frames[row - nv];
            if fr.face == NONE {
                return none;
            }
            own(fr.face_point(), fr.face)
        } else {
            first(t.edge_corners(row - nv - nf)).map_or(none, |(fr, k)| own(fr.edge_point(k), fr.face))
        }
    })
    .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dimensional_weights_are_the_cubic_b_spline_rules() {
        // One level: vertex points (1, 6, 1) / 8, edge point (0, 1, 1, 0) / 2.
        let w = weights_1d(1);
        assert_eq!(w, vec![[0.125, 0.75, 0.125, 0.0], [0.0, 0.5, 0.5, 0.0], [0.0, 0.125, 0.75, 0.125]]);
        // Every point is an affine combination, symmetric about the middle.
        for l in 0..=MAX_LEVELS {
            let w = weights_1d(l);
            assert_eq!(w.len(), (1 << l) + 1);
            for (t, p) in w.iter().enumerate() {
                assert_eq!(p.iter().sum::<f64>(), 1.0, "level {l}, t = {t}");
                let q = &w[w.len() - 1 - t];
                assert_eq!([p[3], p[2], p[1], p[0]], *q);
            }
        }
    }
}
