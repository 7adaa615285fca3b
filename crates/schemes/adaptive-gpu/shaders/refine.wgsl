// The points of a feature-adaptive patch table computed on the device by
// refinement, from the control points copied into the first rows of
// `points` (num_points x d, row-major; see src/refine.rs):
//
// * `level_rows`: one dispatch per stage (each sparse level, then the end
//   caps' points), one invocation per row: the row's weights times the
//   rows of the stage below, read from `points` and written to `points`.
//   Consecutive dispatches are ordered by wgpu: one synchronisation per
//   level, as a level-by-level refinement needs.
// * `tile_rows`: one dispatch for every level (Tokuyoshi's subtree
//   kernels: few synchronisations, work duplicated at the seams). One
//   workgroup per tile (the patches of a run of ptex faces); the host
//   gave each tile the closure of its patches' points, level by level,
//   with every row's columns renumbered into the tile's own scratch slots.
//   The workgroup computes its stages in order, with a storage barrier
//   between stages (the only synchronisation); each row is written to
//   the tile's scratch, and to `points` by the one tile that owns it.
//
// Points are anchored: a control point (the first rows of `points`) is
// itself, any other point p is kept as its difference d(p) from its
// anchor's control point a(p), a control point near it. A row of weights w
// over points q gives
//     d(p) = sum w * ((a(q) - a(p)) + d(q))      (d(q) = 0 for controls)
// (the weights sum to 1), so every term is of the size of the
// neighbourhood: f32 rounding is relative to the neighbourhood, not to
// the coordinates, and the limit kernels' differences of nearby points
// keep their precision at deep levels.
//
// Every row is summed in the order of its entries, from +0: repeated runs
// give bitwise identical points, and a point computed by several tiles has
// the same bits in each (same rows, same inputs, same order).

const WG: u32 = 256u;
// A column with this bit set names a row of `points` (a control point);
// otherwise it is a scratch slot of the tile.
const GLOBAL: u32 = 0x80000000u;
const NONE: u32 = 0xffffffffu;

struct Params {
    // level_rows: first row of the stage in `rows`, rows of the stage.
    // tile_rows: number of tiles, first word of the stage bounds in `header`.
    a: u32,
    b: u32,
    // level_rows: (unused), first point written.
    c: u32,
    d: u32,
    channels: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// level_rows: row offsets into `entries` (rows + 1 words per stage run).
// tile_rows: per tile (first stage, end stage, scratch slot base), then
// per stage its end op (the stage's first op is the previous stage's end,
// a tile's first stage starts at the previous tile's last end).
@group(0) @binding(1) var<storage, read> header: array<u32>;
// tile_rows: per op (first entry, end entry, scratch slot, point or NONE).
@group(0) @binding(2) var<storage, read> ops: array<vec4<u32>>;
// (column, bits of the f32 weight, anchor of the column's point, anchor of
// the row's point). level_rows: the column is a point; tile_rows: a
// scratch slot of the tile. With GLOBAL set it is a control point.
@group(0) @binding(3) var<storage, read> entries: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(5) var<storage, read_write> points: array<f32>;

fn load_points(base: u32, n: u32) -> vec4<f32> {
    var r = vec4<f32>(0.0);
    r.x = points[base];
    if (n > 1u) { r.y = points[base + 1u]; }
    if (n > 2u) { r.z = points[base + 2u]; }
    if (n > 3u) { r.w = points[base + 3u]; }
    return r;
}

fn load_scratch(base: u32, n: u32) -> vec4<f32> {
    var r = vec4<f32>(0.0);
    r.x = scratch[base];
    if (n > 1u) { r.y = scratch[base + 1u]; }
    if (n > 2u) { r.z = scratch[base + 2u]; }
    if (n > 3u) { r.w = scratch[base + 3u]; }
    return r;
}

fn store_points(base: u32, n: u32, v: vec4<f32>) {
    points[base] = v.x;
    if (n > 1u) { points[base + 1u] = v.y; }
    if (n > 2u) { points[base + 2u] = v.z; }
    if (n > 3u) { points[base + 3u] = v.w; }
}

fn store_scratch(base: u32, n: u32, v: vec4<f32>) {
    scratch[base] = v.x;
    if (n > 1u) { scratch[base + 1u] = v.y; }
    if (n > 2u) { scratch[base + 2u] = v.z; }
    if (n > 3u) { scratch[base + 3u] = v.w; }
}

@compute @workgroup_size(256)
fn level_rows(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = (wg.y * nwg.x + wg.x) * WG + lid;
    if (i >= params.b) {
        return;
    }
    let r = params.a + i;
    let first = header[r];
    let end = header[r + 1u];
    let d = params.channels;
    let dst = (params.d + i) * d;
    for (var g = 0u; g < d; g += 4u) {
        let n = min(4u, d - g);
        let anchor = load_points(entries[first].w * d + g, n);
        var acc = vec4<f32>(0.0);
        for (var e = first; e < end; e++) {
            let en = entries[e];
            var x = load_points(en.z * d + g, n) - anchor;
            if ((en.x & GLOBAL) == 0u) {
                x += load_points(en.x * d + g, n);
            }
            acc += bitcast<f32>(en.y) * x;
        }
        store_points(dst + g, n, acc);
    }
}

// The tile's stages, and the op range of the current stage: written by
// the first invocation, read by all through workgroupUniformLoad (so the
// loops around the barriers are uniform). The range is rewritten only
// after the storage barrier that every invocation reaches after reading it.
var<workgroup> tile_stages: vec2<u32>;
var<workgroup> stage_ops: vec2<u32>;

@compute @workgroup_size(256)
fn tile_rows(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let t = wg.y * nwg.x + wg.x;
    if (t >= params.a) {
        return;
    }
    let d = params.channels;
    if (lid == 0u) {
        tile_stages = vec2<u32>(header[3u * t], header[3u * t + 1u]);
    }
    let stages = workgroupUniformLoad(&tile_stages);
    let base = header[3u * t + 2u];
    for (var s = stages.x; s < stages.y; s++) {
        if (lid == 0u) {
            var first = 0u;
            if (s > 0u) {
                first = header[params.b + s - 1u];
            }
            stage_ops = vec2<u32>(first, header[params.b + s]);
        }
        let range = workgroupUniformLoad(&stage_ops);
        for (var o = range.x + lid; o < range.y; o += WG) {
            let op = ops[o];
            let dst = (base + op.z) * d;
            for (var g = 0u; g < d; g += 4u) {
                let n = min(4u, d - g);
                let anchor = load_points(entries[op.x].w * d + g, n);
                var acc = vec4<f32>(0.0);
                for (var e = op.x; e < op.y; e++) {
                    let en = entries[e];
                    var x = load_points(en.z * d + g, n) - anchor;
                    if ((en.x & GLOBAL) == 0u) {
                        x += load_scratch((base + en.x) * d + g, n);
                    }
                    acc += bitcast<f32>(en.y) * x;
                }
                store_scratch(dst + g, n, acc);
                if (op.w != NONE) {
                    store_points(op.w * d + g, n, acc);
                }
            }
        }
        storageBarrier();
    }
}
