//! The `broadhead` binary end to end, on Parquet files made here: every command and
//! format, JIT = interpreter = no pushdown = no pruning, multi-file inputs, and bad
//! input (exit codes, messages naming files, carets, atomic output).

#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use assert_cmd::Command;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use tempfile::TempDir;

fn broadhead() -> Command {
    Command::cargo_bin("broadhead").unwrap()
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = broadhead().args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    let r = run(args);
    assert_eq!(r.code, 0, "{args:?} failed: {}", r.stderr);
    r.stdout
}

/// A TPC-H lineitem file (11,957 rows in row groups of 1,000), generated once.
fn lineitem() -> &'static Path {
    static DIR: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("lineitem.parquet");
        ok(&[
            "gen",
            "tpch",
            "--scale",
            "0.002",
            "--row-group-size",
            "1000",
            "--quiet",
            path.to_str().unwrap(),
        ]);
        (dir, path)
    })
    .1
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A file with NULLs, NaNs and strings in several row groups.
fn write_odd_file(path: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(10))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
    let i: Vec<Option<i32>> = (0..50)
        .map(|x| if x % 7 == 3 || x >= 40 { None } else { Some(x) })
        .collect();
    let f: Vec<Option<f64>> = (0..50)
        .map(|x| match x % 10 {
            0 => Some(f64::NAN),
            1 => None,
            _ => Some(x as f64 / 2.0),
        })
        .collect();
    let strings: Vec<Option<String>> = (0..50)
        .map(|x| (x % 5 != 0).then(|| format!("s{:02}", x)))
        .collect();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(i)) as ArrayRef,
            Arc::new(Float64Array::from(f)),
            Arc::new(StringArray::from(strings)),
        ],
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

#[test]
fn counts_agree_across_back_ends_pushdown_pruning_and_threads() {
    let f = s(lineitem());
    for predicate in [
        Q6,
        "l_quantity < 24",
        "l_shipmode IN ('AIR', 'MAIL') AND l_orderkey > 5000",
        "l_orderkey < 100",
        "l_orderkey > 1000000000",
        "l_comment LIKE '%fur%' OR l_tax = 0.0",
        "l_returnflag = 'R' AND NOT (l_linestatus = 'F')",
    ] {
        let jit = ok(&["filter", f, "--where", predicate, "--count"]);
        let n: usize = jit.trim().parse().unwrap();
        assert!(jit.ends_with('\n') && jit.lines().count() == 1);
        for extra in [
            &["--interpret"][..],
            &["--no-pushdown"],
            &["--no-prune"],
            &["--threads", "1", "--batch-size", "100"],
            &["--interpret", "--no-pushdown", "--no-prune"],
        ] {
            let mut args = vec!["filter", f, "--where", predicate, "--count"];
            args.extend(extra);
            assert_eq!(ok(&args), jit, "{predicate} with {extra:?}");
        }
        let limited = ok(&["filter", f, "--where", predicate, "--count", "--limit", "7"]);
        assert_eq!(limited.trim(), n.min(7).to_string());
    }
    assert_eq!(
        ok(&["filter", f, "--where", "l_orderkey > 1000000000", "--count"]),
        "0\n"
    );
}

#[test]
fn select_lists_and_output_identical_with_and_without_pushdown() {
    let f = s(lineitem());
    let select = "l_orderkey, l_extendedprice * (1 - l_discount) AS revenue, \
                  abs(l_quantity - 25) AS d, coalesce(l_shipmode, 'x') m, l_shipdate";
    let base = ok(&[
        "filter", f, "--where", Q6, "--select", select, "--format", "csv",
    ]);
    let mut lines = base.lines();
    assert_eq!(lines.next(), Some("l_orderkey,revenue,d,m,l_shipdate"));
    let first = lines.next().unwrap();
    let date = first.rsplit(',').next().unwrap();
    assert!(
        date.len() == 10 && date.starts_with("199"),
        "dates stay dates: {first}"
    );
    for extra in [
        &["--no-pushdown"][..],
        &["--interpret"],
        &["--threads", "1"],
        &["--threads", "2", "--batch-size", "333"],
        &["--no-prune", "--no-pushdown", "--interpret"],
    ] {
        let mut args = vec![
            "filter", f, "--where", Q6, "--select", select, "--format", "csv",
        ];
        args.extend(extra);
        assert_eq!(ok(&args), base, "{extra:?}");
    }
    // Default: all columns, CSV when stdout is not a terminal.
    let all = ok(&["filter", f, "--where", "l_orderkey = 1"]);
    assert!(all.starts_with("l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity"));
    assert_eq!(all.lines().count(), 7);
    // `*` too, and a limit.
    let star = ok(&[
        "filter", f, "--where", "TRUE", "--select", "*", "--limit", "3",
    ]);
    assert_eq!(star.lines().count(), 4);
}

