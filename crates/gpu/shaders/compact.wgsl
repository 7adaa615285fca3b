// Stream compaction: the indices i with flags[i] != 0, in increasing order.
//
//   mark     marks[i] = flags[i] != 0 ? 1 : 0
//   (the host scans `marks` in place: marks[i] = output position of i)
//   scatter  out[marks[i]] = base + i for every flagged i
// Each output element is written by exactly one invocation (the one of its
// index), so the result is deterministic. A binding may hold a chunk of the
// input starting at element `base`; `out` is always bound whole.

struct Params {
    // Elements in this chunk.
    n: u32,
    // Global index of the chunk's first element.
    base: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> flags: array<u32>;
@group(0) @binding(2) var<storage, read_write> marks: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

fn index(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

@compute @workgroup_size(256)
fn mark(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = index(wg, nwg, lid);
    if (i < params.n) {
        marks[i] = select(0u, 1u, flags[i] != 0u);
    }
}

@compute @workgroup_size(256)
fn scatter(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = index(wg, nwg, lid);
    if (i < params.n && flags[i] != 0u) {
        out[marks[i]] = params.base + i;
    }
}
