//! The embedded example mesh: what `subla` subdivides when no input file is
//! given.
//!
//! An open box — a cube without its top face — chosen to show what matters
//! in one small mesh: mixed polygons (quads, two pentagons, two triangles),
//! extraordinary vertices (the box corners have valence 3), a semi-sharp
//! crease (sharpness 2 along three bottom edges) and a boundary (the open
//! top, a loop of four edges).
//!
//! ```text
//!        7 ─────── 6          z
//!       ╱│        ╱│          │  y
//!      4 ─────── 5 │          │ ╱
//!      │ 3 ──────│─ 2         │╱
//!      │╱        │╱           └──── x
//!      0 ── 8 ── 1
//! ```

use ndarray::Array2;
use subla_algebra::Par;
use subla_mesh::{MeshBuilder, MeshData};

/// The name used for output files of the embedded mesh.
pub(crate) const NAME: &str = "open-box";

/// The open box with its tags (edge-only boundary interpolation, the
/// default of the OBJ reader).
pub(crate) fn open_box() -> Result<MeshData, String> {
    let positions: [[f64; 3]; 9] = [
        [0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [2.0, 2.0, 0.0],
        [0.0, 2.0, 0.0],
        [0.0, 0.0, 1.5],
        [2.0, 0.0, 1.5],
        [2.0, 2.0, 1.5],
        [0.0, 2.0, 1.5],
        [1.0, 0.0, 0.0],
    ];
    // Counter-clockwise seen from outside; no top face.
    let faces: [&[u32]; 6] = [
        &[0, 3, 2, 1, 8], // bottom (pentagon: 8 splits edge 0–1)
        &[0, 8, 1, 5, 4], // front (pentagon)
        &[1, 2, 6],       // right, two triangles
        &[1, 6, 5],
        &[2, 3, 7, 6], // back
        &[3, 0, 4, 7], // left
    ];
    let mut ptr = vec![0u32];
    let mut verts = Vec::new();
    for f in faces {
        verts.extend_from_slice(f);
        ptr.push(verts.len() as u32);
    }
    let mesh = MeshBuilder::new(positions.len(), ptr, verts)
        .crease(0, 3, 2.0)
        .crease(3, 2, 2.0)
        .crease(2, 1, 2.0)
        .build(Par::Seq)
        .map_err(|e| format!("embedded mesh: {e}"))?;
    let p = Array2::from_shape_vec((positions.len(), 3), positions.iter().flatten().copied().collect())
        .map_err(|e| format!("embedded mesh: {e}"))?;
    MeshData::new(mesh, p).map_err(|e| format!("embedded mesh: {e}"))
}
