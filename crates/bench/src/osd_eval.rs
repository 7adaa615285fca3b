//! OpenSubdiv 3.7's own limit evaluation loop (C++, `cpp/osd_eval.cpp`),
//! built from plain arrays, as the OpenSubdiv peer of the adaptive bench's
//! `eval` row.
//!
//! [`OsdEval::new`] builds what OpenSubdiv builds once per topology:
//! `TopologyRefinerFactory<TopologyDescriptor>::Create`, `RefineAdaptive`
//! (OpenSubdiv's default adaptive options but the isolation level) and
//! `PatchTableFactory::Create` with double precision local point stencils;
//! [`OsdEval::build_map`] adds the `PatchMap`. [`OsdEval::evaluate`] is the
//! per-data work, as OpenSubdiv's Far tutorials write it: the refined
//! levels' points (`PrimvarRefinerReal<double>::Interpolate` level by
//! level), the local (end-cap) points (the local point stencil table's
//! `UpdateValues`), then per sample `PatchMap::FindPatch`,
//! `PatchTable::EvaluateBasis` (double) and the weighted sums of position,
//! d/du and d/dv over `GetPatchVertices`. Serial, as OpenSubdiv's loop is.

use std::ptr::NonNull;

// OpenSubdiv itself (the static `osdCPU`) and the C++ runtime reach the link
// through the sys crate under `opensubdiv-petite`: keep it linked even where
// nothing else of it is used.
use opensubdiv_petite as _;

use crate::osd_fvar::OsdScheme;
use subla_mesh::{BoundaryInterpolation, CreaseMethod, Options, TriangleSubdivision};

/// The handle the shim hands out.
#[repr(C)]
struct Handle {
    _private: [u8; 0],
}

unsafe extern "C" {
    fn subla_osd_eval_new(
        num_vertices: i32,
        num_faces: i32,
        face_counts: *const i32,
        face_verts: *const i32,
        num_creases: i32,
        crease_pairs: *const i32,
        crease_weights: *const f32,
        num_corners: i32,
        corner_vertices: *const i32,
        corner_weights: *const f32,
        num_holes: i32,
        holes: *const i32,
        boundary: i32,
        crease_method: i32,
        triangle_subdivision: i32,
        loop_scheme: i32,
        isolation: i32,
        end_cap: i32,
    ) -> *mut Handle;
    fn subla_osd_eval_build_map(h: *mut Handle) -> i32;
    fn subla_osd_eval_num_patches(h: *const Handle) -> i32;
    fn subla_osd_eval_num_ptex_faces(h: *const Handle) -> i32;
    fn subla_osd_eval_num_points(h: *const Handle) -> i64;
    fn subla_osd_eval_free(h: *mut Handle);
    fn subla_osd_eval_run(
        h: *const Handle,
        control: *const f64,
        n: i64,
        ptex: *const i32,
        u: *const f64,
        v: *const f64,
        pos: *mut f64,
        du: *mut f64,
        dv: *mut f64,
        points_buf: *mut f64,
    ) -> i64;
}

/// The control mesh as OpenSubdiv's `TopologyDescriptor` takes it.
#[derive(Clone, Copy, Debug)]
pub struct OsdTopology<'a> {
    /// Number of control vertices.
    pub num_vertices: usize,
    /// Vertices per face.
    pub face_counts: &'a [u32],
    /// The faces' vertices, face after face.
    pub face_verts: &'a [u32],
    /// Creased edges as vertex pairs, flattened (two entries per crease).
    pub crease_pairs: &'a [u32],
    /// Sharpness per creased edge.
    pub crease_weights: &'a [f32],
    /// Vertices with a corner sharpness.
    pub corner_vertices: &'a [u32],
    /// Sharpness per corner vertex.
    pub corner_weights: &'a [f32],
    /// Faces tagged as holes.
    pub holes: &'a [u32],
    /// The subdivision options (boundary, creasing, triangles).
    pub options: Options,
}

/// OpenSubdiv's `PatchTableFactory::Options::EndCapType`, by its numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsdEndCap {
    /// `ENDCAP_BSPLINE_BASIS`: 16-point B-spline patches.
    BSplineBasis = 2,
    /// `ENDCAP_GREGORY_BASIS`: 20-point Gregory basis patches.
    GregoryBasis = 3,
}

/// A refiner, patch table and patch map built by OpenSubdiv (C++).
#[derive(Debug)]
pub struct OsdEval {
    ptr: NonNull<Handle>,
    num_vertices: usize,
    has_map: bool,
}

