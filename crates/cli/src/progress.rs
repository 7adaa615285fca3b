//! Progress bars on standard error: shown only on a terminal and without
//! `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Whether progress is drawn.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Progress {
    shown: bool,
}

impl Progress {
    /// Progress for this run: hidden with `--quiet` or when standard error
    /// is not a terminal.
    pub(crate) fn new(quiet: bool) -> Self {
        Progress { shown: !quiet && std::io::stderr().is_terminal() }
    }

    /// A spinner for a phase of unknown length (reading, building,
    /// writing); finish it with [`ProgressBar::finish_and_clear`].
    pub(crate) fn phase(&self, message: impl Into<String>) -> ProgressBar {
        if !self.shown {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new_spinner().with_message(message.into());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }

    /// A bar of `len` steps (levels).
    pub(crate) fn steps(&self, len: u64, message: impl Into<String>) -> ProgressBar {
        if !self.shown {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len).with_message(message.into());
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }
}
