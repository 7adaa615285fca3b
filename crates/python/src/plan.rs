//! `subla.Plan`, `subla.FaceVaryingPlan`, `subla.subdivide` and
//! `subla.schemes`: plans of the registry's schemes on the CPU.

use numpy::{Element, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyList;
use subla::registry::{Backend, Path, Registry, Scheme, Setup, face_varying_plan};
use subla_algebra::Par;
use subla_mesh::{FaceVarying, MeshData};
use subla_scheme::refinement::{Budget, Refinement};
use subla_scheme::{Plan, Real, SchemeError};

use crate::convert::{Data, csr, u32s};
use crate::errors::{Failure, Res, warn};
use crate::mesh::{PyMesh, fvar_mode};

/// Faces for Python: sizes and vertices.
type FaceArrays<'py> = (Bound<'py, numpy::PyArray1<u32>>, Bound<'py, numpy::PyArray1<u32>>);

/// Bytes per element (vertex, edge or face) of a refined level's
/// connectivity and data, about: what a plan of the finest level takes.
const BYTES_PER_ELEMENT: u128 = 64;

/// The implementation named `path` (`None`: the scheme's fastest on the
/// CPU).
pub(crate) fn path_of(scheme: &Scheme, path: Option<&str>) -> Res<Path> {
    Ok(match path {
        None => scheme.fastest(Backend::Cpu),
        Some("kernels") => Path::Kernels,
        Some("algebra") => Path::Algebra,
        Some("edge-friend") => Path::EdgeFriend,
        Some("halfedge") => Path::Halfedge,
        Some(p) => {
            return Err(Failure::Value(format!("path {p:?}: one of 'kernels', 'algebra', 'edge-friend', 'halfedge'")));
        }
    })
}

/// The name `path_of` takes for `p`.
fn path_name(p: Path) -> String {
    match p {
        Path::Kernels => "kernels".to_owned(),
        Path::Algebra => "algebra".to_owned(),
        Path::EdgeFriend => "edge-friend".to_owned(),
        Path::Halfedge => "halfedge".to_owned(),
        other => other.to_string(),
    }
}

fn budget(max_memory: Option<u64>) -> Budget {
    max_memory.map_or_else(Budget::default, Budget::bytes)
}

/// A CPU plan of `scheme` over `mesh`, refused before it is built where
/// the prediction is over the budget.
fn build(
    py: Python<'_>,
    mesh: &PyMesh,
    scheme: &str,
    levels: u32,
    path: Option<&str>,
    max_memory: Option<u64>,
) -> Res<(Box<dyn Plan>, &'static str, Path)> {
    let registry = Registry::builtin();
    let s = registry.scheme(scheme)?;
    let p = path_of(s, path)?;
    let refiner = s.refiner(Backend::Cpu, p, &Setup::default())?;
    let b = budget(max_memory);
    if let Some(pred) = refiner.predict_boxed(&mesh.data.mesh, levels)? {
        let f = pred.finest();
        let channels = mesh.data.vertices.ncols().max(1) as u128;
        let needed = (f.vertices + f.edges + f.faces).saturating_mul(BYTES_PER_ELEMENT)
            + f.vertices.saturating_mul(8 * channels);
        if needed > u128::from(b.bytes) {
            return Err(SchemeError::OverBudget {
                what: format!("{levels} levels of {scheme} ({} faces)", f.faces),
                needed,
                budget: b.bytes.into(),
            }
            .into());
        }
    }
    let plan = py.detach(|| refiner.build_boxed(&mesh.data.mesh, levels, Par::Rayon))?;
    Ok((Box::new(plan), s.name(), p))
}

/// `level`, where it is one of `plan`'s (`0 ..= levels`; `None`: the
/// finest).
fn level_of(plan: &dyn Plan, level: Option<u32>) -> Res<u32> {
    let levels = plan.levels();
    let level = level.unwrap_or(levels);
    if level > levels {
        return Err(SchemeError::NoSuchLevel { level, levels }.into());
    }
    Ok(level)
}

/// `plan` applied to `control` (`float64` or `float32`), into `out` or a
/// fresh array.
fn eval_any<'py>(
    py: Python<'py>,
    plan: &dyn Plan,
    control: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
) -> Res<Bound<'py, PyAny>> {
    let data = Data::of(control, "control")?;
    data.check_rows(plan.input_len(), "control")?;
    match data {
        Data::F64(a) => eval_typed(py, plan, a, out),
        Data::F32(a) => eval_typed(py, plan, a, out),
    }
}

