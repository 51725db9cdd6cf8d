//! Quick checks: string predicates decided in the kernel from each row's length
//! and first bytes, so that a helper is called only for the rows left undecided.

use inkwell::values::{BasicValue, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

use super::{Block, EmitError, Emitter, LANES, R};
use crate::program::{ByteLayout, CaseMap, CmpOp, Find, PType, QuickCheck, QuickTest};

/// What a [`QuickCheck`] reads of a block's rows of one string column.
#[derive(Clone, Copy)]
pub(super) struct Heads<'ctx> {
    /// Each row's length in bytes (`<LANES x i32>`).
    len: VectorValue<'ctx>,
    /// Each row's first four bytes, little-endian (`<LANES x i32>`); past the row's
    /// length they are zero when `padded`, else anything.
    head: VectorValue<'ctx>,
    /// Whether `head` is zero past each row's length (views).
    padded: bool,
    /// For views, their second halves (`<LANES x i64>`): bytes 4..12 of a value of
    /// up to 12 bytes.
    rest: Option<VectorValue<'ctx>>,
    /// For columns with offsets, each row's bytes 4..8 (`<LANES x i32>`, anything
    /// past the row's length).
    next: Option<VectorValue<'ctx>>,
    /// The rows whose length and bytes were read (`None`: every row); the other
    /// lanes hold anything.
    read: Option<IntValue<'ctx>>,
}

