//! Building blocks of closed-form halfedge levels (the halfedge paths of
//! Catmull-Clark, Loop and √3): the tags a child level gets from its
//! parent the same way whatever the face order, and the full mesh of a
//! level from its halfedges.
//!
//! A level of faces of one order `k` keeps, per halfedge `k f + i`, its
//! origin (`vert`: the faces, `k` by `k`), its twin ([`NONE`] on a
//! boundary) and its edge code (`2e`, or `2e + 1` where it is not the
//! edge's canonical halfedge); per edge its canonical halfedge. The halves
//! of parent edge `e` are child edges `2e` and `2e + 1`.

use subla_algebra::Par;
use subla_algebra::mem::{try_filled_vec, try_zeroed_vec};
use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::{Mesh, Options, Topology};

use crate::kernel::for_rows;
use crate::sdc::{child_edge_sharpness, dec, is_infinite};
use crate::{Result, SchemeError};

/// No halfedge: a boundary halfedge's twin, an isolated vertex's
/// outgoing halfedge.
pub const NONE: u32 = u32::MAX;

/// The sharpness of a child level of `child_edges` edges whose first
/// `2 es.len()` edges are the halves of the parent's edges (sharpness
/// `es`) and whose other edges are smooth: `halves(e, scratch)` gives the
/// two halves' sharpness for a parent edge `e` with sharpness, and whether
/// they count as sharp interior edges (a boundary edge's halves are
/// infinitely sharp without being stored). `None` where no interior child
/// edge is sharp.
///
/// # Errors
/// [`crate::SchemeError::Algebra`] where the array cannot be allocated.
pub fn child_halves_sharpness(
    es: &[f32],
    child_edges: usize,
    par: Par,
    halves: impl Fn(usize, &mut Vec<f32>) -> ([f32; 2], bool) + Sync,
) -> Result<Option<Vec<f32>>> {
    let ne = es.len();
    let mut s = try_zeroed_vec::<f32>(child_edges, "the edge sharpness of a level")?;
    let any = std::sync::atomic::AtomicBool::new(false);
    for_rows(&mut s[..2 * ne], ne, 2, par, |r, out| {
        let mut scratch = Vec::new();
        let mut found = false;
        for (o, e) in out.chunks_exact_mut(2).zip(r) {
            if es[e] <= 0.0 {
                continue;
            }
            let (h, counts) = halves(e, &mut scratch);
            o.copy_from_slice(&h);
            found |= counts && (h[0] > 0.0 || h[1] > 0.0);
        }
        if found {
            any.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    Ok(any.into_inner().then_some(s))
}

/// The vertex sharpness of a child level of `child_vertices` vertices whose
/// first ones are the parent's (sharpness `vs`, decremented); `None` where
/// none stays sharp.
///
/// # Errors
/// [`crate::SchemeError::Algebra`] where the array cannot be allocated.
pub fn child_vertex_sharpness(vs: Option<&[f32]>, child_vertices: usize) -> Result<Option<Vec<f32>>> {
    match vs {
        Some(vs) if vs.iter().any(|&s| dec(s) > 0.0) => {
            let mut s = try_zeroed_vec::<f32>(child_vertices, "the vertex sharpness of a level")?;
            for (o, &x) in s.iter_mut().zip(vs) {
                *o = dec(x);
            }
            Ok(Some(s))
        }
        _ => Ok(None),
    }
}

/// The hole flags of a child level whose faces are `per_face` children of
/// each parent face in turn; `None` for a parent without holes.
///
/// # Errors
/// [`crate::SchemeError::Algebra`] where the array cannot be allocated.
pub fn child_holes(holes: Option<&[bool]>, per_face: usize) -> Result<Option<Vec<bool>>> {
    let Some(h) = holes else { return Ok(None) };
    let mut ch = try_filled_vec(per_face * h.len(), false, "the hole flags of a level")?;
    for (o, &x) in ch.chunks_exact_mut(per_face).zip(h) {
        o.fill(x);
    }
    Ok(Some(ch))
}

/// The halfedges of a level of faces of order `order`, as
/// [`level_mesh`] reads them.
#[derive(Copy, Clone, Debug)]
pub struct Halfedges<'a> {
    /// Corners per face.
    pub order: usize,
    /// Number of vertices.
    pub num_vertices: usize,
    /// Origin of each halfedge.
    pub vert: &'a [u32],
    /// Twin of each halfedge ([`NONE`] on a boundary).
    pub twin: &'a [u32],
    /// Edge code of each halfedge.
    pub edge: &'a [u32],
    /// Canonical halfedge of each edge.
    pub edge_half: &'a [u32],
}

/// The full mesh of a level in halfedge form, its edges numbered as the
/// level numbers them (no sort, no search), with the effective sharpness
/// the schemes keep (boundary edges infinitely sharp), `vs` and `holes`
/// (all zero and none where `None`).
///
/// # Errors
/// As [`Topology::from_edges`] and [`Mesh::from_parts`].
pub fn level_mesh(
    l: Halfedges<'_>,
    es: Option<&[f32]>,
    vs: Option<&[f32]>,
    holes: Option<&[bool]>,
    options: Options,
    par: Par,
) -> Result<Mesh> {
    let k = l.order as u32;
    let next = |h: u32| if h % k == k - 1 { h + 1 - k } else { h + 1 };
    let nf = l.vert.len() / l.order;
    let edges: Vec<[u32; 2]> = l
        .edge_half
        .iter()
        .map(|&h| {
            let (a, b) = (l.vert[h as usize], l.vert[next(h) as usize]);
            [a.min(b), a.max(b)]
        })
        .collect();
    let corner_edge: Vec<u32> = l.edge.iter().map(|&x| x >> 1).collect();
    let ptr: Vec<u32> = (0..=nf as u32).map(|f| k * f).collect();
    let t = Topology::from_edges(l.num_vertices, ptr, l.vert.to_vec(), edges, corner_edge, par)?;
    let mut es = es.map_or_else(|| vec![0f32; l.edge_half.len()], <[f32]>::to_vec);
    for (e, &h) in l.edge_half.iter().enumerate() {
        if l.twin[h as usize] == NONE {
            es[e] = SHARPNESS_INFINITE;
        }
    }
    let vs = vs.map_or_else(|| vec![0f32; l.num_vertices], <[f32]>::to_vec);
    let holes = holes.map_or_else(|| vec![false; nf], <[bool]>::to_vec);
    Ok(Mesh::from_parts(t, es, vs, holes, options)?)
}

/// The connectivity of a level beyond its faces: what refining it and
/// evaluating its step read.
#[derive(Clone, Debug)]
pub struct Conn {
    /// Twin of each halfedge ([`NONE`] on a boundary).
    pub twin: Vec<u32>,
    /// Edge code of each halfedge: `2e`, or `2e + 1` where the halfedge is
    /// not the edge's canonical one.
    pub edge: Vec<u32>,
    /// Canonical halfedge of each edge.
    pub edge_half: Vec<u32>,
    /// An outgoing halfedge of each vertex: the one without a twin on a
    /// boundary; [`NONE`] for an isolated vertex.
    pub vhalf: Vec<u32>,
}

impl Conn {
    /// Bytes kept.
    pub fn bytes(&self) -> usize {
        4 * (self.twin.len() + self.edge.len() + self.edge_half.len() + self.vhalf.len())
    }

    /// The connectivity of a manifold topology whose faces all have
    /// `order` corners (halfedge `c` leaves corner `c`), its edges keeping
    /// the topology's ids.
    ///
    /// # Errors
    /// [`SchemeError::NotManifold`] (naming the element, as `scheme`'s)
    /// for an edge of more than two faces or two faces that use it the same
    /// way; [`SchemeError::LevelTooLarge`] where the edge codes overflow
    /// `u32`.
    pub fn of_topology(t: &Topology, scheme: &'static str, par: Par) -> Result<Conn> {
        let (nv, ne, nc) = (t.num_vertices(), t.num_edges(), t.num_corners());
        if u32::try_from(2 * ne + 1).is_err() {
            return Err(SchemeError::LevelTooLarge { scheme, level: 0, what: "edges", value: ne as u128 });
        }
        let vert = t.face_verts();
        const WHAT: &str = "the halfedges of a level";
        let mut twin = try_filled_vec(nc, NONE, WHAT)?;
        let mut edge = try_zeroed_vec::<u32>(nc, WHAT)?;
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
                _ => return Err(crate::not_manifold(scheme, t)),
            }
        }
        let mut vhalf = try_filled_vec(nv, NONE, WHAT)?;
        for_rows(&mut vhalf, nv, 1, par, |r, out| {
            for (o, v) in out.iter_mut().zip(r) {
                let cs = t.vertex_corners(v);
                *o = cs.iter().copied().find(|&h| twin[h as usize] == NONE).or(cs.first().copied()).unwrap_or(NONE);
            }
        });
        Ok(Conn { twin, edge, edge_half, vhalf })
    }

    /// The sharpness of the edge of halfedge `h` on a level whose interior
    /// edges have sharpness `es` (where any is sharp): boundary edges are
    /// infinitely sharp.
    #[inline]
    pub fn sigma(&self, es: Option<&[f32]>, h: u32) -> f32 {
        if self.twin[h as usize] == NONE {
            SHARPNESS_INFINITE
        } else {
            es.map_or(0.0, |s| s[(self.edge[h as usize] >> 1) as usize])
        }
    }

    /// The child sharpness of the edge of halfedge `h` at its end `v`
    /// (uniform decrement, or with `chaikin` Chaikin's rule over the
    /// sharpness of `v`'s edges, gathered in `scratch`), on a level of faces
    /// of `order` corners with origins `vert` and edge sharpness `es`.
    #[allow(clippy::too_many_arguments)]
    pub fn tau(
        &self,
        order: u32,
        vert: &[u32],
        es: Option<&[f32]>,
        chaikin: bool,
        h: u32,
        v: usize,
        scratch: &mut Vec<f32>,
    ) -> f32 {
        let s = self.sigma(es, h);
        if s <= 0.0 || is_infinite(s) || !chaikin {
            return child_edge_sharpness(s, &[], false);
        }
        scratch.clear();
        self.ring(order, vert, v, |g, _, _| scratch.push(self.sigma(es, g)));
        child_edge_sharpness(s, scratch, true)
    }

    /// The edges of vertex `v` of a level of faces of `order` corners with
    /// origins `vert`, in turning order (`h → twin(prev(h))`):
    /// `f(halfedge, neighbour, outgoing)` for each outgoing halfedge, then,
    /// on a boundary, for the incoming boundary halfedge. Returns the
    /// number of faces met.
    #[inline]
    pub fn ring(&self, order: u32, vert: &[u32], v: usize, mut f: impl FnMut(u32, u32, bool)) -> usize {
        let h0 = self.vhalf[v];
        if h0 == NONE {
            return 0;
        }
        let next = |h: u32| if h % order == order - 1 { h + 1 - order } else { h + 1 };
        let prev = |h: u32| if h % order == 0 { h + order - 1 } else { h - 1 };
        let (mut h, mut faces) = (h0, 0);
        loop {
            faces += 1;
            f(h, vert[next(h) as usize], true);
            let p = prev(h);
            let t = self.twin[p as usize];
            if t == NONE {
                f(p, vert[p as usize], false);
                return faces;
            }
            h = t;
            if h == h0 || faces > vert.len() {
                return faces;
            }
        }
    }
}

