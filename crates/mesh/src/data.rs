//! A mesh with its vertex data, as read from or written to a file.

use std::ops::Range;

use ndarray::Array2;

use crate::error::{MeshError, Result};
use crate::mesh::Mesh;

/// Face-varying data (OBJ `vt`/`vn`): a table of values and, for every
/// corner of the mesh (face after face, in traversal order), the row of the
/// table it uses.
#[derive(Clone, Debug, PartialEq)]
pub struct FaceVarying {
    /// One row per value (`vt`: 2 or 3 channels, `vn`: 3).
    pub values: Array2<f64>,
    /// Row of `values` used by each corner.
    pub indices: Vec<u32>,
}

/// Kind of a named face range.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// OBJ `g`.
    Group,
    /// OBJ `o`.
    Object,
}

/// A named, contiguous range of faces (OBJ groups and objects are flattened
/// into one mesh; their face ranges are kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// `g` or `o`.
    pub kind: GroupKind,
    /// The name as written (may be empty).
    pub name: String,
    /// Faces from this statement up to the next one of the same kind.
    pub faces: Range<u32>,
}

/// Something a reader read but does not keep: an OBJ statement it has no
/// use for (`usemtl`, `s`, `l`, free-form geometry, an unknown keyword), a
/// PLY element other than `vertex` and `face`, a face property other than
/// the indices, a vertex list property. The tool names each in a warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// What it was, as the file wrote it (`usemtl` statements, PLY face
    /// property `red`), names cut to 40 characters.
    pub what: String,
    /// How many: statements, or instances of the element.
    pub count: u64,
    /// Where the first one is (a line of an OBJ, the header line of a PLY
    /// declaration).
    pub line: usize,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, first on line {})", self.what, self.count, self.line)
    }
}

/// A mesh with its per-vertex data and whatever else its file carried.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshData {
    /// Topology, tags and options.
    pub mesh: Mesh,
    /// Per-vertex data, one row per vertex; positions are the first three
    /// channels.
    pub vertices: Array2<f64>,
    /// Name of each channel of `vertices` (`x`, `y`, `z`, then `w`, `nx`,
    /// `red`, … as the file had them).
    pub channels: Vec<String>,
    /// Texture coordinates (OBJ `vt`), if every face had them.
    pub texcoords: Option<FaceVarying>,
    /// Normals (OBJ `vn`), if every face had them.
    pub normals: Option<FaceVarying>,
    /// Named face ranges.
    pub groups: Vec<Group>,
    /// True when the file declared left-handed (clockwise) winding with the
    /// comment `# osd_ref: lefthanded` used by OpenSubdiv's shapes.
    pub left_handed: bool,
    /// What the reader read but does not keep, in order of first
    /// appearance (empty for meshes not read from a file).
    pub skipped: Vec<Skipped>,
}

/// Faces and per-vertex data to write without a mesh's connectivity: what
/// a refinement hands out as its finest faces, when no tag needs the
/// edges (no sharpness, no holes), with texture coordinates per corner if
/// any. Written by [`crate::obj::write_obj_faces`] and
/// [`crate::ply::write_ply_faces`], with the same text or bytes
/// [`crate::obj::write_obj`] and [`crate::ply::write_ply`] write for a mesh
/// of these faces without tags.
#[derive(Copy, Clone, Debug)]
pub struct FacesData<'a> {
    /// Per-vertex data, one row per vertex.
    pub vertices: &'a Array2<f64>,
    /// Name of each channel of `vertices`.
    pub channels: &'a [String],
    /// Start of each face in `face_verts`, plus the end.
    pub face_ptr: &'a [u32],
    /// The vertices of all faces, face after face.
    pub face_verts: &'a [u32],
    /// Named face ranges.
    pub groups: &'a [Group],
    /// The options written as tags where they differ from the defaults.
    pub options: crate::tags::Options,
    /// Texture coordinates: their values, and one index per face corner.
    pub texcoords: Option<&'a FaceVarying>,
}

/// That `fv` has one index per face corner (`corners` of them), each naming
/// one of its values: what the writers check of texture coordinates.
///
/// # Errors
/// [`std::io::ErrorKind::InvalidInput`] otherwise.
pub(crate) fn check_corner_values(fv: &FaceVarying, corners: usize) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    if fv.indices.len() != corners {
        return Err(invalid(format!("{} texture coordinate indices for {corners} face corners", fv.indices.len())));
    }
    if let Some(&i) = fv.indices.iter().find(|&&i| i as usize >= fv.values.nrows()) {
        return Err(invalid(format!("a corner names texture coordinate {i} of {}", fv.values.nrows())));
    }
    Ok(())
}

