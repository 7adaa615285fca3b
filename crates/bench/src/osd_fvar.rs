//! OpenSubdiv 3.7's uniform refinement of face-varying data (C++,
//! `cpp/osd_fvar.cpp`), built from plain arrays, as the OpenSubdiv peer of
//! the face-varying bench.
//!
//! [`OsdFVar::new`] is OpenSubdiv's per-topology work:
//! `TopologyRefinerFactory<TopologyDescriptor>::Create` with one
//! `FVarChannel` (or none) and `RefineUniform` (full topology in the last
//! level). [`OsdFVar::interpolate`] is its per-data work for the channel:
//! `PrimvarRefinerReal<double>::InterpolateFaceVarying` level by level on
//! two doubles per value (a texture coordinate), into buffers allocated
//! once by [`OsdFVar::new`]; [`OsdFVar::interpolate_vertex`] the same with
//! `Interpolate` on two doubles per vertex. Serial, as OpenSubdiv's
//! `PrimvarRefiner` is.

use std::ptr::NonNull;

use opensubdiv_petite as _;
use subla_mesh::FVarLinearInterpolation;

use crate::osd_eval::{OsdTopology, TopologyArgs, indices, int};

#[repr(C)]
struct Handle {
    _private: [u8; 0],
}

unsafe extern "C" {
    fn subla_osd_fvar_new(
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
        is_loop: i32,
        num_values: i32,
        value_indices: *const i32,
        fvar_mode: i32,
        level: i32,
    ) -> *mut Handle;
    fn subla_osd_fvar_alloc(h: *mut Handle) -> i32;
    fn subla_osd_fvar_free(h: *mut Handle);
    fn subla_osd_fvar_num_values(h: *const Handle, level: i32) -> i32;
    fn subla_osd_fvar_num_vertices(h: *const Handle, level: i32) -> i32;
    fn subla_osd_fvar_finest_corners(h: *const Handle) -> i64;
    fn subla_osd_fvar_finest_indices(h: *const Handle, out: *mut i32) -> i64;
    fn subla_osd_fvar_interpolate(h: *mut Handle, values: *const f64, out: *mut f64) -> i32;
    fn subla_osd_fvar_interpolate_vertex(h: *mut Handle, values: *const f64, out: *mut f64) -> i32;
}

/// Which of OpenSubdiv's schemes refines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsdScheme {
    /// `SCHEME_CATMARK`.
    Catmark,
    /// `SCHEME_LOOP`.
    Loop,
}

/// The channel OpenSubdiv is given: a value per face corner.
#[derive(Clone, Copy, Debug)]
pub struct OsdChannel<'a> {
    /// Number of values.
    pub num_values: usize,
    /// Each face corner's value, in the order of the faces' vertices.
    pub indices: &'a [u32],
    /// The face-varying interpolation mode.
    pub mode: FVarLinearInterpolation,
}

/// A refiner refined uniformly by OpenSubdiv (C++), with one face-varying
/// channel or none, and its level buffers.
#[derive(Debug)]
pub struct OsdFVar {
    ptr: NonNull<Handle>,
    level: u32,
    has_channel: bool,
    finest_corners: usize,
}

impl OsdFVar {
    /// Refiner and uniform refinement to `level`; an error where the arrays
    /// disagree or OpenSubdiv fails. Without `channel`, the refinement of
    /// the vertex topology alone.
    pub fn new(
        t: &OsdTopology<'_>,
        scheme: OsdScheme,
        channel: Option<OsdChannel<'_>>,
        level: u32,
    ) -> Result<OsdFVar, String> {
        let TopologyArgs {
            counts,
            verts,
            creases,
            corners: corner_vertices,
            holes,
            boundary,
            crease_method,
            triangles,
        } = TopologyArgs::new(t)?;
        let corners = t.face_verts.len();
        let (num_values, values, mode) = match channel {
            Some(c) => {
                if c.indices.len() != corners {
                    return Err(format!("{} value indices for {corners} corners", c.indices.len()));
                }
                if let Some(&i) = c.indices.iter().find(|&&i| i as usize >= c.num_values) {
                    return Err(format!("value index {i} of {} values", c.num_values));
                }
                let mode = match c.mode {
                    FVarLinearInterpolation::None => 0,
                    FVarLinearInterpolation::CornersOnly => 1,
                    FVarLinearInterpolation::CornersPlus1 => 2,
                    FVarLinearInterpolation::CornersPlus2 => 3,
                    FVarLinearInterpolation::Boundaries => 4,
                    FVarLinearInterpolation::All => 5,
                };
                (int(c.num_values, "value count")?, indices(c.indices, "value index")?, mode)
            }
            None => (-1, &[][..], 0),
        };
        // SAFETY: every pointer is valid for the count passed with it (the
        // lengths were checked by `TopologyArgs::new` and above); the shim
        // copies what it keeps.
        let ptr = unsafe {
            subla_osd_fvar_new(
                int(t.num_vertices, "vertex count")?,
                int(counts.len(), "face count")?,
                counts.as_ptr(),
                verts.as_ptr(),
                int(t.crease_weights.len(), "crease count")?,
                creases.as_ptr(),
                t.crease_weights.as_ptr(),
                int(corner_vertices.len(), "corner count")?,
                corner_vertices.as_ptr(),
                t.corner_weights.as_ptr(),
                int(holes.len(), "hole count")?,
                holes.as_ptr(),
                boundary,
                crease_method,
                triangles,
                i32::from(scheme == OsdScheme::Loop),
                num_values,
                values.as_ptr(),
                mode,
                int(level as usize, "level")?,
            )
        };
        let ptr = NonNull::new(ptr).ok_or("OpenSubdiv could not build or refine the topology")?;
        // SAFETY: the handle is live and refined.
        let finest_corners = unsafe { subla_osd_fvar_finest_corners(ptr.as_ptr()) } as usize;
        Ok(OsdFVar { ptr, level, has_channel: channel.is_some(), finest_corners })
    }

