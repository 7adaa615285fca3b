//! The shared refiner, the golden input meshes and comparisons.

use std::path::PathBuf;
use std::sync::OnceLock;

use ndarray::{Array2, ArrayView2};
use subla_catmark_gpu::CatmarkGpu;
use subla_mesh::{MeshData, Validation};

/// The refiner on the process-wide test context (pipelines compiled
/// once), or `None` with a skip line when no adapter exists.
pub(crate) fn refiner() -> Option<&'static CatmarkGpu> {
    static REFINER: OnceLock<CatmarkGpu> = OnceLock::new();
    let ctx = subla_gpu::testing::context_or_skip()?;
    Some(REFINER.get_or_init(|| CatmarkGpu::new(ctx)))
}

/// The repository's `data/` folder.
pub(crate) fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

/// Small OpenSubdiv regression shapes: smooth, creased, Chaikin, corners,
/// holes, non-manifold, repeated vertices (fan), n-gons.
pub(crate) const SHAPES: [&str; 8] = [
    "catmark_cube",
    "catmark_cube_creases0",
    "catmark_chaikin2",
    "catmark_edgecorner",
    "catmark_hole_test1",
    "catmark_nonman_quadpole8",
    "catmark_fan",
    "catmark_tent_creases0",
];

/// Input mesh `name` from `data/meshes/osd/`, with the winding the golden
/// MANIFEST records.
pub(crate) fn shape(name: &str) -> MeshData {
    let path = data().join(format!("meshes/osd/{name}.obj"));
    let mut d =
        subla_mesh::obj::read_obj(&path, Validation::OpenSubdiv).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest = std::fs::read_to_string(data().join("golden/MANIFEST.tsv")).expect("MANIFEST.tsv");
    let source = format!("meshes/osd/{name}.obj");
    let left_handed = manifest.lines().skip(1).any(|l| {
        let c: Vec<&str> = l.split('\t').collect();
        c.len() > 5 && c[1].ends_with(&source) && c[5].contains("left_handed=true")
    });
    if left_handed {
        d.mesh = d.mesh.reversed_winding().expect("reversed winding");
    }
    d
}

/// The bounding-box diagonal of the rows of `p` (first three channels), at
/// least 1e-30.
pub(crate) fn diagonal(p: ArrayView2<'_, f64>) -> f64 {
    let k = p.ncols().min(3);
    let mut s = 0.0;
    for c in 0..k {
        let col = p.column(c);
        let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        s += (hi - lo).powi(2);
    }
    s.sqrt().max(1e-30)
}

/// Largest absolute difference.
pub(crate) fn max_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    assert_eq!(a.dim(), b.dim(), "shapes differ");
    a.iter().zip(b.iter()).fold(0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// Bits of an `f32` array, for bitwise comparisons.
pub(crate) fn bits(a: &Array2<f32>) -> Vec<u32> {
    a.iter().map(|x| x.to_bits()).collect()
}

/// Times a test body, printing the duration (visible with `--nocapture`).
pub(crate) struct Timer(&'static str, std::time::Instant);

impl Timer {
    pub(crate) fn start(name: &'static str) -> Self {
        Self(name, std::time::Instant::now())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        eprintln!("{}: {:.2?}", self.0, self.1.elapsed());
    }
}
