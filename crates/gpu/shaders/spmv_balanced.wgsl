// Load-balanced CSR SpMV (Mlakar et al. 2020, §6.3): y = A x for a CSR
// matrix A (nrows x ncols) and multi-channel data, x ncols x d and y
// nrows x d, both row-major f32.
//
// Work is split by nonzeros, not by rows: invocation i of the flat grid
// (workgroup w = wg.y * nwg.x + wg.x, lane t) owns the CHUNK consecutive
// nonzeros [i * CHUNK, (i + 1) * CHUNK), whatever rows they belong to, so a
// row of thousands of entries and a thousand rows of one entry cost the
// same. A workgroup owns TILE = WG * CHUNK consecutive nonzeros.
// chunk_row[i] is the row holding nonzero i * CHUNK (precomputed on the
// host by binary search in row_ptr, or by `chunk_rows` below).
//
// Entry points:
//   chunk_rows       one invocation per row: chunk_row[c] = row for every
//                    chunk c whose first nonzero lies in the row;
//   spmv_balanced    pass 1: partial sums, segmented reduction in
//                    workgroup memory, one carry per workgroup;
//   spmv_fixup       pass 2: one invocation per workgroup boundary adds the
//                    carries of the rows that cross it.
//
// Rows. An invocation walks its nonzeros, advancing `cur` past every row
// that ends (including empty rows) and "closing" it. Invocation i closes
// exactly the rows [chunk_row[i], chunk_row[i + 1]) (the last one closes
// every remaining row), invocation 0 also writes the leading empty rows, so
// every row, empty ones included (they get 0), is written by exactly one
// invocation of pass 1. Rows closed after the invocation's first close
// started inside it and are written at once. The first close (the "head",
// row chunk_row[i]) may have begun in earlier invocations; the open segment
// at the end (the "tail") continues into the next one.
//
// Summation order, fixed (results are bitwise identical on every run):
//   1. within an invocation, sequentially from +0 in stored order:
//      p = ((0 + a_k x_k) + a_{k+1} x_{k+1}) + ...;
//   2. within a workgroup, the tails are combined by a Hillis-Steele
//      segmented inclusive scan keyed by row (offsets 1, 2, ..., 128;
//      S_t = S_{t-o} + S_t when lane t-o has the same tail row), and the
//      head of lane t is written as S_{t-1} + head_t;
//   3. across workgroups, workgroup w stores carry[w] = S_{WG-1}, the part
//      of the row crossing its end that lies inside it; pass 2 updates such
//      a row to (((carry[w0] + carry[w0+1]) + ...) + carry[w1-1]) + y,
//      where w0 .. w1 are the workgroups the row spans.
// Each pass writes every element of y at most once; no float atomics.
//
// Channels are done four at a time (vec4 accumulators, masked beyond d):
// one group for d <= 4, more groups looping over the same nonzeros.
//
// No early return before a barrier: surplus workgroups of a 2-D grid and
// lanes past the last nonzero take part in the barriers with guarded loads
// and stores.

const WG: u32 = 256u;
// Nonzeros per invocation (the host's NNZ_PER_INVOCATION).
const CHUNK: u32 = 8u;
// Nonzeros per workgroup (the host's NNZ_PER_WORKGROUP).
const TILE: u32 = 2048u;
const NO_ROW: u32 = 0xffffffffu;

