//! The connectivity of a volumetric mesh: cells, their faces (shared
//! between the two cells on either side), edges and vertices, and the
//! incidence between them as sparse matrices.
//!
//! # Storage
//! Faces are numbered in the order cells first use them; each keeps its
//! vertices as its first cell has them (outward from that cell). A cell
//! lists its faces as `2f` where the stored order points out of it and
//! `2f + 1` where it points in (the second cell of a shared face). Edges
//! are numbered in the order faces first use them, each `[lo, hi]`.
//!
//! ```text
//! two hexahedra sharing face 5:     cell_faces(0) = [0, 2, 4, 6, 8, 10]  (faces 0..=5, outward)
//!   +----+----+                      cell_faces(1) = [11, 12, 14, ...]   (face 5 inward: 2·5 + 1)
//!   | c0 | c1 |                      face_cells(5) = [0, 1]
//!   +----+----+                      face_cells(0) = [0, NONE]           (boundary face)
//! ```
//!
//! # Invariants
//! Every cell is a closed polyhedron (each edge of its faces used once
//! each way, Euler characteristic 2) with three faces at every vertex, so
//! that Catmull-Clark solids refine it into hexahedra; a face is used by
//! one cell (a boundary face) or by two, in opposite directions; the
//! boundary surface is a closed 2-manifold (each boundary edge in two
//! boundary faces, each boundary vertex one fan). [`VolMesh::from_cells`]
//! checks all of it and names the first element that breaks it.

mod split;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ndarray::Array2;
use rayon::prelude::*;
use subla_algebra::CsrMat;

use crate::cell::{Cell, CellKind};
use crate::error::{Result, VolumeError};

/// No cell / face.
pub const NONE: u32 = u32::MAX;

/// The connectivity of a volumetric mesh: faces shared by two cells,
/// edges, and their incidence (see `docs/solids.md` for the layout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolMesh {
    num_vertices: usize,
    kinds: Vec<CellKind>,
    cell_vert_ptr: Vec<u32>,
    cell_verts: Vec<u32>,
    cell_face_ptr: Vec<u32>,
    cell_faces: Vec<u32>,
    face_ptr: Vec<u32>,
    face_verts: Vec<u32>,
    face_cells: Vec<[u32; 2]>,
    face_edges: Vec<u32>,
    edges: Vec<[u32; 2]>,
    edge_face_ptr: Vec<u32>,
    edge_faces: Vec<u32>,
    vertex_edge_ptr: Vec<u32>,
    vertex_edges: Vec<u32>,
    /// Per edge, whether it is an infinitely sharp crease; empty where no
    /// edge is (never all `false`).
    sharp: Vec<bool>,
    /// Per vertex, whether it is a corner; empty where no vertex is (never
    /// all `false`).
    corners: Vec<bool>,
}

/// `n` as a 32-bit id count.
fn to_u32(what: &'static str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| VolumeError::TooLarge { what, value: n as u128 })
}

/// A multiply-and-rotate hash of integer keys (the keys are vertex ids the
/// caller gave; no adversary to guard against, and ids are assigned in
/// first-use order, so the map's order never shows).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A face's vertices rotated to start at the smallest, in the direction
/// of its smaller neighbour: the same key for both uses of a face.
fn face_key(f: &[u32]) -> impl Iterator<Item = u32> + '_ {
    let n = f.len();
    let m = (0..n).min_by_key(|&k| f[k]).unwrap_or(0);
    let forward = f[(m + 1) % n] <= f[(m + n - 1) % n];
    (0..n).map(move |k| if forward { f[(m + k) % n] } else { f[(m + n - k) % n] })
}

/// Faces by their key: up to four vertices in an array (padded with
/// [`NONE`]), larger ones by the whole loop.
#[derive(Default)]
struct FaceMap {
    small: IdMap<[u32; 4], u32>,
    large: IdMap<Vec<u32>, u32>,
}

impl FaceMap {
    /// The face with the key of `f`, or `id` inserted as it.
    fn get_or_insert(&mut self, f: &[u32], id: u32) -> Option<u32> {
        if f.len() <= 4 {
            let mut key = [NONE; 4];
            for (slot, v) in key.iter_mut().zip(face_key(f)) {
                *slot = v;
            }
            match self.small.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(id);
                    None
                }
            }
        } else {
            match self.large.entry(face_key(f).collect()) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(id);
                    None
                }
            }
        }
    }
}

/// Whether `b` is `a` the other way round (up to rotation), the same way
/// round, or neither.
fn relation(a: &[u32], b: &[u32]) -> Option<bool> {
    let n = a.len();
    let j = b.iter().position(|&v| v == a[0])?;
    if (0..n).all(|k| b[(j + n - k) % n] == a[k]) {
        Some(true)
    } else if (0..n).all(|k| b[(j + k) % n] == a[k]) {
        Some(false)
    } else {
        None
    }
}

