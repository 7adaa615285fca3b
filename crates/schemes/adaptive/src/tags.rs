//! The per-vertex feature tags of a level and the feature selection of
//! adaptive refinement (OpenSubdiv's `Vtr::Level::VTag`, the base-level
//! tagging of `Far::TopologyRefinerFactoryBase` and
//! `Far::TopologyRefiner::selectFeatureAdaptiveComponents` with the feature
//! set of the default adaptive options: every feature selected, no
//! single-crease or inf-sharp patches).
//!
//! OpenSubdiv propagates the tags of a refined vertex from its parent; here
//! they are recomputed from the refined level's own neighbourhood, which
//! gives the same tags for every vertex whose neighbourhood is complete
//! (the only ones that are read: a face with an incomplete corner is never
//! selected nor made a patch), but for one: below a degenerate edge (a
//! vertex to itself), each half bounds one face and looks like a boundary,
//! while OpenSubdiv's inherited tag keeps it non-manifold. So the
//! non-manifold tag is also inherited (`inherited` of [`vertex_tags`]).

use rayon::prelude::*;
use subla_mesh::Mesh;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_scheme::sdc::{Rule, is_infinite, is_semi};

use crate::sparse::Scheme;

/// Rule bits, OR-able as OpenSubdiv's `Sdc::Crease::Rule` values are.
pub(crate) mod rule {
    pub(crate) const SMOOTH: u8 = 1;
    pub(crate) const DART: u8 = 2;
    pub(crate) const CREASE: u8 = 4;
    pub(crate) const CORNER: u8 = 8;
}

/// The tag of one vertex; the tag of a face is the OR of its corners'.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VTag {
    pub(crate) non_manifold: bool,
    pub(crate) xordinary: bool,
    pub(crate) boundary: bool,
    pub(crate) corner: bool,
    pub(crate) inf_sharp: bool,
    pub(crate) semi_sharp: bool,
    pub(crate) semi_sharp_edges: bool,
    pub(crate) inf_sharp_edges: bool,
    pub(crate) inf_sharp_crease: bool,
    pub(crate) inf_irregular: bool,
    pub(crate) incomplete: bool,
    pub(crate) incid_irreg_face: bool,
    pub(crate) rule: u8,
}

impl VTag {
    /// Bitwise OR of two tags.
    pub(crate) fn or(self, o: VTag) -> VTag {
        VTag {
            non_manifold: self.non_manifold | o.non_manifold,
            xordinary: self.xordinary | o.xordinary,
            boundary: self.boundary | o.boundary,
            corner: self.corner | o.corner,
            inf_sharp: self.inf_sharp | o.inf_sharp,
            semi_sharp: self.semi_sharp | o.semi_sharp,
            semi_sharp_edges: self.semi_sharp_edges | o.semi_sharp_edges,
            inf_sharp_edges: self.inf_sharp_edges | o.inf_sharp_edges,
            inf_sharp_crease: self.inf_sharp_crease | o.inf_sharp_crease,
            inf_irregular: self.inf_irregular | o.inf_irregular,
            incomplete: self.incomplete | o.incomplete,
            incid_irreg_face: self.incid_irreg_face | o.incid_irreg_face,
            rule: self.rule | o.rule,
        }
    }
}

fn rule_bits(r: Rule) -> u8 {
    match r {
        Rule::Smooth => rule::SMOOTH,
        Rule::Dart => rule::DART,
        Rule::Crease => rule::CREASE,
        Rule::Corner => rule::CORNER,
    }
}

/// The tags of every vertex of `mesh` (effective sharpness), with
/// `complete[v]` false for the vertices whose neighbourhood the level does
/// not hold. `base` marks the control level (where faces other than quads
/// count for Catmull-Clark; Loop's control faces are all triangles). The
/// regular valences are the scheme's: 4 faces inside and 2 on a boundary
/// for Catmull-Clark, 6 and 3 for Loop. `inherited` (empty, or one flag
/// per vertex) marks the vertices a refined level's parents make
/// non-manifold beyond those its own topology shows.
pub(crate) fn vertex_tags(mesh: &Mesh, complete: &[bool], base: bool, scheme: Scheme, inherited: &[bool]) -> Vec<VTag> {
    let t = mesh.topology();
    let es = mesh.edge_sharpness();
    let vs = mesh.vertex_sharpness();
    let etags = t.edge_tags();
    let irregular_faces = base && scheme == Scheme::Catmark && !t.is_quad_only();
    let (regular_interior, regular_boundary) = match scheme {
        Scheme::Catmark => (4, 2),
        Scheme::Loop => (6, 3),
    };
    (0..t.num_vertices())
        .into_par_iter()
        .with_min_len(1 << 12)
        .map(|v| {
            if !complete[v] {
                return VTag { incomplete: true, ..VTag::default() };
            }
            let edges = t.vertex_edges(v);
            let n_faces = t.face_count(v);
            let (mut boundary, mut inf, mut semi) = (0usize, 0usize, 0usize);
            for &e in edges {
                let e = e as usize;
                boundary += usize::from(t.edge_corners(e).len() == 1);
                inf += usize::from(is_infinite(es[e]));
                semi += usize::from(is_semi(es[e]));
            }
            let s = vs[v];
            let mut tag = VTag {
                non_manifold: t.vertex_tags()[v] & vertex_tag::NON_MANIFOLD != 0
                    || edges.iter().any(|&e| etags[e as usize] & edge_tag::NON_MANIFOLD != 0)
                    || inherited.get(v).is_some_and(|&x| x),
                inf_sharp: is_infinite(s),
                semi_sharp: is_semi(s),
                semi_sharp_edges: semi > 0,
                rule: rule_bits(Rule::classify(s, inf + semi)),
                boundary: boundary > 0,
                ..VTag::default()
            };
            tag.corner = n_faces == 1 && edges.len() == 2 && tag.inf_sharp;
            tag.xordinary = if tag.non_manifold || tag.corner {
                false
            } else if tag.boundary {
                n_faces != regular_boundary
            } else {
                n_faces != regular_interior
            };
            tag.inf_sharp_edges = inf > 0;
            tag.inf_irregular = tag.inf_sharp || tag.inf_sharp_edges;
            if tag.inf_sharp_edges {
                let inf_rule = Rule::classify(if tag.inf_sharp { s } else { 0.0 }, inf);
                match inf_rule {
                    Rule::Crease => {
                        tag.inf_sharp_crease = true;
                        if !tag.xordinary && !tag.non_manifold {
                            if tag.boundary {
                                tag.inf_irregular = false;
                            } else if scheme == Scheme::Catmark {
                                // Valence 4: regular when the two sharp edges are
                                // opposite, i.e. share no face.
                                let sharp: Vec<usize> =
                                    edges.iter().map(|&e| e as usize).filter(|&e| is_infinite(es[e])).collect();
                                tag.inf_irregular = share_a_face(mesh, sharp[0], sharp[1]);
                            } else {
                                // Valence 6: regular when the two sharp edges are
                                // opposite, three apart around the vertex.
                                tag.inf_irregular = !sharp_edges_opposite(mesh, v);
                            }
                        }
                    }
                    Rule::Corner if inf == edges.len() && (edges.len() > 2 || tag.inf_sharp) => {
                        tag.inf_irregular = false;
                    }
                    _ => {}
                }
            }
            if irregular_faces {
                tag.incid_irreg_face =
                    t.vertex_corners(v).iter().any(|&c| t.face_order(t.corner_faces()[c as usize] as usize) != 4);
            }
            tag
        })
        .collect()
}

