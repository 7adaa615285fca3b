//! The scheme-independent crease rules of OpenSubdiv's `Sdc` ("subdivision
//! core": `Sdc::Crease` and the control-mesh preparation every scheme
//! shares): vertex classification, sharpness subdivision (uniform and
//! Chaikin, Mlakar et al. 2020 Eq. 14–15) and the transition weights of
//! semi-sharp features. Each scheme crate applies them with its own masks
//! (Catmull-Clark's, Loop's). All sharpness arithmetic is `f32`, operation
//! by operation, as in OpenSubdiv (see `docs/design/catmark-rules.md`).

use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{BoundaryInterpolation, Mesh, MeshError, Options, Topology};

/// The rule of a vertex (`Sdc::Crease::Rule`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// No sharp edge, no vertex sharpness.
    Smooth,
    /// Exactly one sharp edge (uses the smooth mask).
    Dart,
    /// Exactly two sharp edges.
    Crease,
    /// Vertex sharpness, or more than two sharp edges.
    Corner,
}

impl Rule {
    /// `rule(s_v, k)`: from vertex sharpness and the number of sharp edges.
    #[inline]
    pub fn classify(vertex_sharpness: f32, sharp_edges: usize) -> Rule {
        if vertex_sharpness > 0.0 {
            return Rule::Corner;
        }
        match sharp_edges {
            0 => Rule::Smooth,
            1 => Rule::Dart,
            2 => Rule::Crease,
            _ => Rule::Corner,
        }
    }
    /// Smooth and dart vertices use the smooth mask.
    #[inline]
    pub fn uses_smooth_mask(self) -> bool {
        matches!(self, Rule::Smooth | Rule::Dart)
    }
}

/// True if `s` is infinitely sharp.
#[inline]
pub fn is_infinite(s: f32) -> bool {
    s >= SHARPNESS_INFINITE
}

/// True if `s` is semi-sharp (`0 < s < 10`).
#[inline]
pub fn is_semi(s: f32) -> bool {
    s > 0.0 && s < SHARPNESS_INFINITE
}

/// Uniform decrement of one level.
#[inline]
pub fn dec(s: f32) -> f32 {
    if s <= 0.0 {
        0.0
    } else if is_infinite(s) {
        SHARPNESS_INFINITE
    } else if s > 1.0 {
        s - 1.0
    } else {
        0.0
    }
}

/// The `f32` sum of `values` and their count, added in ascending order so
/// that the sum does not depend on the order the values come in — that is,
/// on how the mesh's edges are numbered. (OpenSubdiv adds in the order of
/// the vertex's edges; the two differ by rounding only.)
fn sorted_sum(values: impl Iterator<Item = f32>) -> (f32, u32) {
    let mut buf = [0f32; 16];
    let mut spill = Vec::new();
    let mut n = 0usize;
    for x in values {
        if n < buf.len() {
            buf[n] = x;
        } else {
            if spill.is_empty() {
                spill.extend_from_slice(&buf);
            }
            spill.push(x);
        }
        n += 1;
    }
    let vals = if n <= buf.len() { &mut buf[..n] } else { &mut spill[..] };
    vals.sort_unstable_by(f32::total_cmp);
    (vals.iter().sum(), n as u32)
}

/// Chaikin sharpness of the child of semi-sharp edge `s` at an endpoint
/// whose incident edges (this one included) have sharpness `around`.
#[inline]
pub fn chaikin(s: f32, around: &[f32]) -> f32 {
    if around.len() < 2 {
        return dec(s);
    }
    let (sum, count) = sorted_sum(around.iter().copied().filter(|&t| is_semi(t)));
    let blended = if count > 1 {
        let avg = (sum - s) / (count - 1) as f32;
        0.75 * s + 0.25 * avg
    } else {
        s
    };
    let r = blended - 1.0;
    if r > 0.0 { r } else { 0.0 }
}

/// Sharpness of the child of edge `s` at an endpoint with incident edge
/// sharpness `around` (smooth stays 0, infinite stays infinite).
#[inline]
pub fn child_edge_sharpness(s: f32, around: &[f32], chaikin_method: bool) -> f32 {
    if s <= 0.0 {
        0.0
    } else if is_infinite(s) {
        SHARPNESS_INFINITE
    } else if chaikin_method {
        chaikin(s, around)
    } else {
        dec(s)
    }
}

