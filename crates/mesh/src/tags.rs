//! Sharpness tags and subdivision options, as OpenSubdiv's `Sdc` defines
//! them.
//!
//! | tag in a shape file | here |
//! |---|---|
//! | `t crease 2/1/0 v0 v1 s` | edge sharpness (the crease matrix `C`, §5.1) |
//! | `t corner 1/1/0 v s` | vertex sharpness |
//! | `t hole N/0/0 f…` | hole faces |
//! | `t interpolateboundary 1/0/0 k` | [`BoundaryInterpolation`] (0 none, 1 edge-and-corner, 2 edge-only) |
//! | `t facevaryinginterpolateboundary 1/0/0 k` | [`FVarLinearInterpolation`] (stored for later) |
//! | `t creasemethod 0/0/1 normal\|chaikin` | [`CreaseMethod`] |
//! | `t smoothtriangles 0/0/1 catmark\|smooth` | [`TriangleSubdivision`] |
//!
//! Sharpness is an `f32` as in OpenSubdiv; values at or above
//! [`SHARPNESS_INFINITE`] (10) are infinitely sharp, `f32::INFINITY` is
//! accepted too.

/// Sharpness at or above which an edge or vertex is infinitely sharp
/// (OpenSubdiv's `Sdc::Crease::SHARPNESS_INFINITE`).
pub const SHARPNESS_INFINITE: f32 = 10.0;

/// True if `s` is infinitely sharp.
#[inline]
pub fn is_infinitely_sharp(s: f32) -> bool {
    s >= SHARPNESS_INFINITE
}

/// How boundary edges and vertices are interpolated (OpenSubdiv's
/// `VtxBoundaryInterpolation`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum BoundaryInterpolation {
    /// No boundary rule: faces touching the boundary produce no output
    /// (treated as holes).
    None,
    /// Boundary edges are infinitely sharp creases (the default of
    /// OpenSubdiv's regression shapes and of subla).
    #[default]
    EdgeOnly,
    /// As `EdgeOnly`, and boundary vertices in a single face are infinitely
    /// sharp corners.
    EdgeAndCorner,
}

impl BoundaryInterpolation {
    /// From the `interpolateboundary` tag value (0 none, 1 edge-and-corner,
    /// 2 edge-only).
    pub fn from_tag(k: i64) -> Option<Self> {
        match k {
            0 => Some(Self::None),
            1 => Some(Self::EdgeAndCorner),
            2 => Some(Self::EdgeOnly),
            _ => None,
        }
    }
    /// The `interpolateboundary` tag value.
    pub fn tag(self) -> i64 {
        match self {
            Self::None => 0,
            Self::EdgeAndCorner => 1,
            Self::EdgeOnly => 2,
        }
    }
}

/// Face-varying linear interpolation (OpenSubdiv's
/// `FVarLinearInterpolation`); stored, not used yet.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum FVarLinearInterpolation {
    /// Smooth everywhere.
    None,
    /// Linear at corners only.
    CornersOnly,
    /// Linear at corners and some junctions.
    #[default]
    CornersPlus1,
    /// Linear at corners, junctions and darts.
    CornersPlus2,
    /// Linear along boundaries.
    Boundaries,
    /// Linear everywhere.
    All,
}

impl FVarLinearInterpolation {
    /// From the `facevaryinginterpolateboundary` tag value (0–5, OpenSubdiv's
    /// enumeration order).
    pub fn from_tag(k: i64) -> Option<Self> {
        Some(match k {
            0 => Self::None,
            1 => Self::CornersOnly,
            2 => Self::CornersPlus1,
            3 => Self::CornersPlus2,
            4 => Self::Boundaries,
            5 => Self::All,
            _ => return None,
        })
    }
    /// The tag value.
    pub fn tag(self) -> i64 {
        self as i64
    }
}

/// How semi-sharp creases lose sharpness from level to level.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum CreaseMethod {
    /// Sharpness decreases by one per level (`normal` in shape files).
    #[default]
    Uniform,
    /// Chaikin's rule: child sharpness blends neighbouring parent creases
    /// (Mlakar et al. 2020, Eq. 14–15).
    Chaikin,
}

impl CreaseMethod {
    /// From the `creasemethod` tag string.
    pub fn from_tag(s: &str) -> Option<Self> {
        match s {
            "normal" | "uniform" => Some(Self::Uniform),
            "chaikin" => Some(Self::Chaikin),
            _ => None,
        }
    }
    /// The tag string.
    pub fn tag(self) -> &'static str {
        match self {
            Self::Uniform => "normal",
            Self::Chaikin => "chaikin",
        }
    }
}

/// Catmull-Clark rule for triangles (OpenSubdiv's
/// `TriangleSubdivision`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TriangleSubdivision {
    /// The ordinary Catmull-Clark rule.
    #[default]
    Catmark,
    /// OpenSubdiv's smooth-triangle weights.
    Smooth,
}

impl TriangleSubdivision {
    /// From the `smoothtriangles` tag string.
    pub fn from_tag(s: &str) -> Option<Self> {
        match s {
            "catmark" => Some(Self::Catmark),
            "smooth" => Some(Self::Smooth),
            _ => None,
        }
    }
    /// The tag string.
    pub fn tag(self) -> &'static str {
        match self {
            Self::Catmark => "catmark",
            Self::Smooth => "smooth",
        }
    }
}

/// Subdivision options carried by a mesh.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Boundary interpolation.
    pub boundary: BoundaryInterpolation,
    /// Face-varying boundary interpolation (stored for later).
    pub fvar_boundary: FVarLinearInterpolation,
    /// Crease method.
    pub crease_method: CreaseMethod,
    /// Catmull-Clark triangle rule.
    pub triangle_subdivision: TriangleSubdivision,
}
