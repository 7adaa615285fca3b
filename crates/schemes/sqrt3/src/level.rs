//! The build step of one √3 level: the checks on the control mesh, the
//! numbering of the new vertices, the stencil of every child vertex, and
//! the child faces (one per parent corner, Mlakar et al. 2020, Fig. 12).

use rayon::prelude::*;
use subla_algebra::Par;
use subla_algebra::mem::{try_filled_vec, try_vec_with_capacity};
use subla_mesh::tags::BoundaryInterpolation;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{Mesh, MeshError, Options, Topology};
use subla_scheme::{LevelCounts, Result, SchemeError};

use crate::split::{Sqrt3Child, Sqrt3Split};

/// No vertex / corner.
pub(crate) const NONE: u32 = u32::MAX;

/// Smoothing weight `α(n) = (4 − 2 cos(2π/n)) / 9` of a vertex of valence
/// `n` (Kobbelt 2000): the vertex becomes `(1 − α) v + (α/n) Σ uᵢ`.
pub fn alpha(n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (4.0 - 2.0 * (2.0 * std::f64::consts::PI / n as f64).cos()) / 9.0
}

/// Weights of a trisection point of a boundary edge `P2 P3` (Kobbelt's
/// even-step rule): the point next to `P2` is `(P1 + 16 P2 + 10 P3) / 27`.
pub const BOUNDARY_EDGE: [f64; 3] = [1.0 / 27.0, 16.0 / 27.0, 10.0 / 27.0];
/// Weights of a boundary vertex on an even step: `(4 P1 + 19 P2 + 4 P3) / 27`.
pub const BOUNDARY_VERTEX: [f64; 2] = [4.0 / 27.0, 19.0 / 27.0];

/// Whether a step is one of Kobbelt's boundary-splitting steps: steps are
/// counted from 0 (the first step of a plan built from a control mesh), and
/// the odd ones (the 2nd, 4th, … step) split boundary edges in three.
pub(crate) fn is_kobbelt_step(global_step: u32) -> bool {
    global_step % 2 == 1
}

/// The counts after the step of index `global_step` over a level of
/// counts `p` (a manifold triangle mesh): a new vertex per face (two per
/// boundary face on a boundary-splitting step), a triangle per corner,
/// boundary edges split in three on such a step.
pub(crate) fn child_counts(p: &LevelCounts, global_step: u32) -> LevelCounts {
    let splits = is_kobbelt_step(global_step) && p.boundary_edges > 0;
    let (extra, boundary) = if splits { (p.boundary_edges, 3 * p.boundary_edges) } else { (0, p.boundary_edges) };
    let faces = p.corners;
    LevelCounts::triangles(p.vertices + p.faces + extra, (3 * faces + boundary).div_ceil(2), faces, boundary)
}

/// Checks the control mesh: triangles only, manifold.
///
/// # Errors
/// [`SchemeError::NotTriangles`] naming the first non-triangle face;
/// [`SchemeError::NotManifold`] naming the first non-manifold element.
pub(crate) fn check_input(t: &Topology) -> Result<()> {
    subla_scheme::check_triangles("sqrt3", t)?;
    let bad_edge = t.edge_tags().iter().any(|&g| g & edge_tag::NON_MANIFOLD != 0);
    let bad_vertex = t.vertex_tags().iter().any(|&g| g & vertex_tag::NON_MANIFOLD != 0);
    if bad_edge || bad_vertex {
        return Err(subla_scheme::not_manifold("sqrt3", t));
    }
    Ok(())
}

/// One step `l → l+1` of a [`Sqrt3Plan`](crate::Sqrt3Plan): what eval and
/// the operator need besides the parent topology. Other backends read it
/// through [`StepView`](crate::StepView).
#[derive(Clone, Debug)]
pub struct Step {
    /// Kobbelt's boundary split applies (an even step, counted from 1).
    pub kobbelt: bool,
    /// Number of parent vertices.
    pub nv: usize,
    /// New vertices of face `f` are child vertices `nv + off[f] .. nv +
    /// off[f+1]`: one face point, or (Kobbelt steps, boundary faces) the two
    /// trisection points of the boundary edge.
    pub off: Vec<u32>,
    /// The face of each new vertex.
    pub owner: Vec<u32>,
    /// The corner of each face whose outgoing edge is its boundary edge, on
    /// Kobbelt steps; `u32::MAX` otherwise.
    pub bcorner: Vec<u32>,
    /// The two boundary neighbours of each boundary vertex (`[NONE; 2]`
    /// for the others).
    pub bnbr: Vec<[u32; 2]>,
    /// `α(n)` by valence.
    pub alpha: Vec<f64>,
}

