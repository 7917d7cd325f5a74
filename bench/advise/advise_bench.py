#!/usr/bin/env python3
"""How long `reverie advise` takes against one `reverie predict` of the same
trace, in the same run (issue 28's target: advise at most 5x one predict,
its predictions sharing the loaded baseline and running on all cores).

    python3 bench/advise/advise_bench.py build/release/cli/reverie TRACE [--runs 3]

Prints the median wall time of `predict --script amp.lua`, of `advise` on
every core and of `advise --threads 1`, interleaved run by run so that the
load of a shared machine hits all three alike, and the ratios of the medians.
"""

import argparse
import os
import statistics
import subprocess
import time


def timed(args):
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    cases = {
        "predict amp.lua": [a.cli, "predict", a.trace, "--script", "amp.lua", "--json"],
        "advise (every core)": [a.cli, "advise", a.trace, "--json"],
        "advise --threads 1": [a.cli, "advise", a.trace, "--json", "--threads", "1"],
    }
    times = {name: [] for name in cases}
    for _ in range(a.runs):
        for name, args in cases.items():
            times[name].append(timed(args))
    med = {name: statistics.median(t) for name, t in times.items()}
    base = med["predict amp.lua"]
    print(f"{os.path.basename(a.trace)}: {a.runs} runs, {os.cpu_count()} cores")
    for name, m in med.items():
        print(f"  {name:22s} {m:7.2f} s  {m / base:5.1f}x predict")


if __name__ == "__main__":
    main()
