//! The `broadhead` binary end to end, on Parquet files made here: every command and
//! format, JIT = interpreter = no pushdown = no pruning, multi-file inputs, and bad
//! input (exit codes, messages naming files, carets, atomic output).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use assert_cmd::Command;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use tempfile::TempDir;

mod common;
use common::Run;

/// The binary, with the on-disk kernel cache off (tests never write to ~/.cache; the
/// kernel cache tests below give it a temporary directory).
fn broadhead() -> Command {
    let mut c = Command::cargo_bin("broadhead").unwrap();
    c.env("BROADHEAD_KERNEL_CACHE", "off");
    c
}

fn run(args: &[&str]) -> Run {
    let out = broadhead().args(args).output().unwrap();
    Run::from(out)
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

/// `--stats` says how the expressions ran: which tier evaluated how many batches
/// (the kernels compile in the background; which tier a batch got depends on the
/// machine, so only the totals and the shape are checked).
/// The file mapped into memory (the default) and read (`BROADHEAD_MMAP=off`) give
/// the same rows: every column written as CSV, and a count.
#[test]
fn mapped_and_read_files_give_the_same_rows() {
    let f = s(lineitem());
    for args in [
        vec!["filter", f, "--where", Q6, "--format", "csv"],
        vec!["filter", f, "--where", "l_comment LIKE '%fur%'", "--count"],
    ] {
        let mapped = ok(&args);
        let out = broadhead()
            .env("BROADHEAD_MMAP", "off")
            .args(&args)
            .output()
            .unwrap();
        let read = Run::from(out);
        assert_eq!(read.code, 0, "{}", read.stderr);
        assert_eq!(mapped, read.stdout, "{args:?}");
        // Rows found: a header and rows, or a count that is not 0.
        assert!(
            mapped.lines().count() > 1 || mapped.trim().parse::<u64>().is_ok_and(|n| n > 0),
            "{args:?}: {mapped}"
        );
    }
}

#[test]
fn stats_report_the_tiers() {
    let f = s(lineitem());
    let r = run(&[
        "filter",
        f,
        "--where",
        Q6,
        "--select",
        "l_extendedprice * l_discount AS revenue",
        "--format",
        "csv",
        "--stats",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |prefix: &str| {
        r.stderr
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in {}", r.stderr))
            .to_string()
    };
    assert!(line("row groups: ").ends_with(" pruned"), "{}", r.stderr);
    // Q6's conjuncts are decided on the dictionaries of its three columns, one
    // part a column (a batch: a row group's dictionary).
    assert_eq!(
        line("row groups decided on dictionary keys: "),
        "row groups decided on dictionary keys: 12 of 12"
    );
    let parts = [
        "where, part 1 of 3:  ",
        "where, part 2 of 3:  ",
        "where, part 3 of 3:  ",
    ];
    for prefix in parts.into_iter().chain(["select: "]) {
        let l = line(prefix);
        assert!(l.contains(" compiled (tiered); "), "{l}");
        let counts: Vec<u64> = l[prefix.len()..]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .take(2)
            .map(|w| w.parse().unwrap())
            .collect();
        assert!(counts[0] + counts[1] >= 1, "{l}");
    }
    // Without --stats, nothing on stderr.
    let quiet = run(&["filter", f, "--where", Q6, "--count"]);
    assert_eq!(quiet.stderr, "");
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
    // DECIMAL(15,2) * 2 is DECIMAL(18,2) (DuckDB's type: 2 is a TINYINT literal),
    // printed exactly.
    assert!(table.contains("│ l_orderkey │      q2       │"), "{table}");
    assert!(table.contains("│   bigint   │ decimal(18,2) │"), "{table}");
    assert!(table.contains("│         98.00 │"), "{table}");
    assert!(
        table.contains(&format!(
            "{n} rows (20 shown; use --limit, or --format csv)"
        )),
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
    assert!(
        r.stderr.contains("ORDER BY is not supported"),
        "{}",
        r.stderr
    );
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
    assert_eq!(run(&["filter"]).code, 2);
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
    assert!(
        schema.contains("l_quantity       DECIMAL(15,2)"),
        "{schema}"
    );

    let parsed = ok(&["explain", "a < 2 AND b LIKE 'x%'"]);
    assert!(parsed.starts_with("parsed:"), "{parsed}");
    assert!(!parsed.contains("== LLVM IR"));
    let full = ok(&["explain", "--schema", f, "l_quantity < 24"]);
    for part in [
        "parsed:",
        "typed:",
        "optimized:",
        "type:      BOOLEAN\n",
        "== LLVM IR ==",
        "== LLVM IR (after the Quick pipeline) ==",
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

/// `explain` lists the subtrees the interpreter computes for the kernel, and why.
#[test]
fn explain_lists_interpreted_nodes() {
    let f = s(lineitem());
    let out = ok(&[
        "explain",
        "--schema",
        f,
        "interpreted(l_quantity) < 24 AND l_discount > 0.05",
    ]);
    assert!(out.contains("backend:   JIT (LLVM)"), "{out}");
    assert!(
        out.contains(
            "interpreted: interpreted(CAST(l_quantity AS DOUBLE)) — interpreted() is computed by the interpreter"
        ),
        "{out}"
    );
    let all = ok(&["explain", "--schema", f, "l_quantity < 24"]);
    assert!(!all.contains("interpreted:"), "{all}");
}

/// A file with types people's files have: named time zones (as pyarrow and Polars
/// write them), decimals, lists; with NULLs, NaN and infinities.
fn write_typed_file(path: &Path) {
    use arrow::array::{Decimal128Array, ListBuilder, StringBuilder, TimestampMicrosecondArray};
    let mut tags = ListBuilder::new(StringBuilder::new());
    tags.values().append_value("a");
    tags.values().append_value("b");
    tags.append(true);
    tags.append(false);
    tags.values().append_value("c");
    tags.append(true);
    let ts = vec![Some(1_700_000_000_000_000i64), None, Some(0)];
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new(
            "utc",
            DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new(
            "ny",
            DataType::Timestamp(
                arrow::datatypes::TimeUnit::Microsecond,
                Some("America/New_York".into()),
            ),
            true,
        ),
        Field::new("price", DataType::Decimal128(15, 2), true),
        Field::new("f", DataType::Float64, true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(TimestampMicrosecondArray::from(ts.clone()).with_timezone("UTC")),
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("America/New_York")),
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None, Some(-5)])
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
            Arc::new(Float64Array::from(vec![
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ])),
            Arc::new(tags.finish()),
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn typed_file() -> &'static Path {
    static DIR: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("typed.parquet");
        write_typed_file(&path);
        (dir, path)
    })
    .1
}

fn odd_file() -> &'static Path {
    static DIR: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("odd.parquet");
        write_odd_file(&path);
        (dir, path)
    })
    .1
}

