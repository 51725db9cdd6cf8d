//! Strings in each of Arrow's layouts (`Utf8`, `LargeUtf8`, `Utf8View`) are read in
//! place by both back ends: the same predicates and projections over the same
//! values give the same answers in every layout, in the JIT and the interpreter, and
//! those answers are the hand-computed ones below (byte-order comparisons and LIKE
//! as PostgreSQL and DuckDB define them). The values sit at the view boundaries
//! (4, 12 and 13 bytes), include the empty string, non-ASCII text and NULLs, and the
//! arrays are sliced. The expectations of the single-column predicates were checked
//! against DuckDB 2.0 over the same values (byte-order comparisons, `length` in
//! characters, LIKE and ILIKE).

mod common;

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::sql::parse_expr;
use broadhead::{Filter, Projector};

const VALUES: &[Option<&str>] = &[
    Some("skipped by the slice"),
    Some(""),
    Some("a"),
    Some("ab"),
    Some("abc"),
    Some("abcd"),
    None,
    Some("abce"),
    Some("abcdefghijkl"),
    Some("abcdefghijklm"),
    Some("abcdefghijklmnopqrstuvwxyz"),
    Some("abcdefghijklmnopqrstuvwxyZ"),
    Some("zzz"),
    Some("héllo"),
    Some("héllo wörld!"),
    Some("ab€"),
    None,
    Some("m"),
    Some("mississippi river"),
    Some("xyzab"),
    Some("abab abab abab ab"),
];

/// Columns `s` (the layout under test) and `t` (the values reversed, in another
/// layout), sliced past the first row.
fn batch(layout: &DataType, other: &DataType) -> RecordBatch {
    let values: ArrayRef = Arc::new(StringArray::from(VALUES.to_vec()));
    let reversed: Vec<Option<&str>> = VALUES.iter().rev().copied().collect();
    let reversed: ArrayRef = Arc::new(StringArray::from(reversed));
    let schema = Schema::new(vec![
        Field::new("s", layout.clone(), true),
        Field::new("t", other.clone(), true),
    ]);
    let columns = vec![
        common::in_layout(values.as_ref(), layout),
        common::in_layout(reversed.as_ref(), other),
    ];
    RecordBatch::try_new(Arc::new(schema), columns)
        .unwrap()
        .slice(1, VALUES.len() - 1)
}

/// The rows (of the slice) where `pred` holds for (s, t); NULL is not TRUE.
fn expected(pred: impl Fn(&str, &str) -> Option<bool>) -> Vec<usize> {
    let n = VALUES.len();
    (1..n)
        .filter(|&i| match (VALUES[i], VALUES[n - 1 - i]) {
            (Some(s), Some(t)) => pred(s, t) == Some(true),
            _ => false,
        })
        .map(|i| i - 1)
        .collect()
}

/// `pred` of `s` alone, NULL when `s` is.
fn of_s(pred: impl Fn(&str) -> bool) -> Vec<usize> {
    (1..VALUES.len())
        .filter(|&i| VALUES[i].is_some_and(&pred))
        .map(|i| i - 1)
        .collect()
}

fn layouts() -> impl Iterator<Item = (DataType, DataType)> {
    common::STRING_LAYOUTS.iter().flat_map(|a| {
        common::STRING_LAYOUTS
            .iter()
            .map(move |b| (a.clone(), b.clone()))
    })
}

