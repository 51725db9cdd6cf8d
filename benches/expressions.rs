//! The benchmark suite: every expression of the table in `docs/benchmarks.md`, with
//! the JIT, the interpreter and a hand-written fused loop, in two regimes:
//!
//! * streaming: 10,000,000 rows in memory, evaluated batch by batch (8,192 rows);
//! * in-cache: one batch of 1,024 / 8,192 / 65,536 rows evaluated again and again;
//! * in-cache-distinct: eight different batches of 8,192 rows in turn (and, for the
//!   hand-written loop, eight copies of one), since a loop that branches on each row
//!   runs faster on one batch repeated, its branches learnt by the predictor.
//!
//! Plus a memory-bandwidth probe per expression (summing the columns it reads),
//! compile cost by phase, and the cost of a cache hit. Every row also runs what a
//! Rust user would write with arrow-rs kernels (`arrow`, the JIT's output); the
//! filters F1–F8 besides produce a mask and count it both ways (`jit-mask`:
//! `Filter::evaluate_mask` + `true_count`; `arrow-mask`: the kernels' mask +
//! `true_count`), streaming and in cache at 8,192 rows. The string-function rows
//! (S1–S4), the dictionary rows (D1–D3, against the same strings as plain VARCHAR,
//! U1–U3) and the decimal rows (Q6-decimal, Q6-dec64, Q6-double, Q6-bigint: TPC-H Q6
//! with the DECIMAL(15,2) columns as they are, in 64 bits, as DOUBLE and as BIGINT
//! cents) are measured the same way. Regenerate
//! the report with `scripts/bench.sh`; a criterion filter skips the data of the rows
//! it leaves out (`cargo bench --bench expressions -- '/S[0-9]/'`: the string rows).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Decimal64Array,
    Float64Array, Int32Array, Int64Array, RecordBatch, Scalar, StringArray,
};
use arrow::compute::{cast, concat_batches};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal64Type, Field, Float64Type, Int32Type, Int64Type,
    Schema, SchemaRef,
};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::sql::parse_expr;
use broadhead::typed::TypedExpr;
use broadhead::{Filter, KernelCache, Pipeline, Projector, SelectionMode, SelectionVector};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const ROWS: usize = 10_000_000;
const BATCH: usize = 8_192;
const IN_CACHE: [usize; 3] = [1_024, 8_192, 65_536];
/// The rows of the main table (`cases()`).
const MAIN_TABLE: [&str; 12] = [
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "P1", "P2", "P3", "P4",
];
/// In-cache over different batches: this many batches of `DISTINCT_ROWS` rows in turn.
const DISTINCT_BATCHES: usize = 8;
const DISTINCT_ROWS: usize = 8_192;

// ---------------------------------------------------------------- data

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `a, b, c` DOUBLE in [0, 100); `i` BIGINT in [0, 1000) with 10 % NULLs; `j` BIGINT in
/// [0, 1000); `k` INTEGER in [0, 20); `s` 8 random lowercase letters. Seed 42; `t`, 8
/// more random lowercase letters, from its own generator (seed 43) so the other columns
/// are what they were before it was added.
fn synthetic() -> (SchemaRef, Vec<RecordBatch>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("b", DataType::Float64, false),
        Field::new("c", DataType::Float64, false),
        Field::new("i", DataType::Int64, true),
        Field::new("j", DataType::Int64, false),
        Field::new("k", DataType::Int32, false),
        Field::new("s", DataType::Utf8, false),
        Field::new("t", DataType::Utf8, false),
        Field::new("dict", dictionary_type(), false),
        Field::new("plain", DataType::Utf8, false),
    ]));
    let mut r = Rng(42);
    let mut rt = Rng(43);
    let mut rd = Rng(44);
    let words = dictionary_words();
    let letters = |r: &mut Rng, n: usize| -> ArrayRef {
        Arc::new(StringArray::from_iter_values((0..n).map(|_| {
            (0..8)
                .map(|_| (b'a' + (r.next() % 26) as u8) as char)
                .collect::<String>()
        })))
    };
    let mut batches = Vec::new();
    let mut start = 0;
    while start < ROWS {
        let n = BATCH.min(ROWS - start);
        let f = |r: &mut Rng| -> ArrayRef {
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|_| r.unit() * 100.0),
            ))
        };
        let (a, b, c) = (f(&mut r), f(&mut r), f(&mut r));
        let i: ArrayRef = Arc::new(Int64Array::from_iter((0..n).map(|_| {
            let v = (r.next() % 1000) as i64;
            (r.next() % 10 != 0).then_some(v)
        })));
        let j: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..n).map(|_| (r.next() % 1000) as i64),
        ));
        let k: ArrayRef = Arc::new(Int32Array::from_iter_values(
            (0..n).map(|_| (r.next() % 20) as i32),
        ));
        let s = letters(&mut r, n);
        let t = letters(&mut rt, n);
        // Every batch shares one dictionary array, as a Parquet reader's batches of a
        // column chunk do.
        let keys =
            Int32Array::from_iter_values((0..n).map(|_| (rd.next() % words.len() as u64) as i32));
        let plain = cast(&words, &DataType::Utf8)
            .ok()
            .and_then(|w| arrow::compute::take(&w, &keys, None).ok())
            .unwrap();
        let dict: ArrayRef =
            Arc::new(arrow::array::DictionaryArray::try_new(keys, words.clone()).unwrap());
        batches.push(
            RecordBatch::try_new(schema.clone(), vec![a, b, c, i, j, k, s, t, dict, plain])
                .unwrap(),
        );
        start += n;
    }
    (schema, batches)
}

/// The type of the `dict` column.
fn dictionary_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The 100 values of the `dict` column (`plain` holds the same strings): 8 random
/// lowercase letters (seed 45), `ab` at the fourth letter of every tenth; value 7
/// is [`DICT_WORD`].
fn dictionary_words() -> ArrayRef {
    let mut r = Rng(45);
    Arc::new(StringArray::from_iter_values((0..100).map(|i| {
        let mut w: Vec<u8> = (0..8).map(|_| b'a' + (r.next() % 26) as u8).collect();
        if i % 10 == 0 {
            w[3..5].copy_from_slice(b"ab");
        }
        if i == 7 {
            w = DICT_WORD.as_bytes().to_vec();
        }
        String::from_utf8(w).unwrap()
    })))
}

/// The value of the `dict` column that D1 and U1 look for.
const DICT_WORD: &str = "kqzxwvut";

/// How the benchmarks hold TPC-H's DECIMAL(15,2) columns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbers {
    /// DOUBLE: the nearest double (F3, F8, P4 and Q6-double).
    Double,
    /// DECIMAL(15,2), as tpchgen-arrow makes them (Q6-decimal).
    Decimal,
    /// DECIMAL(15,2) in Arrow's `Decimal64`, 8 bytes a value: what the Parquet scan
    /// reads an INT64 DECIMAL(15,2) column as (Q6-dec64).
    Decimal64,
    /// BIGINT: the same unscaled values, in cents (Q6-bigint: the speed DECIMAL(15,2) aims at).
    Cents,
    /// The same values declared DECIMAL(20,2): computed in 128 bits (Q1-wide).
    Wide,
}

/// A DECIMAL(15,2) column held as `numbers` says.
fn convert_decimal(c: &ArrayRef, numbers: Numbers) -> ArrayRef {
    match numbers {
        Numbers::Double => cast(c, &DataType::Float64).unwrap(),
        Numbers::Decimal => c.clone(),
        Numbers::Wide => Arc::new(
            c.as_primitive::<Decimal128Type>()
                .clone()
                .with_precision_and_scale(20, 2)
                .unwrap(),
        ),
        Numbers::Cents => Arc::new(Int64Array::from_iter_values(
            c.as_primitive::<Decimal128Type>()
                .values()
                .iter()
                .map(|&v| i64::try_from(v).unwrap()),
        )),
        Numbers::Decimal64 => Arc::new(
            Decimal64Array::from_iter_values(
                c.as_primitive::<Decimal128Type>()
                    .values()
                    .iter()
                    .map(|&v| i64::try_from(v).unwrap()),
            )
            .with_precision_and_scale(15, 2)
            .unwrap(),
        ),
    }
}

/// TPC-H lineitem from tpchgen-arrow, with decimals held as `numbers` says and strings
/// as VARCHAR (the types Broadhead supports), re-batched to 8,192 rows, `ROWS` rows at
/// most.
fn lineitem(numbers: Numbers) -> (SchemaRef, Vec<RecordBatch>) {
    use tpchgen::generators::LineItemGenerator;
    use tpchgen_arrow::LineItemArrow;
    let scale = (ROWS as f64 / 6_000_000.0).ceil();
    let source = LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)).with_batch_size(BATCH);
    let mut schema: Option<SchemaRef> = None;
    let mut batches = Vec::new();
    let mut rows = 0;
    for batch in source {
        let batch = batch.expect("tpchgen-arrow batch");
        let columns: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| match c.data_type() {
                DataType::Decimal128(_, _) => convert_decimal(c, numbers),
                DataType::Utf8View | DataType::LargeUtf8 => cast(c, &DataType::Utf8).unwrap(),
                _ => c.clone(),
            })
            .collect();
        let s = schema.get_or_insert_with(|| {
            let fields: Vec<Field> = batch
                .schema()
                .fields()
                .iter()
                .zip(&columns)
                .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), f.is_nullable()))
                .collect();
            Arc::new(Schema::new(fields))
        });
        let b = RecordBatch::try_new(s.clone(), columns).unwrap();
        let take = b.num_rows().min(ROWS - rows);
        batches.push(b.slice(0, take));
        rows += take;
        if rows >= ROWS {
            break;
        }
    }
    (schema.unwrap(), batches)
}

