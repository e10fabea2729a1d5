#!/usr/bin/env bash
# The libnrt stress client (tests/stress/nrt_stress): threads calling the C
# API at random, valid and invalid calls, checked against their own
# results, shadows and statuses, across init/close cycles. By default 20 s
# with $BUILD_DIR's build (scripts/test; under --sanitize=thread that is
# the ThreadSanitizer build). --long SECONDS runs it that long plain, then
# under ASan+UBSan (out.asan) and under TSan (out.tsan), where those are
# built (scripts/build --sanitize, --sanitize=thread). STRESS_SEED replays
# a seed (printed with each run); STRESS_THREADS sets the threads (4).
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

seconds=20 long=0
if [ "${1:-}" = "--long" ]; then
  long=1 seconds="${2:-60}"
fi
seed="${STRESS_SEED:-$(date +%s)}"
threads="${STRESS_THREADS:-4}"

# The device tree's counters are rewritten at each execution: on tmpfs
# that costs a blink, on ext4 most of the run.
base="${TMPDIR:-/dev/shm}"
[ -w "$base" ] || base=/tmp
work="$(mktemp -d "$base/stress.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_RT_LOG_LEVEL=QUIET  # the invalid calls would log each
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/tests/stress/tsan.supp}"

# run_stress LABEL BINARY: one run of `seconds` with a device tree of its own.
run_stress() {
  local label="$1" bin="$2" log="$work/$1.log"
  rm -rf "$work/sim" && mkdir -p "$work/sim"
  if NEURON_SIM_ROOT="$work/sim" "$bin" --seconds "$seconds" --seed "$seed" --threads "$threads" \
       >"$log" 2>&1 && ! grep -q "WARNING: ThreadSanitizer\|ERROR: AddressSanitizer\|runtime error:" "$log"; then
    pass "$label: $(grep '^nrt_stress:' "$log" | head -1)"
  else
    fail "$label (replay: STRESS_SEED=$seed): $(grep -m3 'FAIL\|Sanitizer\|runtime error' "$log" | tr '\n' ' ')$(tail -1 "$log")"
    cp "$log" "${TMPDIR:-/tmp}/stress-$label-$seed.log" 2>/dev/null &&
      echo "NOTICE: stress log kept in ${TMPDIR:-/tmp}/stress-$label-$seed.log"
  fi
}

if [ ! -x "$BUILD_DIR/nrt_stress" ]; then
  fail "$BUILD_DIR/nrt_stress is not built"
else
  run_stress "$(basename "$BUILD_DIR")" "$BUILD_DIR/nrt_stress"
fi
if [ "$long" = 1 ]; then
  for tree in out.asan out.tsan; do
    if [ "$ROOT/$tree" = "$BUILD_DIR" ]; then continue; fi
    if [ -x "$ROOT/$tree/nrt_stress" ]; then
      run_stress "$tree" "$ROOT/$tree/nrt_stress"
    else
      echo "NOTICE: $tree/nrt_stress not built; build it with scripts/build --sanitize$([ $tree = out.tsan ] && echo =thread)"
    fi
  done
fi
echo "check: $passed passed, $failed failed"
