//! Fallible initialisation of a [`OnceLock`] (what the unstable
//! `OnceLock::get_or_try_init` does).

use std::sync::OnceLock;

/// The value of `cell`, made by `init` if the cell is empty. An error is
/// returned and nothing is stored, so a later call tries again. Two threads
/// may both run `init`; the first value stored is kept.
///
/// # Errors
/// `init`'s.
pub fn get_or_try_init<T, E>(cell: &OnceLock<T>, init: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
    if let Some(v) = cell.get() {
        return Ok(v);
    }
    let v = init()?;
    Ok(cell.get_or_init(|| v))
}
