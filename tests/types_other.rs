//! BLOBs (every Arrow binary layout), the NULL type and dictionary columns, against
//! hand-computed expectations checked with DuckDB 2.0, on both back ends.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, LargeBinaryArray,
    RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Int32Type, Schema};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::sql::parse_expr;
use broadhead::{Filter, Projector};

fn batch_of(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

/// The rows a filter keeps, the same from the compiled filter and the interpreter
/// (over the batch with its columns as the engine binds them).
fn rows(sql: &str, batch: &RecordBatch) -> Result<Vec<usize>, String> {
    let filter = Filter::new(&batch.schema(), sql).map_err(|e| e.to_string())?;
    assert!(filter.is_jit(), "{sql} should compile");
    let jit = filter
        .evaluate(batch)
        .map(|s| s.iter().collect::<Vec<_>>())
        .map_err(|e| e.to_string());
    let mask = filter.evaluate_mask(batch).map_err(|e| e.to_string());
    if let (Ok(j), Ok(m)) = (&jit, &mask) {
        let from_mask: Vec<usize> = (0..m.len()).filter(|&i| m.value(i)).collect();
        assert_eq!(
            j, &from_mask,
            "evaluate and evaluate_mask disagree on {sql}"
        );
    }
    let bound = engine_batch(batch);
    let typed = bind_predicate(&parse_expr(sql).unwrap(), &bound.schema()).unwrap();
    let interpreted = interpret(&typed, &bound)
        .map(|a| {
            let b = a.as_boolean();
            (0..b.len())
                .filter(|&i| b.is_valid(i) && b.value(i))
                .collect::<Vec<_>>()
        })
        .map_err(|e| e.to_string());
    assert_eq!(jit, interpreted, "JIT and interpreter disagree on {sql}");
    jit
}

/// One projected column, the same from the compiled projector and the interpreter.
fn value(sql: &str, batch: &RecordBatch) -> Result<ArrayRef, String> {
    let projector = Projector::new(&batch.schema(), &[sql]).map_err(|e| e.to_string())?;
    let jit = projector
        .evaluate(batch)
        .map(|mut v| v.remove(0))
        .map_err(|e| e.to_string());
    let bound = engine_batch(batch);
    let typed = bind(&parse_expr(sql).unwrap(), &bound.schema()).unwrap();
    let interpreted = interpret(&typed, &bound).map_err(|e| e.to_string());
    match (&jit, &interpreted) {
        (Ok(j), Ok(i)) => assert_eq!(
            j.to_data(),
            i.to_data(),
            "JIT and interpreter disagree on {sql}"
        ),
        _ => assert_eq!(jit.as_ref().err(), interpreted.as_ref().err(), "{sql}"),
    }
    jit
}

/// `batch` with its columns in the layouts the engine binds them as (other BLOB
/// layouts as BLOB, dictionaries decoded), for the interpreter.
fn engine_batch(batch: &RecordBatch) -> RecordBatch {
    let convert = |a: &ArrayRef| -> ArrayRef {
        let to = match a.data_type() {
            DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
                DataType::Binary
            }
            DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
            DataType::Dictionary(_, v) => v.as_ref().clone(),
            _ => return a.clone(),
        };
        arrow::compute::cast(a, &to).unwrap()
    };
    batch_of(
        batch
            .schema()
            .fields()
            .iter()
            .zip(batch.columns())
            .map(|(f, a)| (f.name().as_str(), convert(a)))
            .collect(),
    )
}

fn texts(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect()
}

fn ints(a: &ArrayRef) -> Vec<Option<i32>> {
    a.as_primitive::<Int32Type>().iter().collect()
}

/// DuckDB's table `t(b)`: X'41', X'4100', X'', NULL, X'FF', X'00', X'4142'.
fn blobs() -> Vec<Option<&'static [u8]>> {
    vec![
        Some(b"A"),
        Some(b"A\x00"),
        Some(b""),
        None,
        Some(b"\xff"),
        Some(b"\x00"),
        Some(b"AB"),
    ]
}

fn blob_batch() -> RecordBatch {
    batch_of(vec![(
        "b",
        Arc::new(BinaryArray::from(blobs())) as ArrayRef,
    )])
}

