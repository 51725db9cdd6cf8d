//! Special forms with their own syntax: `CAST`/`TRY_CAST`, `CASE`, `EXTRACT`, and the
//! keyword forms of plain calls (`SUBSTRING … FROM … FOR`, `TRIM(LEADING …)`,
//! `POSITION(… IN …)`, `CEIL`/`FLOOR`).

use sqlparser::ast::{self, CastKind, CeilFloorKind, DateTimeField, TrimWhereField};

use super::errors::{error, node_span, shallow_span, span, unsupported};
use super::literals::literal;
use super::{convert, special_call, Cx};
use crate::error::ParseError;
use crate::expr::{self, Expr, ExprKind, Span};
use crate::types::from_sql_type;

/// `CAST(x AS t)`, `x::t` and `TRY_CAST(x AS t)`.
pub(super) fn cast(
    e: &ast::Expr,
    kind: &CastKind,
    x: &ast::Expr,
    data_type: &ast::DataType,
    has_format: bool,
    d: Cx,
) -> Result<Expr, ParseError> {
    if *kind == CastKind::SafeCast {
        return Err(error(
            "SAFE_CAST is not supported (TRY_CAST is)",
            shallow_span(e, d),
        ));
    }
    if has_format {
        return Err(unsupported(e, d));
    }
    let x = convert(x, d)?;
    let at = node_span(e, d, &[&x]);
    let to = from_sql_type(data_type).map_err(|m| error(m, at))?;
    Ok(match kind {
        CastKind::TryCast => x.try_cast(to),
        _ => x.cast(to),
    }
    .with_span(at))
}

/// `CASE [operand] WHEN … THEN … [ELSE …] END`.
pub(super) fn case_expr(
    e: &ast::Expr,
    operand: Option<&ast::Expr>,
    conditions: &[ast::CaseWhen],
    else_result: Option<&ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    let boxed = |x: &ast::Expr| convert(x, d).map(Box::new);
    let operand = operand.map(boxed).transpose()?;
    let branches = conditions
        .iter()
        .map(|w| Ok((convert(&w.condition, d)?, convert(&w.result, d)?)))
        .collect::<Result<Vec<_>, ParseError>>()?;
    let else_expr = else_result.map(boxed).transpose()?;
    let at = node_span(e, d, &[]);
    Ok(Expr::new(ExprKind::Case {
        operand,
        branches,
        else_expr,
    })
    .with_span(at))
}

/// The fields `EXTRACT` knows, as `date_part` spells them.
const EXTRACT_FIELDS: &[&str] = &[
    "year",
    "quarter",
    "month",
    "week",
    "day",
    "dow",
    "isodow",
    "doy",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "epoch",
    "isoyear",
    "decade",
    "century",
    "millennium",
];

/// The `date_part` name of an `EXTRACT` field written as `word` (any case), with
/// PostgreSQL's and DuckDB's synonyms (`years`, `dayofweek`, `msec`, …).
fn extract_field(word: &str) -> Option<&'static str> {
    Some(match word.to_ascii_lowercase().as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => "year",
        "quarter" | "quarters" => "quarter",
        "month" | "months" | "mon" | "mons" => "month",
        "week" | "weeks" | "w" => "week",
        "day" | "days" | "d" | "dayofmonth" => "day",
        "dow" | "dayofweek" | "weekday" => "dow",
        "isodow" => "isodow",
        "doy" | "dayofyear" => "doy",
        "hour" | "hours" | "h" | "hr" | "hrs" => "hour",
        "minute" | "minutes" | "m" | "min" | "mins" => "minute",
        "second" | "seconds" | "s" | "sec" | "secs" => "second",
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => "millisecond",
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => "microsecond",
        "epoch" => "epoch",
        "isoyear" => "isoyear",
        "decade" | "decades" => "decade",
        "century" | "centuries" => "century",
        "millennium" | "millennia" | "millenniums" => "millennium",
        _ => return None,
    })
}

/// `EXTRACT(field FROM x)`: `date_part('field', x)` with the field normalized.
pub(super) fn extract(
    e: &ast::Expr,
    field: &DateTimeField,
    x: &ast::Expr,
    d: Cx,
) -> Result<Expr, ParseError> {
    let (word, at) = match field {
        DateTimeField::Custom(ident) => (ident.value.clone(), span(ident.span)),
        other => (other.to_string(), Span::NONE),
    };
    let Some(name) = extract_field(&word) else {
        let at = if at.is_known() {
            at
        } else {
            shallow_span(e, d)
        };
        return Err(error(
            format!(
                "unknown EXTRACT field {word}; expected one of {}",
                EXTRACT_FIELDS.join(", ")
            ),
            at,
        ));
    };
    let x = convert(x, d)?;
    let at = node_span(e, d, &[&x]);
    Ok(Expr::call("date_part", vec![expr::lit(name), x]).with_span(at))
}

