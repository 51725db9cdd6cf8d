//! Kernel programs: the typed DAG the back end compiles. No SQL here: only physical
//! types, arithmetic with defined overflow rules, comparisons, Kleene logic and
//! calls to runtime helpers.

/// Physical value types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum PType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    /// A 128-bit signed integer: the unscaled value of a `DECIMAL(p, s)` of 19 to 38
    /// digits, read in place from a `Decimal128` column (16 bytes per row), or an
    /// INTERVAL's three fields packed ([`Node::Pack`], [`Node::Extract`]). Allowed
    /// on it: checked `+ - *` and [`ArithOp::WideMul`] (inline code), `/` and `%`
    /// (LLVM calls `__divti3` and `__modti3`, which the JIT defines for the kernels
    /// that need them), negation, comparisons, range checks, integer casts, bit
    /// fields; no float conversion (`__floattidf`) or IN set. Helper calls take and
    /// return it as 16 bytes a lane. Values are loaded and stored with 8-byte
    /// alignment (Arrow aligns an `IntervalMonthDayNano` buffer to 8 bytes only).
    I128,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// A UTF-8 string. An input column is offsets + bytes; within a block a string
    /// value is a view per row (an address and a byte length), so computed strings
    /// flow between [`Node::Call`]s, `CASE`, `COALESCE` and outputs.
    Str,
    /// An opaque pointer parameter (helper state).
    Ptr,
}

impl PType {
    /// Signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            PType::I8 | PType::I16 | PType::I32 | PType::I64 | PType::I128
        )
    }
    /// Unsigned integer type.
    pub fn is_unsigned(self) -> bool {
        matches!(self, PType::U8 | PType::U16 | PType::U32 | PType::U64)
    }
    /// Integer type.
    pub fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }
    /// Float type.
    pub fn is_float(self) -> bool {
        matches!(self, PType::F32 | PType::F64)
    }
    /// Bytes per value for fixed-width numeric types (0 for others).
    pub fn width(self) -> u32 {
        match self {
            PType::I8 | PType::U8 => 1,
            PType::I16 | PType::U16 => 2,
            PType::I32 | PType::U32 | PType::F32 => 4,
            PType::I64 | PType::U64 | PType::F64 | PType::Ptr => 8,
            PType::I128 => 16,
            PType::Bool | PType::Str => 0,
        }
    }
}

/// Index of a node in [`Program::nodes`].
pub type NodeId = usize;

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`; integer overflow is an error.
    Add,
    /// `-`; integer overflow is an error.
    Sub,
    /// `*`; integer overflow is an error.
    Mul,
    /// `*` of two [`PType::I128`] values whose product the program guarantees to fit,
    /// without the overflow check (a checked 128-bit multiply is about four times
    /// the code): the lowering emits it only where the operands' digits bound the
    /// product below `10^38` (`DECIMAL(p1) * DECIMAL(p2)` with `p1 + p2 <= 38`, or a
    /// value range-checked before it is rescaled).
    WideMul,
    /// `/`, truncating for integers; a zero divisor is an error (floats too); `MIN / -1` overflows.
    Div,
    /// remainder with the sign of the dividend; a zero divisor is an error.
    Rem,
    /// integer division rounding toward negative infinity (divisor must be a positive constant).
    FloorDiv,
    /// the remainder of [`ArithOp::FloorDiv`], from 0 to the divisor less one (divisor
    /// must be a positive constant).
    FloorMod,
}

/// Comparison operators (floats: NaN equals NaN and is above every number; -0.0 = 0.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Truth tests that never return NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TruthTest {
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
}

/// A runtime helper the generated code calls, by name and address.
///
/// Its ABI is [`HelperFn`]: for each bit `i` set in `rows` it reads row `row0 + i`
/// of the string columns `a` (and `b`, or null), and either returns a bitmask of
/// those rows where its predicate holds (bit `i` for row `row0 + i`; the bits not
/// in `rows` clear) or writes their values to `out` (value `i` for row `row0 + i`).
/// The kernel asks a predicate only for the rows whose value matters that its
/// quick check, if it has one ([`Node::Helper`]'s `quick`), left undecided, and any
/// other helper for the block's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Helper {
    /// The symbol name in the generated module.
    pub name: &'static str,
    /// The function's address.
    pub addr: usize,
}

/// The ABI of runtime helpers: `(state, a, b, row0, rows, out) -> mask`.
pub type HelperFn =
    unsafe extern "C" fn(*const u8, *const Slot, *const Slot, u64, u64, *mut u8) -> u64;

/// What a [`Node::Call`] calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Callee {
    /// An LLVM intrinsic overloaded on the vector type of its float arguments and
    /// result (`llvm.sqrt`, `llvm.floor`, `llvm.pow`, …). Lanes where the first
    /// argument `x` satisfies `x domain.0 domain.1` (a comparison with an `f64`
    /// constant, given by its bits) raise an error: `sqrt` of a negative number.
    Intrinsic {
        /// The intrinsic's name.
        name: &'static str,
        /// The error lanes, if the function has a restricted domain.
        domain: Option<(CmpOp, u64)>,
    },
    /// A runtime helper with the [`CallFn`] ABI, called once per block; its state
    /// pointer is the parameter slot `state`.
    Helper {
        /// The symbol and address.
        helper: Helper,
        /// The parameter slot holding the helper's state pointer.
        state: usize,
    },
}

/// One argument of a [`CallFn`] helper: a block of [`LANES`](crate::LANES) values
/// (`#[repr(C)]`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CallArg {
    /// `LANES` values of the argument's type; for strings, `LANES` addresses (`u64`).
    /// Booleans: one `u64` whose bit `i` is lane `i`.
    pub values: *const u8,
    /// For strings, `LANES` byte lengths (`u64`); null otherwise.
    pub lens: *const u64,
    /// Bit `i` set: lane `i` is not NULL (lanes past the batch are clear).
    pub valid: u64,
}

