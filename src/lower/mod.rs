//! Lowering: a [`TypedExpr`] to a back-end [`Program`].
//!
//! Logical types become physical ones (DATE is `i32` days, TIMESTAMP `i64` units),
//! temporal casts become checked multiplications and floor divisions, literals become
//! run-time parameters, string operations on columns become calls to the specialized
//! helpers in [`crate::strings`], functions become [`Node::Call`]s (an LLVM intrinsic
//! or the row-wise implementation of the [registry](crate::functions), over blocks),
//! strings computed in the kernel are views, and identical subtrees become one node
//! (the program is a DAG).

use std::any::Any;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use arrow_schema::{DataType, IntervalUnit, Schema, TimeUnit};
use broadhead_codegen::{
    int_range, ArithOp, ByteLayout, Callee, CaseMap, CmpOp, Find, Helper, InSet, InputSpec, Mode,
    Node, NodeId, PType, Program, QuickCheck, QuickTest, TruthTest,
};

use crate::functions::row::{self, CallState};
use crate::functions::{cast, string, FuncId, Lowering, RowImpl, Signature};
use crate::layout::{byte_layout, quick_params};
use crate::scalar::ScalarValue;
use crate::strings::{self, computed, helpers};
use crate::typed::{TypedExpr, TypedKind};
use crate::types::{is_time, sql_type_name, time_unit, units_per_second};

mod interval;

/// The longest numeric `IN` list compiled as a chain of comparisons; longer lists
/// are looked up in a sorted set ([`Node::InSet`]), so compile time does not grow
/// with the list.
pub(crate) const IN_CHAIN_MAX: usize = 32;

/// The longest `IN` list of strings on a string column compiled as one equality per
/// value (`s = 'AIR' OR s = 'AIR REG'`): each decides, in the kernel, every row its
/// length and first four bytes decide ([`QuickTest::Equal`]), where the set helper is
/// called for every block. Longer lists use the set helper (one call a block rather
/// than one check a value).
pub(crate) const IN_EQUALITIES_MAX: usize = 4;

/// The most kernel nodes one expression may lower to; larger expressions are
/// interpreted, because LLVM's optimization time grows faster than the kernel.
pub(crate) const MAX_JIT_NODES: usize = 2_000;

/// A construct the JIT does not compile (the caller falls back to the interpreter).
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported(pub String);

/// A subtree the JIT does not compile, evaluated by the interpreter over the batch
/// before the kernel runs and read by the kernel as an extra input (a virtual input
/// slot). Only subtrees that cannot raise an error are interpreted this way (an error
/// must come from the rows whose value is used, which the kernel's masks decide), so
/// evaluating them over every row is safe.
#[derive(Debug, Clone)]
pub(crate) struct Interpreted {
    /// The input slot the kernel reads its value from.
    pub slot: usize,
    /// The subtree (over the same schema as the lowered expressions).
    pub expr: TypedExpr,
    /// Why the JIT does not compile it.
    pub reason: String,
}

/// A program with what it needs at run time.
pub(crate) struct Lowered {
    /// The program, with every input marked non-nullable (variants set that per batch).
    pub program: Program,
    /// Schema column index of each input slot; `None` for the slot of an
    /// [`Interpreted`] subtree.
    pub columns: Vec<Option<usize>>,
    /// The subtrees the interpreter evaluates for the kernel, by slot.
    pub interpreted: Vec<Interpreted>,
    /// Parameter values (helper states as addresses into `states`).
    pub params: Vec<u64>,
    /// Helper states; their addresses are in `params`, so they live as long as this.
    #[allow(
        dead_code,
        reason = "never read: owned so the addresses in `params` stay valid"
    )]
    pub states: Vec<Box<dyn Any + Send + Sync>>,
}

/// The operands of a chain of `||` (`concat_op`) calls, left to right.
fn concat_operands<'e>(args: &'e [TypedExpr], out: &mut Vec<&'e TypedExpr>) {
    for a in args {
        match &a.kind {
            TypedKind::Call { sig, args } if sig.name == "concat_op" => concat_operands(args, out),
            _ => out.push(a),
        }
    }
}

/// The physical type of a logical one.
pub(crate) fn physical(t: &DataType) -> Option<PType> {
    Some(match t {
        DataType::Boolean => PType::Bool,
        DataType::Int8 => PType::I8,
        DataType::Int16 => PType::I16,
        DataType::Int32 | DataType::Date32 | DataType::Time32(_) => PType::I32,
        DataType::Int64 | DataType::Timestamp(_, _) | DataType::Time64(_) | DataType::Date64 => {
            PType::I64
        }
        DataType::UInt8 => PType::U8,
        DataType::UInt16 => PType::U16,
        DataType::UInt32 => PType::U32,
        DataType::UInt64 => PType::U64,
        DataType::Float32 => PType::F32,
        DataType::Float64 => PType::F64,
        DataType::Utf8 | DataType::Binary => PType::Str,
        // A decimal is its unscaled value (the scale is in the bound tree): in 64 bits
        // up to 18 digits, else in 128 bits (both read in place from the column);
        // `Decimal256` values are not compiled.
        DataType::Decimal128(p, _) if *p <= DECIMAL_I64_DIGITS => PType::I64,
        DataType::Decimal128(..) => PType::I128,
        // An INTERVAL is Arrow's 16 bytes read as one i128 (`lower::interval`); the
        // other intervals and durations are read as their stored integers and
        // converted to it.
        DataType::Interval(IntervalUnit::MonthDayNano) => PType::I128,
        DataType::Interval(IntervalUnit::YearMonth) => PType::I32,
        DataType::Interval(IntervalUnit::DayTime) | DataType::Duration(_) => PType::I64,
        _ => return None,
    })
}

/// The physical type a projection's kernel writes a value of type `t` as: its own,
/// but a decimal computed as an `i64` is written as the `i128` its `Decimal128`
/// array holds (sign-extended as the kernel stores it, rather than in a pass over
/// the output after it).
pub(crate) fn output_physical(t: &DataType) -> Option<PType> {
    match physical(t) {
        Some(PType::I64) if crate::types::is_decimal(t) => Some(PType::I128),
        p => p,
    }
}

/// The largest precision of a decimal the kernel computes as an `i64`.
pub(crate) const DECIMAL_I64_DIGITS: u8 = 18;

/// Whether the kernel reads an input of type `data_type` as `ty` from 16-byte
/// values: a `Decimal128` of at most [`DECIMAL_I64_DIGITS`] digits is computed as
/// an `i64` but read in place, the low halves of its values (a value that does not
/// fit is an error).
fn stored_as_i128(data_type: &DataType, ty: PType) -> bool {
    ty == PType::I64 && matches!(data_type, DataType::Decimal128(..))
}

/// The largest precision of a decimal the kernel computes (as an `i128`).
pub(crate) const DECIMAL_JIT_DIGITS: u8 = 38;

/// Why the JIT does not compile rounding functions of 128-bit decimals.
const WIDE_ROUNDING: &str = "rounding functions of 128-bit decimals are not compiled";

/// The largest magnitude of a decimal of `digits` digits (`10^digits - 1`).
fn decimal_max(digits: u8) -> Option<i128> {
    crate::decimal::pow10::<i128>(u32::from(digits)).map(|m| m - 1)
}

/// Lowers the expressions (bound to a schema whose string columns are `Utf8`) into
/// one kernel with one output each; `schema` is the schema of the batches the kernel
/// reads, whose string columns may be in any layout (`LargeUtf8`, `Utf8View`), read
/// in place.
pub(crate) fn lower(
    exprs: &[&TypedExpr],
    mode: Mode,
    schema: &Schema,
) -> Result<Lowered, Unsupported> {
    let mut l = Lowerer {
        layouts: schema
            .fields()
            .iter()
            .map(|f| byte_layout(f.data_type()).unwrap_or_default())
            .collect(),
        stored: schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect(),
        ..Lowerer::default()
    };
    let mut outputs = Vec::with_capacity(exprs.len());
    for e in exprs {
        if matches!(e.data_type, DataType::Null) {
            return Err(Unsupported(format!(
                "{} results",
                sql_type_name(&e.data_type)
            )));
        }
        let before = l.nodes.len();
        let node = l.expr(e)?;
        let written = output_physical(&e.data_type);
        outputs.push(match written {
            Some(t) if mode == Mode::Project && written != physical(&e.data_type) => {
                l.add(Node::Cast(node, t))
            }
            _ => node,
        });
        // Counted per expression (what it adds), so expressions that lower alone
        // also lower together.
        let added = l.nodes.len() - before;
        if added > MAX_JIT_NODES {
            return Err(Unsupported(format!(
                "an expression of {added} kernel nodes (the JIT compiles up to {MAX_JIT_NODES})"
            )));
        }
    }
    Ok(Lowered {
        program: Program {
            nodes: l.nodes,
            inputs: l.inputs,
            params: l.params,
            outputs,
            mode,
        },
        columns: l.columns,
        interpreted: l.interpreted,
        params: l.values,
        states: l.states,
    })
}

