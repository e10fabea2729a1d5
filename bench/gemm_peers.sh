#!/usr/bin/env bash
# OpenBLAS vs oneDNN sgemm on this machine, 2 threads, best of N runs, on
# the shapes the executor runs (MLP 256x1024x1024 first). Builds only the
# small gemm_bench binary. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE presets are
# removed: they can halve OpenBLAS's speed.
# Usage: bench/gemm_peers.sh [REPS] [OUT_DIR]   (defaults: 10, out)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
reps="${1:-10}"
out="${2:-out}"
ninja -C "$ROOT/$out" tests/kernels:gemm_bench >/dev/null
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
for round in 1 2 3; do
  echo "round $round"
  "$ROOT/$out/gemm_bench" 2 "$reps"
done
