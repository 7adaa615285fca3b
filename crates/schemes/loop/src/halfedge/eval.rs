//! One step of Loop on a level in halfedge form: the points of the child
//! (vertex points, then edge points) as gathers, every row written by one
//! task, with OpenSubdiv's crease, corner and boundary masks computed on
//! the fly where a sharp edge or vertex touches the row, and the same
//! stencils as a matrix.

use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_scheme::kernel::{Stencil, assemble_rows, axpy, for_rows, load, real};
use subla_scheme::sdc::{Rule, child_edge_sharpness, dec, is_infinite, vertex_transition_weight};

use super::level::{HeLevel, NONE, next, prev};
use crate::rules::{CREASE_CENTRE, CREASE_END, EDGE_END, EDGE_OPPOSITE, vertex_weight_table, vertex_weights};
use subla_scheme::halfedge::Conn;

/// Scratch space of the general masks.
#[derive(Default)]
pub(crate) struct Scratch {
    /// `(neighbour, sharpness)` of each edge of a vertex, in turning order.
    ring: Vec<(u32, f32)>,
    sigma: Vec<f32>,
    tau: Vec<f32>,
    around: Vec<f32>,
}

/// The stencil of the vertex point of `v` (any configuration), as
/// OpenSubdiv's `ComputeVertexVertexMask` with Loop's masks, transition
/// blends included.
pub(crate) fn vertex_stencil(l: &HeLevel, c: &Conn, v: usize, w: &Scratch2, s: &mut Stencil, x: &mut Scratch) {
    x.ring.clear();
    let n_faces = l.ring(c, v, |h, u, _| x.ring.push((u, l.sigma(c, h))));
    let vid = v as u32;
    if x.ring.is_empty() {
        s.push((vid, 1.0));
        return;
    }
    let vs = l.vertex_sharpness(v);
    x.sigma.clear();
    x.sigma.extend(x.ring.iter().map(|r| r.1));
    let k = x.sigma.iter().filter(|&&s| s > 0.0).count();
    let rp = Rule::classify(vs, k);
    let smooth_ok = x.ring.len() == n_faces;
    let [sv, se] = if smooth_ok { w.weights(n_faces) } else { [1.0, 0.0] };
    let push = |s: &mut Stencil, cv: f64, cn: f64, ce: f64, (ua, ub): (u32, u32), ring: &[(u32, f32)]| {
        if ce != 0.0 {
            s.push((ua, ce));
            s.push((ub, ce));
        }
        if cn != 0.0 {
            s.extend(ring.iter().map(|&(u, _)| (u, cn)));
        }
        s.push((vid, cv));
    };
    if rp.uses_smooth_mask() {
        if smooth_ok {
            push(s, sv, se, 0.0, (vid, vid), &x.ring);
        } else {
            // Unreachable on prepared levels (such vertices are sharp).
            s.push((vid, 1.0));
        }
        return;
    }
    x.tau.clear();
    for &sg in &x.sigma {
        let t = if sg <= 0.0 || is_infinite(sg) || !l.chaikin {
            child_edge_sharpness(sg, &[], false)
        } else {
            child_edge_sharpness(sg, &x.sigma, true)
        };
        x.tau.push(t);
    }
    let sv_child = dec(vs);
    let kc = x.tau.iter().filter(|&&s| s > 0.0).count();
    let rc = Rule::classify(sv_child, kc);
    let ring = &x.ring;
    let ends = |sharp: &[f32]| -> (u32, u32) {
        let first = sharp.iter().position(|&s| s > 0.0).unwrap_or(0);
        let last = sharp.iter().rposition(|&s| s > 0.0).unwrap_or(0);
        (ring[first].0, ring[last].0)
    };
    let mask_of = |r: Rule, sharp: &[f32]| -> (f64, f64, f64, (u32, u32)) {
        match r {
            Rule::Smooth | Rule::Dart => (sv, se, 0.0, (vid, vid)),
            Rule::Crease => (CREASE_CENTRE, 0.0, CREASE_END, ends(sharp)),
            Rule::Corner => (1.0, 0.0, 0.0, (vid, vid)),
        }
    };
    let mp = mask_of(rp, &x.sigma);
    if rc == rp || (rc.uses_smooth_mask() && !smooth_ok) {
        push(s, mp.0, mp.1, mp.2, mp.3, ring);
        return;
    }
    let mc = mask_of(rc, &x.tau);
    let wt = f64::from(vertex_transition_weight(vs, sv_child, &x.sigma, &x.tau, l.chaikin));
    let cw = 1.0 - wt;
    let e = if mp.2 != 0.0 { mp.3 } else { mc.3 };
    push(s, wt * mp.0 + cw * mc.0, wt * mp.1 + cw * mc.1, wt * mp.2 + cw * mc.2, e, ring);
}

