//! Exact decimal arithmetic on the unscaled integers of `DECIMAL(p, s)` values:
//! text in and out, rescaling (rounding half away from zero), precision checks and
//! conversions to and from floats. Both back ends and the literals use these, so a
//! decimal rule is written once.
//!
//! A decimal value is an integer `v` standing for `v / 10^s`. `Decimal128` values
//! are `i128`, `Decimal256` values arrow's `i256`; the functions are generic over
//! [`DecimalInt`], which both implement.

use std::fmt::Display;

use arrow::datatypes::{
    i256, ArrowNativeTypeOp, MAX_DECIMAL128_FOR_EACH_PRECISION, MAX_DECIMAL256_FOR_EACH_PRECISION,
    MIN_DECIMAL128_FOR_EACH_PRECISION, MIN_DECIMAL256_FOR_EACH_PRECISION,
};

use crate::types::LiteralError;

/// The unscaled integer of a decimal: `i128` (`Decimal128`) or `i256` (`Decimal256`).
pub trait DecimalInt: ArrowNativeTypeOp + Ord + Display + Send + Sync + 'static {
    /// The largest precision the type holds (38 or 76).
    const MAX_PRECISION: u8;
    /// The largest value of `precision` digits (`10^p - 1`).
    fn max_of(precision: u8) -> Self;
    /// The smallest value of `precision` digits (`-(10^p - 1)`).
    fn min_of(precision: u8) -> Self;
    /// From an `i128` (always exact).
    fn from_i128(v: i128) -> Self;
    /// As an `i128`, when it fits.
    fn to_i128(self) -> Option<i128>;
    /// Parses an optionally signed run of decimal digits.
    fn from_digits(text: &str) -> Option<Self>;
}

impl DecimalInt for i128 {
    const MAX_PRECISION: u8 = 38;
    fn max_of(precision: u8) -> i128 {
        MAX_DECIMAL128_FOR_EACH_PRECISION[precision.min(38) as usize]
    }
    fn min_of(precision: u8) -> i128 {
        MIN_DECIMAL128_FOR_EACH_PRECISION[precision.min(38) as usize]
    }
    fn from_i128(v: i128) -> i128 {
        v
    }
    fn to_i128(self) -> Option<i128> {
        Some(self)
    }
    fn from_digits(text: &str) -> Option<i128> {
        text.parse().ok()
    }
}

impl DecimalInt for i256 {
    const MAX_PRECISION: u8 = 76;
    fn max_of(precision: u8) -> i256 {
        MAX_DECIMAL256_FOR_EACH_PRECISION[precision.min(76) as usize]
    }
    fn min_of(precision: u8) -> i256 {
        MIN_DECIMAL256_FOR_EACH_PRECISION[precision.min(76) as usize]
    }
    fn from_i128(v: i128) -> i256 {
        i256::from_i128(v)
    }
    fn to_i128(self) -> Option<i128> {
        i256::to_i128(self)
    }
    fn from_digits(text: &str) -> Option<i256> {
        i256::from_string(text)
    }
}

/// `10^n`, if it fits.
pub fn pow10<T: DecimalInt>(n: u32) -> Option<T> {
    T::from_i128(10).pow_checked(n).ok()
}

/// Whether `v` has at most `precision` digits.
pub fn fits<T: DecimalInt>(v: T, precision: u8) -> bool {
    precision <= T::MAX_PRECISION && v >= T::min_of(precision) && v <= T::max_of(precision)
}

/// `v` (of scale `from`) at scale `to`: multiplied exactly (`None` on overflow of
/// `T`), or divided rounding half away from zero (PostgreSQL's `numeric` rounding).
pub fn rescale<T: DecimalInt>(v: T, from: i8, to: i8) -> Option<T> {
    if to >= from {
        v.mul_checked(pow10((to - from) as u32)?).ok()
    } else {
        Some(div_round(v, pow10((from - to) as u32)?))
    }
}

