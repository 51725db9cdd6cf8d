//! Where an output file's bytes go (`-o`, `gen`'s output): a regular file is written
//! to a temporary file beside it and renamed over it when complete, keeping the
//! replaced file's permissions and owner; anything else (a device, a FIFO,
//! /dev/stdout) is written directly.

use std::fs::File;
use std::path::{Path, PathBuf};

use broadhead::escape::escape_path;

use super::pipe::ReaderGone;
use super::temp::Temp;
use super::{CliResult, Failure};

/// Refuses an output file that is one of the inputs.
pub fn check_not_input(output: &Option<PathBuf>, inputs: &[PathBuf]) -> CliResult {
    let Some(out) = output else { return Ok(()) };
    let Ok(out) = std::fs::canonicalize(out) else {
        return Ok(()); // does not exist yet
    };
    for input in inputs {
        if std::fs::canonicalize(input).is_ok_and(|i| i == out) {
            return Err(Failure::usage(format!(
                "refusing to write the output onto the input file {}",
                escape_path(input)
            )));
        }
    }
    Ok(())
}

/// How an output path is written.
enum Target {
    /// A regular file (through any symlinks: this is the file itself; its metadata
    /// given) or a new path (`None`): write a temporary file beside it and rename it
    /// over.
    Rename(PathBuf, Option<std::fs::Metadata>),
    /// Anything else (a device such as /dev/null, a FIFO, /dev/stdout, a dangling
    /// symlink): open and write it directly. Renaming over it would replace the device
    /// or the link with a regular file.
    Direct,
}

fn target_of(path: &Path) -> Target {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Target::Rename(
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            Some(m),
        ),
        Ok(_) => Target::Direct,
        Err(_) if std::fs::symlink_metadata(path).is_ok() => Target::Direct,
        Err(_) => Target::Rename(path.to_path_buf(), None),
    }
}

/// An output file being written: the file, and for a regular file the temporary
/// file to rename over the target when complete.
pub struct Opened {
    /// Where the bytes go (a broken pipe is noted, see [`ReaderGone`]).
    pub file: ReaderGone<File>,
    /// The temporary file and the target it replaces.
    pub rename: Option<(Temp, PathBuf)>,
}

impl Opened {
    /// Renames the temporary file (if any) over its target: the output appears only
    /// now.
    pub fn finish(rename: Option<(Temp, PathBuf)>) -> CliResult {
        if let Some((temp, target)) = rename {
            temp.persist(&target).map_err(|e| {
                Failure::runtime(format!(
                    "{}: cannot write the output: {e}",
                    escape_path(&target)
                ))
            })?;
        }
        Ok(())
    }
}

/// Opens the file an output goes to (see [`Target`]). An existing regular file that
/// is read-only (no write permission bit, or not writable by this user) is refused
/// unless `force`; the file that replaces it gets its permission bits and, where this
/// user may give them (root), its owner and group.
pub fn open_target(path: &Path, force: bool) -> CliResult<Opened> {
    let cannot = |e: std::io::Error| {
        Failure::runtime(format!(
            "{}: cannot create the output: {e}",
            escape_path(path)
        ))
    };
    match target_of(path) {
        Target::Direct => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .map_err(cannot)?;
            Ok(Opened {
                file: ReaderGone(file),
                rename: None,
            })
        }
        Target::Rename(target, existing) => {
            if let Some(m) = &existing {
                if !force && read_only(&target, m) {
                    return Err(Failure::runtime(format!(
                        "{}: the output file is read-only{}; use --force to replace it",
                        escape_path(path),
                        mode_text(m)
                    )));
                }
            }
            let dir = match target.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // Private until it has the target's owner and mode.
            let mode = if existing.is_some() { 0o600 } else { 0o644 };
            let temp = Temp::new_in(&dir, mode).map_err(cannot)?;
            if let Some(m) = &existing {
                keep_owner_and_mode(temp.as_file(), m).map_err(cannot)?;
            }
            let file = temp.as_file().try_clone().map_err(cannot)?;
            Ok(Opened {
                file: ReaderGone(file),
                rename: Some((temp, target)),
            })
        }
    }
}

/// Whether an existing output file is read-only: no write permission bit at all (so
/// for root too, as `cp` and editors treat it), or one this (effective) user may not
/// write. (A read-only file system is not this: the write fails with its own error.)
#[cfg(unix)]
fn read_only(path: &Path, m: &std::fs::Metadata) -> bool {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    if m.permissions().mode() & 0o222 == 0 {
        return true;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `faccessat` reads the NUL-terminated path `c`, alive for the call.
    let denied =
        unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    denied != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
}

#[cfg(not(unix))]
fn read_only(_: &Path, m: &std::fs::Metadata) -> bool {
    m.permissions().readonly()
}

/// ` (mode 0444)`, for the message refusing a read-only file.
#[cfg(unix)]
fn mode_text(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!(" (mode {:04o})", m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_text(_: &std::fs::Metadata) -> String {
    String::new()
}

/// Gives `file` the owner, group and permission bits of the file it will replace:
/// the owner and group where this user may (root may give any; others their own
/// groups; otherwise they stay this user's, as `cp` leaves them), then the mode (a
/// change of owner clears the set-id bits, so it comes after).
#[cfg(unix)]
fn keep_owner_and_mode(file: &File, m: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let fd = file.as_raw_fd();
    // SAFETY: `fchown` on the descriptor `file` owns and keeps open; a failure
    // (EPERM) leaves the file as it was.
    unsafe {
        if libc::fchown(fd, m.uid(), m.gid()) != 0 {
            libc::fchown(fd, libc::uid_t::MAX, m.gid());
        }
    }
    file.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, m: &std::fs::Metadata) -> std::io::Result<()> {
    file.set_permissions(m.permissions())
}
