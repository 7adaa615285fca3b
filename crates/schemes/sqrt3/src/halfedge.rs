//! √3 through closed-form halfedge refinement (the rule derived in
//! `docs/sqrt3.md`): every refined level's connectivity is computed per
//! element from its parent's, with no sort, no hashing and no search.
//!
//! A level keeps, per halfedge, its origin (the triangles, three by
//! three) and its twin; per vertex one outgoing halfedge (8 bytes a
//! halfedge, 24 a triangle, and 4 a vertex). Halfedge `h` of the parent
//! owns the child triangle `T(h) = (src(h), F(t(twin h)), F(t(h)))` (child
//! face `h`; `F(t) = V + t` the face point of triangle `t`), and
//!
//! ```text
//! twin'(3h + 1) = 3 twin(h) + 1
//! twin'(3h + 2) = 3 twin(prev(h))
//! twin'(3h)     = 3 next(twin(h)) + 2
//! out'(v) = 3 out(v),  out'(F(t)) = 9t + 2
//! ```
//!
//! On a boundary (a halfedge without a twin) Kobbelt's rule alternates
//! with the parity of the step, counted as the kernels count it: a plain
//! step keeps the boundary edge (`T(h) = (a, b, F(t))`); a splitting step
//! gives each face with a boundary edge two trisection points in place of
//! its face point (new points numbered by a scan of one or two per face)
//! and makes `T(h)` the middle third `(E_a, E_b, o)`. The child twins stay
//! one local rule per halfedge (`docs/sqrt3.md` lists them), and each
//! boundary vertex keeps its outgoing boundary halfedge, from which its
//! boundary neighbours are found by turning.
//!
//! The vertex, face and point order is the kernels' ([`crate::Sqrt3Slak`],
//! see the crate docs), so both paths hand out the same rows and faces.
//! The finest level keeps only its faces; a modeling step derives its
//! twins from its parent. On a closed mesh the level before it keeps
//! nothing: the last step and its evaluation read it from its parent in
//! closed form (`docs/sqrt3.md`).
//!
//! **Held:** manifold triangle meshes, closed or with boundaries
//! (isolated vertices stay in place; holes are carried as flags). **Not
//! held:** non-manifold meshes. [`Sqrt3Halfedge::new`] builds those with
//! the kernels and says why ([`Sqrt3HalfedgePlan::kernels_because`]);
//! [`Sqrt3Halfedge::strict`] refuses them.

use std::borrow::Cow;
use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use std::ops::Range;

use rayon::prelude::*;
use subla_algebra::mem::{Zeroable, try_filled_vec, try_vec_with_capacity, try_zeroed_vec};
use subla_algebra::par::even_ranges;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Options, Topology};
use subla_scheme::kernel::{Stencil, assemble_rows, axpy, for_rows, load, real};
use subla_scheme::{ChildPoint, Faces, Plan, Prediction, Refiner, Result, SchemeError, WithFallback};

use crate::level::{alpha, is_kobbelt_step, prepare};
use crate::slak::Sqrt3Rules;

const NAME: &str = "sqrt3-halfedge";

use subla_scheme::halfedge::{NONE, VirtualLevels, child_holes};

#[inline]
fn next(h: u32) -> u32 {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

#[inline]
fn prev(h: u32) -> u32 {
    if h % 3 == 0 { h + 2 } else { h - 1 }
}

/// √3 subdivision through closed-form halfedge refinement (see the
/// [module docs](self)).
///
/// ```
/// use subla_algebra::Par;
/// use subla_scheme::{Plan, Refiner, eval};
/// use subla_sqrt3::Sqrt3Halfedge;
/// // A tetrahedron, two steps (a 1-to-9 refinement).
/// let mesh = subla_mesh::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
/// let x = ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let plan = Sqrt3Halfedge::new().build(&mesh, 2, Par::Rayon)?;
/// let y = eval(&plan, x.view(), Par::Rayon)?;
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.face_verts().len()), (4 + 4 + 12, 3 * 36));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sqrt3Halfedge {
    strict: bool,
}

impl Sqrt3Halfedge {
    /// The halfedge kernel, with the specialised kernels for the meshes it
    /// does not hold (non-manifold ones).
    pub const fn new() -> Self {
        Sqrt3Halfedge { strict: false }
    }
    /// The halfedge kernel alone: non-manifold meshes are refused
    /// ([`SchemeError::NotManifold`]).
    pub const fn strict() -> Self {
        Sqrt3Halfedge { strict: true }
    }
}

/// A built √3 refinement of [`Sqrt3Halfedge`]: in halfedge form, or (for
/// meshes it does not hold) a [`crate::Sqrt3Plan`] of the kernels.
#[derive(Debug)]
pub struct Sqrt3HalfedgePlan {
    inner: WithFallback<HePlan, crate::Sqrt3Plan>,
}

impl Sqrt3HalfedgePlan {
    /// Why the plan was built by the specialised kernels, if it was.
    pub fn kernels_because(&self) -> Option<&SchemeError> {
        self.inner.because()
    }
    fn plan(&self) -> &dyn Plan {
        self.inner.plan()
    }
}

subla_scheme::forward_plan!(Sqrt3HalfedgePlan);

/// One level: faces always; twins and outgoing halfedges where the level
/// is refined or evaluated.
#[derive(Clone, Debug)]
struct Level {
    num_vertices: usize,
    /// The triangles, three corners each; empty where the level is
    /// virtual ([`Level::virtual_child`]).
    vert: Vec<u32>,
    /// Number of faces.
    nf: usize,
    conn: Option<Conn>,
    holes: Option<Vec<bool>>,
    max_valence: usize,
    /// Whether some halfedge has no twin (the level has a boundary; its
    /// children have one too).
    bounded: bool,
    /// Where the step to the child splits boundary edges in three
    /// (Kobbelt's even steps on a level with a boundary): the first new
    /// point of each face among the child's new points, and their number
    /// last (`F + 1` entries; two points for a face with a boundary edge,
    /// one for the others). `None`: one face point per face, `V + t`.
    split: Option<Vec<u32>>,
}

