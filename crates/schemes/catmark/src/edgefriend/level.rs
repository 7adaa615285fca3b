//! One level of the edge-friend encoding (Kuth et al. 2023, §3.1–3.3), its
//! creation from a control mesh after one Catmull-Clark step, and the
//! refinement of its connectivity to the next level (§3.2, the quad and
//! vertex tasks without the positions).
//!
//! # The encoding
//! Quad `q` is `quads[4q .. 4q + 4] = (v0, v1, v2, v3)`. Its *on-edges* are
//! `v0 v1` (edge id `2q`) and `v2 v3` (edge id `2q + 1`); its *off-edges*
//! `v1 v2` and `v3 v0` are on-edges of its neighbours, whose ids are its
//! *edge-friends* `friends[q] = [g0, g1]`. Every edge is the on-edge of
//! exactly one quad and the off-edge of exactly one other: the
//! on-off-edge rule, which the creation establishes and every refinement
//! keeps. Corner `c` is `quads[c]`; `c >> 2` is its quad, `c ^ 2` the corner
//! across the quad, `c ^ 3` the corner along its off-edge, `c >> 1` the id
//! of its on-edge. `loop_start[v]` is one corner of vertex `v`, from which
//! the vertex task walks around `v` through the friends.
//!
//! # Boundaries: ghost quads
//! A boundary loop of `k` edges of the control mesh is `2k` edges after the
//! creation step; `k` ghost quads close it in a fan around one ghost
//! vertex, and its edges are infinitely sharp (§3.5). Ghost quads come
//! after the real ones at every level (the children of quad `q` are
//! `4q .. 4q + 4`), so the real quads of a level are a prefix. Ghost
//! vertices and the points refined from them are left out of everything a
//! plan hands out (`real`).

use rayon::prelude::*;
use subla_algebra::Par;
use subla_algebra::mem::{try_filled_vec, try_zeroed_vec};
use subla_algebra::par::even_ranges;
use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::{CreaseMethod, Mesh};
use subla_scheme::sdc::{child_edge_sharpness, dec, tau_at};
use subla_scheme::{Result, SchemeError};

/// No real vertex (a ghost's) in the map of [`Real::Map`].
pub(crate) const GHOST: u32 = u32::MAX;

/// Which vertices of a level are real (not refined from ghost quads) and
/// their numbering among the real ones.
#[derive(Clone, Debug)]
pub(crate) enum Real {
    /// Vertices `0 .. n` are real, the rest are ghosts; real vertex `i` is
    /// internal vertex `i`.
    Prefix(usize),
    /// Internal vertex `i` is real vertex `map[i]`, or [`GHOST`].
    Map { map: Vec<u32>, count: usize },
}

impl Real {
    /// Number of real vertices.
    pub(crate) fn count(&self) -> usize {
        match self {
            Real::Prefix(n) => *n,
            Real::Map { count, .. } => *count,
        }
    }
    /// The internal vertex of each real vertex, where the numbering is a
    /// map (`None` for a prefix: the identity).
    ///
    /// # Errors
    /// Allocation failures.
    pub(crate) fn internal_rows(&self) -> Result<Option<Vec<u32>>> {
        let Real::Map { map, count } = self else { return Ok(None) };
        let mut of = try_filled_vec(*count, 0u32, "the real rows of a level")?;
        for (i, &m) in map.iter().enumerate() {
            if m != GHOST {
                of[m as usize] = i as u32;
            }
        }
        Ok(Some(of))
    }
    /// The real id of internal vertex `i`, if real.
    #[inline]
    pub(crate) fn of(&self, i: u32) -> Option<u32> {
        match self {
            Real::Prefix(n) => ((i as usize) < *n).then_some(i),
            Real::Map { map, .. } => {
                let r = map[i as usize];
                (r != GHOST).then_some(r)
            }
        }
    }
}

/// One level in edge-friend form.
#[derive(Clone, Debug)]
pub(crate) struct EfLevel {
    /// Vertex count (ghosts included).
    pub num_vertices: usize,
    /// Four vertices per quad, ghosts after the real quads.
    pub quads: Vec<u32>,
    /// The edge-friends of each quad's off-edges `v1 v2` and `v3 v0`.
    pub friends: Vec<[u32; 2]>,
    /// A corner of each vertex.
    pub loop_start: Vec<u32>,
    /// Sharpness by edge id (`2q + k`), where the level has a sharp edge
    /// besides its boundary. Where it has none, boundary edges (between a
    /// real and a ghost quad) are infinitely sharp without being stored
    /// ([`EfLevel::implicit_boundary`]); the first level stores them all
    /// (the GPU path reads its array).
    pub edge_sharpness: Option<Vec<f32>>,
    /// Whether an edge that is not on the boundary was sharp in the
    /// control mesh (then every level stores its sharpness).
    pub interior_sharp: bool,
    /// Sharpness by vertex, where some vertex is sharp.
    pub vertex_sharpness: Option<Vec<f32>>,
    /// Which real quads are holes (refined, but not part of the surface),
    /// where any is.
    pub holes: Option<Vec<bool>>,
    /// Quads `0 .. real_quads` are real.
    pub real_quads: usize,
    /// The real vertices.
    pub real: Real,
    /// Chaikin's sharpness rule (else uniform decrement).
    pub chaikin: bool,
}

