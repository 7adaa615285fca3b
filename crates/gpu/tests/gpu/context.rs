use subla_gpu::spmv::MappedSpmv;
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuBuffer, GpuContextOptions, GpuError};

#[test]
fn adapter_and_real_limits() {
    let Some(ctx) = context_or_skip() else { return };
    let info = ctx.adapter_info();
    eprintln!("adapter: {} ({:?}, {:?}, driver {})", info.name, info.backend, info.device_type, info.driver);
    // The device got the adapter's limits, not wgpu's defaults.
    assert!(ctx.limits().max_storage_buffer_binding_size >= wgpu_default_binding());
    assert_eq!(ctx.binding_limit(), ctx.limits().max_storage_buffer_binding_size);
    assert_eq!(ctx.max_workgroups_per_dimension(), ctx.limits().max_compute_workgroups_per_dimension);
}

fn wgpu_default_binding() -> u64 {
    subla_gpu::wgpu::Limits::default().max_storage_buffer_binding_size
}

#[test]
fn buffers_round_trip_and_rewrite() {
    let Some(ctx) = context_or_skip() else { return };
    let data: Vec<u32> = (0..1000).map(|i| i * 7).collect();
    let mut buf = GpuBuffer::upload(ctx, &data).unwrap();
    assert_eq!((buf.len(), buf.is_empty(), buf.byte_len()), (1000, false, 4000));
    assert_eq!(buf.download(ctx).unwrap(), data);
    let other: Vec<u32> = (0..1000).rev().collect();
    buf.write(ctx, &other).unwrap();
    assert_eq!(buf.download(ctx).unwrap(), other);
    assert_eq!(buf.duplicate(ctx).unwrap().download(ctx).unwrap(), other);
    // Element sizes that are not a multiple of 4 bytes are padded.
    let bytes: Vec<u8> = (0..7).collect();
    let mut small = GpuBuffer::upload(ctx, &bytes).unwrap();
    assert_eq!(small.download(ctx).unwrap(), bytes);
    small.write(ctx, &[9; 7]).unwrap();
    assert_eq!(small.download(ctx).unwrap(), vec![9; 7]);
    let empty = GpuBuffer::<f32>::upload(ctx, &[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.download(ctx).unwrap(), Vec::<f32>::new());
    assert_eq!(GpuBuffer::<f32>::zeroed(ctx, 3).unwrap().download(ctx).unwrap(), vec![0.0; 3]);
}

/// `download_into` fills a caller's slice; a buffer larger than one
/// staging chunk (64 MiB) comes back in pieces, its unpadded tail too.
#[test]
fn downloads_into_a_slice_in_chunks() {
    let Some(ctx) = context_or_skip() else { return };
    let data: Vec<u16> = (0..1001u16).collect();
    let buf = GpuBuffer::upload(ctx, &data).unwrap();
    let mut out = vec![0u16; 1001];
    buf.download_into(ctx, &mut out).unwrap();
    assert_eq!(out, data);
    let n = (64 << 20) + 4099;
    let big: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let buf = GpuBuffer::upload(ctx, &big).unwrap();
    let mut out = vec![0u8; n];
    buf.download_into(ctx, &mut out).unwrap();
    assert!(out == big, "a readback over one chunk differs");
    assert!(buf.download(ctx).unwrap() == big);
}

#[test]
#[should_panic(expected = "out has 2 elements, the buffer 3")]
fn download_into_a_slice_of_another_length_panics() {
    let Some(ctx) = context_or_skip() else { panic!("out has 2 elements, the buffer 3") };
    let buf = GpuBuffer::upload(ctx, &[1u32, 2, 3]).unwrap();
    let _ = buf.download_into(ctx, &mut [0u32; 2]);
}

#[test]
#[should_panic(expected = "data has 2 elements but the buffer holds 3")]
fn buffer_write_of_another_length_panics() {
    let Some(ctx) = context_or_skip() else { panic!("data has 2 elements but the buffer holds 3 (skipped)") };
    let mut buf = GpuBuffer::upload(ctx, &[1u32, 2, 3]).unwrap();
    let _ = buf.write(ctx, &[1, 2]);
}

#[test]
fn buffer_over_max_buffer_size_is_too_large() {
    let Some(ctx) = context_or_skip() else { return };
    let max = ctx.limits().max_buffer_size;
    // Nothing is allocated: the check comes first.
    let len = usize::try_from(max / 4 + 1).unwrap();
    match GpuBuffer::<u32>::zeroed(ctx, len) {
        Err(GpuError::TooLarge { limit, limit_value, bytes, .. }) => {
            assert_eq!((limit, limit_value), ("max_buffer_size", max));
            assert!(bytes > max);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(matches!(GpuBuffer::<u64>::zeroed(ctx, usize::MAX), Err(GpuError::TooLarge { .. })));
    // The context is still usable.
    assert_eq!(GpuBuffer::upload(ctx, &[4u32]).unwrap().download(ctx).unwrap(), vec![4]);
}

#[test]
fn pipeline_cache_returns_the_same_pipeline_for_the_same_key() {
    // A fresh context: other tests share the default one concurrently.
    let Some(ctx) = context_with_options_or_skip(GpuContextOptions::default()) else { return };
    assert_eq!(ctx.pipeline_count(), 0);
    let a = MappedSpmv::new(&ctx, "return value + 1.0;").unwrap();
    let b = MappedSpmv::new(&ctx, "return value + 1.0;").unwrap();
    assert!(a.shares_pipeline_with(&b));
    assert_eq!(ctx.pipeline_count(), 1);
    let c = MappedSpmv::new(&ctx, "return value - 1.0;").unwrap();
    assert!(!a.shares_pipeline_with(&c));
    assert_eq!(ctx.pipeline_count(), 2);
    // A failed snippet adds nothing.
    assert!(MappedSpmv::new(&ctx, "return value +;").is_err());
    assert_eq!(ctx.pipeline_count(), 2);
}

#[test]
fn adapter_filter_without_match_lists_adapters_seen() {
    let options = GpuContextOptions::default().adapter_name("no such adapter, surely");
    match subla_gpu::GpuContext::with_options(options) {
        Err(GpuError::NoAdapter { request, seen }) => {
            assert!(request.contains("no such adapter, surely"), "{request}");
            // Where an adapter exists, it is listed.
            if context_or_skip().is_some() {
                assert!(!seen.is_empty());
            }
        }
        other => panic!("expected NoAdapter, got {other:?}"),
    }
}

#[test]
fn lost_device_is_an_error_not_a_panic() {
    let Some(ctx) = context_with_options_or_skip(GpuContextOptions::default()) else { return };
    let buf = GpuBuffer::upload(&ctx, &[1u32, 2, 3]).unwrap();
    ctx.device().destroy();
    assert!(matches!(buf.download(&ctx), Err(GpuError::DeviceLost { .. })));
    assert!(matches!(GpuBuffer::upload(&ctx, &[1u32]), Err(GpuError::DeviceLost { .. })));
}

#[test]
#[should_panic(expected = "used with another GpuContext")]
fn buffers_of_another_context_panic_with_a_message() {
    // wgpu cannot use a resource across instances (it would panic deep in
    // wgpu-core); the crate names the mistake instead.
    let Some(ctx) = context_or_skip() else { panic!("used with another GpuContext (skipped)") };
    let Some(other) = context_with_options_or_skip(GpuContextOptions::default()) else {
        panic!("used with another GpuContext (skipped)")
    };
    let mut foreign = GpuBuffer::upload(&other, &[1u32, 2, 3]).unwrap();
    let _ = subla_gpu::scan::scan_exclusive_in_place(ctx, &mut foreign);
}
