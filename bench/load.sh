#!/usr/bin/env bash
# Load plus first execution of a model holding 1 GiB of weights (pseudo-random
# f32, which barely compress) whose output sums every weight, so the first
# execution reads them all: a lazily mapped fast-loading NEFF pays for its
# pages there, not in a load that only maps. For the compressed NEFF (the
# default: zstd frames decompressed in parallel) and the fast-loading one
# (--enable-fast-loading-neuron-binaries: plain, page-aligned), next to
# `cat FILE > /dev/null` of each file in the same run (page cache warm for
# all). Rates are GB/s of weights. Goals: compressed >= 1 GB/s, fast-loading
# >= 0.5x cat's rate. Best of the runs (the machine may be shared); the
# compressed NEFF's load parts come from neuron-load --json.
# Usage: bench/load.sh [RUNS] [BYTES]   (defaults: 3, 1073741824)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-3}"
bytes="${2:-1073741824}"
bench_build neuron-load neuron-exec bench:make_weights_neff

"$OUT/make_weights_neff" "$SCRATCH/compressed.neff" "$bytes"
"$OUT/make_weights_neff" "$SCRATCH/fast.neff" "$bytes" --fast-loading

# best_ms CMD...: the best wall time in ms of the command over the runs.
best_ms() {
  local best=1e30 t0 t1 ms
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
    ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e6 }')
    best=$(awk -v a="$ms" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best"
}
# One process: load, then one execution reading every weight.
load_exec() { "$OUT/neuron-exec" "$1" --random-inputs --iterations 1 --warmup 0 --json; }
cat_file() { cat "$1"; }
gbs() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.2f", b / (ms / 1e3) / 1e9 }'; }
mib() { echo $(($(stat -c %s "$1") >> 20)); }

cat "$SCRATCH/fast.neff" "$SCRATCH/compressed.neff" >/dev/null  # warm the page cache
compressed=$(best_ms load_exec "$SCRATCH/compressed.neff")
fast=$(best_ms load_exec "$SCRATCH/fast.neff")
cat_fast=$(best_ms cat_file "$SCRATCH/fast.neff")
cat_compressed=$(best_ms cat_file "$SCRATCH/compressed.neff")

printf '%-44s %9s %10s %8s\n' "$((bytes >> 20)) MiB of weights" "file MiB" "ms" "GB/s"
row() { printf '%-44s %9d %10.1f %8s\n' "$1" "$(mib "$2")" "$3" "$(gbs "$3")"; }
row "load + first exec, compressed NEFF" "$SCRATCH/compressed.neff" "$compressed"
row "load + first exec, fast-loading NEFF" "$SCRATCH/fast.neff" "$fast"
row "cat compressed.neff > /dev/null" "$SCRATCH/compressed.neff" "$cat_compressed"
row "cat fast.neff > /dev/null" "$SCRATCH/fast.neff" "$cat_fast"
"$OUT/neuron-load" "$SCRATCH/compressed.neff" --json >"$SCRATCH/load.json"
echo "compressed load parts (ms): $(json_field "$SCRATCH/load.json" \
  '", ".join("%s %.1f" % kv for kv in d["cores"][0]["load_ms"].items())')"
c=$(gbs "$compressed")
echo "compressed: ${c} GB/s (goal >= 1.00: $(verdict "$c >= 1.0"))"
r=$(ratio "$cat_fast" "$fast")
echo "fast-loading/cat: ${r}x (goal >= 0.50: $(verdict "$r >= 0.5"))"
