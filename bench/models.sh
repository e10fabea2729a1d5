#!/usr/bin/env bash
# Whole real models at the speed of the CPU framework a user would pick:
# ours beside PyTorch (Debian's python3-torch, on the same threads), in one
# run, ratios printed.
#
# a) resnet50 inference, batch 1: the public Keras/JAX module
#    (NHWC/HWIO, f32) through neuron-exec -n ITERATIONS (its median
#    latency), beside bench/peers/resnet50_infer.py (torchvision's
#    resnet50 frozen for inference with torch.jit.optimize_for_inference, the
#    fastest PyTorch build here; median of ITERATIONS calls).
# b) mobilenet_v2's training step, batch 96 (the public torch_xla trace)
#    through neuron-exec (median of STEPS executions after one warm-up),
#    beside bench/peers/mobilenet_v2_step.py (median of STEPS steps), in
#    NCHW and in channels-last, the faster counted (which wins depends on
#    the CPU: NCHW 10.4 s, channels-last 6.0 s on a Xeon with AVX-512;
#    NCHW was the faster on an AMD EPYC with AVX2).
# c) an LLM call (public gemma3 1B, `..._gemma3_1b_flax_call`) through
#    neuron-exec (median of ITERATIONS), beside the time its inputs (the
#    weights, nearly all of them) take to stream from memory at the STREAM
#    copy rate on THREADS threads (bench/peers/stream_copy.c): bound/ours
#    is the fraction of the memory's speed the call reaches.
#
# Peak RSS (/usr/bin/time) is printed beside each side's time.
# Ratios are ours/PyTorch (below 1: we are faster) and bound/ours (1: at
# the memory's speed). Progress goes to stderr, the table to stdout.
# Usage: bench/models.sh
# Environment:
#   SHARED=DIR        where hlo/ is (default ../shared)
#   ONLY=a|b|c        one part only (e.g. ONLY=a)
#   THREADS=2         threads of both sides (OMP_NUM_THREADS, torch)
#   ITERATIONS=20     timed executions for a) and c); STEPS=3 for b)
#   MODEL_TIMEOUT=900 wall seconds per run
#   NO_BUILD=1        use the tools in the build directory as they are
set -uo pipefail
source "$(dirname "$0")/bench_common.sh"

