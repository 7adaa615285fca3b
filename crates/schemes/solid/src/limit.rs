//! The limit volume of regular cells (Altenhofen et al. 2018, Eq. 1): a
//! hexahedron inside a regular hexahedral grid is a tricubic B-spline
//! patch over the 4 × 4 × 4 grid of control points around it, so its limit
//! at `(u, v, w)` and the derivatives are tensor products of the uniform
//! cubic B-spline basis.
//!
//! The cell's parameters follow its VTK vertex order: `u` from vertex 0 to
//! 1, `v` from 0 to 3, `w` from 0 to 4. Control point `(i, j, k)`
//! (`0 ..= 3` each, the cell spanning `1 ..= 2`) is entry `i + 4j + 16k`.
//!
//! A regular cell with one face on the boundary has a 4 × 4 × 3 grid: the
//! layer beyond the boundary is a phantom, `2 P₁ − P₂` of the two next to
//! it, which is what the boundary rules (the boundary surface refining by
//! itself) make of the cubic B-spline ([`control_grid`]). A cell with two
//! or three faces on the boundary has a phantom layer beyond each where
//! the boundary edges between them are sharp (and so its boundary corner
//! a corner): there the crease rules are the end condition in both
//! directions. At an untagged boundary edge the boundary surface wraps
//! smoothly round the edge, which no tricubic patch does: a cell whose two
//! boundary faces meet at such an edge of that cell alone is the patch at
//! a smooth boundary corner times a cubic B-spline ([`crate::corner`],
//! [`layered_grid`] of valence 1), and a box's corner, where three such
//! edges meet, an irregular cell.
//!
//! Features near a regular cell matter only where their rules produce
//! points its limit depends on: the cell's own eight vertices and the
//! edges through its own layers ([`control_grid`]). A sharp edge or a
//! corner further out leaves the cell regular.
//!
//! Layered cells (one extraordinary edge in layers of a full surface ring,
//! inside or with the face across the edge on the boundary) are Stam's
//! surface patch times a cubic B-spline ([`crate::layered`]); the limit
//! functions here evaluate them too ([`cell_grid`]), and irregular cells
//! (extraordinary edges at one vertex: the local volumetric
//! subdivision matrix, [`crate::irregular`]). Cells at untagged boundary
//! edges, and layered and irregular cells with a sharp edge or a corner at
//! one of their own vertices, are not evaluated yet: they are refused,
//! naming the cell. All of it is the limit of the default refinement
//! ([`crate::VertexRule::Layered`]).
//!
//! [`RegularEval`] evaluates regular cells only.

use std::collections::HashMap;

use subla_algebra::{CsrMat, Par};
use subla_scheme::kernel::assemble_rows;
use subla_scheme::{Result, SchemeError};
use subla_volume::{CellKind, NONE, VolMesh};

use crate::irregular::{IrregularGrid, irregular_grid, irregular_weights};
use crate::layered::{LayeredGrid, layered_grid, layered_weights};

/// The twelve edges of a VTK hexahedron, as local vertex pairs.
const HEX_EDGES: [(usize, usize); 12] =
    [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)];
/// The grid offsets of a VTK hexahedron's vertices.
pub(crate) const HEX_CORNERS: [[i32; 3]; 8] =
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];

/// The 64 control points of cell `c` (entry `i + 4j + 16k`), where `c` is a
/// hexahedron inside a regular grid: the 27 hexahedra around it (reached
/// across faces) form a 3 × 3 × 3 block whose 64 vertices are distinct
/// and consistently placed, and none of its vertices is on the boundary.
/// `None` otherwise (see [`control_grid`] for cells on the boundary).
pub fn regular_grid(m: &VolMesh, c: usize) -> Option<[u32; 64]> {
    control_grid(m, c).filter(|g| g.num_phantoms() == 0).map(|g| g.points)
}

/// The control points of a regular cell, interior or at the boundary.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ControlGrid {
    /// Entry `i + 4j + 16k`; [`NONE`] in the phantom layers.
    pub points: [u32; 64],
    /// Per axis (`u`, `v`, `w`), where the cell has a face on the
    /// boundary: the side of the layer beyond it (`false`: index 0,
    /// `true`: index 3), which the boundary rules make `2 P₁ − P₂` of the
    /// two layers next to it (the cubic B-spline's end condition that
    /// Catmull-Clark's boundary rule reproduces: the boundary layer
    /// refines by itself). Two or three axes only where the boundary edges
    /// between the faces are sharp.
    pub phantoms: [Option<bool>; 3],
}

impl ControlGrid {
    /// The number of phantom layers (faces on the boundary): 0 inside.
    pub fn num_phantoms(&self) -> usize {
        self.phantoms.iter().filter(|p| p.is_some()).count()
    }
}

