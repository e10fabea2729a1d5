#!/usr/bin/env bash
# scripts/instance-check on the simulated device: every step passes on a
# good setup (each visible core runs the tiny model), and each kind of
# failure (a refused configuration, a missing tool, a core that fails or
# answers wrong) exits 1 with one line on stderr naming the step.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/instance-check-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
unset NEURON_RT_VISIBLE_CORES NEURON_SIM_INSTANCE_TYPE
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"  # the fake tools link to it from elsewhere
check="$ROOT/scripts/instance-check"

run() {  # run ARGS...: exit status in $rc, output in $work/out and $work/err
  "$check" --tools "$BUILD_DIR" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}
# expect_failure NAME PATTERN: exit 1, one stderr line matching PATTERN.
expect_failure() {
  if [ "$rc" != 1 ] || [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q "$2" "$work/err"; then
    fail "$1: exit $rc (expected 1 and one line matching '$2'): $(cat "$work/err")"
  else
    pass "$1"
  fi
}

run
if [ "$rc" != 0 ] || [ -s "$work/err" ]; then
  fail "a good setup: exit $rc: $(cat "$work/err")"
elif ! grep -q '^driver: *none: checking the simulated device (trn1.2xlarge)' "$work/out" ||
     ! grep -q '^devices: *1 on trn1.2xlarge; visible NeuronCores 0-1' "$work/out" ||
     ! grep -q '^runtime: ' "$work/out" ||
     ! grep -q '^cores: *2 of 2 ran the tiny model correctly' "$work/out" ||
     [ "$(tail -1 "$work/out")" != "instance-check: all steps passed" ]; then
  fail "a good setup: the report lacks a step: $(cat "$work/out")"
else
  pass "a good setup: driver, devices, runtime, both cores"
fi

NEURON_SIM_INSTANCE_TYPE=trn2.3xlarge run
if [ "$rc" != 0 ] || ! grep -q '^cores: *4 of 4 ran the tiny model correctly (0-3)' "$work/out"; then
  fail "trn2.3xlarge: exit $rc: $(cat "$work/out" "$work/err")"
else
  pass "trn2.3xlarge: the model compiled for trn2 runs on its four cores"
fi

NEURON_RT_VISIBLE_CORES=1 run
if [ "$rc" != 0 ] || ! grep -q '^cores: *1 of 1 ran the tiny model correctly (1)' "$work/out"; then
  fail "NEURON_RT_VISIBLE_CORES=1: exit $rc: $(cat "$work/out" "$work/err")"
else
  pass "NEURON_RT_VISIBLE_CORES=1: only core 1 is tried"
fi

NEURON_RT_VISIBLE_CORES=7 run
expect_failure "a core that does not exist" "^instance-check: error: devices: .*NEURON_RT_VISIBLE_CORES=7"

# Tools of our own that fail the way a broken runtime would.
fake="$work/tools"
mkdir -p "$fake"
ln -s "$BUILD_DIR/neuron-ls" "$fake/neuron-ls"
ln -s "$BUILD_DIR/neuron-compile" "$fake/neuron-compile"
cat >"$fake/neuron-exec" <<EOS
#!/usr/bin/env bash
[ "\$1" = --version ] && { "$BUILD_DIR/neuron-exec" --version; exit; }
[ "\$NEURON_RT_VISIBLE_CORES" = 1 ] && { echo "neuron-exec: error: core 1 is broken" >&2; exit 1; }
[ -n "\${WRONG:-}" ] && { echo "result[0]: 4xf32=[0 0 0 0]"; exit 0; }
exec "$BUILD_DIR/neuron-exec" "\$@"
EOS
chmod +x "$fake/neuron-exec"
"$check" --tools "$fake" >"$work/out" 2>"$work/err"
rc=$?
expect_failure "a core that fails" "^instance-check: error: core 1: the tiny model failed: .*core 1 is broken"
WRONG=1 "$check" --tools "$fake" >"$work/out" 2>"$work/err"
rc=$?
expect_failure "a core that answers wrong" "^instance-check: error: core 0: wrong result"

mkdir -p "$work/empty"
"$check" --tools "$work/empty" >"$work/out" 2>"$work/err"
rc=$?
expect_failure "a missing tool" "^instance-check: error: tools: '$work/empty/neuron-ls' is missing"

"$check" --help >"$work/out" 2>&1
rc=$?
if [ "$rc" != 0 ] || ! grep -q '^Usage: instance-check' "$work/out" || ! grep -q '^Exit status' "$work/out"; then
  fail "--help: exit $rc: $(head -3 "$work/out")"
else
  pass "--help"
fi
"$check" --frobnicate >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" != 2 ] || ! grep -q "unknown argument '--frobnicate'" "$work/err"; then
  fail "a wrong argument: exit $rc: $(cat "$work/err")"
else
  pass "a wrong argument: exit 2"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
