//! The function registry: one table of every function and operator Broadhead
//! knows, which drives everything else.
//!
//! Each function lives in one place, its domain's file (`string.rs`, `math.rs`,
//! `conditional.rs`, `hash.rs`, `cast.rs`, a file of the `datetime/` folder;
//! operators in `operators.rs`): its name and aliases, a one-line description, an
//! example, and its signatures — argument types, result type, NULL behaviour,
//! whether it can fail — each with its implementation. The binder resolves calls
//! against the table; `docs/functions.md` and `broadhead functions` are generated
//! from it; a test walks it, runs every signature through both back ends and checks
//! every example.
//!
//! Most functions are written once, row by row, with the adapters of `row`
//! (`row::map1(|s: &str| …)`): the same closure is the interpreter's
//! implementation (over Arrow arrays) and, through one generic runtime helper,
//! the JIT's (over blocks of rows, strings as views). Functions that LLVM computes
//! better say so in their [`Lowering`] (an intrinsic such as `llvm.sqrt`). The
//! operators are implemented natively by both back ends ([`FuncId`]).

use std::sync::LazyLock;

use arrow_schema::DataType;
use broadhead_codegen::{ArithOp, CmpOp, Find};

pub(crate) mod cast;
mod catalog;
mod conditional;
pub(crate) mod datetime;
mod hash;
mod json;
mod math;
mod operators;
mod reference;
pub(crate) mod row;
pub(crate) mod string;
mod structs;
mod system;

pub use catalog::{catalog, catalog_schema, Pattern};
pub use datetime::Field;
pub use reference::{by_domain, domain_title, reference_markdown, sql_form};
pub use row::{RowImpl, ENV_BATCH_STRING_BYTES, MAX_BATCH_STRING_BYTES};

/// What a function returns when an argument is NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullBehavior {
    /// NULL if any argument is NULL (most functions and operators).
    NullIfAnyNull,
    /// Never NULL (`IS DISTINCT FROM`, `IS TRUE`, …).
    NeverNull,
    /// The function decides from its arguments (`concat` skips NULLs, `greatest`
    /// ignores them).
    DecidesItself,
}

impl NullBehavior {
    /// How the reference describes it.
    pub fn describe(self) -> &'static str {
        match self {
            NullBehavior::NullIfAnyNull => "NULL if any argument is NULL",
            NullBehavior::NeverNull => "never NULL",
            NullBehavior::DecidesItself => "decides itself",
        }
    }
}

/// The natively implemented behaviours; [`FuncId::Row`] marks a function
/// implemented row by row ([`Signature::imp`]).
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
    /// `round`, `trunc`, `floor`, `ceil` of a decimal, to the scale of the result
    /// type the binder gives (`round(x, n)` with a constant `n`; see
    /// [`crate::decimal::rounded_type`]).
    DecimalRound(crate::decimal::Rounding),
    /// Implemented by [`Signature::imp`].
    Row,
}

impl FuncId {
    /// Whether this is one of the six ordering/equality comparisons.
    pub fn is_comparison(self) -> bool {
        use FuncId::*;
        matches!(self, Equal | NotEqual | Less | LessEq | Greater | GreaterEq)
    }
}

/// How the JIT computes a [`FuncId::Row`] signature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lowering {
    /// The row-wise implementation, called once per block of rows.
    Helper,
    /// An LLVM intrinsic over float vectors (`llvm.sqrt`); lanes whose first
    /// argument `x` satisfies `x op value` are errors (`sqrt` of a negative number).
    Intrinsic {
        /// The intrinsic.
        name: &'static str,
        /// The error lanes, if the function has a restricted domain.
        domain: Option<(CmpOp, f64)>,
    },
    /// Not compiled: the interpreter computes the call and the kernel reads its
    /// value as an input (the reason is what `explain` shows).
    Interpreted(&'static str),
    /// Vector instructions in the kernel that the lowering builds for an INTERVAL
    /// function (`lower::interval`); the row-wise implementation is the
    /// interpreter's.
    Inline(Inline),
}

