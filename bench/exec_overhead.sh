#!/usr/bin/env bash
# Per-execution overhead: a 4-element f32 add executed 100,000 times in one
# neuron-exec process (mean microseconds per execution, from its benchmark
# mode), next to numpy's np.add on 4 elements in a loop.
# Goal: under 5 us per execution.
# Usage: bench/exec_overhead.sh [ITERATIONS]   (default 100000)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
iterations="${1:-100000}"
bench_build neuron-compile neuron-exec

cat >"$SCRATCH/add4.hlo" <<'HLO'
HloModule add4
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
HLO
"$OUT/neuron-compile" compile "$SCRATCH/add4.hlo" --target trn1 -o "$SCRATCH/add4.neff"
"$OUT/neuron-exec" "$SCRATCH/add4.neff" --random-inputs -w 1000 -n "$iterations" --json >"$SCRATCH/ours.json"
ours=$(json_field "$SCRATCH/ours.json" '"%.3f" % d["benchmark"]["latency_us"]["mean"]')
p50=$(json_field "$SCRATCH/ours.json" '"%.3f" % d["benchmark"]["latency_us"]["p50"]')

numpy=$(numpy_peer - "$iterations" <<'PY'
import sys, time
import numpy as np
n = int(sys.argv[1])
a, b, c = (np.ones(4, np.float32) for _ in range(3))
t = time.perf_counter()
for _ in range(n): np.add(a, b, out=c)
print(f"{(time.perf_counter() - t) / n * 1e6:.3f}")
PY
)

printf '%-34s %12s\n' "4-element add, $iterations times" "us/exec"
printf '%-34s %12s  (p50 %s)\n' "neuron-exec (ours, mean)" "$ours" "$p50"
printf '%-34s %12s\n' "numpy np.add (mean)" "$numpy"
echo "ours/numpy: $(ratio "$ours" "$numpy")x; goal < 5 us per execution: $(verdict "$ours < 5")"