impl EfLevel {
    /// Number of quads (ghosts included).
    #[inline]
    pub(crate) fn num_quads(&self) -> usize {
        self.quads.len() / 4
    }
    /// Whether the level keeps only its quads, sharpness and holes (a
    /// finest level; see [`Keep::Lean`]).
    #[inline]
    pub(crate) fn is_lean(&self) -> bool {
        self.friends.is_empty() && !self.quads.is_empty()
    }
    /// Whether the level has ghost quads.
    pub(crate) fn has_ghosts(&self) -> bool {
        self.real_quads < self.num_quads()
    }
    /// Whether some vertex of the level is a ghost.
    pub(crate) fn has_ghost_vertices(&self) -> bool {
        self.real.count() < self.num_vertices
    }
    /// The real quads' vertices, in the real numbering.
    pub(crate) fn real_face_verts(&self) -> Vec<u32> {
        self.quads[..4 * self.real_quads].iter().map(|&v| self.real.of(v).unwrap_or(GHOST)).collect()
    }
    /// The face offsets of the real quads (four corners each).
    pub(crate) fn real_face_ptr(&self) -> Vec<u32> {
        (0..=self.real_quads as u32).map(|q| 4 * q).collect()
    }
    /// The hole flags of the real quads.
    pub(crate) fn real_holes(&self) -> Vec<bool> {
        self.holes.as_ref().map_or_else(|| vec![false; self.real_quads], |h| h[..self.real_quads].to_vec())
    }
    /// Whether the level needs the crease rules (any sharp edge or vertex).
    pub(crate) fn is_sharp(&self) -> bool {
        self.edge_sharpness.is_some() || self.vertex_sharpness.is_some() || self.has_ghosts()
    }
    /// The id of the edge leaving corner `c` towards the next corner of
    /// its quad.
    #[inline]
    pub(crate) fn leaving_edge(&self, c: usize) -> u32 {
        leaving_edge(&self.friends, c)
    }
    /// Calls `f(c)` for each corner of the vertex of corner `start`, walking
    /// across off-edges (Alg. 1, lines 5–12); the vertex's valence is the
    /// number of calls.
    #[inline]
    pub(crate) fn ring(&self, start: u32, f: impl FnMut(usize)) {
        ring(&self.friends, start, f);
    }
    /// The layout of the next level (§3.3, generalised to any vertex and
    /// quad counts).
    #[inline]
    pub(crate) fn layout(&self) -> Layout {
        Layout::new(self.num_vertices, self.num_quads())
    }
    /// Whether boundary edges are infinitely sharp without being stored:
    /// ghost quads and no sharpness array.
    #[inline]
    pub(crate) fn implicit_boundary(&self) -> bool {
        self.edge_sharpness.is_none() && self.has_ghosts()
    }
    /// Whether quad `q` is a ghost.
    #[inline]
    pub(crate) fn is_ghost(&self, q: usize) -> bool {
        q >= self.real_quads
    }
    /// Sharpness of edge `e`, shared by quads `a` and `b`: the stored one,
    /// or with an implicit boundary infinite between a real and a ghost
    /// quad.
    #[inline]
    pub(crate) fn sharpness_between(&self, e: u32, a: usize, b: usize) -> f32 {
        match &self.edge_sharpness {
            Some(s) => s[e as usize],
            None if self.is_ghost(a) != self.is_ghost(b) => SHARPNESS_INFINITE,
            None => 0.0,
        }
    }
}

/// The id of the edge leaving corner `c` towards the next corner of its
/// quad, on a level whose friends are `friends`.
#[inline]
pub(crate) fn leaving_edge(friends: &[[u32; 2]], c: usize) -> u32 {
    let q = c >> 2;
    match c & 3 {
        0 => 2 * q as u32,
        1 => friends[q][0],
        2 => 2 * q as u32 + 1,
        _ => friends[q][1],
    }
}

/// [`EfLevel::ring`] on a level whose friends are `friends`.
#[inline]
pub(crate) fn ring(friends: &[[u32; 2]], start: u32, mut f: impl FnMut(usize)) {
    let mut c = start as usize;
    loop {
        f(c);
        let g = friends[c >> 2];
        let gi = if matches!(c & 3, 1 | 2) { g[0] } else { g[1] };
        c = 2 * gi as usize + (c & 1);
        if c == start as usize {
            break;
        }
    }
}

