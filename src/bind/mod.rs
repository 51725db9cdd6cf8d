//! The binder: resolves an [`Expr`] against an Arrow schema into a [`TypedExpr`].
//!
//! Columns become indices (exact name first, then a unique case-insensitive match),
//! calls are resolved in the [registry](crate::functions), implicit casts become
//! explicit, and literals adopt the type of what they meet when they fit it exactly
//! (`int32_col IN (1, 3)` compares 32-bit integers; `date_col >= '1994-01-01'` parses
//! the string as a date).

use std::cell::Cell;

use arrow_schema::{DataType, Schema};

use crate::decode::bound_type;
use crate::error::BindError;
use crate::expr::{Expr, ExprKind, Span};
use crate::functions::{self, Signature};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{cast_supported, common_type, is_supported, sql_type_name};

type Result<T> = std::result::Result<T, BindError>;

fn err<T>(span: Span, message: impl Into<String>) -> Result<T> {
    Err(BindError {
        message: message.into(),
        span,
    })
}

/// Binds `expr` against `schema`.
///
/// A tree beyond the size limits ([`Expr::check_size`]) is an error.
pub fn bind(expr: &Expr, schema: &Schema) -> Result<TypedExpr> {
    if let Err(message) = expr.check_size() {
        return err(expr.span, message);
    }
    Binder {
        schema,
        next_id: Cell::new(0),
        now: Cell::new(None),
    }
    .bind(expr)
}

/// Binds a filter predicate: the result must be BOOLEAN (an untyped NULL counts as one).
pub fn bind_predicate(expr: &Expr, schema: &Schema) -> Result<TypedExpr> {
    let mut typed = bind(expr, schema)?;
    // A quoted literal is of unknown type: `WHERE 'yes'` reads it as a BOOLEAN.
    if let Some(ScalarValue::Utf8(s)) = typed.as_literal() {
        typed = match ScalarValue::parse(s, &DataType::Boolean) {
            Ok(v) => TypedExpr::literal(v, typed.span),
            Err(e) => return err(typed.span, e.message(s, &DataType::Boolean)),
        };
    }
    match typed.data_type {
        DataType::Boolean => Ok(typed),
        DataType::Null => Ok(TypedExpr::literal(
            ScalarValue::Null(DataType::Boolean),
            typed.span,
        )),
        ref other => err(
            typed.span,
            format!(
                "a filter needs a BOOLEAN expression, but this is {}",
                sql_type_name(other)
            ),
        ),
    }
}

struct Binder<'a> {
    schema: &'a Schema,
    /// The id of the next [`TypedKind::Let`].
    next_id: Cell<usize>,
    /// The instant `now()` and `current_date` stand for (microseconds since 1970),
    /// read once per expression.
    now: Cell<Option<i64>>,
}