#[test]
fn expressions_may_start_with_a_minus() {
    let f = s(odd_file());
    let n = ok(&["filter", f, "--where", "-3.5 <= i", "--count"]);
    assert_eq!(n, ok(&["filter", f, "--where", "i >= -3.5", "--count"]));
    let r = run(&[
        "filter", f, "-w", "-i < 0", "--select", "-i AS m", "--limit", "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("m\n"), "{}", r.stdout);
    assert!(ok(&["explain", "--schema", f, "-i"]).contains("typed:"));
    assert!(ok(&["explain", "-1 + i"]).starts_with("parsed:"));
    let bench = ok(&["bench", f, "--select", "-i", "--runs", "1"]);
    assert!(bench.contains("ns/row"), "{bench}");
}

#[test]
fn named_time_zones_print_in_every_format() {
    let f = s(typed_file());
    for format in ["table", "csv", "json"] {
        let out = ok(&[
            "filter", f, "--where", "TRUE", "--select", "utc, ny", "--format", format,
        ]);
        assert!(out.contains("2023-11-14T22:13:20"), "{format}: {out}");
        // New York is five hours behind UTC in November.
        assert!(out.contains("2023-11-14T17:13:20"), "{format}: {out}");
    }
}

/// Without the feature `datafusion`, what the scan cannot run is an error naming the
/// clause (a caret under it) and the build that runs it.
#[cfg(not(feature = "datafusion"))]
#[test]
fn statements_beyond_the_scan_say_which_build_runs_them() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("f.parquet");
    std::fs::copy(odd_file(), &path).unwrap();
    let f = s(&path);
    let sql = |q: String| run(&["sql", &q]);
    let q = format!("SELECT DISTINCT i FROM '{f}'");
    let r = sql(q.clone());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("in the statement: DISTINCT is not supported")
            && r.stderr.contains(&format!("  {q}\n         ^^^^^^^^")),
        "{}",
        r.stderr
    );
    for (q, says) in [
        (
            format!("SELECT sum(i) FROM '{f}'"),
            "the aggregate sum() is not supported",
        ),
        (
            format!("SELECT i FROM '{f}' ORDER BY i"),
            "ORDER BY is not supported",
        ),
        (
            format!("SELECT i FROM '{f}' GROUP BY i"),
            "GROUP BY is not supported",
        ),
        (
            format!("SELECT i FROM '{f}' a JOIN '{f}' b ON true"),
            "JOIN is not supported",
        ),
    ] {
        let r = sql(q.clone());
        assert_eq!(r.code, 2, "{q}");
        assert!(r.stderr.contains(says), "{q}: {}", r.stderr);
        assert!(r.stderr.contains("supported: SELECT"), "{q}: {}", r.stderr);
        assert!(r.stderr.contains('^'), "{q}: {}", r.stderr);
        // The build that runs it, in words.
        assert!(
            r.stderr
                .contains("cargo install --path cli --features datafusion"),
            "{q}: {}",
            r.stderr
        );
    }
    for q in [
        format!("SELECT i FROM '{f}' WHERE i IN (SELECT i FROM '{f}')"),
        format!("SELECT row_number() OVER () FROM '{f}'"),
        format!("EXPLAIN SELECT i FROM '{f}' ORDER BY i"),
    ] {
        let r = sql(q.clone());
        assert_eq!(r.code, 2, "{q}");
        assert!(
            r.stderr.contains("--features datafusion"),
            "{q}: {}",
            r.stderr
        );
    }
    let r = run(&["sql", "--datafusion", &format!("SELECT i FROM '{f}'")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--features datafusion"), "{}", r.stderr);
}

#[test]
fn sql_statements_are_parsed_whole() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("f.parquet");
    std::fs::copy(odd_file(), &path).unwrap();
    let f = s(&path);
    let sql = |q: String| run(&["sql", &q]);

    let r = sql(format!(
        "SELECT i, i IS DISTINCT FROM 5 AS v FROM '{f}' WHERE i < 7"
    ));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("i,v\n0,true\n"), "{}", r.stdout);
    // count(*) is the count of matching rows; LIMIT and OFFSET apply to its one row.
    let all = ok(&["filter", f, "--count"]);
    assert_eq!(all, "50\n");
    for (q, expected) in [
        (
            format!("SELECT count(*) FROM '{f}' LIMIT 2"),
            "count_star()\n50\n",
        ),
        (
            format!("SELECT count(*) AS n FROM '{f}' WHERE i < 5"),
            "n\n4\n",
        ),
        (
            format!("SELECT count(*) FROM '{f}' LIMIT 0"),
            "count_star()\n",
        ),
        (format!("SELECT i FROM '{f}' LIMIT 0"), "i\n"),
        (
            format!("SELECT i FROM '{f}' WHERE i < 10 LIMIT 2 OFFSET 3"),
            "i\n4\n5\n",
        ),
        // The file as DuckDB takes it: read_parquet, double quotes.
        (
            format!("SELECT * FROM read_parquet('{f}') WHERE i = 4"),
            "i,f,s\n4,2.0,s04\n",
        ),
        (
            format!("SELECT i * 2 FROM \"{f}\" WHERE i = 4"),
            "(i * 2)\n8\n",
        ),
        // The expression forms `parse_expr` reads: `#` is XOR, functions of strings.
        (
            format!("SELECT i # 1 AS x, upper(s) || '!' AS u FROM '{f}' WHERE i = 4"),
            "x,u\n5,S04!\n",
        ),
    ] {
        let r = sql(q.clone());
        assert_eq!(
            (r.stdout.as_str(), r.code),
            (expected, 0),
            "{q}: {}",
            r.stderr
        );
    }
    // An unquoted file name, as DuckDB takes it.
    let out = broadhead()
        .current_dir(dir.path())
        .args(["sql", "SELECT count(*) FROM f.parquet"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "count_star()\n50\n");

    // Expression errors point into the statement, not into flags nobody typed.
    let q = format!("SELECT i FROM '{f}' WHERE nosuch > 1");
    let r = sql(q.clone());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("in the statement: unknown column 'nosuch'")
            && !r.stderr.contains("--where"),
        "{}",
        r.stderr
    );
    let caret = r.stderr.lines().last().unwrap();
    assert_eq!(
        caret.find('^'),
        Some(2 + q.find("nosuch").unwrap()),
        "{}",
        r.stderr
    );
}

