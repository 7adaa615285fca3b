//! Medit `.mesh` files (ASCII), as Medit, MMG, TetGen, Gmsh and the
//! libMeshb library write them.
//!
//! # Reading
//! [`read_medit`] reads `MeshVersionFormatted 1` to `4` (the versions
//! differ only in binary files), `Dimension 3`, `Vertices n` (`x y z ref`
//! each), `Tetrahedra n` (`v1 … v4 ref`) and `Hexahedra n` (`v1 … v8 ref`),
//! up to `End`. Vertex ids are 1-based. Keywords are case-insensitive, `#`
//! opens a comment running to the end of the line, and numbers are
//! separated by any whitespace (an element may span lines).
//!
//! Medit's tetrahedra and hexahedra list their vertices as VTK's tetra and
//! hexahedron do (`v1 … v4` one face, `v5 … v8` the opposite face, `v(k+4)`
//! above `vk`), so they become [`Cell::Tetra`] and [`Cell::Hexahedron`] as
//! they are, in file order (section by section). The references become a
//! point field and a cell field named [`MEDIT_REF`] ([`FieldKind::Scalars`],
//! one column).
//!
//! `Ridges` (indices into the `Edges` section) become sharp edges and
//! `Corners` corners of the volume ([`VolMesh::with_features`]; a ridge
//! that is not an edge of the volume is [`VolumeError::NoSuchEdge`]); the
//! edges' references are not kept.
//!
//! Boundary and other elements that are not part of the volume
//! (`Triangles`, `Quadrilaterals`, `Edges` no ridge names, `Required…`,
//! `Normals`, `Tangents`, `NormalAt…`, `TangentAt…` and the second-order
//! surface elements) are skipped and reported in [`MeditRead::skipped`],
//! so that a caller can warn.
//!
//! Refused, with an error naming them:
//! * `Prisms` and `Pyramids` sections
//!   ([`VolumeError::UnsupportedCellType`] `"Medit Prisms"`): which of a
//!   prism's triangles Medit's vertex order puts first, relative to VTK's
//!   wedge (whose first triangle faces away from the second), is not
//!   settled here, and guessing wrong would invert every prism; the same
//!   for second-order volume elements (`TetrahedraP2`, `HexahedraQ2`);
//! * binary `.meshb` files, a dimension other than 3, and any other section,
//!   whose layout this reader does not know ([`VolumeError::Parse`]).
//!
//! A truncated or malformed file is a [`VolumeError::Parse`] naming the
//! line and what was expected; a file must end with `End`.
//!
//! # Writing
//! [`write_medit`] writes `MeshVersionFormatted 2` (double precision),
//! `Dimension 3`, the vertices with the [`MEDIT_REF`] point field as their
//! references (0 without one), then a `Hexahedra` or `Tetrahedra` section
//! per kind, in the order each kind first appears, with the [`MEDIT_REF`]
//! cell field: cells come back grouped by kind; then sharp edges as an
//! `Edges` section (reference 0) with `Ridges` naming all of them, and
//! `Corners`. Floats are the shortest text
//! that reads back to the same `f64`. Other cell kinds are refused; other
//! fields have no place in a Medit file and are not written (a caller that
//! converts from VTK may want to warn about them).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use ndarray::Array2;

use crate::cell::{Cell, CellKind};
use crate::data::{Field, FieldKind, VolumeData};
use crate::error::{Result, VolumeError};
use crate::mesh::VolMesh;
use crate::vtk::{Lexer, Token, format_f64, parse_error};

/// The name of the point and cell fields that hold Medit references.
pub const MEDIT_REF: &str = "medit_ref";

/// Sections that are not part of the volume, skipped, with the number of
/// values per element.
const SKIPPED: [(&str, usize); 16] = [
    ("Triangles", 4),
    ("Quadrilaterals", 5),
    ("RequiredVertices", 1),
    ("RequiredEdges", 1),
    ("RequiredTriangles", 1),
    ("RequiredQuadrilaterals", 1),
    ("Normals", 3),
    ("Tangents", 3),
    ("NormalAtVertices", 2),
    ("NormalAtTriangleVertices", 3),
    ("NormalAtQuadrilateralVertices", 3),
    ("TangentAtVertices", 2),
    ("TangentAtEdges", 3),
    ("EdgesP2", 4),
    ("TrianglesP2", 7),
    ("QuadrilateralsQ2", 10),
];

/// Volume sections that are refused.
const REFUSED: [&str; 5] = ["Prisms", "Pyramids", "TetrahedraP2", "HexahedraQ2", "PrismsP2"];