#[derive(Default)]
struct Lowerer {
    nodes: Vec<Node>,
    index: HashMap<Node, NodeId>,
    columns: Vec<Option<usize>>,
    interpreted: Vec<Interpreted>,
    inputs: Vec<InputSpec>,
    params: Vec<PType>,
    values: Vec<u64>,
    states: Vec<Box<dyn Any + Send + Sync>>,
    state_slots: HashMap<(&'static str, String), usize>,
    /// Parameter slots by (type, bits), so equal literals share one.
    param_slots: HashMap<(PType, u64), usize>,
    /// The nodes of the enclosing `Let`s' values, by id.
    shared: HashMap<usize, NodeId>,
    /// The layout of each schema column (of strings; the default for others).
    layouts: Vec<ByteLayout>,
    /// The Arrow type of each schema column (a decimal's storage width).
    stored: Vec<DataType>,
}

/// How much a [`Lowerer`] held at some point, to undo what a failed subtree added.
struct Mark {
    nodes: usize,
    inputs: usize,
    params: usize,
    states: usize,
    interpreted: usize,
}

/// Whether the interpreter may evaluate `e` over every row for the kernel: it cannot
/// raise an error (nor refers to a shared value) and is not a literal.
fn interpretable(e: &TypedExpr) -> bool {
    !e.can_error() && !matches!(e.kind, TypedKind::Literal(_))
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(what.into()))
}

fn cmp_op(f: FuncId) -> CmpOp {
    match f {
        FuncId::Equal => CmpOp::Eq,
        FuncId::NotEqual => CmpOp::Ne,
        FuncId::Less => CmpOp::Lt,
        FuncId::LessEq => CmpOp::Le,
        FuncId::Greater => CmpOp::Gt,
        _ => CmpOp::Ge,
    }
}

/// What a view's first bytes decide of `column <op> literal`.
fn quick_test(op: CmpOp) -> QuickTest {
    match op {
        CmpOp::Eq => QuickTest::Equal { negated: false },
        CmpOp::Ne => QuickTest::Equal { negated: true },
        ordering => QuickTest::Order(ordering),
    }
}

fn flipped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// `e` with its values of type `NULL` (always NULL: an untyped `NULL`, a column of
/// Arrow type `Null`, a `CASE` or `COALESCE` of those) typed `to` instead, so the
/// kernel has a physical type for them; what decides which branch is taken (and
/// its errors) stays. `e` itself when it is not of type `NULL`.
fn null_typed_as<'e>(e: &'e TypedExpr, to: &DataType) -> Result<Cow<'e, TypedExpr>, Unsupported> {
    if e.data_type != DataType::Null {
        return Ok(Cow::Borrowed(e));
    }
    let null = || TypedExpr::literal(ScalarValue::Null(to.clone()), e.span);
    let kind = match &e.kind {
        TypedKind::Literal(_) | TypedKind::Column(_) => return Ok(Cow::Owned(null())),
        // A shared NULL-typed value is lowered as a BOOLEAN (its errors are the
        // rows where it fails): `CASE WHEN $n IS NULL THEN NULL ELSE NULL END`
        // keeps them.
        TypedKind::Ref(_) => TypedKind::Case {
            branches: vec![(
                TypedExpr::new(
                    TypedKind::IsNull {
                        expr: Box::new(e.clone()),
                        negated: false,
                    },
                    DataType::Boolean,
                    e.span,
                ),
                null(),
            )],
            else_expr: Box::new(null()),
        },
        TypedKind::Case {
            branches,
            else_expr,
        } => TypedKind::Case {
            branches: branches
                .iter()
                .map(|(c, v)| Ok((c.clone(), null_typed_as(v, to)?.into_owned())))
                .collect::<Result<_, Unsupported>>()?,
            else_expr: Box::new(null_typed_as(else_expr, to)?.into_owned()),
        },
        TypedKind::Coalesce(args) => TypedKind::Coalesce(
            args.iter()
                .map(|a| null_typed_as(a, to).map(Cow::into_owned))
                .collect::<Result<_, _>>()?,
        ),
        TypedKind::Let { id, value, body } => TypedKind::Let {
            id: *id,
            value: value.clone(),
            body: Box::new(null_typed_as(body, to)?.into_owned()),
        },
        _ => return unsupported("a NULL-typed value computed by a function"),
    };
    Ok(Cow::Owned(TypedExpr::new(kind, to.clone(), e.span)))
}

/// Whether values of `t` are byte strings to the kernel (VARCHAR and BLOB: views,
/// compared byte by byte).
fn is_bytes(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Binary)
}

/// The bytes of a VARCHAR or BLOB literal.
fn literal_bytes(v: &ScalarValue) -> Option<&[u8]> {
    match v {
        ScalarValue::Utf8(s) => Some(s.as_bytes()),
        ScalarValue::Binary(b) => Some(b),
        _ => None,
    }
}

/// The bits of a numeric, boolean or temporal literal as the kernel reads them.
fn literal_bits(v: &ScalarValue) -> Option<u64> {
    use ScalarValue::*;
    Some(match v {
        Int8(x) => *x as i64 as u64,
        Int16(x) => *x as i64 as u64,
        Int32(x) | Date32(x) => *x as i64 as u64,
        Int64(x) | Timestamp(x, _, _) | Time(x, _) => *x as u64,
        UInt8(x) => *x as u64,
        UInt16(x) => *x as u64,
        UInt32(x) => *x as u64,
        UInt64(x) => *x,
        Float32(x) => x.to_bits() as u64,
        Float64(x) => x.to_bits(),
        Decimal128(x, p, _) if *p <= DECIMAL_I64_DIGITS => i64::try_from(*x).ok()? as u64,
        _ => return None,
    })
}

impl Lowerer {
    fn add(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(node.clone());
        self.index.insert(node, id);
        id
    }

    /// The input slot of column `column`, read as `ty`.
    fn slot(&mut self, column: usize, ty: PType) -> usize {
        match self.columns.iter().position(|&c| c == Some(column)) {
            Some(s) => s,
            None => {
                let layout = match ty {
                    PType::Str => self.layouts.get(column).copied().unwrap_or_default(),
                    _ => ByteLayout::Offsets32,
                };
                self.columns.push(Some(column));
                self.inputs.push(InputSpec {
                    layout,
                    stored_as_i128: self
                        .stored
                        .get(column)
                        .is_some_and(|t| stored_as_i128(t, ty)),
                    ..InputSpec::new(ty)
                });
                self.columns.len() - 1
            }
        }
    }

    /// A literal as a parameter, or a NaN as a constant: the back end takes float
    /// parameters to be numbers, and leaves their NaN tests out of comparisons.
    fn param(&mut self, ty: PType, bits: u64) -> NodeId {
        let nan = match ty {
            PType::F64 => f64::from_bits(bits).is_nan(),
            PType::F32 => f32::from_bits(bits as u32).is_nan(),
            _ => false,
        };
        if nan {
            return self.add(Node::Const(ty, bits));
        }
        let slot = self.param_slot(ty, bits);
        self.add(Node::Param(slot))
    }

    /// The parameter slot of a value (equal values share one).
    fn param_slot(&mut self, ty: PType, bits: u64) -> usize {
        match self.param_slots.get(&(ty, bits)) {
            Some(&slot) => slot,
            None => {
                self.params.push(ty);
                self.values.push(bits);
                let slot = self.params.len() - 1;
                self.param_slots.insert((ty, bits), slot);
                slot
            }
        }
    }

    fn state<T: Any + Send + Sync>(&mut self, state: T) -> usize {
        let boxed = Box::new(state);
        let addr = &*boxed as *const T as u64;
        self.states.push(boxed);
        self.params.push(PType::Ptr);
        self.values.push(addr);
        self.params.len() - 1
    }

