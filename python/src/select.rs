//! `Select`: SQL expressions (a select list, `AS` names allowed) compiled once for a
//! schema, evaluated on the rows of any data of that schema, or on the rows where a
//! predicate is TRUE.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Field, Schema, SchemaRef};
use broadhead::prepare::{Prepared, Purpose};
use broadhead::sql::parse_select_list;
use broadhead::{ExprKind, KernelCache, Projector, SelectionMode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::PySchema;

use crate::data::{results, Input};
use crate::errors::{engine_error, shifted};
use crate::filter::Filter;

/// Expressions compiled for a schema (see the package's `select`).
#[pyclass(frozen, module = "broadhead._native")]
pub struct Select {
    projector: Projector,
    output: SchemaRef,
    filter: Option<Filter>,
}

#[pymethods]
impl Select {
    /// Compiles `exprs` (each a SQL expression or a comma-separated select list,
    /// with optional `AS name`) for data of `schema`; with `where`, only the rows
    /// where that predicate is TRUE are computed.
    #[new]
    #[pyo3(signature = (schema, exprs, r#where = None))]
    fn new(
        py: Python<'_>,
        schema: PySchema,
        exprs: Vec<String>,
        r#where: Option<String>,
    ) -> PyResult<Select> {
        let schema = schema.into_inner();
        let mut prepared = Vec::new();
        let mut names = Vec::new();
        for text in &exprs {
            let items = parse_select_list(text)
                .map_err(|e| engine_error(broadhead::Error::Parse(e), text))?;
            for (expr, alias) in items {
                let name = alias.unwrap_or_else(|| match &expr.kind {
                    ExprKind::Column(c) => c.clone(),
                    _ => expr.to_string(),
                });
                let p = py
                    .detach(|| Prepared::new(&expr, &schema, Purpose::Projection))
                    .map_err(|e| engine_error(e, text))?;
                prepared.push(p);
                names.push(name);
            }
        }
        if prepared.is_empty() {
            return Err(PyValueError::new_err(
                "select needs at least one expression",
            ));
        }
        let projector = py
            .detach(|| Projector::from_prepared(&schema, &prepared, KernelCache::global()))
            .map_err(|e| engine_error(e, &exprs.join(", ")))?;
        let fields: Vec<Field> = projector
            .output_fields()
            .into_iter()
            .zip(names)
            .map(|(f, name)| Field::new(name, f.data_type().clone(), true))
            .collect();
        let filter = match r#where {
            Some(sql) => Some(Filter::compile(py, schema.clone(), sql)?),
            None => None,
        };
        Ok(Select {
            projector,
            output: Arc::new(Schema::new(fields)),
            filter,
        })
    }

    /// The schema of the results.
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.output.clone())
    }

    /// The expressions over `data`: a RecordBatch for a batch, a Table for a stream.
    fn project<'py>(&self, py: Python<'py>, data: AnyRecordBatch) -> PyResult<Bound<'py, PyAny>> {
        let input = Input::new(data)?;
        let single = matches!(input, Input::Batch(_));
        let mut out: Vec<RecordBatch> = Vec::new();
        input.for_each(
            py,
            |batch, offset| {
                let columns = self.compute(batch).map_err(|e| shifted(e, offset))?;
                let rows = columns.first().map_or(0, |c| c.len());
                let batch = RecordBatch::try_new_with_options(
                    self.output.clone(),
                    columns,
                    &RecordBatchOptions::new().with_row_count(Some(rows)),
                )?;
                out.push(batch);
                Ok(())
            },
            |e| engine_error(e, ""),
        )?;
        results(py, single, out, self.output.clone())
    }
}

impl Select {
    /// The output columns for one batch: every row, or the rows the filter selects.
    fn compute(&self, batch: &RecordBatch) -> broadhead::Result<Vec<ArrayRef>> {
        match &self.filter {
            None => self.projector.evaluate(batch),
            Some(filter) => {
                let rows = filter
                    .engine()
                    .evaluate_with_mode(batch, SelectionMode::UInt32)?;
                self.projector.evaluate_selected(batch, &rows)
            }
        }
    }
}
