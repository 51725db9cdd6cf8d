//! Property tests of the SQL parser: `Display` of a canonical tree parses back to
//! the same tree, and no input makes the parser panic.

use std::sync::Arc;

use arrow::datatypes::IntervalMonthDayNano;
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use broadhead::expr::{self, call, col, lit, Expr, ExprKind};
use broadhead::sql::{parse_expr, parse_select_list};
use broadhead::types::SQL_TIME_ZONE;
use broadhead::ScalarValue;
use proptest::prelude::*;

fn column_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        "[A-Za-z][A-Za-z0-9_]{0,8}",
        "[ -~]{1,8}",
        "\\PC{1,6}",
        prop::sample::select(vec![
            "select",
            "from",
            "date",
            "case",
            "null",
            "true",
            "when",
            "end",
            "and",
            "not",
            "left",
            "abs",
            "interval",
            "My Col",
            "a\"b",
            "1abc",
            "é",
            "x y",
            "it's",
            "__",
            "timestamp",
        ])
        .prop_map(str::to_string),
    ]
}

fn time_unit() -> impl Strategy<Value = TimeUnit> {
    prop::sample::select(vec![
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ])
}

fn time_zone() -> impl Strategy<Value = Option<Arc<str>>> {
    prop_oneof![Just(None), Just(Some(Arc::from(SQL_TIME_ZONE)))]
}

/// Types a cast or a typed NULL can have.
fn sql_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        prop::sample::select(vec![
            DataType::Boolean,
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float32,
            DataType::Float64,
            DataType::Utf8,
            DataType::Date32,
            DataType::Interval(IntervalUnit::MonthDayNano),
        ]),
        (time_unit(), time_zone()).prop_map(|(unit, tz)| DataType::Timestamp(unit, tz)),
    ]
}

/// Seconds since the epoch of 1000-01-01 and of 9999-12-31 23:59:59.
const MIN_SECONDS: i64 = -30_610_224_000;
const MAX_SECONDS: i64 = 253_402_300_799;

fn timestamp() -> impl Strategy<Value = ScalarValue> {
    (time_unit(), time_zone(), any::<i64>()).prop_map(|(unit, tz, raw)| {
        let per_second: i64 = match unit {
            TimeUnit::Second => 1,
            TimeUnit::Millisecond => 1_000,
            TimeUnit::Microsecond => 1_000_000,
            TimeUnit::Nanosecond => 1_000_000_000,
        };
        // Years 1000–9999 (nanoseconds cover only 1677–2262: all of i64).
        let (min, max) = match unit {
            TimeUnit::Nanosecond => (i64::MIN, i64::MAX),
            _ => (MIN_SECONDS * per_second, (MAX_SECONDS + 1) * per_second - 1),
        };
        let span = (max as i128) - (min as i128) + 1;
        let v = (min as i128 + (raw as i128).rem_euclid(span)) as i64;
        ScalarValue::Timestamp(v, unit, tz)
    })
}

fn scalar() -> impl Strategy<Value = ScalarValue> {
    use ScalarValue as S;
    prop_oneof![
        any::<i64>().prop_map(S::Int64),
        prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0]).prop_map(S::Int64),
        any::<bool>().prop_map(S::Boolean),
        any::<i8>().prop_map(S::Int8),
        any::<i16>().prop_map(S::Int16),
        any::<i32>().prop_map(S::Int32),
        any::<u8>().prop_map(S::UInt8),
        any::<u16>().prop_map(S::UInt16),
        any::<u32>().prop_map(S::UInt32),
        any::<u64>().prop_map(S::UInt64),
        prop::num::f32::ANY.prop_map(S::Float32),
        prop::num::f64::ANY.prop_map(S::Float64),
        prop::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            1e300
        ])
        .prop_map(S::Float64),
        prop::sample::select(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0])
            .prop_map(S::Float32),
        "\\PC{0,10}".prop_map(S::Utf8),
        "[a-z' \\\\%_]{0,8}".prop_map(S::Utf8),
        // 1000-01-01 ..= 9999-12-31
        (-354_285i32..=2_932_896).prop_map(S::Date32),
        timestamp(),
        (any::<i32>(), any::<i32>(), any::<i64>())
            .prop_map(|(m, d, n)| S::IntervalMonthDayNano(IntervalMonthDayNano::new(m, d, n))),
        prop::sample::select(vec![
            IntervalMonthDayNano::new(i32::MIN, i32::MIN, i64::MIN),
            IntervalMonthDayNano::new(i32::MAX, i32::MAX, i64::MAX),
            IntervalMonthDayNano::new(0, 0, 0),
            IntervalMonthDayNano::new(-1, 1, -1),
        ])
        .prop_map(S::IntervalMonthDayNano),
        sql_type().prop_map(S::Null),
        Just(S::Null(DataType::Null)),
    ]
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![column_name().prop_map(col), scalar().prop_map(lit)]
}

