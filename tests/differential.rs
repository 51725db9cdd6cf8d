//! Differential property tests: random well-typed expressions over random batches;
//! the JIT must give exactly what the interpreter gives (values, NULLs and errors),
//! for filters in all three selection modes and as masks, and for projections (all
//! rows and selected rows); the optimizer must not change the interpreter's answer.
//! Kernels are compiled twice: by the default pipeline (O3, a full-block body and a
//! tail body) and by `Pipeline::Quick` (one masked body for every block on AVX-512
//! hosts), and both must agree with the interpreter.

mod common;

use std::sync::OnceLock;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, TimeUnit};
use broadhead::bind::{bind, bind_predicate};
use broadhead::functions::{self, Function, Signature};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::{
    call, case, col, lit, null, Error, Expr, ExprKind, Filter, KernelCache, Pipeline, Projector,
    ScalarValue, SelectionMode,
};
use common::{sliced_batch, sliced_batch_in, Rng};
use proptest::prelude::*;

const NUMERIC: &[&str] = &[
    "a", "b", "f32", "i", "j", "k", "i16", "t8", "u8", "u32", "u64",
];
const TYPES: &[arrow::datatypes::DataType] = &[
    arrow::datatypes::DataType::Int8,
    arrow::datatypes::DataType::Int16,
    arrow::datatypes::DataType::Int32,
    arrow::datatypes::DataType::Int64,
    arrow::datatypes::DataType::UInt8,
    arrow::datatypes::DataType::UInt32,
    arrow::datatypes::DataType::Float32,
    arrow::datatypes::DataType::Float64,
];
const PATTERNS: &[&str] = &[
    "a%",
    "%c",
    "%b%",
    "abc",
    "a_c",
    "%",
    "AB%",
    "h_llo",
    "%\\%%",
    "b\\%c",
    "%É%",
    "",
    // Prefixes of 4 and 5 bytes (a view's prefix decides the first), a 13-byte
    // equality and a suffix past the inline bytes.
    "abcd%",
    "abcde%",
    "abcdefghijklm",
    "%klm",
];
const WORDS: &[&str] = &[
    "a",
    "ab",
    "abc",
    "AB",
    "xyz",
    "héllo",
    "AIR",
    "abcd",
    "abcdefghijkl",
    "abcdefghijklm",
];

fn pick<'a, T>(r: &mut Rng, items: &'a [T]) -> &'a T {
    &items[r.below(items.len() as u64) as usize]
}

fn num_literal(r: &mut Rng) -> Expr {
    match r.below(5) {
        0 => lit(0i64),
        1 => lit(r.below(21) as i64 - 10),
        2 => lit((r.below(400) as f64 - 200.0) / 4.0),
        3 => lit(ScalarValue::Float64(*pick(
            r,
            &[0.0, -0.0, f64::NAN, f64::INFINITY],
        ))),
        _ => lit(ScalarValue::Int32(r.below(5) as i32)),
    }
}

fn num(r: &mut Rng, depth: u32) -> Expr {
    let leaf = depth == 0 || r.chance(0.3);
    if leaf {
        return match r.below(6) {
            0 => num_literal(r),
            _ => col(*pick(r, NUMERIC)),
        };
    }
    let d = depth - 1;
    match r.below(13) {
        0..=3 => {
            let (x, y) = (num(r, d), num(r, d));
            match r.below(5) {
                0 => x.add(y),
                1 => x.sub(y),
                2 => x.mul(y),
                3 => x.div(y),
                _ => x.rem(y),
            }
        }
        4 => num(r, d).neg(),
        5 => call("abs", vec![num(r, d)]),
        6 => {
            let else_expr = r.chance(0.7).then(|| num(r, d));
            case(vec![(boolean(r, d), num(r, d))], else_expr)
        }
        7 => call("coalesce", vec![num(r, d), num(r, d)]),
        8 => call("nullif", vec![num(r, d), num(r, d)]),
        9 => num(r, d).cast(pick(r, TYPES).clone()),
        10 => call("length", vec![col("s")]),
        11 => registry_call(r, d, Want::Numeric).unwrap_or_else(|| col("d").sub(col("d"))),
        _ => col("d").sub(col("d")),
    }
}

fn boolean(r: &mut Rng, depth: u32) -> Expr {
    let leaf = depth == 0 || r.chance(0.2);
    if leaf {
        return match r.below(8) {
            0 => col("flag"),
            1 => lit(r.chance(0.5)),
            2 => null(),
            3 => col("s").like(lit(*pick(r, PATTERNS))),
            4 => col("d").gt_eq(lit(ScalarValue::Date32(8700 + r.below(800) as i32))),
            5 => col("ts").lt(col("d")),
            6 if r.chance(0.5) => col("tm").gt(lit(ScalarValue::Time(
                r.below(86_400) as i64 * 1_000_000,
                TimeUnit::Microsecond,
            ))),
            6 => col("tm32").lt_eq(col("tm")),
            7 if r.chance(0.3) => col("d64").lt(col("ts")),
            7 if r.chance(0.3) => col("iv").gt(lit(ScalarValue::IntervalMonthDayNano(
                arrow::datatypes::IntervalMonthDayNano::new(0, r.below(40) as i32 - 10, 0),
            ))),
            _ => {
                let c = col(*pick(r, NUMERIC));
                c.gt(num_literal(r))
            }
        };
    }
    let d = depth - 1;
    match r.below(19) {
        0..=2 => {
            let (x, y) = (num(r, d), num(r, d));
            match r.below(6) {
                0 => x.eq(y),
                1 => x.not_eq(y),
                2 => x.lt(y),
                3 => x.lt_eq(y),
                4 => x.gt(y),
                _ => x.gt_eq(y),
            }
        }
        3 => boolean(r, d).and(boolean(r, d)),
        4 => boolean(r, d).or(boolean(r, d)),
        5 => broadhead::and(vec![boolean(r, d), boolean(r, d), boolean(r, d)]),
        6 => boolean(r, d).not(),
        7 => {
            if r.chance(0.5) {
                num(r, d).is_null()
            } else {
                col(*pick(r, &["s", "flag", "ts"])).is_not_null()
            }
        }
        8 => {
            let mut list: Vec<Expr> = (0..1 + r.below(6)).map(|_| num_literal(r)).collect();
            if r.chance(0.3) {
                list.push(null());
            }
            let x = num(r, d);
            if r.chance(0.3) {
                x.not_in_list(list)
            } else {
                x.in_list(list)
            }
        }
        9 => {
            let p = lit(*pick(r, PATTERNS));
            match r.below(3) {
                0 => col("s").ilike(p),
                1 => col("s").like(p).not(),
                _ => col("s").like(p),
            }
        }
        10 => {
            let other = if r.chance(0.5) {
                lit(*pick(r, WORDS))
            } else {
                col("s")
            };
            let subject = if r.chance(0.4) {
                computed_text(r, d)
            } else {
                col("s")
            };
            match r.below(4) {
                0 => subject.eq(other),
                1 => subject.lt(other),
                2 => other.gt_eq(subject),
                _ => subject.not_eq(other),
            }
        }
        11 => {
            let mut list: Vec<Expr> = (0..1 + r.below(4)).map(|_| lit(*pick(r, WORDS))).collect();
            if r.chance(0.2) {
                list.push(null());
            }
            col("s").in_list(list)
        }
        12 => num(r, d).between(num_literal(r), num_literal(r)),
        13 => {
            let b = boolean(r, d);
            call(
                *pick(r, &["is_true", "is_not_true", "is_false", "is_not_false"]),
                vec![b],
            )
        }
        14 => {
            let (x, y) = (num(r, d), num(r, d));
            if r.chance(0.5) {
                x.is_distinct_from(y)
            } else {
                x.is_not_distinct_from(y)
            }
        }
        15 => registry_call(r, d, Want::Boolean).unwrap_or_else(|| boolean(r, d)),
        16 => registry_predicate(r, d),
        17 => blob_predicate(r, d),
        _ => case(vec![(boolean(r, d), boolean(r, d))], Some(boolean(r, d))),
    }
}

