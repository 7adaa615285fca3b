//! The limit of cells the constant-time evaluations do not take, by
//! refining first: a sample in such a cell is passed to the child cell
//! holding it after one Catmull-Clark solid step, and on down until the
//! cell holding it is evaluated ([`cell_grid`]: regular, layered or
//! irregular), at most `max_levels` steps.
//!
//! A child of hexahedron `c` at its corner `k` is the octant of `c`'s
//! parameter cube at that corner (the refinement keeps the
//! parametrisation: a child's limit is its parent's where both are
//! evaluated, tested), so the sample's parameters in the child are
//! `J⁻¹ (x − p₀)`, with `p₀` the parent parameters of the child's vertex 0
//! and `J`'s columns those of its axes (half a signed permutation:
//! `J⁻¹ = 4 Jᵀ`). A derivative is the child's along the matching axis
//! times `±2` per level (the chain rule). Samples on an octant's border
//! go to the lower octant; the limit is continuous across it.
//!
//! The result is a matrix of samples × control points like
//! [`limit_matrix`]'s: the rows at level `l` times the steps' matrices
//! `R_{l−1} ⋯ R_0`. What is refined is the neighbourhood of the cells
//! passed down, not the whole mesh: the cells within two rings of them,
//! as a mesh of their own with their tags (every rule their descendants
//! are evaluated from reads cells within one ring of them, and a vertex of
//! that ring has all its cells in the second); the whole mesh where that
//! neighbourhood is not a valid mesh by itself. Cells that stay unevaluated
//! after `max_levels` steps are refused, naming the control cell: cells
//! whose children next to a feature are the same configuration again (a
//! sharp edge at a vertex of a layered or irregular cell) never become evaluable,
//! and
//! cells that are not hexahedra have no parameters.

use std::collections::{BTreeSet, HashMap};

use subla_algebra::{CsrMat, Par, spgemm};
use subla_scheme::kernel::assemble_rows;
use subla_scheme::{Refiner, Result, SchemeError};
use subla_volume::{Cell, CellKind, VolMesh};

use crate::limit::{CellGrid, HEX_CORNERS, LimitError, Quantity, cell_grid, limit_matrix};
use crate::rules::{cells_of, vertex_faces};
use crate::{CatmarkSolid, SolidPlan};

const DERIVS: [Quantity; 3] = [Quantity::DerivU, Quantity::DerivV, Quantity::DerivW];

/// A sample on its way down: the cell and parameters at the current
/// level, the quantity asked there and the factor of the chain rule.
#[derive(Copy, Clone, Debug)]
struct Pending {
    sample: usize,
    cell: u32,
    x: [f64; 3],
    q: Quantity,
    factor: f64,
}

/// The limit map of `samples` (control cell, `(u, v, w)`) for `q`, as
/// [`limit_matrix`], where a cell without a [`cell_grid`] is refined first
/// (see the [module docs](self)), up to `max_levels` steps (the
/// refinement is [`CatmarkSolid`]'s default; built once per level needed,
/// over the cells around those passed down).
///
/// # Errors
/// [`LimitError::NotEvaluable`] (as
/// [`SchemeError::Scheme`]'s source)
/// naming the control cell of the first sample still unevaluated after
/// `max_levels` steps, in a cell that is not a hexahedron, or past the
/// mesh's cells; [`LimitError::SingularDerivative`] naming the control
/// cell of the first derivative asked at an irregular cell's
/// extraordinary vertex (at the level where it is evaluated); the
/// refinement's errors.
pub fn limit_matrix_refined(
    m: &VolMesh,
    samples: &[(u32, [f64; 3])],
    q: Quantity,
    max_levels: u32,
    par: Par,
) -> Result<CsrMat<f64>> {
    let (r, failed) = limit_matrix_refined_partial(m, samples, q, max_levels, par)?;
    match failed.first() {
        None => Ok(r),
        Some(&(s, why)) => Err(SchemeError::scheme("catmark-solid-limit", why.error(samples[s].0))),
    }
}

/// Why a sample has no row in [`limit_matrix_refined_partial`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unevaluated {
    /// Its cell is still not evaluated after the steps allowed (or is not
    /// a hexahedron, or past the mesh's cells).
    NotEvaluable,
    /// A derivative at an irregular cell's extraordinary vertex.
    SingularDerivative,
}