/// `v / d` for `d > 0`, rounding half away from zero.
pub fn div_round<T: DecimalInt>(v: T, d: T) -> T {
    let q = v.div_wrapping(d);
    let r = v.mod_wrapping(d);
    // |r| * 2 >= d, computed without overflow as |r| >= d - |r|.
    let r_abs = if r < T::ZERO { r.neg_wrapping() } else { r };
    if r_abs >= d.sub_wrapping(r_abs) {
        if v < T::ZERO {
            q.sub_wrapping(T::ONE)
        } else {
            q.add_wrapping(T::ONE)
        }
    } else {
        q
    }
}

/// `v / 10^n` rounded toward negative infinity (`floor`), toward positive
/// infinity (`ceil`) or toward zero (`trunc`), as an integer of the same scale
/// reduced by `n`.
pub fn div_pow10_directed<T: DecimalInt>(v: T, n: u32, direction: Rounding) -> Option<T> {
    let d: T = pow10(n)?;
    let q = v.div_wrapping(d);
    let r = v.mod_wrapping(d);
    Some(match direction {
        Rounding::HalfAwayFromZero => div_round(v, d),
        Rounding::TowardZero => q,
        Rounding::Floor if r < T::ZERO => q.sub_wrapping(T::ONE),
        Rounding::Ceil if r > T::ZERO => q.add_wrapping(T::ONE),
        Rounding::Floor | Rounding::Ceil => q,
    })
}

/// The type of `round(x, n)` and `trunc(x, n)` (and of `floor`, `ceil`, `round`,
/// `trunc` with `n` = 0) for `x` of type `t = DECIMAL(p, s)`, as DuckDB types them
/// for a column: `n >= s` keeps `t`; `0 <= n < s` gives `DECIMAL(p, n)` (a carry
/// always fits: `p - n > p - s`); `n < 0` gives `DECIMAL(max(p, p - s + 1), 0)`,
/// room for the carry of `round(9999, -2)` = `10000`, at most the width's 38 or 76
/// digits. Not a decimal: `t` itself.
pub fn rounded_type(t: &arrow::datatypes::DataType, n: i64) -> arrow::datatypes::DataType {
    use arrow::datatypes::DataType::{Decimal128, Decimal256};
    let (p, s) = match *t {
        Decimal128(p, s) | Decimal256(p, s) => (p, s),
        _ => return t.clone(),
    };
    let (p, s) = if n >= i64::from(s) {
        return t.clone();
    } else if n >= 0 {
        (p, n as i8)
    } else {
        let cap = if matches!(t, Decimal256(..)) { 76 } else { 38 };
        (p.max(p - s as u8 + 1).min(cap), 0)
    };
    match t {
        Decimal256(..) => Decimal256(p, s),
        _ => Decimal128(p, s),
    }
}

/// `v` (of scale `scale`) rounded in `direction` to `n` decimal places, as an
/// unscaled value of [`rounded_type`]'s scale (`n` below 0: to tens, hundreds, …,
/// at scale 0). `None` when the result does not fit `T` (the caller checks the
/// result's precision).
pub fn round_value<T: DecimalInt>(v: T, scale: i8, n: i64, direction: Rounding) -> Option<T> {
    if n >= i64::from(scale) {
        return Some(v);
    }
    let dropped = u32::try_from(i64::from(scale) - n).ok()?;
    let q = match pow10::<T>(dropped) {
        Some(_) => div_pow10_directed(v, dropped, direction)?,
        // Every value of `T` is below `10^dropped / 2` in magnitude.
        None => match direction {
            Rounding::Floor if v < T::ZERO => T::ONE.neg_wrapping(),
            Rounding::Ceil if v > T::ZERO => T::ONE,
            _ => T::ZERO,
        },
    };
    if n >= 0 || q == T::ZERO {
        Some(q)
    } else {
        q.mul_checked(pow10(u32::try_from(-n).ok()?)?).ok()
    }
}

