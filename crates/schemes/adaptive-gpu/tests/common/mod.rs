//! Helpers shared by the GPU limit tests: OpenSubdiv's shapes and the
//! comparison with the CPU `f64` evaluation.

use std::path::{Path, PathBuf};

use ndarray::Array2;
use subla_adaptive::{PatchTable, Sample};
use subla_adaptive_gpu::LimitValues;
use subla_algebra::Par;
use subla_mesh::obj::read_obj;
use subla_mesh::{MeshData, Validation};

/// The repository's `data/` folder.
pub(crate) fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../data")
}

/// One of OpenSubdiv's shapes, right-handed.
pub(crate) fn shape(name: &str) -> MeshData {
    let mut d = read_obj(data().join(format!("meshes/osd/{name}.obj")), Validation::OpenSubdiv).expect("mesh");
    if d.left_handed {
        d.mesh = d.mesh.reversed_winding().expect("reversed");
    }
    d
}

/// The bits of every output, in order.
pub(crate) fn bits(v: &LimitValues) -> Vec<u32> {
    v.position.iter().chain(&v.du).chain(&v.dv).map(|x| x.to_bits()).collect()
}

/// Worst differences of positions and derivatives between the GPU and the
/// CPU, over the bounding-box diagonal, after checking that both leave out
/// the same samples.
pub(crate) fn compare(
    name: &str,
    gpu: &LimitValues,
    table: &PatchTable,
    x: &Array2<f64>,
    s: &[Sample],
    diag: f64,
) -> (f64, f64) {
    let cpu = table.evaluate(x.view(), s, Par::Rayon).expect("cpu evaluation");
    let ch = x.ncols();
    let (mut ep, mut ed) = (0f64, 0f64);
    for (i, si) in s.iter().enumerate() {
        let hole = cpu.missing.binary_search(&i).is_ok();
        for c in 0..ch {
            let g = [gpu.position[i * ch + c], gpu.du[i * ch + c], gpu.dv[i * ch + c]].map(f64::from);
            let w = [cpu.position[[i, c]], cpu.du[[i, c]], cpu.dv[[i, c]]];
            if hole {
                assert!(g.iter().all(|v| v.is_nan()), "{name}: sample {i} {:?} is a hole, the GPU gave {g:?}", si);
                continue;
            }
            assert!(g.iter().all(|v| v.is_finite()), "{name}: sample {i} {:?}: GPU {g:?}, CPU {w:?}", si);
            ep = ep.max((g[0] - w[0]).abs());
            ed = ed.max((g[1] - w[1]).abs()).max((g[2] - w[2]).abs());
        }
    }
    (ep / diag, ed / diag)
}
