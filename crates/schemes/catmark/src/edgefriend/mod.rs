//! Catmull-Clark through the edge-friend encoding (Kuth et al. 2023): a
//! quad mesh whose every quad stores its four vertices and two
//! edge-friends (24 bytes a quad, 4 a vertex for the loop start; the finest
//! level of a plan past level 1 keeps only its quads until a step needs
//! the rest), refined
//! level by level with one gather-only pass per level, behind the same
//! [`Refiner`] / [`Plan`] contract as [`crate::CatmarkSlak`] and matching
//! it (and OpenSubdiv) to rounding.
//!
//! * **Preprocessing.** The first step runs the specialised kernels of
//!   [`crate::CatmarkSlak`] on the control mesh (faces of any order); its
//!   quads are rotated so that each starts at the control vertex of its
//!   corner, which makes every edge the *on-edge* of one quad and the
//!   *off-edge* of the other (the on-off-edge rule of §3.1; see
//!   [`LevelView`] and `docs/catmark.md` for the encoding).
//! * **Refinement.** Every later level is made by the quad task (four
//!   quads, their friends, the face point and the edge points of the
//!   quad's off-edges) and the vertex task (the vertex point gathered
//!   around the vertex through the friends), §3.2; the points of a level
//!   are laid out in chunks `[vertex, face, edge, edge]` (§3.3).
//! * **Features.** OpenSubdiv's semi-sharp creases (uniform and Chaikin:
//!   Chaikin's child sharpness is computed around each vertex in the
//!   connectivity pass), corners and vertex sharpness, and both boundary
//!   rules: each boundary loop is closed by a fan of ghost quads around a
//!   ghost vertex, with infinitely sharp boundary edges (§3.5); ghosts are
//!   left out of every level a plan hands out.
//! * **Holes** are refined like any face (OpenSubdiv's rules do not see
//!   them) and flagged, with their children, in [`Plan::faces`].
//! * **Not held:** isolated vertices and non-manifold meshes. The default
//!   refiner builds them with [`crate::CatmarkSlak`]'s kernels (the whole
//!   plan, reported by [`EdgeFriendPlan::kernels_because`]);
//!   [`CatmarkEdgeFriend::strict`] refuses them with typed errors
//!   ([`SchemeError::Unsupported`], [`SchemeError::NotManifold`]).
//! * **Modeling mode** ([`Refiner::step`]): one level on top of the finest,
//!   straight from its edge-friend form, no preprocessing.
//!
//! Vertex order of a refined level: level 1 in the order the control faces
//! first touch its points (each face's point, then its corners' vertex and
//! edge points not numbered yet), so that quad `c`'s points lie near row
//! `c`; every later level in the chunked order of §3.3, without the
//! ghosts.

mod eval;
mod level;
mod regular;

use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use subla_algebra::mem::{Zeroable, try_zeroed_vec};
use subla_algebra::{CsrMat, Par};
use subla_mesh::topology::vertex_tag;
use subla_mesh::{Mesh, Options, Topology};
use subla_scheme::refinement::ClosedForm;
use subla_scheme::{
    Faces, Plan, Prediction, Refiner, Result, SchemeError, WithFallback, check_eval_shapes, check_rows,
};

use crate::level::{Step, masks, prepare};
use crate::slak::CatmarkRules;
use level::{EfLevel, Keep, Real, first_level, refine};

const NAME: &str = "catmark-edge-friend";

/// Catmull-Clark subdivision through the edge-friend encoding (see the
/// [module docs](self)).
///
/// [`CatmarkEdgeFriend::new`] (also the `Default`) builds meshes the
/// encoding cannot hold (isolated vertices, non-manifold topology) with
/// the specialised kernels of [`crate::CatmarkSlak`] instead, and says so
/// ([`EdgeFriendPlan::kernels_because`]); [`CatmarkEdgeFriend::strict`]
/// refuses them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CatmarkEdgeFriend {
    strict: bool,
}

impl Default for CatmarkEdgeFriend {
    fn default() -> Self {
        CatmarkEdgeFriend::new()
    }
}

