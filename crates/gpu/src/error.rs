//! The crate's error type.

use thiserror::Error;

/// Everything in this crate that can fail because of the device, the driver,
/// the environment or the data (as opposed to a caller contract violation,
/// such as buffers of mismatched lengths, which panics).
///
/// Every wgpu error is turned into one of these: nothing in this crate lets
/// wgpu panic on an error it reports.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter matched the request (backends, adapter name).
    #[error("no GPU adapter matches {request}; adapters seen: {}", list_or_none(seen))]
    NoAdapter {
        /// What was asked for (backends and name filter).
        request: String,
        /// Every adapter the instance enumerated, as `"name (backend, type)"`.
        seen: Vec<String>,
    },
    /// An environment variable has a value this crate does not understand.
    #[error("environment variable {var}={value:?} is invalid: expected {expected}")]
    InvalidEnv {
        /// The variable (`SUBLA_GPU_BACKEND`).
        var: &'static str,
        /// Its value.
        value: String,
        /// What it may hold.
        expected: &'static str,
    },
    /// The adapter refused to create a device.
    #[error("requesting a device from adapter {adapter:?} failed: {message}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's message.
        message: String,
    },
    /// The device was lost (driver reset, device removed, context dropped).
    #[error("the GPU device was lost: {reason}")]
    DeviceLost {
        /// The reason given by the driver.
        reason: String,
    },
    /// wgpu reported a validation error during `operation`.
    #[error("wgpu validation error in {operation}: {message}")]
    Validation {
        /// What this crate was doing (for example `"scan"`).
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// The device ran out of memory during `operation`.
    #[error("the GPU ran out of memory in {operation}: {message}")]
    OutOfMemory {
        /// What this crate was doing.
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// wgpu reported an internal error (driver or implementation limits).
    #[error("wgpu internal error in {operation}: {message}")]
    Internal {
        /// What this crate was doing.
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// A WGSL shader (a kernel specialised with a user snippet) does not
    /// parse or validate; `message` is naga's diagnostic.
    #[error("invalid WGSL shader: {message}")]
    Shader {
        /// naga's (or wgpu's) message, with the offending line.
        message: String,
    },
    /// A buffer or a binding would exceed a device limit; nothing was
    /// allocated.
    #[error("{what} needs {bytes} bytes, over the device limit {limit} = {limit_value}")]
    TooLarge {
        /// What was being created (for example `"scan input binding"`).
        what: &'static str,
        /// The size asked for, in bytes (or workgroups / invocations for the
        /// dispatch limits).
        bytes: u64,
        /// The name of the limit (a field of `wgpu::Limits`, or
        /// `"u32 index"` for counts over `u32::MAX`).
        limit: &'static str,
        /// The limit's value in force.
        limit_value: u64,
    },
    /// An integer result does not fit in `u32` (a scan total, for example).
    #[error("{what} overflows u32")]
    Overflow {
        /// What overflowed.
        what: &'static str,
    },
    /// Reading a buffer back (mapping it) failed.
    #[error("mapping a buffer for readback failed: {message}")]
    Map {
        /// wgpu's message.
        message: String,
    },
    /// Waiting for the device failed.
    #[error("waiting for the GPU failed: {message}")]
    Poll {
        /// wgpu's message.
        message: String,
    },
    /// The operation does not handle this input on the device (a
    /// non-manifold topology in the GPU quad split, for example); nothing
    /// ran. `reason` says what to do instead.
    #[error("{operation} does not support this input: {reason}")]
    Unsupported {
        /// The operation (for example `"split_quads_gpu"`).
        operation: &'static str,
        /// What is unsupported, and the alternative.
        reason: String,
    },
    /// Data read back from the device is not a valid matrix (a bug in a
    /// kernel or a device fault).
    #[error("matrix read back from the GPU is invalid: {0}")]
    Algebra(#[from] subla_algebra::AlgebraError),
}

fn list_or_none(seen: &[String]) -> String {
    if seen.is_empty() { "none".to_owned() } else { seen.join(", ") }
}

/// Shorthand for results of this crate.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
