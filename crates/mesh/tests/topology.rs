//! Connectivity derived by `Topology` against a naive reference over face
//! lists; the edge numbering against the enumeration of the lower triangle
//! of `E = M Mᵀ` (mapped SpGEMM); manifold checking and validation errors;
//! determinism across `Par` and rayon pool sizes.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rayon::{ThreadPool, ThreadPoolBuilder};
use subla_algebra::scan::enumerate_nonzeros;
use subla_algebra::spgemm::{self, Collision, Ops};
use subla_algebra::{CscMat, Par};
use subla_mesh::proptest_support::{
    any_mesh, any_mesh_with_permutation, closed_quad_mesh, mesh_with_creases, permutation, polygon_mesh_with_boundary,
    relabel, torus, triangle_mesh,
};
use subla_mesh::tags::is_infinitely_sharp;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{
    BoundaryInterpolation, CreaseMethod, FVarLinearInterpolation, MeshBuilder, MeshData, MeshError, SharpnessTarget,
    Topology, TriangleSubdivision, Validation,
};

// ---------------------------------------------------------------------------
// Naive reference
// ---------------------------------------------------------------------------

/// Everything `Topology` derives, computed the slow and obvious way from the
/// face lists.
struct Naive {
    nv: usize,
    faces: Vec<Vec<u32>>,
    /// Per corner (faces concatenated): vertex, face, vertex of the next
    /// corner of the face, vertex of the previous one, the previous corner.
    corner_vert: Vec<u32>,
    corner_face: Vec<u32>,
    corner_next: Vec<u32>,
    corner_prev: Vec<u32>,
    corner_prev_idx: Vec<u32>,
    /// Edges in id order: undirected `(lo, hi)` → the corners using it, in
    /// corner order. Built by OpenSubdiv's rules (faces in order), then
    /// sorted by `(lo, hi, creation)`.
    edges: Vec<((u32, u32), Vec<u32>)>,
    /// Tag bits the rules themselves set while creating the edges
    /// (NON_MANIFOLD for both edges of a split pair, DUPLICATE for extra
    /// instances).
    rule_tags: Vec<u8>,
    /// Outgoing edge id of each corner.
    corner_edge: Vec<u32>,
    /// The first (lowest-id) edge of each pair.
    first_edge: HashMap<(u32, u32), u32>,
    /// Per vertex: its corners (in corner order), its edges (in id order; a
    /// degenerate edge once), the other endpoint of each of its edges,
    /// whether some face uses it twice.
    vcorners: Vec<Vec<u32>>,
    vedges: Vec<Vec<u32>>,
    nbrs: Vec<Vec<u32>>,
    repeats: Vec<bool>,
    edge_tags: Vec<u8>,
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// What `check_manifold` must report.
#[derive(Debug, PartialEq, Eq)]
enum Bad {
    Repeated { face: usize, vertex: u32 },
    Fin { v0: u32, v1: u32, faces: usize, first: u32, second: u32, third: u32 },
    Orientation { v0: u32, v1: u32, face_a: u32, face_b: u32 },
    Vertex { vertex: u32, fans: usize },
}

fn classify(e: &MeshError) -> Option<Bad> {
    Some(match *e {
        MeshError::RepeatedVertex { face, vertex, .. } => Bad::Repeated { face, vertex },
        MeshError::NonManifoldEdge { v0, v1, faces, first, second, third } => {
            Bad::Fin { v0, v1, faces, first, second, third }
        }
        MeshError::InconsistentOrientation { v0, v1, face_a, face_b } => Bad::Orientation { v0, v1, face_a, face_b },
        MeshError::NonManifoldVertex { vertex, fans } => Bad::Vertex { vertex, fans },
        _ => return None,
    })
}

impl Naive {
    fn new(nv: usize, faces: &[Vec<u32>]) -> Self {
        let mut n = Naive {
            nv,
            faces: faces.to_vec(),
            corner_vert: Vec::new(),
            corner_face: Vec::new(),
            corner_next: Vec::new(),
            corner_prev: Vec::new(),
            corner_prev_idx: Vec::new(),
            edges: Vec::new(),
            rule_tags: Vec::new(),
            corner_edge: Vec::new(),
            first_edge: HashMap::new(),
            vcorners: vec![Vec::new(); nv],
            vedges: vec![Vec::new(); nv],
            nbrs: vec![Vec::new(); nv],
            repeats: vec![false; nv],
            edge_tags: Vec::new(),
        };
        // OpenSubdiv's completeTopologyFromFaceVertices, literally: edges in
        // creation order, each with its key, uses, faces and rule tags.
        struct Created {
            key: (u32, u32),
            corners: Vec<u32>,
            faces: Vec<u32>,
            tags: u8,
        }
        let mut created: Vec<Created> = Vec::new();
        let mut by_pair: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        let mut corner_created = Vec::new();
        for (f, vs) in faces.iter().enumerate() {
            let k = vs.len();
            let base = n.corner_vert.len();
            for i in 0..k {
                let (a, b) = (vs[i], vs[(i + 1) % k]);
                let c = n.corner_vert.len() as u32;
                n.corner_vert.push(a);
                n.corner_face.push(f as u32);
                n.corner_next.push(b);
                n.corner_prev.push(vs[(i + k - 1) % k]);
                n.corner_prev_idx.push((base + (i + k - 1) % k) as u32);
                n.vcorners[a as usize].push(c);
                if vs[..i].contains(&a) {
                    n.repeats[a as usize] = true;
                }
                let found = if a == b { None } else { by_pair.get(&key(a, b)).map(|es| es[0]) };
                let mut tag = 0;
                let existing = match found {
                    Some(e) if *created[e].faces.last().unwrap() == f as u32 => {
                        created[e].tags |= edge_tag::NON_MANIFOLD;
                        tag = edge_tag::NON_MANIFOLD | edge_tag::DUPLICATE;
                        None
                    }
                    other => other,
                };
                let e = existing.unwrap_or_else(|| {
                    let pair = by_pair.entry(key(a, b)).or_default();
                    if !pair.is_empty() {
                        tag |= edge_tag::DUPLICATE;
                    }
                    pair.push(created.len());
                    created.push(Created { key: key(a, b), corners: Vec::new(), faces: Vec::new(), tags: tag });
                    created.len() - 1
                });
                created[e].corners.push(c);
                created[e].faces.push(f as u32);
                corner_created.push(e);
            }
        }
        // Ids: by (lo, hi), then creation.
        let mut order: Vec<usize> = (0..created.len()).collect();
        order.sort_by_key(|&e| (created[e].key, e));
        let mut id = vec![0u32; created.len()];
        for (i, &e) in order.iter().enumerate() {
            id[e] = i as u32;
            n.edges.push((created[e].key, created[e].corners.clone()));
            n.rule_tags.push(created[e].tags);
            n.first_edge.entry(created[e].key).or_insert(i as u32);
        }
        n.corner_edge = corner_created.iter().map(|&e| id[e]).collect();
        for (i, &((lo, hi), _)) in n.edges.iter().enumerate() {
            n.vedges[lo as usize].push(i as u32);
            n.nbrs[lo as usize].push(hi);
            if hi != lo {
                n.vedges[hi as usize].push(i as u32);
                n.nbrs[hi as usize].push(lo);
            }
        }
        n.edge_tags = (0..n.edges.len()).map(|e| n.edge_tag(e)).collect();
        n
    }

    fn inconsistent(&self, (lo, hi): (u32, u32), cs: &[u32]) -> bool {
        lo != hi && cs.len() == 2 && self.corner_vert[cs[0] as usize] == self.corner_vert[cs[1] as usize]
    }

    fn edge_tag(&self, e: usize) -> u8 {
        let (k, cs) = (self.edges[e].0, &self.edges[e].1[..]);
        let mut t = self.rule_tags[e];
        if k.0 == k.1 {
            t |= edge_tag::DEGENERATE | edge_tag::NON_MANIFOLD;
        }
        if cs.len() == 1 {
            t |= edge_tag::BOUNDARY;
        }
        if cs.len() > 2 {
            t |= edge_tag::NON_MANIFOLD;
        }
        if self.inconsistent(k, cs) {
            t |= edge_tag::INCONSISTENT | edge_tag::NON_MANIFOLD;
        }
        t
    }

    fn vertex_corners(&self, v: u32) -> Vec<u32> {
        self.vcorners[v as usize].clone()
    }

    fn vertex_edges(&self, v: u32) -> Vec<u32> {
        self.vedges[v as usize].clone()
    }

    fn repeated(&self, v: u32) -> bool {
        self.repeats[v as usize]
    }

    /// Connected components of the corners of `v`, two corners being
    /// connected when they share an edge at `v` (the same edge, not merely
    /// the same vertex pair).
    fn fans(&self, v: u32) -> usize {
        let cs = self.vertex_corners(v);
        let touching = |c: u32| -> [u32; 2] {
            let c = c as usize;
            [self.corner_edge[self.corner_prev_idx[c] as usize], self.corner_edge[c]]
        };
        let mut comp = vec![usize::MAX; cs.len()];
        let mut n = 0;
        for s in 0..cs.len() {
            if comp[s] != usize::MAX {
                continue;
            }
            comp[s] = n;
            let mut stack = vec![s];
            while let Some(x) = stack.pop() {
                for y in 0..cs.len() {
                    if comp[y] == usize::MAX && touching(cs[x]).iter().any(|e| touching(cs[y]).contains(e)) {
                        comp[y] = n;
                        stack.push(y);
                    }
                }
            }
            n += 1;
        }
        n
    }

    fn vertex_tag(&self, v: u32) -> u8 {
        if self.vertex_corners(v).is_empty() {
            return vertex_tag::ISOLATED;
        }
        let mut t = 0;
        for &e in &self.vedges[v as usize] {
            let et = self.edge_tags[e as usize];
            if et & edge_tag::BOUNDARY != 0 {
                t |= vertex_tag::BOUNDARY;
            }
            if et & edge_tag::NON_MANIFOLD != 0 {
                t |= vertex_tag::NON_MANIFOLD;
            }
        }
        if self.repeated(v) {
            t |= vertex_tag::REPEATED | vertex_tag::NON_MANIFOLD;
        }
        if self.fans(v) > 1 {
            t |= vertex_tag::NON_MANIFOLD;
        }
        t
    }

