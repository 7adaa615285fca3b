//! The limit volume of layered cells (Altenhofen et al. 2018, Eq. 2): a
//! hexahedron with one extraordinary edge, of valence `n`, whose
//! neighbourhood is layers of a Catmull-Clark surface ring along it.
//!
//! Under the default [`VertexRule::Layered`](crate::VertexRule::Layered)
//! such a neighbourhood refines as the tensor product of Catmull-Clark's
//! surface rules across the edge and the cubic B-spline's along it (the
//! derivation is in `docs/solids.md`), so the cell's limit is Stam's
//! evaluation of the surface patch next to the extraordinary vertex
//! ([`StamPatch`]) times the cubic B-spline basis across four layers:
//!
//! ```text
//! p(s, t, r) = Σ_l Σ_i B_l(r) φ_i(s, t) P_{l, i}      l = 0 ..= 3, i < 2n + 8
//! ```
//!
//! with `(s, t)` across the edge (the extraordinary vertex at `(0, 0)`)
//! and `r` along it. The cell's own parameters `(u, v, w)` map to `(s, t,
//! r)` by a permutation of the axes and reflections ([`LayeredGrid::axes`]).
//! A cell whose face across the edge is on the boundary has a phantom layer
//! `2 P₁ − P₂` beyond it, as regular boundary cells do (the boundary rules
//! make the boundary layer refine by itself: the cubic B-spline's end
//! condition).
//!
//! A cell whose two boundary faces meet at an untagged edge of that cell
//! alone (a box's edge: valence 1) is the same tensor product with the
//! patch at a smooth boundary corner ([`CornerPatch`]) across the edge:
//! the boundary surface there is a regular Catmull-Clark surface that
//! turns round the edge, and its cross-section refines as a Catmull-Clark
//! surface whose boundary curve turns round the corner (`docs/solids.md`).

use subla_volume::{CellKind, NONE, VolMesh};

use std::sync::Arc;

use crate::corner::CornerPatch;
use crate::limit::Quantity;
use crate::rules::layered_edges;
use crate::stam::StamPatch;

/// The surface patch across a layered cell's edge.
enum Surface {
    /// Next to an interior extraordinary vertex.
    Stam(Arc<StamPatch>),
    /// On a sector of a boundary vertex whose boundary curve turns
    /// smoothly round it (an untagged boundary edge).
    Corner(Arc<CornerPatch>),
}

impl Surface {
    /// The patch of an edge of valence `n` inside (`sector` `None`), or on
    /// the boundary with the cell on sector `sector` of the `n` cells round
    /// it.
    fn of(n: usize, sector: Option<usize>) -> Option<Surface> {
        match sector {
            Some(j) => CornerPatch::get(n, j).ok().map(Surface::Corner),
            None => StamPatch::get(n).ok().map(Surface::Stam),
        }
    }

    fn len(&self) -> usize {
        match self {
            Surface::Stam(p) => p.len(),
            Surface::Corner(p) => p.len(),
        }
    }

    fn weights(&self, s: f64, t: f64, w: [&mut [f64]; 3]) {
        match self {
            Surface::Stam(p) => p.weights(s, t, w),
            Surface::Corner(p) => p.weights(s, t, w),
        }
    }
}

/// The twelve edges of a VTK hexahedron, as local vertex pairs.
const HEX_EDGES: [(usize, usize); 12] =
    [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)];
/// The grid offsets of a VTK hexahedron's vertices.
const HEX_CORNERS: [[u8; 3]; 8] =
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];

/// The control points of a layered cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayeredGrid {
    /// The valence `n` of the extraordinary edge: its number of cells (on
    /// the boundary: 1 for a box's edge, two boundary faces of the cell
    /// meeting there; 3 or more for a concave edge).
    pub valence: usize,
    /// For an untagged boundary edge, the cell's place among the `n` cells
    /// round it (counted from one boundary face to the other); `None`
    /// inside.
    pub sector: Option<usize>,
    /// Four layers of [`LayeredGrid::layer_len`] points each, layer-major:
    /// layer 1 holds the cell's face at `r = 0`, layer 2 the face at `r =
    /// 1`; within a layer [`StamPatch`]'s order (the extraordinary vertex,
    /// then the ring's edge and diagonal vertices, then the seven beyond
    /// the patch), or on the boundary [`CornerPatch`]'s (the same, with the
    /// ring's last edge vertex after the diagonals and only the outer
    /// points there are). [`NONE`] in a phantom layer.
    pub points: Vec<u32>,
    /// Where the face across the edge at `r = 0` (`false`) or `r = 1`
    /// (`true`) is on the boundary: the phantom layer 0 or 3.
    pub phantom: Option<bool>,
    /// For `s`, `t`, `r` in turn: the cell parameter (0 `u`, 1 `v`, 2 `w`)
    /// it is and whether it runs backwards (`s = 1 − u`, …).
    pub axes: [(u8, bool); 3],
}

