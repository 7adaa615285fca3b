//! End caps of Loop subdivision: the change of basis from the source points
//! around an irregular triangle to the control points of the patch that
//! approximates it (OpenSubdiv 3.6's `Far::LoopPatchBuilder` conversions:
//! the quartic Gregory triangle, the quartic box spline fitted to it, and
//! the linear triangle of limit positions).
//!
//! A triangle's corners are described by [`Corner`]s as for quads (see
//! [`crate::endcap`]), with one difference in the one-ring: a triangle
//! contributes one point per incident face, the vertex after the corner
//! vertex, and a boundary ring ends with the vertex preceding it in the
//! last face (`n` points inside, `n + 1` on a boundary; OpenSubdiv's
//! `gatherTriRegularRingAroundVertex`).
//!
//! Source points are numbered as OpenSubdiv's `Far::SourcePatch` for three
//! corners: the corners 0, 1, 2, then each corner's own ring points. A
//! triangle's corner never shares a ring point with the previous corner,
//! only with the next one.
//!
//! The rows hold the same values as OpenSubdiv's double-precision
//! conversion matrices; the order of the entries within a row and the
//! explicit zeros may differ (they are the sum of the same terms).

use std::f64::consts::PI;

use crate::endcap::{Corner, Row, Rows, SourcePatchError};

/// The three corners of an irregular triangle together with the numbering
/// of its source points, as OpenSubdiv's `Far::SourcePatch` after
/// `Finalize(3)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriSourcePatch {
    corners: [Corner; 3],
    shares_with_next: [bool; 3],
    val2_interior: [bool; 3],
    ring_sizes: [usize; 3],
    local_ring_sizes: [usize; 3],
    local_ring_offsets: [usize; 3],
    num_source_points: usize,
}

const fn next(c: usize) -> usize {
    (c + 1) % 3
}
const fn prev(c: usize) -> usize {
    (c + 2) % 3
}

impl TriSourcePatch {
    /// Numbers the source points of a triangle with these corners.
    ///
    /// # Panics
    /// If a corner has no faces, its patch face is out of range, an
    /// interior corner has fewer than two faces, or a dart is on a boundary.
    #[track_caller]
    pub fn new(corners: [Corner; 3]) -> TriSourcePatch {
        match Self::try_new(corners) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`TriSourcePatch::new`], but a configuration it cannot number is an error
    /// rather than a panic.
    ///
    /// # Errors
    /// [`SourcePatchError`] naming the corner and what is wrong with it.
    pub fn try_new(corners: [Corner; 3]) -> Result<TriSourcePatch, SourcePatchError> {
        for (c, corner) in corners.iter().enumerate() {
            corner.check(c)?;
        }
        let val2_interior = corners.map(|k| k.num_faces == 2 && !k.boundary);
        let mut patch = TriSourcePatch {
            corners,
            shares_with_next: [false; 3],
            val2_interior,
            ring_sizes: [0; 3],
            local_ring_sizes: [0; 3],
            local_ring_offsets: [0; 3],
            num_source_points: 3,
        };
        for c in 0..3 {
            let corner = corners[c];
            let n = usize::from(corner.num_faces);
            let (ring, local) = if n + usize::from(corner.boundary) > 2 {
                let with_next = if corner.boundary {
                    corner.patch_face != 0
                } else if corner.dart {
                    let x = corners[next(c)];
                    !(x.boundary && x.patch_face + 1 == x.num_faces)
                } else {
                    true
                };
                patch.shares_with_next[c] = with_next;
                let ring = n + usize::from(corner.boundary);
                // The other two corners, the shared point, and a valence-2
                // interior previous corner's stand-in are not local.
                let taken = 2 + usize::from(with_next) + usize::from(val2_interior[prev(c)]);
                if ring < taken {
                    return Err(SourcePatchError {
                        message: format!("corner {c}: its {n} faces cannot surround a triangle with these neighbours"),
                    });
                }
                (ring, ring - taken)
            } else {
                (2, 0)
            };
            patch.ring_sizes[c] = ring;
            patch.local_ring_sizes[c] = local;
            patch.local_ring_offsets[c] = patch.num_source_points;
            patch.num_source_points += local;
        }
        // Every corner's ring must number exactly its points, within range:
        // configurations past what OpenSubdiv's numbering handles fail here.
        let mut ring = Vec::new();
        for c in 0..3 {
            patch.corner_ring_points(c, &mut ring);
            if ring.len() != patch.ring_sizes[c] || ring.iter().any(|&r| r >= patch.num_source_points) {
                return Err(SourcePatchError {
                    message: format!("corner {c}: OpenSubdiv's source patch cannot number this corner configuration"),
                });
            }
        }
        Ok(patch)
    }

