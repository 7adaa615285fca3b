//! End caps: the change of basis from the source points around an irregular
//! Catmull-Clark patch to the control points of the patch that approximates
//! it (OpenSubdiv 3.6's `Far::CatmarkPatchBuilder` conversions).
//!
//! An irregular quad patch is described by its four [`Corner`]s, gathered in
//! a [`SourcePatch`]. [`gregory_basis`], [`bspline`] and [`linear`] return the
//! end-cap control points as [`Rows`]: one sparse row of weights over the
//! source points per control point, in exactly the layout, order and
//! arithmetic of OpenSubdiv's double-precision conversion matrix
//! (`Far::SparseMatrix<double>`), explicit zero entries included. The rows do
//! not depend on positions, so one conversion serves every patch with the same
//! corner configuration.
//!
//! # Describing a corner
//!
//! Let `v` be the vertex at corner `c` of the patch face (`c` in 0..4, in the
//! face's own vertex order). Order the faces incident to `v` counter-clockwise
//! around it, `F_0, ..., F_{n-1}`, so that `F_{i+1}` is the face across the
//! edge joining `v` to the vertex that precedes `v` in `F_i` (for faces with
//! consistent counter-clockwise orientation). For a boundary vertex, `F_0` is
//! the face whose edge from `v` to the vertex following `v` in `F_0` lies on
//! the boundary (and `F_{n-1}`'s edge from the vertex preceding `v` lies on
//! the boundary as well). This is the order of OpenSubdiv's
//! `Vtr::internal::Level::getVertexFaces`. Then, as in OpenSubdiv's
//! `Far::PatchBuilder::assembleIrregularSourcePatch`:
//!
//! * [`Corner::num_faces`] is `n`, the number of faces incident to `v`;
//! * [`Corner::patch_face`] is the `i` with `F_i` the patch face;
//! * [`Corner::boundary`] says that `v` lies on the boundary of the mesh;
//! * [`Corner::sharp`] says that the corner is interpolated: OpenSubdiv sets
//!   it for a vertex tagged as a corner (a boundary vertex with one face
//!   under the default boundary interpolation, or an infinitely sharp
//!   corner), for an infinitely sharp vertex, and for a vertex with
//!   infinitely sharp edges other than a plain crease of exactly two such
//!   edges;
//! * [`Corner::dart`] says that `v` is interior with exactly one infinitely
//!   sharp incident edge (crease rule "dart").
//!
//! Where infinitely sharp edges (or non-manifold topology) cut the faces
//! around `v`, OpenSubdiv keeps only the span of consecutive faces between two
//! such edges that contains the patch face (`Vtr::internal::Level::VSpan`)
//! and treats it as a boundary: then `F_0, ..., F_{n-1}` are the faces of the
//! span in counter-clockwise order starting from its leading sharp edge, `n`
//! is the span's size, `patch_face` the patch face's position in it, and
//! `boundary` is set unless the span goes all the way round.
//!
//! # Source points
//!
//! The one-ring of corner `c` lists, for each `i` in `0..n`, the vertex at the
//! other end of the edge from `v` to the vertex following `v` in `F_i`, then
//! the vertex of `F_i` opposite `v`; a boundary ring ends with the vertex
//! preceding `v` in `F_{n-1}` (so it has `2n + 1` points, an interior ring
//! `2n`). This is OpenSubdiv's `Level::gatherQuadRegularRingAroundVertex`.
//! Within the patch face, entry `2 * patch_face` is corner `c + 1`, entry
//! `2 * patch_face + 1` is corner `c + 2` and the entry after that corner
//! `c + 3` (indices modulo 4).
//!
//! The source points of the patch are numbered as OpenSubdiv's
//! `Far::SourcePatch`: indices 0 to 3 are the patch face's corner vertices,
//! followed by the points of each corner's one-ring that belong to that corner
//! only (corner 0's first, then 1, 2, 3), going counter-clockwise around the
//! patch; a ring point shared by two corners belongs to the earlier one in
//! that walk. [`SourcePatch::corner_ring_points`] gives, for each entry of a
//! corner's one-ring, its source point index, so the source point list is
//! built by scattering the four rings: `source[ring_points[c][k]] =
//! ring[c][k]` ([`SourcePatch::gather`] does exactly this, as OpenSubdiv's
//! `Far::PatchBuilder::GetIrregularPatchSourcePoints`).
//!
//! # Control points
//!
//! The Gregory basis has 20 points, five per corner `c` in the order `P`, `Ep`,
//! `Em`, `Fp`, `Fm` (row `5c + k`): `P` is the limit position, `Ep` the edge
//! point towards corner `c + 1`, `Em` towards corner `c + 3`, `Fp` and `Fm`
//! the face points next to the edges of `Ep` and `Em`. The B-spline end cap
//! has the 16 points of a bicubic B-spline patch, row-major with `u` along
//! the edge from corner 0 to 1 and `v` from corner 0 to 3 (corners 0, 1, 2
//! and 3 of the face sit at points 5, 6, 10 and 9). The linear end cap has
//! one point per corner: its limit position.

/// A corner configuration that OpenSubdiv's source patch cannot number
/// (what [`SourcePatch::try_new`] and the triangle patch's `try_new` refuse).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SourcePatchError {
    /// What is wrong, naming the corner.
    pub message: String,
}