impl LayeredGrid {
    /// The number of points per layer: `2n + 8` inside, [`CornerPatch`]'s
    /// on the boundary (9 for valence 1).
    pub fn layer_len(&self) -> usize {
        match self.sector {
            Some(j) => crate::corner::len(self.valence, j),
            None => 2 * self.valence + 8,
        }
    }

    /// The local parameters `(s, t, r)` of the cell's `(u, v, w)`.
    pub fn local(&self, uvw: [f64; 3]) -> [f64; 3] {
        self.axes.map(|(a, back)| if back { 1.0 - uvw[a as usize] } else { uvw[a as usize] })
    }
}

/// A cell of a layer over a quad of the surface ring: the cell, its face in
/// the lower plane (`bottom`, a cycle) and the vertices above them (`top`).
#[derive(Copy, Clone, Debug)]
struct Column {
    cell: u32,
    bottom: [u32; 4],
    top: [u32; 4],
}

/// The three neighbours of `v` in hexahedron `c`.
pub(crate) fn neighbours(m: &VolMesh, c: u32, v: u32) -> Option<[u32; 3]> {
    let cv = m.cell_vertices(c as usize);
    let k = cv.iter().position(|&x| x == v)?;
    let mut out = [NONE; 3];
    let mut n = 0;
    for &(a, b) in &HEX_EDGES {
        let o = if a == k {
            b
        } else if b == k {
            a
        } else {
            continue;
        };
        out[n] = cv[o];
        n += 1;
    }
    Some(out)
}

/// The neighbour of `v` in `c` other than `not`.
pub(crate) fn other_neighbour(m: &VolMesh, c: u32, v: u32, not: [u32; 2]) -> Option<u32> {
    let mut it = neighbours(m, c, v)?.into_iter().filter(|x| !not.contains(x));
    let x = it.next()?;
    it.next().is_none().then_some(x)
}

/// The cell beyond the face of `c` with vertex set `verts`: `Some(NONE)` on
/// the boundary, `None` where `c` has no such face.
pub(crate) fn across(m: &VolMesh, c: u32, verts: [u32; 4]) -> Option<u32> {
    let mut sorted = verts;
    sorted.sort_unstable();
    m.cell_faces(c as usize).iter().find_map(|&code| {
        let f = (code >> 1) as usize;
        let fv = m.face(f);
        let mut s: Vec<u32> = fv.to_vec();
        s.sort_unstable();
        (s == sorted).then(|| {
            let [a, b] = m.face_cells(f);
            if a == c { b } else { a }
        })
    })
}

/// A hexahedron, or `None`.
pub(crate) fn hexahedron(m: &VolMesh, c: u32) -> Option<u32> {
    (c != NONE && m.kind(c as usize) == CellKind::Hexahedron).then_some(c)
}

/// The column beyond the side face over `x`'s bottom edge `(p, q)`, its
/// bottom `[p, q, q', p']`.
fn cross(m: &VolMesh, x: &Column, p: u32, q: u32) -> Option<Column> {
    let up = |v: u32| x.bottom.iter().position(|&b| b == v).map(|i| x.top[i]);
    let (pu, qu) = (up(p)?, up(q)?);
    let y = hexahedron(m, across(m, x.cell, [p, q, qu, pu])?)?;
    let p2 = other_neighbour(m, y, p, [q, pu])?;
    let q2 = other_neighbour(m, y, q, [p, qu])?;
    let p2u = other_neighbour(m, y, p2, [p, q2])?;
    let q2u = other_neighbour(m, y, q2, [q, p2])?;
    Some(Column { cell: y, bottom: [p, q, q2, p2], top: [pu, qu, q2u, p2u] })
}

/// The vertices one layer beyond a column's bottom (`up = false`) or top:
/// `Some(None)` where that face is on the boundary.
fn beyond(m: &VolMesh, x: &Column, up: bool) -> Option<Option<[u32; 4]>> {
    let (face, other) = if up { (x.top, x.bottom) } else { (x.bottom, x.top) };
    let c = across(m, x.cell, face)?;
    if c == NONE {
        return Some(None);
    }
    let c = hexahedron(m, c)?;
    let mut out = [NONE; 4];
    for i in 0..4 {
        out[i] = other_neighbour(m, c, face[i], [face[(i + 1) % 4], face[(i + 3) % 4]])?;
        if other.contains(&out[i]) {
            return None;
        }
    }
    Some(Some(out))
}

