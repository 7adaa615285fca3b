//! One quad level in halfedge form and its closed-form refinement (Dupuy &
//! Vanhoey 2021's rules, in this crate's numbering).
//!
//! Halfedge `4q + k` leaves corner `k` of quad `q` for corner `k + 1`, so
//! `next`, `prev` and the quad are arithmetic. A level stores, per
//! halfedge, its origin (`vert`: the quads, four by four), its twin
//! ([`NONE`] on a boundary) and its edge code (`2e`, or `2e + 1` where it is
//! not the edge's canonical halfedge); per edge its canonical halfedge;
//! per vertex one outgoing halfedge (the twinless one on a boundary).
//!
//! # The split in closed form
//! Child vertices: the `V` parent vertices, the face points `V + q`, the
//! edge points `V + F + e`. Halfedge `h` (corner `k` of quad `q`, at
//! `vₖ`) owns child quad `h = (vₖ, Eₖ, F_q, Eₖ₋₁)`, whose halfedges are
//! `4h` (`vₖ → Eₖ`), `4h + 1` (`Eₖ → F_q`), `4h + 2` (`F_q → Eₖ₋₁`) and
//! `4h + 3` (`Eₖ₋₁ → vₖ`). Parent halfedge `h` splits into
//! `first(h) = 4h` and `second(h) = 4 next(h) + 3`, and
//!
//! ```text
//! twin(first(h))  = second(twin(h))     twin(4h + 1) = 4 next(h) + 2
//! twin(second(h)) = first(twin(h))      twin(4h + 2) = 4 prev(h) + 1
//! ```
//!
//! Child edges: the halves of edge `e` are `2e = first(hₑ)` and
//! `2e + 1 = second(hₑ)`; the inner edge `Eₖ F_q` of halfedge `h` is
//! `2E + h`, canonical at `4h + 1`. Each entry is one read of the parent.

use subla_algebra::Par;
use subla_algebra::mem::{try_filled_vec, try_zeroed_vec};
use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::{Mesh, Options, Topology};
use subla_scheme::kernel::for_rows;
use subla_scheme::sdc::{child_edge_sharpness, dec, is_infinite};
use subla_scheme::{Result, SchemeError};

/// No halfedge.
pub(crate) const NONE: u32 = u32::MAX;

#[inline]
pub(crate) fn next(h: u32) -> u32 {
    (h & !3) | ((h + 1) & 3)
}

#[inline]
pub(crate) fn prev(h: u32) -> u32 {
    (h & !3) | ((h + 3) & 3)
}

#[inline]
fn first(h: u32) -> u32 {
    if h == NONE { NONE } else { 4 * h }
}

#[inline]
fn second(h: u32) -> u32 {
    if h == NONE { NONE } else { 4 * next(h) + 3 }
}

/// The connectivity of a level beyond its quads.
#[derive(Clone, Debug)]
pub(crate) struct Conn {
    pub twin: Vec<u32>,
    pub edge: Vec<u32>,
    pub edge_half: Vec<u32>,
    pub vhalf: Vec<u32>,
}

/// One quad level in halfedge form (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(crate) struct QuadLevel {
    pub num_vertices: usize,
    pub num_edges: usize,
    pub vert: Vec<u32>,
    pub conn: Option<Conn>,
    /// Sharpness by edge, where an interior edge is sharp (boundary edges
    /// are infinitely sharp without being stored).
    pub edge_sharpness: Option<Vec<f32>>,
    pub vertex_sharpness: Option<Vec<f32>>,
    pub holes: Option<Vec<bool>>,
    pub chaikin: bool,
}

fn too_large(level: u32, what: &'static str, value: usize) -> SchemeError {
    SchemeError::LevelTooLarge { scheme: super::NAME, level, what, value: value as u128 }
}

impl QuadLevel {
    pub(crate) fn num_faces(&self) -> usize {
        self.vert.len() / 4
    }

