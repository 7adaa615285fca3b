//! Catmull-Clark with specialised kernels (the "SLAK" path of Mlakar et al.
//! 2020, §4): face points (Alg. 4), edge points and vertex points as
//! gathers over the topology — every output row written by one task, so
//! results are deterministic — followed by the overwrite pass for sharp
//! and boundary elements (§5.1, §5.3). Quad faces (every level after the
//! first) take the fixed-order-4 paths of §4.4.

use std::ops::Range;

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::par::even_ranges;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::{Plan, Refiner, Result, SchemeError};

use crate::level::{EdgeMask, Step, VertexMask, build_step, prepare};

/// Catmull-Clark subdivision through the specialised kernels.
#[derive(Copy, Clone, Debug, Default)]
pub struct CatmarkSlak;

/// A built Catmull-Clark refinement (static mode: all levels).
#[derive(Clone, Debug)]
pub struct CatmarkPlan {
    /// Meshes of levels `0..=L`, with effective sharpness.
    pub(crate) meshes: Vec<Mesh>,
    /// Masks of each step `l → l+1`.
    pub(crate) steps: Vec<Step>,
}

impl Refiner for CatmarkSlak {
    type Input = Mesh;
    type Plan = CatmarkPlan;
    fn name(&self) -> &'static str {
        "catmark-slak"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<CatmarkPlan> {
        let mut meshes = Vec::with_capacity(levels as usize + 1);
        let mut steps = Vec::with_capacity(levels as usize);
        meshes.push(prepare(input)?);
        for l in 0..levels as usize {
            let (step, child) = build_step(&meshes[l], par)?;
            steps.push(step);
            meshes.push(child);
        }
        Ok(CatmarkPlan { meshes, steps })
    }
    fn step(&self, mut plan: CatmarkPlan, par: Par) -> Result<CatmarkPlan> {
        let finest = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        drop(plan);
        let (step, child) = build_step(&finest, par)?;
        Ok(CatmarkPlan { meshes: vec![finest, child], steps: vec![step] })
    }
}

/// Rows `range` of `data` (row length `d`) split off as one piece per range.
fn split_rows<'a, T>(mut data: &'a mut [T], ranges: &[Range<usize>], d: usize) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (head, tail) = data.split_at_mut(r.len() * d);
        out.push(head);
        data = tail;
    }
    out
}

/// Runs `f(range, rows)` over `n` rows of width `d` in `out`, in parallel
/// blocks when `par` allows.
fn for_rows<T: Send>(out: &mut [T], n: usize, d: usize, par: Par, f: impl Fn(Range<usize>, &mut [T]) + Sync) {
    let ranges = even_ranges(n, par.blocks(n, 2048));
    if ranges.len() <= 1 {
        f(0..n, out);
        return;
    }
    let pieces = split_rows(out, &ranges, d);
    ranges.into_par_iter().zip(pieces).for_each(|(r, p)| f(r, p));
}

#[inline(always)]
fn axpy<T: Float>(acc: &mut [T], w: T, x: &[T]) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a = *a + w * b;
    }
}

/// The specials with element index in `r`.
fn specials_in<'a, M>(list: &'a [M], r: &Range<usize>, key: impl Fn(&M) -> u32) -> &'a [M] {
    let a = list.partition_point(|m| (key(m) as usize) < r.start);
    let b = list.partition_point(|m| (key(m) as usize) < r.end);
    &list[a..b]
}

/// One level of eval: `x` (parent rows) → `y` (child rows), row length `d`,
/// with the row length known at compile time for 1 to 4 channels.
pub(crate) fn eval_level<T: Float + Send + Sync>(t: &Topology, step: &Step, x: &[T], y: &mut [T], d: usize, par: Par) {
    match d {
        1 => eval_level_impl::<T, 1>(t, step, x, y, d, par),
        2 => eval_level_impl::<T, 2>(t, step, x, y, d, par),
        3 => eval_level_impl::<T, 3>(t, step, x, y, d, par),
        4 => eval_level_impl::<T, 4>(t, step, x, y, d, par),
        _ => eval_level_impl::<T, 0>(t, step, x, y, d, par),
    }
}

