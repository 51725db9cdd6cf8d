//! The same SQL through DataFusion with and without the Broadhead rule, on generated
//! data with NULLs, NaN, negative zeros, extreme integers, Unicode and sliced
//! batches: equal answers (or an error in both), for every translated node kind.

mod common;

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead_datafusion::Semantics;
use common::{plain_context, plan_coverage, rows, with_rule};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// NULL one time in `n`.
    fn null(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// A batch of `rows` rows; `specials` adds NaN, -0.0, infinities and the extreme
/// integers.
fn batch(rng: &mut Rng, rows: usize, specials: bool) -> RecordBatch {
    let words = [
        "abc",
        "a",
        "",
        "  pad  ",
        "héllo",
        "ÉCOLE",
        "straße",
        "banana",
        "Apple",
        "b_c",
        "ab%c",
        "zzz",
        "日本語",
    ];
    let mut a = vec![];
    let mut b = vec![];
    let mut x = vec![];
    let mut y = vec![];
    let mut s = vec![];
    let mut p = vec![];
    let mut d = vec![];
    let mut m = vec![];
    let mut n = vec![];
    let mut w = vec![];
    for _ in 0..rows {
        let special = specials && rng.below(8) == 0;
        a.push((!rng.null(7)).then(|| {
            if special {
                [i32::MAX, i32::MIN, 0, -1][rng.below(4) as usize]
            } else {
                rng.below(2001) as i32 - 1000
            }
        }));
        b.push((!rng.null(9)).then(|| {
            if special {
                [i64::MAX, i64::MIN, 0, -1][rng.below(4) as usize]
            } else {
                rng.below(21) as i64 - 10
            }
        }));
        let float = |rng: &mut Rng| {
            if special {
                [
                    f64::NAN,
                    -f64::NAN,
                    -0.0,
                    0.0,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -1.5,
                ][rng.below(7) as usize]
            } else {
                (rng.below(4001) as f64 - 2000.0) / 100.0
            }
        };
        x.push((!rng.null(6)).then(|| float(rng)));
        y.push((!rng.null(6)).then(|| float(rng)));
        s.push((!rng.null(5)).then(|| words[rng.below(words.len() as u64) as usize].to_string()));
        p.push((!rng.null(4)).then(|| rng.below(2) == 0));
        d.push((!rng.null(8)).then(|| rng.below(20_000) as i32));
        m.push((!rng.null(6)).then(|| {
            if special {
                // The extremes of DECIMAL(15,2): products beyond 18 digits.
                [999_999_999_999_999, -999_999_999_999_999, 0][rng.below(3) as usize]
            } else {
                rng.below(2_000_001) as i128 - 1_000_000
            }
        }));
        // A discount: 0.00 to 0.10, as TPC-H's.
        n.push((!rng.null(7)).then(|| rng.below(11) as i128));
        // DECIMAL(30,4): values beyond 64 bits.
        w.push((!rng.null(6)).then(|| {
            let big = (rng.below(1 << 40) as i128) * 1_000_000_000_000_000;
            if rng.below(2) == 0 {
                big
            } else {
                -big - rng.below(10_000) as i128
            }
        }));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(a)),
        Arc::new(Int64Array::from(b)),
        Arc::new(Float64Array::from(x)),
        Arc::new(Float64Array::from(y)),
        Arc::new(StringArray::from(s)),
        Arc::new(BooleanArray::from(p)),
        Arc::new(Date32Array::from(d)),
        Arc::new(
            Decimal128Array::from(m)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal128Array::from(n)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal128Array::from(w)
                .with_precision_and_scale(30, 4)
                .unwrap(),
        ),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("y", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("p", DataType::Boolean, true),
        Field::new("d", DataType::Date32, true),
        Field::new("m", DataType::Decimal128(15, 2), true),
        Field::new("n", DataType::Decimal128(15, 2), true),
        Field::new("w", DataType::Decimal128(30, 4), true),
    ]))
}

/// Table `t`: a batch without special values, one with them, and slices (non-zero
/// offsets) of both.
fn context() -> SessionContext {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let plain = batch(&mut rng, 1000, false);
    let special = batch(&mut rng, 1000, true);
    let batches = vec![
        plain.clone(),
        special.clone(),
        plain.slice(3, 500),
        special.slice(77, 333),
    ];
    let ctx = plain_context();
    let table = MemTable::try_new(schema(), vec![batches]).unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    ctx
}

