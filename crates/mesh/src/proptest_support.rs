//! proptest strategies for valid meshes (feature `proptest-support`), for
//! this crate's tests and downstream ones.
//!
//! Every strategy yields a [`MeshData`] whose mesh passes
//! [`Validation::Manifold`] (manifold, consistently oriented, no repeated
//! vertices, no isolated vertices), with finite, pairwise distinct positions
//! in three channels (`x`, `y`, `z`): a jittered embedding of the surface, so
//! no two vertices coincide and no face is flat by accident. Meshes are small
//! (at most about 300 faces) so property tests stay fast; [`torus`] builds
//! quad tori of any size for tests that need the parallel code paths. The
//! same shapes, with exact positions, are published in [`crate::shapes`].
//!
//! | strategy | meshes |
//! |---|---|
//! | [`closed_quad_mesh`] | quad tori (valence 4), quad spheres (subdivided cubes: valence 3), quad-split bipyramids, prisms and icosahedra (valences 3 to 8) |
//! | [`polygon_mesh_with_boundary`] | open grids with merged faces (hexagons, …), split faces (triangles), split edges, poked faces and pentagon fans |
//! | [`triangle_mesh`] | triangulated tori, tetra-, octa- and icosahedra (refined), bipyramids, triangulated grids and fans |
//! | [`closed_triangle_mesh`] | the closed ones of [`triangle_mesh`]: every case closed, none to reject |
//! | [`closed_triangle_mesh_with_creases`] | [`closed_triangle_mesh`] with random edge and vertex sharpness and [`Options`] |
//! | [`mesh_with_creases`] | any of the above with random edge and vertex sharpness and [`Options`] |
//! | [`any_mesh`] | any of the above |
//!
//! [`relabel`] renumbers the vertices of a mesh (with [`permutation`]), for
//! invariance tests.
//!
//! ```
//! use proptest::prelude::*;
//! use subla_mesh::proptest_support::closed_quad_mesh;
//! proptest!(ProptestConfig::with_cases(8), |(d in closed_quad_mesh())| {
//!     let t = d.mesh.topology();
//!     prop_assert!(t.is_quad_only() && t.is_closed() && t.is_manifold());
//! });
//! ```

use std::collections::BTreeSet;

use ndarray::Array2;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use subla_algebra::Par;

use crate::data::MeshData;
use crate::mesh::{MeshBuilder, Validation};
use crate::shapes::{
    Shape, bipyramid_shape, cube_shape, fan_shape, grid_shape, icosahedron_shape, octahedron_shape, prism_shape,
    quad_split, spherize, tetrahedron_shape, torus_shape, tri_split, triangulate_quads, unit,
};
use crate::tags::{BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, Options, TriangleSubdivision};
use crate::topology::Topology;

/// Most faces a generated mesh may get from random operations.
const MAX_FACES: usize = 300;
/// Largest face order random operations create.
const MAX_ORDER: usize = 12;

/// Inserts a new vertex at the midpoint of edge `(a, b)` in every face that
/// uses it; `false` (and no change) if a face would get too large.
fn split_edge(s: &mut Shape, a: u32, b: u32) -> bool {
    let uses: Vec<(usize, usize)> = s
        .faces
        .iter()
        .enumerate()
        .filter_map(|(fi, f)| {
            let n = f.len();
            (0..n).find(|&i| (f[i], f[(i + 1) % n]) == (a, b) || (f[i], f[(i + 1) % n]) == (b, a)).map(|i| (fi, i))
        })
        .collect();
    if uses.is_empty() || uses.iter().any(|&(fi, _)| s.faces[fi].len() >= MAX_ORDER) {
        return false;
    }
    let m = s.add_derived(&[a, b]);
    for (fi, i) in uses {
        s.faces[fi].insert(i + 1, m);
    }
    true
}

/// Merges face `f` with its neighbour across its `i`-th edge, if they share
/// exactly that edge's two vertices.
fn merge_faces(s: &mut Shape, f: usize, i: usize) {
    let n = s.faces[f].len();
    let (a, b) = (s.faces[f][i], s.faces[f][(i + 1) % n]);
    let Some(&g) = s.directed().get(&(b, a)) else { return };
    let ng = s.faces[g].len();
    if g == f || n + ng - 2 > MAX_ORDER {
        return;
    }
    let fs: BTreeSet<u32> = s.faces[f].iter().copied().collect();
    if s.faces[g].iter().filter(|v| fs.contains(v)).count() != 2 {
        return;
    }
    let j = s.faces[g].iter().position(|&v| v == a).unwrap_or_default();
    // f from b round to a, then g's path strictly between a and b.
    let mut merged: Vec<u32> = (1..=n).map(|k| s.faces[f][(i + k) % n]).collect();
    merged.extend((1..ng - 1).map(|k| s.faces[g][(j + k) % ng]));
    s.faces[f] = merged;
    s.faces.remove(g);
}

