//! The limit volume of irregular cells (Altenhofen et al. 2018, Eq. 3): a
//! hexahedron whose extraordinary edges (two or more) share one vertex, the
//! extraordinary vertex `EV`, and whose neighbourhood is otherwise regular
//! or layered; or one with a single extraordinary edge, on the boundary,
//! that ends in a boundary face across it (where a concave untagged edge
//! meets a face: `EV` is that end, a corner of the boundary surface); or
//! one with a corner tag at a vertex (no sharp edge there, no other tag at
//! its vertices, and no extraordinary edge away from it): `EV` is that
//! vertex, a point feature its rule keeps fixed at every level, and the
//! local sub-mesh carries its tag.
//!
//! One subdivision step splits the cell into eight: the child at `EV` has
//! the same configuration, the seven others are regular or layered (along
//! the extraordinary edges; inside, or with a phantom layer at a boundary
//! face), and those are evaluated already
//! ([`crate::limit`], [`crate::layered`]). With the cell's *support* `S`
//! (the vertices of the cells that share a vertex with it, in a canonical
//! order), the local subdivision matrix `A` (`|S| × |S|`: the child at
//! `EV`'s support from the parent's), the extended matrix `R_o` of each
//! octant `o` (the support of the child there from the parent's) and the
//! basis `b_o` of that child (tricubic or layered), the limit at the local
//! parameters `x ∈ (0, 1]³` (`EV` at 0) is, with `2^{−m} ≤ max(x) <
//! 2^{1−m}` and `x' = 2^{m−1} x` in octant `o` of the level-`m − 1` cell,
//!
//! ```text
//! p(x) = b_o(x'')ᵀ R_o A^{m−1} P_S          x'' the child's parameters of x'
//! ```
//!
//! (the derivatives by the chain rule, `2^{m−1}` per level). `A^{m−1}` is
//! `V Λ^{m−1} V⁻¹` where `A` has a real eigendecomposition that reproduces
//! it ([`crate::eigen`]), and a table of powers otherwise; both are computed
//! once per configuration and cached for the process: by the
//! neighbourhood's connectivity in canonical order (a cell whose
//! neighbourhood was met before takes its configuration, or its refusal,
//! without refining anything; the sub-mesh is numbered canonically, so the
//! bits do not depend on which cell met it first), and by the matrices
//! (neighbourhoods with equal matrices share them). At `EV` itself the position is the limit mask
//! (the row of `EV` in `A^∞`); the parametrisation is singular there, so a
//! derivative at `EV` is refused ([`LimitError::SingularDerivative`]).
//!
//! Everything is derived from the mesh and the refinement rules: the
//! support is refined once as a sub-mesh (the cells sharing a vertex with
//! the cell; every rule that reaches a child point in the supports reads
//! only those cells), the child at `EV`'s support is ordered by the same
//! canonical walk, and the matrices are the rules' stencils. The limit is
//! the default [`VertexRule::Layered`](crate::VertexRule)'s.
//!
//! [`LimitError::SingularDerivative`]: crate::limit::LimitError::SingularDerivative

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use nalgebra::{DMatrix, DVector};
use subla_algebra::Par;
use subla_volume::{Cell, CellKind, NONE, VolMesh};

use crate::VertexRule;
use crate::layered::{
    LayeredGrid, across, hexahedron, layered_grid, layered_weights, local_axis, neighbours, other_neighbour,
};
use crate::limit::{Quantity, control_grid, tricubic_weights};
use crate::rules::{cells_of, stencil, vertex_faces};

/// The grid offsets of a VTK hexahedron's vertices.
const HEX_CORNERS: [[u8; 3]; 8] =
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];
/// The twelve edges of a VTK hexahedron, as local vertex pairs.
const HEX_EDGES: [(usize, usize); 12] =
    [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)];
/// Powers of `A` kept where it has no eigendecomposition; past the last,
/// the last (the remaining terms are below rounding).
const LEVELS: usize = 64;

/// A hexahedron's vertices by corner: entry `i + 2j + 4k` is the vertex at
/// `(i, j, k)`.
type Frame = [u32; 8];

fn at(p: [u8; 3]) -> usize {
    usize::from(p[0]) + 2 * usize::from(p[1]) + 4 * usize::from(p[2])
}

/// The vertex of `c` next to both `a` and `b`, other than `not`.
fn common(m: &VolMesh, c: u32, a: u32, b: u32, not: u32) -> Option<u32> {
    let nb = neighbours(m, c, b)?;
    let mut it = neighbours(m, c, a)?.into_iter().filter(|v| *v != not && nb.contains(v));
    let v = it.next()?;
    it.next().is_none().then_some(v)
}