#[test]
fn json_writes_nan_and_infinities_as_strings() {
    let f = s(typed_file());
    let out = ok(&[
        "filter", f, "--where", "TRUE", "--select", "id, f", "--format", "json",
    ]);
    assert_eq!(
        out,
        "{\"id\":1,\"f\":\"NaN\"}\n{\"id\":2,\"f\":\"Infinity\"}\n{\"id\":3,\"f\":\"-Infinity\"}\n"
    );
    let odd = ok(&[
        "filter",
        s(odd_file()),
        "--where",
        "i < 2",
        "--format",
        "json",
    ]);
    assert_eq!(
        odd,
        "{\"i\":0,\"f\":\"NaN\",\"s\":null}\n{\"i\":1,\"f\":null,\"s\":\"s01\"}\n"
    );
}

#[test]
fn csv_with_no_rows_has_a_header() {
    let f = s(odd_file());
    assert_eq!(ok(&["filter", f, "--where", "i > 1000"]), "i,f,s\n");
    assert_eq!(
        ok(&["filter", f, "--where", "i > 1000", "--select", "i + 1 AS j"]),
        "j\n"
    );
}

#[test]
fn nested_columns_are_written_as_text_in_csv() {
    let f = s(typed_file());
    let out = ok(&[
        "filter", f, "--where", "TRUE", "--select", "id, tags", "--format", "csv",
    ]);
    assert_eq!(out, "id,tags\n1,\"[a, b]\"\n2,\n3,[c]\n");
    let table = ok(&[
        "filter", f, "--where", "TRUE", "--select", "id, tags", "--format", "table",
    ]);
    assert!(
        table.contains("[a, b]") && table.contains("varchar[]"),
        "{table}"
    );
}

#[test]
fn count_without_a_predicate_counts_every_row() {
    assert_eq!(ok(&["filter", s(odd_file()), "--count"]), "50\n");
    assert_eq!(ok(&["filter", s(lineitem()), "--count"]), "11957\n");
}

#[test]
fn output_to_devices_pipes_and_symlinks_is_written_through() {
    let f = s(odd_file());
    let dir = TempDir::new().unwrap();
    // /dev/stdout (a pipe here): the rows arrive on stdout.
    let out = ok(&[
        "filter",
        f,
        "--where",
        "i = 4",
        "-o",
        "/dev/stdout",
        "--format",
        "csv",
    ]);
    assert_eq!(out, "i,f,s\n4,2.0,s04\n");
    // A symlink stays a symlink; the file it points to gets the output.
    let real = dir.path().join("real.csv");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    ok(&["filter", f, "--where", "i = 4", "-o", s(&link)]);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "i,f,s\n4,2.0,s04\n"
    );
    // A character device stays a device (a node of /dev/null's numbers, where root
    // may make one).
    let null = dir.path().join("null");
    let made = std::process::Command::new("mknod")
        .args([s(&null), "c", "1", "3"])
        .status()
        .is_ok_and(|st| st.success());
    if made {
        ok(&[
            "filter",
            f,
            "--where",
            "TRUE",
            "-o",
            s(&null),
            "--format",
            "csv",
        ]);
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".broadhead-")),
        "{names:?}"
    );
}