/// Splits face `f` along the diagonal from corner `i` to a non-adjacent
/// corner picked by `k`, if that diagonal is not already an edge.
fn split_face(s: &mut Shape, f: usize, i: usize, k: usize) {
    let n = s.faces[f].len();
    if n < 4 {
        return;
    }
    let j = (i + 2 + k % (n - 3)) % n;
    let face = s.faces[f].clone();
    let (a, b) = (face[i], face[j]);
    if s.edge_set().contains(&(a.min(b), a.max(b))) {
        return;
    }
    let len = (j + n - i) % n;
    s.faces[f] = (0..=len).map(|t| face[(i + t) % n]).collect();
    s.faces.push((0..=n - len).map(|t| face[(j + t) % n]).collect());
}

/// Replaces face `f` by a fan of triangles around a new centre vertex.
fn poke(s: &mut Shape, f: usize) {
    let face = s.faces[f].clone();
    if s.faces.len() + face.len() > MAX_FACES {
        return;
    }
    let c = s.add_derived(&face);
    let n = face.len();
    s.faces[f] = vec![face[0], face[1], c];
    for i in 1..n {
        s.faces.push(vec![face[i], face[(i + 1) % n], c]);
    }
}

/// A random local edit of a polygon mesh: `kind` picks merge, split face,
/// split edge or poke; `x` and `y` pick the face and corner.
fn edit(s: &mut Shape, (kind, x, y): (u8, u32, u32)) {
    let f = x as usize % s.faces.len();
    let n = s.faces[f].len();
    let i = y as usize % n;
    match kind % 4 {
        0 => merge_faces(s, f, i),
        1 => split_face(s, f, i, (y >> 8) as usize),
        2 => {
            let (a, b) = (s.faces[f][i], s.faces[f][(i + 1) % n]);
            split_edge(s, a, b);
        }
        _ => poke(s, f),
    }
}

// ---------------------------------------------------------------------------
// Finishing
// ---------------------------------------------------------------------------

/// Builds the mesh (validated as manifold) with positions jittered by up to
/// a tenth of the shortest edge.
fn finish(s: Shape, seed: u64) -> MeshData {
    let amp = 0.1 * s.min_edge_length();
    let nv = s.points.len();
    let mut pos = Array2::zeros((nv, 3));
    for (v, p) in s.points.iter().enumerate() {
        for k in 0..3 {
            pos[(v, k)] = p[k] + amp * unit(seed, (3 * v + k) as u64);
        }
    }
    let mesh = match MeshBuilder::from_faces(nv, &s.faces).validation(Validation::Manifold).build(Par::Seq) {
        Ok(m) => m,
        Err(e) => unreachable!("generated meshes are valid and manifold: {e}"),
    };
    match MeshData::new(mesh, pos) {
        Ok(d) => d,
        Err(e) => unreachable!("generated positions are finite: {e}"),
    }
}

// ---------------------------------------------------------------------------
// Public strategies
// ---------------------------------------------------------------------------

/// A quad torus from an `m × n` grid (`m, n >= 3`; every vertex has valence
/// 4), positions jittered from `seed`. Any size: use it for large meshes
/// (a 200 × 200 torus has 160 000 corners, enough for the parallel paths).
///
/// # Panics
/// If `m < 3` or `n < 3` (the mesh would not be manifold).
pub fn torus(m: usize, n: usize, seed: u64) -> MeshData {
    assert!(m >= 3 && n >= 3, "torus: the grid must be at least 3 x 3, got {m} x {n}");
    finish(torus_shape(m, n), seed)
}

/// Closed, manifold, all-quad meshes: tori from `m × n` grids with
/// `m, n` in `3..12` (all valences 4), quad spheres (cubes with each side
/// split into `k × k` quads, `k` in `1..=6`: valences 3 and 4), and one
/// Catmull-Clark split of `n`-gonal bipyramids and prisms (`n` in `3..=8`)
/// and of the icosahedron (valences 3 to 8).
pub fn closed_quad_mesh() -> impl Strategy<Value = MeshData> {
    let shapes = prop_oneof![
        2 => (3usize..12, 3usize..12).prop_map(|(m, n)| torus_shape(m, n)),
        1 => (1usize..=6).prop_map(cube_shape),
        1 => (3usize..=8).prop_map(|n| quad_split(bipyramid_shape(n))),
        1 => (3usize..=8).prop_map(|n| quad_split(prism_shape(n))),
        1 => Just(()).prop_map(|()| quad_split(icosahedron_shape())),
    ];
    (shapes, any::<u64>()).prop_map(|(s, seed)| finish(s, seed))
}