    /// The corners the patch was built from.
    pub fn corners(&self) -> &[Corner; 3] {
        &self.corners
    }

    /// Number of source points (the columns of the conversion rows).
    pub fn num_source_points(&self) -> usize {
        self.num_source_points
    }

    /// Number of points in the one-ring of `corner`: `n` inside, `n + 1` on
    /// a boundary.
    #[track_caller]
    pub fn corner_ring_size(&self, corner: usize) -> usize {
        assert!(corner < 3, "a triangle has corners 0 to 2, not {corner}");
        self.ring_sizes[corner]
    }

    /// The source point index of each entry of the one-ring of `corner`
    /// (OpenSubdiv's `SourcePatch::GetCornerRingPoints`). Clears `out` first.
    #[track_caller]
    pub fn corner_ring_points(&self, corner: usize, out: &mut Vec<usize>) {
        assert!(corner < 3, "a triangle has corners 0 to 2, not {corner}");
        let c = corner;
        out.clear();
        out.extend([next(c), prev(c)]);
        if self.val2_interior[prev(c)] {
            out.push(next(c));
        }
        let first = self.local_ring_offsets[c];
        out.extend(first..first + self.local_ring_sizes[c]);
        if self.shares_with_next[c] {
            let x = next(c);
            out.push(if self.val2_interior[x] {
                prev(c)
            } else if self.local_ring_sizes[x] == 0 {
                self.local_ring_offsets[prev(c)]
            } else {
                self.local_ring_offsets[x]
            });
        }
        let face = usize::from(self.corners[c].patch_face);
        if face != 0 {
            let len = out.len();
            out.rotate_left(len - face);
        }
    }

    /// The list of source points from the one-rings of the three corners
    /// (later corners overwrite earlier ones where rings overlap).
    ///
    /// # Panics
    /// If a ring's length is not [`corner_ring_size`](Self::corner_ring_size).
    #[track_caller]
    pub fn gather<T: Copy>(&self, rings: [&[T]; 3]) -> Vec<T> {
        for (c, ring) in rings.iter().enumerate() {
            assert_eq!(
                ring.len(),
                self.ring_sizes[c],
                "corner {c}: the one-ring has {} points, the patch expects {}",
                ring.len(),
                self.ring_sizes[c]
            );
        }
        let mut source = vec![rings[0][0]; self.num_source_points];
        let mut local = Vec::new();
        for (c, ring) in rings.iter().enumerate() {
            self.corner_ring_points(c, &mut local);
            for (&index, &point) in local.iter().zip(ring.iter()) {
                source[index] = point;
            }
        }
        source
    }
}

/// Limit position and edge-point weights over a corner and its one-ring
/// (width `1 + valence`), from Loop's limit masks, as OpenSubdiv's
/// `Far::LoopLimits`.
mod limits {
    use std::f64::consts::PI;

    /// Loop's smooth limit position mask of valence `n`
    /// (`Sdc::Scheme<SCHEME_LOOP>::assignSmoothLimitMask`).
    fn smooth_position(n: usize) -> Vec<f64> {
        if n == 6 {
            let mut p = vec![1.0 / 12.0; 7];
            p[0] = 0.5;
            return p;
        }
        let nf = n as f64;
        let inv = 1.0 / nf;
        let cos_theta = (PI * 2.0 * inv).cos();
        let beta = 0.25 * cos_theta + 0.375;
        let gamma = (0.625 - beta * beta) * inv;
        let e = 1.0 / (nf + 3.0 / (8.0 * gamma));
        let mut p = vec![e; n + 1];
        p[0] = 1.0 - e * nf;
        p
    }

