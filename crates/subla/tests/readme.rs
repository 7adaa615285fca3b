//! The README's library example, compiled and run; the test fails when the
//! README's text and this copy drift apart.

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

// README begin
use subla::scheme::refinement::{Budget, Refinement};
use subla::{CatmarkSlak, Par, Plan, Refiner, Validation};

fn example() -> Result<(), Box<dyn std::error::Error>> {
    let data = subla::mesh::obj::read_obj("data/meshes/osd/catmark_cube_creases0.obj", Validation::OpenSubdiv)?;
    // Build (topology, once), then eval (positions, every frame).
    let plan = CatmarkSlak.build(&data.mesh, 2, Par::Rayon)?;
    let fine = subla::scheme::eval(&plan, data.positions(), Par::Rayon)?;
    assert_eq!(fine.nrows(), plan.output_len());
    // One sparse matrix R = R_1 R_0 over both levels, as an sprs matrix.
    let mut r = Refinement::chain(&plan, Budget::default(), Par::Rayon)?;
    let r = r.compose(Budget::default(), Par::Rayon)?.to_sprs();
    assert_eq!((r.rows(), r.cols()), (plan.output_len(), plan.input_len()));
    Ok(())
}
// README end

/// The statements of a Rust snippet, one trimmed line each, without
/// comments, blank lines and the wrapper function of this file.
fn statements(code: &str) -> Vec<String> {
    code.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .filter(|l| !l.starts_with("fn example()") && *l != "Ok(())" && *l != "}")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_library_example_runs_and_matches_this_copy() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let len = readme[start..].find("```").expect("the block's end");
    let this = include_str!("readme.rs");
    let (a, b) = (this.find("// README begin").expect("marker"), this.find("// README end").expect("marker"));
    assert_eq!(statements(&readme[start..start + len]), statements(&this[a..b]), "README and tests/readme.rs differ");
    std::env::set_current_dir(repo()).expect("cd to the repository");
    example().expect("the README example runs");
}
