#!/usr/bin/env bash
# End to end on Parquet (issue 10): the `broadhead` command against DuckDB and Polars
# on TPC-H lineitem at scale 1 and 8, with 1 and 2 threads; checks that the answers
# agree and writes the table into docs/benchmarks.md ("End to end on Parquet").
#
#   scripts/bench-e2e.sh [SCALE...]      # default: 1 8
#
# Makes once, under WORK (default target/bench-e2e): a Python virtual environment with
# DuckDB and Polars (pinned below), and the lineitem files (`broadhead gen tpch`).
# Run it on a quiet machine: other work running at the same time skews the table.
# RUNS (default 5) timed runs a measurement after one warm-up run; the files stay in
# the page cache (24 GiB here), so this measures computation, not the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then SCALES=("$@"); else SCALES=(1 8); fi
# WORK, RUNS, the Python environment and BROADHEAD.
source scripts/bench-peers.sh

files=()
for scale in "${SCALES[@]}"; do
    file="$WORK/lineitem-sf$scale.parquet"
    [[ -f "$file" ]] || "$BROADHEAD" gen tpch --scale "$scale" --quiet "$file"
    files+=(--file "SF$scale=$file")
done
"$WORK/venv/bin/python" scripts/bench_e2e.py --broadhead "$BROADHEAD" "${files[@]}" \
    --runs "$RUNS" --write-docs docs/benchmarks.md
