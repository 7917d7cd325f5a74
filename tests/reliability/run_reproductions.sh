#!/usr/bin/env bash
# Runs the minimal reproductions of issue 17 (hostile input) from
# $REVERIE_RELIABILITY (default: ../shared/reliability beside the source
# tree) and checks that each now gets a correct answer or one line and exit
# status 2, within a timeout (the budget), under a virtual-memory limit (the
# cap; release builds only, ASan reserves terabytes of address space), and
# that no input is modified. Never copies them into the repository.
#
# Usage: run_reproductions.sh REVERIE_BINARY SOURCE_DIR [sanitized]
# Exit: 0 all passed, 1 a check failed, 77 skipped (no reproductions).
set -uo pipefail

reverie=$(realpath "$1")
src=$(realpath "$2")
sanitized=${3:-}
repro=${REVERIE_RELIABILITY:-$(realpath -m "$src/../shared/reliability")}
if [ ! -d "$repro" ]; then
  echo "SKIPPED: no reproductions at $repro (set REVERIE_RELIABILITY)"
  exit 77
fi
example="$src/examples/tiny_mlp_training.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
before=$(cd "$repro" && find . -maxdepth 1 -type f -exec sha256sum {} + | sort | sha256sum)

# shellcheck source=repro_lib.sh
source "$(dirname "$0")/repro_lib.sh"

predict() { echo "$reverie" predict "$example" --json --script "$@"; }

# ---- script limits (D1 D2 D3 D4 D5 D14) ----------------------------------
vlimit_kb=$((1536 * 1024))  # 1.5 GiB of address space for a 64/256 MiB cap
expect_refusal D1 pcall_budget_escape "lua_pcall_budget_escape.lua:1: instruction budget of 100000000" \
  $(predict lua_pcall_budget_escape.lua --lua-budget 100000000)
expect_refusal D2 gc_finalizer_hang "__gc finalizers are not allowed" \
  $(predict lua_gc_finalizer_hang.lua)
expect_answer D3 regex_stack_overflow $(predict lua_regex_stack_overflow.lua)
expect_answer D3 regex_redos $(predict lua_regex_redos.lua)
expect_answer D3 long_kernel_name_benign_regex \
  "$reverie" predict long_kernel_name.json --json --script benign_regex.lua
expect_refusal D4 memory_cap_names "memory limit of 64 MiB exceeded" \
  $(predict lua_memory_cap_bypass_names.lua --lua-memory-mb 64)
expect_refusal D4 memory_cap_print "memory limit of 256 MiB exceeded" \
  $(predict lua_memory_cap_bypass_print.lua --lua-memory-mb 256)
expect_answer D5 add_channel_quadratic $(predict lua_add_channel_quadratic.lua)
expect_refusal D14 error_table "lua_error_table_no_script_name.lua:1: error raised with a table value" \
  $(predict lua_error_table_no_script_name.lua)
expect_refusal D14 error_multiline "lua_error_multiline_message.lua:1: line (100000 more lines)" \
  $(predict lua_error_multiline_message.lua)
# Text mode adds Lua's traceback below the one line, never the message again.
run D14 error_multiline_text "$reverie" predict "$example" --script lua_error_multiline_message.lua
if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -le 5 ]; then
  report D14 error_multiline_text 1 ""
else
  report D14 error_multiline_text 0 "expected exit 2 and a short message"
fi

# ---- numbers (D7) ---------------------------------------------------------
for s in lua_add_duration_overflow lua_add_duration_maxinteger lua_set_duration_huge; do
  expect_refusal D7 "$s" "$s.lua:1: time value" $(predict "$s.lua")
done
for j in json_block_overflow json_ts_overflow; do
  # amp.lua with fixed factors: these files name no GPU for the cost model.
  expect_answer D7 "$j predict" "$reverie" predict "$j.json" --json --script amp.lua \
    --set compute_speedup=3 --set memory_speedup=2
  run D7 "$j info" "$reverie" info "$j.json"
  if [ "$rc" -eq 0 ] && [[ "$out" == *out_of_range* ]]; then report D7 "$j info" 1 ""; else
    report D7 "$j info" 0 "expected the clamped numbers counted as anomalies"
  fi
done

# ---- .pb files (D9 D10 D11 D12, and D7 through a .pb) ---------------------
# Files from before the end marker (schema 1) cannot prove they are complete.
for p in pb_huge_geometry pb_time_extremes pb_negative_duration pb_negative_gpu_busy_no_anomaly \
         pb_bad_name_sid pb_invalid_utf8 pb_invalid_utf8_protobuf_log; do
  expect_refusal D9 "$p" "$p.pb: written by an older reverie" "$reverie" info "$p.pb"