#[test]
fn predicates_agree_in_every_layout() {
    let cases: Vec<(&str, Vec<usize>)> = vec![
        ("s = 'abc'", of_s(|s| s == "abc")),
        ("s = ''", of_s(|s| s.is_empty())),
        ("s = 'abcd'", of_s(|s| s == "abcd")),
        ("s = 'abcdefghijkl'", of_s(|s| s == "abcdefghijkl")),
        ("s = 'abcdefghijklm'", of_s(|s| s == "abcdefghijklm")),
        (
            "s = 'abcdefghijklmnopqrstuvwxyz'",
            of_s(|s| s == "abcdefghijklmnopqrstuvwxyz"),
        ),
        ("s <> 'abc'", of_s(|s| s != "abc")),
        ("s < 'm'", of_s(|s| s < "m")),
        ("s <= 'abcd'", of_s(|s| s <= "abcd")),
        ("s > 'abcdefghijklm'", of_s(|s| s > "abcdefghijklm")),
        ("'abcd' <= s", of_s(|s| s >= "abcd")),
        ("s >= 'héllo'", of_s(|s| s >= "héllo")),
        ("s LIKE 'ab%'", of_s(|s| s.starts_with("ab"))),
        ("s LIKE 'abcd%'", of_s(|s| s.starts_with("abcd"))),
        ("s LIKE 'abcde%'", of_s(|s| s.starts_with("abcde"))),
        (
            "s LIKE 'abcdefghijklm%'",
            of_s(|s| s.starts_with("abcdefghijklm")),
        ),
        ("s LIKE '%ab'", of_s(|s| s.ends_with("ab"))),
        ("s LIKE '%yz'", of_s(|s| s.ends_with("yz"))),
        ("s LIKE '%ab%'", of_s(|s| s.contains("ab"))),
        ("s LIKE '%ö%'", of_s(|s| s.contains('ö'))),
        ("s LIKE 'abcd'", of_s(|s| s == "abcd")),
        (
            "s LIKE 'a_c%'",
            of_s(|s| {
                let c: Vec<char> = s.chars().collect();
                c.len() >= 3 && c[0] == 'a' && c[2] == 'c'
            }),
        ),
        ("s NOT LIKE 'ab%'", of_s(|s| !s.starts_with("ab"))),
        ("upper(s) = 'ABCD'", of_s(|s| s.to_uppercase() == "ABCD")),
        ("upper(s) = 'ABC'", of_s(|s| s.to_uppercase() == "ABC")),
        ("lower(s) <> 'xyzab'", of_s(|s| s.to_lowercase() != "xyzab")),
        (
            "lower(s) = 'abcdefghijklmnopqrstuvwxyz'",
            of_s(|s| s.to_lowercase() == "abcdefghijklmnopqrstuvwxyz"),
        ),
        ("upper(s) = 'HÉLLO'", of_s(|s| s.to_uppercase() == "HÉLLO")),
        ("upper(s) = 'AB€'", of_s(|s| s.to_uppercase() == "AB€")),
        (
            "s ILIKE 'AB%'",
            of_s(|s| s.to_lowercase().starts_with("ab")),
        ),
        (
            "s ILIKE '%WÖRLD%'",
            of_s(|s| s.to_lowercase().contains("wörld")),
        ),
        (
            "s IN ('abc', 'abcdefghijklm', 'zzz', '')",
            of_s(|s| ["abc", "abcdefghijklm", "zzz", ""].contains(&s)),
        ),
        // Longer than IN_EQUALITIES_MAX: the set helper rather than equalities.
        (
            "s IN ('abc', 'abcdefghijklm', 'zzz', '', 'héllo')",
            of_s(|s| ["abc", "abcdefghijklm", "zzz", "", "héllo"].contains(&s)),
        ),
        (
            "s NOT IN ('abc', 'abcd')",
            of_s(|s| s != "abc" && s != "abcd"),
        ),
        ("length(s) = 5", of_s(|s| s.chars().count() == 5)),
        ("length(s) > 12", of_s(|s| s.chars().count() > 12)),
        ("s IS NULL", vec![5, 15]),
        (
            "upper(s) LIKE 'AB%'",
            of_s(|s| s.to_uppercase().starts_with("AB")),
        ),
        (
            "substr(s, 2, 3) = 'bcd'",
            of_s(|s| s.get(1..4) == Some("bcd")),
        ),
        ("s || 'x' = 'abx'", of_s(|s| s == "ab")),
    ];
    let pairs: Vec<(&str, Vec<usize>)> = vec![
        ("s = t", expected(|s, t| Some(s == t))),
        ("s < t", expected(|s, t| Some(s < t))),
        ("s >= t", expected(|s, t| Some(s >= t))),
        ("s IS DISTINCT FROM t", {
            let n = VALUES.len();
            (1..n)
                .filter(|&i| VALUES[i] != VALUES[n - 1 - i])
                .map(|i| i - 1)
                .collect()
        }),
        ("CASE WHEN s < 'b' THEN s ELSE t END LIKE 'a%'", {
            let n = VALUES.len();
            (1..n)
                .filter(|&i| {
                    let (s, t) = (VALUES[i], VALUES[n - 1 - i]);
                    let v = if s.is_some_and(|s| s < "b") { s } else { t };
                    v.is_some_and(|v| v.starts_with('a'))
                })
                .map(|i| i - 1)
                .collect()
        }),
    ];
    for (layout, other) in layouts() {
        let batch = batch(&layout, &other);
        let schema = batch.schema();
        for (sql, want) in cases.iter().chain(&pairs) {
            let what = format!("{sql} on {layout} and {other}");
            let filter = Filter::new(&schema, sql).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(filter.is_jit(), "{what} is not compiled");
            let got: Vec<usize> = filter.evaluate(&batch).unwrap().iter().collect();
            assert_eq!(&got, want, "{what}: JIT");
            let mask = filter.evaluate_mask(&batch).unwrap();
            let from_mask: Vec<usize> = (0..mask.len()).filter(|&i| mask.value(i)).collect();
            assert_eq!(&from_mask, want, "{what}: JIT mask");
            let typed = bind_predicate(&parse_expr(sql).unwrap(), &schema).unwrap();
            let interpreted = interpret(&typed, &batch).unwrap();
            let b = interpreted.as_boolean();
            let rows: Vec<usize> = (0..b.len())
                .filter(|&i| b.is_valid(i) && b.value(i))
                .collect();
            assert_eq!(&rows, want, "{what}: interpreter");
        }
    }
}