fn eval_level_impl<T: Float + Send + Sync, const D: usize>(
    t: &Topology,
    step: &Step,
    x: &[T],
    y: &mut [T],
    d: usize,
    par: Par,
) {
    // A constant row length lets the compiler unroll the channel loops.
    let d = if D == 0 { d } else { D };
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let (yv, rest) = y.split_at_mut(nv * d);
    let (yf, ye) = rest.split_at_mut(nf * d);
    let quads = t.is_quad_only();
    let fptr = t.face_ptr();
    let fverts = t.face_verts();
    // Face points (Alg. 4; fixed order 4 for quad meshes, §4.4).
    for_rows(yf, nf, d, par, |r, out| {
        let quarter = T::from(0.25).unwrap_or_else(T::one);
        for (row, f) in out.chunks_exact_mut(d).zip(r) {
            row.fill(T::zero());
            if quads {
                let vs = &fverts[4 * f..4 * f + 4];
                for &v in vs {
                    axpy(row, quarter, &x[v as usize * d..v as usize * d + d]);
                }
            } else {
                let vs = &fverts[fptr[f] as usize..fptr[f + 1] as usize];
                let w = T::one() / T::from(vs.len()).unwrap_or_else(T::one);
                for &v in vs {
                    axpy(row, w, &x[v as usize * d..v as usize * d + d]);
                }
            }
        }
    });
    let yf: &[T] = yf;
    // Edge points: default mask, then the special ones.
    let cf = t.corner_faces();
    for_rows(ye, ne, d, par, |r, out| {
        let quarter = T::from(0.25).unwrap_or_else(T::one);
        let specials = specials_in(&step.edges, &r, |m: &EdgeMask| m.edge);
        let mut next_special = 0;
        for (row, e) in out.chunks_exact_mut(d).zip(r) {
            row.fill(T::zero());
            let [a, b] = t.edge(e);
            let corners = t.edge_corners(e);
            let (alpha, beta) = if next_special < specials.len() && specials[next_special].edge as usize == e {
                let m = specials[next_special];
                next_special += 1;
                (T::from(m.alpha).unwrap_or_else(T::zero), T::from(m.beta).unwrap_or_else(T::zero))
            } else {
                (quarter, quarter)
            };
            if beta != T::zero() {
                for &c in corners {
                    let f = cf[c as usize] as usize;
                    axpy(row, beta, &yf[f * d..f * d + d]);
                }
            }
            axpy(row, alpha, &x[a as usize * d..a as usize * d + d]);
            axpy(row, alpha, &x[b as usize * d..b as usize * d + d]);
        }
    });
    // Vertex points: smooth mask (faces, then edges, then the vertex), and
    // the special masks.
    for_rows(yv, nv, d, par, |r, out| {
        let specials = specials_in(&step.vertices, &r, |m: &VertexMask| m.vertex);
        let mut next_special = 0;
        for (row, v) in out.chunks_exact_mut(d).zip(r) {
            row.fill(T::zero());
            let special = if next_special < specials.len() && specials[next_special].vertex as usize == v {
                next_special += 1;
                Some(specials[next_special - 1])
            } else {
                None
            };
            let n = t.valence(v);
            let (cv, cs, ce) = match special {
                Some(m) => (m.cv, m.cs, m.ce),
                None => (if n > 0 { (n as f64 - 2.0) / n as f64 } else { 1.0 }, 1.0, 0.0),
            };
            if cs != 0.0 && n > 0 {
                let w = T::from(cs / (n * n) as f64).unwrap_or_else(T::zero);
                for &c in t.vertex_corners(v) {
                    let f = cf[c as usize] as usize;
                    axpy(row, w, &yf[f * d..f * d + d]);
                }
                for u in t.vertex_neighbors(v) {
                    axpy(row, w, &x[u as usize * d..u as usize * d + d]);
                }
            }
            if let Some(m) = special {
                if ce != 0.0 {
                    let w = T::from(ce).unwrap_or_else(T::zero);
                    axpy(row, w, &x[m.ua as usize * d..m.ua as usize * d + d]);
                    axpy(row, w, &x[m.ub as usize * d..m.ub as usize * d + d]);
                }
            }
            axpy(row, T::from(cv).unwrap_or_else(T::zero), &x[v * d..v * d + d]);
        }
    });
}

