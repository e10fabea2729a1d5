#!/usr/bin/env bash
# Each precision against the numpy oracle (tests/differential/precision.py):
# one model layer in f32, bf16 and f16, with and without mixed-precision
# accumulation, and f32 auto-cast to bf16/fp16, within the oracle test's
# per-type tolerances. `--seeds N`: N input draws per case (default 2).
# Last line: "N passed, N failed".
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
seeds=2
if [ "${1:-}" = "--seeds" ]; then seeds="${2:-2}"; fi
if [ ! -f "$ROOT/../shared/oracle/hlo_ref.py" ] || ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "NOTICE: ../shared/oracle or /usr/bin/python3 numpy is missing; precision test not run"
  echo "0 passed, 0 failed"
  exit 0
fi
# Simulated cores of our own, apart from the test jobs running beside us.
work="$(mktemp -d "${TMPDIR:-/tmp}/precision.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"
python3 "$ROOT/tests/differential/precision.py" --seeds "$seeds"
