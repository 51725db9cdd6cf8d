#!/usr/bin/env bash
# Runs the benchmark suite and regenerates docs/benchmarks.md and docs/benchmark-ratios.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench expressions
cargo run --release --example bench_report
