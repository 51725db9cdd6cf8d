//! The persistent kernel cache: compiled object code on disk, shared by processes.
//!
//! An entry is one file, `<key>.bhk`, named by the [`KernelKey`] (a SHA-256 of the
//! lowered program, the pipeline, Broadhead's code generator build and version, the
//! LLVM version and the host CPU's name and features), holding a header and the
//! object file:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `BHKERNEL` |
//! | 4 | format version, 2 (little-endian) |
//! | 32 | the key |
//! | 8 | object length (little-endian) |
//! | 32 | HMAC-SHA256, under the user's secret, of the fields above and the object |
//! | n | the object file |
//!
//! ## Trust
//!
//! What is loaded from the directory is run as machine code, so the cache loads only
//! what a process of the same user wrote, and refuses a directory someone else could
//! write:
//!
//! - The directory must be owned by the effective user and not be writable by group
//!   or others (as ssh and git check); it is created with mode 0700. Otherwise the
//!   cache is off for the process: it acts as empty, reading and writing nothing, and
//!   [`DiskCache::check`] says why (the library prints nothing).
//! - The directory holds a 32-byte secret (the file `secret`, created with mode 0600
//!   from `/dev/urandom`); a secret not owned by the user or open to group or others
//!   turns the cache off the same way. Each entry carries a MAC under it, so an entry
//!   is only loaded if a process holding the secret wrote exactly these bytes: a
//!   planted file, or a damaged one whose checksum was recomputed, fails the MAC.
//! - An entry is opened with `O_NOFOLLOW | O_NONBLOCK` and read only if what was
//!   opened is a regular file owned by the user, not writable by others, of at most
//!   an entry's largest size: a symbolic link is not followed and a FIFO is not
//!   waited on (both are misses, replaced by the next write).
//! - The cache deletes only names of its own making (`<64 hex digits>.bhk` and
//!   `.bhk-<pid>-<counter>-<hex>.tmp`), and only regular files the user owns.
//!
//! A file whose header, length or MAC does not match is treated as missing and
//! deleted, so the caller compiles and writes a good one. Writes go to a temporary
//! file (mode 0600) in the same directory that is renamed over the entry, so a reader
//! sees a whole entry or none, and concurrent writers of one key (their bytes are
//! equal) simply replace each other. A hit refreshes the file's modification time;
//! when the directory grows beyond its limit, the least recently used entries are
//! deleted.
//!
//! Every other failure — a missing or read-only directory, a full disk — makes the
//! cache act as if it were empty: nothing is reported to the user, the kernel is
//! compiled in memory as without a disk cache.

mod mac;
mod trust;

use std::ffi::OsString;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use broadhead_codegen::KernelKey;

pub use trust::Refusal;
use trust::{Own, Secret};

const MAGIC: &[u8; 8] = b"BHKERNEL";
/// 1 had a CRC-32 where the MAC is.
const VERSION: u32 = 2;
/// The header before the MAC, which the MAC covers with the object.
const FIELDS: usize = 8 + 4 + 32 + 8;
const HEADER: usize = FIELDS + mac::LEN;
/// Entries larger than this are not written (a kernel's object code is a few KiB to
/// a few hundred KiB).
const MAX_ENTRY: u64 = 64 << 20;
/// Temporary files older than this were left by a writer that died.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// The environment variable that turns the disk cache off (`off`, `0`, `false`, `no`).
pub const ENV_SWITCH: &str = "BROADHEAD_KERNEL_CACHE";
/// The environment variable that names the cache directory.
pub const ENV_DIR: &str = "BROADHEAD_KERNEL_CACHE_DIR";
/// The default size limit: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

/// A directory of compiled kernels (see the module documentation).
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    max_bytes: u64,
    /// This process's estimate of the directory's size: measured by the first write,
    /// then grown by each write; a full scan (and eviction) runs when it passes the
    /// limit. `u64::MAX`: not measured yet.
    estimated: AtomicU64,
    /// The directory checked and its secret read, on first use (see the module
    /// documentation).
    opened: OnceLock<Result<Secret, Refusal>>,
}

