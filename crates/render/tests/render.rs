//! Rendering on a device (lavapipe in CI): a cube at 128×96 and small
//! variations of it. Skips where no adapter exists, unless
//! `SUBLA_REQUIRE_GPU=1`.

mod common;

use std::collections::HashMap;
use std::sync::OnceLock;

use common::*;
use subla_render::{
    CageOverlay, MeshView, OverlayDepth, RenderError, RenderOptions, Renderer, RgbaImage, Shading, UpAxis,
};

const W: u32 = 128;
const H: u32 = 96;
const WHITE: [u8; 4] = [255, 255, 255, 255];

/// One renderer for the whole binary: pipelines compile once.
fn renderer() -> Option<&'static Renderer<'static>> {
    static RENDERER: OnceLock<Renderer<'static>> = OnceLock::new();
    let ctx = subla_gpu::testing::context_or_skip()?;
    Some(RENDERER.get_or_init(|| Renderer::new(ctx).expect("the renderer builds on a working device")))
}

fn opts() -> RenderOptions {
    RenderOptions::default().size(W, H)
}

fn cube(r: &Renderer<'_>, opts: &RenderOptions) -> RgbaImage {
    let verts = cube_verts();
    r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts), opts).unwrap()
}

#[test]
fn cube_fills_a_sane_centred_part_of_the_image() {
    let Some(r) = renderer() else { return };
    let img = cube(r, &opts());
    assert_eq!((img.width, img.height), (W, H));
    assert_eq!(img.pixels.len(), (W * H * 4) as usize);
    let fg = foreground(&img, WHITE);
    let fraction = fg.len() as f64 / f64::from(W * H);
    assert!((0.08..0.6).contains(&fraction), "object covers {fraction} of the image");
    let (x0, x1) = (fg.iter().map(|p| p.0).min().unwrap(), fg.iter().map(|p| p.0).max().unwrap());
    let (y0, y1) = (fg.iter().map(|p| p.1).min().unwrap(), fg.iter().map(|p| p.1).max().unwrap());
    assert!(x0 > 0 && y0 > 0 && x1 < W - 1 && y1 < H - 1, "the margin keeps the object off the border");
    let cx = f64::from(x0 + x1) / 2.0 - f64::from(W - 1) / 2.0;
    let cy = f64::from(y0 + y1) / 2.0 - f64::from(H - 1) / 2.0;
    assert!(cx.abs() < 0.1 * f64::from(W) && cy.abs() < 0.1 * f64::from(H), "off centre by ({cx}, {cy})");
    // The cube is taller than the margin alone: the fit uses the image.
    assert!(y1 - y0 > H / 2, "cube spans rows {y0}..{y1}");
}

#[test]
fn flat_cube_at_three_quarter_view_shows_three_face_brightnesses() {
    let Some(r) = renderer() else { return };
    let img = cube(r, &opts());
    let fg = foreground(&img, WHITE);
    let mut counts: HashMap<[u8; 4], usize> = HashMap::new();
    for &(_, _, p) in &fg {
        *counts.entry(p).or_default() += 1;
    }
    // Flat faces under directional lights are uniform: keep colours that
    // cover a face, not the antialiased edges.
    let mut faces: Vec<f64> = counts.iter().filter(|&(_, &n)| n * 20 >= fg.len()).map(|(&p, _)| luma(p)).collect();
    faces.sort_by(f64::total_cmp);
    assert_eq!(faces.len(), 3, "three visible faces, each one colour: {counts:?}");
    for pair in faces.windows(2) {
        assert!(pair[1] - pair[0] > 8.0, "face brightnesses too close: {faces:?}");
    }
}

#[test]
fn smooth_shading_differs_from_flat_and_varies_across_faces() {
    let Some(r) = renderer() else { return };
    let flat = cube(r, &opts());
    let smooth = cube(r, &opts().shading(Shading::Smooth));
    assert_eq!(foreground(&flat, WHITE).len(), foreground(&smooth, WHITE).len(), "same silhouette");
    assert!(differing_pixels(&flat, &smooth) > 500);
    let distinct: std::collections::HashSet<[u8; 4]> =
        foreground(&smooth, WHITE).into_iter().map(|(_, _, p)| p).collect();
    assert!(distinct.len() > 20, "smooth normals give gradients, got {} colours", distinct.len());
}

