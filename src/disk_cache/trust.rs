//! What the disk cache trusts on disk: a directory that is the user's alone, the
//! user's secret in it, entry files that are the user's own regular files (opened
//! without following a link or waiting on a FIFO), and only names of its own making.

use std::ffi::OsStr;
use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// The file in the cache directory that holds the secret.
pub(super) const SECRET_FILE: &str = "secret";
const SECRET_LEN: usize = 32;
/// An entry is `<64 hex digits>.bhk`.
const ENTRY_SUFFIX: &str = ".bhk";
/// A temporary file is `.bhk-<pid>-<counter>-<hex>.tmp`.
const TEMP_PREFIX: &str = ".bhk-";
const TEMP_SUFFIX: &str = ".tmp";
/// Mode bits an entry or the directory must not have: writable by group or others.
pub(super) const WRITABLE_BY_OTHERS: u32 = 0o022;
/// Mode bits the secret must not have: any access by group or others.
const OPEN_TO_OTHERS: u32 = 0o077;

/// Why a disk cache is off for this process (see [`DiskCache::check`](super::DiskCache::check)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The directory or the secret in it is not the user's alone: another user owns
    /// it, may write it, or may read the secret, and so could plant machine code that
    /// this process would run.
    Unsafe(String),
    /// The directory or its secret could not be made or read: a file in the way, a
    /// read-only or full disk.
    Unavailable(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unsafe(why) | Refusal::Unavailable(why) => f.write_str(why),
        }
    }
}

/// The user's key for the entries' MACs (not shown by `Debug`).
pub(super) struct Secret([u8; SECRET_LEN]);

impl Secret {
    pub(super) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Makes `dir` (mode 0700) if it is missing, checks that it is the user's alone, and
/// reads its secret, or creates one.
pub(super) fn open_dir(dir: &Path) -> Result<Secret, Refusal> {
    let shown = dir.display();
    create_private_dir(dir)
        .map_err(|e| Refusal::Unavailable(format!("cannot create {shown}: {e}")))?;
    // The directory a link points to (as ssh and git check): it is what holds the files.
    let meta =
        fs::metadata(dir).map_err(|e| Refusal::Unavailable(format!("cannot read {shown}: {e}")))?;
    if !meta.is_dir() {
        return Err(Refusal::Unavailable(format!("{shown} is not a directory")));
    }
    if let Some(why) = not_private(&meta, WRITABLE_BY_OTHERS) {
        return Err(Refusal::Unsafe(format!("{shown} {why}")));
    }
    secret(dir)
}

/// Creates `dir` and its missing parents, readable and writable by the user alone.
/// An existing directory is left as it is (and checked by the caller).
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    os::private_dir(&mut builder);
    builder.create(dir)
}

/// Why a file or directory with `meta` is not the user's alone (owned by the
/// effective user, no `forbidden` mode bits), if it is not.
fn not_private(meta: &Metadata, forbidden: u32) -> Option<String> {
    let Some((uid, mode)) = os::owner_and_mode(meta) else {
        return Some("has no owner this system can check".into());
    };
    let me = os::euid();
    if uid != me {
        Some(format!("is owned by uid {uid}, not by you (uid {me})"))
    } else if mode & forbidden != 0 {
        let who = if forbidden == OPEN_TO_OTHERS {
            "open to"
        } else {
            "writable by"
        };
        Some(format!("is {who} other users (mode {mode:04o})"))
    } else {
        None
    }
}

/// Why a file was not opened by [`open_own`].
#[derive(Debug)]
pub(super) enum Rejected {
    Missing,
    /// Not the user's own regular file (a link, a FIFO, another owner, …).
    NotOwn(String),
    Io(io::Error),
}

/// `path` opened for reading, and its metadata, if it is a regular file of the
/// user's alone (no `forbidden` mode bits). A symbolic link is not followed and a
/// FIFO or device is not waited on: the file is opened with `O_NOFOLLOW |
/// O_NONBLOCK` and what was opened is checked (`fstat`), so it cannot be swapped
/// between the check and the read.
pub(super) fn open_own(path: &Path, forbidden: u32) -> Result<(File, Metadata), Rejected> {
    let mut options = OpenOptions::new();
    options.read(true);
    os::no_follow_no_block(&mut options);
    let file = options.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Rejected::Missing,
        // ELOOP: a symbolic link.
        _ if os::is_link_error(&e) => Rejected::NotOwn("is a symbolic link".into()),
        _ => Rejected::Io(e),
    })?;
    let meta = file.metadata().map_err(Rejected::Io)?;
    if !meta.file_type().is_file() {
        return Err(Rejected::NotOwn("is not a regular file".into()));
    }
    if let Some(why) = not_private(&meta, forbidden) {
        return Err(Rejected::NotOwn(why));
    }
    Ok((file, meta))
}

