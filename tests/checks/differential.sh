#!/usr/bin/env bash
# Differential test: random small HLO modules (tests/differential/hlo_gen.py)
# run by out/neuron-exec and by the numpy oracle in ../shared/oracle, plus the
# saved regressions in tests/differential/regressions/*.hlo.
# Short run: 30 seeds. `--long N`: N seeds. Last line: "N passed, N failed".
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
seeds=30
if [ "${1:-}" = "--long" ]; then seeds="${2:-1000}"; fi
if [ ! -f "$ROOT/../shared/oracle/hlo_ref.py" ] || ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "NOTICE: ../shared/oracle or /usr/bin/python3 numpy is missing; differential test not run"
  echo "0 passed, 0 failed"
  exit 0
fi
# Simulated cores of our own, apart from the test jobs running beside us.
work="$(mktemp -d "${TMPDIR:-/tmp}/differential.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"
shopt -s nullglob
regressions=("$ROOT"/tests/differential/regressions/*.hlo)
python3 "$ROOT/tests/differential/differential.py" --seeds "$seeds" ${regressions[@]:+--replay "${regressions[@]}"}
