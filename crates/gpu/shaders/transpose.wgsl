// CSR -> CSC (equally CSC -> CSR) by a counting sort, in the terms of the
// compressed storage: `majors` slices of indices into `minors`.
//
//   count_minors  counts[idx[e]] += 1 (atomicAdd: a sum, order-independent)
//   (the host scans `counts` into the new pointer array and copies it to
//   `cursor`)
//   place         one invocation per major slice m: each entry (m, k) takes
//                 the next free position of minor slice k (atomicAdd: the
//                 order within a new slice depends on scheduling)
//   sort_slices   one invocation per new slice sorts it by major index,
//                 carrying the values along. Major indices within a new
//                 slice are distinct (no duplicate entries), so the sorted
//                 slice is unique: the result is deterministic and equal to
//                 the CPU's stable counting sort.

struct Params {
    majors: u32,
    minors: u32,
    nnz: u32,
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> major_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> vals: array<f32>;
// count_minors: the counts; place: the cursors.
@group(0) @binding(4) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> out_ptr: array<u32>;
@group(0) @binding(6) var<storage, read_write> out_idx: array<u32>;
@group(0) @binding(7) var<storage, read_write> out_vals: array<f32>;

// Slices up to this length are insertion-sorted, longer ones heap-sorted.
const INSERTION_MAX: u32 = 24u;

fn index(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 256u + lid;
}

@compute @workgroup_size(256)
fn count_minors(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let e = index(wg, nwg, lid);
    if (e < params.nnz) {
        atomicAdd(&counts[idx[e]], 1u);
    }
}

@compute @workgroup_size(256)
fn place(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let m = index(wg, nwg, lid);
    if (m >= params.majors) {
        return;
    }
    for (var e = major_ptr[m]; e < major_ptr[m + 1u]; e = e + 1u) {
        let p = atomicAdd(&counts[idx[e]], 1u);
        out_idx[p] = m;
        out_vals[p] = vals[e];
    }
}

fn swap(a: u32, b: u32) {
    let i = out_idx[a];
    out_idx[a] = out_idx[b];
    out_idx[b] = i;
    let v = out_vals[a];
    out_vals[a] = out_vals[b];
    out_vals[b] = v;
}

// Restores the max-heap below `root` in out_*[lo .. lo + end).
fn sift_down(lo: u32, start: u32, end: u32) {
    var root = start;
    loop {
        let child = 2u * root + 1u;
        if (child >= end) {
            break;
        }
        var top = root;
        if (out_idx[lo + top] < out_idx[lo + child]) {
            top = child;
        }
        if (child + 1u < end && out_idx[lo + top] < out_idx[lo + child + 1u]) {
            top = child + 1u;
        }
        if (top == root) {
            break;
        }
        swap(lo + root, lo + top);
        root = top;
    }
}

@compute @workgroup_size(256)
fn sort_slices(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = index(wg, nwg, lid);
    if (k >= params.minors) {
        return;
    }
    let lo = out_ptr[k];
    let hi = out_ptr[k + 1u];
    let len = hi - lo;
    if (len <= INSERTION_MAX) {
        for (var i = lo + 1u; i < hi; i = i + 1u) {
            let key = out_idx[i];
            let val = out_vals[i];
            var j = i;
            loop {
                if (j <= lo) {
                    break;
                }
                let prev = out_idx[j - 1u];
                if (prev <= key) {
                    break;
                }
                out_idx[j] = prev;
                out_vals[j] = out_vals[j - 1u];
                j = j - 1u;
            }
            out_idx[j] = key;
            out_vals[j] = val;
        }
        return;
    }
    // Heapsort: O(len log len) without recursion or scratch space.
    var start = len / 2u;
    loop {
        if (start == 0u) {
            break;
        }
        start = start - 1u;
        sift_down(lo, start, len);
    }
    var end = len;
    loop {
        if (end <= 1u) {
            break;
        }
        end = end - 1u;
        swap(lo, lo + end);
        sift_down(lo, 0u, end);
    }
}
