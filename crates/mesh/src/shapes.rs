//! Test meshes a researcher reaches for, published from the crate: the
//! platonic solids, `k`-gonal bipyramids and prisms (one vertex of any
//! valence), tori, grids with boundary, quad spheres, and disks around a
//! single extraordinary vertex of valence `k` — with creases on request.
//!
//! Every function returns a [`MeshData`] that passes
//! [`Validation::Manifold`], consistently oriented (counter-clockwise seen
//! from outside, or from `+z` for the flat ones), with exact positions
//! (closed solids on the unit sphere, flat ones in the `z = 0` plane). The
//! proptest strategies (`proptest_support`, feature `proptest-support`)
//! are built from the same shapes.
//!
//! | function | faces | vertices of note |
//! |---|---|---|
//! | [`tetrahedron`], [`octahedron`], [`icosahedron`] | triangles | valence 3, 4, 5 |
//! | [`cube`], [`dodecahedron`] | quads, pentagons | valence 3 |
//! | [`bipyramid`]`(k)` | triangles | two apexes of valence `k` |
//! | [`prism`]`(k)` | `k` quads and two `k`-gons | valence 3 |
//! | [`quad_torus`]`(m, n)`, [`triangle_torus`]`(m, n)` | quads, triangles | all valence 4, all 6 |
//! | [`quad_grid`]`(w, h)`, [`triangle_grid`]`(w, h)` | quads, triangles | a boundary |
//! | [`quad_sphere`]`(k)` | quads | eight of valence 3 |
//! | [`quad_disk`]`(k, rings)`, [`triangle_disk`]`(k, rings)` | quads, triangles | vertex 0 of valence `k`, every other interior vertex regular |
//! | [`half_disk`]`(quads, k, rings)` | quads or triangles | vertex 0 on the boundary with `k` faces |
//! | [`fan`]`(k)` | triangles | a centre of valence `k`, boundary |
//!
//! [`disk_coordinates`] and [`half_disk_coordinates`] give the disks'
//! vertices by sector and place.
//!
//! [`with_creases`] tags edges (by their vertex pairs) with a sharpness:
//!
//! ```
//! use subla_mesh::shapes;
//! let d = shapes::triangle_disk(7, 3)?; // valence 7 at vertex 0, 3 rings
//! assert_eq!(d.mesh.topology().vertex_edges(0).len(), 7);
//! // A crease through the centre: two of its spokes infinitely sharp.
//! let creased = shapes::with_creases(&d, &[(0, 1), (0, 4)], f32::INFINITY)?;
//! assert_eq!(creased.mesh.edge_sharpness().iter().filter(|s| s.is_infinite()).count(), 2);
//! # Ok::<(), subla_mesh::MeshError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::f64::consts::TAU;

use ndarray::Array2;
use subla_algebra::Par;

use crate::data::MeshData;
use crate::error::{MeshError, Result};
use crate::mesh::{MeshBuilder, Validation};

/// Faces and un-jittered positions of a surface under construction.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shape {
    pub(crate) faces: Vec<Vec<u32>>,
    pub(crate) points: Vec<[f64; 3]>,
}

impl Shape {
    pub(crate) fn add_point(&mut self, p: [f64; 3]) -> u32 {
        self.points.push(p);
        (self.points.len() - 1) as u32
    }