/// The frame of hexahedron `c` along its edge between local corners
/// `ends`: for `s`, `t`, `r` the cell parameter each is and whether it
/// runs backwards (`r` from `ends.0` to `ends.1`, the edge at `s = t =
/// 0`), and the cell as a column, its bottom `(0,0) (1,0) (1,1) (0,1)` at
/// `r = 0` and its top above it.
fn edge_frame(m: &VolMesh, c: usize, ends: (usize, usize)) -> Option<([(u8, bool); 3], Column)> {
    let cv = m.cell_vertices(c);
    let (ca, cb) = (HEX_CORNERS[ends.0], HEX_CORNERS[ends.1]);
    let r_axis = (0..3).find(|&i| ca[i] != cb[i])?;
    let others: Vec<usize> = (0..3).filter(|&i| i != r_axis).collect();
    let axes = [others[0], others[1], r_axis].map(|i| (i as u8, ca[i] == 1));
    let corner = |s: u8, t: u8, r: u8| -> u32 {
        let mut p = [0u8; 3];
        for (&(ax, back), l) in axes.iter().zip([s, t, r]) {
            p[ax as usize] = if back { 1 - l } else { l };
        }
        cv[HEX_CORNERS.iter().position(|&q| q == p).expect("a corner")]
    };
    let start = Column {
        cell: c as u32,
        bottom: [corner(0, 0, 0), corner(1, 0, 0), corner(1, 1, 0), corner(0, 1, 0)],
        top: [corner(0, 0, 1), corner(1, 0, 1), corner(1, 1, 1), corner(0, 1, 1)],
    };
    Some((axes, start))
}

/// Four layers of `len` points from `slots` (each a column and the places
/// of its bottom's corners in a layer): layers 1 and 2 from the columns'
/// bottoms and tops, 0 and 3 from the cells below and above them; whether
/// a column's face below (above) is on the boundary, its layer 0 (3)
/// missing. `None` where a place meets two vertices or a cell is not a
/// hexahedron.
fn gather_layers(m: &VolMesh, slots: &[(Column, [usize; 4])], len: usize) -> Option<(Vec<u32>, [bool; 2])> {
    let mut points = vec![NONE; 4 * len];
    let mut missing = [false; 2];
    let put = |points: &mut [u32], layer: usize, i: usize, v: u32| -> bool {
        let slot = &mut points[layer * len + i];
        if *slot == NONE {
            *slot = v;
            true
        } else {
            *slot == v
        }
    };
    for (x, idx) in slots {
        for ((&i, &b), &t) in idx.iter().zip(&x.bottom).zip(&x.top) {
            if !put(&mut points, 1, i, b) || !put(&mut points, 2, i, t) {
                return None;
            }
        }
        for (side, (up, layer)) in [(false, 0), (true, 3)].into_iter().enumerate() {
            match beyond(m, x, up)? {
                Some(vs) => {
                    for j in 0..4 {
                        if !put(&mut points, layer, idx[j], vs[j]) {
                            return None;
                        }
                    }
                }
                None => missing[side] = true,
            }
        }
    }
    Some((points, missing))
}