/// One batch of the first `rows` rows.
fn first_rows(schema: &SchemaRef, batches: &[RecordBatch], rows: usize) -> RecordBatch {
    let mut taken = Vec::new();
    let mut n = 0;
    for b in batches {
        let k = b.num_rows().min(rows - n);
        taken.push(b.slice(0, k));
        n += k;
        if n == rows {
            break;
        }
    }
    concat_batches(schema, &taken).unwrap()
}

// ---------------------------------------------------------------- the table

const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";
const Q19: &str = "(l_quantity BETWEEN 1 AND 11 AND l_shipmode IN ('AIR', 'AIR REG') \
                   AND l_shipinstruct = 'DELIVER IN PERSON') \
                   OR (l_quantity BETWEEN 10 AND 20 AND l_shipmode IN ('AIR', 'AIR REG') \
                   AND l_shipinstruct = 'DELIVER IN PERSON' AND l_discount > 0.05) \
                   OR (l_quantity BETWEEN 20 AND 30 AND l_shipmode IN ('AIR', 'AIR REG') \
                   AND l_shipinstruct = 'DELIVER IN PERSON' AND l_tax < 0.04)";

type HandFilter = fn(&RecordBatch, &mut Vec<u32>);
type HandProject = fn(&RecordBatch) -> ArrayRef;
type ArrowMask = fn(&RecordBatch) -> BooleanArray;

enum Hand {
    Filter(HandFilter),
    Project(HandProject),
}

struct Case {
    id: &'static str,
    sql: &'static str,
    tpch: bool,
    hand: Hand,
    /// What a Rust user would write with arrow-rs kernels, producing the JIT's output.
    arrow: Option<Hand>,
    /// For the main filters: arrow-rs kernels producing the mask (`arrow` is then
    /// its selection).
    arrow_mask: Option<ArrowMask>,
    /// The columns the expression reads (for the bandwidth probe).
    reads: &'static [&'static str],
}

fn f64s<'a>(b: &'a RecordBatch, name: &str) -> &'a [f64] {
    b.column_by_name(name)
        .unwrap()
        .as_primitive::<Float64Type>()
        .values()
}
fn i64s<'a>(b: &'a RecordBatch, name: &str) -> &'a [i64] {
    b.column_by_name(name)
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
}

/// Branch-free selection: write every row index, advance by the predicate.
#[inline(always)]
fn select(out: &mut Vec<u32>, n: usize, pred: impl Fn(usize) -> bool) {
    out.clear();
    out.reserve(n);
    let buf = out.spare_capacity_mut();
    let mut k = 0;
    for i in 0..n {
        buf[k].write(i as u32);
        k += pred(i) as usize;
    }
    // SAFETY: the first k entries were written above (k <= n <= capacity).
    unsafe { out.set_len(k) };
}

fn hand_f1(b: &RecordBatch, out: &mut Vec<u32>) {
    let a = f64s(b, "a");
    select(out, a.len(), |i| a[i] > 50.0);
}
fn hand_f2(b: &RecordBatch, out: &mut Vec<u32>) {
    let a = f64s(b, "a");
    select(out, a.len(), |i| a[i] > 2.0 && a[i] < 6.0);
}
fn hand_f3(b: &RecordBatch, out: &mut Vec<u32>) {
    let d = b
        .column_by_name("l_shipdate")
        .unwrap()
        .as_primitive::<Date32Type>()
        .values();
    let (disc, qty) = (f64s(b, "l_discount"), f64s(b, "l_quantity"));
    let (lo, hi) = (8766, 9131); // 1994-01-01, 1995-01-01
    select(out, d.len(), |i| {
        (d[i] >= lo) & (d[i] < hi) & (disc[i] >= 0.05) & (disc[i] <= 0.07) & (qty[i] < 24.0)
    });
}
fn hand_f4(b: &RecordBatch, out: &mut Vec<u32>) {
    let ic = b.column_by_name("i").unwrap();
    let (i, j) = (ic.as_primitive::<Int64Type>().values(), i64s(b, "j"));
    match ic.nulls() {
        Some(v) => select(out, i.len(), |r| {
            v.is_valid(r) & (i[r].wrapping_add(j[r]) > 1000)
        }),
        None => select(out, i.len(), |r| i[r].wrapping_add(j[r]) > 1000),
    }
}
fn hand_f5(b: &RecordBatch, out: &mut Vec<u32>) {
    let k = b
        .column_by_name("k")
        .unwrap()
        .as_primitive::<Int32Type>()
        .values();
    // The set as bits of one word: no branch on the row's value. (`matches!` compiled
    // to branches, which the predictor learns on a repeated batch only: 0.9 ns/row on
    // one 8,192-row batch, 2.7 on 65,536 rows.)
    const SET: u32 = 1 << 1 | 1 << 3 | 1 << 5 | 1 << 7 | 1 << 11 | 1 << 13;
    select(out, k.len(), |i| {
        let k = k[i] as u32;
        (k < 32) & (SET.wrapping_shr(k) & 1 == 1)
    });
}
fn hand_f6(b: &RecordBatch, out: &mut Vec<u32>) {
    let (a, bb, c) = (f64s(b, "a"), f64s(b, "b"), f64s(b, "c"));
    select(out, a.len(), |i| {
        ((a[i] < 10.0) | (bb[i] < 10.0)) & (c[i] > 90.0)
    });
}
fn hand_f7(b: &RecordBatch, out: &mut Vec<u32>) {
    let s = b.column_by_name("s").unwrap().as_string::<i32>();
    let (offsets, data) = (s.value_offsets(), s.values().as_slice());
    select(out, s.len(), |i| {
        let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
        end - start >= 2 && data[start] == b'a' && data[start + 1] == b'b'
    });
}
fn hand_f8(b: &RecordBatch, out: &mut Vec<u32>) {
    let (qty, disc, tax) = (
        f64s(b, "l_quantity"),
        f64s(b, "l_discount"),
        f64s(b, "l_tax"),
    );
    let mode = b.column_by_name("l_shipmode").unwrap().as_string::<i32>();
    let instr = b
        .column_by_name("l_shipinstruct")
        .unwrap()
        .as_string::<i32>();
    select(out, qty.len(), |i| {
        let q = qty[i];
        let common = || {
            let m = mode.value(i);
            (m == "AIR" || m == "AIR REG") && instr.value(i) == "DELIVER IN PERSON"
        };
        let r1 = (1.0..=11.0).contains(&q);
        let r2 = (10.0..=20.0).contains(&q) && disc[i] > 0.05;
        let r3 = (20.0..=30.0).contains(&q) && tax[i] < 0.04;
        (r1 || r2 || r3) && common()
    });
}
fn hand_p1(b: &RecordBatch) -> ArrayRef {
    let (a, bb, c) = (f64s(b, "a"), f64s(b, "b"), f64s(b, "c"));
    Arc::new(Float64Array::from_iter_values(
        (0..a.len()).map(|i| a[i] * bb[i] + c[i]),
    ))
}
fn hand_p2(b: &RecordBatch) -> ArrayRef {
    let (a, bb) = (f64s(b, "a"), f64s(b, "b"));
    // Over the zipped slices (no bounds checks), so the compiler makes it a vector blend
    // rather than a branch on each row.
    let values: Vec<f64> = a
        .iter()
        .zip(bb)
        .map(|(&a, &b)| if a > 50.0 { a * 2.0 } else { b })
        .collect();
    Arc::new(Float64Array::from(values))
}
fn hand_p3(b: &RecordBatch) -> ArrayRef {
    let ic = b.column_by_name("i").unwrap();
    let (i, j) = (ic.as_primitive::<Int64Type>().values(), i64s(b, "j"));
    let values: Vec<i64> = (0..i.len())
        .map(|r| i[r].wrapping_mul(3).wrapping_add(j[r]))
        .collect();
    Arc::new(Int64Array::new(values.into(), ic.nulls().cloned()))
}
fn hand_p4(b: &RecordBatch) -> ArrayRef {
    let (p, d, t) = (
        f64s(b, "l_extendedprice"),
        f64s(b, "l_discount"),
        f64s(b, "l_tax"),
    );
    Arc::new(Float64Array::from_iter_values(
        (0..p.len()).map(|i| p[i] * (1.0 - d[i]) * (1.0 + t[i])),
    ))
}

// What a Rust user writes with arrow-rs for the main rows: arrow's comparison,
// boolean, arithmetic (checked, as Broadhead's), `zip` and `like` kernels on the
// columns with scalars. Filters produce the mask (its TRUE rows are the selection).

