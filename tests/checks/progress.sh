#!/usr/bin/env bash
# Progress on long work: drawn on a terminal (a pty made by script(1)),
# erased when done; silent when stderr is not a terminal or with
# NEURON_TOOLS_PROGRESS=never; NEURON_TOOLS_PROGRESS=always writes plain
# lines into a log; --quiet silences it. Results on stdout are never mixed
# with it.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/progress.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
neff="$work/mlp.neff"
"$BUILD_DIR/neuron-compile" compile "$ROOT/examples/mlp.hlo" -o "$neff" 2>"$work/err" ||
  { fail "compile: $(cat "$work/err")"; echo "check: $passed passed, $failed failed"; exit 1; }

# Long work: a sweep whose sizes each run about 0.1 s.
sweep=("$BUILD_DIR/neuron-allreduce" -r 2 -b 8 -e 8MB -f 8)

unset NEURON_TOOLS_PROGRESS
"${sweep[@]}" >"$work/out" 2>"$work/err"
if [ -s "$work/err" ]; then fail "not a terminal: stderr has $(head -c 200 "$work/err")"; else pass "silent when stderr is not a terminal"; fi
grep -q "Avg bus bandwidth" "$work/out" && pass "the results are on stdout" || fail "no results: $(cat "$work/out")"

NEURON_TOOLS_PROGRESS=always "${sweep[@]}" >"$work/out" 2>"$work/err"
# A log gets the first step at once, then a line at most once a second, so
# how many lines follow depends on the machine's speed; each is a whole line.
if grep -q "^neuron-allreduce: allr sweep: 0/[0-9]* (0%) 8 B messages$" "$work/err" &&
   ! grep -v "^neuron-allreduce: allr sweep: [0-9]*/[0-9]* ([0-9]*%) [0-9.]* [KMG]*i*B messages$" "$work/err" >/dev/null; then
  pass "NEURON_TOOLS_PROGRESS=always writes plain lines to a log"
else
  fail "NEURON_TOOLS_PROGRESS=always: $(cat "$work/err")"
fi
grep -q "sweep" "$work/out" && fail "progress leaked onto stdout" || pass "stdout has no progress"

for tool in "neuron-compile compile $ROOT/examples/mlp.hlo -o $work/again.neff" "neuron-load $neff" \
            "neuron-exec $neff --random-inputs -n 50"; do
  set -- $tool
  name="$1"; shift
  NEURON_TOOLS_PROGRESS=always "$BUILD_DIR/$name" "$@" >/dev/null 2>"$work/err"
  if grep -qE "^$name: (compiling|loading|benchmark)" "$work/err"; then
    pass "$name shows its progress"
  else
    fail "$name shows no progress: $(cat "$work/err")"
  fi
done

# --quiet (-q) silences it, even where NEURON_TOOLS_PROGRESS=always.
for tool in "neuron-compile compile $ROOT/examples/mlp.hlo -o $work/quiet.neff --quiet" \
            "neuron-load -q $neff" "neuron-exec $neff --random-inputs -n 50 --quiet" \
            "neuron-allreduce -r 2 -b 8 -e 64 -f 8 -q"; do
  set -- $tool
  name="$1"; shift
  if NEURON_TOOLS_PROGRESS=always "$BUILD_DIR/$name" "$@" >/dev/null 2>"$work/err" && [ ! -s "$work/err" ]; then
    pass "$name --quiet shows no progress"
  else
    fail "$name --quiet: $(head -c 300 "$work/err")"
  fi
done

# On a terminal: script(1) gives the tool a pty even when this script's own
# stdin is not one (CI); what the pty shows arrives on script's stdout (the
# log file /dev/null keeps script's own header out of it).
on_tty() { script -qec "$1" /dev/null </dev/null >"$work/tty" 2>&1; }

on_tty "NEURON_TOOLS_PROGRESS=never ${sweep[*]} >$work/out"
if grep -q "sweep" "$work/tty"; then fail "NEURON_TOOLS_PROGRESS=never still drew on a terminal"; else pass "NEURON_TOOLS_PROGRESS=never on a terminal"; fi

# Drawn in place (carriage return, erase to end of line) and erased at the
# end. NEURON_TOOLS_PROGRESS=always draws from the start, so this does not
# depend on the sweep outlasting the half second quick work stays silent.
on_tty "NEURON_TOOLS_PROGRESS=always ${sweep[*]} >$work/out"
if grep -q $'\r\033\[Kneuron-allreduce: allr sweep: [0-9]*/[0-9]*' "$work/tty"; then
  pass "drawn in place on a terminal"
else
  fail "nothing drawn on a terminal: $(tr '\r\033' '^[' <"$work/tty" | head -c 300)"
fi
last="$(tr -d '\n' <"$work/tty" | awk -F'\r' '{ print $NF }')"
case "$last" in
  $'\033[K'*) [ "$last" = $'\033[K' ] && pass "the line is erased at the end" || fail "left behind: $(printf %q "$last")" ;;
  *) fail "the line is not erased at the end: $(printf %q "$last")" ;;
esac
grep -q "Avg bus bandwidth" "$work/out" && pass "results still go to stdout" || fail "no results with a terminal: $(cat "$work/out")"

# Quick work on a terminal prints nothing.
on_tty "$BUILD_DIR/neuron-load $neff >/dev/null"
grep -q "loading" "$work/tty" && fail "quick work drew progress" || pass "quick work draws nothing"

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
