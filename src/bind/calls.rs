//! Resolving a call: special forms first, then the signature its arguments match
//! (exactly, after unifying them, or by implicit casts), its result type, and the
//! message when none matches.

use arrow_schema::DataType;

use super::{datetime, err, names::quote_list, names::suggestions, Binder, Result};
use crate::expr::Span;
use crate::functions::{self, Signature};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{common_type, sql_type_name};

impl Binder<'_> {
    pub(super) fn call(&self, name: &str, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr> {
        // An alias is its function: the rules below apply to every name of it (and
        // messages keep the name as written).
        let function = functions::function(name).map_or(name, |f| f.name);
        match function {
            "coalesce" => return self.coalesce(args, span),
            "nullif" => return self.nullif(args, span),
            "ifnull" if args.len() == 2 => return self.coalesce(args, span),
            "ifnull" => return err(span, format!("{name} needs exactly two arguments")),
            "nvl2" => return self.nvl2(args, span),
            _ => {}
        }
        let (name, mut args) = match datetime::rewrite_call(function, args, &self.now, span)? {
            datetime::Rewritten::Done(e) => return Ok(e),
            datetime::Rewritten::Call(renamed, args) => (renamed.unwrap_or(name), args),
        };
        if let Some(decided) = self.out_of_range_comparison(name, &mut args, span) {
            return decided;
        }
        if let Some(f) = functions::function(name) {
            as_text(f.text_arguments, &mut args);
        }
        // Operators by their registry name, whatever alias called them (`mod`).
        let operator = functions::lookup(name).next().map_or(name, |s| s.name);
        let decimal_ret = self.decimal_operands(operator, &mut args, span)?;
        let mut candidates: Vec<&'static Signature> = functions::lookup(name).collect();
        decimal_rounding_candidates(&mut candidates, &args);
        if candidates.is_empty() {
            // The registry's names include the special forms the binder rewrites.
            let close = suggestions(name, functions::names().into_iter());
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
        Ok(datetime::localize(sig, args, ret, span))
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

/// The one-line message for a call no signature matches. Operators say what they
/// cannot do with which types, with a hint at what was probably meant; functions
/// list a few of their signatures.
pub(super) fn mismatch_message(
    name: &str,
    args: &[TypedExpr],
    candidates: &[&'static Signature],
) -> String {
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
            let op = crate::sql::print::binary_operator(name).unwrap_or(name);
            format!("{op} needs VARCHAR operands, not {a} and {b}")
        }
        (Some(_), [a]) if crate::sql::print::postfix_operator(name).is_some() => {
            let op = crate::sql::print::postfix_operator(name).unwrap_or(name);
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

/// Casts the arguments `which` says to VARCHAR ([`functions::TextArguments`]).
fn as_text(which: functions::TextArguments, args: &mut [TypedExpr]) {
    use functions::TextArguments::*;
    let is_text = |a: &TypedExpr| matches!(a.data_type, DataType::Utf8 | DataType::Null);
    let cast = match which {
        AsTheyAre => false,
        All => true,
        WhenOneIsText => args.iter().any(|a| a.data_type == DataType::Utf8),
    };
    if !cast {
        return;
    }
    for a in args.iter_mut().filter(|a| !is_text(a)) {
        let span = a.span;
        let inner = std::mem::replace(
            a,
            TypedExpr::literal(ScalarValue::Null(DataType::Null), span),
        );
        *a = TypedExpr::new(TypedKind::Cast(Box::new(inner)), DataType::Utf8, span);
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field, Schema};

    #[test]
    fn special_forms_are_suggested_for_a_typo() {
        let schema = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
        for (typo, suggested) in [
            ("coalese(a, 1)", "'coalesce'"),
            ("nvl3(a, 1, 2)", "'nvl2'"),
            ("curent_date()", "'current_date'"),
        ] {
            let e = crate::sql::parse_expr(typo).unwrap();
            let message = crate::bind::bind(&e, &schema).unwrap_err().to_string();
            assert!(message.contains(suggested), "{typo}: {message}");
        }
    }
}
