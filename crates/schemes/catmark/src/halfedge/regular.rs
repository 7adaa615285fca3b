//! Rows of the composed refinement matrix in closed form for a plan in
//! halfedge form: the regular patches of the control mesh
//! ([`crate::regular`]) followed down the quad levels.
//!
//! Level 1 is the kernels' level (its quad `c` the child of control corner
//! `c`) and the child quad `h` of halfedge `h = 4q + k` is the quad split's
//! child of corner `k`, so a face's frame in its control face's grid is
//! carried down as the kernels' plan carries it. The finest level's points
//! are located from its parent's connectivity (the finest level may keep
//! only its quads): a vertex point by the first of its vertex's faces, an
//! edge point by the first of its edge's halfedges, a face point by its
//! face, that lies in a regular control face.

use subla_algebra::Par;
use subla_mesh::Mesh;
use subla_scheme::Result;
use subla_scheme::tensor::{TensorRow, TensorRows};

use super::level::{NONE as NO_HALF, QuadLevel};
use crate::regular::{ControlPatches, NONE, quad_frames, weights_1d};

/// The closed-form rows of the composed matrix from the polygon control
/// mesh `control` through the quad levels `levels` (level 1 first), or
/// `None` past [`MAX_LEVELS`](crate::regular::MAX_LEVELS) or without a regular control face.
pub(crate) fn regular_rows(control: &Mesh, levels: &[QuadLevel], par: Par) -> Result<Option<TensorRows>> {
    let count = levels.len();
    if count == 1 {
        // Level 1 is the kernels' own, numbered as theirs.
        return crate::regular::regular_rows(std::slice::from_ref(control), par);
    }
    let Some((ControlPatches { patch_of, patches }, frames)) = quad_frames(control, count, levels[0].num_faces(), par)?
    else {
        return Ok(None);
    };
    // The parent of the finest level: its quads have side 2.
    let p = &levels[count - 2];
    let c = p.conn();
    let (nv, nf) = (p.num_vertices, p.num_faces());
    let open = TensorRow::OPEN;
    let at_half = |h: u32, point: &dyn Fn(&crate::regular::Frame, usize) -> (i32, i32)| -> Option<TensorRow> {
        let fr = &frames[(h >> 2) as usize];
        (fr.face != NONE).then(|| fr.row(point(fr, (h & 3) as usize), &patch_of))
    };
    let rows = levels[count - 1].num_vertices;
    TensorRows::from_fn(control.num_vertices(), weights_1d(count), patches, rows, par, |row| {
        if row < nv {
            let mut found = None;
            c.ring(4, &p.vert, row, |h, _, outgoing| {
                if outgoing && found.is_none() {
                    found = at_half(h, &|fr, k| fr.corner(k, 2));
                }
            });
            found.unwrap_or(open)
        } else if row < nv + nf {
            let fr = &frames[row - nv];
            if fr.face == NONE { open } else { fr.row(fr.face_point(), &patch_of) }
        } else {
            let h = c.edge_half[row - nv - nf];
            let t = c.twin[h as usize];
            at_half(h, &|fr, k| fr.edge_point(k))
                .or_else(|| if t == NO_HALF { None } else { at_half(t, &|fr, k| fr.edge_point(k)) })
                .unwrap_or(open)
        }
    })
    .map(Some)
}