/// The stencil of the edge point of `e` (any configuration), as
/// OpenSubdiv's `ComputeEdgeVertexMask` with Loop's masks.
pub(crate) fn edge_stencil(l: &HeLevel, c: &Conn, e: usize, s: &mut Stencil, x: &mut Scratch) {
    let h = c.edge_half[e];
    let t = c.twin[h as usize];
    let (a, b) = (l.vert[h as usize], l.vert[next(h) as usize]);
    if t == NONE {
        s.push((a, 0.5));
        s.push((b, 0.5));
        return;
    }
    let sg = l.sigma(c, h);
    let (alpha, beta) = if sg <= 0.0 {
        (EDGE_END, EDGE_OPPOSITE)
    } else {
        let crease = is_infinite(sg)
            || (l.tau(c, h, a as usize, &mut x.around) > 0.0 && l.tau(c, h, b as usize, &mut x.around) > 0.0);
        if crease {
            (0.5, 0.0)
        } else {
            // Crease to smooth: the parent's sharpness is the blend weight.
            let w = f64::from(sg);
            (w * 0.5 + (1.0 - w) * EDGE_END, EDGE_OPPOSITE * (1.0 - w))
        }
    };
    s.push((a, alpha));
    s.push((b, alpha));
    if beta != 0.0 {
        s.push((l.vert[prev(h) as usize], beta));
        s.push((l.vert[prev(t) as usize], beta));
    }
}

/// The smooth vertex weights by valence, computed past the table.
pub(crate) struct Scratch2 {
    table: Vec<[f64; 2]>,
}

impl Scratch2 {
    pub(crate) fn new(l: &HeLevel) -> Self {
        Scratch2 { table: vertex_weight_table(l.max_valence.min(64)) }
    }
    #[inline]
    fn weights(&self, n: usize) -> [f64; 2] {
        self.table.get(n).copied().unwrap_or_else(|| vertex_weights(n))
    }
}

/// One step of eval: `x` (rows of `l`) → `y` (rows of its child: vertex
/// points, then edge points), row length `d`. Where `l`'s parent is known,
/// the six neighbours of `l`'s interior edge points are read from it in
/// closed form (the edge's ends and the points of the four other edges of
/// its two triangles, in turning order) instead of turning around them.
pub(crate) fn eval_level<T: Float + Send + Sync>(
    l: &HeLevel,
    parent: Option<&HeLevel>,
    x: &[T],
    y: &mut [T],
    d: usize,
    par: Par,
) {
    subla_scheme::channel_groups!(d, off, D => eval_impl::<T, D>(l, parent, x, y, d, off, par));
}

