#!/usr/bin/env bash
# Common predicates outside the benchmarked shapes (issue 40): `broadhead filter
# --count` against DuckDB and Polars in-process on TPC-H lineitem SF1, best of RUNS
# (default 5). Prints a Markdown table (docs/benchmarks.md, "Predicates").
#
#   scripts/bench-predicates.sh [PREDICATE...]   # default: the list below
#
# Shares scripts/bench-e2e.sh's virtual environment and SF1 file under WORK (default
# target/bench-e2e; scripts/bench-peers.sh); run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# WORK, RUNS, the Python environment and BROADHEAD.
source scripts/bench-peers.sh
file="$WORK/lineitem-sf1.parquet"
[[ -f "$file" ]] || "$BROADHEAD" gen tpch --scale 1 --quiet "$file"
if [[ $# -eq 0 ]]; then
    set -- \
        "EXTRACT(year FROM l_shipdate) = 1995" \
        "EXTRACT(year FROM l_shipdate) = 1995 AND l_returnflag = 'R'" \
        "EXTRACT(month FROM l_shipdate) = 3" \
        "EXTRACT(dow FROM l_commitdate) = 0" \
        "EXTRACT(doy FROM l_receiptdate) < 32" \
        "date_trunc('month', l_shipdate) = DATE '1995-03-01'" \
        "date_trunc('quarter', l_shipdate) = DATE '1995-04-01'" \
        "date_diff('day', l_shipdate, l_receiptdate) > 20" \
        "l_shipdate + INTERVAL '30 days' > l_receiptdate" \
        "greatest(l_quantity, l_tax * 100) > 40" \
        "l_orderkey % 7 = 0" \
        "l_partkey % 1000 = 17" \
        "length(l_comment) > 40" \
        "length(l_comment) > 40 AND l_orderkey % 7 = 0" \
        "starts_with(l_comment, 'ca')" \
        "contains(l_comment, 'special')" \
        "l_comment ILIKE '%special%'" \
        "l_shipdate + INTERVAL '1 month' > l_receiptdate"
fi
"$WORK/venv/bin/python" scripts/bench_predicates.py --broadhead "$BROADHEAD" \
    --file "$file" --runs "$RUNS" "$@"
