#!/usr/bin/env bash
# A 10-op elementwise chain (tanh-GELU, then scale and bias) over 64 MiB of
# fp32: neuron-exec next to numpy doing the same ops, and its bandwidth
# (64 MiB read + 64 MiB written per execution) next to the STREAM triad
# measured here on 2 threads, built as STREAM is for its best figure (-O3
# -march=native -fopenmp, bench/peers/stream_triad.cc). Goals: at least 3x
# numpy's speed; at least 0.9x the triad's bandwidth (issue 16). Best of the
# runs for every figure.
# Usage: bench/exec_elementwise.sh [RUNS]   (default 20)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-20}"
bench_build neuron-compile neuron-exec bench:stream_triad

n=16777216  # 64 MiB of f32
cat >"$SCRATCH/chain.hlo" <<HLO
HloModule gelu_chain
ENTRY main {
  x = f32[$n] parameter(0)
  c0 = f32[] constant(0.044715)
  c1 = f32[] constant(0.7978845608)
  one = f32[] constant(1)
  half = f32[] constant(0.5)
  sc = f32[] constant(1.25)
  bi = f32[] constant(-0.125)
  k0 = f32[$n] broadcast(c0), dimensions={}
  k1 = f32[$n] broadcast(c1), dimensions={}
  k2 = f32[$n] broadcast(one), dimensions={}
  k3 = f32[$n] broadcast(half), dimensions={}
  k4 = f32[$n] broadcast(sc), dimensions={}
  k5 = f32[$n] broadcast(bi), dimensions={}
  x2 = f32[$n] multiply(x, x)
  x3 = f32[$n] multiply(x2, x)
  t0 = f32[$n] multiply(x3, k0)
  t1 = f32[$n] add(x, t0)
  t2 = f32[$n] multiply(t1, k1)
  t3 = f32[$n] tanh(t2)
  t4 = f32[$n] add(t3, k2)
  t5 = f32[$n] multiply(x, t4)
  g = f32[$n] multiply(t5, k3)
  s = f32[$n] multiply(g, k4)
  ROOT r = f32[$n] add(s, k5)
}
HLO
"$OUT/neuron-compile" compile "$SCRATCH/chain.hlo" --target trn1 -o "$SCRATCH/chain.neff"
"$OUT/neuron-exec" "$SCRATCH/chain.neff" --random-inputs -w 3 -n "$runs" --json >"$SCRATCH/ours.json"
ours=$(json_field "$SCRATCH/ours.json" 'd["benchmark"]["latency_us"]["min"]')

numpy=$(numpy_peer - "$runs" "$n" <<'PY'
import sys, time
import numpy as np
runs, n = int(sys.argv[1]), int(sys.argv[2])
x = np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32)
def chain():
    t = x * x * x * np.float32(0.044715)
    t = np.tanh((x + t) * np.float32(0.7978845608))
    g = x * (t + np.float32(1)) * np.float32(0.5)
    return g * np.float32(1.25) + np.float32(-0.125)
chain()
best = 1e30
for _ in range(runs):
    t = time.perf_counter(); chain(); best = min(best, time.perf_counter() - t)
print(f"{best * 1e6:.1f}")
PY
)
triad=$("$OUT/stream_triad" 2 10 256)
ours_gbs=$(awk -v us="$ours" -v n="$n" 'BEGIN { printf "%.2f", 8 * n / (us * 1e-6) / 1e9 }')

printf '%-36s %12s %10s\n' "GELU chain, 64 MiB fp32" "us/exec" "GB/s"
printf '%-36s %12s %10s\n' "neuron-exec (ours)" "$ours" "$ours_gbs"
printf '%-36s %12s\n' "numpy (same ops)" "$numpy"
printf '%-36s %12s %10s\n' "STREAM triad (-O3 native OpenMP), 2 thr" "" "$triad"
echo "numpy/ours: $(ratio "$numpy" "$ours")x faster (goal >= 3.00: $(verdict "$numpy >= 3 * $ours"))"
echo "ours/triad bandwidth: $(ratio "$ours_gbs" "$triad")x (goal >= 0.90: $(verdict "$ours_gbs >= 0.9 * $triad"))"
