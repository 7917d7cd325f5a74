#!/bin/sh
# End-to-end on a GPU machine (ctest label `gpu`): examples/cuda_mlp under
# the collector in its three modes, each trace checked with
# `reverie info --json`. Exits 77 (ctest: skipped) when there is no GPU.
set -u
reverie=$(realpath "$1")
mlp=$(realpath "$2")
lib=$(realpath "$3")
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU (nvidia-smi absent or failing)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A GPU that cuInit cannot use (driver too old for CUDA 13, ...) is no GPU.
if ! "$mlp" --steps 1 >"$work/probe" 2>&1; then
  if grep -qiE 'driver|no CUDA-capable device' "$work/probe"; then
    echo "SKIP: CUDA unusable here: $(cat "$work/probe")"
    exit 77
  fi
fi
fail=0

check_trace() {  # name, trace, expected steps
  if ! "$reverie" info "$2" --json >"$work/$1.json" 2>"$work/$1.err"; then
    echo "FAIL $1: reverie info: $(cat "$work/$1.err")"; fail=1; return
  fi
  python3 - "$work/$1.json" "$3" "$1" <<'PY' || fail=1
import json, sys
info = json.load(open(sys.argv[1]))
want_iters, name = int(sys.argv[2]), sys.argv[3]
t = info["tasks"]
problems = []
for key in ("kernel", "memcpy", "memset", "sync", "runtime"):
    if t.get(key, 0) <= 0:
        problems.append(f"no {key} records")
if name != "preload":
    if info["ranges"].get("layer", 0) <= 0:
        problems.append("no layer ranges")
    if len(info["steps"]) != want_iters:
        problems.append(f"{len(info['steps'])} steps, expected {want_iters}")
if t.get("event_record", 0) <= 0:
    problems.append("no CUDA event records")
if info.get("devices", 0) <= 0:
    problems.append("no device in the header")
# Every GPU record of the window with its launch, and the window's GPU work
# in every phase (issue 32: kernels decoded before their launch after the
# window closed were dropped, warmup kernels kept).
g = info.get("graph", {})
for key in ("kernel_without_launch", "unmatched_correlation", "sync_without_call"):
    if g.get("counters", {}).get(key, 0) > 0:
        problems.append(f"{key} = {g['counters'][key]}")
if name != "preload":
    gpu = {p["phase"]: p["gpu_us"] for p in g.get("phases", [])}
    for phase in ("forward", "backward", "update"):
        if gpu.get(phase, 0) <= 0:
            problems.append(f"no GPU time in {phase}")
print(f"{name}: kernels={t['kernel']} memcpy={t['memcpy']} sync={t['sync']} "
      f"events={t.get('event_record')} layers={info['ranges'].get('layer')} "
      f"steps={len(info['steps'])}")
if problems:
    print(f"FAIL {name}: " + "; ".join(problems))
    sys.exit(1)
PY
}

# 1. Injection through `reverie collect`, steps 2..4 of 8.
"$reverie" collect -o "$work/inject.pb" --warmup 2 --steps 3 -- "$mlp" --steps 8 \
  >"$work/inject.out" 2>"$work/inject.err" || { echo "FAIL collect: $(cat "$work/inject.err")"; fail=1; }
check_trace inject "$work/inject.pb" 3

# 2. API mode: the program starts the collector (reverie_start).
"$mlp" --steps 3 --trace "$work/api.pb" >"$work/api.out" 2>"$work/api.err" ||
  { echo "FAIL api mode: $(cat "$work/api.err")"; fail=1; }
check_trace api "$work/api.pb" 3

# 3. LD_PRELOAD: the constructor sees the program's device code.
REVERIE_OUTPUT="$work/preload.pb" LD_PRELOAD="$lib" "$mlp" --steps 2 \
  >"$work/pre.out" 2>"$work/pre.err" || { echo "FAIL preload: $(cat "$work/pre.err")"; fail=1; }
check_trace preload "$work/preload.pb" 2
exit $fail
