//! What the picture looks like: size, camera, colours, lighting, overlays.

use crate::mesh::CageOverlay;

/// How surface normals are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shading {
    /// One normal per face (Newell's normal of the polygon): facets show,
    /// as they are.
    #[default]
    Flat,
    /// One normal per vertex, the sum of the Newell normals (area-weighted)
    /// of the drawn faces around it. Faces of inconsistent winding cancel
    /// each other's contribution; use [`Shading::Flat`] for such meshes.
    Smooth,
}

/// Which coordinate axis points up on screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpAxis {
    /// `+y` up; azimuth 0 looks from `+z` towards the object (OBJ's usual
    /// front).
    #[default]
    Y,
    /// `+z` up; azimuth 0 looks from `−y` towards the object.
    Z,
}

/// How overlay lines (cage, creases) meet the surface's depth buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum OverlayDepth {
    /// Depth-tested against the surface after moving each endpoint towards
    /// the eye by `bias`, a fraction of the object's bounding radius (the
    /// projection is unchanged, only the depth): lines on the surface or in
    /// front of it show, lines behind it are hidden.
    Tested {
        /// Distance towards the eye, as a fraction of the bounding radius
        /// (default 0.01).
        bias: f32,
    },
    /// Drawn over everything, hidden lines included.
    OnTop,
}

impl Default for OverlayDepth {
    fn default() -> Self {
        OverlayDepth::Tested { bias: 0.01 }
    }
}

/// The picture: size, camera, colours, lighting and overlays.
///
/// Colours are 8-bit sRGB with straight alpha, as they appear in the
/// image. The defaults give a 3/4 view (azimuth 35°, elevation 25°) of a
/// light blue-grey object on white, flat shaded, 4× multisampled where the
/// device allows it.
///
/// # Camera
/// The camera looks at the centre of the bounding box of the drawn data
/// (every vertex a face uses, holes included, the crease and cage
/// endpoints) from the direction given by [`azimuth_deg`] (about the up
/// axis) and [`elevation_deg`] (above the horizontal plane), with a
/// perspective of vertical field of view [`fov_y_deg`], at the distance
/// where the sphere about that centre holding all the data, enlarged by
/// [`margin`], fits the narrower side of the image. The framing does not depend on the
/// direction, so turntables stay steady.
///
/// # Lighting
/// Lambert shading with an ambient term, a key light from the upper left
/// of the camera and a headlight along the view, both moving with the
/// camera; two-sided, so a face seen from its back (inverted winding, the
/// inside of an open surface) is lit as a front face would be.
///
/// [`azimuth_deg`]: Self::azimuth_deg
/// [`elevation_deg`]: Self::elevation_deg
/// [`fov_y_deg`]: Self::fov_y_deg
/// [`margin`]: Self::margin
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Image width in pixels (default 800).
    pub width: u32,
    /// Image height in pixels (default 600).
    pub height: u32,
    /// Camera azimuth in degrees about the up axis (default 35).
    pub azimuth_deg: f64,
    /// Camera elevation in degrees above the horizontal plane, in
    /// `[−89, 89]` (default 25).
    pub elevation_deg: f64,
    /// The up axis (default `+y`).
    pub up: UpAxis,
    /// Vertical field of view in degrees, in `[1, 120]` (default 30).
    pub fov_y_deg: f64,
    /// Space around the object's bounding sphere (see *Camera*), as a
    /// fraction of its radius, at least 0 (default 0.05).
    pub margin: f64,
    /// Flat or smooth normals (default flat).
    pub shading: Shading,
    /// Background colour (default opaque white; a zero alpha gives a
    /// transparent PNG).
    pub background: [u8; 4],
    /// Surface colour (default `[170, 185, 205, 255]`).
    pub base_colour: [u8; 4],
    /// Ambient light, added everywhere (default 0.18).
    pub ambient: f32,
    /// Key light intensity (default 0.6).
    pub key_light: f32,
    /// Headlight intensity (default 0.3).
    pub headlight: f32,
    /// Line segments drawn over the mesh, in its coordinates (default none).
    pub cage: Option<CageOverlay>,
    /// Cage line colour (default dark grey `[40, 40, 48, 255]`).
    pub cage_colour: [u8; 4],
    /// Cage line width in pixels (default 1.5).
    pub cage_width: f32,
    /// Mesh edges to highlight, as pairs of the mesh's vertex indices
    /// (default none).
    pub creases: Vec<[u32; 2]>,
    /// Crease line colour (default red `[215, 40, 40, 255]`).
    pub crease_colour: [u8; 4],
    /// Crease line width in pixels (default 2.5).
    pub crease_width: f32,
    /// Overlay depth handling (default depth-tested with a bias of 0.01).
    pub overlay_depth: OverlayDepth,
    /// 4× multisampling when the device supports it for the formats used
    /// (default on).
    pub msaa: bool,
    /// Caps each vertex buffer below the device's `max_buffer_size` (at
    /// least one triangle or segment per buffer). Meant for exercising the
    /// split path on small meshes; `None` (default): 64 MiB or the device
    /// limit, whichever is smaller.
    pub max_buffer_bytes: Option<u64>,
    /// A checker of this many squares per unit of texture space, drawn
    /// from the mesh's texture coordinates
    /// ([`MeshView::with_texcoords`](crate::MeshView::with_texcoords)):
    /// seams show where the squares break (default none; faces without
    /// texture coordinates keep the surface colour).
    pub checker: Option<f32>,
    /// Whether an image in which nothing was drawn (every pixel the
    /// background: no face in view, every face a hole, no faces) is
    /// returned; by default (false) it is the error
    /// [`RenderError::EmptyPicture`](crate::RenderError::EmptyPicture), so
    /// that a picture that shows nothing is never taken for one that does.
    pub allow_empty: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            width: 800,
            height: 600,
            azimuth_deg: 35.0,
            elevation_deg: 25.0,
            up: UpAxis::Y,
            fov_y_deg: 30.0,
            margin: 0.05,
            shading: Shading::Flat,
            background: [255, 255, 255, 255],
            base_colour: [170, 185, 205, 255],
            ambient: 0.18,
            key_light: 0.6,
            headlight: 0.3,
            cage: None,
            cage_colour: [40, 40, 48, 255],
            cage_width: 1.5,
            creases: Vec::new(),
            crease_colour: [215, 40, 40, 255],
            crease_width: 2.5,
            overlay_depth: OverlayDepth::default(),
            msaa: true,
            max_buffer_bytes: None,
            checker: None,
            allow_empty: false,
        }
    }
}

