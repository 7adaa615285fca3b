//! Sparse (feature-adaptive) Catmull-Clark or Loop refinement: each level refines
//! only the faces selected at the level above, and keeps around them the
//! neighbouring children that the next level and the patches need
//! (OpenSubdiv's sparse `Vtr::internal::Refinement`: a selected face
//! marks its vertices and edges; every child of a selected component is
//! *complete*, the children of components next to a selected vertex are
//! *neighbours*, kept but incomplete).
//!
//! # A level
//! ```text
//!   level k:   vertices 0..n_k, faces (quads below level 0), tags,
//!              complete[v], selected[f]
//!   level k+1: children of selected vertices, then face points,
//!              then edge points (each a row of weights over level k)
//! ```
//! Loop splits each selected triangle into four (OpenSubdiv's
//! `Vtr::internal::TriRefinement`): there are no face points, and a
//! triangle that is not selected but has a selected corner keeps the child
//! at that corner, plus its middle child when an edge is shared with a
//! selected triangle (a *transitional* edge).
//!
//! Each level is a [`Mesh`] with effective sharpness; its fringe (edges
//! whose faces the level does not hold) looks like a boundary but is never
//! read: only complete vertices are classified, and only components next
//! to a selected vertex are refined.

use rayon::prelude::*;
use subla_algebra::Par;
use subla_catmark::StepView;
use subla_loop::StepView as LoopStepView;
use subla_mesh::{CreaseMethod, Mesh, Topology};
use subla_scheme::sdc::{dec, prepare_sharpness, tau_at};

use crate::AdaptiveError;
use crate::tags::{VTag, face_has_features, vertex_tags};

/// The subdivision scheme of a sparse refinement.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Catmull-Clark: quads (any polygon at the control level), bicubic
    /// B-spline patches.
    #[default]
    Catmark,
    /// Loop: triangles only, quartic box-spline patches.
    Loop,
}

/// Where a face of a level sits in its ptex face: the ptex face, the
/// integer origin of its square at `depth`, and whether the ptex face is a
/// sub-face of a control face that is not a quad (then the square spans
/// `1 / 2^(depth-1)` of the ptex face, else `1 / 2^depth`).
///
/// For a Loop triangle, `(u, v)` are OpenSubdiv's `PatchParam` values: the
/// triangle's first corner for an upright triangle (`u + v < 2^depth`), and
/// `2^depth` minus it for a triangle rotated by 180 degrees (the middle
/// child of an upright one, and so on), see
/// [`PatchParam::is_triangle_rotated`](crate::basis::PatchParam::is_triangle_rotated).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FacePtex {
    /// Ptex face.
    pub ptex: u32,
    /// Origin of the square along u, in squares.
    pub u: u32,
    /// Origin of the square along v, in squares.
    pub v: u32,
    /// Refinement level of the face.
    pub depth: u8,
    /// The ptex face is a sub-face of a control face that is not a quad.
    pub non_quad: bool,
}

/// One level of a sparse refinement.
#[derive(Clone, Debug)]
pub struct Level {
    pub(crate) mesh: Mesh,
    pub(crate) complete: Vec<bool>,
    pub(crate) tags: Vec<VTag>,
    pub(crate) selected: Vec<bool>,
    /// Whether each face's parent was selected (all faces of the control
    /// level): OpenSubdiv's complete child faces.
    pub(crate) from_selected: Vec<bool>,
    /// Ptex placement of each face; `None` for control faces that are not
    /// quads (they are no patch; their children are).
    pub(crate) ptex: Vec<Option<FacePtex>>,
    /// Per edge, whether it is non-manifold as OpenSubdiv tags it: at the
    /// control level from the topology, below inherited by the halves of a
    /// non-manifold parent edge (so the halves of a degenerate edge stay
    /// non-manifold, though each bounds one face). Empty where no edge is.
    pub(crate) nm_edges: Vec<bool>,
}

impl Level {
    /// The level's mesh (its faces, with effective sharpness).
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.mesh.num_vertices()
    }
    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.mesh.num_faces()
    }
    /// Whether the level holds the whole neighbourhood of vertex `v`.
    pub fn is_complete(&self, v: usize) -> bool {
        self.complete[v]
    }
    /// Whether face `f` is refined into the next level.
    pub fn is_selected(&self, f: usize) -> bool {
        self.selected.get(f).copied().unwrap_or(false)
    }
    /// Ptex placement of face `f` (`None` for a control face that is not a
    /// quad).
    pub fn face_ptex(&self, f: usize) -> Option<FacePtex> {
        self.ptex[f]
    }
}

/// Rows of weights: level `k+1`'s vertices over level `k`'s.
#[derive(Clone, Debug, Default)]
pub struct Stencils {
    pub(crate) offsets: Vec<u32>,
    pub(crate) columns: Vec<u32>,
    pub(crate) weights: Vec<f64>,
}

