//! Pictures: a refined mesh (and optionally its control cage and creases)
//! rendered offscreen with wgpu (`subla-render`) and written as PNG.

use std::path::Path;

use ndarray::ArrayView2;
use subla_gpu::GpuContext;
use subla_mesh::topology::edge_tag;
use subla_mesh::{FaceVarying, Mesh, MeshData};
use subla_render::{CageOverlay, MeshView, RenderOptions, Shading, UpAxis};

/// What to draw besides the surface, and how big.
#[derive(Clone, Debug)]
pub(crate) struct Picture {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) azimuth: f64,
    pub(crate) elevation: f64,
    pub(crate) smooth: bool,
    pub(crate) z_up: bool,
    /// Squares per unit of texture space of a checker drawn from the
    /// texture coordinates (`write_png_textured`).
    pub(crate) checker: Option<f32>,
}

impl Default for Picture {
    fn default() -> Self {
        Picture { width: 800, height: 600, azimuth: 35.0, elevation: 25.0, smooth: true, z_up: false, checker: None }
    }
}

/// Gives the GPU driver a private `XDG_RUNTIME_DIR` when the environment
/// has none (or one that is not an absolute path to a folder): Mesa's
/// Vulkan drivers probe for a Wayland display when the instance is made,
/// and libwayland prints "error: XDG_RUNTIME_DIR is invalid or not set in
/// the environment." to standard error for every probe — a line that is
/// not the tool's and reports nothing wrong with the run. The folder is
/// `<temp>/subla-runtime-<uid>`, made with mode 0700, used only if it is
/// a real folder of this user that no one else can open (else the
/// environment is left as it is). Call it before any wgpu instance is
/// made; a valid `XDG_RUNTIME_DIR` is never changed.
pub(crate) fn quiet_driver_env() {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        static DONE: std::sync::Once = std::sync::Once::new();
        DONE.call_once(|| {
            let valid = std::env::var_os("XDG_RUNTIME_DIR")
                .map(std::path::PathBuf::from)
                .is_some_and(|d| d.is_absolute() && d.is_dir());
            if valid {
                return;
            }
            let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else { return };
            let dir = std::env::temp_dir().join(format!("subla-runtime-{uid}"));
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
            let private = std::fs::symlink_metadata(&dir)
                .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0);
            if private && dir.is_absolute() {
                // SAFETY: called before any wgpu instance (and so any
                // driver thread) exists; the tool's own threads (rayon's
                // workers, the progress bar) do not read or write the
                // environment.
                unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
            }
        });
    }
}

/// The GPU context for rendering, or a message saying how to get one.
pub(crate) fn context() -> Result<&'static GpuContext, String> {
    quiet_driver_env();
    let ctx = GpuContext::new().map_err(|e| {
        format!("rendering needs a GPU adapter (on a machine without a GPU, Mesa's lavapipe works): {e}")
    })?;
    Ok(Box::leak(Box::new(ctx)))
}

/// The sharp edges of `mesh` a user tagged (boundary and non-manifold
/// edges, which the schemes make infinitely sharp, left out).
pub(crate) fn crease_edges(mesh: &Mesh) -> Vec<[u32; 2]> {
    let t = mesh.topology();
    (0..t.num_edges())
        .filter(|&e| {
            mesh.edge_sharpness()[e] > 0.0 && t.edge_tags()[e] & (edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD) == 0
        })
        .map(|e| t.edge(e))
        .collect()
}

/// Renders `mesh` with `positions` (holes left out), with the control cage
/// of `cage` drawn over it, and `creases` (edges of `mesh`) highlighted;
/// writes the PNG to `path`.
pub(crate) fn write_png(
    ctx: &GpuContext,
    mesh: &Mesh,
    positions: ArrayView2<'_, f64>,
    cage: Option<&MeshData>,
    creases: Vec<[u32; 2]>,
    picture: &Picture,
    path: &Path,
) -> Result<(), String> {
    write_png_textured(ctx, mesh, positions, None, cage, creases, picture, path)
}

/// [`write_png`] with texture coordinates (one index per corner of
/// `mesh`'s faces), drawn as a checker when `picture.checker` is set.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_png_textured(
    ctx: &GpuContext,
    mesh: &Mesh,
    positions: ArrayView2<'_, f64>,
    texcoords: Option<&FaceVarying>,
    cage: Option<&MeshData>,
    creases: Vec<[u32; 2]>,
    picture: &Picture,
    path: &Path,
) -> Result<(), String> {
    let t = mesh.topology();
    // Positions are the first three channels; the others (colours, …) are
    // not drawn.
    let positions = positions.slice(ndarray::s![.., ..positions.ncols().min(3)]);
    let uv: Option<Vec<[f64; 2]>> = texcoords.map(|fv| {
        fv.values
            .rows()
            .into_iter()
            .map(|r| [r.get(0).copied().unwrap_or(0.0), r.get(1).copied().unwrap_or(0.0)])
            .collect()
    });
    let mut view = MeshView::new(positions, t.face_ptr(), t.face_verts()).with_holes(mesh.holes());
    if let (Some(uv), Some(fv)) = (&uv, texcoords) {
        view = view.with_texcoords(uv, &fv.indices);
    }
    let mut opts = RenderOptions::default()
        .size(picture.width, picture.height)
        .view(picture.azimuth, picture.elevation)
        .shading(if picture.smooth { Shading::Smooth } else { Shading::Flat })
        .up(if picture.z_up { UpAxis::Z } else { UpAxis::Y })
        .creases(creases);
    if let Some(c) = picture.checker {
        opts = opts.checker(c);
    }
    if let Some(c) = cage {
        let ct = c.mesh.topology();
        let cv = MeshView::new(c.positions(), ct.face_ptr(), ct.face_verts());
        opts = opts.cage(CageOverlay::from_mesh(&cv).map_err(|e| e.to_string())?);
    }
    let image = subla_render::render(ctx, &view, &opts).map_err(|e| e.to_string())?;
    let bytes = image.to_png_bytes().map_err(|e| e.to_string())?;
    crate::output::write_file(path, |w| std::io::Write::write_all(w, &bytes))
}
