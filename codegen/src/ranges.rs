//! The values each integer node of a program can hold, found before emitting it, so
//! that checks that cannot fail are not emitted: a sum, difference or product of
//! signed integers whose operands' ranges keep it inside its type needs no overflow
//! test, and a [`Node::RangeCheck`] of a value already inside its bounds needs no
//! compare. Q1's `1 - l_discount` on DECIMAL(15,2) is the case in point: the
//! discount is range-checked to 15 digits and the literal to its own, so the
//! difference neither overflows nor leaves its 16 digits.
//!
//! A range holds in the rows whose value matters: valid rows without an error. A
//! row that failed a check holds anything, but its error travels with every value
//! computed from it, so what is computed from it does not matter either; NULL rows
//! hold anything and their errors are dropped anyway.

use crate::program::{int_range, ArithOp, Node, NodeId, PType, Program};

/// The smallest and largest value (inclusive) of a node.
pub(crate) type Range = (i128, i128);

/// For each node, the range of its values (`None` for nodes that are not integers,
/// or not `I8`–`I64`, `U8`–`U64`: 128-bit nodes are left to their own checks).
pub(crate) fn value_ranges(prog: &Program) -> Vec<Option<Range>> {
    let mut ranges: Vec<Option<Range>> = Vec::with_capacity(prog.nodes.len());
    for (id, node) in prog.nodes.iter().enumerate() {
        let t = prog.type_of(id);
        let full = int_range(t).filter(|_| t != PType::I128);
        let of = |x: NodeId| ranges.get(x).copied().flatten();
        let range = match (node, full) {
            (_, None) => None,
            (Node::Const(_, bits), Some(_)) => Some(constant(t, *bits)).map(|v| (v, v)),
            (Node::RangeCheck(x, lo, hi), Some(full)) => {
                intersect(of(*x).unwrap_or(full), (*lo, *hi))
            }
            (Node::Arith(op, a, b), Some(full)) if t.is_signed() => match (of(*a), of(*b)) {
                (Some(a), Some(b)) => exact(*op, a, b)
                    .and_then(|r| intersect(r, full))
                    .or(Some(full)),
                _ => Some(full),
            },
            (Node::Cast(x, _), Some(_)) if prog.type_of(*x) == PType::Bool => Some((0, 1)),
            (Node::Cast(x, _), Some(full)) => {
                of(*x).and_then(|r| intersect(r, full)).or(Some(full))
            }
            (Node::Case(arms, otherwise), Some(full)) => arms
                .iter()
                .map(|&(_, v)| v)
                .chain([*otherwise])
                .map(of)
                .try_fold(None, |all: Option<Range>, r| {
                    let r = r?;
                    Some(Some(all.map_or(r, |a| (a.0.min(r.0), a.1.max(r.1)))))
                })
                .flatten()
                .or(Some(full)),
            (_, full) => full,
        };
        ranges.push(range);
    }
    ranges
}

/// Whether `Arith(op, a, b)` of a signed integer type `t` can never overflow `t`
/// given the operands' ranges.
pub(crate) fn cannot_overflow(op: ArithOp, t: PType, a: Option<Range>, b: Option<Range>) -> bool {
    let sum_or_product = matches!(
        op,
        ArithOp::Add | ArithOp::Sub | ArithOp::Mul | ArithOp::WideMul
    );
    match (t.is_signed(), int_range(t), a, b) {
        (true, Some(full), Some(a), Some(b)) if t != PType::I128 && sum_or_product => {
            exact(op, a, b).is_some_and(|(lo, hi)| lo >= full.0 && hi <= full.1)
        }
        _ => false,
    }
}

/// The range of `a op b` for values in `a` and `b` (`None`: another operation, or
/// beyond `i128`).
fn exact(op: ArithOp, a: Range, b: Range) -> Option<Range> {
    match op {
        ArithOp::Add => Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?)),
        ArithOp::Sub => Some((a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?)),
        ArithOp::Mul | ArithOp::WideMul => {
            let products = [
                a.0.checked_mul(b.0)?,
                a.0.checked_mul(b.1)?,
                a.1.checked_mul(b.0)?,
                a.1.checked_mul(b.1)?,
            ];
            Some((*products.iter().min()?, *products.iter().max()?))
        }
        // A quotient or remainder by a positive constant.
        ArithOp::Div | ArithOp::FloorDiv | ArithOp::Rem | ArithOp::FloorMod
            if b.0 == b.1 && b.0 > 0 =>
        {
            let d = b.0;
            Some(match op {
                ArithOp::Div => (a.0 / d, a.1 / d),
                ArithOp::FloorDiv => (a.0.div_euclid(d), a.1.div_euclid(d)),
                ArithOp::FloorMod => (0, d - 1),
                _ => (
                    if a.0 < 0 { -(d - 1) } else { 0 },
                    if a.1 > 0 { d - 1 } else { 0 },
                ),
            })
        }
        _ => None,
    }
}

