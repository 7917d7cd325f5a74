#!/usr/bin/env python3
"""Collector overhead on a GPU: reverie_torch vs torch.profiler vs nothing.

Each mode trains the same model (default ResNet-50, synthetic data) in a
fresh process, several times (--repeats), and reports the median step
time over the *recorded* steps, as a ratio to the unprofiled baseline
measured in the same run (docs/PERFORMANCE.md wants ratios):

    python3 frameworks/pytorch/tools/measure_overhead.py --model resnet50 --batch 64

Needs torch (+ torchvision for ResNet-50), a CUDA GPU and a build of
libreverie_collector.so (found like reverie_torch finds it; set
REVERIE_COLLECTOR_LIB otherwise). Prints a Markdown table for
docs/PERFORMANCE.md and writes the raw numbers with --json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_mode(mode, args, workdir, repeat):
    out = os.path.join(workdir, f"{mode}_{repeat}.pb" if mode == "reverie" else f"{mode}_{repeat}")
    if mode == "torch":
        os.makedirs(out, exist_ok=True)
        out = os.path.join(out, "trace.json")
    result_path = os.path.join(workdir, f"{mode}_{repeat}.json")
    cmd = [sys.executable, os.path.join(HERE, "_harness.py"), "--model", args.model,
           "--batch", str(args.batch), "--warmup", str(args.warmup),
           "--steps", str(args.steps), "--record", mode, "--out", out,
           "--json", result_path]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(result_path) as f:
        result = json.load(f)
    if mode == "torch":
        folder = os.path.dirname(out)
        result["trace_bytes"] = sum(os.path.getsize(os.path.join(folder, n))
                                    for n in os.listdir(folder))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default="")
    args = p.parse_args()

    modes = ["none", "reverie", "torch"]
    results = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as workdir:
        for r in range(args.repeats):
            for m in modes:  # interleaved so drift hits every mode alike
                results[m].append(run_mode(m, args, workdir, r))
    med = {m: statistics.median(x["median_ms"] for x in results[m]) for m in modes}
    gpu = results["none"][0]["gpu"]
    print(f"{args.model}, batch {args.batch}, {gpu}, torch {results['none'][0]['torch']}, "
          f"median of {args.repeats} runs x {args.steps} recorded steps")
    print()
    print("| mode | step (ms) | vs. baseline | trace size |")
    print("|---|---|---|---|")
    for m in modes:
        size = results[m][0].get("trace_bytes")
        size_text = f"{size / 1e6:.1f} MB" if size else "-"
        print(f"| {m} | {med[m]:.2f} | {med[m] / med['none']:.3f}x | {size_text} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "median_ms": med}, f, indent=1)


if __name__ == "__main__":
    main()
