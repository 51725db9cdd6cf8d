//! Mathematical functions. Domain errors (`sqrt(-1)`, `ln(0)`) are errors naming
//! the row, as in PostgreSQL, raised only for rows whose value is used; so are
//! results out of the range of DOUBLE (`exp(1000)`, `power(10, 400)`), with
//! PostgreSQL's messages.
//!
//! Functions that LLVM computes over float vectors (`floor`, `ln`, …) are lowered
//! to its intrinsics, with the domain check on their argument; the others are row
//! closures, run by both back ends.

use std::f64::consts::PI;
use std::fmt::Write as _;

use arrow::datatypes::{Float64Type, Int16Type, Int32Type, Int64Type};
use arrow_schema::DataType;
use broadhead_codegen::CmpOp;

use super::row::{map1, map2, variadic, Bool, Outcome, RowImpl};
use super::Registry;

const F: DataType = DataType::Float64;
const I64: DataType = DataType::Int64;

const OVERFLOW: &str = "value out of range: overflow";
const UNDERFLOW: &str = "value out of range: underflow";
const OUT_OF_RANGE: &str = "input is out of range";
const LOG_OF_ZERO: &str = "cannot take logarithm of zero";
const LOG_OF_NEGATIVE: &str = "cannot take logarithm of a negative number";

/// PostgreSQL's `check_float8_val`: a result that became infinite (from finite
/// arguments) overflowed, one that became zero (from non-zero arguments)
/// underflowed.
fn checked(result: f64, inf_ok: bool, zero_ok: bool) -> Outcome<f64> {
    if result.is_infinite() && !inf_ok {
        Err(OVERFLOW.into())
    } else if result == 0.0 && !zero_ok {
        Err(UNDERFLOW.into())
    } else {
        Ok(Some(result))
    }
}

/// A function of one DOUBLE, infallible.
fn unary(f: fn(f64) -> f64) -> RowImpl {
    map1::<Float64Type, Float64Type, _>(move |x: f64| Ok(Some(f(x))))
}

/// A function of one DOUBLE that can fail.
fn unary_checked(f: fn(f64) -> Outcome<f64>) -> RowImpl {
    map1::<Float64Type, Float64Type, _>(f).fallible()
}

/// The natural logarithm as PostgreSQL's `ln`: zero and negative numbers are errors.
fn ln_checked(x: f64) -> Result<f64, String> {
    if x == 0.0 {
        Err(LOG_OF_ZERO.into())
    } else if x < 0.0 {
        Err(LOG_OF_NEGATIVE.into())
    } else {
        Ok(x.ln())
    }
}

/// A logarithm computed by an LLVM intrinsic: lanes with `x <= 0` are errors,
/// which the interpreter's closure describes as [`ln_checked`] does.
fn log_sig(
    r: &mut Registry,
    name: &'static str,
    doc: &'static str,
    intrinsic: &'static str,
    f: fn(f64) -> f64,
) {
    r.function(name).intrinsic_sig(
        &[F],
        doc,
        map1::<Float64Type, Float64Type, _>(move |x: f64| ln_checked(x).map(|_| Some(f(x))))
            .fallible(),
        intrinsic,
        Some((CmpOp::Le, 0.0)),
    );
}

/// `log(b, x)`: the logarithm of `x` to base `b` (PostgreSQL's numeric `log`,
/// computed in DOUBLE). Exact powers of the base give exact integers
/// (`log(10, 1000) = 3`, not 2.9999999999999996).
fn log_base(b: f64, x: f64) -> Outcome<f64> {
    if b.is_nan() || x.is_nan() {
        return Ok(Some(f64::NAN));
    }
    let lb = ln_checked(b)?;
    let lx = ln_checked(x)?;
    if lb == 0.0 {
        return Err("division by zero".into());
    }
    let r = lx / lb;
    let k = r.round();
    if r.is_finite() && (r - k).abs() < 1e-9 && b.powf(k) == x {
        return Ok(Some(k));
    }
    Ok(Some(r))
}

