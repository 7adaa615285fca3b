//! Catmull-Clark's points on an edge-friend level: the quad task (face
//! point and the edge points of the quad's two off-edges) and the vertex
//! task (the vertex point gathered around the vertex through the friends),
//! Kuth et al. 2023 §3.2 and §3.4, with OpenSubdiv's crease rules (the
//! same masks as [`crate::level`]'s, computed on the fly), as an eval of
//! `f32`/`f64` rows and as the rows of `R_i`.
//!
//! The smooth vertex point is written over the quad's vertices, not its
//! face points (de Goes et al. 2016, supplement):
//! `v' = (1 − 7/(4n)) v + 3/(2n²) Σ u_j + 1/(4n²) Σ d_j`, with `u_j` the
//! neighbours and `d_j` the vertices across the quads around `v` — the
//! same map as `((n−2)/n) v + (Σ u_j + Σ f_j)/n²`.

use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_scheme::kernel::{Stencil, assemble_rows, axpy, load, real};
use subla_scheme::sdc::{dec, is_infinite};
use subla_scheme::{Result, SchemeError};

use super::level::{EfLevel, GHOST, Layout, Scatter, for_blocks};
use crate::level::{VertexWeights, ring_weights};

/// The two weights of an edge point: `alpha` on each endpoint, `beta` on
/// each of the two face points.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct EdgeWeights {
    pub alpha: f64,
    pub beta: f64,
}

const SMOOTH_EDGE: EdgeWeights = EdgeWeights { alpha: 0.25, beta: 0.25 };

/// The edge point of the `k`-th off-edge of quad `q` (0: `v1 v2`, 1:
/// `v3 v0`) on level `l`, whose children are `next` (their sharpness is
/// read for Chaikin's rule).
#[inline]
pub(crate) fn edge_weights(l: &EfLevel, next: &EfLevel, q: usize, k: usize) -> EdgeWeights {
    let g = l.friends[q][k];
    let s = l.sharpness_between(g, q, g as usize >> 1);
    if s <= 0.0 {
        return SMOOTH_EDGE;
    }
    let (ta, tb) = if l.chaikin {
        let ns = next.edge_sharpness.as_deref().unwrap_or(&[]);
        let at = |i: usize| ns.get(i).copied().unwrap_or(0.0);
        // Half at v1 (v3): first edge of child 4q+1 (4q+3); half at v2
        // (v0): first edge of the friend's child at corner 2g.
        (at(2 * (4 * q + 1 + 2 * k)), at(4 * g as usize))
    } else {
        (dec(s), dec(s))
    };
    if is_infinite(s) || (ta > 0.0 && tb > 0.0) {
        return EdgeWeights { alpha: 0.5, beta: 0.0 };
    }
    let w = f64::from(s);
    EdgeWeights { alpha: w * 0.5 + (1.0 - w) * 0.25, beta: (1.0 - w) * 0.25 }
}

/// Valences up to this are gathered on the stack.
const STACK_VALENCE: usize = 32;

/// The mask of vertex `v` of `l` (corners from `loop_start`), children
/// `next`, by OpenSubdiv's rules: [`crate::level`]'s masks for a manifold
/// vertex without holes.
pub(crate) fn vertex_weights(l: &EfLevel, next: &EfLevel, v: usize) -> VertexWeights {
    let mut n = 0;
    l.ring(l.loop_start[v], |_| n += 1);
    if n <= STACK_VALENCE {
        let mut sigma = [0f32; STACK_VALENCE];
        let mut tau = [0f32; STACK_VALENCE];
        let mut ends = [0u32; STACK_VALENCE];
        let mut corners = [0u32; STACK_VALENCE];
        vertex_weights_in(l, next, v, &mut sigma[..n], &mut tau[..n], &mut ends[..n], &mut corners[..n])
    } else {
        let (mut sigma, mut tau) = (vec![0f32; n], vec![0f32; n]);
        let (mut ends, mut corners) = (vec![0u32; n], vec![0u32; n]);
        vertex_weights_in(l, next, v, &mut sigma, &mut tau, &mut ends, &mut corners)
    }
}

