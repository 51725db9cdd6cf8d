//! `Filter`: a predicate compiled once for a schema, evaluated on any data of that
//! schema: the selected rows as positions, a mask, a count, or the rows themselves.

use std::sync::Arc;

use arrow::array::{Array, BooleanArray, BooleanBufferBuilder, RecordBatch, UInt64Array};
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatchReader;
use broadhead::SelectionMode;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::{PyArray, PyRecordBatchReader, PySchema};

use crate::data::{results, Input};
use crate::errors::{engine_error, shifted};

/// A SQL predicate compiled for a schema (see the package's `Filter`).
#[pyclass(frozen, module = "broadhead._native")]
pub struct Filter {
    inner: broadhead::Filter,
    sql: String,
}

impl Filter {
    /// The compiled predicate, for `Select`.
    pub fn engine(&self) -> &broadhead::Filter {
        &self.inner
    }

    /// Compiles `sql` for `schema` with the GIL released.
    pub fn compile(py: Python<'_>, schema: SchemaRef, sql: String) -> PyResult<Filter> {
        let inner = py
            .detach(|| broadhead::Filter::new(&schema, &sql))
            .map_err(|e| engine_error(e, &sql))?;
        Ok(Filter { inner, sql })
    }

    /// An error of evaluating the batch that starts at row `offset`.
    fn error(&self) -> impl Fn((broadhead::Error, usize)) -> PyErr + '_ {
        |(e, offset)| engine_error(shifted(e, offset), &self.sql)
    }
}

#[pymethods]
impl Filter {
    /// Compiles `sql` (a SQL predicate) for data of `schema`.
    #[new]
    fn new(py: Python<'_>, schema: PySchema, sql: String) -> PyResult<Filter> {
        Filter::compile(py, schema.into_inner(), sql)
    }

    /// The predicate's text.
    #[getter]
    fn sql(&self) -> &str {
        &self.sql
    }