impl RenderOptions {
    /// Sets [`checker`](Self::checker): squares per unit of texture space.
    #[must_use]
    pub fn checker(mut self, squares_per_unit: f32) -> Self {
        self.checker = Some(squares_per_unit);
        self
    }

    /// Sets [`width`](Self::width) and [`height`](Self::height).
    #[must_use]
    pub fn size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }
    /// Sets [`azimuth_deg`](Self::azimuth_deg) and
    /// [`elevation_deg`](Self::elevation_deg).
    #[must_use]
    pub fn view(mut self, azimuth_deg: f64, elevation_deg: f64) -> Self {
        self.azimuth_deg = azimuth_deg;
        self.elevation_deg = elevation_deg;
        self
    }
    /// Sets [`up`](Self::up).
    #[must_use]
    pub fn up(mut self, up: UpAxis) -> Self {
        self.up = up;
        self
    }
    /// Sets [`shading`](Self::shading).
    #[must_use]
    pub fn shading(mut self, shading: Shading) -> Self {
        self.shading = shading;
        self
    }
    /// Sets [`background`](Self::background).
    #[must_use]
    pub fn background(mut self, colour: [u8; 4]) -> Self {
        self.background = colour;
        self
    }
    /// Sets [`base_colour`](Self::base_colour).
    #[must_use]
    pub fn base_colour(mut self, colour: [u8; 4]) -> Self {
        self.base_colour = colour;
        self
    }
    /// Sets [`cage`](Self::cage).
    #[must_use]
    pub fn cage(mut self, cage: CageOverlay) -> Self {
        self.cage = Some(cage);
        self
    }
    /// Sets [`creases`](Self::creases).
    #[must_use]
    pub fn creases(mut self, creases: Vec<[u32; 2]>) -> Self {
        self.creases = creases;
        self
    }
    /// Sets [`overlay_depth`](Self::overlay_depth).
    #[must_use]
    pub fn overlay_depth(mut self, depth: OverlayDepth) -> Self {
        self.overlay_depth = depth;
        self
    }
    /// Sets [`msaa`](Self::msaa).
    #[must_use]
    pub fn msaa(mut self, on: bool) -> Self {
        self.msaa = on;
        self
    }
    /// Sets [`allow_empty`](Self::allow_empty).
    #[must_use]
    pub fn allow_empty(mut self, allow: bool) -> Self {
        self.allow_empty = allow;
        self
    }
    /// Sets [`max_buffer_bytes`](Self::max_buffer_bytes).
    #[must_use]
    pub fn max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.max_buffer_bytes = Some(bytes);
        self
    }
}
