// Exclusive prefix sum of u32, one level of a multi-level scan.
//
// Blocks of 512 elements (256 invocations, two elements each):
//   scan_blocks  scans each block in place from zero and writes the block
//                total to sums[block_base + block];
//   (the host scans `sums` recursively, in place)
//   add_offsets  adds each block's scanned offset back.
// Every element is written by exactly one invocation: the result does not
// depend on scheduling. Any u32 wrap-around sets status[0] (an atomicOr, so
// its order does not matter).
//
// Grids may be 2-D (more than 65 535 blocks): block = wg.y * nwg.x + wg.x,
// surplus workgroups do nothing. No early return before a barrier: the
// block index is uniform, but loads and stores are guarded instead.

const WG: u32 = 256u;
const BLOCK: u32 = 512u;

struct Params {
    // Elements in `data` (this binding).
    n: u32,
    // Index in `sums` of this binding's first block.
    block_base: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

var<workgroup> tile: array<u32, WG>;

@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let block = wg.y * nwg.x + wg.x;
    let first = block * BLOCK;
    let i0 = first + 2u * lid;
    var a = 0u;
    var b = 0u;
    if (i0 < params.n) {
        a = data[i0];
    }
    if (i0 + 1u < params.n) {
        b = data[i0 + 1u];
    }
    var wrapped = false;
    let pair = a + b;
    if (pair < a) {
        wrapped = true;
    }
    tile[lid] = pair;
    workgroupBarrier();
    // Hillis-Steele inclusive scan of the pair sums.
    for (var offset = 1u; offset < WG; offset = offset << 1u) {
        var t = tile[lid];
        if (lid >= offset) {
            let s = t + tile[lid - offset];
            if (s < t) {
                wrapped = true;
            }
            t = s;
        }
        workgroupBarrier();
        tile[lid] = t;
        workgroupBarrier();
    }
    var before = 0u;
    if (lid > 0u) {
        before = tile[lid - 1u];
    }
    if (i0 < params.n) {
        data[i0] = before;
    }
    if (i0 + 1u < params.n) {
        data[i0 + 1u] = before + a;
    }
    if (lid == WG - 1u && first < params.n) {
        sums[params.block_base + block] = tile[lid];
    }
    if (wrapped) {
        atomicOr(&status[0], 1u);
    }
}

@compute @workgroup_size(256)
fn add_offsets(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let block = wg.y * nwg.x + wg.x;
    let first = block * BLOCK;
    if (first >= params.n) {
        return;
    }
    // The offsets are a scan of block totals: if the grand total fits in
    // u32 (checked at the last level), none of these sums wraps.
    let offset = sums[params.block_base + block];
    for (var k = 0u; k < 2u; k = k + 1u) {
        let i = first + k * WG + lid;
        if (i < params.n) {
            data[i] = data[i] + offset;
        }
    }
}
