//! The error type of the crate.

use std::path::PathBuf;

/// What can go wrong building, checking, reading or writing a volumetric
/// mesh. Every variant about the mesh names the cell, face, edge or vertex.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VolumeError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file could not be parsed.
    #[error("line {line}: {detail}")]
    Parse {
        /// The line (1-based; for binary sections, the line of the section's
        /// header).
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A file holds a cell type that is not a 3D cell this crate reads.
    #[error("cell {cell}: {what} is not supported (subla holds tetrahedra, hexahedra, wedges and polyhedra)")]
    UnsupportedCellType {
        /// The cell, in file order.
        cell: usize,
        /// Its type, as the file names it (`"VTK type 9 (quad)"`, `"Medit Triangles"`).
        what: String,
    },
    /// A cell names a vertex that does not exist.
    #[error("cell {cell}: vertex {vertex} out of range ({num_vertices} vertices)")]
    VertexOutOfRange {
        /// The cell.
        cell: usize,
        /// The vertex it names.
        vertex: u32,
        /// Number of vertices.
        num_vertices: usize,
    },
    /// A cell is degenerate: a repeated vertex, a face of fewer than three
    /// vertices, or no volume.
    #[error("cell {cell}: degenerate: {detail}")]
    DegenerateCell {
        /// The cell.
        cell: usize,
        /// What is degenerate.
        detail: String,
    },
    /// A cell's faces do not close into one polyhedron (an edge used by
    /// one face, by more than two, or twice the same way; or not a
    /// sphere).
    #[error("cell {cell}: its faces do not bound a polyhedron: {detail}")]
    NotAPolyhedron {
        /// The cell.
        cell: usize,
        /// What is wrong.
        detail: String,
    },
    /// A cell is inverted: negative volume, or for a tetrahedron, hexahedron
    /// or wedge a corner whose edges turn the wrong way (the vertex order
    /// does not follow the kind's convention, or the cell is tangled).
    #[error("cell {cell}: inverted at vertex {vertex} (signed measure {measure:e}); check the vertex order")]
    InvertedCell {
        /// The cell.
        cell: usize,
        /// The vertex (for a whole-cell volume, the cell's first vertex).
        vertex: u32,
        /// The signed volume, or the scaled corner Jacobian.
        measure: f64,
    },
    /// A cell has a vertex with other than three faces around it in the
    /// cell (an `n`-sided pyramid's apex, `n ≥ 4`): Catmull-Clark solids
    /// refine it into a cell that never becomes a hexahedron.
    #[error(
        "cell {cell} ({kind}): vertex {vertex} has {faces} faces in the cell; Catmull-Clark solids need three at every vertex (pyramids with four or more sides do not refine into hexahedra)"
    )]
    UnsupportedCell {
        /// The cell.
        cell: usize,
        /// Its kind (`"pyramid"`, ...).
        kind: &'static str,
        /// The vertex.
        vertex: u32,
        /// Its number of faces in the cell.
        faces: usize,
    },
    /// A face is shared by more than two cells.
    #[error("face {face:?} is shared by more than two cells ({cells:?} and more)")]
    NonManifoldFace {
        /// The face's vertices.
        face: Vec<u32>,
        /// Cells that use it.
        cells: [usize; 3],
    },
    /// Two cells use a shared face the same way round (one of them is
    /// inverted relative to the other), or with different vertex orders.
    #[error("cells {} and {} use face {face:?} inconsistently ({detail})", cells[0], cells[1])]
    MisorientedFace {
        /// The face's vertices, as the first cell has them.
        face: Vec<u32>,
        /// The two cells.
        cells: [usize; 2],
        /// What differs.
        detail: &'static str,
    },
    /// A face of a cell meets its neighbours only in part: a boundary
    /// vertex lies on a boundary edge of another cell without being one of
    /// its ends (a hanging vertex), or coincides with another vertex (cells
    /// whose shared vertices were not merged).
    #[error("cell {cell}: non-conforming: vertex {vertex} {detail} edge {}-{} of the cell", edge[0], edge[1])]
    NonConforming {
        /// The cell whose edge is met.
        cell: usize,
        /// The edge.
        edge: [u32; 2],
        /// The vertex.
        vertex: u32,
        /// `"lies inside"` or `"coincides with an end of"`.
        detail: &'static str,
    },
    /// An edge where cells meet only along the edge (four or more boundary
    /// faces use it).
    #[error("edge {}-{} is non-manifold: {faces} boundary faces use it (cells {cells:?} meet only along it)", edge[0], edge[1])]
    NonManifoldEdge {
        /// The edge.
        edge: [u32; 2],
        /// Number of boundary faces that use it.
        faces: usize,
        /// Two cells that meet there.
        cells: [usize; 2],
    },
    /// A vertex where cells meet only at the vertex (the boundary faces
    /// around it form more than one fan).
    #[error("vertex {vertex} is non-manifold: cells meet only at it (its boundary faces form {fans} fans)")]
    NonManifoldVertex {
        /// The vertex.
        vertex: u32,
        /// Number of fans.
        fans: usize,
    },
    /// A vertex position is not finite.
    #[error("vertex {vertex}: coordinate {value} is not finite")]
    NotFinite {
        /// The vertex.
        vertex: usize,
        /// The coordinate.
        value: f64,
    },
    /// A pair of vertices given as a sharp edge is not an edge of the mesh.
    #[error("sharp edge {}–{}: not an edge of the mesh", vertices[0], vertices[1])]
    NoSuchEdge {
        /// The two vertices.
        vertices: [u32; 2],
    },
    /// A vertex given as a corner is past the mesh's vertices.
    #[error("corner {vertex}: the mesh has {num_vertices} vertices")]
    NoSuchVertex {
        /// The vertex.
        vertex: u32,
        /// Vertices of the mesh.
        num_vertices: usize,
    },
    /// A count does not fit the 32-bit ids the crate uses.
    #[error("{what}: {value} does not fit 32-bit ids")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// The count.
        value: u128,
    },
    /// The positions array does not have one row of three coordinates per
    /// vertex.
    #[error("positions: {rows} rows of {cols} columns for {num_vertices} vertices (need {num_vertices} × 3)")]
    Positions {
        /// Rows given.
        rows: usize,
        /// Columns given.
        cols: usize,
        /// Vertices of the mesh.
        num_vertices: usize,
    },
    /// A data array does not have one row per point or cell.
    #[error("field {name:?}: {rows} rows for {expected} {of}")]
    FieldLength {
        /// The field.
        name: String,
        /// Rows given.
        rows: usize,
        /// Rows needed.
        expected: usize,
        /// `"points"` or `"cells"`.
        of: &'static str,
    },
    /// Data that a file format cannot hold as it is (a Medit reference
    /// that is not an integer); nothing was written.
    #[error("cannot write a {format} file: {detail}")]
    Unwritable {
        /// The format (`"Medit"`).
        format: &'static str,
        /// What cannot be written.
        detail: String,
    },
    /// Memory for a result could not be allocated.
    #[error(transparent)]
    Algebra(#[from] subla_algebra::AlgebraError),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, VolumeError>;