/// The control grid of cell `c` where it is regular: inside the mesh (as
/// [`regular_grid`]), or with faces on the boundary (one per axis at
/// most), the hexahedra of the `3 × 3 × 3` block around it present but
/// beyond those faces (`3 × 3 × 2` with one, `3 × 2 × 2` with two, `2 × 2
/// × 2` with three) and its vertices regular (six edges inside, five on a
/// boundary face, four on a boundary edge, three at a boundary corner).
///
/// Tags matter where their rules make points the cell's limit depends on:
/// its eight vertices, and the edges along the grid lines through its own
/// layers (36 of them, those of the cell among them). There the edges
/// where two boundary faces of the block meet must be sharp, and no other
/// (so those vertices take the crease rule, and a boundary corner stays),
/// and no vertex but a boundary corner may be a corner. Tags elsewhere
/// leave the cell regular. `None` otherwise.
pub fn control_grid(m: &VolMesh, c: usize) -> Option<ControlGrid> {
    if m.kind(c) != CellKind::Hexahedron {
        return None;
    }
    // Grid position of each vertex met (the cell spans 1 ..= 2), and of
    // each cell placed (its lowest corner).
    let mut at: HashMap<u32, [i32; 3]> = HashMap::new();
    let mut grid: HashMap<[i32; 3], u32> = HashMap::new();
    let mut place = |v: u32, p: [i32; 3], at: &mut HashMap<u32, [i32; 3]>| -> bool {
        if p.iter().any(|&x| !(0..=3).contains(&x)) {
            return false;
        }
        match (at.get(&v), grid.get(&p)) {
            (None, None) => {
                at.insert(v, p);
                grid.insert(p, v);
                true
            }
            (Some(&q), Some(&u)) => q == p && u == v,
            _ => false,
        }
    };
    for (k, &v) in m.cell_vertices(c).iter().enumerate() {
        let o = HEX_CORNERS[k];
        if !place(v, [1 + o[0], 1 + o[1], 1 + o[2]], &mut at) {
            return None;
        }
    }
    let mut placed: HashMap<u32, [i32; 3]> = HashMap::from([(c as u32, [1, 1, 1])]);
    let mut phantoms: [Option<bool>; 3] = [None; 3];
    let mut queue = vec![c as u32];
    while let Some(cell) = queue.pop() {
        let lo = placed[&cell];
        for &code in m.cell_faces(cell as usize) {
            let f = (code >> 1) as usize;
            let [a, b] = m.face_cells(f);
            let other = if a == cell { b } else { a };
            let fv = m.face(f);
            // The face's side: the axis on which all its vertices sit at
            // the cell's low or high grid coordinate.
            let ps: Vec<[i32; 3]> = fv.iter().map(|v| at[v]).collect();
            let (axis, high) = (0..3).find_map(|ax| {
                [false, true].into_iter().find(|&h| ps.iter().all(|p| p[ax] == lo[ax] + i32::from(h))).map(|h| (ax, h))
            })?;
            let mut next = lo;
            next[axis] += if high { 1 } else { -1 };
            if !(0..=2).contains(&next[axis]) {
                continue;
            }
            if other == NONE {
                // A boundary face inside the block: the layer beyond it is
                // a phantom one, the same for every cell.
                if *phantoms[axis].get_or_insert(high) != high {
                    return None;
                }
                continue;
            }
            if let Some(&q) = placed.get(&other) {
                if q != next {
                    return None;
                }
                continue;
            }
            if m.kind(other as usize) != CellKind::Hexahedron {
                return None;
            }
            // Each vertex of the face steps across it to its neighbour in
            // the other cell.
            let ov = m.cell_vertices(other as usize);
            for &s in fv {
                let k = ov.iter().position(|&u| u == s)?;
                let far = HEX_EDGES
                    .iter()
                    .filter_map(|&(x, y)| {
                        if x == k {
                            Some(ov[y])
                        } else if y == k {
                            Some(ov[x])
                        } else {
                            None
                        }
                    })
                    .find(|u| !fv.contains(u))?;
                let mut p = at[&s];
                p[axis] += if high { 1 } else { -1 };
                if !place(far, p, &mut at) {
                    return None;
                }
            }
            placed.insert(other, next);
            queue.push(other);
        }
    }
    let np = phantoms.iter().filter(|p| p.is_some()).count() as u32;
    if placed.len() != 3usize.pow(3 - np) * 2usize.pow(np) || at.len() != 4usize.pow(3 - np) * 3usize.pow(np) {
        return None;
    }
    // The grid coordinate of the boundary layer on each phantom axis.
    let wall = |ax: usize| phantoms[ax].map(|high| if high { 2 } else { 1 });
    let walls_at = |p: [i32; 3]| (0..3).filter(|&ax| wall(ax) == Some(p[ax])).count();
    // The cell's own vertices are regular: inside, six edges (so eight
    // cells and regular edges around each); one fewer per boundary face
    // they are on.
    for (&v, &p) in &at {
        if !p.iter().all(|&x| (1..=2).contains(&x)) {
            continue;
        }
        let walls = walls_at(p);
        if m.is_boundary_vertex(v as usize) != (walls > 0) || m.vertex_edges(v as usize).len() != 6 - walls {
            return None;
        }
    }
    let mut out = [NONE; 64];
    for (p, &v) in &grid {
        out[(p[0] + 4 * p[1] + 16 * p[2]) as usize] = v;
    }
    // Untagged, only a cell on one boundary face at most fits.
    if (m.has_features() || np >= 2) && !features_fit(m, &out, walls_at) {
        return None;
    }
    Some(ControlGrid { points: out, phantoms })
}

/// Whether the tags of a regular cell's grid `points` are those its
/// tensor product refines by (see [`control_grid`]); `walls(p)` is the
/// number of boundary faces of the block at grid position `p`. The cell's
/// limit depends on the points refined from its own vertices and from the
/// edges along grid lines through its own layers (with the faces and
/// cells, whose points ignore tags): those edges must be sharp exactly
/// where two boundary faces meet, and only a vertex on three may be a
/// corner.
fn features_fit(m: &VolMesh, points: &[u32; 64], walls: impl Fn([i32; 3]) -> usize) -> bool {
    let id = |p: [i32; 3]| points[(p[0] + 4 * p[1] + 16 * p[2]) as usize];
    for k in 1..=2 {
        for j in 1..=2 {
            for i in 1..=2 {
                let p = [i, j, k];
                if m.is_corner(id(p) as usize) && walls(p) < 3 {
                    return false;
                }
            }
        }
    }
    for axis in 0..3 {
        let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
        for (x, y) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
            for t in 0..3 {
                let mut p = [0; 3];
                p[b] = x;
                p[c] = y;
                p[axis] = t;
                let mut q = p;
                q[axis] = t + 1;
                let (a, z) = (id(p), id(q));
                if a == NONE || z == NONE {
                    continue;
                }
                let Some(&e) = m.vertex_edges(a as usize).iter().find(|&&e| m.edge(e as usize).contains(&z)) else {
                    return false;
                };
                // On two boundary faces of the block: the line where they
                // meet (both ends on it).
                if m.is_sharp_edge(e as usize) != (walls(p) >= 2 && walls(q) >= 2) {
                    return false;
                }
            }
        }
    }
    true
}

/// The phantom entries of a grid with `phantoms` that have `n` phantom
/// coordinates, each with the entries next to it and next but one along
/// its first phantom axis: `P = 2 P_near − P_far`, those two with `n − 1`.
fn phantom_entries_of(phantoms: [Option<bool>; 3], n: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    // Per axis: the phantom index, the near and far ones.
    let ends = phantoms.map(|p| p.map(|high| if high { (3, 2, 1) } else { (0, 1, 2) }));
    let phantom_axes =
        move |e: usize| (0..3).filter(move |&ax| ends[ax].is_some_and(|(m, _, _)| (e / [1, 4, 16][ax]) % 4 == m));
    (0..64).filter(move |&e| phantom_axes(e).count() == n).map(move |e| {
        let ax = phantom_axes(e).next().expect("a phantom axis");
        let (m, near, far) = ends[ax].expect("a phantom");
        let stride = [1, 4, 16][ax];
        let base = e - m * stride;
        (e, base + near * stride, base + far * stride)
    })
}

/// Every phantom entry of a grid with `phantoms` as
/// [`phantom_entries_of`], those with fewer phantom coordinates first (so
/// the two each is made of come before it); none without phantoms.
fn phantom_entries(phantoms: [Option<bool>; 3]) -> impl Iterator<Item = (usize, usize, usize)> {
    let count = phantoms.iter().filter(|p| p.is_some()).count();
    (1..=count).flat_map(move |n| phantom_entries_of(phantoms, n))
}

/// Folds the phantom layers of `w` (weights in the grid's order) into the
/// layers next to them.
pub(crate) fn fold_phantom(w: &mut [f64; 64], phantoms: [Option<bool>; 3]) {
    let count = phantoms.iter().filter(|p| p.is_some()).count();
    // Those with the most phantom coordinates first: each passes its
    // weight to two with one fewer.
    for n in (1..=count).rev() {
        for (e, near, far) in phantom_entries_of(phantoms, n) {
            let wm = std::mem::take(&mut w[e]);
            w[near] += 2.0 * wm;
            w[far] -= wm;
        }
    }
}

