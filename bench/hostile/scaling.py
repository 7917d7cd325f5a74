#!/usr/bin/env python3
"""Hostile shapes: does a command's time grow with a trace's size, or faster?

Writes synthetic Kineto traces of one shape at sizes N and 2N (to a temporary
folder, deleted afterwards), runs a reverie command on each, and prints the
time ratio: about 2 is linear, 4 quadratic. A shape is a dimension a trace
may grow along that the code could loop over pairwise: CPU threads of one
process, ProfilerSteps, zero_grad spans, nested ops that each launch, ops
that overlap like a staircase, kernels of many threads on one stream that a
script removes. Found by a hunt on 2026-11-29 (issue 31): each of these was
quadratic before, docs/RELIABILITY.md has the figures.

usage: scaling.py [--bin B] [--n N] [--shapes a,b] [--command "info T"]...
       (T in a command stands for the trace; default commands: info, advise,
       and what a shape adds)
Each size's time is the best of 3 runs. A ratio above 3 is flagged; the
exit status is 1 when any is.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PID, TID, STREAM = 1000, 1000, 7
KERNEL = "void at::native::vectorized_elementwise_kernel<4>(int)"


class Trace:
    """Kineto JSON events, times in microseconds."""

    def __init__(self):
        self.events = []
        self.correlation = 0

    def complete(self, cat, name, ts, dur, pid=PID, tid=TID, **args):
        event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                 "ts": round(ts, 3), "dur": round(dur, 3)}
        if args:
            event["args"] = args
        self.events.append(event)
        return event

    def op(self, name, ts, dur, tid=TID, cat="cpu_op"):
        return self.complete(cat, name, ts, dur, tid=tid)

    def launch(self, ts, kernel_ts, kernel_dur=1.0, tid=TID):
        self.correlation += 1
        self.complete("cuda_runtime", "cudaLaunchKernel", ts, 0.5, tid=tid,
                      correlation=self.correlation)
        self.complete("kernel", KERNEL, kernel_ts, kernel_dur, pid=0, tid=STREAM,
                      correlation=self.correlation, device=0, stream=STREAM)

    def step(self, index, ts, dur):
        return self.complete("user_annotation", "ProfilerStep#%d" % index, ts, dur)

    def write(self, path):
        # A GPU the table knows, so that info and advise run the hardware model.
        device = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920,
                  "computeMajor": 8, "computeMinor": 0, "numSms": 108}
        with open(path, "w") as f:
            json.dump({"deviceProperties": [device], "traceEvents": self.events}, f,
                      separators=(",", ":"))


def threads(t, n):
    """n CPU threads of one process, one launch each, one after another."""
    t.step(0, 0, 10.0 * n + 10)
    for i in range(n):
        t.launch(10.0 * i, 10.0 * i + 3, tid=TID + 1 + i)


def steps(t, n):
    """n ProfilerSteps of two launches, each with a zero_grad span."""
    for k in range(n):
        at = 100.0 * k
        t.step(k, at, 90)
        t.op("Optimizer.zero_grad#SGD.zero_grad", at + 1, 5, cat="user_annotation")
        t.launch(at + 2, at + 10)
        t.op("aten::add", at + 20, 10)
        t.launch(at + 21, at + 30)


def nested(t, n):
    """Two steps of n ops nested n deep, every level launching a kernel."""
    for k in range(2):
        at = k * (3.0 * n + 200)
        t.step(k, at, 3.0 * n + 150)
        for d in range(n):
            t.op("aten::op%d" % (d % 50), at + 1 + d, 2.0 * (n - d) + 100)
            t.launch(at + 1 + d + 0.1, at + 1 + d + 5, kernel_dur=0.5)


def staircase(t, n):
    """Two steps of n ops each starting 1 us after the last and outlasting it."""
    for k in range(2):
        at = k * (n + 400.0)
        t.step(k, at, n + 350.0)
        for i in range(n):
            t.op("aten::stair", at + 1 + i, 150)
            t.launch(at + 1 + i + 0.1, at + 1 + i + 200, kernel_dur=0.5)


def one_stream(t, n):
    """n/20 CPU threads of backward (autograd) ops, each launching 20
    elementwise kernels onto one stream, the threads' kernels interleaved."""
    threads = n // 20
    t.step(0, 0, 0.5 * threads + 30.0 * 20 + 50)
    for th in range(threads):
        for i in range(20):
            at = 10 + th * 0.5 + i * 30.0
            t.op("autograd::engine::evaluate_function: MulBackward0", at, 10, tid=TID + 1 + th)
            t.op("MulBackward0", at + 0.5, 9, tid=TID + 1 + th)
            t.launch(at + 1, at + 5, kernel_dur=2.0, tid=TID + 1 + th)


# shape: (writer, default N, commands beyond info and advise)
SHAPES = {"threads": (threads, 20000, []), "steps": (steps, 20000, []),
          "nested": (nested, 10000, []), "staircase": (staircase, 10000, []),
          "stream": (one_stream, 20000, ["predict T --script scripts/pointwise_fusion.lua"])}


def seconds(command):
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("scaling.py: %s failed: %s" % (" ".join(command), done.stderr.strip()))
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "release", "cli", "reverie"))
    ap.add_argument("--n", type=int, help="the smaller size (default: per shape)")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--command", action="append", help='e.g. "predict T --script amp.lua"')
    a = ap.parse_args()
    flagged = False
    with tempfile.TemporaryDirectory() as tmp:
        print("%-10s %-28s %8s %9s %9s %6s" % ("shape", "command", "N", "N s", "2N s", "ratio"))
        for name in a.shapes.split(","):
            make, default_n, extra = SHAPES[name]
            commands = a.command or ["info T", "advise T"] + extra
            n = a.n or default_n
            paths = []
            for size in (n, 2 * n):
                t = Trace()
                make(t, size)
                paths.append(os.path.join(tmp, "%s_%d.json" % (name, size)))
                t.write(paths[-1])
            for command in commands:
                # Best of three: one run of a second or less on a shared
                # machine can take twice as long and read as quadratic.
                times = [min(seconds([a.bin] + [p if w == "T" else os.path.join(REPO, w)
                                                 if w.startswith("scripts/") else w
                                                 for w in command.split()])
                             for _ in range(3)) for p in paths]
                ratio = times[1] / times[0]
                flagged |= ratio > 3
                print("%-10s %-28s %8d %9.2f %9.2f %5.1fx%s" % (
                    name, command[:28], n, times[0], times[1], ratio,
                    "  <- faster than linear" if ratio > 3 else ""))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
