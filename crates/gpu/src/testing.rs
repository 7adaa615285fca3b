//! Helpers for tests that need a device.
//!
//! Tests call [`context_or_skip`] and return early on `None`: on a machine
//! without an adapter they pass with a skip line, unless the environment
//! variable [`REQUIRE_ENV`] is `1`, as in CI on lavapipe, where a missing
//! adapter is a failure, not a skip.
//!
//! ```no_run
//! # fn test() -> Result<(), subla_gpu::GpuError> {
//! let Some(ctx) = subla_gpu::testing::context_or_skip() else { return Ok(()) };
//! let buf = subla_gpu::GpuBuffer::upload(ctx, &[1u32, 2, 3])?;
//! assert_eq!(buf.download(ctx)?, [1, 2, 3]);
//! # Ok(()) }
//! ```

use std::sync::OnceLock;

use crate::context::{GpuContext, GpuContextOptions};
use crate::error::GpuError;

/// Environment variable that turns a missing adapter into a test failure
/// when set to `1`.
pub const REQUIRE_ENV: &str = "SUBLA_REQUIRE_GPU";

fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v.trim() == "1")
}

fn skip_or_panic(error: &GpuError) {
    if required() {
        panic!("{REQUIRE_ENV}=1: a missing adapter is a failure, not a skip: {error}");
    }
    eprintln!("skipped: no usable GPU adapter ({error}); set {REQUIRE_ENV}=1 to fail instead");
}

/// The process-wide default context ([`GpuContext::new`], created once and
/// shared by every test of the binary), or `None` with a skip line when no
/// adapter can be had.
///
/// # Panics
/// When no context can be created and [`REQUIRE_ENV`] is `1`.
pub fn context_or_skip() -> Option<&'static GpuContext> {
    static CONTEXT: OnceLock<Result<GpuContext, GpuError>> = OnceLock::new();
    match CONTEXT.get_or_init(GpuContext::new) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            skip_or_panic(e);
            None
        }
    }
}

/// A new context built with `options` (for capped limits), or `None` with
/// a skip line when no adapter can be had.
///
/// # Panics
/// When no context can be created and [`REQUIRE_ENV`] is `1`.
pub fn context_with_options_or_skip(options: GpuContextOptions) -> Option<GpuContext> {
    match GpuContext::with_options(options) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            skip_or_panic(&e);
            None
        }
    }
}