impl Stencils {
    /// Row `i`: columns and weights.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        (&self.columns[a..b], &self.weights[a..b])
    }
    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len() - 1
    }
    /// Empty rows, with room for `rows` of about nine entries.
    fn with_rows(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Stencils { offsets, columns: Vec::with_capacity(rows * 9), weights: Vec::with_capacity(rows * 9) }
    }

    /// Appends `row`, its repeated columns summed in the order they were
    /// pushed and the columns sorted. `at` is scratch over the parent's
    /// vertices, all `NONE` on entry and on return: it finds a column's
    /// entry in the row without a search or a sort of the repeats (a vertex
    /// row names each neighbour several times, once per face around it).
    fn push_row(&mut self, row: &mut Vec<(u32, f64)>, at: &mut [u32]) {
        let start = self.columns.len();
        for &(c, w) in row.iter() {
            let slot = &mut at[c as usize];
            if *slot == NONE {
                *slot = self.columns.len() as u32;
                self.columns.push(c);
                self.weights.push(w);
            } else {
                self.weights[*slot as usize] += w;
            }
        }
        for &c in &self.columns[start..] {
            at[c as usize] = NONE;
        }
        self.sort_from(start);
        self.offsets.push(self.columns.len() as u32);
        row.clear();
    }

    /// Sorts the entries from `start` on by column. Few columns: an
    /// insertion sort, without the buffer a library sort may allocate.
    fn sort_from(&mut self, start: usize) {
        let (cols, ws) = (&mut self.columns[start..], &mut self.weights[start..]);
        for i in 1..cols.len() {
            let (c, w) = (cols[i], ws[i]);
            let mut j = i;
            while j > 0 && cols[j - 1] > c {
                cols[j] = cols[j - 1];
                ws[j] = ws[j - 1];
                j -= 1;
            }
            cols[j] = c;
            ws[j] = w;
        }
    }

    /// Appends `row`, whose weights are already the sums
    /// [`Stencils::push_row`] would make of the entries it stands for, with
    /// its columns sorted; `false` (nothing appended, `row` kept) if a
    /// column repeats after all, so that the caller pushes the entries one
    /// by one instead.
    fn push_distinct(&mut self, row: &mut Vec<(u32, f64)>) -> bool {
        let start = self.columns.len();
        self.columns.extend(row.iter().map(|x| x.0));
        self.weights.extend(row.iter().map(|x| x.1));
        self.sort_from(start);
        if self.columns[start..].windows(2).any(|w| w[0] == w[1]) {
            self.columns.truncate(start);
            self.weights.truncate(start);
            return false;
        }
        self.offsets.push(self.columns.len() as u32);
        row.clear();
        true
    }

    /// `n` rows, row `k` the entries `fill(k, row, false)` pushes (columns
    /// below `nv`), summed and sorted as [`Stencils::push_row`] does. Where
    /// `fill` returns `true`, it has pushed the sums themselves, one entry
    /// per column (a smooth row of quads, whose repeats it knows); should a
    /// column repeat after all (a degenerate neighbourhood), the row is
    /// made again from `fill(k, row, true)`, which pushes the entries one
    /// by one. With [`Par::Rayon`], blocks of rows are made in parallel
    /// and joined in order: every row is the same, bit for bit, whatever
    /// the threads.
    fn from_rows(
        n: usize,
        nv: usize,
        par: Par,
        fill: impl Fn(usize, &mut Vec<(u32, f64)>, bool) -> bool + Sync,
    ) -> Stencils {
        // Rows per block: enough that a block's scratch over the parent's
        // vertices costs little beside its rows.
        Self::from_rows_in_blocks(n, nv, par, 1 << 14, fill)
    }

    /// [`Stencils::from_rows`] in blocks of `block_rows` rows. In parallel,
    /// the blocks' rows are copied into one array at the end (the stencils
    /// are held twice for that moment).
    fn from_rows_in_blocks(
        n: usize,
        nv: usize,
        par: Par,
        block_rows: usize,
        fill: impl Fn(usize, &mut Vec<(u32, f64)>, bool) -> bool + Sync,
    ) -> Stencils {
        let block = |rows: std::ops::Range<usize>| {
            let mut st = Stencils::with_rows(rows.len());
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(64);
            let mut at = vec![NONE; nv];
            for k in rows {
                if fill(k, &mut row, false) {
                    if st.push_distinct(&mut row) {
                        #[cfg(debug_assertions)]
                        {
                            // The sums are the entries one by one, bit for bit.
                            let mut check = Stencils::with_rows(1);
                            fill(k, &mut row, true);
                            check.push_row(&mut row, &mut at);
                            let last = st.num_rows() - 1;
                            let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            let ((c, w), (cc, cw)) = (st.row(last), check.row(0));
                            debug_assert!(c == cc && bits(w) == bits(cw), "row {k}: {c:?} {w:?} != {cc:?} {cw:?}");
                        }
                        continue;
                    }
                    row.clear();
                    fill(k, &mut row, true);
                }
                st.push_row(&mut row, &mut at);
            }
            st
        };
        if par == Par::Seq || n <= block_rows {
            return block(0..n);
        }
        let parts: Vec<Stencils> = (0..n.div_ceil(block_rows))
            .into_par_iter()
            .map(|b| block(b * block_rows..n.min((b + 1) * block_rows)))
            .collect();
        // Joined in order: each block's entries after the ones before.
        let nnz: usize = parts.iter().map(|p| p.columns.len()).sum();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut columns = Vec::with_capacity(nnz);
        let mut weights = Vec::with_capacity(nnz);
        for p in &parts {
            let base = columns.len() as u32;
            offsets.extend(p.offsets[1..].iter().map(|&o| base + o));
            columns.extend_from_slice(&p.columns);
            weights.extend_from_slice(&p.weights);
        }
        Stencils { offsets, columns, weights }
    }
}

/// The parent component of each child of a level, children in order:
/// vertex children (by parent vertex), then face points (by face), then
/// edge points (by edge); with where the face points and the edge points
/// start.
struct ChildSources {
    parent: Vec<u32>,
    faces_from: usize,
    edges_from: usize,
}

impl ChildSources {
    fn new(vchild: &[u32], fchild: &[u32], echild: &[u32]) -> ChildSources {
        let mut parent = Vec::new();
        let mut take = |numbers: &[u32]| {
            parent.extend(numbers.iter().enumerate().filter(|x| *x.1 != NONE).map(|x| x.0 as u32));
            parent.len()
        };
        let faces_from = take(vchild);
        let edges_from = take(fchild);
        take(echild);
        ChildSources { parent, faces_from, edges_from }
    }
}

/// A sparse refinement: the levels and the stencils between them.
#[derive(Clone, Debug)]
pub struct SparseRefinement {
    pub(crate) scheme: Scheme,
    pub(crate) levels: Vec<Level>,
    pub(crate) stencils: Vec<Stencils>,
    pub(crate) num_ptex: u32,
    /// Per ptex face: a sub-face of a control face that is not a quad.
    pub(crate) sub_faces: Vec<bool>,
}

impl SparseRefinement {
    /// Refines `mesh` around its features up to `isolation` levels
    /// (OpenSubdiv's `TopologyRefiner::RefineAdaptive` with default
    /// options), considering at the control level only the faces in
    /// `selected_faces` when given (`RefineAdaptive(options, faces)`).
    /// Stops early when a level selects nothing.
    ///
    /// # Errors
    /// [`AdaptiveError::IsolationLevel`] outside 1–10;
    /// [`AdaptiveError::NoSuchFace`] for a selected face out of range.
    pub fn build(mesh: &Mesh, isolation: u32, selected_faces: Option<&[u32]>) -> Result<Self, AdaptiveError> {
        Self::build_scheme(Scheme::Catmark, mesh, isolation, selected_faces)
    }

