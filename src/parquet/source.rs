//! A Parquet file's bytes as the scan's reader reads them: the file mapped into
//! memory, so that page data is decompressed and decoded where the page cache holds
//! it, or (when mapping is turned off or fails) read by the parquet crate from the
//! file, a copy per page.
//!
//! Reading from the page cache copied every compressed byte once more: `perf` of
//! the Q6 rows written as CSV (TPC-H SF1, 1 thread) put 14 % of the time in
//! `read` system calls, most of it copying (docs/performance-notes.md).
//!
//! A mapped file that another process truncates while the scan reads it ends this
//! process with `SIGBUS` where a read would have returned an error (Polars, which
//! maps files too, has the same limit); a file replaced by renaming a new one over
//! it is safe (the mapping keeps the old one). `BROADHEAD_MMAP=off` reads instead.

use std::fs::File;
use std::io::Read;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::{ChunkReader, Length};

/// The environment variable that turns mapping off (`off`, `0`, `false`, `no`).
pub const ENV_MMAP: &str = "BROADHEAD_MMAP";

/// A file's bytes for the parquet reader: mapped, or read from the file.
pub(crate) enum FileBytes {
    /// The whole file, mapped.
    Mapped(Bytes),
    /// Read from the file as the reader asks.
    Read(File),
}

impl FileBytes {
    /// `file`'s bytes: mapped unless [`ENV_MMAP`] turns that off or mapping fails
    /// (a file system without it); then read.
    pub(crate) fn of(file: &File) -> std::io::Result<FileBytes> {
        if mapping_on(std::env::var_os(ENV_MMAP)) {
            // SAFETY: the mapping is read-only and private to this process, which
            // never writes the file. Another process changing the file while it is
            // mapped changes the bytes under the slices the reader holds: the reader
            // treats page bytes as untrusted (corrupt pages are errors), and a
            // truncation ends the process with SIGBUS; the module documentation and
            // docs/cli.md say so, and `BROADHEAD_MMAP=off` avoids it.
            if let Ok(map) = unsafe { memmap2::Mmap::map(file) } {
                return Ok(FileBytes::Mapped(Bytes::from_owner(map)));
            }
        }
        Ok(FileBytes::Read(file.try_clone()?))
    }

    /// The same bytes again: the mapping shared, or the file opened once more.
    pub(crate) fn try_clone(&self) -> std::io::Result<FileBytes> {
        Ok(match self {
            FileBytes::Mapped(b) => FileBytes::Mapped(b.clone()),
            FileBytes::Read(f) => FileBytes::Read(f.try_clone()?),
        })
    }
}

/// Whether the value of [`ENV_MMAP`] leaves mapping on.
fn mapping_on(switch: Option<std::ffi::OsString>) -> bool {
    let switch = switch.unwrap_or_default();
    let switch = switch.to_string_lossy().trim().to_ascii_lowercase();
    !["off", "0", "false", "no"].contains(&switch.as_str())
}

impl Length for FileBytes {
    fn len(&self) -> u64 {
        match self {
            FileBytes::Mapped(b) => b.len() as u64,
            FileBytes::Read(f) => Length::len(f),
        }
    }
}

impl ChunkReader for FileBytes {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        Ok(match self {
            FileBytes::Mapped(b) => Box::new(b.get_read(start)?),
            FileBytes::Read(f) => Box::new(f.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        // Checked here: the crate's own checks can wrap (`Bytes`) or allocate the
        // length asked for first (`File`).
        let end = start.checked_add(length as u64);
        if end.is_none_or(|end| end > Length::len(self)) {
            return Err(ParquetError::EOF(format!(
                "{length} bytes at offset {start} are past the end of the file ({} bytes)",
                Length::len(self)
            )));
        }
        match self {
            FileBytes::Mapped(b) => b.get_bytes(start, length),
            FileBytes::Read(f) => f.get_bytes(start, length),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_is_on_unless_turned_off() {
        assert!(mapping_on(None));
        assert!(mapping_on(Some("on".into())));
        for off in ["off", "OFF", "0", "false", "no", " off "] {
            assert!(!mapping_on(Some(off.into())), "{off}");
        }
    }

    #[test]
    fn both_sources_give_the_same_bytes() {
        let path = std::env::temp_dir().join(format!("broadhead-source-{}", std::process::id()));
        let content: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let file = File::open(&path).unwrap();
        let mapped = FileBytes::of(&file).unwrap();
        assert!(matches!(mapped, FileBytes::Mapped(_)));
        let read = FileBytes::Read(file.try_clone().unwrap());
        for source in [&mapped, &read] {
            assert_eq!(Length::len(source), 10_000);
            assert_eq!(source.get_bytes(100, 50).unwrap(), &content[100..150]);
            let mut tail = Vec::new();
            source
                .get_read(9_990)
                .unwrap()
                .read_to_end(&mut tail)
                .unwrap();
            assert_eq!(tail, &content[9_990..]);
            assert!(source.get_bytes(9_990, 20).is_err(), "past the end");
            assert!(
                source.get_bytes(10, usize::MAX).is_err(),
                "a length that wraps"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }
}
