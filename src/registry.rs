//! The function registry: one table of signatures that drives everything.
//!
//! The binder resolves every call (operators included) against it; the interpreter
//! and the JIT lowering each implement every [`FuncId`] (a test enumerates the table
//! and runs each entry through both); `docs/functions.md` is generated from it.

use std::sync::LazyLock;

use arrow_schema::{DataType, TimeUnit};

/// What a function returns when an argument is NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullBehavior {
    /// NULL if any argument is NULL (most functions and operators).
    NullIfAnyNull,
    /// Never NULL (`IS DISTINCT FROM`, `IS TRUE`, …).
    NeverNull,
}

/// The implementations both back ends provide, one per behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum FuncId {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Negate,
    Abs,
    Equal,
    NotEqual,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    IsDistinctFrom,
    IsNotDistinctFrom,
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
    Like,
    ILike,
    Length,
    /// `date + integer` (days), and `integer + date`
    DateAddDays,
    /// `date - integer` (days)
    DateSubDays,
    /// `date - date`, in days
    DateDiffDays,
}

impl FuncId {
    /// Whether this is one of the six ordering/equality comparisons.
    pub fn is_comparison(self) -> bool {
        use FuncId::*;
        matches!(self, Equal | NotEqual | Less | LessEq | Greater | GreaterEq)
    }
}

/// One entry of the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The SQL name the binder looks up (operators have Gandiva's names, e.g. `add`).
    pub name: &'static str,
    /// The behaviour both back ends implement.
    pub func: FuncId,
    /// Argument types (a timestamp parameter matches any time zone of its unit).
    pub args: Vec<DataType>,
    /// The result type.
    pub ret: DataType,
    /// NULL handling.
    pub nulls: NullBehavior,
    /// Whether evaluation can fail (overflow, division by zero).
    pub can_error: bool,
    /// One line for the function reference.
    pub doc: &'static str,
}

impl Signature {
    /// Whether the argument types match this signature exactly (time zones aside).
    pub fn matches(&self, args: &[DataType]) -> bool {
        self.args.len() == args.len() && self.args.iter().zip(args).all(|(p, a)| same_type(p, a))
    }

    /// `name(T1, T2) -> R`, for error messages and docs.
    pub fn display(&self) -> String {
        let args: Vec<String> = self.args.iter().map(crate::types::sql_type_name).collect();
        format!(
            "{}({}) -> {}",
            self.name,
            args.join(", "),
            crate::types::sql_type_name(&self.ret)
        )
    }

    /// Whether all parameters have one type (operators whose arguments meet in a common type).
    pub fn is_homogeneous(&self) -> bool {
        self.args.windows(2).all(|w| w[0] == w[1])
    }
}

/// Equal types, where two timestamps of one unit are equal whatever their time zones.
pub fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Timestamp(ua, _), DataType::Timestamp(ub, _)) => ua == ub,
        _ => a == b,
    }
}

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

fn comparable_types() -> Vec<DataType> {
    let mut types = NUMERIC.to_vec();
    types.extend([DataType::Boolean, DataType::Utf8, DataType::Date32]);
    for unit in [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ] {
        types.push(DataType::Timestamp(unit, None));
    }
    types
}

fn build() -> Vec<Signature> {
    use FuncId::*;
    use NullBehavior::*;
    let mut sigs = Vec::new();
    let mut push = |name, func, args: Vec<DataType>, ret, nulls, can_error, doc| {
        sigs.push(Signature {
            name,
            func,
            args,
            ret,
            nulls,
            can_error,
            doc,
        })
    };
    for t in NUMERIC {
        let int = crate::types::is_integer(&t);
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
        push(
            "divide",
            Divide,
            two.clone(),
            t.clone(),
            NullIfAnyNull,
            true,
            "a / b; integers truncate toward zero; division by zero is an error",
        );
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
                int,
                "-a; negating the smallest integer is an overflow error",
            );
        }
        push(
            "abs",
            Abs,
            vec![t.clone()],
            t.clone(),
            NullIfAnyNull,
            int && signed,
            "absolute value; abs of the smallest integer is an overflow error",
        );
    }
    for t in comparable_types() {
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
    for name in ["length", "char_length", "character_length"] {
        push(
            name,
            Length,
            vec![s()],
            DataType::Int32,
            NullIfAnyNull,
            false,
            "the number of characters in s",
        );
    }
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
    sigs
}

static REGISTRY: LazyLock<Vec<Signature>> = LazyLock::new(build);

/// Every signature, in registry order.
pub fn signatures() -> &'static [Signature] {
    &REGISTRY
}

/// The signatures with this name (empty if the function does not exist).
pub fn lookup(name: &str) -> impl Iterator<Item = &'static Signature> + '_ {
    REGISTRY.iter().filter(move |s| s.name == name)
}

/// Every distinct function name, sorted.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = REGISTRY.iter().map(|s| s.name).collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_entries_and_lookup_matches_exactly() {
        for name in names() {
            assert!(lookup(name).count() > 0);
        }
        let add_i32 = lookup("add").find(|s| s.matches(&[DataType::Int32, DataType::Int32]));
        assert_eq!(add_i32.map(|s| s.ret.clone()), Some(DataType::Int32));
        let ts = DataType::Timestamp(TimeUnit::Second, Some("UTC".into()));
        assert!(lookup("less_than").any(|s| s.matches(&[ts.clone(), ts.clone()])));
        assert!(lookup("nope").next().is_none());
    }
}
