//! Volumetric control meshes for subla: meshes of cells (hexahedra, and
//! the cells Catmull-Clark solids refine into hexahedra in one step —
//! tetrahedra, wedges, extruded polygons and other polyhedra with three
//! faces at every vertex), their cell–face–edge–vertex incidence as sparse
//! matrices, typed validation that names the offending cell, face, edge or
//! vertex, and VTK legacy and Medit I/O.
//!
//! * [`Cell`], [`CellKind`]: cells as a caller or a file hands them, with
//!   VTK's vertex orders.
//! * [`VolMesh`]: the checked connectivity (faces shared by two cells,
//!   edges, valences, the boundary) and the incidence matrices
//!   ([`VolMesh::cell_face_matrix`], [`VolMesh::face_edge_matrix`],
//!   [`VolMesh::edge_vertex_matrix`], [`VolMesh::cell_vertex_matrix`]).
//! * [`VolumeData`]: a mesh with its positions (inverted and degenerate
//!   cells refused) and the point and cell data a file carried.
//!
//! ```
//! use subla_volume::{Cell, VolMesh};
//! // Two cubes side by side: 12 vertices, 11 faces (one shared), 20 edges.
//! let cells = [
//!     Cell::Hexahedron([0, 1, 4, 3, 6, 7, 10, 9]),
//!     Cell::Hexahedron([1, 2, 5, 4, 7, 8, 11, 10]),
//! ];
//! let m = VolMesh::from_cells(12, &cells)?;
//! assert_eq!((m.num_faces(), m.num_edges()), (11, 20));
//! assert_eq!(m.cell_face_matrix()?.nnz(), 12);
//! # Ok::<(), subla_volume::VolumeError>(())
//! ```
#![deny(missing_docs)]

mod cell;
mod data;
pub mod error;
pub mod medit;
mod mesh;
pub mod shapes;
pub mod vtk;

pub use cell::{Cell, CellKind};
pub use data::{Field, FieldKind, VolumeData};
pub use error::{Result, VolumeError};
pub use mesh::{NONE, VolMesh};