/// How digits are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// `round`: halves away from zero.
    HalfAwayFromZero,
    /// `trunc`.
    TowardZero,
    /// `floor`.
    Floor,
    /// `ceil`.
    Ceil,
}

/// The exact text of `v / 10^scale`: `1.25`, `-0.05`, `0.00`, `12` (scale 0), with
/// `scale` fraction digits, as DuckDB and PostgreSQL print decimals.
pub fn format<T: DecimalInt>(v: T, scale: i8) -> String {
    let text = v.to_string();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", text.as_str()),
    };
    let scale = scale.max(0) as usize;
    if scale == 0 {
        return text;
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Reads decimal text exactly as a `DECIMAL(precision, scale)`: an optional sign,
/// digits with an optional point, an optional exponent (`1e2`, `1.5E-3`); more
/// fraction digits than `scale` are rounded half away from zero. A value with more
/// than `precision - scale` integral digits is [`LiteralError::OutOfRange`].
pub fn parse<T: DecimalInt>(text: &str, precision: u8, scale: i8) -> Result<T, LiteralError> {
    let (negative, digits, exponent) = split_number(text).ok_or(LiteralError::Invalid)?;
    // value = digits * 10^exponent; the result is digits * 10^(exponent + scale).
    let shift = exponent.saturating_add(scale as i64);
    let digits = digits.trim_start_matches('0');
    let (kept, round_up) = if shift >= 0 {
        if digits.is_empty() {
            (String::new(), false)
        } else if digits.len() as i64 + shift > precision as i64 {
            return Err(LiteralError::OutOfRange);
        } else {
            (format!("{digits}{}", "0".repeat(shift as usize)), false)
        }
    } else {
        let drop = shift.unsigned_abs();
        if drop > digits.len() as u64 {
            (String::new(), false)
        } else {
            let cut = digits.len() - drop as usize;
            (digits[..cut].to_string(), digits.as_bytes()[cut] >= b'5')
        }
    };
    if kept.len() > precision as usize {
        return Err(LiteralError::OutOfRange);
    }
    let mut v = if kept.is_empty() {
        T::ZERO
    } else {
        T::from_digits(&kept).ok_or(LiteralError::OutOfRange)?
    };
    if round_up {
        v = v
            .add_checked(T::ONE)
            .map_err(|_| LiteralError::OutOfRange)?;
    }
    if negative {
        v = v.neg_wrapping();
    }
    if fits(v, precision) {
        Ok(v)
    } else {
        Err(LiteralError::OutOfRange)
    }
}

/// `[sign] digits [. digits] [e|E [sign] digits]` (surrounding spaces allowed) as
/// (negative, all the mantissa's digits, the exponent applying to them).
fn split_number(text: &str) -> Option<(bool, String, i64)> {
    let t = text.trim();
    let (negative, t) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => {
            let e = &t[i + 1..];
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // A huge exponent saturates: the value is out of range or zero anyway.
            let e = e.parse::<i64>().unwrap_or(if e.starts_with('-') {
                i64::MIN / 2
            } else {
                i64::MAX / 2
            });
            (&t[..i], e)
        }
        None => (t, 0),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, f),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    Some((
        negative,
        format!("{int}{frac}"),
        exponent.saturating_sub(frac.len() as i64),
    ))
}

/// The precision and scale of a literal written `text` (digits with a point, no
/// exponent): every digit written counts, as in DuckDB (`0.05` is `DECIMAL(3,2)`,
/// `.5` `DECIMAL(1,1)`, `100.0` `DECIMAL(4,1)`). `None` for other text.
pub fn literal_type(text: &str) -> Option<(usize, usize)> {
    let (int, frac) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(int) || digits(frac)) || text.contains(['e', 'E', '-', '+']) {
        return None;
    }
    Some((int.len() + frac.len(), frac.len()))
}

