#!/usr/bin/env bash
# Weights in bundles: neuron-exec -i FILE.npz / -i FILE.safetensors binds
# every array to an input by name, #k or pytree path; --outputs writes the
# results as one bundle. Bundles are written by numpy (np.savez with
# flax-style '/' keys, np.savez_compressed, safetensors by hand:
# tests/checks/lib/bundle_tool.py). Each run from a bundle must give
# results byte-identical to the same values given one --input NAME=FILE.npy
# at a time; each mistake and each hostile bundle one error line and exit
# status 1. With ../shared/hlo: gemma3 1B's decode call from one .npz and
# one safetensors file (all 367 inputs), and the peak RSS of a run from
# its 1.9 GiB bundle within the memory plan's rule (plan x 1.1 + 256 MiB).
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
TOOL="$ROOT/tests/checks/lib/bundle_tool.py"
work="$(mktemp -d "${TMPDIR:-/tmp}/bundles.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
export NEURON_COMPILE_CACHE_URL="$work/cache"
exec_tool="$BUILD_DIR/neuron-exec"
# numpy writes the bundles.
source "$(dirname "$0")/lib/numpy_python.sh" "bundle checks"

# A small model whose parameters carry JAX's pytree paths.
cat >"$work/dense.hlo" <<'HLO'
HloModule dense

ENTRY %main (Arg_0.1: f32[2,3], Arg_1.2: bf16[3], Arg_2.3: f32[2,3], Arg_3.4: s32[2]) -> (f32[2,3], s32[2]) {
  %Arg_0.1 = f32[2,3]{1,0} parameter(0), metadata={op_name="args[0][\'params\'][\'dense\'][\'kernel\']"}
  %Arg_1.2 = bf16[3]{0} parameter(1), metadata={op_name="args[0][\'params\'][\'dense\'][\'bias\']"}
  %Arg_2.3 = f32[2,3]{1,0} parameter(2), metadata={op_name="inputs[\'x\']"}
  %Arg_3.4 = s32[2]{0} parameter(3), metadata={op_name="state[1][\'kernel\']"}
  %mul = f32[2,3]{1,0} multiply(%Arg_2.3, %Arg_0.1)
  %b = f32[3]{0} convert(%Arg_1.2)
  %bb = f32[2,3]{1,0} broadcast(%b), dimensions={1}
  %add = f32[2,3]{1,0} add(%mul, %bb)
  %one = s32[] constant(1)
  %ones = s32[2]{0} broadcast(%one), dimensions={}
  %inc = s32[2]{0} add(%Arg_3.4, %ones)
  ROOT %t = (f32[2,3]{1,0}, s32[2]{0}) tuple(%add, %inc)
}
HLO

