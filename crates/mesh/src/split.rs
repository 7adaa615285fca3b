//! The building blocks of a uniform split: what the splits of this crate
//! (quads, [`crate::split_quad`]; 1-to-4 triangles, [`crate::split_tri`])
//! and of the scheme crates (√3's, in `subla-sqrt3`) are made of.
//!
//! A split writes its child's relations directly from the parent's, one
//! output array per pass, each pass over blocks of parent elements that own
//! disjoint pieces of the output, so the result is the same for any thread
//! count. Every split goes through the same phases:
//!
//! 1. *counting*: the child's counts must fit in `u32`
//!    ([`check_counts`], [`check_triangle_child`]);
//! 2. *edge numbering of the child*: the scheme's own, with the halves of
//!    the parent's edges where it halves them ([`manifold_halves`],
//!    [`halves_by_vertex`], [`general_halves`]);
//! 3. *child faces*: the same number of children per parent element
//!    ([`face_ptr`], [`corner_faces`], and [`fixed_slots`] for their
//!    vertices and corner edges);
//! 4. *offsets* of the ragged relations — uses of each edge, corners and
//!    edges of each vertex — from their counts or in closed form
//!    ([`offsets`]), then the relations themselves, a slot per element
//!    ([`relation`], [`relation_by_ptr`], [`halved_edge_uses`], with
//!    [`sort_small`] where a slot's order is by id);
//! 5. *tags* ([`halved_edge_tags`], [`child_vertex_tags`]);
//! 6. the child, from all its fields ([`RawTopology`],
//!    [`Topology::from_raw`]).
//!
//! # Halving splits
//! The quad split and the 1-to-4 triangle split *halve* every parent edge
//! and add one interior edge per parent corner. Their children share a
//! layout, which [`halves_by_vertex`], [`general_halves`],
//! [`halved_edge_uses`] and [`halved_edge_tags`] write:
//!
//! ```text
//!   vertices   parent vertices | face points (quads) | edge points
//!   edges      halves (V_v, Ep_e), by parent vertex  | one per parent corner
//!              in the order of v's edges: 2|e|       | (each used twice)
//! ```
//!
//! A parent for which a split cannot write every relation directly
//! (non-manifold, say) gives its child faces and edges to
//! [`Topology::from_edges`] or [`Topology::build`] instead, which derive the
//! rest by counting sorts.

use std::ops::Range;

use rayon::prelude::*;
use subla_algebra::mem::{Zeroable, try_vec_with_capacity, try_zeroed_vec};
use subla_algebra::par::{Par, even_ranges};

use crate::error::{MeshError, Result, to_u32};
use crate::topology::{Topology, edge_tag, vertex_tag};

/// Every field of a [`Topology`], for a split that derives them directly
/// ([`Topology::from_raw`]).
///
/// # Invariants
/// The caller guarantees that the fields are those that
/// [`Topology::from_edges`] would derive from `face_ptr`, `face_verts`,
/// `edges` and `corner_edge`: the relations in their documented orders
/// (uses of an edge and corners of a vertex in corner order, edges of a
/// vertex in id order), edges as `[lo, hi]`, tags as
/// [`crate::topology::edge_tag`] and [`crate::topology::vertex_tag`] define
/// them. Nothing checks this at run time (a topology made of other fields
/// gives meaningless results, and may panic on an index out of range):
/// a split's tests compare its child field for field with `from_edges` on
/// the same faces and edges, as those of this crate's splits and of √3's
/// do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawTopology {
    /// Number of vertices.
    pub num_vertices: u32,
    /// Face pointer array ([`Topology::face_ptr`]).
    pub face_ptr: Vec<u32>,
    /// Vertices of every corner ([`Topology::face_verts`]).
    pub face_verts: Vec<u32>,
    /// Face of every corner ([`Topology::corner_faces`]).
    pub corner_face: Vec<u32>,
    /// Outgoing edge of every corner ([`Topology::corner_edges`]).
    pub corner_edge: Vec<u32>,
    /// Edges as `[lo, hi]` ([`Topology::edges`]).
    pub edges: Vec<[u32; 2]>,
    /// Pointer array of the uses of each edge ([`Topology::edge_corner_ptr`]).
    pub edge_corner_ptr: Vec<u32>,
    /// Uses of each edge, in corner order ([`Topology::edge_corners`]).
    pub edge_corners: Vec<u32>,
    /// Tag bits of every edge ([`Topology::edge_tags`]).
    pub edge_tags: Vec<u8>,
    /// Pointer array of the corners of each vertex
    /// ([`Topology::vertex_corner_ptr`]).
    pub vertex_corner_ptr: Vec<u32>,
    /// Corners of each vertex, in corner order ([`Topology::vertex_corners`]).
    pub vertex_corners: Vec<u32>,
    /// Pointer array of the edges of each vertex
    /// ([`Topology::vertex_edge_ptr`]).
    pub vertex_edge_ptr: Vec<u32>,
    /// Edges of each vertex, in id order ([`Topology::vertex_edges_all`]).
    pub vertex_edges: Vec<u32>,
    /// Tag bits of every vertex ([`Topology::vertex_tags`]).
    pub vertex_tags: Vec<u8>,
}