/// The control points of cell `c` where it is layered: a hexahedron with
/// exactly one extraordinary edge (inside, valence `n ≠ 4`, `3 ≤ n ≤`
/// [`MAX_VALENCE`](crate::stam::MAX_VALENCE)) whose neighbourhood is four
/// layers (three and a phantom where the face across the edge is on the
/// boundary) of a full Catmull-Clark ring, with the edge's vertices in the
/// cell layered ([`VertexRule::Layered`](crate::VertexRule)'s test) or on
/// the boundary, the ring's other vertices in the cell's two planes
/// regular (six edges inside, five on the boundary), and all `4(2n + 8)`
/// points distinct. `None` otherwise.
pub fn layered_grid(m: &VolMesh, c: usize) -> Option<LayeredGrid> {
    if c >= m.num_cells() || m.kind(c) != CellKind::Hexahedron {
        return None;
    }
    let cv = m.cell_vertices(c);
    // The cell's one extraordinary edge.
    let mut ext = HEX_EDGES.iter().filter(|&&(a, b)| {
        let e = m.vertex_edges(cv[a] as usize).iter().copied().find(|&e| m.edge(e as usize).contains(&cv[b]));
        e.is_some_and(|e| m.is_extraordinary_edge(e as usize))
    });
    let &(a, b) = ext.next()?;
    if ext.next().is_some() {
        return None;
    }
    let edge = m.vertex_edges(cv[a] as usize).iter().copied().find(|&e| m.edge(e as usize).contains(&cv[b]))?;
    if m.is_boundary_edge(edge as usize) {
        return corner_grid(m, c, (a, b), edge as usize);
    }
    let (axes, start) = edge_frame(m, c, (a, b))?;
    let ev = start.bottom[0];
    // The ring: sector k's bottom is (EV, E_k, D_k, E_{k+1}).
    let mut ring = vec![start];
    loop {
        let x = *ring.last().expect("a sector");
        let next = cross(m, &x, ev, x.bottom[3])?;
        if next.cell == start.cell {
            if next.bottom != start.bottom {
                return None;
            }
            break;
        }
        if ring.len() > crate::stam::MAX_VALENCE {
            return None;
        }
        ring.push(next);
    }
    let n = ring.len();
    let patch = StamPatch::get(n).ok()?;
    let k = patch.len();
    // The five faces beyond the patch, as grid squares of sector 0.
    let fa = cross(m, &start, start.bottom[1], start.bottom[2])?; // [1,2]×[0,1]: E0, D0, (2,1), (2,0)
    let fb = cross(m, &start, start.bottom[3], start.bottom[2])?; // [0,1]×[1,2]: E1, D0, (1,2), (0,2)
    let fc = cross(m, &fa, fa.bottom[1], fa.bottom[2])?; // [1,2]×[1,2]: D0, (2,1), (2,2), (1,2)
    let fd = cross(m, &fa, fa.bottom[0], fa.bottom[3])?; // [1,2]×[−1,0]: E0, (2,0), (2,−1), (1,−1)
    let fe = cross(m, &fb, fb.bottom[0], fb.bottom[3])?; // [−1,2]: E1, (0,2), (−1,2), (−1,1)
    // Each column's bottom and top corners in the layer's order.
    let mut slots: Vec<(Column, [usize; 4])> =
        ring.iter().enumerate().map(|(s, x)| (*x, [0, 1 + 2 * s, 2 + 2 * s, 1 + 2 * ((s + 1) % n)])).collect();
    let o = 2 * n + 1;
    slots.push((fa, [1, 2, o + 2, o + 1]));
    slots.push((fb, [3, 2, o + 4, o + 5]));
    slots.push((fc, [2, o + 2, o + 3, o + 4]));
    slots.push((fd, [1, o + 1, o, 2 * n]));
    slots.push((fe, [3, o + 5, o + 6, 4]));
    let (mut points, [below_missing, above_missing]) = gather_layers(m, &slots, k)?;
    let phantom = match (below_missing, above_missing) {
        (false, false) => None,
        (true, false) => Some(false),
        (false, true) => Some(true),
        (true, true) => return None,
    };
    // A phantom layer is wholly missing, every other layer wholly present.
    for layer in 0..4 {
        let ghost = phantom == Some(false) && layer == 0 || phantom == Some(true) && layer == 3;
        let row = &mut points[layer * k..(layer + 1) * k];
        if ghost {
            row.fill(NONE);
        } else if row.contains(&NONE) {
            return None;
        }
    }
    let mut seen: Vec<u32> = points.iter().copied().filter(|&v| v != NONE).collect();
    let len = seen.len();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != len {
        return None;
    }
    // The vertices whose points the cell's refinement reads: the edge's
    // two in the cell layered (or on the boundary), the ring's regular.
    let boundary_layer = phantom.map(|high| if high { 2 } else { 1 });
    for layer in 1..=2 {
        let on_boundary = boundary_layer == Some(layer);
        for i in 0..=2 * n {
            let v = points[layer * k + i] as usize;
            if m.is_boundary_vertex(v) != on_boundary {
                return None;
            }
            let ok = match (i, on_boundary) {
                (0, false) => layered_edges(m, v).is_some(),
                (0, true) => m.vertex_edges(v).len() == n + 1,
                (_, false) => m.vertex_edges(v).len() == 6,
                (_, true) => m.vertex_edges(v).len() == 5,
            };
            if !ok {
                return None;
            }
        }
    }
    // Tags matter where their rules make points the cell's limit depends
    // on: the vertex points of its own eight vertices and the edge points
    // of the edges at them. Every other point of a descendant's grid (and
    // of Stam's subdivided rings: edge and face points around the
    // extraordinary vertex) comes from rules that ignore tags.
    if crate::limit::near_feature(m, m.cell_vertices(c)) {
        return None;
    }
    Some(LayeredGrid { valence: n, sector: None, points, phantom, axes })
}

