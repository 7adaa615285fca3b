//! Timestamp queries and the copy-bandwidth reference.

use subla_gpu::timing::{PassTimer, copy_bandwidth};

#[test]
fn copy_bandwidth_is_measured() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let b = copy_bandwidth(ctx, (1 << 20) + 7, 3).expect("copy bandwidth");
    assert_eq!(b.bytes, 1 << 20, "rounded down to 16 bytes");
    assert!(b.kernel_wall_seconds > 0.0 && b.copy_wall_seconds > 0.0);
    assert_eq!(b.kernel_seconds.is_some(), ctx.has_timestamps());
    if let Some(s) = b.kernel_seconds {
        assert!(s > 0.0 && s <= b.kernel_wall_seconds, "GPU time {s} within the wall time {}", b.kernel_wall_seconds);
    }
    let rate = b.bytes_per_second();
    assert!(rate.is_finite() && rate > 1e6, "{rate} B/s");
}

#[test]
fn pass_timer_labels_in_order() {
    let Some(ctx) = subla_gpu::testing::context_or_skip() else { return };
    let mut timer = PassTimer::new(ctx, 2).expect("timer");
    assert_eq!(timer.is_supported(), ctx.has_timestamps());
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    let supported = timer.is_supported();
    for label in ["a", "b", "c"] {
        let writes = timer.writes(label);
        // A third pass is over capacity: no writes.
        assert_eq!(writes.is_some(), supported && label != "c");
        drop(
            encoder
                .begin_compute_pass(&subla_gpu::wgpu::ComputePassDescriptor { label: None, timestamp_writes: writes }),
        );
    }
    ctx.queue().submit([encoder.finish()]);
    let times = timer.read(ctx).expect("read");
    if timer.is_supported() {
        let labels: Vec<&str> = times.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["a", "b"]);
        assert!(times.iter().all(|t| t.seconds >= 0.0 && t.seconds < 1.0));
    } else {
        assert!(times.is_empty());
    }
    // Reading starts over.
    assert!(timer.read(ctx).expect("read").is_empty());
}