    /// [`SparseRefinement::build`] for Loop subdivision (OpenSubdiv's
    /// `RefineAdaptive` of a `SCHEME_LOOP` refiner).
    ///
    /// # Errors
    /// Those of [`SparseRefinement::build`], and
    /// [`subla_scheme::SchemeError::NotTriangles`] (as
    /// [`AdaptiveError::Scheme`]) for a face that is not a triangle.
    pub fn build_loop(mesh: &Mesh, isolation: u32, selected_faces: Option<&[u32]>) -> Result<Self, AdaptiveError> {
        Self::build_scheme(Scheme::Loop, mesh, isolation, selected_faces)
    }

    /// [`SparseRefinement::build`] with the scheme given.
    ///
    /// # Errors
    /// See [`SparseRefinement::build`] and [`SparseRefinement::build_loop`].
    pub fn build_scheme(
        scheme: Scheme,
        mesh: &Mesh,
        isolation: u32,
        selected_faces: Option<&[u32]>,
    ) -> Result<Self, AdaptiveError> {
        Self::build_within(scheme, mesh, isolation, selected_faces, u64::MAX)
    }

    /// [`SparseRefinement::build_scheme`] within a memory budget: before each
    /// level is built, its size is known from the marking (vertices and
    /// faces), and a level predicted to take the refinement over `budget`
    /// bytes is refused before anything of it is allocated. Features can
    /// make every face refine at every level (semi-sharp creases
    /// everywhere), so a deep isolation level can grow like uniform
    /// refinement.
    ///
    /// # Errors
    /// As [`SparseRefinement::build_scheme`]; [`AdaptiveError::OverBudget`]
    /// naming the level and the bytes predicted.
    pub fn build_within(
        scheme: Scheme,
        mesh: &Mesh,
        isolation: u32,
        selected_faces: Option<&[u32]>,
        budget: u64,
    ) -> Result<Self, AdaptiveError> {
        if !(1..=10).contains(&isolation) {
            return Err(AdaptiveError::IsolationLevel { level: isolation });
        }
        let t = mesh.topology();
        if let Some(&f) = selected_faces.and_then(|s| s.iter().find(|&&f| f as usize >= t.num_faces())) {
            return Err(AdaptiveError::NoSuchFace { face: f, num_faces: t.num_faces() });
        }
        if scheme == Scheme::Loop {
            subla_loop::split::check_triangles(t)?;
        }
        let base = prepare_sharpness(
            mesh,
            mesh.edge_sharpness().to_vec(),
            mesh.vertex_sharpness().to_vec(),
            mesh.holes().to_vec(),
            mesh.options(),
        )?;
        let complete = vec![true; base.num_vertices()];
        let nm_edges = if base.topology().is_manifold() {
            Vec::new()
        } else {
            let et = base.topology().edge_tags();
            et.iter().map(|&x| x & subla_mesh::topology::edge_tag::NON_MANIFOLD != 0).collect()
        };
        let tags = vertex_tags(&base, &complete, true, scheme, &[]);
        let mut ptex = Vec::with_capacity(base.num_faces());
        let mut next_ptex = 0u32;
        let mut sub_faces = Vec::with_capacity(base.num_faces());
        let regular_size = if scheme == Scheme::Loop { 3 } else { 4 };
        for f in 0..base.num_faces() {
            let n = base.topology().face_order(f) as u32;
            if n == regular_size {
                ptex.push(Some(FacePtex { ptex: next_ptex, u: 0, v: 0, depth: 0, non_quad: false }));
                next_ptex += 1;
                sub_faces.push(false);
            } else {
                ptex.push(None);
                next_ptex += n;
                sub_faces.extend(std::iter::repeat_n(true, n as usize));
            }
        }
        if next_ptex > crate::basis::PatchParam::MAX_FACE_ID {
            return Err(AdaptiveError::TooLarge { what: "a patch table of more than 2^28 ptex faces" });
        }
        let from_selected = vec![true; base.num_faces()];
        let mut levels =
            vec![Level { mesh: base, complete, tags, selected: Vec::new(), from_selected, ptex, nm_edges }];
        let mut stencils = Vec::new();
        // The control level is the caller's; the refined levels are charged.
        let mut used = 0u64;
        let base_ptex_start = ptex_starts(levels[0].mesh.topology());
        for depth in 0..isolation {
            let level = levels.last_mut().expect("the control level");
            let nf = level.mesh.num_faces();
            let holes = level.mesh.holes();
            let (mesh, tags) = (&level.mesh, &level.tags);
            let has = |f: usize| !holes[f] && face_has_features(mesh, tags, f, depth, scheme);
            let selected: Vec<bool> = match (depth, selected_faces) {
                (0, Some(s)) => {
                    let mut sel = vec![false; nf];
                    for &f in s {
                        sel[f as usize] = has(f as usize);
                    }
                    sel
                }
                _ => (0..nf).into_par_iter().with_min_len(1 << 10).map(has).collect(),
            };
            if !selected.iter().any(|&s| s) {
                break;
            }
            level.selected = selected;
            let (child, st) = match scheme {
                Scheme::Catmark => refine(level, depth, &base_ptex_start, &mut used, budget)?,
                Scheme::Loop => refine_tri(level, depth, &mut used, budget)?,
            };
            levels.push(child);
            stencils.push(st);
        }
        Ok(SparseRefinement { scheme, levels, stencils, num_ptex: next_ptex, sub_faces })
    }