impl CatmarkEdgeFriend {
    /// The edge-friend kernel, with the specialised kernels for the meshes
    /// it cannot hold.
    pub const fn new() -> Self {
        CatmarkEdgeFriend { strict: false }
    }
    /// The edge-friend kernel alone: meshes it cannot hold are refused
    /// ([`SchemeError::Unsupported`], [`SchemeError::NotManifold`]).
    pub const fn strict() -> Self {
        CatmarkEdgeFriend { strict: true }
    }
}

/// A built Catmull-Clark refinement of [`CatmarkEdgeFriend`]: in
/// edge-friend form, or (for meshes the encoding cannot hold) a
/// [`crate::CatmarkPlan`] of the specialised kernels.
#[derive(Debug)]
pub struct EdgeFriendPlan {
    inner: WithFallback<EfPlan, crate::CatmarkPlan>,
}

/// One level of an [`EdgeFriendPlan`] in edge-friend form, as other
/// backends read it (the encoding is described in the [module docs](self)
/// and in `docs/catmark.md`): ghost quads and ghost vertices included.
#[derive(Copy, Clone, Debug)]
pub struct LevelView<'a> {
    /// Vertices, ghosts included.
    pub num_vertices: usize,
    /// Four vertices per quad; quads `0 .. real_quads` are real, the rest
    /// ghosts.
    pub quads: &'a [u32],
    /// The edge-friends of each quad's off-edges `v1 v2` and `v3 v0`;
    /// empty on the finest level of a plan past level 1, which keeps only
    /// what its faces and its evaluation need (a modeling step makes them).
    pub friends: &'a [[u32; 2]],
    /// A corner of each vertex; empty where `friends` is.
    pub loop_start: &'a [u32],
    /// Sharpness by edge id (`2q + k`), where the level has a sharp edge
    /// besides its boundary; `None` on a level with ghost quads means that
    /// only the boundary edges (between a real and a ghost quad) are sharp,
    /// infinitely. Level 1 always stores them.
    pub edge_sharpness: Option<&'a [f32]>,
    /// Sharpness by vertex, where some vertex is sharp.
    pub vertex_sharpness: Option<&'a [f32]>,
    /// Hole flags of the quads, where some quad is a hole.
    pub holes: Option<&'a [bool]>,
    /// Number of real quads (a prefix).
    pub real_quads: usize,
    /// Number of real vertices. On the first level of a plan built from a
    /// polygon mesh they are the prefix `0 .. real_vertices`.
    pub real_vertices: usize,
    /// Chaikin's crease rule (else the uniform decrement).
    pub chaikin: bool,
}

impl EdgeFriendPlan {
    /// Level `level` in edge-friend form: every level of an edge-friend
    /// plan but a polygon control level; `None` there, past the levels, or
    /// for a plan of the specialised kernels.
    pub fn level(&self, level: u32) -> Option<LevelView<'_>> {
        let WithFallback::Own(p) = &self.inner else { return None };
        let l = p.levels.get(p.index(level)?)?;
        Some(LevelView {
            num_vertices: l.num_vertices,
            quads: &l.quads,
            friends: &l.friends,
            loop_start: &l.loop_start,
            edge_sharpness: l.edge_sharpness.as_deref(),
            vertex_sharpness: l.vertex_sharpness.as_deref(),
            holes: l.holes.as_deref(),
            real_quads: l.real_quads,
            real_vertices: l.real.count(),
            chaikin: l.chaikin,
        })
    }

    /// The masks of the first step (from the polygon control mesh to the
    /// first edge-friend level, made by the specialised kernels), for
    /// backends that run that step themselves, with the row in the kernels'
    /// numbering ([`crate::refine`]) of each real point of the first level;
    /// `None` for plans without a polygon control level.
    pub fn control_step(&self) -> Option<(crate::StepView<'_>, &[u32])> {
        let WithFallback::Own(p) = &self.inner else { return None };
        let c = p.control.as_ref()?;
        Some((
            crate::StepView { parent: &c.mesh, edge_masks: &c.step.edges, vertex_masks: &c.step.vertices },
            &c.slak_of,
        ))
    }

    /// Why the plan was built by the specialised kernels instead of the
    /// edge-friend encoding (the error the strict refiner gives), or
    /// `None` for an edge-friend plan.
    pub fn kernels_because(&self) -> Option<&SchemeError> {
        self.inner.because()
    }
    /// Bytes the plan's edge-friend connectivity takes (every level's
    /// quads, friends, loop starts, sharpness and hole flags; 0 for a plan
    /// of the specialised kernels).
    pub fn connectivity_bytes(&self) -> usize {
        match &self.inner {
            WithFallback::Own(p) => p.connectivity_bytes(),
            WithFallback::Fallback { .. } => 0,
        }
    }
    fn plan(&self) -> &dyn Plan {
        self.inner.plan()
    }
}

