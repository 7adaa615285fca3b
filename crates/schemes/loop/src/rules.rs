//! Loop's masks as OpenSubdiv's `Sdc::Scheme<SCHEME_LOOP>` defines them
//! (read from OpenSubdiv 3.6, `sdc/loopScheme.h`; no code copied).
//!
//! The crease machinery — vertex rules, sharpness subdivision (uniform and
//! Chaikin), transition weights — is scheme-independent in OpenSubdiv and
//! is reused from [`subla_scheme::sdc`]; this module holds what is
//! specific to Loop:
//!
//! | element | smooth | crease | corner |
//! |---|---|---|---|
//! | edge point | `⅜ a + ⅜ b + ⅛ o₁ + ⅛ o₂` (`o`: the vertices opposite the edge) | `½ a + ½ b` | — |
//! | vertex point | `(1 − nβ) v + β Σ uᵢ`, Eq. 28–29 of Mlakar et al. 2020 | `¾ v + ⅛ (u_a + u_b)` | `v` |
//! | limit | `(1 − nε) v + ε Σ uᵢ`, `ε = 1 / (n + 3 / (8β))` | `⅔ v + ⅙ (u_a + u_b)` | `v` |
//!
//! with `β = (5/8 − (3/8 + ¼ cos(2π/n))²) / n`, Loop's original weight
//! (not Warren's `3/(8n)`), and the exact values `β = 1/16`, `ε = 1/12` at
//! the regular valence 6. An edge with `k ≠ 2` faces gives each opposite
//! vertex `⅛ · 2/k` in its smooth mask (only reachable through the
//! transition blend, since such edges are infinitely sharp).

pub use subla_scheme::sdc::vertex_transition_weight;
pub use subla_scheme::sdc::{Rule, chaikin, child_edge_sharpness, dec, is_infinite, is_semi};

/// Weight of each endpoint in the smooth edge mask.
pub const EDGE_END: f64 = 0.375;
/// Weight of each opposite vertex in the smooth edge mask of an edge with
/// two faces.
pub const EDGE_OPPOSITE: f64 = 0.125;
/// Weight of the vertex in the crease vertex mask.
pub const CREASE_CENTRE: f64 = 0.75;
/// Weight of each crease end in the crease vertex mask.
pub const CREASE_END: f64 = 0.125;

/// `(1 / n, 3/8 + ¼ cos(2π/n))`, evaluated as OpenSubdiv does (in `f64`).
#[inline]
fn inv_and_beta(n: usize) -> (f64, f64) {
    let dn = n as f64;
    let inv = 1.0 / dn;
    let cos_theta = (std::f64::consts::PI * 2.0 * inv).cos();
    (inv, 0.25 * cos_theta + 0.375)
}

/// The smooth vertex mask of a vertex of valence `n` (`n ≥ 1`):
/// `[weight of the vertex, weight of each neighbour]` (Eq. 28–29).
///
/// ```
/// let [v, e] = subla_loop::rules::vertex_weights(6);
/// assert_eq!((v, e), (0.625, 0.0625));
/// let [v, e] = subla_loop::rules::vertex_weights(3);
/// assert!((e - 3.0 / 16.0).abs() < 1e-15 && (v + 3.0 * e - 1.0).abs() < 1e-15);
/// ```
pub fn vertex_weights(n: usize) -> [f64; 2] {
    if n == 6 {
        return [0.625, 0.0625];
    }
    let (inv, beta) = inv_and_beta(n);
    let e = (0.625 - beta * beta) * inv;
    [1.0 - e * n as f64, e]
}

/// The smooth limit mask of a vertex of valence `n` (`n ≥ 1`):
/// `[weight of the vertex, weight of each neighbour]`.
///
/// ```
/// assert_eq!(subla_loop::rules::limit_weights(6), [0.5, 1.0 / 12.0]);
/// ```
pub fn limit_weights(n: usize) -> [f64; 2] {
    if n == 6 {
        return [0.5, 1.0 / 12.0];
    }
    let (inv, beta) = inv_and_beta(n);
    let gamma = (0.625 - beta * beta) * inv;
    let e = 1.0 / (n as f64 + 3.0 / (8.0 * gamma));
    [1.0 - e * n as f64, e]
}

/// The smooth vertex mask for every valence `0..=max` (index = valence;
/// valence 0 keeps the vertex).
pub fn vertex_weight_table(max: usize) -> Vec<[f64; 2]> {
    (0..=max).map(|n| if n == 0 { [1.0, 0.0] } else { vertex_weights(n) }).collect()
}

/// Smooth edge mask `(weight of each endpoint, weight of each opposite
/// vertex)` of an edge with `faces` incident faces.
#[inline]
pub fn smooth_edge_weights(faces: usize) -> (f64, f64) {
    if faces == 2 { (EDGE_END, EDGE_OPPOSITE) } else { (EDGE_END, EDGE_OPPOSITE * (2.0 / faces.max(1) as f64)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_loops_formula() {
        for n in 1..60 {
            let nn = n as f64;
            let b = (0.625 - (0.375 + 0.25 * (std::f64::consts::TAU / nn).cos()).powi(2)) / nn;
            let [v, e] = vertex_weights(n);
            assert!((e - b).abs() < 1e-15, "beta({n})");
            assert!((v + nn * e - 1.0).abs() < 1e-14);
            let [lv, le] = limit_weights(n);
            assert!((le - 1.0 / (nn + 3.0 / (8.0 * b))).abs() < 1e-15, "limit({n})");
            assert!((lv + nn * le - 1.0).abs() < 1e-14);
        }
        // Regular valence: the closed forms, which the formula meets to rounding.
        assert_eq!(vertex_weights(6), [0.625, 0.0625]);
        let (inv, beta) = inv_and_beta(6);
        assert!(((0.625 - beta * beta) * inv - 0.0625).abs() < 1e-16);
        assert_eq!(smooth_edge_weights(2), (0.375, 0.125));
        assert_eq!(smooth_edge_weights(4), (0.375, 0.0625));
    }
}
