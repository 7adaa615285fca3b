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
use subla_solid::limit::{CellClass, Quantity, RegularEval, SolidLimit, cell_grid, classify, control_grid};
use subla_solid::{CatmarkSolid, CatmarkSolidLak};
use subla_volume::VolumeError;
use subla_volume::shapes::hex_grid;
use surface::{assert_surface_in_volume, boundary_surface};

/// The id of lattice point `(i, j, k)` of `hex_grid(n, n, n)`.
fn id(n: usize, i: usize, j: usize, k: usize) -> u32 {
    (i + (n + 1) * (j + (n + 1) * k)) as u32
}

/// The `12 n` lattice edges along the twelve edges of `hex_grid(n, n, n)`'s
/// box.
fn outline(n: usize) -> Vec<[u32; 2]> {
    let mut sharp = Vec::new();
    for t in 0..n {
        for (a, b) in [(0, 0), (n, 0), (0, n), (n, n)] {
            sharp.push([id(n, t, a, b), id(n, t + 1, a, b)]);
            sharp.push([id(n, a, t, b), id(n, a, t + 1, b)]);
            sharp.push([id(n, a, b, t), id(n, a, b, t + 1)]);
        }
    }
    sharp
}

/// A 3 × 3 × 3 box with its twelve outline edges sharp (its corners meet
/// three each), a crease across the top face, one sharp edge alone in the
/// bottom face (a dart at each end) and a corner in the middle of a side.
fn creased_box() -> subla_volume::VolumeData {
    let n = 3;
    let mut d = hex_grid(n, n, n).unwrap();
    let mut sharp = outline(n);
    // Across the top face at x = 1.
    sharp.extend((0..n).map(|t| [id(n, 1, t, n), id(n, 1, t + 1, n)]));
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

/// A jittered `n³` box with its twelve outline edges sharp (so its eight
/// corners on three sharp edges each).
fn box_with_sharp_outline(n: usize) -> subla_volume::VolumeData {
    let mut d = hex_grid(n, n, n).unwrap();
    d.mesh = d.mesh.with_features(&outline(n), &[]).unwrap();
    d.vertices = common::jitter(&d.vertices, 11, 0.12);
    d
}

#[test]
fn cells_at_sharp_boundary_edges_are_tricubic_with_a_phantom_layer_per_face() {
    let n = 5;
    let d = box_with_sharp_outline(n);
    let (m, x) = (&d.mesh, &d.vertices);
    let cell = |i: usize, j: usize, k: usize| (i + n * (j + n * k)) as u32;
    // Corner and edge cells (two or three faces on the boundary, their
    // edges sharp), face cells, inner cells.
    let mut classes = std::collections::BTreeMap::new();
    for c in 0..m.num_cells() {
        let ijk = [c % n, (c / n) % n, c / (n * n)];
        let outer: Vec<usize> = (0..3).filter(|&a| ijk[a] == 0 || ijk[a] == n - 1).collect();
        let class = classify(m, c);
        *classes.entry(class).or_insert(0) += 1;
        let g = control_grid(m, c).unwrap_or_else(|| panic!("cell {c} {ijk:?}"));
        assert_eq!(g.num_phantoms(), outer.len(), "cell {c}");
        let want: [Option<bool>; 3] = std::array::from_fn(|a| outer.contains(&a).then_some(ijk[a] == n - 1));
        assert_eq!(g.phantoms, want, "cell {c}");
        // The phantom entries: 64 − 4^(3−p) 3^p.
        let p = outer.len() as u32;
        let real = 4usize.pow(3 - p) * 3usize.pow(p);
        assert_eq!(g.points.iter().filter(|&&v| v != subla_volume::NONE).count(), real, "cell {c}");
    }
    let k = n - 2;
    assert_eq!(classes.get(&CellClass::RegularCrease), Some(&(8 + 12 * k)), "{classes:?}");
    assert_eq!(classes.get(&CellClass::RegularBoundary), Some(&(6 * k * k)), "{classes:?}");
    assert_eq!(classes.get(&CellClass::Regular), Some(&(k * k * k)), "{classes:?}");
    // Without the tags the boundary surface wraps round the edges: those
    // cells are no tricubic patch (below: the corner patch, and the box's
    // corners irregular).
    let bare = hex_grid(n, n, n).unwrap().mesh;
    for c in [cell(0, 0, 0), cell(2, 0, 0), cell(4, 2, 4)] {
        assert!(control_grid(&bare, c as usize).is_none());
    }
    assert_eq!(classify(&bare, cell(0, 0, 0) as usize), CellClass::Irregular);
    assert_eq!(classify(&bare, cell(2, 0, 0) as usize), CellClass::SmoothBoundaryEdge);
    // One edge of the outline untagged: the cells along it are at a smooth
    // boundary edge, the corners at its ends (their vertices on sharp
    // edges) not evaluated, the others still regular.
    let partial: Vec<[u32; 2]> = m
        .sharp_edges()
        .map(|e| m.edge(e as usize))
        .filter(|&[a, b]| {
            let z = |v: u32| v as usize / ((n + 1) * (n + 1));
            let y = |v: u32| (v as usize / (n + 1)) % (n + 1);
            !(y(a) == 0 && y(b) == 0 && z(a) == 0 && z(b) == 0)
        })
        .collect();
    assert_eq!(partial.len(), 12 * n - n);
    let pm = bare.clone().with_features(&partial, &[]).unwrap();
    for i in 0..n {
        let want = if i == 0 || i == n - 1 { CellClass::NearFeature } else { CellClass::SmoothBoundaryEdge };
        assert_eq!(classify(&pm, cell(i, 0, 0) as usize), want, "cell ({i}, 0, 0)");
    }
    assert_eq!(classify(&pm, cell(0, 2, 0) as usize), CellClass::RegularCrease);
    assert_eq!(classify(&pm, cell(2, 1, 0) as usize), CellClass::RegularBoundary);

    // Each child of a corner, edge, face and inner cell has its parent's
    // limit, positions and derivatives; every child is evaluated.
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let inner = [[0.25, 0.5, 0.75], [0.9, 0.1, 0.4], [0.0, 0.6, 1.0]];
    for c in [cell(0, 0, 0), cell(4, 4, 4), cell(4, 0, 4), cell(2, 0, 0), cell(4, 2, 4), cell(0, 4, 1), cell(2, 1, 0)] {
        assert!((8 * c..8 * c + 8).all(|ch| cell_grid(child, ch as usize).is_some()), "children of {c}");
        common::check_children(m, x, child, &y, c, &inner);
    }
    // Continuous across faces, derivatives too: corner–edge, edge–face
    // and face–inner cells.
    for (a, b) in [(cell(0, 0, 0), cell(1, 0, 0)), (cell(2, 0, 0), cell(2, 1, 0)), (cell(2, 1, 0), cell(2, 1, 1))] {
        let f = shared_face(m, a, b);
        common::check_face(m, x, a, b, f, |_| true);
    }
    // The boundary is the Catmull-Clark surface with those creases: at
    // every boundary vertex the solid's limit is the surface's limit mask.
    let (s0, back) = boundary_surface(m);
    let xs = Array2::from_shape_fn((back.len(), 3), |(i, k)| x[[back[i] as usize, k]]);
    let sp = CatmarkSlak.build(&s0, 0, Par::Rayon).unwrap();
    let lim = sp.limit(Par::Rayon).unwrap();
    let want = subla_algebra::spmv::spmv_csr(lim.as_ref(), xs.view(), |&w, _, _| w, Par::Rayon);
    let samples: Vec<(u32, [f64; 3])> = back
        .iter()
        .map(|&v| {
            let c = (0..m.num_cells() as u32).find(|&c| m.cell_vertices(c as usize).contains(&v)).unwrap();
            let k = m.cell_vertices(c as usize).iter().position(|&u| u == v).unwrap();
            (c, common::CORNER[k])
        })
        .collect();
    let got = common::at(m, x, &samples, Quantity::Position);
    let diff = common::max_diff(&got, &want);
    assert!(diff < 1e-12, "boundary limit against the surface scheme's: {diff}");
    // The direct evaluator gathers the phantom layers as the matrix folds
    // them.
    let cells: Vec<u32> = (0..m.num_cells() as u32).collect();
    let ev = RegularEval::new(m, &cells, 3, Par::Rayon).unwrap();
    let mut out = Array2::zeros((ev.num_samples(), 3));
    ev.eval_into(x.view(), Quantity::Position, out.view_mut(), Par::Rayon);
    let grid = SolidLimit::grid(cells.iter().copied(), 3, Quantity::Position);
    let by_matrix = common::at(m, x, grid.samples(), Quantity::Position);
    let diff = common::max_diff(&out, &by_matrix);
    assert!(diff < 1e-13, "direct evaluator against the matrix: {diff}");
}

/// A jittered `n³` box without tags: its boundary surface is a smooth
/// Catmull-Clark surface round the edges.
fn smooth_box(n: usize) -> subla_volume::VolumeData {
    let mut d = hex_grid(n, n, n).unwrap();
    d.vertices = common::jitter(&d.vertices, 13, 0.12);
    d
}

#[test]
fn cells_at_smooth_boundary_edges_are_the_corner_patch_times_a_cubic() {
    let n = 5;
    let d = smooth_box(n);
    let (m, x) = (&d.mesh, &d.vertices);
    let cell = |i: usize, j: usize, k: usize| (i + n * (j + n * k)) as u32;
    let mut classes = std::collections::BTreeMap::new();
    for c in 0..m.num_cells() {
        *classes.entry(classify(m, c)).or_insert(0) += 1;
    }
    let k = n - 2;
    assert_eq!(classes.get(&CellClass::SmoothBoundaryEdge), Some(&(12 * k)), "{classes:?}");
    // The box's corners: three edges of valence 2 at one vertex, whose
    // children away from it are edge, face and inner cells.
    assert_eq!(classes.get(&CellClass::Irregular), Some(&8), "{classes:?}");
    assert_eq!(classes.get(&CellClass::RegularBoundary), Some(&(6 * k * k)), "{classes:?}");
    assert_eq!(classes.get(&CellClass::Regular), Some(&(k * k * k)), "{classes:?}");
    let edge_cells: Vec<u32> =
        (0..m.num_cells() as u32).filter(|&c| classify(m, c as usize) == CellClass::SmoothBoundaryEdge).collect();
    for &c in &edge_cells {
        let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(m, c as usize) else { panic!("cell {c}") };
        assert_eq!((g.valence, g.layer_len(), g.phantom), (1, 9, None), "cell {c}");
    }

    // Each child of an edge cell (one next to a corner among them) has its
    // parent's limit: the children along the edge are edge cells again,
    // the others regular at a boundary face or inside.
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let inner = [[0.25, 0.5, 0.75], [0.9, 0.1, 0.4], [0.0, 0.6, 1.0], [1e-6, 0.3, 1e-7]];
    for c in [cell(2, 0, 0), cell(4, 2, 4), cell(0, 4, 1), cell(1, 0, 4)] {
        let classes: Vec<CellClass> = (8 * c..8 * c + 8).map(|ch| classify(child, ch as usize)).collect();
        assert_eq!(classes.iter().filter(|&&x| x == CellClass::SmoothBoundaryEdge).count(), 2, "{classes:?}");
        assert!(classes.iter().all(|x| x.evaluated()), "children of {c}: {classes:?}");
        common::check_children(m, x, child, &y, c, &inner);
    }
    for c in [cell(0, 0, 0), cell(4, 4, 4)] {
        common::check_children(m, x, child, &y, c, &inner[..2]);
    }
    // Continuous across faces, derivatives too (on the edge itself both
    // sides give the boundary curve's): edge–edge, edge–face, face–inner.
    for (a, b) in [
        (cell(1, 0, 0), cell(2, 0, 0)),
        (cell(2, 0, 0), cell(2, 1, 0)),
        (cell(2, 0, 0), cell(2, 0, 1)),
        (cell(0, 0, 0), cell(1, 0, 0)),
    ] {
        let f = shared_face(m, a, b);
        common::check_face(m, x, a, b, f, |_| true);
    }
    // Derivatives are difference quotients of positions, near the edge too.
    let h = 1e-6;
    for &c in &[cell(2, 0, 0), cell(0, 3, 4)] {
        for p in [[0.3, 0.6, 0.2], [0.05, 0.5, 0.02], [0.8, 0.01, 0.7]] {
            let d = common::at(m, x, &[(c, p)], Quantity::DerivU);
            let dv = common::at(m, x, &[(c, p)], Quantity::DerivV);
            let dw = common::at(m, x, &[(c, p)], Quantity::DerivW);
            for (axis, got) in [d, dv, dw].iter().enumerate() {
                let (mut lo, mut hi) = (p, p);
                lo[axis] -= h;
                hi[axis] += h;
                let fd = (common::at(m, x, &[(c, hi)], Quantity::Position)
                    - common::at(m, x, &[(c, lo)], Quantity::Position))
                    / (2.0 * h);
                let e = common::max_diff(got, &fd);
                assert!(e < 1e-6, "cell {c} at {p:?}, axis {axis}: {e}");
            }
        }
    }
    // Independent check: the boundary is the Catmull-Clark surface of the
    // boundary quads (no tags): at every boundary vertex the solid's limit
    // is the surface's limit mask.
    let (checked, all) = boundary_limits_are_the_surface_schemes(m, x);
    assert_eq!(checked, all, "every boundary vertex");
    // A cylinder's rims (its caps meet its side at untagged edges): every
    // cell is evaluated, and each child of a rim cell has its limit.
    let cyl = subla_volume::shapes::cylinder(2, 2, 3, 1.5).unwrap();
    let (cm, cx) = (&cyl.mesh, common::jitter(&cyl.vertices, 5, 0.03));
    let rims: Vec<u32> =
        (0..cm.num_cells() as u32).filter(|&c| classify(cm, c as usize) == CellClass::SmoothBoundaryEdge).collect();
    assert_eq!(rims.len(), 2 * 8, "the outer ring's cells at both caps");
    assert!((0..cm.num_cells()).all(|c| classify(cm, c).evaluated()));
    let plan = CatmarkSolid::default().build(cm, 1, Par::Rayon).unwrap();
    let cy = eval(&plan, cx.view(), Par::Rayon).unwrap();
    for &c in &rims {
        common::check_children(cm, &cx, plan.mesh(1), &cy, c, &inner);
    }
    // The direct evaluator equals the matrix.
    let ev = subla_solid::layered::LayeredEval::new(m, &edge_cells, 3, Par::Rayon).unwrap();
    for q in [Quantity::Position, Quantity::DerivU, Quantity::DerivW] {
        let mut out = Array2::zeros((ev.num_samples(), 3));
        ev.eval_into(x.view(), q, out.view_mut(), Par::Rayon);
        let grid = SolidLimit::grid(edge_cells.iter().copied(), 3, q);
        let by_matrix = common::at(m, x, grid.samples(), q);
        let diff = common::max_diff(&out, &by_matrix);
        assert!(diff < 1e-12, "direct evaluator against the matrix, {q:?}: {diff}");
    }
}

/// A jittered L-shaped block: `hex_grid(6, 6, 4)` without the cells with
/// `i, j ≥ 3`, so a concave untagged boundary edge runs along `z` at `(3,
/// 3)`, three cells round it; and the id of cell `(i, j, k)` of the grid
/// among those kept.
fn l_block() -> (subla_volume::VolumeData, impl Fn(usize, usize, usize) -> u32) {
    let g = hex_grid(6, 6, 4).unwrap();
    let gone = |c: usize| c % 6 >= 3 && (c / 6) % 6 >= 3;
    let keep: Vec<subla_volume::Cell> =
        g.mesh.cells().enumerate().filter(|&(c, _)| !gone(c)).map(|(_, cell)| cell).collect();
    let mut d = subla_volume::VolumeData::from_cells(g.vertices.clone(), &keep).unwrap();
    d.vertices = common::jitter(&d.vertices, 23, 0.1);
    let id = move |i: usize, j: usize, k: usize| {
        let c = i + 6 * (j + 6 * k);
        assert!(!gone(c));
        (0..c).filter(|&x| !gone(x)).count() as u32
    };
    (d, id)
}

#[test]
fn cells_at_a_concave_boundary_edge_are_the_fan_patch_times_a_cubic() {
    let (d, cell) = l_block();
    let (m, x) = (&d.mesh, &d.vertices);
    // The three cells round the concave edge in the middle layers, each
    // on its sector of the fan.
    let mut sectors = Vec::new();
    for k in 1..=2 {
        for (i, j) in [(2, 2), (3, 2), (2, 3)] {
            let c = cell(i, j, k);
            assert_eq!(classify(m, c as usize), CellClass::SmoothBoundaryEdge, "cell ({i}, {j}, {k})");
            let Some(subla_solid::limit::CellGrid::Layered(g)) = cell_grid(m, c as usize) else { panic!() };
            assert_eq!(g.valence, 3);
            sectors.push(g.sector.unwrap());
        }
    }
    sectors.sort_unstable();
    assert_eq!(sectors, [0, 0, 1, 1, 2, 2]);
    // At the ends of the edge (a corner of the boundary surface with five
    // faces) the cells are irregular: the vertex there is extraordinary.
    for k in [0, 3] {
        for (i, j) in [(2, 2), (3, 2), (2, 3)] {
            assert_eq!(classify(m, cell(i, j, k) as usize), CellClass::Irregular, "cell ({i}, {j}, {k})");
        }
    }
    assert!((0..m.num_cells()).all(|c| classify(m, c).evaluated()), "every cell evaluated");
    // Each child of the cells round the edge has its parent's limit.
    let plan = CatmarkSolid::default().build(m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let child = plan.mesh(1);
    let inner = [[0.25, 0.5, 0.75], [0.9, 0.1, 0.4], [0.0, 0.6, 1.0], [0.02, 0.3, 0.01]];
    for (i, j) in [(2, 2), (3, 2), (2, 3)] {
        let c = cell(i, j, 1);
        let n = (8 * c..8 * c + 8).filter(|&ch| classify(child, ch as usize) == CellClass::SmoothBoundaryEdge).count();
        assert_eq!(n, 2, "children of ({i}, {j}, 1) at the edge");
        common::check_children(m, x, child, &y, c, &inner);
        common::check_children(m, x, child, &y, cell(i, j, 0), &inner[..2]);
    }
    // Continuous across the faces between the sectors, to their neighbours
    // and to the irregular cells at the ends (positions; derivatives off
    // the edge, where the surface is singular).
    let off_edge = |p: [f64; 3]| p.iter().filter(|&&v| v == 0.0 || v == 1.0).count() < 2;
    for (a, b) in [
        ((2, 2, 1), (3, 2, 1)),
        ((2, 2, 1), (2, 3, 1)),
        ((3, 2, 1), (4, 2, 1)),
        ((2, 3, 1), (2, 4, 1)),
        ((2, 2, 1), (2, 2, 2)),
        ((2, 2, 1), (1, 2, 1)),
        ((2, 2, 0), (2, 2, 1)),
        ((2, 2, 0), (3, 2, 0)),
        ((2, 3, 0), (2, 3, 1)),
    ] {
        let (a, b) = (cell(a.0, a.1, a.2), cell(b.0, b.1, b.2));
        let f = shared_face(m, a, b);
        common::check_face(m, x, a, b, f, off_edge);
    }
    // Independent check: at every boundary vertex (the edge's among them)
    // the solid's limit is the Catmull-Clark surface scheme's limit mask on
    // the boundary quads.
    let (checked, all) = boundary_limits_are_the_surface_schemes(m, x);
    assert_eq!(checked, all, "every boundary vertex");
    // The direct evaluator equals the matrix, positions and derivatives
    // (on a grid off the edge: k = 1).
    let cells: Vec<u32> =
        (0..m.num_cells() as u32).filter(|&c| classify(m, c as usize) == CellClass::SmoothBoundaryEdge).collect();
    for (k, q) in [(3, Quantity::Position), (1, Quantity::DerivU), (1, Quantity::DerivV)] {
        let ev = subla_solid::layered::LayeredEval::new(m, &cells, k, Par::Rayon).unwrap();
        let mut out = Array2::zeros((ev.num_samples(), 3));
        ev.eval_into(x.view(), q, out.view_mut(), Par::Rayon);
        let grid = SolidLimit::grid(cells.iter().copied(), k, q);
        let diff = common::max_diff(&out, &common::at(m, x, grid.samples(), q));
        assert!(diff < 1e-12, "direct evaluator against the matrix, {q:?}: {diff}");
    }
}

/// At each boundary vertex of an evaluated cell of untagged `m`, the
/// solid's limit against the Catmull-Clark surface scheme's limit mask on
/// the boundary quads (1e-12); the vertices checked, of all on the
/// boundary.
fn boundary_limits_are_the_surface_schemes(m: &subla_volume::VolMesh, x: &Array2<f64>) -> (usize, usize) {
    boundary_limits_against_the_surface(
        m,
        x,
        |c| cell_grid(m, c as usize).is_some(),
        |s| common::at(m, x, s, Quantity::Position),
    )
}

/// [`boundary_limits_are_the_surface_schemes`] with the cells `usable`
/// and the limit positions at samples given by `limit`.
fn boundary_limits_against_the_surface(
    m: &subla_volume::VolMesh,
    x: &Array2<f64>,
    usable: impl Fn(u32) -> bool,
    limit: impl Fn(&[(u32, [f64; 3])]) -> Array2<f64>,
) -> (usize, usize) {
    let (s0, back) = boundary_surface(m);
    let xs = Array2::from_shape_fn((back.len(), 3), |(i, k)| x[[back[i] as usize, k]]);
    let sp = CatmarkSlak.build(&s0, 0, Par::Rayon).unwrap();
    let lim = sp.limit(Par::Rayon).unwrap();
    let want = subla_algebra::spmv::spmv_csr(lim.as_ref(), xs.view(), |&w, _, _| w, Par::Rayon);
    let mut samples = Vec::new();
    let mut rows = Vec::new();
    for (i, &v) in back.iter().enumerate() {
        let Some(c) = (0..m.num_cells() as u32).find(|&c| m.cell_vertices(c as usize).contains(&v) && usable(c)) else {
            continue;
        };
        let k = m.cell_vertices(c as usize).iter().position(|&u| u == v).unwrap();
        samples.push((c, common::CORNER[k]));
        rows.push(i);
    }
    let got = limit(&samples);
    let want = want.select(ndarray::Axis(0), &rows);
    let diff = common::max_diff(&got, &want);
    assert!(diff < 1e-12, "boundary limit against the surface scheme's: {diff}");
    (rows.len(), back.len())
}

#[test]
fn thin_slabs_are_evaluated_by_refining_first() {
    // A slab one cell thick (every cell has boundary faces on opposite
    // sides) and one two cells thick (every cell's neighbourhood meets the
    // far side of the boundary): refused directly, evaluated through their
    // children after two steps (one-thick) or one (two-thick).
    use subla_solid::refined::limit_matrix_refined;
    for (nx, ny, nz, levels) in [(4, 3, 1, 2), (4, 3, 2, 1)] {
        let g = hex_grid(nx, ny, nz).unwrap();
        let (m, x) = (&g.mesh, common::jitter(&g.vertices, 29, 0.1));
        let direct = (0..m.num_cells()).filter(|&c| cell_grid(m, c).is_some()).count();
        assert!(direct < m.num_cells(), "{nx}×{ny}×{nz}: {direct} evaluated directly");
        let at = |s: &[(u32, [f64; 3])], levels: u32| {
            let r = limit_matrix_refined(m, s, Quantity::Position, levels, Par::Rayon).unwrap();
            for i in 0..r.nrows() {
                assert!((r.row(i).1.iter().sum::<f64>() - 1.0).abs() < 1e-12, "row {i} sums to 1");
            }
            subla_algebra::spmv::spmv_csr(r.as_ref(), x.view(), |&w, _, _| w, Par::Rayon)
        };
        if levels > 1 {
            // One step fewer leaves some samples out.
            let s: Vec<(u32, [f64; 3])> = (0..m.num_cells() as u32).map(|c| (c, [0.5; 3])).collect();
            assert!(limit_matrix_refined(m, &s, Quantity::Position, levels - 1, Par::Rayon).is_err());
        }
        // Every boundary vertex is the surface scheme's limit.
        let (checked, all) = boundary_limits_against_the_surface(m, &x, |_| true, |s| at(s, levels));
        let on_boundary = (0..m.num_vertices()).filter(|&v| m.is_boundary_vertex(v)).count();
        assert_eq!((checked, all), (on_boundary, on_boundary), "{nx}×{ny}×{nz}");
        // Continuity: every cell's corners against the other cells at the
        // same vertex, and a point inside each face shared by two cells.
        let mut samples = Vec::new();
        let mut owner = Vec::new();
        for c in 0..m.num_cells() as u32 {
            for (k, &v) in m.cell_vertices(c as usize).iter().enumerate() {
                samples.push((c, common::CORNER[k]));
                owner.push(v);
            }
        }
        let p = at(&samples, levels);
        for i in 0..samples.len() {
            for j in i + 1..samples.len() {
                if owner[i] == owner[j] {
                    let d = (0..3).map(|k| (p[[i, k]] - p[[j, k]]).abs()).fold(0.0, f64::max);
                    assert!(
                        d < 1e-12,
                        "{nx}×{ny}×{nz}: vertex {} from cells {:?}: {d}",
                        owner[i],
                        (samples[i].0, samples[j].0)
                    );
                }
            }
        }
        let mut pairs = 0;
        for f in (0..m.num_faces()).filter(|&f| !m.is_boundary_face(f)) {
            let [a, b] = m.face_cells(f);
            // The face's centre seen from each cell: the average of its
            // corners' parameters.
            let centre = |c: u32| -> [f64; 3] {
                let cv = m.cell_vertices(c as usize);
                let mut q = [0.0; 3];
                for &v in m.face(f) {
                    let k = cv.iter().position(|&u| u == v).unwrap();
                    for (q, &c) in q.iter_mut().zip(&common::CORNER[k]) {
                        *q += c / 4.0;
                    }
                }
                q
            };
            let p = at(&[(a, centre(a)), (b, centre(b))], levels);
            let d = (0..3).map(|k| (p[[0, k]] - p[[1, k]]).abs()).fold(0.0, f64::max);
            assert!(d < 1e-12, "{nx}×{ny}×{nz}: face {f}: {d}");
            pairs += 1;
        }
        assert!(pairs > 0);
    }
}

/// The face shared by cells `a` and `b`.
fn shared_face(m: &subla_volume::VolMesh, a: u32, b: u32) -> usize {
    m.cell_faces(a as usize).iter().map(|&code| (code >> 1) as usize).find(|&f| m.face_cells(f).contains(&b)).unwrap()
}

#[test]
fn the_limit_refuses_cells_whose_own_points_meet_a_crease() {
    // A 7³ grid with a vertical crease inside at x = y = 1: the cells
    // holding it as an edge (lattice corner i, j ∈ {0, 1}) are refused;
    // those whose control points meet it only beyond their own layers
    // are regular, and their children have their limit.
    let n = 7;
    let g = hex_grid(n, n, n).unwrap();
    let line: Vec<[u32; 2]> = (0..n).map(|k| [id(n, 1, 1, k), id(n, 1, 1, k + 1)]).collect();
    let m = g.mesh.clone().with_features(&line, &[]).unwrap();
    let cell = |i: usize, j: usize, k: usize| i + n * (j + n * k);
    for (i, j) in [(1, 1), (0, 0), (0, 1), (1, 0)] {
        assert!(cell_grid(&m, cell(i, j, 3)).is_none(), "({i}, {j})");
        assert_eq!(classify(&m, cell(i, j, 3)), CellClass::NearFeature, "({i}, {j})");
    }
    for (i, j) in [(2, 2), (2, 1), (1, 2), (3, 1), (1, 4), (4, 4)] {
        assert_eq!(classify(&m, cell(i, j, 3)), CellClass::Regular, "({i}, {j})");
        assert_eq!(classify(&g.mesh, cell(i, j, 3)), CellClass::Regular, "({i}, {j})");
    }
    assert_eq!(classify(&m, cell(0, 2, 3)), CellClass::RegularBoundary);
    assert_eq!(classify(&m, cell(2, 0, 3)), CellClass::RegularBoundary);
    // A corner: a point feature, the extraordinary vertex of the cells
    // round it (irregular); the cells beyond stay regular.
    let c = g.mesh.clone().with_features(&[], &[id(n, 3, 3, 3)]).unwrap();
    assert_eq!(classify(&c, cell(2, 2, 2)), CellClass::Irregular);
    assert_eq!(classify(&c, cell(3, 3, 3)), CellClass::Irregular);
    assert_eq!(classify(&c, cell(1, 1, 1)), CellClass::Regular);
    assert_eq!(classify(&c, cell(4, 3, 3)), CellClass::Regular);
    // The regular ones next to the crease are its limit: their children
    // (refined with the crease) have it.
    let x = common::jitter(&g.vertices, 5, 0.12);
    let plan = CatmarkSolid::default().build(&m, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let inner = [[0.25, 0.5, 0.75], [0.9, 0.1, 0.4]];
    for c in [cell(2, 2, 3), cell(2, 1, 3), cell(1, 2, 2), cell(0, 2, 3)] {
        assert!((8 * c..8 * c + 8).all(|ch| cell_grid(plan.mesh(1), ch).is_some()), "children of {c}");
        common::check_children(&m, &x, plan.mesh(1), &y, c as u32, &inner);
    }
    // A corner beyond the cell's own vertices, and at one: every child of
    // the cells round it has its parent's limit, and the limit at the
    // corner is the corner itself (its rule keeps it at every level).
    let plan = CatmarkSolid::default().build(&c, 1, Par::Rayon).unwrap();
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    for cc in [cell(1, 1, 1), cell(4, 3, 3), cell(2, 2, 2), cell(3, 3, 3), cell(2, 3, 2)] {
        common::check_children(&c, &x, plan.mesh(1), &y, cc as u32, &inner);
    }
    let v = id(n, 3, 3, 3) as usize;
    for (cc, at) in [(cell(2, 2, 2), [1.0; 3]), (cell(3, 3, 3), [0.0; 3]), (cell(2, 3, 2), [1.0, 0.0, 1.0])] {
        let p = common::at(&c, &x, &[(cc as u32, at)], Quantity::Position);
        let d = (0..3).map(|k| (p[[0, k]] - x[[v, k]]).abs()).fold(0f64, f64::max);
        assert!(d < 1e-13, "cell {cc}: the corner's limit is off by {d}");
    }
    // Continuous across faces between the cells round the corner and their
    // neighbours (derivatives away from the corner).
    let away = |p: [f64; 3]| p.iter().filter(|&&v| v == 0.0 || v == 1.0).count() < 3;
    for (a, b) in [(cell(2, 2, 2), cell(3, 2, 2)), (cell(2, 2, 2), cell(2, 2, 1)), (cell(3, 3, 3), cell(4, 3, 3))] {
        common::check_face(&c, &x, a as u32, b as u32, shared_face(&c, a as u32, b as u32), away);
    }
}