/// (SQL, whether the rule compiles part of it with DataFusion semantics).
const QUERIES: &[(&str, bool)] = &[
    // Filters: AND, OR, NOT, comparisons of every type.
    ("SELECT a, b FROM t WHERE a > 10 AND b < 5", true),
    ("SELECT a FROM t WHERE NOT (a = 5) OR s IS NULL", true),
    ("SELECT a FROM t WHERE a <> b AND a >= -3 AND b <= 7", true),
    ("SELECT a FROM t WHERE p", false),
    (
        "SELECT a FROM t WHERE p IS NOT DISTINCT FROM true OR a IS DISTINCT FROM 3",
        true,
    ),
    ("SELECT x FROM t WHERE x > 0.5", true),
    ("SELECT x FROM t WHERE x = 0.0", true),
    ("SELECT x, y FROM t WHERE x < y", true),
    ("SELECT x, y FROM t WHERE x = y OR x >= 'NaN'::double", true),
    ("SELECT s FROM t WHERE s = 'abc' OR s > 'b'", true),
    (
        "SELECT d FROM t WHERE d >= DATE '1990-01-01' AND d < DATE '2010-01-01'",
        true,
    ),
    ("SELECT m FROM t WHERE m > 10.50 AND m <= 5000", true),
    // IN lists, LIKE.
    (
        "SELECT a FROM t WHERE a IN (1, 2, 3, 500) OR b NOT IN (1, 2)",
        true,
    ),
    ("SELECT a FROM t WHERE a IN (1, NULL)", true),
    ("SELECT a FROM t WHERE a NOT IN (1, NULL)", true),
    ("SELECT x FROM t WHERE x IN (0.0, 1.5, -1.5)", true),
    ("SELECT s FROM t WHERE s IN ('abc', 'héllo', '')", true),
    (
        "SELECT s FROM t WHERE s LIKE 'a%' OR s LIKE '%ll_' OR s NOT LIKE '%e%'",
        true,
    ),
    ("SELECT s FROM t WHERE s ILIKE 'A%'", false),
    // Arithmetic, integer overflow (DataFusion wraps: the batch is evaluated again).
    ("SELECT a, b FROM t WHERE a + b > 100", true),
    ("SELECT a + b, a - b, a * b, -a, -b FROM t", true),
    ("SELECT b * 2, b + 9223372036854775807 FROM t", true),
    ("SELECT a / 3, a % 7, b / -2, b % 4 FROM t", true),
    ("SELECT a / b FROM t", true),
    ("SELECT count(*) FROM t WHERE x = 'NaN'::double", false),
    ("SELECT a FROM t WHERE b <> 0 AND a / b > 1", true),
    ("SELECT x + y, x - y, x * y, x / y, x % y, -x FROM t", true),
    ("SELECT x * 2.5 + y FROM t WHERE a > 0", true),
    ("SELECT m + m, m - 1.5, m * 2, m + a FROM t", true),
    // Decimal products: DataFusion's type is wider than Broadhead's (DECIMAL(31,4)
    // against DECIMAL(18,4)); the extremes of m overflow Broadhead's, and those
    // batches are evaluated again by DataFusion.
    (
        "SELECT m * n, m * m, m * (1 - n), m * (1 - n) * (1 + n) FROM t",
        true,
    ),
    (
        "SELECT sum(m * n) FROM t WHERE n BETWEEN 0.05 AND 0.07 AND m < 2400",
        true,
    ),
    // DataFusion divides decimals into decimals, Broadhead into DOUBLE; it makes the
    // 7 of `m % 7` a DECIMAL(20,0), with which Broadhead's remainder is a
    // DECIMAL(22,2), not DataFusion's DECIMAL(15,2): both stay DataFusion's.
    ("SELECT m / 3, m % 7 FROM t", false),
    // Wide decimals (DECIMAL(30,4), values beyond 64 bits): 128-bit code.
    ("SELECT w + w, w - m, w * 2, -w, abs(w) FROM t", true),
    (
        "SELECT w FROM t WHERE w > 12345678901234567890.5 OR w < m",
        true,
    ),
    ("SELECT w * m, w * w FROM t", true),
    (
        "SELECT CASE WHEN n > 0.05 THEN m ELSE w END, coalesce(w, m) FROM t",
        true,
    ),
    (
        "SELECT CAST(w AS DOUBLE), CAST(m AS DECIMAL(10, 1)) FROM t",
        false,
    ),
    // `%` of wide decimals is Broadhead's interpreter's: DataFusion keeps it.
    ("SELECT w % 7 FROM t", false),
    // CASE.
    (
        "SELECT CASE WHEN a > 0 THEN 'pos' WHEN a < 0 THEN 'neg' ELSE 'zero' END FROM t",
        true,
    ),
    ("SELECT CASE a WHEN 1 THEN x WHEN 2 THEN y END FROM t", true),
    (
        "SELECT a FROM t WHERE CASE WHEN a > 0 THEN b ELSE -b END > 3",
        true,
    ),
    ("SELECT CASE WHEN b = 0 THEN 0 ELSE a / b END FROM t", true),
    ("SELECT CASE WHEN x > 0 THEN x ELSE y END FROM t", true),
    // NULL tests and booleans.
    (
        "SELECT a IS NULL, s IS NOT NULL, NOT p, p AND a > 0, p OR a > 0 FROM t",
        true,
    ),
    // Casts.
    (
        "SELECT CAST(a AS DOUBLE), CAST(a AS BIGINT) + b, CAST(m AS DOUBLE) FROM t",
        true,
    ),
    (
        "SELECT CAST(d AS TIMESTAMP), TRY_CAST(a AS BIGINT) * 2 FROM t",
        true,
    ),
    (
        "SELECT CAST(x AS INT) FROM t WHERE x > -100 AND x < 100",
        true,
    ),
    ("SELECT CAST(a AS DECIMAL(12, 2)) + m FROM t", true),
    ("SELECT CAST(a AS DECIMAL(20, 2)) + m FROM t", true),
    // String functions.
    (
        "SELECT upper(s), lower(s), length(s), octet_length(s) FROM t",
        true,
    ),
    (
        "SELECT btrim(s), ltrim(s), rtrim(s), substr(s, 2), substr(s, 2, 3) FROM t",
        true,
    ),
    (
        "SELECT strpos(s, 'a'), left(s, 2), right(s, 2), replace(s, 'a', 'xy') FROM t",
        true,
    ),
    (
        "SELECT concat(s, 'z', s), s || '!', starts_with(s, 'a'), ends_with(s, 'c') FROM t",
        true,
    ),
    (
        "SELECT s FROM t WHERE upper(s) = 'ABC' OR length(s) > 5",
        true,
    ),
    // Math functions (DataFusion's NaN where Broadhead raises a domain error).
    (
        "SELECT abs(x), floor(x), ceil(x), round(x), abs(a) FROM t",
        true,
    ),
    ("SELECT sqrt(x), ln(x), log10(x), exp(x) FROM t", true),
    // Conditional functions.
    (
        "SELECT coalesce(a, CAST(b AS INT), 0), nullif(a, 1), coalesce(s, 'none') FROM t",
        true,
    ),
    (
        "SELECT a FROM t WHERE coalesce(a, 0) > 0 AND nullif(b, 0) IS NOT NULL",
        true,
    ),
];