/// A Medit file as read: the volume, and the sections that were skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct MeditRead {
    /// The vertices, the tetrahedra and hexahedra, and the references as
    /// [`MEDIT_REF`] point and cell fields.
    pub data: VolumeData,
    /// Sections that are not part of the volume (boundary elements,
    /// corners, normals, ...), each with its number of elements, in file
    /// order.
    pub skipped: Vec<(String, usize)>,
}

/// Reads a Medit `.mesh` file (see the [module docs](self)).
///
/// # Errors
/// [`VolumeError::Io`] naming the file if it cannot be read, otherwise as
/// [`read_medit`].
pub fn read_medit_file(path: impl AsRef<Path>) -> Result<MeditRead> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| VolumeError::Io { path: path.to_path_buf(), source })?;
    read_medit(&bytes)
}

/// Reads a Medit `.mesh` file held in memory (see the [module docs](self)).
///
/// # Errors
/// * [`VolumeError::Parse`], naming the line, for a binary `.meshb` file, a
///   missing `MeshVersionFormatted` or `End`, a dimension other than 3, a
///   section this reader does not know, a truncated or malformed section;
/// * [`VolumeError::UnsupportedCellType`] for `Prisms`, `Pyramids` and
///   second-order volume elements, naming the cell they would have been;
/// * whatever [`VolMesh::from_cells`] and [`VolumeData::new`] refuse
///   (a vertex out of range, inverted cells, ...).
pub fn read_medit(bytes: &[u8]) -> Result<MeditRead> {
    // libMeshb starts binary files with the 32-bit code 1 in either byte order.
    if bytes.starts_with(&[1, 0, 0, 0]) || bytes.starts_with(&[0, 0, 0, 1]) {
        return Err(parse_error(1, "binary Medit files (.meshb) are not read; convert the file to ASCII .mesh"));
    }
    let mut lx = Lexer::new(bytes, true);
    read_version(&mut lx)?;
    let mut file = Sections::default();
    loop {
        let Some(t) = lx.token() else {
            return Err(parse_error(lx.line(), "expected End, found the end of the file (is the file truncated?)"));
        };
        if t.is("End") {
            return file.finish(t.line);
        }
        file.section(&mut lx, t)?;
    }
}

fn read_version(lx: &mut Lexer<'_>) -> Result<()> {
    let t = lx.expect("MeshVersionFormatted")?;
    if !t.is("MeshVersionFormatted") {
        return Err(parse_error(
            t.line,
            format!("expected MeshVersionFormatted, found `{}`: not a Medit .mesh file", t.show()),
        ));
    }
    let v = lx.expect("a version")?;
    match v.int() {
        Some(1..=4) => Ok(()),
        _ => Err(parse_error(v.line, format!("MeshVersionFormatted `{}`: expected 1, 2, 3 or 4", v.show()))),
    }
}

/// The next token as a number, or an error saying that `what()` was
/// expected.
fn number<'a, T>(lx: &mut Lexer<'a>, parse: fn(&Token<'a>) -> Option<T>, what: impl Fn() -> String) -> Result<T> {
    // `what` is built only for a message: files hold millions of numbers.
    let Some(t) = lx.token() else {
        return Err(parse_error(lx.line(), format!("expected {}, found the end of the file", what())));
    };
    parse(&t).ok_or_else(|| parse_error(t.line, format!("expected {}, found `{}`", what(), t.show())))
}

/// What the sections read so far hold.
#[derive(Default)]
struct Sections {
    dimension: bool,
    /// Coordinates (three per vertex) and references.
    vertices: Option<(Vec<f64>, Vec<f64>)>,
    cells: Vec<Cell>,
    cell_refs: Vec<f64>,
    /// The `Edges` (vertex pairs, 0-based).
    edges: Vec<[u32; 2]>,
    /// The `Ridges` (0-based indices into `edges`), each with its line.
    ridges: Vec<(u32, usize)>,
    /// The `Corners` (0-based vertices).
    corners: Vec<u32>,
    skipped: Vec<(String, usize)>,
}