    /// The first problem `check_manifold` must report: repeated vertices
    /// (face order), then non-manifold edges (edge order), then bow-ties
    /// (vertex order).
    fn manifold_error(&self) -> Option<Bad> {
        for (face, vs) in self.faces.iter().enumerate() {
            if let Some(i) = (0..vs.len()).find(|&i| vs[..i].contains(&vs[i])) {
                return Some(Bad::Repeated { face, vertex: vs[i] });
            }
        }
        for &(k, ref cs) in &self.edges {
            let face = |i: usize| self.corner_face[cs[i] as usize];
            if self.inconsistent(k, cs) {
                let v0 = self.corner_vert[cs[0] as usize];
                return Some(Bad::Orientation {
                    v0,
                    v1: self.corner_next[cs[0] as usize],
                    face_a: face(0),
                    face_b: face(1),
                });
            }
            if cs.len() > 2 {
                return Some(Bad::Fin {
                    v0: k.0,
                    v1: k.1,
                    faces: cs.len(),
                    first: face(0),
                    second: face(1),
                    third: face(2),
                });
            }
        }
        (0..self.nv as u32).find(|&v| self.fans(v) > 1).map(|v| Bad::Vertex { vertex: v, fans: self.fans(v) })
    }

    fn has_repeats(&self) -> bool {
        self.faces.iter().any(|f| f.iter().collect::<BTreeSet<_>>().len() != f.len())
    }
}

fn face_lists(t: &Topology) -> Vec<Vec<u32>> {
    (0..t.num_faces()).map(|f| t.face(f).to_vec()).collect()
}

fn flatten(faces: &[Vec<u32>]) -> (Vec<u32>, Vec<u32>) {
    let mut ptr = vec![0u32];
    let mut verts = Vec::new();
    for f in faces {
        verts.extend_from_slice(f);
        ptr.push(verts.len() as u32);
    }
    (ptr, verts)
}

/// Every derived array of `t` against the naive reference.
fn check_against_naive(t: &Topology, nv: usize, faces: &[Vec<u32>]) -> Result<(), TestCaseError> {
    let n = Naive::new(nv, faces);
    let nc = n.corner_vert.len();
    prop_assert_eq!(t.num_vertices(), nv);
    prop_assert_eq!(t.num_faces(), faces.len());
    prop_assert_eq!(t.num_corners(), nc);
    prop_assert_eq!(face_lists(t), faces.to_vec());
    prop_assert_eq!(t.corner_faces(), &n.corner_face[..]);
    for c in 0..nc {
        prop_assert_eq!(t.face_verts()[t.next_corner(c)], n.corner_next[c]);
        prop_assert_eq!(t.face_verts()[t.prev_corner(c)], n.corner_prev[c]);
    }
    prop_assert_eq!(t.is_quad_only(), faces.iter().all(|f| f.len() == 4));
    prop_assert_eq!(t.is_triangle_only(), faces.iter().all(|f| f.len() == 3));

    // Edges: by OpenSubdiv's rules, numbered by (lo, hi) then creation.
    let edges: Vec<[u32; 2]> = n.edges.iter().map(|&((lo, hi), _)| [lo, hi]).collect();
    prop_assert_eq!(t.edges(), &edges[..]);
    prop_assert!(edges.windows(2).all(|w| w[0] <= w[1]));
    prop_assert_eq!(t.edge_corner_ptr().len(), edges.len() + 1);
    for (e, (k, cs)) in n.edges.iter().enumerate() {
        let k = *k;
        prop_assert_eq!(t.edge(e), [k.0, k.1]);
        prop_assert_eq!(t.edge_corners(e), &cs[..], "corners of edge {} {:?}", e, k);
        prop_assert_eq!(t.edge_tags()[e], n.edge_tag(e), "tag of edge {} {:?}", e, k);
        prop_assert_eq!(t.is_boundary_edge(e), cs.len() == 1);
        let first = n.first_edge[&k];
        prop_assert_eq!(t.find_edge(k.0, k.1), Some(first));
        prop_assert_eq!(t.find_edge(k.1, k.0), Some(first));
        prop_assert_eq!(t.edge_tags()[e] & edge_tag::DUPLICATE != 0, first != e as u32);
    }
    prop_assert_eq!(t.corner_edges(), &n.corner_edge[..], "outgoing edges of the corners");
    // Some pairs that are not edges.
    for a in 0..(nv as u32).min(12) {
        for b in 0..(nv as u32).min(12) {
            if !n.first_edge.contains_key(&key(a, b)) {
                prop_assert_eq!(t.find_edge(a, b), None);
            }
        }
    }
    prop_assert_eq!(t.find_edge(0, nv as u32), None);

    // Vertices.
    let pattern = t.vertex_face_pattern();
    for v in 0..nv as u32 {
        let vu = v as usize;
        let corners = n.vertex_corners(v);
        prop_assert_eq!(t.vertex_corners(vu), &corners[..], "corners of vertex {}", v);
        prop_assert_eq!(t.face_count(vu), corners.len());
        prop_assert_eq!(t.vertex_edges(vu), &n.vertex_edges(v)[..], "edges of vertex {}", v);
        prop_assert_eq!(t.valence(vu), n.vedges[vu].len(), "valence of vertex {}", v);
        // Edge order at a vertex = non-decreasing neighbour (several edges
        // of one pair are adjacent).
        let nb: Vec<u32> = t.vertex_neighbors(vu).collect();
        prop_assert!(nb.windows(2).all(|w| w[0] <= w[1]));
        prop_assert_eq!(nb, n.nbrs[vu].clone(), "neighbours of vertex {}", v);
        prop_assert_eq!(t.vertex_tags()[vu], n.vertex_tag(v), "tag of vertex {}", v);
        prop_assert_eq!(t.is_boundary_vertex(vu), n.vertex_tag(v) & vertex_tag::BOUNDARY != 0);
        let fs: BTreeSet<u32> = corners.iter().map(|&c| n.corner_face[c as usize]).collect();
        prop_assert_eq!(pattern.as_ref().slice(vu), &fs.into_iter().collect::<Vec<_>>()[..]);
    }
    let manifold = n.manifold_error().is_none();
    prop_assert_eq!(t.is_manifold(), manifold);
    prop_assert_eq!(t.is_closed(), n.edges.iter().all(|(_, cs)| cs.len() != 1));
    let got = t.check_manifold().err();
    prop_assert_eq!(got.as_ref().and_then(classify), n.manifold_error(), "check_manifold gave {:?}", got);

    // The mesh matrix: sorted rows, values = 1-based position in the face.
    match t.mesh_matrix() {
        Ok(m) => {
            prop_assert!(!n.has_repeats());
            prop_assert_eq!(m.shape(), (nv, faces.len()));
            for (f, vs) in faces.iter().enumerate() {
                let mut col: Vec<(u32, u32)> = vs.iter().enumerate().map(|(k, &v)| (v, k as u32 + 1)).collect();
                col.sort_unstable();
                let (rows, vals) = m.as_ref().slice(f);
                prop_assert_eq!(rows.iter().copied().zip(vals.iter().copied()).collect::<Vec<_>>(), col);
            }
        }
        Err(e) => {
            // The first face with a repeat, and a vertex it repeats.
            let first = faces.iter().position(|f| f.iter().collect::<BTreeSet<_>>().len() != f.len());
            let MeshError::RepeatedVertex { face, vertex, .. } = e else {
                return Err(TestCaseError::fail(format!("mesh_matrix: {e}")));
            };
            prop_assert_eq!(Some(face), first);
            prop_assert!(faces[face].iter().filter(|&&v| v == vertex).count() > 1);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// E = M Mᵀ and the edge numbering
// ---------------------------------------------------------------------------

/// `E = M Mᵀ {μ}[λ]` keeping the collisions of two corners of one face
/// (positions `a` of row `i`, `b` of column `j`, face order `n`) for which
/// `keep(a, b, n)`, counting them.
fn edge_matrix(t: &Topology, keep: impl Fn(u32, u32, u32) -> bool + Sync, par: Par) -> CscMat<u32> {
    let m = t.mesh_matrix().expect("no repeated vertices");
    let mt = m.as_ref().transpose().to_csc(par);
    let ops = Ops::new(
        |a: &u32, b: &u32| (*a, *b),
        |(a, b): (u32, u32), c: &Collision<'_, u32, u32>| keep(a, b, t.face_order(c.k as usize) as u32).then_some(1u32),
    );
    spgemm::multiply(m.as_ref(), mt.as_ref(), &ops, par).expect("E fits u32")
}

/// The paper's `q(a, b, c) = b == a % c + 1`: `j` follows `i` in the face.
fn follows(a: u32, b: u32, c: u32) -> bool {
    b == a % c + 1
}

/// Enumerating the lower triangle of the symmetric `E` (cyclically adjacent
/// corners, either direction) gives the edges in `Topology`'s numbering,
/// each valued by its number of face uses; the directed `E` (`q` alone)
/// counts the uses in each direction.
fn check_edge_enumeration(t: &Topology, par: Par) -> Result<(), TestCaseError> {
    let e = edge_matrix(t, |a, b, c| follows(a, b, c) || follows(b, a, c), par);
    prop_assert_eq!(e.shape(), (t.num_vertices(), t.num_vertices()));
    let en = enumerate_nonzeros(e.as_ref(), |i, j, _| i > j, par);
    prop_assert_eq!(en.count as usize, t.num_edges());
    prop_assert_eq!(e.nnz(), 2 * t.num_edges());
    let mut next = 0u32;
    for (p, (i, j, &val)) in e.as_ref().iter().enumerate() {
        prop_assert!(i != j, "diagonal entry ({}, {})", i, j);
        prop_assert_eq!(e.as_ref().get(j as usize, i as usize), Some(&val), "E not symmetric at ({}, {})", i, j);
        if i > j {
            let k = en.id(p).expect("lower-triangle entry selected");
            prop_assert_eq!(k, next);
            next += 1;
            prop_assert_eq!(t.edge(k as usize), [j, i], "edge {}", k);
            prop_assert_eq!(val as usize, t.edge_corners(k as usize).len(), "face count of edge {}", k);
        } else {
            prop_assert_eq!(en.id(p), None);
        }
    }
    let d = edge_matrix(t, follows, par);
    let mut nnz = 0;
    for k in 0..t.num_edges() {
        let [lo, hi] = t.edge(k);
        let fwd = t.edge_corners(k).iter().filter(|&&c| t.face_verts()[c as usize] == lo).count() as u32;
        let bwd = t.edge_corners(k).len() as u32 - fwd;
        let at = |i: u32, j: u32| d.as_ref().get(i as usize, j as usize).copied();
        prop_assert_eq!(at(lo, hi), (fwd > 0).then_some(fwd), "uses {}->{}", lo, hi);
        prop_assert_eq!(at(hi, lo), (bwd > 0).then_some(bwd), "uses {}->{}", hi, lo);
        nnz += usize::from(fwd > 0) + usize::from(bwd > 0);
    }
    prop_assert_eq!(d.nnz(), nnz);
    Ok(())
}

// ---------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------

fn pools() -> &'static [ThreadPool] {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        [1, 2, 4].iter().map(|&n| ThreadPoolBuilder::new().num_threads(n).build().expect("thread pool")).collect()
    })
}

/// Builds with `Par::Seq` and with `Par::Rayon` in pools of 1, 2 and 4
/// threads; all must be equal. Returns the sequential build.
fn build_every_way(nv: usize, faces: &[Vec<u32>]) -> Result<Topology, TestCaseError> {
    let (ptr, verts) = flatten(faces);
    let seq = Topology::build(nv, ptr.clone(), verts.clone(), Par::Seq).expect("valid faces");
    for pool in pools() {
        let par = pool.install(|| Topology::build(nv, ptr.clone(), verts.clone(), Par::Rayon)).expect("valid faces");
        prop_assert!(par == seq, "Par::Rayon with {} threads differs from Par::Seq", pool.current_num_threads());
    }
    Ok(seq)
}

// ---------------------------------------------------------------------------
// Topology::from_edges
// ---------------------------------------------------------------------------

/// A pseudo-random permutation of `0..n` (Fisher-Yates on splitmix64).
fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        p.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    p
}