    /// The subdivision scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The levels, control level first.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }
    /// The stencils of level `k+1` over level `k`.
    pub fn stencils(&self) -> &[Stencils] {
        &self.stencils
    }
    /// The deepest level reached.
    pub fn max_level(&self) -> usize {
        self.levels.len() - 1
    }
    /// Number of ptex faces of the control mesh.
    pub fn num_ptex_faces(&self) -> u32 {
        self.num_ptex
    }
    /// Whether ptex face `ptex` is a sub-face of a control face that is not
    /// a quad (Catmull-Clark); `false` out of range.
    pub fn ptex_is_sub_face(&self, ptex: u32) -> bool {
        self.sub_faces.get(ptex as usize).copied().unwrap_or(false)
    }
    /// Vertices per level.
    pub fn vertices_per_level(&self) -> Vec<usize> {
        self.levels.iter().map(Level::num_vertices).collect()
    }
}

/// The first ptex face of each control face.
fn ptex_starts(t: &Topology) -> Vec<u32> {
    let mut out = Vec::with_capacity(t.num_faces());
    let mut next = 0u32;
    for f in 0..t.num_faces() {
        out.push(next);
        let n = t.face_order(f) as u32;
        next += if n == 4 { 1 } else { n };
    }
    out
}

const NONE: u32 = u32::MAX;

/// Parallel work where there is more than one thread to do it: on one
/// thread, the parallel paths only add their bookkeeping.
fn par() -> Par {
    if rayon::current_num_threads() > 1 { Par::Rayon } else { Par::Seq }
}

/// `a()` and `b()`, side by side where there is more than one thread.
fn both<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    match par() {
        Par::Rayon => rayon::join(a, b),
        Par::Seq => (a(), b()),
    }
}

/// Refines the selected faces of `p` (and the neighbours they need).
/// The vertices of the selected faces of `p` (`s = M q`, Eq. 17) and the
/// faces that get children: selected, or around a selected vertex
/// (`Mᵀ s`, Eq. 16) — by walking the faces.
fn marks(p: &Level) -> (Vec<bool>, Vec<bool>) {
    let t = p.mesh.topology();
    let mut vsel = vec![false; t.num_vertices()];
    for f in (0..t.num_faces()).filter(|&f| p.selected[f]) {
        for &v in t.face(f) {
            vsel[v as usize] = true;
        }
    }
    let fmarked = (0..t.num_faces()).map(|f| p.selected[f] || t.face(f).iter().any(|&v| vsel[v as usize])).collect();
    (vsel, fmarked)
}

/// [`marks`] as the paper writes it: mapped SpMVs with the mesh matrix.
#[cfg(test)]
fn marks_by_algebra(p: &Level) -> Result<(Vec<bool>, Vec<bool>), AdaptiveError> {
    let m = p.mesh.topology().mesh_matrix()?;
    let vsel = crate::select::vertices_of_faces(m.as_ref(), &p.selected, Par::Seq);
    let around = crate::select::faces_around_vertices(m.as_ref(), &vsel, Par::Seq);
    let fmarked = around.iter().zip(&p.selected).map(|(&a, &s)| a || s).collect();
    Ok((vsel, fmarked))
}

/// Bytes a level of `vertices` and `faces` (with its stencils and its
/// patches later) takes at most, about: its topology (corners, edges and
/// their uses, vertex relations, tags), sharpness, stencil rows and the
/// patch points of its faces.
fn level_bytes(vertices: usize, faces: usize, corners: usize) -> u64 {
    let (v, f, c) = (vertices as u64, faces as u64, corners as u64);
    v * (4 * 8 + 8 * 12 + 32) + f * (8 + 4 * 16 + 16) + c * 4 * 10
}

/// Refuses a level that would take the refinement over its budget.
fn charge(
    used: &mut u64,
    level: u32,
    vertices: usize,
    faces: usize,
    corners: usize,
    budget: u64,
) -> Result<(), AdaptiveError> {
    let bytes = level_bytes(vertices, faces, corners);
    *used = used.saturating_add(bytes);
    if *used > budget {
        return Err(AdaptiveError::OverBudget { level, bytes: *used, budget });
    }
    Ok(())
}

/// The children a level keeps, numbered as the refined level orders its
/// vertices: children of the selected vertices, then the face points of
/// the marked faces (for a quad split), then the edge points of the
/// selected edges and of the edges with a selected end; `complete` marks
/// the children of selected components.
struct Children {
    vchild: Vec<u32>,
    fchild: Vec<u32>,
    echild: Vec<u32>,
    complete: Vec<bool>,
}

fn number_children(p: &Level, vsel: &[bool], face_points: Option<&[bool]>) -> Children {
    let t = p.mesh.topology();
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let (fptr, cedge) = (t.face_ptr(), t.corner_edges());
    let mut esel = vec![false; ne];
    for f in (0..nf).filter(|&f| p.selected[f]) {
        for c in fptr[f] as usize..fptr[f + 1] as usize {
            esel[cedge[c] as usize] = true;
        }
    }
    let mut next = 0u32;
    let mut number = |yes: bool| {
        if yes {
            next += 1;
            next - 1
        } else {
            NONE
        }
    };
    let vchild: Vec<u32> = (0..nv).map(|v| number(vsel[v])).collect();
    let fchild: Vec<u32> = (0..nf).map(|f| number(face_points.is_some_and(|m| m[f]))).collect();
    let echild: Vec<u32> = (0..ne)
        .map(|e| {
            let [a, b] = t.edge(e);
            number(esel[e] || vsel[a as usize] || vsel[b as usize])
        })
        .collect();
    let mut complete = vec![false; next as usize];
    for &c in vchild.iter().filter(|&&c| c != NONE) {
        complete[c as usize] = true;
    }
    for (f, &c) in fchild.iter().enumerate() {
        if c != NONE && p.selected[f] {
            complete[c as usize] = true;
        }
    }
    for (e, &c) in echild.iter().enumerate() {
        if c != NONE && esel[e] {
            complete[c as usize] = true;
        }
    }
    Children { vchild, fchild, echild, complete }
}