    /// The interior limit position and, when asked, the points a third of
    /// the way along the limit tangent towards the patch face's two edges
    /// (`LoopLimits::ComputeInteriorPointWeights`): the tangent mask
    /// `cos(2 pi i / n)` is scaled by the subdominant eigenvalue and the
    /// cubic placement, `(3 + 2 cos(2 pi / n)) / (6 n)`.
    pub(super) fn interior(valence: usize, face_in_ring: usize, edges: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let p = smooth_position(valence);
        if !edges {
            return (p, Vec::new(), Vec::new());
        }
        let tangent: Vec<f64> = if valence == 6 {
            vec![0.0, 1.0, 0.5, -0.5, -1.0, -0.5, 0.5]
        } else {
            let alpha = 2.0 * PI / valence as f64;
            std::iter::once(0.0).chain((0..valence).map(|i| (alpha * i as f64).cos())).collect()
        };
        let theta = 2.0 * PI / valence as f64;
        let scale = (3.0 + 2.0 * theta.cos()) / (6.0 * valence as f64);
        let t2: Vec<f64> = p.iter().zip(&tangent).map(|(&a, &b)| a + b * scale).collect();
        let rotated = |first: usize| -> Vec<f64> {
            let n2 = valence - first;
            std::iter::once(t2[0]).chain((0..valence).map(|k| t2[1 + (k + n2) % valence])).collect()
        };
        let ep = rotated(face_in_ring);
        let em = rotated((face_in_ring + 1) % valence);
        (p, ep, em)
    }

    /// The boundary limit position (`(1/6, 2/3, 1/6)` along the boundary)
    /// and, when asked, the edge points, rotating the tangent across the
    /// boundary towards interior edges (`LoopLimits::ComputeBoundaryPointWeights`,
    /// with the crease tangent masks of `assignCreaseLimitTangentMasks`).
    pub(super) fn boundary(valence: usize, face_in_ring: usize, edges: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let width = valence + 1;
        let mut p = vec![0.0; width];
        p[0] = 4.0 / 6.0;
        p[1] = 1.0 / 6.0;
        p[valence] = 1.0 / 6.0;
        if !edges {
            return (p, Vec::new(), Vec::new());
        }
        // The tangent across the boundary, over [vertex, edges 0..valence).
        let mut t2 = vec![0.0; width];
        let interior = valence - 2;
        let root3 = 3f64.sqrt();
        match interior {
            0 => {
                t2[0] = -6.0;
                t2[1] = 3.0;
                t2[valence] = 3.0;
            }
            1 => {
                t2[0] = -3.0;
                t2[2] = 3.0;
            }
            2 => {
                t2[0] = -root3;
                t2[1] = -root3 * 0.5;
                t2[valence] = -root3 * 0.5;
                t2[2] = root3;
                t2[3] = root3;
            }
            _ => {
                let theta = PI / (interior + 1) as f64;
                let c = -3.0 * theta.sin();
                t2[1] = c;
                t2[valence] = c;
                let coeff = -3.0 * 2.0 * (theta.cos() - 1.0);
                for i in 1..=interior {
                    t2[1 + i] = coeff * (i as f64 * theta).sin();
                }
            }
        }
        let face_angle = PI / (valence - 1) as f64;
        let along = |edge: usize| -> Vec<f64> {
            let angle = face_angle * edge as f64;
            let (cos_a, sin_a) = (angle.cos(), angle.sin());
            let mut e: Vec<f64> = t2.iter().map(|&t| t / 24.0 * sin_a).collect();
            e[0] += p[0];
            e[1] += p[1] + cos_a / 6.0;
            e[valence] += p[valence] - cos_a / 6.0;
            e
        };
        let ep = if face_in_ring == 0 {
            let mut e = vec![0.0; width];
            e[0] = 2.0 / 3.0;
            e[1] = 1.0 / 3.0;
            e
        } else {
            along(face_in_ring)
        };
        // OpenSubdiv tests the last face against the valence, never true:
        // the last face's Em is rotated by pi, which is the same point.
        let em = along((face_in_ring + 1) % valence);
        (p, ep, em)
    }
}

