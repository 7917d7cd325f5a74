#!/usr/bin/env python3
"""The one step time on a synthetic async trace, through every command.

tests/step_time/data/async_steps.json: three steps whose CPU part (100 us, two
launches) runs far ahead of their GPU work (two 1000 us kernels), no sync.
The profiler overview's steps are 2020, 2000, 2000 us (the GPU period), not
the 100 us CPU spans; replay, predict, sweep and validate must all say so.
async_steps_fast_gpu.json is the same program with kernels twice as fast.
Also checks validate's one-line errors. Usage: check_async_cli.py REVERIE
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
MEAN = (2020 + 2000 + 2000) / 3
FAILURES = []


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        FAILURES.append(f"{' '.join(args[1:])}: exit {p.returncode}, expected {expect}: {p.stderr.strip()[:200]}")
    return p


def close(name, got, want, tol=1e-6):
    if abs(got - want) > tol * max(1.0, abs(want)):
        FAILURES.append(f"{name}: {got} != {want}")


def main():
    r = sys.argv[1]
    trace = os.path.join(DATA, "async_steps.json")
    fast = os.path.join(DATA, "async_steps_fast_gpu.json")
    half = os.path.join(DATA, "half_gemm.lua")
    identity = "identity.lua"

    rep = json.loads(run([r, "replay", "--json", trace]).stdout)
    close("replay measured", rep["step"]["measured_us"], MEAN)
    close("replay simulated", rep["step"]["simulated_us"], MEAN)
    for s, want in zip(rep["steps"], (2020, 2000, 2000)):
        close("replay " + s["name"], s["measured_us"], want)

    pred = json.loads(run([r, "predict", "--json", trace, "--script", identity]).stdout)
    close("predict baseline", pred["baseline_us"], MEAN)
    close("predict predicted", pred["predicted_us"], MEAN)
    halfp = json.loads(run([r, "predict", "--json", trace, "--script", half]).stdout)
    close("predict with half kernels", halfp["predicted_us"], (1020 + 1000 + 1000) / 3)

    sweep = json.loads(run([r, "sweep", "--json", trace, "--script", "amp.lua", "--set",
                            "compute_speedup=1,2", "--set", "memory_speedup=1",
                            "--set", "cast_kernels=false", "--set", "grad_scaler=false"]).stdout)
    close("sweep baseline", sweep["baseline_us"], MEAN)
    close("sweep point 1 (no change)", sweep["points"][0]["predicted_us"], MEAN)

    val = json.loads(run([r, "validate", "--json", trace, fast, "--script", half]).stdout)
    close("validate measured", val["step"]["measured_us"], (1020 + 1000 + 1000) / 3)
    close("validate predicted", val["step"]["predicted_us"], (1020 + 1000 + 1000) / 3)
    close("validate baseline", val["step"]["baseline_us"], MEAN)
    if val["step"]["verdict"] != "inside the noise band":
        FAILURES.append("validate verdict: " + val["step"]["verdict"])

    # Bad input: one line, exit 2, naming the file or the script.
    bad = [
        ([r, "validate", trace, os.path.join(DATA, "async_two_steps.json"), "--script", identity], "async_two_steps.json"),
        ([r, "validate", trace, os.path.join(DATA, "async_no_markers.json"), "--script", identity], "async_no_markers.json"),
        ([r, "validate", trace, fast, "--script", os.path.join(DATA, "missing.lua")], "missing.lua"),
        ([r, "validate", trace, os.path.join(DATA, "no_such_file.json"), "--script", identity], "no_such_file.json"),
        ([r, "validate", trace, fast], "--script"),
    ]
    for args, needle in bad:
        p = run(args, expect=2)
        err = p.stderr.strip()
        if "\n" in err or needle not in err:
            FAILURES.append(f"{' '.join(args[1:])}: want one line naming {needle}, got {err[:200]!r}")

    for f in FAILURES:
        print("FAIL", f)
    print("ok" if not FAILURES else f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
