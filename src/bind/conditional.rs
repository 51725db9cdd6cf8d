//! CASE, COALESCE, NULLIF and NVL2: the branches meet in one type.

use arrow_schema::DataType;

use super::{err, Binder, Result};
use crate::error::BindError;
use crate::expr::{Expr, Span};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};

impl Binder<'_> {
    pub(super) fn case(
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

    pub(super) fn coalesce(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
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
    pub(super) fn nullif(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
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
    pub(super) fn nvl2(&self, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
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
}
