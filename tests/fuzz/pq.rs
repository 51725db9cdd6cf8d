//! Parquet inputs: small valid files written with the parquet crate (several types,
//! row groups, dictionary pages, codecs), and mutations of them (bit flips,
//! truncations, forged footer lengths, forged thrift varints and list counts).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, DictionaryArray, Float64Array,
    Int16Array, Int32Array, Int64Array, LargeStringArray, RecordBatch, StringArray,
    TimestampMillisecondArray, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::common::Rng;

/// One base file: its bytes and the predicates scans of it use.
pub struct Base {
    /// The file.
    pub bytes: Vec<u8>,
    /// Predicates over its columns (`None`: no predicate).
    pub predicates: Vec<Option<&'static str>>,
}

const WORDS: &[&str] = &["a", "ab", "abc", "b", "xyz", "héllo", "AIR"];

fn write(batch: &RecordBatch, props: WriterProperties) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).expect("a valid writer");
    // Several writes, so that row groups and pages split across them.
    let mut at = 0;
    while at < batch.num_rows() {
        let n = 37.min(batch.num_rows() - at);
        writer.write(&batch.slice(at, n)).expect("writes");
        at += n;
    }
    writer.close().expect("closes");
    out
}

fn main_batch(rows: usize, seed: u64) -> RecordBatch {
    let mut r = Rng::new(seed);
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int64, true),
        Field::new("k", DataType::Int32, false),
        Field::new("a", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("d", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
    ]));
    let mut v = |p: f64| !r.chance(p);
    let valid: Vec<bool> = (0..rows * 6).map(|_| v(0.1)).collect();
    let ok = |c: usize, i: usize| valid[c * rows + i];
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter(
            (0..rows).map(|i| ok(0, i).then_some(i as i64 * 7 - 300)),
        )),
        Arc::new(Int32Array::from_iter_values(
            (0..rows).map(|i| (i % 23) as i32 - 11),
        )),
        Arc::new(Float64Array::from_iter(
            (0..rows).map(|i| ok(1, i).then_some(i as f64 / 3.0 - 20.0)),
        )),
        Arc::new(StringArray::from_iter(
            (0..rows).map(|i| ok(2, i).then_some(WORDS[i % WORDS.len()])),
        )),
        Arc::new(BooleanArray::from_iter(
            (0..rows).map(|i| ok(3, i).then_some(i % 3 == 0)),
        )),
        Arc::new(Date32Array::from_iter(
            (0..rows).map(|i| ok(4, i).then_some(9000 + i as i32)),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter(
                (0..rows).map(|i| ok(5, i).then_some(790_000_000_000 + i as i64 * 86_400_000)),
            )
            .with_timezone("UTC"),
        ),
    ];
    RecordBatch::try_new(schema, cols).expect("matches")
}

fn other_batch(rows: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("dec", DataType::Decimal128(10, 2), true),
        Field::new(
            "ds",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new("ls", DataType::LargeUtf8, true),
        Field::new("u8", DataType::UInt8, false),
        Field::new("i16", DataType::Int16, true),
    ]));
    let dec = Decimal128Array::from_iter((0..rows).map(|i| (i % 5 != 0).then_some(i as i128 * 37)))
        .with_precision_and_scale(10, 2)
        .expect("valid precision");
    let ds: DictionaryArray<Int32Type> = (0..rows)
        .map(|i| (i % 7 != 0).then_some(WORDS[i % 3]))
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(dec),
        Arc::new(ds),
        Arc::new(LargeStringArray::from_iter(
            (0..rows).map(|i| (i % 4 != 1).then_some(WORDS[i % WORDS.len()])),
        )),
        Arc::new(UInt8Array::from_iter_values(
            (0..rows).map(|i| (i * 13) as u8),
        )),
        Arc::new(Int16Array::from_iter(
            (0..rows).map(|i| (i % 6 != 2).then_some(i as i16 - 20)),
        )),
    ];
    RecordBatch::try_new(schema, cols).expect("matches")
}

const MAIN_PREDICATES: &[Option<&str>] = &[
    None,
    Some("i > 10"),
    Some("s LIKE 'a%' OR k < 0"),
    Some("a BETWEEN 0 AND 50 AND flag"),
    Some("d >= DATE '1995-01-01'"),
    Some("i IS NULL"),
    Some("COALESCE(i, 0) + k > 5"),
    Some("ts < TIMESTAMP '1995-06-01'"),
    Some("k IN (1, 2, 3) OR s = 'xyz'"),
    Some("i / (k - k) > 0"),
    Some("1 = 1"),
    Some("NOT (1 = 2) AND i > 0"),
];