fn vertex_weights_in(
    l: &EfLevel,
    next: &EfLevel,
    v: usize,
    sigma: &mut [f32],
    tau: &mut [f32],
    ends: &mut [u32],
    corners: &mut [u32],
) -> VertexWeights {
    let n = sigma.len();
    let mut i = 0;
    let ns = next.edge_sharpness.as_deref();
    let start = l.loop_start[v];
    l.ring(start, |c| {
        corners[i] = c as u32;
        ends[i] = l.quads[(c & !3) | ((c + 1) & 3)];
        i += 1;
    });
    // The corners of a vertex are all even (vertex and face points: the
    // walk crosses each corner's arriving edge, so the edge leaving corner
    // i is shared with the quad of corner i − 1) or all odd (edge points:
    // it crosses the leaving edge, shared with the quad of corner i + 1).
    let back = start & 1 == 0;
    for i in 0..n {
        let c = corners[i] as usize;
        let j = if back { (i + n - 1) % n } else { (i + 1) % n };
        let s = l.sharpness_between(l.leaving_edge(c), c >> 2, corners[j] as usize >> 2);
        sigma[i] = s;
        tau[i] = if is_infinite(s) {
            s
        } else if l.chaikin {
            ns.map_or(0.0, |ns| ns[2 * c])
        } else {
            dec(s)
        };
    }
    let sv = l.vertex_sharpness.as_ref().map_or(0.0, |s| s[v]);
    ring_weights(v as u32, sv, sigma, tau, ends, n, true, l.chaikin)
}

/// Quads whose face points the quad task keeps at once.
const FACE_CHUNK: usize = 256;

/// One level of eval, `l` → `next`: `x` holds `l.num_vertices` rows of `d`
/// channels, `y` the next level's (in [`Layout`] order), or with `real`
/// (the next level's real numbering, [`GHOST`] for ghosts) only its real
/// rows, in that numbering.
pub(crate) fn eval_level<T: Float + Send + Sync>(
    l: &EfLevel,
    next: &EfLevel,
    x: &[T],
    y: &mut [T],
    d: usize,
    real_rows: Option<&[u32]>,
    par: Par,
) {
    debug_assert_eq!(x.len(), l.num_vertices * d);
    debug_assert_eq!(y.len(), if real_rows.is_some() { next.real.count() } else { l.layout().len() } * d);
    subla_scheme::channel_groups!(d, off, D => eval_impl::<T, D>(l, next, x, y, d, off, real_rows, par));
}