/// Whether a split of `t` runs its passes in parallel: under
/// [`Par::Rayon`], from 2¹⁴ parent corners on.
#[inline]
pub fn in_parallel(t: &Topology, par: Par) -> bool {
    par == Par::Rayon && t.num_corners() >= 1 << 14
}

/// `f(i)` for `i` in `0..n`, collected, in parallel when asked.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory) naming `what` where the result
/// cannot be allocated.
pub fn collect<T: Send>(
    n: usize,
    parallel: bool,
    what: &'static str,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Result<Vec<T>> {
    Ok(subla_algebra::par::try_collect(n, if parallel { Par::Rayon } else { Par::Seq }, what, f)?)
}

/// Runs `f(i, slot)` for items `0..n`, item `i` owning
/// `out[off(i)..off(i + 1)]`, in parallel blocks of items when `parallel`.
///
/// # Panics
/// If `off` is not non-decreasing from `off(0) == 0`, or `out` is shorter
/// than `off(n)`.
pub fn ragged<T: Send>(
    out: &mut [T],
    n: usize,
    off: impl Fn(usize) -> usize + Sync,
    parallel: bool,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let blocks = if parallel { Par::Rayon.blocks(n + out.len(), 1 << 13) } else { 1 };
    let ranges = even_ranges(n, blocks);
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = out;
    let mut at = 0;
    for r in &ranges {
        let end = off(r.end);
        let (head, tail) = rest.split_at_mut(end - at);
        pieces.push(head);
        rest = tail;
        at = end;
    }
    let work = |(r, piece): (Range<usize>, &mut [T])| {
        let base = off(r.start);
        for i in r {
            let (a, b) = (off(i) - base, off(i + 1) - base);
            f(i, &mut piece[a..b]);
        }
    };
    if ranges.len() > 1 {
        ranges.into_par_iter().zip(pieces).for_each(work);
    } else {
        ranges.into_iter().zip(pieces).for_each(work);
    }
}