subla_scheme::forward_plan!(EdgeFriendPlan, name = NAME);

/// The control level of a plan built from a polygon mesh: refined by the
/// specialised kernels into the first edge-friend level.
#[derive(Debug)]
struct Control {
    mesh: Mesh,
    step: Step,
    /// The row of each first-level point in the kernels' numbering.
    slak_of: Vec<u32>,
}

/// A built edge-friend refinement: the control level, then every level in
/// edge-friend form.
#[derive(Debug)]
struct EfPlan {
    /// Level 0 as a polygon mesh, when the plan was built from one (then
    /// `levels[i]` is level `i + 1`; else `levels[i]` is level `i`).
    control: Option<Control>,
    levels: Vec<EfLevel>,
    options: Options,
    meshes: Vec<OnceLock<Mesh>>,
    faces: Vec<OnceLock<FaceLists>>,
}

/// The faces of a level as [`Faces`] hands them out.
#[derive(Debug)]
struct FaceLists {
    /// `None` where the level's quads are already in real numbering.
    verts: Option<Vec<u32>>,
    holes: Vec<bool>,
}

fn unsupported(feature: &'static str, element: String) -> SchemeError {
    SchemeError::Unsupported { scheme: NAME, feature, element, supported_by: "catmark (specialised kernels)" }
}

impl Refiner for CatmarkEdgeFriend {
    type Input = Mesh;
    type Plan = EdgeFriendPlan;
    fn name(&self) -> &'static str {
        NAME
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<EdgeFriendPlan> {
        let inner = WithFallback::build(
            || build_ef(input, levels, par),
            || crate::CatmarkSlak.build(input, levels, par),
            self.strict,
            |e| matches!(e, SchemeError::Unsupported { .. } | SchemeError::NotManifold { .. }),
        )?;
        Ok(EdgeFriendPlan { inner })
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: EdgeFriendPlan, par: Par) -> Result<EdgeFriendPlan> {
        Ok(EdgeFriendPlan { inner: plan.inner.step(|p| step_ef(p, par), |k| crate::CatmarkSlak.step(k, par))? })
    }
}

/// The edge-friend plan of `levels` levels over `input`.
fn build_ef(input: &Mesh, levels: u32, par: Par) -> Result<EfPlan> {
    subla_scheme::predict(&CatmarkRules, input.topology(), 0, levels)?;
    let t = input.topology();
    t.check_manifold().map_err(|e| SchemeError::NotManifold { scheme: NAME, source: Box::new(e) })?;
    if let Some(v) = (0..t.num_vertices()).find(|&v| t.vertex_tags()[v] & vertex_tag::ISOLATED != 0) {
        return Err(unsupported("an isolated vertex", format!("vertex {v}")));
    }
    let mesh = prepare(input)?;
    let options = mesh.options();
    if levels == 0 {
        return Ok(EfPlan::new(Some(Control { step: Step::empty(), mesh, slak_of: Vec::new() }), Vec::new(), options));
    }
    let step = masks(&mesh, par);
    let mut ef = Vec::with_capacity(levels as usize);
    let (first, slak_of) = first_level(&mesh)?;
    ef.push(first);
    for l in 1..levels {
        // The finest level is lean: a modeling step completes it.
        let keep = if l + 1 < levels { Keep::Full } else { Keep::Lean };
        let next = refine(ef.last().expect("one level"), keep, par)?;
        ef.push(next);
    }
    Ok(EfPlan::new(Some(Control { mesh, step, slak_of }), ef, options))
}