/// The frame of hexahedron `c` with `origin` at `(0, 0, 0)` and `ends[a]`
/// one step along axis `a`.
fn frame_of(m: &VolMesh, c: u32, origin: u32, ends: [u32; 3]) -> Option<Frame> {
    let nb = neighbours(m, c, origin)?;
    if !ends.iter().all(|e| nb.contains(e)) {
        return None;
    }
    let mut f = [NONE; 8];
    f[0] = origin;
    f[1] = ends[0];
    f[2] = ends[1];
    f[4] = ends[2];
    f[3] = common(m, c, f[1], f[2], origin)?;
    f[5] = common(m, c, f[1], f[4], origin)?;
    f[6] = common(m, c, f[2], f[4], origin)?;
    f[7] = common(m, c, f[3], f[5], f[1])?;
    Some(f)
}

/// The frame of the cell across the face of `f` on side `(axis, high)`:
/// the shared corners keep their coordinates but along `axis`, where they
/// become the near side.
fn cross(
    m: &VolMesh,
    c: u32,
    f: &Frame,
    axis: usize,
    high: u8,
    keep: impl Fn(u32) -> bool,
) -> Option<Option<(u32, Frame)>> {
    let shared: Vec<[u8; 3]> = HEX_CORNERS.iter().copied().filter(|p| p[axis] == high).collect();
    let verts: [u32; 4] = std::array::from_fn(|i| f[at(shared[i])]);
    let n = across(m, c, verts)?;
    if n == NONE || !keep(n) {
        return Some(None);
    }
    let n = hexahedron(m, n)?;
    let mut g = [NONE; 8];
    for p in &shared {
        let v = f[at(*p)];
        // Its two neighbours within the shared face.
        let others: Vec<u32> = (0..3)
            .filter(|&a| a != axis)
            .map(|a| {
                let mut q = *p;
                q[a] ^= 1;
                f[at(q)]
            })
            .collect();
        let far = other_neighbour(m, n, v, [others[0], others[1]])?;
        let (mut near_p, mut far_p) = (*p, *p);
        near_p[axis] = 1 - high;
        far_p[axis] = high;
        g[at(near_p)] = v;
        g[at(far_p)] = far;
    }
    Some(Some((n, g)))
}

