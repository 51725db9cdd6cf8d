//! `x IN (v1, v2, ...)` of literal values: on a string column a few equalities or
//! the set helper, on other strings the set's row function, on numbers a chain of
//! comparisons or, for long lists, a sorted set ([`Node::InSet`]).

use std::collections::HashSet;

use broadhead_codegen::{CmpOp, InSet, Node, NodeId, PType};

use super::strings::{is_bytes, literal_bytes};
use super::{literal_bits, Lowerer, Unsupported};
use crate::scalar::ScalarValue;
use crate::strings::{self, computed, helpers};
use crate::typed::TypedExpr;

/// The longest numeric `IN` list compiled as a chain of comparisons; longer lists
/// are looked up in a sorted set ([`Node::InSet`]), so compile time does not grow
/// with the list.
const IN_CHAIN_MAX: usize = 32;

/// The longest `IN` list of strings on a string column compiled as one equality per
/// value (`s = 'AIR' OR s = 'AIR REG'`): each decides, in the kernel, every row its
/// length and first four bytes decide ([`QuickTest::Equal`]), where the set helper is
/// called for every block. Longer lists use the set helper (one call a block rather
/// than one check a value).
const IN_EQUALITIES_MAX: usize = 4;

impl Lowerer {
    pub(super) fn in_list(
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
}
