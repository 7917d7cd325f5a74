#!/bin/sh
# LD_PRELOAD into a program linked against libcudart: the collector starts.
# Without a GPU driver (CI, this build machine) CUPTI cannot start: exactly
# one warning line on stderr, same stdout, same exit status, no trace file.
# With a driver, CUPTI starts and writes the trace (no warning).
set -u
lib=$(realpath "$1")
prog=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$prog" a >"$work/out1" 2>"$work/err1"; rc1=$?
REVERIE_OUTPUT="$work/trace.pb" LD_PRELOAD="$lib" "$prog" a >"$work/out2" 2>"$work/err2"; rc2=$?
fail=0
[ $rc1 -eq $rc2 ] || { echo "exit status $rc1 vs $rc2"; fail=1; }
cmp -s "$work/out1" "$work/out2" || { echo "stdout differs"; diff "$work/out1" "$work/out2"; fail=1; }
extra=$(($(wc -l <"$work/err2") - $(wc -l <"$work/err1")))
if [ -e "$work/trace.pb" ]; then
  echo "CUPTI started (GPU driver present); trace written"
  [ $extra -eq 0 ] || { echo "unexpected stderr:"; cat "$work/err2"; fail=1; }
else
  [ $extra -eq 1 ] || { echo "expected exactly one warning line, got $extra:"; cat "$work/err2"; fail=1; }
  grep -q '^reverie-collector: warning: CUPTI unavailable' "$work/err2" || {
    echo "warning line missing:"; cat "$work/err2"; fail=1; }
  echo "no driver: $(cat "$work/err2")"
fi
exit $fail