/// Twins and one outgoing halfedge per vertex: the boundary one on a
/// boundary vertex.
#[derive(Clone, Debug)]
struct Conn {
    twin: Vec<u32>,
    vhalf: Vec<u32>,
}

/// Weights of Kobbelt's even-step boundary rules, as `crate::level` gives
/// them: a trisection point `[far, near, other end]`, a boundary vertex
/// `[neighbour, itself]`.
const TRISECT: [f64; 3] = crate::level::BOUNDARY_EDGE;
const BVERT: [f64; 2] = crate::level::BOUNDARY_VERTEX;

impl Level {
    fn num_faces(&self) -> usize {
        self.nf
    }

    /// Whether the level keeps neither faces nor twins
    /// ([`Level::virtual_child`]).
    fn is_virtual(&self) -> bool {
        self.vert.len() != 3 * self.nf
    }

    fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("a level that is refined or evaluated keeps its connectivity")
    }

    /// Level 0 from a prepared manifold triangle mesh.
    fn from_mesh(mesh: &Mesh, par: Par) -> Result<Level> {
        let t = mesh.topology();
        let (nv, nf) = (t.num_vertices(), t.num_faces());
        let vert = t.face_verts().to_vec();
        let mut twin = try_filled_vec(3 * nf, NONE, "the halfedges of a level")?;
        let mut bounded = false;
        for e in 0..t.num_edges() {
            match *t.edge_corners(e) {
                [a, b] if vert[a as usize] != vert[b as usize] => {
                    twin[a as usize] = b;
                    twin[b as usize] = a;
                }
                [_] => bounded = true,
                _ => return Err(subla_scheme::not_manifold(NAME, t)),
            }
        }
        let mut vhalf = try_filled_vec(nv, NONE, "the halfedges of a level")?;
        for_rows(&mut vhalf, nv, 1, par, |r, out| {
            for (o, v) in out.iter_mut().zip(r) {
                let cs = t.vertex_corners(v);
                // Corner `c` leaves its vertex along halfedge `c`.
                *o = cs.iter().copied().find(|&h| twin[h as usize] == NONE).or(cs.first().copied()).unwrap_or(NONE);
            }
        });
        let level = Level {
            num_vertices: nv,
            nf,
            vert,
            conn: Some(Conn { twin, vhalf }),
            holes: mesh.has_holes().then(|| mesh.holes().to_vec()),
            max_valence: (0..nv).map(|v| t.valence(v)).max().unwrap_or(0),
            bounded,
            split: None,
        };
        // Turning around each vertex meets all its faces on a manifold
        // mesh (which the caller has checked): verified in debug builds.
        #[cfg(debug_assertions)]
        {
            let c = level.conn();
            if let Some(v) = (0..nv).find(|&v| level.ring(c, v, |_| ()) != t.face_count(v)) {
                return Err(SchemeError::Internal {
                    what: NAME,
                    detail: format!("turning around vertex {v} does not meet all its faces"),
                });
            }
        }
        Ok(level)
    }

    /// Calls `f` with each neighbour of `v` reached by an outgoing
    /// halfedge, in turning order (on a boundary vertex, from its
    /// outgoing boundary halfedge on; the far end of the incoming one is
    /// not among them); returns the number of faces met.
    #[inline]
    fn ring(&self, c: &Conn, v: usize, mut f: impl FnMut(u32)) -> usize {
        let h0 = c.vhalf[v];
        if h0 == NONE {
            return 0;
        }
        let (mut h, mut n) = (h0, 0);
        loop {
            n += 1;
            f(self.vert[next(h) as usize]);
            h = c.twin[prev(h) as usize];
            if h == h0 || h == NONE || n > self.vert.len() {
                return n;
            }
        }
    }

    /// The start of the boundary halfedge that arrives at the start of the
    /// boundary halfedge `h0` (the boundary neighbour before it).
    #[inline]
    fn boundary_before(&self, c: &Conn, h0: u32) -> u32 {
        let mut h = h0;
        for _ in 0..self.vert.len() {
            let p = prev(h);
            let t = c.twin[p as usize];
            if t == NONE {
                return self.vert[p as usize];
            }
            h = t;
        }
        unreachable!("a boundary halfedge's vertex has an incoming boundary halfedge on a manifold level")
    }

    /// Decides the step to the child: on a splitting step (`kobbelt`, the
    /// global step's parity) of a level with a boundary, each face with a
    /// boundary edge gets two new points; a face with more than one is
    /// refused, as the kernels refuse it.
    fn plan_step(&mut self, kobbelt: bool) -> Result<()> {
        self.split = None;
        if !kobbelt || !self.bounded {
            return Ok(());
        }
        let c = self.conn();
        let nf = self.num_faces();
        let mut off = try_vec_with_capacity(nf + 1, "the new points of each face")?;
        off.push(0u32);
        let mut acc = 0u64;
        for f in 0..nf {
            let nb = (0..3).filter(|&k| c.twin[3 * f + k] == NONE).count();
            if nb > 1 {
                return Err(SchemeError::BoundaryFace { scheme: NAME, face: f, edges: nb });
            }
            acc += 1 + nb as u64;
            off.push(u32::try_from(acc).map_err(|_| SchemeError::LevelTooLarge {
                scheme: NAME,
                level: 0,
                what: "vertices",
                value: u128::from(acc),
            })?);
        }
        self.split = Some(off);
        Ok(())
    }

    /// The first of face `f`'s new points, counted from the child's first
    /// new point.
    #[inline]
    fn new_first(&self, f: usize) -> u32 {
        match &self.split {
            Some(off) => off[f],
            None => f as u32,
        }
    }

    /// Number of the child's new points.
    fn num_new(&self) -> usize {
        self.split.as_ref().map_or(self.num_faces(), |off| off[self.num_faces()] as usize)
    }

    /// Whether face `f` is split on the step to the child (it has a
    /// boundary edge, which is split in three).
    #[inline]
    fn is_split(&self, f: usize) -> bool {
        self.split.as_ref().is_some_and(|off| off[f + 1] - off[f] == 2)
    }

    /// The child vertex facing the edge of halfedge `g` inside its
    /// triangle: the face point, or on a split face the trisection point
    /// next to that edge (`E_b` for the halfedge after the boundary one,
    /// `E_a` for the one before it).
    #[inline]
    fn apex(&self, c: &Conn, g: u32) -> u32 {
        let f = (g / 3) as usize;
        let base = self.num_vertices as u32 + self.new_first(f);
        if self.is_split(f) && c.twin[prev(g) as usize] == NONE { base + 1 } else { base }
    }

    /// The child's vertices and faces (`level`: its number, for errors), or
    /// [`SchemeError::LevelTooLarge`] where its corners or vertices do not
    /// fit `u32`.
    fn child_size(&self, level: u32) -> Result<(usize, usize)> {
        let (cv, cf) = (self.num_vertices + self.num_new(), 3 * self.num_faces());
        if u32::try_from(3 * cf).is_err() || u32::try_from(cv).is_err() {
            return Err(SchemeError::LevelTooLarge { scheme: NAME, level, what: "corners", value: 3 * cf as u128 });
        }
        Ok((cv, cf))
    }

    /// The child level (`level`: its number, for errors); its twins only if
    /// `full`. [`Level::plan_step`] has decided the step.
    fn refine(&self, c: &Conn, level: u32, full: bool, par: Par) -> Result<Level> {
        let (nv, nf) = (self.num_vertices, self.num_faces());
        let (cv, cf) = self.child_size(level)?;
        let nv32 = nv as u32;
        let mut vert = try_zeroed_vec::<u32>(3 * cf, "the faces of a level")?;
        if self.bounded {
            let splits = self.split.is_some();
            for_rows(&mut vert, 3 * nf, 3, par, |r, out| {
                for (o, h) in out.chunks_exact_mut(3).zip(r) {
                    let (h32, t) = (h as u32, c.twin[h]);
                    let face = if t != NONE {
                        [self.vert[h], self.apex(c, t), self.apex(c, h32)]
                    } else if splits {
                        // The middle third `(E_a, E_b, o)`.
                        let b = nv32 + self.new_first(h / 3);
                        [b, b + 1, self.vert[prev(h32) as usize]]
                    } else {
                        [self.vert[h], self.vert[next(h32) as usize], nv32 + self.new_first(h / 3)]
                    };
                    o.copy_from_slice(&face);
                }
            });
        } else {
            for_rows(&mut vert, 3 * nf, 3, par, |r, out| {
                for (o, h) in out.chunks_exact_mut(3).zip(r) {
                    let h32 = h as u32;
                    o.copy_from_slice(&[self.vert[h], nv32 + c.twin[h] / 3, nv32 + h32 / 3]);
                }
            });
        }
        let conn = if full { Some(self.child_conn(c, par)?) } else { None };
        let holes = child_holes(self.holes.as_deref(), 3)?;
        Ok(Level {
            num_vertices: cv,
            vert,
            nf: cf,
            conn,
            holes,
            max_valence: self.max_valence.max(6),
            bounded: self.bounded,
            split: None,
        })
    }

    /// The child of this closed level kept *virtual*: neither its faces nor
    /// its twins, which [`Level::refine_lean`] and [`eval_lean`] read from
    /// this level's in closed form, and [`HePlan`] makes whole only where a
    /// caller asks for its faces, mesh or operator.
    fn virtual_child(&self, level: u32) -> Result<Level> {
        debug_assert!(!self.bounded && self.split.is_none());
        let (cv, cf) = self.child_size(level)?;
        Ok(Level {
            num_vertices: cv,
            vert: Vec::new(),
            nf: cf,
            conn: None,
            holes: child_holes(self.holes.as_deref(), 3)?,
            max_valence: self.max_valence.max(6),
            bounded: false,
            split: None,
        })
    }

    /// The child of a virtual or lean level, its connectivity read from
    /// `parent`'s in closed form:
    /// the lean level's halfedge `3h + k` (`h` the parent's) has origin
    /// `[src(h), F(t(twin h)), F(t(h))][k]` and twin
    /// `[3 next(twin h) + 2, 3 twin(h) + 1, 3 twin(prev h)][k]`, so the
    /// child's three triangles over `h` are one read of `h`, its twin and
    /// the twin of `prev(h)`. Only for a closed parent (no boundary, hence
    /// no split).
    fn refine_lean(&self, parent: &Level, level: u32, par: Par) -> Result<Level> {
        debug_assert!(self.conn.is_none() && !parent.bounded && !self.bounded && self.split.is_none());
        let pc = parent.conn();
        let mut child = self.lazy_child(level)?;
        let (pv, nv32) = (parent.num_vertices as u32, self.num_vertices as u32);
        let mut vert = try_zeroed_vec::<u32>(3 * child.nf, "the faces of a level")?;
        // Nine corners (three child triangles) per parent halfedge.
        for_rows(&mut vert, parent.vert.len(), 9, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(9).zip(r) {
                let h32 = h as u32;
                let t = pc.twin[h];
                let fh = nv32 + h32;
                o.copy_from_slice(&[
                    parent.vert[h],
                    nv32 + next(t),
                    fh,
                    pv + t / 3,
                    nv32 + t,
                    fh,
                    pv + h32 / 3,
                    nv32 + pc.twin[prev(h32) as usize],
                    fh,
                ]);
            }
        });
        child.vert = vert;
        Ok(child)
    }

    /// The child of this closed level with neither faces nor twins: a
    /// modeling step's finest level, whose faces are made
    /// ([`Level::refine_lean`] from this level's parent) only where a
    /// caller asks for them.
    fn lazy_child(&self, level: u32) -> Result<Level> {
        debug_assert!(!self.bounded && self.split.is_none());
        let (cv, cf) = self.child_size(level)?;
        Ok(Level {
            num_vertices: cv,
            vert: Vec::new(),
            nf: cf,
            conn: None,
            holes: child_holes(self.holes.as_deref(), 3)?,
            max_valence: self.max_valence.max(6),
            bounded: false,
            split: None,
        })
    }

    /// The child's twins and outgoing halfedges, one read of this level's
    /// each (the rules in `docs/sqrt3.md`).
    fn child_conn(&self, c: &Conn, par: Par) -> Result<Conn> {
        let (nv, nf) = (self.num_vertices, self.num_faces());
        let mut twin = try_zeroed_vec::<u32>(9 * nf, "the halfedges of a level")?;
        if self.bounded {
            let splits = self.split.is_some();
            // The twin of `F_t → a` in `T(h)` where `t(h)` is not split.
            let back = |h: u32| {
                let p = prev(h);
                let tp = c.twin[p as usize];
                if tp != NONE { 3 * tp } else { 3 * p + 1 }
            };
            for_rows(&mut twin, 3 * nf, 3, par, |r, out| {
                for (o, h) in out.chunks_exact_mut(3).zip(r) {
                    let (h32, t) = (h as u32, c.twin[h]);
                    let tw = if t == NONE {
                        if splits {
                            // `(E_a, E_b, o)`: the middle third is on the
                            // boundary.
                            [NONE, 3 * c.twin[next(h32) as usize], 3 * prev(h32) + 2]
                        } else {
                            // `(a, b, F)`.
                            [NONE, 3 * next(h32) + 2, back(h32)]
                        }
                    } else {
                        // `(a, X_t, X_h)`.
                        let o2 = if !self.is_split(h / 3) {
                            back(h32)
                        } else if c.twin[prev(h32) as usize] == NONE {
                            NONE
                        } else {
                            3 * next(h32) + 2
                        };
                        let o0 = if !self.is_split((t / 3) as usize) {
                            3 * next(t) + 2
                        } else if c.twin[prev(t) as usize] == NONE {
                            3 * prev(t) + 1
                        } else {
                            NONE
                        };
                        [o0, 3 * t + 1, o2]
                    };
                    o.copy_from_slice(&tw);
                }
            });
        } else {
            for_rows(&mut twin, 3 * nf, 3, par, |r, out| {
                for (o, h) in out.chunks_exact_mut(3).zip(r) {
                    let h32 = h as u32;
                    let t = c.twin[h];
                    o.copy_from_slice(&[3 * next(t) + 2, 3 * t + 1, 3 * c.twin[prev(h32) as usize]]);
                }
            });
        }
        let mut vhalf = try_zeroed_vec::<u32>(nv + self.num_new(), "the halfedges of a level")?;
        let (vs, fs) = vhalf.split_at_mut(nv);
        let splits = self.split.is_some();
        for_rows(vs, nv, 1, par, |r, out| {
            for (o, v) in out.iter_mut().zip(r) {
                let h = c.vhalf[v];
                *o = if h == NONE {
                    NONE
                } else if splits && c.twin[h as usize] == NONE {
                    // `a → E_a` in the triangle of the halfedge after
                    // `prev(h)` around `a`.
                    3 * c.twin[prev(h) as usize]
                } else {
                    3 * h
                };
            }
        });
        if !splits {
            for_rows(fs, self.num_faces(), 1, par, |r, out| {
                for (o, f) in out.iter_mut().zip(r) {
                    *o = 9 * f as u32 + 2;
                }
            });
            return Ok(Conn { twin, vhalf });
        }
        self.for_new_points(fs, 1, par, |faces, out| {
            let mut out = out.iter_mut();
            for f in faces {
                if self.is_split(f) {
                    let bc = self.boundary_corner(c, f);
                    *out.next().expect("a slot per new point") = 3 * bc;
                    *out.next().expect("a slot per new point") = 3 * next(bc) + 2;
                } else {
                    *out.next().expect("a slot per new point") = 9 * f as u32 + 2;
                }
            }
        });
        Ok(Conn { twin, vhalf })
    }

    /// The halfedge of face `f` without a twin (a split face has one).
    #[inline]
    fn boundary_corner(&self, c: &Conn, f: usize) -> u32 {
        let h = (3 * f..3 * f + 3).find(|&h| c.twin[h] == NONE).expect("a split face has a boundary halfedge");
        h as u32
    }

    /// Runs `f(faces, rows)` over blocks of faces, `rows` the rows of
    /// their new points in `out` (`stride` values a row), in parallel.
    fn for_new_points<T: Send>(
        &self,
        out: &mut [T],
        stride: usize,
        par: Par,
        f: impl Fn(Range<usize>, &mut [T]) + Sync,
    ) {
        let nf = self.num_faces();
        if self.split.is_none() {
            for_rows(out, nf, stride, par, f);
            return;
        }
        let ranges = even_ranges(nf, par.blocks(nf, 2048));
        let mut pieces = Vec::with_capacity(ranges.len());
        let mut rest = out;
        for r in &ranges {
            let n = (self.new_first(r.end) - self.new_first(r.start)) as usize;
            let (a, b) = rest.split_at_mut(n * stride);
            pieces.push(a);
            rest = b;
        }
        ranges.into_par_iter().zip(pieces).for_each(|(r, p)| f(r, p));
    }

    /// The full mesh of this level (twins `c`), its edges numbered by their
    /// first halfedge: a scan, no sort.
    fn mesh(&self, c: &Conn, par: Par) -> Result<Mesh> {
        let nh = self.vert.len();
        let mut corner_edge = vec![0u32; nh];
        let mut edges = Vec::with_capacity(nh / 2 + 1);
        for h in 0..nh {
            let t = c.twin[h];
            if t == NONE || h < t as usize {
                corner_edge[h] = edges.len() as u32;
                if t != NONE {
                    corner_edge[t as usize] = edges.len() as u32;
                }
                let (a, b) = (self.vert[h], self.vert[next(h as u32) as usize]);
                edges.push([a.min(b), a.max(b)]);
            }
        }
        let nf = self.num_faces();
        let ptr: Vec<u32> = (0..=nf as u32).map(|f| 3 * f).collect();
        let ne = edges.len();
        let topo = Topology::from_edges(self.num_vertices, ptr, self.vert.clone(), edges, corner_edge, par)?;
        let holes = self.holes.clone().unwrap_or_else(|| vec![false; nf]);
        Ok(Mesh::from_parts(topo, vec![0.0; ne], vec![0.0; self.num_vertices], holes, Options::default())?)
    }

    /// The face of the child's new point `j` (counted from its first new
    /// point).
    fn owner(&self, j: usize) -> usize {
        match &self.split {
            Some(off) => off.partition_point(|&o| o as usize <= j) - 1,
            None => j,
        }
    }

    /// The stencil of child row `row`, in the order eval sums it.
    fn stencil(&self, c: &Conn, alphas: &[f64], row: usize, s: &mut Stencil) {
        let nv = self.num_vertices;
        if row >= nv {
            let j = row - nv;
            let t = self.owner(j);
            if !self.is_split(t) {
                s.extend(self.vert[3 * t..3 * t + 3].iter().map(|&u| (u, 1.0 / 3.0)));
                return;
            }
            let bc = self.boundary_corner(c, t);
            let (a, b) = (self.vert[bc as usize], self.vert[next(bc) as usize]);
            let [w1, w16, w10] = TRISECT;
            if j == self.new_first(t) as usize {
                s.extend([(self.boundary_before(c, bc), w1), (a, w16), (b, w10)]);
            } else {
                let after = self.vert[next(c.vhalf[b as usize]) as usize];
                s.extend([(a, w10), (b, w16), (after, w1)]);
            }
            return;
        }
        let h0 = c.vhalf[row];
        if h0 != NONE && c.twin[h0 as usize] == NONE {
            if self.split.is_some() {
                let (p, q) = (self.boundary_before(c, h0), self.vert[next(h0) as usize]);
                s.extend([(p, BVERT[0]), (q, BVERT[0]), (row as u32, BVERT[1])]);
            } else {
                s.push((row as u32, 1.0));
            }
            return;
        }
        let start = s.len();
        let n = self.ring(c, row, |u| s.push((u, 0.0)));
        if n == 0 {
            s.push((row as u32, 1.0));
            return;
        }
        let a = alpha_of(alphas, n);
        for e in &mut s[start..] {
            e.1 = a / n as f64;
        }
        s.push((row as u32, 1.0 - a));
    }
}