    /// A new point near the centroid of `vs`, moved off it by up to a tenth
    /// of its distance to the farthest of `vs` (so that centroids of
    /// collinear points or of centroids never coincide with other points).
    #[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
    pub(crate) fn add_derived(&mut self, vs: &[u32]) -> u32 {
        let c = self.centroid(vs);
        let r = vs
            .iter()
            .map(|&v| {
                let p = self.points[v as usize];
                ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2)).sqrt()
            })
            .fold(0.0, f64::max);
        let i = self.points.len() as u64;
        let mut k = 0;
        let p = c.map(|x| {
            k += 1;
            x + 0.1 * r * unit(0x5EED, 3 * i + k)
        });
        self.add_point(p)
    }

    pub(crate) fn centroid(&self, vs: &[u32]) -> [f64; 3] {
        let mut c = [0.0; 3];
        for &v in vs {
            for (ck, pk) in c.iter_mut().zip(self.points[v as usize]) {
                *ck += pk;
            }
        }
        c.map(|x| x / vs.len() as f64)
    }

    /// Undirected edges, as sorted pairs.
    #[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
    pub(crate) fn edge_set(&self) -> BTreeSet<(u32, u32)> {
        let mut s = BTreeSet::new();
        for f in &self.faces {
            for (i, &a) in f.iter().enumerate() {
                let b = f[(i + 1) % f.len()];
                s.insert((a.min(b), a.max(b)));
            }
        }
        s
    }

    /// Directed edge `(a, b)` → the face traversing it.
    pub(crate) fn directed(&self) -> HashMap<(u32, u32), usize> {
        let mut m = HashMap::new();
        for (fi, f) in self.faces.iter().enumerate() {
            for (i, &a) in f.iter().enumerate() {
                m.insert((a, f[(i + 1) % f.len()]), fi);
            }
        }
        m
    }

    /// Shortest edge length (for the jitter amplitude).
    #[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
    pub(crate) fn min_edge_length(&self) -> f64 {
        self.edge_set()
            .into_iter()
            .map(|(a, b)| {
                let (p, q) = (self.points[a as usize], self.points[b as usize]);
                ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
            })
            .fold(f64::INFINITY, f64::min)
    }
}

// ---------------------------------------------------------------------------
// Base shapes
// ---------------------------------------------------------------------------

/// Quad torus from an `m × n` grid (`m, n >= 3`): every vertex has valence 4.
pub(crate) fn torus_shape(m: usize, n: usize) -> Shape {
    let (big, small) = (2.0, 0.75);
    let idx = |i: usize, j: usize| ((i % m) * n + j % n) as u32;
    let mut s = Shape::default();
    for i in 0..m {
        for j in 0..n {
            let (u, v) = (TAU * i as f64 / m as f64, TAU * j as f64 / n as f64);
            let r = big + small * v.cos();
            s.points.push([r * u.cos(), r * u.sin(), small * v.sin()]);
        }
    }
    for i in 0..m {
        for j in 0..n {
            s.faces.push(vec![idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1)]);
        }
    }
    s
}

/// Planar grid of `w × h` quads, counter-clockwise.
pub(crate) fn grid_shape(w: usize, h: usize) -> Shape {
    let idx = |i: usize, j: usize| (j * (w + 1) + i) as u32;
    let mut s = Shape::default();
    for j in 0..=h {
        for i in 0..=w {
            s.points.push([i as f64, j as f64, 0.0]);
        }
    }
    for j in 0..h {
        for i in 0..w {
            s.faces.push(vec![idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1)]);
        }
    }
    s
}

/// Cube with each face split into `k × k` quads, projected onto the unit
/// sphere (a "quad sphere"): the 8 cube corners have valence 3.
pub(crate) fn cube_shape(k: usize) -> Shape {
    let k = k as i64;
    let mut s = Shape::default();
    let mut index: HashMap<[i64; 3], u32> = HashMap::new();
    let mut vertex = |s: &mut Shape, p: [i64; 3]| -> u32 {
        *index.entry(p).or_insert_with(|| {
            let q = p.map(|x| 2.0 * x as f64 / k as f64 - 1.0);
            let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
            s.add_point(q.map(|x| x / len))
        })
    };
    for a in 0..3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        for side in [0, k] {
            for u in 0..k {
                for v in 0..k {
                    let mut face: Vec<u32> = [(u, v), (u + 1, v), (u + 1, v + 1), (u, v + 1)]
                        .into_iter()
                        .map(|(x, y)| {
                            let mut p = [0; 3];
                            p[a] = side;
                            p[b] = x;
                            p[c] = y;
                            vertex(&mut s, p)
                        })
                        .collect();
                    if side == 0 {
                        face.reverse();
                    }
                    s.faces.push(face);
                }
            }
        }
    }
    s
}

/// `n`-gonal bipyramid (triangles; the two apexes have valence `n`).
pub(crate) fn bipyramid_shape(n: usize) -> Shape {
    let mut s = Shape::default();
    for i in 0..n {
        let a = TAU * i as f64 / n as f64;
        s.points.push([a.cos(), a.sin(), 0.0]);
    }
    let top = s.add_point([0.0, 0.0, 1.0]);
    let bottom = s.add_point([0.0, 0.0, -1.0]);
    for i in 0..n as u32 {
        let j = (i + 1) % n as u32;
        s.faces.push(vec![i, j, top]);
        s.faces.push(vec![j, i, bottom]);
    }
    s
}

