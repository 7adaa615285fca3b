//! Sharp edges and corners of Catmull-Clark solids: on the boundary the
//! surface refines as Catmull-Clark's surface scheme with the same creases
//! and corners (our surface scheme matches OpenSubdiv's); inside, a crease
//! refines as a cubic B-spline curve and every other row keeps the smooth
//! rules; the tags follow the split; the algebra path refuses them; the
//! limit refuses cells whose control points meet them.

mod common;
mod surface;

use ndarray::Array2;
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_scheme::{Plan, Refiner, SchemeError, eval};
use subla_solid::limit::{CellClass, cell_grid, classify};
use subla_solid::{CatmarkSolid, CatmarkSolidLak};
use subla_volume::VolumeError;
use subla_volume::shapes::hex_grid;
use surface::{assert_surface_in_volume, boundary_surface};

/// The id of lattice point `(i, j, k)` of `hex_grid(n, n, n)`.
fn id(n: usize, i: usize, j: usize, k: usize) -> u32 {
    (i + (n + 1) * (j + (n + 1) * k)) as u32
}

/// A 3 × 3 × 3 box with its twelve outline edges sharp (its corners meet
/// three each), a crease across the top face, one sharp edge alone in the
/// bottom face (a dart at each end) and a corner in the middle of a side.
fn creased_box() -> subla_volume::VolumeData {
    let n = 3;
    let mut d = hex_grid(n, n, n).unwrap();
    let mut sharp = Vec::new();
    for t in 0..n {
        for (a, b) in [(0, 0), (n, 0), (0, n), (n, n)] {
            sharp.push([id(n, t, a, b), id(n, t + 1, a, b)]);
            sharp.push([id(n, a, t, b), id(n, a, t + 1, b)]);
            sharp.push([id(n, a, b, t), id(n, a, b, t + 1)]);
        }
        // Across the top face at x = 1.
        sharp.push([id(n, 1, t, n), id(n, 1, t + 1, n)]);
    }
    sharp.push([id(n, 1, 1, 0), id(n, 2, 1, 0)]);
    let corners = [id(n, 0, 1, 2)];
    d.mesh = d.mesh.with_features(&sharp, &corners).unwrap();
    // Jittered, so that no two rules give the same point by accident.
    d.vertices = common::jitter(&d.vertices, 7, 0.1);
    d
}

#[test]
fn sharp_boundary_edges_refine_as_surface_creases() {
    let d = creased_box();
    assert_eq!(d.mesh.sharp_edges().count(), 12 * 3 + 3 + 1);
    let levels = 2;
    let plan = CatmarkSolid::default().build(&d.mesh, levels, Par::Rayon).unwrap();
    let y = eval(&plan, d.vertices.view(), Par::Rayon).unwrap();
    let (s0, back0) = boundary_surface(&d.mesh);
    let x0 = Array2::from_shape_fn((back0.len(), 3), |(i, k)| d.vertices[[back0[i] as usize, k]]);
    let sp = CatmarkSlak.build(&s0, levels, Par::Rayon).unwrap();
    let ys = eval(&sp, x0.view(), Par::Rayon).unwrap();
    assert_surface_in_volume("creased box", &ys, &y, &boundary_surface(plan.mesh(levels)).1);
    // Without the tags the boundary differs: the test sees them.
    let smooth = CatmarkSolid::default().build(&hex_grid(3, 3, 3).unwrap().mesh, levels, Par::Rayon).unwrap();
    let z = eval(&smooth, d.vertices.view(), Par::Rayon).unwrap();
    assert!(y.iter().zip(z.iter()).any(|(a, b)| (a - b).abs() > 1e-3));
}

