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
//! | 4 | format version (little-endian) |
//! | 32 | the key |
//! | 8 | object length (little-endian) |
//! | 4 | CRC-32 of the object |
//! | n | the object file |
//!
//! A file whose header, length or checksum does not match is treated as missing and
//! deleted, so the caller compiles and writes a good one. Writes go to a temporary
//! file in the same directory that is renamed over the entry, so a reader sees a
//! whole entry or none, and concurrent writers of one key (their bytes are equal)
//! simply replace each other. A hit refreshes the file's modification time; when
//! the directory grows beyond its limit, the least recently used entries are deleted.
//!
//! Every failure — a missing or read-only directory, a full disk — makes the cache
//! act as if it were empty: nothing is reported to the user, the kernel is compiled
//! in memory as without a disk cache.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use broadhead_codegen::KernelKey;

const MAGIC: &[u8; 8] = b"BHKERNEL";
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 32 + 8 + 4;
const EXTENSION: &str = "bhk";
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
}

impl DiskCache {
    /// A cache in `dir` (created when the first entry is written) of at most
    /// [`DEFAULT_MAX_BYTES`].
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            estimated: AtomicU64::new(u64::MAX),
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

    fn path(&self, key: &KernelKey) -> PathBuf {
        self.dir.join(format!("{}.{EXTENSION}", key.hex()))
    }

    /// The object code stored for `key`, if a whole, intact entry exists. A damaged
    /// entry is deleted.
    pub(crate) fn read(&self, key: &KernelKey) -> Option<Vec<u8>> {
        let path = self.path(key);
        let mut file = File::open(&path).ok()?;
        let mut bytes = Vec::new();
        // No entry this cache writes is longer; a longer file fails the length check.
        (&mut file)
            .take(HEADER as u64 + MAX_ENTRY + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        match parse(&bytes, key) {
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
        if create_private_dir(&self.dir).is_err() {
            return false;
        }
        let mut entry = Vec::with_capacity(HEADER + object.len());
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(&VERSION.to_le_bytes());
        entry.extend_from_slice(key.bytes());
        entry.extend_from_slice(&(object.len() as u64).to_le_bytes());
        entry.extend_from_slice(&crc32fast::hash(object).to_le_bytes());
        entry.extend_from_slice(object);
        let temp = self.dir.join(format!(
            "{}.{}.{}.tmp",
            key.hex(),
            std::process::id(),
            unique()
        ));
        let written = File::create_new(&temp)
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
    /// by writers that died; measures what is left.
    pub(crate) fn evict(&self) {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut entries = Vec::new();
        let mut total = 0u64;
        for e in dir.flatten() {
            let path = e.path();
            let Ok(meta) = e.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".tmp") {
                if now.duration_since(modified).unwrap_or_default() > STALE_TEMP {
                    let _ = fs::remove_file(&path);
                }
            } else if name.ends_with(&format!(".{EXTENSION}")) && meta.is_file() {
                total += meta.len();
                entries.push((modified, meta.len(), path));
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

/// Creates `dir` and its missing parents, readable and writable by the user alone
/// (on Unix): what is loaded from it is run as machine code, so no other user may
/// write there. An existing directory is left as it is.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A number no other call in this process returns (temporary file names).
fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The object code of an entry, if its header matches `key` and its checksum holds.
fn parse<'a>(bytes: &'a [u8], key: &KernelKey) -> Option<&'a [u8]> {
    let (header, object) = bytes.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(8);
    let (version, rest) = rest.split_at(4);
    let (stored_key, rest) = rest.split_at(32);
    let (len, crc) = rest.split_at(8);
    let ok = magic == MAGIC
        && version == VERSION.to_le_bytes()
        && stored_key == key.bytes()
        && u64::from_le_bytes(len.try_into().ok()?) == object.len() as u64
        && crc == crc32fast::hash(object).to_le_bytes();
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

    #[test]
    fn an_entry_is_read_back_only_whole_and_under_its_own_key() {
        let tmp =
            std::env::temp_dir().join(format!("broadhead-disk-cache-unit-{}", std::process::id()));
        let cache = DiskCache::new(&tmp);
        let program = broadhead_codegen::Program {
            nodes: vec![broadhead_codegen::Node::Bool(true)],
            inputs: vec![],
            params: vec![],
            outputs: vec![0],
            mode: broadhead_codegen::Mode::Filter,
        };
        let key = KernelKey::new(&program, broadhead_codegen::Pipeline::O3);
        let other = KernelKey::new(&program, broadhead_codegen::Pipeline::Fast);
        assert!(cache.write(&key, b"object code"));
        assert_eq!(cache.read(&key).as_deref(), Some(&b"object code"[..]));
        assert_eq!(cache.read(&other), None);
        let entry = std::fs::read(cache.path(&key)).unwrap();
        assert_eq!(parse(&entry, &key), Some(&b"object code"[..]));
        assert_eq!(parse(&entry, &other), None, "another key");
        // A version this build does not know is not read.
        let mut newer = entry.clone();
        newer[8] = 2;
        assert_eq!(parse(&newer, &key), None);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
