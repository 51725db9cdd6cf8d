//! An external conformance suite: DuckDB's own sqllogictest files for scalar
//! functions (vendored under `tests/conformance/duckdb/`, see its README) run
//! against Broadhead.
//!
//! A case is a `query`/`statement` block whose SQL is a `SELECT` of expressions
//! over literals and the columns of at most one table, with optional `WHERE`,
//! `ORDER BY` and `LIMIT`. The suite follows the file's `CREATE TABLE t (col type,
//! …)` and `INSERT INTO t VALUES …` statements (values read as `CAST(v AS type)`);
//! a table changed any other way is not followed, and its cases are unsupported.
//! A case's literals become columns of the batch wherever that leaves the bound
//! expression's shape unchanged (a string literal that the binder would read as a
//! DATE stays a literal), so the JIT computes the functions rather than the
//! constant folder. Every expression runs through the `Projector` (JIT where it
//! compiles) and the interpreter, which must agree (a difference is a listed bug,
//! never a match); the rows are printed as DuckDB's runner prints them and
//! compared as that runner compares (numbers by value, floats within 1%, booleans
//! as `true`/`1`, `rowsort`/`valuesort` honoured).
//!
//! Outcomes: match; documented deviation (listed in `tests/conformance/deviations.txt`
//! under a reason citing docs/semantics.md); unsupported (syntax, functions or types
//! Broadhead lacks: counted, not failed); new disagreement (fails the test, as does
//! a listed deviation that now matches). `BROADHEAD_BLESS=1` rewrites the list,
//! keeping the reasons of entries that stay and putting new ones under
//! "unclassified" for a person to sort. The counts are in docs/conformance.md.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{new_empty_array, Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use arrow::compute::{
    concat, filter_record_batch, lexsort_to_indices, take, SortColumn, SortOptions,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::util::display::array_value_to_string;
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::scalar::format_blob;
use broadhead::sql::{expr_from_ast, parse_expr};
use broadhead::typed::{TypedExpr, TypedKind};
use broadhead::{Expr, ExprKind, Projector, ScalarValue};
use chrono::{Datelike, NaiveDate};
use common::same_array;
use sqlparser::ast::{
    self, CreateTable, GroupByExpr, Insert, LimitClause, OrderBy, OrderByKind, OrderBySort,
    SelectItem, SetExpr, Statement, TableFactor, TableObject, TableWithJoins,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

const REGENERATE: &str =
    "Regenerate with:\n\n    BROADHEAD_BLESS=1 cargo test --test conformance\n\n\
     then move each new entry from \"unclassified\" under a reason citing docs/semantics.md.";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// What a block expects.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `query`: the rows after `----`.
    Query,
    /// `statement ok`.
    Ok,
    /// `statement error`.
    Error,
}

/// One `query` or `statement` block of a test file.
struct Block {
    /// `duckdb/test/sql/…/x.test:LINE` (the line of the block's header).
    place: String,
    kind: Kind,
    sql: String,
    expected: Vec<String>,
    /// Why the block is not a case, when the file's directives rule it out.
    skip: Option<String>,
    /// How a `query` block's rows are compared.
    sort: Sort,
    /// Whether `ORDER BY` puts NULLs first (`SET default_null_order`); DuckDB
    /// puts them last by default, descending too.
    nulls_first: bool,
}

/// How a `query` block's rows are compared (the header's sort mode).
#[derive(Clone, Copy, PartialEq)]
enum Sort {
    /// In the order the query gives them.
    None,
    /// Rows sorted as strings (`rowsort`).
    Rows,
    /// All values sorted as strings (`valuesort`).
    Values,
}

/// `require` arguments that do not change what scalar functions compute.
const HARMLESS_REQUIRES: &[&str] = &["notwindows", "skip_reload", "vector_size"];

/// The setting a session statement changes (`SET x = …`, `PRAGMA x=…`, `RESET x`),
/// lower-case, and whether it resets it; None for other statements.
fn setting(sql: &str) -> Option<(String, bool)> {
    let s = sql.trim().to_ascii_lowercase();
    let mut words = s
        .split([' ', '=', ';', '\'', '('])
        .filter(|w| !w.is_empty());
    let (verb, name) = (words.next()?, words.next()?);
    let name = if name == "time" { "timezone" } else { name };
    match verb {
        "set" | "pragma" => Some((name.to_string(), false)),
        "reset" => Some((name.to_string(), true)),
        _ => None,
    }
}

/// Settings that do not change what the suite's cases compute (the NULL order of
/// `ORDER BY` is followed).
const HARMLESS_SETTINGS: &[&str] = &[
    "default_null_order",
    "enable_verification",
    "disable_verification",
    "verify_external",
    "verify_serializer",
];