/// A computed string of the shapes the JIT compares with a literal without
/// computing it (`substr(s, 1, k)`, `left(s, k)`: a prefix or equality test on the
/// column) or without building it (`upper(x)`, `lower(x)`), or any other.
fn computed_text(r: &mut Rng, depth: u32) -> Expr {
    let k = lit(r.below(5) as i64);
    match r.below(5) {
        0 => call("substr", vec![col("s"), lit(1i64), k]),
        1 => call("left", vec![col("s"), k]),
        2 => call("upper", vec![text(r, depth)]),
        3 => call("lower", vec![text(r, depth)]),
        _ => text(r, depth),
    }
}

/// VARCHAR-valued expressions: the column, literals, NULL, `CASE`, `if`,
/// `COALESCE` and `NULLIF` over them, and calls of the registry's string-valued
/// functions.
fn text(r: &mut Rng, depth: u32) -> Expr {
    if depth == 0 || r.chance(0.25) {
        return match r.below(5) {
            0 | 1 => col("s"),
            2 | 3 => lit(*pick(r, WORDS)),
            _ => null(),
        };
    }
    let d = depth - 1;
    match r.below(7) {
        5 | 6 => registry_call(r, d, Want::Text).unwrap_or_else(|| col("s")),
        0 => case(vec![(boolean(r, d), text(r, d))], None),
        // `if(c, x, y)` is a CASE with an ELSE.
        1 => case(vec![(boolean(r, d), text(r, d))], Some(text(r, d))),
        2 => call("coalesce", vec![text(r, d), text(r, d)]),
        3 => call("nullif", vec![text(r, d), text(r, d)]),
        _ => case(
            vec![(boolean(r, d), text(r, d)), (boolean(r, d), text(r, d))],
            Some(text(r, d)),
        ),
    }
}

/// Predicates over [`text`]: `IS [NOT] NULL`, comparisons, `IN`, `LIKE`, `length`,
/// `IS DISTINCT FROM`, mixed with the numeric grammar.
fn text_predicate(r: &mut Rng, depth: u32) -> Expr {
    let d = depth.saturating_sub(1);
    let x = text(r, depth);
    match r.below(10) {
        0 => x.is_null(),
        1 => x.is_not_null(),
        2 => x.eq(text(r, d)),
        3 => x.lt(text(r, d)),
        4 => {
            let list = (0..1 + r.below(3)).map(|_| lit(*pick(r, WORDS))).collect();
            x.in_list(list)
        }
        // Half of them on `upper(…)`, `lower(…)` and the like (one fused row function
        // for the case mappings).
        5 if r.chance(0.5) => computed_text(r, d).like(lit(*pick(r, PATTERNS))),
        5 => x.like(lit(*pick(r, PATTERNS))),
        6 => call("length", vec![x]).gt(num_literal(r)),
        7 => x.is_distinct_from(text(r, d)),
        8 => x.is_null().and(boolean(r, d)),
        _ => x.is_not_null().or(text_predicate(r, d)),
    }
}

/// A BLOB literal.
fn blob_literal(r: &mut Rng) -> Expr {
    lit(ScalarValue::Binary(pick(r, common::BLOBS).to_vec()))
}

/// BLOB-valued expressions: the column, literals, NULL, casts from VARCHAR (which
/// fail on characters beyond ASCII), `CASE`, `COALESCE` and `NULLIF` over them.
fn blob(r: &mut Rng, depth: u32) -> Expr {
    if depth == 0 || r.chance(0.3) {
        return match r.below(6) {
            0..=2 => col("bl"),
            3 | 4 => blob_literal(r),
            _ => null(),
        };
    }
    let d = depth - 1;
    match r.below(5) {
        0 => case(vec![(boolean(r, d), blob(r, d))], Some(blob(r, d))),
        1 => call("coalesce", vec![blob(r, d), blob(r, d)]),
        2 => call("nullif", vec![blob(r, d), blob(r, d)]),
        3 => text(r, d).cast(DataType::Binary),
        _ => case(vec![(boolean(r, d), blob(r, d))], None),
    }
}

/// Predicates over [`blob`]: comparisons, `IN`, `BETWEEN`, `IS [NOT] NULL`,
/// `IS DISTINCT FROM`, lengths and the text form.
fn blob_predicate(r: &mut Rng, depth: u32) -> Expr {
    let d = depth.saturating_sub(1);
    let x = blob(r, depth);
    match r.below(9) {
        0 => x.is_null(),
        1 => x.eq(blob(r, d)),
        2 => x.lt(blob(r, d)),
        3 => {
            let mut list: Vec<Expr> = (0..1 + r.below(3)).map(|_| blob_literal(r)).collect();
            if r.chance(0.2) {
                list.push(null());
            }
            x.in_list(list)
        }
        4 => x.between(blob_literal(r), blob_literal(r)),
        5 => x.is_distinct_from(blob(r, d)),
        6 => call("octet_length", vec![x]).gt(num_literal(r)),
        7 => x.cast(DataType::Utf8).eq(lit(*pick(r, WORDS))),
        _ => x.gt_eq(blob(r, d)).or(blob_predicate(r, d)),
    }
}

// ---------------------------------------------------------------- registry calls

/// What a generated call must return.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    Numeric,
    Boolean,
    Text,
    /// Any type the generator can consume (compared, or projected as is).
    Any,
}

impl Want {
    fn accepts(self, t: &DataType) -> bool {
        match self {
            Want::Numeric => t.is_numeric(),
            Want::Boolean => *t == DataType::Boolean,
            Want::Text => *t == DataType::Utf8,
            Want::Any => makes(t),
        }
    }
}

/// The types the generator can produce an expression of: columns of the test
/// schema, literals, casts and nested expressions.
fn makes(t: &DataType) -> bool {
    // Decimals of the 64-bit kind (the registry's decimal parameters take any
    // precision: `value_of` picks one of up to 18 digits).
    (t.is_numeric() && !matches!(t, DataType::Decimal256(..)))
        || matches!(
            t,
            DataType::Boolean
                | DataType::Utf8
                | DataType::Binary
                | DataType::Date32
                | DataType::Timestamp(_, _)
        )
        || broadhead::types::is_time(t)
}