impl Unevaluated {
    /// The error naming control cell `cell`.
    pub fn error(self, cell: u32) -> LimitError {
        match self {
            Unevaluated::NotEvaluable => LimitError::NotEvaluable { cell },
            Unevaluated::SingularDerivative => LimitError::SingularDerivative { cell },
        }
    }
}

/// A sample without a row: its index and why.
pub type Failed = (usize, Unevaluated);

/// The samples evaluated at one level for one quantity: the level, the
/// quantity, the samples there and their chain-rule factors.
type Group = (u32, Quantity, Vec<(u32, [f64; 3])>, Vec<f64>);

/// [`limit_matrix_refined`] for the samples it can evaluate: their rows,
/// an empty row for each of the others, and those (sample index and why),
/// in order.
///
/// # Errors
/// The refinement's errors.
pub fn limit_matrix_refined_partial(
    m: &VolMesh,
    samples: &[(u32, [f64; 3])],
    q: Quantity,
    max_levels: u32,
    par: Par,
) -> Result<(CsrMat<f64>, Vec<Failed>)> {
    let mut pending: Vec<Pending> =
        samples.iter().enumerate().map(|(sample, &(cell, x))| Pending { sample, cell, x, q, factor: 1.0 }).collect();
    // Per sample: its group (level, quantity) and row in it, if any.
    let mut place: Vec<Option<(usize, usize)>> = vec![None; samples.len()];
    let mut failed = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut plan: Option<SolidPlan> = None;
    // What is refined: the cells around those passed down (numbered
    // locally, with the local vertices' ids in the mesh), or the whole mesh.
    let mut local: Option<(VolMesh, Vec<u32>)> = None;
    let mut level = 0u32;
    while !pending.is_empty() {
        let mesh = plan.as_ref().map_or(m, |p| p.mesh(level));
        let mut grids: HashMap<u32, Option<CellGrid>> = HashMap::new();
        let mut down = Vec::new();
        for p in pending {
            let grid = grids.entry(p.cell).or_insert_with(|| {
                ((p.cell as usize) < mesh.num_cells()).then(|| cell_grid(mesh, p.cell as usize)).flatten()
            });
            if let Some(g) = grid {
                if p.q != Quantity::Position && matches!(g, CellGrid::Irregular(ig) if ig.is_singular(p.x)) {
                    failed.push((p.sample, Unevaluated::SingularDerivative));
                    continue;
                }
                let g = match groups.iter().position(|g| g.0 == level && g.1 == p.q) {
                    Some(g) => g,
                    None => {
                        groups.push((level, p.q, Vec::new(), Vec::new()));
                        groups.len() - 1
                    }
                };
                place[p.sample] = Some((g, groups[g].2.len()));
                groups[g].2.push((p.cell, p.x));
                groups[g].3.push(p.factor);
            } else if level == max_levels
                || (p.cell as usize) >= mesh.num_cells()
                || mesh.kind(p.cell as usize) != CellKind::Hexahedron
            {
                failed.push((p.sample, Unevaluated::NotEvaluable));
            } else {
                down.push(p);
            }
        }
        if down.is_empty() {
            break;
        }
        level += 1;
        if level == 1 {
            let mut bad: Vec<u32> = down.iter().map(|p| p.cell).collect();
            bad.sort_unstable();
            bad.dedup();
            if let Some((lm, cells, vertices)) = neighbourhood(m, &bad) {
                for p in &mut down {
                    p.cell = cells[&p.cell];
                }
                local = Some((lm, vertices));
            }
        }
        let refined = local.as_ref().map_or(m, |l| &l.0);
        plan = Some(CatmarkSolid::default().build(refined, level, par)?);
        let plan = plan.as_ref().expect("built");
        let (parent, child) = (plan.mesh(level - 1), plan.mesh(level));
        // The first child of each parent cell: one per cell corner.
        let mut first = Vec::with_capacity(parent.num_cells() + 1);
        first.push(0u32);
        for c in 0..parent.num_cells() {
            first.push(first[c] + parent.cell_vertices(c).len() as u32);
        }
        pending = down.into_iter().map(|p| descend(parent, child, &first, p)).collect();
    }
    failed.sort_unstable_by_key(|f| f.0);
    // Each group's rows over its level's points, then over the control
    // points through the steps' matrices.
    let mut composed: Vec<Option<CsrMat<f64>>> = vec![None; level as usize + 1];
    let mut mats = Vec::with_capacity(groups.len());
    for (l, gq, s, _) in &groups {
        if *l == 0 {
            mats.push(limit_matrix(m, s, *gq, par)?);
            continue;
        }
        let mesh = plan.as_ref().expect("a level past 0 was built").mesh(*l);
        let rows = limit_matrix(mesh, s, *gq, par)?;
        let ops = plan.as_ref().expect("a level past 0 was built").operators();
        for k in 1..=*l as usize {
            if composed[k].is_none() {
                let r = &ops[k - 1];
                let next = match &composed[k - 1] {
                    None => r.clone(),
                    Some(prev) => spgemm::product(r.as_ref(), prev.as_ref(), par)?,
                };
                composed[k] = Some(next);
            }
        }
        let to_control = composed[*l as usize].as_ref().expect("composed above");
        mats.push(spgemm::product(rows.as_ref(), to_control.as_ref(), par)?);
    }
    let r = assemble_rows(samples.len(), m.num_vertices(), par, |r, st| {
        if let Some((g, i)) = place[r] {
            let f = groups[g].3[i];
            let (cols, ws) = mats[g].row(i);
            // Rows refined locally are over the local vertices.
            let to_mesh = |c: u32| match &local {
                Some((_, vertices)) if groups[g].0 > 0 => vertices[c as usize],
                _ => c,
            };
            st.extend(cols.iter().zip(ws).map(|(&c, &w)| (to_mesh(c), f * w)));
        }
    })?;
    Ok((r, failed))
}

