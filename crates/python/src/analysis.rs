//! `subla.analysis`: local subdivision matrices of the registry's schemes,
//! their spectra and characteristic maps.

use ndarray::Array2;
use numpy::{Complex64, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use subla::analysis::{
    self, Configuration, DiskFaces, LocalMatrix, Spectrum, characteristic_map as char_map, local_subdivision_matrix_at,
};
use subla::registry::{Backend, BoxedRefiner, Faces, Path, Registry, Setup};

use crate::convert::csr;
use crate::errors::{Failure, Res};
use crate::plan::path_of;

/// The refiner the analysis uses: the kernels where the scheme has them
/// (their plans name every child point), else `path` or the fastest.
fn refiner(scheme: &str, path: Option<&str>) -> Res<(BoxedRefiner, DiskFaces)> {
    let registry = Registry::builtin();
    let s = registry.scheme(scheme)?;
    let p = match path {
        Some(_) => path_of(s, path)?,
        None if s.has(Backend::Cpu, Path::Kernels) => Path::Kernels,
        None => s.fastest(Backend::Cpu),
    };
    let faces = match s.faces() {
        Faces::Triangles => DiskFaces::Triangles,
        _ => DiskFaces::Quads,
    };
    Ok((s.refiner(Backend::Cpu, p, &Setup::default())?, faces))
}

/// Two masks.
type MaskPair<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// The local subdivision matrix of a scheme around a vertex of valence
/// `valence` (see `subla.analysis.local_subdivision_matrix`).
#[pyclass(name = "LocalMatrix", module = "subla.analysis", frozen)]
pub(crate) struct PyLocalMatrix {
    inner: LocalMatrix,
}

fn vec1<'py>(py: Python<'py>, v: Vec<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, v)
}

#[pymethods]
impl PyLocalMatrix {
    #[getter]
    fn scheme(&self) -> &'static str {
        self.inner.scheme
    }

    /// `'interior'`, `'boundary'`, `'dart'`, `'crease'` or `'corner'`.
    #[getter]
    fn configuration(&self) -> &'static str {
        self.inner.configuration.name()
    }

    /// The sectors on one side of a crease (`None` for other
    /// configurations).
    #[getter]
    fn across(&self) -> Option<usize> {
        match self.inner.configuration {
            Configuration::Crease { across } => Some(across),
            _ => None,
        }
    }

    #[getter]
    fn valence(&self) -> usize {
        self.inner.valence
    }

    #[getter]
    fn rings(&self) -> usize {
        self.inner.rings
    }

    /// The points in the rows' and columns' order: `(sector, i, j)`, the
    /// centre `(0, 0, 0)` first.
    #[getter]
    fn points(&self) -> Vec<(u32, u32, u32)> {
        self.inner.points.iter().map(|p| (p.sector, p.i, p.j)).collect()
    }

    /// The subdivision steps the matrix spans (2 for √3, whose lattice two
    /// steps bring back).
    #[getter]
    fn steps(&self) -> u32 {
        self.inner.steps
    }

    /// The layer of each point along an extraordinary edge (empty for the
    /// surface configurations).
    #[getter]
    fn layers(&self) -> Vec<i32> {
        self.inner.layers.clone()
    }

    /// The matrix `S` as a `scipy.sparse.csr_matrix`.
    #[getter]
    fn matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        csr(py, self.inner.matrix.clone())
    }

    /// `S` as a dense `numpy` array.
    fn dense<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let m = &self.inner.matrix;
        let mut a = Array2::zeros((m.nrows(), m.ncols()));
        for r in 0..m.nrows() {
            let (idx, w) = m.as_ref().slice(r);
            for (&c, &w) in idx.iter().zip(w) {
                a[(r, c as usize)] = w;
            }
        }
        PyArray2::from_owned_array(py, a)
    }

    /// The scheme's own limit mask of the centre (what its plans use), in
    /// `points` order, or `None`.
    #[getter]
    fn scheme_limit_mask<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.inner.scheme_limit_mask.clone().map(|v| vec1(py, v))
    }

    /// Whether `S` is block-circulant (an interior configuration).
    fn is_block_circulant(&self) -> bool {
        self.inner.is_block_circulant()
    }

    /// The discrete Fourier transform of the block-circulant `S`: one
    /// complex block per frequency `ω = 0 … k−1`, or `None`.
    fn fourier_blocks<'py>(&self, py: Python<'py>) -> Option<Vec<Bound<'py, PyArray2<Complex64>>>> {
        self.inner.fourier_blocks().map(|blocks| {
            blocks
                .into_iter()
                .map(|b| {
                    let a = Array2::from_shape_fn((b.nrows(), b.ncols()), |(i, j)| b[(i, j)]);
                    PyArray2::from_owned_array(py, a)
                })
                .collect()
        })
    }

    /// The eigenvalues, by decreasing modulus, with their Fourier indices.
    fn spectrum(&self) -> Res<PySpectrum> {
        Ok(PySpectrum { inner: analysis::spectrum(&self.inner)? })
    }

    /// The limit mask from the dominant left eigenvector (weights over
    /// `points`, summing to 1), or `None`.
    fn limit_mask<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.inner.limit_mask().map(|v| vec1(py, v))
    }

    /// The two tangent masks from the subdominant left eigenvectors, or
    /// `None`.
    fn tangent_masks<'py>(&self, py: Python<'py>) -> Option<MaskPair<'py>> {
        self.inner.tangent_masks().map(|[a, b]| (vec1(py, a), vec1(py, b)))
    }

    /// A basis of the left eigenvectors of the real eigenvalue `lam`, one
    /// per row.
    fn left_eigenvectors<'py>(&self, py: Python<'py>, lam: f64) -> Res<Bound<'py, PyArray2<f64>>> {
        crate::convert::rows(py, &self.inner.left_eigenvectors(lam))
    }

    /// A basis of the right eigenvectors of the real eigenvalue `lam`, one
    /// per row.
    fn right_eigenvectors<'py>(&self, py: Python<'py>, lam: f64) -> Res<Bound<'py, PyArray2<f64>>> {
        crate::convert::rows(py, &self.inner.right_eigenvectors(lam))
    }

    fn __repr__(&self) -> String {
        format!(
            "LocalMatrix({}, {} valence {}, {} rings, {}x{})",
            self.inner.scheme,
            self.configuration(),
            self.inner.valence,
            self.inner.rings,
            self.inner.matrix.nrows(),
            self.inner.matrix.ncols()
        )
    }
}