/// Open, manifold, consistently oriented polygon meshes (topologically a
/// disk): a `w × h` quad grid (`w, h` in `2..=10`), optionally with a ring
/// of four pentagons around an interior vertex, then up to 24 random edits:
/// merging two faces across an edge (quad pairs become hexagons), splitting
/// a face along a diagonal (quads become two triangles), inserting a vertex
/// on an edge, and poking a face into a fan of triangles.
pub fn polygon_mesh_with_boundary() -> impl Strategy<Value = MeshData> {
    (
        2usize..=10,
        2usize..=10,
        proptest::option::of((any::<prop::sample::Index>(), any::<prop::sample::Index>())),
        vec((0u8..4, any::<u32>(), any::<u32>()), 0..24),
        any::<u64>(),
    )
        .prop_map(|(w, h, pentagons, edits, seed)| {
            let mut s = grid_shape(w, h);
            // Move grid points off their lines so new faces are not flat.
            for (v, p) in s.points.iter_mut().enumerate() {
                let v = v as u64;
                p[0] += 0.2 * unit(!seed, 3 * v);
                p[1] += 0.2 * unit(!seed, 3 * v + 1);
                p[2] += 0.1 * unit(!seed, 3 * v + 2);
            }
            if let Some((ci, cj)) = pentagons {
                // Interior vertex (i, j); split its spokes to (i ± 1, j).
                let (i, j) = (1 + ci.index(w - 1), 1 + cj.index(h - 1));
                let c = (j * (w + 1) + i) as u32;
                split_edge(&mut s, c, c + 1);
                split_edge(&mut s, c, c - 1);
            }
            for e in edits {
                edit(&mut s, e);
            }
            finish(s, seed)
        })
}

/// Manifold triangle meshes, closed and open: triangulated tori
/// (`m, n` in `3..12`, random diagonals), tetrahedra, octahedra and
/// icosahedra with up to two (one for the icosahedron) 1-to-4 splits,
/// `n`-gonal bipyramids (`n` in `3..=10`), triangulated `w × h` grids
/// (`w, h` in `1..=10`) and fans of `n` triangles around a vertex (`n` in
/// `3..=12`).
pub fn triangle_mesh() -> impl Strategy<Value = MeshData> {
    let shapes = prop_oneof![
        5 => closed_polyhedra(),
        1 => (3usize..=10).prop_map(bipyramid_shape),
        2 => (1usize..=10, 1usize..=10, any::<u64>()).prop_map(|(w, h, d)| triangulate_quads(grid_shape(w, h), d)),
        1 => (3usize..=12).prop_map(fan_shape),
    ];
    (shapes, any::<u64>()).prop_map(|(s, seed)| finish(s, seed))
}

/// The closed triangle shapes both triangle strategies draw from:
/// triangulated tori (`m, n` in `3..12`, random diagonals; weight 2) and
/// tetra-, octa- and icosahedra with up to two (one for the icosahedron)
/// 1-to-4 splits (weight 1 each).
fn closed_polyhedra() -> impl Strategy<Value = Shape> {
    let refine = |s: Shape, levels: usize| spherize((0..levels).fold(s, |s, _| tri_split(s)));
    prop_oneof![
        2 => (3usize..12, 3usize..12, any::<u64>()).prop_map(|(m, n, d)| triangulate_quads(torus_shape(m, n), d)),
        1 => (0usize..=2).prop_map(move |l| refine(tetrahedron_shape(), l)),
        1 => (0usize..=2).prop_map(move |l| refine(octahedron_shape(), l)),
        1 => (0usize..=1).prop_map(move |l| refine(icosahedron_shape(), l)),
    ]
}

/// Closed, manifold triangle meshes, every generated case usable (no
/// filtering): triangulated tori (`m, n` in `3..12`, random diagonals:
/// valences 4 to 8), tetra-, octa- and icosahedra with up to two (one for
/// the icosahedron) 1-to-4 splits, and `k`-gonal bipyramids (`k` in
/// `3..=12`: two vertices of valence `k`).
pub fn closed_triangle_mesh() -> impl Strategy<Value = MeshData> {
    let shapes = prop_oneof![5 => closed_polyhedra(), 2 => (3usize..=12).prop_map(bipyramid_shape)];
    (shapes, any::<u64>()).prop_map(|(s, seed)| finish(s, seed))
}

