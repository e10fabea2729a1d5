#!/usr/bin/env bash
# NEURON_RT_INSPECT_PRECACHE_ENABLE: the profile overhead the profiled
# execution carries, with and without metadata pre-cached on the warmups.
# A 3000-instruction MLP stack (bench/gen_mlp_stack.py) runs 3 warmups and 5
# more executions per process in model mode; the profiled execution is the
# 4th. Its overhead is its nrt_execute time (system profile) minus the
# median of the 4 executions after it, the median of RUNS processes.
# Usage: bench/profile_precache.sh [RUNS]   (default 5)
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
runs="${1:-5}"
warmup=3
bench_build neuron-compile neuron-exec

/usr/bin/python3 "$ROOT/bench/gen_mlp_stack.py" 3000 >"$SCRATCH/mlp.hlo"
"$OUT/neuron-compile" compile "$SCRATCH/mlp.hlo" --target trn1 -o "$SCRATCH/mlp.neff"

# overhead PRECACHE: "OVERHEAD_US BUILD_US SPANS CACHE_HITS", medians over the runs.
overhead() {
  local r dir
  for ((r = 0; r < runs; r++)); do
    dir="$SCRATCH/p$1_$r"
    NEURON_RT_INSPECT_ENABLE=1 NEURON_RT_INSPECT_DEVICE_PROFILE=model \
      NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP=$warmup NEURON_RT_INSPECT_PRECACHE_ENABLE="$1" \
      NEURON_RT_INSPECT_OUTPUT_DIR="$dir" \
      "$OUT/neuron-exec" "$SCRATCH/mlp.neff" --random-inputs -w 0 -n $((warmup + 5)) --json >/dev/null
    /usr/bin/python3 - "$dir" "$warmup" <<'PY'
import glob, json, statistics, sys
d, w = sys.argv[1], int(sys.argv[2])
sys_doc = json.load(open(glob.glob(d + "/system_profile_*.json")[0]))
dur = [e["dur"] for e in sys_doc["traceEvents"] if e.get("name") == "nrt_execute"]
dev = json.load(open(glob.glob(d + "/device_profile_model_*.json")[0]))
m = dev["otherData"]["metadata"]
print(dur[w] - statistics.median(dur[w + 1:]), m["build_ns"] / 1e3, m["cache_hits"])
PY
  done | /usr/bin/python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin]
med = lambda i: statistics.median(float(r[i]) for r in rows)
print(f"{med(0):.1f} {med(1):.1f} {rows[-1][2]}")'
}

read -r off_us off_build off_hits < <(overhead 0)
read -r on_us on_build on_hits < <(overhead 1)
printf '%-44s %14s %16s %11s\n' "3000-instruction MLP, $runs runs each" "overhead us" "metadata built" "cache hits"
printf '%-44s %14s %16s %11s\n' "NEURON_RT_INSPECT_PRECACHE_ENABLE=0" "$off_us" "$off_build us" "$off_hits"
printf '%-44s %14s %16s %11s\n' "NEURON_RT_INSPECT_PRECACHE_ENABLE=1" "$on_us" "$on_build us" "$on_hits"
echo "overhead without / with precache: $(ratio "$off_us" "$on_us")x"