fn share_a_face(mesh: &Mesh, a: usize, b: usize) -> bool {
    let t = mesh.topology();
    let faces = |e: usize| t.edge_corners(e).iter().map(|&c| t.corner_faces()[c as usize]).collect::<Vec<_>>();
    let fa = faces(a);
    faces(b).iter().any(|f| fa.contains(f))
}

/// Whether the infinitely sharp edges around interior vertex `v` of
/// valence 6 are two opposite ones (OpenSubdiv compares edges `i` and
/// `i + 3` of the ordered ring).
fn sharp_edges_opposite(mesh: &Mesh, v: usize) -> bool {
    let t = mesh.topology();
    let es = mesh.edge_sharpness();
    let ring = crate::patches::vertex_ring(mesh, v);
    let n = ring.len();
    let leading: Vec<bool> = ring
        .iter()
        .map(|&(f, j)| is_infinite(es[t.corner_edges()[t.face_ptr()[f as usize] as usize + j as usize] as usize]))
        .collect();
    n == 6 && (0..3).all(|i| leading[i] == leading[i + 3])
}

/// The OR of the tags of face `f`'s corners.
pub(crate) fn face_tag(mesh: &Mesh, tags: &[VTag], f: usize) -> VTag {
    mesh.topology().face(f).iter().fold(VTag::default(), |acc, &v| acc.or(tags[v as usize]))
}

/// Whether face `f` of a level at `depth` has a feature that adaptive
/// refinement isolates (OpenSubdiv's `doesFaceHaveFeatures` with every
/// feature selected; for triangles, a face with a boundary corner is
/// inspected corner by corner even with a smooth corner, as its
/// `doesInfSharpFaceHaveFeatures` does).
pub(crate) fn face_has_features(mesh: &Mesh, tags: &[VTag], f: usize, depth: u32, scheme: Scheme) -> bool {
    let t = mesh.topology();
    let verts = t.face(f);
    let regular_size = match scheme {
        Scheme::Catmark => 4,
        Scheme::Loop => 3,
    };
    if verts.len() != regular_size {
        return true;
    }
    let comp = face_tag(mesh, tags, f);
    if comp.incid_irreg_face {
        return true;
    }
    if comp.incomplete {
        return false;
    }
    if comp.non_manifold {
        return true;
    }
    if comp.xordinary {
        if comp.rule == rule::SMOOTH {
            return true;
        } else if depth < 2 {
            for &v in verts {
                let tv = tags[v as usize];
                if tv.xordinary && tv.rule == rule::SMOOTH {
                    return true;
                }
            }
        }
    }
    if comp.rule == rule::SMOOTH {
        return false;
    }
    if comp.semi_sharp || comp.semi_sharp_edges {
        return true;
    }
    if comp.inf_sharp || comp.inf_sharp_edges {
        if comp.rule & rule::SMOOTH != 0 && (scheme == Scheme::Catmark || !comp.boundary) {
            return inf_sharp_tag_has_features(comp);
        }
        return verts
            .iter()
            .map(|&v| tags[v as usize])
            .any(|tv| tv.rule & rule::SMOOTH == 0 && inf_sharp_tag_has_features(tv));
    }
    false
}

fn inf_sharp_tag_has_features(tag: VTag) -> bool {
    if tag.inf_irregular {
        // Corners, creases (boundary or not) and darts that are irregular are
        // all selected with the default options.
        tag.rule & (rule::CORNER | rule::CREASE | rule::DART) != 0
    } else if tag.boundary {
        // Regular boundaries are never selected, but for a boundary crease
        // made a corner by an interior edge.
        tag.rule & rule::CORNER != 0 && !tag.corner
    } else {
        true
    }
}