/// What [`Lowering::Inline`] builds. An INTERVAL is Arrow's 16 bytes read as one
/// `i128` of three fields (months, days, nanoseconds) (`lower::interval`); a field
/// of a date is computed from its days by the civil calendar's integer arithmetic
/// (`lower::datetime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inline {
    /// A field of a DATE, TIMESTAMP (without time zone) or TIME, as a BIGINT.
    Field(Field),
    /// `date_trunc(unit, x)` with a literal unit (else the row function).
    Truncate,
    /// `date_diff(unit, a, b)` with a literal unit (else the row function).
    Difference,
    /// `add_days(x, n)` of a TIMESTAMP (`x + INTERVAL 'n days'`).
    AddDays,
    /// `add_months(x, n)` of a TIMESTAMP (`x + INTERVAL 'n months'`).
    AddMonths,
    /// `timezone(zone, x)` (`to_wall_clock`) or `from_local_time(zone, x)` of a
    /// literal zone whose offset never changes (`UTC`, `+05:30`): a shift.
    FixedZone {
        /// From the instant to the wall clock (else back).
        to_wall_clock: bool,
    },
    /// `add_nanoseconds(x, n)` of a TIMESTAMP (the time part of `x + INTERVAL`).
    AddNanoseconds,
    /// `greatest(x, …)` (`greatest`) or `least(x, …)` of numbers, dates or
    /// timestamps: a CASE per argument.
    Extreme {
        /// `greatest` rather than `least`.
        greatest: bool,
    },
    /// Two intervals compared as PostgreSQL does (a month is 30 days, a day 24 hours).
    Compare(CmpOp),
    /// Two intervals added or subtracted field by field, each field's overflow an
    /// error.
    FieldWise(ArithOp),
    /// An interval negated field by field.
    Negate,
}

/// A shape of call that the lowering computes better than by calling the function,
/// declared by the signature's registry entry ([`Function::specialize`]), so that
/// nothing outside the entry keys on a function's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Specialization {
    /// None: the call is lowered as its [`Lowering`] says.
    #[default]
    None,
    /// `f(s)` is `s` with its case mapped by Unicode's rules (`upper`: `upper` is
    /// true). Compared with a literal (`=`, `<>`) or matched by `LIKE`, the call is
    /// decided on the bytes of `s`, without the mapped string.
    CaseMap {
        /// Upper case (else lower case).
        upper: bool,
    },
    /// The call is the first `count` characters of its first argument when the
    /// argument at `start` (if any) is the literal 1 (`substr(s, 1, k)`,
    /// `left(s, k)`): compared with a literal, it is decided as a prefix test on the
    /// argument's bytes, without the substring.
    LeadingCharacters {
        /// The position of the start argument, which must be the literal 1.
        start: Option<usize>,
        /// The position of the count argument.
        count: usize,
    },
    /// An associative string concatenation of two arguments (`||`): a chain of
    /// calls is one call of the joining row function over all the operands.
    Concatenation,
    /// `f(s, x)` tests whether `s` equals, starts with, ends with or contains `x`
    /// (`starts_with`, `ends_with`, `contains`): with a literal `x` it is `s LIKE`
    /// the pattern of that shape, whose column helpers decide most rows from
    /// their first bytes.
    Matches(Find),
}

/// How a function reads a TIMESTAMP WITH TIME ZONE argument: a property of its
/// registry entry ([`Function::reads`]) that the binder applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneReading {
    /// As the instant it is (comparisons, `epoch`, arithmetic on instants).
    #[default]
    Instant,
    /// As the wall-clock time in its zone (fields, differences, formatting): the
    /// binder converts the argument first (`timezone(zone, x)`).
    WallClock,
    /// As the wall-clock time, and a TIMESTAMP result is a wall-clock time too, which
    /// the binder converts back to an instant in the argument's zone (`date_trunc`,
    /// `add_months`).
    WallClockAndBack,
}

/// Whether a call whose arguments have these literal values (`None`: not a literal)
/// can fail ([`Signature::fails_with`]).
pub type FailsWith = fn(&[Option<&crate::scalar::ScalarValue>]) -> bool;

