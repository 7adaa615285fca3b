//! OpenSubdiv 3.7 (C++) through `opensubdiv-petite` 0.3: the refiner and
//! patch table set-up shared by the Catmull-Clark and adaptive benches and
//! the limit goldens example.

use std::collections::BTreeMap;

use opensubdiv_petite::far;
use subla::adaptive::Sample;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Mesh, TriangleSubdivision};

use crate::osd_eval::{OsdEndCap, OsdTopology};
use crate::osd_fvar::OsdScheme;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A mesh's topology and tags in the flat arrays OpenSubdiv's
/// `TopologyDescriptor` takes.
#[derive(Clone, Debug)]
pub struct OsdMesh {
    /// Number of control vertices.
    pub num_vertices: usize,
    /// Vertices per face.
    pub face_counts: Vec<u32>,
    /// The faces' vertices, face after face.
    pub face_verts: Vec<u32>,
    /// Creased edges' vertex pairs, flattened.
    pub crease_pairs: Vec<u32>,
    /// Sharpness per creased edge.
    pub crease_weights: Vec<f32>,
    /// Vertices with a corner sharpness.
    pub corner_vertices: Vec<u32>,
    /// Sharpness per corner vertex.
    pub corner_weights: Vec<f32>,
    /// Faces tagged as holes.
    pub holes: Vec<u32>,
    /// The subdivision options.
    pub options: subla_mesh::Options,
}

impl OsdMesh {
    /// The flat arrays of `mesh` (edges and vertices with a sharpness above
    /// zero become creases and corners).
    pub fn new(mesh: &Mesh) -> OsdMesh {
        let t = mesh.topology();
        let mut m = OsdMesh {
            num_vertices: mesh.num_vertices(),
            face_counts: t.face_ptr().windows(2).map(|w| w[1] - w[0]).collect(),
            face_verts: t.face_verts().to_vec(),
            crease_pairs: Vec::new(),
            crease_weights: Vec::new(),
            corner_vertices: Vec::new(),
            corner_weights: Vec::new(),
            holes: mesh.holes().iter().enumerate().filter(|h| *h.1).map(|h| h.0 as u32).collect(),
            options: mesh.options(),
        };
        for (e, &s) in mesh.edge_sharpness().iter().enumerate() {
            if s > 0.0 {
                m.crease_pairs.extend(t.edge(e));
                m.crease_weights.push(s);
            }
        }
        for (v, &s) in mesh.vertex_sharpness().iter().enumerate() {
            if s > 0.0 {
                m.corner_vertices.push(v as u32);
                m.corner_weights.push(s);
            }
        }
        m
    }

    /// The arrays borrowed as [`OsdTopology`].
    pub fn topology(&self) -> OsdTopology<'_> {
        OsdTopology {
            num_vertices: self.num_vertices,
            face_counts: &self.face_counts,
            face_verts: &self.face_verts,
            crease_pairs: &self.crease_pairs,
            crease_weights: &self.crease_weights,
            corner_vertices: &self.corner_vertices,
            corner_weights: &self.corner_weights,
            holes: &self.holes,
            options: self.options,
        }
    }
}

/// `TopologyRefiner::new` (`scheme`, the mesh's options), not refined
/// yet.
pub fn refiner(t: &OsdTopology<'_>, scheme: OsdScheme) -> Result<far::TopologyRefiner, String> {
    let mut d = far::TopologyDescriptor::new(t.num_vertices, t.face_counts, t.face_verts).map_err(err)?;
    if !t.crease_weights.is_empty() {
        d.creases(t.crease_pairs, t.crease_weights);
    }
    if !t.corner_weights.is_empty() {
        d.corners(t.corner_vertices, t.corner_weights);
    }
    if !t.holes.is_empty() {
        d.holes(t.holes);
    }
    let o = t.options;
    let options = far::TopologyRefinerOptions {
        scheme: match scheme {
            OsdScheme::Catmark => far::Scheme::CatmullClark,
            OsdScheme::Loop => far::Scheme::Loop,
        },
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
    far::TopologyRefiner::new(d, options).map_err(err)
}

/// [`refiner`], `RefineAdaptive` (OpenSubdiv's default options but the
/// isolation level) and `PatchTableFactory::Create` with end caps
/// `end_cap`.
pub fn adaptive(
    t: &OsdTopology<'_>,
    scheme: OsdScheme,
    isolation: u32,
    end_cap: OsdEndCap,
) -> Result<(far::TopologyRefiner, far::PatchTable), String> {
    let mut r = refiner(t, scheme)?;
    r.refine_adaptive(
        far::topology_refiner::AdaptiveRefinementOptions { isolation_level: isolation as usize, ..Default::default() },
        &[],
    );
    // petite 0.3's variants, as integers, are OpenSubdiv's `EndCapType`
    // minus one: its `LegacyGregory` reaches C++ as `ENDCAP_GREGORY_BASIS`,
    // its `GregoryBasis` as `ENDCAP_BSPLINE_BASIS`.
    let end_cap = match end_cap {
        OsdEndCap::GregoryBasis => far::EndCapType::LegacyGregory,
        OsdEndCap::BSplineBasis => far::EndCapType::GregoryBasis,
    };
    let table = far::PatchTable::new(&r, Some(far::PatchTableOptions::new().end_cap_type(end_cap))).map_err(err)?;
    Ok((r, table))
}

/// Patches per number of control points (16: regular or B-spline end cap,
/// 20: Gregory basis end cap), from the patch arrays' descriptors (their
/// sizes come from C++ as they are, unlike petite's patch types), to check
/// which end caps a table has.
pub fn patch_sizes(t: &far::PatchTable) -> BTreeMap<usize, usize> {
    let mut sizes = BTreeMap::new();
    for a in 0..t.patch_array_count() {
        if let Some(d) = t.patch_array_descriptor(a) {
            *sizes.entry(d.control_vertex_count()).or_default() += t.patch_array_patch_count(a);
        }
    }
    sizes
}

/// `LimitStencilTableFactory::Create` at `samples` (grouped by ptex face
/// in their order, parameters as `f32`) with the patch table; an error
/// unless every sample gets a stencil.
pub fn limit_stencils(
    r: &far::TopologyRefiner,
    t: &far::PatchTable,
    samples: &[Sample],
) -> Result<far::LimitStencilTable, String> {
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
    let table = far::LimitStencilTable::new(r, &locations, None, Some(t), far::LimitStencilTableOptions::default())
        .map_err(err)?;
    if table.len() != samples.len() {
        return Err(format!("{} limit stencils for {} samples", table.len(), samples.len()));
    }
    Ok(table)
}

/// Applies the limit stencils' weights `w` (`weights`, `du_weights` or
/// `dv_weights`) to xyz per control point `ctrl`, in `f64`.
pub fn apply_stencils(table: &far::LimitStencilTable, w: &[f32], ctrl: impl Fn(usize) -> [f64; 3]) -> Vec<[f64; 3]> {
    let (sizes, offsets, idx) = (table.sizes(), table.offsets(), table.control_indices());
    (0..table.len())
        .map(|i| {
            let (a, n) = (usize::from(offsets[i]), sizes[i] as usize);
            let mut acc = [0.0; 3];
            for (&c, &wk) in idx[a..a + n].iter().zip(&w[a..a + n]) {
                let x = ctrl(usize::from(c));
                for k in 0..3 {
                    acc[k] += f64::from(wk) * x[k];
                }
            }
            acc
        })
        .collect()
}