/// Where a [`CallFn`] helper writes its block of results (`#[repr(C)]`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CallOut {
    /// Room for `LANES` values of the result type (strings: addresses as `u64`;
    /// booleans: one `u64` mask).
    pub values: *mut u8,
    /// Strings: room for `LANES` byte lengths; null otherwise.
    pub lens: *mut u64,
    /// On entry, the lanes to compute (for a strict call, the lanes in the batch
    /// where every argument is valid; otherwise every lane in the batch); on return,
    /// the lanes whose result is not NULL (a subset of them).
    pub valid: u64,
    /// The row of the batch that lane 0 is (blocks are `LANES` rows apart from row
    /// 0), for a helper whose errors depend on the rows before (the limit on a
    /// batch's computed strings) to say which row failed.
    pub row: u64,
}

/// The ABI of [`Callee::Helper`] functions:
/// `(state, ctx, args, out) -> error lanes`. `ctx` is the pointer the caller of
/// the kernel passed (the per-call arena that computed strings are written to);
/// `args` has one [`CallArg`] per argument. The returned mask holds the lanes whose
/// computation failed (a subset of the lanes to compute).
pub type CallFn = unsafe extern "C" fn(*const u8, *mut u8, *const CallArg, *mut CallOut) -> u64;

/// One node of the DAG.
#[derive(Debug, Clone, PartialEq, Hash, Eq)]
pub enum Node {
    /// A column, by input slot.
    Input(usize),
    /// A literal passed at run time, by parameter slot. A float parameter is never
    /// NaN (the code may rely on it: a NaN literal is a [`Node::Const`]).
    Param(usize),
    /// A compile-time constant of a numeric type, as the value's bits (not for
    /// [`PType::I128`]: see `Const128`).
    Const(PType, u64),
    /// A compile-time constant of type [`PType::I128`].
    Const128(i128),
    /// A boolean constant.
    Bool(bool),
    /// A NULL of the type.
    Null(PType),
    /// Binary arithmetic on two values of one numeric type.
    Arith(ArithOp, NodeId, NodeId),
    /// Negation (integer overflow is an error).
    Neg(NodeId),
    /// The signed integer value unchanged; lanes outside `lo ..= hi` are errors (a
    /// decimal beyond its precision). The bounds are within the value's type.
    RangeCheck(NodeId, i128, i128),
    /// Absolute value (integer overflow is an error).
    Abs(NodeId),
    /// Comparison of two values of one type (numeric or boolean).
    Cmp(CmpOp, NodeId, NodeId),
    /// `IS DISTINCT FROM` (`negated`: `IS NOT DISTINCT FROM`).
    Distinct(NodeId, NodeId, bool),
    /// Kleene AND.
    And(Vec<NodeId>),
    /// Kleene OR.
    Or(Vec<NodeId>),
    /// Kleene NOT.
    Not(NodeId),
    /// `IS NULL` (`true`: `IS NOT NULL`).
    IsNull(NodeId, bool),
    /// `IS [NOT] TRUE/FALSE`.
    Truth(NodeId, TruthTest),
    /// Searched CASE: `(condition, value)` pairs and the else value.
    Case(Vec<(NodeId, NodeId)>, NodeId),
    /// First non-NULL.
    Coalesce(Vec<NodeId>),
    /// `x IN (values)`: values are parameters or constants of x's type;
    /// `has_null`: the list also had a NULL; `negated`: NOT IN.
    InList {
        /// The probe.
        x: NodeId,
        /// The non-NULL list values (parameters or constants of the probe's type).
        values: Vec<NodeId>,
        /// Whether the list also had a NULL.
        has_null: bool,
        /// `NOT IN`.
        negated: bool,
    },
    /// `x IN (values)` for a long list of a numeric type: the kernel passes each
    /// block's probe keys ([`InSet::key`]) to a lookup in the sorted keys of the
    /// [`InSet`] that parameter `state` points at, so the code is the same size
    /// whatever the length of the list (and the list is not part of the program).
    InSet {
        /// The probe (an integer or float type).
        x: NodeId,
        /// The parameter slot holding the `*const InSet`.
        state: usize,
        /// Whether the list also had a NULL.
        has_null: bool,
        /// `NOT IN`.
        negated: bool,
    },
    /// Conversion between numeric types and booleans (range-checked; floats to
    /// integers round half to even).
    Cast(NodeId, PType),
    /// The bits `lsb ..` of an integer value, as many as the integer type `ty` holds,
    /// as a `ty` (shifted right, then truncated: no check): a field of a packed
    /// value (an INTERVAL's months, days or nanoseconds).
    Extract(NodeId, u32, PType),
    /// `x / d`, or `x % d` where `remainder`, of a signed `I32` or `I64` `x` by a
    /// literal `d` with `|d| ≥ 2`, by multiplying: `magic` are the parameters of
    /// `d`'s [`DivisionMagic`](crate::DivisionMagic), each of `x`'s type, in order
    /// `|d|`, the multiplier, the shift, all ones where `x` is added (else 0) and all
    /// ones where the quotient is negated. Cannot fail.
    DivideByLiteral {
        /// The dividend.
        x: NodeId,
        /// The divisor's parameters.
        magic: [NodeId; 5],
        /// `%` rather than `/`.
        remainder: bool,
    },
    /// Integer values side by side in one [`PType::I128`], the first in the lowest
    /// bits; their widths add up to 16 bytes (an INTERVAL from its `i32` months, `i32`
    /// days and `i64` nanoseconds, Arrow's `IntervalMonthDayNano` layout).
    Pack(Vec<NodeId>),
    /// A helper over string inputs giving a BOOLEAN (`out` = `Bool`) or values of `out`.
    /// NULL if any string argument is NULL.
    Helper {
        /// The function called.
        helper: Helper,
        /// The parameter slot holding the helper's state pointer.
        state: usize,
        /// The string input slots it reads (one or two).
        args: Vec<usize>,
        /// `Bool` for a predicate, else the type of the values it writes.
        out: PType,
        /// For a predicate on one string column: what the kernel decides itself from
        /// each row's length and first bytes (a view's, or read at the row's offset);
        /// the helper is called only for blocks with rows left undecided, and only
        /// those rows take its answer.
        quick: Option<QuickCheck>,
    },
    /// A function call: an LLVM intrinsic or a runtime helper over whole blocks.
    Call {
        /// What is called.
        callee: Callee,
        /// The arguments.
        args: Vec<NodeId>,
        /// The result type.
        ret: PType,
        /// NULL if any argument is NULL (the callee sees only the other lanes);
        /// otherwise the callee decides validity from its arguments'.
        strict: bool,
    },
}

