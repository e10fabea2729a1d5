#!/usr/bin/env bash
# Real models' host memory against their memory plans, and mobilenet_v2's
# training step beside PyTorch's.
#
# a) Every module of $SHARED/hlo/*.hlo is compiled (neuron-compile compile
#    --framework XLA --target trn1 --fill-elided-constants zeros; those that
#    do not compile are counted and skipped) and its memory plan read: the
#    "plan" object of `neuron-load --json` (inputs, outputs, outputs aliased
#    to their inputs, scratch, constants, total), or, where neuron-load gives
#    none (a build without it, or a model it refuses), the same figures from
#    the NEFF's manifest (`neuron-dump show --json`, memory). Modules whose
#    plan is over MIN_PLAN_MIB run once through `neuron-exec --random-inputs`
#    under /usr/bin/time, one at a time: wall seconds, peak RSS, RSS/plan, and
#    whether RSS <= 1.1 x plan + 256 MiB holds (the runtime and the simulated
#    device's own memory on top of the plan). Status: ok, "does not fit" (the
#    tool refused it with NRT_RESOURCE), timeout (MODEL_TIMEOUT, or the
#    runtime's NRT_TIMEOUT), failed (anything else; the signal is named, and
#    "OOM killer" where the kernel's OOM killer ended it).
# b) The mobilenet_v2 training step (batch 96) both ways, on THREADS threads:
#    ours is neuron-exec of its NEFF (-n ITERATIONS -w WARMUP: the median
#    execution's latency from --json, and that run's peak RSS); PyTorch's is
#    bench/peers/mobilenet_v2_step.py (torchvision's mobilenet_v2, cross-
#    entropy, SGD with momentum; Debian's python3-torch, installed if
#    missing): the median of STEPS steps after a warm-up, and its peak RSS.
#
# Runs on the machine's memory: never two models at once. Progress goes to
# stderr, the tables to stdout.
# Usage: bench/model_memory.sh [--list]   (--list: the plans only, nothing run)
# Environment:
#   SHARED=DIR         where hlo/ is (default ../shared)
#   ONLY=REGEX         only modules whose file name matches (grep -E), e.g.
#                      ONLY=gemma3_4b; part b runs when it matches mobilenet_v2
#   MIN_PLAN_MIB=256   run modules whose plan is over this
#   MODEL_TIMEOUT=900  wall seconds per execution (part b: per step, times
#                      ITERATIONS + WARMUP for the run); the runtime's own
#                      NEURON_RT_EXEC_TIMEOUT (30 s when unset) is set to it
#   COMPILE_TIMEOUT=300  seconds per compile and per plan read
#   THREADS=2          threads of both sides of part b (OMP_NUM_THREADS, torch)
#   STEPS=3            PyTorch's measured steps; ITERATIONS=3 WARMUP=1: ours
#   NO_BUILD=1         use the tools in the build directory as they are
set -uo pipefail
source "$(dirname "$0")/bench_common.sh"

list=0
case "${1:-}" in
  --list) list=1 ;;
  "") ;;
  *) echo "usage: bench/model_memory.sh [--list]" >&2; exit 2 ;;
esac
shared="${SHARED:-$ROOT/../shared}"
only="${ONLY:-}"
min_plan_mib="${MIN_PLAN_MIB:-256}"
model_timeout="${MODEL_TIMEOUT:-900}"
compile_timeout="${COMPILE_TIMEOUT:-300}"
threads="${THREADS:-2}"
steps="${STEPS:-3}"
iterations="${ITERATIONS:-3}"
warmup="${WARMUP:-1}"
mobilenet="xla__tools_data_benchmarking_mobilenet_v2"

[ -n "${NO_BUILD:-}" ] || bench_build neuron-compile neuron-load neuron-exec neuron-dump
for tool in neuron-compile neuron-load neuron-exec neuron-dump; do
  [ -x "$OUT/$tool" ] || { echo "model_memory.sh: $OUT/$tool is missing" >&2; exit 1; }
