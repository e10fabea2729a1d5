#!/usr/bin/env bash
# The tools on a runtime that is not the project's: a stand-in libnrt.so.1
# (tests/standin: only SDK functions, each forwarded to the project's
# library and counted) found through LD_LIBRARY_PATH, as the SDK's
# /opt/aws/neuron/lib would be. neuron-exec's results are byte-identical to
# the plain run's, the stand-in saw the loads and executions, --version
# names it, and each tool says in one line what it cannot show without the
# project's extras. Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/foreign_runtime.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests

for f in neuron-exec neuron-load neuron-compile libnrt.so.1 libnrt_standin.so.1; do
  [ -e "$BUILD_DIR/$f" ] || { fail "$BUILD_DIR/$f is not built"; echo "check: $passed passed, $failed failed"; exit 1; }
done
# The stand-in under the name the tools look for; the real library under
# another name, where only the stand-in opens it.
mkdir -p "$work/foreign" "$work/real"
cp "$BUILD_DIR/libnrt_standin.so.1" "$work/foreign/libnrt.so.1"
cp "$BUILD_DIR/libnrt.so.1" "$work/real/libnrt-real.so"
foreign() {
  LD_LIBRARY_PATH="$work/foreign" NRT_STANDIN_REAL="$work/real/libnrt-real.so" \
    NRT_STANDIN_COUNTS="$work/counts" "$@"
}
calls() { awk -v f="$1" '$1 == f { n += $2 } END { print n + 0 }' "$work/counts" 2>/dev/null; }

# The stand-in exports every function the SDK's headers declare (126, from
# include/nrt: tests/standin/gen_forwarders.py) and nothing of ours.
declared="$(cd "$ROOT" && python3 -c '
import sys; sys.path.insert(0, "tests/standin")
import gen_forwarders; print("\n".join(sorted(n for n, _, _ in gen_forwarders.declarations())))')"
exported="$(nm -D --defined-only "$work/foreign/libnrt.so.1" | awk '$2 == "T" { print $3 }' | sort)"
if [ -n "$declared" ] && [ "$declared" = "$exported" ]; then
  pass "the stand-in exports the SDK's $(echo "$declared" | wc -l) functions and no others"
else
  fail "the stand-in's exports differ from the SDK's functions: $(diff <(echo "$declared") <(echo "$exported") | head -5 | tr '\n' ' ')"
fi

neff="$work/mlp.neff"
"$BUILD_DIR/neuron-compile" compile "$ROOT/examples/mlp.hlo" -o "$neff" -q || fail "cannot compile mlp.hlo"

# --version names the library the dynamic linker would find (without
# opening it); --json names the one actually loaded, with its version.
if foreign "$BUILD_DIR/neuron-exec" --version | grep -qxF "runtime: $work/foreign/libnrt.so.1 (opened when a model is loaded)"; then
  pass "neuron-exec --version names the stand-in"
else
  fail "neuron-exec --version: $(foreign "$BUILD_DIR/neuron-exec" --version 2>&1)"
fi
own="$(cd "$BUILD_DIR" && pwd)/libnrt.so.1"
if env -u LD_LIBRARY_PATH "$BUILD_DIR/neuron-load" --version | grep -qxF "runtime: $own (opened when a model is loaded)"; then
  pass "neuron-load --version names the project's library next to it by default"
else
  fail "neuron-load --version: $("$BUILD_DIR/neuron-load" --version 2>&1)"
fi
loaded="$(foreign "$BUILD_DIR/neuron-load" "$neff" --json -q 2>/dev/null |
          /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin)["runtime"]; print(r["library"], r["version"])')"
[ "$loaded" = "$work/foreign/libnrt.so.1 2.0" ] && pass "--json names the library loaded and its version" ||
  fail "--json runtime: $loaded"

# neuron-exec: the same results, through the stand-in.
"$BUILD_DIR/neuron-exec" "$neff" --random-inputs -n 5 -q --output-dir "$work/plain" >/dev/null 2>"$work/plain.err" ||
  fail "plain neuron-exec failed: $(cat "$work/plain.err")"
rm -f "$work/counts"
if foreign "$BUILD_DIR/neuron-exec" "$neff" --random-inputs -n 5 -q --output-dir "$work/foreign_out" \
     >"$work/out" 2>"$work/err"; then
  pass "neuron-exec --random-inputs -n 5 runs through the stand-in"
else
  fail "neuron-exec through the stand-in: $(cat "$work/err")"