#[test]
fn cage_overlay_changes_pixels_in_its_colour() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let mesh = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts);
    let plain = r.render(&mesh, &opts()).unwrap();
    let cage = CageOverlay::from_mesh(&mesh).unwrap();
    assert_eq!(cage.edges.len(), 12);
    let colour = [0, 0, 0, 255];
    let mut o = opts().cage(cage);
    o.cage_colour = colour;
    let tested = r.render(&mesh, &o).unwrap();
    let changed = differing_pixels(&plain, &tested);
    assert!(changed > 100, "the cage changed only {changed} pixels");
    let dark = tested.pixels.chunks_exact(4).filter(|p| p[0] < 30 && p[1] < 30 && p[2] < 30).count();
    assert!(dark > 50, "only {dark} pixels in the cage colour");

    // On top, the three hidden edges show too.
    let on_top = r.render(&mesh, &o.clone().overlay_depth(OverlayDepth::OnTop)).unwrap();
    let hidden = differing_pixels(&tested, &on_top);
    assert!(hidden > 20, "hidden edges drawn on top changed only {hidden} pixels");
}

#[test]
fn creases_are_drawn_in_the_crease_colour() {
    let Some(r) = renderer() else { return };
    let mut o = opts().creases(vec![[6, 7], [6, 5], [6, 2]]);
    o.crease_colour = [255, 0, 0, 255];
    let img = cube(r, &o);
    let red = img.pixels.chunks_exact(4).filter(|p| p[0] > 200 && p[1] < 60 && p[2] < 60).count();
    assert!(red > 60, "only {red} red pixels");
}

#[test]
fn hole_faces_are_not_drawn() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let full = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts), &opts()).unwrap();

    let all = [true; 6];
    let holes = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts).with_holes(&all);
    let none = r.render(&holes, &opts().allow_empty(true)).unwrap();
    assert_eq!(none, RgbaImage::filled(W, H, WHITE), "every face a hole: nothing drawn");
    let err = r.render(&holes, &opts());
    assert!(matches!(err, Err(RenderError::EmptyPicture { pixels }) if pixels == u64::from(W * H)), "{err:?}");

    let mut front = [false; 6];
    front[FRONT_FACE] = true;
    let open = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts).with_holes(&front), &opts()).unwrap();
    // Same framing (holes count for the camera), inside now visible.
    assert_eq!(foreground(&open, WHITE).len(), foreground(&full, WHITE).len());
    assert!(differing_pixels(&full, &open) > 500);

    let wrong = [false; 5];
    let err = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts).with_holes(&wrong), &opts());
    assert!(matches!(err, Err(RenderError::HoleFlags { flags: 5, faces: 6 })), "{err:?}");
}

#[test]
fn inverted_winding_looks_the_same_with_two_sided_lighting() {
    let Some(r) = renderer() else { return };
    let img = cube(r, &opts());
    let reversed = cube_verts_reversed();
    let inv = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &reversed), &opts()).unwrap();
    // Rasterisation may assign a few edge pixels differently.
    let diff = differing_pixels(&img, &inv);
    assert!(diff * 100 < (W * H) as usize, "{diff} pixels differ");
}

#[test]
fn a_bad_index_is_an_error_naming_the_face() {
    let Some(r) = renderer() else { return };
    let mut verts = cube_verts();
    verts[4 * 3 + 2] = 99;
    let err = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts), &opts()).unwrap_err();
    assert!(matches!(err, RenderError::FaceIndex { face: 3, vertex: 99, vertices: 8 }), "{err:?}");
    assert!(err.to_string().contains("face 3"), "{err}");

    let verts = cube_verts();
    let mesh = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts);
    let err = r.render(&mesh, &opts().creases(vec![[0, 1], [2, 8]])).unwrap_err();
    assert!(matches!(err, RenderError::SegmentIndex { what: "crease", segment: 1, vertex: 8, .. }), "{err:?}");
    let err = r.render(&mesh, &opts().cage(CageOverlay::new(vec![[0.0; 3]], vec![[0, 1]]))).unwrap_err();
    assert!(matches!(err, RenderError::SegmentIndex { what: "cage", segment: 0, vertex: 1, .. }), "{err:?}");
}

#[test]
fn image_size_is_checked_against_the_device() {
    let Some(r) = renderer() else { return };
    let max = r.context().limits().max_texture_dimension_2d;
    for (w, h) in [(0, 10), (10, 0), (max + 1, 8), (8, max + 1)] {
        let err = cube_result(r, &opts().size(w, h));
        assert!(matches!(err, Err(RenderError::ImageSize { max: m, .. }) if m == max), "{w}×{h}: {err:?}");
    }
    let err = cube_result(r, &opts().view(0.0, 90.0));
    assert!(matches!(err, Err(RenderError::InvalidOption { option: "elevation_deg", .. })), "{err:?}");
}

