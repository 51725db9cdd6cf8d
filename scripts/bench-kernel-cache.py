#!/usr/bin/env python3
"""The `broadhead` command end to end with a warm on-disk kernel cache and without one.

Runs `broadhead filter FILE --count --where Q6` (TPC-H Q6's predicate) as whole
processes, alternating a run that loads its kernel from a warm kernel cache (in a
directory of its own, filled by a first run) and a run with `--no-kernel-cache`
(compiled in the background while the interpreter starts), and prints the medians
of the wall times. Every run must print the same count.

    cargo build --release
    target/release/broadhead gen tpch --scale 1 --table lineitem /tmp/lineitem-sf1.parquet
    python3 scripts/bench-kernel-cache.py target/release/broadhead /tmp/lineitem-sf1.parquet
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

Q6 = (
    "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
    "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
)
RUNS = 15


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} BROADHEAD_BINARY LINEITEM_PARQUET")
    binary, data = sys.argv[1:]
    cache = tempfile.mkdtemp(prefix="broadhead-kernel-cache-")
    env = dict(os.environ, BROADHEAD_KERNEL_CACHE_DIR=cache)
    env.pop("BROADHEAD_KERNEL_CACHE", None)

    def run(extra: list[str]) -> tuple[float, str]:
        start = time.perf_counter()
        out = subprocess.run(
            [binary, *extra, "filter", data, "--count", "--where", Q6],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return time.perf_counter() - start, out.stdout.strip()

    try:
        first, count = run([])
        times: dict[str, list[float]] = {"warm kernel cache": [], "--no-kernel-cache": []}
        for _ in range(RUNS):
            for name, extra in (("warm kernel cache", []), ("--no-kernel-cache", ["--no-kernel-cache"])):
                t, c = run(extra)
                if c != count:
                    sys.exit(f"{name}: counted {c}, the first run {count}")
                times[name].append(t)
        print(f"Q6 count {count}; first run, empty kernel cache: {first * 1e3:.0f} ms")
        for name, ts in times.items():
            print(
                f"{name}: median {statistics.median(ts) * 1e3:.0f} ms "
                f"(min {min(ts) * 1e3:.0f}, max {max(ts) * 1e3:.0f}, {len(ts)} runs)"
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
