//! The lean form of the level below the finest ([`LevelRules::lean`]):
//! where that level is a smooth closed manifold, its connectivity is never
//! built. Eval of the last step and the finest faces read it through its
//! parent's split numbering ([`TriChild`], with Loop's [`ChildStencils`]),
//! which costs a quarter of the memory the level's own connectivity
//! would.
//!
//! [`LevelRules::lean`]: subla_scheme::LevelRules::lean

use num_traits::Float;
use subla_algebra::Par;
use subla_algebra::mem::try_filled_vec;
use subla_mesh::{Mesh, Topology, TriChild};
use subla_scheme::kernel::{axpy, for_rows, load, real};
use subla_scheme::{FinestFaces, Result};

use crate::level::Step;
use crate::rules::{EDGE_END, EDGE_OPPOSITE, vertex_weight_table};
use crate::split::check_triangles;
use crate::stencil::ChildStencils;

/// The child of `parent` in lean form with the masks of the step above it,
/// where every mask of that step is the smooth one: `parent` is a closed
/// manifold (no boundary, non-manifold, isolated or repeated vertex) with
/// no sharpness and no holes, and no two of its triangles share two edges.
/// Its child is then one too, with the same rules.
///
/// # Errors
/// As [`crate::split::split_triangles`].
pub(crate) fn lean(parent: &Mesh, par: Par) -> Result<Option<(TriChild, Step)>> {
    let t = parent.topology();
    check_triangles(t)?;
    let smooth = !parent.has_sharpness()
        && !parent.has_holes()
        && t.vertex_tags().iter().all(|&g| g == 0)
        && t.edge_tags().iter().all(|&g| g == 0);
    if !smooth {
        return Ok(None);
    }
    let Some(child) = t.tri_child(par)? else { return Ok(None) };
    // The child's valences: its parent vertices keep theirs, its edge
    // points (each on two triangles) have six.
    let parents = (0..t.num_vertices()).map(|v| t.valence(v)).max().unwrap_or(0);
    let max_valence = if t.num_edges() > 0 { parents.max(6) } else { parents };
    let step = Step { edges: Vec::new(), vertices: Vec::new(), smooth: vertex_weight_table(max_valence) };
    Ok(Some((child, step)))
}

/// The faces of the level above the lean child `child` of `parent`.
pub(crate) fn lean_faces(parent: &Mesh, child: &TriChild, par: Par) -> Result<FinestFaces> {
    let faces = child.split_faces(parent.topology(), par)?;
    let holes = try_filled_vec(4 * child.num_faces(), false, "the hole flags of the finest faces")?;
    Ok(FinestFaces::uniform(child.num_vertices() + child.num_edges(), 3, faces, holes))
}

/// One level of eval from the lean child `child` of `t` (rows `x`) to the
/// level above (rows `y`): the smooth masks of
/// [`crate::slak::eval_level`], term for term in the same order, with the
/// child's relations computed on the fly.
pub(crate) fn lean_eval<T: Float + Send + Sync>(
    t: &Topology,
    child: &TriChild,
    step: &Step,
    x: &[T],
    y: &mut [T],
    d: usize,
    par: Par,
) {
    debug_assert!(step.edges.is_empty() && step.vertices.is_empty(), "a lean step has smooth masks only");
    subla_scheme::channel_groups!(d, off, D => lean_eval_impl::<T, D>(t, child, step, x, y, d, off, par));
}

#[allow(clippy::too_many_arguments)]
fn lean_eval_impl<T: Float + Send + Sync, const D: usize>(
    t: &Topology,
    child: &TriChild,
    step: &Step,
    x: &[T],
    y: &mut [T],
    stride: usize,
    off: usize,
    par: Par,
) {
    let (nv, ne) = (child.num_vertices(), child.num_edges());
    let nvp = t.num_vertices();
    let (yv, ye) = y.split_at_mut(nv * stride);
    let gx = |i: u32| load::<T, D>(x, i as usize, stride, off);
    let put = |row: &mut [T], acc: [T; D]| row[off..off + D].copy_from_slice(&acc);
    let (alpha, beta) = (real::<T>(EDGE_END), real::<T>(EDGE_OPPOSITE));
    // Edge points: `α (a + b) + β Σ o`; first the halves, by parent vertex,
    // then the middle edges.
    let edge_point = |row: &mut [T], ([a, b], opposite, n): ([u32; 2], [u32; 2], usize)| {
        let mut acc = [T::zero(); D];
        axpy(&mut acc, alpha, gx(a));
        axpy(&mut acc, alpha, gx(b));
        if beta != T::zero() {
            for &o in &opposite[..n] {
                axpy(&mut acc, beta, gx(o));
            }
        }
        put(row, acc);
    };
    let n_a = child.halves().len();
    let (ya, ym) = ye.split_at_mut(n_a * stride);
    let vep = t.vertex_edge_ptr();
    for_rows(ya, n_a, stride, par, |r, out| {
        // The parent vertex of the first half, then advanced along.
        let mut v = vep.partition_point(|&p| p as usize <= r.start).saturating_sub(1);
        for (row, k) in out.chunks_exact_mut(stride).zip(r) {
            while vep[v + 1] as usize <= k {
                v += 1;
            }
            edge_point(row, child.half_stencil(t, v, k));
        }
    });
    for_rows(ym, ne - n_a, stride, par, |r, out| {
        for (row, m) in out.chunks_exact_mut(stride).zip(r) {
            edge_point(row, child.middle_stencil(t, m));
        }
    });
    // Vertex points: the neighbours, then the vertex (Eq. 28).
    for_rows(yv, nv, stride, par, |r, out| {
        for (row, v) in out.chunks_exact_mut(stride).zip(r) {
            let mut acc = [T::zero(); D];
            if v < nvp {
                let [w, e] = step.smooth[t.valence(v)];
                if e != 0.0 {
                    let e = real::<T>(e);
                    for u in child.parent_vertex_neighbors(t, v) {
                        axpy(&mut acc, e, gx(u));
                    }
                }
                axpy(&mut acc, real::<T>(w), gx(v as u32));
            } else {
                let (nb, n) = child.edge_point_neighbors(t, v - nvp);
                let [w, e] = step.smooth[n];
                if e != 0.0 {
                    let e = real::<T>(e);
                    for &u in &nb[..n] {
                        axpy(&mut acc, e, gx(u));
                    }
                }
                axpy(&mut acc, real::<T>(w), gx(v as u32));
            }
            put(row, acc);
        }
    });
}
