//! Parquet (feature `parquet`): datasets of files, a scan with the predicate pushed
//! into the reader, and the predicate itself for your own reader.
//!
//! - [`Dataset`]: the Parquet files that paths, directories
//!   and globs name, with one schema; files are checked before the parquet crate reads
//!   them, so a truncated or forged file is `corrupt Parquet (…)`, never a panic or an
//!   allocation of what its footer claims.
//! - [`Scan`]: some columns of a dataset where a predicate is TRUE:
//!   - row groups whose statistics prove the predicate never TRUE are skipped
//!     ([`crate::prune`]); a predicate that folds to FALSE or NULL skips them all, one
//!     that folds to TRUE reads no column for itself and selects every row;
//!   - with pushdown (the default) the compiled predicate runs inside the parquet
//!     reader as a [`JitPredicate`] in its `RowFilter`: only the predicate's columns
//!     are decoded for every row, the other output columns for the surviving rows only;
//!   - with pushdown, the conjuncts of a predicate that cannot fail on columns whose
//!     pages are all dictionary-encoded are decided before the reader, on the
//!     dictionaries and keys (once per dictionary value for a conjunct on one column,
//!     on values decoded from the keys for one on several); the rows they keep are
//!     the reader's selection ([`ScanStats::keyed`] counts the row groups done so);
//!     a predicate that can fail is decided so whole, when its columns allow, and a
//!     row group where it fails is read by the reader, which names the row;
//!     when the conjuncts on one column keep at most one row in eight, those on
//!     several are evaluated at the kept rows only, their values read where they
//!     lie ([`ScanStats::narrowed`]);
//!   - when those conjuncts decide every row of a row group and keep at most half of
//!     them, the output columns are read at those rows without the reader: each
//!     page walked once, each kept row's value looked up where it lies instead of
//!     the reader's skip and read per run of kept rows ([`ScanStats::gathered`]);
//!   - row groups are read on a pool of threads, and the results come back in file
//!     order; at most a couple of batches per thread are in flight, so memory stays
//!     bounded by batch size × threads whatever the file size;
//!   - the reader decodes pages from the file mapped into memory, not copied out of
//!     the page cache ([`ENV_MMAP`] turns that off; a file truncated by another
//!     process while it is mapped ends the process with `SIGBUS`).
//! - [`JitPredicate`]: a compiled predicate as the parquet crate's `ArrowPredicate`,
//!   for a `ParquetRecordBatchReaderBuilder` of your own; errors in the data name the
//!   row group and the row of the file.
//!
//! Columns are kept by position throughout: two columns of one name are two columns.
//! Column types the engine does not have are converted as they are read (see
//! [`engine_type`]): `FixedSizeBinary` to BLOB, half floats to REAL, DATE64 to DATE;
//! decimals stay exact. Strings and BLOBs keep the layout the reader produces (the
//! file's embedded Arrow schema decides: `LargeUtf8`, `Utf8View`, `LargeBinary`,
//! `BinaryView` or the plain ones), with no cast per batch: the engine reads each in
//! place. A DECIMAL of at most 18 digits
//! stored as `INT32`, `INT64` or `FIXED_LEN_BYTE_ARRAY` (as Parquet writers store
//! them) is read as Arrow's `Decimal32` (`INT32`) or `Decimal64`, 4 or 8 bytes a
//! value, which the JIT reads in place
//! (the parquet crate's default, `Decimal128`, takes 16). Dictionary columns of engine
//! types stay dictionaries: a predicate over one is evaluated once per dictionary
//! value.
//!
//! The parquet and arrow crates panic on some corrupt files; the scan catches those
//! panics and reports them as errors. So that they are not printed as crashes, the
//! first scan wraps the process's panic hook once: the wrapped hook runs for every
//! panic but those caught this way.
//!
//! `broadhead::scan` is another name for this module.

mod conjuncts;
mod dataset;
mod footer;
mod gather;
mod keys;
mod pages;
mod paths;
mod predicate;
mod scan;
mod source;

use std::path::{Path, PathBuf};

use parquet::basic::Encoding;
use parquet::file::metadata::ParquetMetaData;

pub use dataset::{engine_schema, engine_type, to_engine_batch, Dataset, SourceFile};
pub use paths::expand_paths;
pub use predicate::{JitPredicate, RowError};
pub use scan::{Scan, ScanItem, ScanOptions, ScanStats};
pub use source::ENV_MMAP;

