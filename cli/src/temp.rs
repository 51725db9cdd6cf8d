//! Temporary output files, `.broadhead-<pid>-XXXXXX` beside the target, and the
//! removal of those a process left behind when it died (killed with SIGKILL, a power
//! cut).
//!
//! A temporary file is registered with [`super::cleanup`] (a terminating signal
//! removes it) and locked (`flock`) for as long as its process lives. Before a new one
//! is made, the directory's abandoned ones are removed: a name of exactly our pattern,
//! a regular file (not followed through a link) owned by our effective user, whose
//! process is gone (`kill(pid, 0)` says no such process) and whose lock is free (a
//! process of the same user in another PID namespace, which `kill` cannot see, still
//! holds it). Anything else is left alone.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::cleanup;

/// The start of every temporary file's name; the process id and [`RANDOM`]
/// characters follow.
const PREFIX: &str = ".broadhead-";

/// The random characters ending a temporary file's name.
const RANDOM: usize = 6;

/// A temporary file, removed when dropped or on a terminating signal.
pub struct Temp {
    file: Option<NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// A new temporary file in `dir`, made with `mode` (less the umask); the
    /// directory's abandoned temporary files are removed first.
    pub fn new_in(dir: &Path, mode: u32) -> io::Result<Temp> {
        remove_abandoned(dir);
        let prefix = format!("{PREFIX}{}-", std::process::id());
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).rand_bytes(RANDOM);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = mode;
        let mut registry = cleanup::registry();
        let file = b.tempfile_in(dir)?;
        let path = file.path().to_path_buf();
        registry.temps.push(path.clone());
        drop(registry);
        lock(file.as_file());
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
    pub fn persist(mut self, target: &Path) -> io::Result<()> {
        let file = self.file.take().expect("a temporary file until persisted");
        file.as_file().sync_all()?;
        // A signal either removes the file before the rename or comes after it.
        let mut registry = cleanup::registry();
        let result = file.persist(target).map(drop).map_err(|e| e.error);
        registry.temps.retain(|p| *p != self.path);
        result
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut registry = cleanup::registry();
        drop(self.file.take());
        registry.temps.retain(|p| *p != self.path);
    }
}

/// Takes the lock that tells other processes this file is in use (released when the
/// process ends, however it ends). A file system without `flock` goes without.
#[cfg(unix)]
fn lock(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: `flock` on a descriptor this `File` owns and keeps open.
    unsafe {
        libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB);
    }
}

#[cfg(not(unix))]
fn lock(_: &File) {}

/// The process id in a temporary file's name: `.broadhead-<pid>-XXXXXX` exactly
/// (a pid without leading zeros, [`RANDOM`] letters or digits).
fn owner_pid(name: &str) -> Option<u32> {
    let (pid, random) = name.strip_prefix(PREFIX)?.split_once('-')?;
    let pid_ok =
        !pid.is_empty() && !pid.starts_with('0') && pid.bytes().all(|b| b.is_ascii_digit());
    let random_ok = random.len() == RANDOM && random.bytes().all(|b| b.is_ascii_alphanumeric());
    if pid_ok && random_ok {
        pid.parse().ok()
    } else {
        None
    }
}

/// Removes the temporary files in `dir` that processes which are gone left behind.
/// Failures are ignored: this is housekeeping.
#[cfg(unix)]
fn remove_abandoned(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(owner_pid) else {
            continue;
        };
        if pid != me && !alive(pid) {
            remove_if_abandoned(&entry.path());
        }
    }
}

#[cfg(not(unix))]
fn remove_abandoned(_: &Path) {}

/// Whether process `pid` may exist (a pid out of range counts as alive: nothing of
/// it is removed).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 sends nothing; `kill` only checks that `pid` (positive, so one
    // process, not a group) exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes `path` if it is a regular file owned by our effective user whose lock no
/// one holds.
#[cfg(unix)]
fn remove_if_abandoned(path: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    // SAFETY: `geteuid` only reads the process's effective user id.
    let me = unsafe { libc::geteuid() };
    let ours = |m: &std::fs::Metadata| m.is_file() && m.uid() == me;
    // Nothing else is even opened (a device may act on an open).
    let Ok(before) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !ours(&before) {
        return;
    }
    // Not through a link, and never blocking (a FIFO put there meanwhile).
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return;
    };
    let Ok(meta) = file.metadata() else { return };
    if !ours(&meta) || (meta.dev(), meta.ino()) != (before.dev(), before.ino()) {
        return;
    }
    // SAFETY: `flock` on the descriptor of `file`, open until the end of this function.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if locked != 0 {
        return; // in use
    }
    // The name still names the file checked (not replaced meanwhile).
    let same = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino());
    if same {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_pattern_names_a_pid() {
        assert_eq!(owner_pid(".broadhead-1234-aB3xYz"), Some(1234));
        for name in [
            ".broadhead-aB3xYz",
            ".broadhead-0-aB3xYz",
            ".broadhead-012-aB3xYz",
            ".broadhead-12-aB3xY",
            ".broadhead-12-aB3xYz7",
            ".broadhead-12-aB3x.z",
            ".broadhead--aB3xYz",
            "broadhead-12-aB3xYz",
            ".broadhead-99999999999999999999-aB3xYz",
        ] {
            assert_eq!(owner_pid(name), None, "{name}");
        }
    }
}
