//! Terminating signals: the temporary output files are removed and the progress bars
//! cleared before the process exits with 128 + the signal's number, as a shell
//! reports a process a signal ended (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
//!
//! Every signal whose default action ends the process and that can be caught is
//! handled: SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGVTALRM,
//! SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR and the real-time signals. SIGPIPE is
//! ignored, as in every Rust program: a write to a pipe whose reader has gone fails
//! instead, and the command ends quietly (see `output`). Signals a fault raises
//! (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) cannot be handled safely, and SIGKILL
//! cannot be caught at all: what those leave behind is removed by the next run that
//! writes to the same directory (`temp`).
//!
//! Temporary files are made by `temp::Temp`, which registers them here; a signal
//! thread (signal-hook) removes whatever is registered when a signal arrives.
//! Renaming a finished file into place holds the same lock, so a signal either comes
//! before the rename (the temporary file is removed, the target left as it was) or
//! after it.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use indicatif::ProgressBar;

/// What a signal has to clean up.
pub struct Registry {
    /// The temporary files in existence.
    pub temps: Vec<PathBuf>,
    bars: Vec<ProgressBar>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    bars: Vec::new(),
});

/// The registry, locked: a signal's cleanup waits until it is released.
pub fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The signals handled (see the module's documentation).
#[cfg(unix)]
fn terminating_signals() -> Vec<i32> {
    let mut signals = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGTERM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
    ];
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        signals.extend([libc::SIGIO, libc::SIGPWR]);
        signals.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    }
    signals
}

/// Starts the thread that cleans up on a terminating signal. A signal whose handler
/// cannot be installed kills the process as it would anyway.
#[cfg(unix)]
pub fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new(std::iter::empty::<i32>()) else {
        return;
    };
    for signal in terminating_signals() {
        let _ = signals.add_signal(signal);
    }
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let r = registry();
                for bar in &r.bars {
                    bar.finish_and_clear();
                }
                for path in &r.temps {
                    let _ = std::fs::remove_file(path);
                }
                // Exit while holding the lock: no rename can start after the removal.
                // SAFETY: `_exit` only ends the process, without atexit handlers and
                // C++ static destructors (a kernel may be compiling on another thread,
                // as at the end of `main`) and without flushing stdout, whose lock
                // the main thread may hold in a write blocked on a full pipe.
                unsafe { libc::_exit(128 + signal) }
            }
        });
    drop(spawned);
}

#[cfg(not(unix))]
pub fn install() {}

/// Registers a progress bar to clear on a signal.
pub fn register_bar(bar: &ProgressBar) {
    registry().bars.push(bar.clone());
}
