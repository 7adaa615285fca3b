//! Shapes and image measures shared by the tests.
#![allow(dead_code)]

use subla_render::RgbaImage;

/// Corners of the cube `[-1, 1]³`.
pub(crate) const CUBE_POSITIONS: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

/// Faces `+x, +y, +z, −x, −y, −z`, counter-clockwise seen from outside.
pub(crate) const CUBE_FACES: [[u32; 4]; 6] =
    [[1, 2, 6, 5], [3, 7, 6, 2], [4, 5, 6, 7], [0, 4, 7, 3], [0, 1, 5, 4], [0, 3, 2, 1]];

/// Index of the `+z` face (seen at the default view, as are `+x` and `+y`).
pub(crate) const FRONT_FACE: usize = 2;

pub(crate) const CUBE_PTR: [u32; 7] = [0, 4, 8, 12, 16, 20, 24];

pub(crate) fn cube_verts() -> Vec<u32> {
    CUBE_FACES.iter().flatten().copied().collect()
}

pub(crate) fn cube_verts_reversed() -> Vec<u32> {
    CUBE_FACES.iter().flat_map(|f| f.iter().rev().copied()).collect()
}

/// Pixels that differ from `background`.
pub(crate) fn foreground(img: &RgbaImage, background: [u8; 4]) -> Vec<(u32, u32, [u8; 4])> {
    let mut out = Vec::new();
    for y in 0..img.height {
        for x in 0..img.width {
            let p = img.pixel(x, y).unwrap();
            if p != background {
                out.push((x, y, p));
            }
        }
    }
    out
}

/// Number of pixels where two images of one size differ.
pub(crate) fn differing_pixels(a: &RgbaImage, b: &RgbaImage) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height));
    a.pixels.chunks_exact(4).zip(b.pixels.chunks_exact(4)).filter(|(p, q)| p != q).count()
}

/// Rec. 709 luma of an sRGB pixel, 0..255.
pub(crate) fn luma(p: [u8; 4]) -> f64 {
    0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2])
}