/// Sorts a slot of at most a few entries (insertion sort, inlined: the
/// standard sort's call costs more than the sort on such slices).
#[inline]
pub fn sort_small<T: PartialOrd + Copy>(s: &mut [T]) {
    for i in 1..s.len() {
        let mut j = i;
        while j > 0 && s[j - 1] > s[j] {
            s.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Exclusive prefix sum of `counts`, with the total appended (the caller
/// has checked that the total fits in `u32`).
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory) naming `what`.
pub fn offsets(counts: &[u32], what: &'static str) -> Result<Vec<u32>> {
    let mut ptr = try_vec_with_capacity(counts.len() + 1, what)?;
    let mut acc = 0u32;
    ptr.push(0);
    for &n in counts {
        acc += n;
        ptr.push(acc);
    }
    Ok(ptr)
}

/// The next corner of a triangle (corners `3f`, `3f + 1`, `3f + 2`).
#[inline]
pub fn next3(c: usize) -> usize {
    if c % 3 == 2 { c - 2 } else { c + 1 }
}

/// The previous corner of a triangle.
#[inline]
pub fn prev3(c: usize) -> usize {
    if c % 3 == 0 { c + 2 } else { c - 1 }
}

/// The child edge id of each parent edge end of a manifold topology,
/// `halves[2e + j]`: the position of `e` in the edge list of its endpoint
/// `j` (edge lists are in id order, so one binary search). This numbers
/// the halves `(V_v, Ep_e)` by parent vertex, in the order of the vertex's
/// incident edges, from 0.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn manifold_halves(t: &Topology, parallel: bool) -> Result<Vec<u32>> {
    let (edges, vep, ves) = (t.edges(), t.vertex_edge_ptr(), t.vertex_edges_all());
    collect(2 * t.num_edges(), parallel, "the child edges of the parent edges' ends", |i| {
        let (e, v) = (i / 2, edges[i / 2][i % 2] as usize);
        let (s, t) = (vep[v] as usize, vep[v + 1] as usize);
        (s + ves[s..t].partition_point(|&x| (x as usize) < e)) as u32
    })
}

/// `Ok` if the child's counts fit in `u32`.
///
/// # Errors
/// [`MeshError::TooLarge`] naming the first count (vertices, corners,
/// edges) that does not.
pub fn check_counts([verts, corners, edges]: [usize; 3]) -> Result<()> {
    to_u32(verts, "number of refined vertices")?;
    to_u32(corners, "number of refined corners")?;
    to_u32(edges, "number of refined edges")?;
    Ok(())
}

/// `Ok` for a triangle-only `t` whose child counts (vertices, corners,
/// edges) fit in `u32`.
///
/// # Errors
/// [`MeshError::NotTriangle`] naming the first face that is not a
/// triangle; then as [`check_counts`].
pub fn check_triangle_child(t: &Topology, counts: [usize; 3]) -> Result<()> {
    if !t.is_triangle_only() {
        let f = (0..t.num_faces()).find(|&f| t.face_order(f) != 3).unwrap_or(0);
        return Err(MeshError::NotTriangle { face: f, order: t.face_order(f) });
    }
    check_counts(counts)
}

/// Whether a triangle split can write every child relation of `t`
/// directly: `t` is manifold and no two of its triangles share two edges.
#[inline]
pub fn splits_triangles_directly(t: &Topology, par: Par) -> bool {
    t.is_manifold() && !shares_two_edges(t, in_parallel(t, par))
}

/// True if two triangles of the triangle-only `t` share two edges (then
/// the middle edges of a 1-to-4 split, and the flipped edges of a √3
/// split, are not unique per vertex pair).
#[inline]
pub fn shares_two_edges(t: &Topology, parallel: bool) -> bool {
    let ce = t.corner_edges();
    // The other face across the edge of corner `c`, if any.
    let across = |c: usize| -> Option<u32> {
        t.edge_corners(ce[c] as usize).iter().find(|&&u| u as usize / 3 != c / 3).map(|&u| u / 3)
    };
    let double = |f: usize| -> bool {
        let [a, b, c] = [across(3 * f), across(3 * f + 1), across(3 * f + 2)];
        (a.is_some() && (a == b || a == c)) || (b.is_some() && b == c)
    };
    if parallel {
        (0..t.num_faces()).into_par_iter().with_min_len(1 << 12).any(double)
    } else {
        (0..t.num_faces()).any(double)
    }
}

/// `W` entries per item for items `0..n`, written by `f(i, slot)`: the
/// child faces (vertices, corner edges) of a split that gives every parent
/// element the same number of children; `what` names them in an error.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory) naming `what`, also where
/// `W * n` overflows.
pub fn fixed_slots<T: Zeroable + Send, const W: usize>(
    n: usize,
    parallel: bool,
    what: &'static str,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    let mut out = try_zeroed_vec::<T>(W.saturating_mul(n), what)?;
    ragged(&mut out, n, |i| W * i, parallel, f);
    Ok(out)
}

/// The face pointer array of `n` faces of `N` corners each.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn face_ptr<const N: usize>(n: usize, parallel: bool) -> Result<Vec<u32>> {
    collect(n + 1, parallel, "the face pointers of a refined level", |f| (N * f) as u32)
}

/// The face of every corner of `n` faces of `N` corners each.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn corner_faces<const N: usize>(n: usize, parallel: bool) -> Result<Vec<u32>> {
    collect(N * n, parallel, "the corner faces of a refined level", |c| (c / N) as u32)
}

/// A ragged relation of items `0..n`, item `i` owning the slot
/// `off(i)..off(i + 1)` (`off` non-decreasing from `off(0) == 0`, in
/// closed form), written by `f(i, slot)`: its pointer array and entries.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory) naming `what`.
pub fn relation<T: Zeroable + Send>(
    n: usize,
    off: impl Fn(usize) -> usize + Sync,
    parallel: bool,
    what: &'static str,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Result<(Vec<u32>, Vec<T>)> {
    let ptr = collect(n + 1, parallel, what, |i| off(i) as u32)?;
    let mut items = try_zeroed_vec::<T>(off(n), what)?;
    ragged(&mut items, n, off, parallel, f);
    Ok((ptr, items))
}

