//! `subla.Mesh`: a polygon mesh with its vertex data, tags, options and
//! whatever else its file carried.

use ndarray::Array2;
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use subla_algebra::Par;
use subla_mesh::{
    BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, FaceVarying, GroupKind, Location, MeshBuilder,
    MeshData, MeshError, Options, TriangleSubdivision, Validation, shapes,
};

use crate::convert::{Data, indices, u32s};
use crate::errors::{Failure, Res, warn};

/// A face-varying channel for Python: values and one index per corner.
type Channel<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, numpy::PyArray1<u32>>);

/// A polygon mesh: faces, per-vertex data (positions first), tags
/// (creases, corners, holes), options, and the face-varying channels and
/// groups its file had.
#[pyclass(name = "Mesh", module = "subla", frozen)]
pub(crate) struct PyMesh {
    pub(crate) data: MeshData,
}

pub(crate) fn boundary(s: &str) -> Res<BoundaryInterpolation> {
    Ok(match s {
        "none" => BoundaryInterpolation::None,
        "edge_only" => BoundaryInterpolation::EdgeOnly,
        "edge_and_corner" => BoundaryInterpolation::EdgeAndCorner,
        _ => return Err(Failure::Value(format!("boundary {s:?}: one of 'none', 'edge_only', 'edge_and_corner'"))),
    })
}

pub(crate) fn fvar_mode(s: &str) -> Res<FVarLinearInterpolation> {
    Ok(match s {
        "none" => FVarLinearInterpolation::None,
        "corners_only" => FVarLinearInterpolation::CornersOnly,
        "corners_plus1" => FVarLinearInterpolation::CornersPlus1,
        "corners_plus2" => FVarLinearInterpolation::CornersPlus2,
        "boundaries" => FVarLinearInterpolation::Boundaries,
        "all" => FVarLinearInterpolation::All,
        _ => {
            return Err(Failure::Value(format!(
                "face-varying mode {s:?}: one of 'none', 'corners_only', 'corners_plus1', 'corners_plus2', 'boundaries', 'all'"
            )));
        }
    })
}

fn fvar_name(m: FVarLinearInterpolation) -> &'static str {
    match m {
        FVarLinearInterpolation::None => "none",
        FVarLinearInterpolation::CornersOnly => "corners_only",
        FVarLinearInterpolation::CornersPlus1 => "corners_plus1",
        FVarLinearInterpolation::CornersPlus2 => "corners_plus2",
        FVarLinearInterpolation::Boundaries => "boundaries",
        FVarLinearInterpolation::All => "all",
    }
}

/// The options with those given replaced.
fn options(
    mut o: Options,
    boundary_: Option<&str>,
    fvar_boundary: Option<&str>,
    crease_method: Option<&str>,
    triangle_subdivision: Option<&str>,
) -> Res<Options> {
    if let Some(b) = boundary_ {
        o.boundary = boundary(b)?;
    }
    if let Some(f) = fvar_boundary {
        o.fvar_boundary = fvar_mode(f)?;
    }
    if let Some(c) = crease_method {
        o.crease_method = match c {
            "uniform" => CreaseMethod::Uniform,
            "chaikin" => CreaseMethod::Chaikin,
            _ => return Err(Failure::Value(format!("crease_method {c:?}: 'uniform' or 'chaikin'"))),
        };
    }
    if let Some(t) = triangle_subdivision {
        o.triangle_subdivision = match t {
            "catmark" => TriangleSubdivision::Catmark,
            "smooth" => TriangleSubdivision::Smooth,
            _ => return Err(Failure::Value(format!("triangle_subdivision {t:?}: 'catmark' or 'smooth'"))),
        };
    }
    Ok(o)
}

fn validation_of(v: &str) -> Res<Validation> {
    match v {
        "opensubdiv" => Ok(Validation::OpenSubdiv),
        "manifold" => Ok(Validation::Manifold),
        v => Err(Failure::Value(format!("validation {v:?}: 'opensubdiv' or 'manifold'"))),
    }
}

