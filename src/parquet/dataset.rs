//! Datasets: the files paths name, opened and checked, with one schema; type
//! conversions to the engine's types.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow_schema::ArrowError;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};

use super::footer::{check_footer, check_metadata, decode_footer};
use super::{guarded, ScanError};
use crate::escape::escape_path;
use crate::types::{sql_type_name, DECIMAL128_MAX_PRECISION, DECIMAL256_MAX_PRECISION};

/// The type a column of type `t` is read as, when the engine lacks `t` itself:
/// decimals stay exact decimals of the same precision and scale (`engine_decimal`;
/// `Decimal32` and `Decimal64` are read as they are, the JIT reads them in place),
/// `FixedSizeBinary` becomes BLOB (`Binary`), `Float16` becomes REAL, `Date64` becomes
/// DATE (days); a dictionary of a type that is converted is decoded to the converted
/// type (other dictionaries stay). `None`: read as it is — so every string and BLOB
/// layout the reader produces (`Utf8`, `LargeUtf8`, `Utf8View`, `Binary`,
/// `LargeBinary`, `BinaryView`, as the file's embedded Arrow schema says) reaches the
/// engine unconverted: both back ends read each in place (`crate::layout`).
pub fn engine_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Decimal32(_, s) | DataType::Decimal64(_, s) if *s >= 0 => None,
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => Some(engine_decimal(*p, *s)).filter(|e| e != t),
        DataType::FixedSizeBinary(_) => Some(DataType::Binary),
        DataType::Date64 => Some(DataType::Date32),
        DataType::Float16 => Some(DataType::Float32),
        // Dictionaries of engine types stay dictionaries: filters evaluate them once
        // per dictionary value (`broadhead::dictionary`); others are decoded.
        DataType::Dictionary(_, value) => engine_type(value),
        _ => None,
    }
}

/// The decimal type a Parquet or Arrow `DECIMAL(p, s)` column is computed as, exactly:
/// `Decimal128(p, s)` up to 38 digits and `Decimal256(p, s)` above (whatever its Arrow
/// width); a negative scale (Arrow allows one, Parquet does not) is read as
/// `DECIMAL(p - s, 0)`. Only a negative scale beyond 76 digits has no exact engine
/// type: it is read as DOUBLE.
fn engine_decimal(p: u8, s: i8) -> DataType {
    let (p, s) = if s < 0 {
        (p as i32 - s as i32, 0)
    } else {
        (p as i32, s)
    };
    match u8::try_from(p) {
        Ok(p) if p <= DECIMAL128_MAX_PRECISION => DataType::Decimal128(p, s),
        Ok(p) if p <= DECIMAL256_MAX_PRECISION => DataType::Decimal256(p, s),
        _ => DataType::Float64,
    }
}

/// `schema` with every field of a type the engine lacks converted ([`engine_type`]).
pub fn engine_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match engine_type(f.data_type()) {
            Some(t) => Field::new(f.name(), t, f.is_nullable()),
            None => f.as_ref().clone(),
        })
        .collect();
    Schema::new(fields)
}

/// `batch` with its columns cast to the types of `target` (which has the same fields
/// but for types, as [`engine_schema`] makes it).
pub fn to_engine_batch(batch: RecordBatch, target: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    if batch.schema().fields() == target.fields() {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else if c.data_type() == &DataType::Date64 {
                date64_as_date(c)
            } else {
                cast(c, f.data_type())
            }
        })
        .collect::<Result<Vec<ArrayRef>, _>>()?;
    RecordBatch::try_new_with_options(
        target.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

/// A DATE64 column (milliseconds) as DATE (days), rounding toward the past (Arrow's
/// DATE64 holds whole days, so that loses nothing); a value beyond DATE's range
/// (±5.8 million years) is an error. Arrow's cast truncates toward zero and wraps.
fn date64_as_date(a: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    use arrow::array::{AsArray, Date32Array};
    use arrow::datatypes::Date64Type;
    const MS_PER_DAY: i64 = 86_400_000;
    let days: Date32Array = a.as_primitive::<Date64Type>().try_unary(|ms| {
        i32::try_from(ms.div_euclid(MS_PER_DAY)).map_err(|_| {
            ArrowError::ComputeError(format!("DATE64 value {ms} is out of the range of DATE"))
        })
    })?;
    Ok(Arc::new(days))
}

/// An I/O error in words, with the cases a user meets named plainly.
pub(super) fn describe_io(e: &std::io::Error) -> String {
    // ELOOP: too many levels of symbolic links.
    if e.raw_os_error() == Some(40) {
        return "symlink loop (too many levels of symbolic links)".into();
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// An error unless `meta` (followed through links) is of a regular file.
pub(super) fn check_regular(path: &Path, meta: &std::fs::Metadata) -> Result<(), ScanError> {
    if meta.is_file() {
        return Ok(());
    }
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a file"
        }
    };
    #[cfg(not(unix))]
    let what = "not a file";
    Err(ScanError::file(
        path,
        format!("not a regular file ({what})"),
    ))
}

/// One Parquet file of a dataset, with its footer read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its footer (schema, row groups, statistics).
    pub metadata: ArrowReaderMetadata,
}

