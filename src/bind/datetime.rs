//! The binder's date and time rules: calls it rewrites before resolving them
//! (`current_timestamp`, `date_part` of a literal field, `x ± INTERVAL`,
//! `timezone` of a TIMESTAMP without time zone) and the wall-clock reading of a
//! TIMESTAMP WITH TIME ZONE ([`localize`]): a function whose registry entry reads it
//! on the wall clock ([`ZoneReading`]) sees the wall-clock time in the value's zone,
//! and, where it says so, its result is converted back to an instant in that zone.

use std::cell::Cell;

use arrow_schema::{DataType, TimeUnit};

use crate::error::BindError;
use crate::expr::Span;
use crate::functions::datetime::{not_of_interval, not_of_time, unknown_unit, Field, IV};
use crate::functions::{self, Signature, ZoneReading};
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::is_time;

/// What [`rewrite_call`] made of a call.
pub(super) enum Rewritten {
    /// A finished expression (a folded `current_timestamp`).
    Done(TypedExpr),
    /// The call to resolve: its (possibly new) name and arguments.
    Call(Option<&'static str>, Vec<TypedExpr>),
}

/// Date and time calls the binder treats specially, before resolving them:
/// * `current_date()`, `current_timestamp()` and `now()` fold to literals of one
///   instant per bound expression (`now` holds it, in microseconds);
/// * `date_part` with a literal field becomes the function of that field (`year(x)`,
///   BIGINT) or keeps the DOUBLE `date_part` (second, millisecond, microsecond, with
///   their fraction), or `epoch(x)`; an unknown literal field is an error here;
/// * `timezone(zone, x)` of a TIMESTAMP without time zone is `from_local_time`.
pub(super) fn rewrite_call(
    name: &str,
    mut args: Vec<TypedExpr>,
    now: &Cell<Option<i64>>,
    span: Span,
) -> Result<Rewritten, BindError> {
    let error = |message: String| BindError { message, span };
    let instant = || {
        let micros = now
            .get()
            .unwrap_or_else(|| chrono::Utc::now().timestamp_micros());
        now.set(Some(micros));
        micros
    };
    match name {
        "current_date" | "current_timestamp" | "now" if args.is_empty() => {
            let micros = instant();
            let value = if name == "current_date" {
                ScalarValue::Date32(micros.div_euclid(86_400_000_000) as i32)
            } else {
                ScalarValue::Timestamp(micros, TimeUnit::Microsecond, Some("UTC".into()))
            };
            Ok(Rewritten::Done(TypedExpr::literal(value, span)))
        }
        "date_part" | "datepart" if args.len() == 2 => {
            let field = match args[0].as_literal() {
                Some(ScalarValue::Utf8(s)) => {
                    Some(Field::named(s).ok_or_else(|| error(unknown_unit(s)))?)
                }
                _ => None,
            };
            if let (Some(f), Some(ScalarValue::Utf8(name))) = (field, args[0].as_literal()) {
                if is_time(&args[1].data_type) && !f.of_time() {
                    return Err(error(not_of_time(name)));
                }
                if args[1].data_type == IV && !f.of_interval() {
                    return Err(error(not_of_interval(name)));
                }
            }
            let Some(field) = field else {
                if matches!(args[1].data_type, DataType::Timestamp(_, Some(_))) {
                    return Err(error(
                        "date_part of a TIMESTAMP WITH TIME ZONE needs a literal field".into(),
                    ));
                }
                return Ok(Rewritten::Call(None, args));
            };
            let function = match field {
                Field::Epoch => Some("epoch"),
                f => f.function(),
            };
            if let Some(function) = function {
                args.remove(0);
                return Ok(Rewritten::Call(Some(function), args));
            }
            Ok(Rewritten::Call(None, args))
        }
        "add" | "subtract" if args.len() == 2 => interval_arithmetic(name, args, span),
        "timezone"
            if args.len() == 2 && matches!(args[1].data_type, DataType::Timestamp(_, None)) =>
        {
            Ok(Rewritten::Call(Some("from_local_time"), args))
        }
        _ => Ok(Rewritten::Call(None, args)),
    }
}

/// `x + INTERVAL '…'`, `INTERVAL '…' + x` and `x - INTERVAL '…'` for a DATE or
/// TIMESTAMP `x`: `add_nanoseconds(add_days(add_months(x, months), days), nanos)`
/// with the parts that are not zero, as PostgreSQL adds them (months clamped to the
/// month's end, then calendar days, then the time); a DATE becomes a TIMESTAMP
/// first, as in PostgreSQL. Other additions are left to the operators.
fn interval_arithmetic(
    name: &str,
    mut args: Vec<TypedExpr>,
    span: Span,
) -> Result<Rewritten, BindError> {
    let interval = |e: &TypedExpr| match e.as_literal() {
        Some(ScalarValue::IntervalMonthDayNano(v)) => Some(*v),
        _ => None,
    };
    let temporal = |e: &TypedExpr| {
        matches!(e.data_type, DataType::Date32 | DataType::Timestamp(..)) || is_time(&e.data_type)
    };
    let value = |e: &TypedExpr| e.data_type == IV && e.as_literal().is_none();
    let dated = |e: &TypedExpr| matches!(e.data_type, DataType::Date32 | DataType::Timestamp(..));
    if value(&args[1]) && dated(&args[0]) {
        let iv = args.pop().expect("two arguments");
        return add_interval_value(name == "subtract", args.pop().expect("two"), iv, span);
    }
    if value(&args[0]) && dated(&args[1]) && name == "add" {
        let x = args.pop().expect("two arguments");
        return add_interval_value(false, x, args.pop().expect("two"), span);
    }
    let (x, iv) = match (interval(&args[0]), interval(&args[1])) {
        (None, Some(iv)) if temporal(&args[0]) => (args.swap_remove(0), iv),
        (Some(iv), None) if name == "add" && temporal(&args[1]) => (args.swap_remove(1), iv),
        _ => return Ok(Rewritten::Call(None, args)),
    };
    let error = || BindError {
        message: "interval out of range".into(),
        span,
    };
    let (months, days, nanos) = if name == "subtract" {
        (
            iv.months.checked_neg().ok_or_else(error)?,
            iv.days.checked_neg().ok_or_else(error)?,
            iv.nanoseconds.checked_neg().ok_or_else(error)?,
        )
    } else {
        (iv.months, iv.days, iv.nanoseconds)
    };
    if is_time(&x.data_type) {
        // A time of day ignores the months and days (PostgreSQL) and wraps around
        // midnight: only the time part, reduced to less than a day, is added.
        let nanos = nanos.rem_euclid(86_400 * 1_000_000_000);
        if nanos == 0 {
            return Ok(Rewritten::Done(x));
        }
        let n = TypedExpr::literal(ScalarValue::Int64(nanos), span);
        return registry_call("add_nanoseconds", vec![x, n], span).map(Rewritten::Done);
    }
    let mut x = match x.data_type {
        DataType::Date32 => TypedExpr::new(
            TypedKind::Cast(Box::new(x)),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            span,
        ),
        _ => x,
    };
    for (step, n) in [
        ("add_months", i64::from(months)),
        ("add_days", i64::from(days)),
        ("add_nanoseconds", nanos),
    ] {
        if n != 0 {
            x = registry_call(
                step,
                vec![x, TypedExpr::literal(ScalarValue::Int64(n), span)],
                span,
            )?;
        }
    }
    Ok(Rewritten::Done(x))
}

/// `x ± iv` for a DATE or TIMESTAMP `x` and an INTERVAL value `iv` (not a literal):
/// `add_interval(zone, x, iv)` (`negate(iv)` to subtract), in `x`'s zone ('' for
/// none); a DATE becomes a TIMESTAMP first, as in PostgreSQL.
fn add_interval_value(
    subtract: bool,
    x: TypedExpr,
    iv: TypedExpr,
    span: Span,
) -> Result<Rewritten, BindError> {
    let x = match x.data_type {
        DataType::Date32 => TypedExpr::new(
            TypedKind::Cast(Box::new(x)),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            span,
        ),
        _ => x,
    };
    let iv = if subtract {
        registry_call("negate", vec![iv], span)?
    } else {
        iv
    };
    let zone = match &x.data_type {
        DataType::Timestamp(_, Some(z)) => z.to_string(),
        _ => String::new(),
    };
    let zone = TypedExpr::literal(ScalarValue::Utf8(zone), span);
    registry_call("add_interval", vec![zone, x, iv], span).map(Rewritten::Done)
}

/// The call of `name` on arguments of exactly its signature's types, typed as the
/// binder types it (a timestamp result keeps its first argument's type).
fn registry_call(name: &str, args: Vec<TypedExpr>, span: Span) -> Result<TypedExpr, BindError> {
    let types: Vec<DataType> = args.iter().map(|a| a.data_type.clone()).collect();
    // Every timestamp unit has a signature of each step, so this always finds one.
    let sig = functions::lookup(name)
        .find(|s| s.matches(&types))
        .ok_or_else(|| BindError {
            message: format!("no function matches {name} for these arguments"),
            span,
        })?;
    let ret = match (
        &sig.ret,
        types.iter().find(|t| matches!(t, DataType::Timestamp(..))),
    ) {
        (DataType::Timestamp(..), Some(t)) => t.clone(),
        (t, _) => t.clone(),
    };
    Ok(localize(sig, args, ret, span))
}

/// The resolved call of `sig` on `args`, of type `ret`, as the signature reads a
/// TIMESTAMP WITH TIME ZONE ([`ZoneReading`]): on the wall clock, arguments with a
/// time zone are read in their zone (`timezone(zone, x)`), and, where the result is
/// one too, a TIMESTAMP result is converted back to an instant in that zone.
pub(super) fn localize(
    sig: &'static Signature,
    args: Vec<TypedExpr>,
    ret: DataType,
    span: Span,
) -> TypedExpr {
    if sig.zone_reading == ZoneReading::Instant {
        return TypedExpr::new(TypedKind::Call { sig, args }, ret, span);
    }
    let mut result_zone = None;
    let args = args
        .into_iter()
        .map(|a| {
            if let DataType::Timestamp(_, Some(z)) = &a.data_type {
                result_zone.get_or_insert(z.clone());
            }
            wall_clock(a, span)
        })
        .collect();
    let call = TypedExpr::new(TypedKind::Call { sig, args }, ret.clone(), span);
    match (sig.zone_reading, ret, result_zone) {
        (ZoneReading::WallClockAndBack, DataType::Timestamp(unit, _), Some(z)) => {
            let t = DataType::Timestamp(unit, Some(z.clone()));
            zone_call("from_local_time", &z, call, t, span)
        }
        _ => call,
    }
}

/// A TIMESTAMP WITH TIME ZONE as the wall-clock TIMESTAMP in its zone
/// (`timezone(zone, x)`); other values as they are.
pub(super) fn wall_clock(x: TypedExpr, span: Span) -> TypedExpr {
    match x.data_type.clone() {
        DataType::Timestamp(unit, Some(z)) => {
            zone_call("timezone", &z, x, DataType::Timestamp(unit, None), span)
        }
        _ => x,
    }
}

/// `function(zone, x)` of type `t` (`timezone` or `from_local_time`).
fn zone_call(function: &str, zone: &str, x: TypedExpr, t: DataType, span: Span) -> TypedExpr {
    let types = [DataType::Utf8, x.data_type.clone()];
    match functions::lookup(function).find(|s| s.matches(&types)) {
        Some(sig) => {
            let args = vec![
                TypedExpr::literal(ScalarValue::Utf8(zone.to_string()), span),
                x,
            ];
            TypedExpr::new(TypedKind::Call { sig, args }, t, span)
        }
        // Every timestamp unit has its signature.
        None => x,
    }
}