#[allow(clippy::too_many_arguments)]
fn eval_impl<T: Float + Send + Sync, const D: usize>(
    l: &HeLevel,
    parent: Option<&HeLevel>,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    // A plain level whose parent keeps its connectivity (a virtual one
    // among them) is evaluated from the parent's, four times smaller.
    if let Some(p) = parent.filter(|p| p.conn.is_some() && l.is_plain()) {
        eval_lean::<T, D>(l, p, x, y, stride, off, par);
        return;
    }
    let c = l.conn();
    let (nv, ne) = (l.num_vertices, l.num_edges);
    let (yv, ye) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let apply = |row: &mut [T], s: &Stencil| {
        let mut acc = [T::zero(); D];
        for &(i, w) in s {
            axpy(&mut acc, real::<T>(w), gx(i));
        }
        put(row, acc);
    };
    let w = Scratch2::new(l);
    let plain_edges = l.edge_sharpness.is_none();
    let (twin, vert) = (&c.twin[..], &l.vert[..]);
    // The edge points of the parent, where it is known.
    let (pv, pconn) = match parent.and_then(|p| p.conn.as_ref().map(|c| (p.num_vertices, c))) {
        Some((n, pc)) => (n, Some(pc)),
        None => (usize::MAX, None),
    };
    let w6 = {
        let [a, b] = w.weights(6);
        (real::<T>(a), real::<T>(b))
    };
    // Vertex points.
    for_rows(yv, nv, stride, par, |r, out| {
        let mut s = Stencil::new();
        let mut scratch = Scratch::default();
        let (c34, c18) = (real::<T>(CREASE_CENTRE), real::<T>(CREASE_END));
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let h0 = c.vhalf[v];
            if h0 == NONE {
                put(row, gx(v as u32));
                continue;
            }
            if plain_edges && v >= pv {
                // The point of parent edge `e`: turning from its outgoing
                // halfedge `second(hₑ)` meets the end `b`, the points of
                // the edges of `next(hₑ)` and `prev(hₑ)`, the end `a`, then
                // those of `next(t)` and `prev(t)` (`t` the twin).
                let (pc, e) = (pconn.expect("a parent"), v - pv);
                if let Some(ring) = edge_point_ring(parent.expect("a parent"), pc, e) {
                    put(row, smooth6::<T, D>(ring, gx, w6, gx(v as u32)));
                    continue;
                }
            }
            if plain_edges && l.vertex_sharpness(v) == 0.0 {
                // No sharp edge but the boundary's: the smooth mask inside,
                // the crease mask along the boundary.
                let mut acc = [T::zero(); D];
                let mut h = h0;
                let mut n = 0usize;
                let last = loop {
                    n += 1;
                    let u = gx(vert[next(h) as usize]);
                    for k in 0..D {
                        acc[k] = acc[k] + u[k];
                    }
                    let p = prev(h);
                    let t = twin[p as usize];
                    if t == NONE {
                        break Some(vert[p as usize]);
                    }
                    h = t;
                    if h == h0 {
                        break None;
                    }
                };
                let xv = gx(v as u32);
                let mut o = [T::zero(); D];
                match last {
                    None => {
                        let [wv, we] = w.weights(n);
                        let (wv, we) = (real::<T>(wv), real::<T>(we));
                        for k in 0..D {
                            o[k] = we * acc[k] + wv * xv[k];
                        }
                    }
                    Some(ub) => {
                        let (a, b) = (gx(vert[next(h0) as usize]), gx(ub));
                        for k in 0..D {
                            o[k] = c18 * (a[k] + b[k]) + c34 * xv[k];
                        }
                    }
                }
                put(row, o);
                continue;
            }
            s.clear();
            vertex_stencil(l, c, v, &w, &mut s, &mut scratch);
            apply(row, &s);
        }
    });
    // Edge points.
    for_rows(ye, ne, stride, par, |r, out| {
        let mut s = Stencil::new();
        let mut scratch = Scratch::default();
        let (alpha, beta, half) = (real::<T>(EDGE_END), real::<T>(EDGE_OPPOSITE), real::<T>(0.5));
        for (row, e) in out.chunks_exact_mut(stride).zip(r) {
            let h = c.edge_half[e];
            let t = twin[h as usize];
            let sharp = !plain_edges && l.edge_sharpness.as_ref().is_some_and(|es| es[e] > 0.0);
            if sharp {
                s.clear();
                edge_stencil(l, c, e, &mut s, &mut scratch);
                apply(row, &s);
                continue;
            }
            let (a, b) = (gx(vert[h as usize]), gx(vert[next(h) as usize]));
            let mut o = [T::zero(); D];
            if t == NONE {
                for k in 0..D {
                    o[k] = half * (a[k] + b[k]);
                }
            } else {
                let (p, q) = (gx(vert[prev(h) as usize]), gx(vert[prev(t) as usize]));
                for k in 0..D {
                    o[k] = alpha * (a[k] + b[k]) + beta * (p[k] + q[k]);
                }
            }
            put(row, o);
        }
    });
}