impl Step {
    /// The step over `t`, checked by [`check_input`] at every level (a
    /// manifold mesh can refine into a non-manifold one: two triangles
    /// glued along all three edges); `kobbelt`: a boundary-splitting step.
    pub(crate) fn new(t: &Topology, kobbelt: bool, par: Par) -> Result<Step> {
        check_input(t)?;
        let (nv, nf) = (t.num_vertices(), t.num_faces());
        if !kobbelt || t.is_closed() {
            return Self::one_point_per_face(t, kobbelt, par);
        }
        let ce = t.corner_edges();
        let mut bcorner = try_filled_vec(nf, NONE, "the boundary corner of each face")?;
        let mut off = try_vec_with_capacity(nf + 1, "the boundary corner of each face")?;
        off.push(0u32);
        let mut acc = 0u64;
        for (f, bc) in bcorner.iter_mut().enumerate() {
            let mut k = 1;
            let nb = (0..3).filter(|&j| t.is_boundary_edge(ce[3 * f + j] as usize)).count();
            if nb > 1 {
                return Err(SchemeError::BoundaryFace { scheme: "sqrt3", face: f, edges: nb });
            }
            if let Some(j) = (0..3).find(|&j| t.is_boundary_edge(ce[3 * f + j] as usize)) {
                *bc = (3 * f + j) as u32;
                k = 2;
            }
            acc += k;
            off.push(u32::try_from(acc).map_err(|_| too_large("number of refined vertices", acc))?);
        }
        let total = nv as u64 + acc;
        if u32::try_from(total).is_err() || u32::try_from(9 * nf as u64).is_err() {
            return Err(too_large("refined mesh", total.max(9 * nf as u64)));
        }
        let mut owner = try_filled_vec(acc as usize, 0u32, "the owner of each new point")?;
        for f in 0..nf {
            owner[off[f] as usize..off[f + 1] as usize].fill(f as u32);
        }
        let bnbr = boundary_neighbors(t, par)?;
        let max_valence = (0..nv).map(|v| t.valence(v)).max().unwrap_or(0);
        let alpha = (0..=max_valence).map(alpha).collect();
        Ok(Step { kobbelt, nv, off, owner, bcorner, bnbr, alpha })
    }

    /// A step that splits no boundary edge: one face point per face, new
    /// vertex `nv + f` of face `f`.
    fn one_point_per_face(t: &Topology, kobbelt: bool, par: Par) -> Result<Step> {
        let max_valence = (0..t.num_vertices()).map(|v| t.valence(v)).max().unwrap_or(0);
        let bnbr = boundary_neighbors(t, par)?;
        Self::with_face_points(t.num_vertices(), t.num_faces(), kobbelt, bnbr, max_valence, par)
    }

    /// The step over the lean child `child` of the closed parent `t` (which
    /// [`Sqrt3Split::sqrt3_child`] accepted): closed too, one face point per
    /// face, its parent vertices of the parent's valences and its face
    /// points of valence 6.
    pub(crate) fn lean(t: &Topology, child: &Sqrt3Child, kobbelt: bool, par: Par) -> Result<Step> {
        let parents = (0..t.num_vertices()).map(|v| t.face_count(v)).max().unwrap_or(0);
        let max_valence = if t.num_faces() > 0 { parents.max(6) } else { parents };
        let nv = child.num_vertices();
        Self::with_face_points(
            nv,
            child.num_faces(),
            kobbelt,
            try_filled_vec(nv, [NONE; 2], "the boundary neighbours of each vertex")?,
            max_valence,
            par,
        )
    }