/// Checks one cell's faces: at least three distinct vertices each, every
/// edge used once each way, Euler characteristic 2, three faces at every
/// vertex.
/// Buffers [`check_cell`] reuses from cell to cell.
#[derive(Default)]
struct CellScratch {
    directed: Vec<(u32, u32)>,
    verts: Vec<(u32, usize)>,
}

fn check_cell(c: usize, kind: CellKind, faces: &[Vec<u32>], scratch: &mut CellScratch) -> Result<()> {
    let CellScratch { directed, verts } = scratch;
    directed.clear();
    verts.clear();
    for (k, f) in faces.iter().enumerate() {
        if f.len() < 3 {
            return Err(VolumeError::DegenerateCell { cell: c, detail: format!("face {k} has {} vertices", f.len()) });
        }
        for (i, &v) in f.iter().enumerate() {
            if f[..i].contains(&v) {
                return Err(VolumeError::DegenerateCell { cell: c, detail: format!("face {k} repeats vertex {v}") });
            }
            directed.push((v, f[(i + 1) % f.len()]));
        }
    }
    directed.sort_unstable();
    if let Some(w) = directed.windows(2).find(|w| w[0] == w[1]) {
        let (a, b) = w[0];
        return Err(VolumeError::NotAPolyhedron {
            cell: c,
            detail: format!("edge {a}-{b} is used twice the same way round (are faces inverted?)"),
        });
    }
    if let Some(&(a, b)) = directed.iter().find(|&&(a, b)| directed.binary_search(&(b, a)).is_err()) {
        return Err(VolumeError::NotAPolyhedron { cell: c, detail: format!("edge {a}-{b} belongs to one face only") });
    }
    // Faces around each vertex: its outgoing directed edges.
    for w in directed.chunk_by(|p, q| p.0 == q.0) {
        verts.push((w[0].0, w.len()));
    }
    let (nv, ne, nf) = (verts.len() as i64, directed.len() as i64 / 2, faces.len() as i64);
    if nv - ne + nf != 2 {
        return Err(VolumeError::NotAPolyhedron {
            cell: c,
            detail: format!("{nv} vertices, {ne} edges and {nf} faces do not bound a ball (V − E + F ≠ 2)"),
        });
    }
    if let Some(&(v, n)) = verts.iter().find(|&&(_, n)| n != 3) {
        if n < 3 {
            return Err(VolumeError::DegenerateCell {
                cell: c,
                detail: format!("vertex {v} has {n} faces in the cell (a vertex inside an edge)"),
            });
        }
        return Err(VolumeError::UnsupportedCell { cell: c, kind: kind.name(), vertex: v, faces: n });
    }
    Ok(())
}

impl VolMesh {
    /// The mesh of `cells` over `num_vertices` vertices, checked (see the
    /// invariants in `docs/solids.md`: closed cells, faces of one or two
    /// cells, a manifold boundary).
    ///
    /// # Errors
    /// The first cell, face, edge or vertex that breaks an invariant:
    /// [`VolumeError::VertexOutOfRange`], [`VolumeError::DegenerateCell`],
    /// [`VolumeError::NotAPolyhedron`], [`VolumeError::UnsupportedCell`],
    /// [`VolumeError::NonManifoldFace`], [`VolumeError::MisorientedFace`],
    /// [`VolumeError::NonManifoldEdge`], [`VolumeError::NonManifoldVertex`];
    /// [`VolumeError::TooLarge`] past 32-bit ids. Faces that meet only in
    /// part (hanging vertices) need the positions: where such an interface
    /// shares vertices it shows here as a non-manifold vertex or edge;
    /// [`VolumeData::from_cells`](crate::VolumeData::from_cells) tests
    /// the geometry first and names it [`VolumeError::NonConforming`].
    pub fn from_cells(num_vertices: usize, cells: &[Cell]) -> Result<VolMesh> {
        let mesh = Self::build(num_vertices, cells)?;
        mesh.check_boundary()?;
        Ok(mesh)
    }

