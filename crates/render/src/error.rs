//! The crate's error type.

use std::path::PathBuf;

use subla_gpu::{FacePointerDefect, GpuError};
use thiserror::Error;

/// Everything that can go wrong while rendering or writing an image: bad
/// input data, a device limit, a device or driver failure, file I/O.
///
/// Nothing in this crate panics on data; every wgpu error is captured and
/// returned as [`RenderError::Gpu`].
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The device, the driver or wgpu failed (validation, out of memory,
    /// device lost, readback).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The image size is zero or over the device's
    /// `max_texture_dimension_2d`.
    #[error("image size {width}×{height} is invalid: each side must be between 1 and {max} on this device")]
    ImageSize {
        /// Requested width in pixels.
        width: u32,
        /// Requested height in pixels.
        height: u32,
        /// The device's `max_texture_dimension_2d`.
        max: u32,
    },
    /// The device could not allocate the image's render targets (colour,
    /// depth and, with multisampling, their multisampled versions): the
    /// image is too large for its memory, although each side is within
    /// `max_texture_dimension_2d`.
    #[error(
        "image size {width}×{height} needs about {} of device memory for its render targets, more than the device could allocate: ask for a smaller image",
        human_bytes(*bytes)
    )]
    ImageMemory {
        /// Requested width in pixels.
        width: u32,
        /// Requested height in pixels.
        height: u32,
        /// Bytes of the targets asked for.
        bytes: u64,
        /// The device's `max_texture_dimension_2d` (which the image's
        /// sides are within).
        max: u32,
    },
    /// Nothing was drawn: every pixel of the image is the background (the
    /// mesh has no drawn face in view, or every face is a hole).
    #[error("nothing was drawn: all {pixels} pixels are the background (no face of the mesh is visible)")]
    EmptyPicture {
        /// Pixels in the image.
        pixels: u64,
    },
    /// A buffer the renderer needs would exceed a device limit.
    #[error("{what} needs {bytes} bytes, over the device limit {limit} = {limit_value}")]
    TooLarge {
        /// What was being created.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
        /// The name of the limit (a field of `wgpu::Limits`).
        limit: &'static str,
        /// Its value.
        limit_value: u64,
    },
    /// Positions have fewer than 2 coordinates per vertex.
    #[error("positions have {columns} columns; at least 2 (x, y, optional z) are needed")]
    PositionColumns {
        /// Columns given.
        columns: usize,
    },
    /// `face_ptr` is not a valid list of face offsets into `face_verts`.
    #[error("invalid face offsets: {defect}")]
    FacePointers {
        /// What is wrong: empty while `face_verts` is not, not starting at
        /// 0, not ending at the length of `face_verts`, or decreasing at a
        /// face (named).
        defect: FacePointerDefect,
    },
    /// A face has fewer than 3 corners.
    #[error("face {face} has {corners} corners; a face needs at least 3")]
    FaceTooSmall {
        /// The face.
        face: usize,
        /// Its number of corners.
        corners: usize,
    },
    /// A face refers to a vertex that does not exist.
    #[error("face {face} refers to vertex {vertex}, but the mesh has {vertices} vertices")]
    FaceIndex {
        /// The face.
        face: usize,
        /// The vertex index found in it.
        vertex: u32,
        /// Number of vertices.
        vertices: usize,
    },
    /// A vertex used by a face or a line has a NaN or infinite coordinate.
    #[error("{what} vertex {vertex} has a non-finite coordinate {position:?}")]
    NonFinite {
        /// `"mesh"` or `"cage"`.
        what: &'static str,
        /// The vertex.
        vertex: usize,
        /// Its coordinates.
        position: [f64; 3],
    },
    /// The hole flags do not have one entry per face.
    #[error("{flags} hole flags given for {faces} faces")]
    HoleFlags {
        /// Number of flags.
        flags: usize,
        /// Number of faces.
        faces: usize,
    },
    /// The texture coordinates do not have one index per face corner.
    #[error("{indices} texture coordinate indices given for {corners} face corners")]
    TexcoordIndices {
        /// Number of indices.
        indices: usize,
        /// Number of face corners.
        corners: usize,
    },
    /// A face corner refers to a texture coordinate that does not exist.
    #[error("face corner {corner} refers to texture coordinate {index}, but there are {values}")]
    TexcoordIndex {
        /// The corner, in the order of the faces' vertices.
        corner: usize,
        /// The index found.
        index: u32,
        /// Number of texture coordinates.
        values: usize,
    },
    /// A line segment (cage edge or crease) refers to a vertex that does not
    /// exist.
    #[error("{what} segment {segment} refers to vertex {vertex}, but there are {vertices} vertices")]
    SegmentIndex {
        /// `"cage"` or `"crease"`.
        what: &'static str,
        /// The segment.
        segment: usize,
        /// The vertex index found in it.
        vertex: u32,
        /// Number of vertices it may refer to.
        vertices: usize,
    },
    /// An option is out of its range.
    #[error("option {option} = {value} is invalid: {expected}")]
    InvalidOption {
        /// The option (a field of [`RenderOptions`](crate::RenderOptions)).
        option: &'static str,
        /// Its value, formatted.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
    /// An [`RgbaImage`](crate::RgbaImage)'s pixel buffer does not match its
    /// size.
    #[error("image of {width}×{height} pixels needs {expected} bytes, has {actual}")]
    ImageData {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// `width × height × 4`.
        expected: usize,
        /// Bytes present.
        actual: usize,
    },
    /// Encoding the PNG failed.
    #[error("PNG encoding failed: {0}")]
    Png(#[from] png::EncodingError),
    /// Creating or writing an image file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// `bytes` for people: `4.8 GiB`, `320 MiB`.
fn human_bytes(bytes: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= 1024.0 * MIB { format!("{:.1} GiB", b / (1024.0 * MIB)) } else { format!("{:.0} MiB", (b / MIB).ceil()) }
}
