//! Loop as sparse matrices: the refinement matrix `R_i` of one level built
//! directly from the topology and the masks (Mlakar et al. 2020, §6.3),
//! and OpenSubdiv's Loop limit masks as a matrix.
//!
//! Rows are written block by block in parallel, each row by one task: its
//! stencil is gathered in the order eval accumulates it, then sorted by
//! column with duplicates summed (a crease end is also a neighbour), so
//! rows are sorted and the result does not depend on the thread count.

use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::Result;
use subla_scheme::kernel::assemble_rows;

use crate::level::{EdgeMask, Step, VertexMask};
use crate::rules::{EDGE_END, EDGE_OPPOSITE, Rule, limit_weights};

/// The special mask of vertex `v`, if any.
pub(crate) fn vertex_mask(step: &Step, v: usize) -> Option<VertexMask> {
    step.vertices.binary_search_by_key(&(v as u32), |m| m.vertex).ok().map(|i| step.vertices[i])
}

/// The special mask of edge `e`, if any.
pub(crate) fn edge_mask(step: &Step, e: usize) -> Option<EdgeMask> {
    step.edges.binary_search_by_key(&(e as u32), |m| m.edge).ok().map(|i| step.edges[i])
}

/// The corner opposite the edge leaving corner `c` in its triangle (the
/// corner two places on, OpenSubdiv's `eInFace + 2`).
#[inline]
pub(crate) fn opposite_corner(c: u32) -> u32 {
    3 * (c / 3) + (c % 3 + 2) % 3
}

/// The vertex opposite the edge leaving corner `c` in its triangle.
#[inline]
pub(crate) fn opposite(t: &Topology, c: u32) -> u32 {
    t.face_verts()[opposite_corner(c) as usize]
}

/// The matrix `R` of one level (§6.3): rows are the child's vertices
/// (updated vertices, then edge points), columns the parent's. Each row
/// holds the stencil that eval applies.
pub(crate) fn level_operator(t: &Topology, step: &Step, par: Par) -> Result<CsrMat<f64>> {
    let (nv, ne) = (t.num_vertices(), t.num_edges());
    assemble_rows(nv + ne, nv, par, |row, s| {
        if row < nv {
            let v = row;
            let (cv, cn) = match vertex_mask(step, v) {
                Some(m) => {
                    if m.ce != 0.0 {
                        s.push((m.ua, m.ce));
                        s.push((m.ub, m.ce));
                    }
                    (m.cv, m.cn)
                }
                None => {
                    let [w, e] = step.smooth[t.valence(v)];
                    (w, e)
                }
            };
            if cn != 0.0 {
                s.extend(t.vertex_neighbors(v).map(|u| (u, cn)));
            }
            s.push((v as u32, cv));
        } else {
            let e = row - nv;
            let (alpha, beta) = edge_mask(step, e).map_or((EDGE_END, EDGE_OPPOSITE), |m| (m.alpha, m.beta));
            let [a, b] = t.edge(e);
            s.push((a, alpha));
            s.push((b, alpha));
            if beta != 0.0 {
                s.extend(t.edge_corners(e).iter().map(|&c| (opposite(t, c), beta)));
            }
        }
    })
}

/// OpenSubdiv's Loop limit masks on `mesh` (a finest level, with effective
/// sharpness) as an `n × n` matrix: smooth and dart vertices get
/// `(1 − nε) v + ε Σ uᵢ` ([`crate::rules::limit_weights`]), crease vertices
/// `⅔ v + ⅙ (u_a + u_b)` over their two sharp edges, corners and isolated
/// vertices stay. Semi-sharp features count as sharp (no blending), as in
/// OpenSubdiv's `Limit`.
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
                if m != edges.len() {
                    // Unreachable on prepared levels (such vertices are sharp).
                    s.push((v as u32, 1.0));
                    return;
                }
                let [nu, eps] = limit_weights(m);
                s.extend(edges.iter().map(|&e| (other(e, v), eps)));
                s.push((v as u32, nu));
            }
            Rule::Crease => {
                let mut ends = edges.iter().filter(|&&e| es[e as usize] > 0.0).map(|&e| other(e, v));
                let (ua, ub) = (ends.next().unwrap_or(v as u32), ends.next().unwrap_or(v as u32));
                s.push((ua, 1.0 / 6.0));
                s.push((ub, 1.0 / 6.0));
                s.push((v as u32, 4.0 / 6.0));
            }
            Rule::Corner => s.push((v as u32, 1.0)),
        }
    })
}
