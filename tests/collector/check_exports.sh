#!/bin/sh
# Every dynamic symbol libreverie_collector.so defines must be the C API
# (reverie_*) or InitializeInjection, and it must not depend on libprotobuf,
# abseil, libcudart or libcupti at load time.
set -u
lib=$1
fail=0
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}')
[ -n "$syms" ] || { echo "no exported symbols in $lib"; exit 1; }
for s in $syms; do
  case "$s" in
    InitializeInjection|reverie_*) ;;
    *) echo "unexpected export: $s"; fail=1 ;;
  esac
done
for want in InitializeInjection reverie_start reverie_stop reverie_flush reverie_layer_push \
            reverie_layer_pop reverie_range_push reverie_range_pop reverie_step_begin reverie_step_end reverie_iteration_begin reverie_iteration_end reverie_comm_bucket \
            reverie_parameter reverie_configure; do
  echo "$syms" | grep -qx "$want" || { echo "missing export: $want"; fail=1; }
done
needed=$(readelf -d "$lib" | awk '/NEEDED/ {print $NF}')
for n in $needed; do
  case "$n" in
    *protobuf*|*absl*|*cudart*|*cupti*|*libcuda.so*) echo "unwanted dependency: $n"; fail=1 ;;
  esac
done
[ $fail -eq 0 ] && echo "exports ok: $(echo $syms | wc -w) symbols; needs: $(echo $needed)"
exit $fail