/// The base files (deterministic: the same bytes on every run).
pub fn bases() -> Vec<Base> {
    let props = |c: Compression| {
        WriterProperties::builder()
            .set_compression(c)
            .set_created_by("broadhead fuzz".into())
    };
    vec![
        Base {
            bytes: write(
                &main_batch(300, 1),
                props(Compression::SNAPPY)
                    .set_max_row_group_row_count(Some(100))
                    .set_data_page_row_count_limit(32)
                    .set_write_batch_size(16)
                    .set_dictionary_enabled(true)
                    .set_statistics_enabled(EnabledStatistics::Page)
                    .build(),
            ),
            predicates: MAIN_PREDICATES.to_vec(),
        },
        Base {
            bytes: write(
                &main_batch(200, 2),
                props(Compression::ZSTD(ZstdLevel::default()))
                    .set_max_row_group_row_count(Some(64))
                    .set_dictionary_enabled(false)
                    .set_statistics_enabled(EnabledStatistics::Chunk)
                    .build(),
            ),
            predicates: MAIN_PREDICATES.to_vec(),
        },
        Base {
            bytes: write(
                &other_batch(120),
                props(Compression::GZIP(GzipLevel::default()))
                    .set_max_row_group_row_count(Some(50))
                    .set_dictionary_enabled(true)
                    .build(),
            ),
            predicates: vec![
                None,
                Some("dec > 1.5"),
                Some("ds = 'ab'"),
                Some("ls LIKE '%b%'"),
                Some("u8 + i16 > 3"),
            ],
        },
        Base {
            bytes: write(
                &main_batch(5, 3),
                props(Compression::LZ4_RAW)
                    .set_statistics_enabled(EnabledStatistics::None)
                    .build(),
            ),
            predicates: vec![None, Some("i > 2"), Some("s <> 'a'")],
        },
        // Uncompressed: bit flips reach the page decoders instead of a codec's checksum.
        Base {
            bytes: write(
                &main_batch(150, 4),
                props(Compression::UNCOMPRESSED)
                    .set_max_row_group_row_count(Some(40))
                    .set_data_page_row_count_limit(20)
                    .set_write_batch_size(10)
                    .set_dictionary_enabled(true)
                    .set_statistics_enabled(EnabledStatistics::Page)
                    .build(),
            ),
            predicates: MAIN_PREDICATES.to_vec(),
        },
    ]
}

/// One change to a file's bytes. Positions are reduced modulo the region they fall
/// in, as the file is at the time the mutation is applied, so every list of
/// mutations applies to every file.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// Flip one bit (in the footer's metadata when `footer`).
    Flip { at: u64, bit: u8, footer: bool },
    /// Set one byte.
    Byte { at: u64, value: u8, footer: bool },
    /// Keep the first `len` bytes (modulo the length + 1).
    Truncate { len: u64 },
    /// Overwrite the footer's metadata length.
    FooterLen { value: u32 },
    /// Overwrite footer bytes with a thrift (ULEB128) varint.
    Varint { at: u64, value: u64 },
    /// Forge the count of a thrift list header in the footer (the `nth` byte that
    /// looks like one) to `count`.
    ListCount { nth: u64, count: u64 },
    /// Copy `len` bytes from `from` over the bytes at `to`.
    Splice { from: u64, len: u64, to: u64 },
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mutation::Flip { at, bit, footer } => write!(f, "flip {at} {bit} {}", *footer as u8),
            Mutation::Byte { at, value, footer } => {
                write!(f, "byte {at} {value} {}", *footer as u8)
            }
            Mutation::Truncate { len } => write!(f, "truncate {len}"),
            Mutation::FooterLen { value } => write!(f, "footer-len {value}"),
            Mutation::Varint { at, value } => write!(f, "varint {at} {value}"),
            Mutation::ListCount { nth, count } => write!(f, "list-count {nth} {count}"),
            Mutation::Splice { from, len, to } => write!(f, "splice {from} {len} {to}"),
        }
    }
}

impl FromStr for Mutation {
    type Err = String;
    fn from_str(s: &str) -> Result<Mutation, String> {
        let mut words = s.split_whitespace();
        let kind = words.next().ok_or("empty mutation")?;
        let n: Vec<u64> = words
            .map(|w| w.parse::<u64>().map_err(|e| format!("{s}: {e}")))
            .collect::<Result<_, _>>()?;
        let arg = |i: usize| {
            n.get(i)
                .copied()
                .ok_or_else(|| format!("{s}: too few numbers"))
        };
        Ok(match kind {
            "flip" => Mutation::Flip {
                at: arg(0)?,
                bit: arg(1)? as u8,
                footer: arg(2)? != 0,
            },
            "byte" => Mutation::Byte {
                at: arg(0)?,
                value: arg(1)? as u8,
                footer: arg(2)? != 0,
            },
            "truncate" => Mutation::Truncate { len: arg(0)? },
            "footer-len" => Mutation::FooterLen {
                value: arg(0)? as u32,
            },
            "varint" => Mutation::Varint {
                at: arg(0)?,
                value: arg(1)?,
            },
            "list-count" => Mutation::ListCount {
                nth: arg(0)?,
                count: arg(1)?,
            },
            "splice" => Mutation::Splice {
                from: arg(0)?,
                len: arg(1)?,
                to: arg(2)?,
            },
            other => return Err(format!("unknown mutation {other}")),
        })
    }
}