/// Runs with stdout a pipe whose reader has gone: every write fails with EPIPE.
#[allow(clippy::incompatible_msrv)]
fn run_into_closed_pipe(args: &[&str]) -> Run {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("broadhead"))
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn output_errors_do_not_panic() {
    let f = s(odd_file());
    // A reader that went away (`| head`): exit 0, nothing on stderr.
    for args in [
        &["schema", f][..],
        &["explain", "a > 1"],
        &["bench", f, "--where", "i > 1", "--runs", "1"],
        &["demo", "--scale", "0.002", "--runs", "1"],
        &["filter", f, "--where", "TRUE", "--count"],
        &["filter", f, "--where", "TRUE"],
        &["sql", &format!("SELECT count(*) FROM '{f}'")],
    ] {
        let r = run_into_closed_pipe(args);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
    }
    // A full disk: exit 1 with a message.
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        &["explain", "a > 1"][..],
        &["schema", f],
        &["filter", f, "--where", "TRUE"],
    ] {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("broadhead"))
            .env("BROADHEAD_KERNEL_CACHE", "off")
            .args(args)
            .stdout(full())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device") && !stderr.contains("internal error"),
            "{args:?}: {stderr}"
        );
    }
    // An error with nowhere to report it: exit 1, no abort.
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("broadhead"))
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .args(["filter", "/nonexistent.parquet", "--where", "TRUE"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn gen_rejects_row_groups_of_zero_rows() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("x.parquet");
    let r = run(&[
        "gen",
        "tpch",
        "--scale",
        "0.001",
        "--row-group-size",
        "0",
        s(&out),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--row-group-size"), "{}", r.stderr);
    assert!(!out.exists());
}

#[test]
fn gen_in_parallel_parts_writes_the_table_in_order() {
    let dir = TempDir::new().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("customer-{threads}.parquet"));
        ok(&[
            "gen",
            "tpch",
            "--table",
            "customer",
            "--scale",
            "2",
            "--threads",
            threads,
            "--quiet",
            s(&out),
        ]);
        outputs.push(out);
    }
    // 300,000 customers in two parts, keys 1, 2, … in order whatever the threads.
    let keys = ok(&["filter", s(&outputs[1]), "--select", "c_custkey"]);
    let keys: Vec<u64> = keys.lines().skip(1).map(|k| k.parse().unwrap()).collect();
    assert_eq!(keys.len(), 300_000);
    assert!(keys.iter().enumerate().all(|(i, k)| *k == i as u64 + 1));
    assert_eq!(
        std::fs::read(&outputs[0]).unwrap(),
        std::fs::read(&outputs[1]).unwrap()
    );
}

#[test]
fn tables_show_nulls_types_and_fit_the_terminal() {
    let f = s(odd_file());
    let table = ok(&[
        "filter",
        f,
        "--where",
        "i IS NULL OR i < 2",
        "--format",
        "table",
    ]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[1], "│    i    │   f    │    s    │", "{table}");
    assert_eq!(lines[2], "│ integer │ double │ varchar │", "{table}");
    assert!(table.contains("│    NULL │"), "{table}");
    assert!(table.contains("│       0 │    NaN │ NULL    │"), "{table}");
    assert!(table.ends_with("18 rows\n"), "{table}");
    // Narrow: middle columns are left out and the footer says so.
    let narrow = broadhead()
        .env("COLUMNS", "30")
        .args([
            "filter",
            s(lineitem()),
            "--where",
            "TRUE",
            "--format",
            "table",
            "--limit",
            "3",
        ])
        .output()
        .unwrap();
    let narrow = String::from_utf8_lossy(&narrow.stdout);
    assert!(narrow.lines().all(|l| console_width(l) <= 30), "{narrow}");
    assert!(narrow.contains('…'), "{narrow}");
    assert!(narrow.contains("16 columns ("), "{narrow}");
}

fn console_width(s: &str) -> usize {
    s.chars().count()
}

#[test]
fn schema_prints_sql_type_names() {
    let out = ok(&["schema", s(typed_file())]);
    for t in [
        "DECIMAL(15,2)",
        "TIMESTAMP WITH TIME ZONE",
        "VARCHAR[]",
        "INTEGER NOT NULL",
    ] {
        assert!(out.contains(t), "{t}: {out}");
    }
    // Decimals are read as they are.
    assert!(!out.contains("(read as DOUBLE)"), "{out}");
}

/// Waits (without a time limit: the commands below run far longer than it takes to
/// start) until `dir` holds a `.broadhead-*` file.
fn wait_for_temporary_file(dir: &Path, child: &mut std::process::Child) {
    loop {
        let found = std::fs::read_dir(dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".broadhead-")
        });
        if found {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("finished ({status}) before its temporary file was seen");
        }
        std::thread::yield_now();
    }
}

