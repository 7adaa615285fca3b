//! A control mesh: connectivity plus tags and options.

use std::sync::Arc;

use ndarray::Array2;
use subla_algebra::{CscMat, Par};

use crate::error::{Location, MeshError, Result, SharpnessTarget};
use crate::tags::Options;
use crate::topology::{Topology, edge_tag};

/// How strictly [`MeshBuilder::build`] treats topology that OpenSubdiv
/// accepts but not every consumer can use.
///
/// | input | `OpenSubdiv` (default) | `Manifold` |
/// |---|---|---|
/// | edge with more than two faces | accepted, tagged non-manifold | [`MeshError::NonManifoldEdge`] |
/// | two faces using an edge in the same direction | accepted, tagged | [`MeshError::InconsistentOrientation`] |
/// | vertex whose faces form several fans (bow-tie) | accepted, tagged | [`MeshError::NonManifoldVertex`] |
/// | vertex repeated within a face | accepted, tagged (degenerate edge) | [`MeshError::RepeatedVertex`] |
///
/// Always errors, in both modes: index out of range, faces with fewer than 3
/// vertices, an empty mesh, negative or NaN sharpness, a crease on a pair
/// that is not an edge, tags naming missing elements, sizes over `u32`.
/// Unreferenced vertices are kept (tagged isolated) and pass through.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Validation {
    /// Accept what OpenSubdiv accepts; schemes treat non-manifold elements
    /// as sharp.
    #[default]
    OpenSubdiv,
    /// Reject anything non-manifold.
    Manifold,
}

/// A control mesh: [`Topology`], per-edge and per-vertex sharpness, holes and
/// [`Options`]. Vertex data (positions and other channels) live beside it in
/// an `ndarray::Array2` of any number of `f32` or `f64` channels.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Shared by the meshes that differ only in their tags
    /// ([`Mesh::retagged`]) and by clones.
    topology: Arc<Topology>,
    edge_sharpness: Vec<f32>,
    vertex_sharpness: Vec<f32>,
    holes: Vec<bool>,
    options: Options,
}

impl Mesh {
    /// Convenience: a mesh from face lists with default options and no tags.
    ///
    /// # Errors
    /// As [`MeshBuilder::build`].
    pub fn from_faces<F: AsRef<[u32]>>(num_vertices: usize, faces: &[F]) -> Result<Self> {
        MeshBuilder::from_faces(num_vertices, faces).build(Par::Rayon)
    }

    /// Assembles a mesh from an already built topology and per-element
    /// arrays (for schemes that derive refined levels).
    ///
    /// # Errors
    /// [`MeshError::DataLength`] if an array does not match the topology,
    /// [`MeshError::InvalidSharpness`] for a negative or NaN sharpness.
    pub fn from_parts(
        topology: Topology,
        edge_sharpness: Vec<f32>,
        vertex_sharpness: Vec<f32>,
        holes: Vec<bool>,
        options: Options,
    ) -> Result<Self> {
        Self::assemble(Arc::new(topology), edge_sharpness, vertex_sharpness, holes, options)
    }

    /// This mesh's topology (shared, not copied) with other tags and
    /// options: what a scheme's preparation of the control mesh makes.
    ///
    /// # Errors
    /// As [`Mesh::from_parts`].
    pub fn retagged(
        &self,
        edge_sharpness: Vec<f32>,
        vertex_sharpness: Vec<f32>,
        holes: Vec<bool>,
        options: Options,
    ) -> Result<Self> {
        Self::assemble(Arc::clone(&self.topology), edge_sharpness, vertex_sharpness, holes, options)
    }

    /// [`Mesh::from_parts`] over a shared topology.
    fn assemble(
        topology: Arc<Topology>,
        edge_sharpness: Vec<f32>,
        vertex_sharpness: Vec<f32>,
        holes: Vec<bool>,
        options: Options,
    ) -> Result<Self> {
        let checks = [
            ("edge sharpness", topology.num_edges(), edge_sharpness.len()),
            ("vertex sharpness", topology.num_vertices(), vertex_sharpness.len()),
            ("hole flags", topology.num_faces(), holes.len()),
        ];
        for (what, expected, found) in checks {
            if expected != found {
                return Err(MeshError::DataLength { what, expected, found });
            }
        }
        if let Some(e) = edge_sharpness.iter().position(|s| s.is_nan() || *s < 0.0) {
            let [a, b] = topology.edge(e);
            return Err(MeshError::InvalidSharpness {
                at: Location::none(),
                target: SharpnessTarget::Edge(a, b),
                value: edge_sharpness[e],
            });
        }
        if let Some(v) = vertex_sharpness.iter().position(|s| s.is_nan() || *s < 0.0) {
            return Err(MeshError::InvalidSharpness {
                at: Location::none(),
                target: SharpnessTarget::Vertex(v as u32),
                value: vertex_sharpness[v],
            });
        }
        Ok(Mesh { topology, edge_sharpness, vertex_sharpness, holes, options })
    }