#[allow(clippy::too_many_arguments)]
fn eval_impl<T: Float + Send + Sync, const D: usize>(
    l: &EfLevel,
    next: &EfLevel,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    real_rows: Option<&[u32]>,
    par: Par,
) {
    let lay: Layout = l.layout();
    let out = Scatter(y.as_mut_ptr());
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    // SAFETY (both tasks): row `r` is written by one task only — the face
    // point of q and the edge points of q's off-edges by q's task (every
    // edge is the off-edge of exactly one quad), the vertex point of v by
    // v's — and `Layout` maps elements to distinct rows below
    // `y.len() / stride`, as does the real numbering (a bijection of the
    // real rows onto `0 .. real count`).
    let put = |r: u32, acc: [T; D]| {
        let r = match real_rows {
            None => r,
            Some(m) if m[r as usize] == GHOST => return,
            Some(m) => m[r as usize],
        };
        let base = r as usize * stride + off;
        for (k, a) in acc.into_iter().enumerate() {
            // SAFETY: see above; `base + k` is in row `r`, below `y.len()`.
            unsafe { out.put(base + k, a) };
        }
    };
    let esharp = l.edge_sharpness.as_deref();
    let vsharp = l.vertex_sharpness.as_deref();
    // Boundary edges, infinitely sharp without being stored: a vertex is on
    // the boundary where a ghost quad is around it.
    let ghosts = l.implicit_boundary();
    let sharp_edges = esharp.is_some() || ghosts;
    let quads = &l.quads;
    let quarter = real::<T>(0.25);
    let face = |q: usize| -> [T; D] {
        let mut acc = [T::zero(); D];
        for &v in &quads[4 * q..4 * q + 4] {
            axpy(&mut acc, quarter, gx(v));
        }
        acc
    };
    // Quads in chunks: the face points of a chunk first (kept), then its
    // edge points, which take the face points of their own quad and of a
    // friend in the chunk (a sibling, for the edges inside the parent
    // quad) from there: the same values, so the same bits.
    for_blocks(l.num_quads(), par, |r| {
        let mut faces = [[T::zero(); D]; FACE_CHUNK];
        let mut start = r.start;
        while start < r.end {
            let end = (start + FACE_CHUNK).min(r.end);
            for q in start..end {
                let f = face(q);
                put(lay.face(q as u32), f);
                faces[q - start] = f;
            }
            let face_of = |p: usize| if (start..end).contains(&p) { faces[p - start] } else { face(p) };
            for q in start..end {
                let v = &quads[4 * q..4 * q + 4];
                for (k, (a, b)) in [(v[1], v[2]), (v[3], v[0])].into_iter().enumerate() {
                    let g = l.friends[q][k];
                    let w = if sharp_edges { edge_weights(l, next, q, k) } else { SMOOTH_EDGE };
                    let mut acc = [T::zero(); D];
                    if w.beta != 0.0 {
                        let beta = real::<T>(w.beta);
                        axpy(&mut acc, beta, faces[q - start]);
                        axpy(&mut acc, beta, face_of(g as usize >> 1));
                    }
                    let alpha = real::<T>(w.alpha);
                    axpy(&mut acc, alpha, gx(a));
                    axpy(&mut acc, alpha, gx(b));
                    put(lay.edge(g), acc);
                }
            }
            start = end;
        }
    });
    for_blocks(l.num_vertices, par, |r| {
        for v in r {
            let mut nsum = [T::zero(); D];
            let mut dsum = [T::zero(); D];
            let mut n = 0usize;
            // Whether a sharp edge or vertex sharpness touches v: only then
            // are the crease rules computed.
            let mut sharp_here = vsharp.is_some_and(|s| s[v] > 0.0);
            l.ring(l.loop_start[v], |c| {
                let one = T::one();
                axpy(&mut nsum, one, gx(quads[(c & !3) | ((c + 1) & 3)]));
                axpy(&mut dsum, one, gx(quads[c ^ 2]));
                if let Some(s) = esharp {
                    sharp_here |= s[l.leaving_edge(c) as usize] > 0.0;
                } else if ghosts {
                    sharp_here |= l.is_ghost(c >> 2);
                }
                n += 1;
            });
            let w = if sharp_here { vertex_weights(l, next, v) } else { VertexWeights::smooth(n, v as u32) };
            let nf = n as f64;
            let mut acc = [T::zero(); D];
            if w.cs != 0.0 {
                axpy(&mut acc, real::<T>(1.5 * w.cs / (nf * nf)), nsum);
                axpy(&mut acc, real::<T>(0.25 * w.cs / (nf * nf)), dsum);
            }
            if w.ce != 0.0 {
                let ce = real::<T>(w.ce);
                axpy(&mut acc, ce, gx(w.ua));
                axpy(&mut acc, ce, gx(w.ub));
            }
            axpy(&mut acc, real::<T>(w.cv + 0.25 * w.cs / nf), gx(v as u32));
            put(lay.vertex(v as u32), acc);
        }
    });
}

/// What row `i` of the level after `l` is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    Vertex(u32),
    Face(u32),
    Edge(u32),
}

/// The inverse of [`Layout`].
pub(crate) fn point_of(l: &EfLevel, i: u32) -> Point {
    let (v, f) = (l.num_vertices as u32, l.num_quads() as u32);
    let m = v.min(f);
    let chunk = |j: u32, slot: u32| match slot {
        0 => Point::Vertex(j),
        1 => Point::Face(j),
        s => Point::Edge(2 * j + s - 2),
    };
    if i < 4 * m {
        chunk(i / 4, i % 4)
    } else if v > f {
        Point::Vertex(f + (i - 4 * f))
    } else {
        let k = i - 4 * v;
        let j = v + k / 3;
        match k % 3 {
            0 => Point::Face(j),
            s => Point::Edge(2 * j + s - 1),
        }
    }
}

