//! Bilinear subdivision (OpenSubdiv's `SCHEME_BILINEAR`): face points are
//! face centroids, edge points edge midpoints, vertices stay. The simplest
//! quad-refining scheme, sharing the topology refinement of Catmull-Clark.

use ndarray::{ArrayView2, ArrayViewMut2};
use num_traits::Float;
use rayon::prelude::*;
use subla_algebra::{CsrMat, Par};
use subla_mesh::Mesh;
use subla_scheme::{Plan, Refiner, Result, SchemeError};

use crate::refine::refine_plain;

/// The bilinear scheme.
#[derive(Copy, Clone, Debug, Default)]
pub struct Bilinear;

/// A built bilinear refinement: the meshes of every level.
#[derive(Clone, Debug)]
pub struct BilinearPlan {
    meshes: Vec<Mesh>,
}

impl Refiner for Bilinear {
    type Input = Mesh;
    type Plan = BilinearPlan;
    fn name(&self) -> &'static str {
        "bilinear"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<BilinearPlan> {
        let mut meshes = Vec::with_capacity(levels as usize + 1);
        meshes.push(input.clone());
        for l in 0..levels as usize {
            let next = refine_plain(&meshes[l], par)?;
            meshes.push(next);
        }
        Ok(BilinearPlan { meshes })
    }
    fn step(&self, mut plan: BilinearPlan, par: Par) -> Result<BilinearPlan> {
        let finest = plan.meshes.pop().ok_or(SchemeError::NoSuchLevel { level: 0, levels: 0 })?;
        let next = refine_plain(&finest, par)?;
        Ok(BilinearPlan { meshes: vec![finest, next] })
    }
}

impl BilinearPlan {
    fn level_mesh(&self, level: u32) -> Result<&Mesh> {
        self.meshes.get(level as usize).ok_or(SchemeError::NoSuchLevel { level, levels: self.levels() })
    }

    fn eval_generic<T: Float + Send + Sync>(
        &self,
        control: ArrayView2<'_, T>,
        mut out: ArrayViewMut2<'_, T>,
        par: Par,
    ) {
        subla_scheme::check_eval_shapes(self, "bilinear", control.dim(), out.dim());
        let d = control.ncols();
        let mut cur: Vec<T> = control.as_standard_layout().iter().copied().collect();
        for l in 0..self.levels() as usize {
            let t = self.meshes[l].topology();
            let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
            let mut next = vec![T::zero(); (nv + nf + ne) * d];
            let x = &cur;
            let (vpart, rest) = next.split_at_mut(nv * d);
            vpart.copy_from_slice(&x[..nv * d]);
            let (fpart, epart) = rest.split_at_mut(nf * d);
            let face = |(f, row): (usize, &mut [T])| {
                let vs = t.face(f);
                let w = T::one() / T::from(vs.len()).unwrap_or_else(T::one);
                for &v in vs {
                    let v = v as usize;
                    for (r, &p) in row.iter_mut().zip(&x[v * d..v * d + d]) {
                        *r = *r + w * p;
                    }
                }
            };
            let half = T::from(0.5).unwrap_or_else(T::one);
            let edge = |(e, row): (usize, &mut [T])| {
                for v in t.edge(e) {
                    let v = v as usize;
                    for (r, &p) in row.iter_mut().zip(&x[v * d..v * d + d]) {
                        *r = *r + half * p;
                    }
                }
            };
            if d > 0 {
                if par == Par::Rayon {
                    fpart.par_chunks_mut(d).enumerate().with_min_len(1024).for_each(face);
                    epart.par_chunks_mut(d).enumerate().with_min_len(1024).for_each(edge);
                } else {
                    fpart.chunks_mut(d).enumerate().for_each(face);
                    epart.chunks_mut(d).enumerate().for_each(edge);
                }
            }
            cur = next;
        }
        let cur = ndarray::ArrayView2::from_shape((self.output_len(), d), &cur).unwrap_or_else(|e| unreachable!("{e}"));
        out.assign(&cur);
    }
}

impl Plan for BilinearPlan {
    fn levels(&self) -> u32 {
        (self.meshes.len() - 1) as u32
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
    fn operator(&self, level: u32, _par: Par) -> Result<CsrMat<f64>> {
        if level >= self.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.levels() });
        }
        let t = self.level_mesh(level)?.topology();
        let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
        let mut trips = Vec::with_capacity(nv + t.num_corners() + 2 * ne);
        for v in 0..nv {
            trips.push((v, v, 1.0));
        }
        for f in 0..nf {
            let vs = t.face(f);
            for &v in vs {
                trips.push((nv + f, v as usize, 1.0 / vs.len() as f64));
            }
        }
        for e in 0..ne {
            let [a, b] = t.edge(e);
            trips.push((nv + nf + e, a as usize, 0.5));
            trips.push((nv + nf + e, b as usize, 0.5));
        }
        Ok(CsrMat::try_from_triplets(nv + nf + ne, nv, &trips)?)
    }
    fn refined(&self, level: u32) -> Option<&Mesh> {
        self.meshes.get(level as usize)
    }
}