#[test]
fn formats() {
    let f = s(lineitem());
    let args = |fmt: &'static str| {
        vec![
            "filter",
            f,
            "--where",
            "l_quantity > 45",
            "--select",
            "l_orderkey, l_quantity * 2 AS q2",
            "--format",
            fmt,
        ]
    };
    let n: usize = ok(&["filter", f, "--where", "l_quantity > 45", "--count"])
        .trim()
        .parse()
        .unwrap();
    assert!(n > 25);

    let json = ok(&args("json"));
    assert_eq!(json.lines().count(), n);
    assert!(json
        .lines()
        .all(|l| l.starts_with("{\"l_orderkey\":") && l.contains("\"q2\":")));

    let table = ok(&args("table"));
    assert!(table.contains("| l_orderkey | q2"), "{table}");
    assert!(
        table.contains(&format!("{n} rows, {} not shown", n - 20)),
        "{table}"
    );
    let short = ok(&[
        "filter",
        f,
        "--where",
        "l_orderkey = 1",
        "--format",
        "table",
        "--select",
        "l_orderkey",
    ]);
    assert!(short.ends_with("6 rows\n"), "{short}");

    let dir = TempDir::new().unwrap();
    for (fmt, name) in [("parquet", "o.parquet"), ("arrow", "o.arrow")] {
        let out = dir.path().join(name);
        let mut a = args(fmt);
        a.extend(["--output", s(&out)]);
        ok(&a);
        let file = std::fs::File::open(&out).unwrap();
        let rows: usize = if fmt == "parquet" {
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum()
        } else {
            arrow::ipc::reader::FileReader::try_new(file, None)
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum()
        };
        assert_eq!(rows, n, "{fmt}");
    }
    // The format follows the output file's extension.
    let out = dir.path().join("o.json");
    ok(&[
        "filter",
        f,
        "--where",
        "l_orderkey = 1",
        "--output",
        s(&out),
    ]);
    assert!(std::fs::read_to_string(&out).unwrap().starts_with('{'));
}