/// Whether the CPU's vector gathers beat a scalar load per lane: yes on Intel's
/// AVX2 and AVX-512 cores (the string heads of F7 and U1 took 0.55 and 0.3 of the
/// scalar loads' time on the Intel Xeon VM), no on AMD's Zen 1 to 3, whose gathers
/// are microcoded (on the AMD EPYC VM a gather left F7 at 0.83× arrow-rs streaming,
/// the scalar loads at 1.51×: docs/performance-notes.md, "F7").
pub(super) fn fast_gathers(cpu: &str, features: &str) -> bool {
    features.contains("+avx2") && !matches!(cpu, "znver1" | "znver2" | "znver3")
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// The masks of the rows a [`QuickCheck`] decides TRUE and FALSE from the rows
    /// of column `slot` (rows it leaves undecided are in neither).
    pub(super) fn quick_masks(
        &self,
        q: QuickCheck,
        slot: usize,
        block: &Block<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        // Read once a block: `s IN ('AIR', 'AIR REG')` is two equalities.
        let cached = self.heads.borrow().get(&slot).copied();
        let heads = match cached {
            Some(heads) => heads,
            None => {
                let heads = self.heads(slot, block)?;
                self.heads.borrow_mut().insert(slot, heads);
                heads
            }
        };
        let (t, f) = self.quick_decisions(q, &heads)?;
        Ok(match heads.read {
            Some(k) => (self.and(t, k)?, self.and(f, k)?),
            None => (t, f),
        })
    }

    /// What a quick check reads of the block's rows of string column `slot`.
    fn heads(&self, slot: usize, block: &Block<'ctx>) -> R<Heads<'ctx>> {
        let off = match self.prog.inputs[slot].layout {
            ByteLayout::Views => {
                let (lo, hi) = self.halves_16(slot, block)?;
                let i32v = self.ctx.i32_type().vec_type(LANES);
                let len = self.b.build_int_truncate(lo, i32v, "len")?;
                let head =
                    self.b
                        .build_right_shift(lo, self.splat(self.c64(32).into())?, false, "")?;
                let head = self.b.build_int_truncate(head, i32v, "head")?;
                return Ok(Heads {
                    len,
                    head,
                    padded: true,
                    rest: Some(hi),
                    next: None,
                    read: None,
                });
            }
            ByteLayout::Offsets64 => PType::I64,
            _ => PType::I32,
        };
        self.offset_heads(slot, off, block)
    }

    /// [`Heads`] of a column with `off` (`I32` or `I64`) offsets. A row's first eight
    /// bytes are read where they lie before the end of the column's last value (so
    /// inside the data buffer), and rows of 2^32 bytes or more are left out; the
    /// other rows read bytes that are not used, at an address clamped into the
    /// buffer (or, for a column of under eight bytes, in the helper buffer).
    fn offset_heads(&self, slot: usize, off: PType, block: &Block<'ctx>) -> R<Heads<'ctx>> {
        let (starts, ends) = self.offset_pairs(slot, off, block)?;
        let len = self.b.build_int_sub(ends, starts, "len")?;
        let rows = self
            .total_rows
            .ok_or_else(|| EmitError("rows not set".into()))?;
        let offsets = self.slot_field(slot, 0)?.into_pointer_value();
        let offsets = self
            .b
            .build_pointer_cast(offsets, self.ptr_to(self.scalar_ty(off)), "")?;
        // SAFETY (of the generated code): offsets hold rows + 1 entries.
        let last = unsafe { self.gep(self.scalar_ty(off), offsets, &[rows], true)? };
        let last = self
            .load(self.scalar_ty(off), last, "last_offset")?
            .into_int_value();
        let last = self.b.build_int_z_extend_or_bit_cast(last, self.i64t, "")?;
        // Eight bytes at offset o lie inside when o < last - 7; reads are clamped to
        // offset last - 8, or made in the helper buffer when last < 8.
        let has_eight = self
            .b
            .build_int_compare(IntPredicate::UGE, last, self.c64(8), "")?;
        let pick = |a: IntValue<'ctx>, b: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(self.b.build_select(has_eight, a, b, "")?.into_int_value())
        };
        let bound = pick(self.b.build_int_sub(last, self.c64(7), "")?, self.c64(0))?;
        let clamp = pick(self.b.build_int_sub(last, self.c64(8), "")?, self.c64(0))?;
        let i8p = self.ptr_to(self.ctx.i8_type());
        let data = self.slot_field(slot, 2)?.into_pointer_value();
        let data = self.b.build_pointer_cast(data, i8p, "")?;
        let spare = self.b.build_pointer_cast(self.helper_buf, i8p, "")?;
        let base = self
            .b
            .build_select(has_eight, data, spare, "heads_base")?
            .into_pointer_value();
        let width = self.scalar_ty(off).into_int_type();
        let splat = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate_or_bit_cast(x, width, "")?;
            self.splat(x.into())
        };
        let inside =
            self.b
                .build_int_compare(IntPredicate::ULT, starts, splat(bound)?, "inside")?;
        let mut read = self.and(self.to_mask(inside)?, block.active)?;
        if off == PType::I64 {
            let small = self.b.build_int_compare(
                IntPredicate::ULE,
                len,
                splat(self.c64(u32::MAX as u64))?,
                "",
            )?;
            read = self.and(read, self.to_mask(small)?)?;
        }
        let clamp = splat(clamp)?;
        let below = self
            .b
            .build_int_compare(IntPredicate::ULT, starts, clamp, "")?;
        let at = self
            .b
            .build_select(below, starts, clamp, "")?
            .into_vector_value();
        // Eight bytes a row: they decide an equality with a literal of up to 8
        // bytes without the helper. `at` is at most `clamp`, so the eight bytes
        // from it lie inside the data buffer (or the helper buffer).
        let words = self.words_at(base, at)?;
        let i32v = self.ctx.i32_type().vec_type(LANES);
        let head = self.b.build_int_truncate(words, i32v, "head")?;
        let next = self
            .b
            .build_right_shift(words, self.splat(self.c64(32).into())?, false, "")?;
        let next = self.b.build_int_truncate(next, i32v, "next")?;
        let len = self.b.build_int_truncate_or_bit_cast(len, i32v, "")?;
        Ok(Heads {
            len,
            head,
            padded: false,
            rest: None,
            next: Some(next),
            read: Some(read),
        })
    }

    /// The eight bytes at `base + at[i]` for each lane `i` (every address valid),
    /// little-endian: one gather, or where gathers are slow ([`fast_gathers`]) a
    /// load per lane, as the hand-written loop and arrow's `starts_with` do.
    fn words_at(&self, base: PointerValue<'ctx>, at: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let i64p = self.ptr_to(self.i64t);
        let vt = self.i64t.vec_type(LANES);
        if self.gathers {
            let at = self.b.build_int_z_extend_or_bit_cast(at, vt, "")?;
            let base = self.b.build_ptr_to_int(base, self.i64t, "")?;
            let addrs = self.b.build_int_add(self.splat(base.into())?, at, "")?;
            let ptrs = self.b.build_int_to_ptr(addrs, i64p.vec_type(LANES), "")?;
            let gather =
                self.intrinsic("llvm.masked.gather", &[vt.into(), ptrs.get_type().into()])?;
            let all = self.to_lanes(self.ones())?;
            let align = self.ctx.i32_type().const_int(1, false);
            let words = self.call(
                gather,
                &[ptrs.into(), align.into(), all.into(), vt.get_undef().into()],
            )?;
            return Ok(words.into_vector_value());
        }
        let mut words = vt.get_undef();
        for lane in 0..LANES {
            let lane = self.c64(lane as u64);
            let o = self.b.build_extract_element(at, lane, "")?.into_int_value();
            let o = self.b.build_int_z_extend_or_bit_cast(o, self.i64t, "")?;
            // SAFETY (of the generated code): the caller's addresses are valid.
            let p = unsafe { self.gep(self.ctx.i8_type(), base, &[o], false)? };
            let p = self.b.build_pointer_cast(p, i64p, "")?;
            let word = self.load(self.i64t, p, "")?;
            if let Some(load) = word.as_instruction_value() {
                load.set_alignment(1)
                    .map_err(|e| EmitError(format!("load alignment: {e}")))?;
            }
            words = self.b.build_insert_element(words, word, lane, "")?;
        }
        Ok(words)
    }

    /// The TRUE and FALSE decisions of `q` from what it reads of a block's rows.
    fn quick_decisions(
        &self,
        q: QuickCheck,
        h: &Heads<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let param = |i: usize| -> R<IntValue<'ctx>> {
            self.params[q.params[i]]
                .map(|v| v.into_int_value())
                .ok_or_else(|| EmitError("quick check parameter not loaded".into()))
        };
        let i32t = self.ctx.i32_type();
        let word = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate(x, i32t, "")?;
            self.splat(x.into())
        };
        let cmp =
            |p: IntPredicate, a: VectorValue<'ctx>, b: VectorValue<'ctx>| -> R<IntValue<'ctx>> {
                self.to_mask(self.b.build_int_compare(p, a, b, "")?)
            };
        let flag = |b: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(self
                .b
                .build_select(b, self.ones(), self.mzero(), "")?
                .into_int_value())
        };
        // The first min(n, 4) bytes of `head`: a mask of that many low bytes.
        let first_bytes = |n: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let short = self
                .b
                .build_int_compare(IntPredicate::ULE, n, self.c64(4), "")?;
            let n = self
                .b
                .build_select(short, n, self.c64(4), "")?
                .into_int_value();
            let bits = self.b.build_int_mul(n, self.c64(8), "")?;
            let mask = self.b.build_left_shift(self.c64(1), bits, "")?;
            word(self.b.build_int_sub(mask, self.c64(1), "")?)
        };
        let low32 = self.c64(u32::MAX as u64);
        Ok(match q.test {
            QuickTest::Equal { negated } => {
                let (p_lo, p_hi) = (param(0)?, param(1)?);
                let lit_len = self.b.build_and(p_lo, low32, "")?;
                let lit_head = self.b.build_right_shift(p_lo, self.c64(32), false, "")?;
                // Rows of the literal's length: their first min(length, 4) bytes.
                let shown = self.b.build_and(h.head, first_bytes(lit_len)?, "")?;
                let lo_eq = self.and(
                    cmp(IntPredicate::EQ, h.len, word(lit_len)?)?,
                    cmp(IntPredicate::EQ, shown, word(lit_head)?)?,
                )?;
                // A literal decided by what is compared: 12 bytes with a view's
                // second half, 8 with the bytes read at a row's offset, else 4.
                let (hi_eq, whole) = match (h.rest, h.next) {
                    (Some(hi), _) => {
                        let p_hi = self.splat(p_hi.into())?;
                        (cmp(IntPredicate::EQ, hi, p_hi)?, 12)
                    }
                    (None, Some(next)) => {
                        // The literal's bytes 4..8 (zero past its length) and the
                        // row's, as many as the literal has.
                        let long = self.b.build_int_compare(
                            IntPredicate::UGT,
                            lit_len,
                            self.c64(4),
                            "",
                        )?;
                        let beyond = self.b.build_int_sub(lit_len, self.c64(4), "")?;
                        let beyond = self
                            .b
                            .build_select(long, beyond, self.c64(0), "")?
                            .into_int_value();
                        let shown = self.b.build_and(next, first_bytes(beyond)?, "")?;
                        (cmp(IntPredicate::EQ, shown, word(p_hi)?)?, 8)
                    }
                    (None, None) => (self.ones(), 4),
                };
                let inline =
                    self.b
                        .build_int_compare(IntPredicate::ULE, lit_len, self.c64(whole), "")?;
                let inline = flag(inline)?;
                let t = self.and(self.and(lo_eq, hi_eq)?, inline)?;
                let f = self.or(self.not(lo_eq)?, self.and(inline, self.not(hi_eq)?)?)?;
                if negated {
                    (f, t)
                } else {
                    (t, f)
                }
            }
            QuickTest::Order(op) => {
                // Zero past each row's length, so a shorter row orders first.
                let prefix = if h.padded {
                    h.head
                } else {
                    let all = self.splat(i32t.const_all_ones().into())?;
                    let one = self.splat(i32t.const_int(1, false).into())?;
                    let four = self.splat(i32t.const_int(4, false).into())?;
                    let eight = self.splat(i32t.const_int(8, false).into())?;
                    let long = self
                        .b
                        .build_int_compare(IntPredicate::UGE, h.len, four, "")?;
                    // Rows of four bytes or more shift by 32 or more (poison), but
                    // the select takes all ones for them; the others by at most 24.
                    let bits = self.b.build_int_mul(h.len, eight, "")?;
                    let part = self.b.build_left_shift(one, bits, "")?;
                    let part = self.b.build_int_sub(part, one, "")?;
                    let mask = self
                        .b
                        .build_select(long, all, part, "")?
                        .into_vector_value();
                    self.b.build_and(h.head, mask, "")?
                };
                let bswap = self.intrinsic("llvm.bswap", &[prefix.get_type().into()])?;
                let own = self.call(bswap, &[prefix.into()])?.into_vector_value();
                let key = word(param(0)?)?;
                let differ = cmp(IntPredicate::NE, own, key)?;
                let pred = match op {
                    CmpOp::Eq => IntPredicate::EQ,
                    CmpOp::Ne => IntPredicate::NE,
                    CmpOp::Lt => IntPredicate::ULT,
                    CmpOp::Le => IntPredicate::ULE,
                    CmpOp::Gt => IntPredicate::UGT,
                    CmpOp::Ge => IntPredicate::UGE,
                };
                let holds = cmp(pred, own, key)?;
                (
                    self.and(differ, holds)?,
                    self.and(differ, self.not(holds)?)?,
                )
            }
            QuickTest::Prefix => {
                let (k, want) = (param(0)?, param(1)?);
                // Lengths are compared as u32. A pattern of 2^32 bytes or more
                // (clamped to 2^32 - 1) still rules out every shorter row, and is
                // never decided TRUE here: only patterns of up to 4 bytes are.
                let fits = self.b.build_int_compare(IntPredicate::ULE, k, low32, "")?;
                let k32 = self.b.build_select(fits, k, low32, "")?.into_int_value();
                let longer = cmp(IntPredicate::UGE, h.len, word(k32)?)?;
                let shown = self.b.build_and(h.head, first_bytes(k)?, "")?;
                let same = cmp(IntPredicate::EQ, shown, word(want)?)?;
                let ok = self.and(longer, same)?;
                let short = self
                    .b
                    .build_int_compare(IntPredicate::ULE, k, self.c64(4), "")?;
                (self.and(ok, flag(short)?)?, self.not(ok)?)
            }
            QuickTest::ShortRow { find, case } => {
                self.short_row_decisions(find, case, param(0)?, param(1)?, h)?
            }
        })
    }

    /// The TRUE and FALSE decisions of [`QuickTest::ShortRow`] with its
    /// parameters `lens` (the literal's length, and the longest row that can hold,
    /// in the low and high 32 bits) and `want` (its first eight bytes).
    fn short_row_decisions(
        &self,
        find: Find,
        case: CaseMap,
        lens: IntValue<'ctx>,
        want: IntValue<'ctx>,
        h: &Heads<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let i32t = self.ctx.i32_type();
        let i64v = self.i64t.vec_type(LANES);
        // Bytes 4..8: read at the row's offset, or a view's second half.
        let high = match (h.next, h.rest) {
            (Some(next), _) => self.b.build_int_z_extend(next, i64v, "")?,
            (None, Some(rest)) => {
                let low = self.splat(self.c64(u32::MAX as u64).into())?;
                self.b.build_and(rest, low, "")?
            }
            (None, None) => return Ok((self.mzero(), self.mzero())),
        };
        let splat64 = |x: u64| self.splat(self.c64(x).into());
        let splat32 = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate(x, i32t, "")?;
            self.splat(x.into())
        };
        let mask = |v: VectorValue<'ctx>| self.to_mask(v);
        let cmp = |p: IntPredicate, a: VectorValue<'ctx>, b: VectorValue<'ctx>| {
            self.b.build_int_compare(p, a, b, "")
        };
        let high = self.b.build_left_shift(high, splat64(32)?, "")?;
        let low = self.b.build_int_z_extend(h.head, i64v, "")?;
        let word = self.b.build_or(low, high, "row_word")?;
        // The row's bytes, zero past its length: (1 << 8 len) - 1 for up to 7
        // bytes (the shift of a longer row's length is masked to stay defined).
        let len64 = self.b.build_int_z_extend(h.len, i64v, "")?;
        let low_bytes = |n: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            let short = cmp(IntPredicate::ULT, n, splat64(8)?)?;
            let bits = self.b.build_and(n, splat64(7)?, "")?;
            let bits = self.b.build_int_mul(bits, splat64(8)?, "")?;
            let part = self.b.build_left_shift(splat64(1)?, bits, "")?;
            let part = self.b.build_int_sub(part, splat64(1)?, "")?;
            Ok(self
                .b
                .build_select(short, part, splat64(u64::MAX)?, "")?
                .into_vector_value())
        };
        let bytes = self.b.build_and(word, low_bytes(len64)?, "row_bytes")?;
        // Rows of up to eight bytes (all ASCII, to be case-mapped) are decided here.
        const ONES: u64 = u64::MAX / 255;
        let mut seen = mask(cmp(IntPredicate::ULE, h.len, splat32(self.c64(8))?)?)?;
        let row = match case {
            CaseMap::AsIs => bytes,
            CaseMap::Upper | CaseMap::Lower => {
                let high_bits = self.b.build_and(bytes, splat64(0x80 * ONES)?, "")?;
                let ascii = cmp(IntPredicate::EQ, high_bits, splat64(0)?)?;
                seen = self.and(seen, mask(ascii)?)?;
                // As `strings::map_ascii_words` does: per byte b < 0x80,
                // b + (0x80 - first) has its high bit set iff b >= first, and
                // b + (0x7f - last) iff b > last; the letters' 0x20 bit flips.
                let (first, last) = match case {
                    CaseMap::Upper => (b'a', b'z'),
                    _ => (b'A', b'Z'),
                };
                let from = splat64(u64::from(0x80 - first) * ONES)?;
                let at_least = self.b.build_int_add(bytes, from, "")?;
                let past = splat64(u64::from(0x7f - last) * ONES)?;
                let beyond = self.b.build_int_add(bytes, past, "")?;
                let letters = self
                    .b
                    .build_and(at_least, self.b.build_not(beyond, "")?, "")?;
                let letters = self.b.build_and(letters, splat64(0x80 * ONES)?, "")?;
                let flips = self.b.build_right_shift(letters, splat64(2)?, false, "")?;
                self.b.build_xor(bytes, flips, "mapped")?
            }
        };
        // The literal: its length (as the rows', in 32 bits) and its bytes, of
        // which a row's are compared under `keep` (its first min(length, 8)).
        let lit_len = self.b.build_and(lens, self.c64(u32::MAX as u64), "")?;
        let lit = splat32(lit_len)?;
        let lit64 = self.b.build_int_z_extend(lit, i64v, "")?;
        let keep = low_bytes(lit64)?;
        let want = self.splat(want.into())?;
        let at_least_lit = mask(cmp(IntPredicate::UGE, h.len, lit)?)?;
        let at = |shift: VectorValue<'ctx>| -> R<IntValue<'ctx>> {
            let moved = self.b.build_right_shift(row, shift, false, "")?;
            let part = self.b.build_and(moved, keep, "")?;
            mask(cmp(IntPredicate::EQ, part, want)?)
        };
        let hit = match find {
            Find::Equal => self.and(
                mask(cmp(IntPredicate::EQ, h.len, lit)?)?,
                mask(cmp(IntPredicate::EQ, row, want)?)?,
            )?,
            Find::Prefix => self.and(at_least_lit, at(splat64(0)?)?)?,
            Find::Suffix => {
                // The literal's bytes end where the row's do: a shift of
                // 8 (len - length), masked to stay defined where the row is shorter
                // (those rows are not `at_least_lit`).
                let gap = self.b.build_int_sub(len64, lit64, "")?;
                let gap = self.b.build_and(gap, splat64(7)?, "")?;
                let shift = self.b.build_int_mul(gap, splat64(8)?, "")?;
                self.and(at_least_lit, at(shift)?)?
            }
            Find::Contains => {
                // At each position i where the literal fits: i + length <= len.
                let mut any = self.mzero();
                for i in 0..8u64 {
                    let end = self.b.build_int_add(lit64, splat64(i)?, "")?;
                    let fits = mask(cmp(IntPredicate::ULE, end, len64)?)?;
                    let found = self.and(fits, at(splat64(8 * i)?)?)?;
                    any = self.or(any, found)?;
                }
                any
            }
        };
        let t = self.and(seen, hit)?;
        let mut f = self.and(seen, self.not(hit)?)?;
        let most = self.b.build_right_shift(lens, self.c64(32), false, "")?;
        let too_long = mask(cmp(IntPredicate::UGT, h.len, splat32(most)?)?)?;
        f = self.or(f, too_long)?;
        if case == CaseMap::AsIs {
            let too_short = self.not(at_least_lit)?;
            f = self.or(f, too_short)?;
        }
        Ok((t, f))
    }
}
