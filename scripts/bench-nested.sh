#!/usr/bin/env bash
# Predicates on STRUCT fields and JSON text (issue 44): `broadhead filter --count`
# against DuckDB and Polars in-process, best of RUNS (default 5), on a file none of
# them shaped: 4 M rows written by DuckDB's `COPY` (zstd, its row groups) with
# `s STRUCT(f BIGINT, name VARCHAR)` (NULL in 1 row of 10) and `j VARCHAR` holding a
# JSON object. Prints a Markdown table (docs/benchmarks.md, "Nested and JSON").
#
#   scripts/bench-nested.sh
#
# Shares scripts/bench-e2e.sh's virtual environment under WORK (scripts/bench-peers.sh);
# run it on a quiet machine. `cargo run --release --example nested_cost` measures the
# same predicates in memory against arrow-rs and hand-written loops.
set -euo pipefail
cd "$(dirname "$0")/.."
# WORK, RUNS, the Python environment and BROADHEAD.
source scripts/bench-peers.sh
file="$WORK/nested-duckdb.parquet"
if [[ ! -f "$file" ]]; then
    "$WORK/venv/bin/python" - "$file" <<'PY'
import sys
import duckdb
duckdb.sql(f"""
COPY (SELECT i AS id,
             CASE WHEN hash(i) % 10 = 0 THEN NULL
                  ELSE {{'f': (hash(i * 7) % 1000)::BIGINT, 'name': 'n' || (i % 97)}} END AS s,
             '{{"id":' || i || ',"a":"' || ['x','y','zebra','alpha','beta'][(1 + hash(i * 3) % 5)::BIGINT]
                 || '","tags":["t' || (i % 7) || '"],"n":{{"v":' || (hash(i) % 100000) / 7.0 || '}}}}' AS j
      FROM range(4000000) t(i))
TO '{sys.argv[1]}' (FORMAT parquet, COMPRESSION zstd)
""")
PY
fi
"$WORK/venv/bin/python" scripts/bench_predicates.py --broadhead "$BROADHEAD" --file "$file" --runs "$RUNS" \
    "s.f > 990" \
    "s.f > 990 AND s.name = 'n3'" \
    "j->>'\$.a' = 'x'" \
    "json_extract_string(j, '\$.tags[0]') = 't3'"
