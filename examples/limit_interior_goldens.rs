//! Writes the interior limit goldens of `data/golden/limit/interior/`:
//! OpenSubdiv C++'s limit surface (through `opensubdiv-petite`) at points
//! strictly inside the patches of a feature-adaptive patch table, where the
//! per-face grids of the other limit goldens (3×3 and 5×5 points per ptex
//! face) only reach patch corners and edges.
//!
//! ```text
//! cargo run --release -p subla-bench --features opensubdiv-petite \
//!     --example limit_interior_goldens -- OUT_DIR SHAPE:ISOLATION:ENDCAP...
//! gzip -9n OUT_DIR/*.txt
//! ```
//!
//! `SHAPE` names `data/meshes/osd/SHAPE.obj` (Catmull-Clark), `ENDCAP` is
//! `gregory` or `bspline`. The samples: three points inside every end cap
//! and one inside every seventh regular patch, at dyadic patch coordinates
//! (exact in `f32`, OpenSubdiv's parameter type). subla's patch table only
//! places them (which patches are end caps, and where a patch lies in its
//! ptex face); the values are OpenSubdiv's limit stencils (`f32` weights)
//! applied to the control points in `f64`. A line per sample:
//! `ptex u v x y z dx/du dy/du dz/du dx/dv dy/dv dz/dv`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use subla::adaptive::{EndCap, PatchTable, Sample, SparseRefinement};
use subla_bench::osd_eval::OsdEndCap;
use subla_bench::osd_fvar::OsdScheme;
use subla_bench::petite::{self, OsdMesh};
use subla_mesh::obj::read_obj;
use subla_mesh::{MeshData, Validation};

/// Patch coordinates of the samples inside an end cap: away from the
/// corners, where the Gregory basis blends its face points, and not
/// symmetric, so that a swapped pair of points shows.
const END_CAP_POINTS: [(f64, f64); 3] = [(0.5, 0.5), (0.25, 0.6875), (0.8125, 0.375)];
/// ... and inside the regular patches sampled.
const REGULAR_POINT: (f64, f64) = (0.375, 0.625);
/// Every this many regular patches gets a sample.
const REGULAR_STRIDE: usize = 7;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, jobs)) = args.split_first() else {
        return Err("usage: limit_interior_goldens OUT_DIR SHAPE:ISOLATION:ENDCAP...".into());
    };
    let meshes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/osd");
    for job in jobs {
        let parts: Vec<&str> = job.split(':').collect();
        let [shape, iso, end_cap] = parts[..] else { return Err(format!("{job}: not SHAPE:ISOLATION:ENDCAP")) };
        let iso: u32 = iso.parse().map_err(|e| format!("{job}: {e}"))?;
        let gregory = match end_cap {
            "gregory" => true,
            "bspline" => false,
            _ => return Err(format!("{job}: the end cap is gregory or bspline")),
        };
        let mut data = read_obj(meshes.join(format!("{shape}.obj")), Validation::OpenSubdiv)
            .map_err(|e| format!("{shape}: {e}"))?;
        if data.left_handed {
            data.mesh = data.mesh.reversed_winding().map_err(|e| e.to_string())?;
        }
        let text = golden(&data, iso, gregory).map_err(|e| format!("{job}: {e}"))?;
        let path = PathBuf::from(out).join(format!("{shape}.iso{iso}.{end_cap}.txt"));
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Where to sample: inside the end caps and some regular patches, in ptex
/// order.
fn samples(table: &PatchTable) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut regular = 0;
    for p in table.patches() {
        let points: &[(f64, f64)] = if p.param.is_regular() {
            regular += 1;
            if regular % REGULAR_STRIDE != 1 {
                continue;
            }
            std::slice::from_ref(&REGULAR_POINT)
        } else {
            &END_CAP_POINTS
        };
        for &(s, t) in points {
            let (u, v) = p.param.unnormalize(s, t);
            out.push(Sample { ptex: p.param.face_id(), u, v });
        }
    }
    out.sort_by(|a, b| (a.ptex, a.v, a.u).partial_cmp(&(b.ptex, b.v, b.u)).unwrap_or(std::cmp::Ordering::Equal));
    out
}

fn golden(data: &MeshData, iso: u32, gregory: bool) -> Result<String, String> {
    let mesh = &data.mesh;
    let refinement = SparseRefinement::build(mesh, iso, None).map_err(|e| e.to_string())?;
    let table = PatchTable::new(refinement, if gregory { EndCap::GregoryBasis } else { EndCap::BSplineBasis })
        .map_err(|e| e.to_string())?;
    let samples = samples(&table);

    // OpenSubdiv's refiner and patch table from the same mesh.
    let osd_mesh = OsdMesh::new(mesh);
    let end_cap = if gregory { OsdEndCap::GregoryBasis } else { OsdEndCap::BSplineBasis };
    let (r, pt) = petite::adaptive(&osd_mesh.topology(), OsdScheme::Catmark, iso, end_cap)?;
    // The end caps asked for: 20 control points per Gregory basis patch.
    let gregory_patches = petite::patch_sizes(&pt).get(&20).copied().unwrap_or(0);
    let end_caps = table.counts().end_caps;
    if gregory_patches != if gregory { end_caps } else { 0 } {
        return Err(format!("OpenSubdiv has {gregory_patches} Gregory basis patches, subla {end_caps} end caps"));
    }
    if pt.patch_count() != table.patches().len() {
        return Err(format!("OpenSubdiv has {} patches, subla {}", pt.patch_count(), table.patches().len()));
    }

    let st = petite::limit_stencils(&r, &pt, &samples)?;
    let pos = data.positions();
    let control = |c: usize| [pos[[c, 0]], pos[[c, 1]], pos[[c, 2]]];
    let values = [st.weights(), st.du_weights(), st.dv_weights()].map(|w| petite::apply_stencils(&st, w, control));

    let levels: Vec<String> = (0..).map_while(|l| r.level(l)).map(|l| l.vertex_count().to_string()).collect();
    let mut text = format!(
        "# OpenSubdiv 3.7.0 limit stencils (f32 weights) isolation={iso} endcap={} samples={} patches={}\n",
        if gregory { "gregory" } else { "bspline" },
        samples.len(),
        pt.patch_count()
    );
    let _ = writeln!(text, "# refined vertices per level: {}", levels.join(" "));
    let _ = writeln!(text, "# each line: ptex u v x y z dx/du dy/du dz/du dx/dv dy/dv dz/dv");
    for (i, x) in samples.iter().enumerate() {
        let _ = write!(text, "{} {} {}", x.ptex, x.u, x.v);
        for v in &values {
            for c in v[i] {
                let _ = write!(text, " {c:.9e}");
            }
        }
        text.push('\n');
    }
    Ok(text)
}