#[test]
fn interrupted_runs_leave_no_temporary_files() {
    let dir = TempDir::new().unwrap();
    // An input that takes minutes to filter one row per batch.
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for i in 0..50 {
        std::os::unix::fs::symlink(lineitem(), input.join(format!("{i:02}.parquet"))).unwrap();
    }
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("broadhead");
    // Each run gets the signals in turn: SIGPIPE is ignored (a closed pipe is a failed
    // write instead), so the SIGTERM after it ends that run.
    for (signals, code) in [
        (&["INT"][..], 130),
        (&["TERM"], 143),
        (&["HUP"], 129),
        (&["QUIT"], 131),
        (&["USR1"], 138),
        (&["USR2"], 140),
        (&["ALRM"], 142),
        (&["PIPE", "TERM"], 143),
    ] {
        for args in [
            vec![
                "filter".to_string(),
                s(&input).to_string(),
                "--where".into(),
                "TRUE".into(),
                "--batch-size".into(),
                "1".into(),
                "--threads".into(),
                "1".into(),
                "-o".into(),
                s(&out_dir.join("q.csv")).to_string(),
            ],
            vec![
                "gen".into(),
                "tpch".into(),
                "--scale".into(),
                "1000".into(),
                s(&out_dir.join("g.parquet")).to_string(),
            ],
        ] {
            let mut child = std::process::Command::new(&bin)
                .env("BROADHEAD_KERNEL_CACHE", "off")
                .args(&args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            wait_for_temporary_file(&out_dir, &mut child);
            for signal in signals {
                let killed = std::process::Command::new("kill")
                    .args([format!("-{signal}"), child.id().to_string()])
                    .status()
                    .unwrap();
                assert!(killed.success());
            }
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(code), "{signals:?} {args:?}: {status}");
            let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
            assert!(left.is_empty(), "{signals:?} {args:?}: {left:?}");
        }
    }
}

/// A file with a BLOB column and a dictionary-encoded string column.
fn blob_file() -> &'static Path {
    static DIR: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("blobs.parquet");
        let blobs: Vec<Option<&[u8]>> = vec![Some(b"A\xff\x00"), None, Some(b"\\")];
        let dictionary: arrow::array::DictionaryArray<arrow::datatypes::Int32Type> =
            vec!["x", "y", "x"].into_iter().collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("b", DataType::Binary, true),
            Field::new(
                "d",
                arrow::array::Array::data_type(&dictionary).clone(),
                false,
            ),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow::array::BinaryArray::from(blobs)) as ArrayRef,
                Arc::new(dictionary),
            ],
        )
        .unwrap();
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        (dir, path)
    })
    .1
}

#[test]
fn blobs_print_as_text_and_dictionaries_filter() {
    let f = s(blob_file());
    let csv = ok(&[
        "filter",
        f,
        "--where",
        "b > X'41'",
        "--select",
        "b, d",
        "--format",
        "csv",
    ]);
    assert_eq!(csv, "b,d\nA\\xFF\\x00,x\n\\x5C,x\n");
    let json = ok(&[
        "filter",
        f,
        "--where",
        "b > X'41'",
        "--select",
        "b",
        "--format",
        "json",
    ]);
    assert_eq!(json, "{\"b\":\"A\\\\xFF\\\\x00\"}\n{\"b\":\"\\\\x5C\"}\n");
    let table = ok(&["filter", f, "--where", "b IS NULL", "--format", "table"]);
    assert!(table.contains("blob") && table.contains("NULL"), "{table}");
    let table = ok(&[
        "filter",
        f,
        "--where",
        "octet_length(b) = 1",
        "--format",
        "table",
    ]);
    assert!(table.contains("\\x5C"), "{table}");
    assert_eq!(
        ok(&["filter", f, "--where", "d = 'x'", "--count"]).trim(),
        "2"
    );
    assert_eq!(
        ok(&["filter", f, "--where", "d LIKE 'y%'", "--count"]).trim(),
        "1"
    );
}

