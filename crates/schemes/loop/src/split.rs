//! The uniform 1-to-4 triangle split: the topology of one Loop step
//! (Mlakar et al. 2020, Appendix B, "Topology refinement").
//!
//! The split itself is [`Topology::split_triangles`] (vertex, face and edge
//! orders in [`subla_mesh::split_tri`]); this module refuses faces that are
//! not triangles with the scheme's error, as OpenSubdiv's Loop does.

use subla_algebra::Par;
use subla_mesh::Topology;
pub use subla_mesh::TriSplit;
use subla_scheme::Result;

/// `Ok` if every face of `t` is a triangle.
///
/// # Errors
/// [`subla_scheme::SchemeError::NotTriangles`] naming the first face that is not (as
/// OpenSubdiv's Loop, which rejects such meshes).
pub fn check_triangles(t: &Topology) -> Result<()> {
    subla_scheme::check_triangles("loop", t)
}

/// The child faces of a triangle-only `t`, as a flat `12 × faces` vertex
/// list: for a finest level that only needs its faces.
///
/// # Errors
/// As [`split_triangles`].
pub fn split_faces(t: &Topology, par: Par) -> Result<Vec<u32>> {
    check_triangles(t)?;
    Ok(t.split_triangle_faces(par)?)
}

/// The 1-to-4 split of a triangle-only topology.
///
/// # Errors
/// [`subla_scheme::SchemeError::NotTriangles`] for a face that is not a triangle;
/// [`subla_mesh::MeshError::TooLarge`] (as [`subla_scheme::SchemeError::Mesh`]) if a
/// child count does not fit in `u32`.
pub fn split_triangles(t: &Topology, par: Par) -> Result<TriSplit> {
    check_triangles(t)?;
    Ok(t.split_triangles(par)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use subla_scheme::SchemeError;

    #[test]
    fn quads_are_refused_by_name() {
        let t = Topology::build(5, vec![0, 3, 7], vec![0, 1, 2, 1, 3, 4, 2], Par::Seq).unwrap();
        let e = split_triangles(&t, Par::Seq).unwrap_err();
        assert!(
            matches!(
                e,
                SchemeError::NotTriangles { scheme: "loop",
                    ref source } if matches!(**source, subla_mesh::MeshError::NotTriangle { face: 1, order: 4 })
            ),
            "{e}"
        );
    }
}
