//! One split of a mesh into hexahedra, its connectivity written from the
//! parent's with no hashing and no search beyond a cell's own corners.
//!
//! The split (the topology of a Catmull-Clark solid step) puts a point in
//! every edge, face and cell and makes one hexahedron of each cell corner.
//! Every element of the child is named by an element of the parent, so the
//! face and edge tables of [`VolMesh::from_cells`] become plain arrays
//! indexed by those names:
//!
//! * a child face is either the quarter of parent face `f` at its corner
//!   `i` (named by the corner's slot `face_ptr[f] + i`, shared by the two
//!   cells of `f`), or the face inside parent cell `c` through the midpoint
//!   of its edge `e` (shared by the two children of `c` at `e`'s ends);
//! * a child edge is either half of parent edge `e` (slot `2e` or `2e + 1`
//!   by its end), or runs inside parent face `f` from its centre to the
//!   midpoint of its edge `k` (slot `face_ptr[f] + k`), or inside parent cell
//!   `c` from its centre to the centre of its face `j` (slot
//!   `cell_face_ptr[c] + j`).
//!
//! Faces and edges are then numbered in the order the child cells and
//! faces first use them, the numbering [`VolMesh::from_cells`] gives, so the
//! result equals `VolMesh::from_cells` of the child cells field for field
//! (tested on every example shape). The child is valid by construction
//! when the parent is: no check runs again.

use rayon::prelude::*;
use subla_algebra::Par;

use super::{NONE, VolMesh, edge_incidence, to_u32};
use crate::cell::CellKind;
use crate::error::Result;

/// A child face's name: a parent face corner's slot, or a parent cell's
/// edge (resolved within the cell).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FaceName {
    Corner(u32),
    CellEdge(u32),
}

/// One child hexahedron and the names of its six faces in
/// [`CellKind::faces`] order.
type Child = ([u32; 8], [FaceName; 6]);

/// A corner of an outward face of a cell: the vertex, the previous and
/// next vertex round the face seen from outside, the face, the vertex's
/// place in the face as stored, and the edge to the next vertex.
#[derive(Copy, Clone, Debug)]
struct Corner {
    v: u32,
    prev: u32,
    next: u32,
    face: u32,
    place: u32,
    edge: u32,
}

