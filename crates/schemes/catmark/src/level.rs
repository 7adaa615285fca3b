//! The build step of one Catmull-Clark level: the child topology with its
//! sharpness, and the masks of the parent's edges and vertices that differ
//! from the smooth ones (the "compute, then overwrite" passes of Mlakar et
//! al. 2020, §5.1 and §5.3).

use rayon::prelude::*;
use subla_algebra::Par;
use subla_algebra::mem::try_filled_vec;
use subla_mesh::{CreaseMethod, Mesh, Topology, TriangleSubdivision};
use subla_scheme::Result;

use crate::refine::refine_topology_direct;
use crate::rules::{Rule, dec, is_infinite, prepare_sharpness, tau_at, vertex_transition_weight};

/// An edge point that is not the default `¼ a + ¼ b + ¼ c₁ + ¼ c₂`:
/// `alpha` on each endpoint, `beta` on each incident face point.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EdgeMask {
    /// The parent edge.
    pub edge: u32,
    /// Weight of each endpoint.
    pub alpha: f64,
    /// Weight of each incident face point.
    pub beta: f64,
}

/// A vertex point that is not the smooth mask:
/// `cv v + cs (Σ u_i + Σ c_j) / n² + ce (u_a + u_b)`, with `u_i` the
/// neighbours, `c_j` the face points around the vertex and `n` its valence.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct VertexMask {
    /// The parent vertex.
    pub vertex: u32,
    /// Weight of the vertex itself.
    pub cv: f64,
    /// Scale of the smooth ring (neighbours and face points, each `cs / n²`).
    pub cs: f64,
    /// Weight of each crease end.
    pub ce: f64,
    /// First crease end.
    pub ua: u32,
    /// Second crease end.
    pub ub: u32,
}

/// The masks of one step `l → l+1` of a [`CatmarkPlan`](crate::CatmarkPlan): the
/// special masks, sorted by element.
/// Other backends read them through [`StepView`](crate::StepView).
#[derive(Clone, Debug)]
pub struct Step {
    pub(crate) edges: Vec<EdgeMask>,
    pub(crate) vertices: Vec<VertexMask>,
}

impl Step {
    /// The masks of no step (a plan of no levels).
    pub(crate) fn empty() -> Step {
        Step { edges: Vec::new(), vertices: Vec::new() }
    }
}

/// OpenSubdiv's preparation of the control mesh: see
/// [`crate::rules::prepare_sharpness`].
pub(crate) fn prepare(mesh: &Mesh) -> Result<Mesh> {
    Ok(prepare_sharpness(
        mesh,
        mesh.edge_sharpness().to_vec(),
        mesh.vertex_sharpness().to_vec(),
        mesh.holes().to_vec(),
        mesh.options(),
    )?)
}

/// The child level of `parent` (topology and sharpness).
pub(crate) fn child_level(parent: &Mesh, par: Par) -> Result<Mesh> {
    let r = refine_topology_direct(parent, par)?;
    child_mesh(parent, r.topology, r.holes, Some(&r.halves))
}

/// The child mesh: `child` topology (numbered as [`crate::refine`] says)
/// with the sharpness that the rules give it. `halves[2e + j]` is the child
/// edge of parent edge `e` at its endpoint `j`, when known (else found by
/// vertex pair).
pub(crate) fn child_mesh(parent: &Mesh, ct: Topology, holes: Vec<bool>, halves: Option<&[u32]>) -> Result<Mesh> {
    let t = parent.topology();
    let (nv, nf) = (t.num_vertices(), t.num_faces());
    let es = parent.edge_sharpness();
    let vs = parent.vertex_sharpness();
    let opts = parent.options();
    let chaikin = opts.crease_method == CreaseMethod::Chaikin;
    let mut child_es = try_filled_vec(ct.num_edges(), 0f32, "the edge sharpness of a refined level")?;
    for e in 0..t.num_edges() {
        if es[e] <= 0.0 {
            continue;
        }
        let [a, b] = t.edge(e);
        let ep = (nv + nf + e) as u32;
        for (j, end) in [a, b].into_iter().enumerate() {
            let child = match halves {
                Some(h) => Some(h[2 * e + j]),
                None => ct.find_edge(end, ep),
            };
            if let Some(ce) = child {
                child_es[ce as usize] = tau_at(t, es, chaikin, e, end as usize);
            }
        }
    }
    let mut child_vs = try_filled_vec(ct.num_vertices(), 0f32, "the vertex sharpness of a refined level")?;
    for v in 0..nv {
        child_vs[v] = dec(vs[v]);
    }
    Ok(Mesh::from_parts(ct, child_es, child_vs, holes, opts)?)
}