/// Where the points of the next level go: chunks of four rows
/// `[vertex point of i, face point of i, edge points of 2i and 2i + 1]`
/// for `i < min(V, F)`, then the vertex points of the vertices past `F`
/// (closed meshes of genus 0 have `V = F + 2`), or chunks of three for the
/// quads past `V` (higher genus).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Layout {
    v: u32,
    f: u32,
    m: u32,
}

impl Layout {
    pub(crate) fn new(v: usize, f: usize) -> Self {
        Layout { v: v as u32, f: f as u32, m: v.min(f) as u32 }
    }
    /// Vertex point of vertex `v`.
    #[inline]
    pub(crate) fn vertex(self, v: u32) -> u32 {
        if v < self.m { 4 * v } else { 4 * self.f + (v - self.f) }
    }
    /// Face point of quad `q`.
    #[inline]
    pub(crate) fn face(self, q: u32) -> u32 {
        if q < self.m { 4 * q + 1 } else { 4 * self.v + 3 * (q - self.v) }
    }
    /// Edge point of edge `e`.
    #[inline]
    pub(crate) fn edge(self, e: u32) -> u32 {
        let q = e >> 1;
        if q < self.m { 4 * q + 2 + (e & 1) } else { 4 * self.v + 3 * (q - self.v) + 1 + (e & 1) }
    }
    /// Rows of the next level.
    pub(crate) fn len(self) -> usize {
        self.v as usize + 3 * self.f as usize
    }
}

/// A raw pointer for writes that tasks make to disjoint elements of one
/// buffer (the scattered writes of the quad task).
#[derive(Copy, Clone)]
pub(crate) struct Scatter<T>(pub(crate) *mut T);
// SAFETY: used only for writes to elements that exactly one task writes.
unsafe impl<T: Send> Send for Scatter<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Scatter<T> {}

impl<T> Scatter<T> {
    /// Writes `x` at `i`.
    ///
    /// # Safety
    /// `i` is in bounds and no other task reads or writes element `i`
    /// while the buffer is shared.
    #[inline]
    pub(crate) unsafe fn put(self, i: usize, x: T) {
        // SAFETY: the caller's.
        unsafe { self.0.add(i).write(x) }
    }
}

/// Blocks of at least this many quads or vertices per task.
pub(crate) const MIN_BLOCK: usize = 1 << 12;

/// Runs `f` over blocks of `0..n` (in parallel under `Par::Rayon`).
pub(crate) fn for_blocks(n: usize, par: Par, f: impl Fn(std::ops::Range<usize>) + Sync + Send) {
    let ranges = even_ranges(n, par.blocks(n, MIN_BLOCK));
    if ranges.len() > 1 {
        ranges.into_par_iter().for_each(&f);
    } else {
        ranges.into_iter().for_each(f);
    }
}

fn too_large(what: &'static str, n: usize) -> SchemeError {
    SchemeError::TooLarge { what, value: n as u128 }
}

