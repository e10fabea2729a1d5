#!/usr/bin/env bash
# Start-to-exit time of each tool's `--version`, next to /bin/true's, in one
# run. Goal: every tool within 2x of /bin/true.
# Usage: bench/startup.sh [RUNS]   (default 300 runs per binary)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-300}"
[ -x "$ROOT/out/neuron-ls" ] || "$ROOT/scripts/build" >/dev/null

# Mean microseconds per start over $runs runs (fork+exec+exit, as a shell does).
measure() {
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < runs; i++)); do "$@" >/dev/null; done
  end=$(date +%s%N)
  echo $(((end - start) / runs / 1000))
}

measure /bin/true >/dev/null  # warm the page cache
base=$(measure /bin/true)
printf '%-20s %10s %8s\n' binary 'us/start' 'vs true'
printf '%-20s %10d %8s\n' /bin/true "$base" 1.00x
worst=0
for tool in "$ROOT"/out/neuron-*; do
  [ -x "$tool" ] || continue
  measure "$tool" --version >/dev/null
  t=$(measure "$tool" --version)
  ratio=$(awk -v a="$t" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
  printf '%-20s %10d %7sx\n' "$(basename "$tool")" "$t" "$ratio"
  worst=$(awk -v r="$ratio" -v w="$worst" 'BEGIN { print (r > w) ? r : w }')
done
echo "worst ratio: ${worst}x (goal: <= 2.00x)"