fn eval_typed<'py, T: Real + Element>(
    py: Python<'py>,
    plan: &dyn Plan,
    control: PyReadonlyArray2<'py, T>,
    out: Option<&Bound<'py, PyAny>>,
) -> Res<Bound<'py, PyAny>> {
    let (n, c) = (plan.output_len(), control.shape()[1]);
    let out = match out {
        Some(o) => {
            let o = o.extract::<Bound<'py, PyArray2<T>>>().map_err(|_| {
                Failure::Value(format!(
                    "out must be a 2-D array of the control's dtype ({})",
                    std::any::type_name::<T>()
                ))
            })?;
            if o.shape() != [n, c] {
                return Err(Failure::Value(format!("out has shape {:?}; ({n}, {c}) expected", o.shape())));
            }
            o
        }
        None => PyArray2::<T>::zeros(py, [n, c], false),
    };
    {
        let mut w = out.try_readwrite().map_err(|e| Failure::Value(format!("out is not writable: {e}")))?;
        let x = control.as_array();
        let y = w.as_array_mut();
        py.detach(|| T::eval(plan, x, y, Par::Rayon))?;
    }
    Ok(out.into_any())
}

/// A refinement of a mesh by a scheme of the registry, built once and
/// evaluated any number of times (`eval`), with its operators as
/// `scipy.sparse.csr_matrix`: `operator(i)` is `R_i` (level `i + 1` from
/// level `i`), `composed()` is `R = R_{L−1} ⋯ R_0`, `limit()` the limit
/// positions of the finest level.
#[pyclass(name = "Plan", module = "subla", frozen, subclass)]
pub(crate) struct PyPlan {
    plan: Box<dyn Plan>,
    scheme: &'static str,
    path: Option<Path>,
}

#[pymethods]
impl PyPlan {
    /// `levels` levels of `scheme` (`subla.schemes()` lists them) over
    /// `mesh`; `path` picks an implementation (`'kernels'`, `'algebra'`,
    /// `'edge-friend'`, `'halfedge'`; default the fastest); a plan
    /// predicted to take more than `max_memory` bytes (default 8 GiB) is
    /// refused with `SchemeError` of kind `OverBudget`.
    #[new]
    #[pyo3(signature = (mesh, scheme="catmark", levels=1, *, path=None, max_memory=None))]
    fn new(
        py: Python<'_>,
        mesh: &PyMesh,
        scheme: &str,
        levels: u32,
        path: Option<&str>,
        max_memory: Option<u64>,
    ) -> Res<PyPlan> {
        let (plan, scheme, path) = build(py, mesh, scheme, levels, path, max_memory)?;
        Ok(PyPlan { plan, scheme, path: Some(path) })
    }

