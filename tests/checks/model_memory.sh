#!/usr/bin/env bash
# Real models' memory: the process's memory is the plan. For a few large
# public modules of ../shared/hlo (MODEL_MEMORY_MODULES overrides the list),
# neuron-exec's peak RSS on random inputs is at most the NEFF's plan total
# (with the kernels' workspace neuron-load reports) x 1.1 + 256 MiB; and a model that does not fit a memory cgroup (3 GiB,
# where the kernel would otherwise kill it) fails at load with exit 1 and
# one line naming both figures, never a signal. Skips with a NOTICE where
# ../shared/hlo is absent, and the cgroup part where cgroups cannot be made
# (not root, or the kernel refuses).
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
HLO="${SHARED_DIR:-$ROOT/../shared}/hlo"
if [ ! -d "$HLO" ]; then
  echo "NOTICE: model memory checks skipped: $HLO is absent"
  echo "check: 0 passed, 0 failed"
  exit 0
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/model-memory.XXXXXX")"
cgroup=""
cleanup() {
  [ -n "$cgroup" ] && rmdir "$cgroup" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
export NEURON_RT_EXEC_TIMEOUT=600

# Big enough that the plan's parts matter (activations, loop state, donated
# weights), small enough for CI beside another job.
modules=(${MODEL_MEMORY_MODULES:-
  graphhelper-ptxla__llama_tp_1
  xla__backends_cpu_benchmarks_hlo_gemma3_1b_flax_call
})

plan_total() {  # NEFF -> the plan's total bytes, with the kernels' workspace
  "$BUILD_DIR/neuron-load" "$1" --json -q 2>/dev/null |
    python3 -c 'import json,sys; p = json.load(sys.stdin)["plan"]; print(p["total"] + p["workspace"])' 2>/dev/null
}

for m in "${modules[@]}"; do
  src="$HLO/$m.hlo"
  [ -f "$src" ] || { echo "NOTICE: $m is not in $HLO"; continue; }
  neff="$work/$m.neff"
  if ! "$BUILD_DIR/neuron-compile" compile "$src" --target trn1 -o "$neff" -q \
       --fill-elided-constants zeros 2>"$work/err"; then
    fail "$m: does not compile: $(head -1 "$work/err")"
    continue
  fi
  total="$(plan_total "$neff")"
  if [ -z "$total" ]; then
    fail "$m: neuron-load --json gives no plan"
    continue
  fi
  /usr/bin/time -f '%M' -o "$work/rss" "$BUILD_DIR/neuron-exec" "$neff" --random-inputs -q \
    >/dev/null 2>"$work/err"
  rc=$?
  rss_kib="$(tail -1 "$work/rss")"
  limit_kib=$(( (total * 11 / 10 + (256 << 20)) / 1024 ))
  if [ "$rc" != 0 ]; then
    fail "$m: neuron-exec exited $rc: $(grep -v WARN "$work/err" | head -1)"
  elif [ "$rss_kib" -le "$limit_kib" ]; then
    pass "$m: peak RSS $((rss_kib >> 10)) MiB <= plan $((total >> 20)) MiB x 1.1 + 256 MiB"
  else
    fail "$m: peak RSS $((rss_kib >> 10)) MiB > plan $((total >> 20)) MiB x 1.1 + 256 MiB"
  fi
  rm -f "$neff"
done

# A memory cgroup of 3 GiB (v2, else v1) holding a model that needs more:
# refused at load, before anything big is made.
make_cgroup() {
  local base
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    base=/sys/fs/cgroup/neuron-check-$$
    mkdir "$base" 2>/dev/null && echo 3G >"$base/memory.max" 2>/dev/null && { echo "$base"; return; }
  elif [ -d /sys/fs/cgroup/memory ]; then
    base=/sys/fs/cgroup/memory/neuron-check-$$
    mkdir "$base" 2>/dev/null && echo 3G >"$base/memory.limit_in_bytes" 2>/dev/null && { echo "$base"; return; }
  fi
  [ -n "${base:-}" ] && rmdir "$base" 2>/dev/null
  return 1
}
big="$HLO/xla__tools_data_benchmarking_mobilenet_v2.hlo"
if [ "$(id -u)" != 0 ]; then
  echo "NOTICE: the cgroup check is skipped: not root"
elif [ ! -f "$big" ]; then
  echo "NOTICE: the cgroup check is skipped: $big is absent"
elif ! cgroup="$(make_cgroup)"; then
  cgroup=""
  echo "NOTICE: the cgroup check is skipped: the kernel refuses a memory cgroup here"
else
  "$BUILD_DIR/neuron-compile" compile "$big" --target trn1 -o "$work/big.neff" -q
  bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2/neuron-exec" "$3" --random-inputs -q' _ \
    "$cgroup" "$BUILD_DIR" "$work/big.neff" >/dev/null 2>"$work/err"
  rc=$?
  lines="$(grep -vc WARN "$work/err")"
  line="$(grep -v WARN "$work/err" | head -1)"
  if [ "$rc" = 1 ] && [ "$lines" = 1 ] && [[ "$line" == *"of host memory, and cgroup"*"leaves"* ]]; then
    pass "mobilenet_v2 in a 3 GiB cgroup: exit 1, one line: ${line:0:160}..."
  else
    fail "mobilenet_v2 in a 3 GiB cgroup: exit $rc ($lines lines): $line"
  fi
fi
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
