//! Lowering: a [`TypedExpr`] to a back-end [`Program`].
//!
//! Logical types become physical ones (DATE is `i32` days, TIMESTAMP `i64` units),
//! temporal casts become checked multiplications and floor divisions, literals become
//! run-time parameters, string operations on columns become calls to the specialized
//! helpers in [`crate::strings`], functions become [`Node::Call`]s (an LLVM intrinsic
//! or the row-wise implementation of the [registry](crate::functions), over blocks),
//! strings computed in the kernel are views, and identical subtrees become one node
//! (the program is a DAG).
//!
//! This module holds the entry ([`lower`]), the physical types and the dispatch on
//! the node kinds; the rest is by concept: [`builder`] (nodes, slots, parameters,
//! helper states), [`calls`], [`strings`], [`in_list`], [`casts`], [`decimals`] and
//! [`interval`].

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;

use arrow_schema::{DataType, IntervalUnit, Schema};
use broadhead_codegen::{ByteLayout, InputSpec, Mode, Node, NodeId, PType, Program};

use crate::functions::FuncId;
use crate::layout::byte_layout;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::sql_type_name;
use decimals::decimal_max;

mod builder;
mod calls;
mod casts;
mod datetime;
mod decimals;
mod in_list;
mod interval;
mod strings;

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

/// The largest precision of a decimal the kernel computes (as an `i128`).
pub(crate) const DECIMAL_JIT_DIGITS: u8 = 38;

/// Lowers the expressions (bound to a schema whose string columns are `Utf8`) into
/// one kernel with one output each; `schema` is the schema of the batches the kernel
/// reads, whose string columns may be in any layout (`LargeUtf8`, `Utf8View`), read
/// in place. Fails if any expression does not lower.
pub(crate) fn lower(
    exprs: &[&TypedExpr],
    mode: Mode,
    schema: &Schema,
) -> Result<Lowered, Unsupported> {
    let mut l = Lowerer::over(schema);
    let mut outputs = Vec::with_capacity(exprs.len());
    for e in exprs {
        outputs.push(l.output(e, mode)?);
    }
    Ok(l.finish(outputs, mode))
}

/// The projection `exprs` lowered in one pass into one kernel of the expressions that
/// lower, in order (what fails to lower is undone and left to the interpreter): the
/// kernel, each expression's position among its outputs (`None`: interpreted), and
/// why the first expression left out is.
pub(crate) fn lower_each(
    exprs: &[&TypedExpr],
    schema: &Schema,
) -> (Lowered, Vec<Option<usize>>, Option<String>) {
    let mut l = Lowerer::over(schema);
    let mut outputs = Vec::with_capacity(exprs.len());
    let mut positions = Vec::with_capacity(exprs.len());
    let mut reason = None;
    for e in exprs {
        let mark = l.mark();
        match l.output(e, Mode::Project) {
            Ok(node) => {
                positions.push(Some(outputs.len()));
                outputs.push(node);
            }
            Err(u) => {
                l.undo(mark);
                reason.get_or_insert(u.0);
                positions.push(None);
            }
        }
    }
    (l.finish(outputs, Mode::Project), positions, reason)
}

/// The state of one lowering: the program built so far ([`builder`]) and what it
/// needs at run time.
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

fn unsupported<T>(what: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(what.into()))
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

    /// An empty lowering for batches of `schema`.
    fn over(schema: &Schema) -> Lowerer {
        Lowerer {
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
        }
    }

    /// Lowers `e` as one of the kernel's outputs (a projection's written in its
    /// output type).
    fn output(&mut self, e: &TypedExpr, mode: Mode) -> Result<NodeId, Unsupported> {
        if matches!(e.data_type, DataType::Null) {
            return unsupported(format!("{} results", sql_type_name(&e.data_type)));
        }
        let before = self.nodes.len();
        let node = self.expr(e)?;
        let written = output_physical(&e.data_type);
        let node = match written {
            Some(t) if mode == Mode::Project && written != physical(&e.data_type) => {
                self.add(Node::Cast(node, t))
            }
            _ => node,
        };
        // Counted per expression (what it adds), so expressions that lower alone
        // also lower together.
        let added = self.nodes.len() - before;
        if added > MAX_JIT_NODES {
            return unsupported(format!(
                "an expression of {added} kernel nodes (the JIT compiles up to {MAX_JIT_NODES})"
            ));
        }
        Ok(node)
    }

    /// The program of `outputs`, and what it needs at run time.
    fn finish(self, outputs: Vec<NodeId>, mode: Mode) -> Lowered {
        Lowered {
            program: Program {
                nodes: self.nodes,
                inputs: self.inputs,
                params: self.params,
                outputs,
                mode,
            },
            columns: self.columns,
            interpreted: self.interpreted,
            params: self.values,
            states: self.states,
        }
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
}
