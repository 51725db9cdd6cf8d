//! Writing results: formats, stdout, or an output file (`target`).

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::args::{Format, OutputArgs};
use super::pipe::ReaderGone;
use super::target::{open_target, Opened};
use super::temp::Temp;
use super::{CliResult, Failure};

/// Rows a table shows when no --limit is given.
const TABLE_ROWS: usize = 20;

/// Writes formatted text to stdout. A reader that went away (`| head`) is noted (the
/// command then ends quietly with exit code 0); any other failure is an error.
pub fn print(args: std::fmt::Arguments) -> CliResult {
    ReaderGone(std::io::stdout())
        .write_fmt(args)
        .map_err(stdout_failure)
}

/// Flushes stdout (a full disk shows here when the last line had no newline).
pub fn flush_stdout() -> CliResult {
    ReaderGone(std::io::stdout())
        .flush()
        .map_err(stdout_failure)
}

fn stdout_failure(e: std::io::Error) -> Failure {
    Failure::runtime(format!("writing to stdout: {e}"))
}

type Sink = Box<dyn Write + Send>;

enum Writer {
    Table {
        out: Sink,
        batches: Vec<RecordBatch>,
        shown: usize,
        max: usize,
        total: usize,
        /// The width to fit, when writing to a terminal.
        width: Option<usize>,
    },
    Csv {
        out: Sink,
        /// The columns CSV cannot hold as they are (lists, structs, maps): written as
        /// text, `[a, b]`, as DuckDB does.
        as_text: Vec<bool>,
        text_schema: SchemaRef,
        /// Whether the header line has been written.
        written: bool,
        /// The text of a batch, before it is written.
        text: Vec<u8>,
    },
    Json(arrow::json::LineDelimitedWriter<Sink>),
    Parquet(ArrowWriter<Sink>),
    Arrow(arrow::ipc::writer::FileWriter<Sink>),
}

/// Where the bytes go.
enum Destination {
    /// Stdout.
    Stdout,
    /// An output file (see `target`): written directly, or a temporary file renamed
    /// over its target when complete.
    File(Option<(Temp, PathBuf)>),
}

/// A destination for result batches.
pub struct Output {
    writer: Writer,
    destination: Destination,
}

/// The format: as asked, else from the output file's extension, else table on a
/// terminal and CSV otherwise.
pub fn choose_format(args: &OutputArgs) -> Format {
    if let Some(f) = args.format {
        return f;
    }
    if let Some(path) = &args.output {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        return match ext.as_deref() {
            Some("parquet") => Format::Parquet,
            Some("arrow" | "ipc" | "feather") => Format::Arrow,
            Some("json" | "jsonl" | "ndjson") => Format::Json,
            Some("txt") => Format::Table,
            _ => Format::Csv,
        };
    }
    if std::io::stdout().is_terminal() {
        Format::Table
    } else {
        Format::Csv
    }
}

/// Whether CSV cannot hold a column of this type as it is.
fn csv_needs_text(t: &DataType) -> bool {
    t.is_nested() || is_blob(t)
}

/// Whether values of `t` are BLOBs (any Arrow binary layout): the text formats
/// (table, CSV, JSON) print them as `CAST(x AS VARCHAR)` does, DuckDB's escaped text
/// (`A\xFF\x00`); Parquet and Arrow outputs keep the bytes.
fn is_blob(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    )
}

/// A BLOB array as its text ([`is_blob`]), NULL staying NULL.
fn blob_text(a: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let bytes = arrow::compute::cast(a, &DataType::Binary)?;
    let text: StringArray = bytes
        .as_binary::<i32>()
        .iter()
        .map(|v| v.map(broadhead::scalar::format_blob))
        .collect();
    Ok(Arc::new(text))
}

/// `batch` with its BLOB columns as text, for the table and JSON outputs.
fn blobs_as_text(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| is_blob(f.data_type())) {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(fields.capacity());
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if is_blob(f.data_type()) {
            fields.push(Field::new(f.name(), DataType::Utf8, true));
            columns.push(blob_text(c)?);
        } else {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

/// The width a table on stdout must fit: `COLUMNS` if set, else the terminal's.
fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return Some(n);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
}

/// JSON numbers for floats, and for NaN and the infinities the strings `"NaN"`,
/// `"Infinity"` and `"-Infinity"` as DuckDB writes them (arrow writes `null`, which
/// cannot be told from a NULL).
#[derive(Debug)]
struct FloatEncoders;

enum FloatEncoder<'a> {
    F16(&'a arrow::array::Float16Array),
    F32(&'a arrow::array::Float32Array),
    F64(&'a arrow::array::Float64Array),
}

impl Encoder for FloatEncoder<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        use lexical_core::FormattedSize;
        let mut buf = [0u8; f64::FORMATTED_SIZE];
        let (v, text) = match self {
            FloatEncoder::F16(a) => {
                let v = a.value(idx).to_f32();
                (f64::from(v), lexical_core::write(v, &mut buf))
            }
            FloatEncoder::F32(a) => {
                let v = a.value(idx);
                (f64::from(v), lexical_core::write(v, &mut buf))
            }
            FloatEncoder::F64(a) => {
                let v = a.value(idx);
                (v, lexical_core::write(v, &mut buf))
            }
        };
        out.extend_from_slice(if v.is_nan() {
            b"\"NaN\""
        } else if v == f64::INFINITY {
            b"\"Infinity\""
        } else if v == f64::NEG_INFINITY {
            b"\"-Infinity\""
        } else {
            text
        });
    }
}

impl EncoderFactory for FloatEncoders {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        use arrow::datatypes::{Float16Type, Float32Type, Float64Type};
        let encoder = match array.data_type() {
            DataType::Float16 => FloatEncoder::F16(array.as_primitive::<Float16Type>()),
            DataType::Float32 => FloatEncoder::F32(array.as_primitive::<Float32Type>()),
            DataType::Float64 => FloatEncoder::F64(array.as_primitive::<Float64Type>()),
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(
            Box::new(encoder),
            array.nulls().cloned(),
        )))
    }
}