/// The first edge-friend level: one Catmull-Clark step of the prepared
/// polygon mesh `mesh` (manifold), its points numbered in the order the
/// control faces first touch them, then one ghost vertex per boundary
/// loop; and, for each real point, its row in the numbering of
/// [`crate::refine`] (vertex points, face points, edge points), which the
/// specialised kernels of the first step write. The quad of corner `c` is
/// `(v, edge point of c's edge, face point, edge point of the previous
/// corner's edge)`: its first edge is half of a control edge, so that every
/// edge is on in one quad and off in the other.
///
/// # Errors
/// [`SchemeError::NotManifold`] where an edge does not have its two uses
/// in opposite directions; sizes over `u32`.
pub(crate) fn first_level(mesh: &Mesh) -> Result<(EfLevel, Vec<u32>)> {
    let t = mesh.topology();
    let (nv, nf, ne, nc) = (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners());
    let fv = t.face_verts();
    let fptr = t.face_ptr();
    let cf = t.corner_faces();
    let ce = t.corner_edges();
    let n1 = nv + nf + ne;
    // Number the points in the order the control faces first touch them
    // (each face's point, then its corners' vertex and edge points not yet
    // numbered), so that the points of quad c lie near row c: the chunks
    // of the next levels (vertex i with quad i) then stay close in memory.
    // `new_of` is indexed in the kernels' numbering of `crate::refine`.
    let mut new_of = try_filled_vec(n1, u32::MAX, "the numbering of the first level")?;
    let mut next_id = 0u32;
    for f in 0..nf {
        let corners = fptr[f] as usize..fptr[f + 1] as usize;
        let points = std::iter::once(nv + f).chain(corners.flat_map(|c| [fv[c] as usize, nv + nf + ce[c] as usize]));
        for old in points {
            if new_of[old] == u32::MAX {
                new_of[old] = next_id;
                next_id += 1;
            }
        }
    }
    if next_id as usize != n1 {
        return Err(SchemeError::Internal {
            what: "catmark-edge-friend",
            detail: "a point of the first level is in no face".into(),
        });
    }
    let vp = |v: u32| new_of[v as usize];
    let fp = |f: u32| new_of[nv + f as usize];
    let ep = |e: u32| new_of[nv + nf + e as usize];
    // Boundary half-edges, their ranks (ghost quads), and the outgoing one
    // of each boundary vertex.
    let mut ghost_of = Vec::new();
    let mut boundary = Vec::new();
    let mut out_of: Vec<u32> = Vec::new();
    let has_boundary = (0..ne).any(|e| t.is_boundary_edge(e));
    if has_boundary {
        ghost_of = try_filled_vec(nc, u32::MAX, "the ghost quad of each boundary corner")?;
        out_of = try_filled_vec(nv, u32::MAX, "the boundary corner of each vertex")?;
        for c in 0..nc {
            if t.is_boundary_edge(ce[c] as usize) {
                ghost_of[c] = boundary.len() as u32;
                boundary.push(c as u32);
                out_of[fv[c] as usize] = c as u32;
            }
        }
    }
    let nb = boundary.len();
    let num_quads = nc + nb;
    if u32::try_from(4 * num_quads).is_err() || u32::try_from(n1 + nb).is_err() {
        return Err(too_large("the corners of the first edge-friend level", 4 * num_quads));
    }
    // The boundary loops: each ghost quad's loop.
    let mut loop_of = vec![u32::MAX; nb];
    let mut loops = 0u32;
    let mut loop_first = Vec::new();
    for r in 0..nb {
        if loop_of[r] != u32::MAX {
            continue;
        }
        loop_first.push(r as u32);
        let mut k = r;
        loop {
            loop_of[k] = loops;
            let b = fv[t.next_corner(boundary[k] as usize)] as usize;
            let next = out_of[b];
            if next == u32::MAX {
                return Err(subla_scheme::not_manifold("catmark-edge-friend", t));
            }
            k = ghost_of[next as usize] as usize;
            if loop_of[k] != u32::MAX {
                break;
            }
        }
        loops += 1;
    }
    let num_vertices = n1 + loops as usize;
    let mut quads = try_zeroed_vec::<u32>(4 * num_quads, "the quads of an edge-friend level")?;
    let mut friends = try_zeroed_vec::<[u32; 2]>(num_quads, "the edge-friends of a level")?;
    let mut bad = false;
    for c in 0..nc {
        let cp = t.prev_corner(c);
        let cn = t.next_corner(c);
        quads[4 * c..4 * c + 4].copy_from_slice(&[vp(fv[c]), ep(ce[c]), fp(cf[c]), ep(ce[cp])]);
        let e = ce[cp] as usize;
        let g1 = if t.is_boundary_edge(e) {
            2 * (nc as u32 + ghost_of[cp])
        } else {
            let cs = t.edge_corners(e);
            let other = if cs[0] as usize == cp { cs[1] } else { cs[0] };
            bad |= cs.len() != 2 || fv[other as usize] != fv[c];
            2 * other
        };
        friends[c] = [2 * cn as u32 + 1, g1];
    }
    if bad {
        return Err(subla_scheme::not_manifold("catmark-edge-friend", t));
    }
    for (r, &ca) in boundary.iter().enumerate() {
        let ca = ca as usize;
        let a = fv[ca];
        let b = fv[t.next_corner(ca)];
        let z = (n1 as u32) + loop_of[r];
        let g = nc + r;
        quads[4 * g..4 * g + 4].copy_from_slice(&[vp(b), ep(ce[ca]), vp(a), z]);
        friends[g] = [2 * ca as u32, 2 * (nc as u32 + ghost_of[out_of[b as usize] as usize]) + 1];
    }
    // Sharpness.
    let es = mesh.edge_sharpness();
    let vs = mesh.vertex_sharpness();
    let chaikin = mesh.options().crease_method == CreaseMethod::Chaikin;
    let edge_sharpness = if es.iter().any(|&s| s > 0.0) {
        let mut s = try_zeroed_vec::<f32>(2 * num_quads, "the edge sharpness of a level")?;
        for c in 0..nc {
            let e = ce[c] as usize;
            if es[e] > 0.0 {
                s[2 * c] = tau_at(t, es, chaikin, e, fv[c] as usize);
            }
        }
        for g in nc..num_quads {
            s[2 * g] = SHARPNESS_INFINITE;
        }
        Some(s)
    } else {
        None
    };
    let vertex_sharpness = if vs.iter().any(|&s| s > 0.0) {
        let mut s = try_zeroed_vec::<f32>(num_vertices, "the vertex sharpness of a level")?;
        for (v, &x) in vs.iter().enumerate() {
            s[vp(v as u32) as usize] = dec(x);
        }
        s.iter().any(|&x| x > 0.0).then_some(s)
    } else {
        None
    };
    let mut loop_start = try_zeroed_vec::<u32>(num_vertices, "the loop starts of a level")?;
    for v in 0..nv {
        // Isolated vertices do not reach here: the caller refuses them.
        loop_start[vp(v as u32) as usize] = 4 * t.vertex_corners(v).first().copied().unwrap_or(0);
    }
    for f in 0..nf {
        loop_start[fp(f as u32) as usize] = 4 * fptr[f] + 2;
    }
    for e in 0..ne {
        loop_start[ep(e as u32) as usize] = 4 * t.edge_corners(e)[0] + 1;
    }
    for (l, &r) in loop_first.iter().enumerate() {
        loop_start[n1 + l] = 4 * (nc as u32 + r) + 3;
    }
    let holes = if mesh.has_holes() {
        let h = mesh.holes();
        Some((0..nc).map(|c| h[cf[c] as usize]).collect())
    } else {
        None
    };
    let mut slak_of = try_zeroed_vec::<u32>(n1, "the numbering of the first level")?;
    for (old, &new) in new_of.iter().enumerate() {
        slak_of[new as usize] = old as u32;
    }
    Ok((
        EfLevel {
            num_vertices,
            quads,
            friends,
            loop_start,
            edge_sharpness,
            vertex_sharpness,
            holes,
            real_quads: nc,
            real: Real::Prefix(n1),
            chaikin,
            interior_sharp: (0..ne).any(|e| es[e] > 0.0 && !t.is_boundary_edge(e)),
        },
        slak_of,
    ))
}

