//! One level in halfedge form and its closed-form refinement.
//!
//! A triangle mesh of `F` faces has `H = 3F` halfedges: halfedge `3f + i`
//! leaves corner `i` of face `f` for corner `i + 1`, so `next` and `prev`
//! are arithmetic and the faces are the halfedges' origins, three by three.
//! A level stores, per halfedge, its origin (`vert`), its twin (`twin`,
//! [`NONE`] on a boundary) and its edge (`edge`, `2e + 1` where the
//! halfedge is not the edge's *canonical* one, else `2e`); per edge, its
//! canonical halfedge (`edge_half`); per vertex, one outgoing halfedge
//! (`vhalf`: the one without a twin on a boundary, so that turning around
//! the vertex from it meets every face).
//!
//! # The 1-to-4 split in closed form
//! Child vertices: the parent's `V` vertices, then the edge point of edge
//! `e` as `V + e`. Triangle `f = (v₀, v₁, v₂)`, with `Eᵢ` the point of the
//! edge of halfedge `3f + i`, has children `4f + i = (vᵢ, Eᵢ, Eᵢ₋₁)` (the
//! corner of `vᵢ`) and `4f + 3 = (E₀, E₁, E₂)`. Parent halfedge `h` in
//! face `f` at corner `i` splits into `first(h) = 12f + 3i` (its origin
//! half) and `second(h) = 12f + 3(i+1 mod 3) + 2` (its destination half),
//! so that
//!
//! ```text
//! twin(first(h))  = second(twin(h))       twin(12f + 3i + 1) = 12f + 9 + (i+2 mod 3)
//! twin(second(h)) = first(twin(h))        twin(12f + 9 + k)  = 12f + 3(k+1 mod 3) + 1
//! ```
//!
//! Child edges: the halves of parent edge `e` (canonical halfedge `hₑ`)
//! are `2e = first(hₑ)` and `2e + 1 = second(hₑ)`, and the middle edge
//! `12f + 9 + k` is `2E + 3f + k`. Every child relation is one read of its
//! parent's: no sort, no hashing, no search (`docs/loop.md`).

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

/// The halfedge after `h` in its triangle.
#[inline]
pub(crate) fn next(h: u32) -> u32 {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

/// The halfedge before `h` in its triangle.
#[inline]
pub(crate) fn prev(h: u32) -> u32 {
    if h % 3 == 0 { h + 2 } else { h - 1 }
}

/// The child halfedge at the origin of parent halfedge `h`.
#[inline]
fn first(h: u32) -> u32 {
    if h == NONE { NONE } else { 12 * (h / 3) + 3 * (h % 3) }
}

/// The child halfedge at the destination of parent halfedge `h`.
#[inline]
fn second(h: u32) -> u32 {
    if h == NONE {
        NONE
    } else {
        let (f, i) = (h / 3, h % 3);
        12 * f + 3 * ((i + 1) % 3) + 2
    }
}

/// One level in halfedge form (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(crate) struct HeLevel {
    pub num_vertices: usize,
    pub num_edges: usize,
    /// Origin of each halfedge: the triangles, three by three; empty where
    /// the level is *virtual* (see [`Keep::Virtual`]).
    pub vert: Vec<u32>,
    /// Number of faces.
    pub nf: usize,
    /// The rest of the connectivity; `None` for a finest level kept lean
    /// (derived from its parent when asked for).
    pub conn: Option<Conn>,
    /// Sharpness by edge, where an edge with two faces is sharp (boundary
    /// edges are infinitely sharp without being stored).
    pub edge_sharpness: Option<Vec<f32>>,
    /// Sharpness by vertex, where a vertex is sharp.
    pub vertex_sharpness: Option<Vec<f32>>,
    /// Hole flags by face, where a face is a hole.
    pub holes: Option<Vec<bool>>,
    /// Largest vertex valence (edges), for the weight table.
    pub max_valence: usize,
    /// Chaikin's crease rule (else the uniform decrement).
    pub chaikin: bool,
}

fn too_large(level: u32, what: &'static str, value: usize) -> SchemeError {
    SchemeError::LevelTooLarge { scheme: super::NAME, level, what, value: value as u128 }
}

impl HeLevel {
    pub(crate) fn num_faces(&self) -> usize {
        self.nf
    }

    /// Whether the level keeps neither its faces nor its connectivity
    /// ([`Keep::Virtual`]).
    pub(crate) fn is_virtual(&self) -> bool {
        self.vert.len() != 3 * self.nf
    }