/// A registry function the generator calls: the signatures whose every argument
/// type it can produce, and the literal arguments of its documented examples by
/// position (valid units, patterns and formats for functions that need literals).
struct Callable {
    function: &'static Function,
    signatures: Vec<&'static Signature>,
    example_literals: Vec<Vec<Expr>>,
}

/// Every registry function with at least one signature the generator can call,
/// found in the registry (so new functions are generated without an edit here).
fn callables() -> &'static [Callable] {
    static CALLABLES: OnceLock<Vec<Callable>> = OnceLock::new();
    CALLABLES.get_or_init(|| {
        functions::functions()
            .iter()
            .filter_map(|f| {
                let signatures: Vec<&Signature> = f
                    .signatures
                    .iter()
                    .filter(|s| s.args.iter().all(makes) && makes(&s.ret))
                    .collect();
                (!signatures.is_empty()).then(|| Callable {
                    function: f,
                    signatures,
                    example_literals: example_literals(f),
                })
            })
            .collect()
    })
}

/// The literal arguments of `f`'s calls in its examples, by argument position.
fn example_literals(f: &Function) -> Vec<Vec<Expr>> {
    fn walk(e: &Expr, f: &Function, out: &mut Vec<Vec<Expr>>) {
        match &e.kind {
            ExprKind::Call { name, args } => {
                if f.names().any(|n| n == name) {
                    for (i, a) in args.iter().enumerate() {
                        if matches!(a.kind, ExprKind::Literal(_)) {
                            if out.len() <= i {
                                out.resize(i + 1, Vec::new());
                            }
                            out[i].push(a.clone());
                        }
                    }
                }
                for a in args {
                    walk(a, f, out);
                }
            }
            ExprKind::Not(x) => walk(x, f, out),
            ExprKind::And(xs) | ExprKind::Or(xs) => xs.iter().for_each(|x| walk(x, f, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (sql, _) in &f.examples {
        if let Ok(e) = parse_expr(sql) {
            walk(&e, f, &mut out);
        }
    }
    out
}

/// A call of a random registry function returning what `want` asks for (a function
/// first, uniformly, then one of its signatures), or `None` when there is none.
fn registry_call(r: &mut Rng, depth: u32, want: Want) -> Option<Expr> {
    let candidates: Vec<&Callable> = callables()
        .iter()
        .filter(|c| c.signatures.iter().any(|s| want.accepts(&s.ret)))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let c = *pick(r, &candidates);
    Some(call_of(r, depth, c, want).0)
}

/// A call of `c` with arguments of one of its signatures' types (returning what
/// `want` asks for): columns, literals (its examples' where it has them) and nested
/// expressions.
fn call_of(r: &mut Rng, depth: u32, c: &Callable, want: Want) -> (Expr, &'static DataType) {
    let sigs: Vec<&Signature> = c
        .signatures
        .iter()
        .copied()
        .filter(|s| want.accepts(&s.ret))
        .collect();
    let sig = *pick(r, &sigs);
    let n = sig.args.len() + if sig.variadic { r.below(3) as usize } else { 0 };
    let d = depth.saturating_sub(1);
    let args = (0..n)
        .map(|i| {
            let examples = c.example_literals.get(i).filter(|l| !l.is_empty());
            match examples {
                Some(lits) if r.chance(0.6) => pick(r, lits).clone(),
                _ => value_of(r, d, sig.param(i)),
            }
        })
        .collect();
    (call(c.function.name, args), &sig.ret)
}

/// An expression of type `t` (one [`makes`] accepts).
fn value_of(r: &mut Rng, depth: u32, t: &DataType) -> Expr {
    match t {
        DataType::Boolean => boolean(r, depth),
        DataType::Utf8 if r.chance(0.3) => lit(*pick(r, WORDS)),
        DataType::Utf8 => text(r, depth),
        DataType::Binary => blob(r, depth),
        DataType::Date32 => match r.below(4) {
            0 => lit(ScalarValue::Date32(8700 + r.below(800) as i32)),
            1 => col("d64"),
            _ => col("d"),
        },
        DataType::Time64(TimeUnit::Microsecond) => match r.below(4) {
            0 => lit(ScalarValue::Time(
                r.below(86_400_000) as i64 * 1_000,
                TimeUnit::Microsecond,
            )),
            1 => col("ts").cast(t.clone()),
            2 => col("tm32").cast(t.clone()),
            _ => col("tm"),
        },
        DataType::Time32(TimeUnit::Millisecond) => col("tm32"),
        time if broadhead::types::is_time(time) => match r.below(2) {
            0 => col("tm32").cast(time.clone()),
            _ => col("tm").cast(time.clone()),
        },
        DataType::Timestamp(TimeUnit::Millisecond, _) => col("ts"),
        DataType::Timestamp(unit, tz) => col("ts").cast(DataType::Timestamp(*unit, tz.clone())),
        DataType::Decimal128(..) => decimal(r, depth),
        numeric => {
            let columns: Vec<&str> = common::COLUMNS
                .iter()
                .filter(|(_, ct)| ct() == *numeric)
                .map(|(name, _)| *name)
                .collect();
            let low = if broadhead::types::is_unsigned(numeric) {
                0
            } else {
                2
            };
            match r.below(4) {
                0 if !columns.is_empty() => col(*pick(r, &columns)),
                0 | 1 => lit(r.below(7) as i64 - low).cast(numeric.clone()),
                _ => num(r, depth).cast(numeric.clone()),
            }
        }
    }
}

/// A decimal of up to 38 digits: decimal columns (computed in 64 and 128 bits,
/// stored in 32, 64 and 128), literals
/// with a point (some beyond 64 bits), integers and decimals cast to decimals, and
/// sums, differences, products and remainders of those (whose types the binder
/// computes as DuckDB does).
fn decimal(r: &mut Rng, depth: u32) -> Expr {
    let leaf = depth == 0 || r.chance(0.4);
    if leaf {
        return match r.below(6) {
            0 => col(*pick(r, &["m", "m4", "m30", "m38", "m64", "m32"])),
            1 => lit(ScalarValue::Decimal128(
                r.below(2001) as i128 - 1000,
                *pick(r, &[3u8, 5, 9]),
                2,
            )),
            2 if r.chance(0.5) => lit(ScalarValue::Decimal128(
                (r.below(2001) as i128 - 1000) * 10i128.pow(20) + 7,
                26,
                4,
            )),
            3 => col(*pick(r, &["m", "m4", "m30", "m64", "m32"])).cast(DataType::Decimal128(
                *pick(r, &[19u8, 30, 38]),
                *pick(r, &[2i8, 4, 10]),
            )),
            2 => col(*pick(r, &["k", "t8", "u8", "i16"])).cast(DataType::Decimal128(
                *pick(r, &[12u8, 15, 18]),
                *pick(r, &[0i8, 2, 4]),
            )),
            _ => col(*pick(r, &["m", "m64", "m32"])).cast(DataType::Decimal128(
                *pick(r, &[9u8, 12, 18]),
                *pick(r, &[0i8, 1, 3, 6]),
            )),
        };
    }
    let d = depth - 1;
    let (a, b) = (decimal(r, d), decimal(r, d));
    match r.below(6) {
        0 => a.add(b),
        1 => a.sub(b),
        2 => a.mul(lit(ScalarValue::Decimal128(r.below(30) as i128, 2, 1))),
        3 => a.rem(b),
        // Products of leaves (scales of at most 10 each): nested ones could need
        // more than 38 digits of scale.
        4 if d == 0 => a.mul(b),
        _ => a.neg(),
    }
}

/// Whether `reason` is one the JIT gives for decimal work it leaves to the
/// interpreter (docs/semantics.md): rounding functions of 128-bit decimals, and
/// values that need more than 38 digits.
fn not_compiled_decimal(reason: &str) -> bool {
    reason.contains("rounding functions of 128-bit decimals are not compiled")
        // A remainder of DECIMAL(38,2) by DECIMAL(9,6) computes at scale 6 and needs
        // 42 digits.
        || reason.contains("(the JIT computes decimals of up to 38 digits)")
        // Decimal places that folding could not make a literal: a constant whose
        // evaluation fails (`CAST(DOUBLE 'Infinity' AS BIGINT)`), so every row fails,
        // which the interpreter reports.
        || reason.contains("decimal places that are not a literal")
}

/// A call of any registry function (whatever it returns) made a predicate: compared
/// with another value of its type, or tested for NULL.
fn registry_predicate(r: &mut Rng, depth: u32) -> Expr {
    let c = pick(r, callables());
    let (x, ret) = call_of(r, depth, c, Want::Any);
    let y = value_of(r, depth.saturating_sub(1), ret);
    match r.below(5) {
        0 => x.is_not_null(),
        1 => x.eq(y),
        2 => x.lt(y),
        3 => y.gt_eq(x),
        _ => x.is_distinct_from(y),
    }
}

/// Batch shapes: (length, slice offset, NULL probability, layout of the strings).
fn shape(r: &mut Rng) -> (usize, usize, f64, DataType) {
    let len = *pick(r, &[0usize, 1, 63, 64, 65, 130, 1000]);
    let offset = *pick(r, &[0usize, 0, 3, 64, 67]);
    let null_p = *pick(r, &[0.0, 0.0, 0.1, 0.5]);
    let layout = pick(r, common::STRING_LAYOUTS).clone();
    (len, offset, null_p, layout)
}

/// A projection's expected outcome: the arrays, or the error of the lowest failing
/// row (the earlier expression on a tie), as `Projector` reports it.
fn first_error(
    results: Vec<Result<arrow::array::ArrayRef, Error>>,
) -> Result<Vec<arrow::array::ArrayRef>, String> {
    let row = |e: &Error| match e {
        Error::Eval(e) => e.row().unwrap_or(usize::MAX),
        _ => usize::MAX,
    };
    let first = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .min_by_key(|e| row(e));
    match first {
        Some(e) => Err(e.to_string()),
        None => Ok(results.into_iter().map(|r| r.expect("no error")).collect()),
    }
}

/// `Ok(values)` or `Err(message)`.
fn outcome<T>(r: Result<T, Error>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// `require_jit`: the expression must compile (else it may be interpreted, but
/// `Filter` must still accept it and agree with the interpreter).
/// The kernel cache of the second compilation: `Pipeline::Quick`.
fn quick_cache() -> &'static std::sync::Arc<KernelCache> {
    static CACHE: OnceLock<std::sync::Arc<KernelCache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        std::sync::Arc::new(KernelCache::new(64, 64 << 20).with_pipeline(Pipeline::Quick))
    })
}

/// The kernel cache of the first compilation: `Pipeline::O3` from the start (the
/// pipeline hot kernels are upgraded to), not the default `Quick` first.
fn o3_cache() -> &'static std::sync::Arc<KernelCache> {
    static CACHE: OnceLock<std::sync::Arc<KernelCache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        std::sync::Arc::new(KernelCache::new(256, 256 << 20).with_pipeline(Pipeline::O3))
    })
}

