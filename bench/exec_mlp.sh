#!/usr/bin/env bash
# A 3-layer, 1024-wide fp32 MLP at batch 256 (relu(x W1 + b1) ... x W3 + b3):
# per-execution time of neuron-exec next to numpy running the same math and
# next to the GEMM library's own time for the three products: oneDNN's
# sgemm, the library lib/kernels calls, on the runtime's 2 threads.
# Goals (issue 16): numpy's time / ours >= 1.15; ours within 1.05x of the
# three products alone.
# All figures are the best of their runs (the machine is shared).
# Usage: bench/exec_mlp.sh [RUNS]   (default 50)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-50}"
bench_build neuron-compile neuron-exec bench:gemm_peer

mlp_hlo f32 >"$SCRATCH/mlp.hlo"
"$OUT/neuron-compile" compile "$SCRATCH/mlp.hlo" --target trn1 -o "$SCRATCH/mlp.neff"
"$OUT/neuron-exec" "$SCRATCH/mlp.neff" --random-inputs -w 5 -n "$runs" --json >"$SCRATCH/ours.json"
ours=$(json_field "$SCRATCH/ours.json" 'd["benchmark"]["latency_us"]["min"]')

numpy=$(numpy_peer - "$runs" <<'PY'
import sys, time
import numpy as np
runs = int(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (256, 1024)).astype(np.float32)
ws = [rng.uniform(-1, 1, (1024, 1024)).astype(np.float32) for _ in range(3)]
bs = [rng.uniform(-1, 1, 1024).astype(np.float32) for _ in range(3)]
def mlp():
    h = np.maximum(x @ ws[0] + bs[0], 0)
    h = np.maximum(h @ ws[1] + bs[1], 0)
    return h @ ws[2] + bs[2]
for _ in range(5): mlp()
best = 1e30
for _ in range(runs):
    t = time.perf_counter(); mlp(); best = min(best, time.perf_counter() - t)
print(f"{best * 1e6:.1f}")
PY
)
gemm=$("$OUT/gemm_peer" 2 "$runs")

printf '%-34s %12s\n' "3-layer MLP 256x1024 fp32" "us/exec"
printf '%-34s %12s\n' "neuron-exec (ours)" "$ours"
printf '%-34s %12s\n' "numpy (same math)" "$numpy"
printf '%-34s %12s\n' "oneDNN sgemm x3 (products only)" "$gemm"
echo "numpy/ours: $(ratio "$numpy" "$ours")x (goal >= 1.15: $(verdict "$numpy >= 1.15 * $ours"))"
echo "ours/GEMM:  $(ratio "$ours" "$gemm")x (goal <= 1.05: $(verdict "$ours <= 1.05 * $gemm"))"