struct Params {
    nrows: u32,
    // Channels d.
    channels: u32,
    nnz: u32,
    // Workgroups with nonzeros: ceil(nnz / TILE).
    tiles: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> vals: array<f32>;
@group(0) @binding(4) var<storage, read> chunk_row: array<u32>;
@group(0) @binding(5) var<storage, read> x: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(7) var<storage, read_write> carry: array<f32>;
@group(0) @binding(8) var<storage, read_write> chunk_row_out: array<u32>;

var<workgroup> keys: array<u32, WG>;
var<workgroup> sums: array<vec4<f32>, WG>;

// x(col, c0 .. c0 + n), n in 1..=4, zeros beyond.
fn load_x(col: u32, c0: u32, n: u32) -> vec4<f32> {
    let base = col * params.channels + c0;
    var v = vec4<f32>(x[base], 0.0, 0.0, 0.0);
    if (n > 1u) {
        v.y = x[base + 1u];
    }
    if (n > 2u) {
        v.z = x[base + 2u];
    }
    if (n > 3u) {
        v.w = x[base + 3u];
    }
    return v;
}

// y(row, c0 .. c0 + n) = v.
fn store_y(row: u32, c0: u32, n: u32, v: vec4<f32>) {
    let base = row * params.channels + c0;
    y[base] = v.x;
    if (n > 1u) {
        y[base + 1u] = v.y;
    }
    if (n > 2u) {
        y[base + 2u] = v.z;
    }
    if (n > 3u) {
        y[base + 3u] = v.w;
    }
}

@compute @workgroup_size(256)
fn chunk_rows(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let row = (wg.y * nwg.x + wg.x) * WG + lid;
    if (row >= params.nrows) {
        return;
    }
    let start = row_ptr[row];
    let end = row_ptr[row + 1u];
    // Chunks whose first nonzero c * CHUNK lies in [start, end).
    for (var c = (start + CHUNK - 1u) / CHUNK; c * CHUNK < end; c = c + 1u) {
        chunk_row_out[c] = row;
    }
}

@compute @workgroup_size(256)
fn spmv_balanced(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let tile = wg.y * nwg.x + wg.x;
    let live = tile < params.tiles;
    let d = params.channels;
    let nnz = params.nnz;
    let nrows = params.nrows;
    // The host checks tiles * TILE < 2^32: no wrap-around for live tiles.
    let chunk = tile * WG + lid;
    let s = chunk * CHUNK;
    let working = live && s < nnz;
    let e = min(s + CHUNK, nnz);
    var r0 = 0u;
    if (working) {
        r0 = chunk_row[chunk];
        // Leading empty rows (row_ptr[r + 1] == 0).
        if (chunk == 0u) {
            for (var r = 0u; r < r0; r = r + 1u) {
                for (var c = 0u; c < d; c = c + 1u) {
                    y[r * d + c] = 0.0;
                }
            }
        }
    }
    let groups = (d + 3u) / 4u;
    for (var g = 0u; g < groups; g = g + 1u) {
        let c0 = g * 4u;
        let n = min(4u, d - c0);
        var acc = vec4<f32>(0.0);
        var head = vec4<f32>(0.0);
        var has_head = false;
        var cur = r0;
        var key = NO_ROW;
        if (working) {
            var next = row_ptr[cur + 1u];
            for (var k = s; k < e; k = k + 1u) {
                // next <= k < nnz: cur + 1 < nrows, so cur + 2 <= nrows.
                while (next <= k) {
                    if (has_head) {
                        store_y(cur, c0, n, acc);
                    } else {
                        head = acc;
                        has_head = true;
                    }
                    acc = vec4<f32>(0.0);
                    cur = cur + 1u;
                    next = row_ptr[cur + 1u];
                }
                acc = acc + vals[k] * load_x(idx[k], c0, n);
            }
            // Rows ending at e, and empty rows starting there; the last
            // invocation (e == nnz) closes every remaining row.
            while (cur < nrows && next <= e) {
                if (has_head) {
                    store_y(cur, c0, n, acc);
                } else {
                    head = acc;
                    has_head = true;
                }
                acc = vec4<f32>(0.0);
                cur = cur + 1u;
                if (cur < nrows) {
                    next = row_ptr[cur + 1u];
                }
            }
            // The tail row: chunk_row of the next invocation (nrows when
            // every row is closed). Keys never decrease along the lanes.
            key = cur;
        }
        keys[lid] = key;
        sums[lid] = acc;
        workgroupBarrier();
        // Segmented inclusive scan of the tails, keyed by row. Rows are
        // contiguous runs of lanes, so equal keys at distance o mean the
        // whole stretch between belongs to the row.
        var run = acc;
        for (var o = 1u; o < WG; o = o << 1u) {
            if (lid >= o) {
                if (keys[lid - o] == key) {
                    run = sums[lid - o] + run;
                }
            }
            workgroupBarrier();
            sums[lid] = run;
            workgroupBarrier();
        }
        if (working && has_head) {
            // Lane t - 1's tail row is this lane's first row (r0).
            var total = head;
            if (lid > 0u) {
                if (keys[lid - 1u] == r0) {
                    total = sums[lid - 1u] + head;
                }
            }
            store_y(r0, c0, n, total);
        }
        if (live && lid == WG - 1u && tile + 1u < params.tiles) {
            let base = tile * d + c0;
            carry[base] = run.x;
            if (n > 1u) {
                carry[base + 1u] = run.y;
            }
            if (n > 2u) {
                carry[base + 2u] = run.z;
            }
            if (n > 3u) {
                carry[base + 3u] = run.w;
            }
        }
        // The next group overwrites keys and sums.
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn spmv_fixup(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // Boundary w sits between workgroups w - 1 and w, at nonzero w * TILE.
    let w = (wg.y * nwg.x + wg.x) * WG + lid + 1u;
    if (w >= params.tiles) {
        return;
    }
    let b = w * TILE;
    let row = chunk_row[b / CHUNK];
    let start = row_ptr[row];
    // Only rows crossing the boundary, each handled at the first boundary
    // it crosses (it starts in workgroup w - 1).
    if (start >= b || start + TILE < b) {
        return;
    }
    let end = row_ptr[row + 1u];
    let d = params.channels;
    for (var c = 0u; c < d; c = c + 1u) {
        var total = carry[(w - 1u) * d + c];
        // Further boundaries inside the row: w2 * TILE < end <= nnz, so
        // w2 < tiles.
        for (var w2 = w + 1u; w2 * TILE < end; w2 = w2 + 1u) {
            total = total + carry[(w2 - 1u) * d + c];
        }
        y[row * d + c] = total + y[row * d + c];
    }
}
