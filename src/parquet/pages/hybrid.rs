//! Parquet's RLE/bit-packed hybrid encoding of small integers (dictionary keys,
//! definition levels), decoded: each key looked up in a table of one entry per
//! dictionary value into a bitmap ([`Hybrid::lookup`], into [`Bits`]), or its
//! dictionary value appended ([`Hybrid::gather`]), or the runs listed one by one
//! ([`Hybrid::next_run`]). Keys of up to [`FAST_WIDTH`] bits are unpacked 8 at a time
//! by code specialized for each width, and looked up in a table padded to every key
//! of the width ([`padded`]); keys of up to 6 bits two to six at a lookup
//! ([`combined`]).

use arrow::buffer::{BooleanBuffer, Buffer};

/// A growing bitmap, 64 bits a word, least significant first (Arrow's order).
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    pub(crate) fn with_capacity(bits: usize) -> Bits {
        Bits {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
        }
    }

    /// Appends the low `n` bits of `word` (`n` ≤ 64; the bits above are zero).
    fn push_word(&mut self, word: u64, n: usize) {
        let offset = self.len % 64;
        if offset == 0 {
            self.words.push(word);
        } else {
            *self.words.last_mut().expect("a partial word") |= word << offset;
            if offset + n > 64 {
                self.words.push(word >> (64 - offset));
            }
        }
        self.len += n;
    }

    /// Appends `bit` `n` times.
    pub(crate) fn push_run(&mut self, bit: bool, mut n: usize) {
        let fill = if bit { u64::MAX } else { 0 };
        while n > 0 {
            let take = n.min(64);
            let word = if take == 64 {
                fill
            } else {
                fill & ((1 << take) - 1)
            };
            self.push_word(word, take);
            n -= take;
        }
    }

    /// Appends the bits of `buffer`.
    pub(crate) fn push_buffer(&mut self, buffer: &BooleanBuffer) {
        let chunks = buffer.bit_chunks();
        for word in chunks.iter() {
            self.push_word(word, 64);
        }
        if chunks.remainder_len() > 0 {
            self.push_word(chunks.remainder_bits(), chunks.remainder_len());
        }
    }

    pub(crate) fn finish(self) -> BooleanBuffer {
        BooleanBuffer::new(Buffer::from_vec(self.words), 0, self.len)
    }

    /// How many bits it has.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The words, the bits past the length zero.
    pub(crate) fn into_words(self) -> Vec<u64> {
        self.words
    }
}

/// The `rows` definition levels of a page of a flat column (RLE/bit-packed, of
/// width 1) as a bit a row, set where the row's value is not NULL; `None` when the
/// levels end first or one is neither 0 nor 1.
pub(crate) fn defined_rows(levels: &[u8], rows: usize, scratch: &mut Vec<u32>) -> Option<Bits> {
    let mut bits = Bits::with_capacity(rows);
    Hybrid::new(levels, 1)?.lookup(rows, &[0, 1], &mut bits, scratch)?;
    Some(bits)
}

/// A run of [`Hybrid`] values: one value repeated so many times, or packed values
/// (their bytes, and how many to read).
pub(crate) enum Run<'a> {
    Repeat(usize, usize),
    Packed(&'a [u8], usize),
}

/// Parquet's RLE/bit-packed hybrid encoding of small integers (keys, levels): runs,
/// each a ULEB128 header, then either one value repeated (`header >> 1` times, in
/// whole bytes) or groups of 8 values packed `width` bits each (`header >> 1` groups,
/// least significant bit first).
pub(crate) struct Hybrid<'a> {
    data: &'a [u8],
    width: u32,
}