    /// [`VolMesh::from_cells`] without the check of the boundary surface.
    pub(crate) fn build(num_vertices: usize, cells: &[Cell]) -> Result<VolMesh> {
        to_u32("vertices", num_vertices)?;
        to_u32("cells", cells.len())?;
        let mut kinds = Vec::with_capacity(cells.len());
        let mut cell_vert_ptr = vec![0u32];
        let mut cell_verts = Vec::new();
        let mut cell_face_ptr = vec![0u32];
        let mut cell_faces = Vec::new();
        let mut face_ptr = vec![0u32];
        let mut face_verts: Vec<u32> = Vec::new();
        let mut face_cells: Vec<[u32; 2]> = Vec::new();
        let mut face_of = FaceMap::default();
        let mut faces: Vec<Vec<u32>> = Vec::new();
        let mut scratch = CellScratch::default();
        for (c, cell) in cells.iter().enumerate() {
            let verts = cell.vertices();
            if let Some(&v) = verts.iter().find(|&&v| v as usize >= num_vertices) {
                return Err(VolumeError::VertexOutOfRange { cell: c, vertex: v, num_vertices });
            }
            if let Some((i, &v)) = verts.iter().enumerate().find(|&(i, v)| verts[..i].contains(v)) {
                return Err(VolumeError::DegenerateCell {
                    cell: c,
                    detail: format!(
                        "vertex {v} appears twice (positions {} and {i})",
                        verts[..i].iter().position(|&u| u == v).unwrap_or(0)
                    ),
                });
            }
            // Reuse the face buffers from cell to cell.
            let mut used = 0;
            cell.for_each_face(|f| {
                if used == faces.len() {
                    faces.push(Vec::with_capacity(4));
                }
                faces[used].clear();
                faces[used].extend_from_slice(f);
                used += 1;
            });
            let faces = &faces[..used];
            check_cell(c, cell.kind(), faces, &mut scratch)?;
            kinds.push(cell.kind());
            cell_verts.extend_from_slice(&verts);
            cell_vert_ptr.push(to_u32("cell vertices", cell_verts.len())?);
            for f in faces {
                let next = to_u32("faces", face_cells.len())?;
                match face_of.get_or_insert(f, next) {
                    None => {
                        let id = next;
                        face_verts.extend_from_slice(f);
                        face_ptr.push(to_u32("face vertices", face_verts.len())?);
                        face_cells.push([c as u32, NONE]);
                        cell_faces.push(2 * id);
                    }
                    Some(id) => {
                        let i = id as usize;
                        let stored = &face_verts[face_ptr[i] as usize..face_ptr[i + 1] as usize];
                        let first = face_cells[i][0] as usize;
                        if face_cells[i][1] != NONE {
                            return Err(VolumeError::NonManifoldFace {
                                face: stored.to_vec(),
                                cells: [first, face_cells[i][1] as usize, c],
                            });
                        }
                        match relation(stored, f) {
                            Some(true) => {}
                            Some(false) => {
                                return Err(VolumeError::MisorientedFace {
                                    face: stored.to_vec(),
                                    cells: [first, c],
                                    detail: "both use it the same way round: one cell is inverted",
                                });
                            }
                            None => {
                                return Err(VolumeError::MisorientedFace {
                                    face: stored.to_vec(),
                                    cells: [first, c],
                                    detail: "the same vertices in another cyclic order",
                                });
                            }
                        }
                        face_cells[i][1] = c as u32;
                        cell_faces.push(2 * id + 1);
                    }
                }
            }
            cell_face_ptr.push(to_u32("cell faces", cell_faces.len())?);
        }
        drop(face_of);
        // Edges, in the order faces first use them.
        let mut edge_of: IdMap<(u32, u32), u32> = IdMap::default();
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let mut face_edges = Vec::with_capacity(face_verts.len());
        for f in 0..face_cells.len() {
            let fv = &face_verts[face_ptr[f] as usize..face_ptr[f + 1] as usize];
            for (k, &a) in fv.iter().enumerate() {
                let b = fv[(k + 1) % fv.len()];
                let key = (a.min(b), a.max(b));
                let next = edges.len() as u32;
                let e = *edge_of.entry(key).or_insert(next);
                if e == next {
                    edges.push([key.0, key.1]);
                }
                face_edges.push(e);
            }
        }
        to_u32("edges", edges.len())?;
        drop(edge_of);
        let [edge_face_ptr, edge_faces, vertex_edge_ptr, vertex_edges] =
            edge_incidence(num_vertices, &face_ptr, &face_edges, &edges);
        let mesh = VolMesh {
            num_vertices,
            kinds,
            cell_vert_ptr,
            cell_verts,
            cell_face_ptr,
            cell_faces,
            face_ptr,
            face_verts,
            face_cells,
            face_edges,
            edges,
            edge_face_ptr,
            edge_faces,
            vertex_edge_ptr,
            vertex_edges,
            sharp: Vec::new(),
            corners: Vec::new(),
        };
        Ok(mesh)
    }