/// The control points of cell `c` at the untagged boundary edge `edge`
/// (local corners `ends`) of `n` cells (`1 ..=`
/// [`MAX_FACES`](crate::corner::MAX_FACES); 2 is a flat boundary, where
/// the cell is regular): the cross-section is a fan of `n` quarter grids
/// round a boundary vertex ([`CornerPatch`]), the cell on sector `j`
/// (counted from one boundary face), `(s, t)` across the edge (the edge at
/// `s = t = 0`) and `r` along it. Four layers of [`CornerPatch`]'s points:
/// the columns of the `n` cells round the edge, those beyond the cell's two
/// inner side faces (the quads `[1, 2] × [−1, 2]` and `[−1, 2] × [1, 2]`
/// of its sector, where they are not beyond the boundary), and the cells
/// below and above them for layers 0 and 3. `None` unless: every point is
/// there and distinct (no phantom layer: a face across the edge on the
/// boundary puts the cell at a corner of the boundary surface, where it
/// does not refine as a product); exactly the points on the two boundary
/// rays are on the boundary (in layers 0 and 3 the others may be too, in a
/// boundary face across the edge beyond the cell's neighbour: their rules
/// are not read); every edge at the cell's own vertices has the valence of
/// such an edge (`n + 1` faces along the edge, 3 elsewhere on the
/// boundary, 4 inside); and no tag touches the cell's own vertices (the
/// only ones whose rules the limit reads, as for layered cells).
fn corner_grid(m: &VolMesh, c: usize, ends: (usize, usize), edge: usize) -> Option<LayeredGrid> {
    let n = m.edge_valence(edge).checked_sub(1)?;
    if !(1..=crate::corner::MAX_FACES).contains(&n) || n == 2 {
        return None;
    }
    let cv = m.cell_vertices(c);
    let (axes, start) = edge_frame(m, c, ends)?;
    let ev = start.bottom[0];
    // The fan, each sector's bottom (EV, E_k, D_k, E_{k+1}): back across
    // (EV, E_k) to the first boundary face, then forward across (EV,
    // E_{k+1}) to the other.
    let to_boundary = |x: &Column, q: u32| -> Option<bool> {
        let up = x.top[x.bottom.iter().position(|&b| b == q)?];
        Some(across(m, x.cell, [ev, q, up, x.top[0]])? == NONE)
    };
    let mut before = Vec::new();
    let mut x = start;
    while !to_boundary(&x, x.bottom[1])? {
        let y = cross(m, &x, ev, x.bottom[1])?;
        // Its bottom [EV, E_k, D_{k−1}, E_{k−1}] in sector order.
        x = Column {
            cell: y.cell,
            bottom: [y.bottom[0], y.bottom[3], y.bottom[2], y.bottom[1]],
            top: [y.top[0], y.top[3], y.top[2], y.top[1]],
        };
        before.push(x);
        if before.len() > n {
            return None;
        }
    }
    before.reverse();
    let j = before.len();
    let mut ring = before;
    ring.push(start);
    let mut x = start;
    while !to_boundary(&x, x.bottom[3])? {
        x = cross(m, &x, ev, x.bottom[3])?;
        ring.push(x);
        if ring.len() > n {
            return None;
        }
    }
    if ring.len() != n {
        return None;
    }
    let patch = CornerPatch::get(n, j).ok()?;
    let len = patch.len();
    // Outer points relative to sector j, where they exist: (2,−1) (2,0)
    // (2,1) (2,2) (1,2) (0,2) (−1,2).
    let (low, high) = (j > 0, j + 1 < n);
    let o = 2 * n + 2;
    let outer = |i: usize| o + i - usize::from(!low);
    let (e_j, d_j, e_k) = (1 + 2 * j, 2 + 2 * j, 3 + 2 * j);
    let fa = cross(m, &start, start.bottom[1], start.bottom[2])?; // [1,2]×[0,1]: E_j D_j (2,1) (2,0)
    let fb = cross(m, &start, start.bottom[3], start.bottom[2])?; // [0,1]×[1,2]: E_{j+1} D_j (1,2) (0,2)
    let fc = cross(m, &fa, fa.bottom[1], fa.bottom[2])?; // [1,2]×[1,2]: D_j (2,1) (2,2) (1,2)
    let mut slots: Vec<(Column, [usize; 4])> =
        ring.iter().enumerate().map(|(k, x)| (*x, [0, 1 + 2 * k, 2 + 2 * k, 3 + 2 * k])).collect();
    slots.push((fa, [e_j, d_j, outer(2), outer(1)]));
    slots.push((fb, [e_k, d_j, outer(4), outer(5)]));
    slots.push((fc, [d_j, outer(2), outer(3), outer(4)]));
    if low {
        // [1,2]×[−1,0]: E_j (2,0) (2,−1) (1,−1) = D_{j−1}.
        let fd = cross(m, &fa, fa.bottom[0], fa.bottom[3])?;
        slots.push((fd, [e_j, outer(1), outer(0), d_j - 2]));
    }
    if high {
        // [−1,0]×[1,2]: E_{j+1} (0,2) (−1,2) (−1,1) = D_{j+1}.
        let fe = cross(m, &fb, fb.bottom[0], fb.bottom[3])?;
        slots.push((fe, [e_k, outer(5), outer(6), d_j + 2]));
    }
    // No phantom layer.
    let (points, missing) = gather_layers(m, &slots, len)?;
    if missing.contains(&true) {
        return None;
    }
    if points.contains(&NONE) {
        return None;
    }
    let mut seen = points.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != points.len() {
        return None;
    }
    // Layers 0 and 3 may lie in a boundary face across the edge (next to
    // a corner of the box): their own rules are never read, only those of
    // the edges, faces and cells between them and the cell's layers.
    let on_boundary = crate::corner::boundary_points(n, j);
    for (i, &v) in points.iter().enumerate() {
        let layer = i / len;
        let boundary = m.is_boundary_vertex(v as usize);
        if boundary != on_boundary[i % len] && !(boundary && (layer == 0 || layer == 3)) {
            return None;
        }
    }
    let on_edge = |v: u32| (0..4).any(|l| points[l * len] == v);
    for l in 1..=2 {
        for i in [0, e_j, d_j, e_k] {
            let v = points[l * len + i] as usize;
            for &e in m.vertex_edges(v) {
                let e = e as usize;
                let [p, q] = m.edge(e);
                let want = if on_edge(p) && on_edge(q) {
                    n + 1
                } else if m.is_boundary_edge(e) {
                    3
                } else {
                    4
                };
                if m.edge_valence(e) != want {
                    return None;
                }
            }
        }
    }
    if crate::limit::near_feature(m, cv) {
        return None;
    }
    Some(LayeredGrid { valence: n, sector: Some(j), points, phantom: None, axes })
}