/// `from_edges` with `t`'s faces, edge `e` given as edge `perm[e]` (every
/// second one reversed, `[hi, lo]`) and the corner edges renumbered
/// accordingly.
fn from_permuted_edges(t: &Topology, perm: &[u32], par: Par) -> Result<Topology, MeshError> {
    let mut edges = vec![[0u32; 2]; t.num_edges()];
    for (e, &[lo, hi]) in t.edges().iter().enumerate() {
        edges[perm[e] as usize] = if e % 2 == 1 { [hi, lo] } else { [lo, hi] };
    }
    let corner_edge = t.corner_edges().iter().map(|&e| perm[e as usize]).collect();
    Topology::from_edges(t.num_vertices(), t.face_ptr().to_vec(), t.face_verts().to_vec(), edges, corner_edge, par)
}

/// `from_edges` on the edges and corner edges of the built `t` gives `t`
/// back; with the edges renumbered by `perm` it gives the same connectivity
/// under that numbering: the same uses, incident edges (re-sorted), tags
/// (DUPLICATE moving to whichever edge of a pair is no longer the lowest)
/// and vertex data.
fn check_from_edges(t: &Topology, perm: &[u32], par: Par) -> Result<(), TestCaseError> {
    let identity: Vec<u32> = (0..t.num_edges() as u32).collect();
    let u = from_permuted_edges(t, &identity, par).expect("the edges of a built topology are valid");
    prop_assert!(&u == t, "from_edges on the built edges differs from build");
    // Taken on trust, the same edges give the same connectivity; the search
    // for repeated pairs is left out only where the caller may say there
    // are none, and then finds none.
    let refined = |distinct| {
        let ptr = t.face_ptr().to_vec();
        let (fv, edges, ce) = (t.face_verts().to_vec(), t.edges().to_vec(), t.corner_edges().to_vec());
        Topology::from_refined_edges(t.num_vertices(), ptr, fv, edges, ce, distinct, par).expect("refined edges")
    };
    prop_assert!(&refined(false) == t, "from_refined_edges differs from build");
    let repeated = t.edge_tags().iter().any(|&x| x & edge_tag::DUPLICATE != 0);
    if !repeated {
        prop_assert!(&refined(true) == t, "from_refined_edges with distinct pairs differs from build");
    }

    let u = from_permuted_edges(t, perm, par).expect("permuted edges are valid");
    prop_assert_eq!(u.num_edges(), t.num_edges());
    prop_assert_eq!(u.face_ptr(), t.face_ptr());
    prop_assert_eq!(u.face_verts(), t.face_verts());
    prop_assert_eq!(u.corner_faces(), t.corner_faces());
    let mapped: Vec<u32> = t.corner_edges().iter().map(|&e| perm[e as usize]).collect();
    prop_assert_eq!(u.corner_edges(), &mapped[..]);
    for e in 0..t.num_edges() {
        let f = perm[e] as usize;
        let [lo, hi] = t.edge(e);
        prop_assert_eq!(u.edge(f), [lo, hi]);
        prop_assert_eq!(u.edge_corners(f), t.edge_corners(e));
        let (tt, ut) = (t.edge_tags()[e], u.edge_tags()[f]);
        prop_assert_eq!(tt & !edge_tag::DUPLICATE, ut & !edge_tag::DUPLICATE, "tag of edge {}", e);
        // The lowest new id of the pair.
        let lowest = t
            .vertex_edges(lo as usize)
            .iter()
            .filter(|&&x| t.edge(x as usize) == [lo, hi])
            .map(|&x| perm[x as usize])
            .min();
        prop_assert_eq!(u.find_edge(lo, hi), lowest);
        prop_assert_eq!(u.find_edge(hi, lo), lowest);
        prop_assert_eq!(ut & edge_tag::DUPLICATE != 0, lowest != Some(f as u32));
    }
    for v in 0..t.num_vertices() {
        prop_assert_eq!(u.vertex_corners(v), t.vertex_corners(v));
        let mut es: Vec<u32> = t.vertex_edges(v).iter().map(|&e| perm[e as usize]).collect();
        es.sort_unstable();
        prop_assert_eq!(u.vertex_edges(v), &es[..], "edges of vertex {}", v);
        prop_assert_eq!(u.valence(v), t.valence(v));
        prop_assert_eq!(u.vertex_tags()[v], t.vertex_tags()[v], "tag of vertex {}", v);
    }
    prop_assert_eq!(u.is_manifold(), t.is_manifold());
    prop_assert_eq!(u.is_closed(), t.is_closed());
    prop_assert_eq!(u.check_manifold().is_ok(), t.check_manifold().is_ok());
    Ok(())
}

// ---------------------------------------------------------------------------
// Helpers on generated meshes
// ---------------------------------------------------------------------------

fn euler(t: &Topology) -> i64 {
    t.num_vertices() as i64 - t.num_edges() as i64 + t.num_faces() as i64
}

/// Positions: one finite row of three channels per vertex, no two equal.
fn check_positions(d: &MeshData) -> Result<(), TestCaseError> {
    prop_assert_eq!(d.vertices.shape(), &[d.mesh.num_vertices(), 3][..]);
    prop_assert_eq!(&d.channels, &["x", "y", "z"]);
    prop_assert!(d.vertices.iter().all(|x| x.is_finite()));
    let mut rows: Vec<[u64; 3]> =
        d.vertices.rows().into_iter().map(|r| [r[0].to_bits(), r[1].to_bits(), r[2].to_bits()]).collect();
    rows.sort_unstable();
    prop_assert!(rows.windows(2).all(|w| w[0] != w[1]), "two vertices share a position");
    prop_assert!(d.validate().is_ok());
    Ok(())
}

/// What every generated mesh satisfies.
fn check_generated(d: &MeshData) -> Result<(), TestCaseError> {
    let t = d.mesh.topology();
    prop_assert!(t.num_faces() <= 400, "{} faces", t.num_faces());
    prop_assert!(t.check_manifold().is_ok(), "{:?}", t.check_manifold());
    prop_assert!(t.is_manifold());
    for v in 0..t.num_vertices() {
        prop_assert_eq!(t.vertex_tags()[v] & vertex_tag::ISOLATED, 0);
        // Manifold fans: a closed fan has as many edges as faces, an open one
        // has one more.
        let extra = usize::from(t.is_boundary_vertex(v));
        prop_assert_eq!(t.valence(v), t.face_count(v) + extra, "vertex {}", v);
    }
    let faces = face_lists(t);
    check_against_naive(t, t.num_vertices(), &faces)?;
    check_edge_enumeration(t, Par::Seq)?;
    check_from_edges(t, &shuffled(t.num_edges(), t.num_corners() as u64), Par::Seq)?;
    check_positions(d)?;
    let built = MeshBuilder::from_faces(t.num_vertices(), &faces).validation(Validation::Manifold).build(Par::Rayon);
    prop_assert!(built.is_ok(), "{:?}", built.err());
    Ok(())
}

// ---------------------------------------------------------------------------
// Random face soups and perturbed meshes (non-manifold on purpose)
// ---------------------------------------------------------------------------

