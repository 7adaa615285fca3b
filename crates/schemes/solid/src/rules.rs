//! One Catmull-Clark solid step over a [`VolMesh`]: the stencil of every
//! child point (Joy & MacCracken 1999 inside; Catmull-Clark surface rules
//! on the boundary) and the child cells (one hexahedron per cell corner).
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
//! On a regular hexahedral grid these are the tricubic B-spline's
//! refinement masks (the tensor product of `(1, 6, 1)/8` and `(1, 1)/2`;
//! derived in `docs/solids.md`). On the boundary (a face of one cell, an
//! edge or vertex of a boundary face) the boundary surface refines by
//! itself, as a Catmull-Clark surface: face points are centroids, edge
//! points `(a + b + F₀ + F₁)/4` over the two boundary faces, vertex points
//! `(F + 2M + (n − 3) v)/n` over the `n` boundary faces and edges.

use rayon::prelude::*;
use subla_algebra::{CsrMat, Par};
use subla_scheme::Result;
use subla_scheme::kernel::{Stencil, assemble_rows};
use subla_volume::{Cell, NONE, VolMesh};

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
fn vertex_faces(m: &VolMesh, v: usize) -> Vec<u32> {
    distinct(m.vertex_edges(v).iter().flat_map(|&e| m.edge_faces(e as usize).iter().copied()))
}

/// The cells of `faces`.
fn cells_of(m: &VolMesh, faces: &[u32]) -> Vec<u32> {
    distinct(faces.iter().flat_map(|&f| m.face_cells(f as usize)).filter(|&c| c != NONE))
}

/// The stencil of child row `row` of the step over `m`.
pub(crate) fn stencil(m: &VolMesh, row: usize, s: &mut Stencil) {
    let (nv, ne, nf) = (m.num_vertices(), m.num_edges(), m.num_faces());
    if row < nv {
        vertex_point(m, row, s);
    } else if row < nv + ne {
        edge_point(m, row - nv, s);
    } else if row < nv + ne + nf {
        face_point(m, row - nv - ne, s);
    } else {
        centroid(s, m.cell_vertices(row - nv - ne - nf), 1.0);
    }
}

fn vertex_point(m: &VolMesh, v: usize, s: &mut Stencil) {
    let edges = m.vertex_edges(v);
    if edges.is_empty() {
        s.push((v as u32, 1.0));
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
    for &e in edges {
        mid(s, e, 3.0 / (n * edges.len() as f64));
    }
    s.push((v32, (n - 7.0) / n));
}

fn edge_point(m: &VolMesh, e: usize, s: &mut Stencil) {
    let [a, b] = m.edge(e);
    let faces = m.edge_faces(e);
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
pub(crate) fn operator(m: &VolMesh, par: Par) -> Result<CsrMat<f64>> {
    assemble_rows(child_len(m), m.num_vertices(), par, |row, s| stencil(m, row, s))
}

/// Number of child points.
pub(crate) fn child_len(m: &VolMesh) -> usize {
    m.num_vertices() + m.num_edges() + m.num_faces() + m.num_cells()
}

/// The hexahedra of the step over `m`: one per cell corner, cell after
/// cell, corners in the cell's vertex order. The corner `v` with
/// neighbours `n₁ n₂ n₃` turning positively (each the next vertex after `v`
/// in one outward face, the face whose previous vertex is the one before)
/// becomes `(v, E(n₁), F(n₁n₂), E(n₂), E(n₃), F(n₁n₃), C, F(n₂n₃))` in VTK's
/// hexahedron order, so the child keeps the parent's orientation.
pub(crate) fn child_cells(m: &VolMesh, par: Par) -> Vec<Cell> {
    let (nv, ne, nf) = (m.num_vertices() as u32, m.num_edges() as u32, m.num_faces() as u32);
    let cell = |c: usize| -> Vec<Cell> {
        // (vertex, previous, next, face) of each corner of the cell's
        // outward faces.
        let mut corners: Vec<(u32, u32, u32, u32)> = Vec::new();
        for &code in m.cell_faces(c) {
            let f = code >> 1;
            let fv = m.face(f as usize);
            let k = fv.len();
            for i in 0..k {
                let (p, n) = (fv[(i + k - 1) % k], fv[(i + 1) % k]);
                // A face stored the other way round for this cell.
                let (p, n) = if code & 1 == 0 { (p, n) } else { (n, p) };
                corners.push((fv[i], p, n, f));
            }
        }
        let edge = |v: u32, u: u32| -> u32 {
            let e = m.vertex_edges(v as usize).iter().copied().find(|&e| m.edge(e as usize).contains(&u));
            nv + e.expect("a cell's neighbouring vertices share an edge")
        };
        m.cell_vertices(c)
            .iter()
            .map(|&v| {
                let here: Vec<&(u32, u32, u32, u32)> = corners.iter().filter(|x| x.0 == v).collect();
                let after = |prev: u32| here.iter().find(|x| x.1 == prev).map_or(prev, |x| x.2);
                let face_to = |next: u32| nv + ne + here.iter().find(|x| x.2 == next).map_or(0, |x| x.3);
                let n1 = here[0].2;
                let n2 = after(n1);
                let n3 = after(n2);
                Cell::Hexahedron([
                    v,
                    edge(v, n1),
                    face_to(n2),
                    edge(v, n2),
                    edge(v, n3),
                    face_to(n1),
                    nv + ne + nf + c as u32,
                    face_to(n3),
                ])
            })
            .collect()
    };
    if par == Par::Rayon && m.num_cells() >= 256 {
        (0..m.num_cells()).into_par_iter().with_min_len(64).flat_map_iter(cell).collect()
    } else {
        (0..m.num_cells()).flat_map(cell).collect()
    }
}
