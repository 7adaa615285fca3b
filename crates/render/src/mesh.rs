//! What is drawn: the polygon mesh ([`MeshView`]), its positions
//! ([`Positions`]), the control cage ([`CageOverlay`]), their validation,
//! and their conversion to the vertex data the GPU draws.
//!
//! # Layout
//! Faces are stored as in `subla-mesh` (CSR-like): face `f` has the corners
//! `face_verts[face_ptr[f]..face_ptr[f + 1]]`.
//!
//! ```text
//! face_ptr   = [0,       4,       8]        two quads
//! face_verts = [0 1 2 3, 1 4 5 2]
//! ```
//!
//! A polygon with `n ≥ 3` corners `v0 v1 … v(n-1)` is drawn as the fan of
//! triangles `(v0, vi, vi+1)`, `i = 1 … n − 2`.

use std::collections::HashSet;

use ndarray::{Array2, ArrayView2};

use crate::FacePointerDefect;
use crate::error::RenderError;
use crate::options::Shading;

/// Vertex positions of a mesh, borrowed in one of the layouts callers have.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Positions<'a> {
    /// One row per vertex with at least 2 columns: `x, y` and optionally
    /// `z` (0 when absent); further columns are ignored. This is how
    /// `subla-mesh` stores vertex data.
    Array(ArrayView2<'a, f64>),
    /// One `[x, y, z]` per vertex.
    F64(&'a [[f64; 3]]),
    /// One `[x, y, z]` per vertex in single precision.
    F32(&'a [[f32; 3]]),
}

impl<'a> From<ArrayView2<'a, f64>> for Positions<'a> {
    fn from(a: ArrayView2<'a, f64>) -> Self {
        Positions::Array(a)
    }
}

impl<'a> From<&'a Array2<f64>> for Positions<'a> {
    fn from(a: &'a Array2<f64>) -> Self {
        Positions::Array(a.view())
    }
}

impl<'a> From<&'a [[f64; 3]]> for Positions<'a> {
    fn from(p: &'a [[f64; 3]]) -> Self {
        Positions::F64(p)
    }
}

impl<'a> From<&'a [[f32; 3]]> for Positions<'a> {
    fn from(p: &'a [[f32; 3]]) -> Self {
        Positions::F32(p)
    }
}

impl<'a> From<&'a Vec<[f64; 3]>> for Positions<'a> {
    fn from(p: &'a Vec<[f64; 3]>) -> Self {
        Positions::F64(p)
    }
}

impl<'a> From<&'a Vec<[f32; 3]>> for Positions<'a> {
    fn from(p: &'a Vec<[f32; 3]>) -> Self {
        Positions::F32(p)
    }
}

impl Positions<'_> {
    /// Number of vertices.
    pub fn len(&self) -> usize {
        match self {
            Positions::Array(a) => a.nrows(),
            Positions::F64(p) => p.len(),
            Positions::F32(p) => p.len(),
        }
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check_columns(&self) -> Result<(), RenderError> {
        match self {
            Positions::Array(a) if a.ncols() < 2 => Err(RenderError::PositionColumns { columns: a.ncols() }),
            _ => Ok(()),
        }
    }

    /// Vertex `i` (`i < len()`, columns checked).
    fn get(&self, i: usize) -> [f64; 3] {
        match self {
            Positions::Array(a) => {
                let z = if a.ncols() > 2 { a[[i, 2]] } else { 0.0 };
                [a[[i, 0]], a[[i, 1]], z]
            }
            Positions::F64(p) => p[i],
            Positions::F32(p) => p[i].map(f64::from),
        }
    }
}

/// A polygon mesh to draw: positions, faces as offsets into a corner list,
/// and optional hole flags (faces not drawn).
///
/// Nothing is checked on construction; [`MeshView::validate`] (called by
/// the renderer) checks everything and names the offending face or vertex.
#[derive(Clone, Copy, Debug)]
pub struct MeshView<'a> {
    positions: Positions<'a>,
    face_ptr: &'a [u32],
    face_verts: &'a [u32],
    holes: Option<&'a [bool]>,
    texcoords: Option<(&'a [[f64; 2]], &'a [u32])>,
}

