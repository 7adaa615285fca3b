//! Local subdivision analysis: the subdivision matrix of a scheme around an
//! extraordinary vertex, and its spectrum.
//!
//! [`local_subdivision_matrix`] works for any [`Refiner`] of polygon meshes
//! whose plans name their child points ([`Plan::child_point`]: vertex,
//! edge and face points, the primal schemes — subla's and one's own). It
//! refines a disk of faces around one vertex of valence `k`
//! ([`subla_mesh::shapes::quad_disk`] or
//! [`subla_mesh::shapes::triangle_disk`]) by one level, and restricts the
//! level's operator `R_0` to the neighbourhood of the centre: the points
//! within `rings` rings (for quads, `max(i, j) ≤ rings`; for triangles,
//! `i + j ≤ rings`, with `(i, j)` a point's place in its sector), rows the
//! child points and columns the parent vertices at the same places. A
//! neighbourhood whose child rows reach outside it (the scheme's support is
//! wider) is refused, naming the point: ask for more rings.
//!
//! Other configurations: boundary, dart, crease and corner vertices
//! ([`Configuration`], [`local_subdivision_matrix_at`]); a `k`-sided face
//! for dual schemes whose child points are parent corners
//! ([`Configuration::Face`], Doo–Sabin); an extraordinary edge of a
//! hexahedral mesh for volumetric schemes ([`edge_subdivision_matrix`],
//! Catmull-Clark solids).
//!
//! **Order.** The centre first; then the places `(i, j)` of one sector,
//! nearest first (by distance, then `j`), each repeated for the `k` sectors
//! in counter-clockwise order ([`LocalMatrix::points`]). On an interior
//! vertex the matrix is then block-circulant: the block of places `(a, b)`
//! is a `k × k` circulant, and [`LocalMatrix::fourier_blocks`] gives its
//! discrete Fourier transform, one small block per frequency `ω`, whose
//! eigenvalues are those of the matrix with Fourier index `ω`.
//!
//! ```
//! use subla::analysis::{DiskFaces, local_subdivision_matrix, spectrum};
//! use subla::loop_scheme::LoopSlak;
//! let s = local_subdivision_matrix(&LoopSlak::new(), DiskFaces::Triangles, 7, 1)?;
//! assert_eq!(s.matrix.shape(), (8, 8)); // the centre and its 7 neighbours
//! let sp = spectrum(&s)?;
//! let lambda1 = 3.0 / 8.0 + (std::f64::consts::TAU / 7.0).cos() / 4.0;
//! assert!((sp.subdominant().unwrap().value.re - lambda1).abs() < 1e-12);
//! assert!(sp.conditions().all());
//! # Ok::<(), subla::analysis::AnalysisError>(())
//! ```

use std::f64::consts::TAU;

use nalgebra::{Complex, DMatrix};
use subla_algebra::{CsrMat, Par};
use subla_mesh::{Mesh, MeshError, shapes};
use subla_scheme::{ChildPoint, Plan, Refiner, SchemeError};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The configuration could not be made.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The scheme refused the configuration or its operator.
    #[error(transparent)]
    Scheme(#[from] SchemeError),
    /// An algebra error (a size that does not fit).
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
    /// The plan does not say which child point a row is.
    #[error("{scheme}: the plan does not name child row {row} (Plan::child_point), so its place is unknown")]
    UnknownChildPoint {
        /// The scheme.
        scheme: &'static str,
        /// The row of `R_0`.
        row: usize,
    },
    /// A child point of the neighbourhood depends on a parent vertex outside
    /// it: the scheme's support is wider than `rings` rings.
    #[error(
        "{scheme}: the child point at sector {sector}, place ({i}, {j}) depends on vertices outside {rings} rings: ask for more rings"
    )]
    NotClosed {
        /// The scheme.
        scheme: &'static str,
        /// Its sector.
        sector: u32,
        /// Its place along spoke `sector`.
        i: u32,
        /// Its place along spoke `sector + 1`.
        j: u32,
        /// The rings asked for.
        rings: usize,
    },
    /// No child point of the refined configuration lies at a place of the
    /// neighbourhood (a scheme that does not keep the vertices' places, such
    /// as √3 or a dual scheme).
    #[error("{scheme}: no child point at sector {sector}, place ({i}, {j}) of the refined configuration")]
    MissingPoint {
        /// The scheme.
        scheme: &'static str,
        /// Its sector.
        sector: u32,
        /// Its place along spoke `sector`.
        i: u32,
        /// Its place along spoke `sector + 1`.
        j: u32,
    },
    /// The subdominant eigenvalue is not a double real eigenvalue whose
    /// eigenvectors reach the first ring (no characteristic map).
    #[error("{scheme}: at valence {valence} the subdominant eigenvalue is not a double real one of Fourier index 1")]
    NoSubdominantPair {
        /// The scheme.
        scheme: &'static str,
        /// The valence.
        valence: usize,
    },
    /// The configuration does not exist on the lattice of these faces (a
    /// face configuration of triangles: their dual lattice is hexagonal).
    #[error("{scheme}: no {configuration} configuration on a lattice of {faces}")]
    UnsupportedConfiguration {
        /// The scheme.
        scheme: &'static str,
        /// The configuration's name.
        configuration: &'static str,
        /// The faces asked for.
        faces: &'static str,
    },
    /// The volumetric configuration could not be made.
    #[error(transparent)]
    Volume(#[from] subla_volume::VolumeError),
    /// At a boundary vertex, the two leading subdominant eigenvalues are
    /// not real ones above all the others, so the characteristic map is not
    /// defined (or not unique).
    #[error(
        "{scheme}: at a boundary vertex with {valence} faces, λ1 ≥ λ2 are not two real eigenvalues above |λ3| with one eigenvector each: no unique characteristic map"
    )]
    NoBoundaryPair {
        /// The scheme.
        scheme: &'static str,
        /// The faces around the vertex.
        valence: usize,
    },
    /// The eigenvalue iteration did not converge.
    #[error("{scheme}: the eigenvalues of the {size} × {size} local matrix did not converge")]
    NoConvergence {
        /// The scheme.
        scheme: &'static str,
        /// The matrix's rows.
        size: usize,
    },
    /// The valence or the rings are out of range.
    #[error("{what} must be at least {min}, got {value}")]
    Parameter {
        /// Which.
        what: &'static str,
        /// The value given.
        value: usize,
        /// The least.
        min: usize,
    },
}

/// The faces of the configuration.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DiskFaces {
    /// Quads (Catmull-Clark, bilinear, schemes of quad meshes).
    Quads,
    /// Triangles (Loop, Butterfly, schemes of triangle meshes).
    Triangles,
}

/// A point of the neighbourhood: the centre (`i = j = 0`), or the point at
/// `i` along spoke `sector` plus `j` along spoke `sector + 1` (`i ≥ 1`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RingPoint {
    /// The sector (0 for the centre).
    pub sector: u32,
    /// Along spoke `sector`.
    pub i: u32,
    /// Along spoke `sector + 1`.
    pub j: u32,
}

/// The local subdivision matrix of a scheme around a vertex of valence `k`
/// (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct LocalMatrix {
    /// The scheme.
    pub scheme: &'static str,
    /// Where the centre lies.
    pub configuration: Configuration,
    /// The valence of the centre (its sectors, on the boundary).
    pub valence: usize,
    /// The rings of the neighbourhood.
    pub rings: usize,
    /// Its points, in the rows' and columns' order.
    pub points: Vec<RingPoint>,
    /// The layer of each point along an extraordinary edge
    /// ([`Configuration::Edge`]; empty for the surface configurations).
    pub layers: Vec<i32>,
    /// The subdivision steps the matrix spans: 1, or 2 for a scheme that
    /// turns the lattice (√3, whose lattice two steps bring back at a third
    /// of the size): its eigenvalues are then those of two steps.
    pub steps: u32,
    /// The matrix `S`: row `p` is the child point at `points[p]`, over the
    /// parent vertices at `points`.
    pub matrix: CsrMat<f64>,
    /// The scheme's own limit mask of the centre (`Plan::limit` of the
    /// refined configuration, its row of the centre over the neighbourhood's
    /// places, in `points` order), where the scheme has one and it lies in
    /// the neighbourhood.
    pub scheme_limit_mask: Option<Vec<f64>>,
}

/// The refined configuration's size: wide enough that the neighbourhood's
/// child rows are those of an infinite regular surround.
fn disk_rings(rings: usize) -> usize {
    2 * rings + 2
}

/// `p` moved to its canonical sector: a point on spoke `s + 1` (`i = 0`)
/// belongs to sector `s + 1`.
fn canonical(k: u32, sector: u32, i: u32, j: u32) -> RingPoint {
    match (i, j) {
        (0, 0) => RingPoint { sector: 0, i: 0, j: 0 },
        (0, j) => RingPoint { sector: (sector + 1) % k, i: j, j: 0 },
        (i, j) => RingPoint { sector, i, j },
    }
}

/// The place `(i, j)` of vertex `c` in the frame of sector `s` (where it is
/// one of that sector's points, spokes included).
fn in_frame(k: u32, c: [u32; 3], s: u32) -> Option<(u32, u32)> {
    let [cs, i, j] = c;
    match (i, j) {
        (0, 0) => Some((0, 0)),
        (_, 0) if cs == s => Some((i, 0)),
        (_, 0) if cs == (s + 1) % k => Some((0, i)),
        _ if cs == s => Some((i, j)),
        _ => None,
    }
}

