#!/usr/bin/env bash
# 2-rank fp32-sum all-reduce: neuron-allreduce vs Open MPI (vader, the better
# of single-copy on and off) vs Gloo (TCP loopback) at 8 B, 1 MiB, 16 MiB and 64 MiB, plus a
# 2-thread STREAM copy, in one run; prints the table and the issue's ratios.
# GB/s are 2^30 bytes/s throughout (STREAM's 1e9 figure is converted).
# Usage: bench/allreduce.sh [SCALE]   (SCALE multiplies the iteration counts;
#        ROUNDS=N sets the rounds each figure is the best of, default 3)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
scale="${1:-1}"

# The peers' packages (bench-only, so not in scripts/lib/common.sh DEPS).
bench_packages openmpi-bin libopenmpi-dev libgloo-dev
bench_build neuron-allreduce
mpicc -O2 -o "$SCRATCH/mpi_allreduce" "$ROOT/bench/peers/mpi_allreduce.c"
g++ -O2 -std=c++17 -o "$SCRATCH/gloo_allreduce" "$ROOT/bench/peers/gloo_allreduce.cc" -lgloo -pthread
gcc -O2 -o "$SCRATCH/stream_copy" "$ROOT/bench/peers/stream_copy.c" -pthread

sizes=(8 1048576 16777216 67108864)
iters_for() {  # enough iterations for a stable average at each size
  case "$1" in
    8) echo $((20000 * scale)) ;;
    1048576) echo $((400 * scale)) ;;
    16777216) echo $((40 * scale)) ;;
    *) echo $((20 * scale)) ;;
  esac
}

# The machine is shared: each figure is the best of $rounds rounds, the
# three libraries taking turns so a busy moment does not favour one.
rounds="${ROUNDS:-3}"
declare -A ours mpi gloo
for ((round = 0; round < rounds; round++)); do
  for s in "${sizes[@]}"; do
    n=$(iters_for "$s")
    w=$((n / 10 + 2))
    "$OUT/neuron-allreduce" -r 2 allr -b "$s" -e "$s" -d fp32 --op sum -n "$n" -w "$w" \
      --json > "$SCRATCH/ours.json"
    t=$(json_field "$SCRATCH/ours.json" 'd["results"][0]["time:avg(us)"]')
    ours[$s]=$(min "${ours[$s]:-}" "$t")
    mpi[$s]=$(min "${mpi[$s]:-}" "$(mpi_local_time 2 "$n" "$w" "$s")")
    rm -rf "$SCRATCH/gloo-store" && mkdir -p "$SCRATCH/gloo-store"
    "$SCRATCH/gloo_allreduce" 1 2 "$SCRATCH/gloo-store" "$n" "$w" "$s" >/dev/null &
    t=$("$SCRATCH/gloo_allreduce" 0 2 "$SCRATCH/gloo-store" "$n" "$w" "$s" | awk '{ print $2 }')
    wait
    gloo[$s]=$(min "${gloo[$s]:-}" "$t")
  done
done
stream_gbs=$("$SCRATCH/stream_copy" 2 $((10 * rounds)) 256)
stream=$(awk -v g="$stream_gbs" 'BEGIN { printf "%.3f", g * 1e9 / 1073741824 }')

# busbw for 2 ranks: bytes * 2(r-1)/r / time = bytes / time.
bw() { awk -v b="$1" -v us="$2" 'BEGIN { printf "%.3f", b / (us * 1e-6) / 1073741824 }'; }
printf '%10s  %12s %12s %12s  %12s %12s %12s\n' size 'ours(us)' 'mpi(us)' 'gloo(us)' \
  'ours(GB/s)' 'mpi(GB/s)' 'gloo(GB/s)'
for s in "${sizes[@]}"; do
  printf '%10s  %12.2f %12.2f %12.2f  %12s %12s %12s\n' "$s" "${ours[$s]}" "${mpi[$s]}" \
    "${gloo[$s]}" "$(bw "$s" "${ours[$s]}")" "$(bw "$s" "${mpi[$s]}")" "$(bw "$s" "${gloo[$s]}")"
done
echo "STREAM copy, 2 threads: $stream GB/s (2^30; $stream_gbs GB/s in 1e9 units)"
echo "busbw GB/s = 2^30 bytes/s; 2 ranks; fp32 sum; one host"

r16=$(ratio "$(bw 16777216 "${ours[16777216]}")" "$(bw 16777216 "${mpi[16777216]}")")
r64g=$(ratio "$(bw 67108864 "${ours[67108864]}")" "$(bw 67108864 "${gloo[67108864]}")")
r64s=$(ratio "$(bw 67108864 "${ours[67108864]}")" "$stream")
r8=$(ratio "${ours[8]}" "${mpi[8]}")
echo "16 MiB busbw ours/MPI:     ${r16}x (goal >= 1.2: $(verdict "$r16 >= 1.2"))"
echo "64 MiB busbw ours/Gloo:    ${r64g}x (goal >= 5: $(verdict "$r64g >= 5"))"
echo "64 MiB busbw ours/STREAM:  ${r64s}x (goal >= 0.2: $(verdict "$r64s >= 0.2"))"
echo "8 B latency ours/MPI:      ${r8}x (goal <= 1.2: $(verdict "$r8 <= 1.2"))"