/// The matrix `R` of one level (Mlakar et al. 2020, §6.3, Fig. 5).
pub(crate) fn level_operator(t: &Topology, step: &Step) -> Result<CsrMat<f64>> {
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let mut trips: Vec<(usize, usize, f64)> = Vec::with_capacity(nv * 9 + t.num_corners() + ne * 6);
    let face_into = |trips: &mut Vec<(usize, usize, f64)>, row: usize, f: usize, w: f64| {
        let vs = t.face(f);
        let wf = w / vs.len() as f64;
        for &v in vs {
            trips.push((row, v as usize, wf));
        }
    };
    let mut vi = 0;
    for v in 0..nv {
        let n = t.valence(v);
        let special = if vi < step.vertices.len() && step.vertices[vi].vertex as usize == v {
            vi += 1;
            Some(step.vertices[vi - 1])
        } else {
            None
        };
        let (cv, cs, ce) = match special {
            Some(m) => (m.cv, m.cs, m.ce),
            None => (if n > 0 { (n as f64 - 2.0) / n as f64 } else { 1.0 }, 1.0, 0.0),
        };
        if cs != 0.0 && n > 0 {
            let w = cs / (n * n) as f64;
            for &c in t.vertex_corners(v) {
                face_into(&mut trips, v, t.corner_faces()[c as usize] as usize, w);
            }
            for u in t.vertex_neighbors(v) {
                trips.push((v, u as usize, w));
            }
        }
        if let Some(m) = special {
            if ce != 0.0 {
                trips.push((v, m.ua as usize, ce));
                trips.push((v, m.ub as usize, ce));
            }
        }
        trips.push((v, v, cv));
    }
    for f in 0..nf {
        face_into(&mut trips, nv + f, f, 1.0);
    }
    let mut ei = 0;
    for e in 0..ne {
        let (alpha, beta) = if ei < step.edges.len() && step.edges[ei].edge as usize == e {
            ei += 1;
            (step.edges[ei - 1].alpha, step.edges[ei - 1].beta)
        } else {
            (0.25, 0.25)
        };
        let row = nv + nf + e;
        let [a, b] = t.edge(e);
        trips.push((row, a as usize, alpha));
        trips.push((row, b as usize, alpha));
        if beta != 0.0 {
            for &c in t.edge_corners(e) {
                face_into(&mut trips, row, t.corner_faces()[c as usize] as usize, beta);
            }
        }
    }
    Ok(CsrMat::try_from_triplets(nv + nf + ne, nv, &trips)?)
}

impl CatmarkPlan {
    fn eval_generic<T: Float + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        subla_scheme::check_eval_shapes(self, "catmark", control.dim(), out.dim());
        let d = control.ncols();
        let mut cur: Vec<T> = control.as_standard_layout().iter().copied().collect();
        for (l, step) in self.steps.iter().enumerate() {
            let t = self.meshes[l].topology();
            let mut next = vec![T::zero(); self.level_len(l as u32 + 1) * d];
            if d > 0 {
                eval_level(t, step, &cur, &mut next, d, par);
            }
            cur = next;
        }
        match ArrayView2::from_shape((self.output_len(), d), &cur) {
            Ok(v) => out.assign(&v),
            Err(e) => unreachable!("output rows have the planned size: {e}"),
        }
    }
}

impl Plan for CatmarkPlan {
    fn levels(&self) -> u32 {
        self.steps.len() as u32
    }
    fn level_len(&self, level: u32) -> usize {
        self.meshes.get(level as usize).map_or(0, |m| m.num_vertices())
    }
    fn eval_f64(&self, control: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn eval_f32(&self, control: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>, par: Par) {
        self.eval_generic(control, out, par);
    }
    fn operator(&self, level: u32) -> Result<CsrMat<f64>> {
        let step = self.steps.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })?;
        level_operator(self.meshes[level as usize].topology(), step)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        self.meshes.get(level as usize)
    }
}