/// One level on top of `plan`'s finest.
fn step_ef(plan: EfPlan, par: Par) -> Result<EfPlan> {
    let EfPlan { control, mut levels, options, .. } = plan;
    let finest = match levels.pop() {
        Some(l) => l,
        None => {
            // A plan of no levels: its control mesh, one level.
            let Some(c) = control else {
                return Err(SchemeError::Internal { what: NAME, detail: "a plan without levels".into() });
            };
            return build_ef(&c.mesh, 1, par);
        }
    };
    let mut finest = finest;
    if let Some(parent) = levels.last() {
        level::complete(parent, &mut finest, par)?;
    }
    drop(levels);
    let next = refine(&finest, Keep::Lean, par)?;
    Ok(EfPlan::new(None, vec![finest, next], options))
}

impl EfPlan {
    fn new(control: Option<Control>, levels: Vec<EfLevel>, options: Options) -> Self {
        let n = levels.len() + usize::from(control.is_some());
        EfPlan {
            control,
            levels,
            options,
            meshes: (0..n).map(|_| OnceLock::new()).collect(),
            faces: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Index of level `level` in `levels` (`None` for a polygon control
    /// level).
    fn index(&self, level: u32) -> Option<usize> {
        match &self.control {
            Some(_) if level == 0 => None,
            Some(_) => Some(level as usize - 1),
            None => Some(level as usize),
        }
    }

    fn check_level(&self, level: u32) -> Result<()> {
        if level > self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        Ok(())
    }

    fn connectivity_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| {
                4 * l.quads.len()
                    + 8 * l.friends.len()
                    + 4 * l.loop_start.len()
                    + l.edge_sharpness.as_ref().map_or(0, |s| 4 * s.len())
                    + l.vertex_sharpness.as_ref().map_or(0, |s| 4 * s.len())
                    + l.holes.as_ref().map_or(0, Vec::len)
            })
            .sum()
    }

    fn eval_t<T: Float + Send + Sync + Zeroable>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        check_eval_shapes(self, NAME, control.dim(), out.dim());
        let d = control.ncols();
        if self.levels() == 0 {
            out.assign(&control);
            return Ok(());
        }
        let control = control.as_standard_layout();
        let x = control.as_slice().expect("standard layout");
        let nlev = self.levels.len();
        // Where a level without ghosts is the output, it is written
        // straight into `out`; the control data are read in place where
        // they are the first edge-friend level.
        let direct = |l: &EfLevel| !l.has_ghost_vertices();
        let mut out_slice = out.as_slice_mut();
        let mut owned: Vec<T>;
        let mut cur: &[T];
        let first = &self.levels[0];
        match &self.control {
            Some(c) => {
                // The kernels write the first level in their numbering; its
                // rows are then put in the plan's.
                let n1 = first.real.count();
                let mut slak: Vec<T> = try_zeroed_vec(n1 * d, "the points of a level")?;
                crate::slak::eval_level(c.mesh.topology(), &c.step, x, &mut slak, d, par);
                let permute = |o: &mut [T]| {
                    for (new, &old) in c.slak_of.iter().enumerate() {
                        let old = old as usize;
                        o[new * d..(new + 1) * d].copy_from_slice(&slak[old * d..(old + 1) * d]);
                    }
                };
                if nlev == 1 && direct(first) && out_slice.is_some() {
                    permute(out_slice.take().expect("checked"));
                    return Ok(());
                }
                owned = try_zeroed_vec(first.num_vertices * d, "the points of a level")?;
                permute(&mut owned[..n1 * d]);
                cur = &owned;
            }
            None if direct(first) => cur = x,
            None => {
                owned = try_zeroed_vec(first.num_vertices * d, "the points of a level")?;
                scatter_real(first, x, &mut owned, d, par);
                cur = &owned;
            }
        }
        for i in 0..nlev - 1 {
            let (l, next) = (&self.levels[i], &self.levels[i + 1]);
            if i + 2 == nlev && out_slice.is_some() {
                // The finest level straight into the output, its real rows
                // only.
                let map = match &next.real {
                    Real::Prefix(n) if *n == next.num_vertices => None,
                    Real::Map { map, .. } => Some(map.as_slice()),
                    Real::Prefix(_) => {
                        return Err(SchemeError::Internal { what: NAME, detail: "ghosts past a prefix".into() });
                    }
                };
                eval::eval_level(l, next, cur, out_slice.take().expect("checked"), d, map, par);
                return Ok(());
            }
            let mut y = try_zeroed_vec(next.num_vertices * d, "the points of a level")?;
            eval::eval_level(l, next, cur, &mut y, d, None, par);
            owned = y;
            cur = &owned;
        }
        let last = self.levels.last().expect("a level");
        gather_real(last, cur, &mut out, d);
        Ok(())
    }

