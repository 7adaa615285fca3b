//! Catmull-Clark rules as OpenSubdiv's `Sdc` defines them: vertex
//! classification, sharpness subdivision (uniform and Chaikin, Mlakar et
//! al. 2020 Eq. 14–15) and the transition weights of semi-sharp features.
//! All sharpness arithmetic is `f32`, operation by operation, as in
//! OpenSubdiv (see `docs/design/catmark-rules.md`).

use subla_mesh::tags::SHARPNESS_INFINITE;

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

/// Chaikin sharpness of the child of semi-sharp edge `s` at an endpoint
/// whose incident edges (this one included) have sharpness `around`.
#[inline]
pub fn chaikin(s: f32, around: &[f32]) -> f32 {
    if around.len() < 2 {
        return dec(s);
    }
    let mut sum = 0f32;
    let mut count = 0u32;
    for &t in around {
        if is_semi(t) {
            sum += t;
            count += 1;
        }
    }
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
    let mut sum = 0f32;
    let mut count = 0u32;
    if sv_parent > 0.0 && sv_child <= 0.0 {
        sum = sv_parent;
        count = 1;
    }
    for (&s, &t) in sigma.iter().zip(tau) {
        let counts = if chaikin_method { s > 0.0 && t <= 0.0 } else { s > 0.0 && s <= 1.0 };
        if counts {
            sum += s;
            count += 1;
        }
    }
    if count == 0 {
        return 0.0;
    }
    let w = sum / count as f32;
    if w > 1.0 { 1.0 } else { w }
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
