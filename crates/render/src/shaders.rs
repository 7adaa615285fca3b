//! The WGSL source (this crate's `shaders/` folder), compiled in with
//! `include_str!`.

/// `render_mesh.wgsl`: the surface (`mesh_vs`, `mesh_fs`: Lambert,
/// two-sided) and the overlay lines as screen-space quads (`line_vs`,
/// `line_fs`).
pub const RENDER_MESH: &str = include_str!("../shaders/render_mesh.wgsl");

#[cfg(test)]
mod tests {
    #[test]
    fn shader_validates_with_naga() {
        subla_gpu::shaders::validate(super::RENDER_MESH).unwrap();
    }
}