#[inline]
fn alpha_of(table: &[f64], n: usize) -> f64 {
    table.get(n).copied().unwrap_or_else(|| alpha(n))
}

/// One step of eval from `l` (rows `x`) to its child (rows `y`). Where
/// `l`'s parent is known and closed, the neighbours of `l`'s face points
/// are read from it in closed form (the three corners of their triangle
/// and the face points of its three neighbours) instead of turning around
/// them.
fn eval_level<T: Float + Send + Sync>(l: &Level, parent: Option<&Level>, x: &[T], y: &mut [T], d: usize, par: Par) {
    subla_scheme::channel_groups!(d, off, D => eval_impl::<T, D>(l, parent, x, y, d, off, par));
}

fn eval_impl<T: Float + Send + Sync, const D: usize>(
    l: &Level,
    parent: Option<&Level>,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    // A closed level with a parent (a virtual one among them) is evaluated
    // from the parent's connectivity, three times smaller.
    if let Some(p) = parent.filter(|p| !p.bounded && p.conn.is_some()) {
        eval_lean::<T, D>(l, p, x, y, stride, off, par);
        return;
    }
    // The face points of the parent: their neighbours in closed form.
    let (pv, pvert, ptwin) = match parent.filter(|p| !p.bounded) {
        Some(p) => (p.num_vertices, &p.vert[..], &p.conn().twin[..]),
        None => (usize::MAX, &[][..], &[][..]),
    };
    let c = l.conn();
    let nv = l.num_vertices;
    let (yv, yf) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let alphas: Vec<f64> = (0..=l.max_valence.min(64)).map(alpha).collect();
    let (twin, vert) = (&c.twin[..], &l.vert[..]);
    let (splits, bounded) = (l.split.is_some(), l.bounded);
    for_rows(yv, nv, stride, par, |r, out| {
        let w6 = (real::<T>(alpha_of(&alphas, 6) / 6.0), real::<T>(1.0 - alpha_of(&alphas, 6)));
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let xv = gx(v as u32);
            if v >= pv {
                let t = v - pv;
                let pv32 = pv as u32;
                let mut acc = [T::zero(); D];
                // Corner `k`, then the face point across edge `3t + k`:
                // the turning order from the face point's outgoing
                // halfedge `9t + 2`, so the sum has the ring walk's bits.
                for k in 0..3 {
                    let (a, b) = (gx(pvert[3 * t + k]), gx(pv32 + ptwin[3 * t + k] / 3));
                    for j in 0..D {
                        acc[j] = acc[j] + a[j];
                        acc[j] = acc[j] + b[j];
                    }
                }
                let mut o = [T::zero(); D];
                for j in 0..D {
                    o[j] = w6.0 * acc[j] + w6.1 * xv[j];
                }
                put(row, o);
                continue;
            }
            let h0 = c.vhalf[v];
            if h0 == NONE {
                put(row, xv);
                continue;
            }
            if bounded && twin[h0 as usize] == NONE {
                // A boundary vertex: kept, or Kobbelt's even-step rule.
                if splits {
                    let (p, q) = (gx(l.boundary_before(c, h0)), gx(vert[next(h0) as usize]));
                    let mut acc = [T::zero(); D];
                    axpy(&mut acc, real::<T>(BVERT[0]), p);
                    axpy(&mut acc, real::<T>(BVERT[0]), q);
                    axpy(&mut acc, real::<T>(BVERT[1]), xv);
                    put(row, acc);
                } else {
                    put(row, xv);
                }
                continue;
            }
            let mut acc = [T::zero(); D];
            let (mut h, mut n) = (h0, 0usize);
            loop {
                n += 1;
                let u = gx(vert[next(h) as usize]);
                for k in 0..D {
                    acc[k] = acc[k] + u[k];
                }
                h = twin[prev(h) as usize];
                if h == h0 {
                    break;
                }
            }
            let a = alpha_of(&alphas, n);
            let (wn, wv) = (real::<T>(a / n as f64), real::<T>(1.0 - a));
            let mut o = [T::zero(); D];
            for k in 0..D {
                o[k] = wn * acc[k] + wv * xv[k];
            }
            put(row, o);
        }
    });
    let third = real::<T>(1.0 / 3.0);
    if !splits {
        for_rows(yf, l.num_faces(), stride, par, |r, out| {
            for (row, t) in out.chunks_exact_mut(stride).zip(r) {
                let (a, b, cc) = (gx(vert[3 * t]), gx(vert[3 * t + 1]), gx(vert[3 * t + 2]));
                let mut o = [T::zero(); D];
                for k in 0..D {
                    o[k] = third * (a[k] + b[k] + cc[k]);
                }
                put(row, o);
            }
        });
        return;
    }
    let [w1, w16, w10] = TRISECT.map(real::<T>);
    l.for_new_points(yf, stride, par, |faces, out| {
        let mut rows = out.chunks_exact_mut(stride);
        for t in faces {
            if l.is_split(t) {
                // The trisection points of the boundary edge `a → b`, in
                // the kernels' order of terms.
                let bc = l.boundary_corner(c, t);
                let (a, b) = (vert[bc as usize], vert[next(bc) as usize]);
                let (xa, xb) = (gx(a), gx(b));
                let before = gx(l.boundary_before(c, bc));
                let after = gx(vert[next(c.vhalf[b as usize]) as usize]);
                let mut ea = [T::zero(); D];
                axpy(&mut ea, w1, before);
                axpy(&mut ea, w16, xa);
                axpy(&mut ea, w10, xb);
                put(rows.next().expect("a row per new point"), ea);
                let mut eb = [T::zero(); D];
                axpy(&mut eb, w10, xa);
                axpy(&mut eb, w16, xb);
                axpy(&mut eb, w1, after);
                put(rows.next().expect("a row per new point"), eb);
                continue;
            }
            let (a, b, cc) = (gx(vert[3 * t]), gx(vert[3 * t + 1]), gx(vert[3 * t + 2]));
            let mut o = [T::zero(); D];
            for k in 0..D {
                o[k] = third * (a[k] + b[k] + cc[k]);
            }
            put(rows.next().expect("a row per new point"), o);
        }
    });
}