/// TPC-H lineitem at scale 0.002 (the `lineitem()` file, DECIMAL(15,2) columns):
/// counts and printed values are DuckDB's. The test cannot run DuckDB, so its answers
/// are written here: DuckDB 2.0 (the duckdb Python package) on the same rows
/// (`gen tpch --scale 0.002 --row-group-size 1000`), e.g.
/// `SELECT count(*) FROM 'lineitem.parquet' WHERE l_tax + l_discount = 0.1`.
/// `scripts/check-decimals-duckdb.sh` re-checks them against DuckDB at scale 1.
#[test]
fn tpch_decimals_give_duckdbs_counts_and_printed_values() {
    let f = s(lineitem());
    for (predicate, expected) in [
        (Q6, "232"),
        ("l_discount BETWEEN 0.05 AND 0.07", "3267"),
        ("l_discount = 0.05", "1085"),
        ("l_extendedprice > 50000", "1275"),
        (
            "l_extendedprice * (1 - l_discount) * (1 + l_tax) > 50000",
            "1209",
        ),
        ("l_extendedprice * (1 - l_discount) > 50000.005", "885"),
        // 954 in DOUBLE (DuckDB too, on the --decimals double file).
        ("l_tax + l_discount = 0.1", "1057"),
        ("l_quantity + l_tax > 50.07", "23"),
    ] {
        for mode in [
            &[][..],
            &["--interpret"],
            &["--no-prune"],
            &["--no-pushdown"],
        ] {
            let mut args = vec!["filter", f, "--where", predicate, "--count"];
            args.extend(mode);
            assert_eq!(ok(&args).trim(), expected, "{predicate} {mode:?}");
        }
    }
    let select = "l_orderkey, l_linenumber, \
                  l_extendedprice * (1 - l_discount) * (1 + l_tax) AS charge, \
                  l_extendedprice * l_discount AS revenue";
    for mode in [&[][..], &["--interpret"]] {
        let mut args = vec![
            "filter", f, "--where", Q6, "--select", select, "--limit", "5", "--format", "csv",
        ];
        args.extend(mode);
        assert_eq!(
            ok(&args),
            "l_orderkey,l_linenumber,charge,revenue\n\
             64,1,21817.587330,1125.7785\n\
             69,6,20495.955500,1078.7345\n\
             70,2,16753.539348,1008.8442\n\
             70,6,18618.573138,1153.8054\n\
             98,3,13431.560940,693.0630\n",
            "{mode:?}"
        );
    }
    // The same values in JSON (numbers with the same digits) and in a table.
    let json = ok(&[
        "filter",
        f,
        "--where",
        Q6,
        "--select",
        "l_extendedprice, l_discount, l_quantity",
        "--limit",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(
        json,
        "{\"l_extendedprice\":22515.57,\"l_discount\":0.05,\"l_quantity\":21.00}\n"
    );
    let table = ok(&[
        "filter",
        f,
        "--where",
        Q6,
        "--select",
        "l_discount",
        "--limit",
        "1",
        "--format",
        "table",
    ]);
    assert!(table.contains("decimal(15,2)"), "{table}");
    assert!(
        table.contains("│       0.05 │") || table.contains(" 0.05 │"),
        "{table}"
    );
    // The DOUBLE file gives DOUBLE's answer.
    let dir = TempDir::new().unwrap();
    let doubles = dir.path().join("doubles.parquet");
    ok(&[
        "gen",
        "tpch",
        "--scale",
        "0.002",
        "--row-group-size",
        "1000",
        "--decimals",
        "double",
        "--quiet",
        s(&doubles),
    ]);
    let count = |file: &str| {
        ok(&[
            "filter",
            file,
            "--where",
            "l_tax + l_discount = 0.1",
            "--count",
        ])
    };
    assert_eq!(count(s(&doubles)), "954\n");
    assert_eq!(count(f), "1057\n");
    // explain shows the decimal type of the value.
    let explained = ok(&["explain", "--schema", f, "l_extendedprice * l_discount"]);
    assert!(explained.contains("type:      DECIMAL("), "{explained}");
}

/// The predicate the kernel cache tests compile.
/// It calls helpers (LIKE '%…%', a large IN list), whose addresses differ between
/// processes: the kernel refers to them by name.
const CACHED_PREDICATE: &str = "l_linenumber * 3 < 11 AND l_shipdate > DATE '1995-01-01' \
    AND l_comment LIKE '%ly%' AND l_shipmode IN ('MAIL', 'SHIP', 'AIR', 'RAIL', 'FOB', 'TRUCK')";

/// `broadhead` with `dir` as its kernel cache, and `env`.
fn broadhead_with_kernel_cache(dir: &Path, env: &[(&str, &str)]) -> Command {
    let mut c = Command::cargo_bin("broadhead").unwrap();
    c.env_remove("BROADHEAD_KERNEL_CACHE")
        .env("BROADHEAD_KERNEL_CACHE_DIR", dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Its stdout, once it has succeeded.
fn succeeded(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `broadhead bench` of [`CACHED_PREDICATE`] in `dir` as the kernel cache, with
/// `extra` arguments: its stdout.
fn bench_with_kernel_cache(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> String {
    succeeded(
        broadhead_with_kernel_cache(dir, env)
            .args(["bench", lineitem().to_str().unwrap(), "--runs", "1"])
            .args(["--where", CACHED_PREDICATE])
            .args(extra),
    )
}

/// The count `broadhead bench` reports before "rows selected".
fn bench_selected(out: &str) -> Option<String> {
    let before = out.split(" rows selected").next()?;
    before.rsplit(' ').next().map(str::to_string)
}

/// How many files in `dir` end in `.{ext}`.
fn files_ending(dir: &Path, ext: &str) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == ext))
                .count()
        })
        .unwrap_or(0)
}

fn kernel_files(dir: &Path) -> usize {
    files_ending(dir, "bhk")
}

/// The inode of each kernel file in `dir`: a store renames a new file over the entry,
/// so a kernel compiled and stored again has a new one (a load only touches the
/// file's time, for the eviction order).
fn kernel_file_inodes(dir: &Path) -> Vec<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut inodes: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "bhk"))
        .map(|e| e.metadata().unwrap().ino())
        .collect();
    inodes.sort();
    inodes
}

#[test]
fn a_second_process_loads_the_kernel_the_first_compiled() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let first = bench_with_kernel_cache(&dir, &[], &[]);
    assert!(first.contains("; compiled in "), "{first}");
    assert_eq!(kernel_files(&dir), 1);
    let second = bench_with_kernel_cache(&dir, &[], &[]);
    assert!(
        second.contains("loaded from the kernel cache in"),
        "{second}"
    );
    // The same rows either way.
    assert!(bench_selected(&first).is_some());
    assert_eq!(bench_selected(&first), bench_selected(&second));
}