    /// The connectivity.
    #[inline]
    pub fn topology(&self) -> &Topology {
        &self.topology
    }
    /// Sharpness of each edge, by edge id (0 = smooth).
    #[inline]
    pub fn edge_sharpness(&self) -> &[f32] {
        &self.edge_sharpness
    }
    /// Sharpness of each vertex (0 = smooth).
    #[inline]
    pub fn vertex_sharpness(&self) -> &[f32] {
        &self.vertex_sharpness
    }
    /// Hole flag of each face.
    #[inline]
    pub fn holes(&self) -> &[bool] {
        &self.holes
    }
    /// `Ok` unless every face is a hole (then nothing is left to refine or
    /// draw; an output without the holes would have no faces).
    ///
    /// # Errors
    /// [`MeshError::AllHoles`] naming `what` (the input).
    pub fn check_not_all_holes(&self, what: &str) -> Result<()> {
        if !self.holes.is_empty() && self.holes.iter().all(|&h| h) {
            return Err(MeshError::AllHoles { what: what.into(), faces: self.holes.len() });
        }
        Ok(())
    }
    /// True if any face is a hole.
    pub fn has_holes(&self) -> bool {
        self.holes.iter().any(|&h| h)
    }
    /// True if any edge or vertex is sharp.
    pub fn has_sharpness(&self) -> bool {
        self.edge_sharpness.iter().chain(&self.vertex_sharpness).any(|&s| s > 0.0)
    }
    /// The options.
    #[inline]
    pub fn options(&self) -> Options {
        self.options
    }
    /// Replaces the options.
    pub fn set_options(&mut self, options: Options) {
        self.options = options;
    }
    /// Number of vertices.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.topology.num_vertices()
    }
    /// Number of faces.
    #[inline]
    pub fn num_faces(&self) -> usize {
        self.topology.num_faces()
    }

    /// The crease matrix `C` (Mlakar et al. 2020, §5.1): `|v| × |v|`,
    /// symmetric, `C(i, j)` the sharpness of edge `(i, j)` where nonzero
    /// (the greatest, where the pair has several edges).
    ///
    /// # Errors
    /// Only on sizes over `u32`.
    pub fn crease_matrix(&self) -> Result<CscMat<f32>> {
        let t = &self.topology;
        let mut trips = Vec::new();
        for (e, &s) in self.edge_sharpness.iter().enumerate() {
            if s > 0.0 {
                let [a, b] = t.edge(e);
                trips.push((a as usize, b as usize, s));
                if a != b {
                    trips.push((b as usize, a as usize, s));
                }
            }
        }
        // Several edges of one pair: one entry, the greatest sharpness.
        trips.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)).then(y.2.total_cmp(&x.2)));
        trips.dedup_by_key(|x| (x.0, x.1));
        Ok(CscMat::try_from_triplets(t.num_vertices(), t.num_vertices(), &trips)?)
    }

    /// The same mesh with every face's winding reversed (for left-handed
    /// input: OpenSubdiv's `isLeftHanded`). Each face keeps its first vertex.
    pub fn reversed_winding(&self) -> Result<Mesh> {
        let t = &self.topology;
        let mut verts = Vec::with_capacity(t.num_corners());
        for f in 0..t.num_faces() {
            let vs = t.face(f);
            verts.push(vs[0]);
            verts.extend(vs[1..].iter().rev());
        }
        let holes = (0..t.num_faces() as u32).filter(|&f| self.holes[f as usize]);
        self.rebuilt(t.face_ptr().to_vec(), verts, holes)
    }

    /// The same mesh with every face of more than three vertices split
    /// into triangles, for the schemes that refine triangles only (Loop,
    /// √3), which refuse other faces rather than guess a triangulation.
    ///
    /// Face `f` with vertices `v₀ … vₙ₋₁` becomes the fan `(v₀, vₖ, vₖ₊₁)`,
    /// `k = 1 … n−2`, in face order (a triangle stays as it is), so the
    /// faces of `f` are consecutive and keep its orientation. Vertices and
    /// their order, vertex sharpness and options are kept; every edge of
    /// the input keeps its sharpness, the new diagonals have none; the
    /// triangles of a hole are holes. A fan suits convex faces; for others,
    /// triangulate with the positions in hand before building the mesh.
    ///
    /// ```
    /// use subla_mesh::Mesh;
    /// let quads = Mesh::from_faces(6, &[[0, 1, 4, 3], [1, 2, 5, 4]])?;
    /// let tris = quads.triangulated()?;
    /// assert_eq!(tris.num_faces(), 4);
    /// assert_eq!(tris.topology().face(1), &[0, 4, 3]);
    /// # Ok::<(), subla_mesh::MeshError>(())
    /// ```
    ///
    /// # Errors
    /// [`MeshError::TooLarge`] if the triangles' corners do not fit in
    /// `u32`.
    pub fn triangulated(&self) -> Result<Mesh> {
        let t = &self.topology;
        let corners = fan_corners(t)?;
        let tris = corners.len() / 3;
        let fv = t.face_verts();
        let verts = corners.iter().map(|&c| fv[c as usize]).collect();
        let cf = t.corner_faces();
        let holes = (0..tris).filter(|&k| self.holes[cf[corners[3 * k] as usize] as usize]).map(|k| k as u32);
        let ptr = (0..=tris as u32).map(|i| 3 * i).collect();
        self.rebuilt(ptr, verts, holes)
    }

    /// New faces over this mesh's vertices, with its tags: each edge's
    /// sharpness on the same vertex pair, the vertex sharpness, the hole
    /// flags of faces `holes` (new ids) and the options.
    fn rebuilt(&self, face_ptr: Vec<u32>, face_verts: Vec<u32>, holes: impl Iterator<Item = u32>) -> Result<Mesh> {
        let t = &self.topology;
        let mut b = MeshBuilder::new(t.num_vertices(), face_ptr, face_verts);
        for (e, &s) in self.edge_sharpness.iter().enumerate() {
            // Sharpness goes to the first edge of a pair (as in the builder).
            if s > 0.0 && t.edge_tags()[e] & edge_tag::DUPLICATE == 0 {
                let [a, c] = t.edge(e);
                b = b.crease(a, c, s);
            }
        }
        for (v, &s) in self.vertex_sharpness.iter().enumerate() {
            if s > 0.0 {
                b = b.corner(v as u32, s);
            }
        }
        for h in holes {
            b = b.hole(h);
        }
        b.options(self.options).build(Par::Rayon)
    }

    /// Checks per-vertex data against the mesh: one row per vertex, every
    /// value finite.
    ///
    /// # Errors
    /// [`MeshError::DataLength`] or [`MeshError::NonFiniteCoordinate`].
    pub fn check_vertex_data<T: Copy + Into<f64>>(&self, data: &Array2<T>) -> Result<()> {
        if data.nrows() != self.num_vertices() {
            return Err(MeshError::DataLength {
                what: "vertex data",
                expected: self.num_vertices(),
                found: data.nrows(),
            });
        }
        for ((vertex, channel), &x) in data.indexed_iter() {
            let value: f64 = x.into();
            if !value.is_finite() {
                return Err(MeshError::NonFiniteCoordinate {
                    at: Location::none(),
                    vertex,
                    channel,
                    value,
                    written: None,
                });
            }
        }
        Ok(())
    }
}

