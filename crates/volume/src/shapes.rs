//! Volumetric test and example meshes, made here: a regular hexahedral
//! grid, an O-grid cylinder and torus (hexahedra only, all edges regular
//! but the core's corners), a block with extraordinary edges of valence 3
//! and 5, a tetrahedron split into four hexahedra, and a grid of cubes
//! split into tetrahedra. Every shape comes
//! checked ([`VolumeData::new`]), its cells positively oriented.

use std::collections::HashMap;

use ndarray::Array2;

use crate::cell::{Cell, CellKind};
use crate::data::VolumeData;
use crate::error::Result;
use crate::mesh::corner_table;

/// A planar quad mesh: points and counter-clockwise quads.
struct Quads {
    points: Vec<[f64; 2]>,
    quads: Vec<[u32; 4]>,
}

/// `cells` over `points`, checked.
fn finish(points: Vec<[f64; 3]>, cells: &[Cell]) -> Result<VolumeData> {
    let x = Array2::from_shape_fn((points.len(), 3), |(i, k)| points[i][k]);
    VolumeData::from_cells(x, cells)
}

/// An `nx × ny × nz` grid of unit cubes (vertex `(i, j, k)` is
/// `i + (nx + 1)(j + (ny + 1) k)`): every interior edge of valence 4, every
/// boundary edge but the box's twelve of valence 3.
///
/// # Errors
/// Only where the sizes overflow 32-bit ids.
pub fn hex_grid(nx: usize, ny: usize, nz: usize) -> Result<VolumeData> {
    let id = |i: usize, j: usize, k: usize| (i + (nx + 1) * (j + (ny + 1) * k)) as u32;
    let mut points = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                points.push([i as f64, j as f64, k as f64]);
            }
        }
    }
    let mut cells = Vec::with_capacity(nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                cells.push(Cell::Hexahedron([
                    id(i, j, k),
                    id(i + 1, j, k),
                    id(i + 1, j + 1, k),
                    id(i, j + 1, k),
                    id(i, j, k + 1),
                    id(i + 1, j, k + 1),
                    id(i + 1, j + 1, k + 1),
                    id(i, j + 1, k + 1),
                ]));
            }
        }
    }
    finish(points, &cells)
}

