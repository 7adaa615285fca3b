//! Output-size prediction and the memory budget of the tool.
//!
//! The budget is 80 % of the smallest of: the memory available now
//! (`MemAvailable`), the address space left under `RLIMIT_AS` (`ulimit
//! -v`, less what the process maps already), the data segment left under
//! `RLIMIT_DATA`, and the cgroup's memory limit less its usage (v2
//! `memory.max` − `memory.current`, v1 `memory.limit_in_bytes` −
//! `memory.usage_in_bytes`). Messages name the limit that bound it.

/// Bytes per output face the whole `subla subdivide` process was measured
/// to need (topology, data in `f64`, the OBJ writer), with margin.
const BYTES_PER_FACE: u64 = 480;

/// Predicted peak bytes of subdividing to `faces` output faces with
/// `channels` values per vertex: `BYTES_PER_FACE` holds three; each further
/// channel costs 8 bytes per vertex in the refined data and again in the
/// level before it (with no more vertices than faces plus a margin, counted
/// as two per face).
pub(crate) fn predicted_bytes(faces: u128, channels: usize) -> u128 {
    let extra = (channels.saturating_sub(3) as u128).saturating_mul(2 * 2 * 8);
    faces.saturating_mul(u128::from(BYTES_PER_FACE).saturating_add(extra))
}

/// The budget and what bound it. Without `max_memory` (`--max-memory`):
/// 80 % of the smallest limit in force, or 8 GiB where none can be read.
/// With it: `max_memory`, but never more than a hard limit (ulimit,
/// cgroup), which would kill the process rather than refuse.
pub(crate) fn budget(max_memory: Option<u64>) -> (u64, String) {
    let limits = limits();
    match max_memory {
        Some(b) => match limits.iter().filter(|l| l.2).min_by_key(|l| l.0) {
            Some(&(hard, what, _)) if hard < b => (hard, what.to_owned()),
            _ => (b, "--max-memory".to_owned()),
        },
        None => match limits.iter().min_by_key(|l| l.0) {
            Some(&(b, what, _)) => (b / 5 * 4, format!("80% of {what}")),
            None => (8 << 30, "8 GiB".to_owned()),
        },
    }
}

/// What a refusal under the budget `what` (from [`budget`]) tells the user
/// to do: `--max-memory` cannot lift a ulimit or a cgroup's limit.
pub(crate) fn advice(what: &str) -> &'static str {
    if what.contains("RLIMIT") || what.contains("cgroup") {
        "ask for fewer levels, or raise that limit"
    } else {
        "raise it with --max-memory or ask for fewer levels"
    }
}

/// The limits in force: bytes, name, and whether exceeding it kills the
/// process (ulimit, cgroup) rather than slowing it (available memory).
fn limits() -> Vec<(u64, &'static str, bool)> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mut limits = Vec::new();
    if let Some(b) = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| meminfo_available(&s)) {
        limits.push((b, "the available memory", false));
    }
    if let Some(limit) = rlimit(libc::RLIMIT_AS) {
        let used = status_kib(&status, "VmSize:").unwrap_or(0);
        limits.push((limit.saturating_sub(used), "the address space left under RLIMIT_AS (ulimit -v)", true));
    }
    if let Some(limit) = rlimit(libc::RLIMIT_DATA) {
        let used = status_kib(&status, "VmData:").unwrap_or(0);
        limits.push((limit.saturating_sub(used), "the data segment left under RLIMIT_DATA (ulimit -d)", true));
    }
    if let Some(b) = cgroup_left() {
        limits.push((b, "the cgroup's memory limit left", true));
    }
    limits
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    status_kib(meminfo, "MemAvailable:")
}

/// A `Key:   123 kB` line of `/proc/meminfo` or `/proc/self/status`, in
/// bytes.
fn status_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// The soft limit of `resource`, or `None` when unlimited.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `r` is a valid out-pointer for getrlimit.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(r.rlim_cur)
}

/// The memory left under this process's cgroup limit (v2, else v1).
fn cgroup_left() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |p: String| std::fs::read_to_string(p).ok();
    let (v2, v1) = cgroup_paths(&cgroup);
    if let Some(path) = v2 {
        let dir = format!("/sys/fs/cgroup{path}");
        if let Some(max) = read(format!("{dir}/memory.max")).and_then(|s| cgroup_bytes(&s)) {
            let used = read(format!("{dir}/memory.current")).and_then(|s| cgroup_bytes(&s)).unwrap_or(0);
            return Some(max.saturating_sub(used));
        }
    }
    if let Some(path) = v1 {
        let dir = format!("/sys/fs/cgroup/memory{path}");
        if let Some(max) = read(format!("{dir}/memory.limit_in_bytes")).and_then(|s| cgroup_bytes(&s)) {
            // v1 says "no limit" with a huge number, not `max`.
            if max < 1 << 60 {
                let used = read(format!("{dir}/memory.usage_in_bytes")).and_then(|s| cgroup_bytes(&s)).unwrap_or(0);
                return Some(max.saturating_sub(used));
            }
        }
    }
    None
}

/// The cgroup v2 path (`0::/path`) and the v1 memory controller's path
/// (`N:memory:/path` or `N:cpu,memory:/path`) of `/proc/self/cgroup`.
fn cgroup_paths(text: &str) -> (Option<String>, Option<String>) {
    let (mut v2, mut v1) = (None, None);
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if controllers.is_empty() {
            v2 = Some(path.trim().to_owned());
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path.trim().to_owned());
        }
    }
    (v2, v1)
}

/// A cgroup memory file's number; `None` for `max` (no limit) or garbage.
fn cgroup_bytes(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// A count for people: as is up to a trillion, then `1.2e15`, and
/// `1e38 or more` where the prediction saturated.
pub(crate) fn count(n: u128) -> String {
    match n {
        u128::MAX => "1e38 or more".to_owned(),
        n if n >= 1_000_000_000_000 => format!("{:.1e}", n as f64),
        n => n.to_string(),
    }
}

/// `bytes` for people: `1.5 GiB`, `320 MiB`, `2.0 TiB`, `3.4e21 bytes`.
pub(crate) fn human(bytes: u128) -> String {
    let b = bytes as f64;
    if bytes == u128::MAX {
        "1e38 bytes or more".to_owned()
    } else if b >= (1u64 << 50) as f64 {
        format!("{b:.1e} bytes")
    } else if b >= (1u64 << 40) as f64 {
        format!("{:.1} TiB", b / (1u64 << 40) as f64)
    } else if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        let meminfo = "MemTotal:       16318480 kB\nMemFree:          123 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(8_000_000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
        let status = "Name:\tsubla\nVmPeak:\t  300000 kB\nVmSize:\t  262144 kB\nVmData:\t 1024 kB\n";
        assert_eq!(status_kib(status, "VmSize:"), Some(262_144 * 1024));
        assert_eq!(status_kib(status, "VmData:"), Some(1024 * 1024));
        assert_eq!(status_kib(status, "VmHWM:"), None);
    }

    #[test]
    fn cgroup_files_parse() {
        assert_eq!(
            cgroup_paths("0::/user.slice/session-2.scope\n"),
            (Some("/user.slice/session-2.scope".into()), None)
        );
        let v1 = "12:pids:/docker/ab\n4:cpu,memory:/docker/ab\n1:name=systemd:/docker/ab\n";
        assert_eq!(cgroup_paths(v1), (None, Some("/docker/ab".into())));
        assert_eq!(cgroup_bytes("max\n"), None);
        assert_eq!(cgroup_bytes("2147483648\n"), Some(2 << 30));
        assert_eq!(cgroup_bytes(""), None);
    }
}