    pub(crate) fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("a level that is refined or evaluated keeps its connectivity")
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * self.vert.len()
            + self.conn.as_ref().map_or(0, |c| 4 * (c.twin.len() + c.edge.len() + c.edge_half.len() + c.vhalf.len()))
            + self.edge_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.vertex_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.holes.as_ref().map_or(0, Vec::len)
    }

    /// The sharpness of the edge of halfedge `h` (boundary: infinite).
    #[inline]
    pub(crate) fn sigma(&self, c: &Conn, h: u32) -> f32 {
        if c.twin[h as usize] == NONE {
            SHARPNESS_INFINITE
        } else {
            self.edge_sharpness.as_ref().map_or(0.0, |s| s[(c.edge[h as usize] >> 1) as usize])
        }
    }

    #[inline]
    pub(crate) fn vertex_sharpness(&self, v: usize) -> f32 {
        self.vertex_sharpness.as_ref().map_or(0.0, |s| s[v])
    }

    /// The edges of `v` in turning order: `f(halfedge, neighbour,
    /// outgoing)` for each outgoing halfedge, then (on a boundary) the
    /// incoming boundary halfedge. Returns the number of faces.
    #[inline]
    pub(crate) fn ring(&self, c: &Conn, v: usize, mut f: impl FnMut(u32, u32, bool)) -> usize {
        let h0 = c.vhalf[v];
        if h0 == NONE {
            return 0;
        }
        let (mut h, mut faces) = (h0, 0);
        loop {
            faces += 1;
            f(h, self.vert[next(h) as usize], true);
            let p = prev(h);
            let t = c.twin[p as usize];
            if t == NONE {
                f(p, self.vert[p as usize], false);
                return faces;
            }
            h = t;
            if h == h0 || faces > self.vert.len() {
                return faces;
            }
        }
    }

    /// The child sharpness of the edge of halfedge `h` at its end `v`.
    pub(crate) fn tau(&self, c: &Conn, h: u32, v: usize, scratch: &mut Vec<f32>) -> f32 {
        let s = self.sigma(c, h);
        if s <= 0.0 || is_infinite(s) || !self.chaikin {
            return child_edge_sharpness(s, &[], false);
        }
        scratch.clear();
        self.ring(c, v, |g, _, _| scratch.push(self.sigma(c, g)));
        child_edge_sharpness(s, scratch, true)
    }

    /// A level from a prepared all-quad mesh (the kernels' first level),
    /// manifold as the level of a manifold control mesh is: edges keep the
    /// topology's ids.
    pub(crate) fn from_mesh(mesh: &Mesh, par: Par) -> Result<QuadLevel> {
        let t = mesh.topology();
        let (nv, ne, nf) = (t.num_vertices(), t.num_edges(), t.num_faces());
        if let Some(f) = (0..nf).find(|&f| t.face(f).len() != 4) {
            return Err(SchemeError::Internal {
                what: super::NAME,
                detail: format!("face {f} of level 1 is not a quad"),
            });
        }
        if u32::try_from(4 * nf).is_err() || u32::try_from(2 * ne + 1).is_err() {
            return Err(too_large(1, "halfedges", 4 * nf));
        }
        let vert = t.face_verts().to_vec();
        const WHAT: &str = "the halfedges of a level";
        let mut twin = try_filled_vec(4 * nf, NONE, WHAT)?;
        let mut edge = try_zeroed_vec::<u32>(4 * nf, WHAT)?;
        let mut edge_half = try_zeroed_vec::<u32>(ne, WHAT)?;
        for (e, half) in edge_half.iter_mut().enumerate() {
            match *t.edge_corners(e) {
                [a] => {
                    edge[a as usize] = 2 * e as u32;
                    *half = a;
                }
                [a, b] if vert[a as usize] != vert[b as usize] => {
                    twin[a as usize] = b;
                    twin[b as usize] = a;
                    edge[a as usize] = 2 * e as u32;
                    edge[b as usize] = 2 * e as u32 + 1;
                    *half = a;
                }
                _ => return Err(subla_scheme::not_manifold(super::NAME, t)),
            }
        }
        let mut vhalf = try_filled_vec(nv, NONE, WHAT)?;
        for_rows(&mut vhalf, nv, 1, par, |r, out| {
            for (o, v) in out.iter_mut().zip(r) {
                let cs = t.vertex_corners(v);
                *o = cs.iter().copied().find(|&h| twin[h as usize] == NONE).or(cs.first().copied()).unwrap_or(NONE);
            }
        });
        let es = mesh.edge_sharpness();
        let interior_sharp = (0..ne).any(|e| t.edge_corners(e).len() == 2 && es[e] > 0.0);
        let vs = mesh.vertex_sharpness();
        let level = QuadLevel {
            num_vertices: nv,
            num_edges: ne,
            vert,
            conn: Some(Conn { twin, edge, edge_half, vhalf }),
            edge_sharpness: interior_sharp.then(|| es.to_vec()),
            vertex_sharpness: vs.iter().any(|&s| s > 0.0).then(|| vs.to_vec()),
            holes: mesh.has_holes().then(|| mesh.holes().to_vec()),
            chaikin: mesh.options().crease_method == subla_mesh::CreaseMethod::Chaikin,
        };
        // Turning around each vertex meets all its faces on a manifold
        // mesh (which the caller has checked): verified in debug builds.
        #[cfg(debug_assertions)]
        {
            let c = level.conn();
            if let Some(v) = (0..nv).find(|&v| level.ring(c, v, |_, _, _| ()) != t.face_count(v)) {
                return Err(SchemeError::Internal {
                    what: super::NAME,
                    detail: format!("turning around vertex {v} does not meet all its faces"),
                });
            }
        }
        Ok(level)
    }

    /// The child level (`level`: its number); its connectivity beyond the
    /// quads only if `full`.
    pub(crate) fn refine(&self, level: u32, full: bool, par: Par) -> Result<QuadLevel> {
        let c = self.conn();
        let (nv, ne, nf) = (self.num_vertices, self.num_edges, self.num_faces());
        let (cv, ce, cf) = (nv + nf + ne, 2 * ne + 4 * nf, 4 * nf);
        if u32::try_from(4 * cf).is_err() {
            return Err(too_large(level, "halfedges", 4 * cf));
        }
        if u32::try_from(2 * ce + 1).is_err() {
            return Err(too_large(level, "edges", ce));
        }
        if u32::try_from(cv).is_err() {
            return Err(too_large(level, "vertices", cv));
        }
        let (fbase, ebase) = (nv as u32, (nv + nf) as u32);
        let mut vert = try_zeroed_vec::<u32>(4 * cf, "the faces of a level")?;
        for_rows(&mut vert, 4 * nf, 4, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(4).zip(r) {
                let h32 = h as u32;
                o.copy_from_slice(&[
                    self.vert[h],
                    ebase + (c.edge[h] >> 1),
                    fbase + h32 / 4,
                    ebase + (c.edge[prev(h32) as usize] >> 1),
                ]);
            }
        });
        let conn = if full { Some(self.child_conn(par)?) } else { None };
        let edge_sharpness = match &self.edge_sharpness {
            None => None,
            Some(es) => {
                let mut s = try_zeroed_vec::<f32>(ce, "the edge sharpness of a level")?;
                let any = std::sync::atomic::AtomicBool::new(false);
                for_rows(&mut s[..2 * ne], ne, 2, par, |r, out| {
                    let mut scratch = Vec::new();
                    let mut found = false;
                    for (o, e) in out.chunks_exact_mut(2).zip(r) {
                        if es[e] <= 0.0 {
                            continue;
                        }
                        let h = c.edge_half[e];
                        if c.twin[h as usize] == NONE {
                            o.fill(SHARPNESS_INFINITE);
                            continue;
                        }
                        let (a, b) = (self.vert[h as usize] as usize, self.vert[next(h) as usize] as usize);
                        o[0] = self.tau(c, h, a, &mut scratch);
                        o[1] = self.tau(c, h, b, &mut scratch);
                        found |= o[0] > 0.0 || o[1] > 0.0;
                    }
                    if found {
                        any.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                });
                any.into_inner().then_some(s)
            }
        };
        let vertex_sharpness = match &self.vertex_sharpness {
            Some(vs) if vs.iter().any(|&s| dec(s) > 0.0) => {
                let mut s = try_zeroed_vec::<f32>(cv, "the vertex sharpness of a level")?;
                for (o, &x) in s.iter_mut().zip(vs) {
                    *o = dec(x);
                }
                Some(s)
            }
            _ => None,
        };
        let holes = match &self.holes {
            Some(h) => {
                let mut ch = try_filled_vec(cf, false, "the hole flags of a level")?;
                for (o, &x) in ch.chunks_exact_mut(4).zip(h) {
                    o.fill(x);
                }
                Some(ch)
            }
            None => None,
        };
        Ok(QuadLevel {
            num_vertices: cv,
            num_edges: ce,
            vert,
            conn,
            edge_sharpness,
            vertex_sharpness,
            holes,
            chaikin: self.chaikin,
        })
    }

    /// The child's connectivity beyond its quads, one read of this level's
    /// per entry.
    pub(crate) fn child_conn(&self, par: Par) -> Result<Conn> {
        let c = self.conn();
        let (nv, ne, nf) = (self.num_vertices, self.num_edges, self.num_faces());
        let (cv, ce, ch) = (nv + nf + ne, 2 * ne + 4 * nf, 16 * nf);
        const WHAT: &str = "the halfedges of a level";
        let mut twin = try_zeroed_vec::<u32>(ch, WHAT)?;
        for_rows(&mut twin, 4 * nf, 4, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(4).zip(r) {
                let h32 = h as u32;
                o.copy_from_slice(&[
                    second(c.twin[h]),
                    4 * next(h32) + 2,
                    4 * prev(h32) + 1,
                    first(c.twin[prev(h32) as usize]),
                ]);
            }
        });
        let mut edge = try_zeroed_vec::<u32>(ch, WHAT)?;
        let inner = 2 * ne as u32;
        for_rows(&mut edge, 4 * nf, 4, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(4).zip(r) {
                let h32 = h as u32;
                let (code, pcode) = (c.edge[h], c.edge[prev(h32) as usize]);
                let (e, nc, pe, pnc) = (code >> 1, code & 1, pcode >> 1, pcode & 1);
                o.copy_from_slice(&[4 * e + 3 * nc, 2 * (inner + h32), 2 * (inner + prev(h32)) + 1, 4 * pe + 2 - pnc]);
            }
        });
        let mut edge_half = try_zeroed_vec::<u32>(ce, WHAT)?;
        {
            let (halves, inner) = edge_half.split_at_mut(2 * ne);
            for_rows(halves, ne, 2, par, |r, out| {
                for (o, e) in out.chunks_exact_mut(2).zip(r) {
                    let h = c.edge_half[e];
                    o[0] = first(h);
                    o[1] = second(h);
                }
            });
            for_rows(inner, 4 * nf, 1, par, |r, out| {
                for (o, h) in out.iter_mut().zip(r) {
                    *o = 4 * h as u32 + 1;
                }
            });
        }
        let mut vhalf = try_zeroed_vec::<u32>(cv, WHAT)?;
        {
            let (vs, rest) = vhalf.split_at_mut(nv);
            let (fs, es) = rest.split_at_mut(nf);
            for_rows(vs, nv, 1, par, |r, out| {
                for (o, v) in out.iter_mut().zip(r) {
                    *o = first(c.vhalf[v]);
                }
            });
            for_rows(fs, nf, 1, par, |r, out| {
                for (o, q) in out.iter_mut().zip(r) {
                    *o = 16 * q as u32 + 2;
                }
            });
            for_rows(es, ne, 1, par, |r, out| {
                for (o, e) in out.iter_mut().zip(r) {
                    *o = second(c.edge_half[e]);
                }
            });
        }
        Ok(Conn { twin, edge, edge_half, vhalf })
    }

    /// The full mesh of this level (connectivity `c`), edges numbered as
    /// the level numbers them: no sort, no search.
    pub(crate) fn mesh(&self, c: &Conn, options: Options, par: Par) -> Result<Mesh> {
        let nf = self.num_faces();
        let edges: Vec<[u32; 2]> = c
            .edge_half
            .iter()
            .map(|&h| {
                let (a, b) = (self.vert[h as usize], self.vert[next(h) as usize]);
                [a.min(b), a.max(b)]
            })
            .collect();
        let corner_edge: Vec<u32> = c.edge.iter().map(|&x| x >> 1).collect();
        let ptr: Vec<u32> = (0..=nf as u32).map(|f| 4 * f).collect();
        let t = Topology::from_edges(self.num_vertices, ptr, self.vert.clone(), edges, corner_edge, par)?;
        let mut es = self.edge_sharpness.clone().unwrap_or_else(|| vec![0f32; self.num_edges]);
        for (e, &h) in c.edge_half.iter().enumerate() {
            if c.twin[h as usize] == NONE {
                es[e] = SHARPNESS_INFINITE;
            }
        }
        let vs = self.vertex_sharpness.clone().unwrap_or_else(|| vec![0f32; self.num_vertices]);
        let holes = self.holes.clone().unwrap_or_else(|| vec![false; nf]);
        Ok(Mesh::from_parts(t, es, vs, holes, options)?)
    }
}