done
export NEURON_RT_LOG_LEVEL=ERROR OMP_NUM_THREADS="$threads"
# The runtime's limit per execution: the wall limit, not its 30 s default.
export NEURON_RT_EXEC_TIMEOUT="$model_timeout"

# again CMD...: CMD, run again (every 10 s, for a minute) while it cannot
# start (126, 127: a tool of the build directory being relinked).
again() {
  local i rc
  for i in 1 2 3 4 5 6 7; do
    "$@"
    rc=$?
    [ "$rc" = 126 ] || [ "$rc" = 127 ] || return "$rc"
    [ "$i" = 7 ] || { echo "  could not start ${*:1:4} ...; again in 10 s" >&2; sleep 10; }
  done
  return "$rc"
}

# short NAME: a module's name less the prefix of its source tree.
short() {
  sed -E 's/^(graphhelper-ptxla__|xla__)//
    s/^(backends_cpu_benchmarks_(huge_)?hlo_|tools_benchmarks_hlo_(hlo_)?|tools_data_benchmarking_|tools_multihost_hlo_runner_data_)//' <<<"$1"
}

# compile HLO NEFF: neuron-compile as the task has it; no log file left behind.
compile() {
  again timeout "$compile_timeout" "$OUT/neuron-compile" compile "$1" --framework XLA --target trn1 \
    -o "$2" -q --fill-elided-constants zeros --logfile "" >/dev/null 2>"$SCRATCH/compile.err"
}

# plan NEFF: "inputs outputs aliased scratch constants total source" in bytes
# (total with the kernels' workspace),
# from neuron-load's plan, else the NEFF manifest's memory; empty if neither.
plan() {
  again timeout "$compile_timeout" "$OUT/neuron-load" "$1" --json -q >"$SCRATCH/load.json" 2>"$SCRATCH/load.err"
  again timeout "$compile_timeout" "$OUT/neuron-dump" show "$1" --json >"$SCRATCH/dump.json" 2>/dev/null
  /usr/bin/python3 - "$SCRATCH/load.json" "$SCRATCH/dump.json" <<'PY'
import json, sys
def read(path):
    try:
        return json.load(open(path))
    except Exception:
        return {}
p = read(sys.argv[1]).get("plan")
src = "neuron-load"
if not p:
    m = read(sys.argv[2]).get("manifest", {}).get("memory")
    src = "manifest"
    p = m and dict(m, scratch=m.get("scratch_peak", 0))
if p:
    # The kernels' workspace (neuron-load's) is part of what the model needs.
    p["total"] = p.get("total", 0) + p.get("workspace", 0)
    print(*(int(p.get(k, 0)) for k in ("inputs", "outputs", "aliased", "scratch", "constants", "total")), src)
PY
}

# run_exec LIMIT NEFF ARGS...: neuron-exec under /usr/bin/time and timeout;
# sets rc, wall (s), rss_kb, err (the tool's error line, if any) and oom (1
# when the kernel's OOM killer killed a process meanwhile: /proc/vmstat).
run_exec() {
  local limit="$1" neff="$2"
  shift 2
  rm -f "$SCRATCH/time"
  oom_kills=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat 2>/dev/null)
  again /usr/bin/time -f '%e %M' -o "$SCRATCH/time" timeout -k 30 "$limit" \
    "$OUT/neuron-exec" "$neff" --random-inputs --seed 1 -q "$@" >"$SCRATCH/exec.out" 2>"$SCRATCH/exec.err"
  rc=$?
  [ "$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat 2>/dev/null)" = "$oom_kills" ] && oom=0 || oom=1
  run_limit="$limit"
  read -r wall rss_kb < <(tail -1 "$SCRATCH/time" 2>/dev/null) || true
  err=$(grep -v -E '^[0-9]{4}-[A-Za-z]{3}-[0-9]{2} .* (WARN|INFO) ' "$SCRATCH/exec.err" | tail -1)
}