#[test]
fn a_query_done_before_its_kernel_still_leaves_the_kernel_for_the_next_process() {
    // `filter` compiles in the background (tiered) and on this small file may be
    // done on the interpreter first; the process waits for the kernel before it
    // ends, so the kernel reaches the disk cache whole.
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let count = |c: &mut Command| {
        succeeded(
            c.args(["filter", s(lineitem()), "--where", CACHED_PREDICATE])
                .arg("--count"),
        )
    };
    let first = count(&mut broadhead_with_kernel_cache(&dir, &[]));
    assert_eq!(kernel_files(&dir), 1);
    assert_eq!(files_ending(&dir, "tmp"), 0, "no temporary file left");
    let written = kernel_file_inodes(&dir);
    // The next filter loads it (it is not compiled and written again), and gives the
    // same answer. Whether it arrives before this small scan's last batch is a race,
    // so `--stats` may say it is still on its way ("compiling"), never that it failed.
    let again = broadhead_with_kernel_cache(&dir, &[])
        .args(["filter", s(lineitem()), "--where", CACHED_PREDICATE])
        .args(["--count", "--stats"])
        .output()
        .unwrap();
    let stats = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stats}");
    assert!(
        stats.contains("kernel loaded from the disk cache") || stats.contains("kernel compiling"),
        "{stats}"
    );
    assert!(!stats.contains("failed"), "{stats}");
    assert_eq!(String::from_utf8_lossy(&again.stdout), first);
    assert_eq!(
        kernel_file_inodes(&dir),
        written,
        "the kernel was not written again"
    );
    // `bench` measures O3 kernels, not the command's Quick ones: it compiles its own
    // (eagerly, before it runs) and keeps it next to the other, same answer.
    let bench = bench_with_kernel_cache(&dir, &[], &[]);
    assert!(bench.contains("; compiled in "), "{bench}");
    assert_eq!(bench_selected(&bench).as_deref(), Some(first.trim()));
    assert_eq!(kernel_files(&dir), 2);
}

