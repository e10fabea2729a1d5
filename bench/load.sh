#!/usr/bin/env bash
# Load time of a NEFF holding 1 GiB of weights (pseudo-random f32, which
# barely compress), compressed (the default) and fast-loading
# (--enable-fast-loading-neuron-binaries: uncompressed, page-aligned), as GB/s
# of weights, next to `cat FILE > /dev/null` of the fast-loading file (page
# cache warm for all). Goal: fast-loading at least 0.5x cat's rate.
# Best of the runs; neuron-load --json gives the load time and its parts.
# Usage: bench/load.sh [RUNS] [BYTES]   (defaults: 3, 1073741824)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-3}"
bytes="${2:-1073741824}"
bench_build neuron-load bench:make_weights_neff

"$OUT/make_weights_neff" "$SCRATCH/compressed.neff" "$bytes"
"$OUT/make_weights_neff" "$SCRATCH/fast.neff" "$bytes" --fast-loading

# Best load time in ms of neuron-load --json over the runs.
load_ms() {
  local best=1e30 ms
  for ((i = 0; i < runs; i++)); do
    "$OUT/neuron-load" "$1" --json >"$SCRATCH/load.json"
    ms=$(json_field "$SCRATCH/load.json" 'd["cores"][0]["load_ms"]["total"]')
    best=$(awk -v a="$ms" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best"
}
cat_ms() {
  local best=1e30 t0 t1 ms
  cat "$1" >/dev/null
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N); cat "$1" >/dev/null; t1=$(date +%s%N)
    ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e6 }')
    best=$(awk -v a="$ms" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best"
}
gbs() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.2f", b / (ms / 1e3) / 1e9 }'; }
mib() { echo $(($(stat -c %s "$1") >> 20)); }

cat "$SCRATCH/fast.neff" "$SCRATCH/compressed.neff" >/dev/null  # warm the page cache
fast=$(load_ms "$SCRATCH/fast.neff")
compressed=$(load_ms "$SCRATCH/compressed.neff")
cat_fast=$(cat_ms "$SCRATCH/fast.neff")

printf '%-40s %10s %10s %8s\n' "$((bytes >> 20)) MiB of weights" "file MiB" "ms" "GB/s"
printf '%-40s %10d %10.1f %8s\n' "neuron-load, fast-loading NEFF" "$(mib "$SCRATCH/fast.neff")" "$fast" "$(gbs "$fast")"
printf '%-40s %10d %10.1f %8s\n' "neuron-load, compressed NEFF" "$(mib "$SCRATCH/compressed.neff")" "$compressed" "$(gbs "$compressed")"
printf '%-40s %10d %10.1f %8s\n' "cat fast.neff > /dev/null" "$(mib "$SCRATCH/fast.neff")" "$cat_fast" "$(gbs "$cat_fast")"
"$OUT/neuron-load" "$SCRATCH/fast.neff" --json >"$SCRATCH/load.json"
echo "fast-loading parts (ms): $(json_field "$SCRATCH/load.json" '", ".join("%s %.1f" % kv for kv in d["cores"][0]["load_ms"].items())')"
r=$(ratio "$cat_fast" "$fast")
echo "fast-loading/cat: ${r}x (goal >= 0.50: $(verdict "$r >= 0.5"))"