#[test]
fn sql_statements() {
    let f = s(lineitem());
    let n = ok(&["filter", f, "--where", Q6, "--count"]);
    let count = ok(&["sql", &format!("SELECT count(*) FROM '{f}' WHERE {Q6}")]);
    assert_eq!(count, format!("count_star()\n{n}"));
    let rows = ok(&[
        "sql",
        &format!(
            "SELECT l_orderkey, l_extendedprice * l_discount AS rev FROM '{f}' WHERE {Q6} LIMIT 3"
        ),
    ]);
    assert_eq!(rows.lines().count(), 4);
    assert!(rows.starts_with("l_orderkey,rev\n"));
    let same = ok(&[
        "filter",
        f,
        "--where",
        Q6,
        "--select",
        "l_orderkey, l_extendedprice * l_discount AS rev",
        "--limit",
        "3",
    ]);
    assert_eq!(rows, same);
    let r = run(&[
        "sql",
        &format!("SELECT l_orderkey FROM '{f}' ORDER BY l_orderkey"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("unsupported"), "{}", r.stderr);
}

#[test]
fn multiple_files_directories_and_globs() {
    let dir = TempDir::new().unwrap();
    let sub = dir.path().join("parts");
    std::fs::create_dir(&sub).unwrap();
    for name in ["a.parquet", "b.parquet"] {
        std::fs::copy(lineitem(), sub.join(name)).unwrap();
    }
    std::fs::write(sub.join("README.txt"), "not data").unwrap();
    let one: usize = ok(&["filter", s(lineitem()), "--where", Q6, "--count"])
        .trim()
        .parse()
        .unwrap();
    let glob = format!("{}/*.parquet", s(&sub));
    for paths in [
        vec![s(&sub)],
        vec![glob.as_str()],
        vec![s(&sub.join("a.parquet")), s(&sub.join("b.parquet"))],
    ] {
        let mut args = vec!["filter"];
        args.extend(&paths);
        args.extend(["--where", Q6, "--count"]);
        assert_eq!(ok(&args).trim(), (2 * one).to_string(), "{paths:?}");
    }
    // Output keeps file order: a's rows, then b's.
    let keys = ok(&[
        "filter",
        &glob,
        "--where",
        "l_linenumber = 7",
        "--select",
        "l_orderkey",
    ]);
    let keys: Vec<u64> = keys.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    let half = keys.len() / 2;
    assert_eq!(keys[..half], keys[half..]);
    assert!(keys[..half].windows(2).all(|w| w[0] <= w[1]));

    // A file with another schema is named.
    let other = sub.join("c.parquet");
    write_odd_file(&other);
    let r = run(&["filter", s(&sub), "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("c.parquet") && r.stderr.contains("schema differs"),
        "{}",
        r.stderr
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let r = run(&["filter", s(&empty), "--where", "TRUE", "--count"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no .parquet files"), "{}", r.stderr);
    let r = run(&[
        "filter",
        &format!("{}/*.nothing", s(&sub)),
        "--where",
        "TRUE",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no file matches"), "{}", r.stderr);
}

#[test]
fn nulls_nans_and_pruning() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("odd.parquet");
    write_odd_file(&path);
    let f = s(&path);
    for predicate in [
        "i IS NULL",
        "i IS NOT NULL",
        "i < 5",
        "i > 35",
        "i = 45",
        "i IN (1, 2, 44)",
        "f > 100.0",
        "f = 'NaN'::double",
        "f < 3",
        "f IS NULL",
        "s = 's13'",
        "s > 's40'",
        "s IS NULL AND i > 20",
        "NOT (i < 30)",
        "i BETWEEN 12 AND 18",
    ] {
        let base = ok(&[
            "filter",
            f,
            "--where",
            predicate,
            "--no-prune",
            "--interpret",
            "--no-pushdown",
        ]);
        for extra in [
            &[][..],
            &["--interpret"],
            &["--no-pushdown"],
            &["--threads", "1"],
        ] {
            let mut args = vec!["filter", f, "--where", predicate];
            args.extend(extra);
            assert_eq!(ok(&args), base, "{predicate} {extra:?}");
        }
    }
    assert_eq!(ok(&["filter", f, "--where", "f > 100.0", "--count"]), "5\n"); // the NaNs
    assert_eq!(
        ok(&["filter", f, "--where", "i IS NULL", "--count"]),
        "16\n"
    );
}

#[test]
fn expression_errors_show_a_caret_and_exit_2() {
    let f = s(lineitem());
    let r = run(&["filter", f, "--where", "l_quantiy < 24", "--count"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("l_quantity"), "suggestion: {}", r.stderr);
    assert!(
        r.stderr.contains("  l_quantiy < 24\n  ^^^^^^^^^"),
        "{}",
        r.stderr
    );

    let r = run(&["filter", f, "--where", "l_quantity < < 24"]);
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stderr.lines().collect();
    let caret = lines
        .iter()
        .position(|l| l.trim_start().starts_with('^'))
        .expect(&r.stderr);
    assert_eq!(lines[caret - 1], "  l_quantity < < 24");
    assert_eq!(
        lines[caret].find('^'),
        Some(2 + "l_quantity < ".len()),
        "{}",
        r.stderr
    );

    let r = run(&[
        "filter",
        f,
        "--where",
        "TRUE",
        "--select",
        "l_orderkey, nosuch(l_tax)",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--select") && r.stderr.contains('^'),
        "{}",
        r.stderr
    );

    let r = run(&["filter", f, "--where", "l_quantity + 1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    // Usage errors (clap) are exit 2 too; no panics anywhere.
    assert_eq!(run(&["filter", f]).code, 2);
    assert_eq!(run(&["frobnicate"]).code, 2);
}

#[test]
fn bad_files_are_named() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("missing.parquet");
    let r = run(&["filter", s(&missing), "--where", "TRUE"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("missing.parquet"), "{}", r.stderr);

    let text = dir.path().join("text.parquet");
    std::fs::write(&text, "id,name\n1,a\n").unwrap();
    let r = run(&["filter", s(&text), "--where", "TRUE"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("text.parquet") && r.stderr.contains("not a Parquet file"),
        "{}",
        r.stderr
    );

    let bytes = std::fs::read(lineitem()).unwrap();
    let truncated = dir.path().join("truncated.parquet");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let r = run(&["schema", s(&truncated)]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("truncated.parquet"), "{}", r.stderr);

    // Garbage in the data pages, footer intact.
    let mut corrupted = bytes.clone();
    for b in &mut corrupted[4..bytes.len() / 2] {
        *b = b.wrapping_mul(31).wrapping_add(7);
    }
    let path = dir.path().join("corrupted.parquet");
    std::fs::write(&path, &corrupted).unwrap();
    let r = run(&["filter", s(&path), "--where", "l_quantity < 24", "--count"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("corrupted.parquet"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn output_files_are_atomic_and_never_an_input() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("in.parquet");
    std::fs::copy(lineitem(), &input).unwrap();
    let out = dir.path().join("out.csv");
    // A runtime error (division by zero) leaves nothing behind.
    let r = run(&[
        "filter",
        s(&input),
        "--where",
        "TRUE",
        "--select",
        "l_orderkey / (l_linenumber - l_linenumber)",
        "--output",
        s(&out),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("division by zero"), "{}", r.stderr);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "only the input is left: {names:?}");
    // Success writes the whole file; a later failure leaves it as it was.
    ok(&[
        "filter",
        s(&input),
        "--where",
        "l_orderkey = 1",
        "--output",
        s(&out),
    ]);
    let before = std::fs::read(&out).unwrap();
    assert_eq!(String::from_utf8_lossy(&before).lines().count(), 7);
    let r = run(&[
        "filter",
        s(&input),
        "--where",
        "l_orderkey / 0 > 1",
        "--output",
        s(&out),
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // Writing onto an input is refused.
    let r = run(&[
        "filter",
        s(&input),
        "--where",
        "TRUE",
        "--output",
        s(&input),
        "--format",
        "parquet",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("refusing"), "{}", r.stderr);
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(lineitem()).unwrap()
    );
}

#[test]
fn schema_explain_bench_and_demo() {
    let f = s(lineitem());
    let schema = ok(&["schema", f]);
    assert!(schema.contains("rows:       119"), "{schema}");
    assert!(schema.contains("row groups: 12"), "{schema}");
    assert!(schema.contains("l_shipdate") && schema.contains("DATE"));
    assert!(schema.contains("l_quantity       DOUBLE"), "{schema}");

    let parsed = ok(&["explain", "a < 2 AND b LIKE 'x%'"]);
    assert!(parsed.starts_with("parsed:"), "{parsed}");
    assert!(!parsed.contains("== LLVM IR"));
    let full = ok(&["explain", "--schema", f, "l_quantity < 24"]);
    for part in [
        "parsed:",
        "typed:",
        "optimized:",
        "== LLVM IR ==",
        "after O3",
    ] {
        assert!(full.contains(part), "{part}: {full}");
    }
    assert!(!full.contains("== assembly =="));
    assert!(ok(&["explain", "--schema", f, "--asm", "l_quantity < 24"]).contains("== assembly =="));
    assert!(ok(&["explain", "--schema", f, "l_extendedprice * 2"]).contains("LLVM IR"));
    let r = run(&["explain", "--schema", f, "nope > 1"]);
    assert_eq!(r.code, 2);

    let bench = ok(&[
        "bench",
        f,
        "--where",
        Q6,
        "--select",
        "l_extendedprice * l_discount",
        "--runs",
        "1",
    ]);
    assert!(bench.matches("ns/row").count() == 4, "{bench}");
    let demo = ok(&["demo", "--scale", "0.002", "--runs", "1"]);
    assert!(demo.contains("(equal)"), "{demo}");
}
