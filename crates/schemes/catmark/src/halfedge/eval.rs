//! One Catmull-Clark step on a quad level in halfedge form: face points,
//! edge points and vertex points as gathers (every row written by one
//! task), with OpenSubdiv's crease, corner and boundary masks computed on
//! the fly where a sharp edge or vertex touches the point, and the same
//! stencils as a matrix.
//!
//! The smooth vertex point is written over the quads' vertices (as the
//! edge-friend path writes it): `v' = (1 − 7/(4n)) v + 3/(2n²) Σ u_j +
//! 1/(4n²) Σ d_j`, `u_j` the neighbours and `d_j` the vertices across the
//! quads around `v`.

use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_scheme::kernel::{Stencil, assemble_rows, axpy, for_rows, load, real};
use subla_scheme::sdc::{child_edge_sharpness, is_infinite};

use super::level::{NONE, QuadLevel, next, prev};
use crate::level::{VertexWeights, ring_weights};
use subla_scheme::halfedge::Conn;

/// `(alpha, beta)` of the edge point of `e`: `alpha` on each end, `beta`
/// on each of its two face points.
fn edge_weights(l: &QuadLevel, c: &Conn, e: usize, scratch: &mut Vec<f32>) -> (f64, f64) {
    let h = c.edge_half[e];
    if c.twin[h as usize] == NONE {
        return (0.5, 0.0);
    }
    let s = l.sigma(c, h);
    if s <= 0.0 {
        return (0.25, 0.25);
    }
    let (a, b) = (l.vert[h as usize] as usize, l.vert[next(h) as usize] as usize);
    if is_infinite(s) || (l.tau(c, h, a, scratch) > 0.0 && l.tau(c, h, b, scratch) > 0.0) {
        return (0.5, 0.0);
    }
    let w = f64::from(s);
    (w * 0.5 + (1.0 - w) * 0.25, (1.0 - w) * 0.25)
}

/// Scratch space of the general vertex mask.
#[derive(Default)]
pub(crate) struct Scratch {
    ends: Vec<u32>,
    sigma: Vec<f32>,
    tau: Vec<f32>,
}

/// The mask of vertex `v` (any configuration) by OpenSubdiv's rules, and
/// its number of faces.
fn vertex_weights(l: &QuadLevel, c: &Conn, v: usize, x: &mut Scratch) -> (VertexWeights, usize) {
    x.ends.clear();
    x.sigma.clear();
    let n_faces = l.ring(c, v, |h, u, _| {
        x.ends.push(u);
        x.sigma.push(l.sigma(c, h));
    });
    if x.ends.is_empty() {
        return (VertexWeights::keep(v as u32), 0);
    }
    x.tau.clear();
    for &s in &x.sigma {
        let t = if s <= 0.0 || is_infinite(s) || !l.chaikin {
            child_edge_sharpness(s, &[], false)
        } else {
            child_edge_sharpness(s, &x.sigma, true)
        };
        x.tau.push(t);
    }
    let smooth_ok = x.ends.len() == n_faces;
    let sv = l.vertex_sharpness(v);
    (ring_weights(v as u32, sv, &x.sigma, &x.tau, &x.ends, n_faces, smooth_ok, l.chaikin), n_faces)
}

/// One step of eval: `x` (rows of `l`) → `y` (vertex points, face points,
/// edge points), row length `d`.
pub(crate) fn eval_level<T: Float + Send + Sync>(l: &QuadLevel, x: &[T], y: &mut [T], d: usize, par: Par) {
    subla_scheme::channel_groups!(d, off, D => eval_impl::<T, D>(l, x, y, d, off, par));
}

