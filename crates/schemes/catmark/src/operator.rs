//! Catmull-Clark as sparse matrices: the refinement matrix `R_i` of one
//! level built directly from the topology (Mlakar et al. 2020, §6.3,
//! Eq. 23 and Fig. 5), and OpenSubdiv's limit masks as a matrix
//! (`docs/design/catmark-rules.md` §9).
//!
//! Rows are written block by block in parallel, each row by one task: its
//! stencil is gathered in the order eval accumulates it, then sorted by
//! column with duplicates summed (a face's vertices include the vertex and
//! its neighbours), so rows are sorted and the result does not depend on the
//! thread count.

use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::Result;
use subla_scheme::kernel::{Stencil, assemble_rows};

use crate::level::{EdgeMask, Step, VertexMask};
use crate::rules::Rule;

/// The vertices of face `f` with weight `w / order`.
#[inline]
fn face_into(t: &Topology, s: &mut Stencil, f: usize, w: f64) {
    let vs = t.face(f);
    let wf = w / vs.len() as f64;
    s.extend(vs.iter().map(|&v| (v, wf)));
}

/// The special mask of vertex `v`, if any.
fn vertex_mask(step: &Step, v: usize) -> Option<VertexMask> {
    step.vertices.binary_search_by_key(&(v as u32), |m| m.vertex).ok().map(|i| step.vertices[i])
}

/// The special mask of edge `e`, if any.
fn edge_mask(step: &Step, e: usize) -> Option<EdgeMask> {
    step.edges.binary_search_by_key(&(e as u32), |m| m.edge).ok().map(|i| step.edges[i])
}

/// The weights of vertex `v`'s mask (valence `n`): `(cv, cs, ce)` — of the
/// vertex, of its faces and neighbours (over `n²`), of its crease ends —
/// from its special mask, or the smooth rule's where it has none; and the
/// special mask.
pub(crate) fn vertex_weights(step: &Step, v: usize, n: usize) -> (f64, f64, f64, Option<VertexMask>) {
    let special = vertex_mask(step, v);
    let (cv, cs, ce) = match special {
        Some(m) => (m.cv, m.cs, m.ce),
        None => (if n > 0 { (n as f64 - 2.0) / n as f64 } else { 1.0 }, 1.0, 0.0),
    };
    (cv, cs, ce, special)
}

/// The weights `(alpha, beta)` of edge `e`'s mask — of its ends, of its
/// faces — from its special mask, or the smooth rule's.
pub(crate) fn edge_weights(step: &Step, e: usize) -> (f64, f64) {
    edge_mask(step, e).map_or((0.25, 0.25), |m| (m.alpha, m.beta))
}

/// Stored entries of `R` before duplicates are merged: an upper bound of
/// its nonzeros, from the counts alone (Eq. 23).
pub(crate) fn level_operator_bound(t: &Topology) -> u64 {
    let nv = t.num_vertices();
    let order = |c: u32| t.face_order(t.corner_faces()[c as usize] as usize) as u64;
    let vertices: u64 =
        (0..nv).map(|v| 3 + t.valence(v) as u64 + t.vertex_corners(v).iter().map(|&c| order(c)).sum::<u64>()).sum();
    let edges: u64 = (0..t.num_edges()).map(|e| 2 + t.edge_corners(e).iter().map(|&c| order(c)).sum::<u64>()).sum();
    vertices + t.num_corners() as u64 + edges
}

/// The matrix `R` of one level (§6.3, Fig. 5): rows are the child's
/// vertices (updated vertices, face points, edge points), columns the
/// parent's. Each row holds the stencil that eval applies.
pub(crate) fn level_operator(t: &Topology, step: &Step, par: Par) -> Result<CsrMat<f64>> {
    let n = t.num_vertices() + t.num_faces() + t.num_edges();
    assemble_rows(n, t.num_vertices(), par, |row, s| row_into(t, step, row, s))
}

