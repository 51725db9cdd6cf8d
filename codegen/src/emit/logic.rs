//! Kleene `AND`/`OR` (operands that call string helpers last, for the rows still
//! undecided), `CASE` and `COALESCE`.

use std::collections::HashMap;

use inkwell::values::IntValue;

use super::{Block, EmitError, Emitter, R, V};
use crate::program::NodeId;

impl<'ctx> Emitter<'_, 'ctx> {
    /// `AND` (`is_and`) or `OR` of `children`. Operands that call a string
    /// predicate helper and share nothing but columns and constants with the rest of
    /// the program ([`Emitter::private`], so that nothing is computed twice) come
    /// last, each for the rows the operands before it left undecided (where one is
    /// FALSE, for `AND`, without an error, the others' values and errors do not
    /// matter: docs/semantics.md). So TPC-H Q19's
    /// `l_shipinstruct = 'DELIVER IN PERSON'` calls its helper only for blocks with
    /// rows whose quantity and mode passed, and only for those rows, and `a < 10 AND
    /// s LIKE '%ab%'` searches the strings of the rows where `a < 10`. The order
    /// changes nothing else: the masks combine the same way, and the error reported
    /// for a row is the interpreter's.
    pub(super) fn logic_operands(
        &mut self,
        is_and: bool,
        children: &[NodeId],
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let (plain, guarded): (Vec<NodeId>, Vec<NodeId>) = children
            .iter()
            .partition(|&&c| !(self.guarded[c] && self.private(c)));
        let mut vals = Vec::with_capacity(children.len());
        for c in plain {
            vals.push(self.node(c, block, memo)?);
        }
        if guarded.is_empty() {
            return self.logic(is_and, &vals);
        }
        // The rows an operand so far decided (FALSE for AND) without an error.
        let mut decided = self.mzero();
        for v in &vals {
            decided = self.or(decided, self.decides_cleanly(is_and, v)?)?;
        }
        for c in guarded {
            let outer = self.care.get();
            let care = self.and(outer.unwrap_or(block.active), self.not(decided)?)?;
            let v = self.operand_for(c, care, block, memo)?;
            decided = self.or(decided, self.decides_cleanly(is_and, &v)?)?;
            vals.push(v);
        }
        self.logic(is_and, &vals)
    }

    /// The rows where `v` decides an `AND` (`is_and`: FALSE) or `OR` (TRUE) without
    /// an error.
    fn decides_cleanly(&self, is_and: bool, v: &V<'ctx>) -> R<IntValue<'ctx>> {
        let V::Bool { t, f, err } = *v else {
            return Err(EmitError("AND/OR of a non-boolean".into()));
        };
        let decides = if is_and { f } else { t };
        match err {
            Some(e) => self.and(decides, self.not(e)?),
            None => Ok(decides),
        }
    }

    /// Whether `c` can be evaluated for some rows only without computing anything
    /// twice: `c` has one use, and every node it reads, columns, parameters and
    /// constants aside, is read only from inside it.
    fn private(&self, c: NodeId) -> bool {
        if self.uses[c] != 1 {
            return false;
        }
        let mut inside: HashMap<NodeId, usize> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![c];
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                for o in self.prog.nodes[n].operands() {
                    *inside.entry(o).or_default() += 1;
                    stack.push(o);
                }
            }
        }
        inside
            .into_iter()
            .all(|(o, reads)| self.prog.nodes[o].is_input_or_constant() || self.uses[o] == reads)
    }

    /// Operand `c` of `AND`/`OR`, evaluated for the rows of `care` only: what is
    /// computed for these rows only is not reused for others.
    fn operand_for(
        &mut self,
        c: NodeId,
        care: IntValue<'ctx>,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let saved = memo.clone();
        let outer = self.care.replace(Some(care));
        let v = self.node(c, block, memo);
        self.care.set(outer);
        *memo = saved;
        v
    }

    /// Kleene AND/OR; errors in rows another child decides are dropped.
    fn logic(&self, is_and: bool, vals: &[V<'ctx>]) -> R<V<'ctx>> {
        let mut t = if is_and { self.ones() } else { self.mzero() };
        let mut f = if is_and { self.mzero() } else { self.ones() };
        let mut errs = None;
        let mut deciding = self.mzero();
        for v in vals {
            let V::Bool { t: vt, f: vf, err } = *v else {
                return Err(EmitError("AND/OR of a non-boolean".into()));
            };
            if is_and {
                t = self.and(t, vt)?;
                f = self.or(f, vf)?;
            } else {
                t = self.or(t, vt)?;
                f = self.and(f, vf)?;
            }
            let decides = if is_and { vf } else { vt };
            let clean = match err {
                Some(e) => self.and(decides, self.not(e)?)?,
                None => decides,
            };
            deciding = self.or(deciding, clean)?;
            errs = self.or_opt(errs, err)?;
        }
        let err = match errs {
            Some(e) => Some(self.and(e, self.not(deciding)?)?),
            None => None,
        };
        Ok(V::Bool { t, f, err })
    }

    pub(super) fn case(
        &mut self,
        branches: &[(NodeId, NodeId)],
        else_expr: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let mut remaining = self.ones();
        let mut err: Option<IntValue<'ctx>> = None;
        let mut taken = Vec::with_capacity(branches.len());
        for &(c, v) in branches {
            let V::Bool {
                t: ct, err: cerr, ..
            } = self.node(c, block, memo)?
            else {
                return Err(EmitError("CASE condition is not boolean".into()));
            };
            let mut take = self.and(remaining, ct)?;
            if let Some(ce) = cerr {
                err = self.or_opt(err, Some(self.and(remaining, ce)?))?;
                take = self.and(take, self.not(ce)?)?;
                remaining = self.and(remaining, self.not(ce)?)?;
            }
            remaining = self.and(remaining, self.not(take)?)?;
            let value = self.node(v, block, memo)?;
            if let Some(ve) = value.err() {
                err = self.or_opt(err, Some(self.and(take, ve)?))?;
            }
            taken.push((take, value));
        }
        let otherwise = self.node(else_expr, block, memo)?;
        if let Some(ee) = otherwise.err() {
            err = self.or_opt(err, Some(self.and(remaining, ee)?))?;
        }
        self.select_all(taken, remaining, otherwise, err)
    }

    /// Merges values taken on disjoint row masks, the last one on `rest`.
    fn select_all(
        &self,
        taken: Vec<(IntValue<'ctx>, V<'ctx>)>,
        rest: IntValue<'ctx>,
        last: V<'ctx>,
        err: Option<IntValue<'ctx>>,
    ) -> R<V<'ctx>> {
        match last {
            V::Bool { t, f, .. } => {
                let mut rt = self.and(t, rest)?;
                let mut rf = self.and(f, rest)?;
                for (take, v) in taken {
                    let V::Bool { t, f, .. } = v else {
                        return Err(EmitError("mixed CASE values".into()));
                    };
                    rt = self.or(rt, self.and(take, t)?)?;
                    rf = self.or(rf, self.and(take, f)?)?;
                }
                Ok(V::Bool { t: rt, f: rf, err })
            }
            V::Vals { v, valid, .. } => {
                let mut out = v;
                let all_valid = valid.is_none()
                    && taken
                        .iter()
                        .all(|(_, v)| matches!(v, V::Vals { valid: None, .. }));
                let mut rvalid = self.and(valid.unwrap_or(self.ones()), rest)?;
                for (take, tv) in taken {
                    let (x, xvalid, _) = Self::vals(tv)?;
                    let lanes = self.to_lanes(take)?;
                    out = self.b.build_select(lanes, x, out, "")?.into_vector_value();
                    rvalid = self.or(rvalid, self.and(take, xvalid.unwrap_or(self.ones()))?)?;
                }
                Ok(V::Vals {
                    v: out,
                    valid: if all_valid { None } else { Some(rvalid) },
                    err,
                })
            }
            V::Str {
                ptr, len, valid, ..
            } => {
                let (mut optr, mut olen) = (ptr, len);
                let all_valid = valid.is_none()
                    && taken
                        .iter()
                        .all(|(_, v)| matches!(v, V::Str { valid: None, .. }));
                let mut rvalid = self.and(valid.unwrap_or(self.ones()), rest)?;
                for (take, tv) in taken {
                    let V::Str {
                        ptr: xp,
                        len: xl,
                        valid: xvalid,
                        ..
                    } = tv
                    else {
                        return Err(EmitError("mixed CASE values".into()));
                    };
                    let lanes = self.to_lanes(take)?;
                    optr = self
                        .b
                        .build_select(lanes, xp, optr, "")?
                        .into_vector_value();
                    olen = self
                        .b
                        .build_select(lanes, xl, olen, "")?
                        .into_vector_value();
                    rvalid = self.or(rvalid, self.and(take, xvalid.unwrap_or(self.ones()))?)?;
                }
                Ok(V::Str {
                    ptr: optr,
                    len: olen,
                    valid: if all_valid { None } else { Some(rvalid) },
                    err,
                })
            }
        }
    }

    pub(super) fn coalesce(
        &mut self,
        args: &[NodeId],
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let mut remaining = self.ones();
        let mut err = None;
        let mut taken = Vec::with_capacity(args.len());
        let (last_id, firsts) = args
            .split_last()
            .ok_or_else(|| EmitError("empty COALESCE".into()))?;
        for &a in firsts {
            let v = self.node(a, block, memo)?;
            let valid = self.validity(&v)?.unwrap_or(self.ones());
            if let Some(e) = v.err() {
                err = self.or_opt(err, Some(self.and(remaining, e)?))?;
                remaining = self.and(remaining, self.not(e)?)?;
            }
            let take = self.and(remaining, valid)?;
            remaining = self.and(remaining, self.not(valid)?)?;
            taken.push((take, v));
        }
        let last = self.node(*last_id, block, memo)?;
        if let Some(e) = last.err() {
            err = self.or_opt(err, Some(self.and(remaining, e)?))?;
        }
        self.select_all(taken, remaining, last, err)
    }
}