/// The masks of `parent`'s edges and vertices that differ from the smooth
/// ones.
pub(crate) fn masks(parent: &Mesh, par: Par) -> Step {
    let t = parent.topology();
    let nv = t.num_vertices();
    let es = parent.edge_sharpness();
    let vs = parent.vertex_sharpness();
    let opts = parent.options();
    let chaikin = opts.crease_method == CreaseMethod::Chaikin;
    let smooth_tris = opts.triangle_subdivision == TriangleSubdivision::Smooth;
    let tau_at = |e: usize, v: usize| tau_at(t, es, chaikin, e, v);

    // Edge masks.
    let edge_mask = |e: usize| -> Option<EdgeMask> {
        let s = es[e];
        let k = t.edge_corners(e).len();
        let (alpha_s, beta_s, special_smooth) = if k == 2 {
            let tri = |c: u32| t.face_order(t.corner_faces()[c as usize] as usize) == 3;
            let cs = t.edge_corners(e);
            if smooth_tris && (tri(cs[0]) || tri(cs[1])) {
                let t1: f64 = if tri(cs[0]) { 0.47 } else { 0.25 };
                let t2: f64 = if tri(cs[1]) { 0.47 } else { 0.25 };
                let beta = 0.5 * (t1 + t2);
                (0.5 * (1.0 - 2.0 * beta), beta, true)
            } else {
                (0.25, 0.25, false)
            }
        } else {
            (0.25, 1.0 / (2.0 * k.max(1) as f64), true)
        };
        if s <= 0.0 {
            return special_smooth.then_some(EdgeMask { edge: e as u32, alpha: alpha_s, beta: beta_s });
        }
        let [a, b] = t.edge(e);
        let crease = is_infinite(s) || (tau_at(e, a as usize) > 0.0 && tau_at(e, b as usize) > 0.0);
        if crease {
            return Some(EdgeMask { edge: e as u32, alpha: 0.5, beta: 0.0 });
        }
        let w = f64::from(s);
        Some(EdgeMask { edge: e as u32, alpha: w * 0.5 + (1.0 - w) * alpha_s, beta: (1.0 - w) * beta_s })
    };
    let edges: Vec<EdgeMask> = if par == Par::Rayon {
        (0..t.num_edges()).into_par_iter().with_min_len(1 << 12).filter_map(edge_mask).collect()
    } else {
        (0..t.num_edges()).filter_map(edge_mask).collect()
    };

    // Vertex masks.
    let vertex_mask = |v: usize| -> Option<VertexMask> {
        let inc = t.vertex_edges(v);
        let sigma: Vec<f32> = inc.iter().map(|&e| es[e as usize]).collect();
        let n_faces = t.face_count(v);
        let k = sigma.iter().filter(|&&s| s > 0.0).count();
        let rp = Rule::classify(vs[v], k);
        let smooth_ok = inc.len() == n_faces && !inc.is_empty();
        if rp.uses_smooth_mask() && smooth_ok {
            return None;
        }
        let other = |e: u32| {
            let [x, y] = t.edge(e as usize);
            if x as usize == v { y } else { x }
        };
        let ends = |sh: &[f32]| -> (u32, u32) {
            let first = sh.iter().position(|&s| s > 0.0).unwrap_or(0);
            let last = sh.iter().rposition(|&s| s > 0.0).unwrap_or(0);
            (other(inc[first]), other(inc[last]))
        };
        let corner = VertexMask { vertex: v as u32, cv: 1.0, cs: 0.0, ce: 0.0, ua: v as u32, ub: v as u32 };
        if !smooth_ok && rp.uses_smooth_mask() {
            // Unreachable for prepared meshes (such vertices are sharpened);
            // keep the vertex in place rather than divide by zero.
            return Some(corner);
        }
        let tau: Vec<f32> = inc.iter().map(|&e| tau_at(e as usize, v)).collect();
        let sv_child = dec(vs[v]);
        let kc = tau.iter().filter(|&&s| s > 0.0).count();
        let rc = Rule::classify(sv_child, kc);
        let n = inc.len() as f64;
        let smooth_v = (n - 2.0) / n;
        // Mask of a rule: (cv, cs, ce, ends).
        let mask_of = |r: Rule, sharp: &[f32]| -> (f64, f64, f64, (u32, u32)) {
            match r {
                Rule::Smooth | Rule::Dart => (smooth_v, 1.0, 0.0, (v as u32, v as u32)),
                Rule::Crease => (0.75, 0.0, 0.125, ends(sharp)),
                Rule::Corner => (1.0, 0.0, 0.0, (v as u32, v as u32)),
            }
        };
        let mp = mask_of(rp, &sigma);
        if rc == rp || (rc.uses_smooth_mask() && !smooth_ok) {
            return Some(VertexMask { vertex: v as u32, cv: mp.0, cs: mp.1, ce: mp.2, ua: mp.3.0, ub: mp.3.1 });
        }
        let mc = mask_of(rc, &tau);
        let w = f64::from(vertex_transition_weight(vs[v], sv_child, &sigma, &tau, chaikin));
        let (ua, ub) = if mp.2 != 0.0 { mp.3 } else { mc.3 };
        Some(VertexMask {
            vertex: v as u32,
            cv: w * mp.0 + (1.0 - w) * mc.0,
            cs: w * mp.1 + (1.0 - w) * mc.1,
            ce: w * mp.2 + (1.0 - w) * mc.2,
            ua,
            ub,
        })
    };
    let vertices: Vec<VertexMask> = if par == Par::Rayon {
        (0..nv).into_par_iter().with_min_len(1 << 12).filter_map(vertex_mask).collect()
    } else {
        (0..nv).filter_map(vertex_mask).collect()
    };

    Step { edges, vertices }
}