/// The points within `rings` rings, in the documented order: `k` sectors
/// and `spokes` spokes (`k`, or `k + 1` around a boundary vertex).
fn neighbourhood(faces: DiskFaces, k: u32, spokes: u32, rings: u32) -> Vec<RingPoint> {
    let mut places: Vec<(u32, u32)> = Vec::new();
    for j in 0..=rings {
        for i in 1..=rings {
            let d = match faces {
                DiskFaces::Quads => i.max(j),
                DiskFaces::Triangles => i + j,
            };
            if d <= rings {
                places.push((i, j));
            }
        }
    }
    let distance = |&(i, j): &(u32, u32)| match faces {
        DiskFaces::Quads => i.max(j),
        DiskFaces::Triangles => i + j,
    };
    places.sort_by_key(|p| (distance(p), p.1, p.0));
    let mut points = vec![RingPoint { sector: 0, i: 0, j: 0 }];
    for (i, j) in places {
        let sectors = if j == 0 { spokes } else { k };
        points.extend((0..sectors).map(|sector| RingPoint { sector, i, j }));
    }
    points
}

/// The place (`[sector, i, j]`, canonical) of every row of level `level +
/// 1` of `plan`, in that level's grid, from the places of level `level`'s
/// vertices (`parent`, over the topology `t`); `None` where a row is not at
/// a lattice place of the configuration.
fn child_places<P: Plan + ?Sized>(
    plan: &P,
    level: u32,
    t: &subla_mesh::Topology,
    parent: &[Option<[u32; 3]>],
    k: u32,
    scheme: &'static str,
) -> Result<Vec<Option<[u32; 3]>>, AnalysisError> {
    let place = |p: RingPoint| Some([p.sector, p.i, p.j]);
    let frame_of = |vs: &[u32]| -> Option<(u32, Vec<(u32, u32)>)> {
        let cs: Option<Vec<[u32; 3]>> = vs.iter().map(|&v| parent[v as usize]).collect();
        let cs = cs?;
        (0..k).find_map(|s| {
            let ij: Option<Vec<(u32, u32)>> = cs.iter().map(|&c| in_frame(k, c, s)).collect();
            ij.map(|ij| (s, ij))
        })
    };
    let rows = plan.level_len(level + 1);
    (0..rows)
        .map(|row| {
            Ok(match plan.child_point(level, row) {
                Some(ChildPoint::Vertex(v)) => {
                    parent[v as usize].and_then(|[s, i, j]| place(canonical(k, s, 2 * i, 2 * j)))
                }
                Some(ChildPoint::Edge(e)) => frame_of(&t.edge(e as usize))
                    .and_then(|(s, ij)| place(canonical(k, s, ij[0].0 + ij[1].0, ij[0].1 + ij[1].1))),
                Some(ChildPoint::Face(f)) => frame_of(t.face(f as usize)).and_then(|(s, ij)| {
                    let n = ij.len() as u32;
                    let (si, sj) = ij.iter().fold((0, 0), |(x, y), &(i, j)| (x + i, y + j));
                    // Twice the centroid: a place of the child grid where it
                    // is a lattice point.
                    (2 * si % n == 0 && 2 * sj % n == 0)
                        .then(|| canonical(k, s, 2 * si / n, 2 * sj / n))
                        .and_then(place)
                }),
                Some(_) => None,
                None => return Err(AnalysisError::UnknownChildPoint { scheme, row }),
            })
        })
        .collect()
}

/// Where the vertex analysed lies, and the tags around it. The sharp
/// configurations are the stationary ones (infinitely sharp edges and
/// vertices): a semi-sharp tag changes the rules from level to level, so
/// it has no single local subdivision matrix.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Configuration {
    /// Inside: a whole disk of `k` sectors around it (valence `k`).
    Interior,
    /// On the boundary: a half disk of `k` sectors (`k` faces, `k + 1`
    /// edges; spokes 0 and `k` on the boundary), refined with the scheme's
    /// boundary rules and the mesh's default options.
    Boundary,
    /// Inside, spoke 0 an infinitely sharp edge running from the vertex to
    /// the disk's rim: a dart (the vertex keeps the smooth rule).
    Dart,
    /// Inside, spokes 0 and `across` infinitely sharp: a crease through
    /// the vertex with `across` sectors on one side and `k − across` on
    /// the other (`1 ≤ across < k`; the regular crease of Catmull-Clark is
    /// `k = 4, across = 2`, of Loop `k = 6, across = 3`).
    Crease {
        /// Sectors on the counter-clockwise side of spoke 0.
        across: usize,
    },
    /// On the boundary (a half disk of `k` sectors, as
    /// [`Configuration::Boundary`]), the vertex infinitely sharp: a corner.
    Corner,
    /// A `k`-sided face of a quad lattice at the centre
    /// ([`subla_mesh::shapes::polygon_disk`]): the configuration of dual
    /// schemes (Doo–Sabin), whose child points are the parent faces'
    /// corners ([`ChildPoint::Corner`]). The points are the places `(i, j)`,
    /// `0 ≤ i, j ≤ rings`, of every sector (no centre point: the `k`-gon's
    /// corners are the places `(0, 0)`); the child of the corner of face
    /// `f` at vertex `v` sits at `v`'s place plus the place of `f`'s centre
    /// (a vertex of the primal lattice). Rotationally symmetric, so
    /// block-circulant.
    Face,
    /// An interior extraordinary edge of a hexahedral mesh: `k` hexahedra
    /// around it, in layers along it ([`edge_subdivision_matrix`]; the
    /// volumetric schemes: Catmull-Clark solids). The points are the
    /// places of the quad disk around a vertex of valence `k` in each layer
    /// `z` (`LocalMatrix::layers`), the edge's own points first.
    Edge,
}

impl Configuration {
    /// Around a boundary vertex (a half disk).
    pub fn is_open(self) -> bool {
        matches!(self, Configuration::Boundary | Configuration::Corner)
    }

    /// Name in reports: `interior`, `boundary`, `dart`, `crease`, `corner`.
    pub fn name(self) -> &'static str {
        match self {
            Configuration::Interior => "interior",
            Configuration::Boundary => "boundary",
            Configuration::Dart => "dart",
            Configuration::Crease { .. } => "crease",
            Configuration::Corner => "corner",
            Configuration::Face => "face",
            Configuration::Edge => "edge",
        }
    }
}

/// The disk's mesh with the configuration's sharp tags: infinitely sharp
/// edges along the sharp spokes (every edge joining two points of one
/// sharp spoke, the centre included), the centre infinitely sharp at a
/// corner.
fn tagged(mesh: &Mesh, coords: &[[u32; 3]], configuration: Configuration) -> Result<Mesh, AnalysisError> {
    use subla_mesh::tags::SHARPNESS_INFINITE;
    let sharp_spokes: Vec<u32> = match configuration {
        Configuration::Dart => vec![0],
        Configuration::Crease { across } => vec![0, across as u32],
        _ => Vec::new(),
    };
    let corner = configuration == Configuration::Corner;
    if sharp_spokes.is_empty() && !corner {
        return Ok(mesh.clone());
    }
    let t = mesh.topology();
    let on_spoke = |v: u32, s: u32| {
        let [sec, i, j] = coords[v as usize];
        j == 0 && (i == 0 || sec == s)
    };
    let mut edges = mesh.edge_sharpness().to_vec();
    edges.resize(t.num_edges(), 0.0);
    for (e, [a, b]) in t.edges().iter().copied().enumerate() {
        if sharp_spokes.iter().any(|&s| on_spoke(a, s) && on_spoke(b, s)) {
            edges[e] = SHARPNESS_INFINITE;
        }
    }
    let mut vertices = mesh.vertex_sharpness().to_vec();
    vertices.resize(t.num_vertices(), 0.0);
    if corner {
        for (v, c) in coords.iter().enumerate() {
            if c[1] == 0 && c[2] == 0 {
                vertices[v] = SHARPNESS_INFINITE;
            }
        }
    }
    let mut holes = mesh.holes().to_vec();
    holes.resize(t.num_faces(), false);
    Ok(mesh.retagged(edges, vertices, holes, mesh.options())?)
}

/// The local subdivision matrix of `refiner` around a vertex of valence
/// `valence` of a disk of `faces`, over `rings` rings (see the [module
/// docs](self)): [`local_subdivision_matrix_at`] an interior vertex.
///
/// # Errors
/// As [`local_subdivision_matrix_at`].
pub fn local_subdivision_matrix<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    faces: DiskFaces,
    valence: usize,
    rings: usize,
) -> Result<LocalMatrix, AnalysisError> {
    local_subdivision_matrix_at(refiner, faces, Configuration::Interior, valence, rings)
}

