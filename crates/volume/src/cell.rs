//! Cells as a caller hands them, and the faces of each kind in VTK's
//! vertex order.
//!
//! Every face is listed with its vertices counter-clockwise seen from
//! outside the cell (its normal, by the right-hand rule, points out). The
//! orders are VTK's (`vtkTetra`, `vtkHexahedron`, `vtkWedge`,
//! `vtkPyramid`); note that VTK's wedge lists its first triangle with the
//! normal pointing away from the second, where the hexahedron's and the
//! pyramid's base point towards the rest of the cell.
//!
//! ```text
//!        7-------6      hexahedron: base 0 1 2 3, top 4 5 6 7
//!       /|      /|      (4 above 0); wedge: triangles 0 1 2 and
//!      4-------5 |      3 4 5 (3 above 0); pyramid: base 0 1 2 3,
//!      | 3-----|-2      apex 4; tetrahedron: base 0 1 2, apex 3.
//!      |/      |/
//!      0-------1
//! ```

/// One cell of a volumetric mesh, as read from a file or built by a
/// caller: a kind and its vertices in VTK's order, or a general polyhedron
/// given by its faces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// A tetrahedron: base `0 1 2`, its normal pointing towards `3`.
    Tetra([u32; 4]),
    /// A hexahedron: base `0 1 2 3`, its normal pointing towards the top
    /// `4 5 6 7` (`4` above `0`).
    Hexahedron([u32; 8]),
    /// A wedge (triangular prism): triangle `0 1 2`, its normal pointing
    /// away from `3 4 5` (`3` above `0`).
    Wedge([u32; 6]),
    /// A pyramid: base `0 1 2 3`, its normal pointing towards the apex `4`.
    /// Catmull-Clark solids cannot refine it (its apex has four faces);
    /// validation refuses it, naming the cell.
    Pyramid([u32; 5]),
    /// A general polyhedron: its faces, each a loop of vertices
    /// counter-clockwise seen from outside (VTK's `VTK_POLYHEDRON` face
    /// stream).
    Polyhedron(Vec<Vec<u32>>),
}

/// Tetrahedron faces, outward.
const TETRA: [&[u8]; 4] = [&[0, 2, 1], &[0, 1, 3], &[1, 2, 3], &[2, 0, 3]];
/// Hexahedron faces, outward.
const HEXAHEDRON: [&[u8]; 6] =
    [&[0, 3, 2, 1], &[4, 5, 6, 7], &[0, 1, 5, 4], &[1, 2, 6, 5], &[2, 3, 7, 6], &[3, 0, 4, 7]];
/// Wedge faces, outward (VTK's wedge: `0 1 2` already points out).
const WEDGE: [&[u8]; 5] = [&[0, 1, 2], &[3, 5, 4], &[0, 3, 4, 1], &[1, 4, 5, 2], &[2, 5, 3, 0]];
/// Pyramid faces, outward.
const PYRAMID: [&[u8]; 5] = [&[0, 3, 2, 1], &[0, 1, 4], &[1, 2, 4], &[2, 3, 4], &[3, 0, 4]];

/// The kind of a cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CellKind {
    /// [`Cell::Tetra`].
    Tetra,
    /// [`Cell::Hexahedron`].
    Hexahedron,
    /// [`Cell::Wedge`].
    Wedge,
    /// [`Cell::Pyramid`].
    Pyramid,
    /// [`Cell::Polyhedron`].
    Polyhedron,
}

impl CellKind {
    /// The VTK cell type number (`VTK_TETRA` 10, `VTK_HEXAHEDRON` 12,
    /// `VTK_WEDGE` 13, `VTK_PYRAMID` 14, `VTK_POLYHEDRON` 42).
    pub fn vtk_type(self) -> u8 {
        match self {
            CellKind::Tetra => 10,
            CellKind::Hexahedron => 12,
            CellKind::Wedge => 13,
            CellKind::Pyramid => 14,
            CellKind::Polyhedron => 42,
        }
    }

    /// The kind of a VTK cell type number, if it is a 3D linear cell.
    pub fn from_vtk_type(t: u32) -> Option<CellKind> {
        Some(match t {
            10 => CellKind::Tetra,
            12 => CellKind::Hexahedron,
            13 => CellKind::Wedge,
            14 => CellKind::Pyramid,
            42 => CellKind::Polyhedron,
            _ => return None,
        })
    }

    /// Number of vertices of a cell of this kind (`None` for polyhedra).
    pub fn num_vertices(self) -> Option<usize> {
        Some(match self {
            CellKind::Tetra => 4,
            CellKind::Hexahedron => 8,
            CellKind::Wedge => 6,
            CellKind::Pyramid => 5,
            CellKind::Polyhedron => return None,
        })
    }

    /// The faces of a cell of this kind as local vertex indices, outward
    /// (empty for polyhedra, whose faces are given).
    pub fn faces(self) -> &'static [&'static [u8]] {
        match self {
            CellKind::Tetra => &TETRA,
            CellKind::Hexahedron => &HEXAHEDRON,
            CellKind::Wedge => &WEDGE,
            CellKind::Pyramid => &PYRAMID,
            CellKind::Polyhedron => &[],
        }
    }

    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Tetra => "tetrahedron",
            CellKind::Hexahedron => "hexahedron",
            CellKind::Wedge => "wedge",
            CellKind::Pyramid => "pyramid",
            CellKind::Polyhedron => "polyhedron",
        }
    }
}

impl Cell {
    /// The kind of this cell.
    pub fn kind(&self) -> CellKind {
        match self {
            Cell::Tetra(_) => CellKind::Tetra,
            Cell::Hexahedron(_) => CellKind::Hexahedron,
            Cell::Wedge(_) => CellKind::Wedge,
            Cell::Pyramid(_) => CellKind::Pyramid,
            Cell::Polyhedron(_) => CellKind::Polyhedron,
        }
    }

    /// The vertices of a cell of a fixed kind in VTK's order; for a
    /// polyhedron, its distinct vertices in the order its faces first use
    /// them.
    pub fn vertices(&self) -> Vec<u32> {
        match self {
            Cell::Tetra(v) => v.to_vec(),
            Cell::Hexahedron(v) => v.to_vec(),
            Cell::Wedge(v) => v.to_vec(),
            Cell::Pyramid(v) => v.to_vec(),
            Cell::Polyhedron(faces) => {
                let mut out: Vec<u32> = Vec::new();
                for &v in faces.iter().flatten() {
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
                out
            }
        }
    }

    /// Calls `f` with each face of the cell, outward, as global vertex
    /// ids.
    pub fn for_each_face(&self, mut f: impl FnMut(&[u32])) {
        let local = |v: &[u32], buf: &mut Vec<u32>, faces: &[&[u8]], f: &mut dyn FnMut(&[u32])| {
            for face in faces {
                buf.clear();
                buf.extend(face.iter().map(|&k| v[k as usize]));
                f(buf);
            }
        };
        let mut buf = Vec::with_capacity(4);
        match self {
            Cell::Tetra(v) => local(v, &mut buf, &TETRA, &mut f),
            Cell::Hexahedron(v) => local(v, &mut buf, &HEXAHEDRON, &mut f),
            Cell::Wedge(v) => local(v, &mut buf, &WEDGE, &mut f),
            Cell::Pyramid(v) => local(v, &mut buf, &PYRAMID, &mut f),
            Cell::Polyhedron(faces) => faces.iter().for_each(|face| f(face)),
        }
    }
}