/// A predicate on a string column that a row's length and first bytes, or for
/// views the whole 16-byte view, often decide, vectorized in the kernel
/// ([`Node::Helper`]'s `quick`). For a column with offsets the kernel reads the
/// eight bytes at each row's start (where they are inside the data buffer), so an
/// equality decides TRUE only for literals of up to 8 bytes there.
/// Literals are parameters (`I64`), so the program does not depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuickTest {
    /// `= literal` (`negated`: `<>`). Parameters: the literal's view as it would be
    /// stored, low half (length | first four bytes << 32) and high half (bytes 4..12
    /// when the literal is at most 12 bytes, else anything). Decided for every row
    /// when the literal is at most 12 bytes on views (the whole view is compared)
    /// or 8 on offsets, else for rows of another length or prefix.
    Equal {
        /// `<>` rather than `=`.
        negated: bool,
    },
    /// `<op> literal` for an ordering. Parameter: the literal's first four bytes,
    /// zero-padded, as a big-endian number (and nothing). Decided for rows whose first
    /// four bytes differ from the literal's.
    Order(CmpOp),
    /// Starts with the literal. Parameters: its length in bytes, and its first
    /// `min(length, 4)` bytes (little-endian, zero-padded). Decided for rows shorter
    /// than it or with another prefix, and for all rows when it is at most 4 bytes.
    Prefix,
    /// The row (`case`: as it is, or upper- or lower-cased) equals, starts with,
    /// ends with or contains (`find`) a literal, decided for rows of up to 8 bytes,
    /// whose bytes the kernel has: compared eight bytes at a time (`Contains`: at
    /// each position), and for `Upper`/`Lower` only when they are ASCII, mapped
    /// letter by letter first (other rows, whose Unicode mapping can change their
    /// length, are the helper's). Parameters: the literal's length in its low 32 bits
    /// and, in its high 32 bits, a length beyond which every row is FALSE
    /// ([`QuickTest::short_row_limit`]); its first eight bytes, little-endian,
    /// zero-padded. A row `AsIs` shorter than the literal is FALSE too.
    ShortRow {
        /// How the row is compared with the literal.
        find: Find,
        /// What the row is mapped to first.
        case: CaseMap,
    },
}