"$PY" - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
kernel = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
bias = (np.array([0.5, -1.0, 2.0], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
x = np.full((2, 3), 1.5, dtype=np.float32)
state = np.array([3, 4], dtype=np.int32)
for name, a in [("kernel", kernel), ("bias", bias), ("x", x), ("state", state)]:
    np.save(f"{w}/{name}.npy", a)
np.savez(f"{w}/flax.npz", **{"params/dense/kernel": kernel, "params/dense/bias": bias, "x": x, "state/1/kernel": state})
np.savez_compressed(f"{w}/compressed.npz", **{"params.dense.kernel": kernel, "params.dense.bias": bias,
                                               "inputs['x']": x, "#3": state})
# bf16 as 2-byte void, keyed by parameter name.
np.savez(f"{w}/void.npz", **{"Arg_0.1": kernel, "Arg_1.2": bias.view("V2"), "Arg_2.3": x, "Arg_3.4": state})
np.savez(f"{w}/weights_only.npz", **{"params/dense/kernel": kernel, "params/dense/bias": bias})
np.savez(f"{w}/ambiguous.npz", **{"kernel": kernel})
np.savez(f"{w}/nothing.npz", **{"params/dense/gamma": kernel})
np.savez(f"{w}/shape.npz", **{"params/dense/kernel": kernel.reshape(3, 2)})
np.savez(f"{w}/type.npz", **{"params/dense/kernel": kernel.astype(np.float64)})
np.savez(f"{w}/twice.npz", **{"params/dense/kernel": kernel, "Arg_0.1": kernel})
np.save(f"{w}/kernel2.npy", kernel * 2)
PY
"$PY" - "$work" "$TOOL" <<'PY'
import sys, numpy as np
sys.path.insert(0, sys.argv[2].rsplit("/", 1)[0])
import bundle_tool
w = sys.argv[1]
kernel = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
bias = (np.array([0.5, -1.0, 2.0], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
x = np.full((2, 3), 1.5, dtype=np.float32)
state = np.array([3, 4], dtype=np.int32)
bundle_tool.write_safetensors(f"{w}/flax.safetensors",
    {"params.dense.kernel": kernel, "params.dense.bias": bias, "x": x, "state[1]['kernel']": state},
    {"params.dense.kernel": "F32", "params.dense.bias": "BF16", "x": "F32", "state[1]['kernel']": "I32"})
bundle_tool.hostile(w)
PY
[ -f "$work/flax.npz" ] && [ -f "$work/bomb.npz" ] || { fail "numpy could not write the bundles"; echo "check: $passed passed, $failed failed"; exit 1; }

per_file=(-i Arg_0.1="$work/kernel.npy" -i Arg_1.2="$work/bias.npy" -i Arg_2.3="$work/x.npy" -i Arg_3.4="$work/state.npy")
"$exec_tool" "$work/dense.hlo" "${per_file[@]}" --outputs "$work/want.safetensors" -q >/dev/null 2>"$work/err" ||
  fail "dense: per-file run failed: $(head -1 "$work/err")"

# Each way of binding gives the same bytes.
same() {  # NAME ARGS...: the run's --outputs equal the per-file run's
  local name="$1"; shift
  rm -f "$work/got.safetensors"
  if ! "$exec_tool" "$work/dense.hlo" "$@" --outputs "$work/got.safetensors" -q >/dev/null 2>"$work/err"; then
    fail "$name: exited non-zero: $(head -1 "$work/err")"
  elif cmp -s "$work/want.safetensors" "$work/got.safetensors"; then
    pass "$name: outputs byte-identical to the per-file run"
  else
    fail "$name: outputs differ from the per-file run"
  fi
}
same "npz with flax '/' keys" -i "$work/flax.npz"
same "compressed npz with '.' keys, subscripts and #k" -i "$work/compressed.npz"
same "npz keyed by name, bf16 as void" -i "$work/void.npz"
same "safetensors" -i "$work/flax.safetensors"
same "weights bundle plus per-name inputs" -i "$work/weights_only.npz" -i Arg_2.3="$work/x.npy" -i Arg_3.4="$work/state.npy"
same "bundle from stdin" -i - <"$work/flax.safetensors"

# A later --input NAME=... overrides one array of the bundle.
"$exec_tool" "$work/dense.hlo" -i "$work/flax.npz" -i Arg_0.1="$work/kernel2.npy" --outputs "$work/over.safetensors" -q \
  >/dev/null 2>"$work/err"
if [ $? = 0 ] && ! cmp -s "$work/want.safetensors" "$work/over.safetensors"; then
  pass "--input NAME=FILE overrides the bundle's array"
else
  fail "--input NAME=FILE does not override the bundle's array: $(head -1 "$work/err")"
fi

# The outputs bundle reads back with numpy and with our own reader.
"$exec_tool" "$work/dense.hlo" -i "$work/flax.npz" --outputs "$work/out.npz" -q >/dev/null 2>&1
if "$PY" -c "
import numpy as np, sys
z = np.load('$work/out.npz')
assert sorted(z.files) == ['out0', 'out1'], z.files
assert z['out1'].tolist() == [4, 5], z['out1']
assert np.allclose(z['out0'], np.full((2, 3), 1.5) * np.arange(6).reshape(2, 3) / 4 + [0.5, -1.0, 2.0])
" 2>"$work/err"; then
  pass "--outputs FILE.npz: numpy reads out0, out1 with the results"
else
  fail "--outputs FILE.npz: $(tail -1 "$work/err")"
fi
# A step that donates its state: that output is keyed by the state's path,
# so the bundle binds back as the next step's state.
sed 's/^HloModule dense$/HloModule dense, input_output_alias={ {1}: (3, {}, may-alias) }/' "$work/dense.hlo" >"$work/step.hlo"
"$exec_tool" "$work/step.hlo" -i "$work/flax.npz" --outputs "$work/step1.npz" -q >/dev/null 2>"$work/err" &&
  "$PY" -c "
import numpy as np
z = np.load('$work/step1.npz')
np.savez('$work/state2.npz', **{k: z[k] for k in z.files if k != 'out0'})
" 2>>"$work/err" &&
  "$exec_tool" "$work/step.hlo" -i "$work/weights_only.npz" -i Arg_2.3="$work/x.npy" -i "$work/state2.npz" \
    --outputs "$work/step2.npz" -q >/dev/null 2>>"$work/err"
if "$PY" -c "
import numpy as np
a, b = np.load('$work/step1.npz'), np.load('$work/step2.npz')
assert sorted(a.files) == ['out0', 'state/1/kernel'], a.files
assert a['state/1/kernel'].tolist() == [4, 5] and b['state/1/kernel'].tolist() == [5, 6], (a['state/1/kernel'], b['state/1/kernel'])
" 2>>"$work/err"; then
  pass "--outputs keys a donated input's result by its path, which binds back"
else
  fail "--outputs of a donating step: $(tail -1 "$work/err")"
fi
"$BUILD_DIR/neuron-dump" show "$work/out.npz" >"$work/show" 2>"$work/err"
if grep -q 'out0' "$work/show" && grep -q 'f32\[2,3\]' "$work/show"; then
  pass "neuron-dump show lists the outputs bundle"
else
  fail "neuron-dump show FILE.npz: $(cat "$work/show" "$work/err" | head -3)"
fi

# --list-inputs: number, name, path, shape and type.
"$exec_tool" "$work/dense.hlo" --list-inputs >"$work/list" 2>"$work/err"
if grep -q "^#1	Arg_1.2	args\[0\]\['params'\]\['dense'\]\['bias'\]	3xbf16$" "$work/list" &&
   grep -q "^#3	Arg_3.4	state\[1\]\['kernel'\]	2xs32$" "$work/list"; then
  pass "--list-inputs prints number, name, path, shape and type"
else
  fail "--list-inputs: $(head -2 "$work/list" "$work/err")"
fi
if "$exec_tool" "$work/dense.hlo" --list-inputs --json |
   "$PY" -c 'import json,sys; d=json.load(sys.stdin)["inputs"]; assert d[0]["keys"]==["args","0","params","dense","kernel"] and d[0]["dtype"]=="float32"' 2>/dev/null; then
  pass "--list-inputs --json"
else
  fail "--list-inputs --json does not carry the keys and dtype"
fi

# Each mistake: exit 1 and one error line that says what is wrong.
mistake() {  # NAME PATTERN ARGS...
  local name="$1" pattern="$2"; shift 2
  "$exec_tool" "$work/dense.hlo" "$@" -q >/dev/null 2>"$work/err"
  local rc=$?
  local lines; lines=$(grep -vc '^$' "$work/err")
  if [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -q -- "$pattern" "$work/err"; then
    pass "$name: exit 1, one line"
  else
    fail "$name: exit $rc, $lines lines: $(head -2 "$work/err")"
  fi
}
mistake "a key that binds nothing" "nothing.npz\[params/dense/gamma\]: the key binds no input" -i "$work/nothing.npz" --random-inputs
mistake "a key that ends two paths" "ambiguous.npz\[kernel\]: the key ends the paths of 2 inputs (#0 args\[0\]\['params'\]\['dense'\]\['kernel'\], #3 state\[1\]\['kernel'\]): give more of the path" -i "$work/ambiguous.npz" --random-inputs
mistake "a shape that differs" "shape.npz\[params/dense/kernel\]: is 3x2xf32 ('<f4'), but input #0 'Arg_0.1' args\[0\]\['params'\]\['dense'\]\['kernel'\] is 2x3xf32" -i "$work/shape.npz" --random-inputs
mistake "a type that differs" "type.npz\[params/dense/kernel\]: is 2x3xf64 ('<f8'), but input #0" -i "$work/type.npz" --random-inputs
mistake "two keys for one input" "is bound twice" -i "$work/twice.npz" --random-inputs
mistake "two bundles for one input" "is bound twice" -i "$work/flax.npz" -i "$work/flax.safetensors"
mistake "inputs left unbound" "2 inputs are not given: #2 'Arg_2.3' inputs\['x'\] 2x3xf32, #3 'Arg_3.4' state\[1\]\['kernel'\] 2xs32" -i "$work/weights_only.npz"
mistake "a single .npy as a bundle" "has no key" -i "$work/kernel.npy" --random-inputs
"$exec_tool" "$work/dense.hlo" -i "$work/absent.npz" -q >/dev/null 2>"$work/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "absent.npz" "$work/err"; then
  pass "a missing bundle: exit 2 (usage), naming it"
else
  fail "a missing bundle: exit $rc: $(head -2 "$work/err")"
fi

# Hostile bundles: one line naming the file and what is wrong, exit 1,
# nothing allocated that the file does not justify.
hostile() {  # FILE PATTERN
  mistake "hostile $1" "$1: .*$2" -i "$work/$1" --random-inputs
}
hostile past_end.safetensors "lie outside the 24 bytes of data"
hostile overlap.safetensors "overlap"
hostile huge_header.safetensors "header of 5368709120 bytes"
hostile header_past_end.safetensors "but the file has"
hostile size_disagrees.safetensors "hold 20 bytes, its shape (F32\[2,3\]) implies 24"
hostile deep.safetensors "nests too deep"
hostile not_json.safetensors "not valid JSON"
hostile bad_dtype.safetensors "unsupported dtype 'Q7'"
hostile huge_shape.safetensors "too large"
hostile truncated.safetensors "not a tensor file"
hostile size_disagrees.npz "member 'x.npy': holds 20 bytes of data"
hostile not_npy.npz "member 'x.txt' is not an .npy array"
hostile truncated.npz "not a readable .npz"
hostile huge_npy_header.npz "header of 4294967280 bytes"
# The bomb's member says 6 floats but holds 256 MiB more: refused at open,
# with no more than the header inflated.
/usr/bin/time -f '%M' -o "$work/rss" "$exec_tool" "$work/dense.hlo" -i "$work/bomb.npz" --random-inputs -q >/dev/null 2>"$work/err"
rc=$?
if [ "$rc" = 1 ] && grep -q "bomb.npz: member 'x.npy': holds 268435480 bytes of data" "$work/err" &&
   [ "$(tail -1 "$work/rss")" -lt $((200 * 1024)) ]; then
  pass "zip bomb: exit 1, one line, peak RSS $(( $(tail -1 "$work/rss") >> 10 )) MiB"
else
  fail "zip bomb: exit $rc, RSS $(tail -1 "$work/rss") KiB: $(head -1 "$work/err")"
fi

# gemma3 1B's decode call: all 367 inputs from one bundle.
HLO="${SHARED_DIR:-$ROOT/../shared}/hlo"
gemma="$HLO/xla__backends_cpu_benchmarks_hlo_gemma3_1b_flax_call.hlo"
if [ ! -f "$gemma" ]; then
  echo "NOTICE: gemma3 1B bundle checks skipped: $gemma is absent"
  echo "check: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
fi
neff="$work/gemma.neff"
if ! "$BUILD_DIR/neuron-compile" compile "$gemma" --target trn1 -o "$neff" -q --fill-elided-constants zeros 2>"$work/err"; then
  fail "gemma3 1B does not compile: $(head -1 "$work/err")"
  echo "check: $passed passed, $failed failed"
  exit 1
fi
mkdir -p "$work/g"
"$exec_tool" "$neff" --list-inputs --json >"$work/g/list.json" 2>"$work/err" &&
  "$PY" "$TOOL" inputs "$work/g/list.json" "$work/g" 2>>"$work/err"
count="$("$PY" -c "import numpy as np; print(len(np.load('$work/g/w.npz').files))" 2>/dev/null)"
if [ "$count" = 367 ]; then
  pass "gemma3 1B: numpy wrote 367 arrays with flax-style keys"
else
  fail "gemma3 1B: the bundle holds '$count' arrays: $(head -1 "$work/err")"
fi
mapfile -t args <"$work/g/args.txt"
"$exec_tool" "$neff" "${args[@]}" --outputs "$work/g/want.safetensors" -q >/dev/null 2>"$work/err" ||
  fail "gemma3 1B: the per-file run failed: $(head -1 "$work/err")"
total="$("$BUILD_DIR/neuron-load" "$neff" --json -q 2>/dev/null |
  "$PY" -c 'import json,sys; p = json.load(sys.stdin)["plan"]; print(p["total"] + p["workspace"])' 2>/dev/null)"
limit_kib=$(( (${total:-0} * 11 / 10 + (256 << 20)) / 1024 ))
for bundle in w.npz w.safetensors; do
  rm -f "$work/g/got.safetensors"
  /usr/bin/time -f '%M' -o "$work/rss" "$exec_tool" "$neff" -i "$work/g/$bundle" \
    --outputs "$work/g/got.safetensors" -q >/dev/null 2>"$work/err"
  rc=$?
  rss_kib="$(tail -1 "$work/rss")"
  if [ "$rc" != 0 ]; then
    fail "gemma3 1B from $bundle: exit $rc: $(grep -v WARN "$work/err" | head -1)"
    continue
  fi
  if cmp -s "$work/g/want.safetensors" "$work/g/got.safetensors"; then
    pass "gemma3 1B from $bundle: outputs byte-identical to 367 --input NAME=FILE.npy"
  else
    fail "gemma3 1B from $bundle: outputs differ from the per-file run"
  fi
  if [ "$rss_kib" -le "$limit_kib" ]; then
    pass "gemma3 1B from $bundle ($(( $(stat -c %s "$work/g/$bundle") >> 20 )) MiB): peak RSS $((rss_kib >> 10)) MiB <= plan $((total >> 20)) MiB x 1.1 + 256 MiB"
  else
    fail "gemma3 1B from $bundle: peak RSS $((rss_kib >> 10)) MiB > plan $((total >> 20)) MiB x 1.1 + 256 MiB"
  fi
done
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
