//! Bilinear subdivision (OpenSubdiv's `SCHEME_BILINEAR`): face points are
//! face centroids, edge points edge midpoints, vertices stay. The simplest
//! quad-refining scheme, sharing the topology refinement of Catmull-Clark,
//! and a [`LevelPlan`] over [`BilinearRules`].

use num_traits::Float;
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, Topology};
use subla_scheme::kernel::{for_rows, real};
use subla_scheme::{
    ChildPoint, Counts, FinestFaces, LevelCounts, LevelPlan, LevelRules, NoLean, Prediction, Refiner, Result,
};

use crate::refine::refine_plain;

/// The bilinear scheme.
#[derive(Copy, Clone, Debug, Default)]
pub struct Bilinear;

/// A built bilinear refinement: the level stack of [`LevelPlan`] with
/// bilinear rules.
pub type BilinearPlan = LevelPlan<BilinearRules>;

/// Bilinear rules for [`LevelPlan`]: no masks (every point is a centroid
/// or a midpoint), the quad split without sharpness.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BilinearRules;

impl LevelRules for BilinearRules {
    type Step = ();
    type Lean = NoLean;
    fn name(&self) -> &'static str {
        "bilinear"
    }
    fn masks(&self, _parent: &Mesh, _level: u32, _par: Par) -> Result<()> {
        Ok(())
    }
    fn child(&self, parent: &Mesh, _step: &(), par: Par) -> Result<Mesh> {
        Ok(refine_plain(parent, par)?)
    }
    fn child_faces(&self, parent: &Mesh, _step: &(), par: Par) -> Result<FinestFaces> {
        crate::slak::finest_of(parent, par)
    }
    fn eval_level<T: Float + Send + Sync>(&self, t: &Topology, _: &(), x: &[T], y: &mut [T], d: usize, par: Par) {
        eval_level(t, x, y, d, par);
    }
    fn operator(&self, t: &Topology, _step: &(), _par: Par) -> Result<CsrMat<f64>> {
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
    fn operator_bound(&self, t: &Topology, _step: &()) -> u64 {
        (t.num_vertices() + t.num_corners() + 2 * t.num_edges()) as u64
    }
    fn child_counts(&self, p: &LevelCounts, _level: u32) -> Option<LevelCounts> {
        Some(crate::slak::quad_split_counts(p))
    }
    fn operator_bound_of_counts(&self, p: &LevelCounts, _level: u32) -> Option<u128> {
        Some(p.vertices + p.corners + 2 * p.edges)
    }
    fn child_point(&self, parent: Counts, _step: &(), row: usize) -> Option<ChildPoint> {
        ChildPoint::of_quad_split(parent.vertices, parent.faces, parent.edges, row)
    }
}

impl Refiner for Bilinear {
    type Input = Mesh;
    type Plan = BilinearPlan;
    fn name(&self) -> &'static str {
        "bilinear"
    }
    fn build(&self, input: &Mesh, levels: u32, par: Par) -> Result<BilinearPlan> {
        subla_scheme::predict(&BilinearRules, input.topology(), 0, levels)?;
        BilinearPlan::from_prepared(BilinearRules, input.clone(), 0, levels, par)
    }
    fn predict(&self, input: &Mesh, levels: u32) -> Result<Option<Prediction>> {
        subla_scheme::predict(&BilinearRules, input.topology(), 0, levels)
    }
    fn step(&self, plan: BilinearPlan, par: Par) -> Result<BilinearPlan> {
        plan.next(par)
    }
}

/// One bilinear level: vertices copied, face points the centroids (terms in
/// face order), edge points the midpoints.
fn eval_level<T: Float + Send + Sync>(t: &Topology, x: &[T], y: &mut [T], d: usize, par: Par) {
    let (nv, nf, ne) = (t.num_vertices(), t.num_faces(), t.num_edges());
    let (yv, rest) = y.split_at_mut(nv * d);
    yv.copy_from_slice(&x[..nv * d]);
    let (yf, ye) = rest.split_at_mut(nf * d);
    let half = real::<T>(0.5);
    let add = |row: &mut [T], w: T, v: u32| {
        let v = v as usize;
        for (r, &p) in row.iter_mut().zip(&x[v * d..v * d + d]) {
            *r = *r + w * p;
        }
    };
    for_rows(yf, nf, d, par, |faces, out| {
        for (f, row) in faces.zip(out.chunks_exact_mut(d)) {
            row.fill(T::zero());
            let vs = t.face(f);
            let w = T::one() / T::from(vs.len()).unwrap_or_else(T::one);
            for &v in vs {
                add(row, w, v);
            }
        }
    });
    for_rows(ye, ne, d, par, |edges, out| {
        for (e, row) in edges.zip(out.chunks_exact_mut(d)) {
            row.fill(T::zero());
            for v in t.edge(e) {
                add(row, half, v);
            }
        }
    });
}