impl VolMesh {
    /// The mesh after one split into hexahedra (the topology of a
    /// Catmull-Clark solid step): child vertices numbered vertices, then
    /// edge, face and cell midpoints, each in this mesh's order; one
    /// hexahedron per cell corner, cell after cell, corners in the cell's
    /// vertex order. Corner `v` with neighbours `n₁ n₂ n₃` turning
    /// positively becomes `(v, E(n₁), F(n₁n₂), E(n₂), E(n₃), F(n₁n₃), C,
    /// F(n₂n₃))` in VTK's order, so children keep the parent's orientation.
    ///
    /// Equal to [`VolMesh::from_cells`] of those hexahedra, numbering
    /// included, but written from this mesh's connectivity with arrays
    /// instead of hash tables, and not checked again (a split of a valid
    /// mesh is valid).
    ///
    /// # Errors
    /// [`VolumeError::TooLarge`](crate::VolumeError::TooLarge) where the child's ids pass 32 bits.
    pub fn split(&self, par: Par) -> Result<VolMesh> {
        let (nv, ne, nf, nc) = (self.num_vertices, self.num_edges(), self.num_faces(), self.num_cells());
        let num_vertices = nv + ne + nf + nc;
        to_u32("vertices", num_vertices)?;
        let num_cells = self.cell_verts.len();
        // Every count below is at most the face corners, 4 per face of each
        // child: faces, face vertices, edges and ids all fit once they do.
        to_u32("face vertices", 24 * num_cells)?;
        let children: Vec<Child> = if par == Par::Rayon && nc >= 256 {
            (0..nc)
                .into_par_iter()
                .with_min_len(64)
                .map_init(Vec::new, |scratch, c| self.children_of(c, scratch))
                .flatten_iter()
                .collect()
        } else {
            let mut scratch = Vec::new();
            (0..nc).flat_map(|c| self.children_of(c, &mut scratch)).collect()
        };
        debug_assert_eq!(children.len(), num_cells);

        // Faces, in the order the child cells first use them.
        let hex = CellKind::Hexahedron.faces();
        let mut corner_face = vec![NONE; self.face_verts.len()];
        let mut cell_edge_face: Vec<(u32, u32)> = Vec::new();
        let mut face_ptr = Vec::with_capacity(3 * num_cells + 1);
        face_ptr.push(0u32);
        let mut face_verts: Vec<u32> = Vec::with_capacity(12 * num_cells);
        let mut face_cells: Vec<[u32; 2]> = Vec::with_capacity(3 * num_cells);
        let mut cell_faces: Vec<u32> = Vec::with_capacity(6 * num_cells);
        for c in 0..nc {
            cell_edge_face.clear();
            let first = self.cell_vert_ptr[c] as usize;
            let last = self.cell_vert_ptr[c + 1] as usize;
            for (child, (verts, names)) in (first..last).zip(&children[first..last]) {
                for (local, &name) in hex.iter().zip(names) {
                    let slot = match name {
                        FaceName::Corner(i) => &mut corner_face[i as usize],
                        FaceName::CellEdge(e) => match cell_edge_face.iter().position(|p| p.0 == e) {
                            Some(k) => &mut cell_edge_face[k].1,
                            None => {
                                cell_edge_face.push((e, NONE));
                                &mut cell_edge_face.last_mut().expect("just pushed").1
                            }
                        },
                    };
                    if *slot == NONE {
                        let id = face_cells.len() as u32;
                        *slot = id;
                        face_verts.extend(local.iter().map(|&k| verts[k as usize]));
                        face_ptr.push(face_verts.len() as u32);
                        face_cells.push([child as u32, NONE]);
                        cell_faces.push(2 * id);
                    } else {
                        face_cells[*slot as usize][1] = child as u32;
                        cell_faces.push(2 * *slot + 1);
                    }
                }
            }
        }
        drop(corner_face);

        // Edges, in the order the faces first use them.
        let (nv32, ne32, nf32) = (nv as u32, ne as u32, nf as u32);
        let corner_slots = self.face_verts.len();
        let mut edge_of = vec![NONE; 2 * ne + corner_slots + self.cell_faces.len()];
        let mut edges: Vec<[u32; 2]> = Vec::with_capacity(3 * num_cells + ne);
        let mut face_edges = Vec::with_capacity(face_verts.len());
        for f in 0..face_cells.len() {
            let fv = &face_verts[face_ptr[f] as usize..face_ptr[f + 1] as usize];
            for (k, &a) in fv.iter().enumerate() {
                let b = fv[(k + 1) % fv.len()];
                let (lo, hi) = (a.min(b), a.max(b));
                // Half an edge, a face's spoke or a cell's spoke, by the kinds
                // of its ends (vertex < edge < face < cell points).
                let slot = if lo < nv32 {
                    let e = hi - nv32;
                    2 * e as usize + usize::from(self.edges[e as usize][1] == lo)
                } else if lo < nv32 + ne32 {
                    let (e, pf) = (lo - nv32, (hi - nv32 - ne32) as usize);
                    let k = self.face_edges(pf).iter().position(|&x| x == e).unwrap_or(0);
                    2 * ne + self.face_ptr[pf] as usize + k
                } else {
                    let (pf, pc) = (lo - nv32 - ne32, (hi - nv32 - ne32 - nf32) as usize);
                    let j = self.cell_faces(pc).iter().position(|&x| x >> 1 == pf).unwrap_or(0);
                    2 * ne + corner_slots + self.cell_face_ptr[pc] as usize + j
                };
                if edge_of[slot] == NONE {
                    edge_of[slot] = edges.len() as u32;
                    edges.push([lo, hi]);
                }
                face_edges.push(edge_of[slot]);
            }
        }
        // A sharp edge's halves are sharp; a corner's vertex point is a
        // corner.
        let sharp = if self.sharp.is_empty() {
            Vec::new()
        } else {
            let mut sharp = vec![false; edges.len()];
            for (s, &half) in self.sharp.iter().flat_map(|s| [s, s]).zip(&edge_of[..2 * ne]) {
                if *s && half != NONE {
                    sharp[half as usize] = true;
                }
            }
            sharp
        };
        let mut corners = self.corners.clone();
        if !corners.is_empty() {
            corners.resize(num_vertices, false);
        }
        drop(edge_of);
        let [edge_face_ptr, edge_faces, vertex_edge_ptr, vertex_edges] =
            edge_incidence(num_vertices, &face_ptr, &face_edges, &edges);
        Ok(VolMesh {
            num_vertices,
            kinds: vec![CellKind::Hexahedron; num_cells],
            cell_vert_ptr: (0..=num_cells as u32).map(|c| 8 * c).collect(),
            cell_verts: children.iter().flat_map(|(v, _)| v.iter().copied()).collect(),
            cell_face_ptr: (0..=num_cells as u32).map(|c| 6 * c).collect(),
            cell_faces,
            face_ptr,
            face_verts,
            face_cells,
            face_edges,
            edges,
            edge_face_ptr,
            edge_faces,
            vertex_edge_ptr,
            vertex_edges,
            sharp,
            corners,
        })
    }