/// `CEIL(x)`/`FLOOR(x)`, with sqlparser's scale (`CEIL(x, 2)`) as a second argument.
pub(super) fn ceil_floor(
    e: &ast::Expr,
    name: &str,
    x: &ast::Expr,
    field: &CeilFloorKind,
    d: Cx,
) -> Result<Expr, ParseError> {
    let scale = match field {
        CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => None,
        CeilFloorKind::Scale(v) => Some(literal(v, false)?),
        CeilFloorKind::DateTimeField(_) => return Err(unsupported(e, d)),
    };
    let args = [Some(x)].into_iter().flatten();
    let mut call = special_call(e, name, args, d)?;
    if let (ExprKind::Call { args, .. }, Some(scale)) = (&mut call.kind, scale) {
        args.push(scale);
    }
    Ok(call)
}

/// `SUBSTRING(s FROM i FOR n)`: `substr(s, i, n)`.
pub(super) fn substring(
    e: &ast::Expr,
    x: &ast::Expr,
    from: Option<&ast::Expr>,
    length: Option<&ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    if from.is_none() && length.is_some() {
        return Err(unsupported(e, d));
    }
    let args = [Some(x), from, length];
    special_call(e, "substr", args.into_iter().flatten(), d)
}

/// `TRIM([BOTH | LEADING | TRAILING] [c FROM] s)`: `btrim`, `ltrim` or `rtrim` of
/// `s` (and `c`).
pub(super) fn trim(
    e: &ast::Expr,
    x: &ast::Expr,
    trim_where: Option<&TrimWhereField>,
    what: Option<&ast::Expr>,
    characters: Option<&[ast::Expr]>,
    d: Cx,
) -> Result<Expr, ParseError> {
    let name = match trim_where {
        None | Some(TrimWhereField::Both) => "btrim",
        Some(TrimWhereField::Leading) => "ltrim",
        Some(TrimWhereField::Trailing) => "rtrim",
    };
    let args = std::iter::once(x)
        .chain(what)
        .chain(characters.into_iter().flatten());
    special_call(e, name, args, d)
}

