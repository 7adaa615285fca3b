//! Shaders with several entry points whose globals each have their own
//! binding (`quad_split.wgsl`, `catmark_masks.wgsl`, `topology_build.wgsl`):
//! `subla_gpu::program` compiles one pipeline per entry point and binds
//! exactly the bindings each uses.

pub(crate) use subla_gpu::program::{Kernel, compile, dispatch, dispatch_timed};