[ $# = 0 ] || { echo "usage: bench/models.sh (settings in the environment: see the header)" >&2; exit 2; }
shared="${SHARED:-$ROOT/../shared}"
only="${ONLY:-}"
threads="${THREADS:-2}"
iterations="${ITERATIONS:-20}"
steps="${STEPS:-3}"
model_timeout="${MODEL_TIMEOUT:-900}"
[ -n "${NO_BUILD:-}" ] || bench_build neuron-compile neuron-load neuron-exec
bench_packages python3-torch python3-torchvision time  # time: /usr/bin/time for peak RSS
export NEURON_RT_LOG_LEVEL=ERROR OMP_NUM_THREADS="$threads" NEURON_RT_EXEC_TIMEOUT="$model_timeout"

# compile NAME NEFF: the public module NAME compiled as a user would; false
# (with a notice) when it is absent or does not compile.
compile() {
  local hlo="$shared/hlo/$1.hlo"
  if [ ! -f "$hlo" ]; then
    echo "NOTICE: $hlo is absent; skipped" >&2
    return 1
  fi
  timeout 600 "$OUT/neuron-compile" compile "$hlo" --framework XLA --target trn1 -o "$2" -q \
    --fill-elided-constants zeros --logfile "" >/dev/null 2>"$SCRATCH/compile.err" && return 0
  echo "NOTICE: $1 does not compile: $(tail -1 "$SCRATCH/compile.err")" >&2
  return 1
}

# ours NEFF N W: neuron-exec's median latency (s) over N timed executions
# after W warm-ups; empty on failure (the error on stderr). Its peak RSS
# (KiB, load and input drawing included) goes to $SCRATCH/ours.rss.
ours() {
  if timeout -k 30 "$model_timeout" /usr/bin/time -f %M -o "$SCRATCH/ours.rss" \
    "$OUT/neuron-exec" "$1" --random-inputs --seed 1 -q -n "$2" -w "$3" \
    --json >"$SCRATCH/exec.json" 2>"$SCRATCH/exec.err"; then
    json_field "$SCRATCH/exec.json" 'd["benchmark"]["latency_us"]["p50"] / 1e6'
  else
    echo "  neuron-exec failed: $(tail -1 "$SCRATCH/exec.err")" >&2
  fi
}

# peer LIMIT FIELD SCRIPT ARGS...: the PyTorch peer bench/peers/SCRIPT on
# the benchmark's threads; prints FIELD of its JSON line, or nothing on
# failure (the error on stderr). Its peak RSS goes to $SCRATCH/peer.rss.
peer() {
  local limit="$1" field="$2" script="$3"
  shift 3
  if timeout -k 30 "$limit" /usr/bin/time -f %M -o "$SCRATCH/peer.rss" \
    /usr/bin/python3 "$ROOT/bench/peers/$script" "$@" --threads "$threads" \
    >"$SCRATCH/torch.json" 2>"$SCRATCH/torch.err"; then
    json_field "$SCRATCH/torch.json" "d[\"$field\"]"
  else
    echo "  PyTorch failed: $(tail -1 "$SCRATCH/torch.err")" >&2
  fi
}

cell() { [ -n "$1" ] && awk -v x="$1" 'BEGIN { printf "%.4g", x }' || echo -; }
# rss FILE: the peak RSS /usr/bin/time wrote there, in MiB, or "-".
rss() { [ -s "$1" ] && awk 'END { printf "%.0f", $1 / 1024 }' "$1" || echo -; }
quotient() { [ -n "$1" ] && [ -n "$2" ] && ratio "$1" "$2" || echo -; }
rows="$SCRATCH/rows"
: >"$rows"
torch_v="$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo '?')"

if [ -z "$only" ] || [ "$only" = a ]; then
  if compile xla__backends_cpu_benchmarks_hlo_resnet50_keras_jax_f32 "$SCRATCH/resnet50.neff"; then
    echo "resnet50 batch 1: neuron-exec, $iterations executions ..." >&2
    o=$(ours "$SCRATCH/resnet50.neff" "$iterations" 3)
    echo "resnet50 batch 1: PyTorch, $iterations calls ..." >&2
    p=$(peer "$model_timeout" p50_seconds resnet50_infer.py --iterations "$iterations")
    echo "| resnet50 inference, batch 1 | $(cell "$o") | PyTorch $(cell "$p") | $(quotient "$o" "$p") ours/PyTorch | $(rss "$SCRATCH/ours.rss") | $(rss "$SCRATCH/peer.rss") | <= 1.0 |" >>"$rows"
  fi
fi

if [ -z "$only" ] || [ "$only" = b ]; then
  if compile xla__tools_data_benchmarking_mobilenet_v2 "$SCRATCH/mobilenet.neff"; then
    echo "mobilenet_v2 step batch 96: neuron-exec, 1 + $steps executions ..." >&2
    o=$(ours "$SCRATCH/mobilenet.neff" "$steps" 1)
    echo "mobilenet_v2 step batch 96: PyTorch NCHW, 1 + $steps steps ..." >&2
    p=$(peer "$((model_timeout * (steps + 1)))" step_seconds mobilenet_v2_step.py --steps "$steps")
    layout=NCHW
    cp "$SCRATCH/peer.rss" "$SCRATCH/peer_nchw.rss" 2>/dev/null
    echo "mobilenet_v2 step batch 96: PyTorch channels-last, 1 + $steps steps ..." >&2
    p_cl=$(peer "$((model_timeout * (steps + 1)))" step_seconds mobilenet_v2_step.py --steps "$steps" --channels-last)
    if [ -n "$p_cl" ] && { [ -z "$p" ] || awk -v a="$p_cl" -v b="$p" 'BEGIN { exit !(a < b) }'; }; then
      p=$p_cl layout=channels-last
    else
      cp "$SCRATCH/peer_nchw.rss" "$SCRATCH/peer.rss" 2>/dev/null
    fi
    echo "| mobilenet_v2 training step, batch 96 | $(cell "$o") | PyTorch $layout $(cell "$p") | $(quotient "$o" "$p") ours/PyTorch | $(rss "$SCRATCH/ours.rss") | $(rss "$SCRATCH/peer.rss") | <= 1.0 |" >>"$rows"
  fi
fi

if [ -z "$only" ] || [ "$only" = c ]; then
  if compile xla__backends_cpu_benchmarks_hlo_gemma3_1b_flax_call "$SCRATCH/gemma.neff"; then
    inputs=$(timeout 600 "$OUT/neuron-load" "$SCRATCH/gemma.neff" --json -q 2>/dev/null |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["plan"]["inputs"])' 2>/dev/null)
    gcc -O2 -o "$SCRATCH/stream_copy" "$ROOT/bench/peers/stream_copy.c" -pthread
    gbs=$("$SCRATCH/stream_copy" "$threads" 10 512)
    echo "gemma3 1B call: neuron-exec, $iterations executions (inputs ${inputs:-?} bytes, STREAM copy $gbs GB/s) ..." >&2
    o=$(ours "$SCRATCH/gemma.neff" "$iterations" 2)
    bound=""
    [ -z "$inputs" ] || [ -z "$gbs" ] || bound=$(awk -v b="$inputs" -v g="$gbs" 'BEGIN { print b / (g * 1e9) }')
    echo "| gemma3 1B call (weights $(awk -v b="${inputs:-0}" 'BEGIN { printf "%.0f", b / 1048576 }') MiB) | $(cell "$o") | STREAM copy bound $(cell "$bound") | $(quotient "$bound" "$o") bound/ours | $(rss "$SCRATCH/ours.rss") | - | >= 0.6 |" >>"$rows"
  fi
fi

echo "Whole models on $threads threads, seconds per call (medians; PyTorch $torch_v on the same threads)"
echo
echo "| work | ours s | peer s | ratio | ours peak RSS MiB | peer peak RSS MiB | goal |"
echo "|---|---:|---:|---:|---:|---:|---:|"
cat "$rows"