    /// Checks that the boundary surface is a closed 2-manifold: no edge in
    /// an odd number of boundary faces (non-conforming), none in four or
    /// more (cells meeting along an edge), one fan of boundary faces
    /// around each boundary vertex.
    pub(crate) fn check_boundary(&self) -> Result<()> {
        for e in 0..self.num_edges() {
            let mut bfaces = self.edge_faces(e).iter().copied().filter(|&f| self.is_boundary_face(f as usize));
            let n = bfaces.clone().count();
            // Each cell around an edge has two faces at it, and interior
            // faces are counted twice: the boundary faces are even.
            debug_assert!(n % 2 == 0, "edge {e}: {n} boundary faces");
            if n >= 4 {
                let cell = |f: Option<u32>| f.map_or(0, |f| self.face_cells[f as usize][0] as usize);
                let first = cell(bfaces.next());
                return Err(VolumeError::NonManifoldEdge {
                    edge: self.edges[e],
                    faces: n,
                    cells: [first, cell(bfaces.next_back())],
                });
            }
        }
        // The corners of boundary faces at each vertex, as (prev, next)
        // with the faces outward.
        let mut corners: Vec<(u32, u32, u32)> = Vec::new();
        for f in 0..self.num_faces() {
            if !self.is_boundary_face(f) {
                continue;
            }
            let fv = self.face(f);
            let n = fv.len();
            for k in 0..n {
                corners.push((fv[k], fv[(k + n - 1) % n], fv[(k + 1) % n]));
            }
        }
        corners.sort_unstable();
        for group in corners.chunk_by(|a, b| a.0 == b.0) {
            // Walk from each unvisited corner to the one whose previous
            // vertex is its next: one cycle per fan.
            let mut seen = vec![false; group.len()];
            let mut fans = 0;
            for start in 0..group.len() {
                if seen[start] {
                    continue;
                }
                fans += 1;
                let mut cur = start;
                while !seen[cur] {
                    seen[cur] = true;
                    let next = group[cur].2;
                    match group.iter().position(|g| g.1 == next) {
                        Some(i) => cur = i,
                        None => break,
                    }
                }
            }
            if fans > 1 {
                return Err(VolumeError::NonManifoldVertex { vertex: group[0].0, fans });
            }
        }
        Ok(())
    }

    /// Checks `positions` against the mesh: `V × 3`, finite, every cell of
    /// positive volume, and no tetrahedron, hexahedron or wedge with a
    /// corner whose three edges turn the wrong way (its scaled Jacobian
    /// below `1e-9` in size: inverted if negative, degenerate if about 0).
    /// Polyhedra, which may be non-convex, are checked by their volume only.
    /// Then no boundary vertex may lie on a boundary edge it is not an end
    /// of, or on another vertex: that is a face meeting its neighbours only
    /// in part (a hanging vertex), which the connectivity alone cannot see
    /// (the boundary is then two sheets that touch).
    ///
    /// # Errors
    /// [`VolumeError::Positions`], [`VolumeError::NotFinite`],
    /// [`VolumeError::InvertedCell`] or [`VolumeError::DegenerateCell`]
    /// for the first cell that fails; [`VolumeError::NonConforming`] for
    /// the first hanging vertex (by vertex id).
    pub fn check_geometry(&self, positions: &Array2<f64>) -> Result<()> {
        self.check_cells(positions)?;
        self.check_hanging(positions)
    }