    /// A helper call; helpers with equal states (by `key`) share one state, so equal
    /// calls become one node.
    fn helper<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        args: Vec<usize>,
        out: PType,
    ) -> NodeId {
        self.helper_deciding(helper, key, state, args, out, None)
    }

    /// A predicate helper on one string column, with what a row's length and first
    /// bytes decide of it (`test` against `literal`) checked in the kernel first.
    fn deciding_helper<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        slot: usize,
        test: QuickTest,
        literal: &[u8],
    ) -> NodeId {
        let [a, b] = quick_params(test, literal);
        let params = [
            self.param_slot(PType::I64, a),
            self.param_slot(PType::I64, b),
        ];
        let quick = Some(QuickCheck { test, params });
        self.helper_deciding(helper, key, state, vec![slot], PType::Bool, quick)
    }

    fn helper_deciding<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        args: Vec<usize>,
        out: PType,
        quick: Option<QuickCheck>,
    ) -> NodeId {
        let state = match self.state_slots.get(&(helper.name, key.clone())) {
            Some(&slot) => slot,
            None => {
                let slot = self.state(state);
                self.state_slots.insert((helper.name, key), slot);
                slot
            }
        };
        self.add(Node::Helper {
            helper,
            state,
            args,
            out,
            quick,
        })
    }

    /// A string (or BLOB) literal: a `Str` parameter pointing at its address and
    /// length.
    fn string_literal(&mut self, text: &[u8]) -> NodeId {
        let key = ("string literal", format!("{text:?}"));
        let slot = match self.state_slots.get(&key) {
            Some(&slot) => slot,
            None => {
                let bytes: Box<[u8]> = text.into();
                let view = Box::new([bytes.as_ptr() as u64, bytes.len() as u64]);
                let addr = &*view as *const [u64; 2] as u64;
                self.states.push(Box::new(bytes));
                self.states.push(view);
                self.params.push(PType::Str);
                self.values.push(addr);
                let slot = self.params.len() - 1;
                self.state_slots.insert(key, slot);
                slot
            }
        };
        self.add(Node::Param(slot))
    }

    /// A 128-bit literal: an `I128` parameter pointing at its value (equal values share
    /// one).
    fn wide_param(&mut self, value: i128) -> NodeId {
        let key = ("128-bit literal", value.to_string());
        let slot = match self.state_slots.get(&key) {
            Some(&slot) => slot,
            None => {
                let boxed = Box::new(value);
                let addr = &*boxed as *const i128 as u64;
                self.states.push(boxed);
                self.params.push(PType::I128);
                self.values.push(addr);
                let slot = self.params.len() - 1;
                self.state_slots.insert(key, slot);
                slot
            }
        };
        self.add(Node::Param(slot))
    }

    /// A call of a row-wise implementation through the generic helper; calls with
    /// equal `key`s (the same function) share one state.
    fn row_helper(&mut self, key: String, imp: RowImpl, args: Vec<NodeId>, ret: PType) -> NodeId {
        let arity = args.len();
        let strict = imp.strict;
        let key = ("row function", format!("{key}/{arity}"));
        let state = match self.state_slots.get(&key) {
            Some(&slot) => slot,
            None => {
                let slot = self.state(CallState { imp, arity });
                self.state_slots.insert(key, slot);
                slot
            }
        };
        self.add(Node::Call {
            callee: Callee::Helper {
                helper: row::helper(),
                state,
            },
            args,
            ret,
            strict,
        })
    }

    /// A registry function implemented row by row (or by an LLVM intrinsic).
    fn row_call(
        &mut self,
        sig: &'static Signature,
        args: &[TypedExpr],
    ) -> Result<NodeId, Unsupported> {
        match sig.lowering {
            Lowering::Interpreted(why) => return unsupported(why),
            Lowering::Inline => return self.inline_call(sig, args),
            _ => {}
        }
        if sig.name == "concat_op" {
            // `a || b || c` is one call with every operand (one string per row).
            let mut parts = Vec::new();
            concat_operands(args, &mut parts);
            if parts.len() > 2 {
                let ids = parts
                    .into_iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(self.row_helper("concat_op".into(), string::joined(), ids, PType::Str));
            }
        }
        let ret = physical(&sig.ret)
            .ok_or_else(|| Unsupported(format!("{} (its result type)", sig.display())))?;
        let wide = |t: &DataType| crate::types::is_decimal(t) && physical(t) == Some(PType::I128);
        if wide(&sig.ret) || args.iter().any(|a| wide(&a.data_type)) {
            return unsupported(format!(
                "{} on decimals of more than {DECIMAL_I64_DIGITS} digits (function helpers take 64-bit decimals)",
                sig.display()
            ));
        }
        let ids = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(imp) = sig.imp.clone() else {
            return unsupported(format!("{} has no implementation", sig.display()));
        };
        Ok(match sig.lowering {
            Lowering::Intrinsic { name, domain } => self.add(Node::Call {
                callee: Callee::Intrinsic {
                    name,
                    domain: domain.map(|(op, v)| (op, v.to_bits())),
                },
                args: ids,
                ret,
                strict: true,
            }),
            Lowering::Helper => self.row_helper(sig.display(), imp, ids, ret),
            Lowering::Interpreted(why) => return unsupported(why),
            Lowering::Inline => return self.inline_call(sig, args),
        })
    }

    /// The input slot of a string (or BLOB) column.
    fn column_of_strings(&mut self, e: &TypedExpr) -> Option<usize> {
        match e.kind {
            TypedKind::Column(c) if is_bytes(&e.data_type) => Some(self.slot(c, PType::Str)),
            _ => None,
        }
    }

    /// Whether `e` may become an interpreted input: [`interpretable`], and fewer
    /// interpreted inputs than a kernel may have nodes (beyond, the expression is
    /// too large to compile anyway, and finding repeats would cost quadratic time).
    fn may_interpret(&self, e: &TypedExpr) -> bool {
        self.interpreted.len() < MAX_JIT_NODES && interpretable(e)
    }

    /// The input slot of `e` evaluated by the interpreter (one per distinct subtree).
    fn interpreted_slot(&mut self, e: &TypedExpr, ty: PType, reason: &str) -> usize {
        if let Some(i) = self.interpreted.iter().find(|i| i.expr == *e) {
            return i.slot;
        }
        self.columns.push(None);
        self.inputs.push(InputSpec {
            stored_as_i128: stored_as_i128(&e.data_type, ty),
            ..InputSpec::new(ty)
        });
        let slot = self.columns.len() - 1;
        self.interpreted.push(Interpreted {
            slot,
            expr: e.clone(),
            reason: reason.to_string(),
        });
        slot
    }

    fn mark(&self) -> Mark {
        Mark {
            nodes: self.nodes.len(),
            inputs: self.inputs.len(),
            params: self.params.len(),
            states: self.states.len(),
            interpreted: self.interpreted.len(),
        }
    }

    /// Forgets what was added since `m` (in time proportional to what was added, but
    /// for the parameter maps, which are scanned only when parameters were added).
    fn undo(&mut self, m: Mark) {
        for node in self.nodes.drain(m.nodes..) {
            self.index.remove(&node);
        }
        self.columns.truncate(m.inputs);
        self.inputs.truncate(m.inputs);
        if self.params.len() > m.params {
            self.params.truncate(m.params);
            self.values.truncate(m.params);
            self.param_slots.retain(|_, slot| *slot < m.params);
            self.state_slots.retain(|_, slot| *slot < m.params);
        }
        self.states.truncate(m.states);
        self.interpreted.truncate(m.interpreted);
    }

    fn typ(e: &TypedExpr) -> Result<PType, Unsupported> {
        Self::typ_of(&e.data_type)
    }

    fn typ_of(t: &DataType) -> Result<PType, Unsupported> {
        physical(t).ok_or_else(|| match t {
            DataType::Decimal128(..) | DataType::Decimal256(..) => Unsupported(format!(
                "{} values (the JIT computes decimals of up to {DECIMAL_JIT_DIGITS} digits)",
                sql_type_name(t)
            )),
            _ => Unsupported(format!("type {t}")),
        })
    }

    /// Lowers `e`. A subtree the JIT does not compile, that cannot raise an error and
    /// whose value the kernel can read (numeric, boolean, temporal) becomes an input
    /// the interpreter computes ([`Interpreted`]); the largest such subtree wins, as
    /// a parent that fails too undoes its children and is interpreted whole.
    fn expr(&mut self, e: &TypedExpr) -> Result<NodeId, Unsupported> {
        let mark = self.mark();
        match self.node(e) {
            Err(u) if self.may_interpret(e) => match physical(&e.data_type) {
                Some(ty) if ty != PType::Str => {
                    self.undo(mark);
                    let slot = self.interpreted_slot(e, ty, &u.0);
                    Ok(self.add(Node::Input(slot)))
                }
                _ => Err(u),
            },
            result => result,
        }
    }

    #[recursive::recursive]
    fn node(&mut self, e: &TypedExpr) -> Result<NodeId, Unsupported> {
        let ty = Self::typ(e);
        Ok(match &e.kind {
            TypedKind::Column(c) => {
                let t = ty?;
                let stored = self.stored.get(*c).cloned();
                match (stored, &e.data_type) {
                    // A DECIMAL of up to 9 digits stored in 32 bits: read as `i32`s,
                    // checked, widened to the `i64` the kernel computes with.
                    (Some(DataType::Decimal32(p, _)), DataType::Decimal128(..))
                        if t == PType::I64 =>
                    {
                        let s = self.slot(*c, PType::I32);
                        let input = self.add(Node::Input(s));
                        let checked = self.precision_check(input, p)?;
                        self.add(Node::Cast(checked, PType::I64))
                    }
                    // Arrow does not enforce a decimal's precision: a valid value
                    // beyond it is an error (`Jit::describe_row` names it). A
                    // `Decimal64` column is read as its `i64`s, a `Decimal128` one in
                    // place as `i64`s or `i128`s.
                    (_, DataType::Decimal128(p, _)) => {
                        let s = self.slot(*c, t);
                        let input = self.add(Node::Input(s));
                        self.precision_check(input, *p)?
                    }
                    _ => {
                        let s = self.slot(*c, t);
                        self.add(Node::Input(s))
                    }
                }
            }
            TypedKind::Literal(v) => match v {
                ScalarValue::Null(_) => self.add(Node::Null(ty?)),
                ScalarValue::Boolean(b) => self.add(Node::Bool(*b)),
                ScalarValue::Utf8(text) => self.string_literal(text.as_bytes()),
                ScalarValue::Binary(bytes) => self.string_literal(bytes),
                ScalarValue::Decimal128(x, p, _) if *p > DECIMAL_I64_DIGITS => {
                    ty?;
                    self.wide_param(*x)
                }
                ScalarValue::IntervalMonthDayNano(v) => self.wide_param(interval::packed(*v)),
                ScalarValue::Decimal128(x, ..) if literal_bits(v).is_some() => {
                    // Within as many digits as it has: a check that never fails and
                    // is hoisted out of the loop, so the emitter knows its range
                    // (`1 - l_discount` neither overflows nor leaves its digits),
                    // while the program depends on the value's number of digits only.
                    let node = self.param(ty?, literal_bits(v).unwrap_or_default());
                    let digits = (1..=DECIMAL_I64_DIGITS).find(|&d| crate::decimal::fits(*x, d));
                    match digits.and_then(decimal_max) {
                        Some(max) => self.add(Node::RangeCheck(node, -max, max)),
                        None => node,
                    }
                }
                other => match literal_bits(other) {
                    Some(bits) => self.param(ty?, bits),
                    None => {
                        ty?;
                        return unsupported(format!("a literal of type {}", e.data_type));
                    }
                },
            },
            TypedKind::Call { sig, args } if sig.func == FuncId::Row => self.row_call(sig, args)?,
            TypedKind::Call { sig, args } => self.call(sig.func, args, &e.data_type)?,
            TypedKind::And(c) | TypedKind::Or(c) => {
                let ids = c
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>, _>>()?;
                self.add(if matches!(e.kind, TypedKind::And(_)) {
                    Node::And(ids)
                } else {
                    Node::Or(ids)
                })
            }
            TypedKind::Not(x) => {
                let x = self.expr(x)?;
                self.add(Node::Not(x))
            }
            TypedKind::IsNull { expr, negated } => {
                let x = match expr.kind {
                    // A shared value: NULL-typed ones are lowered as BOOLEANs.
                    TypedKind::Ref(_) => self.expr(expr)?,
                    _ => {
                        let typed = null_typed_as(expr, &DataType::Boolean)?;
                        self.expr(&typed)?
                    }
                };
                self.add(Node::IsNull(x, *negated))
            }
            TypedKind::Cast(x) | TypedKind::TryCast(x) if x.data_type == DataType::Null => {
                let typed = null_typed_as(x, &e.data_type)?;
                self.expr(&typed)?
            }
            TypedKind::Cast(x) => self.cast(x, &e.data_type)?,
            TypedKind::TryCast(x) => self.try_cast(x, &e.data_type)?,
            TypedKind::Case {
                branches,
                else_expr,
            } => {
                ty?;
                let mut pairs = Vec::with_capacity(branches.len());
                for (c, v) in branches {
                    pairs.push((self.expr(c)?, self.expr(v)?));
                }
                let otherwise = self.expr(else_expr)?;
                self.add(Node::Case(pairs, otherwise))
            }
            TypedKind::Coalesce(args) => {
                ty?;
                let ids = args
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>, _>>()?;
                self.add(Node::Coalesce(ids))
            }
            TypedKind::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated)?,
            TypedKind::Let { id, value, body } => {
                // The value becomes one node that every `Ref` in the body uses (a
                // NULL-typed one as a BOOLEAN, see `null_typed_as`).
                let typed = null_typed_as(value, &DataType::Boolean)?;
                let v = self.expr(&typed)?;
                let previous = self.shared.insert(*id, v);
                let result = self.expr(body);
                match previous {
                    Some(p) => self.shared.insert(*id, p),
                    None => self.shared.remove(id),
                };
                result?
            }
            TypedKind::Ref(id) => match self.shared.get(id) {
                Some(&v) => v,
                None => return unsupported(format!("reference ${id} outside its LET")),
            },
        })
    }

    fn in_list(
        &mut self,
        probe: &TypedExpr,
        list: &[ScalarValue],
        negated: bool,
    ) -> Result<NodeId, Unsupported> {
        let has_null = list.iter().any(|v| v.is_null());
        if is_bytes(&probe.data_type) {
            let values: HashSet<Vec<u8>> = list
                .iter()
                .filter_map(|v| literal_bytes(v).map(<[u8]>::to_vec))
                .collect();
            // Sorted, so equal lists share one helper state or lower to equal programs.
            let mut sorted: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
            sorted.sort();
            let key = format!("{sorted:?}");
            let found = match self.column_of_strings(probe) {
                Some(slot) if (1..=IN_EQUALITIES_MAX).contains(&sorted.len()) => {
                    let equalities: Vec<NodeId> = sorted
                        .into_iter()
                        .map(|v| self.compare_literal(CmpOp::Eq, slot, v))
                        .collect();
                    match equalities[..] {
                        [one] => one,
                        _ => self.add(Node::Or(equalities)),
                    }
                }
                Some(slot) => self.helper(
                    helpers::in_set(self.inputs[slot].layout),
                    key,
                    strings::InSet::new(values),
                    vec![slot],
                    PType::Bool,
                ),
                None => {
                    let x = self.expr(probe)?;
                    let imp = computed::in_set(strings::InSet::new(values));
                    self.row_helper(format!("in:{key}"), imp, vec![x], PType::Bool)
                }
            };
            let mut result = found;
            if has_null {
                let null = self.add(Node::Null(PType::Bool));
                result = self.add(Node::Or(vec![found, null]));
            }
            return Ok(if negated {
                self.add(Node::Not(result))
            } else {
                result
            });
        }
        let x = self.expr(probe)?;
        let t = Self::typ(probe)?;
        let present = list.iter().filter(|v| !v.is_null());
        // 128-bit values have no set lookup (its keys are 64 bits): always a chain.
        if present.clone().count() > IN_CHAIN_MAX && t != PType::Bool && t != PType::I128 {
            let bits = present
                .map(|v| literal_bits(v).ok_or_else(|| Unsupported("IN list value".into())))
                .collect::<Result<Vec<_>, _>>()?;
            let state = self.state(InSet::new(t, bits));
            return Ok(self.add(Node::InSet {
                x,
                state,
                has_null,
                negated,
            }));
        }
        let mut values = Vec::with_capacity(list.len());
        for v in list.iter().filter(|v| !v.is_null()) {
            values.push(match v {
                ScalarValue::Boolean(b) => self.add(Node::Bool(*b)),
                ScalarValue::Decimal128(x, ..) if t == PType::I128 => self.wide_param(*x),
                other => {
                    let bits =
                        literal_bits(other).ok_or_else(|| Unsupported("IN list value".into()))?;
                    self.param(t, bits)
                }
            });
        }
        // Equal values are one parameter (or constant), so one comparison: a
        // boolean list of any length is at most two.
        values.sort_unstable();
        values.dedup();
        Ok(self.add(Node::InList {
            x,
            values,
            has_null,
            negated,
        }))
    }

    fn call(
        &mut self,
        func: FuncId,
        args: &[TypedExpr],
        ret: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use FuncId::*;
        let arith = |op| {
            move |l: &mut Self| -> Result<NodeId, Unsupported> {
                let (a, b) = (l.expr(&args[0])?, l.expr(&args[1])?);
                let v = l.add(Node::Arith(op, a, b));
                // A decimal result must fit its precision (the i64 operation is
                // checked already).
                Ok(match crate::types::decimal_parts(ret) {
                    Some((p, _)) if op != ArithOp::Rem => l.precision_check(v, p)?,
                    _ => v,
                })
            }
        };
        let wide = Self::typ_of(ret).ok() == Some(PType::I128);
        match func {
            Add | DateAddDays => arith(ArithOp::Add)(self),
            Subtract | DateSubDays | DateDiffDays => arith(ArithOp::Sub)(self),
            Multiply if wide => self.wide_multiply(&args[0], &args[1], ret),
            Multiply => arith(ArithOp::Mul)(self),
            // 128-bit `/` and `%` are calls of the JIT's `__divti3` and `__modti3`.
            Divide => arith(ArithOp::Div)(self),
            Modulo => arith(ArithOp::Rem)(self),
            DecimalRound(direction) => self.decimal_round(direction, args, ret),
            Negate | Abs => {
                let x = self.expr(&args[0])?;
                Ok(self.add(if func == Negate {
                    Node::Neg(x)
                } else {
                    Node::Abs(x)
                }))
            }
            Equal | NotEqual | Less | LessEq | Greater | GreaterEq => {
                let op = cmp_op(func);
                if is_bytes(&args[0].data_type) {
                    return self.string_compare(op, &args[0], &args[1]);
                }
                let (a, b) = (self.expr(&args[0])?, self.expr(&args[1])?);
                Ok(self.add(Node::Cmp(op, a, b)))
            }
            IsDistinctFrom | IsNotDistinctFrom => {
                if is_bytes(&args[0].data_type) {
                    let not = func == IsNotDistinctFrom;
                    let (a, b) = (self.expr(&args[0])?, self.expr(&args[1])?);
                    let imp = computed::distinct_strings(not);
                    return Ok(self.row_helper(
                        format!("distinct:{not}"),
                        imp,
                        vec![a, b],
                        PType::Bool,
                    ));
                }
                let (a, b) = (self.expr(&args[0])?, self.expr(&args[1])?);
                Ok(self.add(Node::Distinct(a, b, func == IsNotDistinctFrom)))
            }
            IsTrue | IsNotTrue | IsFalse | IsNotFalse => {
                let x = self.expr(&args[0])?;
                let test = match func {
                    IsTrue => TruthTest::IsTrue,
                    IsNotTrue => TruthTest::IsNotTrue,
                    IsFalse => TruthTest::IsFalse,
                    _ => TruthTest::IsNotFalse,
                };
                Ok(self.add(Node::Truth(x, test)))
            }
            Like | ILike => {
                let Some(ScalarValue::Utf8(p)) = args[1].as_literal() else {
                    return unsupported("LIKE with a pattern that is not a literal");
                };
                let p = p.clone();
                let Some(slot) = self.column_of_strings(&args[0]) else {
                    // `lower(x) LIKE p`, `upper(x) LIKE p`: one row function that maps
                    // and matches, no mapped string in the arena.
                    if let (Like, TypedKind::Call { sig, args: inner }) = (func, &args[0].kind) {
                        if let (name @ ("upper" | "lower"), [s]) = (sig.name, inner.as_slice()) {
                            let pattern = strings::like_pattern(&p).map_err(Unsupported)?;
                            let key = format!("{name}:Like:{p}");
                            let upper = name == "upper";
                            if let Some(slot) = self.column_of_strings(s) {
                                return Ok(self.case_mapped_column(slot, upper, pattern, key));
                            }
                            let s = self.expr(s)?;
                            let imp = computed::case_mapped_like(upper, pattern);
                            return Ok(self.row_helper(key, imp, vec![s], PType::Bool));
                        }
                    }
                    let x = self.expr(&args[0])?;
                    let imp = if func == Like {
                        computed::like(strings::like_pattern(&p).map_err(Unsupported)?)
                    } else {
                        computed::ilike(strings::ilike_pattern(&p).map_err(Unsupported)?)
                    };
                    return Ok(self.row_helper(format!("{func:?}:{p}"), imp, vec![x], PType::Bool));
                };
                let layout = self.inputs[slot].layout;
                let node = if func == Like {
                    let pattern = strings::like_pattern(&p).map_err(Unsupported)?;
                    let helper = helpers::for_pattern(&pattern, layout);
                    let key = format!("like:{p}");
                    // Equalities and prefixes are decided by their length and first
                    // bytes; suffixes and substrings on rows of up to eight bytes.
                    let quick = match pattern.literal_shape() {
                        Some((Find::Equal, s)) => {
                            Some((QuickTest::Equal { negated: false }, s.to_vec()))
                        }
                        Some((Find::Prefix, s)) => Some((QuickTest::Prefix, s.to_vec())),
                        Some((find, s)) => {
                            let case = CaseMap::AsIs;
                            Some((QuickTest::ShortRow { find, case }, s.to_vec()))
                        }
                        None => None,
                    };
                    let state = strings::LikeColumn::new(pattern);
                    match quick {
                        Some((test, literal)) => {
                            self.deciding_helper(helper, key, state, slot, test, &literal)
                        }
                        None => self.helper(helper, key, state, vec![slot], PType::Bool),
                    }
                } else {
                    match strings::ilike_pattern(&p).map_err(Unsupported)? {
                        Ok(ascii) => self.helper(
                            helpers::ilike_ascii(layout),
                            format!("ilike:{p}"),
                            ascii,
                            vec![slot],
                            PType::Bool,
                        ),
                        Err(regex) => self.helper(
                            helpers::like_regex(layout),
                            format!("ilike:{p}"),
                            strings::LikeColumn::new(strings::Pattern::Regex(Box::new(regex))),
                            vec![slot],
                            PType::Bool,
                        ),
                    }
                };
                Ok(node)
            }
            Length => {
                let Some(slot) = self.column_of_strings(&args[0]) else {
                    let x = self.expr(&args[0])?;
                    return Ok(self.row_helper(
                        "length".into(),
                        computed::length(),
                        vec![x],
                        PType::I32,
                    ));
                };
                let layout = self.inputs[slot].layout;
                Ok(self.helper(
                    helpers::length(layout),
                    String::new(),
                    strings::Length,
                    vec![slot],
                    PType::I32,
                ))
            }
            Row => unsupported("a row function outside its signature"),
        }
    }

    fn string_compare(
        &mut self,
        op: CmpOp,
        a: &TypedExpr,
        b: &TypedExpr,
    ) -> Result<NodeId, Unsupported> {
        let (sa, sb) = (self.column_of_strings(a), self.column_of_strings(b));
        match (sa, sb, a.as_literal(), b.as_literal()) {
            (Some(x), Some(y), _, _) => Ok(self.helper(
                helpers::cmp_columns(self.inputs[x].layout, self.inputs[y].layout),
                format!("{op:?}"),
                strings::CompareColumns { op },
                vec![x, y],
                PType::Bool,
            )),
            (Some(x), None, _, Some(lit)) if literal_bytes(lit).is_some() => {
                Ok(self.compare_literal(op, x, literal_bytes(lit).unwrap_or_default()))
            }
            (None, Some(y), Some(lit), _) if literal_bytes(lit).is_some() => {
                Ok(self.compare_literal(flipped(op), y, literal_bytes(lit).unwrap_or_default()))
            }
            (_, _, _, Some(lit)) if literal_bytes(lit).is_some() => {
                self.computed_compare_literal(op, a, literal_bytes(lit).unwrap_or_default())
            }
            (_, _, Some(lit), _) if literal_bytes(lit).is_some() => self.computed_compare_literal(
                flipped(op),
                b,
                literal_bytes(lit).unwrap_or_default(),
            ),
            _ => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let imp = computed::compare_strings(op);
                Ok(self.row_helper(format!("cmp:{op:?}"), imp, vec![x, y], PType::Bool))
            }
        }
    }

    /// `x <op> literal` for a string or BLOB the kernel computes (a function's
    /// result, a `CASE`).
    fn computed_compare_literal(
        &mut self,
        op: CmpOp,
        x: &TypedExpr,
        literal: &[u8],
    ) -> Result<NodeId, Unsupported> {
        if let Some(node) = self.leading_characters_compare(op, x, literal) {
            return Ok(node);
        }
        if let (TypedKind::Call { sig, args }, CmpOp::Eq | CmpOp::Ne) = (&x.kind, op) {
            if let (name @ ("upper" | "lower"), [s]) = (sig.name, args.as_slice()) {
                let negated = op == CmpOp::Ne;
                let upper = name == "upper";
                if let Some(slot) = self.column_of_strings(s) {
                    let pattern = strings::Pattern::Equal(literal.to_vec());
                    let key = format!("{name}:=:{literal:?}");
                    let equal = self.case_mapped_column(slot, upper, pattern, key);
                    return Ok(match negated {
                        false => equal,
                        true => self.add(Node::Not(equal)),
                    });
                }
                let s = self.expr(s)?;
                let imp = computed::case_mapped_equals(upper, literal.to_vec(), negated);
                let key = format!("{name}:{op:?}:{literal:?}");
                return Ok(self.row_helper(key, imp, vec![s], PType::Bool));
            }
        }
        let x = self.expr(x)?;
        let imp = computed::compare_to_literal(op, literal.to_vec());
        let key = format!("cmp:{op:?}:{literal:?}");
        Ok(self.row_helper(key, imp, vec![x], PType::Bool))
    }

    /// `substr(column, 1, k) = 'lit'` or `left(column, k) = 'lit'` (or `<>`), with
    /// `k ≥ 0`, decided on the column's bytes without computing the substring: the
    /// first `k` characters are `lit` exactly when the column starts with `lit` if
    /// `lit` has `k` characters, and when the column is `lit` if it has fewer (a
    /// shorter string is its own first `k` characters). `None` otherwise (`lit`
    /// longer than `k` characters, other functions or arguments).
    fn leading_characters_compare(
        &mut self,
        op: CmpOp,
        x: &TypedExpr,
        literal: &[u8],
    ) -> Option<NodeId> {
        let TypedKind::Call { sig, args } = &x.kind else {
            return None;
        };
        let k = match (sig.name, args.as_slice()) {
            ("substr", [_, start, count]) => {
                let (Some(ScalarValue::Int64(1)), Some(ScalarValue::Int64(k))) =
                    (start.as_literal(), count.as_literal())
                else {
                    return None;
                };
                *k
            }
            ("left", [_, count]) => match count.as_literal() {
                Some(ScalarValue::Int64(k)) => *k,
                _ => return None,
            },
            _ => return None,
        };
        let negated = match op {
            CmpOp::Eq => false,
            CmpOp::Ne => true,
            _ => return None,
        };
        let slot = self.column_of_strings(&args[0])?;
        let chars = std::str::from_utf8(literal).ok()?.chars().count();
        let k = usize::try_from(k).ok()?;
        if chars < k {
            return Some(self.compare_literal(op, slot, literal));
        }
        if chars > k {
            return None;
        }
        let pattern = strings::Pattern::Prefix(literal.to_vec());
        let helper = helpers::for_pattern(&pattern, self.inputs[slot].layout);
        let key = format!("prefix:{literal:?}");
        let state = strings::LikeColumn::new(pattern);
        let starts = self.deciding_helper(helper, key, state, slot, QuickTest::Prefix, literal);
        Some(match negated {
            false => starts,
            true => self.add(Node::Not(starts)),
        })
    }

    /// `upper(column)` (with `upper`, else `lower(column)`) of string column `slot`
    /// matching `pattern` (an equality with a literal, or `LIKE`): the column
    /// helper, which the kernel spares the rows of up to eight ASCII bytes when the
    /// pattern has a literal shape.
    fn case_mapped_column(
        &mut self,
        slot: usize,
        upper: bool,
        pattern: strings::Pattern,
        key: String,
    ) -> NodeId {
        let case = if upper {
            CaseMap::Upper
        } else {
            CaseMap::Lower
        };
        let helper = helpers::case_mapped(self.inputs[slot].layout);
        let quick = pattern
            .literal_shape()
            .map(|(find, literal)| (QuickTest::ShortRow { find, case }, literal.to_vec()));
        let state = strings::CaseMapped { upper, pattern };
        match quick {
            Some((test, literal)) => self.deciding_helper(helper, key, state, slot, test, &literal),
            None => self.helper(helper, key, state, vec![slot], PType::Bool),
        }
    }

    /// `column <op> literal` for a string or BLOB column (slot `x`).
    fn compare_literal(&mut self, op: CmpOp, x: usize, literal: &[u8]) -> NodeId {
        let key = format!("{op:?}:{literal:?}");
        let state = strings::CompareLiteral::new(op, literal);
        let helper = helpers::cmp_literal(self.inputs[x].layout);
        self.deciding_helper(helper, key, state, x, quick_test(op), literal)
    }

    fn cast(&mut self, x: &TypedExpr, to: &DataType) -> Result<NodeId, Unsupported> {
        let xi = self.expr(x)?;
        self.convert(&x.data_type, xi, to)
    }

    /// `TRY_CAST(x AS to)`: to and from VARCHAR, the row function that gives NULL
    /// for a bad string; other conversions are the cast where [`Self::cast_ok`]
    /// holds, else NULL. The errors of `x` itself stay.
    fn try_cast(&mut self, x: &TypedExpr, to: &DataType) -> Result<NodeId, Unsupported> {
        let from = &x.data_type;
        if crate::types::is_decimal(from) || crate::types::is_decimal(to) {
            return unsupported(format!(
                "TRY_CAST from {} to {}",
                sql_type_name(from),
                sql_type_name(to)
            ));
        }
        let xi = self.expr(x)?;
        if let Some(imp) = cast::try_cast_impl(from, to) {
            let key = format!("TRY_CAST({from:?} AS {to:?})");
            return Ok(self.row_helper(key, imp, vec![xi], Self::typ_of(to)?));
        }
        let value = self.convert(from, xi, to)?;
        Ok(match self.cast_ok(from, xi, to) {
            None => value,
            Some(ok) => {
                let null = self.add(Node::Null(Self::typ_of(to)?));
                self.add(Node::Case(vec![(ok, value)], null))
            }
        })
    }

    /// A BOOLEAN node that is TRUE exactly where [`Self::convert`] of `xi` (of
    /// type `from`) succeeds (the same conditions as the kernel's checks: integer
    /// ranges, rounded floats within the target's range, timestamp scaling without
    /// overflow), NULL where `xi` is NULL; `None` for conversions that never fail.
    fn cast_ok(&mut self, from: &DataType, xi: NodeId, to: &DataType) -> Option<NodeId> {
        use DataType::{Date32, Timestamp};
        let (pf, pt) = (physical(from)?, physical(to)?);
        match (from, to) {
            (Date32, Timestamp(unit, _)) => {
                let per_day = 86_400 * i128::from(units_per_second(*unit));
                let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
                // Truncating division: the ceiling below zero, the floor above.
                self.within(pf, xi, min / per_day, max / per_day)
            }
            (Timestamp(unit, _), Date32) => {
                let per_day = 86_400 * i128::from(units_per_second(*unit));
                let lo = i128::from(i32::MIN) * per_day;
                let hi = (i128::from(i32::MAX) + 1) * per_day - 1;
                self.within(pf, xi, lo, hi)
            }
            (Timestamp(a, _), Timestamp(b, _)) => {
                let (f, t) = (units_per_second(*a), units_per_second(*b));
                if t <= f {
                    return None;
                }
                let k = i128::from(t / f);
                let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
                self.within(pf, xi, min / k, max / k)
            }
            (Timestamp(..), t) if is_time(t) => None,
            (f, t) if is_time(f) && is_time(t) => {
                // Scaled, then narrowed: the values whose result fits the target.
                let (a, b) = (
                    units_per_second(time_unit(f)?),
                    units_per_second(time_unit(t)?),
                );
                let (min, max) = int_range(pt)?;
                let (lo, hi) = if b >= a {
                    let k = i128::from(b / a);
                    (min / k, max / k)
                } else {
                    let k = i128::from(a / b);
                    (min * k, (max + 1) * k - 1)
                };
                self.within(pf, xi, lo, hi)
            }
            _ if pf.is_float() && pt != PType::Bool && !pt.is_float() => {
                // Rounded half to even, within [min, max + 1) of the target, as the
                // kernel checks it (NaN sorts above every value, so it fails).
                let (min, max) = int_range(pt)?;
                let rounded = self.add(Node::Call {
                    callee: Callee::Intrinsic {
                        name: "llvm.rint",
                        domain: None,
                    },
                    args: vec![xi],
                    ret: pf,
                    strict: true,
                });
                let float = |v: i128| {
                    if pf == PType::F32 {
                        u64::from((v as f32).to_bits())
                    } else {
                        (v as f64).to_bits()
                    }
                };
                let lo = self.add(Node::Const(pf, float(min)));
                let hi = self.add(Node::Const(pf, float(max + 1)));
                let ge = self.add(Node::Cmp(CmpOp::Ge, rounded, lo));
                let lt = self.add(Node::Cmp(CmpOp::Lt, rounded, hi));
                Some(self.add(Node::And(vec![ge, lt])))
            }
            _ if int_range(pf).is_some() && int_range(pt).is_some() => {
                let (min, max) = int_range(pt)?;
                self.within(pf, xi, min, max)
            }
            _ => None,
        }
    }

    /// `lo <= xi <= hi` for `xi` of integer type `t`, checking only the bounds that
    /// are inside `t`'s range; `None` if neither is.
    fn within(&mut self, t: PType, xi: NodeId, lo: i128, hi: i128) -> Option<NodeId> {
        let (min, max) = int_range(t)?;
        let mut checks = Vec::new();
        if lo > min {
            let c = self.add(Node::Const(t, lo as u64));
            checks.push(self.add(Node::Cmp(CmpOp::Ge, xi, c)));
        }
        if hi < max {
            let c = self.add(Node::Const(t, hi as u64));
            checks.push(self.add(Node::Cmp(CmpOp::Le, xi, c)));
        }
        match checks.len() {
            0 => None,
            1 => checks.pop(),
            _ => Some(self.add(Node::And(checks))),
        }
    }

    /// `xi`, an `i64` count of `from` units, in `to` units (multiplied, checked, or
    /// divided rounding toward the past).
    fn rescale(&mut self, xi: NodeId, from: TimeUnit, to: TimeUnit) -> NodeId {
        let (f, t) = (units_per_second(from), units_per_second(to));
        if f == t {
            xi
        } else if t > f {
            let k = self.add(Node::Const(PType::I64, (t / f) as u64));
            self.add(Node::Arith(ArithOp::Mul, xi, k))
        } else {
            let k = self.add(Node::Const(PType::I64, (f / t) as u64));
            self.add(Node::Arith(ArithOp::FloorDiv, xi, k))
        }
    }

    /// An `i64` node as the physical type of `to` (a checked narrowing for 32-bit
    /// types).
    fn narrow(&mut self, xi: NodeId, to: &DataType) -> Result<NodeId, Unsupported> {
        Ok(match Self::typ_of(to)? {
            PType::I64 => xi,
            pt => self.add(Node::Cast(xi, pt)),
        })
    }

    /// `xi` (a decimal of the physical type of `precision` digits: `i64` up to 18,
    /// else `i128`), with lanes beyond `precision` digits as errors.
    fn precision_check(&mut self, xi: NodeId, precision: u8) -> Result<NodeId, Unsupported> {
        let max = decimal_max(precision)
            .filter(|_| precision <= DECIMAL_JIT_DIGITS)
            .ok_or_else(|| {
                Unsupported(format!(
                    "a decimal of {precision} digits (the JIT computes decimals of up to {DECIMAL_JIT_DIGITS} digits)"
                ))
            })?;
        Ok(self.add(Node::RangeCheck(xi, -max, max)))
    }

    /// `round`, `trunc`, `floor` or `ceil` of a 64-bit decimal to `ret`'s scale, as
    /// [`crate::decimal::round_value`] computes it: the dropped digits divided away in
    /// `direction`, multiplied back for places below zero, then `ret`'s precision
    /// checked.
    fn decimal_round(
        &mut self,
        direction: crate::decimal::Rounding,
        args: &[TypedExpr],
        ret: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::decimal::Rounding::*;
        use crate::types::decimal_parts;
        if Self::typ(&args[0])? != PType::I64 || Self::typ_of(ret)? != PType::I64 {
            return unsupported(format!(
                "{direction:?} of {} values ({WIDE_ROUNDING})",
                sql_type_name(&args[0].data_type)
            ));
        }
        let (Some((_, s)), Some((p, _))) = (decimal_parts(&args[0].data_type), decimal_parts(ret))
        else {
            return unsupported(format!(
                "{direction:?} of {}",
                sql_type_name(&args[0].data_type)
            ));
        };
        let n = match args.get(1) {
            None => 0,
            Some(e) => match e.as_literal().and_then(ScalarValue::as_i128) {
                Some(n) => n,
                None => return unsupported("decimal places that are not a literal"),
            },
        };
        let xi = self.expr(&args[0])?;
        if n >= i128::from(s) {
            return Ok(xi);
        }
        let pow10 = |k: i128| -> Option<i64> {
            let v = crate::decimal::pow10::<i128>(u32::try_from(k).ok()?)?;
            i64::try_from(v).ok()
        };
        let too_many = || {
            unsupported(format!(
                "rounding {} to {n} places",
                sql_type_name(&args[0].data_type)
            ))
        };
        let Some(d) = pow10(i128::from(s) - n) else {
            return too_many();
        };
        let c = |l: &mut Self, v: i64| l.add(Node::Const(PType::I64, v as u64));
        let q = match direction {
            HalfAwayFromZero => self.div_round(xi, PType::I64, i128::from(d)),
            TowardZero => {
                let d = c(self, d);
                self.add(Node::Arith(ArithOp::Div, xi, d))
            }
            Floor => {
                let d = c(self, d);
                self.add(Node::Arith(ArithOp::FloorDiv, xi, d))
            }
            Ceil => {
                // -floor(-x / d): a decimal's range is symmetric, so -x never overflows.
                let d = c(self, d);
                let negated = self.add(Node::Neg(xi));
                let floor = self.add(Node::Arith(ArithOp::FloorDiv, negated, d));
                self.add(Node::Neg(floor))
            }
        };
        let rounded = if n < 0 {
            let Some(k) = pow10(-n) else {
                return too_many();
            };
            let k = c(self, k);
            self.add(Node::Arith(ArithOp::Mul, q, k))
        } else {
            q
        };
        self.precision_check(rounded, p)
    }

    /// `a * b` for a product of type `ret`, a decimal of more than 18 digits: both
    /// operands (decimals of `p1` and `p2` digits) as `i128`s. When `p1 + p2 <= 38`
    /// the product of values below `10^p1` and `10^p2` is below `10^(p1 + p2)`, the
    /// result's precision: multiplied without any check. Otherwise the multiply is
    /// checked for 128-bit overflow (inline code, no library call on x86-64) and the
    /// result against its precision.
    fn wide_multiply(
        &mut self,
        a: &TypedExpr,
        b: &TypedExpr,
        ret: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::types::decimal_parts;
        let digits =
            |t: &DataType| decimal_parts(t).map_or(u16::from(u8::MAX), |(p, _)| u16::from(p));
        let exact = digits(&a.data_type) + digits(&b.data_type) <= digits(ret);
        let wide = |l: &mut Self, e: &TypedExpr| -> Result<NodeId, Unsupported> {
            let x = l.expr(e)?;
            Ok(match Self::typ(e)? {
                PType::I128 => x,
                _ => l.add(Node::Cast(x, PType::I128)),
            })
        };
        let (x, y) = (wide(self, a)?, wide(self, b)?);
        if exact {
            return Ok(self.add(Node::Arith(ArithOp::WideMul, x, y)));
        }
        let product = self.add(Node::Arith(ArithOp::Mul, x, y));
        let p = decimal_parts(ret).map_or(DECIMAL_JIT_DIGITS, |(p, _)| p);
        self.precision_check(product, p)
    }

    /// `xi` (of type `t`, `I64` or `I128`) over a positive constant `d` (of type `t`),
    /// rounded half away from zero (`(xi ± d/2) / d`, the sign of `xi`): the decimal
    /// rounding of casts. The shifted value cannot overflow: a decimal's magnitude
    /// is below `10^18` or `10^38` and `d/2` at most half as much.
    fn div_round(&mut self, xi: NodeId, t: PType, d: i128) -> NodeId {
        let c = |l: &mut Self, v: i128| {
            l.add(if t == PType::I128 {
                Node::Const128(v)
            } else {
                Node::Const(PType::I64, v as i64 as u64)
            })
        };
        let (zero, up, down, divisor) = (c(self, 0), c(self, d / 2), c(self, -(d / 2)), c(self, d));
        let negative = self.add(Node::Cmp(CmpOp::Lt, xi, zero));
        let half = self.add(Node::Case(vec![(negative, down)], up));
        let shifted = self.add(Node::Arith(ArithOp::Add, xi, half));
        self.add(Node::Arith(ArithOp::Div, shifted, divisor))
    }

    /// Casts to and from decimals of up to 38 digits, as `functions::cast` computes
    /// them: raising the scale multiplies by `10^k` after checking that the value
    /// fits the target's precision then, lowering it divides rounding half away from
    /// zero, then the precision is checked; a decimal becomes a double as
    /// `decimal::to_f64_cast` says (a 64-bit one: its unscaled value over `10^s`; a
    /// 128-bit one: the cast's own row function, called from the kernel, so both
    /// back ends round alike). Other decimal casts (from floats, to and from VARCHAR,
    /// `Decimal256`) are not compiled.
    fn decimal_convert(
        &mut self,
        from: &DataType,
        xi: NodeId,
        to: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::types::{as_decimal, decimal_parts};
        let not_compiled = |why: &str| {
            unsupported(format!(
                "CAST from {} to {}{why}",
                sql_type_name(from),
                sql_type_name(to)
            ))
        };
        let (Some(pf), Some(pt)) = (physical(from), physical(to)) else {
            let wide = [from, to]
                .iter()
                .any(|t| matches!(t, DataType::Decimal256(..)));
            return not_compiled(if wide {
                " (the JIT computes decimals of up to 38 digits)"
            } else {
                ""
            });
        };
        let pow10 =
            |n: i8| -> Option<i128> { crate::decimal::pow10::<i128>(u32::try_from(n).ok()?) };
        match (decimal_parts(from), decimal_parts(to)) {
            (Some((p1, s1)), Some((p2, s2))) => {
                if s2 >= s1 {
                    return Ok(self.rescale_up(xi, pf, p1, pt, p2, (s2 - s1) as u8));
                }
                let Some(d) = pow10(s1 - s2) else {
                    return not_compiled("");
                };
                let rounded = self.div_round(xi, pf, d);
                Ok(match (pf, pt) {
                    // Checked in 128 bits, then narrowed (the value fits).
                    (PType::I128, PType::I64) => {
                        let checked = self.precision_check(rounded, p2)?;
                        self.add(Node::Cast(checked, PType::I64))
                    }
                    (PType::I64, PType::I64) | (PType::I128, PType::I128) => {
                        self.precision_check(rounded, p2)?
                    }
                    // Any i64 fits a precision of 19 digits or more.
                    _ => self.add(Node::Cast(rounded, pt)),
                })
            }
            (None, Some((p, s))) if pf.is_int() => {
                // The integer as a DECIMAL(w, 0) in the target's width (a value beyond
                // i64 fails the precision of a 64-bit decimal anyway).
                let x = if pf == pt {
                    xi
                } else {
                    self.add(Node::Cast(xi, pt))
                };
                let digits = as_decimal(from).map_or(u8::MAX, |(w, _)| w);
                Ok(self.rescale_up(x, pt, digits, pt, p, s as u8))
            }
            (Some((_, s)), None) if pt.is_int() => {
                if s == 0 {
                    return Ok(if pf == pt {
                        xi
                    } else {
                        self.add(Node::Cast(xi, pt))
                    });
                }
                let Some(d) = pow10(s) else {
                    return not_compiled("");
                };
                // Rounded, then narrowed with the integer casts' range check.
                let whole = self.div_round(xi, pf, d);
                Ok(if pt == pf {
                    whole
                } else {
                    self.add(Node::Cast(whole, pt))
                })
            }
            (Some((_, _)), None) if pt.is_float() && pf == PType::I128 => {
                // `decimal::to_f64_cast` of a 128-bit value rounds `v / 10^s`
                // correctly (through its digits): the kernel calls the cast's row
                // function, the one the interpreter runs.
                let Some(imp) = cast::cast_impl(from, to) else {
                    return not_compiled("");
                };
                let key = format!("CAST({from:?} AS {to:?})");
                Ok(self.row_helper(key, imp, vec![xi], pt))
            }
            (Some((_, s)), None) if pt.is_float() => {
                // decimal::to_f64_cast: the unscaled value as a double over 10^s.
                let Some(d) = pow10(s).and_then(|d| i64::try_from(d).ok()) else {
                    return not_compiled("");
                };
                let f = self.add(Node::Cast(xi, PType::F64));
                let d = self.add(Node::Const(PType::F64, (d as f64).to_bits()));
                let double = self.add(Node::Arith(ArithOp::Div, f, d));
                Ok(if pt == PType::F32 {
                    self.add(Node::Cast(double, PType::F32))
                } else {
                    double
                })
            }
            _ => not_compiled(""),
        }
    }

    /// `xi`, a decimal of `digits` digits of signed type `from`, times `10^k` as a
    /// decimal of `precision` digits of type `to` (`I64` or `I128`): lanes whose value
    /// has more than `precision - k` digits are errors (checked before multiplying,
    /// so the product always fits and a 128-bit one needs no overflow check).
    fn rescale_up(
        &mut self,
        xi: NodeId,
        from: PType,
        digits: u8,
        to: PType,
        precision: u8,
        k: u8,
    ) -> NodeId {
        let fits = precision.saturating_sub(k);
        let checked = match decimal_max(fits) {
            Some(max) if digits > fits => self.add(Node::RangeCheck(xi, -max, max)),
            _ => xi,
        };
        let resized = if from == to {
            checked
        } else {
            self.add(Node::Cast(checked, to))
        };
        if k == 0 {
            return resized;
        }
        let factor = crate::decimal::pow10::<i128>(u32::from(k)).unwrap_or(i128::MAX);
        if to == PType::I128 {
            let c = self.add(Node::Const128(factor));
            self.add(Node::Arith(ArithOp::WideMul, resized, c))
        } else {
            let c = self.add(Node::Const(PType::I64, factor as u64));
            self.add(Node::Arith(ArithOp::Mul, resized, c))
        }
    }

    /// `xi`, of type `from`, as a value of type `to`.
    fn convert(
        &mut self,
        from: &DataType,
        xi: NodeId,
        to: &DataType,
    ) -> Result<NodeId, Unsupported> {
        if crate::types::is_decimal(from) || crate::types::is_decimal(to) {
            return self.decimal_convert(from, xi, to);
        }
        // To and from VARCHAR: the row functions the interpreter calls too.
        if let Some(imp) = cast::cast_impl(from, to) {
            let ret = Self::typ_of(to)?;
            let key = format!("CAST({from:?} AS {to:?})");
            return Ok(self.row_helper(key, imp, vec![xi], ret));
        }
        let const_i64 = |l: &mut Self, v: i64| l.add(Node::Const(PType::I64, v as u64));
        Ok(match (from, to) {
            (f, DataType::Interval(IntervalUnit::MonthDayNano))
                if interval::read_as_interval(f) =>
            {
                self.interval_from(f, xi)?
            }
            (DataType::Date32, DataType::Timestamp(unit, _)) => {
                let wide = self.add(Node::Cast(xi, PType::I64));
                let per_day = const_i64(self, 86_400 * units_per_second(*unit));
                self.add(Node::Arith(ArithOp::Mul, wide, per_day))
            }
            (DataType::Timestamp(_, _), DataType::Date32)
            | (DataType::Date64, DataType::Date32) => {
                let unit = match from {
                    DataType::Timestamp(unit, _) => *unit,
                    _ => TimeUnit::Millisecond,
                };
                let per_day = const_i64(self, 86_400 * units_per_second(unit));
                let days = self.add(Node::Arith(ArithOp::FloorDiv, xi, per_day));
                self.add(Node::Cast(days, PType::I32))
            }
            (DataType::Timestamp(a, _), DataType::Timestamp(b, _)) => self.rescale(xi, *a, *b),
            (DataType::Timestamp(a, _), t) if is_time(t) => {
                // The time of day: the remainder of a day (made non-negative), in
                // the time's unit.
                let per_day = const_i64(self, 86_400 * units_per_second(*a));
                let rem = self.add(Node::Arith(ArithOp::Rem, xi, per_day));
                let shifted = self.add(Node::Arith(ArithOp::Add, rem, per_day));
                let of_day = self.add(Node::Arith(ArithOp::Rem, shifted, per_day));
                let b = time_unit(t).unwrap_or(*a);
                let v = self.rescale(of_day, *a, b);
                self.narrow(v, t)?
            }
            (f, t) if is_time(f) && is_time(t) => {
                let (a, b) = (
                    time_unit(f).unwrap_or(TimeUnit::Second),
                    time_unit(t).unwrap_or(TimeUnit::Second),
                );
                let wide = if physical(f) == Some(PType::I32) {
                    self.add(Node::Cast(xi, PType::I64))
                } else {
                    xi
                };
                let v = self.rescale(wide, a, b);
                self.narrow(v, t)?
            }
            _ => {
                let (pf, pt) = (physical(from), physical(to));
                match (pf, pt) {
                    (Some(pf), Some(pt)) if pf != PType::Str && pt != PType::Str => {
                        if pf == pt {
                            xi
                        } else {
                            self.add(Node::Cast(xi, pt))
                        }
                    }
                    _ => {
                        return unsupported(format!(
                            "CAST from {} to {}",
                            sql_type_name(from),
                            sql_type_name(to)
                        ))
                    }
                }
            }
        })
    }
}