/// For a derivative `q` along a cell parameter, the local axis of `axes`
/// (for each local axis: the cell parameter and whether it runs backwards)
/// it is and its sign (−1 where that axis runs backwards); `None` for the
/// position.
pub(crate) fn local_axis(axes: &[(u8, bool); 3], q: Quantity) -> Option<(usize, f64)> {
    let axis = match q {
        Quantity::DerivU => 0,
        Quantity::DerivV => 1,
        Quantity::DerivW => 2,
        _ => return None,
    };
    let local = axes.iter().position(|&(a, _)| a == axis).expect("a permutation");
    Some((local, if axes[local].1 { -1.0 } else { 1.0 }))
}

/// The weights of a layered cell's control points at the cell's `(u, v,
/// w)` for `q`, as `(vertex, weight)` pairs (the phantom layer folded into
/// the two next to it), appended to `out`.
pub fn layered_weights(g: &LayeredGrid, uvw: [f64; 3], q: Quantity, out: &mut Vec<(u32, f64)>) {
    let patch = Surface::of(g.valence, g.sector).expect("a gathered grid's valence is supported");
    let k = g.layer_len();
    let [s, t, r] = g.local(uvw);
    let mut w = vec![0.0; 3 * k];
    {
        let (w0, rest) = w.split_at_mut(k);
        let (w1, w2) = rest.split_at_mut(k);
        patch.weights(s, t, [w0, w1, w2]);
    }
    let (b, db) = crate::limit::cubic_basis(r);
    // The cell axis of the derivative, as a local one with its sign.
    let (surface, layers, sign): (usize, [f64; 4], f64) = match local_axis(&g.axes, q) {
        None => (0, b, 1.0),
        Some((0, sign)) => (1, b, sign),
        Some((1, sign)) => (2, b, sign),
        Some((_, sign)) => (0, db, sign),
    };
    let mut lw = layers.map(|x| x * sign);
    match g.phantom {
        Some(false) => {
            lw[1] += 2.0 * lw[0];
            lw[2] -= lw[0];
            lw[0] = 0.0;
        }
        Some(true) => {
            lw[2] += 2.0 * lw[3];
            lw[1] -= lw[3];
            lw[3] = 0.0;
        }
        None => {}
    }
    let phi = &w[surface * k..(surface + 1) * k];
    for (l, &wl) in lw.iter().enumerate() {
        if g.phantom == Some(false) && l == 0 || g.phantom == Some(true) && l == 3 {
            continue;
        }
        out.extend(g.points[l * k..(l + 1) * k].iter().zip(phi).map(|(&v, &p)| (v, wl * p)));
    }
}

