#!/usr/bin/env bash
# fp32-sum all-reduce across hosts of a namespace test cluster
# (tests/cluster/cluster.sh): neuron-allreduce (ranks started by hand with
# NEURON_RANK) vs Open MPI (TCP and vader BTLs, mpirun through netns-rsh) vs
# Gloo (TCP) in the same run, on 2, 4 and 8 hosts x 1 rank and 4 hosts x 2
# ranks, with links shaped to each of RATES (tc tbf on both ends) and
# unshaped. Prints one row per case: the times, the bus bandwidths (2^30 bytes/s, busbw = bytes *
# 2(n-1)/n / time for n ranks), ours over the better peer, and for shaped
# links the bus bandwidth over the link rate. Needs root (network namespaces).
# Usage: bench/allreduce_hosts.sh [--quick] [SCALE]
#   --quick  2 and 4 hosts x 1 rank only
#   SCALE    multiplies the iteration counts (default 1)
# Environment: ROUNDS (each figure is the best of ROUNDS rounds, default 2),
#   SIZES (bytes, default "8 67108864"; add 1048576 for 1 MiB),
#   RATES (the shaped links' rates, default 2gbit; e.g. "2gbit 1gbit").
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
source "$ROOT/tests/cluster/cluster.sh"

quick=0 scale=1
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *[!0-9]*|"") echo "allreduce_hosts: unknown argument '$a'" >&2; exit 2 ;;
    *) scale="$a" ;;
  esac
done
rounds="${ROUNDS:-2}"
read -r -a sizes <<<"${SIZES:-8 67108864}"
read -r -a rates <<<"${RATES:-2gbit}"
if ((quick)); then configs=("2 1" "4 1"); else configs=("2 1" "4 1" "8 1" "4 2"); fi

# The peers' packages (bench-only, so not in scripts/lib/common.sh DEPS).
bench_packages openmpi-bin libopenmpi-dev libgloo-dev
bench_build neuron-allreduce
mpicc -O2 -o "$SCRATCH/mpi_allreduce" "$ROOT/bench/peers/mpi_allreduce.c"
g++ -O2 -std=c++17 -o "$SCRATCH/gloo_allreduce" "$ROOT/bench/peers/gloo_allreduce.cc" -lgloo -pthread

CL="bar$$"
trap 'cluster_down "$CL"; rm -rf "$SCRATCH"' EXIT
max_hosts=0
for c in "${configs[@]}"; do read -r h _ <<<"$c"; ((h > max_hosts)) && max_hosts=$h; done

# SIZE SHAPED: enough iterations for a stable average.
iters_for() {
  local n
  case "$1" in
    8) n=1000 ;;
    1048576) n=$(($2 ? 40 : 200)) ;;
    *) n=$(($2 ? 3 : 10)) ;;
  esac
  echo $((n * scale))
}

port=$(cluster_base_port)

# wait_ranks TAG PID...: waits for a run's ranks; when one failed, prints
# what they said ($SCRATCH/TAG*.err) and returns 1.
wait_ranks() {
  local tag="$1" p failed=0
  shift
  for p in "$@"; do wait "$p" || failed=1; done
  ((failed == 0)) || sed "s/^/  $tag: /" "$SCRATCH/$tag"*.err >&2
  return "$failed"
}