/// The spectrum of a local subdivision matrix.
#[pyclass(name = "Spectrum", module = "subla.analysis", frozen)]
pub(crate) struct PySpectrum {
    inner: Spectrum,
}

#[pymethods]
impl PySpectrum {
    /// Every eigenvalue by decreasing modulus (complex).
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<Complex64>> {
        PyArray1::from_vec(py, self.inner.values.iter().map(|e| e.value).collect())
    }

    /// The Fourier index of each eigenvalue (`None` where the matrix is not
    /// block-circulant).
    #[getter]
    fn fourier(&self) -> Vec<Option<usize>> {
        self.inner.values.iter().map(|e| e.fourier).collect()
    }

    #[getter]
    fn valence(&self) -> usize {
        self.inner.valence
    }

    /// The configuration's name.
    #[getter]
    fn configuration(&self) -> &'static str {
        self.inner.configuration.name()
    }

    /// The subdominant eigenvalue `λ₁` (complex), or `None`.
    #[getter]
    fn subdominant(&self) -> Option<Complex64> {
        self.inner.subdominant().map(|e| e.value)
    }

    /// The classical conditions: `unit_dominant`, `subdominant_pair`,
    /// `fourier_index_one`, `gap` and `all`.
    #[getter]
    fn conditions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.inner.conditions();
        let d = PyDict::new(py);
        d.set_item("unit_dominant", c.unit_dominant)?;
        d.set_item("subdominant_pair", c.subdominant_pair)?;
        d.set_item("fourier_index_one", c.fourier_index_one)?;
        d.set_item("gap", c.gap)?;
        d.set_item("all", c.all())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let head: Vec<String> = self.inner.values.iter().take(4).map(|e| format!("{:.6}", e.value.re)).collect();
        format!("Spectrum(valence {}, {} …)", self.inner.valence, head.join(", "))
    }
}