fn refine(
    p: &Level,
    depth: u32,
    base_ptex_start: &[u32],
    used: &mut u64,
    budget: u64,
) -> Result<(Level, Stencils), AdaptiveError> {
    let m = &p.mesh;
    let t = m.topology();
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let fptr = t.face_ptr();
    let cedge = t.corner_edges();

    // Selection of vertices and edges from the selected faces, and the faces
    // that get children (Eq. 16–17, specialised; `marks_by_algebra` is the
    // same with the mesh matrix); the children numbered.
    let (vsel, fmarked) = marks(p);
    let Children { vchild, fchild, echild, complete } = number_children(p, &vsel, Some(&fmarked));
    let n_child = complete.len();

    // Child edges, numbered from their parents (as OpenSubdiv's
    // `Vtr::internal::QuadRefinement` does) so that the child level's
    // connectivity needs no search for edges: first the halves of the parent
    // edges (the half at a selected end: every face there has a child at
    // that corner, which uses it), then the edges from a face point to the
    // edge points of its face (kept where a child face on either side is).
    let mut ce = ChildEdges::halves(p, &vchild, &echild, 2 * n_child);
    let mut inner = vec![NONE; t.face_verts().len()];
    for f in (0..nf).filter(|&f| fchild[f] != NONE) {
        let verts = t.face(f);
        let n = verts.len();
        let c0 = fptr[f] as usize;
        for j in 0..n {
            let kept = |i: usize| p.selected[f] || vsel[verts[i % n] as usize];
            if kept(j) || kept(j + 1) {
                inner[c0 + j] = ce.push_inner([echild[cedge[c0 + j] as usize], fchild[f]]);
            }
        }
    }
    let half_at = |e: u32, v: u32, arriving: bool| ce.half_at(t, e, v, arriving);

    // Child faces.
    let mut face_ptr = Vec::with_capacity(4 * n_child + 1);
    face_ptr.push(0u32);
    let mut face_verts = Vec::with_capacity(4 * n_child);
    let mut corner_edge = Vec::with_capacity(4 * n_child);
    let mut holes = Vec::with_capacity(n_child);
    let mut ptex = Vec::with_capacity(n_child);
    let mut from_selected = Vec::with_capacity(n_child);
    for f in 0..nf {
        let verts = t.face(f);
        let n = verts.len();
        let c0 = fptr[f] as usize;
        for j in 0..n {
            if !(p.selected[f] || vsel[verts[j] as usize]) {
                continue;
            }
            let jp = (j + n - 1) % n;
            let vv = vchild[verts[j] as usize];
            let en = echild[cedge[c0 + j] as usize];
            let fc = fchild[f];
            let ep = echild[cedge[c0 + jp] as usize];
            let (ej, ejp) = (cedge[c0 + j], cedge[c0 + jp]);
            let ce = [half_at(ej, verts[j], false), inner[c0 + j], inner[c0 + jp], half_at(ejp, verts[j], true)];
            let mut q = [0u32; 4];
            let mut qe = [0u32; 4];
            if n == 4 {
                for (i, (&x, &y)) in [vv, en, fc, ep].iter().zip(&ce).enumerate() {
                    q[(j + i) % 4] = x;
                    qe[(j + i) % 4] = y;
                }
            } else {
                q = [vv, en, fc, ep];
                qe = ce;
            }
            face_verts.extend_from_slice(&q);
            corner_edge.extend_from_slice(&qe);
            face_ptr.push(face_verts.len() as u32);
            holes.push(m.holes()[f]);
            from_selected.push(p.selected[f]);
            ptex.push(Some(match p.ptex[f] {
                Some(pp) => {
                    let (du, dv) = [(0, 0), (1, 0), (1, 1), (0, 1)][j];
                    FacePtex {
                        ptex: pp.ptex,
                        u: 2 * pp.u + du,
                        v: 2 * pp.v + dv,
                        depth: pp.depth + 1,
                        non_quad: pp.non_quad,
                    }
                }
                None => FacePtex { ptex: base_ptex_start[f] + j as u32, u: 0, v: 0, depth: 1, non_quad: true },
            }));
        }
    }
    charge(used, depth + 1, n_child, face_ptr.len() - 1, face_verts.len(), budget)?;

    // Stencils, from the masks of the parent level: rows in the children's
    // order (vertex children, face points, edge points), made while the
    // child's connectivity is (they read the parent level only).
    let stencils = || {
        let step = StepView::of_level(m, par());
        let view = step.view();
        let (emask, vmask) =
            mask_index(ne, nv, view.edge_masks.iter().map(|m| m.edge), view.vertex_masks.iter().map(|m| m.vertex));
        let face_point = |f: usize, w: f64, row: &mut Vec<(u32, f64)>| {
            let verts = t.face(f);
            let wf = w / verts.len() as f64;
            row.extend(verts.iter().map(|&v| (v, wf)));
        };
        let src = ChildSources::new(&vchild, &fchild, &echild);
        let quad = |f: usize| t.face_ptr()[f + 1] - t.face_ptr()[f] == 4;
        let face_of = |c: u32| t.corner_faces()[c as usize] as usize;
        Stencils::from_rows(n_child, nv, par(), |k, row, one_by_one| {
            let x = src.parent[k] as usize;
            if k < src.faces_from {
                let v = x;
                let inc = t.vertex_edges(v);
                let n = inc.len() as f64;
                let mask = view.vertex_masks.get(vmask[v] as usize);
                let corners = t.vertex_corners(v);
                // The smooth mask inside a ring of quads: the vertex
                // `cv + n·w/4`, each neighbour `w` and `w/4` from each of
                // its two faces, each diagonal `w/4` (added in the order
                // the entries one by one would add them).
                if !one_by_one
                    && mask.is_none()
                    && corners.len() == inc.len()
                    && inc.iter().all(|&e| t.edge_corners(e as usize).len() == 2)
                    && corners.iter().all(|&c| quad(face_of(c)))
                {
                    let w = 1.0 / (n * n);
                    let wf = w / 4.0;
                    let mut wv = (n - 2.0) / n;
                    for _ in corners {
                        wv += wf;
                    }
                    row.push((v as u32, wv));
                    for &e in inc {
                        let [a, b] = t.edge(e as usize);
                        row.push((if a as usize == v { b } else { a }, (w + wf) + wf));
                    }
                    for &c in corners {
                        let f = face_of(c);
                        let j = c as usize - t.face_ptr()[f] as usize;
                        row.push((t.face(f)[(j + 2) % 4], wf));
                    }
                    return true;
                }
                let (cv, cs, ce, ua, ub) = match mask {
                    Some(mk) => (mk.cv, mk.cs, mk.ce, mk.ua, mk.ub),
                    None => ((n - 2.0) / n, 1.0, 0.0, v as u32, v as u32),
                };
                row.push((v as u32, cv));
                if cs != 0.0 {
                    let w = cs / (n * n);
                    for &e in inc {
                        let [x, y] = t.edge(e as usize);
                        row.push((if x as usize == v { y } else { x }, w));
                    }
                    for &c in corners {
                        face_point(face_of(c), w, row);
                    }
                }
                if ce != 0.0 {
                    row.push((ua, ce));
                    row.push((ub, ce));
                }
                false
            } else if k < src.edges_from {
                face_point(x, 1.0, row);
                // A quad's four corners, each a quarter.
                !one_by_one && quad(x)
            } else {
                let e = x;
                let [a, b] = t.edge(e);
                let (alpha, beta) = view.edge_masks.get(emask[e] as usize).map_or((0.25, 0.25), |m| (m.alpha, m.beta));
                let uses = t.edge_corners(e);
                if !one_by_one && (beta == 0.0 || (uses.len() == 2 && uses.iter().all(|&c| quad(face_of(c))))) {
                    // The ends `α` and `β/4` from each face, the faces'
                    // other corners `β/4`.
                    let q = beta / 4.0;
                    let end = if beta == 0.0 { alpha } else { (alpha + q) + q };
                    row.push((a, end));
                    row.push((b, end));
                    if beta != 0.0 {
                        for &c in uses {
                            let f = face_of(c);
                            let j = c as usize - t.face_ptr()[f] as usize;
                            let fv = t.face(f);
                            row.push((fv[(j + 2) % 4], q));
                            row.push((fv[(j + 3) % 4], q));
                        }
                    }
                    return true;
                }
                row.push((a, alpha));
                row.push((b, alpha));
                if beta != 0.0 {
                    for &c in uses {
                        face_point(face_of(c), beta, row);
                    }
                }
                false
            }
        })
    };
    let (child, st) =
        both(|| ce.child_mesh(true, m, &vchild, n_child, face_ptr, face_verts, corner_edge, holes), stencils);
    let (child_mesh, nm_edges) = child?;
    debug_assert_eq!(st.num_rows(), n_child);
    let inherited = inherited_non_manifold(p, &vchild, &echild, n_child);
    let tags = vertex_tags(&child_mesh, &complete, false, Scheme::Catmark, &inherited);
    Ok((Level { mesh: child_mesh, complete, tags, selected: Vec::new(), from_selected, ptex, nm_edges }, st))
}

