//! What `subla subdivide` carries from its input to its output besides the
//! positions, and what it says it leaves out.
//!
//! * **Vertex channels** (OBJ `v x y z r g b`, every PLY vertex property):
//!   vertex data like the positions, refined by the same operator in the
//!   same evaluation, their names kept.
//! * **Groups and objects** (OBJ `g`, `o`): by face. Every built-in scheme
//!   writes the children of a parent face next to each other, in parent
//!   face order (`subla_mesh::split_quad`, `split_tri`, `subla_sqrt3`'s
//!   face order), as many per parent as the scheme's growth says: one per
//!   corner on Catmull-Clark's and bilinear's first step, then four per
//!   quad; four per triangle for Loop; one per corner (three) for √3. A
//!   group's range `a..b` of parent faces is the range of their children,
//!   and the hole faces left out of the output close up the ranges after
//!   them. √3 flips edges, so its child triangle of corner `c` of face `f`
//!   lies across the edge of `c`, half in `f` and half in its neighbour:
//!   it goes with `f`, and a group's border follows its faces' corners.
//!   When the refined face count is not what the growth predicts, the
//!   groups are left out, with a warning.
//! * **Face-varying data** (OBJ `vt`, `vn`) cannot be refined yet: it is
//!   left out, with a warning naming it.
//!
//! Warnings are one line each on standard error, `warning: <file>: …`,
//! printed even with `--quiet`: they say that the output lacks something
//! the input had.

use subla::registry::Growth;
use subla_mesh::{Group, Mesh, MeshData};

/// The sums of `count(i)` over `i < b` for each `b` of `bounds` (sorted,
/// unique, each ≤ `n`), and over `i < n`: one pass, no array of `n`.
fn prefix_at(n: usize, bounds: &[u32], count: impl Fn(usize) -> u64) -> (Vec<u64>, u64) {
    let mut out = Vec::with_capacity(bounds.len());
    let mut acc = 0u64;
    let mut next = bounds.iter().copied().peekable();
    for i in 0..n {
        while next.next_if(|&b| b as usize == i).is_some() {
            out.push(acc);
        }
        acc += count(i);
    }
    while next.next_if(|&b| b as usize == n).is_some() {
        out.push(acc);
    }
    (out, acc)
}

/// The sorted, unique range ends of `groups`, if every range lies within
/// `faces` faces.
fn bounds(groups: &[Group], faces: usize) -> Option<Vec<u32>> {
    if groups.iter().any(|g| g.faces.start > g.faces.end || g.faces.end as usize > faces) {
        return None;
    }
    let mut b: Vec<u32> = groups.iter().flat_map(|g| [g.faces.start, g.faces.end]).collect();
    b.sort_unstable();
    b.dedup();
    Some(b)
}

/// `groups` with each end moved to `at(end)`.
fn moved(groups: &[Group], bounds: &[u32], at: &[u64]) -> Vec<Group> {
    let map = |f: u32| at[bounds.binary_search(&f).unwrap_or_else(|_| unreachable!("every end is a bound"))] as u32;
    groups.iter().map(|g| Group { faces: map(g.faces.start)..map(g.faces.end), ..g.clone() }).collect()
}

/// The face ranges of `groups` (of `mesh`'s faces) over the mesh that
/// `levels` steps of a scheme growing as `growth` make of `mesh`, which
/// has `fine_faces` faces (hole faces included). `None` when that count is
/// not the one the growth predicts, or a range lies outside `mesh`.
pub(crate) fn refined_groups(
    groups: &[Group],
    mesh: &Mesh,
    growth: Growth,
    levels: u32,
    fine_faces: usize,
) -> Option<Vec<Group>> {
    if groups.is_empty() {
        return Some(Vec::new());
    }
    let t = mesh.topology();
    let bounds = bounds(groups, t.num_faces())?;
    let first = |f: usize| -> u64 {
        match (levels, growth.first_per_corner) {
            (0, _) => 1,
            (_, true) => t.face_order(f) as u64,
            (_, false) => u64::from(growth.factor),
        }
    };
    let later = u64::from(growth.factor).checked_pow(levels.saturating_sub(1))?;
    let (mut at, total) = prefix_at(t.num_faces(), &bounds, first);
    let total = total.checked_mul(later)?;
    if total != fine_faces as u64 {
        return None;
    }
    for a in &mut at {
        *a *= later;
    }
    Some(moved(groups, &bounds, &at))
}