/// The local subdivision matrix of `refiner` at a vertex of the
/// `configuration` with `k` sectors of `faces` around it, over `rings`
/// rings. Around a boundary or corner vertex the points are ordered as
/// inside, with `k + 1` copies of the places on the spokes (`j = 0`) and
/// `k` of the others. Only the interior configuration is block-circulant:
/// a dart or a crease keeps the disk's points and order but not its
/// symmetry.
///
/// # Errors
/// [`AnalysisError::Parameter`] for `k < 3` inside (`k < 1` on the
/// boundary), `rings < 1`, or a crease's `across` outside `1..k`; the
/// scheme's errors on the configuration;
/// [`AnalysisError::UnknownChildPoint`] where the plan does not name its
/// child points; [`AnalysisError::MissingPoint`] where a child point is not
/// at a place of the configuration; [`AnalysisError::NotClosed`] where the
/// scheme's support is wider than `rings` rings.
pub fn local_subdivision_matrix_at<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    faces: DiskFaces,
    configuration: Configuration,
    k: usize,
    rings: usize,
) -> Result<LocalMatrix, AnalysisError> {
    if configuration == Configuration::Face {
        return face_configuration(refiner, faces, k, rings);
    }
    let valence = k;
    let open = configuration.is_open();
    let least = if open { 1 } else { 3 };
    if valence < least {
        return Err(AnalysisError::Parameter { what: "valence", value: valence, min: least });
    }
    if let Configuration::Crease { across } = configuration {
        if across < 1 {
            return Err(AnalysisError::Parameter { what: "across", value: across, min: 1 });
        }
        if across >= valence {
            return Err(AnalysisError::Parameter { what: "valence - across", value: 0, min: 1 });
        }
    }
    if rings < 1 {
        return Err(AnalysisError::Parameter { what: "rings", value: rings, min: 1 });
    }
    let scheme = refiner.name();
    let quads = faces == DiskFaces::Quads;
    let outer = disk_rings(rings);
    let (disk, coords) = if open {
        (shapes::half_disk(quads, valence, outer)?, shapes::half_disk_coordinates(quads, valence, outer)?)
    } else if quads {
        (shapes::quad_disk(valence, outer)?, shapes::disk_coordinates(quads, valence, outer)?)
    } else {
        (shapes::triangle_disk(valence, outer)?, shapes::disk_coordinates(quads, valence, outer)?)
    };
    // The places' arithmetic wraps round the spokes of a whole disk; a
    // half disk's `k + 1` spokes never wrap.
    let k = valence as u32;
    let spokes = if open { k + 1 } else { k };
    let mesh = tagged(&disk.mesh, &coords, configuration)?;
    let t = mesh.topology();
    let plan = refiner.build(&mesh, 1, Par::Seq)?;
    // A triangle scheme of vertex and face points only (√3) turns the
    // lattice: two steps bring it back, a third of the size.
    let named =
        |f: fn(&ChildPoint) -> bool| (0..plan.level_len(1)).any(|r| plan.child_point(0, r).as_ref().is_some_and(f));
    if faces == DiskFaces::Triangles
        && named(|c| matches!(c, ChildPoint::Face(_)))
        && !named(|c| matches!(c, ChildPoint::Edge(_)))
    {
        if configuration != Configuration::Interior {
            return Err(AnalysisError::UnsupportedConfiguration {
                scheme,
                configuration: configuration.name(),
                faces: "triangles turned by each step (√3)",
            });
        }
        return triadic(refiner, &mesh, &coords, valence, rings);
    }
    let r0 = plan.operator(0, Par::Seq)?;
    // Every child row's place (where it is one of the disk's).
    let mut child_place = std::collections::HashMap::new();
    let parent: Vec<Option<[u32; 3]>> = coords.iter().copied().map(Some).collect();
    for (row, place) in child_places(&plan, 0, t, &parent, spokes, scheme)?.into_iter().enumerate() {
        if let Some([s, i, j]) = place {
            child_place.insert(RingPoint { sector: s, i, j }, row as u32);
        }
    }
    let mut parent_place = std::collections::HashMap::new();
    for (v, &[s, i, j]) in coords.iter().enumerate() {
        parent_place.insert(canonical(spokes, s, i, j), v as u32);
    }
    let points = neighbourhood(faces, k, spokes, rings as u32);
    let (rows, matrix) = restrict(&r0, &points, &child_place, &parent_place, |p| *p, scheme, rings)?;
    let scheme_limit_mask = own_limit_mask(&plan, &rows);
    Ok(LocalMatrix {
        scheme,
        configuration,
        valence,
        rings,
        points,
        layers: Vec::new(),
        steps: 1,
        matrix,
        scheme_limit_mask,
    })
}

/// Frame `s`'s coordinates of the canonical place `c` of a triangle disk
/// of `k` sectors, where `c` lies in sector `s` or the next one (unfolded
/// across spoke `s + 1` as the regular triangle lattice continues; one
/// side only, so that a valence of 3 cannot unfold two ways at once).
fn tri_in_frame(k: u32, c: [u32; 3], s: u32) -> Option<(i64, i64)> {
    let [t, a, b] = c;
    let (a, b) = (i64::from(a), i64::from(b));
    if a == 0 && b == 0 {
        Some((0, 0))
    } else if t == s {
        Some((a, b))
    } else if t == (s + 1) % k {
        Some((-b, a + b))
    } else {
        None
    }
}

/// The canonical place of frame `s`'s coordinates `(i, j)` (folded back
/// into the sector beside where one is negative).
fn tri_canonical(k: u32, mut s: u32, mut i: i64, mut j: i64) -> Option<[u32; 3]> {
    for _ in 0..3 {
        if i >= 0 && j >= 0 {
            let p = canonical(k, s, u32::try_from(i).ok()?, u32::try_from(j).ok()?);
            return Some([p.sector, p.i, p.j]);
        }
        if j < 0 {
            (s, i, j) = ((s + k - 1) % k, -j, i + j);
        } else {
            (s, i, j) = ((s + 1) % k, i + j, -i);
        }
    }
    None
}

/// The places (in thirds of the control lattice) of level `level + 1`'s
/// rows of a scheme of vertex and face points (√3): a vertex point at its
/// vertex's place, a face point at its face's centroid where that is a
/// place.
fn tri_child_places<P: Plan + ?Sized>(
    plan: &P,
    level: u32,
    t: &subla_mesh::Topology,
    parent: &[Option<[u32; 3]>],
    k: u32,
) -> Vec<Option<[u32; 3]>> {
    (0..plan.level_len(level + 1))
        .map(|row| match plan.child_point(level, row) {
            Some(ChildPoint::Vertex(v)) => parent[v as usize],
            Some(ChildPoint::Face(f)) => {
                let cs: Option<Vec<[u32; 3]>> = t.face(f as usize).iter().map(|&v| parent[v as usize]).collect();
                let cs = cs?;
                cs.iter().flat_map(|c| [c[0], (c[0] + k - 1) % k]).find_map(|s| {
                    let ij: Option<Vec<(i64, i64)>> = cs.iter().map(|&c| tri_in_frame(k, c, s)).collect();
                    let (si, sj) = ij?.iter().fold((0, 0), |(x, y), &(i, j)| (x + i, y + j));
                    let n = cs.len() as i64;
                    (si % n == 0 && sj % n == 0).then(|| tri_canonical(k, s, si / n, sj / n)).flatten()
                })
            }
            _ => None,
        })
        .collect()
}

/// [`local_subdivision_matrix_at`] an interior vertex for a scheme that
/// turns the triangle lattice (√3): the matrix of two steps, `R₁ R₀`,
/// whose child lattice is the control lattice at a third of its size.
fn triadic<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    mesh: &Mesh,
    coords: &[[u32; 3]],
    valence: usize,
    rings: usize,
) -> Result<LocalMatrix, AnalysisError> {
    use subla_scheme::refinement::{Budget, Refinement};
    let scheme = refiner.name();
    let k = valence as u32;
    let plan = refiner.build(mesh, 2, Par::Seq)?;
    // Places in thirds of the control lattice.
    let mut places: Vec<Option<[u32; 3]>> = coords.iter().map(|&[s, i, j]| Some([s, 3 * i, 3 * j])).collect();
    for level in 0..2 {
        let t = plan.refined(level, Par::Seq)?.topology();
        places = tri_child_places(&plan, level, t, &places, k);
    }
    let mut refinement = Refinement::chain(&plan, Budget::default(), Par::Seq)?;
    refinement.compose(Budget::default(), Par::Seq)?;
    let Some(r) = refinement.into_composed() else { unreachable!("compose stores the product") };
    let child_place: std::collections::HashMap<RingPoint, u32> = places
        .iter()
        .enumerate()
        .filter_map(|(row, p)| p.map(|[sector, i, j]| (RingPoint { sector, i, j }, row as u32)))
        .collect();
    let parent_place: std::collections::HashMap<RingPoint, u32> =
        coords.iter().enumerate().map(|(v, &[s, i, j])| (canonical(k, s, i, j), v as u32)).collect();
    let points = neighbourhood(DiskFaces::Triangles, k, k, rings as u32);
    let (rows, matrix) = restrict(&r, &points, &child_place, &parent_place, |p| *p, scheme, rings)?;
    let scheme_limit_mask = own_limit_mask(&plan, &rows);
    Ok(LocalMatrix {
        scheme,
        configuration: Configuration::Interior,
        valence,
        rings,
        points,
        layers: Vec::new(),
        steps: 2,
        matrix,
        scheme_limit_mask,
    })
}