/// One step of eval from a closed level `l` (rows `x`; virtual or not) to
/// its child (rows `y`), `l`'s connectivity read from its closed
/// `parent`'s (see [`Level::refine_lean`]): the same sums, in the same
/// order, as [`eval_impl`] on the stored connectivity, so the same bits.
fn eval_lean<T: Float + Send + Sync, const D: usize>(
    l: &Level,
    parent: &Level,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let pc = parent.conn();
    let (pvert, ptwin) = (&parent.vert[..], &pc.twin[..]);
    let (pv, nv) = (parent.num_vertices, l.num_vertices);
    let pv32 = pv as u32;
    let (yv, yf) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let alphas: Vec<f64> = (0..=l.max_valence.min(64)).map(alpha).collect();
    for_rows(yv, nv, stride, par, |r, out| {
        let w6 = (real::<T>(alpha_of(&alphas, 6) / 6.0), real::<T>(1.0 - alpha_of(&alphas, 6)));
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let xv = gx(v as u32);
            let mut acc = [T::zero(); D];
            let mut o = [T::zero(); D];
            if v >= pv {
                // The face point of the parent's triangle `t`: its corners
                // and the face points across its edges.
                let t = v - pv;
                for k in 0..3 {
                    let (a, b) = (gx(pvert[3 * t + k]), gx(pv32 + ptwin[3 * t + k] / 3));
                    for j in 0..D {
                        acc[j] = acc[j] + a[j];
                        acc[j] = acc[j] + b[j];
                    }
                }
                for j in 0..D {
                    o[j] = w6.0 * acc[j] + w6.1 * xv[j];
                }
                put(row, o);
                continue;
            }
            // A vertex of the parent: its neighbours in `l` are the face
            // points across its outgoing halfedges, in the parent's turning
            // order (which is `l`'s).
            let h0 = pc.vhalf[v];
            if h0 == NONE {
                put(row, xv);
                continue;
            }
            let (mut h, mut n) = (h0, 0usize);
            loop {
                n += 1;
                let u = gx(pv32 + ptwin[h as usize] / 3);
                for k in 0..D {
                    acc[k] = acc[k] + u[k];
                }
                h = ptwin[prev(h) as usize];
                if h == h0 {
                    break;
                }
            }
            let a = alpha_of(&alphas, n);
            let (wn, wv) = (real::<T>(a / n as f64), real::<T>(1.0 - a));
            for k in 0..D {
                o[k] = wn * acc[k] + wv * xv[k];
            }
            put(row, o);
        }
    });
    // The face points of `l`'s triangles, one per parent halfedge `h`:
    // `(src(h), F(t(twin h)), F(t(h)))`.
    let third = real::<T>(1.0 / 3.0);
    for_rows(yf, pvert.len(), stride, par, |r, out| {
        for (row, h) in out.chunks_exact_mut(stride).zip(r) {
            let (a, b, cc) = (gx(pvert[h]), gx(pv32 + ptwin[h] / 3), gx(pv32 + h as u32 / 3));
            let mut o = [T::zero(); D];
            for k in 0..D {
                o[k] = third * (a[k] + b[k] + cc[k]);
            }
            put(row, o);
        }
    });
}