/// Stam's weights of valence `valence` at the `k × k` local surface
/// parameters `(s_i, t_j) = (i/(k−1), j/(k−1))` (the centre where `k = 1`):
/// position, `∂/∂s` and `∂/∂t`, each `k² × L`, entry `(j k + i) L +
/// point`, with `L = 2n + 8` ([`CornerPatch`]'s weights and `L = 9` for
/// valence 1). `None` for a valence [`StamPatch`] does not cover.
pub fn surface_weights(valence: usize, sector: Option<usize>, k: usize) -> Option<[Vec<f64>; 3]> {
    let patch = Surface::of(valence, sector)?;
    let len = patch.len();
    let t = |i: usize| crate::limit::sample_param(i, k);
    let mut w: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; k * k * len]);
    for j in 0..k {
        for i in 0..k {
            let at = (j * k + i) * len;
            let [w0, w1, w2] = &mut w;
            patch.weights(t(i), t(j), [&mut w0[at..at + len], &mut w1[at..at + len], &mut w2[at..at + len]]);
        }
    }
    Some(w)
}

/// Stam's weights of one valence at the `k × k` local parameters `(s_i,
/// t_j)` (`i` inner): position, `∂/∂s`, `∂/∂t`, each `k² × (2n + 8)`.
#[derive(Clone, Debug)]
struct SurfaceTable {
    /// The valence and the boundary sector (`None` inside).
    key: (usize, Option<usize>),
    /// The weights (`k² × (2n + 8)`) laid out for
    /// [`weighted_sums`](crate::limit::weighted_sums).
    wt: [Vec<f64>; 3],
}

/// Limit evaluation of layered cells on a `k × k × k` grid of samples per
/// cell, without a matrix (the layered counterpart of
/// [`RegularEval`](crate::limit::RegularEval)): the control points are
/// gathered once per topology, Stam's weights at the `k²` local surface
/// parameters once per valence; each evaluation contracts a cell's four
/// layers with the surface weights (`4 k² (2n + 8)` multiply-adds per
/// channel), then the layers with the cubic basis (`4 k³`).
///
/// Samples are ordered cell by cell, each cell's `w` outer, then `v`, then
/// `u`, as [`SolidLimit::grid`](crate::limit::SolidLimit::grid) orders
/// them; a reflected axis reads the local parameter `i/(k−1)` for the cell's
/// `1 − i/(k−1)`, so the results equal [`limit_matrix`](crate::limit::limit_matrix)'s
/// to rounding (tested to 1e-13).
#[derive(Clone, Debug)]
pub struct LayeredEval {
    cells: Vec<u32>,
    grids: Vec<LayeredGrid>,
    k: usize,
    tables: Vec<SurfaceTable>,
    basis: Vec<[f64; 4]>,
    deriv: Vec<[f64; 4]>,
    num_vertices: usize,
}

impl LayeredEval {
    /// The evaluator of `cells` of `m` (all layered) at `k` samples per
    /// direction (`k ≥ 1`; the centre where `k = 1`).
    ///
    /// # Errors
    /// [`LimitError::NotEvaluable`](crate::limit::LimitError) (as
    /// [`SchemeError::Scheme`](subla_scheme::SchemeError)'s source) naming
    /// the first cell without a [`layered_grid`].
    pub fn new(m: &VolMesh, cells: &[u32], k: usize, par: subla_algebra::Par) -> subla_scheme::Result<LayeredEval> {
        use rayon::prelude::*;
        let k = k.max(1);
        let gather = |&c: &u32| layered_grid(m, c as usize).ok_or(c);
        let grids: Result<Vec<LayeredGrid>, u32> = if par == subla_algebra::Par::Rayon && cells.len() >= 64 {
            cells.par_iter().with_min_len(16).map(gather).collect()
        } else {
            cells.iter().map(gather).collect()
        };
        let grids = grids.map_err(crate::limit::not_evaluable)?;
        Ok(LayeredEval::from_grids(cells.to_vec(), grids, k, m.num_vertices()))
    }

