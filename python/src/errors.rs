//! The exceptions: `BroadheadError` and under it `ParseError`, `BindError`,
//! `EvalError` and `ScanError`, with the command line's messages (a caret under the
//! part of the expression at fault; a row error names the row).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    broadhead,
    BroadheadError,
    PyException,
    "Every error Broadhead raises: a malformed or ill-typed expression, a row whose value cannot be computed, an unreadable file."
);
create_exception!(
    broadhead,
    ParseError,
    BroadheadError,
    "The expression is not valid SQL; the message points at the place with a caret."
);
create_exception!(
    broadhead,
    BindError,
    BroadheadError,
    "The expression does not fit the schema: an unknown column, a type mismatch, an unknown function."
);
create_exception!(
    broadhead,
    EvalError,
    BroadheadError,
    "Evaluating the expression failed on a row (division by zero, overflow, a bad cast); `row` is its position in the input, counted across batches."
);
create_exception!(
    broadhead,
    ScanError,
    BroadheadError,
    "A Parquet file could not be found, read or decoded; the message names the file."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("BroadheadError", py.get_type::<BroadheadError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("BindError", py.get_type::<BindError>())?;
    m.add("EvalError", py.get_type::<EvalError>())?;
    m.add("ScanError", py.get_type::<ScanError>())?;
    Ok(())
}

/// `e` as the Python exception of its stage, its message rendered against `source`
/// (the expression's text) as the command line renders it. An evaluation error
/// gets the attribute `row` (or `None`); parse and bind errors get `span`,
/// `(line, start, end)` in the expression's text (1-based characters, `end`
/// exclusive), or `None`.
pub fn engine_error(e: broadhead::Error, source: &str) -> PyErr {
    let message = e.render(source);
    Python::attach(|py| {
        let (err, span, row) = match &e {
            broadhead::Error::Parse(p) => (ParseError::new_err(message), Some(p.span), None),
            broadhead::Error::Bind(b) => (BindError::new_err(message), Some(b.span), None),
            broadhead::Error::Eval(v) => (EvalError::new_err(message), None, v.row()),
            broadhead::Error::Arrow(_) => (EvalError::new_err(message), None, None),
            broadhead::Error::Compile(_) => (BroadheadError::new_err(message), None, None),
        };
        let value = err.value(py);
        let span = span
            .filter(|s| s.is_known())
            .map(|s| (s.line, s.column, s.end_column));
        // Setting an attribute on a fresh exception object cannot fail.
        let _ = value.setattr("span", span);
        let _ = value.setattr("row", row);
        err
    })
}

/// An engine error of the input's batch that starts at row `offset`: its row
/// counted from the start of the input.
pub fn shifted(e: broadhead::Error, offset: usize) -> broadhead::Error {
    match e {
        broadhead::Error::Eval(v) => broadhead::Error::Eval(v.shifted(offset)),
        other => other,
    }
}

/// A scan's error as a Python exception: the expression's errors as
/// [`engine_error`] makes them, a row's as `EvalError`, a file's as `ScanError`.
pub fn scan_error(e: broadhead::parquet::ScanError, source: &str) -> PyErr {
    use broadhead::parquet::ScanError as E;
    match e {
        E::Engine(e) => engine_error(e, source),
        row @ E::Row { .. } => EvalError::new_err(row.to_string()),
        other => ScanError::new_err(other.to_string()),
    }
}
