//! The Parquet scan and its public API on files made here: constant predicates, where
//! data errors are, duplicate column names, malformed and forged files, inputs that
//! are not files (symlink loops, FIFOs, devices), and `JitPredicate` in a reader of
//! one's own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use assert_cmd::Command;
use broadhead::parquet::{
    expand_paths, Dataset, JitPredicate, Scan, ScanError, ScanItem, ScanOptions,
};
use parquet::arrow::arrow_reader::{
    ParquetRecordBatchReaderBuilder, RowFilter, RowSelection, RowSelector,
};
use parquet::arrow::ProjectionMask;
use tempfile::TempDir;

#[allow(dead_code)]
#[path = "../../examples/parquet_stream.rs"]
mod example;

mod common;
use common::{write_parquet as write, Run};

fn run(args: &[&str]) -> Run {
    let out = Command::cargo_bin("broadhead")
        .unwrap()
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    Run::from(out)
}

fn ok(args: &[&str]) -> String {
    let r = run(args);
    assert_eq!(r.code, 0, "{args:?} failed: {}", r.stderr);
    r.stdout
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// 300 rows in row groups of 100: `i` = row, `d` = 1 but 0 at row 150, `s` = text.
fn numbers(dir: &Path) -> PathBuf {
    let path = dir.join("numbers.parquet");
    let i: Vec<i64> = (0..300).collect();
    let d: Vec<i64> = (0..300).map(|r| if r == 150 { 0 } else { 1 }).collect();
    let text: Vec<String> = (0..300).map(|r| format!("v{r:03}")).collect();
    write(
        &path,
        vec![
            ("i", Arc::new(Int64Array::from(i))),
            ("d", Arc::new(Int64Array::from(d))),
            ("s", Arc::new(StringArray::from(text))),
        ],
        100,
    );
    path
}

const MODES: [&[&str]; 4] = [&[], &["--no-pushdown"], &["--interpret"], &["--no-prune"]];

/// The rows a scan of `dataset` where `predicate` is TRUE selects, and the row
/// groups it prunes.
fn rows_and_pruned(dataset: &Dataset, predicate: &str) -> (usize, usize) {
    let scan = Scan::new(dataset, Some(predicate), &[], ScanOptions::default()).unwrap();
    let (mut seen, mut skipped) = (0, 0);
    scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |item| {
        match item {
            ScanItem::Batch(n) => seen += n,
            ScanItem::RowGroupDone { pruned: true, .. } => skipped += 1,
            _ => {}
        }
        Ok(true)
    })
    .unwrap();
    (seen, skipped)
}

/// For each `(predicate, rows, pruned)`: a scan of the file at `path` selects `rows`
/// rows and prunes `pruned` row groups, and `broadhead filter PATH --where
/// PREDICATE --count` gives `rows` in every mode.
fn check_predicates(path: &Path, cases: &[(&str, usize, usize)]) {
    let dataset = Dataset::open(&[path.to_path_buf()]).unwrap();
    for &(predicate, rows, pruned) in cases {
        assert_eq!(
            rows_and_pruned(&dataset, predicate),
            (rows, pruned),
            "{predicate}"
        );
        let mut args = vec!["filter", s(path), "--where", predicate, "--count"];
        for mode in MODES {
            args.truncate(5);
            args.extend(mode);
            assert_eq!(ok(&args).trim(), rows.to_string(), "{predicate} {mode:?}");
        }
    }
}

/// DATE64 and TIME columns are pruned by their row groups' statistics (DATE64 is
/// read as DATE, statistics included) and give the same rows as without pruning.
#[test]
fn date64_and_time_columns_prune_row_groups() {
    use arrow::array::{Date64Array, Time32MillisecondArray, Time64MicrosecondArray};
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("temporal.parquet");
    // Row r: the day 8766 + r (1994-01-01 + r), and r minutes after midnight.
    let d64: Vec<i64> = (0..300).map(|r| (8766 + r) * 86_400_000).collect();
    let tm: Vec<i64> = (0..300).map(|r| r * 60_000_000).collect();
    let tm32: Vec<i32> = (0..300).map(|r| r * 60_000).collect();
    write(
        &path,
        vec![
            ("d64", Arc::new(Date64Array::from(d64))),
            ("tm", Arc::new(Time64MicrosecondArray::from(tm))),
            ("tm32", Arc::new(Time32MillisecondArray::from(tm32))),
        ],
        100,
    );
    check_predicates(
        &path,
        &[
            ("d64 >= DATE '1994-01-01' + 250", 50, 2),
            ("d64 < '1994-01-11'", 10, 2),
            ("tm BETWEEN TIME '01:40' AND TIME '01:49'", 10, 2),
            ("tm32 > TIME '04:00'", 59, 2),
            ("tm32 < TIME(3) '00:00:00' OR d64 > DATE '2000-01-01'", 0, 3),
            ("tm32 >= TIME '00:00'", 300, 0),
        ],
    );
    // DATE64 prints as a date, TIME as a time of day.
    let out = ok(&[
        "filter",
        s(&path),
        "--where",
        "d64 = '1994-01-02'",
        "--format",
        "csv",
    ]);
    assert_eq!(out, "d64,tm,tm32\n1994-01-02,00:01:00,00:01:00\n");
}

/// Predicates on STRUCT fields: pushed into the reader (the STRUCT column is read for
/// them), pruned on the field's own Parquet statistics, and the same rows in every
/// mode; a field of a NULL struct is NULL.
#[test]
fn struct_fields_filter_and_prune_on_their_leaf_statistics() {
    use arrow::array::StructArray;
    use arrow::buffer::NullBuffer;
    use arrow::datatypes::{Field, Fields};
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("nested.parquet");
    // s = {x: row, inner: {name: 'n' || row % 10}}, NULL at rows that are multiples of 7.
    let inner_fields = Fields::from(vec![Field::new("name", DataType::Utf8, true)]);
    let names: Vec<String> = (0..300).map(|r| format!("n{}", r % 10)).collect();
    let inner = StructArray::new(
        inner_fields.clone(),
        vec![Arc::new(StringArray::from(names)) as ArrayRef],
        None,
    );
    let s_fields = Fields::from(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("inner", DataType::Struct(inner_fields), true),
    ]);
    let st = StructArray::new(
        s_fields,
        vec![
            Arc::new(Int64Array::from((0..300).collect::<Vec<i64>>())) as ArrayRef,
            Arc::new(inner),
        ],
        Some(NullBuffer::from(
            (0..300).map(|r| r % 7 != 0).collect::<Vec<bool>>(),
        )),
    );
    let id: Vec<i64> = (0..300).collect();
    write(
        &path,
        vec![("id", Arc::new(Int64Array::from(id))), ("s", Arc::new(st))],
        100,
    );
    // Rows 0..300; s is NULL at 0, 7, 14, … (43 rows).
    check_predicates(
        &path,
        &[
            ("s.x >= 250", 43, 2),
            ("s.x < 100 AND s['inner'].name = 'n3'", 9, 2),
            ("struct_extract(s, 'x') BETWEEN 140 AND 160", 18, 2),
            ("s.x IS NULL", 43, 0),
            ("s.inner.name = 'n0' OR id = 7", 26, 0),
        ],
    );
    let out = ok(&[
        "sql",
        "SELECT id, s.x * 2 AS x2, s.inner.name AS nm FROM '_' WHERE s.x BETWEEN 6 AND 8"
            .replace('_', s(&path))
            .as_str(),
    ]);
    // Row 7's struct is NULL: so is its x, and the row is not selected.
    assert_eq!(out, "id,x2,nm\n6,12,n6\n8,16,n8\n");
}