/// Faces over few vertices, so edges are shared by any number of faces in
/// any direction; some vertices isolated. With `repeats`, faces may repeat
/// vertices.
fn soup(repeats: bool) -> impl Strategy<Value = (usize, Vec<Vec<u32>>)> {
    (3usize..10, 0usize..3).prop_flat_map(move |(used, isolated)| {
        let all: Vec<u32> = (0..used as u32).collect();
        let face = if repeats {
            vec(0..used as u32, 3..=6).boxed()
        } else {
            proptest::sample::subsequence(all, 3..=used.min(6)).prop_shuffle().boxed()
        };
        (Just(used + isolated), vec(face, 1..14))
    })
}

/// A manifold mesh made non-manifold (or not) by one edit: flip a face,
/// duplicate a face, add a fin on an edge, glue a triangle at a vertex,
/// repeat a vertex in a face, add a degenerate edge, add isolated vertices.
fn perturbed() -> impl Strategy<Value = (usize, Vec<Vec<u32>>)> {
    (any_mesh(), 0u8..7, any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(d, kind, x, y)| {
        let t = d.mesh.topology();
        let mut faces = face_lists(t);
        let mut nv = t.num_vertices() as u32;
        let f = x.index(faces.len());
        match kind {
            0 => {
                faces[f].reverse();
            }
            1 => faces.push(faces[f].clone()),
            2 => {
                let [a, b] = t.edge(y.index(t.num_edges()));
                faces.push(vec![a, b, nv]);
                nv += 1;
            }
            3 => {
                let v = y.index(nv as usize) as u32;
                faces.push(vec![v, nv, nv + 1]);
                nv += 2;
            }
            4 => {
                let k = y.index(faces[f].len());
                let (v, at) = (faces[f][k], (k + 2) % faces[f].len());
                faces[f].insert(at, v);
            }
            5 => {
                let v = faces[f][0];
                faces[f].insert(0, v);
            }
            _ => nv += 1 + y.index(3) as u32,
        }
        (nv as usize, faces)
    })
}

fn check_soup(nv: usize, faces: &[Vec<u32>]) -> Result<(), TestCaseError> {
    let t = build_every_way(nv, faces)?;
    check_against_naive(&t, nv, faces)?;
    if !Naive::new(nv, faces).has_repeats() {
        check_edge_enumeration(&t, Par::Rayon)?;
    }
    check_from_edges(&t, &shuffled(t.num_edges(), faces.len() as u64), Par::Rayon)?;
    // The builder: accepted and tagged by default, the same first problem as
    // check_manifold in Manifold mode.
    let default = MeshBuilder::from_faces(nv, faces).build(Par::Seq);
    prop_assert!(default.is_ok(), "{:?}", default.err());
    prop_assert!(default.expect("checked").topology() == &t);
    let strict = MeshBuilder::from_faces(nv, faces).validation(Validation::Manifold).build(Par::Seq);
    let expected = t.check_manifold().err().as_ref().and_then(classify);
    prop_assert_eq!(strict.err().as_ref().and_then(classify), expected);
    Ok(())
}

proptest! {
    #[test]
    fn generated_meshes_match_naive(d in any_mesh()) {
        check_generated(&d)?;
    }

    #[test]
    fn closed_quad_meshes_are_closed_quad_surfaces(d in closed_quad_mesh()) {
        let t = d.mesh.topology();
        prop_assert!(t.is_quad_only() && t.is_closed());
        prop_assert!(t.num_faces() <= 300);
        // Tori and spheres.
        prop_assert!(euler(t) == 0 || euler(t) == 2, "Euler characteristic {}", euler(t));
        prop_assert!(t.vertex_tags().iter().all(|&x| x == 0));
        prop_assert!(!d.mesh.has_sharpness() && !d.mesh.has_holes());
        check_generated(&d)?;
    }

    #[test]
    fn polygon_meshes_are_open_disks(d in polygon_mesh_with_boundary()) {
        let t = d.mesh.topology();
        prop_assert!(!t.is_closed());
        prop_assert_eq!(euler(t), 1);
        prop_assert!(t.num_faces() <= 350);
        prop_assert!((0..t.num_faces()).all(|f| (3..=12).contains(&t.face_order(f))));
        check_generated(&d)?;
    }

    #[test]
    fn triangle_meshes_are_triangulated_surfaces(d in triangle_mesh()) {
        let t = d.mesh.topology();
        prop_assert!(t.is_triangle_only());
        prop_assert!(t.num_faces() <= 300);
        let chi = euler(t);
        if t.is_closed() {
            prop_assert!(chi == 0 || chi == 2, "Euler characteristic {}", chi);
            prop_assert_eq!(2 * t.num_edges(), 3 * t.num_faces());
        } else {
            prop_assert_eq!(chi, 1);
        }
        check_generated(&d)?;
    }

    #[test]
    fn creased_meshes_carry_valid_tags(d in mesh_with_creases()) {
        let t = d.mesh.topology();
        prop_assert_eq!(d.mesh.edge_sharpness().len(), t.num_edges());
        prop_assert_eq!(d.mesh.vertex_sharpness().len(), t.num_vertices());
        prop_assert!(d.mesh.edge_sharpness().iter().chain(d.mesh.vertex_sharpness()).all(|&s| s >= 0.0));
        // The crease matrix holds exactly the sharp edges, both ways.
        let c = d.mesh.crease_matrix().expect("crease matrix");
        let sharp = d.mesh.edge_sharpness().iter().filter(|&&s| s > 0.0).count();
        prop_assert_eq!(c.nnz(), 2 * sharp);
        for (e, &s) in d.mesh.edge_sharpness().iter().enumerate() {
            let [a, b] = t.edge(e);
            let got = c.as_ref().get(a as usize, b as usize).copied();
            prop_assert_eq!(got, (s > 0.0).then_some(s));
        }
        check_generated(&d)?;
    }

    #[test]
    fn face_soups_match_naive((nv, faces) in soup(false)) {
        check_soup(nv, &faces)?;
    }

    #[test]
    fn face_soups_with_repeats_match_naive((nv, faces) in soup(true)) {
        check_soup(nv, &faces)?;
    }

    #[test]
    fn perturbed_meshes_match_naive((nv, faces) in perturbed()) {
        check_soup(nv, &faces)?;
    }

    #[test]
    fn relabelling_is_an_isomorphism((d, perm) in any_mesh_with_permutation()) {
        let r = relabel(&d, &perm);
        let (t, u) = (d.mesh.topology(), r.mesh.topology());
        prop_assert_eq!(u.face_ptr(), t.face_ptr());
        prop_assert!(t.face_verts().iter().zip(u.face_verts()).all(|(&a, &b)| perm[a as usize] == b));
        prop_assert_eq!(u.num_edges(), t.num_edges());
        prop_assert_eq!(r.mesh.options(), d.mesh.options());
        prop_assert_eq!(r.mesh.holes(), d.mesh.holes());
        for v in 0..t.num_vertices() {
            let w = perm[v] as usize;
            prop_assert_eq!(u.valence(w), t.valence(v));
            prop_assert_eq!(u.vertex_tags()[w], t.vertex_tags()[v]);
            prop_assert_eq!(r.mesh.vertex_sharpness()[w], d.mesh.vertex_sharpness()[v]);
            prop_assert_eq!(r.vertices.row(w), d.vertices.row(v));
            let mut nb: Vec<u32> = t.vertex_neighbors(v).map(|x| perm[x as usize]).collect();
            nb.sort_unstable();
            prop_assert_eq!(u.vertex_neighbors(w).collect::<Vec<_>>(), nb);
        }
        for e in 0..t.num_edges() {
            let [a, b] = t.edge(e);
            let f = u.find_edge(perm[a as usize], perm[b as usize]).expect("edge maps to an edge") as usize;
            prop_assert_eq!(r.mesh.edge_sharpness()[f], d.mesh.edge_sharpness()[e]);
            prop_assert_eq!(u.edge_corners(f), t.edge_corners(e));
            prop_assert_eq!(u.edge_tags()[f], t.edge_tags()[e]);
        }
        // The inverse permutation gives the mesh back.
        let mut inv = vec![0u32; perm.len()];
        for (v, &p) in perm.iter().enumerate() {
            inv[p as usize] = v as u32;
        }
        prop_assert!(relabel(&r, &inv) == d);
    }

    #[test]
    fn relabelled_meshes_match_naive(d in any_mesh().prop_flat_map(|d| { let n = d.mesh.num_vertices(); (Just(d), permutation(n)) }).prop_map(|(d, p)| relabel(&d, &p))) {
        check_generated(&d)?;
    }

    #[test]
    fn from_edges_with_any_numbering((nv, faces, seed) in (soup(true), any::<u64>()).prop_map(|((nv, f), s)| (nv, f, s))) {
        let t = build_every_way(nv, &faces)?;
        let perm = shuffled(t.num_edges(), seed);
        check_from_edges(&t, &perm, Par::Seq)?;
        let u = from_permuted_edges(&t, &perm, Par::Seq).expect("valid");
        for pool in pools() {
            let par = pool.install(|| from_permuted_edges(&t, &perm, Par::Rayon)).expect("valid");
            prop_assert!(par == u);
        }
    }

    #[test]
    fn from_edges_with_permuted_edges_of_generated_meshes((d, perm) in any_mesh().prop_flat_map(|d| { let n = d.mesh.topology().num_edges(); (Just(d), permutation(n)) })) {
        check_from_edges(d.mesh.topology(), &perm, Par::Rayon)?;
    }

    #[test]
    fn parallel_builds_agree(d in any_mesh()) {
        let t = d.mesh.topology();
        let u = build_every_way(t.num_vertices(), &face_lists(t))?;
        prop_assert!(&u == t);
    }
}

// ---------------------------------------------------------------------------
// Large meshes: the parallel paths (>= 32768 corners)
// ---------------------------------------------------------------------------

