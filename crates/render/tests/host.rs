//! What needs no device: validation of meshes and cages, and PNG output.

mod common;

use common::*;
use subla_render::{CageOverlay, FacePointerDefect, MeshView, RenderError, RgbaImage};

fn gradient(width: u32, height: u32) -> RgbaImage {
    let mut img = RgbaImage::filled(width, height, [0, 0, 0, 255]);
    for (i, p) in img.pixels.chunks_exact_mut(4).enumerate() {
        let (x, y) = (i as u32 % width, i as u32 / width);
        p.copy_from_slice(&[(x * 7) as u8, (y * 11) as u8, ((x + y) * 3) as u8, (255 - x) as u8]);
    }
    img
}

fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info, buf)
}

#[test]
fn png_bytes_decode_to_the_same_pixels() {
    let img = gradient(37, 23);
    let (info, pixels) = decode(&img.to_png_bytes().unwrap());
    assert_eq!((info.width, info.height), (37, 23));
    assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgba, png::BitDepth::Eight));
    assert_eq!(pixels, img.pixels);
    assert_eq!(img.pixel(3, 2), Some([21, 22, 15, 252]));
    assert_eq!(img.pixel(37, 0), None);
}

#[test]
fn png_file_holds_the_png_bytes() {
    let img = gradient(16, 9);
    let dir = std::env::temp_dir().join(format!("subla-render-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gradient.png");
    img.write_png(&path).unwrap();
    let written = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(written, img.to_png_bytes().unwrap());
    assert_eq!(decode(&written).1, img.pixels);
}

#[test]
fn png_errors_name_the_problem() {
    let missing = std::env::temp_dir().join("subla-render-no-such-dir").join("x").join("out.png");
    let err = gradient(4, 4).write_png(&missing).unwrap_err();
    assert!(matches!(&err, RenderError::Io { path, .. } if *path == missing), "{err:?}");
    assert!(err.to_string().contains("out.png"), "{err}");

    let mut short = gradient(4, 4);
    short.pixels.pop();
    let err = short.to_png_bytes().unwrap_err();
    assert!(matches!(err, RenderError::ImageData { expected: 64, actual: 63, .. }), "{err:?}");
}

#[test]
fn validation_names_the_face() {
    let verts = cube_verts();
    MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts).validate().unwrap();

    let mut bad = verts.clone();
    bad[9] = 8;
    let err = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &bad).validate().unwrap_err();
    assert!(matches!(err, RenderError::FaceIndex { face: 2, vertex: 8, vertices: 8 }), "{err:?}");
    assert_eq!(err.to_string(), "face 2 refers to vertex 8, but the mesh has 8 vertices");

    let ptr = [0, 4, 8, 10, 16, 20, 24];
    let err = MeshView::new(&CUBE_POSITIONS[..], &ptr, &verts).validate().unwrap_err();
    assert!(matches!(err, RenderError::FaceTooSmall { face: 2, corners: 2 }), "{err:?}");

    let ptr = [0, 4, 8, 12, 16, 20, 23];
    let err = MeshView::new(&CUBE_POSITIONS[..], &ptr, &verts).validate().unwrap_err();
    assert!(
        matches!(err, RenderError::FacePointers { defect: FacePointerDefect::End { last: 23, corners: 24 } }),
        "{err:?}"
    );

    let ptr = [0, 4, 8, 7, 16, 20, 24];
    let err = MeshView::new(&CUBE_POSITIONS[..], &ptr, &verts).validate().unwrap_err();
    let decreases = FacePointerDefect::Decreases { face: 2, start: 8, end: 7 };
    assert!(matches!(err, RenderError::FacePointers { defect } if defect == decreases), "{err:?}");

    let ptr = [1, 4, 8, 12, 16, 20, 24];
    let err = MeshView::new(&CUBE_POSITIONS[..], &ptr, &verts).validate().unwrap_err();
    assert!(matches!(err, RenderError::FacePointers { defect: FacePointerDefect::Start { first: 1 } }), "{err:?}");

    let err = MeshView::new(&CUBE_POSITIONS[..], &[], &verts).validate().unwrap_err();
    assert!(matches!(err, RenderError::FacePointers { defect: FacePointerDefect::Empty { corners: 24 } }), "{err:?}");

    let mut nan = CUBE_POSITIONS;
    nan[6][1] = f64::NAN;
    let err = MeshView::new(&nan[..], &CUBE_PTR, &verts).validate().unwrap_err();
    assert!(matches!(err, RenderError::NonFinite { what: "mesh", vertex: 6, .. }), "{err:?}");

    let flat = ndarray::Array2::<f64>::zeros((8, 1));
    let err = MeshView::new(&flat, &CUBE_PTR, &verts).validate().unwrap_err();
    assert!(matches!(err, RenderError::PositionColumns { columns: 1 }), "{err:?}");
}

/// Texture coordinates need one index per corner, each in range; the
/// error names the corner.
#[test]
fn texture_coordinate_errors_name_the_corner() {
    let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let (ptr, verts) = ([0u32, 3], [0u32, 1, 2]);
    let uv = [[0.0, 0.0], [1.0, 0.0]];
    let m = MeshView::new(&pos[..], &ptr, &verts);
    assert!(m.with_texcoords(&uv, &[0, 1, 1]).validate().is_ok());
    assert!(matches!(
        m.with_texcoords(&uv, &[0, 1]).validate(),
        Err(RenderError::TexcoordIndices { indices: 2, corners: 3 })
    ));
    assert!(matches!(
        m.with_texcoords(&uv, &[0, 2, 1]).validate(),
        Err(RenderError::TexcoordIndex { corner: 1, index: 2, values: 2 })
    ));
}

#[test]
fn cage_from_mesh_lists_each_edge_once() {
    // Two quads sharing the edge 1-2.
    let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0]];
    let mesh = MeshView::new(&p[..], &[0, 4, 8], &[0, 1, 2, 3, 1, 4, 5, 2]);
    let cage = CageOverlay::from_mesh(&mesh).unwrap();
    assert_eq!(cage.edges, [[0, 1], [1, 2], [2, 3], [3, 0], [1, 4], [4, 5], [5, 2]]);
    assert_eq!(cage.positions, p);
}
