#!/usr/bin/env python3
"""Step times of a PyTorch-profiler trace, computed independently of reverie.

The truth side of reverie's step-time test: it reads the Kineto JSON with
Python's json module and applies the PyTorch profiler TensorBoard overview's
rule (kineto tb_plugin, StepParser._find_device_steps/_update_steps_duration)
as docs/ACCURACY.md states it:
  - a GPU activity belongs to the step whose ProfilerStep#N CPU span contains
    the whole runtime call that launched it (matched by correlation id);
  - prev = start of step 1, raised to the end of GPU activities of no step
    that end before step 1's first GPU activity;
  - start_i = max(prev, a_i); end_i = max(b_i, last GPU end of step i) (or
    max(b_i, start_i) without GPU work); prev = end_i;
  - trailing steps without GPU work are not counted, nor the last step when
    it launched fewer than 0.8x the GPU activities of the one before.
Prints JSON: {"steps": [{"name", "us", "counted"}], "mean_us"}.
Usage: step_time_truth.py TRACE(.json|.json.gz)
"""
import gzip
import json
import sys

RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
STEP_CATS = {"user_annotation", "cpu_op", "Operator", "python_function"}


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def step_index(name):
    prefix = "ProfilerStep#"
    if not name.startswith(prefix) or not name[len(prefix):].isdigit():
        return None
    return int(name[len(prefix):])


def main(path):
    events = [e for e in load(path) if isinstance(e, dict) and e.get("ph") == "X"]
    steps, seen = [], set()
    runtimes, devices = {}, []
    for e in events:
        cat, name = e.get("cat", ""), e.get("name", "")
        ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0) or 0)
        corr = (e.get("args") or {}).get("correlation")
        if cat in STEP_CATS and step_index(name) is not None:
            n = step_index(name)
            if n not in seen:
                seen.add(n)
                steps.append([ts, ts + dur, name])
        elif cat in RUNTIME:
            runtimes[corr if corr is not None else ("no correlation", len(runtimes))] = (ts, ts + dur)
        elif cat in DEVICE:
            devices.append((ts, ts + dur, corr))
    if not devices and not runtimes:
        # Nothing reverie can simulate without GPU work or runtime calls.
        print(json.dumps({"steps": [], "mean_us": None}))
        return
    if not steps:
        # One step from the first runtime call or GPU activity to the last.
        spans = list(runtimes.values()) + [(d[0], d[1]) for d in devices]
        us = max(e for _, e in spans) - min(s for s, _ in spans)
        print(json.dumps({"steps": [{"name": "whole trace", "us": us, "counted": True}],
                          "mean_us": us}))
        return
    steps.sort()
    starts = [s[0] for s in steps]
    count = [0] * len(steps)
    last_end = [None] * len(steps)
    first_start = [None] * len(steps)
    stepless = []
    for ts, end, corr in devices:
        rt = runtimes.get(corr)
        owner = None
        if rt is not None:
            for i in range(len(steps) - 1, -1, -1):
                if starts[i] <= rt[0]:
                    if rt[1] <= steps[i][1]:
                        owner = i
                    break
        if owner is None:
            stepless.append(end)
            continue
        count[owner] += 1
        last_end[owner] = end if last_end[owner] is None else max(last_end[owner], end)
        first_start[owner] = ts if first_start[owner] is None else min(first_start[owner], ts)
    any_gpu = any(count)
    out, prev = [], None
    for i, (a, b, name) in enumerate(steps):
        if not any_gpu:
            out.append([name, b - a])
            continue
        if prev is None:
            prev = a
            if count[0] > 0:
                for end in stepless:
                    if end < first_start[0]:
                        prev = max(prev, end)
        start = max(prev, a)
        end = max(b, last_end[i]) if count[i] else max(b, start)
        end = max(end, start)
        out.append([name, end - start])
        prev = end
    keep = len(steps)
    if any_gpu and len(steps) > 1:
        last = len(steps) - 1
        while last >= 0 and count[last] == 0:
            last -= 1
        keep = last + 1
        if last > 0 and count[last - 1] * 0.8 > count[last]:
            keep = last
    rows = [{"name": n, "us": us, "counted": i < keep} for i, (n, us) in enumerate(out)]
    counted = [r["us"] for r in rows if r["counted"]]
    print(json.dumps({"steps": rows, "mean_us": sum(counted) / len(counted) if counted else None}))


if __name__ == "__main__":
    main(sys.argv[1])