/// One signature of a function.
#[derive(Clone)]
pub struct Signature {
    /// The function's name (operators have Gandiva's names, e.g. `add`).
    pub name: &'static str,
    /// The native behaviour, or [`FuncId::Row`].
    pub func: FuncId,
    /// Argument types (a timestamp parameter matches any time zone of its unit).
    pub args: Vec<DataType>,
    /// Whether the last parameter may repeat (`concat(VARCHAR, …)`).
    pub variadic: bool,
    /// The result type.
    pub ret: DataType,
    /// NULL handling.
    pub nulls: NullBehavior,
    /// Whether evaluation can fail (overflow, division by zero, bad input). Not
    /// counted: the limit on the strings a call computes per batch, which any
    /// function that builds strings can reach (docs/semantics.md, "Size limits").
    pub can_error: bool,
    /// One line for the function reference.
    pub doc: &'static str,
    /// The row-wise implementation of a [`FuncId::Row`] signature.
    pub imp: Option<RowImpl>,
    /// How the JIT computes a [`FuncId::Row`] signature.
    pub lowering: Lowering,
    /// What the lowering may compute better than the call ([`Specialization`]).
    pub specialization: Specialization,
    /// How it reads a TIMESTAMP WITH TIME ZONE (its function's, [`Function::reads`]).
    pub zone_reading: ZoneReading,
    /// For a signature that can fail: whether a call with arguments of these
    /// literal values (`None` for an argument that is not a literal) can, where that
    /// depends on them (`date_diff('day', d1, d2)` of DATEs cannot); `None`: every
    /// call can. A call that cannot fail may be decided on a Parquet column's
    /// dictionary values.
    pub fails_with: Option<FailsWith>,
}

impl std::fmt::Debug for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

impl PartialEq for Signature {
    fn eq(&self, other: &Signature) -> bool {
        // Registry entries are unique by name, behaviour and types.
        self.name == other.name
            && self.func == other.func
            && self.args == other.args
            && self.variadic == other.variadic
            && self.ret == other.ret
    }
}

impl Signature {
    /// How the JIT computes a call, in a few words for the reference: `native`
    /// (vector instructions in the kernel, or a helper written for the job over a
    /// whole block; `native for a literal` where that needs a literal argument, else
    /// the row function), `row function` (the row-wise implementation called once
    /// per block of rows, a row at a time) or `interpreter` (computed by the
    /// interpreter before the kernel runs).
    pub fn kernel_form(&self) -> &'static str {
        match (self.func, self.lowering, self.specialization) {
            (FuncId::Row, Lowering::Helper, Specialization::Matches(_)) => "native for a literal",
            (FuncId::Row, Lowering::Inline(Inline::Truncate | Inline::Difference), _) => {
                "native for a literal unit"
            }
            (FuncId::Row, Lowering::Inline(Inline::FixedZone { .. }), _) => {
                "native for a fixed-offset zone"
            }
            (FuncId::Row, Lowering::Helper, _) => "row function",
            (FuncId::Row, Lowering::Interpreted(_), _) => "interpreter",
            _ => "native",
        }
    }

    /// Whether the argument types match this signature exactly (time zones aside).
    pub fn matches(&self, args: &[DataType]) -> bool {
        self.accepts_count(args.len())
            && args
                .iter()
                .enumerate()
                .all(|(i, a)| param_accepts(self.param(i), a))
    }

    /// Whether a call with `n` arguments can match.
    pub fn accepts_count(&self, n: usize) -> bool {
        if self.variadic {
            n >= self.args.len()
        } else {
            n == self.args.len()
        }
    }

    /// The type of the `i`-th parameter (the last one repeats in variadic functions).
    pub fn param(&self, i: usize) -> &DataType {
        let last = self.args.len().saturating_sub(1);
        &self.args[i.min(last)]
    }

    /// `name(T1, T2) -> R`, for error messages and docs.
    pub fn display(&self) -> String {
        let mut args: Vec<String> = self.args.iter().map(param_name).collect();
        if self.variadic {
            args.push("…".into());
        }
        format!(
            "{}({}) -> {}",
            self.name,
            args.join(", "),
            param_name(&self.ret)
        )
    }

    /// Whether all parameters have one type (operators whose arguments meet in a common type).
    pub fn is_homogeneous(&self) -> bool {
        self.args.windows(2).all(|w| w[0] == w[1])
    }
}

/// A form the binder rewrites rather than calls (`coalesce`, `nullif`, `nvl2`,
/// `current_date`): documented in the registry, implemented by the binder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialForm {
    /// How it is written, e.g. `coalesce(x, …)`.
    pub syntax: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// What it gives when arguments are NULL.
    pub nulls: NullBehavior,
}

/// One line of the reference: a signature or a special form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `name(T1, T2) -> R`, or the special form's syntax.
    pub signature: String,
    /// NULL handling.
    pub nulls: NullBehavior,
    /// Whether it can fail (a special form fails only where its arguments do).
    pub can_error: bool,
    /// One line.
    pub doc: &'static str,
    /// How the JIT computes it ([`Signature::kernel_form`]).
    pub kernel: &'static str,
}

