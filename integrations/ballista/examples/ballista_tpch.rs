//! TPC-H Q1 and Q6 on a standalone Ballista cluster with Broadhead expressions,
//! checked against plain DataFusion.
//!
//! ```text
//! cargo run -p broadhead-ballista --example ballista_tpch --release -- [--scale 1] [--runs 3] [--dir DIR]
//! ```
//!
//! Writes lineitem, orders and part as Parquet (into DIR, kept for the next run, or a
//! temporary directory), starts a Ballista scheduler and executor in this process
//! (`SessionContext::standalone_with_state`, gRPC on a local port) whose plans
//! compile their filters and projections with Broadhead, and runs each query
//! `--runs` times there and on a plain DataFusion context. It prints both answers,
//! fails unless they are equal, and prints the Broadhead expressions the executor
//! received (decoded by `BroadheadCodec`) and how many batches their kernels
//! evaluated: the proof that the executor ran them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use arrow::util::pretty::pretty_format_batches;
use ballista::prelude::SessionContextExt;
use broadhead_ballista::{ballista_state, BroadheadCodec};
use broadhead_datafusion::{evaluations, BroadheadOptions};
use broadhead_tpch::{query, register_tables, tables_dir, Decimals};
use datafusion::common::Result;
use datafusion::prelude::{SessionConfig, SessionContext};

struct Args {
    scale: f64,
    runs: usize,
    dir: Option<PathBuf>,
}

fn args() -> std::result::Result<Args, String> {
    let mut a = Args {
        scale: 1.0,
        runs: 3,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--scale" => {
                a.scale = value("--scale")?
                    .parse()
                    .map_err(|e| format!("--scale: {e}"))?
            }
            "--runs" => {
                a.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--dir" => a.dir = Some(PathBuf::from(value("--dir")?)),
            other => {
                return Err(format!(
                    "unknown argument {other:?} (--scale N, --runs N, --dir DIR)"
                ))
            }
        }
    }
    Ok(a)
}

/// The best time of `runs` runs of `sql` on `ctx`, and its answer as a table.
async fn run(ctx: &SessionContext, sql: &str, runs: usize) -> Result<(Duration, String)> {
    let mut best = Duration::MAX;
    let mut answer = String::new();
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let batches = ctx.sql(sql).await?.collect().await?;
        best = best.min(start.elapsed());
        answer = pretty_format_batches(&batches)?.to_string();
    }
    Ok((best, answer))
}

#[tokio::main]
async fn main() -> Result<ExitCode> {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    let (dir, generated) = tables_dir(a.dir.as_deref(), a.scale, Decimals::Decimal)?;
    let dir = dir.path();
    if let Some(took) = generated {
        println!(
            "generated TPC-H at scale {} in {took:.1?} into {}",
            a.scale,
            dir.display()
        );
    }

    let plain = SessionContext::new();
    register_tables(&plain, dir).await?;
    let state = ballista_state(SessionConfig::new(), BroadheadOptions::default());
    let cluster = SessionContext::standalone_with_state(state).await?;
    register_tables(&cluster, dir).await?;
    println!("started a standalone Ballista scheduler and executor");

    let mut all_equal = true;
    for name in ["q1", "q6"] {
        let sql = query(name).expect("a TPC-H query");
        let (plain_time, plain_answer) = run(&plain, sql, a.runs).await?;
        let (cluster_time, cluster_answer) = run(&cluster, sql, a.runs).await?;
        let equal = plain_answer == cluster_answer;
        all_equal &= equal;
        println!(
            "\n{name}, DataFusion ({:.1} ms):\n{plain_answer}",
            ms(plain_time)
        );
        println!(
            "{name}, Ballista with Broadhead ({:.1} ms):\n{cluster_answer}",
            ms(cluster_time)
        );
        println!("{name}: answers {}", if equal { "equal" } else { "DIFFER" });
    }

    let decoded = BroadheadCodec::decoded();
    let e = evaluations();
    println!("\nBroadhead expressions the executor received and recompiled (times decoded):");
    for (sql, n) in &decoded {
        println!("  {n:>3}  {sql}");
    }
    println!(
        "batches their kernels evaluated: {} (and {} by DataFusion's own expression)",
        e.by_kernel, e.by_datafusion
    );
    if !all_equal {
        eprintln!("the answers differ");
        return Ok(ExitCode::FAILURE);
    }
    if decoded.is_empty() || e.by_kernel == 0 {
        eprintln!("the executor ran no Broadhead expression");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
