#!/usr/bin/env bash
# Elementwise chains over 16M elements in fp32 (64 MiB) and bf16 (32 MiB):
# a 10-op tanh-GELU chain (then scale and bias), whose arithmetic is the
# same in both types, and a 3-op chain (scale, bias, ReLU) light enough to
# be bound by memory. neuron-exec next to numpy doing the GELU chain in
# fp32, and each chain's bandwidth (bytes actually moved: the input read
# and the output written once per execution) next to the STREAM triad
# measured here on 2 threads, built as STREAM is for its best figure (-O3
# -march=native -fopenmp, bench/peers/stream_triad.cc). Goals (issue 16):
# fp32 at least 3x numpy's speed and at least 0.9x the triad's bandwidth;
# bf16 at least 0.75x the triad's bandwidth. Best of the runs for every
# figure.
# Usage: bench/exec_elementwise.sh [RUNS]   (default 20)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-20}"
bench_build neuron-compile neuron-exec bench:stream_triad

n=16777216  # 64 MiB of f32, 32 MiB of bf16
# gelu_hlo TYPE / light_hlo TYPE: a chain over n elements of TYPE.
gelu_hlo() {
  local t="$1"
  cat <<HLO
HloModule gelu_chain_$t
ENTRY main {
  x = $t[$n] parameter(0)
  c0 = $t[] constant(0.044715)
  c1 = $t[] constant(0.7978845608)
  one = $t[] constant(1)
  half = $t[] constant(0.5)
  sc = $t[] constant(1.25)
  bi = $t[] constant(-0.125)
  k0 = $t[$n] broadcast(c0), dimensions={}
  k1 = $t[$n] broadcast(c1), dimensions={}
  k2 = $t[$n] broadcast(one), dimensions={}
  k3 = $t[$n] broadcast(half), dimensions={}
  k4 = $t[$n] broadcast(sc), dimensions={}
  k5 = $t[$n] broadcast(bi), dimensions={}
  x2 = $t[$n] multiply(x, x)
  x3 = $t[$n] multiply(x2, x)
  t0 = $t[$n] multiply(x3, k0)
  t1 = $t[$n] add(x, t0)
  t2 = $t[$n] multiply(t1, k1)
  t3 = $t[$n] tanh(t2)
  t4 = $t[$n] add(t3, k2)
  t5 = $t[$n] multiply(x, t4)
  g = $t[$n] multiply(t5, k3)
  s = $t[$n] multiply(g, k4)
  ROOT r = $t[$n] add(s, k5)
}
HLO
}
light_hlo() {
  local t="$1"
  cat <<HLO
HloModule light_chain_$t
ENTRY main {
  x = $t[$n] parameter(0)
  sc = $t[] constant(1.25)
  bi = $t[] constant(-0.125)
  z = $t[] constant(0)
  k0 = $t[$n] broadcast(sc), dimensions={}
  k1 = $t[$n] broadcast(bi), dimensions={}
  k2 = $t[$n] broadcast(z), dimensions={}
  s = $t[$n] multiply(x, k0)
  b = $t[$n] add(s, k1)
  ROOT r = $t[$n] maximum(b, k2)
}
HLO
}
# best_us CHAIN TYPE: the chain's best time per execution in TYPE.
best_us() {
  "$1_hlo" "$2" >"$SCRATCH/$1_$2.hlo"
  "$OUT/neuron-compile" compile "$SCRATCH/$1_$2.hlo" --target trn1 -o "$SCRATCH/$1_$2.neff"
  "$OUT/neuron-exec" "$SCRATCH/$1_$2.neff" --random-inputs -w 3 -n "$runs" --json >"$SCRATCH/$1_$2.json"
  json_field "$SCRATCH/$1_$2.json" 'd["benchmark"]["latency_us"]["min"]'
}
ours=$(best_us gelu f32)
ours_bf16=$(best_us gelu bf16)
light=$(best_us light f32)
light_bf16=$(best_us light bf16)

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
# gbs US BYTES_PER_ELEMENT: bandwidth of one read and one write of n elements.
gbs() { awk -v us="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%.2f", 2 * b * n / (us * 1e-6) / 1e9 }'; }
ours_gbs=$(gbs "$ours" 4)
bf16_gbs=$(gbs "$ours_bf16" 2)
light_gbs=$(gbs "$light" 4)
light_bf16_gbs=$(gbs "$light_bf16" 2)

printf '%-44s %12s %10s %9s\n' "chain, 16M elements" "us/exec" "GB/s" "/triad"
row() { printf '%-44s %12s %10s %9s\n' "$1" "$2" "$3" "$(ratio "$3" "$triad")"; }
row "GELU (10 ops) fp32, neuron-exec" "$ours" "$ours_gbs"
row "GELU (10 ops) bf16, neuron-exec" "$ours_bf16" "$bf16_gbs"
row "scale, bias, ReLU fp32, neuron-exec" "$light" "$light_gbs"
row "scale, bias, ReLU bf16, neuron-exec" "$light_bf16" "$light_bf16_gbs"
printf '%-44s %12s\n' "GELU fp32, numpy (same ops)" "$numpy"
printf '%-44s %12s %10s\n' "STREAM triad (-O3 native OpenMP), 2 thr" "" "$triad"
echo "numpy/ours GELU fp32: $(ratio "$numpy" "$ours")x faster (goal >= 3.00: $(verdict "$numpy >= 3 * $ours"))"
echo "ours/triad bandwidth, GELU fp32: $(ratio "$ours_gbs" "$triad")x (goal >= 0.90: $(verdict "$ours_gbs >= 0.9 * $triad"))"
echo "ours/triad bandwidth, GELU bf16: $(ratio "$bf16_gbs" "$triad")x (goal >= 0.75: $(verdict "$bf16_gbs >= 0.75 * $triad"))"
echo "ours/triad bandwidth, light fp32: $(ratio "$light_gbs" "$triad")x (goal >= 0.90: $(verdict "$light_gbs >= 0.9 * $triad"))"
echo "ours/triad bandwidth, light bf16: $(ratio "$light_bf16_gbs" "$triad")x (goal >= 0.75: $(verdict "$light_bf16_gbs >= 0.75 * $triad"))"
echo "GELU fp32 time / bf16 time: $(ratio "$ours" "$ours_bf16") (the same arithmetic on half the bytes: the chain is bound by arithmetic here)"