/// Per-corner facts of the conversion (OpenSubdiv's
/// `GregoryTriConverter::CornerTopology`).
#[derive(Clone, Debug, Default)]
struct CornerTopology {
    boundary: bool,
    sharp: bool,
    regular: bool,
    single_face: bool,
    ep_on_boundary: bool,
    em_on_boundary: bool,
    fp_regular: bool,
    fm_regular: bool,
    fp_copied: bool,
    fm_copied: bool,
    valence: usize,
    num_faces: usize,
    face_in_ring: usize,
    cos_face_angle: f64,
    ring: Vec<usize>,
}

/// Adds `s` times `row` into a full row, marking the columns used.
fn add_into(full: &mut [f64], used: &mut [bool], row: &Row, s: f64) {
    for &(column, weight) in row {
        full[column] += s * weight;
        used[column] = true;
    }
}

/// The used columns of a full row, in column order.
fn collect(full: &[f64], used: &[bool]) -> Row {
    (0..full.len()).filter(|&i| used[i]).map(|i| (i, full[i])).collect()
}

struct GregoryTri {
    num_source_points: usize,
    corners: [CornerTopology; 3],
}

impl GregoryTri {
    /// Classifies the corners as `GregoryTriConverter::Initialize`.
    fn new(patch: &TriSourcePatch) -> GregoryTri {
        let mut corners: [CornerTopology; 3] = Default::default();
        for (c, topo) in corners.iter_mut().enumerate() {
            let src = patch.corners[c];
            topo.boundary = src.boundary;
            topo.sharp = src.sharp;
            topo.single_face = src.num_faces == 1;
            topo.num_faces = usize::from(src.num_faces);
            topo.face_in_ring = usize::from(src.patch_face);
            topo.valence = topo.num_faces + usize::from(topo.boundary);
            topo.regular = (topo.num_faces << usize::from(topo.boundary)) == 6 && !topo.sharp;
            topo.cos_face_angle = if topo.regular {
                0.5
            } else {
                let full = if topo.boundary { PI } else { 2.0 * PI };
                (full / topo.num_faces as f64).cos()
            };
            patch.corner_ring_points(c, &mut topo.ring);
        }
        for c in 0..3 {
            let fp_regular = corners[c].regular && corners[next(c)].regular;
            let fm_regular = corners[c].regular && corners[prev(c)].regular;
            let topo = &mut corners[c];
            topo.fp_regular = fp_regular;
            topo.fm_regular = fm_regular;
            if topo.boundary {
                topo.ep_on_boundary = topo.face_in_ring == 0;
                topo.em_on_boundary = topo.face_in_ring + 1 == topo.num_faces;
                if topo.num_faces > 1 {
                    if topo.ep_on_boundary {
                        topo.fp_regular = topo.fm_regular;
                        topo.fp_copied = !topo.fp_regular;
                    }
                    if topo.em_on_boundary {
                        topo.fm_regular = topo.fp_regular;
                        topo.fm_copied = !topo.fm_regular;
                    }
                } else {
                    topo.fp_regular = true;
                    topo.fm_regular = true;
                }
            }
        }
        GregoryTri { num_source_points: patch.num_source_points, corners }
    }