impl<'a> Hybrid<'a> {
    pub(crate) fn new(data: &'a [u8], width: u8) -> Option<Hybrid<'a>> {
        (width <= 32).then_some(Hybrid {
            data,
            width: u32::from(width),
        })
    }

    /// The next run, of at most `left` values (the last run of a page may be cut
    /// short of its groups: only as many values as the page holds are read); `None`
    /// when the data ends first or a run is empty.
    pub(crate) fn next_run(&mut self, left: usize) -> Option<Run<'a>> {
        let header = self.uleb128()?;
        let n = usize::try_from(header >> 1).ok()?;
        let run = if header & 1 == 0 {
            // One value, in whole bytes.
            let bytes = self.width.div_ceil(8) as usize;
            let raw = self.data.get(..bytes)?;
            self.data = &self.data[bytes..];
            let value = raw
                .iter()
                .rev()
                .fold(0usize, |v, &b| (v << 8) | usize::from(b));
            Run::Repeat(value, n.min(left))
        } else {
            // Groups of 8 packed values.
            let width = self.width as usize;
            let bytes = n.checked_mul(width)?.min(self.data.len());
            let packed = &self.data[..bytes];
            self.data = &self.data[bytes..];
            let available = match width {
                0 => n.checked_mul(8)?,
                _ => bytes * 8 / width,
            };
            Run::Packed(packed, available.min(n.saturating_mul(8)).min(left))
        };
        match run {
            Run::Repeat(_, 0) | Run::Packed(_, 0) => None,
            run => Some(run),
        }
    }