/// Faces from a sequence of vertex sequences: pointers and vertices; a
/// negative index is the mesh's error naming the face.
fn faces_of(obj: &Bound<'_, PyAny>, num_vertices: usize) -> Res<(Vec<u32>, Vec<u32>)> {
    let faces: Vec<Vec<i64>> = obj
        .extract()
        .map_err(|_| Failure::Value("faces must be a sequence of sequences of vertex indices".to_owned()))?;
    let mut ptr = Vec::with_capacity(faces.len() + 1);
    let mut verts = Vec::new();
    ptr.push(0u32);
    for (face, f) in faces.iter().enumerate() {
        for &index in f {
            let v = u32::try_from(index).map_err(|_| MeshError::IndexOutOfRange {
                at: Location::none(),
                face,
                index,
                num_vertices,
            })?;
            verts.push(v);
        }
        ptr.push(
            u32::try_from(verts.len())
                .map_err(|_| MeshError::TooLarge { what: "corners", value: verts.len() as u128 })?,
        );
    }
    Ok((ptr, verts))
}

impl PyMesh {
    /// Builds from parts (the constructors' common path).
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        x: Array2<f64>,
        ptr: Vec<u32>,
        verts: Vec<u32>,
        creases: Option<Vec<(i64, i64, f32)>>,
        corners: Option<Vec<(i64, f32)>>,
        holes: Option<Vec<i64>>,
        opts: [Option<&str>; 4],
        validation: &str,
    ) -> Res<PyMesh> {
        let validation = validation_of(validation)?;
        let nv = x.nrows();
        let mut b = MeshBuilder::new(nv, ptr, verts).validation(validation);
        for (v0, v1, s) in creases.unwrap_or_default() {
            b = b.crease_at(v0, v1, s, Location::none());
        }
        for (v, s) in corners.unwrap_or_default() {
            b = b.corner_at(v, s, Location::none());
        }
        for f in holes.unwrap_or_default() {
            b = b.hole_at(f, Location::none());
        }
        let [bd, fv, cm, ts] = opts;
        b = b.options(options(Options::default(), bd, fv, cm, ts)?);
        let mesh = py.detach(|| b.build(Par::Rayon))?;
        Ok(PyMesh { data: MeshData::new(mesh, x)? })
    }

    fn fvar<'py>(py: Python<'py>, fv: Option<&FaceVarying>) -> Option<Channel<'py>> {
        fv.map(|fv| (PyArray2::from_array(py, &fv.values), u32s(py, &fv.indices)))
    }

    /// A face-varying channel from `(values, indices)`.
    fn channel(obj: Option<&Bound<'_, PyAny>>, corners: usize, what: &str) -> Res<Option<FaceVarying>> {
        let Some(obj) = obj else { return Ok(None) };
        let (values, idx): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
            obj.extract().map_err(|_| Failure::Value(format!("{what} must be a pair (values, indices)")))?;
        let values = Data::of(&values, what)?.to_f64();
        let indices = indices(&idx, what)?;
        if indices.len() != corners {
            return Err(Failure::Value(format!(
                "{what}: {} indices for {corners} face corners (one per corner, face after face)",
                indices.len()
            )));
        }
        if let Some((corner, &i)) = indices.iter().enumerate().find(|(_, i)| **i as usize >= values.nrows()) {
            return Err(Failure::Value(format!(
                "{what}: corner {corner} uses value {i}, but there are {} values",
                values.nrows()
            )));
        }
        Ok(Some(FaceVarying { values, indices }))
    }
}

