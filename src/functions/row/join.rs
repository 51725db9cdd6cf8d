//! Joining strings: the JIT's face of `||` and `concat`, which copies each part
//! straight into the arena, and the short copies that avoid a `memcpy` call.

use broadhead_codegen::{CallArg, CallOut, LANES};

use super::arena::Arena;
use super::limit::Budget;
use super::results::write_view;
use super::{lane_mask, lanes};

/// Appends `s` to `out`, as `push_str` does, but copies few bytes without a call
/// to `memcpy` ([`copy_short`]).
pub fn push_short(out: &mut String, s: &str) {
    out.reserve(s.len());
    // SAFETY: `out` has room for `s.len()` more bytes (reserved above), which the
    // copy fills with `s`'s bytes, so `out` stays UTF-8 when its length grows by
    // them.
    unsafe {
        let v = out.as_mut_vec();
        copy_short(s.as_ptr(), v.as_mut_ptr().add(v.len()), s.len());
        v.set_len(v.len() + s.len());
    }
}

/// Copies `n` bytes from `src` to `dst`, as `copy_nonoverlapping` does, but up to
/// 16 bytes with two overlapping loads and stores ([`copy_two`]): a call to
/// `memcpy` costs more than the copy itself for the few bytes most strings have.
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping(src, dst, n)`.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: as the caller promises, with `n` within each copy's range.
    unsafe {
        match n {
            0 => {}
            1 => *dst = *src,
            2..=3 => copy_two::<u16>(src, dst, n),
            4..=7 => copy_two::<u32>(src, dst, n),
            8..=16 => copy_two::<u64>(src, dst, n),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Copies `n` bytes, `size_of::<W>() <= n <= 2 * size_of::<W>()`, as two words of
/// type `W` that overlap: the first `W`'s bytes and the last.
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping(src, dst, n)`, and `n` is in that range.
#[inline(always)]
unsafe fn copy_two<W: Copy>(src: *const u8, dst: *mut u8, n: usize) {
    let w = std::mem::size_of::<W>();
    // SAFETY: `w <= n`, so both words are within the `n` bytes at `src` and at
    // `dst`; with `n <= 2w` together they cover all of them.
    unsafe {
        let (head, tail) = (
            (src as *const W).read_unaligned(),
            (src.add(n - w) as *const W).read_unaligned(),
        );
        (dst as *mut W).write_unaligned(head);
        (dst.add(n - w) as *mut W).write_unaligned(tail);
    }
}

/// The JIT's face of joining strings: `a || b || …` when `strict` (NULL if any
/// part is NULL), else `concat(a, b, …)` (NULL parts skipped, never NULL). The
/// block's lengths are added up lane by lane, room for all of its values is taken
/// from the arena at once, and each part is copied straight into its place, part
/// by part (a part's lengths are alike from lane to lane, so the copies' branches
/// are predicted): no closure call, `Option` or scratch copy per row, which were
/// most of the cost of `||` through [`variadic_with`](super::variadic_with) (performance-notes.md,
/// "String functions").
pub(crate) fn join_block(
    strict: bool,
) -> impl Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync + 'static {
    move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| match strict {
        true => join_lanes::<true>(arena, args, out),
        false => join_lanes::<false>(arena, args, out),
    }
}