/// The single leaf of root column `column`, if it has exactly one (columns are found
/// by position, never by name).
pub(crate) fn single_leaf(meta: &ParquetMetaData, column: usize) -> Option<usize> {
    let descr = meta.file_metadata().schema_descr();
    let mut leaves = (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == column);
    match (leaves.next(), leaves.next()) {
        (Some(leaf), None) => Some(leaf),
        _ => None,
    }
}

/// The Parquet leaf of STRUCT field `field` (a field holding one value per row, not
/// a list or a STRUCT): the root's leaves come in the order of its Arrow type's
/// fields, depth first, so the leaf is the root's first plus those of the fields
/// before it on the way down.
pub(crate) fn field_leaf(
    meta: &ParquetMetaData,
    root_type: &arrow::datatypes::DataType,
    field: &crate::struct_fields::StructField,
) -> Option<usize> {
    use arrow::datatypes::DataType;
    fn leaves(t: &DataType) -> usize {
        match t {
            DataType::Struct(children) => children.iter().map(|c| leaves(c.data_type())).sum(),
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                leaves(f.data_type())
            }
            DataType::Map(f, _) => leaves(f.data_type()),
            _ => 1,
        }
    }
    let descr = meta.file_metadata().schema_descr();
    let first = (0..descr.num_columns()).find(|&l| descr.get_column_root_idx(l) == field.root)?;
    let mut at = first;
    let mut t = root_type;
    for &child in &field.path {
        let DataType::Struct(children) = t else {
            return None;
        };
        at += children[..child]
            .iter()
            .map(|c| leaves(c.data_type()))
            .sum::<usize>();
        t = children[child].data_type();
    }
    (leaves(t) == 1 && !matches!(t, DataType::Struct(_)) && at < descr.num_columns()).then_some(at)
}

/// Whether every data page of every chunk of leaf `leaf` is dictionary-encoded, as
/// the chunks' page encoding statistics say (no statistics: not known, so no).
pub(crate) fn dictionary_encoded(meta: &ParquetMetaData, leaf: usize) -> bool {
    meta.row_groups().iter().all(|rg| {
        let chunk = rg.column(leaf);
        chunk.dictionary_page_offset().is_some()
            && chunk.page_encoding_stats_mask().is_some_and(|mask| {
                mask.is_only(Encoding::RLE_DICTIONARY) || mask.is_only(Encoding::PLAIN_DICTIONARY)
            })
    })
}

/// A scan failure.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The expression is wrong, or evaluating it failed.
    #[error(transparent)]
    Engine(#[from] crate::Error),
    /// A file could not be read, is not Parquet, is corrupted, or does not fit.
    #[error("{}: {message}", crate::escape::escape_path(path))]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Evaluating the predicate failed on a row of a file.
    #[error("{}, {error}", crate::escape::escape_path(path))]
    Row {
        /// The file.
        path: PathBuf,
        /// Where in the file, and what.
        error: RowError,
    },
    /// The input paths name no file.
    #[error("{0}")]
    Input(String),
}

impl ScanError {
    pub(crate) fn file(path: &Path, message: impl std::fmt::Display) -> ScanError {
        ScanError::File {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }

    /// `path: corrupt Parquet (detail)`.
    pub(crate) fn corrupt(path: &Path, detail: impl std::fmt::Display) -> ScanError {
        ScanError::file(path, format!("corrupt Parquet ({detail})"))
    }
}

std::thread_local! {
    /// Whether this thread is inside [`guarded`]: its panics are reported as errors.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic inside it (the parquet and arrow crates panic on some
/// corrupt files) into `Err` with the panic's message. The process's panic hook is
/// not run for such panics: they are errors in the input, not bugs to report. (The
/// first call wraps the installed hook once so that it skips guarded panics.)
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static WRAP_HOOK: std::sync::Once = std::sync::Once::new();
    WRAP_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(|g| g.get()) {
                previous(info)
            }
        }));
    });
    let outer = GUARDED.with(|g| g.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the reader panicked".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_turns_panics_into_errors() {
        assert_eq!(guarded(|| 7), Ok(7));
        let message = guarded(|| -> i32 { panic!("bad page {}", 3) });
        assert_eq!(message, Err("bad page 3".to_string()));
        // Nested guards restore the outer state.
        assert_eq!(guarded(|| guarded(|| 1)), Ok(Ok(1)));
        assert!(!GUARDED.with(|g| g.get()));
    }
}