/// A function: its names, documentation and signatures.
#[derive(Debug, Clone)]
pub struct Function {
    /// The name the reference lists it under.
    pub name: &'static str,
    /// Other names for it.
    pub aliases: Vec<&'static str>,
    /// The domain (the file it lives in): `string`, `math`, `operator`, …
    pub domain: &'static str,
    /// Examples: SQL and the value it gives, as the CLI prints it.
    pub examples: Vec<(&'static str, &'static str)>,
    /// Its signatures.
    pub signatures: Vec<Signature>,
    /// Its forms, if the binder rewrites it (then it has no signatures).
    pub forms: Vec<SpecialForm>,
    /// How every signature of it reads a TIMESTAMP WITH TIME ZONE.
    pub zone_reading: ZoneReading,
    /// Which arguments of other types the binder casts to VARCHAR.
    pub text_arguments: TextArguments,
}

/// Arguments a string function takes as text whatever their type (PostgreSQL's
/// `concat(1, 'a')` and `'id-' || 42`): the binder casts them to VARCHAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextArguments {
    /// None: arguments meet the signatures as they are.
    AsTheyAre,
    /// Every argument that is not VARCHAR or an untyped NULL (`concat`).
    All,
    /// As `All`, when one argument is VARCHAR already (`a || b`: PostgreSQL's
    /// `anynonarray || text`; two numbers do not concatenate).
    WhenOneIsText,
}

impl Function {
    /// Declares which arguments the binder casts to VARCHAR ([`TextArguments`]).
    pub fn text_arguments(&mut self, which: TextArguments) -> &mut Function {
        self.text_arguments = which;
        self
    }

    /// Adds another name.
    pub fn alias(&mut self, name: &'static str) -> &mut Function {
        self.aliases.push(name);
        self
    }

    /// Adds an example: `sql` evaluates to the value printed as `result`.
    pub fn example(&mut self, sql: &'static str, result: &'static str) -> &mut Function {
        self.examples.push((sql, result));
        self
    }

    /// Adds a signature implemented row by row (`imp`), lowered as a helper call.
    pub fn sig(
        &mut self,
        args: &[DataType],
        ret: DataType,
        doc: &'static str,
        imp: RowImpl,
    ) -> &mut Function {
        self.push(args, false, ret, doc, imp, Lowering::Helper)
    }

    /// Adds a variadic signature: the last parameter may repeat.
    pub fn variadic_sig(
        &mut self,
        args: &[DataType],
        ret: DataType,
        doc: &'static str,
        imp: RowImpl,
    ) -> &mut Function {
        self.push(args, true, ret, doc, imp, Lowering::Helper)
    }

    /// Adds a signature with the given lowering.
    pub fn lowered_sig(
        &mut self,
        args: &[DataType],
        ret: DataType,
        doc: &'static str,
        imp: RowImpl,
        lowering: Lowering,
    ) -> &mut Function {
        self.push(args, false, ret, doc, imp, lowering)
    }

    /// Adds a signature over DOUBLEs that the JIT computes with an LLVM intrinsic
    /// (`imp` is the interpreter's).
    pub fn intrinsic_sig(
        &mut self,
        args: &[DataType],
        doc: &'static str,
        imp: RowImpl,
        name: &'static str,
        domain: Option<(CmpOp, f64)>,
    ) -> &mut Function {
        let ret = args.first().cloned().unwrap_or(DataType::Float64);
        self.push(
            args,
            false,
            ret,
            doc,
            imp,
            Lowering::Intrinsic { name, domain },
        )
    }

    fn push(
        &mut self,
        args: &[DataType],
        variadic: bool,
        ret: DataType,
        doc: &'static str,
        imp: RowImpl,
        lowering: Lowering,
    ) -> &mut Function {
        self.signatures.push(Signature {
            name: self.name,
            func: FuncId::Row,
            args: args.to_vec(),
            variadic,
            ret,
            nulls: if imp.strict {
                NullBehavior::NullIfAnyNull
            } else {
                NullBehavior::DecidesItself
            },
            can_error: imp.can_error,
            doc,
            imp: Some(imp.named(self.name)),
            lowering,
            specialization: Specialization::None,
            zone_reading: ZoneReading::Instant,
            fails_with: None,
        });
        self
    }