    /// The scheme's name.
    #[getter]
    fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// The implementation (`None` for a face-varying plan).
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.map(path_name)
    }

    #[getter]
    fn levels(&self) -> u32 {
        self.plan.levels()
    }

    /// Rows of the control data.
    #[getter]
    fn input_len(&self) -> usize {
        self.plan.input_len()
    }

    /// Rows of the finest level.
    #[getter]
    fn output_len(&self) -> usize {
        self.plan.output_len()
    }

    /// Rows of level `level`.
    fn level_len(&self, level: u32) -> Res<usize> {
        Ok(self.plan.level_len(level_of(&*self.plan, Some(level))?))
    }

    /// The finest level's data from the control data (`(input_len, c)`,
    /// `float64` or `float32`, any strides), written into `out` when given
    /// (`(output_len, c)`, same dtype) or a fresh array.
    #[pyo3(signature = (control, *, out=None))]
    fn eval<'py>(
        &self,
        py: Python<'py>,
        control: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> Res<Bound<'py, PyAny>> {
        eval_any(py, &*self.plan, control, out)
    }

    /// `R_level`: level `level + 1` from level `level`.
    fn operator<'py>(&self, py: Python<'py>, level: u32) -> Res<Bound<'py, PyAny>> {
        if level >= self.plan.levels() {
            return Err(SchemeError::NoSuchLevel { level, levels: self.plan.levels() }.into());
        }
        let m = py.detach(|| self.plan.operator(level, Par::Rayon))?;
        Ok(csr(py, m)?)
    }

    /// Every `R_i`, coarsest first.
    #[pyo3(signature = (*, max_memory=None))]
    fn operators<'py>(&self, py: Python<'py>, max_memory: Option<u64>) -> Res<Bound<'py, PyList>> {
        let r = py.detach(|| Refinement::chain(&*self.plan, budget(max_memory), Par::Rayon))?;
        let l = PyList::empty(py);
        for m in r.into_levels() {
            l.append(csr(py, m)?)?;
        }
        Ok(l)
    }

    /// `R`, the product of every level's operator: the finest level from
    /// the control points in one sparse product. Refused (`OverBudget`)
    /// where it would take more than `max_memory` bytes (default 8 GiB).
    #[pyo3(signature = (*, max_memory=None))]
    fn composed<'py>(&self, py: Python<'py>, max_memory: Option<u64>) -> Res<Bound<'py, PyAny>> {
        let b = budget(max_memory);
        let m = py.detach(|| -> Result<_, SchemeError> {
            let mut r = Refinement::chain(&*self.plan, b, Par::Rayon)?;
            r.compose_with(&*self.plan, b, Par::Rayon)?;
            Ok(r.into_composed())
        })?;
        let Some(m) = m else { unreachable!("compose_with stores the product") };
        Ok(csr(py, m)?)
    }

    /// The limit positions of the finest level's points, over that level
    /// (`SchemeError` of kind `NoLimit` where the scheme has no limit
    /// masks).
    fn limit<'py>(&self, py: Python<'py>) -> Res<Bound<'py, PyAny>> {
        let m = py.detach(|| self.plan.limit(Par::Rayon))?;
        Ok(csr(py, m)?)
    }

    /// The faces of level `level` (default the finest) as
    /// `(face_sizes, face_vertices)` (`uint32`).
    #[pyo3(signature = (level=None))]
    fn faces<'py>(&self, py: Python<'py>, level: Option<u32>) -> Res<FaceArrays<'py>> {
        let level = level_of(&*self.plan, level)?;
        let f = self.plan.faces(level, Par::Rayon)?;
        let sizes: Vec<u32> = f.iter().map(|c| c.len() as u32).collect();
        Ok((numpy::PyArray1::from_vec(py, sizes), u32s(py, f.face_verts())))
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan({}, {} levels, {} -> {} points)",
            self.scheme,
            self.plan.levels(),
            self.plan.input_len(),
            self.plan.output_len()
        )
    }
}

/// The refinement of a face-varying channel (texture coordinates, normals
/// or any per-corner values) by a scheme's face-varying rules (`catmark`,
/// `bilinear`, `loop`; OpenSubdiv's). A `Plan` over the channel's values;
/// `indices(level)` gives each face corner's value at a level, in the
/// order of the vertex plans' faces.
#[pyclass(name = "FaceVaryingPlan", module = "subla", frozen, extends = PyPlan)]
pub(crate) struct PyFVarPlan {
    mode: String,
}

#[pymethods]
impl PyFVarPlan {
    /// The channel `channel` (`'texcoords'` or `'normals'`) of `mesh`, or
    /// the values `0..num_values` that `indices` (one per face corner)
    /// name, refined `levels` times by `scheme` with the boundary mode
    /// `mode` (default the mesh's `fvar_boundary` option).
    #[new]
    #[pyo3(signature = (mesh, scheme="catmark", levels=1, *, channel="texcoords", indices=None, num_values=None, mode=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        mesh: &PyMesh,
        scheme: &str,
        levels: u32,
        channel: &str,
        indices: Option<&Bound<'_, PyAny>>,
        num_values: Option<usize>,
        mode: Option<&str>,
    ) -> Res<PyClassInitializer<Self>> {
        let mode = mode.map_or(Ok(mesh.data.mesh.options().fvar_boundary), fvar_mode)?;
        let (idx, n) = match indices {
            Some(i) => {
                let idx = crate::convert::indices(i, "indices")?;
                let n = num_values.unwrap_or_else(|| idx.iter().max().map_or(0, |&m| m as usize + 1));
                (idx, n)
            }
            None => {
                let fv = match channel {
                    "texcoords" => mesh.data.texcoords.as_ref(),
                    "normals" => mesh.data.normals.as_ref(),
                    c => return Err(Failure::Value(format!("channel {c:?}: 'texcoords' or 'normals'"))),
                };
                let fv = fv.ok_or_else(|| Failure::Value(format!("the mesh has no {channel}")))?;
                (fv.indices.clone(), fv.values.nrows())
            }
        };
        let corners = mesh.data.mesh.topology().face_verts().len();
        if idx.len() != corners {
            return Err(Failure::Value(format!("{} indices for {corners} face corners", idx.len())));
        }
        if let Some((c, &v)) = idx.iter().enumerate().find(|(_, v)| **v as usize >= n) {
            return Err(Failure::Value(format!("corner {c} uses value {v}, but there are {n} values")));
        }
        let plan = py.detach(|| face_varying_plan(&mesh.data.mesh, &idx, n, scheme, levels, mode, Par::Rayon))?;
        let name = Registry::builtin().scheme(scheme).map(Scheme::name)?;
        let base = PyPlan { plan, scheme: name, path: None };
        let mode = format!("{mode:?}");
        Ok(PyClassInitializer::from(base).add_subclass(PyFVarPlan { mode }))
    }

    /// The boundary mode (OpenSubdiv's `FVarLinearInterpolation`).
    #[getter]
    fn mode(&self) -> &str {
        &self.mode
    }

    /// Each face corner's value at level `level` (default the finest),
    /// face after face in the order of the vertex plans' faces (`uint32`).
    #[pyo3(signature = (level=None))]
    fn indices<'py>(self_: PyRef<'py, Self>, level: Option<u32>) -> Res<Bound<'py, numpy::PyArray1<u32>>> {
        let py = self_.py();
        let base = self_.as_super();
        let level = level_of(&*base.plan, level)?;
        let f = base.plan.faces(level, Par::Rayon)?;
        Ok(u32s(py, f.face_verts()))
    }
}