impl QuickTest {
    /// For [`QuickTest::ShortRow`], the longest row that can hold for a literal of
    /// `len` bytes (`u32::MAX`: no bound): three times the literal for a case-mapped
    /// equality, since no character maps to less than a third of its bytes (the
    /// Kelvin sign, three bytes, lower-cases to `k`).
    pub fn short_row_limit(find: Find, case: CaseMap, len: u32) -> u32 {
        match (find, case) {
            (Find::Equal, CaseMap::Upper | CaseMap::Lower) => len.saturating_mul(3),
            _ => u32::MAX,
        }
    }
}

/// How [`QuickTest::ShortRow`] compares a row with its literal (`LIKE`'s shapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Find {
    /// `= literal`, `LIKE 'literal'`.
    Equal,
    /// `LIKE 'literal%'`.
    Prefix,
    /// `LIKE '%literal'`.
    Suffix,
    /// `LIKE '%literal%'`.
    Contains,
}

/// What [`QuickTest::ShortRow`] maps a row to before comparing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaseMap {
    /// The row as it is.
    AsIs,
    /// `upper(row)`.
    Upper,
    /// `lower(row)`.
    Lower,
}

/// A [`QuickTest`] with its two parameter slots (see [`Node::Helper`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuickCheck {
    /// The test.
    pub test: QuickTest,
    /// The parameter slots (`I64`) it reads.
    pub params: [usize; 2],
}

/// What the kernel produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One BOOLEAN output; rows where it is TRUE are selected.
    Filter,
    /// Values and validity for each output.
    Project,
}

/// How the values of a variable-length (string or binary) input column are laid out
/// in memory. The kernel reads each layout in place: a block's values become views
/// (an address and a byte length per row) whatever the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ByteLayout {
    /// `i32` offsets (`rows + 1` of them, from row 0) into one data buffer: Arrow's
    /// `Utf8` and `Binary`.
    #[default]
    Offsets32,
    /// `i64` offsets into one data buffer: `LargeUtf8` and `LargeBinary`.
    Offsets64,
    /// 16-byte views, one per row: `u32` length; up to 12 bytes inline after it,
    /// zero-padded; longer values keep a 4-byte prefix, then the `u32` index of
    /// their data buffer and the `u32` offset in it: `Utf8View` and `BinaryView`.
    /// The slot's `data` points at the array of the data buffers' addresses.
    Views,
}

/// An input column of the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputSpec {
    /// Physical type.
    pub ty: PType,
    /// Whether the kernel reads a validity bitmap for it.
    pub nullable: bool,
    /// For [`PType::Str`] inputs, how the values are laid out ([`ByteLayout::Offsets32`]
    /// for every other type).
    pub layout: ByteLayout,
    /// For [`PType::I64`] inputs, whether each value is stored in 16 bytes, a
    /// little-endian `i128` (Arrow's `Decimal128` of at most 18 digits): the kernel
    /// reads the low 8 bytes of each, and a valid value whose high 8 bytes are not
    /// the sign of the low ones (it does not fit an `i64`) is an error of its row.
    /// Reading the column in place spares a narrowing copy per batch.
    pub stored_as_i128: bool,
}

impl InputSpec {
    /// A non-nullable input of type `ty` in the default layout.
    pub fn new(ty: PType) -> InputSpec {
        InputSpec {
            ty,
            nullable: false,
            layout: ByteLayout::Offsets32,
            stored_as_i128: false,
        }
    }
}

/// A complete kernel description.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    /// The DAG; children come before parents.
    pub nodes: Vec<Node>,
    /// Input columns, by slot.
    pub inputs: Vec<InputSpec>,
    /// Parameter types, by slot (8 bytes each; a [`PType::Str`] parameter points at the
    /// string's `{ u64 address, u64 length }`, a [`PType::I128`] one at its 16-byte
    /// value).
    pub params: Vec<PType>,
    /// Output nodes (one for a filter).
    pub outputs: Vec<NodeId>,
    /// Filter or projection.
    pub mode: Mode,
}