/// `batch` with the columns marked in `as_text` formatted as text (NULL stays NULL).
fn with_text_columns(
    batch: &RecordBatch,
    as_text: &[bool],
    schema: &SchemaRef,
) -> Result<RecordBatch, ArrowError> {
    let options = FormatOptions::new();
    let columns = batch
        .columns()
        .iter()
        .zip(as_text)
        .map(|(c, text)| {
            if !*text {
                return Ok(c.clone());
            }
            if is_blob(c.data_type()) {
                return blob_text(c);
            }
            let f = ArrayFormatter::try_new(c.as_ref(), &options)?;
            let values = (0..c.len())
                .map(|i| {
                    c.is_valid(i)
                        .then(|| f.value(i).try_to_string())
                        .transpose()
                })
                .collect::<Result<StringArray, ArrowError>>()?;
            Ok(Arc::new(values) as ArrayRef)
        })
        .collect::<Result<Vec<_>, ArrowError>>()?;
    RecordBatch::try_new(schema.clone(), columns)
}

impl Output {
    /// Opens the destination for batches of `schema`. `table_rows`: how many rows a
    /// table shows (default 20).
    pub fn new(
        args: &OutputArgs,
        schema: &SchemaRef,
        table_rows: Option<usize>,
    ) -> CliResult<Output> {
        let format = choose_format(args);
        let (sink, destination): (Sink, _) = match &args.output {
            Some(path) => {
                let opened = open_target(path, args.force)?;
                (
                    Box::new(BufWriter::with_capacity(1 << 20, opened.file)),
                    Destination::File(opened.rename),
                )
            }
            None => (
                Box::new(BufWriter::with_capacity(
                    1 << 16,
                    ReaderGone(std::io::stdout()),
                )),
                Destination::Stdout,
            ),
        };
        let arrow_err = |e: ArrowError| Failure::runtime(e.to_string());
        let writer = match format {
            Format::Table => Writer::Table {
                out: sink,
                batches: Vec::new(),
                shown: 0,
                max: table_rows.unwrap_or(TABLE_ROWS),
                total: 0,
                width: match destination {
                    Destination::Stdout => terminal_width(),
                    _ => None,
                },
            },
            Format::Csv => {
                let as_text: Vec<bool> = schema
                    .fields()
                    .iter()
                    .map(|f| csv_needs_text(f.data_type()))
                    .collect();
                let text_schema = Arc::new(Schema::new(
                    schema
                        .fields()
                        .iter()
                        .zip(&as_text)
                        .map(|(f, text)| {
                            if *text {
                                Field::new(f.name(), DataType::Utf8, true)
                            } else {
                                f.as_ref().clone()
                            }
                        })
                        .collect::<Vec<_>>(),
                ));
                Writer::Csv {
                    out: sink,
                    as_text,
                    text_schema,
                    written: false,
                    text: Vec::new(),
                }
            }
            Format::Json => Writer::Json(
                arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .with_encoder_factory(Arc::new(FloatEncoders))
                    .build::<_, arrow::json::writer::LineDelimited>(sink),
            ),
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .build();
                Writer::Parquet(
                    ArrowWriter::try_new(sink, schema.clone(), Some(props))
                        .map_err(|e| Failure::runtime(e.to_string()))?,
                )
            }
            Format::Arrow => Writer::Arrow(
                arrow::ipc::writer::FileWriter::try_new(sink, schema).map_err(arrow_err)?,
            ),
        };
        Ok(Output {
            writer,
            destination,
        })
    }

    /// Writes a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> CliResult {
        let err = |e: String| Failure::runtime(format!("writing the output: {e}"));
        match &mut self.writer {
            Writer::Table {
                batches,
                shown,
                max,
                total,
                ..
            } => {
                *total += batch.num_rows();
                if *shown < *max {
                    let take = (*max - *shown).min(batch.num_rows());
                    let shown_rows =
                        blobs_as_text(&batch.slice(0, take)).map_err(|e| err(e.to_string()))?;
                    batches.push(shown_rows);
                    *shown += take;
                }
                Ok(())
            }
            Writer::Csv {
                out,
                as_text,
                text_schema,
                written,
                text,
            } => {
                text.clear();
                if !*written {
                    super::csv::header(text_schema, text);
                    *written = true;
                }
                if as_text.iter().any(|t| *t) {
                    let batch = with_text_columns(batch, as_text, text_schema)
                        .map_err(|e| err(e.to_string()))?;
                    super::csv::rows(&batch, text)
                } else {
                    super::csv::rows(batch, text)
                }
                .map_err(|e| err(e.to_string()))?;
                out.write_all(text).map_err(|e| err(e.to_string()))
            }
            Writer::Json(w) => blobs_as_text(batch)
                .and_then(|b| w.write(&b))
                .map_err(|e| err(e.to_string())),
            Writer::Parquet(w) => w.write(batch).map_err(|e| err(e.to_string())),
            Writer::Arrow(w) => w.write(batch).map_err(|e| err(e.to_string())),
        }
    }

    /// Finishes the output; an output file appears only now.
    pub fn finish(self, schema: &SchemaRef) -> CliResult {
        let err = |e: String| Failure::runtime(format!("writing the output: {e}"));
        let mut sink: Sink = match self.writer {
            Writer::Table {
                mut out,
                batches,
                total,
                width,
                ..
            } => {
                let text = super::table::render(schema, &batches, total, width)
                    .map_err(|e| err(e.to_string()))?;
                out.write_all(text.as_bytes())
                    .map_err(|e| err(e.to_string()))?;
                out
            }
            Writer::Csv {
                mut out,
                written,
                text_schema,
                ..
            } => {
                if !written {
                    // The header line, even with no rows.
                    let mut text = Vec::new();
                    super::csv::header(&text_schema, &mut text);
                    out.write_all(&text).map_err(|e| err(e.to_string()))?;
                }
                out
            }
            Writer::Json(mut w) => {
                w.finish().map_err(|e| err(e.to_string()))?;
                w.into_inner()
            }
            Writer::Parquet(w) => w.into_inner().map_err(|e| err(e.to_string()))?,
            Writer::Arrow(mut w) => {
                w.finish().map_err(|e| err(e.to_string()))?;
                w.into_inner().map_err(|e| err(e.to_string()))?
            }
        };
        sink.flush().map_err(|e| err(e.to_string()))?;
        drop(sink);
        match self.destination {
            Destination::File(rename) => Opened::finish(rename),
            Destination::Stdout => Ok(()),
        }
    }
}