#[test]
fn constant_predicates_select_every_row_or_none() {
    let dir = TempDir::new().unwrap();
    let f = numbers(dir.path());
    for mode in MODES {
        for (predicate, expected) in [
            ("TRUE OR i > 5", "300"),
            ("i > 5 AND 1 = 0", "0"),
            ("'x' = 'x' OR s > 'a'", "300"),
            ("1 = 1 AND i < 10", "10"),
            ("NULL AND i > 5", "0"),
            ("TRUE", "300"),
        ] {
            let mut args = vec!["filter", s(&f), "--where", predicate, "--count"];
            args.extend(mode);
            assert_eq!(ok(&args).trim(), expected, "{predicate} {mode:?}");
        }
        // Rows, not only counts: a constant TRUE with other columns selected.
        let mut args = vec![
            "filter",
            s(&f),
            "--where",
            "TRUE OR i > 5",
            "--select",
            "s",
            "-n",
            "2",
        ];
        args.extend(mode);
        assert_eq!(ok(&args), "s\nv000\nv001\n", "{mode:?}");
    }
    // Errors SQL requires are still raised.
    let r = run(&["filter", s(&f), "--where", "TRUE OR nope > 5", "--count"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("unknown column 'nope'"), "{}", r.stderr);
    let r = run(&["filter", s(&f), "--where", "FALSE AND s + 1 > 5", "--count"]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    // The library: a constant predicate reads no column for itself.
    let dataset = Dataset::open(std::slice::from_ref(&f)).unwrap();
    for (predicate, expected) in [("TRUE OR i > 5", 300), ("i > 5 AND 1 = 0", 0)] {
        let scan = Scan::new(&dataset, Some(predicate), &[], ScanOptions::default()).unwrap();
        assert_eq!(count(&scan), expected, "{predicate}");
    }
}

fn count(scan: &Scan) -> usize {
    let mut rows = 0;
    scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |item| {
        if let ScanItem::Batch(n) = item {
            rows += n;
        }
        Ok(true)
    })
    .unwrap();
    rows
}

#[test]
fn data_errors_name_the_file_row_group_and_row() {
    let dir = TempDir::new().unwrap();
    let f = numbers(dir.path());
    // Row 150 (of row group 1) divides by zero: in the predicate, or in a computed
    // output through the rows the predicate kept (or every row).
    let cases = [
        ("i / d > 1000", None, "7"),
        ("i / d > 1000", None, "8192"),
        ("i % 3 = 0 OR i = 150", Some("i, i / d"), "7"),
        ("TRUE", Some("i, i / d"), "16"),
        ("i >= 100", Some("i, i / d"), "8192"),
    ];
    for mode in MODES {
        for (predicate, select, batch) in cases {
            let mut args = vec!["filter", s(&f), "--where", predicate, "--batch-size", batch];
            match select {
                Some(list) => args.extend(["--select", list]),
                None => args.push("--count"),
            }
            args.extend(mode);
            let r = run(&args);
            assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains("numbers.parquet, row group 1, row 150: division by zero"),
                "{args:?}: {}",
                r.stderr
            );
        }
    }
    // With the row before it filtered out by an earlier conjunct: the same row.
    let r = run(&[
        "filter",
        s(&f),
        "--where",
        "i >= 120 AND i / d > 1000",
        "--count",
        "--batch-size",
        "16",
    ]);
    assert!(r.stderr.contains("row group 1, row 150:"), "{}", r.stderr);
}

#[test]
fn jit_predicate_row_numbers_follow_row_groups_and_selection() {
    let dir = TempDir::new().unwrap();
    let f = numbers(dir.path());
    let file = std::fs::File::open(&f).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let predicate =
        JitPredicate::new("i / d > 1000", builder.metadata(), builder.schema()).unwrap();
    assert_eq!(predicate.columns(), &[0, 1]);
    // Row groups 2 and 1; of their 200 rows skip 140 (group 2 and 40 of group 1),
    // so the reader's rows are file rows 140.., and the error is at 150.
    let selection = RowSelection::from(vec![RowSelector::skip(140), RowSelector::select(60)]);
    let predicate = predicate.with_rows(&[2, 1], Some(&selection));
    let handle = predicate.error_handle();
    // The reader may evaluate the filter when it is built or as it is read.
    let error = match builder
        .with_row_groups(vec![2, 1])
        .with_row_selection(selection)
        .with_batch_size(4)
        .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
        .build()
    {
        Ok(reader) => reader
            .into_iter()
            .find_map(|b| b.err())
            .expect("an error")
            .to_string(),
        Err(e) => e.to_string(),
    };
    assert!(
        error
            .to_string()
            .contains("row group 1, row 150: division by zero"),
        "{error}"
    );
    let kept = handle.lock().unwrap().clone().expect("kept whole");
    assert_eq!((kept.row_group, kept.row), (1, 150));
}

#[test]
fn jit_predicate_compiles_for_its_projection() {
    // The predicate reads column 2 of 3 and the output is column 0: compiled against
    // the file schema it would see a batch of 1 column where it expects 3.
    let dir = TempDir::new().unwrap();
    let f = numbers(dir.path());
    let file = std::fs::File::open(&f).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let predicate =
        JitPredicate::new("s LIKE 'v29%'", builder.metadata(), builder.schema()).unwrap();
    assert!(predicate.is_jit());
    let mask = ProjectionMask::roots(builder.parquet_schema(), [0]);
    let reader = builder
        .with_projection(mask)
        .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        rows.extend(c.values().iter().copied());
    }
    assert_eq!(rows, (290..300).collect::<Vec<i64>>());
}

/// A file with two columns named `a`: [1, 2] and [3, 4].
fn duplicates(dir: &Path) -> PathBuf {
    let path = dir.join("dup.parquet");
    write(
        &path,
        vec![
            ("a", Arc::new(Int64Array::from(vec![1, 2]))),
            ("a", Arc::new(Int64Array::from(vec![3, 4]))),
        ],
        10,
    );
    path
}

#[test]
fn duplicate_column_names_keep_their_positions() {
    let dir = TempDir::new().unwrap();
    let f = duplicates(dir.path());
    for mode in MODES {
        let mut args = vec!["filter", s(&f), "--where", "TRUE", "--format", "csv"];
        args.extend(mode);
        assert_eq!(ok(&args), "a,a\n1,3\n2,4\n", "{mode:?}");
    }
    let dataset = Dataset::open(&[f]).unwrap();
    let scan = Scan::new(&dataset, None, &[1, 0], ScanOptions::default()).unwrap();
    let mut values = Vec::new();
    scan.run(&|b: RecordBatch| Ok(b), &mut |item| {
        if let ScanItem::Batch(b) = item {
            for c in b.columns() {
                let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
                values.push(c.values().to_vec());
            }
        }
        Ok(true)
    })
    .unwrap();
    assert_eq!(values, vec![vec![1, 2], vec![3, 4]]);
}

#[test]
fn an_ambiguous_column_is_an_error_naming_both() {
    let dir = TempDir::new().unwrap();
    let f = duplicates(dir.path());
    for args in [
        ["--where", "a > 2", "--count"].as_slice(),
        &["--where", "TRUE", "--select", "a"],
    ] {
        let mut all = vec!["filter", s(&f)];
        all.extend(args);
        let r = run(&all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("ambiguous"), "{args:?}: {}", r.stderr);
    }
}

// ---------------------------------------------------------------------------------
// Malformed files. A small reader and writer of Thrift's compact protocol forges
// footers: decode the footer of a valid file, change a field, encode it again.

