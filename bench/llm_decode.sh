#!/usr/bin/env bash
# LLM decoding against its physical bound: one generated token reads every
# weight once, so a decode step takes at least its weights' bytes divided by
# the memory's read rate. For each step below, in one run on THREADS
# threads:
#   ours    neuron-exec's median latency (-n ITERATIONS after 2 warm-ups,
#           --random-inputs),
#   bound   the weights' bytes / the rate a plain AVX2 loop reads 1 GiB at,
#           each thread's part as 1, 4, 8 or 16 interleaved streams, the
#           fastest (bench/peers/read_bound.c, best of 10, same threads),
#   PyTorch bench/peers/decode_step.py: the same layers with
#           torch.nn.functional.linear on a row and with torch.mv on the
#           vector, the faster of the two, where PyTorch has the type.
# It prints the fraction of the bound ours reaches (bound/ours; 1.0 is the
# memory's speed) and ours/PyTorch (below 1.0: faster than PyTorch).
#
# Steps: LAYERS layers of x += W2 . tanh(W1 . x), K=2048, F=8192, one token,
# weights [out, in] as PyTorch stores them, in bf16, f16, f32 and weight-only
# fp8 (f8e4m3fn weights converted to bf16 before each product), bf16 also
# [in, out] as JAX stores them (one row, and 11 rows as in a short prompt
# or a small batch); and the public gemma3 1B call (bf16, 11
# tokens) where ../shared/hlo has it (no PyTorch peer: its weights are the
# module's).
#
# Usage: bench/llm_decode.sh
# Environment: THREADS (2), ITERATIONS (20), LAYERS (8), K (2048), F (8192),
#   SHARED (../shared), NO_BUILD=1 (use the build as it is).
set -uo pipefail
source "$(dirname "$0")/bench_common.sh"

[ $# = 0 ] || { echo "usage: bench/llm_decode.sh (settings in the environment: see the header)" >&2; exit 2; }
threads="${THREADS:-2}"
iterations="${ITERATIONS:-20}"
layers="${LAYERS:-8}"
k="${K:-2048}"
f="${F:-8192}"
shared="${SHARED:-$ROOT/../shared}"
[ -n "${NO_BUILD:-}" ] || bench_build neuron-compile neuron-load neuron-exec
export OMP_NUM_THREADS="$threads" NEURON_RT_NUM_THREADS="$threads"

gcc -O2 -mavx2 -o "$SCRATCH/read_bound" "$ROOT/bench/peers/read_bound.c" -pthread || exit 1
gbs=$("$SCRATCH/read_bound" "$threads" 10 1024)
echo "read bound: $gbs GB/s on $threads threads" >&2

have_torch=1
/usr/bin/python3 -c 'import torch' 2>/dev/null || have_torch=0
[ "$have_torch" = 1 ] || echo "NOTICE: /usr/bin/python3 has no torch (Debian python3-torch): no PyTorch column" >&2
torch_v=$([ "$have_torch" = 1 ] && /usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)

# ours NEFF: neuron-exec's median latency in seconds, or empty.
ours() {
  "$OUT/neuron-exec" "$1" --random-inputs -q -n "$iterations" -w 2 --json 2>"$SCRATCH/exec.err" |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["benchmark"]["latency_us"]["p50"] / 1e6)' 2>/dev/null ||
    echo "  neuron-exec failed: $(tail -1 "$SCRATCH/exec.err")" >&2
}

# weights NEFF: the bytes of the model's inputs (its weights, and the token).
weights() {
  "$OUT/neuron-load" "$1" --json -q 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["plan"]["inputs"])' 2>/dev/null
}

# row LABEL NEFF TORCH_TYPE: one line of the table.
row() {
  local label="$1" neff="$2" ttype="$3" bytes o bound p="" of_bound="-" vs="-"
  bytes=$(weights "$neff")
  echo "$label: neuron-exec, $iterations executions ..." >&2
  o=$(ours "$neff")
  bound=$(awk -v b="${bytes:-0}" -v g="$gbs" 'BEGIN { printf "%.6f", b / (g * 1e9) }')
  if [ -n "$ttype" ] && [ "$have_torch" = 1 ]; then
    echo "$label: PyTorch ..." >&2
    p=$(/usr/bin/python3 "$ROOT/bench/peers/decode_step.py" "$ttype" "$layers" "$k" "$f" "$threads" "$iterations" 2 2>/dev/null)
  fi
  [ -z "$o" ] || of_bound=$(ratio "$bound" "$o")
  [ -z "$o" ] || [ -z "$p" ] || [ "$p" = - ] || vs=$(ratio "$o" "$p")
  printf '| %s | %.0f | %.2f | %s | %s | %s | %s |\n' "$label" "$(awk -v b="${bytes:-0}" 'BEGIN { print b / 1e6 }')" \
    "$(awk -v s="$bound" 'BEGIN { print s * 1e3 }')" \
    "$([ -n "$o" ] && awk -v s="$o" 'BEGIN { printf "%.2f", s * 1e3 }' || echo failed)" "$of_bound" \
    "$([ -n "$p" ] && [ "$p" != - ] && awk -v s="$p" 'BEGIN { printf "%.2f", s * 1e3 }' || echo -)" "$vs" >>"$SCRATCH/rows"
}

: >"$SCRATCH/rows"
for spec in "bf16 out-in bf16" "bf16 in-out -" "bf16 in-out - 11" "f16 out-in f16" "f8 out-in -" "f32 out-in f32"; do
  set -- $spec
  rows="${4:-1}"
  python3 "$ROOT/bench/gen_decode_step.py" --type "$1" --layout "$2" --layers "$layers" --k "$k" --f "$f" \
    --rows "$rows" >"$SCRATCH/step.hlo"
  if ! "$OUT/neuron-compile" compile "$SCRATCH/step.hlo" --target trn1 -o "$SCRATCH/step.neff" -q 2>"$SCRATCH/compile.err"; then
    echo "NOTICE: the $1 $2 step does not compile: $(tail -1 "$SCRATCH/compile.err")" >&2
    continue
  fi
  label="$layers layers, $1 [$2]"
  [ "$rows" = 1 ] || label="$label, $rows rows"
  [ "$1" = f8 ] && label="$layers layers, f8e4m3fn weights to bf16 [$2]"
  row "$label" "$SCRATCH/step.neff" "$([ "$3" = - ] || echo "$3")"
done
gemma="$shared/hlo/xla__backends_cpu_benchmarks_hlo_gemma3_1b_flax_call.hlo"
if [ -f "$gemma" ] && "$OUT/neuron-compile" compile "$gemma" --target trn1 -o "$SCRATCH/gemma.neff" -q \
     --fill-elided-constants zeros 2>"$SCRATCH/compile.err"; then
  row "gemma3 1B call (bf16, 11 tokens)" "$SCRATCH/gemma.neff" ""
else
  echo "NOTICE: gemma3 1B (../shared/hlo) is absent or does not compile: not measured" >&2
fi

echo "One decode step on $threads threads (K=$k, F=$f; read bound $gbs GB/s; medians of $iterations${torch_v:+; PyTorch $torch_v})"
echo
echo "| step | weights MB | bound ms | ours ms | bound/ours | PyTorch ms | ours/PyTorch |"
echo "|---|---:|---:|---:|---:|---:|---:|"
cat "$SCRATCH/rows"
