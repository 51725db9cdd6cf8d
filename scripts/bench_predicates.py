#!/usr/bin/env python3
"""Times `broadhead filter FILE --where P --count` (a new process each run, kernel
disk cache warm) against DuckDB and Polars in-process on the same Parquet file, for
the predicates given: the best of RUNS runs each, in milliseconds, checking that the
three counts agree. Prints a Markdown table.

    python3 scripts/bench_predicates.py --broadhead BIN --file F [--runs 5] P [P ...]

A predicate is SQL that all three accept (Polars through its SQL context); where one
of them rejects it, its cell says so.
"""

import argparse
import subprocess
import time


def best_of(runs, f):
    f()  # warm-up: page cache, kernel cache
    best, value = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - start)
    return best * 1000, value


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--broadhead", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("predicates", nargs="+")
    a = p.parse_args()

    import duckdb
    import polars as pl

    con = duckdb.connect()
    print("| predicate | Broadhead ms | DuckDB ms | Polars ms | vs faster peer |")
    print("|---|---:|---:|---:|---:|")
    for pred in a.predicates:
        def broadhead():
            out = subprocess.run(
                [a.broadhead, "filter", a.file, "--where", pred, "--count", "--quiet"],
                check=True, capture_output=True, text=True,
            )
            return int(out.stdout.strip())

        def duck():
            sql = f"SELECT count(*) FROM read_parquet('{a.file}') WHERE {pred}"
            return con.execute(sql).fetchall()[0][0]

        def polars():
            ctx = pl.SQLContext(t=pl.scan_parquet(a.file))
            return ctx.execute(f"SELECT count(*) FROM t WHERE {pred}").collect().item()

        cells, counts = [], []
        for f in (broadhead, duck, polars):
            try:
                ms, n = best_of(a.runs, f)
                cells.append(ms)
                counts.append(n)
            except Exception as e:  # a peer without the function or syntax
                cells.append(None)
                print(f"<!-- {f.__name__}: {str(e).splitlines()[0]} -->")
        if len(set(counts)) > 1:
            raise SystemExit(f"counts differ for {pred!r}: {counts}")
        peers = [c for c in cells[1:] if c is not None]
        ratio = f"{cells[0] / min(peers):.2f}" if peers and cells[0] else "–"
        shown = ["–" if c is None else f"{c:.0f}" for c in cells]
        print(f"| `{pred}` | {shown[0]} | {shown[1]} | {shown[2]} | {ratio} |")


if __name__ == "__main__":
    main()