fn col<'a>(b: &'a RecordBatch, name: &str) -> &'a ArrayRef {
    b.column_by_name(name).unwrap()
}
fn f64_scalar(v: f64) -> Scalar<Float64Array> {
    Scalar::new(Float64Array::from(vec![v]))
}
fn i64_scalar(v: i64) -> Scalar<Int64Array> {
    Scalar::new(Int64Array::from(vec![v]))
}
fn str_scalar(v: &str) -> Scalar<StringArray> {
    Scalar::new(StringArray::from(vec![v]))
}
/// All of `masks` (arrow's `and`).
fn all_of(masks: impl IntoIterator<Item = BooleanArray>) -> BooleanArray {
    use arrow::compute::kernels::boolean::and;
    masks
        .into_iter()
        .reduce(|m, x| and(&m, &x).unwrap())
        .unwrap()
}
/// Any of `masks` (arrow's `or`).
fn any_of(masks: impl IntoIterator<Item = BooleanArray>) -> BooleanArray {
    use arrow::compute::kernels::boolean::or;
    masks
        .into_iter()
        .reduce(|m, x| or(&m, &x).unwrap())
        .unwrap()
}

fn arrow_f1(b: &RecordBatch) -> BooleanArray {
    arrow::compute::kernels::cmp::gt(col(b, "a"), &f64_scalar(50.0)).unwrap()
}
fn arrow_f2(b: &RecordBatch) -> BooleanArray {
    use arrow::compute::kernels::cmp::{gt, lt};
    let a = col(b, "a");
    all_of([
        gt(a, &f64_scalar(2.0)).unwrap(),
        lt(a, &f64_scalar(6.0)).unwrap(),
    ])
}
fn arrow_f3(b: &RecordBatch) -> BooleanArray {
    use arrow::compute::kernels::cmp::{gt_eq, lt, lt_eq};
    let (date, disc, qty) = (
        col(b, "l_shipdate"),
        col(b, "l_discount"),
        col(b, "l_quantity"),
    );
    let day = |v: i32| Scalar::new(Date32Array::from(vec![v]));
    all_of([
        gt_eq(date, &day(8766)).unwrap(),
        lt(date, &day(9131)).unwrap(),
        gt_eq(disc, &f64_scalar(0.05)).unwrap(),
        lt_eq(disc, &f64_scalar(0.07)).unwrap(),
        lt(qty, &f64_scalar(24.0)).unwrap(),
    ])
}
fn arrow_f4(b: &RecordBatch) -> BooleanArray {
    use arrow::compute::kernels::{boolean::is_not_null, cmp::gt, numeric::add};
    let i = col(b, "i");
    let sum = add(i, col(b, "j")).unwrap();
    all_of([
        is_not_null(i).unwrap(),
        gt(&sum, &i64_scalar(1000)).unwrap(),
    ])
}
fn arrow_f5(b: &RecordBatch) -> BooleanArray {
    let k = col(b, "k");
    any_of([1, 3, 5, 7, 11, 13].map(|v| {
        let v = Scalar::new(Int32Array::from(vec![v]));
        arrow::compute::kernels::cmp::eq(k, &v).unwrap()
    }))
}
fn arrow_f6(b: &RecordBatch) -> BooleanArray {
    use arrow::compute::kernels::cmp::{gt, lt};
    let ten = f64_scalar(10.0);
    all_of([
        any_of([
            lt(col(b, "a"), &ten).unwrap(),
            lt(col(b, "b"), &ten).unwrap(),
        ]),
        gt(col(b, "c"), &f64_scalar(90.0)).unwrap(),
    ])
}
fn arrow_f7(b: &RecordBatch) -> BooleanArray {
    arrow::compute::kernels::comparison::like(col(b, "s"), &str_scalar("ab%")).unwrap()
}
/// Q19-style, with the conditions its three branches share taken out (as the
/// hand-written loop does).
fn arrow_f8(b: &RecordBatch) -> BooleanArray {
    use arrow::compute::kernels::cmp::{eq, gt, gt_eq, lt, lt_eq};
    let (qty, mode) = (col(b, "l_quantity"), col(b, "l_shipmode"));
    let between = |lo: f64, hi: f64| {
        all_of([
            gt_eq(qty, &f64_scalar(lo)).unwrap(),
            lt_eq(qty, &f64_scalar(hi)).unwrap(),
        ])
    };
    all_of([
        any_of([
            between(1.0, 11.0),
            all_of([
                between(10.0, 20.0),
                gt(col(b, "l_discount"), &f64_scalar(0.05)).unwrap(),
            ]),
            all_of([
                between(20.0, 30.0),
                lt(col(b, "l_tax"), &f64_scalar(0.04)).unwrap(),
            ]),
        ]),
        any_of([
            eq(mode, &str_scalar("AIR")).unwrap(),
            eq(mode, &str_scalar("AIR REG")).unwrap(),
        ]),
        eq(col(b, "l_shipinstruct"), &str_scalar("DELIVER IN PERSON")).unwrap(),
    ])
}
fn arrow_p1(b: &RecordBatch) -> ArrayRef {
    use arrow::compute::kernels::numeric::{add, mul};
    add(&mul(col(b, "a"), col(b, "b")).unwrap(), col(b, "c")).unwrap()
}
fn arrow_p2(b: &RecordBatch) -> ArrayRef {
    use arrow::compute::kernels::{cmp::gt, numeric::mul, zip::zip};
    let a = col(b, "a");
    let when = gt(a, &f64_scalar(50.0)).unwrap();
    zip(&when, &mul(a, &f64_scalar(2.0)).unwrap(), col(b, "b")).unwrap()
}
fn arrow_p3(b: &RecordBatch) -> ArrayRef {
    use arrow::compute::kernels::numeric::{add, mul};
    add(&mul(col(b, "i"), &i64_scalar(3)).unwrap(), col(b, "j")).unwrap()
}
fn arrow_p4(b: &RecordBatch) -> ArrayRef {
    use arrow::compute::kernels::numeric::{add, mul, sub};
    let one = f64_scalar(1.0);
    let net = mul(
        col(b, "l_extendedprice"),
        &sub(&one, col(b, "l_discount")).unwrap(),
    )
    .unwrap();
    mul(&net, &add(&one, col(b, "l_tax")).unwrap()).unwrap()
}

fn cases() -> Vec<Case> {
    use Hand::{Filter as F, Project as P};
    vec![
        Case {
            id: "F1",
            sql: "a > 50.0",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f1),
            hand: F(hand_f1),
            reads: &["a"],
        },
        Case {
            id: "F2",
            sql: "a > 2.0 AND a < 6.0",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f2),
            hand: F(hand_f2),
            reads: &["a"],
        },
        Case {
            id: "F3",
            sql: Q6,
            tpch: true,
            arrow: None,
            arrow_mask: Some(arrow_f3),
            hand: F(hand_f3),
            reads: &["l_shipdate", "l_discount", "l_quantity"],
        },
        Case {
            id: "F4",
            sql: "i IS NOT NULL AND i + j > 1000",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f4),
            hand: F(hand_f4),
            reads: &["i", "j"],
        },
        Case {
            id: "F5",
            sql: "k IN (1, 3, 5, 7, 11, 13)",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f5),
            hand: F(hand_f5),
            reads: &["k"],
        },
        Case {
            id: "F6",
            sql: "(a < 10 OR b < 10) AND c > 90",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f6),
            hand: F(hand_f6),
            reads: &["a", "b", "c"],
        },
        Case {
            id: "F7",
            sql: "s LIKE 'ab%'",
            tpch: false,
            arrow: None,
            arrow_mask: Some(arrow_f7),
            hand: F(hand_f7),
            reads: &["s"],
        },
        Case {
            id: "F8",
            sql: Q19,
            tpch: true,
            arrow: None,
            arrow_mask: Some(arrow_f8),
            hand: F(hand_f8),
            reads: &[
                "l_quantity",
                "l_shipmode",
                "l_shipinstruct",
                "l_discount",
                "l_tax",
            ],
        },
        Case {
            id: "P1",
            sql: "a * b + c",
            tpch: false,
            arrow: Some(P(arrow_p1)),
            arrow_mask: None,
            hand: P(hand_p1),
            reads: &["a", "b", "c"],
        },
        Case {
            id: "P2",
            sql: "CASE WHEN a > 50 THEN a * 2 ELSE b END",
            tpch: false,
            arrow: Some(P(arrow_p2)),
            arrow_mask: None,
            hand: P(hand_p2),
            reads: &["a", "b"],
        },
        Case {
            id: "P3",
            sql: "i * 3 + j",
            tpch: false,
            arrow: Some(P(arrow_p3)),
            arrow_mask: None,
            hand: P(hand_p3),
            reads: &["i", "j"],
        },
        Case {
            id: "P4",
            sql: "l_extendedprice * (1 - l_discount) * (1 + l_tax)",
            tpch: true,
            arrow: Some(P(arrow_p4)),
            arrow_mask: None,
            hand: P(hand_p4),
            reads: &["l_extendedprice", "l_discount", "l_tax"],
        },
    ]
}

