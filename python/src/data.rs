//! What crosses from Python: one record batch (`__arrow_c_array__`) or a stream of
//! them (`__arrow_c_stream__`: a table, a reader, a polars frame, a DuckDB result),
//! read batch by batch without copying, with Ctrl-C checked between batches.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatchReader;
use pyo3::prelude::*;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::{PyRecordBatch, PyTable};

/// Input data: one batch, or a stream of batches.
pub enum Input {
    /// One batch (`__arrow_c_array__`).
    Batch(RecordBatch),
    /// Batches (`__arrow_c_stream__`), read as they are needed.
    Stream(Box<dyn RecordBatchReader + Send>),
}

impl Input {
    /// The data of a Python object.
    pub fn new(data: AnyRecordBatch) -> PyResult<Input> {
        Ok(match data {
            AnyRecordBatch::RecordBatch(b) => Input::Batch(b.into_inner()),
            AnyRecordBatch::Stream(s) => Input::Stream(s.into_reader()?),
        })
    }

    /// The schema of its batches.
    pub fn schema(&self) -> SchemaRef {
        match self {
            Input::Batch(b) => b.schema(),
            Input::Stream(s) => s.schema(),
        }
    }

    /// Calls `f` on every batch with the row of the input it starts at, with the GIL
    /// released; between batches, a pending signal (Ctrl-C) stops the loop with its
    /// exception. `f`'s errors are rendered by `error` (given the batch's offset).
    pub fn for_each<E: Send>(
        self,
        py: Python<'_>,
        mut f: impl FnMut(&RecordBatch, usize) -> Result<(), E> + Send,
        error: impl Fn(E) -> PyErr,
    ) -> PyResult<()> {
        match self {
            Input::Batch(b) => py.detach(|| f(&b, 0)).map_err(error),
            Input::Stream(mut reader) => {
                let mut offset = 0;
                loop {
                    let next = py.detach(|| -> Result<Option<usize>, Step<E>> {
                        match reader.next() {
                            None => Ok(None),
                            Some(Err(e)) => Err(Step::Read(e)),
                            Some(Ok(b)) => {
                                f(&b, offset).map_err(Step::Engine)?;
                                Ok(Some(b.num_rows()))
                            }
                        }
                    });
                    match next {
                        Ok(None) => return Ok(()),
                        Ok(Some(rows)) => offset += rows,
                        Err(Step::Engine(e)) => return Err(error(e)),
                        Err(Step::Read(e)) => return Err(read_error(e)),
                    }
                    py.check_signals()?;
                }
            }
        }
    }
}

/// Why a step of [`Input::for_each`] failed.
enum Step<E> {
    /// Reading the next batch of the stream.
    Read(arrow::error::ArrowError),
    /// The caller's function.
    Engine(E),
}

/// An error of the producer of a stream. A Python exception raised inside a
/// pyarrow reader's producer arrives as text ending in the exception's last line
/// (`RuntimeError: …`): that line is the message; a `KeyboardInterrupt` there
/// (Ctrl-C while the producer ran) is raised as `KeyboardInterrupt` again.
pub fn read_error(e: arrow::error::ArrowError) -> PyErr {
    let text = e.to_string();
    if let Some((_, python)) = text.split_once("Python exception: ") {
        let last = python
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        if last.trim() == "KeyboardInterrupt" || last.starts_with("KeyboardInterrupt:") {
            return pyo3::exceptions::PyKeyboardInterrupt::new_err(());
        }
        return pyo3::exceptions::PyValueError::new_err(format!(
            "reading the input failed: {}",
            last.trim()
        ));
    }
    pyo3::exceptions::PyValueError::new_err(format!("reading the input failed: {text}"))
}

/// The batches computed from an input, as Python gets them: a RecordBatch for an
/// input that was one batch (`single`), else a Table of `schema`.
pub fn results(
    py: Python<'_>,
    single: bool,
    mut batches: Vec<RecordBatch>,
    schema: SchemaRef,
) -> PyResult<Bound<'_, PyAny>> {
    if single {
        if let Some(batch) = batches.pop() {
            return PyRecordBatch::new(batch)
                .into_pyobject(py)
                .map(Bound::into_any);
        }
    }
    PyTable::try_new(batches, schema)?
        .into_pyobject(py)
        .map(Bound::into_any)
}