/// Writes `batches` to the destination in one go.
pub fn write_all(args: &OutputArgs, schema: &SchemaRef, batches: &[RecordBatch]) -> CliResult {
    let mut out = Output::new(args, schema, None)?;
    for b in batches {
        out.write(b)?;
    }
    out.finish(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Decimal128Array, Decimal256Array};
    use arrow::datatypes::i256;

    /// DECIMAL(15,2) and DECIMAL(40,0) columns with a NULL.
    fn decimals() -> (SchemaRef, RecordBatch) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("big", DataType::Decimal256(40, 0), true),
        ]));
        let price = Decimal128Array::from(vec![Some(201492), Some(2900), Some(-5), None])
            .with_precision_and_scale(15, 2)
            .unwrap();
        let big = Decimal256Array::from(vec![
            Some(i256::from_string("12345678901234567890123").unwrap()),
            Some(i256::ZERO),
            None,
            Some(i256::from_i128(-1)),
        ])
        .with_precision_and_scale(40, 0)
        .unwrap();
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(price), Arc::new(big)]).unwrap();
        (schema, batch)
    }

    fn written(format: Format) -> String {
        let (schema, batch) = decimals();
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("out");
        let args = OutputArgs {
            format: Some(format),
            output: Some(path.clone()),
            force: false,
        };
        write_all(&args, &schema, &[batch]).unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    /// Exact values with the column's scale, as DuckDB prints them (`29.00`, not
    /// `29.0`); JSON numbers carry the same digits.
    #[test]
    fn decimals_print_exactly_with_their_scale() {
        assert_eq!(
            written(Format::Csv),
            "price,big\n2014.92,12345678901234567890123\n29.00,0\n-0.05,\n,-1\n"
        );
        assert_eq!(
            written(Format::Json),
            "{\"price\":2014.92,\"big\":12345678901234567890123}\n\
             {\"price\":29.00,\"big\":0}\n\
             {\"price\":-0.05,\"big\":null}\n\
             {\"price\":null,\"big\":-1}\n"
        );
        let table = written(Format::Table);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[2], "│ decimal(15,2) │      decimal(40,0)      │");
        assert_eq!(lines[4], "│       2014.92 │ 12345678901234567890123 │");
        assert_eq!(lines[5], "│         29.00 │                       0 │");
        assert_eq!(lines[6], "│         -0.05 │                    NULL │");
        assert_eq!(lines[7], "│          NULL │                      -1 │");
    }
}