impl Sections {
    /// Reads the section that keyword `t` opens.
    fn section(&mut self, lx: &mut Lexer<'_>, t: Token<'_>) -> Result<()> {
        match t.lower().as_str() {
            "dimension" => {
                let d = lx.expect("a dimension")?;
                if d.int() != Some(3) {
                    return Err(parse_error(d.line, format!("Dimension {}: only 3D meshes are read", d.show())));
                }
                self.dimension = true;
                Ok(())
            }
            "vertices" => self.read_vertices(lx, t.line),
            "tetrahedra" => self.read_cells(lx, "Tetrahedra", Cell::Tetra),
            "hexahedra" => self.read_cells(lx, "Hexahedra", Cell::Hexahedron),
            "edges" => {
                let edges = read_ids::<3>(lx, "Edges")?;
                self.edges.extend(edges.iter().map(|&([a, b, _], _)| [a, b]));
                Ok(())
            }
            "ridges" => {
                self.ridges.extend(read_ids::<1>(lx, "Ridges")?.iter().map(|&([e], line)| (e, line)));
                Ok(())
            }
            "corners" => {
                self.corners.extend(read_ids::<1>(lx, "Corners")?.iter().map(|&([v], _)| v));
                Ok(())
            }
            _ => {
                if let Some(name) = REFUSED.iter().find(|k| t.is(k)) {
                    return Err(VolumeError::UnsupportedCellType {
                        cell: self.cells.len(),
                        what: format!("Medit {name}"),
                    });
                }
                match SKIPPED.iter().find(|(k, _)| t.is(k)) {
                    Some(&(name, width)) => self.skip(lx, name, width),
                    None if lx.peek().is_none() => Err(parse_error(
                        t.line,
                        format!("unexpected `{}` at the end of the file (is it truncated?)", t.show()),
                    )),
                    None => Err(parse_error(
                        t.line,
                        format!("Medit section `{}` is not read (its layout is not known here)", t.show()),
                    )),
                }
            }
        }
    }

    fn read_vertices(&mut self, lx: &mut Lexer<'_>, line: usize) -> Result<()> {
        if !self.dimension {
            return Err(parse_error(line, "Vertices before `Dimension 3`"));
        }
        if self.vertices.is_some() {
            return Err(parse_error(line, "a second Vertices section"));
        }
        let (n, _) = lx.count("the number of vertices")?;
        let mut coords = Vec::with_capacity(n.saturating_mul(3).min(lx.remaining()));
        let mut refs = Vec::with_capacity(n.min(lx.remaining()));
        for v in 1..=n {
            for axis in ["x", "y", "z"] {
                coords.push(number(lx, Token::float, || format!("the {axis} coordinate of vertex {v} of {n}"))?);
            }
            refs.push(number(lx, Token::int, || format!("the reference of vertex {v} of {n}"))? as f64);
        }
        self.vertices = Some((coords, refs));
        Ok(())
    }

    /// A `Tetrahedra` or `Hexahedra` section (`N` vertices each).
    fn read_cells<const N: usize>(&mut self, lx: &mut Lexer<'_>, name: &str, make: fn([u32; N]) -> Cell) -> Result<()> {
        let (n, _) = lx.count(&format!("the number of {name}"))?;
        let room = n.min(lx.remaining() / (2 * (N + 1)));
        self.cells.reserve(room);
        self.cell_refs.reserve(room);
        for e in 1..=n {
            let mut ids = [0; N];
            for id in &mut ids {
                let what = || format!("a vertex id (1 to 2³²) of {name} element {e} of {n}");
                let k = number(lx, Token::int, what)?;
                *id = k.checked_sub(1).and_then(|k| u32::try_from(k).ok()).ok_or_else(|| {
                    parse_error(lx.line(), format!("{name} element {e}: {k} is not a vertex id (ids start at 1)"))
                })?;
            }
            self.cells.push(make(ids));
            self.cell_refs
                .push(number(lx, Token::int, || format!("the reference of {name} element {e} of {n}"))? as f64);
        }
        Ok(())
    }

    /// Skips a section of elements of `width` values each, reporting it.
    fn skip(&mut self, lx: &mut Lexer<'_>, name: &str, width: usize) -> Result<()> {
        let (n, line) = lx.count(&format!("the number of {name}"))?;
        let values =
            n.checked_mul(width).ok_or_else(|| parse_error(line, format!("{name}: {n} elements is too many")))?;
        for i in 0..values {
            number(lx, Token::float, || format!("a value of {name} element {} of {n}", i / width + 1))?;
        }
        self.skipped.push((name.to_string(), n));
        Ok(())
    }