/// The edges of a refined level, numbered from their parents (as
/// OpenSubdiv's `Vtr::internal::QuadRefinement` and `TriRefinement` do), so
/// that the child level's connectivity needs no search for edges: first
/// the halves of the parent edges (the half at an end with a child: every
/// face there has a child at that corner, which uses it), then the edges
/// inside the parent faces, with their sharpness and non-manifold flags.
struct ChildEdges {
    edges: Vec<[u32; 2]>,
    sharpness: Vec<f32>,
    /// As [`Level::nm_edges`]: empty where the parent's is.
    nm: Vec<bool>,
    /// `half[e][k]`: the child edge of parent edge `e` at its end `k`.
    half: Vec<[u32; 2]>,
    inherit_nm: bool,
}

impl ChildEdges {
    /// The halves of `p`'s edges with an edge point (`echild`) at the ends
    /// with a vertex child (`vchild`).
    fn halves(p: &Level, vchild: &[u32], echild: &[u32], capacity: usize) -> ChildEdges {
        let m = &p.mesh;
        let t = m.topology();
        let es = m.edge_sharpness();
        let chaikin = m.options().crease_method == CreaseMethod::Chaikin;
        let inherit_nm = !p.nm_edges.is_empty();
        let mut c = ChildEdges {
            edges: Vec::with_capacity(capacity),
            sharpness: Vec::with_capacity(capacity),
            nm: Vec::new(),
            half: vec![[NONE; 2]; t.num_edges()],
            inherit_nm,
        };
        for e in (0..t.num_edges()).filter(|&e| echild[e] != NONE) {
            for (k, &end) in t.edge(e).iter().enumerate() {
                if vchild[end as usize] != NONE {
                    c.half[e][k] = c.edges.len() as u32;
                    c.edges.push([vchild[end as usize], echild[e]]);
                    c.sharpness.push(if es[e] > 0.0 { tau_at(t, es, chaikin, e, end as usize) } else { 0.0 });
                    if inherit_nm {
                        c.nm.push(p.nm_edges[e]);
                    }
                }
            }
        }
        c
    }

    /// Adds an edge inside a parent face (smooth, manifold); its number.
    fn push_inner(&mut self, ends: [u32; 2]) -> u32 {
        self.edges.push(ends);
        self.sharpness.push(0.0);
        if self.inherit_nm {
            self.nm.push(false);
        }
        self.edges.len() as u32 - 1
    }

    /// The child edge of parent edge `e` at its end `v`. A degenerate edge
    /// (a vertex to itself) gives its first half to the corner leaving along
    /// it and its second to the one `arriving`, as the uniform split does:
    /// OpenSubdiv keeps the two halves apart.
    fn half_at(&self, t: &Topology, e: u32, v: u32, arriving: bool) -> u32 {
        let [a, b] = t.edge(e as usize);
        self.half[e as usize][if a == b { usize::from(arriving) } else { usize::from(a != v) }]
    }

    /// The child mesh of `m` (`n_child` vertices) over these edges (of a
    /// quad split, or with `quads` false of a triangle split), its vertex
    /// children's sharpness decremented, and its edges' non-manifold flags.
    #[allow(clippy::too_many_arguments)]
    fn child_mesh(
        self,
        quads: bool,
        m: &Mesh,
        vchild: &[u32],
        n_child: usize,
        face_ptr: Vec<u32>,
        face_verts: Vec<u32>,
        corner_edge: Vec<u32>,
        holes: Vec<bool>,
    ) -> Result<(Mesh, Vec<bool>), AdaptiveError> {
        // A quad split of a manifold level joins distinct pairs (see
        // `Topology::from_refined_edges`); a triangle split may not.
        let distinct = quads && !self.inherit_nm;
        let ct = Topology::from_refined_edges(n_child, face_ptr, face_verts, self.edges, corner_edge, distinct, par())?;
        let mut child_vs = vec![0f32; n_child];
        for (v, &c) in vchild.iter().enumerate() {
            if c != NONE {
                child_vs[c as usize] = dec(m.vertex_sharpness()[v]);
            }
        }
        Ok((Mesh::from_parts(ct, self.sharpness, child_vs, holes, m.options())?, self.nm))
    }
}

