#!/usr/bin/env bash
# End-to-end `reverie replay --critical-path` on a real trace, with two
# baselines measured in the same run on the same file: `zcat` (decompressing
# it, nothing else) and Python's json.load (parsing it, what any Python tool
# such as HTA pays before analysing anything). Best of RUNS for wall time and
# for CPU time (user + sys, steadier on a shared machine).
#
#   bench/graph/replay_bench.sh BUILD_DIR [TRACE] [RUNS]
set -euo pipefail
BUILD=${1:?usage: replay_bench.sh BUILD_DIR [TRACE] [RUNS]}
TRACE=${2:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/traces/facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz}
RUNS=${3:-5}
BIN="$BUILD/cli/reverie"
[ -x "$BIN" ] || { echo "replay_bench.sh: no $BIN (build the reverie target)" >&2; exit 2; }
[ -f "$TRACE" ] || { echo "replay_bench.sh: no trace $TRACE" >&2; exit 2; }
# Prints "best_wall best_cpu" in seconds over RUNS runs of "$@".
best() {
  local bw=999 bc=999 out tmp
  tmp=$(mktemp)
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -o "$tmp" -f "%e %U %S" "$@" >/dev/null 2>&1
    out=$(tail -1 "$tmp")
    bw=$(echo "$out" | awk -v b="$bw" '{print ($1 < b) ? $1 : b}')
    bc=$(echo "$out" | awk -v b="$bc" '{c = $2 + $3; print (c < b) ? c : b}')
  done
  rm -f "$tmp"
  echo "$bw $bc"
}
read -r rw rc < <(best "$BIN" replay "$TRACE" --critical-path)
read -r zw zc < <(best sh -c 'zcat -f "$0" > /dev/null' "$TRACE")
read -r pw pc < <(best python3 -c "import gzip,json,sys; f=sys.argv[1]; json.load(gzip.open(f) if f.endswith('.gz') else open(f))" "$TRACE")
echo "trace: $TRACE (best of $RUNS; load average $(cut -d' ' -f1 /proc/loadavg))"
printf '%-34s %8s %8s\n' "" "wall s" "cpu s"
printf '%-34s %8.3f %8.3f\n' "reverie replay --critical-path" "$rw" "$rc"
printf '%-34s %8.3f %8.3f   replay/zcat: wall %.2fx, cpu %.2fx\n' "zcat (decompress only)" "$zw" "$zc" \
  "$(echo "$rw / $zw" | bc -l)" "$(echo "$rc / $zc" | bc -l)"
printf '%-34s %8.3f %8.3f   json.load/replay: wall %.1fx, cpu %.1fx\n' "python json.load (parse only)" "$pw" "$pc" \
  "$(echo "$pw / $rw" | bc -l)" "$(echo "$pc / $rc" | bc -l)"
