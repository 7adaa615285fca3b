//! The build step of one Loop level: the preparation of the control mesh,
//! the child topology with its sharpness, and the masks of the parent's
//! edges and vertices that differ from the smooth ones (the "compute, then
//! overwrite" passes of Mlakar et al. 2020, §5.1 and §5.3, with Loop's
//! masks from [`crate::rules`]).

use rayon::prelude::*;
use subla_algebra::Par;
use subla_algebra::mem::try_filled_vec;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, Options, Topology, TriChild};
use subla_scheme::Result;

use crate::rules::{
    CREASE_CENTRE, CREASE_END, Rule, dec, is_infinite, smooth_edge_weights, vertex_transition_weight,
    vertex_weight_table, vertex_weights,
};
use subla_scheme::sdc::{prepare_sharpness, tau_at};

use crate::split::{check_triangles, split_triangles};

/// Which reference a Loop refiner follows.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rules {
    /// OpenSubdiv's `Sdc` Loop: the mesh's creases, corners, holes and
    /// [`Options`] (boundary interpolation, crease method) apply, as in
    /// `Far::TopologyRefiner`.
    #[default]
    OpenSubdiv,
    /// CGAL's `Subdivision_method_3::Loop_subdivision`: every tag and
    /// option of the mesh is ignored; a boundary edge point is the
    /// midpoint, a boundary vertex `(u_prev + 6 v + u_next) / 8`, with no
    /// corner rule (a boundary vertex in one triangle is smoothed like any
    /// other). This is OpenSubdiv's rule set with edge-only boundaries and
    /// no tags. Non-manifold input, which CGAL's `Surface_mesh` rejects, is
    /// sharpened as OpenSubdiv does.
    Cgal,
}

/// An edge point that is not the default `⅜ a + ⅜ b + ⅛ o₁ + ⅛ o₂`:
/// `alpha` on each endpoint, `beta` on each opposite vertex (the vertex of
/// each incident triangle that is not on the edge).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EdgeMask {
    /// The parent edge.
    pub edge: u32,
    /// Weight of each endpoint.
    pub alpha: f64,
    /// Weight of each opposite vertex.
    pub beta: f64,
}

/// A vertex point that is not the smooth mask:
/// `cv v + cn Σ uᵢ + ce (u_a + u_b)`, with `uᵢ` the neighbours (one per
/// incident edge) and `u_a`, `u_b` the crease ends.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct VertexMask {
    /// The parent vertex.
    pub vertex: u32,
    /// Weight of the vertex itself.
    pub cv: f64,
    /// Weight of each neighbour.
    pub cn: f64,
    /// Extra weight of each crease end.
    pub ce: f64,
    /// First crease end.
    pub ua: u32,
    /// Second crease end.
    pub ub: u32,
}

/// The masks of one step `l → l+1` of a [`LoopPlan`](crate::LoopPlan): the
/// special masks, sorted by element, and the smooth vertex weights by valence.
/// Other backends read them through [`StepView`](crate::StepView).
#[derive(Clone, Debug)]
pub struct Step {
    pub(crate) edges: Vec<EdgeMask>,
    pub(crate) vertices: Vec<VertexMask>,
    /// `[vertex, neighbour]` weights of the smooth mask, by valence.
    pub(crate) smooth: Vec<[f64; 2]>,
}

/// OpenSubdiv's preparation of the control mesh
/// (`prepareComponentTagsAndSharpness`: boundary option, non-manifold
/// sharpening, holes of `VTX_BOUNDARY_NONE`), after dropping every tag but
/// the holes under [`Rules::Cgal`]: the mesh with *effective* sharpness, the form every
/// level is kept in.
///
/// # Errors
/// [`subla_scheme::SchemeError::NotTriangles`] for a face that is not a
/// triangle.
pub(crate) fn prepare(mesh: &Mesh, rules: Rules) -> Result<Mesh> {
    let t = mesh.topology();
    check_triangles(t)?;
    let nv = t.num_vertices();
    let (edge_s, vert_s, holes, opts) = match rules {
        Rules::OpenSubdiv => {
            (mesh.edge_sharpness().to_vec(), mesh.vertex_sharpness().to_vec(), mesh.holes().to_vec(), mesh.options())
        }
        // CGAL's rules have no sharpness; holes only leave faces out of
        // the output, so they are carried all the same.
        Rules::Cgal => (
            try_filled_vec(t.num_edges(), 0.0, "the edge sharpness")?,
            try_filled_vec(nv, 0.0, "the vertex sharpness")?,
            mesh.holes().to_vec(),
            Options {
                boundary: BoundaryInterpolation::EdgeOnly,
                crease_method: CreaseMethod::Uniform,
                ..mesh.options()
            },
        ),
    };
    Ok(prepare_sharpness(mesh, edge_s, vert_s, holes, opts)?)
}