    /// The volume, at `End` (on `line`).
    fn finish(self, line: usize) -> Result<MeditRead> {
        let (coords, vertex_refs) =
            self.vertices.ok_or_else(|| parse_error(line, "the file has no Vertices section"))?;
        let nv = vertex_refs.len();
        let nc = self.cells.len();
        let shape = |e: ndarray::ShapeError| parse_error(line, e.to_string());
        let positions = Array2::from_shape_vec((nv, 3), coords).map_err(shape)?;
        let refs = |values: Vec<f64>, rows: usize| -> Result<Field> {
            let values = Array2::from_shape_vec((rows, 1), values).map_err(shape)?;
            Ok(Field { name: MEDIT_REF.to_string(), kind: FieldKind::Scalars, values })
        };
        let point_fields = vec![refs(vertex_refs, nv)?];
        let cell_fields = vec![refs(self.cell_refs, nc)?];
        let mut mesh = VolMesh::from_cells(nv, &self.cells)?;
        // Ridges are sharp edges, corners corners; edges no ridge names
        // have no place in the volume.
        let mut used = vec![false; self.edges.len()];
        let mut sharp = Vec::with_capacity(self.ridges.len());
        for &(e, at) in &self.ridges {
            let pair = self.edges.get(e as usize).ok_or_else(|| {
                parse_error(at, format!("ridge {}: the file has {} edges", u64::from(e) + 1, self.edges.len()))
            })?;
            used[e as usize] = true;
            sharp.push(*pair);
        }
        if !sharp.is_empty() || !self.corners.is_empty() {
            mesh = mesh.with_features(&sharp, &self.corners)?;
        }
        let mut skipped = self.skipped;
        let unused = used.iter().filter(|&&u| !u).count();
        if unused > 0 {
            skipped.push(("Edges".to_string(), unused));
        }
        let data = VolumeData::new(mesh, positions)?.with_fields(point_fields, cell_fields)?;
        Ok(MeditRead { data, skipped })
    }
}

