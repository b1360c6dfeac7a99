//! [`Spinner`]: a spinner on stderr for work that takes a while (`validate`
//! or `list` over thousands of skills), so a person knows the command is
//! working. It appears only when the work has lasted a second and stderr is
//! a terminal, never on a pipe, and never for `--json` output.

use std::io::IsTerminal;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its spinner appears, in milliseconds, when the
/// (undocumented, for tests) variable of that name does not say otherwise.
const AFTER_MS: u64 = 1000;

/// The variable that changes [`AFTER_MS`] (the tests set 0).
const AFTER_VARIABLE: &str = "SKILLKIT_PROGRESS_AFTER_MS";

/// A spinner with a message, drawn on stderr once the work has lasted
/// [`AFTER_MS`]; cleared when finished or dropped.
#[derive(Debug)]
pub struct Spinner {
    bar: ProgressBar,
    /// Dropped to tell the waiting thread the work is done.
    done: Option<mpsc::Sender<()>>,
    waiting: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts timing work described by `message` (shown as it is: give only
    /// inert text). `wanted` is false for output that must stay clean
    /// (`--json`); then, or when stderr is not a terminal, nothing is ever
    /// drawn.
    pub fn start(message: &str, wanted: bool) -> Spinner {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(message.to_owned());
        let mut spinner = Spinner {
            bar,
            done: None,
            waiting: None,
        };
        if !wanted || !std::io::stderr().is_terminal() {
            return spinner;
        }
        let after = std::env::var(AFTER_VARIABLE)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(AFTER_MS);
        if after == 0 {
            show(&spinner.bar);
            return spinner;
        }
        let (done, finished) = mpsc::channel::<()>();
        let bar = spinner.bar.clone();
        spinner.done = Some(done);
        spinner.waiting = Some(std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) =
                finished.recv_timeout(Duration::from_millis(after))
            {
                show(&bar);
            }
        }));
        spinner
    }

    /// Changes the message (inert text only).
    pub fn message(&self, message: String) {
        self.bar.set_message(message);
    }
}

/// Draws `bar` on stderr from now on.
fn show(bar: &ProgressBar) {
    bar.set_draw_target(ProgressDrawTarget::stderr());
    // Drawn now, on this thread: once the steady tick's thread is installed,
    // `tick` does nothing, and work that ends before that thread first runs
    // would show no spinner at all.
    bar.tick();
    bar.enable_steady_tick(Duration::from_millis(120));
}

impl Drop for Spinner {
    fn drop(&mut self) {
        // The thread either drew the spinner already or wakes up now and
        // draws nothing; then the line is cleared.
        drop(self.done.take());
        if let Some(waiting) = self.waiting.take() {
            let _ = waiting.join();
        }
        self.bar.finish_and_clear();
    }
}
