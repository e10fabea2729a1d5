#!/usr/bin/env bash
# A writer killed with SIGKILL leaves nothing behind: neuron-exec writing 4
# outputs of 16 MiB into --output-dir is killed at a random moment of its
# run, 50 times into the same directory (new files and files replaced).
# After each kill the directory holds only complete outputs: out0..out3.npy
# that numpy loads with the expected values, outputs.json if it parses, and
# no other file, visible or hidden (lib/support/atomic_file.h).
# ROUNDS overrides the 50. Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
source "$(dirname "$0")/lib/numpy_python.sh" "killed-write checks"
rounds="${ROUNDS:-50}"

work="$(mktemp -d "${TMPDIR:-/tmp}/killed-writes.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
finish() { echo "check: $passed passed, $failed failed"; exit $((failed > 0)); }

# Four results of 4 Mi float32 each, from one input whose values are known.
n=4194304
cat >"$work/four.hlo" <<HLO
HloModule four
ENTRY main {
  x = f32[$n] parameter(0)
  one = f32[] constant(1)
  ones = f32[$n] broadcast(one), dimensions={}
  a = f32[$n] add(x, ones)
  b = f32[$n] add(x, x)
  c = f32[$n] subtract(x, ones)
  d = f32[$n] negate(x)
  ROOT t = (f32[$n], f32[$n], f32[$n], f32[$n]) tuple(a, b, c, d)
}
HLO
"$BUILD_DIR/neuron-compile" compile "$work/four.hlo" -o "$work/four.neff" >"$work/log" 2>&1 ||
  { fail "compile: $(tail -1 "$work/log")"; finish; }
"$PY" -c "import numpy as np; np.save('$work/x.npy', np.arange($n, dtype=np.float32) / 1024)" ||
  { fail "numpy cannot write the input"; finish; }

out="$work/out"
mkdir -p "$out"
run=("$BUILD_DIR/neuron-exec" "$work/four.neff" -i "x=$work/x.npy" --output-dir "$out" -q)

# What may be in the directory after any kill: complete files only.
cat >"$work/verify.py" <<'PY'
import json, os, sys
import numpy as np
d, x = sys.argv[1], np.load(sys.argv[2])
want = {"out0.npy": x + 1, "out1.npy": x + x, "out2.npy": x - 1, "out3.npy": -x}
bad = []
for name in sorted(os.listdir(d)):
    path = os.path.join(d, name)
    if name in want:
        try:
            got = np.load(path)
            if got.dtype != np.float32 or not np.array_equal(got, want[name]):
                bad.append(f"{name}: wrong values")
        except Exception as e:
            bad.append(f"{name}: {e}")
    elif name == "outputs.json":
        try:
            json.load(open(path))
        except Exception as e:
            bad.append(f"{name}: {e}")
    else:
        bad.append(f"{name}: left behind ({os.path.getsize(path)} bytes)")
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY

# A run that writes nothing, then a whole run: the writes happen between
# the end of the first's time and the end of the second's.
ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(ms)
"${run[@]:0:4}" -q >/dev/null 2>&1
quiet_ms=$(($(ms) - start))
start=$(ms)
if "${run[@]}" >"$work/log" 2>&1 && "$PY" "$work/verify.py" "$out" "$work/x.npy" >"$work/verify" &&
   [ "$(ls "$out" | wc -l)" = 5 ]; then
  pass "a whole run writes 4 outputs and outputs.json"
else
  fail "a whole run: $(tail -1 "$work/log") $(cat "$work/verify")"
  finish
fi
whole_ms=$(($(ms) - start))
rm -f "$out"/*

# Kill moments spread from a little before the writes to a little past the
# end of a whole run (timings vary on a loaded machine); every other round
# starts from an empty directory, so both new and replaced files are cut
# short.
from_ms=$((quiet_ms * 4 / 5)) to_ms=$((whole_ms * 11 / 10))
((to_ms > from_ms)) || to_ms=$((from_ms + 100))
bad_rounds=0
for ((r = 1; r <= rounds; r++)); do
  ((r % 2)) && rm -f "$out"/*
  "${run[@]}" >/dev/null 2>&1 &
  pid=$!
  delay_ms=$((from_ms + RANDOM % (to_ms - from_ms)))
  sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if ! "$PY" "$work/verify.py" "$out" "$work/x.npy" >"$work/verify"; then
    bad_rounds=$((bad_rounds + 1))
    fail "round $r (killed at $delay_ms ms; writes from about $quiet_ms to $whole_ms): $(cat "$work/verify")"
    rm -rf "$out" && mkdir -p "$out"
  fi
done
((bad_rounds == 0)) && pass "$rounds kills during writes left only complete outputs"
finish
