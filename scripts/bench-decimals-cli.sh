#!/usr/bin/env bash
# End-to-end Q6 with the command line on TPC-H lineitem files whose decimal columns
# are DECIMAL(15,2) and DOUBLE: the wall time of `broadhead filter … --count`, the
# median of RUNS runs (default 7) after one warm-up run, files in the page cache.
#
#   scripts/bench-decimals-cli.sh [SCALE]     # default scale 1
#
# Needs a release build (`cargo build --release`; BROADHEAD=path overrides the binary).
# WORK (default: a temporary directory, removed at the end) holds the two files.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1}
RUNS=${RUNS:-7}
BROADHEAD=${BROADHEAD:-target/release/broadhead}
if [[ -z "${WORK:-}" ]]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
[[ -x "$BROADHEAD" ]] || { echo "no $BROADHEAD: run cargo build --release first" >&2; exit 1; }

Q6="l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
for kind in decimal double; do
    [[ -f "$WORK/lineitem-$kind.parquet" ]] ||
        "$BROADHEAD" gen tpch --scale "$SCALE" --decimals "$kind" --quiet "$WORK/lineitem-$kind.parquet"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for flags in "" "--interpret" "--no-pushdown"; do
    for kind in decimal double; do
        file="$WORK/lineitem-$kind.parquet"
        count=$("$BROADHEAD" filter "$file" --count --where "$Q6" $flags)
        times=$(for _ in $(seq "$RUNS"); do
            start=$(date +%s.%N)
            "$BROADHEAD" filter "$file" --count --where "$Q6" $flags > /dev/null
            end=$(date +%s.%N)
            echo "$end - $start" | bc -l
        done | median)
        printf '%-8s %-14s count %s  median %.3f s of %s runs\n' "$kind" "${flags:-(default)}" "$count" "$times" "$RUNS"
    done
done