impl Node {
    /// Whether this is a column, a parameter or a constant: read or made again at no
    /// cost where it is used.
    pub fn is_input_or_constant(&self) -> bool {
        matches!(
            self,
            Node::Input(_)
                | Node::Param(_)
                | Node::Const(..)
                | Node::Const128(_)
                | Node::Bool(_)
                | Node::Null(_)
        )
    }

    /// The nodes this one reads, in order.
    pub fn operands(&self) -> Vec<NodeId> {
        match self {
            Node::Input(_)
            | Node::Param(_)
            | Node::Const(..)
            | Node::Const128(_)
            | Node::Bool(_)
            | Node::Null(_)
            | Node::Helper { .. } => vec![],
            Node::Arith(_, l, r) | Node::Cmp(_, l, r) | Node::Distinct(l, r, _) => vec![*l, *r],
            Node::Neg(x)
            | Node::RangeCheck(x, ..)
            | Node::Abs(x)
            | Node::Not(x)
            | Node::IsNull(x, _)
            | Node::Truth(x, _)
            | Node::Cast(x, _)
            | Node::Extract(x, ..)
            | Node::InSet { x, .. } => vec![*x],
            Node::And(c) | Node::Or(c) | Node::Coalesce(c) | Node::Pack(c) => c.clone(),
            Node::Call { args, .. } => args.clone(),
            Node::Case(branches, else_expr) => branches
                .iter()
                .flat_map(|&(c, v)| [c, v])
                .chain([*else_expr])
                .collect(),
            Node::InList { x, values, .. } => {
                std::iter::once(*x).chain(values.iter().copied()).collect()
            }
            Node::DivideByLiteral { x, magic, .. } => {
                std::iter::once(*x).chain(magic.iter().copied()).collect()
            }
        }
    }
}

impl Program {
    /// The type of a node's value.
    pub fn type_of(&self, id: NodeId) -> PType {
        match &self.nodes[id] {
            Node::Input(s) => self.inputs[*s].ty,
            Node::Param(s) => self.params[*s],
            Node::Const(t, _) | Node::Null(t) | Node::Cast(_, t) => *t,
            Node::Const128(_) | Node::Pack(_) => PType::I128,
            Node::Extract(_, _, t) => *t,
            Node::Arith(_, l, _) | Node::DivideByLiteral { x: l, .. } => self.type_of(*l),
            Node::Neg(x) | Node::Abs(x) | Node::RangeCheck(x, ..) => self.type_of(*x),
            Node::Case(_, e) => self.type_of(*e),
            Node::Coalesce(args) => self.type_of(args[0]),
            Node::Helper { out, .. } => *out,
            Node::Call { ret, .. } => *ret,
            Node::Bool(_)
            | Node::Cmp(..)
            | Node::Distinct(..)
            | Node::And(_)
            | Node::Or(_)
            | Node::Not(_)
            | Node::IsNull(..)
            | Node::Truth(..)
            | Node::InList { .. }
            | Node::InSet { .. } => PType::Bool,
        }
    }