impl<'a> MeshView<'a> {
    /// A mesh with `positions` and faces `face_verts[face_ptr[f]..face_ptr[f + 1]]`
    /// (see the [module docs](self)). `face_ptr` has one entry more than
    /// there are faces; an empty `face_ptr` means no faces.
    pub fn new(positions: impl Into<Positions<'a>>, face_ptr: &'a [u32], face_verts: &'a [u32]) -> Self {
        Self { positions: positions.into(), face_ptr, face_verts, holes: None, texcoords: None }
    }

    /// The same mesh with texture coordinates: corner `c` (in the order of
    /// `face_verts`) has `values[indices[c]]`. Drawn as a checker when
    /// [`RenderOptions::checker`](crate::RenderOptions::checker) is set.
    #[must_use]
    pub fn with_texcoords(mut self, values: &'a [[f64; 2]], indices: &'a [u32]) -> Self {
        self.texcoords = Some((values, indices));
        self
    }

    /// The same mesh with hole flags: face `f` is not drawn when
    /// `holes[f]`. There must be one flag per face.
    #[must_use]
    pub fn with_holes(mut self, holes: &'a [bool]) -> Self {
        self.holes = Some(holes);
        self
    }

    /// The positions.
    pub fn positions(&self) -> Positions<'a> {
        self.positions
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    /// Number of faces (`face_ptr.len() − 1`, or 0).
    pub fn num_faces(&self) -> usize {
        self.face_ptr.len().saturating_sub(1)
    }

    /// Whether face `f` is drawn (not a hole).
    fn drawn(&self, f: usize) -> bool {
        !self.holes.is_some_and(|h| h[f])
    }

    /// Corners of face `f` (after validation).
    fn face(&self, f: usize) -> &'a [u32] {
        &self.face_verts[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }

    /// Checks the positions, the face offsets, every face's size and
    /// indices, that every vertex a face uses is finite, and the hole flags.
    ///
    /// # Errors
    /// [`RenderError::PositionColumns`], [`RenderError::FacePointers`],
    /// [`RenderError::FaceTooSmall`], [`RenderError::FaceIndex`] (naming
    /// the face), [`RenderError::NonFinite`] (naming the vertex),
    /// [`RenderError::HoleFlags`], [`RenderError::TexcoordIndices`],
    /// [`RenderError::TexcoordIndex`] (naming the corner).
    pub fn validate(&self) -> Result<(), RenderError> {
        self.positions.check_columns()?;
        self.check_face_ptr()?;
        self.check_faces()?;
        if let Some(h) = self.holes
            && h.len() != self.num_faces()
        {
            return Err(RenderError::HoleFlags { flags: h.len(), faces: self.num_faces() });
        }
        if let Some((values, indices)) = self.texcoords {
            if indices.len() != self.face_verts.len() {
                return Err(RenderError::TexcoordIndices { indices: indices.len(), corners: self.face_verts.len() });
            }
            if let Some(c) = indices.iter().position(|&i| i as usize >= values.len()) {
                return Err(RenderError::TexcoordIndex { corner: c, index: indices[c], values: values.len() });
            }
        }
        Ok(())
    }

    /// `face_ptr` starts at 0 and ends at the corner count (or is empty
    /// with no corners).
    fn check_face_ptr(&self) -> Result<(), RenderError> {
        let ptr = self.face_ptr;
        if ptr.is_empty() {
            if !self.face_verts.is_empty() {
                return Err(RenderError::FacePointers {
                    defect: FacePointerDefect::Empty { corners: self.face_verts.len() },
                });
            }
        } else {
            if ptr[0] != 0 {
                return Err(RenderError::FacePointers { defect: FacePointerDefect::Start { first: ptr[0] } });
            }
            let last = ptr[ptr.len() - 1];
            if last as usize != self.face_verts.len() {
                return Err(RenderError::FacePointers {
                    defect: FacePointerDefect::End { last, corners: self.face_verts.len() },
                });
            }
        }
        Ok(())
    }