fn check_filter(
    expr: &Expr,
    batch: &RecordBatch,
    require_jit: bool,
) -> Result<bool, TestCaseError> {
    let schema = batch.schema();
    let Ok(typed) = bind_predicate(expr, &schema) else {
        return Ok(false);
    };
    let sql = expr.to_string();
    let reference = outcome(interpret(&typed, batch)).map(|a| {
        let b = a.as_boolean();
        (0..b.len())
            .filter(|&i| b.is_valid(i) && b.value(i))
            .collect::<Vec<usize>>()
    });
    let optimized = outcome(interpret(&optimize(typed), batch)).map(|a| {
        let b = a.as_boolean();
        (0..b.len())
            .filter(|&i| b.is_valid(i) && b.value(i))
            .collect::<Vec<usize>>()
    });
    prop_assert_eq!(
        &optimized,
        &reference,
        "optimizer changed the result of {}",
        sql
    );
    if std::env::var("BH_TRACE").is_ok() {
        eprintln!(
            "FILTER {sql} rows={} nulls={}",
            batch.num_rows(),
            batch
                .columns()
                .iter()
                .map(|c| c.null_count())
                .sum::<usize>()
        );
    }
    let filter = Filter::with_cache(&schema, expr, o3_cache())
        .map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
    let wide_decimal = || match filter.explain().map(|e| e.backend) {
        Ok(broadhead::Backend::Interpreted(reason)) => not_compiled_decimal(&reason),
        _ => false,
    };
    prop_assert!(
        filter.is_jit() || !require_jit || wide_decimal(),
        "{} is not compiled: {:?}",
        sql,
        filter.explain().map(|e| e.to_string())
    );
    let quick = Filter::with_cache(&schema, expr, quick_cache())
        .map_err(|e| TestCaseError::fail(format!("{sql} (Quick): {e}")))?;
    prop_assert_eq!(quick.is_jit(), filter.is_jit(), "{}", sql);
    for (pipeline, filter) in [("O3", &filter), ("Quick", &quick)] {
        for mode in [
            SelectionMode::UInt16,
            SelectionMode::UInt32,
            SelectionMode::UInt64,
        ] {
            if batch.num_rows() > mode.max_rows() {
                continue;
            }
            let jit = outcome(filter.evaluate_with_mode(batch, mode))
                .map(|s| s.iter().collect::<Vec<_>>());
            prop_assert_eq!(
                &jit,
                &reference,
                "{} in mode {:?} ({})",
                sql,
                mode,
                pipeline
            );
        }
        let mask = outcome(filter.evaluate_mask(batch))
            .map(|m| (0..m.len()).filter(|&i| m.value(i)).collect::<Vec<usize>>());
        prop_assert_eq!(&mask, &reference, "{} as a mask ({})", sql, pipeline);
    }
    Ok(true)
}