    /// Hands each run of the next `count` values to `each`.
    fn runs(mut self, count: usize, mut each: impl FnMut(Run<'a>) -> Option<()>) -> Option<()> {
        let mut left = count;
        while left > 0 {
            let run = self.next_run(left)?;
            left -= match run {
                Run::Repeat(_, n) | Run::Packed(_, n) => n,
            };
            each(run)?;
        }
        Some(())
    }

    /// Appends to `bits` the `table` entry of each of the next `count` values: 1
    /// TRUE, 0 not (`None`: the data ends first, or a value's entry is neither).
    /// Keys of at most [`FAST_WIDTH`] bits are unpacked and looked up 8 at a time
    /// without a bounds check: `table` must then have an entry for every value of
    /// the width (2 for those past the dictionary, [`padded`]).
    pub(crate) fn lookup(
        self,
        count: usize,
        table: &[u8],
        bits: &mut Bits,
        scratch: &mut Vec<u32>,
    ) -> Option<()> {
        let width = self.width;
        self.runs(count, |run| match run {
            // (A padded table's combined entries follow its keys' own.)
            Run::Repeat(value, n) => {
                match table.get(value).filter(|_| value as u64 >> width == 0)? {
                    bit @ (0 | 1) => {
                        bits.push_run(*bit == 1, n);
                        Some(())
                    }
                    _ => None,
                }
            }
            Run::Packed(packed, n) if width as usize <= FAST_WIDTH => {
                packed_bits(packed, width, n, table, bits).then_some(())
            }
            Run::Packed(packed, n) => {
                for chunk in unpacked(packed, width, n, scratch).chunks(64) {
                    let mut word = 0u64;
                    for (i, &key) in chunk.iter().enumerate() {
                        match table.get(key as usize)? {
                            bit @ (0 | 1) => word |= u64::from(*bit) << i,
                            _ => return None,
                        }
                    }
                    bits.push_word(word, chunk.len());
                }
                Some(())
            }
        })
    }

    /// Appends to `out` the `dictionary` value of each of the next `count` keys
    /// (`None`: the data ends first, or a key is past the dictionary). Keys of at
    /// most [`FAST_WIDTH`] bits are unpacked 8 at a time and look their value up in
    /// `padded` (the dictionary with a value for every key of the width) without a
    /// bounds check; the others through `scratch`.
    pub(crate) fn gather<T: Copy + Default>(
        self,
        count: usize,
        dictionary: &[T],
        padded: &[T],
        out: &mut Vec<T>,
        scratch: &mut Vec<u32>,
    ) -> Option<()> {
        let width = self.width;
        self.runs(count, |run| match run {
            Run::Repeat(key, n) => {
                out.extend(std::iter::repeat_n(*dictionary.get(key)?, n));
                Some(())
            }
            Run::Packed(packed, n) if width as usize <= FAST_WIDTH => {
                let at = out.len();
                out.resize(at + n, T::default());
                let keys = dictionary.len();
                packed_values(packed, width, padded, keys, &mut out[at..]).then_some(())
            }
            Run::Packed(packed, n) => {
                for &key in unpacked(packed, width, n, scratch).iter() {
                    out.push(*dictionary.get(key as usize)?);
                }
                Some(())
            }
        })
    }

    fn uleb128(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.data.split_first()?;
            self.data = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
}

/// The widest keys looked up through a table with an entry for every value of
/// their width (2¹⁶ entries: dictionaries of up to 65,536 values).
pub(crate) const FAST_WIDTH: usize = 16;

/// `table` (one entry per dictionary value) with an entry for every value of
/// `width` bits, 2 (neither TRUE nor not: corrupt) for those past the dictionary;
/// `None` for keys wider than [`FAST_WIDTH`]. For keys of at most 6 bits the
/// [`combined`] entries of [`keys_per_lookup`] keys follow.
pub(crate) fn padded(table: &[u8], width: u32) -> Option<Vec<u8>> {
    if width as usize > FAST_WIDTH {
        return None;
    }
    let size = 1usize << width;
    let mut out = table[..table.len().min(size)].to_vec();
    out.resize(size, 2);
    combined(&mut out, width as usize);
    Some(out)
}

/// How many keys of `w` bits one lookup of a [`combined`] entry decides: as many as
/// fit in 12 bits (a table of at most 4,096 bytes, which stays in the L1 cache), at
/// most 6 (their bits and a flag fit in a byte); 0 for keys of more than 6 bits.
const fn keys_per_lookup(w: usize) -> usize {
    match w {
        1 | 2 => 6,
        3..=6 => 12 / w,
        _ => 0,
    }
}

/// Appends to `table` (the `2^w` entries of keys of `w` bits) an entry for each
/// value of `k` = [`keys_per_lookup`]`(w)` such keys side by side (the first in the
/// low bits): bit `j` is the entry of key `j` (TRUE or not), bit 7 is set when one
/// of them is neither (past the dictionary). Nothing for wider keys.
fn combined(table: &mut Vec<u8>, w: usize) {
    let k = keys_per_lookup(w);
    if k == 0 || table.len() != 1 << w {
        return;
    }
    let mask = (1 << w) - 1;
    let one = |entry: u8| (entry & 1) | if entry > 1 { 0x80 } else { 0 };
    let keys_bits = (1u8 << k) - 1;
    let mut entries = vec![0u8; 1 << (k * w)];
    // Value `v` is its first key (its low `w` bits), then the keys of `v >> w`: the
    // entry of `v >> w` (built before, it is smaller) shifted by one key, its last
    // key (a 0 past the `k`) dropped. For `v` = 0 that is itself: `k` keys 0.
    entries[0] = (0..k).fold(one(table[0]) & 0x80, |e, j| e | (table[0] & 1) << j);
    for v in 1..entries.len() {
        let rest = entries[v >> w];
        entries[v] = one(table[v & mask]) | ((rest << 1) & keys_bits) | (rest & 0x80);
    }
    table.extend(entries);
}

/// Appends to `bits` the `table` entries of the first `take` of the packed values of
/// `width` (≤ [`FAST_WIDTH`]) bits in `packed` (which holds at least `take` of them);
/// `table` has `2^width` entries, then possibly their [`combined`] entries. `false`
/// if an entry is neither 0 nor 1.
fn packed_bits(packed: &[u8], width: u32, take: usize, table: &[u8], bits: &mut Bits) -> bool {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                0 => {
                    // Every key is 0.
                    return match table.first() {
                        Some(&bit @ (0 | 1)) => {
                            bits.push_run(bit == 1, take);
                            true
                        }
                        _ => false,
                    };
                }
                $($w => packed_bits_width::<$w>(packed, take, table, bits),)*
                _ => false,
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`packed_bits`] for one width, known when compiled: each group of 8 keys is 8
/// loads, shifts and masks by constants, and 8 lookups that need no bounds check; for
/// keys of at most 6 bits with [`combined`] entries, one load and 2 to 4 lookups.
fn packed_bits_width<const W: usize>(
    packed: &[u8],
    take: usize,
    table: &[u8],
    bits: &mut Bits,
) -> bool {
    let mask = (1usize << W) - 1;
    let k = keys_per_lookup(W);
    let combined = table
        .get(mask + 1..)
        .filter(|c| k > 0 && c.len() == 1 << (k * W));
    let Some(table) = table.get(..=mask) else {
        return false;
    };
    // The bits of the group of 8 keys whose window is `s`, and the OR of their
    // entries (a combined entry's flag counts as 2).
    let group = |s: &[u8]| -> (u8, u8) {
        let (mut byte, mut all) = (0u8, 0u8);
        match combined {
            Some(combined) => {
                // 8 keys of at most 6 bits: 48 bits of the window's first 8 bytes,
                // `k` keys a lookup; the keys past the 8th are zeroed, their bits
                // shifted out of the byte.
                let window = u64::from_le_bytes(s[..8].try_into().expect("8 bytes"));
                let keys = window & ((1u64 << (8 * W)) - 1);
                let chunk = (1usize << (k * W)) - 1;
                for j in 0..8usize.div_ceil(k) {
                    let entry = combined[(keys >> (j * k * W)) as usize & chunk];
                    byte |= ((u16::from(entry & 0x3f)) << (j * k)) as u8;
                    all |= (entry >> 6) & 2;
                }
            }
            None => {
                for i in 0..8 {
                    let entry = table[key::<W>(s, i) & mask];
                    byte |= (entry & 1) << i;
                    all |= entry;
                }
            }
        }
        (byte, all)
    };
    let mut all = 0u8;
    let mut word = 0u64;
    let mut in_word = 0;
    let mut push = |byte: u8, n: usize, bits: &mut Bits| {
        word |= u64::from(byte) << in_word;
        in_word += n;
        if in_word == 64 {
            bits.push_word(word, 64);
            word = 0;
            in_word = 0;
        }
    };
    let direct = direct_groups::<W>(packed, take);
    for g in 0..direct {
        let (byte, a) = group(&packed[g * W..g * W + W + 8]);
        all |= a;
        push(byte, 8, bits);
    }
    // A last group of fewer than 8 keys keeps their bits and entries only.
    let mut copy = [0u8; 2 * FAST_WIDTH + 8];
    for g in direct..take.div_ceil(8) {
        let n = (take - g * 8).min(8);
        let window = tail_window::<W>(packed, g, &mut copy);
        let mut byte = 0u8;
        for i in 0..n {
            let entry = table[key::<W>(window, i) & mask];
            byte |= (entry & 1) << i;
            all |= entry;
        }
        push(byte, n, bits);
    }
    if in_word > 0 {
        bits.push_word(word, in_word);
    }
    all <= 1
}

/// How many of the groups of 8 packed `W`-bit values among the first `take` of
/// `packed` can be read in place: those whose window (the group's bytes and 8 more)
/// lies inside `packed`.
fn direct_groups<const W: usize>(packed: &[u8], take: usize) -> usize {
    match packed.len().checked_sub(W + 8) {
        Some(last) => (last / W + 1).min(take / 8),
        None => 0,
    }
}

/// The window of group `g` of packed `W`-bit values, copied into `copy` and padded
/// with zeros past the end of `packed`.
fn tail_window<'c, const W: usize>(packed: &[u8], g: usize, copy: &'c mut [u8]) -> &'c [u8] {
    let from = (g * W).min(packed.len());
    let n = (packed.len() - from).min(W);
    copy[..W + 8].fill(0);
    copy[..n].copy_from_slice(&packed[from..from + n]);
    &copy[..W + 8]
}