    /// A step of one face point per face over `nv` vertices and `nf` faces.
    fn with_face_points(
        nv: usize,
        nf: usize,
        kobbelt: bool,
        bnbr: Vec<[u32; 2]>,
        max_valence: usize,
        par: Par,
    ) -> Result<Step> {
        let total = nv as u64 + nf as u64;
        if u32::try_from(total).is_err() || u32::try_from(9 * nf as u64).is_err() {
            return Err(too_large("refined mesh", total.max(9 * nf as u64)));
        }
        let ids = |n: usize| -> Vec<u32> {
            if par == Par::Rayon && n >= 1 << 14 {
                (0..n as u32).into_par_iter().with_min_len(1 << 12).collect()
            } else {
                (0..n as u32).collect()
            }
        };
        // Without boundary splits no face has a boundary corner.
        let bcorner = if kobbelt { try_filled_vec(nf, NONE, "the boundary corner of each face")? } else { Vec::new() };
        let alpha = (0..=max_valence).map(alpha).collect();
        Ok(Step { kobbelt, nv, off: ids(nf + 1), owner: ids(nf), bcorner, bnbr, alpha })
    }

    /// Number of child vertices.
    /// Whether the step splits boundary edges in three (Kobbelt's even
    /// steps).
    pub fn splits_boundary(&self) -> bool {
        self.kobbelt
    }

    /// Which child point row `row` of the step's operator is: a parent
    /// vertex, the face point of a parent face, or one of the two
    /// trisection points of a boundary face's boundary edge.
    pub(crate) fn child_point(&self, row: usize) -> Option<subla_scheme::ChildPoint> {
        use subla_scheme::ChildPoint;
        if row < self.nv {
            return Some(ChildPoint::Vertex(row as u32));
        }
        let j = row - self.nv;
        let f = *self.owner.get(j)?;
        let (start, end) = (self.off[f as usize], self.off[f as usize + 1]);
        Some(if end - start == 1 {
            ChildPoint::Face(f)
        } else {
            ChildPoint::Trisection { face: f, index: (j as u32 - start) as u8 }
        })
    }

    pub(crate) fn child_len(&self) -> usize {
        self.nv + self.owner.len()
    }

    /// The other boundary neighbour of boundary vertex `a` than `b`.
    #[inline]
    fn other_boundary(&self, a: u32, b: u32) -> u32 {
        let [p, q] = self.bnbr[a as usize];
        if p == b { q } else { p }
    }

    /// The stencil of child vertex `i` as `(parent vertex, weight)` pairs,
    /// in the order eval accumulates them (a column may repeat).
    #[inline]
    pub(crate) fn stencil(&self, t: &Topology, i: usize, s: &mut Vec<(u32, f64)>) {
        let nv = self.nv;
        if i < nv {
            let v = i;
            let [p, q] = self.bnbr[v];
            if p != NONE {
                if self.kobbelt {
                    s.push((p, BOUNDARY_VERTEX[0]));
                    s.push((q, BOUNDARY_VERTEX[0]));
                    s.push((v as u32, BOUNDARY_VERTEX[1]));
                } else {
                    s.push((v as u32, 1.0));
                }
                return;
            }
            let n = t.valence(v);
            if n == 0 {
                s.push((v as u32, 1.0));
                return;
            }
            let a = self.alpha[n];
            let w = a / n as f64;
            s.extend(t.vertex_neighbors(v).map(|u| (u, w)));
            s.push((v as u32, 1.0 - a));
            return;
        }
        let j = i - nv;
        let f = self.owner[j] as usize;
        let fv = t.face_verts();
        if self.off[f + 1] - self.off[f] == 1 {
            let w = 1.0 / 3.0;
            s.extend(fv[3 * f..3 * f + 3].iter().map(|&u| (u, w)));
            return;
        }
        let c = self.bcorner[f] as usize;
        let (a, b) = (fv[c], fv[3 * f + (c % 3 + 1) % 3]);
        let [w1, w16, w10] = BOUNDARY_EDGE;
        if j == self.off[f] as usize {
            s.push((self.other_boundary(a, b), w1));
            s.push((a, w16));
            s.push((b, w10));
        } else {
            s.push((a, w10));
            s.push((b, w16));
            s.push((self.other_boundary(b, a), w1));
        }
    }