/// The plan in halfedge form: levels `0 ..= L`; the prepared control mesh
/// where level 0 is it. Every level but the finest keeps its twins (the
/// finest its faces only; after a modeling step, nothing until a caller
/// asks for its faces), except that the one before the finest is
/// *virtual* where its parent is closed ([`Level::virtual_child`]).
#[derive(Debug)]
struct HePlan {
    control: Option<Mesh>,
    /// The global index of the first step (0 for a plan from `build`; a
    /// modeling step's plan continues the count, as the kernels do), whose
    /// parity says which steps split boundary edges.
    first_step: u32,
    /// Levels kept below the plan's first (`0` or `1`) only for their
    /// twins: a modeling step keeps the parent of the level it refines, so
    /// that the refined level need not store its own.
    base: usize,
    levels: Vec<Level>,
    meshes: Vec<OnceLock<Mesh>>,
    faces: Vec<OnceLock<Vec<bool>>>,
    /// A virtual level made whole, where a caller asked for it.
    wholes: Vec<OnceLock<Level>>,
}

impl Refiner for Sqrt3Halfedge {
    type Input = Mesh;
    type Plan = Sqrt3HalfedgePlan;
    fn name(&self) -> &'static str {
        NAME
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<Sqrt3HalfedgePlan> {
        let inner = WithFallback::build(
            || build_he(input, levels, par),
            || crate::Sqrt3Slak::new().build(input, levels, par),
            self.strict,
            |e| matches!(e, SchemeError::Unsupported { .. } | SchemeError::NotManifold { .. }),
        )?;
        Ok(Sqrt3HalfedgePlan { inner })
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&Sqrt3Rules, input.topology(), 0, levels)
    }
    fn step(&self, plan: Sqrt3HalfedgePlan, par: Par) -> Result<Sqrt3HalfedgePlan> {
        Ok(Sqrt3HalfedgePlan { inner: plan.inner.step(|p| step_he(p, par), |k| crate::Sqrt3Slak::new().step(k, par))? })
    }
}

