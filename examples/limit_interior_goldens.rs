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

use opensubdiv_petite::far;
use subla::adaptive::{EndCap, PatchTable, Sample, SparseRefinement};
use subla_mesh::obj::read_obj;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, MeshData, TriangleSubdivision, Validation};

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
    let t = mesh.topology();
    let refinement = SparseRefinement::build(mesh, iso, None).map_err(|e| e.to_string())?;
    let table = PatchTable::new(refinement, if gregory { EndCap::GregoryBasis } else { EndCap::BSplineBasis })
        .map_err(|e| e.to_string())?;
    let samples = samples(&table);

    // OpenSubdiv's refiner and patch table from the same mesh.
    let counts: Vec<u32> = t.face_ptr().windows(2).map(|w| w[1] - w[0]).collect();
    let mut d =
        far::TopologyDescriptor::new(mesh.num_vertices(), &counts, t.face_verts()).map_err(|e| e.to_string())?;
    let (mut crease_v, mut crease_w) = (Vec::new(), Vec::new());
    for (e, &s) in mesh.edge_sharpness().iter().enumerate() {
        if s > 0.0 {
            crease_v.extend(t.edge(e));
            crease_w.push(s);
        }
    }
    let (mut corner_v, mut corner_w) = (Vec::new(), Vec::new());
    for (v, &s) in mesh.vertex_sharpness().iter().enumerate() {
        if s > 0.0 {
            corner_v.push(v as u32);
            corner_w.push(s);
        }
    }
    let holes: Vec<u32> = mesh.holes().iter().enumerate().filter(|h| *h.1).map(|h| h.0 as u32).collect();
    if !crease_w.is_empty() {
        d.creases(&crease_v, &crease_w);
    }
    if !corner_w.is_empty() {
        d.corners(&corner_v, &corner_w);
    }
    if !holes.is_empty() {
        d.holes(&holes);
    }
    let o = mesh.options();
    let options = far::TopologyRefinerOptions {
        scheme: far::Scheme::CatmullClark,
        boundary_interpolation: match o.boundary {
            BoundaryInterpolation::None => None,
            BoundaryInterpolation::EdgeOnly => Some(far::BoundaryInterpolation::EdgeOnly),
            BoundaryInterpolation::EdgeAndCorner => Some(far::BoundaryInterpolation::EdgeAndCorner),
        },
        creasing_method: match o.crease_method {
            CreaseMethod::Uniform => far::CreasingMethod::Uniform,
            CreaseMethod::Chaikin => far::CreasingMethod::Chaikin,
        },
        triangle_subdivision: match o.triangle_subdivision {
            TriangleSubdivision::Catmark => far::TriangleSubdivision::CatmullClark,
            TriangleSubdivision::Smooth => far::TriangleSubdivision::Smooth,
        },
        ..Default::default()
    };
    let mut r = far::TopologyRefiner::new(d, options).map_err(|e| e.to_string())?;
    r.refine_adaptive(
        far::topology_refiner::AdaptiveRefinementOptions { isolation_level: iso as usize, ..Default::default() },
        &[],
    );
    // petite's `EndCapType`, as an integer, is OpenSubdiv's minus one.
    let end_cap = if gregory { far::EndCapType::LegacyGregory } else { far::EndCapType::GregoryBasis };
    let pt = far::PatchTable::new(&r, Some(far::PatchTableOptions::new().end_cap_type(end_cap)))
        .map_err(|e| e.to_string())?;
    // The end caps asked for: 20 control points per Gregory basis patch.
    let mut gregory_patches = 0;
    for a in 0..pt.patch_array_count() {
        if pt.patch_array_descriptor(a).is_some_and(|d| d.control_vertex_count() == 20) {
            gregory_patches += pt.patch_array_patch_count(a);
        }
    }
    let end_caps = table.counts().end_caps;
    if gregory_patches != if gregory { end_caps } else { 0 } {
        return Err(format!("OpenSubdiv has {gregory_patches} Gregory basis patches, subla {end_caps} end caps"));
    }
    if pt.patch_count() != table.patches().len() {
        return Err(format!("OpenSubdiv has {} patches, subla {}", pt.patch_count(), table.patches().len()));
    }

    let s: Vec<f32> = samples.iter().map(|x| x.u as f32).collect();
    let tt: Vec<f32> = samples.iter().map(|x| x.v as f32).collect();
    let mut locations = Vec::new();
    let mut start = 0;
    while start < samples.len() {
        let ptex = samples[start].ptex;
        let end = start + samples[start..].iter().take_while(|x| x.ptex == ptex).count();
        locations.push(far::LocationArray { ptex_index: ptex as usize, s: &s[start..end], t: &tt[start..end] });
        start = end;
    }
    let st = far::LimitStencilTable::new(&r, &locations, None, Some(&pt), far::LimitStencilTableOptions::default())
        .map_err(|e| e.to_string())?;
    if st.len() != samples.len() {
        return Err(format!("{} limit stencils for {} samples", st.len(), samples.len()));
    }
    let pos = data.positions();
    let (sizes, offsets, idx) = (st.sizes(), st.offsets(), st.control_indices());
    let apply = |w: &[f32], i: usize| -> [f64; 3] {
        let (a, n) = (usize::from(offsets[i]), sizes[i] as usize);
        let mut acc = [0.0; 3];
        for (&c, &wk) in idx[a..a + n].iter().zip(&w[a..a + n]) {
            for (k, x) in acc.iter_mut().enumerate() {
                *x += f64::from(wk) * pos[[usize::from(c), k]];
            }
        }
        acc
    };

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
        for w in [st.weights(), st.du_weights(), st.dv_weights()] {
            for c in apply(w, i) {
                let _ = write!(text, " {c:.9e}");
            }
        }
        text.push('\n');
    }
    Ok(text)
}
