//! wgpu backend for subla: the sparse-linear-algebra kernels of subdivision
//! (Mlakar et al. 2020, *Subdivision-Specialized Linear Algebra Kernels for
//! Static and Dynamic Mesh Connectivity on the GPU*) as WGSL compute
//! shaders.
//!
//! Following OpenSubdiv's split, this crate is a *backend*: it applies
//! operators that scheme crates build (with `subla-algebra` on the CPU) and
//! never knows a subdivision rule. Results are checked against the CPU
//! routines of `subla-algebra`, which serve as the oracle.
//!
//! # Design
//! * [`GpuContext`] ([`context`]): adapter choice (high performance by
//!   default; `SUBLA_GPU_BACKEND` and `SUBLA_GPU_ADAPTER` narrow it), the
//!   adapter's real limits, error capture and a pipeline cache. Pipelines
//!   and bind-group layouts are built once per key (kernel, entry point,
//!   specialisation), as in wgpu's `repeated_compute` example.
//! * [`GpuBuffer<T>`] ([`buffer`]): typed storage buffers with upload,
//!   staged download and same-size rewrite for per-frame data.
//! * Kernels, one WGSL file each in this crate's `shaders/` folder,
//!   compiled in with `include_str!` ([`shaders`]):
//!
//!   | module | shader | what |
//!   |---|---|---|
//!   | [`scan`] | `scan.wgsl` | multi-level exclusive scan of `u32` (blocks of 512, block sums scanned recursively, added back) |
//!   | [`compact`] | `compact.wgsl` | stream compaction / predicate enumeration (scan of flags, then scatter) |
//!   | [`sparse`] | `transpose.wgsl` | [`GpuCsr`] / [`GpuCsc`], CSR ↔ CSC counting sort |
//!   | [`spmv`] | `spmv.wgsl`, `spmv_mapped.wgsl` | row-gather SpMV on `n × d` data, plain or with a WGSL action map |
//!   | [`timing`] | `copy.wgsl` | timestamp queries per compute pass, and the device-to-device copy that bandwidth is reported against |
//!   | [`balanced`] | `spmv_balanced.wgsl` | load-balanced SpMV (8 nonzeros per invocation, segmented reduction, carry fix-up), [`GpuRefinement`]: a chain of refinement matrices on the device |
//!
//! * [`program`]: what scheme crates with their own WGSL build on —
//!   multi-entry shaders (one pipeline per entry point, bindings found by
//!   reflection), 2-D dispatch grids, checked uploads.
//! * [`topology`]: a mesh's connectivity on the device
//!   ([`topology::GpuTopology`], every array of a CPU `Topology`), uploaded
//!   or built from the faces alone (`topology_build.wgsl`, manifold meshes;
//!   [`topology::TopologyKernels`]) and read back; what the scheme crates
//!   refine and read level by level, scheme-independent.
//!
//! # Determinism
//! WGSL has no float atomics. Every output element is written by exactly
//! one invocation per pass (the balanced SpMV's fix-up pass adds the
//! carries of rows that cross workgroups, in a fixed order), and integer
//! atomics are used only where their order cannot change the result
//! (counts, the overflow flag, and placement that a per-slice sort then
//! makes unique). Repeated runs on one device give
//! bitwise identical results; the integer kernels (scan, compaction,
//! relayout) agree exactly with the CPU.
//!
//! # Limits
//! Buffers are checked against `max_buffer_size` and bindings against
//! `max_storage_buffer_binding_size` before wgpu sees them: data larger than
//! one binding is split across dispatches where that is natural (scan,
//! compaction input) and refused with [`GpuError::TooLarge`] naming the
//! limit otherwise. More than 65 535 workgroups use a 2-D grid whose flat
//! index the shaders compute.
//!
//! # Errors and panics
//! Every failure of the device, the driver or the environment is a
//! [`GpuError`]; wgpu is never left to panic on an error it reports
//! (operations run inside error scopes, device loss and uncaptured errors
//! are recorded and reported by the next operation). Data the device does
//! not take has a variant of its own naming the element
//! ([`GpuError::InvalidFaces`] with a [`FaceDefect`],
//! [`GpuError::NotManifold`] with its [`ManifoldDefects`] and lowest vertex,
//! [`GpuError::ManifoldRequired`]): match on those, not on messages.
//! Violations of a routine's contract by the caller (mismatched shapes,
//! wrong buffer lengths) panic with a message naming the operands.
//!
//! # Testing
//! Tests use [`testing::context_or_skip`]: they skip where no adapter
//! exists and fail when `SUBLA_REQUIRE_GPU=1`. On a machine without a GPU,
//! Mesa's lavapipe gives a Vulkan adapter on the CPU:
//! `VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json`.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod balanced;
pub mod buffer;
pub mod compact;
pub mod context;
pub mod error;
pub mod program;
pub mod scan;
pub mod shaders;
pub mod sparse;
pub mod spmv;
pub mod testing;
pub mod timing;
pub mod topology;

pub use balanced::{BalancedCsr, GpuRefinement};
pub use buffer::GpuBuffer;
pub use context::{GpuContext, GpuContextOptions};
pub use error::{FaceDefect, FacePointerDefect, GpuError, ManifoldDefect, ManifoldDefects, Result};
pub use sparse::{GpuCsc, GpuCsr, GpuSparse};
pub use wgpu;
