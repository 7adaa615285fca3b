use subla_gpu::scan::{scan_exclusive, scan_exclusive_in_place};
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuBuffer, GpuContext, GpuContextOptions, GpuError};

use crate::common::{Rng, Timer, cpu_exclusive_scan};

fn check_sizes(ctx: &GpuContext, sizes: &[usize], seed: u64) {
    let mut rng = Rng::new(seed);
    for &n in sizes {
        let data: Vec<u32> = (0..n).map(|_| rng.below(1000)).collect();
        let input = GpuBuffer::upload(ctx, &data).unwrap();
        let (out, total) = scan_exclusive(ctx, &input).unwrap();
        let (expected, expected_total) = cpu_exclusive_scan(&data);
        assert_eq!(total, expected_total, "total, n = {n}");
        assert_eq!(out.download(ctx).unwrap(), expected, "n = {n}");
        // The input is left alone.
        assert_eq!(input.download(ctx).unwrap(), data, "input, n = {n}");
    }
}

const SIZES: [usize; 7] = [0, 1, 255, 256, 257, 100_000, 300_000];

#[test]
fn scan_matches_cpu_on_all_sizes() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("scan_matches_cpu_on_all_sizes");
    check_sizes(ctx, &SIZES, 1);
    check_sizes(ctx, &[511, 512, 513, 512 * 512, 512 * 512 + 1], 2);
}

#[test]
fn scan_in_place_returns_total() {
    let Some(ctx) = context_or_skip() else { return };
    let data: Vec<u32> = (1..=1000).collect();
    let mut buf = GpuBuffer::upload(ctx, &data).unwrap();
    let total = scan_exclusive_in_place(ctx, &mut buf).unwrap();
    assert_eq!(total, 500_500);
    assert_eq!(buf.download(ctx).unwrap(), cpu_exclusive_scan(&data).0);
}

#[test]
fn scan_split_across_bindings_and_2d_grid() {
    // A binding cap of 8 KiB (2048 elements, four blocks) forces chunked
    // dispatches; 3 workgroups per dimension forces 2-D grids (and 25 for
    // the larger unsplit inputs).
    let options = GpuContextOptions::default().max_binding_bytes(8192).max_workgroups_per_dimension(3);
    let Some(ctx) = context_with_options_or_skip(options) else { return };
    let _t = Timer::start("scan_split_across_bindings_and_2d_grid");
    assert_eq!(ctx.binding_limit(), 8192);
    assert_eq!(ctx.max_workgroups_per_dimension(), 3);
    check_sizes(&ctx, &[1, 2047, 2048, 2049, 100_000, 300_000], 3);
    let grid_only = GpuContextOptions::default().max_workgroups_per_dimension(25);
    let Some(ctx) = context_with_options_or_skip(grid_only) else { return };
    check_sizes(&ctx, &[100_000, 300_000], 4);
}

#[test]
fn scan_overflow_is_an_error() {
    let Some(ctx) = context_or_skip() else { return };
    let mut small = GpuBuffer::upload(ctx, &[u32::MAX, 1]).unwrap();
    assert_eq!(scan_exclusive_in_place(ctx, &mut small), Err(GpuError::Overflow { what: "exclusive scan total" }));
    // Spread over many blocks: each block fits, the grand total does not.
    let mut big = GpuBuffer::upload(ctx, &vec![1u32 << 23; 4096]).unwrap();
    assert!(matches!(scan_exclusive_in_place(ctx, &mut big), Err(GpuError::Overflow { .. })));
    // Exactly u32::MAX is fine.
    let mut edge = GpuBuffer::upload(ctx, &[u32::MAX - 5, 5]).unwrap();
    assert_eq!(scan_exclusive_in_place(ctx, &mut edge), Ok(u32::MAX));
}
