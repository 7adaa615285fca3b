//! Eval of the lean level below the finest ([`Sqrt3Plan`](crate::Sqrt3Plan)
//! keeps the √3 split of a closed mesh so): the smooth stencils of
//! [`crate::slak`], term for term in the same order, with the child's
//! relations computed on the fly from its parent ([`Sqrt3Child`]).

use num_traits::Float;
use subla_algebra::Par;
use subla_mesh::Topology;
use subla_scheme::kernel::{axpy, for_rows, load, real};

use crate::level::Step;
use crate::split::Sqrt3Child;

/// One level of eval from the lean child `child` of `t` (rows `x`) to the
/// level above (rows `y`), row length `d`.
pub(crate) fn lean_eval<T: Float + Send + Sync>(
    t: &Topology,
    child: &Sqrt3Child,
    step: &Step,
    x: &[T],
    y: &mut [T],
    d: usize,
    par: Par,
) {
    subla_scheme::channel_groups!(d, off, D => lean_eval_impl::<T, D>(t, child, step, x, y, d, off, par));
}

#[allow(clippy::too_many_arguments)]
fn lean_eval_impl<T: Float + Send + Sync, const D: usize>(
    t: &Topology,
    child: &Sqrt3Child,
    step: &Step,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let nv = child.num_vertices();
    let nvp = t.num_vertices();
    let (yv, yn) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    // Old vertices, smoothed: `(α/n) Σ uᵢ`, then `(1 − α) v`. The child is
    // closed and has no isolated vertex.
    for_rows(yv, nv, stride, par, |r, out| {
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let acc = if v < nvp {
                smooth(step, t.face_count(v), child.parent_vertex_neighbors(t, v), v, gx)
            } else {
                smooth(step, 6, child.face_point_neighbors(t, v - nvp).into_iter(), v, gx)
            };
            put(row, acc);
        }
    });
    // Face points of the child's faces.
    let third = real::<T>(1.0 / 3.0);
    for_rows(yn, child.num_faces(), stride, par, |r, out| {
        for (row, c) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            for u in child.face(t, c) {
                axpy(&mut acc, third, gx(u));
            }
            put(row, acc);
        }
    });
}

/// The smoothed vertex `v` of valence `n`, its neighbours `nb` in order.
#[inline]
fn smooth<T: Float, const D: usize>(
    step: &Step,
    n: usize,
    nb: impl Iterator<Item = u32>,
    v: usize,
    gx: impl Fn(u32) -> [T; D],
) -> [T; D] {
    let a = step.alpha[n];
    let w = real::<T>(a / n as f64);
    let mut acc = [T::zero(); D];
    for u in nb {
        axpy(&mut acc, w, gx(u));
    }
    axpy(&mut acc, real::<T>(1.0 - a), gx(v as u32));
    acc
}
