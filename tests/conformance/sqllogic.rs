//! What a sqllogictest file says: its blocks (with the directives that rule some
//! out) and the `SELECT`s the suite runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow::compute::SortOptions;
use broadhead::sql::expr_from_ast;
use broadhead::{Expr, ExprKind, ScalarValue};
use sqlparser::ast::{
    self, GroupByExpr, LimitClause, OrderBy, OrderByKind, OrderBySort, SelectItem, SetExpr,
    Statement, TableFactor, TableWithJoins,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

/// What a block expects.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// `query`: the rows after `----`.
    Query,
    /// `statement ok`.
    Ok,
    /// `statement error`.
    Error,
}

/// One `query` or `statement` block of a test file.
pub(crate) struct Block {
    /// `duckdb/test/sql/…/x.test:LINE` (the line of the block's header).
    pub(crate) place: String,
    pub(crate) kind: Kind,
    pub(crate) sql: String,
    pub(crate) expected: Vec<String>,
    /// Why the block is not a case, when the file's directives rule it out.
    pub(crate) skip: Option<String>,
    /// How a `query` block's rows are compared.
    pub(crate) sort: Sort,
    /// Whether `ORDER BY` puts NULLs first (`SET default_null_order`); DuckDB
    /// puts them last by default, descending too.
    pub(crate) nulls_first: bool,
}

/// How a `query` block's rows are compared (the header's sort mode).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Sort {
    /// In the order the query gives them.
    None,
    /// Rows sorted as strings (`rowsort`).
    Rows,
    /// All values sorted as strings (`valuesort`).
    Values,
}

/// `require` arguments that do not change what scalar functions compute (`json`:
/// the extension of DuckDB's JSON functions, built into Broadhead).
pub(crate) const HARMLESS_REQUIRES: &[&str] = &["json", "notwindows", "skip_reload", "vector_size"];

/// The setting a session statement changes (`SET x = …`, `PRAGMA x=…`, `RESET x`),
/// lower-case, and whether it resets it; None for other statements.
pub(crate) fn setting(sql: &str) -> Option<(String, bool)> {
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
pub(crate) const HARMLESS_SETTINGS: &[&str] = &[
    "default_null_order",
    "enable_verification",
    "disable_verification",
    "verify_external",
    "verify_serializer",
];

/// Splits a sqllogictest file into blocks (loops, `mode skip` and foreign
/// `onlyif`/`skipif` regions mark theirs as skipped).
pub(crate) fn parse_file(place: &str, text: &str) -> Vec<Block> {
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
pub(crate) fn test_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub(crate) struct Select {
    /// The items; one whose literal does not read (`DATE 'infinity'`) is
    /// `Err(message)`: that error is Broadhead's answer for it.
    pub(crate) items: Vec<Result<Expr, String>>,
    pub(crate) table: Option<String>,
    pub(crate) filter: Option<Expr>,
    pub(crate) order: Vec<(OrderKey, SortOptions)>,
    pub(crate) limit: Option<usize>,
}

/// What `ORDER BY` sorts on.
pub(crate) enum OrderKey {
    /// A select item, by position (`ORDER BY 2`) or alias.
    Item(usize),
    /// An expression over the table.
    Expr(Expr),
}

/// The `SELECT` of a block (or why the suite does not run it).
pub(crate) fn select_query(sql: &str, nulls_first: bool) -> Result<Select, String> {
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