/// The byte range of the footer's thrift metadata, or the whole file when the
/// footer length does not fit.
fn footer(b: &[u8]) -> std::ops::Range<usize> {
    let n = b.len();
    if n >= 12 {
        let len = u32::from_le_bytes([b[n - 8], b[n - 7], b[n - 6], b[n - 5]]) as usize;
        if len > 0 && len <= n - 12 {
            return n - 8 - len..n - 8;
        }
    }
    0..n
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn position(region: &std::ops::Range<usize>, at: u64) -> Option<usize> {
    let len = region.len() as u64;
    (len > 0).then(|| region.start + (at % len) as usize)
}

/// `bytes` with `mutations` applied in order.
pub fn apply(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for m in mutations {
        let all = 0..b.len();
        match *m {
            Mutation::Flip { at, bit, footer: f } => {
                let region = if f { footer(&b) } else { all };
                if let Some(p) = position(&region, at) {
                    b[p] ^= 1 << (bit % 8);
                }
            }
            Mutation::Byte {
                at,
                value,
                footer: f,
            } => {
                let region = if f { footer(&b) } else { all };
                if let Some(p) = position(&region, at) {
                    b[p] = value;
                }
            }
            Mutation::Truncate { len } => b.truncate((len % (b.len() as u64 + 1)) as usize),
            Mutation::FooterLen { value } => {
                let n = b.len();
                if n >= 8 {
                    b[n - 8..n - 4].copy_from_slice(&value.to_le_bytes());
                }
            }
            Mutation::Varint { at, value } => {
                if let Some(p) = position(&footer(&b), at) {
                    for (i, byte) in varint(value).into_iter().enumerate() {
                        if let Some(slot) = b.get_mut(p + i) {
                            *slot = byte;
                        }
                    }
                }
            }
            Mutation::ListCount { nth, count } => {
                let region = footer(&b);
                let valid_footer = region != (0..b.len());
                let candidates: Vec<usize> = region
                    .filter(|&p| {
                        let (size, elem) = (b[p] >> 4, b[p] & 0x0f);
                        (1..=14).contains(&size) && matches!(elem, 5 | 6 | 8 | 12)
                    })
                    .collect();
                if !candidates.is_empty() {
                    let p = candidates[(nth % candidates.len() as u64) as usize];
                    b[p] = 0xf0 | (b[p] & 0x0f);
                    let v = varint(count);
                    b.splice(p + 1..p + 1, v);
                    // Keep the footer length true to the longer metadata.
                    let n = b.len();
                    if valid_footer {
                        let old = u32::from_le_bytes([b[n - 8], b[n - 7], b[n - 6], b[n - 5]]);
                        let grown = old.wrapping_add(varint(count).len() as u32);
                        b[n - 8..n - 4].copy_from_slice(&grown.to_le_bytes());
                    }
                }
            }
            Mutation::Splice { from, len, to } => {
                let n = b.len() as u64;
                if n > 0 {
                    let (from, to) = ((from % n) as usize, (to % n) as usize);
                    let len = (len as usize).min(b.len() - from).min(b.len() - to);
                    let chunk = b[from..from + len].to_vec();
                    b[to..to + len].copy_from_slice(&chunk);
                }
            }
        }
    }
    b
}

/// 1 to 3 (sometimes 8) random mutations of a file of `len` bytes.
pub fn random_mutations(r: &mut Rng, len: u64) -> Vec<Mutation> {
    let n = if r.chance(0.1) { 8 } else { 1 + r.below(3) };
    let big = [
        0u64,
        1,
        15,
        127,
        128,
        255,
        65_535,
        1 << 24,
        0x7fff_ffff,
        0xffff_ffff,
        1 << 40,
        u64::MAX,
    ];
    (0..n)
        .map(|_| {
            let at = r.next();
            match r.below(100) {
                0..=14 => Mutation::Flip {
                    at,
                    bit: r.below(8) as u8,
                    footer: true,
                },
                15..=44 => Mutation::Flip {
                    at,
                    bit: r.below(8) as u8,
                    footer: false,
                },
                45..=52 => Mutation::Byte {
                    at,
                    value: [0u8, 0xff, 0x7f, 0x80, 0x19, 0x1c, 0x15][r.below(7) as usize],
                    footer: r.chance(0.5),
                },
                53..=59 => Mutation::Truncate {
                    len: if r.chance(0.5) {
                        len.saturating_sub(1 + r.below(16))
                    } else {
                        r.below(len)
                    },
                },
                60..=64 => Mutation::FooterLen {
                    value: [
                        0u32,
                        1,
                        4,
                        (len - 8) as u32,
                        len as u32,
                        u32::MAX,
                        0x7fff_ffff,
                    ][r.below(7) as usize],
                },
                65..=76 => Mutation::Varint {
                    at,
                    value: big[r.below(big.len() as u64) as usize],
                },
                77..=89 => Mutation::ListCount {
                    nth: r.below(64),
                    count: big[r.below(big.len() as u64) as usize],
                },
                _ => Mutation::Splice {
                    from: r.next(),
                    len: 1 + r.below(64),
                    to: at,
                },
            }
        })
        .collect()
}