fn check_large(nv: usize, faces: &[Vec<u32>]) {
    let t = build_every_way(nv, faces).expect("parallel builds agree");
    assert!(t.num_corners() >= 1 << 15);
    check_against_naive(&t, nv, faces).expect("matches naive");
    // from_edges: the same result in every pool, and the permuted numbering.
    let perm = shuffled(t.num_edges(), 7);
    let seq = from_permuted_edges(&t, &perm, Par::Seq).expect("valid edges");
    for pool in pools() {
        let par = pool.install(|| from_permuted_edges(&t, &perm, Par::Rayon)).expect("valid edges");
        assert!(par == seq, "from_edges with {} threads differs from Par::Seq", pool.current_num_threads());
    }
    pools()[2].install(|| check_from_edges(&t, &perm, Par::Rayon)).expect("from_edges");
    let check_e = |t: &Topology, par| check_edge_enumeration(t, par).expect("E enumeration");
    if !Naive::new(nv, faces).has_repeats() {
        check_e(&t, Par::Seq);
        pools()[2].install(|| check_e(&t, Par::Rayon));
    }
}

#[test]
fn large_torus_is_deterministic_and_matches_naive() {
    let d = torus(200, 200, 7);
    let t = d.mesh.topology();
    assert_eq!(t.num_corners(), 160_000);
    assert!(t.is_quad_only() && t.is_closed() && t.is_manifold());
    assert!((0..t.num_vertices()).all(|v| t.valence(v) == 4 && t.face_count(v) == 4));
    check_large(t.num_vertices(), &face_lists(t));
    check_positions(&d).expect("positions");
}

#[test]
fn large_non_manifold_mesh_is_deterministic_and_matches_naive() {
    let d = torus(180, 190, 3);
    let t = d.mesh.topology();
    let mut faces = face_lists(t);
    let mut nv = t.num_vertices() as u32;
    for e in (0..t.num_edges()).step_by(97) {
        let [a, b] = t.edge(e);
        faces.push(vec![a, b, nv]); // fin
        nv += 1;
    }
    for v in (0..t.num_vertices() as u32).step_by(101) {
        faces.push(vec![v, nv, nv + 1]); // bow-tie
        nv += 2;
    }
    for f in (0..t.num_faces()).step_by(89) {
        faces[f].reverse(); // inconsistent orientation
    }
    for f in (5..t.num_faces()).step_by(1009) {
        let v = faces[f][0];
        faces[f].insert(2, v); // repeated vertex
    }
    faces.push(vec![0, 0, 1, 2]); // degenerate edge
    let nv = nv as usize + 50; // isolated vertices
    check_large(nv, &faces);
    // Same faces in every pool through the builder as well.
    let seq = MeshBuilder::from_faces(nv, &faces).build(Par::Seq).expect("accepted");
    for pool in pools() {
        let par = pool.install(|| MeshBuilder::from_faces(nv, &faces).build(Par::Rayon)).expect("accepted");
        assert!(par == seq);
    }
    assert!(matches!(seq.topology().check_manifold(), Err(MeshError::RepeatedVertex { face: 5, .. })));
    // Each face `[v, a, v, b, c]` traverses (v, a) twice: one extra instance
    // each (built in the parallel path).
    let tags = seq.topology().edge_tags();
    let repeats = (5..t.num_faces()).step_by(1009).count();
    assert!(repeats > 30);
    assert_eq!(tags.iter().filter(|&&x| x & edge_tag::DUPLICATE != 0).count(), repeats);
    assert_eq!(tags.iter().filter(|&&x| x & edge_tag::DEGENERATE != 0).count(), 1);
}

// ---------------------------------------------------------------------------
// Validation: hand-made cases
// ---------------------------------------------------------------------------

fn strict(nv: usize, faces: &[&[u32]]) -> Result<subla_mesh::Mesh, MeshError> {
    MeshBuilder::from_faces(nv, faces).validation(Validation::Manifold).build(Par::Seq)
}

fn lenient(nv: usize, faces: &[&[u32]]) -> subla_mesh::Mesh {
    MeshBuilder::from_faces(nv, faces).build(Par::Seq).expect("accepted in OpenSubdiv mode")
}