/// One corner of an irregular patch, as OpenSubdiv's `Far::SourcePatch::Corner`
/// (see the module documentation for how to fill it from a mesh).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Corner {
    /// Number of faces incident to the corner vertex (within its span).
    pub num_faces: u16,
    /// Position of the patch face among the incident faces.
    pub patch_face: u16,
    /// The corner vertex is on a boundary (or the span is partial).
    pub boundary: bool,
    /// The corner is interpolated (infinitely sharp).
    pub sharp: bool,
    /// The corner vertex is an interior dart of an infinitely sharp edge.
    pub dart: bool,
}

impl Corner {
    /// The checks every source patch makes of its corner `c`: some faces,
    /// the patch face among them, two faces at least inside, no dart on a
    /// boundary.
    pub(crate) fn check(&self, c: usize) -> Result<(), SourcePatchError> {
        let corner = self;
        if corner.num_faces < 1 {
            return Err(SourcePatchError { message: format!("corner {c} has no faces") });
        }
        if corner.patch_face >= corner.num_faces {
            return Err(SourcePatchError {
                message: format!(
                    "corner {c}: patch face {} is not among its {} faces",
                    corner.patch_face, corner.num_faces
                ),
            });
        }
        if !corner.boundary && corner.num_faces < 2 {
            return Err(SourcePatchError {
                message: format!("corner {c}: an interior corner needs at least two faces"),
            });
        }
        if corner.dart && corner.boundary {
            return Err(SourcePatchError { message: format!("corner {c}: a dart is interior by definition") });
        }
        Ok(())
    }

    fn valence(&self) -> usize {
        usize::from(self.num_faces) + usize::from(self.boundary)
    }
}

/// The four corners of an irregular quad patch together with the bookkeeping
/// that numbers its source points, as OpenSubdiv's `Far::SourcePatch` after
/// `Finalize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePatch {
    corners: [Corner; 4],
    shares_with_prev: [bool; 4],
    shares_with_next: [bool; 4],
    val2_interior: [bool; 4],
    ring_sizes: [usize; 4],
    local_ring_sizes: [usize; 4],
    local_ring_offsets: [usize; 4],
    num_source_points: usize,
    max_valence: usize,
}

const fn next(c: usize) -> usize {
    (c + 1) & 3
}
const fn opposite(c: usize) -> usize {
    (c + 2) & 3
}
const fn prev(c: usize) -> usize {
    (c + 3) & 3
}