/// The double nearest to `v / 10^scale`, exactly as reading the decimal text would
/// give (so `0.05` meeting a DOUBLE is the same double as the literal `0.05e0`).
pub fn to_f64<T: DecimalInt>(v: T, scale: i8) -> f64 {
    // Both operands exact doubles: the quotient is correctly rounded.
    if let Some(small) = v.to_i128().filter(|v| v.unsigned_abs() < 1 << 53) {
        if scale <= 22 {
            return small as f64 / exact_pow10_f64(scale);
        }
    }
    format(v, scale).parse().unwrap_or(f64::NAN)
}

/// `10^scale` as a double, exactly (`scale <= 22`: 5^22 < 2^53).
fn exact_pow10_f64(scale: i8) -> f64 {
    pow10::<i128>(scale as u32).map_or(f64::INFINITY, |v| v as f64)
}

/// The double a `CAST` of a `DECIMAL(precision, scale)` value gives: for up to 18
/// digits the unscaled value as a double divided by `10^scale` (what the JIT computes
/// on its 64-bit decimals: exact, hence correctly rounded, while the unscaled value
/// is below 2^53, i.e. always for 15 digits or fewer; within one unit in the last
/// place above), else [`to_f64`].
pub fn to_f64_cast<T: DecimalInt>(v: T, precision: u8, scale: i8) -> f64 {
    match v.to_i128().and_then(|v| i64::try_from(v).ok()) {
        Some(small) if precision <= 18 && scale <= 22 => small as f64 / exact_pow10_f64(scale),
        _ => to_f64(v, scale),
    }
}

/// `f` as a `DECIMAL(precision, scale)`: its shortest round-trip digits (what it
/// prints as) rounded half away from zero to `scale` digits; NaN and infinities are
/// invalid, values beyond the precision out of range.
pub fn from_f64<T: DecimalInt>(f: f64, precision: u8, scale: i8) -> Result<T, LiteralError> {
    if !f.is_finite() {
        return Err(LiteralError::Invalid);
    }
    parse(&format!("{f:e}"), precision, scale)
}