/// What [`refine`] keeps of the level it makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Everything: the level can be refined and evaluated from.
    Full,
    /// The quads, sharpness and hole flags, without the friends and loop
    /// starts ([`EfLevel::is_lean`]): enough for the faces and for
    /// evaluating into the level; [`links`] makes the rest from the parent.
    Lean,
}

/// The connectivity of the level after `p` (§3.2): four quads per quad,
/// their friends and loop starts (unless `keep` is [`Keep::Lean`]), and the
/// children's sharpness.
///
/// # Errors
/// Sizes over `u32` ([`SchemeError::TooLarge`]), allocation failures.
pub(crate) fn refine(p: &EfLevel, keep: Keep, par: Par) -> Result<EfLevel> {
    debug_assert!(!p.is_lean(), "a lean level is completed before it is refined");
    let nq = p.num_quads();
    let lay = p.layout();
    let num_vertices = lay.len();
    let num_quads = 4 * nq;
    if u32::try_from(4 * num_quads).is_err() || u32::try_from(num_vertices).is_err() {
        return Err(too_large("the corners of an edge-friend level", 4 * num_quads));
    }
    let mut quads = try_zeroed_vec::<u32>(4 * num_quads, "the quads of an edge-friend level")?;
    let (mut friends, mut loop_start) = match keep {
        Keep::Full => link_buffers(num_quads, num_vertices)?,
        Keep::Lean => (Vec::new(), Vec::new()),
    };
    // Sharpness only on the boundary: implicit from here on.
    let mut edge_sharpness = match p.edge_sharpness {
        Some(_) if p.interior_sharp || !p.has_ghosts() => {
            Some(try_zeroed_vec::<f32>(2 * num_quads, "the edge sharpness of a level")?)
        }
        _ => None,
    };
    let links = (keep == Keep::Full).then_some((&mut friends[..], &mut loop_start[..]));
    pass(p, Some(&mut quads), links, edge_sharpness.as_deref_mut(), par);
    let vertex_sharpness = match &p.vertex_sharpness {
        Some(vs) => {
            let mut s = try_zeroed_vec::<f32>(num_vertices, "the vertex sharpness of a level")?;
            let mut any = false;
            for (v, &x) in vs.iter().enumerate() {
                let d = dec(x);
                any |= d > 0.0;
                s[lay.vertex(v as u32) as usize] = d;
            }
            any.then_some(s)
        }
        None => None,
    };
    let edge_sharpness = edge_sharpness.filter(|s| p.has_ghosts() || s.iter().any(|&x| x > 0.0));
    let real_quads = 4 * p.real_quads;
    let real = if p.has_ghosts() { child_real(p, lay, num_vertices, par)? } else { Real::Prefix(num_vertices) };
    let holes = p.holes.as_ref().map(|h| h.iter().flat_map(|&x| [x; 4]).collect());
    Ok(EfLevel {
        num_vertices,
        quads,
        friends,
        loop_start,
        edge_sharpness,
        vertex_sharpness,
        holes,
        real_quads,
        real,
        chaikin: p.chaikin,
        interior_sharp: p.interior_sharp,
    })
}

fn link_buffers(num_quads: usize, num_vertices: usize) -> Result<(Vec<[u32; 2]>, Vec<u32>)> {
    Ok((
        try_zeroed_vec::<[u32; 2]>(num_quads, "the edge-friends of a level")?,
        try_zeroed_vec::<u32>(num_vertices, "the loop starts of a level")?,
    ))
}

