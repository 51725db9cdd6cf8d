//! `x IN (…)` and `x BETWEEN low AND high` (also SYMMETRIC), desugared into
//! comparisons with `x` computed once.

use arrow_schema::DataType;

use super::calls::mismatch_message;
use super::{err, Binder, Result};
use crate::expr::{Expr, Span};
use crate::functions::{self, Signature};
use crate::typed::{TypedExpr, TypedKind};
use crate::types::sql_type_name;

impl Binder<'_> {
    pub(super) fn in_list(
        &self,
        expr: &Expr,
        list: &[Expr],
        negated: bool,
        span: Span,
    ) -> Result<TypedExpr> {
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

    /// `x [NOT] BETWEEN low AND high` is `x >= low AND x <= high` (`x < low OR x > high`),
    /// with `x` computed once. `x [NOT] BETWEEN SYMMETRIC low AND high` is PostgreSQL's
    /// `[NOT] ((x BETWEEN low AND high) OR (x BETWEEN high AND low))`, with `x`, `low`
    /// and `high` each computed once (so nesting it stays linear in size).
    pub(super) fn between(
        &self,
        x: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
        symmetric: bool,
        span: Span,
    ) -> Result<TypedExpr> {
        let x = self.bind(x)?;
        let (low, high) = (self.bind(low)?, self.bind(high)?);
        if !symmetric {
            return self.share(x, |x| self.within(x, low, high, negated, span));
        }
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
}
