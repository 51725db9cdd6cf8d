#!/usr/bin/env bash
# Common predicates outside the benchmarked shapes (issue 40): `broadhead filter
# --count` against DuckDB and Polars in-process on TPC-H lineitem SF1, best of RUNS
# (default 5). Prints a Markdown table (docs/benchmarks.md, "Predicates").
#
#   scripts/bench-predicates.sh [PREDICATE...]   # default: the list below
#
# Reuses scripts/bench-e2e.sh's virtual environment and file under WORK (default
# target/bench-e2e); run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
WORK=${WORK:-$TARGET/bench-e2e}
RUNS=${RUNS:-5}
mkdir -p "$WORK"
if [[ ! -x "$WORK/venv/bin/python" ]]; then
    python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install --quiet duckdb==2.0.0 polars==2.1.0
fi
BROADHEAD=$(scripts/build-static-cli.sh)
file="$WORK/lineitem-sf1.parquet"
[[ -f "$file" ]] || "$BROADHEAD" gen tpch --scale 1 --quiet "$file"
if [[ $# -eq 0 ]]; then
    set -- \
        "EXTRACT(year FROM l_shipdate) = 1995" \
        "EXTRACT(year FROM l_shipdate) = 1995 AND l_returnflag = 'R'" \
        "EXTRACT(month FROM l_shipdate) = 3" \
        "EXTRACT(dow FROM l_commitdate) = 0" \
        "EXTRACT(doy FROM l_receiptdate) < 32" \
        "l_orderkey % 7 = 0" \
        "l_partkey % 1000 = 17" \
        "length(l_comment) > 40" \
        "length(l_comment) > 40 AND l_orderkey % 7 = 0"
fi
"$WORK/venv/bin/python" scripts/bench_predicates.py --broadhead "$BROADHEAD" \
    --file "$file" --runs "$RUNS" "$@"