/// The corners of [`Mesh::triangulated`]'s triangles: for each corner of
/// each triangle, the input corner it comes from.
pub(crate) fn fan_corners(t: &Topology) -> Result<Vec<u32>> {
    let tris = t.num_corners() - 2 * t.num_faces();
    crate::error::to_u32(3 * tris, "number of corners of the triangulation")?;
    let mut corners = Vec::with_capacity(3 * tris);
    for w in t.face_ptr().windows(2) {
        for k in w[0] + 1..w[1] - 1 {
            corners.extend_from_slice(&[w[0], k, k + 1]);
        }
    }
    Ok(corners)
}

/// A tag waiting to be resolved against the topology, with the place it came
/// from (for error messages).
#[derive(Clone, Debug)]
struct Pending<T> {
    value: T,
    at: Location,
}

/// Builds a [`Mesh`], validating everything; see [`Validation`] for what is
/// an error.
#[derive(Clone, Debug)]
pub struct MeshBuilder {
    num_vertices: usize,
    face_ptr: Vec<u32>,
    face_verts: Vec<u32>,
    creases: Vec<Pending<(i64, i64, f32)>>,
    corners: Vec<Pending<(i64, f32)>>,
    holes: Vec<Pending<i64>>,
    options: Options,
    validation: Validation,
    name: String,
}

impl MeshBuilder {
    /// Faces as a pointer array and traversal-ordered vertex lists (the mesh
    /// matrix of [`Topology`]).
    pub fn new(num_vertices: usize, face_ptr: Vec<u32>, face_verts: Vec<u32>) -> Self {
        MeshBuilder {
            num_vertices,
            face_ptr,
            face_verts,
            creases: Vec::new(),
            corners: Vec::new(),
            holes: Vec::new(),
            options: Options::default(),
            validation: Validation::default(),
            name: "mesh".into(),
        }
    }

