//! Rows of the composed refinement matrix in closed form for a plan in
//! edge-friend form: the regular patches of the control mesh
//! ([`crate::regular`]) followed down the edge-friend levels.
//!
//! The first level's quad of control corner `c` and every later level's
//! child `4q + k` of quad `q` are the quad split's child of corner `k`
//! (corner vertex, edge point of the corner's edge, face point, edge point
//! of the previous edge), so a face's frame in its control face's grid is
//! carried down exactly as the kernels' plan carries it. A finest vertex
//! takes the first quad around it (walking from its loop start) that lies
//! in a regular control face; every regular patch that holds the vertex
//! gives the same row (the weights are exact), so the choice only has to be
//! deterministic.

use subla_algebra::Par;
use subla_mesh::Mesh;
use subla_scheme::Result;
use subla_scheme::tensor::{TensorRow, TensorRows};

use super::level::{EfLevel, links, ring};
use crate::regular::{ControlPatches, Frame, NO_FRAME, NONE, quad_frames, weights_1d};

/// The closed-form rows of the composed matrix from the polygon control
/// mesh `control` through the edge-friend levels `levels` (level 1 first),
/// in the plan's real numbering of the finest level; `None` past
/// [`MAX_LEVELS`](crate::regular::MAX_LEVELS) or without a regular control face.
pub(crate) fn regular_rows(control: &Mesh, levels: &[EfLevel], par: Par) -> Result<Option<TensorRows>> {
    let count = levels.len();
    let Some((ControlPatches { patch_of, patches }, frames)) = quad_frames(control, count, levels[0].num_quads(), par)?
    else {
        return Ok(None);
    };
    let finest = &levels[count - 1];
    // A lean finest level: its friends and loop starts from its parent.
    let made;
    let (friends, loop_start): (&[[u32; 2]], &[u32]) = if finest.is_lean() {
        made = links(&levels[count - 2], finest, par)?;
        (&made.0, &made.1)
    } else {
        (&finest.friends, &finest.loop_start)
    };
    let frame_of = |q: usize| -> Frame {
        if count == 1 {
            return frames[q];
        }
        let fr = frames[q >> 2];
        if fr.face == NONE { NO_FRAME } else { fr.child(q & 3, 2) }
    };
    let point = |v: u32| -> TensorRow {
        let mut found = TensorRow::OPEN;
        let mut done = false;
        ring(friends, loop_start[v as usize], |c| {
            if done {
                return;
            }
            let fr = frame_of(c >> 2);
            if fr.face != NONE {
                found = fr.row(fr.corner(c & 3, 1), &patch_of);
                done = true;
            }
        });
        found
    };
    // The internal vertex of each real row.
    let internal = finest.real.internal_rows()?;
    let rows = finest.real.count();
    TensorRows::from_fn(control.num_vertices(), weights_1d(count), patches, rows, par, |row| {
        point(internal.as_ref().map_or(row as u32, |of| of[row]))
    })
    .map(Some)
}
