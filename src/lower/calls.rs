//! Function calls: the registry's built-in operators (arithmetic, comparisons,
//! truth tests, ...) as kernel nodes, and the other functions as LLVM intrinsics or
//! calls of their row-wise implementation over blocks (the generic row helper).

use arrow_schema::DataType;
use broadhead_codegen::{ArithOp, Callee, CmpOp, DivisionMagic, Node, NodeId, PType, TruthTest};

use super::strings::is_bytes;
use super::{physical, unsupported, Lowerer, Unsupported, DECIMAL_I64_DIGITS};
use crate::functions::row::{self, CallState};
use crate::functions::{FuncId, Inline, Lowering, RowImpl, Signature};
use crate::scalar::ScalarValue;
use crate::strings::computed;
use crate::typed::TypedExpr;

/// The comparison of a comparison function (`=`, `<>`, `<`, `<=`, `>`, `>=`).
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

impl Lowerer {
    /// A call of a built-in function (by its [`FuncId`]), of type `ret`.
    pub(super) fn call(
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
            Divide | Modulo if self.by_literal(args, ret).is_some() => {
                self.divide_by_literal(args, ret, func == Modulo)
            }
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
            Like | ILike => self.like(func, args),
            Length => self.length(&args[0]),
            Row => unsupported("a row function outside its signature"),
        }
    }

    /// The magic numbers of `x / d` or `x % d` (`args`, of type `ret`) where `ret`
    /// is INTEGER or BIGINT and `d` a literal of at least 2 in magnitude.
    fn by_literal(&self, args: &[TypedExpr], ret: &DataType) -> Option<DivisionMagic> {
        let bits = match ret {
            DataType::Int32 => 32,
            DataType::Int64 => 64,
            _ => return None,
        };
        let d = match args.get(1)?.as_literal()? {
            ScalarValue::Int32(v) => i64::from(*v),
            ScalarValue::Int64(v) => *v,
            _ => return None,
        };
        (args[0].data_type == *ret)
            .then(|| DivisionMagic::of(d, bits))
            .flatten()
    }

    /// `x / d` or `x % d` by a literal `d` ([`Lowerer::by_literal`]): a multiply by
    /// its magic numbers, passed as parameters so that every such literal shares
    /// the kernel.
    fn divide_by_literal(
        &mut self,
        args: &[TypedExpr],
        ret: &DataType,
        remainder: bool,
    ) -> Result<NodeId, Unsupported> {
        let Some(m) = self.by_literal(args, ret) else {
            return unsupported("a division by a literal without its magic numbers");
        };
        let ty = Self::typ_of(ret)?;
        let x = self.expr(&args[0])?;
        let mask = |on: bool| if on { u64::MAX } else { 0 };
        let magic = [
            m.abs_divisor as u64,
            m.multiplier as u64,
            u64::from(m.shift),
            mask(m.add),
            mask(m.negate),
        ]
        .map(|bits| self.param(ty, bits));
        Ok(self.add(Node::DivideByLiteral {
            x,
            magic,
            remainder,
        }))
    }

    /// A registry function implemented row by row (or by an LLVM intrinsic).
    pub(super) fn row_call(
        &mut self,
        sig: &'static Signature,
        args: &[TypedExpr],
    ) -> Result<NodeId, Unsupported> {
        match sig.lowering {
            Lowering::Interpreted(why) => return unsupported(why),
            Lowering::Inline(inline) => {
                if let Some(id) = self.inline_call(inline, args)? {
                    return Ok(id);
                }
            }
            _ => {}
        }
        if let Some(joined) = self.concat_chain(sig, args)? {
            return Ok(joined);
        }
        if let Some(matched) = self.as_like(sig, args)? {
            return Ok(matched);
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
            Lowering::Helper | Lowering::Inline(_) => self.row_helper(sig.display(), imp, ids, ret),
            Lowering::Interpreted(why) => return unsupported(why),
        })
    }

    /// A registry function with [`Lowering::Inline`]: what `inline` says (built in
    /// `interval` for intervals, in `datetime` for dates); `None`: the call is the
    /// row function's after all (`date_trunc` of a unit that is not a literal,
    /// `greatest` of strings).
    fn inline_call(
        &mut self,
        inline: Inline,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        match inline {
            Inline::Field(field) => match args {
                [x] => self.date_field(field, x).map(Some),
                _ => unsupported(format!("{inline:?} of {} arguments", args.len())),
            },
            Inline::Truncate => self.truncation(args),
            Inline::Difference => self.difference(args),
            Inline::AddDays => self.add_to_timestamp(true, args),
            Inline::AddMonths => self.add_months(args),
            Inline::FixedZone { to_wall_clock } => self.fixed_zone(to_wall_clock, args),
            Inline::AddNanoseconds => self.add_to_timestamp(false, args),
            Inline::Extreme { greatest } => self.extreme(greatest, args),
            Inline::Compare(_) | Inline::FieldWise(_) | Inline::Negate => {
                self.interval_call(inline, args).map(Some)
            }
        }
    }

    /// `greatest(x, …)` or `least(x, …)` of numbers, dates or timestamps: the
    /// first non-NULL value that no later one beats (NaN the greatest float, as the
    /// comparisons order it), one CASE per argument; `None` for other types.
    fn extreme(
        &mut self,
        greatest: bool,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        let Some(first) = args.first() else {
            return Ok(None);
        };
        match physical(&first.data_type) {
            None | Some(PType::Str | PType::I128 | PType::Bool | PType::Ptr) => return Ok(None),
            Some(_) => {}
        }
        let beats = if greatest { CmpOp::Gt } else { CmpOp::Lt };
        let mut best = self.expr(first)?;
        for a in &args[1..] {
            let v = self.expr(a)?;
            let none_yet = self.add(Node::IsNull(best, false));
            let better = self.add(Node::Cmp(beats, v, best));
            best = self.add(Node::Case(vec![(none_yet, v), (better, v)], best));
        }
        Ok(Some(best))
    }

    /// A call of a row-wise implementation through the generic helper; calls with
    /// equal `key`s (the same function) share one state.
    pub(super) fn row_helper(
        &mut self,
        key: String,
        imp: RowImpl,
        args: Vec<NodeId>,
        ret: PType,
    ) -> NodeId {
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
}