/// [`local_subdivision_matrix_at`] a `k`-sided face ([`Configuration::Face`]).
fn face_configuration<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    faces: DiskFaces,
    k: usize,
    rings: usize,
) -> Result<LocalMatrix, AnalysisError> {
    let scheme = refiner.name();
    if faces != DiskFaces::Quads {
        return Err(AnalysisError::UnsupportedConfiguration { scheme, configuration: "face", faces: "triangles" });
    }
    if k < 3 {
        return Err(AnalysisError::Parameter { what: "valence", value: k, min: 3 });
    }
    if rings < 1 {
        return Err(AnalysisError::Parameter { what: "rings", value: rings, min: 1 });
    }
    let outer = disk_rings(rings);
    let disk = shapes::polygon_disk(k, outer)?;
    let coords = shapes::polygon_disk_coordinates(k, outer)?;
    let t = disk.mesh.topology();
    let plan = refiner.build(&disk.mesh, 1, Par::Seq)?;
    let r0 = plan.operator(0, Par::Seq)?;
    let ptr = t.face_ptr();
    let mut child_place = std::collections::HashMap::new();
    for row in 0..plan.level_len(1) {
        match plan.child_point(0, row) {
            Some(ChildPoint::Corner(c)) => {
                // The face of corner c, and its centre's place in the frame
                // of the corner's sector: the largest place of the face's
                // vertices there.
                let f = ptr.partition_point(|&p| p <= c) - 1;
                let [s, i, j] = coords[t.face_verts()[c as usize] as usize];
                let (a, b) = t
                    .face(f)
                    .iter()
                    .map(|&w| coords[w as usize])
                    .filter(|w| w[0] == s)
                    .fold((0, 0), |(a, b), w| (a.max(w[1]), b.max(w[2])));
                child_place.insert(RingPoint { sector: s, i: i + a, j: j + b }, row as u32);
            }
            Some(_) => {}
            None => return Err(AnalysisError::UnknownChildPoint { scheme, row }),
        }
    }
    let parent_place: std::collections::HashMap<RingPoint, u32> =
        coords.iter().enumerate().map(|(v, &[sector, i, j])| (RingPoint { sector, i, j }, v as u32)).collect();
    let r = rings as u32;
    let mut places: Vec<(u32, u32)> = (0..=r).flat_map(|j| (0..=r).map(move |i| (i, j))).collect();
    places.sort_by_key(|&(i, j)| (i.max(j), j, i));
    let points: Vec<RingPoint> =
        places.iter().flat_map(|&(i, j)| (0..k as u32).map(move |sector| RingPoint { sector, i, j })).collect();
    let (_, matrix) = restrict(&r0, &points, &child_place, &parent_place, |p| *p, scheme, rings)?;
    Ok(LocalMatrix {
        scheme,
        configuration: Configuration::Face,
        valence: k,
        rings,
        points,
        layers: Vec::new(),
        steps: 1,
        matrix,
        scheme_limit_mask: None,
    })
}

/// The local subdivision matrix of a volumetric scheme (`refiner`, whose
/// plans name their child points: vertex, edge, face and cell points)
/// around an interior extraordinary edge of valence `valence`: `k`
/// hexahedra around the edge, the quad disk around a vertex of valence `k`
/// ([`shapes::quad_disk`]) extruded along it. The neighbourhood is the
/// disk's places within `rings` rings in each of the layers
/// `−layers ..= layers` (`z`, along the edge; [`LocalMatrix::layers`]):
/// first the edge's own points by layer (`z = 0, −1, 1, −2, 2, …`), then
/// for each layer in the same order the disk's other places in the order
/// of [`local_subdivision_matrix`], each repeated for the `k` sectors —
/// block-circulant in the sectors. Catmull-Clark solids need one ring and
/// one layer.
///
/// # Errors
/// [`AnalysisError::Parameter`] for `valence < 3`, `rings < 1` or
/// `layers < 1`; the scheme's errors; [`AnalysisError::UnknownChildPoint`],
/// [`AnalysisError::MissingPoint`] and [`AnalysisError::NotClosed`] as
/// [`local_subdivision_matrix_at`].
pub fn edge_subdivision_matrix<R: Refiner<Input = subla_volume::VolMesh> + ?Sized>(
    refiner: &R,
    valence: usize,
    rings: usize,
    layers: usize,
) -> Result<LocalMatrix, AnalysisError> {
    for (what, value, min) in [("valence", valence, 3), ("rings", rings, 1), ("layers", layers, 1)] {
        if value < min {
            return Err(AnalysisError::Parameter { what, value, min });
        }
    }
    let scheme = refiner.name();
    let k = valence as u32;
    let outer = disk_rings(rings);
    let depth = disk_rings(layers) as i32;
    let disk = shapes::quad_disk(valence, outer)?;
    let coords = shapes::disk_coordinates(true, valence, outer)?;
    let t = disk.mesh.topology();
    let np = t.num_vertices() as u32;
    // The disk extruded over z = −depth ..= depth: vertex `l·np + v` is the
    // disk's `v` in layer `l − depth`.
    let mut cells = Vec::with_capacity(t.num_faces() * 2 * depth as usize);
    for l in 0..2 * depth as u32 {
        let (lo, hi) = (l * np, (l + 1) * np);
        for f in 0..t.num_faces() {
            let q = t.face(f);
            cells.push(subla_volume::Cell::Hexahedron([
                q[0] + lo,
                q[1] + lo,
                q[2] + lo,
                q[3] + lo,
                q[0] + hi,
                q[1] + hi,
                q[2] + hi,
                q[3] + hi,
            ]));
        }
    }
    let nv = (np * (2 * depth as u32 + 1)) as usize;
    let mesh = subla_volume::VolMesh::from_cells(nv, &cells)?;
    let place_of = |v: u32| -> ([u32; 3], i32) { (coords[(v % np) as usize], (v / np) as i32 - depth) };
    // The place, doubled, of the centroid of vertices `vs` (the child point
    // of that element), where it is one.
    let centre_of = |vs: &[u32]| -> Option<(RingPoint, i32)> {
        let places: Vec<([u32; 3], i32)> = vs.iter().map(|&v| place_of(v)).collect();
        let (s, ij) = (0..k).find_map(|s| {
            let ij: Option<Vec<(u32, u32)>> = places.iter().map(|&(c, _)| in_frame(k, c, s)).collect();
            ij.map(|ij| (s, ij))
        })?;
        let n = vs.len() as u32;
        let (si, sj) = ij.iter().fold((0, 0), |(x, y), &(i, j)| (x + i, y + j));
        let sz: i32 = places.iter().map(|&(_, z)| z).sum();
        (2 * si % n == 0 && 2 * sj % n == 0 && (2 * sz) % n as i32 == 0)
            .then(|| (canonical(k, s, 2 * si / n, 2 * sj / n), 2 * sz / n as i32))
    };
    let plan = refiner.build(&mesh, 1, Par::Seq)?;
    let r0 = plan.operator(0, Par::Seq)?;
    let mut child_place = std::collections::HashMap::new();
    for row in 0..plan.level_len(1) {
        let at = match plan.child_point(0, row) {
            Some(ChildPoint::Vertex(v)) => {
                let (c, z) = place_of(v);
                Some((canonical(k, c[0], 2 * c[1], 2 * c[2]), 2 * z))
            }
            Some(ChildPoint::Edge(e)) => centre_of(&mesh.edge(e as usize)),
            Some(ChildPoint::Face(f)) => centre_of(mesh.face(f as usize)),
            Some(ChildPoint::Cell(c)) => centre_of(mesh.cell_vertices(c as usize)),
            Some(_) => None,
            None => return Err(AnalysisError::UnknownChildPoint { scheme, row }),
        };
        if let Some(at) = at {
            child_place.insert(at, row as u32);
        }
    }
    let mut parent_place = std::collections::HashMap::new();
    for v in 0..nv as u32 {
        let (c, z) = place_of(v);
        parent_place.insert((canonical(k, c[0], c[1], c[2]), z), v);
    }
    // The edge's points by layer, then each layer's ring places.
    let mut zs: Vec<i32> = (-(layers as i32)..=layers as i32).collect();
    zs.sort_by_key(|&z| (z.abs(), z));
    let disk_points = neighbourhood(DiskFaces::Quads, k, k, rings as u32);
    let mut points = Vec::new();
    let mut point_layers = Vec::new();
    for &z in &zs {
        points.push(disk_points[0]);
        point_layers.push(z);
    }
    for &z in &zs {
        for &p in &disk_points[1..] {
            points.push(p);
            point_layers.push(z);
        }
    }
    let keys: Vec<(RingPoint, i32)> = points.iter().copied().zip(point_layers.iter().copied()).collect();
    let (_, matrix) = restrict(&r0, &keys, &child_place, &parent_place, |key| key.0, scheme, rings)?;
    Ok(LocalMatrix {
        scheme,
        configuration: Configuration::Edge,
        valence,
        rings,
        points,
        layers: point_layers,
        steps: 1,
        matrix,
        scheme_limit_mask: None,
    })
}

/// `r` restricted to the neighbourhood: the rows of the child points at
/// `keys` (looked up in `child`) over the columns of the parent points at
/// the same keys (in `parent`), refused where a child point is missing or
/// reads a parent point outside (`point` names a key's place in errors).
fn restrict<K: std::hash::Hash + Eq>(
    r: &CsrMat<f64>,
    keys: &[K],
    child: &std::collections::HashMap<K, u32>,
    parent: &std::collections::HashMap<K, u32>,
    point: impl Fn(&K) -> RingPoint,
    scheme: &'static str,
    rings: usize,
) -> Result<(Vec<u32>, CsrMat<f64>), AnalysisError> {
    let rows: Vec<u32> = keys
        .iter()
        .map(|key| {
            let p = point(key);
            child.get(key).copied().ok_or(AnalysisError::MissingPoint { scheme, sector: p.sector, i: p.i, j: p.j })
        })
        .collect::<Result<_, _>>()?;
    let cols: Vec<u32> = keys.iter().map(|key| parent[key]).collect();
    // Closed: each row's weights lie on the neighbourhood's columns.
    let inside: std::collections::HashSet<u32> = cols.iter().copied().collect();
    for (key, &row) in keys.iter().zip(&rows) {
        let (idx, w) = r.as_ref().slice(row as usize);
        if idx.iter().zip(w).any(|(c, &w)| w != 0.0 && !inside.contains(c)) {
            let p = point(key);
            return Err(AnalysisError::NotClosed { scheme, sector: p.sector, i: p.i, j: p.j, rings });
        }
    }
    let matrix = r.submatrix(&rows, &cols)?;
    Ok((rows, matrix))
}

