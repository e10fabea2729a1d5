#!/usr/bin/env bash
# Each precision against the numpy oracle (tests/differential/precision.py):
# one model layer in f32, bf16 and f16, with and without mixed-precision
# accumulation, and f32 auto-cast to bf16/fp16, within the oracle test's
# per-type tolerances. `--seeds N`: N input draws per case (default 2).
# Last line: "N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/oracle.sh"
seeds=2
if [ "${1:-}" = "--seeds" ]; then seeds="${2:-2}"; fi
oracle_setup precision
python3 "$ROOT/tests/differential/precision.py" --seeds "$seeds"