#[test]
fn no_kernel_cache_by_flag_or_environment_writes_nothing() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("kernels");
    let out = bench_with_kernel_cache(&dir, &["--no-kernel-cache"], &[]);
    assert!(out.contains("; compiled in "), "{out}");
    let out = bench_with_kernel_cache(&dir, &[], &[("BROADHEAD_KERNEL_CACHE", "off")]);
    assert!(out.contains("; compiled in "), "{out}");
    assert_eq!(kernel_files(&dir), 0);
    assert!(!dir.exists());
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Whether the tests run as root (who may give files to other users).
fn is_root() -> bool {
    // SAFETY: `geteuid` only reads the process's effective user id.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn output_files_keep_their_mode_and_owner_and_read_only_ones_need_force() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let f = s(odd_file());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("o.csv");
    let set_mode = |m: u32| std::fs::set_permissions(&out, std::fs::Permissions::from_mode(m));
    std::fs::write(&out, "old").unwrap();
    set_mode(0o600).unwrap();
    ok(&["filter", f, "--where", "i = 4", "-o", s(&out)]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "i,f,s\n4,2.0,s04\n");
    assert_eq!(mode_of(&out), 0o600);
    set_mode(0o640).unwrap();
    ok(&["gen", "tpch", "--scale", "0.0001", "--quiet", s(&out)]);
    assert_eq!(mode_of(&out), 0o640);
    // Read-only: refused, untouched, unless --force (the mode is kept).
    std::fs::write(&out, "old").unwrap();
    set_mode(0o444).unwrap();
    for args in [
        &["filter", f, "--where", "i = 4", "-o", s(&out)][..],
        &["gen", "tpch", "--scale", "0.0001", "--quiet", s(&out)],
    ] {
        let r = run(args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(
            r.stderr
                .contains("o.csv: the output file is read-only (mode 0444)")
                && r.stderr.contains("--force"),
            "{}",
            r.stderr
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    }
    ok(&["filter", f, "--where", "i = 4", "-o", s(&out), "--force"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "i,f,s\n4,2.0,s04\n");
    assert_eq!(mode_of(&out), 0o444);
    // Root keeps another user's file theirs.
    if is_root() {
        set_mode(0o664).unwrap();
        std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
        ok(&["filter", f, "--where", "i = 5", "-o", s(&out)]);
        let m = std::fs::metadata(&out).unwrap();
        assert_eq!((m.uid(), m.gid(), mode_of(&out)), (65534, 65534, 0o664));
    } else {
        eprintln!("not root: the owner test is skipped");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_closed_pipe_given_with_o_ends_quietly() {
    let f = s(lineitem());
    let r = run_into_closed_pipe(&["filter", f, "--where", "TRUE", "-o", "/dev/stdout"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // A FIFO whose reader reads a little and goes.
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: `mkfifo` reads the NUL-terminated path `c`.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("broadhead"))
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .args([
            "filter",
            f,
            "--where",
            "TRUE",
            "--format",
            "csv",
            "-o",
            s(&fifo),
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Read;
        let mut reader = std::fs::File::open(&fifo).unwrap();
        let mut first = [0u8; 10];
        reader.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"l_orderkey");
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), stderr.as_ref()), (Some(0), ""));
}

#[test]
fn abandoned_temporary_files_of_dead_processes_are_removed() {
    let dir = TempDir::new().unwrap();
    // A process that has ended: its pid names no process (until reused, which the
    // next few runs' pids make unlikely).
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = gone.id();
    let me = std::process::id();
    let path = |name: String| dir.path().join(name);
    let abandoned = path(format!(".broadhead-{dead}-aB3xYz"));
    std::fs::write(&abandoned, "partial").unwrap();
    let kept = [
        path(format!(".broadhead-{me}-aB3xYz")), // a live process's
        path(format!(".broadhead-{dead}-aB3xYzz")), // not our pattern
        path(format!(".broadhead-{dead}")),      // not our pattern
        path(format!("x.broadhead-{dead}-aB3xYz")), // not our pattern
        path(format!(".broadhead-{dead}-locked")), // locked: in use elsewhere
    ];
    for k in &kept {
        std::fs::write(k, "keep").unwrap();
    }
    let dir_named = path(format!(".broadhead-{dead}-dirdir"));
    std::fs::create_dir(&dir_named).unwrap();
    let link = path(format!(".broadhead-{dead}-linkln"));
    std::os::unix::fs::symlink(&kept[0], &link).unwrap();
    let locked = std::fs::File::open(&kept[4]).unwrap();
    {
        use std::os::fd::AsRawFd;
        // SAFETY: `flock` on the descriptor `locked` owns, open to the end of the test.
        assert_eq!(
            unsafe { libc::flock(locked.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
    }
    // Another user's (where root may make one).
    let theirs = path(format!(".broadhead-{dead}-theirs"));
    std::fs::write(&theirs, "keep").unwrap();
    let other_user = is_root() && std::os::unix::fs::chown(&theirs, Some(65534), None).is_ok();
    ok(&[
        "filter",
        s(odd_file()),
        "--where",
        "i = 4",
        "-o",
        s(&path("o.csv".into())),
    ]);
    assert!(!abandoned.exists());
    for k in kept.iter().chain([&dir_named]) {
        assert!(k.exists(), "{}", k.display());
    }
    assert!(std::fs::symlink_metadata(&link).is_ok());
    if other_user {
        assert!(theirs.exists());
    } else {
        eprintln!("not root: another user's temporary file is not tested");
    }
    drop(locked);
}

/// A run killed with SIGKILL (which cannot be caught) leaves its temporary file; the
/// next run writing to that directory removes it.
#[test]
fn what_sigkill_leaves_the_next_run_removes() {
    let dir = TempDir::new().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("broadhead");
    let mut child = std::process::Command::new(&bin)
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .args(["gen", "tpch", "--scale", "1000", "--quiet"])
        .arg(dir.path().join("g.parquet"))
        .spawn()
        .unwrap();
    wait_for_temporary_file(dir.path(), &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    let temps = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".broadhead-"))
            .collect::<Vec<_>>()
    };
    let left = temps();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with(&format!(".broadhead-{}-", child.id())));
    let out = dir.path().join("o.csv");
    ok(&["filter", s(odd_file()), "--where", "i = 4", "-o", s(&out)]);
    assert_eq!(temps(), Vec::<String>::new());
}

#[test]
fn expressions_and_statements_from_files_and_stdin() {
    let f = s(odd_file());
    let dir = TempDir::new().unwrap();
    // Longer than the 128 KiB a single argument may have.
    let long = vec!["i = 4"; 30_000].join(" OR ");
    assert!(long.len() > 200_000);
    let where_file = dir.path().join("where.sql");
    std::fs::write(&where_file, format!("{long}\n")).unwrap();
    let at = format!("@{}", s(&where_file));
    assert_eq!(ok(&["filter", f, "--where", &at, "--count"]), "1\n");
    let sql = dir.path().join("q.sql");
    std::fs::write(&sql, format!("SELECT i, s FROM '{f}'\nWHERE {long}")).unwrap();
    assert_eq!(ok(&["sql", &format!("@{}", s(&sql))]), "i,s\n4,s04\n");
    // The select list from stdin.
    let out = broadhead()
        .args(["filter", f, "--where", "i = 4", "--select", "-"])
        .write_stdin("i * 10 AS ten")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ten\n40\n");
    // Stdin once only; a missing file named (escaped).
    let r = Run::from(
        broadhead()
            .args(["filter", f, "--where", "-", "--select", "-"])
            .write_stdin("i = 4")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("one argument only"), "{}", r.stderr);
    let r = run(&["filter", f, "--where", "@/nonexistent/a\x1b.sql"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("/nonexistent/a\\x1b.sql: No such file") && !r.stderr.contains('\x1b'),
        "{}",
        r.stderr
    );
}

#[test]
fn control_characters_in_names_and_expressions_are_escaped() {
    let f = s(odd_file());
    let r = run(&["filter", "dir/a\nb\x1bc\x07.parquet", "--where", "TRUE"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "broadhead: error: dir/a\\nb\\x1bc\\x07.parquet: no such file or directory\n"
    );
    let r = run(&["filter", f, "--where", "i\x1b = 1"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains('\x1b'), "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines[1], "  i\\x1b = 1", "{}", r.stderr);
    // The caret stays under the escaped character.
    assert_eq!(lines[2], "   ^^^^", "{}", r.stderr);
    // Arguments quoted by clap's own errors.
    let r = run(&["filter", f, "--frob\nerror: forged\x07"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("'--frob\\nerror: forged\\x07'") && !r.stderr.contains('\x07'),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.lines().any(|l| l.starts_with("error: forged")));
}