/// The six neighbours of the edge point of `p`'s edge `e` in `p`'s
/// child, in the turning order from its outgoing halfedge `second(hₑ)`:
/// the end `b`, the points of the edges of `next(hₑ)` and `prev(hₑ)`, the
/// end `a`, then those of `next(t)` and `prev(t)` (`t` the twin); `None` on
/// a boundary edge.
#[inline(always)]
fn edge_point_ring(p: &HeLevel, pc: &Conn, e: usize) -> Option<[u32; 6]> {
    let h = pc.edge_half[e];
    let t = pc.twin[h as usize];
    if t == NONE {
        return None;
    }
    let pv32 = p.num_vertices as u32;
    let ep = |g: u32| pv32 + (pc.edge[g as usize] >> 1);
    Some([p.vert[next(h) as usize], ep(next(h)), ep(prev(h)), p.vert[h as usize], ep(next(t)), ep(prev(t))])
}

/// The smooth vertex point of valence 6 (weights `w6`: the vertex's and
/// each neighbour's) of `xv` with neighbours `ring`.
#[inline]
fn smooth6<T: Float, const D: usize>(ring: [u32; 6], gx: impl Fn(u32) -> [T; D], w6: (T, T), xv: [T; D]) -> [T; D] {
    let mut acc = [T::zero(); D];
    for u in ring {
        let u = gx(u);
        for k in 0..D {
            acc[k] = acc[k] + u[k];
        }
    }
    let mut o = [T::zero(); D];
    for k in 0..D {
        o[k] = w6.1 * acc[k] + w6.0 * xv[k];
    }
    o
}

