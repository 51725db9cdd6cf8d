#!/usr/bin/env python3
"""End to end on Parquet: the `broadhead` command against DuckDB and Polars.

Runs the queries of issue 10 (Q6 and a Q12-style predicate, counted, and the Q6 rows
written as CSV), and TPC-H Q19's predicate counted, on TPC-H lineitem files with
Broadhead's command line (a new process each run: start, compile or kernel-cache load
and scan all included), and with DuckDB
and Polars in-process from Python (their time excludes the interpreter's start), with
1 and 2 threads each. Every run's answer is checked: the counts must agree, and the
CSV files must have the same number of lines. Prints a Markdown table of medians and,
with --write-docs FILE, puts it between the `<!-- e2e table: begin -->` and
`<!-- e2e table: end -->` markers of FILE.

Called by scripts/bench-e2e.sh, which makes the virtual environment and the files.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

Q6 = (
    "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
    "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
)
Q12 = (
    "l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate "
    "AND l_shipdate < l_commitdate AND l_receiptdate >= DATE '1994-01-01' "
    "AND l_receiptdate < DATE '1995-01-01'"
)
# TPC-H Q19's predicate on lineitem alone (its conditions on `part` left out), the
# decimals compared as decimals: three branches that repeat two string conditions.
Q19 = (
    "(l_quantity BETWEEN 1 AND 11 AND l_shipmode IN ('AIR', 'AIR REG') "
    "AND l_shipinstruct = 'DELIVER IN PERSON') "
    "OR (l_quantity BETWEEN 10 AND 20 AND l_shipmode IN ('AIR', 'AIR REG') "
    "AND l_shipinstruct = 'DELIVER IN PERSON' AND l_discount > 0.05) "
    "OR (l_quantity BETWEEN 20 AND 30 AND l_shipmode IN ('AIR', 'AIR REG') "
    "AND l_shipinstruct = 'DELIVER IN PERSON' AND l_tax < 0.04)"
)
QUERIES = {
    "Q6 count": ("count", Q6),
    "Q12-style count": ("count", Q12),
    "Q19-style count": ("count", Q19),
    "Q6 rows to CSV": ("csv", Q6),
}
NAMES = {Q6: "Q6", Q12: "Q12", Q19: "Q19"}


def polars_predicate(pl, name):
    """The same predicates as Polars expressions (the decimal columns are compared
    with decimal literals, as SQL compares them)."""
    import datetime as dt
    from decimal import Decimal

    def lit(text):
        return pl.lit(Decimal(text), dtype=pl.Decimal(15, 2))

    c = pl.col
    if name == "Q19":
        air = c("l_shipmode").is_in(["AIR", "AIR REG"])
        deliver = c("l_shipinstruct") == "DELIVER IN PERSON"
        q = c("l_quantity")
        return (
            ((q >= lit("1")) & (q <= lit("11")) & air & deliver)
            | ((q >= lit("10")) & (q <= lit("20")) & air & deliver & (c("l_discount") > lit("0.05")))
            | ((q >= lit("20")) & (q <= lit("30")) & air & deliver & (c("l_tax") < lit("0.04")))
        )
    if name == "Q6":
        return (
            (c("l_shipdate") >= dt.date(1994, 1, 1))
            & (c("l_shipdate") < dt.date(1995, 1, 1))
            & (c("l_discount") >= lit("0.05"))
            & (c("l_discount") <= lit("0.07"))
            & (c("l_quantity") < lit("24"))
        )
    return (
        c("l_shipmode").is_in(["MAIL", "SHIP"])
        & (c("l_commitdate") < c("l_receiptdate"))
        & (c("l_shipdate") < c("l_commitdate"))
        & (c("l_receiptdate") >= dt.date(1994, 1, 1))
        & (c("l_receiptdate") < dt.date(1995, 1, 1))
    )


def run_in_process(engine, threads, path, runs, scratch):
    """Child process body: time every query with `engine` (DuckDB or Polars) limited to
    `threads` threads; prints {query: [answer, [seconds...]]} as JSON."""
    results = {}
    if engine == "polars":
        os.environ["POLARS_MAX_THREADS"] = str(threads)
        import polars as pl
    else:
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
    for label, (kind, sql) in QUERIES.items():
        name = NAMES[sql]
        out = os.path.join(scratch, f"{engine}-{threads}.csv")
        times, answer = [], None
        for _ in range(runs + 1):  # one warm-up run, not counted
            start = time.perf_counter()
            if engine == "polars":
                lf = pl.scan_parquet(path).filter(polars_predicate(pl, name))
                if kind == "count":
                    answer = lf.select(pl.len()).collect().item()
                else:
                    lf.sink_csv(out)
            else:
                source = f"SELECT * FROM read_parquet('{path}') WHERE {sql}"
                if kind == "count":
                    answer = con.execute(f"SELECT count(*) FROM ({source})").fetchall()[0][0]
                else:
                    con.execute(f"COPY ({source}) TO '{out}' (HEADER, DELIMITER ',')")
            times.append(time.perf_counter() - start)
        if kind == "csv":
            answer = count_lines(out) - 1
            os.remove(out)
        results[label] = [answer, times[1:]]
    print(json.dumps(results))


def count_lines(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def run_broadhead(binary, threads, path, runs, scratch, cache):
    """Times the `broadhead` command: a new process a run, wall time."""
    results = {}
    for label, (kind, sql) in QUERIES.items():
        out = os.path.join(scratch, f"broadhead-{threads}.csv")
        cmd = [binary, "filter", path, "--where", sql, "--threads", str(threads), "--quiet"]
        cmd += ["--count"] if kind == "count" else ["--format", "csv", "--output", out]
        if not cache:
            cmd.append("--no-kernel-cache")
        times, answer = [], None
        for _ in range(runs + 1):
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - start)
            if kind == "count":
                answer = int(done.stdout.strip())
        if kind == "csv":
            answer = count_lines(out) - 1
            os.remove(out)
        results[label] = [answer, times[1:]]
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--broadhead", required=True)
    p.add_argument("--file", action="append", required=True, help="LABEL=PATH")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--write-docs")
    p.add_argument("--child", nargs=3, metavar=("ENGINE", "THREADS", "PATH"), help=argparse.SUPPRESS)
    p.add_argument("--scratch", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        run_in_process(a.child[0], int(a.child[1]), a.child[2], a.runs, a.scratch)
        return

    engines = [("Broadhead", "cache"), ("Broadhead", "nocache"), ("DuckDB", None), ("Polars", None)]
    rows, disagreements = [], []
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.file[0].split("=", 1)[1]))) as scratch:
        for spec in a.file:
            label, path = spec.split("=", 1)
            for threads in [int(t) for t in a.threads.split(",")]:
                measured = {}
                for engine, variant in engines:
                    key = engine if variant != "nocache" else "Broadhead, no kernel cache"
                    if engine == "Broadhead":
                        measured[key] = run_broadhead(a.broadhead, threads, path, a.runs, scratch, variant == "cache")
                    else:
                        child = subprocess.run(
                            [sys.executable, __file__, "--broadhead", a.broadhead, "--file", spec,
                             "--runs", str(a.runs), "--scratch", scratch,
                             "--child", engine.lower(), str(threads), path],
                            capture_output=True, text=True, check=True,
                        )
                        measured[key] = json.loads(child.stdout)
                    print(f"  {label} {threads} thread(s) {key}: done", file=sys.stderr)
                for query in QUERIES:
                    answers = {k: v[query][0] for k, v in measured.items()}
                    if len(set(answers.values())) != 1:
                        disagreements.append(f"{label} {query} ({threads} threads): {answers}")
                    medians = {k: statistics.median(v[query][1]) * 1000 for k, v in measured.items()}
                    rows.append((label, query, threads, next(iter(answers.values())), medians))
    keys = ["Broadhead", "Broadhead, no kernel cache", "DuckDB", "Polars"]
    lines = [
        "| file | query | threads | rows | " + " | ".join(keys) + " | Broadhead vs fastest other |",
        "|---|---|---:|---:|" + "---:|" * len(keys) + "---|",
    ]
    for label, query, threads, answer, m in rows:
        best_other = min(m["DuckDB"], m["Polars"])
        ratio = m["Broadhead"] / best_other
        verdict = f"{ratio:.2f}× ({'faster' if ratio < 1 else 'slower'})"
        cells = " | ".join(f"{m[k]:,.0f} ms" for k in keys)
        lines.append(f"| {label} | {query} | {threads} | {answer:,} | {cells} | {verdict} |")
    table = "\n".join(lines)
    print(table)
    if disagreements:
        print("ANSWERS DIFFER:\n  " + "\n  ".join(disagreements), file=sys.stderr)
        sys.exit(1)
    if a.write_docs:
        with open(a.write_docs) as f:
            doc = f.read()
        begin, end = "<!-- e2e table: begin -->", "<!-- e2e table: end -->"
        if begin not in doc or end not in doc:
            sys.exit(f"{a.write_docs} has no {begin} … {end} markers")
        head, rest = doc.split(begin, 1)
        tail = rest.split(end, 1)[1]
        with open(a.write_docs, "w") as f:
            f.write(f"{head}{begin}\n{table}\n{end}{tail}")


if __name__ == "__main__":
    main()