/// The secret in `dir`, created if there is none: 32 bytes from `/dev/urandom` in a
/// file of mode 0600, written whole under a temporary name and then linked to its
/// name, so no process reads a part of it, and of two processes that create it at
/// once one links and the other reads that one's.
fn secret(dir: &Path) -> Result<Secret, Refusal> {
    let path = dir.join(SECRET_FILE);
    let refusal = |r: Rejected| match r {
        Rejected::NotOwn(why) => Refusal::Unsafe(format!("{} {why}", path.display())),
        Rejected::Missing => Refusal::Unavailable(format!("{} vanished", path.display())),
        Rejected::Io(e) => Refusal::Unavailable(format!("cannot read {}: {e}", path.display())),
    };
    match read_secret(&path) {
        Err(Rejected::Missing) => {}
        read => return read.map_err(refusal),
    }
    let mut bytes = [0u8; SECRET_LEN];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| Refusal::Unavailable(format!("cannot read /dev/urandom: {e}")))?;
    let temp = temp_path(dir);
    let linked = create_private(&temp)
        .and_then(|mut f| f.write_all(&bytes))
        .and_then(|()| fs::hard_link(&temp, &path));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(Secret(bytes)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_secret(&path).map_err(refusal),
        Err(e) => Err(Refusal::Unavailable(format!(
            "cannot create {}: {e}",
            path.display()
        ))),
    }
}

fn read_secret(path: &Path) -> Result<Secret, Rejected> {
    let (mut file, meta) = open_own(path, OPEN_TO_OTHERS)?;
    if meta.len() != SECRET_LEN as u64 {
        return Err(Rejected::Io(io::Error::other(format!(
            "{} bytes, not {SECRET_LEN} (delete it to make a new one)",
            meta.len()
        ))));
    }
    let mut bytes = [0u8; SECRET_LEN];
    file.read_exact(&mut bytes).map_err(Rejected::Io)?;
    Ok(Secret(bytes))
}

/// A new file at `path` (which must not exist; a link there is not followed),
/// readable and writable by the user alone.
pub(super) fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    os::private_file(&mut options);
    options.open(path)
}

/// The name of the entry for the key with hexadecimal digits `key_hex`.
pub(super) fn entry_name(key_hex: &str) -> String {
    format!("{key_hex}{ENTRY_SUFFIX}")
}

/// A temporary file's path in `dir` no other call (in this process or, by its pid,
/// another) returns: `.bhk-<pid>-<counter>-<nanoseconds in hex>.tmp`.
pub(super) fn temp_path(dir: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(
        "{TEMP_PREFIX}{}-{}-{nanos:x}{TEMP_SUFFIX}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Which of the cache's own kinds of file a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Own {
    Entry,
    Temp,
}

/// The kind of `name` if it is one the cache makes (an entry or a temporary file);
/// none for every other name, which the cache never deletes.
pub(super) fn own_name(name: &OsStr) -> Option<Own> {
    let name = name.to_str()?;
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(key) = name.strip_suffix(ENTRY_SUFFIX) {
        return (key.len() == 64 && hex(key)).then_some(Own::Entry);
    }
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let parts: Vec<&str> = middle.split('-').collect();
    matches!(parts.as_slice(), [pid, n, t] if digits(pid) && digits(n) && hex(t))
        .then_some(Own::Temp)
}

/// Whether `meta` (not following a link) is of a regular file the user owns: the
/// only files the cache deletes.
pub(super) fn owned_regular_file(meta: &Metadata) -> bool {
    meta.file_type().is_file() && os::owner_and_mode(meta).is_some_and(|(uid, _)| uid == os::euid())
}

/// The system calls behind the checks. Elsewhere than on Unix no owner can be
/// checked, so every directory is refused.
#[cfg(unix)]
mod os {
    use std::fs::{DirBuilder, Metadata, OpenOptions};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};

    pub(super) fn euid() -> u32 {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }

    pub(super) fn owner_and_mode(meta: &Metadata) -> Option<(u32, u32)> {
        Some((meta.uid(), meta.mode() & 0o7777))
    }

    pub(super) fn no_follow_no_block(options: &mut OpenOptions) {
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }

    pub(super) fn is_link_error(e: &std::io::Error) -> bool {
        e.raw_os_error() == Some(libc::ELOOP)
    }

    pub(super) fn private_file(options: &mut OpenOptions) {
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }

    pub(super) fn private_dir(builder: &mut DirBuilder) {
        builder.mode(0o700);
    }
}

#[cfg(not(unix))]
mod os {
    use std::fs::{DirBuilder, Metadata, OpenOptions};

    pub(super) fn euid() -> u32 {
        0
    }

    pub(super) fn owner_and_mode(_: &Metadata) -> Option<(u32, u32)> {
        None
    }

    pub(super) fn no_follow_no_block(_: &mut OpenOptions) {}

    pub(super) fn is_link_error(_: &std::io::Error) -> bool {
        false
    }

    pub(super) fn private_file(_: &mut OpenOptions) {}

    pub(super) fn private_dir(_: &mut DirBuilder) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_caches_own_names_are_its_own() {
        let own = |s: &str| own_name(OsStr::new(s));
        let key = "0123456789abcdef".repeat(4);
        assert_eq!(own(&entry_name(&key)), Some(Own::Entry));
        let temp = temp_path(Path::new("/d"));
        assert_eq!(own_name(temp.file_name().unwrap()), Some(Own::Temp));
        assert_eq!(own(".bhk-12-0-ff.tmp"), Some(Own::Temp));
        for foreign in [
            "x.tmp",
            "notes.txt",
            SECRET_FILE,
            &format!("{}.bhk", &key[1..]),
            &format!("{}.bhk", key.to_uppercase()),
            &format!("{key}.bhk.tmp"),
            &format!("{key}.123.0.tmp"),
            ".bhk-12-0.tmp",
            ".bhk-12-0-ff-1.tmp",
            ".bhk-x-0-ff.tmp",
            ".bhk-12-0-fg.tmp",
            "bhk-12-0-ff.tmp",
        ] {
            assert_eq!(own(foreign), None, "{foreign}");
        }
    }
}
