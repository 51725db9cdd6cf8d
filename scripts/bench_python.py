#!/usr/bin/env python3
"""Broadhead from Python against pandas (`DataFrame.query` with numexpr, boolean
masks), `pyarrow.compute` + `Table.filter`, polars and DuckDB, on the same in-memory
data: 10 M rows of a lineitem-like table made with numpy (not by Broadhead), one
thread everywhere. Each engine gets the data as its users hold it (pandas a
DataFrame, the others the Arrow table; polars its own frame) and gives back the
same thing: the rows a predicate keeps, every column, or a computed column. Times
are the median of --runs runs after a warm-up, conversions from the caller's object
included. Prints Markdown.

    python3 scripts/bench_python.py [--rows 10000000] [--runs 5] [--cli BROADHEAD]

With --cli (a `broadhead` binary, e.g. scripts/build-static-cli.sh's), the same
predicates are also timed through the Rust API (`broadhead bench` on the same rows
written to Parquet, one batch, as Python holds them) to show what the binding costs.
Also measured: the per-call overhead on a 1,000-row batch, and the peak memory a
filter adds on a 10 M-row float table (in a fresh process).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One thread everywhere, set before the libraries start their pools.
os.environ.setdefault("POLARS_MAX_THREADS", "1")
os.environ.setdefault("NUMEXPR_MAX_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

pa.set_cpu_count(1)
pa.set_io_thread_count(1)

MODES = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]
WORDS = "carefully final deposits quickly special requests ironic packages furiously express accounts blithely regular theodolites".split()

QUERIES = [
    (
        "Q6",
        "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    ),
    ("strings", "l_shipmode IN ('MAIL', 'SHIP') AND l_comment LIKE '%special%'"),
    ("dates", "l_receiptdate > l_commitdate AND l_shipdate >= DATE '1997-01-01'"),
    ("arithmetic", "l_extendedprice * (1 - l_discount) * (1 + l_tax) > 90000"),
]
PROJECTION = "l_extendedprice * (1 - l_discount) AS revenue"


def make_table(rows, seed=42):
    rng = np.random.default_rng(seed)
    ship = rng.integers(np.datetime64("1992-01-02", "D").astype(int), np.datetime64("1998-12-01", "D").astype(int), rows)
    vocabulary = [" ".join(rng.choice(WORDS, rng.integers(2, 7))) for _ in range(4096)]
    comments = pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, len(vocabulary), rows), pa.int32()), pa.array(vocabulary)).cast(pa.string())
    return pa.table(
        {
            "l_orderkey": pa.array(np.arange(rows, dtype=np.int64)),
            "l_quantity": pa.array(rng.integers(1, 51, rows).astype(np.float64)),
            "l_extendedprice": pa.array(np.round(rng.uniform(900, 105000, rows), 2)),
            "l_discount": pa.array(rng.integers(0, 11, rows) / 100.0),
            "l_tax": pa.array(rng.integers(0, 9, rows) / 100.0),
            "l_shipdate": pa.array(ship.astype("datetime64[D]")),
            "l_commitdate": pa.array((ship + rng.integers(-60, 60, rows)).astype("datetime64[D]")),
            "l_receiptdate": pa.array((ship + rng.integers(1, 31, rows)).astype("datetime64[D]")),
            "l_shipmode": pa.array(np.array(MODES, dtype=object)[rng.integers(0, len(MODES), rows)]),
            "l_comment": comments,
        }
    )


def median_ms(runs, f):
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def pandas_mask(df, name):
    import pandas as pd

    if name == "Q6":
        return (
            (df.l_shipdate >= pd.Timestamp("1994-01-01"))
            & (df.l_shipdate < pd.Timestamp("1995-01-01"))
            & df.l_discount.between(0.05, 0.07)
            & (df.l_quantity < 24)
        )
    if name == "strings":
        return df.l_shipmode.isin(["MAIL", "SHIP"]) & df.l_comment.str.contains("special", regex=False)
    if name == "dates":
        return (df.l_receiptdate > df.l_commitdate) & (df.l_shipdate >= pd.Timestamp("1997-01-01"))
    return df.l_extendedprice * (1 - df.l_discount) * (1 + df.l_tax) > 90000


def pandas_query(df, name):
    import pandas as pd  # noqa: F401

    q = {
        "Q6": "l_shipdate >= '1994-01-01' and l_shipdate < '1995-01-01' and 0.05 <= l_discount <= 0.07 and l_quantity < 24",
        "strings": "l_shipmode in ['MAIL', 'SHIP'] and l_comment.str.contains('special')",
        "dates": "l_receiptdate > l_commitdate and l_shipdate >= '1997-01-01'",
        "arithmetic": "l_extendedprice * (1 - l_discount) * (1 + l_tax) > 90000",
    }[name]
    return df.query(q, engine="python" if name == "strings" else "numexpr")


def pyarrow_expr(name):
    import datetime as dt

    f = pc.field
    if name == "Q6":
        return (
            (f("l_shipdate") >= pa.scalar(dt.date(1994, 1, 1)))
            & (f("l_shipdate") < pa.scalar(dt.date(1995, 1, 1)))
            & (f("l_discount") >= 0.05)
            & (f("l_discount") <= 0.07)
            & (f("l_quantity") < 24)
        )
    if name == "strings":
        return f("l_shipmode").isin(["MAIL", "SHIP"]) & pc.match_substring(f("l_comment"), "special")
    if name == "dates":
        return (f("l_receiptdate") > f("l_commitdate")) & (f("l_shipdate") >= pa.scalar(dt.date(1997, 1, 1)))
    one = pc.scalar(1.0)
    return f("l_extendedprice") * (one - f("l_discount")) * (one + f("l_tax")) > 90000


def polars_expr(name):
    import datetime as dt

    import polars as pl

    c = pl.col
    if name == "Q6":
        return (c("l_shipdate") >= dt.date(1994, 1, 1)) & (c("l_shipdate") < dt.date(1995, 1, 1)) & c("l_discount").is_between(0.05, 0.07) & (c("l_quantity") < 24)
    if name == "strings":
        return c("l_shipmode").is_in(["MAIL", "SHIP"]) & c("l_comment").str.contains("special", literal=True)
    if name == "dates":
        return (c("l_receiptdate") > c("l_commitdate")) & (c("l_shipdate") >= dt.date(1997, 1, 1))
    return c("l_extendedprice") * (1 - c("l_discount")) * (1 + c("l_tax")) > 90000


def rust_api_ms(cli, table, sql, runs):
    """`broadhead bench` (the Rust API: Filter::evaluate_into, one batch of every
    row) on the same rows, written to Parquet; its median JIT time."""
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        # One row group: the bench reads it as one batch, as Python holds the table.
        pq.write_table(table, path, compression="none", row_group_size=table.num_rows)
        out = subprocess.run(
            [cli, "bench", path, "--where", sql, "--runs", str(runs), "--batch-size", str(table.num_rows)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    for line in out.splitlines():
        # "  JIT   4.46 ms   0.74 ns/row  …"
        words = line.split()
        if words and words[0] == "JIT":
            return float(words[1])
    raise RuntimeError(f"no jit line in: {out}")


def per_call_overhead_us(bh, runs=2000):
    t = pa.table({"x": pa.array(np.arange(1000, dtype=np.float64)), "y": pa.array(np.arange(1000, dtype=np.int64))})
    batch = t.to_batches()[0]
    f = bh.Filter(t.schema, "x > 2.0 AND x < 600.0")
    out = {}
    for what, call in [("evaluate", lambda: f.evaluate(batch)), ("mask", lambda: f.mask(batch)), ("filter", lambda: f.filter(batch)), ("bh.filter", lambda: bh.filter(batch, "x > 2.0 AND x < 600.0"))]:
        call()
        start = time.perf_counter()
        for _ in range(runs):
            call()
        out[what] = (time.perf_counter() - start) / runs * 1e6
    return out


MEMORY_PROBE = r"""
import resource, sys, numpy as np, pyarrow as pa, broadhead as bh
rows = int(sys.argv[1])
t = pa.table({"x": pa.array(np.random.default_rng(1).random(rows)), "y": pa.array(np.random.default_rng(2).random(rows))})
f = bh.Filter(t.schema, "x < 0.1")
f.evaluate(t.slice(0, 1000))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = f.filter(t)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024, out.nbytes, t.nbytes)
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cli", help="a broadhead binary, to time the same predicates through the Rust API")
    a = p.parse_args()

    import duckdb
    import pandas as pd
    import polars as pl

    import broadhead as bh

    table = make_table(a.rows)
    # numpy columns, dates as datetime64 (as pandas users hold them), strings as
    # pandas gives them.
    df = table.to_pandas(date_as_object=False)
    pdf = pl.from_arrow(table)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.register("t", table)

    print(f"{a.rows:,} rows, 1 thread, median of {a.runs} runs, ms (pandas {pd.__version__}, pyarrow {pa.__version__}, polars {pl.__version__}, duckdb {duckdb.__version__})\n")
    print("| query | rows kept | Broadhead on pyarrow | pyarrow.compute | DuckDB | Broadhead on polars | polars | Broadhead on pandas | pandas masks | pandas query | Rust API |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, sql in QUERIES:
        counts = {
            "bh": bh.filter(table, sql).num_rows,
            "pc": table.filter(pyarrow_expr(name)).num_rows,
            "duckdb": con.sql(f"SELECT count(*) FROM t WHERE {sql}").fetchall()[0][0],
            "polars": pdf.filter(polars_expr(name)).height,
            "pandas": int(pandas_mask(df, name).sum()),
            "bh pandas": len(bh.filter(df, sql)),
            "bh polars": bh.filter(pdf, sql).height,
        }
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{name}: the engines disagree: {counts}")
        times = [
            median_ms(a.runs, lambda: bh.filter(table, sql)),
            median_ms(a.runs, lambda: table.filter(pyarrow_expr(name))),
            median_ms(a.runs, lambda: con.sql(f"SELECT * FROM t WHERE {sql}").to_arrow_table()),
            median_ms(a.runs, lambda: bh.filter(pdf, sql)),
            median_ms(a.runs, lambda: pdf.filter(polars_expr(name))),
            median_ms(a.runs, lambda: bh.filter(df, sql)),
            median_ms(a.runs, lambda: df[pandas_mask(df, name)]),
            median_ms(a.runs, lambda: pandas_query(df, name)),
        ]
        rust = f"{rust_api_ms(a.cli, table, sql, a.runs):.1f} (evaluate: {median_ms(a.runs, lambda: bh.Filter(table.schema, sql).evaluate(table)):.1f})" if a.cli else "–"
        print(f"| {name} | {counts['bh']:,} | " + " | ".join(f"{t:.1f}" for t in times) + f" | {rust} |")

    expr = "l_extendedprice * (1 - l_discount)"
    times = [
        median_ms(a.runs, lambda: bh.select(table, PROJECTION)),
        median_ms(a.runs, lambda: pa.table({"revenue": pc.multiply(table["l_extendedprice"], pc.subtract(1, table["l_discount"]))})),
        median_ms(a.runs, lambda: con.sql(f"SELECT {PROJECTION} FROM t").to_arrow_table()),
        median_ms(a.runs, lambda: bh.select(pdf, PROJECTION)),
        median_ms(a.runs, lambda: pdf.select((pl.col("l_extendedprice") * (1 - pl.col("l_discount"))).alias("revenue"))),
        median_ms(a.runs, lambda: bh.select(df, PROJECTION)),
        median_ms(a.runs, lambda: (df.l_extendedprice * (1 - df.l_discount)).to_frame("revenue")),
        median_ms(a.runs, lambda: df.eval(expr).to_frame("revenue")),
    ]
    print(f"| projection `{PROJECTION}` | {a.rows:,} | " + " | ".join(f"{t:.1f}" for t in times) + " | – |")

    print("\nPer-call overhead on a 1,000-row RecordBatch (µs, mean of 2,000 calls; the kernel's own time is ~1 µs):\n")
    for what, us in per_call_overhead_us(bh).items():
        print(f"- `{what}`: {us:.1f} µs")

    rise, out_bytes, in_bytes = (int(v) for v in subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(a.rows)], check=True, capture_output=True, text=True).stdout.split())
    print(
        f"\nPeak memory added by `Filter.filter` on a {a.rows:,}-row table of two float columns ({in_bytes / 1e6:.0f} MB), 10 % kept: "
        f"{rise / 1e6:.1f} MB against an output of {out_bytes / 1e6:.1f} MB ({rise / max(out_bytes, 1):.2f}× the output)."
    )
    print(json.dumps({"rows": a.rows}), file=sys.stderr)


if __name__ == "__main__":
    main()