/// [`closed_triangle_mesh`] with random edge sharpness (about half the
/// edges semi-sharp or infinitely sharp), random vertex sharpness and random
/// [`Options`]: closed triangle meshes with creases, darts and corners, no
/// case rejected.
pub fn closed_triangle_mesh_with_creases() -> impl Strategy<Value = MeshData> {
    closed_triangle_mesh()
        .prop_flat_map(|data| {
            let (ne, nv) = (data.mesh.topology().num_edges(), data.mesh.num_vertices());
            (Just(data), vec(edge_sharpness(), ne), vec(vertex_sharpness(), nv), options())
        })
        .prop_map(|(data, es, vs, opts)| with_tags(&data, &es, &vs, opts))
}

/// Every combination of [`Options`] values.
pub fn options() -> impl Strategy<Value = Options> {
    (
        select(vec![
            BoundaryInterpolation::None,
            BoundaryInterpolation::EdgeOnly,
            BoundaryInterpolation::EdgeAndCorner,
        ]),
        select(vec![
            FVarLinearInterpolation::None,
            FVarLinearInterpolation::CornersOnly,
            FVarLinearInterpolation::CornersPlus1,
            FVarLinearInterpolation::CornersPlus2,
            FVarLinearInterpolation::Boundaries,
            FVarLinearInterpolation::All,
        ]),
        select(vec![CreaseMethod::Uniform, CreaseMethod::Chaikin]),
        select(vec![TriangleSubdivision::Catmark, TriangleSubdivision::Smooth]),
    )
        .prop_map(|(boundary, fvar_boundary, crease_method, triangle_subdivision)| Options {
            boundary,
            fvar_boundary,
            crease_method,
            triangle_subdivision,
        })
}

/// Edge sharpness: mostly 0, often semi-sharp (`0 < s < 10`, including
/// whole and half values), sometimes infinitely sharp (10, above 10, or
/// `f32::INFINITY`).
fn edge_sharpness() -> impl Strategy<Value = f32> {
    prop_oneof![
        10 => Just(0.0f32),
        3 => 0.01f32..9.99,
        2 => (1u8..20).prop_map(|k| f32::from(k) / 2.0),
        1 => Just(10.0f32),
        1 => 10.0f32..30.0,
        1 => Just(f32::INFINITY),
    ]
}

/// Vertex sharpness: mostly 0.
fn vertex_sharpness() -> impl Strategy<Value = f32> {
    prop_oneof![
        12 => Just(0.0f32),
        2 => 0.01f32..9.99,
        1 => (1u8..20).prop_map(|k| f32::from(k) / 2.0),
        1 => 10.0f32..30.0,
        1 => Just(f32::INFINITY),
    ]
}

/// The same mesh and data with new tags and options (`edge_sharpness` by
/// edge id, `vertex_sharpness` by vertex).
fn with_tags(data: &MeshData, edge_sharpness: &[f32], vertex_sharpness: &[f32], options: Options) -> MeshData {
    let t = data.mesh.topology();
    let mut b = MeshBuilder::new(t.num_vertices(), t.face_ptr().to_vec(), t.face_verts().to_vec()).options(options);
    for (e, &s) in edge_sharpness.iter().enumerate() {
        if s != 0.0 {
            let [a, c] = t.edge(e);
            b = b.crease(a, c, s);
        }
    }
    for (v, &s) in vertex_sharpness.iter().enumerate() {
        if s != 0.0 {
            b = b.corner(v as u32, s);
        }
    }
    for (f, &h) in data.mesh.holes().iter().enumerate() {
        if h {
            b = b.hole(f as u32);
        }
    }
    let mesh = match b.build(Par::Seq) {
        Ok(m) => m,
        Err(e) => unreachable!("tags of a valid mesh are valid: {e}"),
    };
    MeshData { mesh, ..data.clone() }
}