#[test]
fn projections_keep_a_column_and_compute_utf8() {
    for (layout, other) in layouts() {
        let batch = batch(&layout, &other);
        let schema = batch.schema();
        let sql = [
            "s",
            "upper(s)",
            "substr(s, 2, 12)",
            "CASE WHEN s < 'b' THEN s ELSE t END",
            "coalesce(s, t)",
            "length(s)",
            "s || '!'",
        ];
        let projector = Projector::new(&schema, &sql).unwrap();
        let out = projector.evaluate(&batch).unwrap();
        let fields = projector.output_fields();
        // The column comes back as it is, in its own layout, unchanged.
        assert_eq!(fields[0].data_type(), &layout);
        assert_eq!(out[0].data_type(), &layout);
        assert_eq!(out[0].to_data(), batch.column(0).to_data());
        let strings = |a: &ArrayRef| -> Vec<Option<String>> {
            let a = arrow::compute::cast(a, &DataType::Utf8).unwrap();
            a.as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_string))
                .collect()
        };
        let n = VALUES.len();
        let s = |i: usize| VALUES[i + 1];
        let t = |i: usize| VALUES[n - 2 - i];
        let rows = 0..n - 1;
        let want: Vec<Vec<Option<String>>> = vec![
            rows.clone().map(|i| s(i).map(str::to_uppercase)).collect(),
            rows.clone()
                .map(|i| s(i).map(|v| v.chars().skip(1).take(12).collect()))
                .collect(),
            rows.clone()
                .map(|i| match s(i) {
                    Some(v) if v < "b" => Some(v.to_string()),
                    _ => t(i).map(str::to_string),
                })
                .collect(),
            rows.clone()
                .map(|i| s(i).or(t(i)).map(str::to_string))
                .collect(),
            vec![],
            rows.clone()
                .map(|i| s(i).map(|v| format!("{v}!")))
                .collect(),
        ];
        for (k, w) in want.iter().enumerate() {
            let k = k + 1;
            if k == 5 {
                let lengths = out[k].as_primitive::<arrow::datatypes::Int32Type>();
                let expect: Vec<Option<i32>> = rows
                    .clone()
                    .map(|i| s(i).map(|v| v.chars().count() as i32))
                    .collect();
                assert_eq!(lengths.iter().collect::<Vec<_>>(), expect, "{layout}");
                continue;
            }
            assert!(projector.is_jit(k), "{} on {layout}", sql[k]);
            assert_eq!(fields[k].data_type(), &DataType::Utf8, "{}", sql[k]);
            assert_eq!(&strings(&out[k]), w, "{} on {layout}/{other}", sql[k]);
            let typed = bind(&parse_expr(sql[k]).unwrap(), &schema).unwrap();
            let interpreted = interpret(&typed, &batch).unwrap();
            assert_eq!(interpreted.data_type(), &DataType::Utf8, "{}", sql[k]);
            assert_eq!(
                &strings(&interpreted),
                w,
                "{} interpreted on {layout}",
                sql[k]
            );
        }
        // Selected rows: the column is taken in its layout.
        let selection = broadhead::SelectionVector::UInt32(vec![1, 8, 9, 17]);
        let picked = projector.evaluate_selected(&batch, &selection).unwrap();
        assert_eq!(picked[0].data_type(), &layout);
        let expect: Vec<Option<String>> = [1usize, 8, 9, 17]
            .iter()
            .map(|&i| s(i).map(|v| format!("{v}!")))
            .collect();
        assert_eq!(strings(&picked[6]), expect);
    }
}

