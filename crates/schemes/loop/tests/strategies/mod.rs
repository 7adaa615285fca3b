//! Strategies for triangle meshes with creases, corners, holes and
//! random options, shared by the Loop test files.

use proptest::collection::vec;
use proptest::prelude::*;
use subla_algebra::Par;
use subla_mesh::proptest_support::{options, triangle_mesh};
use subla_mesh::{MeshBuilder, MeshData};

/// Edge sharpness: mostly 0, often semi-sharp, sometimes infinitely sharp.
fn edge_sharpness() -> impl Strategy<Value = f32> {
    prop_oneof![
        10 => Just(0.0f32),
        3 => 0.01f32..9.99,
        2 => (1u8..20).prop_map(|k| f32::from(k) / 2.0),
        1 => Just(10.0f32),
        1 => Just(f32::INFINITY),
    ]
}

/// Vertex sharpness: mostly 0.
fn vertex_sharpness() -> impl Strategy<Value = f32> {
    prop_oneof![
        12 => Just(0.0f32),
        2 => 0.01f32..9.99,
        1 => (1u8..20).prop_map(|k| f32::from(k) / 2.0),
        1 => Just(10.0f32),
    ]
}

/// Triangle meshes (closed and open) with random creases, corners, a few
/// holes and random options (every boundary mode, both crease methods).
pub(crate) fn triangle_mesh_with_creases() -> impl Strategy<Value = MeshData> {
    triangle_mesh()
        .prop_flat_map(|d| {
            let t = d.mesh.topology();
            let (ne, nv, nf) = (t.num_edges(), t.num_vertices(), t.num_faces());
            (
                Just(d),
                vec(edge_sharpness(), ne),
                vec(vertex_sharpness(), nv),
                vec(prop::bool::weighted(0.03), nf),
                options(),
            )
        })
        .prop_map(|(d, es, vs, holes, opts)| {
            let t = d.mesh.topology();
            let mut b =
                MeshBuilder::new(t.num_vertices(), t.face_ptr().to_vec(), t.face_verts().to_vec()).options(opts);
            for (e, &s) in es.iter().enumerate() {
                if s != 0.0 {
                    let [a, c] = t.edge(e);
                    b = b.crease(a, c, s);
                }
            }
            for (v, &s) in vs.iter().enumerate() {
                if s != 0.0 {
                    b = b.corner(v as u32, s);
                }
            }
            for (f, &h) in holes.iter().enumerate() {
                if h {
                    b = b.hole(f as u32);
                }
            }
            MeshData { mesh: b.build(Par::Seq).unwrap(), ..d }
        })
}

pub(crate) fn any_triangle_mesh() -> impl Strategy<Value = MeshData> {
    prop_oneof![triangle_mesh(), triangle_mesh_with_creases()]
}
