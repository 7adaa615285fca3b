// Device-to-device copy of `count` vec4<f32> (16 bytes each), one element
// per invocation: the reference bandwidth the compute kernels' achieved
// bandwidth is reported against (`subla_gpu::timing`). The flat workgroup
// index is wg.y * num_workgroups.x + wg.x (2-D grids past 65 535 groups).

struct Params {
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn copy_vec4(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = (wg.y * nwg.x + wg.x) * 256u + lid;
    if (i < params.count) {
        dst[i] = src[i];
    }
}
