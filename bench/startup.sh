#!/usr/bin/env bash
# Start-to-exit time of each tool's `--version`, next to /bin/true's, in one
# run. Goal: every tool within 2x of /bin/true.
# Usage: bench/startup.sh [RUNS] [ROUNDS]   (default 300 runs per binary, in
# 10 rounds)
# The binaries take turns, ROUNDS times RUNS/ROUNDS starts each, and each
# one's figure is its fastest round: on a shared machine other work slows
# whole stretches of time, and taking turns keeps such a stretch from
# landing on one binary only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-300}"
rounds="${2:-10}"
for n in "$runs" "$rounds"; do
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
    echo "startup.sh: RUNS and ROUNDS must be positive whole numbers, not '$n'" >&2
    exit 2
  fi
done
per_round=$(((runs + rounds - 1) / rounds))
[ -x "$ROOT/out/neuron-ls" ] || "$ROOT/scripts/build" >/dev/null

# Mean microseconds per start over $per_round runs (fork+exec+exit, as a
# shell does).
measure() {
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < per_round; i++)); do "$@" >/dev/null; done
  end=$(date +%s%N)
  echo $(((end - start) / per_round / 1000))
}

# Entry 0 is /bin/true itself (no --version: GNU true would print one).
binaries=(/bin/true)
for tool in "$ROOT"/out/neuron-*; do
  if [ -x "$tool" ]; then binaries+=("$tool"); fi
done
start() {
  if [ "$1" = 0 ]; then measure /bin/true; else measure "${binaries[$1]}" --version; fi
}

best=()
for k in "${!binaries[@]}"; do start "$k" >/dev/null; done  # warm the page cache
for ((r = 0; r < rounds; r++)); do
  for k in "${!binaries[@]}"; do
    t=$(start "$k")
    if [ -z "${best[$k]:-}" ] || [ "$t" -lt "${best[$k]}" ]; then best[$k]=$t; fi
  done
done

base=${best[0]}
printf '%-20s %10s %8s\n' binary 'us/start' 'vs true'
worst=0
for k in "${!binaries[@]}"; do
  ratio=$(awk -v a="${best[$k]}" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
  name=${binaries[$k]##*/}
  [ "$k" = 0 ] && name=/bin/true
  printf '%-20s %10d %7sx\n' "$name" "${best[$k]}" "$ratio"
  [ "$k" -eq 0 ] && continue
  worst=$(awk -v r="$ratio" -v w="$worst" 'BEGIN { print (r > w) ? r : w }')
done
echo "worst ratio: ${worst}x (goal: <= 2.00x)"