/// `power(x, y)` as PostgreSQL's `dpow`: NaN and infinity cases per POSIX, errors
/// for 0 to a negative power, a negative number to a non-integer power, and
/// results out of range.
fn power(x: f64, y: f64) -> Outcome<f64> {
    if x.is_nan() {
        return Ok(Some(if y == 0.0 { 1.0 } else { f64::NAN }));
    }
    if y.is_nan() {
        return Ok(Some(if x == 1.0 { 1.0 } else { f64::NAN }));
    }
    if x == 0.0 && y < 0.0 {
        return Err("zero raised to a negative power is undefined".into());
    }
    if x < 0.0 && y.floor() != y {
        return Err(
            "a negative number raised to a non-integer power yields a complex result".into(),
        );
    }
    let result = x.powf(y);
    if x.is_infinite() || y.is_infinite() {
        // powf follows POSIX here, as PostgreSQL does.
        return Ok(Some(result));
    }
    checked(result, false, x == 0.0)
}

/// `exp(x)` as PostgreSQL: infinities map to infinity and zero, finite arguments
/// whose result is out of range are errors.
fn exp(x: f64) -> Outcome<f64> {
    if x.is_nan() || x == f64::INFINITY {
        Ok(Some(x))
    } else if x == f64::NEG_INFINITY {
        Ok(Some(0.0))
    } else {
        checked(x.exp(), false, false)
    }
}

/// A trigonometric function of an angle: NaN gives NaN, an infinite angle is an
/// error (as PostgreSQL's `sin`, `cos`, `tan`, `cot`).
fn trig(f: fn(f64) -> f64) -> RowImpl {
    map1::<Float64Type, Float64Type, _>(move |x: f64| {
        if x.is_infinite() {
            Err(OUT_OF_RANGE.into())
        } else {
            Ok(Some(f(x)))
        }
    })
    .fallible()
}

/// An inverse trigonometric function defined on [-1, 1]; other arguments (NaN
/// aside) are errors.
fn arc(f: fn(f64) -> f64) -> RowImpl {
    map1::<Float64Type, Float64Type, _>(move |x: f64| {
        if x.abs() > 1.0 {
            Err(OUT_OF_RANGE.into())
        } else {
            Ok(Some(f(x)))
        }
    })
    .fallible()
}

/// PostgreSQL's `RADIANS_PER_DEGREE` (π / 180, as a DOUBLE).
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

/// A fixed-size text buffer, so that rounding formats and parses numbers without
/// allocating.
struct Buf {
    bytes: [u8; 48],
    len: usize,
}

impl Buf {
    fn new() -> Buf {
        Buf {
            bytes: [0; 48],
            len: 0,
        }
    }