/// The stencil of row `i` of the level after `l`, over `l`'s vertices
/// (internal numbering); `owner[e]` is the quad and side having edge `e`
/// as off-edge.
fn stencil(l: &EfLevel, next: &EfLevel, owner: &[(u32, u8)], i: u32, s: &mut Stencil) {
    let quads = &l.quads;
    let push_face = |s: &mut Stencil, q: usize, w: f64| {
        for &v in &quads[4 * q..4 * q + 4] {
            s.push((v, 0.25 * w));
        }
    };
    match point_of(l, i) {
        Point::Face(q) => push_face(s, q as usize, 1.0),
        Point::Edge(e) => {
            let (q, k) = owner[e as usize];
            let (q, k) = (q as usize, k as usize);
            let w = if l.is_sharp() { edge_weights(l, next, q, k) } else { SMOOTH_EDGE };
            let v = &quads[4 * q..4 * q + 4];
            let (a, b) = if k == 0 { (v[1], v[2]) } else { (v[3], v[0]) };
            if w.beta != 0.0 {
                push_face(s, q, w.beta);
                push_face(s, e as usize >> 1, w.beta);
            }
            s.push((a, w.alpha));
            s.push((b, w.alpha));
        }
        Point::Vertex(v) => {
            let vu = v as usize;
            let mut n = 0usize;
            l.ring(l.loop_start[vu], |_| n += 1);
            let nf = n as f64;
            let w = if l.is_sharp() { vertex_weights(l, next, vu) } else { VertexWeights::smooth(n, v) };
            if w.cs != 0.0 {
                l.ring(l.loop_start[vu], |c| {
                    s.push((quads[(c & !3) | ((c + 1) & 3)], 1.5 * w.cs / (nf * nf)));
                    s.push((quads[c ^ 2], 0.25 * w.cs / (nf * nf)));
                });
            }
            if w.ce != 0.0 {
                s.push((w.ua, w.ce));
                s.push((w.ub, w.ce));
            }
            s.push((v, w.cv + 0.25 * w.cs / nf));
        }
    }
}

/// `R` from `l` to `next` over the real vertices of both (rows and columns
/// in their real numbering), or its rows `wanted` (in range, in that
/// order).
///
/// # Errors
/// [`SchemeError::Internal`] if a real point's mask reaches a ghost
/// vertex; sizes over `u32`.
pub(crate) fn level_operator(l: &EfLevel, next: &EfLevel, wanted: Option<&[u32]>, par: Par) -> Result<CsrMat<f64>> {
    let mut owner = vec![(0u32, 0u8); 2 * l.num_quads()];
    for (q, g) in l.friends.iter().enumerate() {
        owner[g[0] as usize] = (q as u32, 0);
        owner[g[1] as usize] = (q as u32, 1);
    }
    // The internal row of each real row of `next`, then of each row wanted.
    let rows: Vec<u32> = match (next.real.internal_rows()?, wanted) {
        (None, None) => (0..next.real.count() as u32).collect(),
        (None, Some(w)) => w.to_vec(),
        (Some(r), None) => r,
        (Some(r), Some(w)) => w.iter().map(|&x| r[x as usize]).collect(),
    };
    let ghost_hit = std::sync::atomic::AtomicBool::new(false);
    let m = assemble_rows(rows.len(), l.real.count(), par, |r, s| {
        stencil(l, next, &owner, rows[r], s);
        s.retain(|&(_, w)| w != 0.0);
        for e in s.iter_mut() {
            match l.real.of(e.0) {
                Some(c) => e.0 = c,
                None => ghost_hit.store(true, std::sync::atomic::Ordering::Relaxed),
            }
        }
    })?;
    if ghost_hit.into_inner() {
        return Err(SchemeError::Internal {
            what: "catmark-edge-friend",
            detail: "a point of the surface has weight on a ghost vertex".into(),
        });
    }
    Ok(m)
}