/// `POSITION(x IN s)`: `strpos(s, x)`.
pub(super) fn position(
    e: &ast::Expr,
    x: &ast::Expr,
    within: &ast::Expr,
    d: Cx,
) -> Result<Expr, ParseError> {
    special_call(e, "strpos", [within, x].into_iter(), d)
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, TimeUnit};

    use super::super::test_util::{err, message, p};
    use crate::expr::{call, case, col, lit, Expr, ExprKind};
    use crate::scalar::ScalarValue;
    use crate::types::SQL_TIME_ZONE;

    #[test]
    fn casts() {
        assert_eq!(p("CAST(x AS INTEGER)"), col("x").cast(DataType::Int32));
        assert_eq!(p("x::INTEGER"), col("x").cast(DataType::Int32));
        assert_eq!(
            p("x::BIGINT + 1"),
            col("x").cast(DataType::Int64).add(lit(1i64))
        );
        assert_eq!(p("-5::INTEGER"), lit(5i64).cast(DataType::Int32).neg());
        assert_eq!(
            p("CAST(x AS TIMESTAMP(3) WITH TIME ZONE)"),
            col("x").cast(DataType::Timestamp(
                TimeUnit::Millisecond,
                Some(SQL_TIME_ZONE.into())
            ))
        );
        assert_eq!(
            p("CAST(NULL AS INTEGER)"),
            lit(ScalarValue::Null(DataType::Int32))
        );
        assert_eq!(p("NULL::DATE"), lit(ScalarValue::Null(DataType::Date32)));
        assert_eq!(
            p("CAST((NULL) AS DATE)"),
            lit(ScalarValue::Null(DataType::Date32))
        );
        let typed_null = lit(ScalarValue::Null(DataType::Int32));
        assert_eq!(
            p("CAST(CAST(NULL AS INTEGER) AS BIGINT)"),
            Expr::new(ExprKind::Cast {
                expr: Box::new(typed_null),
                to: DataType::Int64
            })
        );
        assert_eq!(
            err("CAST(x AS TIME WITH TIME ZONE)"),
            (
                "TIME WITH TIME ZONE is not supported (PostgreSQL advises against it); use TIME or TIMESTAMP WITH TIME ZONE".into(),
                (6, 7)
            )
        );
    }

    #[test]
    fn case_expressions() {
        assert_eq!(
            p("CASE WHEN x > 1 THEN 'a' WHEN x > 0 THEN 'b' ELSE 'c' END"),
            case(
                vec![
                    (col("x").gt(lit(1i64)), lit("a")),
                    (col("x").gt(lit(0i64)), lit("b"))
                ],
                Some(lit("c"))
            )
        );
        assert_eq!(
            p("CASE WHEN c THEN 1 END"),
            case(vec![(col("c"), lit(1i64))], None)
        );
        assert_eq!(
            p("CASE x WHEN 1 THEN 'one' END"),
            Expr::new(ExprKind::Case {
                operand: Some(Box::new(col("x"))),
                branches: vec![(lit(1i64), lit("one"))],
                else_expr: None,
            })
        );
    }

    #[test]
    fn substring_trim_position_and_ceil_are_plain_calls() {
        let s23 = call("substr", vec![col("s"), lit(2i64), lit(3i64)]);
        assert_eq!(p("SUBSTRING(s FROM 2 FOR 3)"), s23);
        assert_eq!(p("substring(s, 2, 3)"), s23);
        assert_eq!(p("substr(s, 2, 3)"), s23);
        assert_eq!(
            p("substring(s FROM 2)"),
            call("substr", vec![col("s"), lit(2i64)])
        );
        assert_eq!(
            p("substring(s, 2)"),
            call("substr", vec![col("s"), lit(2i64)])
        );
        assert_eq!(p("trim(s)"), call("btrim", vec![col("s")]));
        let x = lit("x");
        assert_eq!(p("trim(s, 'x')"), call("btrim", vec![col("s"), x.clone()]));
        assert_eq!(
            p("TRIM(BOTH 'x' FROM s)"),
            call("btrim", vec![col("s"), x.clone()])
        );
        assert_eq!(
            p("TRIM(LEADING 'x' FROM s)"),
            call("ltrim", vec![col("s"), x.clone()])
        );
        assert_eq!(
            p("trim(trailing 'x' from s)"),
            call("rtrim", vec![col("s"), x])
        );
        // sqlparser does not read `TRIM(BOTH FROM s)` (PostgreSQL does).
        assert!(message("TRIM(BOTH FROM s)").starts_with("Expected: ), found: s"));
        assert_eq!(
            p("POSITION('b' IN s)"),
            call("strpos", vec![col("s"), lit("b")])
        );
        assert_eq!(p("CEIL(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("CEILING(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("ceiling(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("FLOOR(x)"), call("floor", vec![col("x")]));
    }

    #[test]
    fn extract_is_date_part_with_a_normalized_field() {
        let part = |f: &str| call("date_part", vec![lit(f), col("d")]);
        for (field, name) in [
            ("YEAR", "year"),
            ("years", "year"),
            ("Quarter", "quarter"),
            ("MONTH", "month"),
            ("mons", "month"),
            ("week", "week"),
            ("DAY", "day"),
            ("DOW", "dow"),
            ("dayofweek", "dow"),
            ("isodow", "isodow"),
            ("DOY", "doy"),
            ("DAYOFYEAR", "doy"),
            ("hour", "hour"),
            ("minutes", "minute"),
            ("SECOND", "second"),
            ("milliseconds", "millisecond"),
            ("MICROSECONDS", "microsecond"),
            ("epoch", "epoch"),
            ("'year'", "year"),
        ] {
            let text = format!("EXTRACT({field} FROM d)");
            assert_eq!(p(&text), part(name), "{text}");
            assert_eq!(p(&part(name).to_string()), part(name));
        }
        assert_eq!(
            err("EXTRACT(fortnight FROM d)"),
            (
                "unknown EXTRACT field fortnight; expected one of year, quarter, month, week, \
                 day, dow, isodow, doy, hour, minute, second, millisecond, microsecond, epoch, \
                 isoyear, decade, century, millennium"
                    .into(),
                (9, 18)
            )
        );
        // A field sqlparser knows but Broadhead does not is pointed at too.
        assert_eq!(err("1 + EXTRACT(JULIAN FROM d)").1, (13, 19));
        assert!(message("EXTRACT(JULIAN FROM d)").starts_with("unknown EXTRACT field JULIAN;"));
        assert_eq!(p("EXTRACT(CENTURY FROM d)"), part("century"));
    }

    #[test]
    fn text_casts_and_try_cast() {
        for t in [
            "VARCHAR",
            "VARCHAR(3)",
            "TEXT",
            "STRING",
            "CHAR(3)",
            "CHARACTER(2)",
        ] {
            let text = format!("CAST(x AS {t})");
            assert_eq!(p(&text), col("x").cast(DataType::Utf8), "{text}");
        }
        assert_eq!(p("x::text"), col("x").cast(DataType::Utf8));
        let tried = col("x").try_cast(DataType::Int32);
        assert_eq!(p("TRY_CAST(x AS INTEGER)"), tried);
        assert_eq!(tried.to_string(), "TRY_CAST(x AS INTEGER)");
        assert_eq!(p(&tried.to_string()), tried);
        assert_eq!(
            p("TRY_CAST(NULL AS DATE)"),
            lit(ScalarValue::Null(DataType::Date32))
        );
        assert_eq!(
            message("SAFE_CAST(x AS INTEGER)"),
            "SAFE_CAST is not supported (TRY_CAST is)"
        );
    }
}