    /// The child vertex facing the edge leaving corner `c` inside its face:
    /// the face point, or on a boundary face of a Kobbelt step the
    /// trisection point next to the edge.
    #[inline]
    fn apex(&self, c: usize) -> u32 {
        let f = c / 3;
        let base = (self.nv as u32) + self.off[f];
        if self.off[f + 1] - self.off[f] == 1 {
            return base;
        }
        let bc = self.bcorner[f] as usize;
        if c == 3 * f + (bc % 3 + 1) % 3 { base + 1 } else { base }
    }

    /// Whether this step splits any boundary edge of `t` (a Kobbelt step
    /// on an open mesh); if not, the child is [`Sqrt3Split::split_sqrt3`].
    fn splits_any(&self, t: &Topology) -> bool {
        self.kobbelt && !t.is_closed()
    }

    /// The child faces: one triangle per parent corner, child face `c`
    /// from corner `c` (see the crate docs).
    pub(crate) fn child_faces(&self, t: &Topology, par: Par) -> Result<Vec<u32>> {
        if !self.splits_any(t) {
            return Ok(t.split_sqrt3_faces(par)?);
        }
        let fv = t.face_verts();
        let ce = t.corner_edges();
        let work = |(c, q): (usize, &mut [u32])| {
            let f = c / 3;
            let next = 3 * f + (c % 3 + 1) % 3;
            let prev = 3 * f + (c % 3 + 2) % 3;
            let e = ce[c] as usize;
            let corners = t.edge_corners(e);
            if corners.len() == 2 {
                let other = if corners[0] as usize == c { corners[1] } else { corners[0] } as usize;
                q.copy_from_slice(&[fv[c], self.apex(other), self.apex(c)]);
            } else if self.kobbelt {
                let base = (self.nv as u32) + self.off[f];
                q.copy_from_slice(&[base, base + 1, fv[prev]]);
            } else {
                q.copy_from_slice(&[fv[c], fv[next], (self.nv as u32) + self.off[f]]);
            }
        };
        let mut out = try_filled_vec(3 * t.num_corners(), 0u32, "the vertices of the refined faces")?;
        if par == Par::Rayon && t.num_corners() >= 1 << 13 {
            out.par_chunks_mut(3).enumerate().with_min_len(1 << 11).for_each(work);
        } else {
            out.chunks_mut(3).enumerate().for_each(work);
        }
        Ok(out)
    }

    /// The child mesh of `parent` (no sharpness, default options; the
    /// children of a hole are holes).
    pub(crate) fn child_mesh(&self, parent: &Mesh, par: Par) -> Result<Mesh> {
        let t = parent.topology();
        if !self.splits_any(t) {
            return hole_children(plain_mesh(t.split_sqrt3(par)?)?, parent);
        }
        let fv = self.child_faces(t, par)?;
        let nf = fv.len() / 3;
        let face_ptr: Vec<u32> = (0..=nf as u32).map(|i| 3 * i).collect();
        let ct = Topology::build(self.child_len(), face_ptr, fv, par)?;
        hole_children(plain_mesh(ct)?, parent)
    }

    /// Upper bound of the nonzeros of the operator: `Σ_v (valence + 1) +
    /// 3 · new vertices`.
    pub(crate) fn operator_bound(&self, t: &Topology) -> u64 {
        let v: u64 = (0..t.num_vertices()).map(|v| 1 + t.valence(v).max(2) as u64).sum();
        v + 3 * self.owner.len() as u64
    }
}

/// The two boundary neighbours of each boundary vertex of `t` (`[NONE;
/// 2]` for the others).
fn boundary_neighbors(t: &Topology, par: Par) -> Result<Vec<[u32; 2]>> {
    let nv = t.num_vertices();
    if t.is_closed() {
        return Ok(try_filled_vec(nv, [NONE; 2], "the boundary neighbours of each vertex")?);
    }
    let nbr = |v: usize| -> [u32; 2] {
        if !t.is_boundary_vertex(v) {
            return [NONE; 2];
        }
        let mut it = t.vertex_edges(v).iter().filter(|&&e| t.is_boundary_edge(e as usize)).map(|&e| {
            let [a, b] = t.edge(e as usize);
            if a as usize == v { b } else { a }
        });
        let p = it.next().unwrap_or(v as u32);
        [p, it.next().unwrap_or(p)]
    };
    let par = if nv >= 1 << 13 { par } else { Par::Seq };
    Ok(subla_algebra::par::try_collect(nv, par, "the boundary neighbours of each vertex", nbr)?)
}

