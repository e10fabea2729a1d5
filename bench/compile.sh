#!/bin/sh
# Compiles a generated ~10,000-instruction module (a deep MLP/transformer-
# like stack, bench/gen_mlp_stack.py) at -O2 and prints the wall time and
# the per-pass times from neuron-compile's info log, then the wall time as
# a ratio of the goal (issue 16: under 0.3 s; ratio < 1 meets it).
# Usage: bench/compile.sh [BUILD_DIR] [INSTRUCTIONS]   (default out, 10000)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-out}
n=${2:-10000}
tool="$here/../$build/neuron-compile"
[ -x "$tool" ] || { echo "compile.sh: $tool not built (ninja -C $build neuron-compile)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_mlp_stack.py" "$n" > "$work/stack.hlo"
n_inst=$(grep -c " = " "$work/stack.hlo"); echo "module: $n_inst instructions"
# CPU time as well as wall time: on a shared 2-core machine the wall time
# includes waiting for the CPU.
start=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$work/cpu.txt" "$tool" compile "$work/stack.hlo" --framework XLA \
  --target trn1 -O2 --verbose info --output "$work/stack.neff" --logfile "" > "$work/log.txt"
end=$(date +%s.%N)
grep -E 'pass |buffer assignment|wrote NEFF|loaded' "$work/log.txt" | sed 's/^neuron-compile: info: /  /'
cpu=$(awk '{print $1 + $2}' "$work/cpu.txt")
goal=0.3
wall=$(awk "BEGIN { printf \"%.3f\", $end - $start }")
echo "total: $wall s wall, $cpu s CPU, NEFF $(wc -c < "$work/stack.neff") bytes"
echo "ratio to goal: $(awk "BEGIN { printf \"%.2f\", $wall / $goal }") (wall / $goal s; < 1 meets it)"