/// The scheme's own limit mask of the centre (`rows[0]`), over the child
/// points `rows`, where `plan` has a limit operator and the mask lies on
/// them.
fn own_limit_mask<P: Plan + ?Sized>(plan: &P, rows: &[u32]) -> Option<Vec<f64>> {
    let l = plan.limit(Par::Seq).ok()?;
    let (idx, w) = l.as_ref().slice(rows[0] as usize);
    let at: std::collections::HashMap<u32, usize> = rows.iter().enumerate().map(|(p, &r)| (r, p)).collect();
    let mut mask = vec![0.0; rows.len()];
    for (c, &w) in idx.iter().zip(w) {
        if w != 0.0 {
            mask[*at.get(c)?] += w;
        }
    }
    Some(mask)
}

/// One eigenvalue of a local subdivision matrix.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Eigenvalue {
    /// The value.
    pub value: Complex<f64>,
    /// Its Fourier index `ω` (`0 ≤ ω < k`), where the matrix is
    /// block-circulant.
    pub fourier: Option<usize>,
}

/// The spectrum of a local subdivision matrix, by decreasing modulus.
#[derive(Clone, Debug)]
pub struct Spectrum {
    /// The valence.
    pub valence: usize,
    /// The configuration: only an interior one is rotationally symmetric
    /// (see [`Spectrum::conditions`]).
    pub configuration: Configuration,
    /// Every eigenvalue, by decreasing modulus (ties by Fourier index).
    pub values: Vec<Eigenvalue>,
}

/// The classical conditions on the leading eigenvalues (Reif; Peters &
/// Reif, *Subdivision Surfaces*, ch. 5). Around a boundary, crease,
/// dart or corner vertex the subdominant pair need not be equal (one
/// along the boundary curve or crease, one across it): `subdominant_pair`
/// then asks both to be real in `(0, 1)`, and the Fourier index is not
/// defined (true).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Conditions {
    /// `λ₀ = 1`, simple.
    pub unit_dominant: bool,
    /// `λ₁ = λ₂`, real and positive, below 1.
    pub subdominant_pair: bool,
    /// `λ₁, λ₂` have Fourier indices 1 and `k − 1` (where known).
    pub fourier_index_one: bool,
    /// `|λ₃| < λ₂` (`= λ₁` inside).
    pub gap: bool,
}

impl Conditions {
    /// Every condition holds.
    pub fn all(&self) -> bool {
        self.unit_dominant && self.subdominant_pair && self.fourier_index_one && self.gap
    }
}

/// Tolerance of the spectral comparisons: a repeated eigenvalue whose
/// eigenvectors do not span its multiplicity (a Jordan block, as at some
/// boundary vertices) is computed only to about the square root of the
/// rounding, so equalities are judged to 1e-7.
const TOL: f64 = 1e-7;

impl Spectrum {
    /// `λ₁`, the first eigenvalue after `λ₀ = 1`.
    pub fn subdominant(&self) -> Option<Eigenvalue> {
        self.values.get(1).copied()
    }

    /// The classical conditions.
    pub fn conditions(&self) -> Conditions {
        let v = &self.values;
        let near = |a: Complex<f64>, b: Complex<f64>| (a - b).norm() < TOL;
        let unit_dominant = v.first().is_some_and(|l| near(l.value, Complex::new(1.0, 0.0)))
            && v.get(1).is_none_or(|l| l.value.norm() < 1.0 - TOL);
        // Inside, λ₁ = λ₂; on a boundary (the surface along the boundary
        // curve, and across it) both real and positive, λ₁ ≥ λ₂.
        let real = |l: &Eigenvalue| l.value.im.abs() < TOL && l.value.re > 0.0 && l.value.re < 1.0 - TOL;
        let subdominant_pair = match (v.get(1), v.get(2)) {
            (Some(a), Some(b)) if self.configuration != Configuration::Interior => real(a) && real(b),
            (Some(a), Some(b)) => near(a.value, b.value) && real(a),
            _ => false,
        };
        let k = self.valence;
        let fourier_index_one = match (v.get(1).and_then(|l| l.fourier), v.get(2).and_then(|l| l.fourier)) {
            (Some(a), Some(b)) => {
                let mut ab = [a, b];
                ab.sort_unstable();
                ab == [1, k - 1] || (k == 2 && ab == [1, 1])
            }
            _ => true,
        };
        let gap = match (v.get(2), v.get(3)) {
            (Some(b), Some(c)) => c.value.norm() < b.value.norm() - TOL,
            (Some(_), None) => true,
            _ => false,
        };
        Conditions { unit_dominant, subdominant_pair, fourier_index_one, gap }
    }
}

impl LocalMatrix {
    /// The configuration is rotationally symmetric (an interior vertex, a
    /// face, an edge).
    fn symmetric(&self) -> bool {
        matches!(self.configuration, Configuration::Interior | Configuration::Face | Configuration::Edge)
    }

    /// The points on the axis of the rotation, first in `points`: the
    /// centre vertex, none around a face, the edge's points in every layer.
    fn axis_points(&self) -> usize {
        match self.configuration {
            Configuration::Face => 0,
            _ => self.points.iter().take_while(|p| p.i == 0 && p.j == 0).count(),
        }
    }

    /// Whether the matrix is block-circulant: entry `(a·s, b·t)` depends
    /// on `t − s` only, for every pair of places (and the centre's row and
    /// column are constant over the sectors).
    pub fn is_block_circulant(&self) -> bool {
        self.symmetric() && block_circulant(&self.matrix.to_dense(), self.valence, self.axis_points())
    }

    /// The discrete Fourier transform of the block-circulant matrix: for each
    /// frequency `ω` in `0..k`, the block `B_ω[a][b] = Σ_τ S[(a, 0), (b, τ)]
    /// ζ^{ωτ}` (`ζ = e^{2πi/k}`) over the places `a, b`, with the centre
    /// added to `B_0` (first row and column). An eigenvector `u` of `B_ω`
    /// gives the eigenvector `v[(b, t)] = u[b] ζ^{ωt}` of the matrix.
    /// `None` where the matrix is not block-circulant.
    pub fn fourier_blocks(&self) -> Option<Vec<DMatrix<Complex<f64>>>> {
        let d = self.matrix.to_dense();
        (self.symmetric() && block_circulant(&d, self.valence, self.axis_points()))
            .then(|| fourier_blocks_of(&d, self.valence, self.axis_points()))
    }
}

/// Whether the dense matrix `d` (ordered as [`LocalMatrix::points`] around
/// an interior vertex of valence `k`) is block-circulant.
fn block_circulant(d: &ndarray::Array2<f64>, k: usize, c0: usize) -> bool {
    let m = (d.nrows() - c0) / k;
    let at = |a: usize, s: usize| c0 + a * k + s % k;
    for a in 0..m {
        for b in 0..m {
            for s in 0..k {
                for t in 0..k {
                    if (d[(at(a, s), at(b, t))] - d[(at(a, 0), at(b, t + k - s))]).abs() > 1e-14 {
                        return false;
                    }
                }
            }
        }
        for (s, x) in (0..k).flat_map(|s| (0..c0).map(move |x| (s, x))) {
            if (d[(at(a, s), x)] - d[(at(a, 0), x)]).abs() > 1e-14
                || (d[(0, at(a, s))] - d[(0, at(a, 0))]).abs() > 1e-14
            {
                return false;
            }
        }
    }
    true
}

/// [`LocalMatrix::fourier_blocks`] of the dense block-circulant `d`.
fn fourier_blocks_of(d: &ndarray::Array2<f64>, k: usize, c0: usize) -> Vec<DMatrix<Complex<f64>>> {
    let m = (d.nrows() - c0) / k;
    let at = |a: usize, s: usize| c0 + a * k + s % k;
    let zeta = |w: usize, t: usize| Complex::from_polar(1.0, TAU * (w * t % k) as f64 / k as f64);
    (0..k)
        .map(|w| {
            let c = if w == 0 { c0 } else { 0 };
            let mut b = DMatrix::<Complex<f64>>::zeros(m + c, m + c);
            for a in 0..m {
                for bb in 0..m {
                    b[(a + c, bb + c)] = (0..k).map(|t| d[(at(a, 0), at(bb, t))] * zeta(w, t)).sum();
                }
            }
            // Frequency 0 keeps the axis points (fixed by the rotation).
            for x in 0..c {
                for y in 0..c {
                    b[(x, y)] = Complex::new(d[(x, y)], 0.0);
                }
                for a in 0..m {
                    b[(x, a + c)] = Complex::new((0..k).map(|t| d[(x, at(a, t))]).sum(), 0.0);
                    b[(a + c, x)] = Complex::new(d[(at(a, 0), x)], 0.0);
                }
            }
            b
        })
        .collect()
}

impl LocalMatrix {
    /// A basis of the left eigenspace of the real eigenvalue `lambda`
    /// (the row vectors `l` with `l S = λ l`), each of unit length: the null
    /// space of `Sᵀ − λI` by a singular value decomposition, singular values
    /// below `1e-9` of the largest counted as zero.
    pub fn left_eigenvectors(&self, lambda: f64) -> Vec<Vec<f64>> {
        self.eigenspace(lambda, true)
    }

