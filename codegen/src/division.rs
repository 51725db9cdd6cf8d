//! Division of signed integers by a literal, by multiplying: the magic numbers of
//! Hacker's Delight (Warren, §10-1), computed when the expression is lowered and
//! passed to the kernel as parameters ([`crate::Node::DivideByLiteral`]), so that
//! `x % 7` and `x % 11` share one kernel and neither divides lane by lane (x86
//! has no vector division: LLVM divides each lane with `idiv`).
//!
//! With `|d| ≥ 2`, `trunc(n / |d|)` is `q = mulhs(n, m) (+ n where m < 0)`, shifted
//! right arithmetically by `s`, plus 1 where `q` is negative; the quotient by `d` is
//! that negated where `d < 0`, and the remainder `n - trunc(n / |d|) * |d|`.

/// The parameters of a division by the literal `d` ([`DivisionMagic::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivisionMagic {
    /// `|d|`.
    pub abs_divisor: i64,
    /// The multiplier `m`, a signed value of the lanes' width.
    pub multiplier: i64,
    /// `s`.
    pub shift: u32,
    /// Whether `n` is added to the high product (`m` came out negative).
    pub add: bool,
    /// Whether the quotient is negated (`d < 0`).
    pub negate: bool,
}

impl DivisionMagic {
    /// The parameters for dividing `bits`-bit (32 or 64) signed integers by `d`;
    /// `None` where `|d| < 2` or `|d|` does not fit (`d` = MIN), which divide as
    /// usual (a zero divisor and `MIN / -1` are errors).
    pub fn of(d: i64, bits: u32) -> Option<DivisionMagic> {
        if bits != 32 && bits != 64 {
            return None;
        }
        let min = -(1i128 << (bits - 1));
        let max = (1i128 << (bits - 1)) - 1;
        let d128 = i128::from(d);
        if d128 < min || d128 > max || d128 == min || d.unsigned_abs() < 2 {
            return None;
        }
        let ad = u128::from(d.unsigned_abs());
        let w = bits;
        let mask = (1u128 << w) - 1;
        // Warren's magic for the positive divisor |d| (Figure 10-1), in w-bit
        // unsigned arithmetic.
        let two = 1u128 << (w - 1);
        let t = two; // |d| is positive
        let anc = (t - 1 - t % ad) & mask;
        let mut p = w - 1;
        let (mut q1, mut r1) = (two / anc, two - (two / anc) * anc);
        let (mut q2, mut r2) = (two / ad, two - (two / ad) * ad);
        loop {
            p += 1;
            q1 = (2 * q1) & mask;
            r1 = (2 * r1) & mask;
            if r1 >= anc {
                q1 = (q1 + 1) & mask;
                r1 = (r1 - anc) & mask;
            }
            q2 = (2 * q2) & mask;
            r2 = (2 * r2) & mask;
            if r2 >= ad {
                q2 = (q2 + 1) & mask;
                r2 = (r2 - ad) & mask;
            }
            let delta = (ad - r2) & mask;
            if !(q1 < delta || (q1 == delta && r1 == 0)) {
                break;
            }
        }
        let m = (q2 + 1) & mask;
        // As a signed w-bit number.
        let multiplier = if m > max as u128 {
            (m as i128 - (1i128 << w)) as i64
        } else {
            m as i64
        };
        Some(DivisionMagic {
            abs_divisor: d.unsigned_abs() as i64,
            multiplier,
            shift: p - w,
            add: multiplier < 0,
            negate: d < 0,
        })
    }

    /// `trunc(n / d)` and `n - trunc(n / d) * d` computed as the kernel does, in
    /// `bits`-bit wrapping arithmetic (the model the kernel's code follows; tested
    /// against Rust's division).
    pub fn divide(&self, n: i64, bits: u32) -> (i64, i64) {
        let wrap = |v: i128| -> i64 {
            if bits == 32 {
                v as i32 as i64
            } else {
                v as i64
            }
        };
        let high = wrap((i128::from(n) * i128::from(self.multiplier)) >> bits);
        let q = wrap(i128::from(high) + if self.add { i128::from(n) } else { 0 });
        let q = q >> self.shift;
        let q = q + i64::from(q < 0);
        let r = wrap(i128::from(n) - i128::from(q) * i128::from(self.abs_divisor));
        (if self.negate { wrap(-i128::from(q)) } else { q }, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(d: i64, bits: u32, n: i64) {
        let magic = DivisionMagic::of(d, bits).expect("a divisor of at least 2");
        let (q, r) = magic.divide(n, bits);
        assert_eq!(
            (q, r),
            (n / d, n % d),
            "{n} by {d} in {bits} bits: {magic:?}"
        );
    }

    #[test]
    fn divides_as_rust_does() {
        for bits in [32u32, 64] {
            let (min, max) = if bits == 32 {
                (i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                (i64::MIN, i64::MAX)
            };
            let mut divisors: Vec<i64> = (2..=300).flat_map(|d| [d, -d]).collect();
            for k in 1..bits - 1 {
                let p = 1i64 << k;
                divisors.extend([p, -p, p - 1, p + 1, -(p - 1), -(p + 1)]);
            }
            divisors.extend([max, -max, max - 1, 7, 10, 1_000_003, 86_400_000_000]);
            divisors.retain(|&d| (min + 1..=max).contains(&d) && d.unsigned_abs() >= 2);
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            for &d in &divisors {
                let mut numerators = vec![
                    0,
                    1,
                    -1,
                    d,
                    -d,
                    d.wrapping_sub(1),
                    1i64.wrapping_sub(d),
                    min,
                    max,
                    min + 1,
                    max - 1,
                ];
                numerators.extend((0..200).map(|_| {
                    let v = next() as i64;
                    if bits == 32 {
                        v as i32 as i64
                    } else {
                        v
                    }
                }));
                numerators.retain(|n| (min..=max).contains(n));
                for n in numerators {
                    check(d, bits, n);
                }
            }
        }
    }

    #[test]
    fn small_and_extreme_divisors_divide_as_usual() {
        for d in [0, 1, -1, i64::MIN] {
            assert_eq!(DivisionMagic::of(d, 64), None);
        }
        assert_eq!(DivisionMagic::of(i64::from(i32::MIN), 32), None);
        assert_eq!(DivisionMagic::of(1 << 40, 32), None);
        assert!(DivisionMagic::of(i64::from(i32::MIN) + 1, 32).is_some());
    }
}
