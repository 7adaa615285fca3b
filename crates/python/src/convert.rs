//! Conversions at the boundary: numpy arrays in, numpy arrays and
//! `scipy.sparse.csr_matrix` out.

use numpy::{PyArray1, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use subla_algebra::CsrMat;

use crate::errors::{Failure, Res};

/// Vertex data from Python: `float64` or `float32`, read in place (any
/// strides); anything else array-like is converted to `float64`.
pub(crate) enum Data<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

impl<'py> Data<'py> {
    /// `obj` as vertex data, one row per vertex (`what` names it in errors).
    pub(crate) fn of(obj: &Bound<'py, PyAny>, what: &str) -> Res<Data<'py>> {
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(Data::F64(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(Data::F32(a));
        }
        let py = obj.py();
        let np = py.import("numpy")?;
        let kw = PyDict::new(py);
        kw.set_item("dtype", np.getattr("float64")?)?;
        let a = np.call_method("asarray", (obj,), Some(&kw))?;
        let dims = a.getattr("ndim")?.extract::<usize>()?;
        if dims != 2 {
            return Err(Failure::Value(format!(
                "{what} must be a 2-D array (one row per vertex, one column per channel), got {dims} dimensions"
            )));
        }
        Ok(Data::F64(a.extract::<PyReadonlyArray2<'py, f64>>()?))
    }

    /// An owned `float64` copy.
    pub(crate) fn to_f64(&self) -> ndarray::Array2<f64> {
        match self {
            Data::F64(a) => a.as_array().to_owned(),
            Data::F32(a) => a.as_array().mapv(f64::from),
        }
    }

    /// Rows and columns.
    pub(crate) fn shape(&self) -> (usize, usize) {
        match self {
            Data::F64(a) => (a.shape()[0], a.shape()[1]),
            Data::F32(a) => (a.shape()[0], a.shape()[1]),
        }
    }

    /// Checks one row per `rows` and at least one channel.
    pub(crate) fn check_rows(&self, rows: usize, what: &str) -> Res<()> {
        let (n, c) = self.shape();
        if n != rows {
            return Err(Failure::Value(format!("{what} has {n} rows; {rows} expected (one per input point)")));
        }
        if c == 0 {
            return Err(Failure::Value(format!("{what} has no channels (columns)")));
        }
        Ok(())
    }
}

/// An index array for scipy: `int32` where every value fits, else `int64`.
fn index_array<'py>(py: Python<'py>, v: Vec<u32>, fits: bool) -> Bound<'py, PyAny> {
    if fits {
        PyArray1::from_vec(py, v.into_iter().map(|x| x as i32).collect()).into_any()
    } else {
        PyArray1::from_vec(py, v.into_iter().map(i64::from).collect()).into_any()
    }
}

/// `m` as a `scipy.sparse.csr_matrix` (its arrays moved, not copied, where
/// the index type allows).
pub(crate) fn csr<'py>(py: Python<'py>, m: CsrMat<f64>) -> PyResult<Bound<'py, PyAny>> {
    let (nrows, ncols, ptr, idx, values) = m.into_parts();
    let fits = values.len() <= i32::MAX as usize && ncols <= i32::MAX as u32;
    let data = PyArray1::from_vec(py, values);
    let indices = index_array(py, idx, fits);
    let indptr = index_array(py, ptr, fits);
    let sparse = py.import("scipy.sparse")?;
    let kw = PyDict::new(py);
    kw.set_item("shape", (nrows, ncols))?;
    kw.set_item("copy", false)?;
    sparse.getattr("csr_matrix")?.call(((data, indices, indptr),), Some(&kw))
}

/// A `(n, c)` array of `T` from rows of `c` values.
pub(crate) fn rows<'py>(py: Python<'py>, rows: &[Vec<f64>]) -> Res<Bound<'py, PyArray2<f64>>> {
    let c = rows.first().map_or(0, Vec::len);
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let a = ndarray::Array2::from_shape_vec((rows.len(), c), flat)
        .map_err(|_| Failure::Value("rows of different lengths".to_owned()))?;
    Ok(PyArray2::from_owned_array(py, a))
}

/// A `uint32` array.
pub(crate) fn u32s<'py>(py: Python<'py>, v: &[u32]) -> Bound<'py, PyArray1<u32>> {
    PyArray1::from_slice(py, v)
}

/// A 1-D `uint32` array from any sequence of non-negative integers
/// (`what` names it in errors).
pub(crate) fn indices(obj: &Bound<'_, PyAny>, what: &str) -> Res<Vec<u32>> {
    if let Ok(a) = obj.extract::<numpy::PyReadonlyArray1<'_, u32>>() {
        return Ok(a.as_array().iter().copied().collect());
    }
    let v: Vec<i64> = obj.extract().map_err(|_| Failure::Value(format!("{what} must be a sequence of integers")))?;
    v.iter()
        .enumerate()
        .map(|(i, &x)| u32::try_from(x).map_err(|_| Failure::Value(format!("{what}[{i}] = {x} is not a valid index"))))
        .collect()
}