    /// Declares how the function (every signature of it, also those added later)
    /// reads a TIMESTAMP WITH TIME ZONE argument ([`ZoneReading`]).
    pub fn reads(&mut self, reading: ZoneReading) -> &mut Function {
        self.zone_reading = reading;
        self
    }

    /// Declares how the JIT computes the signature added last ([`Lowering`]).
    pub fn lowering(&mut self, lowering: Lowering) -> &mut Function {
        if let Some(last) = self.signatures.last_mut() {
            last.lowering = lowering;
        }
        self
    }

    /// Declares which calls of the signature added last can fail
    /// ([`Signature::fails_with`]).
    pub fn fails_with(&mut self, test: FailsWith) -> &mut Function {
        if let Some(last) = self.signatures.last_mut() {
            last.fails_with = Some(test);
        }
        self
    }

    /// Declares what the lowering may compute better than a call of the signature
    /// added last ([`Specialization`]).
    pub fn specialize(&mut self, specialization: Specialization) -> &mut Function {
        if let Some(last) = self.signatures.last_mut() {
            last.specialization = specialization;
        }
        self
    }

    /// Documents a form the binder rewrites (the function then has no signatures).
    pub fn form(
        &mut self,
        syntax: &'static str,
        nulls: NullBehavior,
        doc: &'static str,
    ) -> &mut Function {
        self.forms.push(SpecialForm { syntax, doc, nulls });
        self
    }

    /// The reference's lines for it: its signatures, then its special forms.
    pub fn entries(&self) -> Vec<Entry> {
        let sigs = self.signatures.iter().map(|s| Entry {
            signature: s.display(),
            nulls: s.nulls,
            can_error: s.can_error,
            doc: s.doc,
            kernel: s.kernel_form(),
        });
        let forms = self.forms.iter().map(|f| Entry {
            signature: f.syntax.to_string(),
            nulls: f.nulls,
            can_error: false,
            doc: f.doc,
            kernel: "native",
        });
        sigs.chain(forms).collect()
    }

    /// Every name: the main one first.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

/// The registry under construction: what each domain's `register` fills.
#[derive(Default)]
pub(crate) struct Registry {
    functions: Vec<Function>,
    domain: &'static str,
}

impl Registry {
    /// The function `name`, created (in the current domain) if new.
    pub(crate) fn function(&mut self, name: &'static str) -> &mut Function {
        match self.functions.iter().position(|f| f.name == name) {
            Some(i) => &mut self.functions[i],
            None => {
                self.functions.push(Function {
                    name,
                    aliases: Vec::new(),
                    domain: self.domain,
                    examples: Vec::new(),
                    signatures: Vec::new(),
                    forms: Vec::new(),
                    zone_reading: ZoneReading::Instant,
                    text_arguments: TextArguments::AsTheyAre,
                });
                self.functions.last_mut().expect("just pushed")
            }
        }
    }

    /// Adds a natively implemented signature.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn builtin(
        &mut self,
        name: &'static str,
        func: FuncId,
        args: Vec<DataType>,
        ret: DataType,
        nulls: NullBehavior,
        can_error: bool,
        doc: &'static str,
    ) {
        self.function(name).signatures.push(Signature {
            name,
            func,
            args,
            variadic: false,
            ret,
            nulls,
            can_error,
            doc,
            imp: None,
            lowering: Lowering::Helper,
            specialization: Specialization::None,
            zone_reading: ZoneReading::Instant,
            fails_with: None,
        });
    }
}

/// Equal types, where two timestamps of one unit are equal whatever their time zones.
pub fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Timestamp(ua, _), DataType::Timestamp(ub, _)) => ua == ub,
        _ => a == b,
    }
}

/// Whether a parameter of type `param` takes an argument of type `arg`: equal
/// types ([`same_type`]), and a decimal parameter takes a decimal of its width class
/// (`Decimal128` or `Decimal256`) of any precision and scale.
pub fn param_accepts(param: &DataType, arg: &DataType) -> bool {
    match (param, arg) {
        (DataType::Decimal128(..), DataType::Decimal128(..))
        | (DataType::Decimal256(..), DataType::Decimal256(..)) => crate::types::is_decimal(arg),
        _ => same_type(param, arg),
    }
}