    /// Allocates every level's buffers (once, before timing the calls).
    pub fn alloc(&mut self) -> Result<(), String> {
        // SAFETY: the handle is live and owned by `self`.
        if unsafe { subla_osd_fvar_alloc(self.ptr.as_ptr()) } != 0 {
            return Err("out of memory for OpenSubdiv's level buffers".into());
        }
        Ok(())
    }

    /// Number of face-varying values at `level` (0 without the channel).
    pub fn num_values(&self, level: u32) -> usize {
        assert!(level <= self.level, "level {level} of {}", self.level);
        // SAFETY: the handle is live and `level` refined.
        unsafe { subla_osd_fvar_num_values(self.ptr.as_ptr(), level as i32) }.max(0) as usize
    }

    /// Number of vertices at `level`.
    pub fn num_vertices(&self, level: u32) -> usize {
        assert!(level <= self.level, "level {level} of {}", self.level);
        // SAFETY: the handle is live and `level` refined.
        unsafe { subla_osd_fvar_num_vertices(self.ptr.as_ptr(), level as i32) }.max(0) as usize
    }

    /// The finest level's value of each face corner, face after face.
    pub fn finest_indices(&self) -> Result<Vec<u32>, String> {
        if !self.has_channel {
            return Err("no face-varying channel".into());
        }
        let mut out = vec![0i32; self.finest_corners];
        // SAFETY: the shim writes one entry per finest face corner, which
        // is the count `out` was made with; the handle is live.
        let n = unsafe { subla_osd_fvar_finest_indices(self.ptr.as_ptr(), out.as_mut_ptr()) };
        if n != self.finest_corners as i64 {
            return Err(format!("OpenSubdiv wrote {n} corners of {}", self.finest_corners));
        }
        Ok(out.into_iter().map(|i| i as u32).collect())
    }

    /// The channel refined to the finest level from `values` (one `[u, v]`
    /// per base value), by `InterpolateFaceVarying` level by level.
    pub fn interpolate(&mut self, values: &[[f64; 2]], out: &mut Vec<[f64; 2]>) -> Result<(), String> {
        if values.len() != self.num_values(0) {
            return Err(format!("{} values for a channel of {}", values.len(), self.num_values(0)));
        }
        out.resize(self.num_values(self.level), [0.0; 2]);
        // SAFETY: `values` holds the base level's values and `out` the
        // finest level's (two doubles each); the handle is live.
        let rc =
            unsafe { subla_osd_fvar_interpolate(self.ptr.as_ptr(), values.as_ptr().cast(), out.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err("no channel, or its buffers are not allocated (OsdFVar::alloc)".into());
        }
        Ok(())
    }

    /// Vertex data of two doubles refined to the finest level, by
    /// `Interpolate` level by level.
    pub fn interpolate_vertex(&mut self, values: &[[f64; 2]], out: &mut Vec<[f64; 2]>) -> Result<(), String> {
        if values.len() != self.num_vertices(0) {
            return Err(format!("{} values for {} vertices", values.len(), self.num_vertices(0)));
        }
        out.resize(self.num_vertices(self.level), [0.0; 2]);
        // SAFETY: as `interpolate`, with the vertices' counts.
        let rc = unsafe {
            subla_osd_fvar_interpolate_vertex(self.ptr.as_ptr(), values.as_ptr().cast(), out.as_mut_ptr().cast())
        };
        if rc != 0 {
            return Err("the buffers are not allocated (OsdFVar::alloc)".into());
        }
        Ok(())
    }
}

impl Drop for OsdFVar {
    fn drop(&mut self) {
        // SAFETY: the handle came from `subla_osd_fvar_new` and is freed
        // once, here.
        unsafe { subla_osd_fvar_free(self.ptr.as_ptr()) }
    }
}

// SAFETY: the handle owns its C++ objects; mutation goes through `&mut self`.
unsafe impl Send for OsdFVar {}