    /// A basis of the right eigenspace of the real eigenvalue `lambda`
    /// (`S v = λ v`), as [`LocalMatrix::left_eigenvectors`].
    pub fn right_eigenvectors(&self, lambda: f64) -> Vec<Vec<f64>> {
        self.eigenspace(lambda, false)
    }

    fn eigenspace(&self, lambda: f64, left: bool) -> Vec<Vec<f64>> {
        let d = self.matrix.to_dense();
        let n = d.nrows();
        let m = DMatrix::from_fn(n, n, |i, j| {
            let x = if left { d[(j, i)] } else { d[(i, j)] };
            if i == j { x - lambda } else { x }
        });
        let svd = m.svd(false, true);
        let Some(vt) = svd.v_t else { return Vec::new() };
        let largest = svd.singular_values.iter().fold(0.0f64, |a, &b| a.max(b)).max(1.0);
        (0..n)
            .filter(|&i| svd.singular_values[i] <= 1e-9 * largest)
            .map(|i| vt.row(i).iter().copied().collect())
            .collect()
    }

    /// The tangent masks of the centre: the two left eigenvectors of the
    /// subdominant eigenvalue `λ₁` that weigh the first place's points (the
    /// spokes, `points[1..=k]`; around a face its corners, `points[..k]`, at
    /// `2π(t + ½)/k`) by `cos(2πt/k)` and `sin(2πt/k)` — the
    /// real and imaginary parts of its Fourier-index-1 eigenvector, scaled so.
    /// Applied to the configuration's positions they give two tangents of
    /// the limit surface at the centre. `None` where `λ₁` is not a double
    /// real eigenvalue or its eigenvectors do not reach the spokes, and
    /// around an extraordinary edge (whose subdominant eigenvalue may be
    /// the edge's own ½).
    pub fn tangent_masks(&self) -> Option<[Vec<f64>; 2]> {
        self.rotation_pair(true).map(|(_, pair)| pair)
    }

    /// The left (`left`) or right eigenvectors of a real subdominant
    /// eigenvalue `λ₁` of multiplicity two, combined so that their entries
    /// on the first ring's spokes (`points[1..=k]`) are `cos(2πt/k)` and
    /// `sin(2πt/k)` (least squares there): the real and imaginary parts of
    /// the eigenvector of Fourier index 1. With `λ₁`.
    fn rotation_pair(&self, left: bool) -> Option<(f64, [Vec<f64>; 2])> {
        let lambda1 = spectrum(self).ok()?.subdominant()?.value;
        if lambda1.im.abs() > TOL {
            return None;
        }
        let space = if left { self.left_eigenvectors(lambda1.re) } else { self.right_eigenvectors(lambda1.re) };
        let [p, q] = space.as_slice() else { return None };
        let k = self.valence;
        // The first ring: the spokes at angles 2πt/k after the centre, or a
        // face's corners at 2π(t + ½)/k.
        let (first, phase) = match self.configuration {
            Configuration::Face => (0, 0.5),
            Configuration::Edge => return None,
            _ => (1, 0.0),
        };
        let ring = first..first + k;
        let (mut a11, mut a12, mut a22) = (0.0, 0.0, 0.0);
        for t in ring.clone() {
            a11 += p[t] * p[t];
            a12 += p[t] * q[t];
            a22 += q[t] * q[t];
        }
        let det = a11 * a22 - a12 * a12;
        if det.abs() < 1e-18 {
            return None;
        }
        let fit = |f: fn(f64) -> f64| -> Vec<f64> {
            let target = |t: usize| f(TAU * ((t - first) as f64 + phase) / k as f64);
            let (b1, b2) = ring.clone().fold((0.0, 0.0), |(x, y), t| (x + p[t] * target(t), y + q[t] * target(t)));
            let (alpha, beta) = ((a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det);
            p.iter().zip(q).map(|(x, y)| alpha * x + beta * y).collect()
        };
        Some((lambda1.re, [fit(f64::cos), fit(f64::sin)]))
    }

    /// The limit mask of the centre: the left eigenvector of `λ₀ = 1`,
    /// scaled to sum to 1 (the limit position is `Σ mask[p] · x[points[p]]`).
    /// `None` where 1 is not a simple eigenvalue.
    pub fn limit_mask(&self) -> Option<Vec<f64>> {
        let space = self.left_eigenvectors(1.0);
        let [l] = space.as_slice() else { return None };
        let sum: f64 = l.iter().sum();
        (sum.abs() > 1e-12).then(|| l.iter().map(|x| x / sum).collect())
    }
}

/// The eigenvalues of a small complex matrix (its Schur form, the QR
/// iteration capped: `None` where it does not converge).
fn eigenvalues(m: DMatrix<Complex<f64>>) -> Option<Vec<Complex<f64>>> {
    let n = m.nrows();
    if n == 0 {
        return Some(Vec::new());
    }
    let t = m.try_schur(f64::EPSILON, 1000 + 100 * n)?.unpack().1;
    Some((0..n).map(|i| t[(i, i)]).collect())
}

/// The eigenvalues of `s`, by decreasing modulus, with their Fourier
/// indices where the matrix is block-circulant (through
/// [`LocalMatrix::fourier_blocks`]; otherwise the whole matrix's Schur form).
///
/// # Errors
/// [`AnalysisError::Algebra`] for a matrix too large for a dense copy
/// (over 4096 rows).
pub fn spectrum(s: &LocalMatrix) -> Result<Spectrum, AnalysisError> {
    let n = s.matrix.nrows();
    let dense = s.matrix.to_dense_within(4096 * 4096)?;
    let c0 = s.axis_points();
    let circulant = s.symmetric() && block_circulant(&dense, s.valence, c0);
    let mut values: Vec<Eigenvalue> = match circulant.then(|| fourier_blocks_of(&dense, s.valence, c0)) {
        Some(blocks) => blocks
            .into_iter()
            .enumerate()
            .map(|(w, b)| {
                let values = eigenvalues(b).ok_or(AnalysisError::NoConvergence { scheme: s.scheme, size: n })?;
                Ok(values.into_iter().map(move |value| Eigenvalue { value, fourier: Some(w) }))
            })
            .collect::<Result<Vec<_>, AnalysisError>>()?
            .into_iter()
            .flatten()
            .collect(),
        None => {
            let m = DMatrix::from_fn(n, n, |i, j| Complex::new(dense[(i, j)], 0.0));
            eigenvalues(m)
                .ok_or(AnalysisError::NoConvergence { scheme: s.scheme, size: n })?
                .into_iter()
                .map(|value| Eigenvalue { value, fourier: None })
                .collect()
        }
    };
    // Clean rounding: imaginary parts and moduli below the tolerance.
    for e in &mut values {
        if e.value.im.abs() < 1e-13 {
            e.value.im = 0.0;
        }
    }
    values.sort_by(|a, b| {
        b.value.norm().partial_cmp(&a.value.norm()).unwrap_or(std::cmp::Ordering::Equal).then(a.fourier.cmp(&b.fourier))
    });
    // Near-equal moduli ordered by frequency, which the float order may not.
    Ok(Spectrum { valence: s.valence, configuration: s.configuration, values })
}

/// The characteristic map of a scheme at a vertex of valence `k`,
/// sampled on its ring, and Reif's criterion checked numerically
/// ([`characteristic_map`]).
#[derive(Clone, Debug)]
pub struct CharacteristicMap {
    /// The valence.
    pub valence: usize,
    /// The subdominant eigenvalue.
    pub lambda: f64,
    /// The ring's points in the plane.
    pub points: Vec<[f64; 2]>,
    /// Its triangles (quads split along a diagonal), counter-clockwise in
    /// the parameter domain.
    pub triangles: Vec<[u32; 3]>,
    /// The sector (`0..k`, counter-clockwise) of each triangle in the
    /// parameter domain.
    pub sectors: Vec<u32>,
    /// The smallest and largest signed area of the triangles' images over
    /// their mean: regularity needs both of one sign.
    pub area_range: [f64; 2],
    /// Every triangle keeps its orientation (the map is regular on the
    /// sampled ring).
    pub regular: bool,
    /// The ring's image covers the region between its two boundary curves
    /// once: both curves are simple, wind once around the centre, and the
    /// triangles' areas add up to the area between them.
    pub injective: bool,
}

/// The characteristic map of `refiner` at a vertex of valence `valence`
/// of a disk of `faces`: the configuration's points placed at the real and
/// imaginary parts of the subdominant right eigenvector of Fourier index 1
/// (scaled so that the first ring's points are `(cos 2πt/k, sin 2πt/k)`),
/// refined `levels` levels with the scheme, and its ring — the faces
/// between distance ½ and 1 from the centre in the control grid — sampled.
/// The neighbourhood is four rings, refined as a disk of four rings: the
/// ring's faces then lie where the disk's boundary does not reach (for
/// schemes of support up to two rings).
///
/// # Errors
/// As [`local_subdivision_matrix`] (with four rings);
/// [`AnalysisError::NoSubdominantPair`] where `λ₁` is not a double real
/// eigenvalue with eigenvectors on the first ring.
pub fn characteristic_map<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    faces: DiskFaces,
    valence: usize,
    levels: u32,
) -> Result<CharacteristicMap, AnalysisError> {
    let rings = 4;
    let s = local_subdivision_matrix(refiner, faces, valence, rings)?;
    let scheme = s.scheme;
    if s.steps != 1 {
        return Err(AnalysisError::UnsupportedConfiguration {
            scheme,
            configuration: "characteristic map",
            faces: "triangles turned by each step (√3)",
        });
    }
    let missing = || AnalysisError::NoSubdominantPair { scheme, valence };
    let (lambda, [xs, ys]) = s.rotation_pair(false).ok_or_else(missing)?;
    let k = valence;
    // The disk of exactly the neighbourhood, its vertices at the
    // eigenvector's coordinates.
    let quads = faces == DiskFaces::Quads;
    let disk = if quads { shapes::quad_disk(valence, rings)? } else { shapes::triangle_disk(valence, rings)? };
    let coords = shapes::disk_coordinates(quads, valence, rings)?;
    let index: std::collections::HashMap<RingPoint, usize> =
        s.points.iter().enumerate().map(|(n, &pt)| (pt, n)).collect();
    let kk = valence as u32;
    let control = ndarray::Array2::from_shape_fn((coords.len(), 2), |(v, c)| {
        let [sec, i, j] = coords[v];
        let n = index[&canonical(kk, sec, i, j)];
        if c == 0 { xs[n] } else { ys[n] }
    });
    let (y, places, fine) = refine_with_places(refiner, &disk.mesh, &coords, &control, levels, kk)?;
    let fine = fine.topology();
    let unit = 1u32 << levels;
    let distance = |[_, i, j]: [u32; 3]| if quads { i.max(j) } else { i + j };
    // The parameter point of a place (the flat disk's layout).
    let param = |[sec, i, j]: [u32; 3]| {
        let (a0, a1) = (TAU * f64::from(sec) / k as f64, TAU * f64::from(sec + 1) / k as f64);
        [f64::from(i) * a0.cos() + f64::from(j) * a1.cos(), f64::from(i) * a0.sin() + f64::from(j) * a1.sin()]
    };
    let sector_of = |c: [f64; 2]| ((c[1].atan2(c[0]).rem_euclid(TAU) / TAU * k as f64) as u32).min(kk - 1);
    let (points, triangles, sectors) = ring_triangles(fine, &places, &y, unit, quads, param, sector_of);
    let (total, [lo, hi], regular) = regularity(&triangle_areas(&points, &triangles));
    // The boundary curves: the images of distance ½ and 1, in turning order.
    let curve = |d: u32| -> Vec<[f64; 2]> {
        let mut on: Vec<(f64, [f64; 2])> = (0..fine.num_vertices())
            .filter_map(|v| {
                let pl = places[v]?;
                (distance(pl) == d).then(|| {
                    // The parameter angle of the place, for the order.
                    let [px, py] = param(pl);
                    (py.atan2(px).rem_euclid(TAU), [y[(v, 0)], y[(v, 1)]])
                })
            })
            .collect();
        on.sort_by(|a, b| a.0.total_cmp(&b.0));
        on.into_iter().map(|(_, p)| p).collect()
    };
    let (inner, outer) = (curve(unit / 2), curve(unit));
    let between = polygon_area(&outer) - polygon_area(&inner);
    let injective = regular
        && simple(&inner)
        && simple(&outer)
        && winds_once(&inner)
        && winds_once(&outer)
        && (between - total).abs() <= 1e-9 * total.abs().max(1e-300);
    Ok(CharacteristicMap { valence, lambda, points, triangles, sectors, area_range: [lo, hi], regular, injective })
}

