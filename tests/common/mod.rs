//! Shared test data: a schema with every supported type and random batches over it.

#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
    Decimal32Array, Decimal64Array, DurationMillisecondArray, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, IntervalMonthDayNanoArray, RecordBatch,
    StringArray, Time32MillisecondArray, Time64MicrosecondArray, TimestampMillisecondArray,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow::datatypes::{
    DataType, Field, IntervalMonthDayNano, IntervalUnit, Schema, SchemaRef, TimeUnit,
};

/// Columns: name and type.
/// A column's name and a constructor of its type.
type Column = (&'static str, fn() -> DataType);

pub const COLUMNS: &[Column] = &[
    ("a", || DataType::Float64),
    ("b", || DataType::Float64),
    ("f32", || DataType::Float32),
    ("i", || DataType::Int64),
    ("j", || DataType::Int64),
    ("k", || DataType::Int32),
    ("i16", || DataType::Int16),
    ("t8", || DataType::Int8),
    ("u8", || DataType::UInt8),
    ("u32", || DataType::UInt32),
    ("u64", || DataType::UInt64),
    ("flag", || DataType::Boolean),
    ("s", || DataType::Utf8),
    ("d", || DataType::Date32),
    ("ts", || {
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
    }),
    ("bl", || DataType::Binary),
    ("tm", || DataType::Time64(TimeUnit::Microsecond)),
    ("tm32", || DataType::Time32(TimeUnit::Millisecond)),
    ("d64", || DataType::Date64),
    ("iv", || DataType::Interval(IntervalUnit::MonthDayNano)),
    ("dur", || DataType::Duration(TimeUnit::Millisecond)),
    ("m", || DataType::Decimal128(15, 2)),
    ("m4", || DataType::Decimal128(18, 4)),
    ("m30", || DataType::Decimal128(30, 4)),
    ("m38", || DataType::Decimal128(38, 10)),
    // DECIMALs stored in 64 and 32 bits (as the Parquet scan reads them).
    ("m64", || DataType::Decimal64(15, 2)),
    ("m32", || DataType::Decimal32(9, 2)),
];

pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|(n, t)| Field::new(*n, t(), true))
            .collect::<Vec<_>>(),
    ))
}

/// A small deterministic generator (xorshift), so data depends only on the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 1_000_000) as f64 / 1_000_000.0 < p
    }
}

fn special_float(r: &mut Rng) -> f64 {
    [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.0,
        -1.0,
        50.0,
    ][r.below(9) as usize]
}

/// BLOB values: empty, prefixes of each other, zero and 0xFF bytes, and bytes that
/// are not UTF-8.
pub const BLOBS: &[&[u8]] = &[
    b"",
    b"a",
    b"ab",
    b"abc",
    b"a\x00",
    b"\x00",
    b"\xff",
    b"\xff\xfe",
    b"AB",
    b"\xc3\xa9",
];

const WORDS: &[&str] = &[
    "",
    "a",
    "ab",
    "abc",
    "abd",
    "AB",
    "Abc",
    "xyz",
    "b%c",
    "a_c",
    "héllo",
    "HÉLLO",
    "AIR",
    "AIR REG",
    "MAIL",
    "ab\ncd",
    // At the view boundaries: 4 bytes (the prefix), 12 (the longest inline value),
    // 13 (the shortest in a data buffer), a long one, and non-ASCII across them.
    "abcd",
    "abcdefghijkl",
    "abcdefghijklm",
    "abcdefghijklmnopqrstuvwxyz",
    "ab€",
    "héllo wörld!",
];