/// The local subdivision matrix of `scheme` around a vertex of valence
/// `valence` over `rings` rings: `configuration` `'interior'` (a whole
/// disk), `'boundary'` (`valence` faces of a half disk), `'dart'` (inside,
/// spoke 0 infinitely sharp), `'crease'` (inside, spokes 0 and `across`
/// infinitely sharp; `across` defaults to half the valence) or `'corner'`
/// (a half disk, the vertex infinitely sharp); `'face'` (a `valence`-gon of
/// a quad lattice at the centre: dual schemes, none of them in the
/// registry yet).
#[pyfunction]
#[pyo3(signature = (scheme, valence, *, rings=1, configuration="interior", across=None, path=None))]
fn local_subdivision_matrix(
    py: Python<'_>,
    scheme: &str,
    valence: usize,
    rings: usize,
    configuration: &str,
    across: Option<usize>,
    path: Option<&str>,
) -> Res<PyLocalMatrix> {
    let c = match configuration {
        "interior" => Configuration::Interior,
        "boundary" => Configuration::Boundary,
        "dart" => Configuration::Dart,
        "crease" => Configuration::Crease { across: across.unwrap_or(valence / 2) },
        "corner" => Configuration::Corner,
        "face" => Configuration::Face,
        c => {
            return Err(Failure::Value(format!(
                "configuration {c:?}: 'interior', 'boundary', 'dart', 'crease', 'corner' or 'face'"
            )));
        }
    };
    if across.is_some() && !matches!(c, Configuration::Crease { .. }) {
        return Err(Failure::Value("across is a crease's parameter (configuration='crease')".to_owned()));
    }
    let (r, faces) = refiner(scheme, path)?;
    let inner = py.detach(|| local_subdivision_matrix_at(&*r, faces, c, valence, rings))?;
    Ok(PyLocalMatrix { inner })
}

/// The local subdivision matrix of Catmull-Clark solids around an interior
/// extraordinary edge of valence `valence` (that many hexahedra around
/// it): the disk's places within `rings` rings in the layers
/// `-layers..=layers` along the edge, under the vertex rule `vertex_rule`
/// (`'layered'`, the default: Catmull-Clark's surface rule times the cubic
/// B-spline's at the edge's vertices; `'joy-maccracken'`: the original).
#[pyfunction]
#[pyo3(signature = (valence, *, rings=1, layers=1, vertex_rule="layered"))]
fn edge_subdivision_matrix(
    py: Python<'_>,
    valence: usize,
    rings: usize,
    layers: usize,
    vertex_rule: &str,
) -> Res<PyLocalMatrix> {
    use subla::solid::{CatmarkSolid, VertexRule};
    let rule = match vertex_rule {
        "layered" => VertexRule::Layered,
        "joy-maccracken" => VertexRule::JoyMacCracken,
        other => {
            return Err(Failure::Value(format!("vertex_rule {other:?}: 'layered' or 'joy-maccracken'")));
        }
    };
    let inner = py.detach(|| analysis::edge_subdivision_matrix(&CatmarkSolid::new(rule), valence, rings, layers))?;
    Ok(PyLocalMatrix { inner })
}

/// The characteristic map of `scheme` at an interior vertex of valence
/// `valence` (or, `configuration='boundary'`, at a boundary vertex with
/// `valence` faces: the half ring's map by the eigenvectors of `λ₁ ≥ λ₂`,
/// `lambda` being `λ₂`), refined `levels` levels and sampled on its ring: a dict of
/// `lambda`, `points` (`(n, 2)`), `triangles` (`(m, 3)`), `sectors`,
/// `area_range`, `regular` and `injective` (Reif's criterion, checked
/// numerically).
#[pyfunction]
#[pyo3(signature = (scheme, valence, *, levels=3, configuration="interior", path=None))]
fn characteristic_map<'py>(
    py: Python<'py>,
    scheme: &str,
    valence: usize,
    levels: u32,
    configuration: &str,
    path: Option<&str>,
) -> Res<Bound<'py, PyDict>> {
    let (r, faces) = refiner(scheme, path)?;
    let m = match configuration {
        "interior" => py.detach(|| char_map(&*r, faces, valence, levels))?,
        "boundary" => py.detach(|| analysis::boundary_characteristic_map(&*r, faces, valence, levels))?,
        c => {
            return Err(Failure::Value(format!(
                "characteristic map at {c:?}: 'interior' or 'boundary' (valence faces of a half disk)"
            )));
        }
    };
    let d = PyDict::new(py);
    let points = Array2::from_shape_fn((m.points.len(), 2), |(i, j)| m.points[i][j]);
    let triangles = Array2::from_shape_fn((m.triangles.len(), 3), |(i, j)| m.triangles[i][j]);
    d.set_item("valence", m.valence)?;
    d.set_item("lambda", m.lambda)?;
    d.set_item("points", PyArray2::from_owned_array(py, points))?;
    d.set_item("triangles", PyArray2::from_owned_array(py, triangles))?;
    d.set_item("sectors", PyArray1::from_vec(py, m.sectors))?;
    d.set_item("area_range", (m.area_range[0], m.area_range[1]))?;
    d.set_item("regular", m.regular)?;
    d.set_item("injective", m.injective)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLocalMatrix>()?;
    m.add_class::<PySpectrum>()?;
    m.add_function(wrap_pyfunction!(local_subdivision_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(characteristic_map, m)?)?;
    m.add_function(wrap_pyfunction!(edge_subdivision_matrix, m)?)?;
    Ok(())
}