/// Why a cell's limit is not evaluated; the source of the
/// [`SchemeError::Scheme`] the limit functions return (reach it with
/// `std::error::Error::source` and `downcast_ref`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// The cell is neither regular (inside, at a boundary face or at sharp
    /// boundary edges), layered (inside, at a boundary face or at a smooth
    /// boundary edge) nor irregular (or is past the mesh's cells).
    #[error(
        "cell {cell} is not evaluated yet: it is not a regular hexahedron (inside, at a boundary face or at sharp boundary edges), a layered one (inside, at a boundary face or at an untagged boundary edge) nor an irregular one (cells with several extraordinary vertices, cells whose own vertices meet sharp edges otherwise than as a regular cell's boundary creases, and cells that meet the boundary otherwise, at a corner of the boundary surface other than a box's, on two opposite faces or within two cells of another part of it, are not evaluated yet; refine first, or sample the others)"
    )]
    NotEvaluable {
        /// The cell.
        cell: u32,
    },
    /// A derivative asked for at an irregular cell's extraordinary vertex,
    /// where the parametrisation is singular (positions are defined there).
    #[error(
        "cell {cell}: no derivative at its extraordinary vertex, where the parametrisation is singular (sample next to it, or positions only)"
    )]
    SingularDerivative {
        /// The cell.
        cell: u32,
    },
}

pub(crate) fn not_evaluable(cell: u32) -> SchemeError {
    SchemeError::scheme("catmark-solid-limit", LimitError::NotEvaluable { cell })
}

/// Parameter `i` of `k` samples per direction: `i/(k−1)`, the centre where
/// `k = 1`.
pub fn sample_param(i: usize, k: usize) -> f64 {
    if k > 1 { i as f64 / (k - 1) as f64 } else { 0.5 }
}

/// The uniform cubic B-spline basis at `t` and its derivative.
pub fn cubic_basis(t: f64) -> ([f64; 4], [f64; 4]) {
    let s = 1.0 - t;
    let b = [
        s * s * s / 6.0,
        (3.0 * t * t * t - 6.0 * t * t + 4.0) / 6.0,
        (-3.0 * t * t * t + 3.0 * t * t + 3.0 * t + 1.0) / 6.0,
        t * t * t / 6.0,
    ];
    let d = [-s * s / 2.0, (3.0 * t * t - 4.0 * t) / 2.0, (-3.0 * t * t + 2.0 * t + 1.0) / 2.0, t * t / 2.0];
    (b, d)
}

/// What a limit matrix gives per sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quantity {
    /// The limit point.
    Position,
    /// `∂/∂u`.
    DerivU,
    /// `∂/∂v`.
    DerivV,
    /// `∂/∂w`.
    DerivW,
}

/// The weights of the 64 control points of a regular cell at `(u, v, w)`
/// for `q`, in the control points' order.
pub fn tricubic_weights(uvw: [f64; 3], q: Quantity) -> [f64; 64] {
    let [(bu, du), (bv, dv), (bw, dw)] = uvw.map(cubic_basis);
    let (fu, fv, fw) = match q {
        Quantity::Position => (bu, bv, bw),
        Quantity::DerivU => (du, bv, bw),
        Quantity::DerivV => (bu, dv, bw),
        Quantity::DerivW => (bu, bv, dw),
    };
    let mut out = [0.0; 64];
    for k in 0..4 {
        for j in 0..4 {
            for i in 0..4 {
                out[i + 4 * j + 16 * k] = fu[i] * fv[j] * fw[k];
            }
        }
    }
    out
}

/// The limit map of `samples` (cell, `(u, v, w)`) for `q`: a sparse matrix
/// of samples × control points, each row the tricubic weights over a
/// regular cell's 64 control points or a layered cell's `4 (2n + 8)`.
///
/// # Errors
/// [`LimitError::NotEvaluable`] (as [`SchemeError::Scheme`]'s source)
/// naming the first cell (by index) without a [`cell_grid`], or past the
/// mesh's cells (see [`LimitError::NotEvaluable`] for those not evaluated
/// yet);
/// [`LimitError::SingularDerivative`] for a derivative at an irregular
/// cell's extraordinary vertex.
pub fn limit_matrix(m: &VolMesh, samples: &[(u32, [f64; 3])], q: Quantity, par: Par) -> Result<CsrMat<f64>> {
    let mut cells: Vec<u32> = samples.iter().map(|s| s.0).collect();
    cells.sort_unstable();
    cells.dedup();
    let mut grids: HashMap<u32, CellGrid> = HashMap::with_capacity(cells.len());
    for &c in &cells {
        grids.insert(c, cell_grid(m, c as usize).ok_or_else(|| not_evaluable(c))?);
    }
    if q != Quantity::Position {
        for &(c, uvw) in samples {
            if let CellGrid::Irregular(g) = &grids[&c] {
                if g.is_singular(uvw) {
                    return Err(SchemeError::scheme("catmark-solid-limit", LimitError::SingularDerivative { cell: c }));
                }
            }
        }
    }
    assemble_rows(samples.len(), m.num_vertices(), par, |r, s| {
        let (c, uvw) = samples[r];
        match &grids[&c] {
            CellGrid::Regular(g) => {
                let mut w = tricubic_weights(uvw, q);
                fold_phantom(&mut w, g.phantoms);
                s.extend(g.points.iter().zip(w).filter(|&(&v, _)| v != NONE).map(|(&v, w)| (v, w)));
            }
            CellGrid::Layered(g) => layered_weights(g, uvw, q, s),
            CellGrid::Irregular(g) => {
                // Checked above: no derivative at the extraordinary vertex.
                let _ = irregular_weights(g, uvw, q, s);
            }
        }
    })
}

/// Whether any of a cell's control points (phantom entries, [`NONE`],
/// aside) is a corner or on a sharp edge: its refinement then leaves the
/// smooth rules, so no smooth patch is its limit.
pub(crate) fn near_feature(m: &VolMesh, points: &[u32]) -> bool {
    m.has_features() && points.iter().any(|&p| p != NONE && m.touches_feature(p as usize))
}

/// The control points of a cell that is evaluated: regular
/// ([`control_grid`]), layered ([`layered_grid`]) or irregular
/// ([`irregular_grid`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
// The regular grid is kept inline: a map of them per sampled cell would
// otherwise allocate once per regular cell.
#[allow(clippy::large_enum_variant)]
pub enum CellGrid {
    /// A tricubic patch.
    Regular(ControlGrid),
    /// Stam's patch times a cubic B-spline.
    Layered(LayeredGrid),
    /// The local subdivision matrix's powers down to a regular or layered
    /// child.
    Irregular(IrregularGrid),
}