/// The cells sharing a vertex with `c`, sorted.
fn ring_cells(m: &VolMesh, c: usize) -> Vec<u32> {
    let mut out: Vec<u32> =
        m.cell_vertices(c).iter().flat_map(|&v| cells_of(m, &vertex_faces(m, v as usize))).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The support of `c` (the vertices of its ring of cells) in canonical
/// order: a walk across faces from `c` in `frame`, each cell's corners in
/// frame order, faces in the order `u` low, high, `v` low, high, `w` low,
/// high; vertices numbered as first met. It depends on the mesh's
/// connectivity around `c` and the frame only, so two neighbourhoods of the
/// same configuration give corresponding orders.
fn canonical_support(m: &VolMesh, c: u32, frame: Frame) -> Option<Vec<u32>> {
    canonical_walk(m, c, frame).map(|w| w.0)
}

/// [`canonical_support`] and the ring's cells in the walk's order (`c`
/// first).
fn canonical_walk(m: &VolMesh, c: u32, frame: Frame) -> Option<(Vec<u32>, Vec<u32>)> {
    let ring: HashSet<u32> = ring_cells(m, c as usize).into_iter().collect();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut points = Vec::new();
    let mut visited: HashSet<u32> = HashSet::from([c]);
    let mut order = Vec::with_capacity(ring.len());
    let mut queue = VecDeque::from([(c, frame)]);
    while let Some((cell, f)) = queue.pop_front() {
        order.push(cell);
        for &v in &f {
            if seen.insert(v) {
                points.push(v);
            }
        }
        for axis in 0..3 {
            for high in 0..2u8 {
                let Some((n, g)) = cross(m, cell, &f, axis, high, |n| ring.contains(&n))? else { continue };
                if visited.insert(n) {
                    queue.push_back((n, g));
                }
            }
        }
    }
    (visited.len() == ring.len()).then_some((points, order))
}

/// The child of one octant: its grid in the refined support mesh, the rows
/// of its control points over the support, and the map from the octant's
/// parameters to the child's.
#[derive(Debug)]
enum Sub {
    Regular(Box<crate::limit::ControlGrid>),
    Layered(LayeredGrid),
}

#[derive(Debug)]
struct Octant {
    sub: Sub,
    /// Row of each of the child's control points (by refined-mesh id).
    row: HashMap<u32, usize>,
    /// Control points × support.
    rows: DMatrix<f64>,
    /// The child's corner 0 and axes in the parent's local parameters:
    /// `x = p0 + J q`.
    p0: [f64; 3],
    /// `J⁻¹` (`q = J⁻¹ (x − p0)`), a signed permutation times 2.
    jinv: [[f64; 3]; 3],
}

/// What a configuration shares: the matrices and their powers.
#[derive(Debug)]
struct Operator {
    size: usize,
    ev: usize,
    octants: Vec<Option<Octant>>,
    /// `A^j`, `j = 0 ..= LEVELS` (from the eigendecomposition where there is
    /// one).
    powers: Vec<DMatrix<f64>>,
    /// `A`'s eigenvalues where it has a real eigendecomposition.
    values: Option<Vec<f64>>,
}

/// The control points of an irregular cell and its configuration's shared
/// matrices.
#[derive(Clone, Debug)]
pub struct IrregularGrid {
    /// The support, in canonical order (the extraordinary vertex among
    /// them).
    pub points: Vec<u32>,
    /// For the local `x`, `y`, `z` (the extraordinary vertex at `0`): the
    /// cell parameter it is (`u`, `v`, `w` in turn) and whether it runs
    /// backwards.
    pub axes: [(u8, bool); 3],
    op: Arc<Operator>,
}

impl PartialEq for IrregularGrid {
    fn eq(&self, other: &Self) -> bool {
        self.points == other.points && self.axes == other.axes && Arc::ptr_eq(&self.op, &other.op)
    }
}

impl Eq for IrregularGrid {}

impl IrregularGrid {
    /// Whether `uvw` is the extraordinary vertex, where the derivatives are
    /// not defined.
    pub fn is_singular(&self, uvw: [f64; 3]) -> bool {
        self.axes.iter().all(|&(a, back)| if back { uvw[a as usize] >= 1.0 } else { uvw[a as usize] <= 0.0 })
    }

    /// Whether the configuration's powers come from an eigendecomposition
    /// of its local subdivision matrix (else from a table of powers).
    pub fn has_eigendecomposition(&self) -> bool {
        self.op.values.is_some()
    }

    /// The eigenvalues of the local subdivision matrix (decreasing), where
    /// it has a real eigendecomposition that reproduces it.
    pub fn eigenvalues(&self) -> Option<&[f64]> {
        self.op.values.as_deref()
    }

    /// The local subdivision matrix `A`.
    pub fn subdivision_matrix(&self) -> &DMatrix<f64> {
        &self.op.powers[1]
    }

    /// The extraordinary vertex.
    pub fn extraordinary_vertex(&self) -> u32 {
        self.points[self.op.ev]
    }
}

/// The cache of configurations, keyed by their matrices' bits.
fn cache() -> &'static Mutex<HashMap<Vec<u64>, Arc<Operator>>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u64>, Arc<Operator>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Neighbourhoods' connectivity → their configuration ([`structures`]).
type Structures = HashMap<Vec<u32>, Option<Arc<Operator>>>;

/// The cache of neighbourhoods, keyed by their connectivity in canonical
/// order (the extraordinary vertex's corner, then each ring cell's
/// vertices as canonical indices, cells in the walk's order): the
/// configuration made from it, or `None` where it is not one. Everything
/// past the walk is computed from that connectivity alone (the sub-mesh is
/// numbered canonically), so a neighbourhood met again takes the same
/// configuration bit for bit, whichever cell met it first.
fn structures() -> &'static Mutex<Structures> {
    static CACHE: OnceLock<Mutex<Structures>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The control points of cell `c` where it is irregular: a hexahedron
/// whose extraordinary edges, two or more, share one of its vertices,
/// where the seven children away from that vertex are regular or layered
/// after one step (inside, or with a phantom layer at a boundary face) and
/// the child at it has the cell's configuration. `None` otherwise.
pub fn irregular_grid(m: &VolMesh, c: usize) -> Option<IrregularGrid> {
    if c >= m.num_cells() || m.kind(c) != CellKind::Hexahedron {
        return None;
    }
    let cv = m.cell_vertices(c);
    let edge = |a: usize, b: usize| {
        m.vertex_edges(cv[a] as usize).iter().copied().find(|&e| m.edge(e as usize).contains(&cv[b]))
    };
    let ext: Vec<(usize, usize)> = HEX_EDGES
        .iter()
        .copied()
        .filter(|&(a, b)| edge(a, b).is_some_and(|e| m.is_extraordinary_edge(e as usize)))
        .collect();
    // Tags matter only at the cell's own vertices and the edges at them:
    // every rule reaching `A`'s rows and the octants' reads those (the
    // other points of the supports are edge, face and cell points). A
    // corner tag at one of them, with no sharp edge there and no other tag
    // at the cell's vertices, is a point feature: that vertex is the
    // extraordinary one (its rule keeps it fixed at every level).
    let tagged: Vec<usize> =
        if m.has_features() { (0..8).filter(|&k| m.touches_feature(cv[k] as usize)).collect() } else { Vec::new() };
    let corner_ev = match tagged[..] {
        [] => None,
        [k] if m.is_corner(cv[k] as usize)
            && !m.vertex_edges(cv[k] as usize).iter().any(|&e| m.is_sharp_edge(e as usize)) =>
        {
            Some(k)
        }
        _ => return None,
    };
    let k_ev = match (ext.len(), corner_ev) {
        (0, Some(k)) => k,
        (0, None) => return None,
        (1, Some(k)) => [ext[0].0, ext[0].1].into_iter().find(|&x| x == k)?,
        // One extraordinary edge, on the boundary, ending in a boundary
        // face across it (where a concave edge meets a face): the vertex
        // there, a corner of the boundary surface, is the extraordinary one.
        (1, None) => {
            let (a, b) = ext[0];
            if !edge(a, b).is_some_and(|e| m.is_boundary_edge(e as usize)) {
                return None;
            }
            [(a, b), (b, a)].into_iter().find(|&(k, other)| boundary_face_without(m, c, cv[k], cv[other]))?.0
        }
        (_, corner) => {
            let k = [ext[0].0, ext[0].1].into_iter().find(|&k| ext.iter().all(|&(a, b)| a == k || b == k))?;
            if corner.is_some_and(|x| x != k) {
                return None;
            }
            k
        }
    };
    let e = HEX_CORNERS[k_ev];
    let axes: [(u8, bool); 3] = std::array::from_fn(|a| (a as u8, e[a] == 1));
    // The support in canonical order, walked in the mesh itself.
    let ring = ring_cells(m, c);
    if ring.iter().any(|&r| m.kind(r as usize) != CellKind::Hexahedron) {
        return None;
    }
    let corner = |p: [u8; 3]| cv[HEX_CORNERS.iter().position(|&q| q == p).expect("a corner")];
    let ends: [u32; 3] = std::array::from_fn(|a| {
        let mut p = e;
        p[a] ^= 1;
        corner(p)
    });
    let frame = frame_of(m, c as u32, cv[k_ev], ends)?;
    let (support, order) = canonical_walk(m, c as u32, frame)?;
    let index: HashMap<u32, u32> = support.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
    // The neighbourhood's connectivity in canonical numbering: the key of
    // the configuration, and the sub-mesh it is refined as.
    let cells: Vec<Cell> = order
        .iter()
        .map(|&r| Cell::Hexahedron(std::array::from_fn(|i| index[&m.cell_vertices(r as usize)[i]])))
        .collect();
    let mut key = vec![k_ev as u32, support.len() as u32, u32::from(corner_ev.is_some())];
    for cell in &cells {
        key.extend(cell.vertices());
    }
    let known = structures().lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key).cloned();
    let op = match known {
        Some(op) => op,
        None => {
            let op = configuration(&cells, support.len(), k_ev, frame.map(|v| index[&v]), corner_ev.is_some());
            structures().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, op.clone());
            op
        }
    }?;
    Some(IrregularGrid { points: support, axes, op })
}

