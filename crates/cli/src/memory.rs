//! Output-size prediction and the memory budget of `subla subdivide`.

/// Bytes per output face the whole `subla subdivide` process was measured
/// to need (topology, data in `f64`, the OBJ writer), with margin.
const BYTES_PER_FACE: u64 = 480;

/// Predicted peak bytes of subdividing to `faces` output faces.
pub(crate) fn predicted_bytes(faces: u128) -> u128 {
    faces.saturating_mul(u128::from(BYTES_PER_FACE))
}

/// The default budget: 80 % of the memory available now (Linux
/// `MemAvailable`), or 8 GiB where that cannot be read.
pub(crate) fn default_budget() -> (u64, &'static str) {
    match available_bytes() {
        Some(b) => (b / 5 * 4, "80% of the available memory"),
        None => (8 << 30, "8 GiB"),
    }
}

fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `bytes` for people: `1.5 GiB`, `320 MiB`.
pub(crate) fn human(bytes: u128) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    }
}