/// [`join_block`]'s work, for strict calls (`STRICT`: every part of the lanes to
/// compute is valid) or not (a part's invalid lanes are skipped).
fn join_lanes<const STRICT: bool>(arena: &mut Arena, args: &[CallArg], out: &mut CallOut) -> u64 {
    const N: usize = LANES as usize;
    let wanted = out.valid & lane_mask();
    // Each lane's length.
    let mut lens = [0u64; N];
    for a in args {
        let take = if STRICT { wanted } else { wanted & a.valid };
        // SAFETY: a string argument's block has `LANES` lengths (those of lanes it
        // does not hold are masked off here, unread as lengths).
        let part = unsafe { std::slice::from_raw_parts(a.lens, N) };
        for (i, (sum, &len)) in lens.iter_mut().zip(part).enumerate() {
            *sum += len & 0u64.wrapping_sub(take >> i & 1);
        }
    }
    // The lanes whose values fit the batch's limit; the others fail.
    let compute = within_budget(arena.budget(), out.row as usize, wanted, &lens);
    let taken = |a: &CallArg| if STRICT { compute } else { compute & a.valid };
    // Where each lane starts in the block's bytes.
    let mut starts = [0u64; N];
    let mut total = 0u64;
    for (i, (start, len)) in starts.iter_mut().zip(lens).enumerate() {
        let len = len & 0u64.wrapping_sub(compute >> i & 1);
        *start = total;
        total += len;
    }
    let mut write = |base: *mut u8| {
        for i in lanes(compute) {
            let len = starts.get(i + 1).map_or(total, |&next| next) - starts[i];
            // SAFETY: room for a block of views; lane `i`'s value is the `len`
            // bytes from `starts[i]` in the room lent, written below.
            unsafe { write_view(out, i, base.wrapping_add(starts[i] as usize), len as usize) };
        }
        let mut at = starts;
        for a in args {
            for i in lanes(taken(a)) {
                // SAFETY: the part's lane is valid, so its view is of bytes that live
                // for the call; the room lent holds, from `starts[i]`, the lane's
                // parts one after another, the lengths of which `starts` was built
                // from.
                unsafe {
                    let src = *(a.values as *const u64).add(i) as *const u8;
                    let n = *a.lens.add(i);
                    copy_short(src, base.add(at[i] as usize), n as usize);
                    at[i] += n;
                }
            }
        }
    };
    if total == 0 {
        // Only empty values: nothing to copy, no arena chunk to make for them.
        write(std::ptr::NonNull::dangling().as_ptr());
    } else {
        // SAFETY: `write` fills exactly the `total` bytes lent (every lane's parts,
        // whose lengths add up to `total`).
        unsafe { arena.fill(total as usize, write) };
    }
    out.valid = compute;
    wanted & !compute
}

