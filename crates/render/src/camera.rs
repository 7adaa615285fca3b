//! The camera fitted to the object and the per-frame uniform block.
//!
//! The scene is normalised on the host (the object's bounding sphere is the
//! unit sphere at the origin), so the camera only depends on the options
//! and the image's aspect ratio.

use crate::options::{RenderOptions, UpAxis};

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn normalise(a: V3) -> V3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}

/// Key light direction in camera coordinates (right, up, towards the
/// viewer): from the upper left, in front.
const KEY_CAMERA: V3 = [-0.45, 0.65, 0.6];

/// Floats in the uniform block (`Frame` in `render_mesh.wgsl`).
pub(crate) const FRAME_FLOATS: usize = 40;

/// The camera of one image.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Camera {
    eye: V3,
    /// Unit vectors of the camera: right, up, back (towards the viewer).
    right: V3,
    up: V3,
    back: V3,
    /// Row-major projection × view.
    view_proj: [[f64; 4]; 4],
}

impl Camera {
    /// The camera of `opts` (validated) for the unit sphere at the origin.
    pub(crate) fn fit(opts: &RenderOptions) -> Self {
        let az = opts.azimuth_deg.to_radians();
        let el = opts.elevation_deg.to_radians();
        let (back, world_up) = match opts.up {
            UpAxis::Y => ([el.cos() * az.sin(), el.sin(), el.cos() * az.cos()], [0.0, 1.0, 0.0]),
            UpAxis::Z => ([el.cos() * az.sin(), -el.cos() * az.cos(), el.sin()], [0.0, 0.0, 1.0]),
        };
        let right = normalise(cross(world_up, back));
        let up = cross(back, right);

        let aspect = f64::from(opts.width) / f64::from(opts.height);
        let half_y = 0.5 * opts.fov_y_deg.to_radians();
        let half_x = (half_y.tan() * aspect).atan();
        let half = half_y.min(half_x);
        let dist = (1.0 + opts.margin) / half.sin();
        let eye = scale(back, dist);
        // The object lies between dist − 1 and dist + 1 from the eye.
        let near = ((dist - 1.0) * 0.5).max(1e-3);
        let far = (dist + 1.0) * 1.05;

        let view = [
            [right[0], right[1], right[2], -dot(right, eye)],
            [up[0], up[1], up[2], -dot(up, eye)],
            [back[0], back[1], back[2], -dot(back, eye)],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let f = 1.0 / half_y.tan();
        // Right-handed, depth 0 at `near` and 1 at `far` (wgpu's clip space).
        let proj = [
            [f / aspect, 0.0, 0.0, 0.0],
            [0.0, f, 0.0, 0.0],
            [0.0, 0.0, far / (near - far), near * far / (near - far)],
            [0.0, 0.0, -1.0, 0.0],
        ];
        let mut view_proj = [[0.0; 4]; 4];
        for (i, row) in view_proj.iter_mut().enumerate() {
            for (j, out) in row.iter_mut().enumerate() {
                *out = (0..4).map(|k| proj[i][k] * view[k][j]).sum();
            }
        }
        Self { eye, right, up, back, view_proj }
    }

    /// The uniform block: view-projection (column-major), eye, key light,
    /// headlight, base colour (linear), ambient, viewport and overlay bias.
    pub(crate) fn frame(&self, opts: &RenderOptions, base: [f32; 4], bias: f32) -> [f32; FRAME_FLOATS] {
        let key = normalise(add(
            add(scale(self.right, KEY_CAMERA[0]), scale(self.up, KEY_CAMERA[1])),
            scale(self.back, KEY_CAMERA[2]),
        ));
        let mut out = [0.0f32; FRAME_FLOATS];
        for col in 0..4 {
            for row in 0..4 {
                out[4 * col + row] = self.view_proj[row][col] as f32;
            }
        }
        let rest = [
            [self.eye[0] as f32, self.eye[1] as f32, self.eye[2] as f32, 1.0],
            [key[0] as f32, key[1] as f32, key[2] as f32, opts.key_light],
            [self.back[0] as f32, self.back[1] as f32, self.back[2] as f32, opts.headlight],
            base,
            [opts.ambient, opts.width as f32, opts.height as f32, bias],
            [opts.checker.unwrap_or(0.0), 0.0, 0.0, 0.0],
        ];
        for (i, v) in rest.iter().enumerate() {
            out[16 + 4 * i..20 + 4 * i].copy_from_slice(v);
        }
        out
    }

    /// Clip coordinates of `p` (tests).
    #[cfg(test)]
    fn clip(&self, p: V3) -> [f64; 4] {
        let h = [p[0], p[1], p[2], 1.0];
        let mut out = [0.0; 4];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (0..4).map(|k| self.view_proj[i][k] * h[k]).sum();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_sphere_fits_and_lies_within_depth_range() {
        for (w, h) in [(128, 96), (96, 128), (100, 100)] {
            for az in [0.0, 35.0, 200.0] {
                for el in [-60.0, 0.0, 25.0, 89.0] {
                    let opts = RenderOptions::default().size(w, h).view(az, el);
                    let cam = Camera::fit(&opts);
                    let [c, _, _, w0] = cam.clip([0.0; 3]);
                    assert!(c.abs() < 1e-12 && w0 > 0.0, "the centre projects to the middle");
                    for p in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]] {
                        let c = cam.clip(p);
                        let ndc = [c[0] / c[3], c[1] / c[3], c[2] / c[3]];
                        assert!(ndc[0].abs() < 1.0 && ndc[1].abs() < 1.0, "{p:?} → {ndc:?}");
                        assert!(ndc[2] > 0.0 && ndc[2] < 1.0, "{p:?} depth {}", ndc[2]);
                    }
                }
            }
        }
    }

    #[test]
    fn y_up_points_up_on_screen() {
        let cam = Camera::fit(&RenderOptions::default());
        let top = cam.clip([0.0, 0.9, 0.0]);
        assert!(top[1] / top[3] > 0.3);
        let cam = Camera::fit(&RenderOptions::default().up(UpAxis::Z));
        let top = cam.clip([0.0, 0.0, 0.9]);
        assert!(top[1] / top[3] > 0.3);
    }
}