/// Long strings in many data buffers, sliced at every offset around a block: the
/// JIT's view loader (gathering buffer addresses) agrees with the interpreter.
#[test]
fn views_over_many_buffers_and_slices() {
    let values: Vec<Option<String>> = (0..300)
        .map(|i| match i % 7 {
            0 => None,
            1 => Some(format!("{i}")),
            2 => Some(format!("abcdefghijk{}", i % 10)),
            3 => Some(format!("abcdefghijkl{}", i % 10)),
            _ => Some(format!("ab row {i} of a long value ✓")),
        })
        .collect();
    let utf8: ArrayRef = Arc::new(StringArray::from(values));
    let view = common::in_layout(utf8.as_ref(), &DataType::Utf8View);
    assert!(view.as_string_view().data_buffers().len() > 10);
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8View, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![view]).unwrap();
    let sql = [
        "s LIKE '%7 of%'",
        "s = 'abcdefghijkl3'",
        "s < 'abcdefghijk5'",
        "s LIKE 'ab r%'",
    ];
    for offset in [0, 1, 15, 16, 17, 33] {
        for len in [0, 1, 16, 17, 100, 300 - offset] {
            let part = batch.slice(offset, len.min(300 - offset));
            for text in sql {
                let filter = Filter::new(&schema, text).unwrap();
                let typed = bind_predicate(&parse_expr(text).unwrap(), &schema).unwrap();
                let b = interpret(&typed, &part).unwrap();
                let b = b.as_boolean();
                let want: Vec<u32> = (0..b.len() as u32)
                    .filter(|&i| b.is_valid(i as usize) && b.value(i as usize))
                    .collect();
                let got: Vec<u32> = filter
                    .evaluate(&part)
                    .unwrap()
                    .iter()
                    .map(|i| i as u32)
                    .collect();
                assert_eq!(got, want, "{text} at {offset}+{len}");
            }
            let projector = Projector::new(&schema, &["substr(s, 1, 14)", "s"]).unwrap();
            let out = projector.evaluate(&part).unwrap();
            let want =
                arrow::compute::cast(&part.column(0).slice(0, part.num_rows()), &DataType::Utf8)
                    .unwrap();
            let want: Vec<Option<String>> = want
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(|v| v.chars().take(14).collect()))
                .collect();
            let got: Vec<Option<String>> = out[0]
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_string))
                .collect();
            assert_eq!(got, want, "substr at {offset}+{len}");
        }
    }
}

/// The kernel reads the first eight bytes at a row's offset only where they are
/// inside the data buffer: short values at the end of the buffer (and of a slice)
/// are decided by the helper, and every layout agrees with the interpreter.
#[test]
fn short_values_at_the_end_of_the_data() {
    let values: Vec<Option<&str>> = ["abcd", "ab", "x", "abc", "a", "", "ab", "b"]
        .iter()
        .cycle()
        .take(37)
        .map(|&v| (v != "x").then_some(v))
        .collect();
    let utf8: ArrayRef = Arc::new(StringArray::from(values));
    for layout in common::STRING_LAYOUTS {
        let schema = Arc::new(Schema::new(vec![Field::new("s", layout.clone(), true)]));
        let column = common::in_layout(utf8.as_ref(), layout);
        let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
        for (offset, len) in [(0, 37), (0, 33), (5, 17), (31, 6), (36, 1), (30, 2)] {
            let part = batch.slice(offset, len);
            short_predicates_agree_with_the_interpreter(
                &part,
                &format!("{layout} at {offset}+{len}"),
            );
        }
    }
}

