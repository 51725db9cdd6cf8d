//! Ctrl-C and SIGTERM: the temporary output files are removed and the progress bars
//! cleared before the process exits with 130 (SIGINT) or 143 (SIGTERM), as a shell does.
//!
//! Temporary files are made with [`Temp`], which registers them here; a signal thread
//! (signal-hook) removes whatever is registered when a signal arrives. Renaming a
//! finished file into place holds the same lock, so a signal either comes before the
//! rename (the temporary file is removed, the target left as it was) or after it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use indicatif::ProgressBar;
use tempfile::NamedTempFile;

/// What a signal has to clean up.
struct Registry {
    temps: Vec<PathBuf>,
    bars: Vec<ProgressBar>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    bars: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the thread that cleans up on SIGINT and SIGTERM. Without it (if the handlers
/// cannot be installed) a signal kills the process as it would anyway.
pub fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
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
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}

/// Registers a progress bar to clear on a signal.
pub fn register_bar(bar: &ProgressBar) {
    registry().bars.push(bar.clone());
}

/// A temporary file named `.broadhead-XXXXXX`, removed when dropped or on a signal.
pub struct Temp {
    file: Option<NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// A new temporary file in `dir` with the permissions an ordinary new file gets
    /// (rw-r--r-- before the umask, where tempfile's default is rw-------).
    pub fn new_in(dir: &Path) -> std::io::Result<Temp> {
        let mut b = tempfile::Builder::new();
        b.prefix(".broadhead-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let mut r = registry();
        let file = b.tempfile_in(dir)?;
        let path = file.path().to_path_buf();
        r.temps.push(path.clone());
        Ok(Temp {
            file: Some(file),
            path,
        })
    }

    /// The open file.
    pub fn as_file(&self) -> &File {
        self.file
            .as_ref()
            .expect("a temporary file until persisted")
            .as_file()
    }

    /// Syncs the file and renames it to `target`.
    pub fn persist(mut self, target: &Path) -> std::io::Result<()> {
        let file = self.file.take().expect("a temporary file until persisted");
        file.as_file().sync_all()?;
        let mut r = registry();
        let result = file.persist(target).map(drop).map_err(|e| e.error);
        r.temps.retain(|p| *p != self.path);
        result
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut r = registry();
        drop(self.file.take());
        r.temps.retain(|p| *p != self.path);
    }
}