/// The control points of cell `c`, regular, layered or irregular; `None`
/// where the cell is none of them (or past the mesh's cells).
pub fn cell_grid(m: &VolMesh, c: usize) -> Option<CellGrid> {
    if c >= m.num_cells() {
        return None;
    }
    control_grid(m, c)
        .map(CellGrid::Regular)
        .or_else(|| layered_grid(m, c).map(CellGrid::Layered))
        .or_else(|| irregular_grid(m, c).map(CellGrid::Irregular))
}

/// Limit sampling behind the scheme contract: a [`Refiner`] whose plan
/// maps the control points to the limit at fixed samples (one step; its
/// operator is [`limit_matrix`]), so that samples × control points is a
/// matrix like any `R`, exported and evaluated as one.
///
/// [`Refiner`]: subla_scheme::Refiner
#[derive(Clone, Debug, PartialEq)]
pub struct SolidLimit {
    samples: Vec<(u32, [f64; 3])>,
    quantity: Quantity,
}

impl SolidLimit {
    /// The limit of `quantity` at `samples` (cell, `(u, v, w)`).
    pub fn new(samples: Vec<(u32, [f64; 3])>, quantity: Quantity) -> SolidLimit {
        SolidLimit { samples, quantity }
    }

    /// A `k × k × k` grid of samples in each of `cells`: `u = i/(k−1)`,
    /// `v = j/(k−1)`, `w = l/(k−1)` (`l` outer, then `j`, then `i`; the
    /// centre where `k = 1`).
    pub fn grid(cells: impl IntoIterator<Item = u32>, k: usize, quantity: Quantity) -> SolidLimit {
        let t = |i: usize| sample_param(i, k);
        let samples = cells
            .into_iter()
            .flat_map(|c| {
                (0..k).flat_map(move |l| (0..k).flat_map(move |j| (0..k).map(move |i| (c, [t(i), t(j), t(l)]))))
            })
            .collect();
        SolidLimit { samples, quantity }
    }
}

impl SolidLimit {
    /// The samples, in order.
    pub fn samples(&self) -> &[(u32, [f64; 3])] {
        &self.samples
    }
}

impl RegularEval {
    /// [`RegularEval::eval_into`] for `k = K`: the three passes on
    /// fixed-size arrays, channel by channel, `K` samples a vector.
    fn eval_fixed<T: Sample, const K: usize>(
        &self,
        xs: &[T],
        bu: &[[f64; 4]],
        bv: &[[f64; 4]],
        bw: &[[f64; 4]],
        out: &mut [T],
        par: Par,
    ) {
        use rayon::prelude::*;
        // `u`'s basis transposed: one vector of `K` samples per control
        // column.
        let tu: [[f64; K]; 4] = std::array::from_fn(|i| std::array::from_fn(|t| bu[t][i]));
        let (tv, tw): ([[f64; 4]; K], [[f64; 4]; K]) = (std::array::from_fn(|t| bv[t]), std::array::from_fn(|t| bw[t]));
        let per = K * K * K * 3;
        // Blocks of cells, each run by the widest vector code the CPU has
        // (fused multiply-adds where it has them).
        const BLOCK: usize = 32;
        let block = |(gs, o): (&[ControlGrid], &mut [T])| {
            #[cfg(target_arch = "x86_64")]
            if fused() {
                // SAFETY: the CPU has AVX2 and FMA, checked by `fused`.
                unsafe { cells_fma::<T, K>(xs, gs, &tu, &tv, &tw, o) };
                return;
            }
            cells_fixed::<T, K, Apart>(xs, gs, &tu, &tv, &tw, o);
        };
        if par == Par::Rayon && self.grids.len() >= 64 {
            self.grids.par_chunks(BLOCK).zip(out.par_chunks_mut(BLOCK * per)).for_each(block);
        } else {
            self.grids.chunks(BLOCK).zip(out.chunks_mut(BLOCK * per)).for_each(block);
        }
    }
}

/// How the evaluators multiply and add: `acc + w · x` rounded twice
/// ([`Apart`], the portable build) or once ([`Fused`], only in code
/// compiled for FMA, where `mul_add` is one instruction).
trait Madd {
    fn madd(w: f64, x: f64, acc: f64) -> f64;
}

/// Multiplies and adds apart.
struct Apart;

impl Madd for Apart {
    #[inline(always)]
    fn madd(w: f64, x: f64, acc: f64) -> f64 {
        acc + w * x
    }
}

/// Fused multiply-adds.
#[cfg(target_arch = "x86_64")]
struct Fused;

#[cfg(target_arch = "x86_64")]
impl Madd for Fused {
    #[inline(always)]
    fn madd(w: f64, x: f64, acc: f64) -> f64 {
        w.mul_add(x, acc)
    }
}

/// Whether the CPU has AVX2 and FMA (the fused builds run).
#[cfg(target_arch = "x86_64")]
fn fused() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// [`cell_fixed`] over consecutive cells `gs`, their samples in `o`.
#[inline(always)]
fn cells_fixed<T: Sample, const K: usize, M: Madd>(
    xs: &[T],
    gs: &[ControlGrid],
    tu: &[[f64; K]; 4],
    tv: &[[f64; 4]; K],
    tw: &[[f64; 4]; K],
    o: &mut [T],
) {
    // One set of work arrays for the block: every entry is written for
    // each cell before it is read (zeroing them for each cell took about a
    // tenth of the time at `K = 4`).
    let mut work = Work::<K>::new();
    for (g, o) in gs.iter().zip(o.chunks_mut(K * K * K * 3)) {
        cell_fixed::<T, K, M>(xs, g, tu, tv, tw, o, &mut work);
    }
}

/// [`cell_fixed`]'s arrays: the control points (where a phantom layer is
/// extrapolated), by channel after the `u` pass (`[c][l][j][t]`) and after
/// the `v` pass.
struct Work<const K: usize> {
    pts: [[f64; 3]; 64],
    a: [[[[f64; K]; 4]; 4]; 3],
    b: [[[[f64; K]; K]; 4]; 3],
}

impl<const K: usize> Work<K> {
    fn new() -> Self {
        Work { pts: [[0.0; 3]; 64], a: [[[[0.0; K]; 4]; 4]; 3], b: [[[[0.0; K]; K]; 4]; 3] }
    }
}

/// [`cells_fixed`] compiled for AVX2 and FMA, with fused multiply-adds.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn cells_fma<T: Sample, const K: usize>(
    xs: &[T],
    gs: &[ControlGrid],
    tu: &[[f64; K]; 4],
    tv: &[[f64; 4]; K],
    tw: &[[f64; 4]; K],
    o: &mut [T],
) {
    cells_fixed::<T, K, Fused>(xs, gs, tu, tv, tw, o);
}

