//! Python bindings of subla: the extension module `subla._subla`, which
//! the Python package `subla` (`python/subla/`) re-exports.
//!
//! What crosses the boundary:
//! - vertex data are numpy arrays of `float64` or `float32`, one row per
//!   vertex and any number of channels; they are read in place (any
//!   strides) and results are written into fresh arrays or the caller's
//!   (`out=`), so nothing is copied on the way in or out;
//! - matrices (`R_i`, `R`, limit, face-varying and analysis operators) are
//!   `scipy.sparse.csr_matrix` over the library's own arrays;
//! - the library's errors are Python exceptions of one hierarchy under
//!   `subla.SublaError`, each with its variant's name in `kind` and the
//!   offending element (`face`, `vertex`, `edge`, `line`, …) as attributes;
//! - data a call cannot carry (a channel a scheme has no rules for, groups
//!   across a refinement, statements a reader skipped) are named in a
//!   `subla.DataLossWarning`, never dropped silently.
//!
//! The GIL is released while the library works.

use pyo3::prelude::*;

mod analysis;
mod convert;
mod errors;
mod limit;
mod mesh;
mod plan;

/// The extension module.
#[pymodule]
fn _subla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    mesh::register(m)?;
    plan::register(m)?;
    limit::register(m)?;
    analysis::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
