# Sourced by the scripts that measure the command line against DuckDB and Polars
# (bench-e2e.sh, bench-predicates.sh): sets WORK (default target/bench-e2e) with a
# Python virtual environment holding DuckDB and Polars (pinned here), RUNS (default
# 5), and BROADHEAD, the command as it is best built: LLVM linked statically into a
# non-PIE executable (starts in ~5 ms instead of ~24; scripts/build-static-cli.sh).
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