fn build_he(input: &Mesh, levels: u32, par: Par) -> Result<HePlan> {
    subla_scheme::predict(&Sqrt3Rules, input.topology(), 0, levels)?;
    let mesh = prepare(input)?;
    let mut stack = Vec::with_capacity(levels as usize + 1);
    stack.push(Level::from_mesh(&mesh, par)?);
    for l in 1..=levels {
        let k = stack.len();
        let (done, last) = stack.split_at_mut(k - 1);
        let parent = &mut last[0];
        parent.plan_step(is_kobbelt_step(l - 1))?;
        let next = match (&parent.conn, done.last()) {
            // The level before the finest is virtual where its parent is
            // closed.
            (Some(_), _) if l + 1 == levels && !parent.bounded => parent.virtual_child(l)?,
            (Some(c), _) => parent.refine(c, l, l < levels, par)?,
            (None, Some(grand)) => parent.refine_lean(grand, l, par)?,
            (None, None) => unreachable!("level 0 keeps its connectivity"),
        };
        stack.push(next);
    }
    Ok(HePlan::new(Some(mesh), 0, 0, stack))
}

/// One level on top of `plan`'s finest. Where the finest and its parent
/// are closed, the finest is refined (and evaluated) through its parent's
/// twins, which are made if the parent does not keep them, and the parent
/// stays as the new plan's base: the twins a step makes are the parent's,
/// a third of the finest's. Else the finest's own twins are made from its
/// parent's, and the parent dropped.
fn step_he(plan: HePlan, par: Par) -> Result<HePlan> {
    let first = plan.first_step + plan.levels();
    let n = plan.levels.len();
    if n >= 2 && plan.levels[n - 1].conn.is_none() && !plan.levels[n - 1].bounded && !plan.levels[n - 2].bounded {
        let parent_virtual = plan.levels[n - 2].is_virtual();
        let conn = match &plan.levels[n - 2].conn {
            None if !parent_virtual => Some(plan.conn(n - 2, par)?.into_owned()),
            _ => None,
        };
        if parent_virtual {
            plan.level(n - 2, par)?;
        }
        let HePlan { mut levels, mut wholes, .. } = plan;
        let mut finest = levels.pop().expect("a plan has a level");
        let mut parent = match wholes[n - 2].take() {
            Some(w) => w,
            None => levels.pop().expect("a level before the finest"),
        };
        if conn.is_some() {
            parent.conn = conn;
        }
        drop(levels);
        finest.plan_step(is_kobbelt_step(first))?;
        // The new finest keeps nothing until a caller asks for its faces
        // (`HePlan::level`): a further step and the evaluation read its
        // parent's parent.
        let next = finest.lazy_child(1)?;
        return Ok(HePlan::new(None, first, 1, vec![parent, finest, next]));
    }
    let conn = match plan.levels.last().and_then(|l| l.conn.as_ref()) {
        Some(_) => None,
        None => Some(plan.conn(plan.levels.len() - 1, par)?.into_owned()),
    };
    let HePlan { mut levels, .. } = plan;
    let mut finest = levels.pop().expect("a plan has a level");
    if conn.is_some() {
        finest.conn = conn;
    }
    drop(levels);
    finest.plan_step(is_kobbelt_step(first))?;
    let next = finest.refine(finest.conn(), 1, false, par)?;
    Ok(HePlan::new(None, first, 0, vec![finest, next]))
}

