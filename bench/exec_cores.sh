#!/usr/bin/env bash
# Core scaling: examples/mlp.hlo executed on one simulated core, then on two
# at once in one neuron-exec process (--cores 0-1), ROUNDS times
# interleaved; the median throughput of each and their ratio. Beside it,
# the machine's own ceiling: two separate one-core processes at once (no
# state shared but the hardware), over one.
# Goal: two cores give at least 1.8x one core's throughput (issue 32).
# Usage: bench/exec_cores.sh [ITERATIONS [ROUNDS]]   (default 200000, 5)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
iterations="${1:-200000}"
rounds="${2:-5}"
bench_build neuron-exec
mlp="$ROOT/examples/mlp.hlo"

# throughput ARGS...: inferences/s of one neuron-exec run.
throughput() {
  "$OUT/neuron-exec" "$mlp" --random-inputs -q -n "$iterations" --json "$@" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmark"]["throughput_per_s"])'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$SCRATCH/one" ; : >"$SCRATCH/two" ; : >"$SCRATCH/procs"
for ((r = 1; r <= rounds; r++)); do
  throughput --cores 0 >>"$SCRATCH/one"
  throughput --cores 0-1 >>"$SCRATCH/two"
  throughput --cores 0 >"$SCRATCH/p0" & throughput --cores 1 >"$SCRATCH/p1"; wait
  awk '{ s += $1 } END { print s }' "$SCRATCH/p0" "$SCRATCH/p1" >>"$SCRATCH/procs"
done
one=$(median <"$SCRATCH/one"); two=$(median <"$SCRATCH/two"); procs=$(median <"$SCRATCH/procs")
printf '%-44s %14s\n' "examples/mlp.hlo, $iterations executions" "inferences/s"
printf '%-44s %14.0f\n' "one core (--cores 0)" "$one"
printf '%-44s %14.0f  %sx one core\n' "two cores, one process (--cores 0-1)" "$two" "$(ratio "$two" "$one")"
printf '%-44s %14.0f  %sx one core (the machine'"'"'s ceiling)\n' "two one-core processes at once" "$procs" "$(ratio "$procs" "$one")"
echo "two cores / one core: $(ratio "$two" "$one")x; goal >= 1.8x: $(verdict "$two / $one >= 1.8")"
