//! Tests of the Doo–Sabin example (`examples/doo_sabin.rs`), run on the
//! example's own code: counts, affine rows, the biquadratic B-spline on
//! regular grids, the boundary convention, determinism over thread counts,
//! agreement with a hand-written loop, the `Plan` contract and the export of
//! the refinement matrix.

#[allow(dead_code)] // the example's `main`
#[path = "../../../examples/doo_sabin.rs"]
pub mod doo_sabin;

use std::f64::consts::PI;

use doo_sabin::{DOO_SABIN, DooSabinError, DooSabinPlan, pentagonal_prism};
use ndarray::Array2;
use subla::algebra::mtx;
use subla::mesh::{Mesh, MeshError, Topology};
use subla::scheme::testing::{check_child_points, check_contract, check_dyn, control_data, with_threads};
use subla::scheme::{Plan, Refiner, SchemeError, eval};
use subla::{CsrMat, Par};

// ---------------------------------------------------------------------------
// Meshes
// ---------------------------------------------------------------------------

fn cube() -> (Mesh, Array2<f64>) {
    let faces = [[0u32, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
    let p = Array2::from_shape_fn((8, 3), |(v, k)| [(v & 1) ^ ((v >> 1) & 1), (v >> 1) & 1, v >> 2][k] as f64);
    (Mesh::from_faces(8, &faces).expect("cube"), p)
}

fn octahedron() -> Mesh {
    let faces = [[0u32, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]];
    Mesh::from_faces(6, &faces).expect("octahedron")
}

/// Vertex `(i, j)` of an `n × m` periodic grid.
fn id(i: usize, j: usize, n: usize, m: usize) -> u32 {
    ((i % n) * m + j % m) as u32
}

/// An `n × m` quad torus: face `(i, j)` is `(i, j) (i+1, j) (i+1, j+1) (i, j+1)`.
fn torus(n: usize, m: usize) -> (Mesh, Array2<f64>) {
    let faces: Vec<[u32; 4]> = (0..n)
        .flat_map(|i| {
            (0..m).map(move |j| [id(i, j, n, m), id(i + 1, j, n, m), id(i + 1, j + 1, n, m), id(i, j + 1, n, m)])
        })
        .collect();
    let p = Array2::from_shape_fn((n * m, 3), |(v, k)| {
        let (u, w) = (2.0 * PI * (v / m) as f64 / n as f64, 2.0 * PI * (v % m) as f64 / m as f64);
        [(2.0 + w.cos()) * u.cos(), (2.0 + w.cos()) * u.sin(), w.sin()][k]
    });
    (Mesh::from_faces(n * m, &faces).expect("torus"), p)
}

/// A planar `k × k` quad grid (open), vertex `(x, y)` at index `y (k+1) + x`.
fn grid(k: usize) -> (Mesh, Array2<f64>) {
    let w = k + 1;
    let faces: Vec<[u32; 4]> = (0..k)
        .flat_map(|y| (0..k).map(move |x| [y * w + x, y * w + x + 1, (y + 1) * w + x + 1, (y + 1) * w + x]))
        .map(|f| f.map(|v| v as u32))
        .collect();
    let p = Array2::from_shape_fn((w * w, 3), |(v, c)| [(v % w) as f64, (v / w) as f64, 0.0][c]);
    (Mesh::from_faces(w * w, &faces).expect("grid"), p)
}

fn faces_of(plan: &DooSabinPlan, level: u32) -> Vec<Vec<u32>> {
    let f = plan.faces(level, Par::Rayon).expect("faces");
    (0..f.num_faces()).map(|i| f.face(i).to_vec()).collect()
}

fn interior_edges(t: &Topology) -> usize {
    (0..t.num_edges()).filter(|&e| !t.is_boundary_edge(e)).count()
}

fn interior_vertices(t: &Topology) -> usize {
    (0..t.num_vertices()).filter(|&v| !t.is_boundary_vertex(v) && t.face_count(v) > 0).count()
}

// ---------------------------------------------------------------------------
// A hand-written Doo–Sabin step, with no sparse algebra: loops over faces,
// corners and the topology's half-edge data.
// ---------------------------------------------------------------------------

struct Direct {
    triplets: Vec<(usize, usize, f64)>,
    faces: Vec<Vec<u32>>,
}

fn direct_step(t: &Topology) -> Direct {
    let ptr = t.face_ptr();
    let mut triplets = Vec::new();
    for (f, &start) in ptr[..t.num_faces()].iter().enumerate() {
        let vs = t.face(f);
        let n = vs.len() as f64;
        for a in 0..vs.len() {
            for (b, &vb) in vs.iter().enumerate() {
                let w = if a == b {
                    (n + 5.0) / (4.0 * n)
                } else {
                    (3.0 + 2.0 * (2.0 * PI * (a as f64 - b as f64) / n).cos()) / (4.0 * n)
                };
                triplets.push((start as usize + a, vb as usize, w));
            }
        }
    }
    let mut faces: Vec<Vec<u32>> = (0..t.num_faces()).map(|f| (ptr[f]..ptr[f + 1]).collect()).collect();
    // E-face of the edge lo–hi: c_f is the corner of lo in the face f
    // holding lo → hi, c_g the corner of hi in the face g holding hi → lo.
    for e in 0..t.num_edges() {
        let cs = t.edge_corners(e);
        if cs.len() != 2 {
            continue;
        }
        let lo = t.edge(e)[0];
        let (cf, cg) = if t.face_verts()[cs[0] as usize] == lo { (cs[0], cs[1]) } else { (cs[1], cs[0]) };
        let (cf, cg) = (cf as usize, cg as usize);
        faces.push(vec![t.next_corner(cg) as u32, cg as u32, t.next_corner(cf) as u32, cf as u32]);
    }
    // V-face: from a corner of v, the next one counter-clockwise is the
    // other use of the edge that comes into v.
    for v in 0..t.num_vertices() {
        if t.is_boundary_vertex(v) || t.face_count(v) == 0 {
            continue;
        }
        let start = t.vertex_corners(v)[0] as usize;
        let mut ring = vec![start as u32];
        let mut c = start;
        loop {
            let incoming = t.prev_corner(c);
            let e = t.corner_edges()[incoming] as usize;
            let other = *t.edge_corners(e).iter().find(|&&x| x as usize != incoming).expect("interior edge") as usize;
            c = other;
            if c == start {
                break;
            }
            ring.push(c as u32);
        }
        faces.push(ring);
    }
    Direct { triplets, faces }
}

fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn worked_example_of_the_tutorial() {
    // A quad (0 1 2 3) and a triangle (2 1 4) sharing the edge 1-2, as
    // drawn in the tutorial.
    let mesh = Mesh::from_faces(5, &[vec![0u32, 1, 2, 3], vec![2, 1, 4]]).expect("mesh");
    let m = mesh.topology().mesh_matrix().expect("M");
    let orders = doo_sabin::face_orders(m.as_ref(), Par::Rayon);
    assert_eq!(orders, [4, 3]);
    let k = doo_sabin::corner_matrix(m.ncols(), &orders).expect("K");
    assert_eq!((k.indices(), k.values()), (&[0u32, 0, 0, 0, 1, 1, 1][..], &[1u32, 2, 3, 4, 1, 2, 3][..]));
    let r = doo_sabin::corner_points(m.as_ref(), &orders, Par::Rayon).expect("R");
    let (a, b, c, d, e) = (9.0 / 16.0, 3.0 / 16.0, 1.0 / 16.0, 2.0 / 3.0, 1.0 / 6.0);
    let expected = ndarray::array![
        [a, b, c, b, 0.0],
        [b, a, b, c, 0.0],
        [c, b, a, b, 0.0],
        [b, c, b, a, 0.0],
        [0.0, e, d, 0.0, e],
        [0.0, d, e, 0.0, e],
        [0.0, e, e, 0.0, d],
    ];
    assert!(max_abs_diff(&r.as_ref().to_dense(), &expected) <= f64::EPSILON);
    let m_rows = m.to_csr(Par::Rayon);
    let quads = doo_sabin::edge_faces(m.as_ref(), m_rows.as_ref(), &orders, Par::Rayon).expect("E-faces");
    assert_eq!(quads, [[5, 4, 2, 1]]);
    let plan = DOO_SABIN.build(&mesh, 1, Par::Rayon).expect("plan");
    assert_eq!(faces_of(&plan, 1), [vec![0, 1, 2, 3], vec![4, 5, 6], vec![5, 4, 2, 1]]);
}

#[test]
fn counts_after_one_step_on_closed_meshes() {
    let (cube, _) = cube();
    let (prism, _) = pentagonal_prism().expect("prism");
    let (torus, _) = torus(5, 7);
    let mut meshes = vec![("cube", cube), ("prism", prism), ("octahedron", octahedron()), ("torus", torus)];
    // A mixed mesh: the prism after one step has pentagons, quads and triangles.
    let mixed =
        DOO_SABIN.build(&meshes[1].1, 1, Par::Rayon).expect("prism L1").refined(1, Par::Rayon).expect("L1").clone();
    meshes.push(("prism L1", mixed));
    for (name, mesh) in &meshes {
        let t = mesh.topology();
        let (v, e, f, c) = (t.num_vertices(), t.num_edges(), t.num_faces(), t.num_corners());
        let plan = DOO_SABIN.build(mesh, 1, Par::Rayon).expect(name);
        let fine = plan.refined(1, Par::Rayon).expect("level 1").topology();
        assert_eq!(fine.num_vertices(), c, "{name}: one vertex per corner");
        assert_eq!(fine.num_faces(), f + e + v, "{name}: F' = F + E + V");
        assert_eq!(fine.num_edges(), 2 * c, "{name}: every new vertex has valence 4");
        assert!(fine.is_closed() && fine.is_manifold(), "{name}: closed manifold");
        assert!((0..fine.num_vertices()).all(|x| fine.valence(x) == 4), "{name}: valence 4");
        // F-faces keep their orders, E-faces are quads, V-faces have the valence.
        for k in 0..f {
            assert_eq!(fine.face_order(k), t.face_order(k), "{name}: F-face {k}");
        }
        for k in f..f + e {
            assert_eq!(fine.face_order(k), 4, "{name}: E-face {k}");
        }
        for (x, k) in (f + e..f + e + v).enumerate() {
            assert_eq!(fine.face_order(k), t.valence(x), "{name}: V-face of vertex {x}");
        }
        let euler = |t: &Topology| t.num_vertices() as i64 - t.num_edges() as i64 + t.num_faces() as i64;
        assert_eq!(euler(fine), euler(t), "{name}: Euler characteristic");
    }
    // Two levels of the cube: 8 V, 12 E, 6 F -> 24, 48, 26 -> 96, 192, 98.
    let plan = DOO_SABIN.build(&meshes[0].1, 2, Par::Rayon).expect("cube L2");
    let sizes: Vec<_> = (0..=2)
        .map(|l| {
            let t = plan.refined(l, Par::Rayon).expect("level").topology();
            (t.num_vertices(), t.num_edges(), t.num_faces())
        })
        .collect();
    assert_eq!(sizes, [(8, 12, 6), (24, 48, 26), (96, 192, 98)]);
}

#[test]
fn every_refined_point_is_an_affine_combination() {
    let (prism, _) = pentagonal_prism().expect("prism");
    let (grid, _) = grid(3);
    for (name, mesh) in [("prism", prism), ("octahedron", octahedron()), ("grid", grid)] {
        let plan = DOO_SABIN.build(&mesh, 2, Par::Rayon).expect(name);
        for l in 0..2 {
            let r = plan.operator(l, Par::Rayon).expect("operator");
            assert_eq!(r.shape(), (plan.level_len(l + 1), plan.level_len(l)), "{name}: R_{l} shape");
            for i in 0..r.nrows() {
                let (cols, w) = r.row(i);
                let s: f64 = w.iter().sum();
                assert!((s - 1.0).abs() <= 4.0 * f64::EPSILON, "{name}: row {i} of R_{l} sums to {s}");
                assert!(w.iter().all(|&x| x > 0.0), "{name}: row {i} of R_{l} has a weight <= 0");
                // The point of a corner of a face of order n mixes exactly
                // the n vertices of that face.
                let face = plan.refined(l, Par::Rayon).expect("level").topology().corner_faces()[i] as usize;
                assert_eq!(cols.len(), plan.refined(l, Par::Rayon).expect("level").topology().face_order(face));
            }
        }
        // Affine invariance of the whole plan: translating the control
        // points translates the result.
        let x = control_data(mesh.num_vertices(), 3, 11);
        let shift = ndarray::array![[3.0, -2.0, 0.5]];
        let y = eval(&plan, x.view(), Par::Rayon).unwrap();
        let ys = eval(&plan, (&x + &shift).view(), Par::Rayon).unwrap();
        assert!(max_abs_diff(&(&y + &shift), &ys) < 1e-12, "{name}: not affine invariant");
    }
}

#[test]
fn regular_quads_have_the_biquadratic_weights() {
    // On an all-quad torus every vertex is regular: each corner point is
    // 9/16 of its own vertex, 3/16 of each neighbour, 1/16 of the opposite.
    let (mesh, _) = torus(6, 8);
    let plan = DOO_SABIN.build(&mesh, 2, Par::Rayon).expect("torus");
    for l in 0..2 {
        let r = plan.operator(l, Par::Rayon).expect("operator");
        let t = plan.refined(l, Par::Rayon).expect("level").topology();
        for c in 0..t.num_corners() {
            let own = t.face_verts()[c];
            let opposite = t.face_verts()[t.next_corner(t.next_corner(c))];
            let (cols, w) = r.row(c);
            assert_eq!(cols.len(), 4);
            for (&j, &x) in cols.iter().zip(w) {
                let expected = if j == own {
                    9.0 / 16.0
                } else if j == opposite {
                    1.0 / 16.0
                } else {
                    3.0 / 16.0
                };
                assert_eq!(x, expected, "R_{l}({c}, {j})");
            }
        }
    }
}

#[test]
fn separable_data_on_a_torus_gives_tensor_product_chaikin() {
    // The biquadratic B-spline is the tensor product of quadratic ones, and
    // Doo–Sabin on regular quads refines it as Chaikin does in each
    // direction: for data g_i h_j the corner of face (i, j) at (i + di,
    // j + dj) is (Chaikin of g)(Chaikin of h).
    let (n, m) = (7, 9);
    let (mesh, _) = torus(n, m);
    let g: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() + 2.0).collect();
    let h: Vec<f64> = (0..m).map(|j| (j as f64 * 1.3).cos() - 0.5).collect();
    let x = Array2::from_shape_fn((n * m, 1), |(v, _)| g[v / m] * h[v % m]);
    let plan = DOO_SABIN.build(&mesh, 1, Par::Rayon).expect("torus");
    let y = eval(&plan, x.view(), Par::Rayon).unwrap();
    let chaikin = |s: &[f64], i: usize, toward_next: bool| {
        let (a, b) = (s[i % s.len()], s[(i + 1) % s.len()]);
        if toward_next { 0.25 * a + 0.75 * b } else { 0.75 * a + 0.25 * b }
    };
    // Corners of face (i, j) in order: (i, j) (i+1, j) (i+1, j+1) (i, j+1).
    for i in 0..n {
        for j in 0..m {
            let f = i * m + j;
            for (a, (di, dj)) in [(false, false), (true, false), (true, true), (false, true)].into_iter().enumerate() {
                let expected = chaikin(&g, i, di) * chaikin(&h, j, dj);
                let got = y[(4 * f + a, 0)];
                assert!((got - expected).abs() < 1e-14, "face ({i}, {j}) corner {a}: {got} vs {expected}");
            }
        }
    }
}

#[test]
fn open_grid_keeps_boundaries_out_of_e_and_v_faces() {
    // 3 x 3 quads: 16 vertices, 24 edges (12 interior), 4 interior vertices.
    let (mesh, p) = grid(3);
    let t = mesh.topology();
    assert_eq!((interior_edges(t), interior_vertices(t)), (12, 4));
    let plan = DOO_SABIN.build(&mesh, 2, Par::Rayon).expect("grid");
    let fine = plan.refined(1, Par::Rayon).expect("level 1").topology();
    assert_eq!(fine.num_vertices(), 36);
    assert_eq!(fine.num_faces(), 9 + 12 + 4, "F-faces + E-faces of interior edges + V-faces of interior vertices");
    assert!(fine.is_quad_only() && fine.is_manifold() && !fine.is_closed());
    // Every corner point of a planar regular grid sits a quarter of the way
    // to its face's centre: the refined points are the regular grid
    // 0.25, 0.75, …, 2.75 in x and y, each once.
    let y = eval(&plan, p.view(), Par::Rayon).unwrap();
    let level1 = {
        let one = DOO_SABIN.build(&mesh, 1, Par::Rayon).expect("grid L1");
        eval(&one, p.view(), Par::Rayon).unwrap()
    };
    let mut seen = [false; 36];
    for row in level1.rows() {
        let (gx, gy) = ((row[0] - 0.25) / 0.5, (row[1] - 0.25) / 0.5);
        assert!(gx.fract() == 0.0 && gy.fract() == 0.0 && row[2] == 0.0, "{row} is not on the quarter grid");
        let k = gy as usize * 6 + gx as usize;
        assert!(!seen[k], "{row} twice");
        seen[k] = true;
    }
    // Level 2: 6 x 6 points -> 5 x 5 interior-edge and 4 x 4 vertex faces,
    // all points on the grid 0.375 + 0.25 k (the boundary recedes).
    let fine2 = plan.refined(2, Par::Rayon).expect("level 2").topology();
    assert_eq!(fine2.num_faces(), 25 + 2 * 5 * 4 + 16);
    for row in y.rows() {
        let (gx, gy) = ((row[0] - 0.375) / 0.25, (row[1] - 0.375) / 0.25);
        assert!(gx.fract() == 0.0 && gy.fract() == 0.0 && (0.0..10.0).contains(&gx) && (0.0..10.0).contains(&gy));
    }
    // A single face has no interior edge or vertex: it is shrunk in place.
    let quad = Mesh::from_faces(4, &[[0u32, 1, 2, 3]]).expect("quad");
    let plan = DOO_SABIN.build(&quad, 3, Par::Rayon).expect("quad");
    assert_eq!(plan.refined(3, Par::Rayon).expect("L3").num_faces(), 1);
}

#[test]
fn same_bits_for_every_thread_count() {
    // Large enough that the products and SpMVs are cut into several blocks.
    let (mesh, _) = torus(48, 64);
    let x = control_data(mesh.num_vertices(), 3, 5);
    let run = |par: Par| {
        let plan = DOO_SABIN.build(&mesh, 2, par).expect("build");
        let y = eval(&plan, x.view(), par).unwrap();
        let ops: Vec<CsrMat<f64>> = (0..2).map(|l| plan.operator(l, par).expect("operator")).collect();
        (faces_of(&plan, 2), ops, y)
    };
    let (faces, ops, y) = with_threads(1, || run(Par::Rayon));
    let bits = |a: &[f64]| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (threads, par) in [(1, Par::Seq), (2, Par::Rayon), (3, Par::Rayon), (4, Par::Rayon)] {
        let (f2, o2, y2) = with_threads(threads, || run(par));
        assert_eq!(f2, faces, "{threads} threads ({par:?}): faces");
        for (a, b) in ops.iter().zip(&o2) {
            assert_eq!((a.ptr(), a.indices()), (b.ptr(), b.indices()), "{threads} threads: pattern");
            assert_eq!(bits(a.values()), bits(b.values()), "{threads} threads: weights");
        }
        assert_eq!(bits(y.as_slice().expect("standard")), bits(y2.as_slice().expect("standard")), "{threads} threads");
    }
}

#[test]
fn algebra_matches_a_hand_written_loop() {
    let (cube, _) = cube();
    let (prism, _) = pentagonal_prism().expect("prism");
    let (torus, _) = torus(4, 5);
    let (grid, _) = grid(4);
    for (name, mesh) in
        [("cube", cube), ("prism", prism), ("octahedron", octahedron()), ("torus", torus), ("grid", grid)]
    {
        let plan = DOO_SABIN.build(&mesh, 2, Par::Rayon).expect(name);
        let mut data = control_data(mesh.num_vertices(), 3, 3);
        let mut direct = data.clone();
        for l in 0..2 {
            let t = plan.refined(l, Par::Rayon).expect("level").topology();
            let d = direct_step(t);
            // The matrix: same pattern, same weights up to rounding.
            let expected = CsrMat::try_from_triplets(t.num_corners(), t.num_vertices(), &d.triplets).expect("direct R");
            let r = plan.operator(l, Par::Rayon).expect("operator");
            assert_eq!((r.ptr(), r.indices()), (expected.ptr(), expected.indices()), "{name}: R_{l} pattern");
            for (a, b) in r.values().iter().zip(expected.values()) {
                assert!((a - b).abs() <= 2.0 * f64::EPSILON, "{name}: R_{l} weight {a} vs {b}");
            }
            // The faces: identical, in the same order.
            assert_eq!(faces_of(&plan, l + 1), d.faces, "{name}: faces of level {}", l + 1);
            // The data: the loop applies the weights by hand.
            let mut next = Array2::zeros((t.num_corners(), 3));
            for &(i, j, w) in &d.triplets {
                for k in 0..3 {
                    next[(i, k)] += w * direct[(j, k)];
                }
            }
            direct = next;
        }
        data = eval(&plan, data.view(), Par::Rayon).unwrap();
        assert!(max_abs_diff(&data, &direct) < 1e-12, "{name}: positions differ");
    }
}

#[test]
fn plan_contract_holds() {
    let (prism, _) = pentagonal_prism().expect("prism");
    let (grid, _) = grid(3);
    check_contract(&DOO_SABIN, &prism, 2, 1e-12);
    check_contract(&DOO_SABIN, &octahedron(), 2, 1e-12);
    check_contract(&DOO_SABIN, &grid, 2, 1e-12);
    check_contract(&DOO_SABIN, &prism, 0, 1e-12);
    check_dyn(&DOO_SABIN, &prism, 2);
    check_child_points(&DOO_SABIN.build(&grid, 2, Par::Rayon).expect("grid"));
}

#[test]
fn refinement_matrix_exports() {
    let (prism, _) = pentagonal_prism().expect("prism");
    let plan = DOO_SABIN.build(&prism, 1, Par::Rayon).expect("prism");
    let r = plan.operator(0, Par::Rayon).expect("operator");
    // Matrix Market: exact round trip.
    let mut text = Vec::new();
    mtx::write_matrix_market(r.as_ref(), &mut text).expect("write");
    let back = mtx::read_matrix_market(&text[..]).expect("read");
    assert_eq!((back.ptr(), back.indices()), (r.ptr(), r.indices()));
    assert!(back.values().iter().zip(r.values()).all(|(a, b)| a.to_bits() == b.to_bits()));
    // sprs: same matrix.
    let s = r.to_sprs();
    assert_eq!((s.rows(), s.cols(), s.nnz()), (r.nrows(), r.ncols(), r.nnz()));
    let again = CsrMat::try_from_sprs(&s).expect("from sprs");
    assert_eq!(again.as_ref(), r.as_ref());
    // The example's run writes the mesh and the composed matrix.
    let dir = std::env::temp_dir().join(format!("subla-doo-sabin-test-{}", std::process::id()));
    let summary = doo_sabin::run(Some(&dir)).expect("run");
    let sizes: Vec<_> = summary.levels.iter().map(|l| (l.vertices, l.edges, l.faces)).collect();
    assert_eq!(sizes, [(10, 15, 7), (30, 60, 32), (120, 240, 122)]);
    assert!(summary.row_sum_error <= 4.0 * f64::EPSILON && summary.eval_difference < 1e-12);
    let composed = mtx::read_matrix_market_file(dir.join("R.mtx")).expect("R.mtx");
    assert_eq!((composed.shape(), composed.nnz()), ((120, 10), summary.composed_nnz));
    let data =
        subla::mesh::obj::read_obj(dir.join("doo_sabin_L2.obj"), subla::mesh::Validation::Manifold).expect("obj");
    assert_eq!((data.mesh.num_vertices(), data.mesh.num_faces()), (120, 122));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn bad_input_is_an_error() {
    // Three faces on one edge.
    let fin = Mesh::from_faces(6, &[[0u32, 1, 2], [1, 0, 3], [0, 1, 4]]).expect("accepted as OpenSubdiv does");
    assert!(matches!(
        DOO_SABIN.build(&fin, 1, Par::Rayon),
        Err(SchemeError::Mesh(MeshError::NonManifoldEdge { .. } | MeshError::InconsistentOrientation { .. }))
    ));
    // A pillow: two quads glued along all edges; every vertex is interior in
    // two faces, so its V-face would be a 2-gon.
    let pillow = Mesh::from_faces(4, &[[0u32, 1, 2, 3], [0, 3, 2, 1]]).expect("pillow");
    match DOO_SABIN.build(&pillow, 1, Par::Rayon) {
        Err(SchemeError::Scheme { scheme: "doo-sabin", source }) => assert!(
            matches!(source.downcast_ref::<DooSabinError>(), Some(DooSabinError::TwoFaces { vertex: 0, faces: 2 })),
            "{source}"
        ),
        other => panic!("expected an error naming vertex 0, got {other:?}"),
    }
    // Asking for a level that does not exist.
    let (cube, _) = cube();
    let plan = DOO_SABIN.build(&cube, 1, Par::Rayon).expect("cube");
    assert!(matches!(plan.operator(1, Par::Rayon), Err(SchemeError::NoSuchLevel { level: 1, levels: 1 })));
}

/// Doo–Sabin's spectrum around a `k`-sided face (Doo & Sabin 1978): the
/// `k`-gon's corners are refined from its own corners alone, by a circulant
/// whose eigenvalues are 1 (`ω = 0`), ½ (`ω = 1, k − 1`) and ¼ (every other
/// frequency); with the ring of faces around it, 1 stays simple and ½ is
/// the subdominant pair with Fourier index 1, the classical conditions hold,
/// the limit of the face's centre is the average of its corners, the
/// tangent masks are left eigenvectors of ½, and the whole spectrum (the
/// ring included) is powers of ½.
#[test]
fn spectrum_around_a_face() {
    use subla::analysis::{Configuration, DiskFaces, local_subdivision_matrix_at, spectrum};
    for k in 3..=12 {
        let s = local_subdivision_matrix_at(&DOO_SABIN, DiskFaces::Quads, Configuration::Face, k, 1).expect("matrix");
        assert_eq!(s.matrix.shape(), (4 * k, 4 * k));
        assert!(s.is_block_circulant(), "k {k}");
        let d = s.matrix.to_dense();
        // The k-gon's rows read its corners only; the circulant's weights.
        for r in 0..k {
            for c in 0..4 * k {
                let want = if c >= k {
                    0.0
                } else {
                    let dist = (c + k - r) % k;
                    let dist = dist.min(k - dist);
                    if dist == 0 {
                        0.25 + 5.0 / (4.0 * k as f64)
                    } else {
                        (3.0 + 2.0 * (std::f64::consts::TAU * dist as f64 / k as f64).cos()) / (4.0 * k as f64)
                    }
                };
                assert!((d[(r, c)] - want).abs() < 1e-14, "k {k}: ({r}, {c}) {} vs {want}", d[(r, c)]);
            }
        }
        let sp = spectrum(&s).expect("spectrum");
        assert!((sp.values[0].value.re - 1.0).abs() < 1e-12);
        for e in &sp.values[1..3] {
            assert!((e.value.re - 0.5).abs() < 1e-12 && e.value.im.abs() < 1e-12, "k {k}: {:?}", sp.values);
        }
        let mut w = [sp.values[1].fourier.unwrap(), sp.values[2].fourier.unwrap()];
        w.sort_unstable();
        assert_eq!(w, [1, k - 1]);
        // ¼ is a repeated, defective eigenvalue: computed to about the
        // square root of the rounding.
        let quarters = sp.values.iter().filter(|e| (e.value - 0.25).norm() < 1e-7).count();
        assert!(quarters >= k - 3, "k {k}: {quarters} quarters in {:?}", sp.values);
        // The whole spectrum is powers of ½ (and 0 at valence 3).
        for e in &sp.values {
            assert!(
                [1.0, 0.5, 0.25, 0.125, 0.0625, 0.0].iter().any(|&p| (e.value - p).norm() < 1e-7),
                "k {k}: {:?}",
                e.value
            );
        }
        assert!(sp.conditions().all(), "k {k}: {:?}", sp.values);
        let mask = s.limit_mask().expect("limit mask");
        for (p, &m) in mask.iter().enumerate() {
            let want = if p < k { 1.0 / k as f64 } else { 0.0 };
            assert!((m - want).abs() < 1e-12, "k {k}: {mask:?}");
        }
        let [t0, t1] = s.tangent_masks().expect("tangent masks");
        for t in [&t0, &t1] {
            assert!(t.iter().sum::<f64>().abs() < 1e-10);
            for c in 0..4 * k {
                let lt: f64 = (0..4 * k).map(|r| t[r] * d[(r, c)]).sum();
                assert!((lt - 0.5 * t[c]).abs() < 1e-10);
            }
        }
    }
    // Triangles have no face configuration; a primal scheme has no corner
    // points.
    assert!(matches!(
        local_subdivision_matrix_at(&DOO_SABIN, DiskFaces::Triangles, Configuration::Face, 5, 1),
        Err(subla::analysis::AnalysisError::UnsupportedConfiguration { .. })
    ));
    assert!(matches!(
        local_subdivision_matrix_at(&subla::CatmarkSlak, DiskFaces::Quads, Configuration::Face, 5, 1),
        Err(subla::analysis::AnalysisError::MissingPoint { .. })
    ));
}