    /// The full mesh of level `l`, with its edges numbered from the
    /// encoding's edge ids (those of the real quads, in order): no sort,
    /// no search.
    fn derive_mesh(&self, l: &EfLevel, friends: &[[u32; 2]], par: Par) -> Result<Mesh> {
        let nv = l.real.count();
        let nq = l.real_quads;
        let verts = l.real_face_verts();
        let ptr = l.real_face_ptr();
        let edge_of = |c: usize| level::leaving_edge(friends, c);
        // The edge ids the real quads use, numbered in id order.
        let total = 2 * l.num_quads();
        let (new_of, ne) = if l.has_ghosts() {
            let mut used = vec![u32::MAX; total];
            for c in 0..4 * nq {
                used[edge_of(c) as usize] = 0;
            }
            let mut n = 0u32;
            for u in used.iter_mut() {
                if *u == 0 {
                    *u = n;
                    n += 1;
                }
            }
            (Some(used), n as usize)
        } else {
            (None, total)
        };
        let id = |e: u32| new_of.as_ref().map_or(e, |m| m[e as usize]);
        let mut edges = vec![[0u32; 2]; ne];
        let mut corner_edge = vec![0u32; 4 * nq];
        for c in 0..4 * nq {
            let e = edge_of(c);
            let k = id(e) as usize;
            corner_edge[c] = k as u32;
            let (a, b) = (verts[c], verts[(c & !3) | ((c + 1) & 3)]);
            edges[k] = [a.min(b), a.max(b)];
        }
        let mut es = vec![0f32; ne];
        if let Some(s) = &l.edge_sharpness {
            for c in 0..4 * nq {
                let e = edge_of(c);
                es[id(e) as usize] = s[e as usize];
            }
        } else if l.implicit_boundary() {
            // The boundary edges, those of one real quad, are infinitely
            // sharp.
            let mut uses = vec![0u8; ne];
            for c in 0..4 * nq {
                let k = id(edge_of(c)) as usize;
                uses[k] = uses[k].saturating_add(1);
            }
            for (s, &u) in es.iter_mut().zip(&uses) {
                if u == 1 {
                    *s = subla_mesh::tags::SHARPNESS_INFINITE;
                }
            }
        }
        let t = Topology::from_edges(nv, ptr, verts, edges, corner_edge, par)?;
        let mut vs = vec![0f32; nv];
        if let Some(s) = &l.vertex_sharpness {
            for (i, &x) in s.iter().enumerate() {
                if let Some(r) = l.real.of(i as u32) {
                    vs[r as usize] = x;
                }
            }
        }
        Ok(Mesh::from_parts(t, es, vs, l.real_holes(), self.options)?)
    }
}

/// The real rows of `x` into the internal rows of `y` (ghost rows stay 0),
/// in parallel blocks of rows of `y`.
fn scatter_real<T: Copy + Send + Sync>(l: &EfLevel, x: &[T], y: &mut [T], d: usize, par: Par) {
    match &l.real {
        Real::Prefix(n) => y[..n * d].copy_from_slice(&x[..n * d]),
        Real::Map { map, .. } => subla_scheme::kernel::for_rows(y, map.len(), d, par, |r, out| {
            for (row, &m) in out.chunks_exact_mut(d).zip(&map[r]) {
                if m != level::GHOST {
                    let m = m as usize;
                    row.copy_from_slice(&x[m * d..(m + 1) * d]);
                }
            }
        }),
    }
}

