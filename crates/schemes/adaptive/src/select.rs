//! Selection as algebra (Mlakar et al. 2020, §5.2): the propagation of a
//! selection through the mesh matrix `M` (`|v| × |f|`, one column per face)
//! and the extraction of the selected part of a mesh and its vertex data.
//!
//! ```text
//!   q = Mᵀ s      (Eq. 16)  faces around the selected vertices
//!   s' = M q     (Eq. 17)  vertices of the selected faces
//!   P' = S P     (Eq. 18)  vertex data of the kept vertices
//!   M' = S M Ŝ   (Eq. 19)  the mesh matrix of the kept faces
//! ```
//! `S` is the identity with the rows of the vertices that are not kept
//! deleted, `Ŝ` the identity with the columns of the faces that are not
//! kept deleted. The products are the algebra crate's mapped SpMV (an
//! action map that turns every stored corner into a 1) and SpGEMM.
//!
//! Sparse refinement ([`crate::sparse`]) uses Eq. 16–17 for its marking:
//! the vertices of the selected faces are `M q`, and the faces that get
//! children (selected, or next to a selected vertex) are the non-zeros of
//! `Mᵀ (M q)`.

use ndarray::{Array2, ArrayView2};
use subla_algebra::spmv::spmv;
use subla_algebra::{CscMat, CscRef, Par, spgemm};

use crate::AdaptiveError;

fn indicator(flags: &[bool]) -> Array2<f32> {
    Array2::from_shape_fn((flags.len(), 1), |(i, _)| if flags[i] { 1.0 } else { 0.0 })
}

/// Eq. 17: the vertices of the faces flagged in `q` (`s = M q`, non-zeros).
///
/// # Panics
/// If `q` does not have one flag per face (column) of `m`.
#[track_caller]
pub fn vertices_of_faces(m: CscRef<'_, u32>, q: &[bool], par: Par) -> Vec<bool> {
    assert_eq!(q.len(), m.ncols(), "one flag per face: {} flags for {} faces", q.len(), m.ncols());
    let y = spmv(m, indicator(q).view(), |_, _, _| 1.0f32, par);
    y.column(0).iter().map(|&x| x > 0.0).collect()
}

/// Eq. 16: the faces around the vertices flagged in `s` (`q = Mᵀ s`,
/// non-zeros).
///
/// # Panics
/// If `s` does not have one flag per vertex (row) of `m`.
#[track_caller]
pub fn faces_around_vertices(m: CscRef<'_, u32>, s: &[bool], par: Par) -> Vec<bool> {
    assert_eq!(s.len(), m.nrows(), "one flag per vertex: {} flags for {} vertices", s.len(), m.nrows());
    let y = spmv(m.transpose(), indicator(s).view(), |_, _, _| 1.0f32, par);
    y.column(0).iter().map(|&x| x > 0.0).collect()
}

/// The identity with the rows of unflagged elements deleted: `|kept| × n`,
/// and the kept elements in order.
fn selection_rows(flags: &[bool]) -> Result<(CscMat<u32>, Vec<u32>), AdaptiveError> {
    let kept: Vec<u32> = (0..flags.len() as u32).filter(|&i| flags[i as usize]).collect();
    let mut ptr = Vec::with_capacity(flags.len() + 1);
    let mut idx = Vec::with_capacity(kept.len());
    ptr.push(0u32);
    let mut row = 0u32;
    for &f in flags {
        if f {
            idx.push(row);
            row += 1;
        }
        ptr.push(idx.len() as u32);
    }
    let n = kept.len();
    Ok((CscMat::try_new(n, flags.len(), ptr, idx, vec![1u32; n])?, kept))
}

/// The extracted part of a mesh: Eq. 18–19.
#[derive(Clone, Debug)]
pub struct Extracted {
    /// `M' = S M Ŝ`: the kept faces (columns) over the kept vertices (rows);
    /// each stored value is the corner's position in its face plus one, as
    /// in `M`.
    pub mesh_matrix: CscMat<u32>,
    /// The kept vertices, in order (row `i` of `M'` is vertex `vertices[i]`).
    pub vertices: Vec<u32>,
    /// The kept faces, in order.
    pub faces: Vec<u32>,
}

/// Eq. 19: the mesh matrix of the faces flagged in `q` over the vertices
/// flagged in `s` (which must hold every vertex of a kept face for the
/// faces to stay whole).
///
/// # Errors
/// [`AdaptiveError::Algebra`] if a product is too large.
///
/// # Panics
/// If the flags do not match `m`'s shape.
#[track_caller]
pub fn extract(m: CscRef<'_, u32>, s: &[bool], q: &[bool], par: Par) -> Result<Extracted, AdaptiveError> {
    assert_eq!(s.len(), m.nrows(), "one vertex flag per row of the mesh matrix");
    assert_eq!(q.len(), m.ncols(), "one face flag per column of the mesh matrix");
    let (sv, vertices) = selection_rows(s)?;
    let (sf, faces) = selection_rows(q)?;
    // Ŝ is the transpose of the face selection rows: |f| × |kept faces|.
    let sf_t = sf.as_ref().transpose().to_csc(par);
    let sm = spgemm::product(sv.as_ref(), m, par)?;
    let mesh_matrix = spgemm::product(sm.as_ref(), sf_t.as_ref(), par)?;
    Ok(Extracted { mesh_matrix, vertices, faces })
}

/// Eq. 18: the rows of `data` of the vertices flagged in `s`.
///
/// # Errors
/// [`AdaptiveError::Algebra`] if the selection cannot be built.
///
/// # Panics
/// If `s` does not have one flag per row of `data`.
#[track_caller]
pub fn extract_data(data: ArrayView2<'_, f64>, s: &[bool], par: Par) -> Result<Array2<f64>, AdaptiveError> {
    assert_eq!(s.len(), data.nrows(), "one flag per row of the vertex data");
    let (sv, _) = selection_rows(s)?;
    Ok(spmv(sv.as_ref(), data, |&w, _, _| f64::from(w), par))
}