#[test]
fn an_interior_crease_refines_as_a_curve_and_nothing_else_changes() {
    // A vertical line of sharp edges through a 4³ grid, ending on its top
    // and bottom faces, and a corner inside.
    let n = 4;
    let g = hex_grid(n, n, n).unwrap();
    let line: Vec<[u32; 2]> = (0..n).map(|k| [id(n, 2, 2, k), id(n, 2, 2, k + 1)]).collect();
    let corner = id(n, 1, 1, 1);
    let tagged = g.mesh.clone().with_features(&line, &[corner]).unwrap();
    let plan = CatmarkSolid::default().build(&tagged, 2, Par::Rayon).unwrap();
    let smooth = CatmarkSolid::default().build(&g.mesh, 2, Par::Rayon).unwrap();
    for l in 0..2 {
        let m = plan.mesh(l);
        let (r, r0) = (plan.operator(l, Par::Seq).unwrap(), smooth.operator(l, Par::Seq).unwrap());
        let row = |i: usize| -> Vec<(u32, f64)> {
            let (c, w) = r.row(i);
            c.iter().copied().zip(w.iter().copied()).collect()
        };
        let nv = m.num_vertices();
        let mut special = vec![false; r.nrows()];
        for e in m.sharp_edges() {
            let [a, b] = m.edge(e as usize);
            assert_eq!(row(nv + e as usize), vec![(a, 0.5), (b, 0.5)], "level {l}: sharp edge {e}");
            special[nv + e as usize] = true;
        }
        let mut curve = 0;
        for (v, special) in special.iter_mut().enumerate().take(nv) {
            let sharp: Vec<u32> = m.vertex_edges(v).iter().copied().filter(|&e| m.is_sharp_edge(e as usize)).collect();
            if m.is_corner(v) {
                assert_eq!(row(v), vec![(v as u32, 1.0)], "level {l}: corner {v}");
            } else if sharp.len() == 2 {
                let other = |e: u32| m.edge(e as usize).into_iter().find(|&x| x as usize != v).unwrap();
                let mut want = vec![(other(sharp[0]), 0.125), (v as u32, 0.75), (other(sharp[1]), 0.125)];
                want.sort_by_key(|p| p.0);
                assert_eq!(row(v), want, "level {l}: crease vertex {v}");
                curve += 1;
            } else {
                continue;
            }
            *special = true;
        }
        // The line's inner vertices: 3 at level 0, 7 at level 1.
        assert_eq!(curve, [3, 7][l as usize], "level {l}");
        assert_eq!(m.sharp_edges().count(), [4, 8][l as usize], "level {l}");
        assert_eq!(m.corners().collect::<Vec<_>>(), vec![corner], "level {l}");
        // Every other row as without the tags.
        for i in (0..r.nrows()).filter(|&i| !special[i]) {
            let (c0, w0) = r0.row(i);
            let want: Vec<(u32, f64)> = c0.iter().copied().zip(w0.iter().copied()).collect();
            assert_eq!(row(i), want, "level {l}: row {i}");
        }
    }
}

#[test]
fn tags_are_checked_and_the_algebra_path_refuses_them() {
    let n = 2;
    let g = hex_grid(n, n, n).unwrap();
    let diagonal = [id(n, 0, 0, 0), id(n, 1, 1, 0)];
    assert!(matches!(
        g.mesh.clone().with_features(&[diagonal], &[]),
        Err(VolumeError::NoSuchEdge { vertices }) if vertices == diagonal
    ));
    let past = g.mesh.num_vertices() as u32;
    assert!(matches!(
        g.mesh.clone().with_features(&[], &[past]),
        Err(VolumeError::NoSuchVertex { vertex, .. }) if vertex == past
    ));
    // Either way round.
    let edge = [id(n, 1, 1, 1), id(n, 1, 1, 0)];
    let m = g.mesh.clone().with_features(&[edge], &[]).unwrap();
    assert_eq!(m.sharp_edges().count(), 1);
    assert!(m.has_features() && !g.mesh.has_features());
    match CatmarkSolidLak::default().build(&m, 1, Par::Seq) {
        Err(SchemeError::UnsupportedTag { tag: "crease", .. }) => {}
        other => panic!("{:?}", other.map(|p| p.levels())),
    }
    let c = g.mesh.clone().with_features(&[], &[0]).unwrap();
    assert!(matches!(
        CatmarkSolidLak::default().build(&c, 1, Par::Seq),
        Err(SchemeError::UnsupportedTag { tag: "corner", .. })
    ));
}

#[test]
fn the_limit_refuses_cells_near_a_crease() {
    // A 7³ grid with a vertical crease at x = y = 1: a cell's control
    // points meet it where its lattice corner has i ≤ 2 and j ≤ 2.
    let n = 7;
    let g = hex_grid(n, n, n).unwrap();
    let line: Vec<[u32; 2]> = (0..n).map(|k| [id(n, 1, 1, k), id(n, 1, 1, k + 1)]).collect();
    let m = g.mesh.clone().with_features(&line, &[]).unwrap();
    let cell = |i: usize, j: usize, k: usize| i + n * (j + n * k);
    for (i, j) in [(1, 1), (2, 2), (0, 2)] {
        assert!(cell_grid(&m, cell(i, j, 3)).is_none(), "({i}, {j})");
        assert_eq!(classify(&m, cell(i, j, 3)), CellClass::NearFeature, "({i}, {j})");
    }
    for (i, j) in [(3, 1), (1, 4), (4, 4)] {
        assert_eq!(classify(&m, cell(i, j, 3)), CellClass::Regular, "({i}, {j})");
        assert_eq!(classify(&g.mesh, cell(i, j, 3)), CellClass::Regular, "({i}, {j})");
    }
    assert_eq!(classify(&g.mesh, cell(2, 2, 3)), CellClass::Regular);
}
