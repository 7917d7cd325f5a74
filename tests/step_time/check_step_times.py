#!/usr/bin/env python3
"""Checks reverie's step times against the independent truth tool.

For every PyTorch-profiler trace under TRACES (default $REVERIE_TRACES or
../shared/traces) that has ProfilerStep markers and GPU work:
  - `reverie replay --json` measured step = step_time_truth.py's, within 1 us,
    for every step, and the same steps counted;
  - the simulated step (replay) = the measured step (replay is exact by
    construction; this is a regression guard, not accuracy), within 0.5%;
  - `predict --script` with a script that changes nothing gives baseline =
    predicted = replay's simulated mean, and `sweep` agrees with `predict`.
Usage: check_step_times.py REVERIE_BINARY [TRACES]
Exit 0 when every trace agrees; prints one line per trace.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NOOP = ("-- changes nothing: the step-time identity test\n"
        "local P = reverie.params{x = {default = 1, doc = \"unused\"}}\n")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def traces(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".json", ".json.gz")) and "_et." not in f and not f.startswith("MANIFEST"):
                yield os.path.join(d, f)


def main():
    binary = sys.argv[1]
    root = os.environ.get("REVERIE_TRACES") or (
        sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "..", "shared", "traces"))
    if not os.path.isdir(root):
        print(f"SKIP: no traces at {root} (set REVERIE_TRACES)")
        return 77
    failures, checked = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        noop = os.path.join(tmp, "noop.lua")
        with open(noop, "w") as f:
            f.write(NOOP)
        for path in traces(root):
            name = os.path.relpath(path, root)
            truth = json.loads(run([sys.executable, os.path.join(HERE, "step_time_truth.py"), path]))
            if not truth["steps"]:
                continue
            try:
                rep = json.loads(run([binary, "replay", "--json", path]))
            except RuntimeError as e:
                print(f"FAIL {name}: {e}")
                failures += 1
                continue
            problems = []
            steps = rep["steps"]
            if len(steps) != len(truth["steps"]):
                problems.append(f"{len(steps)} steps, truth has {len(truth['steps'])}")
            for r, t in zip(steps, truth["steps"]):
                if abs(r["measured_us"] - t["us"]) > 1.0:
                    problems.append(f"{t['name']} measured {r['measured_us']:.3f} us, truth {t['us']:.3f}")
                if r["counted"] != t["counted"]:
                    problems.append(f"{t['name']} counted={r['counted']}, truth {t['counted']}")
                if abs(r["simulated_us"] - r["measured_us"]) > 0.005 * max(r["measured_us"], 1.0):
                    problems.append(f"{t['name']} replay {r['simulated_us']:.3f} vs measured {r['measured_us']:.3f}")
            pred = json.loads(run([binary, "predict", "--json", path, "--script", noop]))
            sim = rep["step"]["simulated_us"]
            for key in ("baseline_us", "predicted_us"):
                if abs(pred[key] - sim) > 1e-6 * max(sim, 1.0):
                    problems.append(f"predict {key} {pred[key]:.3f} != replay simulated {sim:.3f}")
            sweep = json.loads(run([binary, "sweep", "--json", path, "--script", noop, "--set", "x=1,2"]))
            if abs(sweep["baseline_us"] - pred["baseline_us"]) > 1e-6 * max(sim, 1.0):
                problems.append(f"sweep baseline {sweep['baseline_us']:.3f} != predict {pred['baseline_us']:.3f}")
            checked += 1
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems[:4]))
            else:
                print(f"ok   {name}: {len(steps)} steps, mean {truth['mean_us']:.1f} us")
    print(f"{checked} traces checked, {failures} failed")
    if checked == 0:
        print("FAIL: no trace with steps was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