/// Splits a sqllogictest file into blocks (loops, `mode skip` and foreign
/// `onlyif`/`skipif` regions mark theirs as skipped).
fn parse_file(place: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let (mut i, mut loops, mut mode_skip) = (0, 0usize, false);
    let mut require: Option<String> = None;
    let mut session: BTreeMap<String, String> = BTreeMap::new();
    let mut condition: Option<String> = None;
    let mut nulls_first = false;
    while i < lines.len() {
        let line = lines[i].trim_end();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else {
            i += 1;
            continue;
        };
        match first {
            "require" => {
                let what = words.get(1).copied().unwrap_or("");
                if !HARMLESS_REQUIRES.contains(&what) {
                    require = Some(format!("require {what}"));
                }
            }
            "loop" | "foreach" | "concurrentloop" | "concurrentforeach" => loops += 1,
            "endloop" => loops = loops.saturating_sub(1),
            "mode" => match words.get(1).copied() {
                Some("skip") => mode_skip = true,
                Some("unskip") => mode_skip = false,
                _ => {}
            },
            "onlyif" if words.get(1) != Some(&"duckdb") => condition = Some(line.into()),
            "skipif" if words.get(1) == Some(&"duckdb") => condition = Some(line.into()),
            "halt" => break,
            "statement" | "query" => {
                let header = i;
                i += 1;
                let mut sql = Vec::new();
                while i < lines.len() && !lines[i].trim().is_empty() && lines[i] != "----" {
                    sql.push(lines[i]);
                    i += 1;
                }
                let mut expected = Vec::new();
                if i < lines.len() && lines[i] == "----" {
                    i += 1;
                    while i < lines.len() && !lines[i].is_empty() {
                        expected.push(lines[i].to_string());
                        i += 1;
                    }
                }
                let sql = sql.join("\n");
                let kind = match (first, words.get(1).copied()) {
                    ("query", _) => Kind::Query,
                    (_, Some("ok")) => Kind::Ok,
                    _ => Kind::Error,
                };
                let skip = require
                    .clone()
                    .or_else(|| session.values().next().cloned())
                    .or_else(|| (loops > 0).then(|| "inside a loop".to_string()))
                    .or_else(|| mode_skip.then(|| "mode skip".to_string()))
                    .or(condition.take());
                if let (Kind::Ok, None, Some((name, reset))) = (kind, &skip, setting(&sql)) {
                    if name == "default_null_order" {
                        nulls_first = !reset && sql.to_ascii_lowercase().contains("nulls_first");
                    }
                    if reset {
                        session.remove(&name);
                    } else if !HARMLESS_SETTINGS.contains(&name.as_str()) {
                        session.insert(name, format!("setting: {}", sql.trim()));
                    }
                }
                blocks.push(Block {
                    place: format!("{place}:{}", header + 1),
                    kind,
                    sql,
                    expected,
                    skip,
                    sort: match words.get(2).copied() {
                        Some("rowsort") => Sort::Rows,
                        Some("valuesort") => Sort::Values,
                        _ => Sort::None,
                    },
                    nulls_first,
                });
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    blocks
}

/// Every `.test` file under `dir`, sorted.
fn test_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            test_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "test") {
            out.push(p);
        }
    }
}

/// A `SELECT` the suite runs: expressions over literals and the columns of at most
/// one table the file created, with `WHERE`, `ORDER BY` and `LIMIT`.
struct Select {
    /// The items; one whose literal does not read (`DATE 'infinity'`) is
    /// `Err(message)`: that error is Broadhead's answer for it.
    items: Vec<Result<Expr, String>>,
    table: Option<String>,
    filter: Option<Expr>,
    order: Vec<(OrderKey, SortOptions)>,
    limit: Option<usize>,
}

/// What `ORDER BY` sorts on.
enum OrderKey {
    /// A select item, by position (`ORDER BY 2`) or alias.
    Item(usize),
    /// An expression over the table.
    Expr(Expr),
}