fi
if cmp -s "$work/plain/out0.npy" "$work/foreign_out/out0.npy" &&
   cmp -s "$work/plain/outputs.json" "$work/foreign_out/outputs.json"; then
  pass "results byte-identical to the plain run"
else
  fail "results differ from the plain run"
fi
[ "$(calls nrt_load)" -ge 1 ] && pass "the stand-in saw the load" || fail "the stand-in saw no nrt_load: $(cat "$work/counts" 2>/dev/null)"
# 1 warmup + 5 timed executions.
[ "$(calls nrt_execute)" -eq 6 ] && pass "the stand-in saw the 6 executions" ||
  fail "the stand-in saw $(calls nrt_execute) nrt_execute calls, not 6"
[ "$(calls nrt_tensor_write)" -ge 1 ] && [ "$(calls nrt_tensor_read)" -ge 1 ] &&
  pass "inputs and outputs went through nrt_tensor_write/read" || fail "no tensor writes or reads seen"
if [ "$(grep -c "not available with this runtime ($work/foreign/libnrt.so.1)" "$work/err")" = 1 ] &&
   [ "$(wc -l <"$work/err")" = 1 ]; then
  pass "neuron-exec says in one line what it cannot show"
else
  fail "neuron-exec's stderr: $(cat "$work/err")"
fi

# The printed results too (the latency line aside, which no two runs share).
"$BUILD_DIR/neuron-exec" "$neff" --random-inputs --seed 7 -p -q >"$work/plain.txt" 2>/dev/null
foreign "$BUILD_DIR/neuron-exec" "$neff" --random-inputs --seed 7 -p -q >"$work/foreign.txt" 2>/dev/null
cmp -s "$work/plain.txt" "$work/foreign.txt" && pass "--print output byte-identical" ||
  fail "--print differs: $(diff "$work/plain.txt" "$work/foreign.txt" | head -5)"

# neuron-load: loads through it, reports what the SDK's functions tell.
rm -f "$work/counts"
if foreign "$BUILD_DIR/neuron-load" "$neff" -q >"$work/out" 2>"$work/err"; then
  pass "neuron-load runs through the stand-in"
else
  fail "neuron-load through the stand-in: $(cat "$work/err")"
fi
[ "$(calls nrt_load)" = 1 ] && [ "$(calls nrt_unload)" = 1 ] && pass "the stand-in saw the load and unload" ||
  fail "neuron-load's calls: $(cat "$work/counts" 2>/dev/null)"
grep -q "4 inputs, 1 outputs" "$work/out" && grep -q "^nc0: loaded in " "$work/out" &&
  pass "neuron-load reports the model's tensors and load time" || fail "neuron-load's report: $(cat "$work/out")"
if [ "$(wc -l <"$work/err")" = 1 ] &&
   grep -q "^neuron-load: memory plan.*not available with this runtime ($work/foreign/libnrt.so.1)$\|^neuron-load: .*not available with this runtime ($work/foreign/libnrt.so.1)$" "$work/err"; then
  pass "neuron-load says in one line what it cannot show"
else
  fail "neuron-load's stderr: $(cat "$work/err")"
fi
# The same counts of inputs and outputs as the plain run.
plain_json="$("$BUILD_DIR/neuron-load" "$neff" --json -q 2>/dev/null)"
foreign_json="$(foreign "$BUILD_DIR/neuron-load" "$neff" --json -q 2>/dev/null)"
pick() { /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["inputs"], d["outputs"], [c["core"] for c in d["cores"]])'; }
[ "$(pick <<<"$plain_json")" = "$(pick <<<"$foreign_json")" ] && pass "neuron-load --json: same tensors and cores" ||
  fail "neuron-load --json differs: $(pick <<<"$foreign_json") vs $(pick <<<"$plain_json")"

# A library that is not a Neuron runtime: one clear line.
mkdir -p "$work/bogus"
cp "$(ldconfig -p | awk '/libz.so.1 / { print $NF; exit }')" "$work/bogus/libnrt.so.1" 2>/dev/null
if [ -s "$work/bogus/libnrt.so.1" ]; then
  LD_LIBRARY_PATH="$work/bogus" "$BUILD_DIR/neuron-load" "$neff" >/dev/null 2>"$work/err"
  rc=$?
  [ "$rc" = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q "has no nrt_init" "$work/err" &&
    pass "a library without the SDK's functions is one error line" || fail "bogus library (rc $rc): $(cat "$work/err")"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