/// The characteristic map of `refiner` at a boundary vertex with
/// `valence` faces (a half disk, [`Configuration::Boundary`]): the
/// configuration's points placed at the right eigenvectors of the two
/// leading subdominant eigenvalues `λ₁ ≥ λ₂` — the one antisymmetric under
/// the half disk's mirror (spoke `s` ↔ spoke `k − s`) as `x`, scaled so that
/// spoke 0's first point is at `x = 1`, the other as `y`, scaled to at most
/// 1 on the first ring; oriented so that most of its area is positive —,
/// refined `levels` levels and sampled on the half ring
/// between distance ½ and 1. Regular: every triangle keeps its
/// orientation; injective: the half ring's boundary (the two half curves
/// and the spokes' pieces between them) is a simple polygon whose area the
/// triangles fill once. `lambda` is `λ₂`, the smaller of the two.
///
/// # Errors
/// As [`local_subdivision_matrix_at`] (with four rings);
/// [`AnalysisError::NoBoundaryPair`] where `λ₁`, `λ₂` are not real and
/// above `|λ₃|` with one eigenvector each (or, double, with an
/// antisymmetric and a symmetric one). Two eigenvectors of one symmetry
/// make a map that folds: it is computed, and not regular.
pub fn boundary_characteristic_map<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    faces: DiskFaces,
    valence: usize,
    levels: u32,
) -> Result<CharacteristicMap, AnalysisError> {
    let rings = 4;
    let s = local_subdivision_matrix_at(refiner, faces, Configuration::Boundary, valence, rings)?;
    let scheme = s.scheme;
    let missing = || AnalysisError::NoBoundaryPair { scheme, valence };
    // The leading eigenvalues from the one-ring matrix (a closed block of
    // the four-ring one: its eigenvalues are among the larger matrix's).
    let sp = spectrum(&local_subdivision_matrix_at(refiner, faces, Configuration::Boundary, valence, 1)?)?;
    let v = &sp.values;
    let real = |i: usize| v.get(i).filter(|e| e.value.im.abs() < TOL && e.value.re > 0.0).map(|e| e.value.re);
    let (l1, l2) = (real(1).ok_or_else(missing)?, real(2).ok_or_else(missing)?);
    if v.get(3).is_some_and(|e| e.value.norm() >= l2 - TOL) {
        return Err(missing());
    }
    // The mirror of the half disk: spoke s ↔ k − s, sector s ↔ k − 1 − s
    // with its two coordinates swapped.
    let k = valence as u32;
    let at: std::collections::HashMap<RingPoint, usize> = s.points.iter().enumerate().map(|(n, &pt)| (pt, n)).collect();
    let mirror: Vec<usize> = s
        .points
        .iter()
        .map(|pt| match (pt.i, pt.j) {
            (0, 0) => 0,
            (i, 0) => at[&RingPoint { sector: k - pt.sector, i, j: 0 }],
            (i, j) => at[&RingPoint { sector: k - 1 - pt.sector, i: j, j: i }],
        })
        .collect();
    let part =
        |u: &[f64], sign: f64| -> Vec<f64> { (0..u.len()).map(|n| 0.5 * (u[n] + sign * u[mirror[n]])).collect() };
    let norm = |u: &[f64]| u.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (mut xs, mut ys) = if (l1 - l2).abs() < TOL {
        // A double eigenvalue: its antisymmetric and symmetric parts.
        let space = s.right_eigenvectors(l1);
        let [p, q] = space.as_slice() else { return Err(missing()) };
        let pick = |sign: f64| {
            let (a, b) = (part(p, sign), part(q, sign));
            if norm(&a) >= norm(&b) { a } else { b }
        };
        let (x, y) = (pick(-1.0), pick(1.0));
        let scale = norm(p).max(norm(q));
        if norm(&x) < 1e-6 * scale || norm(&y) < 1e-6 * scale {
            return Err(missing());
        }
        (x, y)
    } else {
        let (a, b) = (s.right_eigenvectors(l1), s.right_eigenvectors(l2));
        let ([a], [b]) = (a.as_slice(), b.as_slice()) else { return Err(missing()) };
        // The antisymmetric one (along the boundary) as x where there is
        // one; two of one symmetry make a map that folds (not regular).
        if norm(&part(b, -1.0)) > norm(&part(a, -1.0)) { (b.clone(), a.clone()) } else { (a.clone(), b.clone()) }
    };
    // x = 1 at spoke 0's first point (or at most 1 there and beyond); y at
    // most 1 on the first ring. The orientation is settled by the areas.
    let quads = faces == DiskFaces::Quads;
    let first: Vec<usize> = (0..s.points.len())
        .filter(|&n| {
            let pt = s.points[n];
            (if quads { pt.i.max(pt.j) } else { pt.i + pt.j }) == 1
        })
        .collect();
    let x0 = xs[at[&RingPoint { sector: 0, i: 1, j: 0 }]];
    let xmax = first.iter().fold(0.0f64, |m, &n| m.max(xs[n].abs()));
    let xscale = if x0.abs() > 1e-9 * xmax { x0 } else { xmax.max(1e-300) };
    xs.iter_mut().for_each(|x| *x /= xscale);
    let ymax = first.iter().fold(0.0f64, |m, &n| m.max(ys[n].abs()));
    ys.iter_mut().for_each(|y| *y /= ymax.max(1e-300));
    // The half disk of exactly the neighbourhood, refined.
    let disk = shapes::half_disk(quads, valence, rings)?;
    let coords = shapes::half_disk_coordinates(quads, valence, rings)?;
    let spokes = k + 1;
    let control = ndarray::Array2::from_shape_fn((coords.len(), 2), |(v, c)| {
        let [sec, i, j] = coords[v];
        let n = at[&canonical(spokes, sec, i, j)];
        if c == 0 { xs[n] } else { ys[n] }
    });
    let (y, places, fine) = refine_with_places(refiner, &disk.mesh, &coords, &control, levels, spokes)?;
    let fine = fine.topology();
    let unit = 1u32 << levels;
    let distance = |[_, i, j]: [u32; 3]| if quads { i.max(j) } else { i + j };
    let in_ring = |d: u32| d >= unit / 2 && d <= unit;
    // The parameter point of a place: spoke s at angle πs/k (a quarter
    // turn for a single face).
    let step = std::f64::consts::PI / f64::from(k.max(2));
    let last = step * f64::from(k);
    let param = |[sec, i, j]: [u32; 3]| {
        let (a0, a1) = (step * f64::from(sec), step * f64::from(sec + 1));
        [f64::from(i) * a0.cos() + f64::from(j) * a1.cos(), f64::from(i) * a0.sin() + f64::from(j) * a1.sin()]
    };
    let sector_of = |c: [f64; 2]| ((c[1].atan2(c[0]).clamp(0.0, last) / step) as u32).min(k - 1);
    let (mut points, triangles, sectors) = ring_triangles(fine, &places, &y, unit, quads, param, sector_of);
    let mut areas = triangle_areas(&points, &triangles);
    // Oriented so that most of the area is positive.
    let orientation = if areas.iter().sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    areas.iter_mut().for_each(|a| *a *= orientation);
    let (total, [lo, hi], regular) = regularity(&areas);
    // The half ring's boundary: spoke 0 outwards, the outer half curve by
    // angle, spoke k inwards, the inner half curve back.
    let mut rim: Vec<(u32, f64, [f64; 2])> = (0..fine.num_vertices())
        .filter_map(|v| {
            let pl = places[v]?;
            let d = distance(pl);
            let [px, py] = param(pl);
            let angle = py.atan2(px).clamp(0.0, last);
            let on_spoke = pl[2] == 0 && (pl[0] == 0 || pl[0] == k);
            (in_ring(d) && (d == unit / 2 || d == unit || on_spoke)).then(|| (d, angle, [y[(v, 0)], y[(v, 1)]]))
        })
        .collect();
    let key = |&(d, angle, _): &(u32, f64, [f64; 2])| -> (u8, f64) {
        let end = last - 1e-9;
        if angle <= 1e-9 && d < unit {
            (0, f64::from(d))
        } else if d == unit {
            (1, angle)
        } else if angle >= end {
            (2, -f64::from(d))
        } else {
            (3, -angle)
        }
    };
    rim.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let polygon: Vec<[f64; 2]> = rim.iter().map(|r| r.2).collect();
    let enclosed = orientation * polygon_area(&polygon);
    let injective = regular && simple(&polygon) && (enclosed - total).abs() <= 1e-9 * total.abs().max(1e-300);
    // Hand out the map turning positively.
    if orientation < 0.0 {
        points.iter_mut().for_each(|p| p[1] = -p[1]);
    }
    Ok(CharacteristicMap { valence, lambda: l2, points, triangles, sectors, area_range: [lo, hi], regular, injective })
}