    /// Checks the structure so that code generation cannot fail on a malformed
    /// program: ids in range and pointing backwards, operand types consistent.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.nodes.len();
        for (id, node) in self.nodes.iter().enumerate() {
            let child = |c: NodeId| -> Result<PType, String> {
                if c >= id {
                    return Err(format!(
                        "node {id} refers to node {c}, which does not precede it"
                    ));
                }
                Ok(self.type_of(c))
            };
            let same = |a: NodeId, b: NodeId| -> Result<PType, String> {
                let (ta, tb) = (child(a)?, child(b)?);
                if ta != tb {
                    return Err(format!("node {id}: operand types differ ({ta:?}, {tb:?})"));
                }
                Ok(ta)
            };
            let boolean = |c: NodeId| -> Result<(), String> {
                match child(c)? {
                    PType::Bool => Ok(()),
                    t => Err(format!("node {id}: operand {c} must be Bool, is {t:?}")),
                }
            };
            match node {
                Node::Input(s) if *s >= self.inputs.len() => {
                    return Err(format!("node {id}: no input slot {s}"))
                }
                Node::Param(s) if *s >= self.params.len() => {
                    return Err(format!("node {id}: no parameter slot {s}"))
                }
                Node::Const(PType::I128, _) => {
                    return Err(format!("node {id}: a 128-bit constant is a Const128"))
                }
                Node::Input(_)
                | Node::Param(_)
                | Node::Const(..)
                | Node::Const128(_)
                | Node::Bool(_)
                | Node::Null(_)
                | Node::Call { .. } => {}
                Node::Arith(op, l, r) => {
                    let t = same(*l, *r)?;
                    if !(t.is_int() || t.is_float()) {
                        return Err(format!("node {id}: arithmetic on {t:?}"));
                    }
                    match (t == PType::I128, op) {
                        // 128-bit division and remainder are calls of `__divti3` and
                        // `__modti3`, which the JIT defines (`jit::WIDE_DIVISION`).
                        (
                            true,
                            ArithOp::Add
                            | ArithOp::Sub
                            | ArithOp::Mul
                            | ArithOp::WideMul
                            | ArithOp::Div
                            | ArithOp::Rem,
                        ) => {}
                        (false, ArithOp::WideMul) => {
                            return Err(format!("node {id}: WideMul of {t:?}"))
                        }
                        (false, _) => {}
                        (true, op) => return Err(format!("node {id}: {op:?} of I128")),
                    }
                }
                Node::Neg(x) | Node::Abs(x) => {
                    let t = child(*x)?;
                    if !(t.is_int() || t.is_float()) {
                        return Err(format!("node {id}: arithmetic on {t:?}"));
                    }
                }
                Node::RangeCheck(x, lo, hi) => {
                    let t = child(*x)?;
                    let in_type = int_range(t).is_some_and(|(min, max)| min <= *lo && *hi <= max);
                    if !t.is_signed() || lo > hi || !in_type {
                        return Err(format!("node {id}: range check of {t:?}"));
                    }
                }
                Node::Cmp(_, l, r) | Node::Distinct(l, r, _) => {
                    let t = same(*l, *r)?;
                    if matches!(t, PType::Str | PType::Ptr) {
                        return Err(format!("node {id}: comparison of {t:?} needs a helper"));
                    }
                }
                Node::And(c) | Node::Or(c) => {
                    if c.is_empty() {
                        return Err(format!("node {id}: AND/OR without children"));
                    }
                    for x in c {
                        boolean(*x)?;
                    }
                }
                Node::Not(x) | Node::Truth(x, _) => boolean(*x)?,
                Node::IsNull(x, _) => {
                    child(*x)?;
                }
                Node::Case(branches, e) => {
                    let t = child(*e)?;
                    for (c, v) in branches {
                        boolean(*c)?;
                        if child(*v)? != t {
                            return Err(format!("node {id}: CASE values differ in type"));
                        }
                    }
                    if t == PType::Ptr {
                        return Err(format!("node {id}: CASE of {t:?}"));
                    }
                }
                Node::Coalesce(args) => {
                    let t = child(*args.first().ok_or(format!("node {id}: empty COALESCE"))?)?;
                    for a in args {
                        if child(*a)? != t {
                            return Err(format!("node {id}: COALESCE arguments differ in type"));
                        }
                    }
                    if t == PType::Ptr {
                        return Err(format!("node {id}: COALESCE of {t:?}"));
                    }
                }
                Node::InList { x, values, .. } => {
                    let t = child(*x)?;
                    if matches!(t, PType::Str | PType::Ptr) {
                        return Err(format!("node {id}: IN list of {t:?} needs a helper"));
                    }
                    for v in values {
                        if child(*v)? != t {
                            return Err(format!("node {id}: IN list value of another type"));
                        }
                    }
                }
                Node::InSet { x, state, .. } => {
                    let t = child(*x)?;
                    if !(t.is_int() || t.is_float()) || t == PType::I128 {
                        return Err(format!("node {id}: IN set of {t:?}"));
                    }
                    if *state >= self.params.len() || self.params[*state] != PType::Ptr {
                        return Err(format!("node {id}: IN set state must be a Ptr parameter"));
                    }
                }
                Node::Cast(x, to) => {
                    let t = child(*x)?;
                    let ok = |t: PType| t.is_int() || t.is_float() || t == PType::Bool;
                    let wide = [t, *to].contains(&PType::I128);
                    if !ok(t)
                        || !ok(*to)
                        || (t == PType::Bool && to.is_float())
                        || (t.is_float() && *to == PType::Bool)
                        || (wide && (t.is_float() || to.is_float()))
                    {
                        return Err(format!("node {id}: no cast from {t:?} to {to:?}"));
                    }
                }
                Node::Extract(x, lsb, to) => {
                    let t = child(*x)?;
                    if !t.is_int() || !to.is_int() || lsb + 8 * to.width() > 8 * t.width() {
                        return Err(format!("node {id}: no {to:?} at bit {lsb} of {t:?}"));
                    }
                }
                Node::DivideByLiteral { x, magic, .. } => {
                    let t = child(*x)?;
                    if !matches!(t, PType::I32 | PType::I64) {
                        return Err(format!("node {id}: division by a literal of {t:?}"));
                    }
                    for &m in magic {
                        if child(m)? != t {
                            return Err(format!("node {id}: a division parameter not of {t:?}"));
                        }
                    }
                }
                Node::Pack(parts) => {
                    let mut bytes = 0;
                    for p in parts {
                        let t = child(*p)?;
                        if !t.is_int() {
                            return Err(format!("node {id}: packing {t:?}"));
                        }
                        bytes += t.width();
                    }
                    if bytes != PType::I128.width() {
                        return Err(format!("node {id}: parts of {bytes} bytes packed in 16"));
                    }
                }
                Node::Helper {
                    state,
                    args,
                    out,
                    quick,
                    ..
                } => {
                    if let Some(q) = quick {
                        if args.len() != 1 || *out != PType::Bool {
                            return Err(format!(
                                "node {id}: quick checks are for predicates on one column"
                            ));
                        }
                        if q.params
                            .iter()
                            .any(|&p| p >= self.params.len() || self.params[p] != PType::I64)
                        {
                            return Err(format!("node {id}: quick check parameters must be I64"));
                        }
                    }
                    if *state >= self.params.len() || self.params[*state] != PType::Ptr {
                        return Err(format!("node {id}: helper state must be a Ptr parameter"));
                    }
                    if args.is_empty() || args.len() > 2 {
                        return Err(format!("node {id}: helpers take one or two string inputs"));
                    }
                    for s in args {
                        if *s >= self.inputs.len() || self.inputs[*s].ty != PType::Str {
                            return Err(format!(
                                "node {id}: helper argument {s} is not a string input"
                            ));
                        }
                    }
                    if matches!(out, PType::Str | PType::Ptr | PType::I128) {
                        return Err(format!("node {id}: helper output {out:?}"));
                    }
                }
            }
            if let Node::Call {
                callee, args, ret, ..
            } = node
            {
                let types = args
                    .iter()
                    .map(|a| child(*a))
                    .collect::<Result<Vec<_>, _>>()?;
                match callee {
                    Callee::Intrinsic { .. } => {
                        if !ret.is_float() || types.is_empty() || types.iter().any(|t| t != ret) {
                            return Err(format!(
                                "node {id}: intrinsics take and return one float type"
                            ));
                        }
                    }
                    Callee::Helper { state, .. } => {
                        if *state >= self.params.len() || self.params[*state] != PType::Ptr {
                            return Err(format!("node {id}: helper state must be a Ptr parameter"));
                        }
                        if *ret == PType::Ptr || types.contains(&PType::Ptr) {
                            return Err(format!("node {id}: pointers are not call values"));
                        }
                    }
                }
            }
            if let Node::Arith(op @ (ArithOp::FloorDiv | ArithOp::FloorMod), _, r) = node {
                if !matches!(self.nodes[*r], Node::Const(_, v) if (v as i64) > 0) {
                    return Err(format!(
                        "node {id}: {op:?} needs a positive constant divisor"
                    ));
                }
            }
        }
        if self.outputs.is_empty() {
            return Err("a kernel needs at least one output".into());
        }
        for &o in &self.outputs {
            if o >= n {
                return Err(format!("output {o} is not a node"));
            }
            if self.type_of(o) == PType::Ptr {
                return Err(format!("output {o} has a type kernels cannot write"));
            }
        }
        if self.mode == Mode::Filter
            && (self.outputs.len() != 1 || self.type_of(self.outputs[0]) != PType::Bool)
        {
            return Err("a filter has exactly one Bool output".into());
        }
        for (s, i) in self.inputs.iter().enumerate() {
            if i.ty == PType::Ptr {
                return Err(format!("input {s} cannot be a pointer"));
            }
            if i.ty != PType::Str && i.layout != ByteLayout::Offsets32 {
                return Err(format!("input {s}: only strings have a byte layout"));
            }
            if i.stored_as_i128 && i.ty != PType::I64 {
                return Err(format!(
                    "input {s}: only i64 inputs are read from i128 values"
                ));
            }
        }
        Ok(())
    }
}

