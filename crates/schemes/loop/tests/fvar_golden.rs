//! Face-varying refinement (Loop) against every OpenSubdiv golden in
//! `data/golden/fvar/` (level 2, the mode in the file name): positions
//! matched as for the vertex goldens, then each face's corners' values
//! within 1e-6 of the values' bounding-box diagonal, and the seams.

#[path = "../../catmark/tests/common/mod.rs"]
mod common;
#[path = "../../catmark/tests/common/fvar.rs"]
mod fvar_common;

use fvar_common::{Case, cases, compare_channel, input, run_cases};
use subla_algebra::Par;
use subla_loop::{LoopSlak, fvar};
use subla_scheme::{Plan, Refiner, eval};

/// Compares one case; returns the worst value difference over the values'
/// diagonal.
fn check(case: &Case) -> Result<f64, String> {
    let (data, fv) = input(case);
    let plan = fvar::build(&data.mesh, &fv.indices, fv.values.nrows(), 2, case.mode, Par::Seq)
        .map_err(|e| format!("build: {e}"))?;
    let values = plan.eval_owned(fv.values.view(), Par::Seq).map_err(|e| format!("eval: {e}"))?;
    let vplan = LoopSlak::new().build(&data.mesh, 2, Par::Seq).map_err(|e| e.to_string())?;
    let pos = eval(&vplan, data.positions(), Par::Seq).map_err(|e| e.to_string())?;
    let mesh = vplan.refined(2, Par::Seq).map_err(|e| e.to_string())?;
    if mesh.topology().face_verts() != plan.vertex_mesh(2).topology().face_verts() {
        return Err("the face-varying plan's faces differ from the vertex plan's".into());
    }
    compare_channel(mesh, pos.view(), &values, plan.indices(2), &case.file)
}

/// Goldens this crate cannot match yet, with the reason.
fn known_failure(file: &str) -> Option<&'static str> {
    file.contains("loop_nonman_edges.").then_some(
        "faces that use a vertex twice (degenerate edges): one face's values differ by 2.1e-2 of the diagonal; \
         the value tags around degenerate edges are not OpenSubdiv's yet",
    )
}

#[test]
fn loop_face_varying_matches_opensubdiv() {
    let all: Vec<Case> = cases().into_iter().filter(|c| c.scheme == "loop").collect();
    assert!(all.len() > 30, "{} cases", all.len());
    run_cases(&all, check, known_failure);
}
