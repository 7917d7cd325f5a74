#!/usr/bin/env bash
# Import benchmark: `reverie info` on a large Kineto trace against two
# baselines measured in the same run — Python's json.load of the same file
# and plain decompression (zcat) — plus reverie's peak RSS against the raw
# JSON size. Prints best-of-N wall times and the ratios that go into
# docs/PERFORMANCE.md ("## Import").
#
# usage: bench/import/run.sh [REVERIE_BINARY] [TRACE] [N]
#   REVERIE_BINARY  default: build/release/cli/reverie, else build/cli/reverie
#   TRACE           default: df_index_resolver.json.gz from ../shared/traces
#                   (or $REVERIE_TRACES)
#   N               repetitions, best time kept (default 5)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
traces="${REVERIE_TRACES:-$repo/../shared/traces}"
default_bin="$repo/build/release/cli/reverie"
[[ -x "$default_bin" ]] || default_bin="$repo/build/cli/reverie"
bin="${1:-$default_bin}"
trace="${2:-$traces/facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz}"
n="${3:-5}"

[[ -x "$bin" ]] || { echo "run.sh: no reverie binary at $bin (build it, or pass its path)" >&2; exit 2; }
[[ -f "$trace" ]] || { echo "run.sh: trace $trace not found (set REVERIE_TRACES)" >&2; exit 2; }

python3 - "$bin" "$trace" "$n" <<'PY'
import gzip, os, subprocess, sys, time

binary, trace, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def run(cmd):
    """Wall seconds, CPU seconds (user + sys) and peak RSS (KiB) of one run of
    `cmd` (a list, or a shell string whose children are included)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, shell=isinstance(cmd, str), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"run.sh: {cmd} failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss

def best(cmd):
    """Best wall and best CPU time over n runs (the machine may be shared:
    CPU time is the steadier figure), and the largest peak RSS."""
    runs = [run(cmd) for _ in range(n)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)

with open(trace, "rb") as f:
    is_gzip = f.read(2) == b"\x1f\x8b"
raw_bytes = len(gzip.open(trace).read()) if is_gzip else os.path.getsize(trace)
opener = "gzip.open" if is_gzip else "open"
py = [sys.executable, "-c", f"import json,gzip; json.load({opener}({trace!r}, 'rb'))"]
cat = f"{'zcat' if is_gzip else 'cat'} '{trace}' > /dev/null"

t_json, c_json, rss_json = best(py)
t_cat, c_cat, _ = best(cat)
t_info, c_info, rss_info = best([binary, "info", trace])

mb = 1024 * 1024
print(f"trace:           {trace}")
print(f"raw JSON:        {raw_bytes / mb:.1f} MiB ({'gzip ' + str(os.path.getsize(trace) // 1024) + ' KiB' if is_gzip else 'plain'})")
print(f"best of {n} runs             wall       cpu (user+sys)")
print(f"  python json.load      {t_json:8.3f} s  {c_json:8.3f} s   peak RSS {rss_json / 1024:7.1f} MiB")
print(f"  {'zcat' if is_gzip else 'cat '} > /dev/null     {t_cat:8.3f} s  {c_cat:8.3f} s")
print(f"  reverie info          {t_info:8.3f} s  {c_info:8.3f} s   peak RSS {rss_info / 1024:7.1f} MiB")
print("ratios                            wall      cpu")
print(f"  json.load / reverie info      {t_json / t_info:6.2f}x  {c_json / c_info:6.2f}x   (target >= 3x faster)")
print(f"  zcat / reverie info           {t_cat / t_info:6.2f}x  {c_cat / c_info:6.2f}x")
print(f"  reverie peak RSS / raw JSON   {rss_info * 1024 / raw_bytes:6.2f}x            (target < 4x)")
PY