    /// Every face in order: its offsets do not decrease, it has 3 corners
    /// or more, and its vertices exist and are finite (each checked once).
    fn check_faces(&self) -> Result<(), RenderError> {
        let nv = self.positions.len();
        let ptr = self.face_ptr;
        let mut finite = vec![false; nv];
        for f in 0..self.num_faces() {
            let (start, end) = (ptr[f], ptr[f + 1]);
            if end < start {
                return Err(RenderError::FacePointers { defect: FacePointerDefect::Decreases { face: f, start, end } });
            }
            let corners = (end - start) as usize;
            if corners < 3 {
                return Err(RenderError::FaceTooSmall { face: f, corners });
            }
            for &v in self.face(f) {
                let vi = v as usize;
                if vi >= nv {
                    return Err(RenderError::FaceIndex { face: f, vertex: v, vertices: nv });
                }
                if !finite[vi] {
                    let p = self.positions.get(vi);
                    if !p.iter().all(|c| c.is_finite()) {
                        return Err(RenderError::NonFinite { what: "mesh", vertex: vi, position: p });
                    }
                    finite[vi] = true;
                }
            }
        }
        Ok(())
    }
}

/// Line segments drawn over the mesh, typically the control cage of a
/// subdivided surface: positions in the mesh's coordinates and pairs of
/// indices into them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CageOverlay {
    /// The cage's vertices.
    pub positions: Vec<[f64; 3]>,
    /// Segments as pairs of indices into [`positions`](Self::positions).
    pub edges: Vec<[u32; 2]>,
}

impl CageOverlay {
    /// A cage of `edges` between `positions`.
    pub fn new(positions: Vec<[f64; 3]>, edges: Vec<[u32; 2]>) -> Self {
        Self { positions, edges }
    }

    /// The edges of every face of `mesh` (holes included: they are part of
    /// the cage), each once, in the order first met, and a copy of its
    /// positions.
    ///
    /// # Errors
    /// As [`MeshView::validate`].
    pub fn from_mesh(mesh: &MeshView<'_>) -> Result<Self, RenderError> {
        mesh.validate()?;
        let positions = (0..mesh.num_vertices()).map(|i| mesh.positions.get(i)).collect();
        let mut seen = HashSet::new();
        let mut edges = Vec::new();
        for f in 0..mesh.num_faces() {
            let face = mesh.face(f);
            for (i, &a) in face.iter().enumerate() {
                let b = face[(i + 1) % face.len()];
                if a != b && seen.insert((a.min(b), a.max(b))) {
                    edges.push([a, b]);
                }
            }
        }
        Ok(Self { positions, edges })
    }

    /// Checks every edge's indices and that the vertices they use are
    /// finite.
    pub(crate) fn validate(&self) -> Result<(), RenderError> {
        let n = self.positions.len();
        for (s, e) in self.edges.iter().enumerate() {
            for &v in e {
                let Some(p) = self.positions.get(v as usize) else {
                    return Err(RenderError::SegmentIndex { what: "cage", segment: s, vertex: v, vertices: n });
                };
                if !p.iter().all(|c| c.is_finite()) {
                    return Err(RenderError::NonFinite { what: "cage", vertex: v as usize, position: *p });
                }
            }
        }
        Ok(())
    }
}

/// Checks crease segments against the mesh (after the mesh's validation).
pub(crate) fn validate_creases(mesh: &MeshView<'_>, creases: &[[u32; 2]]) -> Result<(), RenderError> {
    let n = mesh.num_vertices();
    for (s, e) in creases.iter().enumerate() {
        for &v in e {
            if v as usize >= n {
                return Err(RenderError::SegmentIndex { what: "crease", segment: s, vertex: v, vertices: n });
            }
            let p = mesh.positions.get(v as usize);
            if !p.iter().all(|c| c.is_finite()) {
                return Err(RenderError::NonFinite { what: "mesh", vertex: v as usize, position: p });
            }
        }
    }
    Ok(())
}