/// The configuration of a neighbourhood: `cells` the ring (the cell first)
/// over `n` support points in canonical order, the extraordinary vertex at
/// the cell's corner `k_ev`, `frame` the cell's frame (canonical indices),
/// `corner` whether the extraordinary vertex carries a corner tag.
/// `None` where it is not an irregular configuration.
/// Whether cell `c` has a face on the boundary through `v` but not `not`.
fn boundary_face_without(m: &VolMesh, c: usize, v: u32, not: u32) -> bool {
    m.cell_faces(c).iter().any(|&code| {
        let f = (code >> 1) as usize;
        m.is_boundary_face(f) && m.face(f).contains(&v) && !m.face(f).contains(&not)
    })
}

fn configuration(cells: &[Cell], n: usize, k_ev: usize, frame: Frame, corner: bool) -> Option<Arc<Operator>> {
    let mut l = VolMesh::from_cells(n, cells).ok()?;
    if corner {
        l = l.with_features(&[], &[frame[0]]).ok()?;
    }
    let cl = 0u32;
    let ev = frame[0];
    let ends = [frame[1], frame[2], frame[4]];
    let support = canonical_support(&l, cl, frame_of(&l, cl, ev, ends)?)?;
    if support.iter().enumerate().any(|(i, &v)| v as usize != i) {
        return None;
    }
    let index: HashMap<u32, usize> = support.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let l1 = l.split(Par::Seq).ok()?;
    // The child at EV and its frame: its axes run to the midpoints of the
    // edges from EV.
    let child_ev = 8 * cl + k_ev as u32;
    if l1.cell_vertices(child_ev as usize)[0] != ev {
        return None;
    }
    let nv = l.num_vertices() as u32;
    let edge_point = |a: u32, b: u32| -> Option<u32> {
        l.vertex_edges(a as usize).iter().find(|&&x| l.edge(x as usize).contains(&b)).map(|&x| nv + x)
    };
    let ends1: [u32; 3] = std::array::from_fn(|a| edge_point(ev, ends[a]).unwrap_or(NONE));
    let frame1 = frame_of(&l1, child_ev, ev, ends1)?;
    let support1 = canonical_support(&l1, child_ev, frame1)?;
    if support1.len() != support.len() {
        return None;
    }
    // A child point's row over the support.
    let row_of = |id: u32| -> Option<Vec<f64>> {
        let mut s = Vec::new();
        stencil(&l, VertexRule::Layered, id as usize, &mut s);
        let mut row = vec![0.0; support.len()];
        for (v, w) in s {
            row[*index.get(&v)?] += w;
        }
        Some(row)
    };
    let n = support.len();
    let mut a = DMatrix::zeros(n, n);
    for (i, &id) in support1.iter().enumerate() {
        let r = row_of(id)?;
        for j in 0..n {
            a[(i, j)] = r[j];
        }
    }
    // The parent-local coordinates of each child point of cell cl.
    let coords_of = |v: u32| -> Option<[f64; 3]> {
        let k = frame.iter().position(|&f| f == v)?;
        Some([k & 1, (k >> 1) & 1, k >> 2].map(|b| b as f64))
    };
    let child_coords = |id: u32| crate::refined::child_param(&l, cl, id, coords_of);
    let mut octants: Vec<Option<Octant>> = (0..8).map(|_| None).collect();
    for k in 0..8 {
        if k == k_ev {
            continue;
        }
        let ch = 8 * cl + k as u32;
        let vs = l1.cell_vertices(ch as usize);
        let p: Vec<[f64; 3]> = [0, 1, 3, 4].iter().map(|&i| child_coords(vs[i])).collect::<Option<_>>()?;
        let p0 = p[0];
        // J's columns: the child's axes; J⁻¹ = 4 Jᵀ (J is ½ a signed
        // permutation).
        let jinv: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|x| 4.0 * (p[i + 1][x] - p0[x])));
        let centre: [f64; 3] =
            std::array::from_fn(|x| p0[x] + (0..3).map(|i| 0.5 * (p[i + 1][x] - p0[x])).sum::<f64>());
        let o = (0..3).map(|x| usize::from(centre[x] > 0.5) << x).sum::<usize>();
        // A child may have a face on the boundary (a phantom layer).
        let (sub, ids): (Sub, Vec<u32>) = match control_grid(&l1, ch as usize) {
            Some(g) => (Sub::Regular(Box::new(g)), g.points.iter().copied().filter(|&v| v != NONE).collect()),
            None => {
                let g = layered_grid(&l1, ch as usize)?;
                let ids = g.points.iter().copied().filter(|&v| v != NONE).collect();
                (Sub::Layered(g), ids)
            }
        };
        let mut row = HashMap::new();
        let mut rows = DMatrix::zeros(ids.len(), n);
        for (i, &id) in ids.iter().enumerate() {
            row.insert(id, i);
            let r = row_of(id)?;
            for j in 0..n {
                rows[(i, j)] = r[j];
            }
        }
        octants[o] = Some(Octant { sub, row, rows, p0, jinv });
    }
    if octants.iter().filter(|o| o.is_some()).count() != 7 || octants[0].is_some() {
        return None;
    }
    let ev_index = index[&ev];
    // The configuration's key: its matrices.
    let mut key: Vec<u64> = a.iter().map(|x| x.to_bits()).collect();
    for o in octants.iter().flatten() {
        key.extend(o.rows.iter().map(|x| x.to_bits()));
        key.extend(o.p0.iter().chain(o.jinv.iter().flatten()).map(|x| x.to_bits()));
    }
    key.push(ev_index as u64);
    let op = {
        let mut cache = cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(op) = cache.get(&key) {
            op.clone()
        } else {
            let (powers, values) = powers_of(&a);
            let op = Arc::new(Operator { size: n, ev: ev_index, octants, powers, values });
            cache.insert(key, op.clone());
            op
        }
    };
    Some(op)
}

