//! `broadhead sql` through DataFusion (feature `datafusion`): aggregates, GROUP BY,
//! ORDER BY, joins, subqueries and every way of naming a file give what plain
//! DataFusion gives on the same files (and what is computed here by hand), with
//! Broadhead compiling the filters and projections; `--stats` and `EXPLAIN` say which.

#![cfg(feature = "datafusion")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, Decimal128Array, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use tempfile::TempDir;

/// Rows of `t`.
const ROWS: i32 = 500;

mod common;
use common::{write_parquet, Run};

/// `t` row `r`: `k` (NULL every 7th row), `g` (five groups and NULL), `x` (NULL
/// every 11th row), `d` DECIMAL(15,2) (NULL every 13th row).
fn t_row(r: i32) -> (Option<i32>, Option<String>, Option<f64>, Option<i128>) {
    let k = (r % 7 != 3).then_some(r);
    let g = (r % 6 != 5).then(|| ["a", "b", "c", "d", "é"][(r % 6) as usize].to_string());
    let x = (r % 11 != 0).then(|| f64::from(r) / 4.0 - 20.0);
    let d = (r % 13 != 1).then(|| i128::from(r) * 101 - 7000);
    (k, g, x, d)
}

/// Two files in a temporary directory: `t.parquet` (row groups of 64 rows) and
/// `u.parquet` (`k`, `name`: every third `k` of `t`, and some that `t` lacks).
fn files() -> &'static (TempDir, PathBuf, PathBuf) {
    static FILES: OnceLock<(TempDir, PathBuf, PathBuf)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let rows: Vec<_> = (0..ROWS).map(t_row).collect();
        let t = dir.path().join("t.parquet");
        write_parquet(
            &t,
            vec![
                (
                    "k",
                    Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.0))) as ArrayRef,
                ),
                (
                    "g",
                    Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.clone()))),
                ),
                (
                    "x",
                    Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.2))),
                ),
                (
                    "d",
                    Arc::new(
                        Decimal128Array::from_iter(rows.iter().map(|r| r.3))
                            .with_precision_and_scale(15, 2)
                            .unwrap(),
                    ),
                ),
            ],
            64,
        );
        let keys: Vec<Option<i32>> = (0..200).map(|i| (i % 17 != 4).then_some(i * 3)).collect();
        let names: Vec<Option<String>> = (0..200)
            .map(|i| (i % 5 != 2).then(|| format!("n{i}")))
            .collect();
        let u = dir.path().join("u.parquet");
        write_parquet(
            &u,
            vec![
                ("k", Arc::new(Int32Array::from(keys)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names))),
            ],
            64,
        );
        (dir, t, u)
    })
}

fn broadhead(args: &[&str]) -> Run {
    broadhead_in(Path::new("."), args)
}

/// Runs the binary in the directory `cwd`.
fn broadhead_in(cwd: &Path, args: &[&str]) -> Run {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_broadhead"))
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    Run::from(out)
}

/// The statement's result through the binary (as an Arrow file), as a text table.
fn through_cli(sql: &str, flags: &[&str]) -> String {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("out.arrow");
    let mut args = vec!["sql", sql, "-o", out.to_str().unwrap()];
    args.extend(flags);
    let r = broadhead(&args);
    assert_eq!(r.code, 0, "{sql}: {}", r.stderr);
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out).unwrap(), None).unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    pretty_format_batches(&batches).unwrap().to_string()
}

/// The statement's result through plain DataFusion, with `t` and `u` registered.
fn through_datafusion(sql: &str) -> String {
    let (_, t, u) = files();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        for (name, path) in [("t", t), ("u", u)] {
            ctx.register_parquet(name, path.to_str().unwrap(), ParquetReadOptions::default())
                .await
                .unwrap();
        }
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        pretty_format_batches(&batches).unwrap().to_string()
    })
}

/// `sql` over tables `t` and `u`, with the tables written as the CLI takes paths.
fn with_paths(sql: &str) -> String {
    let (_, t, u) = files();
    sql.replace("FROM t", &format!("FROM '{}' t", t.display()))
        .replace("JOIN u", &format!("JOIN read_parquet('{}') u", u.display()))
        .replace("FROM u", &format!("FROM \"{}\" u", u.display()))
}

const QUERIES: &[&str] = &[
    // Aggregates over NULLs, by group, ordered with the NULL group.
    "SELECT g, count(*) AS n, count(k) AS nk, sum(k) AS sk, min(x) AS mn, max(x) AS mx, \
     sum(d) AS sd, avg(d) AS ad FROM t WHERE k % 3 <> 1 OR x IS NULL \
     GROUP BY g ORDER BY g NULLS FIRST",
    // Computed keys and aggregated expressions the rule compiles.
    "SELECT k % 4 AS m, sum(d * 2 - 1) AS s, count(DISTINCT g) AS groups FROM t \
     WHERE d > -5.5 AND upper(g) <> 'B' GROUP BY k % 4 ORDER BY m NULLS LAST",
    "SELECT g, sum(k) AS s FROM t GROUP BY g HAVING sum(k) > 20000 ORDER BY s DESC",
    // ORDER BY with LIMIT/OFFSET and NULLs.
    "SELECT k, x, d FROM t WHERE x BETWEEN -10 AND 40 ORDER BY x DESC NULLS LAST, k LIMIT 17 OFFSET 3",
    "SELECT DISTINCT g FROM t ORDER BY g",
    // Joins: inner, left with NULL keys on both sides.
    "SELECT t.k, u.name, t.d + 1 AS d1 FROM t JOIN u ON t.k = u.k WHERE t.k < 300 ORDER BY t.k",
    "SELECT t.g, count(u.name) AS named, count(*) AS n FROM t LEFT JOIN u ON t.k = u.k \
     GROUP BY t.g ORDER BY t.g NULLS LAST",
    // A subquery in WHERE.
    "SELECT count(*) AS n FROM t WHERE k IN (SELECT k FROM u WHERE name LIKE 'n1%')",
];