/// Per child vertex, whether OpenSubdiv tags it non-manifold: the child of
/// a non-manifold vertex or edge inherits the tag (a face point never has
/// it). Empty where the parent level has no non-manifold component.
fn inherited_non_manifold(p: &Level, vchild: &[u32], echild: &[u32], n_child: usize) -> Vec<bool> {
    if p.nm_edges.is_empty() {
        return Vec::new();
    }
    let mut out = vec![false; n_child];
    for (v, &c) in vchild.iter().enumerate() {
        if c != NONE {
            out[c as usize] = p.tags[v].non_manifold;
        }
    }
    for (e, &c) in echild.iter().enumerate() {
        if c != NONE {
            out[c as usize] = p.nm_edges[e];
        }
    }
    out
}

/// Where each of `ne` edges and `nv` vertices has its mask among the
/// masks naming `edges` and `vertices` (`NONE`: the smooth mask). Indices,
/// not copies of the masks: the parent level's arrays stay a few bytes per
/// component, and most components have no mask of their own.
fn mask_index(
    ne: usize,
    nv: usize,
    edges: impl Iterator<Item = u32>,
    vertices: impl Iterator<Item = u32>,
) -> (Vec<u32>, Vec<u32>) {
    let mut emask = vec![NONE; ne];
    for (i, e) in edges.enumerate() {
        emask[e as usize] = i as u32;
    }
    let mut vmask = vec![NONE; nv];
    for (i, v) in vertices.enumerate() {
        vmask[v as usize] = i as u32;
    }
    (emask, vmask)
}

/// The place of child `j` of a triangle placed at `pp` (children numbered
/// as OpenSubdiv's `TriRefinement`: at corners 0, 1, 2, then the middle
/// one, rotated by 180 degrees against its parent).
pub(crate) fn tri_child_ptex(pp: FacePtex, j: usize) -> FacePtex {
    let n = 1i64 << pp.depth;
    let (u, v) = (i64::from(pp.u), i64::from(pp.v));
    let rotated = u + v >= n;
    // First corner and orientation in the grid of the depth.
    let (a, b) = if rotated { (n - u, n - v) } else { (u, v) };
    let s = if rotated { -1 } else { 1 };
    let (ca, cb, c_rotated) = match j {
        0 => (2 * a, 2 * b, rotated),
        1 => (2 * a + s, 2 * b, rotated),
        2 => (2 * a, 2 * b + s, rotated),
        _ => (2 * a + s, 2 * b + s, !rotated),
    };
    let n2 = 2 * n;
    let (cu, cv) = if c_rotated { (n2 - ca, n2 - cb) } else { (ca, cb) };
    FacePtex { ptex: pp.ptex, u: cu as u32, v: cv as u32, depth: pp.depth + 1, non_quad: false }
}