/// Limit positions and first derivatives (xyz per sample); NaN where no
/// patch covers a sample.
#[derive(Clone, Debug, Default)]
pub struct OsdLimit {
    /// Positions.
    pub p: Vec<[f64; 3]>,
    /// Derivatives with respect to the ptex face's u.
    pub du: Vec<[f64; 3]>,
    /// Derivatives with respect to the ptex face's v.
    pub dv: Vec<[f64; 3]>,
    /// Samples no patch covers.
    pub missing: usize,
}

/// The arrays of an [`OsdTopology`] checked and as OpenSubdiv's `int`s, and
/// its options as `Sdc::Options`' enum numbers: what both shims take.
pub(crate) struct TopologyArgs<'a> {
    pub(crate) counts: &'a [i32],
    pub(crate) verts: &'a [i32],
    pub(crate) creases: &'a [i32],
    pub(crate) corners: &'a [i32],
    pub(crate) holes: &'a [i32],
    pub(crate) boundary: i32,
    pub(crate) crease_method: i32,
    pub(crate) triangles: i32,
}

impl<'a> TopologyArgs<'a> {
    /// Checks that the arrays agree (crease and corner weights, face sizes,
    /// vertex indices) and fit OpenSubdiv's `int`.
    pub(crate) fn new(t: &OsdTopology<'a>) -> Result<TopologyArgs<'a>, String> {
        if t.crease_pairs.len() != 2 * t.crease_weights.len() {
            return Err(format!("{} crease vertices for {} creases", t.crease_pairs.len(), t.crease_weights.len()));
        }
        if t.corner_vertices.len() != t.corner_weights.len() {
            return Err(format!("{} corners for {} corner weights", t.corner_vertices.len(), t.corner_weights.len()));
        }
        let total: u64 = t.face_counts.iter().map(|&c| u64::from(c)).sum();
        if total != t.face_verts.len() as u64 {
            return Err(format!("faces count {total} vertices, {} given", t.face_verts.len()));
        }
        if let Some(&v) = t.face_verts.iter().find(|&&v| v as usize >= t.num_vertices) {
            return Err(format!("face vertex {v} of {} vertices", t.num_vertices));
        }
        let (boundary, crease_method, triangles) = sdc_numbers(t.options);
        Ok(TopologyArgs {
            counts: indices(t.face_counts, "face size")?,
            verts: indices(t.face_verts, "face vertex")?,
            creases: indices(t.crease_pairs, "crease vertex")?,
            corners: indices(t.corner_vertices, "corner vertex")?,
            holes: indices(t.holes, "hole")?,
            boundary,
            crease_method,
            triangles,
        })
    }
}

/// `Sdc::Options`' enums as numbers: vertex boundary interpolation,
/// creasing method, triangle subdivision.
pub(crate) fn sdc_numbers(o: Options) -> (i32, i32, i32) {
    let boundary = match o.boundary {
        BoundaryInterpolation::None => 0,
        BoundaryInterpolation::EdgeOnly => 1,
        BoundaryInterpolation::EdgeAndCorner => 2,
    };
    let crease_method = match o.crease_method {
        CreaseMethod::Uniform => 0,
        CreaseMethod::Chaikin => 1,
    };
    let triangles = match o.triangle_subdivision {
        TriangleSubdivision::Catmark => 0,
        TriangleSubdivision::Smooth => 1,
    };
    (boundary, crease_method, triangles)
}

/// `x` as OpenSubdiv's `int`, or an error naming `what`.
pub(crate) fn int(x: usize, what: &str) -> Result<i32, String> {
    i32::try_from(x).map_err(|_| format!("{what} ({x}) exceeds OpenSubdiv's int"))
}

/// `v` as OpenSubdiv's `Index` array (the same bits where every entry fits).
pub(crate) fn indices<'a>(v: &'a [u32], what: &str) -> Result<&'a [i32], String> {
    if let Some(&x) = v.iter().find(|&&x| i32::try_from(x).is_err()) {
        return Err(format!("{what} entry {x} exceeds OpenSubdiv's int"));
    }
    // SAFETY: u32 and i32 have the same size and alignment, and every entry
    // was just checked to be below 2^31, where both read the same.
    Ok(unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<i32>(), v.len()) })
}