impl SourcePatch {
    /// Derives which ring points adjacent corners share and how many source
    /// points the patch has (OpenSubdiv's `Far::SourcePatch::Finalize` for a
    /// quad).
    ///
    /// # Panics
    ///
    /// If a corner has no faces, its patch face is out of range, an interior
    /// corner has fewer than two faces, a dart is on a boundary, or the
    /// corners cannot be put together around one quad the way OpenSubdiv
    /// numbers them (some configurations of several irregular corners next
    /// to a valence-2 interior corner, which only unrefined meshes have).
    #[track_caller]
    pub fn new(corners: [Corner; 4]) -> SourcePatch {
        match Self::try_new(corners) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`SourcePatch::new`], but a configuration it cannot number is an error
    /// rather than a panic.
    ///
    /// # Errors
    /// [`SourcePatchError`] naming the corner and what is wrong with it.
    pub fn try_new(corners: [Corner; 4]) -> Result<SourcePatch, SourcePatchError> {
        for (c, corner) in corners.iter().enumerate() {
            corner.check(c)?;
        }
        let val2_interior = corners.map(|k| k.num_faces == 2 && !k.boundary);
        let mut patch = SourcePatch {
            corners,
            shares_with_prev: [false; 4],
            shares_with_next: [false; 4],
            val2_interior,
            ring_sizes: [0; 4],
            local_ring_sizes: [0; 4],
            local_ring_offsets: [0; 4],
            num_source_points: 4,
            max_valence: 0,
        };
        for c in 0..4 {
            let corner = corners[c];
            let (prev_val2, next_val2) = (val2_interior[prev(c)], val2_interior[next(c)]);
            let n = usize::from(corner.num_faces);
            let (ring, local) = if corner.valence() > 2 {
                let (with_prev, with_next) = if corner.boundary {
                    (corner.patch_face + 1 != corner.num_faces, corner.patch_face != 0)
                } else if corner.dart {
                    // Across the dart's sharp edge the neighbour is a boundary
                    // corner whose span ends there: nothing is shared with it.
                    let p = corners[prev(c)];
                    let x = corners[next(c)];
                    let prev_on_dart_edge = p.boundary && p.patch_face == 0;
                    let next_on_dart_edge = x.boundary && x.patch_face + 1 == x.num_faces;
                    (!prev_on_dart_edge, !next_on_dart_edge)
                } else {
                    (true, true)
                };
                patch.shares_with_prev[c] = with_prev;
                patch.shares_with_next[c] = with_next;
                let ring = 2 * n + usize::from(corner.boundary);
                // A valence-2 interior neighbour contributes the opposite
                // corner to this ring instead of a point of its own.
                let taken = 3
                    + usize::from(with_prev)
                    + usize::from(with_next)
                    + usize::from(prev_val2)
                    + usize::from(next_val2);
                if ring < taken {
                    return Err(SourcePatchError {
                        message: format!("corner {c}: its {n} faces cannot surround a quad with these neighbours"),
                    });
                }
                (ring, ring - taken)
            } else if n == 1 {
                (3, 0)
            } else {
                (4, 1)
            };
            patch.ring_sizes[c] = ring;
            patch.local_ring_sizes[c] = local;
            patch.local_ring_offsets[c] = patch.num_source_points;
            patch.num_source_points += local;
            patch.max_valence = patch.max_valence.max(corner.valence());
        }
        // A shared point is numbered among its owner's local points; a
        // neighbour without any (possible only next to a valence-2 interior
        // corner, in configurations adaptive refinement never leaves) breaks
        // OpenSubdiv's numbering.
        for c in 0..4 {
            if (patch.shares_with_prev[c] && patch.local_ring_sizes[prev(c)] == 0)
                || (patch.shares_with_next[c] && patch.local_ring_sizes[next(c)] == 0)
            {
                return Err(SourcePatchError {
                    message: format!("corner {c}: OpenSubdiv's source patch cannot number this corner configuration"),
                });
            }
        }
        // Every corner's ring must number exactly its points, within range:
        // configurations past what OpenSubdiv's numbering handles fail here.
        let mut ring = Vec::new();
        for c in 0..4 {
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
    pub fn corners(&self) -> &[Corner; 4] {
        &self.corners
    }

    /// Number of source points (the columns of the conversion rows).
    pub fn num_source_points(&self) -> usize {
        self.num_source_points
    }

    /// Number of points in the one-ring of `corner`: `2n` inside, `2n + 1` on
    /// a boundary.
    #[track_caller]
    pub fn corner_ring_size(&self, corner: usize) -> usize {
        assert!(corner < 4, "a quad patch has corners 0 to 3, not {corner}");
        self.ring_sizes[corner]
    }

    /// The source point index of each entry of the one-ring of `corner`, in
    /// the ring order of the module documentation (OpenSubdiv's
    /// `Far::SourcePatch::GetCornerRingPoints`). Clears `out` first.
    #[track_caller]
    pub fn corner_ring_points(&self, corner: usize, out: &mut Vec<usize>) {
        assert!(corner < 4, "a quad patch has corners 0 to 3, not {corner}");
        let c = corner;
        out.clear();
        out.extend([next(c), opposite(c), prev(c)]);
        if self.val2_interior[prev(c)] {
            out.push(opposite(c));
        }
        if self.shares_with_prev[c] {
            let p = prev(c);
            out.push(self.local_ring_offsets[p] + self.local_ring_sizes[p] - 1);
        }
        let first = self.local_ring_offsets[c];
        out.extend(first..first + self.local_ring_sizes[c]);
        if self.shares_with_next[c] {
            out.push(self.local_ring_offsets[next(c)]);
        }
        if self.val2_interior[next(c)] {
            out.push(opposite(c));
        }
        // The ring above starts in the patch face; the caller's starts in F_0.
        let face = usize::from(self.corners[c].patch_face);
        if face != 0 {
            let len = out.len();
            out.rotate_left(len - 2 * face);
        }
    }

    /// Builds the list of source points from the one-rings of the four
    /// corners (each in the order of the module documentation), as
    /// OpenSubdiv's `Far::PatchBuilder::GetIrregularPatchSourcePoints`: every
    /// ring entry is written to its source index, later corners overwriting
    /// earlier ones where rings overlap.
    ///
    /// # Panics
    ///
    /// If a ring's length is not [`corner_ring_size`](Self::corner_ring_size).
    #[track_caller]
    pub fn gather<T: Copy>(&self, rings: [&[T]; 4]) -> Vec<T> {
        for (c, ring) in rings.iter().enumerate() {
            assert_eq!(
                ring.len(),
                self.ring_sizes[c],
                "corner {c}: the one-ring has {} points, the patch expects {}",
                ring.len(),
                self.ring_sizes[c]
            );
        }
        // Every source point lies in some corner's ring, so the placeholder
        // value is always overwritten.
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

/// A conversion matrix in compressed-row form: row `r` has the entries
/// `offsets[r]..offsets[r + 1]` of `columns` (source point indices) and
/// `weights`. Rows hold OpenSubdiv's entries in its order, zeros included.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// Number of source points the rows refer to.
    pub num_columns: usize,
    /// Start of each row in `columns` and `weights`, plus the total at the end.
    pub offsets: Vec<usize>,
    /// Source point index of each entry.
    pub columns: Vec<u32>,
    /// Weight of each entry.
    pub weights: Vec<f64>,
}

impl Rows {
    /// Number of rows (control points).
    pub fn num_rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The columns and weights of row `r`.
    #[track_caller]
    pub fn row(&self, r: usize) -> (&[u32], &[f64]) {
        assert!(r < self.num_rows(), "row {r} of {}", self.num_rows());
        let range = self.offsets[r]..self.offsets[r + 1];
        (&self.columns[range.clone()], &self.weights[range])
    }

    pub(crate) fn from_rows(num_columns: usize, rows: &[Row]) -> Rows {
        let mut out = Rows { num_columns, offsets: Vec::with_capacity(rows.len() + 1), ..Rows::default() };
        out.offsets.push(0);
        for row in rows {
            for &(column, weight) in row {
                // Source patches have at most a few hundred points.
                out.columns.push(column as u32);
                out.weights.push(weight);
            }
            out.offsets.push(out.columns.len());
        }
        out
    }
}

/// One row under construction: (source point, weight) in OpenSubdiv's order.
pub(crate) type Row = Vec<(usize, f64)>;

/// Limit position and edge-point weights over a corner and its one-ring, as
/// OpenSubdiv's `Far::CatmarkLimits` (whose tangent scaling differs from
/// `Sdc::Scheme<SCHEME_CATMARK>`'s limit tangent masks).
mod limits {
    use std::f64::consts::PI;

    /// The eigenvalue-derived tangent scale of OpenSubdiv's
    /// `CatmarkLimits::computeCoefficient`: tabulated below valence 30,
    /// `16 / (n (cos t + 5 + sqrt((cos t + 9)(cos t + 1))))`, `t = 2 pi / n`,
    /// above.
    fn coefficient(valence: usize) -> f64 {
        // OpenSubdiv's digits, kept as published; each parses to the same f64.
        #[allow(clippy::excessive_precision)]
        const TABLE: [f64; 30] = [
            0.0,
            0.0,
            0.0,
            8.128_157_290_637_231_2e-1,
            0.5,
            3.636_440_632_914_280_1e-1,
            2.875_137_970_607_708_5e-1,
            2.386_878_668_585_167_8e-1,
            2.045_436_419_075_609_7e-1,
            1.792_290_395_806_115_9e-1,
            1.596_573_707_998_625_3e-1,
            1.440_423_344_301_130_2e-1,
            1.312_756_841_588_301_7e-1,
            1.206_317_221_267_584_1e-1,
            1.116_143_750_667_693e-1,
            1.038_724_551_611_427_4e-1,
            9.715_001_909_072_483_5e-2,
            9.125_591_750_595_064_8e-2,
            8.604_437_851_160_266_8e-2,
            8.140_221_133_679_841_1e-2,
            7.724_012_951_618_407_2e-2,
            7.348_671_975_199_702_6e-2,
            7.008_415_747_979_798_7e-2,
            6.698_510_403_072_544e-2,
            6.415_042_056_981_007_4e-2,
            6.154_745_763_863_726_8e-2,
            5.914_875_744_723_398_9e-2,
            5.693_105_681_877_695_7e-2,
            5.487_451_227_925_641_7e-2,
            5.296_209_143_379_613_4e-2,
        ];
        if valence < TABLE.len() {
            return TABLE[valence];
        }
        let inv = 1.0 / valence as f64;
        let cos_t = (2.0 * PI * inv).cos();
        let divisor = (cos_t + 5.0) + ((cos_t + 9.0) * (cos_t + 1.0)).sqrt();
        16.0 * inv / divisor
    }

    /// Weights over `[corner, ring...]` (width `1 + 2n`) of the limit
    /// position and, when asked, of the edge points along the patch face's
    /// two edges, for a smooth interior corner of valence `n`
    /// (`CatmarkLimits::ComputeInteriorPointWeights`).
    pub(super) fn interior(valence: usize, face_in_ring: usize, edges: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let n = valence as f64;
        let one_over_n = 1.0 / n;
        let one_over_n5 = 1.0 / (n + 5.0);
        let p_coeff = one_over_n * one_over_n5;
        let tan_coeff = coefficient(valence) * 0.5 * one_over_n5;
        let face_angle = 2.0 * PI * one_over_n;

        let width = 1 + 2 * valence;
        let mut p = vec![0.0; width];
        let mut tan = vec![0.0; width];
        p[0] = n * one_over_n5;
        for i in 0..valence {
            p[1 + 2 * i] = p_coeff * 4.0;
            p[2 + 2 * i] = p_coeff;
            if edges {
                let i_prev = (i + valence - 1) % valence;
                let i_next = (i + 1) % valence;
                let cos_i = tan_coeff * (face_angle * i as f64).cos();
                tan[1 + 2 * i_prev] += cos_i * 2.0;
                tan[2 + 2 * i_prev] += cos_i;
                tan[1 + 2 * i] += cos_i * 4.0;
                tan[2 + 2 * i] += cos_i;
                tan[1 + 2 * i_next] += cos_i * 2.0;
            }
        }
        if !edges {
            return (p, Vec::new(), Vec::new());
        }
        // The tangent above points along edge 0; rotating its ring weights
        // aligns it with the edges of the patch face.
        let ep_offset = 2 * ((valence - face_in_ring) % valence);
        let em_offset = 2 * ((2 * valence - face_in_ring - 1) % valence);
        let mut ep = vec![0.0; width];
        let mut em = vec![0.0; width];
        ep[0] = p[0];
        em[0] = p[0];
        for i in 1..width {
            let mut ip = i + ep_offset;
            if ip >= width {
                ip -= width - 1;
            }
            let mut im = i + em_offset;
            if im >= width {
                im -= width - 1;
            }
            ep[i] = p[i] + tan[ip];
            em[i] = p[i] + tan[im];
        }
        (p, ep, em)
    }

    /// Weights over `[corner, ring...]` (width `2 * valence`, `valence` =
    /// faces + 1) of the limit position and, when asked, the edge points of a
    /// smooth boundary corner (`CatmarkLimits::ComputeBoundaryPointWeights`).
    pub(super) fn boundary(valence: usize, face_in_ring: usize, edges: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let num_faces = valence - 1;
        let face_angle = PI / num_faces as f64;
        let width = 2 * valence;
        let last = width - 1;

        let mut p = vec![0.0; width];
        p[0] = 4.0 / 6.0;
        p[1] = 1.0 / 6.0;
        p[last] = 1.0 / 6.0;
        if !edges {
            return (p, Vec::new(), Vec::new());
        }

        // The tangent across the boundary, combined below with the one along
        // it (weights +-1/6 on the two boundary neighbours).
        let t_boundary_1 = 1.0 / 6.0;
        let t_boundary_last = -1.0 / 6.0;
        let mut tan = vec![0.0; width];
        {
            let k = num_faces as f64;
            let theta = face_angle;
            let c = theta.cos();
            let s = theta.sin();
            let div3 = 1.0 / 3.0;
            let div3kc = 1.0 / (3.0 * k + c);
            let gamma = -4.0 * s * div3kc;
            let alpha_0k = -((1.0 + 2.0 * c) * (1.0 + c).sqrt()) * div3kc / (1.0 - c).sqrt();
            let beta_0 = s * div3kc;
            tan[0] = gamma * div3;
            tan[1] = alpha_0k * div3;
            tan[2] = beta_0 * div3;
            tan[last] = alpha_0k * div3;
            for i in 1..valence - 1 {
                let sin_i = (theta * i as f64).sin();
                let sin_i1 = (theta * (i + 1) as f64).sin();
                let alpha = 4.0 * sin_i * div3kc;
                let beta = (sin_i + sin_i1) * div3kc;
                tan[1 + 2 * i] = alpha * div3;
                tan[2 + 2 * i] = beta * div3;
            }
        }

        let along = |edge: usize| {
            let angle = face_angle * edge as f64;
            let (cos_a, sin_a) = (angle.cos(), angle.sin());
            let mut e: Vec<f64> = tan.iter().map(|&t| t * sin_a).collect();
            e[0] += p[0];
            e[1] += p[1] + t_boundary_1 * cos_a;
            e[last] += p[last] + t_boundary_last * cos_a;
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
        let em = if face_in_ring == num_faces - 1 {
            let mut e = vec![0.0; width];
            e[0] = 2.0 / 3.0;
            e[last] = 1.0 / 3.0;
            e
        } else {
            along((face_in_ring + 1) % valence)
        };
        (p, ep, em)
    }
}

/// Merges repeated corner columns (0 to 3) within each row, keeping the
/// first occurrence's position: a valence-2 interior corner puts the opposite
/// corner twice into its neighbours' rings (OpenSubdiv's
/// `_removeValence2Duplicates`).
fn merge_corner_duplicates(rows: &mut [Row]) {
    for row in rows {
        let mut first: [Option<usize>; 4] = [None; 4];
        let mut merged: Row = Vec::with_capacity(row.len());
        for &(column, weight) in row.iter() {
            if column < 4 {
                if let Some(at) = first[column] {
                    merged[at].1 += weight;
                    continue;
                }
                first[column] = Some(merged.len());
            }
            merged.push((column, weight));
        }
        *row = merged;
    }
}

/// Per-corner facts the Gregory conversion uses (OpenSubdiv's
/// `GregoryConverter::CornerTopology`).
#[derive(Clone, Debug, Default)]
struct CornerTopology {
    boundary: bool,
    sharp: bool,
    regular: bool,
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

struct Gregory {
    num_source_points: usize,
    isolated_interior: Option<usize>,
    has_val2_interior: bool,
    corners: [CornerTopology; 4],
}

impl Gregory {
    /// Classifies the corners as OpenSubdiv's `GregoryConverter::Initialize`.
    fn new(patch: &SourcePatch) -> Gregory {
        let mut corners: [CornerTopology; 4] = Default::default();
        let (mut boundary_count, mut irregular_count, mut sharp_count) = (0, 0, 0);
        let mut irregular = (0, 0);
        for (c, topo) in corners.iter_mut().enumerate() {
            let src = patch.corners[c];
            topo.boundary = src.boundary;
            topo.sharp = src.sharp;
            topo.num_faces = usize::from(src.num_faces);
            topo.face_in_ring = usize::from(src.patch_face);
            topo.valence = src.valence();
            topo.regular = (topo.num_faces << usize::from(topo.boundary)) == 4 && !topo.sharp;
            topo.cos_face_angle = if topo.regular {
                0.0
            } else {
                let full = if topo.boundary { std::f64::consts::PI } else { 2.0 * std::f64::consts::PI };
                (full / topo.num_faces as f64).cos()
            };
            patch.corner_ring_points(c, &mut topo.ring);
            boundary_count += usize::from(topo.boundary);
            if !topo.regular {
                irregular_count += 1;
                irregular = (c, topo.valence);
            }
            sharp_count += usize::from(topo.sharp);
        }
        for c in 0..4 {
            let fp_regular = corners[c].regular && corners[next(c)].regular;
            let fm_regular = corners[c].regular && corners[prev(c)].regular;
            let topo = &mut corners[c];
            topo.fp_regular = fp_regular;
            topo.fm_regular = fm_regular;
            if topo.boundary {
                topo.ep_on_boundary = topo.face_in_ring == 0;
                topo.em_on_boundary = topo.face_in_ring + 1 == topo.num_faces;
                if topo.num_faces > 1 {
                    // Across a boundary edge there is no second face point:
                    // the one on the other side of the corner stands for both.
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
        let isolated = irregular_count == 1 && boundary_count == 0 && irregular.1 > 2 && sharp_count == 0;
        Gregory {
            num_source_points: patch.num_source_points,
            isolated_interior: isolated.then_some(irregular.0),
            has_val2_interior: patch.val2_interior.iter().any(|&v| v),
            corners,
        }
    }

    /// The 20 rows, as OpenSubdiv's `GregoryConverter::Convert`.
    fn convert(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = vec![Vec::new(); 20];
        for c in 0..4 {
            let (p, ep, em) =
                if self.corners[c].regular { self.regular_edge_points(c) } else { self.irregular_edge_points(c) };
            rows[5 * c] = p;
            rows[5 * c + 1] = ep;
            rows[5 * c + 2] = em;
        }
        for c in 0..4 {
            let topo = &self.corners[c];
            if topo.fp_regular {
                rows[5 * c + 3] = regular_face_point(c);
            }
            if topo.fm_regular {
                rows[5 * c + 4] = regular_face_point(c);
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
        if self.has_val2_interior {
            merge_corner_duplicates(&mut rows);
        }
        rows
    }

    /// P, Ep and Em of a regular corner: the Bezier points of the B-spline
    /// patch (with mirrored phantom points across a boundary), as
    /// `GregoryConverter::assignRegularEdgePoints`.
    fn regular_edge_points(&self, c: usize) -> (Row, Row, Row) {
        let topo = &self.corners[c];
        let r = &topo.ring;
        if !topo.boundary {
            let p = vec![
                (c, 4.0 / 9.0),
                (r[0], 1.0 / 9.0),
                (r[2], 1.0 / 9.0),
                (r[4], 1.0 / 9.0),
                (r[6], 1.0 / 9.0),
                (r[1], 1.0 / 36.0),
                (r[3], 1.0 / 36.0),
                (r[5], 1.0 / 36.0),
                (r[7], 1.0 / 36.0),
            ];
            let f = topo.face_in_ring;
            let e_p = 2 * f;
            let e_m = 2 * ((f + 1) & 3);
            let o_p = 2 * ((f + 2) & 3);
            let o_m = 2 * ((f + 3) & 3);
            let ep = vec![
                (c, 4.0 / 9.0),
                (r[e_p], 2.0 / 9.0),
                (r[e_m], 1.0 / 9.0),
                (r[o_m], 1.0 / 9.0),
                (r[e_p + 1], 1.0 / 18.0),
                (r[o_m + 1], 1.0 / 18.0),
            ];
            let em = vec![
                (c, 4.0 / 9.0),
                (r[e_m], 2.0 / 9.0),
                (r[e_p], 1.0 / 9.0),
                (r[o_p], 1.0 / 9.0),
                (r[e_p + 1], 1.0 / 18.0),
                (r[e_m + 1], 1.0 / 18.0),
            ];
            (p, ep, em)
        } else {
            let p = vec![(c, 2.0 / 3.0), (r[0], 1.0 / 6.0), (r[4], 1.0 / 6.0)];
            let along = vec![(c, 2.0 / 3.0), (r[if topo.ep_on_boundary { 0 } else { 4 }], 1.0 / 3.0)];
            let across = vec![
                (c, 4.0 / 9.0),
                (r[2], 2.0 / 9.0),
                (r[0], 1.0 / 9.0),
                (r[4], 1.0 / 9.0),
                (r[1], 1.0 / 18.0),
                (r[3], 1.0 / 18.0),
            ];
            if topo.ep_on_boundary { (p, along, across) } else { (p, across, along) }
        }
    }

    /// P, Ep and Em of an irregular corner, as
    /// `GregoryConverter::computeIrregularEdgePoints`.
    fn irregular_edge_points(&self, c: usize) -> (Row, Row, Row) {
        let topo = &self.corners[c];
        if topo.sharp {
            // OpenSubdiv's provisional choice: the corner is interpolated and
            // the edge points lie a third of the way along the patch edges.
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
            let last = p.len() - 1;
            let (first_point, last_point) = (topo.ring[0], topo.ring[2 * (topo.valence - 1)]);
            let p_row = vec![(c, p[0]), (first_point, p[1]), (last_point, p[last])];
            // Along a boundary edge only the two points of that edge count.
            let ep_row = if topo.ep_on_boundary { vec![(c, ep[0]), (first_point, ep[1])] } else { ring(&ep) };
            let em_row = if topo.em_on_boundary { vec![(c, em[0]), (last_point, em[last])] } else { ring(&em) };
            return (p_row, ep_row, em_row);
        }
        // A smooth corner with one face: the boundary curve's limit.
        (
            vec![(c, 4.0 / 6.0), (next(c), 1.0 / 6.0), (prev(c), 1.0 / 6.0)],
            vec![(c, 2.0 / 3.0), (next(c), 1.0 / 3.0)],
            vec![(c, 2.0 / 3.0), (prev(c), 1.0 / 3.0)],
        )
    }

    /// A face point next to an irregular corner, from the corner's P, the
    /// edge point on the same edge at this corner (`near`) and at the far
    /// corner (`far`), plus a twist term across the interior edge
    /// (`GregoryConverter::computeIrregularFacePoint`). Only columns of P and
    /// the two edge points are kept.
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
        let p_coeff = cos_far / 3.0;
        let near_coeff = (3.0 - 2.0 * cos_near - cos_far) / 3.0;
        let far_coeff = 2.0 * cos_near / 3.0;

        let mut full = vec![0.0; self.num_source_points];
        let mut used = vec![false; self.num_source_points];
        for (row, s) in [(p, p_coeff), (near, near_coeff), (far, far_coeff)] {
            for &(column, weight) in row.iter() {
                full[column] += s * weight;
                used[column] = true;
            }
        }
        let valence = here.valence;
        let e = edge_in_ring;
        let e_prev = (e + valence - 1) % valence;
        let e_next = (e + 1) % valence;
        let r = &here.ring;
        full[r[2 * e_prev]] += -sign / 9.0;
        full[r[2 * e_prev + 1]] += -sign / 18.0;
        full[r[2 * e + 1]] += sign / 18.0;
        full[r[2 * e_next]] += sign / 9.0;

        (0..self.num_source_points).filter(|&i| used[i]).map(|i| (i, full[i])).collect()
    }
}

/// The bilinear Bezier-interior point of the patch face near corner `c`
/// (`GregoryConverter::assignRegularFacePoints`).
fn regular_face_point(c: usize) -> Row {
    vec![(c, 4.0 / 9.0), (prev(c), 2.0 / 9.0), (next(c), 2.0 / 9.0), (opposite(c), 1.0 / 9.0)]
}

/// The 20 Gregory-basis points of the patch (OpenSubdiv's
/// `ENDCAP_GREGORY_BASIS`, `Far::GregoryConverter`): per corner `c`, rows
/// `5c..5c + 5` are P, Ep, Em, Fp and Fm.
pub fn gregory_basis(patch: &SourcePatch) -> Rows {
    let rows = Gregory::new(patch).convert();
    Rows::from_rows(patch.num_source_points, &rows)
}

/// The 16 points of a bicubic B-spline patch standing in for the irregular
/// patch (OpenSubdiv's `ENDCAP_BSPLINE_BASIS`, `Far::BSplineConverter`).
///
/// With a single irregular interior corner and no boundary or sharp corner,
/// the seven B-spline points around that corner are fitted to its limit
/// position and edge points and the other nine are source points (rows of
/// one entry). Otherwise the Gregory points are converted, each B-spline
/// point then depending on every source point (dense rows).
pub fn bspline(patch: &SourcePatch) -> Rows {
    let gregory = Gregory::new(patch);
    let rows = match gregory.isolated_interior {
        Some(corner) => bspline_isolated_corner(patch, corner),
        None => bspline_from_gregory(&gregory.convert(), patch.num_source_points),
    };
    Rows::from_rows(patch.num_source_points, &rows)
}

/// Inverse of the B-spline-to-Bezier change of basis applied to the Gregory
/// points, with the two face points of each corner averaged out by using Fp
/// only (`BSplineConverter::convertFromGregory`).
fn bspline_from_gregory(g: &[Row], num_columns: usize) -> Vec<Row> {
    const CORNER: [f64; 9] = [49.0, -42.0, -42.0, 36.0, -14.0, -14.0, 12.0, 12.0, 4.0];
    const BOUNDARY: [f64; 6] = [-14.0, 12.0, 7.0, -6.0, 4.0, -2.0];
    const INTERIOR: [f64; 4] = [4.0, -2.0, -2.0, 1.0];
    // Gregory rows each B-spline point combines, per quadrant (the corner
    // nearest the point): corner, boundary (along +u / +v) and interior.
    const P: [[usize; 9]; 4] = [
        [3, 1, 2, 0, 8, 18, 7, 16, 13],
        [8, 6, 7, 5, 3, 13, 12, 1, 18],
        [13, 11, 12, 10, 18, 8, 17, 6, 3],
        [18, 16, 17, 15, 13, 3, 2, 11, 8],
    ];
    const EP: [[usize; 6]; 4] =
        [[3, 1, 8, 7, 18, 13], [8, 6, 13, 12, 3, 18], [13, 11, 18, 17, 8, 3], [18, 16, 3, 2, 13, 8]];
    const EM: [[usize; 6]; 4] =
        [[3, 2, 18, 16, 8, 13], [8, 7, 3, 1, 13, 18], [13, 12, 8, 6, 18, 3], [18, 17, 13, 11, 3, 8]];
    const F: [[usize; 4]; 4] = [[3, 8, 18, 13], [8, 13, 3, 18], [13, 18, 8, 3], [18, 3, 13, 8]];

    let combine = |sources: &[usize], weights: &[f64]| -> Row {
        let mut full = vec![0.0; num_columns];
        for (&s, &w) in sources.iter().zip(weights) {
            for &(column, weight) in &g[s] {
                full[column] += w * weight;
            }
        }
        full.into_iter().enumerate().collect()
    };
    vec![
        combine(&P[0], &CORNER),
        combine(&EP[0], &BOUNDARY),
        combine(&EM[1], &BOUNDARY),
        combine(&P[1], &CORNER),
        combine(&EM[0], &BOUNDARY),
        combine(&F[0], &INTERIOR),
        combine(&F[1], &INTERIOR),
        combine(&EP[1], &BOUNDARY),
        combine(&EP[3], &BOUNDARY),
        combine(&F[3], &INTERIOR),
        combine(&F[2], &INTERIOR),
        combine(&EM[2], &BOUNDARY),
        combine(&P[3], &CORNER),
        combine(&EM[3], &BOUNDARY),
        combine(&EP[2], &BOUNDARY),
        combine(&P[2], &CORNER),
    ]
}

/// B-spline points for a patch whose only irregularity is one smooth interior
/// corner (`BSplineConverter::convertIrregularCorner`).
///
/// Seen from the irregular corner `P0` with `P1` towards the Ep edge and `P3`
/// towards the Em edge, the seven points `X0..X6` replacing the ring points
/// outside the patch are chosen so that the B-spline patch has `P0`'s limit
/// position and edge points:
/// `X1 = (36 Ep - 16 P0 - 8 P1 - 2 P2 - 4 P3 - P6 - 2 P7) / 3`,
/// `X3 = (-18 Ep + 8 P0 + 4 P1 + P2 + 2 P3 + 2 P6 + 4 P7) / 3`,
/// `X5 = X1 + P8 - P6` (and `X2`, `X4`, `X6` symmetrically with Em), and
/// `X0 = 36 P - 16 P0 - 4 (P1 + P3 + X1 + X2) - (P2 + X3 + X4)`.
fn bspline_isolated_corner(patch: &SourcePatch, corner: usize) -> Vec<Row> {
    let valence = usize::from(patch.corners[corner].num_faces);
    let face = usize::from(patch.corners[corner].patch_face);
    let width = 1 + 2 * valence;
    let (w_p, w_ep, w_em) = limits::interior(valence, face, true);

    // B-spline rows of X0..X6 for each position of the irregular corner.
    const X_ROWS: [[usize; 7]; 4] =
        [[0, 1, 4, 2, 8, 3, 12], [3, 7, 2, 11, 1, 15, 0], [15, 14, 11, 13, 7, 12, 3], [12, 8, 13, 4, 14, 0, 15]];
    let x_rows = X_ROWS[corner];

    let f1 = (face + 1) % valence;
    let f2 = (face + 2) % valence;
    let fm1 = (face + valence - 1) % valence;
    let p0 = 0;
    let p1 = 1 + 2 * face;
    let p2 = 2 + 2 * face;
    let p3 = 1 + 2 * f1;
    let p15 = 2 + 2 * f1;
    let p4 = 1 + 2 * f2;
    let p6 = 1 + 2 * fm1;
    let p7 = 2 + 2 * fm1;
    let extra = width;

    let mut x = vec![vec![0.0; width]; 5];
    let mut x5 = vec![0.0; width + 1];
    let mut x6 = vec![0.0; width + 1];
    for (i, w) in [(p0, 16.0), (p1, 8.0), (p2, 2.0), (p3, 4.0), (p6, 1.0), (p7, 2.0)] {
        x[1][i] = w;
    }
    for (i, w) in [(p0, 16.0), (p3, 8.0), (p2, 2.0), (p1, 4.0), (p4, 1.0), (p15, 2.0)] {
        x[2][i] = w;
    }
    for (i, w) in [(p0, 8.0), (p1, 4.0), (p2, 1.0), (p3, 2.0), (p6, 2.0), (p7, 4.0)] {
        x[3][i] = w;
    }
    for (i, w) in [(p0, 8.0), (p3, 4.0), (p2, 1.0), (p1, 2.0), (p4, 2.0), (p15, 4.0)] {
        x[4][i] = w;
    }
    x5[p6] = -1.0;
    x5[extra] = 1.0;
    x6[p4] = -1.0;
    x6[extra] = 1.0;
    for (i, w) in [(p0, 16.0), (p1, 4.0), (p2, 1.0), (p3, 4.0)] {
        x[0][i] = w;
    }
    let one_third = 1.0 / 3.0;
    for i in 0..width {
        x[1][i] = (36.0 * w_ep[i] - x[1][i]) * one_third;
        x[2][i] = (36.0 * w_em[i] - x[2][i]) * one_third;
        x[3][i] = -w_ep[i] * 6.0 + x[3][i] * one_third;
        x[4][i] = -w_em[i] * 6.0 + x[4][i] * one_third;
        x5[i] += x[1][i];
        x6[i] += x[2][i];
        x[0][i] = w_p[i] * 36.0 - x[0][i] - (x[2][i] + x[1][i]) * 4.0 - (x[3][i] + x[4][i]);
    }

    let mut ring = Vec::with_capacity(width);
    patch.corner_ring_points(corner, &mut ring);
    ring.insert(0, corner);

    // The exterior source points after P7 follow counter-clockwise around
    // the patch, wrapping from the last source point to the first exterior
    // one (index 4).
    let n = patch.num_source_points;
    let mut exterior = [0usize; 16];
    for (following, slot) in (ring[p7] + 1..).zip(exterior.iter_mut().skip(8)) {
        *slot = if following < n { following } else { following - n + 4 };
    }

    let mut rows: Vec<Row> = vec![Vec::new(); 16];
    for (k, weights) in x.iter().enumerate() {
        rows[x_rows[k]] = ring.iter().copied().zip(weights.iter().copied()).collect();
    }
    let with_extra = |weights: &[f64], extra_point: usize| -> Row {
        ring.iter().copied().chain(std::iter::once(extra_point)).zip(weights.iter().copied()).collect()
    };
    rows[x_rows[5]] = with_extra(&x5, exterior[8]);
    rows[x_rows[6]] = with_extra(&x6, exterior[14]);

    // The four face corners keep their B-spline positions 5, 6, 10, 9.
    rows[5] = vec![(0, 1.0)];
    rows[6] = vec![(1, 1.0)];
    rows[10] = vec![(2, 1.0)];
    rows[9] = vec![(3, 1.0)];
    const EXTERIOR_ROWS: [[usize; 5]; 4] = [[7, 11, 15, 14, 13], [14, 13, 12, 8, 4], [8, 4, 0, 1, 2], [1, 2, 3, 7, 11]];
    for (k, &row) in EXTERIOR_ROWS[corner].iter().enumerate() {
        rows[row] = vec![(exterior[9 + k], 1.0)];
    }
    rows
}

/// One point per corner, its limit position (OpenSubdiv's linear end cap,
/// `Far::LinearConverter`): the corner itself when sharp, the boundary
/// curve's limit on a boundary, the interior limit mask otherwise.
pub fn linear(patch: &SourcePatch) -> Rows {
    let mut rows: Vec<Row> = Vec::with_capacity(4);
    let mut ring = Vec::new();
    for c in 0..4 {
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
    if patch.val2_interior.iter().any(|&v| v) {
        merge_corner_duplicates(&mut rows);
    }
    Rows::from_rows(patch.num_source_points, &rows)
}