/// The mesh refined `levels` times by `scheme`: every channel of the
/// vertex data, the tags of the finest level, and the texture coordinates
/// refined by the scheme's face-varying rules. What cannot be carried is
/// named in a `DataLossWarning`: normals (not refined as data: compute
/// the refined surface's), groups (faces are renumbered), texture
/// coordinates of a scheme without face-varying rules.
#[pyfunction]
#[pyo3(signature = (mesh, scheme="catmark", levels=1, *, path=None, max_memory=None))]
fn subdivide(
    py: Python<'_>,
    mesh: &PyMesh,
    scheme: &str,
    levels: u32,
    path: Option<&str>,
    max_memory: Option<u64>,
) -> Res<PyMesh> {
    let (plan, name, _) = build(py, mesh, scheme, levels, path, max_memory)?;
    let input = &mesh.data;
    let (vertices, refined) = py.detach(|| -> Result<_, SchemeError> {
        let v = subla_scheme::eval(&*plan, input.vertices.view(), Par::Rayon)?;
        Ok((v, plan.refined(levels, Par::Rayon)?.clone()))
    })?;
    let mut data = MeshData::new(refined, vertices)?;
    data.channels = input.channels.clone();
    if let Some(fv) = &input.texcoords {
        let mode = input.mesh.options().fvar_boundary;
        let n = fv.values.nrows();
        match face_varying_plan(&input.mesh, &fv.indices, n, scheme, levels, mode, Par::Rayon) {
            Ok(p) => {
                let values = py.detach(|| subla_scheme::eval(&*p, fv.values.view(), Par::Rayon))?;
                let indices = p.faces(levels, Par::Rayon)?.face_verts().to_vec();
                if indices.len() == data.mesh.topology().face_verts().len() {
                    data.texcoords = Some(FaceVarying { values, indices });
                } else {
                    warn(py, "texcoords left out: the refined faces do not follow them")?;
                }
            }
            Err(subla::registry::RegistryError::NoFaceVarying { .. }) => {
                warn(py, &format!("texcoords left out: {name} has no face-varying rules"))?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if input.normals.is_some() {
        warn(py, "normals left out: they are not refined as data (compute the refined surface's)")?;
    }
    if !input.groups.is_empty() {
        warn(py, &format!("{} groups left out: a refinement renumbers the faces", input.groups.len()))?;
    }
    Ok(PyMesh { data })
}

/// The registry's schemes: `(name, description, faces, paths)`.
#[pyfunction]
fn schemes(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let l = PyList::empty(py);
    for s in Registry::builtin().schemes() {
        let paths: Vec<String> =
            s.implementations().filter(|(b, _)| *b == Backend::Cpu).map(|(_, p)| path_name(p)).collect();
        let faces = match s.faces() {
            subla::registry::Faces::Triangles => "triangles",
            _ => "polygons",
        };
        l.append((s.name(), s.about(), faces, paths))?;
    }
    Ok(l)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlan>()?;
    m.add_class::<PyFVarPlan>()?;
    m.add_function(wrap_pyfunction!(subdivide, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    Ok(())
}