/// The range of an integer type.
pub fn int_range(t: PType) -> Option<(i128, i128)> {
    Some(match t {
        PType::I8 => (i8::MIN.into(), i8::MAX.into()),
        PType::I16 => (i16::MIN.into(), i16::MAX.into()),
        PType::I32 => (i32::MIN.into(), i32::MAX.into()),
        PType::I64 => (i64::MIN.into(), i64::MAX.into()),
        PType::I128 => (i128::MIN, i128::MAX),
        PType::U8 => (0, u8::MAX.into()),
        PType::U16 => (0, u16::MAX.into()),
        PType::U32 => (0, u32::MAX.into()),
        PType::U64 => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// One input column as the kernel reads it (`#[repr(C)]`, shared with helpers).
///
/// * numeric: `values` points at the first value of the (possibly sliced) array (a
///   16-byte value for an input [`InputSpec::stored_as_i128`]);
/// * boolean: `values` points at 64-bit words whose bit 0 is row 0;
/// * string ([`ByteLayout`]): with offsets, `values` points at the `i32` or `i64`
///   offsets of row 0, `data` at the bytes; with views, `values` points at the
///   16-byte view of row 0 and `data` at the data buffers' addresses (`*const u8`
///   each, in buffer-index order);
/// * `validity`, when the kernel reads one, points at 64-bit words whose bit 0 is
///   row 0; it is null otherwise.
///
/// Word buffers must hold `ceil(rows / 64)` words.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// Values, offsets or value words.
    pub values: *const u8,
    /// Validity words or null.
    pub validity: *const u64,
    /// String bytes (offset layouts), the data buffers' addresses (views), or null.
    pub data: *const u8,
}

/// One output of a projection kernel (`#[repr(C)]`).
///
/// `values` holds `rows` values (booleans: `ceil(rows / 64)` words; strings: `rows`
/// addresses followed by `rows` byte lengths, all `u64`), `validity`
/// `ceil(rows / 64)` words.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct OutSlot {
    /// Where values go.
    pub values: *mut u8,
    /// Where validity words go.
    pub validity: *mut u64,
}

/// The values of a long `IN` list, as [`Node::InSet`] looks them up.
///
/// Values are kept as 64-bit keys in which equal SQL values are equal integers:
/// integers sign- or zero-extended, floats with `-0.0` as `0.0` and every NaN as one
/// NaN (SQL equality: NaN = NaN, -0.0 = 0.0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InSet {
    keys: Vec<u64>,
}

