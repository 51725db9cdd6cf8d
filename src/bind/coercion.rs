//! The type values meet in, and getting a value there: implicit casts, literals
//! adopting a type they fit, and explicit `CAST` / `TRY_CAST`.

use arrow_schema::DataType;

use super::{err, Binder, Result};
use crate::error::BindError;
use crate::expr::{Expr, Span};
use crate::functions;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{cast_supported, common_type, is_supported, sql_type_name};

impl Binder<'_> {
    /// `expr` bound as a BOOLEAN operand of `op` (AND, OR, NOT, CASE WHEN).
    pub(super) fn boolean(&self, expr: &Expr, op: &str) -> Result<TypedExpr> {
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
    pub(super) fn unify(&self, args: &[&TypedExpr]) -> Option<DataType> {
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

    pub(super) fn meet(&self, values: &[&TypedExpr], what: &str, span: Span) -> Result<DataType> {
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

    /// The error for a string literal among `args` that does not parse as the type
    /// the other arguments meet in (`qty < 'abc'`: invalid DOUBLE literal 'abc'),
    /// when `meets(type)` says the values could meet in that type.
    pub(super) fn bad_string_literal(
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
    pub(super) fn coerce(&self, x: TypedExpr, to: &DataType) -> Result<TypedExpr> {
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
    pub(super) fn try_cast(&self, x: TypedExpr, to: &DataType, span: Span) -> Result<TypedExpr> {
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

    pub(super) fn cast(&self, x: TypedExpr, to: &DataType, span: Span) -> Result<TypedExpr> {
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
            super::datetime::wall_clock(x, span)
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
}

fn is_string_literal(x: &TypedExpr) -> bool {
    matches!(x.as_literal(), Some(ScalarValue::Utf8(_)))
}

fn is_boolean_like(t: &DataType) -> bool {
    matches!(t, DataType::Boolean | DataType::Null)
}