/// Columns whose values hold fewer than eight bytes in all: no row's first eight
/// bytes can be read, so the helper decides every row the quick check cannot; and
/// columns of a few bytes more, where only the first rows' can.
#[test]
fn columns_of_under_eight_bytes() {
    let columns: [&[Option<&str>]; 9] = [
        &[Some("a"), Some(""), Some("b")],
        &[Some("ab"), None, Some("")],
        &[Some("abc")],
        &[Some(""), Some("")],
        &[None],
        &[Some("abcd")],
        &[Some("ab"), Some("abc"), Some("b")],
        &[Some("abc"), Some("ab"), Some("ab"), Some("a")],
        &[Some("ab"), Some("abc"), Some("abcd"), Some("ab")],
    ];
    for values in columns {
        let utf8: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
        for layout in common::STRING_LAYOUTS {
            let schema = Arc::new(Schema::new(vec![Field::new("s", layout.clone(), true)]));
            let column = common::in_layout(utf8.as_ref(), layout);
            let batch = RecordBatch::try_new(schema, vec![column]).unwrap();
            short_predicates_agree_with_the_interpreter(&batch, &format!("{values:?} as {layout}"));
        }
    }
}

/// Prefix, equality, ordering and case-mapped equality predicates on `s` select the
/// rows the interpreter finds TRUE in `batch`.
fn short_predicates_agree_with_the_interpreter(batch: &RecordBatch, what: &str) {
    let schema = batch.schema();
    for text in [
        "s LIKE 'a%'",
        "s LIKE 'ab%'",
        "s LIKE 'abcd%'",
        "s = 'ab'",
        "s = ''",
        "s <> 'abc'",
        "s < 'ab'",
        "s >= 'b'",
        "upper(s) = 'AB'",
        "lower(s) <> 'abc'",
    ] {
        let filter = Filter::new(&schema, text).unwrap();
        let typed = bind_predicate(&parse_expr(text).unwrap(), &schema).unwrap();
        let b = interpret(&typed, batch).unwrap();
        let b = b.as_boolean();
        let want: Vec<usize> = (0..b.len())
            .filter(|&i| b.is_valid(i) && b.value(i))
            .collect();
        let got: Vec<usize> = filter.evaluate(batch).unwrap().iter().collect();
        assert_eq!(got, want, "{text} on {what}");
    }
}

/// Equalities with literals of every length up to 24 bytes (the kernel compares the
/// first 20 itself, the helper the rest), against values that differ from the
/// literal in one byte at each position, are a byte longer or shorter, and sit at the
/// very end of the data buffer: the rows equal to the literal, by hand.
#[test]
fn equalities_compare_every_byte_of_long_literals() {
    const TEXT: &str = "DELIVER IN PERSON, héllo!";
    let literals: Vec<&str> = (0..=TEXT.len())
        .filter(|&n| TEXT.is_char_boundary(n))
        .map(|n| &TEXT[..n])
        .collect();
    for lit in literals {
        let mut values: Vec<Option<String>> = vec![Some(lit.to_string()), None];
        for k in 0..lit.len() {
            let mut bytes = lit.as_bytes().to_vec();
            bytes[k] = if bytes[k] == b'#' { b'$' } else { b'#' };
            // A byte of a multi-byte character replaced is not UTF-8: skip those.
            values.extend(String::from_utf8(bytes).ok().map(Some));
        }
        values.push(Some(format!("{lit}!")));
        values.push(Some(format!("#{lit}")));
        if let Some((last, _)) = lit.char_indices().last() {
            values.push(Some(lit[..last].to_string()));
        }
        // The literal last in the buffer, after a value one byte shorter.
        values.push(Some(lit.to_string()));
        let utf8: ArrayRef = Arc::new(StringArray::from(values.clone()));
        for layout in common::STRING_LAYOUTS {
            let schema = Arc::new(Schema::new(vec![Field::new("s", layout.clone(), true)]));
            let column = common::in_layout(utf8.as_ref(), layout);
            let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
            let n = values.len();
            for (offset, len) in [(0, n), (1, n - 1), (n - 1, 1), (n - 2, 2)] {
                let part = batch.slice(offset, len);
                let rows = &values[offset..offset + len];
                for (op, equal) in [("=", true), ("<>", false)] {
                    let text = format!("s {op} '{lit}'");
                    let filter = Filter::new(&schema, &text).unwrap();
                    let got: Vec<usize> = filter.evaluate(&part).unwrap().iter().collect();
                    let want: Vec<usize> = (0..len)
                        .filter(|&i| rows[i].as_ref().is_some_and(|v| (v == lit) == equal))
                        .collect();
                    assert_eq!(got, want, "{text} on {layout} at {offset}+{len}");
                }
            }
        }
    }
}