/// A batch of `len` rows: values from small ranges so that comparisons, equalities
/// and zero divisors all happen; `null_p` of each column's values NULL.
pub fn batch(seed: u64, len: usize, null_p: f64) -> RecordBatch {
    let mut r = Rng::new(seed);
    let mut valid = |r: &mut Rng| !r.chance(null_p);
    let mut cols: Vec<ArrayRef> = Vec::new();
    let n = len;
    let f64s = |r: &mut Rng, valid: &mut dyn FnMut(&mut Rng) -> bool| -> ArrayRef {
        Arc::new(Float64Array::from_iter((0..n).map(|_| {
            let v = if r.chance(0.05) {
                special_float(r)
            } else {
                (r.below(2000) as f64 - 1000.0) / 10.0
            };
            valid(r).then_some(v)
        })))
    };
    cols.push(f64s(&mut r, &mut valid));
    cols.push(f64s(&mut r, &mut valid));
    cols.push(Arc::new(Float32Array::from_iter((0..n).map(|_| {
        let v = if r.chance(0.05) {
            special_float(&mut r) as f32
        } else {
            (r.below(200) as f32 - 100.0) / 4.0
        };
        valid(&mut r).then_some(v)
    }))));
    let int = |r: &mut Rng, lo: i64, hi: i64| -> i64 {
        if r.chance(0.03) {
            if r.chance(0.5) {
                lo
            } else {
                hi
            }
        } else {
            (r.below(21) as i64) - 10
        }
    };
    cols.push(Arc::new(Int64Array::from_iter((0..n).map(|_| {
        let v = int(&mut r, i64::MIN, i64::MAX);
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(Int64Array::from_iter((0..n).map(|_| {
        let v = (r.below(2000) as i64) - 1000;
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(Int32Array::from_iter((0..n).map(|_| {
        let v = int(&mut r, i32::MIN as i64, i32::MAX as i64) as i32;
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(Int16Array::from_iter((0..n).map(|_| {
        let v = int(&mut r, i16::MIN as i64, i16::MAX as i64) as i16;
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(Int8Array::from_iter((0..n).map(|_| {
        let v = int(&mut r, i8::MIN as i64, i8::MAX as i64) as i8;
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(UInt8Array::from_iter((0..n).map(|_| {
        let v = if r.chance(0.05) {
            255
        } else {
            r.below(12) as u8
        };
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(UInt32Array::from_iter((0..n).map(|_| {
        let v = if r.chance(0.05) {
            u32::MAX
        } else {
            r.below(12) as u32
        };
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(UInt64Array::from_iter((0..n).map(|_| {
        let v = if r.chance(0.05) {
            u64::MAX
        } else {
            r.below(12)
        };
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(BooleanArray::from_iter((0..n).map(|_| {
        let v = r.chance(0.5);
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(StringArray::from_iter((0..n).map(|_| {
        let v = WORDS[r.below(WORDS.len() as u64) as usize];
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(Date32Array::from_iter((0..n).map(|_| {
        let v = 8700 + r.below(800) as i32;
        valid(&mut r).then_some(v)
    }))));
    cols.push(Arc::new(
        TimestampMillisecondArray::from_iter((0..n).map(|_| {
            let v = 751_680_000_000 + (r.below(800) as i64) * 43_200_000;
            valid(&mut r).then_some(v)
        }))
        .with_timezone("UTC"),
    ));
    cols.push(Arc::new(BinaryArray::from_iter((0..n).map(|_| {
        let v = BLOBS[r.below(BLOBS.len() as u64) as usize];
        valid(&mut r).then_some(v)
    }))));
    // Times on the minute or with a fraction, and the last microsecond of the day.
    cols.push(Arc::new(Time64MicrosecondArray::from_iter((0..n).map(
        |_| {
            let v = match r.below(10) {
                0 => 86_399_999_999,
                1 => (r.below(86_400_000) as i64) * 1_000 + r.below(1_000) as i64,
                _ => (r.below(1_440) as i64) * 60_000_000,
            };
            valid(&mut r).then_some(v)
        },
    ))));
    cols.push(Arc::new(Time32MillisecondArray::from_iter((0..n).map(
        |_| {
            let v = (r.below(1_440) as i32) * 60_000 + (r.below(4) as i32) * 250;
            valid(&mut r).then_some(v)
        },
    ))));
    cols.push(Arc::new(Date64Array::from_iter((0..n).map(|_| {
        let v = (8700 + r.below(800) as i64) * 86_400_000;
        valid(&mut r).then_some(v)
    }))));
    // Intervals whose months, days and time compare across fields (1 month = 30
    // days), of both signs.
    cols.push(Arc::new(IntervalMonthDayNanoArray::from_iter((0..n).map(
        |_| {
            let months = r.below(3) as i32 - 1;
            let days = [0, 1, 30, -30][r.below(4) as usize];
            let hours = r.below(49) as i64 - 24;
            let v = IntervalMonthDayNano::new(months, days, hours * 3_600_000_000_000);
            valid(&mut r).then_some(v)
        },
    ))));
    cols.push(Arc::new(DurationMillisecondArray::from_iter((0..n).map(
        |_| {
            let v = (r.below(200) as i64 - 100) * 3_600_000;
            valid(&mut r).then_some(v)
        },
    ))));
    // Money: cents from -1000.00 to 1000.00, and now and then the largest values of
    // the precision (so sums and products overflow it); the wide ones also hold
    // values beyond 64 bits.
    for (p, s) in [(15u8, 2i8), (18, 4), (30, 4), (38, 10)] {
        let max = 10i128.pow(u32::from(p)) - 1;
        let values = Decimal128Array::from_iter((0..n).map(|_| {
            let v = if r.chance(0.03) {
                if r.chance(0.5) {
                    max
                } else {
                    -max
                }
            } else if p > 18 && r.chance(0.2) {
                (r.below(2_000_001) as i128 - 1_000_000) * 10i128.pow(u32::from(p) - 8)
            } else {
                (r.below(200_001) as i128 - 100_000) * 10i128.pow(s as u32 - 2)
            };
            valid(&mut r).then_some(v)
        }));
        cols.push(Arc::new(
            values.with_precision_and_scale(p, s).expect("valid"),
        ));
    }
    // The same kind of money in 64 and 32 bits, with their precisions' extremes.
    let mut money = |max: i64| -> Vec<Option<i64>> {
        (0..n)
            .map(|_| {
                let v = if r.chance(0.03) {
                    if r.chance(0.5) {
                        max
                    } else {
                        -max
                    }
                } else {
                    r.below(200_001) as i64 - 100_000
                };
                valid(&mut r).then_some(v)
            })
            .collect()
    };
    let m64 = Decimal64Array::from(money(999_999_999_999_999));
    cols.push(Arc::new(
        m64.with_precision_and_scale(15, 2).expect("valid"),
    ));
    let m32: Decimal32Array = money(999_999_999)
        .into_iter()
        .map(|v| v.map(|v| v as i32))
        .collect();
    cols.push(Arc::new(m32.with_precision_and_scale(9, 2).expect("valid")));
    RecordBatch::try_new(schema(), cols).expect("batch matches schema")
}

/// `batch(seed, len + offset, null_p)` sliced to `len` rows starting at `offset`.
pub fn sliced_batch(seed: u64, len: usize, offset: usize, null_p: f64) -> RecordBatch {
    batch(seed, len + offset, null_p).slice(offset, len)
}

/// The string layouts a column of VARCHAR may have.
pub const STRING_LAYOUTS: &[DataType] = &[DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View];

/// `strings` (a `Utf8` array) in the layout `ty`. Views are built in data buffers of
/// 64 bytes, so that long values are spread over several buffers.
pub fn in_layout(strings: &dyn Array, ty: &DataType) -> ArrayRef {
    use arrow::array::{AsArray, StringViewBuilder};
    let s = strings.as_string::<i32>();
    match ty {
        DataType::Utf8View => {
            let mut b = StringViewBuilder::new().with_fixed_block_size(64);
            for v in s.iter() {
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        DataType::LargeUtf8 => Arc::new(arrow::array::LargeStringArray::from_iter(s.iter())),
        _ => Arc::new(s.clone()),
    }
}

/// `batch` with its `Utf8` columns in the layout `ty` (built before any slicing,
/// so a slice of the result is a slice of a view or large-offset array).
pub fn with_string_layout(batch: &RecordBatch, ty: &DataType) -> RecordBatch {
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if *f.data_type() == DataType::Utf8 {
            fields.push(f.as_ref().clone().with_data_type(ty.clone()));
            columns.push(in_layout(c.as_ref(), ty));
        } else {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("same rows")
}

/// [`sliced_batch`] with its string column in the layout `ty`.
pub fn sliced_batch_in(
    seed: u64,
    len: usize,
    offset: usize,
    null_p: f64,
    ty: &DataType,
) -> RecordBatch {
    with_string_layout(&batch(seed, len + offset, null_p), ty).slice(offset, len)
}

/// Whether two arrays hold the same values (floats by value with NaNs equal; values
/// under NULLs ignored).
pub fn same_array(x: &dyn Array, y: &dyn Array) -> bool {
    use arrow::array::AsArray;
    use arrow::datatypes::{Float32Type, Float64Type};
    if x.data_type() != y.data_type() || x.len() != y.len() {
        return false;
    }
    for i in 0..x.len() {
        if x.is_null(i) != y.is_null(i) {
            return false;
        }
    }
    match x.data_type() {
        DataType::Float64 => {
            let (a, b) = (
                x.as_primitive::<Float64Type>(),
                y.as_primitive::<Float64Type>(),
            );
            (0..x.len()).all(|i| {
                x.is_null(i)
                    || (a.value(i).is_nan() && b.value(i).is_nan())
                    || a.value(i).to_bits() == b.value(i).to_bits()
            })
        }
        DataType::Float32 => {
            let (a, b) = (
                x.as_primitive::<Float32Type>(),
                y.as_primitive::<Float32Type>(),
            );
            (0..x.len()).all(|i| {
                x.is_null(i)
                    || (a.value(i).is_nan() && b.value(i).is_nan())
                    || a.value(i).to_bits() == b.value(i).to_bits()
            })
        }
        // arrow's equality ignores values under NULLs
        _ => x.to_data() == y.to_data(),
    }
}