/// Refines the selected triangles of `p` (and the neighbours they need),
/// as OpenSubdiv's sparse `TriRefinement`.
fn refine_tri(p: &Level, depth: u32, used: &mut u64, budget: u64) -> Result<(Level, Stencils), AdaptiveError> {
    let m = &p.mesh;
    let t = m.topology();
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let fptr = t.face_ptr();
    let cedge = t.corner_edges();

    // The vertices of the selected faces (Eq. 17, as in `refine`), and the
    // children numbered (no face points: the split makes none).
    let (vsel, _) = marks(p);
    let Children { vchild, fchild: _, echild, complete } = number_children(p, &vsel, None);
    let n_child = complete.len();
    // An edge is transitional when its faces are not all selected alike.
    let transitional: Vec<bool> = (0..ne)
        .map(|e| {
            let corners = t.edge_corners(e);
            corners.len() >= 2 && {
                let first = p.selected[t.corner_faces()[corners[0] as usize] as usize];
                corners.iter().any(|&c| p.selected[t.corner_faces()[c as usize] as usize] != first)
            }
        })
        .collect();

    // Child edges, numbered from their parents as in `refine`: first the
    // halves of the parent edges (a degenerate edge keeps two: the corner
    // leaving along it uses the first, the one arriving the second, as
    // OpenSubdiv does), then the edges between the edge points of a
    // triangle, each kept where a child face uses it.
    let mut ce = ChildEdges::halves(p, &vchild, &echild, 3 * n_child);

    // Child faces, four per selected triangle, and around selected corners.
    let mut face_ptr = vec![0u32];
    let mut face_verts = Vec::new();
    let mut corner_edge = Vec::new();
    let mut holes = Vec::new();
    let mut ptex = Vec::new();
    let mut from_selected = Vec::new();
    for (f, &c0) in fptr[..nf].iter().enumerate() {
        let verts = t.face(f);
        let c0 = c0 as usize;
        let vc = |j: usize| vchild[verts[j] as usize];
        let ec = |j: usize| echild[cedge[c0 + j] as usize];
        let keep: [bool; 4] = if p.selected[f] {
            [true; 4]
        } else {
            let corner = |j: usize| vsel[verts[j] as usize];
            let middle = (0..3).any(corner) && (0..3).any(|j| transitional[cedge[c0 + j] as usize]);
            [corner(0), corner(1), corner(2), middle]
        };
        if !keep.iter().any(|&k| k) {
            continue;
        }
        // The edge cutting off corner `j`, from `ec(j)` to `ec(j + 2)`.
        let mut cut = [NONE; 3];
        for (j, c) in cut.iter_mut().enumerate() {
            if keep[j] || keep[3] {
                *c = ce.push_inner([ec(j), ec((j + 2) % 3)]);
            }
        }
        let leave = |j: usize| ce.half_at(t, cedge[c0 + j], verts[j], false);
        // The half arriving at corner `j` along the previous edge.
        let arrive = |j: usize| ce.half_at(t, cedge[c0 + (j + 2) % 3], verts[j], true);
        for (j, _) in keep.iter().enumerate().filter(|&(_, &k)| k) {
            let (q, qe) = match j {
                0 => ([vc(0), ec(0), ec(2)], [leave(0), cut[0], arrive(0)]),
                1 => ([ec(0), vc(1), ec(1)], [arrive(1), leave(1), cut[1]]),
                2 => ([ec(2), ec(1), vc(2)], [cut[2], arrive(2), leave(2)]),
                _ => ([ec(1), ec(2), ec(0)], [cut[2], cut[0], cut[1]]),
            };
            face_verts.extend_from_slice(&q);
            corner_edge.extend_from_slice(&qe);
            face_ptr.push(face_verts.len() as u32);
            holes.push(m.holes()[f]);
            from_selected.push(p.selected[f]);
            ptex.push(p.ptex[f].map(|pp| tri_child_ptex(pp, j)));
        }
    }
    charge(used, depth + 1, n_child, face_ptr.len() - 1, face_verts.len(), budget)?;

    // Stencils, from Loop's masks of the parent level: rows in the
    // children's order (vertex children, then edge points), made while the
    // child's connectivity is.
    let stencils = || {
        let step = LoopStepView::of_level(m, par());
        let view = step.view();
        let (emask, vmask) =
            mask_index(ne, nv, view.edge_masks.iter().map(|m| m.edge), view.vertex_masks.iter().map(|m| m.vertex));
        let src = ChildSources::new(&vchild, &[], &echild);
        Stencils::from_rows(n_child, nv, par(), |k, row, _| {
            let x = src.parent[k] as usize;
            if k < src.faces_from {
                let v = x;
                let inc = t.vertex_edges(v);
                let (cv, cn, ce, ua, ub) = match view.vertex_masks.get(vmask[v] as usize) {
                    Some(mk) => (mk.cv, mk.cn, mk.ce, mk.ua, mk.ub),
                    None => {
                        let [w0, w1] = view.smooth.get(inc.len()).copied().unwrap_or([1.0, 0.0]);
                        (w0, w1, 0.0, v as u32, v as u32)
                    }
                };
                row.push((v as u32, cv));
                if cn != 0.0 {
                    for &e in inc {
                        let [x, y] = t.edge(e as usize);
                        row.push((if x as usize == v { y } else { x }, cn));
                    }
                }
                if ce != 0.0 {
                    row.push((ua, ce));
                    row.push((ub, ce));
                }
            } else {
                let e = x;
                let [a, b] = t.edge(e);
                let (alpha, beta) =
                    view.edge_masks.get(emask[e] as usize).map_or((0.375, 0.125), |m| (m.alpha, m.beta));
                row.push((a, alpha));
                row.push((b, alpha));
                if beta != 0.0 {
                    for &c in t.edge_corners(e) {
                        // The corner opposite the edge in each of its triangles.
                        let opposite = t.face_verts()[t.prev_corner(c as usize)];
                        row.push((opposite, beta));
                    }
                }
            }
            false
        })
    };
    let (child, st) =
        both(|| ce.child_mesh(false, m, &vchild, n_child, face_ptr, face_verts, corner_edge, holes), stencils);
    let (child_mesh, nm_edges) = child?;
    debug_assert_eq!(st.num_rows(), n_child);
    let inherited = inherited_non_manifold(p, &vchild, &echild, n_child);
    let tags = vertex_tags(&child_mesh, &complete, false, Scheme::Loop, &inherited);
    Ok((Level { mesh: child_mesh, complete, tags, selected: Vec::new(), from_selected, ptex, nm_edges }, st))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows made in parallel blocks and joined are the rows made one after
    /// the other, bit for bit: columns summed in the order pushed, sorted.
    #[test]
    fn stencil_blocks_join_as_one() {
        // Rows of up to 24 entries over 40 columns, with repeats.
        let fill = |k: usize, row: &mut Vec<(u32, f64)>, _: bool| {
            let mut z = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for _ in 0..(k % 25) {
                z ^= z << 13;
                z ^= z >> 7;
                z ^= z << 17;
                row.push(((z % 40) as u32, (z >> 11) as f64 / (1u64 << 53) as f64 - 0.3));
            }
            false
        };
        let one = Stencils::from_rows_in_blocks(1000, 40, Par::Seq, 64, fill);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
        let blocks = pool.install(|| Stencils::from_rows_in_blocks(1000, 40, Par::Rayon, 64, fill));
        assert_eq!(one.num_rows(), 1000);
        assert_eq!(one.offsets, blocks.offsets);
        assert_eq!(one.columns, blocks.columns);
        let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&one.weights), bits(&blocks.weights));
        // Repeats were summed: no row names a column twice, all sorted.
        for k in 0..1000 {
            assert!(one.row(k).0.windows(2).all(|w| w[0] < w[1]), "row {k}");
        }
        assert!(one.columns.len() < (0..1000).map(|k| k % 25).sum::<usize>());
    }

    /// The specialised marking equals the algebra's (Eq. 16–17) on every
    /// level of every OpenSubdiv shape that has a mesh matrix, both schemes.
    #[test]
    fn marking_is_the_algebra() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data/meshes/osd");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("shapes") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_owned();
            let scheme = if name.starts_with("catmark") {
                Scheme::Catmark
            } else if name.starts_with("loop") {
                Scheme::Loop
            } else {
                continue;
            };
            let Ok(d) = subla_mesh::obj::read_obj(&path, subla_mesh::Validation::OpenSubdiv) else { continue };
            let Ok(r) = SparseRefinement::build_scheme(scheme, &d.mesh, 3, None) else { continue };
            for l in &r.levels()[..r.max_level()] {
                // The mesh matrix holds one entry per (face, vertex): a face
                // that uses a vertex twice has no mesh matrix.
                if l.mesh.topology().vertex_tags().iter().any(|&x| x & subla_mesh::topology::vertex_tag::REPEATED != 0)
                {
                    assert!(marks_by_algebra(l).is_err(), "{name}");
                    continue;
                }
                assert_eq!(marks(l), marks_by_algebra(l).expect("mesh matrix"), "{name}");
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} levels checked");
    }
}