/// The 64 control points of `g` from the points `xs` (`V × 3`), the
/// phantom layer extrapolated (`2 P_near − P_far`).
#[inline(always)]
fn gather<T: Sample>(xs: &[T], g: &ControlGrid) -> [[f64; 3]; 64] {
    let mut pts = [[0.0f64; 3]; 64];
    gather_into(xs, g, &mut pts);
    pts
}

/// [`gather`] into `pts` (every entry written).
#[inline(always)]
fn gather_into<T: Sample>(xs: &[T], g: &ControlGrid, pts: &mut [[f64; 3]; 64]) {
    for (e, &v) in g.points.iter().enumerate() {
        pts[e] = if v != NONE {
            let v = v as usize * 3;
            [xs[v].to_f64(), xs[v + 1].to_f64(), xs[v + 2].to_f64()]
        } else {
            [0.0; 3]
        };
    }
    for (e, near, far) in phantom_entries(g.phantoms) {
        let (pn, pf) = (pts[near], pts[far]);
        pts[e] = std::array::from_fn(|c| 2.0 * pn[c] - pf[c]);
    }
}

/// One regular cell's `K³` samples into `o` (`K³ × 3`, `w` outer): its
/// control points by channel, then the `u`, `v` and `w` passes.
// The passes index several arrays by the same tensor indices.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn cell_fixed<T: Sample, const K: usize, M: Madd>(
    xs: &[T],
    g: &ControlGrid,
    tu: &[[f64; K]; 4],
    tv: &[[f64; 4]; K],
    tw: &[[f64; 4]; K],
    o: &mut [T],
    work: &mut Work<K>,
) {
    let Work { pts, a, b } = work;
    // Inside, the `u` pass reads the points where they are; with a phantom
    // layer, from the gathered grid.
    if g.phantoms == [None; 3] {
        u_pass::<K, M>(
            |e| {
                let v = g.points[e] as usize * 3;
                let x = &xs[v..v + 3];
                [x[0].to_f64(), x[1].to_f64(), x[2].to_f64()]
            },
            tu,
            a,
        );
    } else {
        gather_into(xs, g, pts);
        u_pass::<K, M>(|e| pts[e], tu, a);
    }
    for c in 0..3 {
        for l in 0..4 {
            for iv in 0..K {
                let mut acc = [0.0f64; K];
                for j in 0..4 {
                    let w = tv[iv][j];
                    for t in 0..K {
                        acc[t] = M::madd(w, a[c][l][j][t], acc[t]);
                    }
                }
                b[c][l][iv] = acc;
            }
        }
    }
    let o = &mut o[..K * K * K * 3];
    for iw in 0..K {
        for iv in 0..K {
            let mut acc = [[0.0f64; K]; 3];
            for c in 0..3 {
                for l in 0..4 {
                    let w = tw[iw][l];
                    for t in 0..K {
                        acc[c][t] = M::madd(w, b[c][l][iv][t], acc[c][t]);
                    }
                }
            }
            let base = (iw * K + iv) * K * 3;
            for t in 0..K {
                o[base + 3 * t] = T::from_f64(acc[0][t]);
                o[base + 3 * t + 1] = T::from_f64(acc[1][t]);
                o[base + 3 * t + 2] = T::from_f64(acc[2][t]);
            }
        }
    }
}

/// The `u` pass of [`cell_fixed`]: each row `(j, l)` of four control
/// points (`point(e)`, entry `e = i + 4j + 16l`) against the `K` samples'
/// basis, by channel.
// The pass indexes several arrays by the same tensor indices.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn u_pass<const K: usize, M: Madd>(
    point: impl Fn(usize) -> [f64; 3],
    tu: &[[f64; K]; 4],
    a: &mut [[[[f64; K]; 4]; 4]; 3],
) {
    for l in 0..4 {
        for j in 0..4 {
            let x: [[f64; 3]; 4] = std::array::from_fn(|i| point(i + 4 * j + 16 * l));
            for c in 0..3 {
                let mut acc = [0.0f64; K];
                for i in 0..4 {
                    let w = x[i][c];
                    for t in 0..K {
                        acc[t] = M::madd(tu[i][t], w, acc[t]);
                    }
                }
                a[c][l][j] = acc;
            }
        }
    }
}

/// Samples per block of [`weighted_sums`].
const SUM_BLOCK: usize = 16;

/// A dense table of weights `w` (`samples × n`, row-major: one row of `n`
/// point weights per sample) laid out for [`weighted_sums`]: blocks of 16
/// samples (the last one shorter), each `n × block` with the block's
/// samples of a point together.
pub(crate) fn blocked_weights(w: &[f64], samples: usize) -> Vec<f64> {
    let n = w.len().checked_div(samples).unwrap_or(0);
    let mut out = Vec::with_capacity(w.len());
    for first in (0..samples).step_by(SUM_BLOCK) {
        let width = SUM_BLOCK.min(samples - first);
        for i in 0..n {
            out.extend((first..first + width).map(|s| w[s * n + i]));
        }
    }
    out
}

/// `out[s] = Σ_i w[s][i] · p[i]` for every sample `s < out.len()`, from
/// the weights laid out by [`blocked_weights`], the terms in the order of
/// the points: the layered and irregular evaluators' sums, vectors over
/// blocks of 16 samples (AVX2 with fused multiply-adds where the CPU has
/// them).
pub(crate) fn weighted_sums(wb: &[f64], p: &[[f64; 3]], out: &mut [[f64; 3]]) {
    #[cfg(target_arch = "x86_64")]
    if fused() {
        // SAFETY: the CPU has AVX2 and FMA, checked by `fused`.
        unsafe { weighted_sums_fma(wb, p, out) };
        return;
    }
    weighted_sums_portable::<Apart>(wb, p, out);
}

/// [`weighted_sums`] compiled for AVX2 and FMA, with fused multiply-adds.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn weighted_sums_fma(wb: &[f64], p: &[[f64; 3]], out: &mut [[f64; 3]]) {
    weighted_sums_portable::<Fused>(wb, p, out);
}

/// [`weighted_sums`] in portable code.
#[inline(always)]
fn weighted_sums_portable<M: Madd>(wb: &[f64], p: &[[f64; 3]], out: &mut [[f64; 3]]) {
    let n = p.len();
    let mut blocks = out.chunks_exact_mut(SUM_BLOCK);
    for (o, w) in (&mut blocks).zip(wb.chunks_exact(n * SUM_BLOCK)) {
        let mut acc = [[0.0f64; SUM_BLOCK]; 3];
        for (x, w) in p.iter().zip(w.chunks_exact(SUM_BLOCK)) {
            for (acc, &xc) in acc.iter_mut().zip(x) {
                for (a, &w) in acc.iter_mut().zip(w) {
                    *a = M::madd(w, xc, *a);
                }
            }
        }
        for (t, o) in o.iter_mut().enumerate() {
            *o = [acc[0][t], acc[1][t], acc[2][t]];
        }
    }
    let rest = blocks.into_remainder();
    let width = rest.len();
    if width > 0 {
        let w = &wb[wb.len() - n * width..];
        for (t, o) in rest.iter_mut().enumerate() {
            let mut acc = [0.0f64; 3];
            for (x, w) in p.iter().zip(w.chunks_exact(width)) {
                for c in 0..3 {
                    acc[c] = M::madd(w[t], x[c], acc[c]);
                }
            }
            *o = acc;
        }
    }
}