// ---------------------------------------------------------------- string functions
//
// Each against what a Rust user would write with arrow-rs: arrow-string's kernels
// where they exist (`substring_by_char`, `concat_elements_utf8`, `like`) and, for
// upper/lower, a loop building a StringArray (arrow has no case-mapping kernel),
// followed by arrow-ord's `eq` or arrow-string's `like`; and a hand-written fused loop.

fn strs<'a>(b: &'a RecordBatch, name: &str) -> &'a StringArray {
    b.column_by_name(name).unwrap().as_string::<i32>()
}

/// The selection of a filter's mask: the rows that are TRUE (not NULL).
fn mask_to_selection(mask: &BooleanArray, sel: &mut Vec<u32>) {
    let bits = match mask.nulls() {
        Some(n) => mask.values() & n.inner(),
        None => mask.values().clone(),
    };
    sel.clear();
    sel.extend(bits.set_indices().map(|i| i as u32));
}

/// `s` mapped by `f`, as a new array (what arrow-rs users write for upper/lower).
fn map_strings(s: &StringArray, f: fn(&str) -> String) -> StringArray {
    s.iter().map(|v| v.map(f)).collect()
}

fn eq_scalar(a: &StringArray, value: &str, sel: &mut Vec<u32>) {
    let scalar = arrow::array::Scalar::new(StringArray::from(vec![value]));
    mask_to_selection(&arrow::compute::kernels::cmp::eq(a, &scalar).unwrap(), sel);
}

fn arrow_s1(b: &RecordBatch, sel: &mut Vec<u32>) {
    eq_scalar(&map_strings(strs(b, "s"), str::to_uppercase), "AB", sel);
}
fn hand_s1(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "s");
    select(sel, s.len(), |i| {
        let v = s.value(i);
        if v.is_ascii() {
            v.len() == 2 && v.eq_ignore_ascii_case("ab")
        } else {
            v.chars().flat_map(char::to_uppercase).eq("AB".chars())
        }
    });
}
fn arrow_s2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let sub = arrow::compute::kernels::substring::substring_by_char(strs(b, "s"), 0, Some(2));
    eq_scalar(&sub.unwrap(), "ab", sel);
}
fn hand_s2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "s");
    // The first two characters are `ab`: a prefix test on the bytes.
    select(sel, s.len(), |i| s.value(i).as_bytes().starts_with(b"ab"));
}
fn arrow_s3(b: &RecordBatch) -> ArrayRef {
    use arrow::compute::kernels::concat_elements::concat_elements_utf8;
    let s = strs(b, "s");
    let dash = StringArray::from_iter_values(std::iter::repeat_n("-", s.len()));
    let left = concat_elements_utf8(s, &dash).unwrap();
    Arc::new(concat_elements_utf8(&left, strs(b, "t")).unwrap())
}
fn hand_s3(b: &RecordBatch) -> ArrayRef {
    let (s, t) = (strs(b, "s"), strs(b, "t"));
    let bytes = s.values().len() + t.values().len() + s.len();
    let mut out = arrow::array::StringBuilder::with_capacity(s.len(), bytes);
    let mut buf = String::with_capacity(64);
    for i in 0..s.len() {
        buf.clear();
        buf.push_str(s.value(i));
        buf.push('-');
        buf.push_str(t.value(i));
        out.append_value(&buf);
    }
    Arc::new(out.finish())
}
fn arrow_s4(b: &RecordBatch, sel: &mut Vec<u32>) {
    let lowered = map_strings(strs(b, "s"), str::to_lowercase);
    let pattern = arrow::array::Scalar::new(StringArray::from(vec!["%ab%"]));
    let mask = arrow::compute::kernels::comparison::like(&lowered, &pattern).unwrap();
    mask_to_selection(&mask, sel);
}
fn hand_s4(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "s");
    select(sel, s.len(), |i| {
        let v = s.value(i);
        if v.is_ascii() {
            v.as_bytes()
                .windows(2)
                .any(|w| w.eq_ignore_ascii_case(b"ab"))
        } else {
            v.to_lowercase().contains("ab")
        }
    });
}

/// `year(l_shipdate) = 1995` with arrow-rs: `date_part`, then `=`.
fn arrow_n1(b: &RecordBatch, sel: &mut Vec<u32>) {
    use arrow::compute::kernels::temporal::{date_part, DatePart};
    let d = b.column_by_name("l_shipdate").unwrap();
    let years = date_part(d.as_ref(), DatePart::Year).unwrap();
    let target = Int32Array::new_scalar(1995);
    let mask = arrow::compute::kernels::cmp::eq(&years, &target).unwrap();
    mask_to_selection(&mask, sel);
}
/// The year of each day with chrono, as a Rust user would write it.
fn hand_n1(b: &RecordBatch, sel: &mut Vec<u32>) {
    use chrono::Datelike;
    let d = b
        .column_by_name("l_shipdate")
        .unwrap()
        .as_primitive::<Date32Type>()
        .values();
    select(sel, d.len(), |i| {
        chrono::NaiveDate::from_epoch_days(d[i]).is_some_and(|d| d.year() == 1995)
    });
}
/// `j % 7 = 0` with arrow-rs: `rem` by a scalar, then `=`.
fn arrow_n2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let j = b.column_by_name("j").unwrap();
    let seven = Int64Array::new_scalar(7);
    let rem = arrow::compute::kernels::numeric::rem(j, &seven).unwrap();
    let zero = Int64Array::new_scalar(0);
    let mask = arrow::compute::kernels::cmp::eq(&rem, &zero).unwrap();
    mask_to_selection(&mask, sel);
}
fn hand_n2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let j = i64s(b, "j");
    select(sel, j.len(), |i| j[i] % 7 == 0);
}

/// Functions that compile to vector code rather than a row function per block.
fn function_cases() -> Vec<Case> {
    use Hand::Filter as F;
    vec![
        Case {
            id: "N1",
            sql: "year(l_shipdate) = 1995",
            tpch: true,
            hand: F(hand_n1),
            arrow: Some(F(arrow_n1)),
            arrow_mask: None,
            reads: &["l_shipdate"],
        },
        Case {
            id: "N2",
            sql: "j % 7 = 0",
            tpch: false,
            hand: F(hand_n2),
            arrow: Some(F(arrow_n2)),
            arrow_mask: None,
            reads: &["j"],
        },
    ]
}

fn string_cases() -> Vec<Case> {
    use Hand::{Filter as F, Project as P};
    vec![
        Case {
            id: "S1",
            sql: "upper(s) = 'AB'",
            tpch: false,
            hand: F(hand_s1),
            arrow: Some(F(arrow_s1)),
            arrow_mask: None,
            reads: &["s"],
        },
        Case {
            id: "S2",
            sql: "substr(s, 1, 2) = 'ab'",
            tpch: false,
            hand: F(hand_s2),
            arrow: Some(F(arrow_s2)),
            arrow_mask: None,
            reads: &["s"],
        },
        Case {
            id: "S3",
            // `s || '-' || t` (the operator spelled as the function it binds to).
            sql: "concat_op(concat_op(s, '-'), t)",
            tpch: false,
            hand: P(hand_s3),
            arrow: Some(P(arrow_s3)),
            arrow_mask: None,
            reads: &["s", "t"],
        },
        Case {
            id: "S4",
            sql: "lower(s) LIKE '%ab%'",
            tpch: false,
            hand: F(hand_s4),
            arrow: Some(F(arrow_s4)),
            arrow_mask: None,
            reads: &["s"],
        },
    ]
}

// The dictionary rows (D1–D3) and the same predicates on the same strings as a
// plain VARCHAR column (U1–U3): `dict` is Dictionary(Int32, Utf8) with 100 values.
// arrow-rs: its comparison and LIKE kernels on the column (they accept
// dictionaries); for upper, the values mapped, compared, and taken through the keys.
// Hand: per value once, then one lookup per row (dictionary) or a loop over the
// strings (plain).

fn dict_of(b: &RecordBatch) -> &arrow::array::DictionaryArray<Int32Type> {
    b.column_by_name("dict")
        .unwrap()
        .as_dictionary::<Int32Type>()
}

/// Selects the rows whose dictionary value satisfies `pred` (computed once per value).
fn hand_per_value(b: &RecordBatch, sel: &mut Vec<u32>, pred: impl Fn(&str) -> bool) {
    let d = dict_of(b);
    let values = d.values().as_string::<i32>();
    let per_value: Vec<bool> = values.iter().map(|v| v.is_some_and(&pred)).collect();
    let keys = d.keys().values();
    select(sel, keys.len(), |i| per_value[keys[i] as usize]);
}