#[test]
fn fin_is_a_non_manifold_edge() {
    let faces: &[&[u32]] = &[&[0, 1, 2], &[1, 0, 3], &[0, 1, 4]];
    let err = strict(5, faces).unwrap_err();
    assert!(
        matches!(err, MeshError::NonManifoldEdge { v0: 0, v1: 1, faces: 3, first: 0, second: 1, third: 2 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("(0, 1)"), "{err}");
    let m = lenient(5, faces);
    let t = m.topology();
    let e = t.find_edge(1, 0).unwrap() as usize;
    assert_eq!(t.edge_tags()[e], edge_tag::NON_MANIFOLD);
    assert_eq!(t.edge_corners(e).len(), 3);
    assert!(t.vertex_tags()[0] & vertex_tag::NON_MANIFOLD != 0);
    assert!(t.vertex_tags()[1] & vertex_tag::NON_MANIFOLD != 0);
    assert_eq!(t.vertex_tags()[2], vertex_tag::BOUNDARY);
    assert!(!t.is_manifold());
}

#[test]
fn same_direction_is_inconsistent_orientation() {
    let faces: &[&[u32]] = &[&[0, 1, 2], &[0, 1, 3]];
    let err = strict(4, faces).unwrap_err();
    assert!(matches!(err, MeshError::InconsistentOrientation { v0: 0, v1: 1, face_a: 0, face_b: 1 }), "{err:?}");
    let t = lenient(4, faces).topology().clone();
    let e = t.find_edge(0, 1).unwrap() as usize;
    assert_eq!(t.edge_tags()[e], edge_tag::INCONSISTENT | edge_tag::NON_MANIFOLD);
    assert!(!t.is_manifold());
    // Flipping one face makes it a manifold strip.
    assert!(strict(4, &[&[0, 1, 2], &[1, 0, 3]]).is_ok());
}

#[test]
fn bow_tie_is_a_non_manifold_vertex() {
    let faces: &[&[u32]] = &[&[0, 1, 2], &[0, 3, 4]];
    let err = strict(5, faces).unwrap_err();
    assert!(matches!(err, MeshError::NonManifoldVertex { vertex: 0, fans: 2 }), "{err:?}");
    let t = lenient(5, faces).topology().clone();
    assert_eq!(t.vertex_tags()[0], vertex_tag::BOUNDARY | vertex_tag::NON_MANIFOLD);
    assert!(t.edge_tags().iter().all(|&x| x == edge_tag::BOUNDARY));
    // Two tetrahedra sharing a vertex: two closed fans.
    let tets: &[&[u32]] =
        &[&[0, 2, 1], &[0, 1, 3], &[0, 3, 2], &[1, 2, 3], &[0, 5, 4], &[0, 4, 6], &[0, 6, 5], &[4, 5, 6]];
    let err = strict(7, tets).unwrap_err();
    assert!(matches!(err, MeshError::NonManifoldVertex { vertex: 0, fans: 2 }), "{err:?}");
    let t = lenient(7, tets).topology().clone();
    assert_eq!(t.vertex_tags()[0], vertex_tag::NON_MANIFOLD);
    assert!(t.is_closed());
}

#[test]
fn repeated_vertex_is_rejected_strictly_and_tagged_otherwise() {
    let faces: &[&[u32]] = &[&[0, 1, 2], &[2, 1, 3, 1]];
    let err = strict(4, faces).unwrap_err();
    assert!(matches!(err, MeshError::RepeatedVertex { face: 1, vertex: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("face 1"), "{err}");
    let t = lenient(4, faces).topology().clone();
    assert!(
        t.vertex_tags()[1] & (vertex_tag::REPEATED | vertex_tag::NON_MANIFOLD)
            == vertex_tag::REPEATED | vertex_tag::NON_MANIFOLD
    );
    assert!(matches!(t.mesh_matrix(), Err(MeshError::RepeatedVertex { face: 1, vertex: 1, .. })));
    // A vertex next to itself: a degenerate edge.
    let t = lenient(3, &[&[0, 0, 1, 2]]).topology().clone();
    let e = t.find_edge(0, 0).unwrap() as usize;
    assert_eq!(t.edge_tags()[e], edge_tag::DEGENERATE | edge_tag::NON_MANIFOLD | edge_tag::BOUNDARY);
    assert_eq!(t.vertex_edges(0).iter().filter(|&&x| x as usize == e).count(), 1);
    assert!(matches!(strict(3, &[&[0, 0, 1, 2]]), Err(MeshError::RepeatedVertex { face: 0, vertex: 0, .. })));
}

#[test]
fn degenerate_uses_get_separate_edges() {
    // Quadpole-style: every `[x, y, 5, 5]` has its own degenerate edge (5, 5).
    let faces: Vec<Vec<u32>> = vec![vec![4, 3, 5, 5], vec![3, 7, 5, 5], vec![7, 9, 5, 5], vec![9, 4, 5, 5]];
    let t = build_every_way(10, &faces).unwrap();
    check_against_naive(&t, 10, &faces).unwrap();
    let degenerate: Vec<usize> = (0..t.num_edges()).filter(|&e| t.edge(e) == [5, 5]).collect();
    assert_eq!(degenerate.len(), 4);
    assert_eq!(degenerate, (degenerate[0]..degenerate[0] + 4).collect::<Vec<_>>(), "adjacent ids");
    for (i, &e) in degenerate.iter().enumerate() {
        // In face order; each used once.
        assert_eq!(t.edge_corners(e), &[4 * i as u32 + 2]);
        assert_eq!(t.corner_edges()[4 * i + 2], e as u32);
        let dup = if i == 0 { 0 } else { edge_tag::DUPLICATE };
        assert_eq!(t.edge_tags()[e], edge_tag::DEGENERATE | edge_tag::NON_MANIFOLD | edge_tag::BOUNDARY | dup);
    }
    assert_eq!(t.find_edge(5, 5), Some(degenerate[0] as u32));
    // Vertex 5: four degenerate edges (once each) and the four spokes.
    assert_eq!(t.valence(5), 8);
    assert_eq!(t.vertex_edges(5).iter().filter(|&&e| degenerate.contains(&(e as usize))).count(), 4);
    assert_eq!(t.vertex_neighbors(5).collect::<Vec<_>>(), [3, 4, 5, 5, 5, 5, 7, 9]);
    assert!(t.vertex_tags()[5] & (vertex_tag::NON_MANIFOLD | vertex_tag::REPEATED) != 0);
    // The spokes (x, 5) are ordinary two-face edges.
    let e = t.find_edge(3, 5).unwrap() as usize;
    assert_eq!(t.edge_corners(e).len(), 2);
    assert_eq!(t.edge_tags()[e], 0);
}

#[test]
fn osd_non_manifold_shapes_match_naive() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/meshes/osd");
    // Degenerate edges: one per corner followed by the same vertex (e.g. four
    // for `f 110 110 110 110`).
    for (name, degenerate) in [("catmark_nonman_quadpole8.obj", 8), ("catmark_nonman_edges.obj", 18)] {
        let d = subla_mesh::obj::read_obj(dir.join(name), Validation::OpenSubdiv).expect(name);
        let t = d.mesh.topology();
        let faces = face_lists(t);
        assert!(build_every_way(t.num_vertices(), &faces).unwrap() == *t, "{name}");
        check_against_naive(t, t.num_vertices(), &faces).expect(name);
        check_from_edges(t, &shuffled(t.num_edges(), 3), Par::Seq).expect(name);
        let count = t.edge_tags().iter().filter(|&&x| x & edge_tag::DEGENERATE != 0).count();
        assert_eq!(count, degenerate, "{name}");
        let uses = (0..t.num_corners()).filter(|&c| t.face_verts()[c] == t.face_verts()[t.next_corner(c)]).count();
        assert_eq!(uses, degenerate, "{name}");
        assert!(!t.is_manifold(), "{name}");
    }
}

#[test]
fn a_face_traversing_a_pair_twice_gets_two_edges() {
    // [a, b, a, c]: uses a→b and b→a of (a, b), a→c and c→a of (a, c).
    let t = build_every_way(3, &[vec![0, 1, 0, 2]]).unwrap();
    assert_eq!(t.edges(), &[[0, 1], [0, 1], [0, 2], [0, 2]]);
    let nm = edge_tag::NON_MANIFOLD | edge_tag::BOUNDARY;
    assert_eq!(t.edge_tags(), &[nm, nm | edge_tag::DUPLICATE, nm, nm | edge_tag::DUPLICATE]);
    assert_eq!(t.corner_edges(), &[0, 1, 2, 3]);
    assert_eq!(t.find_edge(0, 1), Some(0));
    assert_eq!(t.find_edge(1, 0), Some(0));
    assert_eq!(t.find_edge(2, 0), Some(2));
    assert_eq!((t.valence(0), t.valence(1), t.valence(2)), (4, 2, 2));
    assert_eq!(t.vertex_neighbors(0).collect::<Vec<_>>(), [1, 1, 2, 2]);
    assert!(t.vertex_tags()[1] & vertex_tag::NON_MANIFOLD != 0);

    // A later face joins the first edge; its uses stay in corner order and
    // the duplicate keeps only its own.
    let faces = vec![vec![0, 1, 0, 2], vec![1, 0, 3], vec![0, 1, 4]];
    let t = build_every_way(5, &faces).unwrap();
    check_against_naive(&t, 5, &faces).unwrap();
    let first = t.find_edge(0, 1).unwrap() as usize;
    assert_eq!(t.edge(first + 1), [0, 1]);
    assert_eq!(t.edge_corners(first), &[0, 4, 7]);
    assert_eq!(t.edge_corners(first + 1), &[1]);
    assert_eq!(t.edge_tags()[first], edge_tag::NON_MANIFOLD);
    assert_eq!(t.edge_tags()[first + 1], edge_tag::NON_MANIFOLD | edge_tag::BOUNDARY | edge_tag::DUPLICATE);
    assert_eq!(t.corner_edges()[1], first as u32 + 1);

    // [a, b, a, b]: the first use creates the edge, the other three each
    // get their own.
    let t = build_every_way(2, &[vec![0, 1, 0, 1]]).unwrap();
    assert_eq!(t.num_edges(), 4);
    assert_eq!(t.find_edge(0, 1), Some(0));
    assert_eq!(t.edge_tags().iter().filter(|&&x| x & edge_tag::DUPLICATE != 0).count(), 3);
    // Still a repeated vertex for the strict mode.
    assert!(matches!(strict(3, &[&[0, 1, 0, 2]]), Err(MeshError::RepeatedVertex { face: 0, vertex: 0, .. })));
}

#[test]
fn several_edges_of_a_pair_give_one_crease_matrix_entry() {
    let t = Topology::build(3, vec![0, 4], vec![0, 1, 0, 2], Par::Seq).unwrap();
    let m = subla_mesh::Mesh::from_parts(t, vec![2.0, 5.0, 0.0, 1.0], vec![0.0; 3], vec![false], Default::default())
        .unwrap();
    let c = m.crease_matrix().unwrap();
    assert_eq!(c.nnz(), 4);
    assert_eq!(c.as_ref().get(0, 1), Some(&5.0));
    assert_eq!(c.as_ref().get(1, 0), Some(&5.0));
    assert_eq!(c.as_ref().get(2, 0), Some(&1.0));
    // Reversing the winding keeps the first edge's sharpness on the first
    // edge: [0, 2, 0, 1].
    let r = m.reversed_winding().unwrap();
    assert_eq!(r.topology().face(0), &[0, 2, 0, 1]);
    assert_eq!(r.edge_sharpness(), &[2.0, 0.0, 0.0, 0.0]);
}

#[test]
fn from_edges_keeps_the_callers_numbering() {
    // Two quads (0 1 2 3) and (1 4 5 2), edges in an arbitrary order, some
    // given high-to-low.
    let faces: Vec<Vec<u32>> = vec![vec![0, 1, 2, 3], vec![1, 4, 5, 2]];
    let (ptr, verts) = flatten(&faces);
    let edges = vec![[2, 1], [5, 4], [0, 1], [3, 2], [4, 1], [0, 3], [2, 5]];
    let corner_edge = vec![2, 0, 3, 5, 4, 1, 6, 0];
    let t = Topology::from_edges(6, ptr.clone(), verts.clone(), edges, corner_edge.clone(), Par::Seq).unwrap();
    assert_eq!(t.edges(), &[[1, 2], [4, 5], [0, 1], [2, 3], [1, 4], [0, 3], [2, 5]]);
    assert_eq!(t.corner_edges(), &corner_edge[..]);
    assert_eq!(t.edge_corners(0), &[1, 7]);
    assert_eq!(t.edge_tags()[0], 0);
    assert!((1..7).all(|e| t.edge_tags()[e] == edge_tag::BOUNDARY));
    assert_eq!(t.vertex_edges(1), &[0, 2, 4]);
    assert_eq!(t.vertex_neighbors(1).collect::<Vec<_>>(), [2, 0, 4]);
    assert_eq!(t.find_edge(2, 1), Some(0));
    assert_eq!(t.find_edge(0, 2), None);
    assert!(t.is_manifold());
    // The same as build up to the numbering.
    let b = Topology::build(6, ptr, verts, Par::Seq).unwrap();
    for e in 0..7 {
        let [lo, hi] = b.edge(e);
        let f = t.find_edge(lo, hi).unwrap() as usize;
        assert_eq!(t.edge_corners(f), b.edge_corners(e));
        assert_eq!(t.edge_tags()[f], b.edge_tags()[e]);
    }
    assert_eq!(t.vertex_tags(), b.vertex_tags());

    // Several edges of one pair used by different faces (which build never
    // makes): all non-manifold, the later ones duplicates.
    let faces: Vec<Vec<u32>> = vec![vec![0, 1, 2], vec![1, 0, 3]];
    let (ptr, verts) = flatten(&faces);
    let edges = vec![[1, 2], [0, 1], [2, 0], [0, 1], [0, 3], [3, 1]];
    let t = Topology::from_edges(4, ptr, verts, edges, vec![1, 0, 2, 3, 4, 5], Par::Seq).unwrap();
    assert_eq!(t.edge_tags()[1], edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD);
    assert_eq!(t.edge_tags()[3], edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD | edge_tag::DUPLICATE);
    assert_eq!(t.find_edge(1, 0), Some(1));
    assert!(t.vertex_tags()[0] & vertex_tag::NON_MANIFOLD != 0);
    assert!(!t.is_manifold());
    assert!(matches!(t.check_manifold(), Err(MeshError::NonManifoldVertex { vertex: 0, fans: 2 })));

    // One edge used twice by one face, opposite directions: non-manifold.
    let (ptr, verts) = flatten(&[vec![0, 1, 0, 2]]);
    let t = Topology::from_edges(3, ptr, verts, vec![[0, 1], [0, 2]], vec![0, 0, 1, 1], Par::Seq).unwrap();
    assert_eq!(t.edge_tags(), &[edge_tag::NON_MANIFOLD, edge_tag::NON_MANIFOLD]);
    assert_eq!(t.edge_corners(0), &[0, 1]);
}

#[test]
fn from_edges_validation_errors() {
    let (ptr, verts) = flatten(&[vec![0, 1, 2], vec![2, 1, 3]]);
    let edges = vec![[0, 1], [1, 2], [2, 0], [1, 3], [3, 2]];
    let ce = vec![0, 1, 2, 1, 3, 4];
    let build = |nv: usize, ptr: Vec<u32>, verts: Vec<u32>, edges: Vec<[u32; 2]>, ce: Vec<u32>| {
        Topology::from_edges(nv, ptr, verts, edges, ce, Par::Seq)
    };
    assert!(build(4, ptr.clone(), verts.clone(), edges.clone(), ce.clone()).is_ok());
    let edge_list = |e: MeshError, what: &str| match &e {
        MeshError::MalformedStatement { statement, reason, .. } if statement == "edge list" => {
            assert!(reason.contains(what), "{reason:?} lacks {what:?}");
            assert!(e.to_string().contains("malformed edge list statement"), "{e}");
        }
        _ => panic!("expected an edge-list error, got {e:?}"),
    };
    // Faces: as build.
    let err = build(4, vec![0, 3, 5], vec![0, 1, 2, 2, 1], edges.clone(), vec![0; 5]).unwrap_err();
    assert!(matches!(err, MeshError::FaceTooSmall { face: 1, order: 2, .. }), "{err:?}");
    let err = build(3, ptr.clone(), verts.clone(), edges.clone(), ce.clone()).unwrap_err();
    assert!(matches!(err, MeshError::IndexOutOfRange { face: 1, index: 3, num_vertices: 3, .. }), "{err:?}");
    let err = build(4, vec![0, 3, 7], verts.clone(), edges.clone(), ce.clone()).unwrap_err();
    assert!(matches!(&err, MeshError::MalformedStatement { statement, .. } if statement == "face pointer array"));
    // One corner edge per corner.
    edge_list(build(4, ptr.clone(), verts.clone(), edges.clone(), ce[..5].to_vec()).unwrap_err(), "5 corner edges");
    // Edge vertices in range.
    let mut bad = edges.clone();
    bad[3] = [1, 7];
    edge_list(
        build(4, ptr.clone(), verts.clone(), bad, ce.clone()).unwrap_err(),
        "edge 3 (1, 7) has a vertex out of range",
    );
    // A corner's edge must exist...
    let mut bad = ce.clone();
    bad[4] = 5;
    edge_list(build(4, ptr.clone(), verts.clone(), edges.clone(), bad).unwrap_err(), "corner 4 (face 1) has edge 5");
    // ... and join the corner's vertex to the next one.
    let mut bad = ce.clone();
    bad[5] = 3;
    edge_list(
        build(4, ptr.clone(), verts.clone(), edges.clone(), bad).unwrap_err(),
        "corner 5 (face 1) runs from vertex 3 to 2, but its edge 3 joins (1, 3)",
    );
    // The first wrong corner is named.
    let mut bad = ce.clone();
    bad[2] = 0;
    bad[1] = 2;
    edge_list(build(4, ptr.clone(), verts.clone(), edges.clone(), bad).unwrap_err(), "corner 1 (face 0)");
    // An edge no corner uses (OpenSubdiv's second half of a degenerate
    // edge) is kept, tagged non-manifold, and counts at its vertices.
    let mut more = edges.clone();
    more.push([0, 3]);
    let t = build(4, ptr.clone(), verts.clone(), more, ce.clone()).unwrap();
    assert!(t.edge_corners(5).is_empty());
    assert_ne!(t.edge_tags()[5] & edge_tag::NON_MANIFOLD, 0);
    assert!(t.vertex_edges(0).contains(&5) && t.vertex_edges(3).contains(&5));
    // A degenerate edge for a non-degenerate corner.
    let mut bad = edges.clone();
    bad[0] = [0, 0];
    edge_list(build(4, ptr, verts, bad, ce).unwrap_err(), "corner 0 (face 0) runs from vertex 0 to 1");
}

#[test]
fn errors_in_both_modes() {
    for validation in [Validation::OpenSubdiv, Validation::Manifold] {
        let build = |nv: usize, faces: &[&[u32]]| MeshBuilder::from_faces(nv, faces).validation(validation);
        let err = build(4, &[&[0, 1, 2], &[2, 1]]).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::FaceTooSmall { face: 1, order: 2, .. }), "{err:?}");
        let err = build(3, &[&[0, 1, 2], &[0, 2, 5]]).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::IndexOutOfRange { face: 1, index: 5, num_vertices: 3, .. }), "{err:?}");
        assert!(err.to_string().contains("face 1"), "{err}");
        let err = build(3, &[]).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::Empty { .. }), "{err:?}");
        let quad: &[&[u32]] = &[&[0, 1, 2, 3]];
        let err = build(4, quad).crease(0, 2, 1.0).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::CreaseNotAnEdge { v0: 0, v1: 2, .. }), "{err:?}");
        let err = build(4, quad).crease(0, 1, -1.0).build(Par::Seq).unwrap_err();
        assert!(
            matches!(err, MeshError::InvalidSharpness { target: SharpnessTarget::Edge(0, 1), value: -1.0, .. }),
            "{err:?}"
        );
        let err = build(4, quad).crease(3, 0, f32::NAN).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::InvalidSharpness { target: SharpnessTarget::Edge(3, 0), .. }), "{err:?}");
        let err = build(4, quad).corner(2, f32::NAN).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::InvalidSharpness { target: SharpnessTarget::Vertex(2), .. }), "{err:?}");
        let err = build(4, quad).corner(2, -0.5).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::InvalidSharpness { target: SharpnessTarget::Vertex(2), .. }), "{err:?}");
        let err = build(4, quad).hole(1).build(Par::Seq).unwrap_err();
        assert!(
            matches!(&err, MeshError::TagOutOfRange { tag, element: "face", index: 1, count: 1, .. } if tag == "hole"),
            "{err:?}"
        );
        let err = build(4, quad).crease(0, 9, 1.0).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::TagOutOfRange { element: "vertex", index: 9, count: 4, .. }), "{err:?}");
        let err = build(4, quad).corner(4, 1.0).build(Par::Seq).unwrap_err();
        assert!(matches!(err, MeshError::TagOutOfRange { element: "vertex", index: 4, count: 4, .. }), "{err:?}");
        // Valid tags pass in both modes; infinite and zero sharpness are fine.
        let m = build(5, quad).crease(1, 0, 2.5).crease(2, 3, f32::INFINITY).corner(1, 0.0).hole(0).build(Par::Seq);
        let m = m.expect("valid tags");
        assert_eq!(m.edge_sharpness()[m.topology().find_edge(0, 1).unwrap() as usize], 2.5);
        assert!(m.has_holes() && m.has_sharpness());
        assert_eq!(m.topology().vertex_tags()[4], vertex_tag::ISOLATED);
    }
}