/// The entries of a ragged relation whose pointer array `ptr` is known
/// (from counts, by [`offsets`]), written by `f(i, slot)`.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory) naming `what`.
pub fn relation_by_ptr<T: Zeroable + Send>(
    ptr: &[u32],
    parallel: bool,
    what: &'static str,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    let n = ptr.len() - 1;
    let mut items = try_zeroed_vec::<T>(ptr[n] as usize, what)?;
    ragged(&mut items, n, |i| ptr[i] as usize, parallel, f);
    Ok(items)
}

/// The parent vertex of half `k` of a manifold `t` (the `k`-th entry of
/// the vertex edge lists, [`Topology::vertex_edges_all`]): the lists are
/// in vertex order, so the end of the edge whose list holds position `k`.
#[inline]
pub fn half_vertex(t: &Topology, k: usize) -> u32 {
    half_vertex_of(t, t.vertex_edges_all()[k] as usize, k)
}

/// [`half_vertex`] of half `k`, whose parent edge `e` is known.
#[inline]
fn half_vertex_of(t: &Topology, e: usize, k: usize) -> u32 {
    let [a, b] = t.edge(e);
    if (t.vertex_edge_ptr()[a as usize + 1] as usize) <= k { b } else { a }
}

/// The child edge of parent edge `e` at its end `v`, from the halves of a
/// halving split: a degenerate edge (`v` to itself) gives its first half to
/// the corner leaving along it, its second to the one `arriving`.
#[inline]
pub fn half_at(t: &Topology, halves: &[u32], e: u32, v: u32, arriving: bool) -> u32 {
    let [a, b] = t.edge(e as usize);
    let j = if a == b { usize::from(arriving) } else { usize::from(a != v) };
    halves[2 * e as usize + j]
}

/// [`half_at`] where `e` is not degenerate (so in any manifold `t`): one
/// comparison fewer on the hot path.
#[inline]
pub fn manifold_half_at(t: &Topology, halves: &[u32], e: u32, v: u32) -> u32 {
    halves[2 * e as usize + usize::from(t.edge(e as usize)[0] != v)]
}

/// Writes the halves `(V_v, Ep_e)` of a manifold `t` into `out` (of
/// `2|e|` entries), by parent vertex in the order of its edges
/// ([`manifold_halves`] numbers them so); the edge point of edge `e` is
/// child vertex `edge_points + e`.
pub fn halves_by_vertex(t: &Topology, edge_points: u32, out: &mut [[u32; 2]], parallel: bool) {
    let (vep, ves) = (t.vertex_edge_ptr(), t.vertex_edges_all());
    ragged(
        out,
        t.num_vertices(),
        |v| vep[v] as usize,
        parallel,
        |v, slot| {
            let s = vep[v] as usize;
            for (k, out) in slot.iter_mut().enumerate() {
                *out = [v as u32, edge_points + ves[s + k]];
            }
        },
    );
}

/// The halves of any `t`, numbered as [`manifold_halves`] numbers them
/// where `t` is manifold (a degenerate edge, listed once at its vertex,
/// has two halves in turn), and written into `out` (of `2|e|` entries) as
/// [`halves_by_vertex`] writes them: returns `halves[2e + j]`, the child
/// edge of parent edge `e` at its end `j`. One sequential pass: on the
/// general path the counting sorts of [`Topology::from_edges`] dominate.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn general_halves(t: &Topology, edge_points: u32, out: &mut [[u32; 2]]) -> Result<Vec<u32>> {
    let edges = t.edges();
    let mut halves = try_zeroed_vec::<u32>(2 * t.num_edges(), "the child edges of the parent edges' ends")?;
    let mut next = 0usize;
    for v in 0..t.num_vertices() {
        for &e in t.vertex_edges(v) {
            for (j, &end) in edges[e as usize].iter().enumerate() {
                if end as usize == v {
                    halves[2 * e as usize + j] = next as u32;
                    out[next] = [v as u32, edge_points + e];
                    next += 1;
                }
            }
        }
    }
    debug_assert_eq!(next, 2 * t.num_edges(), "every edge has two halves");
    Ok(halves)
}