#[derive(Clone, Debug, PartialEq)]
enum V {
    Bool(bool),
    Byte(i8),
    Int(u8, i64), // compact type (4, 5, 6) and value
    Double(f64),
    Binary(Vec<u8>),
    List(u8, Vec<V>),
    Struct(Vec<(i16, V)>),
}

struct Reader<'a>(&'a [u8], usize);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        self.1 += 1;
        self.0[self.1 - 1]
    }
    fn varint(&mut self) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = self.byte();
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return v;
            }
        }
    }
    fn zigzag(&mut self) -> i64 {
        let v = self.varint();
        (v >> 1) as i64 ^ -((v & 1) as i64)
    }
    fn value(&mut self, t: u8) -> V {
        match t {
            1 => V::Bool(true),
            2 => V::Bool(false),
            3 => V::Byte(self.byte() as i8),
            4..=6 => V::Int(t, self.zigzag()),
            7 => {
                let b: [u8; 8] = self.0[self.1..self.1 + 8].try_into().unwrap();
                self.1 += 8;
                V::Double(f64::from_le_bytes(b))
            }
            8 => {
                let n = self.varint() as usize;
                self.1 += n;
                V::Binary(self.0[self.1 - n..self.1].to_vec())
            }
            9 | 10 => {
                let h = self.byte();
                let n = if h >> 4 == 15 {
                    self.varint() as usize
                } else {
                    (h >> 4) as usize
                };
                let et = h & 0x0f;
                let items = (0..n)
                    .map(|_| {
                        if et == 1 || et == 2 {
                            V::Bool(self.byte() == 1)
                        } else {
                            self.value(et)
                        }
                    })
                    .collect();
                V::List(et, items)
            }
            12 => {
                let mut fields = Vec::new();
                let mut last = 0i16;
                loop {
                    let b = self.byte();
                    if b == 0 {
                        return V::Struct(fields);
                    }
                    let id = if b >> 4 == 0 {
                        self.zigzag() as i16
                    } else {
                        last + (b >> 4) as i16
                    };
                    last = id;
                    fields.push((id, self.value(b & 0x0f)));
                }
            }
            t => panic!("thrift type {t} not handled"),
        }
    }
}

