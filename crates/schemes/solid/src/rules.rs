//! One Catmull-Clark solid step over a [`VolMesh`]: the stencil of every
//! child point (Joy & MacCracken 1999 inside; Catmull-Clark surface rules
//! on the boundary).
//!
//! Child points are numbered vertex points, then edge points, then face
//! points, then cell points, each in the parent's order. With `C`, `A`,
//! `M` the averages of the centroids of the cells, faces and edge
//! midpoints around an element, and `n` its number of cells (vertex) or
//! faces (edge):
//!
//! ```text
//! cell point   centroid of the cell
//! face point   ½ (centroid + ½ (cell centroid₁ + cell centroid₂))
//! edge point   (C + 2A + (n − 3) midpoint) / n
//! vertex point (C + 3A + 3M + (n − 7) v) / n
//! ```
//!
//! At a *layered* vertex ([`layered_edges`]: inside, on a straight
//! extraordinary edge of valence `k ≠ 4`, `n = 2k` cells) the default
//! [`VertexRule::Layered`] weighs the edges apart, so that the vertex
//! point is Catmull-Clark's surface rule times the cubic B-spline's
//! `(1, 6, 1)/8` (derived in `docs/solids.md`); with `M_x` the average
//! midpoint of the two extraordinary edges and `M_o` of the others:
//!
//! ```text
//! vertex point (C + 3A + 2M_o + (k − 3)(M_x + v)) / n
//! ```
//!
//! It equals Joy and MacCracken's at `k = 4` and is theirs everywhere
//! else; [`VertexRule::JoyMacCracken`] keeps their rule at layered
//! vertices too.
//!
//! Sharp edges and corners ([`VolMesh::with_features`], infinitely sharp
//! only) take the curve rules wherever they are, inside or on the
//! boundary: a sharp edge's point is its midpoint; a vertex on two sharp
//! edges `(a, v)`, `(v, b)` becomes `(a + 6v + b)/8`; a corner, or a vertex
//! on three or more sharp edges, stays. A vertex on one sharp edge keeps
//! the smooth rule (a dart), as on a Catmull-Clark surface; face and cell
//! points never change. On the boundary these are Catmull-Clark's surface
//! crease rules, so the boundary surface still refines as the surface
//! scheme with the same creases and corners.
//!
//! On a regular hexahedral grid these are the tricubic B-spline's
//! refinement masks (the tensor product of `(1, 6, 1)/8` and `(1, 1)/2`;
//! derived in `docs/solids.md`). On the boundary (a face of one cell, an
//! edge or vertex of a boundary face) the boundary surface refines by
//! itself, as a Catmull-Clark surface: face points are centroids, edge
//! points `(a + b + F₀ + F₁)/4` over the two boundary faces, vertex points
//! `(F + 2M + (n − 3) v)/n` over the `n` boundary faces and edges. The
//! child cells and their connectivity are [`VolMesh::split`]'s.

use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_scheme::kernel::{Stencil, assemble_rows};
use subla_volume::{NONE, VolMesh};

use crate::VertexRule;

/// Pushes the centroid of `verts` with weight `w`.
fn centroid(s: &mut Stencil, verts: &[u32], w: f64) {
    let k = w / verts.len() as f64;
    s.extend(verts.iter().map(|&v| (v, k)));
}