/// `n`-gonal prism: `n` side quads and two `n`-gon caps.
pub(crate) fn prism_shape(n: usize) -> Shape {
    let mut s = Shape::default();
    for z in [-0.5, 0.5] {
        for i in 0..n {
            let a = TAU * i as f64 / n as f64;
            s.points.push([a.cos(), a.sin(), z]);
        }
    }
    let n32 = n as u32;
    for i in 0..n32 {
        let j = (i + 1) % n32;
        s.faces.push(vec![i, j, n32 + j, n32 + i]);
    }
    s.faces.push((n32..2 * n32).collect());
    s.faces.push((0..n32).rev().collect());
    s
}

pub(crate) fn tetrahedron_shape() -> Shape {
    Shape {
        faces: vec![vec![0, 1, 2], vec![0, 3, 1], vec![0, 2, 3], vec![1, 3, 2]],
        points: vec![[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]],
    }
}

pub(crate) fn octahedron_shape() -> Shape {
    // +x, -x, +y, -y, +z, -z
    Shape {
        faces: vec![
            vec![0, 2, 4],
            vec![2, 1, 4],
            vec![1, 3, 4],
            vec![3, 0, 4],
            vec![2, 0, 5],
            vec![1, 2, 5],
            vec![3, 1, 5],
            vec![0, 3, 5],
        ],
        points: vec![
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ],
    }
}