/// The needle `aB` at every position of rows of 0–11 bytes (the kernel decides
/// the rows of up to eight bytes, at each shift), rows of the alphabet `a`, `B`,
/// `é` up to four characters (non-ASCII rows are the helper's when case-mapped),
/// and the Kelvin sign, with every LIKE shape as it is and case-mapped, and
/// case-mapped equalities: the JIT selects the rows the interpreter finds TRUE, and
/// the rows the shape's meaning gives, in every layout, sliced.
#[test]
fn short_rows_matched_in_the_kernel_agree_with_the_interpreter() {
    let mut values: Vec<String> = Vec::new();
    for len in 0..=11 {
        values.push("x".repeat(len));
        for at in 0..len.saturating_sub(1) {
            values.push(format!("{}aB{}", "x".repeat(at), "x".repeat(len - at - 2)));
        }
    }
    let mut short = vec![String::new()];
    for _ in 0..4 {
        short = short
            .iter()
            .flat_map(|s| ["a", "B", "é"].map(|c| format!("{s}{c}")))
            .collect();
        values.extend(short.iter().cloned());
    }
    values.push("\u{212A}".into());
    values.push("xx\u{212A}b".into());
    let mut rows: Vec<Option<&str>> = values.iter().map(|v| Some(v.as_str())).collect();
    rows.insert(7, None);
    let utf8: ArrayRef = Arc::new(StringArray::from(rows.clone()));
    type Mapping = fn(&str) -> String;
    let maps: [(&str, Mapping); 3] = [
        ("s", |s| s.to_string()),
        ("lower(s)", str::to_lowercase),
        ("upper(s)", str::to_uppercase),
    ];
    type Shape = fn(&str, &str) -> bool;
    let shapes: [(&str, Shape); 4] = [
        ("{}", |v, n| v == n),
        ("{}%", |v, n| v.starts_with(n)),
        ("%{}", |v, n| v.ends_with(n)),
        ("%{}%", |v, n| v.contains(n)),
    ];
    let needles = [
        "ab",
        "AB",
        "aB",
        "b",
        "",
        "xab",
        "xxxxxxab",
        "xxxxxxxab",
        "é",
        "kb",
    ];
    for layout in common::STRING_LAYOUTS {
        let schema = Arc::new(Schema::new(vec![Field::new("s", layout.clone(), true)]));
        let column = common::in_layout(utf8.as_ref(), layout);
        let whole = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
        let n = rows.len();
        for (offset, len) in [(0, n), (3, n - 5)] {
            let batch = whole.slice(offset, len);
            let part = &rows[offset..offset + len];
            let check = |text: String, holds: &dyn Fn(&str) -> bool| {
                let filter = Filter::new(&schema, &text).unwrap();
                let got: Vec<usize> = filter.evaluate(&batch).unwrap().iter().collect();
                let typed = bind_predicate(&parse_expr(&text).unwrap(), &schema).unwrap();
                let b = interpret(&typed, &batch).unwrap();
                let b = b.as_boolean();
                let reference: Vec<usize> = (0..b.len())
                    .filter(|&i| b.is_valid(i) && b.value(i))
                    .collect();
                assert_eq!(got, reference, "{text} on {layout} at {offset}");
                let want: Vec<usize> = (0..len).filter(|&i| part[i].is_some_and(holds)).collect();
                assert_eq!(got, want, "{text} on {layout} at {offset}: by hand");
            };
            for (map_sql, map) in maps {
                for (shape_sql, shape) in shapes {
                    for needle in needles {
                        let pattern = shape_sql.replace("{}", needle);
                        check(format!("{map_sql} LIKE '{pattern}'"), &|v| {
                            shape(&map(v), needle)
                        });
                    }
                }
                for needle in ["ab", "AB", "K", "k", "XXAB", "xxkb"] {
                    check(format!("{map_sql} = '{needle}'"), &|v| map(v) == needle);
                    check(format!("{map_sql} <> '{needle}'"), &|v| map(v) != needle);
                }
            }
        }
    }
}
