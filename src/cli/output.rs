//! Writing results: formats, stdout or an output file written atomically.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::util::pretty::pretty_format_batches;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use tempfile::NamedTempFile;

use super::{CliResult, Failure, Format, OutputArgs};

/// Rows a table shows when no --limit is given.
const TABLE_ROWS: usize = 20;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout failed because its reader went away (`| head`): not an
/// error worth reporting.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Stdout that remembers a broken pipe.
struct Stdout(std::io::Stdout);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).inspect_err(note_broken_pipe)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().inspect_err(note_broken_pipe)
    }
}

fn note_broken_pipe(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

type Sink = Box<dyn Write + Send>;

enum Writer {
    Table {
        out: Sink,
        batches: Vec<RecordBatch>,
        shown: usize,
        max: usize,
        total: usize,
    },
    Csv(arrow::csv::Writer<Sink>),
    Json(arrow::json::LineDelimitedWriter<Sink>),
    Parquet(ArrowWriter<Sink>),
    Arrow(arrow::ipc::writer::FileWriter<Sink>),
}

/// A destination for result batches.
pub struct Output {
    writer: Writer,
    /// The temporary file and where it goes when complete.
    file: Option<(NamedTempFile, PathBuf)>,
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
                input.display()
            )));
        }
    }
    Ok(())
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
        let (sink, file): (Sink, _) = match &args.output {
            Some(path) => {
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let tmp = temp_file_in(&dir).map_err(|e| {
                    Failure::runtime(format!("{}: cannot create the output: {e}", path.display()))
                })?;
                let handle = tmp.as_file().try_clone()?;
                (
                    Box::new(BufWriter::with_capacity(1 << 20, handle)),
                    Some((tmp, path.clone())),
                )
            }
            None => (
                Box::new(BufWriter::with_capacity(1 << 16, Stdout(std::io::stdout()))),
                None,
            ),
        };
        let arrow_err = |e: arrow::error::ArrowError| Failure::runtime(e.to_string());
        let writer = match format {
            Format::Table => Writer::Table {
                out: sink,
                batches: Vec::new(),
                shown: 0,
                max: table_rows.unwrap_or(TABLE_ROWS),
                total: 0,
            },
            Format::Csv => Writer::Csv(
                arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(sink),
            ),
            Format::Json => Writer::Json(
                arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
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
        Ok(Output { writer, file })
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
                    batches.push(batch.slice(0, take));
                    *shown += take;
                }
                Ok(())
            }
            Writer::Csv(w) => w.write(batch).map_err(|e| err(e.to_string())),
            Writer::Json(w) => w.write(batch).map_err(|e| err(e.to_string())),
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
                shown,
                total,
                ..
            } => {
                let text = if batches.is_empty() {
                    let empty = RecordBatch::new_empty(schema.clone());
                    pretty_format_batches(&[empty])
                } else {
                    pretty_format_batches(&batches)
                }
                .map_err(|e| err(e.to_string()))?;
                writeln!(out, "{text}")?;
                if total > shown {
                    writeln!(
                        out,
                        "{} rows, {} not shown (use --limit, or --format csv)",
                        total,
                        total - shown
                    )?;
                } else {
                    writeln!(out, "{total} row{}", if total == 1 { "" } else { "s" })?;
                }
                out
            }
            Writer::Csv(w) => w.into_inner(),
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
        sink.flush()?;
        drop(sink);
        if let Some((tmp, path)) = self.file {
            tmp.as_file().sync_all()?;
            tmp.persist(&path).map_err(|e| {
                Failure::runtime(format!(
                    "{}: cannot write the output: {}",
                    path.display(),
                    e.error
                ))
            })?;
        }
        Ok(())
    }
}

/// A temporary file in `dir` with the permissions an ordinary new file gets (rw-r--r--,
/// where tempfile's default is rw-------), to be renamed over the destination.
pub fn temp_file_in(dir: &std::path::Path) -> std::io::Result<NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".broadhead-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b.tempfile_in(dir)
}

/// Writes `batches` to the destination in one go.
pub fn write_all(args: &OutputArgs, schema: &SchemaRef, batches: &[RecordBatch]) -> CliResult {
    let mut out = Output::new(args, schema, None)?;
    for b in batches {
        out.write(b)?;
    }
    out.finish(schema)
}
