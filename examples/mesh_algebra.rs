//! The mapped algebra on a cube: valences, face points, the edge matrix E of
//! Mlakar et al. 2020 (Eq. 4) and its edge numbering, and the face matrix F
//! (Eq. 6-7).
//!
//! Run with `cargo run --release --example mesh_algebra`.

use ndarray::{Array2, array};
use subla::algebra::scan::enumerate_nonzeros;
use subla::algebra::spgemm::{self, Collision, Ops};
use subla::algebra::spmv::{spmv_csc, spmv_csr};
use subla::{AlgebraError, CscMat, Par};

/// Position of `a` in its face of order `c` follows `b` cyclically
/// (the circulant map Q_c of Eq. 5).
fn q(a: u32, b: u32, c: u32) -> bool {
    b == a % c + 1
}

fn main() -> Result<(), AlgebraError> {
    // Unit cube: 8 vertices, 6 quads, counter-clockwise seen from outside.
    let faces: [[usize; 4]; 6] = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
    let p: Array2<f64> = array![
        [0., 0., 0.],
        [1., 0., 0.],
        [1., 1., 0.],
        [0., 1., 0.],
        [0., 0., 1.],
        [1., 0., 1.],
        [1., 1., 1.],
        [0., 1., 1.]
    ];
    // Mesh matrix M: |v| x |f|, value = 1-based corner position.
    let triplets: Vec<(usize, usize, u32)> = faces
        .iter()
        .enumerate()
        .flat_map(|(f, vs)| vs.iter().enumerate().map(move |(k, &v)| (v, f, k as u32 + 1)))
        .collect();
    let m = CscMat::try_from_triplets(8, faces.len(), &triplets)?;
    let par = Par::Rayon;

    // Eq. 10: valences n = M 1; Eq. 2: face orders c = M^T 1.
    let n = spmv_csc(m.as_ref(), Array2::ones((m.ncols(), 1)).view(), |_, _, _| 1u32, par);
    let mt = m.as_ref().transpose();
    let c = spmv_csr(mt, Array2::ones((m.nrows(), 1)).view(), |_, _, _| 1u32, par);
    // Eq. 3: face points f = M^T P with val -> 1/c_i.
    let f = spmv_csr(mt, p.view(), |_, face, _| 1.0 / f64::from(c[(face as usize, 0)]), par);

    // Eq. 4: E = M M^T {Q_c + Q_c^-1}[tau]: entries where i and j are
    // consecutive in a face, valued by the number of faces they share.
    let order = |face: u32| c[(face as usize, 0)];
    let mtc = m.to_csr(par).into_transpose(); // CSC storage of M^T
    let e = spgemm::multiply(
        m.as_ref(),
        mtc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| {
                let cf = order(col.k);
                (q(a, b, cf) || q(b, a, cf)).then_some(1u32)
            },
        ),
        par,
    )?;
    // §4.1: edge ids from the lower triangle of E.
    let edges = enumerate_nonzeros(e.as_ref(), |i, j, _| i > j, par);
    // Eq. 6-7: F(i, j) = the face holding the directed edge i -> j.
    let fm = spgemm::multiply(
        m.as_ref(),
        mtc.as_ref(),
        &Ops::new(
            |a: &u32, b: &u32| (*a, *b),
            |(a, b), col: &Collision<'_, u32, u32>| q(a, b, order(col.k)).then_some(col.k),
        ),
        par,
    )?;

    println!("cube: {} vertices, {} faces", m.nrows(), m.ncols());
    println!("valences n = {:?}", n.column(0).to_vec());
    println!("face points f =\n{f}");
    println!("E: {} nonzeros, {} unique edges (lower triangle)", e.nnz(), edges.count);
    for (pos, (i, j, shared)) in e.as_ref().iter().enumerate() {
        if let Some(id) = edges.id(pos) {
            let left = fm.as_ref().get(i as usize, j as usize);
            let right = fm.as_ref().get(j as usize, i as usize);
            println!("  edge {id:2}: ({i}, {j}) shared by {shared} faces: F = {left:?} / {right:?}");
        }
    }
    Ok(())
}
