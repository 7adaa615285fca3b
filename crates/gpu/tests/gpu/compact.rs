use subla_algebra::Par;
use subla_gpu::compact::compact;
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuBuffer, GpuContext, GpuContextOptions, GpuError};

use crate::common::{Rng, Timer};

fn check(ctx: &GpuContext, flags: &[u32]) {
    let cpu = subla_algebra::scan::compact(flags.len(), |i| flags[i] != 0, Par::Seq).unwrap();
    let buf = GpuBuffer::upload(ctx, flags).unwrap();
    let (out, count) = compact(ctx, &buf).unwrap();
    assert_eq!(count as usize, cpu.len(), "count, n = {}", flags.len());
    assert_eq!(out.len(), cpu.len());
    assert_eq!(out.download(ctx).unwrap(), cpu, "n = {}", flags.len());
}

#[test]
fn compact_matches_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("compact_matches_cpu");
    let mut rng = Rng::new(10);
    check(ctx, &[]);
    check(ctx, &[0; 1000]);
    check(ctx, &[5; 1000]);
    check(ctx, &[0, 7, 0, 0, 1, 1, 0, 3]);
    for n in [1, 255, 256, 257, 100_000] {
        let flags: Vec<u32> = (0..n).map(|_| if rng.below(3) == 0 { rng.below(50) + 1 } else { 0 }).collect();
        check(ctx, &flags);
    }
}

#[test]
fn compact_split_across_bindings_and_2d_grid() {
    let options = GpuContextOptions::default().max_binding_bytes(8192).max_workgroups_per_dimension(3);
    let Some(ctx) = context_with_options_or_skip(options) else { return };
    let _t = Timer::start("compact_split_across_bindings_and_2d_grid");
    let mut rng = Rng::new(11);
    // About 1% flagged: the output (bound whole) stays under the cap.
    let flags: Vec<u32> = (0..100_000).map(|_| u32::from(rng.below(100) == 0)).collect();
    check(&ctx, &flags);
    // An output over the cap is refused, naming the limit.
    let all = GpuBuffer::upload(&ctx, &vec![1u32; 4096]).unwrap();
    match compact(&ctx, &all) {
        Err(GpuError::TooLarge { limit, limit_value, bytes, .. }) => {
            assert_eq!((limit, limit_value, bytes), ("max_storage_buffer_binding_size", 8192, 4096 * 4));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}