/// The scalars [`RegularEval`] reads and writes: `f32` and `f64`. The
/// arithmetic is in `f64` either way (an `f32` control point is exact in
/// `f64`); `f32` output is the `f64` result rounded once.
pub trait Sample: Copy + Send + Sync + 'static + sealed::Sealed {
    /// As `f64`.
    fn to_f64(self) -> f64;
    /// From `f64`, rounded to nearest.
    fn from_f64(v: f64) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Sample for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> f64 {
        v
    }
}

impl Sample for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

/// The plan of [`SolidLimit`]: control points → samples.
#[derive(Debug)]
pub struct SolidLimitPlan {
    inputs: usize,
    /// 1, or 0 for the identity of a build of no level.
    levels: u32,
    op: CsrMat<f64>,
}

impl subla_scheme::Refiner for SolidLimit {
    type Input = VolMesh;
    type Plan = SolidLimitPlan;
    fn name(&self) -> &'static str {
        "catmark-solid-limit"
    }
    /// `levels` must be 1 (one step, to the samples); 0 gives the identity.
    fn build(&self, input: &VolMesh, levels: u32, par: Par) -> Result<SolidLimitPlan> {
        if levels > 1 {
            return Err(SchemeError::NoMesh { scheme: "catmark-solid-limit" });
        }
        let op = if levels == 0 {
            let n = input.num_vertices();
            CsrMat::try_new(n, n, (0..=n as u32).collect(), (0..n as u32).collect(), vec![1.0; n])?
        } else {
            limit_matrix(input, &self.samples, self.quantity, par)?
        };
        Ok(SolidLimitPlan { inputs: input.num_vertices(), levels, op })
    }
    /// The samples are not a mesh: there is nothing to step from.
    fn step(&self, _plan: SolidLimitPlan, _par: Par) -> Result<SolidLimitPlan> {
        Err(SchemeError::NoMesh { scheme: "catmark-solid-limit" })
    }
}

impl SolidLimitPlan {
    fn eval_t<T: subla_algebra::Scalar + num_traits::Float>(
        &self,
        control: ndarray::ArrayView2<'_, T>,
        out: ndarray::ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        assert_eq!(control.nrows(), self.inputs, "catmark-solid-limit: control rows");
        subla_algebra::spmv::spmv_csr_into(
            self.op.as_ref(),
            control,
            out,
            subla_algebra::spmv::Update::Set,
            |&w, _, _| subla_scheme::kernel::real::<T>(w),
            par,
        );
        Ok(())
    }
}

impl subla_scheme::Plan for SolidLimitPlan {
    fn name(&self) -> &'static str {
        "catmark-solid-limit"
    }
    fn levels(&self) -> u32 {
        self.levels
    }
    fn level_len(&self, level: u32) -> usize {
        match level {
            0 => self.inputs,
            1 if self.levels() == 1 => self.op.nrows(),
            _ => 0,
        }
    }
    fn eval_f64(
        &self,
        control: ndarray::ArrayView2<'_, f64>,
        out: ndarray::ArrayViewMut2<'_, f64>,
        par: Par,
    ) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn eval_f32(
        &self,
        control: ndarray::ArrayView2<'_, f32>,
        out: ndarray::ArrayViewMut2<'_, f32>,
        par: Par,
    ) -> Result<()> {
        self.eval_t(control, out, par)
    }
    fn operator(&self, level: u32, _par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        Ok(self.op.clone())
    }
    fn refined(&self, level: u32, _par: Par) -> Result<&subla_mesh::Mesh> {
        if level > self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        Err(SchemeError::NoMesh { scheme: "catmark-solid-limit" })
    }
}

/// Limit evaluation of regular cells on a `k × k × k` grid of samples per
/// cell, without a matrix: the control grids are gathered once per
/// topology ([`RegularEval::new`]); each evaluation contracts a cell's 64
/// control points with the basis along `u`, then `v`, then `w` (the
/// tensor product's three separable passes, `(16 k + 4 k² + k³) · 4`
/// multiply-adds per channel instead of `64 k³`), one cell per task.
///
/// Samples are ordered cell by cell, each cell's `w` outer, then `v`, then
/// `u` (`u = i/(k−1)`); row `s` of the output is sample `s`.
#[derive(Clone, Debug)]
pub struct RegularEval {
    cells: Vec<u32>,
    grids: Vec<ControlGrid>,
    k: usize,
    /// Basis (and derivative) values at the `k` parameters, `[t][i]`.
    basis: Vec<[f64; 4]>,
    deriv: Vec<[f64; 4]>,
    num_vertices: usize,
}

impl RegularEval {
    /// The evaluator of `cells` of `m` at `k` samples per direction
    /// (`k ≥ 1`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`LimitError::NotEvaluable`] (as [`SchemeError::Scheme`]'s source)
    /// naming the first cell without a [`control_grid`].
    pub fn new(m: &VolMesh, cells: &[u32], k: usize, par: Par) -> Result<RegularEval> {
        use rayon::prelude::*;
        let k = k.max(1);
        let gather = |&c: &u32| ((c as usize) < m.num_cells()).then(|| control_grid(m, c as usize)).flatten().ok_or(c);
        let grids: std::result::Result<Vec<ControlGrid>, u32> = if par == Par::Rayon && cells.len() >= 256 {
            cells.par_iter().with_min_len(64).map(gather).collect()
        } else {
            cells.iter().map(gather).collect()
        };
        let grids = grids.map_err(not_evaluable)?;
        Ok(RegularEval::from_grids(cells.to_vec(), grids, k, m.num_vertices()))
    }

    /// The evaluator of cells already gathered (`grids[i]` the grid of
    /// `cells[i]`), `k ≥ 1`.
    fn from_grids(cells: Vec<u32>, grids: Vec<ControlGrid>, k: usize, num_vertices: usize) -> RegularEval {
        let t = |i: usize| sample_param(i, k);
        let (basis, deriv) = (0..k).map(|i| cubic_basis(t(i))).unzip();
        RegularEval { cells, grids, k, basis, deriv, num_vertices }
    }

    /// Number of samples (`cells · k³`).
    pub fn num_samples(&self) -> usize {
        self.cells.len() * self.k * self.k * self.k
    }