/// A vertex point `cv v + cs (Σ u_j + Σ f_j)/n² + ce (u_a + u_b)` (`u_j`
/// the neighbours, `f_j` the face points around `v`), as [`VertexMask`]:
/// what the edge-friend and halfedge paths compute from a vertex's ring.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct VertexWeights {
    pub cv: f64,
    pub cs: f64,
    pub ce: f64,
    pub ua: u32,
    pub ub: u32,
}

impl VertexWeights {
    /// The smooth mask of a vertex `v` of valence `n`.
    pub(crate) fn smooth(n: usize, v: u32) -> Self {
        let nf = n as f64;
        VertexWeights { cv: (nf - 2.0) / nf, cs: 1.0, ce: 0.0, ua: v, ub: v }
    }
    /// The vertex kept in place.
    pub(crate) fn keep(v: u32) -> Self {
        VertexWeights { cv: 1.0, cs: 0.0, ce: 0.0, ua: v, ub: v }
    }
}

/// OpenSubdiv's mask of vertex `me` (vertex sharpness `sv`) from its ring:
/// the sharpness `sigma` of its edges in turning order, their child
/// sharpness `tau` at `me`, the neighbour `ends` each leads to, its
/// `n_faces` faces, and whether the smooth mask applies to it at all
/// (`smooth_ok`: as many edges as faces) — [`masks`]'s vertex masks, with
/// the transition blends of both crease methods.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ring_weights(
    me: u32,
    sv: f32,
    sigma: &[f32],
    tau: &[f32],
    ends: &[u32],
    n_faces: usize,
    smooth_ok: bool,
    chaikin: bool,
) -> VertexWeights {
    let k = sigma.iter().filter(|&&s| s > 0.0).count();
    let rp = Rule::classify(sv, k);
    if rp.uses_smooth_mask() {
        return if smooth_ok { VertexWeights::smooth(n_faces, me) } else { VertexWeights::keep(me) };
    }
    let nf = n_faces as f64;
    let crease_ends = |sh: &[f32]| -> (u32, u32) {
        let first = sh.iter().position(|&s| s > 0.0).unwrap_or(0);
        let last = sh.iter().rposition(|&s| s > 0.0).unwrap_or(0);
        (ends[first], ends[last])
    };
    let mask_of = |r: Rule, sharp: &[f32]| -> (f64, f64, f64, (u32, u32)) {
        match r {
            Rule::Smooth | Rule::Dart if smooth_ok => ((nf - 2.0) / nf, 1.0, 0.0, (me, me)),
            Rule::Smooth | Rule::Dart => (1.0, 0.0, 0.0, (me, me)),
            Rule::Crease => (0.75, 0.0, 0.125, crease_ends(sharp)),
            Rule::Corner => (1.0, 0.0, 0.0, (me, me)),
        }
    };
    let sv_child = dec(sv);
    let kc = tau.iter().filter(|&&s| s > 0.0).count();
    let rc = Rule::classify(sv_child, kc);
    let mp = mask_of(rp, sigma);
    if rc == rp || (rc.uses_smooth_mask() && !smooth_ok) {
        return VertexWeights { cv: mp.0, cs: mp.1, ce: mp.2, ua: mp.3.0, ub: mp.3.1 };
    }
    let mc = mask_of(rc, tau);
    let w = f64::from(vertex_transition_weight(sv, sv_child, sigma, tau, chaikin));
    let (ua, ub) = if mp.2 != 0.0 { mp.3 } else { mc.3 };
    VertexWeights {
        cv: w * mp.0 + (1.0 - w) * mc.0,
        cs: w * mp.1 + (1.0 - w) * mc.1,
        ce: w * mp.2 + (1.0 - w) * mc.2,
        ua,
        ub,
    }
}