/// One step of eval from a plain level `l` (rows `x`) to its child (rows
/// `y`), `l`'s connectivity read from its parent `p`'s in closed form (as
/// [`super::level::Derived`] reads it): the sums [`eval_impl`] makes on
/// `l`'s stored connectivity, in the same order, so the same bits. `l` may
/// be virtual.
fn eval_lean<T: Float + Send + Sync, const D: usize>(
    l: &HeLevel,
    p: &HeLevel,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let pc = p.conn();
    let (nv, ne, pv) = (l.num_vertices, l.num_edges, p.num_vertices);
    let pv32 = pv as u32;
    let (yv, ye) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let w = Scratch2::new(l);
    let w6 = {
        let [a, b] = w.weights(6);
        (real::<T>(a), real::<T>(b))
    };
    // `l`'s vertex on the edge of `p`'s halfedge `g`.
    let ep = |g: u32| pv32 + (pc.edge[g as usize] >> 1);
    for_rows(yv, nv, stride, par, |r, out| {
        let (c34, c18) = (real::<T>(CREASE_CENTRE), real::<T>(CREASE_END));
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let xv = gx(v as u32);
            let mut o = [T::zero(); D];
            if v >= pv {
                let e = v - pv;
                if let Some(ring) = edge_point_ring(p, pc, e) {
                    put(row, smooth6::<T, D>(ring, gx, w6, xv));
                } else {
                    // On a boundary edge `a → b`: turning from `second(hₑ)`
                    // meets `b` first and `a` last.
                    let h = pc.edge_half[e];
                    let (a, b) = (gx(p.vert[next(h) as usize]), gx(p.vert[h as usize]));
                    for k in 0..D {
                        o[k] = c18 * (a[k] + b[k]) + c34 * xv[k];
                    }
                    put(row, o);
                }
                continue;
            }
            // A vertex of `p`: its neighbours in `l` are the points of its
            // edges, in `p`'s turning order (which is `l`'s).
            let h0 = pc.vhalf[v];
            if h0 == NONE {
                put(row, xv);
                continue;
            }
            let mut acc = [T::zero(); D];
            let (mut h, mut n) = (h0, 0usize);
            let last = loop {
                n += 1;
                let u = gx(ep(h));
                for k in 0..D {
                    acc[k] = acc[k] + u[k];
                }
                let q = prev(h);
                let t = pc.twin[q as usize];
                if t == NONE {
                    break Some(ep(q));
                }
                h = t;
                if h == h0 {
                    break None;
                }
            };
            match last {
                None => {
                    let [wv, we] = w.weights(n);
                    let (wv, we) = (real::<T>(wv), real::<T>(we));
                    for k in 0..D {
                        o[k] = we * acc[k] + wv * xv[k];
                    }
                }
                Some(ub) => {
                    let (a, b) = (gx(ep(h0)), gx(ub));
                    for k in 0..D {
                        o[k] = c18 * (a[k] + b[k]) + c34 * xv[k];
                    }
                }
            }
            put(row, o);
        }
    });
    // The edge point of `l`'s edge with ends `a`, `b` and opposite
    // vertices `p`, `q` (none on a boundary), in the order of the stored
    // path: `(a, b)` the canonical halfedge's origin and destination, `p`
    // opposite it, `q` opposite its twin.
    let mid = 2 * p.num_edges;
    let pvert = &p.vert[..];
    for_rows(ye, ne, stride, par, |r, out| {
        let (alpha, beta, half) = (real::<T>(EDGE_END), real::<T>(EDGE_OPPOSITE), real::<T>(0.5));
        for (row, e) in out.chunks_exact_mut(stride).zip(r) {
            let [a, b, pq @ ..] = if e < mid {
                // A half of the parent's edge `e / 2` (canonical halfedge
                // `hp`, twin `tp`, point `E`): `first(hp)` = `a → E`,
                // `second(hp)` = `E → b`.
                let hp = pc.edge_half[e / 2];
                let tp = pc.twin[hp as usize];
                let ee = pv32 + (e / 2) as u32;
                if e % 2 == 0 {
                    [pvert[hp as usize], ee, ep(prev(hp)), if tp == NONE { NONE } else { ep(next(tp)) }]
                } else {
                    [ee, pvert[next(hp) as usize], ep(next(hp)), if tp == NONE { NONE } else { ep(prev(tp)) }]
                }
            } else {
                // The middle edge `Eₖ → Eₖ₊₁` of the parent's face `f`.
                let m = e - mid;
                let (f3, k) = (3 * (m / 3), m % 3);
                let g = |i: usize| (f3 + (k + i) % 3) as u32;
                [ep(g(0)), ep(g(1)), ep(g(2)), pvert[f3 + (k + 1) % 3]]
            };
            let (xa, xb) = (gx(a), gx(b));
            let mut o = [T::zero(); D];
            if pq[1] == NONE {
                for k in 0..D {
                    o[k] = half * (xa[k] + xb[k]);
                }
            } else {
                let (xp, xq) = (gx(pq[0]), gx(pq[1]));
                for k in 0..D {
                    o[k] = alpha * (xa[k] + xb[k]) + beta * (xp[k] + xq[k]);
                }
            }
            put(row, o);
        }
    });
}

/// The matrix `R` of the step from `l`: rows the child's points (vertex
/// points, then edge points), columns `l`'s vertices, each row the stencil
/// eval applies.
pub(crate) fn level_operator(l: &HeLevel, c: &Conn, par: Par) -> Result<CsrMat<f64>> {
    let (nv, ne) = (l.num_vertices, l.num_edges);
    let w = Scratch2::new(l);
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    assemble_rows(nv + ne, nv, par, |row, s| {
        SCRATCH.with_borrow_mut(|x| {
            if row < nv {
                vertex_stencil(l, c, row, &w, s, x);
            } else {
                edge_stencil(l, c, row - nv, s, x);
            }
        });
    })
}