    /// The cells evaluated, in order.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// `q` at every sample from the control points `x` (`V × 3`) into `out`
    /// (`num_samples × 3`), in `f32` or `f64` ([`Sample`]: computed in `f64`
    /// either way).
    ///
    /// # Panics
    /// If the shapes disagree.
    // The passes index several arrays by the same tensor indices.
    #[allow(clippy::needless_range_loop)]
    pub fn eval_into<T: Sample>(
        &self,
        x: ndarray::ArrayView2<'_, T>,
        q: Quantity,
        mut out: ndarray::ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        use rayon::prelude::*;
        assert_eq!(x.dim(), (self.num_vertices, 3), "RegularEval: control points V × 3");
        assert_eq!(out.dim(), (self.num_samples(), 3), "RegularEval: output samples × 3");
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let k = self.k;
        let per = k * k * k * 3;
        let pick = |axis: usize| {
            if matches!((q, axis), (Quantity::DerivU, 0) | (Quantity::DerivV, 1) | (Quantity::DerivW, 2)) {
                &self.deriv
            } else {
                &self.basis
            }
        };
        let (bu, bv, bw) = (pick(0), pick(1), pick(2));
        let scratch = || (vec![[0.0f64; 3]; 16 * k], vec![[0.0f64; 3]; 4 * k * k]);
        type Scratch = (Vec<[f64; 3]>, Vec<[f64; 3]>);
        let cell = |(a, bvals): &mut Scratch, (g, o): (&ControlGrid, &mut [T])| {
            let pts = gather(xs, g);
            // u: 16 rows (j, l) of 4 points → k values each.
            for row in 0..16 {
                for (iu, b) in bu.iter().enumerate() {
                    let mut acc = [0.0; 3];
                    for i in 0..4 {
                        let x = pts[i + 4 * row];
                        for c in 0..3 {
                            acc[c] += b[i] * x[c];
                        }
                    }
                    a[row * k + iu] = acc;
                }
            }
            // v: for each l, (iv, iu).
            for l in 0..4 {
                for (iv, b) in bv.iter().enumerate() {
                    for iu in 0..k {
                        let mut acc = [0.0; 3];
                        for j in 0..4 {
                            let p = a[(j + 4 * l) * k + iu];
                            for c in 0..3 {
                                acc[c] += b[j] * p[c];
                            }
                        }
                        bvals[(l * k + iv) * k + iu] = acc;
                    }
                }
            }
            // w: the samples, w outer.
            for (iw, b) in bw.iter().enumerate() {
                for iv in 0..k {
                    for iu in 0..k {
                        let mut acc = [0.0; 3];
                        for l in 0..4 {
                            let p = bvals[(l * k + iv) * k + iu];
                            for c in 0..3 {
                                acc[c] += b[l] * p[c];
                            }
                        }
                        let s = ((iw * k + iv) * k + iu) * 3;
                        for (slot, &a) in o[s..s + 3].iter_mut().zip(&acc) {
                            *slot = T::from_f64(a);
                        }
                    }
                }
            }
        };
        let out = out.as_slice_mut().expect("a standard-layout output");
        macro_rules! fixed {
            ($($n:literal)*) => {
                match k {
                    $($n => return self.eval_fixed::<T, $n>(xs, bu, bv, bw, out, par),)*
                    _ => {}
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8);
        if par == Par::Rayon && self.grids.len() >= 64 {
            self.grids.par_iter().zip(out.par_chunks_mut(per)).with_min_len(16).for_each_init(scratch, cell);
        } else {
            let mut s = scratch();
            self.grids.iter().zip(out.chunks_mut(per)).for_each(|item| cell(&mut s, item));
        }
    }
}

/// The class of a cell for limit evaluation (Altenhofen et al. 2018, §3):
/// which evaluation applies, and which are not written yet.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CellClass {
    /// A tricubic patch over a regular 4 × 4 × 4 grid (evaluated).
    Regular,
    /// A tricubic patch with one face on the boundary and a phantom layer
    /// (evaluated).
    RegularBoundary,
    /// A tricubic patch with two or three faces on the boundary, the
    /// boundary edges between them sharp, and a phantom layer beyond each
    /// face (evaluated).
    RegularCrease,
    /// One extraordinary edge among the cell's edges, in layers of a full
    /// surface ring ([`layered_grid`]): Stam's patch × a cubic B-spline
    /// (evaluated).
    Layered,
    /// A layered cell whose face across the edge is on the boundary (a
    /// phantom layer; evaluated).
    LayeredBoundary,
    /// At an untagged boundary edge of one cell (two boundary faces of the
    /// cell meeting there: a box's edge) or of three or more (a concave
    /// edge), the rest regular ([`layered_grid`] with a boundary sector):
    /// the patch on that sector of a smooth boundary vertex × a cubic
    /// B-spline (evaluated).
    SmoothBoundaryEdge,
    /// Several extraordinary edges sharing one vertex (or one on the
    /// boundary ending in a boundary face across it), whose children away
    /// from that vertex are regular or layered (inside, at a boundary face
    /// or at an untagged boundary edge) after one step ([`irregular_grid`]:
    /// the local volumetric subdivision matrix; evaluated).
    Irregular,
    /// Extraordinary edges that share no vertex: several extraordinary
    /// vertices, which constant-time evaluation does not cover (refine
    /// first).
    SeveralExtraordinaryVertices,
    /// A hexahedron that is neither regular, layered nor irregular though
    /// its extraordinary edges share a vertex: an extraordinary edge or the
    /// boundary meets it at a vertex only, an extraordinary edge of it is on
    /// the boundary or its neighbourhood meets another feature or the
    /// boundary, it has several faces on the boundary whose edge is not
    /// sharp, or tags meet the points its limit depends on otherwise than
    /// as [`control_grid`] takes them (not evaluated yet).
    NearFeature,
    /// Not a hexahedron (one refinement step makes hexahedra of it).
    NotHexahedron,
}

impl CellClass {
    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            CellClass::Regular => "regular",
            CellClass::RegularBoundary => "regular at a boundary face",
            CellClass::RegularCrease => "regular at sharp boundary edges",
            CellClass::Layered => "layered (one extraordinary edge)",
            CellClass::LayeredBoundary => "layered at a boundary face",
            CellClass::SmoothBoundaryEdge => "at a smooth boundary edge",
            CellClass::Irregular => "irregular (extraordinary edges at one vertex)",
            CellClass::SeveralExtraordinaryVertices => "several extraordinary vertices",
            CellClass::NearFeature => "near a feature (at a vertex, several boundary faces, a crease or a corner)",
            CellClass::NotHexahedron => "not a hexahedron",
        }
    }

    /// Whether [`limit_matrix`] and [`RegularEval`] evaluate cells of this
    /// class.
    pub fn evaluated(self) -> bool {
        matches!(
            self,
            CellClass::Regular
                | CellClass::RegularBoundary
                | CellClass::RegularCrease
                | CellClass::Layered
                | CellClass::LayeredBoundary
                | CellClass::SmoothBoundaryEdge
                | CellClass::Irregular
        )
    }
}

