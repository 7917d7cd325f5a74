#!/usr/bin/env bash
# Import benchmark (kept for its old command line): `reverie info` against
# Python's json.load and zcat of the same trace, best of N. See bench.py for
# the HTA and scaling benchmarks.
#
# usage: bench/import/run.sh [REVERIE_BINARY] [TRACE] [N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
args=(import)
[[ -n "${1:-}" ]] && args+=(--bin "$1")
[[ -n "${2:-}" ]] && args+=(--trace "$2")
[[ -n "${3:-}" ]] && args+=(--runs "$3")
exec python3 "$here/bench.py" "${args[@]}"
