//! `subla.LimitSurface`: feature-adaptive refinement, its patch table, and
//! the limit surface at `(ptex face, u, v)`.

use numpy::{Element, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use subla::adaptive::{EndCap, PatchTable, Sample, Scheme, SparseRefinement, grid};
use subla_algebra::Par;

use crate::convert::{Data, csr};
use crate::errors::{Failure, Res};
use crate::mesh::PyMesh;

/// The limit surface of a mesh: adaptive refinement to an isolation level
/// around its features, regular patches elsewhere, end caps at the
/// isolation level (OpenSubdiv's `RefineAdaptive` + `PatchTable`). Samples
/// are `(ptex, u, v)` in OpenSubdiv's ptex convention (a quad or a Loop
/// triangle is one ptex face, an n-gon n of them).
#[pyclass(name = "LimitSurface", module = "subla", frozen)]
pub(crate) struct PyLimit {
    table: PatchTable,
    num_control: usize,
}

/// The samples from three equal-length sequences.
fn samples(ptex: Vec<u32>, u: Vec<f64>, v: Vec<f64>) -> Res<Vec<Sample>> {
    if ptex.len() != u.len() || u.len() != v.len() {
        return Err(Failure::Value(format!(
            "ptex, u and v have {}, {} and {} entries; one each per sample",
            ptex.len(),
            u.len(),
            v.len()
        )));
    }
    if let Some(i) = u.iter().chain(&v).position(|t| !(0.0..=1.0).contains(t)) {
        return Err(Failure::Value(format!("sample {}: parameters must lie in [0, 1]", i % u.len().max(1))));
    }
    Ok(ptex.into_iter().zip(u).zip(v).map(|((ptex, u), v)| Sample { ptex, u, v }).collect())
}

type Triple<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

fn evaluate_typed<'py, T: Element + num_traits::Float + Send + Sync + subla_algebra::mem::Zeroable>(
    py: Python<'py>,
    table: &PatchTable,
    control: PyReadonlyArray2<'py, T>,
    samples: &[Sample],
) -> Res<Triple<'py>> {
    let x = control.as_array();
    let lim = py.detach(|| table.evaluate(x, samples, Par::Rayon))?;
    Ok((
        PyArray2::from_owned_array(py, lim.position).into_any(),
        PyArray2::from_owned_array(py, lim.du).into_any(),
        PyArray2::from_owned_array(py, lim.dv).into_any(),
    ))
}

#[pymethods]
impl PyLimit {
    /// Adaptive refinement of `mesh` by `scheme` (`'catmark'` or `'loop'`)
    /// to isolation level `isolation` (1–10), with end caps `endcap`
    /// (`'gregory'`, OpenSubdiv's default, or `'bspline'`), around the
    /// features or only around `selected_faces` (control face indices).
    /// Refused (`AdaptiveError`, kind `OverBudget`) where it would take
    /// more than `max_memory` bytes (default 8 GiB).
    #[new]
    #[pyo3(signature = (mesh, scheme="catmark", isolation=3, *, endcap="gregory", selected_faces=None, max_memory=None))]
    fn new(
        py: Python<'_>,
        mesh: &PyMesh,
        scheme: &str,
        isolation: u32,
        endcap: &str,
        selected_faces: Option<Vec<u32>>,
        max_memory: Option<u64>,
    ) -> Res<PyLimit> {
        let scheme = match scheme {
            "catmark" => Scheme::Catmark,
            "loop" => Scheme::Loop,
            s => {
                return Err(Failure::Value(format!(
                    "scheme {s:?}: the limit surface is made for 'catmark' and 'loop'"
                )));
            }
        };
        let end_cap = match endcap {
            "gregory" => EndCap::GregoryBasis,
            "bspline" => EndCap::BSplineBasis,
            e => return Err(Failure::Value(format!("endcap {e:?}: 'gregory' or 'bspline'"))),
        };
        let budget = max_memory.unwrap_or(8 << 30);
        let m = &mesh.data.mesh;
        let table = py.detach(|| -> Result<PatchTable, subla::adaptive::AdaptiveError> {
            let r = SparseRefinement::build_within(scheme, m, isolation, selected_faces.as_deref(), budget)?;
            PatchTable::new(r, end_cap)
        })?;
        Ok(PyLimit { table, num_control: m.num_vertices() })
    }

    /// Number of ptex faces.
    #[getter]
    fn num_ptex(&self) -> u32 {
        self.table.refinement().num_ptex_faces()
    }

    /// Number of patches.
    #[getter]
    fn num_patches(&self) -> usize {
        self.table.patches().len()
    }

    /// The samples of a `k × k` grid on every ptex face (`u = i/(k−1)`,
    /// `v = j/(k−1)`, `j` the outer loop), as `(ptex, u, v)` arrays.
    fn grid(&self, k: u32) -> (Vec<u32>, Vec<f64>, Vec<f64>) {
        let s = grid(self.num_ptex(), k);
        (s.iter().map(|s| s.ptex).collect(), s.iter().map(|s| s.u).collect(), s.iter().map(|s| s.v).collect())
    }

    /// Limit positions and first derivatives of the control data
    /// (`(num_control, c)`, `float64` or `float32`) at the samples:
    /// `(position, du, dv)`, each `(samples, c)`; samples no patch covers
    /// (in holes) are NaN rows.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        control: &Bound<'py, PyAny>,
        ptex: Vec<u32>,
        u: Vec<f64>,
        v: Vec<f64>,
    ) -> Res<Triple<'py>> {
        let data = Data::of(control, "control")?;
        data.check_rows(self.num_control, "control")?;
        let samples = samples(ptex, u, v)?;
        match data {
            Data::F64(a) => evaluate_typed(py, &self.table, a, &samples),
            Data::F32(a) => evaluate_typed(py, &self.table, a, &samples),
        }
    }

    /// The limit map at the samples as matrices over the control points
    /// (OpenSubdiv's limit stencils): `(P, Du, Dv)`, each a
    /// `scipy.sparse.csr_matrix` of samples × control points (empty rows
    /// for samples no patch covers).
    fn matrices<'py>(&self, py: Python<'py>, ptex: Vec<u32>, u: Vec<f64>, v: Vec<f64>) -> Res<Triple<'py>> {
        let samples = samples(ptex, u, v)?;
        let m = py.detach(|| self.table.limit_matrices(&samples, Par::Rayon))?;
        Ok((csr(py, m.p)?, csr(py, m.du)?, csr(py, m.dv)?))
    }

    fn __repr__(&self) -> String {
        format!("LimitSurface({} ptex faces, {} patches)", self.num_ptex(), self.table.patches().len())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLimit>()
}
