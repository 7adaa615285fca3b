//! A mesh built from arbitrary bytes (faces, tags, options, vertex data of
//! any channel count) run through every CPU implementation of every scheme
//! of the registry, at up to two levels: building, stepping, evaluating in
//! `f64` and `f32`, the level and limit operators and their product.
//!
//! Nothing may panic; finite input gives finite output of the predicted
//! shape; the same input gives the same bits on one thread and on the pool;
//! a scheme that refines triangles only refuses other faces with
//! `NotTriangles`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarray::Array2;
use subla::registry::{Backend, Faces, Registry, Setup};
use subla_algebra::Par;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, MeshBuilder, Options, TriangleSubdivision, Validation};
use subla_scheme::refinement::{Budget, Refinement};
use subla_scheme::{Plan, Refiner, SchemeError, eval};


#[path = "common/bytes.rs"]
mod bytes;
use bytes::{Bytes, SHARPNESS};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let nv = 1 + b.below(12);
    let nf = 1 + b.below(8);
    let mut ptr = vec![0u32];
    let mut verts = Vec::new();
    for _ in 0..nf {
        let n = 1 + b.below(6);
        for _ in 0..n {
            // One index in 64 past the last vertex: a bad index must be an error.
            let v = u32::from(b.byte());
            verts.push(if v == 255 { nv } else { v % nv });
        }
        ptr.push(verts.len() as u32);
    }
    let options = Options {
        boundary: [BoundaryInterpolation::None, BoundaryInterpolation::EdgeOnly, BoundaryInterpolation::EdgeAndCorner]
            [b.below(3) as usize],
        crease_method: [CreaseMethod::Uniform, CreaseMethod::Chaikin][b.below(2) as usize],
        triangle_subdivision: [TriangleSubdivision::Catmark, TriangleSubdivision::Smooth][b.below(2) as usize],
        ..Options::default()
    };
    let validation = [Validation::OpenSubdiv, Validation::Manifold][b.below(2) as usize];
    let mut builder = MeshBuilder::new(nv as usize, ptr, verts).options(options).validation(validation);
    for _ in 0..b.below(5) {
        builder = match b.below(3) {
            0 => builder.crease(b.below(nv + 1), b.below(nv + 1), SHARPNESS[b.below(8) as usize]),
            1 => builder.corner(b.below(nv + 1), SHARPNESS[b.below(8) as usize]),
            _ => builder.hole(b.below(nf + 1)),
        };
    }
    let channels = 1 + b.below(5) as usize;
    let levels = b.below(3);
    let mesh = match builder.build(Par::Seq) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let x = Array2::from_shape_fn((nv as usize, channels), |_| f64::from(b.byte() as i8) / 16.0);
    let triangles = mesh.topology().face_ptr().windows(2).all(|w| w[1] - w[0] == 3);

    let registry = Registry::builtin();
    for scheme in registry.schemes() {
        for (backend, path) in scheme.implementations() {
            if backend != Backend::Cpu {
                continue;
            }
            let r = scheme.refiner(backend, path, &Setup::default()).expect("a CPU refiner is always available");
            let plan = match r.build(&mesh, levels, Par::Seq) {
                Ok(p) => p,
                Err(SchemeError::NotTriangles { .. }) => {
                    assert!(
                        scheme.faces() == Faces::Triangles && !triangles,
                        "{} refused a mesh of triangles",
                        scheme.name()
                    );
                    continue;
                }
                Err(e) => {
                    let _ = e.to_string();
                    continue;
                }
            };
            let rows = match plan.refined(levels, Par::Seq) {
                Ok(fine) => fine.num_vertices(),
                Err(e) => panic!("{}: refined({levels}) failed after a build: {e}", scheme.name()),
            };
            let y = eval(&plan, x.view(), Par::Seq).expect("CPU plans evaluate");
            assert_eq!(y.dim(), (rows, channels), "{}: output shape", scheme.name());
            assert!(y.iter().all(|v| v.is_finite()), "{}: non-finite output for finite input", scheme.name());
            let pooled = eval(&plan, x.view(), Par::Rayon).expect("CPU plans evaluate");
            assert!(
                y.iter().zip(pooled.iter()).all(|(a, c)| a.to_bits() == c.to_bits()),
                "{}: one thread and the pool differ",
                scheme.name()
            );
            let y32 = eval(&plan, x.mapv(|v| v as f32).view(), Par::Seq).expect("CPU plans evaluate");
            assert!(y32.iter().all(|v| v.is_finite()), "{}: non-finite f32 output", scheme.name());

            // One more level from the plan, as modeling does: the stepped
            // plan refines the finest level's data.
            if levels < 2
                && let Ok(next) = r.step(plan, Par::Seq)
            {
                let y = eval(&next, y.view(), Par::Seq).expect("CPU plans evaluate");
                assert!(y.iter().all(|v| v.is_finite()), "{}: non-finite output after a step", scheme.name());
            }

            // The operators: per level, with the limit, and their product.
            let Ok(plan) = r.build(&mesh, levels, Par::Seq) else { continue };
            let budget = Budget::bytes(1 << 26);
            if let Ok(mut chain) = Refinement::chain(&plan, budget, Par::Seq) {
                for m in chain.levels() {
                    assert!(m.values().iter().all(|v| v.is_finite()), "{}: non-finite operator", scheme.name());
                }
                if let Ok(r) = chain.compose_with(&plan, budget, Par::Seq) {
                    assert_eq!(r.nrows(), rows, "{}: composed operator rows", scheme.name());
                    assert!(r.values().iter().all(|v| v.is_finite()), "{}: non-finite product", scheme.name());
                }
                if let Ok(with_limit) = chain.with_limit(&plan, budget, Par::Seq) {
                    for m in with_limit.levels() {
                        assert!(m.values().iter().all(|v| v.is_finite()), "{}: non-finite limit", scheme.name());
                    }
                }
            }
        }
    }
});
