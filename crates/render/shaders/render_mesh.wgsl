// Offscreen mesh rendering (loaded by `subla-render`): shaded triangles and
// screen-space line segments drawn as quads.
//
// Coordinates are the scene's, normalised on the host so that the object's
// bounding sphere is the unit sphere at the origin (f32 keeps its precision).
// Colours arrive linear; the render target is sRGB, so the store encodes.

struct Frame {
    // Projection times view, scene to clip space (depth 0..1).
    view_proj: mat4x4<f32>,
    // xyz: eye position.
    eye: vec4<f32>,
    // xyz: unit direction towards the key light; w: its intensity.
    key: vec4<f32>,
    // xyz: unit direction towards the camera (the headlight); w: intensity.
    head: vec4<f32>,
    // Linear RGBA of the surface.
    base: vec4<f32>,
    // x: ambient; y, z: viewport size in pixels; w: overlay depth bias
    // (scene units towards the eye).
    params: vec4<f32>,
    // x: checker squares per unit of texture space (0: no checker).
    checker: vec4<f32>,
}

@group(0) @binding(0) var<uniform> frame: Frame;

struct MeshIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    // xy: texture coordinate; z: 1 where the corner has one, else 0.
    @location(2) uv: vec3<f32>,
}

struct MeshOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec3<f32>,
}

@vertex
fn mesh_vs(v: MeshIn) -> MeshOut {
    var out: MeshOut;
    out.clip = frame.view_proj * vec4<f32>(v.position, 1.0);
    out.world = v.position;
    out.normal = v.normal;
    out.uv = v.uv;
    return out;
}

@fragment
fn mesh_fs(in: MeshOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let len = length(in.normal);
    // A degenerate face has no normal: light it as if it faced the eye.
    var n = normalize(frame.eye.xyz - in.world);
    if len > 1e-20 {
        n = in.normal / len;
        // Two-sided: a triangle seen from its back shows its back side,
        // whatever the winding. Deciding by the triangle, not by the
        // interpolated normal, keeps smooth silhouettes free of flips.
        if !front {
            n = -n;
        }
    }
    let key = max(dot(n, frame.key.xyz), 0.0) * frame.key.w;
    let head = max(dot(n, frame.head.xyz), 0.0) * frame.head.w;
    let light = frame.params.x + key + head;
    var base = frame.base.rgb;
    // The checker: every other square a darker, warmer shade, so that a
    // seam shows as a break in the squares.
    if frame.checker.x > 0.0 && in.uv.z > 0.5 {
        let cell = floor(in.uv.xy * frame.checker.x);
        if (i32(cell.x) + i32(cell.y)) % 2 != 0 {
            base = vec3<f32>(0.55, 0.22, 0.08);
        }
    }
    return vec4<f32>(min(base * light, vec3<f32>(1.0)), frame.base.a);
}

struct LineIn {
    @location(0) a: vec3<f32>,
    @location(1) b: vec3<f32>,
    @location(2) colour: vec4<f32>,
    // Full width in pixels.
    @location(3) width: f32,
}

struct LineOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) colour: vec4<f32>,
}

// Moves `p` towards the eye by the overlay depth bias: along the ray through
// the eye, so its projection does not change, only its depth.
fn biased_clip(p: vec3<f32>) -> vec4<f32> {
    let to_eye = frame.eye.xyz - p;
    let d = length(to_eye);
    var q = p;
    if d > 1e-20 {
        q = p + to_eye * (min(frame.params.w, 0.5 * d) / d);
    }
    var c = frame.view_proj * vec4<f32>(q, 1.0);
    c.w = max(c.w, 1e-6);
    return c;
}

// One instance per segment, six vertices: a quad around the segment in
// screen space, `width` pixels wide, extended by half the width at both
// ends so that segments meeting at a vertex join without gaps.
@vertex
fn line_vs(@builtin(vertex_index) corner: u32, s: LineIn) -> LineOut {
    // (end, side) of the two triangles' corners.
    var ends = array<f32, 6>(0.0, 1.0, 1.0, 0.0, 1.0, 0.0);
    var sides = array<f32, 6>(-1.0, -1.0, 1.0, -1.0, 1.0, 1.0);
    let end = ends[corner];
    let side = sides[corner];

    let ca = biased_clip(s.a);
    let cb = biased_clip(s.b);
    let half_viewport = 0.5 * frame.params.yz;
    let pa = ca.xy / ca.w * half_viewport;
    let pb = cb.xy / cb.w * half_viewport;
    var dir = vec2<f32>(1.0, 0.0);
    let len = length(pb - pa);
    if len > 1e-6 {
        dir = (pb - pa) / len;
    }
    let normal = vec2<f32>(-dir.y, dir.x);
    let offset = (normal * side + dir * (2.0 * end - 1.0)) * (0.5 * s.width);

    var c = mix(ca, cb, end);
    c = vec4<f32>(c.xy + offset / half_viewport * c.w, c.z, c.w);
    var out: LineOut;
    out.clip = c;
    out.colour = s.colour;
    return out;
}

@fragment
fn line_fs(in: LineOut) -> @location(0) vec4<f32> {
    return in.colour;
}
