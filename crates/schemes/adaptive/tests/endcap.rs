//! End-cap conversions checked against independently built meshes: the
//! source points are gathered by walking real quad meshes, and the results
//! are compared with closed forms (B-spline to Bezier conversion, mirrored
//! phantom points, the textbook Catmull-Clark limit masks).

// Grid and matrix code reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeSet, HashMap};

use subla_adaptive::endcap::{Corner, Rows, SourcePatch, bspline, gregory_basis, linear};

type P3 = [f64; 3];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0
    }
    fn point(&mut self) -> P3 {
        [self.next(), self.next(), self.next()]
    }
}

fn add(a: P3, b: P3, s: f64) -> P3 {
    [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]]
}
fn sub(a: P3, b: P3) -> P3 {
    add(a, b, -1.0)
}
fn dist(a: P3, b: P3) -> f64 {
    let d = sub(a, b);
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}
fn dot(a: P3, b: P3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: P3, b: P3) -> P3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// A quad mesh with counter-clockwise faces and a set of infinitely sharp
/// edges (unordered vertex pairs).
struct Mesh {
    faces: Vec<[usize; 4]>,
    pos: Vec<P3>,
    sharp: BTreeSet<(usize, usize)>,
}

fn key(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

impl Mesh {
    fn check_manifold(&self) {
        let mut seen = BTreeSet::new();
        for f in &self.faces {
            for k in 0..4 {
                assert!(seen.insert((f[k], f[(k + 1) % 4])), "test mesh is not an oriented manifold");
            }
        }
    }

    fn face_with_leading(&self, v: usize, to: usize) -> Option<(usize, usize)> {
        self.faces
            .iter()
            .enumerate()
            .find_map(|(g, f)| (0..4).find(|&k| f[k] == v && f[(k + 1) % 4] == to).map(|k| (g, k)))
    }
    fn face_with_trailing(&self, v: usize, to: usize) -> Option<(usize, usize)> {
        self.faces
            .iter()
            .enumerate()
            .find_map(|(g, f)| (0..4).find(|&k| f[k] == v && f[(k + 3) % 4] == to).map(|k| (g, k)))
    }
    fn sharp_edges_at(&self, v: usize) -> usize {
        self.sharp.iter().filter(|e| e.0 == v || e.1 == v).count()
    }

    /// Corner `c` of face `face` described as the module documentation says,
    /// with its one-ring; interior vertices start their face list `shift`
    /// faces before the patch face (clockwise).
    fn corner(&self, face: usize, c: usize, shift: usize) -> (Corner, Vec<usize>) {
        let v = self.faces[face][c];
        let dart = self.sharp_edges_at(v) == 1;
        // Infinitely sharp edges cut the ring, except at a dart.
        let cut = |a: usize, b: usize| !dart && self.sharp.contains(&key(a, b));
        let step_next = |(g, k): (usize, usize)| {
            let to = self.faces[g][(k + 3) % 4];
            if cut(v, to) { None } else { self.face_with_leading(v, to) }
        };
        let step_prev = |(g, k): (usize, usize)| {
            let to = self.faces[g][(k + 1) % 4];
            if cut(v, to) { None } else { self.face_with_trailing(v, to) }
        };
        let here = (face, c);
        // Find the start: walk back to a boundary, or `shift` faces round.
        let mut start = here;
        let mut boundary = false;
        loop {
            match step_prev(start) {
                None => {
                    boundary = true;
                    break;
                }
                Some(p) if p == here => {
                    start = here;
                    break;
                }
                Some(p) => start = p,
            }
        }
        if !boundary {
            start = here;
            for _ in 0..shift {
                start = step_prev(start).unwrap();
            }
        }
        let mut faces = vec![start];
        while let Some(n) = step_next(*faces.last().unwrap()) {
            if n == start {
                break;
            }
            faces.push(n);
        }
        let mut ring = Vec::new();
        for &(g, k) in &faces {
            ring.push(self.faces[g][(k + 1) % 4]);
            ring.push(self.faces[g][(k + 2) % 4]);
        }
        if boundary {
            let (g, k) = *faces.last().unwrap();
            ring.push(self.faces[g][(k + 3) % 4]);
        }
        let patch_face = faces.iter().position(|&f| f == here).unwrap();
        let mesh_boundary_edges = self.boundary_neighbours(v).len();
        let sharp_edges = self.sharp_edges_at(v) + mesh_boundary_edges;
        let corner = Corner {
            num_faces: faces.len() as u16,
            patch_face: patch_face as u16,
            boundary,
            // A corner (one face on the boundary) or more than a crease.
            sharp: (boundary && faces.len() == 1 && self.incident_faces(v) == 1) || (sharp_edges > 2),
            dart: dart && mesh_boundary_edges == 0,
        };
        (corner, ring)
    }

    fn incident_faces(&self, v: usize) -> usize {
        self.faces.iter().filter(|f| f.contains(&v)).count()
    }

    /// Neighbours joined to `v` by an edge with a single face.
    fn boundary_neighbours(&self, v: usize) -> Vec<usize> {
        let mut count: HashMap<(usize, usize), usize> = HashMap::new();
        for f in &self.faces {
            for k in 0..4 {
                *count.entry(key(f[k], f[(k + 1) % 4])).or_default() += 1;
            }
        }
        count
            .iter()
            .filter(|(e, n)| **n == 1 && (e.0 == v || e.1 == v))
            .map(|(e, _)| if e.0 == v { e.1 } else { e.0 })
            .collect()
    }

    /// Textbook smooth interior limit: `(n^2 v + 4 sum(e) + sum(f)) / (n (n + 5))`.
    fn interior_limit(&self, v: usize) -> P3 {
        let mut edge = BTreeSet::new();
        let mut opposite = Vec::new();
        let mut n = 0.0;
        for f in &self.faces {
            if let Some(k) = f.iter().position(|&x| x == v) {
                n += 1.0;
                edge.insert(f[(k + 1) % 4]);
                edge.insert(f[(k + 3) % 4]);
                opposite.push(f[(k + 2) % 4]);
            }
        }
        let mut sum = [0.0; 3];
        sum = add(sum, self.pos[v], n * n);
        for &e in &edge {
            sum = add(sum, self.pos[e], 4.0);
        }
        for &f in &opposite {
            sum = add(sum, self.pos[f], 1.0);
        }
        add([0.0; 3], sum, 1.0 / (n * (n + 5.0)))
    }

    /// Normal of the plane of the end caps' edge points at a smooth interior
    /// vertex, from the ordered ring: the tangents `sum a cos(t_i) e_i +
    /// (cos(t_i) + cos(t_{i+1})) f_i` and their sine counterparts, with the
    /// edge-to-face ratio `a`. The exact limit tangents (Halstead, Kass and
    /// DeRose 1993) have `a = 1 + cos t + cos(t/2) sqrt(2 (9 + cos t))`;
    /// OpenSubdiv's end caps use `a = 4 (1 + cos t)`, equal only at valence 4.
    fn tangent_plane_normal(&self, ring: &[usize], exact: bool) -> P3 {
        let n = ring.len() / 2;
        let t = 2.0 * std::f64::consts::PI / n as f64;
        let a = if exact {
            1.0 + t.cos() + (t / 2.0).cos() * (2.0 * (9.0 + t.cos())).sqrt()
        } else {
            4.0 * (1.0 + t.cos())
        };
        let mut t1 = [0.0; 3];
        let mut t2 = [0.0; 3];
        for i in 0..n {
            let (ci, cj) = ((t * i as f64).cos(), (t * (i + 1) as f64).cos());
            let (si, sj) = ((t * i as f64).sin(), (t * (i + 1) as f64).sin());
            t1 = add(t1, self.pos[ring[2 * i]], a * ci);
            t1 = add(t1, self.pos[ring[2 * i + 1]], ci + cj);
            t2 = add(t2, self.pos[ring[2 * i]], a * si);
            t2 = add(t2, self.pos[ring[2 * i + 1]], si + sj);
        }
        cross(t1, t2)
    }
}

/// A `w` by `h` vertex grid with positions `(i, j, random)`.
fn grid(w: usize, h: usize, rng: &mut Rng) -> Mesh {
    let id = |i: usize, j: usize| j * w + i;
    let mut faces = Vec::new();
    for j in 0..h - 1 {
        for i in 0..w - 1 {
            faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    let pos = (0..w * h).map(|v| [(v % w) as f64, (v / w) as f64, rng.next()]).collect();
    Mesh { faces, pos, sharp: BTreeSet::new() }
}

#[derive(Clone, Copy, Debug)]
enum Spec {
    /// Interior corner with this many faces (2 or more).
    Interior(usize),
    /// Boundary corner: fan faces after the previous edge's face and before
    /// the next edge's face.
    Boundary(usize, usize),
}

/// The neighbourhood of a quad patch face `[0, 1, 2, 3]` (face 0) with the
/// given corner configuration; `edge_face[c]` says whether an adjacent face
/// lies across the patch edge from corner `c` to `c + 1`.
fn neighbourhood(spec: [Spec; 4], edge_face: [bool; 4], rng: &mut Rng) -> Mesh {
    let mut alias: Vec<usize> = (0..4).collect();
    let fresh = |alias: &mut Vec<usize>| {
        alias.push(alias.len());
        alias.len() - 1
    };
    fn find(alias: &[usize], mut x: usize) -> usize {
        while alias[x] != x {
            x = alias[x];
        }
        x
    }
    let prev = |c: usize| (c + 3) % 4;
    let next = |c: usize| (c + 1) % 4;
    let mut faces = vec![[0, 1, 2, 3]];
    // a[c], b[c]: the vertices of the face across edge (c, c + 1) next to c
    // and c + 1.
    let mut a = [usize::MAX; 4];
    let mut b = [usize::MAX; 4];
    let mut covered = [false; 4];
    for c in 0..4 {
        if let Spec::Interior(2) = spec[c] {
            assert!(edge_face[c] && edge_face[prev(c)]);
            let y = fresh(&mut alias);
            a[c] = prev(c);
            b[c] = y;
            a[prev(c)] = y;
            b[prev(c)] = next(c);
            covered[c] = true;
            covered[prev(c)] = true;
            faces.push([next(c), c, prev(c), y]);
        }
    }
    for c in 0..4 {
        if edge_face[c] && !covered[c] {
            a[c] = fresh(&mut alias);
            b[c] = fresh(&mut alias);
        }
    }
    for c in 0..4 {
        if let Spec::Interior(3) = spec[c] {
            let (x, y) = (find(&alias, a[c]), find(&alias, b[prev(c)]));
            alias[x] = y;
        }
    }
    for c in 0..4 {
        if edge_face[c] && !covered[c] {
            faces.push([next(c), c, a[c], b[c]]);
        }
    }
    for c in 0..4 {
        match spec[c] {
            Spec::Interior(2) | Spec::Interior(3) => {}
            Spec::Interior(n) => {
                assert!(edge_face[c] && edge_face[prev(c)]);
                let m = n - 3;
                let mut u = b[prev(c)];
                for j in 0..m {
                    let x = fresh(&mut alias);
                    let w = if j + 1 == m { a[c] } else { fresh(&mut alias) };
                    faces.push([c, u, x, w]);
                    u = w;
                }
            }
            Spec::Boundary(before, after) => {
                assert!(before == 0 || edge_face[prev(c)]);
                assert!(after == 0 || edge_face[c]);
                let mut u = if before > 0 { b[prev(c)] } else { 0 };
                for _ in 0..before {
                    let x = fresh(&mut alias);
                    let w = fresh(&mut alias);
                    faces.push([c, u, x, w]);
                    u = w;
                }
                let mut chain = vec![a[c]];
                for _ in 0..after {
                    chain.push(fresh(&mut alias));
                }
                for j in (0..after).rev() {
                    let x = fresh(&mut alias);
                    faces.push([c, chain[j + 1], x, chain[j]]);
                }
            }
        }
    }
    let faces = faces.into_iter().map(|f| f.map(|v| find(&alias, v))).collect();
    let pos = (0..alias.len()).map(|_| rng.point()).collect();
    let mesh = Mesh { faces, pos, sharp: BTreeSet::new() };
    mesh.check_manifold();
    mesh
}

/// Gathers the patch of face `face` of `mesh` the way the module
/// documentation says and checks the source point contract on the way.
fn gather(mesh: &Mesh, face: usize, shift: usize) -> (SourcePatch, Vec<usize>, Vec<Vec<usize>>) {
    let mut corners = [Corner::default(); 4];
    let mut rings: Vec<Vec<usize>> = Vec::new();
    for (c, corner) in corners.iter_mut().enumerate() {
        let (k, ring) = mesh.corner(face, c, shift + c);
        *corner = k;
        rings.push(ring);
    }
    let patch = SourcePatch::new(corners);
    let source = patch.gather([&rings[0], &rings[1], &rings[2], &rings[3]]);
    assert_eq!(&source[..4], &mesh.faces[face][..], "source points 0..4 are the face's corners");
    // Every ring entry lands on a source point holding that very vertex, so
    // the overlaps the patch assumes between rings are the mesh's.
    let mut local = Vec::new();
    for (c, ring) in rings.iter().enumerate() {
        patch.corner_ring_points(c, &mut local);
        assert_eq!(local.len(), ring.len());
        for (&i, &v) in local.iter().zip(ring) {
            assert_eq!(source[i], v, "corner {c}: ring disagrees with the source points");
        }
        // The patch face's corners sit where the documentation says.
        let f = 2 * corners[c].patch_face as usize;
        assert_eq!(local[f], (c + 1) % 4);
        assert_eq!(local[f + 1], (c + 2) % 4);
        assert_eq!(local[(f + 2) % local.len()], (c + 3) % 4);
    }
    (patch, source, rings)
}

fn apply(rows: &Rows, r: usize, source: &[usize], pos: &[P3]) -> P3 {
    let (cols, ws) = rows.row(r);
    cols.iter().zip(ws).fold([0.0; 3], |acc, (&c, &w)| add(acc, pos[source[c as usize]], w))
}

fn check_rows(rows: &Rows, num_rows: usize, num_columns: usize) {
    assert_eq!(rows.num_rows(), num_rows);
    assert_eq!(rows.num_columns, num_columns);
    for r in 0..num_rows {
        let (cols, ws) = rows.row(r);
        let sum: f64 = ws.iter().sum();
        assert!((sum - 1.0).abs() < 1e-12, "row {r} sums to {sum}");
        let distinct: BTreeSet<u32> = cols.iter().copied().collect();
        assert_eq!(distinct.len(), cols.len(), "row {r} repeats a column");
        assert!(cols.iter().all(|&c| (c as usize) < num_columns));
    }
}

/// Bicubic Bezier points `b[j][i]` of the B-spline patch with control points
/// `x[j][i]` (row `j` along v).
fn bezier(x: &[[P3; 4]; 4]) -> [[P3; 4]; 4] {
    const M: [[f64; 4]; 4] = [
        [1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0, 0.0],
        [0.0, 4.0 / 6.0, 2.0 / 6.0, 0.0],
        [0.0, 2.0 / 6.0, 4.0 / 6.0, 0.0],
        [0.0, 1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0],
    ];
    let mut b = [[[0.0; 3]; 4]; 4];
    for j in 0..4 {
        for i in 0..4 {
            for l in 0..4 {
                for k in 0..4 {
                    b[j][i] = add(b[j][i], x[l][k], M[j][l] * M[i][k]);
                }
            }
        }
    }
    b
}

/// The Bezier grid position `(i, j)` of Gregory row `5c + k` (Fm shares Fp's).
fn gregory_slot(row: usize) -> (usize, usize) {
    const SLOTS: [[(usize, usize); 5]; 4] = [
        [(0, 0), (1, 0), (0, 1), (1, 1), (1, 1)],
        [(3, 0), (3, 1), (2, 0), (2, 1), (2, 1)],
        [(3, 3), (2, 3), (3, 2), (2, 2), (2, 2)],
        [(0, 3), (0, 2), (1, 3), (1, 2), (1, 2)],
    ];
    SLOTS[row / 5][row % 5]
}

fn assert_close(a: P3, b: P3, what: &str) {
    assert!(dist(a, b) < 1e-11, "{what}: {a:?} != {b:?}");
}

/// Checks the B-spline and Gregory end caps of a patch against the B-spline
/// control grid `x` that the patch should reproduce.
fn check_against_grid(rows_b: &Rows, rows_g: &Rows, source: &[usize], pos: &[P3], x: &[[P3; 4]; 4]) {
    for j in 0..4 {
        for i in 0..4 {
            assert_close(apply(rows_b, 4 * j + i, source, pos), x[j][i], "B-spline point");
        }
    }
    let b = bezier(x);
    for r in 0..20 {
        let (i, j) = gregory_slot(r);
        assert_close(apply(rows_g, r, source, pos), b[j][i], "Gregory point");
    }
}

#[test]
fn regular_interior_patch_is_reproduced() {
    let mut rng = Rng(1);
    let mesh = grid(4, 4, &mut rng);
    let face = 4; // the centre face, corners (1,1) (2,1) (2,2) (1,2)
    for shift in 0..4 {
        let (patch, source, _) = gather(&mesh, face, shift);
        assert_eq!(patch.num_source_points(), 16);
        let rows_b = bspline(&patch);
        let rows_g = gregory_basis(&patch);
        check_rows(&rows_b, 16, 16);
        check_rows(&rows_g, 20, 16);
        // Identity: each B-spline row is its own grid vertex.
        for r in 0..16 {
            let (cols, ws) = rows_b.row(r);
            for (&c, &w) in cols.iter().zip(ws) {
                let expect = if source[c as usize] == r { 1.0 } else { 0.0 };
                assert!((w - expect).abs() < 1e-12, "row {r} column {c}: {w}");
            }
        }
        let x = std::array::from_fn(|j| std::array::from_fn(|i| mesh.pos[4 * j + i]));
        check_against_grid(&rows_b, &rows_g, &source, &mesh.pos, &x);
    }
}

#[test]
fn regular_boundary_and_corner_patches_use_mirrored_phantom_points() {
    let mut rng = Rng(2);
    // Bottom-middle face of a 4 x 3 grid: row j = 0 is the boundary.
    let mesh = grid(4, 3, &mut rng);
    let (patch, source, _) = gather(&mesh, 1, 0);
    let rows_b = bspline(&patch);
    let rows_g = gregory_basis(&patch);
    check_rows(&rows_b, 16, patch.num_source_points());
    check_rows(&rows_g, 20, patch.num_source_points());
    let p = |i: usize, j: usize| mesh.pos[4 * j + i];
    let x: [[P3; 4]; 4] = std::array::from_fn(|j| {
        std::array::from_fn(|i| if j == 0 { sub(add(p(i, 0), p(i, 0), 1.0), p(i, 1)) } else { p(i, j - 1) })
    });
    check_against_grid(&rows_b, &rows_g, &source, &mesh.pos, &x);

    // Corner face of a 3 x 3 grid, its corner vertex interpolated.
    let mesh = grid(3, 3, &mut rng);
    let (patch, source, _) = gather(&mesh, 0, 0);
    assert!(patch.corners()[0].sharp && patch.corners()[0].num_faces == 1);
    let rows_b = bspline(&patch);
    let rows_g = gregory_basis(&patch);
    check_rows(&rows_b, 16, patch.num_source_points());
    check_rows(&rows_g, 20, patch.num_source_points());
    let p = |i: usize, j: usize| mesh.pos[3 * j + i];
    // Mirror along u first, then along v (the phantom corner follows).
    let row = |j: usize| -> [P3; 4] {
        let mut r = [[0.0; 3]; 4];
        for i in 0..3 {
            r[i + 1] = p(i, j);
        }
        r[0] = sub(add(r[1], r[1], 1.0), r[2]);
        r
    };
    let mut x = [[[0.0; 3]; 4]; 4];
    for j in 0..3 {
        x[j + 1] = row(j);
    }
    for i in 0..4 {
        x[0][i] = sub(add(x[1][i], x[1][i], 1.0), x[2][i]);
    }
    check_against_grid(&rows_b, &rows_g, &source, &mesh.pos, &x);
}

/// Checks every invariant that holds for any configuration: partition of
/// unity, limit positions, B-spline/Gregory consistency.
fn check_configuration(mesh: &Mesh, label: &str, distinct_sources: bool) {
    for shift in 0..3 {
        let (patch, source, rings) = gather(mesh, 0, shift);
        let n = patch.num_source_points();
        let distinct: BTreeSet<usize> = source.iter().copied().collect();
        if distinct_sources {
            assert_eq!(distinct.len(), n, "{label}: source points repeat");
        }
        let rows_g = gregory_basis(&patch);
        let rows_b = bspline(&patch);
        let rows_l = linear(&patch);
        check_rows(&rows_g, 20, n);
        check_rows(&rows_b, 16, n);
        check_rows(&rows_l, 4, n);

        let corners = *patch.corners();
        for c in 0..4 {
            let v = source[c];
            let k = corners[c];
            let p = apply(&rows_g, 5 * c, &source, &mesh.pos);
            let expect = if k.sharp {
                mesh.pos[v]
            } else if k.boundary {
                let (e0, e1) = (rings[c][0], *rings[c].last().unwrap());
                let mut s = add(mesh.pos[e0], mesh.pos[e1], 1.0);
                s = add(s, mesh.pos[v], 4.0);
                add([0.0; 3], s, 1.0 / 6.0)
            } else {
                mesh.interior_limit(v)
            };
            assert_close(p, expect, &format!("{label}: P of corner {c}"));
            assert_close(apply(&rows_l, c, &source, &mesh.pos), expect, "linear end cap");
            // Smooth interior edge points lie in one plane through P (the
            // exact limit tangent plane at valence 4 only).
            if !k.sharp && !k.boundary && k.num_faces > 2 {
                let exact = mesh.tangent_plane_normal(&rings[c], true);
                let normal = mesh.tangent_plane_normal(&rings[c], false);
                for e in [1, 2] {
                    let t = sub(apply(&rows_g, 5 * c + e, &source, &mesh.pos), p);
                    let cosine = |n: P3| dot(t, n) / (dist(t, [0.0; 3]) * dist(n, [0.0; 3]));
                    assert!(cosine(normal).abs() < 1e-10, "{label}: edge point off the plane");
                    if k.num_faces == 4 {
                        assert!(cosine(exact).abs() < 1e-10, "{label}: off the tangent plane");
                    }
                }
            }
        }

        // The B-spline patch's Bezier points are the Gregory points (using Fp
        // for the interior ones), or, with one isolated irregular corner,
        // agree with them at that corner.
        let x: [[P3; 4]; 4] =
            std::array::from_fn(|j| std::array::from_fn(|i| apply(&rows_b, 4 * j + i, &source, &mesh.pos)));
        let b = bezier(&x);
        let irregular: Vec<usize> = (0..4)
            .filter(|&c| {
                let k = corners[c];
                k.sharp || k.boundary || k.num_faces != 4
            })
            .collect();
        let isolated = irregular.len() == 1 && !corners.iter().any(|k| k.boundary || k.sharp);
        for r in 0..20 {
            if r % 5 == 4 || (isolated && r / 5 != irregular[0]) || (isolated && r % 5 == 3) {
                continue;
            }
            let (i, j) = gregory_slot(r);
            assert_close(b[j][i], apply(&rows_g, r, &source, &mesh.pos), &format!("{label}: Bezier of row {r}"));
        }
    }
}

#[test]
fn extraordinary_interior_corners() {
    let mut rng = Rng(3);
    let all = [true; 4];
    for spec in [
        [Spec::Interior(3), Spec::Interior(4), Spec::Interior(4), Spec::Interior(4)],
        [Spec::Interior(4), Spec::Interior(5), Spec::Interior(4), Spec::Interior(4)],
        [Spec::Interior(4), Spec::Interior(4), Spec::Interior(6), Spec::Interior(4)],
        [Spec::Interior(3), Spec::Interior(5), Spec::Interior(6), Spec::Interior(3)],
        [Spec::Interior(3), Spec::Interior(3), Spec::Interior(3), Spec::Interior(3)],
        [Spec::Interior(5), Spec::Interior(4), Spec::Interior(6), Spec::Interior(7)],
    ] {
        let mesh = neighbourhood(spec, all, &mut rng);
        check_configuration(&mesh, &format!("{spec:?}"), true);
    }
}

#[test]
fn valence_two_interior_corners() {
    let mut rng = Rng(4);
    for spec in [
        [Spec::Interior(2), Spec::Interior(4), Spec::Interior(4), Spec::Interior(4)],
        [Spec::Interior(2), Spec::Interior(4), Spec::Interior(3), Spec::Interior(4)],
        [Spec::Interior(4), Spec::Interior(5), Spec::Interior(4), Spec::Interior(2)],
        [Spec::Interior(4), Spec::Interior(4), Spec::Interior(2), Spec::Interior(4)],
    ] {
        let mesh = neighbourhood(spec, [true; 4], &mut rng);
        // Each valence-2 corner repeats its opposite corner in the neighbours' rings.
        let (patch, source, _) = gather(&mesh, 0, 0);
        assert_eq!(source.len(), patch.num_source_points());
        check_configuration(&mesh, &format!("{spec:?}"), true);
    }
}

#[test]
fn boundary_corners() {
    let mut rng = Rng(5);
    use Spec::{Boundary as B, Interior as I};
    for (spec, edges) in [
        // Boundary along the patch edge 0-1: corners with 2 and 3 faces.
        ([B(0, 0), B(0, 0), I(4), I(4)], [false, true, true, true]),
        ([B(1, 0), B(0, 1), I(4), I(4)], [false, true, true, true]),
        ([B(0, 0), B(0, 2), I(5), I(3)], [false, true, true, true]),
        // A corner patch (corner 0 has one face) next to irregular corners.
        ([B(0, 0), B(0, 1), I(5), B(0, 0)], [false, true, true, false]),
        // Boundary vertices touching the patch at a corner only.
        ([B(0, 0), I(4), I(4), I(4)], [true, true, true, true]),
        ([B(1, 1), I(3), I(5), I(4)], [true, true, true, true]),
        ([B(2, 0), I(4), B(0, 1), I(4)], [true, true, true, true]),
    ] {
        let mesh = neighbourhood(spec, edges, &mut rng);
        check_configuration(&mesh, &format!("{spec:?}"), true);
    }
}

#[test]
fn smooth_one_face_corner_is_the_boundary_curve_limit() {
    let mut rng = Rng(6);
    let mesh = neighbourhood(
        [Spec::Boundary(0, 0), Spec::Boundary(0, 0), Spec::Interior(4), Spec::Boundary(0, 0)],
        [false, true, true, false],
        &mut rng,
    );
    let (patch, source, _) = gather(&mesh, 0, 0);
    let mut corners = *patch.corners();
    assert!(corners[0].sharp);
    corners[0].sharp = false;
    let patch = SourcePatch::new(corners);
    let rows = gregory_basis(&patch);
    check_rows(&rows, 20, patch.num_source_points());
    let pos = |i: usize| mesh.pos[source[i]];
    let expect = add(add(add([0.0; 3], pos(1), 1.0 / 6.0), pos(3), 1.0 / 6.0), pos(0), 4.0 / 6.0);
    assert_close(apply(&rows, 0, &source, &mesh.pos), expect, "smooth corner");
}

/// A symmetric planar ring: Ep and Em leave P along the patch face's two
/// edges, at the same distance.
#[test]
fn edge_points_of_symmetric_rings() {
    let mut rng = Rng(7);
    use Spec::Interior as I;
    for (spec, edges) in [
        ([I(3), I(4), I(4), I(4)], [true; 4]),
        ([I(5), I(4), I(4), I(4)], [true; 4]),
        ([I(6), I(4), I(4), I(4)], [true; 4]),
    ] {
        let mut mesh = neighbourhood(spec, edges, &mut rng);
        for shift in 0..3 {
            let (corner, ring) = mesh.corner(0, 0, shift);
            let n = corner.num_faces as usize;
            let span = if corner.boundary { std::f64::consts::PI } else { 2.0 * std::f64::consts::PI };
            mesh.pos[0] = [0.0, 0.0, 0.0];
            for (k, &v) in ring.iter().enumerate() {
                let angle = span * (k as f64 / 2.0) / n as f64;
                let r = if k % 2 == 0 { 1.0 } else { 1.5 };
                mesh.pos[v] = [r * angle.cos(), r * angle.sin(), 0.0];
            }
            let (patch, source, rings) = gather(&mesh, 0, shift);
            let rows = gregory_basis(&patch);
            let p = apply(&rows, 0, &source, &mesh.pos);
            let ep = sub(apply(&rows, 1, &source, &mesh.pos), p);
            let em = sub(apply(&rows, 2, &source, &mesh.pos), p);
            let f = 2 * patch.corners()[0].patch_face as usize;
            let towards = |v: usize| sub(mesh.pos[v], mesh.pos[0]);
            for (e, dir) in [(ep, towards(rings[0][f])), (em, towards(rings[0][(f + 2) % rings[0].len()]))] {
                let c = cross(e, dir);
                assert!(dist(c, [0.0; 3]) < 1e-12 && dot(e, dir) > 0.0, "{spec:?}: {e:?} not along {dir:?}");
            }
            assert!((dist(ep, [0.0; 3]) - dist(em, [0.0; 3])).abs() < 1e-12);
        }
    }
}

/// An infinitely sharp crease along patch edge 1-2 ending at corner 1 (a
/// dart) through corner 2: corner 2 sees a partial ring (its span), and the
/// patch still numbers its source points consistently with the mesh.
#[test]
fn dart_and_crease_spans() {
    let mut rng = Rng(8);
    for straight in [false, true] {
        let mut mesh = neighbourhood(
            [Spec::Interior(4), Spec::Interior(5), Spec::Interior(4), Spec::Interior(4)],
            [true; 4],
            &mut rng,
        );
        // Continue the crease from corner 2 along the next edge round it
        // (2 to b) or straight on (2 to a, the far side of the face across).
        let (b, a) = mesh
            .faces
            .iter()
            .find_map(|f| (0..4).find(|&k| f[k] == 2 && f[(k + 1) % 4] == 1).map(|k| f[(k + 3) % 4]))
            .and_then(|b| mesh.face_with_leading(2, b).map(|(g, k)| (b, mesh.faces[g][(k + 3) % 4])))
            .unwrap();
        mesh.sharp.insert(key(1, 2));
        mesh.sharp.insert(key(2, if straight { a } else { b }));
        let (patch, source, _) = gather(&mesh, 0, 0);
        let corners = patch.corners();
        assert!(corners[1].dart && !corners[1].boundary);
        assert!(corners[2].boundary && !corners[2].sharp);
        assert_eq!(corners[2].num_faces, if straight { 2 } else { 3 });
        // With the crease turning next to the dart's ring, OpenSubdiv numbers
        // the vertex after the sharp edge twice: once in the dart's ring and
        // once in the crease corner's.
        let distinct: BTreeSet<usize> = source.iter().copied().collect();
        assert_eq!(distinct.len() + usize::from(!straight), source.len());
        check_configuration(&mesh, "dart", straight);
    }
}

/// Row sizes follow OpenSubdiv's matrix layout: for one isolated irregular
/// interior corner of valence n, `7 (2n + 1) + 85` Gregory entries and
/// `7 (2n + 1) + 11` B-spline entries (nine rows of a single source point).
#[test]
fn isolated_corner_row_sizes() {
    let mut rng = Rng(9);
    for n in [3, 5, 6, 8] {
        let mesh = neighbourhood(
            [Spec::Interior(4), Spec::Interior(4), Spec::Interior(n), Spec::Interior(4)],
            [true; 4],
            &mut rng,
        );
        let (patch, _, _) = gather(&mesh, 0, 1);
        let ring = 2 * n + 1;
        assert_eq!(gregory_basis(&patch).columns.len(), 7 * ring + 85);
        let b = bspline(&patch);
        assert_eq!(b.columns.len(), 7 * ring + 11);
        let single = (0..16).filter(|&r| b.row(r).0.len() == 1).count();
        assert_eq!(single, 9);
        assert_eq!(linear(&patch).row(2).0.len(), ring);
    }
}
