//! Helper matrices of triangle meshes, as mapped products of the mesh
//! matrix `M` (`V × F`, entry = the 1-based position of the vertex in the
//! face; Mlakar et al. 2020, §3–4): what the algebra paths of Loop and √3
//! are built from, public for schemes of one's own.
//!
//! | matrix | product | entry `(i, j)` |
//! |---|---|---|
//! | [`directed_edge_faces`] `F` | `M Mᵀ {Q₃}[k]` (Eq. 6–7) | the triangle holding the directed edge `i → j` |
//! | [`opposite_vertices`] `G` | `M Mᵀ {Q₃}[third]` (Eq. 30) | the vertex of that triangle opposite `i → j` |
//!
//! `Q₃(a, b)` keeps the collisions where position `b` follows position `a`
//! in the triangle (1 → 2 → 3 → 1); each collision sees the triangle `k`
//! through the product's lambda. A boundary edge appears once (the
//! direction its triangle traverses), an interior edge twice. Both are
//! returned as CSR, row `i` the edges leaving vertex `i`.
//!
//! ```
//! use subla_algebra::Par;
//! use subla_mesh::{matrices, shapes};
//! let d = shapes::tetrahedron();
//! let t = d.mesh.topology();
//! let g = matrices::opposite_vertices(t, Par::Seq)?;
//! // Face 0 is (0, 1, 2): the vertex opposite 0 → 1 is 2.
//! assert_eq!(g.as_ref().get(0, 1), Some(&2));
//! let f = matrices::directed_edge_faces(t, Par::Seq)?;
//! assert_eq!(f.as_ref().get(0, 1), Some(&0));
//! assert_eq!(f.nnz(), 12); // every edge both ways
//! # Ok::<(), subla_mesh::MeshError>(())
//! ```

use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::{CscMat, CsrMat, Par};

use crate::error::{MeshError, Result};
use crate::topology::Topology;

/// `Q₃(a, b)`: position `b` follows position `a` in a triangle (1-based).
#[inline]
fn q3(a: u32, b: u32) -> bool {
    b == a % 3 + 1
}

/// Triangles only.
fn check_triangles(t: &Topology) -> Result<()> {
    match (0..t.num_faces()).find(|&f| t.face(f).len() != 3) {
        Some(face) => Err(MeshError::NotTriangle { face, order: t.face(face).len() }),
        None => Ok(()),
    }
}

/// `M Mᵀ {Q₃}[λ]` with `λ(k, a, b)`, each value with the triangles that
/// gave it (the first, the count): a directed edge held by two triangles is
/// [`MeshError::InconsistentOrientation`] naming them.
fn directed_product(t: &Topology, par: Par, lambda: impl Fn(u32, u32, u32) -> u32 + Sync) -> Result<CsrMat<u32>> {
    check_triangles(t)?;
    let m = t.mesh_matrix()?;
    let mt: CscMat<u32> = m.to_csr(par).into_transpose();
    let product = spgemm::multiply(
        m.as_ref(),
        mt.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), c: &Collision<'_, u32, u32>| q3(a, b).then(|| (lambda(c.k, a, b), c.k, c.k)),
        )
        .reduce(|(v, first, _): (u32, u32, u32), (_, _, other): (u32, u32, u32)| (v, first, other)),
        par,
    )?
    .to_csr(par);
    if let Some((i, j, &(_, a, b))) = product.as_ref().iter().find(|&(_, _, &(_, a, b))| a != b) {
        return Err(MeshError::InconsistentOrientation { v0: i, v1: j, face_a: a, face_b: b });
    }
    Ok(product.map_values(|(v, _, _)| v))
}

/// `F` (Eq. 6–7): `F(i, j)` is the triangle holding the directed edge
/// `i → j`.
///
/// # Errors
/// [`MeshError::NotTriangle`] naming the first other face;
/// [`MeshError::RepeatedVertex`] for a face that uses a vertex twice (the
/// mesh matrix cannot hold it); [`MeshError::InconsistentOrientation`]
/// naming two triangles that traverse an edge the same way; size overflow.
pub fn directed_edge_faces(t: &Topology, par: Par) -> Result<CsrMat<u32>> {
    directed_product(t, par, |k, _, _| k)
}

/// `G` (Eq. 30): `G(i, j)` is the vertex of the triangle holding the
/// directed edge `i → j` that is opposite it.
///
/// # Errors
/// As [`directed_edge_faces`].
pub fn opposite_vertices(t: &Topology, par: Par) -> Result<CsrMat<u32>> {
    directed_product(t, par, |k, a, b| {
        // The triangle's vertex at the position that is neither a nor b.
        let face = t.face(k as usize);
        face[(6 - a - b - 1) as usize]
    })
}