fn check_projection(
    exprs: &[Expr],
    batch: &RecordBatch,
    require_jit: bool,
) -> Result<bool, TestCaseError> {
    let schema = batch.schema();
    let mut typed = Vec::new();
    for e in exprs {
        match bind(e, &schema) {
            Ok(t) => typed.push(t),
            Err(_) => return Ok(false),
        }
    }
    let sql: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
    let projector = Projector::with_cache(&schema, exprs, o3_cache())
        .map_err(|e| TestCaseError::fail(format!("{sql:?}: {e}")))?;
    let reference = first_error(typed.iter().map(|t| interpret(t, batch)).collect());
    for (i, t) in typed.iter().enumerate() {
        let opt = outcome(interpret(&optimize(t.clone()), batch));
        match (&opt, outcome(interpret(t, batch))) {
            (Ok(a), Ok(b)) => {
                // Folding `CASE WHEN TRUE THEN s …` to `s` returns the column in its
                // own layout where the CASE built `Utf8`: the values must agree.
                let (a, b) = (utf8_layout(a), utf8_layout(&b));
                prop_assert!(common::same_array(&a, &b), "optimizer changed {}", sql[i])
            }
            (a, b) => prop_assert_eq!(
                a.as_ref().err(),
                b.as_ref().err(),
                "optimizer changed {}",
                sql[i]
            ),
        }
    }
    for i in 0..exprs.len() {
        // `interpreted(x)` asks for the interpreter: around a value that can fail, the
        // whole expression is interpreted.
        if require_jit
            && !sql[i].contains("interpreted(")
            && !matches!(
                typed[i].data_type,
                arrow::datatypes::DataType::Utf8 | arrow::datatypes::DataType::Null
            )
        {
            let alone = || Projector::from_exprs(&schema, std::slice::from_ref(&exprs[i]));
            let wide_decimal = || match alone().and_then(|p| p.explain()).map(|e| e.backend) {
                Ok(broadhead::Backend::Interpreted(reason)) => not_compiled_decimal(&reason),
                _ => false,
            };
            prop_assert!(
                projector.is_jit(i) || wide_decimal(),
                "{} is not compiled",
                sql[i]
            );
        }
    }
    let quick = Projector::with_cache(&schema, exprs, quick_cache())
        .map_err(|e| TestCaseError::fail(format!("{sql:?} (Quick): {e}")))?;
    for (pipeline, projector) in [("O3", &projector), ("Quick", &quick)] {
        let jit = outcome(projector.evaluate(batch));
        match (&jit, &reference) {
            (Ok(j), Ok(r)) => {
                for i in 0..exprs.len() {
                    // An expression the optimizer folds to a column (`CASE WHEN TRUE
                    // THEN s …`) is returned in the column's layout by the projector;
                    // the unoptimized reference builds `Utf8`.
                    prop_assert!(
                        common::same_array(&utf8_layout(&j[i]), &utf8_layout(&r[i])),
                        "{} ({}): jit {:?} vs interpreter {:?}",
                        sql[i],
                        pipeline,
                        j[i],
                        r[i]
                    );
                }
            }
            (j, r) => prop_assert_eq!(
                j.as_ref().err(),
                r.as_ref().err(),
                "{:?} ({})",
                sql,
                pipeline
            ),
        }
    }
    // Selected rows: every other row, compacted.
    let selection =
        broadhead::SelectionVector::UInt32((0..batch.num_rows() as u32).step_by(2).collect());
    let indices = selection.to_array();
    let taken = arrow::compute::take_record_batch(batch, &indices).expect("take");
    let jit_sel = projector.evaluate_selected(batch, &selection);
    let reference_sel = first_error(typed.iter().map(|t| interpret(t, &taken)).collect());
    match (outcome(jit_sel), reference_sel) {
        (Ok(j), Ok(r)) => {
            for i in 0..exprs.len() {
                prop_assert!(
                    common::same_array(&utf8_layout(&j[i]), &utf8_layout(&r[i])),
                    "{} on selected rows",
                    sql[i]
                );
            }
        }
        (Err(_), Err(_)) => {}
        (j, r) => prop_assert!(
            false,
            "{:?}: selected rows: jit {:?}, interpreter {:?}",
            sql,
            j.err(),
            r.err()
        ),
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn jit_filters_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = boolean(&mut r, 3);
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed, len, offset, null_p, &layout);
        // `interpreted(x)` (a registry function the generator may pick) is the
        // interpreter's by definition: with a part that can fail (a cast) inside, the
        // whole expression is, which `hybrid_expressions_…` covers.
        let require_jit = !expr.to_string().contains("interpreted(");
        check_filter(&expr, &batch, require_jit)?;
    }

    #[test]
    fn jit_projections_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let mut exprs = vec![num(&mut r, 3), boolean(&mut r, 2), num(&mut r, 2)];
        exprs.extend(registry_call(&mut r, 2, Want::Any));
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed ^ 1, len, offset, null_p, &layout);
        let require_jit = !exprs.iter().any(|e| e.to_string().contains("interpreted("));
        check_projection(&exprs, &batch, require_jit)?;
    }

    /// Whatever the binder accepts, `Filter` and `Projector` accept too (compiled or
    /// interpreted), and give the interpreter's answer: computed strings never reach
    /// the user as an internal error.
    #[test]
    fn every_bound_string_expression_runs_and_matches_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = text_predicate(&mut r, 3);
        let exprs = vec![text(&mut r, 3), text_predicate(&mut r, 2), call("length", vec![text(&mut r, 2)])];
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed ^ 2, len, offset, null_p, &layout);
        check_filter(&expr, &batch, false)?;
        check_projection(&exprs, &batch, false)?;
    }

    /// BLOBs: predicates and projections over columns, literals and computed BLOBs
    /// compile and give the interpreter's answer.
    #[test]
    fn blob_expressions_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = blob_predicate(&mut r, 3);
        let exprs = vec![blob(&mut r, 3), blob_predicate(&mut r, 2)];
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed ^ 4, len, offset, null_p, &layout);
        // `interpreted(x)` (from a registry call) around a value that can fail makes
        // the whole predicate interpreted.
        check_filter(&expr, &batch, !expr.to_string().contains("interpreted("))?;
        check_projection(&exprs, &batch, true)?;
    }

    /// Dictionary columns: a predicate over `s` dictionary-encoded (keys of a random
    /// integer type, the batch sliced after encoding, so keys start mid-array) selects
    /// the rows it selects on the plain column, and fails where it fails; evaluated
    /// once per dictionary value when it reads `s` alone.
    #[test]
    fn dictionary_columns_match_the_plain_column(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = if r.chance(0.7) { text_predicate(&mut r, 3) } else { boolean(&mut r, 2) };
        let (len, offset, null_p, _) = shape(&mut r);
        let key = pick(&mut r, &[DataType::Int8, DataType::Int16, DataType::UInt32, DataType::Int64]).clone();
        let whole = common::batch(seed ^ 5, len + offset, null_p);
        let plain = whole.slice(offset, len);
        let encoded = with_dictionary_column(&whole, "s", key).slice(offset, len);
        let Ok(on_plain) = Filter::from_expr(&plain.schema(), &expr) else {
            return Ok(());
        };
        let on_encoded = Filter::from_expr(&encoded.schema(), &expr)
            .map_err(|e| TestCaseError::fail(format!("{expr}: {e}")))?;
        let rows = |f: &Filter, b: &RecordBatch| outcome(f.evaluate(b)).map(|s| s.iter().collect::<Vec<_>>());
        let mask = |f: &Filter, b: &RecordBatch| outcome(f.evaluate_mask(b));
        prop_assert_eq!(rows(&on_encoded, &encoded), rows(&on_plain, &plain), "{}", expr);
        // Twice: the second time from the cached per-value result.
        prop_assert_eq!(mask(&on_encoded, &encoded), mask(&on_plain, &plain), "{}", expr);
    }

    /// Node-level fallback: computed strings inside numeric and boolean expressions.
    /// When no part of the expression can fail, it compiles (the parts the JIT lacks
    /// are interpreted for the kernel), and gives the interpreter's answer either way.
    #[test]
    fn hybrid_expressions_compile_and_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = text_predicate(&mut r, 3).and(boolean(&mut r, 1));
        let projected = [
            case(vec![(text_predicate(&mut r, 2), num(&mut r, 2))], Some(num(&mut r, 1))),
            call("length", vec![text(&mut r, 3)]).add(num(&mut r, 1)),
        ];
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed ^ 3, len, offset, null_p, &layout);
        let schema = batch.schema();
        let never_fails = |bound: Result<broadhead::typed::TypedExpr, broadhead::BindError>| {
            bound.is_ok_and(|t| !optimize(t).can_error())
        };
        check_filter(&expr, &batch, never_fails(bind_predicate(&expr, &schema)))?;
        for e in &projected {
            check_projection(std::slice::from_ref(e), &batch, never_fails(bind(e, &schema)))?;
        }
    }
}