/// The levels of a halfedge plan of which one may be *virtual*: kept
/// without faces or connectivity, which the plan's last step and
/// evaluation read from its parent in closed form, and made whole (once,
/// into `wholes`) only where a caller asks for it.
#[derive(Debug)]
pub struct VirtualLevels<'a, L, C> {
    /// The plan's levels.
    pub levels: &'a [L],
    /// Per level, the whole form of a virtual level once made.
    pub wholes: &'a [std::sync::OnceLock<L>],
    /// The connectivity a level keeps, if it keeps it.
    pub conn: fn(&L) -> Option<&C>,
}

impl<'a, L, C: Clone> VirtualLevels<'a, L, C> {
    /// The connectivity of `level`: its own (or its whole form's), else
    /// `child(parent, parent's connectivity)`, recursively.
    ///
    /// # Errors
    /// As `child`.
    pub fn conn_of(&self, level: usize, child: &impl Fn(&L, &C) -> Result<C>) -> Result<std::borrow::Cow<'a, C>> {
        let own = (self.conn)(&self.levels[level]).or_else(|| self.wholes[level].get().and_then(|w| (self.conn)(w)));
        if let Some(c) = own {
            return Ok(std::borrow::Cow::Borrowed(c));
        }
        let parent = self.conn_of(level - 1, child)?;
        Ok(std::borrow::Cow::Owned(child(&self.levels[level - 1], &parent)?))
    }

    /// Where `level` is the finest level of a modeling step kept without
    /// faces (its parent keeps no connectivity, its grandparent does):
    /// that grandparent, from which its faces are made.
    pub fn lazy_finest_grandparent(&self, level: usize) -> Option<&'a L> {
        let levels = self.levels;
        if level + 1 != levels.len() || level < 2 || (self.conn)(&levels[level - 1]).is_some() {
            return None;
        }
        Some(&levels[level - 2]).filter(|g| (self.conn)(g).is_some())
    }

    /// `level` with its faces: itself where `is_virtual` says it keeps
    /// them, else its whole form, made once by `whole(level, parent)`.
    ///
    /// # Errors
    /// As `whole`.
    pub fn level(
        &self,
        level: usize,
        is_virtual: impl Fn(&L) -> bool,
        whole: impl FnOnce(&L, &L) -> Result<L>,
    ) -> Result<&'a L> {
        let l = &self.levels[level];
        if !is_virtual(l) {
            return Ok(l);
        }
        let cell = &self.wholes[level];
        if let Some(w) = cell.get() {
            return Ok(w);
        }
        let w = whole(l, &self.levels[level - 1])?;
        Ok(cell.get_or_init(|| w))
    }
}