impl DiskCache {
    /// A cache in `dir` (created, with mode 0700, and checked when first used) of
    /// at most [`DEFAULT_MAX_BYTES`].
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            estimated: AtomicU64::new(u64::MAX),
            opened: OnceLock::new(),
        }
    }

    /// The same cache bounded to `max_bytes` (older entries are deleted beyond it).
    pub fn with_max_bytes(mut self, max_bytes: u64) -> DiskCache {
        self.max_bytes = max_bytes;
        self
    }

    /// The cache the environment asks for: none when `BROADHEAD_KERNEL_CACHE` is
    /// `off` (or `0`, `false`, `no`); else in `BROADHEAD_KERNEL_CACHE_DIR` if set,
    /// else `$XDG_CACHE_HOME/broadhead/kernels`, else `~/.cache/broadhead/kernels`;
    /// none when no directory can be named.
    pub fn from_env() -> Option<DiskCache> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`DiskCache::from_env`] with the variables `var` gives.
    fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Option<DiskCache> {
        let switch = var(ENV_SWITCH).unwrap_or_default();
        let switch = switch.to_string_lossy().trim().to_ascii_lowercase();
        if ["off", "0", "false", "no"].contains(&switch.as_str()) {
            return None;
        }
        let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
        let dir = var(ENV_DIR)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                var("XDG_CACHE_HOME")
                    .and_then(absolute)
                    .map(|d| d.join("broadhead").join("kernels"))
            })
            .or_else(|| {
                var("HOME")
                    .and_then(absolute)
                    .map(|d| d.join(".cache").join("broadhead").join("kernels"))
            })?;
        Some(DiskCache::new(dir))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size limit in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Checks the directory (creating it if it is missing) and reads its secret, if
    /// that was not done yet: `Err` says why the cache is off for this process (it
    /// then acts as empty). Reads and writes check on their own; this is for a
    /// caller that wants to know, or to say, why nothing is cached.
    pub fn check(&self) -> Result<(), &Refusal> {
        self.secret().map(|_| ())
    }

    /// Why the cache is off for this process, if it has been used (or checked) and
    /// found unusable; none before its first use.
    pub fn refusal(&self) -> Option<&Refusal> {
        self.opened.get()?.as_ref().err()
    }

    fn secret(&self) -> Result<&Secret, &Refusal> {
        self.opened
            .get_or_init(|| trust::open_dir(&self.dir))
            .as_ref()
    }

    fn path(&self, key: &KernelKey) -> PathBuf {
        self.dir.join(trust::entry_name(&key.hex()))
    }

    /// The object code stored for `key`, if a whole entry with this user's MAC
    /// exists. An entry that fails the check is deleted.
    pub(crate) fn read(&self, key: &KernelKey) -> Option<Vec<u8>> {
        let secret = self.secret().ok()?;
        let path = self.path(key);
        // Not the user's own regular file: a miss, not followed, not deleted (the
        // next write renames a good entry over it).
        let (mut file, meta) = trust::open_own(&path, trust::WRITABLE_BY_OTHERS).ok()?;
        if meta.len() > HEADER as u64 + MAX_ENTRY {
            self.remove(key);
            return None;
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        // At most what fstat said: a file that grows meanwhile fails the length check.
        (&mut file)
            .take(HEADER as u64 + MAX_ENTRY + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        match parse(&bytes, key, secret) {
            Some(object) => {
                // Recently used: evicted last (where the file may be touched).
                let _ = file.set_modified(SystemTime::now());
                Some(object.to_vec())
            }
            None => {
                self.remove(key);
                None
            }
        }
    }

    /// Deletes the entry for `key` (one that was damaged or failed to load).
    pub(crate) fn remove(&self, key: &KernelKey) {
        let _ = fs::remove_file(self.path(key));
    }

    /// Stores `object` for `key`; returns whether it was written.
    pub(crate) fn write(&self, key: &KernelKey, object: &[u8]) -> bool {
        if object.len() as u64 > MAX_ENTRY.min(self.max_bytes) {
            return false;
        }
        let Ok(secret) = self.secret() else {
            return false;
        };
        let entry = encode(key, object, secret);
        let temp = trust::temp_path(&self.dir);
        let written = trust::create_private(&temp)
            .and_then(|mut f| f.write_all(&entry))
            .and_then(|()| fs::rename(&temp, self.path(key)));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
            return false;
        }
        self.account(entry.len() as u64);
        true
    }

    /// Adds a written entry to the size estimate, evicting when it passes the limit.
    fn account(&self, bytes: u64) {
        let before = self
            .estimated
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |e| {
                Some(if e == u64::MAX {
                    e
                } else {
                    e.saturating_add(bytes)
                })
            })
            .unwrap_or(u64::MAX);
        if before == u64::MAX || before.saturating_add(bytes) > self.max_bytes {
            self.evict();
        }
    }

    /// Deletes the least recently used entries until the directory is within 90% of
    /// the limit (so the next eviction is some writes away), and temporary files left
    /// by writers that died; measures what is left. Only the cache's own names are
    /// looked at, and only regular files the user owns are deleted (a link is not
    /// followed).
    pub(crate) fn evict(&self) {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut entries = Vec::new();
        let mut total = 0u64;
        for e in dir.flatten() {
            let Some(own) = trust::own_name(&e.file_name()) else {
                continue;
            };
            // Of the entry itself, not of what a link points to.
            let Ok(meta) = fs::symlink_metadata(e.path()) else {
                continue;
            };
            if !trust::owned_regular_file(&meta) {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            match own {
                Own::Temp => {
                    if now.duration_since(modified).unwrap_or_default() > STALE_TEMP {
                        let _ = fs::remove_file(e.path());
                    }
                }
                Own::Entry => {
                    total += meta.len();
                    entries.push((modified, meta.len(), e.path()));
                }
            }
        }
        let target = self.max_bytes / 10 * 9;
        if total > self.max_bytes {
            entries.sort();
            for (_, len, path) in entries {
                if total <= target {
                    break;
                }
                if fs::remove_file(&path).is_ok() {
                    total -= len;
                }
            }
        }
        self.estimated.store(total, Ordering::Relaxed);
    }
}