    /// The child hexahedra of cell `c` with the names of their faces.
    fn children_of(&self, c: usize, corners: &mut Vec<Corner>) -> Vec<Child> {
        let (nv, ne, nf) = (self.num_vertices as u32, self.num_edges() as u32, self.num_faces() as u32);
        corners.clear();
        for &code in self.cell_faces(c) {
            let f = code >> 1;
            let (fv, fe) = (self.face(f as usize), self.face_edges(f as usize));
            let k = fv.len();
            for i in 0..k {
                let back = (i + k - 1) % k;
                let (prev, next, edge) = if code & 1 == 0 {
                    (fv[back], fv[(i + 1) % k], fe[i])
                } else {
                    (fv[(i + 1) % k], fv[back], fe[back])
                };
                corners.push(Corner { v: fv[i], prev, next, face: f, place: i as u32, edge });
            }
        }
        let centre = nv + ne + nf + c as u32;
        self.cell_vertices(c)
            .iter()
            .map(|&v| {
                // The corner's three face corners: the first, then each
                // one's next as the following one's previous.
                let mut here = corners.iter().filter(|x| x.v == v);
                let r1 = *here.next().expect("a cell vertex has three faces");
                let after = |prev: u32| *corners.iter().find(|x| x.v == v && x.prev == prev).unwrap_or(&r1);
                let r2 = after(r1.next);
                let r3 = after(r2.next);
                let slot = |r: &Corner| FaceName::Corner(self.face_ptr[r.face as usize] + r.place);
                (
                    [
                        v,
                        nv + r1.edge,
                        nv + ne + r2.face,
                        nv + r2.edge,
                        nv + r3.edge,
                        nv + ne + r1.face,
                        centre,
                        nv + ne + r3.face,
                    ],
                    [
                        slot(&r2),
                        FaceName::CellEdge(r3.edge),
                        slot(&r1),
                        FaceName::CellEdge(r1.edge),
                        FaceName::CellEdge(r2.edge),
                        slot(&r3),
                    ],
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::examples;

    /// The split equals `from_cells` of its own cells, field for field, on
    /// every example shape and a grid over two levels, on one thread and
    /// many.
    #[test]
    fn the_split_is_from_cells_of_its_cells() {
        let mut shapes = examples().unwrap();
        // Past the size where the cells are split in parallel.
        shapes.push(("grid", crate::shapes::hex_grid(7, 7, 6).unwrap()));
        for (name, d) in shapes {
            let mut m = d.mesh;
            for level in 0..2 {
                let seq = m.split(Par::Seq).unwrap();
                let cells: Vec<_> = seq.cells().collect();
                let want = VolMesh::from_cells(seq.num_vertices(), &cells).unwrap();
                assert_eq!(seq, want, "{name}, level {level}");
                assert_eq!(m.split(Par::Rayon).unwrap(), seq, "{name}, level {level}");
                m = seq;
            }
        }
    }
}