/// `A^j` for `j = 0 ..= LEVELS`: by the eigendecomposition where it
/// reproduces `A` (with its eigenvalues), else by repeated products.
fn powers_of(a: &DMatrix<f64>) -> (Vec<DMatrix<f64>>, Option<Vec<f64>>) {
    let n = a.nrows();
    let eigen = crate::eigen::Spectrum::new(a, None).and_then(|s| s.decompose(crate::eigen::RowSums::One));
    if let Ok(e) = eigen {
        return ((0..=LEVELS as u32).map(|j| e.power(j)).collect(), Some(e.values().to_vec()));
    }
    let mut powers = vec![DMatrix::identity(n, n)];
    for j in 1..=LEVELS {
        let next = &powers[j - 1] * a;
        powers.push(next);
    }
    (powers, None)
}

/// Why an irregular cell's weights are not given.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Singular;

/// The weights over a configuration's support at the local parameters `x`
/// (the extraordinary vertex at 0) of the position (`deriv` `None`) or the
/// derivative along local axis `a` times `sign` (`Some((a, sign))`).
fn local_weights(op: &Operator, x: [f64; 3], deriv: Option<(usize, f64)>) -> Result<DVector<f64>, Singular> {
    let top = x.iter().copied().fold(0.0, f64::max);
    if top <= 0.0 {
        if deriv.is_some() {
            return Err(Singular);
        }
        return Ok(op.powers[LEVELS].row(op.ev).transpose());
    }
    // The level: 2^{-m} ≤ top < 2^{1-m}; x' = 2^{m-1} x, exactly.
    let (mut m, mut scale) = (1usize, 1.0f64);
    while top * scale < 0.5 {
        scale *= 2.0;
        m += 1;
    }
    let xs = x.map(|t| t * scale);
    let o = (0..3).map(|a| usize::from(xs[a] >= 0.5) << a).sum::<usize>();
    let oct = op.octants[o].as_ref().expect("seven octants");
    let qc: [f64; 3] =
        std::array::from_fn(|i| (0..3).map(|a| oct.jinv[i][a] * (xs[a] - oct.p0[a])).sum::<f64>().clamp(0.0, 1.0));
    // The sub-cell's quantity and the factor of the chain rule.
    let (sub_q, factor) = match deriv {
        None => (Quantity::Position, 1.0),
        Some((a, sign)) => {
            let i = (0..3).find(|&i| oct.jinv[i][a] != 0.0).expect("a signed permutation");
            let qi = [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW][i];
            (qi, sign * scale * oct.jinv[i][a])
        }
    };
    // The child's weights by row of `R_o`, then `y = R_oᵀ w` in one product.
    let mut ws = DVector::zeros(oct.rows.nrows());
    let mut add = |id: u32, w: f64| ws[oct.row[&id]] += w;
    match &oct.sub {
        Sub::Regular(g) => {
            let mut w = tricubic_weights(qc, sub_q);
            crate::limit::fold_phantom(&mut w, g.phantoms);
            for (&id, w) in g.points.iter().zip(w) {
                if id != NONE {
                    add(id, w);
                }
            }
        }
        Sub::Layered(lg) => {
            let mut s = Vec::new();
            layered_weights(lg, qc, sub_q, &mut s);
            for (id, w) in s {
                add(id, w);
            }
        }
    }
    let y = oct.rows.tr_mul(&ws);
    Ok(op.powers[(m - 1).min(LEVELS)].tr_mul(&y) * factor)
}

