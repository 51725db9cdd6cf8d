//! `broadhead functions [PATTERN]`: the registry in the terminal, filtered by name,
//! alias or glob, in every text format; the same count as the generated reference.

use assert_cmd::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("broadhead")
        .unwrap()
        .env("BROADHEAD_KERNEL_CACHE", "off")
        .arg("functions")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

/// The CSV rows' first field (names do not contain commas or quotes).
fn names(csv: &str) -> Vec<String> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn lists_one_row_per_signature_of_every_function() {
    let csv = ok(&["--format", "csv"]);
    assert!(csv.starts_with(
        "name,signature,operator,aliases,domain,null_behavior,can_error,kernel,description\n"
    ));
    // One row per signature, and one per special form (`coalesce(x, …)`).
    let entries: usize = broadhead::functions::functions()
        .iter()
        .map(|f| f.entries().len())
        .sum();
    assert!(entries > broadhead::functions::signatures().count());
    assert_eq!(csv.lines().count(), entries + 1);
    assert!(csv.contains("coalesce,\"coalesce(x, …)\","), "{csv}");
    let listed: std::collections::BTreeSet<String> = names(&csv).into_iter().collect();
    for f in broadhead::functions::functions() {
        assert!(listed.contains(f.name), "{} is not listed", f.name);
    }
    assert!(csv.contains("add,\"add(INTEGER, INTEGER) -> INTEGER\",a + b,,operator,"));
}

#[test]
fn a_pattern_filters_by_substring_alias_glob_or_operator_case_insensitively() {
    let upper = ok(&["UPP", "--format", "csv"]);
    assert_eq!(names(&upper), vec!["upper"]);
    assert!(upper.contains("upper(VARCHAR) -> VARCHAR"));
    assert!(upper.contains("ucase"), "aliases are shown");
    // An alias, and a glob over the whole name.
    assert_eq!(names(&ok(&["lcase", "--format", "csv"])), vec!["lower"]);
    let glob = names(&ok(&["char_len*", "--format", "csv"]));
    assert!(
        !glob.is_empty() && glob.iter().all(|n| n == "length"),
        "{glob:?}"
    );
    assert!(names(&ok(&["s*r*", "--format", "csv"])).contains(&"substr".to_string()));
    // An operator by its SQL spelling.
    let plus = names(&ok(&["+", "--format", "csv"]));
    assert!(
        !plus.is_empty() && plus.iter().all(|n| n == "add"),
        "{plus:?}"
    );
}

#[test]
fn json_and_table_formats() {
    let json = ok(&["sqrt", "--format", "json"]);
    let row: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(row["name"], "sqrt");
    assert_eq!(row["signature"], "sqrt(DOUBLE) -> DOUBLE");
    assert_eq!(row["can_error"], true);
    assert!(row["operator"].is_null());
    let table = ok(&["sqrt", "--format", "table"]);
    assert!(table.contains("sqrt(DOUBLE) -> DOUBLE"), "{table}");
    assert!(table.contains("NULL if any argument is NULL"), "{table}");
}

#[test]
fn no_match_and_a_bad_glob_are_usage_errors() {
    let (code, stdout, stderr) = run(&["no_such_function_xyz"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no function matches \"no_such_function_xyz\""),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["[a"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid pattern"), "{stderr}");
}