/// Icosahedron: every vertex has valence 5.
pub(crate) fn icosahedron_shape() -> Shape {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let points = vec![
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ];
    let faces: [[u32; 3]; 20] = [
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    Shape { faces: faces.iter().map(|f| f.to_vec()).collect(), points }
}

/// Open disk: `n` triangles around a centre vertex of valence `n`.
pub(crate) fn fan_shape(n: usize) -> Shape {
    let mut s = Shape::default();
    let centre = s.add_point([0.0, 0.0, 0.0]);
    for i in 0..n {
        let a = TAU * i as f64 / n as f64;
        s.points.push([a.cos(), a.sin(), 0.0]);
    }
    for i in 0..n as u32 {
        s.faces.push(vec![centre, 1 + i, 1 + (i + 1) % n as u32]);
    }
    s
}

// ---------------------------------------------------------------------------
// Shape operations (all keep the surface manifold and consistently oriented)
// ---------------------------------------------------------------------------

/// Midpoint vertex of each undirected edge, created on first use.
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn edge_points(s: &mut Shape) -> BTreeMap<(u32, u32), u32> {
    let mut mid = BTreeMap::new();
    for (a, b) in s.edge_set() {
        mid.insert((a, b), s.add_derived(&[a, b]));
    }
    mid
}

/// One Catmull-Clark split of the connectivity: every face of order `n`
/// becomes `n` quads; valences of the old vertices are kept.
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn quad_split(mut s: Shape) -> Shape {
    let mid = edge_points(&mut s);
    let e = |a: u32, b: u32| mid[&(a.min(b), a.max(b))];
    let faces = std::mem::take(&mut s.faces);
    for f in &faces {
        let c = s.add_derived(f);
        let n = f.len();
        for i in 0..n {
            let (prev, v, next) = (f[(i + n - 1) % n], f[i], f[(i + 1) % n]);
            s.faces.push(vec![v, e(v, next), c, e(prev, v)]);
        }
    }
    s
}

/// One 1-to-4 midpoint split of a triangle mesh.
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn tri_split(mut s: Shape) -> Shape {
    let mid = edge_points(&mut s);
    let e = |a: u32, b: u32| mid[&(a.min(b), a.max(b))];
    let faces = std::mem::take(&mut s.faces);
    for f in &faces {
        let [a, b, c] = [f[0], f[1], f[2]];
        let (ab, bc, ca) = (e(a, b), e(b, c), e(c, a));
        s.faces.extend([vec![a, ab, ca], vec![ab, b, bc], vec![ca, bc, c], vec![ab, bc, ca]]);
    }
    s
}

/// Projects every point onto the unit sphere (for refined polyhedra).
pub(crate) fn spherize(mut s: Shape) -> Shape {
    for p in &mut s.points {
        let len = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        *p = p.map(|x| x / len);
    }
    s
}

/// Splits every quad of a mesh whose quad diagonals are not edges (grids,
/// tori with `m, n >= 3`) into two triangles, along a diagonal picked from
/// `seed`.
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn triangulate_quads(mut s: Shape, seed: u64) -> Shape {
    let faces = std::mem::take(&mut s.faces);
    for (i, f) in faces.into_iter().enumerate() {
        if splitmix(seed ^ i as u64) & 1 == 0 {
            s.faces.extend([vec![f[0], f[1], f[2]], vec![f[0], f[2], f[3]]]);
        } else {
            s.faces.extend([vec![f[0], f[1], f[3]], vec![f[1], f[2], f[3]]]);
        }
    }
    s
}

/// A 64-bit mix (splitmix64's finaliser).
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Uniform in `[-1, 1)`, from `seed` and `i`.
#[cfg_attr(not(feature = "proptest-support"), allow(dead_code))]
pub(crate) fn unit(seed: u64, i: u64) -> f64 {
    let bits = splitmix(seed ^ splitmix(i)) >> 11;
    bits as f64 / (1u64 << 52) as f64 - 1.0
}

// ---------------------------------------------------------------------------
// Published shapes
// ---------------------------------------------------------------------------

/// The mesh of `s` with its exact positions.
fn build(s: &Shape) -> Result<MeshData> {
    let nv = s.points.len();
    let mesh = MeshBuilder::from_faces(nv, &s.faces).validation(Validation::Manifold).build(Par::Seq)?;
    let pos = Array2::from_shape_fn((nv, 3), |(v, k)| s.points[v][k]);
    MeshData::new(mesh, pos)
}

/// Checks a size argument.
fn at_least(what: &'static str, value: usize, min: usize) -> Result<()> {
    if value < min {
        return Err(MeshError::ShapeParameter { what, value, min });
    }
    Ok(())
}

fn finished(s: Shape) -> MeshData {
    match build(&s) {
        Ok(d) => d,
        Err(e) => unreachable!("the published shapes are valid manifold meshes: {e}"),
    }
}

/// The tetrahedron (4 triangles, valence 3), on the unit sphere.
pub fn tetrahedron() -> MeshData {
    finished(spherize(tetrahedron_shape()))
}

/// The cube (6 quads, valence 3), on the unit sphere.
pub fn cube() -> MeshData {
    finished(cube_shape(1))
}

/// The octahedron (8 triangles, valence 4), on the unit sphere.
pub fn octahedron() -> MeshData {
    finished(octahedron_shape())
}

/// The icosahedron (20 triangles, valence 5), on the unit sphere.
pub fn icosahedron() -> MeshData {
    finished(spherize(icosahedron_shape()))
}

/// The dodecahedron (12 pentagons, valence 3): the dual of the icosahedron,
/// on the unit sphere.
pub fn dodecahedron() -> MeshData {
    let ico = icosahedron_shape();
    let mut s = Shape::default();
    // One vertex per icosahedron face (its centroid), one pentagon per
    // icosahedron vertex (its faces in turning order).
    for f in &ico.faces {
        let c = ico.centroid(f);
        s.add_point(c);
    }
    let directed = ico.directed();
    for v in 0..ico.points.len() as u32 {
        let first = ico.faces.iter().position(|f| f.contains(&v)).expect("every vertex has a face");
        let mut ring = vec![first as u32];
        let mut f = first;
        loop {
            // The face across the edge that leaves v in face f... turning
            // the other way round: the face that traverses (v, prev).
            let face = &ico.faces[f];
            let i = face.iter().position(|&x| x == v).expect("v in its face");
            let prev = face[(i + face.len() - 1) % face.len()];
            let g = directed[&(v, prev)];
            if g == first {
                break;
            }
            ring.push(g as u32);
            f = g;
        }
        s.faces.push(ring);
    }
    finished(spherize(s))
}

/// The `k`-gonal bipyramid (`2k` triangles): the apexes (vertices `k` and
/// `k + 1`) have valence `k`, the equator valence 4.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3`.
pub fn bipyramid(k: usize) -> Result<MeshData> {
    at_least("bipyramid sides", k, 3)?;
    build(&bipyramid_shape(k))
}

/// The `k`-gonal prism: `k` side quads and two `k`-gon caps, valence 3.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3`.
pub fn prism(k: usize) -> Result<MeshData> {
    at_least("prism sides", k, 3)?;
    build(&prism_shape(k))
}

/// The torus of `m × n` quads (every vertex of valence 4).
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `m < 3` or `n < 3`.
pub fn quad_torus(m: usize, n: usize) -> Result<MeshData> {
    at_least("torus rings", m, 3)?;
    at_least("torus segments", n, 3)?;
    build(&torus_shape(m, n))
}

/// The torus of `m × n` quads, each split along the same diagonal into two
/// triangles (every vertex of valence 6).
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `m < 3` or `n < 3`.
pub fn triangle_torus(m: usize, n: usize) -> Result<MeshData> {
    at_least("torus rings", m, 3)?;
    at_least("torus segments", n, 3)?;
    build(&diagonal_split(torus_shape(m, n)))
}

/// The flat grid of `w × h` unit quads in `z = 0` (a boundary all round).
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `w < 1` or `h < 1`.
pub fn quad_grid(w: usize, h: usize) -> Result<MeshData> {
    at_least("grid width", w, 1)?;
    at_least("grid height", h, 1)?;
    build(&grid_shape(w, h))
}

/// The flat grid of `w × h` unit quads, each split along the same diagonal
/// (interior vertices of valence 6).
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `w < 1` or `h < 1`.
pub fn triangle_grid(w: usize, h: usize) -> Result<MeshData> {
    at_least("grid width", w, 1)?;
    at_least("grid height", h, 1)?;
    build(&diagonal_split(grid_shape(w, h)))
}

/// The cube with each side split into `k × k` quads, on the unit sphere:
/// its eight corners have valence 3, every other vertex 4.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 1`.
pub fn quad_sphere(k: usize) -> Result<MeshData> {
    at_least("quad sphere divisions", k, 1)?;
    build(&cube_shape(k))
}

/// `k` triangles around a centre (vertex 0) of valence `k`, an open disk.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3`.
pub fn fan(k: usize) -> Result<MeshData> {
    at_least("fan triangles", k, 3)?;
    build(&fan_shape(k))
}

/// The vertex on spoke `s` at distance `i` (`1..=rings`) of a disk of
/// `spokes` spokes around vertex 0; spokes are numbered counter-clockwise.
fn spoke(spokes: usize, rings: usize, s: usize, i: usize) -> u32 {
    (1 + (s % spokes) * rings + (i - 1)) as u32
}

/// A point `i` along spoke `a` plus `j` along spoke `b`, spoke `s` at the
/// angle `s · step`.
fn sector_point(step: f64, a: usize, b: usize, i: usize, j: usize) -> [f64; 3] {
    let (ta, tb) = (step * a as f64, step * b as f64);
    let (i, j) = (i as f64, j as f64);
    [i * ta.cos() + j * tb.cos(), i * ta.sin() + j * tb.sin(), 0.0]
}

/// `k` sectors of quads (`rings × rings`) or triangles (`rings` rows)
/// around vertex 0: a whole disk (`open` false: `k` spokes round the full
/// turn) or a half disk (`open`: `k + 1` spokes over a half turn, vertex 0
/// on the boundary).
fn sectors(quads: bool, k: usize, rings: usize, open: bool) -> Shape {
    let spokes = if open { k + 1 } else { k };
    let step = if open { std::f64::consts::PI / k as f64 } else { TAU / k as f64 };
    let mut s = Shape::default();
    s.add_point([0.0; 3]);
    for sp in 0..spokes {
        for i in 1..=rings {
            s.add_point(sector_point(step, sp, sp, i, 0));
        }
    }
    for sp in 0..k {
        // Interior points of sector sp: (i, j) with i, j >= 1 (and, for
        // triangles, i + j <= rings).
        let mut inner = HashMap::new();
        for j in 1..=rings {
            let last = if quads { rings } else { rings - j };
            for i in 1..=last {
                inner.insert((i, j), s.add_point(sector_point(step, sp, sp + 1, i, j)));
            }
        }
        let at = |i: usize, j: usize| -> u32 {
            match (i, j) {
                (0, 0) => 0,
                (i, 0) => spoke(spokes, rings, sp, i),
                (0, j) => spoke(spokes, rings, sp + 1, j),
                (i, j) => inner[&(i, j)],
            }
        };
        for j in 0..rings {
            if quads {
                for i in 0..rings {
                    s.faces.push(vec![at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                }
            } else {
                for i in 0..rings - j {
                    s.faces.push(vec![at(i, j), at(i + 1, j), at(i, j + 1)]);
                    if i + j + 1 < rings {
                        s.faces.push(vec![at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                    }
                }
            }
        }
    }
    s
}

/// A flat disk of quads around vertex 0 of valence `k`: `k` sectors of
/// `rings × rings` quads between consecutive spokes, so that every other
/// interior vertex has valence 4 — the configuration around an
/// extraordinary vertex of Catmull-Clark analysis. Vertex 0 is the centre;
/// vertices `1 + s·rings + (i − 1)` lie on spoke `s` at distance `i`.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3` or `rings < 1`.
pub fn quad_disk(k: usize, rings: usize) -> Result<MeshData> {
    at_least("disk valence", k, 3)?;
    at_least("disk rings", rings, 1)?;
    build(&sectors(true, k, rings, false))
}

/// A flat disk of triangles around vertex 0 of valence `k`: `k` triangular
/// sectors of `rings` rows between consecutive spokes, so that every other
/// interior vertex has valence 6 — the configuration around an
/// extraordinary vertex of Loop and √3 analysis. Vertex 0 is the centre;
/// vertices `1 + s·rings + (i − 1)` lie on spoke `s` at distance `i`.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3` or `rings < 1`.
pub fn triangle_disk(k: usize, rings: usize) -> Result<MeshData> {
    at_least("disk valence", k, 3)?;
    at_least("disk rings", rings, 1)?;
    build(&sectors(false, k, rings, false))
}

/// A flat half disk of `k` sectors of quads (`quads`) or triangles around
/// vertex 0 on its boundary: `k + 1` spokes over a half turn, so vertex 0
/// has `k` faces and `k + 1` edges, spokes 0 and `k` on the boundary — the
/// configuration around a boundary vertex. Numbered as the whole disks
/// (vertices `1 + s·rings + (i − 1)` on spoke `s`, `s` in `0..=k`).
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 1` or `rings < 1`.
pub fn half_disk(quads: bool, k: usize, rings: usize) -> Result<MeshData> {
    at_least("half disk sectors", k, 1)?;
    at_least("disk rings", rings, 1)?;
    build(&sectors(quads, k, rings, true))
}

/// The place of every vertex of [`quad_disk`]`(k, rings)` (`quads`) or
/// [`triangle_disk`]`(k, rings)` in its sector: `[s, i, j]` for the vertex
/// at `i` along spoke `s` plus `j` along spoke `s + 1` (spoke points as
/// `[s, i, 0]`, the centre as `[0, 0, 0]`), in vertex order. Invalid sizes
/// give what the shapes refuse.
///
/// # Errors
/// [`MeshError::ShapeParameter`] as the disks.
pub fn disk_coordinates(quads: bool, k: usize, rings: usize) -> Result<Vec<[u32; 3]>> {
    at_least("disk valence", k, 3)?;
    at_least("disk rings", rings, 1)?;
    Ok(coordinates(quads, k, rings, false))
}

/// [`disk_coordinates`] of [`half_disk`]`(quads, k, rings)`: spokes `0..=k`.
///
/// # Errors
/// [`MeshError::ShapeParameter`] as [`half_disk`].
pub fn half_disk_coordinates(quads: bool, k: usize, rings: usize) -> Result<Vec<[u32; 3]>> {
    at_least("half disk sectors", k, 1)?;
    at_least("disk rings", rings, 1)?;
    Ok(coordinates(quads, k, rings, true))
}

fn coordinates(quads: bool, k: usize, rings: usize, open: bool) -> Vec<[u32; 3]> {
    let spokes = if open { k + 1 } else { k };
    let mut c = vec![[0u32; 3]];
    for sp in 0..spokes {
        for i in 1..=rings {
            c.push([sp as u32, i as u32, 0]);
        }
    }
    for sp in 0..k {
        for j in 1..=rings {
            let last = if quads { rings } else { rings - j };
            for i in 1..=last {
                c.push([sp as u32, i as u32, j as u32]);
            }
        }
    }
    c
}

/// A flat disk around a `k`-sided face: the `k`-gon at the centre and
/// `rings` rings of quads around it, every other vertex of valence 4 — the
/// configuration around an extraordinary face of dual schemes (Doo–Sabin),
/// the dual of [`quad_disk`]`(k, rings + 1)` without its boundary. Its
/// vertices are the places `(i, j)`, `0 ≤ i, j ≤ rings`, of each sector
/// `s` (the dual of the quad disk's face at `(i, j)` in sector `s`), at
/// `(i + ½)` along spoke `s` plus `(j + ½)` along spoke `s + 1`, numbered
/// sector after sector, `j` then `i` within a sector; face 0 is the
/// `k`-gon, its corners the places `(0, 0)` in sector order.
///
/// # Errors
/// [`MeshError::ShapeParameter`] for `k < 3` or `rings < 1`.
pub fn polygon_disk(k: usize, rings: usize) -> Result<MeshData> {
    at_least("disk valence", k, 3)?;
    at_least("disk rings", rings, 1)?;
    let step = TAU / k as f64;
    let side = rings + 1;
    let at = |s: usize, i: usize, j: usize| -> u32 { ((s % k) * side * side + j * side + i) as u32 };
    let mut shape = Shape::default();
    for s in 0..k {
        let (ta, tb) = (step * s as f64, step * (s + 1) as f64);
        for j in 0..side {
            for i in 0..side {
                let (x, y) = (i as f64 + 0.5, j as f64 + 0.5);
                shape.add_point([x * ta.cos() + y * tb.cos(), x * ta.sin() + y * tb.sin(), 0.0]);
            }
        }
    }
    // The k-gon, then per sector the quads around the quad disk's spoke
    // vertices (a, 0) and inner vertices (a, b), counter-clockwise.
    shape.faces.push((0..k).map(|s| at(s, 0, 0)).collect());
    for s in 0..k {
        let prev = s + k - 1;
        for a in 1..=rings {
            shape.faces.push(vec![at(s, a, 0), at(s, a - 1, 0), at(prev, 0, a - 1), at(prev, 0, a)]);
        }
        for b in 1..=rings {
            for a in 1..=rings {
                shape.faces.push(vec![at(s, a - 1, b - 1), at(s, a, b - 1), at(s, a, b), at(s, a - 1, b)]);
            }
        }
    }
    build(&shape)
}

/// The place `[s, i, j]` of every vertex of [`polygon_disk`]`(k, rings)`,
/// in vertex order.
///
/// # Errors
/// [`MeshError::ShapeParameter`] as [`polygon_disk`].
pub fn polygon_disk_coordinates(k: usize, rings: usize) -> Result<Vec<[u32; 3]>> {
    at_least("disk valence", k, 3)?;
    at_least("disk rings", rings, 1)?;
    let side = rings as u32 + 1;
    Ok((0..k as u32).flat_map(|s| (0..side).flat_map(move |j| (0..side).map(move |i| [s, i, j]))).collect())
}

/// `data` with the edges between the vertex pairs of `edges` tagged with
/// `sharpness` (OpenSubdiv's: ≥ 10 or infinite is infinitely sharp), its
/// other tags, holes and options kept.
///
/// # Errors
/// [`MeshError`] naming a pair that is not an edge of the mesh, or a
/// sharpness that is not a number.
pub fn with_creases(data: &MeshData, edges: &[(u32, u32)], sharpness: f32) -> Result<MeshData> {
    let t = data.mesh.topology();
    let mut b =
        MeshBuilder::new(t.num_vertices(), t.face_ptr().to_vec(), t.face_verts().to_vec()).options(data.mesh.options());
    for (e, &s) in data.mesh.edge_sharpness().iter().enumerate() {
        if s != 0.0 {
            let [a, c] = t.edge(e);
            b = b.crease(a, c, s);
        }
    }
    for (v, &s) in data.mesh.vertex_sharpness().iter().enumerate() {
        if s != 0.0 {
            b = b.corner(v as u32, s);
        }
    }
    for (f, &h) in data.mesh.holes().iter().enumerate() {
        if h {
            b = b.hole(f as u32);
        }
    }
    for &(a, c) in edges {
        b = b.crease(a, c, sharpness);
    }
    let mesh = b.build(Par::Seq)?;
    Ok(MeshData { mesh, ..data.clone() })
}

/// Splits every quad into two triangles along the diagonal from its first
/// corner.
pub(crate) fn diagonal_split(mut s: Shape) -> Shape {
    let faces = std::mem::take(&mut s.faces);
    for f in faces {
        s.faces.extend([vec![f[0], f[1], f[2]], vec![f[0], f[2], f[3]]]);
    }
    s
}