/// The weights of an irregular cell's support at the cell's `(u, v, w)`
/// for `q`, appended to `out` as `(vertex, weight)`; `Err` for a derivative
/// at the extraordinary vertex itself.
pub(crate) fn irregular_weights(
    g: &IrregularGrid,
    uvw: [f64; 3],
    q: Quantity,
    out: &mut Vec<(u32, f64)>,
) -> Result<(), Singular> {
    let x: [f64; 3] = g.axes.map(|(a, back)| if back { 1.0 - uvw[a as usize] } else { uvw[a as usize] });
    let z = local_weights(&g.op, x, local_axis(&g.axes, q))?;
    out.extend(g.points.iter().zip(z.iter()).map(|(&v, &w)| (v, w)));
    Ok(())
}

/// One configuration's weights at the `k³` local samples (`x = i/(k−1)`,
/// `z` outer) for the position and the three local derivatives, made on
/// first use: `k³ × |S|` each.
#[derive(Debug)]
struct Table {
    op: Arc<Operator>,
    w: [OnceLock<Vec<f64>>; 4],
    /// The same laid out for
    /// [`weighted_sums`](crate::limit::weighted_sums).
    wt: [OnceLock<Vec<f64>>; 4],
}

/// Limit evaluation of irregular cells on a `k × k × k` grid of samples per
/// cell without a matrix (the irregular counterpart of
/// [`RegularEval`](crate::limit::RegularEval)): the weights of each
/// configuration at the grid's local parameters are made once (on first
/// use of a quantity), so each evaluation is one dense `k³ × |S|` product
/// per cell with its support's points.
///
/// Samples are ordered cell by cell, each cell's `w` outer, then `v`, then
/// `u`, as [`SolidLimit::grid`](crate::limit::SolidLimit::grid) orders them;
/// a reflected axis reads the local parameter `i/(k−1)` for the cell's `1 −
/// i/(k−1)`, so the results equal
/// [`limit_matrix`](crate::limit::limit_matrix)'s to rounding (tested).
#[derive(Debug)]
pub struct IrregularEval {
    cells: Vec<u32>,
    grids: Vec<IrregularGrid>,
    /// The table of each grid's configuration.
    table_of: Vec<usize>,
    tables: Vec<Table>,
    k: usize,
    num_vertices: usize,
}