    /// The 18 rows, as `GregoryTriConverter::Convert`: cubic corner, edge
    /// and face points first, the quartic mid-edge points from them, then
    /// the edge points raised to quartic.
    fn convert(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = vec![Vec::new(); 18];
        for c in 0..3 {
            let (p, ep, em) =
                if self.corners[c].regular { self.regular_edge_points(c) } else { self.irregular_edge_points(c) };
            rows[5 * c] = p;
            rows[5 * c + 1] = ep;
            rows[5 * c + 2] = em;
        }
        for c in 0..3 {
            let topo = &self.corners[c];
            if topo.fp_regular {
                rows[5 * c + 3] = self.regular_face_point(c);
            }
            if topo.fm_regular {
                rows[5 * c + 4] = self.regular_face_point(c);
            }
            if !topo.fp_regular && !topo.fp_copied {
                rows[5 * c + 3] = self.irregular_face_point(
                    c,
                    topo.face_in_ring,
                    next(c),
                    [&rows[5 * c], &rows[5 * c + 1], &rows[5 * next(c) + 2]],
                    1.0,
                );
            }
            if !topo.fm_regular && !topo.fm_copied {
                rows[5 * c + 4] = self.irregular_face_point(
                    c,
                    (topo.face_in_ring + 1) % topo.valence,
                    prev(c),
                    [&rows[5 * c], &rows[5 * c + 2], &rows[5 * prev(c) + 1]],
                    -1.0,
                );
            }
            if topo.fp_copied {
                rows[5 * c + 3] = rows[5 * c + 4].clone();
            }
            if topo.fm_copied {
                rows[5 * c + 4] = rows[5 * c + 3].clone();
            }
        }
        for e in 0..3 {
            let (c0, c1) = (&self.corners[e], &self.corners[next(e)]);
            let boundary_edge = c0.ep_on_boundary && c1.em_on_boundary;
            let dart_edge = c0.ep_on_boundary != c1.em_on_boundary;
            rows[15 + e] = if boundary_edge || (c0.regular && c1.regular && !dart_edge) {
                self.regular_mid_edge_point(e)
            } else {
                self.combine(&[(&rows[5 * e + 1], 0.5), (&rows[5 * next(e) + 2], 0.5)])
            };
        }
        self.promote_edge_points(&mut rows);
        rows
    }

    fn combine(&self, terms: &[(&Row, f64)]) -> Row {
        let mut full = vec![0.0; self.num_source_points];
        let mut used = vec![false; self.num_source_points];
        for &(row, s) in terms {
            add_into(&mut full, &mut used, row, s);
        }
        collect(&full, &used)
    }

    /// P, Ep and Em of a regular corner (`assignRegularEdgePoints`): the
    /// cubic Bezier points of the box spline, with phantom points beyond a
    /// boundary.
    fn regular_edge_points(&self, c: usize) -> (Row, Row, Row) {
        let topo = &self.corners[c];
        let r = &topo.ring;
        if !topo.boundary {
            let mut p = vec![(c, 0.5)];
            p.extend(r.iter().take(6).map(|&x| (x, 1.0 / 12.0)));
            const E: [f64; 6] = [7.0, 5.0, 1.0, -1.0, 1.0, 5.0];
            let edge_point = |first: usize| -> Row {
                std::iter::once((c, 0.5)).chain((0..6).map(|k| (r[(first + k) % 6], E[k] / 36.0))).collect()
            };
            let ep = edge_point(topo.face_in_ring);
            let em = edge_point((topo.face_in_ring + 1) % 6);
            return (p, ep, em);
        }
        let p = vec![(c, 2.0 / 3.0), (r[0], 1.0 / 6.0), (r[3], 1.0 / 6.0)];
        let ep = if topo.ep_on_boundary {
            vec![(c, 2.0 / 3.0), (r[0], 1.0 / 3.0), (r[3], 0.0)]
        } else {
            let (a, b) = if topo.em_on_boundary { (3, 0) } else { (0, 3) };
            vec![(c, 0.5), (r[1], 1.0 / 6.0), (r[2], 1.0 / 6.0), (r[a], 1.0 / 6.0), (r[b], 0.0)]
        };
        let em = if topo.em_on_boundary {
            vec![(c, 2.0 / 3.0), (r[3], 1.0 / 3.0), (r[0], 0.0)]
        } else {
            let (a, b) = if topo.ep_on_boundary { (0, 3) } else { (3, 0) };
            vec![(c, 0.5), (r[1], 1.0 / 6.0), (r[2], 1.0 / 6.0), (r[a], 1.0 / 6.0), (r[b], 0.0)]
        };
        (p, ep, em)
    }