# status: ok, does not fit, timeout or failed (with the signal, and "OOM
# killer" where that was it), from the last run_exec.
status() {
  local sig=$((rc - 128))
  if [ "$rc" = 0 ]; then echo ok
  elif [[ "$err" == *NRT_RESOURCE* ]]; then echo "does not fit"
  elif [ "$rc" = 124 ] || [[ "$err" == *NRT_TIMEOUT* ]]; then echo timeout
  elif [ "$rc" = 137 ] && ((oom)); then echo "failed (OOM killer)"
  elif [ "$rc" = 137 ] && awk -v w="${wall:-0}" -v l="$run_limit" 'BEGIN { exit !(w >= l) }'; then echo timeout
  elif [ "$rc" -gt 128 ]; then echo "failed ($(kill -l "$sig" 2>/dev/null || echo "signal $sig"))"
  else echo failed
  fi
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# a) every module's plan, and the big ones run.
rows="$SCRATCH/rows"
: >"$rows"
compiled=0 not_compiled=0 kept=0 ran=0 held=0
if [ ! -d "$shared/hlo" ]; then
  echo "NOTICE: $shared/hlo is absent; no modules to measure"
else
  for f in "$shared"/hlo/*.hlo; do
    [ -f "$f" ] || continue
    name="$(basename "$f" .hlo)"
    [ -z "$only" ] || grep -q -E -- "$only" <<<"$name" || continue
    neff="$SCRATCH/m.neff"
    if ! compile "$f" "$neff"; then
      not_compiled=$((not_compiled + 1))
      echo "not compiled: $name: $(tail -1 "$SCRATCH/compile.err" | cut -c1-160)" >&2
      continue
    fi
    compiled=$((compiled + 1))
    read -r p_in p_out p_alias p_scratch p_const p_total p_src < <(plan "$neff") || true
    if [ -z "${p_total:-}" ]; then
      echo "no plan: $name: $(tail -1 "$SCRATCH/load.err")" >&2
      continue
    fi
    awk -v t="$p_total" -v m="$min_plan_mib" 'BEGIN { exit !(t > m * 1048576) }' || continue
    [ "$p_src" = neuron-load ] || [ ! -s "$SCRATCH/load.err" ] ||
      echo "plan from the manifest: $(short "$name"): $(grep -v ' WARN ' "$SCRATCH/load.err" | tail -1 | cut -c1-300)" >&2
    kept=$((kept + 1))
    cells="$(short "$name") | $(mib "$p_in") | $(mib "$p_out") | $(mib "$p_alias") | $(mib "$p_scratch") | $(mib "$p_total")"
    if ((list)); then
      echo "| $cells | $p_src |" >>"$rows"
      continue
    fi
    echo "running $(short "$name") (plan $(mib "$p_total") MiB, limit ${model_timeout} s) ..." >&2
    run_exec "$model_timeout" "$neff"
    st=$(status)
    [ -z "$err" ] || echo "  $err" >&2
    rss_mib="" ratio_cell="-" rule="-"
    if [ -n "${rss_kb:-}" ]; then
      rss_mib=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
      if [ "$st" != "does not fit" ]; then
        ratio_cell=$(ratio "$rss_kb" "$(awk -v t="$p_total" 'BEGIN { print t / 1024 }')")
        rule=$(awk -v k="$rss_kb" -v t="$p_total" 'BEGIN { print (k * 1024 <= 1.1 * t + 256 * 1048576) ? "yes" : "NO" }')
      fi
    fi
    if [ "$st" = ok ]; then
      ran=$((ran + 1))
      [ "$rule" = yes ] && held=$((held + 1))
    fi
    echo "  $st, ${wall:-?} s, peak RSS ${rss_mib:-?} MiB" >&2
    echo "| $cells | ${rss_mib:--} | $ratio_cell | $rule | ${wall:--} | $st |" >>"$rows"
    rm -f "$neff"
  done
  echo "modules compiled: $compiled, not compiled: $not_compiled; plans over $min_plan_mib MiB: $kept"
  echo
  if ((list)); then
    echo "| module | inputs MiB | outputs MiB | aliased MiB | scratch MiB | plan + workspace MiB | plan from |"
    echo "|---|---:|---:|---:|---:|---:|---|"
  else
    echo "| module | inputs MiB | outputs MiB | aliased MiB | scratch MiB | plan + workspace MiB | peak RSS MiB | RSS/plan | RSS <= 1.1 plan + 256 MiB | time s | status |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"
  fi
  cat "$rows"
  ((list)) || echo "ran ok: $ran; RSS <= 1.1 x plan + 256 MiB in $held of them"
fi
((list)) && exit 0

# b) mobilenet_v2's step, ours beside PyTorch's.
echo
hlo="$shared/hlo/$mobilenet.hlo"
if [ ! -f "$hlo" ]; then
  echo "NOTICE: $hlo is absent; no mobilenet_v2 comparison"
  exit 0
fi
if [ -n "$only" ] && ! grep -q -E -- "$only" <<<"$mobilenet"; then
  echo "NOTICE: ONLY=$only leaves out mobilenet_v2; no comparison with PyTorch"
  exit 0
fi
bench_packages python3-torch python3-torchvision time  # time: /usr/bin/time for peak RSS
if ! compile "$hlo" "$SCRATCH/mobilenet.neff"; then
  echo "NOTICE: mobilenet_v2 does not compile: $(tail -1 "$SCRATCH/compile.err")"
  exit 1
fi
limit=$((model_timeout * (iterations + warmup)))
echo "mobilenet_v2: neuron-exec, $warmup + $iterations executions (limit $limit s) ..." >&2
run_exec "$limit" "$SCRATCH/mobilenet.neff" --iterations "$iterations" --warmup "$warmup" --json
ours_st=$(status)
ours_s="" ours_rss=""
[ -z "${rss_kb:-}" ] || ours_rss=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
if [ "$ours_st" = ok ]; then
  ours_s=$(json_field "$SCRATCH/exec.out" 'd["benchmark"]["latency_us"]["p50"] / 1e6')
else
  echo "  ours: $ours_st${err:+: $err}" >&2
fi
echo "  ours: $ours_st, step ${ours_s:-?} s, peak RSS ${ours_rss:-?} MiB" >&2

echo "mobilenet_v2: PyTorch, 1 + $steps steps ..." >&2
torch_s="" torch_rss="" torch_v=""
if timeout -k 30 "$limit" /usr/bin/python3 "$ROOT/bench/peers/mobilenet_v2_step.py" \
  --steps "$steps" --threads "$threads" >"$SCRATCH/torch.json" 2>"$SCRATCH/torch.err"; then
  torch_s=$(json_field "$SCRATCH/torch.json" 'd["step_seconds"]')
  torch_rss=$(json_field "$SCRATCH/torch.json" '"%.1f" % (d["peak_rss_bytes"] / 1048576)')
  torch_v=$(json_field "$SCRATCH/torch.json" 'd["torch"]')
else
  echo "  PyTorch failed: $(tail -1 "$SCRATCH/torch.err")" >&2
fi
echo "  PyTorch ${torch_v:-?}: step ${torch_s:-?} s, peak RSS ${torch_rss:-?} MiB" >&2

# cell X: X with 3 decimals, or - when missing; quotient A B: A/B or -.
cell() { [ -n "$1" ] && awk -v x="$1" 'BEGIN { printf "%.3f", x }' || echo -; }
quotient() { [ -n "$1" ] && [ -n "$2" ] && ratio "$1" "$2" || echo -; }
echo "mobilenet_v2 training step, batch 96, $threads threads (ours: median of $iterations executions; PyTorch ${torch_v:-?}: median of $steps steps)"
echo
echo "| ours step s | PyTorch step s | ours/PyTorch | ours peak RSS MiB | PyTorch peak RSS MiB | ours/PyTorch | ours status |"
echo "|---:|---:|---:|---:|---:|---:|---|"
echo "| $(cell "$ours_s") | $(cell "$torch_s") | $(quotient "$ours_s" "$torch_s") | ${ours_rss:--} | ${torch_rss:--} | $(quotient "$ours_rss" "$torch_rss") | $ours_st |"
