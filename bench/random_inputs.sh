#!/usr/bin/env bash
# neuron-exec --random-inputs' generator (lib/runtime/cli_random): GB/s of
# output drawing one tensor of MIB MiB (default 256) of each element type,
# best of ROUNDS (default 3), next to numpy in the same run: a Generator's
# float32 draw (rng.random(n, dtype=np.float32) * 2 - 1, uniform in [-1, 1)
# as ours) converted as numpy users do: astype(float16); for bf16 the top
# 16 bits of the float32 (truncated, cheaper than our rounding); for
# f8e5m2 the top byte of the float16; for f8e4m3fn a 65536-entry table
# indexed by the float16 bits (numpy has no fp8); f64 from rng.random(n),
# s32 from rng.integers(0, 10). Goal (issue 16): at least 1 GB/s for bf16,
# f16 and the fp8 types.
# Usage: bench/random_inputs.sh [MIB] [ROUNDS]
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
mib="${1:-256}"
rounds="${2:-3}"
bytes=$((mib << 20))
bench_build random_inputs

ours="$("$OUT/random_inputs" "$bytes" "$rounds")"
peer="$(numpy_peer - "$bytes" "$rounds" <<'PY'
import sys, time
import numpy as np

nbytes, rounds = int(sys.argv[1]), int(sys.argv[2])

def unit_f32(rng, n):
    x = rng.random(n, dtype=np.float32)
    x *= 2
    x -= 1
    return x

# float16 bits -> f8e4m3fn bits, nearest value (built once, not timed).
h = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float64)
codes = np.arange(128)
e, m = codes >> 3, codes & 7
vals = np.where(e == 0, m / 8.0 * 2.0**-6, (1 + m / 8.0) * 2.0**(e - 7.0))
vals[127] = np.inf  # NaN code: never chosen
mag = np.nan_to_num(np.abs(h), nan=0.0, posinf=448.0)
idx = np.clip(np.searchsorted(vals, mag), 1, 126)
nearer = np.where(mag - vals[idx - 1] <= vals[idx] - mag, idx - 1, idx)
E4M3_TABLE = (nearer | np.where(np.signbit(h), 128, 0)).astype(np.uint8)

def draw(name, rng):
    if name == "f32":
        return unit_f32(rng, nbytes // 4)
    if name == "f64":
        x = rng.random(nbytes // 8)
        x *= 2
        x -= 1
        return x
    if name == "bf16":
        return (unit_f32(rng, nbytes // 2).view(np.uint32) >> 16).astype(np.uint16)
    if name == "f16":
        return unit_f32(rng, nbytes // 2).astype(np.float16)
    if name == "f8e4m3fn":
        return E4M3_TABLE[unit_f32(rng, nbytes).astype(np.float16).view(np.uint16)]
    if name == "f8e5m2":
        return (unit_f32(rng, nbytes).astype(np.float16).view(np.uint16) >> 8).astype(np.uint8)
    if name == "s32":
        return rng.integers(0, 10, nbytes // 4, dtype=np.int32)

for name in ("f32", "f64", "bf16", "f16", "f8e4m3fn", "f8e5m2", "s32"):
    best = float("inf")
    for r in range(rounds):
        start = time.perf_counter()
        out = draw(name, np.random.default_rng(r))
        best = min(best, time.perf_counter() - start)
        assert out.nbytes == nbytes
        del out
    print(name, "%.6f" % best, flush=True)
PY
)"

gbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }
printf '%-10s %12s %12s %14s  %s\n' "$mib MiB" "ours GB/s" "numpy GB/s" "ours / numpy" "goal >= 1 GB/s"
while read -r type ours_s; do
  [ "$type" = zeros ] && { zeros_s=$ours_s; continue; }
  peer_s="$(awk -v t="$type" '$1 == t { print $2 }' <<<"$peer")"
  goal="-"
  case "$type" in bf16 | f16 | f8*) goal="$(verdict "$bytes / $ours_s / 1e9 >= 1")" ;; esac
  printf '%-10s %12s %12s %13sx  %s\n' "$type" "$(gbps "$ours_s")" "$(gbps "$peer_s")" \
    "$(ratio "$peer_s" "$ours_s")" "$goal"
done <<<"$ours"
echo "best of $rounds; a fresh $mib MiB buffer alone (page faults): $(gbps "$zeros_s") GB/s"