/// The uses of the child edges of a halving split of a manifold `t` with
/// `new` edges after the halves, each used twice: the pointer array and
/// the uses, those of the halves written — the use of the half of edge `e`
/// at `v` by parent use `c` is the child corner `child_use(c, leaving)`
/// (`leaving`: `c` is at `v`, its edge leaves `v`), sorted — and those of
/// the new edges (from `edge_corner_ptr[2|e|]` on) left to the caller.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn halved_edge_uses(
    t: &Topology,
    new: usize,
    parallel: bool,
    child_use: impl Fn(usize, bool) -> u32 + Sync,
) -> Result<(Vec<u32>, Vec<u32>)> {
    let n_a = 2 * t.num_edges();
    let (ves, ecp, fv) = (t.vertex_edges_all(), t.edge_corner_ptr(), t.face_verts());
    // A half has the uses of its parent edge.
    let mut edge_corner_ptr = try_vec_with_capacity(n_a + new + 1, "the use pointers of the refined edges")?;
    let mut acc = 0u32;
    edge_corner_ptr.push(0);
    for &e in ves {
        acc += ecp[e as usize + 1] - ecp[e as usize];
        edge_corner_ptr.push(acc);
    }
    let total_a = acc as usize;
    edge_corner_ptr.extend((1..=new as u32).map(|i| acc + 2 * i));
    let mut edge_corners = try_zeroed_vec::<u32>(total_a + 2 * new, "the uses of the refined edges")?;
    ragged(
        &mut edge_corners[..total_a],
        n_a,
        |k| edge_corner_ptr[k] as usize,
        parallel,
        |k, slot| {
            let e = ves[k] as usize;
            let v = half_vertex_of(t, e, k);
            for (out, &c) in slot.iter_mut().zip(t.edge_corners(e)) {
                let c = c as usize;
                *out = child_use(c, fv[c] == v);
            }
            sort_small(slot);
        },
    );
    Ok((edge_corner_ptr, edge_corners))
}

/// The edge tags of a halving split's manifold child with `new` edges after
/// the halves: a half has its parent edge's boundary bit, a new edge
/// (interior) none.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn halved_edge_tags(t: &Topology, new: usize, parallel: bool) -> Result<Vec<u8>> {
    let n_a = 2 * t.num_edges();
    let (ptags, ves) = (t.edge_tags(), t.vertex_edges_all());
    collect(n_a + new, parallel, "the tags of the refined edges", |k| {
        if k < n_a { ptags[ves[k] as usize] & edge_tag::BOUNDARY } else { 0 }
    })
}

/// The vertex tags of a manifold `t`'s manifold child of `n` vertices,
/// the parent's first: a parent vertex keeps its tags; the edge point of
/// parent edge `e`, child vertex `p + e` where `edge_points` is `Some(p)`,
/// is on the boundary with its edge; every other child vertex is
/// untagged.
///
/// # Errors
/// [`MeshError::Algebra`] (out of memory).
pub fn child_vertex_tags(t: &Topology, n: usize, edge_points: Option<usize>, parallel: bool) -> Result<Vec<u8>> {
    let (nv, vtags, etags) = (t.num_vertices(), t.vertex_tags(), t.edge_tags());
    let ep = edge_points.unwrap_or(n);
    collect(n, parallel, "the tags of the refined vertices", |i| {
        if i < nv {
            vtags[i]
        } else if i < ep {
            0
        } else if etags[i - ep] & edge_tag::BOUNDARY != 0 {
            vertex_tag::BOUNDARY
        } else {
            0
        }
    })
}

#[cfg(test)]
mod tests {
    use subla_algebra::AlgebraError;

    use super::*;

    /// A child array the allocator cannot supply (or whose byte count
    /// overflows) is a typed error, not a panic or an abort.
    #[test]
    fn impossible_child_arrays_are_out_of_memory_errors() {
        let oom = |r: Result<()>| {
            assert!(
                matches!(r, Err(MeshError::Algebra(AlgebraError::OutOfMemory { what: "the test array", .. }))),
                "{r:?}"
            );
        };
        oom(fixed_slots::<u64, 48>(usize::MAX / 16, false, "the test array", |_, _| {}).map(drop));
        oom(relation::<u64>(1, |i| i * (usize::MAX / 4), false, "the test array", |_, _| {}).map(drop));
        oom(collect(usize::MAX / 4, false, "the test array", |i| i as u64).map(drop));
        assert_eq!(fixed_slots::<u32, 2>(3, false, "x", |i, s| s.fill(i as u32)).unwrap(), [0, 0, 1, 1, 2, 2]);
    }
}