    /// The schema it was compiled for.
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.inner.schema().clone())
    }

    /// Whether it runs as native code (else the interpreter runs it).
    #[getter]
    fn is_jit(&self) -> bool {
        self.inner.is_jit()
    }

    /// The positions (UInt64) of the rows where the predicate is TRUE, counted
    /// across the batches of `data`.
    fn positions(&self, py: Python<'_>, data: AnyRecordBatch) -> PyResult<PyArray> {
        let mut parts: Vec<(usize, UInt64Array)> = Vec::new();
        Input::new(data)?.for_each(
            py,
            |batch, offset| {
                let rows = self
                    .inner
                    .evaluate_with_mode(batch, SelectionMode::UInt64)
                    .map_err(|e| (e, offset))?;
                let rows = rows.into_array();
                let rows = rows.as_any().downcast_ref::<UInt64Array>().cloned();
                parts.push((offset, rows.expect("a UInt64 selection is a UInt64Array")));
                Ok(())
            },
            self.error(),
        )?;
        let positions = match parts.len() {
            0 => UInt64Array::from(Vec::<u64>::new()),
            1 if parts[0].0 == 0 => parts.pop().expect("one part").1,
            _ => {
                let total = parts.iter().map(|(_, p)| p.len()).sum();
                let mut all = Vec::with_capacity(total);
                for (offset, p) in &parts {
                    let offset = *offset as u64;
                    all.extend(p.values().iter().map(|i| i + offset));
                }
                UInt64Array::from(all)
            }
        };
        Ok(PyArray::from_array_ref(Arc::new(positions)))
    }

    /// A BooleanArray over every row of `data`: TRUE where the predicate is TRUE,
    /// FALSE where it is FALSE or NULL (never NULL).
    fn mask(&self, py: Python<'_>, data: AnyRecordBatch) -> PyResult<PyArray> {
        let mut masks: Vec<BooleanArray> = Vec::new();
        Input::new(data)?.for_each(
            py,
            |batch, offset| {
                masks.push(self.inner.evaluate_mask(batch).map_err(|e| (e, offset))?);
                Ok(())
            },
            self.error(),
        )?;
        let mask = if masks.len() == 1 {
            masks.pop().expect("one mask")
        } else {
            let total = masks.iter().map(|m| m.len()).sum();
            let mut bits = BooleanBufferBuilder::new(total);
            for m in &masks {
                bits.append_buffer(m.values());
            }
            BooleanArray::new(bits.finish(), None)
        };
        Ok(PyArray::from_array_ref(Arc::new(mask)))
    }

    /// How many rows of `data` the predicate selects.
    fn count(&self, py: Python<'_>, data: AnyRecordBatch) -> PyResult<u64> {
        let mut count = 0u64;
        Input::new(data)?.for_each(
            py,
            |batch, offset| {
                let rows = self.inner.evaluate(batch).map_err(|e| (e, offset))?;
                count += rows.len() as u64;
                Ok(())
            },
            self.error(),
        )?;
        Ok(count)
    }

    /// The rows of `data` where the predicate is TRUE, every column kept: a
    /// RecordBatch for a batch, a Table for a stream (read to its end). The
    /// predicate reads the columns at the positions `columns` of each batch (the
    /// schema it was compiled for); `None`: the whole batch.
    #[pyo3(signature = (data, columns = None))]
    fn filter<'py>(
        &self,
        py: Python<'py>,
        data: AnyRecordBatch,
        columns: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = Input::new(data)?;
        let schema = input.schema();
        if let Some(bad) = columns
            .iter()
            .flatten()
            .find(|&&c| c >= schema.fields().len())
        {
            return Err(PyValueError::new_err(format!(
                "column {bad} is out of range for data of {} columns",
                schema.fields().len()
            )));
        }
        let single = matches!(input, Input::Batch(_));
        let mut out: Vec<RecordBatch> = Vec::new();
        input.for_each(
            py,
            |batch, offset| {
                let kept = match &columns {
                    None => self.inner.filter_record_batch(batch),
                    Some(c) => batch
                        .project(c)
                        .map_err(broadhead::Error::from)
                        .and_then(|read| self.inner.evaluate_mask(&read))
                        .and_then(|mask| Ok(arrow::compute::filter_record_batch(batch, &mask)?)),
                };
                out.push(kept.map_err(|e| (e, offset))?);
                Ok(())
            },
            self.error(),
        )?;
        results(py, single, out, schema)
    }

    /// A stream of the rows of the stream `data` where the predicate is TRUE,
    /// filtered as it is read.
    fn filter_stream(&self, data: AnyRecordBatch) -> PyResult<PyRecordBatchReader> {
        let reader = Input::new(data)?;
        let reader = match reader {
            Input::Stream(s) => s,
            Input::Batch(b) => {
                let schema = b.schema();
                Box::new(arrow::record_batch::RecordBatchIterator::new(
                    vec![Ok(b)],
                    schema,
                ))
            }
        };
        Ok(PyRecordBatchReader::new(Box::new(Filtered {
            reader,
            filter: self.inner.clone(),
            sql: self.sql.clone(),
            offset: 0,
        })))
    }

    /// Every stage's view of the predicate: parsed, typed, optimized, and for the JIT
    /// the LLVM IR and the native assembly.
    fn explain(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.inner.explain())
            .map(|e| e.to_string())
            .map_err(|e| engine_error(e, &self.sql))
    }

    fn __repr__(&self) -> String {
        format!(
            "Filter({:?}, {} columns, {})",
            self.sql,
            self.inner.schema().fields().len(),
            if self.inner.is_jit() {
                "jit"
            } else {
                "interpreted"
            }
        )
    }
}

/// A stream filtered as it is read.
struct Filtered {
    reader: Box<dyn RecordBatchReader + Send>,
    filter: broadhead::Filter,
    sql: String,
    offset: usize,
}

impl Iterator for Filtered {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.reader.next()? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let offset = self.offset;
        self.offset += batch.num_rows();
        Some(self.filter.filter_record_batch(&batch).map_err(|e| {
            let e = shifted(e, offset);
            ArrowError::ComputeError(e.render(&self.sql))
        }))
    }
}

impl RecordBatchReader for Filtered {
    fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }
}