/// The vertex transition weight `w_v` (`ComputeFractionalWeightAtVertex`):
/// parent and child vertex sharpness, parent edge sharpness `sigma` and the
/// matching child edge sharpness `tau`, in the same order.
pub fn vertex_transition_weight(
    sv_parent: f32,
    sv_child: f32,
    sigma: &[f32],
    tau: &[f32],
    chaikin_method: bool,
) -> f32 {
    let decaying_vertex = (sv_parent > 0.0 && sv_child <= 0.0).then_some(sv_parent);
    let decaying_edges = sigma.iter().zip(tau).filter_map(|(&s, &t)| {
        let counts = if chaikin_method { s > 0.0 && t <= 0.0 } else { s > 0.0 && s <= 1.0 };
        counts.then_some(s)
    });
    let (sum, count) = sorted_sum(decaying_vertex.into_iter().chain(decaying_edges));
    if count == 0 {
        return 0.0;
    }
    let w = sum / count as f32;
    if w > 1.0 { 1.0 } else { w }
}

/// OpenSubdiv's preparation of a control mesh (Sdc's
/// `prepareComponentTagsAndSharpness`, the same for every scheme): the
/// boundary option, non-manifold sharpening and the holes of
/// `VTX_BOUNDARY_NONE` applied to the user's edge and vertex sharpness and
/// holes on the topology of `base` (whose own tags are not read). Returns
/// the mesh with *effective* sharpness, the form every level is kept in,
/// sharing `base`'s topology ([`Mesh::retagged`]).
///
/// # Errors
/// Array lengths that do not match the topology, or invalid sharpness.
pub fn prepare_sharpness(
    base: &Mesh,
    mut edge_s: Vec<f32>,
    mut vert_s: Vec<f32>,
    mut holes: Vec<bool>,
    opts: Options,
) -> Result<Mesh, MeshError> {
    let t = base.topology();
    let nv = t.num_vertices();
    let nm_edge: Vec<bool> = t.edge_tags().iter().map(|&g| g & edge_tag::NON_MANIFOLD != 0).collect();
    if opts.boundary == BoundaryInterpolation::None {
        for v in 0..nv {
            let on_boundary = t.is_boundary_vertex(v) || t.vertex_tags()[v] & vertex_tag::NON_MANIFOLD != 0;
            if !on_boundary {
                continue;
            }
            let soft = t
                .vertex_edges(v)
                .iter()
                .any(|&e| t.edge_corners(e as usize).len() == 1 && !is_infinite(edge_s[e as usize]));
            if soft {
                for &c in t.vertex_corners(v) {
                    holes[t.corner_faces()[c as usize] as usize] = true;
                }
            }
        }
    }
    for e in 0..t.num_edges() {
        if t.is_boundary_edge(e) || nm_edge[e] {
            edge_s[e] = SHARPNESS_INFINITE;
        }
    }
    for (v, sv) in vert_s.iter_mut().enumerate() {
        let edges = t.vertex_edges(v);
        let n_edges = edges.len();
        let n_faces = t.face_count(v);
        if opts.boundary == BoundaryInterpolation::EdgeAndCorner && n_faces == 1 && n_edges == 2 {
            *sv = SHARPNESS_INFINITE;
            continue;
        }
        let tags = t.vertex_tags()[v];
        let nm_edges = edges.iter().filter(|&&e| nm_edge[e as usize]).count();
        let non_manifold = tags & (vertex_tag::NON_MANIFOLD | vertex_tag::ISOLATED) != 0 || nm_edges > 0;
        if non_manifold {
            let boundary_edges = edges.iter().filter(|&&e| t.edge_corners(e as usize).len() == 1).count();
            let seam = nm_edges == 2 && boundary_edges == 0 && n_faces > n_edges && tags & vertex_tag::REPEATED == 0;
            if !seam {
                *sv = SHARPNESS_INFINITE;
            }
        }
    }
    base.retagged(edge_s, vert_s, holes, opts)
}