impl InSet {
    /// A set of values of type `t`, each given as the bits a parameter of `t` holds
    /// (integers sign- or zero-extended to 64 bits, floats' IEEE bits).
    pub fn new(t: PType, values: impl IntoIterator<Item = u64>) -> InSet {
        let mut keys: Vec<u64> = values.into_iter().map(|v| InSet::key(t, v)).collect();
        keys.sort_unstable();
        keys.dedup();
        InSet { keys }
    }

    /// The key of a value of type `t` given as parameter bits.
    pub fn key(t: PType, bits: u64) -> u64 {
        match t {
            PType::F64 => {
                let x = f64::from_bits(bits);
                if x == 0.0 {
                    0
                } else if x.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    bits
                }
            }
            PType::F32 => {
                let x = f32::from_bits(bits as u32);
                u64::from(if x == 0.0 {
                    0
                } else if x.is_nan() {
                    f32::NAN.to_bits()
                } else {
                    x.to_bits()
                })
            }
            _ => bits,
        }
    }

    /// Whether the set holds `key`.
    pub fn contains(&self, key: u64) -> bool {
        self.keys.binary_search(&key).is_ok()
    }

    /// The number of distinct values.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The lookup kernels call for [`Node::InSet`]: bit `i` of the result is set when
/// `keys[i]` is in the set, for the `LANES` keys of a block.
///
/// # Safety
/// `set` points at a live [`InSet`] and `keys` at `LANES` readable `u64`s.
pub(crate) unsafe extern "C" fn in_set_lookup(set: *const InSet, keys: *const u64) -> u64 {
    // SAFETY: the caller's contract above.
    let (set, keys) = unsafe {
        (
            &*set,
            std::slice::from_raw_parts(keys, crate::LANES as usize),
        )
    };
    let mut mask = 0u64;
    for (i, &k) in keys.iter().enumerate() {
        if set.contains(k) {
            mask |= 1 << i;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_set_keys_follow_sql_equality() {
        let f64_key = |x: f64| InSet::key(PType::F64, x.to_bits());
        assert_eq!(f64_key(-0.0), f64_key(0.0));
        assert_eq!(f64_key(f64::NAN), f64_key(-f64::NAN));
        assert_ne!(f64_key(1.0), f64_key(-1.0));
        let f32_key = |x: f32| InSet::key(PType::F32, u64::from(x.to_bits()));
        assert_eq!(f32_key(-0.0), f32_key(0.0));
        assert_eq!(f32_key(f32::NAN), f32_key(-f32::NAN));
        let set = InSet::new(PType::I64, [5u64, (-3i64) as u64, 5, 9]);
        assert_eq!(set.len(), 3);
        let keys: [u64; crate::LANES as usize] = std::array::from_fn(|i| {
            if i % 2 == 0 {
                5
            } else {
                ((-3i64) as u64).wrapping_add(i as u64)
            }
        });
        // SAFETY: `set` is live and `keys` has LANES values.
        let mask = unsafe { in_set_lookup(&set, keys.as_ptr()) };
        // Even lanes hold 5; lane 1 holds -3 + 1, no odd lane holds -3 exactly.
        assert_eq!(mask, 0x5555);
    }
}