/// `groups` (ranges of faces flagged by `holes`) after the faces with
/// `holes[f]` are left out. Ranges are within `holes.len()`.
pub(crate) fn without_holes(groups: &[Group], holes: &[bool]) -> Vec<Group> {
    if groups.is_empty() || !holes.contains(&true) {
        return groups.to_vec();
    }
    let Some(bounds) = bounds(groups, holes.len()) else {
        return Vec::new();
    };
    let (at, _) = prefix_at(holes.len(), &bounds, |f| u64::from(!holes[f]));
    moved(groups, &bounds, &at)
}

/// What of `data` the output of a refinement leaves out, as warnings (one
/// line each, without the `warning: ` prefix) for the input `name` and the
/// output `out`. `groups_lost` says whether the groups could not be
/// carried; `texcoords_carried` whether the texture coordinates were;
/// `normals_written` whether the refined surface's normals replace the
/// input's.
pub(crate) fn left_out(
    data: &MeshData,
    name: &str,
    out: &str,
    groups_lost: bool,
    texcoords_carried: bool,
    normals_written: bool,
) -> Vec<String> {
    let mut w = Vec::new();
    if data.texcoords.is_some() && !texcoords_carried {
        w.push(format!("{name}: texture coordinates (vt) were not refined and were left out of {out}"));
    }
    if data.normals.is_some() && !normals_written {
        w.push(format!("{name}: normals (vn) were left out of {out}: the data have fewer than three channels"));
    }
    if groups_lost && !data.groups.is_empty() {
        let names: Vec<String> = data.groups.iter().take(4).map(|g| format!("{:?}", g.name)).collect();
        let more = data.groups.len().saturating_sub(4);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        w.push(format!(
            "{name}: the groups ({}{more}) could not be mapped to the refined faces and were left out of {out}",
            names.join(", ")
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use subla::registry::Registry;
    use subla_algebra::Par;
    use subla_mesh::{GroupKind, MeshBuilder};
    use subla_scheme::{Plan, Refiner};

    fn group(name: &str, faces: std::ops::Range<u32>) -> Group {
        Group { kind: GroupKind::Group, name: name.into(), faces }
    }

    #[test]
    fn hole_faces_close_up_the_ranges() {
        let g = [group("a", 0..3), group("b", 3..5), group("c", 5..5)];
        let holes = [false, true, false, true, false];
        let out = without_holes(&g, &holes);
        let ranges: Vec<_> = out.iter().map(|g| g.faces.clone()).collect();
        assert_eq!(ranges, [0..2, 2..3, 3..3]);
    }

    /// An open strip: a triangle, a quad, a pentagon, another quad
    /// (Catmull-Clark and bilinear), or its triangulation (the triangle
    /// schemes).
    fn strip(triangles: bool) -> Mesh {
        let faces: Vec<Vec<u32>> = if triangles {
            vec![vec![0, 1, 2], vec![1, 3, 2], vec![2, 3, 4], vec![3, 5, 4], vec![4, 5, 6], vec![5, 7, 6]]
        } else {
            vec![vec![0, 1, 2], vec![1, 3, 4, 2], vec![3, 5, 6, 7, 4], vec![5, 8, 9, 6]]
        };
        let refs: Vec<&[u32]> = faces.iter().map(Vec::as_slice).collect();
        let nv = faces.iter().flatten().max().map_or(0, |&m| m as usize + 1);
        MeshBuilder::from_faces(nv, &refs).build(Par::Seq).unwrap()
    }

    /// Every child face the mapping gives parent face `f` holds a parent
    /// vertex of `f` or, where it holds no parent vertex (Loop's middle
    /// triangles, faces of later levels), is reached from `f`'s children
    /// at the level before: checked one level at a time, every scheme,
    /// against the scheme's own refined mesh.
    #[test]
    fn each_child_face_belongs_to_its_parent_for_every_scheme() {
        let registry = Registry::builtin();
        for scheme in registry.schemes() {
            let tri = scheme.faces() == subla::registry::Faces::Triangles;
            let mesh = strip(tri);
            let nf = mesh.num_faces() as u32;
            // One group per face.
            let groups: Vec<Group> = (0..nf).map(|f| group(&f.to_string(), f..f + 1)).collect();
            let r = scheme
                .refiner(subla::registry::Backend::Cpu, subla::registry::Path::Kernels, &Default::default())
                .unwrap();
            for levels in 1..=2 {
                let plan = r.build(&mesh, levels, Par::Seq).unwrap();
                let fine = plan.refined(levels, Par::Seq).unwrap();
                let out = refined_groups(&groups, &mesh, scheme.growth(), levels, fine.num_faces())
                    .unwrap_or_else(|| panic!("{}: {levels} levels: groups not mapped", scheme.name()));
                assert_eq!(out.last().unwrap().faces.end as usize, fine.num_faces());
                if levels == 1 {
                    let (t, ft) = (mesh.topology(), fine.topology());
                    for (f, g) in out.iter().enumerate() {
                        assert!(!g.faces.is_empty());
                        for c in g.faces.clone() {
                            let parent_vertices: Vec<u32> = ft
                                .face(c as usize)
                                .iter()
                                .copied()
                                .filter(|&v| (v as usize) < t.num_vertices())
                                .collect();
                            assert!(
                                parent_vertices.iter().all(|v| t.face(f).contains(v)),
                                "{}: child {c} of face {f} holds parent vertices {parent_vertices:?}",
                                scheme.name()
                            );
                        }
                    }
                }
            }
        }
    }

    /// The output of a run holds every channel with its name and the
    /// groups over the refined faces, holes left out (what the writers
    /// then write).
    #[test]
    fn the_output_mesh_has_every_channel_and_the_groups() {
        let mesh = strip(false);
        let nv = mesh.num_vertices();
        let mut vertices = ndarray::Array2::<f64>::zeros((nv, 6));
        for v in 0..nv {
            let p = [v as f64, (v * v) as f64 * 0.25, 1.0 - v as f64];
            for k in 0..3 {
                vertices[[v, k]] = p[k];
                vertices[[v, k + 3]] = p[k];
            }
        }
        let mut data = MeshData::new(mesh, vertices).unwrap();
        data.channels = ["x", "y", "z", "red", "green", "blue"].map(String::from).to_vec();
        data.groups = vec![group("a", 0..2), group("b", 2..4)];
        // The full mesh, and (the strip has no tags) the faces alone.
        for (scheme, levels, want_mesh) in
            [("catmark", 2, true), ("catmark", 2, false), ("bilinear", 1, true), ("bilinear", 1, false)]
        {
            let args = super::super::subdivide_args(&["--scheme", scheme, "--levels", &levels.to_string()]).unwrap();
            let (run, _) = super::super::refine(&args, &data, want_mesh, crate::progress::Progress::new(true)).unwrap();
            let out = super::super::output_mesh(run, &data, &args, std::path::Path::new("out.obj")).unwrap();
            let (channels, vertices, groups) = match &out {
                super::super::Output::Data(d) => (&d.channels, &d.vertices, &d.groups),
                super::super::Output::Faces { channels, vertices, groups, .. } => {
                    assert!(!want_mesh);
                    (channels, vertices, groups)
                }
            };
            assert_eq!(channels, &data.channels);
            assert_eq!(vertices.ncols(), 6);
            for row in vertices.rows() {
                assert_eq!([row[0], row[1], row[2]], [row[3], row[4], row[5]], "{scheme}");
            }
            // 3 + 4 corners, then 5 + 4, times 4 per later level.
            let later = 4u32.pow(levels - 1);
            let ranges: Vec<_> = groups.iter().map(|g| g.faces.clone()).collect();
            assert_eq!(ranges, [0..7 * later, 7 * later..16 * later], "{scheme}");
        }
    }

    #[test]
    fn a_face_count_the_growth_does_not_predict_loses_the_groups() {
        let mesh = strip(false);
        let g = [group("a", 0..2), group("b", 2..4)];
        let growth = Growth { factor: 4, first_per_corner: true };
        // 3 + 4 + 5 + 4 corners.
        assert!(refined_groups(&g, &mesh, growth, 1, 16).is_some());
        assert!(refined_groups(&g, &mesh, growth, 1, 17).is_none());
        assert_eq!(refined_groups(&g, &mesh, growth, 2, 64).unwrap()[1].faces, 28..64);
        // A range past the mesh.
        assert!(refined_groups(&[group("x", 0..9)], &mesh, growth, 1, 16).is_none());
    }
}