/// Rows `rows` (each below the child's vertex count) of
/// [`level_operator`].
pub(crate) fn level_operator_rows(t: &Topology, step: &Step, rows: &[u32], par: Par) -> Result<CsrMat<f64>> {
    assemble_rows(rows.len(), t.num_vertices(), par, |k, s| row_into(t, step, rows[k] as usize, s))
}

/// The stencil of child vertex `row`.
fn row_into(t: &Topology, step: &Step, row: usize, s: &mut Stencil) {
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let cf = t.corner_faces();
    if row < nv {
        let v = row;
        let n = t.valence(v);
        let (cv, cs, ce, special) = vertex_weights(step, v, n);
        if cs != 0.0 && n > 0 {
            let w = cs / (n * n) as f64;
            for &c in t.vertex_corners(v) {
                face_into(t, s, cf[c as usize] as usize, w);
            }
            s.extend(t.vertex_neighbors(v).map(|u| (u, w)));
        }
        if let Some(m) = special {
            if ce != 0.0 {
                s.push((m.ua, ce));
                s.push((m.ub, ce));
            }
        }
        s.push((v as u32, cv));
    } else if row < nv + nf {
        face_into(t, s, row - nv, 1.0);
    } else {
        let e = row - nv - nf;
        let (alpha, beta) = edge_weights(step, e);
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                face_into(t, s, cf[c as usize] as usize, beta);
            }
        }
        let [a, b] = t.edge(e);
        s.push((a, alpha));
        s.push((b, alpha));
    }
}

/// OpenSubdiv's limit masks on `mesh` (a finest level, with effective
/// sharpness) as an `n × n` matrix: smooth and dart vertices get the smooth
/// limit stencil (quads: `4/9 v + Σ u/9 + Σ d/36`), crease vertices
/// `⅔ v + ⅙ (u_a + u_b)` over their two sharp edges, corners and vertices
/// of two faces stay. Semi-sharp features count as sharp (no blending), as
/// in OpenSubdiv's `Limit`.
pub(crate) fn limit_operator(mesh: &Mesh, par: Par) -> Result<CsrMat<f64>> {
    let t = mesh.topology();
    let es = mesh.edge_sharpness();
    let vs = mesh.vertex_sharpness();
    let n = t.num_vertices();
    let other = |e: u32, v: usize| {
        let [a, b] = t.edge(e as usize);
        if a as usize == v { b } else { a }
    };
    assemble_rows(n, n, par, |v, s| {
        let edges = t.vertex_edges(v);
        if edges.is_empty() {
            s.push((v as u32, 1.0));
            return;
        }
        let sharp = edges.iter().filter(|&&e| es[e as usize] > 0.0).count();
        match Rule::classify(vs[v], sharp) {
            Rule::Smooth | Rule::Dart => {
                let m = t.face_count(v);
                if m == 2 {
                    s.push((v as u32, 1.0));
                    return;
                }
                let (nu, eps, phi) = if m == 4 {
                    (4.0 / 9.0, 1.0 / 9.0, 1.0 / 36.0)
                } else {
                    let nn = m as f64;
                    let phi = 1.0 / (nn * (nn + 5.0));
                    let eps = 4.0 * phi;
                    (1.0 - nn * (eps + phi), eps, phi)
                };
                for &c in t.vertex_corners(v) {
                    let d = t.next_corner(t.next_corner(c as usize));
                    s.push((t.face_verts()[d], phi));
                }
                s.extend(edges.iter().map(|&e| (other(e, v), eps)));
                s.push((v as u32, nu));
            }
            Rule::Crease => {
                let mut ends = edges.iter().filter(|&&e| es[e as usize] > 0.0).map(|&e| other(e, v));
                let (ua, ub) = (ends.next().unwrap_or(v as u32), ends.next().unwrap_or(v as u32));
                s.push((ua, 1.0 / 6.0));
                s.push((ub, 1.0 / 6.0));
                s.push((v as u32, 2.0 / 3.0));
            }
            Rule::Corner => s.push((v as u32, 1.0)),
        }
    })
}