/// Hole flags of the children of `parent`'s faces (four per triangle).
pub(crate) fn child_holes(parent: &Mesh) -> Result<Vec<bool>> {
    let mut holes = try_filled_vec(4 * parent.num_faces(), false, "the hole flags of a refined level")?;
    if parent.has_holes() {
        for (f, &h) in parent.holes().iter().enumerate() {
            if h {
                holes[4 * f..4 * f + 4].fill(true);
            }
        }
    }
    Ok(holes)
}

/// The child level of `parent` (topology and sharpness).
pub(crate) fn child_level(parent: &Mesh, par: Par) -> Result<Mesh> {
    let s = split_triangles(parent.topology(), par)?;
    child_mesh(parent, s.topology, child_holes(parent)?, Some(&s.halves))
}

/// [`child_level`] of a parent whose split numbering `child` is known (a
/// lean level's full mesh, wanted after all).
pub(crate) fn lean_child_level(parent: &Mesh, child: TriChild, par: Par) -> Result<Mesh> {
    check_triangles(parent.topology())?;
    let s = parent.topology().split_triangles_from(child, par)?;
    child_mesh(parent, s.topology, child_holes(parent)?, Some(&s.halves))
}

/// The child mesh: `child` topology (numbered as [`crate::split`] says)
/// with the sharpness the rules give it. `halves[2e + j]` is the child edge
/// of parent edge `e` at its endpoint `j`, when known (else found by vertex
/// pair).
pub(crate) fn child_mesh(parent: &Mesh, ct: Topology, holes: Vec<bool>, halves: Option<&[u32]>) -> Result<Mesh> {
    let t = parent.topology();
    let nv = t.num_vertices();
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
        let ep = (nv + e) as u32;
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
/// ones (OpenSubdiv's `ComputeEdgeVertexMask` and `ComputeVertexVertexMask`
/// with Loop's masks, transition blends included).
pub(crate) fn masks(parent: &Mesh, par: Par) -> Step {
    let t = parent.topology();
    let nv = t.num_vertices();
    let es = parent.edge_sharpness();
    let vs = parent.vertex_sharpness();
    let chaikin = parent.options().crease_method == CreaseMethod::Chaikin;
    let tau_at = |e: usize, v: usize| tau_at(t, es, chaikin, e, v);

    let edge_mask = |e: usize| -> Option<EdgeMask> {
        let s = es[e];
        let k = t.edge_corners(e).len();
        let (alpha_s, beta_s) = smooth_edge_weights(k);
        if s <= 0.0 {
            return (k != 2).then_some(EdgeMask { edge: e as u32, alpha: alpha_s, beta: beta_s });
        }
        let [a, b] = t.edge(e);
        let crease = is_infinite(s) || (tau_at(e, a as usize) > 0.0 && tau_at(e, b as usize) > 0.0);
        if crease {
            return Some(EdgeMask { edge: e as u32, alpha: 0.5, beta: 0.0 });
        }
        // Crease to smooth: the parent's sharpness is the blend weight
        // (not clamped, as OpenSubdiv).
        let w = f64::from(s);
        let cw = 1.0 - w;
        Some(EdgeMask { edge: e as u32, alpha: w * 0.5 + cw * alpha_s, beta: beta_s * cw })
    };
    let edges: Vec<EdgeMask> = if par == Par::Rayon {
        (0..t.num_edges()).into_par_iter().with_min_len(1 << 12).filter_map(edge_mask).collect()
    } else {
        (0..t.num_edges()).filter_map(edge_mask).collect()
    };

    // Without sharp elements no edge needs to be looked up per vertex.
    let sharp = parent.has_sharpness();
    let vertex_mask = |v: usize| -> Option<VertexMask> {
        let inc = t.vertex_edges(v);
        let n_faces = t.face_count(v);
        let k = if sharp { inc.iter().filter(|&&e| es[e as usize] > 0.0).count() } else { 0 };
        let rp = Rule::classify(vs[v], k);
        let smooth_ok = inc.len() == n_faces && !inc.is_empty();
        if rp.uses_smooth_mask() && smooth_ok {
            return None;
        }
        let sigma: Vec<f32> = inc.iter().map(|&e| es[e as usize]).collect();
        let other = |e: u32| {
            let [x, y] = t.edge(e as usize);
            if x as usize == v { y } else { x }
        };
        let ends = |sh: &[f32]| -> (u32, u32) {
            let first = sh.iter().position(|&s| s > 0.0).unwrap_or(0);
            let last = sh.iter().rposition(|&s| s > 0.0).unwrap_or(0);
            (other(inc[first]), other(inc[last]))
        };
        let corner = VertexMask { vertex: v as u32, cv: 1.0, cn: 0.0, ce: 0.0, ua: v as u32, ub: v as u32 };
        if !smooth_ok && rp.uses_smooth_mask() {
            // Unreachable for prepared meshes (such vertices are sharpened);
            // keep the vertex in place.
            return Some(corner);
        }
        let tau: Vec<f32> = inc.iter().map(|&e| tau_at(e as usize, v)).collect();
        let sv_child = dec(vs[v]);
        let kc = tau.iter().filter(|&&s| s > 0.0).count();
        let rc = Rule::classify(sv_child, kc);
        // The smooth mask counts faces (OpenSubdiv's `GetNumFaces`), equal
        // to the edges wherever it applies.
        let [sv, se] = if smooth_ok { vertex_weights(n_faces) } else { [1.0, 0.0] };
        // Mask of a rule: (cv, cn, ce, crease ends).
        let mask_of = |r: Rule, sharp: &[f32]| -> (f64, f64, f64, (u32, u32)) {
            match r {
                Rule::Smooth | Rule::Dart => (sv, se, 0.0, (v as u32, v as u32)),
                Rule::Crease => (CREASE_CENTRE, 0.0, CREASE_END, ends(sharp)),
                Rule::Corner => (1.0, 0.0, 0.0, (v as u32, v as u32)),
            }
        };
        let mp = mask_of(rp, &sigma);
        if rc == rp || (rc.uses_smooth_mask() && !smooth_ok) {
            return Some(VertexMask { vertex: v as u32, cv: mp.0, cn: mp.1, ce: mp.2, ua: mp.3.0, ub: mp.3.1 });
        }
        let mc = mask_of(rc, &tau);
        let w = f64::from(vertex_transition_weight(vs[v], sv_child, &sigma, &tau, chaikin));
        let cw = 1.0 - w;
        let (ua, ub) = if mp.2 != 0.0 { mp.3 } else { mc.3 };
        Some(VertexMask {
            vertex: v as u32,
            cv: w * mp.0 + cw * mc.0,
            cn: w * mp.1 + cw * mc.1,
            ce: w * mp.2 + cw * mc.2,
            ua,
            ub,
        })
    };
    let vertices: Vec<VertexMask> = if par == Par::Rayon {
        (0..nv).into_par_iter().with_min_len(1 << 12).filter_map(vertex_mask).collect()
    } else {
        (0..nv).filter_map(vertex_mask).collect()
    };
    let max_valence = (0..nv).map(|v| t.valence(v)).max().unwrap_or(0);
    Step { edges, vertices, smooth: vertex_weight_table(max_valence) }
}

/// Upper bound of the nonzeros of one level's operator, from the counts
/// alone: `Σ_v (valence + 3) + Σ_e (2 + faces)`.
pub(crate) fn operator_bound(t: &Topology) -> u64 {
    let vertices: u64 = (0..t.num_vertices()).map(|v| 3 + t.valence(v) as u64).sum();
    let edges: u64 = (0..t.num_edges()).map(|e| 2 + t.edge_corners(e).len() as u64).sum();
    vertices + edges
}
