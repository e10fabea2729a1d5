#!/usr/bin/env bash
# More ranks than CPUs on one host: fp32-sum all-reduce with 4 and 8 ranks
# on this machine's CPUs, from 8 B to 64 MiB. Ours started two ways (our
# own -r launcher, and mpirun placing the ranks) against Open MPI's
# MPI_Allreduce under mpirun --oversubscribe (vader, the better of
# single-copy on and off, as bench/allreduce.sh), in one run; each figure is
# the best of ROUNDS, the three taking turns. Prints times (us) and ours/MPI; the goal is <= 1.2.
# Usage: bench/allreduce_oversubscribed.sh [SCALE]   (ROUNDS=N, default 3;
#        RANKS="4 8" and SIZES="8 1048576" narrow the run)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
scale="${1:-1}"
rounds="${ROUNDS:-3}"
read -r -a ranks <<<"${RANKS:-4 8}"
read -r -a sizes <<<"${SIZES:-8 65536 1048576 16777216 67108864}"

bench_packages openmpi-bin libopenmpi-dev
bench_build neuron-allreduce
mpicc -O2 -o "$SCRATCH/mpi_allreduce" "$ROOT/bench/peers/mpi_allreduce.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun_() { mpirun -np "$1" --oversubscribe "${@:2}"; }

iters_for() {
  if (($1 <= 65536)); then echo $((2000 * scale))
  elif (($1 <= 1048576)); then echo $((200 * scale))
  else echo $((10 * scale)); fi
}
ours_time() {  # launcher np size iters
  local n=$3 w=$(($3 / 10 + 2))
  if [ "$1" = own ]; then
    "$OUT/neuron-allreduce" -r "$2" allr -b "$4" -e "$4" -d fp32 -n "$n" -w "$w" --json
  else
    NEURON_RT_ROOT_COMM_ID=127.0.0.1:$((20000 + RANDOM % 20000)) mpirun_ "$2" \
      -x NEURON_RT_ROOT_COMM_ID -x NEURON_SIM_ROOT "$OUT/neuron-allreduce" -r "$2" allr \
      -b "$4" -e "$4" -d fp32 -n "$n" -w "$w" --json 2>/dev/null
  fi | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["time:avg(us)"])'
}

declare -A own viampi mpi
for ((round = 0; round < rounds; round++)); do
  for np in "${ranks[@]}"; do
    for s in "${sizes[@]}"; do
      n=$(iters_for "$s")
      k="$np/$s"
      own[$k]=$(min "${own[$k]:-}" "$(ours_time own "$np" "$n" "$s")")
      viampi[$k]=$(min "${viampi[$k]:-}" "$(ours_time mpirun "$np" "$n" "$s")")
      mpi[$k]=$(min "${mpi[$k]:-}" "$(mpi_local_time "$np" "$n" $((n / 10 + 2)) "$s")")
    done
  done
done

echo "fp32 sum all-reduce, $(nproc) CPUs; time in us (best of $rounds); goal ours/MPI <= 1.2"
printf '%5s %10s  %12s %12s %12s  %10s %10s\n' ranks size 'ours(-r)' 'ours(mpirun)' 'mpi' \
  'r/MPI' 'mpirun/MPI'
worst=0
for np in "${ranks[@]}"; do
  for s in "${sizes[@]}"; do
    k="$np/$s"
    r1=$(ratio "${own[$k]}" "${mpi[$k]}")
    r2=$(ratio "${viampi[$k]}" "${mpi[$k]}")
    worst=$(awk -v a="$worst" -v b="$r1" -v c="$r2" 'BEGIN { m = a; if (b > m) m = b; if (c > m) m = c; print m }')
    printf '%5s %10s  %12.2f %12.2f %12.2f  %10s %10s\n' "$np" "$s" "${own[$k]}" \
      "${viampi[$k]}" "${mpi[$k]}" "$r1" "$r2"
  done
done
echo "worst ours/MPI: ${worst}x (goal <= 1.2: $(verdict "$worst <= 1.2"))"
