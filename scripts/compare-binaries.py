#!/usr/bin/env python3
"""Two builds of the `broadhead` command side by side, without the disk kernel cache
(so every run compiles, tiered): the wall time of `filter FILE --where Q --count` for
TPC-H Q6 and the Q12-style predicate with 1 and 2 threads, medians of RUNS runs
alternating the two binaries after one warm-up each, and each build's `--stats` line
(how many batches ran on the kernel, when it arrived).

    python3 scripts/compare-binaries.py OLD_BINARY NEW_BINARY LINEITEM.parquet [RUNS]

To compare a change with an earlier commit, build each and copy
`target/release/broadhead` aside before building the other (they share the path).
"""

import statistics
import subprocess
import sys
import time

# The queries of the end-to-end benchmark (same directory).
from bench_e2e import Q6, Q12


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    binaries = {"old": sys.argv[1], "new": sys.argv[2]}
    path, runs = sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 11
    for name, predicate in [("Q6 count", Q6), ("Q12-style count", Q12)]:
        for threads in ["1", "2"]:
            times = {k: [] for k in binaries}
            stats, answers = {}, set()
            for run in range(runs + 1):
                for label, binary in binaries.items():
                    cmd = [binary, "filter", path, "--where", predicate, "--count"]
                    cmd += ["--threads", threads, "--no-kernel-cache", "--stats"]
                    start = time.perf_counter()
                    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    if run > 0:
                        times[label].append(time.perf_counter() - start)
                    answers.add(done.stdout.strip())
                    stats[label] = [l.strip() for l in done.stderr.splitlines() if "where" in l]
            if len(answers) != 1:
                sys.exit(f"{name}: the builds disagree: {answers}")
            medians = ", ".join(
                f"{label} {statistics.median(t) * 1e3:.1f} ms" for label, t in times.items()
            )
            print(f"{name}, {threads} thread(s), {answers.pop()} rows: {medians}")
            for label, lines in stats.items():
                print(f"    {label}: {' | '.join(lines)}")


if __name__ == "__main__":
    main()