/// Value `i` (< 8) of a group of `W`-bit values whose `window` is at least `W + 8`
/// bytes, with the bits above it (mask them off).
#[inline(always)]
fn key<const W: usize>(window: &[u8], i: usize) -> usize {
    let window = &window[..W + 8];
    let bit = i * W;
    let at = bit / 8;
    let bytes = u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes"));
    (bytes >> (bit % 8)) as usize
}

/// Fills `out` with the `padded` values of the first `out.len()` packed keys of
/// `width` (≤ [`FAST_WIDTH`]) bits in `packed` (which holds at least that many);
/// `padded` has `2^width` values, the first `keys` of them the dictionary's.
/// `false` if a key is past the dictionary.
fn packed_values<T: Copy + Default>(
    packed: &[u8],
    width: u32,
    padded: &[T],
    keys: usize,
    out: &mut [T],
) -> bool {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                0 => match padded.first() {
                    Some(&v) if keys > 0 => {
                        out.fill(v);
                        true
                    }
                    _ => false,
                },
                $($w => packed_values_width::<$w, T>(packed, padded, keys, out),)*
                _ => false,
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`packed_values`] for one width, known when compiled.
fn packed_values_width<const W: usize, T: Copy + Default>(
    packed: &[u8],
    padded: &[T],
    keys: usize,
    out: &mut [T],
) -> bool {
    let mask = (1usize << W) - 1;
    let Some(padded) = padded.get(..=mask) else {
        return false;
    };
    // The values of the group whose window is `s` into `o`; whether a key is past
    // the dictionary.
    let group = |s: &[u8], o: &mut [T]| -> bool {
        let mut past = false;
        for (i, o) in o.iter_mut().enumerate() {
            let key = key::<W>(s, i) & mask;
            past |= key >= keys;
            *o = padded[key];
        }
        past
    };
    let direct = direct_groups::<W>(packed, out.len());
    let (inside, rest) = out.split_at_mut(direct * 8);
    let mut past = false;
    for (g, o) in inside.chunks_exact_mut(8).enumerate() {
        past |= group(&packed[g * W..g * W + W + 8], o);
    }
    let mut copy = [0u8; 2 * FAST_WIDTH + 8];
    for (g, o) in rest.chunks_mut(8).enumerate() {
        past |= group(tail_window::<W>(packed, direct + g, &mut copy), o);
    }
    !past
}