impl OsdEval {
    /// Refiner of `scheme`, adaptive refinement to `isolation` and patch
    /// table with end caps `end_cap`; an error where the arrays disagree or
    /// OpenSubdiv fails (e.g. on topology it rejects, or a Loop mesh with a
    /// face that is not a triangle).
    pub fn new(t: &OsdTopology<'_>, scheme: OsdScheme, isolation: u32, end_cap: OsdEndCap) -> Result<OsdEval, String> {
        let TopologyArgs { counts, verts, creases, corners, holes, boundary, crease_method, triangles } =
            TopologyArgs::new(t)?;
        // SAFETY: every pointer is valid for the count passed with it (the
        // lengths were checked by `TopologyArgs::new`), and the shim copies
        // what it keeps.
        let ptr = unsafe {
            subla_osd_eval_new(
                int(t.num_vertices, "vertex count")?,
                int(counts.len(), "face count")?,
                counts.as_ptr(),
                verts.as_ptr(),
                int(t.crease_weights.len(), "crease count")?,
                creases.as_ptr(),
                t.crease_weights.as_ptr(),
                int(corners.len(), "corner count")?,
                corners.as_ptr(),
                t.corner_weights.as_ptr(),
                int(holes.len(), "hole count")?,
                holes.as_ptr(),
                boundary,
                crease_method,
                triangles,
                i32::from(scheme == OsdScheme::Loop),
                int(isolation as usize, "isolation level")?,
                end_cap as i32,
            )
        };
        let ptr = NonNull::new(ptr).ok_or("OpenSubdiv could not build the refiner or the patch table")?;
        Ok(OsdEval { ptr, num_vertices: t.num_vertices, has_map: false })
    }

    /// Builds the `PatchMap` (once; [`OsdEval::evaluate`] needs it).
    pub fn build_map(&mut self) -> Result<(), String> {
        // SAFETY: the handle is live and owned by `self`.
        if unsafe { subla_osd_eval_build_map(self.ptr.as_ptr()) } != 0 {
            return Err("OpenSubdiv could not build the patch map".into());
        }
        self.has_map = true;
        Ok(())
    }

    /// Number of patches in the table.
    pub fn num_patches(&self) -> usize {
        // SAFETY: the handle is live.
        unsafe { subla_osd_eval_num_patches(self.ptr.as_ptr()) }.max(0) as usize
    }

    /// Number of ptex faces (the face ids samples name).
    pub fn num_ptex_faces(&self) -> usize {
        // SAFETY: the handle is live.
        unsafe { subla_osd_eval_num_ptex_faces(self.ptr.as_ptr()) }.max(0) as usize
    }

    /// Number of refined and local points (the buffer
    /// [`OsdEval::evaluate_into`] reuses).
    pub fn num_points(&self) -> usize {
        // SAFETY: the handle is live.
        unsafe { subla_osd_eval_num_points(self.ptr.as_ptr()) }.max(0) as usize
    }

    /// The limit at the samples `(ptex[i], u[i], v[i])` from the control
    /// points `control`: levels' points, local points and the per-sample
    /// loop, all inside OpenSubdiv. The output arrays are allocated here.
    #[track_caller]
    pub fn evaluate(&self, control: &[[f64; 3]], ptex: &[i32], u: &[f64], v: &[f64]) -> Result<OsdLimit, String> {
        let n = ptex.len();
        let mut out = OsdLimit { p: vec![[0.0; 3]; n], du: vec![[0.0; 3]; n], dv: vec![[0.0; 3]; n], missing: 0 };
        self.run(control, ptex, u, v, &mut out, None)?;
        Ok(out)
    }

    /// [`OsdEval::evaluate`] into `out` (`n` samples) with the refined and
    /// local points in `points` (grown to [`OsdEval::num_points`]): a loop
    /// over frames that passes the same buffers allocates nothing.
    #[track_caller]
    pub fn evaluate_into(
        &self,
        control: &[[f64; 3]],
        ptex: &[i32],
        u: &[f64],
        v: &[f64],
        out: &mut OsdLimit,
        points: &mut Vec<[f64; 3]>,
    ) -> Result<(), String> {
        let n = ptex.len();
        assert!(out.p.len() == n && out.du.len() == n && out.dv.len() == n, "out holds one row per sample");
        points.resize(self.num_points(), [0.0; 3]);
        self.run(control, ptex, u, v, out, Some(points))
    }

    #[track_caller]
    fn run(
        &self,
        control: &[[f64; 3]],
        ptex: &[i32],
        u: &[f64],
        v: &[f64],
        out: &mut OsdLimit,
        points: Option<&mut Vec<[f64; 3]>>,
    ) -> Result<(), String> {
        assert_eq!(control.len(), self.num_vertices, "one control point per vertex");
        assert!(ptex.len() == u.len() && u.len() == v.len(), "ptex, u and v of one length");
        if !self.has_map {
            return Err("the patch map is not built (OsdEval::build_map)".into());
        }
        let n = ptex.len();
        let ptex_faces = self.num_ptex_faces();
        if let Some(&f) = ptex.iter().find(|&&f| f < 0 || f as usize >= ptex_faces) {
            return Err(format!("ptex face {f} of {ptex_faces}"));
        }
        let points_buf = points.map_or(std::ptr::null_mut(), |p| p.as_mut_ptr().cast::<f64>());
        // SAFETY: `control` holds xyz for every vertex of the descriptor;
        // the sample arrays and the three outputs hold `n` entries (xyz for
        // the outputs); `points_buf` is null or holds xyz for every refined
        // and local point; the handle is live and its patch map built.
        let missing = unsafe {
            subla_osd_eval_run(
                self.ptr.as_ptr(),
                control.as_ptr().cast::<f64>(),
                n as i64,
                ptex.as_ptr(),
                u.as_ptr(),
                v.as_ptr(),
                out.p.as_mut_ptr().cast::<f64>(),
                out.du.as_mut_ptr().cast::<f64>(),
                out.dv.as_mut_ptr().cast::<f64>(),
                points_buf,
            )
        };
        out.missing = usize::try_from(missing).map_err(|_| "OpenSubdiv's evaluation failed".to_string())?;
        Ok(())
    }
}