#[test]
fn non_manifold_input_is_accepted_by_default() {
    // All four problems at once: accepted, each element tagged.
    let faces: &[&[u32]] =
        &[&[0, 1, 2], &[1, 0, 3], &[0, 1, 4], &[5, 6, 7], &[5, 7, 8], &[9, 10, 11], &[9, 12, 13], &[14, 15, 14, 16]];
    let m = lenient(17, faces);
    assert!(!m.topology().is_manifold());
    let naive = Naive::new(17, &faces.iter().map(|f| f.to_vec()).collect::<Vec<_>>());
    assert_eq!(classify(&m.topology().check_manifold().unwrap_err()), naive.manifold_error());
    assert!(matches!(m.topology().check_manifold(), Err(MeshError::RepeatedVertex { face: 7, vertex: 14, .. })));
}

// ---------------------------------------------------------------------------
// The strategies cover what they promise
// ---------------------------------------------------------------------------

fn sample<S: Strategy>(s: S, n: usize) -> Vec<S::Value> {
    let mut runner = TestRunner::deterministic();
    (0..n).map(|_| s.new_tree(&mut runner).expect("value").current()).collect()
}

#[test]
fn strategies_cover_valences_orders_tags_and_options() {
    let valences: BTreeSet<usize> = sample(closed_quad_mesh(), 200)
        .iter()
        .flat_map(|d| (0..d.mesh.num_vertices()).map(|v| d.mesh.topology().valence(v)).collect::<Vec<_>>())
        .collect();
    assert!([3, 4, 5, 6, 7, 8].iter().all(|k| valences.contains(k)), "valences {valences:?}");

    let polys = sample(polygon_mesh_with_boundary(), 200);
    let orders: BTreeSet<usize> = polys
        .iter()
        .flat_map(|d| (0..d.mesh.num_faces()).map(|f| d.mesh.topology().face_order(f)).collect::<Vec<_>>())
        .collect();
    assert!([3, 4, 5, 6].iter().all(|k| orders.contains(k)), "orders {orders:?}");
    assert!(polys.iter().any(|d| !d.mesh.topology().is_quad_only() && !d.mesh.topology().is_triangle_only()));

    let tris = sample(triangle_mesh(), 200);
    assert!(tris.iter().any(|d| d.mesh.topology().is_closed()));
    assert!(tris.iter().any(|d| !d.mesh.topology().is_closed()));

    let creased = sample(mesh_with_creases(), 200);
    let sharp = |pred: &dyn Fn(f32) -> bool| creased.iter().any(|d| d.mesh.edge_sharpness().iter().any(|&s| pred(s)));
    assert!(sharp(&|s| s > 0.0 && !is_infinitely_sharp(s)));
    assert!(sharp(&|s| s == 10.0));
    assert!(sharp(&|s| s > 10.0 && s.is_finite()));
    assert!(sharp(&|s| s == f32::INFINITY));
    assert!(creased.iter().any(|d| d.mesh.vertex_sharpness().iter().any(|&s| s > 0.0)));
    let opts: Vec<_> = creased.iter().map(|d| d.mesh.options()).collect();
    for b in [BoundaryInterpolation::None, BoundaryInterpolation::EdgeOnly, BoundaryInterpolation::EdgeAndCorner] {
        assert!(opts.iter().any(|o| o.boundary == b), "{b:?}");
    }
    for k in 0..6 {
        let f = FVarLinearInterpolation::from_tag(k).unwrap();
        assert!(opts.iter().any(|o| o.fvar_boundary == f), "{f:?}");
    }
    for c in [CreaseMethod::Uniform, CreaseMethod::Chaikin] {
        assert!(opts.iter().any(|o| o.crease_method == c), "{c:?}");
    }
    for s in [TriangleSubdivision::Catmark, TriangleSubdivision::Smooth] {
        assert!(opts.iter().any(|o| o.triangle_subdivision == s), "{s:?}");
    }
}