/// How a signature's type is written in the reference: decimal parameters, which
/// take any precision and scale, are `DECIMAL` (and `DECIMAL(p>38)` for the wide ones).
fn param_name(t: &DataType) -> String {
    match t {
        DataType::Decimal128(..) => "DECIMAL".into(),
        DataType::Decimal256(..) => "DECIMAL(p>38)".into(),
        other => crate::types::sql_type_name(other),
    }
}

/// A domain's registration function.
type Register = fn(&mut Registry);

fn build() -> Vec<Function> {
    let mut r = Registry::default();
    let domains: [(&'static str, Register); 10] = [
        ("operator", operators::register),
        ("string", string::register),
        ("math", math::register),
        ("datetime", datetime::register),
        ("conditional", conditional::register),
        ("hash", hash::register),
        ("json", json::register),
        ("struct", structs::register),
        ("cast", cast::register),
        ("system", system::register),
    ];
    for (domain, register) in domains {
        r.domain = domain;
        register(&mut r);
    }
    for f in &mut r.functions {
        for s in &mut f.signatures {
            s.zone_reading = f.zone_reading;
        }
    }
    r.functions
}

static REGISTRY: LazyLock<Vec<Function>> = LazyLock::new(build);

/// Every function, in registry order.
pub fn functions() -> &'static [Function] {
    &REGISTRY
}

/// Every signature, in registry order.
pub fn signatures() -> impl Iterator<Item = &'static Signature> {
    REGISTRY.iter().flat_map(|f| f.signatures.iter())
}

/// The function called `name` (or with `name` as an alias).
pub fn function(name: &str) -> Option<&'static Function> {
    REGISTRY.iter().find(|f| f.names().any(|n| n == name))
}

/// The signatures of the function called `name` (empty if it does not exist).
pub fn lookup(name: &str) -> impl Iterator<Item = &'static Signature> {
    function(name).into_iter().flat_map(|f| f.signatures.iter())
}

/// Every distinct function name, aliases included, sorted.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = REGISTRY.iter().flat_map(|f| f.names()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::TimeUnit;

    #[test]
    fn every_name_has_entries_and_lookup_matches_exactly() {
        for name in names() {
            let f = function(name).unwrap();
            assert!(lookup(name).count() > 0 || !f.forms.is_empty(), "{name}");
            assert!(f.signatures.is_empty() || f.forms.is_empty(), "{name}");
        }
        let add_i32 = lookup("add").find(|s| s.matches(&[DataType::Int32, DataType::Int32]));
        assert_eq!(add_i32.map(|s| s.ret.clone()), Some(DataType::Int32));
        let ts = DataType::Timestamp(TimeUnit::Second, Some("UTC".into()));
        assert!(lookup("less_than").any(|s| s.matches(&[ts.clone(), ts.clone()])));
        assert!(lookup("nope").next().is_none());
        assert!(lookup("char_length").any(|s| s.func == FuncId::Length));
    }

    #[test]
    fn every_row_signature_has_an_implementation_and_names_are_unique() {
        for s in signatures() {
            assert_eq!(s.func == FuncId::Row, s.imp.is_some(), "{}", s.display());
        }
        let mut all: Vec<&str> = REGISTRY.iter().flat_map(|f| f.names()).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a name is used twice");
    }

    #[test]
    fn declared_specializations_fit_their_signatures() {
        let text = DataType::Utf8;
        let mut declared = Vec::new();
        for s in signatures() {
            let fits = match s.specialization {
                Specialization::None => continue,
                Specialization::CaseMap { .. } => s.args == [text.clone()] && s.ret == text,
                Specialization::LeadingCharacters { start, count } => {
                    s.args.first() == Some(&text)
                        && s.ret == text
                        && start
                            .into_iter()
                            .chain([count])
                            .all(|i| i > 0 && s.args.get(i) == Some(&DataType::Int64))
                }
                Specialization::Concatenation => {
                    s.args == [text.clone(), text.clone()] && s.ret == text
                }
                Specialization::Matches(_) => {
                    s.args == [text.clone(), text.clone()] && s.ret == DataType::Boolean
                }
            };
            assert!(fits, "{}: {:?}", s.display(), s.specialization);
            declared.push(s.name);
        }
        // The lowering's string fast paths hang on these declarations.
        for name in [
            "upper",
            "lower",
            "substr",
            "left",
            "concat_op",
            "starts_with",
            "ends_with",
            "contains",
        ] {
            assert!(
                declared.contains(&name),
                "{name} declares no specialization"
            );
        }
    }
}
