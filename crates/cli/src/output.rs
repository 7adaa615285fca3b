//! Safe output files: every file the tool writes goes to a temporary file
//! in the same folder and is renamed into place only when it is complete,
//! so the previous file survives any failure and concurrent runs never
//! interleave (the last rename wins, with a whole file). Outputs are
//! checked before any work: none may be an input or another output of the
//! same run.
//!
//! On SIGINT or SIGTERM the temporary files still open are removed and the
//! tool exits with 128 + the signal's number (130 for Ctrl-C).
//!
//! An output that exists and is not a regular file (a device such as
//! `/dev/null`, a FIFO) is written directly: it cannot be replaced by a
//! rename, and it holds no data to lose.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The temporary files being written now, removed on a signal.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// `path` as messages show it: control characters escaped (`\n`, `\u{1b}`),
/// so that a file name cannot break a message into lines or drive the
/// terminal.
pub(crate) fn shown(path: &Path) -> String {
    escape(&path.display().to_string())
}

/// `message` about `path`, naming the path once.
pub(crate) fn at(path: &Path, message: &str) -> String {
    let name = shown(path);
    if message.starts_with(&name) { message.to_owned() } else { format!("{name}: {message}") }
}

/// `s` with its control characters escaped.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// An error message on one line: nested errors' line breaks become `; `,
/// other control characters are escaped.
pub(crate) fn one_line(message: &str) -> String {
    let joined: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    escape(&joined.join("; "))
}

/// Blocks SIGINT and SIGTERM in every thread (call first, before any
/// thread starts) and handles them on a thread of their own: remove the
/// temporary files, exit with 128 + the signal.
pub(crate) fn handle_signals() {
    // SAFETY: plain libc calls on a local, zero-initialised signal set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is a valid signal set, `sig` a valid out-pointer.
        while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
        // Held until the process is gone: no temporary file can be
        // started after the removal.
        let live = match LIVE.lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        };
        for p in live.iter() {
            let _ = std::fs::remove_file(p);
        }
        std::process::exit(128 + sig);
    });
    if spawned.is_err() {
        // No handler thread: let the signals act as they would.
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    }
}

/// Who a file is: its device and inode when it exists, else its folder's
/// canonical path and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Name(PathBuf, OsString),
    /// A device, FIFO or socket: writing it loses nothing.
    Special,
    Unknown,
}

fn identity(path: &Path) -> Identity {
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() && !m.is_dir() {
            return Identity::Special;
        }
        return Identity::Inode(m.dev(), m.ino());
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => Identity::Name(dir, name.to_owned()),
        _ => Identity::Unknown,
    }
}

/// `out` as given, or `out/default` when `out` names a folder: one that
/// exists, or a path ending in `/` (which would otherwise become a file
/// named like the folder).
pub(crate) fn in_folder(out: &Path, default: &str) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    if out.is_dir() || out.as_os_str().as_bytes().ends_with(b"/") { out.join(default) } else { out.to_path_buf() }
}

/// Refuses, before any work, outputs that are an input or another output
/// of the same run (the same file by canonical path or by device and
/// inode, so links are caught), and outputs whose folder is a file.
/// `outputs` are `(option, path)`: the option names the path in the
/// message.
pub(crate) fn check_outputs(inputs: &[&Path], outputs: &[(&str, &Path)]) -> Result<(), String> {
    for (i, &(what, out)) in outputs.iter().enumerate() {
        check_folder(out, what)?;
        if out.is_dir() {
            return Err(format!("{what} {}: is a folder; name a file", shown(out)));
        }
        let id = identity(out);
        if matches!(id, Identity::Special | Identity::Unknown) {
            continue;
        }
        for input in inputs {
            if identity(input) == id {
                return Err(format!(
                    "{what} {} is the input {}: writing it would destroy the input (name another output file)",
                    shown(out),
                    shown(input)
                ));
            }
        }
        for &(other_what, other) in &outputs[..i] {
            if identity(other) == id {
                return Err(format!(
                    "{what} {} is the same file as {other_what} {}: one would overwrite the other (name two files)",
                    shown(out),
                    shown(other)
                ));
            }
        }
    }
    Ok(())
}

/// Refuses an output whose folder (or a folder above it) exists as a file.
fn check_folder(out: &Path, what: &str) -> Result<(), String> {
    for dir in out.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(format!(
                    "{what} {}: {} is a file, not a folder (remove it, or choose another folder)",
                    shown(out),
                    shown(dir)
                ));
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Creates `dir` and the folders above it, saying which path is in the
/// way when one is a file.
pub(crate) fn create_folder(dir: &Path) -> Result<(), String> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    check_folder(&dir.join("x"), "output")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", shown(dir)))
}

/// Writes `path` with `write` safely (see the module docs): a temporary
/// file beside it, flushed and synced, renamed over it on success and
/// removed on failure. Creates the folder when missing.
pub(crate) fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), String> {
    let fail = |e: io::Error| format!("{}: {e}", shown(path));
    // Where the file really is: a symbolic link stays a link to the new
    // file.
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let existing = std::fs::metadata(&target).ok();
    if let Some(m) = &existing {
        let t = m.file_type();
        if t.is_dir() {
            return Err(format!("{}: is a folder; name a file", shown(path)));
        }
        if t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket() {
            let mut w = BufWriter::new(OpenOptions::new().write(true).open(&target).map_err(fail)?);
            write(&mut w).and_then(|()| w.flush()).map_err(fail)?;
            return Ok(());
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_folder(&dir)?;
    let (tmp, file) = temporary(&dir, &target).map_err(|e| format!("{}: {e}", shown(&dir)))?;
    let result = (|| {
        if let Some(m) = &existing {
            file.set_permissions(m.permissions())?;
        }
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    forget(&tmp);
    result.map_err(fail)
}

/// A new temporary file in `dir` for `target`, registered for removal on
/// a signal.
fn temporary(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        // Registered before it exists, so that a signal between the two
        // cannot leave it behind.
        live(|l| l.push(tmp.clone()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) => {
                forget(&tmp);
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
        }
    }
}

fn live(f: impl FnOnce(&mut Vec<PathBuf>)) {
    let mut l = match LIVE.lock() {
        Ok(l) => l,
        Err(poisoned) => poisoned.into_inner(),
    };
    f(&mut l);
}

fn forget(tmp: &Path) {
    live(|l| l.retain(|p| p != tmp));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_escaped() {
        assert_eq!(one_line("a\n  caused by: b\n"), "a; caused by: b");
        assert_eq!(shown(Path::new("x\u{1b}[2Jy\n.obj")), "x\\u{1b}[2Jy\\n.obj");
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("subla-output-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.txt");
        write_file(&p, |w| w.write_all(b"old")).unwrap();
        let e = write_file(&p, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        });
        assert!(e.unwrap_err().contains("boom"));
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