fn eval_impl<T: Float + Send + Sync, const D: usize>(
    l: &QuadLevel,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let c = l.conn();
    let (nv, nf, ne) = (l.num_vertices, l.num_faces(), l.num_edges);
    let (yv, rest) = y.split_at_mut(nv * stride);
    let (yf, ye) = rest.split_at_mut(nf * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let (vert, twin) = (&l.vert[..], &c.twin[..]);
    let quarter = real::<T>(0.25);
    let face = |q: usize| -> [T; D] {
        let mut acc = [T::zero(); D];
        for &v in &vert[4 * q..4 * q + 4] {
            axpy(&mut acc, quarter, gx(v));
        }
        acc
    };
    for_rows(yf, nf, stride, par, |r, out| {
        for (row, q) in out.chunks_exact_mut(stride).zip(r) {
            put(row, face(q));
        }
    });
    // The edge points read the face points just written (the same values
    // as `face`, so the same bits): one row instead of a quad and its four
    // points.
    let yf: &[T] = yf;
    let face_point = |q: usize| load::<T, D>(yf, q, stride, off);
    let plain = l.edge_sharpness.is_none();
    for_rows(ye, ne, stride, par, |r, out| {
        let mut scratch = Vec::new();
        for (row, e) in out.chunks_exact_mut(stride).zip(r) {
            let h = c.edge_half[e];
            let t = twin[h as usize];
            let (alpha, beta) = if plain {
                if t == NONE { (0.5, 0.0) } else { (0.25, 0.25) }
            } else {
                edge_weights(l, c, e, &mut scratch)
            };
            let mut acc = [T::zero(); D];
            if beta != 0.0 {
                let b = real::<T>(beta);
                axpy(&mut acc, b, face_point(h as usize / 4));
                axpy(&mut acc, b, face_point(t as usize / 4));
            }
            let a = real::<T>(alpha);
            axpy(&mut acc, a, gx(vert[h as usize]));
            axpy(&mut acc, a, gx(vert[next(h) as usize]));
            put(row, acc);
        }
    });
    for_rows(yv, nv, stride, par, |r, out| {
        let mut scratch = Scratch::default();
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let h0 = c.vhalf[v];
            if h0 == NONE {
                put(row, gx(v as u32));
                continue;
            }
            let mut nsum = [T::zero(); D];
            let mut dsum = [T::zero(); D];
            let (mut h, mut n) = (h0, 0usize);
            let closed = loop {
                n += 1;
                let (u, dd) = (gx(vert[next(h) as usize]), gx(vert[(h ^ 2) as usize]));
                for k in 0..D {
                    nsum[k] = nsum[k] + u[k];
                    dsum[k] = dsum[k] + dd[k];
                }
                let t = twin[prev(h) as usize];
                if t == NONE {
                    break false;
                }
                h = t;
                if h == h0 {
                    break true;
                }
            };
            let w = if plain && closed && l.vertex_sharpness(v) == 0.0 {
                VertexWeights::smooth(n, v as u32)
            } else {
                vertex_weights(l, c, v, &mut scratch).0
            };
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
            put(row, acc);
        }
    });
}

/// The stencil of child row `row` of `l`'s step.
fn stencil(l: &QuadLevel, c: &Conn, row: usize, s: &mut Stencil, x: &mut Scratch) {
    let (nv, nf) = (l.num_vertices, l.num_faces());
    let push_face = |s: &mut Stencil, q: usize, w: f64| {
        for &v in &l.vert[4 * q..4 * q + 4] {
            s.push((v, 0.25 * w));
        }
    };
    if row < nv {
        let v = row;
        let (w, n) = vertex_weights(l, c, v, x);
        let nf = n as f64;
        if w.cs != 0.0 {
            l.ring(c, v, |h, u, out| {
                if out {
                    s.push((u, 1.5 * w.cs / (nf * nf)));
                    s.push((l.vert[(h ^ 2) as usize], 0.25 * w.cs / (nf * nf)));
                }
            });
        }
        if w.ce != 0.0 {
            s.push((w.ua, w.ce));
            s.push((w.ub, w.ce));
        }
        let cv = if n == 0 { w.cv } else { w.cv + 0.25 * w.cs / nf };
        s.push((v as u32, cv));
    } else if row < nv + nf {
        push_face(s, row - nv, 1.0);
    } else {
        let e = row - nv - nf;
        let mut scratch = std::mem::take(&mut x.sigma);
        let (alpha, beta) = edge_weights(l, c, e, &mut scratch);
        x.sigma = scratch;
        let h = c.edge_half[e];
        if beta != 0.0 {
            push_face(s, h as usize / 4, beta);
            push_face(s, c.twin[h as usize] as usize / 4, beta);
        }
        s.push((l.vert[h as usize], alpha));
        s.push((l.vert[next(h) as usize], alpha));
    }
}

/// The matrix `R` of the step from `l`, or its rows `wanted` (in range, in
/// that order).
pub(crate) fn level_operator(l: &QuadLevel, wanted: Option<&[u32]>, par: Par) -> Result<CsrMat<f64>> {
    let c = l.conn();
    let rows = wanted.map_or(l.num_vertices + l.num_faces() + l.num_edges, <[u32]>::len);
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    assemble_rows(rows, l.num_vertices, par, |row, s| {
        let row = wanted.map_or(row, |w| w[row] as usize);
        SCRATCH.with_borrow_mut(|x| stencil(l, c, row, s, x));
        s.retain(|&(_, w)| w != 0.0);
    })
}