    /// P, Ep and Em of an irregular corner (`computeIrregularEdgePoints`).
    fn irregular_edge_points(&self, c: usize) -> (Row, Row, Row) {
        let topo = &self.corners[c];
        if topo.sharp {
            return (
                vec![(c, 1.0)],
                vec![(c, 2.0 / 3.0), (next(c), 1.0 / 3.0)],
                vec![(c, 2.0 / 3.0), (prev(c), 1.0 / 3.0)],
            );
        }
        let ring = |weights: &[f64]| -> Row {
            std::iter::once(c).chain(topo.ring.iter().copied()).zip(weights.iter().copied()).collect()
        };
        if !topo.boundary {
            let (p, ep, em) = limits::interior(topo.valence, topo.face_in_ring, true);
            return (ring(&p), ring(&ep), ring(&em));
        }
        if topo.num_faces > 1 {
            let (p, ep, em) = limits::boundary(topo.valence, topo.face_in_ring, true);
            let n = topo.valence;
            let (p1, pn) = (topo.ring[0], topo.ring[n - 1]);
            let p_row = vec![(c, p[0]), (p1, p[1]), (pn, p[n])];
            let ep_row = if topo.ep_on_boundary { vec![(c, ep[0]), (p1, ep[1]), (pn, 0.0)] } else { ring(&ep) };
            let em_row = if topo.em_on_boundary { vec![(c, em[0]), (pn, em[n]), (p1, 0.0)] } else { ring(&em) };
            return (p_row, ep_row, em_row);
        }
        (
            vec![(c, 4.0 / 6.0), (next(c), 1.0 / 6.0), (prev(c), 1.0 / 6.0)],
            vec![(c, 2.0 / 3.0), (next(c), 1.0 / 3.0), (prev(c), 0.0)],
            vec![(c, 2.0 / 3.0), (prev(c), 1.0 / 3.0), (next(c), 0.0)],
        )
    }

    /// A face point of a regular corner (`assignRegularFacePoints`).
    fn regular_face_point(&self, c: usize) -> Row {
        let topo = &self.corners[c];
        let r = &topo.ring;
        if topo.single_face {
            vec![(c, 0.5), (next(c), 0.25), (prev(c), 0.25)]
        } else if topo.ep_on_boundary {
            vec![(c, 11.0 / 24.0), (r[0], 7.0 / 24.0), (r[1], 5.0 / 24.0), (r[2], 1.0 / 24.0)]
        } else if topo.em_on_boundary {
            vec![(c, 11.0 / 24.0), (r[3], 7.0 / 24.0), (r[2], 5.0 / 24.0), (r[1], 1.0 / 24.0)]
        } else {
            let e_next = if topo.boundary { 0 } else { (topo.face_in_ring + 5) % 6 };
            let e_prev = if topo.boundary { 3 } else { (topo.face_in_ring + 2) % 6 };
            vec![(c, 10.0 / 24.0), (prev(c), 0.25), (next(c), 0.25), (r[e_prev], 1.0 / 24.0), (r[e_next], 1.0 / 24.0)]
        }
    }

    /// A face point next to an irregular corner (`computeIrregularFacePoint`,
    /// after Loop, Schaefer et al.: `F = (c_far P + (4 - 2 c_near - c_far)
    /// E_near + 2 c_near E_far + R) / 4` with `R` the twist across the
    /// interior edge). Only the columns of P and the edge points are kept,
    /// as OpenSubdiv keeps them.
    fn irregular_face_point(
        &self,
        c: usize,
        edge_in_ring: usize,
        far_corner: usize,
        [p, near, far]: [&Row; 3],
        sign: f64,
    ) -> Row {
        let here = &self.corners[c];
        let cos_near = here.cos_face_angle;
        let cos_far = self.corners[far_corner].cos_face_angle;
        let mut full = vec![0.0; self.num_source_points];
        let mut used = vec![false; self.num_source_points];
        add_into(&mut full, &mut used, p, cos_far / 4.0);
        add_into(&mut full, &mut used, near, (4.0 - 2.0 * cos_near - cos_far) / 4.0);
        add_into(&mut full, &mut used, far, 2.0 * cos_near / 4.0);
        let valence = here.valence;
        let e_prev = (edge_in_ring + valence - 1) % valence;
        let e_next = (edge_in_ring + 1) % valence;
        let r_scale = 0.25 * (7.0 / 18.0);
        full[here.ring[e_prev]] += -sign * r_scale;
        full[here.ring[e_next]] += sign * r_scale;
        collect(&full, &used)
    }

