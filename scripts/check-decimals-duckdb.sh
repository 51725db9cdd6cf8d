#!/usr/bin/env bash
# Checks Broadhead's decimals against DuckDB on TPC-H lineitem with DECIMAL(15,2)
# columns: Q6's count, a few other counts that prune on decimal statistics, and the
# exact printed values of Q1-style projections for every row Q6 selects.
#
#   scripts/check-decimals-duckdb.sh [SCALE]        # default scale 1 (6,001,215 rows)
#
# Needs a release build (`cargo build --release`; BROADHEAD=path overrides the binary)
# and Python 3 with the duckdb package (a virtual environment is made in
# $WORK/venv if `python3 -c 'import duckdb'` fails; PyPI must be reachable then).
# WORK (default: a temporary directory, removed at the end) holds the file and outputs.
# Exit status 0 when every check agrees, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1}
BROADHEAD=${BROADHEAD:-target/release/broadhead}
if [[ -z "${WORK:-}" ]]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
[[ -x "$BROADHEAD" ]] || { echo "no $BROADHEAD: run cargo build --release first" >&2; exit 1; }

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import duckdb' 2>/dev/null; then
    "$PYTHON" -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install --quiet duckdb
    PYTHON="$WORK/venv/bin/python"
fi

FILE="$WORK/lineitem.parquet"
"$BROADHEAD" gen tpch --scale "$SCALE" --quiet "$FILE"

Q6="l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
SELECT="l_orderkey, l_linenumber, l_extendedprice * (1 - l_discount) * (1 + l_tax) AS charge, l_extendedprice * l_discount AS revenue, l_extendedprice * (1 - l_discount) AS disc_price"

failed=0
check() { # name, broadhead's answer, duckdb's answer
    if [[ "$2" == "$3" ]]; then
        echo "ok    $1: $2"
    else
        echo "FAIL  $1: Broadhead $2, DuckDB $3"
        failed=1
    fi
}

duck() { # SQL over the file, first column of the first row
    "$PYTHON" - "$FILE" "$1" <<'EOF'
import sys, duckdb
con = duckdb.connect()
con.execute(f"CREATE VIEW lineitem AS SELECT * FROM read_parquet('{sys.argv[1]}')")
print(con.execute(sys.argv[2]).fetchone()[0])
EOF
}

for predicate in "$Q6" \
    "l_discount BETWEEN 0.05 AND 0.07" \
    "l_discount = 0.05" \
    "l_extendedprice > 100000" \
    "l_extendedprice > 50000" \
    "l_extendedprice * (1 - l_discount) > 50000.005" \
    "l_extendedprice * (1 - l_discount) * (1 + l_tax) > 50000" \
    "l_quantity + l_tax > 50.07" \
    "l_tax + l_discount = 0.1"; do
    ours=$("$BROADHEAD" filter "$FILE" --count --where "$predicate")
    theirs=$(duck "SELECT count(*) FROM lineitem WHERE $predicate")
    check "count where $predicate" "$ours" "$theirs"
done

# The printed values of every row Q6 selects, as CSV, byte for byte.
"$BROADHEAD" filter "$FILE" --where "$Q6" --select "$SELECT" --format csv -o "$WORK/broadhead.csv"
"$PYTHON" - "$FILE" "$WORK/duckdb.csv" <<EOF
import sys, duckdb
con = duckdb.connect()
con.execute(f"CREATE VIEW lineitem AS SELECT * FROM read_parquet('{sys.argv[1]}')")
con.execute(f"COPY (SELECT $SELECT FROM lineitem WHERE $Q6) TO '{sys.argv[2]}' (HEADER)")
EOF
rows=$(($(wc -l < "$WORK/broadhead.csv") - 1))
if cmp -s "$WORK/broadhead.csv" "$WORK/duckdb.csv"; then
    echo "ok    Q1-style projections of the $rows rows Q6 selects print as DuckDB prints them"
else
    echo "FAIL  Q1-style projections differ from DuckDB's (first differences):"
    diff "$WORK/broadhead.csv" "$WORK/duckdb.csv" | head -10 || true
    failed=1
fi
exit $failed