/// Of the lanes `wanted` (lane 0 is row `row0` of the batch) with lengths `lens`,
/// those whose values `budget` has room for, counted in lane order: all of them, or
/// those before the first that would pass the limit.
fn within_budget(budget: &mut Budget, row0: usize, wanted: u64, lens: &[u64]) -> u64 {
    let total = lanes(wanted).fold(0u64, |t, i| t.saturating_add(lens[i]));
    if budget.over_at().is_none() && usize::try_from(total).is_ok_and(|t| t <= budget.room()) {
        // Within the room: this cannot fail.
        let _ = budget.charge(total as usize, row0);
        return wanted;
    }
    let mut fit = 0;
    for i in lanes(wanted) {
        let row = row0.wrapping_add(i);
        if usize::try_from(lens[i]).map_or(true, |len| budget.charge(len, row).is_err()) {
            budget.exhaust(row);
            break;
        }
        fit |= 1 << i;
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::row::limit::set_test_limit;
    use crate::functions::row::testing::{run_block, N};
    use crate::functions::row::{variadic, Utf8};

    #[test]
    fn joined_blocks_copy_every_part_into_one_run() {
        let words = [
            "",
            "a",
            "-",
            "ab",
            "héllo",
            "日本語テキスト",
            "0123456789abcdefg",
            "x",
        ];
        let long = "l".repeat(300);
        let part = |k: usize| -> Vec<Option<&str>> {
            (0..N)
                .map(|i| match (i * 7 + k * 3) % 11 {
                    0 => None,
                    10 => Some(long.as_str()),
                    j => Some(words[j % words.len()]),
                })
                .collect()
        };
        let args = [part(0), part(1), part(2)];
        for strict in [true, false] {
            let f = variadic::<Utf8, Utf8, _>(strict, |_| Ok(None)).with_block(join_block(strict));
            let all_valid = (0..N)
                .filter(|&i| args.iter().all(|a| a[i].is_some()))
                .fold(0u64, |m, i| m | 1 << i);
            // Every lane, and a tail block of the first 13 lanes.
            for lanes_in_batch in [lane_mask(), lane_mask() & 0x1fff] {
                // The kernel asks a strict call for the lanes where every part is
                // valid.
                let compute = match strict {
                    true => lanes_in_batch & all_valid,
                    false => lanes_in_batch,
                };
                let mut arena = Arena::default();
                let (shown, failed, spans) = run_block(&f, &args, compute, &mut arena);
                assert_eq!(failed, 0);
                for i in 0..N {
                    let want = (compute >> i & 1 == 1)
                        .then(|| args.iter().filter_map(|a| a[i]).collect::<String>());
                    assert_eq!(shown[i], want, "strict {strict}, lane {i}");
                }
                // One run of the arena, in lane order.
                for w in spans.windows(2) {
                    assert_eq!(w[0].0 + w[0].1, w[1].0);
                }
                let bytes: u64 = spans.iter().map(|s| s.1).sum();
                assert_eq!(arena.used() as u64, bytes);
                assert!(arena.holds(spans[0].0 as *const u8));
            }
        }
    }

    #[test]
    fn joined_lanes_fail_from_the_one_that_passes_the_batch_limit() {
        set_test_limit(Some(25));
        let part: Vec<Option<&str>> = vec![Some("abcde"); N];
        let f = variadic::<Utf8, Utf8, _>(true, |_| Ok(None)).with_block(join_block(true));
        let mut arena = Arena::default();
        // 10 bytes a lane: lanes 0 and 1 fit, lane 2 passes 25 bytes.
        let (shown, failed, _) =
            run_block(&f, &[part.clone(), part.clone()], lane_mask(), &mut arena);
        assert_eq!(failed, lane_mask() & !0b11);
        assert_eq!(shown[1].as_deref(), Some("abcdeabcde"));
        assert!(shown[2..].iter().all(Option::is_none));
        assert_eq!(arena.used(), 20);
        // The next block of the batch: nothing fits any more, not even ''.
        let empty: Vec<Option<&str>> = vec![Some(""); N];
        let (_, failed, _) = run_block(&f, &[empty.clone(), empty], lane_mask(), &mut arena);
        assert_eq!(failed, lane_mask());
        set_test_limit(None);
    }

    #[test]
    fn joined_empty_strings_take_no_arena_chunk() {
        let empty: Vec<Option<&str>> = vec![Some(""); N];
        let f = variadic::<Utf8, Utf8, _>(true, |_| Ok(None)).with_block(join_block(true));
        let mut arena = Arena::default();
        let (shown, _, _) = run_block(&f, &[empty.clone(), empty], lane_mask(), &mut arena);
        assert!(shown.iter().all(|s| s.as_deref() == Some("")));
        assert!(arena.chunks.is_empty());
    }

    #[test]
    fn short_copies_copy_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40 {
            let mut dst = vec![0u8; 48];
            // SAFETY (test): `n` bytes are in bounds of both.
            unsafe { copy_short(src.as_ptr(), dst.as_mut_ptr(), n) };
            assert_eq!(&dst[..n], &src[..n], "{n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0),
                "{n}: nothing past the copy"
            );
        }
    }

    #[test]
    fn short_strings_are_appended_whole() {
        let text = "aé日b🦀cdefghijklmnopqrstuvwxyz";
        for (start, _) in text.char_indices() {
            for (end, _) in text[start..]
                .char_indices()
                .chain([(text.len() - start, ' ')])
            {
                let part = &text[start..start + end];
                let mut out = String::from("x");
                push_short(&mut out, part);
                push_short(&mut out, part);
                assert_eq!(out, format!("x{part}{part}"), "{part:?}");
            }
        }
    }
}