impl IrregularEval {
    /// The evaluator of `cells` of `m` (all irregular) at `k` samples per
    /// direction (`k ≥ 1`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`LimitError::NotEvaluable`](crate::limit::LimitError) (as
    /// [`SchemeError::Scheme`](subla_scheme::SchemeError)'s source) naming
    /// the first cell without an [`irregular_grid`].
    pub fn new(m: &VolMesh, cells: &[u32], k: usize, par: Par) -> subla_scheme::Result<IrregularEval> {
        use rayon::prelude::*;
        let k = k.max(1);
        let gather = |&c: &u32| irregular_grid(m, c as usize).ok_or(c);
        let grids: Result<Vec<IrregularGrid>, u32> = if par == Par::Rayon && cells.len() >= 8 {
            cells.par_iter().map(gather).collect()
        } else {
            cells.iter().map(gather).collect()
        };
        let grids = grids.map_err(crate::limit::not_evaluable)?;
        Ok(IrregularEval::from_grids(cells.to_vec(), grids, k, m.num_vertices()))
    }

    /// The evaluator of cells already gathered (`grids[i]` the grid of
    /// `cells[i]`), `k ≥ 1`.
    pub(crate) fn from_grids(
        cells: Vec<u32>,
        grids: Vec<IrregularGrid>,
        k: usize,
        num_vertices: usize,
    ) -> IrregularEval {
        let mut tables: Vec<Table> = Vec::new();
        let table_of = grids
            .iter()
            .map(|g| match tables.iter().position(|t| Arc::ptr_eq(&t.op, &g.op)) {
                Some(i) => i,
                None => {
                    tables.push(Table {
                        op: g.op.clone(),
                        w: std::array::from_fn(|_| OnceLock::new()),
                        wt: std::array::from_fn(|_| OnceLock::new()),
                    });
                    tables.len() - 1
                }
            })
            .collect();
        IrregularEval { cells, grids, table_of, tables, k, num_vertices }
    }

    /// Number of samples (`cells · k³`).
    pub fn num_samples(&self) -> usize {
        self.cells.len() * self.k * self.k * self.k
    }

    /// The cells evaluated, in order.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// The number of distinct configurations among the cells.
    pub fn num_configurations(&self) -> usize {
        self.tables.len()
    }

    /// The configuration of the `i`-th cell (an index below
    /// [`IrregularEval::num_configurations`]).
    pub fn configuration(&self, i: usize) -> usize {
        self.table_of[i]
    }

    /// The support (control points, in the configuration's order) of the
    /// `i`-th cell.
    pub fn support(&self, i: usize) -> &[u32] {
        &self.grids[i].points
    }

    /// Whether the `i`-th cell's `u`, `v`, `w` run backwards from its
    /// extraordinary vertex (its local axes are `u`, `v`, `w` in that
    /// order, reflected where this says so).
    pub fn reflected(&self, i: usize) -> [bool; 3] {
        self.grids[i].axes.map(|(_, back)| back)
    }

    /// The weights of configuration `config` at the `k³` local grid
    /// parameters (`z` outer, then `y`, then `x`; `k³ × |S|`, row-major) for
    /// the position, or for a derivative along the local axis of that cell
    /// parameter (times −1 in a cell where it is [`reflected`]).
    ///
    /// # Errors
    /// [`LimitError::SingularDerivative`](crate::limit::LimitError) naming
    /// a cell of the configuration for a derivative where `k > 1`.
    ///
    /// [`reflected`]: IrregularEval::reflected
    pub fn table(&self, config: usize, q: Quantity) -> subla_scheme::Result<&[f64]> {
        let which = match q {
            Quantity::DerivU => 1,
            Quantity::DerivV => 2,
            Quantity::DerivW => 3,
            _ => 0,
        };
        self.weights(config, which).map_err(|_| {
            let i = self.table_of.iter().position(|&t| t == config).unwrap_or(0);
            subla_scheme::SchemeError::scheme(
                "catmark-solid-limit",
                crate::limit::LimitError::SingularDerivative { cell: self.cells[i] },
            )
        })
    }

