//! Trees as SQL text: the `Display` of [`Expr`], which the parser reads back into
//! the same tree (a property test checks this for generated trees), and the
//! spellings of operators, names and function names it uses.

use std::collections::HashMap;
use std::fmt;
use std::sync::{LazyLock, Mutex};

use crate::expr::{call, col, Expr, ExprKind};
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

/// The SQL spelling of an operator-named call, if it is one.
pub(crate) fn binary_operator(name: &str) -> Option<&'static str> {
    Some(match name {
        "add" => "+",
        "subtract" => "-",
        "multiply" => "*",
        "divide" => "/",
        "modulo" => "%",
        "equal" => "=",
        "not_equal" => "<>",
        "less_than" => "<",
        "less_than_or_equal_to" => "<=",
        "greater_than" => ">",
        "greater_than_or_equal_to" => ">=",
        "like" => "LIKE",
        "ilike" => "ILIKE",
        "is_distinct_from" => "IS DISTINCT FROM",
        "is_not_distinct_from" => "IS NOT DISTINCT FROM",
        "concat_op" => "||",
        "bitwise_and" => "&",
        "bitwise_or" => "|",
        "bitwise_xor" => "#",
        "shift_left" => "<<",
        "shift_right" => ">>",
        _ => return None,
    })
}

/// The SQL spelling of a postfix `IS …` test, if `name` is one.
pub(crate) fn postfix_operator(name: &str) -> Option<&'static str> {
    Some(match name {
        "is_true" => "IS TRUE",
        "is_not_true" => "IS NOT TRUE",
        "is_false" => "IS FALSE",
        "is_not_false" => "IS NOT FALSE",
        _ => return None,
    })
}

/// Writes a column name, quoting it when it is not a plain identifier.
pub(crate) fn write_identifier(f: &mut impl fmt::Write, name: &str) -> fmt::Result {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name);
    if plain {
        f.write_str(name)
    } else {
        write_quoted(f, name)
    }
}

/// Writes a function name: bare when the parser reads `name(a, …)` with `arity`
/// arguments back as a call of `name` with those arguments, quoted otherwise
/// (`"case"(x)`, `"trim"(x)`, which the parser reads as `btrim`). Asked of the
/// parser itself, once per name and arity, so no list of keyword-named functions
/// is kept: `left(s, 2)` and `year(d)` print bare, `"substring"(s, 1)` quoted.
pub(crate) fn write_function_name(
    f: &mut impl fmt::Write,
    name: &str,
    arity: usize,
) -> fmt::Result {
    let lower_identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if lower_identifier && (!is_keyword(name) || reads_back_as_call(name, arity)) {
        f.write_str(name)
    } else {
        write_quoted(f, name)
    }
}