#[test]
fn aggregates_joins_and_order_by_equal_plain_datafusion() {
    for q in QUERIES {
        let expected = through_datafusion(q);
        let cli = with_paths(q);
        assert_eq!(through_cli(&cli, &[]), expected, "{cli}");
        // DataFusion's own evaluation through the CLI, for comparison: the same.
        assert_eq!(through_cli(&cli, &["--interpret"]), expected, "{cli}");
    }
}

#[test]
fn hand_computed_values() {
    let rows: Vec<_> = (0..ROWS).map(t_row).collect();
    // count(*), sum(k), sum(d) of the rows with k > 100 (sum(d) in cents).
    let chosen: Vec<_> = rows
        .iter()
        .filter(|r| r.0.is_some_and(|k| k > 100))
        .collect();
    let sum_k: i64 = chosen.iter().map(|r| i64::from(r.0.unwrap())).sum();
    let sum_d: i128 = chosen.iter().filter_map(|r| r.3).sum();
    let (_, t, _) = files();
    let q = format!(
        "SELECT count(*) AS n, sum(k) AS sk, sum(d) AS sd FROM '{}' WHERE k > 100",
        t.display()
    );
    let r = broadhead(&["sql", &q, "--format", "csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cents = format!("{}.{:02}", sum_d / 100, (sum_d % 100).abs());
    assert_eq!(
        r.stdout,
        format!("n,sk,sd\n{},{sum_k},{cents}\n", chosen.len()),
        "{q}"
    );
    // The group 'é' (rows 4 mod 6), its rows and the largest k.
    let group: Vec<_> = rows
        .iter()
        .filter(|r| r.1.as_deref() == Some("é"))
        .collect();
    let max_k = group.iter().filter_map(|r| r.0).max().unwrap();
    let q = format!(
        "SELECT g, count(*) AS n, max(k) AS mk FROM {} GROUP BY g HAVING g = 'é'",
        // Unquoted: `t.parquet` in the current directory.
        "t.parquet"
    );
    let r = broadhead_in(t.parent().unwrap(), &["sql", &q, "--format", "csv"]);
    assert_eq!(
        r.stdout,
        format!("g,n,mk\né,{},{max_k}\n", group.len()),
        "{}",
        r.stderr
    );
}

#[test]
fn stats_and_explain_show_the_compiled_expressions() {
    let (_, t, _) = files();
    let q = format!(
        "SELECT g, sum(d * 2) AS s FROM '{}' WHERE k > 3 AND x < 50 GROUP BY g ORDER BY g",
        t.display()
    );
    let r = broadhead(&["sql", &q, "--stats", "--format", "csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("Broadhead computes") && r.stderr.contains("filter (JIT): "),
        "{}",
        r.stderr
    );
    let r = broadhead(&["sql", &format!("EXPLAIN {q}"), "--format", "csv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("broadhead("), "{}", r.stdout);
    // --interpret: DataFusion alone.
    let r = broadhead(&[
        "sql",
        &format!("EXPLAIN {q}"),
        "--interpret",
        "--format",
        "csv",
    ]);
    assert!(!r.stdout.contains("broadhead("), "{}", r.stdout);
}

#[test]
fn what_the_scan_runs_stays_the_scan_and_datafusion_agrees() {
    let (_, t, _) = files();
    let q = format!(
        "SELECT k, g, x FROM '{}' WHERE k < 200 AND x > 0",
        t.display()
    );
    let sorted = |s: String| {
        let mut lines: Vec<String> = s.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    let scan = broadhead(&["sql", &q, "--format", "csv", "--stats"]);
    assert_eq!(scan.code, 0, "{}", scan.stderr);
    // The scan's statistics, not DataFusion's.
    assert!(
        !scan.stderr.contains("Broadhead computes"),
        "{}",
        scan.stderr
    );
    let df = broadhead(&["sql", &q, "--format", "csv", "--datafusion"]);
    assert_eq!(df.code, 0, "{}", df.stderr);
    assert_eq!(sorted(scan.stdout), sorted(df.stdout));
}

#[test]
fn errors_are_messages() {
    let (dir, t, _) = files();
    let missing = dir.path().join("nope.parquet");
    let r = broadhead(&[
        "sql",
        &format!("SELECT g, count(*) FROM '{}' GROUP BY g", missing.display()),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("nope.parquet: no such file or directory"),
        "{}",
        r.stderr
    );
    let r = broadhead(&[
        "sql",
        &format!(
            "SELECT nosuch, count(*) FROM '{}' GROUP BY nosuch",
            t.display()
        ),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nosuch"), "{}", r.stderr);
    assert!(!r.stderr.contains("internal error"), "{}", r.stderr);
    // No writes from the command line.
    let r = broadhead(&["sql", "CREATE TABLE x AS SELECT 1"]);
    assert_ne!(r.code, 0);
    // The output may not overwrite an input.
    let r = broadhead(&[
        "sql",
        &format!("SELECT g FROM '{}' ORDER BY g", t.display()),
        "-o",
        t.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
