#!/usr/bin/env bash
# Runs reverie's libFuzzer targets (fuzz/, built with the `fuzz` preset:
# clang-14, ASan + UBSan) for a fixed time each and writes what
# docs/RELIABILITY.md reports per target: hours, executions, crashes, hangs,
# sanitizer reports, and the command.
#
# usage: bench/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 3600 (.ci/run uses a few seconds)
#   TARGET              default: all four (fuzz_json_import fuzz_gzip
#                       fuzz_pb_reader fuzz_lua_script)
# env:
#   REVERIE_FUZZ_BUILD  the fuzz build folder (default build/fuzz)
#   REVERIE_FUZZ_OUT    where corpora, logs and artifacts go
#                       (default build/fuzz/runs); the committed seeds in
#                       fuzz/corpus/ are read, never written
#   REVERIE_FUZZ_JOBS   targets run at a time (default 2)
#   REVERIE_FUZZ_NICE   nice level (default 15)
#   REVERIE_FUZZ_TIMEOUT  seconds an input may run before it counts as a hang
#                       (default 10; raise it on a loaded machine)
# Exit: 0 when no target crashed, hung or reported, else 1.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-3600}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_json_import fuzz_gzip fuzz_pb_reader fuzz_lua_script)
build="${REVERIE_FUZZ_BUILD:-$repo/build/fuzz}"
out="${REVERIE_FUZZ_OUT:-$build/runs}"
jobs="${REVERIE_FUZZ_JOBS:-2}"
nice_level="${REVERIE_FUZZ_NICE:-15}"

# Per target: the longest input tried (seeds are a few KB) and extra seeds.
options() {
  case "$1" in
    fuzz_lua_script)
      # The script library as extra seeds, read where it is.
      echo "-max_len=8192 -seed_inputs=$(ls "$repo"/scripts/*.lua "$repo"/scripts/lib/*.lua | paste -sd,)"
      ;;
    *) echo "-max_len=32768" ;;
  esac
}

run_one() {
  local t=$1 dir="$out/$1"
  local bin="$build/fuzz/$t"
  [[ -x "$bin" ]] || { echo "$t: no binary at $bin (cmake --preset fuzz && cmake --build --preset fuzz)" >&2; return 2; }
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # -timeout: an input that runs 10 s is a hang; -rss_limit_mb: a blow-up
  # past 2 GiB is a crash (the Lua target's cap is 32 MiB).
  local cmd=("$bin" "$dir/corpus" "$repo/fuzz/corpus/$t" -max_total_time="$seconds"
             -timeout="${REVERIE_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1
             -artifact_prefix="$dir/artifacts/" $(options "$t"))
  [[ -f "$repo/fuzz/$t.dict" ]] && cmd+=(-dict="$repo/fuzz/$t.dict")
  echo "${cmd[*]}" > "$dir/command"
  local start=$SECONDS
  nice -n "$nice_level" "${cmd[@]}" > "$dir/log" 2>&1 || true
  echo $((SECONDS - start)) > "$dir/seconds"
}

mkdir -p "$out"
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

status=0
summary="$out/summary.md"
{
  echo "| target | hours | executions | crashes | hangs | sanitizer reports |"
  echo "|---|---|---|---|---|---|"
  for t in "${targets[@]}"; do
    d="$out/$t"
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$d/log" | grep -o '[0-9]*$' | tail -1)
    crashes=$(find "$d/artifacts" -name 'crash-*' -o -name 'oom-*' -o -name 'leak-*' | wc -l)
    hangs=$(find "$d/artifacts" -name 'timeout-*' | wc -l)
    reports=$(grep -c 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$d/log" || true)
    hours=$(awk -v s="$(cat "$d/seconds")" 'BEGIN { printf "%.2f", s / 3600 }')
    echo "| $t | $hours | ${execs:-0} | $crashes | $hangs | $reports |"
    if [[ -z "$execs" || $crashes -gt 0 || $hangs -gt 0 || $reports -gt 0 ]]; then status=1; fi
  done
} > "$summary"
cat "$summary"
[[ $status -eq 0 ]] || echo "fuzzing found problems: see $out/*/log and $out/*/artifacts" >&2
exit $status
