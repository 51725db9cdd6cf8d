//! `scan_parquet`: Parquet files read where a predicate is TRUE, streamed to Python
//! batch by batch. The scan runs on threads of its own (row groups in parallel,
//! results in file order, a few batches ahead at most); Python reads the batches
//! from a channel with the GIL released, and stopping (`close`, the iterator
//! dropped, Ctrl-C) ends the scan at the next batch.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use broadhead::parquet::{
    expand_paths, Dataset, Scan, ScanError, ScanItem, ScanOptions, ScanStats,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::errors::{scan_error, BindError};

/// How often a reader waiting for the next batch checks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// One path or several.
#[derive(FromPyObject)]
pub enum Paths {
    /// A file, directory or glob.
    One(PathBuf),
    /// Several.
    Many(Vec<PathBuf>),
}

/// What the scan's thread sends.
enum Msg {
    /// A batch of selected rows.
    Batch(RecordBatch),
    /// The end, and what the scan did.
    Done(ScanStats),
    /// The scan failed.
    Failed(Failure),
}

/// Why a scan could not start or went wrong.
enum Failure {
    Scan(ScanError),
    /// A requested column the files lack.
    Column(String),
}

/// Batches of a Parquet scan, in file order (see the package's `scan_parquet`).
#[pyclass(frozen, module = "broadhead._native")]
pub struct Scanner {
    batches: Mutex<Option<Receiver<Msg>>>,
    schema: SchemaRef,
    stats: Mutex<Option<ScanStats>>,
    source: String,
}

/// Starts a scan of `paths` (files, directories, globs): the rows where `where` is
/// TRUE, of `columns` (names, in that order; `None`: every column).
#[pyfunction]
#[pyo3(signature = (paths, r#where = None, columns = None, batch_size = None, threads = None))]
pub fn scan_parquet(
    py: Python<'_>,
    paths: Paths,
    r#where: Option<String>,
    columns: Option<Vec<String>>,
    batch_size: Option<usize>,
    threads: Option<usize>,
) -> PyResult<Scanner> {
    let paths = match paths {
        Paths::One(p) => vec![p],
        Paths::Many(p) => p,
    };
    let mut options = ScanOptions::default();
    if let Some(n) = batch_size {
        if n == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        options.batch_size = n;
    }
    if let Some(n) = threads {
        if n == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        options.threads = n;
    }
    let source = r#where.clone().unwrap_or_default();
    let (ready_tx, ready_rx) = sync_channel::<Result<SchemaRef, Failure>>(1);
    let (tx, rx) = sync_channel::<Msg>(2);
    std::thread::Builder::new()
        .name("broadhead-scan".into())
        .spawn(move || {
            let dataset = match expand_paths(&paths).and_then(|files| Dataset::open(&files)) {
                Ok(d) => d,
                Err(e) => return drop(ready_tx.send(Err(Failure::Scan(e)))),
            };
            let (wanted, order) = match resolve(dataset.schema(), columns.as_deref()) {
                Ok(x) => x,
                Err(e) => return drop(ready_tx.send(Err(e))),
            };
            let scan = match Scan::new(&dataset, r#where.as_deref(), &wanted, options) {
                Ok(s) => s,
                Err(e) => return drop(ready_tx.send(Err(Failure::Scan(e.into())))),
            };
            let schema = match scan.output_schema().project(&order) {
                Ok(s) => std::sync::Arc::new(s),
                Err(e) => return drop(ready_tx.send(Err(Failure::Column(e.to_string())))),
            };
            if ready_tx.send(Ok(schema)).is_err() {
                return;
            }
            let result = scan.run(
                &|batch| {
                    batch
                        .project(&order)
                        .map_err(|e| ScanError::Input(e.to_string()))
                },
                &mut |item| match item {
                    ScanItem::Batch(b) => Ok(tx.send(Msg::Batch(b)).is_ok()),
                    ScanItem::RowGroupDone { .. } => Ok(true),
                },
            );
            let _ = tx.send(match result {
                Ok(stats) => Msg::Done(stats),
                Err(e) => Msg::Failed(Failure::Scan(e)),
            });
        })
        .map_err(|e| PyValueError::new_err(format!("could not start the scan's thread: {e}")))?;
    // A receiver is not `Sync`: the lock lends it to the GIL-free wait.
    let ready_rx = Mutex::new(ready_rx);
    let schema = loop {
        let ready = py.detach(|| {
            let rx = ready_rx.lock().unwrap_or_else(|p| p.into_inner());
            rx.recv_timeout(SIGNAL_CHECK)
        });
        match ready {
            Ok(Ok(schema)) => break schema,
            Ok(Err(f)) => return Err(failure(f, &source)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyValueError::new_err(
                    "the scan's thread ended unexpectedly",
                ))
            }
        }
    };
    Ok(Scanner {
        batches: Mutex::new(Some(rx)),
        schema,
        stats: Mutex::new(None),
        source,
    })
}