/// The class of cell `c` of `m`.
pub fn classify(m: &VolMesh, c: usize) -> CellClass {
    if m.kind(c) != CellKind::Hexahedron {
        return CellClass::NotHexahedron;
    }
    if let Some(g) = control_grid(m, c) {
        return match g.num_phantoms() {
            0 => CellClass::Regular,
            1 => CellClass::RegularBoundary,
            _ => CellClass::RegularCrease,
        };
    }
    if let Some(g) = layered_grid(m, c) {
        return match (g.sector, g.phantom) {
            (Some(_), _) => CellClass::SmoothBoundaryEdge,
            (None, Some(_)) => CellClass::LayeredBoundary,
            (None, None) => CellClass::Layered,
        };
    }
    if irregular_grid(m, c).is_some() {
        return CellClass::Irregular;
    }
    let v = m.cell_vertices(c);
    let ees: Vec<[u32; 2]> = HEX_EDGES
        .iter()
        .filter_map(|&(a, b)| {
            let e = m.vertex_edges(v[a] as usize).iter().copied().find(|&e| m.edge(e as usize).contains(&v[b]))?;
            m.is_extraordinary_edge(e as usize).then(|| m.edge(e as usize))
        })
        .collect();
    match ees.len() {
        0 | 1 => CellClass::NearFeature,
        _ => {
            let shared = ees[0].iter().any(|&x| ees.iter().all(|e| e.contains(&x)));
            if shared { CellClass::NearFeature } else { CellClass::SeveralExtraordinaryVertices }
        }
    }
}

/// Limit evaluation of any cells [`cell_grid`] takes (regular, layered and
/// irregular) on a `k × k × k` grid of samples per cell, without a matrix:
/// each class by its direct evaluator ([`RegularEval`],
/// [`LayeredEval`](crate::layered::LayeredEval),
/// [`IrregularEval`](crate::irregular::IrregularEval)), the samples in the
/// cells' order (each cell's `w` outer, then `v`, then `u`).
#[derive(Debug)]
pub struct GridEval {
    cells: Vec<u32>,
    k: usize,
    regular: Option<(RegularEval, Vec<usize>)>,
    layered: Option<(crate::layered::LayeredEval, Vec<usize>)>,
    irregular: Option<(crate::irregular::IrregularEval, Vec<usize>)>,
    num_vertices: usize,
}

impl GridEval {
    /// The evaluator of `cells` of `m` at `k` samples per direction (`k ≥
    /// 1`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`LimitError::NotEvaluable`] (as [`SchemeError::Scheme`]'s source)
    /// naming the first cell without a [`cell_grid`].
    pub fn new(m: &VolMesh, cells: &[u32], k: usize, par: Par) -> Result<GridEval> {
        use rayon::prelude::*;
        let gather = |&c: &u32| cell_grid(m, c as usize).map(|g| (c, g)).ok_or(c);
        let grids: std::result::Result<Vec<(u32, CellGrid)>, u32> = if par == Par::Rayon && cells.len() >= 256 {
            cells.par_iter().with_min_len(64).map(gather).collect()
        } else {
            cells.iter().map(gather).collect()
        };
        Ok(GridEval::from_grids(m, grids.map_err(not_evaluable)?, k))
    }

    /// The evaluator of cells already gathered by [`cell_grid`] (each cell
    /// with its grid, in the samples' order), at `k` samples per direction
    /// (`k ≥ 1`): nothing is gathered again.
    pub fn from_grids(m: &VolMesh, grids: Vec<(u32, CellGrid)>, k: usize) -> GridEval {
        let k = k.max(1);
        let nv = m.num_vertices();
        let cells: Vec<u32> = grids.iter().map(|g| g.0).collect();
        let (mut regular, mut layered, mut irregular) =
            ((vec![], vec![], vec![]), (vec![], vec![], vec![]), (vec![], vec![], vec![]));
        for (i, (c, g)) in grids.into_iter().enumerate() {
            match g {
                CellGrid::Regular(g) => {
                    regular.0.push(c);
                    regular.1.push(g);
                    regular.2.push(i);
                }
                CellGrid::Layered(g) => {
                    layered.0.push(c);
                    layered.1.push(g);
                    layered.2.push(i);
                }
                CellGrid::Irregular(g) => {
                    irregular.0.push(c);
                    irregular.1.push(g);
                    irregular.2.push(i);
                }
            }
        }
        GridEval {
            cells,
            k,
            regular: (!regular.0.is_empty()).then(|| (RegularEval::from_grids(regular.0, regular.1, k, nv), regular.2)),
            layered: (!layered.0.is_empty())
                .then(|| (crate::layered::LayeredEval::from_grids(layered.0, layered.1, k, nv), layered.2)),
            irregular: (!irregular.0.is_empty())
                .then(|| (crate::irregular::IrregularEval::from_grids(irregular.0, irregular.1, k, nv), irregular.2)),
            num_vertices: nv,
        }
    }

    /// Number of samples (`cells · k³`).
    pub fn num_samples(&self) -> usize {
        self.cells.len() * self.k * self.k * self.k
    }

    /// The cells evaluated, in order.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// `q` at every sample from the control points `x` (`V × 3`) into `out`
    /// (`num_samples × 3`), in `f32` or `f64` (computed in `f64`).
    ///
    /// # Errors
    /// [`LimitError::SingularDerivative`] for a derivative where irregular
    /// cells are sampled with `k > 1` (their grids meet the extraordinary
    /// vertex).
    ///
    /// # Panics
    /// If the shapes disagree.
    pub fn eval_into<T: Sample + num_traits::Zero>(
        &self,
        x: ndarray::ArrayView2<'_, T>,
        q: Quantity,
        mut out: ndarray::ArrayViewMut2<'_, T>,
        par: Par,
    ) -> Result<()> {
        assert_eq!(x.dim(), (self.num_vertices, 3), "GridEval: control points V × 3");
        assert_eq!(out.dim(), (self.num_samples(), 3), "GridEval: output samples × 3");
        let per = self.k * self.k * self.k;
        let mut scatter = |part: &ndarray::Array2<T>, at: &[usize]| {
            for (j, &i) in at.iter().enumerate() {
                out.slice_mut(ndarray::s![i * per..(i + 1) * per, ..])
                    .assign(&part.slice(ndarray::s![j * per..(j + 1) * per, ..]));
            }
        };
        if let Some((ev, at)) = &self.regular {
            let mut part = ndarray::Array2::zeros((ev.num_samples(), 3));
            ev.eval_into(x, q, part.view_mut(), par);
            scatter(&part, at);
        }
        if let Some((ev, at)) = &self.layered {
            let mut part = ndarray::Array2::zeros((ev.num_samples(), 3));
            ev.eval_into(x, q, part.view_mut(), par);
            scatter(&part, at);
        }
        if let Some((ev, at)) = &self.irregular {
            let mut part = ndarray::Array2::zeros((ev.num_samples(), 3));
            ev.eval_into(x, q, part.view_mut(), par)?;
            scatter(&part, at);
        }
        Ok(())
    }
}