/// The friends and loop starts of `l`, a lean level refined from `p`
/// (what [`Keep::Lean`] leaves out).
///
/// # Errors
/// Allocation failures.
pub(crate) fn links(p: &EfLevel, l: &EfLevel, par: Par) -> Result<(Vec<[u32; 2]>, Vec<u32>)> {
    debug_assert!(!p.is_lean(), "the parent of a level keeps its links");
    let (mut friends, mut loop_start) = link_buffers(l.num_quads(), l.num_vertices)?;
    pass(p, None, Some((&mut friends, &mut loop_start)), None, par);
    Ok((friends, loop_start))
}

/// Gives the lean level `l` (refined from `p`) its friends and loop starts.
///
/// # Errors
/// Allocation failures.
pub(crate) fn complete(p: &EfLevel, l: &mut EfLevel, par: Par) -> Result<()> {
    if l.is_lean() {
        (l.friends, l.loop_start) = links(p, l, par)?;
    }
    Ok(())
}

/// The quad and vertex tasks of §3.2 without the points: writes the
/// children of `p`'s quads into `quads`, their friends and loop starts into
/// `links`, and their sharpness into `sharpness`, each where given (sized
/// for the next level).
fn pass(
    p: &EfLevel,
    quads: Option<&mut [u32]>,
    links: Option<(&mut [[u32; 2]], &mut [u32])>,
    sharpness: Option<&mut [f32]>,
    par: Par,
) {
    let nq = p.num_quads();
    let nv = p.num_vertices;
    let lay = p.layout();
    let qo = quads.map(|q| Scatter(q.as_mut_ptr()));
    let (go, lo) = match links {
        Some((g, l)) => (Some(Scatter(g.as_mut_ptr().cast::<u32>())), Some(Scatter(l.as_mut_ptr()))),
        None => (None, None),
    };
    let so = sharpness.map(|s| Scatter(s.as_mut_ptr()));
    let uniform_sharpness = !p.chaikin;
    let pq = &p.quads;
    let pg = &p.friends;
    for_blocks(nq, par, |r| {
        for q in r {
            let v = &pq[4 * q..4 * q + 4];
            let [g0, g1] = pg[q];
            let q32 = q as u32;
            let w = [lay.vertex(v[0]), lay.vertex(v[1]), lay.vertex(v[2]), lay.vertex(v[3])];
            let f = lay.face(q32);
            let (e0, e1) = (lay.edge(g0), lay.edge(g1));
            let (a, b) = (lay.edge(2 * q32), lay.edge(2 * q32 + 1));
            let c = 4 * q32;
            // SAFETY: every element written here is written by this task
            // alone. Quads 4q..4q+4, their first friends, the second
            // friends of 4q and 4q+2, and the loop start of the face point
            // of q belong to quad q. The second friends of children 2g0+1
            // and 2g1+1, and the loop starts of the edge points of g0 and
            // g1, belong to the edges g0 and g1, which are off-edges of q
            // and of no other quad (the on-off-edge rule: every edge id
            // appears once among all friends).
            unsafe {
                if let Some(qo) = qo {
                    let children = [[w[0], a, f, e1], [w[1], e0, f, a], [w[2], b, f, e0], [w[3], e1, f, b]];
                    for (i, ch) in children.iter().enumerate() {
                        for (j, &x) in ch.iter().enumerate() {
                            qo.put(16 * q + 4 * i + j, x);
                        }
                    }
                }
                if let (Some(go), Some(lo)) = (go, lo) {
                    let gput = |child: u32, k: usize, x: u32| go.put(2 * child as usize + k, x);
                    gput(c, 0, 2 * (c + 1) + 1);
                    gput(c, 1, 2 * (2 * g1));
                    gput(c + 1, 0, 2 * (c + 2) + 1);
                    gput(c + 2, 0, 2 * (c + 3) + 1);
                    gput(c + 2, 1, 2 * (2 * g0));
                    gput(c + 3, 0, 2 * c + 1);
                    gput(2 * g0 + 1, 1, 2 * (c + 1));
                    gput(2 * g1 + 1, 1, 2 * (c + 3));
                    lo.put(f as usize, 4 * c + 2);
                    lo.put(e0 as usize, 4 * (c + 1) + 1);
                    lo.put(e1 as usize, 4 * (c + 3) + 1);
                }
                if let (Some(so), Some(ps)) = (so, p.edge_sharpness.as_deref()) {
                    // The first edge of child i is half of edge i of q
                    // (Chaikin's halves are written by the vertex pass);
                    // the second is inside q: smooth (zeroed).
                    if uniform_sharpness {
                        for (i, e) in [2 * q32, g0, 2 * q32 + 1, g1].into_iter().enumerate() {
                            so.put(2 * (4 * q + i), dec(ps[e as usize]));
                        }
                    }
                }
            }
        }
    });
    let chaikin_pass = so.is_some() && p.chaikin;
    if lo.is_none() && !chaikin_pass {
        return;
    }
    for_blocks(nv, par, |r| {
        let mut sigma = Vec::new();
        let mut corners = Vec::new();
        for v in r {
            let start = p.loop_start[v];
            // SAFETY: the vertex point's loop start belongs to vertex v;
            // the children's first edges at v (child quad c for each
            // corner c of v) belong to v's corners.
            unsafe {
                if let Some(lo) = lo {
                    lo.put(lay.vertex(v as u32) as usize, 4 * start);
                }
                if chaikin_pass {
                    let (Some(so), Some(ps)) = (so, p.edge_sharpness.as_deref()) else { unreachable!() };
                    sigma.clear();
                    corners.clear();
                    p.ring(start, |c| {
                        corners.push(c);
                        sigma.push(ps[p.leaving_edge(c) as usize]);
                    });
                    for (&c, &s) in corners.iter().zip(&sigma) {
                        so.put(2 * c, child_edge_sharpness(s, &sigma, true));
                    }
                }
            }
        }
    });
}