/// How two answers differ, briefly: errors, row counts, the first differing rows.
fn difference(want: &Result<Vec<String>, String>, got: &Result<Vec<String>, String>) -> String {
    match (want, got) {
        (Ok(w), Ok(g)) => {
            let rows: Vec<_> = w.iter().zip(g).filter(|(a, b)| a != b).take(3).collect();
            format!(
                "{} and {} rows, first differences {rows:?}",
                w.len(),
                g.len()
            )
        }
        (Err(e), Ok(_)) => format!("DataFusion fails ({e}), with the rule not"),
        (Ok(_), Err(e)) => format!("with the rule it fails ({e}), DataFusion not"),
        (Err(a), Err(b)) => format!("both fail ({a} / {b})"),
    }
}

#[tokio::test]
async fn the_rule_never_changes_an_answer() {
    let plain = context();
    let compiled = with_rule(&plain, Semantics::DataFusion);
    let mut failures = vec![];
    for (sql, translated) in QUERIES {
        let want = rows(&plain, sql).await;
        let got = rows(&compiled, sql).await;
        match (&want, &got) {
            (Ok(w), Ok(g)) if w == g => {}
            (Err(_), Err(_)) => {}
            _ => failures.push(format!("{sql}: {}", difference(&want, &got))),
        }
        let c = plan_coverage(&compiled, sql).await;
        if (c.compiled_operators > 0) != *translated {
            failures.push(format!("{sql}\n  expected compiled: {translated}, got {c}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn broadhead_semantics_is_an_option() {
    let plain = context();
    let compiled = with_rule(&plain, Semantics::Broadhead);
    // The answers that do not depend on the semantics are DataFusion's.
    for (sql, _) in QUERIES {
        let want = rows(&plain, sql).await;
        let got = rows(&compiled, sql).await;
        let differ = [
            "'NaN'::double",
            "x IN (0.0",
            "x = y",
            "x < y",
            "9223372036854775807",
            "a + b",
            "a * b",
            "b * 2",
            "-a",
            "-b",
            "x / y",
            "x % y",
            "sqrt",
            "b <> 0 AND a / b",
            "CAST(x AS INT)",
            "abs(a)",
            "CASE WHEN x > 0",
            "ln(x)",
            "exp(x)",
            "log10",
            "ILIKE",
            "CAST(b AS INT)",
            "CAST(a AS BIGINT) + b",
            // Beyond Broadhead's DECIMAL(18,4), within DataFusion's DECIMAL(31,4).
            "m * m",
        ];
        // Float comparisons differ on NaNs with the sign bit set, which the data has.
        let floats = sql
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "x" || w == "y");
        if floats || differ.iter().any(|d| sql.contains(d)) {
            continue;
        }
        match (&want, &got) {
            (Err(_), Err(_)) => {}
            (Ok(w), Ok(g)) if w == g => {}
            _ => panic!("{sql}: {}", difference(&want, &got)),
        }
    }
    // Errors only for the rows whose value is used.
    let guarded = rows(&compiled, "SELECT a, b FROM t WHERE b <> 0 AND a / b > 1").await;
    assert!(guarded.is_ok(), "{guarded:?}");
    let guarded_case = rows(
        &compiled,
        "SELECT CASE WHEN b = 0 THEN 0 ELSE a / b END FROM t",
    )
    .await;
    assert!(guarded_case.is_ok(), "{guarded_case:?}");
    // Overflow is an error, where DataFusion wraps.
    let overflow = rows(&compiled, "SELECT b + 9223372036854775807 FROM t").await;
    assert!(overflow.is_err_and(|e| e.contains("out of range")));
    let wrapped = rows(&plain, "SELECT b + 9223372036854775807 FROM t").await;
    assert!(wrapped.is_ok());
    // A decimal product beyond Broadhead's type (DuckDB's DECIMAL(18,4)) is an error,
    // where DataFusion's DECIMAL(31,4) holds it.
    let product = rows(&compiled, "SELECT m * m FROM t").await;
    assert!(
        product
            .as_ref()
            .is_err_and(|e| e.contains("DECIMAL(18,4) multiplication out of range")),
        "{product:?}"
    );
    assert!(rows(&plain, "SELECT m * m FROM t").await.is_ok());
    // Every NaN equals NaN (Arrow: only one with the same bits; a NaN with its sign
    // bit set is below -inf).
    let nan = "SELECT count(*) FROM t WHERE x = 'NaN'::double";
    let nan_bh = rows(&compiled, nan).await.unwrap();
    let nan_df = rows(&plain, nan).await.unwrap();
    let all_nan = rows(&plain, "SELECT count(*) FROM t WHERE isnan(x)")
        .await
        .unwrap();
    assert_eq!(nan_bh, all_nan);
    assert_ne!(nan_bh, nan_df);
    let division = rows(&compiled, "SELECT x / y FROM t").await;
    assert!(division.is_err_and(|e| e.contains("division by zero")));
}

#[tokio::test]
async fn explain_shows_the_compiled_expressions() {
    let ctx = with_rule(&context(), Semantics::DataFusion);
    let plan = rows(&ctx, "EXPLAIN SELECT a + 1 FROM t WHERE a > 10 AND b < 5")
        .await
        .unwrap();
    let text = plan.join("\n");
    assert!(
        text.contains("FilterExec: broadhead(((a > INTEGER '10') AND (b < 5)))"),
        "{text}"
    );
    assert!(
        text.contains("ProjectionExec: expr=[broadhead((CAST(a AS BIGINT) + 1))"),
        "{text}"
    );
}