fn hand_d1(b: &RecordBatch, sel: &mut Vec<u32>) {
    hand_per_value(b, sel, |v| v == DICT_WORD);
}
fn hand_d2(b: &RecordBatch, sel: &mut Vec<u32>) {
    hand_per_value(b, sel, |v| v.contains("ab"));
}
fn hand_d3(b: &RecordBatch, sel: &mut Vec<u32>) {
    let upper = DICT_WORD.to_uppercase();
    hand_per_value(b, sel, |v| v.to_uppercase() == upper);
}
fn arrow_d1(b: &RecordBatch, sel: &mut Vec<u32>) {
    let scalar = arrow::array::Scalar::new(StringArray::from(vec![DICT_WORD]));
    let mask = arrow::compute::kernels::cmp::eq(dict_of(b), &scalar).unwrap();
    mask_to_selection(&mask, sel);
}
fn arrow_d2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let pattern = arrow::array::Scalar::new(StringArray::from(vec!["%ab%"]));
    let mask = arrow::compute::kernels::comparison::like(dict_of(b), &pattern).unwrap();
    mask_to_selection(&mask, sel);
}
fn arrow_d3(b: &RecordBatch, sel: &mut Vec<u32>) {
    let d = dict_of(b);
    let upper = map_strings(d.values().as_string::<i32>(), str::to_uppercase);
    let scalar = arrow::array::Scalar::new(StringArray::from(vec![DICT_WORD.to_uppercase()]));
    let per_value = arrow::compute::kernels::cmp::eq(&upper, &scalar).unwrap();
    let mask = arrow::compute::take(&per_value, d.keys(), None).unwrap();
    mask_to_selection(mask.as_boolean(), sel);
}
fn hand_u1(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "plain");
    select(sel, s.len(), |i| s.value(i) == DICT_WORD);
}
fn hand_u2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "plain");
    let finder = memchr::memmem::Finder::new(b"ab");
    select(sel, s.len(), |i| {
        finder.find(s.value(i).as_bytes()).is_some()
    });
}
fn hand_u3(b: &RecordBatch, sel: &mut Vec<u32>) {
    let s = strs(b, "plain");
    let upper = DICT_WORD.to_uppercase();
    select(sel, s.len(), |i| s.value(i).to_uppercase() == upper);
}
fn arrow_u1(b: &RecordBatch, sel: &mut Vec<u32>) {
    eq_scalar(strs(b, "plain"), DICT_WORD, sel);
}
fn arrow_u2(b: &RecordBatch, sel: &mut Vec<u32>) {
    let pattern = arrow::array::Scalar::new(StringArray::from(vec!["%ab%"]));
    let mask = arrow::compute::kernels::comparison::like(strs(b, "plain"), &pattern).unwrap();
    mask_to_selection(&mask, sel);
}
fn arrow_u3(b: &RecordBatch, sel: &mut Vec<u32>) {
    let upper = map_strings(strs(b, "plain"), str::to_uppercase);
    eq_scalar(&upper, &DICT_WORD.to_uppercase(), sel);
}

fn dictionary_cases() -> Vec<Case> {
    use Hand::Filter as F;
    let case = |id, sql, hand, arrow, reads| Case {
        id,
        sql,
        tpch: false,
        hand: F(hand),
        arrow: Some(F(arrow)),
        arrow_mask: None,
        reads,
    };
    vec![
        case("D1", "dict = 'kqzxwvut'", hand_d1, arrow_d1, &["dict"]),
        case("D2", "dict LIKE '%ab%'", hand_d2, arrow_d2, &["dict"]),
        case(
            "D3",
            "upper(dict) = 'KQZXWVUT'",
            hand_d3,
            arrow_d3,
            &["dict"],
        ),
        case("U1", "plain = 'kqzxwvut'", hand_u1, arrow_u1, &["plain"]),
        case("U2", "plain LIKE '%ab%'", hand_u2, arrow_u2, &["plain"]),
        case(
            "U3",
            "upper(plain) = 'KQZXWVUT'",
            hand_u3,
            arrow_u3,
            &["plain"],
        ),
    ]
}

// ---------------------------------------------------------------- the three implementations

/// Evaluates one case one way over a batch, producing the case's output.
struct Runner {
    jit_filter: Option<Filter>,
    jit_project: Option<Projector>,
    typed: TypedExpr,
    is_filter: bool,
}

/// The kernels the runners time: `O3`'s, the kernel an expression runs once hot
/// (the default cache compiles `Quick` first and upgrades it after 4 Mi rows; a
/// cache that starts with `O3` keeps the upgrade's background compile out of the
/// measurements).
fn steady_cache() -> &'static Arc<KernelCache> {
    static CACHE: std::sync::OnceLock<Arc<KernelCache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| Arc::new(KernelCache::new(1024, 256 << 20).with_pipeline(Pipeline::O3)))
}

impl Runner {
    fn new(case: &Case, schema: &Schema) -> Runner {
        let is_filter = matches!(case.hand, Hand::Filter(_));
        let purpose = if is_filter {
            Purpose::Predicate
        } else {
            Purpose::Projection
        };
        let prepared = Prepared::parse(case.sql, schema, purpose).unwrap();
        let cache = steady_cache();
        Runner {
            jit_filter: is_filter.then(|| Filter::from_prepared(&prepared, cache).unwrap()),
            jit_project: (!is_filter).then(|| {
                Projector::from_prepared(schema, std::slice::from_ref(&prepared), cache).unwrap()
            }),
            typed: prepared.optimized().clone(),
            is_filter,
        }
    }

    fn jit(&self, batch: &RecordBatch, sel: &mut SelectionVector) -> usize {
        match (&self.jit_filter, &self.jit_project) {
            (Some(f), _) => {
                f.evaluate_into(batch, sel).unwrap();
                sel.len()
            }
            (_, Some(p)) => p.evaluate(batch).unwrap()[0].len(),
            _ => unreachable!(),
        }
    }

    fn interpreted(&self, batch: &RecordBatch, sel: &mut Vec<u32>) -> usize {
        let decoded;
        let batch = if batch
            .schema()
            .fields()
            .iter()
            .any(|f| f.data_type() == &dictionary_type())
        {
            decoded = decode_dictionaries(batch);
            &decoded
        } else {
            batch
        };
        let out = interpret(&self.typed, batch).unwrap();
        if self.is_filter {
            mask_to_selection(out.as_boolean(), sel);
            sel.len()
        } else {
            out.len()
        }
    }
}

/// `batch` with its dictionary columns decoded (the interpreter reads the values'
/// type, as the binder types the column).
fn decode_dictionaries(batch: &RecordBatch) -> RecordBatch {
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| match c.data_type() {
            DataType::Dictionary(_, v) => cast(c, v).unwrap(),
            _ => c.clone(),
        })
        .collect();
    let fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .zip(&columns)
        .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), f.is_nullable()))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn hand(case: &Case, batch: &RecordBatch, sel: &mut Vec<u32>) -> usize {
    run_hand(&case.hand, batch, sel)
}

/// Whether `case` has an arrow-rs implementation.
fn has_arrow(case: &Case) -> bool {
    case.arrow.is_some() || case.arrow_mask.is_some()
}

/// The arrow-rs implementation of `case` over a batch, producing the JIT's output.
fn run_arrow(case: &Case, batch: &RecordBatch, sel: &mut Vec<u32>) -> usize {
    match (&case.arrow, case.arrow_mask) {
        (Some(arrow), _) => run_hand(arrow, batch, sel),
        (None, Some(mask)) => {
            mask_to_selection(&mask(batch), sel);
            sel.len()
        }
        (None, None) => unreachable!("{} has no arrow-rs implementation", case.id),
    }
}

fn run_hand(hand: &Hand, batch: &RecordBatch, sel: &mut Vec<u32>) -> usize {
    match *hand {
        Hand::Filter(f) => {
            f(batch, sel);
            sel.len()
        }
        Hand::Project(p) => p(batch).len(),
    }
}

/// Sums the columns an expression reads: the memory-bandwidth floor for streaming.
fn probe(batch: &RecordBatch, columns: &[&str]) -> f64 {
    let mut sum = 0.0;
    for name in columns {
        let c = batch.column_by_name(name).unwrap();
        sum += match c.data_type() {
            DataType::Float64 => c.as_primitive::<Float64Type>().values().iter().sum::<f64>(),
            DataType::Decimal128(..) => c
                .as_primitive::<Decimal128Type>()
                .values()
                .iter()
                .map(|&v| v as f64)
                .sum(),
            DataType::Decimal64(..) => c
                .as_primitive::<Decimal64Type>()
                .values()
                .iter()
                .map(|&v| v as f64)
                .sum(),
            DataType::Int64 => c
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .map(|&v| v as f64)
                .sum(),
            DataType::Int32 => c
                .as_primitive::<Int32Type>()
                .values()
                .iter()
                .map(|&v| v as f64)
                .sum(),
            DataType::Date32 => c
                .as_primitive::<Date32Type>()
                .values()
                .iter()
                .map(|&v| v as f64)
                .sum(),
            DataType::Utf8 => {
                let s = c.as_string::<i32>();
                let o: i64 = s.value_offsets().iter().map(|&v| v as i64).sum();
                let d: u64 = s.values().iter().map(|&v| v as u64).sum();
                (o as u64 + d) as f64
            }
            DataType::Dictionary(_, _) => {
                let d = c.as_dictionary::<Int32Type>();
                d.keys().values().iter().map(|&k| k as f64).sum()
            }
            other => panic!("probe: {other}"),
        };
    }
    sum
}