/// The values in both ranges (`None`: none; a check that fails every row).
fn intersect(a: Range, b: Range) -> Option<Range> {
    let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));
    (lo <= hi).then_some((lo, hi))
}

/// The value of a constant of integer type `t` with bits `bits` (the type's low
/// bits, sign-extended for a signed type, as the emitter builds it).
fn constant(t: PType, bits: u64) -> i128 {
    let width = 8 * t.width();
    let shift = 64 - width.min(64);
    if t.is_signed() {
        i128::from(((bits << shift) as i64) >> shift)
    } else {
        i128::from((bits << shift) >> shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{CmpOp, InputSpec, Mode};

    fn program(nodes: Vec<Node>, inputs: Vec<PType>) -> Program {
        let outputs = vec![nodes.len() - 1];
        Program {
            nodes,
            inputs: inputs.into_iter().map(InputSpec::new).collect(),
            params: vec![PType::I64],
            outputs,
            mode: Mode::Project,
        }
    }

    /// Q1's `1 - discount` and `price * (1 - discount)` on 15-digit decimals: the
    /// difference is exact, the product may overflow 64 bits.
    #[test]
    fn ranges_follow_checks_and_arithmetic() {
        let max15 = 10i128.pow(15) - 1;
        let p = program(
            vec![
                Node::Input(0),
                Node::RangeCheck(0, -max15, max15),
                Node::Param(0),
                Node::RangeCheck(2, -999, 999),
                Node::Arith(ArithOp::Sub, 3, 1),
                Node::Arith(ArithOp::Mul, 1, 4),
                Node::Const(PType::I32, u64::from(-7i32 as u32)),
                Node::Cast(6, PType::I64),
            ],
            vec![PType::I64],
        );
        let r = value_ranges(&p);
        assert_eq!(r[0], Some((i64::MIN.into(), i64::MAX.into())));
        assert_eq!(r[1], Some((-max15, max15)));
        assert_eq!(r[4], Some((-999 - max15, 999 + max15)));
        assert!(cannot_overflow(ArithOp::Sub, PType::I64, r[3], r[1]));
        assert!(!cannot_overflow(ArithOp::Mul, PType::I64, r[1], r[4]));
        assert_eq!(r[5], Some((i64::MIN.into(), i64::MAX.into())));
        assert_eq!(r[6], Some((-7, -7)));
        assert_eq!(r[7], Some((-7, -7)));
        // Unchecked inputs may overflow anything.
        assert!(!cannot_overflow(ArithOp::Add, PType::I64, r[0], r[6]));
        assert!(!cannot_overflow(ArithOp::Add, PType::I64, r[0], r[1]));
    }

    /// The calendar's steps (`lower::datetime`): quotients and remainders by positive
    /// constants, booleans as 0 or 1 and CASE arms bound what follows, so its sums
    /// and products need no overflow test.
    #[test]
    fn ranges_follow_divisions_flags_and_cases() {
        let k = |v: i32| Node::Const(PType::I32, u64::from(v as u32));
        let p = program(
            vec![
                Node::Input(0),
                k(146_097),
                Node::Arith(ArithOp::FloorDiv, 0, 1),
                Node::Arith(ArithOp::FloorMod, 0, 1),
                Node::Cmp(CmpOp::Ge, 3, 1),
                Node::Cast(4, PType::I32),
                k(-9),
                Node::Case(vec![(4, 6)], 5),
                Node::Arith(ArithOp::Div, 3, 1),
                Node::Arith(ArithOp::Rem, 0, 1),
            ],
            vec![PType::I32],
        );
        let r = value_ranges(&p);
        assert_eq!(r[2], Some((-14_700, 14_699)));
        assert_eq!(r[3], Some((0, 146_096)));
        assert_eq!(r[5], Some((0, 1)));
        assert_eq!(r[7], Some((-9, 1)));
        assert_eq!(r[8], Some((0, 0)));
        assert_eq!(r[9], Some((-146_096, 146_096)));
        assert!(cannot_overflow(
            ArithOp::Mul,
            PType::I32,
            r[2],
            Some((400, 400))
        ));
        // A quotient is not a sum or product: it keeps its own checks.
        assert!(!cannot_overflow(ArithOp::Div, PType::I32, r[3], r[1]));
    }

    #[test]
    fn constants_are_read_as_their_type() {
        assert_eq!(constant(PType::I8, 0xff), -1);
        assert_eq!(constant(PType::U8, 0xff), 255);
        assert_eq!(constant(PType::I64, u64::MAX), -1);
        assert_eq!(constant(PType::U64, u64::MAX), i128::from(u64::MAX));
        assert_eq!(constant(PType::I32, 0xffff_ffff_0000_0005), 5);
    }
}