/// An `OR` of `AND`s (or an `AND` of `OR`s) whose branches share operands, in any
/// order, some branches being the shared operands alone: TPC-H Q19's shape, which
/// the optimizer factors (`(c AND x) OR (c AND y)` is `c AND (x OR y)`) unless an
/// operand can raise an error.
fn shared_branches(r: &mut Rng) -> Expr {
    let shared: Vec<Expr> = (0..1 + r.below(2)).map(|_| boolean(r, 1)).collect();
    let branches_are_ands = r.chance(0.5);
    let branches = (0..2 + r.below(2))
        .map(|_| {
            let mut operands = shared.clone();
            operands.extend((0..r.below(3)).map(|_| boolean(r, 1)));
            let turn = r.below(operands.len() as u64) as usize;
            operands.rotate_left(turn);
            if branches_are_ands {
                broadhead::and(operands)
            } else {
                broadhead::or(operands)
            }
        })
        .collect();
    if branches_are_ands {
        broadhead::or(branches)
    } else {
        broadhead::and(branches)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Factoring shared operands out of branches changes no value, NULL or error
    /// (the checks compare the optimized tree with the bound one through the
    /// interpreter, and the kernel with both), as a filter and as values.
    #[test]
    fn shared_branch_operands_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = shared_branches(&mut r);
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = sliced_batch_in(seed, len, offset, null_p, &layout);
        // `interpreted(x)` (from a registry call) around a value that can fail makes
        // the whole expression interpreted (seed 5962840714020862546:
        // `interpreted(CAST(tm32 AS TIME) <= tm)`).
        let require_jit = !expr.to_string().contains("interpreted(");
        check_filter(&expr, &batch, require_jit)?;
        check_projection(&[expr.clone(), expr.not()], &batch, require_jit)?;
    }
}

/// The filter's rows (or error) for each batch.
fn filter_outcomes(filter: &Filter, batches: &[RecordBatch]) -> Vec<Result<Vec<usize>, String>> {
    batches
        .iter()
        .map(|b| outcome(filter.evaluate(b)).map(|s| s.iter().collect()))
        .collect()
}

/// The projector's arrays (or error) for each batch, all rows then every other row.
fn projector_outcomes(
    projector: &Projector,
    batches: &[RecordBatch],
) -> Vec<Result<Vec<arrow::array::ArrayRef>, String>> {
    batches
        .iter()
        .flat_map(|b| {
            let every_other =
                broadhead::SelectionVector::UInt32((0..b.num_rows() as u32).step_by(2).collect());
            [
                outcome(projector.evaluate(b)),
                outcome(projector.evaluate_selected(b, &every_other)),
            ]
        })
        .collect()
}

fn same_outcomes(
    x: &[Result<Vec<arrow::array::ArrayRef>, String>],
    y: &[Result<Vec<arrow::array::ArrayRef>, String>],
) -> bool {
    x.len() == y.len()
        && x.iter().zip(y).all(|(x, y)| match (x, y) {
            (Ok(x), Ok(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| common::same_array(x, y))
            }
            (Err(x), Err(y)) => x == y,
            _ => false,
        })
}

/// Tiered evaluation, with each tier forced in turn (no timing involved): the first
/// batches run while the background compile is held (the interpreter tier), the
/// rest after it arrived (the kernel tier; a null pattern of its own compiles in
/// the background meanwhile). Every batch's outcome must be `Eager`'s.
fn check_tiered(
    filter_expr: &Expr,
    projections: &[Expr],
    batches: &[RecordBatch],
) -> Result<(), TestCaseError> {
    use broadhead::prepare::{Prepared, Purpose};
    use broadhead::CompilePolicy;
    let schema = batches[0].schema();
    let (held, released) = batches.split_at(batches.len() / 2);
    if let Ok(prepared) = Prepared::new(filter_expr, &schema, Purpose::Predicate) {
        let sql = filter_expr.to_string();
        let eager = Filter::from_prepared(&prepared, KernelCache::global())
            .map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
        // Tiered with the Quick pipeline, as the command line runs it, and each
        // kernel upgraded to O3 once it has run.
        let cache = upgrading_cache();
        cache.hold_compiles();
        let tiered = Filter::with_policy(&prepared, &cache, CompilePolicy::Tiered)
            .map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
        let first = filter_outcomes(&tiered, held);
        let stats = tiered.tier_stats();
        prop_assert_eq!(stats.compiled_batches, 0, "{}: held", sql);
        cache.release_compiles();
        prop_assert_eq!(tiered.wait_for_kernel(), eager.is_jit(), "{}", sql);
        let then = filter_outcomes(&tiered, released);
        let stats = tiered.tier_stats();
        prop_assert_eq!(
            stats.compiled_batches,
            if eager.is_jit() {
                released.len() as u64
            } else {
                0
            },
            "{}: {}",
            sql,
            stats
        );
        let expected = filter_outcomes(&eager, batches);
        prop_assert_eq!(&[first, then].concat(), &expected, "{}", sql);
        // The upgrades the kernel tier's batches started have arrived.
        tiered.wait_for_kernel();
        if eager.is_jit() && released.iter().any(|b| b.num_rows() > 0) {
            prop_assert_eq!(
                tiered.tier_stats().pipeline,
                Some(Pipeline::O3),
                "{}: the kernel that ran was upgraded",
                sql
            );
        }
        let upgraded = filter_outcomes(&tiered, released);
        prop_assert_eq!(
            &upgraded,
            &filter_outcomes(&eager, released),
            "{}: upgraded",
            sql
        );
    }
    let prepared: Result<Vec<_>, _> = projections
        .iter()
        .map(|e| Prepared::new(e, &schema, Purpose::Projection))
        .collect();
    if let Ok(prepared) = prepared {
        let sql: Vec<String> = projections.iter().map(|e| e.to_string()).collect();
        let eager = Projector::from_prepared(&schema, &prepared, KernelCache::global())
            .map_err(|e| TestCaseError::fail(format!("{sql:?}: {e}")))?;
        let cache = upgrading_cache();
        cache.hold_compiles();
        let tiered = Projector::with_policy(&schema, &prepared, &cache, CompilePolicy::Tiered)
            .map_err(|e| TestCaseError::fail(format!("{sql:?}: {e}")))?;
        let first = projector_outcomes(&tiered, held);
        prop_assert_eq!(tiered.tier_stats().compiled_batches, 0);
        cache.release_compiles();
        tiered.wait_for_kernel();
        let then = projector_outcomes(&tiered, released);
        let expected = projector_outcomes(&eager, batches);
        prop_assert!(
            same_outcomes(&[first, then].concat(), &expected),
            "{:?}: tiered {:?}",
            sql,
            tiered.tier_stats()
        );
        tiered.wait_for_kernel();
        if (0..prepared.len()).any(|i| tiered.is_jit(i))
            && released.iter().any(|b| b.num_rows() > 0)
        {
            prop_assert_eq!(
                tiered.tier_stats().pipeline,
                Some(Pipeline::O3),
                "{:?}: the kernel that ran was upgraded",
                sql
            );
        }
        let upgraded = projector_outcomes(&tiered, released);
        prop_assert!(
            same_outcomes(&upgraded, &projector_outcomes(&eager, released)),
            "{:?}: upgraded {:?}",
            sql,
            tiered.tier_stats()
        );
    }
    Ok(())
}