#[pymethods]
impl PyMesh {
    /// A mesh from per-vertex data (`(n, c)`, positions first) and faces
    /// (a sequence of vertex-index sequences, counter-clockwise), with
    /// optional tags: `creases` as `(v0, v1, sharpness)`, `corners` as
    /// `(v, sharpness)`, `holes` as face indices; options as OpenSubdiv
    /// names them; `texcoords`/`normals` as `(values, indices)` with one
    /// index per face corner. Invalid input raises `MeshError` naming the
    /// face, edge or vertex.
    #[new]
    #[pyo3(signature = (vertices, faces, *, creases=None, corners=None, holes=None, boundary=None,
        fvar_boundary=None, crease_method=None, triangle_subdivision=None, texcoords=None, normals=None,
        validation="opensubdiv"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        vertices: &Bound<'_, PyAny>,
        faces: &Bound<'_, PyAny>,
        creases: Option<Vec<(i64, i64, f32)>>,
        corners: Option<Vec<(i64, f32)>>,
        holes: Option<Vec<i64>>,
        boundary: Option<&str>,
        fvar_boundary: Option<&str>,
        crease_method: Option<&str>,
        triangle_subdivision: Option<&str>,
        texcoords: Option<&Bound<'_, PyAny>>,
        normals: Option<&Bound<'_, PyAny>>,
        validation: &str,
    ) -> Res<PyMesh> {
        let x = Data::of(vertices, "vertices")?.to_f64();
        let (ptr, verts) = faces_of(faces, x.nrows())?;
        let corners_n = verts.len();
        let opts = [boundary, fvar_boundary, crease_method, triangle_subdivision];
        let mut m = PyMesh::build(py, x, ptr, verts, creases, corners, holes, opts, validation)?;
        m.data.texcoords = PyMesh::channel(texcoords, corners_n, "texcoords")?;
        m.data.normals = PyMesh::channel(normals, corners_n, "normals")?;
        Ok(m)
    }

    /// A mesh from flat arrays: `face_sizes[f]` vertices per face, their
    /// indices one face after another in `face_vertices` (for large meshes;
    /// otherwise as the constructor).
    #[staticmethod]
    #[pyo3(signature = (vertices, face_sizes, face_vertices, *, creases=None, corners=None, holes=None,
        boundary=None, fvar_boundary=None, crease_method=None, triangle_subdivision=None, validation="opensubdiv"))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        vertices: &Bound<'_, PyAny>,
        face_sizes: &Bound<'_, PyAny>,
        face_vertices: &Bound<'_, PyAny>,
        creases: Option<Vec<(i64, i64, f32)>>,
        corners: Option<Vec<(i64, f32)>>,
        holes: Option<Vec<i64>>,
        boundary: Option<&str>,
        fvar_boundary: Option<&str>,
        crease_method: Option<&str>,
        triangle_subdivision: Option<&str>,
        validation: &str,
    ) -> Res<PyMesh> {
        let sizes = indices(face_sizes, "face_sizes")?;
        let verts = indices(face_vertices, "face_vertices")?;
        let mut ptr = Vec::with_capacity(sizes.len() + 1);
        let mut end = 0u64;
        ptr.push(0u32);
        for &s in &sizes {
            end += u64::from(s);
            ptr.push(u32::try_from(end).map_err(|_| MeshError::TooLarge { what: "corners", value: end.into() })?);
        }
        if end != verts.len() as u64 {
            return Err(Failure::Value(format!(
                "face_sizes add up to {end} corners, but face_vertices has {}",
                verts.len()
            )));
        }
        let opts = [boundary, fvar_boundary, crease_method, triangle_subdivision];
        let x = Data::of(vertices, "vertices")?.to_f64();
        PyMesh::build(py, x, ptr, verts, creases, corners, holes, opts, validation)
    }

    /// Reads an OBJ (with OpenSubdiv's tags, texture coordinates, normals
    /// and groups) or a PLY file, by extension. Statements the reader does
    /// not keep are named in a `DataLossWarning`.
    #[staticmethod]
    #[pyo3(signature = (path, *, validation="opensubdiv"))]
    fn read(py: Python<'_>, path: std::path::PathBuf, validation: &str) -> Res<PyMesh> {
        let validation = validation_of(validation)?;
        let ply = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("ply"));
        let mut data = py.detach(|| {
            if ply {
                subla_mesh::ply::read_ply(&path, validation)
            } else {
                subla_mesh::obj::read_obj(&path, validation)
            }
        })?;
        if data.left_handed {
            data.mesh = data.mesh.reversed_winding()?;
            data.left_handed = false;
        }
        for s in &data.skipped {
            warn(py, &format!("{}: not kept: {s}", path.display()))?;
        }
        Ok(PyMesh { data })
    }

    /// Writes an OBJ or a PLY (binary) file, by extension, with the tags,
    /// channels and groups the format holds; what it cannot hold is named
    /// in a `DataLossWarning`.
    fn write(&self, py: Python<'_>, path: std::path::PathBuf) -> Res<()> {
        let ply = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("ply"));
        let format = if ply { subla_mesh::FileFormat::Ply } else { subla_mesh::FileFormat::Obj };
        for d in self.data.dropped_by(format) {
            warn(py, &format!("{}: {d}", path.display()))?;
        }
        py.detach(|| {
            if ply {
                subla_mesh::ply::write_ply_file(&self.data, &path, subla_mesh::ply::PlyEncoding::BinaryLittleEndian)
            } else {
                subla_mesh::obj::write_obj_file(&self.data, &path)
            }
        })?;
        Ok(())
    }

    /// Per-vertex data, `(num_vertices, channels)` `float64` (a copy).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        PyArray2::from_array(py, &self.data.vertices)
    }

    /// The first three channels, `(num_vertices, 3)` (a copy).
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        PyArray2::from_array(py, &self.data.positions())
    }

    /// Names of the channels (`x`, `y`, `z`, …).
    #[getter]
    fn channels(&self) -> Vec<String> {
        self.data.channels.clone()
    }

    #[getter]
    fn num_vertices(&self) -> usize {
        self.data.mesh.num_vertices()
    }

    #[getter]
    fn num_faces(&self) -> usize {
        self.data.mesh.num_faces()
    }

    #[getter]
    fn num_edges(&self) -> usize {
        self.data.mesh.topology().num_edges()
    }

    /// Vertices per face (`uint32`).
    #[getter]
    fn face_sizes<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u32>> {
        let p = self.data.mesh.topology().face_ptr();
        let sizes: Vec<u32> = p.windows(2).map(|w| w[1] - w[0]).collect();
        numpy::PyArray1::from_vec(py, sizes)
    }

    /// The faces' vertices, one face after another (`uint32`).
    #[getter]
    fn face_vertices<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u32>> {
        u32s(py, self.data.mesh.topology().face_verts())
    }

    /// The faces as lists of vertex indices.
    #[getter]
    fn faces(&self) -> Vec<Vec<u32>> {
        let t = self.data.mesh.topology();
        (0..t.num_faces()).map(|f| t.face(f).to_vec()).collect()
    }

    /// The edges as vertex pairs, `(num_edges, 2)` `uint32`.
    #[getter]
    fn edges<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u32>> {
        let e = self.data.mesh.topology().edges();
        let a = Array2::from_shape_fn((e.len(), 2), |(i, j)| e[i][j]);
        PyArray2::from_owned_array(py, a)
    }

    /// Sharp and semi-sharp edges, `(v0, v1, sharpness)`.
    #[getter]
    fn creases(&self) -> Vec<(u32, u32, f32)> {
        let m = &self.data.mesh;
        let e = m.topology().edges();
        m.edge_sharpness().iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(i, &s)| (e[i][0], e[i][1], s)).collect()
    }

    /// Sharp vertices, `(v, sharpness)`.
    #[getter]
    fn corners(&self) -> Vec<(u32, f32)> {
        let m = &self.data.mesh;
        m.vertex_sharpness().iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(v, &s)| (v as u32, s)).collect()
    }

    /// Faces tagged as holes.
    #[getter]
    fn holes(&self) -> Vec<u32> {
        self.data.mesh.holes().iter().enumerate().filter(|(_, h)| **h).map(|(f, _)| f as u32).collect()
    }

    /// The options, as OpenSubdiv names them.
    #[getter]
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let o = self.data.mesh.options();
        let d = PyDict::new(py);
        d.set_item(
            "boundary",
            match o.boundary {
                BoundaryInterpolation::None => "none",
                BoundaryInterpolation::EdgeOnly => "edge_only",
                BoundaryInterpolation::EdgeAndCorner => "edge_and_corner",
            },
        )?;
        d.set_item("fvar_boundary", fvar_name(o.fvar_boundary))?;
        d.set_item(
            "crease_method",
            match o.crease_method {
                CreaseMethod::Uniform => "uniform",
                CreaseMethod::Chaikin => "chaikin",
            },
        )?;
        d.set_item(
            "triangle_subdivision",
            match o.triangle_subdivision {
                TriangleSubdivision::Catmark => "catmark",
                TriangleSubdivision::Smooth => "smooth",
            },
        )?;
        Ok(d)
    }

    /// Texture coordinates as `(values, indices)`, one index per face
    /// corner, or `None`.
    #[getter]
    fn texcoords<'py>(&self, py: Python<'py>) -> Option<Channel<'py>> {
        PyMesh::fvar(py, self.data.texcoords.as_ref())
    }

    /// Normals as `(values, indices)`, one index per face corner, or `None`.
    #[getter]
    fn normals<'py>(&self, py: Python<'py>) -> Option<Channel<'py>> {
        PyMesh::fvar(py, self.data.normals.as_ref())
    }

    /// Groups and objects: `(kind, name, first_face, end_face)`.
    #[getter]
    fn groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let l = PyList::empty(py);
        for g in &self.data.groups {
            let kind = match g.kind {
                GroupKind::Group => "g",
                GroupKind::Object => "o",
            };
            l.append((kind, g.name.clone(), g.faces.start, g.faces.end))?;
        }
        Ok(l)
    }

    /// The mesh matrix `M` (vertices × faces; each entry the vertex's
    /// 1-based position in the face, Mlakar et al. 2020, §3.1) as a
    /// `scipy.sparse.csr_matrix`.
    fn mesh_matrix<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let m = self.data.mesh.topology().mesh_matrix()?;
        let m = m.to_csr(Par::Rayon).map_values(f64::from);
        Ok(crate::convert::csr(py, m)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Mesh({} vertices, {} faces, {} channels)",
            self.data.mesh.num_vertices(),
            self.data.mesh.num_faces(),
            self.data.vertices.ncols()
        )
    }
}

