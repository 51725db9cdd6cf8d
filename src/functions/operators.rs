//! Operators (`+`, `=`, `IS TRUE`, `LIKE`, …) and the first functions, which both
//! back ends implement natively (`FuncId` other than `Row`).

use arrow_schema::{DataType, TimeUnit};

use arrow::datatypes::Int32Type;

use super::row::{map1, Blob};
use super::{FuncId, NullBehavior, Registry};

const NUMERIC: [DataType; 10] = [
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float32,
    DataType::Float64,
];

/// The types with an order: numbers, BOOLEAN, VARCHAR, BLOB (bytewise), DATE, and
/// TIMESTAMP and TIME of each unit.
pub(super) fn comparable_types() -> Vec<DataType> {
    let mut types = NUMERIC.to_vec();
    types.extend([
        DataType::Boolean,
        DataType::Utf8,
        DataType::Binary,
        DataType::Date32,
    ]);
    for unit in [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ] {
        types.push(DataType::Timestamp(unit, None));
        types.push(crate::types::time_type(unit));
    }
    types
}

/// The parameter types of decimal signatures: `Decimal128` and `Decimal256` of any
/// precision and scale ([`super::param_accepts`]); the binder gives the arguments
/// their exact types and computes the result's ([`crate::bind`]).
pub(crate) fn decimal_params() -> [DataType; 2] {
    [
        DataType::Decimal128(crate::types::DECIMAL128_MAX_PRECISION, 0),
        DataType::Decimal256(crate::types::DECIMAL256_MAX_PRECISION, 0),
    ]
}

/// The operators and the first functions: arithmetic, comparisons, truth tests,
/// LIKE, length and day arithmetic on dates, each implemented by both back ends
/// directly (no row-wise implementation).
pub(super) fn register(r: &mut Registry) {
    use FuncId::*;
    use NullBehavior::*;
    let mut push = |name, func, args: Vec<DataType>, ret, nulls, can_error, doc| {
        r.builtin(name, func, args, ret, nulls, can_error, doc)
    };
    for t in NUMERIC.into_iter().chain(decimal_params()) {
        let decimal = crate::types::is_decimal(&t);
        let int = crate::types::is_integer(&t) || decimal;
        let signed = !crate::types::is_unsigned(&t);
        let two = vec![t.clone(), t.clone()];
        push(
            "add",
            Add,
            two.clone(),
            t.clone(),
            NullIfAnyNull,
            int,
            "a + b; integer overflow is an error",
        );
        push(
            "subtract",
            Subtract,
            two.clone(),
            t.clone(),
            NullIfAnyNull,
            int,
            "a - b; integer overflow is an error",
        );
        push(
            "multiply",
            Multiply,
            two.clone(),
            t.clone(),
            NullIfAnyNull,
            int,
            "a * b; integer overflow is an error",
        );
        if !decimal {
            push(
                "divide",
                Divide,
                two.clone(),
                t.clone(),
                NullIfAnyNull,
                true,
                "a / b; integers truncate toward zero; division by zero is an error",
            );
        }
        push(
            "modulo",
            Modulo,
            two,
            t.clone(),
            NullIfAnyNull,
            true,
            "a % b, with the sign of a; modulo by zero is an error",
        );
        if signed {
            push(
                "negate",
                Negate,
                vec![t.clone()],
                t.clone(),
                NullIfAnyNull,
                int && !decimal,
                "-a; negating the smallest integer is an overflow error",
            );
        }
        push(
            "abs",
            Abs,
            vec![t.clone()],
            t.clone(),
            NullIfAnyNull,
            int && signed && !decimal,
            "absolute value; abs of the smallest integer is an overflow error",
        );
    }
    for t in comparable_types().into_iter().chain(decimal_params()) {
        let two = vec![t.clone(), t.clone()];
        let b = DataType::Boolean;
        push(
            "equal",
            Equal,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a = b",
        );
        push(
            "not_equal",
            NotEqual,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a <> b",
        );
        push(
            "less_than",
            Less,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a < b",
        );
        push(
            "less_than_or_equal_to",
            LessEq,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a <= b",
        );
        push(
            "greater_than",
            Greater,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a > b",
        );
        push(
            "greater_than_or_equal_to",
            GreaterEq,
            two.clone(),
            b.clone(),
            NullIfAnyNull,
            false,
            "a >= b",
        );
        push(
            "is_distinct_from",
            IsDistinctFrom,
            two.clone(),
            b.clone(),
            NeverNull,
            false,
            "a IS DISTINCT FROM b: <> where NULL equals NULL",
        );
        push(
            "is_not_distinct_from",
            IsNotDistinctFrom,
            two,
            b,
            NeverNull,
            false,
            "a IS NOT DISTINCT FROM b: = where NULL equals NULL",
        );
    }
    let b = || DataType::Boolean;
    push(
        "is_true",
        IsTrue,
        vec![b()],
        b(),
        NeverNull,
        false,
        "x IS TRUE",
    );
    push(
        "is_not_true",
        IsNotTrue,
        vec![b()],
        b(),
        NeverNull,
        false,
        "x IS NOT TRUE",
    );
    push(
        "is_false",
        IsFalse,
        vec![b()],
        b(),
        NeverNull,
        false,
        "x IS FALSE",
    );
    push(
        "is_not_false",
        IsNotFalse,
        vec![b()],
        b(),
        NeverNull,
        false,
        "x IS NOT FALSE",
    );
    let s = || DataType::Utf8;
    push(
        "like",
        Like,
        vec![s(), s()],
        b(),
        NullIfAnyNull,
        false,
        "s LIKE pattern (% any run, _ one character, \\ escapes); the pattern must be a literal",
    );
    push(
        "ilike",
        ILike,
        vec![s(), s()],
        b(),
        NullIfAnyNull,
        false,
        "s ILIKE pattern: LIKE ignoring case",
    );
    push(
        "length",
        Length,
        vec![s()],
        DataType::Int32,
        NullIfAnyNull,
        false,
        "the number of characters (Unicode code points) in s",
    );
    let (d, i) = (|| DataType::Date32, || DataType::Int32);
    push(
        "add",
        DateAddDays,
        vec![d(), i()],
        d(),
        NullIfAnyNull,
        true,
        "date + days",
    );
    push(
        "add",
        DateAddDays,
        vec![i(), d()],
        d(),
        NullIfAnyNull,
        true,
        "days + date",
    );
    push(
        "subtract",
        DateSubDays,
        vec![d(), i()],
        d(),
        NullIfAnyNull,
        true,
        "date - days",
    );
    push(
        "subtract",
        DateDiffDays,
        vec![d(), d()],
        i(),
        NullIfAnyNull,
        true,
        "date - date, in days",
    );
    r.function("length")
        .alias("char_length")
        .alias("character_length")
        .example("length('héllo')", "5")
        .example("length(X'00FF41')", "3")
        .sig(
            &[DataType::Binary],
            DataType::Int32,
            "the number of bytes in a BLOB",
            map1::<Blob, Int32Type, _>(|b: &[u8]| Ok(Some(b.len() as i32))),
        );
    r.function("like").example("'abc' LIKE 'a%'", "true");
    r.function("ilike").example("'ABC' ILIKE 'a%'", "true");
}