/// Up to three candidates closest to `name`, closest first.
pub(crate) fn suggestions<'n>(
    name: &str,
    candidates: impl Iterator<Item = &'n str>,
) -> Vec<&'n str> {
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| {
            (
                strsim::levenshtein(&name.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= limit || c.to_lowercase().contains(&name.to_lowercase()))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one-line message for a call no signature matches. Operators say what they
/// cannot do with which types, with a hint at what was probably meant; functions
/// list a few of their signatures.
fn mismatch_message(name: &str, args: &[TypedExpr], candidates: &[&'static Signature]) -> String {
    use functions::FuncId;
    let types: Vec<String> = args.iter().map(|a| sql_type_name(&a.data_type)).collect();
    let func = candidates.first().map(|s| s.func);
    match (func, types.as_slice()) {
        (Some(f), [a, b])
            if f.is_comparison()
                || matches!(f, FuncId::IsDistinctFrom | FuncId::IsNotDistinctFrom) =>
        {
            let message = format!("cannot compare {a} with {b}");
            match hint(args) {
                Some(h) => format!("{message} (hint: {h})"),
                None => message,
            }
        }
        (Some(FuncId::Add), [a, b]) => format!("cannot add {a} and {b}"),
        (Some(FuncId::Subtract), [a, b]) => format!("cannot subtract {b} from {a}"),
        (Some(FuncId::Multiply), [a, b]) => format!("cannot multiply {a} by {b}"),
        (Some(FuncId::Divide), [a, b]) => format!("cannot divide {a} by {b}"),
        (Some(FuncId::Modulo), [a, b]) => format!("cannot take {a} modulo {b}"),
        (Some(FuncId::Negate), [a]) => format!("cannot negate {a}"),
        (Some(FuncId::Like | FuncId::ILike), [a, b]) => {
            let op = crate::expr::binary_operator(name).unwrap_or(name);
            format!("{op} needs VARCHAR operands, not {a} and {b}")
        }
        (Some(_), [a]) if crate::expr::postfix_operator(name).is_some() => {
            let op = crate::expr::postfix_operator(name).unwrap_or(name);
            format!("{op} needs a BOOLEAN operand, not {a}")
        }
        _ => {
            let mut list: Vec<String> = candidates.iter().map(|s| s.display()).collect();
            list.dedup();
            const SHOWN: usize = 6;
            let more = list.len().saturating_sub(SHOWN);
            list.truncate(SHOWN);
            let tail = if more > 0 {
                format!(", … and {more} more")
            } else {
                String::new()
            };
            format!(
                "no function matches {name}({}); candidates: {}{tail}",
                types.join(", "),
                list.join(", ")
            )
        }
    }
}

/// What the user probably meant when comparing a date or timestamp with a number.
fn hint(args: &[TypedExpr]) -> Option<String> {
    let temporal = args
        .iter()
        .find(|a| crate::types::is_temporal(&a.data_type))?;
    let other = args
        .iter()
        .find(|a| crate::types::is_numeric(&a.data_type))?;
    let keyword = match temporal.data_type {
        DataType::Date32 => "DATE",
        _ => "TIMESTAMP",
    };
    Some(match unquoted_date(other) {
        Some(text) => format!("write {keyword} '{text}'"),
        None if keyword == "DATE" => "write a date as DATE 'YYYY-MM-DD'".into(),
        None => "write a timestamp as TIMESTAMP 'YYYY-MM-DD HH:MM:SS'".into(),
    })
}

/// `1994-01-01` written without quotes (so parsed as `1994 - 1 - 1`), as text.
fn unquoted_date(e: &TypedExpr) -> Option<String> {
    fn minus(e: &TypedExpr) -> Option<(&TypedExpr, &TypedExpr)> {
        match &e.kind {
            TypedKind::Call { sig, args } if sig.name == "subtract" => match args.as_slice() {
                [a, b] => Some((a, b)),
                _ => None,
            },
            _ => None,
        }
    }
    let int = |e: &TypedExpr| match e.as_literal() {
        Some(ScalarValue::Int64(v)) => Some(*v),
        _ => None,
    };
    let (ym, d) = minus(e)?;
    let (y, m) = minus(ym)?;
    let (y, m, d) = (int(y)?, int(m)?, int(d)?);
    let valid = (1..=9999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d);
    valid.then(|| format!("{y:04}-{m:02}-{d:02}"))
}

fn is_string_literal(x: &TypedExpr) -> bool {
    matches!(x.as_literal(), Some(ScalarValue::Utf8(_)))
}

fn is_boolean_like(t: &DataType) -> bool {
    matches!(t, DataType::Boolean | DataType::Null)
}

impl Binder<'_> {
    #[recursive::recursive]
    fn bind(&self, expr: &Expr) -> Result<TypedExpr> {
        let span = expr.span;
        match &expr.kind {
            ExprKind::Column(name) => self.column(name, span),
            ExprKind::Literal(value) => Ok(TypedExpr::literal(value.clone(), span)),
            ExprKind::Call { name, args } => {
                let args = args
                    .iter()
                    .map(|a| self.bind(a))
                    .collect::<Result<Vec<_>>>()?;
                self.call(name, args, span)
            }
            ExprKind::And(children) | ExprKind::Or(children) => {
                let is_and = matches!(expr.kind, ExprKind::And(_));
                let op = if is_and { "AND" } else { "OR" };
                let children = children
                    .iter()
                    .map(|c| self.boolean(c, op))
                    .collect::<Result<Vec<_>>>()?;
                let kind = if is_and {
                    TypedKind::And(children)
                } else {
                    TypedKind::Or(children)
                };
                Ok(TypedExpr::new(kind, DataType::Boolean, span))
            }
            ExprKind::Not(x) => {
                let x = self.boolean(x, "NOT")?;
                Ok(TypedExpr::new(
                    TypedKind::Not(Box::new(x)),
                    DataType::Boolean,
                    span,
                ))
            }
            ExprKind::IsNull { expr, negated } => {
                let x = self.bind(expr)?;
                Ok(TypedExpr::new(
                    TypedKind::IsNull {
                        expr: Box::new(x),
                        negated: *negated,
                    },
                    DataType::Boolean,
                    span,
                ))
            }
            ExprKind::Cast { expr, to } => {
                let x = self.bind(expr)?;
                self.cast(x, to, span)
            }
            ExprKind::TryCast { expr, to } => {
                let x = self.bind(expr)?;
                self.try_cast(x, to, span)
            }
            ExprKind::Case {
                operand,
                branches,
                else_expr,
            } => self.case(operand.as_deref(), branches, else_expr.as_deref(), span),
            ExprKind::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated, span),
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
                symmetric: false,
            } => self.between(expr, low, high, *negated, span),
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
                symmetric: true,
            } => self.between_symmetric(expr, low, high, *negated, span),
        }
    }

    /// `x [NOT] BETWEEN SYMMETRIC low AND high` is PostgreSQL's
    /// `[NOT] ((x BETWEEN low AND high) OR (x BETWEEN high AND low))`, with `x`, `low`
    /// and `high` each computed once (so nesting it stays linear in size).
    fn between_symmetric(
        &self,
        x: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
        span: Span,
    ) -> Result<TypedExpr> {
        let x = self.bind(x)?;
        let (low, high) = (self.bind(low)?, self.bind(high)?);
        self.share(x, |x| {
            self.share(low, |low| {
                self.share(high, |high| {
                    let either = TypedExpr::new(
                        TypedKind::Or(vec![
                            self.within(x, low.clone(), high.clone(), false, span)?,
                            self.within(x, high.clone(), low.clone(), false, span)?,
                        ]),
                        DataType::Boolean,
                        span,
                    );
                    Ok(if negated {
                        TypedExpr::new(TypedKind::Not(Box::new(either)), DataType::Boolean, span)
                    } else {
                        either
                    })
                })
            })
        })
    }

    /// `x [NOT] BETWEEN low AND high` is `x >= low AND x <= high` (`x < low OR x > high`),
    /// with `x` computed once.
    fn between(
        &self,
        x: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
        span: Span,
    ) -> Result<TypedExpr> {
        let x = self.bind(x)?;
        let (low, high) = (self.bind(low)?, self.bind(high)?);
        self.share(x, |x| self.within(x, low, high, negated, span))
    }

    /// `x >= low AND x <= high` (negated: `x < low OR x > high`) of a bound, shared `x`.
    fn within(
        &self,
        x: &TypedExpr,
        low: TypedExpr,
        high: TypedExpr,
        negated: bool,
        span: Span,
    ) -> Result<TypedExpr> {
        let (below, above) = if negated {
            ("less_than", "greater_than")
        } else {
            ("greater_than_or_equal_to", "less_than_or_equal_to")
        };
        let children = vec![
            self.call(below, vec![x.clone(), low], span)?,
            self.call(above, vec![x.clone(), high], span)?,
        ];
        let kind = if negated {
            TypedKind::Or(children)
        } else {
            TypedKind::And(children)
        };
        Ok(TypedExpr::new(kind, DataType::Boolean, span))
    }

    /// `body(x)`, where `body` may use `x` several times. A column or literal (or a
    /// cast of a column) is copied; anything else is computed once in a
    /// [`TypedKind::Let`] and `body` gets a [`TypedKind::Ref`] to it, so desugaring
    /// nested operands stays linear in size.
    fn share(
        &self,
        x: TypedExpr,
        body: impl FnOnce(&TypedExpr) -> Result<TypedExpr>,
    ) -> Result<TypedExpr> {
        let leaf = |k: &TypedKind| {
            matches!(
                k,
                TypedKind::Column(_) | TypedKind::Literal(_) | TypedKind::Ref(_)
            )
        };
        let cheap = match &x.kind {
            TypedKind::Cast(inner) => leaf(&inner.kind),
            k => leaf(k),
        };
        if cheap {
            return body(&x);
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let reference = TypedExpr::new(TypedKind::Ref(id), x.data_type.clone(), x.span);
        let body = body(&reference)?;
        let (data_type, span) = (body.data_type.clone(), body.span);
        Ok(TypedExpr::new(
            TypedKind::Let {
                id,
                value: Box::new(x),
                body: Box::new(body),
            },
            data_type,
            span,
        ))
    }

    fn column(&self, name: &str, span: Span) -> Result<TypedExpr> {
        let fields = self.schema.fields();
        // Columns are kept by position: a name two columns share is ambiguous.
        let exact: Vec<usize> = (0..fields.len())
            .filter(|&i| fields[i].name() == name)
            .collect();
        let index = match exact.as_slice() {
            [i] => *i,
            [_, _, ..] => {
                let positions: Vec<String> = exact.iter().map(|i| (i + 1).to_string()).collect();
                let (last, rest) = positions.split_last().expect("two or more");
                return err(
                    span,
                    format!(
                        "column reference \"{name}\" is ambiguous: it names columns {} and {last}",
                        rest.join(", ")
                    ),
                );
            }
            [] => {
                let folded: Vec<usize> = (0..fields.len())
                    .filter(|&i| fields[i].name().eq_ignore_ascii_case(name))
                    .collect();
                match folded.as_slice() {
                    [i] => *i,
                    [] => {
                        let names = fields.iter().map(|f| f.name().as_str());
                        let close = suggestions(name, names);
                        let hint = if !close.is_empty() {
                            format!(" (did you mean {}?)", quote_list(&close))
                        } else if fields.len() <= 12 {
                            let all: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
                            format!(" (columns: {})", quote_list(&all))
                        } else {
                            String::new()
                        };
                        return err(span, format!("unknown column '{name}'{hint}"));
                    }
                    several => {
                        let names: Vec<&str> =
                            several.iter().map(|&i| fields[i].name().as_str()).collect();
                        return err(
                            span,
                            format!(
                                "column name '{name}' is ambiguous: it matches {} when case is ignored; quote the exact name",
                                quote_list(&names)
                            ),
                        );
                    }
                }
            }
        };
        let field = &fields[index];
        if let Some(to) = crate::types::read_as(field.data_type()) {
            // DATE64 is read as DATE (its days, rounded toward the past: Arrow's DATE64
            // holds whole days), intervals and durations as INTERVAL.
            let column = TypedExpr::new(TypedKind::Column(index), field.data_type().clone(), span);
            return Ok(TypedExpr::new(TypedKind::Cast(Box::new(column)), to, span));
        }
        // VARCHAR and BLOB are one type each whatever their layout: the back ends
        // read `LargeUtf8`, `Utf8View`, `LargeBinary` and `BinaryView` columns in
        // place (crate::layout); dictionaries and `FixedSizeBinary` are decoded
        // (crate::decode).
        let ty = bound_type(field.data_type());
        if !is_supported(&ty) {
            return err(
                span,
                format!(
                    "column '{}' has type {}, which Broadhead does not support",
                    field.name(),
                    field.data_type()
                ),
            );
        }
        Ok(TypedExpr::new(TypedKind::Column(index), ty, span))
    }

    fn boolean(&self, expr: &Expr, op: &str) -> Result<TypedExpr> {
        let x = self.bind(expr)?;
        // A quoted literal is of unknown type: `x AND 'true'` reads it as a BOOLEAN.
        if !is_boolean_like(&x.data_type) && !is_string_literal(&x) {
            return err(
                x.span,
                format!(
                    "{op} needs BOOLEAN operands, but this is {}",
                    sql_type_name(&x.data_type)
                ),
            );
        }
        self.coerce(x, &DataType::Boolean)
    }

    /// The type `args` meet in, letting literals adopt a type they fit exactly.
    ///
    /// Quoted string literals are of unknown type (as in PostgreSQL): they take the
    /// type the other values meet in when they parse as it (`qty < '5'`), and are
    /// VARCHAR only among strings and NULLs.
    fn unify(&self, args: &[&TypedExpr]) -> Option<DataType> {
        let mut target = self.unify_typed(args)?;
        for a in args {
            if let Some(v @ ScalarValue::Utf8(_)) = a.as_literal() {
                target = Some(match target {
                    None | Some(DataType::Null) => DataType::Utf8,
                    Some(t) if v.convert_exact(&t).is_some() => t,
                    Some(_) => return None,
                });
            }
        }
        target
    }

    /// The type `args` other than string literals meet in: `Some(None)` when there
    /// are none, `None` when they have no common type.
    fn unify_typed(&self, args: &[&TypedExpr]) -> Option<Option<DataType>> {
        let mut target: Option<DataType> = None;
        for a in args.iter().filter(|a| a.as_literal().is_none()) {
            target = Some(match target {
                None => a.data_type.clone(),
                Some(t) => common_type(&t, &a.data_type)?,
            });
        }
        // Whether the type so far is that of integer literals only, and the narrowest
        // integer type holding them: they meet a decimal as DuckDB's integer literals,
        // `INTEGER` when they fit one (`CASE … THEN 1 ELSE 2.5 END` is DECIMAL(11,1)).
        let mut literal_ints: Option<DataType> = None;
        for a in args {
            match a.as_literal() {
                None | Some(ScalarValue::Utf8(_)) => {}
                Some(v) => {
                    let literal_int = v.as_i128().map(|i| {
                        if i32::try_from(i).is_ok() {
                            DataType::Int32
                        } else {
                            v.data_type()
                        }
                    });
                    let first = target.is_none();
                    target = Some(match target {
                        None => v.data_type(),
                        Some(_)
                            if crate::types::is_decimal(&v.data_type())
                                && literal_ints.is_some() =>
                        {
                            common_type(literal_ints.as_ref()?, &v.data_type())?
                        }
                        Some(t) if v.convert_exact(&t).is_some() => t,
                        Some(t) => common_type(&t, &v.data_type())?,
                    });
                    literal_ints = match (first, literal_int, literal_ints) {
                        (true, Some(i), _) => Some(i),
                        (false, Some(i), Some(prev)) => common_type(&prev, &i),
                        _ => None,
                    };
                    if target
                        .as_ref()
                        .is_some_and(|t| !crate::types::is_integer(t))
                    {
                        literal_ints = None;
                    }
                }
            }
        }
        Some(target)
    }

    /// The error for a string literal among `args` that does not parse as the type
    /// the other arguments meet in (`qty < 'abc'`: invalid DOUBLE literal 'abc'),
    /// when `meets(type)` says the values could meet in that type.
    fn bad_string_literal(
        &self,
        args: &[&TypedExpr],
        meets: impl Fn(&DataType) -> bool,
    ) -> Result<()> {
        let Some(Some(target)) = self.unify_typed(args) else {
            return Ok(());
        };
        if matches!(target, DataType::Utf8 | DataType::Null) || !meets(&target) {
            return Ok(());
        }
        for a in args {
            if let Some(ScalarValue::Utf8(s)) = a.as_literal() {
                if let Err(e) = ScalarValue::parse(s, &target) {
                    return err(a.span, e.message(s, &target));
                }
            }
        }
        Ok(())
    }

    /// `x` as type `to`: literals are converted (exactly, or through a checked cast),
    /// other nodes get an implicit cast.
    fn coerce(&self, x: TypedExpr, to: &DataType) -> Result<TypedExpr> {
        if functions::same_type(&x.data_type, to) {
            return Ok(x);
        }
        // A CASE or COALESCE of NULLs only takes the type it is used as.
        if x.data_type == DataType::Null && x.as_literal().is_none() {
            match x.kind {
                TypedKind::Case {
                    branches,
                    else_expr,
                } => {
                    let branches = branches
                        .into_iter()
                        .map(|(c, v)| Ok((c, self.coerce(v, to)?)))
                        .collect::<Result<Vec<_>>>()?;
                    let else_expr = Box::new(self.coerce(*else_expr, to)?);
                    return Ok(TypedExpr::new(
                        TypedKind::Case {
                            branches,
                            else_expr,
                        },
                        to.clone(),
                        x.span,
                    ));
                }
                TypedKind::Coalesce(args) => {
                    let args = args
                        .into_iter()
                        .map(|a| self.coerce(a, to))
                        .collect::<Result<Vec<_>>>()?;
                    return Ok(TypedExpr::new(
                        TypedKind::Coalesce(args),
                        to.clone(),
                        x.span,
                    ));
                }
                TypedKind::Let { id, value, body } => {
                    let body = Box::new(self.coerce(*body, to)?);
                    return Ok(TypedExpr::new(
                        TypedKind::Let { id, value, body },
                        to.clone(),
                        x.span,
                    ));
                }
                kind => return self.cast(TypedExpr { kind, ..x }, to, Span::NONE),
            }
        }
        if let Some(v) = x.as_literal() {
            if let Some(converted) = v.convert_exact(to) {
                return Ok(TypedExpr::literal(converted, x.span));
            }
            if let ScalarValue::Utf8(s) = v {
                if let Err(e) = ScalarValue::parse(s, to) {
                    return err(x.span, e.message(s, to));
                }
            }
        }
        self.cast(x, to, Span::NONE)
    }

    /// `TRY_CAST(x AS to)`: checked as a cast; a literal string that is not a value of
    /// the type is a NULL, other conversions a [`TypedKind::TryCast`].
    fn try_cast(&self, x: TypedExpr, to: &DataType, span: Span) -> Result<TypedExpr> {
        if let Some(ScalarValue::Utf8(s)) = x.as_literal() {
            if is_supported(to) && to != &DataType::Null && ScalarValue::parse(s, to).is_err() {
                let span = if span.is_known() { span } else { x.span };
                return Ok(TypedExpr::literal(ScalarValue::Null(to.clone()), span));
            }
        }
        let cast = self.cast(x, to, span)?;
        Ok(match cast.kind {
            TypedKind::Cast(inner) => {
                TypedExpr::new(TypedKind::TryCast(inner), cast.data_type, cast.span)
            }
            _ => cast,
        })
    }

    fn cast(&self, x: TypedExpr, to: &DataType, span: Span) -> Result<TypedExpr> {
        let span = if span.is_known() { span } else { x.span };
        if !is_supported(to) || to == &DataType::Null {
            return err(
                span,
                format!(
                    "cannot cast to {}: the type is not supported",
                    sql_type_name(to)
                ),
            );
        }
        if x.data_type == *to {
            return Ok(x);
        }
        if let Some(ScalarValue::Utf8(s)) = x.as_literal() {
            return match ScalarValue::parse(s, to) {
                Ok(v) => Ok(TypedExpr::literal(v, span)),
                Err(e) => err(span, e.message(s, to)),
            };
        }
        // The time of day of an instant is its wall-clock time in its zone.
        let x = if crate::types::is_time(to) {
            functions::datetime::wall_clock(x, span)
        } else {
            x
        };
        if !cast_supported(&x.data_type, to) {
            return err(
                span,
                format!(
                    "cannot cast {} to {}",
                    sql_type_name(&x.data_type),
                    sql_type_name(to)
                ),
            );
        }
        Ok(TypedExpr::new(
            TypedKind::Cast(Box::new(x)),
            to.clone(),
            span,
        ))
    }

    fn call(&self, name: &str, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
        match name {
            "coalesce" => return self.coalesce(args, span),
            "nullif" => return self.nullif(args, span),
            "ifnull" | "nvl" if args.len() == 2 => return self.coalesce(args, span),
            "ifnull" | "nvl" => return err(span, format!("{name} needs exactly two arguments")),
            "nvl2" => return self.nvl2(args, span),
            _ => {}
        }
        let (name, mut args) = match functions::datetime::rewrite_call(name, args, &self.now, span)?
        {
            functions::datetime::Rewritten::Done(e) => return Ok(e),
            functions::datetime::Rewritten::Call(renamed, args) => (renamed.unwrap_or(name), args),
        };
        if let Some(decided) = self.out_of_range_comparison(name, &mut args, span) {
            return decided;
        }
        let decimal_ret = self.decimal_operands(name, &mut args, span)?;
        let mut candidates: Vec<&'static Signature> = functions::lookup(name).collect();
        decimal_rounding_candidates(&mut candidates, &args);
        if candidates.is_empty() {
            let mut names = functions::names();
            names.extend([
                "coalesce",
                "nullif",
                "if",
                "ifnull",
                "nvl",
                "nvl2",
                "current_date",
                "current_timestamp",
                "now",
            ]);
            let close = suggestions(name, names.into_iter());
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", quote_list(&close))
            };
            return err(span, format!("unknown function '{name}'{hint}"));
        }
        let sig = self.resolve(&candidates, &args);
        let Some(sig) = sig else {
            // Only where the operands could meet in the others' type: `qty < 'x'`
            // is a bad DOUBLE, `qty LIKE 'x'` a bad operator.
            self.bad_string_literal(&args.iter().collect::<Vec<_>>(), |t| {
                candidates.iter().any(|s| {
                    s.is_homogeneous() && s.args.iter().all(|p| functions::same_type(p, t))
                })
            })?;
            return err(span, mismatch_message(name, &args, &candidates));
        };
        // A literal meeting a TIMESTAMP WITH TIME ZONE is read in its zone
        // (`tz_col = '1994-01-01 00:00:00-05'` applies the offset); parameters match
        // timestamps of any zone.
        let zone = args.iter().find_map(|a| match &a.data_type {
            DataType::Timestamp(_, Some(z)) => Some(z.clone()),
            _ => None,
        });
        let args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| match (sig.param(i), &zone) {
                (DataType::Timestamp(unit, None), Some(z)) if a.as_literal().is_some() => {
                    self.coerce(a, &DataType::Timestamp(*unit, Some(z.clone())))
                }
                // A decimal parameter takes any precision and scale: the operands
                // have their exact types already (`decimal_operands`).
                (p, _)
                    if functions::param_accepts(p, &a.data_type)
                        && crate::types::is_decimal(&a.data_type) =>
                {
                    Ok(a)
                }
                (p, _) => self.coerce(a, p),
            })
            .collect::<Result<Vec<_>>>()?;
        if matches!(sig.func, functions::FuncId::Like | functions::FuncId::ILike)
            && args[1].as_literal().is_none()
        {
            return err(args[1].span, "the pattern of LIKE must be a literal string");
        }
        let ret = match (&sig.ret, args.first()) {
            // A timestamp result keeps the time zone of its timestamp argument.
            (DataType::Timestamp(_, _), Some(a))
                if matches!(a.data_type, DataType::Timestamp(..)) =>
            {
                a.data_type.clone()
            }
            // round(x, n) and its kin: the scale asked for.
            (_, Some(a)) if matches!(sig.func, functions::FuncId::DecimalRound(_)) => {
                rounded_decimal_type(&a.data_type, args.get(1))
            }
            // A decimal result: the type the decimal rules give, else the first
            // argument's (`-x`, `abs(x)`).
            (t, Some(a)) if crate::types::is_decimal(t) => {
                decimal_ret.clone().unwrap_or_else(|| a.data_type.clone())
            }
            (t, _) => t.clone(),
        };
        Ok(functions::datetime::localize(sig, args, ret, span))
    }

    /// Gives the operands of an operator that meets a decimal their exact types, and
    /// returns the result type, following DuckDB (docs/semantics.md, "Decimals"):
    ///
    /// - comparisons and `%`: both in the type they meet in (the larger scale and the
    ///   larger number of integral digits), which `%` returns;
    /// - `+`, `-`: both in `DECIMAL(p, s)` with `s` the larger scale and `p` the larger
    ///   number of integral digits + `s` + 1, capped at 38 (76 for wide operands);
    /// - `*`: each keeps its type; the result is `DECIMAL(p1 + p2, s1 + s2)`, capped,
    ///   and `DECIMAL(18, s1 + s2)` when both have at most 18 digits and `s1 + s2 < 18`
    ///   (DuckDB computes those in 64 bits with an overflow check);
    /// - `/`: both as `DOUBLE` (DuckDB; PostgreSQL divides in `NUMERIC`).
    ///
    /// An integer operand is `DECIMAL(w, 0)` with its type's width, an integer literal
    /// `DECIMAL(10,0)` when it fits an `INTEGER` (`a * 100` on `DECIMAL(15,2)` is
    /// `DECIMAL(18,2)`, `a + 1` `DECIMAL(16,2)`), as in DuckDB. With a float
    /// operand, or no decimal operand, nothing changes (`None`).
    fn decimal_operands(
        &self,
        name: &str,
        args: &mut [TypedExpr],
        span: Span,
    ) -> Result<Option<DataType>> {
        use crate::types::{as_decimal, common_decimal, decimal_parts, decimal_type};
        let comparison = matches!(
            name,
            "equal"
                | "not_equal"
                | "less_than"
                | "less_than_or_equal_to"
                | "greater_than"
                | "greater_than_or_equal_to"
                | "is_distinct_from"
                | "is_not_distinct_from"
        );
        let arithmetic = matches!(name, "add" | "subtract" | "multiply" | "divide" | "modulo");
        if !(comparison || arithmetic)
            || args.len() != 2
            || !args.iter().any(|a| decimal_parts(&a.data_type).is_some())
        {
            return Ok(None);
        }
        // A NULL operand takes the other's type.
        if let Some(i) = args.iter().position(|a| a.data_type == DataType::Null) {
            let other = args[1 - i].data_type.clone();
            args[i] = self.coerce(args[i].clone(), &other)?;
            return Ok(None);
        }
        // Each operand as a decimal: an integer literal as DuckDB's integer literals,
        // `INTEGER` when it fits one (`DECIMAL(10,0)`), else `BIGINT`, `UBIGINT`.
        let parts = |a: &TypedExpr| -> Option<(u8, i8)> {
            match a.as_literal().and_then(ScalarValue::as_i128) {
                Some(v) if i32::try_from(v).is_ok() => as_decimal(&DataType::Int32),
                Some(v) if i64::try_from(v).is_ok() => as_decimal(&DataType::Int64),
                Some(_) => as_decimal(&DataType::UInt64),
                None => as_decimal(&a.data_type),
            }
        };
        let (Some(l), Some(r)) = (parts(&args[0]), parts(&args[1])) else {
            return Ok(None);
        };
        if name == "divide" {
            for a in args.iter_mut() {
                *a = self.coerce(a.clone(), &DataType::Float64)?;
            }
            return Ok(None);
        }
        let wide = l.0.max(r.0) > crate::types::DECIMAL128_MAX_PRECISION;
        let cap = if wide {
            crate::types::DECIMAL256_MAX_PRECISION
        } else {
            crate::types::DECIMAL128_MAX_PRECISION
        };
        let too_wide = || -> Result<Option<DataType>> {
            err(
                span,
                format!(
                    "the result of this decimal operation needs more than {cap} digits of scale"
                ),
            )
        };
        let target = match name {
            "add" | "subtract" => {
                let s = l.1.max(r.1);
                let integral = (l.0 as i32 - l.1 as i32).max(r.0 as i32 - r.1 as i32);
                let p = (integral + s as i32 + 1).min(cap as i32) as u8;
                match decimal_type(p.max(s as u8), s) {
                    Some(t) => t,
                    None => return too_wide(),
                }
            }
            "multiply" => {
                for (i, (p, s)) in [l, r].into_iter().enumerate() {
                    if let Some(t) = decimal_type(p, s) {
                        args[i] = self.coerce(args[i].clone(), &t)?;
                    }
                }
                // Both operands in one width class: the wider one's.
                if wide {
                    for a in args.iter_mut() {
                        if let Some((p, s)) = decimal_parts(&a.data_type) {
                            let t = DataType::Decimal256(p.max(39), s);
                            *a = self.coerce(a.clone(), &t)?;
                        }
                    }
                }
                let s = l.1 as i32 + r.1 as i32;
                let mut p = (l.0 as i32 + r.0 as i32).min(cap as i32);
                // DuckDB: two operands of at most 18 digits multiply in 64 bits with
                // an overflow check, so the result is DECIMAL(18, s) when s < 18.
                const INT64_DIGITS: i32 = 18;
                if p > INT64_DIGITS
                    && l.0 as i32 <= INT64_DIGITS
                    && r.0 as i32 <= INT64_DIGITS
                    && s < INT64_DIGITS
                {
                    p = INT64_DIGITS;
                }
                if s > p {
                    return too_wide();
                }
                let ret = decimal_type(p as u8, s as i8);
                return match ret {
                    Some(t) => Ok(Some(t)),
                    None => too_wide(),
                };
            }
            _ => {
                // Comparisons and %: where both meet; a literal that fits the other
                // operand's type exactly keeps it (`price = 5`).
                let refs: Vec<&TypedExpr> = args.iter().collect();
                let adopted = self.unify(&refs).filter(|t| decimal_parts(t).is_some());
                match adopted.or_else(|| common_decimal(l, r)) {
                    Some(t) => t,
                    None => return too_wide(),
                }
            }
        };
        for a in args.iter_mut() {
            *a = self.coerce(a.clone(), &target)?;
        }
        Ok((!comparison).then_some(target))
    }

    /// A comparison of an integer value with an integer literal outside its type's
    /// range (`bigint_col > 18446744073709551615`, `ubigint_col <> -1`) is decided for
    /// every non-NULL value, as in PostgreSQL and DuckDB (which compare in a wider
    /// type): `CASE WHEN x IS NULL THEN NULL ELSE <answer> END`, with `x` computed once.
    /// Casting the literal to `x`'s type instead would fail on every row.
    fn out_of_range_comparison(
        &self,
        name: &str,
        args: &mut Vec<TypedExpr>,
        span: Span,
    ) -> Option<Result<TypedExpr>> {
        // (x < literal) for a literal above x's range, by operator.
        let below_answer = match name {
            "equal" => false,
            "not_equal" => true,
            "less_than" | "less_than_or_equal_to" => true,
            "greater_than" | "greater_than_or_equal_to" => false,
            _ => return None,
        };
        if args.len() != 2 {
            return None;
        }
        let range = |t: &DataType| -> Option<(i128, i128)> {
            Some(match t {
                DataType::Int8 => (i8::MIN as i128, i8::MAX as i128),
                DataType::Int16 => (i16::MIN as i128, i16::MAX as i128),
                DataType::Int32 => (i32::MIN as i128, i32::MAX as i128),
                DataType::Int64 => (i64::MIN as i128, i64::MAX as i128),
                DataType::UInt8 => (0, u8::MAX as i128),
                DataType::UInt16 => (0, u16::MAX as i128),
                DataType::UInt32 => (0, u32::MAX as i128),
                DataType::UInt64 => (0, u64::MAX as i128),
                _ => return None,
            })
        };
        // The literal's side, and whether it lies above the other operand's range. Where
        // both meet in a wider integer type that holds the literal (`int_col >
        // 3000000000` is a BIGINT comparison) the ordinary rules apply.
        let (literal_at, above) = (0..2).find_map(|i| {
            let v = args[i].as_literal()?.as_i128()?;
            let (min, max) = range(&args[1 - i].data_type)?;
            let common = common_type(&args[0].data_type, &args[1].data_type);
            if let Some((lo, hi)) = common.as_ref().and_then(range) {
                if (lo..=hi).contains(&v) {
                    return None;
                }
            }
            (v > max || v < min).then_some((i, v > max))
        })?;
        // The answer for `x OP literal`; mirrored when the literal is on the left, and
        // negated (except for = and <>) when the literal lies below the range.
        let mut answer = below_answer;
        if !above && !matches!(name, "equal" | "not_equal") {
            answer = !answer;
        }
        if literal_at == 0 && !matches!(name, "equal" | "not_equal") {
            answer = !answer;
        }
        let x = args.swap_remove(1 - literal_at);
        Some(self.share(x, |x| {
            let is_null = TypedExpr::new(
                TypedKind::IsNull {
                    expr: Box::new(x.clone()),
                    negated: false,
                },
                DataType::Boolean,
                span,
            );
            Ok(TypedExpr::new(
                TypedKind::Case {
                    branches: vec![(
                        is_null,
                        TypedExpr::literal(ScalarValue::Null(DataType::Boolean), span),
                    )],
                    else_expr: Box::new(TypedExpr::literal(ScalarValue::Boolean(answer), span)),
                },
                DataType::Boolean,
                span,
            ))
        }))
    }

    fn resolve(
        &self,
        candidates: &[&'static Signature],
        args: &[TypedExpr],
    ) -> Option<&'static Signature> {
        let types: Vec<DataType> = args.iter().map(|a| a.data_type.clone()).collect();
        if let Some(sig) = candidates.iter().find(|s| s.matches(&types)) {
            return Some(sig);
        }
        let refs: Vec<&TypedExpr> = args.iter().collect();
        if let Some(target) = self.unify(&refs) {
            let want = vec![target; args.len()];
            if let Some(sig) = candidates
                .iter()
                .find(|s| s.is_homogeneous() && s.matches(&want))
            {
                return Some(sig);
            }
        }
        let arity = candidates
            .iter()
            .filter(|s| s.accepts_count(args.len()))
            .count();
        candidates.iter().copied().find(|s| {
            s.accepts_count(args.len())
                && args.iter().enumerate().all(|(i, a)| {
                    let p = s.param(i);
                    match a.as_literal() {
                        // An unknown-typed string takes the type of another argument, or
                        // of the parameter when the function has one signature.
                        Some(v @ ScalarValue::Utf8(_)) => {
                            v.convert_exact(p).is_some()
                                && (*p == DataType::Utf8
                                    || arity == 1
                                    || args.iter().any(|o| {
                                        o.as_literal().is_none()
                                            && functions::same_type(&o.data_type, p)
                                    }))
                        }
                        Some(v) => v.convert_exact(p).is_some(),
                        // A decimal parameter takes decimals of any precision and scale.
                        None if functions::param_accepts(p, &a.data_type) => true,
                        None => common_type(&a.data_type, p)
                            .is_some_and(|c| functions::same_type(&c, p)),
                    }
                })
        })
    }

    fn coalesce(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
        if args.is_empty() {
            return err(span, "coalesce needs at least one argument");
        }
        let target = self.meet(&args.iter().collect::<Vec<_>>(), "coalesce", span)?;
        let args = args
            .into_iter()
            .map(|a| self.coerce(a, &target))
            .collect::<Result<Vec<_>>>()?;
        Ok(TypedExpr::new(TypedKind::Coalesce(args), target, span))
    }

    /// `NULLIF(a, b)` is `CASE WHEN a = b THEN NULL ELSE a END`, with `a` computed once.
    fn nullif(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
        let [a, b]: [TypedExpr; 2] = args.try_into().map_err(|_| BindError {
            message: "nullif needs exactly two arguments".into(),
            span,
        })?;
        self.share(a, |a| {
            let condition = self.call("equal", vec![a.clone(), b], span)?;
            let null = TypedExpr::literal(ScalarValue::Null(a.data_type.clone()), span);
            Ok(TypedExpr::new(
                TypedKind::Case {
                    branches: vec![(condition, null)],
                    else_expr: Box::new(a.clone()),
                },
                a.data_type.clone(),
                span,
            ))
        })
    }

    /// `NVL2(a, b, c)` is `CASE WHEN a IS NOT NULL THEN b ELSE c END`.
    fn nvl2(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
        let [a, b, c]: [TypedExpr; 3] = args.try_into().map_err(|_| BindError {
            message: "nvl2 needs exactly three arguments".into(),
            span,
        })?;
        let target = self.meet(&[&b, &c], "nvl2", span)?;
        let not_null = TypedExpr::new(
            TypedKind::IsNull {
                expr: Box::new(a),
                negated: true,
            },
            DataType::Boolean,
            span,
        );
        Ok(TypedExpr::new(
            TypedKind::Case {
                branches: vec![(not_null, self.coerce(b, &target)?)],
                else_expr: Box::new(self.coerce(c, &target)?),
            },
            target,
            span,
        ))
    }

    fn meet(&self, values: &[&TypedExpr], what: &str, span: Span) -> Result<DataType> {
        if let Some(t) = self.unify(values) {
            return Ok(t);
        }
        self.bad_string_literal(values, |_| true)?;
        self.unify(values).ok_or_else(|| {
            let types: Vec<String> = values.iter().map(|v| sql_type_name(&v.data_type)).collect();
            BindError {
                message: format!(
                    "the values of {what} have no common type: {}",
                    types.join(", ")
                ),
                span,
            }
        })
    }

    fn case(
        &self,
        operand: Option<&Expr>,
        branches: &[(Expr, Expr)],
        else_expr: Option<&Expr>,
        span: Span,
    ) -> Result<TypedExpr> {
        match operand {
            // The operand of a simple CASE is compared in every branch: computed once.
            Some(o) => {
                let o = self.bind(o)?;
                self.share(o, |o| self.case_body(Some(o), branches, else_expr, span))
            }
            None => self.case_body(None, branches, else_expr, span),
        }
    }

    fn case_body(
        &self,
        operand: Option<&TypedExpr>,
        branches: &[(Expr, Expr)],
        else_expr: Option<&Expr>,
        span: Span,
    ) -> Result<TypedExpr> {
        let mut conditions = Vec::with_capacity(branches.len());
        let mut values = Vec::with_capacity(branches.len() + 1);
        for (when, then) in branches {
            let condition = match operand {
                Some(o) => {
                    let w = self.bind(when)?;
                    let wspan = w.span;
                    self.call("equal", vec![o.clone(), w], wspan)?
                }
                None => self.boolean(when, "CASE WHEN")?,
            };
            conditions.push(condition);
            values.push(self.bind(then)?);
        }
        let else_value = match else_expr {
            Some(e) => self.bind(e)?,
            None => TypedExpr::literal(ScalarValue::Null(DataType::Null), span),
        };
        values.push(else_value);
        let target = self.meet(&values.iter().collect::<Vec<_>>(), "CASE", span)?;
        let mut values = values
            .into_iter()
            .map(|v| self.coerce(v, &target))
            .collect::<Result<Vec<_>>>()?;
        let else_expr = Box::new(values.pop().expect("the ELSE value"));
        let branches = conditions.into_iter().zip(values).collect();
        Ok(TypedExpr::new(
            TypedKind::Case {
                branches,
                else_expr,
            },
            target,
            span,
        ))
    }

    fn in_list(&self, expr: &Expr, list: &[Expr], negated: bool, span: Span) -> Result<TypedExpr> {
        let probe = self.bind(expr)?;
        let items = list
            .iter()
            .map(|i| self.bind(i))
            .collect::<Result<Vec<_>>>()?;
        if items.is_empty() {
            return err(span, "IN needs at least one value");
        }
        let interval = matches!(probe.data_type, DataType::Interval(_));
        if items.iter().all(|i| i.as_literal().is_some()) && !interval {
            let mut all: Vec<&TypedExpr> = vec![&probe];
            all.extend(items.iter());
            if self.unify(&all).is_none() {
                self.bad_string_literal(&all, |_| true)?;
                if let Some(bad) = items.iter().find(|i| self.unify(&[&probe, i]).is_none()) {
                    let pair = [probe.clone(), bad.clone()];
                    let equal: Vec<&'static Signature> = functions::lookup("equal").collect();
                    return err(bad.span, mismatch_message("equal", &pair, &equal));
                }
            }
            let target = self.meet(&all, "IN", span)?;
            let probe = self.coerce(probe, &target)?;
            let values = items
                .into_iter()
                .map(|i| {
                    let c = self.coerce(i, &target)?;
                    match c.kind {
                        TypedKind::Literal(v) => Ok(v),
                        _ => err(
                            c.span,
                            format!("IN list value does not fit {}", sql_type_name(&target)),
                        ),
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(TypedExpr::new(
                TypedKind::InList {
                    expr: Box::new(probe),
                    list: values,
                    negated,
                },
                DataType::Boolean,
                span,
            ));
        }
        // A list with expressions is a disjunction of equalities (the SQL definition),
        // with the probe computed once.
        self.share(probe, |probe| {
            let equalities = items
                .into_iter()
                .map(|i| {
                    let s = i.span;
                    self.call("equal", vec![probe.clone(), i], s)
                })
                .collect::<Result<Vec<_>>>()?;
            let any = if equalities.len() == 1 {
                equalities.into_iter().next().expect("one equality")
            } else {
                TypedExpr::new(TypedKind::Or(equalities), DataType::Boolean, span)
            };
            Ok(if negated {
                TypedExpr::new(TypedKind::Not(Box::new(any)), DataType::Boolean, span)
            } else {
                any
            })
        })
    }
}

/// `round`, `trunc`, `floor`, `ceil` of a decimal with a constant number of places
/// are computed exactly in a decimal; otherwise (a float or integer, or places
/// given by a column) in DOUBLE: `candidates` keeps only the signatures for that.
fn decimal_rounding_candidates(candidates: &mut Vec<&'static Signature>, args: &[TypedExpr]) {
    let rounding = |s: &&Signature| matches!(s.func, functions::FuncId::DecimalRound(_));
    if !candidates.iter().any(rounding) {
        return;
    }
    let exact = args
        .first()
        .is_some_and(|x| crate::types::is_decimal(&x.data_type))
        && args[1..].iter().all(TypedExpr::is_constant);
    candidates.retain(|s| rounding(s) == exact);
}

/// The decimal type of `round(x, places)` (and `trunc`, `floor`, `ceil`): see
/// [`crate::decimal::rounded_type`]. A NULL number of places keeps `x`'s type (the
/// value is NULL).
fn rounded_decimal_type(x: &DataType, places: Option<&TypedExpr>) -> DataType {
    let n = match places {
        None => 0,
        // One that fails to evaluate raises its error when rows are evaluated.
        Some(e) => match crate::interpret::evaluate_constant(e)
            .ok()
            .and_then(|v| v.as_i128())
        {
            Some(n) => i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX }),
            None => return x.clone(),
        },
    };
    crate::decimal::rounded_type(x, n)
}