/// Maps the object into the unit sphere at the origin: `(p − centre) / radius`,
/// computed so that no step overflows or underflows for any finite
/// coordinates (a mesh at `1e300` or at `1e-300` is drawn as one at `1`).
///
/// Differences are taken of halves (`p/2 − c/2` is finite for finite `p`
/// and `c`), and the radius is kept as a scale `scale` (the largest
/// half-difference of any coordinate) times a factor `norm` in `[1, √3]`, so
/// that neither squares nor the radius itself leave the range of `f64`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Normalise {
    centre: [f64; 3],
    scale: f64,
    norm: f64,
}

impl Normalise {
    /// Centre: the bounding box's centre; radius: the largest distance
    /// from it, over every vertex a face uses (holes too, so that hiding
    /// faces does not move the camera), the crease endpoints and the cage's
    /// segment endpoints. Inputs are validated (finite).
    pub(crate) fn fit(mesh: &MeshView<'_>, cage: Option<&CageOverlay>, creases: &[[u32; 2]]) -> Self {
        let points = || {
            let mesh_points = mesh.face_verts.iter().chain(creases.iter().flatten());
            let cage_points = cage.into_iter().flat_map(|c| c.edges.iter().flatten().map(|&v| c.positions[v as usize]));
            mesh_points.map(|&v| mesh.positions.get(v as usize)).chain(cage_points)
        };
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in points() {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let unit = Self { centre: [0.0; 3], scale: 1.0, norm: 1.0 };
        if lo[0] > hi[0] {
            return unit;
        }
        let centre = [0, 1, 2].map(|k| 0.5 * lo[k] + 0.5 * hi[k]);
        let half = |p: [f64; 3]| [0, 1, 2].map(|k| 0.5 * p[k] - 0.5 * centre[k]);
        let scale = points().flat_map(half).fold(0.0, |m: f64, d| m.max(d.abs()));
        if !(scale > 0.0 && scale.is_finite()) {
            // A single point.
            return Self { centre, ..unit };
        }
        let norm =
            points().map(|p| half(p).iter().map(|d| (d / scale).powi(2)).sum::<f64>().sqrt()).fold(0.0, f64::max);
        Self { centre, scale, norm }
    }

    pub(crate) fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|k| (0.5 * p[k] - 0.5 * self.centre[k]) / self.scale / self.norm)
    }
}

/// Floats per mesh vertex: position, normal.
pub(crate) const MESH_VERTEX_FLOATS: usize = 9;
/// Floats per line instance: endpoints, linear RGBA, width in pixels.
pub(crate) const LINE_FLOATS: usize = 11;