/// The unit disk as an O-grid: a `core × core` square grid in the middle
/// and `rings` rings of `4 core` quads out to the circle.
fn disk(core: usize, rings: usize) -> Quads {
    let s = 0.45;
    let mut points = Vec::new();
    for j in 0..=core {
        for i in 0..=core {
            points.push([s * (2.0 * i as f64 / core as f64 - 1.0), s * (2.0 * j as f64 / core as f64 - 1.0)]);
        }
    }
    let id = |i: usize, j: usize| (i + (core + 1) * j) as u32;
    let mut quads = Vec::new();
    for j in 0..core {
        for i in 0..core {
            quads.push([id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    // The square's boundary, counter-clockwise from (−s, −s).
    let mut ring0: Vec<u32> = Vec::new();
    ring0.extend((0..core).map(|i| id(i, 0)));
    ring0.extend((0..core).map(|j| id(core, j)));
    ring0.extend((0..core).map(|i| id(core - i, core)));
    ring0.extend((0..core).map(|j| id(0, core - j)));
    let n = ring0.len();
    let mut prev = ring0.clone();
    for r in 1..=rings {
        let t = r as f64 / rings as f64;
        let ring: Vec<u32> = ring0
            .iter()
            .map(|&v| {
                let [x, y] = points[v as usize];
                let len = (x * x + y * y).sqrt();
                let c = [x / len, y / len];
                points.push([(1.0 - t) * x + t * c[0], (1.0 - t) * y + t * c[1]]);
                (points.len() - 1) as u32
            })
            .collect();
        for k in 0..n {
            let k1 = (k + 1) % n;
            // Out, along the outer ring, back in: counter-clockwise.
            quads.push([prev[k], ring[k], ring[k1], prev[k1]]);
        }
        prev = ring;
    }
    Quads { points, quads }
}

/// `q` extruded into `layers` layers of hexahedra from `z = 0` to `height`.
fn extrude(q: &Quads, layers: usize, height: f64) -> (Vec<[f64; 3]>, Vec<Cell>) {
    let np = q.points.len();
    let mut points = Vec::with_capacity(np * (layers + 1));
    for l in 0..=layers {
        let z = height * l as f64 / layers as f64;
        points.extend(q.points.iter().map(|p| [p[0], p[1], z]));
    }
    let mut cells = Vec::with_capacity(q.quads.len() * layers);
    for l in 0..layers {
        let (lo, hi) = ((l * np) as u32, ((l + 1) * np) as u32);
        for &[a, b, c, d] in &q.quads {
            cells.push(Cell::Hexahedron([a + lo, b + lo, c + lo, d + lo, a + hi, b + hi, c + hi, d + hi]));
        }
    }
    (points, cells)
}

/// A cylinder of radius 1 and height `height`: the O-grid disk (`core ×
/// core` square, `rings` rings) extruded in `layers` layers. Where the
/// square's corners meet the rings three quads meet, so their vertical
/// edges are interior extraordinary edges of valence 3, as in any
/// all-hexahedral cylinder.
///
/// # Errors
/// Only where the sizes overflow 32-bit ids.
pub fn cylinder(core: usize, rings: usize, layers: usize, height: f64) -> Result<VolumeData> {
    let (points, cells) = extrude(&disk(core.max(1), rings.max(1)), layers.max(1), height);
    finish(points, &cells)
}

/// A torus: the O-grid disk (radius `minor`) swept around the `z` axis at
/// distance `major` in `segments` segments (closed around).
///
/// # Errors
/// Only where the sizes overflow 32-bit ids.
pub fn torus(core: usize, rings: usize, segments: usize, major: f64, minor: f64) -> Result<VolumeData> {
    let q = disk(core.max(1), rings.max(1));
    let segments = segments.max(3);
    let np = q.points.len();
    let mut points = Vec::with_capacity(np * segments);
    for s in 0..segments {
        let a = 2.0 * std::f64::consts::PI * s as f64 / segments as f64;
        points.extend(q.points.iter().map(|p| {
            let r = major + minor * p[0];
            [r * a.cos(), r * a.sin(), minor * p[1]]
        }));
    }
    let mut cells = Vec::with_capacity(q.quads.len() * segments);
    for s in 0..segments {
        let (lo, hi) = ((s * np) as u32, (((s + 1) % segments) * np) as u32);
        // Sweeping counter-clockwise around z turns the disk's quads
        // clockwise seen from the sweep direction: list them reversed.
        for &[a, b, c, d] in &q.quads {
            cells.push(Cell::Hexahedron([a + lo, d + lo, c + lo, b + lo, a + hi, d + hi, c + hi, b + hi]));
        }
    }
    finish(points, &cells)
}

/// A block with one interior extraordinary edge of valence 3 and one of
/// valence 5: a triangle and a pentagon sharing an edge, each split into
/// quads around its centre (Catmull-Clark's face split), extruded in
/// `layers` layers. The centres' vertical edges have 3 and 5 faces.
///
/// # Errors
/// Only where the sizes overflow 32-bit ids.
pub fn extraordinary_block(layers: usize) -> Result<VolumeData> {
    let corners = [[0.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [1.0, -0.2], [1.6, 0.5], [1.0, 1.2]];
    let polygons: [&[u32]; 2] = [&[2, 0, 1], &[0, 3, 4, 5, 1]];
    let mut points: Vec<[f64; 2]> = corners.to_vec();
    let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
    let mut quads = Vec::new();
    for poly in polygons {
        let n = poly.len();
        let c = poly.iter().fold([0.0, 0.0], |acc, &v| {
            let p = corners[v as usize];
            [acc[0] + p[0] / n as f64, acc[1] + p[1] / n as f64]
        });
        points.push(c);
        let centre = (points.len() - 1) as u32;
        let mut m = |a: u32, b: u32, points: &mut Vec<[f64; 2]>| -> u32 {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let (p, q) = (corners[a as usize], corners[b as usize]);
                points.push([(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0]);
                (points.len() - 1) as u32
            })
        };
        for i in 0..n {
            let (v, next, prev) = (poly[i], poly[(i + 1) % n], poly[(i + n - 1) % n]);
            let (mi, mp) = (m(v, next, &mut points), m(prev, v, &mut points));
            quads.push([v, mi, centre, mp]);
        }
    }
    let (points, cells) = extrude(&Quads { points, quads }, layers.max(1), 1.0);
    finish(points, &cells)
}

/// An `n × n × n` grid of unit cubes, each split into six tetrahedra
/// around its main diagonal (Kuhn's triangulation: they share every face
/// with their neighbours): a tetrahedral mesh whose Catmull-Clark solid
/// refinement has extraordinary edges and vertices everywhere (the
/// tetrahedra's centres, faces, edges and vertices), so refined twice it
/// has regular, layered and irregular cells.
///
/// # Errors
/// Only where the sizes overflow 32-bit ids.
pub fn tetrahedral_grid(n: usize) -> Result<VolumeData> {
    let g = hex_grid(n, n, n)?;
    let mut cells = Vec::with_capacity(6 * g.mesh.num_cells());
    let p = |i: u32| -> [f64; 3] { std::array::from_fn(|k| g.vertices[[i as usize, k]]) };
    for c in 0..g.mesh.num_cells() {
        let v = g.mesh.cell_vertices(c);
        // VTK corners: 0 (000) 1 (100) 2 (110) 3 (010) 4 (001) 5 (101)
        // 6 (111) 7 (011); the six paths from 0 to 6 along the cube's edges.
        for [a, b] in [[1, 2], [2, 3], [3, 7], [7, 4], [4, 5], [5, 1]] {
            let mut t = [v[0], v[a], v[b], v[6]];
            // Base 0 1 2 with its normal towards 3.
            let (o, e1, e2, e3) = (p(t[0]), p(t[1]), p(t[2]), p(t[3]));
            let d = |e: [f64; 3]| -> [f64; 3] { std::array::from_fn(|k| e[k] - o[k]) };
            let (u, w, z) = (d(e1), d(e2), d(e3));
            let det = u[0] * (w[1] * z[2] - w[2] * z[1]) - u[1] * (w[0] * z[2] - w[2] * z[0])
                + u[2] * (w[0] * z[1] - w[1] * z[0]);
            if det < 0.0 {
                t.swap(1, 2);
            }
            cells.push(Cell::Tetra(t));
        }
    }
    VolumeData::from_cells(g.vertices, &cells)
}

/// A tetrahedron split into four hexahedra, one per corner (its corner,
/// the midpoints of its three edges, the centres of its three faces and
/// the tetrahedron's centre): what one Catmull-Clark solid step makes of a
/// tetrahedron's topology, with the points placed linearly.
///
/// # Errors
/// Never in practice (the shape is fixed).
pub fn tetra_split() -> Result<VolumeData> {
    let t = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let mut points: Vec<[f64; 3]> = t.to_vec();
    let mean = |vs: &[usize]| -> [f64; 3] {
        let n = vs.len() as f64;
        std::array::from_fn(|k| vs.iter().map(|&v| t[v][k]).sum::<f64>() / n)
    };
    let mut ids: HashMap<Vec<usize>, u32> = HashMap::new();
    let mut point = |mut vs: Vec<usize>, points: &mut Vec<[f64; 3]>| -> u32 {
        vs.sort_unstable();
        *ids.entry(vs.clone()).or_insert_with(|| {
            points.push(mean(&vs));
            (points.len() - 1) as u32
        })
    };
    let table = corner_table(CellKind::Tetra).unwrap_or_default();
    let mut cells = Vec::new();
    for (v, nb) in table.iter().enumerate() {
        let [a, b, c] = nb.map(usize::from);
        // Hexahedron vertices 1, 3, 4 along the corner's positively turning
        // edges (as a unit cube's 0 → 1, 3, 4), faces between them.
        let e1 = point(vec![v, a], &mut points);
        let e3 = point(vec![v, b], &mut points);
        let e4 = point(vec![v, c], &mut points);
        let f2 = point(vec![v, a, b], &mut points);
        let f5 = point(vec![v, a, c], &mut points);
        let f7 = point(vec![v, b, c], &mut points);
        let centre = point(vec![0, 1, 2, 3], &mut points);
        cells.push(Cell::Hexahedron([v as u32, e1, f2, e3, e4, f5, centre, f7]));
    }
    finish(points, &cells)
}

/// The example control meshes kept in the repository's `data/solids`
/// (named as their files there, without `.vtk`): a cylinder (2 × 2 core,
/// 2 rings, 4 layers), a solid torus (2 × 2 core, 1 ring, 16 segments), the
/// block with extraordinary edges of valence 3 and 5 (2 layers), and the
/// tetrahedron split into four hexahedra.
///
/// # Errors
/// Never in practice (the shapes are fixed).
pub fn examples() -> Result<Vec<(&'static str, VolumeData)>> {
    Ok(vec![
        ("cylinder", cylinder(2, 2, 4, 2.0)?),
        ("torus", torus(2, 1, 16, 3.0, 1.0)?),
        ("block_ee3_ee5", extraordinary_block(2)?),
        ("tetra_split", tetra_split()?),
    ])
}