    /// The quartic mid-edge point of edge `e` between two regular corners
    /// or on a boundary (`assignRegularMidEdgePoint`).
    fn regular_mid_edge_point(&self, e: usize) -> Row {
        let topo = &self.corners[e];
        if topo.ep_on_boundary {
            return vec![(e, 0.5), (next(e), 0.5)];
        }
        let opposite = if topo.boundary { topo.face_in_ring - 1 } else { (topo.face_in_ring + 5) % 6 };
        vec![(e, 1.0 / 3.0), (next(e), 1.0 / 3.0), (prev(e), 1.0 / 6.0), (topo.ring[opposite], 1.0 / 6.0)]
    }

    /// Raises the cubic edge points to quartic
    /// (`promoteCubicEdgePointsToQuartic`): known weights where the corner
    /// is regular or the edge a boundary, `P / 4 + 3 E / 4` otherwise.
    fn promote_edge_points(&self, rows: &mut [Row]) {
        const ON_BOUNDARY: [f64; 3] = [16.0, 7.0, 1.0];
        const REGULAR_BOUNDARY: [f64; 5] = [13.0, 3.0, 3.0, 4.0, 1.0];
        const REGULAR_INTERIOR: [f64; 7] = [12.0, 4.0, 3.0, 1.0, 0.0, 1.0, 3.0];
        for c in 0..3 {
            let topo = &self.corners[c];
            for pair in 0..2 {
                let on_boundary = if pair == 1 { topo.em_on_boundary } else { topo.ep_on_boundary };
                let known: Option<&[f64]> = if on_boundary && !topo.sharp {
                    Some(&ON_BOUNDARY)
                } else if topo.regular {
                    Some(if topo.boundary { &REGULAR_BOUNDARY } else { &REGULAR_INTERIOR })
                } else {
                    None
                };
                let r = 5 * c + 1 + pair;
                match known {
                    Some(w) => {
                        for (entry, &x) in rows[r].iter_mut().zip(w) {
                            entry.1 = x / 24.0;
                        }
                    }
                    None => rows[r] = self.combine(&[(&rows[5 * c], 0.25), (&rows[r], 0.75)]),
                }
            }
        }
    }
}

/// The 18 points of a quartic Gregory triangle approximating the irregular
/// triangle (OpenSubdiv's `GREGORY_TRIANGLE` end cap,
/// `Far::GregoryTriConverter`): per corner `c`, rows `5c..5c + 5` are P,
/// Ep, Em, Fp and Fm, then rows 15, 16, 17 the quartic mid-edge points of
/// edges 0, 1, 2.
pub fn gregory_triangle(patch: &TriSourcePatch) -> Rows {
    let rows = GregoryTri::new(patch).convert();
    Rows::from_rows(patch.num_source_points, &rows)
}

