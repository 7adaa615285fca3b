//! What precision a run computes in, said truthfully: `f64` is refused on
//! the GPU (which computes in `f32` only) unless the CPU may take over, and
//! `f32` is refused for data it cannot hold.

use ndarray::ArrayView2;

use crate::output::shown;
use crate::{Backend, Fallback, Precision};

/// Refuses `--backend gpu --precision f64` without `--fallback cpu`, up
/// front: the GPU computes in `f32` only. With the fallback, the GPU plans
/// evaluate on the CPU in `f64` (and say so), and the report names the
/// CPU.
pub(crate) fn check_backend(backend: Backend, fallback: Fallback, precision: Option<Precision>) -> Result<(), String> {
    if backend == Backend::Gpu && precision == Some(Precision::F64) && fallback == Fallback::None {
        return Err(
            "--backend gpu --precision f64: the GPU computes in f32 only (pass --precision f32, --backend cpu, or --fallback cpu to evaluate on the CPU in f64)"
                .to_owned(),
        );
    }
    Ok(())
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