/// The real vertices of the level after `p` (laid out by `lay`, `n` of
/// them): those of its real quads, the children of `p`'s real quads,
/// numbered in order. A vertex point is real where its vertex is, a face
/// point where its quad is, an edge point where one of the edge's two quads
/// is (the quad task of the quad having the edge as an off-edge marks it:
/// one task per edge); then a scan numbers them, block by block.
fn child_real(p: &EfLevel, lay: Layout, n: usize, par: Par) -> Result<Real> {
    let mut flag = try_zeroed_vec::<u32>(n, "the real vertices of a level")?;
    {
        let fo = Scatter(flag.as_mut_ptr());
        let rq = p.real_quads;
        // Every child vertex is the point of exactly one parent vertex,
        // quad or edge (each edge the off-edge of one quad), so each
        // element below is written by one task, in bounds (`Layout`).
        for_blocks(p.num_vertices, par, |r| {
            for v in r {
                let real = p.real.of(v as u32).is_some();
                // SAFETY: the vertex point of `v` is this task's (above).
                unsafe { fo.put(lay.vertex(v as u32) as usize, u32::from(real)) };
            }
        });
        for_blocks(p.num_quads(), par, |r| {
            for q in r {
                let real = q < rq;
                // SAFETY: the face point of `q` is this task's (above).
                unsafe { fo.put(lay.face(q as u32) as usize, u32::from(real)) };
                for g in p.friends[q] {
                    let edge_real = real || (g as usize >> 1) < rq;
                    // SAFETY: the off-edges of `q` are this task's (above).
                    unsafe { fo.put(lay.edge(g) as usize, u32::from(edge_real)) };
                }
            }
        });
    }
    // Exclusive scan of the flags into the real numbering.
    let ranges = even_ranges(n, par.blocks(n, MIN_BLOCK));
    let parallel = ranges.len() > 1;
    let count = |r: &std::ops::Range<usize>| -> u32 { flag[r.clone()].iter().sum() };
    let counts: Vec<u32> =
        if parallel { ranges.par_iter().map(count).collect() } else { ranges.iter().map(count).collect() };
    let mut starts = Vec::with_capacity(counts.len());
    let mut total = 0u32;
    for &c in &counts {
        starts.push(total);
        total += c;
    }
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = &mut flag[..];
    for r in &ranges {
        let (head, tail) = rest.split_at_mut(r.len());
        pieces.push(head);
        rest = tail;
    }
    let number = |(piece, mut next): (&mut [u32], u32)| {
        for m in piece.iter_mut() {
            if *m == 1 {
                *m = next;
                next += 1;
            } else {
                *m = GHOST;
            }
        }
    };
    if parallel {
        pieces.into_par_iter().zip(starts).for_each(number);
    } else {
        pieces.into_iter().zip(starts).for_each(number);
    }
    Ok(Real::Map { map: flag, count: total as usize })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the on-off-edge rule and the loop starts of `l`: every edge
    /// id is the friend of exactly one quad, the friend's on-edge joins the
    /// same two vertices the other way round, and every ring closes.
    pub(crate) fn check(l: &EfLevel) {
        let nq = l.num_quads();
        let mut seen = vec![0u8; 2 * nq];
        for q in 0..nq {
            let v = &l.quads[4 * q..4 * q + 4];
            for (k, (a, b)) in [(v[1], v[2]), (v[3], v[0])].into_iter().enumerate() {
                let g = l.friends[q][k] as usize;
                seen[g] += 1;
                let (x, y) = (l.quads[2 * g], l.quads[2 * g + 1]);
                assert_eq!((x, y), (b, a), "quad {q} off-edge {k}: friend {g}");
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "every edge is off in one quad");
        for v in 0..l.num_vertices {
            let mut n = 0;
            l.ring(l.loop_start[v], |c| {
                assert_eq!(l.quads[c] as usize, v, "ring of {v}");
                n += 1;
                assert!(n < 1000);
            });
        }
    }

    fn cube() -> Mesh {
        Mesh::from_faces(8, &[[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]])
            .unwrap()
    }

    #[test]
    fn closed_levels_keep_the_rule() {
        let m = crate::level::prepare(&cube()).unwrap();
        let (l1, _) = first_level(&m).unwrap();
        check(&l1);
        assert_eq!((l1.num_vertices, l1.num_quads()), (26, 24));
        let l2 = refine(&l1, Keep::Full, Par::Seq).unwrap();
        check(&l2);
        let l3 = refine(&l2, Keep::Full, Par::Rayon).unwrap();
        check(&l3);
        assert_eq!((l3.num_vertices, l3.num_quads()), (386, 384));
    }

    #[test]
    fn lean_levels_complete_to_the_full_ones() {
        let grid = Mesh::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]).unwrap();
        const CUBE: [[u32; 4]; 6] =
            [[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]];
        let creased = |crease_method| {
            subla_mesh::MeshBuilder::from_faces(8, &CUBE)
                .crease(0, 1, 2.5)
                .crease(1, 3, 0.5)
                .options(subla_mesh::Options { crease_method, ..Default::default() })
                .build(Par::Seq)
                .unwrap()
        };
        let (uniform, chaikin) = (creased(CreaseMethod::Uniform), creased(CreaseMethod::Chaikin));
        for m in [grid, uniform, chaikin] {
            let m = crate::level::prepare(&m).unwrap();
            let (l1, _) = first_level(&m).unwrap();
            let full = refine(&l1, Keep::Full, Par::Seq).unwrap();
            let mut lean = refine(&l1, Keep::Lean, Par::Rayon).unwrap();
            assert!(lean.is_lean() && !full.is_lean());
            assert_eq!((&lean.quads, &lean.edge_sharpness), (&full.quads, &full.edge_sharpness));
            complete(&l1, &mut lean, Par::Rayon).unwrap();
            assert!(!lean.is_lean());
            assert_eq!((&lean.friends, &lean.loop_start), (&full.friends, &full.loop_start));
            check(&lean);
        }
    }

    #[test]
    fn real_vertices_are_those_of_the_real_quads() {
        // A 40 × 40 grid with a boundary: levels of several blocks.
        let k = 40u32;
        let id = |i: u32, j: u32| i * (k + 1) + j;
        let faces: Vec<[u32; 4]> = (0..k)
            .flat_map(|i| (0..k).map(move |j| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]))
            .collect();
        let m = crate::level::prepare(&Mesh::from_faces(((k + 1) * (k + 1)) as usize, &faces).unwrap()).unwrap();
        let (l1, _) = first_level(&m).unwrap();
        let mut l = l1;
        for _ in 0..2 {
            let seq = refine(&l, Keep::Full, Par::Seq).unwrap();
            let par = refine(&l, Keep::Full, Par::Rayon).unwrap();
            // Reference: the vertices of the real quads, numbered in order.
            let mut want = vec![GHOST; seq.num_vertices];
            for &v in &seq.quads[..4 * seq.real_quads] {
                want[v as usize] = 0;
            }
            let mut n = 0;
            for w in want.iter_mut().filter(|w| **w == 0) {
                *w = n;
                n += 1;
            }
            assert!(seq.num_vertices > 4 * MIN_BLOCK || n > MIN_BLOCK as u32, "several blocks");
            for got in [&seq.real, &par.real] {
                let Real::Map { map, count } = got else { panic!("a level with ghosts has a map") };
                assert_eq!((map, *count), (&want, n as usize));
            }
            l = par;
        }
    }

    #[test]
    fn ghost_fans_close_boundaries() {
        // A 2×2 grid of quads and a triangle fan: boundaries, a valence-3
        // boundary corner.
        let grid = Mesh::from_faces(9, &[[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]).unwrap();
        let fan = Mesh::from_faces(5, &[[0, 1, 2], [0, 2, 3], [0, 3, 4]]).unwrap();
        for m in [grid, fan] {
            let m = crate::level::prepare(&m).unwrap();
            let (l1, _) = first_level(&m).unwrap();
            check(&l1);
            assert!(l1.has_ghosts());
            let l2 = refine(&l1, Keep::Full, Par::Seq).unwrap();
            check(&l2);
            let l3 = refine(&l2, Keep::Full, Par::Seq).unwrap();
            check(&l3);
            // The real vertices are those of the uniform refinement.
            let t = m.topology();
            let mut counts = subla_scheme::LevelCounts::of(t);
            for _ in 0..3 {
                counts = crate::slak::quad_split_counts(&counts);
            }
            assert_eq!(l3.real.count() as u128, counts.vertices);
        }
    }
}