const BINARY: &[&str] = &[
    "add",
    "subtract",
    "multiply",
    "divide",
    "modulo",
    "equal",
    "not_equal",
    "less_than",
    "less_than_or_equal_to",
    "greater_than",
    "greater_than_or_equal_to",
    "like",
    "ilike",
    "is_distinct_from",
    "is_not_distinct_from",
    "concat_op",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right",
    "power",
    "regexp_like",
    "similar_to",
    "strpos",
    "date_part",
];

const UNARY: &[&str] = &[
    "negate",
    "is_true",
    "is_not_true",
    "is_false",
    "is_not_false",
    "bitwise_not",
];

const FUNCTIONS: &[&str] = &[
    "abs",
    "coalesce",
    "length",
    "upper",
    "left",
    "mod",
    "ceil",
    "floor",
    "substring",
    "substr",
    "trim",
    "btrim",
    "ltrim",
    "rtrim",
    "position",
    "extract",
    "ceiling",
    "current_date",
    "case",
    "if",
    "my func",
    "add",
    "negate",
    "is_true",
];

fn tree() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 64, 4, |inner| {
        let list = |min: usize, max: usize| prop::collection::vec(inner.clone(), min..=max);
        prop_oneof![
            (prop::sample::select(BINARY), inner.clone(), inner.clone())
                .prop_map(|(name, a, b)| call(name, vec![a, b])),
            (prop::sample::select(UNARY), inner.clone()).prop_map(|(name, a)| call(name, vec![a])),
            (prop::sample::select(FUNCTIONS), list(1, 3)).prop_map(|(name, args)| call(name, args)),
            // Functions without arguments, some of them SQL keywords.
            prop::sample::select(vec!["current_date", "current_timestamp", "now", "trim"])
                .prop_map(|name| call(name, vec![])),
            // `s [I]LIKE p ESCAPE e`, `regexp_like(s, p, flags)`, `similar_to(s, p, e)`.
            (
                prop::sample::select(vec!["like", "ilike", "regexp_like", "similar_to"]),
                list(3, 3)
            )
                .prop_map(|(name, args)| call(name, args)),
            list(2, 4).prop_map(expr::and),
            list(2, 4).prop_map(expr::or),
            inner.clone().prop_map(Expr::not),
            (
                prop::option::of(inner.clone()),
                prop::collection::vec((inner.clone(), inner.clone()), 1..=3),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(operand, branches, else_expr)| {
                    Expr::new(ExprKind::Case {
                        operand: operand.map(Box::new),
                        branches,
                        else_expr: else_expr.map(Box::new),
                    })
                }),
            (inner.clone(), list(1, 4), any::<bool>()).prop_map(|(x, list, negated)| {
                if negated {
                    x.not_in_list(list)
                } else {
                    x.in_list(list)
                }
            }),
            (inner.clone(), any::<bool>()).prop_map(|(x, negated)| {
                if negated {
                    x.is_not_null()
                } else {
                    x.is_null()
                }
            }),
            // `Expr::cast` turns a cast of an untyped NULL into a typed NULL literal.
            (inner.clone(), sql_type()).prop_map(|(x, to)| x.cast(to)),
            (inner.clone(), sql_type()).prop_map(|(x, to)| x.try_cast(to)),
            // A `BETWEEN` node when `x` is computed, two comparisons otherwise.
            (inner.clone(), inner.clone(), inner.clone(), any::<bool>()).prop_map(
                |(x, low, high, negated)| {
                    if negated {
                        x.not_between(low, high)
                    } else {
                        x.between(low, high)
                    }
                }
            ),
        ]
    })
}

