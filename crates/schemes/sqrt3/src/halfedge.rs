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
//! The vertex, face and point order is the kernels' ([`crate::Sqrt3Slak`],
//! see the crate docs), so both paths hand out the same rows and faces.
//! The finest level keeps only its faces; a modeling step derives its
//! twins from its parent.
//!
//! **Held:** closed manifold triangle meshes (isolated vertices stay in
//! place; holes are carried as flags). **Not held:** boundaries (Kobbelt's
//! alternating boundary steps change the counts on every second step) and
//! non-manifold meshes. [`Sqrt3Halfedge::new`] builds those with the
//! kernels and says why ([`Sqrt3HalfedgePlan::kernels_because`]);
//! [`Sqrt3Halfedge::strict`] refuses them.

use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::{Zeroable, try_filled_vec, try_zeroed_vec};
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Options, Topology};
use subla_scheme::kernel::{Stencil, assemble_rows, for_rows, load, real};
use subla_scheme::{ChildPoint, Faces, Plan, Prediction, Refiner, Result, SchemeError, WithFallback};

use crate::level::{alpha, prepare};
use crate::slak::Sqrt3Rules;

const NAME: &str = "sqrt3-halfedge";

use subla_scheme::halfedge::{NONE, child_holes};

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
/// assert_eq!((y.nrows(), plan.faces(2, Par::Rayon)?.face_verts.len()), (4 + 4 + 12, 3 * 36));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sqrt3Halfedge {
    strict: bool,
}

impl Sqrt3Halfedge {
    /// The halfedge kernel, with the specialised kernels for the meshes it
    /// does not hold (boundaries).
    pub const fn new() -> Self {
        Sqrt3Halfedge { strict: false }
    }
    /// The halfedge kernel alone: meshes with a boundary are refused
    /// ([`SchemeError::Unsupported`]).
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
    vert: Vec<u32>,
    conn: Option<Conn>,
    holes: Option<Vec<bool>>,
    max_valence: usize,
}

#[derive(Clone, Debug)]
struct Conn {
    twin: Vec<u32>,
    vhalf: Vec<u32>,
}

impl Level {
    fn num_faces(&self) -> usize {
        self.vert.len() / 3
    }

    fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("a level that is refined or evaluated keeps its connectivity")
    }

    /// Level 0 from a prepared closed manifold triangle mesh.
    fn from_mesh(mesh: &Mesh, par: Par) -> Result<Level> {
        let t = mesh.topology();
        let (nv, nf) = (t.num_vertices(), t.num_faces());
        let vert = t.face_verts().to_vec();
        let mut twin = try_filled_vec(3 * nf, NONE, "the halfedges of a level")?;
        for e in 0..t.num_edges() {
            match *t.edge_corners(e) {
                [a, b] if vert[a as usize] != vert[b as usize] => {
                    twin[a as usize] = b;
                    twin[b as usize] = a;
                }
                [_] => {
                    let [a, b] = t.edge(e);
                    return Err(SchemeError::Unsupported {
                        scheme: NAME,
                        feature: "a boundary",
                        element: format!("edge {a}-{b}"),
                        supported_by: "sqrt3 (specialised kernels)",
                    });
                }
                _ => return Err(subla_scheme::not_manifold(NAME, t)),
            }
        }
        let mut vhalf = try_filled_vec(nv, NONE, "the halfedges of a level")?;
        for_rows(&mut vhalf, nv, 1, par, |r, out| {
            for (o, v) in out.iter_mut().zip(r) {
                *o = t.vertex_corners(v).first().copied().unwrap_or(NONE);
            }
        });
        let level = Level {
            num_vertices: nv,
            vert,
            conn: Some(Conn { twin, vhalf }),
            holes: mesh.has_holes().then(|| mesh.holes().to_vec()),
            max_valence: (0..nv).map(|v| t.valence(v)).max().unwrap_or(0),
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

    /// Calls `f` with each neighbour of `v` in turning order; returns
    /// their number.
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
            if h == h0 || n > self.vert.len() {
                return n;
            }
        }
    }

    /// The child level (`level`: its number, for errors); its twins only if
    /// `full`.
    fn refine(&self, level: u32, full: bool, par: Par) -> Result<Level> {
        let c = self.conn();
        let (nv, nf) = (self.num_vertices, self.num_faces());
        let (cv, cf) = (nv + nf, 3 * nf);
        if u32::try_from(3 * cf).is_err() || u32::try_from(cv).is_err() {
            return Err(SchemeError::LevelTooLarge { scheme: NAME, level, what: "corners", value: 3 * cf as u128 });
        }
        let nv32 = nv as u32;
        let mut vert = try_zeroed_vec::<u32>(3 * cf, "the faces of a level")?;
        for_rows(&mut vert, 3 * nf, 3, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(3).zip(r) {
                let h32 = h as u32;
                o.copy_from_slice(&[self.vert[h], nv32 + c.twin[h] / 3, nv32 + h32 / 3]);
            }
        });
        let conn = if full { Some(self.child_conn(par)?) } else { None };
        let holes = child_holes(self.holes.as_deref(), 3)?;
        Ok(Level { num_vertices: cv, vert, conn, holes, max_valence: self.max_valence.max(6) })
    }

    /// The child's twins and outgoing halfedges, one read of this level's
    /// each.
    fn child_conn(&self, par: Par) -> Result<Conn> {
        let c = self.conn();
        let (nv, nf) = (self.num_vertices, self.num_faces());
        let mut twin = try_zeroed_vec::<u32>(9 * nf, "the halfedges of a level")?;
        for_rows(&mut twin, 3 * nf, 3, par, |r, out| {
            for (o, h) in out.chunks_exact_mut(3).zip(r) {
                let h32 = h as u32;
                let t = c.twin[h];
                o.copy_from_slice(&[3 * next(t) + 2, 3 * t + 1, 3 * c.twin[prev(h32) as usize]]);
            }
        });
        let mut vhalf = try_zeroed_vec::<u32>(nv + nf, "the halfedges of a level")?;
        {
            let (vs, fs) = vhalf.split_at_mut(nv);
            for_rows(vs, nv, 1, par, |r, out| {
                for (o, v) in out.iter_mut().zip(r) {
                    let h = c.vhalf[v];
                    *o = if h == NONE { NONE } else { 3 * h };
                }
            });
            for_rows(fs, nf, 1, par, |r, out| {
                for (o, t) in out.iter_mut().zip(r) {
                    *o = 9 * t as u32 + 2;
                }
            });
        }
        Ok(Conn { twin, vhalf })
    }

    /// The full mesh of this level (twins `c`), its edges numbered by their
    /// first halfedge: a scan, no sort.
    fn mesh(&self, c: &Conn, par: Par) -> Result<Mesh> {
        let nh = self.vert.len();
        let mut corner_edge = vec![0u32; nh];
        let mut edges = Vec::with_capacity(nh / 2);
        for h in 0..nh {
            let t = c.twin[h] as usize;
            if h < t {
                corner_edge[h] = edges.len() as u32;
                corner_edge[t] = edges.len() as u32;
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

    /// The stencil of child row `row`.
    fn stencil(&self, c: &Conn, alphas: &[f64], row: usize, s: &mut Stencil) {
        let nv = self.num_vertices;
        if row >= nv {
            let t = row - nv;
            s.extend(self.vert[3 * t..3 * t + 3].iter().map(|&u| (u, 1.0 / 3.0)));
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
/// `l`'s parent is known, the neighbours of `l`'s face points are read
/// from it in closed form (the three corners of their triangle and the
/// face points of its three neighbours) instead of turning around them.
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
    // The face points of the parent: their neighbours in closed form.
    let (pv, pvert, ptwin) = match parent {
        Some(p) => (p.num_vertices, &p.vert[..], &p.conn().twin[..]),
        None => (usize::MAX, &[][..], &[][..]),
    };
    let c = l.conn();
    let (nv, nf) = (l.num_vertices, l.num_faces());
    let (yv, yf) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let alphas: Vec<f64> = (0..=l.max_valence.min(64)).map(alpha).collect();
    let (twin, vert) = (&c.twin[..], &l.vert[..]);
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
    for_rows(yf, nf, stride, par, |r, out| {
        for (row, t) in out.chunks_exact_mut(stride).zip(r) {
            let (a, b, cc) = (gx(vert[3 * t]), gx(vert[3 * t + 1]), gx(vert[3 * t + 2]));
            let mut o = [T::zero(); D];
            for k in 0..D {
                o[k] = third * (a[k] + b[k] + cc[k]);
            }
            put(row, o);
        }
    });
}

/// The plan in halfedge form: levels `0 ..= L`, all but the finest with
/// their twins; the prepared control mesh where level 0 is it.
#[derive(Debug)]
struct HePlan {
    control: Option<Mesh>,
    levels: Vec<Level>,
    meshes: Vec<OnceLock<Mesh>>,
    faces: Vec<OnceLock<(Vec<u32>, Vec<bool>)>>,
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
        let next = stack.last().expect("a level").refine(l, l < levels, par)?;
        stack.push(next);
    }
    Ok(HePlan::new(Some(mesh), stack))
}

fn step_he(plan: HePlan, par: Par) -> Result<HePlan> {
    let HePlan { mut levels, .. } = plan;
    let mut finest = levels.pop().expect("a plan has a level");
    if finest.conn.is_none() {
        finest.conn = Some(levels.last().expect("a lean level has a parent").child_conn(par)?);
    }
    drop(levels);
    let next = finest.refine(1, false, par)?;
    Ok(HePlan::new(None, vec![finest, next]))
}

impl HePlan {
    fn new(control: Option<Mesh>, levels: Vec<Level>) -> Self {
        let n = levels.len();
        HePlan {
            control,
            levels,
            meshes: (0..n).map(|_| OnceLock::new()).collect(),
            faces: (0..n).map(|_| OnceLock::new()).collect(),
        }
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
            eval_level(&self.levels[l], l.checked_sub(1).map(|p| &self.levels[p]), x, y, d, par);
        })
    }
}

impl Plan for HePlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        self.levels.len() as u32 - 1
    }
    fn level_len(&self, level: u32) -> usize {
        self.levels.get(level as usize).map_or(0, |l| l.num_vertices)
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
        let l = &self.levels[level as usize];
        let c = l.conn();
        let alphas: Vec<f64> = (0..=l.max_valence.min(64)).map(alpha).collect();
        assemble_rows(l.num_vertices + l.num_faces(), l.num_vertices, par, |row, s| l.stencil(c, &alphas, row, s))
    }
    fn operator_bound(&self, level: u32) -> Option<u64> {
        // Vertex rows: the vertex and its neighbours (V + 2E = V + 3F on a
        // closed mesh); face rows: three points.
        let l = self.levels.get(level as usize).filter(|_| level < self.levels())?;
        Some((l.num_vertices + 6 * l.num_faces()) as u64)
    }
    fn child_point(&self, level: u32, row: usize) -> Option<ChildPoint> {
        let l = self.levels.get(level as usize).filter(|_| level < self.levels())?;
        let r = u32::try_from(row).ok()?;
        if row < l.num_vertices {
            Some(ChildPoint::Vertex(r))
        } else if row < l.num_vertices + l.num_faces() {
            Some(ChildPoint::Face(r - l.num_vertices as u32))
        } else {
            None
        }
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(c);
        }
        let cell = &self.meshes[level as usize];
        if let Some(m) = cell.get() {
            return Ok(m);
        }
        let l = &self.levels[level as usize];
        let m = match &l.conn {
            Some(c) => l.mesh(c, par)?,
            None => l.mesh(&self.levels[level as usize - 1].child_conn(par)?, par)?,
        };
        Ok(cell.get_or_init(|| m))
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.check_level(level)?;
        if level == 0
            && let Some(c) = &self.control
        {
            return Ok(Faces::of(c));
        }
        let l = &self.levels[level as usize];
        let nf = l.num_faces();
        let (ptr, holes) = self.faces[level as usize].get_or_init(|| {
            (
                subla_algebra::par::collect(nf + 1, par, |f| (3 * f) as u32),
                l.holes.clone().unwrap_or_else(|| vec![false; nf]),
            )
        });
        Ok(Faces { num_vertices: l.num_vertices, face_ptr: ptr, face_verts: &l.vert, holes })
    }
}