/// A refined characteristic map: the finest level's values, places and
/// mesh.
type Refined = (ndarray::Array2<f64>, Vec<Option<[u32; 3]>>, Mesh);

/// `control` (one row per vertex of `mesh`, whose places are `coords`)
/// refined `levels` levels by `refiner`: the finest level's values, the
/// place of each of its vertices (in a disk of `spokes` spokes) and its
/// mesh.
fn refine_with_places<R: Refiner<Input = Mesh> + ?Sized>(
    refiner: &R,
    mesh: &Mesh,
    coords: &[[u32; 3]],
    control: &ndarray::Array2<f64>,
    levels: u32,
    spokes: u32,
) -> Result<Refined, AnalysisError> {
    let plan = refiner.build(mesh, levels, Par::Seq)?;
    let y = subla_scheme::eval(&plan, control.view(), Par::Seq)?;
    let mut places: Vec<Option<[u32; 3]>> = coords.iter().copied().map(Some).collect();
    for l in 0..levels {
        let t = plan.refined(l, Par::Seq)?.topology();
        places = child_places(&plan, l, t, &places, spokes, refiner.name())?;
    }
    Ok((y, places, plan.refined(levels, Par::Seq)?.clone()))
}

/// The ring of a refined characteristic map: the finest faces whose
/// vertices all lie between distance `unit / 2` and `unit` (not all on one
/// of the two), as triangles over their images in `y`, each with the sector
/// `sector_of` gives the sum of its vertices' parameter points (`param`).
/// The points used, the triangles and their sectors.
fn ring_triangles(
    fine: &subla_mesh::Topology,
    places: &[Option<[u32; 3]>],
    y: &ndarray::Array2<f64>,
    unit: u32,
    quads: bool,
    param: impl Fn([u32; 3]) -> [f64; 2],
    sector_of: impl Fn([f64; 2]) -> u32,
) -> (Vec<[f64; 2]>, Vec<[u32; 3]>, Vec<u32>) {
    let distance = |[_, i, j]: [u32; 3]| if quads { i.max(j) } else { i + j };
    let in_ring = |d: u32| d >= unit / 2 && d <= unit;
    let mut used = vec![u32::MAX; fine.num_vertices()];
    let (mut points, mut triangles, mut sectors) = (Vec::new(), Vec::new(), Vec::new());
    for f in 0..fine.num_faces() {
        let vs = fine.face(f);
        let ds: Option<Vec<u32>> = vs.iter().map(|&v| places[v as usize].map(distance)).collect();
        let Some(ds) = ds else { continue };
        if !ds.iter().all(|&d| in_ring(d)) || ds.iter().all(|&d| d == unit / 2) || ds.iter().all(|&d| d == unit) {
            continue;
        }
        let ids: Vec<u32> = vs
            .iter()
            .map(|&v| {
                if used[v as usize] == u32::MAX {
                    used[v as usize] = points.len() as u32;
                    points.push([y[(v as usize, 0)], y[(v as usize, 1)]]);
                }
                used[v as usize]
            })
            .collect();
        let centre =
            vs.iter().filter_map(|&v| places[v as usize]).map(&param).fold([0.0; 2], |a, p| [a[0] + p[0], a[1] + p[1]]);
        let sector = sector_of(centre);
        for i in 1..ids.len() - 1 {
            triangles.push([ids[0], ids[i], ids[i + 1]]);
            sectors.push(sector);
        }
    }
    (points, triangles, sectors)
}

/// The signed areas of `triangles` over `points`.
fn triangle_areas(points: &[[f64; 2]], triangles: &[[u32; 3]]) -> Vec<f64> {
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| points[i as usize]);
            0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
        })
        .collect()
}

/// The total of `areas`, their range over the mean, and regularity: every
/// area of the mean's sign.
fn regularity(areas: &[f64]) -> (f64, [f64; 2], bool) {
    let total: f64 = areas.iter().sum();
    let mean = total / areas.len().max(1) as f64;
    let (lo, hi) =
        areas.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &a| (l.min(a / mean), h.max(a / mean)));
    (total, [lo, hi], !areas.is_empty() && lo > 1e-9 && hi.is_finite())
}

/// The signed area of a closed polygon.
fn polygon_area(c: &[[f64; 2]]) -> f64 {
    0.5 * (0..c.len())
        .map(|i| {
            let (a, b) = (c[i], c[(i + 1) % c.len()]);
            a[0] * b[1] - a[1] * b[0]
        })
        .sum::<f64>()
}

/// A closed polygon does not cross itself.
fn simple(c: &[[f64; 2]]) -> bool {
    let n = c.len();
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    for i in 0..n {
        let (a, b) = (c[i], c[(i + 1) % n]);
        for j in i + 2..n {
            if i == 0 && j == n - 1 {
                continue;
            }
            let (p, q) = (c[j], c[(j + 1) % n]);
            let (d1, d2) = (cross(a, b, p), cross(a, b, q));
            let (d3, d4) = (cross(p, q, a), cross(p, q, b));
            if d1 * d2 < 0.0 && d3 * d4 < 0.0 {
                return false;
            }
        }
    }
    n >= 3
}

/// A closed polygon winds once (either way) around the origin.
fn winds_once(c: &[[f64; 2]]) -> bool {
    let total: f64 = (0..c.len())
        .map(|i| {
            let (a, b) = (c[i], c[(i + 1) % c.len()]);
            (a[0] * b[1] - a[1] * b[0]).atan2(a[0] * b[0] + a[1] * b[1])
        })
        .sum();
    ((total.abs() / TAU) - 1.0).abs() < 1e-6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circle(n: usize, turns: f64) -> Vec<[f64; 2]> {
        (0..n).map(|i| turns * TAU * i as f64 / n as f64).map(|a| [a.cos(), a.sin()]).collect()
    }

    #[test]
    fn curves_that_cross_or_wind_twice_are_caught() {
        assert!(simple(&circle(40, 1.0)) && winds_once(&circle(40, 1.0)));
        // Twice round: it crosses itself... and winds twice.
        let twice: Vec<[f64; 2]> = (0..80)
            .map(|i| TAU * 2.0 * i as f64 / 80.0 + 0.01 * i as f64)
            .map(|a| [(1.0 + 0.001 * a) * a.cos(), a.sin()])
            .collect();
        assert!(!winds_once(&twice));
        // A figure eight crosses itself and does not wind round its centre.
        let eight: Vec<[f64; 2]> =
            (0..60).map(|i| TAU * i as f64 / 60.0).map(|t| [t.sin(), (2.0 * t).sin() / 2.0]).collect();
        assert!(!simple(&eight));
        // Off-centre: no winding.
        let away: Vec<[f64; 2]> = circle(30, 1.0).into_iter().map(|[x, y]| [x + 5.0, y]).collect();
        assert!(simple(&away) && !winds_once(&away));
    }
}
