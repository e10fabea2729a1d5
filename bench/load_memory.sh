#!/usr/bin/env bash
# The runtime's memory for intermediates against the peak the compiler's
# buffer assignment reports, for every module of ../shared/hlo that
# compiles: both figures come from `neuron-load --json` (intermediates and
# planned_intermediates). Goal: at most 1.2x. Modules whose intermediates
# are under 64 KiB are listed apart: there the 64-byte alignment of each
# buffer and the runtime's own small buffers decide the ratio.
# Usage: bench/load_memory.sh [HLO_DIR]   (default ../shared/hlo)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
dir="${1:-$ROOT/../shared/hlo}"
[ -d "$dir" ] || { echo "NOTICE: $dir is absent; nothing to measure"; exit 0; }
bench_build neuron-compile neuron-load
export NEURON_RT_LOG_LEVEL=ERROR
table="$SCRATCH/table"
: >"$table"
for f in "$dir"/*.hlo; do
  name="$(basename "$f" .hlo)"
  timeout 120 "$OUT/neuron-compile" compile "$f" --target trn1 -o "$SCRATCH/m.neff" >/dev/null 2>&1 || continue
  if ! timeout 120 "$OUT/neuron-load" "$SCRATCH/m.neff" --json -q >"$SCRATCH/m.json" 2>"$SCRATCH/m.err"; then
    echo "not loaded: $name: $(tail -1 "$SCRATCH/m.err")" >&2
    continue
  fi
  /usr/bin/python3 - "$SCRATCH/m.json" "$name" >>"$table" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
def costs(o):
    if isinstance(o, dict):
        if "planned_intermediates" in o:
            return o
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            c = costs(v)
            if c:
                return c
    return None
c = costs(doc)
if c and c["planned_intermediates"] > 0:
    print(sys.argv[2], c["intermediates"], c["planned_intermediates"])
PY
done
awk '
  { ratio = $2 / $3; n++
    if ($2 < 65536) { small++; if (ratio > 1.2) small_over++; next }
    big++; sum_i += $2; sum_p += $3
    if (ratio > 1.2) { over++; worst[over] = sprintf("  %-70s %12.0f %12.0f %5.2f", $1, $2, $3, ratio) }
    if (ratio > max) max = ratio }
  END {
    printf "modules measured: %d (%d with intermediates >= 64 KiB, %d under)\n", n, big, small
    printf ">= 64 KiB: over 1.2x: %d; worst %.2fx; all together %.2fx (%.0f / %.0f bytes)\n", over, max, sum_i / sum_p, sum_i, sum_p
    for (i = 1; i <= over; i++) print worst[i]
    printf "under 64 KiB: over 1.2x: %d\n", small_over
    printf "goal (<= 1.2x for every module >= 64 KiB): %s\n", over ? "NOT met" : "met"
  }' "$table"
