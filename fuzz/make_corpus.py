#!/usr/bin/env python3
"""Writes the seed corpora of the trace fuzz targets (fuzz/corpus/) from the
example traces, so that every seed is small (a fuzzer mutates a 5 KB seed
thousands of times faster than the 200 KB example) and reproducible:

  fuzz_json_import/  the first step of examples/*.json thinned to a few
                     launches and what they need (every event category, ~100
                     events), one in the 2021 schema's category names
  fuzz_gzip/         the same windows gzipped (one member, max compression)
  fuzz_pb_reader/    the same windows through `reverie import` (.pb)

plus deep_module_path, the small window with its first launch inside an
nn.Module whose name has 200 dots and 40 nested modules (issue 29, D22: the
importer cuts such paths to 32 levels).

Usage: fuzz/make_corpus.py path/to/reverie   (run from the source root)
The Lua target's seeds (fuzz/corpus/fuzz_lua_script/) are written by hand.
"""
import gzip
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")

# Kineto 2021 names of the categories a window holds (see kineto_builder.cc).
SCHEMA_2021 = {"cpu_op": "Operator", "cuda_runtime": "Runtime", "kernel": "Kernel",
               "gpu_memcpy": "Memcpy", "ac2g": "async"}


def window(trace, launches):
    """The first step of `trace` thinned to `launches` runtime calls spread
    over it, with what makes them coherent: the GPU work and flows they
    correlate with, the ops, layers and annotations that enclose them, the
    step marker, its syncs, and the metadata."""
    events = trace["traceEvents"]
    step = min((e for e in events if e.get("name", "").startswith("ProfilerStep")),
               key=lambda e: e["ts"])
    lo, hi = step["ts"], step["ts"] + step["dur"]
    inside = [e for e in events if e.get("ph") != "M" and lo <= e.get("ts", lo - 1) <= hi]
    calls = sorted((e for e in inside if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"])
    picked = calls[::max(1, len(calls) // launches)][:launches]
    corr = {e["args"].get("correlation") for e in picked}
    keep = [step] + picked
    for e in inside:
        c = e.get("args", {}).get("correlation", e.get("id"))
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "ac2g") and c in corr:
            keep.append(e)
        elif e.get("cat") == "cuda_sync":
            keep.append(e)
        elif e.get("cat") in ("cpu_op", "python_function", "user_annotation") and e is not step:
            if any(x["tid"] == e["tid"] and e["ts"] <= x["ts"] <= e["ts"] + e["dur"]
                   for x in picked):
                keep.append(e)
    out = dict(trace)
    out["traceEvents"] = [e for e in events if e.get("ph") == "M"] + \
        sorted(keep, key=lambda e: (e["ts"], e.get("ph", "")))
    return out


def with_deep_modules(trace):
    """`trace` with an nn.Module of 200 dots and 40 nested modules around its
    first runtime call (Python ids and parents set, as the profiler writes
    them)."""
    out = json.loads(json.dumps(trace))
    events = out["traceEvents"]
    call = min((e for e in events if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"])
    lo, hi = call["ts"] - 0.5, call["ts"] + call.get("dur", 0) + 0.5
    events.append({"ph": "X", "cat": "python_function", "name": "nn.Module: " + "a." * 200 + "b",
                   "pid": call["pid"], "tid": call["tid"], "ts": lo - 1, "dur": hi - lo + 2,
                   "args": {"Python id": 900, "Python parent id": 0}})
    for i in range(40):
        events.append({"ph": "X", "cat": "python_function", "name": "nn.Module: m%d" % i,
                       "pid": call["pid"], "tid": call["tid"], "ts": lo - 0.9 + i * 0.01,
                       "dur": hi - lo + 1.8 - i * 0.02,
                       "args": {"Python id": 1000 + i, "Python parent id": 999 + i if i else 900}})
    return out


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    reverie = os.path.abspath(sys.argv[1])
    seeds = {}
    for name, src, n in (("tiny_mlp_window", "tiny_mlp_training.json", 16),
                         ("tiny_mlp_small", "tiny_mlp_training.json", 4),
                         ("ddp_rank0_window", "ddp_rank0.json", 16)):
        with open(os.path.join(ROOT, "examples", src)) as f:
            seeds[name] = window(json.load(f), n)
    old = json.loads(json.dumps(seeds["tiny_mlp_small"]))
    for e in old["traceEvents"]:
        e["cat"] = SCHEMA_2021.get(e.get("cat"), e.get("cat"))
    seeds["tiny_mlp_schema2021"] = old
    seeds["deep_module_path"] = with_deep_modules(seeds["tiny_mlp_small"])

    for sub in ("fuzz_json_import", "fuzz_gzip", "fuzz_pb_reader"):
        os.makedirs(os.path.join(CORPUS, sub), exist_ok=True)
    for name, trace in seeds.items():
        text = json.dumps(trace, indent=None, separators=(",", ":")).encode()
        json_path = os.path.join(CORPUS, "fuzz_json_import", name + ".json")
        write(json_path, text)
        write(os.path.join(CORPUS, "fuzz_gzip", name + ".json.gz"),
              gzip.compress(text, compresslevel=9, mtime=0))
        subprocess.run([reverie, "import", json_path, "-o",
                        os.path.join(CORPUS, "fuzz_pb_reader", name + ".pb")], check=True)


if __name__ == "__main__":
    main()