/// What [`limit_matrix_refined`] refines when the samples' cells that are
/// not evaluated as they are are `cells`: the mesh of the cells within two
/// rings of them, or `None` where it refines the whole mesh. For
/// predicting its size ([`predict_counts`](crate::predict_counts)) before
/// any work.
pub fn refined_region(m: &VolMesh, cells: &[u32]) -> Option<VolMesh> {
    neighbourhood(m, cells).map(|n| n.0)
}

/// The cells within two rings of `cells` (sharing a vertex with a cell
/// that shares one with them) as a mesh of their own, with the tags among
/// them: the map from their ids in `m` to the local ones, and each local
/// vertex's id in `m`. Every rule whose points the descendants of `cells`
/// are evaluated from reads only cells within one ring of them (the
/// octants' grids, Stam's rings and the irregular supports reach half a
/// cell beyond a child, one for a layered child's ring), and a vertex of
/// the first ring has all its cells in the second, so the refined points
/// there are those of the whole mesh. `None` where the neighbourhood is
/// the whole mesh or is not a valid mesh by itself (two of its cells
/// meeting at a vertex only, say): then the whole mesh is refined.
fn neighbourhood(m: &VolMesh, cells: &[u32]) -> Option<(VolMesh, HashMap<u32, u32>, Vec<u32>)> {
    let star = |cells: &BTreeSet<u32>| -> BTreeSet<u32> {
        cells
            .iter()
            .flat_map(|&c| m.cell_vertices(c as usize).iter().flat_map(|&v| cells_of(m, &vertex_faces(m, v as usize))))
            .collect()
    };
    let around = star(&star(&cells.iter().copied().collect()));
    if around.len() == m.num_cells() {
        return None;
    }
    let mut ids: HashMap<u32, u32> = HashMap::new();
    let mut vertices = Vec::new();
    let mut id = |v: u32| {
        *ids.entry(v).or_insert_with(|| {
            vertices.push(v);
            vertices.len() as u32 - 1
        })
    };
    let local: Vec<Cell> = around
        .iter()
        .map(|&c| match m.cell(c as usize) {
            Cell::Tetra(v) => Cell::Tetra(v.map(&mut id)),
            Cell::Hexahedron(v) => Cell::Hexahedron(v.map(&mut id)),
            Cell::Wedge(v) => Cell::Wedge(v.map(&mut id)),
            Cell::Pyramid(v) => Cell::Pyramid(v.map(&mut id)),
            Cell::Polyhedron(faces) => {
                Cell::Polyhedron(faces.into_iter().map(|f| f.into_iter().map(&mut id).collect()).collect())
            }
        })
        .collect();
    let mesh = VolMesh::from_cells(vertices.len(), &local).ok()?;
    let mesh = if m.has_features() {
        let has_edge =
            |a: u32, b: u32| mesh.vertex_edges(a as usize).iter().any(|&e| mesh.edge(e as usize).contains(&b));
        let sharp: Vec<[u32; 2]> = m
            .sharp_edges()
            .filter_map(|e| {
                let [a, b] = m.edge(e as usize);
                let (a, b) = (*ids.get(&a)?, *ids.get(&b)?);
                has_edge(a, b).then_some([a, b])
            })
            .collect();
        let corners: Vec<u32> = m.corners().filter_map(|v| ids.get(&v).copied()).collect();
        mesh.with_features(&sharp, &corners).ok()?
    } else {
        mesh
    };
    let cells = around.iter().enumerate().map(|(i, &c)| (c, i as u32)).collect();
    Some((mesh, cells, vertices))
}