/// Whether a tree is canonical: flat AND/OR with 2+ children, no cast of an untyped
/// NULL, `BETWEEN` nodes only on computed values.
fn is_canonical(e: &Expr) -> bool {
    let all = |children: &[Expr]| children.iter().all(is_canonical);
    match &e.kind {
        ExprKind::Column(_) | ExprKind::Literal(_) => true,
        ExprKind::Call { args, .. } => all(args),
        ExprKind::And(children) => {
            children.len() >= 2
                && children.iter().all(|c| !matches!(c.kind, ExprKind::And(_)))
                && all(children)
        }
        ExprKind::Or(children) => {
            children.len() >= 2
                && children.iter().all(|c| !matches!(c.kind, ExprKind::Or(_)))
                && all(children)
        }
        ExprKind::Not(x) | ExprKind::Field { expr: x, .. } => is_canonical(x),
        ExprKind::Case {
            operand,
            branches,
            else_expr,
        } => {
            !branches.is_empty()
                && operand.as_deref().is_none_or(is_canonical)
                && branches
                    .iter()
                    .all(|(w, t)| is_canonical(w) && is_canonical(t))
                && else_expr.as_deref().is_none_or(is_canonical)
        }
        ExprKind::InList { expr, list, .. } => !list.is_empty() && is_canonical(expr) && all(list),
        ExprKind::IsNull { expr, .. } => is_canonical(expr),
        ExprKind::Between {
            expr,
            low,
            high,
            symmetric,
            ..
        } => {
            (*symmetric || !matches!(expr.kind, ExprKind::Column(_) | ExprKind::Literal(_)))
                && is_canonical(expr)
                && is_canonical(low)
                && is_canonical(high)
        }
        ExprKind::Cast { expr, .. } | ExprKind::TryCast { expr, .. } => {
            !matches!(
                expr.kind,
                ExprKind::Literal(ScalarValue::Null(DataType::Null))
            ) && is_canonical(expr)
        }
    }
}

/// Pieces of SQL, valid and not, for strings that get further than the tokenizer.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "a",
    "\"b c\"",
    "t.a",
    "1",
    "0.5",
    "1e999",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "-",
    "+",
    "*",
    "/",
    "%",
    "=",
    "<>",
    "!=",
    "<",
    ">=",
    "'x'",
    "'",
    "\"",
    "NULL",
    "TRUE",
    "CAST",
    "TRY_CAST",
    "AS",
    "::",
    "INTEGER",
    "UINTEGER",
    "UINT32",
    "TIME",
    "DATE",
    "'1994-13-45'",
    "'1994-01-01'",
    "TIMESTAMP",
    "(9)",
    "(4)",
    "WITH TIME ZONE",
    "'2000-01-01 00:00:00.5'",
    "REAL",
    "'NaN'",
    "TINYINT",
    "'300'",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS",
    "DISTINCT",
    "FROM",
    "LIKE",
    "ILIKE",
    "ESCAPE",
    "SIMILAR TO",
    "BETWEEN",
    ",",
    "if",
    "abs",
    "count",
    "ceil",
    "substring",
    "trim",
    "BOTH",
    "FOR",
    "OVER",
    "FILTER",
    "WHERE",
    "ORDER BY",
    "?",
    "$1",
    "[",
    "]",
    ".",
    "e",
    "INTERVAL",
    "SELECT",
    "EXISTS",
    "UNNEST",
    "->",
    "||",
    "~",
    "~*",
    "!~",
    "!~*",
    "^",
    "#",
    "&",
    "|",
    "<<",
    ">>",
    "EXTRACT",
    "year",
    "dayofweek",
    "POSITION",
    "LEADING",
    "TRAILING",
    "'1 day'",
    "'-1.5 hours'",
    "DAY",
    "MONTH",
    "TO",
    "SAFE_CAST",
    ";",
    "--",
    "/*",
    "\n",
    "x''",
    "E'\\n'",
    "$$",
    "current_date",
];

fn sqlish() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(TOKENS), 0..16),
        prop::bool::ANY,
    )
        .prop_map(|(tokens, spaced)| tokens.join(if spaced { " " } else { "" }))
}

/// A successful parse is canonical and prints SQL that parses back to it.
fn check_reparse(text: &str) -> Result<(), TestCaseError> {
    if let Ok(e) = parse_expr(text) {
        prop_assert!(
            is_canonical(&e),
            "{text:?} parsed to a non-canonical tree {e:?}"
        );
        let printed = e.to_string();
        prop_assert_eq!(
            parse_expr(&printed),
            Ok(e),
            "{:?} printed as {}",
            text,
            printed
        );
    }
    if let Ok(items) = parse_select_list(text) {
        for (e, _) in items {
            let printed = e.to_string();
            prop_assert_eq!(
                parse_expr(&printed),
                Ok(e),
                "{:?} printed as {}",
                text,
                printed
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn display_parses_back_to_the_same_tree(e in tree()) {
        prop_assume!(is_canonical(&e));
        let text = e.to_string();
        prop_assert_eq!(parse_expr(&text), Ok(e), "{}", text);
    }

    #[test]
    fn literals_round_trip(v in scalar()) {
        let e = lit(v);
        let text = e.to_string();
        prop_assert_eq!(parse_expr(&text), Ok(e), "{}", text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        check_reparse(&text)?;
    }

    #[test]
    fn sql_like_text_never_panics(text in sqlish()) {
        check_reparse(&text)?;
    }
}
