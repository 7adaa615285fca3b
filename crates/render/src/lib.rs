//! Offscreen rendering of polygon meshes with wgpu, for pictures of
//! subdivision surfaces and their control cages (`subla render`).
//!
//! ```no_run
//! # fn main() -> Result<(), subla_render::RenderError> {
//! use subla_render::{CageOverlay, MeshView, RenderOptions};
//! let ctx = subla_gpu::GpuContext::new()?;
//! // A unit square in the xy plane.
//! let positions = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
//! let mesh = MeshView::new(&positions[..], &[0, 4], &[0, 1, 2, 3]);
//! let opts = RenderOptions::default().size(320, 240).cage(CageOverlay::from_mesh(&mesh)?);
//! subla_render::render(&ctx, &mesh, &opts)?.write_png("square.png")?;
//! # Ok(()) }
//! ```
//!
//! # Pipeline
//! 1. **Validation** on the host: options, face offsets, every face's size
//!    and vertex indices, finite positions, hole flags, overlay indices;
//!    each error names the face, segment or vertex ([`RenderError`]).
//! 2. **Normalisation**: the data is mapped in `f64` into the unit sphere
//!    about its bounding box's centre, then converted to `f32`, so that
//!    large or far-off coordinates keep their precision. No step of it
//!    overflows or underflows: a mesh with coordinates of `1e300` or of
//!    `1e-300` is drawn as the same mesh at unit size, and the camera only
//!    ever sees the unit sphere.
//! 3. **Triangulation**: each polygon that is not a hole becomes a fan
//!    `(v0, vi, vi+1)`, unrolled into a triangle list of positions and
//!    normals (flat: the polygon's Newell normal; smooth: area-weighted
//!    vertex normals; [`Shading`]). The list is split into vertex buffers
//!    of at most 64 MiB (or the device's `max_buffer_size`, or
//!    [`RenderOptions::max_buffer_bytes`]), one draw each.
//! 4. **Camera**: perspective, looking at the centre from the options'
//!    azimuth and elevation, at the distance where the bounding sphere and a
//!    margin fit the image ([`RenderOptions`]' *Camera* section).
//! 5. **Render pass** into an sRGB colour target and a 32-bit depth
//!    buffer, 4× multisampled and resolved where the device supports it:
//!    the surface first (Lambert with ambient, key light and headlight,
//!    two-sided: a triangle seen from its back is lit with its normal
//!    reversed, so either winding looks right), then the overlays (cage
//!    edges and highlighted creases) as screen-space quads of a width in
//!    pixels, one instance per segment. Overlays are depth-tested with
//!    their endpoints moved slightly towards the eye, so lines on the
//!    surface show and lines behind it are hidden, or drawn on top of
//!    everything ([`OverlayDepth`]).
//! 6. **Readback**: the resolved image is copied to a staging buffer with
//!    rows padded to 256 bytes (wgpu's copy alignment), mapped, and the
//!    padding stripped into an [`RgbaImage`], which writes PNG files with
//!    the `png` crate. An image whose pixels are all the same (nothing was
//!    drawn) is an error, [`RenderError::EmptyPicture`], never a blank
//!    picture, unless [`RenderOptions::allow_empty`] says otherwise.
//!
//! The shader is `shaders/render_mesh.wgsl` ([`shaders::RENDER_MESH`]).
//!
//! # Determinism
//! Rendering the same input twice on one device gives identical bytes.
//! Different devices and drivers rasterise edges differently: compare
//! images across devices with a tolerance.
//!
//! # Errors and panics
//! Nothing here panics on data: bad input, device limits
//! ([`RenderError::ImageSize`] against `max_texture_dimension_2d`,
//! [`RenderError::ImageMemory`] when the device cannot allocate the
//! image's targets, [`RenderError::TooLarge`]), an empty picture
//! ([`RenderError::EmptyPicture`]) and device failures
//! ([`RenderError::Gpu`], captured with wgpu error scopes, wgpu's
//! multi-line reports joined into one line) are errors.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod camera;
pub mod error;
pub mod image;
pub mod mesh;
pub mod options;
mod renderer;
pub mod shaders;

pub use error::RenderError;
pub use image::RgbaImage;
pub use mesh::{CageOverlay, MeshView, Positions};
pub use options::{OverlayDepth, RenderOptions, Shading, UpAxis};
pub use renderer::Renderer;
/// What [`RenderError::FacePointers`] reports, the same type as the device
/// topology build's.
pub use subla_gpu::FacePointerDefect;

use subla_gpu::GpuContext;

/// Renders `mesh` on `ctx` as `opts` says; builds a [`Renderer`] for the
/// call (keep one [`Renderer`] to draw many images).
///
/// # Errors
/// As [`Renderer::render`].
pub fn render(ctx: &GpuContext, mesh: &MeshView<'_>, opts: &RenderOptions) -> Result<RgbaImage, RenderError> {
    Renderer::new(ctx)?.render(mesh, opts)
}
