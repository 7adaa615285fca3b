//! A mesh built from arbitrary bytes (faces, tags, options) through
//! feature-adaptive refinement (Catmull-Clark and Loop, isolation 1–3,
//! optionally a selection of faces), a patch table with either end cap,
//! batched evaluation, the limit matrices and a tessellation.
//!
//! Nothing may panic; every sample is finite or reported missing; the
//! limit matrices reproduce the evaluation; one thread and the pool give
//! the same bits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::Array2;
use subla::adaptive::{AdaptiveError, EndCap, PatchTable, Scheme, SparseRefinement, grid};
use subla_algebra::Par;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, MeshBuilder, Options, Validation};

#[path = "common/bytes.rs"]
mod bytes;
use bytes::{Bytes, SHARPNESS};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let nv = 1 + b.below(12);
    let nf = 1 + b.below(8);
    let scheme = if b.below(2) == 0 { Scheme::Catmark } else { Scheme::Loop };
    let mut ptr = vec![0u32];
    let mut verts = Vec::new();
    for _ in 0..nf {
        let n = if scheme == Scheme::Loop { 3 } else { 3 + b.below(4) };
        for _ in 0..n {
            verts.push(b.below(nv));
        }
        ptr.push(verts.len() as u32);
    }
    let options = Options {
        boundary: [BoundaryInterpolation::None, BoundaryInterpolation::EdgeOnly, BoundaryInterpolation::EdgeAndCorner]
            [b.below(3) as usize],
        crease_method: [CreaseMethod::Uniform, CreaseMethod::Chaikin][b.below(2) as usize],
        ..Options::default()
    };
    let mut builder = MeshBuilder::new(nv as usize, ptr, verts).options(options).validation(Validation::OpenSubdiv);
    for _ in 0..b.below(5) {
        builder = match b.below(3) {
            0 => builder.crease(b.below(nv), b.below(nv), SHARPNESS[b.below(8) as usize]),
            1 => builder.corner(b.below(nv), SHARPNESS[b.below(8) as usize]),
            _ => builder.hole(b.below(nf)),
        };
    }
    let Ok(mesh) = builder.build(Par::Seq) else { return };
    let isolation = 1 + b.below(3);
    let selected: Option<Vec<u32>> = (b.below(3) == 0).then(|| (0..nf).filter(|f| f % 2 == 0).collect());
    let refinement = match SparseRefinement::build_scheme(scheme, &mesh, isolation, selected.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let end_cap = if b.below(2) == 0 { EndCap::GregoryBasis } else { EndCap::BSplineBasis };
    let Ok(table) = PatchTable::new(refinement, end_cap) else { return };
    let x = Array2::from_shape_fn((nv as usize, 3), |_| f64::from(b.byte() as i8) / 16.0);
    let samples = grid(table.refinement().num_ptex_faces(), 3);
    let a = match table.evaluate(x.view(), &samples, Par::Seq) {
        Ok(a) => a,
        Err(AdaptiveError::NoSuchPtexFace { .. }) => panic!("a grid sample outside the ptex faces"),
        Err(e) => panic!("evaluation failed: {e}"),
    };
    for (i, row) in a.position.outer_iter().enumerate() {
        assert!(a.missing.contains(&i) || row.iter().all(|v| v.is_finite()), "sample {i} is not finite");
    }
    let b2 = table.evaluate(x.view(), &samples, Par::Rayon).expect("the same evaluation");
    let bits = |l: &subla::adaptive::Limit<f64>| -> Vec<u64> {
        l.position.iter().chain(l.du.iter()).chain(l.dv.iter()).map(|v| v.to_bits()).collect()
    };
    assert_eq!(bits(&a), bits(&b2), "thread count changed the bits");
    assert_eq!(a.missing, b2.missing);
    let m = table.limit_matrices(&samples, Par::Seq).expect("limit matrices");
    assert_eq!(m.missing, a.missing);
    for i in 0..samples.len() {
        if a.missing.contains(&i) {
            continue;
        }
        let (cols, ws) = m.p.row(i);
        for c in 0..3 {
            let y: f64 = cols.iter().zip(ws).map(|(&j, &w)| w * x[[j as usize, c]]).sum();
            let scale = 1.0 + a.position[[i, c]].abs();
            assert!((y - a.position[[i, c]]).abs() <= 1e-9 * scale, "limit matrix row {i}: {y} vs {}", a.position[[i, c]]);
        }
    }
    let rate = 2;
    match table.tessellate(x.view(), rate, Par::Seq) {
        Ok(t) => assert!(t.faces.len() % t.face_size == 0),
        Err(AdaptiveError::OddRate { .. }) => unreachable!("an even rate"),
        Err(e) => panic!("tessellation failed: {e}"),
    }
});
