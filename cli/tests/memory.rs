//! Memory bounded per batch: predicates that build gigabytes of strings per batch
//! (`repeat`, `lpad` with huge counts) end with an error naming the function and the
//! row, in both back ends and in `sql`, never with an out-of-memory abort.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use tempfile::TempDir;

mod common;
use common::Run;

/// The binary, with the on-disk kernel cache off and the limit on a batch's
/// computed strings at `limit` bytes (`None`: the default, 1 GiB).
fn run(args: &[&str], limit: Option<usize>) -> Run {
    let mut c = Command::cargo_bin("broadhead").unwrap();
    c.env("BROADHEAD_KERNEL_CACHE", "off");
    match limit {
        Some(bytes) => c.env("BROADHEAD_BATCH_STRING_BYTES", bytes.to_string()),
        None => c.env_remove("BROADHEAD_BATCH_STRING_BYTES"),
    };
    Run::from(c.args(args).output().unwrap())
}

/// The issue's file: TPC-H lineitem at scale 0.01 (60,175 rows), generated once.
fn lineitem() -> &'static Path {
    static DIR: OnceLock<(TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("li.parquet");
        let r = run(
            &[
                "gen",
                "tpch",
                "--scale",
                "0.01",
                "--quiet",
                path.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        (dir, path)
    })
    .1
}

/// Asserts that `r` failed cleanly (exit 1, not a signal) with `message` for row
/// `row` of the first row group.
fn assert_limit_error(r: &Run, message: &str, row: usize, what: &str) {
    assert_eq!(r.code, 1, "{what}: {}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("li.parquet, row group 0, row {row}: {message}")),
        "{what}: {}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("memory allocation"),
        "{what}: {}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{what}: {}", r.stdout);
}

#[test]
fn the_issues_command_ends_with_an_error_not_an_abort() {
    // As filed: each value (up to 700 MB) is within the limit on a value, the batch
    // is not. Rows 0 and 1 fit 1 GiB ('TRUCK', 'MAIL'); row 2 ('REG AIR') does not.
    let li = lineitem().to_str().unwrap();
    let r = run(
        &[
            "filter",
            li,
            "--where",
            "length(repeat(l_shipmode, 100000000)) > 0",
            "--count",
        ],
        None,
    );
    assert_limit_error(
        &r,
        "repeat: the batch's string results would exceed 1 GiB",
        2,
        "default limit",
    );
}

#[test]
fn both_back_ends_and_sql_name_the_function_and_the_row() {
    let li = lineitem().to_str().unwrap();
    let mib = Some(1 << 20);
    for (predicate, name, row) in [
        // One value larger than the room: refused before it is built.
        ("length(repeat(l_shipmode, 100000000)) > 0", "repeat", 0),
        ("length(lpad(l_comment, 200000000, 'x')) > 0", "lpad", 0),
        ("length(rpad(l_comment, 200000000)) > 0", "rpad", 0),
        // Many values of a few hundred KB: a later row passes 1 MiB.
        ("length(repeat(l_shipmode, 100000)) > 0", "repeat", 2),
        ("length(l_comment || repeat('x', 300000)) > 0", "||", 3),
    ] {
        let message = format!("{name}: the batch's string results would exceed 1 MiB");
        let filter = ["filter", li, "--where", predicate, "--count"];
        assert_limit_error(&run(&filter, mib), &message, row, predicate);
        let interpreted = [&filter[..], &["--interpret"]].concat();
        assert_limit_error(&run(&interpreted, mib), &message, row, predicate);
        let sql = format!("SELECT count(*) FROM '{li}' WHERE {predicate}");
        assert_limit_error(&run(&["sql", &sql], mib), &message, row, &sql);
    }
    // Within the limit: the count.
    let r = run(
        &[
            "filter",
            li,
            "--where",
            "length(repeat(l_shipmode, 10)) > 30",
            "--count",
        ],
        mib,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.trim().parse::<u64>().unwrap() > 0);
}