/// `v` at `from` scale as an integer, rounding half away from zero.
pub fn to_integer<T: DecimalInt>(v: T, scale: i8) -> Option<i128> {
    rescale(v, scale, 0)?.to_i128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_to_places_follows_duckdb() {
        use arrow::datatypes::DataType::{Decimal128 as D, Decimal256 as W};
        use Rounding::*;
        // (value, scale, n, direction, expected unscaled result), checked with DuckDB.
        for (v, s, n, dir, want) in [
            (2675i128, 3, 2, HalfAwayFromZero, 268), // round(2.675, 2) = 2.68
            (-2675, 3, 2, HalfAwayFromZero, -268),
            (12345, 4, 2, TowardZero, 123),
            (-199, 2, 0, TowardZero, -1),
            (-101, 2, 0, Floor, -2),
            (-101, 2, 0, Ceil, -1),
            (101, 2, 0, Ceil, 2),
            (95, 1, 0, Ceil, 10),
            (95, 1, 0, HalfAwayFromZero, 10),
            (12345, 1, -2, HalfAwayFromZero, 1200), // round(1234.5, -2)
            (-12345, 1, -2, HalfAwayFromZero, -1200),
            (9999, 0, -2, HalfAwayFromZero, 10000),
            (12345, 1, -2, TowardZero, 1200),
            (-155, 2, -1, TowardZero, 0),
            (155, 2, -100, HalfAwayFromZero, 0),
            (125, 2, 5, HalfAwayFromZero, 125), // n beyond the scale: unchanged
            (i128::MAX, 0, -50, HalfAwayFromZero, 0),
        ] {
            assert_eq!(round_value(v, s, n, dir), Some(want), "{v} {s} {n} {dir:?}");
        }
        // floor(-0.5) at a scale beyond i128's digits is -1, not 0.
        assert_eq!(round_value(-5i128, 40, 0, Floor), Some(-1));
        assert_eq!(round_value(5i128, 40, 0, Ceil), Some(1));
        // A carry beyond the type is None.
        assert_eq!(round_value(i128::MAX, 0, -1, HalfAwayFromZero), None);

        for (t, n, want) in [
            (D(10, 4), 2, D(10, 2)),
            (D(10, 2), 5, D(10, 2)),
            (D(10, 4), 0, D(10, 0)),
            (D(10, 1), -2, D(10, 0)),
            (D(4, 0), -2, D(5, 0)),
            (D(3, 2), -1, D(3, 0)),
            (D(38, 0), -1, D(38, 0)),
            (W(50, 10), -1, W(50, 0)),
            (W(76, 0), -1, W(76, 0)),
        ] {
            assert_eq!(rounded_type(&t, n), want, "{t} {n}");
        }
    }

    #[test]
    fn text_round_trips_and_rounds_half_away_from_zero() {
        assert_eq!(format(125i128, 2), "1.25");
        assert_eq!(format(-5i128, 2), "-0.05");
        assert_eq!(format(0i128, 2), "0.00");
        assert_eq!(format(12i128, 0), "12");
        assert_eq!(parse::<i128>("1.25", 3, 2), Ok(125));
        assert_eq!(parse::<i128>("1.255", 10, 2), Ok(126));
        assert_eq!(parse::<i128>("-1.255", 10, 2), Ok(-126));
        assert_eq!(parse::<i128>("1.254", 10, 2), Ok(125));
        assert_eq!(parse::<i128>("1e2", 10, 2), Ok(10000));
        assert_eq!(parse::<i128>(" +.5 ", 10, 0), Ok(1));
        assert_eq!(parse::<i128>("1e-400", 10, 2), Ok(0));
        assert_eq!(parse::<i128>("1000", 3, 0), Err(LiteralError::OutOfRange));
        assert_eq!(
            parse::<i128>("999.995", 5, 2),
            Err(LiteralError::OutOfRange)
        );
        assert_eq!(parse::<i128>("1e400", 38, 0), Err(LiteralError::OutOfRange));
        for bad in ["", ".", "1.2.3", "abc", "1e", "--1", "1 2"] {
            assert_eq!(
                parse::<i128>(bad, 10, 2),
                Err(LiteralError::Invalid),
                "{bad}"
            );
        }
        let big = "12345678901234567890123456789012345678";
        assert_eq!(
            parse::<i128>(big, 38, 0).map(|v| v.to_string()),
            Ok(big.into())
        );
        let wide = format!("{big}{big}");
        assert_eq!(
            parse::<i256>(&wide, 76, 0).map(|v| v.to_string()),
            Ok(wide.clone())
        );
    }

    #[test]
    fn rescaling_and_floats() {
        assert_eq!(rescale(125i128, 2, 4), Some(12500));
        assert_eq!(rescale(125i128, 2, 1), Some(13));
        assert_eq!(rescale(-125i128, 2, 1), Some(-13));
        assert_eq!(rescale(-124i128, 2, 1), Some(-12));
        assert_eq!(rescale(i128::MAX, 0, 1), None);
        assert_eq!(to_f64(5i128, 2), 0.05);
        assert_eq!(to_f64(1i128, 1) + to_f64(2i128, 1), 0.1 + 0.2);
        assert_eq!(from_f64::<i128>(0.1, 10, 2), Ok(10));
        assert_eq!(from_f64::<i128>(2.5, 10, 0), Ok(3));
        assert_eq!(
            from_f64::<i128>(f64::NAN, 10, 0),
            Err(LiteralError::Invalid)
        );
        assert_eq!(literal_type("0.05"), Some((3, 2)));
        assert_eq!(literal_type(".5"), Some((1, 1)));
        assert_eq!(literal_type("000.10"), Some((5, 2)));
        assert_eq!(literal_type("1e3"), None);
        assert_eq!(div_pow10_directed(-125i128, 2, Rounding::Floor), Some(-2));
        assert_eq!(div_pow10_directed(125i128, 2, Rounding::Ceil), Some(2));
        assert_eq!(
            div_pow10_directed(-125i128, 2, Rounding::TowardZero),
            Some(-1)
        );
    }
}