    /// The weights of table `t` for the position (`which` 0) or the
    /// derivative along local axis `which − 1`.
    fn weights(&self, t: usize, which: usize) -> Result<&[f64], Singular> {
        let table = &self.tables[t];
        let k = self.k;
        if which > 0 && k > 1 {
            // The grid's corner at the extraordinary vertex.
            return Err(Singular);
        }
        Ok(table.w[which].get_or_init(|| {
            let param = |i: usize| crate::limit::sample_param(i, k);
            let n = table.op.size;
            let mut w = Vec::with_capacity(k * k * k * n);
            for l in 0..k {
                for j in 0..k {
                    for i in 0..k {
                        let deriv = (which > 0).then(|| (which - 1, 1.0));
                        let z = local_weights(&table.op, [param(i), param(j), param(l)], deriv)
                            .expect("off the extraordinary vertex");
                        w.extend(z.iter());
                    }
                }
            }
            w
        }))
    }

    /// [`IrregularEval::weights`] laid out for
    /// [`weighted_sums`](crate::limit::weighted_sums).
    fn weights_blocked(&self, t: usize, which: usize) -> Result<&[f64], Singular> {
        let w = self.weights(t, which)?;
        Ok(self.tables[t].wt[which].get_or_init(|| crate::limit::blocked_weights(w, self.k * self.k * self.k)))
    }

    /// `q` at every sample from the control points `x` (`V × 3`) into `out`
    /// (`num_samples × 3`), in `f32` or `f64` (computed in `f64`).
    ///
    /// # Errors
    /// [`LimitError::SingularDerivative`](crate::limit::LimitError) naming
    /// the first cell for a derivative where `k > 1`: the grid has a
    /// sample at every cell's extraordinary vertex, where the
    /// parametrisation is singular.
    ///
    /// # Panics
    /// If the shapes disagree.
    pub fn eval_into<T: crate::limit::Sample>(
        &self,
        x: ndarray::ArrayView2<'_, T>,
        q: Quantity,
        mut out: ndarray::ArrayViewMut2<'_, T>,
        par: Par,
    ) -> subla_scheme::Result<()> {
        use rayon::prelude::*;
        assert_eq!(x.dim(), (self.num_vertices, 3), "IrregularEval: control points V × 3");
        assert_eq!(out.dim(), (self.num_samples(), 3), "IrregularEval: output samples × 3");
        if self.grids.is_empty() {
            return Ok(());
        }
        let which = |g: &IrregularGrid| local_axis(&g.axes, q).map_or(0, |(a, _)| a + 1);
        // The tables first (made once, in parallel over configurations).
        let singular = |c: u32| {
            subla_scheme::SchemeError::scheme(
                "catmark-solid-limit",
                crate::limit::LimitError::SingularDerivative { cell: c },
            )
        };
        for (g, &t) in self.grids.iter().zip(&self.table_of) {
            self.weights_blocked(t, which(g)).map_err(|_| singular(self.cells[0]))?;
        }
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let k = self.k;
        let per = k * k * k * 3;
        let out = out.as_slice_mut().expect("a standard-layout output");
        type Scratch = (Vec<[f64; 3]>, Vec<[f64; 3]>);
        let cell = |(pts, sums): &mut Scratch, ((g, &t), o): ((&IrregularGrid, &usize), &mut [T])| {
            let wt = self.weights_blocked(t, which(g)).expect("made above");
            let sign = local_axis(&g.axes, q).map_or(1.0, |(_, s)| s);
            pts.clear();
            pts.extend(g.points.iter().map(|&v| {
                let v = v as usize * 3;
                [xs[v].to_f64(), xs[v + 1].to_f64(), xs[v + 2].to_f64()]
            }));
            sums.resize(k * k * k, [0.0; 3]);
            crate::limit::weighted_sums(wt, pts, sums);
            let place = |a: usize, i: usize| if g.axes[a].1 { k - 1 - i } else { i };
            for l in 0..k {
                for j in 0..k {
                    for i in 0..k {
                        let acc = sums[(l * k + j) * k + i];
                        let row = ((place(2, l) * k + place(1, j)) * k + place(0, i)) * 3;
                        for c in 0..3 {
                            o[row + c] = T::from_f64(sign * acc[c]);
                        }
                    }
                }
            }
        };
        let items = self.grids.iter().zip(&self.table_of);
        if par == Par::Rayon && self.grids.len() >= 16 {
            items
                .collect::<Vec<_>>()
                .into_par_iter()
                .zip(out.par_chunks_mut(per))
                .for_each_init(Scratch::default, cell);
        } else {
            let mut s = Scratch::default();
            items.zip(out.chunks_mut(per)).for_each(|item| cell(&mut s, item));
        }
        Ok(())
    }
}