/// A cache compiling with `Quick` and upgrading every kernel that has run (one row
/// is enough) to `O3`, in the background.
fn upgrading_cache() -> std::sync::Arc<KernelCache> {
    std::sync::Arc::new(
        KernelCache::new(16, 64 << 20)
            .with_pipeline(Pipeline::Quick)
            .with_upgrade(Some(broadhead::Upgrade {
                pipeline: Pipeline::O3,
                after_rows: 1,
            })),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The differential generator through `Tiered`, over batches of several shapes
    /// (some with nulls where others have none), against `Eager`.
    #[test]
    fn tiered_evaluation_matches_eager(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let filter = boolean(&mut r, 3);
        let mut projections = vec![num(&mut r, 3), boolean(&mut r, 2)];
        projections.extend(registry_call(&mut r, 2, Want::Any));
        let layout = pick(&mut r, common::STRING_LAYOUTS).clone();
        let batches: Vec<RecordBatch> = (0..4u64)
            .map(|i| {
                let (len, offset, _, _) = shape(&mut r);
                let null_p = if i % 2 == 0 { 0.0 } else { 0.2 };
                sliced_batch_in(seed ^ (i + 7), len, offset, null_p, &layout)
            })
            .collect();
        check_tiered(&filter, &projections, &batches)?;
    }
}

/// A string array of any layout as `Utf8` (other arrays as they are).
fn utf8_layout(a: &arrow::array::ArrayRef) -> arrow::array::ArrayRef {
    match a.data_type() {
        DataType::LargeUtf8 | DataType::Utf8View => {
            arrow::compute::cast(a, &DataType::Utf8).expect("strings cast to Utf8")
        }
        _ => a.clone(),
    }
}

/// `batch` with column `name` dictionary-encoded with keys of type `key`.
fn with_dictionary_column(batch: &RecordBatch, name: &str, key: DataType) -> RecordBatch {
    let schema = batch.schema();
    let (i, field) = schema.column_with_name(name).expect("the column");
    let t = DataType::Dictionary(Box::new(key), Box::new(field.data_type().clone()));
    let mut columns = batch.columns().to_vec();
    columns[i] = arrow::compute::cast(&columns[i], &t).expect("dictionary-encoded");
    let mut fields: Vec<arrow::datatypes::Field> =
        schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[i] = fields[i].clone().with_data_type(t);
    RecordBatch::try_new(
        std::sync::Arc::new(arrow::datatypes::Schema::new(fields)),
        columns,
    )
    .expect("same shape")
}

/// Batches longer than a u16 selection vector can index, and longer than 65,536.
#[test]
fn large_batches_match_the_interpreter() {
    let mut checked = 0;
    for seed in 0..6u64 {
        let mut r = Rng::new(seed * 7919);
        let layout = &common::STRING_LAYOUTS[seed as usize % common::STRING_LAYOUTS.len()];
        let batch = sliced_batch_in(seed, 70_001, 5, 0.1, layout);
        let expr = boolean(&mut r, 3);
        if check_filter(&expr, &batch, true).expect("filter matches") {
            checked += 1;
        }
        let exprs = vec![num(&mut r, 3)];
        check_projection(&exprs, &batch, true).expect("projection matches");
    }
    assert!(checked > 0);
    let schema = common::schema();
    let filter = Filter::from_expr(&schema, &col("a").gt(lit(0.0))).expect("compiles");
    let batch = sliced_batch(1, 70_000, 0, 0.0);
    let err = filter
        .evaluate_with_mode(&batch, SelectionMode::UInt16)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a batch of 70000 rows does not fit a UInt16 selection vector (at most 65536 rows)"
    );
}

/// Most generated expressions must bind, or the properties above test little.
#[test]
fn the_generators_produce_mostly_well_typed_expressions() {
    let schema = common::schema();
    let (mut ok, mut total) = (0, 0);
    for seed in 0..400u64 {
        let mut r = Rng::new(seed);
        total += 2;
        ok += bind_predicate(&boolean(&mut r, 3), &schema).is_ok() as usize;
        ok += bind(&num(&mut r, 3), &schema).is_ok() as usize;
        total += 2;
        ok += bind_predicate(&text_predicate(&mut r, 3), &schema).is_ok() as usize;
        ok += bind(&text(&mut r, 3), &schema).is_ok() as usize;
        if let Some(e) = registry_call(&mut r, 2, Want::Any) {
            total += 1;
            ok += bind(&e, &schema).is_ok() as usize;
        }
    }
    assert!(
        ok * 10 >= total * 7,
        "only {ok} of {total} generated expressions bind"
    );
}

/// The shared-branch property is not vacuous: of the generated trees that cannot
/// raise an error, the optimizer factors (or absorbs) most, so that the top of the
/// tree changes kind. (Trees that can are left alone: see the optimizer's tests;
/// the property checks their values and errors either way.)
#[test]
fn the_optimizer_factors_most_shared_branches() {
    use broadhead::typed::TypedKind;
    let schema = common::schema();
    let (mut factored, mut candidates) = (0, 0);
    for seed in 0..400u64 {
        let Ok(typed) = bind_predicate(&shared_branches(&mut Rng::new(seed)), &schema) else {
            continue;
        };
        if typed.can_error() {
            continue;
        }
        candidates += 1;
        let top_is_or = matches!(typed.kind, TypedKind::Or(_));
        let after = optimize(typed);
        factored += (top_is_or != matches!(after.kind, TypedKind::Or(_))) as usize;
    }
    assert!(
        candidates >= 100,
        "only {candidates} of 400 trees cannot fail"
    );
    assert!(
        factored * 2 >= candidates,
        "{factored} of the {candidates} trees that cannot fail were factored"
    );
}

