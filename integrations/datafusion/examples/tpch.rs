//! TPC-H Q1, Q6, Q12, Q14 and Q19 through DataFusion with and without Broadhead.
//!
//! ```text
//! cargo run -p broadhead-datafusion --example tpch --release -- [--scale 1] [--doubles] [--runs 5] [--dir DIR]
//! ```
//!
//! Writes lineitem, orders and part as Parquet (into DIR, kept for the next run, or a
//! temporary directory), runs each query `--runs` times on one context without the
//! rule and one with it (the first run of each is a warm-up; the rule's first
//! planning compiles the kernels), checks the answers are equal and prints the
//! best times and the share of expressions compiled.
//!
//! With `--doubles`, sums of doubles may differ in their last digits between two
//! runs: DataFusion repartitions batches between its threads, so the order in which
//! a partition's rows are added depends on timing, and adding doubles is not
//! associative. Those answers are compared to 12 significant digits; decimal answers
//! are compared exactly.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arrow::util::pretty::pretty_format_batches;
use broadhead_datafusion::coverage;
use broadhead_tpch::{register_tables, tables_dir, Decimals, QUERIES};
use datafusion::prelude::{SessionConfig, SessionContext};

struct Args {
    scale: f64,
    decimals: Decimals,
    runs: usize,
    dir: Option<PathBuf>,
}

fn args() -> Args {
    let mut a = Args {
        scale: 1.0,
        decimals: Decimals::Decimal,
        runs: 5,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--scale" => a.scale = it.next().and_then(|v| v.parse().ok()).expect("--scale N"),
            "--runs" => a.runs = it.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--dir" => a.dir = it.next().map(PathBuf::from),
            "--doubles" => a.decimals = Decimals::Double,
            other => {
                panic!("unknown argument {other:?} (--scale N, --runs N, --dir DIR, --doubles)")
            }
        }
    }
    a
}

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<(Duration, String)> {
    let start = Instant::now();
    let batches = ctx.sql(sql).await?.collect().await?;
    let elapsed = start.elapsed();
    Ok((elapsed, pretty_format_batches(&batches)?.to_string()))
}

/// Whether two printed answers are equal; with `floats`, numbers that differ by at
/// most one part in 10^12 count as equal.
fn same_answer(a: &str, b: &str, floats: bool) -> bool {
    if a == b {
        return true;
    }
    let cells = |s: &str| -> Vec<String> {
        s.split(|c: char| c == '|' || c.is_whitespace())
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (x, y) = (cells(a), cells(b));
    floats
        && x.len() == y.len()
        && x.iter().zip(&y).all(|(p, q)| {
            p == q
                || match (p.parse::<f64>(), q.parse::<f64>()) {
                    (Ok(u), Ok(v)) => (u - v).abs() <= 1e-12 * u.abs().max(v.abs()),
                    _ => false,
                }
        })
}

#[tokio::main]
async fn main() -> datafusion::common::Result<()> {
    let a = args();
    let (dir, generated) = tables_dir(a.dir.as_deref(), a.scale, a.decimals)?;
    if let Some(took) = generated {
        eprintln!(
            "generated scale {} ({:?}) in {took:.1?}",
            a.scale, a.decimals
        );
    }
    let dir = dir.path();
    let plain = SessionContext::new_with_config(SessionConfig::new());
    register_tables(&plain, dir).await?;
    let compiled = broadhead_datafusion::register(&plain);
    println!(
        "| query | DataFusion (ms) | with Broadhead (ms) | speed-up | first run with Broadhead (ms) | compiled |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    for (name, sql) in QUERIES {
        let mut best = [Duration::MAX; 2];
        let mut first = Duration::ZERO;
        let mut answers = [String::new(), String::new()];
        for run_index in 0..a.runs.max(2) {
            for (i, ctx) in [&plain, &compiled].into_iter().enumerate() {
                let (t, answer) = run(ctx, sql).await?;
                if i == 1 && run_index == 0 {
                    first = t;
                }
                if run_index > 0 {
                    best[i] = best[i].min(t);
                }
                answers[i] = answer;
            }
        }
        let floats = a.decimals == Decimals::Double;
        assert!(
            same_answer(&answers[0], &answers[1], floats),
            "{name}: the answers differ\n{}\n{}",
            answers[0],
            answers[1]
        );
        let plan = compiled.sql(sql).await?.create_physical_plan().await?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "| {name} | {:.1} | {:.1} | {:.2}x | {:.1} | {} |",
            ms(best[0]),
            ms(best[1]),
            ms(best[0]) / ms(best[1]),
            ms(first),
            coverage(&plan)
        );
    }
    Ok(())
}