    fn text(&self) -> &str {
        // Only ASCII and `str`s are written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `x` rounded (half away from zero) or truncated (toward zero) to `n` decimal
/// places (`n < 0`: to a multiple of 10^-n).
///
/// The digits rounded are those of the shortest decimal that reads back as `x`
/// (the digits it prints as), as PostgreSQL does when it rounds a float converted
/// to `numeric`: `round(1.005, 2)` is 1.01, although the DOUBLE nearest to 1.005 is
/// slightly below it. Infinities and NaN are returned unchanged; a result too large
/// for a DOUBLE (`round(1.7e308, -308)`) is an overflow error.
fn round_to(x: f64, n: i64, truncate: bool) -> Outcome<f64> {
    if !x.is_finite() || x == 0.0 || n > 400 {
        return Ok(Some(x));
    }
    let zero = Ok(Some(0.0f64.copysign(x)));
    if n < -400 {
        return zero;
    }
    // `d.ddddde±E`: the digits and the decimal exponent of the first one.
    let mut sci = Buf::new();
    if write!(sci, "{:e}", x.abs()).is_err() {
        return Ok(Some(x));
    }
    let text = sci.text();
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let mut digits = [0u8; 24];
    let mut count = 0;
    for b in mantissa.bytes().filter(u8::is_ascii_digit) {
        if count < digits.len() {
            digits[count] = b;
            count += 1;
        }
    }
    // How many leading digits stay: those down to the 10^-n place.
    let keep = exponent + 1 + n;
    if keep >= count as i64 {
        return Ok(Some(x));
    }
    let up = !truncate && keep >= 0 && digits[keep as usize] >= b'5';
    let keep = keep.max(0) as usize;
    // The kept digits, as an integer, plus one when rounding up.
    let mut kept = [b'0'; 25];
    kept[1..=keep].copy_from_slice(&digits[..keep]);
    if up {
        let mut i = keep;
        loop {
            if kept[i] == b'9' {
                kept[i] = b'0';
                i -= 1;
            } else {
                kept[i] += 1;
                break;
            }
        }
    } else if kept[1..=keep].iter().all(|&d| d == b'0') {
        return zero;
    }
    let mut out = Buf::new();
    let sign = if x < 0.0 { "-" } else { "" };
    let kept = std::str::from_utf8(&kept[..=keep]).unwrap_or("0");
    if write!(out, "{sign}{kept}e{}", -n).is_err() {
        return Ok(Some(x));
    }
    let result: f64 = out.text().parse().unwrap_or(x);
    checked(result, false, true)
}

/// PostgreSQL's `gcd` over integers widened to i128, never negative; the caller
/// raises the error when it does not fit the type (`gcd(MIN, 0)` is 2^31 for INTEGER).
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// PostgreSQL's `lcm`: 0 when either is 0, otherwise never negative.
fn lcm(a: i128, b: i128) -> i128 {
    if a == 0 || b == 0 {
        0
    } else {
        a.abs() / gcd(a, b) * b.abs()
    }
}

/// Registers the integer functions (`gcd`, `lcm`, the bitwise operators, `sign`)
/// for one signed integer type.
macro_rules! integer_functions {
    ($r:ident, $t:ty, $native:ty, $dt:expr, $range:expr) => {{
        let t: DataType = $dt;
        let fits = |v: i128| -> Outcome<$native> {
            <$native>::try_from(v)
                .map(Some)
                .map_err(|_| $range.to_string())
        };
        if t != DataType::Int16 {
            $r.function("gcd").sig(
                &[t.clone(), t.clone()],
                t.clone(),
                "the greatest common divisor (never negative); one that does not fit the type is an error",
                map2::<$t, $t, $t, _>(move |a: $native, b: $native| {
                    fits(gcd(a as i128, b as i128))
                })
                .fallible(),
            );
            $r.function("lcm").sig(
                &[t.clone(), t.clone()],
                t.clone(),
                "the least common multiple (never negative, 0 if either is 0); overflow is an error",
                map2::<$t, $t, $t, _>(move |a: $native, b: $native| {
                    fits(lcm(a as i128, b as i128))
                })
                .fallible(),
            );
            $r.function("sign").sig(
                std::slice::from_ref(&t),
                t.clone(),
                "-1, 0 or 1",
                map1::<$t, $t, _>(|a: $native| Ok(Some(a.signum()))),
            );
        }
        let two = [t.clone(), t.clone()];
        $r.function("bitwise_and").sig(
            &two,
            t.clone(),
            "a & b",
            map2::<$t, $t, $t, _>(|a: $native, b: $native| Ok(Some(a & b))),
        );
        $r.function("bitwise_or").sig(
            &two,
            t.clone(),
            "a | b",
            map2::<$t, $t, $t, _>(|a: $native, b: $native| Ok(Some(a | b))),
        );
        $r.function("bitwise_xor").sig(
            &two,
            t.clone(),
            "a # b (exclusive or)",
            map2::<$t, $t, $t, _>(|a: $native, b: $native| Ok(Some(a ^ b))),
        );
        $r.function("bitwise_not").sig(
            std::slice::from_ref(&t),
            t.clone(),
            "~a (every bit flipped)",
            map1::<$t, $t, _>(|a: $native| Ok(Some(!a))),
        );
        // The count is taken modulo 32 for SMALLINT and INTEGER (computed in 32 bits,
        // as C does), modulo 64 for BIGINT: PostgreSQL's results on x86-64.
        $r.function("shift_left").sig(
            &two,
            t.clone(),
            "a << n: bits shifted left, the count taken modulo the width (32 for SMALLINT and INTEGER, 64 for BIGINT)",
            map2::<$t, $t, $t, _>(|a: $native, n: $native| {
                Ok(Some(if <$native>::BITS < 32 {
                    (a as i32).wrapping_shl(n as u32) as $native
                } else {
                    a.wrapping_shl(n as u32)
                }))
            }),
        );
        $r.function("shift_right").sig(
            &two,
            t.clone(),
            "a >> n: bits shifted right, with the sign (arithmetic), the count taken modulo the width",
            map2::<$t, $t, $t, _>(|a: $native, n: $native| {
                Ok(Some(if <$native>::BITS < 32 {
                    (a as i32).wrapping_shr(n as u32) as $native
                } else {
                    a.wrapping_shr(n as u32)
                }))
            }),
        );
    }};
}

pub(super) fn register(r: &mut Registry) {
    r.function("sqrt")
        .example("sqrt(2.25)", "1.5")
        .intrinsic_sig(
            &[F],
            "the square root; negative x is an error",
            unary_checked(|x: f64| {
                if x < 0.0 {
                    Err("cannot take square root of a negative number".into())
                } else {
                    Ok(Some(x.sqrt()))
                }
            }),
            "llvm.sqrt",
            Some((CmpOp::Lt, 0.0)),
        );
    r.function("cbrt").example("cbrt(-27.0)", "-3.0").sig(
        &[F],
        F,
        "the cube root",
        unary(f64::cbrt),
    );
    r.function("floor")
        .example("floor(-1.5)", "-2")
        .example("floor(-1.5e0)", "-2.0")
        .intrinsic_sig(
            &[F],
            "the largest integral value not above x",
            unary(f64::floor),
            "llvm.floor",
            None,
        );
    r.function("ceil")
        .alias("ceiling")
        .example("ceil(-1.5)", "-1")
        .example("ceil(-1.5e0)", "-1.0")
        .intrinsic_sig(
            &[F],
            "the smallest integral value not below x",
            unary(f64::ceil),
            "llvm.ceil",
            None,
        );
    r.function("round")
        .example("round(2.5)", "3")
        .example("round(2.675, 2)", "2.68")
        .example("round(2.5e0)", "3.0")
        .example("round(1234.5678, -2)", "1200")
        .intrinsic_sig(
            &[F],
            "x rounded to the nearest integer, halves away from zero",
            unary(f64::round),
            "llvm.round",
            None,
        )
        .sig(
            &[F, I64],
            F,
            "x rounded to n decimal places (n < 0: to tens, hundreds, …), halves away from zero, on the digits x prints as",
            map2::<Float64Type, Int64Type, Float64Type, _>(|x: f64, n: i64| round_to(x, n, false))
                .fallible(),
        );
    r.function("trunc")
        .example("trunc(-1.7)", "-1")
        .example("trunc(-1.7e0)", "-1.0")
        .example("trunc(1.789, 2)", "1.78")
        .intrinsic_sig(
            &[F],
            "x with its fractional part removed (rounded toward zero)",
            unary(f64::trunc),
            "llvm.trunc",
            None,
        )
        .sig(
            &[F, I64],
            F,
            "x truncated toward zero to n decimal places (n < 0: to tens, hundreds, …), on the digits x prints as",
            map2::<Float64Type, Int64Type, Float64Type, _>(|x: f64, n: i64| round_to(x, n, true))
                .fallible(),
        );
    decimal_rounding(r);
    r.function("power")
        .alias("pow")
        .example("power(2, 10)", "1024.0")
        .sig(
            &[F, F],
            F,
            "x raised to the power y; 0 to a negative power, a negative x to a non-integer power and results out of range are errors",
            map2::<Float64Type, Float64Type, Float64Type, _>(power).fallible(),
        );
    r.function("exp")
        .example("exp(1)", "2.718281828459045")
        .sig(
            &[F],
            F,
            "e raised to the power x; a result out of range (x above 709.78, below -745.13) is an error",
            unary_checked(exp),
        );
    log_sig(
        r,
        "ln",
        "the natural logarithm; zero and negative x are errors",
        "llvm.log",
        f64::ln,
    );
    r.function("ln").example("ln(1)", "0.0");
    log_sig(
        r,
        "log10",
        "the base-10 logarithm; zero and negative x are errors",
        "llvm.log10",
        f64::log10,
    );
    r.function("log10").example("log10(1000)", "3.0");
    log_sig(
        r,
        "log2",
        "the base-2 logarithm; zero and negative x are errors",
        "llvm.log2",
        f64::log2,
    );
    r.function("log2").example("log2(8)", "3.0");
    log_sig(
        r,
        "log",
        "the base-10 logarithm (as PostgreSQL's log(x)); zero and negative x are errors",
        "llvm.log10",
        f64::log10,
    );
    r.function("log")
        .example("log(100)", "2.0")
        .example("log(2, 1024)", "10.0")
        .sig(
            &[F, F],
            F,
            "the logarithm of x to base b; zero or negative b or x and b = 1 are errors",
            map2::<Float64Type, Float64Type, Float64Type, _>(log_base).fallible(),
        );
    r.function("sin").example("sin(0)", "0.0").sig(
        &[F],
        F,
        "the sine of x radians; infinite x is an error",
        trig(f64::sin),
    );
    r.function("cos").example("cos(0)", "1.0").sig(
        &[F],
        F,
        "the cosine of x radians; infinite x is an error",
        trig(f64::cos),
    );
    r.function("tan").example("tan(0)", "0.0").sig(
        &[F],
        F,
        "the tangent of x radians; infinite x is an error",
        trig(f64::tan),
    );
    r.function("cot").example("cot(0)", "inf").sig(
        &[F],
        F,
        "the cotangent of x radians (1 / tan x; cot(0) is infinity); infinite x is an error",
        trig(|x| 1.0 / x.tan()),
    );
    r.function("asin")
        .example("asin(1)", "1.5707963267948966")
        .sig(
            &[F],
            F,
            "the arc sine, in radians; x outside [-1, 1] is an error",
            arc(f64::asin),
        );
    r.function("acos").example("acos(1)", "0.0").sig(
        &[F],
        F,
        "the arc cosine, in radians; x outside [-1, 1] is an error",
        arc(f64::acos),
    );
    r.function("atan")
        .example("atan(1)", "0.7853981633974483")
        .sig(&[F], F, "the arc tangent, in radians", unary(f64::atan));
    r.function("atan2")
        .example("atan2(1, -1)", "2.356194490192345")
        .sig(
            &[F, F],
            F,
            "the arc tangent of y / x, in radians, in the quadrant of (x, y)",
            map2::<Float64Type, Float64Type, Float64Type, _>(|y: f64, x: f64| Ok(Some(y.atan2(x)))),
        );
    r.function("degrees").example("degrees(pi())", "180.0").sig(
        &[F],
        F,
        "x radians in degrees; a result out of range is an error",
        unary_checked(|x| checked(x / RADIANS_PER_DEGREE, x.is_infinite(), x == 0.0)),
    );
    r.function("radians")
        .example("radians(180)", "3.141592653589793")
        .sig(
            &[F],
            F,
            "x degrees in radians; a result out of range is an error",
            unary_checked(|x| checked(x * RADIANS_PER_DEGREE, x.is_infinite(), x == 0.0)),
        );
    r.function("pi").example("pi()", "3.141592653589793").sig(
        &[],
        F,
        "π",
        variadic::<Float64Type, Float64Type, _>(true, |_| Ok(Some(PI))),
    );
    r.function("isnan").example("isnan('NaN')", "true").sig(
        &[F],
        DataType::Boolean,
        "whether x is NaN",
        map1::<Float64Type, Bool, _>(|x: f64| Ok(Some(x.is_nan()))),
    );
    r.function("isinf")
        .example("isinf('-Infinity')", "true")
        .sig(
            &[F],
            DataType::Boolean,
            "whether x is infinite (either sign)",
            map1::<Float64Type, Bool, _>(|x: f64| Ok(Some(x.is_infinite()))),
        );
    r.function("isfinite")
        .example("isfinite(1e308)", "true")
        .sig(
            &[F],
            DataType::Boolean,
            "whether x is neither infinite nor NaN",
            map1::<Float64Type, Bool, _>(|x: f64| Ok(Some(x.is_finite()))),
        );
    r.function("signbit")
        .example("signbit(-1.5)", "true")
        .example("signbit(0.0)", "false")
        .sig(
            &[F],
            DataType::Boolean,
            "whether the sign bit of x is set (-0.0 and negative numbers; DuckDB's)",
            map1::<Float64Type, Bool, _>(|x: f64| Ok(Some(x.is_sign_negative()))),
        );
    r.function("modulo")
        .alias("mod")
        .example("mod(-7, 3)", "-1");
    integer_functions!(r, Int16Type, i16, DataType::Int16, "smallint out of range");
    integer_functions!(r, Int32Type, i32, DataType::Int32, "integer out of range");
    integer_functions!(r, Int64Type, i64, DataType::Int64, "bigint out of range");
    r.function("sign").example("sign(-2.5)", "-1.0").sig(
        &[F],
        F,
        "-1, 0 or 1 (0 for NaN, as PostgreSQL)",
        unary(|x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }),
    );
    r.function("gcd").example("gcd(12, -18)", "6");
    r.function("lcm").example("lcm(4, 6)", "12");
    r.function("bitwise_and")
        .example("bitwise_and(12, 10)", "8");
    r.function("bitwise_or").example("bitwise_or(12, 10)", "14");
    r.function("bitwise_xor")
        .example("bitwise_xor(12, 10)", "6");
    r.function("bitwise_not").example("bitwise_not(0)", "-1");
    r.function("shift_left").example("shift_left(1, 4)", "16");
    r.function("shift_right")
        .example("shift_right(-16, 2)", "-4");
    r.function("sign").alias("signum");
    r.function("bitwise_xor").alias("xor");
    hyperbolic(r);
    more_numbers(r);
}

/// `sinh` … `atanh`: outside an inverse's domain is an error, as in PostgreSQL
/// (DuckDB returns NaN); `atanh(±1)` is ±infinity.
fn hyperbolic(r: &mut Registry) {
    r.function("sinh").example("sinh(0)", "0.0").sig(
        &[F],
        F,
        "the hyperbolic sine",
        unary(f64::sinh),
    );
    r.function("cosh").example("cosh(0)", "1.0").sig(
        &[F],
        F,
        "the hyperbolic cosine",
        unary(f64::cosh),
    );
    r.function("tanh").example("tanh(0)", "0.0").sig(
        &[F],
        F,
        "the hyperbolic tangent",
        unary(f64::tanh),
    );
    r.function("asinh").example("asinh(0)", "0.0").sig(
        &[F],
        F,
        "the inverse hyperbolic sine",
        unary(f64::asinh),
    );
    r.function("acosh").example("acosh(1)", "0.0").sig(
        &[F],
        F,
        "the inverse hyperbolic cosine; x below 1 is an error",
        unary_checked(|x| match x < 1.0 {
            true => Err("input is out of range".into()),
            false => Ok(Some(x.acosh())),
        }),
    );
    r.function("atanh")
        .example("atanh(0.5)", "0.5493061443340548")
        .sig(
            &[F],
            F,
            "the inverse hyperbolic tangent; x beyond -1 … 1 is an error, ±1 gives ±infinity",
            unary_checked(|x| match x.abs() > 1.0 {
                true => Err("input is out of range".into()),
                false => Ok(Some(x.atanh())),
            }),
        );
}

/// DuckDB's `even`, `factorial`, `bit_count`, `fmod` and `fdiv`, and DataFusion's
/// `nanvl`.
fn more_numbers(r: &mut Registry) {
    r.function("even")
        .example("even(2.5)", "4.0")
        .example("even(-1)", "-2.0")
        .sig(
            &[F],
            F,
            "x rounded away from zero to the next even integer",
            unary(|x| {
                let whole = if x >= 0.0 { x.ceil() } else { x.floor() };
                if whole % 2.0 != 0.0 {
                    whole + whole.signum()
                } else {
                    whole
                }
            }),
        );
    r.function("factorial").example("factorial(5)", "120").sig(
        &[I64],
        I64,
        "n! (0! = 1); a negative n, or n above 20 (the result would not fit a BIGINT), is an error",
        map1::<Int64Type, Int64Type, _>(|n: i64| {
            if n < 0 {
                return Err("factorial of a negative number is undefined".into());
            }
            (1..=n)
                .try_fold(1i64, |acc, k| acc.checked_mul(k))
                .map(Some)
                .ok_or_else(|| "bigint out of range".to_string())
        })
        .fallible(),
    );
    macro_rules! bit_counts {
        ($($ty:ty => $t:expr),*) => {$(
            r.function("bit_count").sig(
                &[$t],
                DataType::Int8,
                "the number of bits set in x's two's complement",
                map1::<$ty, arrow::datatypes::Int8Type, _>(|x| Ok(Some(x.count_ones() as i8))),
            );
        )*};
    }
    use arrow::datatypes as t;
    bit_counts!(
        t::Int8Type => DataType::Int8, t::Int16Type => DataType::Int16,
        t::Int32Type => DataType::Int32, t::Int64Type => DataType::Int64,
        t::UInt8Type => DataType::UInt8, t::UInt16Type => DataType::UInt16,
        t::UInt32Type => DataType::UInt32, t::UInt64Type => DataType::UInt64
    );
    r.function("bit_count")
        .example("bit_count(7)", "3")
        .example("bit_count(CAST(-1 AS INTEGER))", "32");
    let divisor = |y: f64| match y == 0.0 {
        true => Err("division by zero".to_string()),
        false => Ok(()),
    };
    r.function("fmod").example("fmod(-7.5, 2)", "0.5").sig(
        &[F, F],
        F,
        "x - y * floor(x / y), as DuckDB's fmod (the sign of y); y = 0 is an error",
        map2::<Float64Type, Float64Type, Float64Type, _>(move |x: f64, y: f64| {
            divisor(y)?;
            Ok(Some(x - y * (x / y).floor()))
        })
        .fallible(),
    );
    r.function("fdiv").example("fdiv(-7, 2)", "-4.0").sig(
        &[F, F],
        F,
        "floor(x / y); y = 0 is an error",
        map2::<Float64Type, Float64Type, Float64Type, _>(move |x: f64, y: f64| {
            divisor(y)?;
            Ok(Some((x / y).floor()))
        })
        .fallible(),
    );
    r.function("nanvl")
        .example("nanvl(CAST('NaN' AS DOUBLE), 1.5)", "1.5")
        .example("nanvl(2.0, 1.5)", "2.0")
        .sig(
            &[F, F],
            F,
            "x, or y where x is NaN (DataFusion's)",
            map2::<Float64Type, Float64Type, Float64Type, _>(|x: f64, y: f64| {
                Ok(Some(if x.is_nan() { y } else { x }))
            }),
        );
}

/// `round`, `trunc`, `floor` and `ceil` of decimals, exact, in a decimal of the
/// scale asked for (the binder computes the type: [`crate::decimal::rounded_type`]).
fn decimal_rounding(r: &mut Registry) {
    use super::{FuncId::DecimalRound, NullBehavior::NullIfAnyNull};
    use crate::decimal::Rounding::*;
    for t in super::operators::decimal_params() {
        let one = vec![t.clone()];
        let with_places = vec![t.clone(), DataType::Int64];
        r.builtin(
            "round",
            DecimalRound(HalfAwayFromZero),
            one.clone(),
            t.clone(),
            NullIfAnyNull,
            false,
            "x rounded to an integer, halves away from zero: DECIMAL(p, s) gives DECIMAL(p, 0)",
        );
        r.builtin("round", DecimalRound(HalfAwayFromZero), with_places.clone(), t.clone(), NullIfAnyNull, true,
            "x rounded to n decimal places (a constant; n < 0: to tens, hundreds, …), halves away from zero: DECIMAL(p, s) gives DECIMAL(p, n) when 0 <= n < s, DECIMAL(max(p, p - s + 1), 0) when n < 0");
        r.builtin(
            "trunc",
            DecimalRound(TowardZero),
            one.clone(),
            t.clone(),
            NullIfAnyNull,
            false,
            "x truncated toward zero: DECIMAL(p, s) gives DECIMAL(p, 0)",
        );
        r.builtin("trunc", DecimalRound(TowardZero), with_places, t.clone(), NullIfAnyNull, true,
            "x truncated toward zero to n decimal places (a constant; n < 0: to tens, hundreds, …): DECIMAL(p, s) gives DECIMAL(p, n) when 0 <= n < s, DECIMAL(max(p, p - s + 1), 0) when n < 0");
        r.builtin(
            "floor",
            DecimalRound(Floor),
            one.clone(),
            t.clone(),
            NullIfAnyNull,
            false,
            "the largest integer not above x: DECIMAL(p, s) gives DECIMAL(p, 0)",
        );
        r.builtin(
            "ceil",
            DecimalRound(Ceil),
            one,
            t.clone(),
            NullIfAnyNull,
            false,
            "the smallest integer not below x: DECIMAL(p, s) gives DECIMAL(p, 0)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_works_on_the_printed_digits() {
        let r = |x, n| round_to(x, n, false).unwrap().unwrap();
        let t = |x, n| round_to(x, n, true).unwrap().unwrap();
        assert_eq!(r(1.005, 2), 1.01);
        assert_eq!(r(2.5, 0), 3.0);
        assert_eq!(r(-2.5, 0), -3.0);
        assert_eq!(r(0.45, 1), 0.5);
        assert_eq!(r(1234.5678, -2), 1200.0);
        assert_eq!(r(-50.0, -2), -100.0);
        assert_eq!(r(49.0, -2), 0.0);
        assert!(r(-49.0, -2).is_sign_negative());
        assert_eq!(r(999.96, 1), 1000.0);
        assert_eq!(r(9.5, 0), 10.0);
        assert_eq!(r(0.0005, 3), 0.001);
        assert_eq!(r(0.0004, 3), 0.0);
        assert_eq!(r(5.0, -1), 10.0);
        assert_eq!(r(1e300, 2), 1e300);
        assert_eq!(r(1.5, 400), 1.5);
        assert_eq!(r(1.5, -400), 0.0);
        assert_eq!(r(0.1 + 0.2, 16), 0.3);
        assert_eq!(r(0.1 + 0.2, 17), 0.1 + 0.2);
        assert_eq!(t(1.789, 2), 1.78);
        assert_eq!(t(-1.789, 1), -1.7);
        assert_eq!(t(1999.0, -3), 1000.0);
        // 0.3 is slightly below 3/10 in binary, and prints as 0.3.
        assert_eq!(t(0.3, 1), 0.3);
        assert!(r(f64::NAN, 2).is_nan());
        assert_eq!(r(f64::NEG_INFINITY, 2), f64::NEG_INFINITY);
        assert_eq!(round_to(1.7e308, -308, false), Err(OVERFLOW.to_string()));
    }

    #[test]
    fn logarithms_of_exact_powers_are_exact() {
        assert_eq!(log_base(10.0, 1000.0), Ok(Some(3.0)));
        assert_eq!(log_base(10.0, 0.001), Ok(Some(-3.0)));
        assert_eq!(log_base(3.0, 81.0), Ok(Some(4.0)));
        assert_eq!(log_base(1.0, 5.0), Err("division by zero".into()));
        assert_eq!(log_base(0.0, 5.0), Err(LOG_OF_ZERO.into()));
        assert_eq!(log_base(2.0, -5.0), Err(LOG_OF_NEGATIVE.into()));
    }

    #[test]
    fn gcd_and_lcm_are_never_negative() {
        assert_eq!(gcd(i64::MIN as i128, -1), 1);
        assert_eq!(gcd(i64::MIN as i128, 0), 1i128 << 63);
        assert_eq!(lcm(-4, 6), 12);
        assert_eq!(lcm(0, 6), 0);
    }
}