#[test]
fn blobs_compare_byte_by_byte_with_a_prefix_first() {
    let b = blob_batch();
    // Answers from DuckDB (rows are 0-based here, DuckDB's ids 1-based).
    assert_eq!(rows("b < X'4100'", &b), Ok(vec![0, 2, 5]));
    assert_eq!(rows("b = 'A'", &b), Ok(vec![0]));
    assert_eq!(rows("b > 'A'", &b), Ok(vec![1, 4, 6]));
    assert_eq!(rows("b IN (X'41', X'FF', NULL)", &b), Ok(vec![0, 4]));
    assert_eq!(rows("b NOT IN (X'41', X'FF')", &b), Ok(vec![1, 2, 5, 6]));
    assert_eq!(rows("b BETWEEN X'00' AND X'41'", &b), Ok(vec![0, 5]));
    assert_eq!(
        rows("b IS DISTINCT FROM X'41'", &b),
        Ok(vec![1, 2, 3, 4, 5, 6])
    );
    assert_eq!(rows("b IS NOT DISTINCT FROM NULL", &b), Ok(vec![3]));
    assert_eq!(rows("b >= x'41' AND b < x'42'", &b), Ok(vec![0, 1, 6]));
    assert_eq!(rows("b IS NULL", &b), Ok(vec![3]));
    assert_eq!(rows("b = b AND b <= X'00'", &b), Ok(vec![2, 5]));
    // Computed BLOBs compare too (CASE, COALESCE, CAST from VARCHAR).
    assert_eq!(rows("coalesce(b, X'EE') = X'EE'", &b), Ok(vec![3]));
    assert_eq!(
        rows("CASE WHEN b = X'' THEN X'41' ELSE b END = 'A'", &b),
        Ok(vec![0, 2])
    );
    assert_eq!(rows("CAST('A\\x00' AS BLOB) = b", &b), Ok(vec![1]));
}

#[test]
fn blob_lengths_casts_and_hashes() {
    let b = blob_batch();
    let lengths = vec![Some(1), Some(2), Some(0), None, Some(1), Some(1), Some(2)];
    assert_eq!(
        value("octet_length(b)", &b).map(|a| ints(&a)),
        Ok(lengths.clone())
    );
    assert_eq!(value("length(b)", &b).map(|a| ints(&a)), Ok(lengths));
    let text = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|s| s.map(str::to_string)).collect()
    };
    assert_eq!(
        value("CAST(b AS VARCHAR)", &b).map(|a| texts(&a)),
        Ok(text(&[
            Some("A"),
            Some("A\\x00"),
            Some(""),
            None,
            Some("\\xFF"),
            Some("\\x00"),
            Some("AB")
        ]))
    );
    assert_eq!(
        value("md5(b)", &b).map(|a| texts(&a)[0].clone()),
        Ok(Some("7fc56270e7a70fa81a5935b72eacbe29".to_string()))
    );
    // Text to BLOB and back: DuckDB's escapes.
    let s = batch_of(vec![(
        "s",
        Arc::new(StringArray::from(vec![
            "a\\x41\\xfF",
            "x",
            "é",
            "a\\b",
            "\\x4",
        ])) as ArrayRef,
    )]);
    let out = value("TRY_CAST(s AS BLOB)", &s).unwrap();
    let out = out.as_binary::<i32>();
    assert_eq!(out.value(0), b"aA\xff");
    assert_eq!(out.value(1), b"x");
    assert!(out.is_null(2) && out.is_null(3) && out.is_null(4));
    assert_eq!(
        value("CAST(s AS BLOB)", &s).unwrap_err(),
        "invalid input syntax for type blob: \"é\" at row 2"
    );
    // A BLOB projected as it is, and a computed one.
    let out = value("coalesce(b, X'EEFF')", &b).unwrap();
    let out = out.as_binary::<i32>();
    assert_eq!(out.value(3), b"\xee\xff");
    assert_eq!(out.value(1), b"A\x00");
}