    /// The cell checks of [`VolMesh::check_geometry`] alone (shape, finite
    /// positions, volumes and corners), in parallel, without the
    /// hanging-vertex test: for positions of a mesh whose boundary cannot
    /// have hanging vertices, a refined one, say.
    ///
    /// # Errors
    /// As [`VolMesh::check_geometry`], but never
    /// [`VolumeError::NonConforming`].
    pub fn check_cells(&self, positions: &Array2<f64>) -> Result<()> {
        let (rows, cols) = positions.dim();
        if rows != self.num_vertices || cols != 3 {
            return Err(VolumeError::Positions { rows, cols, num_vertices: self.num_vertices });
        }
        if let Some(((v, _), &value)) = positions.indexed_iter().find(|(_, x)| !x.is_finite()) {
            return Err(VolumeError::NotFinite { vertex: v, value });
        }
        let p = |v: u32| -> [f64; 3] {
            let r = positions.row(v as usize);
            [r[0], r[1], r[2]]
        };
        let check = |c: usize| -> Result<()> {
            let verts = self.cell_vertices(c);
            let n = verts.len() as f64;
            let mut c0 = [0.0; 3];
            let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
            for &v in verts {
                let q = p(v);
                for k in 0..3 {
                    c0[k] += q[k] / n;
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
            let scale = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
            let tol = 1e-12 * scale * scale * scale;
            let mut volume = 0.0;
            self.for_each_cell_face(c, |fv| {
                let m = fv.len() as f64;
                let mut fc = [0.0; 3];
                for &v in fv {
                    let q = p(v);
                    for k in 0..3 {
                        fc[k] += q[k] / m;
                    }
                }
                for (i, &a) in fv.iter().enumerate() {
                    let b = fv[(i + 1) % fv.len()];
                    volume += det(sub(fc, c0), sub(p(a), c0), sub(p(b), c0)) / 6.0;
                }
            });
            if volume < -tol {
                return Err(VolumeError::InvertedCell { cell: c, vertex: verts[0], measure: volume });
            }
            if volume <= tol {
                return Err(VolumeError::DegenerateCell { cell: c, detail: format!("volume {volume:e}") });
            }
            if let Some(corners) = corner_table(self.kinds[c]) {
                for (k, nb) in corners.iter().enumerate() {
                    let v = p(verts[k]);
                    let e = nb.map(|u| sub(p(verts[u as usize]), v));
                    let len: f64 = e.iter().map(|x| norm(*x)).product();
                    let j = if len > 0.0 { det(e[0], e[1], e[2]) / len } else { 0.0 };
                    if j < -1e-9 {
                        return Err(VolumeError::InvertedCell { cell: c, vertex: verts[k], measure: j });
                    }
                    if j <= 1e-9 {
                        return Err(VolumeError::DegenerateCell {
                            cell: c,
                            detail: format!("flat corner at vertex {} (scaled Jacobian {j:e})", verts[k]),
                        });
                    }
                }
            }
            Ok(())
        };
        match (0..self.num_cells()).into_par_iter().with_min_len(1024).find_map_first(|c| check(c).err()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The hanging-vertex test of [`VolMesh::check_geometry`]: boundary
    /// edges in a uniform grid of cells about their mean length, each
    /// boundary vertex tested against the edges of its grid cell.
    fn check_hanging(&self, positions: &Array2<f64>) -> Result<()> {
        let p = |v: u32| -> [f64; 3] {
            let r = positions.row(v as usize);
            [r[0], r[1], r[2]]
        };
        let bedges: Vec<u32> = (0..self.num_edges() as u32).filter(|&e| self.is_boundary_edge(e as usize)).collect();
        if bedges.is_empty() {
            return Ok(());
        }
        let mean =
            bedges.iter().map(|&e| norm(sub(p(self.edges[e as usize][1]), p(self.edges[e as usize][0])))).sum::<f64>()
                / bedges.len() as f64;
        if mean.is_nan() || mean <= 0.0 {
            return Ok(());
        }
        let key = |x: [f64; 3]| x.map(|c| (c / mean).floor() as i64);
        let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
        for &e in &bedges {
            let [a, b] = self.edges[e as usize].map(p);
            let (lo, hi) = (key(std::array::from_fn(|k| a[k].min(b[k]))), key(std::array::from_fn(|k| a[k].max(b[k]))));
            // A very long edge spans many grid cells: cap the work by
            // putting it in at most 4096 of them (the vertices it could
            // hold are still found through those near its ends).
            let span: i64 = (0..3).map(|k| hi[k] - lo[k] + 1).product();
            if span > 4096 {
                continue;
            }
            for i in lo[0]..=hi[0] {
                for j in lo[1]..=hi[1] {
                    for k in lo[2]..=hi[2] {
                        grid.entry([i, j, k]).or_default().push(e);
                    }
                }
            }
        }
        let bverts: Vec<u32> = (0..self.num_vertices as u32).filter(|&v| self.is_boundary_vertex(v as usize)).collect();
        let test = |v: u32| -> Option<VolumeError> {
            let x = p(v);
            let cands = grid.get(&key(x))?;
            for &e in cands {
                let [a, b] = self.edges[e as usize];
                if a == v || b == v {
                    continue;
                }
                let (pa, pb) = (p(a), p(b));
                let d = sub(pb, pa);
                let len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                let w = sub(x, pa);
                let t = (w[0] * d[0] + w[1] * d[1] + w[2] * d[2]) / len2;
                let off = sub(w, d.map(|c| c * t));
                let tol = 1e-9 * len2.sqrt();
                let hit = if norm(off) > tol {
                    None
                } else if norm(w) <= tol || norm(sub(x, pb)) <= tol {
                    Some("coincides with an end of")
                } else if t > 0.0 && t < 1.0 {
                    Some("lies inside")
                } else {
                    None
                };
                if let Some(detail) = hit {
                    let f = self.edge_faces(e as usize).iter().copied().find(|&f| self.is_boundary_face(f as usize))?;
                    let cell = self.face_cells[f as usize][0] as usize;
                    return Some(VolumeError::NonConforming { cell, edge: [a, b], vertex: v, detail });
                }
            }
            None
        };
        match bverts.par_iter().with_min_len(1024).find_map_first(|&v| test(v)) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }
    /// Number of cells.
    pub fn num_cells(&self) -> usize {
        self.kinds.len()
    }
    /// Number of faces (each shared face once).
    pub fn num_faces(&self) -> usize {
        self.face_cells.len()
    }
    /// Number of edges.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }
    /// The kind of cell `c`.
    pub fn kind(&self, c: usize) -> CellKind {
        self.kinds[c]
    }
    /// The vertices of cell `c`: in its kind's order, or for a polyhedron in
    /// the order its faces first use them.
    pub fn cell_vertices(&self, c: usize) -> &[u32] {
        &self.cell_verts[self.cell_vert_ptr[c] as usize..self.cell_vert_ptr[c + 1] as usize]
    }
    /// The faces of cell `c`, each `2f` (face `f` as stored, outward) or
    /// `2f + 1` (stored the other way round).
    pub fn cell_faces(&self, c: usize) -> &[u32] {
        &self.cell_faces[self.cell_face_ptr[c] as usize..self.cell_face_ptr[c + 1] as usize]
    }
    /// Calls `f` with each face of cell `c`, outward from it.
    pub fn for_each_cell_face(&self, c: usize, mut f: impl FnMut(&[u32])) {
        let mut buf = Vec::new();
        for &code in self.cell_faces(c) {
            let fv = self.face((code >> 1) as usize);
            if code & 1 == 0 {
                f(fv);
            } else {
                buf.clear();
                buf.extend(fv.iter().rev());
                f(&buf);
            }
        }
    }
    /// Cell `c` as a [`Cell`] (what [`VolMesh::from_cells`] was given).
    pub fn cell(&self, c: usize) -> Cell {
        let v = self.cell_vertices(c);
        let arr = |n: usize| -> Vec<u32> { v[..n].to_vec() };
        match self.kinds[c] {
            CellKind::Tetra => Cell::Tetra(arr(4).try_into().expect("four vertices")),
            CellKind::Hexahedron => Cell::Hexahedron(arr(8).try_into().expect("eight vertices")),
            CellKind::Wedge => Cell::Wedge(arr(6).try_into().expect("six vertices")),
            CellKind::Pyramid => Cell::Pyramid(arr(5).try_into().expect("five vertices")),
            CellKind::Polyhedron => {
                let mut faces = Vec::new();
                self.for_each_cell_face(c, |f| faces.push(f.to_vec()));
                Cell::Polyhedron(faces)
            }
        }
    }
    /// The vertices of face `f`, outward from its first cell.
    pub fn face(&self, f: usize) -> &[u32] {
        &self.face_verts[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }
    /// The cells of face `f`: the one it points out of, then the other
    /// ([`NONE`] on the boundary).
    pub fn face_cells(&self, f: usize) -> [u32; 2] {
        self.face_cells[f]
    }
    /// The edges of face `f`, edge `k` from its vertex `k` to `k + 1`.
    pub fn face_edges(&self, f: usize) -> &[u32] {
        &self.face_edges[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }
    /// Whether face `f` is on the boundary (one cell).
    pub fn is_boundary_face(&self, f: usize) -> bool {
        self.face_cells[f][1] == NONE
    }
    /// Edge `e`, `[lo, hi]`.
    pub fn edge(&self, e: usize) -> [u32; 2] {
        self.edges[e]
    }
    /// The faces around edge `e`, by id.
    pub fn edge_faces(&self, e: usize) -> &[u32] {
        &self.edge_faces[self.edge_face_ptr[e] as usize..self.edge_face_ptr[e + 1] as usize]
    }
    /// The valence of edge `e`: its number of faces (4 inside a regular
    /// hexahedral grid, 3 on its boundary).
    pub fn edge_valence(&self, e: usize) -> usize {
        self.edge_faces(e).len()
    }
    /// Whether edge `e` is on the boundary (in a boundary face).
    pub fn is_boundary_edge(&self, e: usize) -> bool {
        self.edge_faces(e).iter().any(|&f| self.is_boundary_face(f as usize))
    }
    /// Whether edge `e` is extraordinary: valence other than 4 inside, or
    /// other than 3 on the boundary (Altenhofen et al. 2018).
    pub fn is_extraordinary_edge(&self, e: usize) -> bool {
        self.edge_valence(e) != if self.is_boundary_edge(e) { 3 } else { 4 }
    }
    /// The edges of vertex `v`, by id.
    pub fn vertex_edges(&self, v: usize) -> &[u32] {
        &self.vertex_edges[self.vertex_edge_ptr[v] as usize..self.vertex_edge_ptr[v + 1] as usize]
    }
    /// Whether vertex `v` is on the boundary.
    pub fn is_boundary_vertex(&self, v: usize) -> bool {
        self.vertex_edges(v).iter().any(|&e| self.is_boundary_edge(e as usize))
    }

    /// This mesh with the edges `sharp` (each by its two vertices, either
    /// way round) infinitely sharp creases and the vertices `corners`
    /// corners, in addition to those it has: the features the refinement
    /// rules keep (see `docs/solids.md`).
    ///
    /// # Errors
    /// [`VolumeError::NoSuchEdge`] naming the first pair that is not an
    /// edge; [`VolumeError::NoSuchVertex`] for a corner past the vertices.
    pub fn with_features(mut self, sharp: &[[u32; 2]], corners: &[u32]) -> Result<VolMesh> {
        let nv = self.num_vertices;
        if !sharp.is_empty() && self.sharp.is_empty() {
            self.sharp = vec![false; self.num_edges()];
        }
        for &[a, b] in sharp {
            let e = (a as usize)
                .lt(&nv)
                .then(|| self.vertex_edges(a as usize).iter().copied().find(|&e| self.edge(e as usize).contains(&b)))
                .flatten()
                .filter(|_| a != b)
                .ok_or(VolumeError::NoSuchEdge { vertices: [a, b] })?;
            self.sharp[e as usize] = true;
        }
        if !corners.is_empty() && self.corners.is_empty() {
            self.corners = vec![false; nv];
        }
        for &v in corners {
            if v as usize >= nv {
                return Err(VolumeError::NoSuchVertex { vertex: v, num_vertices: nv });
            }
            self.corners[v as usize] = true;
        }
        Ok(self)
    }

    /// Whether edge `e` is an infinitely sharp crease.
    pub fn is_sharp_edge(&self, e: usize) -> bool {
        self.sharp.get(e).copied().unwrap_or(false)
    }

    /// Whether vertex `v` is a corner.
    pub fn is_corner(&self, v: usize) -> bool {
        self.corners.get(v).copied().unwrap_or(false)
    }

    /// Whether any edge is sharp or any vertex a corner (in constant time:
    /// the flags exist only where one of them is set).
    pub fn has_features(&self) -> bool {
        !self.sharp.is_empty() || !self.corners.is_empty()
    }

    /// The sharp edges, in order.
    pub fn sharp_edges(&self) -> impl Iterator<Item = u32> + '_ {
        self.sharp.iter().enumerate().filter(|p| *p.1).map(|p| p.0 as u32)
    }

    /// The corners, in order.
    pub fn corners(&self) -> impl Iterator<Item = u32> + '_ {
        self.corners.iter().enumerate().filter(|p| *p.1).map(|p| p.0 as u32)
    }

    /// Whether vertex `v` is a corner or has a sharp edge: the refinement
    /// rules around it differ from the smooth ones.
    pub fn touches_feature(&self, v: usize) -> bool {
        self.is_corner(v) || self.vertex_edges(v).iter().any(|&e| self.is_sharp_edge(e as usize))
    }
    /// The cells as [`Cell`]s, in order.
    pub fn cells(&self) -> impl Iterator<Item = Cell> + '_ {
        (0..self.num_cells()).map(|c| self.cell(c))
    }

    /// The cell–face incidence `C × F`: `+1` where the face, as stored,
    /// points out of the cell, `−1` where it points in (the ternary
    /// matrices of Mueller-Roemer et al. 2017).
    ///
    /// # Errors
    /// [`VolumeError::Algebra`] where memory runs out.
    pub fn cell_face_matrix(&self) -> Result<CsrMat<i8>> {
        self.signed_rows(self.num_cells(), self.num_faces(), |c, out| {
            out.extend(self.cell_faces(c).iter().map(|&code| (code >> 1, if code & 1 == 0 { 1 } else { -1 })));
        })
    }

    /// The face–edge incidence `F × E`: `+1` where the face runs along the
    /// edge from its lower vertex to its higher, `−1` the other way.
    ///
    /// # Errors
    /// [`VolumeError::Algebra`] where memory runs out.
    pub fn face_edge_matrix(&self) -> Result<CsrMat<i8>> {
        self.signed_rows(self.num_faces(), self.num_edges(), |f, out| {
            let fv = self.face(f);
            for (k, &e) in self.face_edges(f).iter().enumerate() {
                out.push((e, if fv[k] < fv[(k + 1) % fv.len()] { 1 } else { -1 }));
            }
        })
    }

    /// The edge–vertex incidence `E × V`: `−1` at the lower vertex, `+1`
    /// at the higher.
    ///
    /// # Errors
    /// [`VolumeError::Algebra`] where memory runs out.
    pub fn edge_vertex_matrix(&self) -> Result<CsrMat<i8>> {
        self.signed_rows(self.num_edges(), self.num_vertices, |e, out| {
            let [a, b] = self.edges[e];
            out.extend([(a, -1), (b, 1)]);
        })
    }

    /// The cell–vertex matrix `C × V`, the volumetric mesh matrix: the
    /// entry of a cell's vertex is its position in the cell plus one (VTK's
    /// order; a polyhedron's first-use order), as the surface mesh matrix
    /// holds corner numbers (Mlakar et al. 2020, Eq. 1).
    ///
    /// # Errors
    /// [`VolumeError::Algebra`] where memory runs out.
    pub fn cell_vertex_matrix(&self) -> Result<CsrMat<u32>> {
        let mut ptr = Vec::with_capacity(self.num_cells() + 1);
        ptr.push(0u32);
        let mut idx = Vec::with_capacity(self.cell_verts.len());
        let mut val = Vec::with_capacity(self.cell_verts.len());
        let mut row: Vec<(u32, u32)> = Vec::new();
        for c in 0..self.num_cells() {
            row.clear();
            row.extend(self.cell_vertices(c).iter().enumerate().map(|(k, &v)| (v, k as u32 + 1)));
            row.sort_unstable();
            idx.extend(row.iter().map(|r| r.0));
            val.extend(row.iter().map(|r| r.1));
            ptr.push(idx.len() as u32);
        }
        Ok(CsrMat::try_new(self.num_cells(), self.num_vertices, ptr, idx, val)?)
    }

    fn signed_rows(
        &self,
        rows: usize,
        cols: usize,
        mut row: impl FnMut(usize, &mut Vec<(u32, i8)>),
    ) -> Result<CsrMat<i8>> {
        let mut ptr = Vec::with_capacity(rows + 1);
        ptr.push(0u32);
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        let mut buf = Vec::new();
        for r in 0..rows {
            buf.clear();
            row(r, &mut buf);
            buf.sort_unstable_by_key(|x| x.0);
            idx.extend(buf.iter().map(|x| x.0));
            val.extend(buf.iter().map(|x| x.1));
            ptr.push(to_u32("nonzeros", idx.len())?);
        }
        Ok(CsrMat::try_new(rows, cols, ptr, idx, val)?)
    }
}

/// The faces of each edge and the edges of each vertex (`edge_face_ptr`,
/// `edge_faces`, `vertex_edge_ptr`, `vertex_edges`), from the faces' edges
/// and the edges' ends.
fn edge_incidence(num_vertices: usize, face_ptr: &[u32], face_edges: &[u32], edges: &[[u32; 2]]) -> [Vec<u32>; 4] {
    let (edge_face_ptr, edge_faces) = invert(edges.len(), face_ptr, face_edges);
    let edge_ends: Vec<u32> = edges.iter().flatten().copied().collect();
    let ends_ptr: Vec<u32> = (0..=edges.len() as u32).map(|e| 2 * e).collect();
    let (vertex_edge_ptr, vertex_edges) = invert(num_vertices, &ends_ptr, &edge_ends);
    [edge_face_ptr, edge_faces, vertex_edge_ptr, vertex_edges]
}

/// The transpose of a ragged relation (`ptr`, `idx`) as (`ptr`, `idx`) of
/// `n` rows, each row's entries in increasing order.
fn invert(n: usize, ptr: &[u32], idx: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut count = vec![0u32; n + 1];
    for &i in idx {
        count[i as usize + 1] += 1;
    }
    for k in 0..n {
        count[k + 1] += count[k];
    }
    let mut out = vec![0u32; idx.len()];
    let mut fill = count.clone();
    for r in 0..ptr.len().saturating_sub(1) {
        for &i in &idx[ptr[r] as usize..ptr[r + 1] as usize] {
            out[fill[i as usize] as usize] = r as u32;
            fill[i as usize] += 1;
        }
    }
    (count, out)
}

/// For each vertex of a cell of a fixed kind, its three neighbours in the
/// order that turns positively for a convex corner (so the determinant of
/// the three edge vectors is positive): from one outward face at the
/// vertex to the next, each neighbour the face's vertex after it.
pub(crate) fn corner_table(kind: CellKind) -> Option<Vec<[u8; 3]>> {
    let n = match kind {
        CellKind::Tetra | CellKind::Hexahedron | CellKind::Wedge => kind.num_vertices()?,
        _ => return None,
    };
    let faces = kind.faces();
    Some(
        (0..n as u8)
            .map(|v| {
                // (prev, next) of v in each face containing it.
                let around: Vec<(u8, u8)> = faces
                    .iter()
                    .filter_map(|f| {
                        let i = f.iter().position(|&u| u == v)?;
                        Some((f[(i + f.len() - 1) % f.len()], f[(i + 1) % f.len()]))
                    })
                    .collect();
                let mut out = [around[0].1, 0, 0];
                for k in 1..3 {
                    let prev = out[k - 1];
                    out[k] = around.iter().find(|p| p.0 == prev).map_or(prev, |p| p.1);
                }
                out
            })
            .collect(),
    )
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn det(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
}