/// Newell's normal of the polygon `at(0), …, at(n − 1)`: twice its area
/// times its unit normal when planar, a sound average otherwise.
fn newell(n: usize, at: impl Fn(usize) -> [f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    if n == 0 {
        return out;
    }
    let mut prev = at(n - 1);
    for i in 0..n {
        let p = at(i);
        out[0] += (prev[1] - p[1]) * (prev[2] + p[2]);
        out[1] += (prev[2] - p[2]) * (prev[0] + p[0]);
        out[2] += (prev[0] - p[0]) * (prev[1] + p[1]);
        prev = p;
    }
    out
}

fn unit_f32(n: [f64; 3]) -> [f32; 3] {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() { n.map(|c| (c / len) as f32) } else { [0.0; 3] }
}

/// Area-weighted unit normals of the vertices, from the drawn faces'
/// Newell normals (`face_normal`).
fn vertex_normals(mesh: &MeshView<'_>, face_normal: impl Fn(usize) -> [f64; 3]) -> Vec<[f32; 3]> {
    let mut acc = vec![[0.0f64; 3]; mesh.num_vertices()];
    for f in (0..mesh.num_faces()).filter(|&f| mesh.drawn(f)) {
        let n = face_normal(f);
        for &v in mesh.face(f) {
            let a = &mut acc[v as usize];
            a[0] += n[0];
            a[1] += n[1];
            a[2] += n[2];
        }
    }
    acc.into_iter().map(unit_f32).collect()
}

/// Triangle-list vertex data (position, normal, texture coordinate and
/// whether there is one; [`MESH_VERTEX_FLOATS`] floats per vertex) of the drawn faces, fanned, in chunks of at most
/// `max_triangles` triangles. The mesh is validated.
pub(crate) fn triangles(
    mesh: &MeshView<'_>,
    norm: &Normalise,
    shading: Shading,
    max_triangles: usize,
) -> Vec<Vec<f32>> {
    let point = |v: u32| norm.apply(mesh.positions.get(v as usize));
    let face_normal = |f: usize| {
        let face = mesh.face(f);
        newell(face.len(), |i| point(face[i]))
    };
    let smooth = match shading {
        Shading::Flat => None,
        Shading::Smooth => Some(vertex_normals(mesh, face_normal)),
    };
    let max_triangles = max_triangles.max(1);
    let mut chunks = Vec::new();
    let mut chunk: Vec<f32> = Vec::new();
    for f in (0..mesh.num_faces()).filter(|&f| mesh.drawn(f)) {
        let face = mesh.face(f);
        let flat = match smooth {
            None => Some(unit_f32(face_normal(f))),
            Some(_) => None,
        };
        let first = mesh.face_ptr[f] as usize;
        let vertex = |k: usize| -> [f32; MESH_VERTEX_FLOATS] {
            let v = face[k];
            let p = point(v).map(|c| c as f32);
            let n = match (&smooth, flat) {
                (Some(s), _) => s[v as usize],
                (None, Some(n)) => n,
                (None, None) => [0.0; 3],
            };
            let uv = mesh.texcoords.map_or([0.0, 0.0, 0.0], |(values, indices)| {
                let t = values[indices[first + k] as usize];
                [t[0] as f32, t[1] as f32, 1.0]
            });
            [p[0], p[1], p[2], n[0], n[1], n[2], uv[0], uv[1], uv[2]]
        };
        for i in 1..face.len() - 1 {
            if chunk.len() == max_triangles * 3 * MESH_VERTEX_FLOATS {
                chunks.push(std::mem::take(&mut chunk));
            }
            for k in [0, i, i + 1] {
                chunk.extend_from_slice(&vertex(k));
            }
        }
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// One line instance ([`LINE_FLOATS`] floats).
pub(crate) fn line_instance(a: [f64; 3], b: [f64; 3], colour: [f32; 4], width: f32) -> [f32; LINE_FLOATS] {
    let a = a.map(|c| c as f32);
    let b = b.map(|c| c as f32);
    [a[0], a[1], a[2], b[0], b[1], b[2], colour[0], colour[1], colour[2], colour[3], width]
}

/// Line instances of the cage and the creases (validated), normalised.
pub(crate) fn lines(
    mesh: &MeshView<'_>,
    norm: &Normalise,
    cage: Option<(&CageOverlay, [f32; 4], f32)>,
    creases: (&[[u32; 2]], [f32; 4], f32),
) -> Vec<f32> {
    let mut out = Vec::new();
    if let Some((cage, colour, width)) = cage {
        for &[a, b] in &cage.edges {
            let pa = norm.apply(cage.positions[a as usize]);
            let pb = norm.apply(cage.positions[b as usize]);
            out.extend_from_slice(&line_instance(pa, pb, colour, width));
        }
    }
    let (creases, colour, width) = creases;
    for &[a, b] in creases {
        let pa = norm.apply(mesh.positions.get(a as usize));
        let pb = norm.apply(mesh.positions.get(b as usize));
        out.extend_from_slice(&line_instance(pa, pb, colour, width));
    }
    out
}

/// Linear value of an 8-bit sRGB channel.
pub(crate) fn srgb_to_linear(c: u8) -> f64 {
    let c = f64::from(c) / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// Linear RGBA of an sRGB colour with straight alpha.
pub(crate) fn linear_rgba(c: [u8; 4]) -> [f32; 4] {
    [srgb_to_linear(c[0]) as f32, srgb_to_linear(c[1]) as f32, srgb_to_linear(c[2]) as f32, f32::from(c[3]) / 255.0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newell_of_unit_square_is_twice_its_area() {
        let sq = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        assert_eq!(newell(4, |i| sq[i]), [0.0, 0.0, 2.0]);
    }

    #[test]
    fn fans_split_into_chunks() {
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.5, 0.0]];
        let ptr = [0, 5];
        let verts = [0, 1, 2, 3, 4];
        let mesh = MeshView::new(&p[..], &ptr, &verts);
        mesh.validate().unwrap();
        let norm = Normalise::fit(&mesh, None, &[]);
        let chunks = triangles(&mesh, &norm, Shading::Flat, 2);
        let sizes: Vec<usize> = chunks.iter().map(|c| c.len() / (3 * MESH_VERTEX_FLOATS)).collect();
        assert_eq!(sizes, [2, 1]);
    }

    /// The same cube scaled by `s`, normalised: the unit cube's corners
    /// on the unit sphere, whatever `s` (regression: coordinates of 1e155
    /// and more overflowed the radius, of 1e-200 and less underflowed it,
    /// and the picture came out blank).
    #[test]
    fn normalising_huge_and_tiny_meshes_gives_the_unit_mesh() {
        let ptr = [0, 4, 8];
        let verts = [0, 1, 2, 3, 4, 5, 6, 7];
        let corner =
            |i: usize| [(i & 1) as f64 * 2.0 - 1.0, (i >> 1 & 1) as f64 * 2.0 - 1.0, (i >> 2) as f64 * 2.0 - 1.0];
        let unit: Vec<[f64; 3]> = (0..8).map(corner).collect();
        let reference = {
            let mesh = MeshView::new(&unit, &ptr, &verts);
            let n = Normalise::fit(&mesh, None, &[]);
            unit.iter().map(|&p| n.apply(p)).collect::<Vec<_>>()
        };
        for r in &reference {
            let len = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            assert!((len - 1.0).abs() < 1e-12, "{r:?}");
        }
        for (s, offsets) in [
            (1e155, &[0.0, 3.0][..]),
            (1e300, &[0.0, 3.0]),
            (f64::MAX / 2.0, &[0.0]),
            (1e-200, &[0.0, 3.0]),
            (1e-300, &[0.0, 3.0]),
            (1e-307, &[0.0, 3.0]),
        ] {
            for &offset in offsets {
                let p: Vec<[f64; 3]> = unit.iter().map(|c| c.map(|x| (x + offset) * s)).collect();
                let mesh = MeshView::new(&p, &ptr, &verts);
                let n = Normalise::fit(&mesh, None, &[]);
                for (q, r) in p.iter().zip(&reference) {
                    let got = n.apply(*q);
                    for k in 0..3 {
                        assert!((got[k] - r[k]).abs() < 1e-9, "scale {s:e}, offset {offset}: {got:?} != {r:?}");
                    }
                }
            }
        }
        // Coordinates at both ends of f64's range at once.
        let p = [[-f64::MAX, 0.0, 0.0], [f64::MAX, 0.0, 0.0], [0.0, f64::MAX, 0.0]];
        let mesh = MeshView::new(&p[..], &[0, 3], &[0, 1, 2]);
        let n = Normalise::fit(&mesh, None, &[]);
        for q in p {
            assert!(n.apply(q).iter().all(|c| c.is_finite() && c.abs() <= 1.0), "{:?}", n.apply(q));
        }
    }

    #[test]
    fn srgb_round_trip_of_every_byte() {
        for c in 0..=255u8 {
            let l = srgb_to_linear(c);
            let back = if l <= 0.0031308 { l * 12.92 } else { 1.055 * l.powf(1.0 / 2.4) - 0.055 };
            assert_eq!((back * 255.0).round() as u8, c);
        }
    }
}