/// The distinct elements of an iterator, sorted.
fn distinct(it: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The faces around vertex `v`.
pub(crate) fn vertex_faces(m: &VolMesh, v: usize) -> Vec<u32> {
    distinct(m.vertex_edges(v).iter().flat_map(|&e| m.edge_faces(e as usize).iter().copied()))
}

/// The cells of `faces`.
pub(crate) fn cells_of(m: &VolMesh, faces: &[u32]) -> Vec<u32> {
    distinct(faces.iter().flat_map(|&f| m.face_cells(f as usize)).filter(|&c| c != NONE))
}

/// The two extraordinary edges of `v` where `v` is a *layered* vertex: an
/// inner vertex on a straight extraordinary edge of valence `n ≠ 4`, its
/// neighbourhood `n` layers of a Catmull-Clark surface ring — `n + 2`
/// edges (the two extraordinary ones, `n` cells each, and `n` of valence
/// 4) and `2n` hexahedra, each holding one of the two.
pub(crate) fn layered_edges(m: &VolMesh, v: usize) -> Option<[u32; 2]> {
    if m.is_boundary_vertex(v) {
        return None;
    }
    let edges = m.vertex_edges(v);
    let mut ext = edges.iter().copied().filter(|&e| m.edge_faces(e as usize).len() != 4);
    let (a, b) = (ext.next()?, ext.next()?);
    let n = m.edge_faces(a as usize).len();
    if ext.next().is_some() || n < 3 || m.edge_faces(b as usize).len() != n || edges.len() != n + 2 {
        return None;
    }
    let (ca, cb) = (cells_of(m, m.edge_faces(a as usize)), cells_of(m, m.edge_faces(b as usize)));
    let cells = cells_of(m, &vertex_faces(m, v));
    let hexahedra = cells.iter().all(|&c| m.kind(c as usize) == subla_volume::CellKind::Hexahedron);
    let apart = ca.iter().all(|c| cb.binary_search(c).is_err());
    (ca.len() == n && cb.len() == n && cells.len() == 2 * n && hexahedra && apart).then_some([a, b])
}

/// [`layered_edges`] of every vertex of `m`.
pub(crate) fn layered_vertices(m: &VolMesh, par: Par) -> Vec<Option<[u32; 2]>> {
    use rayon::prelude::*;
    match par {
        Par::Seq => (0..m.num_vertices()).map(|v| layered_edges(m, v)).collect(),
        _ => (0..m.num_vertices()).into_par_iter().map(|v| layered_edges(m, v)).collect(),
    }
}

/// The stencil of child row `row` of the step over `m`.
pub(crate) fn stencil(m: &VolMesh, rule: VertexRule, row: usize, s: &mut Stencil) {
    let (nv, ne, nf) = (m.num_vertices(), m.num_edges(), m.num_faces());
    if row < nv {
        vertex_point(m, rule, row, s);
    } else if row < nv + ne {
        edge_point(m, row - nv, s);
    } else if row < nv + ne + nf {
        face_point(m, row - nv - ne, s);
    } else {
        centroid(s, m.cell_vertices(row - nv - ne - nf), 1.0);
    }
}

fn vertex_point(m: &VolMesh, rule: VertexRule, v: usize, s: &mut Stencil) {
    let edges = m.vertex_edges(v);
    if edges.is_empty() || m.is_corner(v) {
        s.push((v as u32, 1.0));
        return;
    }
    // On sharp edges: two make a crease curve, refined by the cubic
    // B-spline's (1, 6, 1)/8; three or more a corner. One alone leaves the
    // smooth rules.
    let mut sharp = edges.iter().filter(|&&e| m.is_sharp_edge(e as usize));
    if let (Some(&a), Some(&b)) = (sharp.next(), sharp.next()) {
        if sharp.next().is_some() {
            s.push((v as u32, 1.0));
        } else {
            let other =
                |e: u32| m.edge(e as usize).into_iter().find(|&x| x as usize != v).expect("an edge's other end");
            s.extend([(other(a), 0.125), (v as u32, 0.75), (other(b), 0.125)]);
        }
        return;
    }
    let faces = vertex_faces(m, v);
    let v32 = v as u32;
    let mid = |s: &mut Stencil, e: u32, w: f64| {
        let [a, b] = m.edge(e as usize);
        s.extend([(a, w / 2.0), (b, w / 2.0)]);
    };
    if m.is_boundary_vertex(v) {
        let bfaces: Vec<u32> = faces.iter().copied().filter(|&f| m.is_boundary_face(f as usize)).collect();
        let bedges: Vec<u32> = edges.iter().copied().filter(|&e| m.is_boundary_edge(e as usize)).collect();
        let n = bedges.len() as f64;
        for &f in &bfaces {
            centroid(s, m.face(f as usize), 1.0 / (n * bfaces.len() as f64));
        }
        for &e in &bedges {
            mid(s, e, 2.0 / (n * n));
        }
        s.push((v32, (n - 3.0) / n));
        return;
    }
    let cells = cells_of(m, &faces);
    let n = cells.len() as f64;
    for &c in &cells {
        centroid(s, m.cell_vertices(c as usize), 1.0 / (n * n));
    }
    for &f in &faces {
        centroid(s, m.face(f as usize), 3.0 / (n * faces.len() as f64));
    }
    if let Some(ee) = layered_edges(m, v).filter(|_| rule == VertexRule::Layered) {
        // The product of Catmull-Clark's vertex rule with the curve's: the
        // `k` edges across the extraordinary one weigh 2/(nk), its own two
        // (k − 3)/(2n), the vertex (k − 3)/n (n = 2k cells).
        let k = n / 2.0;
        for &e in edges {
            mid(s, e, if ee.contains(&e) { (k - 3.0) / (2.0 * n) } else { 2.0 / (n * k) });
        }
        s.push((v32, (k - 3.0) / n));
        return;
    }
    for &e in edges {
        mid(s, e, 3.0 / (n * edges.len() as f64));
    }
    s.push((v32, (n - 7.0) / n));
}

fn edge_point(m: &VolMesh, e: usize, s: &mut Stencil) {
    let [a, b] = m.edge(e);
    let faces = m.edge_faces(e);
    if m.is_sharp_edge(e) {
        s.extend([(a, 0.5), (b, 0.5)]);
        return;
    }
    if m.is_boundary_edge(e) {
        s.extend([(a, 0.25), (b, 0.25)]);
        for &f in faces.iter().filter(|&&f| m.is_boundary_face(f as usize)) {
            centroid(s, m.face(f as usize), 0.25);
        }
        return;
    }
    let cells = cells_of(m, faces);
    let n = faces.len() as f64;
    for &c in &cells {
        centroid(s, m.cell_vertices(c as usize), 1.0 / (n * cells.len() as f64));
    }
    for &f in faces {
        centroid(s, m.face(f as usize), 2.0 / (n * n));
    }
    s.extend([(a, (n - 3.0) / (2.0 * n)), (b, (n - 3.0) / (2.0 * n))]);
}

fn face_point(m: &VolMesh, f: usize, s: &mut Stencil) {
    let fv = m.face(f);
    if m.is_boundary_face(f) {
        centroid(s, fv, 1.0);
        return;
    }
    centroid(s, fv, 0.5);
    for c in m.face_cells(f) {
        centroid(s, m.cell_vertices(c as usize), 0.25);
    }
}

/// The matrix of the step over `m`: rows the child points, columns `m`'s
/// vertices.
pub(crate) fn operator(m: &VolMesh, rule: VertexRule, par: Par) -> Result<CsrMat<f64>> {
    assemble_rows(child_len(m), m.num_vertices(), par, |row, s| stencil(m, rule, row, s))
}

/// Number of child points.
pub(crate) fn child_len(m: &VolMesh) -> usize {
    m.num_vertices() + m.num_edges() + m.num_faces() + m.num_cells()
}