# Each runner: HOSTS PER_HOST SIZE ITERS WARMUP; prints rank 0's average
# microseconds (the slowest rank's), or nothing when the run failed. Runs in
# a subshell ($(...)): ours takes $port, which the caller moves on.
run_ours() {
  local hosts="$1" per="$2" size="$3" n="$4" w="$5" world=$(($1 * $2)) r h pids=()
  local root; root="$(cluster_addr "$CL" 0):$port"
  for ((r = world - 1; r >= 0; r--)); do
    h=$((r / per))
    cluster_exec "$CL" "$h" env NEURON_RT_ROOT_COMM_ID="$root" NEURON_RANK="$r" \
      NEURON_WORLD_SIZE="$world" NEURON_HOST_ADDR="$(cluster_addr "$CL" "$h")" \
      NEURON_RT_EXEC_TIMEOUT=120 timeout 600 "$OUT/neuron-allreduce" allr -N "$hosts" \
      -b "$size" -e "$size" -d fp32 --op sum -n "$n" -w "$w" --json \
      >"$SCRATCH/ours$r.json" 2>"$SCRATCH/ours$r.err" &
    pids+=($!)
  done
  wait_ranks ours "${pids[@]}" || return 0
  json_field "$SCRATCH/ours0.json" 'd["results"][0]["time:avg(us)"]'
}

# Open MPI at its best on this cluster: every namespace host sees the same
# CPUs, so its default binding puts each host's first rank on core 0, all on
# one CPU (8 B: 4 ms instead of 6 us); unbound, and yielding while it waits
# where the ranks outnumber the machine's CPUs, as it does itself when it
# knows it is oversubscribed (else 4 x 2 ranks take 23 ms for 8 B). TCP
# between hosts, shared memory (vader) between a host's ranks; UCX finds no
# transport here.
mpi_flags() {
  echo --bind-to none
  (($1 > $(nproc))) && echo --mca mpi_yield_when_idle 1
  return 0
}

run_mpi() {
  local hosts="$1" per="$2" size="$3" n="$4" w="$5"
  # shellcheck disable=SC2046  # mpi_flags' words are separate arguments
  timeout 600 "$ROOT/tests/cluster/cluster.sh" mpirun "$CL" -np $((hosts * per)) \
    --host "$(cluster_hostlist "$CL" "$hosts" "$per")" --mca btl tcp,vader,self \
    $(mpi_flags $((hosts * per))) \
    "$SCRATCH/mpi_allreduce" "$n" "$w" "$size" 2>"$SCRATCH/mpi.err" | awk '{ print $2 }' ||
    sed 's/^/  mpi: /' "$SCRATCH/mpi.err" >&2
}

run_gloo() {
  local hosts="$1" per="$2" size="$3" n="$4" w="$5" world=$(($1 * $2)) r h pids=()
  rm -rf "$SCRATCH/gloo-store" && mkdir -p "$SCRATCH/gloo-store"
  for ((r = world - 1; r >= 0; r--)); do
    h=$((r / per))
    cluster_exec "$CL" "$h" env GLOO_HOSTNAME="$(cluster_addr "$CL" "$h")" timeout 600 \
      "$SCRATCH/gloo_allreduce" "$r" "$world" "$SCRATCH/gloo-store" "$n" "$w" "$size" \
      >"$SCRATCH/gloo$r.out" 2>"$SCRATCH/gloo$r.err" &
    pids+=($!)
  done
  wait_ranks gloo "${pids[@]}" || return 0
  awk '{ print $2 }' "$SCRATCH/gloo0.out"
}

us() { [ -n "$1" ] && printf '%.1f' "$1" || echo -; }
busbw() {  # BYTES RANKS US
  [ -n "$3" ] || { echo "-"; return; }
  awk -v b="$1" -v n="$2" -v us="$3" 'BEGIN { printf "%.4g", b * 2 * (n - 1) / n / (us * 1e-6) / 1073741824 }'
}
# RATE as tc writes it (e.g. 2gbit, 500mbit) in 2^30 bytes/s.
link_gbs() {
  awk -v r="$1" 'BEGIN {
    n = r + 0; u = tolower(substr(r, length(n "") + 1))
    m = (u ~ /^g/) ? 1e9 : (u ~ /^m/) ? 1e6 : (u ~ /^k/) ? 1e3 : 1
    if (u ~ /bps$/) m *= 8
    printf "%.4f", n * m / 8 / 1073741824 }'
}

