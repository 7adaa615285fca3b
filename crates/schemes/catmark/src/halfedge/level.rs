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
use subla_algebra::mem::try_zeroed_vec;
use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::{Mesh, Options};
use subla_scheme::halfedge::{
    Conn, Halfedges, child_halves_sharpness, child_holes, child_vertex_sharpness, level_mesh,
};
use subla_scheme::kernel::for_rows;
use subla_scheme::{Result, SchemeError};

pub(crate) use subla_scheme::halfedge::NONE;

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
            + self.conn.as_ref().map_or(0, Conn::bytes)
            + self.edge_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.vertex_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.holes.as_ref().map_or(0, Vec::len)
    }

    /// The sharpness of the edge of halfedge `h` (boundary: infinite).
    #[inline]
    pub(crate) fn sigma(&self, c: &Conn, h: u32) -> f32 {
        c.sigma(self.edge_sharpness.as_deref(), h)
    }

    #[inline]
    pub(crate) fn vertex_sharpness(&self, v: usize) -> f32 {
        self.vertex_sharpness.as_ref().map_or(0.0, |s| s[v])
    }

    /// The edges of `v` in turning order: `f(halfedge, neighbour,
    /// outgoing)` for each outgoing halfedge, then (on a boundary) the
    /// incoming boundary halfedge. Returns the number of faces.
    #[inline]
    pub(crate) fn ring(&self, c: &Conn, v: usize, f: impl FnMut(u32, u32, bool)) -> usize {
        c.ring(4, &self.vert, v, f)
    }

    /// The child sharpness of the edge of halfedge `h` at its end `v`.
    pub(crate) fn tau(&self, c: &Conn, h: u32, v: usize, scratch: &mut Vec<f32>) -> f32 {
        c.tau(4, &self.vert, self.edge_sharpness.as_deref(), self.chaikin, h, v, scratch)
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
        let conn = Conn::of_topology(t, super::NAME, par)?;
        let es = mesh.edge_sharpness();
        let interior_sharp = (0..ne).any(|e| t.edge_corners(e).len() == 2 && es[e] > 0.0);
        let vs = mesh.vertex_sharpness();
        let level = QuadLevel {
            num_vertices: nv,
            num_edges: ne,
            vert,
            conn: Some(conn),
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
            Some(es) => child_halves_sharpness(es, ce, par, |e, scratch| {
                let h = c.edge_half[e];
                if c.twin[h as usize] == NONE {
                    return ([SHARPNESS_INFINITE; 2], false);
                }
                let (a, b) = (self.vert[h as usize] as usize, self.vert[next(h) as usize] as usize);
                ([self.tau(c, h, a, scratch), self.tau(c, h, b, scratch)], true)
            })?,
        };
        let vertex_sharpness = child_vertex_sharpness(self.vertex_sharpness.as_deref(), cv)?;
        let holes = child_holes(self.holes.as_deref(), 4)?;
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
        let h = Halfedges {
            order: 4,
            num_vertices: self.num_vertices,
            vert: &self.vert,
            twin: &c.twin,
            edge: &c.edge,
            edge_half: &c.edge_half,
        };
        level_mesh(
            h,
            self.edge_sharpness.as_deref(),
            self.vertex_sharpness.as_deref(),
            self.holes.as_deref(),
            options,
            par,
        )
    }
}