/// The parameters in hexahedron `cell` of `parent` of child point `r` of
/// one split (vertex, edge, face and cell points numbered in that order),
/// from `corner`, the parameters of the cell's vertices: a vertex point's
/// own, an edge or face point's the mean of its vertices', the cell
/// point's `(½, ½, ½)`. `None` for a point of another cell.
pub(crate) fn child_param(
    parent: &VolMesh,
    cell: u32,
    r: u32,
    corner: impl Fn(u32) -> Option<[f64; 3]>,
) -> Option<[f64; 3]> {
    let (nv, ne, nf) = (parent.num_vertices(), parent.num_edges(), parent.num_faces());
    let mean = |vs: &[u32]| -> Option<[f64; 3]> {
        let ps: Vec<[f64; 3]> = vs.iter().map(|&v| corner(v)).collect::<Option<_>>()?;
        Some(std::array::from_fn(|a| ps.iter().map(|p| p[a]).sum::<f64>() / ps.len() as f64))
    };
    let r = r as usize;
    if r < nv {
        corner(r as u32)
    } else if r < nv + ne {
        mean(&parent.edge(r - nv))
    } else if r < nv + ne + nf {
        mean(parent.face(r - nv - ne))
    } else {
        (r - nv - ne - nf == cell as usize).then_some([0.5; 3])
    }
}

/// `p` passed from hexahedron `p.cell` of `parent` to the child holding
/// its parameters in `child` (children numbered from `first[cell]`, one
/// per corner in the cell's vertex order).
fn descend(parent: &VolMesh, child: &VolMesh, first: &[u32], p: Pending) -> Pending {
    let corners = parent.cell_vertices(p.cell as usize);
    let param = |v: u32| Some(HEX_CORNERS[corners.iter().position(|&u| u == v)?].map(f64::from));
    let of_child = |r: u32| child_param(parent, p.cell, r, param).expect("a child point of the cell");
    let octant: [bool; 3] = p.x.map(|t| t > 0.5);
    let k =
        HEX_CORNERS.iter().position(|c| (0..3).all(|a| (c[a] == 1) == octant[a])).expect("every octant is a corner");
    let ch = first[p.cell as usize] + k as u32;
    let cv = child.cell_vertices(ch as usize);
    let p0 = of_child(cv[0]);
    // J⁻¹ = 4 Jᵀ: row i is axis i of the child (to its vertices 1, 3, 4).
    let jinv: [[f64; 3]; 3] = std::array::from_fn(|i| {
        let e = of_child(cv[[1, 3, 4][i]]);
        std::array::from_fn(|a| 4.0 * (e[a] - p0[a]))
    });
    let x: [f64; 3] =
        std::array::from_fn(|i| (0..3).map(|a| jinv[i][a] * (p.x[a] - p0[a])).sum::<f64>().clamp(0.0, 1.0));
    let (q, factor) = match DERIVS.iter().position(|&d| d == p.q) {
        None => (p.q, p.factor),
        Some(a) => {
            let i = (0..3).find(|&i| jinv[i][a] != 0.0).expect("a signed permutation");
            (DERIVS[i], p.factor * jinv[i][a])
        }
    };
    Pending { sample: p.sample, cell: ch, x, q, factor }
}