/// The first `n` values of `width` bits in `packed`, unpacked into `scratch`.
fn unpacked<'s>(packed: &[u8], width: u32, n: usize, scratch: &'s mut Vec<u32>) -> &'s [u32] {
    scratch.clear();
    scratch.resize(n, 0);
    unpack(packed, width, scratch);
    scratch
}

/// Unpacks `out.len()` values of `width` bits (≤ 32), least significant bit first,
/// from `packed`, which holds at least that many bits.
fn unpack(packed: &[u8], width: u32, out: &mut [u32]) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                $($w => unpack_width::<$w>(packed, out),)*
                _ => out.fill(0),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
}

/// [`unpack`] for one width, known when compiled: the shifts and masks are constants.
fn unpack_width<const W: usize>(packed: &[u8], out: &mut [u32]) {
    let mask = if W == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << W) - 1
    };
    // Values whose 8-byte window lies inside `packed`, loaded directly.
    let direct = (packed.len().saturating_sub(8) * 8 / W + 1).min(out.len());
    let direct = if packed.len() >= 8 { direct } else { 0 };
    for (i, v) in out[..direct].iter_mut().enumerate() {
        let bit = i * W;
        let at = bit / 8;
        let window = u64::from_le_bytes(packed[at..at + 8].try_into().expect("8 bytes"));
        *v = ((window >> (bit % 8)) & mask) as u32;
    }
    for (i, v) in out.iter_mut().enumerate().skip(direct) {
        let bit = i * W;
        let at = bit / 8;
        let mut window = [0u8; 8];
        let tail = &packed[at.min(packed.len())..];
        let n = tail.len().min(8);
        window[..n].copy_from_slice(&tail[..n]);
        *v = ((u64::from_le_bytes(window) >> (bit % 8)) & mask) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-packs `values` `width` bits each, least significant first.
    fn pack(values: &[u32], width: u32) -> Vec<u8> {
        let mut out = vec![0u8; (values.len() * width as usize).div_ceil(8)];
        for (i, &v) in values.iter().enumerate() {
            for b in 0..width as usize {
                if v >> b & 1 == 1 {
                    let bit = i * width as usize + b;
                    out[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        out
    }

    /// Keys of up to 6 bits are looked up several at a time ([`combined`]); for every
    /// width up to 8, dictionaries of random sizes, runs of any length (a last group of
    /// fewer than 8 keys too) and keys past the dictionary, the bits and the verdict
    /// are those of looking each key up alone.
    #[test]
    fn keys_looked_up_several_at_a_time_match_one_at_a_time() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for width in 1..=8u32 {
            let size = 1u64 << width;
            for case in 0..60 {
                let dictionary = 1 + next(size) as usize;
                let entries: Vec<u8> = (0..dictionary).map(|_| next(2) as u8).collect();
                let bound = match case % 4 {
                    0 => size,
                    _ => dictionary as u64,
                };
                let take = 1 + next(200) as usize;
                let mut keys: Vec<u32> = (0..take).map(|_| next(bound) as u32).collect();
                if case % 4 == 1 && dictionary < size as usize && take > 80 {
                    // One key past the dictionary, in the first group (read in place
                    // with the others, not as part of a last short group).
                    keys[next(8) as usize] = (size - 1) as u32;
                }
                let packed = pack(&keys, width);
                let table = padded(&entries, width).unwrap();
                let k = keys_per_lookup(width as usize);
                let expected_len = (1 << width) + if k > 0 { 1 << (k * width as usize) } else { 0 };
                assert_eq!(table.len(), expected_len, "width {width}");
                let mut bits = Bits::with_capacity(take);
                let ok = packed_bits(&packed, width, take, &table, &mut bits);
                let valid = keys.iter().all(|&key| (key as usize) < dictionary);
                assert_eq!(ok, valid, "width {width}, case {case}");
                if ok {
                    let bits = bits.finish();
                    assert_eq!(bits.len(), take);
                    for (i, &key) in keys.iter().enumerate() {
                        let expected = entries[key as usize] == 1;
                        assert_eq!(
                            bits.value(i),
                            expected,
                            "width {width}, case {case}, key {i}"
                        );
                    }
                }
            }
        }
    }

    /// A run repeating a key wider than the keys' width (a corrupt page) finds no
    /// entry: not one of the combined entries that follow the keys' own.
    #[test]
    fn a_repeated_key_past_its_width_is_refused() {
        let table = padded(&[0, 1, 0], 3).unwrap();
        // Entry 8 is the combined entry of four keys 0: 0, as if key 8 were FALSE.
        assert_eq!(table[8], 0);
        let lookup = |key: u8| {
            let mut bits = Bits::with_capacity(8);
            // A run of 8 repetitions of `key`, in one byte.
            Hybrid::new(&[8 << 1, key], 3)
                .unwrap()
                .lookup(8, &table, &mut bits, &mut Vec::new())
                .map(|()| bits.finish().count_set_bits())
        };
        assert_eq!(lookup(1), Some(8));
        assert_eq!(lookup(2), Some(0));
        assert_eq!(lookup(5), None);
        assert_eq!(lookup(8), None);
    }

    #[test]
    fn unpacks_every_width() {
        for width in 1..=32u32 {
            let values: Vec<u32> = (0..67u64)
                .map(|i| ((i * 2_654_435_761) as u32) & (u32::MAX >> (32 - width)))
                .collect();
            let packed = pack(&values, width);
            let mut out = vec![0; values.len()];
            unpack(&packed, width, &mut out);
            assert_eq!(out, values, "width {width}");
        }
    }

    #[test]
    fn bits_append_across_words() {
        let mut bits = Bits::with_capacity(0);
        bits.push_run(true, 3);
        bits.push_word(0b101, 3);
        bits.push_run(false, 70);
        bits.push_run(true, 65);
        let b = bits.finish();
        assert_eq!(b.len(), 3 + 3 + 70 + 65);
        let expected: Vec<bool> = [true; 3]
            .into_iter()
            .chain([true, false, true])
            .chain([false; 70])
            .chain([true; 65])
            .collect();
        assert_eq!(b.iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn hybrid_runs_and_groups() {
        // A run of 5 × key 2, then one group of 8 packed keys (width 2), of which 6
        // are read; table: key 1 and 2 TRUE.
        let mut data = vec![5 << 1, 2];
        data.push((1 << 1) | 1);
        data.extend(pack(&[0, 1, 2, 3, 1, 0, 0, 0], 2));
        let mut bits = Bits::with_capacity(0);
        let mut scratch = Vec::new();
        let table = [0, 1, 1, 0];
        Hybrid::new(&data, 2)
            .unwrap()
            .lookup(11, &table, &mut bits, &mut scratch)
            .unwrap();
        let got: Vec<bool> = bits.finish().iter().collect();
        let t = true;
        let f = false;
        assert_eq!(got, [t, t, t, t, t, f, t, t, f, t, f]);
        // A key past the table, or data that ends early, gives up.
        let mut bits = Bits::with_capacity(0);
        assert!(Hybrid::new(&data, 2)
            .unwrap()
            .lookup(11, &table[..3], &mut bits, &mut scratch)
            .is_none());
        let mut bits = Bits::with_capacity(0);
        assert!(Hybrid::new(&data, 2)
            .unwrap()
            .lookup(20, &table, &mut bits, &mut scratch)
            .is_none());
    }
}