/// Whether the parser reads `name(c0, c1, …)` (`arity` columns) back as the call of
/// `name` on them.
fn reads_back_as_call(name: &str, arity: usize) -> bool {
    static KNOWN: LazyLock<Mutex<HashMap<(String, usize), bool>>> = LazyLock::new(Default::default);
    let key = (name.to_string(), arity);
    if let Some(&known) = KNOWN.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return known;
    }
    // With columns, and with typed literals, whose leading keyword a form may
    // take for its own (`extract(DATE '…')` reads as `EXTRACT(DATE FROM …)`).
    let columns: Vec<Expr> = (0..arity).map(|i| col(format!("c{i}"))).collect();
    let dates: Vec<Expr> = (0..arity)
        .map(|_| Expr::new(ExprKind::Literal(crate::scalar::ScalarValue::Date32(0))))
        .collect();
    // Not under the lock: parsing may print a tree (in an error message).
    let reads_back = [columns, dates].into_iter().all(|args| {
        let written = format!(
            "{name}({})",
            args.iter()
                .map(|a| match &a.kind {
                    ExprKind::Column(c) => c.clone(),
                    _ => "DATE '1970-01-01'".to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        // As an operand on both sides of an operator, as the printer writes calls:
        // a keyword that starts a form of its own (`CASE`, `CAST`) would not read
        // back there even where it does alone.
        let called = call(name, args);
        let expected = call("add", vec![called.clone(), called]);
        super::parse_expr(&format!("{written} + {written}")).is_ok_and(|e| e == expected)
    });
    KNOWN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, reads_back);
    reads_back
}

fn write_quoted(f: &mut impl fmt::Write, name: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in name.chars() {
        if c == '"' {
            f.write_str("\"\"")?;
        } else {
            f.write_char(c)?;
        }
    }
    f.write_char('"')
}

fn is_keyword(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    sqlparser::keywords::ALL_KEYWORDS
        .binary_search(&upper.as_str())
        .is_ok()
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr], sep: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Column(name) => write_identifier(f, name),
            ExprKind::Field { expr, name } => match expr.kind {
                ExprKind::Column(_) | ExprKind::Field { .. } => {
                    write!(f, "{expr}.")?;
                    write_identifier(f, name)
                }
                _ => write!(
                    f,
                    "struct_extract({expr}, {})",
                    ScalarValue::Utf8(name.clone())
                ),
            },
            ExprKind::Literal(value) => write!(f, "{value}"),
            ExprKind::Call { name, args } => {
                if let (Some(op), [l, r]) = (binary_operator(name), args.as_slice()) {
                    write!(f, "({l} {op} {r})")
                } else if let ("like" | "ilike", [s, p, e]) = (name.as_str(), args.as_slice()) {
                    let op = if name == "like" { "LIKE" } else { "ILIKE" };
                    write!(f, "({s} {op} {p} ESCAPE {e})")
                } else if let ("bitwise_not", [x]) = (name.as_str(), args.as_slice()) {
                    write!(f, "(~({x}))")
                } else if let (Some(op), [x]) = (postfix_operator(name), args.as_slice()) {
                    write!(f, "({x} {op})")
                } else if let ("negate", [x]) = (name.as_str(), args.as_slice()) {
                    write!(f, "(-({x}))")
                } else {
                    write_function_name(f, name, args.len())?;
                    f.write_str("(")?;
                    write_list(f, args, ", ")?;
                    f.write_str(")")
                }
            }
            ExprKind::And(children) => {
                f.write_str("(")?;
                write_list(f, children, " AND ")?;
                f.write_str(")")
            }
            ExprKind::Or(children) => {
                f.write_str("(")?;
                write_list(f, children, " OR ")?;
                f.write_str(")")
            }
            ExprKind::Not(x) => write!(f, "(NOT {x})"),
            ExprKind::Case {
                operand,
                branches,
                else_expr,
            } => {
                f.write_str("CASE")?;
                if let Some(op) = operand {
                    write!(f, " {op}")?;
                }
                for (when, then) in branches {
                    write!(f, " WHEN {when} THEN {then}")?;
                }
                if let Some(e) = else_expr {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            ExprKind::InList {
                expr,
                list,
                negated,
            } => {
                write!(f, "({expr} {}IN (", if *negated { "NOT " } else { "" })?;
                write_list(f, list, ", ")?;
                f.write_str("))")
            }
            ExprKind::IsNull { expr, negated } => {
                write!(f, "({expr} IS {}NULL)", if *negated { "NOT " } else { "" })
            }
            ExprKind::Cast { expr, to } => write!(f, "CAST({expr} AS {})", sql_type_name(to)),
            ExprKind::TryCast { expr, to } => {
                write!(f, "TRY_CAST({expr} AS {})", sql_type_name(to))
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
                symmetric,
            } => write!(
                f,
                "({expr} {}BETWEEN {}{low} AND {high})",
                if *negated { "NOT " } else { "" },
                if *symmetric { "SYMMETRIC " } else { "" }
            ),
        }
    }
}
