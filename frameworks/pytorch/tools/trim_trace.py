#!/usr/bin/env python3
"""Trim a PyTorch-profiler trace to a few of its steps (for test data).

Keeps the metadata (process and thread names, deviceProperties, the header)
and every event that starts within the kept steps: from the start of
ProfilerStep#FIRST to the start of the step after the last kept one (or the
trace's end). Flow events are kept when both ends are. The harness in this
folder synchronizes at each step's end, so no GPU work straddles a cut.

    python3 trim_trace.py IN.json.gz OUT.json.gz --skip 1 --steps 3
"""

import argparse
import gzip
import json
import re
import sys

STEP = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def step_spans(events):
    spans = sorted((e["ts"], e["ts"] + e.get("dur", 0), int(m.group(1)))
                   for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and (m := STEP.match(e.get("name", ""))))
    return spans


def trim(trace, skip, steps):
    events = trace["traceEvents"]
    spans = step_spans(events)
    if len(spans) < skip + steps:
        raise SystemExit(f"trim_trace: {len(spans)} steps, fewer than --skip {skip} + "
                         f"--steps {steps}")
    begin = spans[skip][0]
    end = spans[skip + steps][0] if skip + steps < len(spans) else float("inf")

    def inside(e):
        return begin <= float(e.get("ts", begin)) < end

    kept = []
    flows = {}
    for e in events:
        ph = e.get("ph")
        if ph == "M" or "ts" not in e:
            kept.append(e)
        elif ph in ("s", "f"):
            flows.setdefault((e.get("cat"), e.get("id")), []).append(e)
        elif inside(e):
            kept.append(e)
    for pair in flows.values():
        if all(inside(e) for e in pair):
            kept.extend(pair)
    out = dict(trace)
    out["traceEvents"] = kept
    return out, [s[2] for s in spans[skip:skip + steps]]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--skip", type=int, default=1, help="profiled steps to leave out first")
    p.add_argument("--steps", type=int, default=3, help="steps to keep")
    args = p.parse_args()
    try:
        trace = load(args.input)
    except (OSError, ValueError, EOFError) as e:
        sys.exit(f"trim_trace: {args.input}: {e}")
    out, kept = trim(trace, args.skip, args.steps)
    with gzip.open(args.output, "wt", compresslevel=9) as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{args.output}: ProfilerStep#{kept[0]}..#{kept[-1]}, "
          f"{len(out['traceEvents'])} of {len(trace['traceEvents'])} events")


if __name__ == "__main__":
    main()