impl<'a> FacesData<'a> {
    /// [`FacesData::texcoords`], checked: one index per face corner, each
    /// naming a value.
    ///
    /// # Errors
    /// [`std::io::ErrorKind::InvalidInput`] otherwise.
    pub(crate) fn checked_texcoords(&self) -> std::io::Result<Option<&'a FaceVarying>> {
        let Some(fv) = self.texcoords else { return Ok(None) };
        check_corner_values(fv, self.face_verts.len())?;
        Ok(Some(fv))
    }

    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.face_ptr.len().saturating_sub(1)
    }
    /// The vertices of face `f`.
    pub fn face(&self, f: usize) -> &[u32] {
        &self.face_verts[self.face_ptr[f] as usize..self.face_ptr[f + 1] as usize]
    }
    /// What writing in `format` would leave out or rename, as
    /// [`MeshData::dropped_by`] says it.
    pub fn dropped_by(&self, format: FileFormat) -> Vec<Dropped> {
        let mut out: Vec<Dropped> =
            renamed_channels(self.channels, self.vertices.ncols(), format).into_iter().collect();
        if format == FileFormat::Ply {
            if !self.groups.is_empty() {
                out.push(Dropped::Groups(self.groups.len()));
            }
            if self.texcoords.is_some_and(|fv| fv.values.ncols() < 2) {
                out.push(Dropped::TexCoords);
            }
            if self.options != crate::tags::Options::default() {
                out.push(Dropped::Options);
            }
        }
        out
    }
}

impl MeshData {
    /// A mesh with positions only.
    ///
    /// # Errors
    /// [`MeshError::DataLength`] or [`MeshError::NonFiniteCoordinate`].
    pub fn new(mesh: Mesh, vertices: Array2<f64>) -> Result<Self> {
        mesh.check_vertex_data(&vertices)?;
        let channels = (0..vertices.ncols()).map(default_channel_name).collect();
        Ok(MeshData {
            mesh,
            vertices,
            channels,
            texcoords: None,
            normals: None,
            groups: Vec::new(),
            left_handed: false,
            skipped: Vec::new(),
        })
    }

    /// The positions: the first three channels (fewer if the data has fewer).
    pub fn positions(&self) -> ndarray::ArrayView2<'_, f64> {
        let d = self.vertices.ncols().min(3);
        self.vertices.slice(ndarray::s![.., ..d])
    }

    /// The same data over [`Mesh::triangulated`]: vertex data, channels
    /// and winding as they are, each face-varying value carried by the
    /// corner it came from, and each group's range covering its faces'
    /// triangles.
    ///
    /// # Errors
    /// As [`Mesh::triangulated`]; [`MeshError::DataLength`] if the
    /// face-varying indices do not have one entry per corner.
    pub fn triangulated(&self) -> Result<MeshData> {
        let t = self.mesh.topology();
        let corners = crate::mesh::fan_corners(t)?;
        let carry = |what: &'static str, fv: &Option<FaceVarying>| -> Result<Option<FaceVarying>> {
            let Some(fv) = fv else { return Ok(None) };
            if fv.indices.len() != t.num_corners() {
                return Err(MeshError::DataLength { what, expected: t.num_corners(), found: fv.indices.len() });
            }
            let indices = corners.iter().map(|&c| fv.indices[c as usize]).collect();
            Ok(Some(FaceVarying { values: fv.values.clone(), indices }))
        };
        let texcoords = carry("texture coordinates", &self.texcoords)?;
        let normals = carry("normals", &self.normals)?;
        // First triangle of each input face (and the count after the last).
        let mut first = Vec::with_capacity(t.num_faces() + 1);
        let mut acc = 0u32;
        for f in 0..t.num_faces() {
            first.push(acc);
            acc += t.face_order(f) as u32 - 2;
        }
        first.push(acc);
        let at = |f: u32| first.get(f as usize).copied().unwrap_or(acc);
        let groups = self
            .groups
            .iter()
            .map(|g| Group { kind: g.kind, name: g.name.clone(), faces: at(g.faces.start)..at(g.faces.end) })
            .collect();
        Ok(MeshData {
            mesh: self.mesh.triangulated()?,
            vertices: self.vertices.clone(),
            channels: self.channels.clone(),
            texcoords,
            normals,
            groups,
            left_handed: self.left_handed,
            skipped: self.skipped.clone(),
        })
    }

    /// Checks that the parts agree: one data row per vertex, finite values,
    /// one face-varying index per corner, group ranges inside the mesh.
    ///
    /// # Errors
    /// The first disagreement.
    pub fn validate(&self) -> Result<()> {
        self.mesh.check_vertex_data(&self.vertices)?;
        let nc = self.mesh.topology().num_corners();
        for (what, fv) in [("texture coordinates", &self.texcoords), ("normals", &self.normals)] {
            if let Some(fv) = fv {
                if fv.indices.len() != nc {
                    return Err(MeshError::DataLength { what, expected: nc, found: fv.indices.len() });
                }
                if let Some(&bad) = fv.indices.iter().find(|&&i| i as usize >= fv.values.nrows()) {
                    return Err(MeshError::DataLength { what, expected: bad as usize + 1, found: fv.values.nrows() });
                }
            }
        }
        Ok(())
    }
}