/// The `SELECT` of a block (or why the suite does not run it).
fn select_query(sql: &str, nulls_first: bool) -> Result<Select, String> {
    if sql.contains("${") {
        return Err("loop variable".into());
    }
    let statements =
        Parser::parse_sql(&GenericDialect {}, sql).map_err(|e| format!("syntax: {e}"))?;
    let [Statement::Query(q)] = statements.as_slice() else {
        return Err("not a single query".into());
    };
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err("not a plain SELECT".into());
    };
    let plain = q.with.is_none()
        && q.fetch.is_none()
        && s.having.is_none()
        && s.distinct.is_none()
        && matches!(&s.group_by, GroupByExpr::Expressions(g, _) if g.is_empty());
    if !plain {
        return Err("GROUP BY, DISTINCT, WITH or another clause".into());
    }
    let table = match s.from.as_slice() {
        [] => None,
        [TableWithJoins {
            relation:
                TableFactor::Table {
                    name,
                    alias: None,
                    args: None,
                    ..
                },
            joins,
        }] if joins.is_empty() => Some(name.to_string().to_ascii_lowercase()),
        _ => return Err("FROM other than one table".into()),
    };
    let convert = |e: &ast::Expr| -> Result<Result<Expr, String>, String> {
        match expr_from_ast(e, sql) {
            Ok(e) => Ok(Ok(e)),
            Err(e) if e.message.contains(" literal ") => Ok(Err(e.to_string())),
            Err(e) => Err(format!("syntax: {}", e.message)),
        }
    };
    let mut items = Vec::new();
    let mut aliases = Vec::new();
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e) => {
                items.push(convert(e)?);
                aliases.push(None);
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                items.push(convert(expr)?);
                aliases.push(Some(alias.value.to_ascii_lowercase()));
            }
            _ => return Err("wildcard".into()),
        }
    }
    let filter = match &s.selection {
        None => None,
        Some(e) => Some(convert(e)?.map_err(|m| format!("syntax: {m}"))?),
    };
    let mut order = Vec::new();
    match &q.order_by {
        None => {}
        Some(OrderBy {
            kind: OrderByKind::Expressions(list),
            ..
        }) => {
            for o in list {
                let descending = match &o.options.sort {
                    None | Some(OrderBySort::Asc) => false,
                    Some(OrderBySort::Desc) => true,
                    Some(OrderBySort::Using(_)) => return Err("ORDER BY USING".into()),
                };
                let options = SortOptions {
                    descending,
                    nulls_first: o.options.nulls_first.unwrap_or(nulls_first),
                };
                let e = convert(&o.expr)?.map_err(|m| format!("syntax: {m}"))?;
                let key = match &e.kind {
                    ExprKind::Literal(ScalarValue::Int64(k)) => {
                        match usize::try_from(*k)
                            .ok()
                            .filter(|k| (1..=items.len()).contains(k))
                        {
                            Some(k) => OrderKey::Item(k - 1),
                            None => return Err("ORDER BY position out of range".into()),
                        }
                    }
                    ExprKind::Column(c) => match aliases
                        .iter()
                        .position(|a| a.as_deref() == Some(&c.to_ascii_lowercase()))
                    {
                        Some(k) => OrderKey::Item(k),
                        None => OrderKey::Expr(e),
                    },
                    _ => OrderKey::Expr(e),
                };
                order.push((key, options));
            }
        }
        Some(_) => return Err("ORDER BY ALL".into()),
    }
    let limit = match &q.limit_clause {
        None => None,
        Some(LimitClause::LimitOffset {
            limit: Some(l),
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => match convert(l)? {
            Ok(Expr {
                kind: ExprKind::Literal(ScalarValue::Int64(n)),
                ..
            }) => Some(usize::try_from(n).map_err(|_| "negative LIMIT".to_string())?),
            _ => return Err("LIMIT other than a number".into()),
        },
        Some(_) => return Err("OFFSET or another LIMIT".into()),
    };
    Ok(Select {
        items,
        table,
        filter,
        order,
        limit,
    })
}

/// The tables a test file created, by lower-case name: `None` once a statement
/// changed one in a way the suite does not follow (`UPDATE`, `CREATE TABLE … AS`,
/// an `INSERT … SELECT`, a value Broadhead does not read).
type Tables = BTreeMap<String, Option<Table>>;

/// A table's columns and, per column, its values.
struct Table {
    fields: Vec<Field>,
    columns: Vec<Vec<ScalarValue>>,
}

impl Table {
    fn rows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// The table as arrays.
    fn arrays(&self) -> Vec<ArrayRef> {
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
fn one_row() -> RecordBatch {
    RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .expect("an empty one-row batch")
}

/// The value `CAST(e AS to)` gives, as an `INSERT` stores it.
fn stored_value(e: &ast::Expr, to: &DataType, sql: &str) -> Option<ScalarValue> {
    let e = expr_from_ast(e, sql).ok()?;
    let cast = Expr::new(ExprKind::Cast {
        expr: Box::new(e),
        to: to.clone(),
    });
    let typed = optimize(bind(&cast, &Schema::empty()).ok()?);
    ScalarValue::from_array(interpret(&typed, &one_row()).ok()?.as_ref(), 0)
}

/// A `CREATE TABLE name (column type, …)`'s empty table.
fn created_table(c: &CreateTable) -> Option<Table> {
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
fn inserted(table: &mut Table, insert: &Insert, sql: &str) -> Option<()> {
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
fn apply_statement(sql: &str, followed: bool, tables: &mut Tables) {
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
fn note(what: &str, sql: &str) {
    if std::env::var_os("CONFORMANCE_DEBUG").is_some() {
        eprintln!("{what}\t{}", one_line(sql));
    }
}

/// Stops following every table whose name the statement mentions.
fn forget_named(sql: &str, tables: &mut Tables) {
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

/// The literals of `e` in pre-order, as mutable references, each with whether it
/// is the operand of an explicit `CAST`/`TRY_CAST`.
fn literals(e: &mut Expr, cast_operand: bool, out: &mut Vec<(*mut Expr, bool)>) {
    if matches!(e.kind, ExprKind::Literal(_)) {
        out.push((e, cast_operand));
        return;
    }
    let mut children: Vec<&mut Expr> = Vec::new();
    match &mut e.kind {
        ExprKind::Cast { expr: x, .. } | ExprKind::TryCast { expr: x, .. } => {
            return literals(x, true, out);
        }
        ExprKind::Column(_) | ExprKind::Literal(_) => {}
        ExprKind::Call { args, .. } => children.extend(args.iter_mut()),
        ExprKind::And(v) | ExprKind::Or(v) => children.extend(v.iter_mut()),
        ExprKind::Not(x) | ExprKind::IsNull { expr: x, .. } => children.push(x),
        ExprKind::Case {
            operand,
            branches,
            else_expr,
        } => {
            children.extend(operand.as_deref_mut());
            for (w, t) in branches {
                children.push(w);
                children.push(t);
            }
            children.extend(else_expr.as_deref_mut());
        }
        ExprKind::InList { expr, list, .. } => {
            children.push(expr);
            children.extend(list.iter_mut());
        }
        ExprKind::Between {
            expr, low, high, ..
        } => {
            children.push(expr);
            children.push(low);
            children.push(high);
        }
    }
    for c in children {
        literals(c, false, out);
    }
}

/// The literal values of `e` in pre-order, each with whether it is the operand of
/// an explicit cast.
fn literal_values(e: &Expr) -> Vec<(ScalarValue, bool)> {
    let mut copy = e.clone();
    let mut ptrs = Vec::new();
    literals(&mut copy, false, &mut ptrs);
    ptrs.into_iter()
        // SAFETY: the pointers are into `copy`, alive and not otherwise borrowed here.
        .map(|(p, cast)| match unsafe { &(*p).kind } {
            ExprKind::Literal(v) => (v.clone(), cast),
            _ => unreachable!("literals() returns literal nodes"),
        })
        .collect()
}

/// `e` with the literals at the given pre-order indexes replaced by columns named
/// `{prefix}{index}`.
fn with_columns(e: &Expr, which: &BTreeSet<usize>, prefix: &str) -> Expr {
    let mut copy = e.clone();
    let mut ptrs = Vec::new();
    literals(&mut copy, false, &mut ptrs);
    for (i, (p, _)) in ptrs.into_iter().enumerate() {
        if which.contains(&i) {
            // SAFETY: the pointers are into `copy`, distinct (no literal contains
            // another), alive, and not otherwise borrowed here.
            let node = unsafe { &mut *p };
            node.kind = ExprKind::Column(format!("{prefix}{i}"));
        }
    }
    copy
}

/// The shape of a bound tree: node kinds, functions and types, a column and a
/// literal of the same type alike.
fn shape(e: &TypedExpr, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{}:", e.data_type);
    match &e.kind {
        TypedKind::Column(_) | TypedKind::Literal(_) => out.push_str("leaf"),
        TypedKind::Call { sig, args } => {
            let _ = write!(out, "{}(", sig.name);
            args.iter().for_each(|a| shape(a, out));
            out.push(')');
        }
        TypedKind::And(v) | TypedKind::Or(v) | TypedKind::Coalesce(v) => {
            let _ = write!(out, "{}(", variant(&e.kind));
            v.iter().for_each(|a| shape(a, out));
            out.push(')');
        }
        // A cast of a VARCHAR column reads the string as the binder reads a
        // string literal of that type (docs/semantics.md, "Functions: cast").
        TypedKind::Cast(x)
            if x.data_type == DataType::Utf8
                && matches!(x.kind, TypedKind::Column(_) | TypedKind::Literal(_)) =>
        {
            out.push_str("leaf")
        }
        TypedKind::Not(x) | TypedKind::Cast(x) | TypedKind::TryCast(x) => {
            let _ = write!(out, "{}(", variant(&e.kind));
            shape(x, out);
            out.push(')');
        }
        TypedKind::IsNull { expr, negated } => {
            let _ = write!(out, "isnull{negated}(");
            shape(expr, out);
            out.push(')');
        }
        TypedKind::InList {
            expr,
            list,
            negated,
        } => {
            let _ = write!(out, "in{negated}{list:?}(");
            shape(expr, out);
            out.push(')');
        }
        TypedKind::Case {
            branches,
            else_expr,
        } => {
            out.push_str("case(");
            for (w, t) in branches {
                shape(w, out);
                shape(t, out);
            }
            shape(else_expr, out);
            out.push(')');
        }
        TypedKind::Let { id, value, body } => {
            let _ = write!(out, "let{id}(");
            shape(value, out);
            shape(body, out);
            out.push(')');
        }
        TypedKind::Ref(id) => {
            let _ = write!(out, "ref{id}");
        }
    }
}

/// The name of a node's kind.
fn variant(k: &TypedKind) -> &'static str {
    match k {
        TypedKind::And(_) => "and",
        TypedKind::Or(_) => "or",
        TypedKind::Coalesce(_) => "coalesce",
        TypedKind::Not(_) => "not",
        TypedKind::Cast(_) => "cast",
        TypedKind::TryCast(_) => "try_cast",
        _ => "node",
    }
}

fn shape_of(e: &TypedExpr) -> String {
    let mut s = String::new();
    shape(e, &mut s);
    s
}

/// What Broadhead answers for a case: each item's values as DuckDB's runner prints
/// them, with the item's type, or the error of the first item that fails.
enum Answer {
    Value(Vec<String>, DataType),
    Error(String),
}

/// What the suite measured of the cases it ran.
#[derive(Default)]
struct Stats {
    /// Expressions the `Projector` accepted.
    projected: usize,
    /// Of those, the ones it compiled (it interprets the rest).
    jit: usize,
    /// Literals turned into columns.
    columns: usize,
    /// Literals (not counting untyped NULLs).
    literals: usize,
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.projected += other.projected;
        self.jit += other.jit;
        self.columns += other.columns;
        self.literals += other.literals;
    }
}

/// The start of the answer where the `Projector` and the interpreter disagree.
const BACK_ENDS_DIFFER: &str = "the back ends differ";

/// The bind error of a known function called with arguments none of its
/// signatures takes.
const NO_OVERLOAD: &str = "no function matches";

/// Bind errors that mean "Broadhead lacks this", not "this input is wrong".
fn lacks(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "unknown function",
        "not supported",
        "unsupported",
        NO_OVERLOAD,
        "must be a literal",
    ]
    .iter()
    .any(|k| m.contains(k))
}

/// `e` over `batch` through the `Projector` (the JIT where it compiles) and the
/// interpreter, which must agree: the array or Broadhead's error, or `Err` with
/// what Broadhead lacks.
fn evaluate(
    e: &Expr,
    batch: &RecordBatch,
    stats: &mut Stats,
) -> Result<Result<ArrayRef, String>, String> {
    let schema = batch.schema();
    let projector = Projector::from_exprs(&schema, std::slice::from_ref(e));
    let typed = bind(e, &schema).map(optimize);
    let (ours, reference) = match (projector, typed) {
        (Ok(p), Ok(t)) => {
            stats.jit += usize::from(p.is_jit(0));
            stats.projected += 1;
            (
                p.evaluate(batch)
                    .map(|mut v| v.remove(0))
                    .map_err(|e| e.to_string()),
                interpret(&t, batch).map_err(|e| e.to_string()),
            )
        }
        (Err(a), Err(b)) => (Err(a.to_string()), Err(b.to_string())),
        (Err(a), Ok(_)) => (Err(a.to_string()), Err("(binds)".into())),
        (Ok(_), Err(b)) => (Err("(compiles)".into()), Err(b.to_string())),
    };
    // The back ends must agree; where they do not, that is a bug to list (and to
    // fix), never a match.
    let differ = |jit: String, interpreter: String| {
        Ok(Err(format!(
            "{BACK_ENDS_DIFFER}: Projector {}, interpreter {}",
            one_line(&jit),
            one_line(&interpreter)
        )))
    };
    match (ours, reference) {
        (Ok(a), Ok(b)) if same_array(a.as_ref(), b.as_ref()) => Ok(Ok(a)),
        (Err(a), Err(b)) if a == b => {
            if lacks(&a) {
                Err(format!("lacks: {a}"))
            } else {
                Ok(Err(a))
            }
        }
        (a, b) => differ(
            a.map_or_else(|e| e, |a| format!("{a:?}")),
            b.map_or_else(|e| e, |b| format!("{b:?}")),
        ),
    }
}

/// A batch of `rows` rows.
fn batch_of(fields: Vec<Field>, arrays: Vec<ArrayRef>, rows: usize) -> RecordBatch {
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .expect("columns of the batch's length")
}

/// Runs one case: the table's rows filtered by `WHERE`, each item through both
/// back ends with its literals as columns where that keeps its meaning, then
/// sorted and limited. `Err` says why the suite cannot run it.
fn run(select: &Select, tables: &Tables, stats: &mut Stats) -> Result<Vec<Answer>, String> {
    let mut batch = match &select.table {
        None => one_row(),
        Some(name) => match tables.get(name) {
            Some(Some(t)) => batch_of(t.fields.clone(), t.arrays(), t.rows()),
            Some(None) => return Err(format!("table not followed: {name}")),
            None => return Err(format!("table not followed: {name} (unknown)")),
        },
    };
    if let Some(filter) = &select.filter {
        match evaluate(filter, &batch, stats)? {
            Ok(mask) => match mask.as_boolean_opt() {
                Some(mask) => batch = filter_record_batch(&batch, mask).expect("a full mask"),
                None => return Err("lacks: a WHERE that is not BOOLEAN".into()),
            },
            Err(m) => return Ok(vec![Answer::Error(m)]),
        }
    }
    let rows = batch.num_rows();
    let base: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let base_schema = Schema::new(base.clone());
    let mut fields = base.clone();
    let mut arrays = batch.columns().to_vec();
    let mut exprs = Vec::new();
    for (k, item) in select.items.iter().enumerate() {
        let item = match item {
            Ok(e) => e,
            Err(message) => {
                exprs.push(Err(message.clone()));
                continue;
            }
        };
        let values = literal_values(item);
        stats.literals += values
            .iter()
            .filter(|(v, _)| !matches!(v, ScalarValue::Null(DataType::Null)))
            .count();
        let prefix = format!("__literal{k}_");
        let field = |i: usize| Field::new(format!("{prefix}{i}"), values[i].0.data_type(), true);
        let schema_with = |trial: &BTreeSet<usize>| {
            Schema::new(
                base.iter()
                    .cloned()
                    .chain(trial.iter().map(|&i| field(i)))
                    .collect::<Vec<_>>(),
            )
        };
        let chosen: BTreeSet<usize> = match bind(item, &base_schema) {
            Ok(t) => {
                // Greedily, each literal whose column leaves the bound shape as it is.
                let literal_shape = shape_of(&t);
                let mut chosen = BTreeSet::new();
                for (i, (v, _)) in values.iter().enumerate() {
                    if matches!(v, ScalarValue::Null(DataType::Null)) {
                        continue;
                    }
                    let mut trial = chosen.clone();
                    trial.insert(i);
                    let e = with_columns(item, &trial, &prefix);
                    if bind(&e, &schema_with(&trial)).is_ok_and(|t| shape_of(&t) == literal_shape) {
                        chosen = trial;
                    }
                }
                chosen
            }
            Err(e) if lacks(&e.to_string()) => return Err(format!("lacks: {e}")),
            Err(_) => {
                // A literal that does not read (`CAST('1e1' AS INTEGER)`): the strings
                // under explicit casts become columns, so the cast runs per row; any
                // other bad literal stays, and its bind error is the answer.
                let trial: BTreeSet<usize> = values
                    .iter()
                    .enumerate()
                    .filter(|(_, (v, cast))| *cast && matches!(v, ScalarValue::Utf8(_)))
                    .map(|(i, _)| i)
                    .collect();
                match bind(&with_columns(item, &trial, &prefix), &schema_with(&trial)) {
                    Ok(_) => trial,
                    Err(e) if lacks(&e.to_string()) => return Err(format!("lacks: {e}")),
                    Err(_) => BTreeSet::new(),
                }
            }
        };
        for &i in &chosen {
            arrays.push(values[i].0.to_array(rows));
            fields.push(field(i));
        }
        stats.columns += chosen.len();
        exprs.push(Ok(with_columns(item, &chosen, &prefix)));
    }
    let batch = batch_of(fields, arrays, rows);
    let mut results = Vec::new();
    for e in &exprs {
        let result = match e {
            Ok(e) => evaluate(e, &batch, stats)?,
            Err(message) => Err(message.clone()),
        };
        match result {
            Ok(a) => results.push(a),
            Err(m) => return Ok(vec![Answer::Error(m)]),
        }
    }
    if !select.order.is_empty() {
        let mut keys = Vec::new();
        for (key, options) in &select.order {
            let values = match key {
                OrderKey::Item(k) => results[*k].clone(),
                OrderKey::Expr(e) => match evaluate(e, &batch, stats)? {
                    Ok(a) => a,
                    Err(m) => return Ok(vec![Answer::Error(m)]),
                },
            };
            keys.push(SortColumn {
                values,
                options: Some(*options),
            });
        }
        let indices =
            lexsort_to_indices(&keys, None).map_err(|e| format!("lacks: ORDER BY {e}"))?;
        results = results
            .iter()
            .map(|a| take(a.as_ref(), &indices, None).expect("indices within the array"))
            .collect();
    }
    if let Some(n) = select.limit {
        results = results.iter().map(|a| a.slice(0, n.min(a.len()))).collect();
    }
    Ok(results
        .iter()
        .map(|a| {
            let values = (0..a.len()).map(|i| render(a.as_ref(), i)).collect();
            Answer::Value(values, a.data_type().clone())
        })
        .collect())
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian, for any day
/// count: chrono covers ±262,143 years, and the calendar repeats every 400 years
/// (146,097 days).
fn civil(days: i64) -> (i64, u32, u32) {
    let cycles = days.div_euclid(146_097);
    // 1970-01-01 is day 719,163 of the Common Era (0001-01-01 is day 1).
    let d = NaiveDate::from_num_days_from_ce_opt((days.rem_euclid(146_097) + 719_163) as i32)
        .expect("a day within 400 years of 1970 is in chrono's range");
    (i64::from(d.year()) + 400 * cycles, d.month(), d.day())
}

/// DuckDB's date text: `1992-01-01`, `0044-03-15 (BC)`.
fn date_text(days: i64) -> (String, bool) {
    let (y, m, d) = civil(days);
    if y <= 0 {
        (format!("{:04}-{m:02}-{d:02}", 1 - y), true)
    } else {
        (format!("{y:04}-{m:02}-{d:02}"), false)
    }
}

/// `HH:MM:SS[.fraction]` of nanoseconds, trailing zeros trimmed.
fn time_text(nanos: i64) -> String {
    let (secs, frac) = (
        nanos.div_euclid(1_000_000_000),
        nanos.rem_euclid(1_000_000_000),
    );
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let f = format!("{frac:09}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

fn nanos_per(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// DuckDB's interval text: `1 year 2 months 3 days 04:05:06.5`, `00:00:00`.
fn interval_text(months: i32, days: i32, nanos: i64) -> String {
    let mut parts = Vec::new();
    let (years, months) = (months / 12, months % 12);
    for (n, unit) in [(years, "year"), (months, "month"), (days, "day")] {
        if n != 0 {
            let plural = if n == 1 || n == -1 { "" } else { "s" };
            parts.push(format!("{n} {unit}{plural}"));
        }
    }
    if nanos != 0 {
        let sign = if nanos < 0 { "-" } else { "" };
        parts.push(format!("{sign}{}", time_text(nanos.abs())));
    }
    if parts.is_empty() {
        "00:00:00".into()
    } else {
        parts.join(" ")
    }
}

/// Row `row` of `a` as DuckDB's sqllogictest runner prints it.
fn render(a: &dyn Array, row: usize) -> String {
    let Some(v) = ScalarValue::from_array(a, row) else {
        return array_value_to_string(a, row).unwrap_or_else(|e| format!("<{e}>"));
    };
    use ScalarValue as S;
    match v {
        S::Null(_) => "NULL".into(),
        S::Boolean(b) => b.to_string(),
        S::Int8(x) => x.to_string(),
        S::Int16(x) => x.to_string(),
        S::Int32(x) => x.to_string(),
        S::Int64(x) => x.to_string(),
        S::UInt8(x) => x.to_string(),
        S::UInt16(x) => x.to_string(),
        S::UInt32(x) => x.to_string(),
        S::UInt64(x) => x.to_string(),
        S::Float32(x) => float_text(f64::from(x)),
        S::Float64(x) => float_text(x),
        S::Decimal128(u, _, s) => {
            let digits = u.unsigned_abs().to_string();
            let s = s.max(0) as usize;
            let digits = format!("{digits:0>width$}", width = s + 1);
            let (int, frac) = digits.split_at(digits.len() - s);
            let sign = if u < 0 { "-" } else { "" };
            if s == 0 {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            }
        }
        S::Utf8(s) if s.is_empty() => "(empty)".into(),
        S::Utf8(s) => s.replace('\0', "\\0"),
        S::Binary(b) => format_blob(&b),
        S::Date32(d) => {
            let (text, bc) = date_text(i64::from(d));
            if bc {
                format!("{text} (BC)")
            } else {
                text
            }
        }
        S::Timestamp(t, unit, zone) => {
            let per = nanos_per(&unit);
            let per_day = 86_400_000_000_000 / per;
            let (days, rest) = (t.div_euclid(per_day), t.rem_euclid(per_day));
            let (date, bc) = date_text(days);
            let mut s = format!("{date} {}", time_text(rest * per));
            if zone.is_some() {
                s.push_str("+00");
            }
            if bc {
                s.push_str(" (BC)");
            }
            s
        }
        S::Time(t, unit) => time_text(t * nanos_per(&unit)),
        S::IntervalMonthDayNano(i) => interval_text(i.months, i.days, i.nanoseconds),
        S::Decimal256(..) => array_value_to_string(a, row).unwrap_or_default(),
    }
}

fn float_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else if x != 0.0 && !(1e-5..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

fn parse_float(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Some(f64::NAN),
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

/// Whether our value (of type `t`) is the expected text, as DuckDB's runner decides.
fn same_value(ours: &str, expected: &str, t: &DataType) -> bool {
    if ours == expected {
        return true;
    }
    if t.is_numeric() {
        let (Some(a), Some(b)) = (parse_float(ours), parse_float(expected)) else {
            return false;
        };
        if matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64) {
            if a.is_nan() && b.is_nan() {
                return true;
            }
            if !a.is_finite() || !b.is_finite() {
                return a == b;
            }
            return (a - b).abs() <= b.abs() * 0.01 + 0.000_000_01;
        }
        // Integers and decimals: equal as numbers (both texts are exact here, and
        // the runner casts the expected text to the result's type).
        return match (ours.parse::<i128>(), expected.parse::<i128>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        };
    }
    if *t == DataType::Boolean {
        let norm = |s: &str| match s.to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        };
        return norm(ours).is_some() && norm(ours) == norm(expected);
    }
    false
}

/// One line of the outcome, for the deviation list: SQL, our answer, DuckDB's.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A disagreement: (place, SQL, ours, DuckDB's).
type Disagreement = (String, String, String, String);

/// Our rows: the items' values side by side.
fn rows_of(answers: &[Answer]) -> Vec<Vec<String>> {
    let columns: Vec<&Vec<String>> = answers
        .iter()
        .filter_map(|a| match a {
            Answer::Value(v, _) => Some(v),
            Answer::Error(_) => None,
        })
        .collect();
    let n = columns.first().map_or(0, |c| c.len());
    (0..n)
        .map(|r| columns.iter().map(|c| c[r].clone()).collect())
        .collect()
}

/// Compares a case's answers with the block's expectation: None for a match, else
/// (ours, DuckDB's) as text.
fn disagreement(block: &Block, answers: &[Answer]) -> Option<(String, String)> {
    let error = answers.iter().find_map(|a| match a {
        Answer::Error(e) => Some(e.clone()),
        Answer::Value(..) => None,
    });
    let ours = || match &error {
        Some(e) => format!("error: {}", one_line(e)),
        None => rows_of(answers)
            .iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>()
            .join(" | "),
    };
    if error
        .as_ref()
        .is_some_and(|e| e.starts_with(BACK_ENDS_DIFFER))
    {
        return Some((ours(), block.expected.join("\t")));
    }
    match block.kind {
        Kind::Error if error.is_some() => None,
        Kind::Error => Some((ours(), "error".into())),
        Kind::Ok if error.is_none() => None,
        Kind::Ok => Some((ours(), "ok".into())),
        Kind::Query => {
            let theirs = block.expected.join("\t");
            if error.is_some() {
                return Some((ours(), theirs));
            }
            let width = answers.len().max(1);
            let types: Vec<&DataType> = answers
                .iter()
                .map(|a| match a {
                    Answer::Value(_, t) => t,
                    Answer::Error(_) => unreachable!("no error here"),
                })
                .collect();
            let mut rows = rows_of(answers);
            let mut expected: Vec<String> = block
                .expected
                .iter()
                .flat_map(|l| l.split('\t'))
                .map(str::to_string)
                .collect();
            let mut flat = match block.sort {
                Sort::None => rows.concat(),
                Sort::Rows => {
                    rows.sort();
                    let mut theirs: Vec<Vec<String>> =
                        expected.chunks(width).map(<[String]>::to_vec).collect();
                    theirs.sort();
                    expected = theirs.concat();
                    rows.concat()
                }
                Sort::Values => {
                    expected.sort();
                    rows.concat()
                }
            };
            if block.sort == Sort::Values {
                flat.sort();
            }
            let ok = flat.len() == expected.len()
                && flat
                    .iter()
                    .zip(&expected)
                    .enumerate()
                    .all(|(i, (v, e))| same_value(v, e, types[i % width]));
            (!ok).then(|| (ours(), theirs))
        }
    }
}

/// The deviation list: place → (reason, the entry's line).
fn read_deviations(text: &str) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let mut reason = String::from("unclassified");
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("## ") {
            reason = r.trim().to_string();
        } else if !line.trim().is_empty() && !line.starts_with('#') {
            let place = line.split('\t').next().unwrap_or("").to_string();
            out.insert(place, (reason.clone(), line.to_string()));
        }
    }
    out
}

fn entry_line(d: &Disagreement) -> String {
    format!(
        "{}\t{}\tours: {}\tduckdb: {}",
        d.0,
        one_line(&d.1),
        d.2,
        one_line(&d.3)
    )
}

const HEADER: &str = "\
# Known disagreements with DuckDB's sqllogictest files (tests/conformance.rs).
# Each group is headed by `## reason (docs/semantics.md section)`; each entry is
# place<TAB>SQL<TAB>ours: …<TAB>duckdb: … . The test fails on a disagreement not
# listed here (with this exact answer) and on a listed one that now matches.
# BROADHEAD_BLESS=1 cargo test --test conformance rewrites the entries, keeping
# their groups; new ones go under `## unclassified` to be sorted by hand.
";

fn write_deviations(list: &[Disagreement], old: &BTreeMap<String, (String, String)>) -> String {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in list {
        let reason = old
            .get(&d.0)
            .map_or("unclassified".to_string(), |(r, _)| r.clone());
        groups.entry(reason).or_default().push(entry_line(d));
    }
    let mut out = String::from(HEADER);
    for (reason, lines) in groups {
        out.push_str(&format!("\n## {reason}\n"));
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn duckdb_scalar_function_tests() {
    let start = Instant::now();
    let root = root();
    let mut files = Vec::new();
    test_files(&root.join("duckdb"), &mut files);
    assert!(files.len() > 100, "the vendored DuckDB tests are missing");

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    // Per area (`string`, `cast`, …): match, deviation, unsupported.
    let mut areas: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut unsupported: BTreeMap<String, usize> = BTreeMap::new();
    let mut stats = Stats::default();
    let mut found: Vec<Disagreement> = Vec::new();
    // CONFORMANCE_DEBUG=1 prints every case's outcome (with --nocapture).
    let debug = std::env::var_os("CONFORMANCE_DEBUG").is_some();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let area = rel
            .split('/')
            .skip_while(|p| *p != "function" && *p != "cast")
            .find(|p| *p != "function")
            .unwrap_or("other")
            .to_string();
        let mut tables = Tables::new();
        for block in parse_file(&rel, &text) {
            if !block
                .sql
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("select")
            {
                // CREATE, INSERT, SET, …: not a case, but it may make a table.
                if block.kind == Kind::Ok {
                    apply_statement(&block.sql, block.skip.is_none(), &mut tables);
                }
                continue;
            }
            let why = block.skip.clone().map(Err).unwrap_or_else(|| {
                if block
                    .expected
                    .iter()
                    .any(|l| l.contains("values hashing to"))
                {
                    return Err("hashed result".into());
                }
                let select = select_query(&block.sql, block.nulls_first)?;
                let mut s = Stats::default();
                match run(&select, &tables, &mut s) {
                    // DuckDB refuses the call too (`lpad()`, `repeat(1)`): a match.
                    Err(m) if block.kind == Kind::Error && m.contains(NO_OVERLOAD) => {
                        Ok((vec![Answer::Error(m)], s))
                    }
                    Err(m) => Err(m),
                    Ok(answers) => Ok((answers, s)),
                }
            });
            match why {
                Err(reason) => {
                    areas.entry(area.clone()).or_default()[2] += 1;
                    if debug {
                        eprintln!(
                            "UNSUPPORTED {}\t{}\t{}",
                            block.place,
                            one_line(&block.sql),
                            one_line(&reason)
                        );
                    }
                    *counts.entry("unsupported").or_default() += 1;
                    let key = reason.split([':', '`']).next().unwrap_or("").to_string();
                    *unsupported.entry(key).or_default() += 1;
                }
                Ok((answers, s)) => {
                    stats.add(&s);
                    let outcome = disagreement(&block, &answers);
                    areas.entry(area.clone()).or_default()[usize::from(outcome.is_some())] += 1;
                    match outcome {
                        None => {
                            if debug {
                                eprintln!("MATCH\t{}\t{}", block.place, one_line(&block.sql));
                            }
                            *counts.entry("match").or_default() += 1
                        }
                        Some((ours, theirs)) => {
                            found.push((block.place.clone(), block.sql.clone(), ours, theirs))
                        }
                    }
                }
            }
        }
    }

    let list_path = root.join("deviations.txt");
    let current = std::fs::read_to_string(&list_path).unwrap_or_default();
    let listed = read_deviations(&current);
    let mut new = Vec::new();
    for d in &found {
        match listed.get(&d.0) {
            Some((_, line)) if *line == entry_line(d) => {
                *counts.entry("documented deviation").or_default() += 1
            }
            _ => new.push(entry_line(d)),
        }
    }
    let found_places: BTreeSet<&String> = found.iter().map(|d| &d.0).collect();
    let fixed: Vec<&String> = listed
        .keys()
        .filter(|p| !found_places.contains(p))
        .collect();
    eprintln!(
        "conformance: {} files, {counts:?}, new disagreements {}, listed but now matching {}; \
         {} of {} expressions compiled, {} of {} literals as columns; {:.1?}",
        files.len(),
        new.len(),
        fixed.len(),
        stats.jit,
        stats.projected,
        stats.columns,
        stats.literals,
        start.elapsed()
    );
    eprintln!("by area [match, disagreement, unsupported]: {areas:?}");
    eprintln!("unsupported by reason: {unsupported:#?}");
    if std::env::var_os("BROADHEAD_BLESS").is_some() {
        std::fs::write(&list_path, write_deviations(&found, &listed)).unwrap();
        return;
    }
    assert!(
        new.is_empty() && fixed.is_empty(),
        "{} new disagreement(s) with DuckDB:\n{}\n\n{} listed deviation(s) that now match \
         (remove them):\n{}\n\n{REGENERATE}",
        new.len(),
        new.join("\n"),
        fixed.len(),
        fixed
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        counts.get("match").copied().unwrap_or(0) > 500,
        "too few cases match: {counts:?}"
    );
}

#[test]
fn renders_dates_and_intervals_as_duckdb() {
    assert_eq!(date_text(0), ("1970-01-01".to_string(), false));
    assert_eq!(date_text(8035), ("1992-01-01".to_string(), false));
    // 44 BC is the proleptic year -43.
    let (y, m, d) = civil(-735_160);
    assert_eq!((y, m, d), (-43, 3, 15));
    assert_eq!(date_text(-735_160), ("0044-03-15".to_string(), true));
    // The largest DATE, beyond chrono's range.
    assert_eq!(civil(i64::from(i32::MAX)), (5_881_580, 7, 11));
    assert_eq!(
        interval_text(14, 3, 3_723_500_000_000),
        "1 year 2 months 3 days 01:02:03.5"
    );
    assert_eq!(interval_text(-1, 0, -1_000_000_000), "-1 month -00:00:01");
    assert_eq!(interval_text(0, 0, 0), "00:00:00");
    assert!(same_value("0.1", "0.1000001", &DataType::Float64));
    assert!(!same_value("0.1", "0.2", &DataType::Float64));
    assert!(same_value("true", "1", &DataType::Boolean));
    assert!(same_value("1.50", "1.5", &DataType::Decimal128(3, 2)));
}