/// Found by the projection property: `MIN % -1` is 0 in both back ends, not an error.
#[test]
fn min_modulo_minus_one_is_zero_in_both_back_ends() {
    use arrow::array::{ArrayRef, Int32Array, Int64Array};
    use arrow::datatypes::{Field, Schema};
    use std::sync::Arc;
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int64, true),
        Field::new("k", DataType::Int32, true),
    ]));
    let i: ArrayRef = Arc::new(Int64Array::from(vec![Some(i64::MIN), Some(7), None]));
    let k: ArrayRef = Arc::new(Int32Array::from(vec![Some(i32::MIN), None, Some(-1)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![i, k]).unwrap();
    let exprs = vec![col("i").rem(lit(-1i64)), col("k").rem(col("k"))];
    check_projection(&exprs, &batch, true).expect("the JIT matches the interpreter");
    let out = Projector::from_exprs(&schema, &exprs[..1])
        .and_then(|p| p.evaluate(&batch))
        .expect("no error");
    let values = out[0].as_primitive::<arrow::datatypes::Int64Type>();
    assert_eq!(values.value(0), 0);
    assert!(values.is_null(2));
}

/// Every registry function the generator can call (found in the registry) is
/// generated in a form that binds, so the properties above exercise it; functions
/// added later are covered without an edit here.
#[test]
fn the_generator_calls_every_registry_function_in_a_well_typed_form() {
    let schema = common::schema();
    let mut never = Vec::new();
    for c in callables() {
        let binds = (0..200u64).any(|seed| {
            let mut r = Rng::new(seed);
            let (e, _) = call_of(&mut r, 2, c, Want::Any);
            bind(&e, &schema).is_ok()
        });
        if !binds {
            never.push(c.function.name);
        }
    }
    assert!(
        never.is_empty(),
        "generated calls of these functions never bind: {never:?}"
    );
    let unreachable: Vec<&str> = functions::functions()
        .iter()
        .filter(|f| !callables().iter().any(|c| c.function.name == f.name))
        .map(|f| f.name)
        .collect();
    assert!(
        unreachable.len() * 10 <= functions::functions().len(),
        "the generator makes no arguments for {unreachable:?}"
    );
}

proptest! {
    // Each case compiles two kernels (and each projection alone once more): fewer
    // cases than the cheaper properties above.
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// INTERVAL values (read in place, durations converted, compared and computed in
    /// the kernel, the rest through row helpers): filters and projections compile
    /// and agree with the interpreter, also on extreme intervals and durations
    /// (`iv_edge`, `dur_s`: fields at their limits, so sums, products and the
    /// duration's conversion overflow).
    #[test]
    fn interval_expressions_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let literal = |r: &mut Rng| {
            let v = arrow::datatypes::IntervalMonthDayNano::new(
                r.below(5) as i32 - 2,
                r.below(61) as i32 - 30,
                (r.below(97) as i64 - 48) * 1_800_000_000_000,
            );
            lit(ScalarValue::IntervalMonthDayNano(v))
        };
        let interval = |r: &mut Rng| -> Expr {
            match r.below(14) {
                0 => col("dur"),
                1 => col("iv").add(col("dur")),
                2 => col("iv").mul(lit(r.below(5) as f64 / 2.0 - 1.0)),
                3 => col("ts").sub(col("d")),
                4 => col("iv").neg(),
                5 => col("iv_edge"),
                6 => col("dur_s"),
                7 => col("iv_edge").add(col("iv")),
                8 => col("iv").sub(literal(r)),
                9 => case(vec![(col("flag"), col("iv"))], Some(col("dur"))),
                10 => call("coalesce", vec![col("iv_edge"), col("dur_s"), literal(r)]),
                11 => col("iv_edge").neg().sub(col("dur_s")),
                12 => col("iv").div(lit(r.below(4) as i64 - 1)),
                _ => col("iv"),
            }
        };
        let (x, y) = (interval(&mut r), interval(&mut r));
        let expr = match r.below(6) {
            0 => x.lt(y),
            1 => x.eq(y).or(boolean(&mut r, 1)),
            2 => x.between(literal(&mut r), y),
            3 => x.in_list(vec![literal(&mut r), y, literal(&mut r)]),
            4 => x.not_eq(literal(&mut r)).and(y.gt_eq(literal(&mut r))),
            _ => col("ts").add(x).gt_eq(col("d").sub(y)),
        };
        let exprs = vec![
            col("ts").add(interval(&mut r)),
            col("d").sub(interval(&mut r)),
            call("date_part", vec![lit("epoch"), interval(&mut r)]),
            interval(&mut r).cast(DataType::Utf8),
            interval(&mut r),
            interval(&mut r).add(interval(&mut r)),
        ];
        let (len, offset, null_p, layout) = shape(&mut r);
        let batch = with_extreme_intervals(sliced_batch_in(seed ^ 3, len, offset, null_p, &layout), seed);
        check_filter(&expr, &batch, true)?;
        check_projection(&exprs, &batch, true)?;
    }
}

/// `batch` with two more columns: `iv_edge`, intervals whose fields are now and then
/// at their limits (so arithmetic on them overflows), and `dur_s`, durations in
/// seconds, now and then beyond the 292 years a 64-bit count of nanoseconds holds.
fn with_extreme_intervals(batch: RecordBatch, seed: u64) -> RecordBatch {
    use arrow::array::{ArrayRef, DurationSecondArray, IntervalMonthDayNanoArray};
    use arrow::datatypes::{Field, IntervalMonthDayNano, Schema};
    use std::sync::Arc;
    let mut r = Rng::new(seed ^ 0x1d7e);
    let n = batch.num_rows();
    // Three rows more, sliced off: the columns start at an offset.
    let edge = IntervalMonthDayNanoArray::from_iter((0..n + 3).map(|_| {
        let field = |r: &mut Rng, small: i64, max: i64| match r.below(8) {
            0 => max,
            1 => -max - 1,
            2 => max - 1,
            _ => small,
        };
        let small = r.below(25) as i64 - 12;
        let months = field(&mut r, small, i32::MAX.into()) as i32;
        let small = r.below(61) as i64 - 30;
        let days = field(&mut r, small, i32::MAX.into()) as i32;
        let small = (r.below(97) as i64 - 48) * 1_800_000_000_000;
        let nanos = field(&mut r, small, i64::MAX);
        (!r.chance(0.15)).then_some(IntervalMonthDayNano::new(months, days, nanos))
    }));
    let seconds = DurationSecondArray::from_iter((0..n + 3).map(|_| {
        let v = match r.below(10) {
            0 => i64::MAX / 1_000_000_000 + 1,
            1 => i64::MIN / 1_000_000_000,
            2 => i64::MAX,
            _ => r.below(200_001) as i64 - 100_000,
        };
        (!r.chance(0.15)).then_some(v)
    }));
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("iv_edge", edge.data_type().clone(), true));
    fields.push(Field::new("dur_s", seconds.data_type().clone(), true));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(edge.slice(3, n)) as ArrayRef);
    columns.push(Arc::new(seconds.slice(3, n)) as ArrayRef);
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("same length")
}
