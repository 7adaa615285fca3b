//! A volumetric mesh with its vertex positions and the data arrays a file
//! carried (VTK's point and cell data), checked for inverted and
//! degenerate cells.

use ndarray::Array2;

use crate::cell::Cell;
use crate::error::{Result, VolumeError};
use crate::mesh::VolMesh;

/// How a data array is tagged in a VTK file (kept so that it is written
/// back the same way).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// `SCALARS` (one to four components).
    Scalars,
    /// `VECTORS` (three components).
    Vectors,
    /// `NORMALS` (three components).
    Normals,
    /// An array of a `FIELD` block (any number of components).
    Array,
}

/// A named data array: one row per point or per cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// How the file tagged it.
    pub kind: FieldKind,
    /// One row per point or cell, one column per component.
    pub values: Array2<f64>,
}

/// A volumetric mesh, its vertex positions (one row of `x y z` per vertex)
/// and the point and cell data a file carried.
///
/// # Invariants
/// `vertices` has `mesh.num_vertices()` rows of three finite coordinates;
/// every cell has a positive volume, and no tetrahedron, hexahedron or
/// wedge has a corner whose edges turn the wrong way
/// ([`VolumeData::new`] checks it); each field has one row per point (or
/// cell).
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeData {
    /// The cells and their connectivity.
    pub mesh: VolMesh,
    /// Vertex positions, `V × 3`.
    pub vertices: Array2<f64>,
    /// Data per point (VTK `POINT_DATA`), kept through reading and writing.
    pub point_fields: Vec<Field>,
    /// Data per cell (VTK `CELL_DATA`), kept through reading and writing.
    pub cell_fields: Vec<Field>,
}

impl VolumeData {
    /// `mesh` with positions `vertices`, checked: the shape, finite
    /// coordinates, and every cell's orientation and volume
    /// ([`VolMesh::check_geometry`]).
    ///
    /// # Errors
    /// [`VolumeError::Positions`], [`VolumeError::NotFinite`],
    /// [`VolumeError::InvertedCell`], [`VolumeError::DegenerateCell`].
    pub fn new(mesh: VolMesh, vertices: Array2<f64>) -> Result<VolumeData> {
        mesh.check_geometry(&vertices)?;
        Ok(VolumeData { mesh, vertices, point_fields: Vec::new(), cell_fields: Vec::new() })
    }

    /// The mesh of `cells` with positions `vertices`, checked: each cell
    /// and the faces between them ([`VolMesh::from_cells`]), then the
    /// geometry ([`VolMesh::check_geometry`]: orientation, volume, hanging
    /// vertices), then the boundary surface. Testing the geometry before
    /// the boundary names a non-conforming interface as such, where the
    /// connectivity alone would see the vertices it shares as non-manifold.
    ///
    /// # Errors
    /// Those of [`VolMesh::from_cells`] and [`VolumeData::new`].
    pub fn from_cells(vertices: Array2<f64>, cells: &[Cell]) -> Result<VolumeData> {
        let mesh = VolMesh::build(vertices.nrows(), cells)?;
        mesh.check_geometry(&vertices)?;
        mesh.check_boundary()?;
        Ok(VolumeData { mesh, vertices, point_fields: Vec::new(), cell_fields: Vec::new() })
    }

    /// Adds data per point and per cell, checking their lengths.
    ///
    /// # Errors
    /// [`VolumeError::FieldLength`].
    pub fn with_fields(mut self, point_fields: Vec<Field>, cell_fields: Vec<Field>) -> Result<VolumeData> {
        for (fields, expected, of) in
            [(&point_fields, self.mesh.num_vertices(), "points"), (&cell_fields, self.mesh.num_cells(), "cells")]
        {
            if let Some(f) = fields.iter().find(|f| f.values.nrows() != expected) {
                return Err(VolumeError::FieldLength { name: f.name.clone(), rows: f.values.nrows(), expected, of });
            }
        }
        self.point_fields = point_fields;
        self.cell_fields = cell_fields;
        Ok(self)
    }
}