#[test]
fn permutation_strategy_gives_permutations() {
    for p in sample(permutation(17), 20) {
        let mut q = p.clone();
        q.sort_unstable();
        assert_eq!(q, (0..17).collect::<Vec<u32>>());
    }
    assert!(sample(permutation(17), 20).iter().any(|p| p.iter().enumerate().any(|(i, &x)| i as u32 != x)));
}

#[test]
#[should_panic(expected = "not a permutation")]
fn relabel_rejects_non_permutations() {
    let d = sample(closed_quad_mesh(), 1).pop().unwrap();
    let n = d.mesh.num_vertices() as u32;
    let mut p: Vec<u32> = (0..n).collect();
    p[1] = 0;
    relabel(&d, &p);
}

#[test]
fn triangulation_keeps_vertices_tags_and_holes() {
    // A quad (0 1 2 3), a pentagon (1 4 5 6 2) and a triangle (3 2 7).
    let m = subla_mesh::MeshBuilder::new(8, vec![0, 4, 9, 12], vec![0, 1, 2, 3, 1, 4, 5, 6, 2, 3, 2, 7])
        .crease(1, 2, 2.5)
        .crease(4, 5, 1.0)
        .corner(0, 3.0)
        .hole(1)
        .options(subla_mesh::Options { crease_method: subla_mesh::CreaseMethod::Chaikin, ..Default::default() })
        .build(Par::Seq)
        .unwrap();
    let t = m.triangulated().unwrap();
    let faces: Vec<&[u32]> = (0..t.num_faces()).map(|f| t.topology().face(f)).collect();
    assert_eq!(faces, [&[0, 1, 2][..], &[0, 2, 3], &[1, 4, 5], &[1, 5, 6], &[1, 6, 2], &[3, 2, 7]]);
    assert_eq!(t.holes(), &[false, false, true, true, true, false]);
    assert_eq!(t.vertex_sharpness(), m.vertex_sharpness());
    assert_eq!(t.options(), m.options());
    let tt = t.topology();
    for e in 0..tt.num_edges() {
        let [a, b] = tt.edge(e);
        let want = match m.topology().find_edge(a, b) {
            Some(old) => m.edge_sharpness()[old as usize],
            None => 0.0,
        };
        assert_eq!(t.edge_sharpness()[e], want, "edge {a}-{b}");
    }
    assert_eq!(tt.num_edges(), m.topology().num_edges() + 3, "one diagonal in the quad, two in the pentagon");
    // A triangle mesh is its own triangulation.
    assert_eq!(&t.triangulated().unwrap(), &t);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any mesh triangulates: `n − 2` triangles per face, every input edge
    /// still an edge with its sharpness (the greatest of a pair's), every
    /// other edge a smooth diagonal, the holes and corners carried.
    #[test]
    fn any_mesh_triangulates_keeping_its_edges(data in mesh_with_creases()) {
        let m = &data.mesh;
        let t = m.triangulated().expect("triangulation");
        let (old, new) = (m.topology(), t.topology());
        prop_assert_eq!(new.num_faces(), old.num_corners() - 2 * old.num_faces());
        prop_assert!(new.is_triangle_only());
        prop_assert_eq!(t.vertex_sharpness(), m.vertex_sharpness());
        let mut first = 0;
        for f in 0..old.num_faces() {
            let n = old.face_order(f) - 2;
            prop_assert!(t.holes()[first..first + n].iter().all(|&h| h == m.holes()[f]));
            first += n;
        }
        let sharpest = |mesh: &subla_mesh::Mesh, a: u32, b: u32| -> Option<f32> {
            let tp = mesh.topology();
            (0..tp.num_edges())
                .filter(|&e| { let [x, y] = tp.edge(e); (x, y) == (a.min(b), a.max(b)) })
                .map(|e| mesh.edge_sharpness()[e])
                .reduce(f32::max)
        };
        for e in 0..old.num_edges() {
            let [a, b] = old.edge(e);
            prop_assert_eq!(sharpest(&t, a, b), sharpest(m, a, b), "edge {}-{}", a, b);
        }
        for e in 0..new.num_edges() {
            let [a, b] = new.edge(e);
            if old.find_edge(a, b).is_none() {
                prop_assert_eq!(t.edge_sharpness()[e], 0.0);
            }
        }
    }
}

#[test]
fn retagging_shares_the_topology_and_checks_the_tags() {
    let m = subla_mesh::Mesh::from_faces(4, &[[0, 1, 2], [0, 2, 3]]).unwrap();
    let (ne, nv) = (m.topology().num_edges(), m.num_vertices());
    let r = m.retagged(vec![1.5; ne], vec![0.0; nv], vec![true, false], Default::default()).unwrap();
    assert!(std::ptr::eq(m.topology(), r.topology()), "one topology, not a copy");
    assert_eq!((r.edge_sharpness(), r.holes()), (&vec![1.5; ne][..], &[true, false][..]));
    assert!(matches!(
        m.retagged(vec![0.0; ne + 1], vec![0.0; nv], vec![false; 2], Default::default()),
        Err(MeshError::DataLength { what: "edge sharpness", .. })
    ));
    assert!(matches!(
        m.retagged(vec![-1.0; ne], vec![0.0; nv], vec![false; 2], Default::default()),
        Err(MeshError::InvalidSharpness { .. })
    ));
}

// ---------------------------------------------------------------------------
// Validation time: every pass over the input O(n log n)
// ---------------------------------------------------------------------------

/// Generous bound for work that is linear-ish here and took minutes when
/// it was quadratic.
const SECONDS: u64 = 30;

#[test]
fn one_face_with_two_million_vertices_is_checked_in_linear_time() {
    let n = 2_000_000u32;
    let start = std::time::Instant::now();
    let t = Topology::build(n as usize, vec![0, n], (0..n).collect(), Par::Rayon).unwrap();
    t.check_manifold().unwrap();
    // The same face with its last vertex repeating vertex 7: the error
    // names the face and vertex whose second use comes first.
    let mut verts: Vec<u32> = (0..n).collect();
    verts[n as usize - 1] = 7;
    verts.push(n - 1);
    let t = Topology::build(n as usize, vec![0, n + 1], verts, Par::Rayon).unwrap();
    let err = t.check_manifold().unwrap_err();
    assert!(matches!(err, MeshError::RepeatedVertex { face: 0, vertex: 7, .. }), "{err:?}");
    assert!(start.elapsed().as_secs() < SECONDS, "took {:?}", start.elapsed());
}

#[test]
fn repeated_vertex_error_names_the_first_face_and_earliest_second_use() {
    // Face 1 repeats 4 (second use at position 3) before 5 (position 4).
    let faces: Vec<Vec<u32>> = vec![vec![0, 1, 2], vec![3, 4, 5, 4, 5, 6], vec![7, 8, 7]];
    let t = Topology::build(9, ptr_of(&faces), faces.concat(), Par::Seq).unwrap();
    let err = t.check_manifold().unwrap_err();
    assert!(matches!(err, MeshError::RepeatedVertex { face: 1, vertex: 4, .. }), "{err:?}");
}

fn ptr_of(faces: &[Vec<u32>]) -> Vec<u32> {
    let mut p = vec![0u32];
    for f in faces {
        p.push(p.last().unwrap() + f.len() as u32);
    }
    p
}

#[test]
fn many_edges_joining_the_same_two_vertices_are_tagged_in_n_log_n() {
    // Triangles (0, 1, 2 + f), each with its own three edges, as a refined
    // level of copies of one triangle has them: 200k edges join vertices 0
    // and 1, numbered after the 400k spokes that come first in the edge
    // lists of both (the order that made the scan for a lower edge of the
    // same pair quadratic).
    let n = 200_000u32;
    let start = std::time::Instant::now();
    let face_verts: Vec<u32> = (0..n).flat_map(|f| [0, 1, 2 + f]).collect();
    let face_ptr: Vec<u32> = (0..=n).map(|f| 3 * f).collect();
    let mut edges: Vec<[u32; 2]> = (0..n).flat_map(|f| [[1, 2 + f], [2 + f, 0]]).collect();
    edges.extend((0..n).map(|_| [0, 1]));
    let corner_edge: Vec<u32> = (0..n).flat_map(|f| [2 * n + f, 2 * f, 2 * f + 1]).collect();
    for par in [Par::Seq, Par::Rayon] {
        let t = Topology::from_edges(
            n as usize + 2,
            face_ptr.clone(),
            face_verts.clone(),
            edges.clone(),
            corner_edge.clone(),
            par,
        )
        .unwrap();
        for (e, &tag) in t.edge_tags().iter().enumerate() {
            let expected = match e as u32 {
                e if e < 2 * n => edge_tag::BOUNDARY,
                e if e == 2 * n => edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD,
                _ => edge_tag::BOUNDARY | edge_tag::NON_MANIFOLD | edge_tag::DUPLICATE,
            };
            assert_eq!(tag, expected, "edge {e}");
        }
        assert_eq!(t.find_edge(1, 0), Some(2 * n));
    }
    assert!(start.elapsed().as_secs() < SECONDS, "took {:?}", start.elapsed());
}

#[test]
fn many_creases_between_two_high_valence_vertices_resolve_in_n_log_n() {
    // Triangles (k, A, B): the edge (A, B) comes after n others in the
    // edge lists of both A and B; a crease tag on it n times.
    let n = 200_000u32;
    let (a, b) = (n, n + 1);
    let start = std::time::Instant::now();
    let faces: Vec<[u32; 3]> = (0..n).map(|k| [k, a, b]).collect();
    let mut builder = MeshBuilder::from_faces(n as usize + 2, &faces);
    for k in 0..n {
        builder = builder.crease(b, a, 1.0 + k as f32 / n as f32);
    }
    let mesh = builder.build(Par::Rayon).unwrap();
    let e = mesh.topology().find_edge(a, b).unwrap() as usize;
    assert_eq!(mesh.edge_sharpness()[e], 1.0 + (n - 1) as f32 / n as f32);
    assert!(start.elapsed().as_secs() < SECONDS, "took {:?}", start.elapsed());
}
