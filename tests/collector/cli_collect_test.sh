#!/bin/sh
# `reverie collect`: environment handed to the program, exit status passed
# through, one-line errors (exit 2) for bad use and a missing collector.
set -u
reverie=$(realpath "$1")
lib=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # description, expected, actual
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected [$2], got [$3]"; fail=1; else echo "ok   $1"; fi
}

"$reverie" collect >"$work/out" 2>"$work/err"; rc=$?
check "no arguments: exit 2" 2 $rc
check "no arguments: one line" 1 "$(wc -l <"$work/err")"

"$reverie" collect -o "$work/t.pb" >"$work/out" 2>"$work/err"; rc=$?
check "no command: exit 2" 2 $rc

"$reverie" collect -o "$work/t.pb" --steps x -- true >"$work/out" 2>"$work/err"; rc=$?
check "bad count: exit 2" 2 $rc

REVERIE_COLLECTOR_LIB=/nonexistent/libreverie_collector.so \
  "$reverie" collect -o "$work/t.pb" -- true >"$work/out" 2>"$work/err"; rc=$?
check "missing library: exit 2" 2 $rc
check "missing library: one line" 1 "$(wc -l <"$work/err")"
grep -q "not found" "$work/err" || { echo "FAIL missing library message: $(cat "$work/err")"; fail=1; }

# Found next to the executable's build tree when the variable is unset.
out=$(cd "$work" && env -u REVERIE_COLLECTOR_LIB "$reverie" collect -o t.pb --steps 4 --warmup 2 -- \
      sh -c 'echo "$CUDA_INJECTION64_PATH|$REVERIE_OUTPUT|$REVERIE_STEPS|$REVERIE_WARMUP|$REVERIE_COLLECTOR_LIB"' \
      2>"$work/err")
rc=$?
# The program exits 0 but initializes no CUDA: nothing collected is a failure.
check "env: nothing collected exits 1" 1 $rc
expected_lib=$(realpath "$lib")
got_lib=$(echo "$out" | cut -d'|' -f1)
check "env: injection path" "$expected_lib" "$(realpath "$got_lib")"
check "env: output is absolute" "$(realpath "$work")/t.pb" "$(echo "$out" | cut -d'|' -f2)"
check "env: steps" 4 "$(echo "$out" | cut -d'|' -f3)"
check "env: warmup" 2 "$(echo "$out" | cut -d'|' -f4)"
grep -q "t.pb: no trace written" "$work/err" || { echo "FAIL expected 't.pb: no trace written': $(cat "$work/err")"; fail=1; }
check "env: nothing collected, one line" 1 "$(wc -l <"$work/err")"

REVERIE_COLLECTOR_LIB="$lib" "$reverie" collect -o "$work/t.pb" -- sh -c 'exit 3' 2>/dev/null; rc=$?
check "exit status passed through" 3 $rc
REVERIE_COLLECTOR_LIB="$lib" "$reverie" collect -o "$work/t.pb" -- sh -c 'kill -TERM $$' 2>/dev/null; rc=$?
check "signal -> 128+n" 143 $rc
REVERIE_COLLECTOR_LIB="$lib" "$reverie" collect -o "$work/t.pb" -- /nonexistent/program 2>"$work/err"; rc=$?
check "missing program: 127" 127 $rc
check "missing program: one line" 1 "$(wc -l <"$work/err")"
exit $fail