/// A mesh of `t` without tags.
pub(crate) fn plain_mesh(t: Topology) -> Result<Mesh> {
    let (ne, nv, nf) = (t.num_edges(), t.num_vertices(), t.num_faces());
    Ok(Mesh::from_parts(
        t,
        try_filled_vec(ne, 0.0, "the edge sharpness")?,
        try_filled_vec(nv, 0.0, "the vertex sharpness")?,
        try_filled_vec(nf, false, "the hole flags")?,
        Options::default(),
    )?)
}

/// The hole flags of the children of `parent`'s faces: one child per
/// corner, child `3 f + k` of face `f`, a hole where `f` is one.
pub(crate) fn child_holes(parent: &Mesh) -> Result<Vec<bool>> {
    let mut holes = try_filled_vec(3 * parent.num_faces(), false, "the hole flags of a refined level")?;
    if parent.has_holes() {
        for (f, &h) in parent.holes().iter().enumerate() {
            if h {
                holes[3 * f..3 * f + 3].fill(true);
            }
        }
    }
    Ok(holes)
}

/// `child` (a plain mesh, one face per corner of `parent`) with the hole
/// flags of `parent`'s faces carried to their children.
pub(crate) fn hole_children(child: Mesh, parent: &Mesh) -> Result<Mesh> {
    if !parent.has_holes() {
        return Ok(child);
    }
    let t = child.topology();
    let (ne, nv) = (t.num_edges(), t.num_vertices());
    Ok(child.retagged(
        try_filled_vec(ne, 0.0, "the edge sharpness")?,
        try_filled_vec(nv, 0.0, "the vertex sharpness")?,
        child_holes(parent)?,
        Options::default(),
    )?)
}

/// The control mesh as the scheme sees it: its topology and its holes
/// (carried to the children of every level). √3 has no rules for sharp
/// edges or corners, nor for a boundary without interpolation: a mesh
/// with such tags is refused, naming the first.
///
/// # Errors
/// As [`check_input`]; [`SchemeError::UnsupportedTag`] for a `crease` or
/// `corner` of nonzero sharpness, or `interpolateboundary 0`.
pub(crate) fn prepare(mesh: &Mesh) -> Result<Mesh> {
    let t = mesh.topology();
    check_input(t)?;
    check_tags(mesh)?;
    let (ne, nv) = (t.num_edges(), t.num_vertices());
    Ok(mesh.retagged(
        try_filled_vec(ne, 0.0, "the edge sharpness")?,
        try_filled_vec(nv, 0.0, "the vertex sharpness")?,
        mesh.holes().to_vec(),
        Options::default(),
    )?)
}

/// The schemes that honour what √3 refuses.
const HONOURED_BY: &str = "catmark or loop";

/// Refuses the tags √3 cannot honour (sharpness, no boundary
/// interpolation), naming the first.
fn check_tags(mesh: &Mesh) -> Result<()> {
    let t = mesh.topology();
    if let Some(e) = mesh.edge_sharpness().iter().position(|&s| s > 0.0) {
        let [a, b] = t.edge(e);
        let s = mesh.edge_sharpness()[e];
        return Err(SchemeError::UnsupportedTag {
            scheme: "sqrt3",
            tag: "crease",
            element: format!("edge {a}-{b}, sharpness {s}"),
            honoured_by: HONOURED_BY,
        });
    }
    if let Some(v) = mesh.vertex_sharpness().iter().position(|&s| s > 0.0) {
        let s = mesh.vertex_sharpness()[v];
        return Err(SchemeError::UnsupportedTag {
            scheme: "sqrt3",
            tag: "corner",
            element: format!("vertex {v}, sharpness {s}"),
            honoured_by: HONOURED_BY,
        });
    }
    if mesh.options().boundary == BoundaryInterpolation::None {
        return Err(SchemeError::UnsupportedTag {
            scheme: "sqrt3",
            tag: "interpolateboundary",
            element: "value 0, no boundary interpolation".into(),
            honoured_by: HONOURED_BY,
        });
    }
    Ok(())
}

fn too_large(what: &'static str, value: u64) -> SchemeError {
    SchemeError::Mesh(MeshError::TooLarge { what, value: value as u128 })
}
