#!/usr/bin/env python3
"""Shared-trace suite for the Kineto importer.

For every Kineto JSON file (.json / .json.gz) under the traces folder, counts
kernels, memcpys, memsets, runtime+driver calls and distinct ProfilerStep#N
numbers independently with Python's json module, and compares them with
`reverie info --json`. Traces are the JSON Object form {"traceEvents": [...]}
or the JSON Array form [event, ...] with at least one event (an object with
"ph"). Files that are JSON but not profiler traces (PyTorch execution traces,
arrays of anything else) must be refused: exit status 2 and one line on
stderr that names the file.

usage: check_counts.py REVERIE_BINARY TRACES_DIR   ($REVERIE_TRACES overrides TRACES_DIR)
Exits 77 (ctest SKIP_RETURN_CODE) when TRACES_DIR does not exist.
"""
import gzip
import json
import os
import re
import subprocess
import sys

KERNEL = {"kernel", "Kernel"}
MEMCPY = {"gpu_memcpy", "Memcpy"}
MEMSET = {"gpu_memset", "Memset"}
API = {"cuda_runtime", "cuda_driver", "Runtime"}
CPU_RANGE = {"cpu_op", "user_annotation", "Operator"}
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def trace_events(doc):
    """The events of a Chrome trace in either form, or None."""
    if isinstance(doc, dict) and "traceEvents" in doc:
        return doc["traceEvents"]
    if isinstance(doc, list) and any(isinstance(e, dict) and "ph" in e for e in doc):
        return doc
    return None


def expected_counts(events):
    c = {"kernel": 0, "memcpy": 0, "memset": 0, "cpu_api": 0}
    steps = set()
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in KERNEL:
            c["kernel"] += 1
        elif cat in MEMCPY:
            c["memcpy"] += 1
        elif cat in MEMSET:
            c["memset"] += 1
        elif cat in API:
            c["cpu_api"] += 1
        elif cat in CPU_RANGE:
            m = STEP.match(str(e.get("name", "")))
            if m:
                steps.add(int(m.group(1)))
    c["steps"] = sorted(steps)
    return c


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    root = os.environ.get("REVERIE_TRACES") or sys.argv[2]
    if not os.path.isdir(root):
        print(f"SKIP: traces folder {root} not found (set REVERIE_TRACES)")
        return 77
    files = []
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".json") or n.endswith(".json.gz"):
                files.append(os.path.join(d, n))
    files.sort()
    failures = 0
    kineto = refused = 0
    for path in files:
        rel = os.path.relpath(path, root)
        doc = load(path)
        run = subprocess.run([binary, "info", path, "--json"], capture_output=True, text=True)
        events = trace_events(doc)
        if events is None:
            lines = run.stderr.strip().splitlines()
            ok = (run.returncode == 2 and len(lines) == 1 and path in lines[0] and
                  run.stdout == "")
            if isinstance(doc, dict) and "nodes" in doc:
                ok = ok and "execution trace" in lines[0]
            print(f"{'ok  ' if ok else 'FAIL'} refused  {rel}: exit {run.returncode}: "
                  f"{run.stderr.strip()}")
            failures += not ok
            refused += 1
            continue
        kineto += 1
        want = expected_counts(events)
        if run.returncode != 0:
            print(f"FAIL {rel}: exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        try:
            info = json.loads(run.stdout)
        except json.JSONDecodeError as err:
            print(f"FAIL {rel}: stdout is not one JSON object ({err})")
            failures += 1
            continue
        got = {k: info["tasks"][k] for k in ("kernel", "memcpy", "memset", "cpu_api")}
        got["steps"] = sorted(it["index"] for it in info["steps"])
        names_ok = all(it["name"] == f"ProfilerStep#{it['index']}" for it in info["steps"])
        ok = got == want and names_ok
        failures += not ok
        detail = (f"kernels {got['kernel']} memcpy {got['memcpy']} memset {got['memset']} "
                  f"api {got['cpu_api']} steps {len(got['steps'])}")
        print(f"{'ok  ' if ok else 'FAIL'} {rel}: {detail}" +
              ("" if ok else f"\n     expected {want}\n     got      {got}"))
    print(f"\n{kineto} Kineto traces checked, {refused} non-traces refused, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