impl HePlan {
    fn new(control: Option<Mesh>, first_step: u32, base: usize, levels: Vec<Level>) -> Self {
        let n = levels.len();
        HePlan {
            control,
            first_step,
            base,
            levels,
            meshes: (0..n).map(|_| OnceLock::new()).collect(),
            faces: (0..n).map(|_| OnceLock::new()).collect(),
            wholes: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    fn virtuals(&self) -> VirtualLevels<'_, Level, Conn> {
        VirtualLevels { levels: &self.levels, wholes: &self.wholes, conn: |l| l.conn.as_ref() }
    }

    /// The connectivity of `level`: its own, or made from its parent's.
    fn conn(&self, level: usize, par: Par) -> Result<Cow<'_, Conn>> {
        self.virtuals().conn_of(level, &|p: &Level, c: &Conn| p.child_conn(c, par))
    }

    /// `level` with its faces: itself, or where it is virtual, made whole
    /// (once) from its parent.
    fn level(&self, level: usize, par: Par) -> Result<&Level> {
        // A modeling step's finest level (its parent without twins, its
        // grandparent with them) gets its faces from the grandparent; the
        // level before a build's finest, faces and twins from its parent.
        let v = self.virtuals();
        let grand = v.lazy_finest_grandparent(level);
        v.level(level, Level::is_virtual, |l, p| {
            if let Some(g) = grand {
                return p.refine_lean(g, (level - self.base) as u32, par);
            }
            let mut w = p.refine(p.conn(), level as u32, true, par)?;
            w.split = l.split.clone();
            Ok(w)
        })
    }

