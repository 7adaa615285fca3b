//! The rendered image and its PNG encoding.

use std::path::Path;

use crate::error::RenderError;

/// An 8-bit RGBA image, sRGB-encoded, rows from top to bottom.
///
/// # Invariants
/// `pixels.len() == width × height × 4`; pixel `(x, y)` starts at byte
/// `4 (y · width + x)`. The fields are public for easy reading; the PNG
/// writers check the invariant and return [`RenderError::ImageData`] if it
/// was broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height` pixels of 4 bytes (R, G, B, A), row after row.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    /// An image of `width × height` pixels, all `colour`.
    pub fn filled(width: u32, height: u32, colour: [u8; 4]) -> Self {
        let n = width as usize * height as usize;
        Self { width, height, pixels: colour.repeat(n) }
    }

    /// The pixel at column `x`, row `y` (row 0 at the top), or `None`
    /// outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = 4 * (y as usize * self.width as usize + x as usize);
        let p = self.pixels.get(at..at + 4)?;
        Some([p[0], p[1], p[2], p[3]])
    }

    fn check(&self) -> Result<(), RenderError> {
        let expected = self.width as usize * self.height as usize * 4;
        if self.pixels.len() != expected {
            return Err(RenderError::ImageData {
                width: self.width,
                height: self.height,
                expected,
                actual: self.pixels.len(),
            });
        }
        Ok(())
    }

    /// The image as a PNG file (8-bit RGBA, tagged sRGB).
    ///
    /// # Errors
    /// [`RenderError::ImageData`] if the pixel buffer does not match the
    /// size, [`RenderError::Png`] if the encoder fails (for example on an
    /// empty image).
    pub fn to_png_bytes(&self) -> Result<Vec<u8>, RenderError> {
        self.check()?;
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&self.pixels)?;
        writer.finish()?;
        Ok(out)
    }

    /// Writes the image to `path` as a PNG file ([`to_png_bytes`]),
    /// replacing any file there.
    ///
    /// # Errors
    /// As [`to_png_bytes`], and [`RenderError::Io`] naming the path if the
    /// file cannot be written.
    ///
    /// [`to_png_bytes`]: Self::to_png_bytes
    pub fn write_png(&self, path: impl AsRef<Path>) -> Result<(), RenderError> {
        let path = path.as_ref();
        let bytes = self.to_png_bytes()?;
        std::fs::write(path, bytes).map_err(|source| RenderError::Io { path: path.to_path_buf(), source })
    }
}
