//! Strings and BLOBs: comparisons, `LIKE`/`ILIKE`, `length` and `||` chains. On a
//! string column these are the specialized column helpers of [`crate::strings`]
//! (with what a row's length and first bytes decide checked in the kernel first),
//! including `upper`/`lower` of a column matched against a literal and the leading
//! characters (`substr(s, 1, k)`, `left(s, k)`) compared without computing them; on
//! strings the kernel computes, the row functions of [`computed`].

use arrow_schema::DataType;
use broadhead_codegen::{CaseMap, CmpOp, Find, Node, NodeId, PType, QuickTest};

use super::{unsupported, Lowerer, Unsupported};
use crate::functions::{string, FuncId, Signature, Specialization};
use crate::scalar::ScalarValue;
use crate::strings::{self, computed, helpers};
use crate::typed::{TypedExpr, TypedKind};

/// Whether values of `t` are byte strings to the kernel (VARCHAR and BLOB: views,
/// compared byte by byte).
pub(super) fn is_bytes(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Binary)
}

/// The bytes of a VARCHAR or BLOB literal.
pub(super) fn literal_bytes(v: &ScalarValue) -> Option<&[u8]> {
    match v {
        ScalarValue::Utf8(s) => Some(s.as_bytes()),
        ScalarValue::Binary(b) => Some(b),
        _ => None,
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

/// The comparison `op` with its operands swapped (`'a' < s` is `s > 'a'`).
fn flipped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// The operands of a chain of concatenations (`||`, [`Specialization::Concatenation`]),
/// left to right.
fn concat_operands<'e>(args: &'e [TypedExpr], out: &mut Vec<&'e TypedExpr>) {
    for a in args {
        match &a.kind {
            TypedKind::Call { sig, args }
                if sig.specialization == Specialization::Concatenation =>
            {
                concat_operands(args, out)
            }
            _ => out.push(a),
        }
    }
}

impl Lowerer {
    /// The input slot of a string (or BLOB) column.
    pub(super) fn column_of_strings(&mut self, e: &TypedExpr) -> Option<usize> {
        match e.kind {
            TypedKind::Column(c) if is_bytes(&e.data_type) => Some(self.slot(c, PType::Str)),
            _ => None,
        }
    }

    /// `a <op> b` of strings or BLOBs: the column helpers where a side is a column
    /// and the other a column or a literal, else a row function.
    pub(super) fn string_compare(
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

    /// `column <op> literal` for a string or BLOB column (slot `x`).
    pub(super) fn compare_literal(&mut self, op: CmpOp, x: usize, literal: &[u8]) -> NodeId {
        let key = format!("{op:?}:{literal:?}");
        let state = strings::CompareLiteral::new(op, literal);
        let helper = helpers::cmp_literal(self.inputs[x].layout);
        self.deciding_helper(helper, key, state, x, quick_test(op), literal)
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
            if let (Specialization::CaseMap { upper }, [s]) = (sig.specialization, args.as_slice())
            {
                let name = sig.name;
                let negated = op == CmpOp::Ne;
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
        let Specialization::LeadingCharacters { start, count } = sig.specialization else {
            return None;
        };
        if let Some(start) = start {
            let Some(ScalarValue::Int64(1)) = args.get(start)?.as_literal() else {
                return None;
            };
        }
        let Some(ScalarValue::Int64(k)) = args.get(count)?.as_literal() else {
            return None;
        };
        let k = *k;
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

    /// `x LIKE p` or `x ILIKE p` (`func`) with a literal pattern `p`: on a string
    /// column the helper for the pattern's shape (with what a row's length and first
    /// bytes decide checked in the kernel first), else the row function that matches.
    pub(super) fn like(&mut self, func: FuncId, args: &[TypedExpr]) -> Result<NodeId, Unsupported> {
        let Some(ScalarValue::Utf8(p)) = args[1].as_literal() else {
            return unsupported("LIKE with a pattern that is not a literal");
        };
        let p = p.clone();
        let Some(slot) = self.column_of_strings(&args[0]) else {
            // `lower(x) LIKE p`, `upper(x) LIKE p`: one row function that maps
            // and matches, no mapped string in the arena.
            if let (FuncId::Like, TypedKind::Call { sig, args: inner }) = (func, &args[0].kind) {
                if let (Specialization::CaseMap { upper }, [s]) =
                    (sig.specialization, inner.as_slice())
                {
                    let pattern = strings::like_pattern(&p).map_err(Unsupported)?;
                    let key = format!("{}:Like:{p}", sig.name);
                    if let Some(slot) = self.column_of_strings(s) {
                        return Ok(self.case_mapped_column(slot, upper, pattern, key));
                    }
                    let s = self.expr(s)?;
                    let imp = computed::case_mapped_like(upper, pattern);
                    return Ok(self.row_helper(key, imp, vec![s], PType::Bool));
                }
            }
            let x = self.expr(&args[0])?;
            let imp = if func == FuncId::Like {
                computed::like(strings::like_pattern(&p).map_err(Unsupported)?)
            } else {
                computed::ilike(strings::ilike_pattern(&p).map_err(Unsupported)?)
            };
            return Ok(self.row_helper(format!("{func:?}:{p}"), imp, vec![x], PType::Bool));
        };
        let layout = self.inputs[slot].layout;
        let node = if func == FuncId::Like {
            let pattern = strings::like_pattern(&p).map_err(Unsupported)?;
            let helper = helpers::for_pattern(&pattern, layout);
            let key = format!("like:{p}");
            // Equalities and prefixes are decided by their length and first
            // bytes; suffixes and substrings on rows of up to eight bytes.
            let quick = match pattern.literal_shape() {
                Some((Find::Equal, s)) => Some((QuickTest::Equal { negated: false }, s.to_vec())),
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

    /// `length(x)`: the column helper on a string column, else the row function of
    /// a string the kernel computes.
    pub(super) fn length(&mut self, x: &TypedExpr) -> Result<NodeId, Unsupported> {
        let Some(slot) = self.column_of_strings(x) else {
            let x = self.expr(x)?;
            return Ok(self.row_helper("length".into(), computed::length(), vec![x], PType::I32));
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

    /// `starts_with(s, 'x')`, `ends_with` and `contains` ([`Specialization::Matches`])
    /// of a literal without LIKE's wildcards and escape character: `s LIKE 'x%'`,
    /// `'%x'` or `'%x%'`. `None` for other calls.
    pub(super) fn as_like(
        &mut self,
        sig: &Signature,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        let (Specialization::Matches(find), [s, x]) = (sig.specialization, args) else {
            return Ok(None);
        };
        let Some(ScalarValue::Utf8(literal)) = x.as_literal() else {
            return Ok(None);
        };
        if literal.contains(['%', '_', '\\']) {
            return Ok(None);
        }
        let pattern = match find {
            Find::Equal => literal.clone(),
            Find::Prefix => format!("{literal}%"),
            Find::Suffix => format!("%{literal}"),
            Find::Contains => format!("%{literal}%"),
        };
        let pattern = TypedExpr::literal(ScalarValue::Utf8(pattern), x.span);
        self.like(FuncId::Like, &[s.clone(), pattern]).map(Some)
    }

    /// `a || b || c` (a chain of concatenations of more than two operands): one
    /// call of the row function that joins every operand (one string per row).
    /// `None` for other calls.
    pub(super) fn concat_chain(
        &mut self,
        sig: &Signature,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        if sig.specialization != Specialization::Concatenation {
            return Ok(None);
        }
        let mut parts = Vec::new();
        concat_operands(args, &mut parts);
        if parts.len() <= 2 {
            return Ok(None);
        }
        let ids = parts
            .into_iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(self.row_helper(
            sig.name.into(),
            string::joined(),
            ids,
            PType::Str,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::super::lower;
    use arrow_schema::{DataType, Field, Schema};
    use broadhead_codegen::Mode;

    /// The row functions the kernel of predicate `sql` calls, by their keys.
    fn row_functions(sql: &str) -> Vec<String> {
        let schema = Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("t", DataType::Utf8, true),
        ]);
        let e = crate::sql::parse_expr(sql).unwrap();
        let typed = crate::bind::bind(&e, &schema).unwrap();
        let lowered = lower(&[&typed], Mode::Filter, &schema).unwrap();
        let mut keys: Vec<String> = lowered
            .program
            .nodes
            .iter()
            .filter(|n| matches!(n, broadhead_codegen::Node::Call { .. }))
            .map(|n| format!("{n:?}"))
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn declared_specializations_reach_the_kernel() {
        // Decided on the column's bytes: no call of upper, substr or left.
        for sql in [
            "upper(s) = 'AB'",
            "lower(s) <> 'ab'",
            "upper(s) LIKE '%A%'",
            "substr(s, 1, 2) = 'ab'",
            "left(s, 2) = 'ab'",
        ] {
            assert!(
                row_functions(sql).is_empty(),
                "{sql}: {:?}",
                row_functions(sql)
            );
        }
        // Without the declaration (substr from 2) the substring is called.
        assert_eq!(
            row_functions("substr(s, 2, 2) = 'ab'").len(),
            2,
            "substr, then ="
        );
        // A chain of || is one call of the joining function, then the comparison.
        assert_eq!(row_functions("s || '-' || t || s = 'x'").len(), 2);
    }
}
