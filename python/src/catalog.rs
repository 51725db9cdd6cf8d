//! The registry (`functions`) and the columns an expression names
//! (`columns_used`, so that only those are converted from a pandas frame).

use std::sync::Arc;

use broadhead::functions::{catalog, Pattern};
use broadhead::sql::{parse_expr, parse_select_list};
use broadhead::{Expr, ExprKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_arrow::PyTable;

use crate::errors::engine_error;

/// The functions whose name or an alias contains `pattern` or matches it as a glob
/// (`*`, `?`, `[…]`), one row per signature; every function without a pattern.
#[pyfunction]
#[pyo3(signature = (pattern = None))]
pub fn functions(pattern: Option<&str>) -> PyResult<PyTable> {
    let pattern = Pattern::new(pattern).map_err(PyValueError::new_err)?;
    let batch = catalog(&pattern);
    let schema = Arc::clone(batch.schema_ref());
    PyTable::try_new(vec![batch], schema)
}

/// The positions in `names` of the columns the expression `sql` names, matched as
/// the binder matches them (exactly, else ignoring ASCII case when that is
/// unique); `None` when a name matches no column or several, so that the caller
/// gives the binder every column and it reports the name as it does for any schema.
/// With `select_list`, `sql` is a select list (`a * 2 AS x, b`), else an expression.
#[pyfunction]
#[pyo3(signature = (sql, names, select_list = false))]
pub fn columns_used(
    sql: &str,
    names: Vec<String>,
    select_list: bool,
) -> PyResult<Option<Vec<usize>>> {
    let parse_error = |e| engine_error(broadhead::Error::Parse(e), sql);
    let exprs = if select_list {
        let items = parse_select_list(sql).map_err(parse_error)?;
        items.into_iter().map(|(e, _)| e).collect()
    } else {
        vec![parse_expr(sql).map_err(parse_error)?]
    };
    let mut used = Vec::new();
    let mut unresolved = false;
    for expr in &exprs {
        collect(expr, &mut |name| match resolve(name, &names) {
            Some(i) => used.push(i),
            None => unresolved = true,
        });
    }
    if unresolved {
        return Ok(None);
    }
    used.sort_unstable();
    used.dedup();
    Ok(Some(used))
}

fn collect(e: &Expr, f: &mut dyn FnMut(&str)) {
    if let ExprKind::Column(name) = &e.kind {
        f(name);
    }
    e.for_each_child(|c| collect(c, f));
}

fn resolve(name: &str, names: &[String]) -> Option<usize> {
    let mut exact = names.iter().enumerate().filter(|(_, n)| *n == name);
    match (exact.next(), exact.next()) {
        (Some((i, _)), None) => return Some(i),
        (Some(_), Some(_)) => return None,
        _ => {}
    }
    let mut folded = names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.eq_ignore_ascii_case(name));
    match (folded.next(), folded.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}