/// A published test mesh (`subla.shapes`): `name` and its size parameters.
#[pyfunction]
#[pyo3(signature = (name, *args))]
fn shape(name: &str, args: Vec<usize>) -> Res<PyMesh> {
    let arg = |i: usize| {
        args.get(i).copied().ok_or_else(|| Failure::Value(format!("shape {name:?} needs {} size arguments", i + 1)))
    };
    let data = match name {
        "tetrahedron" => shapes::tetrahedron(),
        "cube" => shapes::cube(),
        "octahedron" => shapes::octahedron(),
        "icosahedron" => shapes::icosahedron(),
        "dodecahedron" => shapes::dodecahedron(),
        "bipyramid" => shapes::bipyramid(arg(0)?)?,
        "prism" => shapes::prism(arg(0)?)?,
        "quad_torus" => shapes::quad_torus(arg(0)?, arg(1)?)?,
        "triangle_torus" => shapes::triangle_torus(arg(0)?, arg(1)?)?,
        "quad_grid" => shapes::quad_grid(arg(0)?, arg(1)?)?,
        "triangle_grid" => shapes::triangle_grid(arg(0)?, arg(1)?)?,
        "quad_sphere" => shapes::quad_sphere(arg(0)?)?,
        "fan" => shapes::fan(arg(0)?)?,
        "quad_disk" => shapes::quad_disk(arg(0)?, arg(1)?)?,
        "triangle_disk" => shapes::triangle_disk(arg(0)?, arg(1)?)?,
        _ => return Err(Failure::Value(format!("no shape named {name:?}"))),
    };
    Ok(PyMesh { data })
}

/// The mesh with every edge between listed vertex pairs creased.
#[pyfunction]
fn with_creases(mesh: &PyMesh, edges: Vec<(u32, u32)>, sharpness: f32) -> Res<PyMesh> {
    Ok(PyMesh { data: shapes::with_creases(&mesh.data, &edges, sharpness)? })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMesh>()?;
    m.add_function(wrap_pyfunction!(shape, m)?)?;
    m.add_function(wrap_pyfunction!(with_creases, m)?)?;
    Ok(())
}