fn check_agreement(case: &Case, runner: &Runner, batch: &RecordBatch) {
    let mut sel = SelectionVector::new(SelectionMode::UInt32);
    let mut v = Vec::new();
    let (j, i, h) = (
        runner.jit(batch, &mut sel),
        runner.interpreted(batch, &mut v),
        hand(case, batch, &mut v),
    );
    assert_eq!(j, i, "{}: jit and interpreter disagree", case.id);
    assert_eq!(j, h, "{}: jit and the hand-written loop disagree", case.id);
    if let Some(mask) = case.arrow_mask {
        let filter = runner.jit_filter.as_ref().expect("a mask for a filter");
        let jit_mask = filter.evaluate_mask(batch).unwrap();
        let arrow = mask(batch);
        assert_eq!(
            jit_mask.true_count(),
            arrow.true_count(),
            "{}: counts",
            case.id
        );
        let mut a = Vec::new();
        mask_to_selection(&arrow, &mut a);
        runner.jit(batch, &mut sel);
        let jit: Vec<u32> = sel.iter().map(|i| i as u32).collect();
        assert_eq!(jit, a, "{}: jit and arrow-rs select other rows", case.id);
    }
    if let Some(arrow) = &case.arrow {
        let a = run_hand(arrow, batch, &mut v);
        assert_eq!(j, a, "{}: jit and arrow-rs disagree", case.id);
        // The string rows compare values too.
        match (&runner.jit_project, &case.hand, arrow) {
            (Some(p), Hand::Project(hand), Hand::Project(arrow)) => {
                let jit = p.evaluate(batch).unwrap().remove(0);
                assert_eq!(jit.as_ref(), hand(batch).as_ref(), "{}: values", case.id);
                assert_eq!(jit.as_ref(), arrow(batch).as_ref(), "{}: values", case.id);
            }
            (Some(_), _, _) => panic!("{}: a projection with a filter's loops", case.id),
            (None, Hand::Filter(hand), Hand::Filter(arrow)) => {
                runner.jit(batch, &mut sel);
                let jit: Vec<u32> = sel.iter().map(|i| i as u32).collect();
                let (mut h, mut a) = (Vec::new(), Vec::new());
                hand(batch, &mut h);
                arrow(batch, &mut a);
                assert_eq!(jit, h, "{}: rows", case.id);
                assert_eq!(jit, a, "{}: rows", case.id);
            }
            _ => panic!("{}: a filter with a projection's loops", case.id),
        }
    }
}

/// Whether criterion's command-line filter (a regex over `group/function`) can select
/// a benchmark of `id`; the data of cases nobody asked for is not generated
/// (`cargo bench --bench expressions -- '/S[0-9]'` runs the string rows alone).
fn wanted(id: &str) -> bool {
    let Some(filter) = std::env::args().skip(1).find(|a| !a.starts_with('-')) else {
        return true;
    };
    let Ok(re) = regex::Regex::new(&filter) else {
        return true;
    };
    ["streaming", "in-cache", "in-cache-distinct"]
        .iter()
        .any(|g| {
            [
                "jit",
                "interpreted",
                "hand",
                "arrow",
                "jit-mask",
                "arrow-mask",
                "bandwidth",
                "hand-copies",
            ]
            .iter()
            .any(|f| re.is_match(&format!("{g}/{id}/{f}")))
        })
}

fn bench_expressions(c: &mut Criterion) {
    let all: Vec<Case> = cases()
        .into_iter()
        .chain(string_cases())
        .chain(function_cases())
        .chain(dictionary_cases())
        .filter(|case| wanted(case.id))
        .collect();
    let synthetic = all.iter().any(|c| !c.tpch).then(synthetic);
    let tpch = all
        .iter()
        .any(|c| c.tpch)
        .then(|| lineitem(Numbers::Double));
    for case in all {
        let data = if case.tpch { &tpch } else { &synthetic };
        let (schema, batches) = data.as_ref().map(|(s, b)| (s, b)).expect("generated above");
        bench_case(c, &case, schema, batches);
    }
}

/// The streaming and in-cache groups of one case over its data.
fn bench_case(c: &mut Criterion, case: &Case, schema: &SchemaRef, batches: &[RecordBatch]) {
    let runner = Runner::new(case, schema);
    check_agreement(case, &runner, &batches[0]);
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();

    let mut g = c.benchmark_group(format!("streaming/{}", case.id));
    g.throughput(Throughput::Elements(rows as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut sel = SelectionVector::new(SelectionMode::UInt32);
    let mut v = Vec::new();
    g.bench_function("jit", |bch| {
        bch.iter(|| {
            batches
                .iter()
                .map(|b| runner.jit(b, &mut sel))
                .sum::<usize>()
        })
    });
    g.bench_function("interpreted", |bch| {
        bch.iter(|| {
            batches
                .iter()
                .map(|b| runner.interpreted(b, &mut v))
                .sum::<usize>()
        })
    });
    g.bench_function("hand", |bch| {
        bch.iter(|| batches.iter().map(|b| hand(case, b, &mut v)).sum::<usize>())
    });
    if has_arrow(case) {
        g.bench_function("arrow", |bch| {
            bch.iter(|| {
                batches
                    .iter()
                    .map(|b| run_arrow(case, b, &mut v))
                    .sum::<usize>()
            })
        });
    }
    if let (Some(arrow_mask), Some(filter)) = (case.arrow_mask, &runner.jit_filter) {
        g.bench_function("jit-mask", |bch| {
            bch.iter(|| {
                batches
                    .iter()
                    .map(|b| filter.evaluate_mask(b).unwrap().true_count())
                    .sum::<usize>()
            })
        });
        g.bench_function("arrow-mask", |bch| {
            bch.iter(|| {
                batches
                    .iter()
                    .map(|b| arrow_mask(b).true_count())
                    .sum::<usize>()
            })
        });
    }
    g.bench_function("bandwidth", |bch| {
        bch.iter(|| batches.iter().map(|b| probe(b, case.reads)).sum::<f64>())
    });
    g.finish();

    let mut g = c.benchmark_group(format!("in-cache/{}", case.id));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in IN_CACHE {
        let batch = first_rows(schema, batches, n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("jit", n), &batch, |bch, b| {
            bch.iter(|| runner.jit(b, &mut sel))
        });
        g.bench_with_input(BenchmarkId::new("interpreted", n), &batch, |bch, b| {
            bch.iter(|| runner.interpreted(b, &mut v))
        });
        g.bench_with_input(BenchmarkId::new("hand", n), &batch, |bch, b| {
            bch.iter(|| hand(case, b, &mut v))
        });
        if has_arrow(case) {
            g.bench_with_input(BenchmarkId::new("arrow", n), &batch, |bch, b| {
                bch.iter(|| run_arrow(case, b, &mut v))
            });
        }
        if let (Some(arrow_mask), Some(filter), 8_192) = (case.arrow_mask, &runner.jit_filter, n) {
            g.bench_with_input(BenchmarkId::new("jit-mask", n), &batch, |bch, b| {
                bch.iter(|| filter.evaluate_mask(b).unwrap().true_count())
            });
            g.bench_with_input(BenchmarkId::new("arrow-mask", n), &batch, |bch, b| {
                bch.iter(|| arrow_mask(b).true_count())
            });
        }
    }
    g.finish();

    // The same batch size, but different batches in turn: a loop that branches on each
    // row (F8's hand-written `&&` and `||`) runs several times faster on one batch
    // repeated than on new rows, as the branch predictor learns the batch's outcomes. Eight copies of one batch (the same rows at other addresses, the same
    // memory as the eight different ones) tell the predictor's share from the cache's.
    // Measured for the main table's rows (F1–P4), the ones the report shows.
    if !MAIN_TABLE.contains(&case.id) {
        return;
    }
    let mut g = c.benchmark_group(format!("in-cache-distinct/{}", case.id));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let n = DISTINCT_ROWS;
    let rows = first_rows(schema, batches, DISTINCT_BATCHES * n);
    let different: Vec<RecordBatch> = (0..DISTINCT_BATCHES)
        .map(|i| rows.slice(i * n, n))
        .collect();
    let copies: Vec<RecordBatch> = (0..DISTINCT_BATCHES)
        .map(|_| concat_batches(schema, &[rows.slice(0, n)]).unwrap())
        .collect();
    g.throughput(Throughput::Elements((DISTINCT_BATCHES * n) as u64));
    g.bench_with_input(BenchmarkId::new("jit", n), &different, |bch, set| {
        bch.iter(|| set.iter().map(|b| runner.jit(b, &mut sel)).sum::<usize>())
    });
    g.bench_with_input(BenchmarkId::new("hand", n), &different, |bch, set| {
        bch.iter(|| set.iter().map(|b| hand(case, b, &mut v)).sum::<usize>())
    });
    g.bench_with_input(BenchmarkId::new("hand-copies", n), &copies, |bch, set| {
        bch.iter(|| set.iter().map(|b| hand(case, b, &mut v)).sum::<usize>())
    });
    g.finish();
}

// ---------------------------------------------------------------- decimals
//
// TPC-H Q6 over lineitem four ways, on the same rows: the DECIMAL(15,2) columns as
// they are (Q6-decimal, `Decimal128`), in Arrow's `Decimal64` (Q6-dec64, as the
// Parquet scan reads them), as DOUBLE (Q6-double, F3's data) and as BIGINT cents
// (Q6-bigint, the speed the decimals aim at). Each also against arrow-rs's comparison
// kernels on the columns' own type (`cmp::gt_eq`/`lt_eq`/`lt` with scalars, `and`,
// then the selection). `cargo bench --bench expressions -- '/Q6-'` runs them alone.

/// Q6 with the discount and quantity bounds in cents (on BIGINT cents columns).
const Q6_CENTS: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                        AND l_discount BETWEEN 5 AND 7 AND l_quantity < 2400";

fn dates(b: &RecordBatch) -> &[i32] {
    b.column_by_name("l_shipdate")
        .unwrap()
        .as_primitive::<Date32Type>()
        .values()
}
fn decimals<'a>(b: &'a RecordBatch, name: &str) -> &'a [i128] {
    b.column_by_name(name)
        .unwrap()
        .as_primitive::<Decimal128Type>()
        .values()
}
fn hand_q6_decimal(b: &RecordBatch, out: &mut Vec<u32>) {
    let d = dates(b);
    let (disc, qty) = (decimals(b, "l_discount"), decimals(b, "l_quantity"));
    let (lo, hi) = (8766, 9131); // 1994-01-01, 1995-01-01
    select(out, d.len(), |i| {
        (d[i] >= lo) & (d[i] < hi) & (disc[i] >= 5) & (disc[i] <= 7) & (qty[i] < 2400)
    });
}
fn hand_q6_cents(b: &RecordBatch, out: &mut Vec<u32>) {
    hand_q6_i64(b, out, i64s);
}
fn hand_q6_dec64(b: &RecordBatch, out: &mut Vec<u32>) {
    hand_q6_i64(b, out, |b, name| {
        b.column_by_name(name)
            .unwrap()
            .as_primitive::<Decimal64Type>()
            .values()
    });
}
/// Q6 on 64-bit unscaled values in cents, which `values` reads from a column.
fn hand_q6_i64(
    b: &RecordBatch,
    out: &mut Vec<u32>,
    values: for<'a> fn(&'a RecordBatch, &str) -> &'a [i64],
) {
    let d = dates(b);
    let (disc, qty) = (values(b, "l_discount"), values(b, "l_quantity"));
    let (lo, hi) = (8766, 9131);
    select(out, d.len(), |i| {
        (d[i] >= lo) & (d[i] < hi) & (disc[i] >= 5) & (disc[i] <= 7) & (qty[i] < 2400)
    });
}