/// A mesh file format this crate reads and writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileFormat {
    /// Wavefront OBJ ([`crate::obj`]).
    Obj,
    /// PLY ([`crate::ply`]), either encoding.
    Ply,
}

/// Something in a [`MeshData`] that a format cannot carry: written to that
/// format and read back, it is lost or changed. [`MeshData::dropped_by`]
/// lists them so that a tool can warn before it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dropped {
    /// Channel names that do not come back: OBJ `v` lines carry values by
    /// position only (see [`crate::obj::obj_channel_names`]); PLY replaces
    /// whitespace in a name. `(channel, name, name read back)`.
    ChannelNames(Vec<(usize, String, String)>),
    /// Groups and objects (PLY has none): how many.
    Groups(usize),
    /// Texture coordinates (PLY has no face-varying data).
    TexCoords,
    /// Normals (PLY has no face-varying data).
    Normals,
    /// Edge sharpness (PLY has no tags): how many sharp edges.
    Creases(usize),
    /// Vertex sharpness (PLY has no tags): how many sharp vertices.
    Corners(usize),
    /// Hole tags (PLY has no tags): how many holes.
    Holes(usize),
    /// Options other than the defaults (PLY has no tags).
    Options,
    /// Left-handed winding (PLY has no such mark).
    LeftHanded,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dropped::ChannelNames(names) => {
                let shown: Vec<String> =
                    names.iter().take(4).map(|(k, from, to)| format!("{k} {from:?} becomes {to:?}")).collect();
                let more = if names.len() > 4 { format!(" and {} more", names.len() - 4) } else { String::new() };
                write!(f, "channel names ({}{more})", shown.join(", "))
            }
            Dropped::Groups(n) => write!(f, "{n} groups"),
            Dropped::TexCoords => write!(f, "texture coordinates"),
            Dropped::Normals => write!(f, "normals"),
            Dropped::Creases(n) => write!(f, "{n} edge sharpness tags"),
            Dropped::Corners(n) => write!(f, "{n} vertex sharpness tags"),
            Dropped::Holes(n) => write!(f, "{n} hole tags"),
            Dropped::Options => write!(f, "subdivision options"),
            Dropped::LeftHanded => write!(f, "the left-handed winding mark"),
        }
    }
}

impl MeshData {
    /// What writing this data as `format` (and reading it back) loses or
    /// changes; empty when the file carries everything. Vertex values,
    /// faces and (for OBJ) tags, groups, texture coordinates and normals
    /// always survive.
    pub fn dropped_by(&self, format: FileFormat) -> Vec<Dropped> {
        let mut out: Vec<Dropped> =
            renamed_channels(&self.channels, self.vertices.ncols(), format).into_iter().collect();
        if format == FileFormat::Ply {
            let m = &self.mesh;
            if !self.groups.is_empty() {
                out.push(Dropped::Groups(self.groups.len()));
            }
            if self.texcoords.as_ref().is_some_and(|fv| fv.values.ncols() < 2) {
                out.push(Dropped::TexCoords);
            }
            if self.normals.is_some() {
                out.push(Dropped::Normals);
            }
            let count = |xs: &[f32]| xs.iter().filter(|&&s| s > 0.0).count();
            let (creases, corners) = (count(m.edge_sharpness()), count(m.vertex_sharpness()));
            let holes = m.holes().iter().filter(|&&h| h).count();
            for (n, d) in [
                (creases, Dropped::Creases(creases)),
                (corners, Dropped::Corners(corners)),
                (holes, Dropped::Holes(holes)),
            ] {
                if n > 0 {
                    out.push(d);
                }
            }
            if m.options() != crate::tags::Options::default() {
                out.push(Dropped::Options);
            }
            if self.left_handed {
                out.push(Dropped::LeftHanded);
            }
        }
        out
    }
}

/// The channels of `channels` (naming `nch` channels) that `format`
/// writes under another name, if any.
fn renamed_channels(channels: &[String], nch: usize, format: FileFormat) -> Option<Dropped> {
    let back = match format {
        FileFormat::Obj => crate::obj::obj_channel_names(nch),
        FileFormat::Ply => (0..nch).map(|k| crate::ply::written_channel_name(channels, nch, k)).collect(),
    };
    let renamed: Vec<(usize, String, String)> = channels
        .iter()
        .zip(back)
        .enumerate()
        .filter(|(_, (from, to))| *from != to)
        .map(|(k, (from, to))| (k, from.clone(), to))
        .collect();
    (!renamed.is_empty() && channels.len() == nch).then_some(Dropped::ChannelNames(renamed))
}

/// `x`, `y`, `z`, `w`, then `c4`, `c5`, ...
pub(crate) fn default_channel_name(k: usize) -> String {
    match k {
        0 => "x".into(),
        1 => "y".into(),
        2 => "z".into(),
        3 => "w".into(),
        _ => format!("c{k}"),
    }
}
