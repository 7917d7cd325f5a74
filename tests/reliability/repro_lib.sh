# Helpers shared by the reproduction runners (run_reproductions.sh for issue
# 17, run_reproductions_round2.sh for issue 29). Sourced after the runner has
# set $repro (the reproductions' folder), $work (a scratch folder) and
# $sanitized (non-empty in sanitizer builds).

failures=0
# Seconds per run: generous for the sanitizer build, far below "forever".
limit=${REVERIE_REPRO_TIMEOUT:-120}

# run ID NAME COMMAND...: runs one reproduction with the timeout (and the
# memory limit in release builds), from $repro (or $run_dir), leaving $rc,
# $out and $err.
run() {
  shift 2  # ID and NAME: for the reader of the calls
  (
    cd "${run_dir:-$repro}" || exit 99
    if [ -z "$sanitized" ] && [ -n "${vlimit_kb:-}" ]; then ulimit -v "$vlimit_kb"; fi
    exec timeout "$limit" "$@"
  ) >"$work/out" 2>"$work/err"
  rc=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
  # A reproduction that is not there would pass every refusal check with
  # "no such file": a renamed file must fail the run, not skip its check.
  if [[ "$err" == *": no such file"* ]]; then
    echo "FAIL  a reproduction named by the runner is missing: $err"
    failures=$((failures + 1))
  fi
}

# every_reproduction_named RUNNER FILE...: each reproduction in the folder is
# named (by its file name or stem) in RUNNER, so none goes unchecked.
every_reproduction_named() {
  local runner=$1 f stem
  shift
  for f in "$@"; do
    stem=${f%%.*}
    if ! grep -q -- "$stem" "$runner"; then
      echo "FAIL  $f is in $repro but no check runs it"
      failures=$((failures + 1))
    fi
  done
}

report() {  # report ID NAME OK? WHY
  local id=$1 name=$2 ok=$3 why=$4
  if [ "$ok" = 1 ]; then
    echo "PASS  $id $name"
  else
    echo "FAIL  $id $name: $why"
    echo "      rc=$rc stderr: $(head -c 300 "$work/err" | cat -v)"
    failures=$((failures + 1))
  fi
}

# A refusal: exit 2 and exactly one line on stderr that contains $1.
one_line() {
  [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ "$err" == *"$1"* ]]
}

# expect_refusal ID NAME WORDS COMMAND...
expect_refusal() {
  local id=$1 name=$2 words=$3
  shift 3
  run "$id" "$name" "$@"
  if one_line "$words"; then report "$id" "$name" 1 ""; else
    report "$id" "$name" 0 "expected one line with '$words' and exit 2"
  fi
}

# expect_answer ID NAME COMMAND...: exit 0 (and no crash, no hang).
expect_answer() {
  local id=$1 name=$2
  shift 2
  run "$id" "$name" "$@"
  if [ "$rc" -eq 0 ]; then report "$id" "$name" 1 ""; else report "$id" "$name" 0 "expected exit 0"; fi
}
