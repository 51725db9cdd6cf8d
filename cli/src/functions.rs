//! `broadhead functions [PATTERN]`: the function registry, one row per signature
//! (as DuckDB's `duckdb_functions()`), the same entries `docs/functions.md` is
//! generated from.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::functions::{by_domain, sql_form, Entry, Function};
use clap::Args;
use globset::GlobBuilder;

use super::args::OutputArgs;
use super::{output, CliResult, Failure};

/// Arguments of `broadhead functions`.
#[derive(Args, Debug)]
pub struct FunctionsArgs {
    /// Only functions whose name or an alias contains PATTERN, or matches it as a
    /// glob (`*`, `?`, `[…]`); case-insensitive. An operator also matches its SQL
    /// spelling (`+`, `LIKE`)
    pattern: Option<String>,
    #[command(flatten)]
    out: OutputArgs,
}

/// How a pattern selects functions.
enum Matcher {
    All,
    Substring(String),
    Glob(globset::GlobMatcher),
}

impl Matcher {
    fn new(pattern: Option<&str>) -> CliResult<Matcher> {
        let Some(p) = pattern else {
            return Ok(Matcher::All);
        };
        if p.contains(['*', '?', '[']) {
            let glob = GlobBuilder::new(p)
                .case_insensitive(true)
                .build()
                .map_err(|e| Failure::usage(format!("invalid pattern {p:?}: {e}")))?;
            Ok(Matcher::Glob(glob.compile_matcher()))
        } else {
            Ok(Matcher::Substring(p.to_lowercase()))
        }
    }

    fn selects(&self, f: &Function) -> bool {
        let operator = sql_form(f.name);
        match self {
            Matcher::All => true,
            Matcher::Substring(p) => {
                f.names().any(|n| n.to_lowercase().contains(p.as_str()))
                    || operator.is_some_and(|form| spelled(&form, p))
            }
            Matcher::Glob(g) => {
                f.names().any(|n| g.is_match(n)) || operator.is_some_and(|form| g.is_match(form))
            }
        }
    }
}

/// Whether `pattern` (lower case) is the operator in `form` (`a + b`, `x IS TRUE`).
fn spelled(form: &str, pattern: &str) -> bool {
    let op = form
        .strip_prefix("a ")
        .and_then(|s| s.strip_suffix(" b"))
        .or_else(|| form.strip_prefix("x "))
        .unwrap_or(form);
    op.to_lowercase() == pattern.trim()
}

/// The columns of the listing.
fn schema() -> Arc<Schema> {
    let text = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
    Arc::new(Schema::new(vec![
        text("name", false),
        text("signature", false),
        text("operator", true),
        text("aliases", false),
        text("domain", false),
        text("null_behavior", false),
        Field::new("can_error", DataType::Boolean, false),
        text("kernel", false),
        text("description", false),
    ]))
}

/// Runs `broadhead functions`.
pub fn run(a: FunctionsArgs) -> CliResult {
    let matcher = Matcher::new(a.pattern.as_deref())?;
    let mut rows: Vec<(&Function, Entry)> = Vec::new();
    for (_, list) in by_domain() {
        for f in list.into_iter().filter(|f| matcher.selects(f)) {
            rows.extend(f.entries().into_iter().map(|e| (f, e)));
        }
    }
    if rows.is_empty() {
        if let Some(p) = &a.pattern {
            return Err(Failure::usage(format!(
                "no function matches {p:?} (`broadhead functions` lists them all)"
            )));
        }
    }
    let strings = |get: &dyn Fn(&Function, &Entry) -> Option<String>| {
        Arc::new(StringArray::from_iter(rows.iter().map(|(f, s)| get(f, s)))) as ArrayRef
    };
    let columns: Vec<ArrayRef> = vec![
        strings(&|f, _| Some(f.name.to_string())),
        strings(&|_, e| Some(e.signature.clone())),
        strings(&|f, _| sql_form(f.name)),
        strings(&|f, _| Some(f.aliases.join(", "))),
        strings(&|f, _| Some(f.domain.to_string())),
        strings(&|_, e| Some(e.nulls.describe().to_string())),
        Arc::new(BooleanArray::from_iter(
            rows.iter().map(|(_, s)| Some(s.can_error)),
        )),
        strings(&|_, e| Some(e.kernel.to_string())),
        strings(&|_, e| Some(e.doc.to_string())),
    ];
    let schema = schema();
    let batch = RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    let mut out = output::Output::new(&a.out, &schema, Some(usize::MAX))?;
    out.write(&batch)?;
    out.finish(&schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selected(pattern: &str) -> Vec<&'static str> {
        let m = Matcher::new(Some(pattern)).unwrap();
        broadhead::functions::functions()
            .iter()
            .filter(|f| m.selects(f))
            .map(|f| f.name)
            .collect()
    }

    #[test]
    fn patterns_match_names_aliases_and_operator_spellings() {
        assert!(selected("UPP").contains(&"upper"));
        assert!(selected("ucase").contains(&"upper"), "an alias");
        assert!(
            selected("char_len*").contains(&"length"),
            "a glob on an alias"
        );
        assert!(!selected("upp*").contains(&"lower"));
        assert_eq!(selected("+"), vec!["add"]);
        assert!(selected("like").contains(&"like"));
        assert!(Matcher::new(Some("[")).is_err());
    }
}