/// Q6 with arrow-rs kernels: `bounds` are the discount's low and high and the
/// quantity's bound, one-element arrays of the columns' type.
fn arrow_q6(b: &RecordBatch, sel: &mut Vec<u32>, bounds: [ArrayRef; 3]) {
    use arrow::compute::kernels::{boolean::and, cmp};
    let date = b.column_by_name("l_shipdate").unwrap();
    let disc = b.column_by_name("l_discount").unwrap();
    let qty = b.column_by_name("l_quantity").unwrap();
    let day = |v: i32| Scalar::new(Date32Array::from(vec![v]));
    let [lo, hi, q] = bounds.map(Scalar::new);
    let mask = [
        cmp::lt(date, &day(9131)),
        cmp::gt_eq(disc, &lo),
        cmp::lt_eq(disc, &hi),
        cmp::lt(qty, &q),
    ]
    .into_iter()
    .fold(cmp::gt_eq(date, &day(8766)).unwrap(), |m, x| {
        and(&m, &x.unwrap()).unwrap()
    });
    mask_to_selection(&mask, sel);
}
fn arrow_q6_decimal(b: &RecordBatch, sel: &mut Vec<u32>) {
    let d = |v: i128| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(vec![v])
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    };
    arrow_q6(b, sel, [d(5), d(7), d(2400)]);
}
fn arrow_q6_dec64(b: &RecordBatch, sel: &mut Vec<u32>) {
    let d = |v: i64| -> ArrayRef {
        Arc::new(
            Decimal64Array::from(vec![v])
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    };
    arrow_q6(b, sel, [d(5), d(7), d(2400)]);
}
fn arrow_q6_double(b: &RecordBatch, sel: &mut Vec<u32>) {
    let f = |v: f64| -> ArrayRef { Arc::new(Float64Array::from(vec![v])) };
    arrow_q6(b, sel, [f(0.05), f(0.07), f(24.0)]);
}
fn arrow_q6_cents(b: &RecordBatch, sel: &mut Vec<u32>) {
    let i = |v: i64| -> ArrayRef { Arc::new(Int64Array::from(vec![v])) };
    arrow_q6(b, sel, [i(5), i(7), i(2400)]);
}

// TPC-H Q1's `sum_charge` projection over DECIMAL(15,2) columns (DuckDB's result
// type: DECIMAL(18,6), computed in 64 bits) and over the same values declared
// DECIMAL(20,2) (DECIMAL(38,6), computed in 128 bits with checked multiplies),
// against a fused loop and arrow-rs's decimal kernels (`numeric::sub` and `mul`, which
// compute in i128 with overflow checks). `cargo bench --bench expressions -- '/Q1-'`.

const Q1_CHARGE: &str = "l_extendedprice * (1 - l_discount) * (1 + l_tax)";

/// Q1's charge from the three columns' unscaled values (scale 2), at scale 6.
fn charge_values(b: &RecordBatch) -> Vec<i128> {
    let (p, d, t) = (
        decimals(b, "l_extendedprice"),
        decimals(b, "l_discount"),
        decimals(b, "l_tax"),
    );
    (0..p.len())
        .map(|i| p[i] * (100 - d[i]) * (100 + t[i]))
        .collect()
}
fn charge(values: Vec<i128>, p: u8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(values)
            .with_precision_and_scale(p, 6)
            .unwrap(),
    )
}
fn hand_q1_decimal(b: &RecordBatch) -> ArrayRef {
    // In 64 bits, as DECIMAL(18,6) allows.
    let (p, d, t) = (
        decimals(b, "l_extendedprice"),
        decimals(b, "l_discount"),
        decimals(b, "l_tax"),
    );
    let v: Vec<i128> = (0..p.len())
        .map(|i| i128::from((p[i] as i64) * (100 - d[i] as i64) * (100 + t[i] as i64)))
        .collect();
    charge(v, 18)
}
fn hand_q1_wide(b: &RecordBatch) -> ArrayRef {
    charge(charge_values(b), 38)
}
/// Q1's charge with arrow-rs's decimal kernels, as DECIMAL(p, 6).
fn arrow_q1(b: &RecordBatch, p: u8) -> ArrayRef {
    use arrow::compute::kernels::numeric::{add, mul, sub};
    let col = |n: &str| b.column_by_name(n).unwrap();
    let one = Scalar::new(
        Decimal128Array::from(vec![100])
            .with_precision_and_scale(3, 2)
            .unwrap(),
    );
    let net = mul(
        col("l_extendedprice"),
        &sub(&one, col("l_discount")).unwrap(),
    )
    .unwrap();
    let charged = mul(&net, &add(&one, col("l_tax")).unwrap()).unwrap();
    let values = charged.as_primitive::<Decimal128Type>().clone();
    Arc::new(values.with_precision_and_scale(p, 6).unwrap())
}
fn arrow_q1_decimal(b: &RecordBatch) -> ArrayRef {
    arrow_q1(b, 18)
}
fn arrow_q1_wide(b: &RecordBatch) -> ArrayRef {
    arrow_q1(b, 38)
}

/// The decimal cases, with how each holds the decimal columns.
fn decimal_cases() -> Vec<(Case, Numbers)> {
    use Hand::Filter as F;
    let reads: &[&str] = &["l_shipdate", "l_discount", "l_quantity"];
    let case = |id, sql, hand, arrow| Case {
        id,
        sql,
        tpch: true,
        hand: F(hand),
        arrow: Some(F(arrow)),
        arrow_mask: None,
        reads,
    };
    let charge_reads: &[&str] = &["l_extendedprice", "l_discount", "l_tax"];
    let projection = |id, hand, arrow| Case {
        id,
        sql: Q1_CHARGE,
        tpch: true,
        hand: Hand::Project(hand),
        arrow: Some(Hand::Project(arrow)),
        arrow_mask: None,
        reads: charge_reads,
    };
    vec![
        (
            case("Q6-decimal", Q6, hand_q6_decimal, arrow_q6_decimal),
            Numbers::Decimal,
        ),
        (
            case("Q6-dec64", Q6, hand_q6_dec64, arrow_q6_dec64),
            Numbers::Decimal64,
        ),
        (
            case("Q6-double", Q6, hand_f3, arrow_q6_double),
            Numbers::Double,
        ),
        (
            case("Q6-bigint", Q6_CENTS, hand_q6_cents, arrow_q6_cents),
            Numbers::Cents,
        ),
        (
            projection("Q1-decimal", hand_q1_decimal, arrow_q1_decimal),
            Numbers::Decimal,
        ),
        (
            projection("Q1-wide", hand_q1_wide, arrow_q1_wide),
            Numbers::Wide,
        ),
    ]
}