declare -A t_ours t_mpi t_gloo
links=("${rates[@]}" none)
for link in "${links[@]}"; do
  cluster_down "$CL"
  shaped=1 up_args=(--rate "$link")
  [ "$link" = none ] && shaped=0 up_args=()
  rc=0
  cluster_up "$CL" "$max_hosts" "${up_args[@]}" || rc=$?
  if ((rc == 77)); then
    echo "NOTICE: no namespace cluster here (see the line above); nothing measured"
    exit 0
  fi
  ((rc == 0)) || exit "$rc"
  for c in "${configs[@]}"; do
    read -r hosts per <<<"$c"
    for s in "${sizes[@]}"; do
      key="$hosts $per $link $s"
      n=$(iters_for "$s" "$shaped")
      w=$((n / 10 + 1))
      for ((round = 0; round < rounds; round++)); do
        port=$((port + 1))
        t_ours[$key]=$(min "${t_ours[$key]:-}" "$(run_ours "$hosts" "$per" "$s" "$n" "$w")")
        t_mpi[$key]=$(min "${t_mpi[$key]:-}" "$(run_mpi "$hosts" "$per" "$s" "$n" "$w")")
        t_gloo[$key]=$(min "${t_gloo[$key]:-}" "$(run_gloo "$hosts" "$per" "$s" "$n" "$w")")
      done
    done
  done
done

printf '%5s %5s %6s %9s  %11s %11s %11s  %9s %9s %9s  %9s  %9s %9s\n' hosts ranks rate size \
  'ours(us)' 'mpi(us)' 'gloo(us)' 'ours GB/s' 'mpi GB/s' 'gloo GB/s' 'ours/peer' 'ours/link' 'peer/link'
for link in "${links[@]}"; do
  for c in "${configs[@]}"; do
    read -r hosts per <<<"$c"
    for s in "${sizes[@]}"; do
      key="$hosts $per $link $s"
      nr=$((hosts * per))
      bo=$(busbw "$s" "$nr" "${t_ours[$key]}")
      bm=$(busbw "$s" "$nr" "${t_mpi[$key]}")
      bg=$(busbw "$s" "$nr" "${t_gloo[$key]}")
      best=$(awk -v a="$bm" -v b="$bg" 'BEGIN { if (a == "-") print b; else if (b == "-") print a; else print (a > b) ? a : b }')
      vs=$(awk -v o="$bo" -v p="$best" 'BEGIN { if (o == "-" || p == "-" || p == 0) print "-"; else printf "%.2f", o / p }')
      ol="-" pl="-"
      if [ "$link" != none ]; then
        gbs=$(link_gbs "$link")
        ol=$(awk -v o="$bo" -v l="$gbs" 'BEGIN { if (o == "-") print "-"; else printf "%.2f", o / l }')
        pl=$(awk -v o="$best" -v l="$gbs" 'BEGIN { if (o == "-") print "-"; else printf "%.2f", o / l }')
      fi
      printf '%5s %5s %6s %9s  %11s %11s %11s  %9s %9s %9s  %9s  %9s %9s\n' "$hosts" "$nr" \
        "$link" "$s" "$(us "${t_ours[$key]}")" \
        "$(us "${t_mpi[$key]}")" "$(us "${t_gloo[$key]}")" "$bo" "$bm" "$bg" "$vs" "$ol" "$pl"
    done
  done
done
echo "busbw GB/s = 2^30 bytes/s, bytes * 2(n-1)/n / time; fp32 sum; best of $rounds round(s)"
echo "ours/peer: our busbw over the better of MPI and Gloo; */link: busbw over the link's rate"
echo "MPI: Open MPI $(mpirun --version 2>/dev/null | sed -n 's/.*Open MPI) //p'), --mca btl tcp,vader,self --bind-to none (mpi_yield_when_idle 1 beyond $(nproc) ranks), peer -O2; Gloo: TCP transport, peer -O2"