impl Drop for OsdEval {
    fn drop(&mut self) {
        // SAFETY: the handle came from `subla_osd_eval_new` and is freed
        // once, here.
        unsafe { subla_osd_eval_free(self.ptr.as_ptr()) }
    }
}

// SAFETY: the handle owns its C++ objects, and `evaluate` only reads them
// (every `const` method of a built refiner, patch table and patch map).
unsafe impl Send for OsdEval {}
// SAFETY: as above: shared use only calls the shim's const entry points.
unsafe impl Sync for OsdEval {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed cube of six quads: every vertex has valence 3, so each
    /// face's corners are evaluated on end caps. The limit surface has the
    /// cube's symmetries: the centre of each face maps to a point on the
    /// axis through that face, with derivatives orthogonal to the axis.
    #[test]
    fn cube_limit_at_face_centres_and_corners() {
        let ctrl: Vec<[f64; 3]> = (0..8)
            .map(|i| [f64::from(i & 1) * 2.0 - 1.0, f64::from((i >> 1) & 1) * 2.0 - 1.0, f64::from(i >> 2) * 2.0 - 1.0])
            .collect();
        let faces: [u32; 24] = [0, 2, 3, 1, 4, 5, 7, 6, 0, 1, 5, 4, 2, 6, 7, 3, 0, 4, 6, 2, 1, 3, 7, 5];
        let t = OsdTopology {
            num_vertices: 8,
            face_counts: &[4; 6],
            face_verts: &faces,
            crease_pairs: &[],
            crease_weights: &[],
            corner_vertices: &[],
            corner_weights: &[],
            holes: &[],
            options: Options::default(),
        };
        for end_cap in [OsdEndCap::GregoryBasis, OsdEndCap::BSplineBasis] {
            let mut e = OsdEval::new(&t, OsdScheme::Catmark, 2, end_cap).expect("cube builds");
            assert!(e.evaluate(&ctrl, &[0], &[0.5], &[0.5]).is_err(), "evaluation before the patch map");
            e.build_map().expect("patch map");
            assert_eq!(e.num_ptex_faces(), 6);
            let ptex: Vec<i32> = (0..6).collect();
            let l = e.evaluate(&ctrl, &ptex, &[0.5; 6], &[0.5; 6]).expect("evaluates");
            assert_eq!(l.missing, 0);
            for f in 0..6 {
                let p = l.p[f];
                let radius = p.iter().map(|x| x.abs()).fold(0.0, f64::max);
                // One coordinate carries the whole point, the others vanish.
                let off_axis: f64 = p.iter().map(|x| x.abs()).sum::<f64>() - radius;
                assert!(off_axis < 1e-12, "face {f}: {p:?} off its axis");
                assert!(radius > 0.3 && radius < 1.0, "face {f}: inside the hull, {p:?}");
                let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
                assert!(dot(l.du[f], p).abs() < 1e-12 && dot(l.dv[f], p).abs() < 1e-12, "face {f}: tangents");
                assert!(dot(l.du[f], l.du[f]) > 1e-6, "face {f}: a nonzero tangent");
            }
            // Each face's corner (u, v) = (0, 0) is its first vertex's limit
            // position, (n² v + 4 Σ edge neighbours + Σ diagonal neighbours)
            // / (n (n + 5)) for valence n = 3: half the control vertex.
            let first: Vec<usize> = (0..6).map(|f| faces[4 * f] as usize).collect();
            let c = e.evaluate(&ctrl, &ptex, &[0.0; 6], &[0.0; 6]).expect("evaluates");
            for f in 0..6 {
                let want = ctrl[first[f]].map(|x| 0.5 * x);
                let d = (0..3).map(|k| (c.p[f][k] - want[k]).abs()).fold(0.0, f64::max);
                assert!(d < 1e-12, "{end_cap:?} face {f}: corner {:?}, want {want:?}", c.p[f]);
            }
            // A face id past the last ptex face is an error, not a read
            // past OpenSubdiv's arrays.
            assert!(e.evaluate(&ctrl, &[6], &[0.5], &[0.5]).is_err());
        }
    }
}