    /// Where the plan's `level` is in `levels`.
    fn at(&self, level: u32) -> usize {
        self.base + level as usize
    }

    fn check_level(&self, level: u32) -> Result<()> {
        if level > self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        Ok(())
    }

    fn eval_t<T: Float + Send + Sync + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        subla_scheme::kernel::eval_levels(self, NAME, control, out, |l, x, y, d| {
            let i = self.at(l as u32);
            eval_level(&self.levels[i], i.checked_sub(1).map(|p| &self.levels[p]), x, y, d, par);
        })
    }
}

impl Plan for HePlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        (self.levels.len() - 1 - self.base) as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.levels.get(self.at(level)).map_or(0, |l| l.num_vertices)
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn operator(&self, level: u32, par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        let l = self.level(self.at(level), par)?;
        let c = &*self.conn(self.at(level), par)?;
        let alphas: Vec<f64> = (0..=l.max_valence.min(64)).map(alpha).collect();
        assemble_rows(l.num_vertices + l.num_new(), l.num_vertices, par, |row, s| l.stencil(c, &alphas, row, s))
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        // Vertex rows: the vertex and its neighbours, at most V + 2E
        // (V + 3F on a closed mesh, V + 3F + B ≤ V + 6F with B boundary
        // edges); new points: three vertices each.
        let l = self.levels.get(self.at(level)).filter(|_| level < self.levels())?;
        let (v, f) = (l.num_vertices as u64, l.num_faces() as u64);
        Some(if l.bounded { v + 6 * f + 3 * l.num_new() as u64 } else { v + 6 * f })
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let l = self.levels.get(self.at(level)).filter(|_| level < self.levels())?;
        let r = u32::try_from(row).ok()?;
        if row < l.num_vertices {
            return Some(ChildPoint::Vertex(r));
        }
        let j = row - l.num_vertices;
        if j >= l.num_new() {
            return None;
        }
        let f = l.owner(j);
        Some(if l.is_split(f) {
            ChildPoint::Trisection { face: f as u32, index: (j as u32 - l.new_first(f)) as u8 }
        } else {
            ChildPoint::Face(f as u32)
        })
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(c);
        }
        let cell = &self.meshes[self.at(level)];
        if let Some(m) = cell.get() {
            return Ok(m);
        }
        let l = self.level(self.at(level), par)?;
        let m = l.mesh(&*self.conn(self.at(level), par)?, par)?;
        Ok(cell.get_or_init(|| m))
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(Faces::of(c));
        }
        let l = self.level(self.at(level), par)?;
        let nf = l.num_faces();
        let holes = self.faces[self.at(level)].get_or_init(|| l.holes.clone().unwrap_or_else(|| vec![false; nf]));
        Ok(Faces::uniform(l.num_vertices, 3, &l.vert, holes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed level evaluated through its parent's twins gives the bits
    /// of its own (stored) twins, on any number of channels; so does its
    /// virtual form.
    #[test]
    fn evaluation_through_the_parent_is_the_stored_one() {
        let torus = subla_mesh::proptest_support::torus(7, 5, 1).mesh.triangulated().unwrap();
        let t = torus.topology();
        let mesh =
            Mesh::from_faces(t.num_vertices(), &(0..t.num_faces()).map(|f| t.face(f)).collect::<Vec<_>>()).unwrap();
        let mut p = Level::from_mesh(&prepare(&mesh).unwrap(), Par::Seq).unwrap();
        p.plan_step(false).unwrap();
        let mut l = p.refine(p.conn(), 1, true, Par::Seq).unwrap();
        let mut virt = p.virtual_child(1).unwrap();
        l.plan_step(true).unwrap();
        virt.plan_step(true).unwrap();
        assert!(!l.bounded && virt.is_virtual() && virt.conn.is_none());
        let rows = l.num_vertices + l.num_new();
        for d in [1usize, 3, 5] {
            let x: Vec<f64> = (0..l.num_vertices * d).map(|i| ((i * 37 % 101) as f64).sin()).collect();
            let (mut stored, mut through, mut from_virtual) =
                (vec![0.0; rows * d], vec![0.0; rows * d], vec![0.0; rows * d]);
            eval_level(&l, None, &x, &mut stored, d, Par::Seq);
            eval_level(&l, Some(&p), &x, &mut through, d, Par::Rayon);
            eval_level(&virt, Some(&p), &x, &mut from_virtual, d, Par::Seq);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&stored), bits(&through), "{d} channels");
            assert_eq!(bits(&stored), bits(&from_virtual), "{d} channels");
        }
        // The finest faces of the last step, through the parent or not.
        let grand = l.refine(l.conn(), 2, false, Par::Seq).unwrap();
        assert_eq!(virt.refine_lean(&p, 2, Par::Seq).unwrap().vert, grand.vert);
    }
}
