//! The binder: resolves an [`Expr`] against an Arrow schema into a [`TypedExpr`].
//!
//! Columns become indices (exact name first, then a unique case-insensitive match),
//! calls are resolved in the [registry](crate::registry), implicit casts become
//! explicit, and literals adopt the type of what they meet when they fit it exactly
//! (`int32_col IN (1, 3)` compares 32-bit integers; `date_col >= '1994-01-01'` parses
//! the string as a date).

use std::cell::Cell;

use arrow_schema::{DataType, Schema};

use crate::error::BindError;
use crate::expr::{Expr, ExprKind, Span};
use crate::registry::{self, Signature};
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
    }
    .bind(expr)
}

/// Binds a filter predicate: the result must be BOOLEAN (an untyped NULL counts as one).
pub fn bind_predicate(expr: &Expr, schema: &Schema) -> Result<TypedExpr> {
    let typed = bind(expr, schema)?;
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
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(!ca.eq_ignore_ascii_case(cb));
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to three candidates closest to `name`, closest first.
pub(crate) fn suggestions<'n>(
    name: &str,
    candidates: impl Iterator<Item = &'n str>,
) -> Vec<&'n str> {
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (edit_distance(name, c), c))
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
            } => self.between(expr, low, high, *negated, span),
        }
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
        self.share(x, |x| {
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
        })
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
        let index = match self.schema.index_of(name) {
            Ok(i) => i,
            Err(_) => {
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
        if !is_supported(field.data_type()) || field.data_type() == &DataType::Null {
            return err(
                span,
                format!(
                    "column '{}' has type {}, which Broadhead does not support",
                    field.name(),
                    field.data_type()
                ),
            );
        }
        Ok(TypedExpr::new(
            TypedKind::Column(index),
            field.data_type().clone(),
            span,
        ))
    }

    fn boolean(&self, expr: &Expr, op: &str) -> Result<TypedExpr> {
        let x = self.bind(expr)?;
        if !is_boolean_like(&x.data_type) {
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
    fn unify(&self, args: &[&TypedExpr]) -> Option<DataType> {
        let mut target: Option<DataType> = None;
        for a in args.iter().filter(|a| a.as_literal().is_none()) {
            target = Some(match target {
                None => a.data_type.clone(),
                Some(t) => common_type(&t, &a.data_type)?,
            });
        }
        for a in args {
            if let Some(v) = a.as_literal() {
                target = Some(match target {
                    None => v.data_type(),
                    Some(t) if v.convert_exact(&t).is_some() => t,
                    Some(t) => common_type(&t, &v.data_type())?,
                });
            }
        }
        target
    }

    /// `x` as type `to`: literals are converted (exactly, or through a checked cast),
    /// other nodes get an implicit cast.
    fn coerce(&self, x: TypedExpr, to: &DataType) -> Result<TypedExpr> {
        if registry::same_type(&x.data_type, to) {
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
                return err(
                    x.span,
                    format!("invalid {} literal '{s}'", sql_type_name(to)),
                );
            }
        }
        self.cast(x, to, Span::NONE)
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
            return match x
                .as_literal()
                .and_then(|v| v.convert_exact(to))
                .or_else(|| ScalarValue::parse(s, to).ok())
            {
                Some(v) => Ok(TypedExpr::literal(v, span)),
                None => err(span, format!("invalid {} literal '{s}'", sql_type_name(to))),
            };
        }
        if !cast_supported(&x.data_type, to) {
            let hint = if x.data_type == DataType::Utf8 {
                " (casts from VARCHAR are supported for literals only)"
            } else {
                ""
            };
            return err(
                span,
                format!(
                    "cannot cast {} to {}{hint}",
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
            _ => {}
        }
        let candidates: Vec<&'static Signature> = registry::lookup(name).collect();
        if candidates.is_empty() {
            let mut names = registry::names();
            names.extend(["coalesce", "nullif", "if"]);
            let close = suggestions(name, names.into_iter());
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", quote_list(&close))
            };
            return err(span, format!("unknown function '{name}'{hint}"));
        }
        let types: Vec<DataType> = args.iter().map(|a| a.data_type.clone()).collect();
        let sig = self.resolve(&candidates, &args);
        let Some(sig) = sig else {
            self.bad_temporal_literal(&args)?;
            let shown: Vec<String> = types.iter().map(sql_type_name).collect();
            let mut list: Vec<String> = candidates.iter().map(|s| s.display()).collect();
            list.dedup();
            let more = list.len().saturating_sub(12);
            list.truncate(12);
            let tail = if more > 0 {
                format!(", … and {more} more")
            } else {
                String::new()
            };
            return err(
                span,
                format!(
                    "no function matches {name}({}); candidates: {}{tail}",
                    shown.join(", "),
                    list.join(", ")
                ),
            );
        };
        let args = args
            .into_iter()
            .zip(&sig.args)
            .map(|(a, t)| self.coerce(a, t))
            .collect::<Result<Vec<_>>>()?;
        if matches!(sig.func, registry::FuncId::Like | registry::FuncId::ILike)
            && args[1].as_literal().is_none()
        {
            return err(args[1].span, "the pattern of LIKE must be a literal string");
        }
        let ret = match (&sig.ret, args.first()) {
            // A timestamp result keeps the time zone of its argument.
            (DataType::Timestamp(_, _), Some(a)) => a.data_type.clone(),
            (t, _) => t.clone(),
        };
        Ok(TypedExpr::new(TypedKind::Call { sig, args }, ret, span))
    }

    /// A string literal that meets a DATE or TIMESTAMP but does not parse as one is a
    /// bad literal, not a missing function.
    fn bad_temporal_literal(&self, args: &[TypedExpr]) -> Result<()> {
        let temporal = args
            .iter()
            .find(|a| crate::types::is_temporal(&a.data_type) && a.as_literal().is_none());
        if let Some(t) = temporal {
            for a in args {
                if let Some(ScalarValue::Utf8(s)) = a.as_literal() {
                    if a.as_literal()
                        .and_then(|v| v.convert_exact(&t.data_type))
                        .is_none()
                    {
                        let what = sql_type_name(&t.data_type);
                        return err(a.span, format!("invalid {what} literal '{s}'"));
                    }
                }
            }
        }
        Ok(())
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
        candidates.iter().copied().find(|s| {
            s.args.len() == args.len()
                && args.iter().zip(&s.args).all(|(a, p)| match a.as_literal() {
                    Some(v) => v.convert_exact(p).is_some(),
                    None => {
                        common_type(&a.data_type, p).is_some_and(|c| registry::same_type(&c, p))
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

    fn meet(&self, values: &[&TypedExpr], what: &str, span: Span) -> Result<DataType> {
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
        if items.iter().all(|i| i.as_literal().is_some()) {
            let mut all: Vec<&TypedExpr> = vec![&probe];
            all.extend(items.iter());
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
