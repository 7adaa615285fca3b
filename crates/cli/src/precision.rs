//! What precision a run computes in, said truthfully: `f64` is refused on
//! the GPU (which computes in `f32` only) unless the CPU may take over, and
//! `f32` is refused for data it cannot hold.

use ndarray::ArrayView2;

use crate::output::shown;
use crate::{Backend, Fallback, Precision};

/// Where a run with `--backend`, `--fallback` and `--precision` runs:
/// `--backend gpu --precision f64` is an error without `--fallback cpu`,
/// and runs on the CPU (with a warning) with it.
pub(crate) fn backend_for(backend: Backend, fallback: Fallback, precision: Option<Precision>) -> Result<Backend, String> {
    if backend != Backend::Gpu || precision != Some(Precision::F64) {
        return Ok(backend);
    }
    match fallback {
        Fallback::None => Err(
            "--backend gpu --precision f64: the GPU computes in f32 only (pass --precision f32, --backend cpu, or --fallback cpu to run on the CPU in f64)"
                .to_owned(),
        ),
        Fallback::Cpu => {
            eprintln!("warning: --precision f64: the GPU computes in f32 only; running on the CPU (--fallback cpu)");
            Ok(Backend::Cpu)
        }
    }
}

/// Where a run with `--backend` and `--precision` runs once
/// [`backend_for`] has let it through: the CPU for `f64`.
pub(crate) fn runs_on(backend: Backend, precision: Option<Precision>) -> Backend {
    if precision == Some(Precision::F64) { Backend::Cpu } else { backend }
}

/// Refuses data that `f32` cannot hold (a finite value beyond its range),
/// naming the vertex, channel and value.
pub(crate) fn check_f32(positions: ArrayView2<'_, f64>, file: Option<&std::path::Path>) -> Result<(), String> {
    for (vertex, row) in positions.rows().into_iter().enumerate() {
        for (channel, &value) in row.iter().enumerate() {
            if value.is_finite() && value.abs() > f64::from(f32::MAX) {
                let at = file.map(|f| format!("{}: ", shown(f))).unwrap_or_default();
                return Err(format!(
                    "{at}vertex {vertex}: coordinate {channel} is {value:e}, which overflows f32 (largest {:e}); pass --precision f64",
                    f32::MAX
                ));
            }
        }
    }
    Ok(())
}