/// The cube scaled so far up or down that squaring a coordinate overflows
/// or underflows `f64`, drawn like the unit cube (regression: blank
/// pictures, returned as success).
#[test]
fn huge_and_tiny_cubes_render_like_the_unit_cube() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let unit = r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts), &opts()).unwrap();
    for s in [1e160, 1e300, 1e-210, 1e-300] {
        let p: Vec<[f64; 3]> = CUBE_POSITIONS.iter().map(|c| c.map(|x| x * s)).collect();
        let img = r.render(&MeshView::new(&p, &CUBE_PTR, &verts), &opts()).unwrap();
        let diff = differing_pixels(&unit, &img);
        assert!(diff * 50 < (W * H) as usize, "scale {s:e}: {diff} pixels differ from the unit cube");
    }
}

/// An image whose targets the device cannot allocate is a one-line typed
/// error, not wgpu's multi-line report (each side may well be within the
/// device's largest texture).
#[test]
fn an_image_too_large_for_the_device_memory_is_a_typed_error() {
    let Some(r) = renderer() else { return };
    // A software device fails to allocate at once; a real GPU might draw
    // it, slowly.
    if r.context().adapter_info().device_type != subla_gpu::wgpu::DeviceType::Cpu {
        return;
    }
    let max = r.context().limits().max_texture_dimension_2d;
    let side = max.min(16384);
    match cube_result(r, &opts().size(side, side)) {
        Ok(_) => eprintln!("the device drew {side}×{side}: nothing to check"),
        Err(e @ RenderError::ImageMemory { .. }) => assert!(!e.to_string().contains('\n'), "{e}"),
        Err(e @ RenderError::TooLarge { .. }) => assert!(!e.to_string().contains('\n'), "{e}"),
        Err(e) => panic!("{side}×{side}: {e:?}"),
    }
}

fn cube_result(r: &Renderer<'_>, opts: &RenderOptions) -> Result<RgbaImage, RenderError> {
    let verts = cube_verts();
    r.render(&MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts), opts)
}

#[test]
fn two_renders_give_identical_bytes() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let mesh = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts);
    let o = opts().cage(CageOverlay::from_mesh(&mesh).unwrap()).creases(vec![[6, 7]]);
    let a = r.render(&mesh, &o).unwrap();
    let b = r.render(&mesh, &o).unwrap();
    assert!(a.pixels == b.pixels, "renders differ in {} pixels", differing_pixels(&a, &b));
    // The free function builds its own renderer and agrees.
    let ctx = r.context();
    let c = subla_render::render(ctx, &mesh, &o).unwrap();
    assert!(a.pixels == c.pixels);
}

#[test]
fn split_vertex_buffers_draw_the_same_image() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let mesh = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts);
    let o = opts().cage(CageOverlay::from_mesh(&mesh).unwrap());
    let whole = r.render(&mesh, &o).unwrap();
    // One triangle (72 bytes) and one segment (44 bytes) per buffer.
    let split = r.render(&mesh, &o.clone().max_buffer_bytes(72)).unwrap();
    assert!(whole.pixels == split.pixels, "{} pixels differ", differing_pixels(&whole, &split));
}

#[test]
fn position_layouts_render_alike() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let f64_rows = cube(r, &opts());
    let array = ndarray::Array2::from_shape_fn((8, 4), |(i, j)| if j < 3 { CUBE_POSITIONS[i][j] } else { 7.0 });
    let from_array = r.render(&MeshView::new(&array, &CUBE_PTR, &verts), &opts()).unwrap();
    let f32_rows: Vec<[f32; 3]> = CUBE_POSITIONS.iter().map(|p| p.map(|c| c as f32)).collect();
    let from_f32 = r.render(&MeshView::new(&f32_rows, &CUBE_PTR, &verts), &opts()).unwrap();
    assert!(f64_rows == from_array && f64_rows == from_f32);

    // Far from the origin and scaled: normalised away.
    let shifted: Vec<[f64; 3]> = CUBE_POSITIONS.iter().map(|p| p.map(|c| 1e6 + 1e3 * c)).collect();
    let far = r.render(&MeshView::new(&shifted, &CUBE_PTR, &verts), &opts()).unwrap();
    let diff = differing_pixels(&f64_rows, &far);
    assert!(diff * 100 < (W * H) as usize, "{diff} pixels differ");
}

