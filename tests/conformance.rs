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
// The suite's parts live next to its data (a crate root's modules would
// otherwise be looked up in tests/).
#[path = "conformance/render.rs"]
mod render;
#[path = "conformance/sqllogic.rs"]
mod sqllogic;
#[path = "conformance/tables.rs"]
mod tables;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use arrow::compute::{filter_record_batch, lexsort_to_indices, take, SortColumn};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::typed::{TypedExpr, TypedKind};
use broadhead::{Expr, ExprKind, Projector, ScalarValue};
use common::same_array;
use render::{one_line, render, same_value};
use sqllogic::{parse_file, select_query, test_files, Block, Kind, OrderKey, Select, Sort};
use tables::{apply_statement, one_row, Tables};

const REGENERATE: &str =
    "Regenerate with:\n\n    BROADHEAD_BLESS=1 cargo test --test conformance\n\n\
     then move each new entry from \"unclassified\" under a reason citing docs/semantics.md.";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
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
        ExprKind::Not(x) | ExprKind::IsNull { expr: x, .. } | ExprKind::Field { expr: x, .. } => {
            children.push(x)
        }
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
            .skip_while(|p| *p != "function" && *p != "cast" && *p != "json")
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
