//! CI's fuzz run: a fixed seed and a fixed number of executions per target (the
//! long runner is `cargo run --release --example fuzz`, see docs/fuzzing.md), and
//! the replay of every saved case in tests/fuzz-regressions/.

#[path = "fuzz/mod.rs"]
mod driver;

use std::collections::HashSet;
use std::path::Path;

use driver::{Env, Kind, Target};

const SEED: u64 = 0x5eed_2026;

/// Executions per target in CI: about 30 s in a debug build.
fn budget(target: Target) -> u64 {
    match target {
        Target::Sql => 40_000,
        Target::Jit => 50,
        Target::Parquet => 6_000,
    }
}

/// Signatures of failures found but fixed on another branch (tests/fuzz-findings/):
/// tolerated until the lead moves their cases into tests/fuzz-regressions/.
fn pending_signatures() -> HashSet<String> {
    driver::load_signatures(&findings_dir())
}

fn findings_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings")
}

fn fixed_seed_run(target: Target) {
    let env = Env::new();
    let pending = pending_signatures();
    let mut known = HashSet::new();
    let mut tally = driver::Tally::default();
    driver::run(
        &env,
        target,
        SEED,
        0,
        budget(target),
        None,
        &mut known,
        &mut tally,
        &mut |_, _| {},
        &mut |_| {},
    );
    assert_eq!(tally.executions, budget(target));
    let new: Vec<_> = tally
        .found
        .iter()
        .filter(|(_, f)| f.kind != Kind::Slow && !pending.contains(&f.signature))
        .collect();
    // FUZZ_SAVE_NEW=1 saves them to tests/fuzz-findings/ (to triage, or when the
    // failure is known and fixed on another branch).
    if std::env::var_os("FUZZ_SAVE_NEW").is_some() {
        for (case, f) in &new {
            driver::save_case(&env, &findings_dir(), case, f);
        }
    }
    let new: Vec<String> = new
        .iter()
        .map(|(case, f)| format!("{}\n  case: {}", f.message, case.to_json()))
        .collect();
    eprintln!(
        "{}: {} executions, {} failing ({} signatures, {} new)",
        target.name(),
        tally.executions,
        tally.failures,
        tally.found.len(),
        new.len()
    );
    assert!(new.is_empty(), "new failures:\n{}", new.join("\n"));
}

#[test]
fn fixed_seed_sql_text() {
    fixed_seed_run(Target::Sql);
}

#[test]
fn fixed_seed_jit_against_interpreter() {
    fixed_seed_run(Target::Jit);
}

#[test]
fn fixed_seed_mutated_parquet() {
    fixed_seed_run(Target::Parquet);
}

/// Every saved case runs without a panic, a mismatch or an internal error.
#[test]
fn saved_cases_pass() {
    let env = Env::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let cases = driver::load_cases(&dir);
    let mut failing = Vec::new();
    for (stem, case) in &cases {
        if let Some(f) = driver::execute(&env, case) {
            if f.kind != Kind::Slow {
                failing.push(format!("{stem}: {}", f.message));
            }
        }
    }
    assert!(failing.is_empty(), "{}", failing.join("\n"));
}

/// The generators are deterministic (a case is replayed from its seed and index)
/// and a saved case reads back as it was written.
#[test]
fn cases_are_reproducible_and_round_trip() {
    let env = Env::new();
    for target in Target::ALL {
        for i in 0..50 {
            let case = driver::generate(&env, target, 7, i);
            assert_eq!(case, driver::generate(&env, target, 7, i));
            let back = driver::Case::from_json(&case.to_json(), None).expect("reads back");
            assert_eq!(back, case);
        }
    }
    let dir = tempfile::tempdir().expect("a directory");
    let case = driver::generate(&env, Target::Sql, 1, 1);
    let failure = driver::Failure::new(Kind::Mismatch, "x", "x".into());
    driver::save_case(&env, dir.path(), &case, &failure);
    driver::save_case(&env, dir.path(), &case, &failure);
    let loaded = driver::load_cases(dir.path());
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded[1], ("002".to_string(), case));
}

/// The minimizer finds a small case that still fails the same way.
#[test]
fn minimizing_keeps_the_failure() {
    let case = driver::Case::Sql {
        jit: false,
        text: "(a + 1) * nope_column > (b - 2) AND flag".into(),
        batch_seed: 1,
        predicate: true,
    };
    let small = driver::minimize::minimize(&case, 500, &mut |c| match c {
        driver::Case::Sql { text, .. } => text.contains("nope"),
        _ => false,
    });
    assert_eq!(
        small,
        driver::Case::Sql {
            jit: false,
            text: "nope".into(),
            batch_seed: 1,
            predicate: true,
        }
    );
}