#[test]
fn blob_literals_and_type_names() {
    let b = blob_batch();
    for (sql, rows_expected) in [
        ("b = BLOB 'AB'", vec![6]),
        ("b = CAST('\\xFF' AS BYTEA)", vec![4]),
        ("b = CAST(X'00' AS VARBINARY)", vec![5]),
        ("b = X''", vec![2]),
    ] {
        assert_eq!(rows(sql, &b), Ok(rows_expected), "{sql}");
    }
    let e = Filter::new(&b.schema(), "b = X'4'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("even number of hexadecimal digits"), "{e}");
    let e = Filter::new(&b.schema(), "b = X'GG'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("hexadecimal digits, not 'G'"), "{e}");
    let e = Filter::new(&b.schema(), "b = 'é'").unwrap_err().to_string();
    assert!(e.contains("invalid BLOB literal 'é'"), "{e}");
    let e = Filter::new(&b.schema(), "b = 1").unwrap_err().to_string();
    assert!(e.contains("cannot compare BLOB with BIGINT"), "{e}");
    // Display round-trips.
    let f = Filter::new(&b.schema(), "b = X'00ff'").unwrap();
    assert_eq!(f.expr().to_string(), "(b = X'00FF')");
}

#[test]
fn every_blob_layout_reads_alike_and_slices_work() {
    let values = blobs();
    let large: ArrayRef = Arc::new(LargeBinaryArray::from(values.clone()));
    let view: ArrayRef = Arc::new(BinaryViewArray::from(values.clone()));
    let plain: ArrayRef = Arc::new(BinaryArray::from(values));
    let fixed: ArrayRef = Arc::new(
        FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            vec![Some(b"AB"), None, Some(b"A\x00"), Some(b"\xff\xff")].into_iter(),
            2,
        )
        .unwrap(),
    );
    for a in [&large, &view, &plain] {
        let b = batch_of(vec![("b", a.clone())]);
        assert_eq!(
            rows("b < X'4100'", &b),
            Ok(vec![0, 2, 5]),
            "{}",
            a.data_type()
        );
        assert_eq!(
            value("octet_length(b)", &b).map(|x| ints(&x)[1]),
            Ok(Some(2))
        );
        let sliced = b.slice(2, 4);
        assert_eq!(
            rows("b <= X'00'", &sliced),
            Ok(vec![0, 3]),
            "{}",
            a.data_type()
        );
        assert_eq!(rows("b IS NULL", &sliced), Ok(vec![1]));
    }
    let b = batch_of(vec![("b", fixed)]);
    assert_eq!(rows("b >= 'A'", &b), Ok(vec![0, 2, 3]));
    assert_eq!(rows("b = X'4100'", &b.slice(1, 3)), Ok(vec![1]));
}

/// The interpreter reads every BLOB layout as it is (the Parquet scan hands it
/// LargeBinary and BinaryView columns unconverted): literals, comparisons between
/// layouts and BLOB functions give the `Binary` column's answers.
#[test]
fn the_interpreter_reads_large_and_view_blobs_in_place() {
    let values = blobs();
    let plain: ArrayRef = Arc::new(BinaryArray::from(values.clone()));
    let large: ArrayRef = Arc::new(LargeBinaryArray::from(values.clone()));
    let view: ArrayRef = Arc::new(BinaryViewArray::from(values));
    let interpreted = |sql: &str, b: &ArrayRef, c: &ArrayRef| -> ArrayRef {
        let batch = batch_of(vec![("b", b.clone()), ("c", c.clone())]);
        let typed = bind(&parse_expr(sql).unwrap(), &batch.schema())
            .unwrap_or_else(|e| panic!("{sql} on {}: {e}", b.data_type()));
        interpret(&typed, &batch).unwrap_or_else(|e| panic!("{sql} on {}: {e}", b.data_type()))
    };
    // `c` is `b` reversed, so `b = c` and `b > c` differ by row.
    let reversed = |a: &ArrayRef| -> ArrayRef {
        let order = arrow::array::UInt32Array::from(vec![6, 5, 4, 3, 2, 1, 0]);
        arrow::compute::take(a.as_ref(), &order, None).unwrap()
    };
    let sqls = [
        "b = X'4100'",
        "b < X'4100'",
        "X'41' >= b",
        "b = c",
        "b > c",
        "b IN (X'FF', X'')",
        "length(b)",
        "octet_length(b)",
        "md5(b)",
        "CAST(b AS VARCHAR)",
        "coalesce(b, X'EE')",
    ];
    for sql in sqls {
        let want = interpreted(sql, &plain, &reversed(&plain));
        for b in [&large, &view] {
            for c in [&plain, &large, &view] {
                let got = interpreted(sql, b, &reversed(c));
                // A BLOB result keeps its own layout; compare the values.
                let got = arrow::compute::cast(&got, want.data_type()).unwrap();
                assert_eq!(
                    got.to_data(),
                    want.to_data(),
                    "{sql} on {} with {}",
                    b.data_type(),
                    c.data_type()
                );
            }
        }
    }
    // Hand-computed: b is X'41', X'4100', X'', NULL, X'FF', X'00', X'4142'.
    let keep = |a: ArrayRef| -> Vec<usize> {
        let a = a.as_boolean().clone();
        (0..a.len())
            .filter(|&i| a.is_valid(i) && a.value(i))
            .collect()
    };
    assert_eq!(
        keep(interpreted("b < X'4100'", &large, &view)),
        vec![0, 2, 5]
    );
    assert_eq!(
        keep(interpreted("b = c", &view, &reversed(&large))),
        Vec::<usize>::new()
    );
    assert_eq!(
        keep(interpreted("b > c", &view, &reversed(&large))),
        vec![1, 4, 6]
    );
    assert_eq!(
        ints(&interpreted("length(b)", &view, &large)),
        vec![Some(1), Some(2), Some(0), None, Some(1), Some(1), Some(2)]
    );
}

fn null_batch() -> RecordBatch {
    batch_of(vec![
        ("n", Arc::new(arrow::array::NullArray::new(4)) as ArrayRef),
        (
            "i",
            Arc::new(arrow::array::Int32Array::from(vec![
                Some(1),
                None,
                Some(3),
                Some(4),
            ])),
        ),
    ])
}

#[test]
fn a_column_of_type_null_is_null_everywhere() {
    let b = null_batch();
    assert_eq!(rows("n IS NULL", &b), Ok(vec![0, 1, 2, 3]));
    assert_eq!(rows("n IS NOT NULL", &b), Ok(vec![]));
    assert_eq!(rows("n = 1", &b), Ok(vec![]));
    assert_eq!(rows("NOT (i = n)", &b), Ok(vec![]));
    assert_eq!(rows("n IS DISTINCT FROM i", &b), Ok(vec![0, 2, 3]));
    assert_eq!(rows("n IS NOT DISTINCT FROM i", &b), Ok(vec![1]));
    assert_eq!(rows("coalesce(n, i) > 2", &b), Ok(vec![2, 3]));
    assert_eq!(rows("n IN (1, 2) OR i = 1", &b), Ok(vec![0]));
    assert_eq!(
        rows("CAST(n AS VARCHAR) IS NULL AND i > 3", &b),
        Ok(vec![3])
    );
    assert_eq!(
        value("n + i", &b).map(|a| ints(&a)),
        Ok(vec![None, None, None, None])
    );
    assert_eq!(
        value("coalesce(n, i)", &b).map(|a| ints(&a)),
        Ok(vec![Some(1), None, Some(3), Some(4)])
    );
    assert_eq!(
        value("CASE WHEN i > 2 THEN n ELSE i END", &b).map(|a| ints(&a)),
        Ok(vec![Some(1), None, None, None])
    );
    // Projected as it is, the column keeps its type (computed by the interpreter).
    let out = value("n", &b).unwrap();
    assert_eq!(out.data_type(), &DataType::Null);
    assert_eq!(out.len(), 4);
    // Sliced.
    assert_eq!(rows("n IS NULL AND i >= 3", &b.slice(1, 3)), Ok(vec![1, 2]));
}

/// Values `b, a, NULL, ab, é, hello` (`hello` used by no row), keys of type `K`:
/// rows `b, a, NULL (key), ab, é, b, NULL (value)`.
fn dictionary<K: arrow::datatypes::ArrowDictionaryKeyType>() -> ArrayRef {
    let values: ArrayRef = Arc::new(StringArray::from(vec![
        Some("b"),
        Some("a"),
        None,
        Some("ab"),
        Some("é"),
        Some("hello"),
    ]));
    let keys = arrow::array::Int32Array::from(vec![
        Some(0),
        Some(1),
        None,
        Some(3),
        Some(4),
        Some(0),
        Some(2),
    ]);
    let keys = arrow::compute::cast(&keys, &K::DATA_TYPE).unwrap();
    let keys = keys.as_primitive::<K>().clone();
    Arc::new(arrow::array::DictionaryArray::<K>::try_new(keys, values).unwrap())
}

#[test]
fn dictionary_columns_give_the_decoded_answers_for_every_key_type() {
    use arrow::datatypes::{Int16Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt8Type};
    for column in [
        dictionary::<Int8Type>(),
        dictionary::<Int16Type>(),
        dictionary::<Int32Type>(),
        dictionary::<Int64Type>(),
        dictionary::<UInt8Type>(),
        dictionary::<UInt16Type>(),
        dictionary::<UInt32Type>(),
        dictionary::<arrow::datatypes::UInt64Type>(),
    ] {
        let t = column.data_type().clone();
        let b = batch_of(vec![("s", column)]);
        // Answers from DuckDB (a NULL inside the dictionary is a NULL value).
        assert_eq!(rows("s = 'b'", &b), Ok(vec![0, 5]), "{t}");
        assert_eq!(rows("s LIKE '%b%'", &b), Ok(vec![0, 3, 5]), "{t}");
        assert_eq!(rows("upper(s) = 'É'", &b), Ok(vec![4]), "{t}");
        assert_eq!(rows("s IS NULL", &b), Ok(vec![2, 6]), "{t}");
        assert_eq!(rows("coalesce(s, 'z') = 'z'", &b), Ok(vec![2, 6]), "{t}");
        assert_eq!(rows("s IS DISTINCT FROM 'b'", &b), Ok(vec![1, 2, 3, 4, 6]));
        assert_eq!(rows("s IS NOT NULL AND s <> 'a'", &b), Ok(vec![0, 3, 4, 5]));
        assert_eq!(rows("s IN ('a', 'é', NULL)", &b), Ok(vec![1, 4]));
        // `hello` would divide by zero, but no row uses it: no error.
        assert_eq!(
            rows("1 / (length(s) - 5) >= 0", &b),
            Ok(vec![0, 1, 3, 4, 5])
        );
        // Sliced: keys from row 2.
        let sliced = b.slice(2, 4);
        assert_eq!(
            rows("s = 'ab' OR s IS NULL", &sliced),
            Ok(vec![0, 1]),
            "{t}"
        );
        assert_eq!(
            value("length(s)", &b).map(|a| ints(&a)),
            Ok(vec![
                Some(1),
                Some(1),
                None,
                Some(2),
                Some(1),
                Some(1),
                None
            ])
        );
        assert_eq!(
            value("upper(s)", &sliced).map(|a| texts(&a)),
            Ok(vec![
                None,
                Some("AB".into()),
                Some("É".into()),
                Some("B".into())
            ])
        );
    }
}

#[test]
fn dictionary_errors_name_the_row_that_uses_the_value() {
    let b = batch_of(vec![("s", dictionary::<Int32Type>())]);
    // Row 4 (`é`) is decided by the OR; row 0 (`b`) divides by zero.
    assert_eq!(
        rows("1 / (length(s) - 1) > 0 OR s = 'é'", &b),
        Err("division by zero at row 0".to_string())
    );
    assert_eq!(
        rows("s = 'é' OR s = 'a' OR 1 / (length(s) - 5) > 0", &b),
        Ok(vec![1, 4])
    );
    let e = rows("1 / (octet_length(s) - 2) >= 0", &b).unwrap_err();
    assert_eq!(e, "division by zero at row 3");
}

#[test]
fn batches_with_other_dictionaries_are_not_given_an_earlier_answer() {
    let schema = batch_of(vec![("s", dictionary::<Int32Type>())]).schema();
    let filter = Filter::new(&schema, "s LIKE 'a%'").unwrap();
    let other_values: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let keys = arrow::array::Int32Array::from(vec![1, 0, 1]);
    let other: ArrayRef =
        Arc::new(arrow::array::DictionaryArray::try_new(keys, other_values).unwrap());
    for _ in 0..2 {
        let first = batch_of(vec![("s", dictionary::<Int32Type>())]);
        let selected: Vec<usize> = filter.evaluate(&first).unwrap().iter().collect();
        assert_eq!(selected, vec![1, 3]);
        let second = RecordBatch::try_new(schema.clone(), vec![other.clone()]).unwrap();
        let selected: Vec<usize> = filter.evaluate(&second).unwrap().iter().collect();
        assert_eq!(selected, vec![1]);
        // The same dictionary array again.
        let selected: Vec<usize> = filter
            .evaluate(&second.slice(1, 2))
            .unwrap()
            .iter()
            .collect();
        assert_eq!(selected, vec![0]);
    }
}