#[test]
fn polygons_of_any_order_are_fanned() {
    let Some(r) = renderer() else { return };
    // A hexagonal prism: two hexagons and six quads, plus a triangle fan
    // roof made of one triangle per side.
    let mut p = Vec::new();
    for z in [-1.0, 1.0] {
        for k in 0..6 {
            let a = std::f64::consts::PI / 3.0 * f64::from(k);
            p.push([a.cos(), a.sin(), z]);
        }
    }
    p.push([0.0, 0.0, 1.8]);
    let mut ptr = vec![0u32];
    let mut verts = Vec::new();
    let mut face = |f: &[u32]| {
        verts.extend_from_slice(f);
        ptr.push(verts.len() as u32);
    };
    face(&[5, 4, 3, 2, 1, 0]);
    for k in 0..6 {
        let n = (k + 1) % 6;
        face(&[k, n, n + 6, k + 6]);
        face(&[k + 6, n + 6, 12]);
    }
    let mesh = MeshView::new(&p, &ptr, &verts);
    let img = r.render(&mesh, &opts().up(UpAxis::Z)).unwrap();
    let fg = foreground(&img, WHITE);
    let fraction = fg.len() as f64 / f64::from(W * H);
    assert!((0.05..0.6).contains(&fraction), "prism covers {fraction}");
    // Z up: the apex (z = 1.8) is the topmost point on screen, near the
    // middle column.
    let top = fg.iter().min_by_key(|p| p.1).unwrap();
    assert!((f64::from(top.0) - f64::from(W) / 2.0).abs() < f64::from(W) / 6.0, "apex at {top:?}");
}

#[test]
fn empty_mesh_and_custom_background() {
    let Some(r) = renderer() else { return };
    let grey = [90, 140, 200, 255];
    let none: [[f64; 3]; 0] = [];
    let empty = MeshView::new(&none[..], &[], &[]);
    let img = r.render(&empty, &opts().background(grey).allow_empty(true)).unwrap();
    assert_eq!(img, RgbaImage::filled(W, H, grey));
    // Nothing drawn is an error unless allowed.
    let err = r.render(&empty, &opts().background(grey));
    assert!(matches!(err, Err(RenderError::EmptyPicture { .. })), "{err:?}");
    let transparent = [0, 0, 0, 0];
    let img = cube(r, &opts().background(transparent));
    assert_eq!(img.pixel(0, 0), Some(transparent));
    assert!(img.pixel(W / 2, H / 2).is_some_and(|p| p[3] == 255));
}

#[test]
fn without_msaa_edges_are_hard() {
    let Some(r) = renderer() else { return };
    let hard = cube(r, &opts().msaa(false));
    let colours: std::collections::HashSet<[u8; 4]> =
        hard.pixels.chunks_exact(4).map(|p| p.try_into().unwrap()).collect();
    assert_eq!(colours.len(), 4, "background and three faces, no blends: {colours:?}");
    if r.sample_count(true) > 1 {
        let soft = cube(r, &opts());
        assert!(differing_pixels(&hard, &soft) > 0);
    }
}

#[test]
fn rendered_png_round_trips() {
    let Some(r) = renderer() else { return };
    let img = cube(r, &opts());
    let bytes = img.to_png_bytes().unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (W, H));
    assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgba, png::BitDepth::Eight));
    assert!(buf[..info.buffer_size()] == img.pixels[..]);
}

/// A checker from texture coordinates: each face of the cube maps the unit
/// square, so with two squares per unit every visible face shows dark
/// (warm) and light (the surface colour) squares; without the option, or
/// without texture coordinates, none is warm.
#[test]
fn checker_draws_squares_from_the_texture_coordinates() {
    let Some(r) = renderer() else { return };
    let verts = cube_verts();
    let uv = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let indices: Vec<u32> = (0..verts.len() as u32).map(|c| c % 4).collect();
    let mesh = MeshView::new(&CUBE_POSITIONS[..], &CUBE_PTR, &verts).with_texcoords(&uv, &indices);
    let warm = |img: &RgbaImage| {
        let fg = foreground(img, WHITE);
        let n = fg.iter().filter(|&&(_, _, p)| p[0] > p[2]).count();
        n as f64 / fg.len() as f64
    };
    let checked = r.render(&mesh, &opts().checker(2.0)).unwrap();
    let f = warm(&checked);
    assert!((0.2..0.8).contains(&f), "warm squares cover {f} of the cube");
    assert_eq!(warm(&r.render(&mesh, &opts()).unwrap()), 0.0, "no checker unless asked");
    assert_eq!(warm(&cube(r, &opts().checker(2.0))), 0.0, "no texture coordinates, no checker");
    let bad = opts().checker(f32::NAN);
    assert!(matches!(r.render(&mesh, &bad), Err(RenderError::InvalidOption { option: "checker", .. })));
}