done
expect_refusal D9 partial_import_output "partial_import_output.pb: written by an older reverie" \
  "$reverie" replay partial_import_output.pb
# What import --salvage keeps is validated like a JSON trace (D12, D7).
for p in pb_huge_geometry:kernel_geometry_out_of_range pb_time_extremes:time_out_of_range \
         pb_negative_duration:negative_duration pb_negative_gpu_busy_no_anomaly:negative_duration; do
  name=${p%%:*} counter=${p#*:}
  run D12 "$name salvaged" "$reverie" import --salvage "$name.pb" -o "$work/$name.pb"
  run D12 "$name salvaged" "$reverie" info "$work/$name.pb"
  if [ "$rc" -eq 0 ] && [[ "$out" == *"$counter"* ]] && [[ "$out" != *"GPU busy -"* ]]; then
    report D12 "$name salvaged" 1 ""
  else
    report D12 "$name salvaged" 0 "expected exit 0, $counter counted, no negative GPU busy"
  fi
  expect_answer D7 "$name salvaged predict" "$reverie" predict "$work/$name.pb" --json --script amp.lua \
    --set compute_speedup=3 --set memory_speedup=2
done
expect_refusal D11 pb_invalid_utf8_salvage "not valid UTF-8" \
  "$reverie" import --salvage pb_invalid_utf8_protobuf_log.pb -o "$work/x.pb"
expect_refusal D9 partial_import_salvage "partial_import_output.pb: truncated: chunk 1" \
  "$reverie" import --salvage partial_import_output.pb -o "$work/x.pb"
# D10: an import that cannot finish (a file-size limit, as a full disk)
# leaves nothing that a later read could take for a valid trace.
run D10 failed_write bash -c "trap '' XFSZ; ulimit -f 16; exec \"$reverie\" import \"$example\" -o \"$work/full.pb\""
if [ "$rc" -ne 0 ] && [[ "$err" == *"full.pb: write failed"* ]] && [ ! -e "$work/full.pb" ] &&
   [ -z "$(ls "$work" | grep '^full\.pb\.tmp')" ]; then
  report D10 failed_write 1 ""
else
  report D10 failed_write 0 "expected a failure and no output file"
fi

# ---- empty steps, trailing content, gzip bombs, FIFOs ------------------------
run D6 empty_second_iteration "$reverie" predict empty_second_iteration.json --script amp.lua \
  --set compute_speedup=3 --set memory_speedup=2
if { [ "$rc" -eq 0 ] && [[ "$out" != *"0.000x"* ]]; } || one_line "empty_second_iteration.json"; then
  report D6 empty_second_iteration 1 ""
else
  report D6 empty_second_iteration 0 "baseline 0 / speedup 0.000x"
fi
run D16 replay_negative_ts "$reverie" replay replay_negative_ts_zero_error.json
if { [ "$rc" -eq 0 ] && [[ "$out" != *"mean abs error 0.00%"* ]]; } ||
   one_line "replay_negative_ts_zero_error.json"; then
  report D16 replay_negative_ts 1 ""
else
  report D16 replay_negative_ts 0 "'mean abs error 0.00%' with no step compared"
fi
for j in trailing_second_document.json gzip_two_documents.json.gz gzip_trailing_garbage.json.gz \
         nul_in_number.json; do
  expect_refusal D13 "$j" "$j" "$reverie" info "$j"
done
if command -v python3 >/dev/null && [ -f "$repro/make_gzip_bomb.py" ]; then
  (cd "$work" && python3 "$repro/make_gzip_bomb.py")
  vlimit_kb=$((4096 * 1024))
  expect_refusal D8 gzip_bomb "bomb_spaces_5g.json.gz" "$reverie" info "$work/bomb_spaces_5g.json.gz"
  rm -f "$work/bomb_spaces_5g.json.gz"
fi
mkfifo "$work/fifo.json"
limit=10 expect_refusal D15 fifo "fifo.json" "$reverie" info "$work/fifo.json"

# ---- every reproduction in the folder has a check --------------------------
every_reproduction_named "$0" $(cd "$repro" && find . -maxdepth 1 -type f -not -name README.md -printf '%f\n')

# ---- what held stays held -------------------------------------------------
expect_refusal held no_overwrite "would overwrite the input" \
  "$reverie" replay "$example" --timeline "$example"
after=$(cd "$repro" && find . -maxdepth 1 -type f -exec sha256sum {} + | sort | sha256sum)
rc=0
if [ "$before" = "$after" ]; then report held inputs_unmodified 1 ""; else
  report held inputs_unmodified 0 "a reproduction file changed"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures reproduction check(s) failed"
  exit 1
fi
echo "all reproduction checks passed"
