#!/bin/sh
# LD_PRELOAD=libreverie_collector.so must not change an ordinary program:
# same stdout, same stderr, same exit status, no file left behind.
set -u
lib=$(realpath "$1")
plain=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

compare() {  # name, command...
  name=$1; shift
  mkdir -p "$work/a" "$work/b"
  (cd "$work/a" && "$@" >"$work/out1" 2>"$work/err1"); rc1=$?
  (cd "$work/b" && LD_PRELOAD="$lib" "$@" >"$work/out2" 2>"$work/err2"); rc2=$?
  if [ $rc1 -ne $rc2 ]; then echo "$name: exit status $rc1 vs $rc2 under LD_PRELOAD"; fail=1; fi
  if ! cmp -s "$work/out1" "$work/out2"; then echo "$name: stdout differs"; diff "$work/out1" "$work/out2"; fail=1; fi
  if ! cmp -s "$work/err1" "$work/err2"; then echo "$name: stderr differs"; diff "$work/err1" "$work/err2"; fail=1; fi
  if [ -n "$(ls -A "$work/b")" ]; then echo "$name: left files: $(ls -A "$work/b")"; fail=1; fi
  rm -rf "$work/a" "$work/b"
  echo "$name: exit $rc1, $(wc -c <"$work/out1") bytes out"
}

compare echo /bin/echo hello world
compare sh-exit sh -c 'echo in shell; exit 7'
compare plain "$plain" 3 alpha beta
REVERIE_PLAIN_VALUE=x compare plain-env "$plain" 0
# Even with collector settings in the environment, nothing happens to a
# program that does not use CUDA.
REVERIE_OUTPUT="$work/should-not-exist.pb" REVERIE_STEPS=1 compare plain-config "$plain" 4
if [ -e "$work/should-not-exist.pb" ]; then echo "a trace was written for a non-CUDA program"; fail=1; fi
exit $fail