/// A section of `n` elements of `N` 1-based ids each (`Edges` carry a
/// reference as their third value, read as an id too and dropped by the
/// caller), 0-based, each with its line.
fn read_ids<const N: usize>(lx: &mut Lexer<'_>, name: &str) -> Result<Vec<([u32; N], usize)>> {
    let (n, _) = lx.count(&format!("the number of {name}"))?;
    let mut out = Vec::with_capacity(n.min(lx.remaining() / (2 * N)));
    let has_reference = name == "Edges";
    for e in 1..=n {
        let mut ids = [0; N];
        for (i, id) in ids.iter_mut().enumerate() {
            let reference = has_reference && i == 2;
            let k = number(lx, Token::int, || format!("a value of {name} element {e} of {n}"))?;
            *id = if reference {
                0
            } else {
                k.checked_sub(1).and_then(|k| u32::try_from(k).ok()).ok_or_else(|| {
                    parse_error(lx.line(), format!("{name} element {e}: {k} is not an id (ids start at 1)"))
                })?
            };
        }
        out.push((ids, lx.line()));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Writing.

/// Writes `data` as a Medit `.mesh` file at `path` (see [`write_medit`]).
///
/// # Errors
/// As [`write_medit`], before the file is created; [`VolumeError::Io`]
/// naming the file if it cannot be created or written.
pub fn write_medit_file(data: &VolumeData, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let plan = Plan::new(data)?;
    let io_err = |source| VolumeError::Io { path: path.to_path_buf(), source };
    let file = File::create(path).map_err(io_err)?;
    plan.write(data, file).map_err(io_err)
}

/// Writes `data` as a Medit `.mesh` file to `w` (buffered internally; see
/// the [module docs](self) for the layout).
///
/// # Errors
/// Before anything is written:
/// * [`VolumeError::UnsupportedCellType`] for a cell other than a
///   tetrahedron or a hexahedron (`"a wedge in a Medit file"`);
/// * [`VolumeError::Unwritable`] for a [`MEDIT_REF`] field of other than
///   one column, or with a value that is not an integer in the 32-bit
///   range Medit references use;
/// * [`VolumeError::Positions`] or [`VolumeError::FieldLength`] where the
///   positions or a [`MEDIT_REF`] field do not match the mesh.
///
/// Then [`VolumeError::Io`], with an empty path, for errors of `w`.
pub fn write_medit(data: &VolumeData, w: impl Write) -> Result<()> {
    let plan = Plan::new(data)?;
    plan.write(data, w).map_err(|source| VolumeError::Io { path: PathBuf::new(), source })
}

/// What a Medit file of `data` holds, checked before anything is written.
struct Plan {
    vertex_refs: Vec<i64>,
    cell_refs: Vec<i64>,
    /// Each section's keyword and cells, in the order each kind first
    /// appears.
    sections: Vec<(&'static str, Vec<usize>)>,
}

impl Plan {
    fn new(data: &VolumeData) -> Result<Plan> {
        let mesh = &data.mesh;
        let (rows, cols) = data.vertices.dim();
        if (rows, cols) != (mesh.num_vertices(), 3) {
            return Err(VolumeError::Positions { rows, cols, num_vertices: mesh.num_vertices() });
        }
        let mut sections: Vec<(&'static str, Vec<usize>)> = Vec::new();
        for c in 0..mesh.num_cells() {
            let keyword = match mesh.kind(c) {
                CellKind::Tetra => "Tetrahedra",
                CellKind::Hexahedron => "Hexahedra",
                kind => {
                    return Err(VolumeError::UnsupportedCellType {
                        cell: c,
                        what: format!("a {} in a Medit file", kind.name()),
                    });
                }
            };
            match sections.iter_mut().find(|s| s.0 == keyword) {
                Some(s) => s.1.push(c),
                None => sections.push((keyword, vec![c])),
            }
        }
        Ok(Plan {
            vertex_refs: references(&data.point_fields, mesh.num_vertices(), "points")?,
            cell_refs: references(&data.cell_fields, mesh.num_cells(), "cells")?,
            sections,
        })
    }

    fn write(&self, data: &VolumeData, w: impl Write) -> io::Result<()> {
        let mut w = BufWriter::new(w);
        let (mut fbuf, mut ibuf) = (ryu::Buffer::new(), itoa::Buffer::new());
        write!(w, "MeshVersionFormatted 2\n\nDimension 3\n\nVertices\n{}\n", data.mesh.num_vertices())?;
        for (row, &r) in data.vertices.rows().into_iter().zip(&self.vertex_refs) {
            for &x in row {
                w.write_all(format_f64(&mut fbuf, x).as_bytes())?;
                w.write_all(b" ")?;
            }
            w.write_all(ibuf.format(r).as_bytes())?;
            w.write_all(b"\n")?;
        }
        for (keyword, cells) in &self.sections {
            write!(w, "\n{keyword}\n{}\n", cells.len())?;
            for &c in cells {
                for &v in data.mesh.cell_vertices(c) {
                    w.write_all(ibuf.format(u64::from(v) + 1).as_bytes())?;
                    w.write_all(b" ")?;
                }
                w.write_all(ibuf.format(self.cell_refs[c]).as_bytes())?;
                w.write_all(b"\n")?;
            }
        }
        // Sharp edges as ridges over an `Edges` section of theirs, corners.
        let mesh = &data.mesh;
        let sharp: Vec<u32> = mesh.sharp_edges().collect();
        if !sharp.is_empty() {
            write!(w, "\nEdges\n{}\n", sharp.len())?;
            for &e in &sharp {
                let [a, b] = mesh.edge(e as usize);
                writeln!(w, "{} {} 0", u64::from(a) + 1, u64::from(b) + 1)?;
            }
            write!(w, "\nRidges\n{}\n", sharp.len())?;
            for k in 1..=sharp.len() {
                writeln!(w, "{k}")?;
            }
        }
        let corners: Vec<u32> = mesh.corners().collect();
        if !corners.is_empty() {
            write!(w, "\nCorners\n{}\n", corners.len())?;
            for &v in &corners {
                writeln!(w, "{}", u64::from(v) + 1)?;
            }
        }
        w.write_all(b"\nEnd\n")?;
        w.flush()
    }
}

/// The references the [`MEDIT_REF`] field among `fields` holds (one per
/// point or cell), zeros without one.
fn references(fields: &[Field], rows: usize, of: &'static str) -> Result<Vec<i64>> {
    let Some(f) = fields.iter().find(|f| f.name == MEDIT_REF) else {
        return Ok(vec![0; rows]);
    };
    let unwritable = |detail: String| VolumeError::Unwritable { format: "Medit", detail };
    let (r, cols) = f.values.dim();
    if r != rows {
        return Err(VolumeError::FieldLength { name: f.name.clone(), rows: r, expected: rows, of });
    }
    if cols != 1 {
        return Err(unwritable(format!("the {of}' {MEDIT_REF} field has {cols} columns; references are one integer")));
    }
    let range = f64::from(i32::MIN)..=f64::from(i32::MAX);
    f.values
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if range.contains(&x) && x.fract() == 0.0 {
                Ok(x as i64)
            } else {
                Err(unwritable(format!("{MEDIT_REF} of {of} {i} is {x}, not a 32-bit integer")))
            }
        })
        .collect()
}