/// The entry for `key` holding `object`, with its MAC under `secret`.
fn encode(key: &KernelKey, object: &[u8], secret: &Secret) -> Vec<u8> {
    let mut entry = Vec::with_capacity(HEADER + object.len());
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(&VERSION.to_le_bytes());
    entry.extend_from_slice(key.bytes());
    entry.extend_from_slice(&(object.len() as u64).to_le_bytes());
    let mac = mac::hmac(secret.bytes(), &[&entry, object]);
    entry.extend_from_slice(&mac);
    entry.extend_from_slice(object);
    entry
}

/// The object code of an entry, if its header matches `key` and its MAC under
/// `secret` holds.
fn parse<'a>(bytes: &'a [u8], key: &KernelKey, secret: &Secret) -> Option<&'a [u8]> {
    let (header, object) = bytes.split_at_checked(HEADER)?;
    let (fields, stored_mac) = header.split_at(FIELDS);
    let (magic, rest) = fields.split_at(8);
    let (version, rest) = rest.split_at(4);
    let (stored_key, len) = rest.split_at(32);
    let ok = magic == MAGIC
        && version == VERSION.to_le_bytes()
        && stored_key == key.bytes()
        && u64::from_le_bytes(len.try_into().ok()?) == object.len() as u64
        && mac::equal(stored_mac, &mac::hmac(secret.bytes(), &[fields, object]));
    ok.then_some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Option<PathBuf> {
        DiskCache::from_vars(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        })
        .map(|c| c.dir().to_path_buf())
    }

    #[test]
    fn the_directory_comes_from_the_override_then_xdg_then_home() {
        let home = ("HOME", "/home/u");
        let xdg = ("XDG_CACHE_HOME", "/xdg");
        let dir = (ENV_DIR, "/tmp/k");
        assert_eq!(
            from(&[home]),
            Some("/home/u/.cache/broadhead/kernels".into())
        );
        assert_eq!(from(&[home, xdg]), Some("/xdg/broadhead/kernels".into()));
        assert_eq!(from(&[home, xdg, dir]), Some("/tmp/k".into()));
        // Relative XDG_CACHE_HOME is ignored, as the XDG specification says.
        assert_eq!(
            from(&[home, ("XDG_CACHE_HOME", "rel")]),
            Some("/home/u/.cache/broadhead/kernels".into())
        );
        assert_eq!(from(&[]), None);
        for off in ["off", "OFF", "0", "false", "no", " off "] {
            assert_eq!(from(&[home, dir, (ENV_SWITCH, off)]), None, "{off}");
        }
        assert!(from(&[home, (ENV_SWITCH, "on")]).is_some());
    }

    /// A program's key (`fast`: another pipeline, so another key).
    fn key(fast: bool) -> KernelKey {
        let program = broadhead_codegen::Program {
            nodes: vec![broadhead_codegen::Node::Bool(true)],
            inputs: vec![],
            params: vec![],
            outputs: vec![0],
            mode: broadhead_codegen::Mode::Filter,
        };
        let pipeline = if fast {
            broadhead_codegen::Pipeline::Fast
        } else {
            broadhead_codegen::Pipeline::O3
        };
        KernelKey::new(&program, pipeline)
    }

    /// A cache in a new private directory (`kernels` under the returned temporary
    /// directory) holding one entry for `key(false)`.
    fn cache_with_an_entry() -> (tempfile::TempDir, DiskCache) {
        let tmp = tempfile::TempDir::new().unwrap();
        let cache = DiskCache::new(tmp.path().join("kernels"));
        assert!(cache.write(&key(false), b"object code"));
        (tmp, cache)
    }

    /// Whether this process runs as root (the tests that need a second uid chown to
    /// 65534, which only root may).
    fn root(dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let root = std::fs::metadata(dir).unwrap().uid() == 0;
        if !root {
            eprintln!("skipped: the part of this test that needs a second uid (not root)");
        }
        root
    }

    const NOBODY: u32 = 65534;

    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn an_entry_is_read_back_only_whole_and_under_its_own_key() {
        let (_tmp, cache) = cache_with_an_entry();
        let (key, other) = (key(false), key(true));
        assert_eq!(cache.read(&key).as_deref(), Some(&b"object code"[..]));
        assert_eq!(cache.read(&other), None);
        let secret = cache.secret().unwrap();
        let entry = std::fs::read(cache.path(&key)).unwrap();
        assert_eq!(parse(&entry, &key, secret), Some(&b"object code"[..]));
        assert_eq!(parse(&entry, &other, secret), None, "another key");
        // A version this build does not know is not read.
        let mut newer = entry.clone();
        newer[8] = 3;
        assert_eq!(parse(&newer, &key, secret), None);
    }

    #[test]
    fn a_flipped_bit_anywhere_in_an_entry_is_rejected() {
        let (_tmp, cache) = cache_with_an_entry();
        let key = key(false);
        let secret = cache.secret().unwrap();
        let entry = std::fs::read(cache.path(&key)).unwrap();
        for bit in 0..entry.len() * 8 {
            let mut flipped = entry.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(parse(&flipped, &key, secret), None, "bit {bit}");
        }
    }

    #[test]
    fn an_entry_with_a_wrong_mac_is_not_loaded_and_is_deleted() {
        let (_tmp, cache) = cache_with_an_entry();
        let key = key(false);
        let path = cache.path(&key);
        // What anyone can compute: the header, and a MAC under a secret of their own.
        let planted = b"planted code";
        let mut entry = Vec::new();
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(&VERSION.to_le_bytes());
        entry.extend_from_slice(key.bytes());
        entry.extend_from_slice(&(planted.len() as u64).to_le_bytes());
        let mac = mac::hmac(&[7; 32], &[&entry, planted]);
        entry.extend_from_slice(&mac);
        entry.extend_from_slice(planted);
        std::fs::write(&path, &entry).unwrap();
        assert_eq!(cache.read(&key), None);
        assert!(!path.exists(), "deleted");
    }

    #[test]
    fn a_directory_others_may_write_or_own_is_refused() {
        let (tmp, cache) = cache_with_an_entry();
        let dir = cache.dir().to_path_buf();
        let listing = || {
            let mut names: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            names
        };
        let before = listing();
        let refused = |what: &str| {
            let fresh = DiskCache::new(&dir);
            assert_eq!(fresh.read(&key(false)), None, "{what}: nothing loaded");
            assert!(!fresh.write(&key(true), b"other code"), "{what}");
            assert!(
                matches!(fresh.check(), Err(Refusal::Unsafe(_))),
                "{what}: {:?}",
                fresh.check()
            );
            assert!(matches!(fresh.refusal(), Some(Refusal::Unsafe(_))));
            assert_eq!(listing(), before, "{what}: nothing written or deleted");
        };
        for mode in [0o777, 0o1777, 0o770, 0o720, 0o702] {
            chmod(&dir, mode);
            refused(&format!("mode {mode:o}"));
        }
        chmod(&dir, 0o700);
        let fresh = DiskCache::new(&dir);
        assert!(
            fresh.refusal().is_none(),
            "not checked before its first use"
        );
        assert!(
            fresh.read(&key(false)).is_some(),
            "a private directory is used"
        );
        assert_eq!(fresh.check(), Ok(()));
        if root(tmp.path()) {
            std::os::unix::fs::chown(&dir, Some(NOBODY), None).unwrap();
            refused("owned by another uid");
            let why = DiskCache::new(&dir).check().unwrap_err().to_string();
            assert!(why.contains("owned by uid 65534"), "{why}");
        }
    }

    #[test]
    fn a_secret_open_to_others_or_not_owned_is_refused() {
        let (tmp, cache) = cache_with_an_entry();
        let secret = cache.dir().join(trust::SECRET_FILE);
        let refused = |what: &str| {
            let fresh = DiskCache::new(cache.dir());
            assert_eq!(fresh.read(&key(false)), None, "{what}");
            assert!(!fresh.write(&key(true), b"code"), "{what}");
            assert!(
                matches!(fresh.check(), Err(Refusal::Unsafe(_))),
                "{what}: {:?}",
                fresh.check()
            );
        };
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602] {
            chmod(&secret, mode);
            refused(&format!("mode {mode:o}"));
        }
        chmod(&secret, 0o600);
        assert!(DiskCache::new(cache.dir()).read(&key(false)).is_some());
        // A link to a private secret elsewhere is not followed.
        let elsewhere = tmp.path().join("secret-elsewhere");
        std::fs::rename(&secret, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &secret).unwrap();
        refused("a symbolic link");
        std::fs::remove_file(&secret).unwrap();
        std::fs::rename(&elsewhere, &secret).unwrap();
        if root(tmp.path()) {
            std::os::unix::fs::chown(&secret, Some(NOBODY), None).unwrap();
            refused("owned by another uid");
        }
    }

    #[test]
    fn a_new_directory_is_private_and_its_secret_too() {
        use std::os::unix::fs::PermissionsExt;
        let (_tmp, cache) = cache_with_an_entry();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(cache.dir()), 0o700);
        assert_eq!(mode(&cache.dir().join(trust::SECRET_FILE)), 0o600);
        assert_eq!(mode(&cache.path(&key(false))), 0o600);
        // Another process (a new cache) reads the same secret.
        assert!(DiskCache::new(cache.dir()).read(&key(false)).is_some());
    }

    /// Reads `key` from a new cache on `dir` on a thread, waiting at most 30 s (a
    /// guard against a hang, not a measure of time).
    fn read_guarded(dir: &Path, key: KernelKey) -> Option<Vec<u8>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let cache = DiskCache::new(dir);
        std::thread::spawn(move || {
            let _ = tx.send(cache.read(&key));
        });
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the read returned")
    }

    #[test]
    fn a_fifo_link_or_foreign_file_in_place_of_an_entry_is_not_read() {
        let (tmp, cache) = cache_with_an_entry();
        let key = key(false);
        let path = cache.path(&key);
        let good = tmp.path().join("a-good-entry");
        std::fs::rename(&path, &good).unwrap();

        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success(), "mkfifo");
        assert_eq!(read_guarded(cache.dir(), key), None, "a FIFO");
        // Left for the next write to replace.
        assert!(cache.write(&key, b"object code"));
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());

        // A link to an entry that would load (its MAC holds) is not followed.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&good, &path).unwrap();
        assert_eq!(read_guarded(cache.dir(), key), None, "a link");
        std::fs::remove_file(&path).unwrap();

        // The entry itself, writable by others: not read.
        std::fs::copy(&good, &path).unwrap();
        chmod(&path, 0o666);
        assert_eq!(read_guarded(cache.dir(), key), None, "mode 666");
        chmod(&path, 0o600);
        assert!(read_guarded(cache.dir(), key).is_some());
        if root(tmp.path()) {
            std::os::unix::fs::chown(&path, Some(NOBODY), None).unwrap();
            assert_eq!(read_guarded(cache.dir(), key), None, "another owner");
        }
    }

    #[test]
    fn eviction_deletes_only_its_own_files() {
        let (tmp, cache) = cache_with_an_entry();
        let dir = cache.dir();
        let hour_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
        let old = |name: &str| {
            let path = dir.join(name);
            let f = std::fs::File::create(&path).unwrap();
            f.set_modified(hour_ago).unwrap();
            path
        };
        let foreign_temp = old("x.tmp");
        let other_name = old("notes.txt");
        let bhk_like = old("1234.bhk");
        let own_temp = old(".bhk-1-2-ab.tmp");
        // A link named like an entry, to a file outside that must survive.
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, b"keep me").unwrap();
        let link = dir.join(trust::entry_name(&"ab".repeat(32)));
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let entry = cache.path(&key(false));
        let small = DiskCache::new(dir).with_max_bytes(1);
        small.evict();
        assert!(!own_temp.exists(), "a stale temporary file of its own");
        assert!(!entry.exists(), "an entry beyond the limit");
        for kept in [&foreign_temp, &other_name, &bhk_like, &outside] {
            assert!(kept.exists(), "{}", kept.display());
        }
        assert!(std::fs::symlink_metadata(&link).is_ok(), "the link");
        assert!(dir.join(trust::SECRET_FILE).exists(), "the secret");
        if root(tmp.path()) {
            // An entry and a stale temporary file of another uid stay.
            let theirs = dir.join(trust::entry_name(&"cd".repeat(32)));
            std::fs::write(&theirs, b"x".repeat(100)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(NOBODY), None).unwrap();
            let their_temp = old(".bhk-3-4-cd.tmp");
            std::os::unix::fs::chown(&their_temp, Some(NOBODY), None).unwrap();
            small.evict();
            assert!(theirs.exists() && their_temp.exists());
        }
    }
}