/// The 12 points of a quartic box-spline (Loop) patch fitted to the
/// Gregory triangle (OpenSubdiv's Loop "B-spline" end cap, its
/// `convertToLoop`): each point a fixed combination of 15 Gregory points
/// standing for the quartic Bezier triangle's, the pseudo-inverse of 13
/// constraints on the boundary curves and the centre.
pub fn loop_box_spline(patch: &TriSourcePatch) -> Rows {
    // OpenSubdiv's single-precision table; its values, widened, are what its
    // double-precision conversion uses.
    #[allow(clippy::excessive_precision)]
    const FIT: [[f32; 15]; 12] = [
        [
            8.214411, 7.571190, -7.690082, 2.237840, -1.118922, -16.428828, 0.666666, 0.666666, 2.237835, 6.309870,
            0.666666, -1.690100, -0.428812, -0.428805, 0.214407,
        ],
        [
            -0.304687, 0.609374, 6.752593, 0.609374, -0.304687, 0.609378, -3.333333, -3.333333, 0.609378, -1.247389,
            -3.333333, -1.247389, 3.276037, 3.276037, -1.638020,
        ],
        [
            -1.118922, 2.237840, -7.690082, 7.571190, 8.214411, 2.237835, 0.666666, 0.666666, -16.428828, -1.690100,
            0.666666, 6.309870, -0.428805, -0.428812, 0.214407,
        ],
        [
            8.214411, -16.428828, 6.309870, -0.428812, 0.214407, 7.571190, 0.666666, 0.666666, -0.428805, -7.690082,
            0.666666, -1.690100, 2.237840, 2.237835, -1.118922,
        ],
        [
            -0.813368, 1.626735, -0.773435, -1.039929, 0.519965, 1.626735, 0.666666, 0.666666, -1.039930, -0.773435,
            0.666666, 1.226558, -1.039929, -1.039930, 0.519965,
        ],
        [
            0.519965, -1.039929, -0.773435, 1.626735, -0.813368, -1.039930, 0.666666, 0.666666, 1.626735, 1.226558,
            0.666666, -0.773435, -1.039930, -1.039929, 0.519965,
        ],
        [
            0.214407, -0.428812, 6.309870, -16.428828, 8.214411, -0.428805, 0.666666, 0.666666, 7.571190, -1.690100,
            0.666666, -7.690082, 2.237835, 2.237840, -1.118922,
        ],
        [
            -0.304687, 0.609378, -1.247389, 3.276037, -1.638020, 0.609374, -3.333333, -3.333333, 3.276037, 6.752593,
            -3.333333, -1.247389, 0.609374, 0.609378, -0.304687,
        ],
        [
            0.519965, -1.039930, 1.226558, -1.039930, 0.519965, -1.039929, 0.666666, 0.666666, -1.039929, -0.773435,
            0.666666, -0.773435, 1.626735, 1.626735, -0.813368,
        ],
        [
            -1.638020, 3.276037, -1.247389, 0.609378, -0.304687, 3.276037, -3.333333, -3.333333, 0.609374, -1.247389,
            -3.333333, 6.752593, 0.609378, 0.609374, -0.304687,
        ],
        [
            -1.118922, 2.237835, -1.690100, -0.428805, 0.214407, 2.237840, 0.666666, 0.666666, -0.428812, -7.690082,
            0.666666, 6.309870, 7.571190, -16.428828, 8.214411,
        ],
        [
            0.214407, -0.428805, -1.690100, 2.237835, -1.118922, -0.428812, 0.666666, 0.666666, 2.237840, 6.309870,
            0.666666, -7.690082, -16.428828, 7.571190, 8.214411,
        ],
    ];
    // The Gregory point standing for each quartic Bezier point (one of each
    // pair of face points).
    const GREGORY: [usize; 15] = [0, 1, 15, 7, 5, 2, 4, 8, 6, 17, 14, 16, 11, 12, 10];
    let g = GregoryTri::new(patch).convert();
    let n = patch.num_source_points;
    let rows: Vec<Row> = FIT
        .iter()
        .map(|weights| {
            let mut full = vec![0.0; n];
            for (&w, &k) in weights.iter().zip(&GREGORY) {
                let w = f64::from(w);
                for &(column, x) in &g[k] {
                    full[column] += w * x;
                }
            }
            full.into_iter().enumerate().collect()
        })
        .collect();
    Rows::from_rows(n, &rows)
}

/// One point per corner, its limit position (OpenSubdiv's linear end cap
/// for Loop, `convertToLinear`): the corner itself when sharp, the
/// boundary curve's limit on a boundary, Loop's interior limit mask
/// otherwise.
pub fn linear_triangle(patch: &TriSourcePatch) -> Rows {
    let mut rows: Vec<Row> = Vec::with_capacity(3);
    let mut ring = Vec::new();
    for c in 0..3 {
        let corner = patch.corners[c];
        if corner.sharp {
            rows.push(vec![(c, 1.0)]);
            continue;
        }
        patch.corner_ring_points(c, &mut ring);
        let n = usize::from(corner.num_faces);
        if corner.boundary {
            let (p, _, _) = limits::boundary(n + 1, usize::from(corner.patch_face), false);
            let last = ring.len();
            rows.push(vec![(c, p[0]), (ring[0], p[1]), (ring[last - 1], p[last])]);
        } else {
            let (p, _, _) = limits::interior(n, usize::from(corner.patch_face), false);
            rows.push(std::iter::once(c).chain(ring.iter().copied()).zip(p.iter().copied()).collect());
        }
    }
    Rows::from_rows(patch.num_source_points, &rows)
}