/// The columns to scan (sorted, as the scan returns them) and, for each column
/// asked for, its position among those.
fn resolve(
    schema: &arrow::datatypes::Schema,
    columns: Option<&[String]>,
) -> Result<(Vec<usize>, Vec<usize>), Failure> {
    let Some(columns) = columns else {
        let all: Vec<usize> = (0..schema.fields().len()).collect();
        return Ok((all.clone(), all));
    };
    let mut indices = Vec::with_capacity(columns.len());
    for name in columns {
        let exact = schema.fields().iter().position(|f| f.name() == name);
        let folded = || {
            let mut m = schema
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name().eq_ignore_ascii_case(name));
            match (m.next(), m.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        };
        match exact.or_else(folded) {
            Some(i) => indices.push(i),
            None => {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(Failure::Column(format!(
                    "unknown column '{name}' (the files have {})",
                    names.join(", ")
                )));
            }
        }
    }
    let mut wanted = indices.clone();
    wanted.sort_unstable();
    wanted.dedup();
    let order = indices
        .iter()
        .map(|i| wanted.binary_search(i).expect("wanted holds every index"))
        .collect();
    Ok((wanted, order))
}

fn failure(f: Failure, source: &str) -> PyErr {
    match f {
        Failure::Scan(e) => scan_error(e, source),
        Failure::Column(message) => BindError::new_err(message),
    }
}

#[pymethods]
impl Scanner {
    /// The schema of the batches.
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.schema.clone())
    }

    /// What the scan did (row groups read, pruned, decided on dictionary keys…),
    /// once it has ended; `None` before.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let stats = self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(s) = stats else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("row_groups", s.row_groups)?;
        d.set_item("pruned", s.pruned)?;
        d.set_item("keyed", s.keyed)?;
        d.set_item("gathered", s.gathered)?;
        d.set_item("narrowed", s.narrowed)?;
        Ok(Some(d))
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The next batch; `StopIteration` at the end.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyRecordBatch>> {
        loop {
            let msg = py.detach(|| {
                let guard = self.batches.lock().unwrap_or_else(|p| p.into_inner());
                guard.as_ref().map(|rx| rx.recv_timeout(SIGNAL_CHECK))
            });
            match msg {
                None => return Ok(None),
                Some(Ok(Msg::Batch(b))) => return Ok(Some(PyRecordBatch::new(b))),
                Some(Ok(Msg::Done(stats))) => {
                    *self.stats.lock().unwrap_or_else(|p| p.into_inner()) = Some(stats);
                    self.stop(py);
                    return Ok(None);
                }
                Some(Ok(Msg::Failed(f))) => {
                    self.stop(py);
                    return Err(failure(f, &self.source));
                }
                Some(Err(RecvTimeoutError::Timeout)) => {
                    if let Err(e) = py.check_signals() {
                        self.stop(py);
                        return Err(e);
                    }
                }
                Some(Err(RecvTimeoutError::Disconnected)) => {
                    self.stop(py);
                    return Err(PyValueError::new_err(
                        "the scan's thread ended unexpectedly",
                    ));
                }
            }
        }
    }

    /// Stops the scan; its threads end at their next batch.
    fn close(&self, py: Python<'_>) {
        self.stop(py);
    }
}

impl Scanner {
    fn stop(&self, py: Python<'_>) {
        py.detach(|| {
            self.batches
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
        });
    }
}