fn type_of(v: &V) -> u8 {
    match v {
        V::Bool(true) => 1,
        V::Bool(false) => 2,
        V::Byte(_) => 3,
        V::Int(t, _) => *t,
        V::Double(_) => 7,
        V::Binary(_) => 8,
        V::List(..) => 9,
        V::Struct(_) => 12,
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn encode(v: &V, out: &mut Vec<u8>) {
    match v {
        V::Bool(_) => {}
        V::Byte(b) => out.push(*b as u8),
        V::Int(_, i) => put_zigzag(out, *i),
        V::Double(d) => out.extend(d.to_le_bytes()),
        V::Binary(b) => {
            put_varint(out, b.len() as u64);
            out.extend(b);
        }
        V::List(et, items) => {
            if items.len() < 15 {
                out.push(((items.len() as u8) << 4) | et);
            } else {
                out.push(0xf0 | et);
                put_varint(out, items.len() as u64);
            }
            for i in items {
                match i {
                    V::Bool(b) => out.push(*b as u8),
                    other => encode(other, out),
                }
            }
        }
        V::Struct(fields) => {
            let mut last = 0i16;
            for (id, f) in fields {
                let t = type_of(f);
                if *id > last && id - last <= 15 {
                    out.push((((id - last) as u8) << 4) | t);
                } else {
                    out.push(t);
                    put_zigzag(out, i64::from(*id));
                }
                last = *id;
                encode(f, out);
            }
            out.push(0);
        }
    }
}

impl V {
    fn field(&mut self, id: i16) -> &mut V {
        let V::Struct(fields) = self else {
            panic!("not a struct")
        };
        &mut fields.iter_mut().find(|f| f.0 == id).expect("field").1
    }
    fn item(&mut self, i: usize) -> &mut V {
        let V::List(_, items) = self else {
            panic!("not a list")
        };
        &mut items[i]
    }
    fn remove(&mut self, id: i16) {
        let V::Struct(fields) = self else {
            panic!("not a struct")
        };
        fields.retain(|f| f.0 != id);
    }
}

/// A valid file's data part and decoded footer.
fn split(bytes: &[u8]) -> (Vec<u8>, V) {
    let n = bytes.len();
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer = &bytes[n - 8 - len..n - 8];
    let mut r = Reader(footer, 0);
    let v = r.value(12);
    let mut again = Vec::new();
    encode(&v, &mut again);
    assert_eq!(again, footer, "the test's Thrift codec round-trips");
    (bytes[..n - 8 - len].to_vec(), v)
}

fn join(data: &[u8], footer: &V) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut f = Vec::new();
    encode(footer, &mut f);
    out.extend(&f);
    out.extend((f.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}

/// Expects `broadhead filter` on `bytes` to fail with exit 1 and `corrupt Parquet`
/// (or `expected`) naming the file, without a panic, an abort or a long run.
fn refused(dir: &Path, name: &str, bytes: &[u8], expected: &str) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    for args in [
        vec!["filter", s(&path), "--where", "i > 5", "--count"],
        vec![
            "filter",
            s(&path),
            "--where",
            "TRUE",
            "--select",
            "i, s",
            "--format",
            "csv",
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 1, "{name} {args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{name}: {expected}")),
            "{name} {args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("internal error"), "{name}: {}", r.stderr);
    }
}

#[test]
fn forged_footers_are_refused_without_allocating_what_they_claim() {
    let dir = TempDir::new().unwrap();
    let bytes = std::fs::read(numbers(dir.path())).unwrap();
    let (data, footer) = split(&bytes);

    let mut f = footer.clone();
    *f.field(2).item(0).field(5) = V::Int(5, i64::from(i32::MAX));
    refused(
        dir.path(),
        "children.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    let mut f = footer.clone();
    *f.field(4).item(0).field(3) = V::Int(6, 1 << 62);
    refused(
        dir.path(),
        "rows.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    // Rows and values claimed alike, within what the chunks' sizes allow: the
    // reader finds the pages short.
    let mut f = footer.clone();
    *f.field(4).item(0).field(3) = V::Int(6, 1 << 30);
    for c in 0..3 {
        *f.field(4).item(0).field(1).item(c).field(3).field(5) = V::Int(6, 1 << 30);
    }
    refused(
        dir.path(),
        "claims.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    let mut f = footer.clone();
    *f.field(3) = V::Int(6, -5);
    refused(
        dir.path(),
        "file-rows.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    let mut f = footer.clone();
    *f.field(4).item(1).field(1).item(0).field(3).field(9) = V::Int(6, -1000);
    refused(
        dir.path(),
        "offset.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    let mut f = footer.clone();
    *f.field(4).item(0).field(1).item(2).field(3).field(9) = V::Int(6, 1 << 40);
    refused(
        dir.path(),
        "far.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    // A dictionary-encoded column whose dictionary page is forgotten.
    let mut f = footer.clone();
    f.field(4).item(0).field(1).item(0).field(3).remove(11);
    refused(
        dir.path(),
        "dictionary.parquet",
        &join(&data, &f),
        "corrupt Parquet (",
    );

    // PAR2 at the start.
    let mut par2 = bytes.clone();
    par2[3] = b'2';
    refused(dir.path(), "par2.parquet", &par2, "not a Parquet file (");
}

#[test]
fn every_bit_flip_of_a_footer_is_an_answer_or_an_error() {
    let dir = TempDir::new().unwrap();
    let original = numbers(dir.path());
    let bytes = std::fs::read(&original).unwrap();
    let n = bytes.len();
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let path = dir.path().join("flipped.parquet");
    let options = ScanOptions {
        threads: 1,
        ..ScanOptions::default()
    };
    for byte in n - 8 - len..n - 8 {
        for bit in 0..8 {
            let mut b = bytes.clone();
            b[byte] ^= 1 << bit;
            std::fs::write(&path, &b).unwrap();
            let result = Dataset::open(std::slice::from_ref(&path)).and_then(|d| {
                let columns: Vec<usize> = (0..d.schema().fields().len()).collect();
                let scan = Scan::new(&d, Some("i >= 0"), &columns, options.clone())?;
                scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |_| Ok(true))
            });
            // A flip may also make a valid file of another schema, where the
            // predicate does not bind.
            match result {
                Ok(_) | Err(ScanError::Engine(_)) => {}
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        text.contains("flipped.parquet"),
                        "byte {byte} bit {bit}: {text}"
                    );
                }
            }
        }
    }
}

#[test]
fn data_page_garbage_is_corrupt_parquet_not_a_panic() {
    let dir = TempDir::new().unwrap();
    let bytes = std::fs::read(numbers(dir.path())).unwrap();
    let (data, footer) = split(&bytes);
    // Every byte of the data part in turn overwritten: every run ends with an
    // answer or an error naming the file, never a panic.
    let path = dir.path().join("garbage.parquet");
    for at in (4..data.len()).step_by(3) {
        let mut d = data.clone();
        d[at] = d[at].wrapping_add(0x5b);
        std::fs::write(&path, join(&d, &footer)).unwrap();
        // Read by the reader, and decided on dictionary keys.
        for (predicate, columns) in [
            ("i >= 0 OR s = 'x'", &[0, 1, 2][..]),
            ("i >= 5 AND d = 1 AND s <> 'x' AND i < d * 300", &[]),
        ] {
            let result = Dataset::open(std::slice::from_ref(&path)).and_then(|ds| {
                let scan = Scan::new(&ds, Some(predicate), columns, ScanOptions::default())?;
                scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |_| Ok(true))
            });
            match result {
                Ok(_) | Err(ScanError::Engine(_)) => {}
                Err(e) => assert!(e.to_string().contains("garbage.parquet"), "at {at}: {e}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Paths.

#[cfg(unix)]
#[test]
fn symlink_loops_visit_each_file_once() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    numbers(&data);
    symlink(".", data.join("self")).unwrap();
    symlink("..", data.join("parent")).unwrap();
    symlink("numbers.parquet", data.join("again.parquet")).unwrap();
    let files = expand_paths(&[&data]).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    let r = run(&["filter", s(&data), "--where", "TRUE", "--count"]);
    assert_eq!(r.stdout.trim(), "300", "{}", r.stderr);

    // A link to itself, given as input, says so.
    let looped = dir.path().join("loop.parquet");
    symlink("loop.parquet", &looped).unwrap();
    let r = run(&["filter", s(&looped), "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("loop.parquet: symlink loop"),
        "{}",
        r.stderr
    );
}

/// Directories `0` … `10` each linking four times to the next hold 4^10 paths to
/// the last (1.4 million directories in all, through every path): each real
/// directory is read once, so the 11 files (one a level) are found at once; the
/// number of directories read is checked by the library's own test
/// (`parquet::paths`).
#[test]
fn a_dag_of_directory_links_is_walked_once_a_directory() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().unwrap();
    let levels = 10;
    for level in 0..=levels {
        let d = dir.path().join(level.to_string());
        std::fs::create_dir(&d).unwrap();
        std::fs::copy(numbers(dir.path()), d.join(format!("f{level}.parquet"))).unwrap();
        if level < levels {
            for link in 0..4 {
                symlink(format!("../{}", level + 1), d.join(format!("l{link}"))).unwrap();
            }
        }
    }
    let root = dir.path().join("0");
    let files = expand_paths(&[&root]).unwrap();
    assert_eq!(files.len(), levels + 1, "{files:?}");
    assert_eq!(files[1], root.join("l0/f1.parquet"));
    let r = run(&["filter", s(&root), "--where", "i < 10", "--count"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "110"), "{}", r.stderr);
}

/// A file of 33,000 row groups of one row (`i` = 0 … 999 over and over): more than
/// the parquet crate decodes at once (32,767). Its writer refuses to write that many,
/// so a file of 1,000 is written and its data repeated 33 times under one footer
/// (each copy's offsets moved; no ordinals, as other writers leave them out).
fn many_row_groups(dir: &Path) -> PathBuf {
    use parquet::file::metadata::{
        FileMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader, ParquetMetaDataWriter,
        RowGroupMetaData,
    };
    let small = dir.join("small.parquet");
    let batch = RecordBatch::try_from_iter([(
        "i",
        Arc::new(Int64Array::from((0..1000).collect::<Vec<i64>>())) as ArrayRef,
    )])
    .unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&small).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    // A row group a row, written one by one (the writer splits a larger batch into
    // row groups recursively, a stack frame each).
    for row in 0..batch.num_rows() {
        w.write(&batch.slice(row, 1)).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
    let bytes = std::fs::read(&small).unwrap();
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&std::fs::File::open(&small).unwrap())
        .unwrap();
    let footer_len = u32::from_le_bytes(bytes[bytes.len() - 8..][..4].try_into().unwrap());
    let data = &bytes[4..bytes.len() - 8 - footer_len as usize];
    let copies = 33;
    let mut out = b"PAR1".to_vec();
    let mut groups = Vec::new();
    for k in 0..copies {
        let shift = (k * data.len()) as i64;
        let moved = |o: Option<i64>| o.map(|o| o + shift);
        out.extend_from_slice(data);
        for rg in meta.row_groups() {
            let columns = rg
                .columns()
                .iter()
                .map(|c| {
                    c.clone()
                        .into_builder()
                        .set_data_page_offset(c.data_page_offset() + shift)
                        .set_dictionary_page_offset(moved(c.dictionary_page_offset()))
                        .set_index_page_offset(moved(c.index_page_offset()))
                        .set_offset_index_offset(moved(c.offset_index_offset()))
                        .set_column_index_offset(moved(c.column_index_offset()))
                        .set_bloom_filter_offset(moved(c.bloom_filter_offset()))
                        .build()
                        .unwrap()
                })
                .collect();
            let mut b = RowGroupMetaData::builder(rg.schema_descr_ptr())
                .set_num_rows(rg.num_rows())
                .set_total_byte_size(rg.total_byte_size())
                .set_column_metadata(columns);
            if let Some(o) = rg.file_offset() {
                b = b.set_file_offset(o + shift);
            }
            groups.push(b.build().unwrap());
        }
    }
    let f = meta.file_metadata();
    let file = FileMetaData::new(
        f.version(),
        1000 * copies as i64,
        f.created_by().map(str::to_string),
        f.key_value_metadata().cloned(),
        f.schema_descr_ptr(),
        f.column_orders().cloned(),
    );
    let big = ParquetMetaDataBuilder::new(file)
        .set_row_groups(groups)
        .build();
    ParquetMetaDataWriter::new(&mut out, &big).finish().unwrap();
    let path = dir.join("many.parquet");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn files_of_more_than_32767_row_groups_are_read() {
    let dir = TempDir::new().unwrap();
    let path = many_row_groups(dir.path());
    let data = Dataset::open(std::slice::from_ref(&path)).unwrap();
    let meta = data.files()[0].metadata.metadata();
    assert_eq!(meta.num_row_groups(), 33_000);
    // The last row group is the last copy's last row.
    let last = meta.row_group(32_999);
    assert_eq!(last.num_rows(), 1);
    assert_eq!(ok(&["filter", s(&path), "--count"]), "33000\n");
    assert_eq!(
        ok(&["filter", s(&path), "--where", "i >= 998", "--count"]),
        "66\n"
    );
    assert!(ok(&["schema", s(&path)]).contains("row groups: 33000"));
}

#[cfg(unix)]
#[test]
fn inputs_that_are_not_parquet_files_say_why() {
    let dir = TempDir::new().unwrap();
    let r = run(&["filter", "/dev/null", "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/dev/null: not a regular file"),
        "{}",
        r.stderr
    );

    let fifo = dir.path().join("fifo.parquet");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let r = run(&["filter", s(&fifo), "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("fifo.parquet: not a regular file (a FIFO)"),
        "{}",
        r.stderr
    );

    let empty = dir.path().join("empty.parquet");
    std::fs::write(&empty, b"").unwrap();
    let r = run(&["filter", s(&empty), "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("empty.parquet: is empty (0 bytes), not a Parquet file"),
        "{}",
        r.stderr
    );

    let missing = dir.path().join("missing.parquet");
    let r = run(&["filter", s(&missing), "--where", "TRUE", "--count"]);
    assert!(
        r.stderr
            .contains("missing.parquet: no such file or directory"),
        "{}",
        r.stderr
    );
}

#[test]
fn globs_match_directories_too() {
    let dir = TempDir::new().unwrap();
    for part in ["p1", "p2", "q"] {
        let sub = dir.path().join(part);
        std::fs::create_dir(&sub).unwrap();
        numbers(&sub);
    }
    std::fs::create_dir_all(dir.path().join("p3/deep")).unwrap();
    numbers(&dir.path().join("p3/deep"));
    let base = s(dir.path());
    let names = |pattern: &str| -> Vec<String> {
        expand_paths(&[format!("{base}/{pattern}")])
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(
        names("p*/numbers.parquet"),
        ["p1/numbers.parquet", "p2/numbers.parquet"]
    );
    assert_eq!(
        names("p[12]/*.parquet"),
        ["p1/numbers.parquet", "p2/numbers.parquet"]
    );
    assert_eq!(
        names("**/*.parquet"),
        [
            "p1/numbers.parquet",
            "p2/numbers.parquet",
            "p3/deep/numbers.parquet",
            "q/numbers.parquet"
        ]
    );
    assert_eq!(
        names("{q,p2}/numbers.parquet"),
        ["p2/numbers.parquet", "q/numbers.parquet"]
    );
    let glob = format!("{base}/p*/numbers.parquet");
    assert_eq!(
        ok(&["filter", &glob, "--where", "i < 10", "--count"]).trim(),
        "20"
    );
}

// ---------------------------------------------------------------------------------
// The example.

#[test]
fn the_streaming_example_filters_and_projects() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("lineitem.parquet");
    example::generate(&path, 0.001).unwrap();
    let (rows, sum) = example::stream(&path, example::PREDICATE, 1024).unwrap();
    // The same with the CLI.
    let count = ok(&["filter", s(&path), "--where", example::PREDICATE, "--count"]);
    assert_eq!(rows.to_string(), count.trim());
    assert!(rows > 0 && sum > 0.0);
}

/// 1,000 rows in row groups of 100, ordered, in each of Parquet's decimal encodings:
/// `l_discount` DECIMAL(15,2) (INT64) is 0.0g in row group g, `l_extendedprice`
/// DECIMAL(20,2) (FIXED_LEN_BYTE_ARRAY) is 200.00 × row, `l_quantity` DECIMAL(9,2)
/// (INT32) is the row, NULL every 7th row.
fn ordered_decimals(dir: &Path) -> PathBuf {
    use arrow::array::Decimal128Array;
    let path = dir.join("decimals.parquet");
    let decimal = |values: Vec<Option<i128>>, p: u8| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(p, 2)
                .unwrap(),
        )
    };
    let rows = 0..1000i128;
    write(
        &path,
        vec![
            (
                "l_discount",
                decimal(rows.clone().map(|r| Some(r / 100)).collect(), 15),
            ),
            (
                "l_extendedprice",
                decimal(rows.clone().map(|r| Some(r * 20_000)).collect(), 20),
            ),
            (
                "l_quantity",
                decimal(rows.map(|r| (r % 7 != 0).then_some(r * 100)).collect(), 9),
            ),
        ],
        100,
    );
    path
}

#[test]
fn decimal_statistics_skip_row_groups() {
    let dir = TempDir::new().unwrap();
    let f = ordered_decimals(dir.path());
    let dataset = Dataset::open(std::slice::from_ref(&f)).unwrap();
    // Read exactly: the columns are decimals, not DOUBLE; those stored as INT64 and
    // INT32 are read in 64 and 32 bits (the JIT reads them in place).
    for (i, t) in [
        arrow::datatypes::DataType::Decimal64(15, 2),
        arrow::datatypes::DataType::Decimal128(20, 2),
        arrow::datatypes::DataType::Decimal32(9, 2),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(dataset.schema().field(i).data_type(), t);
    }
    let scan = Scan::new(
        &dataset,
        Some("l_quantity > 995"),
        &[0, 1, 2],
        ScanOptions::default(),
    )
    .unwrap();
    let mut read = Vec::new();
    scan.run(&|b: RecordBatch| Ok(b), &mut |item| {
        if let ScanItem::Batch(b) = item {
            read.push(b);
        }
        Ok(true)
    })
    .unwrap();
    let types: Vec<String> = read[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(
        types,
        ["Decimal64(15, 2)", "Decimal128(20, 2)", "Decimal32(9, 2)"]
    );
    // Printed exactly, in every output format.
    let csv = ok(&[
        "filter",
        s(&f),
        "--where",
        "l_quantity > 997",
        "--format",
        "csv",
    ]);
    assert_eq!(
        csv,
        "l_discount,l_extendedprice,l_quantity\n0.09,199600.00,998.00\n0.09,199800.00,999.00\n"
    );
    let json = ok(&[
        "filter",
        s(&f),
        "--where",
        "l_quantity = 999",
        "--format",
        "json",
    ]);
    assert!(json.contains("999"), "{json}");
    for (predicate, rows, pruned) in [
        ("l_discount BETWEEN 0.05 AND 0.07", 300, 7),
        ("l_extendedprice > 100000", 499, 5),
        ("l_extendedprice >= 100000.00 AND l_discount < 0.06", 100, 9),
        // Literals of other scales compare exactly: 0.065 lies between two groups.
        ("l_discount > 0.065", 300, 7),
        ("l_discount = 0.050", 100, 9),
        ("l_discount = 0.055", 0, 10),
        ("l_discount IN (0.01, 0.090)", 200, 8),
        ("l_extendedprice < 200", 1, 9),
        ("l_quantity > 995", 4, 9),
        ("l_quantity * 2 > 1990", 4, 0), // arithmetic: not pruned
    ] {
        let scan = Scan::new(&dataset, Some(predicate), &[0], ScanOptions::default()).unwrap();
        let mut selected = 0;
        let stats = scan
            .run(&|b: RecordBatch| Ok(b.num_rows()), &mut |item| {
                if let ScanItem::Batch(n) = item {
                    selected += n;
                }
                Ok(true)
            })
            .unwrap();
        assert_eq!((selected, stats.pruned), (rows, pruned), "{predicate}");
        // The same rows without pruning, with the interpreter, without pushdown.
        for mode in &MODES[1..] {
            let mut args = vec!["filter", s(&f), "--where", predicate, "--count"];
            args.extend(*mode);
            assert_eq!(ok(&args).trim(), rows.to_string(), "{predicate} {mode:?}");
        }
    }
}

/// 300 rows in row groups of 100: `i` = row, `m` = MAIL, SHIP, NULL, héllo in turn
/// (a low-cardinality string column, dictionary-encoded), `s` = `v000`…`v299`.
fn modes(dir: &Path) -> PathBuf {
    let path = dir.join("modes.parquet");
    let i: Vec<i64> = (0..300).collect();
    let m: Vec<Option<&str>> = (0..300)
        .map(|r| [Some("MAIL"), Some("SHIP"), None, Some("héllo")][r % 4])
        .collect();
    let text: Vec<String> = (0..300).map(|r| format!("v{r:03}")).collect();
    write(
        &path,
        vec![
            ("i", Arc::new(Int64Array::from(i))),
            ("m", Arc::new(StringArray::from(m))),
            ("s", Arc::new(StringArray::from(text))),
        ],
        100,
    );
    path
}

/// A conjunction is split into the reader's predicates, cheapest first, each
/// dictionary-encoded VARCHAR conjunct on its own with its column read as a
/// dictionary: the rows, the output values and the rows named in errors are those of
/// the whole predicate, in every mode.
#[test]
fn conjunctions_split_cheapest_first() {
    let dir = TempDir::new().unwrap();
    let f = modes(dir.path());
    let cases = [
        // (predicate, rows, reader predicates with pushdown)
        ("m IN ('MAIL', 'SHIP') AND i < 100", 50, 2),
        ("m = 'héllo' AND i >= 150 AND s LIKE 'v2%'", 25, 3),
        ("m IS NULL AND i < 10", 2, 2),
        ("NOT (m = 'MAIL') AND i < 8", 4, 2),
        // One group only: nothing to split.
        ("i > 10 AND i < 20", 9, 1),
        // Can raise an error (i / 0 where i is 0): never split.
        ("m = 'MAIL' AND 10 / i > 0", 0, 1),
    ];
    for (predicate, rows, parts) in cases {
        for mode in MODES {
            let mut args = vec!["filter", s(&f), "--where", predicate, "--count", "--stats"];
            args.extend(mode);
            let r = run(&args);
            if predicate.contains("10 / i") {
                // Row 0 is MAIL and divides by zero.
                assert!(
                    r.stderr.contains("row 0: division by zero"),
                    "{args:?}: {}",
                    r.stderr
                );
                continue;
            }
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            assert_eq!(r.stdout.trim(), rows.to_string(), "{args:?}");
            if mode.is_empty() {
                let shown = r.stderr.matches("where").count();
                assert_eq!(shown, parts, "{args:?}: {}", r.stderr);
                if parts > 1 {
                    assert!(
                        r.stderr.contains(&format!("part {parts} of {parts}")),
                        "{}",
                        r.stderr
                    );
                }
            }
        }
    }
    // The dictionary column as output: its values, as VARCHAR.
    let csv = ok(&[
        "filter",
        s(&f),
        "--where",
        "m = 'héllo' AND i < 10",
        "--select",
        "i, m",
        "--format",
        "csv",
    ]);
    assert_eq!(csv, "i,m\n3,héllo\n7,héllo\n");
    // An error in a computed output names its row of the file through both
    // predicates' kept rows (row 203 is héllo and divides by zero).
    for mode in MODES {
        let mut args = vec![
            "filter",
            s(&f),
            "--where",
            "m = 'héllo' AND i > 190",
            "--select",
            "i, 1000 / (i - 203)",
            "--batch-size",
            "4",
        ];
        args.extend(mode);
        let r = run(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("modes.parquet, row group 2, row 203: division by zero"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// 300 rows in row groups of 100, in the given string and BLOB layouts: `i` = row,
/// `s` = text starting `k` and the row's three digits (short, long past a view's 12
/// inline bytes, or with CJK), NULL every 7th row; `b` = those bytes, plus a 0xFF
/// byte on even rows, NULL every 5th row.
fn layouts(dir: &Path, name: &str, text: &DataType, blob: &DataType) -> PathBuf {
    use arrow::array::BinaryArray;
    let path = dir.join(format!("{name}.parquet"));
    let s: StringArray = (0..300)
        .map(|r| {
            (r % 7 != 0).then(|| match r % 3 {
                0 => format!("k{r:03}"),
                1 => format!("k{r:03}-ünïcødé text"),
                _ => format!("k{r:03}日本"),
            })
        })
        .collect();
    let b: BinaryArray = (0..300)
        .map(|r| {
            (r % 5 != 0).then(|| {
                let mut v = format!("k{r:03}").into_bytes();
                if r % 2 == 0 {
                    v.push(0xff);
                }
                v
            })
        })
        .collect();
    let cast = |a: ArrayRef, t: &DataType| arrow::compute::cast(&a, t).unwrap();
    write(
        &path,
        vec![
            ("i", Arc::new(Int64Array::from_iter_values(0..300))),
            ("s", cast(Arc::new(s), text)),
            ("b", cast(Arc::new(b), blob)),
        ],
        100,
    );
    path
}

/// Columns written as `LargeUtf8`, `Utf8View`, `LargeBinary` and `BinaryView` are
/// scanned in their own layout (no cast per batch) and answer every predicate, in
/// every mode and output format, as the same data written as `Utf8` and `Binary`;
/// row groups are pruned on their statistics alike.
#[test]
fn string_and_blob_layouts_are_scanned_as_they_are() {
    let dir = TempDir::new().unwrap();
    let plain = layouts(dir.path(), "plain", &DataType::Utf8, &DataType::Binary);
    let others = [
        (
            layouts(
                dir.path(),
                "large",
                &DataType::LargeUtf8,
                &DataType::LargeBinary,
            ),
            DataType::LargeUtf8,
            DataType::LargeBinary,
        ),
        (
            layouts(
                dir.path(),
                "view",
                &DataType::Utf8View,
                &DataType::BinaryView,
            ),
            DataType::Utf8View,
            DataType::BinaryView,
        ),
        (
            layouts(
                dir.path(),
                "mixed",
                &DataType::Utf8View,
                &DataType::LargeBinary,
            ),
            DataType::Utf8View,
            DataType::LargeBinary,
        ),
    ];
    // Hand-computed: row r's `s` starts `k` and its digits (NULL when 7 divides r);
    // `b` is NULL when 5 divides r.
    let s_valid = |r: usize| r % 7 != 0;
    let b_valid = |r: usize| r % 5 != 0;
    let rows = |f: &dyn Fn(usize) -> bool| (0..300).filter(|&r| f(r)).count();
    let cases: Vec<(&str, usize, usize)> = vec![
        ("s = 'k150'", rows(&|r| r == 150), 2),
        ("s = 'k151-ünïcødé text'", 1, 2),
        ("s < 'k050'", rows(&|r| r < 50 && s_valid(r)), 2),
        (
            "s >= 'k250' AND i % 2 = 0",
            rows(&|r| r >= 250 && r % 2 == 0 && s_valid(r)),
            2,
        ),
        ("s LIKE 'k2%'", rows(&|r| r >= 200 && s_valid(r)), 0),
        ("s LIKE '%日本'", rows(&|r| r % 3 == 2 && s_valid(r)), 0),
        ("s IS NULL", rows(&|r| !s_valid(r)), 0),
        ("length(s) > 10", rows(&|r| r % 3 == 1 && s_valid(r)), 0),
        ("upper(s) = 'K152日本'", 1, 0),
        ("b = X'6B313531'", 1, 2),
        ("b = X'6B313532FF'", 1, 2),
        ("b > X'6B32'", rows(&|r| r >= 200 && b_valid(r)), 2),
        (
            "b < X'6B303130' OR s = 'k297'",
            rows(&|r| (r < 10 && b_valid(r)) || r == 297),
            1,
        ),
        ("length(b) = 5", rows(&|r| r % 2 == 0 && b_valid(r)), 0),
    ];
    let count_of = |path: &Path, predicate: &str, mode: &[&str]| {
        let mut args = vec!["filter", s(path), "--where", predicate, "--count"];
        args.extend(mode);
        ok(&args).trim().parse::<usize>().unwrap()
    };
    for (path, text, blob) in &others {
        // The library scan: the dataset's types and the batches' are the file's.
        let dataset = Dataset::open(std::slice::from_ref(path)).unwrap();
        assert_eq!(dataset.schema().field(1).data_type(), text);
        assert_eq!(dataset.schema().field(2).data_type(), blob);
        for (predicate, expected, pruned) in &cases {
            for options in [
                ScanOptions::default(),
                ScanOptions {
                    interpret: true,
                    ..Default::default()
                },
            ] {
                let scan = Scan::new(&dataset, Some(predicate), &[1, 2], options).unwrap();
                let mut selected = 0;
                let stats = scan
                    .run(&|b: RecordBatch| Ok(b), &mut |item| {
                        if let ScanItem::Batch(b) = item {
                            assert_eq!(b.column(0).data_type(), text);
                            assert_eq!(b.column(1).data_type(), blob);
                            selected += b.num_rows();
                        }
                        Ok(true)
                    })
                    .unwrap();
                assert_eq!(
                    (selected, stats.pruned),
                    (*expected, *pruned),
                    "{predicate} {text}"
                );
            }
            // The CLI in every mode, and the same data written as Utf8.
            for mode in MODES {
                assert_eq!(
                    count_of(path, predicate, mode),
                    *expected,
                    "{predicate} {text} {mode:?}"
                );
                assert_eq!(
                    count_of(&plain, predicate, mode),
                    *expected,
                    "{predicate} {mode:?}"
                );
            }
        }
        // Every output format prints what the Utf8 file gives.
        let select = "i, s, b, s || '!' AS t, CASE WHEN i > 1 THEN s END AS c";
        let predicate = "s LIKE 'k0%' OR b > X'6B3239'";
        let filtered = |p: &Path, list: &str, how: &[&str]| {
            let mut args = vec!["filter", s(p), "--where", predicate, "--select", list];
            args.extend(how);
            ok(&args)
        };
        for format in ["table", "csv", "json"] {
            let out = |p: &Path| filtered(p, select, &["--format", format]);
            let expected = out(&plain);
            assert!(expected.contains("k001-ünïcødé text"), "{expected}");
            assert_eq!(out(path), expected, "{format} {text}");
        }
        let statement = |p: &Path| {
            format!(
                "SELECT s, b, length(s) AS n FROM '{}' WHERE s > 'k28' LIMIT 5",
                s(p)
            )
        };
        assert_eq!(
            ok(&["sql", &statement(path), "--format", "csv"]),
            ok(&["sql", &statement(&plain), "--format", "csv"])
        );
        // Parquet and Arrow outputs keep the layout of a column projected as it is
        // and hold the same values.
        for ext in ["parquet", "arrow"] {
            let written = dir.path().join(format!("out.{ext}"));
            filtered(path, "i, s, b", &["-o", s(&written)]);
            let csv = |p: &Path| filtered(p, "i, s, b", &["--format", "csv"]);
            if ext == "parquet" {
                assert_eq!(csv(&written), csv(&plain), "{text}");
                let back = Dataset::open(std::slice::from_ref(&written)).unwrap();
                assert_eq!(back.schema().field(1).data_type(), text);
                assert_eq!(back.schema().field(2).data_type(), blob);
            } else {
                let file = std::fs::File::open(&written).unwrap();
                let reader = arrow::ipc::reader::FileReader::try_new(file, None).unwrap();
                assert_eq!(reader.schema().field(1).data_type(), text);
                let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
                assert_eq!(rows, csv(&plain).lines().count() - 1);
            }
        }
        // `schema` and `explain` name the SQL types, with nothing converted.
        let schema = ok(&["schema", s(path)]);
        assert!(
            schema.contains("VARCHAR") && schema.contains("BLOB"),
            "{schema}"
        );
        assert!(!schema.contains("read as"), "{schema}");
        let explained = ok(&["explain", "--schema", s(path), "s LIKE 'k1%' AND b > X'00'"]);
        assert!(
            explained.contains("optimized:") && explained.contains("LLVM IR"),
            "{explained}"
        );
    }
}

/// Writes `columns` with `props`; a column without NULLs is declared NOT NULL.
fn write_with(
    path: &Path,
    columns: Vec<(&str, ArrayRef)>,
    props: parquet::file::properties::WriterProperties,
) {
    use arrow::datatypes::{Field, Schema};
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), a.null_count() > 0))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch =
        RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.1).collect()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// The rows of a scan (`interpret`: by the interpreter, predicate whole) as CSV lines
/// of the output columns, with its stats.
fn scanned(
    dataset: &Dataset,
    predicate: &str,
    columns: &[usize],
    interpret: bool,
) -> (Vec<String>, broadhead::parquet::ScanStats) {
    let options = ScanOptions {
        interpret,
        threads: 2,
        batch_size: 100,
        ..ScanOptions::default()
    };
    let scan = Scan::new(dataset, Some(predicate), columns, options).unwrap();
    let mut lines = Vec::new();
    let stats = scan
        .run(
            &|b: RecordBatch| {
                let mut out = Vec::new();
                for r in 0..b.num_rows() {
                    let row: Vec<String> = b
                        .columns()
                        .iter()
                        .map(|c| {
                            arrow::util::display::array_value_to_string(c, r).unwrap_or_default()
                        })
                        .collect();
                    out.push(row.join(","));
                }
                Ok(out)
            },
            &mut |item| {
                if let ScanItem::Batch(rows) = item {
                    lines.extend(rows);
                }
                Ok(true)
            },
        )
        .unwrap();
    (lines, stats)
}

/// Conjuncts on dictionary-encoded columns are decided on their dictionaries and keys
/// before the reader runs: in every page layout (format v1 and v2 pages, several
/// pages a chunk, NULL and NOT NULL columns, keys of 0 to 17 bits), for every type
/// read so (INTEGER, BIGINT, DATE, REAL, DOUBLE with NaN and -0.0, DECIMAL as INT32
/// and INT64; VARCHAR as `Utf8` and `Utf8View` and BLOB alone), alone or on several
/// columns, the rows and the output are those of the interpreter on the whole
/// predicate. A chunk that falls back to PLAIN pages is read by the reader.
#[test]
fn conjuncts_on_dictionary_keys_select_the_interpreters_rows() {
    use arrow::array::{
        BinaryArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int32Array,
        StringViewArray,
    };
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    let dir = TempDir::new().unwrap();
    let rows = 2_000usize;
    // A small deterministic generator: every case below is another seed.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |below: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % below
    };
    let floats = [0.5, -0.0, 0.0, f64::NAN, 1e300, -2.25, 7.0];
    let columns = |next: &mut dyn FnMut(u64) -> u64| -> Vec<(&'static str, ArrayRef)> {
        let null = |next: &mut dyn FnMut(u64) -> u64| next(6) == 0;
        let mut col_i = Vec::new();
        let mut col_b = Vec::new();
        let mut col_d = Vec::new();
        let mut col_f = Vec::new();
        let mut col_r = Vec::new();
        let mut col_m = Vec::new();
        let mut col_q = Vec::new();
        let mut col_t = Vec::new();
        let mut col_v = Vec::new();
        let mut col_y = Vec::new();
        let words = ["MAIL", "SHIP", "héllo", "", "AIR REG", "日本語"];
        for _ in 0..rows {
            col_i.push(Some(next(13) as i32 - 6));
            col_b.push((!null(next)).then(|| next(300) as i64 * 1_000_000_007));
            col_d.push(Some(9_000 + next(40) as i32));
            col_f.push((!null(next)).then(|| floats[next(7) as usize]));
            col_r.push(Some(next(9) as f32 / 4.0));
            col_m.push((!null(next)).then(|| next(11) as i128));
            col_q.push(Some(next(50) as i128 * 100));
            col_t.push((!null(next)).then(|| words[next(6) as usize]));
            col_v.push(Some(words[next(6) as usize]));
            col_y.push((!null(next)).then(|| words[next(3) as usize].as_bytes()));
        }
        let decimal = |v: Vec<Option<i128>>, p: u8| -> ArrayRef {
            Arc::new(
                Decimal128Array::from(v)
                    .with_precision_and_scale(p, 2)
                    .unwrap(),
            )
        };
        vec![
            ("i", Arc::new(Int32Array::from(col_i))),
            ("b", Arc::new(Int64Array::from(col_b))),
            ("d", Arc::new(Date32Array::from(col_d))),
            ("f", Arc::new(Float64Array::from(col_f))),
            ("r", Arc::new(Float32Array::from(col_r))),
            ("m", decimal(col_m, 15)),
            ("q", decimal(col_q, 9)),
            ("t", Arc::new(StringArray::from(col_t))),
            ("v", Arc::new(StringViewArray::from(col_v))),
            ("y", Arc::new(BinaryArray::from(col_y))),
        ]
    };
    let layouts: Vec<(&str, WriterProperties, bool)> = vec![
        (
            "v1",
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(700))
                .build(),
            true,
        ),
        (
            "v1-small-pages",
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(1_000))
                .set_data_page_row_count_limit(64)
                .set_write_batch_size(64)
                .set_compression(Compression::SNAPPY)
                .build(),
            true,
        ),
        (
            "v2",
            WriterProperties::builder()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_max_row_group_row_count(Some(1_000))
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(100)
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .build(),
            true,
        ),
        (
            "plain-fallback",
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(1_000))
                .set_dictionary_page_size_limit(1)
                .set_data_page_row_count_limit(64)
                .set_write_batch_size(64)
                .build(),
            false,
        ),
    ];
    let predicates = [
        "i > 0",
        "i BETWEEN -2 AND 3 AND d < DATE '1994-09-01'",
        "b > 150000000000 AND b < 250000000000",
        "b IS NULL AND i = 1",
        "f > 0.0",
        "f = 0.0 OR f IS NULL",
        "f <> f",
        "r >= 1.0 AND i <> 2",
        "m BETWEEN 0.05 AND 0.07 AND q < 24",
        "d >= DATE '1994-08-15' AND d < DATE '1994-09-01' AND m BETWEEN 0.05 AND 0.07 AND q < 24",
        // A conjunct on two columns stays the reader's; `i` and `d` are read by it.
        "d > DATE '1994-08-20' AND i > r AND q > 10 AND r < 1.5",
        // Folded to nothing on some row groups' keys.
        "i > 100 AND q < 24",
        "t IN ('MAIL', 'SHIP') AND i < r",
        "t LIKE 'hé%' AND v = '日本語' AND q < 10",
        "t IS NULL AND v <> '' AND i >= 0",
        "upper(v) = 'AIR REG' AND y = X'4D41494C'",
        "y IS NULL AND i < 0",
        // Several columns, one group: on the values decoded from the keys.
        "i > r AND q > 10 AND d <= DATE '1994-09-20'",
        "b > i AND f < 1",
    ];
    // Several columns after conjuncts on one that keep at most one row in eight:
    // evaluated at the rows those kept only (NULLs in `b` and `f`).
    let narrowing = [
        "t = 'MAIL' AND v = 'SHIP' AND b > i AND d < DATE '1994-09-20'",
        "v = '日本語' AND q < 10 AND i > r AND m IS NOT NULL",
        "t = 'héllo' AND v = 'MAIL' AND (f <> r OR f IS NULL)",
    ];
    for (name, props, keyed) in layouts {
        let mut gathered = 0;
        let path = dir.path().join(format!("{name}.parquet"));
        write_with(&path, columns(&mut next), props);
        let dataset = Dataset::open(std::slice::from_ref(&path)).unwrap();
        for predicate in predicates.into_iter().chain(narrowing) {
            let (expected, plain) = scanned(&dataset, predicate, &[], true);
            assert_eq!(plain.keyed, 0);
            let (got, stats) = scanned(&dataset, predicate, &[], false);
            assert_eq!(got.len(), expected.len(), "{name}: {predicate}");
            if narrowing.contains(&predicate) {
                // Narrowed wherever the keys are read, and not compared on nothing.
                assert_eq!(stats.narrowed > 0, keyed, "{name}: {predicate}");
                assert!(!expected.is_empty(), "{name}: {predicate}");
            }
            let groups = stats.row_groups - stats.pruned;
            assert_eq!(
                stats.keyed,
                if keyed { groups } else { 0 },
                "{name}: {predicate}"
            );
            // The rows' values: every column, and one column only (read without
            // the reader when the keys decide the rows and keep at most half).
            for columns in [&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9][..], &[4]] {
                let (expected, _) = scanned(&dataset, predicate, columns, true);
                let (got, stats) = scanned(&dataset, predicate, columns, false);
                assert_eq!(got, expected, "{name}: {predicate} {columns:?}");
                gathered += stats.gathered;
            }
        }
        assert_eq!(
            gathered > 0,
            keyed,
            "{name}: {gathered} row groups gathered"
        );
        // The command counts the same rows with and without the reader.
        for predicate in ["m BETWEEN 0.05 AND 0.07 AND q < 24", "f <> f OR i = 2"] {
            let count = |extra: &[&str]| {
                let mut args = vec!["filter", s(&path), "--where", predicate, "--count"];
                args.extend(extra);
                ok(&args)
            };
            assert_eq!(count(&[]), count(&["--interpret"]), "{name}: {predicate}");
        }
    }
    // Keys of 17 bits: a row group of more than 65,536 distinct values (and a second
    // of 5), looked up with bounds checks.
    let path = dir.path().join("wide.parquet");
    let w: Vec<i64> = (0..70_000)
        .map(|r| r * 3)
        .chain((0..1_000).map(|r| r % 5))
        .collect();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(70_000))
        .set_dictionary_page_size_limit(1 << 20)
        .build();
    write_with(&path, vec![("w", Arc::new(Int64Array::from(w)))], props);
    let dataset = Dataset::open(&[path]).unwrap();
    for (predicate, count) in [("w < 3", 1 + 600), ("w > 209000", 333), ("w % 2 = 1", 0)] {
        let (got, stats) = scanned(&dataset, predicate, &[0], false);
        let (expected, _) = scanned(&dataset, predicate, &[0], true);
        assert_eq!(got, expected, "{predicate}");
        if predicate != "w % 2 = 1" {
            assert_eq!(got.len(), count, "{predicate}");
            assert_eq!(stats.keyed, stats.row_groups - stats.pruned, "{predicate}");
            assert!(stats.keyed > 0, "{predicate}");
        }
    }
}
