//! The registry as a table, one row per signature (as DuckDB's `duckdb_functions()`):
//! what `broadhead functions [PATTERN]` prints and Python's `broadhead.functions()`
//! returns, from the same entries `docs/functions.md` is generated from.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use super::{by_domain, sql_form, Entry, Function};

/// Which functions a listing shows: those whose name or an alias contains the
/// pattern, or matches it as a glob (`*`, `?`, `[…]`, `[!…]`); case-insensitive. An
/// operator also matches its SQL spelling (`+`, `LIKE`).
pub enum Pattern {
    /// Every function.
    All,
    /// A substring, lower case.
    Substring(String),
    /// A glob, as an anchored case-insensitive regular expression.
    Glob(regex::Regex),
}

impl Pattern {
    /// The pattern `text` (`None`: every function); an error names a malformed glob.
    pub fn new(text: Option<&str>) -> Result<Pattern, String> {
        let Some(p) = text else {
            return Ok(Pattern::All);
        };
        if p.contains(['*', '?', '[']) {
            let regex = regex::Regex::new(&glob_regex(p)?)
                .map_err(|e| format!("invalid pattern {p:?}: {e}"))?;
            Ok(Pattern::Glob(regex))
        } else {
            Ok(Pattern::Substring(p.to_lowercase()))
        }
    }

    /// Whether it selects `f`.
    pub fn selects(&self, f: &Function) -> bool {
        let operator = sql_form(f.name);
        match self {
            Pattern::All => true,
            Pattern::Substring(p) => {
                f.names().any(|n| n.to_lowercase().contains(p.as_str()))
                    || operator.is_some_and(|form| spelled(&form, p))
            }
            Pattern::Glob(g) => {
                f.names().any(|n| g.is_match(n)) || operator.is_some_and(|form| g.is_match(&form))
            }
        }
    }
}

/// A glob as an anchored, case-insensitive regular expression.
fn glob_regex(glob: &str) -> Result<String, String> {
    let mut out = String::from("(?i)^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                out.push('[');
                if chars.peek() == Some(&'!') {
                    chars.next();
                    out.push('^');
                }
                let mut closed = false;
                let mut first = true;
                for c in chars.by_ref() {
                    match c {
                        ']' if !first => {
                            closed = true;
                            break;
                        }
                        '\\' | '[' | ']' | '&' | '~' | '^' => {
                            out.push('\\');
                            out.push(c);
                        }
                        _ => out.push(c),
                    }
                    first = false;
                }
                if !closed {
                    return Err(format!(
                        "invalid pattern {glob:?}: unclosed character class"
                    ));
                }
                out.push(']');
            }
            _ => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out.push('$');
    Ok(out)
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
pub fn catalog_schema() -> Arc<Schema> {
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

/// The functions `pattern` selects, one row per signature, by domain as
/// `docs/functions.md` lists them ([`catalog_schema`]); no rows when none matches.
pub fn catalog(pattern: &Pattern) -> RecordBatch {
    let mut rows: Vec<(&Function, Entry)> = Vec::new();
    for (_, list) in by_domain() {
        for f in list.into_iter().filter(|f| pattern.selects(f)) {
            rows.extend(f.entries().into_iter().map(|e| (f, e)));
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
    RecordBatch::try_new(catalog_schema(), columns).expect("the columns match the schema")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selected(pattern: &str) -> Vec<&'static str> {
        let p = Pattern::new(Some(pattern)).unwrap();
        super::super::functions()
            .iter()
            .filter(|f| p.selects(f))
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
        assert!(selected("[lu]ower").contains(&"lower"));
        assert!(!selected("[!l]ower").contains(&"lower"));
        assert!(selected("regexp_l?ke").contains(&"regexp_like"));
        assert!(Pattern::new(Some("[")).is_err());
        assert!(Pattern::new(Some("a[b")).is_err());
    }

    #[test]
    fn the_catalog_has_a_row_per_signature() {
        let all = catalog(&Pattern::All);
        let signatures: usize = super::super::functions()
            .iter()
            .map(|f| f.entries().len())
            .sum();
        assert_eq!(all.num_rows(), signatures);
        let none = catalog(&Pattern::new(Some("no_such_function_zz")).unwrap());
        assert_eq!(none.num_rows(), 0);
    }
}
