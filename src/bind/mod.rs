//! The binder: resolves an [`Expr`] against an Arrow schema into a [`TypedExpr`].
//!
//! Columns become indices (exact name first, then a unique case-insensitive match),
//! calls are resolved in the [registry](crate::functions), implicit casts become
//! explicit, and literals adopt the type of what they meet when they fit it exactly
//! (`int32_col IN (1, 3)` compares 32-bit integers; `date_col >= '1994-01-01'` parses
//! the string as a date).
//!
//! This file holds the entry points and the walk over the tree; each rule has a file:
//! `names` (columns), `coercion` (the type values meet in, implicit casts, CAST),
//! `calls` (resolving a call among its signatures), `operators` (decimal operands,
//! out-of-range integer comparisons), `conditional` (CASE, COALESCE, NULLIF, NVL2),
//! `in_between` (IN and BETWEEN) and `datetime` (the date and time rules).

mod calls;
mod coercion;
mod conditional;
mod datetime;
mod in_between;
mod names;
mod operators;

use std::cell::Cell;

use arrow_schema::{DataType, Schema};

use crate::error::BindError;
use crate::expr::{Expr, ExprKind, Span};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::sql_type_name;

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

impl Binder<'_> {
    #[recursive::recursive]
    fn bind(&self, expr: &Expr) -> Result<TypedExpr> {
        let span = expr.span;
        match &expr.kind {
            ExprKind::Column(name) => self.column(name, span),
            ExprKind::Field { expr, name } => self.field(expr, name, span),
            ExprKind::Literal(value) => Ok(TypedExpr::literal(value.clone(), span)),
            ExprKind::Call { name, args } if name == "struct_extract" => match args.as_slice() {
                [base, Expr {
                    kind: ExprKind::Literal(ScalarValue::Utf8(field)),
                    ..
                }] => self.field(base, field, span),
                _ => err(
                    span,
                    "struct_extract takes a STRUCT and a quoted field name: struct_extract(s, 'f')",
                ),
            },
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
                symmetric,
            } => self.between(expr, low, high, *negated, *symmetric, span),
        }
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
}