impl SourceFile {
    /// Opens a file and reads its footer; errors name the file and say what is wrong
    /// with it (not a regular file, empty, not Parquet, corrupt: `corrupt Parquet
    /// (…)`). The footer is checked against the file's size before the parquet crate
    /// decodes it, so a forged footer cannot make it allocate what it claims.
    pub fn open(path: &Path) -> Result<SourceFile, ScanError> {
        let meta = std::fs::metadata(path).map_err(|e| ScanError::file(path, describe_io(&e)))?;
        check_regular(path, &meta)?;
        let size = meta.len();
        if size == 0 {
            return Err(ScanError::file(
                path,
                "is empty (0 bytes), not a Parquet file",
            ));
        }
        let mut file = File::open(path).map_err(|e| ScanError::file(path, describe_io(&e)))?;
        let not_parquet = |why: &str| ScanError::file(path, format!("not a Parquet file ({why})"));
        if size < 12 {
            return Err(not_parquet(&format!(
                "{size} bytes, shorter than a Parquet header and footer"
            )));
        }
        let io = |e: std::io::Error| ScanError::file(path, describe_io(&e));
        let mut head = [0u8; 4];
        file.read_exact(&mut head).map_err(io)?;
        let mut tail = [0u8; 8];
        file.seek(SeekFrom::End(-8)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        if &head != b"PAR1" {
            return Err(not_parquet("it does not begin with PAR1"));
        }
        if &tail[4..] != b"PAR1" {
            return Err(not_parquet("it does not end with PAR1: truncated?"));
        }
        let footer_len = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as u64;
        if footer_len + 12 > size {
            return Err(ScanError::corrupt(
                path,
                format!("its footer claims {footer_len} bytes of a {size}-byte file"),
            ));
        }
        let mut footer = vec![0u8; footer_len as usize];
        file.seek(SeekFrom::Start(size - 8 - footer_len))
            .map_err(io)?;
        file.read_exact(&mut footer).map_err(io)?;
        check_footer(&footer).map_err(|e| ScanError::corrupt(path, e))?;
        let metadata = guarded(|| {
            ArrowReaderMetadata::try_new(
                Arc::new(decode_footer(&footer)?),
                ArrowReaderOptions::new(),
            )
            .map_err(|e| e.to_string())
        })
        .map_err(|panic| ScanError::corrupt(path, panic))?
        .map_err(|e| ScanError::corrupt(path, e))?;
        check_metadata(metadata.metadata(), size - 8 - footer_len)
            .map_err(|e| ScanError::corrupt(path, e))?;
        let metadata = match narrow_decimals(&metadata) {
            Some(schema) => ArrowReaderMetadata::try_new(
                metadata.metadata().clone(),
                ArrowReaderOptions::new().with_schema(schema),
            )
            .map_err(|e| ScanError::corrupt(path, e))?,
            None => metadata,
        };
        Ok(SourceFile {
            path: path.to_path_buf(),
            metadata,
        })
    }

    /// The number of rows.
    pub fn num_rows(&self) -> u64 {
        self.metadata.metadata().file_metadata().num_rows().max(0) as u64
    }
}

/// The schema a file is read with when it has DECIMAL columns of at most 18 digits
/// stored as `INT32`, `INT64` or `FIXED_LEN_BYTE_ARRAY` (what Parquet writers use for
/// them: 4 or 8 bytes a value for the first two): the file's own schema with those
/// columns as `Decimal32` (`INT32`) or `Decimal64` (the others), which the reader
/// produces without widening each value to the 16 bytes of the `Decimal128` it makes
/// by default; the JIT reads them in place as it reads INTEGER and BIGINT columns.
/// `None` when there is no such column. Only top-level columns are narrowed.
fn narrow_decimals(metadata: &ArrowReaderMetadata) -> Option<SchemaRef> {
    use parquet::basic::Type as Physical;
    let descr = metadata.parquet_schema();
    let schema = metadata.schema();
    // The leaves of each top-level column (one for a primitive column).
    let mut leaves = vec![Vec::new(); schema.fields().len()];
    for l in 0..descr.num_columns() {
        if let Some(of_root) = leaves.get_mut(descr.get_column_root_idx(l)) {
            of_root.push(l);
        }
    }
    let mut changed = false;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .zip(&leaves)
        .map(|(f, leaves)| {
            let narrow = match (f.data_type(), &leaves[..]) {
                (DataType::Decimal128(p, s), [leaf]) if *p <= 18 && *s >= 0 => {
                    match descr.column(*leaf).physical_type() {
                        Physical::INT32 if *p <= 9 => Some(DataType::Decimal32(*p, *s)),
                        Physical::INT64 | Physical::FIXED_LEN_BYTE_ARRAY => {
                            Some(DataType::Decimal64(*p, *s))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            match narrow {
                Some(t) => {
                    changed = true;
                    f.as_ref().clone().with_data_type(t)
                }
                None => f.as_ref().clone(),
            }
        })
        .collect();
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// Parquet files that share one schema.
#[derive(Debug, Clone)]
pub struct Dataset {
    files: Vec<SourceFile>,
    file_schema: SchemaRef,
    schema: SchemaRef,
}

impl Dataset {
    /// Opens the files (at least one) and checks that they have the same columns and
    /// types; the error names the first file that differs from the first file.
    pub fn open(paths: &[PathBuf]) -> Result<Dataset, ScanError> {
        let files = paths
            .iter()
            .map(|p| SourceFile::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(first) = files.first() else {
            return Err(ScanError::Input("no input files".into()));
        };
        let file_schema = first.metadata.schema().clone();
        for f in &files[1..] {
            if let Some(diff) = schema_difference(&file_schema, f.metadata.schema()) {
                return Err(ScanError::file(
                    &f.path,
                    format!(
                        "its schema differs from that of {}: {diff}",
                        escape_path(&first.path)
                    ),
                ));
            }
        }
        let schema = Arc::new(engine_schema(&file_schema));
        Ok(Dataset {
            files,
            file_schema,
            schema,
        })
    }

    /// The schema expressions are bound against (types converted by [`engine_type`]).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The schema as stored in the files.
    pub fn file_schema(&self) -> &SchemaRef {
        &self.file_schema
    }

    /// The files.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The total number of rows.
    pub fn num_rows(&self) -> u64 {
        self.files.iter().map(|f| f.num_rows()).sum()
    }
}

/// How two schemas differ, if they do (names and types; nullability may differ).
fn schema_difference(a: &Schema, b: &Schema) -> Option<String> {
    let name = |t: &DataType| sql_type_name(t);
    for (x, y) in a.fields().iter().zip(b.fields()) {
        if x.name() != y.name() {
            return Some(format!(
                "it has column '{}' where the first has '{}'",
                y.name(),
                x.name()
            ));
        }
        if x.data_type() != y.data_type() {
            return Some(format!(
                "column '{}' is {} there and {} here",
                x.name(),
                name(x.data_type()),
                name(y.data_type())
            ));
        }
    }
    if a.fields().len() != b.fields().len() {
        return Some(format!(
            "it has {} columns, the first has {}",
            b.fields().len(),
            a.fields().len()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_types() {
        // Decimals are read exactly, as 128-bit decimals up to 38 digits.
        assert_eq!(engine_type(&DataType::Decimal128(15, 2)), None);
        assert_eq!(engine_type(&DataType::Decimal256(50, 10)), None);
        // 32- and 64-bit decimals are read in place (bound as DECIMAL).
        assert_eq!(engine_type(&DataType::Decimal32(9, 2)), None);
        assert_eq!(engine_type(&DataType::Decimal64(18, 0)), None);
        for (t, read_as) in [
            (DataType::Decimal64(15, -2), DataType::Decimal128(17, 0)),
            (DataType::Decimal256(20, 4), DataType::Decimal128(20, 4)),
            (DataType::Decimal128(5, -2), DataType::Decimal128(7, 0)),
            (DataType::Decimal128(38, -3), DataType::Decimal256(41, 0)),
            (DataType::Decimal256(76, -1), DataType::Float64),
        ] {
            assert_eq!(engine_type(&t), Some(read_as), "{t}");
        }
        // Every string and BLOB layout is read as it is (the engine reads each in
        // place); only `FixedSizeBinary` is converted.
        for t in [
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
        ] {
            assert_eq!(engine_type(&t), None, "{t}");
        }
        assert_eq!(
            engine_type(&DataType::FixedSizeBinary(4)),
            Some(DataType::Binary)
        );
        assert_eq!(engine_type(&DataType::Date32), None);
        let large = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::LargeUtf8));
        assert_eq!(engine_type(&large), None);
        let fixed = DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::FixedSizeBinary(2)),
        );
        assert_eq!(engine_type(&fixed), Some(DataType::Binary));
        let strings = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        assert_eq!(engine_type(&strings), None);
    }
}
