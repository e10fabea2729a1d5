#!/usr/bin/env bash
# Differential test: random small HLO modules (tests/differential/hlo_gen.py)
# run by out/neuron-exec and by the numpy oracle in ../shared/oracle, plus the
# saved regressions in tests/differential/regressions/*.hlo.
# Short run: 30 seeds. `--long N`: N seeds. Last line: "N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/oracle.sh"
seeds=30
if [ "${1:-}" = "--long" ]; then seeds="${2:-1000}"; fi
oracle_setup differential
shopt -s nullglob
regressions=("$ROOT"/tests/differential/regressions/*.hlo)
python3 "$ROOT/tests/differential/differential.py" --seeds "$seeds" ${regressions[@]:+--replay "${regressions[@]}"}