/// The real rows of `y` (internal rows of level `l`) into `out`.
fn gather_real<T: Copy>(l: &EfLevel, y: &[T], out: &mut ArrayViewMut2<'_, T>, d: usize) {
    let put = |out: &mut ArrayViewMut2<'_, T>, r: usize, i: usize| {
        for (k, o) in out.row_mut(r).iter_mut().enumerate() {
            *o = y[i * d + k];
        }
    };
    match &l.real {
        Real::Prefix(n) => {
            if let Some(o) = out.as_slice_mut() {
                o.copy_from_slice(&y[..n * d]);
            } else {
                for r in 0..*n {
                    put(out, r, r);
                }
            }
        }
        Real::Map { map, .. } => {
            for (i, &m) in map.iter().enumerate() {
                if m != level::GHOST {
                    put(out, m as usize, i);
                }
            }
        }
    }
}

impl Plan for EfPlan {
    fn name(&self) -> &'static str {
        NAME
    }
    fn levels(&self) -> u32 {
        (self.levels.len() + usize::from(self.control.is_some())) as u32 - 1
    }
    fn level_len(&self, level: u32) -> usize {
        match self.index(level) {
            None => self.control.as_ref().map_or(0, |c| c.mesh.num_vertices()),
            Some(i) => self.levels.get(i).map_or(0, |l| l.real.count()),
        }
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
        match (self.index(level), &self.control) {
            (None, Some(c)) => crate::operator::level_operator_rows(c.mesh.topology(), &c.step, &c.slak_of, par),
            (Some(i), _) => eval::level_operator(&self.levels[i], &self.levels[i + 1], None, par),
            (None, None) => unreachable!("level 0 of a plan without a control mesh has an index"),
        }
    }
    fn operator_rows(&self, level: u32, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        check_rows(rows, self.level_len(level + 1))?;
        match (self.index(level), &self.control) {
            (None, Some(c)) => {
                let slak: Vec<u32> = rows.iter().map(|&r| c.slak_of[r as usize]).collect();
                crate::operator::level_operator_rows(c.mesh.topology(), &c.step, &slak, par)
            }
            (Some(i), _) => eval::level_operator(&self.levels[i], &self.levels[i + 1], Some(rows), par),
            (None, None) => unreachable!("level 0 of a plan without a control mesh has an index"),
        }
    }
    fn closed_form(&self, par: Par) -> Result<Option<Box<dyn ClosedForm + '_>>> {
        // Only from a polygon control mesh: a modeling step's plan starts at
        // a refined level, whose faces are not the patches' control faces.
        let Some(c) = &self.control else { return Ok(None) };
        Ok(regular::regular_rows(&c.mesh, &self.levels, par)?.map(|r| Box::new(r) as Box<dyn ClosedForm>))
    }
    fn limit(&self, par: Par) -> Result<CsrMat<f64>> {
        crate::operator::limit_operator(self.refined(self.levels(), par)?, par)
    }
    fn refined(&self, level: u32, par: Par) -> Result<&Mesh> {
        self.check_level(level)?;
        match (self.index(level), &self.control) {
            (None, Some(c)) => Ok(&c.mesh),
            (Some(i), _) => {
                let cell = &self.meshes[level as usize];
                if let Some(m) = cell.get() {
                    return Ok(m);
                }
                let l = &self.levels[i];
                let m = if l.is_lean() {
                    // A lean finest level: its friends from its parent, for
                    // this once.
                    let (friends, _) = level::links(&self.levels[i - 1], l, par)?;
                    self.derive_mesh(l, &friends, par)?
                } else {
                    self.derive_mesh(l, &l.friends, par)?
                };
                Ok(cell.get_or_init(|| m))
            }
            (None, None) => unreachable!("level 0 of a plan without a control mesh has an index"),
        }
    }
    fn faces(&self, level: u32, par: Par) -> Result<Faces<'_>> {
        self.check_level(level)?;
        let Some(i) = self.index(level) else {
            return self.refined(level, par).map(Faces::of);
        };
        let l = &self.levels[i];
        let lists = self.faces[level as usize].get_or_init(|| FaceLists {
            // A prefix numbering leaves the quads as they are.
            verts: matches!(l.real, Real::Map { .. }).then(|| l.real_face_verts()),
            holes: l.real_holes(),
        });
        Ok(Faces::uniform(
            l.real.count(),
            4,
            lists.verts.as_deref().unwrap_or(&l.quads[..4 * l.real_quads]),
            &lists.holes,
        ))
    }
}

#[cfg(test)]
mod tests;