/// Child sharpness of edge `e` at its endpoint `v` (uniform or Chaikin),
/// with `es` the sharpness of every edge of `t`.
pub fn tau_at(t: &Topology, es: &[f32], chaikin: bool, e: usize, v: usize) -> f32 {
    let s = es[e];
    if s <= 0.0 || is_infinite(s) || !chaikin {
        return child_edge_sharpness(s, &[], false);
    }
    let around: Vec<f32> = t.vertex_edges(v).iter().map(|&x| es[x as usize]).collect();
    child_edge_sharpness(s, &around, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decrement_and_chaikin_follow_the_reference() {
        assert_eq!(dec(2.5), 1.5);
        assert_eq!(dec(1.0), 0.0);
        assert_eq!(dec(0.3), 0.0);
        assert_eq!(dec(10.0), 10.0);
        assert_eq!(dec(12.0), 10.0);
        // A lone semi-sharp edge: plain decrement.
        assert_eq!(chaikin(2.5, &[2.5, 0.0, 0.0]), 1.5);
        // Crease line 3 - 1: 0.75*3 + 0.25*1 - 1 = 1.5.
        assert_eq!(chaikin(3.0, &[3.0, 1.0, 0.0, 0.0]), 1.5);
        // Infinite neighbours do not enter the average.
        assert_eq!(chaikin(2.0, &[2.0, 10.0, 0.0]), 1.0);
        // Decays past zero.
        assert_eq!(chaikin(1.2, &[1.2, 0.2]), 0.0);
    }

    /// Sharpness arithmetic does not depend on the order of a vertex's
    /// edges: every order of the same values gives the same bits, although
    /// plain left-to-right `f32` sums of them differ.
    #[test]
    fn sharpness_sums_do_not_depend_on_edge_order() {
        let vals = [0.286_f32, 0.348, 3.1782515, 0.7311616, 1.0e-3];
        // Every order of the five indices.
        let mut perms: Vec<Vec<usize>> = vec![vec![]];
        for _ in 0..vals.len() {
            let mut next = Vec::new();
            for p in &perms {
                for i in (0..vals.len()).filter(|i| !p.contains(i)) {
                    let mut q = p.clone();
                    q.push(i);
                    next.push(q);
                }
            }
            perms = next;
        }
        let plain: std::collections::HashSet<u32> =
            perms.iter().map(|p| p.iter().map(|&i| vals[i]).sum::<f32>().to_bits()).collect();
        assert!(plain.len() > 1, "the values must expose the order of a plain sum");
        let ordered = |p: &[usize]| p.iter().map(|&i| vals[i]).collect::<Vec<f32>>();
        let first = ordered(&perms[0]);
        let zeros = [0f32; 5];
        for p in &perms {
            let v = ordered(p);
            assert_eq!(chaikin(vals[2], &v).to_bits(), chaikin(vals[2], &first).to_bits());
            assert_eq!(
                vertex_transition_weight(0.0, 0.0, &v, &zeros, true).to_bits(),
                vertex_transition_weight(0.0, 0.0, &first, &zeros, true).to_bits()
            );
            assert_eq!(sorted_sum(v.iter().copied()).0.to_bits(), sorted_sum(first.iter().copied()).0.to_bits());
        }
    }

    #[test]
    fn rules_and_transition_weights() {
        assert_eq!(Rule::classify(0.0, 0), Rule::Smooth);
        assert_eq!(Rule::classify(0.0, 1), Rule::Dart);
        assert_eq!(Rule::classify(0.0, 2), Rule::Crease);
        assert_eq!(Rule::classify(0.0, 3), Rule::Corner);
        assert_eq!(Rule::classify(0.5, 0), Rule::Corner);
        // Two crease edges of 0.5 decaying: w = 0.5 (reference §10.3).
        assert_eq!(vertex_transition_weight(0.0, 0.0, &[0.5, 0.0, 0.5, 0.0], &[0.0; 4], false), 0.5);
        // Chaikin: an edge decaying from above 1 counts with its value, clamped to 1.
        assert_eq!(vertex_transition_weight(0.0, 0.0, &[1.5, 1.5], &[0.0, 0.0], true), 1.0);
        assert_eq!(vertex_transition_weight(0.0, 0.0, &[0.0, 0.0], &[0.0, 0.0], false), 0.0);
    }
}
