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
//! Layered and irregular cells (extraordinary edges; Stam's eigenstructure
//! and the local volumetric subdivision matrix) and regular cells at the
//! boundary are not evaluated yet: they are refused, naming the cell.

use std::collections::HashMap;

use subla_algebra::{CsrMat, Par};
use subla_scheme::kernel::assemble_rows;
use subla_scheme::{Result, SchemeError};
use subla_volume::{CellKind, NONE, VolMesh};

/// The twelve edges of a VTK hexahedron, as local vertex pairs.
const HEX_EDGES: [(usize, usize); 12] =
    [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)];
/// The grid offsets of a VTK hexahedron's vertices.
const HEX_CORNERS: [[i32; 3]; 8] =
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];

/// The 64 control points of cell `c` (entry `i + 4j + 16k`), where `c` is a
/// hexahedron inside a regular grid: the 27 hexahedra around it (reached
/// across faces) form a 3 × 3 × 3 block whose 64 vertices are distinct
/// and consistently placed, and none of its vertices is on the boundary.
/// `None` otherwise.
pub fn regular_grid(m: &VolMesh, c: usize) -> Option<[u32; 64]> {
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
                // A boundary face inside the block: not a regular grid.
                return None;
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
    if placed.len() != 27 || at.len() != 64 {
        return None;
    }
    // Every control point's cells are in the block: no vertex of the 3 × 3
    // × 3 block's interior 2 × 2 × 2 core touches the boundary, and the
    // core's vertices have eight cells each (checked through the edges:
    // six, each of four faces).
    for (&v, p) in &at {
        let core = p.iter().all(|&x| (1..=2).contains(&x));
        if core && (m.is_boundary_vertex(v as usize) || m.vertex_edges(v as usize).len() != 6) {
            return None;
        }
    }
    let mut out = [0u32; 64];
    for (p, &v) in &grid {
        out[(p[0] + 4 * p[1] + 16 * p[2]) as usize] = v;
    }
    Some(out)
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
/// of samples × control points, each row the tricubic weights over the
/// cell's 64 control points.
///
/// # Errors
/// [`SchemeError::Unsupported`] naming the first cell (by index) that is
/// not a regular interior hexahedron, or past the mesh's cells: boundary,
/// layered and irregular cells are not evaluated yet (refine the mesh so
/// that the samples fall in regular cells).
pub fn limit_matrix(m: &VolMesh, samples: &[(u32, [f64; 3])], q: Quantity, par: Par) -> Result<CsrMat<f64>> {
    let mut cells: Vec<u32> = samples.iter().map(|s| s.0).collect();
    cells.sort_unstable();
    cells.dedup();
    let mut grids: HashMap<u32, [u32; 64]> = HashMap::with_capacity(cells.len());
    for &c in &cells {
        let g = (c as usize) < m.num_cells();
        match g.then(|| regular_grid(m, c as usize)).flatten() {
            Some(g) => {
                grids.insert(c, g);
            }
            None => {
                return Err(SchemeError::Unsupported {
                    scheme: "catmark-solid-limit",
                    feature: "a cell that is not a regular interior hexahedron (boundary, layered and irregular cells are not evaluated yet)",
                    element: format!("cell {c}"),
                    supported_by: "no path yet: refine first, and sample the regular cells",
                });
            }
        }
    }
    assemble_rows(samples.len(), m.num_vertices(), par, |r, s| {
        let (c, uvw) = samples[r];
        let g = &grids[&c];
        let w = tricubic_weights(uvw, q);
        s.extend(g.iter().zip(w).map(|(&v, w)| (v, w)));
    })
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
        let t = |i: usize| if k > 1 { i as f64 / (k - 1) as f64 } else { 0.5 };
        let samples = cells
            .into_iter()
            .flat_map(|c| {
                (0..k).flat_map(move |l| (0..k).flat_map(move |j| (0..k).map(move |i| (c, [t(i), t(j), t(l)]))))
            })
            .collect();
        SolidLimit { samples, quantity }
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
    fn eval_t<T: subla_algebra::Scalar>(
        &self,
        control: ndarray::ArrayView2<'_, T>,
        out: ndarray::ArrayViewMut2<'_, T>,
        weight: impl Fn(f64) -> T + Sync,
        par: Par,
    ) -> Result<()> {
        assert_eq!(control.nrows(), self.inputs, "catmark-solid-limit: control rows");
        subla_algebra::spmv::spmv_csr_into(
            self.op.as_ref(),
            control,
            out,
            subla_algebra::spmv::Update::Set,
            |&w, _, _| weight(w),
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
        self.eval_t(control, out, |w| w, par)
    }
    fn eval_f32(
        &self,
        control: ndarray::ArrayView2<'_, f32>,
        out: ndarray::ArrayViewMut2<'_, f32>,
        par: Par,
    ) -> Result<()> {
        self.eval_t(control, out, |w| w as f32, par)
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