    pub(crate) fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("a level that is refined or evaluated keeps its connectivity")
    }

    /// Bytes this level keeps.
    pub(crate) fn bytes(&self) -> usize {
        4 * self.vert.len()
            + self.conn.as_ref().map_or(0, Conn::bytes)
            + self.edge_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.vertex_sharpness.as_ref().map_or(0, |s| 4 * s.len())
            + self.holes.as_ref().map_or(0, Vec::len)
    }

    /// The sharpness of halfedge `h`'s edge (boundary edges: infinite).
    #[inline]
    pub(crate) fn sigma(&self, c: &Conn, h: u32) -> f32 {
        c.sigma(self.edge_sharpness.as_deref(), h)
    }

    /// The sharpness of vertex `v`.
    #[inline]
    pub(crate) fn vertex_sharpness(&self, v: usize) -> f32 {
        self.vertex_sharpness.as_ref().map_or(0.0, |s| s[v])
    }

    /// The outgoing halfedges of `v` in turning order, each with the
    /// neighbour it leads to, then (on a boundary) the last neighbour,
    /// reached by the incoming boundary halfedge: `f(halfedge, neighbour,
    /// outgoing)` for each edge of `v`. Returns the number of faces.
    #[inline]
    pub(crate) fn ring(&self, c: &Conn, v: usize, f: impl FnMut(u32, u32, bool)) -> usize {
        c.ring(3, &self.vert, v, f)
    }

    /// The child sharpness of the edge of halfedge `h` at vertex `v` (one of
    /// its ends).
    pub(crate) fn tau(&self, c: &Conn, h: u32, v: usize, scratch: &mut Vec<f32>) -> f32 {
        c.tau(3, &self.vert, self.edge_sharpness.as_deref(), self.chaikin, h, v, scratch)
    }

    /// Level 0 from a prepared triangle mesh (effective sharpness) whose
    /// topology is manifold ([`subla_mesh::Topology::check_manifold`] passed): the
    /// edges keep the topology's ids.
    pub(crate) fn from_mesh(mesh: &Mesh, par: Par) -> Result<HeLevel> {
        let t = mesh.topology();
        let (nv, ne, nf) = (t.num_vertices(), t.num_edges(), t.num_faces());
        if u32::try_from(3 * nf).is_err() || u32::try_from(2 * ne + 1).is_err() {
            return Err(too_large(0, "halfedges", 3 * nf));
        }
        let vert = t.face_verts().to_vec();
        let conn = Conn::of_topology(t, super::NAME, par)?;
        let interior_sharp = (0..ne).any(|e| t.edge_corners(e).len() == 2 && mesh.edge_sharpness()[e] > 0.0);
        let level = HeLevel {
            num_vertices: nv,
            num_edges: ne,
            vert,
            nf,
            conn: Some(conn),
            edge_sharpness: interior_sharp.then(|| mesh.edge_sharpness().to_vec()),
            vertex_sharpness: mesh
                .vertex_sharpness()
                .iter()
                .any(|&s| s > 0.0)
                .then(|| mesh.vertex_sharpness().to_vec()),
            holes: mesh.has_holes().then(|| mesh.holes().to_vec()),
            max_valence: (0..nv).map(|v| t.valence(v)).max().unwrap_or(0),
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

    /// The child's vertices, edges and faces (`level`: its number, for
    /// errors), or [`SchemeError::LevelTooLarge`] where its halfedges, edge
    /// codes or vertices do not fit `u32`.
    fn child_size(&self, level: u32) -> Result<(usize, usize, usize)> {
        let (nv, ne, nf) = (self.num_vertices, self.num_edges, self.num_faces());
        let (cv, ce, cf) = (nv + ne, 2 * ne + 3 * nf, 4 * nf);
        if u32::try_from(3 * cf).is_err() {
            return Err(too_large(level, "halfedges", 3 * cf));
        }
        if u32::try_from(2 * ce + 1).is_err() {
            return Err(too_large(level, "edges", ce));
        }
        if u32::try_from(cv).is_err() {
            return Err(too_large(level, "vertices", cv));
        }
        Ok((cv, ce, cf))
    }

    /// The child level (`level` is the child's number, for errors), with
    /// what `keep` asks of it.
    pub(crate) fn refine(&self, c: &Conn, level: u32, keep: Keep, par: Par) -> Result<HeLevel> {
        let ne = self.num_edges;
        let (cv, ce, cf) = self.child_size(level)?;
        // Sharpness: the halves of a sharp edge get its child sharpness at
        // their ends; the middle edges are smooth.
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
        let plain = edge_sharpness.is_none() && vertex_sharpness.is_none();
        let (vert, conn) = match keep {
            Keep::Virtual if plain => (Vec::new(), None),
            Keep::Faces => (self.child_faces(c, par)?, None),
            Keep::Full | Keep::Virtual => (self.child_faces(c, par)?, Some(self.child_conn(c, par)?)),
        };
        Ok(HeLevel {
            num_vertices: cv,
            num_edges: ce,
            vert,
            nf: cf,
            conn,
            edge_sharpness,
            vertex_sharpness,
            holes,
            max_valence: if ne > 0 { self.max_valence.max(6) } else { self.max_valence },
            chaikin: self.chaikin,
        })
    }

    /// The connectivity of the child level beyond its faces, each entry
    /// one read of this level's.
    pub(crate) fn child_conn(&self, c: &Conn, par: Par) -> Result<Conn> {
        let (nv, ne, nf) = (self.num_vertices, self.num_edges, self.num_faces());
        let (cv, ce, ch) = (nv + ne, 2 * ne + 3 * nf, 12 * nf);
        const WHAT: &str = "the halfedges of a level";
        let mut twin = try_zeroed_vec::<u32>(ch, WHAT)?;
        let mut edge = try_zeroed_vec::<u32>(ch, WHAT)?;
        let mid = 2 * ne as u32;
        for_rows(&mut twin, nf, 12, par, |r, out| {
            for (o, f) in out.chunks_exact_mut(12).zip(r) {
                let f = f as u32;
                let h = 3 * f;
                let m = 12 * f + 9;
                for i in 0..3 {
                    let t = c.twin[(h + i) as usize];
                    let tp = c.twin[prev(h + i) as usize];
                    o[3 * i as usize] = second(t);
                    o[3 * i as usize + 1] = m + (i + 2) % 3;
                    o[3 * i as usize + 2] = first(tp);
                    o[9 + i as usize] = 12 * f + 3 * ((i + 1) % 3) + 1;
                }
            }
        });
        for_rows(&mut edge, nf, 12, par, |r, out| {
            for (o, f) in out.chunks_exact_mut(12).zip(r) {
                let h = 3 * f;
                let mf = mid + 3 * f as u32;
                for i in 0..3usize {
                    let code = c.edge[h + i];
                    let (e, nc) = (code >> 1, code & 1);
                    let pcode = c.edge[prev((h + i) as u32) as usize];
                    let (pe, pnc) = (pcode >> 1, pcode & 1);
                    // The origin half of `h`: half 2e (canonical) where `h`
                    // is canonical, else half 2e + 1 (not canonical).
                    o[3 * i] = 4 * e + 3 * nc;
                    o[3 * i + 1] = 2 * (mf + ((i as u32 + 2) % 3)) + 1;
                    // The destination half of the previous halfedge.
                    o[3 * i + 2] = 4 * pe + 2 - pnc;
                    o[9 + i] = 2 * (mf + i as u32);
                }
            }
        });
        let mut edge_half = try_zeroed_vec::<u32>(ce, WHAT)?;
        {
            let (halves, middle) = edge_half.split_at_mut(2 * ne);
            for_rows(halves, ne, 2, par, |r, out| {
                for (o, e) in out.chunks_exact_mut(2).zip(r) {
                    let h = c.edge_half[e];
                    o[0] = first(h);
                    o[1] = second(h);
                }
            });
            for_rows(middle, nf, 3, par, |r, out| {
                for (o, f) in out.chunks_exact_mut(3).zip(r) {
                    let m = 12 * f as u32 + 9;
                    o.copy_from_slice(&[m, m + 1, m + 2]);
                }
            });
        }
        let mut vhalf = try_zeroed_vec::<u32>(cv, WHAT)?;
        {
            let (vs, es) = vhalf.split_at_mut(nv);
            for_rows(vs, nv, 1, par, |r, out| {
                for (o, v) in out.iter_mut().zip(r) {
                    *o = first(c.vhalf[v]);
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

    /// The child's faces (its halfedges' origins), one face of this level
    /// (connectivity `c`) at a time.
    fn child_faces(&self, c: &Conn, par: Par) -> Result<Vec<u32>> {
        let nv32 = self.num_vertices as u32;
        let mut vert = try_zeroed_vec::<u32>(12 * self.nf, "the faces of a level")?;
        for_rows(&mut vert, self.nf, 12, par, |r, out| {
            for (o, f) in out.chunks_exact_mut(12).zip(r) {
                let h = 3 * f;
                o.copy_from_slice(&split_face(&self.vert[h..h + 3], [0, 1, 2].map(|i| nv32 + (c.edge[h + i] >> 1))));
            }
        });
        Ok(vert)
    }

    /// This virtual level made whole (faces and connectivity), from its
    /// parent `p` (connectivity `pc`).
    pub(crate) fn whole(&self, p: &HeLevel, pc: &Conn, par: Par) -> Result<HeLevel> {
        let mut w = self.clone();
        w.vert = p.child_faces(pc, par)?;
        w.conn = Some(p.child_conn(pc, par)?);
        Ok(w)
    }

    /// Whether no edge or vertex of this level is sharp (boundary edges
    /// aside): the levels that may be kept lean before the finest.
    pub(crate) fn is_plain(&self) -> bool {
        self.edge_sharpness.is_none() && self.vertex_sharpness.is_none()
    }

    /// The child of this plain level where it keeps no connectivity (it is
    /// virtual, [`Keep::Virtual`], or a modeling step's lean level): its
    /// faces and connectivity read from `parent`'s in closed form
    /// ([`Derived`]), its child's faces made one parent face (four of this
    /// level's, sixteen of the child's) at a time.
    pub(crate) fn refine_lean(&self, parent: &HeLevel, level: u32, par: Par) -> Result<HeLevel> {
        debug_assert!(self.conn.is_none() && self.is_plain());
        let d = Derived::of(parent);
        let mut child = self.lazy_child(level)?;
        let nv32 = self.num_vertices as u32;
        let mut vert = try_zeroed_vec::<u32>(3 * child.nf, "the faces of a level")?;
        // The parent's face `f` owns this level's halfedges `12f .. 12f + 12`
        // (faces `4f .. 4f + 4`), hence the child's faces `16f .. 16f + 16`.
        for_rows(&mut vert, parent.num_faces(), 48, par, |r, out| {
            for (o, f) in out.chunks_exact_mut(48).zip(r) {
                let codes = d.edge_codes(f as u32);
                let verts = d.verts(f as u32);
                for (q, o) in o.chunks_exact_mut(12).enumerate() {
                    let h = 3 * q;
                    o.copy_from_slice(&split_face(&verts[h..h + 3], [0, 1, 2].map(|i| nv32 + (codes[h + i] >> 1))));
                }
            }
        });
        child.vert = vert;
        Ok(child)
    }

    /// The child of this plain level with neither faces nor connectivity:
    /// a modeling step's finest level, whose faces are made
    /// ([`HeLevel::refine_lean`] from this level's parent) only where a
    /// caller asks for them.
    pub(crate) fn lazy_child(&self, level: u32) -> Result<HeLevel> {
        debug_assert!(self.is_plain());
        let (cv, ce, cf) = self.child_size(level)?;
        Ok(HeLevel {
            num_vertices: cv,
            num_edges: ce,
            vert: Vec::new(),
            nf: cf,
            conn: None,
            edge_sharpness: None,
            vertex_sharpness: None,
            holes: child_holes(self.holes.as_deref(), 4)?,
            max_valence: if self.num_edges > 0 { self.max_valence.max(6) } else { self.max_valence },
            chaikin: self.chaikin,
        })
    }

    /// The full mesh of this level (connectivity `c`, this level's or
    /// derived), edges numbered as the level numbers them: no sort, no
    /// search.
    pub(crate) fn mesh(&self, c: &Conn, options: Options, par: Par) -> Result<Mesh> {
        let h = Halfedges {
            order: 3,
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

/// What [`HeLevel::refine`] makes of the child.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Faces and connectivity: a level that is refined further.
    Full,
    /// Faces only: the finest level (its connectivity derived from its
    /// parent's when a step or a mesh asks for it).
    Faces,
    /// Where the child is plain (no sharp edge or vertex), neither: its
    /// faces and connectivity are read from this level's in closed form
    /// ([`Derived`]) by the one step and the one evaluation made from it,
    /// and made whole only where a caller asks for its faces, mesh or
    /// operator. Else as [`Keep::Full`].
    Virtual,
}

/// The corners of the four children of triangle `p` whose edges have the
/// points `e` (`4f + i = (pᵢ, Eᵢ, Eᵢ₋₁)`, `4f + 3 = (E₀, E₁, E₂)`).
#[inline(always)]
fn split_face(p: &[u32], e: [u32; 3]) -> [u32; 12] {
    [p[0], e[0], e[2], p[1], e[1], e[0], p[2], e[2], e[1], e[0], e[1], e[2]]
}

/// The faces and connectivity of a virtual level (the child of `p`), read
/// from its parent's in closed form one entry at a time: the formulas
/// [`HeLevel::refine`] and [`HeLevel::child_conn`] write out in full, so
/// every entry equals the one they would store.
#[derive(Copy, Clone)]
pub(crate) struct Derived<'a> {
    c: &'a Conn,
    pvert: &'a [u32],
    /// `V` of the parent: the child's first edge point.
    pv: u32,
    /// `2E` of the parent: the first middle edge of the child.
    mid: u32,
}

impl<'a> Derived<'a> {
    pub(crate) fn of(p: &'a HeLevel) -> Self {
        Derived { c: p.conn(), pvert: &p.vert, pv: p.num_vertices as u32, mid: 2 * p.num_edges as u32 }
    }

    /// The origins of the child's halfedges `12f .. 12f + 12`.
    #[inline(always)]
    pub(crate) fn verts(&self, f: u32) -> [u32; 12] {
        let h = 3 * f as usize;
        split_face(&self.pvert[h..h + 3], [0, 1, 2].map(|i| self.pv + (self.c.edge[h + i] >> 1)))
    }

    /// The origin of the child's halfedge `g`.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn vert(&self, g: u32) -> u32 {
        // Which corner (`0..3`) or edge point (`3..6`) of the parent's face
        // each of the twelve halfedges leaves.
        const FROM: [u8; 12] = [0, 3, 5, 1, 4, 3, 2, 5, 4, 3, 4, 5];
        let (f, k) = ((g / 12) as usize, FROM[(g % 12) as usize] as usize);
        if k < 3 { self.pvert[3 * f + k] } else { self.pv + (self.c.edge[3 * f + k - 3] >> 1) }
    }

    /// The twin of the child's halfedge `g`.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn twin(&self, g: u32) -> u32 {
        let (f, s) = (g / 12, g % 12);
        if s >= 9 {
            return 12 * f + 3 * ((s - 9 + 1) % 3) + 1;
        }
        let (i, k) = (s / 3, s % 3);
        let h = 3 * f + i;
        match k {
            0 => second(self.c.twin[h as usize]),
            1 => 12 * f + 9 + (i + 2) % 3,
            _ => first(self.c.twin[prev(h) as usize]),
        }
    }

    /// The edge codes of the child's halfedges `12f .. 12f + 12` (those of
    /// the parent's face `f`).
    #[inline]
    pub(crate) fn edge_codes(&self, f: u32) -> [u32; 12] {
        let h = 3 * f as usize;
        let mf = self.mid + 3 * f;
        let mut o = [0u32; 12];
        for i in 0..3usize {
            let code = self.c.edge[h + i];
            let pcode = self.c.edge[prev((h + i) as u32) as usize];
            o[3 * i] = 4 * (code >> 1) + 3 * (code & 1);
            o[3 * i + 1] = 2 * (mf + ((i as u32 + 2) % 3)) + 1;
            o[3 * i + 2] = 4 * (pcode >> 1) + 2 - (pcode & 1);
            o[9 + i] = 2 * (mf + i as u32);
        }
        o
    }

    /// The canonical halfedge of the child's edge `e`.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn edge_half(&self, e: usize) -> u32 {
        let mid = self.mid as usize;
        if e < mid {
            let h = self.c.edge_half[e / 2];
            if e % 2 == 0 { first(h) } else { second(h) }
        } else {
            let m = (e - mid) as u32;
            12 * (m / 3) + 9 + m % 3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived entries equal the stored ones of `child_conn`, on a
    /// mesh with a boundary and a closed one.
    #[test]
    fn derived_connectivity_is_the_stored_one() {
        let open = Mesh::from_faces(5, &[[0u32, 1, 2], [0, 2, 3], [0, 3, 4], [1, 0, 4]]).unwrap();
        let closed = Mesh::from_faces(4, &[[0u32, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
        for mesh in [open, closed] {
            let mesh = crate::level::prepare(&mesh, crate::level::Rules::OpenSubdiv).unwrap();
            let p = HeLevel::from_mesh(&mesh, Par::Seq).unwrap();
            let child = p.refine(p.conn(), 1, Keep::Full, Par::Seq).unwrap();
            let c = child.conn();
            let d = Derived::of(&p);
            for g in 0..c.twin.len() {
                assert_eq!(d.twin(g as u32), c.twin[g], "twin of {g}");
                assert_eq!(d.edge_codes(g as u32 / 12)[g % 12], c.edge[g], "edge of {g}");
            }
            for e in 0..c.edge_half.len() {
                assert_eq!(d.edge_half(e), c.edge_half[e], "edge {e}");
            }
            for g in 0..child.vert.len() {
                assert_eq!(d.vert(g as u32), child.vert[g], "origin of {g}");
            }
            let grand = child.refine(c, 2, Keep::Faces, Par::Seq).unwrap();
            let virt = p.refine(p.conn(), 1, Keep::Virtual, Par::Seq).unwrap();
            assert!(virt.is_virtual() && virt.vert.is_empty() && virt.conn.is_none());
            assert_eq!(virt.refine_lean(&p, 2, Par::Seq).unwrap().vert, grand.vert);
            let whole = virt.whole(&p, p.conn(), Par::Seq).unwrap();
            assert_eq!((&whole.vert, &whole.conn().twin), (&child.vert, &c.twin));
        }
    }

    /// A plain level evaluated through its parent's connectivity gives the
    /// bits of its own (stored) connectivity, on any number of channels,
    /// with and without a boundary; so does its virtual form.
    #[test]
    fn evaluation_through_the_parent_is_the_stored_one() {
        // A hexagonal patch of the triangular lattice (no boundary vertex
        // with a single face: no corner), and a closed torus.
        let r = 3i32;
        let inside = |i: i32, j: i32| i.abs() <= r && j.abs() <= r && (i + j).abs() <= r;
        let points: Vec<(i32, i32)> =
            (-r..=r).flat_map(|i| (-r..=r).map(move |j| (i, j))).filter(|&(i, j)| inside(i, j)).collect();
        let id = |i: i32, j: i32| points.iter().position(|&p| p == (i, j)).unwrap() as u32;
        let mut tris = Vec::new();
        for i in -r..=r {
            for j in -r..=r {
                if inside(i, j) && inside(i + 1, j) && inside(i, j + 1) {
                    tris.push([id(i, j), id(i + 1, j), id(i, j + 1)]);
                }
                if inside(i + 1, j) && inside(i + 1, j + 1) && inside(i, j + 1) {
                    tris.push([id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]);
                }
            }
        }
        let open = Mesh::from_faces(points.len(), &tris).unwrap();
        let torus = subla_mesh::proptest_support::torus(7, 5, 1).mesh.triangulated().unwrap();
        let t = torus.topology();
        let closed =
            Mesh::from_faces(t.num_vertices(), &(0..t.num_faces()).map(|f| t.face(f)).collect::<Vec<_>>()).unwrap();
        for mesh in [open, closed] {
            let mesh = crate::level::prepare(&mesh, crate::level::Rules::OpenSubdiv).unwrap();
            let p = HeLevel::from_mesh(&mesh, Par::Seq).unwrap();
            let l = p.refine(p.conn(), 1, Keep::Full, Par::Seq).unwrap();
            let virt = p.refine(p.conn(), 1, Keep::Virtual, Par::Seq).unwrap();
            assert!(
                l.is_plain() && virt.is_virtual(),
                "{:?} {:?}",
                l.edge_sharpness.is_some(),
                l.vertex_sharpness.is_some()
            );
            let rows = l.num_vertices + l.num_edges;
            for d in [1usize, 3, 5] {
                let x: Vec<f64> = (0..l.num_vertices * d).map(|i| ((i * 37 % 101) as f64).sin()).collect();
                let mut stored = vec![0.0; rows * d];
                let mut through = vec![0.0; rows * d];
                let mut from_virtual = vec![0.0; rows * d];
                super::super::eval::eval_level(&l, None, &x, &mut stored, d, Par::Seq);
                super::super::eval::eval_level(&l, Some(&p), &x, &mut through, d, Par::Rayon);
                super::super::eval::eval_level(&virt, Some(&p), &x, &mut from_virtual, d, Par::Seq);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&stored), bits(&through), "{d} channels");
                assert_eq!(bits(&stored), bits(&from_virtual), "{d} channels");
            }
        }
    }
}