/// The decimal cases, each on its own copy of lineitem (generated one at a time:
/// only the columns the case reads are kept).
fn bench_decimals(c: &mut Criterion) {
    for (case, numbers) in decimal_cases() {
        if !wanted(case.id) {
            continue;
        }
        let (schema, batches) = lineitem(numbers);
        let keep: Vec<usize> = case
            .reads
            .iter()
            .map(|n| schema.index_of(n).unwrap())
            .collect();
        let schema = Arc::new(schema.project(&keep).unwrap());
        let batches: Vec<RecordBatch> = batches.iter().map(|b| b.project(&keep).unwrap()).collect();
        bench_case(c, &case, &schema, &batches);
    }
}

// ---------------------------------------------------------------- compile cost and cache hits

/// Median compile phases of F1, F3, F8 and P4, written for the report (criterion
/// measures the totals).
fn bench_compile(c: &mut Criterion) {
    let syn = synthetic_schema_only();
    let tpch = lineitem_schema_only();
    let list = [
        ("F1", "a > 50.0", &syn, true),
        ("F3", Q6, &tpch, true),
        ("F8", Q19, &tpch, true),
        (
            "P4",
            "l_extendedprice * (1 - l_discount) * (1 + l_tax)",
            &tpch,
            false,
        ),
    ];
    let mut report = String::from("{");
    let mut g = c.benchmark_group("compile");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    for (i, (id, sql, schema, is_filter)) in list.iter().enumerate() {
        let mut phases: Vec<[f64; 5]> = Vec::new();
        for _ in 0..25 {
            let cache = Arc::new(KernelCache::new(4, 1 << 30));
            let t = Instant::now();
            let expr = parse_expr(sql).unwrap();
            let parse = t.elapsed();
            let t = Instant::now();
            let purpose = if *is_filter {
                Purpose::Predicate
            } else {
                Purpose::Projection
            };
            let prepared = Prepared::new(&expr, schema, purpose).unwrap();
            let bind_opt = t.elapsed();
            let timings = if *is_filter {
                Filter::from_prepared(&prepared, &cache)
                    .unwrap()
                    .compile_timings()
            } else {
                Projector::from_prepared(schema, std::slice::from_ref(&prepared), &cache)
                    .unwrap()
                    .compile_timings()
            };
            phases.push([
                parse.as_secs_f64(),
                bind_opt.as_secs_f64(),
                timings.ir.as_secs_f64(),
                timings.optimize.as_secs_f64(),
                timings.codegen.as_secs_f64(),
            ]);
        }
        let median = |k: usize| {
            let mut v: Vec<f64> = phases.iter().map(|p| p[k]).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2] * 1e9
        };
        report.push_str(&format!(
            "{}\"{id}\": {{\"parse\": {}, \"bind_optimize\": {}, \"ir\": {}, \"optimize\": {}, \"codegen\": {}}}",
            if i > 0 { ", " } else { "" },
            median(0),
            median(1),
            median(2),
            median(3),
            median(4)
        ));
        g.bench_function(*id, |bch| {
            bch.iter(|| {
                let cache = Arc::new(KernelCache::new(4, 1 << 30));
                let expr = parse_expr(sql).unwrap();
                if *is_filter {
                    black_box(Filter::with_cache(schema, &expr, &cache).unwrap());
                } else {
                    black_box(Projector::with_cache(schema, &[expr], &cache).unwrap());
                }
            })
        });
    }
    g.finish();
    report.push('}');
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("compile_phases.json"), report).unwrap();

    // A cache hit: the whole Filter::new (parse, bind, optimize, lower, look up), and
    // from a parsed expression.
    let mut g = c.benchmark_group("cache-hit");
    Filter::new(&tpch, Q6).unwrap();
    let expr = parse_expr(Q6).unwrap();
    g.bench_function("Filter::new", |bch| {
        bch.iter(|| black_box(Filter::new(&tpch, Q6).unwrap()))
    });
    g.bench_function("Filter::from_expr", |bch| {
        bch.iter(|| black_box(Filter::from_expr(&tpch, &expr).unwrap()))
    });
    g.finish();
}

fn synthetic_schema_only() -> Schema {
    Schema::new(vec![Field::new("a", DataType::Float64, false)])
}

fn lineitem_schema_only() -> Schema {
    Schema::new(vec![
        Field::new("l_quantity", DataType::Float64, false),
        Field::new("l_extendedprice", DataType::Float64, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_tax", DataType::Float64, false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_shipinstruct", DataType::Utf8, false),
        Field::new("l_shipmode", DataType::Utf8, false),
    ])
}

// ---------------------------------------------------------------- string layouts

/// The predicates measured on the same strings in each layout (`V1`…`V4`).
const LAYOUT_CASES: [(&str, &str); 4] = [
    ("V1", "s = 'abc'"),
    ("V2", "s LIKE 'ab%'"),
    ("V3", "s < 'm'"),
    ("V4", "s LIKE '%ab%'"),
];

/// `ROWS` strings in 8,192-row batches of one column `s` in each layout: lengths
/// uniform in 3..=24 bytes (so about half are longer than the 12 bytes a view holds
/// inline), letters `a`…`p`, one row in 64 exactly `abc` (seed 44). The same values
/// in every layout.
fn layout_data() -> Vec<(DataType, Vec<RecordBatch>)> {
    let mut r = Rng(44);
    let mut utf8 = Vec::new();
    let mut start = 0;
    while start < ROWS {
        let n = BATCH.min(ROWS - start);
        let values = StringArray::from_iter_values((0..n).map(|_| {
            if r.next() % 64 == 0 {
                return "abc".to_string();
            }
            let len = 3 + (r.next() % 22) as usize;
            (0..len)
                .map(|_| (b'a' + (r.next() % 16) as u8) as char)
                .collect::<String>()
        }));
        utf8.push(Arc::new(values) as ArrayRef);
        start += n;
    }
    [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View]
        .into_iter()
        .map(|t| {
            let schema = Arc::new(Schema::new(vec![Field::new("s", t.clone(), false)]));
            let batches = utf8
                .iter()
                .map(|a| RecordBatch::try_new(schema.clone(), vec![cast(a, &t).unwrap()]).unwrap())
                .collect();
            (t, batches)
        })
        .collect()
}

/// What a Rust user writes with arrow-rs for a `LAYOUT_CASES` predicate on `s` (of
/// any layout): the kernel with a scalar of the column's type, a mask.
fn arrow_layout(id: &str, s: &ArrayRef) -> BooleanArray {
    use arrow::compute::kernels::{cmp, comparison};
    let scalar = |v: &str| {
        let one: ArrayRef = Arc::new(StringArray::from(vec![v]));
        arrow::array::Scalar::new(cast(&one, s.data_type()).unwrap())
    };
    match id {
        "V1" => cmp::eq(s, &scalar("abc")),
        "V2" => comparison::like(s, &scalar("ab%")),
        "V3" => cmp::lt(s, &scalar("m")),
        _ => comparison::like(s, &scalar("%ab%")),
    }
    .unwrap()
}

/// The string predicates on `Utf8`, `LargeUtf8` and `Utf8View` columns holding the
/// same strings: the JIT's mask and its count against arrow-rs's kernel's on the
/// same array (`cargo bench --bench expressions -- layouts/`).
fn bench_layouts(c: &mut Criterion) {
    let wanted = |id: &str, layout: &str| {
        let Some(filter) = std::env::args().skip(1).find(|a| !a.starts_with('-')) else {
            return true;
        };
        let Ok(re) = regex::Regex::new(&filter) else {
            return true;
        };
        ["jit", "arrow"]
            .iter()
            .any(|f| re.is_match(&format!("layouts/{id}/{layout}/{f}")))
    };
    let name = |t: &DataType| match t {
        DataType::Utf8 => "utf8",
        DataType::LargeUtf8 => "large",
        _ => "view",
    };
    let any = LAYOUT_CASES.iter().any(|(id, _)| {
        [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View]
            .iter()
            .any(|t| wanted(id, name(t)))
    });
    if !any {
        return;
    }
    let data = layout_data();
    for (id, sql) in LAYOUT_CASES {
        for (t, batches) in &data {
            let layout = name(t);
            if !wanted(id, layout) {
                continue;
            }
            let filter = Filter::new(&batches[0].schema(), sql).unwrap();
            let jit_count = |b: &RecordBatch| filter.evaluate_mask(b).unwrap().true_count();
            let arrow_count = |b: &RecordBatch| arrow_layout(id, b.column(0)).true_count();
            let total: usize = batches.iter().map(jit_count).sum();
            assert_eq!(
                total,
                batches.iter().map(arrow_count).sum::<usize>(),
                "{id} on {layout}: the JIT and arrow-rs disagree"
            );
            // Counting ran the kernel over enough rows to upgrade it: time the
            // upgraded kernel, not the compile.
            filter.wait_for_kernel();
            let mut g = c.benchmark_group(format!("layouts/{id}/{layout}"));
            g.throughput(Throughput::Elements(ROWS as u64));
            g.sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
            g.bench_function("jit", |bch| {
                bch.iter(|| batches.iter().map(jit_count).sum::<usize>())
            });
            g.bench_function("arrow", |bch| {
                bch.iter(|| batches.iter().map(arrow_count).sum::<usize>())
            });
            g.finish();
        }
    }
}

criterion_group!(
    benches,
    bench_compile,
    bench_expressions,
    bench_decimals,
    bench_layouts
);
criterion_main!(benches);