    /// Faces as lists of vertex indices.
    pub fn from_faces<F: AsRef<[u32]>>(num_vertices: usize, faces: &[F]) -> Self {
        let mut ptr = Vec::with_capacity(faces.len() + 1);
        let mut verts = Vec::new();
        ptr.push(0u32);
        for f in faces {
            verts.extend_from_slice(f.as_ref());
            ptr.push(verts.len().min(u32::MAX as usize) as u32);
        }
        MeshBuilder::new(num_vertices, ptr, verts)
    }

    /// Names the input in error messages (a file name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Edge sharpness for the edge `(v0, v1)`; a later tag on the same edge
    /// replaces an earlier one.
    pub fn crease(self, v0: u32, v1: u32, sharpness: f32) -> Self {
        self.crease_at(i64::from(v0), i64::from(v1), sharpness, Location::none())
    }
    /// [`MeshBuilder::crease`] with the place it came from.
    pub fn crease_at(mut self, v0: i64, v1: i64, sharpness: f32, at: Location) -> Self {
        self.creases.push(Pending { value: (v0, v1, sharpness), at });
        self
    }
    /// Vertex (corner) sharpness.
    pub fn corner(self, v: u32, sharpness: f32) -> Self {
        self.corner_at(i64::from(v), sharpness, Location::none())
    }
    /// [`MeshBuilder::corner`] with the place it came from.
    pub fn corner_at(mut self, v: i64, sharpness: f32, at: Location) -> Self {
        self.corners.push(Pending { value: (v, sharpness), at });
        self
    }
    /// Marks face `f` as a hole.
    pub fn hole(self, f: u32) -> Self {
        self.hole_at(i64::from(f), Location::none())
    }
    /// [`MeshBuilder::hole`] with the place it came from.
    pub fn hole_at(mut self, f: i64, at: Location) -> Self {
        self.holes.push(Pending { value: f, at });
        self
    }
    /// Sets the options.
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }
    /// Sets the validation mode.
    pub fn validation(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// Validates and builds the mesh.
    ///
    /// # Errors
    /// See [`Validation`]: every error names the face, edge, vertex or tag
    /// (and file line when the tag came from a file).
    pub fn build(self, par: Par) -> Result<Mesh> {
        if self.face_ptr.len() <= 1 {
            return Err(MeshError::Empty { what: self.name, reason: "no faces" });
        }
        let topology = Topology::build(self.num_vertices, self.face_ptr, self.face_verts, par)?;
        if self.validation == Validation::Manifold {
            topology.check_manifold()?;
        }
        let nv = topology.num_vertices();
        let nf = topology.num_faces();
        let check_sharpness = |s: f32, target: SharpnessTarget, at: &Location| -> Result<()> {
            if s.is_nan() || s < 0.0 {
                return Err(MeshError::InvalidSharpness { at: at.clone(), target, value: s });
            }
            Ok(())
        };
        let vertex_index = |tag: &str, v: i64, at: &Location| -> Result<u32> {
            if v < 0 || v as u64 >= nv as u64 {
                return Err(MeshError::TagOutOfRange {
                    at: at.clone(),
                    tag: tag.into(),
                    element: "vertex",
                    index: v,
                    count: nv,
                });
            }
            Ok(v as u32)
        };
        let mut edge_sharpness = vec![0f32; topology.num_edges()];
        for p in &self.creases {
            let (a, b, s) = p.value;
            let (a, b) = (vertex_index("crease", a, &p.at)?, vertex_index("crease", b, &p.at)?);
            check_sharpness(s, SharpnessTarget::Edge(a, b), &p.at)?;
            let Some(e) = topology.find_built_edge(a, b) else {
                return Err(MeshError::CreaseNotAnEdge { at: p.at.clone(), v0: a, v1: b });
            };
            edge_sharpness[e as usize] = s;
        }
        let mut vertex_sharpness = vec![0f32; nv];
        for p in &self.corners {
            let (v, s) = p.value;
            let v = vertex_index("corner", v, &p.at)?;
            check_sharpness(s, SharpnessTarget::Vertex(v), &p.at)?;
            vertex_sharpness[v as usize] = s;
        }
        let mut holes = vec![false; nf];
        for p in &self.holes {
            let f = p.value;
            if f < 0 || f as u64 >= nf as u64 {
                return Err(MeshError::TagOutOfRange {
                    at: p.at.clone(),
                    tag: "hole".into(),
                    element: "face",
                    index: f,
                    count: nf,
                });
            }
            holes[f as usize] = true;
        }
        Ok(Mesh { topology: Arc::new(topology), edge_sharpness, vertex_sharpness, holes, options: self.options })
    }
}
