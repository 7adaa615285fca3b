//! The WGSL kernels (this crate's `shaders/` folder, one file per kernel;
//! the workspace's top-level `shaders/README.md` indexes every crate's)
//! and their validation with naga.
//!
//! The sources are compiled into the crate with `include_str!`; pipelines
//! are built from them on first use and cached by the [`GpuContext`].
//! [`validate`] parses and validates a source without a device, which is how
//! user snippets are checked before they reach wgpu.
//!
//! [`GpuContext`]: crate::GpuContext

use crate::error::{GpuError, Result};

/// `scan.wgsl`: one level of the multi-level exclusive scan of `u32`.
pub const SCAN: &str = include_str!("../shaders/scan.wgsl");
/// `compact.wgsl`: stream compaction (flags to increasing indices).
pub const COMPACT: &str = include_str!("../shaders/compact.wgsl");
/// `transpose.wgsl`: deterministic CSR ↔ CSC counting sort.
pub const TRANSPOSE: &str = include_str!("../shaders/transpose.wgsl");
/// `spmv.wgsl`: CSR row-gather SpMV on multi-channel `f32` data.
pub const SPMV: &str = include_str!("../shaders/spmv.wgsl");
/// `spmv_mapped.wgsl`: the mapped SpMV template (identity action map as
/// shipped); see [`mapped_spmv_source`].
pub const SPMV_MAPPED: &str = include_str!("../shaders/spmv_mapped.wgsl");

/// `spmv_balanced.wgsl`: load-balanced CSR SpMV (fixed nonzeros per
/// invocation, segmented reduction, carry fix-up pass).
pub const SPMV_BALANCED: &str = include_str!("../shaders/spmv_balanced.wgsl");

/// `copy.wgsl`: a device-to-device copy of `vec4<f32>`, the bandwidth
/// reference of [`crate::timing`].
pub const COPY: &str = include_str!("../shaders/copy.wgsl");

/// `topology_build.wgsl`: a mesh's connectivity from its faces
/// ([`crate::topology::build`]), several entry points.
pub const TOPOLOGY_BUILD: &str = crate::topology::TOPOLOGY_BUILD;

/// Every kernel as `(file name, source)`.
pub const ALL: [(&str, &str); 8] = [
    ("scan.wgsl", SCAN),
    ("compact.wgsl", COMPACT),
    ("transpose.wgsl", TRANSPOSE),
    ("spmv.wgsl", SPMV),
    ("spmv_mapped.wgsl", SPMV_MAPPED),
    ("spmv_balanced.wgsl", SPMV_BALANCED),
    ("copy.wgsl", COPY),
    ("topology_build.wgsl", TOPOLOGY_BUILD),
];

/// The marker in [`SPMV_MAPPED`]: the line holding it is replaced by the
/// body of `fn action(value: f32, row: u32, col: u32) -> f32`.
pub const ACTION_MARKER: &str = "SUBLA_ACTION_BODY";

/// The mapped SpMV shader with `snippet` as the body of
/// `fn action(value: f32, row: u32, col: u32) -> f32 { <snippet> }`, and the
/// 1-based line of the generated source where the snippet starts.
pub fn mapped_spmv_source(snippet: &str) -> (String, usize) {
    let mut out = String::with_capacity(SPMV_MAPPED.len() + snippet.len());
    let mut first_line = 0;
    for (i, line) in SPMV_MAPPED.lines().enumerate() {
        if first_line == 0 && line.contains(ACTION_MARKER) && !line.trim_start().starts_with("//") {
            first_line = i + 1;
            out.push_str(snippet);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    (out, first_line)
}

/// Parses and validates a WGSL module with naga (no device needed).
///
/// # Errors
/// [`GpuError::Shader`] with naga's diagnostic (message, line, column and
/// the offending source line).
pub fn validate(source: &str) -> Result<()> {
    use wgpu::naga;
    let module =
        naga::front::wgsl::parse_str(source).map_err(|e| GpuError::Shader { message: e.emit_to_string(source) })?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| GpuError::Shader { message: e.emit_to_string(source) })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shader_validates() {
        for (name, source) in ALL {
            if let Err(e) = validate(source) {
                panic!("{name}: {e}");
            }
        }
    }

    #[test]
    fn template_has_one_marker_line() {
        let (source, line) = mapped_spmv_source("return value * 2.0;");
        assert!(line > 0);
        assert_eq!(source.lines().nth(line - 1), Some("return value * 2.0;"));
        assert!(!source.lines().any(|l| l.contains(ACTION_MARKER) && !l.trim_start().starts_with("//")));
        validate(&source).unwrap();
    }
}