    /// The evaluator of cells already gathered (`grids[i]` the grid of
    /// `cells[i]`), `k ≥ 1`.
    pub(crate) fn from_grids(cells: Vec<u32>, grids: Vec<LayeredGrid>, k: usize, num_vertices: usize) -> LayeredEval {
        let t = |i: usize| crate::limit::sample_param(i, k);
        let mut keys: Vec<(usize, Option<usize>)> = grids.iter().map(|g| (g.valence, g.sector)).collect();
        keys.sort_unstable();
        keys.dedup();
        let tables = keys
            .into_iter()
            .map(|key| {
                let w = surface_weights(key.0, key.1, k).expect("a gathered grid's valence is supported");
                let wt = w.map(|w| crate::limit::blocked_weights(&w, k * k));
                SurfaceTable { key, wt }
            })
            .collect();
        let (basis, deriv) = (0..k).map(|i| crate::limit::cubic_basis(t(i))).unzip();
        LayeredEval { cells, grids, k, tables, basis, deriv, num_vertices }
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
    /// # Panics
    /// If the shapes disagree.
    pub fn eval_into<T: crate::limit::Sample>(
        &self,
        x: ndarray::ArrayView2<'_, T>,
        q: Quantity,
        mut out: ndarray::ArrayViewMut2<'_, T>,
        par: subla_algebra::Par,
    ) {
        use rayon::prelude::*;
        assert_eq!(x.dim(), (self.num_vertices, 3), "LayeredEval: control points V × 3");
        assert_eq!(out.dim(), (self.num_samples(), 3), "LayeredEval: output samples × 3");
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let k = self.k;
        let per = k * k * k * 3;
        let out = out.as_slice_mut().expect("a standard-layout output");
        type Scratch = (Vec<[f64; 3]>, Vec<[f64; 3]>);
        let cell = |(pts, layer): &mut Scratch, (g, o): (&LayeredGrid, &mut [T])| {
            let table = self.tables.iter().find(|t| t.key == (g.valence, g.sector)).expect("a table per valence");
            let len = g.layer_len();
            // The control points, the phantom layer extrapolated.
            pts.clear();
            pts.extend(g.points.iter().map(|&v| {
                if v == NONE {
                    [0.0; 3]
                } else {
                    let v = v as usize * 3;
                    [xs[v].to_f64(), xs[v + 1].to_f64(), xs[v + 2].to_f64()]
                }
            }));
            if let Some(high) = g.phantom {
                let (ghost, near, far) = if high { (3, 2, 1) } else { (0, 1, 2) };
                for i in 0..len {
                    let (pn, pf) = (pts[near * len + i], pts[far * len + i]);
                    pts[ghost * len + i] = std::array::from_fn(|c| 2.0 * pn[c] - pf[c]);
                }
            }
            // Which table and which basis along r, and the sign.
            let (surface, along, sign) = match local_axis(&g.axes, q) {
                None => (0, &self.basis, 1.0),
                Some((0, sign)) => (1, &self.basis, sign),
                Some((1, sign)) => (2, &self.basis, sign),
                Some((_, sign)) => (0, &self.deriv, sign),
            };
            let wt = &table.wt[surface];
            // Layers × surface samples: each layer's points against the
            // weights of all `k²` parameters at once.
            let kk = k * k;
            layer.resize(4 * kk, [0.0; 3]);
            for (l, out) in layer.chunks_exact_mut(kk).enumerate() {
                crate::limit::weighted_sums(wt, &pts[l * len..(l + 1) * len], out);
            }
            // The samples: local (i, j, r) to the cell's (u, v, w) indices.
            let stride = [1usize, k, k * k];
            let place = |local: usize, i: usize| {
                let (axis, back) = g.axes[local];
                stride[axis as usize] * if back { k - 1 - i } else { i }
            };
            for (ir, b) in along.iter().enumerate() {
                let pr = place(2, ir);
                for j in 0..k {
                    let pj = place(1, j);
                    for i in 0..k {
                        let st = j * k + i;
                        let mut acc = [0.0f64; 3];
                        for (l, &bl) in b.iter().enumerate() {
                            let v = layer[l * k * k + st];
                            for c in 0..3 {
                                acc[c] += bl * v[c];
                            }
                        }
                        let row = (pr + pj + place(0, i)) * 3;
                        for c in 0..3 {
                            o[row + c] = T::from_f64(sign * acc[c]);
                        }
                    }
                }
            }
        };
        let scratch = || (Vec::new(), Vec::new());
        if par == subla_algebra::Par::Rayon && self.grids.len() >= 16 {
            self.grids.par_iter().zip(out.par_chunks_mut(per)).for_each_init(scratch, cell);
        } else {
            let mut s = scratch();
            self.grids.iter().zip(out.chunks_mut(per)).for_each(|item| cell(&mut s, item));
        }
    }
}