/// Any mesh of [`closed_quad_mesh`], [`polygon_mesh_with_boundary`] or
/// [`triangle_mesh`] with random edge sharpness (about half the edges:
/// semi-sharp `0 < s < 10` or infinitely sharp `s >= 10`, `f32::INFINITY`
/// included), random vertex (corner) sharpness and random [`Options`] (every
/// enum value).
pub fn mesh_with_creases() -> impl Strategy<Value = MeshData> {
    prop_oneof![closed_quad_mesh(), polygon_mesh_with_boundary(), triangle_mesh()]
        .prop_flat_map(|data| {
            let (ne, nv) = (data.mesh.topology().num_edges(), data.mesh.num_vertices());
            (Just(data), vec(edge_sharpness(), ne), vec(vertex_sharpness(), nv), options())
        })
        .prop_map(|(data, es, vs, opts)| with_tags(&data, &es, &vs, opts))
}

/// Any mesh of the strategies above.
pub fn any_mesh() -> impl Strategy<Value = MeshData> {
    prop_oneof![closed_quad_mesh(), polygon_mesh_with_boundary(), triangle_mesh(), mesh_with_creases()]
}

/// `t` with every face triangulated as a fan from its first corner (for
/// tests of triangle-only operations).
///
/// # Panics
/// If the triangles do not form a valid topology (a face that repeats a
/// vertex may give a degenerate triangle; filter such meshes first).
pub fn fan_triangles(t: &Topology) -> Topology {
    let mut fv = Vec::new();
    for f in 0..t.num_faces() {
        let vs = t.face(f);
        for k in 1..vs.len() - 1 {
            fv.extend([vs[0], vs[k], vs[k + 1]]);
        }
    }
    let ptr = (0..=fv.len() as u32 / 3).map(|i| 3 * i).collect();
    Topology::build(t.num_vertices(), ptr, fv, Par::Seq).expect("fan triangulation")
}

/// A uniformly random permutation of `0..n`, as used by [`relabel`].
pub fn permutation(n: usize) -> impl Strategy<Value = Vec<u32>> {
    Just((0..n as u32).collect::<Vec<u32>>()).prop_shuffle()
}

/// A mesh of [`any_mesh`] with a [`permutation`] of its vertices.
pub fn any_mesh_with_permutation() -> impl Strategy<Value = (MeshData, Vec<u32>)> {
    any_mesh().prop_flat_map(|data| {
        let n = data.mesh.num_vertices();
        (Just(data), permutation(n))
    })
}

/// The same mesh with vertex `v` renamed `perm[v]`: faces keep their order
/// and first corner, vertex data rows move with their vertex, creases and
/// corner sharpness follow their vertices; holes, options, face-varying
/// data, groups and channel names are kept. Non-manifold meshes are
/// accepted (built in [`Validation::OpenSubdiv`] mode).
///
/// # Panics
/// If `perm` is not a permutation of `0..num_vertices`.
pub fn relabel(data: &MeshData, perm: &[u32]) -> MeshData {
    let t = data.mesh.topology();
    let nv = t.num_vertices();
    assert_eq!(perm.len(), nv, "relabel: permutation of length {} for {nv} vertices", perm.len());
    let mut seen = vec![false; nv];
    for &p in perm {
        assert!((p as usize) < nv && !seen[p as usize], "relabel: not a permutation of 0..{nv}: {perm:?}");
        seen[p as usize] = true;
    }
    let verts = t.face_verts().iter().map(|&v| perm[v as usize]).collect();
    let mut b = MeshBuilder::new(nv, t.face_ptr().to_vec(), verts).options(data.mesh.options());
    for (e, &s) in data.mesh.edge_sharpness().iter().enumerate() {
        if s != 0.0 {
            let [a, c] = t.edge(e);
            b = b.crease(perm[a as usize], perm[c as usize], s);
        }
    }
    for (v, &s) in data.mesh.vertex_sharpness().iter().enumerate() {
        if s != 0.0 {
            b = b.corner(perm[v], s);
        }
    }
    for (f, &h) in data.mesh.holes().iter().enumerate() {
        if h {
            b = b.hole(f as u32);
        }
    }
    let mesh = match b.build(Par::Seq) {
        Ok(m) => m,
        Err(e) => unreachable!("relabelling a valid mesh gives a valid mesh: {e}"),
    };
    let mut vertices = Array2::zeros(data.vertices.raw_dim());
    for (v, row) in data.vertices.rows().into_iter().enumerate() {
        vertices.row_mut(perm[v] as usize).assign(&row);
    }
    MeshData {
        mesh,
        vertices,
        channels: data.channels.clone(),
        texcoords: data.texcoords.clone(),
        normals: data.normals.clone(),
        groups: data.groups.clone(),
        left_handed: data.left_handed,
        skipped: data.skipped.clone(),
    }
}
