//! The tables a test file creates and fills, as far as the suite follows them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow::array::{new_empty_array, Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::concat;
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::{expr_from_ast, parse_expr};
use broadhead::{Expr, ExprKind, ScalarValue};
use sqlparser::ast::{self, CreateTable, Insert, SetExpr, Statement, TableObject};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::render::one_line;

/// The tables a test file created, by lower-case name: `None` once a statement
/// changed one in a way the suite does not follow (`UPDATE`, `CREATE TABLE … AS`,
/// an `INSERT … SELECT`, a value Broadhead does not read).
pub(crate) type Tables = BTreeMap<String, Option<Table>>;

/// A table's columns and, per column, its values.
pub(crate) struct Table {
    pub(crate) fields: Vec<Field>,
    pub(crate) columns: Vec<Vec<ScalarValue>>,
}

impl Table {
    pub(crate) fn rows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// The table as arrays.
    pub(crate) fn arrays(&self) -> Vec<ArrayRef> {
        self.fields
            .iter()
            .zip(&self.columns)
            .map(|(f, values)| {
                let arrays: Vec<ArrayRef> = values.iter().map(|v| v.to_array(1)).collect();
                let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
                if refs.is_empty() {
                    new_empty_array(f.data_type())
                } else {
                    concat(&refs).expect("values of the column's type")
                }
            })
            .collect()
    }
}

/// A one-row batch with no columns.
pub(crate) fn one_row() -> RecordBatch {
    RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .expect("an empty one-row batch")
}

/// The value `CAST(e AS to)` gives, as an `INSERT` stores it.
pub(crate) fn stored_value(e: &ast::Expr, to: &DataType, sql: &str) -> Option<ScalarValue> {
    let e = expr_from_ast(e, sql).ok()?;
    let cast = Expr::new(ExprKind::Cast {
        expr: Box::new(e),
        to: to.clone(),
    });
    let typed = optimize(bind(&cast, &Schema::empty()).ok()?);
    ScalarValue::from_array(interpret(&typed, &one_row()).ok()?.as_ref(), 0)
}

/// A `CREATE TABLE name (column type, …)`'s empty table.
pub(crate) fn created_table(c: &CreateTable) -> Option<Table> {
    if c.query.is_some() || c.columns.is_empty() {
        return None;
    }
    let fields = c
        .columns
        .iter()
        .map(|col| {
            let cast = parse_expr(&format!("CAST(x AS {})", col.data_type)).ok()?;
            match cast.kind {
                ExprKind::Cast { to, .. } => Some(Field::new(col.name.value.clone(), to, true)),
                _ => None,
            }
        })
        .collect::<Option<Vec<_>>>()?;
    let columns = vec![Vec::new(); fields.len()];
    Some(Table { fields, columns })
}

/// Appends the rows of an `INSERT INTO t VALUES (…), …` with every column.
pub(crate) fn inserted(table: &mut Table, insert: &Insert, sql: &str) -> Option<()> {
    if !insert.columns.is_empty() || insert.on.is_some() || insert.returning.is_some() {
        return None;
    }
    let SetExpr::Values(values) = insert.source.as_ref()?.body.as_ref() else {
        return None;
    };
    for row in &values.rows {
        if row.len() != table.fields.len() {
            return None;
        }
        for (i, e) in row.iter().enumerate() {
            let v = stored_value(e, table.fields[i].data_type(), sql)?;
            table.columns[i].push(v);
        }
    }
    Some(())
}

/// Follows a statement that is not a case: creates, fills and drops tables; a
/// table that any other statement names is no longer followed.
pub(crate) fn apply_statement(sql: &str, followed: bool, tables: &mut Tables) {
    let statements = match Parser::parse_sql(&GenericDialect {}, sql) {
        Ok(s) if followed => s,
        _ => return forget_named(sql, tables),
    };
    for st in &statements {
        match st {
            Statement::CreateTable(c) => {
                let name = c.name.to_string().to_ascii_lowercase();
                let t = created_table(c);
                if t.is_none() {
                    note("CREATE NOT FOLLOWED", sql);
                }
                tables.insert(name, t);
            }
            Statement::Insert(insert) => {
                let TableObject::TableName(name) = &insert.table else {
                    return forget_named(sql, tables);
                };
                let name = name.to_string().to_ascii_lowercase();
                if let Some(slot) = tables.get_mut(&name) {
                    let ok = slot
                        .as_mut()
                        .and_then(|t| inserted(t, insert, sql))
                        .is_some();
                    if !ok {
                        note("INSERT NOT FOLLOWED", sql);
                        *slot = None;
                    }
                }
            }
            _ => forget_named(sql, tables),
        }
    }
}

/// With `CONFORMANCE_DEBUG` set, prints what the suite did with a statement.
pub(crate) fn note(what: &str, sql: &str) {
    if std::env::var_os("CONFORMANCE_DEBUG").is_some() {
        eprintln!("{what}\t{}", one_line(sql));
    }
}

/// Stops following every table whose name the statement mentions.
pub(crate) fn forget_named(sql: &str, tables: &mut Tables) {
    note("FORGET TABLES NAMED IN", sql);
    let words: BTreeSet<String> = sql
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_ascii_lowercase)
        .collect();
    for (name, slot) in tables.iter_mut() {
        if words.contains(name) {
            *slot = None;
        }
    }
}
