//! The node dispatch: a [`Node`]'s value in one block, from its operands' values,
//! emitted once per block copy (memoized).

use std::collections::HashMap;

use inkwell::IntPredicate;

use super::ir::IntVec;
use super::{Block, EmitError, Emitter, LANES, R, V};
use crate::program::{Callee, CmpOp, Node, NodeId, PType, TruthTest};
use crate::ranges::cannot_overflow;

impl<'ctx> Emitter<'_, 'ctx> {
    #[recursive::recursive]
    pub(super) fn node(
        &mut self,
        id: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        if let Some(v) = memo.get(&id) {
            return Ok(*v);
        }
        let node = self.prog.nodes[id].clone();
        // (A cast to `I128` of a narrower integer is its own 64-bit form.)
        let computed = matches!(
            node,
            Node::Arith(..) | Node::Neg(_) | Node::Abs(_) | Node::RangeCheck(..)
        );
        if computed && !self.wide_fallback && self.prog.type_of(id) == PType::I128 {
            if let Some(v) = self.speculate(id, block, memo)? {
                memo.insert(id, v);
                return Ok(v);
            }
        }
        let v = match node {
            Node::Input(slot) => self.input(slot, block)?,
            Node::Param(slot) => {
                let x = self.params[slot]
                    .ok_or_else(|| EmitError(format!("parameter {slot} not loaded")))?;
                let t = self.prog.params[slot];
                if t == PType::Str {
                    self.string_param(x.into_pointer_value())?
                } else {
                    let v = self.splat(x)?;
                    if t.is_float() {
                        self.numbers.borrow_mut().insert(v);
                    }
                    V::Vals {
                        v,
                        valid: None,
                        err: None,
                    }
                }
            }
            Node::Const(t, bits) => V::Vals {
                v: self.const_vec(t, bits)?,
                valid: None,
                err: None,
            },
            Node::Const128(x) => V::Vals {
                v: self.int_vec_const(PType::I128, x)?,
                valid: None,
                err: None,
            },
            Node::Bool(x) => {
                let (t, f) = if x {
                    (self.ones(), self.mzero())
                } else {
                    (self.mzero(), self.ones())
                };
                V::Bool { t, f, err: None }
            }
            Node::Null(PType::Bool) => V::Bool {
                t: self.mzero(),
                f: self.mzero(),
                err: None,
            },
            Node::Null(PType::Str) => {
                let zero = self.i64t.vec_type(LANES).const_zero();
                V::Str {
                    ptr: zero,
                    len: zero,
                    valid: Some(self.mzero()),
                    err: None,
                }
            }
            Node::Null(t) => V::Vals {
                v: self.vec_ty(t).const_zero(),
                valid: Some(self.mzero()),
                err: None,
            },
            Node::Arith(op, l, r) => {
                let t = self.prog.type_of(l);
                let exact = cannot_overflow(op, t, self.ranges[l], self.ranges[r]);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                if exact {
                    self.exact_arith(op, l, r)?
                } else {
                    self.arith(op, t, l, r)?
                }
            }
            Node::Neg(x) | Node::Abs(x) => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                self.neg_abs(matches!(self.prog.nodes[id], Node::Abs(_)), t, xv)?
            }
            Node::RangeCheck(x, lo, hi)
                if self.ranges[x].is_some_and(|(min, max)| min >= lo && max <= hi) =>
            {
                // Already inside the bounds.
                self.node(x, block, memo)?
            }
            Node::RangeCheck(x, lo, hi) => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let (v, valid, err) = Self::vals(xv)?;
                let b = &self.b;
                let below =
                    b.build_int_compare(IntPredicate::SLT, v, self.int_vec_const(t, lo)?, "")?;
                let above =
                    b.build_int_compare(IntPredicate::SGT, v, self.int_vec_const(t, hi)?, "")?;
                let outside = b.build_or(below, above, "")?;
                let err = self.or_opt(err, Some(self.new_errors(outside, valid)?))?;
                V::Vals { v, valid, err }
            }
            Node::Cmp(op, l, r) => {
                let t = self.prog.type_of(l);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                self.compare(op, t, l, r)?
            }
            Node::Distinct(l, r, negated) => {
                let t = self.prog.type_of(l);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                self.distinct(t, l, r, negated)?
            }
            Node::And(children) | Node::Or(children) => {
                let is_and = matches!(self.prog.nodes[id], Node::And(_));
                self.logic_operands(is_and, &children, block, memo)?
            }
            Node::Not(x) => match self.node(x, block, memo)? {
                V::Bool { t, f, err } => V::Bool { t: f, f: t, err },
                _ => return Err(EmitError("NOT of a non-boolean".into())),
            },
            Node::IsNull(x, negated) => {
                let xv = self.node(x, block, memo)?;
                let valid = self.validity(&xv)?.unwrap_or(self.ones());
                let null = self.not(valid)?;
                let (t, f) = if negated {
                    (valid, null)
                } else {
                    (null, valid)
                };
                V::Bool {
                    t,
                    f,
                    err: xv.err(),
                }
            }
            Node::Truth(x, test) => match self.node(x, block, memo)? {
                V::Bool { t, f, err } => {
                    let (yes, no) = match test {
                        TruthTest::IsTrue => (t, self.not(t)?),
                        TruthTest::IsNotTrue => (self.not(t)?, t),
                        TruthTest::IsFalse => (f, self.not(f)?),
                        TruthTest::IsNotFalse => (self.not(f)?, f),
                    };
                    V::Bool { t: yes, f: no, err }
                }
                _ => return Err(EmitError("truth test of a non-boolean".into())),
            },
            Node::Case(branches, else_expr) => self.case(&branches, else_expr, block, memo)?,
            Node::Coalesce(args) => self.coalesce(&args, block, memo)?,
            Node::InList {
                x,
                values,
                has_null,
                negated,
            } => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let mut found = self.mzero();
                for v in values {
                    let vv = self.node(v, block, memo)?;
                    if let V::Bool { t: eq, .. } = self.compare(CmpOp::Eq, t, xv, vv)? {
                        found = self.or(found, eq)?;
                    }
                }
                self.membership(found, &xv, has_null, negated)?
            }
            Node::InSet {
                x,
                state,
                has_null,
                negated,
            } => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let found = self.in_set(t, state, &xv)?;
                self.membership(found, &xv, has_null, negated)?
            }
            Node::Cast(x, to) => {
                let from = self.prog.type_of(x);
                let known = self.ranges[x];
                let xv = self.node(x, block, memo)?;
                self.cast(from, to, xv, known)?
            }
            Node::Extract(x, lsb, to) => {
                let from = self.prog.type_of(x);
                let (v, valid, err) = Self::vals(self.node(x, block, memo)?)?;
                let shifted = if lsb > 0 {
                    let by = self.int_vec_const(from, i128::from(lsb))?;
                    self.b.build_right_shift(v, by, false, "")?
                } else {
                    v
                };
                let v = if to.width() < from.width() {
                    let target = self.vec_ty(to).into_vector_type_int()?;
                    self.b.build_int_truncate(shifted, target, "")?
                } else {
                    shifted
                };
                V::Vals { v, valid, err }
            }
            Node::DivideByLiteral {
                x,
                magic,
                remainder,
            } => {
                let xv = self.node(x, block, memo)?;
                let mut m = Vec::with_capacity(magic.len());
                for p in magic {
                    m.push(Self::vals(self.node(p, block, memo)?)?.0);
                }
                self.divide_by_literal(xv, &m, remainder)?
            }
            Node::Pack(parts) => {
                let wide = self.vec_ty(PType::I128).into_vector_type_int()?;
                let mut packed = wide.const_zero();
                let (mut valid, mut err) = (None, None);
                let mut bit = 0u32;
                for p in parts {
                    let t = self.prog.type_of(p);
                    let (v, pvalid, perr) = Self::vals(self.node(p, block, memo)?)?;
                    valid = self.and_opt(valid, pvalid)?;
                    err = self.or_opt(err, perr)?;
                    let mut v = self.b.build_int_z_extend(v, wide, "")?;
                    if bit > 0 {
                        let by = self.int_vec_const(PType::I128, i128::from(bit))?;
                        v = self.b.build_left_shift(v, by, "")?;
                    }
                    packed = self.b.build_or(packed, v, "")?;
                    bit += 8 * t.width();
                }
                V::Vals {
                    v: packed,
                    valid,
                    err,
                }
            }
            Node::Helper {
                helper,
                state,
                args,
                out,
                quick,
            } => self.helper(helper, state, &args, out, quick, block)?,
            Node::Call {
                callee,
                args,
                ret,
                strict,
            } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in &args {
                    vals.push(self.node(*a, block, memo)?);
                }
                match callee {
                    Callee::Intrinsic { name, domain } => {
                        self.call_intrinsic(name, domain, ret, &vals)?
                    }
                    Callee::Helper { helper, state } => {
                        self.call_helper(helper, state, ret, strict, &args, &vals, block)?
                    }
                }
            }
        };
        memo.insert(id, v);
        Ok(v)
    }
}
